"""Well-tempered metadynamics on one, two or three coordination numbers, with the bias on a grid
applied by one CoordinationBiasForce (no CustomCVForce), so the bias stays on the Context's
platform between hills.

The class has the constructor and methods of openmm.app.metadynamics.Metadynamics:

>>> system, integrator = newSystem()                              # a System for this run
>>> nacl = CoordinationForce([na], [cl]); nacl.setR0(0.35); nacl.setUsesPeriodicBoundaryConditions(True)
>>> nao = CoordinationForce([na], oxygens); nao.setR0(0.31); nao.setUsesPeriodicBoundaryConditions(True)
>>> variables = [BiasVariable(nacl, 0.0, 1.0, 0.04, gridWidth=101), BiasVariable(nao, 2.0, 8.0, 0.15, gridWidth=121)]
>>> meta = Metadynamics(system, variables, 300*kelvin, biasFactor=6, height=1.0*kilojoules_per_mole, frequency=250,
...                     recordFrequency=50)                       # frames for reweighting
>>> simulation = Simulation(topology, system, integrator)          # after creating meta
>>> simulation.context.setPositions(positions)
>>> meta.step(simulation, steps)
>>> meta.getFreeEnergy()               # kJ/mol, shape (121, 101): axis 0 is the last variable, as in openmm.app

PLUMED: ``c1: COORDINATION ...``, ``c2: COORDINATION ...`` and ``METAD ARG=c1,c2 SIGMA=.. HEIGHT=..
PACE=.. BIASFACTOR=.. TEMP=.. GRID_MIN=.. GRID_MAX=.. GRID_BIN=..``.

Every ``frequency`` steps it reads the CVs and the bias energy at them, adds a well-tempered
Gaussian of height h exp(-V/(k_B dT)) to a grid on the host and replaces the values of the force's
table (setFunctionParameters, then updateTabulatedFunctionInContext: on CUDA only the grid's values
cross to the GPU, which fits the splines); the steps in between run entirely on the Context's
platform. It keeps c(t) of Tiwary and Parrinello after each hill and, with recordFrequency,
records frames (CVs, V and V - c(t)) for reweighting with openmmcoordination.reweighting.
"""

import collections
import concurrent.futures
import math
import numbers
import re
import warnings

import numpy as np

from openmm import unit
from openmm.app.metadynamics import BiasVariable

from openmmcoordination._checks import _isInteger, _positiveQuantity, _simulation, _steps
from openmmcoordination.cvfunction import CVFunction  # noqa: F401 (a variable's force may be one)
from openmmcoordination._gridbias import CV_NAMES  # noqa: F401 (defined here before)
from openmmcoordination._gridbias import (GridBias, checkRunOptions, checkVariables, newestFiles, newWalkerId,
                                          ownFileIndices, replaceFile)
from openmmcoordination import _samplerstate
from openmmcoordination.reweighting import _reweightingFactor

__all__ = ['Metadynamics', 'BiasVariable', 'CVFunction']

#: The frames recorded with recordFrequency (Metadynamics.getRecordedFrames()).
RecordedFrames = collections.namedtuple('RecordedFrames', ['steps', 'collectiveVariables', 'bias', 'reweightingBias'])

_BIAS_FILE = re.compile(r'bias_(\d+)_(\d+)\.npy')


def _error(message, *args):
    return ValueError('Metadynamics: ' + (message % args if args else message))


class Metadynamics(object):
    """Well-tempered metadynamics (Barducci, Bussi, Parrinello, PRL 100, 020603 (2008)) on 1, 2 or 3
    coordination numbers, the bias applied by one CoordinationBiasForce.

    Same constructor and behaviour as openmm.app.metadynamics.Metadynamics: the same grid (axis 0 of
    the bias is the last variable), Gaussians, well-tempered heights, free energy and biasDir files,
    so walkers of both classes can share a directory where their grids match. The bias force
    is a CoordinationBiasForce with the energy ``bias(c1)``, ``bias(c1, c2)`` or ``bias(c1, c2, c3)``
    and the Continuous1DFunction, Continuous2DFunction or Continuous3DFunction ``bias``; its CVs are
    copies of the variables' forces. It is added to the System in the highest free force group.

    Parameters (those of openmm.app.metadynamics.Metadynamics)
    ----------
    system: System
        the System to simulate; the bias force is added to it
    variables: list of 1, 2 or 3 BiasVariable
        the collective variables. Each ``force`` is a CoordinationForce with the energy
        expression "cv" (the default) and no table, a DistanceCV (a CV of the same
        CoordinationBiasForce, with coordination numbers or alone), or a CVFunction of such forces
        (its table called on the expression inside the same CoordinationBiasForce), not part of a System or of
        another force (a copy is added, as openmm.app adds the force to a CustomCVForce); the forces
        must all use periodic boundary conditions or none. Any other OpenMM Force that computes a
        CV (a CustomBondForce distance, an RMSDForce, ...), alone or in a CVFunction, makes the bias
        a CustomCVForce: the slower path, said by a RuntimeWarning. Such a force's variable may be
        periodic (periodic=True: a torsion from -pi to pi), alone or beside variables that are not: its
        hills wrap around the period (openmm.app's, which takes no mix), and its CV is brought into
        [minValue, maxValue) before the table; coordination numbers, distances and functions are not
        periodic. minValue < maxValue, biasWidth > 0, gridWidth >= 2; a grid spacing larger than half
        the biasWidth (hills the grid cannot resolve) is a RuntimeWarning, as PLUMED's METAD warns.
    temperature: temperature
        the simulation temperature
    biasFactor: float
        the bias factor gamma (> 1): the CVs are sampled as at temperature*biasFactor
    height: energy
        the initial height of the Gaussians (> 0)
    frequency: int
        the interval in steps at which Gaussians are added
    saveFrequency: int (optional)
        the interval in steps at which this object writes its bias to biasDir and adds those of the
        other processes found there (a multiple of frequency)
    biasDir: str (optional)
        an existing directory for saveFrequency. The files are openmm.app's:
        ``bias_<id>_<index>.npy``, this process's own Gaussians on the grid; files of other grid
        shapes already in it are an error (nothing is written then)
    recordFrequency: int (optional, keyword)
        the interval in steps at which step() records a frame for reweighting: the CVs, the bias V
        in force and V - c(t) (getRecordedFrames()); None (the default) records none
    truncateHills: bool (optional, keyword)
        False (the default): whole Gaussians, as openmm.app's (so that walkers of both classes can
        share a biasDir). True: PLUMED's METAD hills (src/bias/MetaD.cpp), each cut where
        sum_k (s_k - s0_k)^2/(2 sigma_k^2) reaches 6.25 and stretched to reach 0 there,
        h (exp(-d2) - exp(-6.25))/(1 - exp(-6.25)), and the well-tempered height from the exact sum
        of the hills at the CVs (PLUMED without GRID; with biases of other walkers loaded, from the
        table); what openmmcoordination.plumed uses for a METAD.

    c(t) of Tiwary and Parrinello, J. Phys. Chem. B 119, 736 (2015), is computed from the total bias
    on the grid (with the biases of other walkers) whenever it changes (getReweightingFactors()).

    Raises ValueError naming the class, the parameter and its value for any invalid argument,
    before the System or biasDir is touched.
    """

    def __init__(self, system, variables, temperature, biasFactor, height, frequency, saveFrequency=None, biasDir=None,
                 *, recordFrequency=None, truncateHills=False):
        variables = checkVariables('Metadynamics', variables)
        temperatureK = _positiveQuantity(temperature, unit.kelvin, 'Metadynamics', 'temperature', 'a temperature')
        heightKJ = _positiveQuantity(height, unit.kilojoules_per_mole, 'Metadynamics', 'height', 'an energy')
        if not isinstance(biasFactor, numbers.Real) or not math.isfinite(biasFactor) or biasFactor <= 1.0:
            raise _error('biasFactor must be a finite number > 1, got %r%s', biasFactor,
                         ' (plain metadynamics, openmm.app\'s biasFactor inf, is not offered: its bias grows without '
                         'bound and it has no c(t); give a finite bias factor, or use OPES, whose biasFactor may be inf)'
                         if isinstance(biasFactor, numbers.Real) and biasFactor == math.inf else '')
        if not _isInteger(frequency) or frequency <= 0:
            raise _error('frequency must be a positive integer, got %r', frequency)
        checkRunOptions('Metadynamics', 'frequency', frequency, saveFrequency, biasDir, recordFrequency)
        if truncateHills not in (True, False):
            raise _error('truncateHills must be True or False, got %r', truncateHills)
        _checkResolution(variables)
        self._grid = GridBias('Metadynamics', system, variables)

        self.variables = variables
        self.temperature = temperatureK*unit.kelvin
        self.biasFactor = biasFactor
        self.height = heightKJ*unit.kilojoules_per_mole
        self.frequency = int(frequency)
        self.saveFrequency = None if saveFrequency is None else int(saveFrequency)
        self.biasDir = biasDir
        self.recordFrequency = None if recordFrequency is None else int(recordFrequency)
        self.truncateHills = bool(truncateHills)
        self._deltaT = self.temperature*(biasFactor - 1)
        self._kTDelta = (unit.MOLAR_GAS_CONSTANT_R*self._deltaT).value_in_unit(unit.kilojoules_per_mole)
        self._kT = (unit.MOLAR_GAS_CONSTANT_R*self.temperature).value_in_unit(unit.kilojoules_per_mole)
        self._axes = self._grid.axes
        self._shape = self._grid.shape
        self._selfBias = np.zeros(self._shape)
        self._totalBias = np.zeros(self._shape)
        self._hillCenters = []
        self._hillHeights = []
        self._factors = []       # (step, c(t) of the bias in force from that step on)
        self._pendingFactor = None   # (step, a Future of c(t)) of the last hill, not yet in _factors
        self._frames = []        # (step, CVs, V, c) of each recorded frame
        self._loadedBiases = {}
        self._warned = set()
        self._files = _samplerstate.WalkerFiles('Metadynamics')
        self._saveIndex = 0
        self._id = None
        self._pendingUpload = False

        self._force = self._grid.force
        self._grid.markCopies('Metadynamics')
        if biasDir is not None:
            _samplerstate.checkDirectory('Metadynamics', biasDir, self._walkerSettings())
            self._readBiases(strict=True)          # a file of another grid is an error: nothing written yet
            _samplerstate.recordSettings('Metadynamics', biasDir, self._walkerSettings())
            self._id = newWalkerId(biasDir, _BIAS_FILE)
            self._writeBias()
        self._grid.setValues(self._totalBias)
        self._factor = _reweightingFactor(self._grid.uniquePoints(self._totalBias), self._kT, biasFactor)
        self._grid.addTo(system)

    @property
    def force(self):
        """The CoordinationBiasForce in the System that applies the bias: energy ``bias(c1, ...)``,
        table ``bias`` (getTabulatedFunction(0)), CV k the copy of variables[k].force
        (getCollectiveVariable(k), named c1, c2, c3)."""
        return self._force

    def step(self, simulation, steps):
        """Advance the simulation by ``steps`` time steps, adding a Gaussian whenever
        simulation.currentStep reaches a multiple of ``frequency`` and, with a biasDir, writing
        and reading biases at multiples of ``saveFrequency``; with recordFrequency, recording a frame
        at each multiple of it (before the hill of that step). ``steps`` is an integer (a float is a
        ValueError, where openmm.app's raises TypeError); one below 0 runs no step, as there."""
        _simulation('Metadynamics', 'step', simulation)
        remaining = _steps('Metadynamics', steps)
        self._grid.checkContext(simulation.context)
        if self._pendingUpload:
            self._uploadBias(simulation.context)
        self._settleFactor()
        if not self._factors:
            self._factors.append((simulation.currentStep, self._factor))
        intervals = [n for n in (self.frequency, self.recordFrequency) if n is not None]
        while remaining > 0:
            chunk = min([remaining] + [n - simulation.currentStep % n for n in intervals])
            simulation.step(chunk)
            self._settleFactor()
            remaining -= chunk
            step, sample = simulation.currentStep, None
            if self.recordFrequency is not None and step % self.recordFrequency == 0:
                sample = self._sample(simulation.context)
                self._grid.checkSample(sample[0], step)
                self._frames.append((step, sample[0], sample[1], self._factor))
            if step % self.frequency != 0:
                continue
            if sample is None:
                sample = self._sample(simulation.context)
                self._grid.checkSample(sample[0], step)
            self._addHill(simulation.context, sample)
            if self.saveFrequency is not None and step % self.saveFrequency == 0:
                self._writeBias()
                if self._readBiases(strict=False):
                    self._uploadBias(simulation.context)
            # c(t) of the new bias, in a thread beside the next steps (OpenMM releases the GIL while it
            # steps, NumPy while it sums): off the hill's critical path, where the GPU waits for the
            # host. _settleFactor() takes the result; the bias array is never changed in place.
            self._pendingFactor = (step, _factorThread().submit(_reweightingFactor, self._grid.uniquePoints(self._totalBias),
                                                                self._kT, self.biasFactor))

    def _settleFactor(self):
        """Take c(t) of the last hill, where its thread computed it (_pendingFactor), into _factor and _factors."""
        if self._pendingFactor is not None:
            step, future = self._pendingFactor
            self._pendingFactor = None
            self._factor = future.result()
            self._factors.append((step, self._factor))

    def getFreeEnergy(self):
        """The free energy on the grid, -(T + dT)/dT times the bias (kJ/mol, a Quantity): an array of
        shape (gridWidth,) for one variable, (gridWidth of variables[1], of variables[0]) for two,
        (of [2], of [1], of [0]) for three, as openmm.app's; element [j, i] is at
        (getCollectiveVariableGrid()[0][i], getCollectiveVariableGrid()[1][j])."""
        return -((self.temperature + self._deltaT)/self._deltaT)*self._totalBias*unit.kilojoules_per_mole

    def getCollectiveVariables(self, simulation):
        """The current values of the collective variables, a tuple with one float per variable."""
        _simulation('Metadynamics', 'getCollectiveVariables', simulation)
        return tuple(self._grid.collectiveVariables(simulation.context))

    def getCollectiveVariableGrid(self):
        """The CV values of the grid points: a list of arrays, linspace(minValue, maxValue, gridWidth),
        one per variable in the order of ``variables``, in every dimension (a list of one array for
        one variable: ``x, = meta.getCollectiveVariableGrid()``; ``contourf(*grid, fes)`` draws a 2-D
        free energy, and plots.plotFreeEnergy(grid, fes) any of them)."""
        return self._grid.axesForUser()

    def getBias(self):
        """The current bias on the grid (kJ/mol, a Quantity; the shape of getFreeEnergy()), including
        the biases loaded from other processes: the values of the force's table."""
        return self._totalBias.copy()*unit.kilojoules_per_mole

    def getHillHeights(self):
        """The heights (kJ/mol, a Quantity) of the Gaussians this object has added, in order."""
        return np.array(self._hillHeights)*unit.kilojoules_per_mole

    def getHillCenters(self):
        """The CV values at which this object has added Gaussians, in order: an array of shape (hills,
        variables) in every dimension, as the centres of OPES.getKernels() (``[:, 0]`` for the one
        variable of a 1-D run; before issue 44 a 1-D run returned shape (hills,))."""
        return np.array(self._hillCenters, dtype=float).reshape(len(self._hillCenters), len(self.variables))

    def getReweightingFactors(self):
        """c(t) of Tiwary and Parrinello: (steps, factors), steps an array of simulation steps and
        factors the c(t) (kJ/mol, a Quantity) of the bias in force from steps[i] until steps[i + 1]:
        the first entry at the first step() (c of the initial bias: 0, or that of the files in
        biasDir), then one at each hill, after it (and after the biases of other walkers read at the
        same step). c is computed from the total bias on the grid, getBias()."""
        self._settleFactor()
        steps = np.array([step for step, _ in self._factors], dtype=np.int64)
        return steps, np.array([factor for _, factor in self._factors])*unit.kilojoules_per_mole

    def getRecordedFrames(self):
        """The frames recorded every ``recordFrequency`` steps, a RecordedFrames named tuple: ``steps``
        (the simulation steps), ``collectiveVariables`` (shape (frames,) for one variable, (frames,
        variables) for several), ``bias``, the bias V(s, t) in force at the frame's CVs, and
        ``reweightingBias``, V(s, t) - c(t) (kJ/mol, Quantities). V and c are those of the bias that
        produced the frame, before the hill of the same step; V is the energy of the bias force (the
        table's spline, 0 outside the grid). A frame's unbiased weight is exp(reweightingBias/(k_B T)):
        see openmmcoordination.reweighting."""
        steps = np.array([frame[0] for frame in self._frames], dtype=np.int64)
        cvs = np.array([frame[1] for frame in self._frames], dtype=float).reshape(len(steps), len(self.variables))
        bias = np.array([frame[2] for frame in self._frames], dtype=float)
        factor = np.array([frame[3] for frame in self._frames], dtype=float)
        return RecordedFrames(steps, cvs[:, 0] if len(self.variables) == 1 else cvs, bias*unit.kilojoules_per_mole,
                              (bias - factor)*unit.kilojoules_per_mole)

    def _walkerSettings(self):
        """What makes the biases of walkers sharing a biasDir addable, recorded there."""
        settings = {'method': 'Metadynamics', 'temperature': self.temperature.value_in_unit(unit.kelvin),
                    'biasFactor': float(self.biasFactor)}
        if self.truncateHills:
            settings['hills'] = 'truncated at 6.25 and stretched (PLUMED)'
        settings.update(_samplerstate.variableSettings(self.variables))
        return settings

    def _settings(self):
        """The settings that define this object's run, as getState() records them (recordFrequency, which
        changes what is recorded and not the run, is left out: a restart may change it)."""
        settings = self._walkerSettings()
        settings.update(mode='well-tempered', height=self.height.value_in_unit(unit.kilojoules_per_mole),
                        biasWidth=[float(v.biasWidth) for v in self.variables], frequency=self.frequency,
                        saveFrequency=self.saveFrequency, walkers=self.biasDir is not None)
        return settings

    def getState(self):
        """Everything this object has built, as plain Python data (a dict of numbers, lists and NumPy
        arrays, which pickles): the hills (centres and heights), this walker's bias and the total bias
        on the grid, c(t) at each hill, the recorded frames, the other walkers' biases read and the
        indices of their files, this walker's id and file index, and the settings that define the
        run. setState() of an object created with the same settings continues from it; the Context
        (positions, velocities, step) is saved apart: saveCheckpoint() writes both to one file."""
        self._settleFactor()
        return {'version': _samplerstate.STATE_VERSION, 'settings': self._settings(),
                'selfBias': self._selfBias.copy(), 'totalBias': self._totalBias.copy(),
                'hillCenters': [[float(x) for x in center] for center in self._hillCenters],
                'hillHeights': [float(h) for h in self._hillHeights], 'factor': float(self._factor),
                'factors': [(int(step), float(factor)) for step, factor in self._factors],
                'frames': [(int(step), [float(x) for x in cvs], float(bias), float(factor))
                           for step, cvs, bias, factor in self._frames],
                'loadedBiases': {other: (index, bias.copy()) for other, (index, bias) in self._loadedBiases.items()},
                'walkerId': self._id, 'saveIndex': self._saveIndex}

    def setState(self, state, context=None):
        """Continue from a getState() of an object created with the same settings (method, grid, CVs,
        temperature, bias factor, height, widths, intervals, walkers or not): ValueError naming the
        state's settings and this object's where they differ. With a biasDir, this walker takes the
        state's id and file index back (the file this object wrote under a new id on creation is
        removed). The bias goes to the force's table; to the Context now if ``context`` is given, else
        at the next step(). A damaged state (a key missing, another shape or type, a number that is not
        finite) is a ValueError naming the key, and changes nothing. loadCheckpoint() does all of it
        from a saveCheckpoint() file."""
        values = self._stateValues(state)
        self._pendingFactor = None
        self._selfBias = values['selfBias']
        self._totalBias = values['totalBias']
        self._hillCenters = [list(center) for center in values['hillCenters']]
        self._hillHeights = list(values['hillHeights'])
        self._factor = values['factor']
        self._factors = values['factors']
        self._frames = values['frames']
        self._loadedBiases = values['loadedBiases']
        if self.biasDir is not None:
            self._id, self._saveIndex = _restoreWalker(self.biasDir, _BIAS_FILE, 'bias', self._id, self._saveIndex,
                                                       values)
        self._grid.setValues(self._totalBias)
        self._pendingUpload = True
        if context is not None:
            self._uploadBias(context)

    def _stateValues(self, state):
        """The values of a getState() dictionary for setState(), checked before anything is changed (by
        setState(), and by loadCheckpoint() before the Context): the settings, every key, the shapes
        and types, numbers finite; ValueError naming what does not fit."""
        _samplerstate.checkState('Metadynamics', state, self._settings())
        restore, dimensions, grid = _samplerstate, len(self.variables), _samplerstate.array(self._shape)
        values = restore.stateValues('Metadynamics', state, {
            'selfBias': grid, 'totalBias': grid, 'hillCenters': restore.array((None, dimensions)),
            'hillHeights': restore.array((None,)), 'factor': restore.number,
            'factors': lambda factors: [(restore.integer(step), restore.number(c)) for step, c in factors],
            'frames': restore.frames(dimensions),
            'loadedBiases': lambda biases: {restore.integer(other): (restore.integer(index), grid(bias))
                                            for other, (index, bias) in biases.items()},
            'walkerId': lambda walkerId: None if walkerId is None else restore.integer(walkerId),
            'saveIndex': restore.integer})
        if len(values['hillCenters']) != len(values['hillHeights']):
            raise _error('setState: the state has %d hill centres and %d hill heights; nothing was restored',
                         len(values['hillCenters']), len(values['hillHeights']))
        return values

    def saveCheckpoint(self, simulation, file):
        """Write the Simulation's checkpoint (Context.createCheckpoint(): positions, velocities, step,
        the integrator's random state) and getState() to ``file`` (a path, written through a
        temporary file, or an open binary file); loadCheckpoint() reads it back. A checkpoint of
        Simulation.saveCheckpoint() alone would lose the hills."""
        _samplerstate.saveCheckpoint(self, simulation, file)

    def loadCheckpoint(self, simulation, file):
        """Read a saveCheckpoint() file: the Context's checkpoint into the Simulation (its currentStep
        included) and the state into this object, whose bias goes to the Context (setState()). Create
        this object with the settings of the run that wrote the file, and the Simulation after it. A file
        whose state setState() refuses leaves the Context as it was. The file is a Python pickle: load
        only checkpoints you trust."""
        _samplerstate.loadCheckpoint('Metadynamics', self, simulation, file)

    def _sample(self, context):
        return self._grid.sample(context)

    def _addHill(self, context, sample=None):
        """Add the hill at the current CVs; ``sample``: _sample(context) where already taken."""
        center, bias = self._sample(context) if sample is None else sample
        if self.truncateHills and not self._loadedBiases:
            bias = self._hillSum(center)       # PLUMED's V(s) without a grid: the exact sum of its hills
        height = self.height.value_in_unit(unit.kilojoules_per_mole)*np.exp(-bias/self._kTDelta)
        dimensions = len(self.variables)
        # Each variable's (grid point - centre)/width along its axis, shaped to broadcast (axis 0 of the grid
        # is the last variable); a periodic variable's the shortest periodic image, as openmm.app's.
        scaled = []
        for k, variable in enumerate(self.variables):
            shape = [1]*dimensions
            shape[dimensions - 1 - k] = variable.gridWidth
            scaled.append((self._grid.distances(k, center[k])/variable.biasWidth).reshape(shape))
        if self.truncateHills:
            gaussian = _truncatedGaussian(sum(0.5*x*x for x in scaled))
        else:
            # The product of the variables' Gaussians, in their order, broadcast: the grid-sized array is
            # made once, by the last product.
            gaussian = None
            for x in scaled:
                factor = np.exp(-0.5*x*x)
                gaussian = factor if gaussian is None else gaussian*factor
        hill = height*gaussian
        self._selfBias += hill
        self._totalBias = self._totalBias + hill     # a new array: the last one may be in c(t)'s thread
        self._hillCenters.append(self._grid.wrapped(center))
        self._hillHeights.append(height)
        self._uploadBias(context)

    def _hillSum(self, center):
        """The sum of this object's truncated hills at ``center`` (PLUMED's getBias without a grid)."""
        if not self._hillCenters:
            return 0.0
        centers = np.array(self._hillCenters, dtype=float).reshape(len(self._hillCenters), len(self.variables))
        halfSquare = 0.5*sum((self._grid.difference(k, center[k], centers[:, k])/v.biasWidth)**2
                             for k, v in enumerate(self.variables))
        return float(np.dot(self._hillHeights, _truncatedGaussian(halfSquare)))

    def _uploadBias(self, context):
        self._grid.upload(context, self._totalBias)
        self._pendingUpload = False

    def _writeBias(self):
        """Write this process's own Gaussians as bias_<id>_<index+1>.npy (through a temporary file and a
        rename, so a reader never sees half a file), then remove this process's previous file."""
        if self.biasDir is None:
            return
        self._saveIndex += 1
        replaceFile(self.biasDir, 'bias', self._id, self._saveIndex, self._selfBias)

    def _readBiases(self, strict):
        """Load the newest file of every other process in biasDir and recompute the total bias; returns
        whether anything new was loaded. A file of another grid shape, or one that cannot be read,
        raises ValueError when strict (at construction); later the first is skipped with a warning, the
        second retried at the next exchange and named by a warning if it fails again."""
        if self.biasDir is None:
            return False
        loaded = False
        seen = {other: index for other, (index, _) in self._loadedBiases.items()}
        self._files.startExchange()
        for other, index, path in newestFiles(self.biasDir, _BIAS_FILE, self._id, seen):
            data = self._files.load(path, strict)
            if data is None:
                continue   # removed or replaced by its writer meanwhile, or unreadable: keep the version read last
            if data.shape != self._shape:
                message = ('biasDir holds %s, a bias of shape %s, but this grid has shape %s (gridWidth of the '
                           'variables in reverse order, as openmm.app); use another biasDir' % (path, data.shape, self._shape))
                if strict:
                    raise _error(message)
                if other not in self._warned:
                    self._warned.add(other)
                    warnings.warn('Metadynamics: ' + message + '; it is ignored', RuntimeWarning)
                continue
            self._loadedBiases[other] = (index, data)
            loaded = True
        if loaded:
            self._totalBias = self._selfBias + sum(bias for _, bias in self._loadedBiases.values())
        return loaded


def _checkResolution(variables):
    """Warn where a variable's grid spacing is larger than half its biasWidth (PLUMED's METAD warns there
    too: 'Grid Spacing larger than half of the Gaussians width can produce artifacts'): the table's spline
    through the grid points cannot follow hills that narrow (at a spacing of one width a hill between two
    points is 2% off in height, at two widths 27%), so the bias, the hills' heights and the free energy
    are wrong, with nothing else to show it."""
    for k, v in enumerate(variables):
        spacing = (v.maxValue - v.minValue)/(v.gridWidth - 1)
        if spacing > 0.5*v.biasWidth*(1 + 1e-9):
            warnings.warn('Metadynamics: the grid spacing of variables[%d], %.6g, is larger than half its biasWidth %.6g: '
                          'the grid cannot resolve the hills (their bias is interpolated between grid points, and the '
                          'free energy is wrong); give a gridWidth of at least %d, or a wider biasWidth'
                          % (k, spacing, v.biasWidth, int(math.ceil(2*(v.maxValue - v.minValue)/v.biasWidth*(1 - 1e-9))) + 1),
                          RuntimeWarning, stacklevel=3)


_FACTOR_THREAD = []


def _factorThread():
    """The one thread (made at first use) that computes c(t) beside the simulation's steps."""
    if not _FACTOR_THREAD:
        _FACTOR_THREAD.append(concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix='metadynamics-ct'))
    return _FACTOR_THREAD[0]


#: PLUMED's cut of a hill (src/bias/MetaD.cpp, DP2CUTOFF): where sum_k (s_k - s0_k)^2/(2 sigma_k^2) reaches it.
DP2CUTOFF = 6.25


def _truncatedGaussian(halfSquare):
    """PLUMED's stretched hill of height 1 at the values d2 = sum_k (s_k - s0_k)^2/(2 sigma_k^2):
    (exp(-d2) - exp(-DP2CUTOFF))/(1 - exp(-DP2CUTOFF)) below DP2CUTOFF, 0 from it on."""
    floor = math.exp(-DP2CUTOFF)
    halfSquare = np.asarray(halfSquare, dtype=float)
    return np.where(halfSquare < DP2CUTOFF, (np.exp(-np.minimum(halfSquare, DP2CUTOFF)) - floor)/(1.0 - floor), 0.0)


def _restoreWalker(biasDir, pattern, prefix, currentId, currentIndex, state):
    """(id, file index) of a walker restored from ``state``: the file written under ``currentId`` at
    creation is removed; the index goes on from the state's, or from the highest of the walker's
    files in biasDir where it wrote more after the state was saved (the other walkers have read
    those). Shared by Metadynamics and OPES."""
    import os
    walkerId, index = state['walkerId'], int(state['saveIndex'])
    if walkerId is None:
        raise ValueError('%s: setState: the state is of a run without walkers (no biasDir), this object writes to '
                         'biasDir %r' % ('OPES' if prefix == 'opes' else 'Metadynamics', biasDir))
    if walkerId != currentId:
        for own in ownFileIndices(biasDir, pattern, currentId):
            os.remove(os.path.join(biasDir, '%s_%d_%d.npy' % (prefix, currentId, own)))
    return walkerId, max([index] + ownFileIndices(biasDir, pattern, walkerId))
