"""Reweighting of well-tempered metadynamics: c(t) of Tiwary and Parrinello recorded by Metadynamics
against a NumPy reimplementation of the formula on the grids rebuilt after each hill (1-D and 2-D),
the recorded frames (V as the spline of the grid before the frame's hill, V - c), the helpers of
openmmcoordination.reweighting against hand computations, the free energy of two particles in a
double well recovered by reweighting a CPU run, and every error."""

import math

import numpy as np
import pytest

import openmm
import openmm.app as app
from openmm import unit

from openmmcoordination import (CoordinationForce, reweightedFreeEnergy, reweightedHistogram, reweightingFactor,
                                reweightingWeights)
from openmmcoordination.metadynamics import BiasVariable, Metadynamics

from cases import natural_spline
from gr_helpers import (TOY_POTENTIAL, TOY_TEMPERATURE, hills_of, hills_on_grid, run_toy_metadynamics,
                        run_toy_metadynamics_nd, toy_potential, toy_system)

KT = (unit.MOLAR_GAS_CONSTANT_R*TOY_TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)


def numpy_factor(bias, biasFactor=5.0, kT=KT):
    """c(t) written as in Tiwary and Parrinello (2015), the integrals as plain sums over the grid."""
    g = biasFactor
    return kT*np.log(np.sum(np.exp(g/(g - 1)*bias/kT))/np.sum(np.exp(bias/((g - 1)*kT))))


def grids_after_each_hill(meta):
    """The grid of the first k hills, k = 0 .. hills, rebuilt in NumPy."""
    centers, heights = hills_of(meta)
    axes = meta.getCollectiveVariableGrid()
    widths = [v.biasWidth for v in meta.variables]
    return [hills_on_grid(centers[:k], heights[:k], axes, widths) for k in range(len(heights) + 1)]


@pytest.mark.parametrize('dimensions', [1, 2])
def test_reweighting_factors_against_numpy(dimensions):
    """c(t) at the first step() and after each hill equals the formula evaluated in NumPy on the grid of
    the hills so far, to 1e-10; reweightingFactor() of the final bias is the last one."""
    if dimensions == 1:
        meta, _ = run_toy_metadynamics(Metadynamics, 3, 1000, frequency=20)
    else:
        meta, _ = run_toy_metadynamics_nd(Metadynamics, 4, 1000, 2, gridWidth=[41, 31])
    steps, factors = meta.getReweightingFactors()
    np.testing.assert_array_equal(steps, np.arange(0, 1001, 20))
    assert factors.unit == unit.kilojoules_per_mole
    factors = factors.value_in_unit(unit.kilojoules_per_mole)
    grids = grids_after_each_hill(meta)
    assert len(grids) == len(factors) == 51 and grids[-1].shape == meta.getBias()._value.shape
    expected = [numpy_factor(grid) for grid in grids]
    assert expected[0] == factors[0] == 0.0 and expected[-1] > 2.0
    np.testing.assert_allclose(factors, expected, rtol=1e-10, atol=1e-14)
    assert reweightingFactor(meta.getBias(), TOY_TEMPERATURE*unit.kelvin, 5.0).value_in_unit(
        unit.kilojoules_per_mole) == pytest.approx(factors[-1], rel=1e-13)


def test_reweighting_factors_with_walkers(tmp_path):
    """Walkers (2-D): c(t) is that of the total bias, the loaded walkers' included. The second walker
    starts on the first one's file (its first entry is c of that bias); when the first walker goes on
    and reads the second's file at a save step, that step's entry holds both biases."""
    run = dict(dimensions=2, gridWidth=[41, 31], frequency=50, biasDir=str(tmp_path), saveFrequency=500)
    first, simulation = run_toy_metadynamics_nd(Metadynamics, 1, 1000, **run)
    second, _ = run_toy_metadynamics_nd(Metadynamics, 2, 1000, **run)
    first.step(simulation, 500)
    firstGrids, secondGrids = grids_after_each_hill(first), grids_after_each_hill(second)
    steps, factors = second.getReweightingFactors()
    np.testing.assert_array_equal(steps, np.arange(0, 1001, 50))
    expected = [numpy_factor(firstGrids[20] + grid) for grid in secondGrids]
    np.testing.assert_allclose(factors._value, expected, rtol=1e-10)
    assert factors._value[0] > 1.0
    steps, factors = first.getReweightingFactors()
    np.testing.assert_array_equal(steps, np.arange(0, 1501, 50))
    expected = [numpy_factor(grid) for grid in firstGrids[:-1]] + [numpy_factor(firstGrids[-1] + secondGrids[-1])]
    np.testing.assert_allclose(factors._value, expected, rtol=1e-10, atol=1e-14)
    assert factors._value[-1] > numpy_factor(firstGrids[-1]) + 0.5


def test_recorded_frames():
    """1-D, hills every 20 steps, frames every 30: each frame holds its CV, the bias V of the hills
    deposited before its step (NumPy's natural spline of their grid, OpenMM's interpolation) and V - c
    of that grid; at a hill's step the frame's CV is the hill's centre. A second step() continues both
    records."""
    meta, simulation = run_toy_metadynamics(Metadynamics, 5, 600, frequency=20, recordFrequency=30)
    meta.step(simulation, 60)
    frames = meta.getRecordedFrames()
    np.testing.assert_array_equal(frames.steps, np.arange(30, 661, 30))
    np.testing.assert_array_equal(meta.getReweightingFactors()[0], np.arange(0, 661, 20))
    assert frames.collectiveVariables.shape == (22,)
    assert frames.bias.unit == frames.reweightingBias.unit == unit.kilojoules_per_mole
    bias, reweightingBias = frames.bias._value, frames.reweightingBias._value
    grids = grids_after_each_hill(meta)
    axis, = meta.getCollectiveVariableGrid()
    centers = meta.getHillCenters()
    for step, cv, frameBias, frameReweightingBias in zip(frames.steps, frames.collectiveVariables, bias,
                                                         reweightingBias):
        before = grids[(step - 1)//20]           # the hills deposited at steps 20, 40, ... below this one
        expected = natural_spline(axis, before)[0](cv) if 0.0 <= cv <= axis[-1] else 0.0
        assert frameBias == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert frameReweightingBias == pytest.approx(frameBias - numpy_factor(before), rel=1e-9, abs=1e-12)
        if step % 20 == 0:
            assert cv == centers[step//20 - 1]
    assert bias.max() > 2.0 and np.all(reweightingBias < bias)

    meta, _ = run_toy_metadynamics_nd(Metadynamics, 6, 100, 2, recordFrequency=10)
    frames = meta.getRecordedFrames()
    assert frames.collectiveVariables.shape == (10, 2) and frames.bias._value.shape == (10,)
    np.testing.assert_array_equal(frames.collectiveVariables[1::2], meta.getHillCenters())
    meta, _ = run_toy_metadynamics(Metadynamics, 7, 100, frequency=20)
    frames = meta.getRecordedFrames()
    assert meta.recordFrequency is None and frames.steps.shape == frames.collectiveVariables.shape == (0,)


def test_helpers_by_hand():
    """Five frames with the weights 1, 2, 1, 1/2, 4 (V - c = kT ln w): histograms, free energies and the
    layout of two variables computed by hand."""
    weights = np.array([1.0, 2.0, 1.0, 0.5, 4.0])
    reweightingBias = KT*np.log(weights)*unit.kilojoules_per_mole
    temperature = TOY_TEMPERATURE*unit.kelvin
    x = np.array([0.1, 0.2, 0.7, 0.8, 0.75])
    np.testing.assert_allclose(reweightingWeights(reweightingBias, temperature), weights/8.5, rtol=1e-14)
    inKcal = reweightingBias.in_units_of(unit.kilocalories_per_mole)
    np.testing.assert_allclose(reweightingWeights(inKcal, TOY_TEMPERATURE), weights/8.5, rtol=1e-13)
    density, edges = reweightedHistogram(x, reweightingBias, temperature, bins=2, range=(0.0, 1.0))
    np.testing.assert_allclose(edges, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(density, [3/8.5/0.5, 5.5/8.5/0.5], rtol=1e-14)
    freeEnergy, _ = reweightedFreeEnergy(x, reweightingBias, temperature, bins=2, range=(0.0, 1.0))
    assert freeEnergy.unit == unit.kilojoules_per_mole
    np.testing.assert_allclose(freeEnergy._value, [KT*math.log(5.5/3), 0.0], rtol=1e-13, atol=1e-14)
    # skip the first two frames: the first bin is empty (NaN); explicit uneven edges
    freeEnergy, _ = reweightedFreeEnergy(x, reweightingBias, temperature, bins=[0.0, 0.5, 0.76, 1.0], skip=2)
    np.testing.assert_allclose(freeEnergy._value, [np.nan, 0.0, KT*math.log((5/0.26)/(0.5/0.24))], rtol=1e-13,
                               atol=1e-14)
    # frames outside the bins are left out; the density integrates to 1 over the bins
    density, _ = reweightedHistogram(x, reweightingBias, temperature, bins=[0.6, 0.9])
    np.testing.assert_allclose(density, [1/0.3], rtol=1e-14)
    # two variables: axis 0 is the second (the layout of Metadynamics.getFreeEnergy())
    y = np.array([0.1, 0.9, 0.9, 0.1, 0.1])
    density, edges = reweightedHistogram(np.column_stack([x, y]), reweightingBias, temperature,
                                         bins=[2, [0.0, 0.5, 1.0]], range=[(0.0, 1.0), (0.0, 1.0)])
    assert isinstance(edges, list) and len(edges) == 2
    np.testing.assert_allclose(density, np.array([[1.0, 4.5], [2.0, 1.0]])/8.5/0.25, rtol=1e-14)
    # c of a two-point grid, and of a zero bias
    bias = np.array([0.0, 3.0])
    expected = KT*math.log((1 + math.exp(1.25*3.0/KT))/(1 + math.exp(0.25*3.0/KT)))
    factor = reweightingFactor(bias, TOY_TEMPERATURE, 5.0)
    assert factor.value_in_unit(unit.kilojoules_per_mole) == pytest.approx(expected, rel=1e-14)
    assert reweightingFactor(np.zeros((3, 4)), temperature, 2.0).value_in_unit(unit.kilojoules_per_mole) == 0.0


class DistanceReporter(object):
    """Records the distance between particles 0 and 1 every ``interval`` steps."""

    def __init__(self, interval):
        self.interval, self.steps, self.distances = interval, [], []

    def describeNextReport(self, simulation):
        return (self.interval - simulation.currentStep % self.interval, True, False, False, False)

    def report(self, simulation, state):
        positions = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
        self.steps.append(simulation.currentStep)
        self.distances.append(np.linalg.norm(positions[1] - positions[0]))


def double_well_run(seed, steps, record=10):
    """Two particles (mass 10) in 3-D free space bound by the toy's double well U(r) (wells at 0.25 and
    0.45 nm, barrier 10 kJ/mol, 4 kT), well-tempered metadynamics (gamma 5, hills every 100 steps) on
    the coordination of a one-pair pair list, s(r) = 1/(1 + (r/0.35)^6), on the CPU platform."""
    system, topology = toy_system(1)
    cv = CoordinationForce()
    cv.setPairs([0], [1], [], [])
    cv.setR0(0.35)
    meta = Metadynamics(system, [BiasVariable(cv, 0.0, 1.0, 0.03, gridWidth=101)], TOY_TEMPERATURE*unit.kelvin, 5.0,
                        1.0*unit.kilojoules_per_mole, 100, recordFrequency=record)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    platform = openmm.Platform.getPlatformByName('CPU')
    simulation = app.Simulation(topology, system, integrator, platform, {'Threads': '1'})
    simulation.context.setPositions([[0.0, 0.0, 0.0], [0.25, 0.0, 0.0]])
    simulation.context.setVelocitiesToTemperature(TOY_TEMPERATURE, seed)
    reporter = DistanceReporter(record)
    simulation.reporters.append(reporter)
    meta.step(simulation, steps)
    return meta, simulation, reporter


def exact_free_energy(edges, density):
    """-kT ln of the mean of an unnormalized density over each bin (midpoint rule, 400 points a bin)."""
    fractions = (np.arange(400) + 0.5)/400
    points = edges[:-1, None] + fractions[None, :]*np.diff(edges)[:, None]
    with np.errstate(divide='ignore'):
        return -KT*np.log(density(points).mean(axis=1))


def rms_deviation(freeEnergy, exact, mask):
    """RMS of the difference over the mask, after the best constant shift."""
    difference = freeEnergy[mask] - exact[mask]
    return np.sqrt(np.mean((difference - difference.mean())**2))


def test_reweighted_free_energy_of_a_double_well():
    """The reweighted free energies of the CV and of the distance r (another recorded quantity) match
    the exact ones within 1 kJ/mol RMS over the bins within 15 kJ/mol (6 kT) of the minimum.

    Exact: in free space (no constraint) the distance of two particles has the density
    r^2 exp(-U(r)/kT), so F(r) = U(r) - 2 kT ln r; the CV s(r) is monotonic over the sampled range
    (dmax 2.4 nm), so F(s) = F(r(s)) - kT ln |dr/ds|, with ds/dr from evaluateSwitchingFunction. Both
    are averaged over each bin. The first 10% of the frames are left out (equilibration).

    Measured over seeds 1 to 20 (100,000 steps, 10,000 frames, 7 to 8 s on an idle core, 10 to 22 s on
    a loaded 2-core machine; OpenMM 8.6.1, 2026-11-26): RMS 0.22 to 0.44 kJ/mol for the CV, 0.16 to
    0.44 for r; the histograms without reweighting are 3.2 to 3.5 kJ/mol away."""
    meta, _, reporter = double_well_run(seed=1, steps=100000)
    frames = meta.getRecordedFrames()
    np.testing.assert_array_equal(frames.steps, reporter.steps)
    skip = len(frames.steps)//10

    def density_r(r):
        return r**2*np.exp(-toy_potential(r)/KT)

    cv = meta.force.getCollectiveVariable(0)
    table = np.linspace(0.02, 1.5, 20001)                # s decreases with r: tabulate s, ds/dr, invert
    s, dsdr = np.array([cv.evaluateSwitchingFunction(float(r)) for r in table]).T
    assert np.all(np.diff(s) < 0)

    def density_s(values):
        r = np.interp(values, s[::-1], table[::-1])
        return density_r(r)/np.abs(np.interp(values, s[::-1], dsdr[::-1]))

    cases = [('cv', frames.collectiveVariables, np.linspace(0.0, 1.0, 51), density_s),
             ('r', np.array(reporter.distances), np.linspace(0.15, 0.6, 46), density_r)]
    for name, values, edges, density in cases:
        exact = exact_free_energy(edges, density)
        mask = exact - exact.min() < 15.0
        freeEnergy, histogramEdges = reweightedFreeEnergy(values, frames.reweightingBias, TOY_TEMPERATURE*unit.kelvin,
                                                          bins=edges, skip=skip)
        freeEnergy = freeEnergy.value_in_unit(unit.kilojoules_per_mole)
        np.testing.assert_array_equal(histogramEdges, edges)
        assert mask.sum() > 25 and np.all(np.isfinite(freeEnergy[mask])), name
        assert rms_deviation(freeEnergy, exact, mask) < 1.0, name
        unweighted, _ = reweightedFreeEnergy(values, np.zeros(len(values)), TOY_TEMPERATURE, bins=edges, skip=skip)
        assert rms_deviation(unweighted._value, exact, mask & np.isfinite(unweighted._value)) > 2.0, name


def _metadynamics(**options):
    system, _ = toy_system(1)
    return Metadynamics(system, [BiasVariable(CoordinationForce([0], [1]), 0.0, 1.0, 0.1, gridWidth=11)], 300, 5.0, 1.0,
                        100, **options)


X, RB = np.linspace(0.0, 1.0, 5), np.zeros(5)

ERRORS = [
    # (what, call, regular expression of the message)
    ('recordFrequency 0', lambda: _metadynamics(recordFrequency=0),
     r'Metadynamics: recordFrequency must be None or a positive integer, got 0'),
    ('recordFrequency float', lambda: _metadynamics(recordFrequency=10.0),
     r'Metadynamics: recordFrequency .*got 10\.0'),
    ('recordFrequency bool', lambda: _metadynamics(recordFrequency=True), r'Metadynamics: recordFrequency .*got True'),
    ('factor biasFactor', lambda: reweightingFactor(RB, 300, 1.0),
     r'reweightingFactor: biasFactor must be a number > 1, got 1\.0'),
    ('factor bias nan', lambda: reweightingFactor([0.0, np.nan], 300, 5.0),
     r'reweightingFactor: bias must be a non-empty array of finite numbers, got \[ 0\. nan\]'),
    ('factor bias empty', lambda: reweightingFactor([], 300, 5.0),
     r'reweightingFactor: bias must be a non-empty array'),
    ('factor bias unit', lambda: reweightingFactor(RB*unit.nanometer, 300, 5.0),
     r'reweightingFactor: bias must be an array of energies, got \[0\. 0\. 0\. 0\. 0\.\] nm'),
    ('factor temperature', lambda: reweightingFactor(RB, -300, 5.0),
     r'reweightingFactor: temperature must be positive and finite, got -300'),
    ('factor temperature unit', lambda: reweightingFactor(RB, 300*unit.nanometer, 5.0),
     r'reweightingFactor: temperature must be a temperature, got 300 nm'),
    ('weights shape', lambda: reweightingWeights(np.zeros((2, 2)), 300),
     r'reweightingWeights: reweightingBias must hold one value per frame, shape \(frames,\), got shape \(2, 2\)'),
    ('weights inf', lambda: reweightingWeights([0.0, np.inf], 300),
     r'reweightingWeights: reweightingBias must be a non-empty'),
    ('values shape', lambda: reweightedHistogram(np.zeros((5, 2, 2)), RB, 300),
     r'reweightedHistogram: values must have shape \(frames,\) or \(frames, variables\), got shape \(5, 2, 2\)'),
    ('values no variable', lambda: reweightedHistogram(np.zeros((5, 0)), RB, 300), r'reweightedHistogram: values must'),
    ('values nan', lambda: reweightedHistogram([0.0, np.nan, 1, 2, 3], RB, 300),
     r'reweightedHistogram: values must be a non-empty array of finite numbers'),
    ('values text', lambda: reweightedHistogram(['a'] * 5, RB, 300),
     r"reweightedHistogram: values must be an array of numbers, got \['a'"),
    ('frames differ', lambda: reweightedHistogram(X, np.zeros(4), 300),
     r'reweightedHistogram: reweightingBias must hold one value per frame, shape \(5,\), got shape \(4,\)'),
    ('skip negative', lambda: reweightedHistogram(X, RB, 300, skip=-1),
     r'reweightedHistogram: skip must be an integer from 0 to the number of frames - 1 \(4\), got -1'),
    ('skip all', lambda: reweightedHistogram(X, RB, 300, skip=5), r'reweightedHistogram: skip .* got 5'),
    ('skip float', lambda: reweightedHistogram(X, RB, 300, skip=1.5), r'reweightedHistogram: skip .* got 1\.5'),
    ('bins 0', lambda: reweightedHistogram(X, RB, 300, bins=0),
     r'reweightedHistogram: bins must be a positive integer, increasing edges, or one of these per'
     r' variable \(1\), got 0'),
    ('bins decreasing', lambda: reweightedHistogram(X, RB, 300, bins=[1.0, 0.5, 0.0]),
     r'reweightedHistogram: bins .*got \[1\.0, 0\.5, 0\.0\]'),
    ('bins one edge', lambda: reweightedHistogram(X, RB, 300, bins=[0.5]), r'reweightedHistogram: bins .*got \[0\.5\]'),
    ('bins text', lambda: reweightedHistogram(X, RB, 300, bins='auto'), r"reweightedHistogram: bins .*got 'auto'"),
    ('bins per variable', lambda: reweightedHistogram(np.zeros((5, 2)), RB, 300, bins=[4, 4, 4]),
     r'reweightedHistogram: bins .* per variable \(2\), got \[4, 4, 4\]'),
    ('bins too many', lambda: reweightedHistogram(X, RB, 300, bins=10**12),
     r'reweightedHistogram: bins must make at most 100000000 bins in all \(the histogram is an array of them\), got '
     r'1000000000000 for 1 variables \(1000000000000\)'),                                       # was a MemoryError
    ('bins too many variables', lambda: reweightedHistogram(np.zeros((5, 40)), RB, 300, bins=2),
     r'reweightedHistogram: bins must make at most .* got 1099511627776 for 40 variables \(2\)'),   # NumPy's "invalid dims"
    ('range reversed', lambda: reweightedHistogram(X, RB, 300, range=(1.0, 0.0)),
     r'reweightedHistogram: range must be None or \(low, high\), finite with low < high, one per'
     r' variable \(1\), got \(1\.0, 0\.0\)'),
    ('range nan', lambda: reweightedHistogram(X, RB, 300, range=(0.0, np.nan)),
     r'reweightedHistogram: range .*got \(0\.0, nan\)'),
    ('range per variable', lambda: reweightedHistogram(np.zeros((5, 2)), RB, 300, range=(0.0, 1.0)),
     r'reweightedHistogram: range .*\(2\), got \(0\.0, 1\.0\)'),
    ('nothing in the bins', lambda: reweightedHistogram(X, RB, 300, range=(2.0, 3.0), skip=1),
     r'reweightedHistogram: no frame after the first 1 lies within the bins'),
    ('temperature', lambda: reweightedHistogram(X, RB, 0),
     r'reweightedHistogram: temperature must be positive and finite, got 0'),
    ('free energy names itself', lambda: reweightedFreeEnergy(X, RB, 300, bins=-2),
     r'reweightedFreeEnergy: bins .*got -2'),
]


@pytest.mark.parametrize('what, call, message', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(what, call, message):
    """ValueError naming the class or function, the parameter and the value."""
    with pytest.raises(ValueError, match='^' + message):
        call()
