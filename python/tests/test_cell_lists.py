"""Cell lists: the situations in which a platform may bin particles into cells instead of visiting
all pairs (a finite dmax, or a histogram range, with a periodic box), against the NumPy reference
(all pairs, exact nearest image): small and large cutoffs, cutoffs near and beyond half the box,
triclinic boxes, particles exactly on cell faces and box edges, mostly empty cells, every particle
in one cell, a group of one particle, histograms, and dmax or the box changing in a Context.

On GPU configurations only (`gpu_platform_config`), a million particles at the density of water
against a cell-binned NumPy oracle written here (itself checked against the reference below).

Pairs whose distance lies within a small margin of a kink (r = dmax, a tie between two periodic
images, a histogram bin edge) are moved away first: near a kink, rounding alone decides on which
side a pair falls, and these tests are about the cells, not that. Histogram counts are then
exact on every platform and precision.
"""

import functools
import itertools
import math

import numpy as np
import pytest

import openmm

import reference_impl as ref
from helpers import assert_close, energy_and_forces, make_system, set_state
from openmmcoordination import CoordinationForce

KINK_MARGIN = 2e-5   # nm from r = dmax or from an image tie
EDGE_MARGIN = 1e-5   # nm from a histogram bin edge (float distances err by about 1e-6 nm)
CHUNK = 8192         # pairs per NumPy block (the reference searches 125 images per pair)

BOXES = {
    'rectangular': np.diag([4.4, 4.7, 4.1]),
    'triclinic': np.array([[4.0, 0, 0], [1.2, 4.0, 0], [-1.0, 1.3, 4.0]]),
    'skewed': np.array([[4.5, 0, 0], [-2.2, 4.1, 0], [2.2, -2.0, 4.3]]),   # at the limits of the reduced form
    'cube5': np.diag([5.0, 5.0, 5.0]),
    'cube8': np.diag([8.0, 8.0, 8.0]),
}


def min_width(box):
    """The smallest distance between opposite faces of the box."""
    a, b, c = box
    return abs(np.linalg.det(box))/max(np.linalg.norm(np.cross(b, c)), np.linalg.norm(np.cross(c, a)), np.linalg.norm(np.cross(a, b)))


def in_box(rng, box, n):
    """Uniform in the box's cell, up to 0.3 box vectors outside it."""
    return rng.uniform(-0.3, 1.3, (n, 3)) @ box


IMAGES = np.array(list(itertools.product((-1, 0, 1), repeat=3)), dtype=float)


def pair_distances(pos, i, j, box):
    """Nearest-image distances and image gaps (second nearest minus nearest) of the pairs, fast:
    reduced by c, b, a as OpenMM does, then the 27 neighbouring images searched. It only selects
    pairs and moves them from kinks: the values compared come from the reference."""
    shifts = IMAGES @ box
    r, gap = np.empty(len(i)), np.empty(len(i))
    for s in range(0, len(i), CHUNK):
        d = pos[j[s:s + CHUNK]] - pos[i[s:s + CHUNK]]
        for k in (2, 1, 0):
            d -= np.outer(np.round(d[:, k]/box[k, k]), box[k])
        squares = np.einsum('pi,pi->p', d, d)[:, None] + 2*d @ shifts.T + np.einsum('si,si->s', shifts, shifts)[None, :]
        squares.partition(1, axis=1)
        lengths = np.sqrt(np.maximum(squares[:, :2], 0.0))
        r[s:s + CHUNK], gap[s:s + CHUNK] = lengths[:, 0], lengths[:, 1] - lengths[:, 0]
    return r, gap


def within(pos, i, j, box, reach):
    """The pairs that may lie within reach (with a margin), to spare the reference the others."""
    if not math.isfinite(reach):
        return i, j
    keep = pair_distances(pos, i, j, box)[0] < reach + 0.05
    return i[keep], j[keep]


def oracle(pos, switching, i, j, box):
    """(cv, dcv/dx) from the reference (pairs beyond dmax add nothing), in blocks of pairs."""
    i, j = within(pos, i, j, box, switching.cutoff)
    cv, grad = 0.0, np.zeros_like(pos)
    for s in range(0, len(i), CHUNK):
        c, g = ref.coordination(pos, switching, i[s:s + CHUNK], j[s:s + CHUNK], box)
        cv += c
        grad += g
    return cv, grad


def histogram(pos, i, j, box, bins, rmax):
    """Counts from the reference (pairs beyond rmax are not counted)."""
    i, j = within(pos, i, j, box, rmax)
    return ref.pair_histogram(pos, i, j, bins, rmax, box)


def avoid_kinks(pos, i, j, box, dmax, draw, bins=64, rmax=0.0, pinned=-1):
    """Redraw particles (draw(indices) gives new positions; never the pinned one) until no pair
    lies near r = dmax, near an image tie within dmax (dmax None: forces not compared), or near a
    bin edge of a histogram of bins bins up to rmax (rmax 0: none)."""
    pos = pos.copy()
    for _ in range(30):
        r, gap = pair_distances(pos, i, j, box)
        bad = np.zeros(len(r), dtype=bool)
        if dmax is not None:
            bad |= ((r <= dmax + KINK_MARGIN) & (gap < KINK_MARGIN)) | (np.abs(r - dmax) < KINK_MARGIN)
        if rmax > 0:
            edge = (rmax/bins)*np.round(r/(rmax/bins))
            bad |= (edge <= rmax*(1 + 1e-12)) & (np.abs(r - edge) < EDGE_MARGIN)
        if not bad.any():
            return pos
        movers = np.unique(np.where(j[bad] == pinned, i[bad], j[bad]))
        pos[movers] = draw(movers)
    raise AssertionError('too many pairs near a kink: the case is badly built')


def groups(mode, n, rng):
    """One group of all (shuffled); two overlapping groups; a pair list of (2k, 2k+1) and random pairs."""
    if mode == 'one':
        return rng.permutation(n).tolist(), None
    if mode == 'two':
        k = np.arange(n)
        return k[k % 3 != 2].tolist(), k[k % 3 != 0][::-1].tolist()
    a = np.arange(0, n - 1, 2)
    rand_a = rng.integers(0, n, len(a))
    rand_b = (rand_a + rng.integers(1, n, len(a))) % n
    return np.concatenate([a, rand_a]).tolist(), np.concatenate([a + 1, rand_b]).tolist()


def switching(type_name, dmax, stretch=True):
    if type_name == 'CUBIC':
        return ref.Switching('CUBIC', d0=0.05, dmax=dmax, stretch=stretch)
    return ref.Switching(type_name, r0=dmax/3 if math.isfinite(dmax) else 0.2, dmax=dmax, stretch=stretch)


class Case:
    """A periodic System with one CoordinationForce over positions, and its reference pairs."""

    def __init__(self, mode, sw, box, positions, groupA, groupB=None):
        self.switching, self.box, self.positions = sw, box, positions
        self.force = CoordinationForce(groupA) if groupB is None else CoordinationForce(groupA, groupB, mode == 'pairs')
        sw.configure(self.force)
        self.force.setUsesPeriodicBoundaryConditions(True)
        self.system = make_system(len(positions), box)
        self.system.addForce(self.force)
        self.i, self.j = ref.pairs(mode, groupA, groupB)

    def settle(self, draw, bins=64, rmax=0.0, pinned=-1):
        self.positions = avoid_kinks(self.positions, self.i, self.j, self.box, self.switching.cutoff, draw, bins, rmax, pinned)
        return self

    def check(self, config, context=None):
        """Energy, forces, CV and energy alone of a Context against the reference."""
        if context is None:
            context = config.context(self.system)
        set_state(context, self.positions, self.box)
        energy, forces = energy_and_forces(context)
        cv, grad = oracle(self.positions, self.switching, self.i, self.j, self.box)
        assert cv > 1.0
        assert_close(energy, cv, config.value_rtol, 'energy')
        assert_close(forces, -grad, config.force_rtol, 'forces')
        assert_close(self.force.getCollectiveVariableValue(context), cv, config.value_rtol, 'cv')
        assert_close(energy_and_forces(context, forces=False)[0], cv, config.value_rtol, 'energy alone')
        return context


def case_positions(rng, mode, dmax, box, n):
    """In the box (in_box); for a pair list, partners within about 0.4 dmax of each other."""
    positions = in_box(rng, box, n)
    if mode == 'pairs':
        positions[1::2] = positions[0:-1:2] + rng.uniform(-0.4, 0.4, (n//2, 3))*dmax
    return positions


def random_case(rng, mode, type_name, dmax, box, n, stretch=True):
    sw = switching(type_name, dmax, stretch)
    positions = case_positions(rng, mode, dmax, box, n)
    groupA, groupB = groups(mode, n, rng)
    return Case(mode, sw, box, positions, groupA, groupB).settle(lambda k: in_box(rng, box, len(k)))


@pytest.mark.parametrize('mode, type_name, dmax, box_name', [
    ('one', 'RATIONAL', 0.3, 'rectangular'), ('two', 'RATIONAL', 0.6, 'rectangular'),
    ('one', 'GAUSSIAN', 1.0, 'rectangular'), ('two', 'CUBIC', 1.0, 'rectangular'),
    ('pairs', 'RATIONAL', 0.6, 'rectangular'), ('one', 'RATIONAL', 0.3, 'triclinic'),
    ('two', 'GAUSSIAN', 0.6, 'triclinic'), ('one', 'CUBIC', 1.0, 'skewed'), ('two', 'RATIONAL', 0.6, 'skewed')])
def test_small_and_large_cutoffs(platform_config, rng, mode, type_name, dmax, box_name):
    random_case(rng, mode, type_name, dmax, BOXES[box_name], 500).check(platform_config)


def test_cutoff_without_stretch(platform_config, rng):
    """PLUMED's NOSTRETCH: s jumps to 0 at dmax."""
    random_case(rng, 'one', 'RATIONAL', 0.6, BOXES['rectangular'], 500, stretch=False).check(platform_config)


@pytest.mark.parametrize('grid', ['1,1,1,1', '1,1,1,4', '2,1,1,3', '4,2,1,2', '3,1,2,1', '4,3,3,6', '1,1,1,0', '2,1,1,0',
                                  '4,3,3,0'])
@pytest.mark.parametrize('mode, box_name', [('one', 'rectangular'), ('two', 'triclinic'), ('one', 'skewed')])
def test_forced_cell_grids(platform_config, rng, monkeypatch, grid, mode, box_name):
    """Grids the CUDA platform would not choose by itself (COORDINATION_CELL_GRID=rx,ry,rz,runLength:
    reach in cells per axis and home runs of runLength cells along x, or chunks of 32 particles for
    runLength 0), from one cell per run to runs longer than the reach, and chunks over few or many
    cells. Platforms without cell lists ignore it."""
    monkeypatch.setenv('COORDINATION_CELL_GRID', grid)
    random_case(rng, mode, 'RATIONAL', 0.6, BOXES[box_name], 500).check(platform_config)


@pytest.mark.parametrize('sorted_gradient', ['0', '1'])
@pytest.mark.parametrize('mode, type_name, dmax, box_name', [('one', 'RATIONAL', 0.6, 'rectangular'),
                                                             ('two', 'GAUSSIAN', 0.6, 'triclinic'), ('one', 'CUBIC', 1.0, 'skewed')])
def test_forces_through_sorted_gradient(platform_config, rng, monkeypatch, sorted_gradient, mode, type_name, dmax, box_name):
    """The two ways the CUDA cell kernel adds forces (COORDINATION_SORTED_GRADIENT): straight to
    the atoms (the default for small groups), or to a gradient buffer by sorted index, which a
    second kernel turns into forces (the default for large groups); two evaluations in one Context,
    so that the second starts from the buffer the first cleared. Other platforms ignore it."""
    monkeypatch.setenv('COORDINATION_SORTED_GRADIENT', sorted_gradient)
    box = BOXES[box_name]
    case = random_case(rng, mode, type_name, dmax, box, 500)
    context = case.check(platform_config)
    case.positions = case_positions(rng, mode, dmax, box, len(case.positions))
    case.settle(lambda k: in_box(rng, box, len(k)))
    case.check(platform_config, context)


@pytest.mark.leaks_context   # on CUDA the kernel refuses the value after the device context exists
@pytest.mark.parametrize('name, value, allowed', [('COORDINATION_SORTED_GRADIENT', 'yes', '0 or 1'),
                                                   ('COORDINATION_L_PER_THREAD', '4', '1 or 2'),
                                                   ('COORDINATION_LIST_KIND', 'cells', 'particles or homes'),
                                                   ('COORDINATION_LIST_SIDES', 'two', 'one or both')])
def test_switches_reject_other_values(platform_config, rng, monkeypatch, name, value, allowed):
    """The CUDA kernel's switches for tests and benchmarks with another value (the gradient by
    sorted index, L particles a thread of the tile kernel, the kind of lists, the lists' sides): an OpenMMException
    naming the variable and the value on CUDA, ignored elsewhere."""
    monkeypatch.setenv(name, value)
    case = random_case(rng, 'one', 'RATIONAL', 0.6, BOXES['rectangular'], 100)
    if platform_config.name == 'CUDA':
        with pytest.raises(openmm.OpenMMException, match="%s must be %s, not '%s'" % (name, allowed, value)):
            platform_config.context(case.system)
    else:
        case.check(platform_config)


@pytest.mark.parametrize('mode, dmax, box_name', [('one', 0.6, 'rectangular'), ('two', 0.6, 'triclinic'),
                                                  ('pairs', 0.6, 'rectangular'), ('one', math.inf, 'triclinic'),
                                                  ('two', math.inf, 'rectangular')])
def test_restraint_over_evaluations(platform_config, rng, mode, dmax, box_name):
    """A harmonic restraint on the CV (on GPUs, the chain rule on the device, from a CV sum used
    in turn with another) over several evaluations, new positions and a changed parameter in
    between, with cell lists (finite dmax), the pair list and all-pairs tiles."""
    box = BOXES[box_name]
    case = random_case(rng, mode, 'RATIONAL', dmax, box, 500 if math.isfinite(dmax) else 200)
    case.force.setEnergyExpression('0.5*k*(cv-cv0)^2')
    case.force.addGlobalParameter('k', 3.0)
    case.force.addGlobalParameter('cv0', 1.0)
    context = platform_config.context(case.system)
    for evaluation in range(4):
        if evaluation > 0:
            case.positions = case_positions(rng, mode, dmax, box, len(case.positions))
            case.settle(lambda k: in_box(rng, box, len(k)))
        k = (3.0 if evaluation < 2 else 0.5)
        context.setParameter('k', k)
        set_state(context, case.positions, box)
        energy, forces = energy_and_forces(context)
        cv, grad = oracle(case.positions, case.switching, case.i, case.j, box)
        assert cv > 2.0
        assert_close(energy, 0.5*k*(cv-1.0)**2, config_rtol(platform_config, cv), 'energy, evaluation %d' % evaluation)
        assert_close(forces, -k*(cv-1.0)*grad, config_rtol(platform_config, cv, forces=True), 'forces, evaluation %d' % evaluation)
        assert_close(case.force.getCollectiveVariableValue(context), cv, platform_config.value_rtol, 'cv, evaluation %d' % evaluation)


def config_rtol(config, cv, forces=False):
    """The tolerance of 0.5*k*(cv-1)^2 (twice the CV's relative error, times cv/(cv-1)) or of
    k*(cv-1)*dcv/dx (the gradient's, plus the CV's times cv/(cv-1))."""
    ratio = cv/abs(cv - 1.0)
    return config.force_rtol + config.value_rtol*ratio if forces else 2*config.value_rtol*ratio


@pytest.mark.parametrize('mode, type_name, fraction, box_name', [
    ('one', 'RATIONAL', 0.45, 'rectangular'), ('two', 'GAUSSIAN', 0.499, 'rectangular'),
    ('two', 'RATIONAL', 0.45, 'triclinic'), ('one', 'GAUSSIAN', 0.499, 'triclinic'),
    ('one', 'RATIONAL', 0.6, 'triclinic'), ('two', 'CUBIC', 0.6, 'triclinic')])
def test_cutoff_near_and_beyond_half_box(platform_config, rng, mode, type_name, fraction, box_name):
    """dmax a fraction of the smallest box width: 0.45 and 0.499 (too large for three cells per
    width), 0.6 (beyond half the box: images must be searched)."""
    box = BOXES[box_name]
    random_case(rng, mode, type_name, fraction*min_width(box), box, 400).check(platform_config)


def face_positions(rng, box, n):
    """Each coordinate, half the time, exactly on a cell face of a grid of 3 to 12 cells (k/n of
    the box), at 0 or 1, or the doubles just inside them, moved by -1, 0 or 1 whole box vectors
    (exactly k*L/n + m*L in a rectangular box); a random fraction otherwise."""
    kinds = np.array([0.0, 1.0, np.nextafter(0.0, -1.0), np.nextafter(1.0, 0.0)])
    grid = rng.integers(3, 13, (n, 3))
    frac = np.where(rng.random((n, 3)) < 0.3, kinds[rng.integers(0, 4, (n, 3))],
                    np.floor(rng.random((n, 3))*(grid + 1))/grid)
    on_face = rng.random((n, 3)) < 0.5
    frac = np.where(on_face, frac, rng.random((n, 3)))
    shift = np.where(on_face, rng.integers(-1, 2, (n, 3)), 0)
    if np.count_nonzero(box - np.diag(np.diag(box))) == 0:
        lengths = np.diag(box)
        return frac*lengths + shift*lengths
    return (frac + shift) @ box


@pytest.mark.parametrize('box_name', ['rectangular', 'triclinic'])
@pytest.mark.parametrize('mode, type_name, dmax', [('one', 'RATIONAL', 0.6), ('two', 'GAUSSIAN', 1.0), ('one', 'CUBIC', 0.45)])
def test_particles_on_cell_faces(platform_config, rng, box_name, mode, type_name, dmax):
    box = BOXES[box_name] + (np.diag([-0.03, -0.09, 0.03]) if box_name == 'rectangular' else 0)
    n = 500
    positions = face_positions(rng, box, n)
    positions[:8] = np.array(list(itertools.product((0, 1), repeat=3)), dtype=float) @ box   # the corners
    groupA, groupB = groups(mode, n, rng)
    case = Case(mode, switching(type_name, dmax), box, positions, groupA, groupB)
    case.settle(lambda k: face_positions(rng, box, len(k))).check(platform_config)


@pytest.mark.parametrize('layout', ['corner', 'across-corner', 'far-vs-crowd'])
def test_mostly_empty_cells(platform_config, rng, layout):
    """An 8 nm box: 400 particles in a 1 nm cube at a corner (or around the origin, across the
    faces) and 12 anywhere; the last case puts the 12 and 10 of the crowd against the rest."""
    box, n = BOXES['cube8'], 412
    corner = np.zeros(3) if layout == 'corner' else np.full(3, -0.5)

    def draw(k):
        k = np.asarray(k)
        return np.where((k < 400)[:, None], corner + rng.random((len(k), 3)), rng.random((len(k), 3))*8.0)
    if layout == 'far-vs-crowd':
        mode, groupA, groupB, sw = 'two', list(range(390, n)), list(range(390)), switching('RATIONAL', 1.0)
    else:
        mode = 'one' if layout == 'corner' else 'two'
        groupA, groupB = groups(mode, n, rng)
        sw = switching('RATIONAL' if layout == 'corner' else 'GAUSSIAN', 0.6 if layout == 'corner' else 0.3)
    Case(mode, sw, box, draw(np.arange(n)), groupA, groupB).settle(draw).check(platform_config)


@pytest.mark.parametrize('layout', ['inside', 'across-corner', 'triclinic'])
def test_all_particles_in_one_cell(platform_config, rng, layout):
    """200 particles in a 0.4 nm cube, dmax 1 nm."""
    box = BOXES['triclinic' if layout == 'triclinic' else 'cube5']
    corner = np.full(3, -0.2) if layout == 'across-corner' else np.array([2.1, 1.3, 3.4])
    mode = 'two' if layout == 'across-corner' else 'one'
    groupA, groupB = groups(mode, 200, rng)
    sw = switching('CUBIC' if mode == 'two' else 'RATIONAL', 1.0)
    draw = lambda k: corner + 0.4*rng.random((len(k), 3))   # noqa: E731
    Case(mode, sw, box, draw(np.arange(200)), groupA, groupB).settle(draw).check(platform_config)


@pytest.mark.parametrize('box_name', ['rectangular', 'triclinic'])
@pytest.mark.parametrize('single_in', ['A', 'B'])
def test_group_of_one(platform_config, rng, single_in, box_name):
    """One particle against 1500 (itself included: that pair is skipped), or 1500 against one;
    the single particle at the origin (a corner of every cell grid) or anywhere, 20 neighbours
    around it."""
    box, n = BOXES[box_name], 1500
    single = 0 if single_in == 'A' else 777
    center = np.zeros(3) if single_in == 'A' else in_box(rng, box, 1)[0]

    def draw(k):
        k = np.asarray(k)
        return np.where((k < 20)[:, None], center + rng.uniform(-0.4, 0.4, (len(k), 3)), in_box(rng, box, len(k)))
    positions = draw(np.arange(n))
    positions[single] = center
    everyone = list(range(n - 1, -1, -1))
    groupA, groupB = ([single], everyone) if single_in == 'A' else (everyone, [single])
    sw = switching('RATIONAL' if box_name == 'rectangular' else 'GAUSSIAN', 0.6)
    Case('two', sw, box, positions, groupA, groupB).settle(draw, pinned=single).check(platform_config)


@pytest.mark.parametrize('mode, box_name, rmax, dmax', [
    ('one', 'cube5', 1.0, math.inf), ('two', 'cube5', 1.0, 0.3), ('pairs', 'cube5', 1.0, math.inf),
    ('one', 'cube5', '0.499', 0.3), ('two', 'triclinic', '0.45', math.inf), ('one', 'triclinic', '0.499', 1.0)])
def test_histograms(platform_config, rng, mode, box_name, rmax, dmax):
    """Counts (one frame, and two accumulated) against NumPy, exactly; the range is 1 nm in a 5 nm
    box (cells) or a fraction of the smallest box width (near half the box), whatever the force's
    own dmax. Also against a Reference Context."""
    box = BOXES[box_name]
    rmax = float(rmax)*min_width(box) if isinstance(rmax, str) else rmax
    n, bins = (600 if rmax <= 1.0 else 300), 100
    groupA, groupB = groups(mode, n, rng)
    case = Case(mode, switching('RATIONAL', dmax), box, in_box(rng, box, n), groupA, groupB)
    frames = []
    for _ in range(2):
        positions = in_box(rng, box, n)
        if mode == 'pairs':
            positions[1::2] = positions[0:-1:2] + rng.uniform(-0.4, 0.4, (n//2, 3))*rmax
        frames.append(avoid_kinks(positions, case.i, case.j, box, None, lambda k: in_box(rng, box, len(k)), bins, rmax))
    reference = openmm.Context(case.system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    contexts = [platform_config.context(case.system), reference]
    expected = [histogram(p, case.i, case.j, box, bins, rmax) for p in frames]
    assert expected[0].sum() > 100
    for context in contexts:
        for positions, counts in zip(frames, expected):
            set_state(context, positions, box)
            case.force.accumulatePairHistogram(context, bins, rmax)
            np.testing.assert_array_equal(case.force.getPairHistogram(context, bins, rmax), counts)
        np.testing.assert_array_equal(case.force.getAccumulatedPairHistogram(context), expected[0] + expected[1])
        assert case.force.getNumAccumulatedFrames(context) == 2


def test_changes_of_dmax_box_and_positions(platform_config, rng):
    """One Context: dmax changed by updateParametersInContext (small, large, beyond half the box,
    none), the box shrunk and grown with the positions, particles moved across cells; each state
    against the reference, with a histogram between."""
    box0 = BOXES['triclinic']
    case = random_case(rng, 'one', 'RATIONAL', 0.3, box0, 400)
    context = case.check(platform_config)
    for dmax, scale, move in ((1.0, 1.0, False), (0.6*min_width(box0), 1.0, False), (math.inf, 1.0, False),
                              (0.5, 0.8, False), (0.5, 1.25, False), (0.5, 1.25, True), (0.3, 1.0, True)):
        case.switching = switching('RATIONAL', dmax)
        case.switching.configure(case.force)
        case.force.updateParametersInContext(context)
        if move:
            case.positions = in_box(rng, case.box, len(case.positions))
        case.positions, case.box = case.positions @ np.linalg.inv(case.box) @ (scale*box0), scale*box0
        case.settle(lambda k: in_box(rng, case.box, len(k)), 64, 1.0)
        case.check(platform_config, context)
        np.testing.assert_array_equal(case.force.getPairHistogram(context, 64, 1.0),
                                      histogram(case.positions, case.i, case.j, case.box, 64, 1.0))


# ---------------------------------------------------------------------------------------------
# A million particles (GPU configurations only) against a cell-binned NumPy oracle

ATOM_DENSITY = 100.0   # atoms per nm^3, about that of water's atoms


def cell_list_coordination(pos, edge, sw):
    """(cv, dcv/dx) of one group of all particles in a cubic periodic box of the given edge,
    visiting only the pairs in neighbouring cells (exact while the cutoff is at most a third of
    the box). Each unordered pair is visited once: from its own cell to the 13 neighbouring cells
    of a half shell, and within a cell from each particle to the later ones in cell order; the
    gradients of the second particles are summed per neighbouring cell with np.bincount."""
    cells = int(edge // sw.cutoff)
    assert cells >= 3
    n = len(pos)
    pos = pos - edge*np.floor(pos/edge)
    cell3 = np.minimum((pos/(edge/cells)).astype(np.int64), cells - 1)
    flat = lambda c: (c[:, 0]*cells + c[:, 1])*cells + c[:, 2]   # noqa: E731
    cell = flat(cell3)
    order = np.argsort(cell, kind='stable')
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    count = np.bincount(cell, minlength=cells**3)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    cv, grad = 0.0, np.zeros_like(pos)
    for offset in itertools.product((-1, 0, 1), repeat=3):
        if offset < (0, 0, 0):
            continue
        neighbour = flat((cell3 + np.array(offset)) % cells)
        atoms, first, size = np.arange(n), start[neighbour], count[neighbour]
        others, pulls = [], []
        for k in range(int(size.max())):
            keep = size > k
            atoms, first, size = atoms[keep], first[keep], size[keep]
            other = order[first + k]
            d = pos[other] - pos[atoms]
            d -= edge*np.round(d/edge)
            r = np.sqrt(np.einsum('pi,pi->p', d, d))
            near = (r <= sw.cutoff) & (rank[other] > rank[atoms] if offset == (0, 0, 0) else True)
            s, dsdr = sw(r[near])
            cv += s.sum()
            pull = d[near]*(dsdr/r[near])[:, None]
            grad[atoms[near]] -= pull
            others.append(other[near])
            pulls.append(pull)
        others, pulls = np.concatenate(others), np.concatenate(pulls)
        for axis in range(3):
            grad[:, axis] += np.bincount(others, weights=pulls[:, axis], minlength=n)
    return cv, grad


@pytest.mark.parametrize('n, edge, dmax', [(800, 2.0, 0.6), (700, 4.0, 0.5)])
def test_cell_list_oracle_matches_reference(rng, n, edge, dmax):
    pos = rng.uniform(-0.5, edge + 0.5, (n, 3))
    for sw in (switching('RATIONAL', dmax), switching('GAUSSIAN', dmax)):
        cv, grad = cell_list_coordination(pos, edge, sw)
        expected_cv, expected_grad = oracle(pos, sw, *ref.pairs('one', range(n)), np.diag([edge]*3))
        assert expected_cv > 10
        assert_close(cv, expected_cv, 1e-12, 'cv')
        assert_close(grad, expected_grad, 1e-12, 'gradient')


HUGE = 1_000_000


@functools.lru_cache(maxsize=1)
def huge_case():
    """A million random particles at 100 atoms/nm^3 (a 21.5 nm cube), RATIONAL r0 0.1, dmax 0.5
    (|ds/dr| at dmax is below 1e-3: float rounding at the cutoff moves the forces little), and
    the oracle's cv and gradient; computed once per process."""
    edge = (HUGE/ATOM_DENSITY)**(1/3)
    pos = np.random.default_rng(2026).uniform(0, edge, (HUGE, 3))
    sw = ref.Switching('RATIONAL', r0=0.1, dmax=0.5)
    return edge, pos, sw, cell_list_coordination(pos, edge, sw)


# The huge tests share huge_case(), about 15 s of NumPy a process: under pytest-xdist with
# --dist loadgroup they run on one worker, which computes it once.
@pytest.mark.xdist_group('huge')
def test_huge_self_coordination(gpu_platform_config):
    edge, pos, sw, (cv, grad) = huge_case()
    force = CoordinationForce(list(range(HUGE)))
    sw.configure(force)
    force.setUsesPeriodicBoundaryConditions(True)
    system = make_system(HUGE, np.diag([edge]*3))
    system.addForce(force)
    context = gpu_platform_config.context(system)
    set_state(context, pos, np.diag([edge]*3))
    energy, forces = energy_and_forces(context)
    assert cv > 0.1*HUGE
    assert_close(energy, cv, gpu_platform_config.value_rtol, 'energy')
    assert_close(forces, -grad, gpu_platform_config.force_rtol, 'forces')
    assert_close(energy_and_forces(context, forces=False)[0], cv, gpu_platform_config.value_rtol, 'energy alone')
    assert_close(force.getCollectiveVariableValue(context), cv, gpu_platform_config.value_rtol, 'cv')


@pytest.mark.xdist_group('huge')
@pytest.mark.parametrize('dmax', [1.0, math.inf])
def test_huge_one_against_a_million(gpu_platform_config, dmax):
    """Particle 0 (at a corner of the box) against the other 1,000,000."""
    edge, pos, _, _ = huge_case()
    pos = np.concatenate([np.zeros((1, 3)), pos])
    box = np.diag([edge]*3)
    sw = ref.Switching('RATIONAL', r0=0.25, dmax=dmax)
    force = CoordinationForce([0], list(range(1, HUGE + 1)))
    sw.configure(force)
    force.setUsesPeriodicBoundaryConditions(True)
    system = make_system(HUGE + 1, box)
    system.addForce(force)
    context = gpu_platform_config.context(system)
    set_state(context, pos, box)
    energy, forces = energy_and_forces(context)
    d = pos[1:] - pos[0]
    d -= edge*np.round(d/edge)
    r = np.sqrt(np.einsum('pi,pi->p', d, d))
    s, dsdr = sw(r)
    expected = np.zeros_like(pos)
    expected[1:] = -d*(dsdr/r)[:, None]
    expected[0] = -expected[1:].sum(axis=0)
    assert s.sum() > 5
    assert_close(energy, s.sum(), gpu_platform_config.value_rtol, 'energy')
    assert_close(forces, expected, gpu_platform_config.force_rtol, 'forces')
