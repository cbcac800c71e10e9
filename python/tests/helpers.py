"""Plain helpers of the test suite: platform configurations and their tolerances (in one place:
PLATFORM_TOLERANCES), Systems, Contexts, energies, forces, finite differences, comparisons."""

import os
from dataclasses import dataclass, field

import numpy as np
import pytest

import openmm
from openmm import unit


@dataclass(frozen=True)
class PlatformConfig:
    """One platform configuration and the tolerances its results are held to.

    value_rtol: CV and energy against the NumPy double-precision reference, relative.
    force_rtol: forces against the NumPy reference, relative to the largest |force component|.
    fd_rtol:    forces against central finite differences of the platform's own energy, relative
                to the largest |force component| (fd_step is the step in nm).
    table_*:    value and forces when the energy uses a tabulated function: CUDA in single and mixed
                precision keeps the spline coefficients in float (OpenMM's design); in double
                precision they are double, and the tables are as exact as the rest.
    force_atol: the smallest force difference the platform resolves, kJ/mol/nm: CUDA adds forces
                into OpenMM's 64-bit fixed-point buffer in units of 2^-32 (2.3e-10) whatever the
                precision, a few adds a particle, so a force far below 1e-9 reads 0 there (tests of
                tiny forces pass it to assert_close's atol).
    """
    name: str
    precision: str = ''
    value_rtol: float = 1e-10
    force_rtol: float = 1e-10
    fd_rtol: float = 1e-6
    fd_step: float = 1e-5
    table_value_rtol: float = 1e-10
    table_force_rtol: float = 1e-10
    force_atol: float = 0.0
    properties: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def id(self):
        return self.name + ('-' + self.precision if self.precision else '')

    @property
    def is_double(self):
        return self.precision in ('', 'double')

    def platform(self):
        return openmm.Platform.getPlatformByName(self.name)

    def context(self, system, integrator=None):
        """A Context for a System on this configuration (a VerletIntegrator unless given)."""
        if integrator is None:
            integrator = openmm.VerletIntegrator(0.001)
        return openmm.Context(system, integrator, self.platform(), dict(self.properties))


# The tolerances of every platform, in one place. Reference and CPU compute in double precision,
# like the NumPy reference, so they must agree to rounding. CUDA double sums pairs in a
# different order (and in blocks), CUDA mixed and single evaluate pairs in float. CUDA double's
# forces: the largest error of the whole suite on the H100 (2026-12-05, benchmarks/test_errors.py
# over gpu_suite.sh's pytest stage) was 9.2e-10 of the largest force (test_update_table), the force
# buffer's 2^-32 kJ/mol/nm against forces of about 1 kJ/mol/nm; its values 1e-8 until measured apart.
PLATFORM_TOLERANCES = {
    'Reference':   dict(value_rtol=1e-10, force_rtol=1e-10, fd_rtol=1e-6, fd_step=1e-5, table_value_rtol=1e-10, table_force_rtol=1e-10),
    'CPU':         dict(value_rtol=1e-10, force_rtol=1e-10, fd_rtol=1e-6, fd_step=1e-5, table_value_rtol=1e-10, table_force_rtol=1e-10),
    'CUDA-double': dict(value_rtol=1e-8, force_rtol=2e-9, fd_rtol=1e-6, fd_step=1e-5, table_value_rtol=1e-8, table_force_rtol=2e-9, force_atol=1e-9),
    'CUDA-mixed':  dict(value_rtol=1e-4, force_rtol=1e-3, fd_rtol=2e-2, fd_step=1e-3, table_value_rtol=1e-4, table_force_rtol=1e-3, force_atol=1e-9),
    'CUDA-single': dict(value_rtol=1e-4, force_rtol=1e-3, fd_rtol=2e-2, fd_step=1e-3, table_value_rtol=1e-4, table_force_rtol=1e-3, force_atol=1e-9),
}


def make_system(num_particles, box=None):
    """A System of num_particles unit masses; box: 3x3 array (rows are the box vectors) or None."""
    system = openmm.System()
    for _ in range(num_particles):
        system.addParticle(1.0)
    if box is not None:
        system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.asarray(box, dtype=float)])
    return system


def set_state(context, positions, box=None):
    if box is not None:
        context.setPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.asarray(box, dtype=float)])
    context.setPositions(np.asarray(positions, dtype=float))


def energy_and_forces(context, groups=-1, forces=True):
    """(energy in kJ/mol, forces as an (N, 3) array in kJ/mol/nm or None)."""
    state = context.getState(getEnergy=True, getForces=forces, groups=groups)
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    if not forces:
        return energy, None
    return energy, state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)


def finite_difference_forces(context, positions, particles, step, box=None):
    """-dE/dx by central differences of the Context's energy, for the listed particles (other
    rows are NaN)."""
    positions = np.asarray(positions, dtype=float)
    result = np.full_like(positions, np.nan)
    for p in particles:
        for k in range(3):
            values = []
            for sign in (1, -1):
                moved = positions.copy()
                moved[p, k] += sign*step
                set_state(context, moved, box)
                values.append(energy_and_forces(context, forces=False)[0])
            result[p, k] = -(values[0] - values[1])/(2*step)
    set_state(context, positions, box)
    return result


def box_derivative_differences(values, box, positions, h):
    """PLUMED's box derivatives by central differences: row 3a + b is -dv/de_ab, e the homogeneous deformation
    of the box vectors (rows of ``box``) and of ``positions`` by (1 + e), of the vector values(box, positions)."""
    rows = []
    for a in range(3):
        for b in range(3):
            strain = np.eye(3)
            strain[a, b] += h
            plus = values(box @ strain, positions @ strain)
            strain[a, b] -= 2*h
            minus = values(box @ strain, positions @ strain)
            rows.append(-(plus - minus)/(2*h))
    return np.array(rows)


def assert_close(actual, expected, rtol, what='', atol=0.0):
    """|actual - expected| <= max(rtol * max(|expected|, scale), atol) elementwise, where scale is
    the largest |expected| entry (so near-zero components are judged on the array's own scale) and
    atol the smallest difference the platform resolves (PlatformConfig.force_atol), 0 by default."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    assert np.all(np.isfinite(actual)), (what, actual)
    scale = max(float(np.max(np.abs(expected))) if expected.size else 0.0, 1e-300)
    error = np.abs(actual - expected)
    limit = np.maximum(rtol*np.maximum(np.abs(expected), scale), atol)
    record_error(what, rtol, float(np.max(error))/scale if error.size else 0.0)
    worst = np.unravel_index(np.argmax(error - limit), error.shape) if error.ndim else ()
    assert np.all(error <= limit), '%s: max error %.3g (rtol %.1g, scale %.3g) at %s: %r vs %r' % (
        what, float(np.max(error)), rtol, scale, worst, actual[worst], expected[worst])


def record_error(what, rtol, relative):
    """Where COORDINATION_TEST_ERRORS names a folder, one line per comparison (the test, what was
    compared, the tolerance asked and the largest error relative to the array's scale) into a file
    of this process there: what a platform's tolerances could be tightened to, measured over the
    whole suite (benchmarks/gpu_suite.sh sets it and benchmarks/test_errors.py summarizes it)."""
    folder = os.environ.get('COORDINATION_TEST_ERRORS')
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    test = os.environ.get('PYTEST_CURRENT_TEST', '?').split(' (')[0]
    with open(os.path.join(folder, 'errors-%d.tsv' % os.getpid()), 'a') as f:
        f.write('%s\t%s\t%.3g\t%.4g\n' % (test, str(what).replace('\t', ' '), rtol, relative))


def random_positions(rng, num_particles, box=None, size=1.5):
    """Uniform positions: inside the box (and some outside it, to exercise wrapping), or in a
    cube of side `size` nm."""
    if box is None:
        return rng.uniform(0.0, size, (num_particles, 3))
    frac = rng.uniform(-0.3, 1.3, (num_particles, 3))
    return frac @ np.asarray(box, dtype=float)


def raises_at_evaluation(read, context, *words, waits=True):
    """An evaluation that meets a value that is not finite (a position, a CV or an energy) says so:
    read() raises OpenMMException naming the class and every word at once (Reference, CPU), or else
    (CUDA, where no evaluation waits for the GPU to check its values) the energy it returns, if
    any (None where it reads none), is NaN, never a finite number, and the Context's next energy
    read raises (the next two where read() did not wait for the GPU: a step). Returns the message."""
    def check(error):
        message = str(error)
        assert type(error) is openmm.OpenMMException
        for word in ('Coordination',) + words:
            assert word in message, 'missing %r in %r' % (word, message)
        return message
    try:
        value = read()
    except openmm.OpenMMException as error:
        return check(error)
    assert value is None or np.isnan(value), 'a finite energy %r and no exception' % value
    for _ in range(1 if waits else 2):
        try:
            value = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        except openmm.OpenMMException as error:
            return check(error)
        assert np.isnan(value), 'a finite energy %r and no exception after the evaluation' % value
    raise AssertionError('no OpenMMException from the energy reads after the evaluation')


#: Tests that compare two seeded runs in one process: OpenMM 8.2's Reference platform keeps a cached
#: Gaussian random number across a reseed (fixed in 8.3), so two runs with one seed differ after any
#: earlier simulation in the process.
same_seed = pytest.mark.skipif(tuple(int(v) for v in openmm.__version__.split('.')[:2]) < (8, 3),
                               reason='OpenMM < 8.3 does not reproduce a seeded run within one process')


class MDReplay(object):
    """A Simulation that replays recorded positions as MD steps, as PLUMED's driver replays a
    trajectory: at each step the forces are evaluated at the step's frame (as an integrator does, so
    that a bias force counts the step's CVs), then the step count advances to the next frame."""

    def __init__(self, context, frames):
        self.context, self.frames = context, frames
        context.setPositions(frames[context.getStepCount()])

    @property
    def currentStep(self):
        return self.context.getStepCount()

    def step(self, n):
        for _ in range(n):
            self.context.getState(getForces=True)
            self.context.setStepCount(self.context.getStepCount() + 1)
            self.context.setPositions(self.frames[self.context.getStepCount()])
