"""The supported OpenMM range is named in one place, openmm-range.txt: the build backend reads it
(and CMakeLists.txt), and what pyproject.toml, recipe/meta.yaml, .ci/run and the install docs write
must agree with it.
Reads files only (no OpenMM, no package: `--noconftest`)."""

import importlib.util
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def read(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def backend():
    """backend/openmm_coordination_backend.py as a module (it imports scikit-build-core only when it builds)."""
    spec = importlib.util.spec_from_file_location('openmm_coordination_backend',
                                                  os.path.join(REPO, 'backend', 'openmm_coordination_backend.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def series(version):
    return '%d.%d' % version


def test_backend_reads_the_range():
    module = backend()
    oldest, newest = module.read_openmm_range()
    text = read('openmm-range.txt')
    assert re.search(r'^oldest = %s$' % re.escape(series(oldest)), text, re.M)
    assert re.search(r'^newest = %s$' % re.escape(series(newest)), text, re.M)
    assert (module.OPENMM_MIN, module.OPENMM_NEWEST) == (oldest, newest) and oldest <= newest
    assert module.OPENMM_DEFAULT_REQUIREMENT == 'openmm>=%s,<%d.%d' % (series(newest), newest[0], newest[1] + 1)


def test_cmake_reads_the_range():
    """CMakeLists.txt takes the range from the file, and names no version of its own."""
    text = read('CMakeLists.txt')
    assert 'file(STRINGS ${CMAKE_SOURCE_DIR}/openmm-range.txt' in text
    assert not re.search(r'set\(OPENMM_M(IN|AX)_VERSION\s+\d', text)


def test_metadata_recipe_and_ci_agree():
    module = backend()
    oldest, newest = module.read_openmm_range()
    after = '%d.%d' % (newest[0], newest[1] + 1)    # the first series not supported
    pyproject = read('pyproject.toml')
    assert '"openmm>=%s,<%s"' % (series(oldest), after) in pyproject
    assert '"openmm-cuda-13>=%s,<%s"' % (series(module.FIRST_CUDA_13), after) in pyproject
    assert '# OpenMM %s to %s;' % (series(oldest), series(newest)) in pyproject
    assert re.findall(r'openmm(?:-cuda-\d+)?\s*>=\s*[\d.]+\s*,\s*<\s*([\d.]+)', pyproject) == [after, after]
    recipe = read('recipe/meta.yaml')
    assert re.findall(r'^\s*- openmm (.*)$', recipe, re.M) == ['>=%s,<%s' % (series(oldest), after)]
    run = read('.ci/run')
    assert re.findall(r'^OLDEST=(.*)$', run, re.M) == [series(oldest) + '.0']
    assert '"openmm-cuda-13>=%s,<%s"' % (series(newest), after) in run
    assert "openmm.__version__.startswith('%s')" % series(newest) in run


def test_docs_name_the_range():
    oldest, newest = backend().read_openmm_range()
    for path in ('README.md', 'docs/installation.md'):
        assert 'OpenMM %s to %s' % (series(oldest), series(newest)) in read(path), path
