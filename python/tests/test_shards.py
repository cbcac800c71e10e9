"""COORDINATION_TEST_SHARD (conftest.py): n runs with k = 1 to n run every collected test once."""

import os
import subprocess
import sys

import pytest

from conftest import shard_of

HERE = os.path.dirname(os.path.abspath(__file__))


def test_parts_cover_every_key_once():
    keys = ['test_a.py::test_%d' % i for i in range(200)] + ['group:huge']
    for n in (1, 2, 3, 7):
        parts = [shard_of(key, '1/%d' % n)[0] for key in keys]
        assert all(0 <= part < n for part in parts)
        # every key is kept by exactly one k
        for key, part in zip(keys, parts):
            kept = [k for k in range(1, n + 1) if shard_of(key, '%d/%d' % (k, n))[0] == shard_of(key, '%d/%d' % (k, n))[1]]
            assert kept == [part + 1]
    # two parts of 200 functions are both well filled
    assert 60 < sum(1 for key in keys if shard_of(key, '1/2')[0] == 0) < 140


@pytest.mark.parametrize('spec', ['0/2', '3/2', '1', 'a/b', '1/0', '-1/2', ''])
def test_bad_spec_is_refused(spec):
    with pytest.raises(ValueError, match='COORDINATION_TEST_SHARD must be k/n .*%r' % spec):
        shard_of('key', spec)


def collect(spec):
    """The test ids that pytest collects from test_switching.py with COORDINATION_TEST_SHARD=spec."""
    env = dict(os.environ, COORDINATION_TEST_SHARD=spec)
    if not spec:
        env.pop('COORDINATION_TEST_SHARD')
    run = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider',
                          os.path.join(HERE, 'test_switching.py')], capture_output=True, text=True, env=env, cwd=HERE)
    return run.returncode, [line for line in run.stdout.splitlines() if '::' in line], run.stdout + run.stderr


def test_shards_of_a_file_partition_its_tests():
    status, whole, _ = collect('')
    assert status == 0 and len(whole) > 20
    first, second = collect('1/2')[1], collect('2/2')[1]
    assert first and second
    assert sorted(first + second) == sorted(whole)
    # a test function's parameters stay together
    functions = lambda ids: {i.split('[')[0] for i in ids}  # noqa: E731
    assert not functions(first) & functions(second)


def test_bad_shard_stops_the_run():
    status, _, output = collect('3/2')
    assert status != 0
    assert "COORDINATION_TEST_SHARD must be k/n with 1 <= k <= n (e.g. 1/2), not '3/2'" in output
