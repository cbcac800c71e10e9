"""float_images.py, the NumPy emulation of the periodic image that CUDA takes in single and mixed
precision and the force bound built on it (used by test_plumed_regtests.test_regtest_forces), on
two-atom boxes whose answers are known by hand. No platform: NumPy only."""

import numpy as np

import float_images


def _pair(x, box):
    return np.array([[0.0, 0.0, 0.0], [x, 0.0, 0.0]]), np.asarray(box, float)


def test_fma32_rounds_once():
    """fmaf(-3, float32(1/6), 0.5) = -3*0.16666667163 + 0.5 = -1.4901161e-8 (exact, nothing cancels to 0),
    where the product rounded first gives -0.5 and the sum 0."""
    inverse = np.float32(1.0/6.0)
    assert float(inverse) > 1.0/6.0
    assert float(float_images.fma32(-3.0, inverse, 0.5)) == -3.0*float(inverse) + 0.5
    assert float(float_images.fma32(-3.0, inverse, 0.5)) < 0.0
    assert float(np.float32(-3.0)*inverse + np.float32(0.5)) == 0.0
    # (1 + 2^-23)(1 - 2^-23) 2^-24 + (1 + 2^-23) = 1 + 2^-23 + 2^-24 - 2^-70: float64 rounds it to the midpoint
    # of two float32 numbers (ties to even would give 1 + 2^-22), the remainder takes it below
    a, b, c = 1.0 + 2.0**-23, (1.0 - 2.0**-23)*2.0**-24, 1.0 + 2.0**-23
    assert a*b + c == 1.0 + 2.0**-23 + 2.0**-24 and float(np.float32(a*b + c)) == 1.0 + 2.0**-22
    assert float(float_images.fma32(a, b, c)) == 1.0 + 2.0**-23


def test_half_box_images():
    """A pair at exactly half a 6 nm box along x: in float64 both orders take the image at -3 (their
    forces cancel, as PLUMED's); fused float32 takes -3 from atom 0 and +3 from atom 1 (opposite images,
    the forces add); float32 rounded operation by operation takes -3 both ways. In a 4 nm box, where
    1/4 is exact, all three agree."""
    positions, box = _pair(3.0, np.eye(3)*6.0)
    for triclinic in (True, False):
        double = float_images.kernelDeltas(positions, box, 'double', triclinic=triclinic)
        fused = float_images.kernelDeltas(positions, box, 'single', True, triclinic=triclinic)
        separate = float_images.kernelDeltas(positions, box, 'single', False, triclinic=triclinic)
        assert double[0, 1, 0] == -3.0 and double[1, 0, 0] == -3.0
        assert fused[0, 1, 0] == -3.0 and fused[1, 0, 0] == 3.0
        assert separate[0, 1, 0] == -3.0 and separate[1, 0, 0] == -3.0
    positions, box = _pair(2.0, np.eye(3)*4.0)
    for precision, fused in (('double', False), ('single', True), ('single', False)):
        deltas = float_images.kernelDeltas(positions, box, precision, fused)
        assert deltas[0, 1, 0] == -2.0 and deltas[1, 0, 0] == -2.0


def test_ambiguous_pairs():
    """Exactly at L/2 (also at L/2 in a triclinic box's x, and at L/2 plus a float32 rounding) a pair is
    ambiguous; at 0.3 L, or 1e-3 L from L/2, it is not. The nearest image of a pair at 0.7 L is at -0.3 L."""
    cubic = np.eye(3)*6.0
    triclinic = np.array([[6.0, 0.0, 0.0], [1.0, 5.0, 0.0], [-2.0, 1.5, 4.0]])
    for x, box, expected in ((3.0, cubic, True), (3.0 + 2e-7, cubic, True), (3.0, triclinic, True),
                             (1.8, cubic, False), (3.006, cubic, False), (1.8, triclinic, False)):
        positions, box = _pair(x, box)
        ambiguous, deltas = float_images.ambiguousPairs(positions, box)
        assert ambiguous[0, 1] == expected and ambiguous[1, 0] == expected, (x, box)
        assert not ambiguous[0, 0]
    ambiguous, deltas = float_images.ambiguousPairs(*_pair(4.2, cubic))
    assert np.allclose(deltas[0, 1], [-1.8, 0.0, 0.0]) and np.allclose(deltas[1, 0], [1.8, 0.0, 0.0])


def test_force_bound_of_two_atoms():
    """E = w s(r), s = exp(-r) over the pair (one group) or over both orders: at L/2 the flip bound of each
    atom is 2 |w| |ds/dr| per ambiguous term, 2 |w| exp(-3) (one group) or twice that (both orders), and
    it holds the forces of the opposite images that fused float32 takes; at 0.3 L it is 0, and the
    rounding term is of float32's size (16 U |w| max |ds/dr| plus the displacement's error)."""
    w = 0.5
    terms = [(w, lambda r: -np.exp(-r))]
    positions, box = _pair(3.0, np.eye(3)*6.0)
    for ordered, count in ((False, 1), (True, 2)):
        flips, rounding = float_images.forceBound(positions, box, terms, ordered)
        assert np.allclose(flips, 2*count*w*np.exp(-3.0), rtol=1e-12)
        exact = float_images.pairForces(float_images.kernelDeltas(positions, box, 'double'), terms, ordered)
        fused = float_images.pairForces(float_images.kernelDeltas(positions, box, 'single', True), terms, ordered)
        change = np.abs(fused - exact).max(axis=1)
        if ordered:
            # (0, 1) and (1, 0) cancel in double; in fused float32 they add: 2 w exp(-3) on each atom
            assert np.allclose(np.abs(exact), 0.0) and np.allclose(change, 2*w*np.exp(-3.0))
        assert np.all(change <= flips + rounding)
    positions, box = _pair(1.8, np.eye(3)*6.0)
    flips, rounding = float_images.forceBound(positions, box, terms, True)
    assert np.all(flips == 0.0)
    assert np.all(rounding > 0.0) and np.all(rounding < 100*float_images.U)
