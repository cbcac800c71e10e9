"""A CoordinationForce without periodic boundary conditions in a periodic System (issue 41 item 6):
a PeriodicBoundaryWarning when the Context is created, naming the force and the calls, once per
force; none where the periodicity was chosen (True or False), where the System has no periodic
force, for the PLUMED reader's forces or the examples' systems. The CV it warns about is the one
that ignores the box: a "Na+" near a corner of a 3 nm box, its "oxygen" 0.2 nm away across a face."""

import copy
import os
import types
import warnings

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce, Metadynamics, PeriodicBoundaryWarning, plumed
from openmmcoordination.coordination import _castForce
from openmmcoordination.metadynamics import BiasVariable

from gr_helpers import import_script

BOX = 3.0
POSITIONS = [[0.1, 0.1, 0.1], [2.9, 0.1, 0.1]]      # 2.8 nm apart, 0.2 nm through the box's face


def cornerSystem(force, periodic=True):
    """Two particles in a 3 nm box with a NonbondedForce (no charges), periodic or not, and ``force``."""
    system = openmm.System()
    system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.eye(3)*BOX])
    nonbonded = openmm.NonbondedForce()
    nonbonded.setNonbondedMethod(openmm.NonbondedForce.CutoffPeriodic if periodic else openmm.NonbondedForce.NoCutoff)
    nonbonded.setCutoffDistance(1.0)
    for _ in range(2):
        system.addParticle(20.0)
        nonbonded.addParticle(0.0, 0.3, 0.0)
    system.addForce(nonbonded)
    if force is not None:
        system.addForce(force)
    return system


def makeContext(system):
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(POSITIONS)
    return context


def switching(force, r):
    return force.evaluateSwitchingFunction(r)[0]


def test_warning_names_the_force_and_the_call():
    force = CoordinationForce([0], [1])
    force.setName('ion-water')
    system = cornerSystem(force)
    assert not force.getPeriodicitySet()
    with pytest.warns(PeriodicBoundaryWarning) as record:
        context = makeContext(system)
    assert len(record) == 1
    message = str(record[0].message)
    for text in ['CoordinationForce "ion-water" (force 1 of the System) does not use periodic boundary conditions',
                 'force 0 of the System ("NonbondedForce")', 'setUsesPeriodicBoundaryConditions(True)',
                 'setUsesPeriodicBoundaryConditions(False)']:
        assert text in message, (text, message)
    # Attributed to the caller's line (here the test's, or conftest.py's wrapper of Context), not openmm's.
    assert not record[0].filename.startswith(os.path.dirname(openmm.__file__)), record[0].filename
    # What it warns about: the CV of the pair 2.8 nm apart, where the nearest image is 0.2 nm away.
    assert force.getCollectiveVariableValue(context) == pytest.approx(switching(force, 2.8), rel=1e-12)
    assert switching(force, 2.8) < 1e-3 < 0.5 < switching(force, 0.2)
    # Once per force: another Context of the same System is silent.
    with warnings.catch_warnings():
        warnings.simplefilter('error', PeriodicBoundaryWarning)
        makeContext(system)


def test_periodic_force_is_silent_and_sees_the_image():
    force = CoordinationForce([0], [1])
    force.setUsesPeriodicBoundaryConditions(True)
    with warnings.catch_warnings():
        warnings.simplefilter('error', PeriodicBoundaryWarning)
        context = makeContext(cornerSystem(force))
    assert force.getCollectiveVariableValue(context) == pytest.approx(switching(force, 0.2), rel=1e-12)


@pytest.mark.parametrize('case', ['false chosen', 'system not periodic', 'nothing else periodic'])
def test_no_warning(case):
    force = CoordinationForce([0], [1])
    if case == 'false chosen':
        force.setUsesPeriodicBoundaryConditions(False)
        assert force.getPeriodicitySet() and not force.usesPeriodicBoundaryConditions()
        system = cornerSystem(force)
    elif case == 'system not periodic':
        system = cornerSystem(force, periodic=False)
    else:
        system = openmm.System()
        system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.eye(3)*BOX])
        for _ in range(2):
            system.addParticle(1.0)
        system.addForce(force)
    with warnings.catch_warnings():
        warnings.simplefilter('error', PeriodicBoundaryWarning)
        makeContext(system)


def test_warning_as_error_stops_the_context():
    """A filter that makes the warning an error: the Context is not created, openmm.OpenMMException says why."""
    system = cornerSystem(CoordinationForce([0], [1]))
    with warnings.catch_warnings():
        warnings.simplefilter('error', PeriodicBoundaryWarning)
        with pytest.raises(openmm.OpenMMException, match=r'setUsesPeriodicBoundaryConditions\(True\)'):
            makeContext(system)


def test_copies_keep_the_choice():
    unset, chosen = CoordinationForce([0], [1]), CoordinationForce([0], [1])
    chosen.setUsesPeriodicBoundaryConditions(False)
    assert not copy.deepcopy(unset).getPeriodicitySet()
    assert copy.deepcopy(chosen).getPeriodicitySet() and not copy.deepcopy(chosen).usesPeriodicBoundaryConditions()
    with pytest.warns(PeriodicBoundaryWarning):
        makeContext(cornerSystem(copy.copy(unset)))


def test_bias_force_names_the_cv():
    bias = CoordinationBiasForce('c1 + 2*c2')
    bias.addCollectiveVariable('c1', CoordinationForce([0], [1]))
    bias.addCollectiveVariable('c2', CoordinationForce([1], [0]))
    system = cornerSystem(bias)
    with pytest.warns(PeriodicBoundaryWarning) as record:
        makeContext(system)
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 2
    for name, message in zip(['c1', 'c2'], messages):
        assert ('CoordinationBiasForce "%s" (force 1 of the System), its collective variable "%s"' % (bias.getName(), name)
                in message), message


def test_metadynamics_copies_the_warning_and_the_choice():
    """Metadynamics adds a copy of each variable's force: the copy warns as the force would, and a
    chosen periodicity is copied too."""
    for periodic, expected in [(None, 1), (True, 0), (False, 0)]:
        cv = CoordinationForce([0], [1])
        if periodic is not None:
            cv.setUsesPeriodicBoundaryConditions(periodic)
        system = cornerSystem(None)
        Metadynamics(system, [BiasVariable(cv, 0.0, 1.0, 0.1, gridWidth=11)], 300*unit.kelvin, 5.0,
                     1.0*unit.kilojoules_per_mole, 100)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter('always', PeriodicBoundaryWarning)
            makeContext(system)
        found = [w for w in record if issubclass(w.category, PeriodicBoundaryWarning)]
        assert len(found) == expected, (periodic, [str(w.message) for w in found])
        assert all('CoordinationBiasForce' in str(w.message) and '"c1"' in str(w.message) for w in found)


PLUMED_INPUTS = {
    'COORDINATION (periodic)': 'c: COORDINATION GROUPA=1 GROUPB=2 R_0=0.3\nBIASVALUE ARG=c\n',
    'COORDINATION NOPBC': 'c: COORDINATION GROUPA=1 GROUPB=2 R_0=0.3 NOPBC\nBIASVALUE ARG=c\n',
    'CONTACTMAP': 'cm: CONTACTMAP ATOMS1=1,2 SWITCH={RATIONAL R_0=0.3} SUM\nBIASVALUE ARG=cm\n',
    'RESTRAINT': 'c: COORDINATION GROUPA=1 GROUPB=2 R_0=0.3\nRESTRAINT ARG=c AT=0.5 KAPPA=10\n',
    'METAD': ('c: COORDINATION GROUPA=1 GROUPB=2 R_0=0.3 NOPBC\nMETAD ARG=c SIGMA=0.1 HEIGHT=0.5 PACE=10 BIASFACTOR=5 '
              'TEMP=300 GRID_MIN=0 GRID_MAX=2 GRID_BIN=20\n'),
}


@pytest.mark.parametrize('name', sorted(PLUMED_INPUTS))
def test_plumed_reader_never_warns(name):
    """The reader sets the periodicity of every force it builds (PLUMED's default, or NOPBC)."""
    system = cornerSystem(None)
    inp = plumed.load(PLUMED_INPUTS[name], system=system, integrator=openmm.LangevinMiddleIntegrator(300, 1, 0.002))
    coordination = [f for f in (_castForce(force) for force in system.getForces()) if f is not None]
    biases = [inp.biasForce] + [sampler.force for sampler in (inp.metadynamics, inp.opes) if sampler is not None]
    for bias in biases:
        if bias is not None:
            coordination += [bias.getCollectiveVariable(k) for k in range(bias.getNumCollectiveVariables())]
    assert coordination and all(f.getPeriodicitySet() for f in coordination), name
    assert all(f.usesPeriodicBoundaryConditions() == ('NOPBC' not in PLUMED_INPUTS[name]) for f in coordination)
    with warnings.catch_warnings():
        warnings.simplefilter('error', PeriodicBoundaryWarning)
        makeContext(system)
    assert inp is not None


def test_examples_choose_the_periodicity():
    """The CVs the examples build for their periodic Systems say which periodicity they use (the
    examples' runs in test_mainjob.py and test_example_*.py, and the docs' commands and blocks in
    test_docs_run.py, check that no warning is printed)."""
    pairing = import_script('examples', 'ion_pairing')
    forces = list(pairing.collectiveVariables(0, 1, [2, 3], pairing.parseArguments(['--quick'])))
    coordination = import_script('examples', 'ion_coordination')
    gr = types.SimpleNamespace(getFirstMinimum=lambda: 0.32*unit.nanometer, r=np.linspace(0.005, 0.995, 100), counts=np.zeros(100), numFrames=1)
    forces.append(coordination.coordinationNumber(gr, [0], [1, 2], 12)[0])
    assert all(f.getPeriodicitySet() and f.usesPeriodicBoundaryConditions() for f in forces)
