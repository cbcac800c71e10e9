"""The syntax of a PLUMED input file, for openmmcoordination.plumed: comments, continuation blocks,
labels, keywords, numbers, atom lists, UNITS and GROMACS index files. Nothing here builds a force.

>>> actions = parseInput('c1: COORDINATION GROUPA=1-10 GROUPB=11-100:3 R_0=0.3\\n')
>>> actions[0].label, actions[0].name, actions[0].keywords['GROUPB']
('c1', 'COORDINATION', '11-100:3')

Every error is a PlumedInputError (a ValueError) whose message names the line, the action and the
keyword: ``plumed.dat line 4: COORDINATION: R_0: not a number: 'abc'``.
"""

import math
import os
import re

__all__ = ['PlumedInputError', 'Action', 'Units', 'Value', 'parseInput', 'readIndexFile']

_LABEL = re.compile(r'[A-Za-z_][A-Za-z0-9_]*$')
_NUMBER = re.compile(r'[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$')


class PlumedInputError(ValueError):
    """A PLUMED input this package cannot run exactly: the message names the source, the line, the
    action and the keyword (``line``, ``action`` and ``keyword`` hold them; None where none applies)."""

    def __init__(self, source, line, action, keyword, message):
        where = ['%s line %d' % (source, line) if line else source]
        where += [part for part in (action, keyword) if part]
        super().__init__('%s: %s' % (': '.join(where), message))
        self.line, self.action, self.keyword = line, action, keyword


def _scaled(value, scale):
    """value*scale, as value/10 for a scale of 0.1 (so 3.5 A is 0.35 nm, not 0.35000000000000003)."""
    return value/round(1/scale) if scale < 1 and (1/scale).is_integer() else value*scale


class Action(object):
    """One action of the input: ``name`` (COORDINATION, ...), ``label`` (or None), ``keywords``
    (KEY -> the value as written, braces removed, or True for a flag), ``line`` (its first line),
    ``text`` (the action on one line). Its readers mark the keywords they use; ``finish()`` refuses
    the others. ``python`` collects what the action becomes, ``log`` what was replaced."""

    def __init__(self, source, line, name, label, keywords, text):
        self.source, self.line, self.name, self.label = source, line, name, label
        self.keywords, self.text = keywords, text
        self.python, self.log = [], []
        self._used = {'LABEL'}

    def fail(self, keyword, message, *args):
        """The PlumedInputError of this action and keyword (None: the action as a whole)."""
        return PlumedInputError(self.source, self.line, self.name, keyword, message % args if args else message)

    def has(self, key):
        """Whether the keyword is present."""
        return key in self.keywords

    def take(self, key, default=None):
        """The keyword's value as written (a string), or default when absent."""
        self._used.add(key)
        value = self.keywords.get(key, default)
        if value is True:
            raise self.fail(key, 'needs a value (%s=...)', key)
        return value

    def fileName(self, key, default=None):
        """The keyword's output file name, or default when absent; a PlumedInputError for an empty name,
        one of a folder (ending in /), or one ending in .gz (PLUMED's OFile writes that compressed)."""
        value = self.take(key, default)
        if value is not None and (not value.strip() or value.endswith(('/', os.sep))):
            raise self.fail(key, 'needs the name of a file, got %r', value)
        if value is not None and value.endswith('.gz'):
            raise self.fail(key, '%r: PLUMED writes a file whose name ends in .gz compressed (gzip), this package '
                            'writes plain text; name it without .gz', value)
        return value

    def required(self, key):
        """The keyword's value; a PlumedInputError when it is absent."""
        value = self.take(key)
        if value is None:
            raise self.fail(key, 'is required')
        return value

    def flag(self, key):
        """Whether the flag is present (a flag takes no value)."""
        self._used.add(key)
        value = self.keywords.get(key, False)
        if value is not True and value is not False:
            raise self.fail(key, 'is a flag and takes no value, got %s=%s', key, value)
        return value

    def strings(self, key, default=None):
        """The keyword's comma-separated values, or default when absent."""
        value = self.take(key)
        if value is None:
            return default
        parts = value.split(',')
        if any(not part.strip() for part in parts):
            raise self.fail(key, 'has an empty item: %r', value)
        return [item for part in parts for item in part.split()]     # {a b c} is the list a,b,c as well

    def number(self, key, default=None, scale=1.0):
        """The keyword's number times scale (a unit conversion), or default when absent."""
        value = self.take(key)
        return default if value is None else self._scaled(key, self.toNumber(key, value), scale)

    def numbers(self, key, count, default=None, scale=1.0):
        """``count`` comma-separated numbers times scale; default (a number repeated ``count`` times,
        or None) when absent."""
        items = self.strings(key)
        if items is None:
            return None if default is None else [default]*count
        if len(items) != count:
            raise self.fail(key, 'needs %d values (one per argument), got %d: %s', count, len(items), ','.join(items))
        return [self._scaled(key, self.toNumber(key, item), scale) for item in items]

    def _scaled(self, key, value, scale):
        """value*scale (a unit conversion), which must stay finite."""
        scaled = _scaled(value, scale)
        if not math.isfinite(scaled):
            raise self.fail(key, '%s is not finite in this package\'s units (times %g)', value, scale)
        return scaled

    def integer(self, key, default=None):
        """The keyword's integer, or default when absent."""
        value = self.take(key)
        return default if value is None else self.toInteger(key, value)

    def toNumber(self, key, text):
        """A finite number as PLUMED writes it (no expressions); a PlumedInputError otherwise."""
        if not _NUMBER.match(text.strip()):
            raise self.fail(key, 'not a number: %r', text)
        value = float(text)
        if not math.isfinite(value):
            raise self.fail(key, 'not a finite number: %r', text)
        return value

    def toInteger(self, key, text):
        """An integer; a PlumedInputError otherwise."""
        if not re.match(r'[+-]?\d+$', text.strip()):
            raise self.fail(key, 'not an integer: %r', text)
        return int(text)

    def finish(self):
        """Refuse every keyword that no reader used (an unsupported keyword)."""
        for key in self.keywords:
            if key not in self._used:
                raise self.fail(key, 'not supported (see docs/plumed-input.md for what is)')


class Units(object):
    """PLUMED's UNITS (src/tools/Units.cpp): ``length`` in nm, ``energy`` in kJ/mol and ``time`` in ps
    per input unit. Each takes PLUMED's names (LENGTH nm, A, um, Bohr; ENERGY kj/mol, kcal/mol, j/mol,
    eV, Ha; TIME ps, ns, fs, atomic) or a positive number (that many nm, kJ/mol, ps)."""

    LENGTHS = {'nm': 1.0, 'A': 0.1, 'um': 1000.0, 'Bohr': 0.052917721067}
    ENERGIES = {'kj/mol': 1.0, 'kcal/mol': 4.184, 'j/mol': 0.001, 'eV': 96.48530749925792, 'Ha': 2625.499638}
    TIMES = {'ps': 1.0, 'ns': 1000.0, 'fs': 0.001, 'atomic': 2.418884326509e-5}

    def __init__(self, length=1.0, energy=1.0, lengthName='nm', energyName='kj/mol', time=1.0, timeName='ps'):
        self.length, self.energy, self.time = length, energy, time
        self.lengthName, self.energyName, self.timeName = lengthName, energyName, timeName

    @classmethod
    def read(cls, action):
        """The units of a UNITS action. CHARGE and MASS are accepted (nothing this package reads uses
        them); NATURAL (kB = 1) is refused."""
        values = []
        for key, table, default in (('LENGTH', cls.LENGTHS, 'nm'), ('ENERGY', cls.ENERGIES, 'kj/mol'),
                                    ('TIME', cls.TIMES, 'ps')):
            name = action.take(key, default)
            if name in table:
                values += [table[name], name]
                continue
            if not _NUMBER.match(name.strip()) or not float(name) > 0:
                raise action.fail(key, '%r is not one of %s, nor a positive number', name, ', '.join(table))
            values += [float(name), name]
        for key in ('CHARGE', 'MASS'):
            if action.take(key) is not None:
                action.log.append('%s=%s accepted: nothing this package reads from a PLUMED input uses it' % (key, action.keywords[key]))
        if action.flag('NATURAL'):
            raise action.fail('NATURAL', 'not supported: natural units (kB = 1) change what every energy means')
        action.finish()
        return cls(values[0], values[2], values[1], values[3], values[4], values[5])


def _words(line, depth, fail):
    """The words of one line (comments already removed), split at whitespace outside braces, and the
    brace depth at its end: a word still inside braces at the end of the line goes on with the next
    line (PLUMED's Tools::getWords with its parenthesis level)."""
    words, current = [], ''
    for character in line:
        if character == '{':
            depth += 1
        elif character == '}':
            depth -= 1
            if depth < 0:
                raise fail('a "}" without its "{"')
        if character.isspace() and depth == 0:
            if current:
                words.append(current)
            current = ''
        else:
            current += character
    if current:
        words.append(current)
    return words, depth


def _action(source, line, tokens):
    """An Action from its tokens: [label:] NAME KEY=value ... FLAG ..."""
    def fail(message, *args):
        return PlumedInputError(source, line, None, None, message % args if args else message)
    label = None
    if tokens[0].endswith(':'):
        label = tokens.pop(0)[:-1]
        if not tokens:
            raise fail('a label %r without an action', label)
    name = tokens.pop(0)
    keywords = {}
    for token in tokens:
        key, equals, value = token.partition('=')
        if not key:
            raise fail('%s: %r is not a keyword', name, token)
        if equals and value.startswith('{') and value.endswith('}'):
            value = value[1:-1].strip()
        if key in keywords:
            raise PlumedInputError(source, line, name, key, 'given twice')
        keywords[key] = value if equals else True
    if 'LABEL' in keywords:
        if label is not None:
            raise PlumedInputError(source, line, name, 'LABEL', 'a label both before the action (%s:) and as LABEL=' % label)
        label = keywords['LABEL']
        if label is True:
            raise PlumedInputError(source, line, name, 'LABEL', 'needs a value (LABEL=...)')
    if label is not None and not _LABEL.match(label):
        raise PlumedInputError(source, line, name, 'LABEL', '%r: only labels made of letters, digits and _ '
                               '(not starting with a digit) are supported' % label)
    return Action(source, line, name, label, keywords, ' '.join(([label + ':'] if label else []) + [name] + tokens))


def parseInput(text, source='input'):
    """The actions of a PLUMED input (a string), in order, as PLUMED's Tools::getParsedLine joins its
    lines: comments (# to the end of a line) removed; a line ending in "..." opens a block that a
    line starting with "..." closes (optionally followed by the action's name or label); inside a
    block, braces may span lines. ``ENDPLUMED`` ends the input: it is returned as an action of that
    name (the reader logs it) and nothing after it is read. ``source`` names the input in error
    messages (the file name)."""
    actions, words, start, inside, depth = [], [], None, False, 0
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = raw.split('#', 1)[0].strip()
        fail = lambda message, *args: PlumedInputError(source, number, None, None, message % args if args else message)
        if not line:
            continue
        merge = depth > 0
        lineWords, depth = _words(line, depth, fail)
        if lineWords:
            if start is None:
                start = number
            if inside and lineWords[0] == '...' and not merge:
                first = _action(source, start, list(words)) if words else None
                if len(lineWords) > 2 or (len(lineWords) == 2 and (first is None or lineWords[1] not in (first.name, first.label))):
                    raise fail('this "%s" closes the block of %s opened at line %d', ' '.join(lineWords),
                               first.name if first else 'nothing', start)
                inside, lineWords = False, []
            elif lineWords[-1] == '...' and depth == 0:
                if not inside and not words and len(lineWords) == 1:
                    raise fail('a "..." that closes no block')
                inside, lineWords = True, lineWords[:-1]
            if merge and words and lineWords:
                words[-1] += ' ' + lineWords.pop(0)
            words += lineWords
        if inside:
            continue
        if depth > 0:
            raise fail('a "{" without its "}" (braces may span lines only inside a "..." block)')
        if not words:
            start = None
            continue
        action = _action(source, start, words)
        words, start = [], None
        actions.append(action)
        if action.name == 'ENDPLUMED':
            rest = [n for n, l in enumerate(lines[number:], start=number + 1) if l.split('#', 1)[0].strip()]
            action.log.append('the end of the input for PLUMED: %s' % (
                'nothing follows' if not rest else 'lines %d to %d are not read, as PLUMED does not read them' % (rest[0], rest[-1])))
            return actions
    if inside:
        raise PlumedInputError(source, start, None, None, 'the block opened here ("...") is never closed')
    if depth > 0:
        raise PlumedInputError(source, start, None, None, 'a "{" without its "}"')
    return actions


def readIndexFile(path, fail):
    """The groups of a GROMACS .ndx file: {name: [atom numbers, 1-based]}, in file order."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise fail('cannot read %s: %s', path, error.strerror or error)
    groups, current = {}, None
    for line in lines:
        line = line.strip()
        if line.startswith('['):
            if not line.endswith(']'):
                raise fail('%s: a malformed group header %r', path, line)
            current = line[1:-1].strip()
            groups[current] = []
        elif line:
            if current is None or not all(re.match(r'\d+$', item) for item in line.split()):
                raise fail('%s: a line that is not a list of atom numbers in a group: %r', path, line)
            groups[current].extend(int(item) for item in line.split())
    return groups


class Value(object):
    """What a labelled action defined: ``kind`` ('group', 'coordination', 'distance', 'function',
    'bias', 'metad' or 'print'), ``obj`` (what PlumedInput[label] returns) and ``action``; the
    readers add what their kind needs (``cvs``, ``parts``, ``periodic``, ...)."""

    def __init__(self, action, kind, obj, **extra):
        self.action, self.kind, self.obj = action, kind, obj
        self.__dict__.update(extra)
