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
