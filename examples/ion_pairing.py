"""The free energy of Na+/Cl- ion pairing in TIP3P water on two coordination numbers, from
well-tempered metadynamics (or OPES, --method opes) with the bias on the device.

CV 1, c1: the Na-Cl coordination, s(r) = (1 - x^4)/(1 - x^8), x = r/0.35 nm, of the Na-Cl distance
    (stretched to 0 at 1 nm): 0.7 in the contact ion pair (r = 0.28 nm), 0.18 in the
    solvent-separated pair (r = 0.5 nm), below 0.1 beyond 0.6 nm. n = 4 rather than PLUMED's
    default 6 keeps the solvent-separated pair clear of the grid's edge at c1 = 0.
CV 2, c2: the Na-O(water) coordination, rational with r0 = 0.31 nm (the first minimum of the Na-O
    g(r)), n = 12, m = 24: the number of waters in the first shell of Na+, which loses one when Cl-
    takes its place.

1. Build Na+ and Cl- in a cubic box of TIP3P water with openmm.app.Modeller (Amber14 force field
   files from the OpenMM wheel: Joung-Cheatham ions), with a flat-bottomed wall beyond the
   solvent-separated pair (Na-Cl distance 0.65 nm, --wall), so that short runs come back to the
   pair rather than explore the box; minimize and equilibrate.
2. Run 2-D well-tempered metadynamics on (c1, c2) with openmmcoordination.Metadynamics: the bias
   grid is the table of a CoordinationBiasForce, updated every --frequency steps; the steps in
   between stay on the platform.
   With --method opes, openmmcoordination.OPES instead (OPES_METAD): a kernel every --frequency
   steps, the same widths as initial sigma, the barrier --barrier and the same bias factor.
3. Write fes.png (the 2-D free energy, contact and solvent-separated basins marked, and its
   projection on c1: openmmcoordination.plots.plotFreeEnergy), fes.csv (the grid), cv.csv (the CVs
   over time) and, where both basins were sampled at two or more of the ten checkpoints of the run,
   convergence.png (F(SSIP) - F(CIP) against time: plots.plotConvergence).
4. After each tenth of the run, save a checkpoint, checkpoint.chk in --output (the sampler's
   saveCheckpoint: the Context and the hills or kernels, c(t), a walker's id and file index);
   --restart continues the run from it up to --steps (give the same other arguments), appending to
   cv.csv, and says so. A run without --restart into a folder that holds checkpoint.chk is refused
   (it would overwrite that run).

PLUMED equivalent (docs/ion-pairing.md): c1: COORDINATION GROUPA=na GROUPB=cl R_0=0.35 NN=4 MM=8
D_MAX=1.0, c2: COORDINATION GROUPA=na GROUPB=ow R_0=0.31 NN=12 MM=24, d: DISTANCE ATOMS=na,cl,
UPPER_WALLS ARG=d AT=0.65 KAPPA=2500, METAD ARG=c1,c2 SIGMA=0.04,0.15 HEIGHT=1.0 PACE=250 BIASFACTOR=6
TEMP=300 GRID_MIN=0,2 GRID_MAX=1,8 GRID_BIN=100,120.

    python examples/ion_pairing.py                   # CUDA (1 ns, 1.5 minutes on an H100), else CPU (60 ps, about 2 minutes)
    python examples/ion_pairing.py --platform CPU --steps 200000 --output output/ion_pairing_long
    python examples/ion_pairing.py --method opes          # writes to output/ion_pairing_opes
    python examples/ion_pairing.py --cv distance          # c1 the Na-Cl distance: output/ion_pairing_distance
    python examples/ion_pairing.py --steps 100000 --restart   # continue the first run up to 100,000 steps
    python examples/ion_pairing.py --help

With --cv distance, c1 is the Na-Cl distance itself (nm, the nearest image; PLUMED: d: DISTANCE
ATOMS=na,cl, METAD ARG=d,c2 with GRID_MIN=0.2,2 GRID_MAX=0.9,8 GRID_BIN=140,120): an
openmmcoordination.DistanceCV, which is a CV of the same CoordinationBiasForce as c2 (its
addDistance), computed in the same bias evaluation (on CUDA inside the chain-rule launch).

COORDINATION_QUICK=1 in the environment runs the --quick sizes whatever the step flags say (the
size switch of the documentation's test).
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
from openmmcoordination._examples import (biasFactor, loadCheckpoint, nonNegativeInteger, nonNegativeNumber, outputFolder,
                                           outputProblem, platformName, positiveInteger, positiveNumber, refuse, runSettings)
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.opes import OPES
from openmmcoordination.reporters import CollectiveVariableReporter

# Settings per platform: box edge (nm), equilibration and metadynamics steps (2 fs), steps between hills.
SETTINGS = {'gpu': dict(box=3.0, equil=20000, steps=500000, frequency=250),
            'cpu': dict(box=2.2, equil=2000, steps=30000, frequency=50),
            'quick': dict(box=2.0, equil=100, steps=400, frequency=50)}
TEMPERATURE = 300*unit.kelvin
GRID = dict(c1=(0.0, 1.0, 101), c2=(2.0, 8.0, 121))      # min, max, points
DISTANCE_GRID = (0.2, 0.9, 141)                          # c1 with --cv distance: the Na-Cl distance (nm)
# Na-Cl distances (nm) of the basins in TIP3P with these ions: the contact ion pair (CIP) below the
# barrier at about 0.36 nm, the solvent-separated ion pair (SSIP) around 0.5 nm.
CIP_RANGE, SSIP_RANGE = (0.22, 0.36), (0.42, 0.60)


def parseArguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='auto', type=platformName, help='CUDA, CPU, Reference or auto (CUDA when it runs the bias force, else CPU)')
    parser.add_argument('--box', type=positiveNumber, help='cubic box edge in nm (default 3.0 on CUDA, 2.2 otherwise)')
    parser.add_argument('--equil-steps', type=nonNegativeInteger, help='equilibration steps (default 20,000 on CUDA, 2,000 otherwise)')
    parser.add_argument('--steps', type=positiveInteger, help='metadynamics steps of 2 fs (default 500,000 = 1 ns on CUDA, 30,000 otherwise)')
    parser.add_argument('--frequency', type=positiveInteger, help='steps between hills or OPES kernels (default 250 on CUDA, 50 otherwise)')
    parser.add_argument('--method', default='metadynamics', choices=['metadynamics', 'opes'],
                        help='well-tempered metadynamics (default) or OPES')
    parser.add_argument('--cv', default='coordination', choices=['coordination', 'distance'],
                        help='c1: the Na-Cl coordination (default) or the Na-Cl distance in nm (a DistanceCV inside the bias force)')
    parser.add_argument('--height', type=positiveNumber, default=1.0, help='initial hill height in kJ/mol (default 1; metadynamics)')
    parser.add_argument('--barrier', type=positiveNumber, default=30.0, help='the barrier to overcome in kJ/mol (default 30; OPES)')
    parser.add_argument('--bias-factor', type=biasFactor, default=6.0, help='well-tempered bias factor (default 6)')
    parser.add_argument('--width-nacl', type=positiveNumber, default=0.04,
                        help='hill width (OPES: initial sigma) along c1, the Na-Cl coordination or distance (nm) (default 0.04)')
    parser.add_argument('--width-nao', type=positiveNumber, default=0.15, help='hill width (OPES: initial sigma) along c2, the Na-O coordination (default 0.15)')
    parser.add_argument('--r0-nacl', type=positiveNumber, default=0.35, help='r0 of the Na-Cl switching function in nm (default 0.35)')
    parser.add_argument('--r0-nao', type=positiveNumber, default=0.31, help='r0 of the Na-O switching function in nm (default 0.31)')
    parser.add_argument('--wall', type=nonNegativeNumber, default=0.65, help='upper wall on the Na-Cl distance in nm (default 0.65; 0: none)')
    parser.add_argument('--bias-dir', type=outputFolder, help='a directory shared by several walkers (runs of this script); default none')
    parser.add_argument('--quick', action='store_true', help='tiny settings for a smoke test (CI; also COORDINATION_QUICK=1, '
                        'which caps the step flags at these sizes)')
    parser.add_argument('--seed', type=int, default=2026, help='random seed (default 2026)')
    parser.add_argument('--restart', action='store_true',
                        help='continue from the checkpoint in --output (checkpoint.chk, written after each tenth of a run)')
    parser.add_argument('--output', type=outputFolder, help='output folder (default output/ion_pairing, with _opes for --method opes and '
                        '_distance for --cv distance)')
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = os.path.join('output', 'ion_pairing' + ('_opes' if args.method == 'opes' else '')
                                   + ('_distance' if args.cv == 'distance' else ''))
    return args


def buildSystem(box, wall):
    """Na+ and Cl- 0.3 nm apart in a cubic box of TIP3P water (Amber14, PME, rigid water, H bonds
    constrained), with the wall 2500 (r - wall)^2 kJ/mol (r in nm) beyond ``wall`` nm of Na-Cl distance.
    Returns (modeller, system, sodium index, chloride index, water oxygens)."""
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    topology = app.Topology()
    chain = topology.addChain()
    topology.addAtom('NA', app.element.sodium, topology.addResidue('NA', chain))
    topology.addAtom('CL', app.element.chlorine, topology.addResidue('CL', chain))
    modeller = app.Modeller(topology, [openmm.Vec3(0, 0, 0), openmm.Vec3(0.3, 0, 0)]*unit.nanometer)
    modeller.addSolvent(forcefield, model='tip3p', boxSize=openmm.Vec3(box, box, box)*unit.nanometer, neutralize=False)
    cutoff = min(0.9, 0.5*box - 0.05)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=cutoff*unit.nanometer,
                                     constraints=app.HBonds)
    atoms = list(modeller.topology.atoms())
    sodium = [a.index for a in atoms if a.residue.name == 'NA'][0]
    chloride = [a.index for a in atoms if a.residue.name == 'CL'][0]
    oxygens = [a.index for a in atoms if a.residue.name == 'HOH' and a.element == app.element.oxygen]
    if wall > 0:
        bond = openmm.CustomBondForce('0.5*kwall*max(0, r - rwall)^2')
        bond.addGlobalParameter('kwall', 5000.0)
        bond.addGlobalParameter('rwall', wall)
        bond.addBond(sodium, chloride)
        bond.setUsesPeriodicBoundaryConditions(True)
        system.addForce(bond)
    return modeller, system, sodium, chloride, oxygens


def collectiveVariables(sodium, chloride, oxygens, args):
    """c1 (Na-Cl) and c2 (Na-O water) as CoordinationForces, periodic."""
    nacl = oc.CoordinationForce([sodium], [chloride])
    nacl.setR0(args.r0_nacl)
    nacl.setN(4)                             # m = 2n = 8
    nacl.setDMax(1.0)                        # stretched to 0 at 1 nm
    nacl.setUsesPeriodicBoundaryConditions(True)
    nao = oc.CoordinationForce([sodium], oxygens)
    nao.setR0(args.r0_nao)
    nao.setN(12)                             # m = 24; PLUMED's default dmax, 2.61 r0
    nao.setUsesPeriodicBoundaryConditions(True)
    return nacl, nao


def c1Variable(nacl, sodium, chloride, args):
    """The BiasVariable of c1: the Na-Cl coordination, or with --cv distance the Na-Cl distance (a DistanceCV, nm)."""
    if args.cv == 'distance':
        return BiasVariable(oc.DistanceCV(sodium, chloride, usePeriodic=True), DISTANCE_GRID[0], DISTANCE_GRID[1],
                            args.width_nacl, gridWidth=DISTANCE_GRID[2])
    return BiasVariable(nacl, GRID['c1'][0], GRID['c1'][1], args.width_nacl, gridWidth=GRID['c1'][2])


def c1Name(args):
    """c1's column name in cv.csv and fes.csv."""
    return 'd_nacl_nm' if args.cv == 'distance' else 'c1_nacl'


def toNaClDistance(nacl, c, args):
    """The Na-Cl distance (nm) at c1 = c: c itself with --cv distance, else the inverse of the switching function."""
    return np.asarray(c, dtype=float) if args.cv == 'distance' else distanceAt(nacl, c)


def switching(force, r):
    """s(r) of a CoordinationForce at the distances r (nm)."""
    return np.array([force.evaluateSwitchingFunction(float(x))[0] for x in np.atleast_1d(r)])


def distanceAt(force, c):
    """The distance (nm) at which the switching function of ``force`` is c (its inverse, 0.15 to 1 nm)."""
    r = np.linspace(1.0, 0.15, 2000)
    return np.interp(c, switching(force, r), r)


def distance(state, i, j):
    """The minimum-image distance (nm) between particles i and j of a State (rectangular box)."""
    positions = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    box = np.diag(state.getPeriodicBoxVectors(asNumpy=True).value_in_unit(unit.nanometer))
    delta = positions[i] - positions[j]
    delta -= box*np.round(delta/box)
    return float(np.linalg.norm(delta))


def basin(fes, axes, sampled, c1range, kT):
    """(c1, c2, F at the lowest sampled grid point with c1 in c1range, the basin's free energy
    -kT ln sum exp(-F/kT) over its sampled points), or None where it was not sampled."""
    c1, c2 = np.meshgrid(*axes)               # shape (len c2, len c1), as fes
    inside = sampled & (c1 >= c1range[0]) & (c1 <= c1range[1])
    if not inside.any():
        return None
    k = np.argmin(np.where(inside, fes, np.inf))
    area = (axes[0][1] - axes[0][0])*(axes[1][1] - axes[1][0])
    total = -kT*np.log(np.sum(np.exp(-fes[inside]/kT))*area)
    return float(c1.flat[k]), float(c2.flat[k]), float(fes.flat[k]), float(total)


def analyse(meta, nacl, args):
    """The free energy with its sampled minimum at 0, the sampled region (within two hill widths of a
    hill), the projection on c1 and the two basins. Writes fes.csv."""
    axes = meta.getCollectiveVariableGrid()                        # [c1 values, c2 values]
    fes = meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole)   # shape (len c2, len c1)
    centers = meta.getKernels()[0] if isinstance(meta, OPES) else meta.getHillCenters()
    c1, c2 = np.meshgrid(*axes)
    sampled = np.zeros(fes.shape, dtype=bool)
    for x, y in centers:
        sampled |= ((c1 - x)/args.width_nacl)**2 + ((c2 - y)/args.width_nao)**2 < 4.0
    if not sampled.any():
        sampled[:] = True
    fes = fes - fes[sampled].min()
    kT = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE).value_in_unit(unit.kilojoules_per_mole)
    weights = np.where(sampled, np.exp(-fes/kT), 0.0).sum(axis=0)
    with np.errstate(divide='ignore'):
        profile = -kT*np.log(weights)
    profile -= profile[np.isfinite(profile)].min()
    if args.cv == 'distance':
        ranges = {'CIP': CIP_RANGE, 'SSIP': SSIP_RANGE}
    else:
        ranges = {'CIP': sorted(switching(nacl, CIP_RANGE)), 'SSIP': sorted(switching(nacl, SSIP_RANGE))}
    basins = {name: basin(fes, axes, sampled, c1range, kT) for name, c1range in ranges.items()}
    rows = np.column_stack([c1.ravel(), c2.ravel(), fes.ravel(), sampled.ravel().astype(int)])
    np.savetxt(os.path.join(args.output, 'fes.csv'), rows, delimiter=',', fmt=['%.4f', '%.4f', '%.4f', '%d'],
               header='%s,c2_nao,free_energy_kJ_per_mol,sampled' % c1Name(args), comments='')
    return axes, fes, sampled, profile, basins


def plot(axes, fes, sampled, profile, basins, nacl, meta, args, ps, path):
    """fes.png: the 2-D free energy (plots.plotFreeEnergy: filled contours in kJ/mol, the basins
    marked) with a top axis in Na-Cl distance, and its projection on c1 (plotFreeEnergy of one variable)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from openmmcoordination.plots import plotFreeEnergy
    r = np.linspace(0.15, 1.0, 2000)
    s = switching(nacl, r)                                        # decreasing in r

    def toDistance(c):
        return np.interp(c, s[::-1], r[::-1])

    def toCoordination(x):
        return np.interp(x, r, s)

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5.2), dpi=110, gridspec_kw={'width_ratios': [1.55, 1]},
                                         layout='constrained')
    byDistance = (args.cv == 'distance')
    marked = {'%s (r = %.2f nm)' % (name, point[0] if byDistance else toDistance(point[0])): point[:2]
              for name, point in basins.items() if point is not None}
    c1Label = 'c1: Na-Cl distance (nm)' if byDistance else 'c1: Na-Cl coordination, s(r), r0 = %.2f nm' % args.r0_nacl
    plotFreeEnergy(axes, fes, sampled=sampled, basins=marked, ax=left, xlabel=c1Label,
                   ylabel='c2: Na-O(water) coordination, r0 = %.2f nm' % args.r0_nao,
                   title='Na+/Cl- in TIP3P: free energy (grey: not sampled)')
    plotFreeEnergy([axes[0]], profile, ax=right, label='projected on c1', xlabel=c1Label.split(',')[0],
                   title='projected on c1')
    if right.get_legend() is not None:
        right.get_legend().remove()                                  # one curve, named by the title
    ticks = [0.25, 0.3, 0.35, 0.4, 0.5, 0.6]
    for axis in (() if byDistance else (left, right)):
        secondary = axis.secondary_xaxis('top', functions=(toDistance, toCoordination))
        secondary.set_xticks(ticks)
        secondary.set_xlabel('Na-Cl distance (nm)')
    for name, point in basins.items():
        if point is not None:
            right.axvline(point[0], color='0.5', linestyle=':', linewidth=1)
            right.annotate(name, xy=(point[0], 0.8), xycoords=right.get_xaxis_transform(), xytext=(3, 0),
                           textcoords='offset points', fontsize=9)   # above the curve, clear of its minimum's label
    right.set_xlim(axes[0][0], axes[0][-1])
    if basins['CIP'] is not None and basins['SSIP'] is not None:
        right.text(0.45, 0.97, 'F(SSIP) - F(CIP) = %.1f kJ/mol\n(basins integrated)' % (basins['SSIP'][3] - basins['CIP'][3]),
                   transform=right.transAxes, ha='center', va='top', fontsize=9)
    on = 'the Na-Cl distance and the Na-O coordination' if byDistance else 'two coordination numbers'
    if isinstance(meta, OPES):
        title = 'OPES on %s: %g ps, %d kernels (compressed), barrier %g kJ/mol, bias factor %g' % (
            on, ps, len(meta.getKernels()[2]), args.barrier, args.bias_factor)
    else:
        title = 'Well-tempered metadynamics on %s: %g ps, %d hills, bias factor %g' % (
            on, ps, len(meta.getHillHeights()), args.bias_factor)
    figure.suptitle(title, fontsize=12)
    figure.savefig(path)
    plt.close(figure)


def main(argv=None):
    args = parseArguments(argv)
    platform = oc.bestPlatform(biasForce=True) if args.platform == 'auto' else openmm.Platform.getPlatformByName(args.platform)
    kind, settings = runSettings(SETTINGS, platform, args.quick, capped=('equil', 'steps', 'frequency'), box=args.box,
                                 equil=args.equil_steps, steps=args.steps, frequency=args.frequency)
    problem = outputProblem(args.output, args.restart, ['checkpoint.chk', 'convergence.json'], ['checkpoint.chk'])
    if problem:
        refuse(problem)
    os.makedirs(args.output, exist_ok=True)
    if args.bias_dir:
        os.makedirs(args.bias_dir, exist_ok=True)    # the walkers' shared folder, made by whichever starts first
    print('openmm-coordination %s, OpenMM %s, platform %s, settings %s: %s' % (
        oc.__version__, openmm.__version__, platform.getName(), kind, settings), flush=True)

    modeller, system, sodium, chloride, oxygens = buildSystem(settings['box'], args.wall)
    print('Na+ and Cl- in %d TIP3P waters, box %.2f nm, %d atoms' % (len(oxygens), settings['box'], system.getNumParticles()))
    nacl, nao = collectiveVariables(sodium, chloride, oxygens, args)
    variables = [c1Variable(nacl, sodium, chloride, args),
                 BiasVariable(nao, GRID['c2'][0], GRID['c2'][1], args.width_nao, gridWidth=GRID['c2'][2])]
    walkers = dict(saveFrequency=10*settings['frequency'], biasDir=args.bias_dir) if args.bias_dir else {}
    if args.method == 'opes':
        meta = OPES(system, variables, TEMPERATURE, args.barrier*unit.kilojoules_per_mole, settings['frequency'],
                    biasFactor=args.bias_factor, sigma=[args.width_nacl, args.width_nao], **walkers)
    else:
        meta = Metadynamics(system, variables, TEMPERATURE, args.bias_factor, args.height*unit.kilojoules_per_mole,
                            settings['frequency'], **walkers)
    print('c1: %s; c2: Na-O, r0 %.2f nm, n 12, m 24, dmax %.2f nm; '
          'grid %d x %d, %s %g x %g every %d steps; Na-Cl wall at %s'
          % ('the Na-Cl distance (nm), in the bias force' if args.cv == 'distance' else
             'Na-Cl, r0 %.2f nm, n 4, m 8, dmax 1 nm' % args.r0_nacl, args.r0_nao, nao.getDMax().value_in_unit(unit.nanometer),
             variables[0].gridWidth, GRID['c2'][2],
             'OPES kernels' if args.method == 'opes' else 'hills', args.width_nacl, args.width_nao,
             settings['frequency'], '%g nm' % args.wall if args.wall > 0 else 'none'), flush=True)

    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 1/unit.picosecond, 0.002*unit.picoseconds)
    integrator.setRandomNumberSeed(args.seed)
    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    checkpoint = os.path.join(args.output, 'checkpoint.chk')
    progressFile = os.path.join(args.output, 'convergence.json')
    convergence = []          # (ps, F(SSIP) - F(CIP)) after each tenth of the run where both basins are sampled
    if args.restart:
        loadCheckpoint(meta, simulation, checkpoint)
        with open(progressFile) as stream:
            convergence = [tuple(point) for point in json.load(stream) if point[0] <= simulation.currentStep*0.002]
        print('restarted from %s at step %d of %d' % (checkpoint, simulation.currentStep, settings['steps']), flush=True)
    else:
        simulation.context.setPositions(modeller.positions)
        simulation.minimizeEnergy(maxIterations=500)
        simulation.context.setVelocitiesToTemperature(TEMPERATURE, args.seed)
        oc.runWithProgress('equilibration', simulation.step, settings['equil'], chunks=2)
        simulation.currentStep = 0          # hills and the trace count from the start of metadynamics
        simulation.context.setTime(0)

    trace = CollectiveVariableReporter(os.path.join(args.output, 'cv.csv'), max(1, settings['frequency']//2), meta.force,
                                       names=[c1Name(args), 'c2_nao'], append=args.restart)
    simulation.reporters.append(trace)

    def progress():
        basins = analyse(meta, nacl, args)[4]
        if basins['CIP'] is not None and basins['SSIP'] is not None:
            convergence.append((simulation.currentStep*0.002, basins['SSIP'][3] - basins['CIP'][3]))
        meta.saveCheckpoint(simulation, checkpoint)
        with open(progressFile, 'w') as stream:
            json.dump(convergence, stream)
        c1, c2 = meta.getCollectiveVariables(simulation)
        r = distance(simulation.context.getState(getPositions=True), sodium, chloride)
        if isinstance(meta, OPES):
            history = meta.getHistory()
            return 'c1 %.2f  c2 %.2f  Na-Cl %.3f nm  kernels %d  rct %.2f kJ/mol  zed %.3g' % (
                c1, c2, r, history.nker[-1], history.rct[-1].value_in_unit(unit.kilojoules_per_mole), history.zed[-1])
        heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
        return 'c1 %.2f  c2 %.2f  Na-Cl %.3f nm  hills %d  last height %.3f kJ/mol' % (
            c1, c2, r, len(heights), heights[-1] if len(heights) else 0.0)
    remaining = settings['steps'] - simulation.currentStep
    if remaining > 0:
        oc.runWithProgress(args.method, lambda n: meta.step(simulation, n), remaining,
                           chunks=max(1, round(10*remaining/settings['steps'])), extra=progress)
    trace.close()

    ps = simulation.currentStep*0.002
    axes, fes, sampled, profile, basins = analyse(meta, nacl, args)
    for name, point in basins.items():
        if point is None:
            print('%s: not sampled' % name)
        else:
            print(('%s: lowest at c1 %.3f (Na-Cl %.3f nm), c2 %.2f, free energy %.1f kJ/mol' if args.cv == 'distance' else
                   '%s: lowest at c1 %.2f (Na-Cl %.3f nm), c2 %.2f, free energy %.1f kJ/mol') % (
                name, point[0], toNaClDistance(nacl, point[0], args), point[1], point[2]))
    if basins['CIP'] is not None and basins['SSIP'] is not None:
        print('F(SSIP) - F(CIP) = %.1f kJ/mol, the basins integrated (%g ps: a first estimate; it converges in ns)'
              % (basins['SSIP'][3] - basins['CIP'][3], ps))
    plot(axes, fes, sampled, profile, basins, nacl, meta, args, ps, os.path.join(args.output, 'fes.png'))
    if len(convergence) >= 2:
        from openmmcoordination.plots import plotConvergence
        plotConvergence(*zip(*convergence), path=os.path.join(args.output, 'convergence.png'), names=['F(SSIP) - F(CIP)'],
                        title='the free-energy difference of the two basins during the run')
        print('wrote %s' % os.path.join(args.output, 'convergence.png'))
    else:
        print('convergence.png not written: both basins were sampled at fewer than two of the ten checkpoints')
    print('wrote %s' % ', '.join(os.path.join(args.output, name) for name in ['fes.png', 'fes.csv', 'cv.csv']), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
