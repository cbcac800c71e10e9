"""Reporters for openmm.app.Simulation: g(r) accumulated during a run, the coordination number
over time, and progress lines for a long run (runWithProgress).

>>> # force: addHistogramForce(system, ions, oxygens), or any CoordinationForce in the System
>>> simulation.reporters.append(PairDistributionReporter('gr.csv', 100, force, 200, 1.0))
>>> simulation.reporters.append(CollectiveVariableReporter('cv.csv', 100, force))
>>> simulation.reporters.append(app.DCDReporter('traj.dcd', 100))      # a trajectory for analyzeTrajectory
>>> simulation.step(steps)
>>> simulation.reporters[0].close()                              # writes gr.csv

CollectiveVariableReporter(file, interval, meta.force) reports every CV of a bias force.
"""

import os
import time

import numpy as np

from openmm import unit

from openmmcoordination._checks import _isInteger
from openmmcoordination.gr import PairDistributionAccumulator, _histogramArguments


def _checkInterval(owner, name, value):
    """A report or write interval: a positive integer number of steps; ValueError naming it otherwise."""
    if not _isInteger(value) or value <= 0:
        raise ValueError('%s: %s must be a positive integer (steps), got %r' % (owner, name, value))
    return int(value)

__all__ = ['PairDistributionReporter', 'CollectiveVariableReporter', 'runWithProgress']


class PairDistributionReporter(object):
    """Accumulates the pair histogram of a CoordinationForce every ``reportInterval`` steps, on the
    Context's platform (on the GPU for CUDA), and writes g(r) and n(r) as CSV
    (PairDistribution.writeCSV: r_nm, r_low_nm, width_nm, g, n, pairs_within, counts).

    The histogram is read back only when the file is written: every ``writeInterval`` steps if
    given, and by close() or writeFile().

    Parameters
    ----------
    file: str
        the CSV file to write (rewritten with the running average each time); its folder must exist
    reportInterval: int
        the interval in steps between frames added to the histogram
    force: CoordinationForce
        a force in the simulated System whose pairs are counted (see addHistogramForce())
    numBins: int
        the number of bins
    maxDistance: float or Quantity
        the upper edge of the last bin (nm)
    writeInterval: int (optional)
        the interval in steps at which the file is rewritten; a multiple of reportInterval
    correct: bool
        correct the shells beyond the minimum image range (see gr.shellVolumes)
    volume: float or Quantity (optional)
        the volume (nm^3) used to normalize a non-periodic force
    """

    def __init__(self, file, reportInterval, force, numBins=200, maxDistance=1.0, writeInterval=None,
                 correct=True, volume=None):
        reportInterval = _checkInterval('PairDistributionReporter', 'reportInterval', reportInterval)
        if writeInterval is not None and _checkInterval('PairDistributionReporter', 'writeInterval', writeInterval) \
                % reportInterval != 0:
            raise ValueError('PairDistributionReporter: writeInterval must be a multiple of reportInterval (%d), got %r'
                             % (reportInterval, writeInterval))
        # the file is written at the end of the run: a folder that does not exist is refused now, not then
        folder = os.path.dirname(os.path.abspath(file)) if isinstance(file, (str, os.PathLike)) else None
        if folder is not None and not os.path.isdir(folder):
            raise ValueError('PairDistributionReporter: file %r is in a folder that does not exist (%s)' % (file, folder))
        _histogramArguments('PairDistributionReporter', numBins, maxDistance, volume)
        self._file = file
        self._reportInterval = reportInterval
        self._writeInterval = writeInterval
        self._accumulator = PairDistributionAccumulator(force, numBins, maxDistance, volume, correct)
        self._context = None

    @property
    def numFrames(self):
        """The number of frames accumulated so far."""
        return self._accumulator.numFrames

    def describeNextReport(self, simulation):
        """Get information about the next report this object will generate (OpenMM reporter protocol)."""
        steps = self._reportInterval - simulation.currentStep % self._reportInterval
        return {'steps': steps, 'periodic': None, 'include': []}

    def report(self, simulation, state):
        """Add the current positions to the histogram (OpenMM reporter protocol)."""
        if self._context is not None and self._context is not simulation.context:
            raise ValueError('PairDistributionReporter: used with a second Simulation; create one reporter per Simulation')
        self._context = simulation.context
        self._accumulator.add(simulation.context, state.getPeriodicBoxVectors())
        if self._writeInterval and simulation.currentStep % self._writeInterval == 0:
            self.writeFile()

    def getPairDistribution(self):
        """The PairDistribution of the frames accumulated so far (reads the histogram back)."""
        if self._context is None:
            raise ValueError('PairDistributionReporter: no frames have been reported yet')
        return self._accumulator.getResult(self._context)

    def writeFile(self, file=None):
        """Write the running g(r) to the reporter's file (or another). Returns the PairDistribution."""
        result = self.getPairDistribution()
        result.writeCSV(self._file if file is None else file)
        return result

    def reset(self):
        """Forget the frames accumulated so far."""
        if self._context is not None:
            self._accumulator.reset(self._context)

    def close(self):
        """Write the file if any frame was accumulated."""
        if self._context is not None and self._accumulator.numFrames > 0 and self._file is not None:
            self.writeFile()


class CollectiveVariableReporter(object):
    """Writes the values of one or more coordination numbers every ``reportInterval`` steps, as CSV
    with the columns step, time_ps and one per CV, and keeps them (``steps``, ``times`` in ps,
    ``values`` as arrays). A CoordinationForce gives one column (getCollectiveVariableValue), a
    CoordinationBiasForce (or a CustomCVForce) one per CV, in its order (getCollectiveVariableValues):
    the CVs of a Metadynamics object are reported by passing ``meta.force`` (of a CVFunction variable,
    the CVs it is a function of, named c<k>_<name>).

    Parameters
    ----------
    file: str or file
        where to write (a file name, an open file, or sys.stdout); None keeps the values only
    reportInterval: int
        the interval in steps between reports
    forces: CoordinationForce, CoordinationBiasForce or list of them
        forces in the simulated System
    names: list of str (optional)
        the column names, one per CV (default: the CV names of a CoordinationBiasForce given alone,
        else cv for one column, cv0, cv1, ... for several)
    append: bool
        append to an existing file instead of overwriting it (under its header, which must be this
        reporter's); a file that does not exist yet is created with the header

    A sibling writes another format by overriding _header, _line and _evaluate (the COLVAR files of
    openmmcoordination.plumed.PlumedColvarReporter).
    """

    #: What the State passed to report() must hold (OpenMM's reporter protocol), beyond the time.
    _include = ()

    def __init__(self, file, reportInterval, forces, names=None, append=False):
        import openmm
        from openmmcoordination import CoordinationBiasForce
        if not isinstance(forces, (list, tuple)):
            forces = [forces]
        self._forces = list(forces)
        # a CustomCVForce is the bias force of Metadynamics and OPES on the slower path (a CV that is not a
        # coordination number): its CVs are reported as a CoordinationBiasForce's
        self._bias = [isinstance(force, (CoordinationBiasForce, openmm.CustomCVForce)) for force in self._forces]
        columns = sum(force.getNumCollectiveVariables() if bias else 1 for force, bias in zip(self._forces, self._bias))
        if names is None:
            if len(self._forces) == 1 and self._bias[0]:
                names = [self._forces[0].getCollectiveVariableName(i) for i in range(columns)]
            else:
                names = ['cv'] if columns == 1 else ['cv%d' % i for i in range(columns)]
        if len(names) != columns:
            raise ValueError('CollectiveVariableReporter: %d names for %d collective variables' % (len(names), columns))
        self._start(file, reportInterval, names, append)

    def _start(self, file, reportInterval, names, append):
        """What the reporters of values share: the interval, the column names, the values kept, and
        the file with its header (unless appending)."""
        self._reportInterval = _checkInterval(type(self).__name__, 'reportInterval', reportInterval)
        self.names = list(names)
        self._columns = len(self.names)
        self._steps, self._times, self._values = [], [], []
        self._openedFile = False
        header = not append
        if isinstance(file, str):
            if append and os.path.exists(file) and os.path.getsize(file) > 0:
                self._checkAppended(file)
            else:
                header = True      # appending to a new or empty file: it gets its header
            self._out = open(file, 'a' if append else 'w')
            self._openedFile = True
        else:
            self._out = file
        if self._out is not None and header:
            print(self._header(), file=self._out)
            self._out.flush()

    def _checkAppended(self, file):
        """Appending to a file of other columns would mix them: the file's first line, its header, must be
        this reporter's."""
        with open(file) as f:
            first = f.readline().rstrip('\n')
        if first != self._header():
            raise ValueError('%s: cannot append to %r: its columns are %r, this reporter writes %r'
                             % (type(self).__name__, file, first, self._header()))

    def _header(self):
        """The first line of the file."""
        return ','.join(['step', 'time_ps'] + self.names)

    def _line(self, step, time, values):
        """The line of one report (time in ps)."""
        return ','.join(['%d' % step, '%.6g' % time] + ['%.10g' % v for v in values])

    def _evaluate(self, simulation, state):
        """The values of one report, one per column."""
        values = []
        for force, bias in zip(self._forces, self._bias):
            if bias:
                values.extend(force.getCollectiveVariableValues(simulation.context))
            else:
                values.append(force.getCollectiveVariableValue(simulation.context))
        return values

    @property
    def steps(self):
        """The steps at which the reports were made."""
        return np.array(self._steps, dtype=np.int64)

    @property
    def times(self):
        """The report times in ps."""
        return np.array(self._times)

    @property
    def values(self):
        """The values, one row per report and one column per CV."""
        return np.array(self._values).reshape(len(self._values), self._columns)

    def describeNextReport(self, simulation):
        """Get information about the next report this object will generate (OpenMM reporter protocol)."""
        steps = self._reportInterval - simulation.currentStep % self._reportInterval
        return {'steps': steps, 'periodic': None, 'include': list(self._include)}

    def report(self, simulation, state):
        """Evaluate and write the values (OpenMM reporter protocol)."""
        values = self._evaluate(simulation, state)
        time = state.getTime().value_in_unit(unit.picosecond)
        self._steps.append(simulation.currentStep)
        self._times.append(time)
        self._values.append(values)
        if self._out is not None:
            print(self._line(simulation.currentStep, time, values), file=self._out)
            self._out.flush()

    def close(self):
        """Close the file if the reporter opened it."""
        if self._openedFile and not self._out.closed:
            self._out.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def runWithProgress(label, advance, steps, chunks=10, extra=None, timestep=0.002):
    """Run ``advance(n)`` (``simulation.step``, or ``lambda n: meta.step(simulation, n)``) for
    ``steps`` steps in ``chunks`` parts, printing after each part the steps done, the simulated time
    in ps (``timestep`` in ps) and the speed in ns/day, and ``extra()`` where given (a string: the
    current CVs, say)."""
    done, start, size = 0, time.time(), max(1, steps//chunks)
    while done < steps:
        n = min(size, steps - done)
        advance(n)
        done += n
        elapsed = time.time() - start
        nsPerDay = done*timestep*1e-3/elapsed*86400 if elapsed > 0 else 0.0
        line = '  %s: %7d/%d steps  %6.1f ps  %6.2f ns/day' % (label, done, steps, done*timestep, nsPerDay)
        if extra is not None:
            line += '  ' + extra()
        print(line, flush=True)
