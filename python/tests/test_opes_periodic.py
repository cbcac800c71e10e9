"""OPES on periodic variables (a CustomTorsionForce from -pi to pi, periodic=True), as PLUMED's
OPES_METAD on a periodic CV (src/opes/OPESmetad.cpp: every difference through Value::difference, the
merge through mergeKernels and bringBackInPbc): a 1-D torsion and a torsion beside a coordination
number, replayed step by step against opes_reference.ReferenceOPES given the same domains (the bias
at every frame, and after every update the kernels, Z, rct, neff and their number), with merges
across the seam at +-pi; the kernel sum on the grid wrapped around the period; the table and the
forces across the seam against finite differences; the refusals of periodic coordination numbers,
distances and functions; states, checkpoints and walkers with periodic variables.

The runs take `host_config` (Reference and CPU); the rest runs on the Reference platform.
"""

import math
import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination._opeskernels import GridSum, Kernels
from openmmcoordination.metadynamics import BiasVariable
from openmmcoordination.opes import OPES

from helpers import MDReplay, finite_difference_forces, same_seed
from opes_reference import ReferenceOPES
from test_other_force_cvs import PARTICLES, chain, chain_positions, coordination, evaluator, torsion

PI = math.pi
TEMPERATURE = 300.0
KT = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
BARRIER = 15.0
PACE = 20


def variables(case, periodic=True):
    """'1d': a torsion; '2d': the torsion and a coordination number."""
    result = [BiasVariable(torsion(0), -PI, PI, 0.3, periodic, 181 if case == '1d' else 91)]
    if case == '2d':
        result.append(BiasVariable(coordination(), 0.0, 3.0, 0.1, False, 61))
    return result


def make_opes(case, periodic=True, system=None, **options):
    system = chain()[0] if system is None else system
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)     # the slower path; the grid's resolution
        return OPES(system, variables(case, periodic), TEMPERATURE*unit.kelvin, BARRIER*unit.kilojoules_per_mole, PACE,
                    recordFrequency=1, **options)


def simulation_of(opes, config=None, seed=7):
    """A Simulation of the chain (its System the one the OPES was made on), seeded, its torsion starting
    at the seam, pi - 0.01."""
    system = opes._grid._system
    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    platform = openmm.Platform.getPlatformByName('Reference') if config is None else config.platform()
    properties = {} if config is None else config.properties
    simulation = app.Simulation(chain()[1], system, integrator, platform, properties)
    simulation.context.setPositions(rotate_torsion(chain_positions(), PI - 0.01))     # at the seam
    simulation.context.setVelocitiesToTemperature(TEMPERATURE, seed)
    return simulation


def run(case, steps, config=None, **options):
    opes = make_opes(case, **options)
    simulation = simulation_of(opes, config)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        opes.step(simulation, steps)
    return opes, simulation


class SeamReference(ReferenceOPES):
    """The reference, counting the merges whose two centres are nearer through the seam than directly."""

    seamMerges = 0

    def merged(self, a, b):
        if abs(a[1][0] - b[1][0]) > PI:
            self.seamMerges += 1
        return super().merged(a, b)


def reference_for(case, options):
    domains = [(-PI, PI)] + [None]*(case == '2d')
    sigma = options.get('sigma')
    return SeamReference(KT, BARRIER, BARRIER/KT, sigma=None if sigma is None else np.atleast_1d(sigma),
                         explore=options.get('exploreMode', False), adaptiveStride=options.get('adaptiveSigmaStride'),
                         domains=domains)


def assert_kernels(opes, reference, rtol=1e-10):
    centers, sigmas, heights = opes.getKernels()
    assert len(heights) == len(reference.kernels)
    np.testing.assert_allclose(centers, [k[1] for k in reference.kernels], rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(sigmas, [k[2] for k in reference.kernels], rtol=rtol)
    np.testing.assert_allclose(heights, [k[0] for k in reference.kernels], rtol=rtol)


CASES = {'1d': ('1d', dict(sigma=0.25)),
         '1d-adaptive': ('1d', dict(adaptiveSigmaStride=200)),
         '1d-explore': ('1d', dict(sigma=0.15, exploreMode=True)),
         '2d': ('2d', dict(sigma=[0.3, 0.2])),
         '2d-adaptive': ('2d', dict(adaptiveSigmaStride=200))}


def replay_against_reference(opes, simulation, reference, steps):
    """Run ``steps`` steps PACE at a time, the reference fed the CVs recorded at every step (PLUMED's
    values, in [-pi, pi)): the bias at each frame before its kernel (1e-10 kJ/mol), and after each update
    rct, Z, neff, the number of kernels and the kernels (centres, widths, heights) to 1e-10; then the
    bias on the grid, its last point pi too. Returns the number of updates and the torsion's values."""
    adaptive = reference.sigma0 is None
    updates = done = 0
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        for _ in range(steps//PACE):
            opes.step(simulation, PACE)
            frames = opes.getRecordedFrames()
            cvs = frames.collectiveVariables.reshape(len(frames.steps), -1)
            biases = frames.bias.value_in_unit(unit.kilojoules_per_mole)
            for step, s, bias in zip(frames.steps[done:], cvs[done:], biases[done:]):
                assert -PI <= s[0] < PI
                assert bias == pytest.approx(reference.bias(s), abs=1e-10, rel=0)
                if adaptive:
                    reference.measure(s)
                if step % PACE == 0 and not (adaptive and reference.samples < reference.adaptiveStride
                                             and len(reference.weights) == 1):
                    reference.update(s)
                    updates += 1
            done = len(frames.steps)
            history = opes.getHistory()
            assert len(history.steps) == updates + 1
            if updates:
                assert history.rct[-1].value_in_unit(unit.kilojoules_per_mole) == pytest.approx(reference.rct(), rel=1e-10,
                                                                                                abs=1e-10)
                assert history.zed[-1] == pytest.approx(reference.zed, rel=1e-10)
                assert history.neff[-1] == pytest.approx(reference.neff(), rel=1e-10)
                assert history.nker[-1] == len(reference.kernels)
                assert_kernels(opes, reference)
    centers = opes.getKernels()[0][:, 0]
    assert np.all((centers >= -PI) & (centers < PI))
    axes = opes.getCollectiveVariableGrid()
    mesh = np.meshgrid(*reversed(axes), indexing='ij')
    points = np.stack([m.ravel() for m in reversed(mesh)], axis=1)
    expected = np.array([reference.bias(p) for p in points]).reshape(mesh[0].shape)
    bias = opes.getBias().value_in_unit(unit.kilojoules_per_mole)
    np.testing.assert_allclose(bias, expected, rtol=0, atol=1e-10)
    assert bias.max() - KT*opes._prefactor*math.log(opes.epsilon) > 5.0      # kernels have grown
    np.testing.assert_array_equal(bias[..., -1], bias[..., 0])                 # pi is -pi again
    return updates, cvs[:, 0]


@pytest.mark.parametrize('name', list(CASES))
def test_against_reference_step_by_step(host_config, name):
    """A run of 4,000 steps from the seam (Langevin dynamics of the chain, its torsion turning freely)
    replayed by the reference step by step (replay_against_reference); the torsion crosses the seam."""
    case, options = CASES[name]
    opes = make_opes(case, **options)
    updates, angles = replay_against_reference(opes, simulation_of(opes, host_config), reference_for(case, options), 4000)
    assert updates >= (180 if options.get('sigma') is None else 195)
    assert np.sum(np.abs(np.diff(angles)) > PI) >= 2                 # the torsion crosses the seam


def seam_frames(steps):
    """The chain's positions at steps 0 to ``steps``: its torsion swinging about the seam, pi + 0.7
    sin(t/211) + 0.1 sin(t/13), particles 3 to 6 turned about the bond 1-2 (the coordination number of
    particle 0 with 3, 4 and 5 follows)."""
    base = chain_positions()
    t = np.arange(steps + 1)
    return np.array([rotate_torsion(base, math.remainder(PI + 0.7*math.sin(n/211) + 0.1*math.sin(n/13), 2*PI))
                     for n in t])


@pytest.mark.parametrize('name', ['1d', '1d-adaptive', '2d', '2d-adaptive'])
def test_trajectory_across_the_seam_against_reference(host_config, name):
    """A prescribed trajectory whose torsion swings across the seam (seam_frames, 3,000 steps), replayed
    on the platform and by the reference step by step: kernels are merged across the seam (their centres
    nearer through it than directly), and everything equals the reference's."""
    case, options = CASES[name]
    opes = make_opes(case, **options)
    frames = seam_frames(3000)
    reference = reference_for(case, options)
    simulation = MDReplay(host_config.context(opes._grid._system), frames)
    updates, angles = replay_against_reference(opes, simulation, reference, 3000)
    assert updates >= 135 and np.sum(np.abs(np.diff(angles)) > PI) >= 8
    assert reference.seamMerges >= 1


def test_a_period_from_0_to_2pi():
    """A torsion (OpenMM's values from -pi to pi) on a periodic variable from 0 to 2 pi: its values and
    kernel centres are brought into [0, 2 pi) as PLUMED's values are into their domain, and on the
    trajectory of test_trajectory_across_the_seam_against_reference the kernels are those of the
    variable from -pi to pi, their centres moved by a period where negative, and the bias the same
    function of the torsion."""
    frames = seam_frames(2000)
    runs = []
    for low in (-PI, 0.0):
        system = chain()[0]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            opes = OPES(system, [BiasVariable(torsion(0), low, low + 2*PI, 0.3, True, 181)], TEMPERATURE*unit.kelvin,
                        BARRIER*unit.kilojoules_per_mole, PACE, sigma=0.25, recordFrequency=1)
            context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
            opes.step(MDReplay(context, frames), 2000)
        runs.append(opes)
    shifted, ours = runs
    values = ours.getRecordedFrames().collectiveVariables
    assert values.min() >= 0.0 and values.max() < 2*PI and shifted.getRecordedFrames().collectiveVariables.min() < -2.5
    np.testing.assert_allclose(values, np.mod(shifted.getRecordedFrames().collectiveVariables, 2*PI), rtol=0, atol=1e-12)
    (c1, s1, h1), (c2, s2, h2) = shifted.getKernels(), ours.getKernels()
    assert np.all((c2 >= 0.0) & (c2 < 2*PI)) and c1.min() < 0.0
    np.testing.assert_allclose(c2, np.mod(c1, 2*PI), rtol=0, atol=1e-10)
    np.testing.assert_allclose(s2, s1, rtol=1e-10)
    np.testing.assert_allclose(h2, h1, rtol=1e-10)
    grid = ours.getCollectiveVariableGrid()[0]
    expected = [shifted.getBiasAt([x]).value_in_unit(unit.kilojoules_per_mole) for x in grid]
    np.testing.assert_allclose(ours.getBias().value_in_unit(unit.kilojoules_per_mole), expected, rtol=0, atol=1e-9)


def test_merge_across_the_seam():
    """PLUMED's mergeKernels on a periodic CV by hand: the taker's centre (pi - 0.05) moved to its image
    nearest the giver's (-pi + 0.03), the weighted mean -pi - 0.07/3 brought back to pi - 0.07/3, the
    variance that of the two about it; the reference gives the same; without periodicity the two are
    2 pi apart and do not merge."""
    kernels = Kernels(1, 5.0, 1.0, [(-PI, PI)])
    kernels.add(2.0, [PI - 0.05], [0.1])
    kernels.add(1.0, [-PI + 0.03], [0.1])
    assert len(kernels) == 1
    mean = (2*(-PI - 0.05) + (-PI + 0.03))/3
    variance = 0.01 + (2*(-PI - 0.05 - mean)**2 + (-PI + 0.03 - mean)**2)/3
    assert kernels.heights[0] == 3.0
    assert kernels.centers[0, 0] == pytest.approx(mean + 2*PI, abs=1e-14)
    assert kernels.sigmas[0, 0] == pytest.approx(math.sqrt(variance), rel=1e-12)
    reference = ReferenceOPES(KT, BARRIER, 5.0, sigma=[0.1], threshold=1.0, cutoff=5.0, domains=[(-PI, PI)])
    reference.add(2.0, [PI - 0.05], [0.1])
    reference.add(1.0, [-PI + 0.03], [0.1])
    np.testing.assert_allclose(reference.kernels[0][1], kernels.centers[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(reference.kernels[0][2], kernels.sigmas[0], rtol=1e-14)
    flat = Kernels(1, 5.0, 1.0)
    flat.add(2.0, [PI - 0.05], [0.1])
    flat.add(1.0, [-PI + 0.03], [0.1])
    assert len(flat) == 2
    # the value of the merged kernel on either side of the seam is the same function of the nearest image
    assert kernels.evaluate([[PI - 0.01]])[0] == pytest.approx(kernels.evaluate([[-PI - 0.01]])[0], rel=1e-12)


@pytest.mark.parametrize('sigma', [0.1, 0.9], ids=['narrow', 'wider-than-half-the-period'])
def test_grid_sum_wraps_around_the_period(sigma):
    """The kernel sum on the grid, each kernel on its window of points wrapped around the period (and
    all of a period once where the cutoff reaches farther than half of it), is the sum of the kernels at
    each point's nearest image (the reference's), in 1-D and beside a variable that is not periodic;
    the last point of the periodic axis is the first one's value."""
    for domains, axes, centers in [([(-PI, PI)], [np.linspace(-PI, PI, 73)], [[PI - 0.02], [-PI + 0.1], [0.3]]),
                                   ([(-PI, PI), None], [np.linspace(-PI, PI, 37), np.linspace(0.0, 3.0, 31)],
                                    [[PI - 0.02, 1.0], [-PI + 0.1, 2.9], [0.3, 0.05]])]:
        kernels = Kernels(len(axes), 4.0, 0.0, domains)
        grid = GridSum(kernels, axes)
        sigmas = [[sigma] + [0.2]*(len(axes) - 1)]*3
        for height, (center, width) in zip([1.0, 2.0, 0.5], zip(centers, sigmas)):
            kernels.add(height, center, width)
        grid.apply(kernels.deltas)
        reference = ReferenceOPES(KT, BARRIER, 5.0, sigma=sigmas[0], threshold=0.0, cutoff=4.0, domains=domains)
        reference.kernels = [[h, np.array(c, float), np.array(s, float)]
                             for h, c, s in zip(kernels.heights, kernels.centers, kernels.sigmas)]
        mesh = np.meshgrid(*reversed(axes), indexing='ij')
        points = np.stack([m.ravel() for m in reversed(mesh)], axis=1)
        expected = np.array([sum(reference.kernel(k, p) for k in reference.kernels) for p in points])
        np.testing.assert_allclose(grid.values, expected.reshape(mesh[0].shape), rtol=0, atol=1e-14)
        assert np.all(grid.values[..., -1] == grid.values[..., 0]) and grid.values[..., 0].max() > 0.1
        before = grid.values.copy()
        grid.refresh()
        np.testing.assert_allclose(grid.values, before, rtol=0, atol=1e-14)


def test_adaptive_sigma_across_the_seam():
    """The running variance of a CV that jumps between pi - 0.02 and -pi + 0.02 (0.04 apart through the
    seam) is that of the nearest images, 0.02^2, not of values 2 pi apart, as PLUMED's Welford update;
    the reference gives the same."""
    opes = make_opes('1d', adaptiveSigmaStride=100)
    reference = ReferenceOPES(KT, BARRIER, 5.0, adaptiveStride=100, domains=[(-PI, PI)])
    for n in range(400):
        s = np.array([PI - 0.02 if n % 2 else -PI + 0.02])
        opes._measure(s)
        reference.measure(s)
    assert opes._m2[0]/opes._adaptiveCounter == pytest.approx(0.02**2, rel=0.05)
    np.testing.assert_allclose(opes._m2, reference.m2, rtol=1e-12)
    np.testing.assert_allclose(opes._averageCV, reference.mean, rtol=1e-12)


def rotate_torsion(positions, value):
    """The chain's positions with torsion 0-1-2-3 set to ``value`` (particles 3 to 6 turned about the
    axis through 1 and 2)."""
    def measured(p):                      # OpenMM's torsion: the angle between (p0-p1)x(p2-p1) and (p2-p1)x(p2-p3)
        v0, v1, v2 = p[0] - p[1], p[2] - p[1], p[2] - p[3]
        n1, n2 = np.cross(v0, v1), np.cross(v1, v2)
        angle = math.acos(max(-1.0, min(1.0, np.dot(n1, n2)/np.linalg.norm(n1)/np.linalg.norm(n2))))
        return angle if np.dot(v0, n2) >= 0 else -angle

    def turned(p, angle):
        axis = (p[2] - p[1])/np.linalg.norm(p[2] - p[1])
        result = p.copy()
        for i in range(3, PARTICLES):
            r = p[i] - p[2]
            result[i] = p[2] + (r*math.cos(angle) + np.cross(axis, r)*math.sin(angle)
                                + axis*np.dot(axis, r)*(1 - math.cos(angle)))
        return result
    positions = np.asarray(positions, dtype=float)
    for sign in (1, -1):
        moved = turned(positions, sign*(value - measured(positions)))
        if abs(math.remainder(measured(moved) - value, 2*PI)) < 1e-9:
            return moved
    raise AssertionError('the torsion was not set')


@pytest.mark.parametrize('case', ['1d', '2d'])
def test_table_and_forces_across_the_seam(case):
    """After a run, the table (a periodic one in 1-D, padded with the next periods beside the coordination
    number) is the bias at the grid points less its floor, has the period, is continuous with its slope
    across +-pi and follows the exact bias between the points near the seam; the forces of the bias force
    on the chain with the torsion at pi - 1e-6 and at -pi + 1e-6 are -dE/dx by finite differences (steps
    that cross the seam)."""
    options = dict(sigma=0.25, sigmaMin=[0.1]) if case == '1d' else dict(sigma=[0.25, 0.08], sigmaMin=[0.15, 0.05])
    opes, simulation = run(case, 3000, **options)
    evaluate = evaluator(opes)
    floor = KT*opes._prefactor*math.log(opes.epsilon)
    bias = opes.getBias().value_in_unit(unit.kilojoules_per_mole)
    grid = opes.getCollectiveVariableGrid()
    other = [1.3] if case == '2d' else []
    column = bias if case == '1d' else bias[int(np.argmin(np.abs(grid[1] - 1.3)))]
    rest = [grid[1][int(np.argmin(np.abs(grid[1] - 1.3)))]] if case == '2d' else []
    for i in (0, 1, 2, len(grid[0]) - 2, len(grid[0]) - 1):
        assert evaluate([grid[0][i]] + rest)[0] + floor == pytest.approx(column[i], abs=1e-9)
    for x in np.linspace(PI - 0.3, PI, 13):
        inside = evaluate([x] + other)
        assert evaluate([x - 2*PI] + other)[0] == pytest.approx(inside[0], abs=1e-9)
        exact = opes.getBiasAt([x] + other).value_in_unit(unit.kilojoules_per_mole)
        assert inside[0] + floor == pytest.approx(exact, abs=0.05)
    (e1, g1), (e2, g2) = evaluate([PI - 1e-7] + other), evaluate([-PI + 1e-7] + other)
    assert e1 == pytest.approx(e2, abs=1e-5) and g1[0] == pytest.approx(g2[0], abs=1e-4)
    assert np.ptp(column) > 3.0 and abs(g1[0]) + abs(evaluate([PI - 0.2] + other)[1][0]) > 0.1
    system = openmm.System()
    for _ in range(PARTICLES):
        system.addParticle(1.0)
    system.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(opes.force)))
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    positions = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    for value in (PI - 1e-6, -PI + 1e-6):
        moved = rotate_torsion(positions, value)
        context.setPositions(moved)
        state = context.getState(getEnergy=True, getForces=True)
        forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoules_per_mole/unit.nanometer)
        assert np.abs(forces).max() > 0.1
        numeric = finite_difference_forces(context, moved, range(PARTICLES), 1e-6)
        np.testing.assert_allclose(forces, numeric, rtol=0, atol=1e-4*np.abs(forces).max())


PERIODIC_ERRORS = [
    (coordination, r"OPES: variables\[0\]\.periodic must be False for a CoordinationForce \(periodic=True is for a "
     r"force whose CV is periodic, such as a CustomTorsionForce\), got True"),
    (lambda: __import__('openmmcoordination').DistanceCV(0, 1), r"OPES: variables\[0\]\.periodic must be False for a "
     r"DistanceCV"),
    (lambda: __import__('openmmcoordination').CVFunction('2*t', {'t': torsion()}), r"OPES: variables\[0\]\.periodic "
     r"must be False for a CVFunction"),
]


@pytest.mark.parametrize('force, message', PERIODIC_ERRORS, ids=['coordination', 'distance', 'function'])
def test_periodic_refused_where_the_cv_is_not(force, message):
    system = chain()[0]
    with pytest.raises(ValueError, match=message):
        OPES(system, [BiasVariable(force(), -PI, PI, 0.3, True, 63)], TEMPERATURE*unit.kelvin,
             BARRIER*unit.kilojoules_per_mole, PACE, sigma=0.3)
    assert system.getNumForces() == 2


def test_state_and_walkers_record_periodicity(tmp_path):
    """getState() records which variables are periodic; a state of the torsion periodic is refused by an
    object with it not periodic, naming both (and the other way round), as is a walker directory; a
    state round trip gives the same kernels, Z and bias; a second walker on the directory of a first
    reads its kernels, merged across the seam as its own."""
    opes, _ = run('2d', 1500, sigma=[0.25, 0.08])
    state = opes.getState()
    assert state['settings']['periodic'] == [True, False]
    with pytest.raises(ValueError, match=r"setState: the state is of another run than this object \(periodic: the "
                                         r"state \[True, False\], this object None\)"):
        make_opes('2d', periodic=False, sigma=[0.25, 0.08]).setState(state)
    flat = make_opes('2d', periodic=False, sigma=[0.25, 0.08])
    with pytest.raises(ValueError, match=r"periodic: the state None, this object \[True, False\]"):
        make_opes('2d', sigma=[0.25, 0.08]).setState(flat.getState())
    again = make_opes('2d', sigma=[0.25, 0.08])
    again.setState(state)
    for ours, theirs in zip(again.getKernels(), opes.getKernels()):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(again.getBias()._value, opes.getBias()._value)
    assert again._zed == opes._zed
    first, _ = run('1d', 1200, sigma=0.25, saveFrequency=100, biasDir=str(tmp_path))
    with pytest.raises(ValueError, match=r"other settings \(periodic: the directory \[True\], this run None\)"):
        make_opes('1d', periodic=False, sigma=0.25, saveFrequency=100, biasDir=str(tmp_path))
    second = make_opes('1d', sigma=0.25, saveFrequency=100, biasDir=str(tmp_path))
    for ours, theirs in zip(second.getKernels(), first.getKernels()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(second.getBias()._value, first.getBias()._value, rtol=0, atol=1e-10)
    assert second._zed == pytest.approx(first._zed, rel=1e-12)


@same_seed
def test_checkpoint_restart_is_exact(host_config, tmp_path):
    """The torsion beside the coordination number with an adaptive sigma (its running mean and variance
    kept on the host, across the seam): 1,000 steps, saveCheckpoint(), a new OPES and Simulation,
    loadCheckpoint() and 1,000 more give the kernels, Z and bias of 2,000 steps in one go."""
    whole, _ = run('2d', 2000, host_config, adaptiveSigmaStride=200)
    first, simulation = run('2d', 1000, host_config, adaptiveSigmaStride=200)
    first.saveCheckpoint(simulation, str(tmp_path/'opes.chk'))
    second = make_opes('2d', adaptiveSigmaStride=200)
    restarted = simulation_of(second, host_config)
    second.loadCheckpoint(restarted, str(tmp_path/'opes.chk'))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        second.step(restarted, 1000)
    for ours, theirs in zip(second.getKernels(), whole.getKernels()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(second.getHistory().zed, whole.getHistory().zed, rtol=1e-12)
    np.testing.assert_allclose(second.getBias()._value, whole.getBias()._value, rtol=0, atol=1e-10)
