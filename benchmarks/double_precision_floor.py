"""How close a table bias comes to the Reference platform in double precision on a GPU platform, ours
beside OpenMM's own CustomCVForce (issue 41, item 1). The same three coordination CVs, s(r) =
1/(1+(r/r0)^6) over the same pairs of 60 random particles (ours: CoordinationForces without a cutoff;
OpenMM's: CustomBondForces), and the same smooth 1-, 2- and 3-D tables t(c1), t(c1, c2),
t(c1, c2, c3), at two scales of the table (forces of about 0.05 and 5 kJ/mol/nm): each force alone
in a Context on the platform and on Reference at the same positions. Printed: the energy's relative
error, the largest force, and the forces' largest error (nm-norm of the difference per particle),
absolute and over the largest force. Both forces add their forces into OpenMM's 64-bit fixed-point
buffer (2^-32 kJ/mol/nm a unit), which sets an absolute floor.

    python benchmarks/double_precision_floor.py                 # CUDA, double precision
    python benchmarks/double_precision_floor.py --platform CPU  # the CPU platform (no fixed point)
"""
import argparse

import numpy as np
import openmm

from openmmcoordination import CoordinationBiasForce, CoordinationForce

PARTICLES = 60
GROUPS = [(list(range(0, 10)), list(range(10, 40))), (list(range(5, 25)), list(range(30, 60))),
          (list(range(40, 60)), list(range(0, 20)))]
R0 = [0.35, 0.4, 0.3]
SIZES = [15, 9, 7]


def table(dimensions, scale):
    """A smooth table over [0, pairs] on each axis, scale times a sum of sines."""
    mins = [0.0]*dimensions
    maxs = [float(len(a)*len(b)) for a, b in GROUPS[:dimensions]]
    axes = [np.linspace(lo, hi, n) for lo, hi, n in zip(mins, maxs, SIZES)]
    grid = np.meshgrid(*axes, indexing='ij')
    values = list((scale*sum(np.sin(3*g/(hi - lo) + k) for k, (g, lo, hi) in enumerate(zip(grid, mins, maxs)))).ravel(order='F'))
    if dimensions == 1:
        return openmm.Continuous1DFunction(values, mins[0], maxs[0])
    if dimensions == 2:
        return openmm.Continuous2DFunction(SIZES[0], SIZES[1], values, mins[0], maxs[0], mins[1], maxs[1])
    return openmm.Continuous3DFunction(*SIZES, values, mins[0], maxs[0], mins[1], maxs[1], mins[2], maxs[2])


def expression(dimensions):
    return 't(%s)' % ', '.join('c%d' % (k + 1) for k in range(dimensions))


def ours(dimensions, scale):
    bias = CoordinationBiasForce(expression(dimensions))
    for k in range(3):
        cv = CoordinationForce(*GROUPS[k])
        cv.setR0(R0[k])
        cv.setDMax(100.0)
        cv.setStretch(False)
        bias.addCollectiveVariable('c%d' % (k + 1), cv)
    bias.addTabulatedFunction('t', table(dimensions, scale))
    return bias


def openmms(dimensions, scale):
    force = openmm.CustomCVForce(expression(dimensions))
    for k in range(3):
        bonds = openmm.CustomBondForce('1/(1+(r/%r)^6)' % R0[k])
        for i in GROUPS[k][0]:
            for j in GROUPS[k][1]:
                if i != j:
                    bonds.addBond(i, j)
        force.addCollectiveVariable('c%d' % (k + 1), bonds)
    force.addTabulatedFunction('t', table(dimensions, scale))
    return force


def evaluate(force, positions, platform, properties):
    system = openmm.System()
    for _ in range(PARTICLES):
        system.addParticle(1.0)
    system.addForce(force)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName(platform), properties)
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    return state.getPotentialEnergy()._value, state.getForces(asNumpy=True)._value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='double', help='the platform\'s Precision property, where it has one')
    args = parser.parse_args()
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    if args.platform not in names:
        raise SystemExit('double_precision_floor.py: no platform %r here (there are %s)' % (args.platform, ', '.join(names)))
    properties = {'Precision': args.precision} if args.platform in ('CUDA', 'OpenCL', 'HIP') else {}
    positions = np.random.default_rng(7).uniform(0, 2.0, (PARTICLES, 3))
    print('%s (%s) against Reference' % (args.platform, properties.get('Precision', 'its own precision')))
    print('| table | scale | force | energy, relative error | largest force (kJ/mol/nm) | force error (kJ/mol/nm) | over the largest |')
    print('|---|---|---|---|---|---|---|')
    for scale in (1.0, 100.0):
        for dimensions in (1, 2, 3):
            for name, make in (('ours', ours), ('CustomCVForce', openmms)):
                expected, expectedForces = evaluate(make(dimensions, scale), positions, 'Reference', {})
                found, foundForces = evaluate(make(dimensions, scale), positions, args.platform, properties)
                largest = np.linalg.norm(expectedForces, axis=1).max()
                error = np.linalg.norm(foundForces - expectedForces, axis=1).max()
                print('| %d-D | %g | %s | %.1e | %.3g | %.2e | %.2e |' % (dimensions, scale, name, abs(found - expected)/abs(expected),
                                                                         largest, error, error/largest), flush=True)


if __name__ == '__main__':
    main()
