"""The free energy of ion clustering in about 2 M NaCl in TIP3P water, from well-tempered
metadynamics on the number of Na+ that touch at least one Cl- (a per-atom coordination number and
a smooth MORE_THAN of it).

CV, n: for each Na+ i, its Na-Cl coordination c_i = sum over the Cl- j of s(r_ij), with
    s(r) = (1 - x^6)/(1 - x^12), x = r/0.35 nm (--r0), stretched to 0 at 1 nm (--dmax), periodic:
    0.79 for a Cl- in contact (0.28 nm), 0.10 for one with a layer of water between (0.5 nm); then
    n = sum over the Na+ of 1 - t(c_i), t(c) = (1 - y^6)/(1 - y^12), y = c/0.5 (--threshold):
    a Na+ with a Cl- in contact counts 0.94, one with none below 0.01. n runs from 0 (all ions
    apart) to the number of Na+ (every Na+ in a pair or a cluster).

1. Build NaCl at --concentration (2 M) in a cubic box of TIP3P water with openmm.app.Modeller
   (Amber14 force field files from the OpenMM wheel: Joung-Cheatham ions; the ions replace waters
   picked at random, seeded by --seed), PME, H bonds constrained, 2 fs steps, Langevin at 300 K and
   a Monte Carlo barostat at 1 bar; minimize and equilibrate.
2. Run 1-D well-tempered metadynamics on n with openmmcoordination.Metadynamics: the bias grid is
   the table of a CoordinationBiasForce whose CV is the CoordinationForce above
   (setParticleFunction(MoreThan), setThreshold), updated every --frequency steps; the steps in
   between stay on the platform.
3. Write to --output: cv.csv (n over time), HILLS (the hills, PLUMED's format: plumed sum_hills
   reads it), fes.csv (the free energy F(n) and the bias on the grid), fes.png (F(n) in kJ/mol with
   the fraction of Na+ on top, and n over time), final_state.xml (the last frame, an OpenMM State)
   with final.pdb (the same frame with its topology, for a viewer) and final_ions.csv (each Na+'s c_i
   and 1 - t(c_i) in that frame).
4. After each tenth of the run, save a checkpoint, checkpoint.chk in --output (the Context and the
   hills); --restart continues the run from it up to --steps or --ns (give the same other
   arguments), appending to cv.csv. A run without --restart into a folder that holds
   checkpoint.chk is refused (it would overwrite that run).

PLUMED equivalent (docs/nacl-clustering.md): cn: COORDINATIONNUMBER SPECIESA=na SPECIESB=cl
SWITCH={RATIONAL R_0=0.35 D_MAX=1.0} MORE_THAN={RATIONAL R_0=0.5}, METAD ARG=cn.morethan SIGMA=0.4
HEIGHT=1.0 PACE=250 BIASFACTOR=10 TEMP=300.

    python examples/nacl_clustering.py                       # CUDA: 1 ns; otherwise CPU, 50 ps in a few minutes
    python examples/nacl_clustering.py --platform CUDA --ns 1
    python examples/nacl_clustering.py --ns 0.2 --restart    # continue the first run up to 200 ps
    python examples/nacl_clustering.py --help

COORDINATION_QUICK=1 in the environment runs the --quick sizes whatever the step flags say (the
size switch of the documentation's test).
"""

import argparse
import os
import random
import sys

import numpy as np

import openmm
import openmm.app as app
import openmm.unit as unit

import openmmcoordination as oc
from openmmcoordination._examples import outputFolder, outputProblem, platformName, runSettings
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.plumed.outputs import HillsWriter
from openmmcoordination.reporters import CollectiveVariableReporter

NAME = 'nacl_clustering'
# Settings per platform: box edge (nm), equilibration and metadynamics steps (2 fs), steps between hills.
SETTINGS = {'gpu': dict(box=2.6, equil=25000, steps=500000, frequency=250),
            'cpu': dict(box=2.6, equil=5000, steps=25000, frequency=50),
            'quick': dict(box=2.2, equil=100, steps=400, frequency=50)}
TEMPERATURE = 300*unit.kelvin
TIMESTEP = 0.002                    # ps
STEPS_PER_NS = 500000
BOX_MARGIN = 0.2                    # nm beyond 2 dmax: room for the barostat to shrink the box


def parseArguments(argv=None):
    """The command line, checked: a ValueError names the option and its value."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='auto', type=platformName, help='CUDA, CPU, Reference or auto (CUDA when it runs the bias force, else CPU)')
    parser.add_argument('--box', type=float, help='cubic box edge in nm before the barostat (default 2.6: about 20 NaCl in 500 waters at 2 M)')
    parser.add_argument('--concentration', type=float, default=2.0,
                        help='NaCl concentration in mol/L as Modeller.addSolvent takes it (pairs = waters x c/55.4 M; default 2)')
    parser.add_argument('--equil-steps', type=int, help='equilibration steps (default 25,000 on CUDA, 5,000 otherwise)')
    parser.add_argument('--steps', type=int, help='metadynamics steps of 2 fs (default 500,000 = 1 ns on CUDA, 25,000 otherwise)')
    parser.add_argument('--ns', type=float, help='metadynamics length in ns instead of --steps (1 ns = 500,000 steps)')
    parser.add_argument('--frequency', type=int, help='steps between hills (default 250 on CUDA, 50 otherwise)')
    parser.add_argument('--height', type=float, default=1.0, help='initial hill height in kJ/mol (default 1)')
    parser.add_argument('--bias-factor', type=float, default=10.0, help='well-tempered bias factor (default 10)')
    parser.add_argument('--width', type=float, default=0.4, help='hill width along n, in Na+ (default 0.4)')
    parser.add_argument('--r0', type=float, default=0.35, help='r0 of the Na-Cl switching function in nm (default 0.35)')
    parser.add_argument('--dmax', type=float, default=1.0, help='cutoff of the Na-Cl switching function in nm (default 1.0)')
    parser.add_argument('--threshold', type=float, default=0.5,
                        help='r0 of MORE_THAN\'s switching function of c_i: the Na-Cl coordination above which a Na+ counts (default 0.5)')
    parser.add_argument('--quick', action='store_true', help='tiny settings for a smoke test (CI; also COORDINATION_QUICK=1, '
                        'which caps the step flags at these sizes)')
    parser.add_argument('--seed', type=int, default=2026, help='random seed of the ion placement, velocities and integrator (default 2026)')
    parser.add_argument('--restart', action='store_true',
                        help='continue from the checkpoint in --output (checkpoint.chk, written after each tenth of a run)')
    parser.add_argument('--output', default=os.path.join('output', NAME), type=outputFolder, help='output folder (default output/%s)' % NAME)
    args = parser.parse_args(argv)
    checkArguments(args)
    if args.ns is not None:
        args.steps = int(round(args.ns*STEPS_PER_NS))
    return args


def _refuse(option, value, requirement):
    raise ValueError('%s: --%s must be %s, got %r' % (NAME, option, requirement, value))


def checkArguments(args):
    """Raise ValueError naming the option and its value for anything out of range."""
    for option in ('concentration', 'height', 'width', 'r0', 'dmax', 'threshold', 'ns'):
        value = getattr(args, option)
        if value is not None and not (np.isfinite(value) and value > 0):
            _refuse(option, value, 'positive and finite')
    for option in ('equil_steps', 'steps', 'frequency'):
        value = getattr(args, option)
        if value is not None and value < (0 if option == 'equil_steps' else 1):
            _refuse(option.replace('_', '-'), value, 'at least %d' % (0 if option == 'equil_steps' else 1))
    if args.steps is not None and args.ns is not None:
        raise ValueError('%s: give --steps or --ns, not both (got --steps %r and --ns %r)' % (NAME, args.steps, args.ns))
    if args.ns is not None and round(args.ns*STEPS_PER_NS) < 1:
        _refuse('ns', args.ns, 'at least one step (2e-6 ns)')
    if not (np.isfinite(args.bias_factor) and args.bias_factor > 1):
        _refuse('bias-factor', args.bias_factor, 'greater than 1')
    if args.dmax <= args.r0:
        _refuse('dmax', args.dmax, 'greater than --r0 (%g nm)' % args.r0)
    if args.box is not None:
        checkBox(args.box, args.dmax)
    if args.restart and not os.path.exists(os.path.join(args.output, 'checkpoint.chk')):
        raise ValueError('%s: --restart needs a checkpoint, and --output %r has no checkpoint.chk' % (NAME, args.output))


def checkBox(box, dmax):
    """Refuse a box edge (nm) below 2 dmax + BOX_MARGIN."""
    smallest = 2*dmax + BOX_MARGIN
    if not (np.isfinite(box) and box >= smallest):
        _refuse('box', box, 'at least 2 dmax + %g nm = %g nm (the periodic cutoff, with room for the barostat)'
                % (BOX_MARGIN, smallest))


def buildSystem(box, concentration, seed):
    """NaCl at ``concentration`` (mol/L, Modeller.addSolvent's ionicStrength) in a cubic box of TIP3P
    water (Amber14, PME, rigid water, H bonds constrained, a barostat at 1 bar). Returns (modeller,
    system, sodium indices, chloride indices, number of waters)."""
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    modeller = app.Modeller(app.Topology(), [])
    state = random.getstate()
    random.seed(seed)                          # Modeller picks the waters the ions replace with random
    try:
        modeller.addSolvent(forcefield, model='tip3p', boxSize=openmm.Vec3(box, box, box)*unit.nanometer,
                            ionicStrength=concentration*unit.molar, neutralize=False)
    finally:
        random.setstate(state)
    atoms = list(modeller.topology.atoms())
    sodium = [a.index for a in atoms if a.residue.name == 'NA']
    chloride = [a.index for a in atoms if a.residue.name == 'CL']
    waters = sum(1 for r in modeller.topology.residues() if r.name == 'HOH')
    if len(sodium) < 2:
        raise ValueError('%s: --box %g nm at --concentration %g M gives %d NaCl; at least 2 are needed'
                         % (NAME, box, concentration, len(sodium)))
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.9*unit.nanometer,
                                     constraints=app.HBonds)
    system.addForce(openmm.MonteCarloBarostat(1*unit.bar, TEMPERATURE))
    return modeller, system, sodium, chloride, waters


def clusteringForce(sodium, chloride, args):
    """n, the number of Na+ with at least one Cl- neighbour: MoreThan of the per-Na+ Na-Cl coordination."""
    force = oc.CoordinationForce(sodium, chloride)          # two groups: c_i over the Cl- for each Na+
    force.setR0(args.r0)                                     # n 6, m 12 (the defaults)
    force.setDMax(args.dmax)                                 # stretched to 0 there
    force.setUsesPeriodicBoundaryConditions(True)
    force.setParticleFunction(oc.CoordinationForce.MoreThan)
    force.setThreshold(args.threshold)                       # t(c) = RATIONAL R_0=threshold, n 6, m 12
    return force


def perIon(sodium, chloride, args, state, numParticles):
    """(c_i, 1 - t(c_i)) of each Na+ in a State: the force's getCoordinationNumbers in a Context of its
    own (the CV inside the bias force is a copy, in no Context one can ask), on the CPU platform."""
    system = openmm.System()
    for _ in range(numParticles):
        system.addParticle(1.0)
    force = clusteringForce(sodium, chloride, args)
    system.addForce(force)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('CPU'))
    context.setPeriodicBoxVectors(*state.getPeriodicBoxVectors())
    context.setPositions(state.getPositions())
    c = np.asarray(force.getCoordinationNumbers(context))
    counted = np.array([force.evaluateParticleFunction([x])[0] for x in c])      # MoreThan of one ion: 1 - t(c_i)
    return c, counted


def writeHills(meta, path, step):
    """The hills so far in PLUMED's HILLS format (field n), written whole through a temporary file."""
    temporary = path + '.tmp'
    writer = HillsWriter(temporary, meta, ['n'], TIMESTEP)
    writer.update(step)
    writer.close()
    os.replace(temporary, path)


def analyse(meta, args, path):
    """(grid, F with its sampled minimum at 0, bias, sampled range): F(n) = -(gamma/(gamma - 1)) V(n),
    sampled between the lowest and the highest hill centre. Writes fes.csv."""
    grid = meta.getCollectiveVariableGrid()[0]
    fes = np.asarray(meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole))
    bias = meta.getBias()
    bias = np.asarray(bias.value_in_unit(unit.kilojoules_per_mole) if unit.is_quantity(bias) else bias)
    centers = np.asarray(meta.getHillCenters()).ravel()
    low, high = (centers.min(), centers.max()) if len(centers) else (grid[0], grid[-1])
    sampled = (grid >= low - 1e-9) & (grid <= high + 1e-9)
    fes = fes - fes[sampled].min()
    rows = np.column_stack([grid, fes, bias, sampled.astype(int)])
    np.savetxt(path, rows, delimiter=',', fmt=['%.4f', '%.4f', '%.4f', '%d'],
               header='n_clustered,free_energy_kJ_per_mol,bias_kJ_per_mol,sampled', comments='')
    return grid, fes, (low, high)


def plot(grid, fes, sampled, trace, numSodium, args, ps, hills, path):
    """fes.png: F(n) (plots.plotFreeEnergy) with the fraction of Na+ on a top axis, and n over time."""
    from matplotlib.figure import Figure
    from openmmcoordination.plots import plotFreeEnergy
    figure = Figure(figsize=(12, 4.8), dpi=100, layout='constrained')
    left, right = figure.subplots(1, 2, gridspec_kw={'width_ratios': [1.3, 1]})
    plotFreeEnergy(grid, fes, sampled=sampled, ax=left, label='F(n)', xlabel='n: number of Na+ with a Cl- neighbour',
                   title='free energy of clustering (sampled range)')
    if left.get_legend() is not None:
        left.get_legend().remove()
    left.set_xlim(max(0, np.floor(sampled[0]) - 0.5), min(numSodium, np.ceil(sampled[1]) + 0.5))
    top = left.secondary_xaxis('top', functions=(lambda n: 100.0*n/numSodium, lambda f: f*numSodium/100.0))
    top.set_xlabel('Na+ with a Cl- neighbour (%% of %d)' % numSodium)
    steps, n = trace
    right.plot(steps*TIMESTEP, n, lw=0.8, color='C0')
    right.set_xlabel('time (ps)')
    right.set_ylabel('n: Na+ with a Cl- neighbour')
    right.set_ylim(0, numSodium)
    right.grid(alpha=0.3)
    right.set_title('n during metadynamics', fontsize=10)
    figure.suptitle('NaCl at %g M in TIP3P: well-tempered metadynamics on n, %g ps, %d hills, bias factor %g'
                    % (args.concentration, ps, hills, args.bias_factor), fontsize=11)
    figure.savefig(path)


def main(argv=None):
    args = parseArguments(argv)
    platform = oc.bestPlatform(biasForce=True) if args.platform == 'auto' else openmm.Platform.getPlatformByName(args.platform)
    kind, settings = runSettings(SETTINGS, platform, args.quick, capped=('equil', 'steps', 'frequency'), box=args.box,
                                 equil=args.equil_steps, steps=args.steps, frequency=args.frequency)
    checkBox(settings['box'], args.dmax)         # the default box against a larger --dmax
    problem = outputProblem(args.output, args.restart, ['checkpoint.chk'], ['checkpoint.chk'])
    if problem:                                  # a fresh run into the folder of an earlier one
        raise ValueError('%s: %s' % (NAME, problem))
    os.makedirs(args.output, exist_ok=True)
    print('openmm-coordination %s, OpenMM %s, platform %s, settings %s: %s' % (
        oc.__version__, openmm.__version__, platform.getName(), kind, settings), flush=True)

    modeller, system, sodium, chloride, waters = buildSystem(settings['box'], args.concentration, args.seed)
    volume = settings['box']**3
    print('%d Na+ and %d Cl- in %d TIP3P waters, box %.2f nm, %d atoms: %.2f mol/L, %.2f mol/kg' % (
        len(sodium), len(chloride), waters, settings['box'], system.getNumParticles(),
        len(sodium)/(0.602214076*volume), len(sodium)/(waters*0.018015)), flush=True)
    force = clusteringForce(sodium, chloride, args)
    numSodium = len(sodium)
    variable = BiasVariable(force, 0.0, float(numSodium), args.width, gridWidth=10*numSodium + 1)
    meta = Metadynamics(system, [variable], TEMPERATURE, args.bias_factor, args.height*unit.kilojoules_per_mole,
                        settings['frequency'])
    print('n: MoreThan (threshold r0 %g) of c_i, Na-Cl rational r0 %.2f nm, n 6, m 12, dmax %g nm, periodic; '
          'grid 0 to %d (%d points), hills %g wide every %d steps' % (
              args.threshold, args.r0, args.dmax, numSodium, 10*numSodium + 1, args.width, settings['frequency']), flush=True)

    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 1/unit.picosecond, TIMESTEP*unit.picoseconds)
    integrator.setRandomNumberSeed(args.seed)
    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    checkpoint = os.path.join(args.output, 'checkpoint.chk')
    if args.restart:
        meta.loadCheckpoint(simulation, checkpoint)
        print('restarted from %s at step %d of %d' % (checkpoint, simulation.currentStep, settings['steps']), flush=True)
    else:
        simulation.context.setPositions(modeller.positions)
        simulation.minimizeEnergy(maxIterations=500)
        simulation.context.setVelocitiesToTemperature(TEMPERATURE, args.seed)
        print('after minimization n = %.2f' % meta.getCollectiveVariables(simulation)[0], flush=True)
        oc.runWithProgress('equilibration', simulation.step, settings['equil'], chunks=5,
                           extra=lambda: 'n %.2f' % meta.getCollectiveVariables(simulation)[0])
        simulation.currentStep = 0          # hills and the trace count from the start of metadynamics
        simulation.context.setTime(0)

    trace = CollectiveVariableReporter(os.path.join(args.output, 'cv.csv'), max(1, settings['frequency']//2), meta.force,
                                       names=['n_clustered'], append=args.restart)
    simulation.reporters.append(trace)
    hillsFile = os.path.join(args.output, 'HILLS')

    def progress():
        meta.saveCheckpoint(simulation, checkpoint)
        writeHills(meta, hillsFile, simulation.currentStep)
        heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
        return 'n %5.2f of %d  hills %d  last height %.3f kJ/mol' % (
            meta.getCollectiveVariables(simulation)[0], numSodium, len(heights), heights[-1] if len(heights) else 0.0)
    remaining = settings['steps'] - simulation.currentStep
    if remaining > 0:
        oc.runWithProgress('metadynamics', lambda k: meta.step(simulation, k), remaining,
                           chunks=max(1, round(10*remaining/settings['steps'])), extra=progress)
    trace.close()
    writeHills(meta, hillsFile, simulation.currentStep)

    state = simulation.context.getState(getPositions=True, enforcePeriodicBox=False)
    with open(os.path.join(args.output, 'final_state.xml'), 'w') as stream:
        stream.write(openmm.XmlSerializer.serialize(state))
    simulation.topology.setPeriodicBoxVectors(state.getPeriodicBoxVectors())
    with open(os.path.join(args.output, 'final.pdb'), 'w') as stream:
        app.PDBFile.writeFile(simulation.topology, state.getPositions(), stream)
    c, counted = perIon(sodium, chloride, args, state, system.getNumParticles())
    np.savetxt(os.path.join(args.output, 'final_ions.csv'), np.column_stack([sodium, c, counted]), delimiter=',',
               fmt=['%d', '%.8f', '%.8f'], header='sodium_index,c_nacl,counted', comments='')
    n = meta.getCollectiveVariables(simulation)[0]
    print('final frame (step %d): n = %.4f; %d Na+ with c_i > %g; sum of 1 - t(c_i) = %.4f'
          % (simulation.currentStep, n, int(np.sum(c > args.threshold)), args.threshold, counted.sum()))

    ps = simulation.currentStep*TIMESTEP
    grid, fes, sampled = analyse(meta, args, os.path.join(args.output, 'fes.csv'))
    hills = len(meta.getHillHeights())
    print('sampled n from %.2f to %.2f (%d hills, %g ps)' % (sampled[0], sampled[1], hills, ps))
    integers = [k for k in range(numSodium + 1) if sampled[0] <= k <= sampled[1]]
    if integers:
        values = np.interp(integers, grid, fes)
        print('F(n) in kJ/mol at whole n:  ' + '  '.join('%d: %.1f' % (k, f) for k, f in zip(integers, values)))
    inside = np.flatnonzero((grid >= sampled[0] - 1e-9) & (grid <= sampled[1] + 1e-9))
    best = grid[inside[np.argmin(fes[inside])]]
    print('most probable n = %.1f of %d Na+ (%.0f%%)' % (best, numSodium, 100*best/numSodium))
    data = np.loadtxt(os.path.join(args.output, 'cv.csv'), delimiter=',', skiprows=1, ndmin=2)
    plot(grid, fes, sampled, (data[:, 0], data[:, 2]), numSodium, args, ps, hills, os.path.join(args.output, 'fes.png'))
    print('wrote %s' % ', '.join(os.path.join(args.output, name) for name in
                                 ['fes.png', 'fes.csv', 'cv.csv', 'HILLS', 'final_state.xml', 'final.pdb',
                                                                 'final_ions.csv']), flush=True)
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except ValueError as error:
        sys.stderr.write('error: %s\n' % error)
        sys.exit(2)                              # argparse's status for a command-line error
