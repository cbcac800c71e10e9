"""The sizes of the examples' runs (examples/*.py): one table per example, with a row for CUDA
('gpu'), for the CPU and Reference platforms ('cpu') and for a smoke test ('quick', `--quick`).

COORDINATION_QUICK=1 in the environment is the size switch of the documentation's test
(python/tests/test_docs_run.py): every example then runs its 'quick' row, whatever step counts its
command line gives (those are capped at the row's), so that a page's commands run in seconds along
the same code path."""

import os

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
