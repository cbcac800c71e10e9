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
