"""COORDINATION_TEST_SHARD (conftest.py): n runs with k = 1 to n run every collected test once."""

import os
import subprocess
import sys

import pytest

from conftest import parse_shard, shard_of

HERE = os.path.dirname(os.path.abspath(__file__))


def test_parts_cover_every_key_once():
    keys = ['test_a.py::test_%d' % i for i in range(200)] + ['group:huge']
    for n in (1, 2, 3, 7):
        assert all(1 <= shard_of(key, n) <= n for key in keys)
    # the same key, the same part; and two parts of 200 functions are both well filled
    assert [shard_of(key, 3) for key in keys] == [shard_of(key, 3) for key in keys]
    assert 60 < sum(1 for key in keys if shard_of(key, 2) == 1) < 140
    assert parse_shard('2/3') == (2, 3)


@pytest.mark.parametrize('spec', ['0/2', '3/2', '1', 'a/b', '1/0', '-1/2', ''])
def test_bad_spec_is_refused(spec):
    with pytest.raises(ValueError, match='COORDINATION_TEST_SHARD must be k/n .*%r' % spec):
        parse_shard(spec)


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
