"""Every bad input of the contract raises openmm.OpenMMException (not a bare Exception) with a
message that names the class, the parameter and the offending value."""

import math
import re

import numpy as np
import pytest

import openmm

from openmmcoordination import CoordinationForce

from helpers import make_system


def raises(call, *words):
    """Assert call() raises OpenMMException whose message contains 'CoordinationForce' and every
    word (a plain string, matched literally)."""
    with pytest.raises(openmm.OpenMMException) as info:
        call()
    assert type(info.value) is openmm.OpenMMException
    message = str(info.value)
    for word in ('CoordinationForce',) + words:
        assert word in message, 'missing %r in %r' % (word, message)
    return message


def context_for(force, num_particles=4):
    system = make_system(num_particles)
    system.addForce(force)
    return openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))


# ----- groups -----

def test_empty_group():
    raises(lambda: CoordinationForce().setGroup([]), 'group', 'empty', '0')
    raises(lambda: CoordinationForce([], [1, 2]), 'groupA', 'empty')
    raises(lambda: CoordinationForce([1, 2], []), 'groupB', 'empty')
    raises(lambda: CoordinationForce([], [], True), 'empty')
    raises(lambda: context_for(CoordinationForce()), 'groupA', 'empty')


def test_repeated_index():
    raises(lambda: CoordinationForce([3, 1, 3]), 'group', 'repeats', 'position 2', '3')
    raises(lambda: CoordinationForce([0, 5, 5], [1]), 'groupA', 'repeats', '5')
    raises(lambda: CoordinationForce([0], [2, 1, 2]), 'groupB', 'repeats', '2')
    # a pair list may repeat particles: (0, 1), (0, 2) is a valid list
    assert CoordinationForce([0, 0], [1, 2], True).getNumPairs() == 2


def test_negative_index():
    raises(lambda: CoordinationForce([0, -1]), 'group', 'invalid particle index', '-1')
    raises(lambda: CoordinationForce([0, 1], [-3]), 'groupB', '-3')


@pytest.mark.parametrize('groups', [([0, 7],), ([0, 1], [2, 9]), ([8, 1], [2, 3]), ([0, 1], [2, 4], True)])
def test_out_of_range_index_at_context_creation(groups):
    force = CoordinationForce(*groups)   # fine until the System is known
    bad = max(max(g) for g in groups if isinstance(g, list))
    raises(lambda: context_for(force, num_particles=4), 'invalid particle index', str(bad), '4 particles')


def test_pair_list_of_unequal_lengths():
    raises(lambda: CoordinationForce([0, 1, 2], [3, 4], True), 'pair list', '3', '2')
    raises(lambda: CoordinationForce().setGroups([0], [1, 2], True), 'pair list', '1', '2')


def test_pair_list_pairing_a_particle_with_itself():
    raises(lambda: CoordinationForce([0, 1], [2, 1], True), 'itself', 'position 1', '1')


# ----- switching parameters -----

@pytest.mark.parametrize('value', [0.0, -0.2, math.inf, math.nan])
def test_r0_must_be_positive(value):
    raises(lambda: CoordinationForce([0, 1]).setR0(value), 'r0', '%g' % value)


@pytest.mark.parametrize('value', [0, -2])
def test_n_must_be_positive(value):
    raises(lambda: CoordinationForce([0, 1]).setN(value), 'n must be positive', str(value))


def test_m_must_be_non_negative_and_differ_from_n():
    raises(lambda: CoordinationForce([0, 1]).setM(-1), 'm must be non-negative', '-1')
    raises(lambda: CoordinationForce([0, 1]).setM(6), 'm', 'n', '6')
    force = CoordinationForce([0, 1])
    force.setM(8)
    raises(lambda: force.setN(8), 'n', 'm', '8')


@pytest.mark.parametrize('value', [-0.1, math.inf])
def test_d0_must_be_non_negative(value):
    raises(lambda: CoordinationForce([0, 1]).setD0(value), 'd0', '%g' % value)


def test_dmax_must_exceed_d0():
    raises(lambda: CoordinationForce([0, 1]).setDMax(0.0), 'dmax', 'd0', '0')
    raises(lambda: CoordinationForce([0, 1]).setDMax(-1.0), 'dmax', '-1')
    force = CoordinationForce([0, 1])
    force.setD0(0.5)
    raises(lambda: force.setDMax(0.4), 'dmax', 'd0', '0.4')
    # d0 raised above an existing dmax: caught when the Context is created
    force = CoordinationForce([0, 1])
    force.setDMax(0.4)
    force.setD0(0.5)
    raises(lambda: context_for(force), 'dmax', '0.4', 'd0', '0.5')


@pytest.mark.parametrize('setter', ['setA', 'setB'])
@pytest.mark.parametrize('value', [0.0, -1.5])
def test_smap_exponents_must_be_positive(setter, value):
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Smap)
    raises(lambda: getattr(force, setter)(value), setter[-1].lower(), 'Smap', '%g' % value)


def test_cubic_without_dmax():
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Cubic)
    raises(lambda: context_for(force), 'dmax', 'inf', 'Cubic')
    raises(lambda: force.evaluateSwitchingFunction(0.2), 'dmax', 'Cubic')


@pytest.mark.parametrize('expression', ['1/(1+x^', 'exp(-x))', 'foo(x)', ''])
def test_custom_expression_that_does_not_parse(expression):
    message = raises(lambda: CoordinationForce([0, 1]).setCustomExpression(expression), 'custom expression', 'parse')
    assert expression in message


@pytest.mark.parametrize('expression,variable', [('exp(-y)', 'y'), ('x*r0', 'r0'), ('1/(1+x^6+cv)', 'cv')])
def test_custom_expression_with_other_variables(expression, variable):
    raises(lambda: CoordinationForce([0, 1]).setCustomExpression(expression), 'custom expression', 'only the variable x', variable)


def test_energy_expression_with_unknown_variable():
    force = CoordinationForce([0, 1])
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', 1.0)
    raises(lambda: context_for(force), 'energy expression', 'unknown variable', 'cv0')


def test_energy_expression_that_does_not_parse():
    force = CoordinationForce([0, 1])
    force.setEnergyExpression('cv^')
    raises(lambda: context_for(force), 'energy expression', 'parse', 'cv^')


def test_energy_expression_with_unknown_function():
    force = CoordinationForce([0, 1])
    force.setEnergyExpression('bias(cv)')
    raises(lambda: context_for(force), 'energy expression', 'bias')


def test_tabulated_function_must_be_1d():
    force = CoordinationForce([0, 1])
    table = openmm.Discrete1DFunction([1.0, 2.0])
    raises(lambda: force.addTabulatedFunction('bias', table), 'Continuous1DFunction', 'bias')


# ----- histograms -----

@pytest.mark.parametrize('bins,rmax,words', [(0, 1.0, ('numBins', '0')), (-3, 1.0, ('numBins', '-3')),
                                             (10, 0.0, ('maxDistance', '0')), (10, -2.0, ('maxDistance', '-2')),
                                             (10, math.inf, ('maxDistance', 'inf'))])
def test_histogram_arguments(bins, rmax, words):
    force = CoordinationForce([0, 1, 2])
    context = context_for(force, 3)
    context.setPositions(np.eye(3))
    raises(lambda: force.getPairHistogram(context, bins, rmax), *words)
    raises(lambda: force.accumulatePairHistogram(context, bins, rmax), *words)


def test_accumulating_with_other_bins_needs_a_reset():
    force = CoordinationForce([0, 1, 2])
    context = context_for(force, 3)
    context.setPositions(np.eye(3))
    force.accumulatePairHistogram(context, 10, 1.0)
    raises(lambda: force.accumulatePairHistogram(context, 12, 1.0), 'numBins', '12', 'resetPairHistogram')
    raises(lambda: force.accumulatePairHistogram(context, 10, 1.5), 'maxDistance', '1.5', 'resetPairHistogram')
    force.resetPairHistogram(context)
    force.accumulatePairHistogram(context, 12, 1.5)
    assert force.getNumAccumulatedFrames(context) == 1


# ----- indices of lists, and the exception type itself -----

def test_index_of_global_parameters_and_functions():
    force = CoordinationForce([0, 1])
    raises(lambda: force.getGlobalParameterName(0), 'global parameter', '0')
    force.addGlobalParameter('k', 1.0)
    raises(lambda: force.getGlobalParameterDefaultValue(3), 'global parameter', '3')
    raises(lambda: force.getTabulatedFunction(0), 'tabulated function', '0')
    raises(lambda: force.getTabulatedFunctionName(-1), 'tabulated function', '-1')


def test_errors_are_openmm_exceptions_not_bare_exceptions():
    with pytest.raises(openmm.OpenMMException):
        CoordinationForce([0, 1]).setR0(-1)
    try:
        CoordinationForce([0, 1]).setR0(-1)
    except Exception as error:
        assert isinstance(error, openmm.OpenMMException)
        assert re.search(r'r0.*-1', str(error))
