"""PLUMED's output files, for openmmcoordination.plumed: COLVAR (PRINT), HILLS (METAD) and KERNELS
(OPES_METAD, OPES_METAD_EXPLORE).

COLVAR: ``#! FIELDS time c1 c2 ...``, then one line per report, the time in ps as PLUMED writes it
(`` %f``) and each value with `` `` + FMT (PLUMED's default FMT is %f). PLUMED prints in its update
phase, after the update of the biases above PRINT: at a step where METAD deposits a hill or OPES a
kernel, ``.bias`` is that of the step's calculation (before the deposit) but the components set in
the update (METAD's ``rct``; OPES's ``rct``, ``zed``, ``neff``, ``nker``) are those after it; so
such a line waits for the deposit (completePending).

HILLS: ``#! FIELDS time c1 ... sigma_c1 ... height biasf`` and ``#! SET multivariate false``,
``#! SET kerneltype stretched-gaussian`` (PLUMED 2.8 and later: the hills are cut where
(s - s0)^2/(2 sigma^2) reaches 6.25 and stretched to reach 0 there, as sum_hills and a RESTART read
them; ``gaussian`` for a Metadynamics of whole Gaussians, truncateHills=False), then one line per
hill, every field as PLUMED's default ``%23.16lg`` with no separator (the width pads it), as
PLUMED's OFile writes it.
As PLUMED does for well-tempered metadynamics (src/bias/MetaD.cpp, writeGaussian), the height
column is the hill's height times biasf/(biasf - 1), so that the sum of the hills is the free
energy estimate -F: ``plumed sum_hills --hills HILLS`` and metadynminer read it as they read
PLUMED's own. The file is written from the public getters of Metadynamics (getHillCenters,
getHillHeights, the variables' biasWidth, biasFactor, frequency) and the integrator's step size.

KERNELS, as PLUMED 2.10's OPES_METAD writes it (src/opes/OPESmetad.cpp, through its OFile):
``#! FIELDS time c1 ... sigma_c1 ... height logweight``, then ``#! SET action OPES_METAD_kernels``
(``OPES_METAD_EXPLORE_kernels``), ``#! SET biasfactor``, ``epsilon``, ``kernel_cutoff`` and
``compression_threshold`` (no ``min_``/``max_`` lines: no argument here is periodic), then one line per
deposited kernel, as deposited (before it is merged into the compressed kernels): the time of the
deposit, its centre (the CVs at that step), its sigma and height, and the log of its weight, V/k_B T
with V the bias at the CVs before the kernel. Each number is written with FMT as PLUMED's OFile does:
``' ' + FMT``, or without FMT ``%23.16lg`` (no separator: the width pads it), the SET lines too.
"""

import os

import numpy as np

from openmm import unit

from openmmcoordination.reporters import CollectiveVariableReporter

__all__ = ['PlumedColvarReporter', 'PlumedDerivativesReporter', 'HillsWriter', 'KernelsWriter', 'backupFile']


def backupFile(path):
    """Before a file is written anew, as PLUMED's OFile::open does without RESTART (src/tools/OFile.cpp,
    backupFile): an existing ``path`` is renamed bck.N.<name> in its folder, N the first number from 0 whose
    file does not exist; at most PLUMED_MAXBACKUP of them (the environment variable PLUMED reads; default
    100; 0 or less: no backup, the file is overwritten), beyond which it is an OSError, as PLUMED stops
    there. /dev/null is left alone. Returns the backup's path, or None."""
    if path == '/dev/null' or not os.path.exists(path):
        return None
    try:
        maxBackup = int(os.environ.get('PLUMED_MAXBACKUP', '100'))
    except ValueError:
        maxBackup = 100                  # PLUMED keeps its default where the variable is not a number
    if maxBackup <= 0:
        return None
    directory, name = os.path.split(path)
    index = 0
    while True:
        if index > maxBackup:
            raise OSError('cannot back up %s: the maximum number of backups is %d (PLUMED_MAXBACKUP)' % (path, maxBackup))
        backup = os.path.join(directory, 'bck.%d.%s' % (index, name))
        if not os.path.exists(backup):
            break
        index += 1
    os.rename(path, backup)
    return backup


class PlumedColvarReporter(CollectiveVariableReporter):
    """Writes values in PLUMED's COLVAR format every ``reportInterval`` steps (PLUMED's PRINT), and
    keeps them as CollectiveVariableReporter does (``steps``, ``times``, ``values``).

    Parameters
    ----------
    file: str or file
        where to write (a file name, an open file, or sys.stdout); None keeps the values only
    reportInterval: int
        the interval in steps between reports (PRINT's STRIDE)
    evaluate: function
        evaluate(context, state) returns the values, one per name (PlumedInput.getValues does)
    names: list of str
        the field names (PRINT's ARG)
    fmt: str
        the format of a value (PRINT's FMT; default '%f', PLUMED's)
    include: list of str
        what the State must hold for evaluate (['positions'] for a DISTANCE)
    append: bool
        append to an existing file of the same header (a new file gets the header)
    late: list of int
        the columns a bias sets in PLUMED's update phase (METAD's rct; OPES's rct, zed, neff, nker)
    pace: int
        the steps between the deposits of that bias (its PACE): a line at a multiple of it waits for
        completePending(), which PlumedInput.step calls after each deposit
    """

    def __init__(self, file, reportInterval, evaluate, names, fmt='%f', include=(), append=False, timeUnit=1.0,
                 late=(), pace=None):
        self._evaluateValues = evaluate
        self._format = ' ' + fmt
        self._include = tuple(include)
        self._timeUnit = float(timeUnit)
        self._late, self._pace, self._pending = list(late), pace, []
        self._start(file, reportInterval, names, append)

    def report(self, simulation, state, defer=True):
        """Evaluate and write the values (OpenMM reporter protocol). With ``late`` columns (the
        components a bias sets in PLUMED's update phase, after its deposit), a line at a multiple of
        ``pace`` is kept until completePending() reads them after the deposit (``defer=False``: the
        first step of a run, where PLUMED deposits nothing)."""
        self.flushPending()
        if defer and self._late and self._pace and simulation.currentStep % self._pace == 0:
            self._pending.append((simulation.currentStep, state.getTime().value_in_unit(unit.picosecond),
                                  self._evaluate(simulation, state)))
            return
        super().report(simulation, state)

    def completePending(self, context):
        """Write the line kept at the current step, its late columns read now (after the deposit)."""
        if self._pending:
            now = self._evaluateValues(context, None)
            for _, _, values in self._pending:
                for index in self._late:
                    values[index] = now[index]
        self.flushPending()

    def flushPending(self):
        """Write the lines kept as they are (no deposit came after them: nothing changed)."""
        pending, self._pending = self._pending, []
        for step, time, values in pending:
            self._steps.append(step)
            self._times.append(time)
            self._values.append(values)
            if self._out is not None:
                print(self._line(step, time, values), file=self._out)
                self._out.flush()

    def close(self):
        """Write any line kept, and close the file if the reporter opened it."""
        self.flushPending()
        super().close()

    def _header(self):
        return '#! FIELDS time ' + ' '.join(self.names)

    def _line(self, step, time, values):
        return ' %f' % (time/self._timeUnit) + ''.join(self._format % value for value in values)

    def _evaluate(self, simulation, state):
        return list(self._evaluateValues(simulation.context, state))


class PlumedDerivativesReporter(PlumedColvarReporter):
    """Writes derivatives in the format of PLUMED's DUMPDERIVATIVES every ``reportInterval`` steps:
    ``#! FIELDS time parameter c1 c2 ...``, then per report one line per parameter: the time
    (`` %f``), the parameter's index (`` %d``) and each argument's derivative with `` `` + FMT (PLUMED's
    default FMT is %15.10f). ``evaluate(context, state)`` returns an array (parameters, arguments)
    (PlumedInput.getDerivatives); ``values`` keeps them, shape (reports, parameters, arguments).

    timeUnit: ps per time unit of the file (UNITS TIME; default 1).
    """

    def __init__(self, file, reportInterval, evaluate, names, fmt='%15.10f', timeUnit=1.0, append=False):
        super().__init__(file, reportInterval, evaluate, names, fmt, ['positions'], append, timeUnit)

    def _header(self):
        return '#! FIELDS time parameter ' + ' '.join(self.names)

    def _line(self, step, time, values):
        return '\n'.join(' %f %d' % (time/self._timeUnit, parameter) + ''.join(self._format % value for value in row)
                         for parameter, row in enumerate(values))

    def _evaluate(self, simulation, state):
        return np.asarray(self._evaluateValues(simulation.context, state))

    @property
    def values(self):
        """The derivatives, shape (reports, parameters, arguments)."""
        return np.array(self._values)


class HillsWriter(object):
    """Writes the hills of an openmmcoordination.Metadynamics object in PLUMED's HILLS format.

    Call update(step) after the run reaches ``step`` (PlumedInput.step does it after every hill):
    it writes the hills added since the last call, hill k of n new ones at time
    (step - (n - 1 - k)*frequency)*timestep, as Metadynamics adds one every ``frequency`` steps.

    Parameters
    ----------
    file: str or file
        the HILLS file to write (a name, or an open file)
    metadynamics: Metadynamics
        the object whose hills are written
    names: list of str
        the field names of the variables (METAD's ARG)
    timestep: float
        the integrator's step size in ps
    energyUnit: float
        kJ/mol per energy unit of the file (4.184 for UNITS ENERGY=kcal/mol; default 1)
    """

    def __init__(self, file, metadynamics, names, timestep, energyUnit=1.0):
        self.metadynamics = metadynamics
        self._timestep, self._energyUnit, self._written = float(timestep), float(energyUnit), 0
        self._openedFile = isinstance(file, str)
        self._out = open(file, 'w') if self._openedFile else file
        widths = ['sigma_' + name for name in names]
        print('#! FIELDS time %s %s height biasf' % (' '.join(names), ' '.join(widths)), file=self._out)
        print('#! SET multivariate false', file=self._out)
        # PLUMED's hills (truncateHills=True, what METAD builds); whole Gaussians have no kerneltype of PLUMED's
        print('#! SET kerneltype %s' % ('stretched-gaussian' if metadynamics.truncateHills else 'gaussian'), file=self._out)
        self._out.flush()

    def update(self, step):
        """Write the hills added since the last call; ``step`` is the simulation's current step."""
        meta = self.metadynamics
        heights = np.asarray(meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole))
        centers = np.asarray(meta.getHillCenters()).reshape(len(heights), len(meta.variables))
        sigmas = [v.biasWidth for v in meta.variables]
        scale = meta.biasFactor/(meta.biasFactor - 1)/self._energyUnit
        new = range(self._written, len(heights))
        for k in new:
            time = (step - (new.stop - 1 - k)*meta.frequency)*self._timestep
            fields = [time] + list(centers[k]) + sigmas + [heights[k]*scale, meta.biasFactor]
            print(''.join('%23.16g' % field for field in fields), file=self._out)
        self._written = len(heights)
        self._out.flush()

    def close(self):
        """Close the file if the writer opened it."""
        if self._openedFile and not self._out.closed:
            self._out.close()


class KernelsWriter(object):
    """Writes the kernels an openmmcoordination.OPES deposits in PLUMED's KERNELS format (the module's
    docstring gives it). The header is written when the writer is created (PLUMED writes it with the
    first kernel).

    Call update(step) after the run reaches ``step`` (PlumedInput.step runs OPES a PACE at a time and
    calls it after each): it writes the kernels deposited since the last call, kernel k of n new ones at
    time (step - (n - 1 - k)*frequency)*timestep, as OPES deposits one every ``frequency`` steps.

    Parameters
    ----------
    file: str or file
        the KERNELS file to write (a name, or an open file)
    opes: OPES
        the object whose kernels are written (its deposited kernels: centre, sigma, height, log-weight)
    names: list of str
        the field names of the variables (OPES_METAD's ARG)
    timestep: float
        the integrator's step size in the file's time unit (ps, or UNITS TIME)
    fmt: str or None
        the format of a number (OPES_METAD's FMT), written as ' ' + fmt; None: PLUMED's default %23.16lg
    """

    def __init__(self, file, opes, names, timestep, fmt=None):
        self.opes = opes
        self._timestep = float(timestep)
        self._format = '%23.16g' if fmt is None else ' ' + fmt
        self._written = len(opes._deposited)       # a state set before attach() is not written again
        self._openedFile = isinstance(file, str)
        self._out = open(file, 'w') if self._openedFile else file
        widths = ['sigma_' + name for name in names]
        print('#! FIELDS time %s %s height logweight' % (' '.join(names), ' '.join(widths)), file=self._out)
        print('#! SET action %s_kernels' % ('OPES_METAD_EXPLORE' if opes.exploreMode else 'OPES_METAD'), file=self._out)
        for name, value in (('biasfactor', opes.biasFactor), ('epsilon', opes.epsilon),
                            ('kernel_cutoff', opes.kernelCutoff), ('compression_threshold', opes.compressionThreshold)):
            print('#! SET %s %s' % (name, self._format % value), file=self._out)
        self._out.flush()

    def update(self, step):
        """Write the kernels deposited since the last call; ``step`` is the simulation's current step."""
        deposited = self.opes._deposited       # rows: centre, sigma, height, log-weight (OPES._deposit)
        new = range(self._written, len(deposited))
        last = step - step % self.opes.frequency
        for k in new:
            time = (last - (new.stop - 1 - k)*self.opes.frequency)*self._timestep
            print(''.join(self._format % field for field in [time] + list(deposited[k])), file=self._out)
        self._written = len(deposited)
        self._out.flush()

    def close(self):
        """Close the file if the writer opened it."""
        if self._openedFile and not self._out.closed:
            self._out.close()
