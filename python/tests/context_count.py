"""A pytest plugin that counts the openmm.Context objects the tests create, by test file and
platform, and those whose creation raised, and prints the table at the end of the run:

    PYTHONPATH=python/tests pytest python/tests -p context_count -p no:cacheprovider

(a -p plugin is imported before pytest puts python/tests on the path for conftest.py). Each CUDA Context
holds a device context, the main cost of a GPU test; the counts of the CPU platform are those of
each CUDA precision, as the same tests run on it. Without pytest-xdist's -n: the workers' counts
are not gathered."""

import collections

import openmm
import pytest

_created = collections.Counter()
_failed = collections.Counter()
_current = [None]


def _counting(init):
    def __init__(self, *args, **kwargs):
        platform = next((a.getName() for a in args if isinstance(a, openmm.Platform)), 'default')
        key = (_current[0] or '(outside tests)', platform)
        try:
            init(self, *args, **kwargs)
        except Exception:
            _failed[key] += 1
            raise
        _created[key] += 1
    return __init__


def pytest_configure(config):
    openmm.Context.__init__ = _counting(openmm.Context.__init__)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current[0] = item.nodeid.split('::')[0].split('/')[-1]
    yield
    _current[0] = None


def pytest_terminal_summary(terminalreporter):
    platforms = sorted({p for _, p in _created} | {p for _, p in _failed})
    files = sorted({f for f, _ in _created} | {f for f, _ in _failed})
    write = terminalreporter.write_line
    terminalreporter.section('Contexts created (failed creations in parentheses)')
    write('%-32s' % 'file' + ''.join('%14s' % p for p in platforms))
    for f in files:
        write('%-32s' % f + ''.join('%14s' % ('%d (%d)' % (_created[f, p], _failed[f, p]) if _failed[f, p] else _created[f, p])
                                    for p in platforms))
    write('%-32s' % 'total' + ''.join('%14d' % sum(_created[f, p] for f in files) for p in platforms))
