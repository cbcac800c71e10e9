"""OPES against well-tempered metadynamics on a double well whose free energy is known exactly: how
fast each reaches it, on the same system, for the same length, with matched parameters.

System: two particles (10 amu) in free space bound by U(r) = A ((r - rc)^2 - w^2)^2/w^4, wells at
0.25 and 0.45 nm and a barrier A = 10 kJ/mol (4 kT at 300 K) at rc = 0.35 nm. The CV is their
coordination, s(r) = 1/(1 + (r/0.35 nm)^6), a CoordinationForce over a one-pair list. Exact: the
distance has the density r^2 exp(-U(r)/kT), so F(s) = U(r) - 2 kT ln r + kT ln |ds/dr| at r(s).

Both methods: bias factor 5, an update every 100 steps, kernels/hills 0.03 wide on a 101-point grid
over [0, 1], the bias on the Context's platform (one CoordinationBiasForce table).
- metadynamics: hills of 1 kJ/mol (openmmcoordination.Metadynamics);
- OPES: barrier 15 kJ/mol (openmmcoordination.OPES; its kernels shrink as the sample grows).

Every --checkpoint steps each run's free energy (getFreeEnergy()) is compared with the exact one at
the grid points within 15 kJ/mol of its minimum: the RMS difference after the best constant shift.
Writes fes.png (the final free energies and the exact one), error.png (RMS error against time) and
error.csv to --output. After each measurement each run saves a checkpoint, <method>.chk in --output
(the sampler's saveCheckpoint: the Context and the hills or kernels), with its errors so far in
<method>_errors.csv; --restart continues each run from it, up to --steps (give the same other
arguments), and says so. A run without --restart into a folder that holds those checkpoints is
refused (it would overwrite those runs).

    python examples/opes_double_well.py                     # 200,000 steps each, CPU, about 1 minute
    python examples/opes_double_well.py --platform CUDA --steps 1000000
    python examples/opes_double_well.py --steps 400000 --restart   # 200,000 more steps of each
"""

import argparse
import csv
import os
import sys

import numpy as np

import openmm
import openmm.app as app
import openmm.unit as unit

import openmmcoordination as oc
from openmmcoordination import BiasVariable, CoordinationForce, Metadynamics, OPES
from openmmcoordination._examples import (loadCheckpoint, outputFolder, namedPlatform, outputProblem, positiveInteger,
                                           refuse)

TEMPERATURE = 300.0                       # K
A, RC, W = 10.0, 0.35, 0.1                # kJ/mol, nm, nm
R0 = 0.35                                 # nm
GRID = (0.0, 1.0, 101)
BIAS_FACTOR, PACE, WIDTH = 5.0, 100, 0.03
HEIGHT, BARRIER = 1.0, 15.0               # kJ/mol: metadynamics' hills, OPES's barrier
RANGE = 15.0                              # kJ/mol above the minimum: the points compared
KT = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)


def parseArguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CPU', type=namedPlatform, help='CPU (default), CUDA or Reference')
    parser.add_argument('--steps', type=positiveInteger, default=200000, help='steps of 2 fs per method, a multiple of --checkpoint (default 200,000)')
    parser.add_argument('--checkpoint', type=positiveInteger, default=5000, help='steps between error measurements (default 5,000)')
    parser.add_argument('--seed', type=int, default=1, help='random seed (default 1)')
    parser.add_argument('--output', default=os.path.join('output', 'opes_double_well'), type=outputFolder,
                        help='output folder (default output/opes_double_well)')
    parser.add_argument('--restart', action='store_true',
                        help='continue each run from its checkpoint in --output (<method>.chk) up to --steps')
    args = parser.parse_args(argv)
    if args.steps % args.checkpoint:
        parser.error('argument --steps: must be a multiple of --checkpoint (%d steps between measurements), got %d'
                     % (args.checkpoint, args.steps))
    return args


def potential(r):
    return A*((r - RC)**2 - W**2)**2/W**4


def coordination():
    force = CoordinationForce()
    force.setPairs([0], [1], [], [])
    force.setR0(R0)
    return force


def buildSystem():
    system = openmm.System()
    for _ in range(2):
        system.addParticle(10.0)
    bond = openmm.CustomBondForce('A*((r-rc)^2-w^2)^2/w^4; A=%g; rc=%g; w=%g' % (A, RC, W))
    bond.addBond(0, 1, [])
    system.addForce(bond)
    topology = app.Topology()
    residue = topology.addResidue('DW', topology.addChain())
    for name in ('C0', 'C1'):
        topology.addAtom(name, app.element.carbon, residue)
    return system, topology


def exactFreeEnergy(grid):
    """F(s) at the grid points (kJ/mol, minimum 0): U(r) - 2 kT ln r + kT ln |ds/dr| at r(s)."""
    force = coordination()
    r = np.linspace(0.05, 2.0, 40001)
    s, dsdr = np.array([force.evaluateSwitchingFunction(float(x)) for x in r]).T     # s decreases with r
    radius = np.interp(grid, s[::-1], r[::-1])
    slope = np.interp(grid, s[::-1], dsdr[::-1])
    with np.errstate(divide='ignore'):
        free = potential(radius) - 2*KT*np.log(radius) + KT*np.log(np.abs(slope))
    return free - free[np.isfinite(free)].min()


def rmsError(freeEnergy, exact):
    """RMS of F - F_exact over the points within RANGE of the exact minimum, after the best shift."""
    mask = np.isfinite(exact) & (exact < RANGE)
    difference = freeEnergy[mask] - exact[mask]
    return float(np.sqrt(np.mean((difference - difference.mean())**2)))


def makeMethod(method, system):
    variable = BiasVariable(coordination(), GRID[0], GRID[1], WIDTH, gridWidth=GRID[2])
    if method == 'metadynamics':
        return Metadynamics(system, [variable], TEMPERATURE*unit.kelvin, BIAS_FACTOR, HEIGHT*unit.kilojoules_per_mole, PACE)
    return OPES(system, [variable], TEMPERATURE*unit.kelvin, BARRIER*unit.kilojoules_per_mole, PACE,
                biasFactor=BIAS_FACTOR, sigma=[WIDTH])


def run(method, steps, checkpoint, platform, seed, output=None, restart=False):
    """One run of ``method`` ('metadynamics' or 'opes'): (checkpoint steps, RMS errors, the method).
    With ``output``, saves a checkpoint (output/<method>.chk) and the errors so far
    (output/<method>_errors.csv) at each measurement; ``restart``: continues from them."""
    system, topology = buildSystem()
    sampler = makeMethod(method, system)
    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    properties = {'Threads': '1'} if platform.getName() == 'CPU' else {}
    simulation = app.Simulation(topology, system, integrator, platform, properties)
    simulation.context.setPositions([[0.0, 0.0, 0.0], [0.25, 0.0, 0.0]])
    simulation.context.setVelocitiesToTemperature(TEMPERATURE, seed)
    exact = exactFreeEnergy(np.linspace(*GRID))
    times, errors = [], []
    checkpointFile = None if output is None else os.path.join(output, method + '.chk')
    errorFile = None if output is None else os.path.join(output, method + '_errors.csv')
    if restart:
        loadCheckpoint(sampler, simulation, checkpointFile)
        done = np.loadtxt(errorFile, delimiter=',', skiprows=1, ndmin=2)
        done = done[done[:, 0] <= simulation.currentStep]
        times, errors = [int(t) for t in done[:, 0]], list(done[:, 1])
        print('%s: restarted from %s at step %d' % (method, checkpointFile, simulation.currentStep), flush=True)

    def measure():
        times.append(simulation.currentStep)
        errors.append(rmsError(sampler.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole), exact))
        if output is None:
            return 'RMS error %.2f kJ/mol' % errors[-1]
        sampler.saveCheckpoint(simulation, checkpointFile)
        np.savetxt(errorFile, np.column_stack([times, errors]), delimiter=',', fmt=['%d', '%.6f'],
                   header='step,rms_kJ_per_mol', comments='')
        return 'RMS error %.2f kJ/mol' % errors[-1]
    remaining = steps - simulation.currentStep
    if remaining > 0:
        oc.runWithProgress(method, lambda n: sampler.step(simulation, n), remaining,
                           chunks=max(1, remaining//checkpoint), extra=measure)
    return np.array(times), np.array(errors), sampler


def firstBelow(times, errors, threshold=1.0):
    """The first checkpoint from which the error stays below threshold; None if it does not."""
    above = np.nonzero(errors >= threshold)[0]
    if len(above) == 0:
        return int(times[0])
    return int(times[above[-1] + 1]) if above[-1] + 1 < len(times) else None


def plot(results, path, kind):
    """fes.png: the final free energies against the exact one (openmmcoordination.plots.plotFreeEnergy,
    each curve's minimum at 0, over the CV range where the exact one is within RANGE + 5 kJ/mol of its
    minimum); error.png: the RMS error against time (plotConvergence, on a log scale)."""
    from openmmcoordination.plots import plotConvergence, plotFreeEnergy
    times = next(iter(results.values()))[0]
    if kind != 'fes':
        figure = plotConvergence(times*0.002, np.column_stack([errors for _, errors, _ in results.values()]),
                                 names=list(results), ylabel='RMS error of the free energy (kJ/mol)',
                                 title='Distance to the exact free energy (points within %g kJ/mol of its minimum)' % RANGE)
        from matplotlib.ticker import FormatStrFormatter
        figure.axes[0].set_yscale('log')
        for axis in (figure.axes[0].yaxis.set_major_formatter, figure.axes[0].yaxis.set_minor_formatter):
            axis(FormatStrFormatter('%g'))                                # 0.6, 1, 2 (not 6e-1, 10^0)
        figure.axes[0].axhline(1.0, color='0.5', linestyle=':', linewidth=1)
        figure.savefig(path)
        return
    grid = np.linspace(*GRID)
    exact = exactFreeEnergy(grid)
    shown = grid[np.isfinite(exact) & (exact < RANGE + 5)]
    references = [(grid, sampler.getFreeEnergy(), '%s (RMS error %.2f kJ/mol)' % (method, errors[-1]))
                  for method, (_, errors, sampler) in results.items()]
    plotFreeEnergy(grid, exact, path=path, sampled=(shown.min(), shown.max()),
                   references=references, label='exact', xlabel='CV: coordination s(r), r0 = %.2f nm' % R0,
                   title='Double well: free energy after %d steps (%g ps) per method' % (times[-1], times[-1]*0.002))


def main(argv=None):
    args = parseArguments(argv)
    platform = openmm.Platform.getPlatformByName(args.platform)
    checkpoints = [method + '.chk' for method in ('metadynamics', 'opes')]
    problem = outputProblem(args.output, args.restart, checkpoints + [method + '_errors.csv' for method in ('metadynamics', 'opes')],
                            checkpoints)
    if problem:
        refuse(problem)
    os.makedirs(args.output, exist_ok=True)
    print('openmm-coordination %s, OpenMM %s, platform %s, %d steps per method' % (
        oc.__version__, openmm.__version__, platform.getName(), args.steps), flush=True)
    results = {method: run(method, args.steps, args.checkpoint, platform, args.seed, args.output, args.restart)
               for method in ('metadynamics', 'opes')}
    with open(os.path.join(args.output, 'error.csv'), 'w', newline='') as out:
        writer = csv.writer(out)
        writer.writerow(['step', 'time_ps', 'metadynamics_rms_kJ_per_mol', 'opes_rms_kJ_per_mol'])
        times = results['opes'][0]
        for i, step in enumerate(times):
            writer.writerow([int(step), '%g' % (step*0.002), '%.4f' % results['metadynamics'][1][i], '%.4f' % results['opes'][1][i]])
    for method, (times, errors, _) in results.items():
        reached = firstBelow(times, errors)
        print('%-12s final RMS error %.2f kJ/mol; below 1 kJ/mol from step %s' % (
            method, errors[-1], 'never' if reached is None else reached), flush=True)
    plot(results, os.path.join(args.output, 'fes.png'), 'fes')
    plot(results, os.path.join(args.output, 'error.png'), 'error')
    print('wrote %s' % ', '.join(os.path.join(args.output, name) for name in ('fes.png', 'error.png', 'error.csv')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
