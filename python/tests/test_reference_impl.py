"""Checks of the NumPy reference itself (reference_impl.py), so that agreeing with it means something:
its derivatives against complex-step and finite differences, its limits, its images and pairs."""

import math

import numpy as np
import pytest

import reference_impl as ref
from reference_impl import CustomFunction, Switching

SWITCHINGS = {
    'rational-6-12': Switching('RATIONAL', r0=0.3, dmax=math.inf),
    'rational-5-9': Switching('RATIONAL', r0=0.3, n=5, m=9, dmax=math.inf),
    'rational-8-6': Switching('RATIONAL', r0=0.3, n=8, m=6, dmax=math.inf),
    'exp': Switching('EXP', r0=0.2),
    'gaussian': Switching('GAUSSIAN', r0=0.2, d0=0.05),
    'smap': Switching('SMAP', r0=0.3, a=3.5, b=1.5),
    'cubic': Switching('CUBIC', d0=0.1, dmax=0.7),
    'tanh': Switching('TANH', r0=0.25),
    'cosinus': Switching('COSINUS', r0=0.5),
    'custom': Switching('CUSTOM', r0=0.3, custom=CustomFunction(lambda x: np.exp(-x**2), 'exp(-x^2)')),
}


def direct_formula(sw, r):
    """s(r) straight from the contract's table, without d0/dmax handling (for r > d0)."""
    x = (r - sw.d0)/sw.length
    n, m = sw.n, sw.m_effective
    return {
        'RATIONAL': lambda: (1 - x**n)/(1 - x**m),
        'EXP': lambda: np.exp(-x),
        'GAUSSIAN': lambda: np.exp(-x**2/2),
        'SMAP': lambda: (1 + (2**(sw.a/sw.b) - 1)*x**sw.a)**(-sw.b/sw.a),
        'CUBIC': lambda: (x - 1)**2*(1 + 2*x),
        'TANH': lambda: 1 - np.tanh(x),
        'COSINUS': lambda: (np.cos(np.pi*x) + 1)/2,
        'CUSTOM': lambda: np.exp(-x**2),
    }[sw.type]()


@pytest.mark.parametrize('name', sorted(SWITCHINGS))
def test_value_matches_the_contract_table(name):
    sw = SWITCHINGS[name]
    r = np.linspace(sw.d0 + 0.013, sw.d0 + 0.9*sw.length, 37)
    r = r[np.abs((r - sw.d0)/sw.length - 1) > 1e-3]   # the direct rational form is 0/0 at x = 1
    s, _ = sw(r)
    np.testing.assert_allclose(s, direct_formula(sw, r), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize('name', sorted(SWITCHINGS))
def test_derivative_matches_finite_differences(name):
    sw = SWITCHINGS[name]
    r = np.linspace(sw.d0 + 0.02, sw.d0 + 0.95*sw.length, 41)
    h = 1e-6
    _, dsdr = sw(r)
    numeric = (sw(r + h)[0] - sw(r - h)[0])/(2*h)
    np.testing.assert_allclose(dsdr, numeric, rtol=1e-6, atol=1e-8)
    assert np.any(np.abs(dsdr) > 0.1)


@pytest.mark.parametrize('n,m', [(6, 10), (5, 9), (6, 8), (8, 6), (3, 1), (4, 20)])
def test_rational_limit_at_x_equal_1(n, m):
    s, dsdx = ref._rational(np.array([1.0]), n, m)
    assert s[0] == pytest.approx(n/m, rel=1e-15)
    assert dsdx[0] == pytest.approx(n*(n - m)/(2*m), rel=1e-14)
    # and it is continuous with the direct form a little away from x = 1
    for delta in (1e-3, -1e-3, 1e-2):
        x = 1 + delta
        s_near, ds_near = ref._rational(np.array([x]), n, m)
        assert s_near[0] == pytest.approx((1 - x**n)/(1 - x**m), rel=1e-11)
        direct = (-n*x**(n - 1)*(1 - x**m) + m*x**(m - 1)*(1 - x**n))/(1 - x**m)**2
        assert ds_near[0] == pytest.approx(direct, rel=1e-8)


def test_rational_m_equal_2n_is_one_over_one_plus_x_to_the_n():
    x = np.linspace(0.01, 5, 50)
    s, dsdx = ref._rational(x, 6, 12)
    np.testing.assert_allclose(s, 1/(1 + x**6), rtol=1e-15)
    np.testing.assert_allclose(dsdx, -6*x**5/(1 + x**6)**2, rtol=1e-14)


def test_d0_dmax_and_stretch():
    sw = Switching('EXP', r0=0.2, d0=0.1, dmax=0.8)
    s, dsdr = sw([0.0, 0.05, 0.1, 0.8, 0.8 + 1e-12, 2.0])
    assert list(s[:3]) == [1.0, 1.0, 1.0] and list(dsdr[:3]) == [0.0, 0.0, 0.0]
    assert abs(s[3]) < 1e-15                 # stretched to exactly 0 at dmax
    assert s[4] == 0.0 and s[5] == 0.0 and dsdr[5] == 0.0
    raw = math.exp(-(0.5 - 0.1)/0.2)
    at_dmax = math.exp(-(0.8 - 0.1)/0.2)
    assert sw([0.5])[0][0] == pytest.approx((raw - at_dmax)/(1 - at_dmax), rel=1e-14)
    nostretch = Switching('EXP', r0=0.2, d0=0.1, dmax=0.8, stretch=False)
    assert nostretch([0.5])[0][0] == pytest.approx(raw, rel=1e-14)
    assert nostretch([0.8 - 1e-12])[0][0] == pytest.approx(at_dmax, rel=1e-10)
    assert tuple(nostretch([0.8])) == (0.0, 0.0)   # 0 from dmax on, as PLUMED 2.10 prints there
    assert nostretch([0.81])[0][0] == 0.0


def test_default_dmax_is_plumeds():
    sw = Switching('RATIONAL', r0=0.3)
    assert sw.cutoff == pytest.approx(0.3*1e-5**(1/(6 - 12)), rel=1e-15)
    assert sw.cutoff == pytest.approx(6.8129*0.3, rel=1e-4)
    raw = Switching('RATIONAL', r0=0.3, dmax=math.inf)
    assert raw([sw.cutoff])[0][0] == pytest.approx(1e-5, rel=1e-4)
    assert Switching('RATIONAL', r0=0.3, d0=0.1, n=8, m=14).cutoff == pytest.approx(0.1 + 0.3*1e-5**(1/(8 - 14)))
    assert math.isinf(Switching('EXP').cutoff)
    assert math.isinf(Switching('TANH').cutoff)


def test_pairs_of_the_three_modes():
    i, j = ref.pairs('one', [4, 7, 9, 2])
    assert sorted(zip(i, j)) == sorted([(4, 7), (4, 9), (4, 2), (7, 9), (7, 2), (9, 2)])
    i, j = ref.pairs('two', [1, 2, 3], [3, 4, 1])
    assert len(i) == 9 - 2 and all(a != b for a, b in zip(i, j))
    assert sorted(zip(i, j)) == sorted([(1, 3), (1, 4), (2, 3), (2, 4), (2, 1), (3, 4), (3, 1)])
    i, j = ref.pairs('pairs', [5, 6], [0, 9])
    assert list(zip(i, j)) == [(5, 0), (6, 9)]


def test_rectangular_images_match_component_wrapping():
    rng = np.random.default_rng(1)
    box = np.diag([1.7, 2.1, 1.9])
    pos = rng.uniform(-3, 3, (40, 3))
    i, j = ref.pairs('one', range(40))
    d = ref.displacements(pos, i, j, box)
    simple = pos[j] - pos[i]
    simple -= np.diag(box)*np.round(simple/np.diag(box))
    np.testing.assert_allclose(d, simple, atol=1e-12)


def test_triclinic_images_are_the_shortest():
    rng = np.random.default_rng(2)
    for _ in range(5):
        box = ref.reduced_box(rng, triclinic=True)
        pos = rng.uniform(-3, 3, (30, 3))
        i, j = ref.pairs('one', range(30))
        d = ref.displacements(pos, i, j, box)
        r = np.linalg.norm(d, axis=1)
        # a wider search never finds a shorter image, and d is an image of x_j - x_i
        wide = ref.displacements(pos, i, j, box, search=4)
        np.testing.assert_allclose(r, np.linalg.norm(wide, axis=1), rtol=1e-14)
        cells = (d - (pos[j] - pos[i])) @ np.linalg.inv(box)
        np.testing.assert_allclose(cells, np.round(cells), atol=1e-9)
        assert np.all(r <= 0.5*np.sqrt(np.sum(box**2, axis=1)).sum() + 1e-12)   # within the cell's half diagonal


@pytest.mark.parametrize('name', sorted(SWITCHINGS))
def test_gradient_matches_finite_differences(name):
    sw = SWITCHINGS[name]
    rng = np.random.default_rng(3)
    box = ref.reduced_box(rng, triclinic=True, size=1.5)
    pos = rng.uniform(0, 1.5, (12, 3))
    i, j = ref.pairs('two', range(6), range(3, 12))
    cv, grad = ref.coordination(pos, sw, i, j, box)
    h = 1e-6
    for p in (0, 4, 9):
        for k in range(3):
            plus, minus = pos.copy(), pos.copy()
            plus[p, k] += h
            minus[p, k] -= h
            numeric = (ref.coordination(plus, sw, i, j, box)[0] - ref.coordination(minus, sw, i, j, box)[0])/(2*h)
            assert grad[p, k] == pytest.approx(numeric, rel=1e-5, abs=1e-7)
    assert np.abs(grad).max() > 0


def test_histogram_counts():
    pos = np.array([[0, 0, 0], [0.15, 0, 0], [0, 0.35, 0], [0, 0, 0.99]])
    i, j = ref.pairs('one', range(4))
    counts = ref.pair_histogram(pos, i, j, bins=4, rmax=1.0)
    # distances: 0.15, 0.35, 0.99, sqrt(0.15^2+0.35^2)=0.381, sqrt(0.15^2+0.99^2)=1.0013, sqrt(0.35^2+0.99^2)=1.05
    assert list(counts) == [1, 2, 0, 1]


def test_histogram_bounds():
    rng = np.random.default_rng(4)
    pos = rng.uniform(0, 1, (40, 3))
    i, j = ref.pairs('one', range(40))
    exact = ref.pair_histogram(pos, i, j, 25, 1.2)
    lowest, highest = ref.pair_histogram_bounds(pos, i, j, 25, 1.2)
    np.testing.assert_array_equal(lowest, exact)
    np.testing.assert_array_equal(highest, exact)
    # a pair exactly on an edge may go either way once distances are uncertain
    edge = np.array([[0, 0, 0], [0.5, 0, 0]])
    lowest, highest = ref.pair_histogram_bounds(edge, [0], [1], 4, 1.0, rtol=1e-6)
    assert list(lowest) == [0, 0, 0, 0] and list(highest) == [0, 1, 1, 0]
    lowest, highest = ref.pair_histogram_bounds(edge, [0], [1], 4, 0.5, rtol=1e-6)
    assert list(lowest) == [0, 0, 0, 0] and list(highest) == [0, 0, 0, 1]
