"""examples/nacl_clustering.py runs briefly on the CPU (--quick: 12 NaCl in 322 waters, 400 steps, a
hill every 50) and writes the CV trace, the hills, the free energy (CSV and PNG) and the last frame.
The CV it reports is checked against the number of Na+ with a Cl- neighbour computed in NumPy from
the last frame's positions (PLUMED's MORE_THAN of COORDINATIONNUMBER, written out here), the hills
against the trace, the free energy against the hills; then --restart continues the run; and
argument errors are ValueErrors naming the option and its value."""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('matplotlib')

import openmm  # noqa: E402
import openmm.app as app  # noqa: E402

from gr_helpers import REPO, import_script, png_size  # noqa: E402

R0, DMAX, THRESHOLD, WIDTH, GAMMA = 0.35, 1.0, 0.5, 0.4, 10.0
KT = 8.314462618e-3*300


def run(output, *extra):
    result = subprocess.run([sys.executable, os.path.join('examples', 'nacl_clustering.py'), '--quick', '--platform', 'CPU',
                             '--output', str(output)] + list(extra), capture_output=True, text=True, cwd=REPO, timeout=300,
                            env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert 'does not use periodic boundary conditions' not in result.stderr, result.stderr
    return result.stdout


def numpy_clustering(positions, box, sodium, chloride):
    """(c_i, n): c_i = sum over Cl- of the rational s(r) = (1 - x^6)/(1 - x^12), x = r/r0, stretched
    to 0 at dmax, nearest image in a rectangular box; n = sum_i 1 - t(c_i), t the rational of
    y = c/threshold (n 6, m 12, no cutoff)."""
    delta = positions[sodium][:, None, :] - positions[chloride][None, :, :]
    delta -= box*np.round(delta/box)
    r = np.linalg.norm(delta, axis=2)

    def rational(x):
        return (1 - x**6)/(1 - x**12)
    low = rational(DMAX/R0)
    s = np.where(r < DMAX, (rational(r/R0) - low)/(1 - low), 0.0)
    c = s.sum(axis=1)
    return c, np.sum(1 - rational(c/THRESHOLD))


def test_nacl_clustering_example(tmp_path):
    stdout = run(tmp_path)
    for phrase in ['platform CPU, settings quick', '12 Na+ and 12 Cl- in 322 TIP3P waters, box 2.20 nm, 990 atoms',
                   'grid 0 to 12 (121 points)', 'metadynamics:     400/400 steps', '8 hills', 'most probable n', 'wrote']:
        assert phrase in stdout, (phrase, stdout)

    # the trace: every 25 steps, n between 0 and the 12 Na+
    assert open(tmp_path/'cv.csv').readline().strip() == 'step,time_ps,n_clustered'
    trace = np.loadtxt(str(tmp_path/'cv.csv'), delimiter=',', skiprows=1)
    assert trace.shape == (16, 3)
    np.testing.assert_array_equal(trace[:, 0], np.arange(25, 401, 25))
    np.testing.assert_allclose(trace[:, 1], trace[:, 0]*0.002, rtol=1e-5)
    assert np.all((trace[:, 2] > 0) & (trace[:, 2] < 12))

    # the last frame: the CV of the trace's last row (step 400) and each Na+'s c_i from the positions in NumPy
    state = openmm.XmlSerializer.deserialize(open(tmp_path/'final_state.xml').read())
    positions = state.getPositions(asNumpy=True).value_in_unit(openmm.unit.nanometer)
    vectors = state.getPeriodicBoxVectors(asNumpy=True).value_in_unit(openmm.unit.nanometer)
    assert np.count_nonzero(vectors - np.diag(np.diag(vectors))) == 0     # rectangular (cubic, scaled by the barostat)
    atoms = list(app.PDBFile(str(tmp_path/'final.pdb')).topology.atoms())
    sodium = [a.index for a in atoms if a.residue.name == 'NA']
    chloride = [a.index for a in atoms if a.residue.name == 'CL']
    assert len(sodium) == len(chloride) == 12 and len(atoms) == len(positions) == 990
    c, n = numpy_clustering(positions, np.diag(vectors), sodium, chloride)
    assert abs(trace[-1, 2] - n) < 1e-5, (trace[-1, 2], n)
    assert ('final frame (step 400): n = %.4f' % n) in stdout
    ions = np.loadtxt(str(tmp_path/'final_ions.csv'), delimiter=',', skiprows=1)
    np.testing.assert_array_equal(ions[:, 0], sodium)
    np.testing.assert_allclose(ions[:, 1], c, atol=1e-5)
    np.testing.assert_allclose(ions[:, 2], (c/THRESHOLD)**6/(1 + (c/THRESHOLD)**6), atol=1e-5)
    assert abs(ions[:, 2].sum() - n) < 1e-5

    # HILLS (PLUMED's format): 8 hills at the trace's n of steps 50, 100, ..., 400, well-tempered heights
    # (PLUMED's HILLS scales them by gamma/(gamma - 1)), from 1 kJ/mol down by exp(-V/(kT (gamma - 1)))
    lines = open(tmp_path/'HILLS').read().splitlines()
    assert lines[0] == '#! FIELDS time n sigma_n height biasf'
    hills = np.array([line.split() for line in lines if not line.startswith('#')], dtype=float)
    assert hills.shape == (8, 5)
    np.testing.assert_allclose(hills[:, 0], np.arange(50, 401, 50)*0.002, rtol=1e-12)
    np.testing.assert_allclose(hills[:, 1], trace[1::2, 2], rtol=1e-8)
    assert np.all(hills[:, 2] == WIDTH) and np.all(hills[:, 4] == GAMMA)
    heights = hills[:, 3]*(GAMMA - 1)/GAMMA
    assert heights[0] == pytest.approx(1.0, abs=1e-12)
    for k in range(1, 8):
        bias = sum(h*np.exp(-0.5*((hills[k, 1] - x)/WIDTH)**2) for x, h in zip(hills[:k, 1], heights[:k]))
        assert heights[k] == pytest.approx(np.exp(-bias/(KT*(GAMMA - 1))), abs=2e-3)

    # fes.csv: F = -gamma/(gamma - 1) times the sum of the hills, its minimum over the sampled range
    # (between the lowest and the highest hill) at 0
    assert open(tmp_path/'fes.csv').readline().strip() == 'n_clustered,free_energy_kJ_per_mol,bias_kJ_per_mol,sampled'
    fes = np.loadtxt(str(tmp_path/'fes.csv'), delimiter=',', skiprows=1)
    grid = np.linspace(0, 12, 121)
    np.testing.assert_allclose(fes[:, 0], grid, atol=1e-4)
    bias = sum(h*np.exp(-0.5*((grid - x)/WIDTH)**2) for x, h in zip(hills[:, 1], heights))
    np.testing.assert_allclose(fes[:, 2], bias, atol=1e-4)
    sampled = (grid >= hills[:, 1].min() - 1e-9) & (grid <= hills[:, 1].max() + 1e-9)
    np.testing.assert_array_equal(fes[:, 3], sampled.astype(int))
    expected = -GAMMA/(GAMMA - 1)*bias
    np.testing.assert_allclose(fes[:, 1], expected - expected[sampled].min(), atol=2e-4)

    width, height = png_size(tmp_path/'fes.png')
    assert width >= 1000 and height >= 400

    # --restart: from the checkpoint at step 400 to 500, two more hills, the trace appended
    stdout = run(tmp_path, '--restart', '--steps', '500')
    assert 'restarted from %s at step 400 of 500' % os.path.join(str(tmp_path), 'checkpoint.chk') in stdout, stdout
    assert 'equilibration' not in stdout and '10 hills' in stdout
    longer = np.loadtxt(str(tmp_path/'cv.csv'), delimiter=',', skiprows=1)
    np.testing.assert_array_equal(longer[:, 0], np.arange(25, 501, 25))
    np.testing.assert_array_equal(longer[:16], trace)
    hills10 = np.array([line.split() for line in open(tmp_path/'HILLS') if not line.startswith('#')], dtype=float)
    np.testing.assert_array_equal(hills10[:8], hills)
    np.testing.assert_allclose(hills10[8:, 1], longer[[17, 19], 2], rtol=1e-8)


@pytest.mark.parametrize('arguments, named', [
    (['--box', '1.5'], '--box must be at least 2 dmax + 0.2 nm = 2.2 nm'),
    (['--concentration', '-1'], '--concentration must be positive and finite, got -1.0'),
    (['--bias-factor', '1'], '--bias-factor must be greater than 1, got 1.0'),
    (['--steps', '0'], '--steps must be at least 1, got 0'),
    (['--frequency', '-5'], '--frequency must be at least 1, got -5'),
    (['--dmax', '0.3'], '--dmax must be greater than --r0 (0.35 nm), got 0.3'),
    (['--width', 'nan'], '--width must be positive and finite, got nan'),
    (['--steps', '10', '--ns', '1'], 'give --steps or --ns, not both (got --steps 10 and --ns 1.0)'),
])
def test_argument_errors(arguments, named):
    example = import_script('examples', 'nacl_clustering')
    with pytest.raises(ValueError) as error:
        example.parseArguments(arguments)
    assert str(error.value).startswith('nacl_clustering: ' + named), str(error.value)


def test_restart_without_checkpoint(tmp_path):
    example = import_script('examples', 'nacl_clustering')
    with pytest.raises(ValueError, match='--restart needs a checkpoint, and --output .* has no checkpoint.chk'):
        example.parseArguments(['--restart', '--output', str(tmp_path)])
    assert example.parseArguments(['--ns', '0.2']).steps == 100000
    # the default box (2.6 nm) against a larger --dmax: refused before anything is built or written
    with pytest.raises(ValueError, match=r'--box must be at least 2 dmax \+ 0.2 nm = 2.8 nm .*, got 2.6'):
        example.main(['--dmax', '1.3', '--platform', 'CPU', '--output', str(tmp_path/'none')])
    assert not os.path.exists(tmp_path/'none')


def test_command_line_error_message(tmp_path):
    """From the command line an argument error is one line, no traceback, exit status 2 (argparse's);
    so is a fresh run into the folder of an earlier run (its checkpoint is kept), an unknown platform
    and an --output that is a file."""
    earlier = tmp_path/'earlier'
    earlier.mkdir()
    (earlier/'checkpoint.chk').write_bytes(b'the first run')
    (tmp_path/'file').write_text('')
    for arguments, message in [
            (['--box', '1.5'], 'error: nacl_clustering: --box must be at least'),
            (['--platform', 'CPU', '--output', str(earlier)],
             'error: nacl_clustering: --output %r holds the checkpoint of an earlier run (checkpoint.chk)' % str(earlier)),
            (['--platform', 'Nowhere'], "nacl_clustering.py: error: argument --platform: no platform 'Nowhere'"),
            (['--output', str(tmp_path/'file')], "nacl_clustering.py: error: argument --output: %r is not a folder"
                                                 % str(tmp_path/'file'))]:
        result = subprocess.run([sys.executable, os.path.join('examples', 'nacl_clustering.py')] + arguments,
                                capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, (arguments, result.stderr)
        assert message in result.stderr, (arguments, result.stderr)
    assert os.listdir(earlier) == ['checkpoint.chk'] and (earlier/'checkpoint.chk').read_bytes() == b'the first run'


def test_plumed_equivalent():
    """docs/nacl-clustering.md's PLUMED input, read by openmmcoordination.plumed on the example's CPU
    system (2.6 nm box, 1,612 atoms), biases the example's CV: the same n at the built positions
    (Reference), the same grid and hills."""
    import re
    from openmmcoordination import plumed
    example = import_script('examples', 'nacl_clustering')
    text = open(os.path.join(REPO, 'docs', 'nacl-clustering.md')).read()
    block = [b for b in re.findall(r'^```text\n(.*?)^```', text, re.M | re.S) if 'COORDINATIONNUMBER' in b][0]
    modeller, system, sodium, chloride, waters = example.buildSystem(2.6, 2.0, 2026)
    assert (sodium[0], chloride[0], system.getNumParticles()) == (1572, 1592, 1612)
    inp = plumed.load(block, system, modeller.topology, openmm.LangevinMiddleIntegrator(300, 1, 0.002))
    variable = inp.metadynamics.variables[0]
    assert (variable.minValue, variable.maxValue, variable.biasWidth, variable.gridWidth) == (0, 20, 0.4, 201)
    assert inp.metadynamics.frequency == 50 and inp.metadynamics.biasFactor == 10
    force = example.clusteringForce(sodium, chloride, example.parseArguments([]))
    alone = openmm.System()
    for _ in range(system.getNumParticles()):
        alone.addParticle(1.0)
    alone.setDefaultPeriodicBoxVectors(*system.getDefaultPeriodicBoxVectors())
    alone.addForce(force)
    reference = openmm.Platform.getPlatformByName('Reference')
    mine = openmm.Context(alone, openmm.VerletIntegrator(0.001), reference)
    theirs = openmm.Context(system, openmm.VerletIntegrator(0.001), reference)
    for context in (mine, theirs):
        context.setPositions(modeller.positions)
    n = force.getCollectiveVariableValue(mine)
    assert 1 < n < 19
    assert inp.metadynamics.force.getCollectiveVariableValues(theirs)[0] == pytest.approx(n, abs=1e-10)
