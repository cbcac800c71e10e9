"""The ``openmm-coordination plumed`` commands:

    openmm-coordination plumed check plumed.dat [--pdb system.pdb]
    openmm-coordination plumed run plumed.dat --pdb solvated.pdb [--steps N] [--platform CPU] [--output dir]

``check`` prints what each line of the input becomes (the Python equivalent) or the first error; the
CVs without NOPBC take the nearest periodic image where the PDB has a box, as under ``run``.
``run`` builds the System of a PDB file with Amber14 and TIP3P (OpenMM's amber14-all.xml and
amber14/tip3p.xml; PME where the PDB has a box, H bonds constrained), a Langevin integrator at
the TEMP of METAD or OPES_METAD (or --temperature) with 2 fs steps, minimizes, and runs the input,
writing its PRINT, DUMPDERIVATIVES and METAD files in --output.
"""

import os
import time

__all__ = ['addCommands', 'runCommand']


def addCommands(commands):
    """Add the ``plumed`` command and its ``check`` and ``run`` subcommands to an argparse subparsers."""
    plumed = commands.add_parser('plumed', help='read a PLUMED input (plumed.dat): check it, or run it on a PDB')
    actions = plumed.add_subparsers(dest='plumed_command', required=True)
    check = actions.add_parser('check', help='print what each line becomes (the Python equivalent), or the first error')
    run = actions.add_parser('run', help='run the input on a solvated PDB with Amber14/TIP3P, writing its PRINT and '
                             'METAD files')
    for parser in (check, run):
        parser.add_argument('input', help='the PLUMED input file')
        parser.add_argument('--temperature', type=float, help="integrator temperature in K (default: the TEMP of METAD or OPES_METAD, else 300)")
    check.add_argument('--pdb', help='a PDB file whose atoms the atom numbers must exist in')
    run.add_argument('--pdb', required=True, help='the solvated system (a PDB file with its box)')
    run.add_argument('--steps', type=int, default=1000, help='MD steps of 2 fs (default 1000)')
    run.add_argument('--platform', help='OpenMM platform (default: CUDA if it works, else CPU)')
    run.add_argument('--minimize', type=int, default=200, help='energy minimization iterations first (default 200; 0: none)')
    run.add_argument('--seed', type=int, default=1, help='random seed of the integrator and velocities (default 1)')
    run.add_argument('-o', '--output', default='.', help='folder of the output files (default .)')


def _integrator(path, temperature):
    """A LangevinMiddleIntegrator (1/ps, 2 fs) at ``temperature`` K, else at the TEMP of the input's
    METAD or OPES_METAD, else at 300 K."""
    import openmm
    from openmm import unit
    from openmmcoordination.plumed.syntax import parseInput
    if temperature is None:
        with open(path) as f:
            metad = [a for a in parseInput(f.read(), path)
                     if a.name in ('METAD', 'OPES_METAD', 'OPES_METAD_EXPLORE') and a.has('TEMP')]
        temperature = metad[0].toNumber('TEMP', metad[0].keywords['TEMP']) if metad else 300.0
    return openmm.LangevinMiddleIntegrator(temperature*unit.kelvin, 1/unit.picosecond, 0.002*unit.picoseconds)


def _check(args):
    import openmm.app as app
    from openmmcoordination import plumed
    topology = app.PDBFile(args.pdb).topology if args.pdb else None
    # periodic as ``run`` would build it: PME (periodic) where the PDB has a box; without a PDB, not known
    # (load's default: the CVs without NOPBC take no periodic images, logged)
    periodic = None if topology is None else topology.getPeriodicBoxVectors() is not None
    try:
        inp = plumed.load(args.input, topology=topology, integrator=_integrator(args.input, args.temperature),
                          periodic=periodic)
    except plumed.PlumedInputError as error:
        print('error: %s' % error)
        return 1
    print(inp.describe())
    print('%s: %d actions, all supported' % (args.input, len(inp.actions)))
    return 0


def _system(pdb):
    """Amber14/TIP3P System of a PDB: PME with a cutoff of at most 1 nm where it has a box, H bonds constrained."""
    import openmm.app as app
    from openmm import unit
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    box = pdb.topology.getPeriodicBoxVectors()
    if box is None:
        return forcefield.createSystem(pdb.topology, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)
    edge = min(box[k][k].value_in_unit(unit.nanometer) for k in range(3))
    return forcefield.createSystem(pdb.topology, nonbondedMethod=app.PME, constraints=app.HBonds,
                                   nonbondedCutoff=min(1.0, 0.5*edge - 0.05)*unit.nanometer)


def _run(args):
    import openmm
    import openmm.app as app
    from openmm import unit
    from openmmcoordination import plumed
    from openmmcoordination.analysis import bestPlatform
    pdb = app.PDBFile(args.pdb)
    system = _system(pdb)
    integrator = _integrator(args.input, args.temperature)
    integrator.setRandomNumberSeed(args.seed)
    try:
        inp = plumed.load(args.input, system, pdb.topology, integrator)
    except plumed.PlumedInputError as error:
        print('error: %s' % error)
        return 1
    platform = bestPlatform(biasForce=True) if args.platform is None else openmm.Platform.getPlatformByName(args.platform)
    simulation = app.Simulation(pdb.topology, system, integrator, platform)
    simulation.context.setPositions(pdb.positions)
    if args.minimize > 0:
        simulation.minimizeEnergy(maxIterations=args.minimize)
    simulation.context.setVelocitiesToTemperature(integrator.getTemperature(), args.seed)
    os.makedirs(args.output, exist_ok=True)
    print('%s on %s: %d atoms, platform %s, %g K; %s' % (args.input, args.pdb, system.getNumParticles(), platform.getName(),
                                                         integrator.getTemperature().value_in_unit(unit.kelvin),
                                                         ', '.join(f.getName() for f in inp.forces) or 'no bias'), flush=True)
    inp.attach(simulation, args.output)
    start = time.time()
    inp.step(simulation, args.steps)
    elapsed = time.time() - start
    inp.close()
    print('%d steps (%g ps) in %.1f s, %.2f ns/day' % (args.steps, args.steps*0.002, elapsed,
                                                       args.steps*0.002e-3/max(elapsed, 1e-9)*86400))
    if inp.metadynamics is not None:
        print('%d hills' % len(inp.metadynamics.getHillHeights()))
    if inp.opes is not None:
        print('%d kernels' % len(inp.opes.getKernels()[2]))
    print('wrote ' + (', '.join(os.path.join(args.output, name) for name in inp.outputFiles()) or 'nothing'))
    return 0


def runCommand(args):
    """Run ``openmm-coordination plumed check|run`` with parsed arguments; returns the exit status."""
    return _check(args) if args.plumed_command == 'check' else _run(args)
