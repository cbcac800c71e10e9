"""The grid bias that Metadynamics and OPES share: 1, 2 or 3 BiasVariables over CoordinationForces
and DistanceCVs (either alone, or both), the CoordinationBiasForce whose table holds the bias on their grid, the upload of
new values, the CVs (and bias energy) of a Context, and the files of walkers sharing a directory.

The layout is openmm.app's: the bias array has the variables' grid widths in reverse order (axis 0
is the last variable), and flattened in C order it is the table's values[i + nx*j + nx*ny*k]."""

import copy
import math
import numbers
import os
import random
import warnings
import weakref

import numpy as np

import openmm
from openmm import unit

from openmmcoordination._checks import _error, _isInteger

#: The names of the collective variables inside the bias force, in the order of ``variables``.
CV_NAMES = ('c1', 'c2', 'c3')

_MAX_ID = 0x7FFFFFFF

#: The most points a grid may have (all its dimensions together), as the PLUMED reader's METAD: 80 MB an
#: array of it, of which the classes keep several, and the table's spline coefficients 4 to 64 times that.
MAX_GRID_POINTS = 10000000


#: The points of the next periods padded on each side of a periodic axis in a table whose other axes are
#: not periodic (GridBias._tableArray): the natural spline's end effect decays by 2 - sqrt(3) = 0.27 a point.
PERIODIC_PADDING = 16


def _wrapped(name, variable):
    """The expression of a periodic variable's CV brought into [minValue, maxValue) (floor: its derivative 0)."""
    period = variable.maxValue - variable.minValue
    return '(%s - (%r)*floor((%s - (%r))/(%r)))' % (name, float(period), name, float(variable.minValue), float(period))


def _checkForce(owner, where, force, coordinationOnly=False):
    """Check one force of a variable (``where`` names it in messages): a CoordinationForce with the
    energy "cv" and no table, a DistanceCV, or (unless coordinationOnly) any OpenMM Force; in no System."""
    from openmmcoordination import CoordinationForce
    from openmmcoordination.distancecv import DistanceCV
    if isinstance(force, DistanceCV) and not coordinationOnly:
        return
    if not isinstance(force, openmm.Force) or (coordinationOnly and not isinstance(force, CoordinationForce)):
        raise _error(owner, '%s must be a CoordinationForce%s, got %s', where,
                     '' if coordinationOnly else ', a CVFunction of them or another OpenMM Force that computes a CV',
                     type(force).__name__)
    if not force.thisown:
        raise _error(owner, '%s already belongs to a System or another force (its energy would be added as well); '
                     'give a force of its own, the bias force adds a copy', where)
    if isinstance(force, CoordinationForce):
        expression = force.getEnergyExpression()
        if expression.strip() != 'cv' or force.getNumTabulatedFunctions() > 0:
            raise _error(owner, '%s must have the energy expression "cv" and no tabulated function, got "%s" and %d '
                         'functions', where, expression, force.getNumTabulatedFunctions())


def _checkPeriodic(owner, index, variable):
    """A periodic variable (minValue and maxValue the same point: a torsion from -pi to pi) is a force that
    is not a coordination number, a distance or a function of CVs (Metadynamics' hills and OPES's kernels
    wrap around its period)."""
    from openmmcoordination import CoordinationForce
    from openmmcoordination.cvfunction import CVFunction
    from openmmcoordination.distancecv import DistanceCV
    if isinstance(variable.force, (CoordinationForce, DistanceCV, CVFunction)):
        raise _error(owner, 'variables[%d].periodic must be False for a %s (periodic=True is for a force whose CV is '
                     'periodic, such as a CustomTorsionForce), got True', index, type(variable.force).__name__)


def variableForces(variable):
    """The forces that compute a variable's CV: its force, or the forces of its CVFunction."""
    from openmmcoordination.cvfunction import CVFunction
    return list(variable.force.forces) if isinstance(variable.force, CVFunction) else [variable.force]


def onDevicePath(variables):
    """Whether every force of the variables is a CoordinationForce or a DistanceCV (DistanceCVs alone
    included): the bias is then one CoordinationBiasForce (the distances its own CVs, addDistance,
    PLUMED's nearest image in any box), else a CustomCVForce (the slower path)."""
    from openmmcoordination import CoordinationForce
    from openmmcoordination.distancecv import DistanceCV
    return all(isinstance(force, (CoordinationForce, DistanceCV)) for v in variables for force in variableForces(v))


def checkVariables(owner, variables):
    """The variables as a list, checked: 1 to 3 BiasVariables whose forces are CoordinationForces with
    the energy "cv" and no table, DistanceCVs, CVFunctions of them, or other OpenMM Forces (the slower
    path), not owned by anything, periodic only where the force is such another Force; on the device
    path, the CoordinationForces all periodic or none. ValueError naming ``owner``, the parameter and the value otherwise."""
    from openmmcoordination.cvfunction import CVFunction
    try:
        variables = list(variables)
    except TypeError:
        raise _error(owner, 'variables must be a list of 1, 2 or 3 BiasVariables, got %r', variables) from None
    if not 1 <= len(variables) <= 3:
        raise _error(owner, 'variables must hold 1, 2 or 3 BiasVariables, got %d', len(variables))
    for i, v in enumerate(variables):
        if not all(hasattr(v, name) for name in ('force', 'minValue', 'maxValue', 'biasWidth', 'periodic', 'gridWidth')):
            raise _error(owner, 'variables[%d] must be a BiasVariable, got %r', i, v)
        if isinstance(v.force, CVFunction):
            for name, force in zip(v.force.names, v.force.forces):
                _checkForce(owner, 'variables[%d].force.forces[%r]' % (i, name), force)
        else:
            _checkForce(owner, 'variables[%d].force' % i, v.force)
        if v.periodic not in (True, False):
            raise _error(owner, 'variables[%d].periodic must be True or False, got %r', i, v.periodic)
        if v.periodic:
            _checkPeriodic(owner, i, v)
        for name in ('minValue', 'maxValue', 'biasWidth'):
            value = getattr(v, name)
            if not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise _error(owner, 'variables[%d].%s must be a finite number, got %r', i, name, value)
        if not v.minValue < v.maxValue:
            raise _error(owner, 'variables[%d].minValue (%r) must be less than maxValue (%r)', i, v.minValue, v.maxValue)
        if not v.biasWidth > 0:
            raise _error(owner, 'variables[%d].biasWidth must be positive, got %r', i, v.biasWidth)
        if not _isInteger(v.gridWidth) or v.gridWidth < 2:
            raise _error(owner, 'variables[%d].gridWidth must be an integer >= 2, got %r', i, v.gridWidth)
    points = math.prod(int(v.gridWidth) for v in variables)
    if points > MAX_GRID_POINTS:
        raise _error(owner, 'the grid of the variables has %s = %d points, more than %d (its arrays would not fit in '
                     'memory); give smaller gridWidths', ' x '.join(str(v.gridWidth) for v in variables), points,
                     MAX_GRID_POINTS)
    from openmmcoordination import CoordinationForce
    # The coordination numbers' periodicity (a DistanceCV has its own, as in C++).
    forces = [(i, force) for i, v in enumerate(variables) for force in variableForces(v) if isinstance(force, CoordinationForce)]
    if onDevicePath(variables):
        periodic = [(i, force.usesPeriodicBoundaryConditions()) for i, force in forces]
        if any(p for _, p in periodic) and not all(p for _, p in periodic):
            raise _error(owner, 'the variables\' forces must all use periodic boundary conditions or none, got %s',
                         ', '.join('variables[%d]: %s' % item for item in periodic))
    return variables


def checkRunOptions(owner, intervalName, interval, saveFrequency, biasDir, recordFrequency):
    """Check the walkers' options (saveFrequency a positive multiple of the update interval, biasDir an
    existing directory, both or neither) and recordFrequency (None or a positive integer)."""
    if (saveFrequency is None) != (biasDir is None):
        raise _error(owner, 'give both saveFrequency and biasDir, or neither; got saveFrequency=%r, biasDir=%r',
                     saveFrequency, biasDir)
    if saveFrequency is not None:
        if not _isInteger(saveFrequency) or saveFrequency <= 0 or saveFrequency % interval != 0:
            raise _error(owner, 'saveFrequency must be a positive multiple of %s (%d), got %r', intervalName, interval,
                         saveFrequency)
        if not isinstance(biasDir, (str, os.PathLike)) or not isinstance(os.fspath(biasDir), str):
            raise _error(owner, 'biasDir must be a path (a str or os.PathLike), got %r', biasDir)
        if not os.path.isdir(biasDir):
            raise _error(owner, 'biasDir must be an existing directory, got %r', biasDir)
        if not os.access(biasDir, os.W_OK | os.X_OK):
            raise _error(owner, 'biasDir must be a directory this process can write to (its walker files go there), '
                         'got %r', biasDir)
    if recordFrequency is not None and (not _isInteger(recordFrequency) or recordFrequency <= 0):
        raise _error(owner, 'recordFrequency must be None or a positive integer, got %r', recordFrequency)


def freeForceGroup(owner, system):
    """The highest force group that no force of the System uses."""
    freeGroups = set(range(32)) - set(force.getForceGroup() for force in system.getForces())
    if not freeGroups:
        raise RuntimeError('%s: all 32 force groups of the System are in use; none is left for the bias' % owner)
    return max(freeGroups)


class GridBias(object):
    """A bias on the grid of 1-3 checked BiasVariables, applied by one CoordinationBiasForce with the
    energy ``bias(c1, ...)`` and the table ``bias`` (a Continuous1D/2D/3DFunction), its CVs copies of
    the variables' forces, in the System's highest free force group. The force is created here and
    added to the System by addTo()."""

    def __init__(self, owner, system, variables):
        from openmmcoordination import CoordinationBiasForce
        from openmmcoordination.cvfunction import CVFunction
        from openmmcoordination.distancecv import DistanceCV
        self.owner = owner
        self._checkedContext = None
        self._warnedOutside = False
        self.variables = variables
        self.periodic = [bool(v.periodic) for v in variables]
        # A periodic table where every variable is periodic (as openmm.app's); beside variables that are not,
        # the periodic axes are padded with the values of the next periods (see _tableArray).
        self._padding = PERIODIC_PADDING if any(self.periodic) and not all(self.periodic) else 0
        self.axes = [np.linspace(v.minValue, v.maxValue, v.gridWidth) for v in variables]
        self.shape = tuple(v.gridWidth for v in reversed(variables))
        # Each variable's CVs inside the bias force: c1, c2, c3, or c<k>_<name> for the forces of a CVFunction,
        # whose expression is then the table's argument (bias(c1_a - c1_b, c2)).
        self._slots = []          # per variable: (indices of its CVs in the force, CVFunction or None)
        names, forces, arguments = [], [], []
        for k, variable in enumerate(variables):
            if isinstance(variable.force, CVFunction):
                prefix = '%s_' % CV_NAMES[k]
                own = [prefix + name for name in variable.force.names]
                arguments.append(variable.force.renamed(prefix))
                self._slots.append((list(range(len(names), len(names) + len(own))), variable.force))
                names += own
                forces += variable.force.forces
            else:
                arguments.append(_wrapped(CV_NAMES[k], variable) if variable.periodic else CV_NAMES[k])
                self._slots.append(([len(names)], None))
                names.append(CV_NAMES[k])
                forces.append(variable.force)
        self.names = names
        self.onDevice = onDevicePath(variables)
        expression = 'bias(%s)' % ', '.join(arguments)
        if self.onDevice:
            force = CoordinationBiasForce(expression)
        else:
            force = openmm.CustomCVForce(expression)
            others = sorted(set(type(f).__name__ for f in forces if type(f).__name__ not in ('CoordinationForce', 'DistanceCV')))
            warnings.warn('%s: a CV is computed by %s, not by a CoordinationForce or a DistanceCV: the bias is applied by '
                          'a CustomCVForce (the slower path: each step evaluates its CVs in an inner Context, and the bias '
                          'moves between the platform and that Context; see docs/metadynamics.md)'
                          % (owner, ', '.join(others)), RuntimeWarning, stacklevel=3)
        systemPeriodic = system.usesPeriodicBoundaryConditions()
        for name, cvForce in zip(names, forces):
            if isinstance(cvForce, DistanceCV):
                # A CV of the CoordinationBiasForce itself, or on the slower path an OpenMM force of its own.
                if self.onDevice:
                    cvForce.addTo(force, name, systemPeriodic)
                else:
                    force.addCollectiveVariable(name, cvForce.toForce(systemPeriodic))
            else:
                force.addCollectiveVariable(name, copy.deepcopy(cvForce))
        force.addTabulatedFunction('bias', self._makeTable(np.zeros(self.shape)))
        force.setForceGroup(freeForceGroup(owner, system))
        self.force = force

    def values(self, raw):
        """The variables' values from the values of the force's CVs (a CVFunction evaluated on the host)."""
        result = []
        for indices, function in self._slots:
            if function is None:
                result.append(float(raw[indices[0]]))
            else:
                result.append(function.evaluate([raw[i] for i in indices]))
        return result

    def variablesAreCVs(self):
        """Whether the force is a CoordinationBiasForce whose CV k is variable k (no CVFunction): the
        force's running statistics of its CVs (setCVStatisticsStride) are then the variables'."""
        return self.onDevice and all(function is None for _, function in self._slots)

    def markCopies(self, owner):
        """Give the user's forces of the variables (which are in no Context: the bias force holds
        copies) methods that, where a Context is asked for this force, say so and what to call
        instead, in place of the bare 'This Force is not present in the Context'."""
        from openmmcoordination import CoordinationForce
        for k, variable in enumerate(self.variables):
            for force in variableForces(variable):
                if not isinstance(force, CoordinationForce):
                    continue
                for name in _CONTEXT_METHODS:
                    method = getattr(force, name, None)
                    if method is not None:
                        setattr(force, name, _explainedContextMethod(method, owner, name, k))

    def axesForUser(self):
        """The grid's axes as Metadynamics.getCollectiveVariableGrid() returns them: a list of arrays,
        one per variable in the order of the variables (copies), in every dimension."""
        return [axis.copy() for axis in self.axes]

    def _tableArray(self, values):
        """(values, widths, limits) of the table of a bias array: the array itself, or, for periodic axes
        beside axes that are not (a table has one periodic flag), the array padded with PERIODIC_PADDING
        points of the neighbouring periods on each side of each periodic axis, so that the table's natural
        spline is the periodic one to about 0.27^PERIODIC_PADDING across the seam (the expression wraps
        the variable into [minValue, maxValue))."""
        values = np.asarray(values, dtype=float)
        widths, limits = [], []
        for k, v in enumerate(self.variables):
            if self._padding and v.periodic:
                n, pad = v.gridWidth, self._padding
                spacing = (v.maxValue - v.minValue)/(n - 1)
                values = np.take(values, np.arange(-pad, n + pad) % (n - 1), axis=len(self.variables) - 1 - k)
                widths.append(n + 2*pad)
                limits += [v.minValue - pad*spacing, v.maxValue + pad*spacing]
            else:
                widths.append(v.gridWidth)
                limits += [v.minValue, v.maxValue]
        return values.ravel(), widths, limits

    def _makeTable(self, values):
        values, widths, limits = self._tableArray(values)
        periodic = all(self.periodic)
        if len(self.variables) == 1:
            return openmm.Continuous1DFunction(values, *limits, periodic)
        if len(self.variables) == 2:
            return openmm.Continuous2DFunction(*widths, values, *limits, periodic)
        return openmm.Continuous3DFunction(*widths, values, *limits, periodic)

    def setValues(self, values):
        """Copy a bias array (the grid's shape) into the force's table."""
        values, widths, limits = self._tableArray(values)
        table = self.force.getTabulatedFunction(0)
        if len(self.variables) == 1:
            table.setFunctionParameters(values, *limits)
        else:
            table.setFunctionParameters(*widths, values, *limits)

    def distances(self, k, center):
        """grid point - center along the axis of variable k; for a periodic variable the shortest of the
        periodic images, with the last point (the first one again) given the first's, as openmm.app."""
        v = self.variables[k]
        delta = self.axes[k] - center
        if v.periodic:
            period = v.maxValue - v.minValue
            delta = delta - period*np.round(delta/period)
            delta[-1] = delta[0]
        return delta

    def difference(self, k, value, center):
        """value - center for variable k (the shortest periodic image for a periodic one); arrays too."""
        delta = np.asarray(value, dtype=float) - center
        v = self.variables[k]
        if v.periodic:
            period = v.maxValue - v.minValue
            delta = delta - period*np.round(delta/period)
        return delta

    def wrapped(self, values):
        """The values with those of periodic variables brought into [minValue, maxValue)."""
        return [v.minValue + (x - v.minValue) % (v.maxValue - v.minValue) if v.periodic else x
                for x, v in zip(values, self.variables)]

    def uniquePoints(self, values):
        """A bias array without the last point of each periodic axis (the first one again): the grid
        points that c(t) sums over."""
        dimensions = len(self.variables)
        index = [slice(None)]*dimensions
        for k, v in enumerate(self.variables):
            if v.periodic:
                index[dimensions - 1 - k] = slice(0, v.gridWidth - 1)
        return values[tuple(index)]

    def upload(self, context, values):
        """Copy a bias array into the table and send it to the Context: its values alone
        (CoordinationBiasForce.updateTabulatedFunctionInContext; on CUDA the splines are fitted on the
        GPU)."""
        self.setValues(values)
        if self.onDevice:
            self.force.updateTabulatedFunctionInContext(context, 0)
        else:
            self.force.updateParametersInContext(context)

    def collectiveVariables(self, context):
        """The variables' values in the Context, a list of floats (one per variable)."""
        try:
            raw = self.force.getCollectiveVariableValues(context)
        except openmm.OpenMMException as error:
            if 'not present in the Context' not in str(error):
                raise
            raise openmm.OpenMMException(
                '%s: the Simulation\'s Context has no bias force: it was created before the %s, which added the force '
                'to the System; create the Simulation after it, or call simulation.context.reinitialize(preserveState=True) '
                '(%s)' % (self.owner, self.owner, error)) from None
        return self.values(raw)

    def checkContext(self, context):
        """Before step() runs a step: the bias force is in the Context (OpenMMException saying what to do
        otherwise, where the steps would run unbiased first). Once per Context."""
        if self._checkedContext is None or self._checkedContext() is not context:
            self.collectiveVariables(context)
            self._checkedContext = weakref.ref(context)

    def checkSample(self, values, step):
        """The variables' values read at a step: OpenMMException (as OpenMM's for a coordinate that is NaN)
        where one is not finite (a CVFunction such as log(c) at c = 0: a hill or kernel there would make the
        whole bias NaN); a RuntimeWarning, once for this object, where one is outside its grid (the table
        ends there, and beyond it the variable feels no bias force, as in openmm.app)."""
        for k, value in enumerate(values):
            if not math.isfinite(value):
                raise openmm.OpenMMException(
                    '%s: variables[%d] is %r at step %d (%r), which no hill or kernel can be centred on: nothing was '
                    'added; give a function or force that is finite where the run goes'
                    % (self.owner, k, float(value), step, self.variables[k].force))
        if self._warnedOutside:
            return
        for k, (value, v) in enumerate(zip(values, self.variables)):
            if not v.periodic and not v.minValue <= value <= v.maxValue:
                self._warnedOutside = True
                warnings.warn('%s: variables[%d] is %.6g at step %d, outside its grid [%g, %g]: beyond the grid the '
                              'variable feels no bias force (the table ends there, as in openmm.app), and the free '
                              'energy has no value there; give a wider minValue and maxValue (said once)'
                              % (self.owner, k, float(value), step, v.minValue, v.maxValue), RuntimeWarning, stacklevel=3)
                return

    def sample(self, context):
        """(CVs, bias): the CVs and the energy of the bias force's group there (kJ/mol), what the
        simulation feels: the spline of the table."""
        cvs = self.collectiveVariables(context)
        state = context.getState(getEnergy=True, groups={self.force.getForceGroup()})
        return cvs, state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)

    def addTo(self, system):
        """Add the force to the System, which then owns it; the System is kept alive with this object,
        so that ``force`` stays valid after the caller's last reference to the System is gone."""
        system.addForce(self.force)
        self._system = system


#: The CoordinationForce methods that read or change the force in a Context.
_CONTEXT_METHODS = ('getCollectiveVariableValue', 'getCoordinationNumbers', 'updateParametersInContext', 'getPairHistogram',
                    'accumulatePairHistogram', 'getAccumulatedPairHistogram', 'getNumAccumulatedFrames',
                    'resetPairHistogram')


#: What a CoordinationForce's method says of a force that is in no Context: OpenMM's words, and since
#: 5ba52a1 the plugin's own ('CoordinationForce "..": this force is not in the Context's System (...)').
_NOT_IN_CONTEXT = ('not present in the Context', "not in the Context's System")


def _explainedContextMethod(method, owner, name, index):
    """``method`` (bound), whose 'not present in the Context' error says that the force was copied by
    ``owner`` as variables[index] and what to call instead."""
    def explained(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except openmm.OpenMMException as error:
            if not any(text in str(error) for text in _NOT_IN_CONTEXT):
                raise
            instead = ('its getCollectiveVariables(simulation), or its force.getCollectiveVariableValues(context) (the '
                       'bias force\'s CVs, in the order of the variables)'
                       if name in ('getCollectiveVariableValue', 'getCoordinationNumbers') else
                       'the method of the copy, force.getCollectiveVariable(%d) of the %s' % (index, owner))
            raise openmm.OpenMMException(
                'CoordinationForce.%s: this force is variables[%d].force of a %s, which added a copy of it to the '
                'System inside its bias force (a CoordinationBiasForce), so this force itself is in no Context. Call '
                '%s instead (%s)' % (name, index, owner, instead, error)) from None
    explained.__doc__ = method.__doc__
    return explained


def ownFileIndices(directory, pattern, walkerId):
    """The indices of the files of walker ``walkerId`` in a directory, sorted."""
    if walkerId is None:
        return []
    return sorted(int(m.group(2)) for m in map(pattern.fullmatch, os.listdir(directory)) if m and int(m.group(1)) == walkerId)


def newWalkerId(directory, pattern):
    """An id for this process's files in a directory: from the operating system's entropy (walkers
    started with the same NumPy seed get different ids), and not one that a file there already has
    (pattern: a compiled regular expression whose group 1 is the id)."""
    used = {int(m.group(1)) for m in map(pattern.fullmatch, os.listdir(directory)) if m}
    generator = random.SystemRandom()
    while True:
        candidate = generator.randrange(_MAX_ID)
        if candidate not in used:
            return candidate


def replaceFile(directory, prefix, walkerId, index, array):
    """Write array as <prefix>_<id>_<index>.npy through a temporary file and a link (a reader never
    sees half a file), then remove <prefix>_<id>_<index - 1>.npy. The file is new: where it exists,
    another walker writes under this id (two walkers restored from one state), and the ValueError
    says so instead of writing over that walker's file."""
    previous = os.path.join(directory, '%s_%d_%d.npy' % (prefix, walkerId, index - 1))
    target = os.path.join(directory, '%s_%d_%d.npy' % (prefix, walkerId, index))
    temporary = os.path.join(directory, 'temp_%d_%d.npy' % (walkerId, index))
    np.save(temporary, array)
    taken = _error('OPES' if prefix == 'opes' else 'Metadynamics', 'biasDir %s already holds %s: another walker writes '
                   'under this walker\'s id %d (two walkers restored from one state or checkpoint?), and its file is '
                   'not written over; give each walker a checkpoint of its own', directory, os.path.basename(target),
                   walkerId)
    try:
        try:
            os.link(temporary, target)                 # fails where the file exists
        except FileExistsError:
            raise taken from None
        except OSError:                                # a file system without hard links
            if os.path.exists(target):
                raise taken from None
            os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    if os.path.exists(previous):
        os.remove(previous)


def newestFiles(directory, pattern, ownId, seen):
    """(id, index, path) of the newest file of each other walker in a directory, where its index is
    above the index ``seen`` already read of that id (a dict id -> index), ordered by id."""
    newest = {}
    for name in os.listdir(directory):
        match = pattern.fullmatch(name)
        if match is None:
            continue
        other, index = int(match.group(1)), int(match.group(2))
        if other != ownId and index > seen.get(other, -1) and index > newest.get(other, (-1, None))[0]:
            newest[other] = (index, os.path.join(directory, name))
    return [(other, index, path) for other, (index, path) in sorted(newest.items())]
