"""The examples that run metadynamics or OPES restart from their checkpoints with --restart, say so,
and go on to the requested length (examples/opes_double_well.py, examples/ion_pairing.py; CPU,
small sizes)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from gr_helpers import REPO


def run(script, *arguments):
    result = subprocess.run([sys.executable, os.path.join('examples', script)] + list(arguments), capture_output=True,
                            text=True, cwd=REPO, timeout=300, env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_opes_double_well_restarts(tmp_path):
    pytest.importorskip('matplotlib')
    first = run('opes_double_well.py', '--steps', '1000', '--checkpoint', '500', '--output', str(tmp_path))
    assert 'restarted' not in first
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith('.chk')) == ['metadynamics.chk', 'opes.chk']
    second = run('opes_double_well.py', '--steps', '2000', '--checkpoint', '500', '--output', str(tmp_path), '--restart')
    for method in ('metadynamics', 'opes'):
        assert '%s: restarted from %s at step 1000' % (method, os.path.join(str(tmp_path), method + '.chk')) in second
        errors = np.loadtxt(tmp_path/(method + '_errors.csv'), delimiter=',', skiprows=1)
        np.testing.assert_array_equal(errors[:, 0], [500, 1000, 1500, 2000])      # the first run's rows kept
    rows = np.loadtxt(tmp_path/'error.csv', delimiter=',', skiprows=1)
    assert rows.shape == (4, 4) and rows[-1, 0] == 2000


def test_ion_pairing_restarts(tmp_path):
    pytest.importorskip('matplotlib')
    run('ion_pairing.py', '--quick', '--platform', 'CPU', '--steps', '200', '--output', str(tmp_path))
    second = run('ion_pairing.py', '--quick', '--platform', 'CPU', '--steps', '400', '--output', str(tmp_path), '--restart')
    assert 'restarted from %s at step 200 of 400' % os.path.join(str(tmp_path), 'checkpoint.chk') in second
    assert 'equilibration' not in second and 'hills 8' in second
    trace = np.loadtxt(tmp_path/'cv.csv', delimiter=',', skiprows=1)
    np.testing.assert_array_equal(trace[:, 0], np.arange(25, 401, 25))       # appended, one header
    # --restart with another method: refused (status 2, no traceback), the run's files kept
    files = {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)}
    result = subprocess.run([sys.executable, os.path.join('examples', 'ion_pairing.py'), '--quick', '--platform', 'CPU',
                             '--steps', '600', '--output', str(tmp_path), '--restart', '--method', 'opes'],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr
    assert "OPES: setState: the state is of another run than this object (method: the state 'Metadynamics'" in result.stderr
    assert {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)} == files


def test_ion_coordination_restarts(tmp_path):
    """The main job continues its metadynamics from the checkpoint, steps 1-3 skipped (g(r) read back
    from gr.csv, the CV from metadynamics.json), and the trace of the whole run is in cv.csv."""
    pytest.importorskip('matplotlib')
    run('ion_coordination.py', '--quick', '--platform', 'CPU', '--metad-steps', '600', '--output', str(tmp_path))
    second = run('ion_coordination.py', '--quick', '--platform', 'CPU', '--metad-steps', '1200', '--output', str(tmp_path),
                 '--restart')
    assert 'restarted from %s at step 1100 (metadynamics step 600 of 1200)' % os.path.join(str(tmp_path), 'checkpoint.chk') \
        in second
    assert 'equilibration' not in second and 'g(r):' not in second and 'hills 12' in second
    trace = np.loadtxt(tmp_path/'cv.csv', delimiter=',', skiprows=1)
    np.testing.assert_array_equal(trace[:, 0], np.arange(550, 1701, 50))
    # a fresh run into the folder, or --restart with other settings: refused, the run's files kept
    files = {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)}
    for arguments, message in [([], 'holds the checkpoint of an earlier run (checkpoint.chk): continue it with --restart'),
                               (['--restart', '--nn', '6'], '--restart cannot continue from %s: Metadynamics: setState: the '
                                'state is of another run' % os.path.join(str(tmp_path), 'checkpoint.chk'))]:
        result = subprocess.run([sys.executable, os.path.join('examples', 'ion_coordination.py'), '--quick', '--platform',
                                 'CPU', '--output', str(tmp_path)] + arguments, capture_output=True, text=True, cwd=REPO,
                                timeout=300)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr
        assert message in result.stderr, result.stderr
    assert {name: (tmp_path/name).read_bytes() for name in os.listdir(tmp_path)} == files
