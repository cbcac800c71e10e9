"""C++ programs against the installed package: ``openmm-coordination config`` (its flags and folders,
and its errors), and examples/cpp built with CMake (find_package(OpenMMCoordination)) and with the
compiler and the config command's flags, then run on the CPU platform; the README's C++ lines are
the example's, and its commands are those CI runs.

The builds need a working C++ compiler and CMake: where there is none (the binary-wheel leg of
CI, where every compiler is a stub that fails) they are skipped, never passed; CI's other legs
(OpenMM 8.6, and 8.2 with the old C++ ABI) have them and run them."""

import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

import openmmcoordination
from openmmcoordination import cli, cpp_config

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
EXAMPLE = os.path.join(REPO, 'examples', 'cpp')
LIBRARY = 'libOpenMMCoordination' + ('.dylib' if sys.platform == 'darwin' else '.so')


def _working(*candidates):
    """The first of the programs that answers `--version`, or None."""
    for name in candidates:
        path = shutil.which(name) if name else None
        if path and subprocess.run([path, '--version'], capture_output=True).returncode == 0:
            return path
    return None


@pytest.fixture
def example():
    if not os.path.isfile(os.path.join(EXAMPLE, 'coordination_app.cpp')):
        pytest.skip('no source tree beside the tests (examples/cpp missing)')
    return EXAMPLE


@pytest.fixture
def compiler():
    found = _working(os.environ.get('CXX'), 'c++', 'g++', 'clang++')
    if found is None:
        pytest.skip('no working C++ compiler')
    return found


@pytest.fixture
def cmake():
    found = _working('cmake')
    if found is None:
        pytest.skip('no working CMake')
    return found


def _expected_cv():
    """The example's coordination number, computed here: the stretched rational s = 1/(1 + (r/r0)^6)
    with r0 = 0.3 nm at 0.25, 0.3 and 0.4 nm, stretched to 0 at dmax, where s = 1/(1 + 1e5)."""
    s = 1/(1 + (np.array([0.25, 0.3, 0.4])/0.3)**6)
    atDMax = 1/(1 + 1e5)
    return np.sum((s - atDMax)/(1 - atDMax))


def _run_app(path):
    """Runs the built example without LD_LIBRARY_PATH (its rpath must find the libraries) and checks
    its output: the CV by hand and from the Context agree with the one computed here."""
    env = {k: v for k, v in os.environ.items() if k not in ('LD_LIBRARY_PATH', 'OPENMM_PLUGIN_DIR')}
    result = subprocess.run([path], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r'platform CPU: coordination number ([0-9.]+), energy ([0-9.]+) kJ/mol \(by hand ([0-9.]+)\)', result.stdout)
    assert match, result.stdout
    assert [float(v) for v in match.groups()] == pytest.approx([_expected_cv()]*3, rel=1e-9)
    assert result.stdout.rstrip().endswith('agree'), result.stdout


def test_config_folders_hold_the_files():
    include, plugins = openmmcoordination._config.include_dir, cpp_config.pluginDirectories()
    flags = cpp_config.compileFlags()
    assert '-I' + include in flags and os.path.isfile(os.path.join(include, 'CoordinationForce.h'))
    assert any(os.path.isfile(os.path.join(f[2:], 'OpenMM.h')) for f in flags if f.startswith('-I'))
    assert '-DOPENMM_COORDINATION_PLUGIN_DIR="%s"' % plugins[0] in flags
    assert any(name.startswith('libOpenMMCoordinationReference') for name in os.listdir(plugins[0]))
    assert any(name.startswith('libOpenMMCPU') for plugin in plugins for name in os.listdir(plugin))
    libs = cpp_config.linkFlags()
    assert libs[-2:] == ['-lOpenMMCoordination', '-lOpenMM']
    folders = [f[2:] for f in libs if f.startswith('-L')]
    assert ['-Wl,-rpath,' + folder for folder in folders] == [f for f in libs if f.startswith('-Wl,-rpath,')]
    assert any(os.path.isfile(os.path.join(folder, LIBRARY)) for folder in folders)
    assert os.path.isfile(os.path.join(cpp_config.cmakePrefix(), 'lib', 'cmake', 'OpenMMCoordination',
                                       'OpenMMCoordinationConfig.cmake'))


def test_config_command_prints_them():
    result = subprocess.run([sys.executable, '-m', 'openmmcoordination', 'config', '--cflags', '--libs', '--plugins',
                             '--cmake-prefix'], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [' '.join(cpp_config.compileFlags()), ' '.join(cpp_config.linkFlags())] + \
        cpp_config.pluginDirectories() + [cpp_config.cmakePrefix()]
    labelled = subprocess.run([sys.executable, '-m', 'openmmcoordination', 'config'], capture_output=True, text=True,
                              timeout=120).stdout
    assert 'CMAKE_PREFIX_PATH: ' + cpp_config.cmakePrefix() in labelled and 'compile flags: -I' in labelled
    script = os.path.join(os.path.dirname(sys.executable), 'openmm-coordination')
    if os.path.isfile(script):   # the console script of a pip install, beside the interpreter
        result = subprocess.run([script, 'config', '--cmake-prefix'], capture_output=True, text=True, timeout=120)
        assert result.stdout == cpp_config.cmakePrefix() + '\n', result.stderr


def test_config_errors_name_what_is_missing(monkeypatch, tmp_path, capsys):
    build_tree = types.SimpleNamespace(__file__=str(tmp_path/'_config.py'), plugin_dirs=[str(tmp_path)])
    monkeypatch.setattr(openmmcoordination, '_config', build_tree)
    with pytest.raises(RuntimeError, match='is a build tree, which installs no C\\+\\+ headers'):
        cpp_config.compileFlags()
    empty = types.SimpleNamespace(prefix=str(tmp_path), include_dir=str(tmp_path/'include'), lib_dir=str(tmp_path/'lib'),
                                  cmake_dir=str(tmp_path/'cmake'), openmm_dir=str(tmp_path), openmm_version='8.6',
                                  openmm_cxx_flags=[], plugin_dirs=[str(tmp_path/'plugins')])
    monkeypatch.setattr(openmmcoordination, '_config', empty)
    header = re.escape(str(tmp_path/'include'/'CoordinationForce.h'))
    with pytest.raises(RuntimeError, match='incompletely installed: its header %s is missing' % header):
        cpp_config.linkFlags()
    assert cli.main(['config', '--libs']) == 1
    captured = capsys.readouterr()
    assert captured.out == '' and 'openmm-coordination config: ' in captured.err and 'CoordinationForce.h' in captured.err


def test_example_with_cmake(example, cmake, compiler, tmp_path):
    build = str(tmp_path/'build-app')
    for command in ([cmake, '-S', example, '-B', build, '-DCMAKE_PREFIX_PATH=' + cpp_config.cmakePrefix(),
                     '-DCMAKE_CXX_COMPILER=' + compiler], [cmake, '--build', build]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    _run_app(os.path.join(build, 'coordination_app'))


def test_example_with_the_config_flags(example, compiler, tmp_path):
    app = str(tmp_path/'coordination_app')
    command = [compiler, os.path.join(example, 'coordination_app.cpp'), '-o', app] + cpp_config.compileFlags() + cpp_config.linkFlags()
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    _run_app(app)


def test_readme_lines_are_the_example_and_ci():
    readme = os.path.join(REPO, 'README.md')
    if not os.path.isfile(readme) or not os.path.isdir(EXAMPLE):
        pytest.skip('no source tree beside the tests')
    section = open(readme).read().split('## From C++')[1].split('\n## ')[0]
    code = re.search(r'```cpp\n(.*?)```', section, re.S).group(1)
    app = {line.strip() for line in open(os.path.join(EXAMPLE, 'coordination_app.cpp'))}
    missing = [line for line in code.splitlines() if line.strip() and line.strip() not in app]
    assert not missing, 'README lines not in examples/cpp/coordination_app.cpp: %s' % missing
    commands = re.search(r'```bash\n(.*?)```', section, re.S).group(1).splitlines()
    ci = {line.strip() for line in open(os.path.join(REPO, '.ci', 'run'))}
    assert len(commands) == 5 and not [c for c in commands if c not in ci], commands
