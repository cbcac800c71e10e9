"""The argument conversion and checks of the SWIG wrappers (python/coordination.i calls these before
the C++ methods of CoordinationForce and CoordinationBiasForce): particle indices become lists of
ints, per-pair values lists of floats (r0s in nm), the pairList flag a bool. A wrong type raises
TypeError, a value out of range openmm.OpenMMException; each message names the argument. This module
does not import the SWIG module, which imports it."""

import operator

import numpy as np
import openmm
from openmm import unit


def particleList(group, name):
    """The particle indices of a group as a list of ints. Accepts any sequence of integers (lists,
    tuples, ranges, NumPy integer arrays of any width); anything else, floats and bools included,
    raises TypeError naming the argument, and an index beyond a C++ int raises OpenMMException."""
    if isinstance(group, np.ndarray) and group.ndim == 1 and group.dtype.kind in 'iu':
        group = group.tolist()
    try:
        items = list(group)
    except TypeError:
        raise TypeError('CoordinationForce: %s must be a sequence of integer particle indices, got %r (%s)'
                        % (name, group, type(group).__name__)) from None
    # Plain ints in range (a large group: one pass in C); anything else is checked item by item below.
    if all(type(item) is int for item in items) and (not items or (-2**31 <= min(items) and max(items) < 2**31)):
        return items
    indices = []
    for position, item in enumerate(items):
        try:
            if isinstance(item, (bool, np.bool_)):
                raise TypeError
            index = operator.index(item)
        except TypeError:
            raise TypeError('CoordinationForce: %s has a particle index that is not an integer at position %d: %r (%s)'
                            % (name, position, item, type(item).__name__)) from None
        if not -2**31 <= index < 2**31:
            raise openmm.OpenMMException('CoordinationForce: %s has an invalid particle index at position %d: %d'
                                         % (name, position, index))
        indices.append(index)
    return indices


def pairValues(values, name, valueUnit):
    """Per-pair weights (valueUnit None) or r0s (valueUnit nm) as a list of floats: None means none
    (the defaults); accepts sequences, NumPy arrays and, for r0s, openmm.unit quantities of length."""
    if values is None:
        return []
    if unit.is_quantity(values):
        if valueUnit is None:
            raise TypeError('CoordinationForce: %s must be plain numbers, got a quantity in %s' % (name, values.unit))
        values = values.value_in_unit(valueUnit)
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError('CoordinationForce: %s must be a sequence of numbers, got %r' % (name, values)) from None
    if array.ndim != 1:
        raise TypeError('CoordinationForce: %s must be one-dimensional, got shape %s' % (name, array.shape))
    return [float(v) for v in array]


def inUnit(value, owner, name, valueUnit):
    """A number argument of ``owner`` (a method, 'CoordinationForce.setR0') in valueUnit: a Quantity is
    converted, as OpenMM's setters of distances do; one of another dimension raises TypeError naming the
    argument (it passed as a plain number before); anything else is passed on as it is."""
    if not unit.is_quantity(value):
        return value
    if not value.unit.is_compatible(valueUnit):
        raise TypeError('%s: %s must be a number in %s or a Quantity compatible with it, got %s'
                        % (owner, name, valueUnit, value))
    return value.value_in_unit(valueUnit)


def pairListFlag(flag):
    """The pairList argument: a bool (Python or NumPy), nothing else."""
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError('CoordinationForce: pairList must be a bool, got %r (%s)' % (flag, type(flag).__name__))
    return bool(flag)


def constructorArguments(args):
    """The positional arguments of CoordinationForce(), converted: (group) or (groupA, groupB[, pairList]);
    any further ones are passed on as they are (SWIG then finds no matching constructor)."""
    names = ('group',) if len(args) == 1 else ('groupA', 'groupB')
    return tuple(particleList(a, names[i]) if i < len(names) else pairListFlag(a) if i == 2 else a
                 for i, a in enumerate(args))


def groupsArguments(groupA, groupB, pairList):
    """The arguments of setGroups(groupA, groupB, pairList), converted and checked in that order."""
    return particleList(groupA, 'groupA'), particleList(groupB, 'groupB'), pairListFlag(pairList)


def pairParameterArguments(weights, r0s):
    """The arguments of setPairParameters(weights, r0s) as two lists of floats (r0s in nm; None: empty,
    the defaults)."""
    return pairValues(weights, 'weights', None), pairValues(r0s, 'r0s', unit.nanometer)


def pairsArguments(particlesA, particlesB, weights, r0s):
    """The arguments of setPairs(particlesA, particlesB, weights, r0s), converted and checked in that order."""
    return (particleList(particlesA, 'particlesA'), particleList(particlesB, 'particlesB'))\
        + pairParameterArguments(weights, r0s)


def checkOwned(variable, name):
    """Raise OpenMMException unless Python owns the CoordinationForce to be added as collective variable
    `name` to a CoordinationBiasForce (which then owns it)."""
    if not variable.thisown:
        raise openmm.OpenMMException('CoordinationBiasForce: collective variable "%s" is not owned by Python '
                                     '(it already belongs to a System or a CoordinationBiasForce)' % name)
