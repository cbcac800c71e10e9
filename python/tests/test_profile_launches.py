"""benchmarks/profile_launches.py's --cases list: cases split at commas, except within a switch's value
that holds them (COORDINATION_CELL_GRID)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'benchmarks'))
import profile_launches  # noqa: E402 (benchmarks/ is not a package)


@pytest.mark.parametrize('text, expected', [
    ('plain,fast-self,peratom', ['plain', 'fast-self', 'peratom']),
    ('plain,fast-self@COORDINATION_CELL_GRID=2,2,1,0,peratom@COORDINATION_NEIGHBOR_LIST=always',
     ['plain', 'fast-self@COORDINATION_CELL_GRID=2,2,1,0', 'peratom@COORDINATION_NEIGHBOR_LIST=always']),
    ('fast-self@COORDINATION_NEIGHBOR_LIST=always@COORDINATION_CELL_GRID=1,1,1,0,latency',
     ['fast-self@COORDINATION_NEIGHBOR_LIST=always@COORDINATION_CELL_GRID=1,1,1,0', 'latency']),
    # A misspelt case after a switch stays a case of its own (main() reports it as unknown), and a
    # number with no switch before it is not glued to anything.
    ('fast-1@COORDINATION_CHAINED_TILES=2,fast-slef', ['fast-1@COORDINATION_CHAINED_TILES=2', 'fast-slef']),
    ('plain,2', ['plain', '2']),
])
def test_split_cases(text, expected):
    assert profile_launches.split_cases(text) == expected


@pytest.mark.parametrize('name, expected', [
    ('fast-1', ('fast-1', {})),
    ('fast-self@COORDINATION_CELL_GRID=2,2,1,0@COORDINATION_LIST_LANES=8',
     ('fast-self', {'COORDINATION_CELL_GRID': '2,2,1,0', 'COORDINATION_LIST_LANES': '8'})),
])
def test_parse_case(name, expected):
    assert profile_launches.parse_case(name) == expected


def test_interleaved_replicas_and_switches():
    """--replicas: the cases timed as the md section times them (Reference, a tiny water box), each
    with its own Contexts and its switches set while they are created (and only then), plain the
    reference of every round; a latency case, which has a System of its own, is refused."""
    import argparse

    import openmm as mm
    from common import adding, water_box

    system, positions, oxygens = water_box(220)
    seen = []

    def probe():
        add = adding(profile_launches.external_force(oxygens[0]))

        def build(system):
            seen.append(os.environ.get('COORDINATION_TEST_PROBE'))
            add(system)
        return build
    cases = {'plain': lambda: None, 'probe': probe}
    args = argparse.Namespace(replicas=2, rounds=2, steps=5, precision='mixed')
    lines = []
    summary = profile_launches.interleaved(['plain', 'probe@COORDINATION_TEST_PROBE=7', 'probe'], cases, system, positions,
                                           mm.Platform.getPlatformByName('Reference'), args, progress=lines.append)
    assert seen == ['7', '7', None, None]
    assert 'COORDINATION_TEST_PROBE' not in os.environ
    assert summary['replicas'] == 2 and summary['plain_ms'] > 0 and summary['plain_replica_spread_percent'] > 0
    assert list(summary['cases']) == ['probe@COORDINATION_TEST_PROBE=7', 'probe']
    for result in summary['cases'].values():
        assert result['ms_per_step'] > 0 and len(result['overhead_per_round_us']) == 2
        assert abs(result['overhead_us'] - 10 * summary['plain_ms'] * result['overhead_percent']) < 1e-6 * summary['plain_ms'] * 1e3
    assert any('probe@COORDINATION_TEST_PROBE=7' in line for line in lines)
    with pytest.raises(ValueError, match='latency'):
        profile_launches.interleaved(['plain', 'latency'], cases, system, positions, mm.Platform.getPlatformByName('Reference'),
                                     args)


def test_compare_builds_table(tmp_path):
    """compare_builds.py's table from profile_launches.py's JSON of each run: with --replicas the
    interleaved overheads, with --rounds the median differences, with one round the ms a step less
    plain's; each build's runs in order, their medians and B less A."""
    import json

    import compare_builds

    def interleaved(overheads):
        return {'interleaved': {'cases': {case: {'overhead_us': value} for case, value in overheads.items()}}}
    files = {'compare-A-1.json': interleaved({'fast-1': 4.0, 'bias-2': 10.0}),
             'compare-A-2.json': interleaved({'fast-1': 6.0, 'bias-2': 12.0}),
             'compare-B-1.json': interleaved({'fast-1': 5.0, 'bias-2': 8.0}),
             'compare-B-2.json': interleaved({'fast-1': 7.0, 'bias-2': 9.0}),
             'other.json': {}}
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    runs = compare_builds.read_runs(str(tmp_path))
    assert runs == {'A': [{'fast-1': 4.0, 'bias-2': 10.0}, {'fast-1': 6.0, 'bias-2': 12.0}],
                    'B': [{'fast-1': 5.0, 'bias-2': 8.0}, {'fast-1': 7.0, 'bias-2': 9.0}]}
    lines = compare_builds.table(runs)
    assert len(lines) == 3
    assert lines[1].split()[0] == 'fast-1' and lines[1].split()[-2:] == ['B-A', '+1.00']
    assert lines[2].split()[0] == 'bias-2' and lines[2].split()[-2:] == ['B-A', '-2.50']
    assert lines[2].split()[1:7] == ['A', '+10.00', '+12.00', 'B', '+8.00', '+9.00']
    rounds = {'plain': {'ms_per_step': 0.17}, 'fast-1': {'ms_per_step': 0.175},
              'rounds': {'plain': {'difference_us': 0.0}, 'fast-1': {'difference_us': 4.5}}}
    assert compare_builds.overheads(rounds) == {'fast-1': 4.5}
    single = {'plain': {'ms_per_step': 0.170}, 'fast-1': {'ms_per_step': 0.175}}
    assert compare_builds.overheads(single) == pytest.approx({'fast-1': 5.0})
    with pytest.raises(ValueError, match='builds A and B'):
        compare_builds.table({'A': runs['A']})
