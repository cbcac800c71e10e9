"""Energy as a function of the CV: expressions with global parameters, Continuous1DFunction tables,
Context parameters, the CV value itself, the energy-only path, force groups, and
updateParametersInContext."""

import numpy as np
import pytest

import openmm

from cases import make_case, make_switching, natural_spline
from helpers import assert_close, energy_and_forces, finite_difference_forces, set_state


def harmonic(k, cv0):
    return (lambda cv: 0.5*k*(cv - cv0)**2, lambda cv: k*(cv - cv0))


def add_harmonic_restraint(force, k=40.0, cv0=2.0):
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', k)
    force.addGlobalParameter('cv0', cv0)


@pytest.mark.parametrize('box', ['none', 'triclinic'])
def test_harmonic_restraint_with_global_parameters(platform_config, rng, box):
    case = make_case(rng, make_switching('RATIONAL', 'd0'), 'two', box, num_particles=20, size=1.0)
    add_harmonic_restraint(case.force)
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    expected_energy, expected_forces, cv = case.expected(harmonic(40.0, 2.0))
    assert abs(cv - 2.0) > 0.5
    assert_close(energy, expected_energy, platform_config.value_rtol, 'energy')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'forces')
    assert_close(case.force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv')
    particles = sorted(set(case.i[:2]) | set(case.j[:2]))
    numeric = finite_difference_forces(context, case.positions, particles, platform_config.fd_step, case.box)
    assert_close(forces[particles], numeric[particles], platform_config.fd_rtol, 'finite differences')

    # Context parameters change the energy (and the forces) without reinitializing
    context.setParameter('k', 7.0)
    context.setParameter('cv0', cv + 0.75)
    energy, forces = energy_and_forces(context)
    expected_energy, expected_forces, _ = case.expected(harmonic(7.0, cv + 0.75))
    assert_close(energy, expected_energy, platform_config.value_rtol, 'energy after setParameter')
    assert_close(energy, 0.5*7.0*0.75**2, platform_config.value_rtol, 'energy after setParameter')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'forces after setParameter')
    assert context.getParameter('k') == 7.0


def test_flat_bottom_expression(platform_config, rng):
    case = make_case(rng, make_switching('GAUSSIAN'), 'one', 'rectangular', num_particles=20, size=1.0)
    cv = case.expected()[2]
    case.force.setEnergyExpression('k*max(0,cv-upper)^2')
    case.force.addGlobalParameter('k', 3.0)
    case.force.addGlobalParameter('upper', cv - 1.5)
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    expected = case.expected((lambda c: 3.0*max(0, c - (cv - 1.5))**2, lambda c: 6.0*max(0, c - (cv - 1.5))))
    assert_close(energy, expected[0], platform_config.value_rtol, 'energy')
    assert_close(forces, expected[1], platform_config.force_rtol, 'forces')
    context.setParameter('upper', cv + 1.0)
    energy, forces = energy_and_forces(context)
    assert energy == 0.0 and np.all(forces == 0.0)


def make_table(rng, cv_max, points=25):
    x = np.linspace(0.0, cv_max, points)
    y = 2.0*np.sin(2.5*x/cv_max*np.pi) + rng.uniform(-0.3, 0.3, points)
    return x, y


def test_tabulated_bias(platform_config, rng):
    case = make_case(rng, make_switching('RATIONAL'), 'two', 'rectangular', num_particles=20, size=1.0)
    cv = case.expected()[2]
    x, y = make_table(rng, 2*cv + 1)
    case.force.setEnergyExpression('bias(cv)')
    case.force.addTabulatedFunction('bias', openmm.Continuous1DFunction(y, x[0], x[-1]))
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    f, df = natural_spline(x, y)
    expected_energy, expected_forces, _ = case.expected((f, df))
    assert_close(energy, expected_energy, platform_config.table_value_rtol, 'energy')
    assert_close(forces, expected_forces, platform_config.table_force_rtol, 'forces')
    particles = sorted(set(case.i[:2]) | set(case.j[:2]))
    numeric = finite_difference_forces(context, case.positions, particles, platform_config.fd_step, case.box)
    assert_close(forces[particles], numeric[particles], platform_config.fd_rtol, 'finite differences')

    # new table values between steps, through updateParametersInContext (no reinitialization)
    y2 = y[::-1]*0.5 + 1.0
    case.force.getTabulatedFunction(0).setFunctionParameters(y2, x[0], x[-1])
    case.force.updateParametersInContext(context)
    energy, forces = energy_and_forces(context)
    f2, df2 = natural_spline(x, y2)
    expected_energy, expected_forces, _ = case.expected((f2, df2))
    assert_close(energy, expected_energy, platform_config.table_value_rtol, 'energy after new table')
    assert_close(forces, expected_forces, platform_config.table_force_rtol, 'forces after new table')


def test_table_and_parameters_together(platform_config, rng):
    case = make_case(rng, make_switching('TANH'), 'pairs', 'none', num_particles=20, size=1.0)
    cv = case.expected()[2]
    x, y = make_table(rng, 2*cv + 1)
    case.force.setEnergyExpression('w*bias(cv)+c*cv')
    case.force.addGlobalParameter('w', 0.7)
    case.force.addGlobalParameter('c', -1.3)
    case.force.addTabulatedFunction('bias', openmm.Continuous1DFunction(y, x[0], x[-1]))
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    energy, forces = energy_and_forces(context)
    f, df = natural_spline(x, y)
    expected = case.expected((lambda c: 0.7*f(c) - 1.3*c, lambda c: 0.7*df(c) - 1.3))
    assert_close(energy, expected[0], platform_config.table_value_rtol, 'energy')
    assert_close(forces, expected[1], platform_config.table_force_rtol, 'forces')


def test_collective_variable_is_not_the_energy(platform_config, rng):
    case = make_case(rng, make_switching('EXP'), 'one', 'none', num_particles=15, size=1.0)
    case.force.setEnergyExpression('3*cv+1')
    context = platform_config.context(case.system)
    set_state(context, case.positions)
    cv = case.expected()[2]
    assert_close(case.force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv')
    assert_close(energy_and_forces(context)[0], 3*cv + 1, platform_config.value_rtol, 'energy')


def test_energy_without_forces(platform_config, rng):
    """getState(getEnergy=True) alone must give the right energy (no forces requested)."""
    case = make_case(rng, make_switching('SMAP', 'dmax-stretch'), 'two', 'triclinic', num_particles=25)
    add_harmonic_restraint(case.force, 5.0, 1.0)
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    energy = context.getState(getEnergy=True).getPotentialEnergy()._value
    assert_close(energy, case.expected(harmonic(5.0, 1.0))[0], platform_config.value_rtol, 'energy only')
    # and again after moving the particles, still without forces
    moved = case.positions + rng.normal(0, 0.05, case.positions.shape)
    context.setPositions(moved)
    energy = context.getState(getEnergy=True).getPotentialEnergy()._value
    case.positions = moved
    assert_close(energy, case.expected(harmonic(5.0, 1.0))[0], platform_config.value_rtol, 'energy only, moved')


def test_force_groups(platform_config, rng):
    case = make_case(rng, make_switching('RATIONAL'), 'one', 'none', num_particles=15, size=1.0)
    case.force.setForceGroup(5)
    other = openmm.CustomExternalForce('0.5*x^2')
    for p in range(case.system.getNumParticles()):
        other.addParticle(p, [])
    other.setForceGroup(2)
    case.system.addForce(other)
    context = platform_config.context(case.system)
    set_state(context, case.positions)
    expected_cv, expected_forces = case.expected()[2], case.expected()[1]
    external = 0.5*np.sum(case.positions[:, 0]**2)
    energy, forces = energy_and_forces(context, groups={5})
    assert_close(energy, expected_cv, platform_config.value_rtol, 'group 5 energy')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'group 5 forces')
    energy, forces = energy_and_forces(context, groups={2})
    assert_close(energy, external, platform_config.value_rtol, 'group 2 energy')
    external_forces = np.zeros_like(case.positions)
    external_forces[:, 0] = -case.positions[:, 0]
    assert_close(forces, external_forces, platform_config.force_rtol, 'group 2 forces')
    energy, _ = energy_and_forces(context, groups={0, 1, 3}, forces=False)
    assert energy == 0.0
    energy, forces = energy_and_forces(context)
    assert_close(energy, expected_cv + external, platform_config.value_rtol, 'all groups')
    assert_close(forces, expected_forces + external_forces, platform_config.force_rtol, 'all groups forces')


UPDATES = {
    'r0': lambda f: f.setR0(0.37),
    'd0': lambda f: f.setD0(0.06),
    'n': lambda f: f.setN(8),
    'm': lambda f: f.setM(10),
    'dmax': lambda f: f.setDMax(0.9),
    'stretch': lambda f: f.setStretch(False),
    'type': lambda f: f.setSwitchingFunction(f.Gaussian),
    'smap': lambda f: (f.setSwitchingFunction(f.Smap), f.setA(4.0), f.setB(2.5)),
    'custom': lambda f: (f.setSwitchingFunction(f.Custom), f.setCustomExpression('exp(-x^3)')),
    'cubic': lambda f: (f.setSwitchingFunction(f.Cubic), f.setDMax(0.8), f.setD0(0.1)),
    'energy-expression': lambda f: f.setEnergyExpression('cv^2-k*cv'),
}


def switching_of(force):
    """The NumPy Switching equivalent to a force's current settings."""
    from reference_impl import CustomFunction, Switching
    names = {getattr(force, t.capitalize()): t for t in
             ('RATIONAL', 'EXP', 'GAUSSIAN', 'SMAP', 'CUBIC', 'TANH', 'COSINUS', 'CUSTOM')}
    custom = None
    if force.getCustomExpression() == 'exp(-x^3)':
        custom = CustomFunction(lambda x: np.exp(-x**3), 'exp(-x^3)')
    return Switching(names[force.getSwitchingFunction()], r0=force.getR0()._value, d0=force.getD0()._value,
                     n=force.getN(), m=force.getM(), a=force.getA(), b=force.getB(),
                     dmax=None if force.getUsesDefaultDMax() else force.getDMax()._value,
                     stretch=force.getStretch(), custom=custom)


@pytest.mark.parametrize('what', sorted(UPDATES))
def test_update_parameters_in_context(platform_config, rng, what):
    case = make_case(rng, make_switching('RATIONAL'), 'two', 'rectangular', num_particles=20, size=1.0)
    case.force.addGlobalParameter('k', 1.5)
    if what == 'stretch':
        case.force.setDMax(0.5)   # where stretching makes a difference of a few percent
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    before = energy_and_forces(context)[0]
    UPDATES[what](case.force)
    case.force.updateParametersInContext(context)
    energy, forces = energy_and_forces(context)
    case.switching = switching_of(case.force)
    expression = (lambda c: c*c - 1.5*c, lambda c: 2*c - 1.5) if what == 'energy-expression' else None
    expected_energy, expected_forces, cv = case.expected(expression)
    assert abs(expected_energy - before) > 1e-3*abs(before)   # the update does change the energy
    assert_close(energy, expected_energy, platform_config.value_rtol, 'energy after update')
    assert_close(forces, expected_forces, platform_config.force_rtol, 'forces after update')
    assert_close(case.force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv after update')


@pytest.mark.parametrize('change', ['setGroup', 'setGroups', 'pair-list', 'periodic'])
def test_update_refuses_changed_groups(platform_config, rng, change):
    case = make_case(rng, make_switching('RATIONAL'), 'two', 'rectangular', num_particles=12, size=1.0)
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    before = energy_and_forces(context)[0]
    if change == 'setGroup':
        case.force.setGroup([0, 1, 2])
    elif change == 'setGroups':
        case.force.setGroups(case.force.getGroupA(), case.force.getGroupB()[:-1])
    elif change == 'pair-list':
        case.force.setGroups([0, 1], [2, 3], True)
    else:
        case.force.setUsesPeriodicBoundaryConditions(False)
    with pytest.raises(openmm.OpenMMException, match='updateParametersInContext.*(groups|periodic).*changed'):
        case.force.updateParametersInContext(context)
    assert energy_and_forces(context)[0] == pytest.approx(before, rel=platform_config.value_rtol)


def test_new_context_uses_current_parameters(reference_config, rng):
    case = make_case(rng, make_switching('RATIONAL'), 'one', 'none', num_particles=12, size=1.0)
    add_harmonic_restraint(case.force, 2.0, 1.0)
    case.force.setGlobalParameterDefaultValue(0, 9.0)
    assert case.force.getGlobalParameterName(1) == 'cv0'
    context = reference_config.context(case.system)
    set_state(context, case.positions)
    assert context.getParameter('k') == 9.0
    assert energy_and_forces(context)[0] == pytest.approx(case.expected(harmonic(9.0, 1.0))[0], rel=1e-12)


def test_energy_function_names(reference_config):
    """setEnergyFunction/getEnergyFunction, OpenMM's names (CustomCVForce), on both forces; the earlier
    setEnergyExpression/getEnergyExpression are aliases (each reads what the other wrote), and the
    energy follows either: 3*cv and 7*cv of a pair 0.2 nm apart, the CV its s(0.2 nm)."""
    from openmmcoordination import CoordinationBiasForce, CoordinationForce
    force = CoordinationForce([0], [1])
    force.setR0(0.3)
    assert force.getEnergyFunction() == force.getEnergyExpression() == 'cv'
    force.setEnergyFunction('3*cv')
    assert force.getEnergyExpression() == '3*cv'
    bias = CoordinationBiasForce('c1')
    bias.setEnergyFunction('5*c1')
    assert bias.getEnergyExpression() == bias.getEnergyFunction() == '5*c1'
    bias.setEnergyExpression('7*c1')
    assert bias.getEnergyFunction() == '7*c1'
    inner = CoordinationForce([0], [1])
    inner.setR0(0.3)
    bias.addCollectiveVariable('c1', inner)
    bias.setForceGroup(1)
    system = openmm.System()
    system.addParticle(1.0)
    system.addParticle(1.0)
    system.addForce(force)
    system.addForce(bias)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), reference_config.platform())
    context.setPositions([openmm.Vec3(0, 0, 0), openmm.Vec3(0.2, 0, 0)])
    s = force.evaluateSwitchingFunction(0.2)[0]
    assert 0.9 < s < 1
    energy = lambda group: context.getState(getEnergy=True, groups={group}).getPotentialEnergy()._value
    assert energy(0) == pytest.approx(3*s, rel=1e-12) and energy(1) == pytest.approx(7*s, rel=1e-12)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce'):
        force.setEnergyFunction('cv+')
