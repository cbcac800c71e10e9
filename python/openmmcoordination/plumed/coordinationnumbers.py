"""COORDINATIONNUMBER and MOMENTS for openmmcoordination.plumed: per-atom coordination numbers
(CoordinationForce.setParticleFunction) and their components.

``c: COORDINATIONNUMBER SPECIES=... | SPECIESA=... SPECIESB=...`` with SWITCH={...} (or R_0 NN MM
D_0 D_MAX) is the vector of the c_i; its functions are components, each a CoordinationForce of its
own: SUM (c.sum), MEAN (c.mean), MORE_THAN={RATIONAL ...} (c.morethan), LESS_THAN (c.lessthan),
BETWEEN={GAUSSIAN LOWER UPPER SMEAR} (c.between), MIN={BETA} (c.min), MAX={BETA} (c.max), LOWEST
(c.lowest), HIGHEST (c.highest), MOMENTS=2-3 (c.moment-2, c.moment-3); numbered forms (LESS_THAN1,
...) give c.lessthan-1, .... As in PLUMED 2.10 each is an action of its own, named c_mean, ...
(the name its files print); c.mean is read as c_mean. ``m: MOMENTS ARG=c POWERS=...`` gives
m.moment-k. PRINT ARG=c prints
c.1 ... c.N (each c_i a CoordinationForce of its own: two groups, [a_i] and the neighbours, SUM).

A component name (c.mean) is not a Lepton variable: it is a Value of kind 'function' whose
expression is a hidden CV, _c_mean, the CoordinationForce.
"""

import copy
import re

from openmmcoordination.coordination import CoordinationForce
from openmmcoordination.plumed.cvs import Calls, _shown, applySwitch, readAtoms, readSwitch, usesImages
from openmmcoordination.plumed.syntax import Action, Value


def _function(*args):
    from openmmcoordination.plumed.biases import _function as function     # biases imports this module's users
    return function(*args)

__all__ = ['readCoordinationNumber', 'readMoments', 'readVectorFunction', 'readVectorSum']

#: The keywords of the functions and the names of their components.
_FUNCTIONS = (('SUM', 'sum', 'Sum'), ('MEAN', 'mean', 'Mean'), ('LOWEST', 'lowest', 'Lowest'),
              ('HIGHEST', 'highest', 'Highest'))
_SWITCHED = (('MORE_THAN', 'morethan', 'MoreThan'), ('LESS_THAN', 'lessthan', 'LessThan'),
             ('BETWEEN', 'between', 'Between'), ('MIN', 'min', 'Min'), ('MAX', 'max', 'Max'))


def _hidden(name):
    """The Lepton-safe name of the CV behind a component."""
    return '_' + re.sub(r'[^A-Za-z0-9_]', '_', name.replace('-', 'm'))


def _inner(action, key, text):
    """The keywords of {TYPE K=V ...} as an Action of their own, and the type."""
    tokens = text.split()
    inner = Action(action.source, action.line, '%s: %s={%s}' % (action.name, key, tokens[0] if tokens else ''), None, {}, text)
    for token in tokens[1:]:
        name, equals, value = token.partition('=')
        inner.keywords[name] = value if equals else True
    return (tokens[0] if tokens else ''), inner


def _configure(action, key, calls, function, text):
    """The setters of one function (its keyword's {...} read)."""
    calls(key, 'setParticleFunction', getattr(CoordinationForce, function), shown='CoordinationForce.' + function)
    if function in ('MoreThan', 'LessThan'):
        type, inner = _inner(action, key, text)
        if type != 'RATIONAL':
            raise action.fail(key, 'only RATIONAL is read for the threshold of a coordination number, got %r', type)
        r0 = inner.number('R_0')
        if r0 is None:
            raise inner.fail('R_0', 'is required')
        dmax = inner.number('D_MAX', float('inf'))
        if inner.flag('NOSTRETCH') and dmax != float('inf'):
            raise inner.fail('NOSTRETCH', 'not supported for the threshold (it is stretched to 0 at D_MAX)')
        d0, nn, mm = inner.number('D_0', 0.0), inner.integer('NN', 6), inner.integer('MM', 0)
        inner.finish()
        calls(key, 'setThreshold', r0, d0, nn, mm, dmax)
    elif function == 'Between':
        type, inner = _inner(action, key, text)
        if type != 'GAUSSIAN':
            raise action.fail(key, 'only GAUSSIAN is read for BETWEEN, got %r', type)
        lower, upper = inner.number('LOWER'), inner.number('UPPER')
        if lower is None or upper is None:
            raise inner.fail('LOWER' if lower is None else 'UPPER', 'is required')
        smear = inner.number('SMEAR', 0.5)
        inner.finish()
        calls(key, 'setBetweenBounds', lower, upper, smear)
    elif function in ('Min', 'Max'):
        _, inner = _inner(action, key, 'X ' + text)       # {BETA=...} has no type
        beta = inner.number('BETA')
        if beta is None:
            raise inner.fail('BETA', 'is required')
        inner.finish()
        calls(key, 'setFunctionBeta', beta)


def _component(plumed, action, label, base, baseName, name, setup, separator='_'):
    """{component: Value (function), hidden: Value (coordination)} for one component: a copy of
    ``base`` (named ``baseName`` in the printed Python) that ``setup(calls)`` configures. PLUMED
    2.10 makes each function of a COORDINATIONNUMBER an action of its own, labelled label_name (its
    files print that name; label.name is read as it), and MOMENTS' values components, label.name."""
    hidden = _hidden(label + '.' + name)
    force = copy.deepcopy(base)
    calls = Calls(action, hidden, force, 'copy.deepcopy(%s)' % baseName)
    setup(calls)
    cv = Value(action, 'coordination', force, hidden=True)
    return {hidden: cv, label + separator + name: _function(action, hidden, [hidden], [cv], ('_a0', ['_a0']), hidden[1:])}


def _powers(action, key, text):
    """MOMENTS=2-3 or 2,3: the powers (each at least 2)."""
    powers = []
    for item in text.split(','):
        first, dash, last = item.partition('-')
        values = range(action.toInteger(key, first), action.toInteger(key, last) + 1) if dash else [action.toInteger(key, first)]
        powers += list(values)
    if not powers or min(powers) < 2:
        raise action.fail(key, 'powers must be at least 2 (PLUMED refuses the first central moment), got %s', text)
    return powers


def readCoordinationNumber(plumed, action):
    """COORDINATIONNUMBER, or COORDINATION_MOMENTS (R_POWER=k: each pair's term s(r) r^k): {label or
    component: Value}."""
    if action.label is None:
        raise action.fail('LABEL', '%s needs a label (its values are label.mean, ...)', action.name)
    label = action.label
    if action.has('SPECIES') == (action.has('SPECIESA') or action.has('SPECIESB')):
        raise action.fail('SPECIES', 'give SPECIES, or SPECIESA and SPECIESB')
    if action.has('SPECIES'):
        groupA, groupB = readAtoms(plumed, action, 'SPECIES'), None
    else:
        groupA, groupB = readAtoms(plumed, action, 'SPECIESA'), readAtoms(plumed, action, 'SPECIESB')
    for group, key in ((groupA, 'SPECIES' if groupB is None else 'SPECIESA'), (groupB, 'SPECIESB')):
        if group is not None and len(set(group)) != len(group):
            raise action.fail(key, 'names an atom more than once: not read')
    switch = readSwitch(action, plumed.units)
    nopbc = action.flag('NOPBC')
    if action.flag('LOWMEM'):
        # inputs written for PLUMED 2.x before 2.10 often carry it; 2.10 accepts it with a warning
        action.log.append('LOWMEM accepted: it does nothing (PLUMED 2.10 keeps it "only to ensure back-compatibility")')
    base = CoordinationForce(groupA) if groupB is None else CoordinationForce(groupA, groupB)
    calls = Calls(action, label, base, 'CoordinationForce(%s)' % ', '.join(_shown(g) for g in (groupA, groupB) if g is not None))
    applySwitch(calls, switch, 'SWITCH' if action.has('SWITCH') else 'R_0')
    calls('NOPBC' if nopbc else None, 'setUsesPeriodicBoundaryConditions', usesImages(plumed, action, nopbc))
    if action.name == 'COORDINATION_MOMENTS':
        power = action.toNumber('R_POWER', action.required('R_POWER'))
        if power != 0 and plumed.units.length != 1.0:
            # PLUMED raises r to R_POWER in the input's length unit; the force's r is in nm, and a factor of
            # the unit^R_POWER on each c_i would not carry through MORE_THAN, MIN, ... of them
            raise action.fail('R_POWER', 'with UNITS LENGTH=%s: PLUMED takes r^%s in %s, the force in nm; only read in nm',
                              plumed.units.lengthName, action.keywords['R_POWER'], plumed.units.lengthName)
        calls('R_POWER', 'setDistancePower', power)
    values = {}
    for key, name, function in _FUNCTIONS:
        if action.flag(key):
            values.update(_component(plumed, action, label, base, label, name, lambda c, k=key, f=function: _configure(action, k, c, f, '')))
    for key, name, function in _SWITCHED:
        numbered = sorted((k for k in action.keywords if re.fullmatch(key + r'\d+', k)), key=lambda k: int(k[len(key):]))
        if action.has(key):
            text = action.take(key)
            values.update(_component(plumed, action, label, base, label, name,
                                     lambda c, k=key, f=function, t=text: _configure(action, k, c, f, t)))
        for k in numbered:
            text = action.take(k)
            values.update(_component(plumed, action, label, base, label, '%s-%s' % (name, k[len(key):]),
                                     lambda c, k=k, f=function, t=text: _configure(action, k, c, f, t)))
    if action.has('MOMENTS'):
        for power in _powers(action, 'MOMENTS', action.take('MOMENTS')):
            values.update(_component(plumed, action, label, base, label, 'moment-%d' % power, lambda c, p=power: (
                c('MOMENTS', 'setParticleFunction', CoordinationForce.Moment, shown='CoordinationForce.Moment'),
                c('MOMENTS', 'setMomentPower', p))))
    action.finish()
    # The vector itself: c.1 ... c.N for PRINT, each c_i a force of its own (two groups, SUM).
    neighbours = groupA if groupB is None else groupB
    elements = []
    for k, atom in enumerate(groupA):
        force = copy.deepcopy(base)
        force.setGroups([atom], neighbours)
        force.setParticleFunction(CoordinationForce.Sum)
        hidden = _hidden('%s.%d' % (label, k + 1))
        cv = Value(action, 'coordination', force, hidden=True)
        values[hidden] = cv
        values['%s.%d' % (label, k + 1)] = _function(action, hidden, [hidden], [cv], ('_a0', ['_a0']), hidden[1:])
        elements.append('%s.%d' % (label, k + 1))
    action.python.append('# %s.1 ... %s.%d: the c_i, each a copy of %s with setGroups([a_i], neighbours) and Sum'
                         % (label, label, len(groupA), label))
    values[label] = Value(action, 'vector', base, elements=elements, groupA=groupA, groupB=groupB)
    return values


def readMoments(plumed, action):
    """MOMENTS ARG=<a COORDINATIONNUMBER> POWERS=...: {label.moment-k: Value}."""
    if action.label is None:
        raise action.fail('LABEL', 'MOMENTS needs a label (its values are label.moment-k)')
    args = action.strings('ARG')
    if args is None or len(args) != 1 or args[0] not in plumed.values or plumed.values[args[0]].kind != 'vector':
        raise action.fail('ARG', 'only one argument, a COORDINATIONNUMBER above, is read, got %s', args)
    source = plumed.values[args[0]]
    values = {}
    for power in _powers(action, 'POWERS', action.required('POWERS')):
        values.update(_component(plumed, action, action.label, source.obj, args[0], 'moment-%d' % power, lambda c, p=power: (
            c('POWERS', 'setParticleFunction', CoordinationForce.Moment, shown='CoordinationForce.Moment'),
            c('POWERS', 'setMomentPower', p)), separator='.'))
    action.finish()
    values[action.label] = Value(action, 'moments', None, components=[name for name in values if not name.startswith('_')])
    return values


def _vectorArgument(plumed, action, kinds=('vector',)):
    """The one argument of an action on a COORDINATIONNUMBER (or on MORE_THAN ... of one): its Value."""
    args = action.strings('ARG')
    if args is None or len(args) != 1 or args[0] not in plumed.values or plumed.values[args[0]].kind not in kinds:
        raise action.fail('ARG', 'only one argument, a COORDINATIONNUMBER above%s, is read, got %s',
                          '' if kinds == ('vector',) else ' or MORE_THAN, LESS_THAN, BETWEEN of one', args)
    return args[0], plumed.values[args[0]]


class _Check(object):
    """Calls' interface without the printed Python: applies the setters to a scratch force."""

    def __init__(self, action, force):
        self.calls = Calls(action, '_', force, '')
        self.action = action
        action.python.pop()

    def __call__(self, *args, **kwargs):
        count = len(self.action.python)
        self.calls(*args, **kwargs)
        del self.action.python[count:]


def readVectorFunction(plumed, action):
    """MORE_THAN, LESS_THAN or BETWEEN ARG=<a COORDINATIONNUMBER>, with SWITCH={...} (or R_0 NN MM D_0
    D_MAX; BETWEEN: LOWER UPPER SMEAR): the function of each c_i, a vector that SUM or MEAN reduce
    (a Value of kind 'transformed')."""
    name, source = _vectorArgument(plumed, action)
    function = {'MORE_THAN': 'MoreThan', 'LESS_THAN': 'LessThan', 'BETWEEN': 'Between'}[action.name]
    text = action.take('SWITCH')
    if text is None and function == 'Between':
        lower, upper = action.required('LOWER'), action.required('UPPER')
        text = 'GAUSSIAN LOWER=%s UPPER=%s SMEAR=%s' % (lower, upper, action.take('SMEAR', '0.5'))
    elif text is None:
        # PLUMED's short syntax: RATIONAL with its automatic D_MAX, stretched
        r0 = action.number('R_0')
        if r0 is None:
            raise action.fail('R_0', 'is required (or SWITCH={...})')
        d0, nn, mm = action.number('D_0', 0.0), action.integer('NN', 6), action.integer('MM', 0)
        dmax = d0 + r0*1e-5**(1.0/(nn - (mm or 2*nn)))
        text = 'RATIONAL R_0=%r D_0=%r NN=%d MM=%d D_MAX=%r' % (r0, d0, nn, mm, dmax)
    if action.flag('SQUARED'):
        raise action.fail('SQUARED', 'not supported')
    action.finish()
    _configure(action, 'SWITCH', _Check(action, copy.deepcopy(source.obj)), function, text)   # refused here, not at its SUM
    action.python.append('# %s of the c_i of %s: a particle function, built by the SUM or MEAN of it' % (action.name, name))
    return Value(action, 'transformed', None, source=source, sourceName=name, function=function, text=text)


def readVectorSum(plumed, action):
    """SUM or MEAN ARG= PERIODIC=NO of a COORDINATIONNUMBER (Sum, Mean) or of MORE_THAN, LESS_THAN,
    BETWEEN of one (that function, divided by N for MEAN): {label: Value, hidden: Value}."""
    if action.label is None:
        raise action.fail('LABEL', '%s needs a label', action.name)
    name, value = _vectorArgument(plumed, action, ('vector', 'transformed'))
    periodic = action.required('PERIODIC')
    if periodic != 'NO':
        raise action.fail('PERIODIC', 'only PERIODIC=NO: a coordination number is not periodic, got %r', periodic)
    action.finish()
    source = value if value.kind == 'vector' else value.source
    sourceName = name if value.kind == 'vector' else value.sourceName
    if value.kind == 'vector':
        function = 'Sum' if action.name == 'SUM' else 'Mean'
        setup = lambda c: _configure(action, 'ARG', c, function, '')
    else:
        setup = lambda c: _configure(value.action, value.action.name, c, value.function, value.text)
    hidden = _hidden(action.label)
    force = copy.deepcopy(source.obj)
    setup(Calls(action, hidden, force, 'copy.deepcopy(%s)' % sourceName))
    cv = Value(action, 'coordination', force, hidden=True)
    expression = hidden if value.kind == 'vector' or action.name == 'SUM' else '%s/%d' % (hidden, len(source.groupA))
    local = '_a0' if value.kind == 'vector' or action.name == 'SUM' else '_a0/%d' % len(source.groupA)
    return {hidden: cv, action.label: _function(action, expression, [hidden], [cv], (local, ['_a0']))}
