"""Distance CVs beside coordination numbers (issue 40, must-have 5): CoordinationBiasForce.addDistance
and DistanceCV in Metadynamics, OPES and CVFunction, against NumPy.

Every test that builds a Context runs on each configuration of the `platform_config` fixture. The
distances are checked against NumPy's (the nearest image by brute force over the neighbouring
cells), the coordination numbers against the force's own switching function, the forces against
finite differences of the bias force alone.
"""

import itertools
import warnings

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce, CVFunction, DistanceCV, PeriodicBoundaryWarning
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.opes import OPES

from gr_helpers import TOY_TEMPERATURE, toy_system
from helpers import finite_difference_forces
from test_cv_functions import PARTNERS, check_energy_and_forces, cv_approx, numpy_cvs, simulation_of

TRICLINIC = np.array([[1.8, 0, 0], [0.5, 1.9, 0], [-0.6, 0.7, 2.0]])


def numpy_distance(p, i, j, component=None, box=None):
    """r_j - r_i (its nearest image where box is given, by brute force over 5^3 images), its length or a component."""
    r = p[j] - p[i]
    if box is not None:
        r = r - box[2]*np.round(r[2]/box[2, 2])
        r = r - box[1]*np.round(r[1]/box[1, 1])
        r = r - box[0]*np.round(r[0]/box[0, 0])
        images = [r + a*box[0] + b*box[1] + c*box[2] for a, b, c in itertools.product(range(-2, 3), repeat=3)]
        r = min(images, key=lambda v: v.dot(v))
    return float(np.linalg.norm(r)) if component is None else float(r['xyz'.index(component)])


def test_add_distance_on_the_bias_force(platform_config):
    """Five distances (length with and without the nearest image, x, y, z) beside a coordination number in a
    triclinic box, particles a box vector apart: getCollectiveVariableValues against NumPy, the energy against
    the expression of NumPy's values, forces against finite differences."""
    config = platform_config
    rng = np.random.default_rng(40)
    p = rng.uniform(0.0, 1.5, (8, 3))
    p[5] += TRICLINIC[0] + TRICLINIC[2]
    bias = CoordinationBiasForce('0.5*k*(d-0.7)^2 + 2*dx - dy*c + dz^2 + 0.3*dn*c')
    bias.addGlobalParameter('k', 30.0)
    c = CoordinationForce([0, 1, 2, 3])
    c.setR0(0.5)
    c.setUsesPeriodicBoundaryConditions(True)
    assert bias.addDistance('d', 1, 5) == 0
    assert bias.addCollectiveVariable('c', c) == 1
    assert bias.addDistance('dx', 5, 6, 0) == 2
    assert bias.addDistance('dy', 7, 4, 1) == 3
    assert bias.addDistance('dz', 2, 5, 2) == 4
    assert bias.addDistance('dn', 1, 5, -1, False) == 5
    assert bias.getNumDistances() == 5 and bias.getDistanceParameters(5) == [1, 5, -1, False]
    system = openmm.System()
    for _ in range(8):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(*TRICLINIC)
    system.addForce(bias)
    context = config.context(system)
    context.setPositions(p)
    expected = [numpy_distance(p, 1, 5, box=TRICLINIC), None, numpy_distance(p, 5, 6, 'x', TRICLINIC),
                numpy_distance(p, 7, 4, 'y', TRICLINIC), numpy_distance(p, 2, 5, 'z', TRICLINIC), numpy_distance(p, 1, 5)]
    values = bias.getCollectiveVariableValues(context)
    expected[1] = values[1]
    assert values == cv_approx(expected, config)
    assert abs(expected[0] - expected[5]) > 0.5            # the image matters for d, not for dn
    d, cv, dx, dy, dz, dn = expected
    energy = 0.5*30*(d - 0.7)**2 + 2*dx - dy*cv + dz**2 + 0.3*dn*cv
    found = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    assert found == pytest.approx(energy, rel=max(1e-10, 10*config.value_rtol))
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    numeric = finite_difference_forces(context, p, range(8), config.fd_step)
    tol = max(1e-5, config.fd_rtol)
    assert np.allclose(forces, numeric, rtol=tol, atol=tol*np.abs(numeric).max())


def test_distance_cv_errors():
    """DistanceCV refuses bad arguments with the class, the parameter and the value; addDistance's C++ checks
    arrive as OpenMMException."""
    for args, message in [((-1, 2), "particle1 must be a particle index (an integer >= 0), got -1"),
                          ((1, 2.5), "particle2 must be a particle index (an integer >= 0), got 2.5"),
                          ((3, 3), "particle1 and particle2 must differ, got 3 twice"),
                          ((0, 1, 'w'), "component must be None (the length), 'x', 'y' or 'z', got 'w'"),
                          ((0, 1, None, 1), "usePeriodic must be None, True or False, got 1")]:
        with pytest.raises(ValueError, match='DistanceCV: ' + message.replace('(', r'\(').replace(')', r'\)')):
            DistanceCV(*args)
    with pytest.raises(ValueError, match=r"DistanceCV: component 'y' with usePeriodic=True is computed only inside"):
        DistanceCV(0, 1, 'y', usePeriodic=True).toForce()
    bias = CoordinationBiasForce('d')
    with pytest.raises(openmm.OpenMMException, match=r'CoordinationBiasForce: distance "d": component must be -1 \(the length\), '
                                                     r'0, 1 or 2 \(x, y, z\), got 4'):
        bias.addDistance('d', 0, 1, 4)
    bias.addCollectiveVariable('c', CoordinationForce([0, 1]))
    with pytest.raises(openmm.OpenMMException, match=r'"c" \(index 0\) is a CoordinationForce, not a distance'):
        bias.getDistanceParameters(0)


def test_metadynamics_on_a_distance_and_a_coordination_number(platform_config):
    """METAD ARG=d,cd with d a DistanceCV: one CoordinationBiasForce whose CV 0 is the distance (no warning,
    no CustomCVForce), the CVs equal NumPy's, hills at the recorded frames, forces by finite differences."""
    system, _ = toy_system(PARTNERS)
    variables = [BiasVariable(DistanceCV(0, 3), 0.1, 0.8, 0.02, gridWidth=71),
                 BiasVariable(CoordinationForce([0], [1, 2]), 0.0, 2.0, 0.1, gridWidth=41)]
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        meta = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50,
                            recordFrequency=50)
    assert isinstance(meta.force, CoordinationBiasForce)
    assert meta.force.isDistance(0) and not meta.force.isDistance(1)
    assert meta.force.getDistanceParameters(0) == [0, 3, -1, False]        # usePeriodic None: the System's (not periodic)
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 200)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation) == cv_approx([r03, cd], platform_config)
    assert len(meta.getHillHeights()) == 4
    frames = meta.getRecordedFrames()
    atHills = {int(step): cvs for step, cvs in zip(frames.steps, frames.collectiveVariables)}
    for k, center in enumerate(meta.getHillCenters()):
        assert list(center) == cv_approx(list(atHills[50*(k + 1)]), platform_config, 1e-12)
    check_energy_and_forces(meta, simulation, None, platform_config)
    # getState records the distance's definition; a run on another distance is another run
    state = meta.getState()
    assert state['settings']['collectiveVariables'][0] == 'DistanceCV(0, 3)'
    other = Metadynamics(toy_system(PARTNERS)[0], [BiasVariable(DistanceCV(0, 4), 0.1, 0.8, 0.02, gridWidth=71),
                                                    variables[1]], TOY_TEMPERATURE*unit.kelvin, 5.0,
                         2.0*unit.kilojoules_per_mole, 50)
    with pytest.raises(ValueError, match='setState: the state is of another run'):
        other.setState(state)


def test_opes_on_a_distance_component_and_a_coordination_number(platform_config):
    """OPES on (the z component of r_04 without the nearest image, cd), adaptive sigma from the force's running
    statistics (which include the distance): the kernels at the recorded CVs, the CVs equal NumPy's."""
    system, _ = toy_system(PARTNERS)
    variables = [BiasVariable(DistanceCV(0, 4, 'z', usePeriodic=False), -0.2, 0.8, 0.02, gridWidth=401),
                 BiasVariable(CoordinationForce([0], [1, 2]), 0.0, 2.0, 0.1, gridWidth=201)]
    opes = OPES(system, variables, TOY_TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 50, recordFrequency=50,
                compressionThreshold=0.0, adaptiveSigmaStride=100)
    assert isinstance(opes.force, CoordinationBiasForce) and opes.force.isDistance(0)
    simulation = simulation_of(system, platform_config)
    opes.step(simulation, 300)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, _ = numpy_cvs(p)
    assert opes.getCollectiveVariables(simulation) == cv_approx([float(p[4, 2] - p[0, 2]), cd], platform_config)
    centers, sigmas, _ = opes.getKernels()
    assert len(centers) >= 1 and np.all(sigmas > 0)
    # the running statistics the adaptive sigma reads hold both CVs, the distance first
    mean, m2, count = opes.force.getCVStatistics(simulation.context)
    assert len(mean) == 2 and count >= 299 and -0.2 < mean[0] < 0.8 and np.all(m2 > 0)
    frames = opes.getRecordedFrames()
    atKernels = {int(step): cvs for step, cvs in zip(frames.steps, frames.collectiveVariables)}
    assert list(centers[-1]) == cv_approx(list(atKernels[300]), platform_config, 1e-12)


def test_cv_function_of_a_distance_and_a_coordination_number(platform_config):
    """METAD on f = d - 0.5*cd (d a DistanceCV) stays one CoordinationBiasForce: bias((c1_d) - 0.5*(c1_cd))."""
    system, _ = toy_system(PARTNERS)
    function = CVFunction('d - 0.5*cd', {'d': DistanceCV(0, 3), 'cd': CoordinationForce([0], [1, 2])})
    meta = Metadynamics(system, [BiasVariable(function, -1.0, 1.0, 0.05, gridWidth=81)], TOY_TEMPERATURE*unit.kelvin,
                        5.0, 2.0*unit.kilojoules_per_mole, 50)
    assert isinstance(meta.force, CoordinationBiasForce)
    assert meta.force.getEnergyExpression() == 'bias((c1_d) - 0.5*(c1_cd))'
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 150)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(r03 - 0.5*cd, platform_config)
    check_energy_and_forces(meta, simulation, [r03 - 0.5*cd], platform_config)


def test_distance_cv_on_the_slower_path(platform_config):
    """Beside a force that is not a CoordinationForce (a torsion), a DistanceCV becomes a CustomBondForce of the
    CustomCVForce (warned once); alone it is a CV of a CoordinationBiasForce (no warning)."""
    system, _ = toy_system(PARTNERS)
    torsion = openmm.CustomTorsionForce('theta')
    torsion.addTorsion(1, 0, 2, 3, [])
    variables = [BiasVariable(DistanceCV(0, 3), 0.1, 0.8, 0.02, gridWidth=71),
                 BiasVariable(torsion, -np.pi, np.pi, 0.2, gridWidth=41)]
    with pytest.warns(RuntimeWarning, match=r'Metadynamics: a CV is computed by CustomTorsionForce, not by a CoordinationForce '
                                            r'or a DistanceCV: the bias is applied by a CustomCVForce'):
        meta = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    assert isinstance(meta.force, openmm.CustomCVForce)
    assert isinstance(meta.force.getCollectiveVariable(0), openmm.CustomBondForce)
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 100)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(numpy_cvs(p)[2], platform_config)


def test_periodic_distance_in_openmms_default_box(platform_config):
    """A distance with the nearest image in a System where nothing else is periodic and whose box is
    OpenMM's untouched 2 nm cube is wrapped into that box: a PeriodicBoundaryWarning naming the force and
    the distance, once per force; usePeriodic=None follows the System and is not warned about."""
    positions = [openmm.Vec3(0, 0, 0)]*(PARTNERS+1)
    positions[3] = openmm.Vec3(1.9, 0, 0)
    system, _ = toy_system(PARTNERS)
    bias = CoordinationBiasForce('d')
    bias.addDistance('d', 0, 3)
    system.addForce(bias)
    with pytest.warns(PeriodicBoundaryWarning, match='the distance "d" takes the nearest periodic image') as record:
        context = platform_config.context(system)
        platform_config.context(system)
    assert len([w for w in record if issubclass(w.category, PeriodicBoundaryWarning)]) == 1
    context.setPositions(positions)
    assert bias.getCollectiveVariableValues(context)[0] == pytest.approx(0.1, abs=1e-5)
    plain, _ = toy_system(PARTNERS)
    meta = Metadynamics(plain, [BiasVariable(DistanceCV(0, 3), 0.1, 2.5, 0.02, gridWidth=71)],
                        TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        context = platform_config.context(plain)
    context.setPositions(positions)
    assert meta.force.getCollectiveVariableValues(context)[0] == pytest.approx(1.9, abs=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        alone = Metadynamics(toy_system(PARTNERS)[0], [BiasVariable(DistanceCV(0, 3, 'x', usePeriodic=False), -0.5, 0.5, 0.02)],
                             TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    assert isinstance(alone.force, CoordinationBiasForce) and alone.force.getDistanceParameters(0) == [0, 3, 0, False]
    # toForce() still gives the slower path's forces
    assert isinstance(DistanceCV(0, 3, 'x', usePeriodic=False).toForce(), openmm.CustomCompoundBondForce)


def test_periodic_distance_beside_a_coordination_number_without_periodic_images(platform_config):
    """A distance with the nearest image makes the bias force periodic; its coordination CV without periodic
    images is not warned about for that (only other periodic forces of the System count). The System has
    a box of its own (in OpenMM's untouched 2 nm cube the distance would be warned about:
    test_periodic_distance_in_openmms_default_box)."""
    system, _ = toy_system(PARTNERS)
    system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in 3.0*np.eye(3)])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        meta = Metadynamics(system, [BiasVariable(DistanceCV(0, 3, usePeriodic=True), 0.1, 0.8, 0.02, gridWidth=71),
                                     BiasVariable(CoordinationForce([0], [1, 2]), 0.0, 2.0, 0.1, gridWidth=41)],
                            TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
        assert meta.force.usesPeriodicBoundaryConditions() and meta.force.getDistanceParameters(0)[3]
        simulation = simulation_of(system, platform_config)
        meta.step(simulation, 50)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(numpy_cvs(p)[2], platform_config)
