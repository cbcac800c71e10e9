"""Evaluate a large self-coordination with a finite dmax a few times, for a profiler (the kernels' own
times: `ncu --metrics gpu__time_duration.sum python benchmarks/profile_cells.py`).

    python benchmarks/profile_cells.py [--atoms 1000000] [--density 33.4] [--dmax 1.0] [--precision mixed] [--no-cutoff]
                                       [--spatial]
"""

import argparse

import numpy as np
import openmm as mm

from openmmcoordination import CoordinationForce


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--atoms', type=int, default=1000000)
    parser.add_argument('--density', type=float, default=33.4, help='particles per nm^3')
    parser.add_argument('--dmax', type=float, default=1.0)
    parser.add_argument('--precision', default='mixed')
    parser.add_argument('--evaluations', type=int, default=3)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--no-cutoff', action='store_true', help='all pairs, no box (the throughput rows)')
    parser.add_argument('--spatial', action='store_true', help='particles numbered along a Z-order curve (benchmark.spatial_order)')
    args = parser.parse_args()
    edge = (args.atoms / args.density) ** (1 / 3)
    positions = np.random.default_rng(1).uniform(0, edge, (args.atoms, 3))
    if args.spatial:
        from benchmark import spatial_order
        positions = spatial_order(positions, edge)
    system = mm.System()
    for _ in range(args.atoms):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(edge, 0, 0), mm.Vec3(0, edge, 0), mm.Vec3(0, 0, edge))
    force = CoordinationForce(list(range(args.atoms)))
    force.setR0(0.35)
    force.setDMax(float('inf') if args.no_cutoff else args.dmax)
    force.setUsesPeriodicBoundaryConditions(not args.no_cutoff)
    system.addForce(force)
    properties = {'Precision': args.precision} if args.platform == 'CUDA' else {}
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(args.platform), properties)
    context.setPositions(positions)
    for _ in range(args.evaluations):
        print('energy only', context.getState(getEnergy=True).getPotentialEnergy())
    for _ in range(args.evaluations):
        context.getState(getForces=True)
    print('done')


if __name__ == '__main__':
    main()
