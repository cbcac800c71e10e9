"""The fraction of native contacts Q of DHFR during a short MD run, plotted over time.

Q is Best, Hummer and Eaton's: heavy atoms of residues more than 3 apart within 0.45 nm in the
starting structure, each pair switched by 1/(1 + exp(beta (r - lambda r0))), beta = 50/nm,
lambda = 1.8, weights 1/N (openmmcoordination.contacts.nativeContacts). The force is a
CoordinationForce in pair-list mode, evaluated on the Context's platform (on the GPU with CUDA)
and read with getCollectiveVariableValue. On CUDA the protein, solvated in TIP3P (PME), runs
20 ps; elsewhere the protein alone in vacuum runs 2 ps, so that the CPU is done in about a
minute. A second, sharper Q (lambda = 1.2) shows the thermal breathing of the contacts.

    python examples/native_contacts.py                     # writes output/native_contacts/q.png and q.csv
    python examples/native_contacts.py --platform CPU --steps 500
"""

import argparse
import os

import numpy as np
import openmm
import openmm.app as app
import openmm.unit as unit

from openmmcoordination._examples import inputFile, outputFolder, platformName, positiveInteger
from openmmcoordination.analysis import bestPlatform
from openmmcoordination.contacts import nativeContacts

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PDB = os.path.join(HERE, 'data', 'dhfr_protein.pdb')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--pdb', default=DEFAULT_PDB, type=inputFile, help='the structure (default: DHFR without water, examples/data/dhfr_protein.pdb)')
    parser.add_argument('--platform', default='auto', type=platformName, help='CUDA, CPU, Reference or auto (CUDA when it works, else CPU)')
    parser.add_argument('--steps', type=positiveInteger, help='MD steps of 2 fs (default 10,000 on CUDA, 1,000 otherwise)')
    parser.add_argument('--interval', type=positiveInteger, default=20, help='steps between Q readings (default 20)')
    parser.add_argument('--output', default=os.path.join('output', 'native_contacts'), type=outputFolder,
                        help='output folder (default output/native_contacts)')
    args = parser.parse_args()

    platform = bestPlatform() if args.platform == 'auto' else openmm.Platform.getPlatformByName(args.platform)
    gpu = platform.getName() == 'CUDA'
    steps = args.steps if args.steps is not None else (10000 if gpu else 1000)
    pdb = app.PDBFile(args.pdb)
    model = app.Modeller(pdb.topology, pdb.positions)
    forcefield = app.ForceField('amber99sb.xml', 'tip3p.xml')
    if gpu:
        # Solvated in TIP3P (1 nm of water around the protein) unless the structure has water already.
        if not any(residue.name == 'HOH' for residue in model.topology.residues()):
            model.addSolvent(forcefield, model='tip3p', padding=1.0*unit.nanometer)
        system = forcefield.createSystem(model.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0*unit.nanometer,
                                         constraints=app.HBonds)
    else:
        model.deleteWater()
        system = forcefield.createSystem(model.topology, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)

    # Q and a sharper Q as collective variables that add no energy (energy expression 0), force group 1.
    q = nativeContacts(model.topology, model.positions)
    sharp = nativeContacts(model.topology, model.positions, lambda_=1.2)
    for force in (q, sharp):
        force.setEnergyFunction('0')
        force.setForceGroup(1)
        system.addForce(force)
    print('%d atoms, %d native contacts, platform %s, %d steps' % (system.getNumParticles(), q.getNumPairs(),
                                                                  platform.getName(), steps))

    integrator = openmm.LangevinMiddleIntegrator(300*unit.kelvin, 1/unit.picosecond, 0.002*unit.picoseconds)
    simulation = app.Simulation(model.topology, system, integrator, platform)
    simulation.context.setPositions(model.positions)
    simulation.minimizeEnergy(maxIterations=100)
    simulation.context.setVelocitiesToTemperature(300*unit.kelvin, 1)
    rows = []
    done = 0
    for step in list(range(0, steps, args.interval)) + [steps]:     # the last reading at --steps
        simulation.step(step - done)
        done = step
        rows.append((step*0.002, q.getCollectiveVariableValue(simulation.context), sharp.getCollectiveVariableValue(simulation.context)))
        if step % (50*args.interval) == 0 or step == steps:
            print('t = %7.2f ps   Q = %.4f   Q(lambda 1.2) = %.4f' % rows[-1], flush=True)
    rows = np.array(rows)

    os.makedirs(args.output, exist_ok=True)
    np.savetxt(os.path.join(args.output, 'q.csv'), rows, delimiter=',', header='time_ps,Q,Q_lambda_1.2', comments='')
    from openmmcoordination.plots import plotCollectiveVariable
    figure = plotCollectiveVariable(rows[:, 0], rows[:, 1:], names=['Q (Best-Hummer-Eaton: beta 50/nm, lambda 1.8)',
                                                                    'sharper Q (lambda 1.2)'],
                                    title='DHFR, %d native contacts, %s' % (q.getNumPairs(), 'solvated, CUDA' if gpu else
                                                                            'vacuum, ' + platform.getName()),
                                    ylabel='fraction of native contacts', runningAverage=False)
    figure.axes[0].set_ylim(min(0.5, float(rows[:, 1:].min()) - 0.05), 1.02)
    figure.savefig(os.path.join(args.output, 'q.png'))
    print('wrote %s and %s' % (os.path.join(args.output, 'q.png'), os.path.join(args.output, 'q.csv')))


if __name__ == '__main__':
    main()
