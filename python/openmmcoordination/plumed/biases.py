"""The actions of a PLUMED input that combine and bias values, for openmmcoordination.plumed:
CUSTOM, MATHEVAL and COMBINE (Lepton expressions of coordination numbers), RESTRAINT, UPPER_WALLS,
LOWER_WALLS and BIASVALUE (terms of one CoordinationBiasForce energy; a DISTANCE is a distance CV of
that force, addDistance), METAD (the arguments of Metadynamics) and PRINT (what a COLVAR reporter writes).

Energies are in kJ/mol and lengths in nm once read: UNITS scales KAPPA, SLOPE, HEIGHT and the
value of BIASVALUE by its ENERGY, and AT, OFFSET, EPS of a DISTANCE (with KAPPA per length^2 and
SLOPE per length) by its LENGTH. The formulas are PLUMED's (src/bias/Restraint.cpp, UWalls.cpp,
LWalls.cpp): 0.5*KAPPA*(x-AT)^2 + SLOPE*(x-AT); KAPPA*((x-AT+OFFSET)/EPS)^EXP where that is
positive; KAPPA*((x-AT-OFFSET)/EPS)^EXP where that is negative.
"""

import math
import re

import openmm
from openmm import unit

from openmmcoordination.plumed.expressions import CONSTANTS, Expression, substitute, withConstants
from openmmcoordination.plumed.syntax import Value

__all__ = ['readFunction', 'readCombine', 'readBias', 'readMetad', 'readPrint', 'readDumpDerivatives',
           'derivativeAtoms', 'readSort', 'readOpes', 'number']

_DEFAULT_VARIABLES = ('x', 'y', 'z')


def number(value):
    """A number as a Lepton expression writes it: an integer without a point, a negative one in parentheses."""
    text = repr(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))
    return '(%s)' % text if value < 0 else text


def _arguments(plumed, action, kinds, key='ARG'):
    """The labels and Values of an ARG list, each of one of ``kinds``."""
    labels = action.strings(key)
    if labels is None:
        raise action.fail(key, 'is required')
    labels = _expandRegex(plumed, action, key, labels)
    values = []
    for label in labels:
        if label in plumed.values and '.' in label:
            pass                                  # a component this package computes (SORT's s.1, ...)
        elif '.' in label or '*' in label or label.startswith('('):
            raise action.fail(key, '%r: components, wildcards and regular expressions are not supported here', label)
        if label not in plumed.values or getattr(plumed.values[label], 'alias', None):
            raise action.fail(key, '%r is not the label of an action above', label)
        value = plumed.values[label]
        if value.kind not in kinds:
            raise action.fail(key, '%r is a %s; %s takes %s', label, value.action.name, action.name,
                              ' or '.join(sorted({_KIND_NAMES[k] for k in kinds})))
        values.append(value)
    return labels, values


def _expandRegex(plumed, action, key, labels):
    """Arguments written as (regex): the labels of the values above whose whole name matches it, in
    order (PLUMED's ARG=(regex), an extended regular expression matched with std::regex_match)."""
    expanded = []
    for label in labels:
        base, dot, component = label.partition('.')
        if dot and label not in plumed.values and getattr(plumed.values.get(base), 'kind', None) == 'vector':
            if component == '*':
                # label.*: the functions of a COORDINATIONNUMBER (PLUMED 2.10's actions label_name), in alphabetical order
                expanded += sorted(name for name in plumed.values if name.startswith(base + '_'))
                continue
            if base + '_' + component in plumed.values:
                expanded.append(base + '_' + component)       # label.mean is PLUMED 2.10's action label_mean
                continue
        if dot and component == '*' and getattr(plumed.values.get(base), 'kind', None) == 'moments':
            expanded += plumed.values[base].components           # MOMENTS' label.*: its label.moment-k
            continue
        if not (label.startswith('(') and label.endswith(')')):
            expanded.append(label)
            continue
        try:
            pattern = re.compile(label[1:-1])
        except re.error as error:
            raise action.fail(key, '%r is not a regular expression: %s', label, error) from None
        matched = [name for name, value in plumed.values.items()
                   if value.kind in ('coordination', 'function', 'distance') and value.action.label and pattern.fullmatch(name)
                   and not getattr(value, 'hidden', False)]
        if not matched:
            raise action.fail(key, '%r matches no value above', label)
        action.log.append('%s=%s: %s' % (key, label, ','.join(matched)))
        expanded += matched
    return expanded


def readSort(plumed, action):
    """SORT ARG=...: the components label.1 (the smallest) ... label.N (the largest). The smallest and
    the largest are Lepton expressions (min and max of the arguments); the ones between are refused
    where they are used. Returns {component label: Value}."""
    labels, values = _arguments(plumed, action, ('coordination', 'function'))
    action.finish()
    if action.label is None:
        raise action.fail('LABEL', 'SORT needs a label (its values are label.1, label.2, ...)')
    def nested(function, x):
        expression = x[0]
        for item in x[1:]:
            expression = '%s(%s, %s)' % (function, expression, item)
        return expression
    x = [_expressionOf(l, v) for l, v in zip(labels, values)]
    local = _localNames(labels)
    components = {}
    for k, function in ((1, 'min'), (len(x), 'max')):
        name = '%s.%d' % (action.label, k)
        components[name] = _function(action, nested(function, x), labels, values, (nested(function, local), local))
    action.log.append('components %s.1 (min) and %s.%d (max) built; %s' % (action.label, action.label, len(x),
                      'the others are refused where used' if len(x) > 2 else 'there are no others'))
    return components


_KIND_NAMES = {'coordination': 'COORDINATION or CONTACTMAP', 'function': 'CUSTOM, MATHEVAL or COMBINE',
               'distance': 'DISTANCE'}


def _expressionOf(label, value):
    """The Lepton expression of a value of coordination numbers (and distances), in their labels."""
    return label if value.kind in ('coordination', 'distance') else value.obj


def _cvsOf(label, value):
    return {label} if value.kind in ('coordination', 'distance') else value.cvs


def _componentArguments(plumed, labels, values):
    """The labels and Values that a function's expression and ``cvs`` use for its arguments: a component
    of a DISTANCE (label.x, not a Lepton name) by its ``cvName`` (label_x, made unique when the DISTANCE
    was read: PlumedInput._componentName), a hidden Value of ``plumed.values`` (its ``alias`` the
    component's label; no argument of an action may name it) holding the same pair, image and
    component, created on first use. The same name is the component's distance CV in the bias force
    (PlumedInput._distanceNames), so every function and bias that uses it shares one CV."""
    names, cvValues = [], []
    for label, value in zip(labels, values):
        if value.kind == 'distance' and getattr(value, 'component', None) is not None:
            name = value.cvName
            if name not in plumed.values:
                plumed.values[name] = Value(value.action, 'distance', value.obj, periodic=value.periodic,
                                            component=value.component, cvName=name, alias=label, hidden=True)
            names.append(name)
            cvValues.append(plumed.values[name])
        else:
            names.append(label)
            cvValues.append(value)
    return names, cvValues


def plumedLabel(plumed, name):
    """The label of a value as the PLUMED input writes it (label.x for a component's hidden Value label_x)."""
    return getattr(plumed.values.get(name), 'alias', None) or name


def distancesOf(plumed, value):
    """The labels of the DISTANCEs that a function (or a bias's CVs) depends on, sorted."""
    return sorted(c for c in value.cvs if plumed.values[c].kind == 'distance')


def _periodicNo(action):
    periodic = action.required('PERIODIC')
    if periodic != 'NO':
        raise action.fail('PERIODIC', 'only PERIODIC=NO: a coordination number is not periodic, got %r', periodic)


def readFunction(plumed, action):
    """CUSTOM or MATHEVAL ARG= [VAR=] FUNC= PERIODIC=NO of coordination numbers, DISTANCEs and their
    components: a Lepton expression in their labels (a component label.x by its name label_x:
    _componentArguments) (a Value of kind 'function'; a DISTANCE in the input's length unit).
    METAD, OPES_METAD, PRINT, DUMPDERIVATIVES and the biases take one with a DISTANCE or a component
    among its arguments (a distance CV of the bias force; see distancesOf)."""
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    names, cvValues = _componentArguments(plumed, labels, values)
    variables = action.strings('VAR')
    if variables is None:
        if len(labels) > len(_DEFAULT_VARIABLES):
            raise action.fail('VAR', 'is required with more than three arguments')
        variables = list(_DEFAULT_VARIABLES[:len(labels)])
    if len(variables) != len(labels):
        raise action.fail('VAR', 'needs one name per argument (%d), got %d', len(labels), len(variables))
    function = action.required('FUNC')
    for variable in variables:
        if variable in CONSTANTS:
            raise action.fail('VAR', '%r is a constant of PLUMED\'s Lepton (%s): PLUMED reads it as the constant, '
                              'not as the argument; name the variable otherwise', variable, ', '.join(CONSTANTS))
    function, constants = withConstants(function)     # PLUMED's Lepton knows pi, e, ...; OpenMM's does not
    if constants:
        action.log.append('FUNC: %s, constants of PLUMED\'s Lepton, written as numbers for OpenMM\'s' % ', '.join(constants))
    try:
        Expression(function, variables)
    except ValueError as error:
        raise action.fail('FUNC', str(error)) from None
    _periodicNo(action)
    action.finish()
    expression = substitute(function, {v: _expressionOf(l, value) for v, l, value in zip(variables, names, cvValues)})
    return _function(action, expression, names, cvValues, (function, variables), args=labels)


def _localNames(labels):
    return ['_a%d' % k for k in range(len(labels))]


def _function(action, expression, labels, values, local, name=None, args=None):
    """A Value of kind 'function': ``obj`` the Lepton expression in the CVs, ``expression`` it as an
    Expression, ``cvs`` their labels (a DISTANCE's component by its hidden Value's name, label_x:
    _componentArguments), ``args`` the labels of its arguments as the input writes them (default
    ``labels``) and ``local`` the Expression in its arguments (for DUMPDERIVATIVES: PLUMED's
    derivatives of a function are those with respect to its arguments). ``name``: the variable of
    the printed Python (default the action's label; a COORDINATIONNUMBER's components give their
    own, c_mean, c_1, ...)."""
    cvs = set().union(*[_cvsOf(label, value) for label, value in zip(labels, values)])
    action.python.append('%s = %r  # a Lepton expression of %s, for the energy below' % (
        name or action.label or 'f', expression, ', '.join(sorted(cvs))))
    return Value(action, 'function', expression, cvs=cvs, expression=Expression(expression, sorted(cvs)),
                 args=list(labels if args is None else args), local=Expression(local[0], local[1]))


def readCombine(plumed, action):
    """COMBINE ARG= [COEFFICIENTS=] [PARAMETERS=] [POWERS=] [NORMALIZE] PERIODIC=NO: sum of
    c_i (x_i - p_i)^e_i as a Lepton expression (coefficients divided by their sum with NORMALIZE); of
    distances too, as readFunction."""
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    names, cvValues = _componentArguments(plumed, labels, values)
    count = len(labels)
    coefficients = action.numbers('COEFFICIENTS', count, 1.0)
    parameters = action.numbers('PARAMETERS', count, 0.0)
    powers = action.numbers('POWERS', count, 1.0)
    if action.flag('NORMALIZE'):
        total = sum(coefficients)
        if total == 0:
            raise action.fail('NORMALIZE', 'the coefficients sum to 0')
        coefficients = [c/total for c in coefficients]
    _periodicNo(action)
    action.finish()
    def combined(names, parenthesize):
        terms = []
        for x, wrap, c, p, e in zip(names, parenthesize, coefficients, parameters, powers):
            base = '(%s - %s)' % (x, number(p)) if p != 0 else ('(%s)' % x if wrap else x)
            terms.append('%s*%s' % (number(c), base) + ('' if e == 1 else '^%s' % number(e)))
        return ' + '.join(terms)
    local = _localNames(labels)
    expression = combined([_expressionOf(l, v) for l, v in zip(names, cvValues)], [v.kind == 'function' for v in values])
    return _function(action, expression, names, cvValues, (combined(local, [False]*count), local), args=labels)


def _biasTerm(action, numbers, index, x, length, energy):
    """The energy (kJ/mol) of argument ``index``, x (a Lepton expression), of a bias action whose
    keywords are ``numbers`` ({key: one number per argument, or None}); ``length`` is the nm per
    input unit of the argument (1 for a coordination number)."""
    name = action.name

    def get(key, default, scale=1.0):
        """The keyword's number for this argument times scale (a unit conversion), which must stay finite."""
        value = numbers[key][index] if numbers[key] is not None else default
        if value is not None and not math.isfinite(value*scale):
            raise action.fail(key, '%s is not finite in this package\'s units (times %g)', value, scale)
        return value if value is None else value*scale
    if name == 'BIASVALUE':
        return '%s*%s' % (number(energy/length), x)
    at = get('AT', None, length)
    if name == 'RESTRAINT':
        kappa = get('KAPPA', 0.0, energy/length**2)
        slope = get('SLOPE', 0.0, energy/length)
        parts = (['0.5*%s*(%s - %s)^2' % (number(kappa), x, number(at))] if kappa else []) + \
                (['%s*(%s - %s)' % (number(slope), x, number(at))] if slope else [])
        return ' + '.join(parts) or '0'
    kappa = get('KAPPA', None, energy)
    exponent = get('EXP', 2.0)
    epsilon = get('EPS', 1.0, length)
    offset = get('OFFSET', 0.0, length)
    if not exponent > 0 or (name == 'LOWER_WALLS' and not exponent.is_integer()):
        raise action.fail('EXP', 'must be positive%s, got %s', ' and an integer (PLUMED\'s lower wall is NaN '
                          'otherwise)' if name == 'LOWER_WALLS' else '', exponent)
    if not epsilon > 0:
        raise action.fail('EPS', 'must be positive, got %s', epsilon/length)
    shift = at - offset if name == 'UPPER_WALLS' else at + offset
    if not math.isfinite(shift):
        raise action.fail('OFFSET', '%s with AT %s gives a wall at %s', offset/length, at/length, shift)
    wall = '%s(0, %s - %s)' % ('max' if name == 'UPPER_WALLS' else 'min', x, number(shift))
    if epsilon != 1:
        wall = '%s/%s' % (wall, number(epsilon))
    return '%s*(%s)^%s' % (number(kappa), wall, number(exponent))


def readBias(plumed, action):
    """RESTRAINT, UPPER_WALLS, LOWER_WALLS or BIASVALUE on coordination numbers, DISTANCEs and functions
    of them: one energy term per argument, of the CVs (a DISTANCE inside a function in the input's
    length unit) or of the distance r in nm of a DISTANCE argument (for the CoordinationBiasForce of
    the biases, where each DISTANCE becomes a distance CV, addDistance). A Value of kind 'bias' whose
    ``parts`` are (distance label or None, term, Expression)."""
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    keys = {'RESTRAINT': ('AT', 'KAPPA', 'SLOPE'), 'UPPER_WALLS': ('AT', 'KAPPA', 'EXP', 'EPS', 'OFFSET'),
            'LOWER_WALLS': ('AT', 'KAPPA', 'EXP', 'EPS', 'OFFSET'), 'BIASVALUE': ()}[action.name]
    numbers = {key: action.numbers(key, len(labels)) for key in keys}
    for key in ('AT', 'KAPPA'):
        if key in keys and numbers[key] is None and not (key == 'KAPPA' and action.name == 'RESTRAINT'):
            raise action.fail(key, 'is required')
    action.finish()
    parts = []
    for index, (label, value) in enumerate(zip(labels, values)):
        if value.kind == 'distance':
            term = _biasTerm(action, numbers, index, 'r', plumed.units.length, plumed.units.energy)
            parts.append((label, term, Expression(term, ['r'])))
        else:
            term = _biasTerm(action, numbers, index, _expressionOf(label, value), 1.0, plumed.units.energy)
            cvs = _cvsOf(label, value)
            parts.append((None, term, Expression(term, sorted(cvs))))
        action.python.append('# energy term (kJ/mol) of %s: %s' % (label, parts[-1][1]))
    return Value(action, 'bias', ' + '.join(term for _, term, _ in parts), parts=parts,
                 cvs=set().union(*[_cvsOf(l, v) for l, v in zip(labels, values) if v.kind != 'distance']))


#: The most points the grid of a METAD's bias may have (all its dimensions together): 80 MB an array of it.
MAX_METAD_GRID_POINTS = 10000000


def _grid(action, count, sigmas):
    """(minima, maxima, grid widths) of GRID_MIN, GRID_MAX and GRID_BIN or GRID_SPACING, as PLUMED
    chooses the bins (the larger of the two; without either, a spacing of SIGMA/5)."""
    minima, maxima = action.numbers('GRID_MIN', count), action.numbers('GRID_MAX', count)
    if minima is None or maxima is None:
        raise action.fail('GRID_MIN' if minima is None else 'GRID_MAX', 'is required: the bias lives on a grid')
    binsText = action.strings('GRID_BIN')
    spacing = action.numbers('GRID_SPACING', count)
    if binsText is not None and len(binsText) != count:
        raise action.fail('GRID_BIN', 'needs %d values (one per argument), got %d', count, len(binsText))
    bins = [action.toInteger('GRID_BIN', b) for b in binsText] if binsText else [0]*count
    spacingKey = 'GRID_SPACING'
    if binsText is None and spacing is None:
        spacing, spacingKey = [0.2*s for s in sigmas], 'SIGMA'     # PLUMED's 0.2*SIGMA (not SIGMA/5: it rounds otherwise)
    for i in range(count):
        if not minima[i] < maxima[i]:
            raise action.fail('GRID_MAX', 'must be above GRID_MIN, got %s and %s', minima[i], maxima[i])
        if spacing is not None:
            if not spacing[i] > 0:
                raise action.fail('GRID_SPACING', 'must be positive, got %s', spacing[i])
            span = (maxima[i] - minima[i])/spacing[i]
            if not span <= MAX_METAD_GRID_POINTS:
                raise action.fail(spacingKey, 'gives a grid of more than %d points from GRID_MIN %s to GRID_MAX %s (a spacing '
                                  'of %s%s); widen it', MAX_METAD_GRID_POINTS, minima[i], maxima[i], spacing[i],
                                  ', SIGMA/5' if spacingKey == 'SIGMA' else '')
            bins[i] = max(bins[i], int(math.ceil(span)))
        if bins[i] < 1:
            raise action.fail('GRID_BIN', 'must be a positive integer, got %d', bins[i])
    points = 1
    for b in bins:
        points *= b + 1
    if points > MAX_METAD_GRID_POINTS:
        raise action.fail('GRID_BIN' if binsText else spacingKey, 'gives a grid of %s = %d points, more than %d',
                          ' x '.join('%d' % (b + 1) for b in bins), points, MAX_METAD_GRID_POINTS)
    return minima, maxima, [b + 1 for b in bins]


def _biasVariable(action, key, force, minimum, maximum, width, gridWidth):
    """openmm.app's BiasVariable; a width so large against the range that its variance overflows is
    refused, naming ``key``."""
    from openmm.app.metadynamics import BiasVariable
    try:
        return BiasVariable(force, minimum, maximum, width, False, gridWidth)
    except (OverflowError, ZeroDivisionError) as e:
        raise action.fail(key, '%g with the grid from %g to %g: %s', width, minimum, maximum, e) from None


def readMetad(plumed, action):
    """METAD on 1 to 3 coordination numbers (a COORDINATIONNUMBER's function as its CoordinationForce,
    _asCVs), functions of them or DISTANCEs (well tempered, on a grid): the arguments of
    Metadynamics, built once the whole input has been read (a Value of kind 'metad' with ``spec``)."""
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    count = len(labels)
    if not 1 <= count <= 3:
        raise action.fail('ARG', 'Metadynamics takes 1, 2 or 3 arguments, got %d', count)
    sigmas = action.numbers('SIGMA', count)
    height = action.number('HEIGHT', scale=plumed.units.energy)
    frequency = action.integer('PACE')
    biasFactor = action.number('BIASFACTOR')
    for key, value in (('SIGMA', sigmas), ('HEIGHT', height), ('PACE', frequency)):
        if value is None:
            raise action.fail(key, 'is required')
    if biasFactor is None or not biasFactor > 1:
        raise action.fail('BIASFACTOR', 'must be given and above 1: this package runs well-tempered metadynamics, got %s',
                          biasFactor)
    temperature = _temperature(plumed, action)
    for sigma in sigmas:
        if not sigma > 0:
            raise action.fail('SIGMA', 'must be positive, got %s', sigma)
    minima, maxima, widths = _grid(action, count, sigmas)
    saveFrequency, biasDir = action.integer('WALKERS_RSTRIDE'), action.take('WALKERS_DIR')
    if (saveFrequency is None) != (biasDir is None):
        raise action.fail('WALKERS_RSTRIDE' if saveFrequency is None else 'WALKERS_DIR', 'give WALKERS_DIR and '
                          'WALKERS_RSTRIDE together (the shared directory and the steps between reading it)')
    for key in ('WALKERS_N', 'WALKERS_ID'):
        if action.take(key) is not None:
            action.log.append('%s is not needed: walkers find each other by the files in WALKERS_DIR' % key)
    hills = action.fileName('FILE', 'HILLS')
    calcRct = action.flag('CALC_RCT')
    rctStride = action.integer('RCT_USTRIDE', 1)
    if action.has('RCT_USTRIDE') and not calcRct:
        raise action.fail('RCT_USTRIDE', 'given without CALC_RCT')
    if rctStride != 1:
        raise action.fail('RCT_USTRIDE', 'only 1: c(t) is computed after every hill here, got %d', rctStride)
    if calcRct:
        action.log.append('CALC_RCT accepted: c(t) of Tiwary and Parrinello is computed after every hill '
                          '(Metadynamics.getReweightingFactors()); PRINT takes it as %s.rct, and %s.rbias = %s.bias - %s.rct'
                          % ((action.label or 'metad',)*4))
    action.finish()
    labels, values, names = _asCVs(plumed, labels, values)
    variables = [_biasVariable(action, 'SIGMA', _variableForce(plumed, value), lo, hi, sigma, width)
                 for value, lo, hi, sigma, width in zip(values, minima, maxima, sigmas, widths)]
    _checkDistanceVariables(plumed, action, labels, values, variables)
    spec = dict(variables=variables, temperature=temperature*unit.kelvin, biasFactor=biasFactor,
                height=height*unit.kilojoules_per_mole, frequency=frequency, saveFrequency=saveFrequency, biasDir=biasDir,
                truncateHills=True)
    action.log.append('hills as PLUMED\'s: cut where (s-s0)^2/(2 SIGMA^2) reaches 6.25 and stretched to 0 there '
                      '(Metadynamics(truncateHills=True))')
    _logFunctions(action, labels, values, names)
    action.python.append('%s = Metadynamics(system, [%s], %s*kelvin, %s, %s*kilojoules_per_mole, %d%s)' % (
        action.label or 'metad', _pythonVariables(plumed, names, values, variables),
        number(temperature), number(biasFactor), repr(height), frequency,
        ('' if biasDir is None else ', saveFrequency=%d, biasDir=%r' % (saveFrequency, biasDir)) + ', truncateHills=True'))
    action.python.append('# hills written to %s (PLUMED\'s HILLS format) by PlumedInput.step' % hills)
    return Value(action, 'metad', None, spec=spec, labels=labels, hills=hills, calcRct=calcRct,
                 cvs=set().union(*[_cvsOf(n, v) for n, v in zip(names, values) if v.kind != 'distance']))


def _checkDistanceVariables(plumed, action, labels, values, variables):
    """Log METAD's or OPES's DISTANCE arguments with the path that computes them: a CV of the bias's
    CoordinationBiasForce itself (the reader's variables are coordination numbers, DISTANCEs and
    functions of them, all on that path)."""
    from openmmcoordination._gridbias import onDevicePath
    assert onDevicePath(variables)
    for label, value in zip(labels, values):
        if value.kind == 'distance':
            action.log.append('%s: a DISTANCE, a CV of the bias\'s CoordinationBiasForce itself (a DistanceCV: '
                              'CoordinationBiasForce.addDistance, the nearest image the shortest as PLUMED\'s), computed '
                              'in the same bias evaluation (on CUDA in the chain-rule launch); in %s as PLUMED prints it'
                              % (label, plumed.units.lengthName))


#: The most points the grid of an OPES_METAD's bias may have (all its dimensions together).
MAX_OPES_GRID_POINTS = 2000000


def boxBounds(box):
    """The largest values of a distance computed with the nearest image in a box (three vectors in nm,
    OpenMM's reduced form: a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz)), as (length, (x, y, z)).
    The nearest image is the shortest (CoordinationDistance::compute, PLUMED's DISTANCE): it lies in
    the Wigner-Seitz cell of the lattice, between the planes that bisect each lattice vector. Its
    length is at most that of the image the reduction gives (c, then b, then a subtracted), which lies
    in [-ax/2, ax/2] x [-by/2, by/2] x [-cz/2, cz/2]: half the diagonal sqrt(ax^2 + by^2 + cz^2)/2
    bounds it (exactly in a rectangular box, from above in a triclinic one). A component along a
    lattice vector is bounded by half its length: x by ax/2 always, y by by/2 where b lies along y
    (bx = 0), z by cz/2 where c lies along z (cx = cy = 0); another is bounded by the length's bound
    (the cell of a triclinic box reaches beyond by/2 in y, as a hexagon's vertex beyond half its height)."""
    a, b, c = ([float(x) for x in v] for v in box)
    length = 0.5*math.sqrt(a[0]**2 + b[1]**2 + c[2]**2)
    return length, (0.5*a[0], 0.5*b[1] if b[0] == 0 else length, 0.5*c[2] if c[0] == 0 and c[1] == 0 else length)


def _distanceRange(plumed, action, label, name):
    """(lowest, highest) of the DISTANCE ``name`` (in the input's length unit) for the grid of OPES: a
    length from 0 to boxBounds' length of the System's default box, a component from -h to h. Refused
    (naming ARG, ``label`` and why) where no bound is known: no System, a distance without periodic
    images (NOPBC, or load's ``periodic``: by default where the System as given uses no periodic
    boundary conditions), a System with a barostat (the box may grow). The box used is recorded on
    the PlumedInput (``opesBox``), which checks the simulation's box against it (PlumedInput.step)."""
    value = plumed.values[name]
    name = plumedLabel(plumed, name)          # d.x, not the hidden Value d_x a function's expression names
    if plumed.atomSource != 'System':
        raise action.fail('ARG', '%r depends on the DISTANCE %r: the range of its values, where the grid of the bias '
                          'ends, comes from the System\'s periodic box; load the input with the System', label, name)
    if not value.periodic:
        why = 'with NOPBC' if value.action.has('NOPBC') else '(%s)' % plumed.periodicNote
        raise action.fail('ARG', '%r depends on the DISTANCE %r %s: its values have no bound, and the bias here lives '
                          'on a grid that must hold them (PLUMED\'s OPES has no grid); with the nearest image its range '
                          'is known from the periodic box', label, name, why)
    system = plumed.system
    barostats = [type(f).__name__ for f in system.getForces() if 'Barostat' in type(f).__name__]
    if barostats:
        raise action.fail('ARG', '%r depends on the DISTANCE %r, and the System has a %s: the box, and with it the '
                          'largest nearest-image distance where the grid of the bias ends, can grow during the run',
                          label, name, barostats[0])
    box = [v.value_in_unit(unit.nanometer) for v in system.getDefaultPeriodicBoxVectors()]
    length, half = boxBounds(box)
    scale = plumed.units.length
    component = getattr(value, 'component', None)
    lowest, highest = (0.0, length/scale) if component is None else (-half[component]/scale, half[component]/scale)
    plumed.opesBox = [tuple(float(x) for x in v) for v in box]
    action.log.append('%s: its values from %g to %g %s for the grid of %s: %s of the System\'s default periodic box '
                      '(%s nm, System.getDefaultPeriodicBoxVectors()), the largest value of the nearest image '
                      '(boxBounds); the box must not grow in the run (checked by PlumedInput.step)' % (
                          name, lowest, highest, plumed.units.lengthName, label,
                          'half the diagonal' if component is None or half[component] == length else
                          'half the edge %s' % 'abc'[component], ' x '.join('%g' % box[k][k] for k in range(3))))
    return lowest, highest


def _asCVs(plumed, labels, values):
    """(labels, Values, names) of METAD's or OPES's arguments, where a function whose expression is
    exactly one hidden CV (a COORDINATIONNUMBER's label_mean, label_morethan, ..., SUM ARG=<vector>)
    is that CV: its CoordinationForce is the BiasVariable's force itself (no CVFunction), and
    ``names`` are the labels the equivalent Python writes (the hidden CV's, _label_mean, for those)."""
    names, cvValues = [], []
    for label, value in zip(labels, values):
        hidden = plumed.values.get(value.obj) if value.kind == 'function' and isinstance(value.obj, str) else None
        if hidden is not None and getattr(hidden, 'hidden', False) and hidden.kind == 'coordination':
            names.append(value.obj)
            cvValues.append(hidden)
        else:
            names.append(label)
            cvValues.append(value)
    return list(labels), cvValues, names


def _distanceCV(value):
    """The DistanceCV of a DISTANCE (nm; a component label.x of COMPONENTS: of r2 - r1, the nearest image unless NOPBC)."""
    from openmmcoordination.distancecv import DistanceCV
    component = getattr(value, 'component', None)
    return DistanceCV(value.obj[0], value.obj[1], None if component is None else 'xyz'[component],
                      usePeriodic=bool(value.periodic))


def _variableForce(plumed, value):
    """The force of a BiasVariable for a METAD or OPES argument: the CoordinationForce of a coordination
    number, a DistanceCV of a DISTANCE, or a CVFunction of those for a function (CUSTOM, MATHEVAL,
    COMBINE), which keeps the bias in one CoordinationBiasForce (its table called on the function;
    a DISTANCE is a CV of that force too, alone or beside coordination numbers, CoordinationBiasForce.addDistance).
    A DISTANCE is in the input's length unit (SIGMA and the grid are in it): r (nm) / nm per unit, a
    CVFunction where the unit is not nm."""
    from openmmcoordination.cvfunction import CVFunction
    from openmmcoordination.plumed.expressions import substitute
    length = plumed.units.length
    if value.kind == 'coordination':
        return value.obj
    if value.kind == 'distance':
        if length == 1:
            return _distanceCV(value)
        return CVFunction('r/%s' % number(length), {'r': _distanceCV(value)})
    names = sorted(value.cvs)
    forces = {name: (_distanceCV(plumed.values[name]) if plumed.values[name].kind == 'distance'
                     else _variableForce(plumed, plumed.values[name])) for name in names}
    distances = {name: '%s/%s' % (name, number(length)) for name in names
                 if plumed.values[name].kind == 'distance' and length != 1}
    return CVFunction(substitute(value.obj, distances) if distances else value.obj, forces)


def _pythonForce(label, value, length=1.0, force=None, plumed=None):
    """How the force of a METAD or OPES argument is written in the equivalent Python (describe());
    ``length`` the nm per input length unit (a DISTANCE in another unit is a CVFunction r/length). A
    function of DISTANCEs is written as ``force`` (its CVFunction: the expression with the unit divided
    out), each distance a DistanceCV."""
    if value.kind == 'function' and force is not None and plumed is not None and distancesOf(plumed, value):
        return 'CVFunction(%r, {%s})' % (force.expression, ', '.join(
            '%r: %s' % (n, _pythonForce(n, plumed.values[n]) if plumed.values[n].kind == 'distance' else n)
            for n in force.names))
    if value.kind == 'function':
        return 'CVFunction(%s, {%s})' % (label, ', '.join('%r: %s' % (n, n) for n in sorted(value.cvs)))
    if value.kind == 'distance':
        component = getattr(value, 'component', None)
        text = 'DistanceCV(%d, %d%s, usePeriodic=%r)' % (value.obj[0], value.obj[1],
                                                         '' if component is None else ", %r" % 'xyz'[component],
                                                         bool(value.periodic))
        return text if length == 1 else 'CVFunction(%r, {\'r\': %s})' % ('r/%s' % number(length), text)
    return label


def _pythonVariables(plumed, names, values, variables):
    """The BiasVariables of METAD or OPES as the equivalent Python writes them."""
    return ', '.join('BiasVariable(%s, %r, %r, %r, gridWidth=%d)' % (
        _pythonForce(n, x, plumed.units.length, v.force, plumed), v.minValue, v.maxValue, v.biasWidth, v.gridWidth)
        for n, x, v in zip(names, values, variables))


def _logFunctions(action, labels, values, names):
    for label, value, name in zip(labels, values, names):
        if name != label:
            action.log.append('%s: the CV %s itself (a CoordinationForce with a particle function) is the variable'
                              % (label, name))
        if value.kind == 'function':
            action.log.append('%s: the bias table is a function of %s = %s, evaluated inside the bias force '
                              '(CVFunction)' % (label, label, value.obj))


def _functionRange(action, label, value, ranges):
    """(lowest, highest) value of a linear function of coordination numbers over their ranges
    ({name: (lowest, highest)}, the corners of the box); refused for other functions, whose range is not known."""
    import itertools
    names = sorted(value.cvs)
    corners = [dict(zip(names, corner)) for corner in itertools.product(*[ranges[n] for n in names])]
    middle = {n: 0.5*(ranges[n][0] + ranges[n][1]) for n in names}
    gradients = [value.expression.gradient(point) for point in corners + [middle]]
    linear = all(abs(g - h) <= 1e-12*max(1.0, abs(h)) for gradient in gradients for g, h in zip(gradient, gradients[0]))
    if not linear:
        raise action.fail('ARG', '%r is not a linear function of its coordination numbers: the range of its values, '
                          'where the grid of the bias must end, is not known here (COMBINE with POWERS=1, or a linear '
                          'CUSTOM, is taken)', label)
    at = [value.expression.evaluate(point) for point in corners]
    return min(at), max(at)


def _allValues(plumed, action, args):
    """ARG=*: every value defined above, in order (PLUMED's ARG=*), where they are all values this
    package computes exactly: CVs, functions and distances. A bias above would add components that
    are not all computed here (RESTRAINT's force2, METAD's work, ...), so that is refused."""
    if args != ['*']:
        raise action.fail('ARG', '* with other arguments (%s): give * alone', ','.join(args))
    expanded = []
    for label, value in plumed.values.items():
        if value.kind in ('bias', 'metad', 'opes'):
            raise action.fail('ARG', '*: it would include the components of %s (line %d), which PLUMED prints in full '
                              '(bias, force2, ...) and this package does not all compute; name the values',
                              value.action.name, value.action.line)
        if value.kind in ('coordination', 'function', 'distance') and value.action.label and not getattr(value, 'hidden', False):
            expanded.append(label)
    if not expanded:
        raise action.fail('ARG', '*: no value is defined above')
    action.log.append('ARG=*: %s' % ','.join(expanded))
    return expanded


def readDumpDerivatives(plumed, action):
    """DUMPDERIVATIVES ARG= FILE= [FMT=] [STRIDE=]: the derivatives of coordination numbers and
    DISTANCEs (whole or a component label.x) with respect to the positions of their atoms and to the
    box (of a function, CUSTOM, MATHEVAL, COMBINE or SORT's, of coordination numbers and DISTANCEs,
    with respect to its arguments), as PLUMED writes them (src/generic/DumpDerivatives.cpp): per
    report, one line per parameter (x, y, z of each atom of the action in its order, then the 9 box
    derivatives: of a coordination number -sum over pairs of dfunc d (x) d, d the pair's vector and
    dfunc = (ds/dr)/r, src/colvar/CoordinationBase.cpp; of a DISTANCE -(r (x) r)/|r|, of its
    component k -(r (x) e_k), r its image, src/colvar/Distance.cpp), one column per argument. A Value of
    kind 'derivatives' with ``args``, ``stride``, ``file``, ``fmt``."""
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    file = action.fileName('FILE')
    if file is None:
        raise action.fail('FILE', 'is required')
    fmt = action.take('FMT', '%15.10f')
    try:
        fmt % 1.0
    except (TypeError, ValueError):
        raise action.fail('FMT', '%r is not a format for one number', fmt) from None
    stride = action.integer('STRIDE', 1)
    if stride < 1:
        raise action.fail('STRIDE', 'must be a positive integer, got %d', stride)
    counts = set()
    for label, value in zip(labels, values):
        if value.kind == 'function' and any(arg.startswith('_') for arg in value.args):
            # PLUMED 2.10 computes these from the vector of the c_i (ActionWithVector), whose derivatives this
            # package does not write as PLUMED does: refused rather than written differently
            raise action.fail('ARG', '%r is a function of per-atom coordination numbers (%s): its derivatives as PLUMED '
                              'writes them are not reproduced here; DUMPDERIVATIVES takes coordination numbers, '
                              'DISTANCEs and functions of them', label, value.action.name)
        if value.kind == 'function':
            counts.add(len(value.args))            # PLUMED: a function's derivatives are those by its arguments
            continue
        if value.kind == 'distance':
            if value.obj[0] == value.obj[1]:
                raise action.fail('ARG', '%r is a DISTANCE of atom %d to itself: its derivatives are not defined', label,
                                  value.obj[0] + 1)
            counts.add(2*3 + 9)
            continue
        atoms = derivativeAtoms(value)
        if len(set(atoms)) != len(atoms):
            raise action.fail('ARG', '%r names an atom twice in its groups: PLUMED gives each place in its list its own '
                              'derivative, which the forces (one per particle) do not split', label)
        counts.add(3*len(atoms) + 9)
    if len(counts) > 1:
        raise action.fail('ARG', 'the arguments have different numbers of derivatives (%s): PLUMED refuses that too',
                          ', '.join(map(str, sorted(counts))))
    action.finish()
    action.python.append('# derivatives of %s (atoms and box) to %s every %d steps, by PlumedInput.attach' % (
        ', '.join(labels), file, stride))
    return Value(action, 'derivatives', None, args=labels, stride=stride, file=file, fmt=fmt)


def derivativeAtoms(value):
    """The atoms (0-based) of a COORDINATION or CONTACTMAP in PLUMED's order of its derivatives: GROUPA
    then GROUPB; for CONTACTMAP the atoms of each contact in turn."""
    force = value.obj
    first, second = list(force.getGroupA()), list(force.getGroupB())
    if value.action.name == 'CONTACTMAP':
        return [atom for pair in zip(first, second) for atom in pair]
    return first + (second if force.getMode() != force.OneGroup else [])


#: OPES_METAD's keywords this package does not offer, and why (each refused by name).
_OPES_REFUSED = {
    'STATE_RFILE': 'PLUMED\'s state files are not read here',
    'STATE_WFILE': 'PLUMED\'s state files are not written here (OPES.getKernels() and getHistory() give the state)',
    'STATE_WSTRIDE': 'PLUMED\'s state files are not written here',
    'STORE_STATES': 'PLUMED\'s state files are not written here',
    'RESTART': 'a run here starts from no kernels',
    'WALKERS_MPI': 'walkers here share a directory (OPES(saveFrequency=, biasDir=)), not MPI',
    'NO_ZED': 'Z is always computed here',
    'RECURSIVE_MERGE_OFF': 'kernels are always merged recursively here',
    'CALC_WORK': 'the work is not computed here',
    'EXCLUDED_REGION': 'not offered here',
    'UPDATE_FROM': 'the bias is updated over the whole run here',
    'UPDATE_UNTIL': 'the bias is updated over the whole run here',
}


def readOpes(plumed, action):
    """OPES_METAD or OPES_METAD_EXPLORE on 1 to 3 coordination numbers, DISTANCEs or linear functions
    of them: the arguments of OPES, built once the whole input is read (a Value of kind 'opes' with
    ``spec``). PLUMED's OPES has no grid; the bias here lives on one (as OPES does): from 0 to the
    largest value the CV can take (its number of pairs, times the largest weight; of a
    COORDINATIONNUMBER's function, _particleFunctionRange; of a DISTANCE with the nearest image, from
    the System's periodic box, _distanceRange; of a linear function, the corners of its arguments'
    ranges), with a spacing of SIGMA/5 (SIGMA_MIN/5 for SIGMA=ADAPTIVE, where SIGMA_MIN is then
    required: the kernels narrow without bound otherwise), MAX_OPES_GRID_POINTS points at most."""
    for key in action.keywords:
        if key in _OPES_REFUSED:
            raise action.fail(key, 'not supported: %s', _OPES_REFUSED[key])
    labels, values = _arguments(plumed, action, ('coordination', 'function', 'distance'))
    count = len(labels)
    if not 1 <= count <= 3:
        raise action.fail('ARG', 'OPES takes 1, 2 or 3 arguments, got %d', count)
    explore = action.name == 'OPES_METAD_EXPLORE'
    pace = action.integer('PACE')
    barrier = action.number('BARRIER', scale=plumed.units.energy)
    for key, value in (('PACE', pace), ('BARRIER', barrier)):
        if value is None:
            raise action.fail(key, 'is required')
    sigmaText = action.strings('SIGMA')
    if sigmaText is None:
        raise action.fail('SIGMA', 'is required (a width per argument, or ADAPTIVE)')
    adaptive = sigmaText == ['ADAPTIVE']
    sigma = None if adaptive else action.numbers('SIGMA', count)
    sigmaMin = action.numbers('SIGMA_MIN', count)
    stride = action.integer('ADAPTIVE_SIGMA_STRIDE')
    if stride is not None and not adaptive:
        raise action.fail('ADAPTIVE_SIGMA_STRIDE', 'is for SIGMA=ADAPTIVE')
    if adaptive and sigmaMin is None:
        raise action.fail('SIGMA_MIN', 'is required with SIGMA=ADAPTIVE here: the bias lives on a grid whose spacing '
                          '(SIGMA_MIN/5) must resolve the narrowest kernel')
    for key, widths in (('SIGMA', sigma), ('SIGMA_MIN', sigmaMin)):
        if widths is not None and not all(w > 0 for w in widths):
            raise action.fail(key, 'must be positive, got %s', ','.join('%g' % w for w in widths))
    biasText = action.take('BIASFACTOR')
    biasFactor = None
    if biasText is not None:
        biasFactor = math.inf if biasText.strip() == 'inf' else action.toNumber('BIASFACTOR', biasText)
    epsilon = action.number('EPSILON')
    cutoff = action.number('KERNEL_CUTOFF')
    threshold = action.number('COMPRESSION_THRESHOLD', 1.0)
    fixed = action.flag('FIXED_SIGMA')
    extra = action.strings('EXTRA_BIAS')
    if extra is not None:
        if explore:
            raise action.fail('EXTRA_BIAS', 'is for OPES_METAD (PLUMED\'s OPES_METAD_EXPLORE has none)')
        for label in extra:
            if label not in plumed.values or plumed.values[label].kind != 'bias':
                raise action.fail('EXTRA_BIAS', '%r is not the label of a bias (RESTRAINT, UPPER_WALLS, LOWER_WALLS, '
                                  'BIASVALUE) read before this line', label)
    kernels = action.fileName('FILE', 'KERNELS')
    fmt = action.take('FMT')
    if fmt is not None:
        try:
            fmt % 1.0
        except (TypeError, ValueError):
            raise action.fail('FMT', '%r is not a format for one number', fmt) from None
    if extra is not None:
        for key in ('FILE', 'FMT'):
            if action.has(key):
                raise action.fail(key, '%s=%s is not supported with EXTRA_BIAS: the KERNELS file is not written '
                                  'with EXTRA_BIAS here (whether PLUMED\'s logweight column holds the extra biases was '
                                  'not checked); OPES.getKernels() gives the kernels', key, action.keywords[key])
        kernels = None
    temperature = _temperature(plumed, action)
    for key in ('NLIST', 'NLIST_PARAMETERS', 'NLIST_PACE_RESET', 'SERIAL'):
        if action.has(key):
            action.take(key) if action.keywords[key] is not True else action.flag(key)
            action.log.append('%s accepted: every kernel is summed here, at each update (no neighbour list)' % key)
    action.finish()
    spacing = sigmaMin if adaptive else sigma
    labels, values, names = _asCVs(plumed, labels, values)
    variables = []
    for label, cvLabel, value, width in zip(labels, names, values, spacing):
        ranges = {}
        for name in sorted(_cvsOf(cvLabel, value)):
            if plumed.values[name].kind == 'distance':
                ranges[name] = _distanceRange(plumed, action, label, name)
                continue
            force = plumed.values[name].obj
            if force.getSwitchingFunction() == force.Custom:
                raise action.fail('ARG', '%r has a CUSTOM switching function: the largest value it can take, where the '
                                  'grid ends, is not known', name)
            weights = list(force.getPairWeights()) or [1.0]
            weight = max(1.0, max(abs(w) for w in weights))
            ranges[name] = (0.0, float(force.getNumPairs()*weight)) if not force.usesParticleFunction() else \
                _particleFunctionRange(action, label, name, force, weight)
        lowest, highest = ranges[cvLabel] if value.kind in ('coordination', 'distance') else \
            _functionRange(action, label, value, ranges)
        span = (highest - lowest)/(width/5)
        if not span <= MAX_OPES_GRID_POINTS:
            raise action.fail('SIGMA_MIN' if adaptive else 'SIGMA', '%g: %s spans [%g, %g], more than %d grid points at a '
                              'spacing of SIGMA%s/5; widen it', width, label, lowest, highest, MAX_OPES_GRID_POINTS,
                              '_MIN' if adaptive else '')
        bins = max(1, int(math.ceil(span)))
        variables.append(_biasVariable(action, 'SIGMA_MIN' if adaptive else 'SIGMA', _variableForce(plumed, value), lowest,
                                       highest, width, bins + 1))
    points = 1
    for variable in variables:
        points *= variable.gridWidth
    if points > MAX_OPES_GRID_POINTS:
        raise action.fail('SIGMA_MIN' if adaptive else 'SIGMA', '%s: a grid of %s = %d points for the bias, more than %d '
                          '(the range of each argument over SIGMA%s/5); widen it', ','.join(
                              '%g' % w for w in spacing), ' x '.join('%d' % v.gridWidth for v in variables), points,
                          MAX_OPES_GRID_POINTS, '_MIN' if adaptive else '')
    _checkDistanceVariables(plumed, action, labels, values, variables)
    _logFunctions(action, labels, values, names)
    spec = dict(variables=variables, temperature=temperature*unit.kelvin, barrier=barrier*unit.kilojoules_per_mole,
                pace=pace, biasFactor=biasFactor, sigma=sigma, epsilon=epsilon, compressionThreshold=threshold,
                explore=explore, adaptiveSigmaStride=stride, sigmaMin=sigmaMin, fixedSigma=fixed, kernelCutoff=cutoff)
    if extra is not None:
        spec['extraBias'] = list(extra)     # labels: the force group of their forces is chosen when they are built
    action.python.append('%s = OPES(system, [%s], %s*kelvin, %r*kilojoules_per_mole, %d%s)' % (
        action.label or 'opes', _pythonVariables(plumed, names, values, variables),
        number(temperature), barrier, pace, ''.join(', %s=%r' % (k, spec[k]) for k in (
            'biasFactor', 'sigma', 'epsilon', 'explore', 'adaptiveSigmaStride', 'sigmaMin', 'fixedSigma', 'kernelCutoff')
            if spec[k] not in (None, False)) + ('' if threshold == 1.0 else ', compressionThreshold=%r' % threshold)))
    action.log.append('the grid of the bias: %s (PLUMED\'s OPES sums its kernels at the CVs; here the simulation feels '
                      'the spline of that sum on the grid, and PRINT\'s .bias is the exact sum)' % '; '.join(
                          '%s from %g to %g in %d points' % (l, v.minValue, v.maxValue, v.gridWidth) for l, v in zip(labels, variables)))
    if kernels is None:
        action.log.append('the KERNELS file PLUMED writes is not written with EXTRA_BIAS (OPES.getKernels() gives the '
                          'compressed kernels)')
    else:
        action.python.append('# kernels written to %s (PLUMED\'s KERNELS format%s) by PlumedInput.step' % (
            kernels, '' if fmt is None else ', FMT %s' % fmt))
    return Value(action, 'opes', None, spec=spec, labels=labels, kernels=kernels, fmt=fmt,
                 cvs=set().union(*[_cvsOf(n, v) for n, v in zip(names, values)]))


def _particleFunctionRange(action, label, name, force, weight):
    """(lowest, highest) of a CV with a particle function (a COORDINATIONNUMBER's component) for the
    grid of OPES: each c_i is at most (neighbours) x (largest weight); SUM of N of them N times that,
    MEAN, LOWEST, HIGHEST and MIN (PLUMED's beta/log(sum exp(beta/c_i)), at most the smallest c_i) that,
    MAX (beta log(sum exp(c_i/beta))) that plus beta log N, MORE_THAN, LESS_THAN and BETWEEN N. MOMENTS
    and a distance power (R_POWER) are refused: their range is not known here."""
    from openmmcoordination.coordination import CoordinationForce as F
    function = force.getParticleFunction()
    if function == F.Moment or force.getDistancePower() != 0:
        raise action.fail('ARG', '%r (%s) is a %s: the range of its values, where the grid of the bias ends, is not '
                          'known here', label, name, 'central moment of the c_i' if function == F.Moment
                          else 'coordination number with a distance power (R_POWER)')
    groupA, groupB = list(force.getGroupA()), list(force.getGroupB())
    count = len(groupA)
    neighbours = count - 1 if force.getMode() == F.OneGroup else len(groupB)
    largest = float(neighbours*weight)
    if function == F.Sum:
        return 0.0, count*largest
    if function in (F.MoreThan, F.LessThan, F.Between):
        return 0.0, float(count)
    if function == F.Max:
        return 0.0, largest + force.getFunctionBeta()*math.log(count)
    return 0.0, largest


def _temperature(plumed, action):
    """TEMP (K), checked against the integrator's temperature where it has one; without TEMP, the
    integrator's."""
    temperature = action.number('TEMP')
    integrator = plumed.integrator
    fromIntegrator = None
    if integrator is not None and hasattr(integrator, 'getTemperature'):
        fromIntegrator = integrator.getTemperature().value_in_unit(unit.kelvin)
    if temperature is None:
        if fromIntegrator is None:
            raise action.fail('TEMP', 'is required without an integrator that has a temperature')
        return fromIntegrator
    if not temperature > 0:
        raise action.fail('TEMP', 'must be positive, got %s', temperature)
    if fromIntegrator is not None and abs(temperature - fromIntegrator) > 1e-6*fromIntegrator:
        raise action.fail('TEMP', '%s K differs from the integrator\'s %s K', number(temperature), number(fromIntegrator))
    return temperature


def readPrint(plumed, action):
    """PRINT ARG= [STRIDE=] [FILE=] [FMT=]: the columns of a COLVAR reporter (labels of values, and
    label.bias of a bias or METAD). A Value of kind 'print' with ``args``, ``stride``, ``file``, ``fmt``."""
    args = action.strings('ARG')
    if args is None:
        raise action.fail('ARG', 'is required')
    if '*' in args:
        args = _allValues(plumed, action, args)
    args = _expandRegex(plumed, action, 'ARG', args)
    # A COORDINATIONNUMBER without a function is a vector: its c_i are the columns label.1 ... label.N.
    args = [name for arg in args for name in (plumed.values[arg].elements if arg in plumed.values
                                              and plumed.values[arg].kind == 'vector' else [arg])]
    for arg in args:
        label, dot, component = ('', '', '') if arg in plumed.values else arg.partition('.')
        if arg in plumed.values:
            label = arg                           # a value of its own, such as SORT's s.1
        value = plumed.values.get(label)
        if value is None or getattr(value, 'alias', None):
            raise action.fail('ARG', '%r is not the label of an action above', label)
        if dot and value.kind == 'opes':
            if component not in ('bias', 'rct', 'zed', 'neff', 'nker'):
                raise action.fail('ARG', '%r: of OPES\'s components bias, rct, zed, neff and nker are computed here', arg)
        elif dot and value.kind == 'metad' and component in ('rct', 'rbias'):
            if not value.calcRct:
                raise action.fail('ARG', '%r: METAD has the component %s only with CALC_RCT (PLUMED\'s rule too)', arg, component)
        elif dot and (component != 'bias' or value.kind not in ('bias', 'metad')):
            raise action.fail('ARG', '%r: of components only label.bias of a bias or METAD, and label.rct and label.rbias '
                              'of a METAD with CALC_RCT, are supported', arg)
        if not dot and value.kind not in ('coordination', 'function', 'distance'):
            raise action.fail('ARG', '%r is a %s, not a value (use %s.bias for its energy)', arg, value.action.name, label)
    stride = action.integer('STRIDE', 1)
    if stride < 1:
        raise action.fail('STRIDE', 'must be a positive integer, got %d', stride)
    fmt = action.take('FMT', '%f')
    try:
        fmt % 1.0
    except (TypeError, ValueError):
        raise action.fail('FMT', '%r is not a format for one number', fmt) from None
    file = action.fileName('FILE')
    action.finish()
    action.python.append('PlumedColvarReporter(%r, %d, ...)  # columns time %s, by PlumedInput.attach' % (
        file, stride, ' '.join(args)))
    return Value(action, 'print', None, args=args, stride=stride, file=file, fmt=fmt)
