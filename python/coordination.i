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
#include <sstream>
#include "CoordinationBiasForce.h"
#include "CoordinationForce.h"
#include "internal/CoordinationWarnings.h"
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

/* The arguments are converted and checked in openmmcoordination/_arguments.py (Python, linted and
 * tested on its own) before they reach the typemaps below; the return values become lists, NumPy
 * arrays and quantities here. */
%pythoncode %{
import numpy as _np
import openmm as _openmm
from openmm import unit as _unit
from openmmcoordination import _arguments
%}

%pythonprepend CoordinationPlugin::CoordinationForce::CoordinationForce %{
    args = _arguments.constructorArguments(args)
%}
/* Distances given as Quantities are converted to nm (beta to 1/nm), as OpenMM's setters do; a Quantity of
 * another dimension is a TypeError naming the argument. */
%pythonprepend CoordinationPlugin::CoordinationForce::setR0 %{
    r0 = _arguments.inUnit(r0, 'CoordinationForce.setR0', 'r0', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setD0 %{
    d0 = _arguments.inUnit(d0, 'CoordinationForce.setD0', 'd0', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setDMax %{
    dmax = _arguments.inUnit(dmax, 'CoordinationForce.setDMax', 'dmax', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setBeta %{
    beta = _arguments.inUnit(beta, 'CoordinationForce.setBeta', 'beta', _unit.nanometer**-1)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::evaluateSwitchingFunction %{
    r = _arguments.inUnit(r, 'CoordinationForce.evaluateSwitchingFunction', 'r', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::evaluatePairSwitchingFunction %{
    r = _arguments.inUnit(r, 'CoordinationForce.evaluatePairSwitchingFunction', 'r', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::getPairHistogram %{
    maxDistance = _arguments.inUnit(maxDistance, 'CoordinationForce.getPairHistogram', 'maxDistance', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::accumulatePairHistogram %{
    maxDistance = _arguments.inUnit(maxDistance, 'CoordinationForce.accumulatePairHistogram', 'maxDistance', _unit.nanometer)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroup %{
    group = _arguments.particleList(group, 'group')
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroups %{
    groupA, groupB, pairList = _arguments.groupsArguments(groupA, groupB, pairList)
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
%pythonappend CoordinationPlugin::CoordinationForce::getCoordinationNumbers %{
    val = _np.array(val, dtype=float)
%}
/* evaluateParticleFunction(c) returns (F, dF/dc as a NumPy array). */
%typemap(in, numinputs=0) std::vector<double>& dFdc (std::vector<double> temp) {
    $1 = &temp;
}
%typemap(argout) std::vector<double>& dFdc {
    PyObject* gradient = PyList_New($1->size());
    for (size_t i = 0; i < $1->size(); i++)
        PyList_SET_ITEM(gradient, i, PyFloat_FromDouble((*$1)[i]));
    %append_output(gradient);
}
%pythonappend CoordinationPlugin::CoordinationForce::evaluateParticleFunction %{
    val = (float(val[0]), _np.array(val[1], dtype=float))
%}

%factory(OpenMM::TabulatedFunction& CoordinationPlugin::CoordinationForce::getTabulatedFunction, OpenMM::Continuous1DFunction);
%ignore CoordinationPlugin::CoordinationForce::getTabulatedFunction(int) const;
%apply double& OUTPUT {double& dsdr};
/* Per-pair values cross as plain lists of floats (_arguments.pairValues converts NumPy arrays and
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
/* Particle indices cross as lists of ints (_arguments.particleList checked them): one PyLong_AsLong each,
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
        return $action(self, *_arguments.pairsArguments(particlesA, particlesB, weights, r0s))
%}
%feature("shadow") CoordinationPlugin::CoordinationForce::setPairParameters %{
    def setPairParameters(self, weights=None, r0s=None):
        """Set the weight and r0 of every pair of a pair list, keeping the pairs (None: the
        defaults, 1 and the force's r0). Change them in a Context with updateParametersInContext."""
        return $action(self, *_arguments.pairParameterArguments(weights, r0s))
%}

/* CoordinationBiasForce: the CVs and tables it is given become its own (C++ deletes them), as
 * OpenMM's wrappers do for CustomCVForce.addCollectiveVariable and System.addForce. */
%pythonprepend CoordinationPlugin::CoordinationBiasForce::addCollectiveVariable %{
    _arguments.checkOwned(variable, name)
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
/* getDistanceParameters(index) returns [particle1, particle2, component, usePeriodic]. */
%apply int& OUTPUT {int& particle1, int& particle2, int& component};
%apply bool& OUTPUT {bool& usePeriodic};
/* getCVStatistics(context) returns (mean, m2, count): NumPy arrays and an int (%extend below). */
%ignore CoordinationPlugin::CoordinationBiasForce::getCVStatistics;
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
%clear int& particle1, int& particle2, int& component, bool& usePeriodic;

%newobject CoordinationPlugin::_cloneForce;
%newobject CoordinationPlugin::_cloneBiasForce;
%newobject CoordinationPlugin::_deserializeForce;
%newobject CoordinationPlugin::_deserializeBiasForce;
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
/** The CoordinationBiasForce a Force of a System is, or None (as _castForce). */
CoordinationBiasForce* _castBiasForce(OpenMM::Force& force) {
    return dynamic_cast<CoordinationBiasForce*>(&force);
}
/** A CoordinationForce from its XML (pickle uses this). */
CoordinationForce* _deserializeForce(const std::string& xml) {
    std::istringstream stream(xml);
    return OpenMM::XmlSerializer::deserialize<CoordinationForce>(stream);
}
/** A CoordinationBiasForce from its XML (pickle uses this). */
CoordinationBiasForce* _deserializeBiasForce(const std::string& xml) {
    std::istringstream stream(xml);
    return OpenMM::XmlSerializer::deserialize<CoordinationBiasForce>(stream);
}
}
%}

%extend CoordinationPlugin::CoordinationForce {
    %pythoncode %{
    def __copy__(self):
        return _cloneForce(self)

    def __deepcopy__(self, memo):
        return _cloneForce(self)

    def __getstate__(self):
        return _openmm.XmlSerializer.serialize(self)

    def __setstate__(self, xml):
        # a CoordinationForce, not the bare Force that openmm.Force.__setstate__ would make
        force = _deserializeForce(xml)
        self.this = force.this
        force.thisown = False
        self.thisown = True

    @staticmethod
    def cast(force):
        """The CoordinationForce that ``force`` is, or None if it is another kind: system.getForce(i),
        system.getForces() and XmlSerializer.deserialize() give an openmm.Force, whose methods are
        Force's only. The result is the same object: where a System owns it (getForce()), the System
        keeps it; where Python owns ``force`` (XmlSerializer.deserialize()), the result takes it over,
        so that it lives as long as the result does (and can be added to a System)."""
        result = _castForce(force)
        if result is not None and force.thisown:
            # without this, the object would be deleted with ``force``'s wrapper, under the result
            force.thisown = False
            result.thisown = True
        return result
    %}
}

%extend CoordinationPlugin::CoordinationBiasForce {
    /* The statistics as one tuple (mean list, m2 list, count): several output arguments would meet
     * SWIG's appending of outputs, which differs between SWIG versions. */
    PyObject* _getCVStatistics(OpenMM::Context& context) const {
        std::vector<double> mean, m2;
        long long count;
        self->getCVStatistics(context, mean, m2, count);
        PyObject* meanList = PyList_New(mean.size());
        PyObject* m2List = PyList_New(m2.size());
        for (size_t i = 0; i < mean.size(); i++) {
            PyList_SET_ITEM(meanList, i, PyFloat_FromDouble(mean[i]));
            PyList_SET_ITEM(m2List, i, PyFloat_FromDouble(m2[i]));
        }
        return Py_BuildValue("(NNL)", meanList, m2List, count);
    }
    %pythoncode %{
    def getCVStatistics(self, context):
        """The running statistics of the CVs in a Context (setCVStatisticsStride), through its
        current step: (mean, m2, count), the mean and the sum of squared deviations of each CV (NumPy
        arrays; the variance is m2/count) and the number of steps counted. See the C++
        documentation of getCVStatistics."""
        mean, m2, count = self._getCVStatistics(context)
        return _np.array(mean, dtype=float), _np.array(m2, dtype=float), int(count)

    def __copy__(self):
        return _cloneBiasForce(self)

    def __deepcopy__(self, memo):
        return _cloneBiasForce(self)

    def __getstate__(self):
        return _openmm.XmlSerializer.serialize(self)

    def __setstate__(self, xml):
        # a CoordinationBiasForce, not the bare Force that openmm.Force.__setstate__ would make
        force = _deserializeBiasForce(xml)
        self.this = force.this
        force.thisown = False
        self.thisown = True

    @staticmethod
    def cast(force):
        """The CoordinationBiasForce that ``force`` is, or None if it is another kind: system.getForce(i),
        system.getForces() and XmlSerializer.deserialize() give an openmm.Force, whose methods are
        Force's only. The result is the same object: where a System owns it (getForce()), the System
        keeps it; where Python owns ``force`` (XmlSerializer.deserialize()), the result takes it over,
        so that it lives as long as the result does (and can be added to a System)."""
        result = _castBiasForce(force)
        if result is not None and force.thisown:
            # without this, the object would be deleted with ``force``'s wrapper, under the result
            force.thisown = False
            result.thisown = True
        return result
    %}
}

/* The plugin's warnings (CoordinationWarnings) become Python warnings of the category
 * PeriodicBoundaryWarning (_warn below), attributed to the first line outside openmm and this package
 * (the user's line that created the Simulation or Context); a filter that turns them into errors
 * makes the Context's creation raise openmm.OpenMMException with the warning's text. */
%{
static PyObject* coordinationWarningFunction = NULL;

static void coordinationPythonWarning(const std::string& message) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject* result = PyObject_CallFunction(coordinationWarningFunction, "s", message.c_str());
    std::string error;
    if (result == NULL) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject* text = (value == NULL ? NULL : PyObject_Str(value));
        const char* utf8 = (text == NULL ? NULL : PyUnicode_AsUTF8(text));
        error = (utf8 == NULL ? message : std::string(utf8));
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        PyErr_Clear();
    }
    Py_XDECREF(result);
    PyGILState_Release(state);
    if (result == NULL)
        throw OpenMM::OpenMMException(error);
}
%}
%inline %{
/** Route the plugin's warnings to a Python function of one argument, the message. */
void _setWarningFunction(PyObject* function) {
    Py_XINCREF(function);
    Py_XDECREF(coordinationWarningFunction);
    coordinationWarningFunction = function;
    CoordinationPlugin::CoordinationWarnings::setHandler(coordinationPythonWarning);
}
%}
%pythoncode %{
class PeriodicBoundaryWarning(UserWarning):
    """A CoordinationForce (or a CV of a CoordinationBiasForce) without periodic boundary conditions,
    on which setUsesPeriodicBoundaryConditions() was never called, in a System whose other forces use
    them: its distances ignore the periodic box. Call setUsesPeriodicBoundaryConditions(True) on the
    force, or setUsesPeriodicBoundaryConditions(False) to keep distances without periodic images.
    And the converse: distances of a CoordinationBiasForce that take the nearest periodic image
    (addDistance's default) where nothing else is periodic and the System's default box is OpenMM's
    untouched 2 nm cube, so that they are wrapped into that box; pass usePeriodic=False to
    addDistance, or give the System its box. Issued once per force when a Context is created."""


def _warn(message):
    """Issue a plugin warning from the first frame outside openmm and openmmcoordination."""
    import os
    import sys
    import warnings
    import openmm
    inside = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (openmm, sys.modules[__name__]))
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, PeriodicBoundaryWarning, stacklevel=level)


_setWarningFunction(_warn)
%}
