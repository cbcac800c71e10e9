"""The main job: the hydration shell of an ion in water, from g(r) to a free-energy profile.

1. Build a Na+ (or Cl-) ion in a box of TIP3P water with openmm.app.Modeller (Amber14 force field
   files from the OpenMM wheel); minimize and equilibrate.
2. Run MD with a PairDistributionReporter: the ion-oxygen pair histogram is summed on the
   Context's platform (the GPU on CUDA) every few steps; g(r) and n(r) are read back once.
3. Put r0 of the coordination number at the first minimum of g(r).
4. Run well-tempered metadynamics on the ion-oxygen coordination number with the GPU-resident
   Metadynamics class (the bias is the CoordinationForce's own table).
5. Write gr.png, cv.png, fes.png and the CSV files behind them.

    python examples/ion_coordination.py                   # CUDA if present, else CPU (about 1-2 minutes)
    python examples/ion_coordination.py --platform CPU --metad-steps 20000 --output output/ion
    python examples/ion_coordination.py --help
"""

import argparse
import os
import sys
import time

import numpy as np

import openmm
import openmm.app as app
import openmm.unit as unit

import openmmcoordination as oc
from openmmcoordination.gr import addHistogramForce
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.reporters import CollectiveVariableReporter, PairDistributionReporter

# Settings per platform: box edge (nm); equilibration, g(r) and metadynamics steps (2 fs); steps between hills.
SETTINGS = {'gpu': dict(box=3.0, equil=10000, gr=50000, metad=500000, frequency=250),
            'cpu': dict(box=2.2, equil=1000, gr=5000, metad=15000, frequency=250),
            'quick': dict(box=2.0, equil=100, gr=400, metad=1200, frequency=100)}


def parseArguments(argv=None):
    parser = argparse.ArgumentParser(description='g(r) of an ion in water, r0 at its first minimum, then '
                                     'well-tempered metadynamics on the ion-oxygen coordination number.')
    parser.add_argument('--platform', default='auto', help='CUDA, CPU, Reference or auto (CUDA when it works, else CPU)')
    parser.add_argument('--ion', default='Na', choices=['Na', 'Cl'], help='the ion (default Na)')
    parser.add_argument('--box', type=float, help='cubic box edge in nm (default 3.0 on CUDA, 2.2 otherwise)')
    parser.add_argument('--equil-steps', type=int, help='equilibration steps')
    parser.add_argument('--gr-steps', type=int, help='steps of the g(r) run (a frame every 20 steps)')
    parser.add_argument('--metad-steps', type=int, help='metadynamics steps (a hill every --frequency steps)')
    parser.add_argument('--frequency', type=int, help='steps between hills (default 250; 100 with --quick)')
    parser.add_argument('--height', type=float, default=1.0, help='initial hill height in kJ/mol (default 1)')
    parser.add_argument('--bias-factor', type=float, default=8.0, help='well-tempered bias factor (default 8)')
    parser.add_argument('--width', type=float, default=0.15, help='hill width in CV units (default 0.15)')
    parser.add_argument('--nn', type=int, default=12, help='exponent n of the rational switching function (default 12, m = 2n)')
    parser.add_argument('--quick', action='store_true', help='tiny settings for a smoke test (CI)')
    parser.add_argument('--seed', type=int, default=2024, help='random seed (default 2024)')
    parser.add_argument('--output', default='output/ion_coordination', help='output folder (default output/ion_coordination)')
    return parser.parse_args(argv)


def choosePlatform(name):
    """The named platform, or for 'auto' CUDA if the coordination plugin runs there, else CPU."""
    if name != 'auto':
        return openmm.Platform.getPlatformByName(name)
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    for candidate in ['CUDA', 'CPU', 'Reference']:
        if candidate not in names:
            continue
        system = openmm.System()
        system.addParticle(1.0)
        system.addParticle(1.0)
        system.addForce(oc.CoordinationForce([0], [1]))
        try:
            openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName(candidate))
            return openmm.Platform.getPlatformByName(candidate)
        except Exception:
            continue
    raise RuntimeError('No platform runs the CoordinationForce; see openmm.Platform.getPluginLoadFailures()')


def buildSystem(ion, box):
    """An ion in a cubic box of TIP3P water (Amber14 parameters, PME, rigid water, H bonds constrained)."""
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    topology = app.Topology()
    residue = topology.addResidue(ion.upper(), topology.addChain())
    topology.addAtom(ion.upper(), app.element.sodium if ion == 'Na' else app.element.chlorine, residue)
    modeller = app.Modeller(topology, [openmm.Vec3(0, 0, 0)]*unit.nanometer)
    modeller.addSolvent(forcefield, model='tip3p', boxSize=openmm.Vec3(box, box, box)*unit.nanometer, neutralize=False)
    cutoff = min(0.9, 0.5*box - 0.05)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=cutoff*unit.nanometer,
                                     constraints=app.HBonds)
    ionIndex = [a.index for a in modeller.topology.atoms() if a.residue.name == ion.upper()]
    oxygens = [a.index for a in modeller.topology.atoms() if a.residue.name == 'HOH' and a.element == app.element.oxygen]
    return modeller, system, ionIndex, oxygens


def runWithProgress(label, advance, steps, simulation, chunks=10, extra=None):
    """Run ``advance(n)`` in chunks, printing progress and speed."""
    done = 0
    start = time.time()
    size = max(1, steps//chunks)
    while done < steps:
        n = min(size, steps - done)
        advance(n)
        done += n
        elapsed = time.time() - start
        nsPerDay = done*0.002e-3/elapsed*86400 if elapsed > 0 else 0.0
        line = '  %s: %6d/%d steps  %5.1f ps  %6.2f ns/day' % (label, done, steps, done*0.002, nsPerDay)
        if extra is not None:
            line += '  ' + extra()
        print(line, flush=True)


def main(argv=None):
    args = parseArguments(argv)
    platform = choosePlatform(args.platform)
    kind = 'quick' if args.quick else ('gpu' if platform.getName() in ('CUDA', 'OpenCL', 'HIP') else 'cpu')
    settings = dict(SETTINGS[kind])
    for key, value in [('box', args.box), ('equil', args.equil_steps), ('gr', args.gr_steps), ('metad', args.metad_steps),
                       ('frequency', args.frequency)]:
        if value is not None:
            settings[key] = value
    os.makedirs(args.output, exist_ok=True)
    print('openmm-coordination %s, OpenMM %s, platform %s, settings %s: %s' % (
        oc.__version__, openmm.__version__, platform.getName(), kind, settings), flush=True)

    # 1. The system, and a force that only observes the ion-oxygen pairs (energy 0, left out of the integration).
    modeller, system, ion, oxygens = buildSystem(args.ion, settings['box'])
    print('%s+ in %d TIP3P waters, box %.2f nm, %d atoms' % (args.ion, len(oxygens), settings['box'],
                                                              system.getNumParticles()) if args.ion == 'Na' else
          '%s- in %d TIP3P waters, box %.2f nm, %d atoms' % (args.ion, len(oxygens), settings['box'], system.getNumParticles()))
    temperature = 300*unit.kelvin
    integrator = openmm.LangevinMiddleIntegrator(temperature, 1/unit.picosecond, 0.002*unit.picoseconds)
    integrator.setRandomNumberSeed(args.seed)
    observer = addHistogramForce(system, ion, oxygens, integrator=integrator, periodic=True)
    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    simulation.context.setPositions(modeller.positions)
    simulation.minimizeEnergy(maxIterations=500)
    simulation.context.setVelocitiesToTemperature(temperature, args.seed)
    runWithProgress('equilibration', simulation.step, settings['equil'], simulation, chunks=2)

    # 2. g(r) from a live run: the histogram is accumulated on the platform every 20 steps.
    maxDistance = min(1.0, 0.5*settings['box'])
    grReporter = PairDistributionReporter(os.path.join(args.output, 'gr.csv'), 20, observer, numBins=100,
                                          maxDistance=maxDistance)
    simulation.reporters.append(grReporter)
    runWithProgress('g(r)', simulation.step, settings['gr'], simulation, chunks=5)
    simulation.reporters.remove(grReporter)
    gr = grReporter.writeFile()
    r0 = gr.firstMinimum()
    print('g(r) from %d frames: first peak at %.3f nm, first minimum at %.3f nm, n(r) there %.2f'
          % (gr.numFrames, gr.firstPeak(), r0, gr.coordinationAt(r0)), flush=True)

    # 3. The coordination number with r0 at the first minimum (RATIONAL, n = 12, m = 24, PLUMED's default dmax).
    cv = oc.CoordinationForce(ion, oxygens)
    cv.setR0(r0)
    cv.setN(args.nn)
    cv.setUsesPeriodicBoundaryConditions(True)
    expected = float(np.sum(gr.counts*np.array([cv.evaluateSwitchingFunction(x)[0] for x in gr.r])))/gr.numFrames
    low, high = max(0.0, np.floor(expected) - 3.0), np.ceil(expected) + 3.0
    print('coordination number: r0 = %.3f nm, n = %d, m = %d, dmax = %.3f nm; mean over the g(r) run %.2f; bias grid [%g, %g]'
          % (r0, cv.getN(), 2*cv.getN(), cv.getDMax().value_in_unit(unit.nanometer), expected, low, high), flush=True)

    # 4. Well-tempered metadynamics, the bias in the force's own table.
    variable = BiasVariable(cv, low, high, args.width, gridWidth=int(round((high - low)/0.02)) + 1)
    meta = Metadynamics(system, [variable], temperature, args.bias_factor, args.height*unit.kilojoules_per_mole,
                        settings['frequency'])
    simulation.context.reinitialize(preserveState=True)
    cvReporter = CollectiveVariableReporter(os.path.join(args.output, 'cv.csv'), 50, meta.force)
    simulation.reporters.append(cvReporter)
    runWithProgress('metadynamics', lambda n: meta.step(simulation, n), settings['metad'], simulation, chunks=10,
                    extra=lambda: 'cv %.2f  hills %d  last height %.3f kJ/mol' % (
                        meta.getCollectiveVariables(simulation)[0], len(meta.getHillCenters()),
                        meta.getHillHeights()[-1].value_in_unit(unit.kilojoules_per_mole) if len(meta.getHillCenters()) else 0.0))
    cvReporter.close()
    grid = meta.getCollectiveVariableGrid()
    fes = meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole)
    fes -= fes.min()
    np.savetxt(os.path.join(args.output, 'fes.csv'), np.column_stack([grid, fes]), delimiter=',',
               header='cv,free_energy_kJ_per_mol', comments='')

    # 5. Pictures.
    from openmmcoordination.plots import plotCollectiveVariable, plotFreeEnergy, plotPairDistribution
    ionLabel = 'Na+' if args.ion == 'Na' else 'Cl-'
    plotPairDistribution(gr, cv, path=os.path.join(args.output, 'gr.png'),
                         title='%s-O(water) g(r), %d frames, with the switching function of the CV' % (ionLabel, gr.numFrames))
    plotCollectiveVariable(cvReporter.times, cvReporter.values, path=os.path.join(args.output, 'cv.png'),
                           names=['%s-O coordination' % ionLabel], title='%s-O coordination number during metadynamics' % ionLabel)
    visited = (cvReporter.values.min(), cvReporter.values.max())
    plotFreeEnergy(grid, fes, path=os.path.join(args.output, 'fes.png'), sampled=visited,
                   label='well-tempered metadynamics, %d hills' % len(meta.getHillCenters()),
                   xlabel='%s-O coordination number' % ionLabel,
                   title='free energy of the %s-O coordination number (%g ps)' % (ionLabel, settings['metad']*0.002))
    print('wrote %s' % ', '.join(os.path.join(args.output, name) for name in
                                 ['gr.png', 'cv.png', 'fes.png', 'gr.csv', 'cv.csv', 'fes.csv']), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
