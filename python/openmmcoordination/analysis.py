"""Analysis of existing trajectories: g(r), n(r) and the coordination number frame by frame, computed
by a CoordinationForce on the best available platform (CUDA when the plugin runs there, else CPU).
Trajectories are read with MDAnalysis (DCD, XTC, TRR, PDB, NetCDF, ...; OpenMM has no reader).

>>> app.PDBFile.writeFile(topology, positions, open('system.pdb', 'w'))
>>> result = analyzeTrajectory('system.pdb', 'traj.dcd', 'resname NA', 'name O and resname HOH', r0=0.32)
>>> result.gr.writeCSV('gr.csv'); result.times, result.cv

Also from the command line: ``openmm-coordination analyze system.pdb traj.dcd --group-a ...``.
"""

import copy
import os

import numpy as np

import openmm
from openmm import unit

from openmmcoordination._checks import _isInteger
from openmmcoordination.gr import _histogramArguments, pairDistributionFromCounts

__all__ = ['TrajectoryAnalysis', 'analyzeTrajectory', 'bestPlatform', 'makeForce', 'selectAtoms', 'loadUniverse']


def bestPlatform(candidates=('CUDA', 'CPU', 'Reference'), biasForce=False):
    """The first platform in ``candidates`` on which a CoordinationForce can be created; with
    ``biasForce``, a CoordinationBiasForce as well (Metadynamics applies its bias with one). Where the
    environment variable OPENMM_DEFAULT_PLATFORM names a platform (OpenMM's own choice for a Context
    created without one), that platform alone is the candidate."""
    from openmmcoordination import CoordinationBiasForce, CoordinationForce
    if os.environ.get('OPENMM_DEFAULT_PLATFORM'):
        candidates = (os.environ['OPENMM_DEFAULT_PLATFORM'],)
    available = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    for name in candidates:
        if name not in available:
            continue
        system = openmm.System()
        system.addParticle(1.0)
        system.addParticle(1.0)
        system.addForce(CoordinationForce([0], [1]))
        if biasForce:
            bias = CoordinationBiasForce('c1')
            bias.addCollectiveVariable('c1', CoordinationForce([0], [1]))
            system.addForce(bias)
        try:
            openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName(name))
        except Exception:
            continue
        return openmm.Platform.getPlatformByName(name)
    raise RuntimeError('No platform can run a CoordinationForce%s (tried %s); openmm.Platform.getPluginLoadFailures() '
                       'says why a plugin did not load' % (' and a CoordinationBiasForce' if biasForce else '',
                                                           ', '.join(candidates)))


def loadUniverse(topology, trajectory=None):
    """An MDAnalysis Universe from a topology file (PDB, PSF, GRO, PRMTOP, ...) and trajectory files;
    a Universe is returned as is."""
    import MDAnalysis
    if isinstance(topology, MDAnalysis.Universe):
        return topology
    if trajectory is None or (isinstance(trajectory, (list, tuple)) and len(trajectory) == 0):
        return MDAnalysis.Universe(topology)
    return MDAnalysis.Universe(topology, trajectory)


def selectAtoms(universe, selection):
    """Atom indices (0-based) from an MDAnalysis selection string, an AtomGroup or a sequence of ints."""
    if selection is None:
        return None
    if isinstance(selection, str):
        indices = universe.select_atoms(selection).indices
        if len(indices) == 0:
            raise ValueError('The selection "%s" matches no atom' % selection)
        return [int(i) for i in indices]
    if hasattr(selection, 'indices'):
        return [int(i) for i in selection.indices]
    for i in selection:
        if not _isInteger(i):
            raise ValueError('selectAtoms: an atom index must be an integer, got %r' % (i,))
    return [int(i) for i in selection]


def makeForce(groupA, groupB=None, pairList=False, r0=None, nn=None, mm=None, d0=None, dmax=None, template=None):
    """A CoordinationForce on the given groups: a copy of ``template`` (its switching function and
    parameters) if given, else the defaults (RATIONAL, r0 0.3 nm, n 6, m 12, PLUMED's dmax), with the
    given PLUMED-style parameters (R_0, NN, MM, D_0, D_MAX; nm) applied."""
    from openmmcoordination import CoordinationForce
    if template is not None:
        force = copy.deepcopy(template)
        if groupB is None:
            force.setGroup(groupA)
        else:
            force.setGroups(groupA, groupB, pairList)
    else:
        force = CoordinationForce(groupA) if groupB is None else CoordinationForce(groupA, groupB, pairList)
    if r0 is not None:
        force.setR0(r0)
    if nn is not None:
        force.setN(nn)
    if mm is not None:
        force.setM(mm)
    if d0 is not None:
        force.setD0(d0)
    if dmax is not None:
        force.setDMax(dmax)
    return force


class TrajectoryAnalysis(object):
    """What analyzeTrajectory() returns.

    - ``gr`` the PairDistribution over the frames (None if not computed)
    - ``frames`` the frame indices analysed; ``times`` their times in ps
    - ``cv`` the coordination number of each frame (None if not computed)
    - ``force`` the CoordinationForce used (its groups index the atoms in ``atoms``), and ``system``
      the System of the selected atoms that owns it
    - ``atoms`` the trajectory atom index of each particle of the force's System
    - ``platform`` the name of the platform used
    """

    def __init__(self, gr, frames, times, cv, force, atoms, platform, system=None):
        self.gr = gr
        self.system = system
        self.frames = frames
        self.times = times
        self.cv = cv
        self.force = force
        self.atoms = atoms
        self.platform = platform

    def writeCollectiveVariableCSV(self, path):
        """Write frame, time_ps, cv as CSV."""
        with open(path, 'w') as f:
            print('frame,time_ps,cv', file=f)
            for frame, time, value in zip(self.frames, self.times, self.cv):
                print('%d,%.6g,%.10g' % (frame, time, value), file=f)


def _boxVectors(dimensions):
    from openmm.app.internal.unitcell import computePeriodicBoxVectors
    a, b, c, alpha, beta, gamma = [float(x) for x in dimensions]
    vectors = computePeriodicBoxVectors(a/10, b/10, c/10, alpha*unit.degree, beta*unit.degree, gamma*unit.degree)
    return [openmm.Vec3(*v) for v in vectors.value_in_unit(unit.nanometer)]


def _selectGroup(universe, selection, name):
    """selectAtoms() for analyzeTrajectory: a selection that matches no atom, is not valid, or gives an
    index outside the topology (a negative one too) is a ValueError naming the group and the value."""
    from MDAnalysis.exceptions import SelectionError
    try:
        indices = selectAtoms(universe, selection)
    except (ValueError, SelectionError) as error:
        raise ValueError('analyzeTrajectory: %s %r: %s' % (name, selection, error)) from None
    if indices is None:
        return None
    if len(indices) == 0:
        raise ValueError('analyzeTrajectory: %s selects no atom, got %r' % (name, selection))
    outside = [i for i in indices if not 0 <= i < len(universe.atoms)]
    if outside:
        raise ValueError('analyzeTrajectory: %s has atom index %d, outside the topology\'s %d atoms (0-based indices)'
                         % (name, outside[0], len(universe.atoms)))
    return indices


def analyzeTrajectory(topology, trajectory=None, groupA=None, groupB=None, pairList=False, numBins=200, maxDistance=1.0,
                      r0=None, nn=None, mm=None, d0=None, dmax=None, force=None, start=None, stop=None, step=None,
                      platform=None, progress=None, computeGr=True, computeCV=True, periodic=None, correct=True,
                      volume=None):
    """Compute g(r), n(r) and the coordination number frame by frame through a CoordinationForce.

    Parameters
    ----------
    topology: str or MDAnalysis.Universe
        a topology file MDAnalysis reads (PDB, PSF, GRO, PRMTOP, ...) or a Universe
    trajectory: str or list of str (optional)
        trajectory files (DCD, XTC, TRR, ...); without them the topology's coordinates are used
    groupA, groupB: str, AtomGroup or list of int
        the groups (MDAnalysis selection strings or 0-based atom indices); groupB None means one
        group (every unordered pair of groupA)
    pairList: bool
        pair groupA[k] with groupB[k]
    numBins, maxDistance: the histogram (maxDistance in nm)
    r0, nn, mm, d0, dmax: the switching function (PLUMED's R_0, NN, MM, D_0, D_MAX; nm)
    force: CoordinationForce (optional)
        a template whose switching function and parameters are used (its groups are replaced)
    start, stop, step: int (optional)
        the frames to analyse, as a slice of the trajectory
    platform: str or Platform (optional)
        default bestPlatform()
    progress: bool (optional)
        show a tqdm progress bar; default when there are 100 frames or more
    periodic: bool (optional)
        use the nearest periodic image; default when the trajectory has a box
    correct: bool
        correct g(r) beyond the minimum image range (see gr.shellVolumes)
    volume: float (optional)
        the volume in nm^3 that normalizes g(r) of a trajectory without a box

    Returns
    -------
    TrajectoryAnalysis
    """
    numBins, maxDistance, volume = _histogramArguments('analyzeTrajectory', numBins, maxDistance, volume)
    universe = loadUniverse(topology, trajectory)
    a = _selectGroup(universe, groupA, 'groupA')
    b = _selectGroup(universe, groupB, 'groupB')
    if a is None:
        raise ValueError('analyzeTrajectory: groupA is required')
    atoms = sorted(set(a) | set(b or []))
    local = {atom: i for i, atom in enumerate(atoms)}
    force = makeForce([local[i] for i in a], None if b is None else [local[i] for i in b], pairList,
                      r0, nn, mm, d0, dmax, template=force)
    if computeGr and force.getNumPairs() == 0:
        raise ValueError('analyzeTrajectory: the groups have no pair for g(r) (groupA %r, groupB %r): a group of one '
                         'atom alone, or two groups of the same single atom' % (groupA, groupB))
    try:
        frames = universe.trajectory[start:stop:step]
    except (TypeError, ValueError) as error:
        raise ValueError('analyzeTrajectory: start=%r, stop=%r, step=%r: %s' % (start, stop, step, error)) from None
    if len(frames) == 0:
        raise ValueError('analyzeTrajectory: no frame in the range given: start=%r, stop=%r, step=%r of a trajectory '
                         'of %d frames' % (start, stop, step, len(universe.trajectory)))
    if periodic is None:
        dimensions = universe.trajectory.ts.dimensions
        periodic = dimensions is not None and np.all(np.asarray(dimensions[:3]) > 0)
    force.setUsesPeriodicBoundaryConditions(bool(periodic))
    if computeGr and not periodic and not pairList and volume is None:
        raise ValueError('analyzeTrajectory: g(r) of a trajectory without a box needs volume=; or use a pair list '
                         'or computeGr=False')
    force.setEnergyExpression('cv')
    system = openmm.System()
    for i in atoms:
        system.addParticle(1.0)
    system.addForce(force)
    if platform is None:
        platform = bestPlatform()
    elif isinstance(platform, str):
        platform = openmm.Platform.getPlatformByName(platform)
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), platform)
    histogram = (numBins, maxDistance) if computeGr else None
    indices, times, values, boxSum, volumeSum = _evaluateFrames(context, force, frames, atoms, periodic, histogram,
                                                                computeCV, len(frames) >= 100 if progress is None else progress)
    gr = None
    if computeGr:
        counts = force.getAccumulatedPairHistogram(context)
        if volume is None and periodic:
            volume = volumeSum/len(indices)  # the mean volume, as InterRDF's (not that of the mean box, under NPT)
        gr = pairDistributionFromCounts(force, counts, len(indices), maxDistance,
                                        volume=volume, boxVectors=boxSum/len(indices) if periodic else None,
                                        correct=correct)
    return TrajectoryAnalysis(gr, np.array(indices), np.array(times, dtype=float),
                              np.array(values) if computeCV else None, force, atoms, platform.getName(), system)


def _evaluateFrames(context, force, frames, atoms, periodic, histogram, computeCV, progress):
    """Set each frame's box and positions (of the trajectory atoms ``atoms``) in the Context, add its
    pair histogram (``histogram`` is (numBins, maxDistance), or None for none) and read its CV.
    Returns (frame indices, times in ps, CV values, the sum of the box vectors in nm, the sum of the
    box volumes in nm^3)."""
    iterator = frames
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(frames, total=len(frames), desc='frames', unit='frame')
    indices, times, values = [], [], []
    boxSum = np.zeros((3, 3))
    volumeSum = 0.0
    for ts in iterator:
        if periodic:
            box = _boxVectors(ts.dimensions)
            context.setPeriodicBoxVectors(*box)
            box = np.array([[v[0], v[1], v[2]] for v in box])
            boxSum += box
            volumeSum += abs(np.linalg.det(box))
        context.setPositions(ts.positions[atoms].astype(np.float64)/10.0)
        if histogram is not None:
            force.accumulatePairHistogram(context, *histogram)
        if computeCV:
            values.append(force.getCollectiveVariableValue(context))
        indices.append(ts.frame)
        times.append(ts.time)
    if not indices:
        raise ValueError('analyzeTrajectory: no frame in the range given')
    return indices, times, values, boxSum, volumeSum
