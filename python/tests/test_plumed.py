"""PLUMED equivalence.

Acceptance point: a user who copies `COORDINATION GROUPA=... GROUPB=... R_0=0.3 NN=6 MM=12` from
PLUMED and writes the equivalent CoordinationForce gets the same value and forces, to 1e-10
relative on Reference.

PLUMED itself cannot be installed here, so the evidence is twofold:
1. numbers transcribed from PLUMED's own regression test regtest/basic/rt-make-switch (the
   out_<name>.reference files: s and dfunc = (ds/dr)/r of each switching function at r = 0, 0.4,
   ..., 3.6, printed with 6 decimals; main.cpp of that regtest lists the definitions);
2. plumed_mirror.py, a restatement of PLUMED's algorithm (SwitchingFunction.cpp,
   CoordinationBase.cpp, Coordination.cpp) with its own dmax/stretch/fast-rational paths, against
   which values and forces must agree to the platform's tolerance (1e-10 on Reference and CPU).

The one deliberate deviation: at x = 1 exactly, RATIONAL with m != 2n gives the limit n/m, where
PLUMED's integer division n/m gives 0 (for n < m).
"""

import math

import numpy as np
import pytest

from openmmcoordination import CoordinationForce

import plumed_mirror as plumed
import reference_impl as ref
from helpers import assert_close, energy_and_forces, make_system, random_positions, set_state

# ----- 1. regtest/basic/rt-make-switch (PLUMED 2): transcribed numbers -----

# r = i/2.5 for i = 0..9, as in that regtest's main.cpp
REGTEST_POINTS = [0.0, 0.4, 0.8, 1.2, 1.6, 2.0, 2.4, 2.8, 3.2, 3.6]
ZEROS3 = [0.0, 0.0, 0.0]

# name: (PLUMED definition, plugin settings, values, dfunc) with values and dfunc from
# regtest/basic/rt-make-switch/out_<name>.reference (6 decimals as PLUMED printed them).
REGTEST = {
    'cosinus': ('COSINUS R_0=2.6', dict(type='COSINUS', r0=2.6),
                [1.0, 0.942728, 0.784032, 0.560268, 0.322698, 0.125745, 0.014529] + ZEROS3,
                [0.0, -0.701909, -0.621510, -0.499790, -0.353058, -0.200314, -0.060243] + ZEROS3),
    'exp': ('EXP R_0=0.8 D_0=0.5 D_MAX=2.6', dict(type='EXP', r0=0.8, d0=0.5, dmax=2.6),
            [1.0, 1.0, 0.662867, 0.371321, 0.194489, 0.087234, 0.022182] + ZEROS3,
            [0.0, 0.0, -1.157757, -0.468143, -0.212958, -0.103332, -0.052228] + ZEROS3),
    'gaussian': ('GAUSSIAN R_0=1.0 D_0=0.3 D_MAX=2.6', dict(type='GAUSSIAN', r0=1.0, d0=0.3, dmax=2.6),
                 [1.0, 0.994631, 0.873516, 0.641523, 0.385957, 0.177332, 0.042245] + ZEROS3,
                 [0.0, -0.267766, -0.593718, -0.538467, -0.375691, -0.215700, -0.103843] + ZEROS3),
    'fastrational': ('RATIONAL R_0=1.3 NN=6 MM=10 D_MAX=2.6', dict(type='RATIONAL', r0=1.3, n=6, m=10, dmax=2.6),
                     [1.0, 0.999104, 0.950037, 0.672132, 0.312593, 0.112650, 0.023987] + ZEROS3,
                     [0.0, -0.033405, -0.422254, -0.809075, -0.444722, -0.162544, -0.060151] + ZEROS3),
    'fastrational_NNeq2MM': ('RATIONAL R_0=1.3 D_MAX=2.6', dict(type='RATIONAL', r0=1.3, dmax=2.6),
                             [1.0, 0.999139, 0.947683, 0.611837, 0.211288, 0.055601, 0.009395] + ZEROS3,
                             [0.0, -0.032265, -0.465209, -0.999211, -0.413005, -0.099346, -0.025421] + ZEROS3),
    'rational': ('RATIONAL R_0=1.3 NN=5 MM=11 D_MAX=2.6', dict(type='RATIONAL', r0=1.3, n=5, m=11, dmax=2.6),
                 [1.0, 0.997202, 0.914848, 0.556690, 0.194710, 0.052914, 0.009102] + ZEROS3,
                 [0.0, -0.087348, -0.626455, -0.941310, -0.369840, -0.092889, -0.024515] + ZEROS3),
    'rational_nostretch': ('RATIONAL R_0=1.3 NN=5 MM=11 D_MAX=2.6 NOSTRETCH',
                           dict(type='RATIONAL', r0=1.3, n=5, m=11, dmax=2.6, stretch=False),
                           [1.0, 0.997244, 0.916137, 0.563403, 0.206906, 0.067257, 0.024108] + ZEROS3,
                           [0.0, -0.086025, -0.616968, -0.927055, -0.364239, -0.091483, -0.024144] + ZEROS3),
    'rational_NNeq2MM': ('RATIONAL R_0=1.3 NN=5 D_MAX=2.6', dict(type='RATIONAL', r0=1.3, n=5, dmax=2.6),
                         [1.0, 0.997164, 0.916369, 0.586200, 0.238420, 0.075965, 0.014694] + ZEROS3,
                         [0.0, -0.088390, -0.600381, -0.860272, -0.388968, -0.120085, -0.038105] + ZEROS3),
    'tanh': ('TANH R_0=1.3 D_MAX=2.6', dict(type='TANH', r0=1.3, dmax=2.6),
             [1.0, 0.690531, 0.431649, 0.245509, 0.125749, 0.054113, 0.013117] + ZEROS3,
             [0.0, -1.817287, -0.697992, -0.313164, -0.144468, -0.067229, -0.031542] + ZEROS3),
    'smap': ('SMAP R_0=1.3 A=3 B=2 D_MAX=2.6', dict(type='SMAP', r0=1.3, a=3, b=2, dmax=2.6),
             [1.0, 0.959520, 0.749150, 0.466716, 0.252301, 0.115959, 0.030514] + ZEROS3,
             [0.0, -0.726923, -0.877324, -0.538373, -0.267445, -0.133200, -0.070589] + ZEROS3),
    'cubic': ('CUBIC D_MAX=2.6 D_0=0.6', dict(type='CUBIC', d0=0.6, dmax=2.6),
              [1.0, 1.0, 0.972, 0.784, 0.5, 0.216, 0.028] + ZEROS3,
              [0.0, 0.0, -0.3375, -0.525, -0.46875, -0.315, -0.1125] + ZEROS3),
}


@pytest.mark.parametrize('name', sorted(REGTEST))
def test_plumed_regtest_switching_functions(name):
    definition, settings, values, dfunc = REGTEST[name]
    r = np.array(REGTEST_POINTS)
    expected_dsdr = np.array(dfunc)*r   # PLUMED prints (ds/dr)/r
    force = ref.Switching(**settings).configure(CoordinationForce([0, 1]))
    evaluated = np.array([force.evaluateSwitchingFunction(x) for x in r])
    # 6 printed decimals: half a unit of the last place, times r for the derivative
    np.testing.assert_allclose(evaluated[:, 0], values, rtol=0, atol=5.01e-7, err_msg=definition)
    assert np.all(np.abs(evaluated[:, 1] - expected_dsdr) <= 5.01e-7*r + 1e-12), (definition, evaluated[:, 1])
    # the NumPy reference agrees with PLUMED's numbers too
    s, dsdr = ref.Switching(**settings)(r)
    np.testing.assert_allclose(s, values, rtol=0, atol=5.01e-7, err_msg=definition)
    assert np.all(np.abs(dsdr - expected_dsdr) <= 5.01e-7*r + 1e-12), (definition, dsdr)


def mirror_of(settings):
    """The mirror's SWITCH={...} for the plugin settings of a REGTEST entry (n, m and stretch are
    PLUMED's NN, MM and NOSTRETCH)."""
    keywords = {{'n': 'nn', 'm': 'mm'}.get(key, key): value for key, value in settings.items()
                if key not in ('type', 'stretch')}
    return plumed.PlumedSwitch.switch(settings['type'], nostretch=not settings.get('stretch', True), **keywords)


def test_plumed_mirror_reproduces_the_regtest():
    """The mirror of PLUMED's algorithm is checked against PLUMED's own output too."""
    for name, (_, settings, values, dfunc) in sorted(REGTEST.items()):
        sw = mirror_of(settings)
        for r, v, d in zip(REGTEST_POINTS, values, dfunc):
            s, df = sw.calculate(r)
            assert abs(s - v) <= 5.01e-7 and abs(df - d) <= 5.01e-7, (name, r)
            s2, df2 = sw.calculate_sqr(r*r)
            assert s2 == pytest.approx(s, abs=1e-13) and df2 == pytest.approx(df, abs=1e-12), (name, r)


# ----- 2. the same CV as PLUMED's algorithm, to 1e-10 -----

def plumed_system(rng, box_kind, num_particles=45, size=1.5):
    box = None if box_kind == 'NOPBC' else ref.reduced_box(rng, box_kind == 'triclinic', size)
    positions = random_positions(rng, num_particles, box, size)
    return box, positions


def groups_for(rng, mode, positions, box):
    num_particles = len(positions)
    perm = rng.permutation(num_particles).tolist()
    if mode == 'GROUPA':
        return perm[:30], []
    if mode == 'GROUPA+GROUPB':
        return perm[:12], perm[8:]          # overlapping: PLUMED skips the self pairs, as we do
    # PAIR: each particle of A with one of its six nearest neighbours, so the pairs sample the
    # switching region
    i, j = ref.pairs('two', range(num_particles), range(num_particles))
    r = ref.distances(positions, i, j, box).reshape(num_particles, num_particles - 1)
    a = rng.integers(0, num_particles, 40)
    b = [int(j.reshape(num_particles, num_particles - 1)[x, np.argsort(r[x])[rng.integers(0, 6)]]) for x in a]
    return a.tolist(), b


def plugin_force(mode, groupA, groupB, box):
    if mode == 'GROUPA':
        force = CoordinationForce(groupA)
    else:
        force = CoordinationForce(groupA, groupB, mode == 'PAIR')
    force.setUsesPeriodicBoundaryConditions(box is not None)
    return force


def near_plumeds_cancellation(switch, positions, groupA, groupB, pair, box):
    """True if a pair has |x - 1| < 1e-3 for RATIONAL with m != 2n: there PLUMED's direct form
    (1 - x^n)/(1 - x^m) loses accuracy (derivative error ~eps/(x-1)^2: 1e-9 at 1e-4), ours does
    not (see test_plumed_loses_digits_near_x_equal_1), so such configurations cannot be compared
    at 1e-10 and are redrawn."""
    if switch.type != 'RATIONAL' or 2*switch.nn == switch.mm:
        return False
    if not groupB:
        i, j = ref.pairs('one', groupA)
    else:
        i, j = ref.pairs('pairs' if pair else 'two', groupA, groupB)
    x = (ref.distances(positions, i, j, box) - switch.d0)*switch.invr0
    return bool(np.any(np.abs(x - 1) < 1e-3))


PLUMED_MODES = ('GROUPA+GROUPB', 'GROUPA', 'PAIR')


def compare_with_plumed(config, rng, box_kind, configure, mirror_switch):
    """The three modes (PLUMED_MODES) on the same positions, as three forces of one Context in
    force groups 0, 1 and 2, each evaluated alone against the mirror of PLUMED's algorithm.
    Positions are redrawn while any mode has a pair near PLUMED's cancellation."""
    for attempt in range(20):
        box, positions = plumed_system(rng, box_kind)
        groups = [groups_for(rng, mode, positions, box) for mode in PLUMED_MODES]
        if not any(near_plumeds_cancellation(mirror_switch, positions, groupA, groupB, mode == 'PAIR', box)
                   for mode, (groupA, groupB) in zip(PLUMED_MODES, groups)):
            break
    system = make_system(len(positions), box)
    plugin_forces = []
    for group, (mode, (groupA, groupB)) in enumerate(zip(PLUMED_MODES, groups)):
        force = plugin_force(mode, groupA, groupB, box)
        configure(force)
        force.setForceGroup(group)
        system.addForce(force)
        plugin_forces.append(force)
    context = config.context(system)
    set_state(context, positions, box)
    for group, (mode, (groupA, groupB), force) in enumerate(zip(PLUMED_MODES, groups, plugin_forces)):
        energy, forces = energy_and_forces(context, groups=1 << group)
        value, derivatives = plumed.coordination(positions, mirror_switch, groupA, groupB, mode == 'PAIR', box)
        assert value > 0.05 and np.abs(derivatives).max() > 0.05, mode   # the pairs do sample the switching function
        rtol = max(config.value_rtol, 1e-10)
        assert_close(energy, value, rtol, 'value vs PLUMED, ' + mode)
        assert_close(force.getCollectiveVariableValue(context), value, rtol, 'cv vs PLUMED, ' + mode)
        assert_close(forces, -derivatives, max(config.force_rtol, 1e-10), 'forces vs PLUMED, ' + mode)


SHORT_SYNTAX = {
    # 'R_0 NN MM D_0' of COORDINATION's short syntax
    'R_0=0.3 NN=6 MM=12': (0.3, 6, 12, 0.0),
    'R_0=0.25 NN=8 MM=14': (0.25, 8, 14, 0.0),          # PLUMED's "fast rational" with m != 2n
    'R_0=0.3 NN=6 MM=10 D_0=0.05': (0.3, 6, 10, 0.05),
    'R_0=0.2 NN=5 MM=0': (0.2, 5, 0, 0.0),               # MM=0 means 2*NN; odd exponents
    'R_0=0.15 NN=4 MM=9 D_0=0.1': (0.15, 4, 9, 0.1),
}


@pytest.mark.parametrize('box_kind', ['rectangular', 'triclinic', 'NOPBC'])
@pytest.mark.parametrize('short', sorted(SHORT_SYNTAX))
def test_short_syntax_matches_plumed(platform_config, rng, short, box_kind):
    """COORDINATION GROUPA=.. [GROUPB=..] [PAIR] R_0=.. NN=.. MM=.. [D_0=..] [NOPBC]: the user sets
    only the same numbers (type, dmax and stretch stay at their defaults). The three modes in one
    Context (compare_with_plumed)."""
    r0, nn, mm, d0 = SHORT_SYNTAX[short]

    def configure(force):
        force.setR0(r0)
        force.setN(nn)
        force.setM(mm)
        force.setD0(d0)

    compare_with_plumed(platform_config, rng, box_kind, configure, plumed.PlumedSwitch.short(r0, nn, mm, d0))


def test_the_acceptance_example(platform_config, rng):
    """The literal example: COORDINATION GROUPA=1-20 GROUPB=21-100 R_0=0.3 NN=6 MM=12 (PBC on)."""
    box = np.diag([2.2, 2.3, 2.1])
    positions = rng.uniform(0, 2.2, (100, 3))
    groupA, groupB = list(range(0, 20)), list(range(20, 100))   # PLUMED's 1-20 and 21-100
    force = CoordinationForce(groupA, groupB)
    force.setR0(0.3)
    force.setN(6)
    force.setM(12)
    force.setUsesPeriodicBoundaryConditions(True)
    system = make_system(100, box)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions, box)
    energy, forces = energy_and_forces(context)
    value, derivatives = plumed.coordination(positions, plumed.PlumedSwitch.short(0.3, 6, 12), groupA, groupB, box=box)
    assert value > 5
    assert_close(energy, value, max(platform_config.value_rtol, 1e-10), 'value vs PLUMED')
    assert_close(forces, -derivatives, max(platform_config.force_rtol, 1e-10), 'forces vs PLUMED')


def custom_exp(x):
    return np.exp(-x*x)


# SWITCH={...} forms: (PLUMED mirror, how the user configures the force)
SWITCHES = {
    '{RATIONAL R_0=0.3}': (
        lambda: plumed.PlumedSwitch.switch('RATIONAL', r0=0.3),
        lambda f: f.setDMax(math.inf)),                  # an explicit type without D_MAX: no cutoff
    '{RATIONAL R_0=0.3 NN=8 MM=12 D_MAX=1.0}': (
        lambda: plumed.PlumedSwitch.switch('RATIONAL', r0=0.3, nn=8, mm=12, dmax=1.0),
        lambda f: (f.setN(8), f.setM(12), f.setDMax(1.0))),
    '{RATIONAL R_0=0.3 NN=5 MM=7 D_0=0.05 D_MAX=1.0 NOSTRETCH}': (
        lambda: plumed.PlumedSwitch.switch('RATIONAL', r0=0.3, nn=5, mm=7, d0=0.05, dmax=1.0, nostretch=True),
        lambda f: (f.setN(5), f.setM(7), f.setD0(0.05), f.setDMax(1.0), f.setStretch(False))),
    '{EXP R_0=0.1 D_0=0.05 D_MAX=0.8}': (
        lambda: plumed.PlumedSwitch.switch('EXP', r0=0.1, d0=0.05, dmax=0.8),
        lambda f: (f.setSwitchingFunction(f.Exp), f.setR0(0.1), f.setD0(0.05), f.setDMax(0.8))),
    '{GAUSSIAN R_0=0.2}': (
        lambda: plumed.PlumedSwitch.switch('GAUSSIAN', r0=0.2),
        lambda f: (f.setSwitchingFunction(f.Gaussian), f.setR0(0.2))),
    '{SMAP R_0=0.3 A=4 B=2 D_MAX=1.0 NOSTRETCH}': (
        lambda: plumed.PlumedSwitch.switch('SMAP', r0=0.3, a=4, b=2, dmax=1.0, nostretch=True),
        lambda f: (f.setSwitchingFunction(f.Smap), f.setA(4), f.setB(2), f.setDMax(1.0), f.setStretch(False))),
    '{SMAP R_0=0.3 A=6 B=3 D_MAX=1.1}': (
        lambda: plumed.PlumedSwitch.switch('SMAP', r0=0.3, a=6, b=3, dmax=1.1),
        lambda f: (f.setSwitchingFunction(f.Smap), f.setA(6), f.setB(3), f.setDMax(1.1))),
    '{CUBIC D_0=0.1 D_MAX=0.7}': (
        lambda: plumed.PlumedSwitch.switch('CUBIC', d0=0.1, dmax=0.7),
        lambda f: (f.setSwitchingFunction(f.Cubic), f.setD0(0.1), f.setDMax(0.7))),
    '{TANH R_0=0.2 D_MAX=0.9}': (
        lambda: plumed.PlumedSwitch.switch('TANH', r0=0.2, dmax=0.9),
        lambda f: (f.setSwitchingFunction(f.Tanh), f.setR0(0.2), f.setDMax(0.9))),
    '{COSINUS R_0=0.6 D_0=0.1}': (
        lambda: plumed.PlumedSwitch.switch('COSINUS', r0=0.6, d0=0.1),
        lambda f: (f.setSwitchingFunction(f.Cosinus), f.setR0(0.6), f.setD0(0.1))),
    '{CUSTOM FUNC=exp(-x^2) R_0=0.3 D_MAX=1.2}': (
        lambda: plumed.PlumedSwitch.switch('CUSTOM', r0=0.3, dmax=1.2, func=custom_exp),
        lambda f: (f.setSwitchingFunction(f.Custom), f.setCustomExpression('exp(-x^2)'), f.setDMax(1.2))),
}


@pytest.mark.parametrize('box_kind', ['rectangular', 'triclinic', 'NOPBC'])
@pytest.mark.parametrize('switch', sorted(SWITCHES))
def test_switch_syntax_matches_plumed(platform_config, rng, switch, box_kind):
    """SWITCH={...}: the three modes in one Context (compare_with_plumed)."""
    mirror, configure = SWITCHES[switch]
    compare_with_plumed(platform_config, rng, box_kind, configure, mirror())


def test_the_deliberate_deviation_at_x_equal_1(reference_config):
    """RATIONAL NN=6 MM=10 at r = r0: the limit is 6/10. PLUMED's integer division returns 0."""
    force = CoordinationForce([0, 1])
    force.setR0(0.25)
    force.setN(6)
    force.setM(10)
    force.setDMax(math.inf)
    system = make_system(2)
    system.addForce(force)
    context = reference_config.context(system)
    context.setPositions([[0, 0, 0], [0.25, 0, 0]])
    ours = energy_and_forces(context)[0]
    assert ours == pytest.approx(0.6, rel=1e-14)
    true_limit = plumed.PlumedSwitch.switch('RATIONAL', r0=0.25, nn=6, mm=10).calculate(0.25)[0]
    plumeds = plumed.PlumedSwitch.switch('RATIONAL', r0=0.25, nn=6, mm=10, integer_division=True).calculate(0.25)[0]
    assert true_limit == pytest.approx(ours, rel=1e-14)
    assert plumeds == 0.0
    # everywhere else (x != 1) there is no difference
    s_plumed = plumed.PlumedSwitch.switch('RATIONAL', r0=0.25, nn=6, mm=10, integer_division=True).calculate(0.3)[0]
    assert force.evaluateSwitchingFunction(0.3)[0] == pytest.approx(s_plumed, rel=1e-13)


@pytest.mark.parametrize('nn,mm', [(6, 10), (8, 12), (5, 7)])
def test_plumed_loses_digits_near_x_equal_1(nn, mm):
    """Beside x = 1 PLUMED's rational form cancels; the contract's function does not. This is why
    the comparisons above avoid pairs with |x - 1| < 1e-3 (PLUMED is exact to ~4e-12 beyond)."""
    force = CoordinationForce([0, 1])
    force.setR0(0.3)
    force.setN(nn)
    force.setM(mm)
    force.setDMax(math.inf)
    mirror = plumed.PlumedSwitch.switch('RATIONAL', r0=0.3, nn=nn, mm=mm)
    exact = ref.Switching('RATIONAL', r0=0.3, n=nn, m=mm, dmax=math.inf)
    for dx, plumed_error in ((1e-3, 1e-10), (1e-5, 1e-9)):
        r = 0.3*(1 + dx)
        s_exact, ds_exact = exact([r])
        s, dsdr = force.evaluateSwitchingFunction(r)
        assert s == pytest.approx(s_exact[0], rel=1e-13) and dsdr == pytest.approx(ds_exact[0], rel=1e-12)
        _, dfunc = mirror.calculate(r)
        if dx == 1e-5:
            assert abs(dfunc*r/ds_exact[0] - 1) > plumed_error    # PLUMED's own rounding error
        else:
            assert abs(dfunc*r/ds_exact[0] - 1) < plumed_error
