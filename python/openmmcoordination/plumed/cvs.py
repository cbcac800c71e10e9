"""The actions of a PLUMED input that define atoms and collective variables, for
openmmcoordination.plumed: GROUP, COORDINATION, CONTACTMAP and DISTANCE, with atom lists and
switching functions (SWITCH={...} of every type, and COORDINATION's short syntax).

Each reader takes the PlumedInput being built and an Action, builds what the action becomes with
the API (through Calls, which records each call as the Python that the `plumed check` command
prints), and refuses with a PlumedInputError whatever it cannot reproduce exactly.
"""

import math
import os
import re

import openmm

from openmmcoordination.coordination import CoordinationForce
from openmmcoordination.plumed.expressions import Expression, substitute, withConstants
from openmmcoordination.plumed.syntax import Action, readIndexFile

__all__ = ['Calls', 'indicesText', 'readGroup', 'readAtoms', 'readCoordination', 'readContactMap', 'readDistance']

#: The switching types of SWITCH={TYPE ...} and their CoordinationForce constants (each type reads
#: R_0, D_0, D_MAX and NOSTRETCH; RATIONAL also NN, MM; SMAP A, B; CUSTOM FUNC; Q BETA, LAMBDA, REF).
SWITCH_TYPES = {'RATIONAL': 'Rational', 'EXP': 'Exp', 'GAUSSIAN': 'Gaussian', 'SMAP': 'Smap', 'CUBIC': 'Cubic',
                'TANH': 'Tanh', 'COSINUS': 'Cosinus', 'CUSTOM': 'Custom', 'Q': 'Q'}
_DEFAULT_DMAX = 'default'


def _shown(value):
    """A value as the printed Python shows it."""
    if isinstance(value, float):
        return 'math.inf' if value == math.inf else repr(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) for v in value):
        return indicesText(value)
    return repr(value)


def indicesText(indices):
    """A list of particle indices as Python: the list itself when short, a range() for an arithmetic
    progression, else the ends and the count."""
    indices = list(indices)
    if len(indices) <= 6:
        return repr(indices)
    step = indices[1] - indices[0]
    if step > 0 and all(b - a == step for a, b in zip(indices, indices[1:])):
        return 'list(range(%d, %d%s))' % (indices[0], indices[-1] + 1, '' if step == 1 else ', %d' % step)
    return '[%d, %d, %d, ..., %d]  # %d particles' % (indices[0], indices[1], indices[2], indices[-1], len(indices))


class Calls(object):
    """Calls methods of an object built for an action and records them as Python (action.python);
    an exception of the API becomes a PlumedInputError naming the action and the keyword."""

    def __init__(self, action, name, obj, constructor):
        self.action, self.name, self.obj = action, name, obj
        action.python.append('%s = %s' % (name, constructor))

    def __call__(self, keyword, method, *args, shown=None):
        try:
            getattr(self.obj, method)(*args)
        except (openmm.OpenMMException, ValueError, TypeError) as error:
            raise self.action.fail(keyword, str(error).strip()) from None
        self.action.python.append('%s.%s(%s)' % (self.name, method, shown or ', '.join(_shown(a) for a in args)))


def readGroup(plumed, action):
    """GROUP ATOMS=... or NDX_FILE=... [NDX_GROUP=...] [REMOVE=...] [SORT] [UNIQUE]: a list of particle
    indices (0-based)."""
    if action.has('ATOMS') == action.has('NDX_FILE'):
        raise action.fail('ATOMS', 'give either ATOMS or NDX_FILE')
    if action.has('ATOMS'):
        atoms = readAtoms(plumed, action, 'ATOMS')
    else:
        path = action.take('NDX_FILE')
        path = path if os.path.isabs(path) else os.path.join(plumed.directory, path)
        groups = readIndexFile(path, lambda message, *args: action.fail('NDX_FILE', message, *args))
        name = action.take('NDX_GROUP', next(iter(groups), None))
        if name not in groups:
            raise action.fail('NDX_GROUP', 'no group %r in %s (it has %s)', name, path, ', '.join(groups) or 'none')
        atoms = _checkedAtoms(plumed, action, 'NDX_GROUP', groups[name])
    remove = readAtoms(plumed, action, 'REMOVE', required=False)
    if remove is not None:                       # PLUMED's order (src/core/Group.cpp): REMOVE, SORT, UNIQUE
        missing = []
        for atom in remove:
            if atom in atoms:
                atoms.remove(atom)               # the first occurrence, as PLUMED
            else:
                missing.append(atom + 1)
        action.log.append('REMOVE: %d atoms removed%s' % (len(remove) - len(missing), '' if not missing else
                          '; not in the list, as PLUMED notes: %s' % ', '.join(map(str, missing))))
    if action.flag('SORT'):
        atoms = sorted(atoms)
    if action.flag('UNIQUE'):
        atoms = sorted(set(atoms))
    action.finish()
    action.python.append('%s = %s' % (action.label or 'group', indicesText(atoms)))
    return atoms


def _checkedAtoms(plumed, action, key, numbers):
    """0-based indices of PLUMED's 1-based atom numbers, checked against the System's particles."""
    for number in numbers:
        if number < 1:
            raise action.fail(key, 'atom %d: PLUMED\'s atom numbers start at 1', number)
        if plumed.numAtoms is not None and number > plumed.numAtoms:
            raise action.fail(key, 'atom %d is beyond the %d particles of the %s', number, plumed.numAtoms,
                              plumed.atomSource)
    return [number - 1 for number in numbers]


def readAtoms(plumed, action, key, required=True):
    """The atom list of a keyword (numbers, a-b, a-b:stride and group labels) as 0-based indices."""
    items = action.strings(key)
    if items is None:
        if required:
            raise action.fail(key, 'is required')
        return None
    numbers = []
    for item in items:
        match = re.match(r'(\d+)-(\d+)(?::(\d+))?$', item)
        if re.match(r'\d+$', item):
            numbers.append(int(item))
        elif match:
            first, last, stride = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
            if last < first or stride < 1:
                raise action.fail(key, '%r: a range must go up, with a positive stride', item)
            numbers.extend(range(first, last + 1, stride))
        elif item in plumed.groups:
            numbers.extend(i + 1 for i in plumed.groups[item])
        elif item in plumed.values:
            raise action.fail(key, '%r is a %s, not a GROUP', item, plumed.values[item].action.name)
        else:
            raise action.fail(key, '%r is not an atom number, a range or the label of a GROUP above', item)
    return _checkedAtoms(plumed, action, key, numbers)


class Switch(object):
    """A switching function as read: ``type`` (a SWITCH_TYPES key), lengths in nm (``r0``, ``d0``,
    ``dmax``: None for no cutoff, 'default' for the short syntax's automatic one, ``ref`` for Q),
    ``nn``, ``mm``, ``a``, ``b``, ``func``, ``beta`` (1/nm), ``lam``, ``stretch``."""

    def __init__(self, type, **values):
        self.type, self.r0, self.d0, self.dmax, self.stretch = type, None, 0.0, None, True
        self.nn, self.mm, self.a, self.b, self.func, self.beta, self.lam, self.ref = 6, 0, None, None, None, None, None, None
        self.__dict__.update(values)

    def shape(self):
        """Everything but the reference distance (r0, or REF of Q): what the pairs of one force share."""
        return {k: v for k, v in vars(self).items() if k not in ('r0', 'ref')}

    def distance(self):
        """The pair's reference distance: REF for Q, else R_0."""
        return self.ref if self.type == 'Q' else self.r0


def readSwitch(action, units, key='SWITCH', short=True):
    """The Switch of SWITCH={...} (or SWITCHn), or of COORDINATION's short syntax (R_0 NN MM D_0
    D_MAX) where ``short`` and there is no SWITCH; None when neither is given."""
    length = units.length
    text = action.take(key)
    if text is None:
        if not short:
            return None
        r0 = action.number('R_0', scale=length)
        if r0 is None:
            raise action.fail('R_0', 'is required (or SWITCH={...})')
        dmax = action.number('D_MAX', scale=length)
        return Switch('RATIONAL', r0=r0, d0=action.number('D_0', 0.0, length), nn=action.integer('NN', 6),
                      mm=action.integer('MM', 0), dmax=_DEFAULT_DMAX if dmax is None else dmax)
    for shortKey in ('R_0', 'D_0', 'NN', 'MM', 'D_MAX'):
        if short and action.has(shortKey):
            raise action.fail(shortKey, 'given with %s: give the switching function one way', key)
    tokens = text.split()
    if tokens and tokens[0] == 'MATHEVAL':
        tokens[0] = 'CUSTOM'       # PLUMED's older name for CUSTOM (src/tools/SwitchingFunction.cpp)
        action.log.append('%s: MATHEVAL, PLUMED\'s older name of CUSTOM, read as CUSTOM' % key)
    if not tokens or tokens[0] not in SWITCH_TYPES:
        raise action.fail(key, 'the type %r is not one of %s (or MATHEVAL)', tokens[0] if tokens else '', ', '.join(SWITCH_TYPES))
    inner = Action(action.source, action.line, '%s: %s={%s}' % (action.name, key, tokens[0]), None, {}, text)
    for token in tokens[1:]:
        name, equals, value = token.partition('=')
        if name in inner.keywords:
            raise inner.fail(name, 'given twice')
        inner.keywords[name] = value if equals else True
    type = tokens[0]
    values = {k: inner.number(name, scale=length) for k, name in (('r0', 'R_0'), ('d0', 'D_0'), ('dmax', 'D_MAX'))}
    values['d0'] = values['d0'] or 0.0
    values['stretch'] = not inner.flag('NOSTRETCH')
    if type == 'RATIONAL':
        values.update(nn=inner.integer('NN', 6), mm=inner.integer('MM', 0))
    elif type == 'SMAP':
        values.update(a=inner.number('A'), b=inner.number('B'))
        if values['a'] is None or values['b'] is None:
            raise inner.fail('A' if values['a'] is None else 'B', 'is required for SMAP')
        for name in ('A', 'B'):
            if not values[name.lower()].is_integer():
                raise inner.fail(name, 'must be an integer: PLUMED reads A and B of SMAP as integers, got %s',
                                 inner.keywords[name])
    elif type == 'CUSTOM':
        values['func'] = _customFunction(action, inner, key, values['d0'])
    elif type == 'Q':
        beta = inner.number('BETA', scale=1.0/length)   # PLUMED's default is 50 per length unit of the input
        values.update(beta=50.0/length if beta is None else beta, lam=inner.number('LAMBDA', 1.8),
                      ref=inner.number('REF', scale=length))
        if values['ref'] is None:
            raise inner.fail('REF', 'is required for Q (the native distance)')
        if values['r0'] is not None:
            action.log.append('%s: R_0 of Q is not used (the native distance is REF)' % key)
    if type == 'CUBIC':
        if values['dmax'] is None:
            raise inner.fail('D_MAX', 'is required for CUBIC')
        if values['r0'] is not None:
            action.log.append('%s: R_0 of CUBIC is not used (its length is D_MAX - D_0)' % key)
    elif type != 'Q' and values['r0'] is None:
        raise inner.fail('R_0', 'is required for %s', type)
    inner.finish()
    return Switch(type, **values)


def _customFunction(action, inner, key, d0):
    """FUNC of a CUSTOM switching function as the force takes it, a Lepton expression of x: PLUMED's
    Lepton constants (pi, e, ...) written as numbers, and x2 (PLUMED's x*x, which spares the square
    root) written as x*x, where PLUMED takes it (d0 = 0; PLUMED refuses x2 with D_0)."""
    func = inner.take('FUNC')
    if func is None:
        raise inner.fail('FUNC', 'is required for CUSTOM')
    func, constants = withConstants(func)
    if constants:
        action.log.append('%s: FUNC: %s, constants of PLUMED\'s Lepton, written as numbers for OpenMM\'s'
                          % (key, ', '.join(constants)))
    names = set(re.findall(r'(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()', func))
    if 'x2' in names:
        if 'x' in names:
            raise inner.fail('FUNC', '%r uses both x and x2: PLUMED refuses that (one variable, x or x2)', func)
        if d0 != 0.0:
            raise inner.fail('FUNC', 'x2 with D_0: PLUMED refuses it (x2 is r^2/r0^2, without d0)')
        try:
            atZero = Expression(func, ['x2']).evaluate({'x2': 0.0})
        except ValueError as error:
            raise inner.fail('FUNC', str(error)) from None
        if atZero != 1.0:
            raise inner.fail('FUNC', '%r is %r at x2 = 0: PLUMED evaluates a function of x2 at r = 0 where it takes 1 '
                             'for a function of x; only functions that are 1 there are read', func, atZero)
        func = substitute(func, {'x2': 'x*x'})
        action.log.append('%s: FUNC of x2 (PLUMED\'s x*x) written with x*x' % key)
    return func


def applySwitch(calls, switch, key, perPair=False):
    """The setters of a Switch on a CoordinationForce (r0 left out where ``perPair``)."""
    name = SWITCH_TYPES[switch.type]
    if switch.type != 'RATIONAL':
        calls(key, 'setSwitchingFunction', getattr(CoordinationForce, name), shown='CoordinationForce.' + name)
    if switch.type not in ('CUBIC', 'Q') and not perPair:
        calls(key, 'setR0', switch.r0)
    if switch.type == 'Q':
        if not perPair:
            calls(key, 'setR0', switch.ref)
        calls(key, 'setBeta', switch.beta)
        calls(key, 'setLambda', switch.lam)
    if switch.d0 != 0.0:
        calls(key, 'setD0', switch.d0)
    if switch.type == 'RATIONAL':
        if switch.nn != 6:
            calls(key, 'setN', switch.nn)
        if switch.mm != 0:
            calls(key, 'setM', switch.mm)
    elif switch.type == 'SMAP':
        calls(key, 'setA', switch.a)
        calls(key, 'setB', switch.b)
    elif switch.type == 'CUSTOM':
        calls(key, 'setCustomExpression', switch.func)
    if switch.dmax is None and switch.type == 'RATIONAL':
        calls(key, 'setDMax', math.inf)           # SWITCH={RATIONAL ...} without D_MAX has no cutoff
    elif switch.dmax not in (None, _DEFAULT_DMAX):
        calls(key, 'setDMax', switch.dmax)
    if not switch.stretch:
        calls(key, 'setStretch', False)


def _neighbourList(action, force, units):
    """NLIST, NL_CUTOFF and NL_STRIDE: accepted, replaced by the force's own cutoff (logged), where
    NL_CUTOFF reaches the distance beyond which the switching function is 0. PLUMED counts only the
    pairs of its list, those within NL_CUTOFF: a shorter NL_CUTOFF drops the pairs between it and that
    distance (a different number), and is refused."""
    if action.flag('NLIST'):
        for key in ('NL_CUTOFF', 'NL_STRIDE'):
            if action.take(key) is None:
                raise action.fail(key, 'is required with NLIST (PLUMED refuses NLIST without it)')
        cutoff, stride = action.keywords['NL_CUTOFF'], action.integer('NL_STRIDE')
        if stride < 1:
            raise action.fail('NL_STRIDE', 'must be a positive integer, got %d', stride)
        dmax = force.getDMax().value_in_unit(openmm.unit.nanometer)
        _checkNeighbourListCutoff(action, force, action.number('NL_CUTOFF', scale=units.length), dmax, units)
        action.log.append('NLIST (NL_CUTOFF=%s, NL_STRIDE=%s) replaced by the force\'s own cutoff, dmax = %s nm: the '
                          'pairs within it are found every step (on CUDA by lists rebuilt when a particle has moved)'
                          % (cutoff, stride, '%.6g' % dmax if math.isfinite(dmax) else 'none (inf)'))
    else:
        for key in ('NL_CUTOFF', 'NL_STRIDE'):
            if action.has(key):
                raise action.fail(key, 'given without NLIST')


def _checkNeighbourListCutoff(action, force, cutoff, dmax, units):
    """Refuse an NL_CUTOFF (nm) short of where the switching function reaches 0: dmax, or d0 + r0 for
    COSINUS, which is 0 beyond it."""
    nanometer = openmm.unit.nanometer
    zero = dmax
    if force.getSwitchingFunction() == CoordinationForce.Cosinus:
        zero = min(dmax, force.getD0().value_in_unit(nanometer) + force.getR0().value_in_unit(nanometer))
    if cutoff >= zero:
        return
    if not math.isfinite(zero):
        raise action.fail('NL_CUTOFF', '%s with a switching function that has no cutoff (no D_MAX): PLUMED counts only '
                          'the pairs within NL_CUTOFF, not those beyond it; give the switching function a D_MAX within '
                          'NL_CUTOFF', action.keywords['NL_CUTOFF'])
    raise action.fail('NL_CUTOFF', '%s is shorter than the distance where the switching function reaches 0, %.10g %s: '
                      'PLUMED counts only the pairs within NL_CUTOFF, not those beyond it that the switching function '
                      'still counts; give an NL_CUTOFF of at least that, or a D_MAX within NL_CUTOFF',
                      action.keywords['NL_CUTOFF'], zero/units.length, units.lengthName)


def _numericalDerivatives(action):
    """NUMERICAL_DERIVATIVES: accepted and logged. PLUMED then takes the derivatives by finite
    differences; this package's are analytic (the values are the same)."""
    if action.flag('NUMERICAL_DERIVATIVES'):
        action.log.append('NUMERICAL_DERIVATIVES accepted: the derivatives here are analytic (PLUMED would take '
                          'them by finite differences); the value is the same')


def _name(action):
    return action.label or action.name.lower()


def usesImages(plumed, action, nopbc):
    """Whether the CV of ``action`` takes the nearest periodic image: not with NOPBC, else as load()
    chose for the input (PlumedInput.periodic: by default, as the System as given uses periodic
    boundary conditions, which is when openmm-plumed passes PLUMED the box). Where that choice takes
    none, the action logs why (PlumedInput.periodicNote)."""
    if nopbc:
        return False
    if not plumed.periodic:
        action.log.append(plumed.periodicNote)
    return plumed.periodic


def readCoordination(plumed, action):
    """COORDINATION GROUPA= [GROUPB=] [PAIR] [NOPBC] [NLIST ...] with the short syntax or SWITCH={...}:
    a CoordinationForce."""
    groupA = readAtoms(plumed, action, 'GROUPA')
    groupB = readAtoms(plumed, action, 'GROUPB', required=False)
    pair, nopbc = action.flag('PAIR'), action.flag('NOPBC')
    if pair and (groupB is None or len(groupA) != len(groupB)):
        raise action.fail('PAIR', 'needs GROUPB with as many atoms as GROUPA (%d), got %s', len(groupA),
                          'none' if groupB is None else len(groupB))
    switch = readSwitch(action, plumed.units)
    arguments = (groupA,) if groupB is None else (groupA, groupB, True) if pair else (groupA, groupB)
    # With PAIR the force pairs the places of the lists already (the i-th of GROUPA with the i-th of GROUPB),
    # repeated atoms included, as PLUMED does.
    repeated = not pair and (len(set(groupA)) != len(groupA) or (groupB is not None and len(set(groupB)) != len(groupB)))
    if repeated:
        # PLUMED pairs the places of its lists, skipping a pair of one atom with itself: a group that names
        # an atom twice counts that atom's pairs twice. Those pairs, listed, are the same sum.
        if groupB is None:
            pairs = [(a, b) for i, a in enumerate(groupA) for b in groupA[i + 1:] if a != b]
        else:
            pairs = [(a, b) for a in groupA for b in groupB if a != b]
        if len(pairs) > 10**7:
            raise action.fail('GROUPA', 'a group that repeats atoms makes %d pairs to list, more than 10^7', len(pairs))
        arguments = ([a for a, _ in pairs], [b for _, b in pairs], True)
        action.log.append('%s names an atom more than once: its pairs, as PLUMED counts them (each place in the list, '
                          'pairs of an atom with itself skipped), are listed: %d pairs' % (
                              'GROUPA' if len(set(groupA)) != len(groupA) else 'GROUPB', len(pairs)))
    try:
        force = CoordinationForce(*arguments)
    except openmm.OpenMMException as error:
        raise action.fail('GROUPA', str(error).strip()) from None
    calls = Calls(action, _name(action), force, 'CoordinationForce(%s)' % ', '.join(_shown(a) for a in arguments))
    applySwitch(calls, switch, 'SWITCH' if action.has('SWITCH') else 'R_0')
    calls('NOPBC' if nopbc else None, 'setUsesPeriodicBoundaryConditions', usesImages(plumed, action, nopbc))
    _neighbourList(action, force, plumed.units)
    _numericalDerivatives(action)
    action.finish()
    return force


def readContactMap(plumed, action):
    """CONTACTMAP ATOMS1=a,b ... SWITCH(n)={...} WEIGHTn=.. SUM [NOPBC]: one CoordinationForce in
    pair-list mode with a weight and an r0 per contact (one switching type and shape for all)."""
    numbered = sorted(int(m.group(1)) for m in (re.match(r'ATOMS(\d+)$', key) for key in action.keywords) if m)
    if not numbered or numbered != list(range(1, len(numbered) + 1)):
        raise action.fail('ATOMS1', 'contacts must be numbered ATOMS1, ATOMS2, ... without gaps, got %s',
                          ', '.join('ATOMS%d' % n for n in numbered) or 'none')
    for key in action.keywords:
        if key == 'CMDIST' or key.startswith('REFERENCE'):
            raise action.fail(key, 'not supported: CMDIST is a distance between contact maps, not a sum of '
                              'switching functions')
    if not action.flag('SUM'):
        raise action.fail('SUM', 'is required: without it CONTACTMAP is one value per contact; with it, their sum '
                          'is one CoordinationForce')
    nopbc = action.flag('NOPBC')
    shared = readSwitch(action, plumed.units, short=False)
    pairs, switches, weights = [], [], []
    for n in numbered:
        atoms = readAtoms(plumed, action, 'ATOMS%d' % n)
        if len(atoms) != 2:
            raise action.fail('ATOMS%d' % n, 'a contact is two atoms, got %d', len(atoms))
        switch = readSwitch(action, plumed.units, 'SWITCH%d' % n, short=False)
        if (switch is None) == (shared is None):
            raise action.fail('SWITCH%d' % n, 'give SWITCH for all contacts or SWITCHn for each, not %s',
                              'both' if switch is not None else 'neither')
        switch = switch or shared
        if switches and switch.shape() != switches[0].shape():
            raise action.fail('SWITCH%d' % n, 'differs from SWITCH1 in more than R_0 (or REF): one force has one '
                              'switching type, d0, dmax and exponents for all its contacts; use one CONTACTMAP per kind')
        pairs.append(atoms)
        switches.append(switch)
        weights.append(action.number('WEIGHT%d' % n, 1.0))
    r0s = [switch.distance() for switch in switches]
    perPair = len(set(r0s)) > 1
    force = CoordinationForce()
    calls = Calls(action, _name(action), force, 'CoordinationForce()')
    applySwitch(calls, switches[0], 'SWITCH' if shared else 'SWITCH1', perPair)
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    pairWeights = weights if any(w != 1.0 for w in weights) else None
    calls('ATOMS1', 'setPairs', first, second, pairWeights, r0s if perPair else None)
    calls('NOPBC' if nopbc else None, 'setUsesPeriodicBoundaryConditions', usesImages(plumed, action, nopbc))
    _numericalDerivatives(action)
    action.finish()
    return force


def readDistance(plumed, action):
    """DISTANCE ATOMS=a,b [NOPBC] [COMPONENTS]: the two particle indices, whether the distance takes
    the nearest periodic image (usesImages), and whether its components label.x, .y, .z are asked
    for. For RESTRAINT, walls, BIASVALUE (a distance CV of the biases' CoordinationBiasForce,
    addDistance), PRINT, METAD and OPES_METAD (a DistanceCV: a CV of the bias's CoordinationBiasForce,
    alone or beside coordination numbers); the nearest image, the components' included, is the
    shortest, as PLUMED's."""
    atoms = readAtoms(plumed, action, 'ATOMS')
    if len(atoms) != 2:
        raise action.fail('ATOMS', 'a DISTANCE is between two atoms, got %d', len(atoms))
    nopbc = action.flag('NOPBC')
    periodic = usesImages(plumed, action, nopbc)
    components = action.flag('COMPONENTS')
    if components and action.label is None:
        raise action.fail('COMPONENTS', 'needs a label: the values are label.x, label.y, label.z')
    _numericalDerivatives(action)
    action.finish()
    if components:
        action.python.append('# %s.x, .y, .z: x, y, z of particle %d less those of %d (%s): DistanceCV(%d, %d, \'x\', ...) '
                             'under METAD, bias.addDistance(..., %d, %d, 0, %r) for a bias' % (
                                 action.label, atoms[1], atoms[0], 'the nearest image' if periodic else
                                 'NOPBC' if nopbc else 'no periodic image',
                                 atoms[0], atoms[1], atoms[0], atoms[1], periodic))
    else:
        action.python.append('# the distance between particles %d and %d%s: bias.addDistance(%r, %d, %d, -1, %r) if a bias '
                             'uses it' % (atoms[0], atoms[1], '' if periodic else ' (NOPBC)' if nopbc else ' (no periodic image)',
                                          action.label, atoms[0],
                                          atoms[1], periodic))
    return tuple(atoms), periodic, components
