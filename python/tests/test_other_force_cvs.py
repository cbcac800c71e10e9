"""Metadynamics on variables computed by other OpenMM Forces (a CustomTorsionForce) beside coordination
numbers (issue 40, item 5), the slower CustomCVForce path: periodic torsions (periodic=True, -pi to
pi), alone and beside a coordination number, against openmm.app.metadynamics.Metadynamics on the same
seed (where every variable is periodic, the only mix openmm.app takes), against NumPy (the hills
wrapped around the period, the table against SciPy's periodic spline, c(t)) and finite differences;
states and walkers of another mix of variables refused naming both; hills too narrow for the grid.

The comparisons with openmm.app take `host_config` (Reference and CPU: a seeded run is reproducible
in double precision there); the others run on the Reference platform.
"""

import copy
import math
import warnings

import numpy as np
import pytest

import openmm
import openmm.app.metadynamics as peer
from openmm import app, unit

from openmmcoordination import CoordinationForce, CVFunction, DistanceCV
from openmmcoordination.metadynamics import BiasVariable, Metadynamics

from helpers import finite_difference_forces, same_seed

PARTICLES = 7
TEMPERATURE = 300.0
PI = math.pi


def chain():
    """A chain of 7 particles (bonds and angles, no torsion potential: its torsions turn freely) and its Topology."""
    system = openmm.System()
    topology = app.Topology()
    residue = topology.addResidue('CHN', topology.addChain())
    for i in range(PARTICLES):
        system.addParticle(12.0)
        topology.addAtom('C%d' % i, app.element.carbon, residue)
    bonds, angles = openmm.HarmonicBondForce(), openmm.HarmonicAngleForce()
    for i in range(PARTICLES - 1):
        bonds.addBond(i, i + 1, 0.15, 2000.0)
    for i in range(PARTICLES - 2):
        angles.addAngle(i, i + 1, i + 2, 1.9, 100.0)
    bonds.addBond(0, 4, 0.3, 200.0)
    system.addForce(bonds)
    system.addForce(angles)
    return system, topology


def chain_positions():
    p = np.array([[0, 0, 0], [0.15, 0, 0], [0.2, 0.14, 0], [0.35, 0.15, 0.05], [0.3, 0.25, 0.12], [0.2, 0.3, 0.2],
                  [0.1, 0.35, 0.3]])
    return p + np.random.default_rng(3).normal(0, 0.01, p.shape)


def torsion(first=0):
    force = openmm.CustomTorsionForce('theta')
    force.addTorsion(first, first + 1, first + 2, first + 3, [])
    return force


def coordination():
    force = CoordinationForce([0], [3, 4, 5])
    force.setR0(0.3)
    return force


def run(cls, variables, steps, config=None, seed=7, **options):
    system, topology = chain()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)            # the slower path's warning
        meta = cls(system, variables, TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20, **options)
    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    platform = openmm.Platform.getPlatformByName('Reference') if config is None else config.platform()
    properties = {} if config is None else config.properties
    simulation = app.Simulation(topology, system, integrator, platform, properties)
    simulation.context.setPositions(chain_positions())
    simulation.context.setVelocitiesToTemperature(TEMPERATURE, seed)
    meta.step(simulation, steps)
    return meta, simulation


def bias_energy_and_forces(meta, simulation):
    state = simulation.context.getState(getEnergy=True, getForces=True, groups={meta._force.getForceGroup()})
    return (state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole),
            state.getForces(asNumpy=True).value_in_unit(unit.kilojoules_per_mole/unit.nanometer))


def periodic_hills(centers, heights, variables):
    """The hills on the grid in NumPy, as openmm.app lays them down: along a periodic axis the distance to
    the nearest image of the centre in units of the period, the last point (the first again) given the
    first's value; axis 0 of the array is the last variable."""
    axes = []
    for k, v in enumerate(variables):
        t = np.linspace(0.0, 1.0, v.gridWidth)
        x = (centers[:, k, None] - v.minValue)/(v.maxValue - v.minValue)
        distance = np.abs(t[None, :] - x)
        if v.periodic:
            distance = np.abs(t[None, :] - x % 1.0)
            distance = np.minimum(distance, 1.0 - distance)
            distance[:, -1] = distance[:, 0]
        axes.append(np.exp(-0.5*(distance*(v.maxValue - v.minValue)/v.biasWidth)**2))
    total = 0.0
    for n, height in enumerate(heights):
        hill = axes[0][n]
        for axis in axes[1:]:
            hill = np.multiply.outer(axis[n], hill)
        total = total + height*hill
    return total


@same_seed
@pytest.mark.parametrize('dimensions', [1, 2, 3])
def test_periodic_torsions_match_openmm_app(host_config, dimensions):
    """1 to 3 periodic torsions (the whole chain turning, crossing -pi/pi): the same hills, grid, energy and
    forces as openmm.app's Metadynamics with a periodic table, on the same seed (before, periodic=True was
    refused: ValueError 'the bias of this class is not periodic')."""
    def variables():
        return [BiasVariable(torsion(k), -PI, PI, width, True, points)
                for k, width, points in ((0, 0.3, 63), (1, 0.35, 21), (2, 0.35, 17))][:dimensions]
    ours, simulation = run(Metadynamics, variables(), 1000, host_config)
    energy, forces = bias_energy_and_forces(ours, simulation)
    theirs, theirSimulation = run(peer.Metadynamics, variables(), 1000, host_config)
    theirEnergy, theirForces = bias_energy_and_forces(theirs, theirSimulation)
    scale = np.abs(theirs._totalBias).max()
    centers = ours.getHillCenters()
    assert len(centers) == 50 and scale > 3.0
    assert centers.max() > 2.5 and centers.min() < -2.5 and np.all(np.abs(centers) <= PI)   # near the seam
    bias = ours.getBias().value_in_unit(unit.kilojoules_per_mole)
    np.testing.assert_allclose(bias, theirs._totalBias, rtol=0, atol=1e-9*scale)
    np.testing.assert_allclose(ours.getCollectiveVariables(simulation), theirs.getCollectiveVariables(theirSimulation),
                               rtol=0, atol=1e-9)
    assert energy == pytest.approx(theirEnergy, rel=1e-9, abs=1e-9*scale)
    np.testing.assert_allclose(forces, theirForces, rtol=0, atol=1e-8*np.abs(theirForces).max())
    heights = ours.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    np.testing.assert_allclose(bias, periodic_hills(centers, heights, ours.variables), rtol=0, atol=1e-12*scale)


def evaluator(meta):
    """f(values) -> (energy, dE/dvalues) of the bias force's expression and table (a copy) at any CV values:
    a CustomCVForce whose CV k is the x coordinate of particle k."""
    force = openmm.CustomCVForce(meta.force.getEnergyFunction())
    for k in range(len(meta.variables)):
        x = openmm.CustomExternalForce('x')
        x.addParticle(k, [])
        force.addCollectiveVariable('c%d' % (k + 1), x)
    force.addTabulatedFunction('bias', copy.deepcopy(meta.force.getTabulatedFunction(0)))
    system = openmm.System()
    for _ in meta.variables:
        system.addParticle(1.0)
    system.addForce(force)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))

    def evaluate(values):
        context.setPositions([[v, 0.0, 0.0] for v in values])
        state = context.getState(getEnergy=True, getForces=True)
        return (state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole),
                -state.getForces(asNumpy=True).value_in_unit(unit.kilojoules_per_mole/unit.nanometer)[:, 0])
    return evaluate


@pytest.mark.parametrize('dimensions', [2, 3])
def test_periodic_torsion_beside_coordination(dimensions):
    """A periodic torsion beside a coordination number (and a second periodic torsion in 3-D), which
    openmm.app refuses (mixed periodicity): the grid is NumPy's hills wrapped around the period; the bias is
    continuous across -pi/pi (value and slope) and has the period; at the grid points it is the grid; a bias
    constant along the other axes is SciPy's periodic spline along the torsion (1e-9); the forces of the run
    are -dE/dx by finite differences; c(t) sums each grid point once (not the duplicated pi)."""
    from scipy.interpolate import CubicSpline
    variables = [BiasVariable(torsion(0), -PI, PI, 0.3, True, 41), BiasVariable(coordination(), 0.0, 3.0, 0.1, False, 31),
                 BiasVariable(torsion(2), -PI, PI, 0.4, True, 21)][:dimensions]
    meta, simulation = run(Metadynamics, variables, 600)
    centers = meta.getHillCenters()
    heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    bias = meta.getBias().value_in_unit(unit.kilojoules_per_mole)
    assert np.abs(centers[:, 0]).max() > 2.5
    np.testing.assert_allclose(bias, periodic_hills(centers, heights, meta.variables), rtol=0, atol=1e-12)
    evaluate = evaluator(meta)
    grid = meta.getCollectiveVariableGrid()
    rng = np.random.default_rng(5)
    for _ in range(5):
        index = [int(rng.integers(len(axis))) for axis in grid]
        point = [axis[i] for axis, i in zip(grid, index)]
        assert evaluate(point)[0] == pytest.approx(bias[tuple(reversed(index))], rel=1e-10, abs=1e-10)
        point = [rng.uniform(-PI, PI), rng.uniform(0.2, 2.8)] + [rng.uniform(-PI, PI)]*(dimensions - 2)
        inside, slope = evaluate(point)
        for k in [0] + [2]*(dimensions == 3):
            moved = list(point)
            moved[k] += 2*PI
            assert evaluate(moved)[0] == pytest.approx(inside, rel=1e-12, abs=1e-12)
            before, after = list(point), list(point)
            before[k], after[k] = PI - 1e-7, -PI + 1e-7
            (e1, g1), (e2, g2) = evaluate(before), evaluate(after)
            assert e1 == pytest.approx(e2, abs=1e-6) and g1[k] == pytest.approx(g2[k], abs=1e-5)
    # the run's forces: -dE/dx of the bias force (its group alone, on Reference) by central differences
    energy, forces = bias_energy_and_forces(meta, simulation)
    positions = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    system = openmm.System()
    for _ in range(PARTICLES):
        system.addParticle(1.0)
    system.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(meta.force)))
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions)
    assert energy > 0.1
    numeric = finite_difference_forces(context, positions, range(PARTICLES), 1e-6)
    np.testing.assert_allclose(forces, numeric, rtol=0, atol=1e-5*np.abs(forces).max())
    # c(t) of the last hill: the grid points of one period (pi is -pi again)
    kT = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
    unique = bias[(slice(None),)*(dimensions - 1) + (slice(0, -1),)]
    if dimensions == 3:
        unique = unique[:-1]
    expected = kT*np.log(np.sum(np.exp(unique/kT*5/4))/np.sum(np.exp(unique/kT/4)))
    assert meta.getReweightingFactors()[1][-1].value_in_unit(unit.kilojoules_per_mole) == pytest.approx(expected, rel=1e-12)
    # a bias constant along the coordination number (and the second torsion): SciPy's periodic spline
    t = grid[0]
    profile = np.sin(t) + 0.5*np.cos(3*t) + 0.2*np.sin(5*t + 1)
    state = meta.getState()
    state['totalBias'] = np.broadcast_to(profile, bias.shape).copy()
    meta.setState(state)
    evaluate, spline = evaluator(meta), CubicSpline(t, profile, bc_type='periodic')
    for x in np.linspace(-PI, PI, 97):
        value, slope = evaluate([x, 1.3, 0.4][:dimensions])
        assert value == pytest.approx(spline(x), abs=1e-9) and slope[0] == pytest.approx(spline(x, 1), abs=1e-8)


def test_periodic_truncated_hills():
    """PLUMED's truncated hills (truncateHills=True) on a periodic torsion: each height from the exact sum of
    the earlier hills at the nearest images of their centres, the grid their sum (NumPy)."""
    variables = [BiasVariable(torsion(0), -PI, PI, 0.3, True, 63), BiasVariable(coordination(), 0.0, 3.0, 0.1)]
    meta, _ = run(Metadynamics, variables, 1000, truncateHills=True)
    centers = meta.getHillCenters()
    heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    kTDelta = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE*4.0*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
    widths = np.array([0.3, 0.1])

    def hills(points, upTo):
        d = points[:, None, :] - centers[None, :upTo, :]
        d[..., 0] -= 2*PI*np.round(d[..., 0]/(2*PI))
        d2 = 0.5*np.sum((d/widths)**2, axis=2)
        cut = np.where(d2 < 6.25, (np.exp(-np.minimum(d2, 6.25)) - math.exp(-6.25))/(1 - math.exp(-6.25)), 0.0)
        return cut @ heights[:upTo]
    assert np.abs(centers[:, 0]).max() > 2.5
    for n in range(len(heights)):
        assert heights[n] == pytest.approx(1.5*math.exp(-hills(centers[n:n + 1], n)[0]/kTDelta), rel=1e-12)
    t, c = meta.getCollectiveVariableGrid()
    points = np.stack(np.meshgrid(t, c), axis=-1).reshape(-1, 2)
    expected = hills(points, len(heights)).reshape(len(c), len(t))
    expected[:, -1] = expected[:, 0]
    np.testing.assert_allclose(meta.getBias().value_in_unit(unit.kilojoules_per_mole), expected, rtol=0, atol=1e-12)


def test_periodic_state_and_walkers(tmp_path):
    """getState/setState and walkers with a periodic torsion: the settings record which variables are
    periodic, and a state or a walker of the same variables not periodic is refused naming both."""
    def variables(periodic=True):
        return [BiasVariable(torsion(0), -PI, PI, 0.3, periodic, 41), BiasVariable(coordination(), 0.0, 3.0, 0.1)]
    meta, simulation = run(Metadynamics, variables(), 100)
    state = meta.getState()
    assert state['settings']['periodic'] == [True, False]
    system, _ = chain()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        other = Metadynamics(system, variables(False), TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20)
        with pytest.raises(ValueError, match=r"periodic: the state \[True, False\], this object None"):
            other.setState(state)
        Metadynamics(chain()[0], variables(), TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20, 20,
                     str(tmp_path))
        with pytest.raises(ValueError, match=r"other settings \(periodic: the directory \[True, False\], this run None\)"):
            Metadynamics(chain()[0], variables(False), TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20,
                         20, str(tmp_path))
        again = Metadynamics(chain()[0], variables(), TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20)
    again.setState(state)
    np.testing.assert_array_equal(again.getBias()._value, meta.getBias()._value)


# OPES takes periodic torsions too, and refuses the same three: test_opes_periodic.py.
PERIODIC_ERRORS = [
    (Metadynamics, coordination, r"Metadynamics: variables\[0\]\.periodic must be False for a CoordinationForce "
     r"\(periodic=True is for a force whose CV is periodic, such as a CustomTorsionForce\), got True"),
    (Metadynamics, lambda: DistanceCV(0, 1), r"periodic must be False for a DistanceCV"),
    (Metadynamics, lambda: CVFunction('2*t', {'t': torsion()}), r"periodic must be False for a CVFunction"),
]


@pytest.mark.parametrize('cls, force, message', PERIODIC_ERRORS, ids=['coordination', 'distance', 'function'])
def test_periodic_errors(cls, force, message):
    system, _ = chain()
    with pytest.raises(ValueError, match=message):
        cls(system, [BiasVariable(force(), -PI, PI, 0.3, True, 63)], TEMPERATURE*unit.kelvin, 5.0, 1.0, 10)
    assert system.getNumForces() == 2


def test_states_of_another_mix_name_both(tmp_path):
    """A state or walker directory of another mix of variables (a torsion where a coordination number is, a
    DistanceCV of other particles, a CVFunction of another torsion) is refused naming both definitions, not
    every attribute of the CoordinationForce as 'None' or 'variables[0]' alone."""
    def make(first, biasDir=None):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            return Metadynamics(chain()[0], [BiasVariable(first, 0.0, 3.0, 0.1), BiasVariable(torsion(), -PI, PI, 0.3)],
                                TEMPERATURE*unit.kelvin, 5.0, 1.0, 10, None if biasDir is None else 10, biasDir)
    cases = [(torsion(1), coordination(), r"variables\[0\]\.force: the state a CustomTorsionForce, this object a "
              r"CoordinationForce\)"),
             (DistanceCV(0, 3), DistanceCV(0, 4), r"variables\[0\]\.force: the state DistanceCV\(0, 3\), this object "
              r"DistanceCV\(0, 4\)\)"),
             (DistanceCV(0, 3), torsion(1), r"variables\[0\]\.force: the state DistanceCV\(0, 3\), this object a "
              r"CustomTorsionForce\)"),
             (CVFunction('2*t', {'t': torsion(1)}), torsion(1), r"variables\[0\]\.force: the state CVFunction '2\*t' of "
              r"t: a CustomTorsionForce, this object a CustomTorsionForce\)"),
             (CVFunction('2*t', {'t': torsion(1)}), CVFunction('2*t', {'t': torsion(2)}),
              r"variables\[0\]\.force: forces\['t'\]: its Torsions the state <Torsions><Torsion p1=\"1\" p2=\"2\" p3=\"3\" "
              r"p4=\"4\" /></Torsions>, this object <Torsions><Torsion p1=\"2\" p2=\"3\" p3=\"4\" p4=\"5\" /></Torsions>\)")]
    for saved, other, message in cases:
        with pytest.raises(ValueError, match=r'setState: the state is of another run than this object \(collectiveVariables: '
                           + message):
            make(other).setState(make(saved).getState())
    make(torsion(1), str(tmp_path))
    with pytest.raises(ValueError, match=r"other settings \(collectiveVariables: variables\[0\]\.force: the directory a "
                       r"CustomTorsionForce, this run a CoordinationForce\)"):
        make(coordination(), str(tmp_path))


def test_force_group_and_name_do_not_make_another_run(tmp_path):
    """A variable's force evaluated inside the bias force whatever its own group and name: a state or
    walker directory of the same torsion in another force group, with another name, is taken (it was
    refused: 'forceGroup the state 0, this object 3'); one recorded with them, as before, too."""
    def labelled(group, name):
        force = torsion(1)
        force.setForceGroup(group)
        force.setName(name)
        return force

    def make(force, biasDir=None):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            return Metadynamics(chain()[0], [BiasVariable(force, -PI, PI, 0.3, True)], TEMPERATURE*unit.kelvin, 5.0, 1.0,
                                10, None if biasDir is None else 10, biasDir)
    state = make(labelled(0, 'a')).getState()
    make(labelled(3, 'b')).setState(state)
    make(labelled(0, 'a'), str(tmp_path))
    make(labelled(3, 'b'), str(tmp_path))
    with pytest.raises(ValueError, match=r"its Torsions the state"):
        make(torsion(2)).setState(state)


def test_hills_narrower_than_the_grid_warn():
    """A grid spacing larger than half the biasWidth (PLUMED's METAD warns there too) is a RuntimeWarning
    naming the variable, both numbers and the gridWidth that resolves the hills: 10 hills of 1 kJ/mol and
    width 0.01 on a grid of spacing 0.1 left a bias of at most 0.08 kJ/mol, silently. At half the width, none."""
    def make(width, gridWidth):
        return Metadynamics(chain()[0], [BiasVariable(coordination(), 0.0, 3.0, width, False, gridWidth)],
                            TEMPERATURE*unit.kelvin, 5.0, 1.0, 10)
    with pytest.warns(RuntimeWarning, match=r"^Metadynamics: the grid spacing of variables\[0\], 0\.1, is larger than half "
                      r"its biasWidth 0\.01: .* give a gridWidth of at least 601, or a wider biasWidth$"):
        make(0.01, 31)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        make(0.2, 31)
        make(0.01, 601)
