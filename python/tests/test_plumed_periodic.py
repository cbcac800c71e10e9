"""openmmcoordination.plumed: whether the CVs without NOPBC take the nearest periodic image. By default
as PLUMED under openmm-plumed, whose PlumedForce passes PLUMED the box only where the System uses
periodic boundary conditions: the nearest image in a periodic System, plain distances in one without
periodic forces (the reader's forces once made such a System periodic, a 1.9 nm distance 0.1 nm in
OpenMM's default 2 nm box); load(..., periodic=True or False) either way. Values against NumPy."""

import warnings

import numpy as np
import pytest

import openmm

from openmmcoordination import PeriodicBoundaryWarning, plumed

BOX = 2.0      # OpenMM's default box edge (nm)


def bare_system(n, periodic=False):
    """n unit masses in OpenMM's default box; periodic: with a periodic force of no energy (a
    CustomBondForce('0') that uses periodic boundary conditions), as a PME System has."""
    system = openmm.System()
    for _ in range(n):
        system.addParticle(1.0)
    if periodic:
        nothing = openmm.CustomBondForce('0')
        nothing.setUsesPeriodicBoundaryConditions(True)
        system.addForce(nothing)
    return system


def context(system, positions):
    c = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    c.setPositions(positions)
    return c


REPRO = 'd: DISTANCE ATOMS=1,2\nRESTRAINT ARG=d AT=1 KAPPA=1\n'
TWO = np.array([[0.0, 0.0, 0.0], [1.9, 0.0, 0.0]])


@pytest.mark.parametrize('systemPeriodic, periodic, expected', [
    (False, None, 1.9), (True, None, 0.1), (False, True, 0.1), (True, False, 1.9), (False, False, 1.9), (True, True, 0.1)])
def test_distance_follows_the_system_or_the_argument(systemPeriodic, periodic, expected):
    """The repro: two particles 1.9 nm apart; the restraint's energy 0.5 (d - 1)^2 from the same d. Asked
    for the image in a System without periodic forces (OpenMM's untouched default box), the Context's
    creation says that the distance is wrapped into that box (a PeriodicBoundaryWarning); nowhere else."""
    system = bare_system(2, systemPeriodic)
    inp = plumed.load(REPRO, system, periodic=periodic)
    assert inp.periodic == (expected == 0.1)
    assert system.usesPeriodicBoundaryConditions() == (systemPeriodic or expected == 0.1)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter('always')
        c = context(system, TWO)
    said = [str(w.message) for w in record if issubclass(w.category, PeriodicBoundaryWarning)]
    assert len(said) == (1 if periodic and not systemPeriodic else 0), said
    assert all('the distance "d" takes the nearest periodic image' in text for text in said)
    assert inp.getValues(c, ['d'])[0] == pytest.approx(expected, abs=1e-12)
    energy = c.getState(getEnergy=True).getPotentialEnergy()._value
    assert energy == pytest.approx(0.5*(expected - 1)**2, rel=1e-12)


def test_the_choice_is_logged():
    """A CV that takes no image without NOPBC says why, in its log and in describe(); one with NOPBC, or one
    that takes the image (in a periodic System, or asked with periodic=True), says nothing of it."""
    plain = plumed.load(REPRO, bare_system(2))
    assert 'the System uses no periodic boundary conditions' in ' '.join(plain.actions[0].log)
    assert 'periodic=True' in plain.describe() and 'addDistance(\'d\', 0, 1, -1, False)' in plain.describe()
    refused = plumed.load(REPRO, bare_system(2, True), periodic=False)
    assert 'periodic=False' in ' '.join(refused.actions[0].log)
    for inp in (plumed.load(REPRO, bare_system(2, True)), plumed.load(REPRO, bare_system(2), periodic=True),
                plumed.load(REPRO.replace('1,2', '1,2 NOPBC'), bare_system(2))):
        assert 'load(..., periodic=' not in ' '.join(inp.actions[0].log)


@pytest.mark.parametrize('bad', [1, 0, 'yes', 'True', np.bool_(True)], ids=['1', '0', 'yes', 'True string', 'numpy bool'])
def test_periodic_must_be_none_true_or_false(bad):
    with pytest.raises(ValueError, match=r'plumed\.load: periodic must be None, True or False, got %s' % repr(bad).replace('(', r'\(').replace(')', r'\)')):
        plumed.load(REPRO, bare_system(2), periodic=bad)


SIX = np.array([[0.1, 0.2, 0.1], [1.7, 0.3, 0.2], [0.4, 1.8, 0.3], [1.9, 1.6, 1.7], [0.2, 0.5, 1.8], [1.0, 1.1, 0.9]])
COORDINATIONS = """\
c: COORDINATION GROUPA=1-3 GROUPB=4-6 SWITCH={RATIONAL R_0=0.8}
m: CONTACTMAP ATOMS1=1,2 ATOMS2=3,4 ATOMS3=1,5 ATOMS4=2,6 SWITCH={RATIONAL R_0=0.8} SUM
n: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.8} SUM
PRINT ARG=c,m,n.sum FILE=/dev/null
"""


def rational(r, r0=0.8):
    """PLUMED's RATIONAL with NN=6, MM=12, D_0=0 and no D_MAX."""
    x = r/r0
    return (1 - x**6)/(1 - x**12)


def numpy_values(positions, periodic):
    """c, m and n.sum of COORDINATIONS by NumPy: plain distances, or the nearest image in the cubic box."""
    def r(i, j):
        delta = positions[j] - positions[i]
        if periodic:
            delta -= BOX*np.round(delta/BOX)
        return np.linalg.norm(delta)
    c = sum(rational(r(i, j)) for i in range(3) for j in range(3, 6))
    m = sum(rational(r(i, j)) for i, j in ((0, 1), (2, 3), (0, 4), (1, 5)))
    n = sum(rational(r(i, j)) for i in range(6) for j in range(6) if i != j)
    return [c, m, n]


@pytest.mark.parametrize('systemPeriodic, periodic', [(False, None), (True, None), (False, True), (True, False)])
def test_coordination_contactmap_coordinationnumber(systemPeriodic, periodic):
    """COORDINATION, CONTACTMAP and COORDINATIONNUMBER take plain distances in a System without periodic
    forces (as PLUMED given no box), the nearest image in a periodic one; periodic= overrides either."""
    images = systemPeriodic if periodic is None else periodic
    system = bare_system(6, systemPeriodic)
    inp = plumed.load(COORDINATIONS, system, periodic=periodic)
    for label in ('c', 'm'):
        assert inp[label].usesPeriodicBoundaryConditions() == images
    assert system.usesPeriodicBoundaryConditions() == (systemPeriodic or images)
    expected = numpy_values(SIX, images)
    other = numpy_values(SIX, not images)
    assert all(abs(a - b) > 1e-3 for a, b in zip(expected, other))      # the positions tell the two apart
    np.testing.assert_allclose(inp.getValues(context(system, SIX), ['c', 'm', 'n_sum']), expected, rtol=1e-10)


def test_opes_on_a_distance_without_images():
    """OPES_METAD on a DISTANCE needs the nearest image (its grid ends where the box bounds it): in a System
    without periodic forces the refusal says why and what to pass; periodic=True sizes the grid from the
    default box."""
    text = REPRO.splitlines()[0] + '\no: OPES_METAD ARG=d SIGMA=0.05 BARRIER=5 PACE=10 TEMP=300\n'
    with pytest.raises(plumed.PlumedInputError, match='the System uses no periodic boundary conditions.*periodic=True'):
        plumed.load(text, bare_system(2))
    with pytest.raises(plumed.PlumedInputError, match='with NOPBC'):
        plumed.load(text.replace('1,2', '1,2 NOPBC'), bare_system(2), periodic=True)
    inp = plumed.load(text, bare_system(2), periodic=True)
    assert inp.opesBox == [(2.0, 0.0, 0.0), (0.0, 2.0, 0.0), (0.0, 0.0, 2.0)]


def test_wholemolecules_with_nopbc():
    """WHOLEMOLECULES beside NOPBC: refused where the CVs take the nearest image (PLUMED would compute the
    NOPBC CV from molecules made whole); accepted without images (PLUMED with no box moves no atom)."""
    text = 'WHOLEMOLECULES ENTITY0=1-4\nc: COORDINATION GROUPA=1-4 R_0=0.3 NOPBC\n'
    with pytest.raises(plumed.PlumedInputError, match='not supported with NOPBC'):
        plumed.load(text, bare_system(4, True))
    with pytest.raises(plumed.PlumedInputError, match='not supported with NOPBC'):
        plumed.load(text, bare_system(4), periodic=True)
    inp = plumed.load(text, bare_system(4))
    assert 'moves no atom' in ' '.join(inp.actions[0].log)
