/* SWIG interface of openmm-coordination. The classes come from the C++ headers themselves, so
 * their Doxygen comments become the Python docstrings (swig -doxygen). */
%module(package="openmmcoordination") coordination

%import(module="openmm") "swig/OpenMMSwigHeaders.i"
%include "swig/typemaps.i"
%include "std_string.i"
%include "std_vector.i"

namespace std {
    %template(vectori) vector<int>;
    %template(vectorll) vector<long long>;
}

%{
#include <climits>
#include "CoordinationBiasForce.h"
#include "CoordinationForce.h"
#include "OpenMM.h"
#include "OpenMMAmoeba.h"
#include "OpenMMDrude.h"
#include "openmm/RPMDIntegrator.h"
#include "openmm/RPMDMonteCarloBarostat.h"
#include "openmm/serialization/XmlSerializer.h"
%}

/* C++ exceptions arrive in Python as openmm.OpenMMException. */
%exception {
    try {
        $action
    } catch (std::exception& e) {
        PyObject* module = PyImport_ImportModule("openmm");
        PyObject* exceptionType = (module == NULL ? NULL : PyObject_GetAttrString(module, "OpenMMException"));
        PyErr_SetString(exceptionType == NULL ? PyExc_Exception : exceptionType, e.what());
        Py_XDECREF(exceptionType);
        Py_XDECREF(module);
        SWIG_fail;
    }
}

%pythoncode %{
import operator as _operator
import numpy as _np
import openmm as _openmm
from openmm import unit as _unit

def _particleList(group, name):
    """The particle indices of a group as a list of ints. Accepts any sequence of integers (lists,
    tuples, ranges, NumPy integer arrays of any width); anything else, floats and bools included,
    raises TypeError naming the argument, and an index beyond a C++ int raises OpenMMException."""
    if isinstance(group, _np.ndarray) and group.ndim == 1 and group.dtype.kind in 'iu':
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
            if isinstance(item, (bool, _np.bool_)):
                raise TypeError
            index = _operator.index(item)
        except TypeError:
            raise TypeError('CoordinationForce: %s has a particle index that is not an integer at position %d: %r (%s)'
                            % (name, position, item, type(item).__name__)) from None
        if not -2**31 <= index < 2**31:
            raise _openmm.OpenMMException('CoordinationForce: %s has an invalid particle index at position %d: %d'
                                          % (name, position, index))
        indices.append(index)
    return indices

def _pairValues(values, name, unit):
    """Per-pair weights (unit None) or r0s (unit nm) as a list of floats: None means none (the
    defaults); accepts sequences, NumPy arrays and, for r0s, openmm.unit quantities of length."""
    if values is None:
        return []
    if _unit.is_quantity(values):
        if unit is None:
            raise TypeError('CoordinationForce: %s must be plain numbers, got a quantity in %s' % (name, values.unit))
        values = values.value_in_unit(unit)
    try:
        array = _np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError('CoordinationForce: %s must be a sequence of numbers, got %r' % (name, values)) from None
    if array.ndim != 1:
        raise TypeError('CoordinationForce: %s must be one-dimensional, got shape %s' % (name, array.shape))
    return [float(v) for v in array]

def _pairListFlag(flag):
    """The pairList argument: a bool (Python or NumPy), nothing else."""
    if not isinstance(flag, (bool, _np.bool_)):
        raise TypeError('CoordinationForce: pairList must be a bool, got %r (%s)' % (flag, type(flag).__name__))
    return bool(flag)
%}

%pythonprepend CoordinationPlugin::CoordinationForce::CoordinationForce %{
    names = ('group',) if len(args) == 1 else ('groupA', 'groupB')
    args = tuple(_particleList(a, names[i]) if i < len(names) else _pairListFlag(a) if i == 2 else a
                 for i, a in enumerate(args))
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroup %{
    group = _particleList(group, 'group')
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroups %{
    groupA = _particleList(groupA, 'groupA')
    groupB = _particleList(groupB, 'groupB')
    pairList = _pairListFlag(pairList)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getPairWeights %{
    val = _np.array(val, dtype=float)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getPairR0s %{
    val = _unit.Quantity(_np.array(val, dtype=float), _unit.nanometer)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getBeta %{
    val = _unit.Quantity(val, 1/_unit.nanometer)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getGroupA %{
    val = list(val)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getGroupB %{
    val = list(val)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getR0 %{
    val = _unit.Quantity(val, _unit.nanometer)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getD0 %{
    val = _unit.Quantity(val, _unit.nanometer)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getDMax %{
    val = _unit.Quantity(val, _unit.nanometer)
%}
%pythonappend CoordinationPlugin::CoordinationForce::addTabulatedFunction %{
    function.thisown = 0
%}
%pythonappend CoordinationPlugin::CoordinationForce::getPairHistogram %{
    val = _np.array(val, dtype=_np.int64)
%}
%pythonappend CoordinationPlugin::CoordinationForce::getAccumulatedPairHistogram %{
    val = _np.array(val, dtype=_np.int64)
%}

%factory(OpenMM::TabulatedFunction& CoordinationPlugin::CoordinationForce::getTabulatedFunction, OpenMM::Continuous1DFunction);
%ignore CoordinationPlugin::CoordinationForce::getTabulatedFunction(int) const;
%apply double& OUTPUT {double& dsdr};
/* Per-pair values cross as plain lists of floats (the Python layer converts NumPy arrays and
 * quantities first); OpenMM's own typemap for them needs NumPy's C API, which this module does not set up. */
%typemap(in) const std::vector<double>& (std::vector<double> values) {
    PyObject* sequence = PySequence_Fast($input, "CoordinationForce: expected a sequence of numbers");
    if (sequence == NULL)
        SWIG_fail;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    values.resize(size);
    for (Py_ssize_t i = 0; i < size; i++) {
        values[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sequence, i));
        if (PyErr_Occurred()) {
            Py_DECREF(sequence);
            SWIG_fail;
        }
    }
    Py_DECREF(sequence);
    $1 = &values;
}
/* Particle indices cross as lists of ints (_particleList checked them): one PyLong_AsLong each,
 * where SWIG's own typemap for std::vector<int> checks and converts each item twice. */
%typemap(in) const std::vector<int>& (std::vector<int> values) {
    PyObject* sequence = PySequence_Fast($input, "CoordinationForce: expected a sequence of integer particle indices");
    if (sequence == NULL)
        SWIG_fail;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    values.resize(size);
    for (Py_ssize_t i = 0; i < size; i++) {
        long value = PyLong_AsLong(PySequence_Fast_GET_ITEM(sequence, i));
        if (PyErr_Occurred() || value < INT_MIN || value > INT_MAX) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_OverflowError, "CoordinationForce: a particle index does not fit a C++ int");
            Py_DECREF(sequence);
            SWIG_fail;
        }
        values[i] = (int) value;
    }
    Py_DECREF(sequence);
    $1 = &values;
}
%typemap(freearg) const std::vector<int>& ""
%typemap(typecheck, precedence=SWIG_TYPECHECK_INT32_ARRAY) const std::vector<int>& {
    $1 = (PySequence_Check($input) && !PyUnicode_Check($input)) ? 1 : 0;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_DOUBLE_ARRAY) const std::vector<double>& {
    $1 = PySequence_Check($input) ? 1 : 0;
}
%typemap(out) const std::vector<double>& {
    $result = PyList_New($1->size());
    for (size_t i = 0; i < $1->size(); i++)
        PyList_SET_ITEM($result, i, PyFloat_FromDouble((*$1)[i]));
}
/* weights and r0s may be left out in Python (None or nothing: the defaults). */
%feature("shadow") CoordinationPlugin::CoordinationForce::setPairs %{
    def setPairs(self, particlesA, particlesB, weights=None, r0s=None):
        """Switch to pair-list mode with a weight and a reference distance r0 per pair (NumPy
        arrays, sequences; r0s may be a Quantity of length). weights None: 1 each; r0s None: the
        force's r0. See the C++ documentation of setPairs and setPairParameters."""
        particlesA = _particleList(particlesA, 'particlesA')
        particlesB = _particleList(particlesB, 'particlesB')
        weights = _pairValues(weights, 'weights', None)
        r0s = _pairValues(r0s, 'r0s', _unit.nanometer)
        return $action(self, particlesA, particlesB, weights, r0s)
%}
%feature("shadow") CoordinationPlugin::CoordinationForce::setPairParameters %{
    def setPairParameters(self, weights=None, r0s=None):
        """Set the weight and r0 of every pair of a pair list, keeping the pairs (None: the
        defaults, 1 and the force's r0). Change them in a Context with updateParametersInContext."""
        weights = _pairValues(weights, 'weights', None)
        r0s = _pairValues(r0s, 'r0s', _unit.nanometer)
        return $action(self, weights, r0s)
%}

/* CoordinationBiasForce: the CVs and tables it is given become its own (C++ deletes them), as
 * OpenMM's wrappers do for CustomCVForce.addCollectiveVariable and System.addForce. */
%pythonprepend CoordinationPlugin::CoordinationBiasForce::addCollectiveVariable %{
    if not variable.thisown:
        raise _openmm.OpenMMException('CoordinationBiasForce: collective variable "%s" is not owned by Python '
                                      '(it already belongs to a System or a CoordinationBiasForce)' % name)
%}
%pythonappend CoordinationPlugin::CoordinationBiasForce::addCollectiveVariable %{
    variable.thisown = 0
%}
%pythonappend CoordinationPlugin::CoordinationBiasForce::addTabulatedFunction %{
    function.thisown = 0
%}
%pythonappend CoordinationPlugin::CoordinationBiasForce::getCollectiveVariableValues %{
    val = [float(v) for v in val]
%}
%factory(OpenMM::TabulatedFunction& CoordinationPlugin::CoordinationBiasForce::getTabulatedFunction, OpenMM::Continuous1DFunction,
         OpenMM::Continuous2DFunction, OpenMM::Continuous3DFunction);
%ignore CoordinationPlugin::CoordinationBiasForce::getTabulatedFunction(int) const;
%ignore CoordinationPlugin::CoordinationBiasForce::getCollectiveVariable(int) const;
%typemap(out) std::vector<double> {
    const std::vector<double>& values = $1;
    $result = PyList_New(values.size());
    for (size_t i = 0; i < values.size(); i++)
        PyList_SET_ITEM($result, i, PyFloat_FromDouble(values[i]));
}

#define OPENMM_EXPORT_COORDINATION
%include "CoordinationForce.h"
%include "CoordinationBiasForce.h"
%clear double& dsdr;

%newobject CoordinationPlugin::_cloneForce;
%newobject CoordinationPlugin::_cloneBiasForce;
%inline %{
namespace CoordinationPlugin {
/** Clone a force through its serialization proxy (copy.copy and copy.deepcopy use this). */
CoordinationForce* _cloneForce(const CoordinationForce& force) {
    return OpenMM::XmlSerializer::clone<CoordinationForce>(force);
}
/**
 * The CoordinationForce a Force of a System is (the System keeps it), or None: system.getForce()
 * of a System read from XML gives a plain Force (the fuzzer of python/tests uses this).
 */
CoordinationForce* _castForce(OpenMM::Force& force) {
    return dynamic_cast<CoordinationForce*>(&force);
}
/** Clone a CoordinationBiasForce through its serialization proxy (copy.copy and copy.deepcopy use this). */
CoordinationBiasForce* _cloneBiasForce(const CoordinationBiasForce& force) {
    return OpenMM::XmlSerializer::clone<CoordinationBiasForce>(force);
}
}
%}

%extend CoordinationPlugin::CoordinationForce {
    %pythoncode %{
    def __copy__(self):
        return _cloneForce(self)

    def __deepcopy__(self, memo):
        return _cloneForce(self)
    %}
}

%extend CoordinationPlugin::CoordinationBiasForce {
    %pythoncode %{
    def __copy__(self):
        return _cloneBiasForce(self)

    def __deepcopy__(self, memo):
        return _cloneBiasForce(self)
    %}
}
