"""openmmcoordination.plumed: OPES_METAD on a DISTANCE (issue 40, must-haves 4 to 6). The grid of
OPES's bias must hold every value of its CVs: a DISTANCE with the nearest image (no NOPBC) in a
periodic System has values from 0 to half the diagonal of the box's reduced form (biases.boxBounds,
checked here against NumPy's image of random vectors), a component from -h to h; a linear function
of distances and coordination numbers the corners of those ranges. Each case against NumPy: the
ranges, the bias force (one CoordinationBiasForce with the distance a CV of it), the kernels'
centres at NumPy's nearest-image distance at the deposit steps, the energy and forces against
Reference and finite differences (check_energy_and_forces); and the refusals (NOPBC, a barostat, a
System without periodic boundary conditions or none, a grid too large).

The tests that run a Context do so on each configuration of the `platform_config` fixture; the
others build no Context and run once."""

import math
import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationBiasForce
from openmmcoordination.cvfunction import CVFunction
from openmmcoordination.distancecv import DistanceCV
from openmmcoordination.plumed.biases import boxBounds

from cases import natural_spline
from gr_helpers import TOY_TEMPERATURE, toy_system
from test_cv_functions import PARTNERS, check_energy_and_forces, cv_approx, numpy_cvs, positions, tolerance

#: A triclinic box in OpenMM's reduced form (nm), small enough that particle 3's image matters.
BOX = (openmm.Vec3(0.6, 0, 0), openmm.Vec3(0.2, 0.6, 0), openmm.Vec3(-0.1, 0.15, 0.65))
#: Half the diagonal of the reduced form: the largest nearest-image distance OpenMM computes in BOX.
RMAX = 0.5*math.sqrt(0.6**2 + 0.6**2 + 0.65**2)
HEAD = 'cd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=0.3\nd: DISTANCE ATOMS=1,4\n'
OPES = 'o: OPES_METAD ARG=%s PACE=10 BARRIER=10 TEMP=300 COMPRESSION_THRESHOLD=0 %s\n'


def periodic_toy():
    """The toy System of test_cv_functions (a centre, 4 partners), its bonds periodic, in BOX."""
    system, topology = toy_system(PARTNERS)
    system.getForce(0).setUsesPeriodicBoundaryConditions(True)
    system.setDefaultPeriodicBoxVectors(*BOX)
    return system, topology


def image(delta, box=np.array([list(v) for v in BOX])):
    """OpenMM's image of a vector (or rows of vectors) in its reduced box: c, then b, then a subtracted
    (what its bonded forces take: the nearest only up to half the smallest box width)."""
    delta = np.array(delta, dtype=float)
    for k in (2, 1, 0):
        delta = delta - np.outer(np.floor(delta[..., k]/box[k][k] + 0.5), box[k]).reshape(delta.shape)
    return delta


def shortest(delta, box=np.array([list(v) for v in BOX])):
    """The shortest of the 27 images around OpenMM's image of a vector: the nearest image, as PLUMED, the
    pairs of a coordination number and a distance CV of the bias force take it."""
    reduced = image(delta)
    candidates = [reduced + i*box[0] + j*box[1] + k*box[2] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)]
    return min(candidates, key=np.linalg.norm)


def test_box_bounds_against_numpy():
    """boxBounds: the length and components of the nearest image of 50,000 random vectors (OpenMM's
    image of each, then the shortest of its neighbours) stay within the bounds: in the triclinic BOX the
    length, the x component (within 1% of its bound, a/2) and y, z (bounded by the length's bound: the
    cell reaches beyond b_y/2 and c_z/2, which the test sees); in a rectangular box every bound within
    1%, and the length's bound half the diagonal."""
    length, half = boxBounds(np.array([list(v) for v in BOX]))
    assert length == pytest.approx(RMAX, rel=1e-15) and half == pytest.approx((0.3, RMAX, RMAX), rel=1e-15)
    box = np.array([list(v) for v in BOX])
    reduced = image(np.random.default_rng(7).uniform(-3, 3, (50000, 3)))
    offsets = np.array([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)], dtype=float) @ box
    candidates = reduced[:, None, :] + offsets[None, :, :]
    vectors = candidates[np.arange(len(reduced)), np.argmin(np.sum(candidates*candidates, axis=2), axis=1)]
    lengths = np.linalg.norm(vectors, axis=1)
    largest = np.abs(vectors).max(axis=0)
    assert lengths.max() <= length and np.all(largest <= half) and largest[0] > 0.99*0.3
    assert largest[1] > 0.3 and largest[2] > 0.325                 # beyond half of b_y and of c_z
    rectangular = np.diag([0.6, 0.8, 1.0])
    length, half = boxBounds(rectangular)
    assert length == pytest.approx(0.5*math.sqrt(2.0), rel=1e-15) and half == pytest.approx((0.3, 0.4, 0.5), rel=1e-15)
    vectors = image(np.random.default_rng(8).uniform(-3, 3, (200000, 3)), rectangular)
    assert np.all(np.abs(vectors).max(axis=0) <= half) and np.all(np.abs(vectors).max(axis=0) > 0.99*np.array(half))
    assert boxBounds(np.diag([3.0, 4.0, 12.0]))[0] == pytest.approx(6.5, rel=1e-15)


def opes_action(inp):
    return next(action for action in inp.actions if action.name == 'OPES_METAD')


def run_in_paces(inp, simulation, paces, pace=10, nearest=None):
    """Step the simulation a PACE at a time (each a kernel); at each deposit NumPy's image distance 0-3,
    the coordination number cd of the images, and the distance without the image."""
    distances, cds, plain = [], [], []
    for _ in range(paces):
        inp.step(simulation, pace)
        p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
        distances.append(float(np.linalg.norm((nearest or shortest)(p[3] - p[0]))))
        cds.append(numpy_cvs(np.array([p[0]] + [p[0] + shortest(p[k] - p[0]) for k in range(1, PARTNERS + 1)]))[0])
        plain.append(float(np.linalg.norm(p[3] - p[0])))
    return np.array(distances), np.array(cds), np.array(plain)


def simulation_of(system, topology, config, seed=3):
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    simulation = app.Simulation(topology, system, integrator, config.platform(), config.properties)
    simulation.context.setPositions(positions())
    return simulation


def test_reader_opes_on_a_distance_and_a_coordination_number(platform_config):
    """OPES_METAD ARG=d,cd with d a DISTANCE of the nearest image in a triclinic box: d's grid from 0 to
    RMAX (logged, from the box), cd's from 0 to 2; one CoordinationBiasForce with d a periodic distance CV
    (no CustomCVForce); 12 kernels at NumPy's image distance and cd at the deposit steps; energy and forces
    against Reference and finite differences."""
    from openmmcoordination import plumed
    system, topology = periodic_toy()
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        inp = plumed.load(HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'), system)
    opes = inp.opes
    first, second = opes.variables
    assert (first.minValue, first.maxValue, first.gridWidth) == (0.0, pytest.approx(RMAX, rel=1e-15), 1 + math.ceil(RMAX/0.004))
    assert (second.minValue, second.maxValue, second.gridWidth) == (0.0, 2.0, 101)
    assert isinstance(first.force, DistanceCV) and first.force.usePeriodic is True
    assert isinstance(opes.force, CoordinationBiasForce) and opes.force.getDistanceParameters(0) == [0, 3, -1, True]
    assert not any(isinstance(f, openmm.CustomCVForce) for f in system.getForces())
    assert any('half the diagonal of the System\'s default periodic box (0.6 x 0.6 x 0.65 nm' in line
               for line in opes_action(inp).log)
    simulation = simulation_of(system, topology, platform_config)
    delta = positions()[3] - positions()[0]
    assert abs(np.linalg.norm(image(delta)) - np.linalg.norm(delta)) > 0.05          # the image matters here
    distances, cds, plain = run_in_paces(inp, simulation, 12)
    assert np.any(np.abs(distances - plain) > 0.05)                                  # the image matters
    centers, _, _ = opes.getKernels()
    assert len(centers) == 12
    assert list(centers[:, 0]) == cv_approx(list(distances), platform_config, 1e-12)
    assert list(centers[:, 1]) == cv_approx(list(cds), platform_config, 1e-12)
    assert opes.getCollectiveVariables(simulation) == cv_approx([distances[-1], cds[-1]], platform_config)
    check_energy_and_forces(opes, simulation, None, platform_config)


def test_reader_opes_on_a_combine_of_a_distance_and_a_coordination_number(platform_config):
    """OPES_METAD on s = d - 0.2 cd (COMBINE), UNITS LENGTH=A: d in Angstrom, s's grid from the corners
    (-0.4 to 10 RMAX), SIGMA in Angstrom; a CVFunction of a periodic DistanceCV and cd inside one
    CoordinationBiasForce; kernels at NumPy's s at the deposit steps; energy and forces as above."""
    from openmmcoordination import plumed
    system, topology = periodic_toy()
    text = ('UNITS LENGTH=A\ncd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=3\nd: DISTANCE ATOMS=1,4\n'
            's: COMBINE ARG=d,cd COEFFICIENTS=1,-0.2 PERIODIC=NO\n' + OPES % ('s', 'SIGMA=0.2'))
    inp = plumed.load(text, system)
    opes = inp.opes
    variable, = opes.variables
    assert variable.minValue == pytest.approx(-0.4, rel=1e-14) and variable.maxValue == pytest.approx(10*RMAX, rel=1e-14)
    assert variable.gridWidth == 1 + math.ceil((10*RMAX + 0.4)/0.04)
    assert isinstance(variable.force, CVFunction) and variable.force.names == ['cd', 'd']
    assert isinstance(variable.force.forces[1], DistanceCV) and variable.force.forces[1].usePeriodic is True
    assert opes.force.getEnergyExpression() == 'bias(1*((c1_d)/0.1) + (-0.2)*(c1_cd))'      # d in Angstrom
    assert opes.force.isDistance(1) and not opes.force.isDistance(0)
    assert "d: its values from 0 to %g A for the grid of s" % (10*RMAX) in '\n'.join(opes_action(inp).log)
    simulation = simulation_of(system, topology, platform_config, seed=4)
    distances, cds, _ = run_in_paces(inp, simulation, 10)
    centers, _, _ = opes.getKernels()
    assert list(centers[:, 0]) == cv_approx(list(10*distances - 0.2*cds), platform_config, 1e-12)
    cd = cds[-1]
    energy = check_energy_and_forces(opes, simulation, None, platform_config)
    # the table is getBias() - (1 - 1/gamma) kT ln(epsilon) (0 where no kernel reaches): its spline at NumPy's s
    kT = unit.MOLAR_GAS_CONSTANT_R.value_in_unit(unit.kilojoule_per_mole/unit.kelvin)*TOY_TEMPERATURE
    shift = -(1 - 1/opes.biasFactor)*kT*math.log(opes.epsilon)
    spline, _ = natural_spline(opes.getCollectiveVariableGrid()[0], opes.getBias().value_in_unit(unit.kilojoules_per_mole))
    assert shift == pytest.approx(10.0, rel=1e-12)
    assert energy == pytest.approx(spline(10*distances[-1] - 0.2*cd) + shift, rel=max(1e-6, 10*tolerance(platform_config)))


def test_reader_opes_on_a_distance_alone(platform_config):
    """OPES_METAD ARG=d alone: a periodic distance CV of one CoordinationBiasForce (no CustomCVForce, no
    warning), logged; its grid from 0 to RMAX; 5 kernels at NumPy's nearest-image distance at the deposit steps."""
    from openmmcoordination import plumed
    system, topology = periodic_toy()
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        inp = plumed.load(HEAD + OPES % ('d', 'SIGMA=0.02'), system)
    variable, = inp.opes.variables
    assert (variable.minValue, variable.maxValue) == (0.0, pytest.approx(RMAX, rel=1e-15))
    assert isinstance(inp.opes.force, CoordinationBiasForce) and inp.opes.force.getDistanceParameters(0) == [0, 3, -1, True]
    assert not any(isinstance(f, openmm.CustomCVForce) for f in system.getForces())
    assert any('a CV of the bias\'s CoordinationBiasForce itself' in line for line in opes_action(inp).log)
    distances, _, plain = run_in_paces(inp, simulation_of(system, topology, platform_config), 5)
    assert np.any(np.abs(distances - plain) > 0.05)
    assert list(inp.opes.getKernels()[0][:, 0]) == cv_approx(list(distances), platform_config, 1e-12)


def test_reader_opes_on_a_component_and_adaptive_sigma():
    """ARG=d.x,cd (COMPONENTS): d.x from -0.3 to 0.3 nm, a CV of the bias force, and so alone (ARG=d.x);
    SIGMA=ADAPTIVE: the grid's spacing SIGMA_MIN/5; OPES_METAD_EXPLORE the same grid. Host only."""
    from openmmcoordination import plumed
    system, _ = periodic_toy()
    inp = plumed.load(HEAD.replace('ATOMS=1,4', 'ATOMS=1,4 COMPONENTS') + OPES % ('d.x,cd', 'SIGMA=0.02,0.1'), system)
    first, _ = inp.opes.variables
    assert (first.minValue, first.maxValue) == (pytest.approx(-0.3, rel=1e-15), pytest.approx(0.3, rel=1e-15))
    assert inp.opes.force.getDistanceParameters(0) == [0, 3, 0, True]
    system, _ = periodic_toy()
    inp = plumed.load(HEAD.replace('ATOMS=1,4', 'ATOMS=1,4 COMPONENTS') + OPES % ('d.x', 'SIGMA=0.02'), system)
    assert inp.opes.force.getNumCollectiveVariables() == 1 and inp.opes.force.getDistanceParameters(0) == [0, 3, 0, True]
    system, _ = periodic_toy()
    inp = plumed.load(HEAD + OPES % ('d,cd', 'SIGMA=ADAPTIVE SIGMA_MIN=0.01,0.05'), system)
    first, second = inp.opes.variables
    assert (first.maxValue, first.gridWidth, second.gridWidth) == (pytest.approx(RMAX, rel=1e-15),
                                                                  1 + math.ceil(RMAX/0.002), 201)
    system, _ = periodic_toy()
    inp = plumed.load(HEAD + OPES.replace('OPES_METAD', 'OPES_METAD_EXPLORE') % ('d,cd', 'SIGMA=0.02,0.1'), system)
    assert inp.opes.explore and inp.opes.variables[0].maxValue == pytest.approx(RMAX, rel=1e-15)


def test_reader_opes_distance_box_check(platform_config):
    """A simulation whose box gives longer distances than the System's default box (which sized the
    grid) is refused by PlumedInput.step; a smaller one runs."""
    from openmmcoordination import plumed
    system, topology = periodic_toy()
    inp = plumed.load(HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'), system)
    simulation = simulation_of(system, topology, platform_config)
    simulation.context.setPeriodicBoxVectors(openmm.Vec3(0.8, 0, 0), BOX[1], BOX[2])
    with pytest.raises(ValueError, match=r'periodic box \(0.8 x 0.6 x 0.65 nm\) gives longer nearest-image distances'):
        inp.step(simulation, 10)
    simulation.context.setPeriodicBoxVectors(openmm.Vec3(0.58, 0, 0), BOX[1], BOX[2])
    inp.step(simulation, 10)
    assert len(inp.opes.getKernels()[0]) == 1


REFUSALS = [
    ('nopbc', HEAD.replace('ATOMS=1,4', 'ATOMS=1,4 NOPBC') + OPES % ('d,cd', 'SIGMA=0.02,0.1'),
     r"OPES_METAD.*ARG.*'d' depends on the DISTANCE 'd' with NOPBC: its values have no bound"),
    ('barostat', HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'),
     r"ARG.*'d' depends on the DISTANCE 'd', and the System has a MonteCarloBarostat: the box.*can grow during the run"),
    ('not periodic', HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'),
     r"'d' depends on the DISTANCE 'd' \(no periodic images although there is no NOPBC: the System uses no periodic "
     r"boundary conditions, and PLUMED under openmm-plumed then gets no box \(load\(\.\.\., periodic=True\) takes the "
     r"nearest image in the System's default box\)\): its values have no bound"),
    ('periodic false', HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'),
     r"'d' depends on the DISTANCE 'd' \(no periodic images although there is no NOPBC: load\(\.\.\., periodic=False\)\)"),
    ('no system', HEAD + OPES % ('d,cd', 'SIGMA=0.02,0.1'), r"comes from the System's periodic box; load the input with the System"),
    ('function nopbc', HEAD.replace('ATOMS=1,4', 'ATOMS=1,4 NOPBC') + 's: COMBINE ARG=d,cd PERIODIC=NO\n'
     + OPES % ('s', 'SIGMA=0.1'), r"'s' depends on the DISTANCE 'd' with NOPBC"),
    ('nonlinear', HEAD + 'f: CUSTOM ARG=d,cd FUNC=x*y PERIODIC=NO\n' + OPES % ('f', 'SIGMA=0.1'), r"'f' is not a linear function"),
    ('grid', HEAD + OPES % ('d,cd', 'SIGMA=0.0001,0.001'),
     r"SIGMA.*0.0001,0.001: a grid of %d x 10001 = %d points for the bias, more than 2000000" % (
         1 + math.ceil(RMAX/2e-5), 10001*(1 + math.ceil(RMAX/2e-5)))),
]


@pytest.mark.parametrize('name, text, message', REFUSALS, ids=[r[0] for r in REFUSALS])
def test_reader_opes_distance_refusals(name, text, message):
    """Where the range of a DISTANCE is not known, OPES_METAD on it is refused, naming ARG, the label and why."""
    from openmmcoordination import plumed
    system, _ = periodic_toy()
    if name == 'barostat':
        system.addForce(openmm.MonteCarloBarostat(1*unit.bar, TOY_TEMPERATURE))
    elif name == 'not periodic':
        system, _ = toy_system(PARTNERS)
    forces = system.getNumForces()
    with pytest.raises(plumed.PlumedInputError, match=message):
        plumed.load(text, None if name == 'no system' else system, periodic=False if name == 'periodic false' else None)
    assert system.getNumForces() == forces
