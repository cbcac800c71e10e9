"""CoordinationBiasForce: several coordination CVs biased together by one energy expression.

Values and forces against the NumPy reference (reference_impl.bias_energy_and_forces) and
finite differences, errors, serialization and copies, on every available platform and
precision (on CUDA, the same assertions hold the GPU's result to the NumPy reference).
"""

import copy
import pickle

import numpy as np
import pytest

import openmm

from openmmcoordination import CoordinationBiasForce, CoordinationForce

import reference_impl as ref
from helpers import assert_close, energy_and_forces, finite_difference_forces, make_system, random_positions, set_state

N = 14


def _cvs():
    """Four CVs of every mode and several switching functions: (CoordinationForce factory, reference tuple)."""
    rational = ref.Switching(r0=0.3)
    exp = ref.Switching(type='EXP', r0=0.2, d0=0.05)
    q = ref.Switching(type='Q', r0=0.3, beta=10.0)
    gauss = ref.Switching(type='GAUSSIAN', r0=0.25, dmax=0.8)
    one = list(range(6))
    a, b = [0, 1, 2], [6, 7, 8, 9, 2]
    pa, pb, w, r0s = [0, 3, 5, 7], [11, 2, 9, 1], [1.0, 0.5, 2.0, 0.25], [0.3, 0.5, 0.4, 0.6]

    def pairlist():
        force = CoordinationForce()
        force.setPairs(pa, pb, w, r0s)
        return q.configure(force)
    return [
        (lambda: rational.configure(CoordinationForce(one)), (rational, *ref.pairs('one', one), None, None)),
        (lambda: exp.configure(CoordinationForce(a, b)), (exp, *ref.pairs('two', a, b), None, None)),
        (pairlist, (q, *ref.pairs('pairs', pa, pb), w, r0s)),
        (lambda: gauss.configure(CoordinationForce(list(range(8, 14)))), (gauss, *ref.pairs('one', list(range(8, 14))), None, None)),
    ]


EXPRESSIONS = {
    'harmonic': ('0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2', {'k1': 30.0, 'k2': 20.0, 'a': 0.5, 'b': 2.0}, 2,
                 lambda c: 15*(c[0]-0.5)**2 + 10*(c[1]-2)**2, lambda c: [30*(c[0]-0.5), 20*(c[1]-2)]),
    'wall': ('k*max(0, c1+c2-w)^2 + 0.3*c3', {'k': 40.0, 'w': 0.1}, 3,
             lambda c: 40*max(0, c[0]+c[1]-0.1)**2 + 0.3*c[2],
             lambda c: [80*max(0, c[0]+c[1]-0.1), 80*max(0, c[0]+c[1]-0.1), 0.3]),
    'four': ('c1*c2 + sin(c3) + 0.5*c4^2', {}, 4,
             lambda c: c[0]*c[1] + np.sin(c[2]) + 0.5*c[3]**2, lambda c: [c[1], c[0], np.cos(c[2]), c[3]]),
}


def _build(expression, parameters, count, periodic):
    bias = CoordinationBiasForce(expression)
    for name, value in parameters.items():
        bias.addGlobalParameter(name, value)
    cvs = _cvs()[:count]
    for k, (make, _) in enumerate(cvs):
        force = make()
        force.setUsesPeriodicBoundaryConditions(periodic)
        bias.addCollectiveVariable('c%d' % (k + 1), force)
    return bias, [reference for _, reference in cvs]


@pytest.mark.parametrize('name', sorted(EXPRESSIONS))
@pytest.mark.parametrize('box_type', ['none', 'rectangular', 'triclinic'])
def test_values_and_forces(platform_config, rng, name, box_type):
    expression, parameters, count, energy, gradient = EXPRESSIONS[name]
    box = None if box_type == 'none' else ref.reduced_box(rng, box_type == 'triclinic')
    bias, references = _build(expression, parameters, count, box is not None)
    system = make_system(N, box)
    system.addForce(bias)
    context = platform_config.context(system)
    positions = random_positions(rng, N, box, size=1.3)
    set_state(context, positions, box)
    E, F = energy_and_forces(context)
    expectedE, expectedF, values = ref.bias_energy_and_forces(positions, references, energy, gradient, box)
    assert_close(bias.getCollectiveVariableValues(context), values, platform_config.value_rtol, 'CV values')
    assert_close(E, expectedE, platform_config.value_rtol, 'energy')
    assert_close(F, expectedF, platform_config.force_rtol, 'forces')
    fd = finite_difference_forces(context, positions, range(N), platform_config.fd_step, box)
    assert_close(F, fd, platform_config.fd_rtol, 'finite differences')


def test_table_2d(platform_config, rng):
    size, lo, hi = 12, -1.0, 21.0
    grid = np.linspace(lo, hi, size)
    x, y = np.meshgrid(grid, grid, indexing='ij')
    values = (x*y + x + 2*y).T.ravel()
    bias, references = _build('bias(c1, c2)', {}, 2, False)
    bias.addTabulatedFunction('bias', openmm.Continuous2DFunction(size, size, values, lo, hi, lo, hi))
    assert isinstance(bias.getTabulatedFunction(0), openmm.Continuous2DFunction)
    system = make_system(N)
    system.addForce(bias)
    context = platform_config.context(system)
    positions = random_positions(rng, N, size=1.3)
    set_state(context, positions)
    E, F = energy_and_forces(context)
    expectedE, expectedF, _ = ref.bias_energy_and_forces(positions, references, lambda c: c[0]*c[1] + c[0] + 2*c[1],
                                                         lambda c: [c[1] + 1, c[0] + 2])
    assert_close(E, expectedE, platform_config.table_value_rtol, 'energy')
    assert_close(F, expectedF, platform_config.table_force_rtol, 'forces')


def test_update_table(platform_config, rng):
    """A 2-D table created flat, then given the values of x*y + x + 2y by updateTabulatedFunctionInContext
    (on CUDA fitted on the GPU): the energy and forces of that function; a table of another shape is an
    error that names the class, the table and both shapes, and leaves the Context's table as it was."""
    size, lo, hi = 12, -1.0, 21.0
    grid = np.linspace(lo, hi, size)
    x, y = np.meshgrid(grid, grid, indexing='ij')
    values = (x*y + x + 2*y).T.ravel()
    bias, references = _build('bias(c1, c2)', {}, 2, False)
    bias.addTabulatedFunction('bias', openmm.Continuous2DFunction(size, size, np.zeros(size*size), lo, hi, lo, hi))
    system = make_system(N)
    system.addForce(bias)
    context = platform_config.context(system)
    positions = random_positions(rng, N, size=1.3)
    set_state(context, positions)
    assert energy_and_forces(context)[0] == 0.0
    bias.getTabulatedFunction(0).setFunctionParameters(size, size, values, lo, hi, lo, hi)
    bias.updateTabulatedFunctionInContext(context, 0)
    E, F = energy_and_forces(context)
    expectedE, expectedF, _ = ref.bias_energy_and_forces(positions, references, lambda c: c[0]*c[1] + c[0] + 2*c[1],
                                                         lambda c: [c[1] + 1, c[0] + 2])
    assert_close(E, expectedE, platform_config.table_value_rtol, 'energy')
    assert_close(F, expectedF, platform_config.table_force_rtol, 'forces')
    bias.getTabulatedFunction(0).setFunctionParameters(size, size - 1, values[:size*(size - 1)], lo, hi, lo, hi)
    with pytest.raises(openmm.OpenMMException, match=r'CoordinationBiasForce: updateTabulatedFunctionInContext: tabulated '
                       r'function "bias" has 12 x 11 points over \[-1, 21\] x \[-1, 21\], not periodic, the Context\'s has '
                       r'12 x 12 points'):
        bias.updateTabulatedFunctionInContext(context, 0)
    with pytest.raises(openmm.OpenMMException, match='tabulated function index out of range: 1'):
        bias.updateTabulatedFunctionInContext(context, 1)
    assert energy_and_forces(context)[0] == E


def test_update_parameters(platform_config, rng):
    bias, references = _build('k*c1 + c2', {'k': 2.0}, 2, False)
    system = make_system(N)
    system.addForce(bias)
    context = platform_config.context(system)
    positions = random_positions(rng, N, size=1.3)
    set_state(context, positions)
    bias.getCollectiveVariable(0).setR0(0.4)
    bias.setGlobalParameterDefaultValue(0, 5.0)
    bias.updateParametersInContext(context)
    assert context.getParameter('k') == 5.0
    references[0] = (ref.Switching(r0=0.4),) + references[0][1:]
    expectedE, _, values = ref.bias_energy_and_forces(positions, references, lambda c: 5*c[0] + c[1], lambda c: [5.0, 1.0])
    assert_close(bias.getCollectiveVariableValues(context), values, platform_config.value_rtol, 'CV values')
    assert_close(energy_and_forces(context)[0], expectedE, platform_config.value_rtol, 'energy')
    bias.getCollectiveVariable(1).setGroups([0, 1], [2, 3])
    with pytest.raises(openmm.OpenMMException, match='groups'):
        bias.updateParametersInContext(context)


def test_api_and_ownership():
    bias = CoordinationBiasForce('c1 + nw')
    cv = CoordinationForce([0, 1, 2])
    assert bias.addCollectiveVariable('c1', cv) == 0
    assert not cv.thisown
    bias.addCollectiveVariable('nw', CoordinationForce([3, 4]))
    assert bias.getNumCollectiveVariables() == 2
    assert bias.getCollectiveVariableName(1) == 'nw'
    assert bias.getCollectiveVariableIndex('nw') == 1
    assert list(bias.getCollectiveVariable(0).getGroupA()) == [0, 1, 2]
    del cv  # the bias force owns it: its CV stays usable
    assert list(bias.getCollectiveVariable(0).getGroupA()) == [0, 1, 2]
    table = openmm.Continuous1DFunction([0.0, 1.0], 0.0, 1.0)
    bias.addTabulatedFunction('t', table)
    assert not table.thisown


def test_errors():
    with pytest.raises(openmm.OpenMMException, match='CoordinationBiasForce.*c1\\*'):
        CoordinationBiasForce('c1*')
    bias = CoordinationBiasForce('c1')
    cv = CoordinationForce([0, 1])
    bias.addGlobalParameter('k', 1.0)
    with pytest.raises(openmm.OpenMMException, match='CoordinationBiasForce.*"1c"'):
        bias.addCollectiveVariable('1c', cv)
    with pytest.raises(openmm.OpenMMException, match='CoordinationBiasForce.*global parameter.*"k"'):
        bias.addCollectiveVariable('k', cv)
    assert cv.thisown
    bias.addCollectiveVariable('c1', cv)
    with pytest.raises(openmm.OpenMMException, match='"c1"'):
        bias.addCollectiveVariable('c1', CoordinationForce([0, 1]))
    with pytest.raises(openmm.OpenMMException, match='not owned by Python'):
        CoordinationBiasForce('d').addCollectiveVariable('d', cv)
    restrained = CoordinationForce([0, 1])
    restrained.setEnergyExpression('2*cv')
    with pytest.raises(openmm.OpenMMException, match='2\\*cv'):
        bias.addCollectiveVariable('c2', restrained)
    periodic = CoordinationForce([0, 1])
    periodic.setUsesPeriodicBoundaryConditions(True)
    with pytest.raises(openmm.OpenMMException, match='periodic'):
        bias.addCollectiveVariable('c2', periodic)
    with pytest.raises(openmm.OpenMMException, match='c9'):
        bias.getCollectiveVariableIndex('c9')
    unknown = CoordinationBiasForce('c1 + zz')
    unknown.addCollectiveVariable('c1', CoordinationForce([0, 1]))
    system = make_system(2)
    system.addForce(unknown)
    with pytest.raises(openmm.OpenMMException, match='CoordinationBiasForce.*zz'):
        openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))


def test_serialization_and_copy(reference_config, rng):
    bias, _ = _build(*EXPRESSIONS['harmonic'][:3], False)
    bias.setForceGroup(3)
    bias.setName('pair of CVs')
    bias.addTabulatedFunction('t', openmm.Continuous1DFunction([0.0, 1.0, 3.0], 0.0, 2.0))
    xml = openmm.XmlSerializer.serialize(bias)
    for other in (copy.copy(bias), copy.deepcopy(bias)):
        assert isinstance(other, CoordinationBiasForce)
        assert openmm.XmlSerializer.serialize(other) == xml
        assert other.getForceGroup() == 3 and other.getName() == 'pair of CVs'
    # Inside a System: the System read back writes the same XML and gives the same energy.
    system = make_system(N)
    system.addForce(bias)
    system_xml = openmm.XmlSerializer.serialize(system)
    clone = openmm.XmlSerializer.deserialize(system_xml)
    assert openmm.XmlSerializer.serialize(clone) == system_xml
    positions = random_positions(rng, N, size=1.3)
    energies = []
    for s in (system, clone):
        context = reference_config.context(s)
        set_state(context, positions)
        energies.append(energy_and_forces(context)[0])
    assert energies[0] == energies[1]


def test_pickle_returns_a_bias_force(reference_config, rng):
    """Every setting comes back (the same XML), in a CoordinationBiasForce: OpenMM's Force.__setstate__ gave an
    object whose CoordinationBiasForce methods all raised TypeError."""
    bias, _ = _build('0.5*k1*(c1-a)^2 + t(c2) + d^2', {'k1': 30.0, 'a': 0.5}, 2, True)
    bias.addDistance('d', 3, 12, 1, False)
    bias.addTabulatedFunction('t', openmm.Continuous1DFunction([0.0, 1.0, 3.0], 0.0, 2.0))
    bias.setCVStatisticsStride(5)
    bias.setForceGroup(3)
    bias.setName('pair of CVs')
    xml = openmm.XmlSerializer.serialize(bias)
    clone = pickle.loads(pickle.dumps(bias))
    assert type(clone) is CoordinationBiasForce and clone.thisown
    assert openmm.XmlSerializer.serialize(clone) == xml
    assert clone.getDistanceParameters(2) == [3, 12, 1, False] and clone.getCVStatisticsStride() == 5
    box = ref.reduced_box(rng, False)
    positions = random_positions(rng, N, box, size=1.3)
    energies = []
    for force in (bias, clone):
        system = make_system(N, box)
        system.addForce(force)
        context = reference_config.context(system)
        set_state(context, positions, box)
        energies.append(energy_and_forces(context)[0])
    assert energies[0] == energies[1] != 0.0
