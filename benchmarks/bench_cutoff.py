"""The `cutoff` section of benchmark.py: self-coordination of up to a million atoms with a periodic
cutoff (cell lists) against CustomNonbondedForce with CutoffPeriodic; per evaluation with forces and
with the energy alone, particles numbered at random or in spatial order (spatial_order of common.py).
"""

import os

import numpy as np
import openmm as mm

from common import (CUTOFF, ATOM_DENSITY, WATER_DENSITY, check_against_peer, frozen_system, peer_cv, random_positions,
                    rational_cv, spatial_order, step_count, step_seconds, timed_pair)


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
    return rows



def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick, diagnostics)."""
    return run(platform, options.precision, options.quick, options.diagnostics)
