"""openmmcoordination.plumed: OPES_METAD's KERNELS file (issue 40, must-have 6), as PLUMED 2.10's
OPESmetad writes it: ``#! FIELDS time <args> sigma_<args> height logweight``, the SET lines (action,
biasfactor, epsilon, kernel_cutoff, compression_threshold), then one line per deposited kernel. A
short run through the reader on each platform configuration; the CVs of every step printed by PRINT
(FMT=%.17g) feed opes_reference.ReferenceOPES on PLUMED's schedule, whose deposits (centre, sigma,
height, log-weight) the file's lines must equal; the time column is the deposit's step times the
step size (ps, or UNITS TIME)."""

import re

import numpy as np
import openmm
import openmm.app as app
import pytest
from openmm import unit

from openmmcoordination import plumed

from helpers import PLATFORM_TOLERANCES, PlatformConfig
from opes_reference import ReferenceOPES

TEMPERATURE = 300.0
KT = (unit.MOLAR_GAS_CONSTANT_R*TEMPERATURE*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
DT = 0.002
PACE = 20
BARRIER = 10.0
HEAD = 'c: COORDINATION GROUPA=1-3 GROUPB=4-6 R_0=0.5 D_MAX=1.5\n'
PRINT = 'PRINT ARG=c STRIDE=1 FILE=COLVAR FMT=%.17g\n'


def run(config, text, directory, steps=400):
    """The input on 6 particles (box 2 nm) run ``steps`` steps of Langevin dynamics on ``config``."""
    system = openmm.System()
    for _ in range(6):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(*np.eye(3)*2.0)
    integrator = openmm.LangevinIntegrator(TEMPERATURE*unit.kelvin, 1/unit.picosecond, DT*unit.picoseconds)
    integrator.setRandomNumberSeed(1)
    inp = plumed.load(text, system, integrator=integrator)
    topology = app.Topology()
    residue = topology.addResidue('X', topology.addChain())
    for _ in range(6):
        topology.addAtom('X', None, residue)
    simulation = app.Simulation(topology, system, integrator, config.platform(), dict(config.properties))
    simulation.context.setPositions(np.random.RandomState(0).rand(6, 3)*1.5)
    inp.attach(simulation, str(directory))
    inp.step(simulation, steps)
    inp.close()
    return inp


def read_kernels(path):
    """(FIELDS names, {SET name: value as written}, rows as written (str), rows as numbers)."""
    lines = open(str(path)).read().splitlines()
    assert lines[0].startswith('#! FIELDS ')
    fields = lines[0].split()[2:]
    sets = {}
    for line in lines[1:]:
        if not line.startswith('#! SET '):
            break
        name, value = line[len('#! SET '):].split(' ', 1)
        sets[name] = value
    rows = [line for line in lines[1 + len(sets):]]
    assert all(not line.startswith('#') for line in rows)
    return fields, sets, rows, np.array([[float(x) for x in line.split()] for line in rows])


def reference_deposits(directory, steps, timeUnit=1.0, **options):
    """ReferenceOPES fed the CVs of steps 1 ... ``steps`` from COLVAR (PLUMED's update() skips step 0):
    the steps of its deposits and the deposits (centre, sigma, height, log-weight)."""
    colvar = np.loadtxt(str(directory/'COLVAR'))
    assert colvar.shape == (steps + 1, 2)
    np.testing.assert_allclose(colvar[:, 0], np.arange(steps + 1)*DT/timeUnit, rtol=1e-12)
    reference = ReferenceOPES(KT, BARRIER, options.pop('biasFactor', BARRIER/KT), **options)
    updates = reference.replay([[c] for c in colvar[1:, 1]], PACE)
    return [u[0] for u in updates], reference.deposits


@pytest.mark.parametrize('case', ['fixed', 'adaptive', 'explore'])
def test_kernels_file(platform_config, tmp_path, case):
    """FILE=Kernels.data: the header (FIELDS, SET action, biasfactor, epsilon, kernel_cutoff,
    compression_threshold as %23.16lg), one line per deposit at its time (step x 0.002 ps), its centre the
    CV PRINT printed at that step, its sigma, height and logweight ReferenceOPES's (1e-10, relative; the
    adaptive sigma's statistics counted on the platform); OPES_METAD_EXPLORE's action name."""
    keywords = {'fixed': 'SIGMA=0.3 BIASFACTOR=6 EPSILON=1e-4 COMPRESSION_THRESHOLD=0.8',
                'adaptive': 'SIGMA=ADAPTIVE SIGMA_MIN=0.05 ADAPTIVE_SIGMA_STRIDE=100',
                'explore': 'SIGMA=0.3'}[case]
    name = 'OPES_METAD_EXPLORE' if case == 'explore' else 'OPES_METAD'
    text = (HEAD + 'o: %s ARG=c PACE=%d BARRIER=%g TEMP=300 FILE=Kernels.data %s\n' % (name, PACE, BARRIER, keywords)
            + PRINT)
    steps = 400
    inp = run(platform_config, text, tmp_path, steps)
    assert inp.outputFiles() == ['COLVAR', 'Kernels.data']
    assert not (tmp_path/'KERNELS').exists()
    options = {'fixed': dict(sigma=[0.3], biasFactor=6.0, epsilon=1e-4, threshold=0.8),
               'adaptive': dict(adaptiveStride=100, sigmaMin=[0.05]),
               'explore': dict(sigma=[0.3], explore=True)}[case]
    depositSteps, deposits = reference_deposits(tmp_path, steps, **options)
    assert len(deposits) >= 10

    fields, sets, rows, values = read_kernels(tmp_path/'Kernels.data')
    assert fields == ['time', 'c', 'sigma_c', 'height', 'logweight']
    assert list(sets) == ['action', 'biasfactor', 'epsilon', 'kernel_cutoff', 'compression_threshold']
    opes = inp.opes
    assert sets['action'] == name + '_kernels'
    for key, expected in (('biasfactor', opes.biasFactor), ('epsilon', opes.epsilon),
                          ('kernel_cutoff', opes.kernelCutoff), ('compression_threshold', opes.compressionThreshold)):
        assert sets[key] == '%23.16g' % expected
    if case == 'fixed':
        assert [float(sets[key]) for key in ('biasfactor', 'epsilon', 'compression_threshold')] == [6.0, 1e-4, 0.8]
    # PLUMED's default format: each field %23.16lg, no separator (the width pads it)
    assert all(len(row) == 23*5 for row in rows)
    assert rows[0] == ''.join('%23.16g' % x for x in values[0])

    assert len(values) == len(deposits) == len(opes.getHistory().steps) - 1
    np.testing.assert_array_equal(depositSteps, opes.getHistory().steps[1:])
    np.testing.assert_allclose(values[:, 0], np.array(depositSteps)*DT, rtol=1e-12)
    rtol = max(1e-10, 100*platform_config.value_rtol)
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    # the CV at the deposit step (%23.16lg keeps 16 significant digits)
    np.testing.assert_allclose(values[:, 1], colvar[depositSteps, 1], rtol=1e-15)
    np.testing.assert_allclose(values[:, 2], [d[1][0] for d in deposits], rtol=rtol)
    np.testing.assert_allclose(values[:, 3], [d[2] for d in deposits], rtol=rtol)
    np.testing.assert_allclose(values[:, 4], [d[3] for d in deposits], rtol=rtol, atol=1e-12)
    if case == 'explore':
        np.testing.assert_allclose(values[:, 2]**-1*0.3*np.sqrt(opes.biasFactor), values[:, 3], rtol=1e-12)
    if case == 'fixed':
        assert len(opes.getKernels()[2]) < len(values)       # merged kernels: the file has them as deposited


def test_kernels_default_name_fmt_and_units(tmp_path):
    """Without FILE the file is KERNELS (PLUMED's default); FMT=%10.5f formats every number as ' %10.5f',
    the SET lines too; UNITS TIME=fs puts the time in fs. Reference platform."""
    config = PlatformConfig('Reference', **PLATFORM_TOLERANCES['Reference'])
    text = ('UNITS TIME=fs\n' + HEAD + 'o: OPES_METAD ARG=c PACE=%d BARRIER=%g TEMP=300 SIGMA=0.3 FMT=%%10.5f\n'
            % (PACE, BARRIER) + PRINT)
    steps = 200
    inp = run(config, text, tmp_path, steps)
    assert inp.outputFiles() == ['COLVAR', 'KERNELS']
    fields, sets, rows, values = read_kernels(tmp_path/'KERNELS')
    assert fields == ['time', 'c', 'sigma_c', 'height', 'logweight']
    assert sets['action'] == 'OPES_METAD_kernels'
    assert sets['biasfactor'] == ' %10.5f' % inp.opes.biasFactor
    assert sets['kernel_cutoff'] == ' %10.5f' % inp.opes.kernelCutoff
    assert all(re.fullmatch(r'( [ \-0-9.]{10}){5}', row) for row in rows)
    depositSteps, deposits = reference_deposits(tmp_path, steps, 0.001, sigma=[0.3])
    assert len(rows) == len(deposits) == steps//PACE
    expected = [[step*DT*1000] + [d[0][0], d[1][0], d[2], d[3]] for step, d in zip(depositSteps, deposits)]
    assert rows == [''.join(' %10.5f' % x for x in row) for row in expected]
    assert values[-1, 0] == 400.0                     # step 200 at 2 fs


def test_kernels_refused_keywords():
    """FMT must format a number; FILE and FMT with EXTRA_BIAS are refused (naming the keyword and
    value), and with EXTRA_BIAS no KERNELS file is written (logged)."""
    system = openmm.System()
    for _ in range(6):
        system.addParticle(1.0)
    opes = 'o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.3 TEMP=300 '
    with pytest.raises(plumed.PlumedInputError, match=r"OPES_METAD: FMT: '%q' is not a format for one number"):
        plumed.load(HEAD + opes + 'FMT=%q\n', system)
    wall = 'w: UPPER_WALLS ARG=c AT=5 KAPPA=10\n'
    for keyword in ('FILE=K', 'FMT=%f'):
        with pytest.raises(plumed.PlumedInputError, match='%s: %s is not supported with EXTRA_BIAS' % (
                keyword.split('=')[0], re.escape(keyword))):
            plumed.load(HEAD + wall + opes + 'EXTRA_BIAS=w ' + keyword + '\n', system)
    inp = plumed.load(HEAD + wall + opes + 'EXTRA_BIAS=w\n', system)
    assert inp.outputFiles() == []
    assert any('KERNELS file PLUMED writes is not written with EXTRA_BIAS' in line
               for action in inp.actions for line in action.log)


def test_components_printed_as_plumed_sets_them(tmp_path):
    """PRINT of o.bias, o.rct, o.zed, o.neff, o.nker at every step (Reference): PLUMED's OPESmetad sets the
    bias in calculate() (before the step's kernel) and rct, zed, neff, nker in update(), after it, and at
    construction rct = kT ln(epsilon^(1-1/gamma)) (= -BARRIER with the default EPSILON), zed 1, neff from
    that first weight, nker 0; PRINT writes in the update phase after OPES. So each row holds ReferenceOPES's
    values after the updates of the steps up to and including its own, the step-0 row the initial ones; and
    the bias at a deposit step is kT times the kernel's logweight (the bias before it)."""
    config = PlatformConfig('Reference', **PLATFORM_TOLERANCES['Reference'])
    text = (HEAD + 'o: OPES_METAD ARG=c PACE=%d BARRIER=%g TEMP=300 SIGMA=0.3\n' % (PACE, BARRIER)
            + 'PRINT ARG=c,o.bias,o.rct,o.zed,o.neff,o.nker STRIDE=1 FILE=COLVAR FMT=%.17g\n')
    steps = 200
    run(config, text, tmp_path, steps)
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    assert colvar.shape == (steps + 1, 7)
    reference = ReferenceOPES(KT, BARRIER, BARRIER/KT, sigma=[0.3])
    w0 = reference.weights[0]
    initial = (KT*np.log(w0), 1.0, (1 + w0)**2/(1 + w0**2), 0)
    assert initial[0] == pytest.approx(-BARRIER, rel=1e-12)
    updates = {u[0]: u[1:] for u in reference.replay([[c] for c in colvar[1:, 1]], PACE)}
    expected, last = [], initial
    for step in range(steps + 1):
        last = updates.get(step, last)
        expected.append(last)
    expected = np.array(expected, dtype=float)
    assert sorted(updates) == list(range(PACE, steps + 1, PACE))
    np.testing.assert_allclose(colvar[:, 3:6], expected[:, :3], rtol=1e-10)
    np.testing.assert_array_equal(colvar[:, 6], expected[:, 3])
    assert colvar[PACE, 6] == 1 and colvar[PACE - 1, 6] == 0        # the row of the first kernel's step has it
    _, _, _, kernels = read_kernels(tmp_path/'KERNELS')
    np.testing.assert_allclose(colvar[PACE::PACE, 2], KT*kernels[:, 4], rtol=1e-10, atol=1e-10)
