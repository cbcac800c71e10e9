"""Trajectory analysis through the force against MDAnalysis (InterRDF, distances) on the same frames,
from files (PDB + DCD, XTC) and from a Universe; the progress bar; the command line."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

mda = pytest.importorskip('MDAnalysis')
pytest.importorskip('tqdm')
from MDAnalysis.analysis.rdf import InterRDF  # noqa: E402
from MDAnalysis.coordinates.memory import MemoryReader  # noqa: E402
from MDAnalysis.lib.distances import calc_bonds, distance_array  # noqa: E402

from openmmcoordination import CoordinationForce  # noqa: E402
from openmmcoordination.analysis import analyzeTrajectory, bestPlatform  # noqa: E402
from openmmcoordination.cli import main as cli  # noqa: E402
from openmmcoordination.gr import PairDistribution  # noqa: E402

from gr_helpers import REPO, png_size  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore::UserWarning', 'ignore::DeprecationWarning')

NUM_ATOMS = 90      # every third atom is an "O", the others "H"
NUM_FRAMES = 6
NUM_BINS = 40
MAX_DISTANCE = 0.9  # nm
EDGE_TOLERANCE = 1e-4  # Angstrom


def _far_from_bin_edges(coordinates, dimensions):
    """True if no pair distance (nearest image) lies within EDGE_TOLERANCE of a bin edge, so float32
    rounding in either code cannot put a pair in different bins."""
    distances = distance_array(coordinates, coordinates, box=dimensions)
    binWidth = 10.0*MAX_DISTANCE/NUM_BINS
    fractional = distances/binWidth
    near = np.abs(fractional - np.round(fractional))*binWidth < EDGE_TOLERANCE
    np.fill_diagonal(near, False)
    return not near.any()


def make_universe(seed, dimensions):
    """A Universe of random frames (Angstrom) in the given box (or one box per frame: a box that
    changes, as under NPT), with no pair near a bin edge."""
    rng = np.random.default_rng(seed)
    perFrame = np.broadcast_to(np.array(dimensions, dtype=np.float32).reshape(-1, 6), (NUM_FRAMES, 6))
    from openmm.app.internal.unitcell import computePeriodicBoxVectors
    from openmm import unit
    frames = []
    while len(frames) < NUM_FRAMES:
        dimensions = perFrame[len(frames)]
        box = np.array(computePeriodicBoxVectors(*(dimensions[:3]/10), *(dimensions[3:]*unit.degree)).value_in_unit(unit.nanometer))*10
        coordinates = (rng.random((NUM_ATOMS, 3)) @ box).astype(np.float32)
        if _far_from_bin_edges(coordinates, dimensions):
            frames.append(coordinates)
    universe = mda.Universe.empty(NUM_ATOMS, n_residues=NUM_ATOMS, atom_resindex=np.arange(NUM_ATOMS), trajectory=True)
    universe.add_TopologyAttr('name', ['O' if i % 3 == 0 else 'H' for i in range(NUM_ATOMS)])
    universe.add_TopologyAttr('resname', ['WAT']*NUM_ATOMS)
    universe.add_TopologyAttr('resid', np.arange(1, NUM_ATOMS + 1))
    universe.load_new(np.array(frames), format=MemoryReader, dimensions=np.array(perFrame), dt=2.0)
    return universe


BOXES = {'cube': [20.0, 20.0, 20.0, 90, 90, 90], 'triclinic': [20.0, 22.0, 19.0, 75, 80, 100]}


@pytest.fixture(scope='module', params=sorted(BOXES))
def universe(request):
    return make_universe(7, BOXES[request.param])


def test_two_groups_against_interrdf(universe):
    result = analyzeTrajectory(universe, None, 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                               platform='Reference')
    oxygens, hydrogens = universe.select_atoms('name O'), universe.select_atoms('name H')
    reference = InterRDF(oxygens, hydrogens, nbins=NUM_BINS, range=(0.0, 10*MAX_DISTANCE)).run()
    inside = result.gr.edges[1:] <= result.gr.validMax
    assert inside.sum() >= NUM_BINS//2
    np.testing.assert_array_equal(result.gr.counts, reference.results.count)
    np.testing.assert_allclose(result.gr.g[inside], reference.results.rdf[inside], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result.gr.r, reference.results.bins/10, rtol=1e-12)
    # n(r): B atoms within r of an A atom, averaged
    np.testing.assert_allclose(result.gr.n, np.cumsum(reference.results.count)/(NUM_FRAMES*len(oxygens)), rtol=1e-12)
    assert result.gr.volume == pytest.approx(universe.trajectory.ts.volume/1000, rel=1e-6)


def test_one_group_against_interrdf(universe):
    """One group counts each pair once over N(N-1)/2: InterRDF of the group with itself, excluding
    self pairs, counts each twice over N(N-1), the same g."""
    result = analyzeTrajectory(universe, None, 'name O', None, numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                               platform='Reference', computeCV=False)
    oxygens = universe.select_atoms('name O')
    reference = InterRDF(oxygens, oxygens, nbins=NUM_BINS, range=(0.0, 10*MAX_DISTANCE), exclusion_block=(1, 1)).run()
    inside = result.gr.edges[1:] <= result.gr.validMax
    np.testing.assert_array_equal(2*result.gr.counts, reference.results.count)
    np.testing.assert_allclose(result.gr.g[inside], reference.results.rdf[inside], rtol=1e-6, atol=1e-12)
    assert result.cv is None


def test_changing_box_against_interrdf():
    """A box that changes from frame to frame (NPT): g(r) is normalized by the mean volume, as InterRDF's,
    not by the volume of the mean box."""
    boxes = [[20.0*f, 21.0*f, 19.0*f, 75, 80, 100] for f in np.linspace(0.9, 1.15, NUM_FRAMES)]
    universe = make_universe(11, boxes)
    result = analyzeTrajectory(universe, None, 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                               platform='Reference', computeCV=False, correct=False)
    reference = InterRDF(universe.select_atoms('name O'), universe.select_atoms('name H'), nbins=NUM_BINS,
                         range=(0.0, 10*MAX_DISTANCE)).run()
    np.testing.assert_array_equal(result.gr.counts, reference.results.count)
    assert result.gr.volume == pytest.approx(np.mean([ts.volume for ts in universe.trajectory])/1000, rel=1e-6)
    # full shells (correct=False) in both codes: the same g in every bin
    np.testing.assert_allclose(result.gr.g, reference.results.rdf, rtol=1e-6, atol=1e-12)


def test_arguments_are_checked_before_the_frames():
    """Bad bins, range, volume, groups or frame range: a ValueError naming analyzeTrajectory, the parameter
    and the value (not an OverflowError, a NumPy IndexError, a truncated 2.5 or a negative index taken from
    the end), and a maxDistance in Angstrom is the same histogram as in nm."""
    from openmm import unit
    universe = make_universe(3, BOXES['cube'])
    run = lambda **options: analyzeTrajectory(universe, None, **dict(dict(groupA='name O', numBins=NUM_BINS,
                                                                           maxDistance=MAX_DISTANCE, platform='Reference'),
                                                                      **options))
    cases = [(dict(numBins=0), 'numBins must be an integer from 1 to MaxHistogramBins = 10000000, got 0'),
             (dict(numBins=2.5), 'numBins .*got 2.5'), (dict(numBins=10**10), 'numBins .*got 10000000000'),
             (dict(maxDistance=-1.0), 'maxDistance must be positive, got -1.0'),
             (dict(maxDistance=1*unit.kilojoule_per_mole), 'maxDistance must be a distance .*got 1 kJ/mol'),
             (dict(maxDistance=float('inf')), 'maxDistance must be finite, got inf'),
             (dict(periodic=False, volume=-8.0), 'volume must be positive and finite, got -8.0'),
             (dict(groupA=[]), 'groupA selects no atom, got \\[\\]'),
             (dict(groupA=[0, NUM_ATOMS]), "groupA has atom index 90, outside the topology's 90 atoms"),
             (dict(groupA=[0, -1]), "groupA has atom index -1, outside the topology's 90 atoms"),
             (dict(groupB='name XX'), "groupB 'name XX': .*matches no atom"),
             (dict(groupA='name O and'), "groupA 'name O and': "),
             (dict(start=NUM_FRAMES), 'no frame in the range given: start=6, stop=None, step=None of a trajectory of 6 frames'),
             (dict(step=0), 'start=None, stop=None, step=0: '),
             (dict(groupA=[0.5, 3]), 'groupA \\[0.5, 3\\]: selectAtoms: an atom index must be an integer, got 0.5'),
             (dict(groupA=[0]), 'the groups have no pair for g\\(r\\) \\(groupA \\[0\\], groupB None\\)'),
             (dict(groupA=[4], groupB=[4]), 'the groups have no pair for g\\(r\\)')]
    for options, message in cases:
        with pytest.raises(ValueError, match='analyzeTrajectory: ' + message):
            run(**options)
    inNm = run(computeCV=False)
    inAngstrom = run(computeCV=False, maxDistance=10*MAX_DISTANCE*unit.angstrom)
    np.testing.assert_array_equal(inAngstrom.gr.counts, inNm.gr.counts)
    np.testing.assert_allclose(inAngstrom.gr.edges, inNm.gr.edges, rtol=1e-12)


def test_pair_list_and_cv_against_mdanalysis_distances(universe):
    a, b = [0, 3, 6, 9, 12], [1, 5, 30, 40, 89]
    template = CoordinationForce()
    template.setR0(0.4)
    template.setN(8)
    result = analyzeTrajectory(universe, None, a, b, pairList=True, numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                               force=template, platform='Reference')
    assert result.force.getR0()._value == 0.4 and result.force.getN() == 8
    distances = np.array([calc_bonds(ts.positions[a], ts.positions[b], box=ts.dimensions)/10
                          for ts in universe.trajectory])
    counts, _ = np.histogram(distances, bins=NUM_BINS, range=(0, MAX_DISTANCE))
    np.testing.assert_array_equal(result.gr.counts, counts)
    np.testing.assert_allclose(result.gr.g, counts/(NUM_FRAMES*len(a)*MAX_DISTANCE/NUM_BINS), rtol=1e-12)
    cv = np.array([[template.evaluateSwitchingFunction(float(r))[0] for r in frame] for frame in distances]).sum(axis=1)
    np.testing.assert_allclose(result.cv, cv, rtol=1e-5)  # float32 coordinates
    np.testing.assert_allclose(result.times, np.arange(NUM_FRAMES)*2.0)
    np.testing.assert_array_equal(result.frames, np.arange(NUM_FRAMES))


def test_cv_series_two_groups(universe):
    result = analyzeTrajectory(universe, None, 'name O', 'name H', r0=0.35, nn=6, mm=12, numBins=10,
                               maxDistance=MAX_DISTANCE, platform='Reference', step=2)
    force = result.force
    assert force.getR0()._value == 0.35
    expected = []
    for ts in universe.trajectory[::2]:
        d = distance_array(universe.select_atoms('name O').positions, universe.select_atoms('name H').positions,
                           box=ts.dimensions)/10
        expected.append(sum(force.evaluateSwitchingFunction(float(r))[0] for r in d.flat))
    np.testing.assert_allclose(result.cv, expected, rtol=1e-5)
    assert list(result.frames) == [0, 2, 4]


def test_files_and_progress_bar(tmp_path, capsys):
    universe = make_universe(3, BOXES['cube'])
    pdb, dcd, xtc = str(tmp_path/'t.pdb'), str(tmp_path/'t.dcd'), str(tmp_path/'t.xtc')
    universe.atoms.write(pdb)
    for path in (dcd, xtc):
        with mda.Writer(path, NUM_ATOMS) as writer:
            for _ in universe.trajectory:
                writer.write(universe.atoms)
    memory = analyzeTrajectory(universe, None, 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                               platform='Reference')
    fromDCD = analyzeTrajectory(pdb, dcd, 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE,
                                progress=True)
    assert 'frames' in capsys.readouterr().err  # tqdm writes to stderr
    np.testing.assert_array_equal(fromDCD.gr.counts, memory.gr.counts)
    np.testing.assert_allclose(fromDCD.cv, memory.cv, rtol=1e-12)
    assert fromDCD.platform == bestPlatform().getName()
    fromXTC = analyzeTrajectory(pdb, [xtc], 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE)
    assert fromXTC.gr.numFrames == NUM_FRAMES
    np.testing.assert_allclose(fromXTC.gr.n[-1], memory.gr.n[-1], rtol=0.02)  # XTC keeps 3 decimals
    single = analyzeTrajectory(pdb, None, 'name O', 'name H', numBins=NUM_BINS, maxDistance=MAX_DISTANCE)
    assert single.gr.numFrames == 1
    with pytest.raises(ValueError, match='matches no atom'):
        analyzeTrajectory(universe, None, 'name XX')


def _trajectory_files(tmp_path):
    """A universe of 4 frames in a cubic box, written to t.pdb and t.dcd in tmp_path: (universe, pdb, dcd)."""
    universe = make_universe(4, BOXES['cube'])
    pdb, dcd = str(tmp_path/'t.pdb'), str(tmp_path/'t.dcd')
    universe.atoms.write(pdb)
    with mda.Writer(dcd, NUM_ATOMS) as writer:
        for _ in universe.trajectory:
            writer.write(universe.atoms)
    return universe, pdb, dcd


def test_command_line(tmp_path, capsys):
    _, pdb, dcd = _trajectory_files(tmp_path)
    out = tmp_path/'out'
    assert cli(['analyze', pdb, dcd, '--group-a', 'name O', '--group-b', 'name H', '--bins', '30', '--rmax', '0.9',
                '--r0', 'auto', '--nn', '8', '-o', str(out), '--prefix', 'w_', '--no-progress']) == 0
    assert 'first minimum' in capsys.readouterr().out
    for name in ['w_gr.csv', 'w_cv.csv', 'w_gr.png', 'w_cv.png']:
        assert (out/name).stat().st_size > 0
    assert png_size(out/'w_gr.png')[0] > 500
    gr = PairDistribution.readCSV(str(out/'w_gr.csv'))
    assert gr.numFrames == NUM_FRAMES and len(gr.r) == 30
    rows = (out/'w_cv.csv').read_text().splitlines()
    assert rows[0] == 'frame,time_ps,cv' and len(rows) == NUM_FRAMES + 1
    # the plot command, with a chosen output
    assert cli(['plot', 'gr', str(out/'w_gr.csv'), '-o', str(tmp_path/'again.png'), '--r0', '0.3']) == 0
    assert cli(['plot', 'cv', str(out/'w_cv.csv'), '-o', str(tmp_path/'cv.png')]) == 0
    assert png_size(tmp_path/'again.png')[0] > 500 and png_size(tmp_path/'cv.png')[0] > 500


def test_command_line_errors(tmp_path, capsys):
    """A bad value is an argparse error (exit status 2, the option named); an input that cannot be used
    (a missing file, a selection of no atom, a picture format matplotlib does not write, a CSV of other
    columns) is one line "openmm-coordination <command>: error: ..." and status 1, not a traceback, and
    nothing is written."""
    _, pdb, dcd = _trajectory_files(tmp_path)
    out = str(tmp_path/'out')
    analyze = ['analyze', pdb, dcd, '--group-a', 'name O', '-o', out, '--no-progress', '--platform', 'Reference']
    for options, message in ((['--bins', '0'], "argument --bins: must be a positive integer, got '0'"),
                             (['--bins', '2.5'], "argument --bins: must be a positive integer, got '2.5'"),
                             (['--rmax', '-1'], "argument --rmax: must be a positive number, got '-1'"),
                             (['--r0', 'abc'], "argument --r0: must be a positive number, got 'abc'")):
        with pytest.raises(SystemExit) as exit:
            cli(analyze + options)
        assert exit.value.code == 2 and message in capsys.readouterr().err
    csv = tmp_path/'cv.csv'
    csv.write_text('step,time_ps,cv\n10,0.02,4.5\n')
    for arguments, message in (
            (analyze + ['--format', 'xyz'], 'analyze: error: --format xyz is not a picture format matplotlib writes'),
            (['analyze', pdb, dcd, '--group-a', 'name XX', '-o', out], "analyze: error: analyzeTrajectory: groupA 'name XX'"),
            (analyze + ['--start', '100'], 'analyze: error: analyzeTrajectory: no frame in the range given: start=100'),
            (['analyze', str(tmp_path/'missing.pdb'), '--group-a', 'name O', '-o', out], 'analyze: error: .*missing.pdb'),
            (['plot', 'gr', str(csv)], "plot: error: PairDistribution.readCSV: '.*cv.csv' is not a table of g.r."),
            (['plot', 'gr', dcd], "plot: error: PairDistribution.readCSV: '.*t.dcd' is not a table of g.r."),
            (['plot', 'cv', pdb], 'plot: error: .*t.pdb is not a CSV table of numbers under a header line with the '
                                  'columns time_ps')):
        assert cli(arguments) == 1, arguments
        err = capsys.readouterr().err
        assert re.search('^openmm-coordination ' + message, err) and 'Traceback' not in err, (arguments, err)
    assert (not os.path.exists(out) or os.listdir(out) == []) and not os.path.exists(str(tmp_path/'cv.png'))


def test_module_entry_point_runs():
    """`python -m openmmcoordination info` in a fresh process (what the console script calls)."""
    env = dict(os.environ)
    result = subprocess.run([sys.executable, '-m', 'openmmcoordination', 'info'], capture_output=True, text=True,
                            env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'best platform for CoordinationForce' in result.stdout
