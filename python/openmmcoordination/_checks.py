"""Checks of arguments shared by the pure-Python modules (metadynamics, reweighting): each error is a
ValueError whose message names the class or function, the parameter and the value."""

import math
import numbers

from openmm import unit


def _error(owner, message, *args):
    return ValueError('%s: %s' % (owner, message % args if args else message))


def _isInteger(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _shown(value):
    """A value as an error message shows it: a Quantity as value and unit ("1.0 nm", the same on every
    OpenMM version, whose reprs differ), anything else by its repr."""
    return str(value) if unit.is_quantity(value) else repr(value)


def _positiveQuantity(value, defaultUnit, owner, name, kind):
    """The value of a Quantity (or number, taken in defaultUnit) in defaultUnit, checked finite and > 0."""
    try:
        number = value.value_in_unit(defaultUnit) if unit.is_quantity(value) else float(value)
    except (TypeError, ValueError, AttributeError):
        raise _error(owner, '%s must be %s, got %s', name, kind, _shown(value)) from None
    if not math.isfinite(number) or number <= 0:
        raise _error(owner, '%s must be positive and finite, got %s', name, _shown(value))
    return number


def _simulation(owner, method, simulation):
    """Check that ``simulation`` is what ``method`` takes, an openmm.app.Simulation (not its Context): what
    has a ``context`` (and for step() a ``currentStep``)."""
    if not hasattr(simulation, 'context') or (method == 'step' and not hasattr(simulation, 'currentStep')):
        raise _error(owner, '%s: simulation must be an openmm.app.Simulation, got %s%s', method, type(simulation).__name__,
                     ' (give the Simulation, not its Context)' if hasattr(simulation, 'getIntegrator') else '')
    return simulation


def _steps(owner, steps):
    """The number of steps of step(), checked: an integer (2.5 is not silently 2); one below 0 runs no
    step, as Simulation.step() and openmm.app's Metadynamics.step()."""
    if not _isInteger(steps):
        raise _error(owner, 'step: steps must be an integer, got %r', steps)
    return max(int(steps), 0)
