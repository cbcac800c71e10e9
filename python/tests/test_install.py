"""The installation: the plugin was compiled against the running OpenMM's series, refuses to import
with another one (saying how to rebuild), and the in-tree build backend finds the installed OpenMM
and narrows the wheel's requirements to it."""

import os
import subprocess
import sys
import textwrap

import openmm
import pytest

import openmmcoordination
from openmmcoordination import _openmm_mismatch, _openmm_series

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BACKEND = os.path.join(REPO, 'backend')


def test_compiled_against_the_running_openmm_series():
    built = openmmcoordination.openmm_build_version
    assert built, 'the package does not record the OpenMM it was compiled against'
    assert _openmm_series(built) == _openmm_series(openmm.Platform.getOpenMMVersion())
    assert _openmm_series(openmm.__version__) == _openmm_series(built)


def test_version_series():
    assert _openmm_series('8.2') == (8, 2)
    assert _openmm_series('8.6.1') == (8, 6)
    assert _openmm_series('8.4.0.dev-4768436') == (8, 4)
    assert _openmm_series('') is None


def test_mismatch_message():
    assert _openmm_mismatch('8.6', '8.6.1') is None
    assert _openmm_mismatch('8.4.0', '8.4') is None
    message = _openmm_mismatch('8.2', '8.6.1', '/somewhere/openmm')
    assert 'compiled against OpenMM 8.2' in message and 'OpenMM 8.6.1 is running' in message
    assert 'pip install --force-reinstall --no-deps --no-cache-dir .' in message
    assert 'openmm==8.2.*' in message and '/somewhere/openmm' in message


def _import_with_recorded_version(version, **env):
    """Imports openmmcoordination in a subprocess whose _config claims another OpenMM."""
    code = textwrap.dedent('''
        import sys, types
        config = types.ModuleType('openmmcoordination._config')
        config.__version__ = '0'; config.openmm_version = %r; config.plugin_dirs = []
        sys.modules['openmmcoordination._config'] = config
        import openmmcoordination
        print('imported')
    ''' % version)
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **env))


def test_import_refuses_another_openmm_series():
    result = _import_with_recorded_version('7.7')
    assert result.returncode != 0
    assert 'ImportError' in result.stderr and 'compiled against OpenMM 7.7' in result.stderr
    assert 'pip install --force-reinstall' in result.stderr
    skipped = _import_with_recorded_version('7.7', OPENMM_COORDINATION_SKIP_VERSION_CHECK='1')
    assert skipped.returncode == 0 and 'imported' in skipped.stdout, skipped.stderr


@pytest.fixture
def backend():
    if not os.path.isfile(os.path.join(BACKEND, 'openmm_coordination_backend.py')):
        pytest.skip('no source tree beside the tests (backend/ missing)')
    sys.path.insert(0, BACKEND)
    try:
        import openmm_coordination_backend
        yield openmm_coordination_backend
    finally:
        sys.path.remove(BACKEND)


def test_backend_finds_the_running_openmm(backend):
    site = os.path.dirname(os.path.dirname(os.path.abspath(openmm.__file__)))
    found = backend.installed_openmm([site])
    assert found is not None
    assert _openmm_series(found['version']) == _openmm_series(openmm.Platform.getOpenMMVersion())
    assert os.path.isfile(os.path.join(found['dir'], 'include', 'OpenMM.h'))
    assert backend.installed_openmm([os.path.join(site, 'no-such-folder')]) is None


def test_backend_requirements(backend):
    metadata = ('Metadata-Version: 2.2\nName: openmm-coordination\nRequires-Dist: openmm<8.7,>=8.2\n'
                'Requires-Dist: numpy\nRequires-Dist: openmm-cuda-13<8.7,>=8.4; extra == "cuda"\n'
                'Requires-Dist: pytest; extra == "test"\n\n# Readme\nRequires-Dist: openmm stays in the text\n')
    pip = {'version': '8.4.0', 'pip_metadata': True}
    text = backend._rewrite_metadata(metadata, pip)
    headers = text.split('\n\n')[0].splitlines()
    assert 'Requires-Dist: openmm>=8.4,<8.5' in headers
    assert 'Requires-Dist: openmm-cuda-13>=8.4,<8.5; extra == "cuda"' in headers
    assert 'Requires-Dist: numpy' in headers and 'Requires-Dist: pytest; extra == "test"' in headers
    assert not any('8.7' in line for line in headers)
    assert text.endswith('# Readme\nRequires-Dist: openmm stays in the text\n')
    assert backend._rewrite_metadata(text, pip) == text
    old = backend._rewrite_metadata(metadata, {'version': '8.2.0', 'pip_metadata': True})
    assert 'Requires-Dist: openmm-cuda-12>=8.2,<8.3; extra == "cuda"' in old
    # An OpenMM that pip does not know of (conda-forge without dist-info): no requirement on it.
    conda = backend._rewrite_metadata(metadata, {'version': '8.3.1', 'pip_metadata': False})
    assert not any(line.startswith('Requires-Dist: openmm') for line in conda.split('\n\n')[0].splitlines())


def test_plugin_load_failures_listed_once(capsys):
    """Each library that failed to load is in plugin_load_failures once, and `info` prints each once
    (OpenMM's list and this package's together)."""
    names = [openmmcoordination._library_of(m) for m in openmmcoordination.plugin_load_failures]
    assert len(names) == len(set(names)), openmmcoordination.plugin_load_failures
    assert all(name.startswith('libOpenMMCoordination') for name in names), names
    from openmmcoordination.cli import main
    main(['info'])
    printed = capsys.readouterr().out.split('plugin load failures:')[1].splitlines()
    libraries = [openmmcoordination._library_of(line.strip()) for line in printed if line.strip() not in ('', 'none')]
    assert len(libraries) == len(set(libraries)), printed
    failed = {openmmcoordination._library_of(m) for m in openmm.Platform.getPluginLoadFailures()}
    assert failed | set(names) == set(libraries), printed


def test_library_of_a_failure():
    assert openmmcoordination._library_of('Error loading library /a/b/libX.so: libcuda.so.1: cannot open') == 'libX.so'
    assert openmmcoordination._library_of('/a/libY.dylib: Error loading library /a/libY.dylib: no') == 'libY.dylib'
    assert openmmcoordination._library_of('something else') == 'something else'
