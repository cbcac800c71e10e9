"""Shared fixtures of the openmm-coordination test suite.

Platforms: every test that takes the `platform_config` fixture runs once per available
platform configuration: Reference, CPU, and CUDA in single, mixed and double precision when
the CUDA platform exists and our CUDA kernel is registered (a Context with a CoordinationForce
can be created on it). Tests too large for the Reference and CPU platforms take the
`gpu_platform_config` fixture instead: CUDA configurations only. Configurations that are not
available are not generated at all, so they never show up as passing (nor as skipped) tests
(without a GPU, a `gpu_platform_config` test is not collected); the report header lists what
ran and what was left out and why. Set COORDINATION_REQUIRE_PLATFORMS=CUDA (comma separated
names or ids such as CUDA-double) to make a missing platform an error instead, for example on a
GPU machine.

Tolerances: stated once, in helpers.PLATFORM_TOLERANCES.

Markers: `leaks_context` marks a test that makes the creation of a CUDA Context fail on purpose
(an index out of range, a tuning switch with a bad value, a table that is not finite). Where the
failure comes after the CUDA platform has created its device context (checks in
ForceImpl::initialize or in the kernel's initialize), OpenMM does not release that context; under
CUDA MPS each leaked one holds a client of the server until its process ends, and enough of them
use the server up. benchmarks/gpu_suite.sh therefore runs these tests last, in a pytest of their
own outside MPS (`-m leaks_context`), and the others under MPS (`-m "not leaks_context"`); a plain
run (tests/run.sh, CI) runs them all together. A test whose CUDA Context creation fails without
the marker gets an error at teardown, so that a new one cannot go unmarked. `xdist_group` (of
pytest-xdist, registered here for runs without it) keeps tests that share a costly oracle on one
worker under `--dist loadgroup`.

Shards: COORDINATION_TEST_SHARD=k/n (1 <= k <= n) keeps the k-th of n disjoint parts of the
collected tests and deselects the rest, each test function with all its parameters (and each
xdist_group) whole in one part, by a hash of its name: n runs, k = 1 to n, run every test once.
benchmarks/gpu_suite.sh's pytest stage so splits the suite over device calls of limited time.
"""

import functools
import gc
import inspect
import os
import zlib

import numpy as np
import pytest

import openmm

import openmmcoordination  # noqa: F401  (loads the plugin libraries)
from openmmcoordination import CoordinationForce

from helpers import PLATFORM_TOLERANCES, PlatformConfig


def _candidate_configs():
    configs = [PlatformConfig('Reference', **PLATFORM_TOLERANCES['Reference']),
               PlatformConfig('CPU', properties={'Threads': '2'}, **PLATFORM_TOLERANCES['CPU'])]
    for precision in ('single', 'mixed', 'double'):
        configs.append(PlatformConfig('CUDA', precision, properties={'Precision': precision},
                                      **PLATFORM_TOLERANCES['CUDA-' + precision]))
    return configs


def _probe(config):
    """None if a Context with a CoordinationForce works on this configuration, else why not."""
    try:
        config.platform()
    except Exception as error:
        return 'no %s platform (%s)' % (config.name, str(error).strip().splitlines()[0])
    system = openmm.System()
    for _ in range(2):
        system.addParticle(1.0)
    force = CoordinationForce([0, 1])
    system.addForce(force)
    try:
        # the kernel is created with the Context: this fails if our kernel is not registered
        # for the platform. Whether it computes the right numbers is for the tests to say.
        context = config.context(system)
        del context
    except Exception as error:
        return 'cannot create a Context with a CoordinationForce (%s)' % str(error).strip().splitlines()[0]
    return None


_AVAILABLE = None


def available_configs():
    """(available configurations, {id: reason} of those left out), computed once."""
    global _AVAILABLE
    if _AVAILABLE is None:
        available, missing = [], {}
        for config in _candidate_configs():
            reason = _probe(config)
            if reason is None:
                available.append(config)
            else:
                missing[config.id] = reason
        _AVAILABLE = (available, missing)
    return _AVAILABLE


def pytest_report_header(config):
    available, missing = available_configs()
    lines = ['openmm %s, openmm-coordination %s' % (openmm.__version__, openmmcoordination.__version__),
             'coordination platforms tested: ' + ', '.join(c.id for c in available)]
    for name, reason in missing.items():
        lines.append('coordination platform not tested: %s: %s' % (name, reason))
    if openmmcoordination.plugin_load_failures:
        lines.append('plugin load failures: ' + '; '.join(openmmcoordination.plugin_load_failures))
    return lines


def pytest_configure(config):
    config.addinivalue_line('markers', 'leaks_context: the test makes a CUDA Context fail to be created on purpose, '
                            'which may leak the device context (run it outside CUDA MPS)')
    config.addinivalue_line('markers', 'xdist_group(name): tests to run on one pytest-xdist worker under --dist loadgroup')
    # The samplers' tests use coarse grids on purpose (fast, and compared with openmm.app on the same grids):
    # Metadynamics' warning about them is asserted by test_other_force_cvs.py::test_hills_narrower_than_the_grid_warn
    # (pytest.warns sees it whatever this filter says), and would be noise everywhere else.
    config.addinivalue_line('filterwarnings', 'ignore:Metadynamics. the grid spacing of variables:RuntimeWarning')
    required = [name.strip() for name in os.environ.get('COORDINATION_REQUIRE_PLATFORMS', '').split(',') if name.strip()]
    if required:
        available, missing = available_configs()
        ids = {c.id for c in available} | {c.name for c in available}
        absent = [name for name in required if name not in ids]
        if absent:
            raise pytest.UsageError('COORDINATION_REQUIRE_PLATFORMS: not available: %s (%s)' % (
                ', '.join(absent), '; '.join('%s: %s' % item for item in missing.items())))


def parse_shard(spec):
    """(k, n) of COORDINATION_TEST_SHARD's 'k/n'; ValueError unless two integers with 1 <= k <= n."""
    try:
        k, n = (int(v) for v in spec.split('/'))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise ValueError('COORDINATION_TEST_SHARD must be k/n with 1 <= k <= n (e.g. 1/2), not %r' % spec)
    return k, n


def shard_of(key, n):
    """The part (1 to n) that the tests of `key` belong to."""
    return zlib.crc32(key.encode()) % n + 1


def _shard_key(item):
    """What a shard keeps whole: the test's xdist_group, else its function (without parameters)."""
    group = item.get_closest_marker('xdist_group')
    if group is not None:
        return 'group:' + (group.args[0] if group.args else group.kwargs.get('name', ''))
    return item.nodeid.split('[')[0]


def pytest_collection_modifyitems(config, items):
    """With COORDINATION_TEST_SHARD=k/n, only the k-th part of the tests (see the module's docstring)."""
    spec = os.environ.get('COORDINATION_TEST_SHARD', '').strip()
    if not spec:
        return
    try:
        k, n = parse_shard(spec)
    except ValueError as error:
        raise pytest.UsageError(str(error))
    keep = [shard_of(_shard_key(item), n) == k for item in items]
    deselected = [item for item, kept in zip(items, keep) if not kept]
    items[:] = [item for item, kept in zip(items, keep) if kept]
    if deselected:
        config.hook.pytest_deselected(items=deselected)


def pytest_generate_tests(metafunc):
    """Parametrize `platform_config` over the available configurations only,
    `double_platform_config` over those computing in double precision, and
    `gpu_platform_config` over the CUDA ones (tests too large for the Reference and CPU platforms),
    `host_config` over the Reference and CPU ones (runs of the host's samplers, whose device paths
    other tests check)."""
    available, _ = available_configs()
    if 'host_config' in metafunc.fixturenames:
        hosts = [c for c in available if c.name in ('Reference', 'CPU')]
        metafunc.parametrize('host_config', hosts, ids=[c.id for c in hosts])
    if 'platform_config' in metafunc.fixturenames:
        metafunc.parametrize('platform_config', available, ids=[c.id for c in available])
    if 'double_platform_config' in metafunc.fixturenames:
        doubles = [c for c in available if c.is_double]
        metafunc.parametrize('double_platform_config', doubles, ids=[c.id for c in doubles])
    if 'gpu_platform_config' in metafunc.fixturenames:
        gpus = [c for c in available if c.name == 'CUDA']
        metafunc.parametrize('gpu_platform_config', gpus, ids=[c.id for c in gpus])


# The fixtures of platform configurations, left out of the random seeds (host_config: Reference and
# CPU, generated by test_metadynamics.py for its seeded comparisons with openmm.app).
_CONFIG_FIXTURES = ('platform_config', 'double_platform_config', 'gpu_platform_config', 'host_config')


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """Where no CUDA configuration is available, a test function that takes `gpu_platform_config`
    is not collected at all (parametrizing it over nothing would report it as skipped)."""
    if (inspect.isfunction(obj) and collector.funcnamefilter(name)
            and 'gpu_platform_config' in inspect.signature(obj).parameters
            and not any(c.name == 'CUDA' for c in available_configs()[0])):
        return []
    return None


# The CUDA Contexts whose creation failed during the current test (see the leaks_context marker).
_failed_cuda_contexts = []


def _note_failed_cuda_contexts(init):
    """openmm.Context's constructor, noting each CUDA Context whose creation raises."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except Exception as error:
            platform = kwargs.get('platform', next((a for a in args if isinstance(a, openmm.Platform)), None))
            if platform is not None and platform.getName() == 'CUDA':
                _failed_cuda_contexts.append(str(error).strip().splitlines()[0] if str(error).strip() else repr(error))
            raise
    return __init__


openmm.Context.__init__ = _note_failed_cuda_contexts(openmm.Context.__init__)


@pytest.fixture(autouse=True)
def _release_contexts(request):
    """Destroy the Contexts a test leaves behind before the next test starts, even those held
    by reference cycles (a failed assertion's traceback, say): on a GPU each one holds a device
    context, and many test processes share the device. Then an error if the test made a CUDA
    Context fail to be created without the leaks_context marker."""
    del _failed_cuda_contexts[:]
    yield
    gc.collect()
    if _failed_cuda_contexts and request.node.get_closest_marker('leaks_context') is None:
        failures = list(_failed_cuda_contexts)
        del _failed_cuda_contexts[:]
        pytest.fail('%d CUDA Context(s) failed to be created in a test without the leaks_context marker (the '
                    'device context may leak; under MPS that uses up the server): %s' % (len(failures), '; '.join(failures)),
                    pytrace=False)


@pytest.fixture
def reference_config():
    """The Reference platform configuration (for tests of platform-independent behaviour)."""
    return PlatformConfig('Reference', **PLATFORM_TOLERANCES['Reference'])


@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the test's name and parameters, except the platform: every
    platform sees the same configurations, and they do not depend on which platforms exist.
    COORDINATION_TEST_SEED (any string) draws other configurations."""
    params = getattr(request.node, 'callspec', None)
    params = {} if params is None else params.params
    key = '%s%s::%s%r' % (os.environ.get('COORDINATION_TEST_SEED', ''), request.node.module.__name__,
                          request.node.originalname, sorted((k, str(v)) for k, v in params.items()
                                                            if k not in _CONFIG_FIXTURES))
    return np.random.default_rng(zlib.crc32(key.encode()))
