"""The documentation runs as written (issue 44): every ```python block, every command and every >>>
example (the docstrings on docs/api-python.md) of README.md and docs/*.md, page by page, in order,
as a reader pastes them (docs_blocks.py extracts and runs them), in a fresh folder that holds only
links to the repository's examples/, benchmarks/, docs/, python/ and tests/ (what a clone has;
outputs land in the fresh folder), on the CPU platform (OPENMM_DEFAULT_PLATFORM=CPU, which OpenMM's
Context, the examples and the pages' setup blocks honour) and with COORDINATION_QUICK=1, the
documented size switch: the examples run their `--quick` sizes (whatever step counts the command
gives) and the pages' blocks their `steps` for a smoke test. What the prose says a block prints
("prints `CV = 5.10`") must be in its output. A block that is not meant to run carries
`<!-- not run: reason -->` on the line before it, and the test checks each has a reason."""

import os
import re
import subprocess
import sys
import time

import pytest

import docs_blocks
from docs_blocks import REPO

LINKED = ['examples', 'benchmarks', 'docs', 'python', 'tests']
# The pages whose runs take longest (the examples' commands) go first under pytest-xdist.
PAGES = docs_blocks.pages()


def test_pages_have_code():
    """The extractor sees the blocks (a change of the fence syntax cannot empty the test)."""
    counts = {page: sum(b.kind is not None for b in docs_blocks.blocks(page)) for page in PAGES}
    assert counts['README.md'] >= 3 and counts[os.path.join('docs', 'tutorial.md')] >= 5, counts
    assert sum(counts.values()) >= 40, counts


def test_commands_are_in_fenced_blocks():
    """An indented command would escape the test: commands go in ```bash blocks."""
    found = {page: docs_blocks.indentedCommands(page) for page in PAGES}
    assert not any(found.values()), {page: lines for page, lines in found.items() if lines}


def test_not_run_marks_give_a_reason():
    """Every mark names why its block does not run, and marks only what would otherwise run."""
    for page in PAGES:
        for block in docs_blocks.blocks(page):
            if block.notRun is not None:
                assert block.kind is not None, '%s:%d marks a ```%s block' % (page, block.line, block.language)
                assert len(block.notRun) >= 10, '%s:%d: a not-run mark without a reason' % (page, block.line)


def test_block_commands():
    """A ```bash block is split into commands as a shell reads it."""
    block = docs_blocks.Block('x.md', 1, 'bash', 'a --x 1   # one\n\n# a comment\nb \\\n    --y 2\n')
    assert block.commands() == ['a --x 1   # one', 'b      --y 2']


def test_doctest_blocks():
    """A ```text block with >>> lines (a docstring on the API page) runs its >>> and ... lines; one
    without them is text; the API page's examples are seen (all but the marked PLUMED reader's)."""
    block = docs_blocks.Block('x.md', 1, 'text', 'Prose.\n\n>>> for i in range(2):\n...     x = i\n>>> y = x + 1\nmore prose\n')
    assert block.kind == 'doctest' and block.code() == 'for i in range(2):\n    x = i\ny = x + 1\n'
    assert docs_blocks.Block('x.md', 1, 'text', 'no prompt\n').kind is None
    api = [b for b in docs_blocks.blocks(os.path.join('docs', 'api-python.md')) if b.kind == 'doctest']
    assert len(api) >= 8 and [b.notRun is not None for b in api].count(True) == 1, [(b.line, b.notRun) for b in api]


@pytest.mark.parametrize('page', PAGES)
def test_page_runs(page, tmp_path):
    """The page's blocks, in order, in a fresh folder on the CPU platform; fails at the first block that fails."""
    for name in LINKED:
        os.symlink(os.path.join(REPO, name), tmp_path / name)
    # `python` and `openmm-coordination` in the commands are this Python's (as in an activated venv)
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', '')
    env = dict(os.environ, PATH=path, OPENMM_DEFAULT_PLATFORM='CPU', COORDINATION_QUICK='1', MPLBACKEND='Agg')
    start = time.time()
    run = subprocess.run([sys.executable, os.path.join(REPO, 'python', 'tests', 'docs_blocks.py'), page], cwd=tmp_path,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    print(run.stdout[-6000:])
    print('%s ran in %.0f s' % (page, time.time() - start))
    assert run.returncode == 0, run.stdout[-6000:]
    # No block or command draws the PeriodicBoundaryWarning (issue 41 item 6; stderr is in run.stdout).
    assert 'does not use periodic boundary conditions' not in run.stdout, (page, run.stdout[-6000:])
    # What the prose says a block prints ("prints `CV = 5.10`"; "..." ends a prefix) is in the output.
    for printed in re.findall(r'prints `([^`]+)`', open(os.path.join(REPO, page)).read()):
        assert printed.split('...')[0] in run.stdout, (page, printed)


def test_size_switch(monkeypatch):
    """COORDINATION_QUICK=1 gives the examples their 'quick' row and caps the step counts a command
    gives at it (the box too is the row's unless given); without it the row follows the platform."""
    from openmmcoordination._examples import runSettings
    import openmm
    table = {'gpu': dict(box=3.0, steps=500000, frequency=250), 'cpu': dict(box=2.2, steps=30000, frequency=50),
             'quick': dict(box=2.0, steps=400, frequency=50)}
    cpu = openmm.Platform.getPlatformByName('CPU')
    monkeypatch.delenv('COORDINATION_QUICK', raising=False)
    assert runSettings(table, cpu) == ('cpu', table['cpu'])
    assert runSettings(table, cpu, steps=250000, capped=('steps',)) == ('cpu', dict(table['cpu'], steps=250000))
    assert runSettings(table, cpu, quick=True, steps=1000, capped=('steps',)) == ('quick', dict(table['quick'], steps=1000))
    monkeypatch.setenv('COORDINATION_QUICK', '1')
    assert runSettings(table, cpu, steps=250000, frequency=None, capped=('steps',)) == ('quick', table['quick'])
    assert runSettings(table, cpu, steps=100, capped=('steps',)) == ('quick', dict(table['quick'], steps=100))
    monkeypatch.setenv('COORDINATION_QUICK', '0')
    assert runSettings(table, cpu)[0] == 'cpu'


def test_examples_write_to_a_folder_naming_the_run():
    """--ion Cl does not write over the Na+ results; OPES does not write over metadynamics'."""
    from gr_helpers import import_script
    coordination = import_script('examples', 'ion_coordination')
    assert coordination.parseArguments([]).output == os.path.join('output', 'ion_coordination_Na')
    assert coordination.parseArguments(['--ion', 'Cl']).output == os.path.join('output', 'ion_coordination_Cl')
    assert coordination.parseArguments(['--output', 'x']).output == 'x'
    pairing = import_script('examples', 'ion_pairing')
    assert pairing.parseArguments([]).output == os.path.join('output', 'ion_pairing')
    assert pairing.parseArguments(['--method', 'opes']).output == os.path.join('output', 'ion_pairing_opes')
