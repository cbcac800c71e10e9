"""What Metadynamics and OPES share to be saved and restored, and to refuse what does not fit: the
settings that define a run (compared by setState() and by walkers sharing a biasDir), and the
checkpoint file that holds a Simulation's checkpoint and a sampler's getState() together."""

import io
import json
import operator
import os
import pickle
import re
import warnings

import numpy as np

import openmm

from openmmcoordination._checks import _error, _simulation

#: The version of the dictionaries that getState() returns (setState() refuses others).
STATE_VERSION = 1

#: The first key of a checkpoint file written by saveCheckpoint().
_CHECKPOINT_FORMAT = 'openmmcoordination checkpoint'

#: The file of biasDir that records the settings its walkers share (one per class).
SETTINGS_FILE = 'settings_%s.json'


def variableSettings(variables):
    """The variables as plain data: the grid of each (minValue, maxValue, gridWidth), the definition of
    its CV (the XML of its force, or a CVFunction's expression and forces) and, where a variable is
    periodic, which are."""
    settings = {'grid': [[float(v.minValue), float(v.maxValue), int(v.gridWidth)] for v in variables],
                'collectiveVariables': [_definition(v.force) for v in variables]}
    if any(v.periodic for v in variables):
        settings['periodic'] = [bool(v.periodic) for v in variables]
    return settings


def _definition(force):
    """The XML of a variable's force (a DistanceCV's repr); for a CVFunction, its expression, names and
    the definition of each force."""
    from openmmcoordination.cvfunction import CVFunction
    if isinstance(force, CVFunction):
        return 'CVFunction %r\n' % force.expression + '\n'.join(
            '%s: %s' % (name, _definition(f)) for name, f in zip(force.names, force.forces))
    from openmmcoordination.distancecv import DistanceCV
    if isinstance(force, DistanceCV):
        return repr(force)
    return openmm.XmlSerializer.serialize(force)


def _shown(key, value):
    return repr(value)


def _forceDifferences(expected, got, expectedName, gotName):
    """What differs between two lists of the variables' definitions (_definition: the XML of a force, a
    DistanceCV's repr, a CVFunction's expression and forces): 'variables[k].force: r0 <expectedName> .3,
    <gotName> .31' (the attributes that differ, or the particles and other parts where those are equal),
    or, between definitions of another kind (a CustomTorsionForce and a CoordinationForce, a DistanceCV
    and a force), both, named."""
    if len(expected) != len(got):
        return '%s %d CVs, %s %d' % (expectedName, len(expected), gotName, len(got))
    parts = []
    for k, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            parts.append('variables[%d].force: %s' % (k, _definitionDifference(a, b, expectedName, gotName)))
    return ' and '.join(parts)


def _definitionDifference(a, b, expectedName, gotName):
    """What differs between two definitions of one variable's force (see _forceDifferences)."""
    first, second = _parsedXml(a), _parsedXml(b)
    if first is not None and second is not None and first.get('type') == second.get('type'):
        names = sorted(set(first.attrib) | set(second.attrib))
        changed = ['%s %s %s, %s %s' % (name, expectedName, first.get(name), gotName, second.get(name))
                   for name in names if first.get(name) != second.get(name)]
        children = []
        for child in first:
            other = second.find(child.tag)
            shown = [_compactXml(child), '(none)' if other is None else _compactXml(other)]
            if shown[0] != shown[1]:
                children.append(child.tag if max(len(x) for x in shown) > _SHORT else '%s %s %s, %s %s' % (
                    child.tag, expectedName, shown[0], gotName, shown[1]))
        if children:
            changed.append('its %s' % ', '.join(children))
        return '; '.join(changed) if changed else 'its XML'
    functions = [_functionParts(a), _functionParts(b)]
    if None not in functions and functions[0][0] == functions[1][0]:
        (expression, forces), (_, otherForces) = functions
        if list(forces) == list(otherForces):
            return '; '.join('forces[%r]: %s' % (name, _definitionDifference(forces[name], otherForces[name],
                                                                               expectedName, gotName))
                             for name in forces if forces[name] != otherForces[name])
    return '%s %s, %s %s' % (expectedName, _summary(a), gotName, _summary(b))


#: The longest part of a force's XML that a message shows whole (a list of a few particles).
_SHORT = 200


def _compactXml(element):
    """An element of a force's XML on one line, without the whitespace between its tags."""
    import re
    import xml.etree.ElementTree as ElementTree
    return re.sub(r'>\s+<', '><', ElementTree.tostring(element, encoding='unicode').strip())


def _parsedXml(definition):
    """The root element of a force's XML, or None for a definition that is not XML."""
    import xml.etree.ElementTree as ElementTree
    if not definition.startswith('<'):
        return None
    try:
        return ElementTree.fromstring(definition)
    except ElementTree.ParseError:
        return None


def _functionParts(definition):
    """(expression line, {name: definition}) of a CVFunction's definition, or None for another."""
    import re
    lines = definition.split('\n')
    if not lines[0].startswith('CVFunction '):
        return None
    forces, name = {}, None
    for line in lines[1:]:
        match = re.match(r'([A-Za-z_][A-Za-z0-9_]*): (.*)\Z', line)
        if match and not line.startswith('<'):
            name = match.group(1)
            forces[name] = match.group(2)
        elif name is not None:
            forces[name] += '\n' + line
    return lines[0], forces


def _summary(definition):
    """A definition in a few words: 'a CustomTorsionForce', 'DistanceCV(0, 3)', "CVFunction 'cd - ca' of
    cd: a CoordinationForce, ..."."""
    root = _parsedXml(definition)
    if root is not None:
        return 'a %s' % root.get('type', root.tag)
    function = _functionParts(definition)
    if function is not None:
        return '%s of %s' % (function[0], ', '.join('%s: %s' % (name, _summary(d)) for name, d in function[1].items()))
    return definition


#: The attributes of a force's XML that do not change its CV: its force group and name (a variable's
#: force is evaluated inside the bias force, whatever its own group).
_FORCE_LABELS = re.compile(r'(<Force\b[^>]*?)\s(?:forceGroup|name)="[^"]*"')


def comparable(settings):
    """Settings as they are compared (setState(), walkers sharing a biasDir): the definitions of the CVs
    without the force group and name of their forces, which settings recorded before still hold."""
    if not isinstance(settings, dict) or not isinstance(settings.get('collectiveVariables'), list):
        return settings
    def strip(definition):
        if not isinstance(definition, str):
            return definition
        previous = None
        while previous != definition:
            previous, definition = definition, _FORCE_LABELS.sub(r'\1', definition)
        return definition
    return dict(settings, collectiveVariables=[strip(d) for d in settings['collectiveVariables']])


def differences(expected, got):
    """The keys where two settings dictionaries differ (as compared(): a force's group and name do not
    count): method and mode first, then the others sorted."""
    expected, got = comparable(expected), comparable(got)
    keys = sorted(set(expected) | set(got), key=lambda key: (key not in ('method', 'mode'), key != 'method', key))
    return [key for key in keys if expected.get(key) != got.get(key)]


def describeDifferences(expected, got, expectedName, gotName):
    """'key: <expectedName> value, <gotName> value; ...' for each differing key."""
    expected, got = comparable(expected), comparable(got)
    return '; '.join('collectiveVariables: ' + _forceDifferences(expected.get(key, []), got.get(key, []), expectedName,
                                                                gotName)
                     if key == 'collectiveVariables' else
                     '%s: %s %s, %s %s' % (key, expectedName, _shown(key, expected.get(key)), gotName,
                                           _shown(key, got.get(key)))
                     for key in differences(expected, got))


def checkState(owner, state, settings):
    """Check a getState() dictionary for setState(): a dict of this class and version, made with the
    same settings (method, mode, grid, CVs and the parameters of the method); ValueError naming both
    otherwise."""
    if not isinstance(state, dict) or 'settings' not in state or 'version' not in state:
        raise _error(owner, 'setState needs a dictionary returned by %s.getState(), got %s', owner, type(state).__name__)
    if state['version'] != STATE_VERSION:
        raise _error(owner, 'setState: the state has version %r, this version reads %d', state['version'], STATE_VERSION)
    if differences(state['settings'], settings):
        raise _error(owner, 'setState: the state is of another run than this object (%s); create the object with the '
                     'settings of the run that saved the state',
                     describeDifferences(state['settings'], settings, 'the state', 'this object'))


def stateValues(owner, state, converters):
    """The values of a getState() dictionary converted for setState(), before anything is changed:
    {key: converter(state[key])} for each key of ``converters``. A key that is missing, or a value that
    its converter refuses (another type or shape, a number that is not finite), is a ValueError naming
    the key and why, so that a damaged state changes nothing."""
    values = {}
    for key, converter in converters.items():
        if key not in state:
            raise _error(owner, 'setState: the state has no %r (a damaged dictionary of %s.getState()); nothing was '
                         'restored', key, owner)
        try:
            values[key] = converter(state[key])
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as error:
            raise _error(owner, 'setState: the state\'s %r cannot be restored (%s); nothing was restored', key,
                         error) from None
    return values


def number(value):
    """A finite float of a state (ValueError otherwise)."""
    result = float(value)
    if not np.isfinite(result):
        raise ValueError('%r is not finite' % (value,))
    return result


def integer(value):
    """An int of a state: an integer (not a float or a bool)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError('%r is not an integer' % (value,))
    return operator.index(value)


def boolean(value):
    """A bool of a state: True or False (a NumPy bool too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError('%r is not True or False' % (value,))
    return bool(value)


def tuples(width):
    """A converter of rows of ``width`` finite numbers, kept as they are (tuples)."""
    def convert(value):
        array((None, width))(value)
        return [tuple(row) for row in value]
    return convert


def array(shape, positive=False):
    """A converter to a float array of ``shape`` (None: any length; an empty list of rows is taken as
    shape (0, ...)), every value finite (and > 0 where ``positive``)."""
    def convert(value):
        result = np.array(value, dtype=float)
        if result.size == 0 and len(shape) > 1 and shape[0] is None:
            result = result.reshape((0,) + tuple(shape[1:]))
        if result.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, result.shape)):
            raise ValueError('shape %s, where this object needs (%s)' % (
                result.shape, ', '.join('n' if n is None else str(n) for n in shape) + (',' if len(shape) == 1 else '')))
        if not np.all(np.isfinite(result)) or (positive and not np.all(result > 0)):
            raise ValueError('values that are not %s' % ('positive and finite' if positive else 'finite'))
        return result
    return convert


def frames(dimensions):
    """A converter of recorded frames: (step, the CVs, two numbers) each."""
    def convert(value):
        result = []
        for step, cvs, first, second in value:
            cvs = [number(x) for x in cvs]
            if len(cvs) != dimensions:
                raise ValueError('a frame of %d CVs, where this object has %d variables' % (len(cvs), dimensions))
            result.append((integer(step), cvs, number(first), number(second)))
        return result
    return convert


def saveCheckpoint(sampler, simulation, file):
    """Write the Simulation's checkpoint (Context.createCheckpoint) and sampler.getState() to ``file``,
    a path (written to a temporary file and renamed, so an earlier checkpoint survives a failure) or
    an open binary file."""
    owner = type(sampler).__name__
    _simulation(owner, 'saveCheckpoint', simulation)
    path = isinstance(file, (str, os.PathLike))
    if path and (os.path.isdir(file) or not os.path.isdir(os.path.dirname(os.path.abspath(file)))):
        raise _error(owner, 'saveCheckpoint: file must be a path in an existing directory, got %r (%s)', os.fspath(file),
                     'a directory' if os.path.isdir(file) else '%s does not exist' % os.path.dirname(os.path.abspath(file)))
    if not path and (not hasattr(file, 'write') or isinstance(file, io.TextIOBase)):
        raise _error(owner, 'saveCheckpoint: file must be a path or a file open for binary writing, got %r', file)
    data = {'format': _CHECKPOINT_FORMAT, 'version': STATE_VERSION, 'context': simulation.context.createCheckpoint(),
            'state': sampler.getState()}
    if path:
        temporary = '%s.temp%d' % (os.fspath(file), os.getpid())
        try:
            with open(temporary, 'wb') as output:
                pickle.dump(data, output, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, file)
        finally:
            if os.path.exists(temporary):       # a failed write or rename leaves no temporary file behind
                os.remove(temporary)
    else:
        pickle.dump(data, file, protocol=pickle.HIGHEST_PROTOCOL)


def loadCheckpoint(owner, sampler, simulation, file):
    """Read a file of saveCheckpoint(): the Context's checkpoint into the Simulation (step count
    included) and the state into the sampler (setState, which uploads the bias to the Context). The
    state is checked first: a file whose state the sampler refuses leaves the Context as it was."""
    _simulation(owner, 'loadCheckpoint', simulation)
    name = os.fspath(file) if isinstance(file, (str, os.PathLike)) else getattr(file, 'name', repr(file))
    if not isinstance(file, (str, os.PathLike)) and (not hasattr(file, 'read') or isinstance(file, io.TextIOBase)):
        raise _error(owner, 'loadCheckpoint: file must be a path or a file open for binary reading, got %r', file)
    try:
        if isinstance(file, (str, os.PathLike)):
            with open(file, 'rb') as stream:
                data = pickle.load(stream)
        else:
            data = pickle.load(file)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, ValueError) as error:
        raise _error(owner, 'loadCheckpoint: %s is not a checkpoint of %s.saveCheckpoint (%s: %s)', name, owner,
                     type(error).__name__, error) from None
    if not isinstance(data, dict) or data.get('format') != _CHECKPOINT_FORMAT:
        raise _error(owner, 'loadCheckpoint: %s is not a checkpoint of %s.saveCheckpoint (a Simulation.saveCheckpoint '
                     'file holds the Context alone)', name, owner)
    sampler._stateValues(data.get('state'))     # a state that setState() refuses: the Context is left as it was
    try:
        simulation.context.loadCheckpoint(data['context'])
    except (openmm.OpenMMException, KeyError, TypeError) as error:
        raise _error(owner, 'loadCheckpoint: the Context checkpoint in %s cannot be loaded into this Simulation\'s '
                     'Context (%s: %s); create the System and Simulation as the run that saved it did', name,
                     type(error).__name__, error) from None
    simulation.currentStep = simulation.context.getStepCount()    # an attribute before OpenMM 8.1 made it a property
    sampler.setState(data['state'], simulation.context)


def checkDirectory(owner, biasDir, settings):
    """Compare ``settings`` (what makes the walkers' biases addable) with those recorded in biasDir,
    if any: ValueError naming both where they differ. Writes nothing (recordSettings() does)."""
    path = os.path.join(biasDir, SETTINGS_FILE % owner)
    if not os.path.exists(path):
        return
    try:
        with open(path) as stream:
            recorded = json.load(stream)
    except (OSError, ValueError) as error:
        raise _error(owner, 'biasDir holds %s, which cannot be read (%s: %s); it records the settings of the walkers '
                     'that share the directory', path, type(error).__name__, error) from None
    if not isinstance(recorded, dict):
        raise _error(owner, 'biasDir holds %s, which cannot be read (a JSON %s, not the object of settings that it '
                     'records for the walkers that share the directory)', path, type(recorded).__name__)
    ours = json.loads(json.dumps(settings))
    if differences(recorded, ours):
        raise _error(owner, 'biasDir %s was written by walkers with other settings (%s), whose biases cannot be added '
                     'to this one\'s; use another biasDir', biasDir,
                     describeDifferences(recorded, ours, 'the directory', 'this run'))


def recordSettings(owner, biasDir, settings):
    """Record ``settings`` in biasDir (settings_<owner>.json) unless a walker has already, then compare
    them with the file's (another walker may have created it meanwhile). The file is created once,
    by a link that fails if it exists."""
    path = os.path.join(biasDir, SETTINGS_FILE % owner)
    if not os.path.exists(path):
        temporary = os.path.join(biasDir, 'temp_settings_%d.json' % os.getpid())
        with open(temporary, 'w') as output:
            json.dump(settings, output, indent=1, sort_keys=True)
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:               # a file system without hard links: a rename (the last writer wins)
            os.replace(temporary, path)
        if os.path.exists(temporary):
            os.remove(temporary)
    checkDirectory(owner, biasDir, settings)


def _whyUnreadable(path, error):
    """Why NumPy could not read a file: not a .npy file at all (NumPy then speaks of pickled data), or
    NumPy's own reason."""
    try:
        with open(path, 'rb') as stream:
            start = stream.read(6)
    except OSError as openError:
        return '%s: %s' % (type(openError).__name__, openError)
    if start != b'\x93NUMPY':
        return 'not a .npy file: it starts with %r, not the .npy magic string' % start
    return '%s: %s' % (type(error).__name__, error)


class WalkerFiles(object):
    """The other walkers' files read from biasDir, with their failures: a file that cannot be read at
    construction is a ValueError naming it and why; later, a file that cannot be read is retried at
    the next exchange, and if that same file still cannot be read then, a RuntimeWarning names it."""

    def __init__(self, owner):
        self.owner = owner
        self.failed = {}          # path -> why: the files that could not be read at this exchange
        self.previous = {}        # the same at the exchange before
        self.warned = set()

    def load(self, path, strict):
        """The array in the file, or None where it cannot be read (removed by its writer meanwhile, or
        damaged: ValueError when strict, a warning at the second exchange in a row otherwise)."""
        try:
            data = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None           # replaced by a newer file of its writer: read that one next time
        except (OSError, ValueError, EOFError) as error:
            return self._failed(path, 'which cannot be read as a NumPy array', _whyUnreadable(path, error), strict)
        # a walker whose run blew up, or a damaged file: its values would make the table (and this run) NaN
        if data.dtype.kind not in 'iuf':
            return self._failed(path, 'which is not an array of numbers', 'dtype %s' % data.dtype, strict)
        if not np.all(np.isfinite(data)):
            return self._failed(path, 'which holds values that are not finite',
                                '%d of %d' % (np.count_nonzero(~np.isfinite(data)), data.size), strict)
        return data

    def _failed(self, path, what, why, strict):
        """A file that cannot be used: ValueError when strict, else None (and a warning at the second
        exchange in a row)."""
        if strict:
            raise _error(self.owner, 'biasDir holds %s, %s (%s); remove it or use another biasDir', path, what, why)
        if path in self.previous and path not in self.warned:
            self.warned.add(path)
            warnings.warn('%s: the walker file %s could not be read at two exchanges in a row (%s, %s); its biases '
                          'are left out until it can be read' % (self.owner, path, what[len('which '):], why),
                          RuntimeWarning)
        self.failed[path] = why
        return None

    def startExchange(self):
        """Call before each exchange's loads."""
        self.previous, self.failed = self.failed, {}
