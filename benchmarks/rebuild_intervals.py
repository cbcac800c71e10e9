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
"""

import argparse
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
    parser.add_argument('--json')
    args = parser.parse_args(argv)
    try:
        skins = [float(text) for text in args.skins.split(',')]
    except ValueError:
        parser.error('--skins must be comma-separated numbers (nm), not %r' % args.skins)
    if args.steps < 1 or args.warmup < 0 or any(skin <= 0 for skin in skins):
        parser.error('--steps must be >= 1, --warmup >= 0 and every skin > 0 nm')
    trajectory = oxygen_trajectory(args.waters, args.steps, args.platform, args.warmup)
    rows = summary(trajectory, skins)
    for row in rows:
        interval = '-' if row['mean_interval'] is None else '%.1f' % row['mean_interval']
        print('skin %.3f nm: %d rebuilds in %d steps, one every %s steps' % (row['skin'], row['rebuilds'], row['steps'], interval))
    if args.json:
        with open(args.json, 'w') as stream:
            json.dump({'waters': args.waters, 'warmup': args.warmup, 'oxygens': trajectory.shape[1], 'platform': args.platform,
                       'rows': rows}, stream, indent=1)
    return rows


if __name__ == '__main__':
    main()
