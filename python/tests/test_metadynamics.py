"""Metadynamics (1, 2 or 3 coordination numbers, the bias in one CoordinationBiasForce's table)
against openmm.app.metadynamics.Metadynamics over CustomCVForce and against NumPy: the same hills
on the same seed, the same free-energy profile within statistical error and the exact profile of a
toy model, the bias energy equal to the table's interpolation of the grid, walkers sharing a
directory (also across processes and with openmm.app), and every error.

The tests that take `platform_config` run on every available configuration. The comparisons with
openmm.app on the same seed take `host_config`, the Reference and CPU configurations: there a seeded
run is reproducible and in double precision, so the two classes' trajectories stay together for
the length of the test (in single or mixed precision on CUDA they would part within a few hundred
steps). The others use the Reference platform.

The toy models (gr_helpers): a centre bound to partners by double-well radial potentials. In 1-D the
CV is the centre's coordination with two partners; in 2-D and 3-D, CV k is s(r) of partner k alone.
"""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import openmm
import openmm.app.metadynamics as peer
from openmm import unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce
from openmmcoordination.metadynamics import BiasVariable, Metadynamics

from cases import natural_spline
from gr_helpers import (TOY_PARTNERS, TOY_TEMPERATURE, hills_of, hills_on_grid, run_toy_metadynamics,
                        run_toy_metadynamics_nd, toy_cv, toy_exact_free_energy, toy_pair_cv, toy_positions, toy_system)
from helpers import same_seed

HERE = os.path.dirname(os.path.abspath(__file__))
KTDELTA = (unit.MOLAR_GAS_CONSTANT_R*TOY_TEMPERATURE*unit.kelvin*4.0).value_in_unit(unit.kilojoules_per_mole)  # biasFactor 5


@same_seed
def test_same_seed_same_hills():
    """1-D, same seed, short run: both deposit the same hills at the same CVs (until chaos separates the
    trajectories, which takes far longer than this)."""
    ours, simulation = run_toy_metadynamics(Metadynamics, seed=11, steps=3000, frequency=20)
    theirs, theirSimulation = run_toy_metadynamics(peer.Metadynamics, seed=11, steps=3000, frequency=20)
    assert len(ours.getHillHeights()) == 150
    np.testing.assert_allclose(ours.getFreeEnergy()._value, theirs.getFreeEnergy()._value, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.getBias()._value, theirs._totalBias, rtol=1e-7, atol=1e-9)
    assert ours.getCollectiveVariables(simulation)[0] == pytest.approx(
        theirs.getCollectiveVariables(theirSimulation)[0], rel=1e-5)
    grid = ours.getCollectiveVariableGrid()          # a list in every dimension (issue 44)
    assert isinstance(grid, list) and [a.shape for a in grid] == [(101,)] and ours.getHillCenters().shape == (150, 1)
    # well tempered: heights fall below the initial height as the bias grows
    heights = ours.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    assert heights[0] <= 1.0 and heights.min() < 0.9


def test_well_tempered_heights_1d():
    """Each hill's height is h exp(-V/(k_B dT)), V the bias of the earlier hills at its centre, which
    NumPy evaluates with OpenMM's natural spline of the grid (cases.natural_spline)."""
    meta, _ = run_toy_metadynamics(Metadynamics, seed=3, steps=1000, frequency=20)
    centers, heights = hills_of(meta)
    grid, = meta.getCollectiveVariableGrid()
    width = meta.variables[0].biasWidth
    for k in range(len(heights)):
        before = hills_on_grid(centers[:k], heights[:k], [grid], [width])
        inside = 0.0 <= centers[k, 0] <= float(TOY_PARTNERS)
        bias = natural_spline(grid, before)[0](centers[k, 0]) if inside else 0.0
        assert heights[k] == pytest.approx(np.exp(-bias/KTDELTA), rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(meta.getBias()._value, hills_on_grid(centers, heights, [grid], [width]), rtol=1e-12, atol=1e-12)


@same_seed
@pytest.mark.parametrize('dimensions, gridWidth, steps', [(2, (41, 31), 1500), (3, (21, 17, 13), 1000)])
def test_same_seed_as_peer_nd(host_config, dimensions, gridWidth, steps):
    """2-D and 3-D, same system, platform and seed as openmm.app over CustomCVForce: the same hills.

    Tolerance: the random forces are identical; the two differ only by the rounding of the CVs
    and of their chain rule (our CVs computed directly, openmm.app's in CustomCVForce's inner
    Context), about 1e-16 relative, which the chaotic dynamics amplify about tenfold every 150
    steps: over seeds 11 to 15 the grids differ by at most 2e-11 (Reference) and 7e-10 (CPU) of
    their largest value after 1,500 steps in 2-D, 2e-11 after 1,000 steps in 3-D (after 3,000
    steps in 2-D: up to 6e-4, so the runs stay short). Tested to 1e-6 of the largest value; an
    error in the hills (an axis swapped, a wrong width or height) is of order 1."""
    ours, simulation = run_toy_metadynamics_nd(Metadynamics, 11, steps, dimensions, gridWidth=list(gridWidth),
                                               config=host_config)
    theirs, theirSimulation = run_toy_metadynamics_nd(peer.Metadynamics, 11, steps, dimensions,
                                                      gridWidth=list(gridWidth), config=host_config)
    shape = tuple(reversed(gridWidth))
    bias = ours.getBias().value_in_unit(unit.kilojoules_per_mole)
    assert bias.shape == shape == theirs._totalBias.shape and len(ours.getHillHeights()) == steps//20
    scale = np.abs(theirs._totalBias).max()
    assert scale > 3.0
    np.testing.assert_allclose(bias, theirs._totalBias, rtol=0, atol=1e-6*scale)
    fes, theirFes = ours.getFreeEnergy(), theirs.getFreeEnergy()
    assert fes.unit == theirFes.unit == unit.kilojoules_per_mole and fes._value.shape == theirFes._value.shape
    np.testing.assert_allclose(fes._value, theirFes._value, rtol=0, atol=2e-6*scale)
    cvs, theirCvs = ours.getCollectiveVariables(simulation), theirs.getCollectiveVariables(theirSimulation)
    assert type(cvs) is type(theirCvs) is tuple and len(cvs) == dimensions
    np.testing.assert_allclose(cvs, theirCvs, rtol=1e-5)
    # the grid is the sum of the hills, built independently in NumPy (checks the layout: axis 0 is the last CV)
    centers, heights = hills_of(ours)
    assert ours.getHillCenters().shape == (steps//20, dimensions)
    axes = ours.getCollectiveVariableGrid()
    assert [len(a) for a in axes] == list(gridWidth)
    np.testing.assert_allclose(bias, hills_on_grid(centers, heights, axes, [0.1]*dimensions), rtol=1e-12, atol=1e-12)
    assert heights[0] <= 1.0 and heights.min() < 0.9


def _aligned(free_energies, exact, mask):
    """Shift each profile to the exact one over the mask (free energies are defined up to a constant)."""
    free_energies = np.array(free_energies)
    return free_energies - (free_energies[:, mask] - exact[mask]).mean(axis=1)[:, None]


def test_free_energy_agrees_with_peer_and_exact_profile():
    """1-D, independent seeds for each method; the mean profiles agree within their statistical error,
    and both match the exact profile of the toy model."""
    seeds, steps = [1, 2, 3, 4], 150000
    ours = [run_toy_metadynamics(Metadynamics, s, steps)[0].getFreeEnergy()._value for s in seeds]
    theirs = [run_toy_metadynamics(peer.Metadynamics, s + 100, steps)[0].getFreeEnergy()._value for s in seeds]
    grid = np.linspace(0.0, float(TOY_PARTNERS), 101)
    exact = toy_exact_free_energy(grid)
    mask = np.isfinite(exact) & (exact - np.min(exact[np.isfinite(exact)]) < 12.0)
    ours, theirs = _aligned(ours, exact, mask), _aligned(theirs, exact, mask)
    difference = ours.mean(axis=0) - theirs.mean(axis=0)
    error = np.sqrt(ours.var(axis=0, ddof=1)/len(seeds) + theirs.var(axis=0, ddof=1)/len(seeds))
    z = difference[mask]/np.maximum(error[mask], 0.05)
    assert np.sqrt(np.mean(z**2)) < 2.5, z
    assert np.max(np.abs(difference[mask])) < 2.0
    for profiles in (ours, theirs):
        rms = np.sqrt(np.mean((profiles.mean(axis=0)[mask] - exact[mask])**2))
        assert rms < 1.5


def _radius_for(force, value):
    """The distance r (nm) at which the switching function of ``force`` equals ``value`` (bisection)."""
    low, high = 1e-3, 2.0
    for _ in range(200):
        middle = 0.5*(low + high)
        if force.evaluateSwitchingFunction(middle)[0] > value:
            low = middle
        else:
            high = middle
    return 0.5*(low + high)


def _set_cvs(meta, simulation, values):
    """Move the toy's partners so that CV k (s(r_0k)) is values[k]; returns the CVs the force reads."""
    positions = np.zeros((len(values) + 1, 3))
    for k, value in enumerate(values):
        positions[k + 1, k] = _radius_for(meta.force.getCollectiveVariable(k), value)
    simulation.context.setPositions(positions)
    return meta.getCollectiveVariables(simulation)


def _peer_energy(meta, simulation):
    """The bias at the current positions through OpenMM alone: a CustomCVForce over copies of the CVs
    with a table of meta.getBias() (an openmm.app-style bias force)."""
    d = len(meta.variables)
    names = ['x%d' % k for k in range(d)]
    force = openmm.CustomCVForce('table(%s)' % ', '.join(names))
    for k, name in enumerate(names):
        cv = CoordinationForce([0], [k + 1])
        force.addCollectiveVariable(name, cv)
    values = meta.getBias().value_in_unit(unit.kilojoules_per_mole).ravel()
    limits = [x for v in meta.variables for x in (v.minValue, v.maxValue)]
    widths = [v.gridWidth for v in meta.variables]
    table = {1: lambda: openmm.Continuous1DFunction(values, *limits),
             2: lambda: openmm.Continuous2DFunction(*widths, values, *limits),
             3: lambda: openmm.Continuous3DFunction(*widths, values, *limits)}[d]()
    force.addTabulatedFunction('table', table)
    system = toy_system(d)[0]
    system.addForce(force)
    force.setForceGroup(1)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(simulation.context.getState(getPositions=True).getPositions())
    return context.getState(getEnergy=True, groups={1}).getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)


def _multilinear(axes, bias, point):
    """Multilinear interpolation of the grid (axis 0 the last variable) at a point, in NumPy."""
    d = len(axes)
    weights, lows = [], []
    for k in range(d):
        h = axes[k][1] - axes[k][0]
        i = int(np.clip(np.floor((point[k] - axes[k][0])/h), 0, len(axes[k]) - 2))
        lows.append(i)
        weights.append((point[k] - axes[k][i])/h)
    total = 0.0
    for corner in range(2**d):
        bits = [(corner >> k) & 1 for k in range(d)]
        w = np.prod([weights[k] if bits[k] else 1 - weights[k] for k in range(d)])
        total += w*bias[tuple(lows[k] + bits[k] for k in reversed(range(d)))]
    return total


@pytest.mark.parametrize('dimensions, gridWidth', [(1, (51,)), (2, (41, 31)), (3, (31, 25, 21))])
def test_bias_is_the_force_table(platform_config, dimensions, gridWidth):
    """The bias force is one CoordinationBiasForce, 'bias(c1, ...)' with the table 'bias' holding the
    grid (values[i + nx*j + nx*ny*k] = bias[k, j, i]), over copies of the variables' forces, in the
    highest free force group; the energy of that group is the grid's value at a grid node (where
    OpenMM's splines pass through the values), equals a CustomCVForce with the same table off the
    nodes, and is near NumPy's multilinear interpolation there (within the grid's curvature)."""
    meta, simulation = run_toy_metadynamics_nd(Metadynamics, 5, 600, dimensions, gridWidth=list(gridWidth),
                                               config=platform_config)
    force = meta.force
    assert isinstance(force, CoordinationBiasForce) and force.getForceGroup() == 31
    assert force.getEnergyExpression() == 'bias(%s)' % ', '.join(['c1', 'c2', 'c3'][:dimensions])
    assert force.getNumTabulatedFunctions() == 1 and force.getTabulatedFunctionName(0) == 'bias'
    assert force.getNumCollectiveVariables() == dimensions
    for k in range(dimensions):
        cv = force.getCollectiveVariable(k)
        assert cv.getEnergyExpression() == 'cv' and list(cv.getGroupB()) == [k + 1]
        assert cv is not meta.variables[k].force
    xml = openmm.XmlSerializer.serialize(simulation.system)     # getForces() gives plugin forces as plain Force
    assert simulation.system.getNumForces() == 2 and xml.count('type="CoordinationBiasForce"') == 1
    assert 'CustomCVForce' not in xml

    bias = meta.getBias().value_in_unit(unit.kilojoules_per_mole)
    assert bias.shape == tuple(reversed(gridWidth)) and bias.max() > 2.0
    parameters = force.getTabulatedFunction(0).getFunctionParameters()
    values = parameters[0] if dimensions == 1 else parameters[dimensions]
    if dimensions > 1:
        assert list(parameters[:dimensions]) == list(gridWidth)
    np.testing.assert_array_equal(np.asarray(values), bias.ravel())
    np.testing.assert_allclose(meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole), -1.25*bias, rtol=1e-14)

    axes = meta.getCollectiveVariableGrid()
    group = {force.getForceGroup()}

    def energy():
        return simulation.context.getState(getEnergy=True, groups=group).getPotentialEnergy().value_in_unit(
            unit.kilojoules_per_mole)

    # the interior grid node of the largest bias (OpenMM's splines pass through the grid values there)
    interior = np.zeros(bias.shape, dtype=bool)
    interior[tuple(slice(1, n - 1) for n in bias.shape)] = True
    interior &= np.all([(m > 0.05) & (m < 0.95) for m in np.meshgrid(*axes[::-1], indexing='ij')], axis=0)
    node = list(reversed(np.unravel_index(np.argmax(np.where(interior, bias, -1.0)), bias.shape)))   # per variable
    target = [axes[k][node[k]] for k in range(dimensions)]
    np.testing.assert_allclose(_set_cvs(meta, simulation, target), target, rtol=max(1e-12, platform_config.value_rtol))
    expected = bias[tuple(reversed(node))]
    assert expected > 0.5*bias.max()
    assert energy() == pytest.approx(expected, rel=max(1e-8, platform_config.table_value_rtol))
    # off the nodes: OpenMM's own evaluation of the same table, and multilinear interpolation nearby
    steps = [axis[1] - axis[0] for axis in axes]
    for fractions in ([0.37, -0.61, 0.23], [-0.45, 0.28, -0.72]):
        point = [target[k] + fractions[k]*steps[k] for k in range(dimensions)]
        cvs = _set_cvs(meta, simulation, point)
        ours = energy()
        assert ours > 0.2*bias.max()
        assert ours == pytest.approx(_peer_energy(meta, simulation), rel=platform_config.table_value_rtol)
        if dimensions == 1:
            # (1e-9 where the table is evaluated in double precision; table_value_rtol on a GPU,
            # whose tables hold their spline coefficients in single precision)
            assert ours == pytest.approx(natural_spline(axes[0], bias)[0](cvs[0]), rel=max(1e-9, platform_config.table_value_rtol))
        # a cubic interpolant departs from the linear one by about h^2/8 |f''| per axis: bounded here by
        # the largest second difference of the grid along each axis around the point (8 times that)
        around = tuple(slice(max(0, int((cvs[a] - axes[a][0])/steps[a]) - 2), int((cvs[a] - axes[a][0])/steps[a]) + 4)
                       for a in reversed(range(dimensions)))
        curvature = sum(np.abs(np.diff(bias[around], n=2, axis=a)).max() for a in range(dimensions))
        assert abs(ours - _multilinear(axes, bias, cvs)) < curvature < 0.5*ours


def test_3d_grid_layout():
    """3-D: the grid, its axes and the hill centres have openmm.app's shapes; the table is the bias;
    a hill lands where NumPy puts it."""
    meta, simulation = run_toy_metadynamics_nd(Metadynamics, 2, 200, 3, frequency=200, gridWidth=[21, 17, 13])
    axes = meta.getCollectiveVariableGrid()
    assert isinstance(axes, list) and [a.shape for a in axes] == [(21,), (17,), (13,)]
    np.testing.assert_array_equal(axes[1], np.linspace(0.0, 1.0, 17))
    bias = meta.getBias().value_in_unit(unit.kilojoules_per_mole)
    assert bias.shape == (13, 17, 21) and meta.getFreeEnergy()._value.shape == (13, 17, 21)
    centers = meta.getHillCenters()
    assert centers.shape == (1, 3)
    assert meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole) == pytest.approx([1.0])   # no bias yet
    expected = hills_on_grid(centers, [1.0], axes, [0.1]*3)
    np.testing.assert_allclose(bias, expected, rtol=1e-12, atol=1e-15)
    # the largest value lies at the grid point nearest to the centre, in openmm.app's index order
    k, j, i = np.unravel_index(np.argmax(bias), bias.shape)
    assert (abs(axes[0][i] - centers[0, 0]) <= 0.5/20 and abs(axes[1][j] - centers[0, 1]) <= 0.5/16
            and abs(axes[2][k] - centers[0, 2]) <= 0.5/12)
    nx, ny, nz, values = meta.force.getTabulatedFunction(0).getFunctionParameters()[:4]
    assert (nx, ny, nz) == (21, 17, 13)
    np.testing.assert_array_equal(np.asarray(values).reshape(nz, ny, nx), bias)


def test_walkers_share_a_directory(tmp_path):
    """Walkers one after the other in one process (2-D): each adds the files of the others; openmm.app
    reads ours and we read its; the files are openmm.app's (bias_<id>_<index>.npy, own hills only)."""
    run = dict(dimensions=2, gridWidth=[41, 31], frequency=50, biasDir=str(tmp_path), saveFrequency=500)
    first, _ = run_toy_metadynamics_nd(Metadynamics, 1, 2000, **run)
    files = sorted(name for name in os.listdir(tmp_path) if name != 'settings_Metadynamics.json')   # the settings: test_walker_files.py
    assert len(files) == 1 and files[0].startswith('bias_') and files[0].endswith('_5.npy')   # 1 at start, 4 saves
    own = hills_on_grid(*hills_of(first), first.getCollectiveVariableGrid(), [0.1, 0.1])
    np.testing.assert_allclose(np.load(tmp_path/files[0]), own, rtol=1e-12, atol=1e-14)
    second, _ = run_toy_metadynamics_nd(Metadynamics, 2, 2000, **run)
    secondOwn = hills_on_grid(*hills_of(second), second.getCollectiveVariableGrid(), [0.1, 0.1])
    np.testing.assert_allclose(second.getBias()._value, secondOwn + own, rtol=1e-10, atol=1e-12)
    third, _ = run_toy_metadynamics_nd(peer.Metadynamics, 3, 500, **run)
    np.testing.assert_allclose(third._totalBias, third._selfBias + own + secondOwn, rtol=1e-10, atol=1e-12)
    fourth, simulation = run_toy_metadynamics_nd(Metadynamics, 4, 500, **run)
    fourthOwn = hills_on_grid(*hills_of(fourth), fourth.getCollectiveVariableGrid(), [0.1, 0.1])
    np.testing.assert_allclose(fourth.getBias()._value, fourthOwn + own + secondOwn + third._selfBias, rtol=1e-10,
                               atol=1e-12)
    assert len(os.listdir(tmp_path)) == 5    # 4 walkers' files and settings_Metadynamics.json
    # a walker that starts on the directory applies the loaded bias from its first step
    fifth, simulation = run_toy_metadynamics_nd(Metadynamics, 5, 0, **run)
    table = np.asarray(fifth.force.getTabulatedFunction(0).getFunctionParameters()[2])
    np.testing.assert_array_equal(table, fifth.getBias()._value.ravel())
    assert fifth.getBias()._value.max() > 5.0


WALKER = textwrap.dedent('''
    import json, os, sys, time
    import numpy as np
    from openmm import unit
    sys.path.insert(0, {tests!r})
    from gr_helpers import run_toy_metadynamics_nd
    from openmmcoordination.metadynamics import Metadynamics
    biasDir, sync, name, other, seed = sys.argv[1:6]

    def barrier(label):
        open(os.path.join(sync, '%s_%s' % (name, label)), 'w').close()
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(sync, '%s_%s' % (other, label))):
            if time.time() > deadline:
                sys.exit('timed out waiting for ' + other)
            time.sleep(0.02)

    meta, simulation = run_toy_metadynamics_nd(Metadynamics, int(seed), 0, 2, frequency=50, gridWidth=[41, 31],
                                               biasDir=biasDir, saveFrequency=250)
    biases = []
    for round in range(4):
        barrier(round)                # the other's file of the previous round is on disk
        meta.step(simulation, 250)    # 5 hills, then write ours and read the other's
        biases.append(meta.getBias().value_in_unit(unit.kilojoules_per_mole))
    barrier('done')
    np.savez(sys.argv[6], biases=np.array(biases), centers=np.asarray(meta.getHillCenters()),
             heights=meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole))
''')


def test_walkers_in_two_processes(tmp_path):
    """Two processes on one biasDir, in step through marker files: after each round of 5 hills each
    has its own hills (rebuilt in NumPy from its hill record) plus the other's from the previous or
    the same round, and the directory holds one current file per walker."""
    biasDir, sync = tmp_path/'bias', tmp_path/'sync'
    biasDir.mkdir()
    sync.mkdir()
    script = tmp_path/'walker.py'
    script.write_text(WALKER.format(tests=HERE))
    processes = [subprocess.Popen([sys.executable, str(script), str(biasDir), str(sync), name, other, seed,
                                   str(tmp_path/(name + '.npz'))], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for name, other, seed in (('a', 'b', '1'), ('b', 'a', '2'))]
    for process in processes:
        output, _ = process.communicate(timeout=240)
        assert process.returncode == 0, output[-3000:]
    results = {name: np.load(tmp_path/(name + '.npz')) for name in 'ab'}
    axes = [np.linspace(0, 1, 41), np.linspace(0, 1, 31)]
    own = {}
    for name, data in results.items():
        assert data['centers'].shape == (20, 2) and data['biases'].shape == (4, 31, 41)
        # own[name][r]: this walker's hills of rounds 0..r-1 (r = 0: none)
        own[name] = [hills_on_grid(data['centers'][:5*r], data['heights'][:5*r], axes, [0.1, 0.1]) for r in range(5)]
    for name, other in (('a', 'b'), ('b', 'a')):
        for r in range(4):
            loaded = results[name]['biases'][r] - own[name][r + 1]
            matches = [s for s in (r, r + 1) if np.allclose(loaded, own[other][s], rtol=1e-10, atol=1e-10)]
            assert matches, 'walker %s, round %d: the loaded bias is not the other walker\'s' % (name, r)
        assert np.abs(own[other][4]).max() > 1.0
    files = sorted(name for name in os.listdir(biasDir) if name != 'settings_Metadynamics.json')
    assert len(files) == 2 and all(f.startswith('bias_') and f.endswith('_5.npy') for f in files)
    assert files[0].split('_')[1] != files[1].split('_')[1]
    on_disk = sorted(float(np.load(biasDir/f).sum()) for f in files)
    assert on_disk == pytest.approx(sorted(float(own[n][4].sum()) for n in 'ab'), rel=1e-12)


def test_bias_files_of_another_grid(tmp_path):
    """A directory with bias files of another grid: the constructor refuses it before writing anything
    and leaves the files as they were; one that appears during a run is skipped with a warning."""
    other = np.arange(12.0).reshape(3, 4)
    np.save(tmp_path/'bias_42_7.npy', other)
    (tmp_path/'notes.txt').write_text('mine')
    before = {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)}
    system, _ = toy_system(2)
    variables = [BiasVariable(toy_pair_cv(k + 1), 0.0, 1.0, 0.1, gridWidth=11) for k in range(2)]
    with pytest.raises(ValueError, match=r'Metadynamics: biasDir holds .*bias_42_7\.npy, a bias of shape \(3, 4\), '
                                         r'but this grid has shape \(11, 11\)'):
        Metadynamics(system, variables, 300, 5.0, 1.0, 10, saveFrequency=10, biasDir=str(tmp_path))
    assert {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)} == before
    assert system.getNumForces() == 1

    clean = tmp_path/'clean'
    clean.mkdir()
    meta, simulation = run_toy_metadynamics_nd(Metadynamics, 1, 100, 2, frequency=10, gridWidth=11, biasDir=str(clean),
                                               saveFrequency=50)
    np.save(clean/'bias_42_7.npy', other)
    with pytest.warns(RuntimeWarning, match='shape'):
        meta.step(simulation, 50)
    assert meta.getBias()._value.shape == (11, 11) and np.array_equal(np.load(clean/'bias_42_7.npy'), other)
    assert len(meta.getHillHeights()) == 15


def _variable(**changes):
    arguments = dict(force=toy_cv(), minValue=0.0, maxValue=2.0, biasWidth=0.1, gridWidth=21)
    arguments.update(changes)
    variable = BiasVariable(arguments['force'], arguments['minValue'], arguments['maxValue'], arguments['biasWidth'],
                            gridWidth=arguments['gridWidth'])
    for name in ('minValue', 'maxValue', 'biasWidth', 'gridWidth'):
        setattr(variable, name, arguments[name])    # BiasVariable itself checks nothing
    return variable


def _restrained():
    force = toy_cv()
    force.setEnergyExpression('cv^2')
    return force


def _tabulated():
    force = toy_cv()
    force.setEnergyExpression('cv')
    force.addTabulatedFunction('f', openmm.Continuous1DFunction([0.0, 1.0], 0.0, 1.0))
    return force


# The Systems of _in_a_system(), kept for the whole session: a System deletes its forces with it,
# and the test reads the force after the call.
_OWNERS = []


def _in_a_system():
    force = toy_cv()
    system = openmm.System()
    system.addForce(force)
    _OWNERS.append(system)
    return force


def _periodic():
    force = toy_cv()
    force.setUsesPeriodicBoundaryConditions(True)
    return force


ERRORS = [
    # (what, arguments changed, regular expression of the message)
    ('no variable', dict(variables=[]), r'variables must hold 1, 2 or 3 BiasVariables, got 0'),
    ('four variables', dict(variables=[_variable() for _ in range(4)]), r'variables must hold 1, 2 or 3 BiasVariables, got 4'),
    ('not a list', dict(variables=5), r'variables must be a list of 1, 2 or 3 BiasVariables, got 5'),
    ('not a BiasVariable', dict(variables=[_variable(), 'c2']), r"variables\[1\] must be a BiasVariable, got 'c2'"),
    ('not a force', dict(variables=[_variable(force='r')]),
     r'variables\[0\]\.force must be a CoordinationForce, a CVFunction of them or another OpenMM Force that computes a '
     r'CV, got str'),
    ('periodic', dict(variables=[_variable(), BiasVariable(toy_cv(), 0, 2, 0.1, periodic=True)]),
     r'variables\[1\]\.periodic must be False .*got True'),
    ('energy expression', dict(variables=[_variable(force=_restrained())]),
     r'variables\[0\]\.force must have the energy expression "cv" .*got "cv\^2"'),
    ('table', dict(variables=[_variable(force=_tabulated())]), r'variables\[0\]\.force .*got "cv" and 1 functions'),
    ('in a System', dict(variables=[_variable(force=_in_a_system())]), r'variables\[0\]\.force already belongs to a System'),
    ('mixed periodicity', dict(variables=[_variable(), _variable(force=_periodic())]),
     r"the variables' forces must all use periodic boundary conditions or none, got variables\[0\]: False, variables\[1\]: True"),
    ('gridWidth', dict(variables=[_variable(gridWidth=1)]), r'variables\[0\]\.gridWidth must be an integer >= 2, got 1'),
    ('gridWidth float', dict(variables=[_variable(gridWidth=20.5)]), r'variables\[0\]\.gridWidth .*got 20\.5'),
    ('range', dict(variables=[_variable(minValue=2.0, maxValue=1.0)]),
     r'variables\[0\]\.minValue \(2\.0\) must be less than maxValue \(1\.0\)'),
    ('grid too large', dict(variables=[_variable(gridWidth=10**9)]),
     r'the grid of the variables has 1000000000 = 1000000000 points, more than 10000000 \(its arrays would not fit in '
     r'memory\); give smaller gridWidths'),
    ('grid too large 3-D', dict(variables=[_variable(gridWidth=300) for _ in range(3)]),
     r'the grid of the variables has 300 x 300 x 300 = 27000000 points, more than 10000000'),
    ('biasWidth', dict(variables=[_variable(biasWidth=0.0)]), r'variables\[0\]\.biasWidth must be positive, got 0\.0'),
    ('biasWidth nan', dict(variables=[_variable(biasWidth=float('nan'))]), r'variables\[0\]\.biasWidth must be a finite number, got nan'),
    ('biasFactor', dict(biasFactor=1.0), r'biasFactor must be a finite number > 1, got 1\.0'),
    ('biasFactor below', dict(biasFactor=0.5), r'biasFactor must be a finite number > 1, got 0\.5$'),
    ('biasFactor inf', dict(biasFactor=float('inf')), r'biasFactor must be a finite number > 1, got inf \(plain '
     r'metadynamics, openmm.app\'s biasFactor inf, is not offered'),
    ('height', dict(height=-1.0), r'height must be positive and finite, got -1\.0'),
    ('height unit', dict(height=1.0*unit.nanometer), r'height must be an energy, got 1\.0 nm'),
    ('temperature', dict(temperature=0*unit.kelvin), r'temperature must be positive and finite, got 0 K'),
    ('frequency', dict(frequency=0), r'frequency must be a positive integer, got 0'),
    ('frequency float', dict(frequency=100.5), r'frequency must be a positive integer, got 100\.5'),
    ('saveFrequency alone', dict(saveFrequency=100), r'give both saveFrequency and biasDir, or neither; got saveFrequency=100, biasDir=None'),
    ('biasDir alone', dict(biasDir='.'), r"give both .* got saveFrequency=None, biasDir='\.'"),
    ('saveFrequency multiple', dict(saveFrequency=150, biasDir='.'), r'saveFrequency must be a positive multiple of frequency \(100\), got 150'),
    ('saveFrequency smaller', dict(saveFrequency=50, biasDir='.'), r'saveFrequency must be .* got 50'),
    ('biasDir missing', dict(saveFrequency=100, biasDir='/nonexistent/metad'), r"biasDir must be an existing directory, got '/nonexistent/metad'"),
    ('biasDir bytes', dict(saveFrequency=100, biasDir=b'.'), r"biasDir must be a path \(a str or os.PathLike\), got b'\.'"),
]


@pytest.mark.parametrize('what, changes, message', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(what, changes, message):
    """ValueError naming the class, the parameter and the value; the System is left as it was."""
    system, _ = toy_system()
    arguments = dict(system=system, variables=[_variable()], temperature=300, biasFactor=5.0, height=1.0, frequency=100)
    arguments.update(changes)
    with pytest.raises(ValueError, match='^Metadynamics: ' + message):
        Metadynamics(**arguments)
    assert system.getNumForces() == 1


def test_no_free_force_group():
    system, _ = toy_system()
    for group in range(32):
        force = openmm.CustomExternalForce('0')
        force.setForceGroup(group)
        system.addForce(force)
    with pytest.raises(RuntimeError, match='Metadynamics: all 32 force groups'):
        Metadynamics(system, [_variable()], 300, 5.0, 1.0, 100)
    assert system.getNumForces() == 33


def test_variable_forces_are_copied():
    """The user's forces stay theirs: changing one afterwards changes nothing in the bias force, and a
    force may serve two variables (two copies)."""
    cv = toy_pair_cv(1)
    system, _ = toy_system(2)
    meta = Metadynamics(system, [BiasVariable(cv, 0, 1, 0.1, gridWidth=11), BiasVariable(cv, 0, 1, 0.1, gridWidth=11)],
                        300, 5.0, 1.0, 100)
    cv.setR0(0.5)
    assert cv.thisown
    assert [meta.force.getCollectiveVariable(k).getR0().value_in_unit(unit.nanometer) for k in range(2)] == [0.3, 0.3]


@pytest.mark.parametrize('cls', ['Metadynamics', 'OPES'])
def test_reading_a_copied_cv_says_what_to_call(cls):
    """A variable's force is copied into the bias force: reading it from the Context says so and names
    what to call instead (issue 41 item 7); the object's own reading works."""
    from openmmcoordination import OPES
    system, topology = toy_system()
    force = toy_cv()
    variables = [BiasVariable(force, 0.0, 2.0, 0.1, gridWidth=41)]
    if cls == 'Metadynamics':
        meta = Metadynamics(system, variables, 300, 5.0, 1.0, 10)
    else:
        meta = OPES(system, variables, 300, 20.0, 10, sigma=0.1)
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001),
                                       openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(toy_positions())
    with pytest.raises(openmm.OpenMMException) as error:
        force.getCollectiveVariableValue(simulation.context)
    message = str(error.value)
    assert message.startswith('CoordinationForce.getCollectiveVariableValue: this force is variables[0].force of a %s, '
                              'which added a copy of it to the System' % cls)
    assert 'Call its getCollectiveVariables(simulation), or its force.getCollectiveVariableValues(context)' in message
    # the plugin's own words since 5ba52a1 (OpenMM's before it), kept at the end
    assert 'This Force is not present in the Context' in message or "this force is not in the Context's System" in message
    value = meta.getCollectiveVariables(simulation)[0]
    assert value == pytest.approx(meta.force.getCollectiveVariableValues(simulation.context)[0]) and value > 0.1
    with pytest.raises(openmm.OpenMMException, match='force.getCollectiveVariable\\(0\\) of the %s' % cls):
        force.updateParametersInContext(simulation.context)


@pytest.mark.parametrize('cls', ['Metadynamics', 'OPES'])
def test_variable_outside_its_grid_is_said_once(cls):
    """A variable read outside its grid (the toy CV, above 1, on a grid of [0, 0.5]) feels no bias force there:
    a RuntimeWarning says so once, naming the class, the variable, its value, the step and the grid; none
    inside the grid."""
    import warnings
    from openmmcoordination import OPES

    def run(maxValue):
        system, topology = toy_system()
        variables = [BiasVariable(toy_cv(), 0.0, maxValue, 0.1, gridWidth=41)]
        meta = (Metadynamics(system, variables, 300, 5.0, 1.0, 10) if cls == 'Metadynamics' else
                OPES(system, variables, 300, 20.0, 10, sigma=0.1))
        simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001),
                                           openmm.Platform.getPlatformByName('Reference'))
        simulation.context.setPositions(toy_positions())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            meta.step(simulation, 30)
        cv = meta.getCollectiveVariables(simulation)[0]
        return [str(w.message) for w in caught if 'outside its grid' in str(w.message)], cv

    said, cv = run(0.5)
    assert cv > 1.0
    assert len(said) == 1
    assert re.match(r'^%s: variables\[0\] is [0-9.]+ at step 10, outside its grid \[0, 0.5\]: beyond the grid the '
                    r'variable feels no bias force' % cls, said[0]), said[0]
    assert run(2.0)[0] == []


@pytest.mark.parametrize('cls', ['Metadynamics', 'OPES'])
def test_step_takes_a_simulation_and_whole_steps(cls):
    """step(simulation, steps) refuses what is not a whole number of steps (2.5 was 2 steps, silently) and a
    Context in place of the Simulation (an AttributeError from inside), naming the class, the parameter and
    the value; step(0) and step(-5) do nothing, as Simulation.step() and openmm.app's."""
    from openmmcoordination import OPES
    system, topology = toy_system()
    variables = [BiasVariable(toy_cv(), 0.0, 2.0, 0.1, gridWidth=41)]
    meta = (Metadynamics(system, variables, 300, 5.0, 1.0, 10) if cls == 'Metadynamics' else
            OPES(system, variables, 300, 20.0, 10, sigma=0.1))
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001),
                                       openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(toy_positions())
    for steps in (2.5, '5', None, True):
        with pytest.raises(ValueError, match=r'^%s: step: steps must be an integer, got %s$' % (cls, re.escape(repr(steps)))):
            meta.step(simulation, steps)
    assert simulation.currentStep == 0
    for method, call in (('step', lambda: meta.step(simulation.context, 10)),
                         ('getCollectiveVariables', lambda: meta.getCollectiveVariables(simulation.context)),
                         ('saveCheckpoint', lambda: meta.saveCheckpoint(simulation.context, 'unused.chk'))):
        with pytest.raises(ValueError, match=r'^%s: %s: simulation must be an openmm.app.Simulation, got Context \(give '
                                             r'the Simulation, not its Context\)$' % (cls, method)):
            call()
    assert not os.path.exists('unused.chk')
    meta.step(simulation, 0)
    meta.step(simulation, -5)
    assert simulation.currentStep == 0
    meta.step(simulation, np.int64(10))
    assert simulation.currentStep == 10


@pytest.mark.parametrize('cls', ['Metadynamics', 'OPES'])
def test_simulation_created_before_the_sampler(cls):
    """A Simulation created before the sampler has no bias force in its Context: step() says so and what
    to do before it runs a step (it ran the first steps unbiased, then raised OpenMM's bare 'This Force
    is not present in the Context'); after reinitialize(preserveState=True) it runs."""
    from openmmcoordination import OPES
    system, topology = toy_system()
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001),
                                       openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(toy_positions())
    variables = [BiasVariable(toy_cv(), 0.0, 2.0, 0.1, gridWidth=41)]
    meta = (Metadynamics(system, variables, 300, 5.0, 1.0, 10) if cls == 'Metadynamics' else
            OPES(system, variables, 300, 20.0, 10, sigma=0.1))
    message = (r"^%s: the Simulation's Context has no bias force: it was created before the %s, which added the force "
               r"to the System; create the Simulation after it, or call simulation.context.reinitialize\(preserveState=True\)"
               % (cls, cls))
    for call in (lambda: meta.step(simulation, 20), lambda: meta.getCollectiveVariables(simulation)):
        with pytest.raises(openmm.OpenMMException, match=message):
            call()
    assert simulation.currentStep == 0
    simulation.context.reinitialize(preserveState=True)
    meta.step(simulation, 20)
    assert simulation.currentStep == 20
