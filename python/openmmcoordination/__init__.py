"""openmm-coordination: a GPU-resident coordination number (PLUMED's COORDINATION) and pair-distance
histograms for OpenMM.

>>> from openmmcoordination import CoordinationForce
>>> force = CoordinationForce(groupA, groupB)   # PLUMED: COORDINATION GROUPA=.. GROUPB=..
>>> force.setR0(0.3)                             # R_0=0.3 NN=6 MM=12 (the defaults)
>>> system.addForce(force)
"""

import os as _os
import re as _re

import openmm as _openmm

from openmmcoordination import _config

__version__ = _config.__version__


def _openmm_series(version):
    """(major, minor) of an OpenMM version string such as '8.2', '8.6.1' or '8.4.0.dev-4768436'."""
    parts = str(version).split('.')
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _openmm_mismatch(built, running, location='?'):
    """The error message when the plugin was compiled against another OpenMM series than the
    running one (OpenMM's C++ API is only stable within a minor series), else None."""
    if _openmm_series(built) is None or _openmm_series(built) == _openmm_series(running):
        return None
    return ('openmmcoordination was compiled against OpenMM %s, but OpenMM %s is running (%s). Its '
            'plugin libraries use OpenMM\'s C++ API, which changes between OpenMM versions: rebuild it '
            'against this OpenMM, from the source folder: `pip install --force-reinstall --no-deps '
            '--no-cache-dir .` (a binary wheel must match: pip install "openmm==%s.*"). Set '
            'OPENMM_COORDINATION_SKIP_VERSION_CHECK=1 to import it anyway, at your own risk.'
            % (built, running, location, '.'.join(str(n) for n in _openmm_series(built))))


_mismatch = _openmm_mismatch(getattr(_config, 'openmm_version', None), _openmm.Platform.getOpenMMVersion(),
                             _os.path.dirname(_openmm.__file__))
if _mismatch and not _os.environ.get('OPENMM_COORDINATION_SKIP_VERSION_CHECK'):
    raise ImportError(_mismatch)

#: The OpenMM version the plugin was compiled against (the running one is
#: openmm.Platform.getOpenMMVersion(); they share the minor series, checked on import).
openmm_build_version = getattr(_config, 'openmm_version', None)

#: Messages of the plugin libraries of this package that could not be loaded (for example the CUDA
#: plugin on a machine without CUDA), one per library, whether OpenMM tried it (at `import openmm`)
#: or this package did. OpenMM's own list is openmm.Platform.getPluginLoadFailures().
plugin_load_failures = []


def _library_of(message):
    """The file name of the library a load failure names (the message itself if it names none)."""
    match = _re.search(r'([^\s:]+\.(?:so|dylib|dll))\b', message)
    return _os.path.basename(match.group(1)) if match else message


def _note_failure(message):
    """Add a failure to plugin_load_failures unless its library is there already."""
    if _library_of(message) not in {_library_of(m) for m in plugin_load_failures}:
        plugin_load_failures.append(message)


def _load_plugins():
    """Load the plugin libraries that `import openmm` did not load: those of a build tree, or
    all of them when OPENMM_PLUGIN_DIR points OpenMM elsewhere. A library that OpenMM already
    failed to load from the same path is not tried again; its failure is noted once."""
    loaded = {_os.path.basename(path) for path in getattr(_openmm, 'pluginLoadedLibNames', [])}
    openmmFailures = list(_openmm.Platform.getPluginLoadFailures())
    directories = list(_config.plugin_dirs) + [_os.path.join(_openmm.version.openmm_library_path, 'plugins')]
    for directory in directories:
        if not _os.path.isdir(directory):
            continue
        for name in sorted(_os.listdir(directory)):
            if name.startswith('libOpenMMCoordination') and name.endswith(('.so', '.dylib', '.dll')) and name not in loaded:
                path = _os.path.join(directory, name)
                tried = [m for m in openmmFailures if path in m]
                if tried:
                    _note_failure(tried[0])
                    continue
                try:
                    _openmm.Platform.loadPluginLibrary(path)
                    loaded.add(name)
                except Exception as error:
                    _note_failure(str(error) if path in str(error) else '%s: %s' % (path, error))


_load_plugins()

from openmmcoordination.coordination import CoordinationBiasForce, CoordinationForce, PeriodicBoundaryWarning  # noqa: E402

# The user's side (matplotlib, MDAnalysis and tqdm are imported only when used; native_contacts
# takes an MDAnalysis Universe without importing MDAnalysis).
from openmmcoordination.gr import (PairDistribution, PairDistributionAccumulator, addHistogramForce,  # noqa: E402
                                   computePairDistribution, pairDistributionFromCounts)
from openmmcoordination.reporters import CollectiveVariableReporter, PairDistributionReporter, runWithProgress  # noqa: E402
from openmmcoordination.cvfunction import CVFunction  # noqa: E402
from openmmcoordination.distancecv import DistanceCV  # noqa: E402
from openmmcoordination.metadynamics import BiasVariable, Metadynamics  # noqa: E402
from openmmcoordination.opes import OPES  # noqa: E402
from openmmcoordination.reweighting import (reweightedFreeEnergy, reweightedHistogram, reweightingFactor,  # noqa: E402
                                          reweightingWeights)
from openmmcoordination.analysis import analyzeTrajectory, bestPlatform  # noqa: E402
from openmmcoordination.contacts import (find_native_contacts, findNativeContacts, native_contacts,  # noqa: E402
                                         nativeContacts)
from openmmcoordination import plumed  # noqa: E402  (openmmcoordination.plumed.load reads a plumed.dat)
