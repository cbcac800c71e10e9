"""PLUMED's COORDINATION algorithm, restated in Python for the equivalence tests.

Written from reading PLUMED 2 (github.com/plumed/plumed2): src/tools/SwitchingFunction.cpp (the
switching function: its set() from a SWITCH={...} string and its set(nn, mm, r0, d0) of the short
syntax, calculate(), calculateSqr(), do_rational()) and src/colvar/CoordinationBase.cpp plus
src/colvar/Coordination.cpp (the pair loop and derivatives). No PLUMED code is copied; this is
an independent restatement of what that code does, with PLUMED's own conventions:

- dfunc is (ds/dr)/r, and derivatives are accumulated as deriv[i] -= dfunc*d, deriv[j] += dfunc*d
  with d the (nearest image) vector from i to j;
- from `distance == dmax` on, 0 and a zero derivative, as PLUMED 2.10.1's rt20-switch-* regtests print
  at r = D_MAX exactly for every type, stretched or not (older readings of its source had
  `distance > dmax`); the stretch still takes s at dmax itself;
- stretch = 1/(s(0) - s(dmax)), shift = -s(dmax)*stretch, with s(0) and s(dmax) from calculate();
  the short syntax (R_0=, NN=, MM=, D_0=) always sets dmax = d0 + r0*(1e-5)^(1/(nn-mm)) and
  stretches; SWITCH={...} stretches only with D_MAX and without NOSTRETCH;
- "fast rational" (even nn and mm, d0 == 0) evaluates from r^2 with exponents nn/2, mm/2;
- rational near x = 1 (|x - 1| < 100 machine epsilons) returns nn/mm and 0.5*nn*(nn-mm)/mm.
  PLUMED computes nn/mm with C++ integer division there (0 for nn < mm): that is a PLUMED bug and
  the contract deliberately returns the true limit n/m; `integer_division=True` reproduces PLUMED.
- COSINUS: older PLUMED (the SwitchingFunction.cpp with one calculate() for all types) multiplied
  its derivative by 1/r0 twice, a bug; the later rewrite of that file (switchContainers) computes it
  once, and regtest/basic/rt-make-switch/out_cosinus.reference changed accordingly. The mirror uses
  the correct derivative, as the contract does.
- periodic boundaries are on by default (NOPBC turns them off).
"""

import math
import sys

import numpy as np

EPSILON = sys.float_info.epsilon
DBL_MAX = sys.float_info.max


class PlumedSwitch:
    """A PLUMED switching function: build with short() or switch()."""

    def __init__(self):
        self.type = 'RATIONAL'
        self.d0 = 0.0
        self.invr0 = 0.0
        self.dmax = DBL_MAX
        self.nn = 6
        self.mm = 12
        self.a = self.b = 0
        self.func = None
        self.stretch = 1.0
        self.shift = 0.0
        self.fast_rational = False
        self.integer_division = False

    @property
    def dmax2(self):
        return self.dmax*self.dmax if self.dmax < math.sqrt(DBL_MAX) else DBL_MAX

    @classmethod
    def short(cls, r0, nn=6, mm=12, d0=0.0, integer_division=False):
        """COORDINATION ... R_0=r0 NN=nn MM=mm D_0=d0 (Coordination.cpp's defaults: NN=6 MM=12)."""
        sw = cls()
        sw.integer_division = integer_division
        if mm == 0:
            mm = 2*nn
        sw.nn, sw.mm, sw.invr0, sw.d0 = nn, mm, 1.0/r0, d0
        sw.dmax = d0 + r0*0.00001**(1.0/(nn - mm))
        sw.fast_rational = nn % 2 == 0 and mm % 2 == 0 and d0 == 0.0
        sw._set_stretch()
        return sw

    @classmethod
    def switch(cls, type, r0=None, d0=0.0, dmax=None, nn=6, mm=0, a=None, b=None, func=None,
               nostretch=False, integer_division=False):
        """SWITCH={TYPE R_0=r0 D_0=d0 D_MAX=dmax NN=nn MM=mm A=a B=b FUNC=func [NOSTRETCH]};
        func is a NumPy callable of x for CUSTOM."""
        sw = cls()
        sw.type = type
        sw.integer_division = integer_division
        sw.d0 = d0
        if dmax is not None:
            sw.dmax = dmax
        if type == 'CUBIC':
            r0 = sw.dmax - d0
        sw.invr0 = 1.0/r0
        if type == 'RATIONAL':
            sw.nn, sw.mm = nn, (2*nn if mm == 0 else mm)
            sw.fast_rational = sw.nn % 2 == 0 and sw.mm % 2 == 0 and d0 == 0.0
        elif type == 'SMAP':
            sw.a, sw.b = a, b
        elif type == 'CUSTOM':
            sw.func = func
        if not nostretch and sw.dmax != DBL_MAX:
            sw._set_stretch()
        return sw

    def _set_stretch(self):
        self.stretch, self.shift = 1.0, 0.0
        s0, _ = self.calculate(0.0)
        sd, _ = self.calculate(self.dmax, cutoff=False)
        self.stretch = 1.0/(s0 - sd)
        self.shift = -sd*self.stretch

    def _rational(self, rdist, nn, mm):
        if 2*nn == mm:
            rn1 = rdist**(nn - 1)
            iden = 1.0/(1.0 + rn1*rdist)
            return iden, -nn*rn1*iden*iden
        if 1.0 - 100.0*EPSILON < rdist < 1.0 + 100.0*EPSILON:
            value = nn//mm if self.integer_division else nn/mm
            return value, 0.5*nn*(nn - mm)/mm
        rn1 = rdist**(nn - 1)
        rm1 = rdist**(mm - 1)
        num = 1.0 - rn1*rdist
        iden = 1.0/(1.0 - rm1*rdist)
        func = num*iden
        return func, -nn*rn1*iden + func*(iden*mm)*rm1

    def calculate(self, distance, cutoff=True):
        """(s, dfunc) at a distance, dfunc = (ds/dr)/r (cutoff=False: also at and beyond dmax)."""
        if cutoff and distance >= self.dmax:
            return 0.0, 0.0
        rdist = (distance - self.d0)*self.invr0
        if rdist <= 0.0:
            result, dfunc = 1.0, 0.0
        else:
            t = self.type
            if t == 'RATIONAL':
                result, dfunc = self._rational(rdist, self.nn, self.mm)
            elif t == 'SMAP':
                c = 2.0**(self.a/self.b) - 1.0
                sx = c*rdist**self.a
                result = (1.0 + sx)**(-self.b/self.a)
                dfunc = -self.b*sx/rdist*result/(1.0 + sx)
            elif t == 'EXP':
                result = math.exp(-rdist)
                dfunc = -result
            elif t == 'GAUSSIAN':
                result = math.exp(-0.5*rdist*rdist)
                dfunc = -rdist*result
            elif t == 'CUBIC':
                t1, t2 = rdist - 1.0, 1.0 + 2.0*rdist
                result = t1*t1*t2
                dfunc = 2.0*t1*t2 + 2.0*t1*t1
            elif t == 'TANH':
                th = math.tanh(rdist)
                result = 1.0 - th
                dfunc = -(1.0 - th*th)
            elif t == 'COSINUS':
                if rdist <= 1.0:
                    result = 0.5*(math.cos(rdist*math.pi) + 1.0)
                    dfunc = -0.5*math.pi*math.sin(rdist*math.pi)
                else:
                    result, dfunc = 0.0, 0.0
            elif t == 'CUSTOM':
                result = float(self.func(rdist))
                h = 1e-30
                dfunc = float(np.imag(self.func(rdist + 1j*h))/h)
            else:
                raise ValueError(t)
            dfunc *= self.invr0
            dfunc /= distance
        return result*self.stretch + self.shift, dfunc*self.stretch

    def calculate_sqr(self, distance2):
        """(s, dfunc) from a squared distance, as the COORDINATION loop calls it."""
        if self.fast_rational:
            if distance2 >= self.dmax2:
                return 0.0, 0.0
            rdist2 = distance2*self.invr0*self.invr0
            result, dfunc = self._rational(rdist2, self.nn//2, self.mm//2)
            dfunc *= 2.0*self.invr0*self.invr0
            return result*self.stretch + self.shift, dfunc*self.stretch
        return self.calculate(math.sqrt(distance2))


def pbc_distance(a, b, box):
    """PLUMED's Pbc::distance(a, b): the nearest image of b - a (box rows are the cell vectors).
    Orthorhombic cells wrap each component; general cells take the shortest of the reduced vector
    and its neighbouring images (PLUMED's generic case also searches the neighbouring images)."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if box is None:
        return d
    box = np.asarray(box, dtype=float)
    if np.count_nonzero(box - np.diag(np.diag(box))) == 0:
        lengths = np.diag(box)
        return d - lengths*np.round(d/lengths)
    frac = d @ np.linalg.inv(box)
    d = (frac - np.round(frac)) @ box
    images = d + _SHIFTS @ box
    return images[np.argmin(np.einsum('ki,ki->k', images, images))]


_SHIFTS = np.array([(i, j, k) for i in range(-2, 3) for j in range(-2, 3) for k in range(-2, 3)], dtype=float)


def coordination(positions, switch, groupA, groupB=(), pair=False, box=None):
    """COORDINATION GROUPA=.. [GROUPB=..] [PAIR] [NOPBC when box is None]: the value and its
    derivatives with respect to the positions (shape (N, 3)). Indices are 0-based here."""
    positions = np.asarray(positions, dtype=float)
    groupA, groupB = list(groupA), list(groupB)
    if not groupB:
        pairs = [(groupA[i], groupA[j]) for i in range(len(groupA)) for j in range(i + 1, len(groupA))]
    elif pair:
        pairs = list(zip(groupA, groupB))
    else:
        pairs = [(i, j) for i in groupA for j in groupB]
    value = 0.0
    deriv = np.zeros_like(positions)
    for i, j in pairs:
        if i == j:
            continue
        d = pbc_distance(positions[i], positions[j], box)
        s, dfunc = switch.calculate_sqr(float(d @ d))
        value += s
        deriv[i] -= dfunc*d
        deriv[j] += dfunc*d
    return value, deriv
