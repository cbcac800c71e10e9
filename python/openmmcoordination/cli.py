"""The command line: ``openmm-coordination`` (or ``python -m openmmcoordination``).

    openmm-coordination analyze system.pdb traj.dcd --group-a "resname NA" --group-b "name OW" --r0 auto -o out/
    openmm-coordination plot gr out/gr.csv -o gr.png --r0 0.32 --nn 12
    openmm-coordination plot cv out/cv.csv -o cv.png
    openmm-coordination plot fes fes.csv -o fes.png
    openmm-coordination info
    openmm-coordination plumed check plumed.dat [--pdb system.pdb]
    openmm-coordination plumed run plumed.dat --pdb solvated.pdb --steps 10000
    openmm-coordination config --cflags --libs      (and --plugins, --cmake-prefix: for C++ programs)
"""

import argparse
import os
import sys

import numpy as np


def _positive(kind):
    """An argparse type: a positive number of the given kind (int or float)."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError('must be a positive %s, got %r' % ('integer' if kind is int else 'number', text))
        if not 0 < value < float('inf'):
            raise argparse.ArgumentTypeError('must be a positive %s, got %r' % ('integer' if kind is int else 'number', text))
        return value
    return convert


def _r0(text):
    """--r0: 'auto' or a positive distance in nm."""
    return text if text == 'auto' else _positive(float)(text)


def _switchingArguments(parser):
    group = parser.add_argument_group('switching function (PLUMED keywords; nm)')
    group.add_argument('--r0', type=_r0, help="R_0 in nm, or 'auto' for the first minimum of g(r) (analyze)")
    group.add_argument('--nn', type=int, help='NN, the exponent n (default 6)')
    group.add_argument('--mm', type=int, help='MM, the exponent m (default 2n)')
    group.add_argument('--d0', type=float, help='D_0 in nm (default 0)')
    group.add_argument('--dmax', type=float, help="D_MAX in nm (default PLUMED's automatic d0 + r0*1e-5^(1/(n-m)))")


def _parser():
    parser = argparse.ArgumentParser(prog='openmm-coordination',
                                     description='Coordination numbers and g(r) with OpenMM (openmm-coordination).')
    commands = parser.add_subparsers(dest='command', required=True)

    analyze = commands.add_parser('analyze', help='g(r), n(r) and the coordination number of a trajectory',
                                  description='Compute g(r), n(r) and the coordination number frame by frame with a '
                                  'CoordinationForce on the best platform; trajectories are read with MDAnalysis. '
                                  'Writes <prefix>gr.csv, <prefix>gr.png, <prefix>cv.csv, <prefix>cv.png.')
    analyze.add_argument('topology', help='topology file (PDB, PSF, GRO, PRMTOP, ...)')
    analyze.add_argument('trajectory', nargs='*', help='trajectory files (DCD, XTC, TRR, ...)')
    analyze.add_argument('--group-a', required=True, help='MDAnalysis selection of group A (GROUPA)')
    analyze.add_argument('--group-b', help='MDAnalysis selection of group B (GROUPB); omit for one group')
    analyze.add_argument('--pair-list', action='store_true', help='pair group A[k] with group B[k] (PAIR)')
    analyze.add_argument('--bins', type=_positive(int), default=200, help='histogram bins (default 200)')
    analyze.add_argument('--rmax', type=_positive(float), default=1.0, help='histogram range in nm (default 1.0)')
    analyze.add_argument('--start', type=int, help='first frame')
    analyze.add_argument('--stop', type=int, help='frame to stop before')
    analyze.add_argument('--step', type=int, help='use every step-th frame')
    analyze.add_argument('--platform', help='OpenMM platform (default: CUDA if it works, else CPU)')
    analyze.add_argument('--no-correct', action='store_true', help='do not correct g(r) beyond half the box')
    analyze.add_argument('--no-progress', action='store_true', help='no progress bar')
    analyze.add_argument('-o', '--output', default='.', help='output folder (default .)')
    analyze.add_argument('--prefix', default='', help='prefix of the output file names')
    analyze.add_argument('--format', default='png', help='picture format: png (default), pdf, svg')
    _switchingArguments(analyze)

    plot = commands.add_parser('plot', help='pictures from the CSV files this package writes')
    plot.add_argument('kind', choices=['gr', 'cv', 'fes'], help='gr: g(r) with s(r) and n(r); cv: CV over time; '
                      'fes: free-energy profile')
    plot.add_argument('csv', help='the CSV file (PairDistribution.writeCSV, CollectiveVariableReporter, '
                      'or two columns cv,free energy)')
    plot.add_argument('-o', '--output', help='the picture to write (default: the CSV name with .png)')
    plot.add_argument('--title', help='title')
    _switchingArguments(plot)

    commands.add_parser('info', help='versions, platforms and plugin load failures')
    from openmmcoordination.plumed.command import addCommands
    addCommands(commands)
    from openmmcoordination.cpp_config import addCommand
    addCommand(commands)
    return parser


def _switchingForce(args):
    """A CoordinationForce with the switching options of the command line, for drawing its s(r)
    (with --r0 auto it keeps the default r0, which the caller replaces)."""
    from openmmcoordination.analysis import makeForce
    r0 = None if args.r0 in (None, 'auto') else float(args.r0)
    return makeForce([0], [1], False, r0, args.nn, args.mm, args.d0, args.dmax)


def _analyze(args):
    from matplotlib.figure import Figure
    from openmm import unit
    from openmmcoordination.analysis import analyzeTrajectory
    from openmmcoordination.plots import plotCollectiveVariable, plotPairDistribution
    formats = Figure().canvas.get_supported_filetypes()
    if args.format not in formats:
        raise ValueError('--format %s is not a picture format matplotlib writes (%s)' % (args.format, ', '.join(sorted(formats))))
    os.makedirs(args.output, exist_ok=True)
    path = lambda name: os.path.join(args.output, args.prefix + name)
    options = dict(groupA=args.group_a, groupB=args.group_b, pairList=args.pair_list, numBins=args.bins,
                   maxDistance=args.rmax, nn=args.nn, mm=args.mm, d0=args.d0, dmax=args.dmax, start=args.start,
                   stop=args.stop, step=args.step, platform=args.platform, correct=not args.no_correct,
                   progress=False if args.no_progress else None)
    auto = args.r0 == 'auto'
    if auto:
        first = analyzeTrajectory(args.topology, args.trajectory, computeCV=False, **options)
        r0 = first.gr.getFirstMinimum()
        print('first minimum of g(r): %.4f nm; r0 set there' % r0.value_in_unit(unit.nanometer))
    else:
        r0 = args.r0
    result = analyzeTrajectory(args.topology, args.trajectory, r0=r0, computeGr=not auto, **options)
    gr = first.gr if auto else result.gr
    gr.writeCSV(path('gr.csv'))
    result.writeCollectiveVariableCSV(path('cv.csv'))
    plotPairDistribution(gr, result.force, path=path('gr.' + args.format))
    plotCollectiveVariable(result.times, result.cv, path=path('cv.' + args.format))
    r0 = result.force.getR0().value_in_unit(unit.nanometer)
    print('%d frames on %s; %s, %d pairs; r0 %.4f nm; mean coordination number %.4f (std %.4f)'
          % (len(result.frames), result.platform, gr.mode, gr.numPairs, r0, np.mean(result.cv), np.std(result.cv)))
    print('wrote ' + ', '.join(path(n) for n in ['gr.csv', 'cv.csv', 'gr.' + args.format, 'cv.' + args.format]))


def _readColumns(csv, required=()):
    with open(csv) as f:
        lines = [line for line in f.read().splitlines() if line and not line.startswith('#')]
    try:
        header = lines[0].split(',')
        data = np.array([line.split(',') for line in lines[1:]], dtype=float).reshape(len(lines) - 1, len(header))
        if len(data) == 0 or any(name not in header for name in required):
            raise ValueError
    except (IndexError, ValueError):
        raise ValueError('%s is not a CSV table of numbers under a header line%s' % (
            csv, ' with the columns ' + ', '.join(required) if required else '')) from None
    return header, data


def _plot(args):
    from openmmcoordination import plots
    from openmmcoordination.gr import PairDistribution
    output = args.output or os.path.splitext(args.csv)[0] + '.png'
    if args.kind == 'gr':
        gr = PairDistribution.readCSV(args.csv)
        force = _switchingForce(args) if args.r0 is not None else None
        if force is not None and args.r0 == 'auto':
            force.setR0(gr.getFirstMinimum())
        plots.plotPairDistribution(gr, force, path=output, title=args.title)
    elif args.kind == 'cv':
        header, data = _readColumns(args.csv, ('time_ps',))
        timeColumn = header.index('time_ps')
        columns = [i for i, name in enumerate(header) if name not in ('step', 'frame', 'time_ps')]
        plots.plotCollectiveVariable(data[:, timeColumn], data[:, columns], path=output,
                                     names=[header[i] for i in columns], title=args.title)
    else:
        header, data = _readColumns(args.csv)
        if data.shape[1] < 2:
            raise ValueError('%s has %d column; plot fes needs two: the variable and the free energy'
                             % (args.csv, data.shape[1]))
        plots.plotFreeEnergy(data[:, 0], data[:, 1], path=output, title=args.title)
    print('wrote ' + output)


def _info():
    import openmm
    import openmmcoordination
    print('openmm-coordination %s, OpenMM %s' % (openmmcoordination.__version__, openmm.__version__))
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    print('platforms: ' + ', '.join(names))
    from openmmcoordination.analysis import bestPlatform
    try:
        print('best platform for CoordinationForce: ' + bestPlatform().getName())
    except RuntimeError as error:
        print(error)
    # OpenMM's list and this package's, each library once
    failures = []
    for message in list(openmm.Platform.getPluginLoadFailures()) + list(openmmcoordination.plugin_load_failures):
        if openmmcoordination._library_of(message) not in {openmmcoordination._library_of(m) for m in failures}:
            failures.append(message)
    print('plugin load failures:' + ('' if failures else ' none'))
    for failure in failures:
        print('  ' + failure)


def main(argv=None):
    """Run the command line; an error of the input (a file that cannot be read, a selection that matches
    no atom, a value out of range) is printed as "openmm-coordination <command>: error: ..." and
    returns 1, without a traceback."""
    import openmm
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in ('analyze', 'plot'):
        try:
            (_analyze if args.command == 'analyze' else _plot)(args)
        except (ValueError, OSError, RuntimeError, openmm.OpenMMException) as error:
            print('%s %s: error: %s' % (parser.prog, args.command, error), file=sys.stderr)
            return 1
    elif args.command == 'plumed':
        from openmmcoordination.plumed.command import runCommand
        return runCommand(args)
    elif args.command == 'config':
        from openmmcoordination.cpp_config import runCommand
        return runCommand(args)
    else:
        _info()
    return 0


if __name__ == '__main__':
    sys.exit(main())
