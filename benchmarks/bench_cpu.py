"""The `cpu` section of benchmark.py: the md section's one-CV restraints (rational, r0 0.3 nm, cutoff
1 nm, 0.5*k*(cv-cv0)^2) in MD on the CPU platform, on PME water boxes of 5,853 and 23,682 atoms
(water_box(2000) and water_box(8000): 1,951 and 7,894 TIP3P waters; with --quick water_box(500),
1,443 atoms, without the self-coordination). Rows, per box: 1 O, 100 O and all O
with each other; for each, ours through its own energy expression (the fast path), ours inside
CustomCVForce (the compatibility path) and the peer, CustomNonbondedForce (interaction group,
periodic cutoff) inside CustomCVForce. Every Context of a box is timed in turn in one interleaved run
(interleaved_md of common.py), 3 rounds of step(50) (--rounds), one Context of each kind; the
overhead is relative to the plain box, the speedup the peer's ms per step over ours. The platform's
thread count (its Threads property) is recorded in each row. On another platform the section
times nothing and says so in a row (a run of all sections on CUDA leaves it out).
"""

import time

from bench_md import cv_restraint, md_cases, restrained_cv, restraint_constant
from common import CUTOFF, MdCase, adding, check_md_values, interleaved_md, md_rows, peer_cv, rational_cv, water_box

# (water_box's numWaters, atoms) of the boxes; --quick takes the md section's quick box alone.
BOXES = [(2000, '5,853 atoms'), (8000, '23,682 atoms')]
QUICK_BOXES = [(500, '1,443 atoms')]
STEPS, ROUNDS, WARMUP = 50, 3, 20


def box_rows(platform, precision, numWaters, rounds, quick):
    """The rows of one box: the plain box and each CV's three kinds, one interleaved run."""
    system, positions, oxygens = water_box(numWaters)
    numParticles = system.getNumParticles()
    cases, described = [], []
    for name, groupA, groupB in md_cases(oxygens, False)[:2 if quick else 3]:
        cv0 = check_md_values(system, positions, platform, precision, rational_cv(groupA, groupB, CUTOFF, periodic=True),
                              peer_cv(numParticles, groupA, groupB, CUTOFF))
        k = restraint_constant(cv0)
        fast = restrained_cv(rational_cv(groupA, groupB, CUTOFF, periodic=True), cv0, k)
        compatible = cv_restraint('0.5*k*(cv-cv0)^2', {'cv': rational_cv(groupA, groupB, CUTOFF, periodic=True)}, {'k': k, 'cv0': cv0})
        peer = cv_restraint('0.5*k*(cv-cv0)^2', {'cv': peer_cv(numParticles, groupA, groupB, CUTOFF)}, {'k': k, 'cv0': cv0})
        labels = {}
        for kind, label, force in (('ours', 'fast path (own energy expression)', fast),
                                   ('compatible', 'compatibility path (ours in CustomCVForce)', compatible),
                                   ('peer', 'peer (CustomNonbondedForce in CustomCVForce)', peer)):
            key = '%s: %s' % (name, label)
            cases.append(MdCase(key, adding(force), 1, False))
            labels[kind] = key
        described.append({'name': name, 'bias': 'restraint', 'labels': labels, 'extra': dict(cv0=cv0, k=k)})
    started = time.perf_counter()
    results, spread = interleaved_md(system, positions, platform, precision, STEPS, rounds, cases, 1, warmup=WARMUP,
                                     progress=lambda what: print('cpu         %d atoms: %s (+%.0f s)' % (
                                         numParticles, what, time.perf_counter() - started), flush=True))
    rows = md_rows('cpu', described, numParticles, results, spread, 1, rounds, STEPS)
    threads = platform.getPropertyDefaultValue('Threads') if 'Threads' in platform.getPropertyNames() else None
    for row in rows:
        row['threads'] = threads
    return rows


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick, rounds)."""
    if platform.getName() != 'CPU':
        return [{'section': 'cpu', 'case': 'the cpu section', 'kind': 'skipped',
                 'skipped': 'it times the CPU platform (--platform CPU), not %s' % platform.getName()}]
    rows = []
    for numWaters, _ in (QUICK_BOXES if options.quick else BOXES):
        rows += box_rows(platform, options.precision, numWaters, options.rounds or ROUNDS, options.quick)
    return rows
