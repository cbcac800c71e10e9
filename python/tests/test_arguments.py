"""openmmcoordination._arguments on its own (no force, no Context): what the SWIG wrappers pass on
to C++ and the errors they raise before. test_errors.py and test_pair_parameters.py check the
same through CoordinationForce."""

import types

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import _arguments


@pytest.mark.parametrize('group', [[3, 0, 2], (3, 0, 2), np.array([3, 0, 2], dtype=np.int8),
                                   np.array([3, 0, 2], dtype=np.uint64), [np.int32(3), 0, np.int64(2)]])
def test_particle_list_of_integers(group):
    indices = _arguments.particleList(group, 'group')
    assert indices == [3, 0, 2] and all(type(i) is int for i in indices)


def test_particle_list_of_a_range_and_of_nothing():
    assert _arguments.particleList(range(4), 'group') == [0, 1, 2, 3]
    assert _arguments.particleList([], 'group') == []
    assert _arguments.particleList(np.arange(0), 'group') == []


@pytest.mark.parametrize('bad,shown', [(0.5, '0.5 (float)'), (np.float32(1.0), '(float32)'), (True, 'True (bool)'),
                                       (np.True_, '(bool)'), ('2', "'2' (str)"), (None, 'None (NoneType)')])
def test_particle_list_item_that_is_not_an_integer(bad, shown):
    with pytest.raises(TypeError) as info:
        _arguments.particleList([0, 1, bad], 'groupB')
    assert str(info.value).startswith('CoordinationForce: groupB has a particle index that is not an integer '
                                      'at position 2: ')
    assert str(info.value).endswith(shown)


@pytest.mark.parametrize('group,shown', [(7, '7 (int)'), (None, 'None (NoneType)')])
def test_particle_list_of_something_else(group, shown):
    with pytest.raises(TypeError) as info:
        _arguments.particleList(group, 'groupA')
    assert str(info.value) == 'CoordinationForce: groupA must be a sequence of integer particle indices, got ' + shown


def test_particle_list_of_floats_in_an_array():
    with pytest.raises(TypeError) as info:
        _arguments.particleList(np.array([0.0, 1.0]), 'group')
    assert 'CoordinationForce: group has a particle index that is not an integer at position 0: ' in str(info.value)
    assert str(info.value).endswith('(float64)')


@pytest.mark.parametrize('index', [2**31, -2**31 - 1, 2**40])
def test_particle_index_beyond_a_cpp_int(index):
    with pytest.raises(openmm.OpenMMException) as info:
        _arguments.particleList([0, index], 'particlesA')
    assert str(info.value) == 'CoordinationForce: particlesA has an invalid particle index at position 1: %d' % index
    assert _arguments.particleList([2**31 - 1, -2**31], 'group') == [2**31 - 1, -2**31]


def test_pair_values():
    assert _arguments.pairValues(None, 'weights', None) == []
    assert _arguments.pairValues([1, 0.5], 'weights', None) == [1.0, 0.5]
    values = _arguments.pairValues(np.array([0.3, 0.4], dtype=np.float32), 'r0s', unit.nanometer)
    assert all(type(v) is float for v in values) and values == pytest.approx([0.3, 0.4])
    assert _arguments.pairValues([3.0, 4.0]*unit.angstrom, 'r0s', unit.nanometer) == pytest.approx([0.3, 0.4])


def test_pair_values_errors():
    with pytest.raises(TypeError) as info:
        _arguments.pairValues([1, 1]*unit.nanometer, 'weights', None)
    assert str(info.value) == 'CoordinationForce: weights must be plain numbers, got a quantity in nanometer'
    with pytest.raises(TypeError) as info:
        _arguments.pairValues(['a', 'b'], 'r0s', unit.nanometer)
    assert str(info.value) == "CoordinationForce: r0s must be a sequence of numbers, got ['a', 'b']"
    with pytest.raises(TypeError) as info:
        _arguments.pairValues([[1.0, 2.0]], 'weights', None)
    assert str(info.value) == 'CoordinationForce: weights must be one-dimensional, got shape (1, 2)'


def test_pair_list_flag():
    assert _arguments.pairListFlag(np.True_) is True and _arguments.pairListFlag(False) is False
    for flag, shown in [(1, '1 (int)'), (0.5, '0.5 (float)'), ('yes', "'yes' (str)"), (None, 'None (NoneType)')]:
        with pytest.raises(TypeError) as info:
            _arguments.pairListFlag(flag)
        assert str(info.value) == 'CoordinationForce: pairList must be a bool, got ' + shown


def test_constructor_arguments():
    assert _arguments.constructorArguments(()) == ()
    assert _arguments.constructorArguments((range(2),)) == ([0, 1],)
    assert _arguments.constructorArguments((range(2), (2, 3))) == ([0, 1], [2, 3])
    assert _arguments.constructorArguments(([0], [1], np.True_, 'more')) == ([0], [1], True, 'more')
    with pytest.raises(TypeError, match='CoordinationForce: group has a particle index'):
        _arguments.constructorArguments(([0.5],))
    with pytest.raises(TypeError, match='CoordinationForce: groupB has a particle index'):
        _arguments.constructorArguments(([0], [0.5]))
    with pytest.raises(TypeError, match='CoordinationForce: pairList must be a bool'):
        _arguments.constructorArguments(([0], [1], 1))


def test_setter_arguments_are_checked_in_order():
    assert _arguments.groupsArguments((0,), range(1, 3), False) == ([0], [1, 2], False)
    with pytest.raises(TypeError, match='groupA has'):
        _arguments.groupsArguments([0.5], [0.5], 1)
    with pytest.raises(TypeError, match='groupB has'):
        _arguments.groupsArguments([0], [0.5], 1)
    assert _arguments.pairParameterArguments(None, [3.0]*unit.angstrom) == ([], pytest.approx([0.3]))
    assert _arguments.pairsArguments(np.arange(2), [2, 3], [1, 2], None) == ([0, 1], [2, 3], [1.0, 2.0], [])
    with pytest.raises(TypeError, match='particlesB has'):
        _arguments.pairsArguments([0], [0.5], 'x', 'y')
    with pytest.raises(TypeError, match='weights must be'):
        _arguments.pairsArguments([0], [1], 'x', 'y')
    with pytest.raises(TypeError, match='weights must be'):
        _arguments.pairParameterArguments(['x'], ['y'])


def test_check_owned():
    _arguments.checkOwned(types.SimpleNamespace(thisown=True), 'cv')
    with pytest.raises(openmm.OpenMMException) as info:
        _arguments.checkOwned(types.SimpleNamespace(thisown=False), 'cv')
    assert str(info.value) == ('CoordinationBiasForce: collective variable "cv" is not owned by Python (it already '
                               'belongs to a System or a CoordinationBiasForce)')
