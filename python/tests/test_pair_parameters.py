"""Per-pair weights and r0s of a pair list (PLUMED's CONTACTMAP ... SUM) and the Q switching
function, against the NumPy reference (reference_impl.pair_coordination) and finite differences,
on every platform configuration; units, NumPy, updates, serialization and errors."""

import copy
import math

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationForce

import reference_impl as ref
from cases import natural_spline
from helpers import assert_close, energy_and_forces, finite_difference_forces, make_system, random_positions, set_state

SWITCHINGS = {
    'RATIONAL-automatic-dmax': dict(type='RATIONAL'),
    'Q': dict(type='Q', beta=40.0, lambda_=1.6),
    'Q-d0-dmax': dict(type='Q', d0=0.05, dmax=0.9),
    'EXP-dmax-stretch': dict(type='EXP', dmax=0.8),
    'GAUSSIAN-nostretch': dict(type='GAUSSIAN', dmax=0.8, stretch=False),
    'SMAP-d0': dict(type='SMAP', d0=0.04, a=4.0, b=2.0),
}


def random_pair_list(rng, num_particles=30, num_pairs=80):
    a = rng.integers(0, num_particles, num_pairs)
    b = (a + rng.integers(1, num_particles, num_pairs)) % num_particles
    return a, b, rng.uniform(0.0, 2.0, num_pairs), rng.uniform(0.2, 0.5, num_pairs)


@pytest.mark.parametrize('box_kind', ['none', 'rectangular'])
@pytest.mark.parametrize('name', sorted(SWITCHINGS))
def test_values_and_forces(platform_config, rng, name, box_kind):
    switching = ref.Switching(r0=0.3, **SWITCHINGS[name])
    box = None if box_kind == 'none' else np.diag([1.7, 1.8, 1.9])
    a, b, weights, r0s = random_pair_list(rng)
    positions = random_positions(rng, 30, box, size=1.4)
    force = switching.configure(CoordinationForce())
    force.setPairs(a, b, weights, r0s)
    force.setUsesPeriodicBoundaryConditions(box is not None)
    system = make_system(30, box)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions, box)
    cv, gradient = ref.pair_coordination(positions, switching, a, b, weights, r0s, box)
    energy, forces = energy_and_forces(context)
    assert cv > 1.0
    assert_close(energy, cv, platform_config.value_rtol, 'energy')
    assert_close(force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv')
    assert_close(forces, -gradient, platform_config.force_rtol, 'forces')
    particles = [int(a[0]), int(b[0]), int(a[5])]
    numerical = finite_difference_forces(context, positions, particles, platform_config.fd_step, box)
    assert_close(forces[particles], numerical[particles], platform_config.fd_rtol, 'finite differences')


def test_large_pair_list_with_restraint(platform_config, rng):
    """10,000 pairs, Q, a harmonic restraint through the force's own energy expression."""
    n = 2000
    box = np.diag([3.0, 3.0, 3.0])
    positions = random_positions(rng, n, box)
    a = rng.integers(0, n, 10000)
    b = (a + rng.integers(1, n, 10000)) % n
    r0s = ref.distances(positions, a, b, box)*rng.uniform(0.3, 0.7, len(a))
    weights = np.full(len(a), 1.0/len(a))
    force = CoordinationForce()
    force.setPairs(a, b, weights, r0s)
    force.setSwitchingFunction(CoordinationForce.Q)
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyExpression('0.5*k*(cv-q0)^2')
    force.addGlobalParameter('k', 5000.0)
    force.addGlobalParameter('q0', 0.9)
    system = make_system(n, box)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions, box)
    switching = ref.Switching(type='Q', r0=0.3)
    q, gradient = ref.pair_coordination(positions, switching, a, b, weights, r0s, box)
    assert 0.05 < q < 0.95
    energy, forces = energy_and_forces(context)
    assert_close(force.getCollectiveVariableValue(context), q, platform_config.value_rtol, 'Q')
    assert_close(energy, 0.5*5000*(q - 0.9)**2, platform_config.value_rtol*100, 'energy')
    expected = -5000*(q - 0.9)*gradient
    force_rtol = platform_config.force_rtol*10
    if platform_config.name == 'CUDA':
        # On a GPU the chain rule sums dcv/dx in 64-bit fixed point with OpenMM's 2^-32 resolution,
        # one rounding a pair: times dE/dcv = k (q - q0), that bounds the force error even in double
        # precision (here each pair's gradient is small, w = 1e-4, and dE/dcv is large).
        pairs_per_particle = np.bincount(np.concatenate([a, b]), minlength=n).max()
        rounding = abs(5000*(q - 0.9))*2.0**-32*pairs_per_particle
        force_rtol = max(force_rtol, 2*rounding/np.abs(expected).max())
    assert_close(forces, expected, force_rtol, 'forces')


def test_update_parameters_in_context(platform_config, rng):
    a, b, weights, r0s = random_pair_list(rng)
    positions = random_positions(rng, 30)
    force = CoordinationForce()
    force.setPairs(a, b, weights, r0s)
    force.setSwitchingFunction(CoordinationForce.Q)
    system = make_system(30)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions)
    before = force.getCollectiveVariableValue(context)
    new_weights, new_r0s = rng.uniform(0, 1, len(a)), rng.uniform(0.3, 0.6, len(a))
    force.setPairParameters(new_weights, new_r0s)
    force.setBeta(30.0)
    force.setLambda(1.4)
    force.updateParametersInContext(context)
    expected, gradient = ref.pair_coordination(positions, ref.Switching(type='Q', beta=30.0, lambda_=1.4), a, b, new_weights,
                                               new_r0s)
    assert not math.isclose(before, expected, rel_tol=1e-3)
    energy, forces = energy_and_forces(context)
    assert_close(energy, expected, platform_config.value_rtol, 'energy after the update')
    assert_close(forces, -gradient, platform_config.force_rtol, 'forces after the update')


def test_units_numpy_and_defaults(reference_config):
    force = CoordinationForce()
    force.setPairs(np.array([0, 1], dtype=np.int32), np.array([2, 3], dtype=np.int64), None, np.array([3.0, 4.5])*unit.angstrom)
    assert force.getUsesPairParameters()
    assert isinstance(force.getPairWeights(), np.ndarray) and len(force.getPairWeights()) == 0
    r0s = force.getPairR0s()
    assert unit.is_quantity(r0s)
    np.testing.assert_allclose(r0s.value_in_unit(unit.nanometer), [0.3, 0.45], rtol=1e-15)
    force.setPairParameters(weights=[0.25, 0.75])
    np.testing.assert_array_equal(force.getPairWeights(), [0.25, 0.75])
    assert len(force.getPairR0s()) == 0
    force.setBeta(0.4/unit.angstrom)
    assert force.getBeta() == 4.0/unit.nanometer
    force.setLambda(1.5)
    assert force.getLambda() == 1.5
    assert CoordinationForce.Q == 8
    force.setSwitchingFunction(CoordinationForce.Q)
    force.setPairParameters([0.25, 0.75], [0.3, 0.45]*unit.nanometer)
    s, dsdr = force.evaluatePairSwitchingFunction(1, 0.4)
    e = math.exp(4.0*(0.4 - 1.5*0.45))
    assert math.isclose(s, 0.75/(1 + e), rel_tol=1e-14)
    assert math.isclose(dsdr, -0.75*4.0*e/(1 + e)**2, rel_tol=1e-12)
    force.setGroups([0, 1], [2, 3], True)
    assert not force.getUsesPairParameters()


def test_distance_arguments_in_other_units():
    """Quantities are converted as OpenMM's setters of distances convert them; one of another dimension is
    a TypeError naming the method and the argument (it passed before as a number in nm or 1/nm)."""
    force = CoordinationForce([0, 1], [2, 3])
    force.setR0(4.0*unit.angstrom)
    force.setD0(d0=0.5*unit.angstrom)
    force.setDMax(12.0*unit.angstrom)
    force.setBeta(5.0/unit.angstrom)
    assert force.getR0() == 0.4*unit.nanometer and force.getD0() == 0.05*unit.nanometer
    assert math.isclose(force.getDMax().value_in_unit(unit.nanometer), 1.2, rel_tol=1e-15)
    assert force.getBeta() == 50.0/unit.nanometer
    assert force.evaluateSwitchingFunction(5.0*unit.angstrom) == force.evaluateSwitchingFunction(0.5)
    for call, words in [(lambda: force.setR0(0.3*unit.kilojoule_per_mole), 'setR0: r0 must be a number in nanometer'),
                        (lambda: force.setD0(d0=1*unit.kelvin), 'setD0: d0 must'),
                        (lambda: force.setDMax(1*unit.picosecond), 'setDMax: dmax must'),
                        (lambda: force.setBeta(50*unit.nanometer), 'setBeta: beta must be a number in /nanometer'),
                        (lambda: force.evaluateSwitchingFunction(0.3*unit.kilojoule_per_mole), 'evaluateSwitchingFunction: r must'),
                        (lambda: force.evaluatePairSwitchingFunction(0, 1*unit.kelvin), 'evaluatePairSwitchingFunction: r must')]:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value).startswith('CoordinationForce.' + words), str(info.value)
    assert force.getR0() == 0.4*unit.nanometer and force.getBeta() == 50.0/unit.nanometer


def test_serialization_and_copy(reference_config, rng):
    a, b, weights, r0s = random_pair_list(rng, 10, 12)
    force = CoordinationForce()
    force.setPairs(a, b, weights, r0s)
    force.setSwitchingFunction(CoordinationForce.Q)
    force.setBeta(42.0)
    force.setLambda(1.5)
    xml = openmm.XmlSerializer.serialize(force)
    assert 'version="3"' in xml
    assert openmm.XmlSerializer.serialize(openmm.XmlSerializer.deserialize(xml)) == xml
    for clone in (copy.deepcopy(force), copy.copy(force)):
        np.testing.assert_array_equal(clone.getPairWeights(), weights)
        np.testing.assert_array_equal(clone.getPairR0s().value_in_unit(unit.nanometer), r0s)
        assert clone.getSwitchingFunction() == CoordinationForce.Q
        assert clone.getBeta() == 42.0/unit.nanometer and clone.getLambda() == 1.5


@pytest.mark.parametrize('call, text', [
    (lambda f: f.setPairParameters([1.0, float('nan'), 1.0]), 'weights must be non-negative and finite: pair 1 has nan'),
    (lambda f: f.setPairParameters([1.0, -1.0, 1.0]), 'pair 1 has -1'),
    (lambda f: f.setPairParameters(None, [0.3, 0.3, float('nan')]), 'r0s must be positive and finite: pair 2 has nan'),
    (lambda f: f.setPairParameters(None, [0.3, -0.3, 0.3]), 'pair 1 has -0.3'),
    (lambda f: f.setPairParameters([1.0, 1.0]), 'weights must have one value per pair (3 pairs), got 2'),
    (lambda f: f.setPairParameters(None, [0.3]*4), 'r0s must have one value per pair (3 pairs), got 4'),
    (lambda f: f.setBeta(0.0), 'beta (Q) must be positive and finite, got 0'),
    (lambda f: f.setBeta(-5.0), 'beta (Q) must be positive and finite, got -5'),
    (lambda f: f.setLambda(0.0), 'lambda (Q) must be positive and finite, got 0'),
    (lambda f: f.setLambda(float('nan')), 'lambda (Q) must be positive and finite, got nan'),
])
def test_errors(call, text):
    force = CoordinationForce([0, 1, 2], [3, 4, 5], True)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce') as error:
        call(force)
    assert text in str(error.value)
    assert not force.getUsesPairParameters()


def test_type_errors():
    force = CoordinationForce([0, 1], [2, 3], True)
    with pytest.raises(TypeError, match='weights must be plain numbers'):
        force.setPairParameters([1, 1]*unit.nanometer)
    with pytest.raises(TypeError, match='r0s must be a sequence of numbers'):
        force.setPairParameters(None, ['a', 'b'])
    with pytest.raises(openmm.OpenMMException, match='pair-list mode'):
        CoordinationForce([0, 1], [2, 3]).setPairParameters([1.0]*4)


def test_metadynamics_on_q_with_per_pair_values(platform_config, rng):
    """GPU-resident metadynamics biases a Q with per-pair weights and r0s: the CV of the bias force
    keeps them, and the bias energy is OpenMM's spline of the grid (NumPy's natural_spline) at the
    CV that the original force gives."""
    from openmm import app
    from openmmcoordination.metadynamics import BiasVariable, Metadynamics
    n = 40
    positions = random_positions(rng, n, size=1.2)
    a, b, weights, r0s = random_pair_list(rng, n, 60)
    weights = weights/weights.sum()
    q = CoordinationForce()
    q.setPairs(a, b, weights, r0s)
    q.setSwitchingFunction(CoordinationForce.Q)
    q.setBeta(30.0)
    system = make_system(n)
    trap = openmm.CustomExternalForce('5*((x-0.6)^2+(y-0.6)^2+(z-0.6)^2)')   # keeps the particles together
    for i in range(n):
        trap.addParticle(i)
    system.addForce(trap)
    meta = Metadynamics(system, [BiasVariable(q, 0.0, 1.0, 0.05, gridWidth=51)], 300*unit.kelvin, 5.0,
                        1.0*unit.kilojoules_per_mole, 20)
    cv = meta.force.getCollectiveVariable(0)
    np.testing.assert_array_equal(cv.getPairWeights(), q.getPairWeights())
    np.testing.assert_array_equal(cv.getPairR0s().value_in_unit(unit.nanometer), q.getPairR0s().value_in_unit(unit.nanometer))
    assert cv.getSwitchingFunction() == CoordinationForce.Q and cv.getBeta() == q.getBeta()
    integrator = openmm.LangevinMiddleIntegrator(300, 5.0, 0.001)
    integrator.setRandomNumberSeed(3)
    simulation = app.Simulation(None, system, integrator, platform_config.platform(), dict(platform_config.properties))
    simulation.context.setPositions(positions)
    meta.step(simulation, 200)
    assert len(meta.getHillHeights()) == 10
    state = simulation.context.getState(getPositions=True, getEnergy=True, groups={meta.force.getForceGroup()})
    value = meta.getCollectiveVariables(simulation)[0]
    xyz = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    expected_cv = float(np.sum(weights/(1 + np.exp(30.0*(ref.distances(xyz, a, b, None) - 1.8*r0s)))))
    assert_close(value, expected_cv, platform_config.value_rtol, 'Q')
    values, _, _ = meta.force.getTabulatedFunction(0).getFunctionParameters()
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    assert max(values) > 0.5
    spline = natural_spline(meta.getCollectiveVariableGrid()[0], values)[0]
    assert_close(energy, spline(expected_cv), platform_config.table_value_rtol, 'bias energy')
