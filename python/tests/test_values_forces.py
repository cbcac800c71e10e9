"""The CV (energy) and forces of a Context against the NumPy reference: every switching type x
every cutoff variant x every mode x (no box, rectangular, triclinic), on every platform; and the
forces against finite differences of the platform's own energy.

The three modes of a (type, cutoff, box) are three forces of one Context, on the same particles,
in force groups 0, 1 and 2, each evaluated alone: a third of the Contexts (each costs a device
context on a GPU), the same comparisons."""

import pytest

from cases import BOXES, CUTOFFS, MODES, TYPE_PARAMETERS, make_case, make_cases, make_switching
from helpers import assert_close, energy_and_forces, finite_difference_forces, set_state


@pytest.mark.parametrize('box', BOXES)
@pytest.mark.parametrize('cutoff', sorted(CUTOFFS))
@pytest.mark.parametrize('type_name', sorted(TYPE_PARAMETERS))
def test_value_and_forces_match_numpy(platform_config, rng, type_name, cutoff, box):
    cases = make_cases(rng, make_switching(type_name, cutoff), MODES, box)
    context = platform_config.context(cases[0].system)
    set_state(context, cases[0].positions, cases[0].box)
    for group, (mode, case) in enumerate(zip(MODES, cases)):
        energy, forces = energy_and_forces(context, groups=1 << group)
        expected_energy, expected_forces, expected_cv = case.expected()
        assert case.num_switching_pairs() >= 5, mode   # the configuration does exercise the switching function
        assert_close(energy, expected_energy, platform_config.value_rtol, 'energy, mode ' + mode)
        assert_close(forces, expected_forces, platform_config.force_rtol, 'forces, mode ' + mode)
        cv = case.force.getCollectiveVariableValue(context)
        assert_close(cv, expected_cv, platform_config.value_rtol, 'getCollectiveVariableValue, mode ' + mode)


@pytest.mark.parametrize('box', BOXES)
@pytest.mark.parametrize('type_name', sorted(TYPE_PARAMETERS))
def test_forces_match_finite_differences(platform_config, rng, type_name, box):
    # Difference only particles whose pairs keep away from the kinks of the energy (r = d0, dmax,
    # and with periodic boxes the surfaces where the nearest image changes): in a small periodic
    # box with a long-ranged s, pairs often lie within a float-sized step (1e-3 nm) of an image kink.
    for attempt in range(20):
        case = make_case(rng, make_switching(type_name, 'd0'), 'two', box, num_particles=16, size=0.9)
        candidates = sorted(set(case.i) | set(case.j))
        particles = [p for p in candidates if case.distance_to_kinks([p]) > 50*platform_config.fd_step][:6]
        if len(particles) >= 2:
            break
    assert len(particles) >= 2, 'no particle away from the kinks of the energy'
    context = platform_config.context(case.system)
    set_state(context, case.positions, case.box)
    _, forces = energy_and_forces(context)
    numeric = finite_difference_forces(context, case.positions, particles, platform_config.fd_step, case.box)
    assert abs(forces[particles]).max() > 1e-3
    assert_close(forces[particles], numeric[particles], platform_config.fd_rtol, 'forces vs finite differences')


def test_many_pairs_larger_system(platform_config, rng):
    """A few hundred particles in a triclinic box (PLUMED's default switching function), the three
    modes in force groups 0, 1 and 2 of one Context."""
    cases = make_cases(rng, make_switching('RATIONAL'), MODES, 'triclinic', num_particles=300, size=3.0)
    context = platform_config.context(cases[0].system)
    set_state(context, cases[0].positions, cases[0].box)
    for group, (mode, case) in enumerate(zip(MODES, cases)):
        energy, forces = energy_and_forces(context, groups=1 << group)
        expected_energy, expected_forces, _ = case.expected()
        assert_close(energy, expected_energy, platform_config.value_rtol, 'energy, mode ' + mode)
        assert_close(forces, expected_forces, platform_config.force_rtol, 'forces, mode ' + mode)
