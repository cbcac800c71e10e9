"""The `md` section of benchmark.py: MD step time of a PME water box of 23,682 atoms (8,000 TIP3P
waters, PME 0.9 nm, 2 fs, LangevinMiddle) with coordination CVs of its oxygens (rational, r0 0.3 nm,
cutoff 1 nm), every case in ONE interleaved run against the same plain Contexts (--md-cases selects):
- restraint: one CV (1 O, 100 O, all O with each other) restrained by 0.5*k*(cv-cv0)^2. Ours: the
  force's own energy expression (the fast path); ours inside CustomCVForce (the compatibility path);
  the peer: CustomNonbondedForce (interaction group, periodic cutoff) inside CustomCVForce.
- restraint2: two CVs (1 O and 100 O against the other O) restrained by
  0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2. Ours: CoordinationBiasForce over two CoordinationForces; the
  peer: CustomCVForce over two CustomNonbondedForces, the same expression.
- metadynamics, metadynamics2, metadynamics3: well-tempered metadynamics on the 1 O CV, on the 1 O
  and 100 O CVs (2-D), and on those and a third, 1,000 O against the other O (3-D, on a grid of 41
  points an axis), hills every 500 steps. Ours: openmmcoordination.metadynamics.Metadynamics (the
  bias grid the table of one CoordinationBiasForce, on the GPU); compatible (1-D and 2-D):
  openmm.app.metadynamics.Metadynamics over our CoordinationForces, the BiasVariable path; the
  peer: openmm.app.metadynamics.Metadynamics over the CustomNonbondedForce CVs (its own
  CustomCVForce). The same BiasVariables (ranges, widths, grids) for all.
- opes2: OPES (openmmcoordination.OPES, PLUMED's OPES_METAD) on the 1 O and 100 O CVs, the
  metadynamics rows' grid, a kernel every 500 steps with the hills' widths as sigma, barrier 30 kJ/mol
  and the same bias factor. Compatible: the OPES OpenMM users install from PyPI, openmm-opes
  (openmm_opes.OPES: a CustomCVForce over a tabulated bias), over our CoordinationForces; the peer:
  openmm-opes over the CustomNonbondedForce CVs; the same variables, kernels and barrier. Without
  openmm-opes (an optional dependency of the benchmark) those two rows say it is missing.
- peratom: per-atom coordination numbers (issue 42): the number of O whose coordination by the
  other O (the same switching function and cutoff) is more than PER_ATOM_THRESHOLD, a CoordinationForce
  with the particle function MoreThan, restrained as the one-CV rows (the fast path). No peer exists:
  no OpenMM force computes sum_i f(sum_j s(r_ij)) (a CustomCVForce cannot express it), so the row has
  ours alone, and says so. Checked first against NumPy (every c_i and the CV).
Why one run: every overhead of the section is a ratio to the same plain Contexts timed in the same
rounds, so the one-CV, two-CV and metadynamics rows can be read side by side (separate runs would
each have their own plain Contexts, which step up to a few percent apart, as their replicas show),
and the plain Contexts are timed once for all. Three Contexts each of the plain box, of every
"ours" and of the one-CV restraints in CustomCVForce, ours and the peer's (the mean per round: the
ratio between those two has a target of 1.02x, within the spread between single Contexts), one of
each other kind; 5 rounds of step(2000), the order reversed
every other round (interleaved_md of common.py). Toggled overhead (restraints): the same Context
with and without the force's group integrated, in turn. Metadynamics rows have no toggled figure:
their Contexts advance through meta.step(), hills included (four per round); what the hills cost is
timed instead, the same Context through meta.step() and through Simulation.step() (no new hill), in
turn, 3 rounds. Before timing, each pair is checked: the CVs' values and forces; the two-CV
restraint's energy, forces and CV values away from its minimum; the metadynamics biases' energy and
forces after two hills, at moved positions. A two-CV case that cannot run (the platform lacks
CoordinationBiasForce, our Metadynamics takes one CV) or fails its check is not timed: its row says
why (skipped), and the run goes on.

A case is a group of MD_GROUPS (the values of --md-cases): run() adds the MdCases of each group
asked for to the one interleaved run.
"""

import time
import warnings
from copy import deepcopy

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce

from common import (CUTOFF, MD_REPLICAS, MD_ROUNDS, MD_STEPS, R0, TEMPERATURE, MdCase, adding, bare_system,
                    check_md_values, compare, energy_and_forces, interleaved_md, make_context, md_rows, peer_cv,
                    platform_properties, rational_cv, water_box)

# Well-tempered metadynamics of the md section (the same for ours and the peer), and OPES's barrier.
HILL_FREQUENCY, BIAS_FACTOR, HILL_HEIGHT = 500, 10.0, 1.0 * unit.kilojoules_per_mole
OPES_BARRIER = 30.0 * unit.kilojoules_per_mole


def md_cases(oxygens, quick):
    cases = [('1 O vs the other O', oxygens[:1], oxygens[1:]),
             ('100 O vs the other O', oxygens[:100], oxygens[100:])]
    if not quick:
        cases.append(('self-coordination of all O (dmax 1 nm)', oxygens, None))
    return cases


def restraint_constant(cv0):
    """k (kJ/mol) of the MD cases' restraint 0.5*k*(cv-cv0)^2: 10 for a CV up to 10, and
    10*(10/cv0)^2 beyond, so that a deviation of a tenth of cv0 costs 5 kJ/mol. A fixed k = 10
    made MD of the self-coordination of 8,000 O (cv0 about 18,400) blow up: in the toggled runs the
    CV drifts by about 200 while the force is left out, and the restraint then pulls with forces of
    about 2e4 kJ/mol/nm. The time of a step does not depend on k."""
    return 10.0 * min(1.0, (10.0 / cv0) ** 2)


MD_GROUPS = ('restraint', 'restraint2', 'metadynamics', 'metadynamics2', 'metadynamics3', 'opes2', 'peratom')
# The threshold of the per-atom row's MoreThan (r0 of PLUMED's MORE_THAN={RATIONAL R_0=4}): at the md
# box's starting positions the CV is 5,500 of the 7,894 oxygens (CPU, checked against NumPy; 315 of the
# quick box's 481).
PER_ATOM_THRESHOLD = 4.0
# The grid of the 3-D metadynamics row, an axis (121^3 points would take openmm.app seconds a hill).
GRID_3D = 41
RESTRAINT2 = '0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2'


def restrained_cv(force, cv0, k):
    """A CV with the restraint 0.5*k*(cv-cv0)^2 through its own energy expression (our fast path)."""
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', k)
    force.addGlobalParameter('cv0', cv0)
    return force


def per_atom_cv(oxygens):
    """The peratom case's CV: MoreThan (threshold RATIONAL r0 PER_ATOM_THRESHOLD, n 6, m 12) of every
    oxygen's coordination by the other oxygens, with the CVs' switching function and cutoff."""
    force = rational_cv(oxygens, None, CUTOFF, periodic=True)
    force.setParticleFunction(CoordinationForce.MoreThan)
    force.setThreshold(PER_ATOM_THRESHOLD)
    return force


def check_per_atom(system, positions, platform, precision, force, oxygens):
    """The per-atom CV alone in the box: its c_i against NumPy's (s = 1/(1+(r/r0)^6) within the cutoff,
    nearest image, rows of 500 oxygens at a time) and the CV against NumPy's MoreThan of them; returns
    the CV."""
    probe = bare_system(system)
    copy = deepcopy(force)      # of its own type (probe.getForce() gives a plugin's force as a Force)
    probe.addForce(copy)
    context, _ = make_context(probe, platform, precision)
    context.setPositions(positions)
    found = np.asarray(copy.getCoordinationNumbers(context))
    value = energy_and_forces(context)[0]
    del context
    xyz = np.array(positions.value_in_unit(unit.nanometer))[np.asarray(oxygens)]
    vectors = system.getDefaultPeriodicBoxVectors()
    box = np.array([vectors[i].value_in_unit(unit.nanometer)[i] for i in range(3)])
    c = np.zeros(len(oxygens))
    for first in range(0, len(oxygens), 500):
        d = xyz[None, :, :] - xyz[first:first + 500, None, :]
        d -= np.round(d / box) * box
        r = np.sqrt((d ** 2).sum(-1))
        s = np.where(r < CUTOFF, 1 / (1 + (r / R0) ** 6), 0.0)
        s[np.arange(len(s)), first + np.arange(len(s))] = 0.0
        c[first:first + 500] = s.sum(1)
    expected = float((1 - 1 / (1 + (c / PER_ATOM_THRESHOLD) ** 6)).sum())
    if not np.allclose(found, c, rtol=1e-4, atol=1e-4) or abs(value - expected) > 1e-4 * max(1.0, expected):
        raise RuntimeError('per-atom check: c_i differ from NumPy\'s by up to %g; the CV %g, NumPy\'s %g'
                           % (float(np.max(np.abs(found - c))), value, expected))
    return value


def cv_restraint(expression, cvs, parameters):
    """CustomCVForce(expression) over the CVs {name: force} with global parameters."""
    force = mm.CustomCVForce(expression)
    for name, value in parameters.items():
        force.addGlobalParameter(name, value)
    for name, cv in cvs.items():
        force.addCollectiveVariable(name, cv)
    return force


def bias_restraint(expression, cvs, parameters):
    """CoordinationBiasForce(expression) over the CoordinationForces {name: force}."""
    force = CoordinationBiasForce(expression)
    for name, value in parameters.items():
        force.addGlobalParameter(name, value)
    for name, cv in cvs.items():
        force.addCollectiveVariable(name, cv)
    return force


def metadynamics_variables(values, factories):
    """BiasVariables of the md section's metadynamics, the same for ours and the peer and the same
    axes in one and two dimensions: CV 1 (1 O, about 4.8 at the start) over [0, 12] with hills 0.2
    wide, CV 2 (100 O, about 457) over its starting value +- 60 with hills 2 wide, a grid spacing of
    half a hill's width: 121 points, 121 x 121 in two dimensions (openmm.app's default, a fifth of
    the width, would give 301 x 301). The grid sets the cost of a hill (both classes redo the
    table's splines and send it to the Context): on a 2-core CPU about 5 ms for 121 x 121 and
    15 ms for 201 x 201. In three dimensions, CV 3 (1,000 O, about 4,600) over its starting value
    +- 600 with hills 20 wide, and GRID_3D points an axis. factories: a function per CV that makes
    a fresh force of it."""
    from openmm.app.metadynamics import BiasVariable
    variables = []
    grid = 121 if len(values) < 3 else GRID_3D
    for index, (factory, value) in enumerate(zip(factories, values)):
        if index == 0:
            low, high, width = 0.0, 12.0, 0.2
        elif index == 1:
            low, high, width = max(0.0, round(value) - 60.0), round(value) + 60.0, 2.0
        else:
            low, high, width = max(0.0, round(value) - 600.0), round(value) + 600.0, 20.0
        variables.append(BiasVariable(factory(), low, high, width, gridWidth=grid))
    return variables


def metadynamics_build(cls, factories, values, frequency):
    """A build for MdCase: cls (ours or openmm.app's Metadynamics) over fresh CVs, hills every
    `frequency` steps. The 3-D row's grid (GRID_3D points an axis) is coarser than its hills on
    purpose (it times a step and a hill, not a free energy): our Metadynamics' warning that such a
    grid cannot resolve the hills is silenced there, and only there."""
    def build(system):
        with warnings.catch_warnings():
            if len(values) == 3:
                warnings.filterwarnings('ignore', message='.*the grid cannot resolve the hills', category=RuntimeWarning)
            return cls(system, metadynamics_variables(values, factories), TEMPERATURE, BIAS_FACTOR, HILL_HEIGHT, frequency)
    return build


def opes_build(factories, values, frequency):
    """A build for MdCase: OPES over fresh CVs on the metadynamics rows' grid, a kernel every
    `frequency` steps, sigma the hills' widths, which are 2 grid spacings: sigmaMin the same, so that
    the kernels stay as wide as the grid resolves (narrower ones drew OPES's resolution warning)."""
    from openmmcoordination.opes import OPES

    def build(system):
        variables = metadynamics_variables(values, factories)
        return OPES(system, variables, TEMPERATURE, OPES_BARRIER, frequency, biasFactor=BIAS_FACTOR, sigma='biasWidth',
                    sigmaMin=[v.biasWidth for v in variables])
    return build


def openmm_opes_build(factories, values, frequency):
    """A build for MdCase: openmm-opes (the PyPI package openmm_opes) over fresh CVs, with what
    opes_build gives ours: the grid, a kernel every `frequency` steps, a fixed sigma (its
    varianceFrequency None: each variable's biasWidth), the barrier and the bias factor. Raises
    ImportError where openmm-opes is not installed."""
    from openmm_opes import OPES

    def build(system):
        return OPES(system, metadynamics_variables(values, factories), TEMPERATURE, OPES_BARRIER, frequency, None,
                    biasFactor=BIAS_FACTOR)
    return build


def run(platform, precision, quick, groups=MD_GROUPS, rounds=None):
    """The md section: every case in one interleaved run against the same plain Contexts (see the
    module's docstring); rounds: instead of MD_ROUNDS (3 with quick)."""
    from openmm.app.metadynamics import Metadynamics as PeerMetadynamics
    from openmmcoordination.metadynamics import Metadynamics
    numWaters = 500 if quick else 8000
    steps, repeats, replicas = (200, 3, 1) if quick else (MD_STEPS, MD_ROUNDS, MD_REPLICAS)
    repeats = rounds or repeats
    frequency = 50 if quick else HILL_FREQUENCY
    system, positions, oxygens, topology = water_box(numWaters, withTopology=True)
    numParticles = system.getNumParticles()
    cases, described, skipped = [], [], []

    def add(name, bias, kinds, extra):
        """kinds: [(kind, label, build, replicas, toggled[, hills])] of one CV case."""
        labels = {}
        for kind, label, build, count, *flags in kinds:
            key = '%s: %s' % (name, label)
            cases.append(MdCase(key, build, count, *flags))
            labels[kind] = key
        described.append({'name': name, 'bias': bias, 'labels': labels, 'extra': extra})

    def skip(name, bias, error):
        """A two-CV case not timed: the platform or our Metadynamics cannot run it (ValueError,
        OpenMMException), or ours disagrees with the peer (RuntimeError): a row that says why, so
        that the run goes on to its other cases and sections."""
        reason = '%s: %s' % (type(error).__name__, str(error).strip().splitlines()[0] if str(error).strip() else '')
        print('md          SKIPPED %s: %s' % (name, reason), flush=True)
        skipped.append({'section': 'md', 'case': name, 'cv_case': name, 'bias': bias, 'kind': 'skipped', 'skipped': reason})

    single = md_cases(oxygens, quick)
    values = {}
    for name, groupA, groupB in (single if 'restraint' in groups else single[:2]):
        # The CV at the starting positions, ours against the peer (value and forces).
        values[name] = check_md_values(system, positions, platform, precision, rational_cv(groupA, groupB, CUTOFF, periodic=True),
                                       peer_cv(numParticles, groupA, groupB, CUTOFF))
    if 'restraint' in groups:
        for name, groupA, groupB in single:
            cv0 = values[name]
            k = restraint_constant(cv0)
            fast = restrained_cv(rational_cv(groupA, groupB, CUTOFF, periodic=True), cv0, k)
            compatible = cv_restraint('0.5*k*(cv-cv0)^2', {'cv': rational_cv(groupA, groupB, CUTOFF, periodic=True)},
                                      {'k': k, 'cv0': cv0})
            peer = cv_restraint('0.5*k*(cv-cv0)^2', {'cv': peer_cv(numParticles, groupA, groupB, CUTOFF)}, {'k': k, 'cv0': cv0})
            # Both sides of the CustomCVForce comparison are means of as many Contexts as ours: its
            # target (1.02x) is smaller than the spread between single Contexts.
            add(name, 'restraint', [('ours', 'fast path (own energy expression)', adding(fast), replicas, True),
                                    ('compatible', 'compatibility path (ours in CustomCVForce)', adding(compatible), replicas, False),
                                    ('peer', 'peer (CustomNonbondedForce in CustomCVForce)', adding(peer), replicas, True)],
                dict(cv0=cv0, k=k))
    (name1, a1, b1), (name2, a2, b2) = single[:2]
    ours1, ours2 = (lambda: rational_cv(a1, b1, CUTOFF, periodic=True)), (lambda: rational_cv(a2, b2, CUTOFF, periodic=True))
    peer1, peer2 = (lambda: peer_cv(numParticles, a1, b1, CUTOFF)), (lambda: peer_cv(numParticles, a2, b2, CUTOFF))
    cv1, cv2 = values[name1], values[name2]
    if 'restraint2' in groups:
        name = '1 O and 100 O vs the other O (2 CVs)'
        parameters = {'k1': restraint_constant(cv1), 'a': cv1, 'k2': restraint_constant(cv2), 'b': cv2}
        try:
            ours = bias_restraint(RESTRAINT2, {'c1': ours1(), 'c2': ours2()}, parameters)
            peer = cv_restraint(RESTRAINT2, {'c1': peer1(), 'c2': peer2()}, parameters)
            # Checked away from the restraint's minimum (there the forces vanish): a and b moved by a tenth.
            check_bias_values(system, positions, platform, precision, ours, peer, {'a': 0.9 * cv1, 'b': 0.9 * cv2})
            add(name, 'restraint', [('ours', 'ours (CoordinationBiasForce)', adding(ours), replicas, True),
                                    ('peer', 'peer (CustomCVForce over two CustomNonbondedForces)', adding(peer), 1, True)],
                dict(parameters, expression=RESTRAINT2))
        except (ValueError, RuntimeError, mm.OpenMMException) as error:
            skip(name, 'restraint', error)
    metadynamicsCases = [('metadynamics', 'metadynamics of 1 O vs the other O (1-D)', [ours1], [peer1], [cv1]),
                         ('metadynamics2', 'metadynamics of 1 O and 100 O vs the other O (2-D)', [ours1, ours2], [peer1, peer2],
                          [cv1, cv2])]
    if 'metadynamics3' in groups:
        # A third CV of the same box: a thousand O (a quarter of them in the quick box) against the others.
        third = oxygens[:1000] if len(oxygens) > 2000 else oxygens[:len(oxygens) // 4]
        ours3 = lambda: rational_cv(third, oxygens[len(third):], CUTOFF, periodic=True)  # noqa: E731
        peer3 = lambda: peer_cv(numParticles, third, oxygens[len(third):], CUTOFF)      # noqa: E731
        cv3 = check_md_values(system, positions, platform, precision, ours3(), peer3())
        metadynamicsCases.append(('metadynamics3', 'metadynamics of 1 O, 100 O and %d O vs the other O (3-D)' % len(third),
                                  [ours1, ours2, ours3], [peer1, peer2, peer3], [cv1, cv2, cv3]))
    for group, name, oursFactories, peerFactories, cvValues in metadynamicsCases:
        if group not in groups:
            continue
        dimensions = len(cvValues)
        try:
            check_metadynamics(system, positions, topology, platform, precision,
                               lambda f: metadynamics_build(Metadynamics, oursFactories, cvValues, f),
                               lambda f: metadynamics_build(PeerMetadynamics, peerFactories, cvValues, f))
            kinds = [('ours', 'ours (openmmcoordination Metadynamics)',
                      metadynamics_build(Metadynamics, oursFactories, cvValues, frequency), replicas, False, True),
                     ('peer', 'peer (openmm.app Metadynamics over %s)' % ('CustomNonbondedForce' if dimensions == 1 else
                                                                          '%d CustomNonbondedForces' % dimensions),
                      metadynamics_build(PeerMetadynamics, peerFactories, cvValues, frequency), 1, False, True)]
            if dimensions < 3:
                # The BiasVariable path: openmm.app's Metadynamics over our CoordinationForces, against the peer's.
                check_metadynamics(system, positions, topology, platform, precision,
                                   lambda f: metadynamics_build(PeerMetadynamics, oursFactories, cvValues, f),
                                   lambda f: metadynamics_build(PeerMetadynamics, peerFactories, cvValues, f))
                kinds.insert(1, ('compatible', 'compatible (openmm.app Metadynamics over our CoordinationForce%s)'
                                 % ('' if dimensions == 1 else 's'),
                                 metadynamics_build(PeerMetadynamics, oursFactories, cvValues, frequency), 1, False, True))
            add(name, 'metadynamics', kinds,
                dict(dimensions=dimensions, hill_frequency=frequency, bias_factor=BIAS_FACTOR,
                     hill_height=HILL_HEIGHT.value_in_unit(unit.kilojoules_per_mole), initial_cvs=cvValues,
                     bias_variables=[[v.minValue, v.maxValue, v.biasWidth, v.gridWidth]
                                     for v in metadynamics_variables(cvValues, oursFactories)]))
        except (ValueError, RuntimeError, mm.OpenMMException) as error:
            skip(name, 'metadynamics', error)
    if 'peratom' in groups:
        name = 'per-atom coordination of all O, MoreThan %g (dmax 1 nm; no peer exists)' % PER_ATOM_THRESHOLD
        try:
            cv0 = check_per_atom(system, positions, platform, precision, per_atom_cv(oxygens), oxygens)
            k = restraint_constant(cv0)
            add(name, 'restraint', [('ours', 'fast path (own energy expression); no peer exists',
                                     adding(restrained_cv(per_atom_cv(oxygens), cv0, k)), replicas, True)],
                dict(cv0=cv0, k=k, threshold=PER_ATOM_THRESHOLD,
                     peer='none: no OpenMM force computes sum_i f(sum_j s(r_ij)); a CustomCVForce cannot express it'))
        except (ValueError, RuntimeError, mm.OpenMMException) as error:
            skip(name, 'restraint', error)
    if 'opes2' in groups:
        name = 'OPES of 1 O and 100 O vs the other O (2-D)'
        build = opes_build([ours1, ours2], [cv1, cv2], frequency)
        try:
            check_opes(system, positions, topology, platform, precision, lambda f: opes_build([ours1, ours2], [cv1, cv2], f))
            kinds = [('ours', 'ours (openmmcoordination OPES)', build, replicas, False, True)]
            try:
                # openmm-opes over our CVs and over the peer's, checked against each other (as metadynamics).
                check_metadynamics(system, positions, topology, platform, precision,
                                   lambda f: openmm_opes_build([ours1, ours2], [cv1, cv2], f),
                                   lambda f: openmm_opes_build([peer1, peer2], [cv1, cv2], f), positive=False)
                kinds += [('compatible', 'compatible (openmm-opes over our CoordinationForces)',
                           openmm_opes_build([ours1, ours2], [cv1, cv2], frequency), 1, False, True),
                          ('peer', 'peer (openmm-opes over two CustomNonbondedForces)',
                           openmm_opes_build([peer1, peer2], [cv1, cv2], frequency), 1, False, True)]
            except ImportError as error:
                print('md          openmm-opes rows left out (pip install openmm-opes): %s' % error, flush=True)
                skipped.append({'section': 'md', 'case': name + ': openmm-opes', 'cv_case': name, 'bias': 'opes',
                                'kind': 'peer', 'skipped': 'openmm-opes is not installed (pip install openmm-opes): %s' % error})
            add(name, 'opes', kinds,
                dict(dimensions=2, hill_frequency=frequency, bias_factor=BIAS_FACTOR,
                     barrier=OPES_BARRIER.value_in_unit(unit.kilojoules_per_mole), initial_cvs=[cv1, cv2],
                     bias_variables=[[v.minValue, v.maxValue, v.biasWidth, v.gridWidth]
                                     for v in metadynamics_variables([cv1, cv2], [ours1, ours2])]))
        except (ValueError, RuntimeError, mm.OpenMMException) as error:
            skip(name, 'opes', error)

    def progress(what):
        print('md          %s done (+%.0f s)' % (what, time.perf_counter() - started), flush=True)
    started = time.perf_counter()
    results, spread = interleaved_md(system, positions, platform, precision, steps, repeats, cases, replicas, topology,
                                     progress=progress)
    return md_rows('md', described, numParticles, results, spread, replicas, repeats, steps) + skipped


def check_bias_values(system, positions, platform, precision, ours, peer, parameters):
    """A bias of several CVs (ours: CoordinationBiasForce; the peer: CustomCVForce), copies of each
    alone in the box with the global parameters set to `parameters`: energy, forces and the CV
    values must agree."""
    results, cvs = [], []
    for force in (ours, peer):
        probe = bare_system(system)
        copy = deepcopy(force)      # of its own type (XmlSerializer.clone gives a plugin's force as a Force)
        probe.addForce(copy)
        context, _ = make_context(probe, platform, precision)
        context.setPositions(positions)
        for name, value in parameters.items():
            context.setParameter(name, value)
        results.append(energy_and_forces(context))
        cvs.append(np.array(copy.getCollectiveVariableValues(context)))
        del context
    if not np.any(results[1][1]):
        raise RuntimeError('bias check: the peer\'s forces are zero; nothing is compared')
    compare('bias of %d CVs' % len(cvs[0]), *results, cvs=cvs)


def check_metadynamics(system, positions, topology, platform, precision, makeOurs, makePeer, positive=True):
    """Our metadynamics and the peer's, each alone on the box's particles frozen (mass 0), with a hill
    at every step (makeX(frequency) gives the build): the same CVs at the start, two hills there,
    then at positions moved by about 0.01 nm the bias energy and forces must agree (and the peer's
    must not vanish: a positive energy, or with positive False, as for openmm-opes, whose bias is a
    logarithm, a nonzero one)."""
    moved = np.array(positions.value_in_unit(unit.nanometer)) + np.random.default_rng(5).normal(0, 0.01, (len(positions), 3))
    results, cvs = [], []
    for make in (makeOurs, makePeer):
        probe = bare_system(system, mass=0.0)
        meta = make(1)(probe)
        group = probe.getForce(probe.getNumForces() - 1).getForceGroup()
        simulation = app.Simulation(topology, probe, mm.VerletIntegrator(0.001), platform, platform_properties(platform, precision))
        simulation.context.setPositions(positions)
        cvs.append(np.array(meta.getCollectiveVariables(simulation), dtype=float))
        meta.step(simulation, 2)
        simulation.context.setPositions(moved)
        results.append(energy_and_forces(simulation.context, {group}))
        del simulation
    if not np.any(results[1][1]) or (results[1][0] <= 0 if positive else results[1][0] == 0):
        raise RuntimeError('metadynamics check: the peer\'s bias is zero at the moved positions; nothing is compared')
    compare('metadynamics bias of %d CVs' % len(cvs[0]), *results, cvs=cvs)



def check_opes(system, positions, topology, platform, precision, makeOurs):
    """OPES alone on the box's particles frozen (mass 0), a kernel at every step: after two kernels,
    at positions moved by about 0.01 nm, the bias force's energy on the platform must be PLUMED's bias
    there (computed from the kernels on the host) less the table's floor, within the spline's error."""
    moved = np.array(positions.value_in_unit(unit.nanometer)) + np.random.default_rng(5).normal(0, 0.01, (len(positions), 3))
    probe = bare_system(system, mass=0.0)
    opes = makeOurs(1)(probe)
    simulation = app.Simulation(topology, probe, mm.VerletIntegrator(0.001), platform, platform_properties(platform, precision))
    simulation.context.setPositions(positions)
    opes.step(simulation, 2)
    simulation.context.setPositions(moved)
    energy = energy_and_forces(simulation.context, {opes.force.getForceGroup()})[0]
    kT = (unit.MOLAR_GAS_CONSTANT_R*opes.temperature).value_in_unit(unit.kilojoules_per_mole)
    floor = kT*(1 - 1/opes.biasFactor)*np.log(opes.epsilon)          # the table holds the bias less this
    exact = opes.getBiasAt(opes.getCollectiveVariables(simulation)).value_in_unit(unit.kilojoules_per_mole) - floor
    del simulation
    if not exact > 1.0 or not abs(energy - exact) <= 0.02*exact:
        raise RuntimeError('OPES check: the bias force\'s energy at the moved positions, %g kJ/mol, is not the kernels\' '
                           'bias less its floor, %g kJ/mol' % (energy, exact))


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick, md_cases, rounds)."""
    return run(platform, options.precision, options.quick, options.md_cases.split(','), options.rounds)
