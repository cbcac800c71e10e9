"""What one MD step of the md section's water box launches and waits for, per way of adding a CV:
the kernels launched (by name, with the host time of each launch in the driver), the host
synchronizations and the host-to-device copies, counted
over a window of steps by the LD_PRELOAD shim cuda_calls.c; and, under Nsight Compute, the GPU
time of each kernel (the shim's NVTX range "window" delimits the same steps).

    gcc -O2 -shared -fPIC -I/usr/local/cuda/include benchmarks/cuda_calls.c -o /tmp/cuda_calls.so -ldl
    LD_PRELOAD=/tmp/cuda_calls.so python3 benchmarks/profile_launches.py --cases all --json counts.json
    LD_PRELOAD=/tmp/cuda_calls.so ncu --nvtx --nvtx-include "window/" --metrics gpu__time_duration.sum \\
        --print-summary per-kernel python3 benchmarks/profile_launches.py --cases fast-1 --steps 20

With --rounds N the cases run in turn N times, each in a new Context (the Contexts' differences, as
large as the plain box's 0.170-0.190 ms on the H100, are then among what the rounds spread over),
and a summary ends the output: each case's median, least and most ms a step, and the median of its
difference from the first case of the same round, e.g. --cases plain,fast-100,fast-100@SWITCH=1
--rounds 10.

With --replicas N (N >= 1) the cases are timed instead as the md section times its rows
(common.interleaved_md), with no counts: every case gets N Contexts, and plain N, all created first
and kept; each round steps every Context --steps steps in turn (the order reversed every other
round), and a case's overhead is the median over the rounds of the mean of its Contexts' times less
plain's, in us a step. Two Contexts of the same System step up to a few percent apart for as long as
they live (a few us here), which a new Context a case and round leaves in the differences; the mean
over N Contexts and the same Contexts in every round take most of it out, e.g. --cases
plain,bias-2,bias-2@SWITCH=1 --replicas 3 --rounds 10 (--steps then defaults to the md section's 2000).

Cases (--cases, comma-separated, or all): plain; fast-1, fast-100, fast-self, fast-1000 (one CV restrained by
its own energy expression); ccv-1, ccv-100, ccv-self, ccv-1000 (our CV inside CustomCVForce, the BiasVariable
path); peer-1, peer-100, peer-self, peer-1000 (CustomNonbondedForce inside CustomCVForce); peratom (the md
section's per-atom case: MoreThan of every O's coordination, restrained); bias-2, bias-3
(CoordinationBiasForce over the 1 O, 100 O and, for 3, 1,000 O CVs, restrained); table-2, table-3 (the same CVs,
their energy a tabulated function as the metadynamics rows' bias, no hills); extern-1 (OpenMM's own smallest force: a
CustomExternalForce on one oxygen, which OpenMM evaluates in the bonded kernel it launches anyway: no launch added,
what a launch-free force costs the step); extern-all (the same on every oxygen: 7,894 entries in the bonded kernel);
bare-1, bare-100, bare-self (the CV as its own energy, no expression: one pair launch with the forces straight, no
chain rule); bare-2 (the 1 O and 100 O CVs as two such forces); latency (1 x 1,000 pairs in a
System of its own, as benchmark.py's latency section). A case may name tuning switches after an
@, as ccv-self@COORDINATION_LIST_KIND=homes (set while its Context is created; a value may hold
commas: fast-self@COORDINATION_CELL_GRID=2,2,1,0,plain is two cases). Each case's
counts are per step, less nothing: subtract plain's (or, for latency, latency-plain's) to get
what the CV adds.
"""

import argparse
import ctypes
import json
import re
import time

import numpy as np
import openmm as mm

from bench_latency import latency_context
from common import CUTOFF, MD_STEPS, MdCase, MdRun, adding, environment_variables, interleaved_md, peer_cv, rational_cv, water_box
from bench_md import GRID_3D, per_atom_cv

COUNT_NAMES = ('launches', 'sync_copies_to_host', 'async_copies_to_host', 'stream_syncs', 'context_syncs', 'event_syncs',
               'copies_to_device')


class CallCounter:
    """The shim's counts (cuda_calls.c), or None where it is not loaded."""

    def __init__(self):
        process = ctypes.CDLL(None)
        self.lib = process if hasattr(process, 'cuda_calls_reset') else None
        if self.lib is not None:
            self.lib.cuda_calls_name.restype = ctypes.c_char_p
            self.lib.cuda_calls_name_nanoseconds.restype = ctypes.c_longlong

    def range(self, start):
        """Open (start) or close the NVTX range "window" (ncu --nvtx --nvtx-include "window/")."""
        if self.lib is not None and start:
            self.lib.cuda_calls_range_push(b'window')
        elif self.lib is not None:
            self.lib.cuda_calls_range_pop()

    def reset(self):
        if self.lib is not None:
            self.lib.cuda_calls_reset()

    def read(self, steps):
        """Counts per step: {name: value}, {kernel: launches} and {kernel: host microseconds a launch,
        in the driver's launch call}."""
        if self.lib is None:
            return None, None, None
        values = (ctypes.c_longlong * len(COUNT_NAMES))()
        self.lib.cuda_calls_counts(values)
        counts = {name: values[i] / steps for i, name in enumerate(COUNT_NAMES)}
        kernels, hostTimes = {}, {}
        launches = ctypes.c_longlong()
        for i in range(self.lib.cuda_calls_num_names()):
            name = self.lib.cuda_calls_name(i, ctypes.byref(launches)).decode()
            if launches.value:
                kernels[name] = launches.value / steps
                hostTimes[name] = 1e-3 * self.lib.cuda_calls_name_nanoseconds(i) / launches.value
        counts['host_syncs'] = counts['sync_copies_to_host'] + counts['stream_syncs'] + counts['context_syncs'] + counts['event_syncs']
        return counts, kernels, hostTimes


def restrained(force, cv0=1.0):
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', 1e-6)     # the restraint's code path, its forces harmless
    force.addGlobalParameter('cv0', cv0)
    return force


def in_cv_force(cv):
    force = mm.CustomCVForce('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', 1e-6)
    force.addGlobalParameter('cv0', 1.0)
    force.addCollectiveVariable('cv', cv)
    return force


def external_force(atom):
    """OpenMM's smallest force: one particle, a linear energy of x (harmless), in OpenMM's bonded kernel (no launch of its own)."""
    force = mm.CustomExternalForce('1e-6*x')
    force.addParticle(atom, [])
    return force


def external_forces(atoms):
    """One CustomExternalForce on every atom given: one entry each in OpenMM's bonded kernel (no launch of its own)."""
    force = mm.CustomExternalForce('1e-6*x')
    for atom in atoms:
        force.addParticle(atom, [])
    return force


def adding_all(forces):
    """A build for MdRun that adds each force, as adding() adds one."""
    builds = [adding(force) for force in forces]

    def build(system):
        for one in builds:
            one(system)
    return build


def bias_force(expression, cvs):
    """A CoordinationBiasForce of `expression` over the CVs, named c1, c2, ..."""
    from openmmcoordination import CoordinationBiasForce
    force = CoordinationBiasForce(expression)
    for i, cv in enumerate(cvs):
        force.addCollectiveVariable('c%d' % (i + 1), cv)
    return force


def bias(cvs):
    force = bias_force(' + '.join('0.5*k*(c%d-1)^2' % (i + 1) for i in range(len(cvs))), cvs)
    force.addGlobalParameter('k', 1e-6)
    return force


#: The md section's metadynamics axes at the water box's starting CVs (bench_md.metadynamics_variables, as its JSON records them).
TABLE_RANGES = ((0.0, 12.0), (397.0, 517.0), (3129.0, 4329.0))


def table_bias(cvs):
    """The md section's metadynamics bias without its hills: bias(c1, ...) of a Continuous2DFunction (121 x 121 points)
    or Continuous3DFunction (GRID_3D points an axis) over the metadynamics rows' ranges, smooth small values."""
    force = bias_force('bias(%s)' % ', '.join('c%d' % (i + 1) for i in range(len(cvs))), cvs)
    points = 121 if len(cvs) == 2 else GRID_3D
    axes = np.meshgrid(*[np.linspace(0, 1, points)] * len(cvs), indexing='ij')
    values = (1e-3 * np.sin(sum((i + 1) * axis for i, axis in enumerate(axes)))).ravel(order='F')
    limits = [limit for pair in TABLE_RANGES[:len(cvs)] for limit in pair]
    table = mm.Continuous2DFunction if len(cvs) == 2 else mm.Continuous3DFunction
    force.addTabulatedFunction('bias', table(*[points] * len(cvs), values, *limits))
    return force


def builds(oxygens, numParticles):
    """{case: a function that gives its build for MdRun (None: the plain box)}, made when asked for."""
    groups = {'1': (oxygens[:1], oxygens[1:]), '100': (oxygens[:100], oxygens[100:]), 'self': (oxygens, None),
              '1000': (oxygens[:1000], oxygens[1000:])}

    def ours(key):
        return rational_cv(*groups[key], CUTOFF, periodic=True)

    def peer(key):
        return peer_cv(numParticles, *groups[key], CUTOFF)
    cases = {'plain': lambda: None}
    for key in ('1', '100', 'self', '1000'):
        cases['fast-' + key] = lambda key=key: adding(restrained(ours(key)))
        cases['ccv-' + key] = lambda key=key: adding(in_cv_force(ours(key)))
        cases['peer-' + key] = lambda key=key: adding(in_cv_force(peer(key)))
    cases['peratom'] = lambda: adding(restrained(per_atom_cv(oxygens)))
    cases['extern-1'] = lambda: adding(external_force(oxygens[0]))
    cases['extern-all'] = lambda: adding(external_forces(oxygens))
    for key in ('1', '100', 'self'):
        cases['bare-' + key] = lambda key=key: adding(ours(key))
    cases['bare-2'] = lambda: adding_all([ours('1'), ours('100')])
    cases['bias-2'] = lambda: adding(bias([ours('1'), ours('100')]))
    cases['bias-3'] = lambda: adding(bias([ours('1'), ours('100'), ours('1000')]))
    cases['table-2'] = lambda: adding(table_bias([ours('1'), ours('100')]))
    cases['table-3'] = lambda: adding(table_bias([ours('1'), ours('100'), ours('1000')]))
    return cases


def measure(step, counter, steps, sync):
    """Counts per step over `steps` steps (after a synchronizing read), and ms per step of a
    separate timed window of 10x the steps."""
    step(max(steps, 200))
    sync()
    counter.reset()
    counter.range(True)
    step(steps)
    counter.range(False)
    counts, kernels, hostTimes = counter.read(steps)
    sync()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        step(10 * steps)
        sync()
        times.append((time.perf_counter() - start) / (10 * steps))
    return counts, kernels, hostTimes, 1000 * float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--cases', default='all')
    parser.add_argument('--steps', type=int,
                        help='steps counted (default 200), or with --replicas the steps of each timing (default %d, '
                             'as the md section)' % MD_STEPS)
    parser.add_argument('--precision', default='mixed')
    parser.add_argument('--platform', default='CUDA', help='CUDA; another platform only to try the script (no counts)')
    parser.add_argument('--waters', type=int, default=8000)
    parser.add_argument('--rounds', type=int, default=1,
                        help='run the cases in turn this many times, each time in a new Context, and end with the '
                             'median, least and most ms a step of each and its median difference from the first case '
                             'of the same round (default 1: no summary)')
    parser.add_argument('--replicas', type=int, default=0,
                        help='N >= 1: time the cases as the md section does, N Contexts each (and of plain), all kept '
                             'and stepped in turn every round, no counts (default 0: a new Context a case and round)')
    parser.add_argument('--json')
    args = parser.parse_args()
    if args.rounds < 1:
        raise ValueError('profile_launches.py: --rounds must be at least 1, not %d' % args.rounds)
    if args.replicas < 0:
        raise ValueError('profile_launches.py: --replicas must be 0 or more, not %d' % args.replicas)
    if args.steps is None:
        args.steps = MD_STEPS if args.replicas > 0 else 200
    platform = mm.Platform.getPlatformByName(args.platform)
    counter = CallCounter()
    system, positions, oxygens = water_box(args.waters)
    cases = builds(oxygens, system.getNumParticles())
    names = list(cases) + ['latency-plain', 'latency'] if args.cases == 'all' else split_cases(args.cases)
    unknown = [name for name in names if name.split('@')[0] not in cases and not name.startswith('latency')]
    if unknown:
        raise ValueError('profile_launches.py: unknown cases %s; known: %s, latency-plain, latency'
                         % (', '.join(unknown), ', '.join(cases)))
    if args.replicas > 0:
        results = {'interleaved': interleaved(names, cases, system, positions, platform, args)}
    else:
        results = {}
        rounds = []
        for round_ in range(args.rounds):
            if args.rounds > 1:
                print('round %d of %d' % (round_ + 1, args.rounds), flush=True)
            rounds.append(run_cases(names, cases, system, positions, platform, args, counter, results))
        if args.rounds > 1:
            results['rounds'] = summarize(names, rounds)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)


def split_cases(text):
    """The cases of a --cases list: its comma-separated parts, where a part that is a number belongs
    to the case before it, as the rest of a switch's value (fast-self@COORDINATION_CELL_GRID=2,2,1,0:
    one case). No case's name is a number, so that a misspelt one stays a case of its own (main()
    reports it)."""
    names = []
    for part in text.split(','):
        if names and '@' in names[-1] and re.fullmatch(r'-?[0-9.]+', part):
            names[-1] += ',' + part
        else:
            names.append(part)
    return names


def parse_case(name):
    """(case, {variable: value}) of a name of --cases: the case and the switches after its @s."""
    case, *switches = name.split('@')
    return case, dict(switch.split('=', 1) for switch in switches)


def interleaved(names, cases, system, positions, platform, args, progress=print):
    """--replicas: the cases timed by common.interleaved_md against plain (args.replicas Contexts of
    each, args.rounds rounds of args.steps steps); prints and returns, for each case, ms a step (the
    median over the rounds of the mean of its Contexts), its overhead over plain in us a step and in
    percent (the median over the rounds), and each round's overhead in us."""
    latency = [name for name in names if parse_case(name)[0].startswith('latency')]
    if latency:
        raise ValueError('profile_launches.py: --replicas times cases of the water box; %s has a System of its own'
                         % ', '.join(latency))
    mdCases = []
    for name in dict.fromkeys(names):
        if name != 'plain':
            case, switches = parse_case(name)
            mdCases.append(MdCase(name, cases[case](), args.replicas, toggled=False, environment=switches))
    results, spread = interleaved_md(system, positions, platform, args.precision, args.steps, args.rounds, mdCases,
                                     args.replicas, progress=progress)
    plain = results['plain']['ms']
    summary = {'replicas': args.replicas, 'rounds': args.rounds, 'steps': args.steps, 'plain_ms': plain,
               'plain_replica_spread_percent': spread, 'cases': {}}
    progress('%d rounds of %d steps, %d Contexts a case: ms a step; overhead over plain (%.4f ms, its Contexts %.2f%% '
             'apart), us a step and percent: the median over the rounds, and its least and most'
             % (args.rounds, args.steps, args.replicas, plain, spread))
    for case in mdCases:
        result = results[case.label]
        perRound = [1000 * plain * (relative - 1) for relative in result['rounds']]
        overhead = 1000 * plain * (result['relative'] - 1)
        summary['cases'][case.label] = {'ms_per_step': result['ms'], 'overhead_us': overhead,
                                        'overhead_percent': 100 * (result['relative'] - 1), 'overhead_per_round_us': perRound}
        progress('  %-40s %.4f  %+7.2f us (%+6.2f to %+6.2f)  %+6.2f%%'
                 % (case.label, result['ms'], overhead, min(perRound), max(perRound), 100 * (result['relative'] - 1)))
    return summary


def run_cases(names, cases, system, positions, platform, args, counter, results):
    """One round: each case in a new Context, its counts and ms a step printed and put in results
    (the last round's stay); returns [(name, ms a step)] of the round, in order."""
    times = []
    for name in names:
        case, switches = parse_case(name)
        if case.startswith('latency'):
            with environment_variables(switches):
                context, integrator = latency_context(platform, args.precision, case == 'latency')
            step = integrator.step
        else:
            run = MdRun(system, positions, platform, args.precision, cases[case](), environment=switches)
            context, step = run.context, run.integrator.step
        counts, kernels, hostTimes, ms = measure(step, counter, args.steps, lambda: context.getState(getEnergy=True))
        results[name] = {'ms_per_step': ms, 'counts_per_step': counts, 'kernels_per_step': kernels,
                         'launch_host_us': hostTimes}
        times.append((name, ms))
        print('%-14s %.4f ms/step' % (name, ms), flush=True)
        if counts:
            print('    ' + ', '.join('%s %.2f' % item for item in counts.items()), flush=True)
            print('    launches a step, host time a launch (in the driver), kernel:', flush=True)
            for kernel, launches in sorted(kernels.items(), key=lambda item: -item[1]):
                print('    %6.2f  %6.2f us  %s' % (launches, hostTimes[kernel], kernel), flush=True)
        del context
    return times


def summarize(names, rounds):
    """Print and return, for each case over the rounds (every time it runs, where it is named more
    than once): ms a step (median, least, most, each run's) and the median of its difference from
    the round's first run (us)."""
    summary = {}
    print('over %d rounds: ms a step (median, least, most); median difference from %s, the first of the same round'
          % (len(rounds), names[0]))
    for name in dict.fromkeys(names):
        ms = [value for times in rounds for label, value in times if label == name]
        difference = float(np.median([1000 * (value - times[0][1]) for times in rounds for label, value in times if label == name]))
        summary[name] = {'ms_per_step': ms, 'median_ms': float(np.median(ms)), 'difference_us': difference}
        print('  %-40s %.4f (%.4f to %.4f)  %+7.2f us' % (name, np.median(ms), min(ms), max(ms), difference), flush=True)
    return summary


if __name__ == '__main__':
    main()
