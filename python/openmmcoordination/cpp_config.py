"""Where the C++ side of the installed openmm-coordination is, for building C++ programs against
it, and the ``config`` command that prints it (like pkg-config):

    openmm-coordination config --cflags --libs      # g++ app.cpp -o app $(... --cflags --libs)
    openmm-coordination config --plugins            # the folders of the platform plugins
    openmm-coordination config --cmake-prefix       # for CMAKE_PREFIX_PATH: find_package(OpenMMCoordination)

(``python -m openmmcoordination config`` is the same.) The compile flags define
OPENMM_COORDINATION_PLUGIN_DIR, the folder of our plugins, as a string, for
``OpenMM::Platform::loadPluginsFromDirectory(OPENMM_COORDINATION_PLUGIN_DIR)``; in a pip install
beside PyPI's OpenMM (and a CMake install into OpenMM) that folder holds OpenMM's platforms too.
The link flags carry an rpath, so the program runs without LD_LIBRARY_PATH. The paths are those
the build recorded in _config.py (as the CMake package has them); a package that was not installed
(a build tree) or is incomplete raises RuntimeError naming what is missing.
"""

import os
import sys

__all__ = ['compileFlags', 'linkFlags', 'pluginDirectories', 'cmakePrefix']


def _installed():
    """openmmcoordination._config of an installed package, checked; RuntimeError naming what is missing."""
    from openmmcoordination import _config
    if not hasattr(_config, 'prefix'):
        raise RuntimeError('openmmcoordination in %s is a build tree, which installs no C++ headers nor CMake package: '
                           'install it (pip install . or cmake --install <build folder>)'
                           % os.path.dirname(os.path.abspath(_config.__file__)))
    for path, what in [(os.path.join(_config.include_dir, 'CoordinationForce.h'), 'its header'),
                       (os.path.join(_config.cmake_dir, 'OpenMMCoordinationConfig.cmake'), 'its CMake package'),
                       (_config.lib_dir, 'its library folder'), (_config.plugin_dirs[0], 'its plugin folder'),
                       (os.path.join(_config.openmm_dir, 'include', 'OpenMM.h'), "OpenMM's header"),
                       (os.path.join(_config.openmm_dir, 'lib'), "OpenMM's library folder")]:
        if not os.path.exists(path):
            raise RuntimeError('openmm-coordination is incompletely installed: %s %s is missing; reinstall it '
                               '(or the OpenMM %s it was built against)' % (what, path, _config.openmm_version))
    return _config


def _unique(items):
    return list(dict.fromkeys(items))


def cmakePrefix():
    """The folder to put on CMAKE_PREFIX_PATH for find_package(OpenMMCoordination CONFIG): the one
    whose lib/cmake/OpenMMCoordination holds the CMake package (site-packages/OpenMM.libs for a pip
    install)."""
    return os.path.dirname(_installed().lib_dir)


def pluginDirectories():
    """The folders of the platform plugins: ours, then OpenMM's where it is another one (OpenMM
    installed elsewhere: conda-forge's under a pip install, or a CMake install with another prefix)."""
    config = _installed()
    return _unique([config.plugin_dirs[0], os.path.join(config.openmm_dir, 'lib', 'plugins')])


def compileFlags():
    """The compiler flags (a list): the header folders (ours and OpenMM's), the C++ ABI OpenMM was
    built with, and OPENMM_COORDINATION_PLUGIN_DIR defined as the plugin folder, a string literal."""
    config = _installed()
    includes = ['-I' + folder for folder in _unique([config.include_dir, os.path.join(config.openmm_dir, 'include')])]
    return includes + list(config.openmm_cxx_flags) + ['-DOPENMM_COORDINATION_PLUGIN_DIR="%s"' % config.plugin_dirs[0]]


def linkFlags():
    """The linker flags (a list): the library folders, each with an rpath, then -lOpenMMCoordination
    -lOpenMM."""
    config = _installed()
    folders = _unique([config.lib_dir, os.path.join(config.openmm_dir, 'lib')])
    return sum([['-L' + folder, '-Wl,-rpath,' + folder] for folder in folders], []) + ['-lOpenMMCoordination', '-lOpenMM']


# The command's options, in the order they print, each with what it prints.
_OPTIONS = [('cflags', 'compile flags', lambda: ' '.join(compileFlags())),
            ('libs', 'link flags', lambda: ' '.join(linkFlags())),
            ('plugins', 'plugin folders', lambda: '\n'.join(pluginDirectories())),
            ('cmake_prefix', 'CMAKE_PREFIX_PATH', cmakePrefix)]


def addCommand(commands):
    """Add the ``config`` command to an argparse subparsers."""
    config = commands.add_parser('config', help='compile and link flags, plugin folders and the CMake package, '
                                 'for C++ programs', description='Print what a C++ program needs to use '
                                 'openmm-coordination: g++ app.cpp -o app $(openmm-coordination config --cflags '
                                 '--libs); with CMake, -DCMAKE_PREFIX_PATH=$(openmm-coordination config '
                                 '--cmake-prefix) and find_package(OpenMMCoordination CONFIG). Without options, all '
                                 'of it, labelled.')
    config.add_argument('--cflags', action='store_true', help='the compile flags (headers, ABI, OPENMM_COORDINATION_PLUGIN_DIR)')
    config.add_argument('--libs', action='store_true', help='the link flags, with rpaths')
    config.add_argument('--plugins', action='store_true', help='the folders of the platform plugins, one a line')
    config.add_argument('--cmake-prefix', action='store_true', help='the folder to put on CMAKE_PREFIX_PATH')


def runCommand(args):
    """Print what the ``config`` command's options ask for, one a line (everything, labelled, when
    none is given); an installation that is missing or incomplete prints the error and returns 1."""
    chosen = [option for option in _OPTIONS if getattr(args, option[0])]
    try:
        lines = [text() for _, _, text in chosen] if chosen else \
            ['%s: %s' % (label, text().replace('\n', ' ')) for _, label, text in _OPTIONS]
    except RuntimeError as error:
        print('openmm-coordination config: %s' % error, file=sys.stderr)
        return 1
    print('\n'.join(lines))
    return 0
