"""Benchmark openmm-coordination side by side with the peers a user has today.

Every row times our force and its peer in the same process, on the same platform, and reports
the ratio. Each result (CV or energy, forces) is checked against the peer before it is timed;
times are medians over repeats after a warm-up; MD Contexts are timed in turn, round after round
in alternating order, and an overhead is the median over rounds of the ratio to the plain box.
Prints a table and writes JSON naming the GPU, OpenMM's version and the precision.

    python benchmarks/benchmark.py --platform CUDA --precision mixed --json results.json
    python benchmarks/benchmark.py --platform CPU --quick          # a smoke test without a GPU

Sections (--sections): md (MD step time of a PME water box: plain, our restraint through its own
energy expression, ours inside CustomCVForce, and CustomNonbondedForce inside CustomCVForce; each
overhead both against the plain Contexts (three of the plain box and of the fast path) and toggled,
the force's group on and off in its own Context), throughput (CV + forces evaluations, no cutoff,
against CustomNonbondedForce, by getState and inside a step), cutoff (self-coordination of up to a
million atoms with a periodic cutoff, cell lists, against CustomNonbondedForce with CutoffPeriodic;
per evaluation with forces and with the energy alone, particles numbered at random or in spatial
order), latency (a small CV inside a step),
histogram (pair histograms against CuPy), metadynamics (GPU-resident metadynamics against
openmm.app.Metadynamics), coldstart (what the force adds to a first Context, cold and warm, in every
precision: cold_start.py), contacts (Q of DHFR's native contacts restrained in MD against a
CustomBondForce in CustomCVForce: bench_contacts.py).
"""

import argparse
import json
import os
import platform as host
import statistics
import sys
import time

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

from openmmcoordination import CoordinationForce

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

def water_box(numWaters):
    forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
    modeller = app.Modeller(app.Topology(), [])
    edge = (numWaters / WATER_DENSITY) ** (1 / 3)
    modeller.addSolvent(forcefield, model='tip3p', boxSize=mm.Vec3(edge, edge, edge) * unit.nanometer)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.9 * unit.nanometer,
                                     constraints=app.HBonds, rigidWater=True)
    oxygens = [atom.index for atom in modeller.topology.atoms() if atom.element == app.element.oxygen]
    return system, modeller.positions, oxygens


def md_cases(oxygens, quick):
    cases = [('1 O vs the other O', oxygens[:1], oxygens[1:]),
             ('100 O vs the other O', oxygens[:100], oxygens[100:])]
    if not quick:
        cases.append(('self-coordination of all O (dmax 1 nm)', oxygens, None))
    return cases


EXTRA_GROUP = 1     # the force group of the force an MdRun adds to the water box (the box's are 0)
ALL_GROUPS = 0xffffffff


class MdRun:
    """One MD Context of the water box (plus an optional force, in force group EXTRA_GROUP), warmed
    up, timed step(steps) at a time."""

    def __init__(self, system, positions, platform, precision, extra=None):
        system = mm.XmlSerializer.clone(system)
        if extra is not None:
            extra.setForceGroup(EXTRA_GROUP)
            system.addForce(extra)
        integrator = mm.LangevinMiddleIntegrator(300 * unit.kelvin, 1 / unit.picosecond, 2 * unit.femtosecond)
        integrator.setRandomNumberSeed(1)
        self.context, self.integrator = make_context(system, platform, precision, integrator)
        self.context.setPositions(positions)
        self.context.setVelocitiesToTemperature(300 * unit.kelvin, 1)
        self.integrator.step(200)

    def seconds(self, steps, groups=ALL_GROUPS):
        """Seconds of step(steps), integrating the force groups in the bit mask groups."""
        self.integrator.setIntegrationForceGroups(groups)
        self.context.getState(getEnergy=True)
        start = time.perf_counter()
        self.integrator.step(steps)
        self.context.getState(getEnergy=True)
        return time.perf_counter() - start


def interleaved_md(system, positions, platform, precision, steps, repeats, forces, replicas=1):
    """ms per step of the plain box and of the box plus each force, with the Contexts timed in turn,
    round after round (alternating the order), so that drifts of the GPU's clock hit all of them alike.
    The plain box and the first force get `replicas` Contexts each, built alike: two Contexts of the
    same System can step several percent apart for as long as they live, and the mean over replicas
    keeps one such Context from deciding a small overhead. Returns ({label: (median ms per step, median over rounds of the time relative to
    plain, toggled overhead)}, spread: the largest difference between the plain replicas, in
    percent of the first)."""
    runs = {('plain', r): MdRun(system, positions, platform, precision) for r in range(replicas)}
    for index, (label, force) in enumerate(forces):
        # Copies first: a System takes the force it is given.
        copies = [force] + [mm.XmlSerializer.clone(force) for _ in range(replicas - 1 if index == 0 else 0)]
        for r, copy in enumerate(copies):
            runs[(label, r)] = MdRun(system, positions, platform, precision, copy)
    order = sorted(runs, key=lambda key: key[1])     # the replicas of a round interleaved
    times = {key: [] for key in runs}
    for round in range(repeats):
        for key in (order if round % 2 == 0 else order[::-1]):
            times[key].append(1000 * runs[key].seconds(steps) / steps)
    labels = ['plain'] + [label for label, _ in forces]
    # Per round, the mean over a label's replicas.
    perRound = {label: np.mean([times[key] for key in runs if key[0] == label], axis=0) for label in labels}
    results = {}
    for label in labels:
        relative = perRound[label] / perRound['plain']
        results[label] = (float(np.median(perRound[label])), float(np.median(relative)),
                          toggled_md(runs[(label, 0)], steps, repeats) if label != 'plain' else None)
    plainMedians = [np.median(times[('plain', r)]) for r in range(replicas)]
    spread = 100 * (max(plainMedians) - min(plainMedians)) / plainMedians[0]
    return results, spread


def toggled_md(run, steps, repeats):
    """The added force's cost within its own Context: step(steps) integrating every force group and
    leaving out the added force's group, in turn (alternating the order), so that the two differ
    in that force alone (not in the Context, its memory or its trajectory). Returns the median
    over rounds of the time with the force relative to the time without it."""
    withForce, without = [], []
    for round in range(repeats):
        for include in ((True, False) if round % 2 == 0 else (False, True)):
            seconds = run.seconds(steps, ALL_GROUPS if include else ALL_GROUPS & ~(1 << EXTRA_GROUP))
            (withForce if include else without).append(seconds)
    run.integrator.setIntegrationForceGroups(ALL_GROUPS)
    return float(np.median([a / b for a, b in zip(withForce, without)]))


def restraint_constant(cv0):
    """k (kJ/mol) of the MD cases' restraint 0.5*k*(cv-cv0)^2: 10 for a CV up to 10, and
    10*(10/cv0)^2 beyond, so that a deviation of a tenth of cv0 costs 5 kJ/mol. A fixed k = 10
    made MD of the self-coordination of 8,000 O (cv0 about 18,400) blow up: in the toggled runs the
    CV drifts by about 200 while the force is left out, and the restraint then pulls with forces of
    about 2e4 kJ/mol/nm. The time of a step does not depend on k."""
    return 10.0 * min(1.0, (10.0 / cv0) ** 2)


def bench_md(platform, precision, quick):
    numWaters = 500 if quick else 8000
    steps, repeats, replicas = (200, 3, 1) if quick else (2000, 7, 3)
    system, positions, oxygens = water_box(numWaters)
    rows = []
    for name, groupA, groupB in md_cases(oxygens, quick):
        # The CV value at the starting positions, on both implementations, must agree.
        ours = rational_cv(groupA, groupB, CUTOFF, periodic=True)
        peer = peer_cv(system.getNumParticles(), groupA, groupB, CUTOFF)
        cv0 = check_md_values(system, positions, platform, precision, ours, peer)
        restraint = '0.5*k*(cv-cv0)^2'
        k = restraint_constant(cv0)

        fast = rational_cv(groupA, groupB, CUTOFF, periodic=True)
        fast.setEnergyExpression(restraint)
        fast.addGlobalParameter('k', k)
        fast.addGlobalParameter('cv0', cv0)
        compatible = mm.CustomCVForce(restraint)
        compatible.addGlobalParameter('k', k)
        compatible.addGlobalParameter('cv0', cv0)
        compatible.addCollectiveVariable('cv', rational_cv(groupA, groupB, CUTOFF, periodic=True))
        peerCV = mm.CustomCVForce(restraint)
        peerCV.addGlobalParameter('k', k)
        peerCV.addGlobalParameter('cv0', cv0)
        peerCV.addCollectiveVariable('cv', peer_cv(system.getNumParticles(), groupA, groupB, CUTOFF))
        peerLabel = 'peer (CustomNonbondedForce in CustomCVForce)'
        timings, spread = interleaved_md(system, positions, platform, precision, steps, repeats,
                                         (('fast path (own energy expression)', fast),
                                          ('compatibility path (ours in CustomCVForce)', compatible), (peerLabel, peerCV)),
                                         replicas)
        rows += md_rows('md', name, system.getNumParticles(), timings, spread, peerLabel, dict(cv0=cv0, k=k), repeats, steps,
                        replicas, 'plain and fast path')
    return rows


def md_rows(section, name, numAtoms, timings, spread, peerLabel, extra, repeats, steps, replicas, replicated):
    """The rows of one case of interleaved_md(): the plain box, then each force with its overhead,
    toggled overhead and speedup against the peer (the peer's ms per step over the force's)."""
    plain = timings['plain'][0]
    rows = [{'section': section, 'case': '%s: plain (%d atoms)' % (name, numAtoms), 'ms_per_step': plain,
             'replicas': replicas, 'plain_replica_spread_percent': spread}]
    for label, (ms, relative, toggled) in timings.items():
        if label == 'plain':
            continue
        row = {'section': section, 'case': '%s: %s' % (name, label), 'ms_per_step': ms,
               'overhead_percent': 100 * (relative - 1), 'toggled_overhead_percent': 100 * (toggled - 1),
               'plain_ms_per_step': plain, 'speedup_vs_peer': timings[peerLabel][0] / ms}
        row.update(extra)
        row['note'] = ('Contexts timed in turn, %d rounds of step(%d); overhead: median over rounds of the '
                       'time relative to the plain Contexts of the same round (%s: the mean '
                       'of %d Contexts each); toggled overhead: the same Context with and without the '
                       'force\'s group integrated, in turn' % (repeats, steps, replicated, replicas))
        rows.append(row)
    return rows


def check_md_values(system, positions, platform, precision, ours, peer):
    values = []
    for force in (ours, peer):
        probe = mm.System()
        for i in range(system.getNumParticles()):
            probe.addParticle(system.getParticleMass(i))
        probe.setDefaultPeriodicBoxVectors(*system.getDefaultPeriodicBoxVectors())
        probe.addForce(force)
        context, _ = make_context(probe, platform, precision)
        context.setPositions(positions)
        values.append(context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole))
        del context
    if abs(values[0] - values[1]) > 1e-4 * max(1.0, abs(values[1])):
        raise RuntimeError('CV disagrees with the peer: %g vs %g' % tuple(values))
    return values[0]


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


def evaluation_time(force, positions, platform, precision, repeats, edge=None, timeForces=True):
    """(median seconds of getState(Energy, and Forces if timeForces), energy, forces): energy and
    forces from one getState before the timing."""
    context, _ = make_context(force_system(force, len(positions), edge), platform, precision)
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    value = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    seconds = median_time(lambda: context.getState(getEnergy=True, getForces=timeForces), repeats)
    del context
    return seconds, value, forces


def step_count(seconds):
    """Steps per timed repeat: 1,000, or fewer (at least 10) where a step takes long (about 2 s a repeat)."""
    return int(min(1000, max(10, 2.0 / seconds)))


def step_time(force, positions, platform, precision, steps, repeats, edge=None, energyOnly=False):
    """Seconds per integrator step with the force alone and every particle frozen (mass 0, so the
    positions never change): the force is evaluated inside each step, with nothing read back.
    energyOnly: a CustomIntegrator whose step asks for the energy alone (no forces) and then
    sets x = x, so that the next step evaluates again; OpenMM sums the energy on the GPU and
    copies that one number to the host every step. A getState(Energy) at each end synchronizes;
    median of the repeats."""
    system = force_system(force, len(positions), edge, mass=0.0)
    if energyOnly:
        integrator = mm.CustomIntegrator(0.001)
        integrator.addGlobalVariable('e', 0)
        integrator.addComputeGlobal('e', 'energy')
        integrator.addComputePerDof('x', 'x')
    else:
        integrator = mm.VerletIntegrator(0.001)
    context, integrator = make_context(system, platform, precision, integrator)
    context.setPositions(positions)
    integrator.step(max(1, steps // 10))

    def run():
        context.getState(getEnergy=True)
        integrator.step(steps)
        context.getState(getEnergy=True)
    seconds = median_time(run, repeats) / steps
    if np.abs(context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
              - positions).max() > 1e-5:
        raise RuntimeError('frozen particles moved')
    if energyOnly:
        energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        if abs(integrator.getGlobalVariableByName('e') - energy) > 1e-5 * max(1.0, abs(energy)):
            raise RuntimeError('the energy-only step computed %g, not %g' % (integrator.getGlobalVariableByName('e'), energy))
    del context
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
        ours = evaluation_time(rational_cv(groupA, groupB), positions, platform, precision, repeats)
        peer = evaluation_time(peer_cv(n, groupA, groupB), positions, platform, precision, repeats)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        oursStep = step_time(rational_cv(groupA, groupB), positions, platform, precision, steps, 3)
        peerStep = step_time(peer_cv(n, groupA, groupB), positions, platform, precision, steps, 3)
        # A step without the force: what remains of a step when the evaluation is taken away.
        emptyStep = step_time(mm.CustomExternalForce('0'), positions, platform, precision, steps, 3)
        rows.append({'section': 'throughput', 'case': name, 'pairs': pairs, 'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0],
                     'pairs_per_s': pairs / ours[0], 'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
                     'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
                     'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
                     'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
                     'value_relative_difference': relative, 'force_relative_difference': forceError,
                     'note': 'ms: getState(Energy|Forces), including the host read-back of the forces, for both; '
                             'ms_in_step: integrator.step(%d) with frozen particles (mass 0), per step' % steps})
    return rows


# ---------------------------------------------------------------------------------------------
# Self-coordination with a periodic cutoff (cell lists) against CustomNonbondedForce CutoffPeriodic

def pairs_within(positions, edge, distance, platform, precision):
    """The number of pairs closer than distance: our one-bin histogram, checked against the
    expectation for uniform random positions, N(N-1)/2 * 4/3 pi distance^3 / V."""
    force, context = histogram_context(positions, edge, platform, precision)
    count = int(force.getPairHistogram(context, 1, distance)[0])
    del context
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


def bench_cutoff(platform, precision, quick):
    """Self-coordination of random atoms, periodic, dmax 1 nm (cell lists): getState(Energy) (which
    computes the forces too), forces inside a step and the energy alone inside a step, against
    CustomNonbondedForce CutoffPeriodic."""
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
        ours = evaluation_time(rational_cv(group, None, dmax, periodic=True), positions, platform, precision, 20, edge, False)
        peer = evaluation_time(peer_cv(n, group, None, dmax), positions, platform, precision, 20, edge, False)
        relative, forceError = check_against_peer(name, ours, peer)
        steps = step_count(max(ours[0], peer[0]))
        times = {}
        for energyOnly in (False, True):
            for label, force in (('ours', rational_cv(group, None, dmax, periodic=True)), ('peer', peer_cv(n, group, None, dmax)),
                                 # A step without the force: what remains of a step when the evaluation is taken away.
                                 ('empty', mm.CustomExternalForce('0'))):
                times[label, energyOnly] = step_time(force, positions, platform, precision, steps, 3, edge, energyOnly)
        # Our lists of homes (the default from 50,001 particles) are built once in a frozen box: the
        # same step with them rebuilt at every evaluation, and with no lists (the cell kernel filters
        # the cells at every evaluation, as before the lists of homes).
        for label, mode in (('rebuilt', 'always'), ('no lists', '0')):
            with environment(COORDINATION_NEIGHBOR_LIST=mode):
                times[label, False] = step_time(rational_cv(group, None, dmax, periodic=True), positions, platform, precision,
                                                steps, 3, edge)
        pairs = pairs_within(positions, edge, dmax, platform, precision)
        oursStep, peerStep, emptyStep = times['ours', False], times['peer', False], times['empty', False]
        rebuilt, noLists = times['rebuilt', False] - emptyStep, times['no lists', False] - emptyStep
        oursEnergy, peerEnergy = (times[label, True] - times['empty', True] for label in ('ours', 'peer'))
        rows.append({'section': 'cutoff', 'case': name, 'atoms': n, 'density_per_nm3': density, 'dmax': dmax, 'numbering': order,
                     'pairs_within_dmax': pairs,
                     'ms': 1000 * ours[0], 'peer_ms': 1000 * peer[0], 'pairs_per_s': pairs / ours[0],
                     'peer_pairs_per_s': pairs / peer[0], 'speedup_vs_peer': peer[0] / ours[0],
                     'ms_in_step': 1000 * oursStep, 'peer_ms_in_step': 1000 * peerStep, 'speedup_in_step': peerStep / oursStep,
                     'empty_step_ms': 1000 * emptyStep, 'ms_per_evaluation': 1000 * (oursStep - emptyStep),
                     'peer_ms_per_evaluation': 1000 * (peerStep - emptyStep),
                     'speedup_per_evaluation': (peerStep - emptyStep) / (oursStep - emptyStep),
                     'energy_only_ms_per_evaluation': 1000 * oursEnergy, 'peer_energy_only_ms_per_evaluation': 1000 * peerEnergy,
                     'energy_only_speedup': peerEnergy / oursEnergy,
                     'rebuilt_ms_per_evaluation': 1000 * rebuilt, 'no_lists_ms_per_evaluation': 1000 * noLists,
                     'ms_per_evaluation_rebuilt_every_10': 1000 * ((oursStep - emptyStep) * 9 + rebuilt) / 10,
                     'value_relative_difference': relative, 'force_relative_difference': forceError,
                     'note': 'ms: getState(Energy) for both (the protocol of the peer figure 1.55 ms for 1M; OpenMM\'s '
                             'Context::getState computes the forces along with the energy, and adds the kinetic energy, all '
                             'velocities copied to the host and summed there, about 1 ms for 1M particles); '
                             'ms_per_evaluation: ms_in_step less the same step without the force; '
                             'ms_in_step: integrator.step(%d) with frozen particles (mass 0), forces every step, per step; '
                             'energy_only_ms_per_evaluation: the same with a CustomIntegrator step that asks for the energy '
                             'alone (no forces, no kinetic energy), less that step without the force; '
                             'numbering: random, or spatial (a Z-order curve, as OpenMM reorders the atoms of a System '
                             'with a cutoff nonbonded force); '
                             'rebuilt_ms_per_evaluation: ours with its neighbour lists rebuilt at every evaluation '
                             '(COORDINATION_NEIGHBOR_LIST=always; frozen, the lists are otherwise built once), '
                             'ms_per_evaluation_rebuilt_every_10: one rebuild in ten evaluations (in MD the lists are '
                             'rebuilt when a particle has moved 0.049 nm); no_lists_ms_per_evaluation: lists off; '
                             'pairs within dmax counted by our histogram, checked against N(N-1)/2*4/3*pi*dmax^3/V; '
                             'peer: CustomNonbondedForce, CutoffPeriodic %g nm' % (steps, dmax)})
    return rows


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
    except Exception:
        info['gpu'] = None
    return info


def print_table(rows):
    for row in rows:
        keys = [k for k in ('ms_per_step', 'overhead_percent', 'toggled_overhead_percent', 'ms', 'peer_ms', 'pairs_per_s', 'peer_pairs_per_s',
                            'speedup_vs_peer', 'pairs_per_s_ratio_vs_peer', 'ms_in_step', 'peer_ms_in_step',
                            'speedup_in_step', 'ms_per_evaluation', 'peer_ms_per_evaluation', 'energy_only_ms_per_evaluation',
                            'peer_energy_only_ms_per_evaluation', 'rebuilt_ms_per_evaluation', 'ms_per_evaluation_rebuilt_every_10',
                            'no_lists_ms_per_evaluation', 'us_per_evaluation', 'plain_replica_spread_percent', 'pairs') if k in row]
        values = '  '.join('%s=%.4g' % (k, row[k]) for k in keys)
        print('%-11s %-75s %s' % (row['section'], row['case'][:75], values), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--platform', default='CUDA')
    parser.add_argument('--precision', default='mixed', choices=['single', 'mixed', 'double'])
    parser.add_argument('--sections', default='md,throughput,cutoff,latency,histogram,metadynamics,coldstart,contacts')
    parser.add_argument('--quick', action='store_true', help='tiny sizes, for a smoke test')
    parser.add_argument('--json', help='write the results here')
    args = parser.parse_args()
    platform = mm.Platform.getPlatformByName(args.platform)
    info = describe(platform, args.precision)
    info['date'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    info['command'] = ' '.join(['python', 'benchmarks/benchmark.py'] + sys.argv[1:])
    print(json.dumps(info), flush=True)
    sections = {'md': bench_md, 'throughput': bench_throughput, 'cutoff': bench_cutoff, 'latency': bench_small_latency,
                'histogram': bench_histogram}
    rows = []
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    for name in args.sections.split(','):
        if name == 'metadynamics':
            try:
                import bench_metadynamics
            except ImportError:
                continue
            new = bench_metadynamics.run(platform=args.platform, precision=args.precision, quick=args.quick)
        elif name == 'coldstart':
            import cold_start
            new = cold_start.run(platform=args.platform, quick=args.quick)
        elif name == 'contacts':
            import bench_contacts
            new = bench_contacts.run(platform, args.precision, args.quick)
        else:
            new = sections[name](platform, args.precision, args.quick)
        print_table(new)
        rows += new
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'info': info, 'rows': rows}, out, indent=1)


if __name__ == '__main__':
    main()
