"""g(r) and n(r) from the force's pair histogram: normalization (one group, two groups, pair list),
the ideal gas, minimum image correction, accumulation on the platform, first minimum, CSV."""

import math

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationForce
from openmmcoordination.gr import (PairDistribution, PairDistributionAccumulator, addHistogramForce,
                                   computePairDistribution, pairDistributionFromCounts, shellVolumes)

from gr_helpers import gas_system, uniform_positions

CUBE = np.eye(3)*2.0
# A reduced triclinic box (rhombic dodecahedron, xy-square) as OpenMM writes it
DODECAHEDRON = np.array([[2.0, 0, 0], [0, 2.0, 0], [1.0, 1.0, math.sqrt(2.0)]])


def ideal_gas(platform_config, rng, box, make_force, frames=20, num_particles=150, numBins=40, maxDistance=None):
    system = gas_system(num_particles, box)
    force = make_force()
    force.setUsesPeriodicBoundaryConditions(True)
    system.addForce(force)
    context = platform_config.context(system)
    if maxDistance is None:
        maxDistance = 0.999*math.sqrt(3.0)  # beyond half the box: the corrected range
    accumulator = PairDistributionAccumulator(force, numBins, maxDistance)
    for _ in range(frames):
        context.setPositions(uniform_positions(rng, num_particles, box))
        accumulator.add(context)
    return accumulator.getResult(context), force, context


def assert_one_within_error(gr, sigmas=5.0):
    """g = 1 within statistical error in every bin with a volume: the expected count per bin is
    frames P V_k/V, the counts nearly Poisson."""
    expected = gr.numFrames*gr.numPairs*gr.shellVolume/gr.volume
    ok = np.isfinite(gr.g) & (expected > 20)
    assert ok.sum() > 10
    sigma = 1.0/np.sqrt(expected[ok])
    deviation = np.abs(gr.g[ok] - 1.0)/sigma
    assert np.all(deviation < sigmas), (gr.r[ok][deviation >= sigmas], gr.g[ok][deviation >= sigmas])
    # and on average: the weighted mean of g is 1 to a fraction of a percent
    assert abs(np.average(gr.g[ok], weights=expected[ok]) - 1.0) < 5.0/np.sqrt(expected[ok].sum())


def test_ideal_gas_one_group(platform_config, rng):
    gr, force, _ = ideal_gas(platform_config, rng, CUBE, lambda: CoordinationForce(list(range(150))))
    assert gr.mode == 'one group' and gr.numPairs == 150*149//2
    assert gr.validMax == pytest.approx(1.0) and gr.cellMax == pytest.approx(math.sqrt(3.0), rel=2e-3)
    assert_one_within_error(gr)
    # n(r) of an ideal gas: the density times the sphere volume (inside the validity range)
    inside = gr.edges[1:] <= gr.validMax
    np.testing.assert_allclose(gr.n[inside][-5:], gr.density*4/3*np.pi*gr.edges[1:][inside][-5:]**3, rtol=0.05)


def test_ideal_gas_two_overlapping_groups(platform_config, rng):
    """P = N_A N_B - (particles in both groups)."""
    groupA, groupB = list(range(0, 100)), list(range(60, 150))
    gr, force, _ = ideal_gas(platform_config, rng, CUBE, lambda: CoordinationForce(groupA, groupB))
    assert gr.numPairs == 100*90 - 40 == force.getNumPairs()
    assert_one_within_error(gr)


def test_ideal_gas_triclinic_corrected(platform_config, rng):
    gr, _, _ = ideal_gas(platform_config, rng, DODECAHEDRON, lambda: CoordinationForce(list(range(150))),
                         maxDistance=1.5)
    assert gr.validMax == pytest.approx(1.0)
    assert gr.cellMax > 1.2
    assert np.any(np.isfinite(gr.g) & (gr.r > 1.1))
    assert_one_within_error(gr)


def test_uncorrected_shells_fall_beyond_half_box(reference_config, rng):
    gr, force, context = ideal_gas(reference_config, rng, CUBE, lambda: CoordinationForce(list(range(150))))
    plain = pairDistributionFromCounts(force, gr.counts, gr.numFrames, gr.edges[-1], boxVectors=gr.boxVectors,
                                       correct=False)
    inside = gr.edges[1:] <= gr.validMax
    np.testing.assert_array_equal(plain.g[inside], gr.g[inside])
    assert not plain.corrected
    assert np.all(plain.g[gr.r > 1.3] < 0.7)  # the missing corners, not corrected


def test_shell_volumes():
    edges = np.linspace(0, 1.8, 181)
    full, inscribed, cellMax = shellVolumes(edges)
    assert inscribed == math.inf
    np.testing.assert_allclose(full, 4/3*np.pi*np.diff(edges**3))
    volumes, inscribed, cellMax = shellVolumes(edges, CUBE, minFraction=0.0)
    assert inscribed == pytest.approx(1.0) and cellMax == pytest.approx(math.sqrt(3), rel=2e-3)
    np.testing.assert_array_equal(volumes[edges[1:] <= 1.0], full[edges[1:] <= 1.0])
    assert volumes.sum() == pytest.approx(8.0, rel=2e-3)  # the whole cell
    volumes, inscribed, _ = shellVolumes(np.linspace(0, 1.5, 151), DODECAHEDRON, minFraction=0.0)
    assert volumes.sum() == pytest.approx(abs(np.linalg.det(DODECAHEDRON)), rel=2e-3)


def test_normalization_of_each_mode(reference_config, rng):
    """The formulas of the contract, from one set of counts."""
    positions = uniform_positions(rng, 30, CUBE)
    for force, numPairs, reference in [(CoordinationForce(list(range(20))), 190, 10.0),
                                       (CoordinationForce(list(range(10)), list(range(5, 30))), 10*25 - 5, 10.0),
                                       (CoordinationForce([0, 1, 2], [3, 4, 5], True), 3, None)]:
        force.setUsesPeriodicBoundaryConditions(True)
        system = gas_system(30, CUBE)
        system.addForce(force)
        context = reference_config.context(system)
        context.setPositions(positions)
        gr = computePairDistribution(force, context, 20, 1.0)
        counts = force.getPairHistogram(context, 20, 1.0)
        np.testing.assert_array_equal(gr.counts, counts)
        assert gr.numPairs == numPairs and gr.numFrames == 1
        np.testing.assert_allclose(gr.r, (np.arange(20) + 0.5)*0.05)
        np.testing.assert_allclose(gr.width, 0.05)
        shells = 4/3*np.pi*np.diff(gr.edges**3)
        np.testing.assert_allclose(gr.pairsWithin, np.cumsum(counts))
        if reference is None:
            np.testing.assert_allclose(gr.g, counts/(numPairs*0.05))
            np.testing.assert_allclose(gr.n, np.cumsum(counts))
            assert gr.density is None
        else:
            np.testing.assert_allclose(gr.g, counts/numPairs*8.0/shells)
            perA = 2.0/20 if force.getMode() == 0 else 1.0/10
            np.testing.assert_allclose(gr.n, np.cumsum(counts)*perA)
            # n(r) = density * integral of g 4 pi r^2 dr
            np.testing.assert_allclose(gr.n, gr.density*np.cumsum(gr.g*shells), rtol=1e-12)


def test_accumulation_matches_frame_by_frame(platform_config, rng):
    system = gas_system(40, CUBE)
    force = addHistogramForce(system, list(range(10)), list(range(10, 40)), periodic=True)
    context = platform_config.context(system)
    accumulator = PairDistributionAccumulator(force, 25, 1.2)
    total = np.zeros(25, dtype=np.int64)
    for _ in range(7):
        context.setPositions(uniform_positions(rng, 40, CUBE))
        accumulator.add(context)
        total += force.getPairHistogram(context, 25, 1.2)
    gr = accumulator.getResult(context)
    assert gr.numFrames == 7 == accumulator.numFrames
    np.testing.assert_array_equal(gr.counts, total)
    accumulator.reset(context)
    assert accumulator.numFrames == 0 and force.getNumAccumulatedFrames(context) == 0
    with pytest.raises(ValueError):
        accumulator.getResult(context)


def test_volume_is_the_mean_box(reference_config, rng):
    system = gas_system(20, CUBE)
    force = addHistogramForce(system, list(range(20)), periodic=True)
    context = reference_config.context(system)
    accumulator = PairDistributionAccumulator(force, 10, 0.9)
    for edge in (2.0, 2.2):
        context.setPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.eye(3)*edge])
        context.setPositions(uniform_positions(rng, 20, np.eye(3)*edge))
        accumulator.add(context)
    gr = accumulator.getResult(context)
    # the mean of the volumes (as MDAnalysis's InterRDF), not the volume of the mean box, 2.1**3
    assert gr.volume == pytest.approx((2.0**3 + 2.2**3)/2)


def test_non_periodic_needs_a_volume(reference_config, rng):
    system = gas_system(10, CUBE)
    force = addHistogramForce(system, list(range(10)))
    assert not force.usesPeriodicBoundaryConditions()
    context = reference_config.context(system)
    context.setPositions(uniform_positions(rng, 10, CUBE))
    with pytest.raises(ValueError, match='volume'):
        computePairDistribution(force, context, 10, 1.0)
    gr = computePairDistribution(force, context, 10, 1.0, volume=8.0)
    assert gr.volume == 8.0 and gr.validMax == math.inf


def test_histogram_force_observes_only(reference_config, rng):
    """addHistogramForce: energy 0, no force, a group of its own, left out of the integration."""
    system = gas_system(10, CUBE)
    integrator = openmm.VerletIntegrator(0.001)
    force = addHistogramForce(system, [0, 1], [2, 3, 4], integrator=integrator, periodic=True)
    group = force.getForceGroup()
    assert group == 31 and force.getEnergyExpression() == '0'
    assert integrator.getIntegrationForceGroups() & (1 << group) == 0
    assert integrator.getIntegrationForceGroups() & 1 == 1
    context = openmm.Context(system, integrator, openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(uniform_positions(rng, 10, CUBE))
    state = context.getState(getEnergy=True, getForces=True)
    assert state.getPotentialEnergy()._value == 0.0
    assert np.all(state.getForces(asNumpy=True)._value == 0.0)
    assert force.getCollectiveVariableValue(context) > 0


def test_first_minimum_and_peak():
    r = (np.arange(200) + 0.5)*0.005
    g = 1 + 2.5*np.exp(-((r - 0.28)/0.02)**2) - 0.8*np.exp(-((r - 0.36)/0.03)**2)
    counts = np.round(1e6*g*4*np.pi*r**2*0.005).astype(np.int64)
    gr = PairDistribution(np.linspace(0, 1, 201), counts, 1, 'two groups', 10**6, 1, 10**6, volume=1e6)
    assert gr.firstPeak() == pytest.approx(0.28, abs=0.006)
    assert gr.firstMinimum() == pytest.approx(0.364, abs=0.01)
    # a flat bottom: the middle of it
    g2 = np.where((r > 0.3) & (r < 0.4), 0.0, g)
    counts = np.round(1e6*g2*4*np.pi*r**2*0.005).astype(np.int64)
    gr2 = PairDistribution(np.linspace(0, 1, 201), counts, 1, 'two groups', 10**6, 1, 10**6, volume=1e6)
    assert gr2.firstMinimum() == pytest.approx(0.35, abs=0.006)
    assert gr2.coordinationAt(0.0) == 0.0


def test_distances_as_quantities_and_plain_numbers():
    """The getters return Quantities in nm (OpenMM's convention, issue 44) whose values are the
    NumPy bins and the first peak and minimum of test_first_minimum_and_peak, and a cube's volume,
    ranges and density; the names before issue 44 (r, edges, width, firstPeak(), firstMinimum(),
    validMax, cellMax, volume, density) keep the same numbers as plain floats;
    coordinationAt takes a Quantity in any length unit or a number in nm, and refuses anything else."""
    r = (np.arange(200) + 0.5)*0.005
    g = 1 + 2.5*np.exp(-((r - 0.28)/0.02)**2) - 0.8*np.exp(-((r - 0.36)/0.03)**2)
    counts = np.round(1e6*g*4*np.pi*r**2*0.005).astype(np.int64)
    gr = PairDistribution(np.linspace(0, 1, 201), counts, 1, 'two groups', 10**6, 1, 10**6, volume=1e6)
    for getter, plain, expected in ((gr.getBinCenters, gr.r, r), (gr.getBinEdges, gr.edges, np.linspace(0, 1, 201)),
                                    (gr.getBinWidths, gr.width, np.full(200, 0.005))):
        quantity = getter()
        assert unit.is_quantity(quantity) and quantity.unit == unit.nanometer
        np.testing.assert_allclose(quantity.value_in_unit(unit.nanometer), expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(quantity.value_in_unit(unit.angstrom), 10*expected, rtol=1e-12, atol=1e-14)
        assert type(plain) is np.ndarray and np.array_equal(plain, quantity.value_in_unit(unit.nanometer))
        quantity[0] = 5.0*unit.nanometer             # a copy: the PairDistribution is unchanged
        assert plain[0] == expected[0]
    peak, minimum = gr.getFirstPeak(), gr.getFirstMinimum()
    assert unit.is_quantity(peak) and unit.is_quantity(minimum)
    assert peak.value_in_unit(unit.nanometer) == pytest.approx(0.28, abs=0.006)
    assert minimum.value_in_unit(unit.angstrom) == pytest.approx(3.64, abs=0.1)
    assert type(gr.firstPeak()) is float and gr.firstPeak() == peak.value_in_unit(unit.nanometer)
    assert type(gr.firstMinimum()) is float and gr.firstMinimum() == minimum.value_in_unit(unit.nanometer)
    assert gr.getFirstMinimum(smooth=1, rise=0.2).value_in_unit(unit.nanometer) == gr.firstMinimum(smooth=1, rise=0.2)
    # n(r) of two groups: the counts within r per A particle, linear within a bin (NumPy, by hand)
    x = 0.3123
    k = int(x/0.005)
    expected = (counts[:k].sum() + counts[k]*(x - 0.005*k)/0.005)/1.0
    for given in (x, x*unit.nanometer, 10*x*unit.angstrom):
        assert gr.coordinationAt(given) == pytest.approx(expected, rel=1e-12)
    assert type(gr.coordinationAt(minimum)) is float
    assert gr.coordinationAt(minimum) == gr.coordinationAt(gr.firstMinimum())
    for bad, shown in ((3.0*unit.kilojoule_per_mole, '3.0 kJ/mol'), ('near', "'near'"), (float('nan'), 'nan')):
        with pytest.raises(ValueError, match='PairDistribution.coordinationAt: r must be .*%s' % shown):
            gr.coordinationAt(bad)
    # the box's range and volume: a cube of 2 nm, two groups of 10 and 20 (200 pairs)
    assert gr.getVolume() == 1e6*unit.nanometer**3 and gr.getValidMax() == math.inf*unit.nanometer
    boxed = PairDistribution(np.linspace(0, 1.5, 31), np.ones(30, dtype=np.int64), 1, 'two groups', 200, 10, 20,
                             boxVectors=CUBE)
    assert boxed.getVolume().value_in_unit(unit.angstrom**3) == pytest.approx(8000.0, rel=1e-12)
    assert boxed.getValidMax().value_in_unit(unit.nanometer) == pytest.approx(1.0, rel=1e-12)
    assert boxed.getCellMax().value_in_unit(unit.nanometer) == pytest.approx(math.sqrt(3.0), rel=2e-3)
    assert boxed.getDensity().value_in_unit(unit.nanometer**-3) == pytest.approx(200/(10*8.0), rel=1e-12)
    assert (boxed.volume, boxed.validMax, boxed.cellMax, boxed.density) == (
        boxed.getVolume().value_in_unit(unit.nanometer**3), boxed.getValidMax().value_in_unit(unit.nanometer),
        boxed.getCellMax().value_in_unit(unit.nanometer), boxed.getDensity().value_in_unit(unit.nanometer**-3))
    pairs = PairDistribution(np.linspace(0, 1, 11), np.ones(10, dtype=np.int64), 1, 'pair list', 10, 10, 10)
    assert pairs.getVolume() is None and pairs.getDensity() is None


def test_csv_round_trip(reference_config, rng, tmp_path):
    gr, force, _ = ideal_gas(reference_config, rng, DODECAHEDRON, lambda: CoordinationForce(list(range(50)), list(range(50, 150))),
                             frames=3, maxDistance=1.4)
    path = tmp_path/'gr.csv'
    gr.writeCSV(str(path))
    text = path.read_text().splitlines()
    assert text[0].startswith('#') and 'r_nm,r_low_nm,width_nm,g,n,pairs_within,counts' in text
    back = PairDistribution.readCSV(str(path))
    np.testing.assert_array_equal(back.counts, gr.counts)
    np.testing.assert_allclose(back.edges, gr.edges, rtol=1e-8)
    np.testing.assert_allclose(back.g, gr.g, rtol=1e-7, equal_nan=True)
    np.testing.assert_allclose(back.n, gr.n, rtol=1e-12)
    assert (back.mode, back.numFrames, back.numPairs, back.numA, back.numB) == (gr.mode, 3, 5000, 50, 100)
    assert back.volume == pytest.approx(gr.volume) and back.validMax == pytest.approx(gr.validMax)


def test_errors():
    with pytest.raises(ValueError, match='edges'):
        PairDistribution(np.linspace(0, 1, 5), np.zeros(5), 1, 'one group', 1, 2, 2, volume=1.0)
    with pytest.raises(ValueError, match='frames'):
        PairDistribution(np.linspace(0, 1, 6), np.zeros(5), 0, 'one group', 1, 2, 2, volume=1.0)


def test_histogram_arguments(reference_config, rng):
    """numBins, maxDistance and volume are checked when the accumulator is made (a reporter's before the
    run), naming the class or function, the parameter and the value; maxDistance in Angstrom is nm/10."""
    force = CoordinationForce([0, 1])
    for numBins, maxDistance, volume, message in ((0, 1.0, None, 'numBins must be an integer from 1 to MaxHistogramBins'),
                                                  (2.5, 1.0, None, 'numBins .*got 2.5'),
                                                  (10, 0.0, None, 'maxDistance must be positive, got 0.0'),
                                                  (10, 1*unit.kilojoule_per_mole, None, 'maxDistance .*got 1 kJ/mol'),
                                                  (10, 1.0, -2.0, 'volume must be positive and finite, got -2.0')):
        with pytest.raises(ValueError, match='PairDistributionAccumulator: ' + message):
            PairDistributionAccumulator(force, numBins, maxDistance, volume)
    system = gas_system(10, CUBE)
    force = addHistogramForce(system, list(range(10)), periodic=True)
    context = reference_config.context(system)
    context.setPositions(uniform_positions(rng, 10, CUBE))
    with pytest.raises(ValueError, match='computePairDistribution: numBins .*got -3'):
        computePairDistribution(force, context, -3, 1.0)
    accumulator = PairDistributionAccumulator(force, 10, 9*unit.angstrom)
    assert accumulator.maxDistance == pytest.approx(0.9, rel=1e-12)
    np.testing.assert_array_equal(computePairDistribution(force, context, 10, 9*unit.angstrom).counts,
                                  computePairDistribution(force, context, 10, 0.9).counts)


def test_no_number_outside_the_data(tmp_path):
    """What the histogram does not hold is refused, naming the method, the parameter and the value: n(r)
    beyond the last edge (interpolation would repeat n at the last edge), the first minimum and peak of a
    histogram without pairs (it would be the middle of the range), a volume that is not positive, a
    force without pairs, a file that is not a g(r) table."""
    counts = np.array([0, 3, 5, 2], dtype=np.int64)
    gr = PairDistribution(np.linspace(0, 0.8, 5), counts, 2, 'two groups', 20, 4, 5, volume=8.0)
    np.testing.assert_allclose([gr.coordinationAt(x) for x in (0.0, 0.3, 0.8)],
                               [0.0, (0 + 3*0.5)/(2*4), 10/(2*4)], rtol=1e-12)
    assert gr.coordinationAt(8*unit.angstrom) == pytest.approx(10/(2*4), rel=1e-12)
    for bad, shown in ((0.81, '0.81'), (1.2*unit.nanometer, '1.2 nm'), (-0.1, '-0.1')):
        with pytest.raises(ValueError, match=r'PairDistribution.coordinationAt: r must be within the histogram, 0 to 0.8 '
                           r'nm, got %s' % shown):
            gr.coordinationAt(bad)
    empty = PairDistribution(np.linspace(0, 0.8, 5), np.zeros(4, dtype=np.int64), 2, 'two groups', 20, 4, 5, volume=8.0)
    for method in ('firstMinimum', 'firstPeak'):
        with pytest.raises(ValueError, match='PairDistribution.%s: g.r. has no pair below 0.8 nm' % method):
            getattr(empty, method)()
    with pytest.raises(ValueError, match='PairDistribution.firstMinimum: g.r. has no pair'):
        empty.getFirstMinimum()
    for volume, shown in ((0, '0'), (-8.0, '-8.0'), (-1*unit.nanometer**3, '-1 nm')):
        with pytest.raises(ValueError, match='PairDistribution: volume must be positive and finite, got %s' % shown):
            PairDistribution(np.linspace(0, 0.8, 5), counts, 2, 'two groups', 20, 4, 5, volume=volume)
    with pytest.raises(ValueError, match='PairDistribution: numPairs must be positive, got 0'):
        PairDistribution(np.linspace(0, 0.8, 5), counts, 2, 'one group', 0, 1, 1, volume=8.0)
    other = tmp_path/'cv.csv'
    other.write_text('step,time_ps,cv\n10,0.02,4.5\n')
    with pytest.raises(ValueError, match="PairDistribution.readCSV: '.*cv.csv' is not a table of g.r. written by writeCSV"):
        PairDistribution.readCSV(str(other))


def test_accumulator_follows_a_reinitialized_context(reference_config, rng):
    system = gas_system(20, CUBE)
    force = addHistogramForce(system, list(range(20)), periodic=True)
    context = reference_config.context(system)
    accumulator = PairDistributionAccumulator(force, 10, 0.9)
    for _ in range(3):
        context.setPositions(uniform_positions(rng, 20, CUBE))
        accumulator.add(context)
    context.reinitialize(preserveState=True)
    context.setPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.eye(3)*2.5])
    accumulator.add(context)
    gr = accumulator.getResult(context)
    assert gr.numFrames == 1 == accumulator.numFrames
    assert gr.volume == pytest.approx(2.5**3)
