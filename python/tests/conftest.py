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
"""

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
    required = [name.strip() for name in os.environ.get('COORDINATION_REQUIRE_PLATFORMS', '').split(',') if name.strip()]
    if required:
        available, missing = available_configs()
        ids = {c.id for c in available} | {c.name for c in available}
        absent = [name for name in required if name not in ids]
        if absent:
            raise pytest.UsageError('COORDINATION_REQUIRE_PLATFORMS: not available: %s (%s)' % (
                ', '.join(absent), '; '.join('%s: %s' % item for item in missing.items())))


def pytest_generate_tests(metafunc):
    """Parametrize `platform_config` over the available configurations only,
    `double_platform_config` over those computing in double precision, and
    `gpu_platform_config` over the CUDA ones (tests too large for the Reference and CPU platforms)."""
    available, _ = available_configs()
    if 'platform_config' in metafunc.fixturenames:
        metafunc.parametrize('platform_config', available, ids=[c.id for c in available])
    if 'double_platform_config' in metafunc.fixturenames:
        doubles = [c for c in available if c.is_double]
        metafunc.parametrize('double_platform_config', doubles, ids=[c.id for c in doubles])
    if 'gpu_platform_config' in metafunc.fixturenames:
        gpus = [c for c in available if c.name == 'CUDA']
        metafunc.parametrize('gpu_platform_config', gpus, ids=[c.id for c in gpus])


_CONFIG_FIXTURES = ('platform_config', 'double_platform_config', 'gpu_platform_config')


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """Where no CUDA configuration is available, a test function that takes `gpu_platform_config`
    is not collected at all (parametrizing it over nothing would report it as skipped)."""
    if (inspect.isfunction(obj) and collector.funcnamefilter(name)
            and 'gpu_platform_config' in inspect.signature(obj).parameters
            and not any(c.name == 'CUDA' for c in available_configs()[0])):
        return []
    return None


@pytest.fixture(autouse=True)
def _release_contexts():
    """Destroy the Contexts a test leaves behind before the next test starts, even those held
    by reference cycles (a failed assertion's traceback, say): on a GPU each one holds a device
    context, and many test processes share the device."""
    yield
    gc.collect()


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
