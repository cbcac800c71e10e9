"""The table that ends benchmarks/compare_builds.sh: from the JSON files compare-A-1.json,
compare-B-1.json, ... of a folder (benchmarks/profile_launches.py --json of each run of builds A
and B), each case's overhead over plain in us a step, per run and build, and the median of each
build's runs with B less A.

    python3 benchmarks/compare_builds.py OUT_FOLDER
"""

import json
import os
import re
import sys

import numpy as np


def overheads(results):
    """{case: us a step over plain} of one profile_launches.py --json: with --replicas the median over
    the rounds; else, with --rounds of 2 or more, the median of the differences from the first case
    of each round; else the case's ms a step less the first case's (plain's, by the usual order)."""
    if 'interleaved' in results:
        return {case: value['overhead_us'] for case, value in results['interleaved']['cases'].items()}
    if 'rounds' in results:
        return {case: value['difference_us'] for case, value in list(results['rounds'].items())[1:]}
    cases = list(results)
    if not cases:
        return {}
    first = results[cases[0]]['ms_per_step']
    return {case: 1000 * (results[case]['ms_per_step'] - first) for case in cases[1:]}


def read_runs(folder):
    """{build: [overheads of run 1, run 2, ...]} of the folder's compare-<build>-<run>.json files."""
    runs = {}
    for name in os.listdir(folder):
        match = re.fullmatch(r'compare-([AB])-([0-9]+)\.json', name)
        if match:
            with open(os.path.join(folder, name)) as f:
                runs.setdefault(match.group(1), {})[int(match.group(2))] = overheads(json.load(f))
    return {build: [byRun[run] for run in sorted(byRun)] for build, byRun in runs.items()}


def table(runs):
    """The lines of the table of read_runs()'s result."""
    if set(runs) != {'A', 'B'}:
        raise ValueError('compare_builds.py: runs of builds A and B are needed, found %s' % (sorted(runs) or 'none'))
    cases = list(dict.fromkeys(case for build in 'AB' for run in runs[build] for case in run))
    lines = ['overhead over plain, us a step: each run of build A, then of B; the medians; B less A']
    for case in cases:
        values = {build: [run[case] for run in runs[build] if case in run] for build in 'AB'}
        medians = {build: float(np.median(values[build])) if values[build] else float('nan') for build in 'AB'}
        lines.append('  %-44s A %s  B %s  medians %+7.2f %+7.2f  B-A %+6.2f'
                     % (case, ' '.join('%+7.2f' % v for v in values['A']), ' '.join('%+7.2f' % v for v in values['B']),
                        medians['A'], medians['B'], medians['B'] - medians['A']))
    return lines


if __name__ == '__main__':
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print('\n'.join(table(read_runs(sys.argv[1]))))
