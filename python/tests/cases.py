"""The catalogue of switching functions, cutoffs, modes and boxes the tests sweep over, and the
builder of a matching (System, CoordinationForce, positions) with its NumPy counterpart."""

import math
from dataclasses import dataclass

import numpy as np

from openmmcoordination import CoordinationForce

import reference_impl as ref
from helpers import make_system, random_positions
from reference_impl import CustomFunction, Switching

# One representative parameter set per switching type (RATIONAL twice: m = 2n and general m).
TYPE_PARAMETERS = {
    'RATIONAL': dict(r0=0.3),
    'RATIONAL-general-m': dict(type='RATIONAL', r0=0.3, n=5, m=9),
    'EXP': dict(r0=0.12),
    'GAUSSIAN': dict(r0=0.25),
    'SMAP': dict(r0=0.3, a=3.5, b=1.5),
    'CUBIC': dict(dmax=0.7),
    'TANH': dict(r0=0.2),
    'COSINUS': dict(r0=0.6),
    'CUSTOM': dict(r0=0.3, custom=CustomFunction(lambda x: 1/(1 + x**4 + 0.5*x**2), '1/(1+x^4+0.5*x^2)')),
    'Q': dict(r0=0.25, beta=40.0, lambda_=1.6),
}

# Cutoff and shift variants: the type's default dmax (RATIONAL: PLUMED's automatic one; others:
# none), d0 > 0, an explicit dmax with stretching, and the same without (PLUMED's NOSTRETCH).
CUTOFFS = {
    'default': dict(),
    'd0': dict(d0=0.08),
    'dmax-stretch': dict(dmax=0.65),
    'dmax-nostretch': dict(dmax=0.65, stretch=False),
}

MODES = ('one', 'two', 'pairs')
BOXES = ('none', 'rectangular', 'triclinic')


def make_switching(type_name, cutoff_name='default', **overrides):
    params = dict(TYPE_PARAMETERS[type_name])
    params.setdefault('type', type_name)
    params.update(CUTOFFS[cutoff_name])
    if params['type'] == 'CUBIC':
        params['dmax'] = params.get('dmax', 0.7)
    params.update(overrides)
    return Switching(**params)


@dataclass
class Case:
    """A System with a CoordinationForce, positions and box, plus what NumPy needs."""
    system: object
    force: object
    positions: np.ndarray
    box: object
    i: np.ndarray
    j: np.ndarray
    switching: Switching

    def num_switching_pairs(self):
        """The number of pairs strictly inside the switching region (0 < s < 1)."""
        s, _ = self.switching(ref.distances(self.positions, self.i, self.j, self.box))
        return int(((s > 1e-9) & (s < 1 - 1e-9)).sum())

    def distance_to_kinks(self, particles):
        """How far (nm) the pairs that involve the given particles are from a kink of the energy,
        where finite differences fail: r = d0 (EXP, TANH), r = dmax, and, with periodic boxes,
        where the nearest image changes (half the gap between the two nearest images)."""
        involved = np.isin(self.i, particles) | np.isin(self.j, particles)
        i, j = self.i[involved], self.j[involved]
        if len(i) == 0:
            return math.inf
        r = ref.distances(self.positions, i, j, self.box)
        kinks = [self.switching.d0] + ([self.switching.cutoff] if math.isfinite(self.switching.cutoff) else [])
        distance = min(float(np.min(np.abs(r - k))) for k in kinks)
        if self.box is not None:
            distance = min(distance, 0.5*float(np.min(ref.image_gap(self.positions, i, j, self.box))))
        return distance

    def expected(self, energy=None):
        """(energy, forces, cv) from the NumPy reference."""
        return ref.energy_and_forces(self.positions, self.switching, self.i, self.j, self.box, energy)


def make_groups(rng, mode, positions, box):
    """Groups for a mode: two groups overlap (to exercise the skipping of identical indices);
    a pair list has repeated particles and pairs in both orders, half of them between near
    neighbours (so that they sample the switching region), half at random."""
    num_particles = len(positions)
    perm = rng.permutation(num_particles)
    if mode == 'one':
        return sorted(perm[:int(0.7*num_particles)].tolist()), None
    if mode == 'two':
        a = perm[:num_particles//3].tolist()
        b = perm[num_particles//4:].tolist()   # shares some particles with a
        return a, b
    npairs = 2*num_particles
    a = rng.integers(0, num_particles, npairs)
    b = rng.integers(0, num_particles, npairs)
    i, j = ref.pairs('two', range(num_particles), range(num_particles))
    r = ref.distances(positions, i, j, box).reshape(num_particles, num_particles - 1)
    neighbours = j.reshape(num_particles, num_particles - 1)
    for k in range(0, npairs, 2):
        b[k] = neighbours[a[k], np.argsort(r[a[k]])[rng.integers(0, 4)]]
    b = np.where(a == b, (b + 1) % num_particles, b)
    return a.tolist(), b.tolist()


def make_force(mode, groupA, groupB):
    if mode == 'one':
        return CoordinationForce(groupA)
    return CoordinationForce(groupA, groupB, mode == 'pairs')


def make_cases(rng, switching, modes, box_kind, num_particles=30, size=1.4):
    """One System, positions and box, with a force for each mode (its own groups) in force group k
    for modes[k]: one Context evaluates them all, each group alone (Context.getState(groups=1 << k)).
    A Case for each mode, all sharing the System."""
    box = None if box_kind == 'none' else ref.reduced_box(rng, box_kind == 'triclinic', size)
    positions = random_positions(rng, num_particles, box, size)
    system = make_system(num_particles, box)
    cases = []
    for group, mode in enumerate(modes):
        groupA, groupB = make_groups(rng, mode, positions, box)
        force = make_force(mode, groupA, groupB)
        switching.configure(force)
        force.setUsesPeriodicBoundaryConditions(box is not None)
        force.setForceGroup(group)
        system.addForce(force)
        i, j = ref.pairs(mode, groupA, groupB)
        cases.append(Case(system, force, positions, box, i, j, switching))
    return cases


def make_case(rng, switching, mode, box_kind, num_particles=30, size=1.4):
    """A System with one force (make_cases of one mode: the same draws)."""
    return make_cases(rng, switching, (mode,), box_kind, num_particles, size)[0]


def natural_spline(x, y):
    """The natural cubic spline through (x, y) (OpenMM's Continuous1DFunction interpolation):
    returns f(t) and f'(t) callables."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    h = np.diff(x)
    A = np.zeros((n, n))
    rhs = np.zeros(n)
    A[0, 0] = A[-1, -1] = 1.0
    for k in range(1, n - 1):
        A[k, k - 1] = h[k - 1]
        A[k, k] = 2*(h[k - 1] + h[k])
        A[k, k + 1] = h[k]
        rhs[k] = 6*((y[k + 1] - y[k])/h[k] - (y[k] - y[k - 1])/h[k - 1])
    M = np.linalg.solve(A, rhs)   # second derivatives

    def locate(t):
        k = int(np.clip(np.searchsorted(x, t) - 1, 0, n - 2))
        return k, (x[k + 1] - t)/h[k], (t - x[k])/h[k]

    def f(t):
        k, a, b = locate(t)
        return a*y[k] + b*y[k + 1] + ((a**3 - a)*M[k] + (b**3 - b)*M[k + 1])*h[k]**2/6

    def df(t):
        k, a, b = locate(t)
        return (y[k + 1] - y[k])/h[k] + ((1 - 3*a*a)*M[k] + (3*b*b - 1)*M[k + 1])*h[k]/6

    return f, df

