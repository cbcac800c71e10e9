"""Biases of distances with no coordination number beside them (issue 40, must-haves 4 and 5): Metadynamics
and OPES on one DistanceCV alone and on two (a length and a periodic component), and the PLUMED reader's
RESTRAINT and walls on a DISTANCE, all one CoordinationBiasForce (addDistance: PLUMED's nearest image).

The box is test_plumed_opes_distance's triclinic BOX, and the pairs are placed where OpenMM's own image
(that of its reduced box, what a CustomBondForce takes) is not the nearest: r1 - r0 = FAR, whose OpenMM
image is 0.527 nm long and whose nearest image (the shortest of the 27 around it, NumPy) 0.365 nm. The
particles have no mass, so a Simulation's steps leave them where they are put and each hill or kernel
lies at a chosen configuration. Energies and forces are checked against NumPy (the natural spline of the
bias's table at the nearest-image distance, times the unit vector of that image; in 2-D OpenMM's
Continuous2DFunction of a copy of the table, evaluated by a CustomCompoundBondForce at the two CVs given
as a particle's coordinates) and against finite differences of the bias force on the same platform.

Every test that builds a Context runs on each configuration of the `platform_config` fixture."""

import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationBiasForce, DistanceCV, Metadynamics, OPES
from openmmcoordination.metadynamics import BiasVariable

from cases import natural_spline
from helpers import finite_difference_forces
from test_plumed_opes_distance import BOX, RMAX, image, shortest

TEMPERATURE = 300.0
#: r1 - r0 (nm) of the test configuration: OpenMM's image of it is 0.527 nm long, the nearest 0.365 nm.
FAR = np.array([0.0, -0.16, 0.328])
#: The first particle of each pair.
ORIGINS = np.array([[0.05, 0.1, 0.1], [0.2, 0.3, 0.25]])
#: The configurations of the hills or kernels: FAR scaled.
SCALES = (0.8, 0.9, 0.95, 1.05)


def massless_system(particles=4):
    """``particles`` massless particles in BOX, and a Topology. No force of it is periodic: the reader's tests load
    with periodic=True (the nearest image in BOX, as PLUMED given that box), and the bias force's distances make it
    periodic."""
    system = openmm.System()
    topology = app.Topology()
    residue = topology.addResidue('P', topology.addChain())
    for k in range(particles):
        system.addParticle(0.0)
        topology.addAtom('P%d' % k, app.element.carbon, residue)
    system.setDefaultPeriodicBoxVectors(*BOX)
    return system, topology


def positions(scale=1.0):
    """Pair (0, 1) at r1 - r0 = scale*FAR, pair (2, 3) at scale*FAR too."""
    p = np.zeros((4, 3))
    p[0], p[2] = ORIGINS
    p[1] = p[0] + scale*FAR
    p[3] = p[2] + scale*FAR
    return p


def nearest(p, i, j):
    """NumPy's nearest image of r_j - r_i in BOX (the shortest of the 27 around OpenMM's image)."""
    return np.asarray(shortest(p[j] - p[i]), dtype=float)


def simulation_of(system, topology, config):
    simulation = app.Simulation(topology, system, openmm.VerletIntegrator(0.001), config.platform(), config.properties)
    simulation.context.setPositions(positions())
    return simulation


def deposit(sampler, simulation, frequency):
    """One hill or kernel at each configuration of SCALES; returns NumPy's CVs there: (length of pair (0, 1), y of
    pair (2, 3)), nearest images."""
    cvs = []
    for scale in SCALES:
        p = positions(scale)
        simulation.context.setPositions(p)
        sampler.step(simulation, frequency)
        cvs.append((np.linalg.norm(nearest(p, 0, 1)), nearest(p, 2, 3)[1]))
    return np.array(cvs)


def table(force):
    """The bias force's table: (axes, values shaped (ny, nx) or (nx,)) of its Continuous1D/2DFunction."""
    parameters = force.getTabulatedFunction(0).getFunctionParameters()
    if len(parameters) == 3:
        values, lo, hi = parameters
        return [np.linspace(lo, hi, len(values))], np.array(values)
    nx, ny, values, xlo, xhi, ylo, yhi = parameters
    return [np.linspace(xlo, xhi, nx), np.linspace(ylo, yhi, ny)], np.array(values).reshape(ny, nx)


def table_2d(force, x, y):
    """(value, d/dx, d/dy) of the force's Continuous2DFunction at (x, y), from OpenMM's own interpolation (a copy of
    the table in a CustomCompoundBondForce of one particle at (x, y, 0), on Reference)."""
    probe = openmm.CustomCompoundBondForce(1, 'bias(x1, y1)')
    probe.addBond([0], [])
    nx, ny, values, xlo, xhi, ylo, yhi = force.getTabulatedFunction(0).getFunctionParameters()
    probe.addTabulatedFunction('bias', openmm.Continuous2DFunction(nx, ny, values, xlo, xhi, ylo, yhi))
    system = openmm.System()
    system.addParticle(1.0)
    system.addForce(probe)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions([openmm.Vec3(x, y, 0.0)])
    state = context.getState(getEnergy=True, getForces=True)
    force = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)[0]
    return state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole), -force[0], -force[1]


def expected_energy_and_forces(force, p):
    """NumPy's energy and forces of the bias force at positions p: its table at the nearest-image CVs (1-D: the
    length of pair (0, 1); 2-D: that and the y of pair (2, 3)), the forces -dB/dCV times dCV/dx."""
    axes, values = table(force)
    r01 = nearest(p, 0, 1)
    d = float(np.linalg.norm(r01))
    forces = np.zeros_like(p)
    if len(axes) == 1:
        spline, slope = natural_spline(axes[0], values)
        energy, dBdd, dBdy = spline(d), slope(d), 0.0
    else:
        energy, dBdd, dBdy = table_2d(force, d, float(nearest(p, 2, 3)[1]))
    forces[1] = -dBdd*r01/d
    forces[0] = -forces[1]
    forces[3, 1] = -dBdy
    forces[2, 1] = dBdy
    return energy, forces, dBdd


def check_energy_and_forces(force, simulation, config):
    """The bias force's energy and forces in the simulation (its group) equal NumPy's (expected_energy_and_forces)
    and finite differences of a copy of the force alone on the same platform; at FAR, the energy differs from the
    table at OpenMM's image distance (the image matters)."""
    context = simulation.context
    state = context.getState(getEnergy=True, getForces=True, getPositions=True, groups={force.getForceGroup()})
    p = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    expected, expectedForces, slope = expected_energy_and_forces(force, p)
    d = float(np.linalg.norm(nearest(p, 0, 1)))
    cvError = 0.0 if config.is_double else abs(slope)*config.value_rtol*d
    assert expected > 0.5
    assert energy == pytest.approx(expected, rel=max(1e-9, config.table_value_rtol), abs=1e-9 + cvError)
    scale = np.abs(expectedForces).max()
    rtol = max(1e-8, config.table_force_rtol)
    assert np.allclose(forces, expectedForces, rtol=rtol, atol=rtol*scale), np.abs(forces - expectedForces).max()/scale
    axes, values = table(force)
    if len(axes) == 1:
        openmmImage = float(np.linalg.norm(image(p[1] - p[0])))
        assert openmmImage - d > 0.1 and abs(natural_spline(axes[0], values)[0](openmmImage) - expected) > 0.1
    assert_forces_alone_match_differences(force, p, config, scale)
    return energy


def assert_forces_alone_match_differences(force, p, config, scale):
    """A copy of ``force`` alone in a System of BOX at positions ``p`` on the configuration's platform: its forces
    against finite differences of its energy, to the configuration's tolerance of ``scale`` (the largest force)."""
    system = openmm.System()
    for _ in range(len(p)):
        system.addParticle(1.0)
    system.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(force)))
    system.setDefaultPeriodicBoxVectors(*BOX)
    alone = config.context(system)
    alone.setPositions(p)
    aloneForces = alone.getState(getForces=True).getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    numeric = finite_difference_forces(alone, p, range(len(p)), config.fd_step)
    fdTolerance = max(1e-5, config.fd_rtol)
    assert np.allclose(aloneForces, numeric, rtol=fdTolerance, atol=fdTolerance*scale), \
        np.abs(aloneForces - numeric).max()/scale


def variables(count):
    """1: the length of pair (0, 1); 2: that and the y component of pair (2, 3), both of the nearest image (the
    System has no other periodic force, so usePeriodic is given: None would take the System's choice, none)."""
    first = BiasVariable(DistanceCV(0, 1, usePeriodic=True), 0.0, RMAX, 0.03, gridWidth=121)
    if count == 1:
        return [first]
    return [first, BiasVariable(DistanceCV(2, 3, 'y', usePeriodic=True), -RMAX, RMAX, 0.04, gridWidth=121)]


def assert_one_bias_force(sampler, system, count):
    assert isinstance(sampler.force, CoordinationBiasForce)
    assert not any(isinstance(f, openmm.CustomCVForce) for f in system.getForces())
    assert sampler.force.getNumDistances() == sampler.force.getNumCollectiveVariables() == count
    assert sampler.force.getDistanceParameters(0) == [0, 1, -1, True]
    if count == 2:
        assert sampler.force.getDistanceParameters(1) == [2, 3, 1, True]
    assert sampler.force.usesPeriodicBoundaryConditions()


@pytest.mark.parametrize('count', [1, 2])
def test_metadynamics_on_distances_alone(platform_config, count, tmp_path):
    """Metadynamics on one DistanceCV alone, and on two: one CoordinationBiasForce of distances (no CustomCVForce,
    no warning); the hills at NumPy's nearest-image CVs; the energy and forces against NumPy and finite
    differences; c(t) and the recorded frames; getState/setState into a new object; a second walker reads the
    first's bias from the shared directory."""
    config = platform_config
    system, topology = massless_system()
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        meta = Metadynamics(system, variables(count), TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 10,
                            saveFrequency=10, biasDir=str(tmp_path), recordFrequency=10)
    assert_one_bias_force(meta, system, count)
    simulation = simulation_of(system, topology, config)
    cvs = deposit(meta, simulation, 10)[:, :count]
    assert meta.getHillCenters().shape == (len(SCALES), count)
    for center, expected in zip(meta.getHillCenters(), cvs):
        assert list(center) == pytest.approx(list(expected), rel=max(1e-12, config.value_rtol), abs=1e-12)
    frames = meta.getRecordedFrames()
    assert list(frames.steps) == [10, 20, 30, 40]
    assert np.allclose(np.reshape(frames.collectiveVariables, (len(SCALES), count)), cvs,
                       rtol=max(1e-12, config.value_rtol), atol=1e-12)
    assert len(meta.getReweightingFactors()[0]) == len(SCALES) + 1
    simulation.context.setPositions(positions())
    p = positions()
    expected = [np.linalg.norm(nearest(p, 0, 1)), nearest(p, 2, 3)[1]][:count]
    assert list(meta.getCollectiveVariables(simulation)) == pytest.approx(expected, rel=max(1e-12, config.value_rtol))
    check_energy_and_forces(meta.force, simulation, config)
    # getState/setState: the same bias in a new object
    state = meta.getState()
    assert state['settings']['collectiveVariables'][0] == 'DistanceCV(0, 1, usePeriodic=True)'
    (tmp_path/'again').mkdir()
    again = Metadynamics(massless_system()[0], variables(count), TEMPERATURE*unit.kelvin, 5.0,
                         2.0*unit.kilojoules_per_mole, 10, saveFrequency=10, biasDir=str(tmp_path/'again'),
                         recordFrequency=10)
    again.setState(state)
    assert np.array_equal(again.getBias(), meta.getBias())
    # a second walker in the same directory loads the first's bias at its first save
    otherSystem, otherTopology = massless_system()
    other = Metadynamics(otherSystem, variables(count), TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 10,
                         saveFrequency=10, biasDir=str(tmp_path))
    other.step(simulation_of(otherSystem, otherTopology, config), 10)
    assert len(other._loadedBiases) == 1
    assert np.abs(other.getBias() - meta.getBias()).max() < 2.0 + 1e-9      # the first's bias plus one hill of its own


@pytest.mark.parametrize('count', [1, 2])
def test_opes_on_distances_alone(platform_config, count):
    """OPES on one DistanceCV alone, and on two: one CoordinationBiasForce of distances (no CustomCVForce, no
    warning); the kernels at NumPy's nearest-image CVs; the energy and forces against NumPy and finite
    differences; getState/setState."""
    config = platform_config
    system, topology = massless_system()
    sigma = [0.03, 0.04][:count]
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        opes = OPES(system, variables(count), TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 10, sigma=sigma,
                    compressionThreshold=0.0, recordFrequency=10)
    assert_one_bias_force(opes, system, count)
    simulation = simulation_of(system, topology, config)
    cvs = deposit(opes, simulation, 10)[:, :count]
    centers, sigmas, _ = opes.getKernels()
    assert centers.shape == (len(SCALES), count)
    assert np.allclose(centers, cvs, rtol=max(1e-12, config.value_rtol), atol=1e-12)
    frames = opes.getRecordedFrames()
    assert np.allclose(np.reshape(frames.collectiveVariables, (len(SCALES), count)), cvs,
                       rtol=max(1e-12, config.value_rtol), atol=1e-12)
    simulation.context.setPositions(positions())
    check_energy_and_forces(opes.force, simulation, config)
    state = opes.getState()
    again = OPES(massless_system()[0], variables(count), TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 10,
                 sigma=sigma, compressionThreshold=0.0)
    again.setState(state)
    assert np.array_equal(again.getBias(), opes.getBias())


def test_opes_adaptive_sigma_on_a_distance_alone(platform_config):
    """OPES with the adaptive sigma on a DistanceCV alone runs on the force's own running statistics of the
    distance (getCVStatistics): their mean lies between the two nearest-image distances the particles were put
    at, their variance is positive, and so is the width of the first kernel. (The statistics' update itself is
    checked against NumPy in test_opes.py and the C++ tests.)"""
    config = platform_config
    system, topology = massless_system()
    opes = OPES(system, variables(1), TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 10, compressionThreshold=0.0,
                adaptiveSigmaStride=20)
    simulation = simulation_of(system, topology, config)
    distances = []
    for scale in (0.8, 1.0, 1.0):
        simulation.context.setPositions(positions(scale))
        opes.step(simulation, 10)
        distances.append(np.linalg.norm(nearest(positions(scale), 0, 1)))
    mean, m2, count = opes.force.getCVStatistics(simulation.context)
    assert count >= 20 and min(distances) < mean[0] < max(distances) and m2[0] > 0
    _, sigmas, _ = opes.getKernels()
    assert len(sigmas) >= 1 and sigmas[0][0] > 0


def test_distance_alone_without_periodic_boundaries(platform_config):
    """A DistanceCV alone (usePeriodic None) in a System without periodic boundary conditions: the bias force is not
    periodic, and the CV is the plain distance, not its image in the default box."""
    config = platform_config
    system, topology = massless_system()
    meta = Metadynamics(system, [BiasVariable(DistanceCV(0, 1), 0.0, 1.0, 0.03, gridWidth=101)],
                        TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 10)
    assert not meta.force.usesPeriodicBoundaryConditions() and meta.force.getDistanceParameters(0) == [0, 1, -1, False]
    simulation = simulation_of(system, topology, config)
    meta.step(simulation, 10)
    assert meta.getCollectiveVariables(simulation)[0] == pytest.approx(np.linalg.norm(FAR), rel=max(1e-12, config.value_rtol))


# The reader: RESTRAINT, walls and BIASVALUE on a DISTANCE, terms of the CoordinationBiasForce of the biases.

#: Biases on d (pair (0, 1): nearest 0.365 nm, OpenMM's image 0.527 nm), their NumPy energy E(r) and dE/dr.
READER_BIASES = [
    ('restraint', 'RESTRAINT ARG=d AT=0.4 KAPPA=300 SLOPE=20',
     lambda r: (0.5*300*(r - 0.4)**2 + 20*(r - 0.4), 300*(r - 0.4) + 20)),
    ('upper wall', 'UPPER_WALLS ARG=d AT=0.3 KAPPA=400 EXP=3 EPS=0.5 OFFSET=0.01',
     lambda r: (400*max(0, (r - 0.3 + 0.01)/0.5)**3, 3*400*max(0, (r - 0.3 + 0.01)/0.5)**2/0.5)),
    ('lower wall', 'LOWER_WALLS ARG=d AT=0.45 KAPPA=250',
     lambda r: (250*min(0, r - 0.45)**2, 2*250*min(0, r - 0.45))),
    ('biasvalue', 'BIASVALUE ARG=d', lambda r: (r, 1.0)),
]


def reader_context(system, config, p):
    context = config.context(system)
    context.setPositions(p)
    return context


def check_reader_energy_and_forces(inp, system, config, p, expected, expectedForces):
    """The System's energy and forces (the input's forces alone) against NumPy's, and the forces against finite
    differences of its energy on the same platform."""
    context = reader_context(system, config, p)
    state = context.getState(getEnergy=True, getForces=True)
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    assert abs(expected) > 0.1
    assert energy == pytest.approx(expected, rel=max(1e-12, config.value_rtol))
    scale = np.abs(expectedForces).max()
    rtol = max(1e-12, config.force_rtol)
    assert np.allclose(forces, expectedForces, rtol=rtol, atol=rtol*scale), np.abs(forces - expectedForces).max()/scale
    numeric = finite_difference_forces(context, p, range(len(p)), config.fd_step)
    fdTolerance = max(1e-6, config.fd_rtol)
    assert np.allclose(forces, numeric, rtol=fdTolerance, atol=fdTolerance*scale), np.abs(forces - numeric).max()/scale
    return context


@pytest.mark.parametrize('name, line, formula', READER_BIASES, ids=[b[0] for b in READER_BIASES])
def test_reader_bias_on_a_distance_in_a_triclinic_box(platform_config, name, line, formula):
    """`d: DISTANCE ATOMS=1,2` and a RESTRAINT, wall or BIASVALUE on it, the pair beyond half the smallest width of
    the triclinic BOX: one CoordinationBiasForce holding d (addDistance, periodic), no CustomBondForce, nothing
    logged about OpenMM's image; energy and forces equal NumPy's formula at the nearest image (the shortest of the
    27 images) and finite differences; PRINT's value of the bias (getValues) the same."""
    from openmmcoordination import plumed
    system, _ = massless_system()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        inp = plumed.load('d: DISTANCE ATOMS=1,2\nb: %s\n' % line, system, periodic=True)
    bias = inp.biasForce
    assert inp.forces == [bias] and system.getNumForces() == 1
    assert bias.getNumCollectiveVariables() == bias.getNumDistances() == 1
    assert bias.getCollectiveVariableName(0) == 'd' and bias.getDistanceParameters(0) == [0, 1, -1, True]
    assert not any("OpenMM's reduced" in note for action in inp.actions for note in action.log)
    assert "bias.addDistance('d', 0, 1, -1, True)" in inp.describe()
    p = positions()
    r01 = nearest(p, 0, 1)
    r = float(np.linalg.norm(r01))
    assert float(np.linalg.norm(image(p[1] - p[0]))) - r > 0.15                 # OpenMM's image is another
    energy, dEdr = formula(r)
    forces = np.zeros_like(p)
    forces[1] = -dEdr*r01/r
    forces[0] = -forces[1]
    context = check_reader_energy_and_forces(inp, system, platform_config, p, energy, forces)
    assert inp.getValues(context, ['d', 'b.bias']) == pytest.approx([r, energy], rel=max(1e-12, platform_config.value_rtol))


def test_reader_biases_on_periodic_components_and_nopbc(platform_config):
    """`COMPONENTS` of the nearest image (refused before: no OpenMM force computes them) under RESTRAINT and
    UPPER_WALLS, a NOPBC length under LOWER_WALLS, and a coordination number's RESTRAINT, all terms of one
    CoordinationBiasForce: energy and forces against NumPy (the components of the shortest image; the plain
    distance for NOPBC; the coordination number from the force's own switching function) and finite differences."""
    from openmmcoordination import CoordinationForce, plumed
    system, _ = massless_system()
    text = ('c: COORDINATION GROUPA=1 GROUPB=2 R_0=0.3\n'
            'e: DISTANCE ATOMS=3,4 COMPONENTS\nn: DISTANCE ATOMS=1,2 NOPBC\n'
            'RESTRAINT ARG=e.y AT=0.1 KAPPA=200\nUPPER_WALLS ARG=e.z AT=-0.2 KAPPA=150\n'
            'LOWER_WALLS ARG=n AT=0.5 KAPPA=100\nRESTRAINT ARG=c AT=0.5 KAPPA=40\n')
    inp = plumed.load(text, system, periodic=True)
    bias = inp.biasForce
    assert inp.forces == [bias] and system.getNumForces() == 1
    names = [bias.getCollectiveVariableName(k) for k in range(bias.getNumCollectiveVariables())]
    assert names == ['c', 'e_y', 'e_z', 'n']
    assert [bias.getDistanceParameters(k) for k in (1, 2, 3)] == [[2, 3, 1, True], [2, 3, 2, True], [0, 1, -1, False]]
    p = positions()
    r23 = nearest(p, 2, 3)
    assert abs(image(p[3] - p[2])[1] - r23[1]) > 0.4                             # y of OpenMM's image is another
    plain = p[1] - p[0]
    n = float(np.linalg.norm(plain))
    r01 = nearest(p, 0, 1)
    switch = CoordinationForce([0], [1])
    switch.setR0(0.3)
    s, dsdr = switch.evaluateSwitchingFunction(float(np.linalg.norm(r01)))
    energy = (0.5*200*(r23[1] - 0.1)**2 + 150*max(0, r23[2] + 0.2)**2 + 100*min(0, n - 0.5)**2
              + 0.5*40*(s - 0.5)**2)
    forces = np.zeros_like(p)
    forces[3] = [0, -200*(r23[1] - 0.1), -2*150*max(0, r23[2] + 0.2)]
    forces[2] = -forces[3]
    forces[1] = -2*100*min(0, n - 0.5)*plain/n - 40*(s - 0.5)*dsdr*r01/np.linalg.norm(r01)
    forces[0] = -forces[1]
    check_reader_energy_and_forces(inp, system, platform_config, p, energy, forces)


def test_reader_distance_restraint_with_extra_bias():
    """OPES_METAD EXTRA_BIAS naming a RESTRAINT on a DISTANCE and a wall on a coordination number: both terms in the
    one CoordinationBiasForce of the biases, in the force group OPES takes as extraBias; the Python the reader
    writes sets the group of that one force."""
    from openmmcoordination import plumed
    system, _ = massless_system()
    inp = plumed.load('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nd: DISTANCE ATOMS=1,2\n'
                      'r: RESTRAINT ARG=d AT=0.4 KAPPA=100\nw: UPPER_WALLS ARG=c AT=2.0 KAPPA=10\n'
                      'o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 EXTRA_BIAS=r,w\n', system, periodic=True)
    groups = {force.getName(): force.getForceGroup() for force in system.getForces()}
    assert groups == {'PLUMED bias': 30, 'CoordinationBiasForce': 31} and inp.opes._extraGroups == [30]
    assert inp.biasForce.getNumDistances() == 1 and inp.biasForce.getNumCollectiveVariables() == 2
    assert 'for force in system.getForces()[-1:]: force.setForceGroup(30)' in inp.describe()


def test_reader_bias_on_a_function_of_a_distance_and_a_coordination_number(platform_config):
    """RESTRAINT and UPPER_WALLS on f = CUSTOM of a DISTANCE and a coordination number, with UNITS LENGTH=A (d in
    Angstrom inside f): terms of the one CoordinationBiasForce (d a periodic distance CV of it, divided by the unit
    in the expression); energy and forces against NumPy at the nearest image and finite differences; PRINT's f.bias
    (getValues) the same."""
    from openmmcoordination import CoordinationForce, plumed
    system, _ = massless_system()
    inp = plumed.load('UNITS LENGTH=A\nc: COORDINATION GROUPA=1 GROUPB=2 R_0=3\nd: DISTANCE ATOMS=1,2\n'
                      'f: CUSTOM ARG=d,c FUNC=x-2*y PERIODIC=NO\nr: RESTRAINT ARG=f AT=3 KAPPA=2\n'
                      'w: UPPER_WALLS ARG=f AT=2.5 KAPPA=3\n', system, periodic=True)
    bias = inp.biasForce
    assert inp.forces == [bias] and bias.getNumDistances() == 1 and bias.getDistanceParameters(1) == [0, 1, -1, True]
    assert bias.getEnergyExpression() == '0.5*2*(((d/0.1))-2*(c) - 3)^2 + 3*(max(0, ((d/0.1))-2*(c) - 2.5))^2'
    p = positions()
    r01 = nearest(p, 0, 1)
    r = float(np.linalg.norm(r01))
    switch = CoordinationForce([0], [1])
    switch.setR0(0.3)
    c, dcdr = switch.evaluateSwitchingFunction(r)
    f = 10*r - 2*c
    energy = 0.5*2*(f - 3)**2 + 3*max(0, f - 2.5)**2
    dEdf = 2*(f - 3) + 6*max(0, f - 2.5)
    dEdr = dEdf*(10 - 2*dcdr)
    forces = np.zeros_like(p)
    forces[1] = -dEdr*r01/r
    forces[0] = -forces[1]
    context = check_reader_energy_and_forces(inp, system, platform_config, p, energy, forces)
    values = inp.getValues(context, ['f', 'r.bias', 'w.bias'])
    assert values == pytest.approx([f, 0.5*2*(f - 3)**2, 3*max(0, f - 2.5)**2], rel=max(1e-12, platform_config.value_rtol))
