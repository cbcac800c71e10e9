"""The scripts of the repository run: the README's main job (examples/ion_coordination.py) in its
small setting, writing its files, and the quickstart example; the benchmarks (bench_metadynamics.py,
benchmark.py) in their quick settings, and the helpers of benchmark.py that choose what is timed."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from openmmcoordination.gr import PairDistribution  # noqa: E402

from gr_helpers import REPO, png_size  # noqa: E402


def run(arguments, timeout):
    result = subprocess.run([sys.executable] + arguments, capture_output=True, text=True, cwd=REPO, timeout=timeout,
                            env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_main_job_quick(tmp_path):
    out = tmp_path/'ion'
    stdout = run([os.path.join('examples', 'ion_coordination.py'), '--quick', '--platform', 'CPU', '--output', str(out)],
                 timeout=300)
    for phrase in ['Na+ in', 'g(r) from 20 frames', 'first minimum at', 'coordination number: r0 =', 'metadynamics:',
                   'wrote']:
        assert phrase in stdout, (phrase, stdout)
    for name in ['gr.png', 'cv.png', 'fes.png']:
        width, height = png_size(out/name)
        assert width >= 600 and height >= 400
    gr = PairDistribution.readCSV(str(out/'gr.csv'))
    assert gr.numFrames == 20 and gr.mode == 'two groups' and gr.numA == 1
    # Na+-O: nothing inside 0.2 nm, the first peak near 0.24 nm
    assert np.all(gr.g[gr.r < 0.2] == 0)
    assert 0.21 < gr.firstPeak() < 0.27
    assert 0.26 < gr.firstMinimum() < 0.40
    cv = np.loadtxt(str(out/'cv.csv'), delimiter=',', skiprows=1)
    assert cv.shape[1] == 3 and len(cv) == 1200//50
    assert np.all((cv[:, 2] > 2) & (cv[:, 2] < 10))
    fes = np.loadtxt(str(out/'fes.csv'), delimiter=',', skiprows=1)
    assert fes.shape[1] == 2 and fes[:, 1].min() == 0.0


def test_quickstart_example():
    stdout = run([os.path.join('examples', 'quickstart.py')], timeout=300)
    first_minimum, coordination, cv = [float(x) for x in re.findall(r'(\d+\.\d+)', stdout)]
    assert 0.26 < first_minimum < 0.40 and 4.0 < coordination < 7.5 and 3.0 < cv < 10.0


def test_metadynamics_benchmark_smoke(tmp_path):
    path = tmp_path/'metad.json'
    stdout = run([os.path.join('benchmarks', 'bench_metadynamics.py'), '--platform', 'Reference', '--quick',
                  '--waters', '200', '--steps', '50', '--frequency', '25', '--repeats', '1', '--json', str(path)],
                 timeout=300)
    assert 'ms/step' in stdout
    data = json.loads(path.read_text())
    kinds = [row['kind'] for row in data['rows']]
    assert kinds == ['plain', 'ours', 'peer-ours', 'peer-custom']
    for row in data['rows']:
        assert row['ms_per_step'] > 0 and row['section'] == 'metadynamics'
        assert ('overhead_percent' in row) == (row['kind'] != 'plain')
    assert data['info']['openmm']


def test_benchmark_smoke(tmp_path):
    """The GPU benchmark's throughput and latency sections in their quick setting: every row carries
    its timings, the peer's and the per-evaluation figures."""
    path = tmp_path/'bench.json'
    run([os.path.join('benchmarks', 'benchmark.py'), '--platform', 'Reference', '--quick', '--sections',
         'throughput,latency', '--json', str(path)], timeout=300)
    rows = json.loads(path.read_text())['rows']
    assert [row['section'] for row in rows] == ['throughput', 'throughput', 'latency']
    for row in rows[:2]:
        assert row['ms'] > 0 and row['peer_ms'] > 0 and row['empty_step_ms'] > 0
        assert row['ms_per_evaluation'] == pytest.approx(row['ms_in_step'] - row['empty_step_ms'])
        assert row['value_relative_difference'] < 1e-4


def import_benchmark():
    """benchmarks/benchmark.py as a module."""
    folder = os.path.join(REPO, 'benchmarks')
    sys.path.insert(0, folder)
    try:
        import benchmark
    finally:
        sys.path.remove(folder)
    return benchmark


def test_md_restraint_constant():
    """The MD benchmark's restraint: k = 10 kJ/mol up to a CV of 10; beyond, a deviation of a tenth
    of cv0 costs 5 kJ/mol (a fixed k made the 8,000 O self-coordination case blow up)."""
    restraint_constant = import_benchmark().restraint_constant
    assert restraint_constant(4.8) == 10.0
    for cv0 in (457.0, 18411.0):
        assert 0.5 * restraint_constant(cv0) * (0.1 * cv0) ** 2 == pytest.approx(5.0)


def test_spatial_order():
    """The cutoff benchmark's spatial numbering renumbers the same particles (a permutation of the
    rows) so that particles close in index are close in space: consecutive particles lie far closer
    together than in the random numbering, and the order follows the Z curve (with two bins an axis,
    the octant at the origin comes first)."""
    benchmark = import_benchmark()
    positions, edge = benchmark.random_positions(20000)
    ordered = benchmark.spatial_order(positions, edge)
    assert ordered.shape == positions.shape
    assert np.array_equal(np.sort(ordered.view('f8,f8,f8'), axis=0), np.sort(positions.view('f8,f8,f8'), axis=0))
    step = np.linalg.norm(np.diff(ordered, axis=0), axis=1)
    randomStep = np.linalg.norm(np.diff(positions, axis=0), axis=1)
    assert np.median(step) < 0.5 and np.median(randomStep) > 0.3 * edge
    # Two bins per axis: the first eighth of the particles is the cell nearest the origin.
    corner = benchmark.spatial_order(positions, edge, bins=2)[:len(positions) // 8 - 200]
    assert np.all(corner < edge / 2)


def test_interleaved_md_replicas():
    """The MD benchmark with replicas (Reference, a tiny water box): plain and the first force get
    that many Contexts (two plain Contexts never time exactly alike, so their spread is positive; with
    one it is 0), their times are averaged per round, and every force gets its overhead and its
    toggled overhead."""
    benchmark = import_benchmark()
    import openmm as mm
    from openmmcoordination import CoordinationForce
    system, positions, oxygens = benchmark.water_box(220)
    forces = []
    for label in ('first', 'second'):
        force = CoordinationForce(oxygens[:1], oxygens[1:])
        force.setUsesPeriodicBoundaryConditions(True)
        force.setDMax(0.5)
        forces.append((label, force))
    results, spread = benchmark.interleaved_md(system, positions, mm.Platform.getPlatformByName('Reference'), 'mixed', 5, 2,
                                               forces, replicas=2)
    assert set(results) == {'plain', 'first', 'second'}
    assert results['plain'][1] == 1.0 and results['plain'][2] is None
    for label in ('first', 'second'):
        ms, relative, toggled = results[label]
        assert ms > 0 and 0.2 < relative < 5 and 0.2 < toggled < 5
    assert spread > 0


def test_energy_only_step_time():
    """The cutoff benchmark's energy-only step (a CustomIntegrator that asks for the energy alone,
    then x = x) evaluates the force at every step and leaves the particles where they were; it checks
    its own energy against getState, which would raise here if the step had not computed it."""
    benchmark = import_benchmark()
    import openmm as mm
    positions, edge = benchmark.random_positions(400)
    force = benchmark.rational_cv(list(range(400)), None, 0.6, periodic=True)
    seconds = benchmark.step_time(force, positions, mm.Platform.getPlatformByName('Reference'), 'mixed', 4, 1, edge,
                                  energyOnly=True)
    assert seconds > 0


def test_environment_restores_variables(monkeypatch):
    """The benchmark's environment block sets the CUDA switches for the Contexts created inside it,
    then restores what was there (a value, or nothing)."""
    benchmark = import_benchmark()
    monkeypatch.setenv('COORDINATION_NEIGHBOR_LIST', '1')
    monkeypatch.delenv('COORDINATION_LIST_KIND', raising=False)
    with benchmark.environment(COORDINATION_NEIGHBOR_LIST='always', COORDINATION_LIST_KIND='homes'):
        assert os.environ['COORDINATION_NEIGHBOR_LIST'] == 'always'
        assert os.environ['COORDINATION_LIST_KIND'] == 'homes'
    assert os.environ['COORDINATION_NEIGHBOR_LIST'] == '1'
    assert 'COORDINATION_LIST_KIND' not in os.environ
