"""examples/ion_pairing.py runs briefly on the CPU (--quick: 400 steps, a hill every 50) and writes
the 2-D free energy (PNG and CSV) and the CV trace; the free energy is checked against the hills
rebuilt in NumPy from the trace (the hills are laid at the CVs the trace records at those steps)."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from gr_helpers import REPO, png_size  # noqa: E402


def test_ion_pairing_example(tmp_path):
    result = subprocess.run([sys.executable, os.path.join('examples', 'ion_pairing.py'), '--quick', '--platform', 'CPU',
                             '--output', str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=300,
                            env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert 'does not use periodic boundary conditions' not in result.stderr, result.stderr   # issue 41 item 6
    stdout = result.stdout
    for phrase in ['platform CPU, settings quick', 'Na+ and Cl- in 245 TIP3P waters, box 2.00 nm, 737 atoms',
                   'grid 101 x 121', 'metadynamics:     400/400 steps', 'hills 8', 'wrote']:
        assert phrase in stdout, (phrase, stdout)

    trace = np.loadtxt(str(tmp_path/'cv.csv'), delimiter=',', skiprows=1)
    assert open(tmp_path/'cv.csv').readline().strip() == 'step,time_ps,c1_nacl,c2_nao'
    assert trace.shape == (16, 4)
    np.testing.assert_array_equal(trace[:, 0], np.arange(25, 401, 25))
    np.testing.assert_allclose(trace[:, 1], trace[:, 0]*0.002, rtol=1e-5)
    # started 0.3 nm apart (c1 0.64); the wall at 0.65 nm keeps c1 above 0.06 (a short run need not stay
    # in the contact pair: the CPU platform's trajectories differ from run to run); Na+ keeps 2 to 6
    # waters (its shell starts unequilibrated: one run had c2 = 2.2 at step 25, then 2.6 to 3.2)
    assert np.all((trace[:, 2] > 0.02) & (trace[:, 2] < 0.95)) and np.all((trace[:, 3] > 2.0) & (trace[:, 3] < 6.5))

    fes = np.loadtxt(str(tmp_path/'fes.csv'), delimiter=',', skiprows=1)
    assert open(tmp_path/'fes.csv').readline().strip() == 'c1_nacl,c2_nao,free_energy_kJ_per_mol,sampled'
    assert fes.shape == (101*121, 4)
    c1, c2 = np.linspace(0, 1, 101), np.linspace(2, 8, 121)
    np.testing.assert_allclose(fes[:, 0].reshape(121, 101), np.tile(c1, (121, 1)), atol=1e-4)
    np.testing.assert_allclose(fes[:, 1].reshape(121, 101), np.tile(c2[:, None], (1, 101)), atol=1e-4)
    sampled = fes[:, 3] == 1
    assert 50 < sampled.sum() < 101*121 and fes[sampled, 2].min() == 0.0

    # the hills in NumPy: at the CVs of the trace at steps 50, 100, ..., 400, widths 0.04 and 0.15,
    # well tempered (kT dT at 300 K and bias factor 6: 12.47 kJ/mol; the bias at a centre taken from
    # the Gaussians themselves rather than OpenMM's spline of the grid, a 1e-3 difference)
    kTdT = 8.314462618e-3*300*5
    G1, G2 = np.meshgrid(c1, c2)
    bias, hills = np.zeros(G1.shape), []
    for step, time, x, y in trace[1::2]:
        here = sum(h*np.exp(-0.5*((x - a)/0.04)**2 - 0.5*((y - b)/0.15)**2) for a, b, h in hills)
        hills.append((x, y, np.exp(-here/kTdT)))
        bias += hills[-1][2]*np.exp(-0.5*((G1 - x)/0.04)**2 - 0.5*((G2 - y)/0.15)**2)
    assert len(hills) == 8 and hills[-1][2] < 1.0
    expected = -1.2*bias
    expected = expected - expected[sampled.reshape(G1.shape)].min()
    np.testing.assert_allclose(fes[:, 2], expected.ravel(), atol=0.02)
    assert fes[:, 2].max() > 0.5

    # each basin's line against fes.csv: the lowest sampled grid point with c1 in the basin's range,
    # c1 = s(r) stretched to 0 at 1 nm, s = 1/(1 + (r/0.35)^4), CIP 0.22-0.36 nm, SSIP 0.42-0.60 nm
    def c1of(r):
        s, s1 = 1/(1 + (r/0.35)**4), 1/(1 + (1.0/0.35)**4)
        return (s - s1)/(1 - s1)
    for name, (near, far) in [('CIP', (0.22, 0.36)), ('SSIP', (0.42, 0.60))]:
        inside = sampled & (fes[:, 0] >= c1of(far) - 1e-4) & (fes[:, 0] <= c1of(near) + 1e-4)
        line = re.search(r'^%s: (.*)$' % name, stdout, re.MULTILINE)
        assert line, (name, stdout)
        if not inside.any():
            assert line.group(1) == 'not sampled', line.group(0)
            continue
        found = re.match(r'lowest at c1 ([\d.]+) \(Na-Cl ([\d.]+) nm\), c2 ([\d.]+), free energy (-?[\d.]+) kJ/mol$',
                         line.group(1))
        assert found, line.group(0)
        c1, r, c2, f = map(float, found.groups())
        k = np.flatnonzero((np.abs(fes[:, 0] - c1) < 1e-3) & (np.abs(fes[:, 1] - c2) < 1e-3))
        assert len(k) == 1 and inside[k[0]], line.group(0)
        assert fes[k[0], 2] <= fes[inside, 2].min() + 1e-3 and abs(f - fes[k[0], 2]) < 0.051, (line.group(0), fes[k[0]])
        assert abs(c1of(r) - c1) < 0.01, line.group(0)
    assert ('F(SSIP) - F(CIP) = ' in stdout) == ('SSIP: lowest' in stdout and 'CIP: lowest' in stdout)

    width, height = png_size(tmp_path/'fes.png')
    assert width >= 1000 and height >= 500


def test_ion_pairing_example_on_the_distance(tmp_path):
    """--cv distance: c1 is the Na-Cl distance (a DistanceCV inside the bias force, issue 40 must-have 5).
    Each progress line's c1 equals the example's own NumPy minimum-image distance of Na and Cl at that step
    (to the printed digits); the trace and fes.csv name the column d_nacl_nm, on the 0.2-0.9 nm grid of
    141 points; the free energy is the hills rebuilt in NumPy from the trace; the basin line's c1 is its r."""
    result = subprocess.run([sys.executable, os.path.join('examples', 'ion_pairing.py'), '--quick', '--platform', 'CPU',
                             '--cv', 'distance', '--output', str(tmp_path)], capture_output=True, text=True, cwd=REPO,
                            timeout=300, env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert 'does not use periodic boundary conditions' not in result.stderr, result.stderr
    stdout = result.stdout
    for phrase in ['c1: the Na-Cl distance (nm), in the bias force', 'grid 141 x 121', 'metadynamics:     400/400 steps',
                   'hills 8', 'wrote']:
        assert phrase in stdout, (phrase, stdout)
    progress = re.findall(r'c1 ([\d.]+)  c2 [\d.]+  Na-Cl ([\d.]+) nm', stdout)
    assert len(progress) == 10
    for c1, r in progress:
        assert abs(float(c1) - float(r)) <= 0.0051, (c1, r)

    assert open(tmp_path/'cv.csv').readline().strip() == 'step,time_ps,d_nacl_nm,c2_nao'
    trace = np.loadtxt(str(tmp_path/'cv.csv'), delimiter=',', skiprows=1)
    assert trace.shape == (16, 4) and np.all((trace[:, 2] > 0.2) & (trace[:, 2] < 0.8))
    assert open(tmp_path/'fes.csv').readline().strip() == 'd_nacl_nm,c2_nao,free_energy_kJ_per_mol,sampled'
    fes = np.loadtxt(str(tmp_path/'fes.csv'), delimiter=',', skiprows=1)
    d, c2 = np.linspace(0.2, 0.9, 141), np.linspace(2, 8, 121)
    assert fes.shape == (141*121, 4)
    np.testing.assert_allclose(fes[:, 0].reshape(121, 141), np.tile(d, (121, 1)), atol=1e-4)
    sampled = fes[:, 3] == 1
    kTdT = 8.314462618e-3*300*5
    G1, G2 = np.meshgrid(d, c2)
    bias, hills = np.zeros(G1.shape), []
    for step, time, x, y in trace[1::2]:
        here = sum(h*np.exp(-0.5*((x - a)/0.04)**2 - 0.5*((y - b)/0.15)**2) for a, b, h in hills)
        hills.append((x, y, np.exp(-here/kTdT)))
        bias += hills[-1][2]*np.exp(-0.5*((G1 - x)/0.04)**2 - 0.5*((G2 - y)/0.15)**2)
    expected = -1.2*bias
    expected = expected - expected[sampled.reshape(G1.shape)].min()
    np.testing.assert_allclose(fes[:, 2], expected.ravel(), atol=0.02)
    line = re.search(r'^CIP: lowest at c1 ([\d.]+) \(Na-Cl ([\d.]+) nm\)', stdout, re.MULTILINE)
    if line:
        assert line.group(1) == line.group(2) and 0.22 <= float(line.group(1)) <= 0.36, line.group(0)


def test_ion_pairing_argument_errors(tmp_path):
    """Bad values, --restart without a checkpoint, a fresh run into an earlier run's folder: argparse's
    error (status 2, the option and the value named), no traceback, nothing written."""
    earlier = tmp_path/'earlier'
    earlier.mkdir()
    (earlier/'checkpoint.chk').write_bytes(b'the first run')
    for arguments, message in [
            (['--box', '-2'], "argument --box: must be a number > 0, got '-2'"),
            (['--steps', '0'], "argument --steps: must be an integer >= 1, got '0'"),
            (['--width-nacl', '-1'], "argument --width-nacl: must be a number > 0, got '-1'"),
            (['--wall', '-0.5'], "argument --wall: must be a number >= 0, got '-0.5'"),
            (['--bias-factor', '0.5'], "argument --bias-factor: must be a number > 1, got '0.5'"),
            (['--restart', '--output', str(tmp_path/'none')],
             "--restart continues a run in --output %r, which has no checkpoint.chk, convergence.json" % str(tmp_path/'none')),
            (['--output', str(earlier)], '--output %r holds the checkpoint of an earlier run' % str(earlier))]:
        result = subprocess.run([sys.executable, os.path.join('examples', 'ion_pairing.py'), '--quick', '--platform', 'CPU']
                                + arguments, capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, (arguments, result.stderr)
        assert 'ion_pairing.py: error: ' + message in result.stderr, (arguments, result.stderr)
    assert not os.path.exists(tmp_path/'none') and (earlier/'checkpoint.chk').read_bytes() == b'the first run'
