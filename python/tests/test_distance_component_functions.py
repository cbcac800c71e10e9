"""The PLUMED reader: a component of a DISTANCE (d.z of `d: DISTANCE ... COMPONENTS`) inside a CUSTOM, MATHEVAL
or COMBINE (issue 40, must-have 4), under RESTRAINT and walls, METAD (1 to 3 arguments), OPES_METAD and PRINT.
The component is a distance CV of the bias force named d_z (one per used component, shared by every function and
bias that uses it), of the nearest image unless NOPBC.

The geometry is test_distance_bias_alone's: the triclinic BOX, each pair at r1 - r0 = FAR, where OpenMM's own image
(-0.3, 0.29, -0.322) is not the nearest (0, -0.16, 0.328, the shortest of the 27 images, NumPy). Energies and
forces are checked against NumPy's formulas at the nearest image (the biases' energy; the table of METAD's and
OPES's bias through OpenMM's own Continuous1D/2D/3DFunction of a copy of it, at NumPy's CVs) and against finite
differences on the same platform. Every test that builds a Context runs on each configuration of `platform_config`."""

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce, plumed
from openmmcoordination.cvfunction import CVFunction
from openmmcoordination.distancecv import DistanceCV

from test_distance_bias_alone import (BOX, assert_forces_alone_match_differences, check_reader_energy_and_forces,
                                      massless_system, nearest, positions, reader_context)
from test_plumed_opes_distance import RMAX, image

#: The pair (0, 1) of d, the pair (2, 3) of c (and of e, with NOPBC).
HEAD = ('d: DISTANCE ATOMS=1,2 COMPONENTS\nc: COORDINATION GROUPA=3 GROUPB=4 R_0=0.3\n'
        'f: CUSTOM ARG=d.z,c VAR=z,n FUNC=z-0.1*n PERIODIC=NO\n')


def shifted_positions(scale=1.0):
    """positions(scale) with particle 3 moved by the box vector b: the nearest image of r3 - r2 is unchanged, its
    plain difference (NOPBC) is another (y 0.6 nm larger)."""
    p = positions(scale)
    p[3] += np.array(list(BOX[1]))
    return p


def periodic_massless_system():
    """massless_system() made periodic (OPES asks for it) by a CustomBondForce of no bonds."""
    system, topology = massless_system()
    periodic = openmm.CustomBondForce('0')
    periodic.setUsesPeriodicBoundaryConditions(True)
    system.addForce(periodic)
    return system, topology


def switch(r):
    """(s, ds/dr) of c's switching function (RATIONAL, R_0 0.3 nm) from the force's own evaluateSwitchingFunction."""
    force = CoordinationForce([0], [1])
    force.setR0(0.3)
    return force.evaluateSwitchingFunction(r)


def test_reader_biases_on_functions_of_components(platform_config):
    """UNITS LENGTH=A; f = d.z - c (CUSTOM), g = d.z + 2 e.y (COMBINE, e with NOPBC) under RESTRAINT and LOWER_WALLS,
    d.z alone under UPPER_WALLS: one CoordinationBiasForce whose CVs are c, d_z (once, for f, g and the wall) and
    e_y (plain), each component divided by the unit in the expression; energy and forces against NumPy at the
    nearest image (e.y the plain difference) and finite differences; PRINT's values (getValues) the same."""
    system, _ = massless_system()
    text = ('UNITS LENGTH=A\n' + HEAD.replace('R_0=0.3', 'R_0=3').replace('-0.1*n', '-n')
            + 'e: DISTANCE ATOMS=3,4 COMPONENTS NOPBC\ng: COMBINE ARG=d.z,e.y COEFFICIENTS=1,2 PERIODIC=NO\n'
            'r: RESTRAINT ARG=f AT=2 KAPPA=2\nw: UPPER_WALLS ARG=d.z AT=3 KAPPA=5\nl: LOWER_WALLS ARG=g AT=13 KAPPA=0.5\n'
            'PRINT ARG=f,g,d.z,e.y,r.bias,w.bias,l.bias FILE=COLVAR\n')
    inp = plumed.load(text, system, periodic=True)         # the nearest image in BOX, as PLUMED given the box
    bias = inp.biasForce
    assert inp.forces == [bias] and system.getNumForces() == 1
    names = [bias.getCollectiveVariableName(k) for k in range(bias.getNumCollectiveVariables())]
    assert names == ['c', 'd_z', 'e_y'] and bias.getNumDistances() == 2
    assert [bias.getDistanceParameters(k) for k in (1, 2)] == [[0, 1, 2, True], [2, 3, 1, False]]
    assert bias.getEnergyExpression() == ('0.5*2*(((d_z/0.1))-(c) - 2)^2 + 5*(max(0, (d_z) - 0.30000000000000004)/0.1)^2'
                                          ' + 0.5*(min(0, 1*(d_z/0.1) + 2*(e_y/0.1) - 13))^2')
    described = inp.describe()
    for line in ("f = '(d_z)-(c)'", "g = '1*d_z + 2*e_y'", "bias.addDistance('d_z', 0, 1, 2, True)",
                 "bias.addDistance('e_y', 2, 3, 1, False)", '# d_x, d_y, d_z in a function'):
        assert line in described
    assert inp.labels() == ['d.x', 'd.y', 'd.z', 'c', 'f', 'e.x', 'e.y', 'e.z', 'g', 'r', 'w', 'l', '@10']
    p = shifted_positions()
    r01 = nearest(p, 0, 1)
    assert abs(image(p[1] - p[0])[2] - r01[2]) > 0.6                            # z of OpenMM's image is another
    r23 = nearest(p, 2, 3)
    distance = float(np.linalg.norm(r23))
    plain = p[3] - p[2]
    assert abs(plain[1] - r23[1]) > 0.5                                        # NOPBC: the plain difference
    s, dsdr = switch(distance)
    z, y = 10*r01[2], 10*plain[1]                                              # in Angstrom
    f, g = z - s, z + 2*y
    energy = 0.5*2*(f - 2)**2 + 5*max(0, z - 3)**2 + 0.5*min(0, g - 13)**2
    dEdz = 2*(f - 2) + 10*max(0, z - 3) + min(0, g - 13)                      # per Angstrom
    dEds = -2*(f - 2)
    dEdy = 2*min(0, g - 13)
    forces = np.zeros_like(p)
    forces[1, 2] = -10*dEdz
    forces[0] = -forces[1]
    forces[3] = -dEds*dsdr*r23/distance
    forces[3, 1] -= 10*dEdy
    forces[2] = -forces[3]
    context = check_reader_energy_and_forces(inp, system, platform_config, p, energy, forces)
    values = inp.getValues(context, ['f', 'g', 'd.z', 'e.y', 'r.bias', 'w.bias', 'l.bias'])
    assert values == pytest.approx([f, g, z, y, 0.5*2*(f - 2)**2, 5*max(0, z - 3)**2, 0.5*min(0, g - 13)**2],
                                   rel=max(1e-12, platform_config.value_rtol))


def table_probe(force, cvs):
    """(value, gradient) of the force's tabulated function (its bias table: Continuous1D/2D/3DFunction) at ``cvs``,
    from OpenMM's own interpolation of a copy of it in a CustomCompoundBondForce of one particle at the CVs, on
    Reference."""
    count = len(cvs)
    parameters = force.getTabulatedFunction(0).getFunctionParameters()
    function = [openmm.Continuous1DFunction, openmm.Continuous2DFunction, openmm.Continuous3DFunction][count - 1]
    if count == 1:
        values, lo, hi = parameters
        copied = function(values, lo, hi)
    else:
        copied = function(*parameters)
    probe = openmm.CustomCompoundBondForce(1, 'bias(%s)' % ', '.join(['x1', 'y1', 'z1'][:count]))
    probe.addBond([0], [])
    probe.addTabulatedFunction('bias', copied)
    system = openmm.System()
    system.addParticle(1.0)
    system.addForce(probe)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions([openmm.Vec3(*(list(cvs) + [0.0]*(3 - count)))])
    state = context.getState(getEnergy=True, getForces=True)
    gradient = -state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)[0][:count]
    return state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole), gradient


def numpy_cvs(p, count):
    """NumPy's f = d.z - 0.1 c, d.y and c at positions p (nearest images), and their gradients (count, particles, 3)."""
    r01, r23 = nearest(p, 0, 1), nearest(p, 2, 3)
    distance = float(np.linalg.norm(r23))
    s, dsdr = switch(distance)
    gradients = np.zeros((3, len(p), 3))
    gradients[0, 1, 2], gradients[0, 0, 2] = 1.0, -1.0
    gradients[0, 3] = -0.1*dsdr*r23/distance
    gradients[0, 2] = -gradients[0, 3]
    gradients[1, 1, 1], gradients[1, 0, 1] = 1.0, -1.0
    gradients[2, 3] = dsdr*r23/distance
    gradients[2, 2] = -gradients[2, 3]
    return np.array([r01[2] - 0.1*s, r01[1], s])[:count], gradients[:count]


def check_table_bias(force, context, config, count):
    """The bias force's energy and forces (its group) equal its table at NumPy's CVs (table_probe) and the chain
    rule through NumPy's gradients of the CVs, and finite differences of a copy of the force alone on the same
    platform. Returns the energy."""
    state = context.getState(getEnergy=True, getForces=True, getPositions=True, groups={force.getForceGroup()})
    p = state.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    energy = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole/unit.nanometer)
    cvs, gradients = numpy_cvs(p, count)
    expected, slopes = table_probe(force, cvs)
    expectedForces = -np.tensordot(slopes, gradients, axes=1)
    cvError = 0.0 if config.is_double else float(np.abs(slopes).sum())*config.value_rtol
    assert expected > 0.5
    assert energy == pytest.approx(expected, rel=max(1e-9, config.table_value_rtol), abs=1e-9 + cvError)
    scale = np.abs(expectedForces).max()
    rtol = max(1e-8, config.table_force_rtol)
    assert np.allclose(forces, expectedForces, rtol=rtol, atol=rtol*scale), np.abs(forces - expectedForces).max()/scale
    assert_forces_alone_match_differences(force, p, config, scale)
    return energy


#: METAD's arguments: f, then d.y (a component alone), then c; their SIGMA, GRID_MIN, GRID_MAX, GRID_BIN.
METAD_ARGS = [('f', 0.03, -0.5, 0.5, 50), ('d.y', 0.04, -0.5, 0.5, 40), ('c', 0.1, 0.0, 1.0, 20)]
#: The configurations of the hills: positions(scale) (at 1.05 and 1.0 OpenMM's image is not the nearest).
SCALES = (0.8, 0.9, 0.95, 1.05)


@pytest.mark.parametrize('count', [1, 2, 3])
def test_reader_metad_on_a_function_of_a_component(platform_config, count, tmp_path, monkeypatch):
    """METAD ARG=f (f = d.z - 0.1 c), with d.y and c beside it for 2 and 3 arguments: one CoordinationBiasForce whose
    variable f is a CVFunction of DistanceCV(0, 1, 'z', periodic) and c; the hills at NumPy's nearest-image CVs; the
    energy and forces against the table at NumPy's CVs and finite differences; PRINT's f, d.z and metad.bias; a
    RESTRAINT on f in the same input a term of the biases' force with the CV d_z."""
    monkeypatch.chdir(tmp_path)
    config = platform_config
    system, topology = massless_system()
    args = METAD_ARGS[:count]
    column = lambda k: ','.join(str(a[k]) for a in args)
    text = HEAD + ('r: RESTRAINT ARG=f AT=0.1 KAPPA=50\nmetad: METAD ARG=%s SIGMA=%s HEIGHT=2 PACE=10 BIASFACTOR=5 TEMP=300 '
                   'GRID_MIN=%s GRID_MAX=%s GRID_BIN=%s\nPRINT ARG=f,d.z,metad.bias,r.bias FILE=COLVAR\n') % tuple(
                       column(k) for k in range(5))
    inp = plumed.load(text, system, periodic=True)         # the nearest image in BOX, as PLUMED given the box
    meta = inp.metadynamics
    variable = meta.variables[0]
    assert isinstance(meta.force, CoordinationBiasForce) and isinstance(variable.force, CVFunction)
    assert variable.force.names == ['c', 'd_z']
    cv = variable.force.forces[1]
    assert isinstance(cv, DistanceCV) and (cv.particle1, cv.particle2, cv.component, cv.usePeriodic) == (0, 1, 'z', True)
    assert not any(isinstance(f, openmm.CustomCVForce) for f in system.getForces())
    assert inp.biasForce.getEnergyExpression() == '0.5*50*(((d_z))-0.1*(c) - 0.1)^2'
    assert inp.biasForce.getDistanceParameters(1) == [0, 1, 2, True]
    assert "CVFunction('(d_z)-0.1*(c)', {'c': c, 'd_z': DistanceCV(0, 1, 'z', usePeriodic=True)})" in inp.describe()
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001), config.platform(),
                                       config.properties)
    simulation.context.setPositions(positions())
    inp.attach(simulation)
    expected = []
    for scale in SCALES:
        simulation.context.setPositions(positions(scale))
        inp.step(simulation, 10)
        expected.append(numpy_cvs(positions(scale), count)[0])
    centers = meta.getHillCenters()
    assert centers.shape == (len(SCALES), count)
    assert np.allclose(centers, expected, rtol=max(1e-12, config.value_rtol), atol=1e-12)
    inp.close()
    simulation.context.setPositions(positions())
    energy = check_table_bias(meta.force, simulation.context, config, count)
    p = positions()
    f, r01 = numpy_cvs(p, 1)[0][0], nearest(p, 0, 1)
    values = inp.getValues(simulation.context, ['f', 'd.z', 'metad.bias', 'r.bias'])
    assert values == pytest.approx([f, r01[2], energy, 0.5*50*(f - 0.1)**2], rel=max(1e-9, config.value_rtol))


def test_reader_opes_on_a_combine_of_a_component(platform_config, tmp_path, monkeypatch):
    """OPES_METAD on s = d.z - 0.1 c (COMBINE): s's grid from the corners of d.z's range (-RMAX to RMAX: c of BOX
    does not lie along z) and c's (0 to 1), logged under d.z's name; the kernels at NumPy's s; the energy and forces
    against the table at NumPy's s and finite differences; PRINT's s and o.bias."""
    monkeypatch.chdir(tmp_path)
    config = platform_config
    system, topology = periodic_massless_system()
    text = HEAD + ('s: COMBINE ARG=d.z,c COEFFICIENTS=1,-0.1 PERIODIC=NO\n'
                   'o: OPES_METAD ARG=s PACE=10 BARRIER=10 TEMP=300 SIGMA=0.03 COMPRESSION_THRESHOLD=0\n'
                   'PRINT ARG=s,o.bias FILE=COLVAR\n')
    inp = plumed.load(text, system)
    opes = inp.opes
    variable, = opes.variables
    assert variable.minValue == pytest.approx(-RMAX - 0.1, rel=1e-14) and variable.maxValue == pytest.approx(RMAX, rel=1e-14)
    assert variable.force.names == ['c', 'd_z'] and variable.force.forces[1].component == 'z'
    log = '\n'.join(next(a for a in inp.actions if a.name == 'OPES_METAD').log)
    assert 'd.z: its values from %g to %g nm for the grid of s' % (-RMAX, RMAX) in log
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001), config.platform(),
                                       config.properties)
    simulation.context.setPositions(positions())
    expected = []
    for scale in SCALES:
        simulation.context.setPositions(positions(scale))
        inp.step(simulation, 10)
        expected.append(numpy_cvs(positions(scale), 1)[0])
    centers, _, _ = opes.getKernels()
    assert np.allclose(centers, expected, rtol=max(1e-12, config.value_rtol), atol=1e-12)
    simulation.context.setPositions(positions())
    energy = check_table_bias(opes.force, simulation.context, config, 1)
    s = numpy_cvs(positions(), 1)[0][0]
    atS = opes.getBiasAt([s]).value_in_unit(unit.kilojoules_per_mole)
    assert inp.getValues(simulation.context, ['s', 'o.bias']) == pytest.approx([s, atS], rel=max(1e-9, config.value_rtol))
    # the table is the kernels' sum less (1 - 1/gamma) kT ln(epsilon) (test_plumed_opes_distance): its spline at s
    kT = unit.MOLAR_GAS_CONSTANT_R.value_in_unit(unit.kilojoule_per_mole/unit.kelvin)*300
    shift = -(1 - 1/opes.biasFactor)*kT*np.log(opes.epsilon)
    assert abs(atS) > 0.1 and energy == pytest.approx(atS + shift, rel=1e-3)


def test_reader_component_names_and_refusals():
    """The name of a component in expressions and in the bias force avoids the input's labels (d_z is taken: d_z_);
    the name d_z is no label of the input (ARG=d_z refused); OPES_METAD on a function of a NOPBC component refused
    (DUMPDERIVATIVES of a function of a component: test_plumed_dumpderivatives_distance.py). Host only."""
    system, _ = massless_system()
    inp = plumed.load('d: DISTANCE ATOMS=1,2 COMPONENTS\nd_z: COORDINATION GROUPA=3 GROUPB=4 R_0=0.3\n'
                      'f: CUSTOM ARG=d.z,d_z FUNC=x+y PERIODIC=NO\nRESTRAINT ARG=f AT=0 KAPPA=1\n'
                      'UPPER_WALLS ARG=d.z AT=0 KAPPA=1\n', system)
    bias = inp.biasForce
    assert [bias.getCollectiveVariableName(k) for k in range(2)] == ['d_z', 'd_z_'] and bias.getNumDistances() == 1
    assert inp['f'] == '(d_z_)+(d_z)'
    for text, message in (
            (HEAD + 'g: CUSTOM ARG=d_z FUNC=x PERIODIC=NO\n', "'d_z' is not the label of an action above"),
            (HEAD + 'PRINT ARG=d_z\n', "'d_z' is not the label of an action above"),
            (HEAD.replace('COMPONENTS', 'COMPONENTS NOPBC') + 'OPES_METAD ARG=f PACE=10 BARRIER=10 TEMP=300 SIGMA=0.03\n',
             "'f' depends on the DISTANCE 'd.z' with NOPBC")):
        with pytest.raises(plumed.PlumedInputError, match=message):
            plumed.load(text, massless_system()[0])


def test_reader_opes_bias_value_under_another_length_unit(platform_config, tmp_path, monkeypatch):
    """PRINT's o.bias of OPES_METAD on a DISTANCE under UNITS LENGTH=A is OPES's bias at the variable in Angstrom (as
    its grid and kernels), at NumPy's nearest-image distance, not at the distance in nm that the bias force's CV
    holds."""
    monkeypatch.chdir(tmp_path)
    config = platform_config
    system, topology = periodic_massless_system()
    inp = plumed.load('UNITS LENGTH=A\nd: DISTANCE ATOMS=1,2\no: OPES_METAD ARG=d PACE=10 BARRIER=10 TEMP=300 SIGMA=0.3 '
                      'COMPRESSION_THRESHOLD=0\nPRINT ARG=d,o.bias FILE=COLVAR\n', system)
    simulation = openmm.app.Simulation(topology, system, openmm.VerletIntegrator(0.001), config.platform(),
                                       config.properties)
    for scale in SCALES:
        simulation.context.setPositions(positions(scale))
        inp.step(simulation, 10)
    simulation.context.setPositions(positions())
    r = 10*float(np.linalg.norm(nearest(positions(), 0, 1)))                  # Angstrom
    atR = inp.opes.getBiasAt([r]).value_in_unit(unit.kilojoules_per_mole)
    assert abs(atR - inp.opes.getBiasAt([r/10]).value_in_unit(unit.kilojoules_per_mole)) > 1.0
    assert inp.getValues(simulation.context, ['d', 'o.bias']) == pytest.approx([r, atR], rel=max(1e-9, config.value_rtol))
