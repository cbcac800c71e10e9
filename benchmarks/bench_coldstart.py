"""The cost the force adds to the start of a simulation: the time to create a CUDA Context and
evaluate energy and forces once, for the benchmark's PME water box with one CV against the same
box without it, each in a fresh process.

Cold: the force's kernels are not in OpenMM's compiled-kernel cache (OPENMM_CACHE_DIR), so they
are compiled. To keep OpenMM's own compile time (several seconds, and not ours) out of the
difference, the cache first receives the kernels of the box without the force (a fresh process
with an empty cache), and a copy of it serves each configuration: the added cold time is the
first Context with the force minus the plain box's Context in that cache. Warm: the same
configuration again, its kernels now cached. Each configuration (which decides the kernels the
force compiles) is a row, in every precision. The first pair histogram compiles its own kernels:
its time is reported beside.

    python benchmarks/bench_coldstart.py [--platform CUDA] [--json out.json]

(also the section `coldstart` of benchmark.py).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import openmm as mm

from common import water_box

# What one fresh process measures: a Context of the water box with or without one CV, its first
# evaluation, and the first histogram. Printed as JSON on the last line.
CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import openmm as mm
from common import CUTOFF, rational_cv
from openmmcoordination import CoordinationForce
platformName, precision, case, boxFiles = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
with open(boxFiles+'.xml') as xml:
    system = mm.XmlSerializer.deserialize(xml.read())
positions = np.load(boxFiles+'.npy')
oxygens = [i for i in range(system.getNumParticles()) if system.getParticleMass(i).value_in_unit(mm.unit.dalton) > 10]
force = None
if case == 'tiles':
    force = rational_cv(oxygens[:100], oxygens[100:])
elif case == 'lists':
    force = rational_cv(oxygens, dmax=CUTOFF, periodic=True)
elif case == 'cells':
    half = len(oxygens)//2
    force = rational_cv(oxygens[:half], oxygens[half:], dmax=CUTOFF, periodic=True)
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', 10.0)
    force.addGlobalParameter('cv0', 50.0)
elif case == 'pairs':
    force = CoordinationForce(oxygens[:50], oxygens[50:100], True)
    force.setR0(0.3)
if force is not None:
    system.addForce(force)
platform = mm.Platform.getPlatformByName(platformName)
properties = {'Precision': precision} if platformName in ('CUDA', 'OpenCL') else {}
start = time.perf_counter()
context = mm.Context(system, mm.VerletIntegrator(0.001), platform, properties)
context.setPositions(positions)
created = time.perf_counter()
context.getState(getEnergy=True, getForces=True)
evaluated = time.perf_counter()
histogram = None
if force is not None:
    force.getPairHistogram(context, 100, 0.8)
    histogram = time.perf_counter()-evaluated
print(json.dumps({'context_s': created-start, 'first_evaluation_s': evaluated-start, 'histogram_s': histogram}))
'''

CASES = {'tiles': '100 O vs the other O, no cutoff (tiles)',
         'lists': 'self, all O, dmax 1 nm (neighbour lists)',
         'cells': 'half the O vs the other half, dmax 1 nm, restraint (cells, chain rule)',
         'pairs': '50-pair list (pairs)'}


def measure(platform, precision, case, boxFiles, cacheDir):
    """One fresh process; its timings (s)."""
    environment = dict(os.environ, OPENMM_CACHE_DIR=cacheDir)
    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run([sys.executable, '-c', CHILD, here, platform, precision, case, boxFiles], env=environment,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError('bench_coldstart: the %s case (%s) failed:\n%s' % (case, precision, result.stderr))
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(platform='CUDA', precisions=('single', 'mixed', 'double'), numWaters=8000, quick=False):
    """Rows of the section `coldstart`: per precision and configuration, the seconds the force adds
    to a first Context and evaluation, cold and warm."""
    if quick:
        numWaters, precisions = 200, precisions[:1]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        boxFiles = os.path.join(scratch, 'box')
        system, positions, _ = water_box(numWaters)
        with open(boxFiles+'.xml', 'w') as xml:
            xml.write(mm.XmlSerializer.serialize(system))
        np.save(boxFiles+'.npy', np.array([p.value_in_unit(mm.unit.nanometer) for p in positions]))
        for precision in precisions:
            openmmCache = os.path.join(scratch, 'openmm-'+precision)
            os.mkdir(openmmCache)
            fresh = measure(platform, precision, 'none', boxFiles, openmmCache)
            plain = measure(platform, precision, 'none', boxFiles, openmmCache)
            for case, name in CASES.items():
                cache = os.path.join(scratch, case+'-'+precision)
                shutil.copytree(openmmCache, cache)
                cold = measure(platform, precision, case, boxFiles, cache)
                warm = measure(platform, precision, case, boxFiles, cache)
                row = {'section': 'coldstart', 'case': name, 'precision': precision, 'waters': numWaters,
                       'plain_fresh_cache_s': fresh['first_evaluation_s'], 'plain_s': plain['first_evaluation_s'],
                       'cold_s': cold['first_evaluation_s'], 'added_cold_s': cold['first_evaluation_s']-plain['first_evaluation_s'],
                       'warm_s': warm['first_evaluation_s'], 'added_warm_s': warm['first_evaluation_s']-plain['first_evaluation_s'],
                       'first_histogram_cold_s': cold['histogram_s'], 'first_histogram_warm_s': warm['histogram_s'],
                       'note': 'seconds to create a Context and evaluate energy and forces once, each in a fresh process: with '
                               'the force, its kernels not cached (cold) or cached (warm), minus the plain box with OpenMM\'s '
                               'kernels cached; plain_fresh_cache_s: the plain box with an empty cache'}
                rows.append(row)
                print('coldstart   %-7s %-62s adds %.2f s cold, %.3f s warm (plain box %.2f s, %.2f s with an empty cache); '
                      'first histogram %.2f s' % (precision, name, row['added_cold_s'], row['added_warm_s'], row['plain_s'],
                                                   row['plain_fresh_cache_s'], row['first_histogram_cold_s']), flush=True)
    return rows


def section(platform, options):
    """The rows of the section for benchmark.py's options (platform, precision or coldstart_precisions, quick)."""
    precisions = (options.coldstart_precisions or options.precision).split(',')
    return run(platform=options.platform, precisions=precisions, quick=options.quick)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precisions', default='single,mixed,double')
    parser.add_argument('--waters', type=int, default=8000)
    parser.add_argument('--quick', action='store_true', help='a small box, one precision, once')
    parser.add_argument('--json', help='write the rows here')
    args = parser.parse_args()
    rows = run(args.platform, args.precisions.split(','), args.waters, args.quick)
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'rows': rows}, out, indent=1)


if __name__ == '__main__':
    main()
