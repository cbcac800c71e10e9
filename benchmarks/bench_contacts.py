"""The `contacts` section of benchmark.py: the fraction of native contacts Q of DHFR restrained in
MD, our CoordinationForce (pair list with per-pair r0 and weight, Q switching, the restraint
through its own energy expression) against the fastest per-pair peer in OpenMM, a CustomBondForce
with per-bond w and r0 inside a CustomCVForce, timed side by side in one run (interleaved_md of
common.py, both cases in one interleaving against the same plain Contexts: MD overhead against
the plain Contexts, and toggled in the force's own Context).

Cases: Best-Hummer-Eaton's native contacts (heavy atoms, residues more than 3 apart, within
0.45 nm: 1,942 pairs in DHFR) and a wider native cutoff of 0.65 nm (about 10^4 pairs). The full
solvated DHFR (23,558 atoms, PME, 2 fs, constraints on bonds to H); --quick: the protein alone
without cutoff, the first case only, a few steps (a smoke test on the CPU).

Per-pair parameters against the plain pair list: the same pairs (10^4 to 10^6 among 10^5
particles, Q switching, a restraint through the force's own energy expression), once with the
force's r0 and once with a weight and r0 of their own per pair, timed per step with the force
alone (step_time of common.py), alternating; the ratio is the cost of the per-pair values.
"""

import os

import openmm as mm
import openmm.app as app
import openmm.unit as unit

from openmmcoordination.contacts import native_contacts

import numpy as np

from openmmcoordination import CoordinationForce

from common import (MD_REPLICAS, MD_ROUNDS, MD_STEPS, MdCase, adding, check_md_values, interleaved_md, make_context, md_rows,
                    step_time)

# The solvated DHFR of the timed runs: COORDINATION_DHFR_PDB, else the first of ../shared/data beside
# the repository and shared/data inside it (a device call carries the second, not the first) that
# holds it; and the protein alone that ships in examples/data for --quick.
REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
PDB_PLACES = [os.path.join(REPOSITORY, *parts, 'data', 'dhfr_23558_atoms.pdb') for parts in (('..', 'shared'), ('shared',))]
PDB = os.environ.get('COORDINATION_DHFR_PDB') or next((place for place in PDB_PLACES if os.path.exists(place)), PDB_PLACES[0])
PROTEIN_PDB = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples', 'data', 'dhfr_protein.pdb')
RESTRAINT = '0.5*kq*(cv-q0)^2'
KQ = 1000.0     # kJ/mol: a deviation of 0.05 in Q costs 1.25 kJ/mol


def missing_pdb(quick):
    """Why the run cannot find the solvated DHFR (the places it looked), or None (found, or --quick)."""
    if quick or os.path.exists(PDB):
        return None
    where = PDB if os.environ.get('COORDINATION_DHFR_PDB') else ' nor at '.join(os.path.normpath(place) for place in PDB_PLACES)
    return ('bench_contacts: the solvated DHFR structure (dhfr_23558_atoms.pdb) is not at %s; set COORDINATION_DHFR_PDB '
            'to its path' % where)


def missing_inputs(options):
    """Why the section cannot run with benchmark.py's options, or None: benchmark.py asks before it
    times anything, so that a run does not end here after its other sections."""
    return missing_pdb(options.quick)


def dhfr_system(quick):
    if missing_pdb(quick):
        raise FileNotFoundError(missing_pdb(quick))
    pdb = app.PDBFile(PROTEIN_PDB if quick else PDB)
    forcefield = app.ForceField('amber99sb.xml', 'tip3p.xml')
    if quick:
        modeller = app.Modeller(pdb.topology, pdb.positions)
        modeller.deleteWater()
        system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)
        return system, modeller.topology, modeller.positions
    system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0*unit.nanometer,
                                     constraints=app.HBonds)
    return system, pdb.topology, pdb.positions


def peer_q(force):
    """Q of a native-contacts CoordinationForce as a CustomBondForce with per-bond w and r0."""
    bonds = mm.CustomBondForce('w/(1+exp(beta*(r-lambda*r0)))')
    bonds.addPerBondParameter('w')
    bonds.addPerBondParameter('r0')
    bonds.addGlobalParameter('beta', force.getBeta().value_in_unit(unit.nanometer**-1))
    bonds.addGlobalParameter('lambda', force.getLambda())
    r0s = force.getPairR0s().value_in_unit(unit.nanometer)
    for i, j, w, r0 in zip(force.getGroupA(), force.getGroupB(), force.getPairWeights(), r0s):
        bonds.addBond(int(i), int(j), [float(w), float(r0)])
    return bonds


def restrained(cv, q0, ours):
    """The restraint 0.5*kq*(Q-q0)^2: through our force's own energy expression, or the peer in a CustomCVForce."""
    if ours:
        cv.setEnergyExpression(RESTRAINT)
        cv.addGlobalParameter('kq', KQ)
        cv.addGlobalParameter('q0', q0)
        return cv
    restraint = mm.CustomCVForce(RESTRAINT)
    restraint.addGlobalParameter('kq', KQ)
    restraint.addGlobalParameter('q0', q0)
    restraint.addCollectiveVariable('cv', cv)
    return restraint


def run(platform, precision, quick, rounds=None):
    system, topology, positions = dhfr_system(quick)
    steps, repeats, replicas = (20, 2, 1) if quick else (MD_STEPS, MD_ROUNDS, MD_REPLICAS)
    repeats = rounds or repeats
    cutoffs = [0.45] if quick else [0.45, 0.65]
    cases, described = [], []
    for cutoff in cutoffs:
        q = native_contacts(topology, positions, cutoff=cutoff*unit.nanometer)
        pairs = q.getNumPairs()
        name = 'Q of DHFR, %d native contacts (cutoff %.2f nm)' % (pairs, cutoff)
        q0 = check_md_values(system, positions, platform, precision, native_contacts(topology, positions,
                             cutoff=cutoff*unit.nanometer), peer_q(q))
        labels = {'ours': '%s: ours (pair list with per-pair r0 and w, own energy expression)' % name,
                  'peer': '%s: peer (CustomBondForce with per-bond w, r0 in CustomCVForce)' % name}
        cases += [MdCase(labels['ours'], adding(restrained(q, q0, True)), replicas),
                  MdCase(labels['peer'], adding(restrained(peer_q(q), q0, False)))]
        described.append({'name': name, 'bias': 'restraint', 'labels': labels, 'extra': dict(pairs=pairs, q0=q0, kq=KQ)})
    # Both cases in one interleaved run, against the same plain Contexts.
    results, spread = interleaved_md(system, positions, platform, precision, steps, repeats, cases, replicas)
    rows = md_rows('contacts', described, system.getNumParticles(), results, spread, replicas, repeats, steps)
    return rows + pair_parameter_rows(platform, precision, quick)


def pair_list_force(a, b, weights=None, r0s=None):
    """Q over the pairs (a[k], b[k]) with a restraint, plain (the force's r0) or with per-pair values."""
    force = CoordinationForce()
    if weights is None:
        force.setGroups(a, b, True)
    else:
        force.setPairs(a, b, weights, r0s)
    force.setSwitchingFunction(CoordinationForce.Q)
    force.setR0(0.3)
    force.setEnergyExpression('0.5*k*(cv-c0)^2')
    force.addGlobalParameter('k', 1e-3)
    force.addGlobalParameter('c0', 0.0)
    return force


def pair_parameter_rows(platform, precision, quick):
    """Step time of the per-pair path against the plain pair list, the same pairs, alternating."""
    rng = np.random.default_rng(23)
    numParticles = 2000 if quick else 100000
    positions = rng.uniform(0, 10.0*(numParticles/1e5)**(1/3), (numParticles, 3))
    rows = []
    for numPairs in ([1000] if quick else [10**4, 10**5, 10**6]):
        a = rng.integers(0, numParticles, numPairs)
        b = (a + rng.integers(1, numParticles, numPairs)) % numParticles
        # With w = 1 and every r0 the force's, the per-pair path must give the plain CV.
        plain, perPair = pair_list_force(a, b), pair_list_force(a, b, np.ones(numPairs), np.full(numPairs, 0.3))
        cvs = []
        for force in (plain, perPair):
            system = mm.System()
            for _ in range(numParticles):
                system.addParticle(1.0)
            system.addForce(force)
            context, _ = make_context(system, platform, precision)
            context.setPositions(positions)
            cvs.append(force.getCollectiveVariableValue(context))
            del context
        if abs(cvs[1] - cvs[0]) > 1e-4*max(1.0, abs(cvs[0])):
            raise RuntimeError('per-pair CV %g differs from the plain pair list %g' % (cvs[1], cvs[0]))
        steps, repeats = (5, 2) if quick else (200, 5)
        times = {'plain': [], 'per-pair': []}
        for _ in range(3):
            times['plain'].append(step_time(pair_list_force(a, b), positions, platform, precision, steps, repeats))
            times['per-pair'].append(step_time(pair_list_force(a, b, rng.uniform(0.5, 1.5, numPairs), rng.uniform(0.25, 0.35, numPairs)),
                                               positions, platform, precision, steps, repeats))
        plainMs, perPairMs = 1e3*float(np.median(times['plain'])), 1e3*float(np.median(times['per-pair']))
        rows.append(dict(section='contacts', case='per-pair w and r0 against the plain pair list, %d pairs' % numPairs,
                         pairs=numPairs, particles=numParticles, plain_ms_per_step=plainMs, per_pair_ms_per_step=perPairMs,
                         per_pair_over_plain=perPairMs/plainMs, replicas=3, steps=steps, repeats=repeats))
    return rows


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick, rounds)."""
    return run(platform, options.precision, options.quick, options.rounds)
