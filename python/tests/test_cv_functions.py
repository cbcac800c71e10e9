"""Functions of coordination numbers (CVFunction) and other OpenMM Forces as variables of
Metadynamics and OPES (issue 40, items 4 and 5).

A CVFunction of CoordinationForces keeps the bias in one CoordinationBiasForce whose energy calls the
table on the expression (bias(c1_cd - c1_ca)): its energy is checked against the natural spline of
the grid at the function's NumPy value, its forces against finite differences, on Reference and
CPU. Another Force (a CustomBondForce distance) beside a coordination number goes through a
CustomCVForce (the slower path, with a warning): the same checks, and c(t), frames, walkers and
checkpoints work as with coordination numbers alone. Metadynamics(truncateHills=True) replays a
recorded trajectory against a NumPy reimplementation of PLUMED's METAD update (issue 40, item 8).

Every test that builds a Context runs on each configuration of the `platform_config` fixture
(Reference, CPU; CUDA in single, mixed and double precision where there is a GPU), held to the
tolerances of helpers.PLATFORM_TOLERANCES (value_rtol for the CVs, table_value_rtol for the bias
energy, table_force_rtol for the bias forces against the same force on Reference, whose own forces are
checked by finite differences); test_errors, which builds none, runs once.
"""

import math
import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce
from openmmcoordination.cvfunction import CVFunction
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.opes import OPES

from cases import natural_spline
from gr_helpers import TOY_TEMPERATURE, toy_system
from helpers import finite_difference_forces

PARTNERS = 4


def tolerance(config, double=1e-10):
    """The relative tolerance of a CV against NumPy on a configuration: ``double`` where it computes in
    double precision as NumPy does (Reference, CPU), its value_rtol where that is wider (CUDA)."""
    return max(double, config.value_rtol)


def cv_approx(expected, config, double=1e-10):
    """pytest.approx of a CV (a number of order 1, or a function of such) on a configuration: relative,
    and as wide in absolute terms (a difference of coordination numbers may be near 0, where float
    rounding is relative to its terms)."""
    rtol = tolerance(config, double)
    return pytest.approx(expected, rel=rtol, abs=rtol)


def positions():
    """The centre at the origin, partners 1, 2 (the donors) near it, 3, 4 (the acceptors) farther."""
    p = np.zeros((PARTNERS + 1, 3))
    p[1] = [0.24, 0.0, 0.0]
    p[2] = [0.0, 0.27, 0.01]
    p[3] = [-0.35, 0.05, 0.0]
    p[4] = [0.02, -0.02, 0.41]
    return p


def donor():
    return CoordinationForce([0], [1, 2])


def acceptor():
    return CoordinationForce([0], [3, 4])


def s(r):
    """The default switching function of CoordinationForce (its own evaluation at r)."""
    return CoordinationForce([0], [1]).evaluateSwitchingFunction(float(r))[0]


def numpy_cvs(p):
    r = np.linalg.norm(p[1:] - p[0], axis=1)
    return s(r[0]) + s(r[1]), s(r[2]) + s(r[3]), r[2]


def simulation_of(system, config, seed=5):
    topology = toy_system(PARTNERS)[1]
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    simulation = app.Simulation(topology, system, integrator, config.platform(), config.properties)
    simulation.context.setPositions(positions())
    simulation.context.setVelocitiesToTemperature(TOY_TEMPERATURE, seed)
    return simulation


def function_variable(expression='cd - 0.5*ca^2'):
    return BiasVariable(CVFunction(expression, {'cd': donor(), 'ca': acceptor()}), -2.5, 2.5, 0.1, gridWidth=101)


def check_energy_and_forces(meta, simulation, value, config):
    """The bias force's energy is the spline of the table at ``value`` (the function's NumPy value at the
    positions; None for a 2-D table, or to leave that to the caller, as for OPES, whose table is shifted);
    its energy and forces equal those of the same force (serialized, in the simulation's box) on
    the Reference platform at the same positions (the configuration's table_value_rtol and table_force_rtol),
    and Reference's forces equal -dE/dx by central finite differences of Reference's energy in double
    precision (step 1e-6 nm). The finite differences are not taken on a float platform: a step that its
    energy's rounding allows (1e-3 nm) is 5% of the width of the hills of a 2-D table of 0.02 nm Gaussians,
    and in their tails the central difference itself is off by 8% on Reference too (seen on the H200,
    2026-11-26, where a float run had moved to such a tail; issue 40)."""
    group = {meta.force.getForceGroup()}
    context = simulation.context
    state = context.getState(getEnergy=True, getForces=True, getPositions=True, groups=group)
    bias = meta.getBias().value_in_unit(unit.kilojoules_per_mole)
    grid = meta.getCollectiveVariableGrid()
    if len(grid) == 1 and value is not None:
        spline, slope = natural_spline(grid[0], bias)
        expected = spline(value[0])
        cvError = 0.0 if config.is_double else abs(slope(value[0]))*config.value_rtol*max(1.0, abs(value[0]))
    else:
        expected = None
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    if expected is not None:
        assert energy == pytest.approx(expected, rel=max(1e-6, config.table_value_rtol), abs=1e-8 + cvError)
    assert energy > 0.1
    p = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    # the bias group alone on Reference: a Context of a System with only the bias force
    system = openmm.System()
    for _ in range(PARTNERS + 1):
        system.addParticle(1.0)
    system.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(meta.force)))
    system.setDefaultPeriodicBoxVectors(*state.getPeriodicBoxVectors())      # the simulation's box, for periodic CVs
    reference = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    reference.setPositions(p)
    referenceState = reference.getState(getEnergy=True, getForces=True)
    referenceEnergy = referenceState.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    referenceForces = referenceState.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    assert energy == pytest.approx(referenceEnergy, rel=max(1e-6, config.table_value_rtol), abs=1e-8)
    scale = np.abs(referenceForces).max()
    rtol = max(1e-6, config.table_force_rtol)
    assert np.allclose(forces, referenceForces, rtol=rtol, atol=rtol*scale), np.abs(forces - referenceForces).max()/scale
    numeric = finite_difference_forces(reference, p, range(PARTNERS + 1), 1e-6)
    assert np.allclose(referenceForces, numeric, rtol=1e-5, atol=1e-5*scale), np.abs(referenceForces - numeric).max()/scale
    return energy


def test_function_metadynamics_on_the_bias_force(platform_config):
    """METAD on f = cd - 0.5 ca^2 (two coordination numbers): one CoordinationBiasForce whose energy is
    bias(f), the hills at f's NumPy values, the energy the spline of the grid at f, forces by finite
    differences, getCollectiveVariables() = f."""
    system, _ = toy_system(PARTNERS)
    meta = Metadynamics(system, [function_variable()], TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole,
                        50, recordFrequency=25)
    assert isinstance(meta.force, CoordinationBiasForce)
    assert meta.force.getEnergyExpression() == 'bias((c1_cd) - 0.5*(c1_ca)^2)'
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 300)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, ca, _ = numpy_cvs(p)
    f = cd - 0.5*ca**2
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(f, platform_config)
    assert len(meta.getHillHeights()) == 6
    check_energy_and_forces(meta, simulation, [f], platform_config)
    frames = meta.getRecordedFrames()
    assert len(frames.steps) == 12
    steps, factors = meta.getReweightingFactors()
    assert len(steps) == 7 and np.all(np.isfinite(factors.value_in_unit(unit.kilojoules_per_mole)))
    # the hills' centres are the function's values at the deposits: the frames at the same steps
    atHills = {int(step): cv for step, cv in zip(frames.steps, frames.collectiveVariables)}
    for k, center in enumerate(meta.getHillCenters()[:, 0]):
        assert center == cv_approx(atHills[50*(k + 1)], platform_config, 1e-12)


def test_function_beside_a_coordination_number(platform_config):
    """A 2-D METAD: [f = cd - ca, a coordination number of its own]; getCollectiveVariables gives (f, c)."""
    system, _ = toy_system(PARTNERS)
    variables = [BiasVariable(CVFunction('cd - ca', {'cd': donor(), 'ca': acceptor()}), -2.0, 2.0, 0.1, gridWidth=41),
                 BiasVariable(CoordinationForce([0], [1, 3]), 0.0, 2.0, 0.1, gridWidth=41)]
    meta = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    assert meta.force.getEnergyExpression() == 'bias((c1_cd) - (c1_ca), c2)'
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 200)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    r = np.linalg.norm(p[1:] - p[0], axis=1)
    cd, ca, _ = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation) == cv_approx([cd - ca, s(r[0]) + s(r[2])], platform_config)
    check_energy_and_forces(meta, simulation, None, platform_config)


def test_function_opes(platform_config):
    """OPES on f = cd - ca: the kernels at f's values, the bias at f from the kernels."""
    system, _ = toy_system(PARTNERS)
    opes = OPES(system, [BiasVariable(CVFunction('cd - ca', {'cd': donor(), 'ca': acceptor()}), -2.0, 2.0, 0.1,
                                      gridWidth=201)],
                TOY_TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 50, sigma=[0.1], recordFrequency=50,
                compressionThreshold=0.0)
    simulation = simulation_of(system, platform_config)
    opes.step(simulation, 200)
    centers, _, _ = opes.getKernels()
    frames = opes.getRecordedFrames()
    assert list(centers[:, 0]) == cv_approx(list(frames.collectiveVariables), platform_config, 1e-12)
    assert opes.getBiasAt([centers[-1, 0]]).value_in_unit(unit.kilojoules_per_mole) > opes.getBiasAt([-1.9]).value_in_unit(
        unit.kilojoules_per_mole)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, ca, _ = numpy_cvs(p)
    assert opes.getCollectiveVariables(simulation)[0] == cv_approx(cd - ca, platform_config)


def test_function_checkpoint_and_walkers(platform_config, tmp_path):
    """getState/setState and walkers sharing a biasDir with a CVFunction variable."""
    config = platform_config
    runs = []
    for seed in (1, 2):
        system, _ = toy_system(PARTNERS)
        meta = Metadynamics(system, [function_variable()], TOY_TEMPERATURE*unit.kelvin, 5.0,
                            1.0*unit.kilojoules_per_mole, 50, 100, str(tmp_path))
        runs.append((meta, simulation_of(system, config, seed)))
    for meta, simulation in runs:
        meta.step(simulation, 100)
    runs[0][0].step(runs[0][1], 100)
    first = runs[0][0]
    assert len(first._loadedBiases) == 1
    state = first.getState()
    system, _ = toy_system(PARTNERS)
    again = Metadynamics(system, [function_variable()], TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole,
                         50, 100, str(tmp_path))
    again.setState(state)
    assert np.array_equal(again.getBias(), first.getBias())
    other = Metadynamics(toy_system(PARTNERS)[0], [function_variable('cd + ca')], TOY_TEMPERATURE*unit.kelvin, 5.0,
                         1.0*unit.kilojoules_per_mole, 50)
    with pytest.raises(ValueError, match='setState: the state is of another run'):
        other.setState(state)


def distance_force():
    force = openmm.CustomBondForce('r')
    force.addBond(0, 3, [])
    return force


def test_distance_beside_coordination_metadynamics(platform_config):
    """METAD on (r_03, cd): a CustomCVForce (warned once), the energy the table's 2-D spline (checked by
    finite differences), c(t) and frames as with coordination numbers, the CVs equal to NumPy's."""
    system, _ = toy_system(PARTNERS)
    variables = [BiasVariable(distance_force(), 0.1, 0.8, 0.02, gridWidth=71),
                 BiasVariable(donor(), 0.0, 2.0, 0.1, gridWidth=41)]
    with pytest.warns(RuntimeWarning, match=r'Metadynamics: a CV is computed by CustomBondForce.*CustomCVForce '
                                            r'\(the slower path'):
        meta = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50,
                            recordFrequency=50)
    assert isinstance(meta.force, openmm.CustomCVForce)
    simulation = simulation_of(system, platform_config)
    meta.step(simulation, 200)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation) == cv_approx([r03, cd], platform_config)
    assert len(meta.getHillHeights()) == 4
    check_energy_and_forces(meta, simulation, None, platform_config)
    assert meta.getRecordedFrames().collectiveVariables.shape == (4, 2)
    assert len(meta.getReweightingFactors()[0]) == 5


def test_distance_alone_1d_matches_the_spline(platform_config):
    """1-D METAD on a distance: the energy is the natural spline of the grid at r."""
    config = platform_config
    system, _ = toy_system(PARTNERS)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        meta = Metadynamics(system, [BiasVariable(distance_force(), 0.1, 0.8, 0.02, gridWidth=71)],
                            TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    simulation = simulation_of(system, config)
    meta.step(simulation, 150)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    check_energy_and_forces(meta, simulation, [numpy_cvs(p)[2]], config)


def test_distance_beside_coordination_opes(platform_config, tmp_path):
    """OPES on (r_03, cd) through the CustomCVForce, with walkers and a checkpoint."""
    system, _ = toy_system(PARTNERS)
    variables = [BiasVariable(distance_force(), 0.1, 0.8, 0.02, gridWidth=141),
                 BiasVariable(donor(), 0.0, 2.0, 0.1, gridWidth=81)]
    with pytest.warns(RuntimeWarning, match='OPES: a CV is computed by CustomBondForce'):
        opes = OPES(system, variables, TOY_TEMPERATURE*unit.kelvin, 10*unit.kilojoules_per_mole, 50, sigma=[0.02, 0.1],
                    saveFrequency=50, biasDir=str(tmp_path))
    simulation = simulation_of(system, platform_config)
    opes.step(simulation, 200)
    centers, _, _ = opes.getKernels()
    assert centers.shape[1] == 2 and len(centers) >= 1
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert opes.getCollectiveVariables(simulation) == cv_approx([r03, cd], platform_config)
    energy = simulation.context.getState(getEnergy=True, groups={opes.force.getForceGroup()}).getPotentialEnergy()
    assert math.isfinite(energy.value_in_unit(unit.kilojoules_per_mole))
    state = opes.getState()
    assert state['settings']['collectiveVariables'][0].startswith('<?xml')


ERRORS = [
    (lambda: CVFunction('cd - ', {'cd': donor()}), r"CVFunction: expression 'cd - ': cannot read"),
    (lambda: CVFunction('cd - x', {'cd': donor()}), r"CVFunction: expression 'cd - x': 'x' in 'cd - x' is not a variable"),
    (lambda: CVFunction('cd', {'exp': donor()}), r"CVFunction: forces: the name 'exp' is not a Lepton variable name"),
    (lambda: CVFunction('cd', {'cd': 'a force'}), r"CVFunction: forces\['cd'\] must be an OpenMM Force, got str"),
    (lambda: CVFunction('', {'cd': donor()}), r"CVFunction: expression must be a non-empty string, got ''"),
    (lambda: CVFunction('cd + sqrt(-1)', {'cd': donor()}), r"CVFunction: expression 'cd \+ sqrt\(-1\)': .* has a part without "
     r"variables that is not a number"),
    (lambda: CVFunction('cd*(-1)^cd', {'cd': donor()}), r"its derivative by cd has a part without variables that is not a number"),
    (lambda: CVFunction('cd - ca', {'cd': donor(), 'ca': acceptor()}).evaluate([1.0]),
     r"^CVFunction: evaluate: values must be 2 numbers, one per force \(cd, ca\), got \[1\.0\]$"),      # was KeyError
    (lambda: CVFunction('cd - ca', {'cd': donor(), 'ca': acceptor()}).evaluate([1.0, 2.0, 3.0]),
     r'values must be 2 numbers, .*got \[1\.0, 2\.0, 3\.0\]'),                                          # was -1.0
    (lambda: CVFunction('cd', {'cd': donor()}).gradient({'cd': 1.0}), r"^CVFunction: gradient: values must be 1 numbers"),
    (lambda: Metadynamics(toy_system(PARTNERS)[0], [BiasVariable('c', 0, 1, 0.1)], 300*unit.kelvin, 5, 1.0, 10),
     r'Metadynamics: variables\[0\]\.force must be a CoordinationForce, a CVFunction of them or another OpenMM Force '
     r'that computes a CV, got str'),
    (lambda: Metadynamics(toy_system(PARTNERS)[0], [function_variable('cd*2'), function_variable()], 300*unit.kelvin, 5,
                          1.0, 10), None),
]


@pytest.mark.parametrize('make, message', ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(make, message):
    if message is None:
        make()                      # two CVFunctions, each with its own forces: accepted
        return
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_function_that_is_not_finite_in_the_run(cls):
    """A CVFunction that is not finite where the run goes (log(cd - cd)) is an OpenMMException naming the
    variable, the value and the step (as OpenMM's for a NaN coordinate), and adds nothing: the NaN hill
    or kernel made the whole bias NaN and every later step an OpenMMException of the table that named
    no variable."""
    system, topology = toy_system(PARTNERS)
    variable = BiasVariable(CVFunction('log(cd - cd)', {'cd': donor()}), -2.0, 2.0, 0.1, gridWidth=41)
    sampler = (Metadynamics(system, [variable], TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0, 10) if cls is Metadynamics else
               OPES(system, [variable], TOY_TEMPERATURE*unit.kelvin, 20.0, 10, sigma=0.1))
    simulation = app.Simulation(topology, system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(positions())
    with pytest.raises(openmm.OpenMMException, match=r"^%s: variables\[0\] is (nan|-inf) at step \d+ \(CVFunction\('log\(cd - cd\)', "
                       r"\{'cd': CoordinationForce\}\)\), which no hill or kernel can be centred on: nothing was added"
                       % cls.__name__):
        sampler.step(simulation, 20)
    assert np.all(np.isfinite(sampler.getBias()._value))
    assert len(sampler.getHillHeights() if cls is Metadynamics else sampler.getKernels()[2]) == 0


def test_function_of_a_distance_and_a_coordination_number(platform_config):
    """A CVFunction of a CustomBondForce distance and a coordination number: the CustomCVForce path;
    the value f = r03*cd equal to NumPy's, the forces equal to finite differences."""
    config = platform_config
    system, _ = toy_system(PARTNERS)
    with pytest.warns(RuntimeWarning, match='CustomCVForce'):
        meta = Metadynamics(system, [BiasVariable(CVFunction('r*cd', {'r': distance_force(), 'cd': donor()}), 0.0, 1.5,
                                                  0.05, gridWidth=151)],
                            TOY_TEMPERATURE*unit.kelvin, 5.0, 2.0*unit.kilojoules_per_mole, 50)
    assert isinstance(meta.force, openmm.CustomCVForce) and meta.force.getEnergyFunction() == 'bias((c1_r)*(c1_cd))'
    simulation = simulation_of(system, config)
    meta.step(simulation, 150)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(r03*cd, config)
    check_energy_and_forces(meta, simulation, [r03*cd], config)


def test_collective_variable_reporter_of_both_bias_forces(platform_config):
    """CollectiveVariableReporter(meta.force) reports the bias force's CVs, by name: the forces of a
    CVFunction (c1_cd, c1_ca) on the CoordinationBiasForce, and c1, c2 on the CustomCVForce path."""
    from openmmcoordination import CollectiveVariableReporter
    config = platform_config
    for variables in ([function_variable('cd - ca')],
                      [BiasVariable(distance_force(), 0.1, 0.8, 0.02, gridWidth=71), BiasVariable(donor(), 0.0, 2.0, 0.1)]):
        system, _ = toy_system(PARTNERS)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            meta = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, 50)
        simulation = simulation_of(system, config)
        reporter = CollectiveVariableReporter(None, 10, meta.force)
        simulation.reporters.append(reporter)
        meta.step(simulation, 20)
        p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
        cd, ca, r03 = numpy_cvs(p)
        if len(variables) == 1:
            assert reporter.names == ['c1_cd', 'c1_ca']
            assert list(reporter.values[-1]) == cv_approx([cd, ca], config)
        else:
            assert reporter.names == ['c1', 'c2']
            assert list(reporter.values[-1]) == cv_approx([r03, cd], config)


def _own_value(force, p):
    """The energy of a copy of a CV force alone in a Reference Context at positions p: its CV (the
    reference value, in double precision, for every configuration)."""
    system = openmm.System()
    for _ in range(PARTNERS + 1):
        system.addParticle(1.0)
    system.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(force)))
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(p)
    return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)


def test_torsion_rmsd_and_centroid_forces_beside_coordination(platform_config):
    """What openmm.app's BiasVariable takes, beside a coordination number: a CustomTorsionForce (its angle
    against NumPy's dihedral), an RMSDForce and a CustomCentroidBondForce (against each force alone);
    Metadynamics on three variables and OPES on the centroid distance, through the CustomCVForce."""
    config = platform_config
    torsion = openmm.CustomTorsionForce('theta')
    torsion.addTorsion(1, 0, 2, 3, [])
    rmsd = openmm.RMSDForce(positions(), [0, 1, 2, 3])
    centroid = openmm.CustomCentroidBondForce(2, 'distance(g1, g2)')
    centroid.addGroup([1, 2])
    centroid.addGroup([3, 4])
    centroid.addBond([0, 1], [])
    system, _ = toy_system(PARTNERS)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        meta = Metadynamics(system, [BiasVariable(torsion, -math.pi, math.pi, 0.2, gridWidth=41),
                                     BiasVariable(rmsd, 0.0, 0.5, 0.02, gridWidth=26), BiasVariable(donor(), 0.0, 2.0, 0.1)],
                            TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, 50)
    simulation = simulation_of(system, config)
    meta.step(simulation, 100)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    b1, b2, b3 = p[0] - p[1], p[2] - p[0], p[3] - p[2]
    n1, n2 = np.cross(b1, b2), np.cross(b2, b3)
    dihedral = math.atan2(np.dot(np.cross(n1, n2), b2/np.linalg.norm(b2)), np.dot(n1, n2))
    values = meta.getCollectiveVariables(simulation)
    assert values[0] == cv_approx(dihedral, config, 1e-9)
    assert values[1] == cv_approx(_own_value(rmsd, p), config, 1e-9) and values[1] > 0
    assert values[2] == cv_approx(numpy_cvs(p)[0], config)
    assert meta.getHillCenters().shape == (2, 3)
    system, _ = toy_system(PARTNERS)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        opes = OPES(system, [BiasVariable(centroid, 0.0, 1.0, 0.02, gridWidth=201)], TOY_TEMPERATURE*unit.kelvin,
                    10*unit.kilojoules_per_mole, 50, sigma=[0.02])
    simulation = simulation_of(system, config)
    opes.step(simulation, 100)
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    expected = np.linalg.norm(p[[3, 4]].mean(axis=0) - p[[1, 2]].mean(axis=0))
    assert opes.getCollectiveVariables(simulation)[0] == cv_approx(expected, config)
    # A kernel at each of the two updates; OPES merges two that lie closer than its compression
    # threshold (on OpenMM 8.2 the trajectory differs and they merged).
    assert list(opes.getHistory().steps) == [0, 50, 100]
    assert opes.getHistory().nker[-1] == len(opes.getKernels()[0]) and 1 <= len(opes.getKernels()[0]) <= 2


class _Replay(object):
    """A Simulation that replays recorded positions, as PLUMED's driver replays a trajectory: step(n)
    advances currentStep by n and sets the frame of that step."""

    def __init__(self, context, frames):
        self.context, self.frames, self.currentStep = context, frames, 0
        context.setPositions(frames[0])

    def step(self, n):
        self.currentStep += n
        self.context.setPositions(self.frames[self.currentStep])


def plumed_metad(centers, sigma, height, biasFactor, kT):
    """PLUMED's well-tempered METAD update (src/bias/MetaD.cpp) without a grid, in NumPy: at each
    deposition the height h0 exp(-V(s)/(kT (biasf - 1))), V the sum of the earlier hills at s, each
    h (exp(-d2) - exp(-6.25))/(1 - exp(-6.25)) where d2 = (s - s0)^2/(2 sigma^2) < 6.25, else 0."""
    def hill(d2):
        return np.where(d2 < 6.25, (np.exp(-np.minimum(d2, 6.25)) - math.exp(-6.25))/(1 - math.exp(-6.25)), 0.0)
    heights = []
    for s in centers:
        bias = sum(h*hill(0.5*((s - s0)/sigma)**2) for s0, h in zip(centers, heights))
        heights.append(height*math.exp(-bias/(kT*(biasFactor - 1))))
    return np.array(heights), lambda x: sum(h*hill(0.5*((x - s0)/sigma)**2) for s0, h in zip(centers, heights))


def test_truncated_hills_replaying_a_trajectory(platform_config):
    """METAD with PLUMED's hills on a recorded trajectory (partner 1 moving in and out, 2,000 steps, PACE
    20): the CVs at the depositions from NumPy (value_rtol), the heights and the bias on the grid equal
    to the NumPy reimplementation of PLUMED's update from those centres (1e-12 on every configuration:
    the update is the host's, in double precision); with whole Gaussians (the default) they differ."""
    config = platform_config
    steps = 2000
    frames = np.repeat(positions()[None], steps + 1, axis=0)
    t = np.arange(steps + 1)
    frames[:, 1, 0] = 0.3 + 0.12*np.sin(t/97.0) + 0.02*np.sin(t/7.3)
    kT = (unit.MOLAR_GAS_CONSTANT_R*TOY_TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
    results = {}
    for truncate in (True, False):
        system, _ = toy_system(PARTNERS)
        meta = Metadynamics(system, [BiasVariable(CoordinationForce([0], [1]), 0.0, 1.2, 0.05, gridWidth=241)],
                            TOY_TEMPERATURE*unit.kelvin, 8.0, 1.2*unit.kilojoules_per_mole, 20, truncateHills=truncate)
        context = config.context(system)
        meta.step(_Replay(context, frames), steps)
        results[truncate] = meta
    centers = np.array([s(np.linalg.norm(frames[k, 1] - frames[k, 0])) for k in range(20, steps + 1, 20)])
    meta = results[True]
    ours = meta.getHillCenters()[:, 0]
    assert list(ours) == cv_approx(list(centers), config, 1e-12)
    heights, bias = plumed_metad(ours, 0.05, 1.2, 8.0, kT)
    np.testing.assert_allclose(meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole), heights, rtol=1e-12)
    grid, = meta.getCollectiveVariableGrid()
    np.testing.assert_allclose(meta.getBias().value_in_unit(unit.kilojoules_per_mole), bias(grid), rtol=0,
                               atol=1e-12*heights.sum())
    whole = results[False].getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    assert np.abs(whole/heights - 1).max() > 1e-4, np.abs(whole/heights - 1).max()
