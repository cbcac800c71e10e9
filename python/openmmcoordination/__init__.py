"""openmm-coordination: a GPU-resident coordination number (PLUMED's COORDINATION) and pair-distance
histograms for OpenMM.

>>> from openmmcoordination import CoordinationForce
>>> force = CoordinationForce(groupA, groupB)   # PLUMED: COORDINATION GROUPA=.. GROUPB=..
>>> force.setR0(0.3)                             # R_0=0.3 NN=6 MM=12 (the defaults)
>>> system.addForce(force)
"""

import os as _os

import openmm as _openmm

from openmmcoordination import _config

__version__ = _config.__version__

#: Messages of the plugin libraries that could not be loaded (for example the CUDA plugin
#: on a machine without CUDA). OpenMM's own list is openmm.Platform.getPluginLoadFailures().
plugin_load_failures = []


def _load_plugins():
    """Load the plugin libraries that `import openmm` did not load: those of a build tree, or
    all of them when OPENMM_PLUGIN_DIR points OpenMM elsewhere."""
    loaded = {_os.path.basename(path) for path in getattr(_openmm, 'pluginLoadedLibNames', [])}
    directories = list(_config.plugin_dirs) + [_os.path.join(_openmm.version.openmm_library_path, 'plugins')]
    for directory in directories:
        if not _os.path.isdir(directory):
            continue
        for name in sorted(_os.listdir(directory)):
            if name.startswith('libOpenMMCoordination') and name.endswith(('.so', '.dylib', '.dll')) and name not in loaded:
                try:
                    _openmm.Platform.loadPluginLibrary(_os.path.join(directory, name))
                    loaded.add(name)
                except Exception as error:
                    plugin_load_failures.append('%s: %s' % (_os.path.join(directory, name), error))


_load_plugins()

from openmmcoordination.coordination import CoordinationForce  # noqa: E402

# The user's side (matplotlib, MDAnalysis and tqdm are imported only when used).
from openmmcoordination.gr import (PairDistribution, PairDistributionAccumulator, addHistogramForce,  # noqa: E402
                                   computePairDistribution, pairDistributionFromCounts)
from openmmcoordination.reporters import CollectiveVariableReporter, PairDistributionReporter  # noqa: E402
from openmmcoordination.metadynamics import BiasVariable, Metadynamics  # noqa: E402
from openmmcoordination.analysis import analyzeTrajectory, bestPlatform  # noqa: E402
