"""The code of the documentation pages, as a reader pastes it: every ```python block, every
command (```bash blocks, a command a line, `\\` continuing it) and every >>> example (the >>> and
... lines of a ```text block: the docstrings on docs/api-python.md) of README.md and docs/*.md, in
the order of the page. A block that is not meant to run carries a visible mark on the line before it:

    <!-- not run: the reason -->

Run as a script, it runs one page in the current folder, as a user would: the ```python blocks and
>>> examples in one Python session (one namespace, in order), each command in a shell, stopping at the first
failure, which it names (page, line, block) before exiting 1:

    python python/tests/docs_blocks.py README.md

test_docs_run.py runs every page so, each in a fresh folder, on the CPU platform
(OPENMM_DEFAULT_PLATFORM=CPU) and at the examples' smoke-test sizes (COORDINATION_QUICK=1).
"""

import os
import re
import subprocess
import sys
import traceback
from dataclasses import dataclass

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
RUN_LANGUAGES = {'python': 'python', 'bash': 'command', 'sh': 'command', 'shell': 'command', 'console': 'command'}
NOT_RUN = re.compile(r'^<!--\s*not run:\s*(.*?)\s*-->\s*$')
# The first word of a line that is a command, not a formula: such a line in an indented block
# (outside a fence) is a command the test would not see, so commands must be in ```bash blocks.
COMMAND_WORDS = ('python', 'python3', 'pip', 'bash', 'cmake', 'make', 'g++', 'openmm-coordination', 'pytest', 'ctest',
                 'conda', 'mamba', 'git', 'export', 'cd', 'build-app/', './')


@dataclass
class Block:
    page: str
    line: int            # the line of the opening fence, from 1
    language: str        # the fence's info string
    text: str
    notRun: str = None   # the reason of a not-run mark, '' for a mark without one, None: no mark

    @property
    def kind(self):
        """'python', 'command', 'doctest' (a ```text block with >>> lines: docstrings on the API page),
        or None for what is not run (cpp, plumed, text without >>>, ...)."""
        if self.language == 'text' and re.search(r'^>>> ', self.text, re.M):
            return 'doctest'
        return RUN_LANGUAGES.get(self.language)

    def code(self):
        """The Python of a block: a ```python block's text, or the >>> and ... lines of a doctest."""
        if self.kind != 'doctest':
            return self.text
        return ''.join(line[4:] + '\n' for line in self.text.splitlines() if line.startswith(('>>> ', '... ')))

    def commands(self):
        """The commands of a ```bash block: a line each, `\\` continuing it; comments and blanks left out."""
        commands, current = [], ''
        for line in self.text.splitlines():
            current += line.rstrip()
            if current.endswith('\\'):
                current = current[:-1] + ' '
                continue
            if current.strip() and not current.lstrip().startswith('#'):
                commands.append(current.strip())
            current = ''
        return commands


def pages():
    """README.md and docs/*.md, relative to the repository."""
    return ['README.md'] + sorted(os.path.join('docs', name) for name in os.listdir(os.path.join(REPO, 'docs'))
                                  if name.endswith('.md'))


def blocks(page):
    """The fenced blocks of a page, in order."""
    lines = open(os.path.join(REPO, page)).read().splitlines()
    found, k = [], 0
    while k < len(lines):
        fence = re.match(r'^(```+)\s*([\w+-]*)\s*$', lines[k])
        if not fence:
            k += 1
            continue
        end = k + 1
        while end < len(lines) and lines[end].strip() != fence.group(1):
            end += 1
        mark = NOT_RUN.match(lines[k - 1].strip()) if k > 0 else None
        if mark is None and k > 0 and lines[k - 1].strip().startswith('<!-- not run'):
            mark = re.match(r'()', '')  # a mark without the colon and reason: reported by the test
        found.append(Block(page, k + 1, fence.group(2), '\n'.join(lines[k + 1:end]) + '\n',
                           mark.group(1) if mark else None))
        k = end + 1
    return found


def indentedCommands(page):
    """(line, text) of the lines of indented code blocks (outside fences) that start with a command."""
    found, inFence, previousBlank = [], False, True
    for number, line in enumerate(open(os.path.join(REPO, page)).read().splitlines(), 1):
        if line.startswith('```'):
            inFence = not inFence
        elif not inFence and line.startswith('    ') and not line.lstrip().startswith(('-', '*', '|')):
            first = line.split()[0] if line.split() else ''
            if previousBlank and (first in COMMAND_WORDS or first.startswith(('./', 'build-app/'))):
                found.append((number, line.strip()))
            continue
        previousBlank = not line.strip()
    return found


def runPage(page):
    """Run the page's blocks here, in order; 0 when all ran, else 1 after naming the failure."""
    namespace = {'__name__': '__main__'}
    for index, block in enumerate(blocks(page), 1):
        if block.kind is None or block.notRun is not None:
            continue
        where = '%s:%d (block %d, ```%s)' % (page, block.line, index, block.language)
        print('== %s' % where, flush=True)
        if block.kind in ('python', 'doctest'):
            try:
                exec(compile(block.code(), '%s:block@line%d' % (page, block.line), 'exec'), namespace)
            except BaseException:
                traceback.print_exc()
                print('FAILED: %s' % where, flush=True)
                return 1
            sys.stdout.flush()
            continue
        for command in block.commands():
            print('$ ' + command, flush=True)
            # a command that starts others in the background (`a & b`) ends with them, and fails with them
            waitAll = '\nfor job in $(jobs -p); do wait $job || exit 1; done'
            if subprocess.run(['bash', '-e', '-c', command + waitAll]).returncode != 0:
                print('FAILED: %s: %s' % (where, command), flush=True)
                return 1
    return 0


if __name__ == '__main__':
    sys.exit(runPage(sys.argv[1]))
