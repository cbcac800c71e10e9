"""Neighbour lists: with one group, a finite dmax and a periodic box, the CUDA platform keeps a list
of the particles within dmax + skin of each particle (skin a tenth of dmax) and rebuilds the lists
on the GPU only when a particle has moved more than half the skin. One Context must then follow
small moves (lists kept), moves beyond the skin (rebuilt), particles leaving the box, jumps by a
box vector (OpenMM's reordering makes them), a changed box, lists longer than their first
capacity (clustered particles), and molecular dynamics past OpenMM's reordering of atoms. Every
state is compared with the reference, on every platform; on CUDA also with the lists off (COORDINATION_NEIGHBOR_LIST=0), rebuilt at every evaluation
(=always), with one lane a particle instead of several (COORDINATION_LIST_LANES=1), with the binning
launched at every evaluation rather than where the host schedules a rebuild (COORDINATION_LIST_SCHEDULE=device;
by default a move beyond the skin makes that evaluation take all pairs), and with the lists of homes
that larger groups get (COORDINATION_LIST_KIND=homes: on home runs and on chunks, kept and rebuilt at
every evaluation).
"""

import numpy as np
import pytest

import openmm
from helpers import assert_close
from openmmcoordination import CoordinationForce
from test_cell_lists import BOXES, in_box, random_case

DMAX = 0.6
SMALL = 0.01   # nm a component: less than half the skin (0.03 nm) from the last build


def set_list_mode(monkeypatch, mode):
    """The lists as a mode asks, on cells of one cell a cutoff (so that these small systems take
    the cell lists, which the cost model would leave for all pairs)."""
    variables = {'default': {}, 'off': {'COORDINATION_NEIGHBOR_LIST': '0'}, 'always': {'COORDINATION_NEIGHBOR_LIST': 'always'},
                 'one-lane': {'COORDINATION_LIST_LANES': '1'}, 'device': {'COORDINATION_LIST_SCHEDULE': 'device'},
                 'homes': {'COORDINATION_LIST_KIND': 'homes'},
                 'homes-chunks': {'COORDINATION_LIST_KIND': 'homes', 'COORDINATION_CELL_GRID': '1,1,1,0'},
                 'homes-always': {'COORDINATION_LIST_KIND': 'homes', 'COORDINATION_NEIGHBOR_LIST': 'always'}}[mode]
    monkeypatch.setenv('COORDINATION_CELL_GRID', '1,1,1,1')
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(params=['default', 'off', 'always', 'one-lane', 'device', 'homes', 'homes-chunks', 'homes-always'])
def list_mode(request, monkeypatch):
    set_list_mode(monkeypatch, request.param)
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


@pytest.mark.parametrize('mode', ['default', 'device', 'off', 'homes'])
def test_lists_in_md_past_reordering(platform_config, monkeypatch, mode):
    """Charged Lennard-Jones particles (PME) and a restraint on the coordination of all of them
    with each other: 300 steps (GPU platforms reorder atoms every 250), then the force's energy,
    forces and CV against the Reference platform at the final positions."""
    set_list_mode(monkeypatch, mode)
    side, spacing = 10, 0.34
    edge = side*spacing
    system = openmm.System()
    system.setDefaultPeriodicBoxVectors(*(openmm.Vec3(*(edge*np.eye(3)[k])) for k in range(3)))
    nonbonded = openmm.NonbondedForce()
    nonbonded.setNonbondedMethod(openmm.NonbondedForce.PME)
    nonbonded.setCutoffDistance(0.9)
    rng = np.random.default_rng(11)
    grid = np.array(np.meshgrid(*(3*[np.arange(side)]), indexing='ij')).reshape(3, -1).T
    positions = grid*spacing + rng.uniform(-0.03, 0.03, grid.shape)
    for k in range(len(positions)):
        system.addParticle(20.0)
        nonbonded.addParticle(0.2 if grid[k].sum() % 2 == 0 else -0.2, 0.3, 0.5)
    system.addForce(nonbonded)
    force = CoordinationForce(list(range(len(positions))))
    force.setR0(0.3)
    force.setDMax(0.6)
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', 1e-4)
    force.addGlobalParameter('cv0', 1000.0)
    force.setForceGroup(1)
    system.addForce(force)
    integrator = openmm.LangevinMiddleIntegrator(300.0, 1.0, 0.002)
    integrator.setRandomNumberSeed(5)
    context = platform_config.context(system, integrator)
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300.0, 7)
    integrator.step(300)
    state = context.getState(getPositions=True, getEnergy=True, getForces=True, groups=1 << 1)
    final = state.getPositions(asNumpy=True).value_in_unit(openmm.unit.nanometer)
    assert np.isfinite(final).all()
    reference = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    reference.setPeriodicBoxVectors(*state.getPeriodicBoxVectors())
    reference.setPositions(final)
    expected = reference.getState(getEnergy=True, getForces=True, groups=1 << 1)
    cv = force.getCollectiveVariableValue(reference)
    assert cv > 500.0
    assert_close(force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv')
    energy = lambda s: s.getPotentialEnergy().value_in_unit(openmm.unit.kilojoule_per_mole)  # noqa: E731
    forces = lambda s: s.getForces(asNumpy=True).value_in_unit(openmm.unit.kilojoule_per_mole/openmm.unit.nanometer)  # noqa: E731
    cv0 = 1000.0
    assert_close(energy(state), energy(expected), 2*platform_config.value_rtol*cv/abs(cv - cv0), 'energy')
    assert_close(forces(state), forces(expected), platform_config.force_rtol + platform_config.value_rtol*cv/abs(cv - cv0), 'forces')
