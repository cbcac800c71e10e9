"""Reweighting of well-tempered metadynamics (Tiwary and Parrinello, J. Phys. Chem. B 119, 736 (2015)):
the factor c(t) of a bias grid, and the unbiased histogram and free energy of any quantity recorded
along a biased run.

A frame recorded at time t, with the CVs s(t) and the bias V(s, t) in force then, has the weight
exp(beta [V(s(t), t) - c(t)]) in the unbiased ensemble, beta = 1/(k_B T), where for the bias factor
gamma

    c(t) = (1/beta) ln[ sum_s exp(gamma/(gamma - 1) beta V(s, t)) / sum_s exp(beta V(s, t)/(gamma - 1)) ]

with the sums over the points of the grid. Metadynamics records c(t) at each hill
(getReweightingFactors()) and, with recordFrequency, V and V - c of its frames (getRecordedFrames()):

>>> frames = meta.getRecordedFrames()                             # meta: Metadynamics(..., recordFrequency=50)
>>> skip = len(frames.steps)//10                                  # leave out the first 10%
>>> fes, edges = reweightedFreeEnergy(frames.collectiveVariables, frames.reweightingBias, 300*kelvin, bins=50, skip=skip)
>>> fes, edges = reweightedFreeEnergy(frames.collectiveVariables[:, 0], frames.reweightingBias, 300*kelvin)   # any quantity of the frames
"""

import math
import numbers

import numpy as np

from openmm import unit

from openmmcoordination._checks import _error, _isInteger, _positiveQuantity, _shown

__all__ = ['reweightingFactor', 'reweightingWeights', 'reweightedHistogram', 'reweightedFreeEnergy']

#: The most bins a histogram may have, all variables together (800 MB an array of them).
MAX_BINS = 100000000


def _kT(temperature, owner):
    """k_B T in kJ/mol of a temperature (a Quantity, or a number in kelvin), checked."""
    kelvin = _positiveQuantity(temperature, unit.kelvin, owner, 'temperature', 'a temperature')
    return (unit.MOLAR_GAS_CONSTANT_R*kelvin*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)


def _logSumExp(x):
    largest = x.max()
    return largest + np.log(np.exp(x - largest).sum())


def _reweightingFactor(bias, kT, biasFactor):
    """c of a bias grid (kJ/mol, a float array of any shape), k_B T in kJ/mol, unchecked."""
    scaled = np.ravel(bias)/kT
    return kT*(_logSumExp(scaled*(biasFactor/(biasFactor - 1.0))) - _logSumExp(scaled/(biasFactor - 1.0)))


def _finiteArray(value, owner, name, energy=False):
    """A float array of value (a Quantity in kJ/mol where ``energy``, else in its own unit), checked finite."""
    try:
        if unit.is_quantity(value):
            value = value.value_in_unit(unit.kilojoules_per_mole if energy else value.unit)
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, AttributeError):
        raise _error(owner, '%s must be an array of %s, got %s', name, 'energies' if energy else 'numbers',
                     _shown(value)) from None
    if array.size == 0 or not np.all(np.isfinite(array)):
        raise _error(owner, '%s must be a non-empty array of finite numbers, got %s', name, np.array2string(
            array, threshold=6))
    return array


def reweightingFactor(bias, temperature, biasFactor):
    """c(t) of Tiwary and Parrinello (kJ/mol, a Quantity) for a bias on a grid: bias in kJ/mol (a
    Quantity or numbers; any shape, such as Metadynamics.getBias() or the grid of
    openmm.app.metadynamics), temperature the simulation's, biasFactor gamma > 1. The sums run over
    every grid point; 0 for a bias of zero."""
    name = 'reweightingFactor'
    if not isinstance(biasFactor, numbers.Real) or not math.isfinite(biasFactor) or biasFactor <= 1.0:
        raise _error(name, 'biasFactor must be a number > 1, got %r', biasFactor)
    kT = _kT(temperature, name)
    return _reweightingFactor(_finiteArray(bias, name, 'bias', energy=True), kT, biasFactor)*unit.kilojoules_per_mole


def _reweightingBias(reweightingBias, owner, frames=None):
    """V - c of each frame in kJ/mol, checked: finite, shape (frames,)."""
    bias = _finiteArray(reweightingBias, owner, 'reweightingBias', energy=True)
    if bias.ndim != 1 or (frames is not None and len(bias) != frames):
        raise _error(owner, 'reweightingBias must hold one value per frame, shape (%s,), got shape %s',
                     'frames' if frames is None else frames, bias.shape)
    return bias


def _normalized(exponents):
    """exp(exponents) normalized to a sum of 1, without overflow."""
    weights = np.exp(exponents - exponents.max())
    return weights/weights.sum()


def _withExtraBias(bias, extraBias, owner):
    """reweightingBias plus the extra biases' energy of each frame (kJ/mol, shape (frames,)), checked."""
    if extraBias is None:
        return bias
    extra = _finiteArray(extraBias, owner, 'extraBias', energy=True)
    if extra.shape != bias.shape:
        raise _error(owner, 'extraBias must hold one energy per frame, shape %s, got shape %s', bias.shape, extra.shape)
    return bias + extra


def reweightingWeights(reweightingBias, temperature, extraBias=None):
    """The unbiased weights of frames, exp(beta [V - c(t) + U]) normalized to a sum of 1:
    reweightingBias V - c(t) of each frame in kJ/mol (a Quantity or numbers, shape (frames,), as
    Metadynamics.getRecordedFrames().reweightingBias), temperature the simulation's, extraBias U the
    energy of other biases at each frame (kJ/mol, shape (frames,): walls, restraints; PLUMED's
    REWEIGHT_BIAS over several biases), None for none. The average of a quantity x over the unbiased
    ensemble is then numpy.average(x, weights=...)."""
    owner = 'reweightingWeights'
    bias = _withExtraBias(_reweightingBias(reweightingBias, owner), extraBias, owner)
    return _normalized(bias/_kT(temperature, owner))


def _bins(bins, dimensions, owner):
    """The bins of each axis: a positive integer, or increasing finite edges (at least two)."""
    axes = [bins]*dimensions if dimensions == 1 or _isInteger(bins) else None
    if axes is None:
        try:
            axes = list(bins)
        except TypeError:
            axes = []
    checked = []
    for axis in axes:
        try:
            edges = None if _isInteger(axis) else np.asarray(axis, dtype=float)
        except (TypeError, ValueError):
            edges = np.empty(0)
        if edges is None and axis >= 1:
            checked.append(int(axis))
        elif (edges is not None and edges.ndim == 1 and len(edges) >= 2 and np.all(np.isfinite(edges))
              and np.all(np.diff(edges) > 0)):
            checked.append(edges)
    if len(checked) != dimensions:
        raise _error(owner, 'bins must be a positive integer, increasing edges, or one of these per variable (%d), '
                     'got %r', dimensions, bins)
    total = math.prod(axis if _isInteger(axis) else len(axis) - 1 for axis in checked)
    if total > MAX_BINS:
        raise _error(owner, 'bins must make at most %d bins in all (the histogram is an array of them), got %d for %d '
                     'variables (%s)', MAX_BINS, total, dimensions, _shown(bins) if dimensions == 1 or _isInteger(bins)
                     else 'one per variable')
    return checked


def _ranges(limits, dimensions, owner):
    """None, or (low, high) of each axis, finite and low < high."""
    if limits is None:
        return None
    try:
        pairs = [tuple(float(x) for x in pair) for pair in ([limits] if dimensions == 1 else limits)]
    except (TypeError, ValueError):
        pairs = []
    if len(pairs) != dimensions or not all(len(pair) == 2 and np.all(np.isfinite(pair)) and pair[0] < pair[1]
                                           for pair in pairs):
        raise _error(owner, 'range must be None or (low, high), finite with low < high, one per variable (%d), got %r',
                     dimensions, limits)
    return pairs


def _histogram(owner, values, reweightingBias, temperature, bins, limits, skip, extraBias=None):
    """(probability density in the layout of Metadynamics.getFreeEnergy(), edges per variable)."""
    values = _finiteArray(values, owner, 'values')
    if values.ndim not in (1, 2):
        raise _error(owner, 'values must have shape (frames,) or (frames, variables), got shape %s', values.shape)
    points = values.reshape(len(values), -1)
    bias = _withExtraBias(_reweightingBias(reweightingBias, owner, len(points)), extraBias, owner)
    if not _isInteger(skip) or not 0 <= skip < len(points):
        raise _error(owner, 'skip must be an integer from 0 to the number of frames - 1 (%d), got %r', len(points) - 1,
                     skip)
    weights = _normalized(bias[skip:]/_kT(temperature, owner))
    dimensions = points.shape[1]
    axisBins, axisRanges = _bins(bins, dimensions, owner), _ranges(limits, dimensions, owner)
    counts, edges = np.histogramdd(points[skip:], bins=axisBins, range=axisRanges, weights=weights)
    if not counts.sum() > 0:
        raise _error(owner, 'no frame after the first %d lies within the bins', skip)
    volumes = np.ones(counts.shape)
    for k, axisEdges in enumerate(edges):
        shape = [1]*dimensions
        shape[k] = len(axisEdges) - 1
        volumes = volumes*np.diff(axisEdges).reshape(shape)
    density = np.transpose(counts/counts.sum()/volumes)      # axis 0 the last variable, as getFreeEnergy()
    return density, (edges[0] if dimensions == 1 else list(edges))


def reweightedHistogram(values, reweightingBias, temperature, bins=50, range=None, skip=0, extraBias=None):
    """The unbiased probability density of a quantity recorded along a metadynamics run, each frame
    weighted by exp(beta [V - c(t) + U]); returns (density, edges).

    values: the quantity at each frame, shape (frames,) or (frames, variables) (a Quantity is taken
    in its own unit); reweightingBias: V - c(t) of each frame, kJ/mol (a Quantity or numbers, shape
    (frames,)); temperature: the simulation's; bins: a positive integer, increasing edges, or (for
    several variables) one of these per variable, as numpy.histogramdd; range: (low, high) of the
    integer bins (per variable for several; default: the range of the values); skip: the number of
    first frames to leave out (equilibration); extraBias: U, the energy of other biases at each frame
    (kJ/mol, shape (frames,); walls beside the CVs), or None. The density integrates to 1 over the bins (frames
    outside them are left out). For one variable, density has shape (bins,) and edges is an array;
    for several, density has the layout of Metadynamics.getFreeEnergy() (axis 0 the last variable)
    and edges is a list of arrays, one per variable. Raises ValueError for arrays of other shapes or
    with values that are not finite, bad bins, range or skip, or no frame within the bins."""
    return _histogram('reweightedHistogram', values, reweightingBias, temperature, bins, range, skip, extraBias)


def reweightedFreeEnergy(values, reweightingBias, temperature, bins=50, range=None, skip=0, extraBias=None):
    """The unbiased free energy -k_B T ln P of a quantity recorded along a metadynamics run, P the
    density of reweightedHistogram() (same arguments); returns (free energy, edges): kJ/mol (a
    Quantity), its minimum 0, NaN in the bins that no frame reached."""
    owner = 'reweightedFreeEnergy'
    density, edges = _histogram(owner, values, reweightingBias, temperature, bins, range, skip, extraBias)
    with np.errstate(divide='ignore'):
        freeEnergy = -_kT(temperature, owner)*np.log(density)
    freeEnergy[density == 0] = np.nan
    return (freeEnergy - np.nanmin(freeEnergy))*unit.kilojoules_per_mole, edges
