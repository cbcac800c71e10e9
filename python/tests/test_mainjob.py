"""The scripts of the repository run: the README's main job (examples/ion_coordination.py) in its
small setting, writing its files, and the quickstart example; the benchmarks (bench_metadynamics.py,
benchmark.py) in their quick settings, and the helpers of benchmarks/ (common.py and the sections'
bench_*.py) that choose what is timed."""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from openmm import unit

pytest.importorskip('matplotlib')

from openmmcoordination.gr import PairDistribution  # noqa: E402

from gr_helpers import REPO, import_script, png_size  # noqa: E402


def run(arguments, timeout):
    result = subprocess.run([sys.executable] + arguments, capture_output=True, text=True, cwd=REPO, timeout=timeout,
                            env=dict(os.environ, MPLBACKEND='Agg'))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # No PeriodicBoundaryWarning (issue 41 item 6): the scripts choose their CVs' periodicity.
    assert 'does not use periodic boundary conditions' not in result.stderr, result.stderr
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
    assert 0.21 < gr.getFirstPeak().value_in_unit(unit.nanometer) < 0.27
    assert 0.26 < gr.getFirstMinimum().value_in_unit(unit.nanometer) < 0.40
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
    its timings, the peer's and the per-evaluation figures; the JSON the time of each section."""
    path = tmp_path/'bench.json'
    run([os.path.join('benchmarks', 'benchmark.py'), '--platform', 'Reference', '--quick', '--sections',
         'throughput,latency', '--json', str(path)], timeout=300)
    data = json.loads(path.read_text())
    rows = data['rows']
    assert [row['section'] for row in rows] == ['throughput', 'throughput', 'latency']
    # Each section's time, and the run complete.
    assert list(data['info']['sections_elapsed_s']) == ['throughput', 'latency'] and data['info']['complete'] is True
    assert data['info']['elapsed_s'] >= sum(data['info']['sections_elapsed_s'].values()) - 0.2
    for row in rows[:2]:
        assert row['ms'] > 0 and row['peer_ms'] > 0 and row['empty_step_ms'] > 0
        assert row['ms_per_evaluation'] == pytest.approx(row['ms_in_step'] - row['empty_step_ms'])
        assert row['value_relative_difference'] < 1e-4


def test_benchmark_resume(tmp_path):
    """A run cut short goes on with --resume: the sections it lacks run and join its rows and times,
    info.resumed records when; another precision or other options are refused, naming what differs."""
    path = tmp_path/'bench.json'
    command = [os.path.join('benchmarks', 'benchmark.py'), '--platform', 'Reference', '--quick', '--sections', 'throughput,latency']
    run(command + ['--json', str(path)], timeout=300)
    full = json.loads(path.read_text())
    assert full['info']['options']['sections'] == 'throughput,latency' and full['info']['complete'] is True
    # As if the device call had ended after throughput.
    cut = json.loads(path.read_text())
    cut['rows'] = [row for row in cut['rows'] if row['section'] != 'latency']
    del cut['info']['sections_elapsed_s']['latency']
    cut['info']['complete'] = False
    path.write_text(json.dumps(cut))
    run(command + ['--resume', str(path)], timeout=300)
    resumed = json.loads(path.read_text())
    assert [row['section'] for row in resumed['rows']] == ['throughput', 'throughput', 'latency']
    assert resumed['rows'][:2] == cut['rows']
    info = resumed['info']
    assert list(info['sections_elapsed_s']) == ['throughput', 'latency'] and info['complete'] is True
    assert info['date'] == full['info']['date'] and len(info['resumed']) == 1 and info['command'] == full['info']['command']
    assert info['elapsed_s'] >= cut['info']['elapsed_s']
    for arguments, message in ((['--precision', 'double'], "precision 'mixed', this one 'double'"),
                               (['--rounds', '2'], 'other options (rounds None, not 2)')):
        result = subprocess.run([sys.executable] + command + arguments + ['--resume', str(path)], capture_output=True, text=True,
                                cwd=REPO, timeout=120)
        assert result.returncode == 2 and message in result.stderr, result.stderr


def import_benchmark(name='common'):
    """A module of benchmarks/ (the helpers the sections share, common.py, unless named)."""
    return import_script('benchmarks', name)


def test_md_restraint_constant():
    """The MD benchmark's restraint: k = 10 kJ/mol up to a CV of 10; beyond, a deviation of a tenth
    of cv0 costs 5 kJ/mol (a fixed k made the 8,000 O self-coordination case blow up)."""
    restraint_constant = import_benchmark('bench_md').restraint_constant
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
    """The MD benchmark with replicas (Reference, a tiny water box): the plain box and each case get
    their own number of Contexts (two plain Contexts never time exactly alike, so their spread is
    positive; with one it is 0), their times are averaged per round, and every case gets its
    overhead, its ratio per round and, where asked, its toggled overhead."""
    benchmark = import_benchmark()
    import openmm as mm
    from openmmcoordination import CoordinationForce
    system, positions, oxygens = benchmark.water_box(220)
    cases = []
    for label, replicas, toggled in (('first', 2, True), ('second', 1, False)):
        force = CoordinationForce(oxygens[:1], oxygens[1:])
        force.setUsesPeriodicBoundaryConditions(True)
        force.setDMax(0.5)
        cases.append(benchmark.MdCase(label, benchmark.adding(force), replicas, toggled))
    results, spread = benchmark.interleaved_md(system, positions, mm.Platform.getPlatformByName('Reference'), 'mixed', 5, 2,
                                               cases, replicas=2, warmup=20)
    assert set(results) == {'plain', 'first', 'second'}
    assert results['plain']['relative'] == 1.0 and results['plain']['toggled'] is None
    for label in ('first', 'second'):
        result = results[label]
        assert result['ms'] > 0 and 0.2 < result['relative'] < 5 and len(result['rounds']) == 2
    assert 0.2 < results['first']['toggled'] < 5 and results['second']['toggled'] is None
    assert spread > 0
    # Each row names its own number of Contexts, whatever its kind (the CustomCVForce rows have three since 2026-12-07).
    assert [results[label]['replicas'] for label in ('plain', 'first', 'second')] == [2, 2, 1]
    rows = benchmark.md_rows('md', [{'name': 'case', 'bias': 'restraint', 'labels': {'ours': 'second', 'compatible': 'first'},
                                     'extra': {}}], system.getNumParticles(), results, spread, 2, 2, 5)
    assert [(row['kind'], row['replicas']) for row in rows] == [('plain', 2), ('ours', 1), ('compatible', 2)]
    assert 'this row: the mean of 2 Contexts' in rows[2]['note']


def two_cvs(benchmark, oxygens, numParticles, ours):
    """The md section's two CVs (1 O and 10 O against the other O) with a cutoff of 0.5 nm for a
    tiny box: our CoordinationForces, or the peer's CustomNonbondedForces."""
    groups = [(oxygens[:1], oxygens[1:]), (oxygens[:10], oxygens[10:])]
    if ours:
        return [benchmark.rational_cv(a, b, 0.5, periodic=True) for a, b in groups]
    return [benchmark.peer_cv(numParticles, a, b, 0.5) for a, b in groups]


def test_md_per_atom_checked():
    """The md section's per-atom case (issue 42) on Reference in a tiny box: check_per_atom passes
    for the case's CV (c_i and MoreThan against NumPy) and returns the CV, and catches a CV whose
    threshold is not the one NumPy uses."""
    benchmark, md = import_benchmark(), import_benchmark('bench_md')
    import openmm as mm
    platform = mm.Platform.getPlatformByName('Reference')
    system, positions, oxygens, _ = benchmark.water_box(220, withTopology=True)
    cv = md.check_per_atom(system, positions, platform, 'mixed', md.per_atom_cv(oxygens), oxygens)
    assert 0 < cv < len(oxygens)
    wrong = md.per_atom_cv(oxygens)
    wrong.setThreshold(1.1 * md.PER_ATOM_THRESHOLD)
    with pytest.raises(RuntimeError, match='per-atom check'):
        md.check_per_atom(system, positions, platform, 'mixed', wrong, oxygens)


def test_md_two_cvs_checked_and_timed():
    """The md section's two-CV cases on Reference in a tiny box: the restraint through
    CoordinationBiasForce agrees with CustomCVForce over two CustomNonbondedForces (and a wrong
    constant is caught); our metadynamics and openmm.app's give the same bias after two hills; a
    restraint and a metadynamics case time in one interleaved run, the metadynamics one through
    Simulation and Metadynamics.step(), with the cost of its hills and no toggled figure."""
    benchmark, md = import_benchmark(), import_benchmark('bench_md')
    import openmm as mm
    from openmm.app.metadynamics import Metadynamics as PeerMetadynamics
    from openmmcoordination.metadynamics import Metadynamics
    platform = mm.Platform.getPlatformByName('Reference')
    system, positions, oxygens, topology = benchmark.water_box(220, withTopology=True)
    n = system.getNumParticles()
    values = [benchmark.check_md_values(system, positions, platform, 'mixed', o, p)
              for o, p in zip(two_cvs(benchmark, oxygens, n, True), two_cvs(benchmark, oxygens, n, False))]
    parameters = {'k1': 10.0, 'a': values[0], 'k2': 1.0, 'b': values[1]}
    ours = md.bias_restraint(md.RESTRAINT2, dict(zip(('c1', 'c2'), two_cvs(benchmark, oxygens, n, True))), parameters)
    peer = md.cv_restraint(md.RESTRAINT2, dict(zip(('c1', 'c2'), two_cvs(benchmark, oxygens, n, False))), parameters)
    md.check_bias_values(system, positions, platform, 'mixed', ours, peer, {'a': 0.9 * values[0], 'b': 0.9 * values[1]})
    wrong = md.cv_restraint(md.RESTRAINT2, dict(zip(('c1', 'c2'), two_cvs(benchmark, oxygens, n, False))),
                            dict(parameters, k2=1.1))
    with pytest.raises(RuntimeError, match='energy'):
        md.check_bias_values(system, positions, platform, 'mixed', ours, wrong, {'a': 0.9 * values[0], 'b': 0.9 * values[1]})

    def factories(ours, count):
        return [lambda k=k: two_cvs(benchmark, oxygens, n, ours)[k] for k in range(count)]
    for count in (1, 2):
        try:
            md.check_metadynamics(system, positions, topology, platform, 'mixed',
                                  lambda f: md.metadynamics_build(Metadynamics, factories(True, count), values[:count], f),
                                  lambda f: md.metadynamics_build(PeerMetadynamics, factories(False, count), values[:count], f))
        except ValueError as error:     # our Metadynamics of one CV only (before the metadynamics of several CVs)
            assert count == 2 and 'one BiasVariable' in str(error)

    cases = [benchmark.MdCase('two CVs', benchmark.adding(ours), 1, True),
             benchmark.MdCase('metadynamics', md.metadynamics_build(PeerMetadynamics, factories(False, 2), values, 2), 1, False,
                              True)]
    results, _ = benchmark.interleaved_md(system, positions, platform, 'mixed', 4, 2, cases, 1, topology, warmup=2)
    assert results['two CVs']['toggled'] is not None and results['metadynamics']['toggled'] is None
    assert results['two CVs']['hills'] is None and results['metadynamics']['hills'] > 0
    assert all(results[label]['ms'] > 0 for label in ('plain', 'two CVs', 'metadynamics'))
    rows = benchmark.md_rows('md', [{'name': 'two CVs case', 'bias': 'restraint', 'labels': {'ours': 'two CVs'}, 'extra': {}},
                                    {'name': 'metadynamics case', 'bias': 'metadynamics', 'labels': {'peer': 'metadynamics'},
                                     'extra': {'dimensions': 2}}],
                             n, results, 0.0, 1, 2, 4)
    assert [(row['kind'], row.get('cv_case')) for row in rows] == [('plain', None), ('ours', 'two CVs case'),
                                                                   ('peer', 'metadynamics case')]
    assert 'toggled_overhead_percent' in rows[1] and 'toggled_overhead_percent' not in rows[2]
    assert 'hills_overhead_percent' not in rows[1] and 'hills_overhead_percent' in rows[2]
    assert rows[2]['dimensions'] == 2 and len(rows[2]['overhead_per_round_percent']) == 2


def test_benchmark_sections_checked():
    """benchmark.py refuses a section it does not have (metadynamics is part of md now) and an
    unknown md case, before it times anything."""
    for arguments, message in ((['--sections', 'md,metadynamics'], 'metadynamics is part of md'),
                               (['--md-cases', 'restraint,bogus'], 'unknown md case')):
        result = subprocess.run([sys.executable, os.path.join('benchmarks', 'benchmark.py'), '--platform', 'Reference'] + arguments,
                                capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and message in result.stderr


def test_benchmark_refuses_a_missing_input_first():
    """A section whose input is missing (the contacts section's solvated DHFR) stops the run before
    the md section before it is timed, with the path it looked at: within seconds, not after md."""
    missing = os.path.join(REPO, 'no-such-folder', 'dhfr_23558_atoms.pdb')
    result = subprocess.run([sys.executable, os.path.join('benchmarks', 'benchmark.py'), '--platform', 'Reference',
                             '--sections', 'md,contacts'], capture_output=True, text=True, cwd=REPO, timeout=120,
                            env=dict(os.environ, COORDINATION_DHFR_PDB=missing))
    assert result.returncode == 2
    assert 'section contacts' in result.stderr and missing in result.stderr and 'COORDINATION_DHFR_PDB' in result.stderr
    assert '== md' not in result.stdout
    # The quick run needs no solvated DHFR (the protein in examples/data): nothing missing.
    contacts = import_benchmark('bench_contacts')
    assert contacts.missing_inputs(argparse.Namespace(quick=True)) is None
    assert contacts.PDB_PLACES[1] == os.path.join(REPO, 'benchmarks', '..', 'shared', 'data', 'dhfr_23558_atoms.pdb')


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


def test_cutoff_per_atom_checked():
    """The cutoff section's per-atom row (issue 42) on Reference, 400 random particles, dmax 1 nm:
    check_per_atom passes for the row's CV (c_i, the forces on the particles, the CV and the sum of the
    c_i against NumPy, to double precision) and catches a CV whose threshold is not the one NumPy uses."""
    benchmark, cutoff = import_benchmark(), import_benchmark('bench_cutoff')
    import openmm as mm
    platform = mm.Platform.getPlatformByName('Reference')
    positions, edge = benchmark.random_positions(400)
    plain = benchmark.rational_cv(list(range(400)), None, 1.0, periodic=True)
    plainRun = benchmark.FrozenContext(benchmark.frozen_system(plain, positions, edge), positions, platform, 'double')
    for threshold in (cutoff.PER_ATOM_THRESHOLD, 1.1 * cutoff.PER_ATOM_THRESHOLD):
        force = cutoff.per_atom_cv(400, 1.0, threshold)
        run = benchmark.FrozenContext(benchmark.frozen_system(force, positions, edge), positions, platform, 'double')
        if threshold != cutoff.PER_ATOM_THRESHOLD:
            with pytest.raises(RuntimeError, match='per-atom check: the CV is'):
                cutoff.check_per_atom(positions, edge, 1.0, cutoff.PER_ATOM_THRESHOLD, force, run, plainRun, np.arange(400))
            continue
        value, plainValue, numberError, forceError = cutoff.check_per_atom(positions, edge, 1.0, threshold, force, run, plainRun,
                                                                           np.arange(0, 400, 3))
        # The c_i of random particles at 33.4/nm^3: about 33.4 * 2 pi^2/3 * 0.3^3 = 5.9 on average.
        assert 5.0 < 2 * plainValue / 400 < 6.8 and 0 < value < 400
        assert numberError < 1e-10 and forceError < 1e-8


def test_cutoff_per_atom_row_skipped(monkeypatch):
    """A per-atom row whose check fails (here the force's threshold is not the one NumPy uses) is a
    row that says why, with no timings, and the section goes on (CPU, the --quick size)."""
    cutoff = import_benchmark('bench_cutoff')
    import openmm as mm
    monkeypatch.setattr(cutoff, 'per_atom_cv',
                        lambda n, dmax, build=cutoff.per_atom_cv: build(n, dmax, 1.1 * cutoff.PER_ATOM_THRESHOLD))
    row = cutoff.per_atom_row(mm.Platform.getPlatformByName('CPU'), 'mixed', True)
    assert row['kind'] == 'per-atom' and row['atoms'] == 5000 and 'ms_per_evaluation' not in row
    assert row['skipped'].startswith('RuntimeError: per-atom check: the CV is')


def test_environment_restores_variables(monkeypatch):
    """The benchmark's environment block sets the CUDA switches for the Contexts created inside it,
    then restores what was there (a value, or nothing)."""
    benchmark = import_benchmark('bench_cutoff')
    monkeypatch.setenv('COORDINATION_NEIGHBOR_LIST', '1')
    monkeypatch.delenv('COORDINATION_LIST_KIND', raising=False)
    with benchmark.environment(COORDINATION_NEIGHBOR_LIST='always', COORDINATION_LIST_KIND='homes'):
        assert os.environ['COORDINATION_NEIGHBOR_LIST'] == 'always'
        assert os.environ['COORDINATION_LIST_KIND'] == 'homes'
    assert os.environ['COORDINATION_NEIGHBOR_LIST'] == '1'
    assert 'COORDINATION_LIST_KIND' not in os.environ


def test_main_job_argument_errors(tmp_path):
    """Bad values, a missing checkpoint, an --output that is a file, a fresh run into the folder of an
    earlier run: argparse's error (status 2, the option and the value named), no traceback, nothing written."""
    (tmp_path/'file').write_text('')
    earlier = tmp_path/'earlier'
    earlier.mkdir()
    (earlier/'checkpoint.chk').write_bytes(b'the first run')
    for arguments, message in [
            (['--box', '0'], "argument --box: must be a number > 0, got '0'"),
            (['--box', 'nan'], "argument --box: must be a number > 0, got 'nan'"),
            (['--metad-steps', '0'], "argument --metad-steps: must be an integer >= 1, got '0'"),
            (['--gr-steps', '10'], 'argument --gr-steps: must be at least 20 (a frame every 20 steps), got 10'),
            (['--bias-factor', '1'], "argument --bias-factor: must be a number > 1, got '1'"),
            (['--nn', 'x'], "argument --nn: must be an integer >= 1, got 'x'"),
            (['--platform', 'Nowhere'], "argument --platform: no platform 'Nowhere'; this OpenMM has "),
            (['--output', str(tmp_path/'file')], "argument --output: %r is not a folder" % str(tmp_path/'file')),
            (['--restart', '--output', str(tmp_path/'none')],
             "--restart continues a run in --output %r, which has no checkpoint.chk" % str(tmp_path/'none')),
            (['--output', str(earlier)], '--output %r holds the checkpoint of an earlier run (checkpoint.chk): '
                                         'continue it with --restart' % str(earlier))]:
        result = subprocess.run([sys.executable, os.path.join('examples', 'ion_coordination.py'), '--quick',
                                 '--platform', 'CPU'] + arguments, capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 2 and 'Traceback' not in result.stderr, (arguments, result.stderr)
        assert 'ion_coordination.py: error: ' + message in result.stderr, (arguments, result.stderr)
    assert not os.path.exists(tmp_path/'none') and os.listdir(earlier) == ['checkpoint.chk']
    assert (earlier/'checkpoint.chk').read_bytes() == b'the first run'
