"""benchmarks/rebuild_intervals.py: the steps at which the neighbour lists go stale, by the GPU lists' rule."""

import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'benchmarks'))
import rebuild_intervals  # noqa: E402 (benchmarks/ is not a package)


def test_rebuild_steps_by_hand():
    """One particle of two moves 0.01 nm a step along x: with a skin of 0.1 nm the lists are stale once it
    is more than 0.049 nm from where they were built, at step 5, then 5 steps after each rebuild."""
    steps = 23
    trajectory = np.zeros((steps + 1, 2, 3))
    trajectory[:, 0, 0] = 0.01*np.arange(steps + 1)
    assert rebuild_intervals.rebuild_steps(trajectory, 0.1) == [5, 10, 15, 20]
    # 0.098 nm: stale beyond 0.04802 nm, at the fifth step after each build as well; 0.08 nm: beyond 0.0392, the fourth.
    assert rebuild_intervals.rebuild_steps(trajectory, 0.098) == [5, 10, 15, 20]
    assert rebuild_intervals.rebuild_steps(trajectory, 0.08) == [4, 8, 12, 16, 20]
    rows = rebuild_intervals.summary(trajectory, [0.1, 10.0])
    assert rows[0] == {'skin': 0.1, 'rebuilds': 4, 'steps': 23, 'mean_interval': 5.0}
    assert rows[1] == {'skin': 10.0, 'rebuilds': 0, 'steps': 23, 'mean_interval': None}
    with pytest.raises(ValueError, match='skin must be > 0 nm, not 0'):
        rebuild_intervals.rebuild_steps(trajectory, 0)


def test_main_on_a_small_box(tmp_path, capsys):
    """The script end to end on the CPU platform: 20 steps of 200 waters; a skin of 1 pm goes stale at every
    step (an oxygen moves some 5 pm a step at 300 K), one of 1 nm never."""
    path = tmp_path / 'intervals.json'
    rows = rebuild_intervals.main(['--waters', '200', '--steps', '20', '--skins', '0.001,1', '--platform', 'CPU', '--json', str(path)])
    assert [row['rebuilds'] for row in rows] == [20, 0]
    assert rows[0]['mean_interval'] == 1.0
    saved = json.loads(path.read_text())
    assert saved['oxygens'] == len(rebuild_intervals.water_box(200)[2]) and saved['rows'] == rows
    assert 'skin 0.001 nm: 20 rebuilds in 20 steps, one every 1.0 steps' in capsys.readouterr().out


def test_bad_arguments():
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--skins', '0.1,x'])
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--skins', '0'])
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--warmup', '-1'])
