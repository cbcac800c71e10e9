"""An independent NumPy implementation of the CoordinationForce contract (its formulas).

Written from the formulas of the contract, not from the C++: it is the oracle the tests compare
every platform against. Everything is in double precision, distances in nm.

    cv = sum over the pairs (i, j) of s(r_ij),  force on k = -dE/dcv * dcv/dx_k

Main entry points:
- Switching(...): the switching function s(r) and ds/dr (nine types, d0, dmax, stretch).
- pairs(mode, groupA, groupB): the (i, j) index arrays of the three modes.
- displacements(pos, i, j, box): x_j - x_i, exact nearest periodic image by brute force.
- coordination(pos, switching, i, j, box): the CV and its gradient dcv/dx.
- pair_coordination(pos, switching, i, j, weights, r0s, box): the same with a weight and an r0
  per pair (PLUMED's CONTACTMAP ... SUM): each pair's function is `switching` with its own r0.
- pair_histogram(pos, i, j, box, bins, rmax): exact integer counts.
"""

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

TYPES = ('RATIONAL', 'EXP', 'GAUSSIAN', 'SMAP', 'CUBIC', 'TANH', 'COSINUS', 'CUSTOM', 'Q')
MODES = ('one', 'two', 'pairs')


def complex_step_derivative(f, x, h=1e-30):
    """df/dx of an analytic function by the complex step: exact to rounding, no cancellation."""
    return np.imag(f(np.asarray(x, dtype=float) + 1j*h))/h


def _rational(x, n, m):
    """(1 - x^n)/(1 - x^m) and its x-derivative for x > 0, from the factorization
    (1 - x^n)/(1 - x^m) = (1 + x + ... + x^(n-1))/(1 + x + ... + x^(m-1)):
    a ratio of sums of positive terms, so there is no cancellation and no 0/0 at x = 1
    (where it gives n/m and ds/dx = n(n - m)/(2m) by itself)."""
    x = np.asarray(x, dtype=float)
    if m == 2*n:
        # The contract's simplified form 1/(1 + x^n) (identical, but used here as the contract says).
        xn = x**n
        s = 1.0/(1.0 + xn)
        return s, -n*x**(n - 1)*s*s
    big = x > 2.0   # for large x the direct form is accurate and the sums would only grow
    xs = np.where(big, 1.0, x)
    kn = np.arange(n)[:, None]
    km = np.arange(m)[:, None]
    num = np.sum(xs[None, :]**kn, axis=0)
    den = np.sum(xs[None, :]**km, axis=0)
    dnum = np.sum(kn[1:]*xs[None, :]**(kn[1:] - 1), axis=0) if n > 1 else np.zeros_like(xs)
    dden = np.sum(km[1:]*xs[None, :]**(km[1:] - 1), axis=0) if m > 1 else np.zeros_like(xs)
    s = num/den
    dsdx = (dnum*den - num*dden)/(den*den)
    xb = np.where(big, x, 3.0)
    sb = (1.0 - xb**n)/(1.0 - xb**m)
    dsb = (-n*xb**(n - 1)*(1.0 - xb**m) + m*xb**(m - 1)*(1.0 - xb**n))/(1.0 - xb**m)**2
    return np.where(big, sb, s), np.where(big, dsb, dsdx)


@dataclass
class Switching:
    """A switching function as the contract defines it.

    dmax: None means the default (RATIONAL: PLUMED's automatic d0 + r0*(1e-5)^(1/(n-m));
    every other type: no cutoff); math.inf means no cutoff; a number is the cutoff.
    custom: for CUSTOM, a NumPy callable s(x) (its derivative is taken by complex step unless
    custom_derivative is given).
    beta (1/nm), lambda_: for Q, s(r) = 1/(1 + exp(beta (r - lambda_ r0))) for r > d0 (PLUMED's
    Q with REF = r0; no default cutoff).
    """
    type: str = 'RATIONAL'
    r0: float = 0.3
    d0: float = 0.0
    n: int = 6
    m: int = 0
    a: float = 6.0
    b: float = 6.0
    dmax: Optional[float] = None
    stretch: bool = True
    custom: Optional[Callable] = None
    custom_derivative: Optional[Callable] = None
    beta: float = 50.0
    lambda_: float = 1.8
    _shift: float = field(default=0.0, init=False, repr=False)
    _scale: float = field(default=1.0, init=False, repr=False)

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(self.type)
        if self.type == 'CUBIC' and not math.isfinite(self.cutoff):
            raise ValueError('CUBIC needs a finite dmax')
        if self.stretch and math.isfinite(self.cutoff):
            # s' = (s - s(dmax))/(s(0) - s(dmax)); s(0) = 1 because r = 0 <= d0.
            s_dmax, _ = self._unstretched(np.array([self._x(self.cutoff)]))
            s_zero = 1.0
            self._scale = 1.0/(s_zero - s_dmax[0])
            self._shift = -s_dmax[0]*self._scale

    @property
    def m_effective(self):
        return 2*self.n if self.m == 0 else self.m

    @property
    def length(self):
        """The length that divides r - d0 (CUBIC: dmax - d0)."""
        return self.cutoff - self.d0 if self.type == 'CUBIC' else self.r0

    @property
    def cutoff(self):
        """The dmax in use (math.inf when none)."""
        if self.dmax is not None:
            return float(self.dmax)
        if self.type == 'RATIONAL':
            return default_dmax(self.r0, self.d0, self.n, self.m_effective)
        return math.inf

    def _x(self, r):
        return (np.asarray(r, dtype=float) - self.d0)/self.length

    def _unstretched(self, x):
        """s(x) and ds/dx for x > 0 (no cutoff, no stretch)."""
        t = self.type
        if t == 'RATIONAL':
            return _rational(x, self.n, self.m_effective)
        if t == 'EXP':
            s = np.exp(-x)
            return s, -s
        if t == 'GAUSSIAN':
            s = np.exp(-0.5*x*x)
            return s, -x*s
        if t == 'SMAP':
            c = 2.0**(self.a/self.b) - 1.0
            base = 1.0 + c*x**self.a
            return base**(-self.b/self.a), -self.b*c*x**(self.a - 1.0)*base**(-self.b/self.a - 1.0)
        if t == 'CUBIC':
            y = np.minimum(x, 1.0)
            return (y - 1.0)**2*(1.0 + 2.0*y), 6.0*y*(y - 1.0)
        if t == 'TANH':
            th = np.tanh(x)
            return 1.0 - th, -(1.0 - th*th)
        if t == 'COSINUS':
            inside = x <= 1.0
            s = np.where(inside, 0.5*(np.cos(np.pi*x) + 1.0), 0.0)
            return s, np.where(inside, -0.5*np.pi*np.sin(np.pi*x), 0.0)
        if t == 'Q':
            # Written in r; logaddexp keeps 1/(1 + e^u) = exp(-log(1 + e^u)) finite for any u.
            r = self.d0 + x*self.length
            u = self.beta*(r - self.lambda_*self.r0)
            s = np.exp(-np.logaddexp(0.0, u))
            dsdr = -self.beta*s*np.exp(-np.logaddexp(0.0, -u))
            return s, dsdr*self.length
        if t == 'CUSTOM':
            s = np.asarray(self.custom(x), dtype=float)*np.ones_like(x)
            if self.custom_derivative is not None:
                d = np.asarray(self.custom_derivative(x), dtype=float)*np.ones_like(x)
            else:
                d = complex_step_derivative(self.custom, x)*np.ones_like(x)
            return s, d
        raise ValueError(t)

    def __call__(self, r):
        """s(r) and ds/dr (arrays), with d0, dmax and stretch applied."""
        r = np.atleast_1d(np.asarray(r, dtype=float))
        x = self._x(r)
        # PLUMED 2.10's ends (its rt20-switch-* regtests): 1 up to r = d0, which Q alone evaluates;
        # 0 from r = dmax on.
        positive = (x >= 0) if self.type == 'Q' else (x > 0)
        xs = np.where(positive, x, 0.5)   # any harmless x > 0 for the masked entries
        s, dsdx = self._unstretched(xs)
        s = np.where(positive, s*self._scale + self._shift, 1.0)
        dsdr = np.where(positive, dsdx*self._scale/self.length, 0.0)
        beyond = r >= self.cutoff
        return np.where(beyond, 0.0, s), np.where(beyond, 0.0, dsdr)

    def configure(self, force):
        """Set a CoordinationForce (the Python wrapper's object) to this switching function.
        A CUSTOM function needs its Lepton expression: pass it as self.custom.expression."""
        import openmmcoordination as oc
        force.setSwitchingFunction(getattr(oc.CoordinationForce, self.type.capitalize()))
        force.setR0(self.r0)
        force.setD0(self.d0)
        force.setM(0)
        force.setN(self.n)
        force.setM(self.m)
        force.setA(self.a)
        force.setB(self.b)
        if self.type == 'CUSTOM':
            force.setCustomExpression(self.custom.expression)
        if self.dmax is None:
            force.setDefaultDMax()
        else:
            force.setDMax(self.dmax)
        force.setStretch(self.stretch)
        force.setBeta(self.beta)
        force.setLambda(self.lambda_)
        return force


def default_dmax(r0, d0, n, m):
    """PLUMED's automatic cutoff of the short syntax: where the rational function is about 1e-5."""
    return d0 + r0*1e-5**(1.0/(n - m))


class CustomFunction:
    """A CUSTOM switching function: a NumPy callable with the equivalent Lepton expression."""

    def __init__(self, function, expression):
        self.function = function
        self.expression = expression

    def __call__(self, x):
        return self.function(x)


def pairs(mode, groupA, groupB=None):
    """The (i, j) index arrays of a mode: 'one' (i < j within A), 'two' (A x B, identical
    indices skipped), 'pairs' (A[k], B[k])."""
    A = np.asarray(groupA, dtype=int)
    if mode == 'one':
        iu, ju = np.triu_indices(len(A), k=1)
        return A[iu], A[ju]
    B = np.asarray(groupB, dtype=int)
    if mode == 'pairs':
        assert len(A) == len(B)
        return A.copy(), B.copy()
    if mode == 'two':
        i = np.repeat(A, len(B))
        j = np.tile(B, len(A))
        keep = i != j
        return i[keep], j[keep]
    raise ValueError(mode)


def displacements(pos, i, j, box=None, search=2):
    """x_j - x_i for each pair, the nearest periodic image when box (3x3, rows are the box
    vectors) is given: reduce by fractional coordinates, then take the shortest of every image
    shifted by up to `search` box vectors in each direction (brute force, any valid box)."""
    pos = np.asarray(pos, dtype=float)
    d = pos[j] - pos[i]
    if box is None:
        return d
    box = np.asarray(box, dtype=float)
    frac = d @ np.linalg.inv(box)
    d = (frac - np.round(frac)) @ box
    shifts = np.array([(a, b, c) for a in range(-search, search + 1)
                       for b in range(-search, search + 1) for c in range(-search, search + 1)], dtype=float) @ box
    candidates = d[:, None, :] + shifts[None, :, :]
    best = np.argmin(np.einsum('pki,pki->pk', candidates, candidates), axis=1)
    return candidates[np.arange(len(d)), best]


def image_gap(pos, i, j, box, search=2):
    """For each pair, the second shortest image distance minus the shortest: where it is 0 the
    nearest image changes, and the energy has a kink."""
    pos = np.asarray(pos, dtype=float)
    box = np.asarray(box, dtype=float)
    d = pos[j] - pos[i]
    frac = d @ np.linalg.inv(box)
    d = (frac - np.round(frac)) @ box
    shifts = np.array([(a, b, c) for a in range(-search, search + 1)
                       for b in range(-search, search + 1) for c in range(-search, search + 1)], dtype=float) @ box
    r = np.sort(np.linalg.norm(d[:, None, :] + shifts[None, :, :], axis=2), axis=1)
    return r[:, 1] - r[:, 0]


def distances(pos, i, j, box=None):
    d = displacements(pos, i, j, box)
    return np.sqrt(np.einsum('pi,pi->p', d, d))


def coordination(pos, switching, i, j, box=None):
    """The CV and its gradient dcv/dx (shape (N, 3)) for the pairs (i[k], j[k])."""
    pos = np.asarray(pos, dtype=float)
    d = displacements(pos, i, j, box)
    r = np.sqrt(np.einsum('pi,pi->p', d, d))
    s, dsdr = switching(r)
    grad = np.zeros_like(pos)
    nonzero = (dsdr != 0) & (r > 0)
    g = np.zeros_like(d)
    g[nonzero] = d[nonzero]*(dsdr[nonzero]/r[nonzero])[:, None]
    np.add.at(grad, j, g)
    np.add.at(grad, i, -g)
    return float(np.sum(s)), grad


def pair_coordination(pos, switching, i, j, weights=None, r0s=None, box=None):
    """The CV sum_k w_k s_k(r_k) and its gradient, where s_k is `switching` with r0 = r0s[k]
    (its default cutoff, if any, follows r0s[k]; an explicit dmax is the same for every pair and
    each s_k is stretched there). weights None: 1 each; r0s None: switching.r0 for all."""
    import dataclasses
    pos = np.asarray(pos, dtype=float)
    i, j = np.asarray(i), np.asarray(j)
    weights = np.ones(len(i)) if weights is None else np.asarray(weights, dtype=float)
    r0s = np.full(len(i), switching.r0) if r0s is None else np.asarray(r0s, dtype=float)
    cv, grad = 0.0, np.zeros_like(pos)
    for r0 in np.unique(r0s):
        sel = r0s == r0
        own = dataclasses.replace(switching, r0=float(r0))
        d = displacements(pos, i[sel], j[sel], box)
        r = np.sqrt(np.einsum('pi,pi->p', d, d))
        s, dsdr = own(r)
        w = weights[sel]
        cv += float(np.sum(w*s))
        g = d*(w*dsdr/np.where(r > 0, r, 1.0))[:, None]
        np.add.at(grad, j[sel], g)
        np.add.at(grad, i[sel], -g)
    return cv, grad


def energy_and_forces(pos, switching, i, j, box=None, energy=None):
    """Energy E(cv) and forces -dE/dcv * dcv/dx. energy: None for E = cv, or a pair of callables
    (E, dE/dcv)."""
    cv, grad = coordination(pos, switching, i, j, box)
    if energy is None:
        return cv, -grad, cv
    E, dE = energy
    return E(cv), -dE(cv)*grad, cv


def pair_histogram(pos, i, j, bins, rmax, box=None):
    """counts[k] = number of pairs with k*dr <= r < (k+1)*dr, dr = rmax/bins; r >= rmax not counted."""
    r = distances(pos, i, j, box)
    r = r[r < rmax]
    k = np.minimum(np.floor(r/(rmax/bins)).astype(np.int64), bins - 1)
    return np.bincount(k, minlength=bins).astype(np.int64)


def pair_histogram_bounds(pos, i, j, bins, rmax, box=None, rtol=0.0):
    """(lowest, highest) possible counts per bin when distances carry a relative error up to rtol
    (a platform computing in single precision may put a pair that sits on a bin edge on either
    side). With rtol = 0 both equal pair_histogram()."""
    r = distances(pos, i, j, box)
    dr = rmax/bins
    lo_r, hi_r = r*(1 - rtol), r*(1 + rtol)
    lowest = np.zeros(bins, dtype=np.int64)
    highest = np.zeros(bins, dtype=np.int64)
    for a, b in zip(lo_r, hi_r):
        if a >= rmax:
            continue                      # certainly not counted
        first = int(min(np.floor(a/dr), bins - 1))
        last = int(min(np.floor(b/dr), bins - 1))
        if first == last and b < rmax:
            lowest[first] += 1            # certainly in this bin
        highest[first:last + 1] += 1      # possibly in each of these bins
    return lowest, highest


def reduced_box(rng, triclinic, size=2.0):
    """A random box in OpenMM's reduced form (a along x, b in the xy plane, |b_x| <= a_x/2,
    |c_x| <= a_x/2, |c_y| <= b_y/2). Rows are the box vectors, in nm."""
    ax, by, cz = size*rng.uniform(0.9, 1.2, 3)
    box = np.diag([ax, by, cz])
    if triclinic:
        box[1, 0] = rng.uniform(-0.5, 0.5)*ax
        box[2, 0] = rng.uniform(-0.5, 0.5)*ax
        box[2, 1] = rng.uniform(-0.5, 0.5)*by
    return box


def bias_energy_and_forces(pos, cvs, energy, gradient, box=None):
    """Several CVs biased together (CoordinationBiasForce): cvs is a list of (switching, i, j,
    weights, r0s) (weights and r0s None for the defaults), energy(values) gives E and
    gradient(values) every dE/dcv_k. Returns (E, forces -sum_k dE/dcv_k dcv_k/dx, values)."""
    values, grads = [], []
    for switching, i, j, weights, r0s in cvs:
        cv, grad = pair_coordination(pos, switching, i, j, weights, r0s, box)
        values.append(cv)
        grads.append(grad)
    dE = gradient(values)
    forces = -sum(d*g for d, g in zip(dE, grads))
    return energy(values), forces, np.array(values)
