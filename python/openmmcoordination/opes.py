"""OPES, on-the-fly probability enhanced sampling (Invernizzi and Parrinello, J. Phys. Chem. Lett. 11,
2731 (2020)), on one, two or three coordination numbers: PLUMED's OPES_METAD and OPES_METAD_EXPLORE
with the bias on a grid applied by one CoordinationBiasForce, as Metadynamics does, so the bias
stays on the Context's platform between updates.

>>> system, integrator = newSystem()                              # a System for this run
>>> opes = OPES(system, [BiasVariable(nacl, 0.0, 1.0, 0.04, gridWidth=201)], 300*kelvin, barrier=30*kilojoules_per_mole, frequency=500)
>>> simulation = Simulation(topology, system, integrator)          # after creating opes
>>> simulation.context.setPositions(positions)
>>> opes.step(simulation, steps)
>>> opes.getFreeEnergy()               # kJ/mol on the grid, as Metadynamics.getFreeEnergy()

PLUMED: ``OPES_METAD ARG=c1 TEMP=300 PACE=500 BARRIER=30`` (docs/opes.md maps every keyword).

Every ``frequency`` steps it reads the CVs, deposits a kernel as PLUMED does (weight exp(V/kT) of the bias
there, width shrinking with the effective sample size, merged into its nearest kernel when closer
than compressionThreshold widths), updates Z and evaluates the bias
V(s) = (1 - 1/gamma) k_B T ln(P(s)/Z + epsilon) on the grid from the kernels that changed, then
replaces the values of the force's table (updateTabulatedFunctionInContext: on CUDA the GPU fits
the splines). The kernels, Z and the bias at the sampled CVs are exact (double
precision, every kernel summed); the simulation feels the table's spline of the grid.
"""

import collections
import math
import numbers
import re
import warnings
import weakref

import numpy as np

from openmm import unit

from openmmcoordination._checks import _error as _ownerError, _isInteger, _positiveQuantity, _simulation, _steps
from openmmcoordination._gridbias import (GridBias, checkRunOptions, checkVariables, freeForceGroup, newestFiles,
                                          newWalkerId, replaceFile)
from openmmcoordination import _samplerstate
from openmmcoordination._opeskernels import GridSum, Kernels
from openmmcoordination.metadynamics import BiasVariable, RecordedFrames  # the frames of OPES.getRecordedFrames()
from openmmcoordination.metadynamics import _restoreWalker

__all__ = ['OPES', 'BiasVariable']

#: PLUMED's output components after each update (OPES.getHistory()).
History = collections.namedtuple('History', ['steps', 'rct', 'zed', 'neff', 'nker'])

_KERNEL_FILE = re.compile(r'opes_(\d+)_(\d+)\.npy')

#: The relative rounding below 2 grid spacings that the resolution warning lets pass.
RESOLUTION_TOLERANCE = 1e-9


def _isSequence(value):
    return unit.is_quantity(value) and isinstance(value._value, (list, tuple, np.ndarray))


def _dimensionless(x):
    """A number from a number or a dimensionless Quantity (the coordination numbers have no unit)."""
    if unit.is_quantity(x):
        if x.unit.is_dimensionless():
            return x.value_in_unit(unit.dimensionless)
        raise TypeError('a coordination number has no unit')
    return x


def _error(message, *args):
    return _ownerError('OPES', message, *args)


def _positiveNumbers(value, count, name):
    """A list of ``count`` positive finite numbers, or ValueError. One number (or a dimensionless
    Quantity) stands for a list of one where there is one variable."""
    # Each element by str(): a list's repr shows a Quantity as its repr, which differs between OpenMM versions
    given = ('[%s]' % ', '.join(str(x) for x in value)) if isinstance(value, (list, tuple)) else str(value)
    if count == 1 and (isinstance(value, numbers.Real) or unit.is_quantity(value) and not _isSequence(value)):
        value = [value]
    try:
        numbers_ = [float(_dimensionless(x)) for x in value]
    except (TypeError, ValueError) as error:
        why = ' (a coordination number has no unit)' if 'no unit' in str(error) else ''
        raise _error('%s must be a list of %d positive numbers (one per variable; a number for one)%s, got %s', name, count,
                     why, given) from None
    if len(numbers_) != count or not all(math.isfinite(x) and x > 0 for x in numbers_):
        raise _error('%s must be a list of %d positive numbers (one per variable; a number for one), got %s', name, count,
                     given)
    return np.array(numbers_)


def _extraBiasGroups(extraBias, explore, biasGroup):
    """The sorted force groups of extraBias (None, a force group 0-31 or an openmm.Force, or a list of
    them), checked: not with explore (PLUMED's OPES_METAD_EXPLORE has no EXTRA_BIAS), not the group
    the bias force will take."""
    import openmm
    if extraBias is None:
        return []
    items = list(extraBias) if isinstance(extraBias, (list, tuple, set)) else [extraBias]
    groups = set()
    for item in items:
        if isinstance(item, openmm.Force):
            groups.add(item.getForceGroup())
        elif _isInteger(item) and 0 <= item <= 31:
            groups.add(int(item))
        else:
            raise _error('extraBias must be a force group (0 to 31), an openmm.Force or a list of them, got %r', item)
    if not groups:
        raise _error('extraBias must name at least one force group or Force, got %r', extraBias)
    if explore:
        raise _error('extraBias is for OPES_METAD (PLUMED\'s OPES_METAD_EXPLORE has no EXTRA_BIAS), got exploreMode=True '
                     'and extraBias=%r', extraBias)
    if biasGroup in groups:
        raise _error('extraBias holds force group %d, which the bias force takes (the highest free group); put the '
                     'extra biases in groups their own', biasGroup)
    return sorted(groups)


class OPES(object):
    """OPES_METAD (or OPES_METAD_EXPLORE with exploreMode=True) of PLUMED on 1, 2 or 3 coordination
    numbers, the bias applied by one CoordinationBiasForce whose table is the bias on the variables'
    grid (the same force, grid and layout as Metadynamics).

    Parameters
    ----------
    system: System
        the System to simulate; the bias force is added to it
    variables: list of 1, 2 or 3 BiasVariable
        the collective variables and their grids (minValue, maxValue, gridWidth), as for
        Metadynamics (CoordinationForces, DistanceCVs, CVFunctions of them, or other Forces through a
        CustomCVForce); their biasWidth is the kernels' width only with sigma='biasWidth'. The variable
        of such another Force may be periodic (periodic=True: a torsion from -pi to pi), as for
        Metadynamics: as PLUMED's OPES_METAD on a periodic CV, every difference (the kernels' values,
        compression, the merged centre, the adaptive sigma's running variance) takes the nearest image,
        the CV and the kernels' centres lie in [minValue, maxValue), and the grid's sum and table wrap
        around the period. The grid must resolve the kernels,
        which narrow as the sample grows: a spacing of at most half the narrowest kernel width (a
        warning says when a kernel is narrower than two spacings).
    temperature: temperature
        the simulation temperature (PLUMED's TEMP)
    barrier: energy
        the free-energy barrier to overcome (BARRIER); sets the defaults of biasFactor, epsilon and
        kernelCutoff
    frequency: int
        the interval in steps between kernel depositions (PACE); ``pace=`` is accepted as an alias
    biasFactor: float (optional)
        gamma of the well-tempered target (BIASFACTOR), > 1; default barrier/(k_B T); ``float('inf')``
        for a flat target (not with explore or an adaptive sigma)
    sigma: list of float, or a float for one variable, or 'biasWidth' (optional)
        the initial kernel widths, one per variable (SIGMA), numbers or dimensionless Quantities;
        'biasWidth': each variable's biasWidth (what openmm-opes takes); None (the default):
        adaptive (SIGMA=ADAPTIVE), from PLUMED's running variance of the CVs, updated at every step
        of the whole run (on the device where each variable is a CoordinationForce: the bias force's
        CV statistics, CoordinationBiasForce.setCVStatisticsStride; else read on the host every
        step); no kernel is deposited during the first adaptiveSigmaStride steps. The default stays
        adaptive rather than biasWidth, which
        BiasVariable requires of every variable: taking it would silently change every run that
        relies on the adaptive default
    epsilon: float (optional)
        the regularization of the probability (EPSILON), > 0; default exp(-barrier/((1 - 1/gamma) k_B T))
        (explore: exp(-barrier/((gamma - 1) k_B T)))
    compressionThreshold: float
        merge a new kernel into the nearest one closer than this, in its widths (COMPRESSION_THRESHOLD);
        0 never merges; below kernelCutoff
    exploreMode: bool
        OPES_METAD_EXPLORE (openmm-opes's name; ``explore=`` is accepted as an alias): the estimate is that of the sampled (well-tempered) distribution, a plain
        kernel density with unit heights, and the bias (gamma - 1) k_B T ln(P/Z + epsilon)
    adaptiveSigmaStride: int (optional, keyword)
        the steps of the adaptive sigma's first measure, and then the decay time of its running
        mean (ADAPTIVE_SIGMA_STRIDE), >= pace; default 10 pace
    sigmaMin: list of float (optional, keyword)
        widths below which kernels never shrink (SIGMA_MIN)
    fixedSigma: bool (keyword)
        kernels keep their initial widths instead of shrinking with the sample size (FIXED_SIGMA)
    kernelCutoff: float (optional, keyword)
        kernels are truncated at this distance in widths (KERNEL_CUTOFF); default
        sqrt(2 barrier/((1 - 1/gamma) k_B T)) (explore: sqrt(2 barrier/(k_B T)))
    saveFrequency, biasDir: (optional, keyword)
        walkers sharing a directory, as Metadynamics: every saveFrequency steps (a multiple of pace)
        this object writes its deposited kernels to biasDir (``opes_<id>_<index>.npy``) and adds the
        kernels that the other walkers have deposited since it last read them
    recordFrequency: int (optional, keyword)
        the interval in steps at which step() records a frame (CVs and bias) for reweighting
    extraBias: force group, openmm.Force, or a list of them (optional, keyword)
        other biases whose energy enters the kernels' weights (PLUMED's EXTRA_BIAS, OPES_METAD
        only): a kernel deposited where the bias is V and these force groups' energy is U has the
        log-weight (V + U)/kT, so that the estimate is of the distribution without them too (walls
        beside a coordination CV are the common case). A Force is taken by its force group when the
        object is created; the groups' energy is read from the Context at each update and frame, and
        a frame's reweightingBias is V + U

    Raises ValueError naming the class, the parameter and its value for any invalid argument,
    before the System or biasDir is touched.
    """

    def __init__(self, system, variables, temperature, barrier, frequency=None, biasFactor=None, sigma=None, epsilon=None,
                 compressionThreshold=1.0, exploreMode=False, *, adaptiveSigmaStride=None, sigmaMin=None, fixedSigma=False,
                 kernelCutoff=None, saveFrequency=None, biasDir=None, recordFrequency=None, pace=None, explore=None,
                 extraBias=None):
        # pace and explore: PLUMED's and this class's earlier names, accepted as aliases
        frequencyName = 'frequency'
        if pace is not None:
            if frequency is not None:
                raise _error('give frequency or its alias pace, not both, got frequency=%r, pace=%r', frequency, pace)
            frequency, frequencyName = pace, 'pace'
        if frequency is None:
            raise _error('frequency (the steps between kernels, PLUMED\'s PACE) is required, got None')
        exploreName = 'exploreMode'
        if explore is not None:
            if exploreMode is not False:
                raise _error('give exploreMode or its alias explore, not both, got exploreMode=%r, explore=%r',
                             exploreMode, explore)
            exploreMode, exploreName = explore, 'explore'
        explore, pace = exploreMode, frequency
        variables = checkVariables('OPES', variables)
        dimensions = len(variables)
        temperatureK = _positiveQuantity(temperature, unit.kelvin, 'OPES', 'temperature', 'a temperature')
        barrierKJ = _positiveQuantity(barrier, unit.kilojoules_per_mole, 'OPES', 'barrier', 'an energy')
        kT = (unit.MOLAR_GAS_CONSTANT_R*temperatureK*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
        if not _isInteger(pace) or pace <= 0:
            raise _error('%s must be a positive integer, got %r', frequencyName, pace)
        if not isinstance(explore, bool):
            raise _error('%s must be True or False, got %r', exploreName, explore)
        if fixedSigma not in (True, False):
            raise _error('fixedSigma must be True or False, got %r', fixedSigma)
        if biasFactor is None:
            biasFactor = barrierKJ/kT
            if biasFactor <= 1.0:
                raise _error('the default biasFactor, barrier/kT = %g, must be > 1: give a barrier above kT (%g kJ/mol) '
                             'or a biasFactor', biasFactor, kT)
        elif (not isinstance(biasFactor, numbers.Real) or isinstance(biasFactor, bool) or math.isnan(biasFactor)
              or biasFactor <= 1.0):
            raise _error('biasFactor must be a number > 1 (or inf), got %r', biasFactor)
        if math.isinf(biasFactor) and (explore or sigma is None):
            raise _error('biasFactor inf (a flat target) needs explore=False and a given sigma, got explore=%r, sigma=%r',
                         explore, sigma)
        prefactor = biasFactor - 1.0 if explore else (1.0 if math.isinf(biasFactor) else 1.0 - 1.0/biasFactor)
        if isinstance(sigma, str):
            if sigma != 'biasWidth':
                raise _error("sigma must be numbers, 'biasWidth' or None, got %r", sigma)
            sigma = [v.biasWidth for v in variables]
        if sigma is not None:
            sigma = _positiveNumbers(sigma, dimensions, 'sigma')
            if adaptiveSigmaStride is not None:
                raise _error('adaptiveSigmaStride is for an adaptive sigma (sigma=None), got sigma=%r', list(sigma))
        elif adaptiveSigmaStride is None:
            adaptiveSigmaStride = 10*int(pace)
        elif not _isInteger(adaptiveSigmaStride) or adaptiveSigmaStride < pace:
            raise _error('adaptiveSigmaStride must be an integer >= %s (%d), got %r', frequencyName, pace, adaptiveSigmaStride)
        if sigmaMin is not None:
            sigmaMin = _positiveNumbers(sigmaMin, dimensions, 'sigmaMin')
        if epsilon is None:
            epsilon = math.exp(-barrierKJ/prefactor/kT)
        elif not isinstance(epsilon, numbers.Real) or not math.isfinite(epsilon) or epsilon <= 0:
            raise _error('epsilon must be a positive number, got %r', epsilon)
        if epsilon == 0.0:
            raise _error('the default epsilon, exp(-barrier/(%g kT)), is 0 for barrier %g kJ/mol: give an epsilon',
                         prefactor, barrierKJ)
        if kernelCutoff is None:
            kernelCutoff = math.sqrt(2*barrierKJ/(kT if explore else prefactor*kT))
        elif not isinstance(kernelCutoff, numbers.Real) or not math.isfinite(kernelCutoff) or kernelCutoff <= 0:
            raise _error('kernelCutoff must be a positive number, got %r', kernelCutoff)
        if (not isinstance(compressionThreshold, numbers.Real) or not math.isfinite(compressionThreshold)
                or compressionThreshold < 0 or compressionThreshold >= kernelCutoff):
            raise _error('compressionThreshold must be a number >= 0 and below kernelCutoff (%g), got %r', kernelCutoff,
                         compressionThreshold)
        checkRunOptions('OPES', frequencyName, pace, saveFrequency, biasDir, recordFrequency)
        extraGroups = _extraBiasGroups(extraBias, explore, freeForceGroup('OPES', system))
        self._grid = GridBias('OPES', system, variables)

        self.variables = variables
        self.temperature = temperatureK*unit.kelvin
        self.barrier = barrierKJ*unit.kilojoules_per_mole
        self.frequency = int(pace)
        self.biasFactor = float(biasFactor)
        self.epsilon = float(epsilon)
        self.compressionThreshold = float(compressionThreshold)
        self.kernelCutoff = float(kernelCutoff)
        self.exploreMode = explore
        self.sigma = None if sigma is None else sigma.copy()
        self.adaptiveSigmaStride = None if adaptiveSigmaStride is None else int(adaptiveSigmaStride)
        self.sigmaMin = sigmaMin
        self.fixedSigma = bool(fixedSigma)
        self.saveFrequency = None if saveFrequency is None else int(saveFrequency)
        self.biasDir = biasDir
        self.recordFrequency = None if recordFrequency is None else int(recordFrequency)
        self.extraBias = extraBias
        self._extraGroups = extraGroups
        self._kT = kT
        self._prefactor = prefactor
        # The initial sigma of explore is that of the sampled distribution, F/gamma: sqrt(gamma) wider.
        self._sigma0 = None if sigma is None else (sigma*math.sqrt(biasFactor) if explore else sigma.copy())
        self._sumWeights = epsilon**prefactor          # PLUMED's start: counter 1, w0 = exp(V0/kT)
        self._sumWeights2 = self._sumWeights**2
        self._counter = 1
        self._zed = 1.0
        self._norm = float(self._counter) if explore else self._sumWeights
        self._adaptiveCounter = 0
        self._averageCV = np.zeros(dimensions)
        self._m2 = np.zeros(dimensions)
        self._firstDeposit = True
        # The adaptive sigma's statistics on the device (the bias force's CV statistics) where each
        # variable is one of its CVs; the host mirrors them at each update (and getState()).
        self._deviceStatistics = self._sigma0 is None and self._grid.variablesAreCVs()
        self._pendingStatistics = False
        self._context = None
        if self._deviceStatistics:
            self._grid.force.setCVStatisticsStride(self.adaptiveSigmaStride)
        # Periodic variables (a torsion): their differences take the nearest image, as PLUMED's Value::difference.
        domains = [(v.minValue, v.maxValue) if v.periodic else None for v in variables]
        self._kernels = Kernels(dimensions, self.kernelCutoff, self.compressionThreshold, domains)
        self._gridSum = GridSum(self._kernels, self._grid.axes)
        self._deposited = []       # this walker's kernels as deposited: centre, sigma, height, log-weight
        self._history = []         # (step, rct, zed, neff, nker) after each update
        self._frames = []          # (step, CVs, V)
        self._readRows = {}        # walker id -> kernels read from its file
        self._seenFiles = {}       # walker id -> index of its file read last
        self._warned = set()
        self._files = _samplerstate.WalkerFiles('OPES')
        self._saveIndex = 0
        self._id = None
        self._pendingUpload = False
        self._grid.markCopies('OPES')
        if biasDir is not None:
            _samplerstate.checkDirectory('OPES', biasDir, self._walkerSettings())
            before = (self._zed, self._norm, 0)
            self._readKernels(strict=True)
            _samplerstate.recordSettings('OPES', biasDir, self._walkerSettings())
            self._finishUpdate(*before)
            self._id = newWalkerId(biasDir, _KERNEL_FILE)
            self._writeKernels()
        self._grid.setValues(self._tableValues())
        self._grid.addTo(system)

    @property
    def force(self):
        """The CoordinationBiasForce in the System that applies the bias, as Metadynamics.force.

        Its table holds getBias() - (gamma-1)/gamma k_B T ln(epsilon), the bias shifted to 0 where no
        kernel reaches (a constant, which changes no force), so that it is continuous at the grid's
        edges, beyond which the force is 0."""
        return self._grid.force

    def step(self, simulation, steps):
        """Advance the simulation by ``steps`` time steps: a kernel whenever simulation.currentStep
        reaches a multiple of ``pace`` (after the adaptive sigma's first adaptiveSigmaStride steps), the
        files of walkers at multiples of ``saveFrequency``, a frame at multiples of ``recordFrequency``.
        An adaptive sigma's running statistics count every step, as PLUMED's: on the device (nothing
        read back between updates) where each variable is a CoordinationForce, else from the CVs read
        here at every step. ``steps`` is an integer (one below 0 runs no step), as for Metadynamics.step()."""
        _simulation('OPES', 'step', simulation)
        remaining = _steps('OPES', steps)
        self._grid.checkContext(simulation.context)
        self._context = weakref.ref(simulation.context)
        if self._pendingUpload:
            self._upload(simulation.context)
        if self._pendingStatistics:
            self._writeStatistics(simulation.context)
        if not self._history:
            self._history.append((simulation.currentStep,) + self._statistics())
        while remaining > 0:
            if self._hostStatistics():
                chunk = 1
            else:
                intervals = [n for n in (self.frequency, self.recordFrequency) if n is not None]
                chunk = min([remaining] + [n - simulation.currentStep % n for n in intervals])
            simulation.step(chunk)
            remaining -= chunk
            step = simulation.currentStep
            measuring = self._hostStatistics()
            record = self.recordFrequency is not None and step % self.recordFrequency == 0
            deposit = step % self.frequency == 0
            if not (measuring or record or deposit):
                continue
            cvs = np.array(self._grid.collectiveVariables(simulation.context))
            self._grid.checkSample(cvs, step)
            cvs = np.array(self._grid.wrapped(cvs))    # a periodic CV in [minValue, maxValue), as PLUMED's values
            bias = self._biasAt(cvs)
            extra = self._extraEnergy(simulation.context)
            if record:
                self._frames.append((step, cvs, bias, extra))
            if measuring:
                self._measure(cvs)
            elif deposit and self._deviceStatistics:
                self._readStatistics(simulation.context)
            if deposit and not self._measuringSigma():
                self._deposit(step, cvs, bias, simulation.context, extra)

    def _measuringSigma(self):
        return self._sigma0 is None and self._adaptiveCounter < self.adaptiveSigmaStride

    def _hostStatistics(self):
        """Whether the adaptive sigma's statistics are kept here, from the CVs read every step (a
        CVFunction or the CustomCVForce path), rather than by the bias force on the device."""
        return self._sigma0 is None and not self._deviceStatistics

    def _readStatistics(self, context):
        """Mirror the device's running statistics, through the Context's current step."""
        mean, m2, count = self._grid.force.getCVStatistics(context)
        self._averageCV, self._m2, self._adaptiveCounter = mean, m2, count

    def _writeStatistics(self, context):
        """Replace the device's running statistics with this object's (they hold the current step)."""
        self._grid.force.setCVStatistics(context, self._averageCV, self._m2, self._adaptiveCounter)
        self._pendingStatistics = False

    def _liveContext(self):
        """The Context of the last step() call, where it still exists."""
        return None if self._context is None else self._context()

    def _measure(self, cvs):
        """PLUMED's running variance of the CVs for the adaptive sigma (Welford's update with an
        exponentially decaying mean over adaptiveSigmaStride samples); along a periodic variable both
        differences take the nearest image and the mean is left unwrapped, as PLUMED's update()."""
        self._adaptiveCounter += 1
        tau = min(self._adaptiveCounter, self.adaptiveSigmaStride)
        difference = self._kernels.difference(self._averageCV, cvs)
        self._averageCV = self._averageCV + difference/tau
        self._m2 = self._m2 + difference*self._kernels.difference(self._averageCV, cvs)

    def _biasAt(self, cvs):
        """PLUMED's bias at the CVs, exact: (gamma-1)/gamma k_B T ln(P/Z + epsilon) from every kernel."""
        probability = self._kernels.evaluate(cvs)[0]/self._norm
        return self._kT*self._prefactor*math.log(probability/self._zed + self.epsilon)

    def _extraEnergy(self, context):
        """The energy of the extraBias force groups in the Context (kJ/mol); 0 without extraBias."""
        if not self._extraGroups:
            return 0.0
        state = context.getState(getEnergy=True, groups=set(self._extraGroups))
        return state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)

    def _deposit(self, step, cvs, bias, context, extra=0.0):
        """One update of PLUMED's OPES_METAD at the CVs, where the bias is ``bias`` and the extraBias
        groups' energy ``extra``: the kernel's log-weight is (bias + extra)/kT, as PLUMED's EXTRA_BIAS."""
        before = (self._zed, self._norm, len(self._kernels))
        self._kernels.clearDeltas()
        logWeight = (bias + extra)/self._kT
        height = math.exp(logWeight)
        self._counter += 1
        self._sumWeights += height
        self._sumWeights2 += height*height
        if self.exploreMode:
            height = 1.0            # a plain kernel density of the sampled distribution
        first = self._firstDeposit
        sigma = self._kernelWidths()
        if first and self._deviceStatistics and self.sigma is None and not self.exploreMode:
            self._writeStatistics(context)     # PLUMED's adjustment of the first estimate is kept
        if not self.fixedSigma:
            size = self._counter if self.exploreMode else self._neff()
            rescaling = (size*(len(self.variables) + 2.0)/4.0)**(-1.0/(4 + len(self.variables)))
            if self.sigmaMin is None:
                sigma = sigma*rescaling
                height /= rescaling**len(self.variables)
            else:
                factors = np.maximum(rescaling, self.sigmaMin/sigma)
                sigma = sigma*factors
                height /= np.prod(factors)
        self._kernels.add(height, cvs, sigma)
        self._deposited.append(np.concatenate([cvs, sigma, [height, logWeight]]))
        self._checkResolution(sigma)
        if self.saveFrequency is not None and step % self.saveFrequency == 0:
            self._writeKernels()
            self._readKernels(strict=False)
        self._finishUpdate(*before)
        self._history.append((step,) + self._statistics())
        self._upload(context)

    def _upload(self, context):
        self._grid.upload(context, self._tableValues())
        self._pendingUpload = False

    def _kernelWidths(self):
        """The widths of a new kernel before the rescaling: sigma (sqrt(gamma) sigma with explore), or
        the adaptive one from the running variance."""
        if self._sigma0 is not None:
            return self._sigma0.copy()
        if self.exploreMode:
            return np.sqrt(self._m2/self._adaptiveCounter)
        if self._firstDeposit:
            self._m2 = self._m2/(1.0 - self._prefactor)    # the first estimate is unbiased: adjust it
        self._firstDeposit = False
        return np.sqrt(self._m2/self._adaptiveCounter*(1.0 - self._prefactor))

    def _neff(self):
        return (1.0 + self._sumWeights)**2/(1.0 + self._sumWeights2)

    def _statistics(self):
        """(rct, zed, neff, nker), PLUMED's components."""
        return (self._kT*math.log(self._sumWeights/self._counter), self._zed, self._neff(), len(self._kernels))

    def _finishUpdate(self, oldZed, oldNorm, oldCount):
        """After the kernels of an update were added (Z, the normalization and the number of kernels
        before it given): the new normalization, Z and the grid sum."""
        self._norm = float(self._counter) if self.exploreMode else self._sumWeights
        if len(self._kernels) > 0:
            self._zed = self._kernels.zed(oldZed, oldNorm, oldCount, self._norm)
        self._gridSum.apply(self._kernels.deltas)

    def _tableValues(self):
        """The bias on the grid less its value where no kernel reaches, (gamma-1)/gamma kT ln(epsilon)."""
        scaled = np.maximum(self._gridSum.values, 0.0)/(self._norm*self._zed*self.epsilon)
        return self._kT*self._prefactor*np.log1p(scaled)

    def _checkResolution(self, sigma):
        """Warn once per variable where a kernel is narrower than 2 grid spacings by more than a rounding
        (RESOLUTION_TOLERANCE, relative): sigmaMin equal to 2 spacings, whose kernels are
        sigmaMin/sigma*sigma wide, gives no warning."""
        for k, (variable, width) in enumerate(zip(self.variables, sigma)):
            spacing = (variable.maxValue - variable.minValue)/(variable.gridWidth - 1)
            if width < 2*spacing*(1 - RESOLUTION_TOLERANCE) and k not in self._warned:
                self._warned.add(k)
                warnings.warn('OPES: the kernels of variables[%d] are %.7g wide, less than 2 grid spacings (%g): the '
                              'table cannot follow the bias; use a larger gridWidth or a sigmaMin' % (k, width, spacing),
                              RuntimeWarning)

    def getBias(self):
        """PLUMED's bias on the grid, (gamma-1)/gamma k_B T ln(P/Z + epsilon) (kJ/mol, a Quantity), in
        the layout of Metadynamics.getBias(); P from every kernel, exact at the grid points."""
        return (self._tableValues() + self._kT*self._prefactor*math.log(self.epsilon))*unit.kilojoules_per_mole

    def getBiasAt(self, collectiveVariables):
        """PLUMED's bias at the given CV values (one per variable), from every kernel (kJ/mol, a
        Quantity): what getBias() gives at the grid points, anywhere; NaN where a value is not finite."""
        try:
            values = np.array(collectiveVariables, dtype=float).reshape(len(self.variables))
        except (TypeError, ValueError):
            raise _error('getBiasAt: collectiveVariables must be %d numbers (one per variable), got %r',
                         len(self.variables), collectiveVariables) from None
        if not np.all(np.isfinite(values)):
            return math.nan*unit.kilojoules_per_mole       # not the bias where no kernel reaches
        return self._biasAt(values)*unit.kilojoules_per_mole

    def getFreeEnergy(self):
        """The free energy on the grid, -gamma/(gamma - 1) times the bias (kJ/mol, a Quantity): -k_B T
        ln(P/Z + epsilon) of OPES_METAD, -gamma k_B T ln(P/Z + epsilon) of explore (whose P is the
        sampled distribution); -bias for gamma = inf. The layout of Metadynamics.getFreeEnergy()."""
        factor = 1.0 if math.isinf(self.biasFactor) else self.biasFactor/(self.biasFactor - 1.0)
        return -factor*self.getBias()

    def getCollectiveVariables(self, simulation):
        """The current values of the collective variables, a tuple with one float per variable."""
        _simulation('OPES', 'getCollectiveVariables', simulation)
        return tuple(self._grid.collectiveVariables(simulation.context))

    def getCollectiveVariableGrid(self):
        """The CV values of the grid points, as Metadynamics.getCollectiveVariableGrid()."""
        return self._grid.axesForUser()

    def getKernels(self):
        """The compressed kernels: (centers, sigmas, heights), arrays of shape (kernels, variables),
        (kernels, variables) and (kernels,); the heights without the normalization 1/(sum of weights)."""
        return self._kernels.centers.copy(), self._kernels.sigmas.copy(), self._kernels.heights.copy()

    @property
    def pace(self):
        """An alias of ``frequency`` (PLUMED's PACE, this class's earlier name)."""
        return self.frequency

    @property
    def explore(self):
        """An alias of ``exploreMode`` (this class's earlier name)."""
        return self.exploreMode

    def getHistory(self):
        """PLUMED's components after each update, a History named tuple of arrays: ``steps``, ``rct``
        (kJ/mol, a Quantity: k_B T ln of the mean weight, c(t) of OPES; flat once converged), ``zed``
        (Z), ``neff`` (the effective sample size) and ``nker`` (the number of compressed kernels). The
        first entry is at the first step() call, before any kernel."""
        steps = np.array([h[0] for h in self._history], dtype=np.int64)
        columns = [np.array([h[i] for h in self._history]) for i in range(1, 5)]
        return History(steps, columns[0]*unit.kilojoules_per_mole, columns[1], columns[2], columns[3].astype(np.int64))

    def getRecordedFrames(self):
        """The frames recorded every ``recordFrequency`` steps, a RecordedFrames named tuple as
        Metadynamics.getRecordedFrames(): ``steps``, ``collectiveVariables`` (a periodic variable's in
        [minValue, maxValue), as the kernels take them), ``bias`` (PLUMED's
        opes.bias: the bias at the frame's CVs from the kernels before the frame's update) and
        ``reweightingBias``, the same V plus the extraBias groups' energy at the frame (0 without
        extraBias): OPES's bias is quasi-static, a frame's unbiased weight is exp(reweightingBias/(k_B
        T)) (see openmmcoordination.reweighting)."""
        steps = np.array([frame[0] for frame in self._frames], dtype=np.int64)
        cvs = np.array([frame[1] for frame in self._frames], dtype=float).reshape(len(steps), len(self.variables))
        bias = np.array([frame[2] for frame in self._frames], dtype=float)
        extra = np.array([frame[3] for frame in self._frames], dtype=float)
        return RecordedFrames(steps, cvs[:, 0] if len(self.variables) == 1 else cvs, bias*unit.kilojoules_per_mole,
                              (bias + extra)*unit.kilojoules_per_mole)

    def _walkerSettings(self):
        """What makes the kernels of walkers sharing a biasDir addable, recorded there: the method and
        mode, the temperature, barrier, bias factor, epsilon and kernel cutoff, the CVs and grid."""
        settings = {'method': 'OPES', 'mode': 'OPES_METAD_EXPLORE' if self.exploreMode else 'OPES_METAD',
                    'temperature': self.temperature.value_in_unit(unit.kelvin),
                    'barrier': self.barrier.value_in_unit(unit.kilojoules_per_mole), 'biasFactor': self.biasFactor,
                    'epsilon': self.epsilon, 'kernelCutoff': self.kernelCutoff}
        settings.update(_samplerstate.variableSettings(self.variables))
        return settings

    def _settings(self):
        """The settings that define this object's run, as getState() records them (recordFrequency, which
        changes what is recorded and not the run, is left out: a restart may change it)."""
        settings = self._walkerSettings()
        settings.update(frequency=self.frequency, compressionThreshold=self.compressionThreshold,
                        sigma=None if self.sigma is None else [float(x) for x in self.sigma],
                        adaptiveSigmaStride=self.adaptiveSigmaStride, fixedSigma=self.fixedSigma,
                        sigmaMin=None if self.sigmaMin is None else [float(x) for x in self.sigmaMin],
                        saveFrequency=self.saveFrequency, walkers=self.biasDir is not None,
                        extraBias=list(self._extraGroups))
        return settings

    def getState(self):
        """Everything this object has built, as plain Python data (a dict of numbers, lists and NumPy
        arrays, which pickles): the compressed kernels, this walker's deposited kernels, the sums of
        weights and the counter (c(t), Z, neff), the adaptive sigma's running variance, the kernel sum
        on the grid, the history and recorded frames, the other walkers' kernels read and the indices
        of their files, this walker's id and file index, and the settings that define the run.
        setState() of an object created with the same settings continues from it; the Context is
        saved apart: saveCheckpoint() writes both to one file. An adaptive sigma's statistics kept on
        the device are read from the Context of the last step() call, through its current step."""
        context = self._liveContext()
        if self._deviceStatistics and context is not None and not self._pendingStatistics:
            self._readStatistics(context)
        kernels = self._kernels
        return {'version': _samplerstate.STATE_VERSION, 'settings': self._settings(),
                'centers': kernels.centers.copy(), 'sigmas': kernels.sigmas.copy(), 'heights': kernels.heights.copy(),
                'deposited': np.array(self._deposited, dtype=float).reshape(len(self._deposited), 2*len(self.variables) + 2),
                'sumWeights': self._sumWeights, 'sumWeights2': self._sumWeights2, 'counter': self._counter,
                'zed': self._zed, 'norm': self._norm, 'adaptiveCounter': self._adaptiveCounter,
                'averageCV': self._averageCV.copy(), 'm2': self._m2.copy(), 'firstDeposit': self._firstDeposit,
                'gridSum': self._gridSum.values.copy(), 'gridSumUpdates': self._gridSum.updates,
                'history': [tuple(float(x) if i else int(x) for i, x in enumerate(h)) for h in self._history],
                'frames': [(int(step), [float(x) for x in cvs], float(bias), float(extra))
                           for step, cvs, bias, extra in self._frames],
                'readRows': dict(self._readRows), 'seenFiles': dict(self._seenFiles), 'warned': sorted(self._warned, key=str),
                'walkerId': self._id, 'saveIndex': self._saveIndex}

    def setState(self, state, context=None):
        """Continue from a getState() of an object created with the same settings (mode, grid, CVs,
        temperature, barrier, bias factor, epsilon, sigma and the other kernel options, intervals,
        walkers or not): ValueError naming the state's settings and this object's where they differ.
        With a biasDir, this walker takes the state's id and file index back (the file this object
        wrote under a new id on creation is removed). The bias goes to the force's table; to the
        Context now if ``context`` is given, else at the next step(), and so do an adaptive sigma's
        statistics kept on the device (they then hold the Context's current step: give the Context at
        the state's step). A damaged state (a key missing, another shape or type, a number that is not
        finite) is a ValueError naming the key, and changes nothing. loadCheckpoint() does all of it from
        a saveCheckpoint() file."""
        values = self._stateValues(state)
        kernels = self._kernels
        kernels.centers, kernels.sigmas, kernels.heights = values['centers'], values['sigmas'], values['heights']
        kernels.clearDeltas()
        self._deposited = list(values['deposited'])
        self._sumWeights, self._sumWeights2 = values['sumWeights'], values['sumWeights2']
        self._counter, self._zed, self._norm = values['counter'], values['zed'], values['norm']
        self._adaptiveCounter = values['adaptiveCounter']
        self._averageCV = values['averageCV']
        self._m2 = values['m2']
        self._firstDeposit = values['firstDeposit']
        self._gridSum.values = values['gridSum']
        self._gridSum.updates = values['gridSumUpdates']
        self._history = values['history']
        self._frames = [(step, np.array(cvs, dtype=float), bias, extra) for step, cvs, bias, extra in values['frames']]
        self._readRows, self._seenFiles = values['readRows'], values['seenFiles']
        self._warned = values['warned']
        if self.biasDir is not None:
            self._id, self._saveIndex = _restoreWalker(self.biasDir, _KERNEL_FILE, 'opes', self._id, self._saveIndex,
                                                       values)
        self._grid.setValues(self._tableValues())
        self._pendingUpload = True
        self._pendingStatistics = self._deviceStatistics
        if context is not None:
            self._upload(context)
            if self._pendingStatistics:
                self._writeStatistics(context)

    def _stateValues(self, state):
        """The values of a getState() dictionary for setState(), checked before anything is changed (by
        setState(), and by loadCheckpoint() before the Context): the settings, every key, the shapes
        and types, numbers finite; ValueError naming what does not fit."""
        _samplerstate.checkState('OPES', state, self._settings())
        restore, dimensions = _samplerstate, len(self.variables)
        counts = lambda files: {restore.integer(other): restore.integer(n) for other, n in files.items()}  # noqa: E731
        values = restore.stateValues('OPES', state, {
            'centers': restore.array((None, dimensions)), 'sigmas': restore.array((None, dimensions), positive=True),
            'heights': restore.array((None,)), 'deposited': restore.array((None, 2*dimensions + 2)),
            'sumWeights': restore.number, 'sumWeights2': restore.number, 'counter': restore.integer,
            'zed': restore.number, 'norm': restore.number, 'adaptiveCounter': restore.integer,
            'averageCV': restore.array((dimensions,)), 'm2': restore.array((dimensions,)),
            'firstDeposit': restore.boolean, 'gridSum': restore.array(self._gridSum.shape),
            'gridSumUpdates': restore.integer,
            'history': restore.tuples(5),
            'frames': restore.frames(dimensions), 'readRows': counts, 'seenFiles': counts,
            'warned': lambda warned: set(tuple(w) if isinstance(w, list) else w for w in warned),
            'walkerId': lambda walkerId: None if walkerId is None else restore.integer(walkerId),
            'saveIndex': restore.integer})
        if not len(values['centers']) == len(values['sigmas']) == len(values['heights']):
            raise _error('setState: the state has %d kernel centres, %d widths and %d heights; nothing was restored',
                         len(values['centers']), len(values['sigmas']), len(values['heights']))
        return values

    def saveCheckpoint(self, simulation, file):
        """Write the Simulation's checkpoint and getState() to ``file``, as Metadynamics.saveCheckpoint()."""
        _samplerstate.saveCheckpoint(self, simulation, file)

    def loadCheckpoint(self, simulation, file):
        """Read a saveCheckpoint() file into the Simulation and this object, as
        Metadynamics.loadCheckpoint()."""
        _samplerstate.loadCheckpoint('OPES', self, simulation, file)

    def _writeKernels(self):
        """This walker's deposited kernels (rows: centre, sigma, height, log-weight) to biasDir."""
        self._saveIndex += 1
        rows = np.array(self._deposited, dtype=float).reshape(len(self._deposited), 2*len(self.variables) + 2)
        replaceFile(self.biasDir, 'opes', self._id, self._saveIndex, rows)

    def _readKernels(self, strict):
        """Add the kernels that other walkers deposited since they were last read: each adds its weight
        to the sums and one to the count, and is merged as a kernel of this walker. A file of another
        number of variables, or one that cannot be read, raises ValueError when strict (at
        construction); later the first is skipped with a warning, the second retried at the next
        exchange and named by a warning if it fails again."""
        columns = 2*len(self.variables) + 2
        self._files.startExchange()
        for other, index, path in newestFiles(self.biasDir, _KERNEL_FILE, self._id, self._seenFiles):
            rows = self._files.load(path, strict)
            if rows is None:
                continue     # removed or replaced by its writer meanwhile, or unreadable: retried at the next exchange
            dimensions = len(self.variables)
            message = None
            if rows.ndim != 2 or rows.shape[1] != columns:
                message = ('biasDir holds %s, kernels of shape %s, but %d variables need %d columns; use another '
                           'biasDir' % (path, rows.shape, len(self.variables), columns))
            elif not np.all(rows[:, dimensions:2*dimensions] > 0):
                message = ('biasDir holds %s, kernels whose widths (columns %d to %d) are not all positive; use another '
                           'biasDir' % (path, dimensions, 2*dimensions - 1))
            if message is not None:
                if strict:
                    raise _error(message)
                if ('file', other) not in self._warned:
                    self._warned.add(('file', other))
                    warnings.warn('OPES: ' + message + '; it is ignored', RuntimeWarning)
                continue
            self._seenFiles[other] = index
            for row in rows[self._readRows.get(other, 0):]:
                weight = math.exp(row[-1])
                self._counter += 1
                self._sumWeights += weight
                self._sumWeights2 += weight*weight
                self._kernels.add(row[-2], row[:dimensions], row[dimensions:2*dimensions])
            self._readRows[other] = len(rows)
