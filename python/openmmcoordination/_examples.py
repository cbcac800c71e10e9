"""The sizes of the examples' runs (examples/*.py): one table per example, with a row for CUDA
('gpu'), for the CPU and Reference platforms ('cpu') and for a smoke test ('quick', `--quick`).

COORDINATION_QUICK=1 in the environment is the size switch of the documentation's test
(python/tests/test_docs_run.py): every example then runs its 'quick' row, whatever step counts its
command line gives (those are capped at the row's), so that a page's commands run in seconds along
the same code path.

The examples' command-line checks live here too: argparse types that refuse a bad value with
argparse's error (exit status 2, the option and the value named), and the checks of --output against
--restart (a fresh run never overwrites an earlier run's checkpoint; --restart needs one)."""

import argparse
import os
import sys

import numpy as np

QUICK_VARIABLE = 'COORDINATION_QUICK'


def quickFromEnvironment():
    """Whether COORDINATION_QUICK asks for the smoke-test sizes (set and not '0')."""
    return os.environ.get(QUICK_VARIABLE, '') not in ('', '0')


def runSettings(table, platform, quick=False, capped=(), **given):
    """(row name, settings): the row of ``table`` for ``platform`` ('quick' with ``quick`` or
    COORDINATION_QUICK), updated with the values of ``given`` that are not None. Under
    COORDINATION_QUICK the keys in ``capped`` (the step counts) keep at most the row's value."""
    forced = quickFromEnvironment()
    kind = 'quick' if quick or forced else ('gpu' if platform.getName() in ('CUDA', 'OpenCL', 'HIP') else 'cpu')
    settings = dict(table[kind])
    for key, value in given.items():
        if value is not None:
            settings[key] = min(value, settings[key]) if forced and key in capped else value
    return kind, settings


# The examples' command-line checks: argparse types (a bad value is argparse's error, exit status 2,
# naming the option and the value) and the checks of --output against --restart.

def _number(text, kind, low, strict):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not np.isfinite(value) or (value <= low if strict else value < low):
        raise argparse.ArgumentTypeError('must be %s %s %g, got %r' % (
            'an integer' if kind is int else 'a number', '>' if strict else '>=', low, text))
    return value


def positiveNumber(text):
    """argparse type: a finite float > 0."""
    return _number(text, float, 0, True)


def biasFactor(text):
    """argparse type: a well-tempered bias factor, a finite float > 1."""
    return _number(text, float, 1, True)


def nonNegativeNumber(text):
    """argparse type: a finite float >= 0."""
    return _number(text, float, 0, False)


def positiveInteger(text):
    """argparse type: an int >= 1."""
    return _number(text, int, 1, False)


def nonNegativeInteger(text):
    """argparse type: an int >= 0."""
    return _number(text, int, 0, False)


def platformName(text, auto=True):
    """argparse type: 'auto' or the name of a Platform this OpenMM has (case as OpenMM spells it)."""
    import openmm
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    if not (auto and text == 'auto') and text not in names:
        raise argparse.ArgumentTypeError('no platform %r; this OpenMM has %s%s' % (text, ', '.join(names),
                                                                                 ', or auto' if auto else ''))
    return text


def namedPlatform(text):
    """argparse type: the name of a Platform this OpenMM has ('auto' not accepted)."""
    return platformName(text, auto=False)


def outputFolder(text):
    """argparse type: a folder, or a path where one can be made (not a file, nor inside one)."""
    path = os.path.abspath(text)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError('%r is not a folder: %s is a file' % (text, path))
    return text


def inputFile(text):
    """argparse type: a file that exists and can be read."""
    if not os.path.isfile(text) or not os.access(text, os.R_OK):
        raise argparse.ArgumentTypeError('%r is not a file that can be read%s' % (
            text, ' (it is a folder)' if os.path.isdir(text) else ' (no such file)' if not os.path.exists(text) else ''))
    return text


def outputProblem(output, restart, files, checkpoints):
    """Why --output does not fit --restart, or None: with ``restart`` each of ``files`` (what the first
    run wrote) must be in the folder; without it, none of ``checkpoints`` may be (a fresh run would
    overwrite an earlier run's checkpoint and results)."""
    if restart:
        missing = [name for name in files if not os.path.exists(os.path.join(output, name))]
        if missing:
            return ('--restart continues a run in --output %r, which has no %s (a run without --restart writes them)'
                    % (output, ', '.join(missing)))
    else:
        found = [name for name in checkpoints if os.path.exists(os.path.join(output, name))]
        if found:
            return ('--output %r holds the checkpoint of an earlier run (%s): continue it with --restart, or give '
                    'another --output (or remove that folder) to start again' % (output, ', '.join(found)))
    return None


def refuse(message):
    """An argparse-style error from an example's main(): '<script>: error: message' on stderr, exit status 2."""
    sys.stderr.write('%s: error: %s\n' % (os.path.basename(sys.argv[0]), message))
    sys.exit(2)


def loadCheckpoint(sampler, simulation, path):
    """sampler.loadCheckpoint(simulation, path); a checkpoint it refuses (another run's settings, a
    damaged file) is refuse()d, naming the file."""
    try:
        sampler.loadCheckpoint(simulation, path)
    except ValueError as error:
        refuse('--restart cannot continue from %s: %s (give the arguments of the run that wrote it)' % (path, error))
