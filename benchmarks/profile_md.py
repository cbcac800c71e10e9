"""Run MD steps of the benchmark's PME water box with one fast-path CV restraint, for a profiler
(`nsys profile --trace=cuda python benchmarks/profile_md.py --case self`, then `nsys stats`).

    python benchmarks/profile_md.py [--case plain|1|100|self] [--waters 8000] [--steps 2000]
"""

import argparse

import openmm as mm

from common import CUTOFF, MdRun, adding, rational_cv, water_box


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--case', default='self', choices=['plain', '1', '100', 'self'])
    parser.add_argument('--waters', type=int, default=8000)
    parser.add_argument('--steps', type=int, default=2000)
    parser.add_argument('--precision', default='mixed')
    parser.add_argument('--platform', default='CUDA')
    args = parser.parse_args()
    system, positions, oxygens = water_box(args.waters)
    force = None
    if args.case != 'plain':
        groups = {'1': (oxygens[:1], oxygens[1:]), '100': (oxygens[:100], oxygens[100:]), 'self': (oxygens, None)}[args.case]
        force = rational_cv(*groups, CUTOFF, periodic=True)
        force.setEnergyExpression('0.5*k*(cv-cv0)^2')
        force.addGlobalParameter('k', 1e-6)  # the same code path as a real restraint, harmless
        force.addGlobalParameter('cv0', 1.0)
    run = MdRun(system, positions, mm.Platform.getPlatformByName(args.platform), args.precision,
                adding(force) if force is not None else None)
    seconds = run.seconds(args.steps)
    print('%s: %.4f ms per step' % (args.case, 1000 * seconds / args.steps))


if __name__ == '__main__':
    main()
