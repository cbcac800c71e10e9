"""The periodic image that the CUDA platform takes for a pair in single and mixed precision, emulated in
NumPy, and the bound that it and float rounding put on a bias's forces (test_plumed_regtests.py).

What kernelDeltas() models: pairDelta() of platforms/cuda/src/kernels/geometry.cu on the positions as
the CUDA platform stores them in single and mixed precision (posq, float32: each coordinate rounded from
double), the box vectors rounded to float32 and 1/box[k][k] computed in double and then rounded (as
OpenMM passes invPeriodicBoxSize); OpenMM's APPLY_PERIODIC_TO_DELTA, in its triclinic form (the one
compiled when the System's default box is triclinic, as in PLUMED's rt42: z, then y, then x, each
`delta -= floor(delta*invBoxSize+0.5f)*boxVector`) or its rectangular one; then, for pairs beyond half
the smallest box width, the search of the 27 images around that one (the first strictly shorter kept).
With fused=True every `a*b+c` is one fused multiply-add, rounded once, as NVRTC compiles it by default
(OpenMM compiles with --use_fast_math, which keeps --fmad=true); fused=False rounds each operation.
precision='double' does the same in float64 (without fused rounding).

The case that matters: a pair at exactly half a box length along an axis (a lattice in a box of 6 nm
holds many). In double precision 1/6 rounds down: delta*inv+0.5 rounds to 1 for delta = +3 (the
image -3) and is 0, or just above, for -3 (which stays), so both orders of the pair take the image at
-3 and the pair's forces from (i, j) and (j, i) cancel, as in PLUMED. In float 1/6 rounds up
(0.16666667163): fused, +3 gives -3 but -3 gives +3 (fmaf(-3, inv, 0.5) = -1.5e-8, whose floor is -1);
the two orders take opposite images and their forces add instead of cancelling.

What is not modelled: the float evaluation of the switching functions and the order of the sums; they
enter forceBound() as a rounding term.
"""

import numpy as np

#: The unit roundoff of float32.
U = 2.0**-24


def _round32(s, e):
    """The float32 nearest to s + e, s a float64 and e its exact remainder (one rounding, not two)."""
    f = s.astype(np.float32)
    back = f.astype(np.float64)
    other = np.where(back < s, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf)))
    midpoint = (back + other.astype(np.float64))/2 == s
    takeOther = midpoint & (e != 0) & ((other.astype(np.float64) > back) == (e > 0))
    return np.where(takeOther, other, f)


def fma32(a, b, c):
    """fmaf(a, b, c): a*b+c of float32 numbers, rounded once to float32 (a*b is exact in float64)."""
    a, b, c = (np.asarray(x, np.float32).astype(np.float64) for x in (a, b, c))
    p = a*b
    s = p + c
    t = s - p
    return _round32(s, (p - (s - t)) + (c - t))


def _operations(precision, fused):
    if precision == 'double':
        return np.float64, lambda a, b, c: np.asarray(a, np.float64)*np.asarray(b, np.float64) + np.asarray(c, np.float64)
    if fused:
        return np.float32, fma32

    def separate(a, b, c):
        return (np.asarray(a, np.float32)*np.asarray(b, np.float32)).astype(np.float32) + np.asarray(c, np.float32)
    return np.float32, separate


def halfWidth(box):
    """Half the smallest width of the box (rows a, b, c), as CudaCoordinationCV::setImageSearchDistance."""
    a, b, c = box
    volume = abs(np.linalg.det(box))
    return 0.5*volume/max(np.linalg.norm(np.cross(b, c)), np.linalg.norm(np.cross(c, a)), np.linalg.norm(np.cross(a, b)))


def _squared(real, fma, x, y, z):
    """r^2 of a displacement as the kernels compute it: z*z + (x*x + y*y), fused where ``fma`` is."""
    return fma(z, z, fma(x, x, (y*y).astype(real)))


def kernelSquare(delta, precision='single', fused=True):
    """r^2 of displacements ``delta`` (..., 3), float64 numbers of the precision's type (as
    kernelDeltas gives them), as the kernels compute it, in the precision's type."""
    real, fma = _operations(precision, fused)
    d = np.asarray(delta, np.float64).astype(real)
    return _squared(real, fma, d[..., 0], d[..., 1], d[..., 2])


def kernelDeltas(positions, box, precision='single', fused=True, triclinic=True, dmax=np.inf):
    """deltas[i, j]: the displacement from particle i to particle j as pairDelta() computes it (see the
    module's docstring), as float64 numbers. ``box``: rows a, b, c in OpenMM's reduced form;
    ``triclinic``: whether the Context compiled the triclinic form (its default box is triclinic);
    ``dmax``: the force's cutoff (the image search runs only where half the width is below it)."""
    real, fma = _operations(precision, fused)
    p = np.asarray(positions, np.float64).astype(real)
    vectors = np.asarray(box, np.float64).astype(real)
    inverse = np.array([1.0/box[k][k] for k in range(3)]).astype(real)
    half = real(0.5)
    d = [(p[None, :, k] - p[:, None, k]).astype(real) for k in range(3)]
    if triclinic:
        scale = np.floor(fma(d[2], inverse[2], half)).astype(real)
        d = [fma(-scale, vectors[2][k], d[k]) for k in range(3)]
        scale = np.floor(fma(d[1], inverse[1], half)).astype(real)
        d = [fma(-scale, vectors[1][0], d[0]), fma(-scale, vectors[1][1], d[1]), d[2]]
        scale = np.floor(fma(d[0], inverse[0], half)).astype(real)
        d = [fma(-scale, vectors[0][0], d[0]), d[1], d[2]]
    else:
        d = [fma(-np.floor(fma(d[k], inverse[k], half)).astype(real), vectors[k][k], d[k]) for k in range(3)]

    def squared(x, y, z):
        return _squared(real, fma, x, y, z)

    d2 = squared(*d)
    width = halfWidth(np.asarray(box, np.float64))
    if triclinic and width < dmax:
        search = d2 > real(width*width)
        reduced, best = list(d), list(d)
        for a in (-1, 0, 1):
            for b in (-1, 0, 1):
                for c in (-1, 0, 1):
                    x = fma(real(c), vectors[2][0], fma(real(b), vectors[1][0], fma(real(a), vectors[0][0], reduced[0])))
                    y = fma(real(c), vectors[2][1], fma(real(b), vectors[1][1], reduced[1]))
                    z = fma(real(c), vectors[2][2], reduced[2])
                    image2 = squared(x, y, z)
                    shorter = search & (image2 < d2)
                    d2 = np.where(shorter, image2, d2)
                    best = [np.where(shorter, v, w) for v, w in zip((x, y, z), best)]
        d = best
    return np.stack(d, -1).astype(np.float64)


def nearestImages(positions, box):
    """(deltas, gap) in float64: deltas[i, j] the nearest image of x_j - x_i (of the 125 images around
    the reduced one), gap[i, j] the length of the second nearest minus that of the nearest."""
    box = np.asarray(box, np.float64)
    reduced = kernelDeltas(positions, box, 'double', triclinic=True, dmax=0.0)
    shifts = np.array([[a, b, c] for a in range(-2, 3) for b in range(-2, 3) for c in range(-2, 3)], np.float64) @ box
    lengths = np.linalg.norm(reduced[:, :, None, :] + shifts[None, None, :, :], axis=-1)
    order = np.argsort(lengths, axis=-1)
    first = np.take_along_axis(lengths, order[..., :1], -1)[..., 0]
    second = np.take_along_axis(lengths, order[..., 1:2], -1)[..., 0]
    nearest = reduced + shifts[order[..., 0]]
    return nearest, second - first


def deltaError(positions, deltas):
    """A bound on the error of a float32 displacement (its length): the positions' rounding to float32
    and the few operations of pairDelta, each at most U times the sizes they add, 8 U times the
    coordinates' lengths, the image shift's and the displacement's."""
    positions = np.asarray(positions, np.float64)
    norms = np.linalg.norm(positions, axis=1)
    raw = positions[None, :, :] - positions[:, None, :]
    return 8*U*(norms[:, None] + norms[None, :] + np.linalg.norm(raw - deltas, axis=-1) + np.linalg.norm(deltas, axis=-1))


def ambiguousPairs(positions, box):
    """pairs[i, j]: whether the image of the pair may be another in float32 than in float64, that is,
    whether its two nearest images differ in length by no more than twice deltaError (a pair at exactly
    half a box length along an axis is). Returns (ambiguous, nearest deltas)."""
    deltas, gap = nearestImages(positions, box)
    return gap <= 2*deltaError(positions, deltas), deltas


def _derivative(function, r):
    """Central difference of ds/dr (a step well above float64 rounding, below any feature here)."""
    h = 1e-6
    return (function(r + h) - function(r - h))/(2*h)


def forceBound(positions, box, terms, ordered):
    """(flips, rounding): for each atom, bounds on the difference of the bias's force on it between a
    float32 evaluation of the pairs (single and mixed precision) and an exact one.

    ``terms``: [(dE/dcv, ds/dr)] for each coordination number, all over the same pairs (ds/dr a function
    of r in nm, NumPy arrays in and out); ``ordered``: True when each unordered pair is two terms, (i, j)
    and (j, i) (PLUMED's GROUPA and GROUPB naming the same atoms), False for one group.

    flips: the sum over the atom's ambiguous pairs (ambiguousPairs; each order of the pair counted) of
    2 sum over CVs |dE/dcv| |ds/dr|: the most a pair's term can change when its image is the other one
    of the same length (the direction turns, the length stays), whether or not the CVs take the same one.

    rounding, summed over the atom's pairs: (1) the float evaluation of each CV's derivative,
    16 U |dE/dcv| (|ds/dr| + r |d2s/dr2|): r is a few roundings from its exact value (sqrt of the float
    r^2, x = (r - d0)/r0), which moves ds/dr by r |d2s/dr2| times those, and ds/dr itself is a few
    roundings and fast-math functions (__expf: 2 ulp of its result; __sinf: 2^-21.4 absolute, which
    for COSINUS is below 16 U (|ds/dr| + r |d2s/dr2|) wherever r >= r0/pi), the errors added without
    cancellation; (2) the error of the displacement, (2 |phi|/r + |phi'|) deltaError with
    phi = sum over CVs dE/dcv ds/dr, which the CVs of a pair share (the same float positions, the same
    code); where the CVs cancel (phi = 0, a CV minus its twin), so does this error.
    """
    ambiguous, deltas = ambiguousPairs(positions, box)
    n = len(deltas)
    mask = ~np.eye(n, dtype=bool) if ordered else np.triu(~np.eye(n, dtype=bool), 1)
    r = np.where(mask, np.linalg.norm(deltas, axis=-1), 1.0)
    magnitude = sum(abs(weight)*np.abs(ds(r)) for weight, ds in terms)*mask
    phi = sum(weight*ds(r) for weight, ds in terms)*mask
    dphi = sum(weight*_derivative(ds, r) for weight, ds in terms)*mask
    evaluation = 16*U*sum(abs(weight)*(np.abs(ds(r)) + r*np.abs(_derivative(ds, r))) for weight, ds in terms)
    flips = 2*magnitude*ambiguous
    rounding = (evaluation + (2*np.abs(phi)/r + np.abs(dphi))*deltaError(positions, deltas))*mask
    return flips.sum(1) + flips.sum(0), rounding.sum(1) + rounding.sum(0)


def pairForces(deltas, terms, ordered):
    """The forces of E = sum over CVs dE/dcv cv, each cv the sum of s(r) over the pairs, with the pairs'
    displacements ``deltas`` (kernelDeltas or nearestImages): the reference against which forceBound
    is checked (test_float_images.py), in NumPy."""
    n = len(deltas)
    mask = ~np.eye(n, dtype=bool) if ordered else np.triu(~np.eye(n, dtype=bool), 1)
    r = np.where(mask, np.linalg.norm(deltas, axis=-1), 1.0)
    phi = sum(weight*ds(r) for weight, ds in terms)*mask
    g = (phi/r)[..., None]*deltas
    return g.sum(1) - g.sum(0)
