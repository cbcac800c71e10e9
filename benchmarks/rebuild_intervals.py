"""How often the neighbour lists of the md section's box must be rebuilt, per skin: MD of the box
(benchmarks/common.py's water_box and MdRun: the md section's LangevinMiddle at 300 K, 1/ps, 2 fs), the
oxygens' positions read at every step, and for each skin the steps at which a list built at the last
rebuild goes stale by the GPU lists' rule (CudaCoordinationNeighborList: an oxygen more than 0.49 of
the skin from where it was at the build; positions not wrapped, as OpenMM's unwrapped state gives
them). Any platform: the dynamics, not the speed, is measured, so the CPU serves
(``--platform CPU``; the box of 7,894 waters takes about 80 s for 1,000 steps on 2 cores).
Just after the warm-up the box still relaxes from its built positions and the lists go stale
sooner (one rebuild in 12.0 steps at 0.1 nm after 300 steps, 14.9 after 5,000).

    python benchmarks/rebuild_intervals.py --waters 8000 --warmup 5000 --steps 1000 --skins 0.05,0.1,0.2,0.3

Prints a line a skin: the rebuilds, and the mean steps between them; --json writes them.

With --lags, it also models the host's schedule of the lists of particles (CudaCoordinationNeighborList:
the binning only where the host forces a rebuild) on the same positions: the check of an evaluation asks
for a rebuild once a particle is more than a share of the skin (--shares) from where it was at the last
build, or, with --ahead K, once its distance plus K times its last step's move is; the host forces the
rebuild `lag` evaluations after the ask (how far it runs ahead of the GPU); an evaluation in between
whose lists are stale falls back to all pairs (counted; the code then lowers its share, which the model
does not). A line a skin, lag, share and K:

    python benchmarks/rebuild_intervals.py --warmup 5000 --steps 3000 --skins 0.1 --lags 1,2,3 --shares 0.4,0.45 --ahead 0,2,3
"""

import argparse
import itertools
import json
import sys

import numpy as np
import openmm as mm
import openmm.unit as unit

from common import MdRun, water_box

#: The share of the skin a particle may move before the lists are stale (HalfSkinShare in CudaCoordinationNeighborList.cpp).
HALF_SKIN_SHARE = 0.49


def rebuild_steps(trajectory, skin):
    """The steps (indices into trajectory, after the first) at which the lists built at step 0, or at
    the last rebuild, are stale: a particle more than HALF_SKIN_SHARE*skin from its position there."""
    if skin <= 0:
        raise ValueError('rebuild_intervals: skin must be > 0 nm, not %r' % (skin,))
    reference, steps = trajectory[0], []
    for step in range(1, len(trajectory)):
        moved = np.sqrt(((trajectory[step] - reference) ** 2).sum(axis=1)).max()
        if moved > HALF_SKIN_SHARE * skin:
            steps.append(step)
            reference = trajectory[step]
    return steps


def scheduled_rebuilds(trajectory, skin, share, lag, ahead=0):
    """The host's schedule (the module's docstring) over trajectory: the steps at which the host rebuilds
    the lists, and those at which an evaluation falls back (its lists stale before the rebuild came). A
    step's check asks where a particle is more than share*skin from its position at the last build, plus
    `ahead` times its move since the step before where ahead > 0; the rebuild is forced at the ask's step
    plus lag (>= 1), where the check does not run."""
    if skin <= 0 or not 0 < share <= HALF_SKIN_SHARE or lag < 1 or ahead < 0:
        raise ValueError('rebuild_intervals: the schedule needs skin > 0 nm, 0 < share <= %g, lag >= 1 and ahead >= 0, '
                         'not skin %r, share %r, lag %r, ahead %r' % (HALF_SKIN_SHARE, skin, share, lag, ahead))
    reference, rebuilds, fallbacks, due = trajectory[0], [], [], None
    for step in range(1, len(trajectory)):
        if due is not None and step >= due:
            reference, due = trajectory[step], None
            rebuilds.append(step)
            continue
        distance = np.sqrt(((trajectory[step] - reference) ** 2).sum(axis=1))
        if distance.max() > HALF_SKIN_SHARE * skin:
            fallbacks.append(step)
        if ahead > 0:
            distance = distance + ahead * np.sqrt(((trajectory[step] - trajectory[step - 1]) ** 2).sum(axis=1))
        if due is None and distance.max() > share * skin:    # a fallback asks too (share <= HALF_SKIN_SHARE)
            due = step + lag
    return rebuilds, fallbacks


def schedules(trajectory, skins, lags, shares, aheads):
    """scheduled_rebuilds() for every skin, lag, share and ahead: {'skin', 'lag', 'share', 'ahead', 'rebuilds',
    'fallbacks', 'steps', 'mean_interval'} each."""
    rows = []
    for skin, lag, share, ahead in itertools.product(skins, lags, shares, aheads):
        rebuilds, fallbacks = scheduled_rebuilds(trajectory, skin, share, lag, ahead)
        rows.append({'skin': skin, 'lag': lag, 'share': share, 'ahead': ahead, 'rebuilds': len(rebuilds),
                     'fallbacks': len(fallbacks), 'steps': len(trajectory) - 1,
                     'mean_interval': rebuilds[-1] / len(rebuilds) if rebuilds else None})
    return rows


def summary(trajectory, skins):
    """For each skin: {'skin', 'rebuilds', 'steps', 'mean_interval'} (mean_interval None without a rebuild)."""
    rows = []
    for skin in skins:
        steps = rebuild_steps(trajectory, skin)
        rows.append({'skin': skin, 'rebuilds': len(steps), 'steps': len(trajectory) - 1,
                     'mean_interval': steps[-1] / len(steps) if steps else None})
    return rows


def oxygen_trajectory(numWaters, steps, platform, warmup=300, progress=True):
    """The oxygens' positions (nm) at steps + 1 consecutive steps of the md section's MD of
    water_box(numWaters) (common.MdRun: its integrator, seed and velocities, after `warmup` steps): an
    array of shape (steps + 1, oxygens, 3)."""
    system, positions, oxygens = water_box(numWaters)
    run = MdRun(system, positions, mm.Platform.getPlatformByName(platform), 'mixed', warmup=warmup)
    indices = np.array(oxygens)
    frames = []
    for step in range(steps + 1):
        state = run.context.getState(getPositions=True)
        frames.append(state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)[indices])
        if step < steps:
            run.integrator.step(1)
        if progress and step % 100 == 0:
            print('step %d of %d' % (step, steps), file=sys.stderr, flush=True)
    return np.array(frames)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--waters', type=int, default=8000)
    parser.add_argument('--steps', type=int, default=1000)
    parser.add_argument('--skins', default='0.05,0.1,0.15,0.2,0.3', help='comma-separated skins in nm')
    parser.add_argument('--platform', default='CPU')
    parser.add_argument('--warmup', type=int, default=300, help='steps before the first recorded one (the box relaxes from its '
                        'built positions: the md section warms each Context up 200 steps and then steps it for minutes)')
    parser.add_argument('--lags', help='comma-separated lags (evaluations from the ask to the rebuild, >= 1): model the '
                        'host\'s schedule too (the docstring)')
    parser.add_argument('--shares', default='0.4', help='with --lags: comma-separated shares of the skin at which a check '
                        'asks (at most %g; the code\'s default 0.4)' % HALF_SKIN_SHARE)
    parser.add_argument('--ahead', default='0', help='with --lags: comma-separated K >= 0, the ask on the distance plus K '
                        'times the last step\'s move (0: the distance alone, as the code asks)')
    parser.add_argument('--json')
    args = parser.parse_args(argv)
    try:
        skins = [float(text) for text in args.skins.split(',')]
    except ValueError:
        parser.error('--skins must be comma-separated numbers (nm), not %r' % args.skins)
    if args.steps < 1 or args.warmup < 0 or any(skin <= 0 for skin in skins):
        parser.error('--steps must be >= 1, --warmup >= 0 and every skin > 0 nm')
    try:
        lags = [int(text) for text in args.lags.split(',')] if args.lags else []
        shares = [float(text) for text in args.shares.split(',')]
        aheads = [float(text) for text in args.ahead.split(',')]
    except ValueError:
        parser.error('--lags must be comma-separated integers, --shares and --ahead comma-separated numbers, not %r, %r '
                     'and %r' % (args.lags, args.shares, args.ahead))
    if any(lag < 1 for lag in lags) or any(not 0 < share <= HALF_SKIN_SHARE for share in shares) or any(k < 0 for k in aheads):
        parser.error('every lag must be >= 1, every share in (0, %g] and every --ahead >= 0' % HALF_SKIN_SHARE)
    trajectory = oxygen_trajectory(args.waters, args.steps, args.platform, args.warmup)
    rows = summary(trajectory, skins)
    for row in rows:
        interval = '-' if row['mean_interval'] is None else '%.1f' % row['mean_interval']
        print('skin %.3f nm: %d rebuilds in %d steps, one every %s steps' % (row['skin'], row['rebuilds'], row['steps'], interval))
    scheduled = schedules(trajectory, skins, lags, shares, aheads)
    for row in scheduled:
        interval = '-' if row['mean_interval'] is None else '%.2f' % row['mean_interval']
        print('skin %.3f nm, lag %d, share %.2f, ahead %g: %d rebuilds, one every %s steps, %d fallbacks'
              % (row['skin'], row['lag'], row['share'], row['ahead'], row['rebuilds'], interval, row['fallbacks']))
    if args.json:
        with open(args.json, 'w') as stream:
            json.dump({'waters': args.waters, 'warmup': args.warmup, 'oxygens': trajectory.shape[1], 'platform': args.platform,
                       'rows': rows, 'schedules': scheduled}, stream, indent=1)
    return rows


if __name__ == '__main__':
    main()
