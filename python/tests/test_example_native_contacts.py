"""examples/native_contacts.py runs briefly on the CPU and writes Q over time (CSV and PNG)."""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from gr_helpers import REPO, png_size  # noqa: E402


def test_native_contacts_example(tmp_path):
    result = subprocess.run([sys.executable, os.path.join('examples', 'native_contacts.py'), '--platform', 'CPU', '--steps', '100',
                             '--output', str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=300,
                            env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert 'does not use periodic boundary conditions' not in result.stderr, result.stderr   # issue 41 item 6
    assert '2489 atoms, 1942 native contacts, platform CPU, 100 steps' in result.stdout
    rows = np.loadtxt(str(tmp_path/'q.csv'), delimiter=',', skiprows=1)
    assert rows.shape == (6, 3)
    np.testing.assert_allclose(rows[:, 0], np.arange(6)*0.04)
    assert rows[0, 1] > 0.999 and np.all((rows[:, 1] > 0.95) & (rows[:, 1] <= 1.0))
    assert np.all(rows[:, 2] < rows[:, 1])     # the sharper Q is lower
    width, height = png_size(tmp_path/'q.png')
    assert width >= 600 and height >= 400


def test_native_contacts_steps_and_errors(tmp_path):
    """--steps that --interval does not divide runs all the steps (the last reading at --steps, not
    the last whole interval); --steps 0 is refused (it ran the default 1,000 steps), as are a missing
    --pdb and an --output that is a file: argparse's error, status 2, no traceback."""
    command = [sys.executable, os.path.join('examples', 'native_contacts.py'), '--platform', 'CPU']
    result = subprocess.run(command + ['--steps', '50', '--interval', '20', '--output', str(tmp_path)], capture_output=True,
                            text=True, cwd=REPO, timeout=300, env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = np.loadtxt(str(tmp_path/'q.csv'), delimiter=',', skiprows=1)
    np.testing.assert_allclose(rows[:, 0], [0, 0.04, 0.08, 0.1])
    assert 't =    0.10 ps' in result.stdout, result.stdout
    (tmp_path/'file').write_text('')
    for arguments, message in [
            (['--steps', '0'], "argument --steps: must be an integer >= 1, got '0'"),
            (['--interval', '-1'], "argument --interval: must be an integer >= 1, got '-1'"),
            (['--pdb', str(tmp_path/'none.pdb')], "argument --pdb: %r is not a file that can be read (no such file)"
                                                  % str(tmp_path/'none.pdb')),
            (['--output', str(tmp_path/'file')], "argument --output: %r is not a folder" % str(tmp_path/'file'))]:
        result = subprocess.run(command + arguments, capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, (arguments, result.stderr)
        assert 'native_contacts.py: error: ' + message in result.stderr, (arguments, result.stderr)
