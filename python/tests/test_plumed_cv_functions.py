"""openmmcoordination.plumed with functions of CVs and distances under METAD and OPES (issue 40,
items 4 and 5): METAD and OPES_METAD on a COMBINE of two coordination numbers (c_donor - c_acceptor,
as published inputs have it), METAD on a DISTANCE beside a coordination number, on components of a
DISTANCE and on a CUSTOM of a distance and a coordination number; each against NumPy, with the
refusals of what is not computed here. The Python side (CVFunction, the CustomCVForce path) is
tested in test_cv_functions.py, whose helpers these tests share.

The tests that run a Context do so on each configuration of the `platform_config` fixture
(Reference, CPU; CUDA in three precisions where there is a GPU) with the tolerances of
helpers.PLATFORM_TOLERANCES; test_reader_opes_and_restraint_on_combine builds no Context (it checks
what the reader builds, and what it refuses), so it runs once."""

import warnings

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import CoordinationBiasForce
from openmmcoordination.cvfunction import CVFunction

from gr_helpers import TOY_TEMPERATURE, toy_system
from test_cv_functions import PARTNERS, check_energy_and_forces, cv_approx, numpy_cvs, positions, tolerance


PROTON_TRANSFER = '''cd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=0.3
ca: COORDINATION GROUPA=1 GROUPB=4,5 R_0=0.3
s: COMBINE ARG=cd,ca COEFFICIENTS=1,-1 PERIODIC=NO
%s
PRINT ARG=cd,ca,s,metad.bias STRIDE=50 FILE=COLVAR
'''


def test_reader_metad_on_combine(platform_config, tmp_path):
    """METAD on a COMBINE of two coordination numbers (c_donor - c_acceptor, as published inputs have it):
    one CoordinationBiasForce with the table called on the function; the hills at s, PLUMED's truncated
    hills; PRINT's s equal to cd - ca."""
    from openmmcoordination import plumed
    system, topology = toy_system(PARTNERS)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(3)
    inp = plumed.load(PROTON_TRANSFER % 'metad: METAD ARG=s SIGMA=0.1 HEIGHT=1.0 PACE=50 BIASFACTOR=6 TEMP=300 '
                      'GRID_MIN=-2 GRID_MAX=2 GRID_BIN=200', system, integrator=integrator)
    meta = inp.metadynamics
    assert meta.truncateHills
    # the toy's bonds, the bias and a force of energy 0 that computes the PRINTed cd, ca
    assert isinstance(meta.force, CoordinationBiasForce) and system.getNumForces() == 3
    assert meta.force.getEnergyExpression() == 'bias(1*(c1_cd) + (-1)*(c1_ca))'
    assert any('CVFunction' in line for line in inp.actions[-2].log)
    assert "# Metadynamics added its CoordinationBiasForce, bias(1*(c1_cd) + (-1)*(c1_ca)), in force group" in inp.describe()
    simulation = app.Simulation(topology, system, integrator, platform_config.platform(), platform_config.properties)
    simulation.context.setPositions(positions())
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 200)
    inp.close()
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    np.testing.assert_allclose(colvar[:, 3], colvar[:, 1] - colvar[:, 2], atol=2e-6)
    np.testing.assert_allclose(meta.getHillCenters()[:, 0], colvar[1:, 3], atol=max(1e-6, 2*tolerance(platform_config)))
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, ca, _ = numpy_cvs(p)
    assert inp.getValues(simulation.context, ['s'])[0] == cv_approx(cd - ca, platform_config)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(cd - ca, platform_config)


def test_reader_opes_and_restraint_on_combine():
    """OPES_METAD on the COMBINE: its grid spans the function's range (-2 to 2, from the corners of the
    coordination numbers' ranges); a RESTRAINT and walls on it as before; a nonlinear CUSTOM is refused
    for OPES (its range is not known). Host-only: it checks the objects the reader builds and what it
    refuses, and runs no Context."""
    from openmmcoordination import plumed
    system, _ = toy_system(PARTNERS)
    text = PROTON_TRANSFER.replace('metad.bias', 'opes.bias')
    inp = plumed.load(text % 'opes: OPES_METAD ARG=s SIGMA=0.1 PACE=50 BARRIER=20 TEMP=300\n'
                      'RESTRAINT ARG=s AT=0.5 KAPPA=10\nUPPER_WALLS ARG=s AT=1.5 KAPPA=100', system)
    variable, = inp.opes.variables
    assert (variable.minValue, variable.maxValue, variable.gridWidth) == (-2.0, 2.0, 201)
    assert isinstance(variable.force, CVFunction) and variable.force.names == ['ca', 'cd']
    with pytest.raises(plumed.PlumedInputError, match=r"'f' is not a linear function"):
        plumed.load(text.replace('s: COMBINE ARG=cd,ca COEFFICIENTS=1,-1 PERIODIC=NO',
                                            'f: CUSTOM ARG=cd,ca FUNC=x*y PERIODIC=NO').replace(',s,', ',f,')
                    % 'opes: OPES_METAD ARG=f SIGMA=0.1 PACE=50 BARRIER=20 TEMP=300', toy_system(PARTNERS)[0])
    # METAD on 2 arguments: a function and a coordination number
    inp = plumed.load(PROTON_TRANSFER % 'metad: METAD ARG=s,cd SIGMA=0.1,0.1 HEIGHT=1.0 PACE=50 BIASFACTOR=6 '
                      'TEMP=300 GRID_MIN=-2,0 GRID_MAX=2,2 GRID_BIN=40,20', toy_system(PARTNERS)[0])
    assert inp.metadynamics.force.getEnergyExpression() == 'bias(1*(c1_cd) + (-1)*(c1_ca), c2)'


def test_reader_metad_on_a_distance_and_a_coordination_number(platform_config, tmp_path):
    """METAD ARG=d,cd with d a DISTANCE (UNITS LENGTH=A: SIGMA and the grid in Angstrom): d is a CV of the bias's
    CoordinationBiasForce itself (a DistanceCV, addDistance; issue 40 must-have 5), logged, no warning; the CVs
    in the input's units; the energy and forces against Reference's (check_energy_and_forces); HILLS centres at (10 r, cd)."""
    from openmmcoordination import plumed
    system, topology = toy_system(PARTNERS)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(3)
    text = ('UNITS LENGTH=A\ncd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=3\nd: DISTANCE ATOMS=1,4 NOPBC\n'
            'metad: METAD ARG=d,cd SIGMA=0.2,0.1 HEIGHT=1.0 PACE=50 BIASFACTOR=6 TEMP=300 GRID_MIN=1,0 GRID_MAX=8,2 '
            'GRID_BIN=70,40\nPRINT ARG=d,cd,metad.bias STRIDE=50 FILE=COLVAR\n')
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        inp = plumed.load(text, system, integrator=integrator)
    meta = inp.metadynamics
    assert isinstance(meta.force, CoordinationBiasForce) and meta.force.getNumDistances() == 1
    assert meta.force.getEnergyExpression() == 'bias((c1_r)/0.1, c2)'
    assert any("a CV of the bias's CoordinationBiasForce itself" in line for line in inp.actions[3].log)
    assert "DistanceCV(0, 3, usePeriodic=False)" in inp.describe()
    simulation = app.Simulation(topology, system, integrator, platform_config.platform(), platform_config.properties)
    simulation.context.setPositions(positions())
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 150)
    inp.close()
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert meta.getCollectiveVariables(simulation) == cv_approx([10*r03, cd], platform_config)
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    np.testing.assert_allclose(meta.getHillCenters(), colvar[1:, 1:3], atol=max(1e-6, 10*tolerance(platform_config)))
    check_energy_and_forces(meta, simulation, None, platform_config)


def test_reader_distance_components(platform_config, tmp_path):
    """DISTANCE COMPONENTS NOPBC: d.x, d.y, d.z (particle 4 less particle 1, PLUMED's sign) in PRINT, in a
    RESTRAINT (a distance CV d_y of the biases' CoordinationBiasForce: energy and forces against NumPy) and in METAD
    ARG=d.x,cd (a CV of the bias's CoordinationBiasForce); COMPONENTS without NOPBC (the nearest image's) under METAD
    beside a coordination number, against NumPy in a 0.6 nm box, and in a bias or alone under METAD a periodic
    distance CV of the bias force (load(..., periodic=True): the toy System has a box but no periodic force) (test_distance_bias_alone.py checks their values); the label alone refused."""
    from openmmcoordination import plumed
    system, _ = toy_system(PARTNERS)
    text = ('cd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=0.3\nd: DISTANCE ATOMS=1,4 COMPONENTS NOPBC\n'
            'r: RESTRAINT ARG=d.y AT=0.1 KAPPA=50\n'
            'metad: METAD ARG=d.x,cd SIGMA=0.02,0.1 HEIGHT=1.0 PACE=50 BIASFACTOR=6 TEMP=300 GRID_MIN=-0.8,0 '
            'GRID_MAX=0.8,2 GRID_BIN=80,20\nPRINT ARG=d.x,d.y,d.z,cd,r.bias STRIDE=50 FILE=COLVAR\n')
    inp = plumed.load(text, system)
    restraint = inp.biasForce
    assert restraint.getNumDistances() == restraint.getNumCollectiveVariables() == 1
    assert restraint.getCollectiveVariableName(0) == 'd_y' and restraint.getDistanceParameters(0) == [0, 3, 1, False]
    assert not any(isinstance(f, (openmm.CustomBondForce, openmm.CustomCompoundBondForce)) for f in inp.forces)
    context = platform_config.context(system)
    x = positions()
    context.setPositions(x)
    delta = x[3] - x[0]
    assert inp.getValues(context, ['d.x', 'd.y', 'd.z']) == cv_approx(list(delta), platform_config, 1e-12)
    expected = 0.5*50*(delta[1] - 0.1)**2
    assert inp.getValues(context, ['r.bias'])[0] == pytest.approx(expected, rel=tolerance(platform_config, 1e-12))
    single = openmm.System()
    for _ in range(PARTNERS + 1):
        single.addParticle(1.0)
    single.addForce(openmm.XmlSerializer.deserialize(openmm.XmlSerializer.serialize(restraint)))
    alone = platform_config.context(single)
    alone.setPositions(x)
    aloneState = alone.getState(getEnergy=True, getForces=True)
    energyTolerance, forceTolerance = max(1e-12, platform_config.value_rtol), max(1e-12, platform_config.force_rtol)
    assert aloneState.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole) == pytest.approx(expected, rel=energyTolerance)
    forces = aloneState.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    assert forces[3, 1] == pytest.approx(-50*(delta[1] - 0.1), rel=forceTolerance) and forces[0, 1] == pytest.approx(
        50*(delta[1] - 0.1), rel=forceTolerance)
    assert inp.metadynamics.force.getDistanceParameters(0) == [0, 3, 0, False]       # d.x: a CV of the bias force
    assert inp.metadynamics.getCollectiveVariables(_Simulated(context))[0] == cv_approx(delta[0], platform_config, 1e-12)
    # COMPONENTS of the nearest image (no NOPBC): under METAD beside a coordination number, a periodic distance CV
    # of the bias force (PRINT the same, from the positions); a bias on one, or METAD on one alone, refused
    periodicSystem, _ = toy_system(PARTNERS)
    periodicSystem.setDefaultPeriodicBoxVectors(openmm.Vec3(0.6, 0, 0), openmm.Vec3(0, 0.6, 0), openmm.Vec3(0, 0, 0.6))
    periodic = plumed.load(text.replace(' COMPONENTS NOPBC', ' COMPONENTS').replace('r: RESTRAINT ARG=d.y AT=0.1 KAPPA=50\n', '')
                           .replace(',r.bias', ''), periodicSystem, periodic=True)   # a box, no periodic force
    assert periodic.metadynamics.force.getDistanceParameters(0) == [0, 3, 0, True]
    periodicContext = platform_config.context(periodicSystem)
    periodicContext.setPositions(x)
    image = delta - 0.6*np.round(delta/0.6)
    assert abs(image[0] - delta[0]) > 0.5                                     # x: -0.35 nm, its image 0.25 nm
    assert periodic.getValues(periodicContext, ['d.x', 'd.y', 'd.z']) == cv_approx(list(image), platform_config, 1e-12)
    assert periodic.metadynamics.getCollectiveVariables(_Simulated(periodicContext))[0] == cv_approx(image[0], platform_config,
                                                                                                     1e-12)
    biased = plumed.load('d: DISTANCE ATOMS=1,4 COMPONENTS\nRESTRAINT ARG=d.y AT=0.1 KAPPA=1\n', toy_system(PARTNERS)[0],
                         periodic=True)
    assert biased.biasForce.getDistanceParameters(0) == [0, 3, 1, True]
    alone = plumed.load('d: DISTANCE ATOMS=1,4 COMPONENTS\nMETAD ARG=d.x SIGMA=0.02 HEIGHT=1 PACE=50 BIASFACTOR=6 TEMP=300 '
                        'GRID_MIN=-0.8 GRID_MAX=0.8 GRID_BIN=80\n', toy_system(PARTNERS)[0], periodic=True)
    assert isinstance(alone.metadynamics.force, CoordinationBiasForce)
    assert alone.metadynamics.force.getDistanceParameters(0) == [0, 3, 0, True]
    with pytest.raises(plumed.PlumedInputError, match="'d' is not the label"):
        plumed.load('d: DISTANCE ATOMS=1,4 COMPONENTS NOPBC\nRESTRAINT ARG=d AT=0.1 KAPPA=1\n', toy_system(PARTNERS)[0])


class _Simulated(object):
    """What getCollectiveVariables reads of a Simulation: its context."""
    def __init__(self, context):
        self.context = context


def test_reader_metad_on_a_function_of_a_distance(platform_config, tmp_path):
    """METAD on a CUSTOM of a DISTANCE and a coordination number (UNITS LENGTH=A: d in Angstrom): a
    CVFunction of a DistanceCV and a CoordinationForce, on the bias force (the distance a CV of it, the unit
    in the expression); PRINT's f equal to NumPy's; a RESTRAINT on it a term of the biases' force (the distance
    a CV of it, the unit in the expression); OPES_METAD (in this System without periodic boundaries) on it
    refused, naming the distance (DUMPDERIVATIVES of it: test_plumed_dumpderivatives_distance.py)."""
    from openmmcoordination import plumed
    system, topology = toy_system(PARTNERS)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(4)
    head = ('UNITS LENGTH=A\ncd: COORDINATION GROUPA=1 GROUPB=2,3 R_0=3\nd: DISTANCE ATOMS=1,4\n'
            'f: CUSTOM ARG=d,cd FUNC=0.1*x*y PERIODIC=NO\n')
    inp = plumed.load(head + 'metad: METAD ARG=f SIGMA=0.05 HEIGHT=1.0 PACE=50 BIASFACTOR=6 TEMP=300 GRID_MIN=0 '
                      'GRID_MAX=2 GRID_BIN=100\nPRINT ARG=d,cd,f,metad.bias STRIDE=50 FILE=COLVAR\n', system,
                      integrator=integrator)
    meta = inp.metadynamics
    assert isinstance(meta.force, CoordinationBiasForce) and meta.force.isDistance(1)
    assert meta.force.getEnergyExpression() == 'bias(0.1*(((c1_d)/0.1))*((c1_cd)))'
    simulation = app.Simulation(topology, system, integrator, platform_config.platform(), platform_config.properties)
    simulation.context.setPositions(positions())
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 100)
    inp.close()
    p = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    cd, _, r03 = numpy_cvs(p)
    assert inp.getValues(simulation.context, ['f'])[0] == cv_approx(0.1*10*r03*cd, platform_config)
    assert meta.getCollectiveVariables(simulation)[0] == cv_approx(0.1*10*r03*cd, platform_config)
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    np.testing.assert_allclose(colvar[:, 3], 0.1*colvar[:, 1]*colvar[:, 2], atol=5e-6)
    restrained = plumed.load(head + 'RESTRAINT ARG=f AT=1 KAPPA=1\n', toy_system(PARTNERS)[0])   # test_distance_bias_alone.py
    assert restrained.biasForce.getEnergyExpression() == '0.5*1*(0.1*((d/0.1))*(cd) - 1)^2'
    for tail, match in (('OPES_METAD ARG=f SIGMA=0.1 PACE=50 BARRIER=20 TEMP=300\n', "'f' depends on the DISTANCE 'd'"),):
        with pytest.raises(plumed.PlumedInputError, match=match):
            plumed.load(head + tail, toy_system(PARTNERS)[0])
