"""Reading a PLUMED input (plumed.dat) into this package's forces: the subset PLUMED and this plugin
share, on the Context's platform (GPU-resident on CUDA). docs/plumed-input.md lists what is read.

>>> from openmmcoordination import plumed
>>> inp = plumed.load('plumed.dat', system, topology, integrator)   # adds the forces to system
>>> inp['c1']                        # what each label built: here a CoordinationForce
>>> simulation = Simulation(topology, system, integrator)
>>> inp.attach(simulation)           # PRINT: COLVAR reporters; METAD: the HILLS file; OPES_METAD: KERNELS
>>> inp.step(simulation, 100000)     # runs (and deposits hills or kernels where there is a METAD or OPES_METAD)
>>> inp.close()

COORDINATION and CONTACTMAP become CoordinationForces; CUSTOM, MATHEVAL, COMBINE and SORT of them
Lepton expressions; RESTRAINT, UPPER_WALLS, LOWER_WALLS and BIASVALUE terms of one
CoordinationBiasForce energy (a DISTANCE a distance CV of that force, addDistance); METAD a Metadynamics;
OPES_METAD and OPES_METAD_EXPLORE an OPES; PRINT a PlumedColvarReporter; DUMPDERIVATIVES a
PlumedDerivativesReporter. FLUSH, DEBUG, MOLINFO, WHOLEMOLECULES and ENDPLUMED, which steer PLUMED's
own run, are accepted and logged. Anything else raises PlumedInputError (a ValueError) naming the
line, the action and the keyword. The CVs without NOPBC take the nearest periodic image where the
System uses periodic boundary conditions, plain distances where it does not, as PLUMED under
openmm-plumed (which passes PLUMED the box only then); load's ``periodic`` chooses otherwise.

The modules: syntax (lines, actions, keywords, UNITS), expressions (Lepton), cvs (GROUP, COORDINATION,
CONTACTMAP, DISTANCE), biases (functions, biases, METAD, OPES, PRINT, DUMPDERIVATIVES), outputs (the
COLVAR, derivatives, HILLS and KERNELS files), command (`openmm-coordination plumed`).
"""

import contextlib
import copy
import os
import sys
import types

import numpy as np

import openmm
from openmm import unit

from openmmcoordination.plumed import biases, coordinationnumbers, cvs
from openmmcoordination.plumed.biases import number
from openmmcoordination.coordination import CoordinationBiasForce
from openmmcoordination.metadynamics import Metadynamics
from openmmcoordination.opes import OPES
from openmmcoordination.plumed.outputs import (HillsWriter, KernelsWriter, PlumedColvarReporter,
                                              PlumedDerivativesReporter, backupFile)
from openmmcoordination.plumed.expressions import substitute
from openmmcoordination.plumed.syntax import PlumedInputError, Units, Value, parseInput

__all__ = ['load', 'PlumedInput', 'PlumedInputError', 'PlumedColvarReporter', 'PlumedDerivativesReporter',
           'HillsWriter', 'KernelsWriter']

_CV_READERS = {'GROUP': ('group', cvs.readGroup), 'COORDINATION': ('coordination', cvs.readCoordination),
               'CONTACTMAP': ('coordination', cvs.readContactMap), 'DISTANCE': ('distance', cvs.readDistance)}
_READERS = {'CUSTOM': biases.readFunction, 'MATHEVAL': biases.readFunction,
            'COMBINE': biases.readCombine, 'RESTRAINT': biases.readBias,
            'UPPER_WALLS': biases.readBias, 'LOWER_WALLS': biases.readBias,
            'BIASVALUE': biases.readBias, 'METAD': biases.readMetad, 'PRINT': biases.readPrint,
            'DUMPDERIVATIVES': biases.readDumpDerivatives, 'SORT': None, 'OPES_METAD': biases.readOpes,
            'OPES_METAD_EXPLORE': biases.readOpes, 'COORDINATIONNUMBER': coordinationnumbers.readCoordinationNumber,
            'COORDINATION_MOMENTS': coordinationnumbers.readCoordinationNumber,
            'MOMENTS': coordinationnumbers.readMoments, 'MORE_THAN': coordinationnumbers.readVectorFunction,
            'LESS_THAN': coordinationnumbers.readVectorFunction, 'BETWEEN': coordinationnumbers.readVectorFunction,
            'SUM': coordinationnumbers.readVectorSum, 'MEAN': coordinationnumbers.readVectorSum}
#: The actions that only steer PLUMED's own run: accepted, and logged with the reason.
_ACCEPTED = ('FLUSH', 'DEBUG', 'ENDPLUMED', 'MOLINFO', 'WHOLEMOLECULES')
#: The components PLUMED's METAD and OPES set in their update phase, after the step's deposit: PRINT writes
#: them after it (PlumedColvarReporter's late columns), the bias itself from before it.
_LATE_COMPONENTS = {('metad', 'rct'), ('opes', 'rct'), ('opes', 'zed'), ('opes', 'neff'), ('opes', 'nker')}
#: The actions load() reads.
ACTIONS = ('UNITS',) + tuple(_CV_READERS) + tuple(_READERS) + _ACCEPTED


def load(source, system=None, topology=None, integrator=None, periodic=None):
    """Read a PLUMED input and build its forces, adding them to ``system``.

    Parameters
    ----------
    source: str or path
        a file name, or the input itself (a string with a newline)
    system: System (optional)
        the System to add the forces to (a METAD adds its bias force on construction); atom numbers
        are checked against its particles. Default: a new, empty System of its own (``.system``),
        for reading an input without one
    topology: openmm.app.Topology (optional)
        checks the atom numbers where no System is given
    integrator: Integrator (optional)
        METAD's TEMP is checked against its temperature (and taken from it where TEMP is absent)
    periodic: None, True or False (optional)
        whether the CVs without NOPBC (COORDINATION, CONTACTMAP, COORDINATIONNUMBER, DISTANCE) take the
        nearest periodic image. None (the default) gives what PLUMED computes under openmm-plumed, whose
        PlumedForce passes PLUMED the box only where the System uses periodic boundary conditions: the
        nearest image where the System as given (before the input's forces are added; without a System,
        the new empty one) uses periodic boundary conditions, else distances without periodic images,
        as with NOPBC. True: the nearest image, in the System's default box where no force of it is
        periodic (PLUMED's driver with a box, its regtests). False: no periodic images, as NOPBC.
        ``inp.periodic`` is the choice; where it is False, each CV without NOPBC logs why (``describe()``)

    Returns a PlumedInput; raises PlumedInputError (a ValueError) naming the line, the action and
    the keyword of the first thing it cannot run exactly, before anything is added to the System;
    ValueError for a ``periodic`` other than None, True or False.
    """
    if periodic is not None and not isinstance(periodic, bool):
        raise ValueError('plumed.load: periodic must be None, True or False, got %r' % (periodic,))
    if isinstance(source, os.PathLike) or (isinstance(source, str) and '\n' not in source):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise PlumedInputError(path, None, None, None, 'no such file (a PLUMED input given as a string needs a newline)')
        with open(path) as f:
            return PlumedInput(f.read(), path, os.path.dirname(os.path.abspath(path)), system, topology, integrator,
                               periodic)
    return PlumedInput(source, 'input', os.getcwd(), system, topology, integrator, periodic)


class PlumedInput(object):
    """What load() built from a PLUMED input.

    ``inp[label]`` is what the labelled action built: a list of particle indices (GROUP), a
    CoordinationForce (COORDINATION, CONTACTMAP: the template; the System holds copies), the pair of
    particle indices (DISTANCE), a Lepton expression of the CVs (CUSTOM, MATHEVAL, COMBINE; SORT's
    label.1 and label.N), the energy term in kJ/mol (RESTRAINT, walls, BIASVALUE), the Metadynamics
    (METAD), the OPES (OPES_METAD). ``actions`` are the actions read, each with ``python`` (what it
    became) and ``log`` (what was replaced or accepted without being computed); ``forces``
    the forces added to ``system``; ``biasForce`` the CoordinationBiasForce of the biases (or None);
    ``metadynamics`` the Metadynamics (or None); ``opes`` the OPES (or None); ``units`` the UNITS in force;
    ``periodic`` whether the CVs without NOPBC take the nearest periodic image (load's ``periodic``).
    """

    def __init__(self, text, source, directory, system, topology, integrator, periodic=None):
        self.source, self.directory, self.integrator = source, directory, integrator
        self.system = openmm.System() if system is None else system
        self.periodic, self.periodicNote = _periodicChoice(periodic, self.system)
        if system is not None:
            self.numAtoms, self.atomSource = system.getNumParticles(), 'System'
        elif topology is not None:
            self.numAtoms, self.atomSource = topology.getNumAtoms(), 'Topology'
        else:
            self.numAtoms, self.atomSource = None, None
        self.units, self.groups, self.values, self.actions = Units(), {}, {}, []
        self.forces, self.biasForce, self.metadynamics, self.opes, self.python = [], None, None, None, []
        self._cvSources, self._reporters, self._hills, self._derivativeContexts = {}, [], None, {}
        self._kernels = None         # the KernelsWriter of OPES_METAD (attach)
        self.opesBox = None          # the default box that sized the grid of OPES_METAD on a DISTANCE (nm)
        actions = parseInput(text, source)
        self._inputLabels = {action.label for action in actions if action.label}
        for action in actions:
            self._read(action)
        self._build()

    def __getitem__(self, label):
        return self.values[label].obj

    def __contains__(self, label):
        return label in self.values

    def labels(self):
        """The labels of the input, in order (not the names label_x that functions give a DISTANCE's components)."""
        return [label for label, value in self.values.items() if not getattr(value, 'alias', None)]

    def _read(self, action):
        if action.name == 'UNITS':
            if any(a.name != 'GROUP' for a in self.actions):
                raise action.fail(None, 'must come before the actions whose numbers it converts')
            self.units = Units.read(action)
            action.python.append('# lengths in %s (x %g nm), energies in %s (x %g kJ/mol), times in %s (x %g ps)' % (
                self.units.lengthName, self.units.length, self.units.energyName, self.units.energy,
                self.units.timeName, self.units.time))
        elif action.name in _ACCEPTED:
            self._accept(action)
        elif action.name in _CV_READERS or action.name in _READERS:
            if action.label in self.values:
                raise action.fail('LABEL', 'the label %r is used twice (line %d)', action.label,
                                  self.values[action.label].action.line)
            if action.name in ('METAD', 'OPES_METAD', 'OPES_METAD_EXPLORE'):
                other = next((v.action for v in self.values.values() if v.kind in ('metad', 'opes')), None)
                if other is not None:
                    raise action.fail(None, 'a second adaptive bias (%s at line %d): one METAD or OPES per input',
                                      other.name, other.line)
            if action.name in _CV_READERS:
                kind, reader = _CV_READERS[action.name]
                built = reader(self, action)
                value = Value(action, kind, built[0] if kind == 'distance' else built)
                if kind == 'distance':
                    value.periodic = built[1]
                    if built[2]:
                        # COMPONENTS: the values label.x, .y, .z (PLUMED has no label alone then), each named
                        # label_x (made unique) in a function's expression and as a distance CV of a bias force
                        names = []
                        for k, axis in enumerate('xyz'):
                            names.append(self._componentName('%s.%s' % (action.label, axis)))
                            self.values['%s.%s' % (action.label, axis)] = Value(action, kind, built[0], periodic=built[1],
                                                                                component=k, cvName=names[-1])
                        action.python.append('# %s in a function\'s expression and as the distance CVs of a bias force'
                                             % ', '.join(names))
                        self.actions.append(action)
                        return
                if kind == 'group':
                    self.groups[action.label or 'group'] = built
            elif action.name in ('SORT', 'COORDINATIONNUMBER', 'COORDINATION_MOMENTS', 'MOMENTS', 'SUM', 'MEAN'):
                components = _READERS[action.name](self, action) if action.name != 'SORT' else biases.readSort(self, action)
                self.values.update(components)
                self.actions.append(action)
                return
            else:
                value = _READERS[action.name](self, action)
            self.values[action.label or '@%d' % action.line] = value
        else:
            raise action.fail(None, 'not supported: this package reads %s (docs/plumed-input.md)', ', '.join(ACTIONS))
        self.actions.append(action)

    def _componentName(self, label):
        """The name of a DISTANCE's component ``label`` (label.x) in Lepton expressions and as a distance CV
        of a bias force: "_" for "." (label_x), followed by "_" until it is none of the input's labels, of
        the values read so far and of the other components' names."""
        taken = self._inputLabels | set(self.values) | {getattr(v, 'cvName', None) for v in self.values.values()}
        name = label.replace('.', '_')
        while name in taken:
            name += '_'
        return name

    def _accept(self, action):
        """FLUSH, DEBUG, ENDPLUMED, MOLINFO and WHOLEMOLECULES: accepted, each logged once with the reason
        (WHOLEMOLECULES is checked against NOPBC once the whole input is read, where the CVs take the
        nearest image)."""
        if action.name == 'FLUSH':
            stride = action.integer('STRIDE')
            action.finish()
            action.log.append('FLUSH%s accepted: the files this package writes (COLVAR, derivatives, HILLS) are '
                              'flushed at every line' % ('' if stride is None else ' STRIDE=%d' % stride))
        elif action.name == 'DEBUG':
            if action.has('NOVIRIAL'):
                raise action.fail('NOVIRIAL', 'not supported: it takes the biases out of PLUMED\'s virial, which '
                                  'changes a run under pressure control')
            for key in list(action.keywords):
                action.take(key) if action.keywords[key] is not True else action.flag(key)
            action.finish()
            action.log.append('DEBUG%s accepted: it changes only what PLUMED writes to its own log' % (
                ''.join(' ' + k for k in action.keywords)))
        elif action.name == 'ENDPLUMED':
            action.finish()
        elif action.name == 'MOLINFO':
            for key in list(action.keywords):
                action.take(key) if action.keywords[key] is not True else action.flag(key)
            action.finish()
            action.log.append('MOLINFO accepted: nothing in this input needs it (it names the residues and atoms of '
                              '@ selections, which this package does not read: they are refused where they stand)')
        else:
            for key in ('ENTITY0', 'STRIDE', 'EMST', 'ADDREFERENCE', 'RESIDUES', 'MOLTYPE'):
                action.take(key) if action.keywords.get(key) is not True else action.flag(key)
            for key in list(action.keywords):
                if key.startswith('ENTITY'):
                    action.take(key)
            action.finish()
            if self.periodic:
                action.log.append('WHOLEMOLECULES accepted: every CV of this input takes the nearest periodic image of '
                                  'each pair, so molecules made whole change no value')
            else:
                action.log.append('WHOLEMOLECULES accepted: the CVs take no periodic images (PlumedInput.periodic), '
                                  'and PLUMED without a box moves no atom to make molecules whole')

    def _valueOf(self, name):
        """The Value of a PRINT-able name: a label (SORT's s.1 included), or label.component."""
        return self.values[name] if name in self.values else self.values[name.split('.')[0]]

    def _vectorComponent(self, name):
        """``name`` as the input's values hold it: a COORDINATIONNUMBER's component label.mean is PLUMED
        2.10's action label_mean (as PRINT reads it)."""
        base, dot, component = name.partition('.')
        if (dot and name not in self.values and getattr(self.values.get(base), 'kind', None) == 'vector'
                and base + '_' + component in self.values):
            return base + '_' + component
        return name

    def _ofKind(self, *kinds):
        return [(label, value) for label, value in self.values.items() if value.kind in kinds]

    def _printedCVs(self):
        """The CVs PRINT needs (directly, through functions, through a bias's .bias), and those of the
        functions DUMPDERIVATIVES differentiates (at their arguments' values)."""
        needed = set()
        for _, printed in self._ofKind('print', 'derivatives'):
            for arg in printed.args:
                value = self._valueOf(arg)
                if value.kind == 'coordination' and printed.kind == 'print':
                    needed.add(arg)
                elif value.kind in ('function', 'bias'):
                    needed |= {c for c in value.cvs if self.values[c].kind == 'coordination'}   # not DISTANCEs
        return needed

    def _build(self):
        """Create the forces once every action is read; the System is touched only when all succeeded."""
        whole = next((a for a in self.actions if a.name == 'WHOLEMOLECULES'), None)
        nopbc = next((a for a in self.actions if a.name != 'WHOLEMOLECULES' and a.has('NOPBC')), None)
        if whole is not None and nopbc is not None and self.periodic:
            raise whole.fail(None, 'not supported with NOPBC (line %d, %s): that CV is computed from the positions as '
                             'WHOLEMOLECULES makes them, which this package does not do', nopbc.line, nopbc.name)
        biases = self._ofKind('bias')
        metad = next((value for _, value in self._ofKind('metad', 'opes')), None)
        # a bias term on a DISTANCE (r in nm) is a term of the same force, r its distance CV (addDistance); a
        # function's DISTANCE is in the input's length unit: its CV (nm) divided by the unit
        distanceNames = self._distanceNames(biases)
        inUnits = {label: name if self.units.length == 1 else '%s/%s' % (name, number(self.units.length))
                   for label, name in distanceNames.items()}
        terms = [(value.action, substitute(term, inUnits) if label is None else substitute(term, {'r': distanceNames[label]}))
                 for _, value in biases for label, term, _ in value.parts]
        inBias = set().union(*[value.cvs for _, value in biases]) | (self._printedCVs() - set(metad.labels if metad else []))
        inBias -= set(distanceNames)
        toAdd = []
        if inBias or distanceNames:
            first = terms[0][0] if terms else next(v.action for v in self.values.values() if v.kind in ('print', 'derivatives'))
            expression = ' + '.join(term for _, term in terms) or '0'
            try:
                bias = CoordinationBiasForce(expression)
            except openmm.OpenMMException as error:
                raise first.fail(None, 'the energy %r: %s', expression, str(error).strip()) from None
            for label, value in self._ofKind('coordination'):
                if label in inBias:
                    try:
                        bias.addCollectiveVariable(label, copy.deepcopy(value.obj))
                    except openmm.OpenMMException as error:
                        raise value.action.fail('NOPBC' if value.action.has('NOPBC') else None,
                                                'cannot join the other CVs in one CoordinationBiasForce: %s',
                                                str(error).strip()) from None
                    self._cvSources[label] = (bias, bias.getNumCollectiveVariables() - 1)
            distances = []
            for label, name in distanceNames.items():
                value = self.values[label]
                if any(d[0] == name for d in distances):
                    continue                      # a component biased alone and inside a function: one CV
                component = getattr(value, 'component', None)
                distances.append((name, value.obj[0], value.obj[1], -1 if component is None else component,
                                  bool(value.periodic)))
                bias.addDistance(*distances[-1])
                value.action.log.append('%s: a bias on it is a term of the CoordinationBiasForce of the biases, the '
                                        'distance its CV %r (CoordinationBiasForce.addDistance: %s)' % (
                                            getattr(value, 'alias', None) or label, name,
                                            'the nearest image, the shortest as PLUMED\'s in any box'
                                            if value.periodic else 'no periodic image'))
            bias.setName('PLUMED bias')
            self.biasForce = bias
            toAdd.append(bias)
            self.python += ['bias = CoordinationBiasForce(%r)' % expression]
            self.python += ['bias.addCollectiveVariable(%r, copy.deepcopy(%s))' % (l, l) for l in self._cvSources]
            self.python += ['bias.addDistance(%r, %d, %d, %d, %r)' % d for d in distances]
            self.python += ['system.addForce(bias)']
        if metad is not None:
            extraGroup = self._extraBiasGroup(metad, biases, toAdd)
            try:
                if metad.kind == 'metad':
                    self.metadynamics = built = Metadynamics(self.system, **metad.spec)
                else:
                    spec = dict(metad.spec)
                    arguments = [spec.pop(k) for k in ('variables', 'temperature', 'barrier', 'pace')]
                    if extraGroup is not None:
                        spec['extraBias'] = extraGroup
                    self.opes = built = OPES(self.system, *arguments, **spec)
            except ValueError as error:
                raise metad.action.fail(None, str(error)) from None
            metad.obj = built
            self.forces.append(built.force)
            for index, label in enumerate(metad.labels):
                self._cvSources.setdefault(label, (built.force, index))
        for force in toAdd:
            self.system.addForce(force)
            self.forces.append(force)

    def _extraBiasGroup(self, opes, biases, toAdd):
        """OPES_METAD's EXTRA_BIAS: the force group (the highest free one below the group OPES will take)
        that the forces of the static biases (``toAdd``: the CoordinationBiasForce of the bias terms, on
        coordination numbers, functions of them and DISTANCEs) are put in; None without EXTRA_BIAS. The forces sum every static bias of the
        input, so EXTRA_BIAS must name them all."""
        labels = opes.spec.get('extraBias')
        if labels is None:
            return None
        every = sorted(label for label, _ in biases)
        if sorted(set(labels)) != every:
            raise opes.action.fail('EXTRA_BIAS', 'must name every bias of the input (%s), which are summed in one force '
                                   'here, got %s', ','.join(every), ','.join(labels))
        free = sorted(set(range(32)) - set(force.getForceGroup() for force in self.system.getForces()))
        if len(free) < 2:
            raise opes.action.fail('EXTRA_BIAS', 'needs two free force groups of the System, one for the biases and '
                                   'one for OPES, got %d', len(free))
        group = free[-2]
        for force in toAdd:
            force.setForceGroup(group)
        self.python += ['for force in system.getForces()[-%d:]: force.setForceGroup(%d)   # EXTRA_BIAS=%s: '
                        'OPES(..., extraBias=%d)' % (len(toAdd), group, ','.join(labels), group)]
        opes.action.log.append('EXTRA_BIAS=%s: the biases\' forces in force group %d, whose energy enters the kernels\' '
                               'weights (OPES(extraBias=%d))' % (','.join(labels), group, group))
        return group

    def _distanceNames(self, biases):
        """{DISTANCE label (label.x of a component): the name of its distance CV in the bias force} for
        the DISTANCEs that a bias (RESTRAINT, walls, BIASVALUE) takes, as its argument or inside a
        function, in the input's order: the label; a component's ``cvName`` (label_x, made unique
        against the input's labels when the DISTANCE was read: _componentName), which is also the
        name of the hidden Value a function's expression uses (biases._componentArguments), so a
        component biased alone and inside a function is one CV."""
        biased = {label for _, value in biases for label, _, _ in value.parts if label is not None}
        biased |= {label for _, value in biases for label in value.cvs if self.values[label].kind == 'distance'}
        return {label: getattr(value, 'cvName', None) or label for label, value in self._ofKind('distance')
                if label in biased}

    def getValues(self, context, names, state=None):
        """The values of PRINT-able names (labels of values, label.bias of biases and METAD) in the
        input's units (a list of floats): the CVs from the forces in the Context, the functions and
        bias terms evaluated from them on the host, distances from the positions (from ``state`` if
        it holds them)."""
        cvs = {}
        for force in {id(f): f for f, _ in self._cvSources.values()}.values():
            current = force.getCollectiveVariableValues(context)
            cvs.update({label: current[i] for label, (f, i) in self._cvSources.items() if f is force})
        positions = None
        results = []
        for name in map(self._vectorComponent, names):
            label, dot, _ = (name, '', '') if name in self.values else name.partition('.')
            if label not in self.values:
                raise ValueError('PlumedInput.getValues: %r is no value of the input (its labels: %s)' % (
                    name, ', '.join(sorted(l for l in self.values if l[0] not in '@_'))))
            value = self.values[label]
            if value.kind in ('vector', 'transformed', 'moments', 'group', 'print'):
                raise ValueError('PlumedInput.getValues: %r is %s, not one number' % (name, {
                    'vector': 'the vector of c_i of a COORDINATIONNUMBER: ask for %s.1 ... %s.%d' % (
                        label, label, len(getattr(value, 'elements', []))),
                    'transformed': 'a function of each c_i of a COORDINATIONNUMBER: ask for its SUM or MEAN',
                    'moments': 'the moments of a COORDINATIONNUMBER: ask for %s' % ', '.join(getattr(value, 'components', []))
                    }.get(value.kind, 'a %s' % value.action.name)))
            if value.kind == 'distance' or (dot and value.kind == 'bias' and (any(l for l, _, _ in value.parts) or
                                                                              biases.distancesOf(self, value))) or (
                    value.kind == 'function' and biases.distancesOf(self, value)):
                if positions is None:
                    state = state if state is not None and _hasPositions(state) else context.getState(getPositions=True)
                    positions = (state.getPositions(asNumpy=True).value_in_unit(unit.nanometer),
                                 state.getPeriodicBoxVectors(asNumpy=True).value_in_unit(unit.nanometer))
            if value.kind == 'coordination':
                if label not in cvs:
                    raise ValueError('PlumedInput.getValues: %r is computed by no force of the System: nothing in the '
                                     'input prints, biases or dumps it' % (label,))
                results.append(cvs[label])
            elif value.kind == 'function':
                if any(c not in cvs and self.values[c].kind == 'coordination' for c in value.cvs):
                    # a COORDINATIONNUMBER's component, or a function of CVs, that nothing prints or biases
                    raise ValueError('PlumedInput.getValues: %r is computed by no force of the System: nothing in the '
                                     'input prints, biases or dumps it' % (name,))
                # a function of DISTANCEs (an argument of METAD) takes them from the positions, in the input's unit
                local = dict(cvs, **{d: _distance(self.values[d], *positions)/self.units.length
                                     for d in biases.distancesOf(self, value)})
                results.append(value.expression.evaluate(local))
            elif value.kind == 'distance':
                results.append(_distance(value, *positions)/self.units.length)
            elif value.kind == 'opes':
                component = name.partition('.')[2]
                if component == 'bias':
                    # OPES's variables as its grid has them (a function evaluated from its bias force's CVs, which
                    # are the function's inner ones; a DISTANCE in the input's unit)
                    at = self.opes.getCollectiveVariables(types.SimpleNamespace(context=context))
                    results.append(self.opes.getBiasAt(at).value_in_unit(unit.kilojoules_per_mole)/self.units.energy)
                else:
                    # PLUMED's values after the last update; before any, those OPES starts from (rct = k_B T
                    # ln(epsilon^(1-1/gamma)), neff from the same first weight: src/opes/OPESmetad.cpp)
                    history = self.opes.getHistory()
                    if len(history.steps):
                        last = getattr(history, component)[-1]
                        last = last.value_in_unit(unit.kilojoules_per_mole) if unit.is_quantity(last) else last
                    else:
                        last = dict(zip(('rct', 'zed', 'neff', 'nker'), self.opes._statistics()))[component]
                    results.append(float(last)/(self.units.energy if component == 'rct' else 1.0))
            elif value.kind == 'metad':
                component = name.partition('.')[2]
                group = self.metadynamics.force.getForceGroup()
                energy = context.getState(getEnergy=True, groups={group}).getPotentialEnergy()
                energy = energy.value_in_unit(unit.kilojoules_per_mole)
                _, factors = self.metadynamics.getReweightingFactors()
                rct = float(factors[-1].value_in_unit(unit.kilojoules_per_mole)) if len(factors) else 0.0
                results.append({'bias': energy, 'rct': rct, 'rbias': energy - rct}[component]/self.units.energy)
            else:
                # a function's DISTANCEs from the positions, in the input's unit; a DISTANCE argument's r in nm
                local = dict(cvs, **{d: _distance(self.values[d], *positions)/self.units.length
                                     for d in biases.distancesOf(self, value)})
                total = sum(expression.evaluate({'r': _distance(self.values[l], *positions)} if l else local)
                            for l, _, expression in value.parts)
                results.append(total/self.units.energy)
        return results

    def getDerivatives(self, context, names, state=None):
        """DUMPDERIVATIVES' numbers of the coordination numbers and DISTANCEs ``names`` at the Context's
        positions: an array (parameters, len(names)), the rows the x, y, z of each atom of the CV
        (biases.derivativeAtoms; a DISTANCE's two atoms) then the 9 box derivatives, in the input's units;
        of a function, its derivatives with respect to its arguments (Expression.gradient, analytic, at
        their values: DISTANCEs from the positions), as PLUMED's. A DISTANCE's (whole or a component) are
        NumPy's (_distanceDerivatives). The atoms' derivatives are the forces of a copy
        of each CV on the Context's platform (dcv/dx = -force of energy cv); the box's, -sum over pairs of
        dfunc d (x) d, from the force's own switching function (evaluateSwitchingFunction)."""
        if state is None or not _hasPositions(state):
            state = context.getState(getPositions=True)
        positions = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
        box = state.getPeriodicBoxVectors(asNumpy=True).value_in_unit(unit.nanometer)
        names = [self._vectorComponent(name) for name in names]
        for name in names:
            if name not in self.values:
                raise ValueError('PlumedInput.getDerivatives: %r is no value of the input (its labels: %s)' % (
                    name, ', '.join(sorted(l for l in self.values if l[0] not in '@_'))))
        cvNames = [name for name in names if self.values[name].kind == 'coordination']
        if cvNames:
            helper = self._derivativeContext(context, cvNames)
            helper.setPeriodicBoxVectors(*box)
            helper.setPositions(positions)
        columns = []
        for name in names:
            value = self.values[name]
            if value.kind == 'function':
                at = dict(zip(value.local.variables, self.getValues(context, value.args, state)))
                columns.append(np.array(value.local.gradient(at)))
                continue
            if value.kind == 'distance':
                # dimensionless by the atoms; the box's in the input's length unit
                derivatives = _distanceDerivatives(value, positions, box)
                derivatives[6:] /= self.units.length
                columns.append(derivatives)
                continue
            index = cvNames.index(name)
            forces = helper.getState(getForces=True, groups={index}).getForces(asNumpy=True)
            forces = forces.value_in_unit(unit.kilojoules_per_mole/unit.nanometer)
            atoms = biases.derivativeAtoms(value)
            columns.append(np.concatenate([-forces[atoms].ravel()*self.units.length,
                                           _boxDerivatives(value.obj, positions, box).ravel()]))
        return np.array(columns).T + 0.0     # no -0.0 where a force is 0 (PLUMED prints 0.0000 there)

    def _derivativeContext(self, context, names):
        """A Context on the simulation's platform holding a copy of each CV in ``names``, in force group k."""
        key = tuple(names)
        if key not in self._derivativeContexts:
            system = openmm.System()
            for i in range(context.getSystem().getNumParticles()):
                system.addParticle(1.0)
            for index, name in enumerate(names):
                force = copy.deepcopy(self.values[name].obj)
                force.setForceGroup(index)
                system.addForce(force)
            system.setDefaultPeriodicBoxVectors(*context.getState().getPeriodicBoxVectors())
            platform = context.getPlatform()
            properties = {}
            for property in platform.getPropertyNames():
                try:
                    properties[property] = platform.getPropertyValue(context, property)
                except Exception:
                    pass
            integrator = openmm.VerletIntegrator(0.001)
            try:
                helper = openmm.Context(system, integrator, platform, properties)
            except Exception:
                helper = openmm.Context(system, integrator, platform)
            self._derivativeContexts[key] = (helper, integrator)
        return self._derivativeContexts[key][0]

    def outputFiles(self):
        """The files attach() writes, as the input names them: each PRINT's FILE, each DUMPDERIVATIVES',
        then METAD's HILLS or OPES_METAD's KERNELS."""
        return ([p.file for _, p in self._ofKind('print') if p.file] + [d.file for _, d in self._ofKind('derivatives')]
                + [m.hills for _, m in self._ofKind('metad')]
                + [o.kernels for _, o in self._ofKind('opes') if o.kernels])

    def attach(self, simulation, directory=None):
        """Append a PlumedColvarReporter per PRINT to the simulation's reporters (each writing the
        current step's line at once, as PLUMED prints step 0) and open METAD's HILLS file or OPES_METAD's
        KERNELS file (a KernelsWriter; not with EXTRA_BIAS). Relative
        file names are taken in ``directory`` (default: the working directory). Returns the reporters."""
        directory = os.getcwd() if directory is None else directory
        path = lambda name: name if os.path.isabs(name) else os.path.join(directory, name)
        # every file is opened anew, an existing one first backed up as PLUMED does (bck.N.FILE: backupFile);
        # two actions that name the same file would write over each other
        outputs = ([p for _, p in self._ofKind('print') if p.file] + [d for _, d in self._ofKind('derivatives')]
                   + [m for _, m in self._ofKind('metad')] + [o for _, o in self._ofKind('opes') if o.kernels])
        opened = {}
        for output in sorted(outputs, key=lambda o: o.action.line):
            name = output.file if output.kind in ('print', 'derivatives') else (
                output.hills if output.kind == 'metad' else output.kernels)
            full = os.path.realpath(path(name))
            if full in opened and full != '/dev/null':
                raise output.action.fail('FILE', '%s is also written by line %d (%s): one file per action here',
                                         name, opened[full].line, opened[full].name)
            opened[full] = output.action
        for output in sorted(outputs, key=lambda o: o.action.line):
            name = output.file if output.kind in ('print', 'derivatives') else (
                output.hills if output.kind == 'metad' else output.kernels)
            with _opening(output):
                backup = backupFile(path(name))
            if backup is not None:
                output.action.log.append('%s existed: backed up as %s, as PLUMED does' % (name, backup))
        for _, printed in self._ofKind('print'):
            distances = any(self._valueOf(arg).kind in ('distance', 'bias') or (self._valueOf(arg).kind == 'function'
                            and biases.distancesOf(self, self._valueOf(arg))) for arg in printed.args)
            # the components PLUMED's METAD and OPES set in their update, after the step's deposit
            late = [i for i, arg in enumerate(printed.args) if '.' in arg and arg not in self.values and (
                self._valueOf(arg).kind, arg.partition('.')[2]) in _LATE_COMPONENTS]
            adaptive = self.metadynamics or self.opes
            with _opening(printed):
                reporter = PlumedColvarReporter(sys.stdout if printed.file is None else path(printed.file), printed.stride,
                                                lambda context, state, args=printed.args: self.getValues(context, args, state),
                                                printed.args, printed.fmt, ['positions'] if distances else [],
                                                timeUnit=self.units.time, late=late,
                                                pace=adaptive.frequency if late else None)
            if simulation.currentStep % printed.stride == 0:
                reporter.report(simulation, simulation.context.getState(getPositions=distances), defer=False)
            simulation.reporters.append(reporter)
            self._reporters.append(reporter)
        for _, dumped in self._ofKind('derivatives'):
            with _opening(dumped):
                reporter = PlumedDerivativesReporter(path(dumped.file), dumped.stride,
                                                     lambda context, state, args=dumped.args: self.getDerivatives(context, args, state),
                                                     dumped.args, dumped.fmt, self.units.time)
            if simulation.currentStep % dumped.stride == 0:
                reporter.report(simulation, simulation.context.getState(getPositions=True))
            simulation.reporters.append(reporter)
            self._reporters.append(reporter)
        self.checkBox(simulation.context)
        metad = next((value for _, value in self._ofKind('metad')), None)
        if metad is not None:
            timestep = simulation.integrator.getStepSize().value_in_unit(unit.picosecond)/self.units.time
            with _opening(metad):
                self._hills = HillsWriter(path(metad.hills), self.metadynamics, metad.labels, timestep, self.units.energy)
        opes = next((value for _, value in self._ofKind('opes')), None)
        if opes is not None and opes.kernels is not None:
            timestep = simulation.integrator.getStepSize().value_in_unit(unit.picosecond)/self.units.time
            with _opening(opes):
                self._kernels = KernelsWriter(path(opes.kernels), self.opes, opes.labels, timestep, opes.fmt)
        return list(self._reporters)

    def checkBox(self, context):
        """Where OPES_METAD biases a DISTANCE, check that the context's periodic box gives no larger
        distances (biases.boxBounds) than the System's default box that sized the grid of the bias
        (a distance beyond the grid would feel no bias); ValueError otherwise. attach() and step() call it."""
        if self.opesBox is None:
            return
        box = context.getState().getPeriodicBoxVectors(asNumpy=True).value_in_unit(unit.nanometer)
        length, half = biases.boxBounds(box)
        grid, gridHalf = biases.boxBounds(self.opesBox)
        if length > grid*(1 + 1e-9) or any(h > g*(1 + 1e-9) for h, g in zip(half, gridHalf)):
            raise ValueError('PlumedInput: the simulation\'s periodic box (%s nm) gives longer nearest-image distances '
                             'than the System\'s default box (%s nm), from which OPES_METAD sized the grid of its '
                             'DISTANCE; a distance beyond the grid would feel no bias. Set the System\'s default box to '
                             'the simulation\'s before loading the input' % (
                                 ' x '.join('%g' % box[k][k] for k in range(3)), ' x '.join('%g' % self.opesBox[k][k] for k in range(3))))

    def step(self, simulation, steps):
        """Advance the simulation by ``steps``: Metadynamics.step where there is a METAD (then the new
        hills go to the HILLS file), OPES.step where there is an OPES_METAD (a PACE at a time once
        attach() opened its KERNELS file, each new kernel written at its step), else simulation.step."""
        adaptive = self.metadynamics or self.opes
        if adaptive is None:
            simulation.step(steps)
            return
        if adaptive is self.opes:
            self.checkBox(simulation.context)
        writer = self._kernels if adaptive is self.opes else self._hills
        late = [reporter for reporter in self._reporters if getattr(reporter, '_late', None)]
        if writer is None and not late:
            adaptive.step(simulation, steps)
            return
        # a PACE at a time, so that the file gets each new hill or kernel at its step, and the COLVAR lines of
        # that step the components set after it (PlumedColvarReporter.completePending)
        remaining, frequency = int(steps), adaptive.frequency
        while remaining > 0:
            chunk = min(remaining, frequency - simulation.currentStep % frequency)
            adaptive.step(simulation, chunk)
            remaining -= chunk
            if writer is not None:
                writer.update(simulation.currentStep)
            for reporter in late:
                reporter.completePending(simulation.context)

    def close(self):
        """Close the files of attach()."""
        for reporter in self._reporters:
            reporter.close()
        if self._hills is not None:
            self._hills.close()
        if self._kernels is not None:
            self._kernels.close()

    def describe(self):
        """What each action became, as the `openmm-coordination plumed check` command prints it."""
        lines = []
        for action in self.actions:
            lines.append('line %d: %s' % (action.line, action.text))
            lines += ['    ' + line for line in action.python]
            lines += ['    note: ' + line for line in action.log]
        if self.python:
            lines += ['forces added to the System:'] + ['    ' + line for line in self.python]
        for name, built in (('Metadynamics', self.metadynamics), ('OPES', self.opes)):
            if built is not None:
                lines += ['    # %s added its %s, %s, in force group %d' % (
                    name, type(built.force).__name__, (built.force.getEnergyFunction() if isinstance(
                        built.force, openmm.CustomCVForce) else built.force.getEnergyExpression()), built.force.getForceGroup())]
        return '\n'.join(lines)


def _periodicChoice(periodic, system):
    """(periodic, note) of load's ``periodic`` for ``system`` as given: whether the CVs without NOPBC take
    the nearest periodic image, and where they take none, why (each of them logs it: usesImages; None
    where they take it). None follows the System, as openmm-plumed passes PLUMED the box only where the
    System uses periodic boundary conditions (PlumedForce's kernel: usesPeriodic, then setBox)."""
    if periodic is None and not system.usesPeriodicBoundaryConditions():
        return False, ('no periodic images although there is no NOPBC: the System uses no periodic boundary '
                       'conditions, and PLUMED under openmm-plumed then gets no box (load(..., periodic=True) '
                       'takes the nearest image in the System\'s default box)')
    if periodic is False:
        return False, 'no periodic images although there is no NOPBC: load(..., periodic=False)'
    return True, None


@contextlib.contextmanager
def _opening(value):
    """Where the file of the action that made ``value`` cannot be opened (a folder that does not exist,
    no permission): a PlumedInputError naming its line, the action and FILE."""
    try:
        yield
    except OSError as e:
        raise value.action.fail('FILE', 'cannot be opened: %s', e) from None


def _hasPositions(state):
    try:
        state.getPositions()
        return True
    except Exception:
        return False


def _boxDerivatives(force, positions, box):
    """PLUMED's box derivatives of a coordination number (src/colvar/CoordinationBase.cpp): -sum over
    pairs of dfunc d (x) d, d the pair's vector (nearest image where periodic, as the force takes it:
    OpenMM's reduction, then in a triclinic box the nearest of its 27 neighbouring images, as the
    Reference and CPU kernels search them) and dfunc = (ds/dr)/r from the force's switching function
    (weighted, with its own r0, per pair of a pair list). A 3x3 array, rows and columns x, y, z."""
    first, second = np.array(force.getGroupA(), dtype=int), np.array(force.getGroupB(), dtype=int)
    mode = force.getMode()
    if mode == force.OneGroup:
        i, j = np.triu_indices(len(first), 1)
        a, b = first[i], first[j]
    elif mode == force.TwoGroups:
        a, b = np.repeat(first, len(second)), np.tile(second, len(first))
    else:
        a, b = first, second
    pairs = np.arange(len(a))
    keep = a != b
    a, b, pairs = a[keep], b[keep], pairs[keep]
    delta = positions[b] - positions[a]
    if force.usesPeriodicBoundaryConditions():
        box = np.asarray(box, dtype=float)
        for k in (2, 1, 0):
            delta = delta - np.outer(np.floor(delta[:, k]/box[k][k] + 0.5), box[k])
        if np.count_nonzero(box - np.diag(np.diag(box))):
            # the reduced image first, then the neighbours in the kernels' order: the first nearest wins
            offsets = np.array([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)], dtype=float)
            candidates = delta[:, None, :] + np.concatenate([np.zeros((1, 3)), offsets @ box])[None, :, :]
            nearest = np.argmin(np.sum(candidates*candidates, axis=2), axis=1)
            delta = candidates[np.arange(len(delta)), nearest]
    r = np.sqrt(np.sum(delta*delta, axis=1))
    dmax = force.getDMax()
    dmax = dmax.value_in_unit(unit.nanometer) if unit.is_quantity(dmax) else dmax
    perPair = mode == force.PairList and force.getUsesPairParameters()
    virial = np.zeros((3, 3))
    for k in np.nonzero((r > 0) & (r <= dmax))[0]:
        _, dsdr = (force.evaluatePairSwitchingFunction(int(pairs[k]), float(r[k])) if perPair
                   else force.evaluateSwitchingFunction(float(r[k])))
        virial -= dsdr/r[k]*np.outer(delta[k], delta[k])
    return virial


def _distance(value, positions, box):
    """The distance (nm) of a DISTANCE, of the nearest periodic image where it takes one (not with
    NOPBC, nor where PlumedInput.periodic is False): the shortest, as PLUMED and
    CoordinationBiasForce.addDistance take it (OpenMM's reduction, then in a triclinic box the nearest
    of its 27 neighbouring images); of a component (label.x), that coordinate of the second particle
    less the first's, of the same image."""
    delta = _distanceVector(value, positions, box)
    if getattr(value, 'component', None) is not None:
        return float(delta[value.component])
    return float(np.linalg.norm(delta))


def _distanceDerivatives(value, positions, box):
    """PLUMED's derivatives of a DISTANCE (src/colvar/Distance.cpp), r the image _distance takes (nm): of
    its length d, -r/d and r/d by the first and second atom's x, y, z and the box derivatives -(r (x) r)/d
    (nm); of a component k, -e_k and e_k, and -(r (x) e_k) (nm). The 6 atom derivatives then the 9 box
    derivatives (rows and columns x, y, z, row-major), the box's in nm (dimensionless the atoms')."""
    delta = _distanceVector(value, positions, box)
    if getattr(value, 'component', None) is not None:
        direction = np.zeros(3)
        direction[value.component] = 1.0
        boxDerivatives = -np.outer(delta, direction)
    else:
        length = np.linalg.norm(delta)
        direction = delta/length
        boxDerivatives = -np.outer(delta, delta)/length
    return np.concatenate([-direction, direction, boxDerivatives.ravel()])


def _distanceVector(value, positions, box):
    """r2 - r1 (nm) of a DISTANCE's atoms: the nearest periodic image where it takes one (see _distance)."""
    delta = positions[value.obj[1]] - positions[value.obj[0]]
    if value.periodic:
        box = np.asarray(box, dtype=float)
        for k in (2, 1, 0):
            delta = delta - box[k]*np.floor(delta[k]/box[k][k] + 0.5)
        if np.count_nonzero(box - np.diag(np.diag(box))):
            images = [delta + a*box[0] + b*box[1] + c*box[2] for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
            delta = min([delta] + images, key=lambda v: float(v @ v))
    return delta
