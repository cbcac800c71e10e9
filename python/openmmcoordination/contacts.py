"""Native contacts from a structure: the fraction of native contacts Q of Best, Hummer and Eaton
(PNAS 110, 17874 (2013)) as a CoordinationForce.

    Q(X) = (1/N) sum over native pairs (i, j) of 1/(1 + exp(beta (r_ij(X) - lambda r0_ij)))

The native pairs are the heavy atoms of residues more than 3 apart in sequence that lie within
0.45 nm of each other in the reference structure; r0_ij is their distance there; beta = 50/nm and
lambda = 1.8 (1.5 for coarse-grained models). PLUMED: CONTACTMAP ATOMS1=i,j SWITCH1={Q REF=r0_ij
BETA=50 LAMBDA=1.8 R_0=1} WEIGHT1=1/N ... SUM.

>>> from openmmcoordination.contacts import nativeContacts
>>> native = app.PDBFile('examples/data/dhfr_protein.pdb')   # DHFR without water, in the repository
>>> q = nativeContacts(native.topology, native.positions)    # a CoordinationForce
>>> protein = app.ForceField('amber99sb.xml').createSystem(native.topology)
>>> protein.addForce(q)
>>> context = openmm.Context(protein, openmm.VerletIntegrator(0.001)); context.setPositions(native.positions)
>>> q.getCollectiveVariableValue(context)                     # Q, 1.0 at the reference
"""

import numpy as np

from openmm import unit

from openmmcoordination.coordination import CoordinationForce

__all__ = ['nativeContacts', 'findNativeContacts', 'native_contacts', 'find_native_contacts']

#: Residue names taken as protein by the default selection (OpenMM's and AMBER's names).
PROTEIN_RESIDUES = frozenset((
    'ALA', 'ARG', 'ASN', 'ASP', 'CYS', 'GLN', 'GLU', 'GLY', 'HIS', 'ILE', 'LEU', 'LYS', 'MET', 'PHE', 'PRO',
    'SER', 'THR', 'TRP', 'TYR', 'VAL', 'HID', 'HIE', 'HIP', 'HSD', 'HSE', 'HSP', 'CYX', 'CYM', 'ASH', 'GLH',
    'LYN', 'SEC', 'MSE'))


def _value(quantity, unit_, name):
    """A number in the given unit from a Quantity or a plain number (taken to be in that unit)."""
    if unit.is_quantity(quantity):
        if not quantity.unit.is_compatible(unit_):
            raise ValueError('nativeContacts: %s must be in units compatible with %s, got %s' % (name, unit_, quantity))
        quantity = quantity.value_in_unit(unit_)
    try:
        return float(quantity)
    except (TypeError, ValueError):
        raise ValueError('nativeContacts: %s must be a number, got %r' % (name, quantity)) from None


def _positions_nm(positions, num_atoms):
    if unit.is_quantity(positions):
        if not positions.unit.is_compatible(unit.nanometer):
            raise ValueError('nativeContacts: positions must be in units compatible with nanometer, got %s' % positions.unit)
        positions = positions.value_in_unit(unit.nanometer)
    positions = np.asarray([[float(c) for c in p] for p in positions] if not isinstance(positions, np.ndarray) else positions,
                           dtype=float)
    if positions.shape != (num_atoms, 3):
        raise ValueError('nativeContacts: positions must have one row of 3 coordinates per atom of the topology '
                         '(%d), got shape %s' % (num_atoms, positions.shape))
    if not np.all(np.isfinite(positions)):
        raise ValueError('nativeContacts: positions are not all finite')
    return positions


def _is_heavy_protein_atom(atom):
    hydrogen = (atom.element is not None and atom.element.symbol == 'H') or (atom.element is None and atom.name.startswith('H'))
    return atom.residue.name in PROTEIN_RESIDUES and not hydrogen


def _openmm_atoms(topology, positions, selection):
    """Indices, (chain, residue) keys and positions (nm) of the selected atoms of an openmm.app Topology."""
    atoms = list(topology.atoms())
    if positions is None:
        raise ValueError('nativeContacts: positions are required with an openmm.app Topology')
    xyz = _positions_nm(positions, len(atoms))
    if selection is None:
        chosen = [a for a in atoms if _is_heavy_protein_atom(a)]
    elif callable(selection):
        chosen = [a for a in atoms if selection(a)]
    else:
        indices = np.asarray(list(selection))
        if indices.size and not np.issubdtype(indices.dtype, np.integer):
            raise ValueError('nativeContacts: selection must be None, a function of an atom, or atom indices; got %r' % (selection,))
        if indices.size and (indices.min() < 0 or indices.max() >= len(atoms)):
            raise ValueError('nativeContacts: selection has an atom index outside the topology (0 to %d)' % (len(atoms) - 1))
        chosen = [atoms[i] for i in sorted(set(int(i) for i in indices))]
    index = np.array([a.index for a in chosen], dtype=int)
    chain = np.array([a.residue.chain.index for a in chosen], dtype=int)
    residue = np.array([a.residue.index for a in chosen], dtype=int)
    return index, chain, residue, xyz[index] if len(index) else np.zeros((0, 3))


def _mdanalysis_atoms(universe, positions, selection):
    """The same for an MDAnalysis Universe (its current frame unless positions are given)."""
    group = universe.select_atoms('protein and not name H*' if selection is None else selection)
    if positions is None:
        xyz = group.positions/10.0
    else:
        xyz = _positions_nm(positions, len(universe.atoms))[group.indices]
    segments = {segid: k for k, segid in enumerate(dict.fromkeys(group.segids))}
    chain = np.array([segments[s] for s in group.segids], dtype=int)
    return group.indices.astype(int), chain, group.resindices.astype(int), np.asarray(xyz, dtype=float)


def findNativeContacts(topology, positions=None, selection=None, cutoff=0.45*unit.nanometer, minResidueSeparation=3):
    """The native pairs of a structure: (particlesA, particlesB, r0s), atoms of residues more than
    minResidueSeparation apart in the same chain (any two residues of different chains) closer than
    cutoff; particlesA and particlesB integer arrays, r0s their distances in the reference, a Quantity
    (an array in nm), as CoordinationForce.getPairR0s() returns them; setPairs() takes them as they
    are. See nativeContacts() for the arguments. find_native_contacts(), the name before issue 44,
    returns r0s as a plain array in nm."""
    a, b, r0s = _findNativeContacts(topology, positions, selection, cutoff, minResidueSeparation)
    return a, b, unit.Quantity(r0s, unit.nanometer)


def _findNativeContacts(topology, positions=None, selection=None, cutoff=0.45*unit.nanometer, minResidueSeparation=3):
    """findNativeContacts() with r0s a plain array in nm."""
    min_residue_separation = minResidueSeparation
    cutoff = _value(cutoff, unit.nanometer, 'cutoff')
    if not cutoff > 0 or not np.isfinite(cutoff):
        raise ValueError('nativeContacts: cutoff must be positive and finite, got %g nm' % cutoff)
    if isinstance(min_residue_separation, bool) or not isinstance(min_residue_separation, (int, np.integer)) \
            or min_residue_separation < 0:
        raise ValueError('nativeContacts: minResidueSeparation must be a non-negative integer, got %r' % (min_residue_separation,))
    if hasattr(topology, 'select_atoms'):
        index, chain, residue, xyz = _mdanalysis_atoms(topology, positions, selection)
    elif hasattr(topology, 'atoms'):
        index, chain, residue, xyz = _openmm_atoms(topology, positions, selection)
    else:
        raise ValueError('nativeContacts: topology must be an openmm.app.Topology or an MDAnalysis Universe, got %r' % (topology,))
    if len(index) < 2:
        raise ValueError('nativeContacts: the selection has %d atoms; at least 2 are needed' % len(index))
    first, second, r0s = [], [], []
    for start in range(0, len(index), 512):
        block = slice(start, min(start + 512, len(index)))
        r = np.sqrt(((xyz[block, None, :] - xyz[None, :, :])**2).sum(axis=2))
        rows = np.arange(block.start, block.stop)[:, None]
        columns = np.arange(len(index))[None, :]
        separated = (chain[block, None] != chain[None, :]) | (np.abs(residue[block, None] - residue[None, :]) > min_residue_separation)
        a, b = np.nonzero((columns > rows) & separated & (r < cutoff))
        first.append(index[a + block.start])
        second.append(index[b])
        r0s.append(r[a, b])
    return np.concatenate(first), np.concatenate(second), np.concatenate(r0s)


def nativeContacts(topology, positions=None, selection=None, cutoff=0.45*unit.nanometer, minResidueSeparation=3,
                   beta=50.0/unit.nanometer, lambda_=1.8, periodic=False):
    """A CoordinationForce whose CV is the fraction of native contacts Q of a reference structure
    (Best, Hummer and Eaton): pair-list mode with the Q switching function, r0 of each pair its
    distance in the reference, and weights 1/N.

    Parameters
    ----------
    topology : openmm.app.Topology or MDAnalysis.Universe
    positions : the reference positions (a Quantity, or an (N, 3) array in nm); for a Universe,
        None takes its current frame
    selection : which atoms may form contacts. None: heavy atoms of protein residues. With a
        Topology, a function of an openmm.app Atom returning a bool, or atom indices; with a
        Universe, an MDAnalysis selection string
    cutoff : the largest native distance (default 0.45 nm; a Quantity or nm)
    minResidueSeparation : pairs of residues at most this far apart in a chain are left out
        (default 3: |i - j| > 3)
    beta : the steepness in 1/nm (default 50/nm; a Quantity or 1/nm)
    lambda_ : the tolerance factor on r0 (default 1.8; 1.5 for coarse-grained models)
    periodic : whether the force uses the nearest periodic image

    Raises ValueError for input that cannot give native contacts (no atoms selected, no pairs
    within the cutoff, positions of the wrong shape, non-positive cutoff, beta or lambda_).
    """
    beta = _value(beta, unit.nanometer**-1, 'beta')
    lambda_ = _value(lambda_, unit.dimensionless, 'lambda_')
    for name, value in (('beta', beta), ('lambda_', lambda_)):
        if not value > 0 or not np.isfinite(value):
            raise ValueError('nativeContacts: %s must be positive and finite, got %g' % (name, value))
    a, b, r0s = _findNativeContacts(topology, positions, selection, cutoff, minResidueSeparation)
    if len(a) == 0:
        raise ValueError('nativeContacts: no pairs of the selection are within the cutoff %s with residues more than %d apart'
                         % (cutoff, minResidueSeparation))
    force = CoordinationForce()
    force.setPairs(a, b, np.full(len(a), 1.0/len(a)), r0s)
    force.setSwitchingFunction(CoordinationForce.Q)
    force.setBeta(beta)
    force.setLambda(lambda_)
    force.setUsesPeriodicBoundaryConditions(bool(periodic))
    force.setName('NativeContactsQ')
    return force


def _snakeAlias(function, name, doc=None):
    """``function`` under its earlier snake_case name, which also takes min_residue_separation."""
    def alias(*args, min_residue_separation=None, **kwargs):
        if min_residue_separation is not None:
            if 'minResidueSeparation' in kwargs:
                raise ValueError('%s: give minResidueSeparation or min_residue_separation, not both, got %r and %r'
                                 % (name, kwargs['minResidueSeparation'], min_residue_separation))
            kwargs['minResidueSeparation'] = min_residue_separation
        return function(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = doc or ('An alias of %s() (its earlier name; min_residue_separation= is minResidueSeparation=).'
                            % function.__name__)
    return alias


native_contacts = _snakeAlias(nativeContacts, 'native_contacts')
find_native_contacts = _snakeAlias(
    _findNativeContacts, 'find_native_contacts',
    'An alias of findNativeContacts() (its earlier name; min_residue_separation= is minResidueSeparation=) that '
    'returns r0s as before issue 44: a plain array in nm, where findNativeContacts() returns a Quantity.')
