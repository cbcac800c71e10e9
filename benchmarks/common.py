"""What the sections of benchmark.py share: the CVs (ours and the peer's), Contexts, the PME water
box, random positions, the interleaved MD timing (MdCase, MdRun, interleaved_md, md_rows) with its
check of a CV against the peer (check_md_values), and the timing of one force on frozen particles
(FrozenContext, step_time, timed_pair). Each section is a module bench_*.py that imports this one;
this one imports no other module of benchmarks/.
"""

import contextlib
import os
import statistics
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


def platform_properties(platform, precision):
    return {'Precision': precision} if platform.getName() in ('CUDA', 'OpenCL', 'HIP') else {}


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


def random_positions(n, seed=1, density=WATER_DENSITY):
    """Uniform random positions in a cube of n / density nm^3; returns them and its edge."""
    edge = (n / density) ** (1 / 3)
    return np.random.default_rng(seed).uniform(0, edge, (n, 3)), edge


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


# ---------------------------------------------------------------------------------------------
# MD step time of a PME water box: Contexts timed in turn

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


EXTRA_GROUP = 1     # the force group of the force an MdRun adds to the water box (the box's are 0)
ALL_GROUPS = 0xffffffff
MD_STEPS, MD_ROUNDS, MD_REPLICAS = 2000, 5, 3   # step(MD_STEPS) per timing; rounds; Contexts of plain and of ours
TEMPERATURE = 300 * unit.kelvin


def adding(force):
    """A build for MdCase: adds a copy of the force, in force group EXTRA_GROUP, to the System."""
    def build(system):
        copy = mm.XmlSerializer.clone(force)
        copy.setForceGroup(EXTRA_GROUP)
        system.addForce(copy)
    return build


@contextlib.contextmanager
def environment_variables(values):
    """Set the environment variables of the dictionary ``values`` (the CUDA kernels' tuning switches,
    which a Context reads when it is created) within the block, and restore the environment after it."""
    saved = dict(os.environ)
    os.environ.update(values or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class MdCase:
    """One kind of MD Context of an interleaved run: its label, a build(system) that adds its
    force(s) to a copy of the box's System (and returns a metadynamics object, whose step() then
    advances the Context, or None), its number of Contexts, whether its toggled overhead is
    measured (the added force's group integrated and left out, in turn, in its own Context),
    for metadynamics whether the cost of its hills is (steps with and without adding hills, in turn),
    and the environment variables set while its Contexts are created (tuning switches), if any."""

    def __init__(self, label, build, replicas=1, toggled=True, hills=False, environment=None):
        self.label, self.build, self.replicas, self.toggled, self.hills = label, build, replicas, toggled, hills
        self.environment = environment


class MdRun:
    """One MD Context of the water box (plus what a build adds: a force in group EXTRA_GROUP, or a
    metadynamics bias, stepped through a Simulation and meta.step()), warmed up, timed step(steps)
    at a time; environment: variables set while the System is built and its Context created."""

    def __init__(self, system, positions, platform, precision, build=None, topology=None, warmup=200, environment=None):
        system = mm.XmlSerializer.clone(system)
        integrator = mm.LangevinMiddleIntegrator(TEMPERATURE, 1 / unit.picosecond, 2 * unit.femtosecond)
        integrator.setRandomNumberSeed(1)
        with environment_variables(environment):
            meta = build(system) if build is not None else None
            if meta is None:
                self.context, self.integrator = make_context(system, platform, precision, integrator)
            else:
                simulation = app.Simulation(topology, system, integrator, platform, platform_properties(platform, precision))
                self.context, self.integrator = simulation.context, integrator
        if meta is None:
            self.advance = self.withoutHills = self.integrator.step
        else:
            self.advance = lambda steps: meta.step(simulation, steps)
            # The same steps with the bias but no new hill (steps a multiple of the hills' interval
            # keep the steps of later hills).
            self.withoutHills = simulation.step
            warmup = max(warmup, 2 * getattr(meta, 'frequency', getattr(meta, 'pace', 0)))     # hills (or kernels) included
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
    ratio) or None, 'replicas': its number of Contexts}}, spread: the largest difference between the
    plain replicas, in percent of the first)."""
    runs = {('plain', r): MdRun(system, positions, platform, precision, warmup=warmup) for r in range(replicas)}
    for case in cases:
        for r in range(case.replicas):
            runs[(case.label, r)] = MdRun(system, positions, platform, precision, case.build, topology, warmup,
                                          case.environment)
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
    counts = dict({case.label: case.replicas for case in cases}, plain=replicas)
    results = {}
    for label in labels:
        relative = perRound[label] / perRound['plain']
        results[label] = {'ms': float(np.median(perRound[label])), 'relative': float(np.median(relative)),
                          'rounds': [float(x) for x in relative], 'toggled': None, 'replicas': counts[label]}
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
                   'replicas': result['replicas'], 'steps': steps, 'repeats': repeats}
            if result['toggled'] is not None:
                row['toggled_overhead_percent'] = 100 * (result['toggled'] - 1)
            if result.get('hills') is not None:
                row['hills_overhead_percent'] = 100 * (result['hills'] - 1)
            row.update(case['extra'])
            row['note'] = ('all Contexts timed in turn, %d rounds of step(%d); overhead: median over rounds of the time '
                           'relative to the mean of the %d plain Contexts of the same round (this row: the mean of %d '
                           'Contexts); toggled overhead: the same Context with and without the force\'s group '
                           'integrated, in turn' % (repeats, steps, replicas, row['replicas']))
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


# ---------------------------------------------------------------------------------------------
# Frozen particles: one force's evaluations and integrator steps

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


def step_count(seconds):
    """Steps per timed repeat: 1,000, or fewer (at least 10) where a step takes long (about 2 s a repeat)."""
    return int(min(1000, max(10, 2.0 / seconds)))


def step_time(force, positions, platform, precision, steps, repeats, edge=None, energyOnly=False):
    """Seconds per integrator step with the force alone and every particle frozen (FrozenContext)."""
    return step_seconds(frozen_system(force, positions, edge), positions, platform, precision, steps, energyOnly, repeats)


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


def step_seconds(system, positions, platform, precision, steps, energyOnly=False, repeats=3):
    """Seconds per step of a FrozenContext of the System made for this call alone (median of repeats)."""
    run = FrozenContext(system, positions, platform, precision, energyOnly)
    seconds = run.step_seconds(steps, repeats)
    run.close()
    return seconds
