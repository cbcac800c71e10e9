"""The `throughput` section of benchmark.py: CV + forces evaluations, no cutoff, against
CustomNonbondedForce, by getState and inside a step of frozen particles (FrozenContext of common.py).
"""

import openmm as mm

from common import check_against_peer, frozen_system, peer_cv, random_positions, rational_cv, step_count, step_time, timed_pair


def run(platform, precision, quick):
    cases = [('1k x 10k', 1000, 10000), ('10k x 10k', 10000, 10000), ('20k self', 20000, None), ('100k self', 100000, None)]
    if quick:
        cases = [('100 x 1k', 100, 1000), ('2k self', 2000, None)]
    rows = []
    for name, na, nb in cases:
        n = na + (nb or 0)
        positions, _ = random_positions(n)
        groupA = list(range(na))
        groupB = list(range(na, n)) if nb else None
        pairs = na * nb if nb else na * (na - 1) // 2
        repeats = 5 if n >= 50000 else 20
        (oursRun, peerRun), (ours, peer) = timed_pair(frozen_system(rational_cv(groupA, groupB), positions),
                                                      frozen_system(peer_cv(n, groupA, groupB), positions),
                                                      positions, platform, precision, repeats)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        oursStep = oursRun.step_seconds(steps, 3)
        oursRun.close()
        peerStep = peerRun.step_seconds(steps, 3)
        peerRun.close()
        # A step without the force: what remains of a step when the evaluation is taken away.
        emptyStep = step_time(mm.CustomExternalForce('0'), positions, platform, precision, steps, 3)
        rows.append({'section': 'throughput', 'case': name, 'pairs': pairs, 'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0],
                     'pairs_per_s': pairs / ours[0], 'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
                     'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
                     'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
                     'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
                     'value_relative_difference': relative, 'force_relative_difference': forceError,
                     'note': 'ms: getState(Energy|Forces), including the host read-back of the forces, for both; '
                             'ms_in_step: integrator.step(%d) with frozen particles (mass 0), per step, in the same Context '
                             'after the getState timing' % steps})
    return rows



def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick)."""
    return run(platform, options.precision, options.quick)
