"""The switching function as the force evaluates it (CoordinationForce.evaluateSwitchingFunction,
the same C++ the Reference kernel uses) against the NumPy reference, over r, for every type and
every cutoff variant; the defaults of dmax; the special points of the contract."""

import math

import numpy as np
import pytest

from openmm import unit

from openmmcoordination import CoordinationForce

from cases import CUTOFFS, TYPE_PARAMETERS, make_switching
from reference_impl import Switching


def dmax(force):
    """The force's dmax in nm."""
    return force.getDMax().value_in_unit(unit.nanometer)


def evaluate(force, r):
    values = [force.evaluateSwitchingFunction(float(x)) for x in r]
    return np.array([v[0] for v in values]), np.array([v[1] for v in values])


@pytest.mark.parametrize('cutoff', sorted(CUTOFFS))
@pytest.mark.parametrize('type_name', sorted(TYPE_PARAMETERS))
def test_switching_function_matches_numpy(type_name, cutoff):
    sw = make_switching(type_name, cutoff)
    force = sw.configure(CoordinationForce([0, 1]))
    r = np.concatenate([np.linspace(0.0, 1.2*min(sw.cutoff, 2.5), 301), [sw.d0, sw.d0 + sw.length]])
    if math.isfinite(sw.cutoff):
        r = np.concatenate([r, [sw.cutoff, np.nextafter(sw.cutoff, 10.0)]])
    s, dsdr = evaluate(force, r)
    s_ref, dsdr_ref = sw(r)
    np.testing.assert_allclose(s, s_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dsdr, dsdr_ref, rtol=1e-11, atol=1e-12*np.abs(dsdr_ref).max())
    assert dmax(force) == pytest.approx(sw.cutoff, rel=1e-15) or (math.isinf(sw.cutoff) and math.isinf(dmax(force)))


def test_default_dmax_follows_r0_d0_n_m():
    force = CoordinationForce([0, 1])
    assert force.getUsesDefaultDMax()
    assert dmax(force) == pytest.approx(0.3*1e-5**(1/(6 - 12)), rel=1e-14)
    force.setR0(0.5)
    force.setD0(0.1)
    force.setN(8)
    force.setM(14)
    assert dmax(force) == pytest.approx(0.1 + 0.5*1e-5**(1/(8 - 14)), rel=1e-14)
    force.setDMax(1.0)
    assert not force.getUsesDefaultDMax() and dmax(force) == 1.0
    force.setDMax(math.inf)
    assert math.isinf(dmax(force))
    force.setDefaultDMax()
    assert force.getUsesDefaultDMax()
    assert dmax(force) == pytest.approx(0.1 + 0.5*1e-5**(1/(8 - 14)), rel=1e-14)
    for t in ('Exp', 'Gaussian', 'Smap', 'Tanh', 'Cosinus', 'Custom', 'Cubic'):
        force.setSwitchingFunction(getattr(CoordinationForce, t))
        assert math.isinf(dmax(force)), t


@pytest.mark.parametrize('n,m', [(6, 10), (5, 9), (8, 6), (4, 7), (6, 12)])
def test_rational_at_x_exactly_1(n, m):
    """x = (r - d0)/r0 = 1 exactly: the limit n/m with ds/dx = n(n - m)/(2m) (not PLUMED's
    integer-division 0), and continuity just beside it."""
    for d0, r0 in ((0.0, 0.25), (0.125, 0.375)):
        force = CoordinationForce([0, 1])
        force.setR0(r0)
        force.setD0(d0)
        force.setN(n)
        force.setM(m)
        force.setDMax(math.inf)
        r = d0 + r0
        assert (r - d0)/r0 == 1.0
        s, dsdr = force.evaluateSwitchingFunction(r)
        if m == 2*n:
            assert s == pytest.approx(0.5, rel=1e-15)
        else:
            assert s == pytest.approx(n/m, rel=1e-14)
        assert dsdr == pytest.approx(n*(n - m)/(2*m)/r0, rel=1e-12)
        # Beside x = 1 the direct form (1 - x^n)/(1 - x^m) cancels: its derivative loses about
        # eps/(x - 1)^2 (1e-6 relative at x - 1 = 1e-5). The force must not.
        delta = np.concatenate([np.geomspace(1e-10, 0.5, 120), -np.geomspace(1e-10, 0.5, 120)])
        x = r + delta*r0
        s_near, ds_near = evaluate(force, x)
        s_ref, ds_ref = Switching('RATIONAL', r0=r0, d0=d0, n=n, m=m, dmax=math.inf)(x)
        np.testing.assert_allclose(s_near, s_ref, rtol=1e-12)
        np.testing.assert_allclose(ds_near, ds_ref, rtol=1e-10)


def test_rational_at_x_equal_1_with_stretch():
    force = CoordinationForce([0, 1])
    force.setR0(0.25)
    force.setN(6)
    force.setM(10)
    sw = Switching('RATIONAL', r0=0.25, n=6, m=10)
    s, dsdr = force.evaluateSwitchingFunction(0.25)
    s_ref, dsdr_ref = sw([0.25])
    assert s == pytest.approx(s_ref[0], rel=1e-13)
    assert dsdr == pytest.approx(dsdr_ref[0], rel=1e-12)
    sd = Switching('RATIONAL', r0=0.25, n=6, m=10, dmax=math.inf)([sw.cutoff])[0][0]
    assert s == pytest.approx((0.6 - sd)/(1 - sd), rel=1e-13)


@pytest.mark.parametrize('type_name', sorted(TYPE_PARAMETERS))
def test_r_at_or_below_d0_is_one_with_zero_derivative(type_name):
    """1 and a zero derivative up to d0 and at d0 itself; Q alone is evaluated at d0, as PLUMED 2.10.1
    prints there (rt20-switch-q: 0.731059 at r = D_0; rt20-switch-exp: 1 and 0 at r = D_0)."""
    sw = make_switching(type_name, 'd0')
    assert sw.d0 == 0.08
    force = sw.configure(CoordinationForce([0, 1]))
    for r in (0.0, 1e-9, 0.04):
        assert force.evaluateSwitchingFunction(r) == [1.0, 0.0]
    s, dsdr = force.evaluateSwitchingFunction(0.08)
    if type_name == 'Q':
        s_ref, dsdr_ref = sw([0.08])
        assert s < 1.0 and dsdr < 0.0
        assert (s, dsdr) == (pytest.approx(s_ref[0], rel=1e-13), pytest.approx(dsdr_ref[0], rel=1e-12))
    else:
        assert [s, dsdr] == [1.0, 0.0]
    s, dsdr = force.evaluateSwitchingFunction(0.08 + 1e-3)
    assert s < 1.0


@pytest.mark.parametrize('type_name', sorted(TYPE_PARAMETERS))
def test_zero_beyond_dmax_and_at_dmax_when_stretched(type_name):
    sw = make_switching(type_name, 'dmax-stretch')
    force = sw.configure(CoordinationForce([0, 1]))
    s, dsdr = force.evaluateSwitchingFunction(0.65)
    assert abs(s) < 1e-14
    assert force.evaluateSwitchingFunction(0.6500001) == [0.0, 0.0]
    assert force.evaluateSwitchingFunction(3.0) == [0.0, 0.0]
    nostretch = make_switching(type_name, 'dmax-nostretch')
    force = nostretch.configure(CoordinationForce([0, 1]))
    s, _ = force.evaluateSwitchingFunction(0.65)
    assert s == pytest.approx(nostretch([0.65])[0][0], rel=1e-13)
    assert force.evaluateSwitchingFunction(0.6500001) == [0.0, 0.0]


def test_cubic_uses_dmax_minus_d0_as_its_length():
    force = CoordinationForce([0, 1])
    force.setSwitchingFunction(CoordinationForce.Cubic)
    force.setD0(0.2)
    force.setDMax(0.6)
    force.setR0(5.0)   # ignored by CUBIC
    for r, y in ((0.3, 0.25), (0.4, 0.5), (0.5, 0.75)):
        s, dsdr = force.evaluateSwitchingFunction(r)
        assert s == pytest.approx((y - 1)**2*(1 + 2*y), rel=1e-14)
        assert dsdr == pytest.approx(6*y*(y - 1)/0.4, rel=1e-13)
