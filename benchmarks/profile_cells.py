"""Evaluate a large self-coordination with a finite dmax a few times, for a profiler (the kernels' own
times: `ncu --metrics gpu__time_duration.sum python benchmarks/profile_cells.py`).

    python benchmarks/profile_cells.py [--atoms 1000000] [--density 33.4] [--dmax 1.0] [--precision mixed] [--no-cutoff]
                                       [--spatial] [--per-atom THRESHOLD]

--per-atom makes the CV bench_cutoff.py's per-atom row: MoreThan (threshold THRESHOLD) of every
particle's coordination number, with that row's r0 (0.3 nm) unless --r0 says otherwise.
"""

import argparse

import openmm as mm

from openmmcoordination import CoordinationForce

from common import force_system, make_context, random_positions, spatial_order


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--atoms', type=int, default=1000000)
    parser.add_argument('--density', type=float, default=33.4, help='particles per nm^3')
    parser.add_argument('--dmax', type=float, default=1.0)
    parser.add_argument('--precision', default='mixed')
    parser.add_argument('--evaluations', type=int, default=3)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--no-cutoff', action='store_true', help='all pairs, no box (the throughput rows)')
    parser.add_argument('--spatial', action='store_true', help='particles numbered along a Z-order curve (common.spatial_order)')
    parser.add_argument('--per-atom', type=float, metavar='THRESHOLD', help='MoreThan THRESHOLD of the per-atom coordination numbers')
    parser.add_argument('--r0', type=float, help='the switching distance (nm; default 0.35, with --per-atom 0.3)')
    args = parser.parse_args()
    positions, edge = random_positions(args.atoms, density=args.density)
    if args.spatial:
        positions = spatial_order(positions, edge)
    force = CoordinationForce(list(range(args.atoms)))
    force.setR0(args.r0 if args.r0 is not None else 0.3 if args.per_atom is not None else 0.35)
    if args.per_atom is not None:
        force.setParticleFunction(CoordinationForce.MoreThan)
        force.setThreshold(args.per_atom)
    force.setDMax(float('inf') if args.no_cutoff else args.dmax)
    force.setUsesPeriodicBoundaryConditions(not args.no_cutoff)
    context, _ = make_context(force_system(force, args.atoms, edge), mm.Platform.getPlatformByName(args.platform),
                              args.precision)
    context.setPositions(positions)
    for _ in range(args.evaluations):
        print('energy only', context.getState(getEnergy=True).getPotentialEnergy())
    for _ in range(args.evaluations):
        context.getState(getForces=True)
    print('done')


if __name__ == '__main__':
    main()
