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


def test_scheduled_rebuilds_by_hand():
    """The host's schedule on the particle of test_rebuild_steps_by_hand (0.01 nm a step, skin 0.1 nm: stale
    beyond 0.049 nm). Asked beyond 0.035 nm (share 0.35), at the fourth step after a build: one evaluation
    later the rebuild comes first; two later, the fifth step falls back before it. With its next step's move
    added (ahead 1) it asks at the third step, and two evaluations later is in time."""
    steps = 23
    trajectory = np.zeros((steps + 1, 2, 3))
    trajectory[:, 0, 0] = 0.01*np.arange(steps + 1)
    assert rebuild_intervals.scheduled_rebuilds(trajectory, 0.1, 0.35, 1) == ([5, 10, 15, 20], [])
    assert rebuild_intervals.scheduled_rebuilds(trajectory, 0.1, 0.35, 2) == ([6, 12, 18], [5, 11, 17, 23])
    assert rebuild_intervals.scheduled_rebuilds(trajectory, 0.1, 0.35, 2, ahead=1) == ([5, 10, 15, 20], [])
    rows = rebuild_intervals.schedules(trajectory, [0.1], [1, 2], [0.35], [0, 1])
    assert [(row['lag'], row['ahead'], row['rebuilds'], row['fallbacks'], row['mean_interval']) for row in rows] == [
        (1, 0, 4, 0, 5.0), (1, 1, 5, 0, 4.0), (2, 0, 3, 4, 6.0), (2, 1, 4, 0, 5.0)]
    for skin, share, lag, ahead in [(0, 0.4, 1, 0), (0.1, 0.5, 1, 0), (0.1, 0, 1, 0), (0.1, 0.4, 0, 0), (0.1, 0.4, 1, -1)]:
        with pytest.raises(ValueError, match='the schedule needs skin > 0 nm, 0 < share <= 0.49, lag >= 1 and ahead >= 0'):
            rebuild_intervals.scheduled_rebuilds(trajectory, skin, share, lag, ahead)


def test_main_on_a_small_box(tmp_path, capsys):
    """The script end to end on the CPU platform: 20 steps of 200 waters; a skin of 1 pm goes stale at every
    step (an oxygen moves some 5 pm a step at 300 K), one of 1 nm never. The host's schedule with a lag of 1:
    with 1 pm, every odd step asks and falls back and every even one rebuilds; with 1 nm, nothing."""
    path = tmp_path / 'intervals.json'
    rows = rebuild_intervals.main(['--waters', '200', '--steps', '20', '--skins', '0.001,1', '--platform', 'CPU', '--json', str(path),
                                   '--lags', '1', '--shares', '0.4'])
    assert [row['rebuilds'] for row in rows] == [20, 0]
    assert rows[0]['mean_interval'] == 1.0
    saved = json.loads(path.read_text())
    assert saved['oxygens'] == len(rebuild_intervals.water_box(200)[2]) and saved['rows'] == rows
    assert [(row['skin'], row['rebuilds'], row['fallbacks'], row['mean_interval']) for row in saved['schedules']] == [
        (0.001, 10, 10, 2.0), (1.0, 0, 0, None)]
    out = capsys.readouterr().out
    assert 'skin 0.001 nm: 20 rebuilds in 20 steps, one every 1.0 steps' in out
    assert 'skin 0.001 nm, lag 1, share 0.40, ahead 0: 10 rebuilds, one every 2.00 steps, 10 fallbacks' in out


def test_bad_arguments():
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--skins', '0.1,x'])
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--skins', '0'])
    with pytest.raises(SystemExit):
        rebuild_intervals.main(['--warmup', '-1'])
    for bad in (['--lags', '0'], ['--lags', '1', '--shares', '0.5'], ['--lags', '1', '--ahead', '-1'], ['--lags', 'x']):
        with pytest.raises(SystemExit):
            rebuild_intervals.main(bad)
