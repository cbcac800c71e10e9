"""benchmarks/report.py: the tables of docs/performance.md hold the figures of the JSON of one
benchmark run (ours, the peer's and their ratio, the target and whether it is met; the md
section's restraints of one and two CVs and its metadynamics of one and two CVs), the header the
run's card, versions, date, command and time per section, and the plots are PNG files. Synthetic
JSON, and the results files of the repository. Needs only matplotlib, not OpenMM:
`pytest --noconftest python/tests/test_report.py` runs it without the plugin."""

import glob
import importlib.util
import json
import os
import struct
import subprocess
import sys

import pytest

pytest.importorskip('matplotlib')

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'benchmarks', 'report.py')
REAL_MD = os.path.join(ROOT, 'benchmarks', 'results', 'h100-mixed-2026-11-25.json')

spec = importlib.util.spec_from_file_location('benchmark_report', SCRIPT)
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

INFO = {'openmm': '8.6.1', 'platform': 'CUDA', 'precision': 'mixed', 'host': 'test', 'python': '3.12.3',
        'gpu': 'NVIDIA H100 80GB HBM3, 580.159.04', 'date': '2026-12-01',
        'command': 'python benchmarks/benchmark.py --platform CUDA --precision mixed --json results.json',
        'sections': ['md', 'contacts', 'throughput', 'cutoff', 'latency', 'histogram', 'coldstart'],
        'sections_elapsed_s': {'md': 150.2, 'contacts': 80.0, 'throughput': 40.4, 'cutoff': 95.0, 'latency': 7.0,
                               'histogram': 18.0, 'coldstart': 30.0},
        'elapsed_s': 420.6, 'complete': True}
PLAIN = {'section': 'md', 'case': 'plain (23682 atoms)', 'kind': 'plain', 'ms_per_step': 0.2, 'atoms': 23682, 'replicas': 3,
         'plain_replica_spread_percent': 1.5, 'steps': 2000, 'repeats': 5}


def md_rows(name, fast, fastOverhead, fastToggled, compatibleOverhead, peer, peerOverhead, bias='restraint', extra=None):
    """The rows of one case of the md section as benchmark.py writes them (one shared plain row apart)."""
    base = dict(extra or {}, section='md', cv_case=name, bias=bias, plain_ms_per_step=0.2, steps=2000, repeats=5)
    rows = [dict(base, case='%s: ours' % name, kind='ours', ms_per_step=fast, overhead_percent=fastOverhead,
                 overhead_per_round_percent=[fastOverhead - 0.5, fastOverhead, fastOverhead + 0.25], replicas=3)]
    if fastToggled is not None:
        rows[0]['toggled_overhead_percent'] = fastToggled
    if bias == 'metadynamics':
        rows[0]['hills_overhead_percent'] = fastOverhead / 2
    if compatibleOverhead is not None:
        rows.append(dict(base, case='%s: compatibility path' % name, kind='compatible', ms_per_step=0.3,
                         overhead_percent=compatibleOverhead))
    rows.append(dict(base, case='%s: peer' % name, kind='peer', ms_per_step=peer, overhead_percent=peerOverhead))
    if bias == 'metadynamics':
        rows[-1]['hills_overhead_percent'] = 3.0
    if fastToggled is not None:
        rows[-1]['toggled_overhead_percent'] = peerOverhead + 1
    return rows


METAD = dict(hill_frequency=500, bias_factor=10.0, hill_height=1.0)
# The cutoff section's per-atom row (issue 42), as bench_cutoff.per_atom_row writes it.
PER_ATOM = {'section': 'cutoff', 'case': 'per-atom c_i of 100,000 atoms, MoreThan 6, periodic, dmax 1 nm, against the plain sum',
            'kind': 'per-atom', 'atoms': 100000, 'density_per_nm3': 33.4, 'dmax': 1.0, 'threshold': 6.0,
            'pairs_within_dmax': 7000000, 'checked_atoms': 500, 'ms_per_evaluation': 0.098, 'plain_ms_per_evaluation': 0.07,
            'per_atom_over_plain': 1.4, 'energy_only_ms_per_evaluation': 0.06, 'plain_energy_only_ms_per_evaluation': 0.048,
            'energy_only_over_plain': 1.25, 'numbers_per_s': 1.02e9, 'repeats': 3, 'steps': 1000}


def synthetic_rows():
    rows = [PLAIN]
    rows += md_rows('1 O vs the other O', 0.203, 1.5, 1.25, 30.0, 0.25, 25.0)
    rows += md_rows('self-coordination of all O (dmax 1 nm)', 0.22, 10.0, 4.0, 60.0, 0.36, 80.0)
    rows += md_rows('1 O and 100 O vs the other O (2 CVs)', 0.207, 3.5, 3.75, None, 0.29, 45.0)
    rows += md_rows('metadynamics of 1 O vs the other O (1-D)', 0.208, 4.0, None, None, 0.26, 30.0, 'metadynamics',
                    dict(METAD, dimensions=1, bias_variables=[[0.0, 20.0, 0.2, 401]]))
    rows += md_rows('metadynamics of 1 O and 100 O vs the other O (2-D)', 0.21, 5.0, None, 40.0, 0.3, 50.0, 'metadynamics',
                    dict(METAD, dimensions=2, bias_variables=[[0.0, 20.0, 0.2, 201], [357.0, 557.0, 2.0, 201]]))
    rows += [{'section': 'contacts', 'case': 'plain (23558 atoms)', 'kind': 'plain', 'ms_per_step': 0.2, 'atoms': 23558},
             {'section': 'contacts', 'case': 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm): ours (pair list)', 'kind': 'ours',
              'cv_case': 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm)', 'bias': 'restraint', 'ms_per_step': 0.204,
              'plain_ms_per_step': 0.2, 'overhead_percent': 2.0, 'toggled_overhead_percent': 1.0, 'pairs': 11712},
             {'section': 'contacts', 'case': 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm): peer (CustomBondForce)',
              'kind': 'peer', 'cv_case': 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm)', 'bias': 'restraint',
              'ms_per_step': 0.25, 'plain_ms_per_step': 0.2, 'overhead_percent': 25.0, 'toggled_overhead_percent': 24.0,
              'pairs': 11712}]
    rows += [{'section': 'throughput', 'case': '10k x 10k', 'pairs': 100000000, 'ms': 0.4, 'peer_ms': 0.5,
              'speedup_vs_peer': 1.25, 'ms_per_evaluation': 0.1, 'peer_ms_per_evaluation': 0.3},
             {'section': 'throughput', 'case': '100k self', 'pairs': 4999950000, 'ms': 6.0, 'peer_ms': 12.0,
              'speedup_vs_peer': 2.0, 'ms_per_evaluation': 5.0, 'peer_ms_per_evaluation': 10.0},
             {'section': 'latency', 'case': '1 x 1,000 pairs with a restraint, per MD step', 'us_per_evaluation': 7.5,
              'us_step_without': 15.0, 'us_per_evaluation_range': [6.25, 9.0], 'rounds': 7},
             {'section': 'cutoff', 'case': '100,000 atoms', 'atoms': 100000, 'density_per_nm3': 33.4, 'dmax': 1.0,
              'numbering': 'random', 'pairs_within_dmax': 7000000, 'ms_per_evaluation': 0.07, 'peer_ms_per_evaluation': 0.21,
              'speedup_per_evaluation': 3.0, 'ms_per_evaluation_rebuilt_every_10': 0.08,
              'energy_only_ms_per_evaluation': 0.05, 'peer_energy_only_ms_per_evaluation': 0.2, 'energy_only_speedup': 4.0},
             {'section': 'cutoff', 'case': '1,000,000 atoms', 'atoms': 1000000, 'density_per_nm3': 33.4, 'dmax': 1.0,
              'numbering': 'spatial', 'pairs_within_dmax': 70000000, 'ms_per_evaluation': 0.3, 'peer_ms_per_evaluation': 1.8,
              'speedup_per_evaluation': 6.0, 'ms_per_evaluation_rebuilt_every_10': 0.33,
              'energy_only_ms_per_evaluation': 0.25, 'peer_energy_only_ms_per_evaluation': 1.5, 'energy_only_speedup': 6.0},
             PER_ATOM,
             {'section': 'histogram', 'case': '100000 atoms, all pairs, 200 bins, one frame read back', 'ms': 5.0,
              'pairs_per_s': 1.2e12, 'peer': 'CuPy', 'peer_ms': 1000.0, 'peer_pairs_per_s': 5e9, 'speedup_vs_peer': 200.0},
             {'section': 'coldstart', 'case': '50-pair list (pairs)', 'precision': 'mixed', 'added_cold_s': 0.2,
              'added_warm_s': 0.03, 'first_histogram_cold_s': 0.07, 'plain_fresh_cache_s': 3.9}]
    return rows


def write_json(path, rows, info=INFO):
    with open(path, 'w') as out:
        json.dump({'info': info, 'rows': rows}, out)
    return str(path)


def png_size(path):
    with open(path, 'rb') as stream:
        head = stream.read(24)
    assert head[:8] == b'\x89PNG\r\n\x1a\n'
    return struct.unpack('>II', head[16:24])


def table_row(text, first_cell):
    """The cells of the table row of the page whose first cell is first_cell."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('|') and cells[0] == first_cell:
            return cells
    raise AssertionError('no table row %r' % first_cell)


def section(text, title):
    start = text.index('## ' + title)
    end = text.find('\n## ', start + 1)
    return text[start:end if end >= 0 else None]


def test_synthetic_run(tmp_path):
    docs = tmp_path / 'docs'
    text = report.write_report(write_json(tmp_path / 'run.json', synthetic_rows()), str(docs))
    assert (docs / 'performance.md').read_text() == text
    # The header: the run's GPU, driver, OpenMM, precision, date, its time; the command; each section's time.
    assert table_row(text, 'NVIDIA H100 80GB HBM3') == ['NVIDIA H100 80GB HBM3', '580.159.04', '8.6.1', 'CUDA', 'mixed', '2026-12-01',
                                                        '7.0 min']
    assert INFO['command'] in text
    assert 'python benchmarks/report.py %s' % os.path.relpath(str(tmp_path / 'run.json')) in text
    assert 'md 150, contacts 80, throughput 40, cutoff 95, latency 7, histogram 18, coldstart 30.' in text
    assert 'stopped before its end' not in text

    # MD: ours 0.203 ms/step against the peer's 0.25 (ratio 1.23x); 1.5% / 1.25% within 1.5%, but ours
    # in CustomCVForce (0.3 ms) slower than the peer in it (0.25/0.3 = 0.83x, under 1.02x): not met.
    md = section(text, 'MD step time')
    assert table_row(md, '1 O vs the other O') == ['1 O vs the other O', '0.200', '0.203', '+1.5% / +1.2%', '0.250',
                                                   '+25.0% / +26.0%', '1.23x', '+30.0%', '0.83x',
                                                   '<= 1.5%, >= 1.02x in CustomCVForce', '**no**']
    # Separate 10% over the 6% target, toggled 4% within it: not met; ratio 0.36/0.22 = 1.64x; in CustomCVForce 1.20x.
    assert table_row(md, 'self-coordination of all O (dmax 1 nm)')[5:] == ['+80.0% / +81.0%', '1.64x', '+60.0%', '1.20x',
                                                                           '<= 6%, >= 1.3x in CustomCVForce', '**no**']
    # Two CVs: CoordinationBiasForce 3.5% / 3.75% over 3%: not met; no compatibility path; 0.29/0.207 = 1.40x.
    assert table_row(md, '1 O and 100 O vs the other O (2 CVs)') == [
        '1 O and 100 O vs the other O (2 CVs)', '0.200', '0.207', '+3.5% / +3.8%', '0.290', '+45.0% / +46.0%', '1.40x', '-', '-',
        '<= 3%', '**no**']
    assert 'CoordinationBiasForce' in md and 'one interleaved run' in md and '5 rounds of step(2000)' in md
    assert '(plain and ours: the mean of 3 Contexts each)' in md
    assert 'differed by 1.5% among themselves' in md
    # The largest range of our per-round overheads: 0.75 points.
    assert 'by up to 0.8 points' in md
    assert 'metadynamics' not in table_rows_first_cells(md)

    # Metadynamics of one CV (4% within 5%) and two (5% over 3.5%; openmm.app over ours 0.3 ms, as fast
    # as the peer: 1.00x, not above 1), from the md rows.
    meta = section(text, 'Well-tempered metadynamics')
    assert table_row(meta, '1 O vs the other O (1-D)') == ['1 O vs the other O (1-D)', '0.200', '0.208', '+4.0%', '0.260', '+30.0%',
                                                           '1.25x', '+2.0% / +3.0%', '-', '-', '<= 5%', 'yes']
    assert table_row(meta, '1 O and 100 O vs the other O (2-D)')[2:] == ['0.210', '+5.0%', '0.300', '+50.0%', '1.43x',
                                                                         '+2.5% / +3.0%', '+40.0%', '1.00x', '<= 3.5%', '**no**']
    assert ('1-D: CV 1 over [0, 20] (hills 0.2 wide, 401 grid points); 2-D: CV 1 over [0, 20] and CV 2 over [357, 557] '
            '(hills 0.2 and 2 wide, 201 x 201 grid points).') in meta
    assert 'every 500 steps' in meta
    # The bar chart after the metadynamics table, not after the MD one.
    assert '](%s)' % report.MD_IMAGE in meta and '](%s)' % report.MD_IMAGE not in md

    contacts = section(text, 'Native contacts')
    assert table_row(contacts, 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm)')[1:] == [
        '0.200', '0.204', '+2.0% / +1.0%', '0.250', '+25.0% / +24.0%', '1.23x', '<= 3%', 'yes']

    # Throughput per evaluation: 0.3/0.1 = 3.00x (target 2.5x met), 1e8 pairs in 0.1 ms = 1e12 pairs/s;
    # 100k self 2.00x: missed.
    throughput = section(text, 'All pairs')
    assert table_row(throughput, '10k x 10k') == ['10k x 10k', '100,000,000', '0.100', '0.300', '3.00x', '1.00e12', '0.400', '0.500',
                                                  '1.25x', '>= 2.5x', 'yes']
    assert table_row(throughput, '100k self')[4] == '2.00x'
    assert table_row(throughput, '100k self')[-1] == '**no**'

    latency = section(text, 'Latency')
    assert table_row(latency, '1 x 1,000 pairs with a restraint, per MD step') == [
        '1 x 1,000 pairs with a restraint, per MD step', '7.50', '6.25 to 9.00', '-', '15.0', '<= 3 us', '**no**']

    cutoff = section(text, 'Self-coordination with a cutoff')
    assert table_row(cutoff, '100,000') == ['100,000', '33.4', 'random', '7.00e6', '0.0700', '0.210', '3.00x', '0.0800',
                                            '0.0500 / 0.200', '4.00x', '-', '-']
    assert table_row(cutoff, '1,000,000')[4:] == ['0.300', '1.80', '6.00x', '0.330', '0.250 / 1.50', '6.00x', '<= 0.35 ms', 'yes']

    # The per-atom row, in a table of its own after the cutoff rows: 0.098 ms against the plain sum's
    # 0.07 ms, 1.40 within the 1.5 of issue 42; 100,000 c_i in 0.098 ms: 1.02e9 per second.
    perAtom = cutoff[cutoff.index('*Per-atom coordination numbers*'):]
    assert table_row(perAtom, '100,000') == ['100,000', '7.00e6', '0.0700', '0.0980', '1.40', '0.0480 / 0.0600', '1.25',
                                              '1.02e9', '<= 1.5', 'yes']
    assert 'MoreThan (threshold 6)' in perAtom and 'dmax 1 nm' in perAtom and 'the c_i of 500 particles' in perAtom
    assert '3 rounds' in perAtom
    assert cutoff.index('| 1,000,000 |') < cutoff.index('*Per-atom coordination numbers*')

    histogram = section(text, 'Pair histograms')
    assert table_row(histogram, '100000 atoms, all pairs, 200 bins, one frame read back')[1:] == [
        '5.00', '1.20e12', '1,000', '5.00e9', '200x', '>= 1.00e12 pairs/s', 'yes']

    assert table_row(section(text, 'Cold start'), '50-pair list (pairs)') == ['50-pair list (pairs)', 'mixed', '0.20', '0.030', '0.07',
                                                                              '3.90', 'yes']

    for image in (report.MD_IMAGE, report.SCALING_IMAGE):
        assert '](%s)' % image in text
        assert (docs / image).stat().st_size > 10000
        width, height = png_size(docs / image)
        assert width > 800 and height > 500


def table_rows_first_cells(text):
    return [line.strip('|').split('|')[0].strip() for line in text.splitlines() if line.startswith('|')]


def test_per_atom_rows(tmp_path):
    """The cutoff section's per-atom rows: the target 1.5 of issue 42 for 100,000 particles with dmax
    1 nm (1.6: not met), none for the --quick size, a row that failed its check says why; with no
    other cutoff row the per-atom table stands alone, and no row of it reaches the scaling plot."""
    rows = [dict(PER_ATOM, per_atom_over_plain=1.6, ms_per_evaluation=0.112),
            dict({key: value for key, value in PER_ATOM.items() if 'energy_only' not in key}, atoms=5000,
                 pairs_within_dmax=350501, checked_atoms=5000, ms_per_evaluation=29.7, plain_ms_per_evaluation=15.4,
                 per_atom_over_plain=1.93, numbers_per_s=1.68e5),
            {'section': 'cutoff', 'case': PER_ATOM['case'], 'kind': 'per-atom', 'atoms': 100000, 'dmax': 1.0,
             'skipped': 'RuntimeError: per-atom check: the CV is 1, NumPy\'s MoreThan of the c_i 2'}]
    docs = tmp_path / 'docs'
    text = report.write_report(write_json(tmp_path / 'run.json', rows), str(docs))
    cutoff = section(text, 'Self-coordination with a cutoff')
    lines = [line for line in cutoff.splitlines() if line.startswith('| 100,000 |')]
    assert [line.split(' | ')[-5:] for line in lines[:1]] == [['0.0480 / 0.0600', '1.25', '1.02e9', '<= 1.5', '**no** |']]
    assert lines[1] == ('| 100,000 | - | not measured: RuntimeError: per-atom check: the CV is 1, NumPy\'s MoreThan of the c_i 2 '
                        '| - | - | - | - | - | - | - |')
    # A row of a run before the energy-only timing: those two columns say '-'.
    assert table_row(cutoff, '5,000') == ['5,000', '3.51e5', '15.4', '29.7', '1.93', '-', '-', '1.68e5', '-', '-']
    assert 'ours (ms/evaluation)' not in cutoff and cutoff.count('| particles |') == 1
    assert not (docs / report.SCALING_IMAGE).exists() and report.SCALING_IMAGE not in text


def test_skipped_case(tmp_path):
    """A case the run could not measure (an unsupported platform, a Metadynamics of one CV only) is a
    row that says why, with no figures, and no bars."""
    rows = [row for row in synthetic_rows() if row['section'] == 'md' and '2-D' not in row.get('cv_case', '')]
    rows.append({'section': 'md', 'case': 'metadynamics of 1 O and 100 O vs the other O (2-D)', 'kind': 'skipped',
                 'cv_case': 'metadynamics of 1 O and 100 O vs the other O (2-D)', 'bias': 'metadynamics',
                 'skipped': 'ValueError: Metadynamics: exactly one BiasVariable is supported, got 2'})
    text = report.write_report(write_json(tmp_path / 'run.json', rows), str(tmp_path / 'docs'))
    row = table_row(section(text, 'Well-tempered metadynamics'), '1 O and 100 O vs the other O (2-D)')
    assert row[2] == 'not measured: ValueError: Metadynamics: exactly one BiasVariable is supported, got 2'
    assert set(row[1:2] + row[3:]) == {'-'}
    assert table_row(section(text, 'Well-tempered metadynamics'), '1 O vs the other O (1-D)')[-1] == 'yes'


def test_sections_absent_and_incomplete(tmp_path):
    """A JSON with some sections only: the others are left out (and their plots); a run cut short
    says which of its sections are missing."""
    rows = synthetic_rows()
    latency = [r for r in rows if r['section'] == 'latency']
    docs = tmp_path / 'docs'
    info = dict(INFO, sections=['latency', 'md', 'cutoff'], sections_elapsed_s={'latency': 7.0}, elapsed_s=7.0, complete=False)
    text = report.write_report(write_json(tmp_path / 'latency.json', latency, info), str(docs))
    assert '## Latency' in text and '## MD step time' not in text and '## Pair histograms' not in text
    assert '## Well-tempered metadynamics' not in text
    assert not (docs / report.MD_IMAGE).exists() and not (docs / report.SCALING_IMAGE).exists()
    assert '**This run stopped before its end**: the sections md, cutoff are missing.' in text
    assert table_row(text, 'NVIDIA H100 80GB HBM3')[-1] == '0.1 min'

    # Restraints without metadynamics: the bar chart after the MD table.
    md = [r for r in rows if r['section'] == 'md' and r.get('bias') != 'metadynamics']
    text = report.write_report(write_json(tmp_path / 'md.json', md), str(docs))
    assert '## Well-tempered metadynamics' not in text
    assert '](%s)' % report.MD_IMAGE in section(text, 'MD step time')


def test_resumed_run(tmp_path):
    """A run that went on with --resume says so, with when; one that did not, nothing of it."""
    rows = [r for r in synthetic_rows() if r['section'] == 'latency']
    info = dict(INFO, resumed=['2026-12-01T10:20:00Z'])
    text = report.write_report(write_json(tmp_path / 'resumed.json', rows, info), str(tmp_path / 'docs'))
    assert ('went on, on the same GPU (by its UUID) with the same options, with `--resume` at 2026-12-01T10:20:00Z.' in text)
    text = report.write_report(write_json(tmp_path / 'once.json', rows), str(tmp_path / 'docs'))
    assert '--resume' not in text


def test_one_json_only(tmp_path):
    """The page comes from one run: report.py takes one JSON."""
    first, second = write_json(tmp_path / 'a.json', synthetic_rows()), write_json(tmp_path / 'b.json', synthetic_rows())
    completed = subprocess.run([sys.executable, SCRIPT, first, second, '--docs', str(tmp_path / 'docs')], capture_output=True,
                               text=True)
    assert completed.returncode != 0 and 'unrecognized arguments' in completed.stderr


def test_real_results_file(tmp_path):
    """The run of 2026-11-25 on the H100 (a run cut short after throughput): the 1 O fast path +2.4% /
    +2.7% (0.180 ms against the peer's 0.225 ms/step), two CVs through CoordinationBiasForce +6.0% /
    +5.0% against the peer's +53.9%, 2-D metadynamics +12.1% against openmm.app's +60.9%; Q of 11,712
    native contacts of DHFR +0.1% / +1.4% against +20.8%; the cells case of the cold start 1.33 s in
    double precision; the sections it did not reach are named."""
    docs = tmp_path / 'docs'
    completed = subprocess.run([sys.executable, SCRIPT, REAL_MD, '--docs', str(docs)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    text = (docs / 'performance.md').read_text()
    row = table_row(text, '1 O vs the other O')
    assert row[1:8] == ['0.176', '0.180', '+2.4% / +2.7%', '0.225', '+29.1% / +26.4%', '1.25x', '+37.3%']
    assert table_row(text, '1 O and 100 O vs the other O (2 CVs)')[3:7] == ['+6.0% / +5.0%', '0.270', '+53.9% / +60.0%', '1.45x']
    assert table_row(text, '1 O and 100 O vs the other O (2-D)')[3:8] == ['+12.1%', '0.282', '+60.9%', '1.44x', '+9.0% / +10.5%']
    q = table_row(text, 'Q of DHFR, 11712 native contacts (cutoff 0.65 nm)')
    assert q[3:] == ['+0.1% / +1.4%', '0.238', '+20.8% / +28.2%', '1.21x', '<= 3%', 'yes']
    assert table_row(text, '1,000,000')[3:] == ['1.05', '<= 1.2', 'yes']
    assert 'the sections cutoff, latency, histogram are missing' in text
    assert (docs / report.MD_IMAGE).stat().st_size > 10000


@pytest.mark.parametrize('path', sorted(glob.glob(os.path.join(ROOT, 'benchmarks', 'results', '*.json'))),
                         ids=os.path.basename)
def test_results_files(tmp_path, path):
    """Each results file of the repository makes a page on its own (runs before 2026-11-25 too: a
    plain row per MD case, no kinds; their metadynamics section is left out)."""
    docs = tmp_path / 'docs'
    completed = subprocess.run([sys.executable, SCRIPT, path, '--docs', str(docs)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    text = (docs / 'performance.md').read_text()
    assert text.startswith('# Performance') and text.count('\n## ') >= 1


def test_help():
    completed = subprocess.run([sys.executable, SCRIPT, '--help'], capture_output=True, text=True)
    assert completed.returncode == 0 and '--docs' in completed.stdout


def test_cpu_table_from_its_own_run(tmp_path):
    """--cpu: the cpu section's run (another machine) makes the page's last table, with its machine
    and the targets of issue 43 (at least the peer's speed on every row, 2x on all O)."""
    def case(name, kind, ms, speedup):
        return {'section': 'cpu', 'case': '%s: %s' % (name, kind), 'cv_case': name, 'kind': kind, 'ms_per_step': ms,
                'speedup_vs_peer': speedup, 'threads': '2'}
    rows = [{'section': 'cpu', 'case': 'plain (5853 atoms)', 'kind': 'plain', 'ms_per_step': 14.0, 'atoms': 5853, 'threads': '2'},
            case('1 O vs the other O', 'ours', 14.5, 1.1), case('1 O vs the other O', 'compatible', 15.0, 0.95),
            case('1 O vs the other O', 'peer', 15.5, 1.0),
            case('self-coordination of all O (dmax 1 nm)', 'ours', 16.0, 2.2),
            case('self-coordination of all O (dmax 1 nm)', 'compatible', 16.5, 2.1),
            case('self-coordination of all O (dmax 1 nm)', 'peer', 35.0, 1.0)]
    cpu = write_json(tmp_path / 'cpu.json', rows, dict(INFO, platform='CPU', host='a 2-core machine', note='shared.'))
    gpu = write_json(tmp_path / 'gpu.json', [r for r in synthetic_rows() if r['section'] == 'latency'])
    docs = tmp_path / 'docs'
    text = report.write_report(gpu, str(docs), cpu=cpu)
    cpuText = section(text, 'The CPU platform')
    assert 'a 2-core machine' in cpuText and 'Shared.' in cpuText
    assert table_row(cpuText, '5,853') == ['5,853', '1 O vs the other O', '14.0', '14.5', '1.10x', '15.0', '0.95x', '15.5', '>= 1x',
                                           '**no**']
    assert [r[-2:] for r in [row.split(' | ') for row in cpuText.splitlines() if 'self-coordination' in row]] == [['>= 2x', 'yes |']]
    with pytest.raises(ValueError, match='no rows of the cpu section'):
        report.write_report(gpu, str(docs), cpu=gpu)


def test_later_run_cut_short(tmp_path):
    """A run of --later that stopped after its first section (complete = false) says which of the
    sections it was started with are missing, under its command."""
    gpu = write_json(tmp_path / 'gpu.json', synthetic_rows())
    again = [PLAIN] + md_rows('1 O vs the other O', 0.2026, 1.25, 1.0, 29.0, 0.25, 25.0)
    later = write_json(tmp_path / 'later.json', again, dict(INFO, sections=['md', 'contacts', 'cutoff'],
                                                            sections_elapsed_s={'md': 345.0}, complete=False))
    text = report.write_report(gpu, str(tmp_path / 'docs'), later=[later])
    again = section(text, 'Rows measured again after this run')
    assert 'It stopped before its end: the sections contacts, cutoff are missing.' in again
    assert table_row(again, '1 O vs the other O')[1:4] == ['0.200', '0.203', '+1.2% / +1.0%']


def test_replicas_in_custom_cv_force(tmp_path):
    """Where the one-CV restraints in CustomCVForce, ours and the peer's, were timed as the mean of
    as many Contexts as ours (runs since 2026-12-07), the protocol says so; the two-CV peer's single
    Context does not change that."""
    rows = [dict(row) for row in synthetic_rows()]
    for row in rows:
        if row['section'] == 'md' and row.get('bias') == 'restraint' and '2 CVs' not in row.get('cv_case', '') \
                and row['kind'] in ('compatible', 'peer'):
            row['replicas'] = 3
    text = report.write_report(write_json(tmp_path / 'run.json', rows), str(tmp_path / 'docs'))
    assert '(plain, ours and both sides in CustomCVForce: the mean of 3 Contexts each)' in section(text, 'MD step time')


def test_rows_measured_again(tmp_path):
    """--later: runs of a few rows made after the full run get a section of their own, after the full
    run's GPU sections and before the CPU table, with each run's GPU, date and command and the tables
    of its sections (not their explanations); the header points to it; the full run's rows stay."""
    gpu = write_json(tmp_path / 'gpu.json', synthetic_rows())
    again = [PLAIN] + md_rows('1 O vs the other O', 0.2026, 1.25, 1.0, 29.0, 0.25, 25.0)
    later = write_json(tmp_path / 'later.json', again, dict(INFO, date='2026-12-02', command='python benchmarks/benchmark.py '
                                                            '--sections md --md-cases restraint --json later.json'))
    cpu = write_json(tmp_path / 'cpu.json', [{'section': 'cpu', 'case': 'plain (5853 atoms)', 'kind': 'plain',
                                              'ms_per_step': 14.0, 'atoms': 5853, 'threads': '2'}], dict(INFO, platform='CPU'))
    docs = tmp_path / 'docs'
    completed = subprocess.run([sys.executable, SCRIPT, gpu, '--docs', str(docs), '--cpu', cpu, '--later', later],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    text = (docs / 'performance.md').read_text()
    assert '[Rows measured again after this run](#rows-measured-again-after-this-run)' in text
    assert 'All figures come from one run of the benchmark, but those of the rows measured again after it, and the CPU table.' in text
    assert text.index('## Rows measured again after this run') < text.index('## The CPU platform')
    again = section(text, 'Rows measured again after this run')
    assert '### later.json' in again and '2026-12-02' in again and '--md-cases restraint --json later.json' in again
    assert table_row(again, '1 O vs the other O')[1:4] == ['0.200', '0.203', '+1.2% / +1.0%']
    assert 'stopped before its end' not in again
    assert table_row(section(text, 'MD step time'), '1 O vs the other O')[1:4] == ['0.200', '0.203', '+1.5% / +1.2%']
    assert '*Ours in CustomCVForce*' not in again and again.count('| CV |') == 1
    assert 'Well-tempered metadynamics:' not in again and '| CVs |' not in again
    assert '--later ' + os.path.relpath(later) in text
    # A run of metadynamics rows alone: their table, and no MD table of restraints (a header without rows).
    meta = [PLAIN] + [r for r in synthetic_rows() if r.get('bias') == 'metadynamics' and '2-D' in r['case']]
    laterMeta = write_json(tmp_path / 'later-meta.json', meta, dict(INFO, date='2026-12-03'))
    text = report.write_report(gpu, str(docs), later=[later, laterMeta])
    again = section(text, 'Rows measured again after this run')
    metaRun = again[again.index('### later-meta.json'):]
    assert 'Well-tempered metadynamics:' in metaRun and table_row(metaRun, '1 O and 100 O vs the other O (2-D)')[2] == '0.210'
    assert 'MD step time' not in metaRun and '| CV |' not in metaRun
    with pytest.raises(ValueError, match='no rows of a section this page shows'):
        report.write_report(gpu, str(docs), later=[cpu])
