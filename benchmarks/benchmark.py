"""Benchmark openmm-coordination side by side with the peers a user has today.

Every row times our force and its peer in the same process, on the same platform, and reports
the ratio. Each result (CV or energy, forces) is checked against the peer before it is timed;
times are medians over repeats after a warm-up; MD Contexts are timed in turn, round after round
in alternating order, and an overhead is the median over rounds of the ratio to the plain box.
Prints a table and writes JSON naming the GPU, OpenMM's version and the precision.

    python benchmarks/benchmark.py --platform CUDA --precision mixed --json results.json
    python benchmarks/report.py results.json                        # docs/performance.md and its plots
    python benchmarks/benchmark.py --platform CPU --quick          # a smoke test without a GPU

Sections (--sections, default all, in this order):

md: MD step time of a PME water box of 23,682 atoms (8,000 TIP3P waters, PME 0.9 nm, 2 fs,
  LangevinMiddle) with coordination CVs of its oxygens (rational, r0 0.3 nm, cutoff 1 nm), every case
  in ONE interleaved run against the same plain Contexts (--md-cases selects):
  - restraint: one CV (1 O, 100 O, all O with each other) restrained by 0.5*k*(cv-cv0)^2. Ours: the
    force's own energy expression (the fast path); ours inside CustomCVForce (the compatibility path);
    the peer: CustomNonbondedForce (interaction group, periodic cutoff) inside CustomCVForce.
  - restraint2: two CVs (1 O and 100 O against the other O) restrained by
    0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2. Ours: CoordinationBiasForce over two CoordinationForces; the
    peer: CustomCVForce over two CustomNonbondedForces, the same expression.
  - metadynamics, metadynamics2: well-tempered metadynamics on the 1 O CV, and on both CVs (2-D), hills
    every 500 steps. Ours: openmmcoordination.metadynamics.Metadynamics (the bias grid the table of
    one CoordinationBiasForce, on the GPU); the peer: openmm.app.metadynamics.Metadynamics over the
    CustomNonbondedForce CVs (its own CustomCVForce). The same BiasVariables (ranges, widths, grids)
    for both.
  Why one run: every overhead of the section is a ratio to the same plain Contexts timed in the same
  rounds, so the one-CV, two-CV and metadynamics rows can be read side by side (separate runs would
  each have their own plain Contexts, which step up to a few percent apart, as their replicas show),
  and the plain Contexts are timed once for all. Three Contexts each of the plain box and of every
  "ours" (the mean per round), one of each other kind; 5 rounds of step(2000), the order reversed
  every other round. Toggled overhead (restraints): the same Context with and without the force's
  group integrated, in turn. Metadynamics rows have no toggled figure: their Contexts advance through
  meta.step(), hills included (four per round); what the hills cost is timed instead, the same
  Context through meta.step() and through Simulation.step() (no new hill), in turn, 3 rounds. Before timing, each pair is checked: the CVs' values
  and forces; the two-CV restraint's energy, forces and CV values away from its minimum; the
  metadynamics biases' energy and forces after two hills, at moved positions. A two-CV case that
  cannot run (the platform lacks CoordinationBiasForce, our Metadynamics takes one CV) or fails its
  check is not timed: its row says why (skipped), and the run goes on.
contacts: Q of DHFR's native contacts restrained in MD against a CustomBondForce in CustomCVForce,
  both cases in one interleaved run, and the cost of per-pair values (bench_contacts.py).
throughput: CV + forces evaluations, no cutoff, against CustomNonbondedForce, by getState and inside a
  step of frozen particles.
cutoff: self-coordination of up to a million atoms with a periodic cutoff (cell lists) against
  CustomNonbondedForce with CutoffPeriodic; per evaluation with forces and with the energy alone,
  particles numbered at random or in spatial order.
latency: a small CV inside a step.
histogram: pair histograms against CuPy.
coldstart: what the force adds to a first Context, cold and warm (cold_start.py), in the run's
  precision (--coldstart-precisions for others).

The JSON's info records the date, the command, the options, the GPU (its UUID too), and each
section's elapsed seconds (sections_elapsed_s; also printed as the run goes); the JSON is rewritten
after every section, with complete = false until the last. A run cut short (a device call's time
limit) goes on with --resume FILE in a later call on the same GPU with the same options: the
sections it has not finished run, their rows join the file, and info.resumed records when. A full
run (compilation of the kernels on a fresh machine included) is meant to take about 8 minutes on an
H100, so that one run makes the whole of docs/performance.md.
What keeps it there: md and contacts time 5 rounds (--rounds; with 7 the median's error would be
about a fifth smaller, while the larger noise, Contexts that step apart for their lifetime, is met by
the replicas) and share their plain Contexts among their cases; the compatibility path has no
toggled overhead (the page does not show it); the metadynamics of one CV is timed on md's box, in
md's run (not on a box of its own: Modeller.addSolvent(numAdded=...) takes seconds), and openmm.app
over our CV is not timed (the compatibility path gives that figure); throughput and cutoff build each
force's System once (a million particles take seconds in Python) and use one Context per force for
the check, the getState timing and the step timing; the cutoff's step without lists of homes is
timed only with --diagnostics; coldstart runs one precision.
"""

import argparse
import json
from copy import deepcopy
import os
import platform as host
import statistics
import sys
import time

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce

R0 = 0.3          # nm, the switching length of every CV here
CUTOFF = 1.0      # nm, the cutoff of the MD cases
WATER_DENSITY = 33.4  # molecules per nm^3
ATOM_DENSITY = 3 * WATER_DENSITY  # atoms per nm^3 of water


def make_context(system, platform, precision, integrator=None):
    integrator = integrator or mm.VerletIntegrator(0.001)
    properties = {'Precision': precision} if platform.getName() in ('CUDA', 'OpenCL') else {}
    return mm.Context(system, integrator, platform, properties), integrator


def median_time(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rational_cv(groupA, groupB=None, dmax=None, periodic=False, stretch=False):
    """Our CV: s = 1/(1+(r/r0)^6) over the pairs, optional hard cutoff (no stretch, like the peer)."""
    force = CoordinationForce(groupA) if groupB is None else CoordinationForce(groupA, groupB)
    force.setR0(R0)
    force.setDMax(float('inf') if dmax is None else dmax)
    force.setStretch(stretch)
    force.setUsesPeriodicBoundaryConditions(periodic)
    return force


def peer_cv(numParticles, groupA, groupB=None, cutoff=None):
    """The peer CV: CustomNonbondedForce with the same function and an interaction group."""
    force = mm.CustomNonbondedForce('1/(1+(r/%g)^6)' % R0)
    for _ in range(numParticles):
        force.addParticle([])
    if cutoff is None:
        force.setNonbondedMethod(mm.CustomNonbondedForce.NoCutoff)
    else:
        force.setNonbondedMethod(mm.CustomNonbondedForce.CutoffPeriodic)
        force.setCutoffDistance(cutoff)
    if groupB is not None:
        force.addInteractionGroup(groupA, groupB)
    elif len(groupA) < numParticles:
        force.addInteractionGroup(groupA, groupA)
    return force


# ---------------------------------------------------------------------------------------------
# MD step time of a PME water box

def water_box(numWaters, withTopology=False):
    """The benchmark's PME water box of numWaters TIP3P waters (at the density of water): System,
    positions, the oxygens' indices, and the Topology if withTopology."""
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    modeller = app.Modeller(app.Topology(), [])
    edge = (numWaters / WATER_DENSITY) ** (1 / 3)
    modeller.addSolvent(forcefield, model='tip3p', boxSize=mm.Vec3(edge, edge, edge) * unit.nanometer)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.9 * unit.nanometer,
                                     constraints=app.HBonds, rigidWater=True)
    oxygens = [atom.index for atom in modeller.topology.atoms() if atom.element == app.element.oxygen]
    if withTopology:
        return system, modeller.positions, oxygens, modeller.topology
    return system, modeller.positions, oxygens


def md_cases(oxygens, quick):
    cases = [('1 O vs the other O', oxygens[:1], oxygens[1:]),
             ('100 O vs the other O', oxygens[:100], oxygens[100:])]
    if not quick:
        cases.append(('self-coordination of all O (dmax 1 nm)', oxygens, None))
    return cases


EXTRA_GROUP = 1     # the force group of the force an MdRun adds to the water box (the box's are 0)
ALL_GROUPS = 0xffffffff
MD_STEPS, MD_ROUNDS, MD_REPLICAS = 2000, 5, 3   # step(MD_STEPS) per timing; rounds; Contexts of plain and of ours
TEMPERATURE = 300 * unit.kelvin
# Well-tempered metadynamics of the md section (the same for ours and the peer).
HILL_FREQUENCY, BIAS_FACTOR, HILL_HEIGHT = 500, 10.0, 1.0 * unit.kilojoules_per_mole


def platform_properties(platform, precision):
    return {'Precision': precision} if platform.getName() in ('CUDA', 'OpenCL', 'HIP') else {}


def adding(force):
    """A build for MdCase: adds a copy of the force, in force group EXTRA_GROUP, to the System."""
    def build(system):
        copy = mm.XmlSerializer.clone(force)
        copy.setForceGroup(EXTRA_GROUP)
        system.addForce(copy)
    return build


class MdCase:
    """One kind of MD Context of an interleaved run: its label, a build(system) that adds its
    force(s) to a copy of the box's System (and returns a metadynamics object, whose step() then
    advances the Context, or None), its number of Contexts, whether its toggled overhead is
    measured (the added force's group integrated and left out, in turn, in its own Context) and,
    metadynamics, whether the cost of its hills is (steps with and without adding hills, in turn)."""

    def __init__(self, label, build, replicas=1, toggled=True, hills=False):
        self.label, self.build, self.replicas, self.toggled, self.hills = label, build, replicas, toggled, hills


class MdRun:
    """One MD Context of the water box (plus what a build adds: a force in group EXTRA_GROUP, or a
    metadynamics bias, stepped through a Simulation and meta.step()), warmed up, timed step(steps)
    at a time."""

    def __init__(self, system, positions, platform, precision, build=None, topology=None, warmup=200):
        system = mm.XmlSerializer.clone(system)
        meta = build(system) if build is not None else None
        integrator = mm.LangevinMiddleIntegrator(TEMPERATURE, 1 / unit.picosecond, 2 * unit.femtosecond)
        integrator.setRandomNumberSeed(1)
        if meta is None:
            self.context, self.integrator = make_context(system, platform, precision, integrator)
            self.advance = self.withoutHills = self.integrator.step
        else:
            simulation = app.Simulation(topology, system, integrator, platform, platform_properties(platform, precision))
            self.context, self.integrator = simulation.context, integrator
            self.advance = lambda steps: meta.step(simulation, steps)
            # The same steps with the bias but no new hill (steps a multiple of the hills' interval
            # keep the steps of later hills).
            self.withoutHills = simulation.step
            warmup = max(warmup, 2 * meta.frequency)     # hills included
        self.context.setPositions(positions)
        self.context.setVelocitiesToTemperature(TEMPERATURE, 1)
        self.advance(warmup)

    def seconds(self, steps, groups=ALL_GROUPS, hills=True):
        """Seconds of step(steps), integrating the force groups in the bit mask groups (and, for
        metadynamics, adding hills or not)."""
        self.integrator.setIntegrationForceGroups(groups)
        self.context.getState(getEnergy=True)
        start = time.perf_counter()
        (self.advance if hills else self.withoutHills)(steps)
        self.context.getState(getEnergy=True)
        return time.perf_counter() - start


def interleaved_md(system, positions, platform, precision, steps, repeats, cases, replicas=1, topology=None, warmup=200,
                   progress=None):
    """ms per step of the plain box and of the box with each MdCase, with all Contexts timed in turn,
    round after round (alternating the order), so that drifts of the GPU's clock hit all of them alike.
    The plain box gets `replicas` Contexts and each case its own number, built alike: two Contexts of
    the same System can step several percent apart for as long as they live, and the mean over
    replicas keeps one such Context from deciding a small overhead; the plain replicas are spread
    evenly over a round. Returns ({label: {'ms': median ms per step, 'relative': median over rounds
    of the time relative to plain, 'rounds': that ratio per round, 'toggled': toggled overhead (a
    ratio) or None}}, spread: the largest difference between the plain replicas, in percent of the
    first)."""
    runs = {('plain', r): MdRun(system, positions, platform, precision, warmup=warmup) for r in range(replicas)}
    for case in cases:
        for r in range(case.replicas):
            runs[(case.label, r)] = MdRun(system, positions, platform, precision, case.build, topology, warmup)
    others = [(case.label, r) for r in range(max([c.replicas for c in cases] + [1])) for case in cases if r < case.replicas]
    order = []
    for r in range(replicas):
        order.append(('plain', r))
        order += others[round(r * len(others) / replicas):round((r + 1) * len(others) / replicas)]
    times = {key: [] for key in runs}
    for round_ in range(repeats):
        for key in (order if round_ % 2 == 0 else order[::-1]):
            times[key].append(1000 * runs[key].seconds(steps) / steps)
        if progress:
            progress('round %d of %d' % (round_ + 1, repeats))
    labels = ['plain'] + [case.label for case in cases]
    # Per round, the mean over a label's replicas.
    perRound = {label: np.mean([times[key] for key in runs if key[0] == label], axis=0) for label in labels}
    results = {}
    for label in labels:
        relative = perRound[label] / perRound['plain']
        results[label] = {'ms': float(np.median(perRound[label])), 'relative': float(np.median(relative)),
                          'rounds': [float(x) for x in relative], 'toggled': None}
    for case in cases:
        results[case.label]['hills'] = None
        if case.toggled:
            results[case.label]['toggled'] = toggled_md(runs[(case.label, 0)], steps, repeats)
        if case.hills:
            results[case.label]['hills'] = hills_md(runs[(case.label, 0)], steps, min(3, repeats))
    if progress:
        progress('toggled overheads and hills')
    plainMedians = [np.median(times[('plain', r)]) for r in range(replicas)]
    spread = 100 * (max(plainMedians) - min(plainMedians)) / plainMedians[0]
    return results, spread


def toggled_md(run, steps, repeats):
    """The added force's cost within its own Context: step(steps) integrating every force group and
    leaving out the added force's group, in turn (alternating the order), so that the two differ
    in that force alone (not in the Context, its memory or its trajectory). Returns the median
    over rounds of the time with the force relative to the time without it."""
    withForce, without = [], []
    for round_ in range(repeats):
        for include in ((True, False) if round_ % 2 == 0 else (False, True)):
            seconds = run.seconds(steps, ALL_GROUPS if include else ALL_GROUPS & ~(1 << EXTRA_GROUP))
            (withForce if include else without).append(seconds)
    run.integrator.setIntegrationForceGroups(ALL_GROUPS)
    return float(np.median([a / b for a, b in zip(withForce, without)]))


def hills_md(run, steps, repeats):
    """What a metadynamics run's hills cost: step(steps) of its Context through meta.step() (a hill
    every `frequency` steps) and through Simulation.step() (the bias, no new hill), in turn; the
    median over rounds of the time with hills relative to the time without."""
    withHills, without = [], []
    for round_ in range(repeats):
        for hills in ((True, False) if round_ % 2 == 0 else (False, True)):
            (withHills if hills else without).append(run.seconds(steps, hills=hills))
    return float(np.median([a / b for a, b in zip(withHills, without)]))


def restraint_constant(cv0):
    """k (kJ/mol) of the MD cases' restraint 0.5*k*(cv-cv0)^2: 10 for a CV up to 10, and
    10*(10/cv0)^2 beyond, so that a deviation of a tenth of cv0 costs 5 kJ/mol. A fixed k = 10
    made MD of the self-coordination of 8,000 O (cv0 about 18,400) blow up: in the toggled runs the
    CV drifts by about 200 while the force is left out, and the restraint then pulls with forces of
    about 2e4 kJ/mol/nm. The time of a step does not depend on k."""
    return 10.0 * min(1.0, (10.0 / cv0) ** 2)


MD_GROUPS = ('restraint', 'restraint2', 'metadynamics', 'metadynamics2')
RESTRAINT2 = '0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2'


def restrained_cv(force, cv0, k):
    """A CV with the restraint 0.5*k*(cv-cv0)^2 through its own energy expression (our fast path)."""
    force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    force.addGlobalParameter('k', k)
    force.addGlobalParameter('cv0', cv0)
    return force


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
    15 ms for 201 x 201. factories: a function per CV that makes a fresh force of it."""
    from openmm.app.metadynamics import BiasVariable
    variables = []
    for index, (factory, value) in enumerate(zip(factories, values)):
        if index == 0:
            low, high, width = 0.0, 12.0, 0.2
        else:
            low, high, width = max(0.0, round(value) - 60.0), round(value) + 60.0, 2.0
        variables.append(BiasVariable(factory(), low, high, width, gridWidth=121))
    return variables


def metadynamics_build(cls, factories, values, frequency):
    """A build for MdCase: cls (ours or openmm.app's Metadynamics) over fresh CVs, hills every
    `frequency` steps."""
    def build(system):
        return cls(system, metadynamics_variables(values, factories), TEMPERATURE, BIAS_FACTOR, HILL_HEIGHT, frequency)
    return build


def bench_md(platform, precision, quick, groups=MD_GROUPS, rounds=None):
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
            add(name, 'restraint', [('ours', 'fast path (own energy expression)', adding(fast), replicas, True),
                                    ('compatible', 'compatibility path (ours in CustomCVForce)', adding(compatible), 1, False),
                                    ('peer', 'peer (CustomNonbondedForce in CustomCVForce)', adding(peer), 1, True)],
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
    for group, name, oursFactories, peerFactories, cvValues in (
            ('metadynamics', 'metadynamics of 1 O vs the other O (1-D)', [ours1], [peer1], [cv1]),
            ('metadynamics2', 'metadynamics of 1 O and 100 O vs the other O (2-D)', [ours1, ours2], [peer1, peer2], [cv1, cv2])):
        if group not in groups:
            continue
        try:
            check_metadynamics(system, positions, topology, platform, precision,
                               lambda f: metadynamics_build(Metadynamics, oursFactories, cvValues, f),
                               lambda f: metadynamics_build(PeerMetadynamics, peerFactories, cvValues, f))
            add(name, 'metadynamics',
                [('ours', 'ours (openmmcoordination Metadynamics)',
                  metadynamics_build(Metadynamics, oursFactories, cvValues, frequency), replicas, False, True),
                 ('peer', 'peer (openmm.app Metadynamics over %s)' % ('CustomNonbondedForce' if len(cvValues) == 1 else
                                                                      'two CustomNonbondedForces'),
                  metadynamics_build(PeerMetadynamics, peerFactories, cvValues, frequency), 1, False, True)],
                dict(dimensions=len(cvValues), hill_frequency=frequency, bias_factor=BIAS_FACTOR,
                     hill_height=HILL_HEIGHT.value_in_unit(unit.kilojoules_per_mole), initial_cvs=cvValues,
                     bias_variables=[[v.minValue, v.maxValue, v.biasWidth, v.gridWidth]
                                     for v in metadynamics_variables(cvValues, oursFactories)]))
        except (ValueError, RuntimeError, mm.OpenMMException) as error:
            skip(name, 'metadynamics', error)

    def progress(what):
        print('md          %s done (+%.0f s)' % (what, time.perf_counter() - started), flush=True)
    started = time.perf_counter()
    results, spread = interleaved_md(system, positions, platform, precision, steps, repeats, cases, replicas, topology,
                                     progress=progress)
    return md_rows('md', described, numParticles, results, spread, replicas, repeats, steps) + skipped


def md_rows(section, described, numAtoms, results, spread, replicas, repeats, steps):
    """The rows of an interleaved_md() run: the plain box, then for each CV case (described: its
    name, bias, {kind: label}, extra fields) each kind with its overhead, toggled overhead and speedup
    against the case's peer (the peer's ms per step over its own)."""
    plain = results['plain']['ms']
    rows = [{'section': section, 'case': 'plain (%d atoms)' % numAtoms, 'kind': 'plain', 'ms_per_step': plain,
             'atoms': numAtoms, 'replicas': replicas, 'plain_replica_spread_percent': spread, 'steps': steps,
             'repeats': repeats}]
    for case in described:
        peer = results[case['labels']['peer']]['ms'] if 'peer' in case['labels'] else None
        for kind, label in case['labels'].items():
            result = results[label]
            row = {'section': section, 'case': label, 'cv_case': case['name'], 'bias': case['bias'], 'kind': kind,
                   'ms_per_step': result['ms'], 'overhead_percent': 100 * (result['relative'] - 1),
                   'overhead_per_round_percent': [100 * (x - 1) for x in result['rounds']],
                   'plain_ms_per_step': plain, 'speedup_vs_peer': peer / result['ms'] if peer else None,
                   'replicas': replicas if kind == 'ours' else 1, 'steps': steps, 'repeats': repeats}
            if result['toggled'] is not None:
                row['toggled_overhead_percent'] = 100 * (result['toggled'] - 1)
            if result.get('hills') is not None:
                row['hills_overhead_percent'] = 100 * (result['hills'] - 1)
            row.update(case['extra'])
            row['note'] = ('all Contexts timed in turn, %d rounds of step(%d); overhead: median over rounds of the time '
                           'relative to the mean of the %d plain Contexts of the same round (ours: the mean of %d '
                           'Contexts); toggled overhead: the same Context with and without the force\'s group '
                           'integrated, in turn' % (repeats, steps, replicas, replicas))
            rows.append(row)
    return rows


def bare_system(system, mass=None):
    """The particles (with their masses, or all of the given mass) and the box of a System, no forces."""
    probe = mm.System()
    for i in range(system.getNumParticles()):
        probe.addParticle(system.getParticleMass(i) if mass is None else mass)
    probe.setDefaultPeriodicBoxVectors(*system.getDefaultPeriodicBoxVectors())
    return probe


def energy_and_forces(context, groups=-1):
    state = context.getState(getEnergy=True, getForces=True, groups=groups)
    return (state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole),
            state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer))


def compare(name, ours, peer, cvs=None):
    """Raise unless our (energy, forces) agree with the peer's (and our CV values with the peer's)."""
    if abs(ours[0] - peer[0]) > 1e-4 * max(1.0, abs(peer[0])):
        raise RuntimeError('%s: energy %g, the peer\'s %g' % (name, ours[0], peer[0]))
    norm = np.linalg.norm(peer[1])
    if np.linalg.norm(ours[1] - peer[1]) > 1e-3 * max(norm, 1e-6):
        raise RuntimeError('%s: forces differ from the peer\'s by %g (norm %g)' % (name, np.linalg.norm(ours[1] - peer[1]), norm))
    if cvs is not None and not np.allclose(cvs[0], cvs[1], rtol=1e-4, atol=1e-4):
        raise RuntimeError('%s: CVs %s, the peer\'s %s' % (name, list(cvs[0]), list(cvs[1])))


def check_md_values(system, positions, platform, precision, ours, peer):
    """Our CV force and the peer's, each alone in the box: their energies (the CV) and forces must
    agree; returns the CV."""
    results = []
    for force in (ours, peer):
        probe = bare_system(system)
        probe.addForce(force)
        context, _ = make_context(probe, platform, precision)
        context.setPositions(positions)
        results.append(energy_and_forces(context))
        del context
    compare('CV', *results)
    return results[0][0]


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


def check_metadynamics(system, positions, topology, platform, precision, makeOurs, makePeer):
    """Our metadynamics and the peer's, each alone on the box's particles frozen (mass 0), with a hill
    at every step (makeX(frequency) gives the build): the same CVs at the start, two hills there,
    then at positions moved by about 0.01 nm the bias energy and forces must agree."""
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
    if not np.any(results[1][1]) or results[1][0] <= 0:
        raise RuntimeError('metadynamics check: the peer\'s bias is zero at the moved positions; nothing is compared')
    compare('metadynamics bias of %d CVs' % len(cvs[0]), *results, cvs=cvs)


# ---------------------------------------------------------------------------------------------
# CV + forces throughput, no cutoff

def random_positions(n, seed=1, density=WATER_DENSITY):
    """Uniform random positions in a cube of n / density nm^3; returns them and its edge."""
    edge = (n / density) ** (1 / 3)
    return np.random.default_rng(seed).uniform(0, edge, (n, 3)), edge


def force_system(force, n, edge=None, mass=1.0):
    """A System of n particles with one force and, if edge is given, a cubic periodic box."""
    system = mm.System()
    for _ in range(n):
        system.addParticle(mass)
    if edge is not None:
        system.setDefaultPeriodicBoxVectors(mm.Vec3(edge, 0, 0), mm.Vec3(0, edge, 0), mm.Vec3(0, 0, edge))
    system.addForce(force)
    return system


class FrozenContext:
    """A Context of a System of frozen particles (mass 0, so the positions never change) with one
    force: its energy and forces, the time of getState, and the time per integrator step, in which
    the force is evaluated with nothing read back. energyOnly: a CustomIntegrator whose step asks
    for the energy alone (no forces) and then sets x = x, so that the next step evaluates again;
    OpenMM sums the energy on the GPU and copies that one number to the host every step. One
    Context serves the check against the peer, the getState timing and the step timing of a force."""

    def __init__(self, system, positions, platform, precision, energyOnly=False):
        if energyOnly:
            integrator = mm.CustomIntegrator(0.001)
            integrator.addGlobalVariable('e', 0)
            integrator.addComputeGlobal('e', 'energy')
            integrator.addComputePerDof('x', 'x')
        else:
            integrator = mm.VerletIntegrator(0.001)
        self.positions, self.energyOnly = positions, energyOnly
        self.context, self.integrator = make_context(system, platform, precision, integrator)
        self.context.setPositions(positions)

    def evaluate(self):
        """(energy, forces) from one getState."""
        state = self.context.getState(getEnergy=True, getForces=True)
        return (state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole),
                state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer))

    def getstate_seconds(self, repeats, forces=True):
        """Median seconds of getState(Energy, and Forces if forces)."""
        return median_time(lambda: self.context.getState(getEnergy=True, getForces=forces), repeats)

    def step_seconds(self, steps, repeats):
        """Seconds per step: a warm-up of steps/10, then the median of `repeats` step(steps), with a
        getState(Energy) at each end to synchronize; checks that the particles stayed where they
        were (and, energy only, that the step computed the energy)."""
        self.integrator.step(max(1, steps // 10))

        def run():
            self.context.getState(getEnergy=True)
            self.integrator.step(steps)
            self.context.getState(getEnergy=True)
        seconds = median_time(run, repeats) / steps
        if np.abs(self.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
                  - self.positions).max() > 1e-5:
            raise RuntimeError('frozen particles moved')
        if self.energyOnly:
            energy = self.context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
            value = self.integrator.getGlobalVariableByName('e')
            if abs(value - energy) > 1e-5 * max(1.0, abs(energy)):
                raise RuntimeError('the energy-only step computed %g, not %g' % (value, energy))
        return seconds

    def close(self):
        del self.context, self.integrator


def frozen_system(force, positions, edge=None):
    return force_system(force, len(positions), edge, mass=0.0)


def evaluation_time(force, positions, platform, precision, repeats, edge=None, timeForces=True):
    """(median seconds of getState(Energy, and Forces if timeForces), energy, forces): energy and
    forces from one getState before the timing."""
    run = FrozenContext(frozen_system(force, positions, edge), positions, platform, precision)
    value, forces = run.evaluate()
    seconds = run.getstate_seconds(repeats, timeForces)
    run.close()
    return seconds, value, forces


def step_count(seconds):
    """Steps per timed repeat: 1,000, or fewer (at least 10) where a step takes long (about 2 s a repeat)."""
    return int(min(1000, max(10, 2.0 / seconds)))


def step_time(force, positions, platform, precision, steps, repeats, edge=None, energyOnly=False):
    """Seconds per integrator step with the force alone and every particle frozen (FrozenContext)."""
    run = FrozenContext(frozen_system(force, positions, edge), positions, platform, precision, energyOnly)
    seconds = run.step_seconds(steps, repeats)
    run.close()
    return seconds


class environment:
    """Environment variables set for the duration of a with block (the CUDA kernel's switches are
    read when a Context is created), then restored."""

    def __init__(self, **variables):
        self.variables = variables

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.variables}
        os.environ.update(self.variables)

    def __exit__(self, *exception):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def check_against_peer(name, ours, peer):
    """Raise unless our (seconds, value, forces) agree with the peer's; return the differences."""
    relative = abs(ours[1] - peer[1]) / abs(peer[1])
    forceError = np.linalg.norm(ours[2] - peer[2]) / np.linalg.norm(peer[2])
    if relative > 1e-4 or forceError > 1e-3:
        raise RuntimeError('%s: CV %g vs peer %g, force error %g' % (name, ours[1], peer[1], forceError))
    return relative, forceError


def timed_pair(oursSystem, peerSystem, positions, platform, precision, repeats, timeForces=True):
    """Our FrozenContext and the peer's: each evaluated once and its getState timed, in turn.
    Returns the two runs (still open, for their step timings) and ((seconds, energy, forces) of
    ours, of the peer)."""
    runs, evaluations = [], []
    for system in (oursSystem, peerSystem):
        run = FrozenContext(system, positions, platform, precision)
        value, forces = run.evaluate()
        evaluations.append((run.getstate_seconds(repeats, timeForces), value, forces))
        runs.append(run)
    return runs, evaluations


def bench_throughput(platform, precision, quick):
    cases = [('1k x 10k', 1000, 10000), ('10k x 10k', 10000, 10000), ('20k self', 20000, None), ('100k self', 100000, None)]
    if quick:
        cases = [('100 x 1k', 100, 1000), ('2k self', 2000, None)]
    rows = []
    for name, na, nb in cases:
        n = na + (nb or 0)
        positions, _ = random_positions(n)
        groupA = list(range(na))
        groupB = list(range(na, n)) if nb else None
        pairs = na * nb if nb else na * (na - 1) // 2
        repeats = 5 if n >= 50000 else 20
        (oursRun, peerRun), (ours, peer) = timed_pair(frozen_system(rational_cv(groupA, groupB), positions),
                                                      frozen_system(peer_cv(n, groupA, groupB), positions),
                                                      positions, platform, precision, repeats)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        oursStep = oursRun.step_seconds(steps, 3)
        oursRun.close()
        peerStep = peerRun.step_seconds(steps, 3)
        peerRun.close()
        # A step without the force: what remains of a step when the evaluation is taken away.
        emptyStep = step_time(mm.CustomExternalForce('0'), positions, platform, precision, steps, 3)
        rows.append({'section': 'throughput', 'case': name, 'pairs': pairs, 'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0],
                     'pairs_per_s': pairs / ours[0], 'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
                     'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
                     'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
                     'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
                     'value_relative_difference': relative, 'force_relative_difference': forceError,
                     'note': 'ms: getState(Energy|Forces), including the host read-back of the forces, for both; '
                             'ms_in_step: integrator.step(%d) with frozen particles (mass 0), per step, in the same Context '
                             'after the getState timing' % steps})
    return rows


# ---------------------------------------------------------------------------------------------
# Self-coordination with a periodic cutoff (cell lists) against CustomNonbondedForce CutoffPeriodic

def pairs_within(force, context, positions, edge, distance):
    """The number of pairs closer than distance: the one-bin histogram of a self-coordination force
    over every particle (in its Context), checked against the expectation for uniform random
    positions, N(N-1)/2 * 4/3 pi distance^3 / V."""
    count = int(force.getPairHistogram(context, 1, distance)[0])
    n = len(positions)
    estimate = n * (n - 1) / 2 * (4 / 3 * np.pi * distance ** 3) / edge ** 3
    if abs(count - estimate) > 0.02 * estimate:
        raise RuntimeError('%d pairs within %g nm, %g expected' % (count, distance, estimate))
    return count


def spatial_order(positions, edge, bins=64):
    """The particles renumbered along a Z-order (Morton) curve over bins^3 cells of the box: the same
    configuration, numbered as OpenMM keeps the atoms of any System with a cutoff nonbonded force
    (it reorders them spatially every 250 steps, the peer's Context included), so that particles
    close in space are close in index."""
    cells = np.minimum((positions / edge * bins).astype(np.int64), bins - 1)
    code = np.zeros(len(positions), dtype=np.int64)
    for bit in range(int(np.log2(bins))):
        for axis in range(3):
            code |= ((cells[:, axis] >> bit) & 1) << (3 * bit + axis)
    return positions[np.argsort(code, kind='stable')]


def bench_cutoff(platform, precision, quick, diagnostics=False):
    """Self-coordination of random atoms, periodic, dmax 1 nm (cell lists): getState(Energy) (which
    computes the forces too), forces inside a step and the energy alone inside a step, against
    CustomNonbondedForce CutoffPeriodic. Each force's System is built once (a million particles take
    seconds in Python) and serves all its Contexts; one Context per force and integrator serves the
    check, the getState timing, the step timing and (ours) the count of pairs within dmax.
    diagnostics: also our step with the lists of homes off (COORDINATION_NEIGHBOR_LIST=0)."""
    # The spec's peer figure (1.55 ms, 7e7 pairs within 1 nm for 1M atoms) is at the number density of
    # water molecules; the last row is at the 3x denser density of water's atoms, for reference.
    cases = ([(5000, 0.6, WATER_DENSITY, 'random'), (5000, 0.6, WATER_DENSITY, 'spatial')] if quick else
             [(100000, CUTOFF, WATER_DENSITY, 'random'), (1000000, CUTOFF, WATER_DENSITY, 'random'),
              (1000000, CUTOFF, WATER_DENSITY, 'spatial'), (1000000, CUTOFF, ATOM_DENSITY, 'random')])
    rows = []
    for n, dmax, density, order in cases:
        positions, edge = random_positions(n, density=density)
        if order == 'spatial':
            positions = spatial_order(positions, edge)
        group = list(range(n))
        name = '%s atoms self, %.1f/nm^3, periodic, dmax %g nm, %s numbering' % (format(n, ','), density, dmax, order)
        oursForce = rational_cv(group, None, dmax, periodic=True)
        systems = {'ours': frozen_system(oursForce, positions, edge), 'peer': frozen_system(peer_cv(n, group, None, dmax), positions, edge),
                   # A step without the force: what remains of a step when the evaluation is taken away.
                   'empty': frozen_system(mm.CustomExternalForce('0'), positions, edge)}
        (oursRun, peerRun), (ours, peer) = timed_pair(systems['ours'], systems['peer'], positions, platform, precision, 20,
                                                      timeForces=False)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        times = {('ours', False): oursRun.step_seconds(steps, 3)}
        pairs = pairs_within(oursForce, oursRun.context, positions, edge, dmax)
        oursRun.close()
        times['peer', False] = peerRun.step_seconds(steps, 3)
        peerRun.close()
        times['empty', False] = step_seconds(systems['empty'], positions, platform, precision, steps)
        for label in ('ours', 'peer', 'empty'):
            times[label, True] = step_seconds(systems[label], positions, platform, precision, steps, energyOnly=True)
        # Our lists of homes (the default from 50,001 particles) are built once in a frozen box: the
        # same step with them rebuilt at every evaluation (and, diagnostics, with no lists: the cell
        # kernel filters the cells at every evaluation, as before the lists of homes).
        variants = [('rebuilt', 'always')] + ([('no lists', '0')] if diagnostics else [])
        for label, mode in variants:
            with environment(COORDINATION_NEIGHBOR_LIST=mode):
                times[label, False] = step_seconds(systems['ours'], positions, platform, precision, steps)
        oursStep, peerStep, emptyStep = times['ours', False], times['peer', False], times['empty', False]
        rebuilt = times['rebuilt', False] - emptyStep
        oursEnergy, peerEnergy = (times[label, True] - times['empty', True] for label in ('ours', 'peer'))
        row = {'section': 'cutoff', 'case': name, 'atoms': n, 'density_per_nm3': density, 'dmax': dmax, 'numbering': order,
               'pairs_within_dmax': pairs,
               'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0], 'pairs_per_s': pairs / ours[0],
               'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
               'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
               'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
               'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
               'speedup_per_evaluation': (peerStep - emptyStep) / (oursStep - emptyStep),
               'energy_only_ms_per_evaluation': 1000 * oursEnergy, 'peer_energy_only_ms_per_evaluation': 1000 * peerEnergy,
               'energy_only_speedup': peerEnergy / oursEnergy,
               'rebuilt_ms_per_evaluation': 1000 * rebuilt,
               'ms_per_evaluation_rebuilt_every_10': 1000 * ((oursStep - emptyStep) * 9 + rebuilt) / 10,
               'value_relative_difference': relative, 'force_relative_difference': forceError,
               'note': 'ms: getState(Energy) for both (the protocol of the peer figure 1.55 ms for 1M; OpenMM\'s '
                       'Context::getState computes the forces along with the energy, and adds the kinetic energy, all '
                       'velocities copied to the host and summed there, about 1 ms for 1M particles); '
                       'ms_per_evaluation: ms_in_step less the same step without the force; '
                       'ms_in_step: integrator.step(%d) with frozen particles (mass 0), forces every step, per step, in '
                       'the Context of the getState timing; '
                       'energy_only_ms_per_evaluation: the same with a CustomIntegrator step that asks for the energy '
                       'alone (no forces, no kinetic energy), less that step without the force; '
                       'numbering: random, or spatial (a Z-order curve, as OpenMM reorders the atoms of a System '
                       'with a cutoff nonbonded force); '
                       'rebuilt_ms_per_evaluation: ours with its neighbour lists rebuilt at every evaluation '
                       '(COORDINATION_NEIGHBOR_LIST=always; frozen, the lists are otherwise built once), '
                       'ms_per_evaluation_rebuilt_every_10: one rebuild in ten evaluations (in MD the lists are '
                       'rebuilt when a particle has moved 0.049 nm); '
                       'pairs within dmax counted by our histogram, checked against N(N-1)/2*4/3*pi*dmax^3/V; '
                       'peer: CustomNonbondedForce, CutoffPeriodic %g nm' % (steps, dmax)}
        if diagnostics:
            row['no_lists_ms_per_evaluation'] = 1000 * (times['no lists', False] - emptyStep)
        rows.append(row)
    return rows


def step_seconds(system, positions, platform, precision, steps, energyOnly=False):
    """Seconds per step of a FrozenContext of the System made for this call alone (median of 3)."""
    run = FrozenContext(system, positions, platform, precision, energyOnly)
    seconds = run.step_seconds(steps, 3)
    run.close()
    return seconds


def bench_small_latency(platform, precision, quick):
    """Per-evaluation cost of a 1 x 1,000-pair CV inside an MD step (step time with it minus without)."""
    n = 1001
    positions, _ = random_positions(n)
    times = []
    for withForce in (False, True):
        system = mm.System()
        for _ in range(n):
            system.addParticle(1.0)
        # A trivial force keeps the step non-empty in both cases.
        bonds = mm.HarmonicBondForce()
        bonds.addBond(1, 2, 0.3, 1.0)
        system.addForce(bonds)
        if withForce:
            force = rational_cv([0], list(range(1, n)))
            force.setEnergyExpression('0.5*k*(cv-1)^2')
            force.addGlobalParameter('k', 1.0)
            system.addForce(force)
        context, integrator = make_context(system, platform, precision, mm.VerletIntegrator(1e-6))
        context.setPositions(positions)
        steps = 200 if quick else 5000
        integrator.step(steps // 10)

        def run():
            context.getState(getEnergy=True)
            integrator.step(steps)
            context.getState(getEnergy=True)
        times.append(median_time(run, 3) / steps)
        del context
    return [{'section': 'latency', 'case': '1 x 1,000 pairs with a restraint, per MD step',
             'us_per_evaluation': 1e6 * (times[1] - times[0]), 'us_step_without': 1e6 * times[0]}]


# ---------------------------------------------------------------------------------------------
# Pair histograms against CuPy

def cupy_histogram(positions, edge, numBins, maxDistance):
    import cupy as cp
    pos = cp.asarray(positions, dtype=cp.float32)
    n = len(positions)
    counts = cp.zeros(numBins, dtype=cp.int64)
    block = 2048
    for start in range(0, n, block):
        d = pos[start:start + block, None, :] - pos[None, :, :]
        d -= edge * cp.rint(d / edge)
        r = cp.sqrt((d * d).sum(axis=2))
        counts += cp.histogram(r, bins=numBins, range=(0.0, maxDistance))[0]
    counts[0] -= n  # each particle with itself
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(counts) // 2


def bench_histogram(platform, precision, quick):
    return bench_histogram_all_pairs(platform, precision, quick) + bench_histogram_cutoff(platform, precision, quick)


def bench_histogram_all_pairs(platform, precision, quick):
    n = 5000 if quick else 100000
    numBins = 200
    positions, edge = random_positions(n)
    maxDistance = 0.5 * edge
    force, context = histogram_context(positions, edge, platform, precision)
    ours = force.getPairHistogram(context, numBins, maxDistance)
    pairs = n * (n - 1) // 2
    single, accumulated = histogram_times(force, context, numBins, maxDistance)
    rows = [{'section': 'histogram', 'case': '%d atoms, all pairs, %d bins, one frame read back' % (n, numBins),
             'ms': 1000 * single, 'pairs_per_s': pairs / single},
            {'section': 'histogram', 'case': '%d atoms, accumulated on the device, per frame' % n,
             'ms': 1000 * accumulated, 'pairs_per_s': pairs / accumulated}]
    try:
        import cupy  # noqa: F401
    except ImportError:
        return rows
    peer = cupy_histogram(positions, edge, numBins, maxDistance)
    moved = int(np.abs(peer - ours).sum())
    if moved > 1e-5 * ours.sum() + 10:
        raise RuntimeError('histogram disagrees with CuPy: %d counts differ' % moved)
    peerTime = median_time(lambda: cupy_histogram(positions, edge, numBins, maxDistance), 3)
    for row in rows:
        row.update({'peer': 'CuPy', 'peer_ms': 1000 * peerTime, 'peer_pairs_per_s': pairs / peerTime,
                    'speedup_vs_peer': peerTime / (row['ms'] / 1000), 'counts_differing_from_peer': moved})
    return rows


def histogram_times(force, context, numBins, maxDistance, frames=10):
    """Seconds for one frame read back, and per frame accumulated on the device."""
    single = median_time(lambda: force.getPairHistogram(context, numBins, maxDistance), 5)

    def accumulate():
        force.resetPairHistogram(context)
        for _ in range(frames):
            force.accumulatePairHistogram(context, numBins, maxDistance)
        force.getAccumulatedPairHistogram(context)
    return single, median_time(accumulate, 3) / frames


def histogram_context(positions, edge, platform, precision):
    force = CoordinationForce(list(range(len(positions))))
    force.setUsesPeriodicBoundaryConditions(True)
    context, _ = make_context(force_system(force, len(positions), edge), platform, precision)
    context.setPositions(positions)
    return force, context


def bench_histogram_cutoff(platform, precision, quick):
    """A million atoms at the density of water's atoms, rmax 1.5 nm (cell lists): pairs within
    rmax per second. CuPy's all-pairs histogram of a million atoms is out of reach, so its peer
    figure is its pairs/s on 100,000 atoms (same density, own box)."""
    n, maxDistance, numBins = (5000, 0.6, 200) if quick else (1000000, 1.5, 200)
    positions, edge = random_positions(n, seed=3, density=ATOM_DENSITY)
    force, context = histogram_context(positions, edge, platform, precision)
    pairs = int(force.getPairHistogram(context, numBins, maxDistance).sum())  # pairs within rmax
    single, accumulated = histogram_times(force, context, numBins, maxDistance)
    del context
    name = '%s atoms, rmax %g nm' % (format(n, ','), maxDistance)
    note = 'periodic cube, cell lists; pairs_per_s: pairs within rmax (the histogram\'s count) per second'
    rows = [{'section': 'histogram', 'case': name + ': one frame read back', 'bins': numBins, 'pairs_within_rmax': pairs,
             'ms': 1000 * single, 'pairs_per_s': pairs / single, 'note': note},
            {'section': 'histogram', 'case': name + ': accumulated on the device, per frame', 'bins': numBins,
             'pairs_within_rmax': pairs, 'ms': 1000 * accumulated, 'pairs_per_s': pairs / accumulated, 'note': note}]
    try:
        import cupy  # noqa: F401
    except ImportError:
        return rows
    peerN = min(n, 100000)
    peerPositions, peerEdge = random_positions(peerN, seed=4, density=ATOM_DENSITY)
    peerForce, peerContext = histogram_context(peerPositions, peerEdge, platform, precision)
    ours = peerForce.getPairHistogram(peerContext, numBins, maxDistance)
    del peerContext
    peer = cupy_histogram(peerPositions, peerEdge, numBins, maxDistance)
    moved = int(np.abs(peer - ours).sum())
    # float distances err by about 1e-6 nm: pairs that close to a bin edge may land on either side
    if moved > 4e-6 / (maxDistance / numBins) * ours.sum() + 10:
        raise RuntimeError('histogram disagrees with CuPy: %d counts differ' % moved)
    peerTime = median_time(lambda: cupy_histogram(peerPositions, peerEdge, numBins, maxDistance), 3)
    peerRate = peerN * (peerN - 1) / 2 / peerTime
    for row in rows:
        row.update({'peer': 'CuPy', 'peer_ms': 1000 * peerTime, 'peer_pairs_per_s': peerRate,
                    'pairs_per_s_ratio_vs_peer': row['pairs_per_s'] / peerRate, 'counts_differing_from_peer': moved,
                    'note': note + '; peer: CuPy blocked all-pairs histogram of %s atoms (same density, own box; '
                            'a million is out of its reach), all pairs per second, peer_ms for those atoms; '
                            'pairs_per_s_ratio_vs_peer compares the two rates, not times' % format(peerN, ',')})
    return rows


# ---------------------------------------------------------------------------------------------

def describe(platform, precision):
    info = {'openmm': mm.Platform.getOpenMMVersion(), 'platform': platform.getName(), 'precision': precision,
            'host': host.node(), 'python': sys.version.split()[0]}
    try:
        import subprocess
        info['gpu'] = subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version', '--format=csv,noheader'],
                                     capture_output=True, text=True, check=True).stdout.strip()
        info['gpu_uuid'] = subprocess.run(['nvidia-smi', '--query-gpu=uuid', '--format=csv,noheader'],
                                          capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        info['gpu'] = info['gpu_uuid'] = None
    return info


def resumed_run(path, info, options):
    """(info, rows, the sections left) of the run in the JSON at path, to go on with where it is the
    same machine's run (platform, precision, OpenMM, GPU and its UUID) with the same options;
    raises ValueError saying what differs otherwise."""
    with open(path) as source:
        previous = json.load(source)
    recorded = previous.get('info', {})
    for key in ('platform', 'precision', 'openmm', 'gpu', 'gpu_uuid'):
        if recorded.get(key) != info.get(key):
            raise ValueError('--resume: the run in %s has %s %r, this one %r; a run goes on only on the same machine'
                             % (path, key, recorded.get(key), info.get(key)))
    if recorded.get('options') != options:
        changed = sorted(k for k in set(options) | set(recorded.get('options') or {})
                         if (recorded.get('options') or {}).get(k) != options.get(k))
        raise ValueError('--resume: the run in %s was started with other options (%s); give the same ones'
                         % (path, ', '.join('%s %r, not %r' % (k, (recorded.get('options') or {}).get(k), options.get(k))
                                            for k in changed)))
    left = [name for name in recorded['sections'] if name not in recorded.get('sections_elapsed_s', {})]
    return recorded, previous.get('rows', []), left


def print_table(rows):
    for row in rows:
        if 'skipped' in row:
            print('%-11s %-75s not measured: %s' % (row['section'], row['case'][:75], row['skipped']), flush=True)
            continue
        keys = [k for k in ('ms_per_step', 'overhead_percent', 'toggled_overhead_percent', 'ms', 'peer_ms', 'pairs_per_s', 'peer_pairs_per_s',
                            'speedup_vs_peer', 'pairs_per_s_ratio_vs_peer', 'ms_in_step', 'peer_ms_in_step',
                            'speedup_in_step', 'ms_per_evaluation', 'peer_ms_per_evaluation', 'energy_only_ms_per_evaluation',
                            'peer_energy_only_ms_per_evaluation', 'rebuilt_ms_per_evaluation', 'ms_per_evaluation_rebuilt_every_10',
                            'no_lists_ms_per_evaluation', 'us_per_evaluation', 'plain_replica_spread_percent', 'pairs',
                            'added_cold_s', 'added_warm_s')
                if row.get(k) is not None]
        values = '  '.join('%s=%.4g' % (k, row[k]) for k in keys)
        print('%-11s %-75s %s' % (row['section'], row['case'][:75], values), flush=True)


SECTIONS = ('md', 'contacts', 'throughput', 'cutoff', 'latency', 'histogram', 'coldstart')


def run_section(name, platform, args):
    """The rows of one section."""
    if name == 'md':
        return bench_md(platform, args.precision, args.quick, args.md_cases.split(','), args.rounds)
    if name == 'coldstart':
        import cold_start
        precisions = (args.coldstart_precisions or args.precision).split(',')
        return cold_start.run(platform=args.platform, precisions=precisions, quick=args.quick)
    if name == 'contacts':
        import bench_contacts
        return bench_contacts.run(platform, args.precision, args.quick, args.rounds)
    if name == 'cutoff':
        return bench_cutoff(platform, args.precision, args.quick, args.diagnostics)
    return {'throughput': bench_throughput, 'latency': bench_small_latency,
            'histogram': bench_histogram}[name](platform, args.precision, args.quick)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='mixed', choices=['single', 'mixed', 'double'])
    parser.add_argument('--sections', default=','.join(SECTIONS), help='default: all, %(default)s')
    parser.add_argument('--md-cases', default=','.join(MD_GROUPS),
                        help='the cases of the md section, run together: restraint (one CV: 1 O, 100 O, self), restraint2 '
                             '(two CVs), metadynamics (one CV), metadynamics2 (two CVs); default: all')
    parser.add_argument('--rounds', type=int, help='rounds of the interleaved MD runs of md and contacts (default %d; '
                                                    '3 with --quick); each adds about 20 s to md and 8 s to contacts '
                                                    'on an H100 (estimated)' % MD_ROUNDS)
    parser.add_argument('--coldstart-precisions', help='precisions of the coldstart section (default: --precision)')
    parser.add_argument('--diagnostics', action='store_true',
                        help='also time what the page does not show (cutoff: our step with the lists of homes off)')
    parser.add_argument('--quick', action='store_true', help='tiny sizes, for a smoke test')
    parser.add_argument('--json', help='write the results here (after every section, so that a run cut short keeps '
                                       'the sections it finished)')
    parser.add_argument('--resume', metavar='JSON',
                        help='go on with the run this JSON holds (cut short in an earlier call): same GPU, same options; '
                             'runs the sections it lacks and writes them into it (or into --json)')
    args = parser.parse_args(argv)
    names = args.sections.split(',')
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        parser.error('unknown section(s) %s; the sections are %s (metadynamics is part of md: --md-cases)'
                     % (', '.join(unknown), ', '.join(SECTIONS)))
    unknown = [name for name in args.md_cases.split(',') if name not in MD_GROUPS]
    if unknown:
        parser.error('unknown md case(s) %s; they are %s' % (', '.join(unknown), ', '.join(MD_GROUPS)))
    platform = mm.Platform.getPlatformByName(args.platform)
    info = describe(platform, args.precision)
    now = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    options = {key: value for key, value in vars(args).items() if key not in ('json', 'resume')}
    rows, done = [], 0.0
    if args.resume:
        try:
            info, rows, names = resumed_run(args.resume, info, options)
        except (OSError, ValueError, KeyError) as error:
            parser.error(str(error))
        info['resumed'] = info.get('resumed', []) + [now]
        done = info.get('elapsed_s', 0.0)
        args.json = args.json or args.resume
    else:
        info['date'] = now
        info['command'] = ' '.join(['python', 'benchmarks/benchmark.py'] + (sys.argv[1:] if argv is None else list(argv)))
        info['options'] = options
        info['sections'] = names
        info['sections_elapsed_s'] = {}
        info['complete'] = False
    print(json.dumps(info), flush=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    start = time.perf_counter()
    for index, name in enumerate(names):
        print('== %s (%d of %d) starts at %.0f s' % (name, index + 1, len(names), time.perf_counter() - start), flush=True)
        sectionStart = time.perf_counter()
        new = run_section(name, platform, args)
        elapsed = time.perf_counter() - sectionStart
        print_table(new)
        rows += new
        info['sections_elapsed_s'][name] = round(elapsed, 1)
        info['elapsed_s'] = round(done + time.perf_counter() - start, 1)
        info['complete'] = index == len(names) - 1
        print('== %s: %d rows in %.0f s (the run so far: %.0f s)' % (name, len(new), elapsed, info['elapsed_s']), flush=True)
        if args.json:
            with open(args.json, 'w') as out:
                json.dump({'info': info, 'rows': rows}, out, indent=1)
    print('== all %d sections in %.0f s: %s' % (len(info['sections']), info.get('elapsed_s', 0), ', '.join(
        '%s %.0f s' % item for item in info['sections_elapsed_s'].items())), flush=True)


if __name__ == '__main__':
    main()
