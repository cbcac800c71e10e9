"""Special configurations in a Context: x = 1 exactly for RATIONAL with m != 2n, r <= d0,
r = 0 (two particles at the same place), pairs exactly at dmax, NaN positions."""

import math
import re

import numpy as np
import pytest

import openmm

from openmmcoordination import CoordinationForce

from helpers import assert_close, energy_and_forces, finite_difference_forces, make_system


def two_particle_context(config, force, r, num_particles=2):
    system = make_system(num_particles)
    system.addForce(force)
    context = config.context(system)
    positions = np.zeros((num_particles, 3))
    positions[1] = [r, 0.0, 0.0]
    context.setPositions(positions)
    return context, positions


@pytest.mark.parametrize('n,m', [(6, 10), (5, 9), (8, 6)])
def test_rational_at_x_equal_1(platform_config, n, m):
    force = CoordinationForce([0, 1])
    force.setR0(0.25)
    force.setN(n)
    force.setM(m)
    force.setDMax(math.inf)
    context, positions = two_particle_context(platform_config, force, 0.25)
    energy, forces = energy_and_forces(context)
    assert_close(energy, n/m, platform_config.value_rtol, 'n/m at x = 1')
    dsdr = n*(n - m)/(2*m)/0.25
    # force on particle 1 (at +x) is -ds/dr along +x; particle 0 gets the opposite
    assert_close(forces, [[dsdr, 0, 0], [-dsdr, 0, 0]], platform_config.force_rtol, 'force at x = 1')
    numeric = finite_difference_forces(context, positions, [1], platform_config.fd_step)
    assert_close(forces[1], numeric[1], platform_config.fd_rtol, 'finite differences at x = 1')


@pytest.mark.parametrize('n,m', [(6, 10), (8, 12), (5, 7)])
def test_rational_beside_x_equal_1(platform_config, n, m):
    """Just beside x = 1 the direct form (1 - x^n)/(1 - x^m) cancels (its derivative loses about
    eps/(x - 1)^2): whatever a platform does there, its value and force must keep its precision."""
    from reference_impl import Switching
    exact = Switching('RATIONAL', r0=0.25, n=n, m=m, dmax=math.inf)
    force = CoordinationForce([0, 1])
    force.setR0(0.25)
    force.setN(n)
    force.setM(m)
    force.setDMax(math.inf)
    context, _ = two_particle_context(platform_config, force, 0.25)
    for delta in (1e-6, 1.1e-5, 3e-5, 1e-4, 6e-3, 2e-2, 0.1, 0.3):
        for sign in (1, -1):
            r = 0.25*(1 + sign*delta)
            context.setPositions([[0, 0, 0], [r, 0, 0]])
            energy, forces = energy_and_forces(context)
            s, dsdr = exact([r])
            assert_close(energy, s[0], platform_config.value_rtol, 'value at x - 1 = %g' % (sign*delta))
            assert_close(forces[1, 0], -dsdr[0], platform_config.force_rtol, 'force at x - 1 = %g' % (sign*delta))


@pytest.mark.parametrize('r', [0.0, 0.05, 0.1])
def test_at_or_below_d0(platform_config, r):
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Exp)
    force.setR0(0.2)
    force.setD0(0.1)
    context, _ = two_particle_context(platform_config, force, r)
    energy, forces = energy_and_forces(context)
    assert energy == pytest.approx(1.0, rel=platform_config.value_rtol)
    assert np.all(forces == 0.0)


@pytest.mark.parametrize('mode', ['one', 'two', 'pairs'])
def test_two_particles_at_the_same_position(platform_config, mode):
    """r = 0: s = 1, force exactly 0, nothing NaN (d0 = 0 as well as d0 > 0)."""
    for d0 in (0.0, 0.05):
        if mode == 'one':
            force = CoordinationForce([0, 1, 2])
        elif mode == 'two':
            force = CoordinationForce([0], [1, 2])
        else:
            force = CoordinationForce([0, 0], [1, 2], True)
        force.setD0(d0)
        system = make_system(3)
        system.addForce(force)
        context = platform_config.context(system)
        positions = np.array([[0.4, 0.4, 0.4], [0.4, 0.4, 0.4], [5.0, 5.0, 5.0]])
        context.setPositions(positions)
        energy, forces = energy_and_forces(context)
        assert math.isfinite(energy) and np.all(np.isfinite(forces))
        assert energy == pytest.approx(1.0, rel=platform_config.value_rtol, abs=1e-6)
        assert np.all(np.abs(forces[:2]) < 1e-6)
        assert force.getCollectiveVariableValue(context) == pytest.approx(energy, rel=platform_config.value_rtol)


def test_pair_exactly_at_dmax(platform_config):
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Tanh)
    force.setR0(0.1)
    force.setDMax(0.5)
    context, _ = two_particle_context(platform_config, force, 0.5)
    energy, forces = energy_and_forces(context)
    assert abs(energy) < 1e-6
    force.setStretch(False)
    force.updateParametersInContext(context)
    # Not stretched, s jumps to 0 at dmax itself, value and forces, as PLUMED 2.10.1 prints there
    # (its rt20-switch-* regtests, every type), and beyond
    energy, forces = energy_and_forces(context)
    assert energy == 0.0 and np.all(forces == 0.0)
    context.setPositions([[0, 0, 0], [0.5001, 0, 0]])
    energy, forces = energy_and_forces(context)
    assert energy == 0.0 and np.all(forces == 0.0)
    # just inside: 1 - tanh(4.99) = 9e-5 loses digits in float: judge it on the scale of s(0) = 1
    context.setPositions([[0, 0, 0], [0.499, 0, 0]])
    energy, _ = energy_and_forces(context)
    assert energy == pytest.approx(1 - math.tanh(4.99), rel=platform_config.value_rtol, abs=platform_config.value_rtol)


@pytest.mark.parametrize('what', ['nan', 'inf'])
def test_non_finite_positions_raise(platform_config, what):
    force = CoordinationForce([0, 1, 2])
    system = make_system(4)
    system.addForce(force)
    context = platform_config.context(system)
    positions = np.array([[0, 0, 0], [0.3, 0, 0], [0, 0.3, 0], [1, 1, 1]], dtype=float)
    positions[2, 1] = np.nan if what == 'nan' else np.inf
    context.setPositions(positions)
    # the CPU platform checks for NaN coordinates itself, before any force runs: its message is as
    # clear; CUDA's energy read of that evaluation is NaN, and the next one raises
    try:
        state = context.getState(getEnergy=True, getForces=True)
    except openmm.OpenMMException as error:
        assert re.search(r'CoordinationForce.*particle 2.*(NaN|not finite)|Particle coordinate is NaN', str(error))
    else:
        assert platform_config.name == 'CUDA' and np.isnan(state.getPotentialEnergy()._value)
        with pytest.raises(openmm.OpenMMException, match=r'CoordinationForce.*particle 2.*(NaN|not finite)'):
            context.getState(getEnergy=True)
    with pytest.raises(openmm.OpenMMException, match=r'CoordinationForce.*particle 2.*(NaN|not finite)'):
        force.getCollectiveVariableValue(context)
