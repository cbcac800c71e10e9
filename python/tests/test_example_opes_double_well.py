"""examples/opes_double_well.py runs briefly on the CPU and writes its pictures with
openmmcoordination.plots (fes.png: the free energies against the exact one; error.png: the error
against time) and error.csv to --output, and says so."""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from gr_helpers import REPO, png_size  # noqa: E402


def test_opes_double_well_example(tmp_path):
    result = subprocess.run([sys.executable, os.path.join('examples', 'opes_double_well.py'), '--steps', '2000',
                             '--checkpoint', '1000', '--output', str(tmp_path)], capture_output=True, text=True, cwd=REPO,
                            timeout=300, env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert 'platform CPU, 2000 steps per method' in result.stdout
    wrote = ', '.join(os.path.join(str(tmp_path), name) for name in ('fes.png', 'error.png', 'error.csv'))
    assert 'wrote ' + wrote in result.stdout, result.stdout
    for name in ('fes.png', 'error.png'):
        width, height = png_size(tmp_path/name)
        assert width >= 600 and height >= 400, (name, width, height)
    rows = np.loadtxt(str(tmp_path/'error.csv'), delimiter=',', skiprows=1)
    assert rows.shape == (2, 4) and list(rows[:, 0]) == [1000, 2000]
    assert np.all(rows[:, 2:] > 0)


def test_opes_double_well_argument_errors(tmp_path):
    """Bad values, --steps that --checkpoint does not divide, --restart without checkpoints, a fresh
    run into an earlier run's folder: argparse's error (status 2, the option and the value named), no
    traceback, the earlier run's files kept."""
    earlier = tmp_path/'earlier'
    earlier.mkdir()
    (earlier/'opes.chk').write_bytes(b'the first run')
    for arguments, message in [
            (['--steps', '0'], "argument --steps: must be an integer >= 1, got '0'"),
            (['--checkpoint', '0'], "argument --checkpoint: must be an integer >= 1, got '0'"),
            (['--steps', '1000', '--checkpoint', '300'],
             'argument --steps: must be a multiple of --checkpoint (300 steps between measurements), got 1000'),
            (['--platform', 'auto'], "argument --platform: no platform 'auto'; this OpenMM has "),
            (['--restart', '--output', str(tmp_path/'none')],
             "--restart continues a run in --output %r, which has no metadynamics.chk, opes.chk" % str(tmp_path/'none')),
            (['--output', str(earlier)], '--output %r holds the checkpoint of an earlier run (opes.chk)' % str(earlier))]:
        result = subprocess.run([sys.executable, os.path.join('examples', 'opes_double_well.py')] + arguments,
                                capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, (arguments, result.stderr)
        assert 'opes_double_well.py: error: ' + message in result.stderr, (arguments, result.stderr)
    assert not os.path.exists(tmp_path/'none') and os.listdir(earlier) == ['opes.chk']
