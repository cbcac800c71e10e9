"""The errors the test suite measured, per platform configuration and tolerance: what each of
python/tests/helpers.py's PLATFORM_TOLERANCES could be tightened to.

Run the tests with COORDINATION_TEST_ERRORS set to a folder (benchmarks/gpu_suite.sh's pytest
stage does), then

    python benchmarks/test_errors.py FOLDER [--worst 5]

For each configuration (Reference, CPU, CUDA-single, -mixed, -double), kind (forces and
gradients, or values: the comparison's label says which) and tolerance asked (helpers.assert_close's
rtol), it prints how many comparisons there were, the largest error relative to the compared array's
largest entry, its 99th percentile, the largest error as a fraction of the tolerance, and the
comparisons with the largest errors.
"""

import argparse
import collections
import glob
import os
import re

import numpy as np

CONFIGURATIONS = ('CUDA-double', 'CUDA-mixed', 'CUDA-single', 'Reference', 'CPU')


def configuration(test):
    """The platform configuration a test id names (its parameters), or '?'."""
    for name in CONFIGURATIONS:
        if re.search(r'[\[-]%s(?=[\]-])' % re.escape(name), test):
            return name
    return '?'


def kind(what):
    """'forces' where a comparison is of forces or gradients (its label says so), else 'values'."""
    return 'forces' if re.search(r'force|finite|gradient|deriv', what, re.I) else 'values'


def read(folder):
    """(test, what, rtol, relative) of every line of the folder's errors-*.tsv files."""
    rows = []
    paths = sorted(glob.glob(os.path.join(folder, 'errors-*.tsv')))
    if not paths:
        raise SystemExit('test_errors.py: no errors-*.tsv in %s (was COORDINATION_TEST_ERRORS set?)' % folder)
    for path in paths:
        with open(path) as f:
            for line in f:
                parts = line.rstrip('\n').split('\t')
                if len(parts) == 4:
                    rows.append((parts[0], parts[1], float(parts[2]), float(parts[3])))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('folder', help='the folder COORDINATION_TEST_ERRORS named')
    parser.add_argument('--worst', type=int, default=5, help='comparisons listed per tolerance (default 5)')
    args = parser.parse_args()
    groups = collections.defaultdict(list)
    for test, what, rtol, relative in read(args.folder):
        groups[(configuration(test), kind(what), rtol)].append((relative, test, what))
    print('%-12s %-7s %8s %7s %10s %10s %9s' % ('config', 'kind', 'rtol', 'count', 'max', 'p99', 'max/rtol'))
    def order(key):
        return (CONFIGURATIONS.index(key[0]) if key[0] in CONFIGURATIONS else len(CONFIGURATIONS), key[1], key[2])
    for (config, group, rtol) in sorted(groups, key=order):
        rows = sorted(groups[(config, group, rtol)], reverse=True)
        values = np.array([row[0] for row in rows])
        print('%-12s %-7s %8.1g %7d %10.3g %10.3g %9.3g' % (config, group, rtol, len(rows), values.max(),
                                                           np.percentile(values, 99), values.max()/rtol))
        for relative, test, what in rows[:args.worst]:
            print('    %.3g  %s  (%s)' % (relative, test, what))


if __name__ == '__main__':
    main()
