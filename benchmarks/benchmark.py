"""Benchmark openmm-coordination side by side with the peers a user has today.

Every row times our force and its peer in the same process, on the same platform, and reports
the ratio. Each result (CV or energy, forces) is checked against the peer before it is timed;
times are medians over repeats after a warm-up; MD Contexts are timed in turn, round after round
in alternating order, and an overhead is the median over rounds of the ratio to the plain box.
Prints a table and writes JSON naming the GPU, OpenMM's version and the precision.

    python benchmarks/benchmark.py --platform CUDA --precision mixed --json results.json
    python benchmarks/report.py results.json                        # docs/performance.md and its plots
    python benchmarks/benchmark.py --platform CPU --quick          # a smoke test without a GPU

Sections (--sections, default all, in this order; each is a module bench_<name>.py, with its own
docstring, over the helpers of common.py; SECTIONS below lists them):

md: MD step time of a PME water box of 23,682 atoms with coordination CVs of its oxygens against
  their peers (restraints of one and two CVs, our CV inside CustomCVForce, metadynamics of one, two
  and three CVs, openmm.app's metadynamics over our CVs, OPES, the per-atom coordination of all O
  with MoreThan, which has no peer; --md-cases selects), every case in
  one interleaved run against the same plain Contexts (bench_md.py). The OPES rows of openmm-opes
  (over our CVs and over the peer's) need that optional package: pip install openmm-opes.
contacts: Q of DHFR's native contacts restrained in MD against a CustomBondForce in CustomCVForce,
  both cases in one interleaved run, and the cost of per-pair values (bench_contacts.py).
throughput: CV + forces evaluations, no cutoff, against CustomNonbondedForce, by getState and inside a
  step of frozen particles (bench_throughput.py).
cutoff: self-coordination of up to a million atoms with a periodic cutoff (cell lists) against
  CustomNonbondedForce with CutoffPeriodic; per evaluation with forces and with the energy alone,
  particles numbered at random or in spatial order; and the per-atom c_i of 100,000 atoms with
  MoreThan against the plain sum of the same atoms, which has no peer (bench_cutoff.py).
latency: a small CV inside a step (bench_latency.py).
histogram: pair histograms against CuPy (bench_histogram.py).
coldstart: what the force adds to a first Context, cold and warm (bench_coldstart.py), in the run's
  precision (--coldstart-precisions for others).
cpu: md's one-CV restraints (1 O, 100 O, all O) on boxes of 5,853 and 23,682 atoms, ours (fast path
  and in CustomCVForce) against the peer, meant for --platform CPU (bench_cpu.py).

The JSON's info records the date, the command, the options, the GPU (its UUID too), and each
section's elapsed seconds (sections_elapsed_s; also printed as the run goes); the JSON is rewritten
after every section, with complete = false until the last. A run cut short (a device call's time
limit) goes on with --resume FILE in a later call on the same GPU with the same options: the
sections it has not finished run, their rows join the file, and info.resumed records when. A full
run (compilation of the kernels on a fresh machine included) is meant to take about 8 minutes on an
H100, so that one run makes the whole of docs/performance.md.
What keeps it there: md and contacts time 5 rounds (--rounds; with 7 the median's error would be
about a fifth smaller, while the larger noise, Contexts that step apart for their lifetime, is met by
the replicas) and share their plain Contexts among their cases; the compatibility path has no
toggled overhead (the page does not show it); the metadynamics of one CV is timed on md's box, in
md's run (not on a box of its own: Modeller.addSolvent(numAdded=...) takes seconds), and openmm.app
over our CV is not timed (the compatibility path gives that figure); throughput and cutoff build each
force's System once (a million particles take seconds in Python) and use one Context per force for
the check, the getState timing and the step timing; the cutoff's step without lists of homes is
timed only with --diagnostics; coldstart runs one precision.
"""

import argparse
import json
import platform as host
import sys
import time

import openmm as mm

import bench_coldstart
import bench_contacts
import bench_cpu
import bench_cutoff
import bench_histogram
import bench_latency
import bench_md
import bench_throughput
import common

# The sections in the order a run takes them: name -> module. A module's section(platform, options)
# returns its rows (dicts) for the parsed command line; a new section is a new bench_*.py and a line here.
# A module may also have missing_inputs(options): why it cannot run (a file it needs is missing), or
# None; main() asks every section of the run before it times anything.
SECTIONS = {
    'md': bench_md,
    'contacts': bench_contacts,
    'throughput': bench_throughput,
    'cutoff': bench_cutoff,
    'latency': bench_latency,
    'histogram': bench_histogram,
    'coldstart': bench_coldstart,
    'cpu': bench_cpu,
}


def describe(platform, precision):
    info = {'openmm': mm.Platform.getOpenMMVersion(), 'platform': platform.getName(), 'precision': precision,
            'host': host.node(), 'python': sys.version.split()[0]}
    try:
        import subprocess
        info['gpu'] = subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version', '--format=csv,noheader'],
                                     capture_output=True, text=True, check=True).stdout.strip()
        info['gpu_uuid'] = subprocess.run(['nvidia-smi', '--query-gpu=uuid', '--format=csv,noheader'],
                                          capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        info['gpu'] = info['gpu_uuid'] = None
    return info


def resumed_run(path, info, options):
    """(info, rows, the sections left) of the run in the JSON at path, to go on with where it is the
    same machine's run (platform, precision, OpenMM, GPU and its UUID) with the same options;
    raises ValueError saying what differs otherwise."""
    with open(path) as source:
        previous = json.load(source)
    recorded = previous.get('info', {})
    for key in ('platform', 'precision', 'openmm', 'gpu', 'gpu_uuid'):
        if recorded.get(key) != info.get(key):
            raise ValueError('--resume: the run in %s has %s %r, this one %r; a run goes on only on the same machine'
                             % (path, key, recorded.get(key), info.get(key)))
    if recorded.get('options') != options:
        changed = sorted(k for k in set(options) | set(recorded.get('options') or {})
                         if (recorded.get('options') or {}).get(k) != options.get(k))
        raise ValueError('--resume: the run in %s was started with other options (%s); give the same ones'
                         % (path, ', '.join('%s %r, not %r' % (k, (recorded.get('options') or {}).get(k), options.get(k))
                                            for k in changed)))
    left = [name for name in recorded['sections'] if name not in recorded.get('sections_elapsed_s', {})]
    return recorded, previous.get('rows', []), left


def print_table(rows):
    for row in rows:
        if 'skipped' in row:
            print('%-11s %-75s not measured: %s' % (row['section'], row['case'][:75], row['skipped']), flush=True)
            continue
        keys = [k for k in ('ms_per_step', 'overhead_percent', 'toggled_overhead_percent', 'ms', 'peer_ms', 'pairs_per_s', 'peer_pairs_per_s',
                            'speedup_vs_peer', 'pairs_per_s_ratio_vs_peer', 'ms_in_step', 'peer_ms_in_step',
                            'speedup_in_step', 'ms_per_evaluation', 'peer_ms_per_evaluation', 'energy_only_ms_per_evaluation',
                            'peer_energy_only_ms_per_evaluation', 'rebuilt_ms_per_evaluation', 'ms_per_evaluation_rebuilt_every_10',
                            'no_lists_ms_per_evaluation', 'plain_ms_per_evaluation', 'per_atom_over_plain',
                            'plain_energy_only_ms_per_evaluation', 'energy_only_over_plain', 'numbers_per_s',
                            'us_per_evaluation', 'plain_replica_spread_percent', 'pairs',
                            'added_cold_s', 'added_warm_s')
                if row.get(k) is not None]
        values = '  '.join('%s=%.4g' % (k, row[k]) for k in keys)
        print('%-11s %-75s %s' % (row['section'], row['case'][:75], values), flush=True)



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='mixed', choices=['single', 'mixed', 'double'])
    parser.add_argument('--sections', default=','.join(SECTIONS), help='default: all, %(default)s')
    parser.add_argument('--md-cases', default=','.join(bench_md.MD_GROUPS),
                        help='the cases of the md section, run together: restraint (one CV: 1 O, 100 O, self), restraint2 '
                             '(two CVs), metadynamics (one CV), metadynamics2 (two CVs), metadynamics3 (three CVs), opes2 '
                             '(OPES, two CVs), peratom (MoreThan of the per-atom coordination of all O, no peer); '
                             'default: all')
    parser.add_argument('--rounds', type=int, help='rounds of the interleaved MD runs of md and contacts (default %d; '
                                                    '3 with --quick); each adds about 20 s to md and 8 s to contacts '
                                                    'on an H100 (estimated)' % common.MD_ROUNDS)
    parser.add_argument('--coldstart-precisions', help='precisions of the coldstart section (default: --precision)')
    parser.add_argument('--diagnostics', action='store_true',
                        help='also time what the page does not show (cutoff: our step with the lists of homes off)')
    parser.add_argument('--quick', action='store_true', help='tiny sizes, for a smoke test')
    parser.add_argument('--json', help='write the results here (after every section, so that a run cut short keeps '
                                       'the sections it finished)')
    parser.add_argument('--resume', metavar='JSON',
                        help='go on with the run this JSON holds (cut short in an earlier call): same GPU, same options; '
                             'runs the sections it lacks and writes them into it (or into --json)')
    args = parser.parse_args(argv)
    names = args.sections.split(',')
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        parser.error('unknown section(s) %s; the sections are %s (metadynamics is part of md: --md-cases)'
                     % (', '.join(unknown), ', '.join(SECTIONS)))
    unknown = [name for name in args.md_cases.split(',') if name not in bench_md.MD_GROUPS]
    if unknown:
        parser.error('unknown md case(s) %s; they are %s' % (', '.join(unknown), ', '.join(bench_md.MD_GROUPS)))
    for name in names:
        # A section whose inputs are missing stops the run before anything is timed, not after the others.
        missing = getattr(SECTIONS[name], 'missing_inputs', lambda options: None)(args)
        if missing:
            parser.error('section %s: %s' % (name, missing))
    platform = mm.Platform.getPlatformByName(args.platform)
    info = describe(platform, args.precision)
    now = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    options = {key: value for key, value in vars(args).items() if key not in ('json', 'resume')}
    rows, done = [], 0.0
    if args.resume:
        try:
            info, rows, names = resumed_run(args.resume, info, options)
        except (OSError, ValueError, KeyError) as error:
            parser.error(str(error))
        info['resumed'] = info.get('resumed', []) + [now]
        done = info.get('elapsed_s', 0.0)
        args.json = args.json or args.resume
    else:
        info['date'] = now
        info['command'] = ' '.join(['python', 'benchmarks/benchmark.py'] + (sys.argv[1:] if argv is None else list(argv)))
        info['options'] = options
        info['sections'] = names
        info['sections_elapsed_s'] = {}
        info['complete'] = False
    print(json.dumps(info), flush=True)
    start = time.perf_counter()
    for index, name in enumerate(names):
        print('== %s (%d of %d) starts at %.0f s' % (name, index + 1, len(names), time.perf_counter() - start), flush=True)
        sectionStart = time.perf_counter()
        new = SECTIONS[name].section(platform, args)
        elapsed = time.perf_counter() - sectionStart
        print_table(new)
        rows += new
        info['sections_elapsed_s'][name] = round(elapsed, 1)
        info['elapsed_s'] = round(done + time.perf_counter() - start, 1)
        info['complete'] = index == len(names) - 1
        print('== %s: %d rows in %.0f s (the run so far: %.0f s)' % (name, len(new), elapsed, info['elapsed_s']), flush=True)
        if args.json:
            with open(args.json, 'w') as out:
                json.dump({'info': info, 'rows': rows}, out, indent=1)
    print('== all %d sections in %.0f s: %s' % (len(info['sections']), info.get('elapsed_s', 0), ', '.join(
        '%s %.0f s' % item for item in info['sections_elapsed_s'].items())), flush=True)


if __name__ == '__main__':
    main()
