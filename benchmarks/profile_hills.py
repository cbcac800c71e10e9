"""What one update of Metadynamics and OPES costs on the host, piece by piece, on the md section's
PME water box with its two CVs (1 O and 100 O against the other O, 121 x 121 grid) or, with
--dimensions 3, the md section's three (and 1,000 O, GRID_3D points an axis): the CV read, the bias
energy read, the table's setFunctionParameters, updateParametersInContext against
updateTabulatedFunctionInContext (what the updates use), the update's GPU time (the call and a wait
for the GPU, less the wait alone), and cProfile of step() over many updates.

    python benchmarks/profile_hills.py [--platform CUDA] [--precision mixed] [--updates 40] [--dimensions 3]
"""

import argparse
import cProfile
import pstats
import time

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

from bench_md import md_cases, metadynamics_variables
from common import CUTOFF, rational_cv, water_box
from openmmcoordination import Metadynamics, OPES


def timed(label, function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    print('  %-46s median %7.3f ms  (min %.3f, max %.3f)' % (label, 1e3*np.median(times), 1e3*min(times), 1e3*max(times)),
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='mixed')
    parser.add_argument('--updates', type=int, default=40)
    parser.add_argument('--waters', type=int, default=8000)
    parser.add_argument('--dimensions', type=int, choices=(2, 3), default=2)
    parser.add_argument('--methods', default='metadynamics,opes', help='comma-separated: metadynamics, opes')
    args = parser.parse_args()
    system0, positions, oxygens, topology = water_box(args.waters, withTopology=True)
    single = md_cases(oxygens, False)
    (_, a1, b1), (_, a2, b2) = single[:2]
    factories = [lambda: rational_cv(a1, b1, CUTOFF, periodic=True), lambda: rational_cv(a2, b2, CUTOFF, periodic=True)]
    values = [4.8, 457.0]            # the CVs at the start (docs/performance.md: CV 2 over [397, 517])
    sigma = [0.2, 2.0]
    if args.dimensions == 3:
        third = oxygens[:1000]       # bench_md's third CV: 1,000 O against the other O, about 3,729 at the start
        factories.append(lambda: rational_cv(third, oxygens[1000:], CUTOFF, periodic=True))
        values.append(3729.0)
        sigma.append(20.0)
    platform = mm.Platform.getPlatformByName(args.platform)
    properties = {'Precision': args.precision} if args.platform == 'CUDA' else {}
    for method in args.methods.split(','):
        system = mm.XmlSerializer.clone(system0)
        variables = metadynamics_variables(values, factories)
        if method == 'metadynamics':
            sampler = Metadynamics(system, variables, 300*unit.kelvin, 10.0, 1.0*unit.kilojoules_per_mole, 500)
        else:
            sampler = OPES(system, variables, 300*unit.kelvin, 30.0*unit.kilojoules_per_mole, 500, biasFactor=10.0,
                           sigma=sigma)
        integrator = mm.LangevinMiddleIntegrator(300*unit.kelvin, 1/unit.picosecond, 2*unit.femtoseconds)
        simulation = app.Simulation(topology, system, integrator, platform, properties)
        simulation.context.setPositions(positions)
        simulation.context.setVelocitiesToTemperature(300*unit.kelvin, 1)
        sampler.step(simulation, 5000)
        context, force = simulation.context, sampler.force
        print('%s on %s %s: %d atoms' % (method, args.platform, args.precision, system.getNumParticles()), flush=True)
        timed('getCollectiveVariableValues', lambda: force.getCollectiveVariableValues(context), 20)
        timed('bias energy (getState, the force group)', lambda: context.getState(getEnergy=True, groups={force.getForceGroup()}), 20)
        table = force.getTabulatedFunction(0)
        # The values as a NumPy array, as Metadynamics and OPES pass them (a list of 69k floats takes 3-4 ms more to convert).
        parameters = [np.asarray(p) if isinstance(p, (list, tuple)) else p for p in table.getFunctionParameters()]
        timed("setFunctionParameters (%s)" % ' x '.join(str(v.gridWidth) for v in variables), lambda: table.setFunctionParameters(*parameters), 20)
        timed('updateParametersInContext', lambda: force.updateParametersInContext(context), 20)
        timed('updateTabulatedFunctionInContext', lambda: force.updateTabulatedFunctionInContext(context, 0), 20)
        timed("both (an upload: the table's values)", lambda: (table.setFunctionParameters(*parameters),
                                                        force.updateTabulatedFunctionInContext(context, 0)), 20)
        wait = lambda: context.getState(getEnergy=True, groups={force.getForceGroup()})   # noqa: E731
        timed('a wait for the GPU (bias energy read)', wait, 20)
        timed('updateTabulatedFunctionInContext and a wait', lambda: (force.updateTabulatedFunctionInContext(context, 0), wait()), 20)
        timed('500 steps, no update (simulation.step)', lambda: (simulation.step(500), context.getState(getEnergy=True)), 5)
        timed('500 steps with one update (step())', lambda: (sampler.step(simulation, 500), context.getState(getEnergy=True)), 5)
        profile = cProfile.Profile()
        profile.enable()
        sampler.step(simulation, 500*args.updates)
        context.getState(getEnergy=True)
        profile.disable()
        pstats.Stats(profile).sort_stats('tottime').print_stats(14)


if __name__ == '__main__':
    main()
