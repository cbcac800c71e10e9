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
import numpy as _np
from openmm import unit as _unit

def _particleList(group):
    """Accept any sequence of integers (lists, tuples, NumPy arrays, ranges)."""
    return [int(i) for i in group]
%}

%pythonprepend CoordinationPlugin::CoordinationForce::CoordinationForce %{
    args = tuple(_particleList(a) if i < 2 else a for i, a in enumerate(args))
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroup %{
    group = _particleList(group)
%}
%pythonprepend CoordinationPlugin::CoordinationForce::setGroups %{
    groupA = _particleList(groupA)
    groupB = _particleList(groupB)
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

#define OPENMM_EXPORT_COORDINATION
%include "CoordinationForce.h"
%clear double& dsdr;

%newobject CoordinationPlugin::_cloneForce;
%inline %{
namespace CoordinationPlugin {
/** Clone a force through its serialization proxy (copy.copy and copy.deepcopy use this). */
CoordinationForce* _cloneForce(const CoordinationForce& force) {
    return OpenMM::XmlSerializer::clone<CoordinationForce>(force);
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
