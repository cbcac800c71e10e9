"""The main job: the hydration shell of an ion in water, from g(r) to a free-energy profile.

1. Build a Na+ (or Cl-) ion in a box of TIP3P water with openmm.app.Modeller (Amber14 force field
   files from the OpenMM wheel); minimize and equilibrate.
2. Run MD with a PairDistributionReporter: the ion-oxygen pair histogram is summed on the
   Context's platform (the GPU on CUDA) every few steps; g(r) and n(r) are read back once.
3. Put r0 of the coordination number at the first minimum of g(r).
4. Run well-tempered metadynamics on the ion-oxygen coordination number with the GPU-resident
   Metadynamics class (the bias is the table of a CoordinationBiasForce over the CV).
5. Write gr.png, cv.png, fes.png and the CSV files behind them.

During step 4 it saves a checkpoint after each tenth of the run, checkpoint.chk in the output
folder (Metadynamics.saveCheckpoint: the Context and the hills), and the CV's settings in
metadynamics.json; --restart continues the metadynamics from them up to --metad-steps (give the
same other arguments), skipping steps 1-3 (g(r) is read back from gr.csv), appends to cv.csv, and
says so. A run without --restart into a folder that holds checkpoint.chk is refused (it would
overwrite that run): continue it with --restart, or give another --output.

    python examples/ion_coordination.py                   # CUDA if it runs the bias force, else CPU (1-2 minutes)
    python examples/ion_coordination.py --platform CPU --metad-steps 20000 --output output/ion
    python examples/ion_coordination.py --metad-steps 30000 --restart   # continue the first run's metadynamics
    python examples/ion_coordination.py --help

It writes to output/ion_coordination_Na (output/ion_coordination_Cl with --ion Cl) unless --output
says otherwise. COORDINATION_QUICK=1 in the environment runs the --quick sizes whatever the step
flags say (the size switch of the documentation's test).
"""

import argparse
import json
import os
import sys

import numpy as np

import openmm
import openmm.app as app
import openmm.unit as unit

import openmmcoordination as oc
from openmmcoordination._examples import (biasFactor, loadCheckpoint, nonNegativeInteger, outputFolder, outputProblem,
                                           platformName, positiveInteger, positiveNumber, refuse, runSettings)
from openmmcoordination.gr import addHistogramForce
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.reporters import CollectiveVariableReporter, PairDistributionReporter

# Settings per platform: box edge (nm); equilibration, g(r) and metadynamics steps (2 fs); steps between hills.
SETTINGS = {'gpu': dict(box=3.0, equil=10000, gr=50000, metad=500000, frequency=250),
            'cpu': dict(box=2.2, equil=1000, gr=5000, metad=15000, frequency=250),
            'quick': dict(box=2.0, equil=100, gr=400, metad=1200, frequency=100)}
TEMPERATURE = 300*unit.kelvin


def parseArguments(argv=None):
    parser = argparse.ArgumentParser(description='g(r) of an ion in water, r0 at its first minimum, then '
                                     'well-tempered metadynamics on the ion-oxygen coordination number. '
                                     'Writes gr.png, cv.png, fes.png and their CSV files to --output; the CPU '
                                     'default takes about 70 s on two cores.')
    parser.add_argument('--platform', default='auto', type=platformName, help='CUDA, CPU, Reference or auto (CUDA when it runs the bias force, else CPU)')
    parser.add_argument('--ion', default='Na', choices=['Na', 'Cl'], help='the ion (default Na)')
    parser.add_argument('--box', type=positiveNumber, help='cubic box edge in nm (default 3.0 on CUDA, 2.2 otherwise, 2.0 with --quick)')
    parser.add_argument('--equil-steps', type=nonNegativeInteger, help='equilibration steps of 2 fs (default 10,000 on CUDA, 1,000 otherwise)')
    parser.add_argument('--gr-steps', type=positiveInteger, help='steps of the g(r) run, at least 20 (a frame every 20 steps; '
                        'default 50,000 on CUDA, 5,000 otherwise)')
    parser.add_argument('--metad-steps', type=positiveInteger, help='metadynamics steps, a hill every --frequency steps '
                        '(default 500,000 = 1 ns on CUDA, 15,000 = 30 ps otherwise)')
    parser.add_argument('--frequency', type=positiveInteger, help='steps between hills (default 250; 100 with --quick)')
    parser.add_argument('--height', type=positiveNumber, default=1.0, help='initial hill height in kJ/mol (default 1)')
    parser.add_argument('--bias-factor', type=biasFactor, default=8.0, help='well-tempered bias factor (default 8)')
    parser.add_argument('--width', type=positiveNumber, default=0.15, help='hill width in CV units (default 0.15)')
    parser.add_argument('--nn', type=positiveInteger, default=12, help='exponent n of the rational switching function (default 12, m = 2n)')
    parser.add_argument('--quick', action='store_true', help='tiny settings for a smoke test (CI; also COORDINATION_QUICK=1, '
                        'which caps the step flags at these sizes)')
    parser.add_argument('--seed', type=int, default=2024, help='random seed (default 2024)')
    parser.add_argument('--restart', action='store_true',
                        help='continue the metadynamics from the checkpoint in the output folder (checkpoint.chk)')
    parser.add_argument('--output', type=outputFolder, help='output folder (default output/ion_coordination_ION: _Na or _Cl)')
    args = parser.parse_args(argv)
    if args.gr_steps is not None and args.gr_steps < 20:
        parser.error('argument --gr-steps: must be at least 20 (a frame every 20 steps), got %d' % args.gr_steps)
    if args.output is None:
        args.output = os.path.join('output', 'ion_coordination_' + args.ion)
    return args


def ionLabel(ion):
    """'Na+' or 'Cl-'."""
    return 'Na+' if ion == 'Na' else 'Cl-'


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


def equilibrate(args, settings, platform, restart=False):
    """Step 1: the system, a force that only observes the ion-oxygen pairs (energy 0, left out of the
    integration), a minimized and equilibrated Simulation (``restart``: neither, the checkpoint has the
    state). Returns (simulation, observer, ion, oxygens)."""
    modeller, system, ion, oxygens = buildSystem(args.ion, settings['box'])
    print('%s in %d TIP3P waters, box %.2f nm, %d atoms' % (ionLabel(args.ion), len(oxygens), settings['box'],
                                                           system.getNumParticles()))
    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 1/unit.picosecond, 0.002*unit.picoseconds)
    integrator.setRandomNumberSeed(args.seed)
    observer = addHistogramForce(system, ion, oxygens, integrator=integrator, periodic=True)
    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    simulation.context.setPositions(modeller.positions)
    if restart:
        return simulation, observer, ion, oxygens
    simulation.minimizeEnergy(maxIterations=500)
    simulation.context.setVelocitiesToTemperature(TEMPERATURE, args.seed)
    oc.runWithProgress('equilibration', simulation.step, settings['equil'], chunks=2)
    return simulation, observer, ion, oxygens


def measurePairDistribution(simulation, observer, settings, output):
    """Step 2: g(r) from a live run, the histogram accumulated on the platform every 20 steps; writes
    gr.csv and returns the PairDistribution."""
    maxDistance = min(1.0, 0.5*settings['box'])
    reporter = PairDistributionReporter(os.path.join(output, 'gr.csv'), 20, observer, numBins=100,
                                        maxDistance=maxDistance)
    simulation.reporters.append(reporter)
    oc.runWithProgress('g(r)', simulation.step, settings['gr'], chunks=5)
    simulation.reporters.remove(reporter)
    gr = reporter.writeFile()
    r0 = gr.getFirstMinimum()
    print('g(r) from %d frames: first peak at %.3f nm, first minimum at %.3f nm, n(r) there %.2f'
          % (gr.numFrames, gr.getFirstPeak().value_in_unit(unit.nanometer), r0.value_in_unit(unit.nanometer),
             gr.coordinationAt(r0)), flush=True)
    return gr


def makeCV(ion, oxygens, r0, nn):
    """The ion-oxygen coordination number (RATIONAL, n = nn, m = 2n, PLUMED's default dmax)."""
    cv = oc.CoordinationForce(ion, oxygens)
    cv.setR0(r0)
    cv.setN(nn)
    cv.setUsesPeriodicBoundaryConditions(True)
    return cv


def coordinationNumber(gr, ion, oxygens, nn):
    """Step 3: the coordination number with r0 at the first minimum of g(r) (RATIONAL, n = nn, m = 2n,
    PLUMED's default dmax), and a bias grid of its mean over the g(r) run +- 3. Returns (cv, low, high)."""
    r0 = gr.getFirstMinimum()
    cv = makeCV(ion, oxygens, r0, nn)
    expected = float(np.sum(gr.counts*np.array([cv.evaluateSwitchingFunction(x)[0] for x in gr.r])))/gr.numFrames
    low, high = max(0.0, np.floor(expected) - 3.0), np.ceil(expected) + 3.0
    print('coordination number: r0 = %.3f nm, n = %d, m = %d, dmax = %.3f nm; mean over the g(r) run %.2f; bias grid [%g, %g]'
          % (r0.value_in_unit(unit.nanometer), cv.getN(), 2*cv.getN(), cv.getDMax().value_in_unit(unit.nanometer), expected, low, high), flush=True)
    return cv, low, high


def runMetadynamics(simulation, cv, low, high, args, settings, output, start):
    """Step 4: well-tempered metadynamics, the bias in a CoordinationBiasForce's table, from step
    ``start``; a checkpoint after each tenth (with args.restart, it continues from the last one); writes
    cv.csv and fes.csv. Returns (meta, the CV's (times, values) over the run, grid, free energy with its
    minimum at 0)."""
    variable = BiasVariable(cv, low, high, args.width, gridWidth=int(round((high - low)/0.02)) + 1)
    meta = Metadynamics(simulation.system, [variable], TEMPERATURE, args.bias_factor, args.height*unit.kilojoules_per_mole,
                        settings['frequency'])
    simulation.context.reinitialize(preserveState=True)
    checkpoint = os.path.join(output, 'checkpoint.chk')
    if args.restart:
        loadCheckpoint(meta, simulation, checkpoint)
        print('restarted from %s at step %d (metadynamics step %d of %d)' % (
            checkpoint, simulation.currentStep, simulation.currentStep - start, settings['metad']), flush=True)
    cvReporter = CollectiveVariableReporter(os.path.join(output, 'cv.csv'), 50, meta.force, names=['cv'],
                                            append=args.restart)
    simulation.reporters.append(cvReporter)

    def progress():
        meta.saveCheckpoint(simulation, checkpoint)
        lastHeight = meta.getHillHeights()[-1].value_in_unit(unit.kilojoules_per_mole) if len(meta.getHillCenters()) else 0.0
        return 'cv %.2f  hills %d  last height %.3f kJ/mol' % (meta.getCollectiveVariables(simulation)[0],
                                                               len(meta.getHillCenters()), lastHeight)
    remaining = start + settings['metad'] - simulation.currentStep
    if remaining > 0:
        oc.runWithProgress('metadynamics', lambda n: meta.step(simulation, n), remaining,
                           chunks=max(1, round(10*remaining/settings['metad'])), extra=progress)
    cvReporter.close()
    trace = np.loadtxt(os.path.join(output, 'cv.csv'), delimiter=',', skiprows=1, ndmin=2)   # the whole run's
    grid, = meta.getCollectiveVariableGrid()
    fes = meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole)
    fes -= fes.min()
    np.savetxt(os.path.join(output, 'fes.csv'), np.column_stack([grid, fes]), delimiter=',',
               header='cv,free_energy_kJ_per_mol', comments='')
    return meta, (trace[:, 1], trace[:, 2]), grid, fes


def writePictures(gr, cv, meta, trace, grid, fes, ion, settings, output):
    """Step 5: gr.png, cv.png and fes.png."""
    from openmmcoordination.plots import plotCollectiveVariable, plotFreeEnergy, plotPairDistribution
    label = ionLabel(ion)
    plotPairDistribution(gr, cv, path=os.path.join(output, 'gr.png'),
                         title='%s-O(water) g(r), %d frames, with the switching function of the CV' % (label, gr.numFrames))
    times, values = trace
    plotCollectiveVariable(times, values[:, None], path=os.path.join(output, 'cv.png'),
                           names=['%s-O coordination' % label], title='%s-O coordination number during metadynamics' % label)
    visited = (values.min(), values.max())
    plotFreeEnergy(grid, fes, path=os.path.join(output, 'fes.png'), sampled=visited,
                   label='well-tempered metadynamics, %d hills' % len(meta.getHillCenters()),
                   xlabel='%s-O coordination number' % label,
                   title='free energy of the %s-O coordination number (%g ps)' % (label, settings['metad']*0.002))


def main(argv=None):
    args = parseArguments(argv)
    # auto: CUDA when it runs a CoordinationBiasForce (the metadynamics bias), else CPU
    platform = oc.bestPlatform(biasForce=True) if args.platform == 'auto' else openmm.Platform.getPlatformByName(args.platform)
    kind, settings = runSettings(SETTINGS, platform, args.quick, capped=('equil', 'gr', 'metad', 'frequency'), box=args.box,
                                 equil=args.equil_steps, gr=args.gr_steps, metad=args.metad_steps, frequency=args.frequency)
    problem = outputProblem(args.output, args.restart, ['checkpoint.chk', 'metadynamics.json', 'gr.csv'], ['checkpoint.chk'])
    if problem:
        refuse(problem)
    os.makedirs(args.output, exist_ok=True)
    print('openmm-coordination %s, OpenMM %s, platform %s, settings %s: %s' % (
        oc.__version__, openmm.__version__, platform.getName(), kind, settings), flush=True)

    simulation, observer, ion, oxygens = equilibrate(args, settings, platform, args.restart)
    runFile = os.path.join(args.output, 'metadynamics.json')
    if args.restart:
        # steps 1-3 were done by the first run: g(r) from gr.csv, the CV and its grid as that run made them
        gr = oc.PairDistribution.readCSV(os.path.join(args.output, 'gr.csv'))
        with open(runFile) as stream:
            run = json.load(stream)
        cv, low, high, start = makeCV(ion, oxygens, run['r0'], args.nn), run['low'], run['high'], run['start']
    else:
        gr = measurePairDistribution(simulation, observer, settings, args.output)
        cv, low, high = coordinationNumber(gr, ion, oxygens, args.nn)
        start = simulation.currentStep
        with open(runFile, 'w') as stream:
            json.dump({'r0': cv.getR0().value_in_unit(unit.nanometer), 'low': low, 'high': high, 'start': start}, stream)
    meta, trace, grid, fes = runMetadynamics(simulation, cv, low, high, args, settings, args.output, start)
    writePictures(gr, cv, meta, trace, grid, fes, args.ion, settings, args.output)
    print('wrote %s' % ', '.join(os.path.join(args.output, name) for name in
                                 ['gr.png', 'cv.png', 'fes.png', 'gr.csv', 'cv.csv', 'fes.csv']), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
