"""The force as a collective variable inside OpenMM: CustomCVForce, app.metadynamics, and the
XmlSerializer proxy and copy.copy/deepcopy those rely on."""

import copy
import math
import pickle

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationForce

from cases import make_case, make_switching, natural_spline
from helpers import assert_close, energy_and_forces, finite_difference_forces, make_system, set_state


def test_custom_cv_force_harmonic_restraint(platform_config, rng):
    case = make_case(rng, make_switching('RATIONAL', 'd0'), 'two', 'rectangular', num_particles=20, size=1.0)
    system = make_system(20, case.box)
    cvforce = openmm.CustomCVForce('0.5*k*(c-c0)^2')
    cvforce.addGlobalParameter('k', 30.0)
    cvforce.addGlobalParameter('c0', 1.0)
    cvforce.addCollectiveVariable('c', copy.deepcopy(case.force))   # case.force belongs to case.system
    system.addForce(cvforce)
    context = platform_config.context(system)
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    expected_energy, expected_forces, cv = case.expected((lambda c: 15.0*(c - 1.0)**2, lambda c: 30.0*(c - 1.0)))
    assert abs(cv - 1.0) > 0.5
    assert_close(energy, expected_energy, platform_config.value_rtol, 'energy')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'forces')
    assert_close(cvforce.getCollectiveVariableValues(context)[0], cv, platform_config.value_rtol, 'cv')
    particles = sorted(set(case.i[:2]) | set(case.j[:2]))
    numeric = finite_difference_forces(context, case.positions, particles, platform_config.fd_step, case.box)
    assert_close(forces[particles], numeric[particles], platform_config.fd_rtol, 'finite differences')


def test_custom_cv_force_with_the_energy_expression_inside(platform_config, rng):
    """The inner force's energy is what CustomCVForce sees as the variable."""
    case = make_case(rng, make_switching('EXP'), 'one', 'none', num_particles=15, size=1.0)
    case.force.setEnergyExpression('2*cv')
    system = make_system(15)
    cvforce = openmm.CustomCVForce('c^2')
    cvforce.addCollectiveVariable('c', copy.deepcopy(case.force))
    system.addForce(cvforce)
    context = platform_config.context(system)
    set_state(context, case.positions)
    energy, forces = energy_and_forces(context)
    expected_energy, expected_forces, cv = case.expected((lambda c: 4*c*c, lambda c: 8*c))
    assert_close(energy, expected_energy, platform_config.value_rtol, 'energy')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'forces')


def small_cluster(num_particles=10, seed=7):
    """Particles held in a sphere of radius 0.6 nm by a flat-bottom wall, with a soft repulsion."""
    rng = np.random.default_rng(seed)
    system = make_system(num_particles)
    for p in range(num_particles):
        system.setParticleMass(p, 12.0)
    wall = openmm.CustomExternalForce('100*max(0, sqrt(x^2+y^2+z^2)-0.6)^2')
    for p in range(num_particles):
        wall.addParticle(p, [])
    system.addForce(wall)
    repulsion = openmm.CustomNonbondedForce('10*max(0, 0.2-r)^2')
    for p in range(num_particles):
        repulsion.addParticle([])
    system.addForce(repulsion)
    topology = app.Topology()
    chain = topology.addChain()
    for p in range(num_particles):
        residue = topology.addResidue('C%d' % p, chain)
        topology.addAtom('C', app.element.carbon, residue)
    positions = rng.uniform(-0.3, 0.3, (num_particles, 3))
    return system, topology, positions


def test_metadynamics_on_coordination(platform_config):
    system, topology, positions = small_cluster()
    cv = CoordinationForce(range(10))
    cv.setR0(0.3)
    n_pairs = cv.getNumPairs()
    variable = app.metadynamics.BiasVariable(cv, 0.0, float(n_pairs), 2.0, gridWidth=100)
    meta = app.metadynamics.Metadynamics(system, [variable], 300*unit.kelvin, 5.0, 1.5*unit.kilojoule_per_mole, 25)
    integrator = openmm.LangevinMiddleIntegrator(300*unit.kelvin, 5/unit.picosecond, 0.004*unit.picoseconds)
    integrator.setRandomNumberSeed(3)
    simulation = app.Simulation(topology, system, integrator, platform_config.platform(), dict(platform_config.properties))
    simulation.context.setPositions(positions)
    simulation.context.setVelocitiesToTemperature(300*unit.kelvin, 5)
    assert np.all(meta.getFreeEnergy()._value == 0)
    values = []
    for _ in range(10):
        meta.step(simulation, 30)
        values.append(meta.getCollectiveVariables(simulation)[0])
    assert simulation.currentStep == 300
    free_energy = meta.getFreeEnergy().value_in_unit(unit.kilojoule_per_mole)
    assert np.all(np.isfinite(free_energy))
    assert free_energy.min() < -1.0          # 12 hills of about 1.5 kJ/mol were deposited
    assert np.count_nonzero(free_energy) > 5
    assert all(0.0 < v < n_pairs for v in values)
    # the bias sits where the CV has been: the deepest free energy is near the visited values
    grid = np.linspace(0.0, n_pairs, 100)
    deepest = grid[np.argmin(free_energy)]
    assert min(values) - 3.0 <= deepest <= max(values) + 3.0
    # the CV the bias force reports is our CV at the simulation's positions
    positions_now = simulation.context.getState(getPositions=True).getPositions(asNumpy=True)._value
    import reference_impl as ref
    i, j = ref.pairs('one', range(10))
    expected = ref.coordination(positions_now, ref.Switching('RATIONAL', r0=0.3), i, j)[0]
    assert_close(meta.getCollectiveVariables(simulation)[0], expected, platform_config.value_rtol, 'metadynamics cv')


def test_metadynamics_bias_through_energy_expression(platform_config):
    """The GPU-resident alternative to app.metadynamics: a Continuous1DFunction bias in the force's
    own energy expression, updated between steps with updateParametersInContext."""
    system, topology, positions = small_cluster()
    force = CoordinationForce(range(10))
    grid = np.linspace(0.0, 45.0, 91)
    force.setEnergyExpression('bias(cv)')
    force.addTabulatedFunction('bias', openmm.Continuous1DFunction(np.zeros_like(grid), 0.0, 45.0))
    force.setForceGroup(9)
    system.addForce(force)
    integrator = openmm.LangevinMiddleIntegrator(300, 5, 0.004)
    integrator.setRandomNumberSeed(4)
    context = platform_config.context(system, integrator)
    context.setPositions(positions)
    bias = np.zeros_like(grid)
    for _ in range(8):
        integrator.step(25)
        cv = force.getCollectiveVariableValue(context)
        assert 0.0 < cv < 45.0
        bias += 1.2*np.exp(-0.5*((grid - cv)/1.5)**2)
        force.getTabulatedFunction(0).setFunctionParameters(bias, 0.0, 45.0)
        force.updateParametersInContext(context)
        f, _ = natural_spline(grid, bias)
        energy = context.getState(getEnergy=True, groups={force.getForceGroup()}).getPotentialEnergy()._value
        state_cv = force.getCollectiveVariableValue(context)
        assert energy == pytest.approx(f(state_cv), rel=max(platform_config.table_value_rtol, 1e-9), abs=1e-9)
    assert bias.max() > 1.2


# ----- serialization and copies -----

def configured_force():
    force = CoordinationForce([0, 3, 5], [1, 2, 4, 5])
    force.setSwitchingFunction(CoordinationForce.Custom)
    force.setCustomExpression('1/(1+x^4)')
    force.setR0(0.35)
    force.setD0(0.02)
    force.setN(7)
    force.setM(11)
    force.setA(3.5)
    force.setB(2.5)
    force.setDMax(1.1)
    force.setStretch(False)
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyExpression('k*bias(cv)+cv0')
    force.addGlobalParameter('k', 2.5)
    force.addGlobalParameter('cv0', -0.5)
    force.addTabulatedFunction('bias', openmm.Continuous1DFunction([0.0, 1.0, 4.0, 2.0], 0.0, 6.0))
    force.setForceGroup(7)
    force.setName('my coordination')
    return force


def same_settings(a, b):
    assert a.getMode() == b.getMode()
    assert a.getGroupA() == b.getGroupA() and a.getGroupB() == b.getGroupB()
    assert a.getSwitchingFunction() == b.getSwitchingFunction()
    assert a.getCustomExpression() == b.getCustomExpression()
    for getter in ('getR0', 'getD0', 'getDMax'):
        assert getattr(a, getter)() == getattr(b, getter)(), getter
    for getter in ('getN', 'getM', 'getA', 'getB', 'getStretch', 'getUsesDefaultDMax', 'usesPeriodicBoundaryConditions',
                   'getEnergyExpression', 'getNumGlobalParameters', 'getNumTabulatedFunctions', 'getForceGroup', 'getName'):
        assert getattr(a, getter)() == getattr(b, getter)(), getter
    for k in range(a.getNumGlobalParameters()):
        assert a.getGlobalParameterName(k) == b.getGlobalParameterName(k)
        assert a.getGlobalParameterDefaultValue(k) == b.getGlobalParameterDefaultValue(k)
    for k in range(a.getNumTabulatedFunctions()):
        assert a.getTabulatedFunctionName(k) == b.getTabulatedFunctionName(k)
        assert list(a.getTabulatedFunction(k).getFunctionParameters()[0]) == list(b.getTabulatedFunction(k).getFunctionParameters()[0])


def energy_of(force, positions, box):
    system = make_system(len(positions), box)
    system.addForce(force)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    set_state(context, positions, box)
    return energy_and_forces(context, groups={force.getForceGroup()})


@pytest.mark.parametrize('how', ['copy', 'deepcopy'])
def test_copy_returns_a_coordination_force(how):
    force = configured_force()
    clone = getattr(copy, how)(force)
    assert type(clone) is CoordinationForce and clone is not force
    same_settings(force, clone)
    clone.setR0(0.5)   # independent of the original
    assert force.getR0()._value == 0.35


def test_pickle_returns_a_coordination_force(rng):
    """pickle goes through XmlSerializer, as for OpenMM's forces; OpenMM's Force.__setstate__ gave an object
    whose CoordinationForce methods all raised TypeError."""
    force = configured_force()
    clone = pickle.loads(pickle.dumps(force))
    assert type(clone) is CoordinationForce and clone.thisown
    same_settings(force, clone)
    assert openmm.XmlSerializer.serialize(clone) == openmm.XmlSerializer.serialize(force)
    box = np.diag([1.5, 1.6, 1.7])
    positions = rng.uniform(0, 1.5, (6, 3))
    e1, f1 = energy_of(copy.deepcopy(force), positions, box)
    e2, f2 = energy_of(clone, positions, box)
    assert e1 == e2 and np.array_equal(f1, f2) and e1 != 0.0


def test_cast_gives_the_force_of_a_system():
    """system.getForce(i), getForces() and XmlSerializer.deserialize() give an openmm.Force; cast() gives the
    CoordinationForce or CoordinationBiasForce it is (the same C++ object), or None for another kind."""
    from openmmcoordination import CoordinationBiasForce
    force = configured_force()
    bias = CoordinationBiasForce('c')
    bias.addCollectiveVariable('c', CoordinationForce([0], [1, 2]))
    system = openmm.System()
    for _ in range(6):
        system.addParticle(1.0)
    system.addForce(force)
    system.addForce(bias)
    system.addForce(openmm.HarmonicBondForce())
    first, second, third = system.getForces()
    assert type(first) is openmm.Force and CoordinationForce.cast(third) is None
    cast = CoordinationForce.cast(first)
    assert type(cast) is CoordinationForce and not cast.thisown
    cast.setR0(0.41)
    assert force.getR0() == 0.41*unit.nanometer                                  # the System's own force
    assert CoordinationForce.cast(second) is None and CoordinationBiasForce.cast(first) is None
    assert CoordinationBiasForce.cast(second).getCollectiveVariableName(0) == 'c'
    copy = openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(system))
    assert CoordinationForce.cast(copy.getForce(0)).getR0() == 0.41*unit.nanometer
    assert CoordinationBiasForce.cast(copy.getForce(1)).getEnergyFunction() == 'c'


def test_cast_of_a_deserialized_force():
    """cast(XmlSerializer.deserialize(xml)), as cast's docstring offers: the result takes the object over
    from the temporary Force that owned it. It was deleted with that Force's wrapper, under the result
    (a force group of -2115697815, a name of garbage, an invalid group A: a use after free), and a
    System could not take it (it did not own its object)."""
    import gc
    from openmmcoordination import CoordinationBiasForce
    force = configured_force()
    force.setForceGroup(3)
    force.setName('cn')
    bias = CoordinationBiasForce('2*c')
    bias.addCollectiveVariable('c', CoordinationForce([0], [1, 2]))
    cast = CoordinationForce.cast(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(force)))
    castBias = CoordinationBiasForce.cast(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(bias)))
    gc.collect()
    garbage = [openmm.HarmonicBondForce() for _ in range(100)]    # noqa: F841  (reuses freed memory, if any)
    assert cast.thisown and castBias.thisown
    assert (cast.getForceGroup(), cast.getName(), list(cast.getGroupA())) == (3, 'cn', list(force.getGroupA()))
    assert openmm.XmlSerializer.serialize(cast) == openmm.XmlSerializer.serialize(force)
    assert (castBias.getEnergyFunction(), castBias.getCollectiveVariableName(0)) == ('2*c', 'c')
    system = openmm.System()
    for _ in range(6):
        system.addParticle(1.0)
    system.addForce(cast)
    system.addForce(castBias)
    assert not cast.thisown and not castBias.thisown
    del cast, castBias
    gc.collect()
    assert CoordinationForce.cast(system.getForce(0)).getName() == 'cn'
    assert CoordinationBiasForce.cast(system.getForce(1)).getEnergyFunction() == '2*c'


@pytest.mark.parametrize('dmax', ['default', 'infinite', 'finite'])
def test_xml_round_trip(rng, dmax):
    force = configured_force()
    if dmax == 'default':
        force.setSwitchingFunction(CoordinationForce.Rational)
        force.setDefaultDMax()
    elif dmax == 'infinite':
        force.setDMax(math.inf)
    xml = openmm.XmlSerializer.serialize(force)
    assert 'CoordinationForce' in xml and 'my coordination' in xml
    restored = openmm.XmlSerializer.deserialize(xml)
    assert isinstance(restored, openmm.Force)
    assert restored.getForceGroup() == 7 and restored.getName() == 'my coordination'
    assert openmm.XmlSerializer.serialize(restored) == xml
    # the restored object is a C++ CoordinationForce: cloning it through copy gives one in Python
    box = np.diag([1.5, 1.6, 1.7])
    positions = rng.uniform(0, 1.5, (6, 3))
    e1, f1 = energy_of(copy.deepcopy(force), positions, box)
    e2, f2 = energy_of(restored, positions, box)
    assert e1 == e2 and np.array_equal(f1, f2)
    assert e1 != 0.0
    # the deep copy is equivalent field by field
    same_settings(force, copy.deepcopy(force))


def test_system_xml_round_trip(rng):
    case = make_case(rng, make_switching('SMAP', 'dmax-stretch'), 'pairs', 'triclinic', num_particles=20)
    case.force.setForceGroup(3)
    xml = openmm.XmlSerializer.serialize(case.system)
    system = openmm.XmlSerializer.deserialize(xml)
    assert system.getNumForces() == 1 and system.getForce(0).getForceGroup() == 3
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    expected_energy, expected_forces, _ = case.expected()
    assert_close(energy, expected_energy, 1e-10, 'energy after System round trip')
    assert_close(forces, expected_forces, 1e-10, 'forces after System round trip')
