"""Per-atom coordination numbers (CoordinationForce.setParticleFunction, PLUMED's COORDINATIONNUMBER
with SUM, MEAN, MORE_THAN, LESS_THAN, BETWEEN, MIN, MAX, LOWEST, HIGHEST, MOMENTS): the c_i from
getCoordinationNumbers and every function against a NumPy reimplementation of PLUMED's formulas,
forces against finite differences, a CoordinationBiasForce CV, serialization and the errors, on
every platform (CUDA: kernels/particles.cu over all pairs, kernels/particlelists.cu over the neighbour
lists where a cutoff in a periodic box gives them), and on CUDA the c_i against Reference for 1,000 atoms
and, for 60,000 atoms, the default path over the lists of homes (kernels/particlehomes.cu) against NumPy."""

import math
import re

import numpy as np
import pytest

import openmm

from openmmcoordination import CoordinationBiasForce, CoordinationForce

from helpers import assert_close, energy_and_forces, finite_difference_forces, make_system, set_state

F = CoordinationForce
FUNCTIONS = ['Sum', 'Mean', 'MoreThan', 'LessThan', 'Between', 'Min', 'Max', 'Lowest', 'Highest', 'Moment']
BOX = np.diag([1.3, 1.4, 1.5])


def rational(x, n, m):
    """PLUMED's RATIONAL (1 - x^n)/(1 - x^m), by its limit n/m at x = 1."""
    x = np.asarray(x, dtype=float)
    near = np.isclose(x, 1.0)
    safe = np.where(near, 0.5, x)
    return np.where(near, n/m, (1 - safe**n)/(1 - safe**m))


def plumed_rational(r, r0, n=6, m=12, d0=0.0, dmax=None):
    """PLUMED's RATIONAL R_0 NN MM D_0 [D_MAX]: stretched to 0 at D_MAX where given; dmax 'auto' is
    the short syntax's d0 + r0 (1e-5)^(1/(n - m))."""
    if dmax == 'auto':
        dmax = d0 + r0*1e-5**(1.0/(n - m))
    x = lambda v: np.maximum((np.asarray(v, dtype=float) - d0)/r0, 0.0)
    smax = 0.0 if dmax is None else rational(x(dmax), n, m)
    s = (rational(x(r), n, m) - smax)/(1 - smax)
    s = np.where(np.asarray(r) <= d0, 1.0, s)
    return s if dmax is None else np.where(np.asarray(r) >= dmax, 0.0, s)


def _loaded_on_reference(text, positions):
    """A PLUMED input loaded into a System of len(positions) particles without a box: (PlumedInput, a
    Reference Context at the positions)."""
    from openmmcoordination import plumed
    system = make_system(len(positions))
    inp = plumed.load(text, system)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions)
    return inp, context


def numpy_coordination_numbers(positions, group_a, group_b, box, r0=0.3):
    """c_i = sum_j s(r_ij), s = 1/(1 + (r/r0)^6) without a cutoff; j over group_b (group_a when None), j != i."""
    neighbours = group_a if group_b is None else group_b
    d = positions[np.asarray(neighbours)][None, :, :] - positions[np.asarray(group_a)][:, None, :]
    if box is not None:
        d -= np.round(d/np.diag(box))*np.diag(box)
    r = np.sqrt((d**2).sum(-1))
    s = 1/(1 + (r/r0)**6)
    s[np.asarray(group_a)[:, None] == np.asarray(neighbours)[None, :]] = 0.0
    return s.sum(1)


def numpy_function(name, c):
    """PLUMED's definitions (symfunc and function modules) with the parameters of configure()."""
    c = np.asarray(c, dtype=float)
    if name == 'Sum':
        return c.sum()
    if name == 'Mean':
        return c.mean()
    if name == 'MoreThan':
        return (1 - plumed_rational(c, 1.5, 6, 10, 0.2, 3.5)).sum()
    if name == 'LessThan':
        return plumed_rational(c, 1.5, 6, 10, 0.2, 3.5).sum()
    if name == 'Between':
        w = 0.4*(2.5 - 1.0)
        return (0.5*(np.vectorize(math.erf)((2.5 - c)/(math.sqrt(2)*w)) - np.vectorize(math.erf)((1.0 - c)/(math.sqrt(2)*w)))).sum()
    if name == 'Min':
        return 0.2/math.log(np.exp(0.2/c).sum())
    if name == 'Max':
        return 0.2*math.log(np.exp(c/0.2).sum())
    if name == 'Lowest':
        return c.min()
    if name == 'Highest':
        return c.max()
    return ((c - c.mean())**3).mean()


def configure(force, name):
    force.setR0(0.3)
    force.setDMax(math.inf)
    force.setParticleFunction(getattr(F, name))
    force.setThreshold(1.5, 0.2, 6, 10, 3.5)
    force.setBetweenBounds(1.0, 2.5, 0.4)
    force.setFunctionBeta(0.2)
    force.setMomentPower(3)
    return force


@pytest.mark.parametrize('name', FUNCTIONS)
@pytest.mark.parametrize('groups', ['one', 'two'])
@pytest.mark.parametrize('periodic', [False, True])
def test_values_and_forces(platform_config, name, groups, periodic):
    rng = np.random.default_rng(42)
    positions = rng.uniform(0.0, 1.2, (12, 3))
    group_a, group_b = ([0, 2, 3, 5, 7, 8, 11], None) if groups == 'one' else ([0, 1, 2, 3, 4], [4, 5, 6, 7, 8, 9, 10, 11])
    box = BOX if periodic else None
    system = make_system(12, box)
    force = configure(F(group_a) if group_b is None else F(group_a, group_b), name)
    force.setUsesPeriodicBoundaryConditions(periodic)
    force.setEnergyFunction('2*cv+cv^2')
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions, box)
    c = numpy_coordination_numbers(positions, group_a, group_b, box)
    found = force.getCoordinationNumbers(context)
    assert isinstance(found, np.ndarray) and found.shape == (len(group_a),)
    assert_close(found, c, platform_config.value_rtol, 'c_i')
    expected = numpy_function(name, c)
    assert_close(force.getCollectiveVariableValue(context), expected, platform_config.value_rtol, name)
    energy, forces = energy_and_forces(context)
    assert_close(energy, 2*expected + expected**2, platform_config.value_rtol, 'energy')
    fd = finite_difference_forces(context, positions, range(12), platform_config.fd_step, box)
    assert_close(forces, fd, platform_config.fd_rtol, 'forces of %s' % name)
    value, gradient = force.evaluateParticleFunction(c)
    assert value == pytest.approx(expected, rel=1e-12)
    assert gradient.shape == c.shape


def test_one_neighbour_default_cutoff():
    """Five centres and one neighbour (SPECIESA=1-5 SPECIESB=6): c_i = s(r_i6), with the force's
    default Rational cutoff (PLUMED's short syntax R_0=1: d0 + r0 (1e-5)^(1/(n - m)), stretched),
    at distances on both sides of it."""
    r = np.array([0.4, 1.0, 1.7, 2.6, 3.0])
    system = make_system(6)
    force = F([0, 1, 2, 3, 4], [5])
    force.setR0(1.0)
    force.setParticleFunction(F.Sum)
    system.addForce(force)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    positions = np.zeros((6, 3))
    positions[:5, 0] = r
    context.setPositions(positions)
    assert_close(force.getCoordinationNumbers(context), plumed_rational(r, 1.0, dmax='auto'), 1e-12, 'c_i')


@pytest.mark.parametrize('distance', [1.0, 3.0, 3.8])
def test_min_of_a_tiny_coordination_number(platform_config, distance):
    """MIN={BETA} where an atom's neighbours are far and the switching function (GAUSSIAN) has no
    cutoff: c_i of 3e-22, 6e-196 and 4e-314 (subnormal). F is about the smallest c_i, and the forces
    finite and those of the energy: they were NaN from c_i = 1e-154 on (F^2/c_i^2 underflowed to 0/0;
    the Context refused to give forces), and so was F where beta/c_i overflows (the smallest c_i, here
    4e-314, with beta 0.1). The forces are 3e-20 kJ/mol/nm and less: CUDA's force buffer reads them
    as 0 (force_atol)."""
    positions = np.array([[0.0, 0.0, 0.0], [distance, 0.0, 0.0], [0.0, 0.1, 0.0]])
    system = make_system(3)
    force = F([0, 1, 2])
    force.setSwitchingFunction(F.Gaussian)
    force.setR0(0.1)
    force.setParticleFunction(F.Min)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions)
    c = force.getCoordinationNumbers(context)
    assert_close(force.getCollectiveVariableValue(context), c.min(), platform_config.value_rtol, 'Min')
    energy, forces = energy_and_forces(context)
    assert np.all(np.isfinite(forces))
    if distance < 3.5:
        # s is steep there (x = 30): the differences' own error is about (step x/r0)^2, 1e-5 at 1e-5 nm
        assert_close(forces, finite_difference_forces(context, positions, range(3), platform_config.fd_step),
                     max(platform_config.fd_rtol, 1e-4), 'forces', platform_config.force_atol)


@pytest.mark.parametrize('power', [0.5, 1.0, 2.0])
def test_distance_power_of_particles_at_one_place(platform_config, power):
    """COORDINATION_MOMENTS R_POWER=k with two particles at the same place (a Drude particle on its
    core, say): their pair adds s(0) 0^k = 0 (PLUMED leaves such pairs out) with a zero gradient; it was
    0/0 = NaN (k s r^k / r at r = 0), and the Context refused to give forces."""
    positions = np.array([[0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.35, 0.2, 0.3], [0.1, 0.45, 0.4]])
    system = make_system(4)
    force = F([0, 1, 2, 3])
    force.setParticleFunction(F.Sum)
    force.setDistancePower(power)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions)
    d = positions[:, None, :] - positions[None, :, :]
    r = np.sqrt((d**2).sum(-1))
    terms = plumed_rational(r, 0.3, dmax='auto')*r**power
    np.fill_diagonal(terms, 0.0)
    assert_close(force.getCoordinationNumbers(context), terms.sum(1), platform_config.value_rtol, 'c_i')
    # The energy is the CV itself: central differences of |r|^k (k <= 1, no derivative at 0) are then 0,
    # as the gradient is (through a nonlinear E(cv) they would pick up the shift of cv by |h|^k).
    energy, forces = energy_and_forces(context)
    assert_close(forces, finite_difference_forces(context, positions, range(4), platform_config.fd_step),
                 platform_config.fd_rtol, 'forces')


def test_as_bias_cv(platform_config):
    rng = np.random.default_rng(7)
    positions = rng.uniform(0.0, 1.2, (10, 3))
    system = make_system(10)
    bias = CoordinationBiasForce('5*(q-2)^2')
    bias.addCollectiveVariable('q', configure(F([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]), 'MoreThan'))
    system.addForce(bias)
    context = platform_config.context(system)
    set_state(context, positions)
    q = numpy_function('MoreThan', numpy_coordination_numbers(positions, [0, 1, 2, 3, 4], [5, 6, 7, 8, 9], None))
    assert_close(bias.getCollectiveVariableValues(context)[0], q, platform_config.value_rtol, 'q')
    energy, forces = energy_and_forces(context)
    assert_close(energy, 5*(q - 2)**2, platform_config.value_rtol, 'energy')
    assert_close(forces, finite_difference_forces(context, positions, range(10), platform_config.fd_step),
                 platform_config.fd_rtol, 'forces')


def test_serialization_round_trip():
    force = configure(F([0, 2, 4], [1, 3, 5]), 'Between')
    force.setThreshold(2.5, 0.25, 8, 14, 4.5)
    xml = openmm.XmlSerializer.serialize(force)
    assert 'particleFunction="5"' in xml and 'thresholdN="8"' in xml and 'momentPower="3"' in xml
    assert openmm.XmlSerializer.serialize(openmm.XmlSerializer.deserialize(xml)) == xml


def test_errors():
    force = F([0, 1, 2])
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce: functionBeta must be positive and finite, got -1'):
        force.setFunctionBeta(-1)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce: momentPower must be at least 2 .* got 1'):
        force.setMomentPower(1)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce: Between upper must be greater than lower 2, got 1'):
        force.setBetweenBounds(2, 1)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce: threshold r0 must be positive and finite, got 0'):
        force.setThreshold(0)
    with pytest.raises(openmm.OpenMMException, match='CoordinationForce: threshold dmax must be greater than d0 0.5, got 0.5'):
        force.setThreshold(1, 0.5, 6, 12, 0.5)
    system = make_system(4)
    pairs = F([0, 1], [2, 3], True)
    pairs.setParticleFunction(F.Mean)
    system.addForce(pairs)
    with pytest.raises(openmm.OpenMMException, match='pair-list mode'):
        openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    plain = make_system(3)
    cv = F([0, 1, 2])
    plain.addForce(cv)
    context = openmm.Context(plain, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(np.eye(3))
    with pytest.raises(openmm.OpenMMException, match='PairSum'):
        cv.getCoordinationNumbers(context)


@pytest.mark.parametrize('name', ['MoreThan', 'Max', 'Lowest'])
@pytest.mark.parametrize('groups', ['one', 'two'])
def test_against_reference_large(platform_config, name, groups):
    """1,000 atoms in a periodic box with a cutoff (several tiles of 256 centres and neighbours on
    CUDA): the c_i, the CV, the energy and the forces equal Reference's, twice in a row (each
    evaluation starts from cleared coordination numbers)."""
    rng = np.random.default_rng(11)
    positions = rng.uniform(0.0, 3.0, (1000, 3))
    box = np.diag([3.0, 3.0, 3.0])
    group_a, group_b = (list(range(1000)), None) if groups == 'one' else (list(range(0, 1000, 3)), [i for i in range(1000) if i % 3])
    system = make_system(1000, box)
    force = configure(F(group_a) if group_b is None else F(group_a, group_b), name)
    force.setDMax(0.6)
    force.setThreshold(3.0, 0.5, 6, 12, 8.0)
    force.setFunctionBeta(0.5)
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyFunction('10*cv')
    system.addForce(force)
    context = platform_config.context(system)
    reference = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    for c in (context, reference):
        set_state(c, positions, box)
    assert_close(force.getCoordinationNumbers(context), force.getCoordinationNumbers(reference), platform_config.value_rtol, 'c_i')
    expected_energy, expected_forces = energy_and_forces(reference)
    for _ in range(2):
        energy, forces = energy_and_forces(context)
        assert_close(energy, expected_energy, platform_config.value_rtol, 'energy')
        assert_close(forces, expected_forces, 10*platform_config.value_rtol, 'forces')
    assert_close(force.getCollectiveVariableValue(context), force.getCollectiveVariableValue(reference),
                 platform_config.value_rtol, name)


def rows_against_numpy(force, positions, edge, dmax, rows, weights):
    """For the particles `rows` of a periodic cube of side edge (every particle of one group): their c_i
    over all other particles at the nearest image, s from the force's own switching function (the same
    s, cutoff and stretch; tested against PLUMED elsewhere), and the gradient of F on each,
    sum_j (w_k + w_j) ds/dr (x_k - x_j)/r with the weights w = dF/dc given (pairs closer than dmax, nm).
    20 rows at a time."""
    numbers, gradients = np.zeros(len(rows)), np.zeros((len(rows), 3))
    for first in range(0, len(rows), 20):
        block = rows[first:first + 20]
        d = positions[block][:, None, :] - positions[None, :, :]
        d -= np.round(d/edge)*edge
        r = np.sqrt((d**2).sum(-1))
        for i, k in enumerate(block):
            for j in np.nonzero((r[i] > 0) & (r[i] < dmax))[0]:
                s, dsdr = force.evaluateSwitchingFunction(float(r[i, j]))
                numbers[first + i] += s
                gradients[first + i] += (weights[k] + weights[j])*dsdr*d[i, j]/r[i, j]
    return numbers, gradients


def test_lists_of_homes_by_default(gpu_platform_config):
    """60,000 particles of one group at water's density in a periodic cube, dmax 1 nm, MoreThan: on CUDA the
    default path above 50,000 particles, the per-atom passes over the lists of homes
    (kernels/particlehomes.cu). The c_i of 300 particles against NumPy (nearest image), the CV against
    NumPy's MoreThan of the platform's c_i, the sum of the c_i against twice the plain sum of the same
    pairs, and the forces on the 300 against -10 times NumPy's gradient of F; twice (the lists kept)."""
    n = 60000
    edge = (n/33.4)**(1/3)
    rng = np.random.default_rng(5)
    positions = rng.uniform(0.0, edge, (n, 3))
    box = np.diag([edge]*3)
    system = make_system(n, box)
    force = configure(F(list(range(n))), 'MoreThan')
    force.setDMax(1.0)
    force.setThreshold(4.0, 0.0, 6, 12, 10.0)
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyFunction('10*cv')
    system.addForce(force)
    plain = F(list(range(n)))
    plain.setR0(0.3)
    plain.setDMax(1.0)
    plain.setUsesPeriodicBoundaryConditions(True)
    plain.setForceGroup(1)
    system.addForce(plain)
    context = gpu_platform_config.context(system)
    set_state(context, positions, box)
    rows = rng.choice(n, 300, replace=False)
    rtol = gpu_platform_config.value_rtol
    for _ in range(2):
        c = force.getCoordinationNumbers(context)
        # F and its weights at the platform's c_i on the host; F against NumPy's MoreThan (60,000 terms, some near
        # x = 1, where NumPy's direct ratio loses digits that the force's geometric sums keep).
        value, weights = force.evaluateParticleFunction(c)
        assert value == pytest.approx((1 - plumed_rational(c, 4.0, 6, 12, 0.0, 10.0)).sum(), rel=1e-8)
        assert force.getCollectiveVariableValue(context) == pytest.approx(value, rel=rtol)
        assert c.sum() == pytest.approx(2*plain.getCollectiveVariableValue(context), rel=rtol)
        numbers, gradients = rows_against_numpy(force, positions, edge, 1.0, rows, weights)
        assert_close(c[rows], numbers, rtol, 'c_i')
        _, forces = energy_and_forces(context, groups={0})
        assert_close(forces[rows], -10*gradients, gpu_platform_config.force_rtol, 'forces')


def test_plumed_reader():
    """COORDINATIONNUMBER and its functions through openmmcoordination.plumed, against NumPy: the
    components (PLUMED 2.10's names, label_mean; label.mean read as it) and the vector label.1 ..."""
    rng = np.random.default_rng(3)
    positions = rng.uniform(0.0, 1.2, (8, 3))
    text = ('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC MEAN LOWEST MORE_THAN={RATIONAL R_0=1.5 D_0=0.2 '
            'NN=6 MM=10 D_MAX=3.5} BETWEEN={GAUSSIAN LOWER=1 UPPER=2.5 SMEAR=0.4} MAX={BETA=0.2} MOMENTS=3\n'
            'd: COORDINATIONNUMBER SPECIESA=1,2 SPECIESB=3-8 SWITCH={RATIONAL R_0=0.3} NOPBC\n'
            'm: MOMENTS ARG=c POWERS=3\n'
            'PRINT ARG=c.*,c.mean,d,m.* FILE=colvar\n')
    inp, context = _loaded_on_reference(text, positions)
    c = numpy_coordination_numbers(positions, list(range(6)), None, None)
    d = numpy_coordination_numbers(positions, [0, 1], list(range(2, 8)), None)
    names = ['c_between', 'c_lowest', 'c_max', 'c_mean', 'c_moment-3', 'c_morethan', 'c_mean', 'd.1', 'd.2', 'm.moment-3']
    printed = inp._ofKind('print')[0][1].args
    assert printed == names
    expected = [numpy_function(n, c) for n in ('Between', 'Lowest', 'Max', 'Mean', 'Moment', 'MoreThan', 'Mean')] + list(d) + \
        [numpy_function('Moment', c)]
    assert_close(inp.getValues(context, names), expected, 1e-10, 'values')


def test_plumed_reader_actions_on_the_vector():
    """MORE_THAN, LESS_THAN, BETWEEN ARG= of a COORDINATIONNUMBER, reduced by SUM or MEAN, and SUM,
    MEAN of it, against NumPy (PLUMED 2.10's way of writing the functions as actions)."""
    from openmmcoordination import plumed
    rng = np.random.default_rng(5)
    positions = rng.uniform(0.0, 1.2, (8, 3))
    text = ('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC\n'
            'mt: MORE_THAN ARG=c SWITCH={RATIONAL R_0=1.5 D_0=0.2 NN=6 MM=10 D_MAX=3.5}\n'
            'lt: LESS_THAN ARG=c R_0=1.5\n'
            'bt: BETWEEN ARG=c LOWER=1 UPPER=2.5 SMEAR=0.4\n'
            's1: SUM ARG=mt PERIODIC=NO\n'
            'm1: MEAN ARG=mt PERIODIC=NO\n'
            's2: SUM ARG=lt PERIODIC=NO\n'
            's3: SUM ARG=bt PERIODIC=NO\n'
            's4: SUM ARG=c PERIODIC=NO\n'
            'm4: MEAN ARG=c PERIODIC=NO\n'
            'RESTRAINT ARG=m1 AT=0.5 KAPPA=10\n'
            'PRINT ARG=s1,m1,s2,s3,s4,m4 FILE=colvar\n')
    inp, context = _loaded_on_reference(text, positions)
    c = numpy_coordination_numbers(positions, list(range(6)), None, None)
    lessthan = plumed_rational(c, 1.5, dmax='auto').sum()
    expected = [numpy_function('MoreThan', c), numpy_function('MoreThan', c)/6, lessthan, numpy_function('Between', c),
                c.sum(), c.mean()]
    assert_close(inp.getValues(context, ['s1', 'm1', 's2', 's3', 's4', 'm4']), expected, 1e-10, 'values')
    energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(openmm.unit.kilojoules_per_mole)
    assert energy == pytest.approx(5*(expected[1] - 0.5)**2, rel=1e-10)
    with pytest.raises(plumed.PlumedInputError, match='MORE_THAN.*only RATIONAL'):
        plumed.load('c: COORDINATIONNUMBER SPECIES=1-4 SWITCH={RATIONAL R_0=0.3}\nmt: MORE_THAN ARG=c SWITCH={EXP R_0=1}\n')


def test_plumed_reader_get_values_of_components():
    """PlumedInput.getValues of a COORDINATIONNUMBER's components (label.mean as PLUMED 2.10's
    label_mean, its MOMENTS, those of MOMENTS ARG=); a component nothing prints or biases, the vector
    itself or MOMENTS' label are a ValueError that says which (were KeyError '_c_sum' and
    AttributeError: 'Value' object has no attribute 'parts')."""
    rng = np.random.default_rng(17)
    positions = rng.uniform(0.0, 1.2, (6, 3))
    text = ('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC MEAN SUM MOMENTS=2\n'
            'm: MOMENTS ARG=c POWERS=2,3\n'
            'PRINT ARG=c.mean,c.moment-2,m.moment-2 FILE=colvar\n')
    inp, context = _loaded_on_reference(text, positions)
    c = numpy_coordination_numbers(positions, list(range(6)), None, None)
    moment = ((c - c.mean())**2).mean()
    assert_close(inp.getValues(context, ['c.mean', 'c_mean', 'c.moment-2', 'c_moment-2', 'm.moment-2']),
                 [c.mean(), c.mean(), moment, moment, moment], 1e-10, 'values')
    for name, message in (('c.sum', "'c_sum' is computed by no force of the System"), ('c_sum', "'c_sum' is computed by no force"),
                          ('c', "'c' is the vector of c_i of a COORDINATIONNUMBER: ask for c.1 ... c.6"),
                          ('m', "'m' is the moments of a COORDINATIONNUMBER: ask for m.moment-2, m.moment-3")):
        with pytest.raises(ValueError, match=re.escape('PlumedInput.getValues: ' + message)):
            inp.getValues(context, [name])


def test_plumed_reader_lowmem():
    """LOWMEM, which PLUMED 2.10 accepts as a no-op (with a warning) and older inputs often carry, is
    accepted and logged (it was refused: 'LOWMEM: not supported'); the numbers are those without it."""
    from openmmcoordination import plumed
    rng = np.random.default_rng(19)
    positions = rng.uniform(0.0, 1.2, (6, 3))
    values = []
    for flag in ('', ' LOWMEM'):
        system = make_system(6)
        inp = plumed.load('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC MEAN%s\n'
                          'PRINT ARG=c.mean FILE=colvar\n' % flag, system)
        context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
        context.setPositions(positions)
        values += inp.getValues(context, ['c.mean'])
        if flag:
            assert 'note: LOWMEM accepted' in inp.describe()
    assert values[1] == values[0] == pytest.approx(numpy_coordination_numbers(positions, list(range(6)), None, None).mean(),
                                                   rel=1e-12)


def test_plumed_reader_refusals():
    from openmmcoordination import plumed
    with pytest.raises(plumed.PlumedInputError, match='MORE_THAN.*only RATIONAL'):
        plumed.load('c: COORDINATIONNUMBER SPECIES=1-4 SWITCH={RATIONAL R_0=0.3} MORE_THAN={EXP R_0=1}\n')
    with pytest.raises(plumed.PlumedInputError, match='MOMENTS.*at least 2'):
        plumed.load('c: COORDINATIONNUMBER SPECIES=1-4 SWITCH={RATIONAL R_0=0.3} MOMENTS=1\n')
    with pytest.raises(plumed.PlumedInputError, match='COORDINATIONNUMBER needs a label'):
        plumed.load('COORDINATIONNUMBER SPECIES=1-4 SWITCH={RATIONAL R_0=0.3} MEAN\n')
    with pytest.raises(plumed.PlumedInputError, match='SPECIES'):
        plumed.load('c: COORDINATIONNUMBER SPECIES=1-4 SPECIESB=5 SWITCH={RATIONAL R_0=0.3} MEAN\n')


@pytest.mark.parametrize('sampler', ['Metadynamics', 'OPES'])
def test_sampler_on_a_particle_function(sampler):
    """Metadynamics and OPES take a CV with a particle function as they take any CoordinationForce:
    a few depositions on the CPU, the CVs they report equal the force's own (read in a Context of
    its own at the same positions)."""
    import openmm.app as app
    from openmm import unit
    from openmm.app.metadynamics import BiasVariable
    from openmmcoordination import OPES, Metadynamics
    rng = np.random.default_rng(11)
    positions = rng.uniform(0.0, 1.5, (10, 3))
    system = make_system(10)
    cv = configure(F([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]), 'MoreThan')
    variable = BiasVariable(cv, 0.0, 5.0, 0.2, gridWidth=101)
    if sampler == 'Metadynamics':
        bias = Metadynamics(system, [variable], 300*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, 5)
    else:
        bias = OPES(system, [variable], 300*unit.kelvin, 5.0*unit.kilojoules_per_mole, 5, sigma=[0.2])
    topology = app.Topology()
    chain = topology.addChain()
    for _ in range(10):
        topology.addAtom('Ar', app.element.argon, topology.addResidue('AR', chain))
    simulation = app.Simulation(topology, system, openmm.LangevinMiddleIntegrator(300, 1, 0.001),
                                openmm.Platform.getPlatformByName('CPU'))
    simulation.context.setPositions(positions)
    bias.step(simulation, 20)
    state = simulation.context.getState(getPositions=True, getEnergy=True, groups={bias.force.getForceGroup()})
    assert state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole) > 0    # kernels were deposited
    alone = make_system(10)
    copy = configure(F([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]), 'MoreThan')
    alone.addForce(copy)
    context = openmm.Context(alone, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(state.getPositions())
    assert bias.getCollectiveVariables(simulation)[0] == pytest.approx(copy.getCollectiveVariableValue(context), rel=1e-9)


@pytest.mark.parametrize('label', ['c.morethan', 'c_mean'])
def test_plumed_reader_metad_on_a_component(label):
    """METAD ARG=c.morethan or c_mean: the component's CoordinationForce (its particle function) is the
    variable itself, not a CVFunction of it; after a few depositions on the CPU the CV that Metadynamics
    reports equals the force's own (a Context of its own at the same positions) and NumPy's."""
    import openmm.app as app
    from openmm import unit
    from openmmcoordination import plumed
    rng = np.random.default_rng(13)
    positions = rng.uniform(0.0, 1.2, (8, 3))
    text = ('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC MEAN '
            'MORE_THAN={RATIONAL R_0=1.5 D_0=0.2 NN=6 MM=10 D_MAX=3.5}\n'
            'm: METAD ARG=%s SIGMA=0.2 HEIGHT=1 PACE=5 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=6 FILE=HILLS\n'
            'PRINT ARG=%s,m.bias FILE=colvar\n' % (label, label))
    system = make_system(8)
    inp = plumed.load(text, system)
    variable = inp._ofKind('metad')[0][1].spec['variables'][0].force
    assert isinstance(variable, F)
    assert variable.getParticleFunction() == (F.MoreThan if 'morethan' in label else F.Mean)
    described = inp.describe()
    assert 'bias(c1)' in described and 'BiasVariable(_c_%s, ' % label[2:] in described
    # the printed Python names each component's expression by its own name, not c (which stays the base force)
    assert "c_mean = '_c_mean'" in described and "\n    c = '" not in described
    topology = app.Topology()
    chain = topology.addChain()
    for _ in range(8):
        topology.addAtom('Ar', app.element.argon, topology.addResidue('AR', chain))
    simulation = app.Simulation(topology, system, openmm.LangevinMiddleIntegrator(300, 1, 0.001),
                                openmm.Platform.getPlatformByName('CPU'))
    simulation.context.setPositions(positions)
    bias = inp.metadynamics
    bias.step(simulation, 20)
    state = simulation.context.getState(getPositions=True, getEnergy=True, groups={bias.force.getForceGroup()})
    assert state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole) > 0    # hills were deposited
    alone = make_system(8)
    own = copy_of(variable)
    alone.addForce(own)
    context = openmm.Context(alone, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(state.getPositions())
    own = own.getCollectiveVariableValue(context)
    assert bias.getCollectiveVariables(simulation)[0] == pytest.approx(own, rel=1e-9)
    c = numpy_coordination_numbers(state.getPositions(asNumpy=True).value_in_unit(unit.nanometer), list(range(6)), None, None)
    assert own == pytest.approx(numpy_function('MoreThan' if 'morethan' in label else 'Mean', c), rel=1e-9)
    printed = inp.getValues(simulation.context, [label.replace('.', '_'), 'm.bias'])
    assert printed[0] == pytest.approx(own, rel=1e-9)
    assert printed[1] == pytest.approx(state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole), rel=1e-9)


def copy_of(force):
    import copy
    return copy.deepcopy(force)


def test_plumed_reader_opes_on_a_component():
    """OPES_METAD ARG=<a component>: the CoordinationForce itself, its grid from 0 to the largest value
    the function can take (MEAN: the neighbours, N - 1; SUM: N (N - 1); MORE_THAN: N; MAX: N - 1 +
    beta ln N); MOMENTS refused (its range is not known)."""
    from openmmcoordination import plumed
    base = ('c: COORDINATIONNUMBER SPECIES=1-6 SWITCH={RATIONAL R_0=0.3} NOPBC SUM MEAN MORE_THAN={RATIONAL R_0=1.5} '
            'MAX={BETA=0.2} MOMENTS=2\n')
    for label, highest, function in (('c_mean', 5.0, F.Mean), ('c.sum', 30.0, F.Sum), ('c_morethan', 6.0, F.MoreThan),
                                     ('c_max', 5 + 0.2*math.log(6), F.Max)):
        inp = plumed.load(base + 'o: OPES_METAD ARG=%s SIGMA=0.2 BARRIER=5 PACE=5 TEMP=300\n' % label, make_system(8))
        variable = inp._ofKind('opes')[0][1].spec['variables'][0]
        assert isinstance(variable.force, F) and variable.force.getParticleFunction() == function
        assert (variable.minValue, variable.maxValue) == (0.0, pytest.approx(highest, rel=1e-12))
        assert inp.opes is not None
    with pytest.raises(plumed.PlumedInputError, match=r"OPES_METAD.*ARG.*c_moment-2.*central moment"):
        plumed.load(base + 'OPES_METAD ARG=c_moment-2 SIGMA=0.2 BARRIER=5 PACE=5 TEMP=300\n', make_system(8))


def rational_of_inverse(x, n, m):
    """(1 - x^n)/(1 - x^m) for large x, written in y = 1/x: y^(m-n) (1 - y^n)/(1 - y^m), and its derivative by x."""
    y = 1/np.asarray(x, dtype=float)
    s = y**(m - n)*(1 - y**n)/(1 - y**m)
    return s, (n*y**(m - n + 1) - s*m*y)/(1 - y**m)


@pytest.mark.parametrize('n', [18, 19])
def test_rational_where_x_to_the_m_overflows_in_the_kernels(platform_config, n):
    """RATIONAL NN=n MM=20 without a cutoff, r0 0.1 nm, pairs 10, 30 and 40 nm apart: x^20 (x = 100 to
    400) overflows in single precision (x > 84), where (1 - x^n)/(1 - x^m) was inf/inf = NaN; the kernels
    (n even: the path in x^2; odd: in x) and the host take it in 1/x there. The CV and forces against
    NumPy; then a LessThan threshold NN=40 MM=60 of c/1e-6, whose x^60 overflows in double (x = 5e5).
    The forces are 1e-6 to 1e-3 kJ/mol/nm, near CUDA's force buffer's unit (force_atol)."""
    positions = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [40.0, 0.0, 0.0]])
    system = make_system(3)
    force = F([0, 1, 2])
    force.setR0(0.1)
    force.setN(n)
    force.setM(20)
    force.setDMax(math.inf)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions)
    expected, forces = 0.0, np.zeros((3, 3))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        d = positions[j] - positions[i]
        r = np.linalg.norm(d)
        value, dsdx = rational_of_inverse(r/0.1, n, 20)
        expected += value
        forces[i] += dsdx/0.1*d/r
        forces[j] -= dsdx/0.1*d/r
    assert_close(force.getCollectiveVariableValue(context), expected, platform_config.value_rtol, 'CV')
    energy, actual = energy_and_forces(context)
    assert np.all(np.isfinite(actual))
    assert_close(actual, forces, platform_config.force_rtol, 'forces', platform_config.force_atol)

    near = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0]])
    system = make_system(2)
    force = F([0, 1])
    force.setParticleFunction(F.LessThan)
    force.setThreshold(1e-6, 0.0, 40, 60)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, near)
    c = force.getCoordinationNumbers(context)
    assert_close(force.getCollectiveVariableValue(context), rational_of_inverse(c/1e-6, 40, 60)[0].sum(),
                 platform_config.value_rtol, 'LessThan')


def test_min_where_an_atom_has_no_neighbour(platform_config):
    """MIN={BETA} where one atom has no neighbour within dmax (c = 0): F is its limit, 0, with no gradient
    on any atom, the first atom's (which has neighbours) included."""
    positions = np.array([[0.0, 0.0, 0.0], [0.25, 0.0, 0.0], [0.0, 0.3, 0.0], [3.0, 3.0, 3.0]])
    system = make_system(4)
    force = F([0, 1, 2, 3])
    force.setDMax(1.0)
    force.setParticleFunction(F.Min)
    system.addForce(force)
    context = platform_config.context(system)
    set_state(context, positions)
    c = force.getCoordinationNumbers(context)
    assert c[3] == 0.0 and c[0] > 0.5
    assert force.getCollectiveVariableValue(context) == 0.0
    energy, forces = energy_and_forces(context)
    assert np.all(forces == 0.0)
