"""MD overhead of well-tempered metadynamics on one coordination number: the GPU-resident
openmmcoordination.Metadynamics (the bias is the table of a CoordinationBiasForce) against
openmm.app.metadynamics.Metadynamics over CustomCVForce (the peer), on a PME water box.

Cases (same system, same platform, same process):
- plain: the water box alone
- ours: openmmcoordination.Metadynamics, CV = O(0) vs every other O
- peer, our CV: openmm.app Metadynamics with the same CoordinationForce inside CustomCVForce
- peer, CustomNonbondedForce: openmm.app Metadynamics with 1/(1+(r/r0)^6) as a CustomNonbondedForce
  with an interaction group and a periodic cutoff (what OpenMM alone offers)

Protocol: warm-up, then the median of 3 repeats of metadynamics
step(N >= 1000) (hills included, one every --frequency steps), synchronized by getState(getEnergy)
at each end. Before timing, the platform's CV is checked against the Reference platform.

    python benchmarks/bench_metadynamics.py --platform CUDA --precision mixed --json metad.json
    python benchmarks/bench_metadynamics.py --platform CPU --quick          # smoke test, tiny sizes

run(platform, precision, quick) returns the rows for benchmarks/benchmark.py.
"""

import argparse
import json
import statistics
import sys
import time

import openmm as mm
import openmm.app as app
import openmm.app.metadynamics as peer
import openmm.unit as unit

from openmmcoordination import CoordinationForce
from openmmcoordination.metadynamics import Metadynamics

R0 = 0.3              # nm


def waterBox(numWaters):
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    modeller = app.Modeller(app.Topology(), [])
    modeller.addSolvent(forcefield, model='tip3p', numAdded=numWaters)
    edge = min(modeller.topology.getPeriodicBoxVectors()[i][i].value_in_unit(unit.nanometer) for i in range(3))
    cutoff = min(0.9, 0.5*edge - 0.01)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=cutoff*unit.nanometer,
                                     constraints=app.HBonds, rigidWater=True)
    oxygens = [atom.index for atom in modeller.topology.atoms() if atom.element == app.element.oxygen]
    return modeller, system, oxygens, edge


def ourCV(oxygens, dmax):
    force = CoordinationForce(oxygens[:1], oxygens[1:])
    force.setR0(R0)
    force.setDMax(dmax)
    force.setUsesPeriodicBoundaryConditions(True)
    return force


def customNonbondedCV(numParticles, oxygens, dmax):
    # The same stretched function as ourCV: (s(r) - s(dmax))/(1 - s(dmax)), s = 1/(1+(r/r0)^6).
    sdmax = 1/(1 + (dmax/R0)**6)
    force = mm.CustomNonbondedForce('(1/(1+(r/r0)^6) - sd)/(1 - sd)')
    force.addGlobalParameter('r0', R0)
    force.addGlobalParameter('sd', sdmax)
    for _ in range(numParticles):
        force.addParticle([])
    force.addInteractionGroup(oxygens[:1], oxygens[1:])
    force.setNonbondedMethod(mm.CustomNonbondedForce.CutoffPeriodic)
    force.setCutoffDistance(dmax)
    return force


def cvValue(system, force, positions, platform, properties):
    """The value of a CV force alone (a System of bare particles in the same box) on a platform."""
    bare = mm.System()
    for i in range(system.getNumParticles()):
        bare.addParticle(system.getParticleMass(i))
    bare.setDefaultPeriodicBoxVectors(*system.getDefaultPeriodicBoxVectors())
    bare.addForce(mm.XmlSerializer.clone(force))
    context = mm.Context(bare, mm.VerletIntegrator(0.001), platform, properties)
    context.setPositions(positions)
    value = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    del context
    return value


def checkCV(modeller, system, oxygens, dmax, platform, properties):
    """Our CV on the platform and the CustomNonbondedForce peer against our CV on the Reference platform."""
    reference = cvValue(system, ourCV(oxygens, dmax), modeller.positions, mm.Platform.getPlatformByName('Reference'), {})
    checks = [('ours on ' + platform.getName(), cvValue(system, ourCV(oxygens, dmax), modeller.positions, platform, properties)),
              ('CustomNonbondedForce on ' + platform.getName(),
               cvValue(system, customNonbondedCV(system.getNumParticles(), oxygens, dmax), modeller.positions, platform,
                       properties))]
    for name, value in checks:
        if abs(value - reference) > 1e-4*max(1.0, abs(reference)):
            raise RuntimeError('CV %s (%g) differs from ours on Reference (%g)' % (name, value, reference))
    return reference


def timeCase(kind, modeller, system, oxygens, dmax, platform, properties, steps, repeats, frequency):
    system = mm.XmlSerializer.clone(system)
    meta = None
    if kind != 'plain':
        if kind == 'ours' or kind == 'peer-ours':
            cv = ourCV(oxygens, dmax)
        else:
            cv = customNonbondedCV(system.getNumParticles(), oxygens, dmax)
        variable = peer.BiasVariable(cv, 0.0, 20.0, 0.2, gridWidth=401)
        cls = Metadynamics if kind == 'ours' else peer.Metadynamics
        meta = cls(system, [variable], 300*unit.kelvin, 10.0, 1.0*unit.kilojoules_per_mole, frequency)
    integrator = mm.LangevinMiddleIntegrator(300*unit.kelvin, 1/unit.picosecond, 2*unit.femtoseconds)
    integrator.setRandomNumberSeed(1)
    simulation = app.Simulation(modeller.topology, system, integrator, platform, properties)
    simulation.context.setPositions(modeller.positions)
    simulation.context.setVelocitiesToTemperature(300*unit.kelvin, 1)
    advance = simulation.step if meta is None else (lambda n: meta.step(simulation, n))
    advance(max(2*frequency, steps//5))  # warm-up, including hills

    times = []
    for _ in range(repeats):
        simulation.context.getState(getEnergy=True)
        start = time.perf_counter()
        advance(steps)
        simulation.context.getState(getEnergy=True)
        times.append(time.perf_counter() - start)
    hills = 0 if meta is None else len(meta.getHillHeights()) if hasattr(meta, 'getHillHeights') else None
    return 1000*statistics.median(times)/steps, hills


CASES = [('plain', 'plain MD (water box, PME)'),
         ('ours', 'metadynamics, ours: CoordinationBiasForce table bias (1 O vs the other O, dmax %.2f nm)'),
         ('peer-ours', 'metadynamics, openmm.app peer: CustomCVForce over our CoordinationForce'),
         ('peer-custom', 'metadynamics, openmm.app peer: CustomCVForce over CustomNonbondedForce')]


def run(platform='CUDA', precision='mixed', quick=False, numWaters=None, steps=None, repeats=3, frequency=None,
        cases=None):
    """Time the cases; returns a list of rows (dicts) as benchmarks/benchmark.py prints them."""
    numWaters = numWaters or (200 if quick else 8000)
    steps = steps or (100 if quick else 2000)
    frequency = frequency or (50 if quick else 500)
    platform = mm.Platform.getPlatformByName(platform) if isinstance(platform, str) else platform
    properties = {'Precision': precision} if platform.getName() in ('CUDA', 'OpenCL', 'HIP') else {}
    modeller, system, oxygens, edge = waterBox(numWaters)
    dmax = min(1.0, 0.5*edge - 0.01)
    cv = checkCV(modeller, system, oxygens, dmax, platform, properties)
    rows = []
    plain = None
    for kind, label in CASES:
        if cases is not None and kind not in cases and kind != 'plain':
            continue
        msPerStep, hills = timeCase(kind, modeller, system, oxygens, dmax, platform, properties, steps, repeats, frequency)
        row = {'section': 'metadynamics', 'case': label % dmax if '%' in label else label, 'kind': kind,
               'ms_per_step': msPerStep, 'atoms': system.getNumParticles(), 'waters': len(oxygens), 'steps': steps,
               'repeats': repeats, 'hill_frequency': frequency, 'initial_cv': cv, 'platform': platform.getName(),
               'precision': precision if properties else None}
        if kind == 'plain':
            plain = msPerStep
        elif plain is not None:
            row['overhead_percent'] = 100*(msPerStep/plain - 1)
        rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='mixed', choices=['single', 'mixed', 'double'])
    parser.add_argument('--waters', type=int, help='water molecules (default 8000; 200 with --quick)')
    parser.add_argument('--steps', type=int, help='steps per timed repeat (default 2000; 100 with --quick)')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--frequency', type=int, help='steps between hills (default 500; 50 with --quick)')
    parser.add_argument('--quick', action='store_true', help='tiny sizes, for a smoke test without a GPU')
    parser.add_argument('--json', help='write the results here')
    args = parser.parse_args(argv)
    rows = run(args.platform, args.precision, args.quick, args.waters, args.steps, args.repeats, args.frequency)
    info = {'openmm': mm.Platform.getOpenMMVersion(), 'platform': args.platform,
            'precision': args.precision if args.platform in ('CUDA', 'OpenCL', 'HIP') else None}
    try:
        import subprocess
        info['gpu'] = subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version', '--format=csv,noheader'],
                                     capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        info['gpu'] = None
    print(json.dumps(info))
    for row in rows:
        overhead = '' if 'overhead_percent' not in row else '  overhead %+.1f%%' % row['overhead_percent']
        print('%-85s %8.4f ms/step%s' % (row['case'], row['ms_per_step'], overhead), flush=True)
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'info': info, 'rows': rows}, out, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
