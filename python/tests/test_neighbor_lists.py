"""Neighbour lists: with one group, a finite dmax and a periodic box, the CUDA platform keeps a list
of the particles within dmax + skin of each particle (skin a tenth of dmax) and rebuilds the lists
on the GPU only when a particle has moved more than half the skin. One Context must then follow
small moves (lists kept), moves beyond the skin (rebuilt), particles leaving the box, jumps by a
box vector (OpenMM's reordering makes them), a changed box, and lists longer than their first
capacity (clustered particles). Every state is compared with the reference, on every platform; on
CUDA also with the lists off (COORDINATION_NEIGHBOR_LIST=0), rebuilt at every evaluation
(=always), and with one lane a particle instead of several (COORDINATION_LIST_LANES=1).
"""

import numpy as np
import pytest

from test_cell_lists import BOXES, in_box, random_case

DMAX = 0.6
SMALL = 0.01   # nm a component: less than half the skin (0.03 nm) from the last build


@pytest.fixture(params=['default', 'off', 'always', 'one-lane'])
def list_mode(request, monkeypatch):
    variables = {'default': {}, 'off': {'COORDINATION_NEIGHBOR_LIST': '0'}, 'always': {'COORDINATION_NEIGHBOR_LIST': 'always'},
                 'one-lane': {'COORDINATION_LIST_LANES': '1'}}[request.param]
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return request.param


def nudge(rng, case, particles, size):
    """Move the particles by up to size a component, then away from kinks by moves as small."""
    case.positions = case.positions.copy()
    case.positions[particles] += rng.uniform(-size, size, (len(particles), 3))
    start = case.positions.copy()
    case.settle(lambda k: start[k] + rng.uniform(-size, size, (len(k), 3)))


@pytest.mark.parametrize('box_name', ['rectangular', 'triclinic'])
def test_lists_follow_moves(platform_config, rng, list_mode, box_name):
    box = BOXES[box_name]
    case = random_case(rng, 'one', 'RATIONAL', DMAX, box, 600)
    everyone = np.arange(len(case.positions))
    context = case.check(platform_config)
    for step in range(3):
        nudge(rng, case, everyone, SMALL/2)
        case.check(platform_config, context)
    # Some particles beyond the skin, some out of the box.
    nudge(rng, case, rng.choice(everyone, 20, replace=False), 0.3)
    case.check(platform_config, context)
    nudge(rng, case, everyone, SMALL/2)
    case.check(platform_config, context)
    # Jumps by box vectors: the same physical state.
    jumpers = rng.choice(everyone, 50, replace=False)
    case.positions = case.positions.copy()
    case.positions[jumpers] += rng.integers(-2, 3, (50, 3)) @ box
    case.check(platform_config, context)
    # A slightly larger box, the positions scaled with it (a barostat's step).
    case.positions, case.box = case.positions*1.01, box*1.01
    nudge(rng, case, everyone, SMALL/10)
    case.check(platform_config, context)


def test_lists_longer_than_their_capacity(platform_config, rng, list_mode):
    """Most particles in a corner of the box: far longer lists than the mean density suggests."""
    box = BOXES['cube5']
    case = random_case(rng, 'one', 'RATIONAL', DMAX, box, 400)
    crowd = np.arange(300)
    case.positions[crowd] = rng.uniform(0.0, 1.2, (len(crowd), 3))
    case.settle(lambda k: in_box(rng, box, len(k)))
    context = case.check(platform_config)
    for step in range(4):
        nudge(rng, case, np.arange(len(case.positions)), SMALL/4)
        case.check(platform_config, context)
