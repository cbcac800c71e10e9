"""One case of each fuzzer of CoordinationForce, drawn from (seed, index) alone so that any case
can be re-run by itself: `xml` mutates a serialized System holding the force, `api` calls
constructors, setters and histogram calls with random types and values, `plumed` mutates a PLUMED
input (fuzz_plumed_cases.py). run_case() runs one in
this process and says how it ended; fuzz_coordination.py runs cases in subprocesses.

Outcomes: 'ok' (every result finite and sane), 'refused' (a clear exception: OpenMMException,
TypeError, ValueError, OverflowError), 'silent' (a non-finite or impossible result, or a bad input
accepted, with no exception), 'unexpected' (any other exception).
"""

import math
import os
import random
import re
import time

import numpy as np

import openmm

from openmmcoordination import CoordinationForce
from openmmcoordination.coordination import _castForce

import fuzz_plumed_cases

CLEAR_ERRORS = (openmm.OpenMMException, TypeError, ValueError, OverflowError)
MAX_BINS = CoordinationForce.MaxHistogramBins


class Silent(Exception):
    """A result that should have been an exception."""


# ----- values -----

NUMBERS = ['-1', '0', '-0', 'nan', 'inf', '-inf', '1e300', '-1e300', '1e-300', '2147483648', '-2147483649',
           '9223372036854775808', '99999999999999999999999', '0.5', '3', 'abc', '', '1e', '0x10']
EXPRESSIONS = ['cv', 'x', 'k', '', 'cv*', '1/x', 'log(x)', 'log(x-2)', 'bias(cv)', 'k*cv', '0.5*k*(cv-2)^2',
               'exp(1000*cv)', 'sqrt(cv-100)', 'x^-400', '((((', 'select(x,1,0)', 'min(cv, k)', 'bias(cv)+k',
               '1/(1+x^6)', 'exp(-x)', 'cv/0', 'k^2*cv', 'nan', 'acos(cv)', 'delta(cv)', 'step(x-1)', '1e308*cv*cv',
               'cos(x)+sqrt(-1)', 'cv+0/0', '(-1)^cv', '(-1)^x', 'k*log(-1)']
FLOATS = [0.0, -0.0, 0.1, 0.3, 1.5, -1.0, 1e-300, 1e300, 1e308, math.inf, -math.inf, math.nan, np.float32(0.5),
          np.float64(0.25), 0.3 * openmm.unit.nanometer, 3 * openmm.unit.angstrom]
INTS = [-1, 0, 1, 2, 3, 6, 12, 2**31 - 1, 2**31, 2**63, -2**31 - 1, np.int64(4), np.uint8(200), np.int32(-5)]
JUNK = [None, True, np.bool_(False), 'x', '3', [], [1, 2], {}, object(), b'1', 1j, range(3)]


def pick_scalar(rng, kind):
    """A value of the kind a parameter expects most of the time, else anything."""
    pools = {'float': FLOATS, 'int': INTS, 'str': EXPRESSIONS, 'bool': [True, False, np.bool_(True)]}
    if rng.random() < 0.75:
        return rng.choice(pools[kind])
    return rng.choice(FLOATS + INTS + EXPRESSIONS[:6] + JUNK)


def pick_group(rng, numParticles):
    """A group: usually valid integers, sometimes floats, bools, strings, huge or negative indices."""
    size = rng.choice([0, 1, 2, 3, 5, 8])
    indices = rng.sample(range(numParticles), min(size, numParticles))
    roll = rng.random()
    if roll < 0.55:
        return indices
    if roll < 0.7:
        return np.array(indices, dtype=rng.choice([np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint64]))
    if roll < 0.8:
        return np.array(indices, dtype=rng.choice([np.float64, np.float32, np.bool_]))
    if roll < 0.9 and indices:
        indices[rng.randrange(len(indices))] = rng.choice([0.5, 2.0, True, np.float64(1), '1', None, -1, 2**31, 2**40])
        return indices
    return rng.choice(JUNK + [5, 0.5, np.arange(4).reshape(2, 2)])


def is_integer_list(group):
    """Whether a group holds only (non-bool) integers: anything else must be refused."""
    try:
        items = list(group)
    except TypeError:
        return False
    return all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in items)


def pick_table(rng):
    """A Continuous1DFunction, sometimes with values or a range that are not finite."""
    values = [rng.uniform(-5, 5) for _ in range(rng.choice([2, 3, 10]))]
    low, high = 0.0, rng.choice([1.0, 10.0, 50.0])
    roll = rng.random()
    if roll < 0.15:
        values[rng.randrange(len(values))] = rng.choice([math.inf, -math.inf, math.nan, 1e300])
    elif roll < 0.3:
        high = rng.choice([math.inf, math.nan, 1e300])
    return openmm.Continuous1DFunction(values, low, high)


# ----- checks of results -----

def check_finite(what, value):
    array = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(array)):
        raise Silent('%s is not finite without an exception: %r' % (what, value if array.size < 5 else array.ravel()[:5]))


def check_histogram(counts, numBins, numPairs):
    counts = np.asarray(counts)
    if len(counts) != numBins or np.any(counts < 0) or counts.sum() > numPairs:
        raise Silent('impossible histogram: %d bins for %d, sum %d of %d pairs'
                     % (len(counts), numBins, counts.sum(), numPairs))


def read_everything(rng, force, context, numParticles):
    """Read each result a user can read, in a random order, checking each."""
    numPairs = force.getNumPairs()   # the Context's pairs: later changes of the groups do not reach it
    for _ in range(rng.randrange(1, 6)):
        what = rng.choice(['state', 'cv', 'histogram', 'accumulate', 'step', 'parameter', 'update'])
        try:
            if what == 'state':
                state = context.getState(getEnergy=True, getForces=True)
                check_finite('energy', state.getPotentialEnergy()._value)
                check_finite('forces', state.getForces(asNumpy=True)._value)
            elif what == 'cv':
                check_finite('CV', force.getCollectiveVariableValue(context))
            elif what in ('histogram', 'accumulate'):
                numBins = rng.choice([1, 10, 200, 5000, 0, -1, MAX_BINS + 1, 10**9, 2**31 - 1, 2**31, 2.5, '10', None,
                                      np.int64(50)] + ([MAX_BINS] if rng.random() < 0.02 else []))
                maxDistance = rng.choice([1.0, 0.5, 3.0, 1e-300, 1e300, 0.0, -1.0, math.nan, math.inf, '1'])
                frames = 1
                if what == 'histogram':
                    counts = force.getPairHistogram(context, numBins, maxDistance)
                else:
                    force.accumulatePairHistogram(context, numBins, maxDistance)
                    counts = force.getAccumulatedPairHistogram(context)
                    frames = force.getNumAccumulatedFrames(context)
                if isinstance(numBins, (int, np.integer)) and numBins > MAX_BINS:
                    raise Silent('a histogram of %d bins was allocated' % numBins)
                check_histogram(counts, int(numBins), frames * numPairs)
            elif what == 'step':
                context.getIntegrator().step(1)
            elif what == 'parameter' and force.getNumGlobalParameters() > 0:
                context.setParameter(force.getGlobalParameterName(0), pick_scalar(rng, 'float'))
            elif what == 'update':
                rng.choice(SETTERS)(rng, force, numParticles)
                force.updateParametersInContext(context)
        except CLEAR_ERRORS:
            pass


# ----- the API fuzzer -----

def set_switching(rng, force, n):
    force.setSwitchingFunction(rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 7, -1, 8, 2**31, 1.0, None]))


def set_number(rng, force, n):
    name, kind = rng.choice([('setR0', 'float'), ('setD0', 'float'), ('setN', 'int'), ('setM', 'int'),
                             ('setA', 'float'), ('setB', 'float'), ('setDMax', 'float'), ('setStretch', 'bool'),
                             ('setUsesPeriodicBoundaryConditions', 'bool')])
    getattr(force, name)(pick_scalar(rng, kind))


def set_expression(rng, force, n):
    getattr(force, rng.choice(['setCustomExpression', 'setEnergyExpression']))(pick_scalar(rng, 'str'))


def add_parameter(rng, force, n):
    if rng.random() < 0.3 and force.getNumGlobalParameters() > 0:
        force.setGlobalParameterDefaultValue(rng.choice([0, 1, -1, 5]), pick_scalar(rng, 'float'))
    else:
        force.addGlobalParameter(rng.choice(['k', 'cv0', 'k', '', 'cv', 'x', 3]), pick_scalar(rng, 'float'))


def add_table(rng, force, n):
    if rng.random() < 0.3 and force.getNumTabulatedFunctions() > 0:
        table = force.getTabulatedFunction(rng.choice([0, 0, 1, -1]))
        table.setFunctionParameters(*pick_table(rng).getFunctionParameters())
    else:
        force.addTabulatedFunction(rng.choice(['bias', 'bias', 'f', 'cv', '']), pick_table(rng))


def set_groups(rng, force, n):
    if rng.random() < 0.5:
        groups = (pick_group(rng, n),)
        force.setGroup(*groups)
    else:
        groups = (pick_group(rng, n), pick_group(rng, n), rng.choice([False, True, np.bool_(True), 1, None]))
        force.setGroups(*groups)
    if not all(is_integer_list(g) for g in groups[:2]):
        raise Silent('groups that are not lists of integers were accepted: %r' % (groups,))


def evaluate_switching(rng, force, n):
    check_finite('switching function', force.evaluateSwitchingFunction(pick_scalar(rng, 'float')))


SETTERS = [set_switching, set_number, set_number, set_expression, add_parameter, add_table, set_groups,
           evaluate_switching]


def new_force(rng, n):
    roll = rng.random()
    args = () if roll < 0.05 else (pick_group(rng, n),) if roll < 0.4 else (pick_group(rng, n), pick_group(rng, n))
    if len(args) == 2 and rng.random() < 0.4:
        args += (rng.choice([True, False, np.bool_(True), 1, 0.5]),)
    force = CoordinationForce(*args)
    if not all(is_integer_list(g) for g in args[:2]):
        raise Silent('groups that are not lists of integers were accepted: %r' % (args,))
    return force


def api_case(rng, platform):
    """Random constructor and setter calls, then a Context and reads of every result."""
    numParticles = rng.choice([2, 4, 9])
    try:
        force = new_force(rng, numParticles)
    except CLEAR_ERRORS:   # go on with a valid force: the calls after the constructor matter as much
        force = CoordinationForce(list(range(numParticles)))
    for _ in range(rng.randrange(12)):
        try:
            rng.choice(SETTERS)(rng, force, numParticles)
        except CLEAR_ERRORS:
            pass
    system = openmm.System()
    for _ in range(numParticles):
        system.addParticle(1.0)
    system.addForce(force)
    evaluate(rng, system, force, platform)


# ----- the XML mutation fuzzer -----

def base_system(rng):
    """A System holding a CoordinationForce in one of its configurations, built by the API fuzzer's
    own setters from valid values only."""
    numParticles = rng.choice([3, 6])
    system = openmm.System()
    for _ in range(numParticles):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(openmm.Vec3(2, 0, 0), openmm.Vec3(0.3, 2.1, 0), openmm.Vec3(-0.4, 0.5, 1.9))
    mode = rng.randrange(3)
    group = list(range(numParticles))
    force = [lambda: CoordinationForce(group), lambda: CoordinationForce(group[:2], group[1:]),
             lambda: CoordinationForce(group[:-1], group[1:], True)][mode]()
    force.setSwitchingFunction(rng.randrange(8))
    force.setCustomExpression('exp(-x^2)')
    force.setD0(rng.choice([0.0, 0.05]))
    if rng.random() < 0.5 or force.getSwitchingFunction() == CoordinationForce.Cubic:
        force.setDMax(rng.choice([0.9, 1.5]))
    force.setStretch(rng.random() < 0.5)
    force.setUsesPeriodicBoundaryConditions(rng.random() < 0.5)
    if rng.random() < 0.7:
        force.addGlobalParameter('k', 2.0)
        force.addGlobalParameter('cv0', 1.0)
        force.addTabulatedFunction('bias', openmm.Continuous1DFunction([0.0, 1.0, 0.5, 2.0], 0.0, 6.0))
        force.setEnergyExpression(rng.choice(['0.5*k*(cv-cv0)^2', 'bias(cv)+k*cv', 'k*bias(cv)']))
    system.addForce(force)
    return openmm.XmlSerializer.serialize(system)


def element_end(lines, start):
    """The line after the element that starts at line start (an opening or a self-closing tag)."""
    opening = re.match(r'(\s*)<(\w+)\b[^>]*(?<!/)>$', lines[start])
    if not opening:
        return start + 1
    closing = opening.group(1) + '</' + opening.group(2) + '>'
    return next((k + 1 for k in range(start, len(lines)) if lines[k] == closing), len(lines))


def close_open_elements(lines):
    """The closing tags of the elements still open at the end of lines, innermost first."""
    stack = []
    for line in lines:
        tag = re.match(r'(\s*)<(/?)(\w+)\b[^>]*?(/?)>$', line)
        if tag and tag.group(2):
            stack.pop()
        elif tag and not tag.group(4):
            stack.append(tag.group(1) + '</' + tag.group(3) + '>')
    return stack[::-1]


def mutate(rng, xml):
    """One to three mutations of a well-formed document that leave it well formed: a number or
    attribute value replaced; an element cut or duplicated; the document truncated after an
    element, its open elements closed. (A document cut inside or just after a tag makes OpenMM's
    own XML reader read past its end, with or without this plugin, as valgrind shows.)"""
    for _ in range(rng.randrange(1, 4)):
        lines = xml.split('\n')
        tags = [k for k, line in enumerate(lines) if re.match(r'\s*<\w', line) and k > 1]
        values = list(re.finditer(r'="([^"]*)"', xml))
        roll = rng.random()
        if roll < 0.45 and values:
            match = rng.choice(values)
            numeric = re.fullmatch(r'[-+.\deE]+', match.group(1)) is not None
            new = rng.choice(NUMBERS if numeric or rng.random() < 0.3 else EXPRESSIONS)
            xml = xml[:match.start(1)] + new + xml[match.end(1):]
        elif roll < 0.75 and tags:
            start = rng.choice(tags)
            end = element_end(lines, start)
            lines[start:end] = lines[start:end] * 2 if rng.random() < 0.5 else []
            xml = '\n'.join(lines)
        elif tags:
            kept = lines[:element_end(lines, rng.choice(tags))]
            xml = '\n'.join(kept + close_open_elements(kept)) + '\n'
    return xml


def xml_case(rng, platform):
    """A mutant of a System's XML: read, put in a Context, evaluated, its histogram read."""
    xml = mutate(rng, base_system(rng))
    system = openmm.XmlSerializer.deserialize(xml)
    forces = [_castForce(system.getForce(k)) for k in range(system.getNumForces())]
    forces = [f for f in forces if f is not None]
    if forces:
        evaluate(rng, system, forces[0], platform)


def evaluate(rng, system, force, platform):
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), platform)
    numParticles = system.getNumParticles()
    positions = np.array([[rng.uniform(-1, 2) for _ in range(3)] for _ in range(numParticles)])
    if rng.random() < 0.05 and numParticles > 0:
        positions[rng.randrange(numParticles)] = rng.choice([math.nan, math.inf, 1e300])
    context.setPositions(positions)
    read_everything(rng, force, context, numParticles)


# ----- one case -----

CASES = {'xml': xml_case, 'api': api_case, 'plumed': fuzz_plumed_cases.plumed_case}
# Cases that crash or hang on purpose, for the test of fuzz_coordination's handling of them.
SELF_TESTS = {'abort': lambda rng, platform: os.abort(), 'sleep': lambda rng, platform: time.sleep(3600)}


def case_rng(kind, seed, index):
    return random.Random('%s:%d:%d' % (kind, seed, index))


def run_case(kind, seed, index, platformName='Reference'):
    """Run case (kind, seed, index) here; return (outcome, detail)."""
    rng = case_rng(kind, seed, index)
    try:
        {**CASES, **SELF_TESTS}[kind](rng, openmm.Platform.getPlatformByName(platformName))
    except Silent as error:
        return 'silent', str(error)
    except fuzz_plumed_cases.Unclear as error:
        return 'unexpected', str(error)
    except CLEAR_ERRORS as error:
        return 'refused', '%s: %s' % (type(error).__name__, str(error).splitlines()[0] if str(error) else '')
    except Exception as error:
        return 'unexpected', '%s: %s' % (type(error).__name__, error)
    return 'ok', ''


def describe_case(kind, seed, index):
    """What a case does, for a report: the mutant document of an xml case."""
    if kind == 'xml':
        rng = case_rng(kind, seed, index)
        return mutate(rng, base_system(rng))
    if kind == 'plumed':
        return fuzz_plumed_cases.describe(case_rng(kind, seed, index))
    return 'api case %d of seed %d (run it with --case api:%d:%d)' % (index, seed, seed, index)
