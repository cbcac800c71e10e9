"""The reporters write what they claim: g(r) accumulated every N steps of a Simulation (the same
counts as frame-by-frame histograms at those steps), and the CV over time."""

import io

import numpy as np
import pytest

import openmm
import openmm.app as app
from openmm import unit

from openmmcoordination import CoordinationForce
from openmmcoordination.gr import PairDistribution, addHistogramForce
from openmmcoordination.reporters import CollectiveVariableReporter, PairDistributionReporter

from gr_helpers import lj_fluid


class HistogramRecorder(object):
    """A reporter that records the force's histogram and CV at each report, for comparison."""

    def __init__(self, interval, force, numBins, maxDistance):
        self.interval, self.force, self.numBins, self.maxDistance = interval, force, numBins, maxDistance
        self.counts, self.cv, self.steps = [], [], []

    def describeNextReport(self, simulation):
        return (self.interval - simulation.currentStep % self.interval, False, False, False, False, None)

    def report(self, simulation, state):
        self.counts.append(self.force.getPairHistogram(simulation.context, self.numBins, self.maxDistance))
        self.cv.append(self.force.getCollectiveVariableValue(simulation.context))
        self.steps.append(simulation.currentStep)


def simulation_with(force_factory, seed=3):
    system, topology, positions = lj_fluid()
    integrator = openmm.LangevinMiddleIntegrator(120, 5, 0.004)
    integrator.setRandomNumberSeed(seed)
    force = force_factory(system, integrator)
    simulation = app.Simulation(topology, system, integrator, openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(positions)
    simulation.minimizeEnergy(maxIterations=50)
    return simulation, force


def test_pair_distribution_reporter(tmp_path):
    simulation, force = simulation_with(lambda s, i: addHistogramForce(s, list(range(64)), integrator=i))
    path = tmp_path/'gr.csv'
    reporter = PairDistributionReporter(str(path), 10, force, numBins=40, maxDistance=0.8, writeInterval=100)
    recorder = HistogramRecorder(10, force, 40, 0.8)
    simulation.reporters += [reporter, recorder]
    assert reporter.describeNextReport(simulation) == {'steps': 10, 'periodic': None, 'include': []}
    simulation.step(100)
    assert path.exists()  # written at step 100 (writeInterval)
    written = PairDistribution.readCSV(str(path))
    assert written.numFrames == 10
    simulation.step(50)
    assert reporter.numFrames == 15 and recorder.steps == list(range(10, 151, 10))
    reporter.close()
    gr = PairDistribution.readCSV(str(path))
    np.testing.assert_array_equal(gr.counts, np.sum(recorder.counts, axis=0))
    assert gr.numFrames == 15 and gr.mode == 'one group' and gr.numPairs == 64*63//2
    assert gr.volume == pytest.approx(1.6**3)
    live = reporter.getPairDistribution()
    np.testing.assert_allclose(gr.g, live.g, rtol=1e-9, equal_nan=True)
    # a liquid: g is 0 at short range, has a first peak near the LJ minimum 2^(1/6) sigma
    assert np.all(gr.g[gr.r < 0.25] == 0)
    assert 0.34 < gr.getFirstPeak().value_in_unit(unit.nanometer) < 0.42
    reporter.reset()
    assert reporter.numFrames == 0


def test_reporter_requires_multiple_write_interval():
    with pytest.raises(ValueError):
        PairDistributionReporter('x.csv', 10, CoordinationForce([0, 1]), writeInterval=15)
    with pytest.raises(ValueError):
        PairDistributionReporter('x.csv', 0, CoordinationForce([0, 1]))


def test_reporter_arguments_are_checked_before_the_run(tmp_path):
    """What would fail at the first report or at the end of the run (after the simulation: bins, range,
    the folder of the file) is refused when the reporter is created, naming the parameter and the value;
    an interval is a positive integer, not truncated."""
    force = CoordinationForce([0, 1])
    cases = [(dict(file=str(tmp_path/'missing'/'gr.csv')), "file '.*gr.csv' is in a folder that does not exist"),
             (dict(numBins=0), 'numBins must be an integer from 1 to MaxHistogramBins = 10000000, got 0'),
             (dict(numBins=10**9), 'numBins .*got 1000000000'),
             (dict(maxDistance=-1.0), 'maxDistance must be positive, got -1.0'),
             (dict(maxDistance=2*unit.kilojoule_per_mole), 'maxDistance must be a distance .*got 2 kJ/mol'),
             (dict(volume=0.0), 'volume must be positive and finite, got 0.0'),
             (dict(reportInterval=0), r'reportInterval must be a positive integer \(steps\), got 0'),
             (dict(reportInterval=2.5), 'reportInterval must be .*got 2.5'),
             (dict(reportInterval='10'), "reportInterval must be .*got '10'"),
             (dict(writeInterval=15), r'writeInterval must be a multiple of reportInterval \(10\), got 15')]
    for options, message in cases:
        arguments = dict(dict(file=str(tmp_path/'gr.csv'), reportInterval=10, force=force), **options)
        with pytest.raises(ValueError, match='PairDistributionReporter: ' + message):
            PairDistributionReporter(**arguments)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="CollectiveVariableReporter: reportInterval must be .*got 0"):
        CollectiveVariableReporter(str(tmp_path/'cv.csv'), 0, force)


def test_collective_variable_reporter_appends_under_its_header(tmp_path):
    """append=True to a file that does not exist yet (the first run of a restartable script) writes the
    header; appending to a file of other columns is refused, the file left as it was."""
    simulation, force = simulation_with(lambda s, i: addHistogramForce(s, list(range(10)), integrator=i))
    path = tmp_path/'cv.csv'
    for run in range(2):
        reporter = CollectiveVariableReporter(str(path), 10, force, append=True)
        simulation.reporters = [reporter]
        simulation.step(20)
        reporter.close()
    lines = path.read_text().splitlines()
    assert lines[0] == 'step,time_ps,cv' and len(lines) == 5
    np.testing.assert_array_equal(np.loadtxt(str(path), delimiter=',', skiprows=1)[:, 0], [10, 20, 30, 40])
    with pytest.raises(ValueError, match=r"CollectiveVariableReporter: cannot append to '.*cv.csv': its columns are "
                       r"'step,time_ps,cv', this reporter writes 'step,time_ps,coordination'"):
        CollectiveVariableReporter(str(path), 10, force, names=['coordination'], append=True)
    assert path.read_text().splitlines() == lines


def test_collective_variable_reporter(tmp_path):
    def factory(system, integrator):
        a = CoordinationForce([0, 1, 2], list(range(3, 64)))
        a.setUsesPeriodicBoundaryConditions(True)
        a.setR0(0.4)
        a.setEnergyExpression('0')
        b = CoordinationForce(list(range(10)))
        b.setUsesPeriodicBoundaryConditions(True)
        b.setEnergyExpression('0')
        system.addForce(a)
        system.addForce(b)
        return a, b
    simulation, (a, b) = simulation_with(factory)
    path = tmp_path/'cv.csv'
    reporter = CollectiveVariableReporter(str(path), 20, [a, b], names=['near', 'self'])
    recorderA, recorderB = HistogramRecorder(20, a, 5, 0.5), HistogramRecorder(20, b, 5, 0.5)
    stream = io.StringIO()
    printer = CollectiveVariableReporter(stream, 40, a)
    simulation.reporters += [reporter, recorderA, recorderB, printer]
    simulation.step(120)
    reporter.close()
    lines = path.read_text().splitlines()
    assert lines[0] == 'step,time_ps,near,self'
    data = np.loadtxt(str(path), delimiter=',', skiprows=1)
    assert data.shape == (6, 4)
    np.testing.assert_array_equal(data[:, 0], np.arange(20, 121, 20))
    np.testing.assert_allclose(data[:, 1], data[:, 0]*0.004, rtol=1e-6)
    np.testing.assert_allclose(data[:, 2], recorderA.cv, rtol=1e-9)
    np.testing.assert_allclose(data[:, 3], recorderB.cv, rtol=1e-9)
    np.testing.assert_allclose(reporter.values, np.column_stack([recorderA.cv, recorderB.cv]))
    np.testing.assert_array_equal(reporter.steps, np.arange(20, 121, 20))
    np.testing.assert_allclose(reporter.times, np.arange(20, 121, 20)*0.004)
    printed = stream.getvalue().splitlines()
    assert printed[0] == 'step,time_ps,cv' and len(printed) == 4
    # append mode writes no second header
    again = CollectiveVariableReporter(str(path), 20, [a, b], names=['near', 'self'], append=True)
    simulation.reporters = [again]
    simulation.step(20)
    again.close()
    assert len(path.read_text().splitlines()) == 8
    with pytest.raises(ValueError):
        CollectiveVariableReporter(None, 10, [a, b], names=['x'])


def test_collective_variable_reporter_bias_force(tmp_path):
    """A CoordinationBiasForce gives one column per CV, named as its CVs; mixed with a CoordinationForce
    the columns follow the forces' order. Values against each CV computed alone (a copy in a System of
    its own)."""
    import copy
    from openmmcoordination import CoordinationBiasForce

    def cv(group_a, r0):
        force = CoordinationForce(group_a, list(range(10, 64)))
        force.setUsesPeriodicBoundaryConditions(True)
        force.setR0(r0)
        return force
    originals = [cv([0, 1], 0.4), cv([2], 0.5)]

    def factory(system, integrator):
        bias = CoordinationBiasForce('0*(near + far)')
        bias.addCollectiveVariable('near', copy.deepcopy(originals[0]))
        bias.addCollectiveVariable('far', copy.deepcopy(originals[1]))
        system.addForce(bias)
        alone = cv([3], 0.45)
        alone.setEnergyExpression('0')
        system.addForce(alone)
        return bias, alone
    simulation, (bias, alone) = simulation_with(factory)
    path = tmp_path/'cvs.csv'
    reporter = CollectiveVariableReporter(str(path), 25, bias)
    mixed = CollectiveVariableReporter(None, 25, [alone, bias])
    simulation.reporters += [reporter, mixed]
    simulation.step(50)
    reporter.close()
    assert path.read_text().splitlines()[0] == 'step,time_ps,near,far'
    assert mixed.names == ['cv0', 'cv1', 'cv2'] and mixed.values.shape == (2, 3)
    positions = simulation.context.getState(getPositions=True).getPositions()
    expected = []
    for force in (copy.deepcopy(alone), originals[0], originals[1]):
        system = openmm.System()
        for i in range(64):
            system.addParticle(1.0)
        system.setDefaultPeriodicBoxVectors(*simulation.system.getDefaultPeriodicBoxVectors())
        force.setEnergyExpression('cv')
        system.addForce(force)
        context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
        context.setPositions(positions)
        expected.append(force.getCollectiveVariableValue(context))
    np.testing.assert_allclose(mixed.values[-1], expected, rtol=1e-10)
    np.testing.assert_allclose(reporter.values[-1], expected[1:], rtol=1e-10)
    data = np.loadtxt(str(path), delimiter=',', skiprows=1)
    np.testing.assert_allclose(data[:, 2:], reporter.values, rtol=1e-9)
    assert expected[1] > 0.1 and expected[2] > 0.1
    with pytest.raises(ValueError, match='1 names for 2 collective variables'):
        CollectiveVariableReporter(None, 10, bias, names=['x'])
