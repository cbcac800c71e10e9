"""Every bad input of the contract raises openmm.OpenMMException (not a bare Exception) with a
message that names the class, the parameter and the offending value."""

import math
import re

import numpy as np
import pytest

import openmm

from openmmcoordination import CoordinationForce

from helpers import make_system, raises_at_evaluation


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
    # several repeated: the first position that repeats an earlier index
    raises(lambda: CoordinationForce([5, 9, 7, 7, 5, 9]), 'group', 'repeats', 'position 3', '7')
    raises(lambda: CoordinationForce(list(range(100000)) + [99999, 4]), 'group', 'repeats', 'position 100000', '99999')
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


@pytest.mark.parametrize('bad,shown', [(0.5, '0.5 (float)'), (3.0, '3.0 (float)'), (np.float64(2.0), '(float64)'),
                                       (np.float32(1.0), '(float32)'), (True, 'True (bool)'), (np.True_, '(bool)'),
                                       ('2', "'2' (str)"), (None, 'None'), ([1], '[1] (list)')])
@pytest.mark.parametrize('call,name', [
    (lambda bad: CoordinationForce([0, bad]), 'group'),
    (lambda bad: CoordinationForce([bad, 0], [1, 2]), 'groupA'),
    (lambda bad: CoordinationForce([0, 1], [2, bad], True), 'groupB'),
    (lambda bad: CoordinationForce([0, 1]).setGroup([2, bad]), 'group'),
    (lambda bad: CoordinationForce([0, 1]).setGroups([0, 1], [2, bad]), 'groupB'),
    (lambda bad: CoordinationForce([0, 1]).setGroups([bad, 1], [2, 3], True), 'groupA')])
def test_indices_that_are_not_integers(call, name, bad, shown):
    # a float must not be truncated to a valid index (0.5 would silently become particle 0)
    with pytest.raises(TypeError) as info:
        call(bad)
    message = str(info.value)
    for word in ('CoordinationForce', name + ' has a particle index that is not an integer', shown):
        assert word in message, 'missing %r in %r' % (word, message)


@pytest.mark.parametrize('group', [np.array([0.0, 1.0]), 7, 'ab', None])
def test_groups_that_are_not_sequences_of_integers(group):
    with pytest.raises(TypeError, match='CoordinationForce: group'):
        CoordinationForce(group)
    force = CoordinationForce([4, 5])
    with pytest.raises(TypeError, match='CoordinationForce: groupA'):
        force.setGroups(group, [1])
    assert force.getGroupA() == [4, 5] and force.getMode() == CoordinationForce.OneGroup


@pytest.mark.parametrize('dtype', [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_integer_arrays_of_any_width(dtype):
    force = CoordinationForce(np.array([3, 0, 2], dtype=dtype), np.array([1, 4, 5], dtype=dtype), np.True_)
    assert force.getGroupA() == [3, 0, 2] and force.getGroupB() == [1, 4, 5]
    assert force.getMode() == CoordinationForce.PairList
    force.setGroup(np.arange(4, dtype=dtype))
    assert force.getGroupA() == [0, 1, 2, 3] and force.getNumPairs() == 6


def test_index_beyond_a_cpp_int():
    raises(lambda: CoordinationForce([0, 2**40]), 'group', 'invalid particle index', 'position 1', str(2**40))
    raises(lambda: CoordinationForce([0, 1], [-2**33]), 'groupB', str(-2**33))


@pytest.mark.parametrize('flag', [1, 0.5, 'yes', None])
def test_pair_list_flag_must_be_a_bool(flag):
    with pytest.raises(TypeError, match='CoordinationForce: pairList must be a bool'):
        CoordinationForce([0, 1], [2, 3], flag)


# ----- switching parameters -----

@pytest.mark.parametrize('value', [0.0, -0.2, math.inf, math.nan])
def test_r0_must_be_positive(value):
    raises(lambda: CoordinationForce([0, 1]).setR0(value), 'r0', '%g' % value)


@pytest.mark.parametrize('value', [0, -2])
def test_n_must_be_positive(value):
    raises(lambda: CoordinationForce([0, 1]).setN(value), 'n must be positive', str(value))


@pytest.mark.parametrize('setter', ['setN', 'setM'])
def test_exponents_must_be_at_most_max_exponent(setter):
    # Rational near x = 1 sums n + m terms per pair: n = 2**31 - 1 would take seconds per evaluation
    force = CoordinationForce([0, 1])
    for value in (2**31 - 1, CoordinationForce.MaxExponent + 1):
        raises(lambda: getattr(force, setter)(value), setter[-1].lower(), 'MaxExponent = 1000', str(value))
    getattr(force, setter)(CoordinationForce.MaxExponent)
    assert getattr(force, 'get' + setter[-1])() == CoordinationForce.MaxExponent


@pytest.mark.parametrize('r', [math.nan, math.inf])
def test_switching_function_at_a_distance_that_is_not_finite(r):
    raises(lambda: CoordinationForce([0, 1]).evaluateSwitchingFunction(r), 'evaluateSwitchingFunction', 'r', '%g' % r)


def test_switching_function_that_is_not_finite():
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Custom)
    force.setCustomExpression('log(x-2)')
    raises(lambda: force.evaluateSwitchingFunction(0.3), 'switching function is not finite', 'r = 0.3', 'nan')
    assert force.evaluateSwitchingFunction(0.9)[0] == pytest.approx(0.0)


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


@pytest.mark.parametrize('expression', ['cv^', 'cv*', '0.5*(cv-1', 'bias(cv, 2)'])
def test_energy_expression_that_does_not_parse_is_refused_at_once(expression):
    force = CoordinationForce([0, 1])
    raises(lambda: force.setEnergyExpression(expression), 'energy expression', 'parse', expression)
    assert force.getEnergyExpression() == 'cv'


def test_energy_expression_may_name_its_table_before_the_table_exists():
    force = CoordinationForce([0, 1])
    force.setEnergyExpression('bias(cv)+min(cv, 2)')
    force.addTabulatedFunction('bias', openmm.Continuous1DFunction([1.0, 1.0, 1.0], 0.0, 5.0))
    assert force.getEnergyExpression() == 'bias(cv)+min(cv, 2)'


def test_energy_expression_with_unknown_function():
    force = CoordinationForce([0, 1])
    force.setEnergyExpression('bias(cv)')
    raises(lambda: context_for(force), 'energy expression', 'bias')


@pytest.mark.parametrize('value', [math.nan, math.inf, -math.inf])
def test_global_parameter_default_must_be_finite(value):
    force = CoordinationForce([0, 1])
    raises(lambda: force.addGlobalParameter('k', value), 'global parameter', 'k', 'finite', '%g' % value)
    assert force.getNumGlobalParameters() == 0
    force.addGlobalParameter('k', 1e300)
    raises(lambda: force.setGlobalParameterDefaultValue(0, value), 'k', '%g' % value)
    assert force.getGlobalParameterDefaultValue(0) == 1e300


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


@pytest.mark.parametrize('bins', [10**9, 2**31 - 1, CoordinationForce.MaxHistogramBins + 1])
def test_histogram_too_large_to_allocate(platform_config, bins):
    # refused before anything is allocated: 10**9 bins would be 8 GB of counts (on the GPU too on CUDA)
    force = CoordinationForce([0, 1, 2])
    system = make_system(3)
    system.addForce(force)
    context = platform_config.context(system)
    context.setPositions(np.eye(3))
    limit = 'MaxHistogramBins = %d' % CoordinationForce.MaxHistogramBins
    raises(lambda: force.getPairHistogram(context, bins, 1.0), 'numBins', limit, str(bins))
    raises(lambda: force.accumulatePairHistogram(context, bins, 1.0), 'numBins', limit, str(bins))
    assert force.getNumAccumulatedFrames(context) == 0
    assert len(force.getAccumulatedPairHistogram(context)) == 0
    counts = force.getPairHistogram(context, 1000, 2.0)
    assert counts.sum() == 3 and counts[int(math.sqrt(2) / 0.002)] == 3


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
    with pytest.raises(Exception) as info:
        CoordinationForce([0, 1]).setR0(-1)
    assert type(info.value) is openmm.OpenMMException
    assert re.search(r'r0.*-1', str(info.value))


# ----- values that are not finite, reaching the energy -----

def five_particle_context(platform_config, force):
    system = make_system(5)
    system.addForce(force)
    context = platform_config.context(system)
    context.setPositions(np.array([[0, 0, 0], [0.21, 0.05, -0.1], [0.1, 0.3, 0.12], [-0.3, 0.4, 0.5], [0.5, -0.2, 0.3]]))
    return context


def energy(context):
    return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(openmm.unit.kilojoule_per_mole)


def test_global_parameter_set_to_nan_in_the_context(platform_config):
    force = CoordinationForce([0, 1, 2], [3, 4])
    force.addGlobalParameter('k', 2.0)
    force.setEnergyExpression('0.5*k*(cv-4)^2')
    context = five_particle_context(platform_config, force)
    cv = force.getCollectiveVariableValue(context)
    assert energy(context) == pytest.approx((cv - 4)**2, rel=platform_config.value_rtol)
    context.setParameter('k', math.nan)
    raises_at_evaluation(lambda: energy(context), context, 'CoordinationForce', 'energy expression', '"0.5*k*(cv-4)^2"',
                         'non-finite', 'k = nan', 'cv = ')
    # Forces alone, and a step: the error at once (Reference, CPU), or at the next energy read (CUDA
    # reads nothing back during a step, and adds no force meanwhile).
    raises_at_evaluation(lambda: context.getState(getForces=True) and None, context, 'k = nan')
    raises_at_evaluation(lambda: context.getIntegrator().step(1), context, 'k = nan', waits=False)
    assert force.getCollectiveVariableValue(context) == pytest.approx(cv, rel=platform_config.value_rtol)
    context.setParameter('k', 4.0)
    assert energy(context) == pytest.approx(2 * (cv - 4)**2, rel=platform_config.value_rtol)


def system_xml(edit=None, expression='k*bias(cv)', default=2.0):
    """The XML of a five-particle System holding a force with a parameter and a table, edited."""
    force = CoordinationForce([0, 1, 2], [3, 4])
    force.addGlobalParameter('k', default)
    force.addTabulatedFunction('bias', openmm.Continuous1DFunction([0.0, 1.0, 2.0, 3.0], 0.0, 6.0))
    force.setEnergyExpression(expression)
    system = make_system(5)
    system.addForce(force)
    xml = openmm.XmlSerializer.serialize(system)
    if edit is not None:
        assert edit[0] in xml
        xml = xml.replace(edit[0], edit[1], 1)
    return xml


@pytest.mark.leaks_context   # a failing Context creation on CUDA (refused before the device context exists: leaks nothing)
@pytest.mark.parametrize('edit,words', [(('max="6"', 'max="inf"'), ('max inf',)),
                                        (('min="0"', 'min="nan"'), ('min nan',)),
                                        (('<Value v="1"/>', '<Value v="inf"/>'), ('index 1', 'inf')),
                                        (('<Value v="2"/>', '<Value v="nan"/>'), ('index 2', 'nan'))])
def test_table_that_is_not_finite_read_from_xml(platform_config, edit, words):
    system = openmm.XmlSerializer.deserialize(system_xml(edit))
    raises(lambda: platform_config.context(system), 'tabulated function "bias"', *words)


def test_table_updated_to_a_value_that_is_not_finite(platform_config):
    force = CoordinationForce([0, 1, 2], [3, 4])
    force.addTabulatedFunction('bias', openmm.Continuous1DFunction([1.0, 1.0, 1.0], 0.0, 10.0))
    force.setEnergyExpression('bias(cv)')
    context = five_particle_context(platform_config, force)
    assert energy(context) == pytest.approx(1.0, rel=platform_config.table_value_rtol)
    force.getTabulatedFunction(0).setFunctionParameters([1.0, math.inf, 1.0], 0.0, 10.0)
    raises(lambda: force.updateParametersInContext(context), 'tabulated function "bias"', 'index 1', 'inf')


def test_global_parameter_default_of_1e300_read_from_xml(platform_config):
    system = openmm.XmlSerializer.deserialize(system_xml(('default="2"', 'default="1e300"'), expression='k^2*cv'))
    context = platform_config.context(system)
    context.setPositions(np.array([[0, 0, 0], [0.21, 0.05, -0.1], [0.1, 0.3, 0.12], [-0.3, 0.4, 0.5], [0.5, -0.2, 0.3]]))
    raises_at_evaluation(lambda: energy(context), context, 'CoordinationForce', '"k^2*cv"', 'energy inf', 'k = 1e+300')
    context.setParameter('k', 3.0)
    cv = CoordinationForce([0, 1, 2], [3, 4])
    assert energy(context) == pytest.approx(9 * cv.getCollectiveVariableValue(five_particle_context(platform_config, cv)),
                                            rel=platform_config.table_value_rtol)


@pytest.mark.parametrize('mode', ['3', '-1'])
def test_unknown_mode_in_xml(mode):
    # only 0, 1 and 2 are modes: anything else must not be read as one of them
    raises(lambda: openmm.XmlSerializer.deserialize(system_xml(('mode="1"', 'mode="%s"' % mode))), 'mode', mode)


def test_global_parameter_default_that_is_not_finite_in_xml():
    raises(lambda: openmm.XmlSerializer.deserialize(system_xml(('default="2"', 'default="nan"'))), '"k"', 'finite', 'nan')


def test_collective_variable_that_is_not_finite(platform_config):
    force = CoordinationForce([0, 1, 2], [3, 4])
    force.setSwitchingFunction(CoordinationForce.Custom)
    force.setCustomExpression('log(x-2)')    # NaN for r < 2 r0
    context = five_particle_context(platform_config, force)
    raises(lambda: force.getCollectiveVariableValue(context), 'collective variable is not finite', 'nan')
    raises_at_evaluation(lambda: energy(context), context, 'CoordinationForce', 'not finite')
