"""Pair-distance histograms: exact integer counts against NumPy for every mode and box, and the
accumulate / read / frames / reset API."""

import numpy as np
import pytest

import reference_impl as ref
from cases import BOXES, MODES, make_case, make_cases, make_switching
from helpers import set_state


def check_counts(config, counts, positions, case, bins, rmax):
    """Counts against NumPy: exactly on double-precision platforms; within the bin-edge ambiguity
    of float distances otherwise."""
    if config.is_double:
        np.testing.assert_array_equal(counts, ref.pair_histogram(positions, case.i, case.j, bins, rmax, case.box))
    else:
        lowest, highest = ref.pair_histogram_bounds(positions, case.i, case.j, bins, rmax, case.box, 1e-6)
        assert np.all(lowest <= counts) and np.all(counts <= highest)


@pytest.mark.parametrize('box', BOXES)
def test_counts_match_numpy(platform_config, rng, box):
    """The three modes as three forces of one Context (force groups 0, 1 and 2), each one's counts."""
    cases = make_cases(rng, make_switching('RATIONAL'), MODES, box, num_particles=60, size=1.6)
    context = platform_config.context(cases[0].system)
    set_state(context, cases[0].positions, cases[0].box)
    for mode, case in zip(MODES, cases):
        for bins, rmax in ((50, 1.2), (7, 0.8), (1, 3.0), (200, 2.5)):
            counts = case.force.getPairHistogram(context, bins, rmax)
            expected = ref.pair_histogram(case.positions, case.i, case.j, bins, rmax, case.box)
            assert isinstance(counts, np.ndarray) and counts.dtype == np.int64 and counts.shape == (bins,), mode
            assert expected.sum() > 0, mode
            check_counts(platform_config, counts, case.positions, case, bins, rmax)
        total = case.force.getPairHistogram(context, 10, 100.0).sum()
        assert total == len(case.i) == case.force.getNumPairs(), mode


def test_counts_at_bin_edges(platform_config):
    """k*dr <= r < (k+1)*dr, r >= rmax not counted (distances chosen exactly representable)."""
    from openmmcoordination import CoordinationForce
    from helpers import make_system
    force = CoordinationForce([0], [1, 2, 3, 4, 5])
    system = make_system(6)
    system.addForce(force)
    context = platform_config.context(system)
    context.setPositions([[0, 0, 0], [0.25, 0, 0], [0, 0.5, 0], [0, 0, 0.75], [1.0, 0, 0], [0, 0.125, 0]])
    counts = force.getPairHistogram(context, 4, 1.0)
    # distances 0.125 | 0.25 | 0.5 | 0.75 | 1.0 (not counted: r >= rmax)
    assert counts.tolist() == [1, 1, 1, 1]
    assert force.getPairHistogram(context, 8, 1.0).tolist() == [0, 1, 1, 0, 1, 0, 1, 0]


def test_accumulate_read_frames_reset(platform_config, rng):
    case = make_case(rng, make_switching('RATIONAL'), 'two', 'triclinic', num_particles=40, size=1.5)
    context = platform_config.context(case.system)
    f = case.force
    assert f.getNumAccumulatedFrames(context) == 0
    assert len(f.getAccumulatedPairHistogram(context)) == 0
    total = np.zeros(30, dtype=np.int64)
    for frame in range(4):
        positions = case.positions + rng.normal(0, 0.2, case.positions.shape)
        set_state(context, positions, case.box)
        f.accumulatePairHistogram(context, 30, 1.1)
        frame_counts = f.getPairHistogram(context, 30, 1.1)
        check_counts(platform_config, frame_counts, positions, case, 30, 1.1)
        total += frame_counts
        assert f.getNumAccumulatedFrames(context) == frame + 1
        np.testing.assert_array_equal(f.getAccumulatedPairHistogram(context), total)
    assert total.sum() > 0
    # reading the single-frame histogram does not disturb the running one
    f.getPairHistogram(context, 5, 0.5)
    np.testing.assert_array_equal(f.getAccumulatedPairHistogram(context), total)
    f.resetPairHistogram(context)
    assert f.getNumAccumulatedFrames(context) == 0
    assert len(f.getAccumulatedPairHistogram(context)) == 0
    f.accumulatePairHistogram(context, 30, 1.1)
    np.testing.assert_array_equal(f.getAccumulatedPairHistogram(context), f.getPairHistogram(context, 30, 1.1))
    check_counts(platform_config, f.getAccumulatedPairHistogram(context), positions, case, 30, 1.1)
    assert f.getNumAccumulatedFrames(context) == 1


def test_histogram_while_simulating(platform_config, rng):
    """Accumulating every few steps of a simulation equals the sum of the frames' histograms."""
    import openmm
    case = make_case(rng, make_switching('RATIONAL'), 'one', 'rectangular', num_particles=30, size=1.5)
    integrator = openmm.VerletIntegrator(0.002)
    context = platform_config.context(case.system, integrator)
    set_state(context, case.positions, case.box)
    context.setVelocitiesToTemperature(300, 1)
    total = np.zeros(20, dtype=np.int64)
    for _ in range(3):
        integrator.step(5)
        case.force.accumulatePairHistogram(context, 20, 1.0)
        positions = context.getState(getPositions=True).getPositions(asNumpy=True)._value
        frame_counts = case.force.getPairHistogram(context, 20, 1.0)
        check_counts(platform_config, frame_counts, positions, case, 20, 1.0)
        total += frame_counts
    np.testing.assert_array_equal(case.force.getAccumulatedPairHistogram(context), total)
