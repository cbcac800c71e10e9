"""Native contacts of DHFR (Best-Hummer-Eaton Q) against MDAnalysis: the contact set of
openmmcoordination.contacts against one found with MDAnalysis alone, and Q on frames of a short
Langevin run against MDAnalysis.analysis.contacts.soft_cut_q (in Angstrom: its beta is 1/A), on
every platform configuration."""

import os
import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationForce
from openmmcoordination.contacts import find_native_contacts, findNativeContacts, native_contacts

mda = pytest.importorskip('MDAnalysis')
from MDAnalysis.analysis.contacts import soft_cut_q  # noqa: E402

# The structure: DHFR without its water (examples/data), or COORDINATION_DHFR_PDB.
PDB = os.environ.get('COORDINATION_DHFR_PDB', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples',
                                                           'data', 'dhfr_protein.pdb'))


@pytest.fixture(scope='module')
def dhfr():
    """DHFR without its water (2,489 atoms), its native contacts, and 4 frames of a short Langevin
    run at 300 K in vacuum on the CPU platform (positions in nm)."""
    pdb = app.PDBFile(PDB)
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.deleteWater()
    forcefield = app.ForceField('amber99sb.xml', 'tip3p.xml')
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)
    integrator = openmm.LangevinMiddleIntegrator(300*unit.kelvin, 1/unit.picosecond, 0.002*unit.picoseconds)
    integrator.setRandomNumberSeed(2013)
    context = openmm.Context(system, integrator, openmm.Platform.getPlatformByName('CPU'), {'Threads': '2'})
    context.setPositions(modeller.positions)
    context.setVelocitiesToTemperature(300*unit.kelvin, 2013)
    frames = [context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)]
    for _ in range(3):
        integrator.step(60)
        frames.append(context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer))
    reference = np.asarray(modeller.positions.value_in_unit(unit.nanometer))
    return modeller.topology, reference, frames


@pytest.fixture(scope='module')
def universe():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return mda.Universe(PDB)


def distances_angstrom(xyz_nm, a, b):
    """Pair distances in Angstrom, in double precision (MDAnalysis' own distance functions work in float32)."""
    return 10*np.linalg.norm(xyz_nm[b] - xyz_nm[a], axis=1)


def mdanalysis_native_contacts(universe, reference):
    """The Best-Hummer-Eaton contact set from MDAnalysis' selection and residue indices (Angstrom)."""
    heavy = universe.select_atoms('protein and not name H*')
    xyz = 10*reference[heavy.indices]
    d = np.sqrt(((xyz[:, None, :] - xyz[None, :, :])**2).sum(axis=2))
    i, j = np.nonzero(np.triu((d < 4.5) & (np.abs(heavy.resindices[:, None] - heavy.resindices[None, :]) > 3), k=1))
    return heavy.indices[i], heavy.indices[j], d[i, j]


def test_contact_set_matches_mdanalysis(dhfr, universe):
    topology, reference, _ = dhfr
    a, b, r0s = findNativeContacts(topology, reference)
    ma, mb, mr0 = mdanalysis_native_contacts(universe, reference)
    assert len(a) == 1942 and unit.is_quantity(r0s)
    ours = dict(zip(zip(a.tolist(), b.tolist()), r0s.value_in_unit(unit.angstrom)))   # r0s a Quantity, here in A
    theirs = dict(zip(zip(ma.tolist(), mb.tolist()), mr0))
    assert ours.keys() == theirs.keys()
    np.testing.assert_allclose([ours[k] for k in theirs], list(theirs.values()), rtol=1e-12)
    force = native_contacts(topology, reference*unit.nanometer)
    assert force.getMode() == CoordinationForce.PairList and force.getSwitchingFunction() == CoordinationForce.Q
    assert force.getNumPairs() == 1942
    np.testing.assert_allclose(force.getPairWeights(), 1/1942, rtol=1e-15)
    assert force.getBeta() == 50/unit.nanometer and force.getLambda() == 1.8


def test_universe_gives_the_same_contacts(dhfr, universe):
    """An MDAnalysis Universe (its float32 coordinates) gives the same pairs."""
    topology, reference, _ = dhfr
    a, b, r0s = findNativeContacts(universe)
    a2, b2, r02 = findNativeContacts(topology, reference)
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    np.testing.assert_allclose(r0s.value_in_unit(unit.nanometer), r02.value_in_unit(unit.nanometer), rtol=2e-5)


@pytest.mark.parametrize('beta, lambda_', [(50.0, 1.8), (120.0, 1.05)])
def test_q_against_soft_cut_q(dhfr, platform_config, beta, lambda_):
    """Q on the frames, with Best-Hummer-Eaton's beta and lambda and with a sharper pair that moves Q off 1."""
    topology, reference, frames = dhfr
    force = native_contacts(topology, reference, beta=beta/unit.nanometer, lambda_=lambda_)
    a, b = np.array(force.getGroupA()), np.array(force.getGroupB())
    r0 = 10*force.getPairR0s().value_in_unit(unit.nanometer)
    system = openmm.System()
    for _ in range(topology.getNumAtoms()):
        system.addParticle(1.0)
    system.addForce(force)
    context = platform_config.context(system)
    values = []
    for frame in frames:
        context.setPositions(frame)
        expected = soft_cut_q(distances_angstrom(frame, a, b), r0, beta=beta/10, lambda_constant=lambda_)
        q = force.getCollectiveVariableValue(context)
        assert abs(q - expected) <= platform_config.value_rtol*expected, (q, expected)
        energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        assert abs(energy - expected) <= platform_config.value_rtol*expected
        values.append(q)
    if lambda_ > 1.5:
        assert values[0] > 0.99     # the native structure has Q of about 1
    else:
        assert max(values) - min(values) > 0.01    # the frames really differ


def test_errors(dhfr):
    topology, reference, _ = dhfr
    with pytest.raises(ValueError, match='positions must have one row of 3 coordinates per atom'):
        native_contacts(topology, reference[:10])
    with pytest.raises(ValueError, match='nativeContacts: positions must be in units compatible with nanometer, got kilojoule/mole'):
        native_contacts(topology, reference*unit.kilojoule_per_mole)   # was openmm.unit's TypeError
    with pytest.raises(ValueError, match='positions are required'):
        native_contacts(topology)
    with pytest.raises(ValueError, match='cutoff must be positive'):
        native_contacts(topology, reference, cutoff=-0.1)
    with pytest.raises(ValueError, match='cutoff must be in units compatible'):
        native_contacts(topology, reference, cutoff=0.45*unit.kilojoule_per_mole)
    with pytest.raises(ValueError, match='beta must be positive'):
        native_contacts(topology, reference, beta=0.0)
    with pytest.raises(ValueError, match='lambda_ must be positive'):
        native_contacts(topology, reference, lambda_=-1.8)
    with pytest.raises(ValueError, match='nativeContacts: minResidueSeparation must be a non-negative integer, got -1'):
        native_contacts(topology, reference, min_residue_separation=-1)
    with pytest.raises(ValueError, match='the selection has 0 atoms'):
        native_contacts(topology, reference, selection=lambda atom: False)
    with pytest.raises(ValueError, match='no pairs of the selection are within the cutoff'):
        native_contacts(topology, reference, cutoff=0.05)
    with pytest.raises(ValueError, match='outside the topology'):
        native_contacts(topology, reference, selection=[0, 10**6])
    with pytest.raises(ValueError, match='openmm.app.Topology or an MDAnalysis Universe'):
        native_contacts(42, reference)


def test_selection_and_separation(dhfr):
    """A selection of atom indices (the C-alpha atoms) and a wider cutoff; pairs respect |i - j| > 3."""
    topology, reference, _ = dhfr
    atoms = list(topology.atoms())
    alpha = [atom.index for atom in atoms if atom.name == 'CA']
    force = native_contacts(topology, reference, selection=alpha, cutoff=8*unit.angstrom, lambda_=1.5)
    a, b = force.getGroupA(), force.getGroupB()
    assert set(a) | set(b) <= set(alpha) and len(a) > 100
    assert all(abs(atoms[i].residue.index - atoms[j].residue.index) > 3 for i, j in zip(a, b))
    assert force.getLambda() == 1.5


def test_camel_case_names_and_snake_case_aliases(dhfr):
    """nativeContacts and findNativeContacts (OpenMM's naming), the snake_case names kept as aliases
    that say so and give the same contacts; minResidueSeparation, min_residue_separation in the aliases;
    findNativeContacts' r0s a Quantity (nm, as getPairR0s), find_native_contacts' the same numbers
    in nm as a plain array (as before issue 44), both taken by setPairs."""
    import openmmcoordination
    from openmmcoordination.contacts import findNativeContacts, nativeContacts
    topology, reference, _ = dhfr
    a, b, r0s = findNativeContacts(topology, reference, minResidueSeparation=4)
    a2, b2, r02 = find_native_contacts(topology, reference, min_residue_separation=4)
    assert len(a) > 1000 and np.array_equal(a, a2) and np.array_equal(b, b2)
    assert unit.is_quantity(r0s) and not unit.is_quantity(r02) and isinstance(r02, np.ndarray)
    assert np.array_equal(r0s.value_in_unit(unit.nanometer), r02)
    np.testing.assert_allclose(r0s.value_in_unit(unit.angstrom), 10*r02, rtol=1e-15)
    # the NumPy distances of the reference, in nm
    np.testing.assert_allclose(r02, np.linalg.norm(reference[b] - reference[a], axis=1), rtol=1e-15)
    for given in (r0s, r02):
        force = CoordinationForce()
        force.setPairs(a, b, np.full(len(a), 1.0/len(a)), given)
        np.testing.assert_allclose(force.getPairR0s().value_in_unit(unit.nanometer), r02, rtol=1e-15)
    assert len(findNativeContacts(topology, reference)[0]) > len(a)      # the default, 3, keeps more pairs
    assert nativeContacts(topology, reference).getNumPairs() == native_contacts(topology, reference).getNumPairs() == 1942
    assert 'alias of nativeContacts' in native_contacts.__doc__ and 'alias of findNativeContacts' in find_native_contacts.__doc__
    assert openmmcoordination.nativeContacts is nativeContacts and openmmcoordination.native_contacts is native_contacts
    with pytest.raises(ValueError, match='native_contacts: give minResidueSeparation or min_residue_separation, not both'):
        native_contacts(topology, reference, minResidueSeparation=3, min_residue_separation=3)
