"""The `cutoff` section of benchmark.py: self-coordination of up to a million atoms with a periodic
cutoff (cell lists) against CustomNonbondedForce with CutoffPeriodic; per evaluation with forces and
with the energy alone, particles numbered at random or in spatial order (spatial_order of common.py).
Its last row (issue 42) has no peer: the per-atom coordination numbers c_i of 100,000 atoms with the
particle function MoreThan against the plain self-coordination sum of the same atoms, per evaluation
with forces, the two timed in turn (per_atom_row).
"""

import os

import numpy as np
import openmm as mm

from openmmcoordination import CoordinationForce

from common import (CUTOFF, ATOM_DENSITY, R0, WATER_DENSITY, FrozenContext, check_against_peer, frozen_system, peer_cv,
                    random_positions, rational_cv, spatial_order, step_count, step_seconds, timed_pair)


def pairs_within(force, context, positions, edge, distance):
    """The number of pairs closer than distance: the one-bin histogram of a self-coordination force
    over every particle (in its Context), checked against the expectation for uniform random
    positions, N(N-1)/2 * 4/3 pi distance^3 / V."""
    count = int(force.getPairHistogram(context, 1, distance)[0])
    n = len(positions)
    estimate = n * (n - 1) / 2 * (4 / 3 * np.pi * distance ** 3) / edge ** 3
    if abs(count - estimate) > 0.02 * estimate:
        raise RuntimeError('%d pairs within %g nm, %g expected' % (count, distance, estimate))
    return count



class environment:
    """Environment variables set for the duration of a with block (the CUDA kernel's switches are
    read when a Context is created), then restored."""

    def __init__(self, **variables):
        self.variables = variables

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.variables}
        os.environ.update(self.variables)

    def __exit__(self, *exception):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value



def run(platform, precision, quick, diagnostics=False):
    """Self-coordination of random atoms, periodic, dmax 1 nm (cell lists): getState(Energy) (which
    computes the forces too), forces inside a step and the energy alone inside a step, against
    CustomNonbondedForce CutoffPeriodic. Each force's System is built once (a million particles take
    seconds in Python) and serves all its Contexts; one Context per force and integrator serves the
    check, the getState timing, the step timing and (ours) the count of pairs within dmax.
    diagnostics: also our step with the lists of homes off (COORDINATION_NEIGHBOR_LIST=0)."""
    # The spec's peer figure (1.55 ms, 7e7 pairs within 1 nm for 1M atoms) is at the number density of
    # water molecules; the last row is at the 3x denser density of water's atoms, for reference.
    cases = ([(5000, 0.6, WATER_DENSITY, 'random'), (5000, 0.6, WATER_DENSITY, 'spatial')] if quick else
             [(100000, CUTOFF, WATER_DENSITY, 'random'), (1000000, CUTOFF, WATER_DENSITY, 'random'),
              (1000000, CUTOFF, WATER_DENSITY, 'spatial'), (1000000, CUTOFF, ATOM_DENSITY, 'random')])
    rows = []
    for n, dmax, density, order in cases:
        positions, edge = random_positions(n, density=density)
        if order == 'spatial':
            positions = spatial_order(positions, edge)
        group = list(range(n))
        name = '%s atoms self, %.1f/nm^3, periodic, dmax %g nm, %s numbering' % (format(n, ','), density, dmax, order)
        oursForce = rational_cv(group, None, dmax, periodic=True)
        systems = {'ours': frozen_system(oursForce, positions, edge), 'peer': frozen_system(peer_cv(n, group, None, dmax), positions, edge),
                   # A step without the force: what remains of a step when the evaluation is taken away.
                   'empty': frozen_system(mm.CustomExternalForce('0'), positions, edge)}
        (oursRun, peerRun), (ours, peer) = timed_pair(systems['ours'], systems['peer'], positions, platform, precision, 20,
                                                      timeForces=False)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        times = {('ours', False): oursRun.step_seconds(steps, 3)}
        pairs = pairs_within(oursForce, oursRun.context, positions, edge, dmax)
        oursRun.close()
        times['peer', False] = peerRun.step_seconds(steps, 3)
        peerRun.close()
        times['empty', False] = step_seconds(systems['empty'], positions, platform, precision, steps)
        for label in ('ours', 'peer', 'empty'):
            times[label, True] = step_seconds(systems[label], positions, platform, precision, steps, energyOnly=True)
        # Our lists of homes (the default from 50,001 particles) are built once in a frozen box: the
        # same step with them rebuilt at every evaluation (and, diagnostics, with no lists: the cell
        # kernel filters the cells at every evaluation, as before the lists of homes).
        variants = [('rebuilt', 'always')] + ([('no lists', '0')] if diagnostics else [])
        for label, mode in variants:
            with environment(COORDINATION_NEIGHBOR_LIST=mode):
                times[label, False] = step_seconds(systems['ours'], positions, platform, precision, steps)
        oursStep, peerStep, emptyStep = times['ours', False], times['peer', False], times['empty', False]
        rebuilt = times['rebuilt', False] - emptyStep
        oursEnergy, peerEnergy = (times[label, True] - times['empty', True] for label in ('ours', 'peer'))
        row = {'section': 'cutoff', 'case': name, 'atoms': n, 'density_per_nm3': density, 'dmax': dmax, 'numbering': order,
               'pairs_within_dmax': pairs,
               'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0], 'pairs_per_s': pairs / ours[0],
               'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
               'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
               'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
               'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
               'speedup_per_evaluation': (peerStep - emptyStep) / (oursStep - emptyStep),
               'energy_only_ms_per_evaluation': 1000 * oursEnergy, 'peer_energy_only_ms_per_evaluation': 1000 * peerEnergy,
               'energy_only_speedup': peerEnergy / oursEnergy,
               'rebuilt_ms_per_evaluation': 1000 * rebuilt,
               'ms_per_evaluation_rebuilt_every_10': 1000 * ((oursStep - emptyStep) * 9 + rebuilt) / 10,
               'value_relative_difference': relative, 'force_relative_difference': forceError,
               'note': 'ms: getState(Energy) for both (the protocol of the peer figure 1.55 ms for 1M; OpenMM\'s '
                       'Context::getState computes the forces along with the energy, and adds the kinetic energy, all '
                       'velocities copied to the host and summed there, about 1 ms for 1M particles); '
                       'ms_per_evaluation: ms_in_step less the same step without the force; '
                       'ms_in_step: integrator.step(%d) with frozen particles (mass 0), forces every step, per step, in '
                       'the Context of the getState timing; '
                       'energy_only_ms_per_evaluation: the same with a CustomIntegrator step that asks for the energy '
                       'alone (no forces, no kinetic energy), less that step without the force; '
                       'numbering: random, or spatial (a Z-order curve, as OpenMM reorders the atoms of a System '
                       'with a cutoff nonbonded force); '
                       'rebuilt_ms_per_evaluation: ours with its neighbour lists rebuilt at every evaluation '
                       '(COORDINATION_NEIGHBOR_LIST=always; frozen, the lists are otherwise built once), '
                       'ms_per_evaluation_rebuilt_every_10: one rebuild in ten evaluations (in MD the lists are '
                       'rebuilt when a particle has moved 0.049 nm); '
                       'pairs within dmax counted by our histogram, checked against N(N-1)/2*4/3*pi*dmax^3/V; '
                       'peer: CustomNonbondedForce, CutoffPeriodic %g nm' % (steps, dmax)}
        if diagnostics:
            row['no_lists_ms_per_evaluation'] = 1000 * (times['no lists', False] - emptyStep)
        rows.append(row)
    rows.append(per_atom_row(platform, precision, quick))
    return rows

# The per-atom row (issue 42): MoreThan's threshold, near the mean c_i of random particles at the density
# of water molecules (33.4 * 2 pi^2/3 * r0^3 = 5.9 for r0 0.3 nm), so that t(c_i) is in its steep part;
# the atoms whose c_i is checked against NumPy (all of them with --quick), and the rounds (3 with --quick).
PER_ATOM_THRESHOLD = 6.0
PER_ATOM_CHECKED = 500
PER_ATOM_ROUNDS = 5


def per_atom_cv(n, dmax, threshold=PER_ATOM_THRESHOLD):
    """The per-atom row's CV: MoreThan (threshold RATIONAL r0 = threshold, n 6, m 12) of the c_i of
    every particle, with the section's switching function, cutoff and periodic box."""
    force = rational_cv(list(range(n)), None, dmax, periodic=True)
    force.setParticleFunction(CoordinationForce.MoreThan)
    force.setThreshold(threshold)
    return force


def numpy_pairs(positions, edge, dmax, rows):
    """The pairs (k, j) closer than dmax, k from rows (its index there), j any other particle:
    (index of k in rows, j, s(r_kj) = 1/(1+(r/r0)^6), ds/dr(r_kj), (x_j - x_k)/r_kj nearest image)."""
    def image(a):
        return a - np.round(a / edge) * edge
    # Candidates by x alone (a slab 2 dmax thick), then their y and z.
    dx = image(positions[None, :, 0] - positions[rows, None, 0])
    k, j = np.nonzero(np.abs(dx) < dmax)
    d = np.column_stack([dx[k, j]] + [image(positions[j, axis] - positions[rows[k], axis]) for axis in (1, 2)])
    r2 = (d ** 2).sum(1)
    keep = (r2 < dmax * dmax) & (j != rows[k])
    k, j, d, r = k[keep], j[keep], d[keep], np.sqrt(r2[keep])
    x = (r / R0) ** 6
    return k, j, 1 / (1 + x), -6 * x / r / (1 + x) ** 2, d / r[:, None]


def check_per_atom(positions, edge, dmax, threshold, force, perAtom, plain, rows):
    """The per-atom force (force, in its FrozenContext perAtom) and the plain sum (plain) against NumPy:
    the c_i of the particles `rows` (nearest image, s below dmax), the sum of all c_i against twice
    the plain sum, the CV against NumPy's MoreThan, sum_i 1 - 1/(1+(c_i/t)^6), of the platform's c_i,
    and the forces on `rows`: ours -sum_j (F'(c_k) + F'(c_j)) ds/dr(r_kj) (x_k - x_j)/r_kj, the plain
    sum's -sum_j ds/dr(r_kj) (x_k - x_j)/r_kj. Raises RuntimeError saying what differs; returns (the
    CV, the plain sum, the largest c_i difference, the larger relative force difference)."""
    value, forces = perAtom.evaluate()
    plainValue, plainForces = plain.evaluate()
    c = np.asarray(force.getCoordinationNumbers(perAtom.context), dtype=float)
    u = (c / threshold) ** 6
    expected = float((1 - 1 / (1 + u)).sum())
    slope = 6 * u / c.clip(1e-300) / (1 + u) ** 2      # dF/dc_i of MoreThan
    numbers, ours, theirs = np.zeros(len(rows)), np.zeros((len(rows), 3)), np.zeros((len(rows), 3))
    for first in range(0, len(rows), 50):   # 50 rows against 100,000 particles: 40 MB a block
        block = rows[first:first + 50]
        k, j, s, ds, direction = numpy_pairs(positions, edge, dmax, block)
        k += first
        numbers += np.bincount(k, s, len(rows))
        # x_k - x_j = -r direction: the force on k, -dE/dx_k, is sum_j w_kj ds/dr direction.
        for weights, out in ((slope[rows[k]] + slope[j], ours), (1.0, theirs)):
            for axis in range(3):
                out[:, axis] += np.bincount(k, weights * ds * direction[:, axis], len(rows))
    numberError = float(np.abs(numbers - c[rows]).max())
    forceError = max(np.linalg.norm(forces[rows] - ours) / np.linalg.norm(ours),
                     np.linalg.norm(plainForces[rows] - theirs) / np.linalg.norm(theirs))
    problems = []
    if numberError > 1e-4 * max(1.0, float(np.abs(numbers).max())):
        problems.append('c_i differ from NumPy\'s by up to %g' % numberError)
    if abs(c.sum() - 2 * plainValue) > 1e-4 * abs(2 * plainValue):
        problems.append('the sum of the c_i is %g, twice the plain sum %g' % (c.sum(), 2 * plainValue))
    if abs(value - expected) > 1e-4 * max(1.0, expected):
        problems.append('the CV is %g, NumPy\'s MoreThan of the c_i %g' % (value, expected))
    if forceError > 1e-3:
        problems.append('forces differ from NumPy\'s by %g (relative)' % forceError)
    if problems:
        raise RuntimeError('per-atom check: ' + '; '.join(problems))
    return value, plainValue, numberError, float(forceError)


def per_atom_row(platform, precision, quick):
    """The throughput of per-atom coordination numbers (issue 42): random particles in a periodic cube
    at the density of water molecules (100,000; 5,000 with --quick), dmax 1 nm; the per-atom force
    (MoreThan of every c_i, per_atom_cv) and the plain self-coordination sum of the same particles,
    each checked against NumPy (check_per_atom; the plain sum's pairs within dmax by pairs_within),
    then their frozen steps and the step without a force timed in turn over PER_ATOM_ROUNDS rounds (3
    with --quick; the order reversed every other round), and the same with steps that ask for the energy
    alone (the c_i and F without the gradient pass, against the plain sum's value). Per evaluation: a
    step less the empty step of the same round; the ratios per-atom / plain: the median over the rounds.
    A check or a platform that fails makes a row that says why (skipped)."""
    n, dmax = 5000 if quick else 100000, CUTOFF
    name = 'per-atom c_i of %s atoms, MoreThan %g, periodic, dmax %g nm, against the plain sum' % (format(n, ','),
                                                                                                 PER_ATOM_THRESHOLD, dmax)
    runs = {}
    try:
        positions, edge = random_positions(n, density=WATER_DENSITY)
        force = per_atom_cv(n, dmax)
        plainForce = rational_cv(list(range(n)), None, dmax, periodic=True)
        systems = {'per-atom': frozen_system(force, positions, edge), 'plain': frozen_system(plainForce, positions, edge),
                   'empty': frozen_system(mm.CustomExternalForce('0'), positions, edge)}
        for label, system in systems.items():
            runs[label] = FrozenContext(system, positions, platform, precision)
            runs[label, 'energy'] = FrozenContext(system, positions, platform, precision, energyOnly=True)
        rows = np.arange(n) if quick else np.random.default_rng(42).choice(n, PER_ATOM_CHECKED, replace=False)
        value, plainValue, numberError, forceError = check_per_atom(positions, edge, dmax, PER_ATOM_THRESHOLD, force,
                                                                    runs['per-atom'], runs['plain'], rows)
        pairs = pairs_within(plainForce, runs['plain'].context, positions, edge, dmax)
        getstate = {label: runs[label].getstate_seconds(5, forces=False) for label in ('per-atom', 'plain')}
        steps, rounds = step_count(max(getstate.values())), 3 if quick else PER_ATOM_ROUNDS
        order = ['plain', 'per-atom', 'empty']
        order += [(label, 'energy') for label in order]
        times = {label: [] for label in order}
        for round_ in range(rounds):
            for label in (order if round_ % 2 == 0 else order[::-1]):
                times[label].append(runs[label].step_seconds(steps, 1))
    except (ValueError, RuntimeError, mm.OpenMMException) as error:
        reason = '%s: %s' % (type(error).__name__, str(error).strip().splitlines()[0] if str(error).strip() else '')
        print('cutoff      SKIPPED %s: %s' % (name, reason), flush=True)
        return {'section': 'cutoff', 'case': name, 'kind': 'per-atom', 'atoms': n, 'dmax': dmax, 'skipped': reason}
    finally:
        for run in runs.values():
            run.close()
    empty = np.array(times['empty'])
    perAtom, plain = np.array(times['per-atom']) - empty, np.array(times['plain']) - empty
    perAtomMs, plainMs = 1000 * float(np.median(perAtom)), 1000 * float(np.median(plain))
    emptyEnergy = np.array(times['empty', 'energy'])
    perAtomEnergy = np.array(times['per-atom', 'energy']) - emptyEnergy
    plainEnergy = np.array(times['plain', 'energy']) - emptyEnergy
    return {'section': 'cutoff', 'case': name, 'kind': 'per-atom', 'atoms': n, 'density_per_nm3': WATER_DENSITY,
            'dmax': dmax, 'threshold': PER_ATOM_THRESHOLD, 'pairs_within_dmax': pairs, 'cv': value, 'plain_cv': plainValue,
            'checked_atoms': len(rows), 'numbers_max_difference': numberError, 'force_relative_difference': forceError,
            'ms': 1000 * getstate['per-atom'], 'plain_ms': 1000 * getstate['plain'],
            'ms_per_evaluation': perAtomMs, 'plain_ms_per_evaluation': plainMs,
            'per_atom_over_plain': float(np.median(perAtom / plain)),
            'per_atom_over_plain_per_round': [float(x) for x in perAtom / plain],
            'energy_only_ms_per_evaluation': 1000 * float(np.median(perAtomEnergy)),
            'plain_energy_only_ms_per_evaluation': 1000 * float(np.median(plainEnergy)),
            'energy_only_over_plain': float(np.median(perAtomEnergy / plainEnergy)),
            'numbers_per_s': n / (perAtomMs / 1000), 'empty_step_ms': 1000 * float(np.median(empty)),
            'steps': steps, 'repeats': rounds,
            'note': 'ms_per_evaluation: the per-atom force\'s frozen step (mass 0, forces every step, lists built once) '
                    'less the step without a force of the same round; plain_ms_per_evaluation: the same for the plain '
                    'self-coordination sum (PairSum) of the same particles; the three Contexts timed in turn, %d rounds '
                    'of step(%d), the order reversed every other round; per_atom_over_plain: the median over the rounds '
                    'of the ratio; energy_only_*: the same with a CustomIntegrator step that asks for the energy alone '
                    '(the per-atom force: the c_i and F, no gradient pass; the plain sum: its value), three Contexts '
                    'more, timed in the same rounds; checked first: c_i of %d particles, the forces on them, the CV and the '
                    'sum of the c_i against NumPy; ms: getState(Energy) for each' % (rounds, steps, len(rows))}



def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick, diagnostics)."""
    return run(platform, options.precision, options.quick, options.diagnostics)
