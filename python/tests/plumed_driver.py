"""PLUMED's regression tests as `plumed driver` runs them, for test_plumed_regtests.py: the input as it
is, read by openmmcoordination.plumed, on the frames of the test's trajectory (an xyz file whose
second line is the box), each frame a step of --timestep ps (times step*timestep, as the driver
prints them); the files the input writes are then compared with PLUMED's *.reference files to the
digits these print.

The data (python/tests/data/plumed-regtests/) are PLUMED 2.10.1's own (LGPL-3.0; see the README there).
"""

import gzip
import os
import re
import shlex

import numpy as np

import openmm
from openmm import unit

from openmmcoordination import plumed

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'plumed-regtests')


def config(folder):
    """The `plumed driver` arguments of a test (its config file): {option: value}."""
    text = open(os.path.join(DATA, folder, 'config')).read()
    match = re.search(r'^arg="([^"]*)"', text, re.M)
    words = shlex.split(match.group(1))
    options, k = {}, 0
    while k < len(words):
        word = words[k]
        if '=' in word:
            key, value = word.split('=', 1)
            options[key] = value
        elif k + 1 < len(words) and not words[k + 1].startswith('--'):
            options[word] = words[k + 1]
            k += 1
        else:
            options[word] = True
        k += 1
    return options


#: The box that stands in for none (a box line of zeros: the driver then has no periodicity), in nm:
#: far larger than the test's configurations, so that no nearest image is another than the atom itself.
NO_BOX = 1000.0

#: Tests whose trajectory is another's (the same file in PLUMED).
SAME_TRAJECTORY = {'rt42d': 'rt42', 'rt42-matheval': 'rt42'}


def readText(path):
    """A data file's text, from FILE or FILE.gz."""
    if not os.path.exists(path) and os.path.exists(path + '.gz'):
        with gzip.open(path + '.gz', 'rt') as f:
            return f.read()
    with open(path) as f:
        return f.read()


def trajectoryPath(folder):
    """The xyz file of a test (in its folder, its twin's, or the shared one in trajectories/)."""
    name = config(folder)['--ixyz']
    for candidate in (os.path.join(DATA, folder, name), os.path.join(DATA, SAME_TRAJECTORY.get(folder, folder), name)):
        if os.path.exists(candidate) or os.path.exists(candidate + '.gz'):
            return candidate
    return os.path.join(DATA, 'trajectories', name)


def reference(folder, name):
    """The text of a reference file of a test."""
    return readText(os.path.join(DATA, folder, name))


def readXyz(path):
    """The frames of an xyz file as the driver reads them: [(box 3x3 rows a, b, c), positions (n, 3))];
    a box line of three numbers is an orthorhombic box, of nine the vectors a, b, c."""
    lines = readText(path).splitlines()
    frames, k = [], 0
    while k < len(lines) and lines[k].strip():
        count = int(lines[k])
        numbers = [float(x) for x in lines[k + 1].split()]
        box = np.diag(numbers) if len(numbers) == 3 else np.array(numbers).reshape(3, 3)
        positions = np.array([[float(x) for x in line.split()[1:4]] for line in lines[k + 2:k + 2 + count]])
        frames.append((box, positions))
        k += 2 + count
    return frames


def openmmBox(box):
    """(the box in OpenMM's form, a rotation Q): OpenMM takes a box only with a along x, b in the xy
    plane, reduced (|b_x| <= a_x/2, |c_x| <= a_x/2, |c_y| <= b_y/2). A box of zeros (no periodicity)
    gives NO_BOX; an orthorhombic lattice (also when written with other vectors) its orthorhombic box
    and Q = I; any other box the same lattice's reduced vectors rotated into that form, the positions
    to be rotated with it (positions @ Q; forces back with @ Q.T). Distances, and so every CV, are
    the same."""
    identity = np.eye(3)
    if not np.any(box):
        return np.eye(3)*NO_BOX, identity
    if np.allclose(box, np.diag(np.diag(box))) and np.all(np.diag(box) > 0):
        return np.diag(np.diag(box)), identity
    reduced = _reduce(box)
    if all(np.count_nonzero(np.abs(row) > 1e-12) == 1 for row in reduced):
        lengths = np.zeros(3)
        for row in reduced:
            axis = int(np.argmax(np.abs(row)))
            lengths[axis] = abs(row[axis])
        if np.all(lengths > 0) and np.isclose(np.prod(lengths), abs(np.linalg.det(box))):
            return np.diag(lengths), identity
    q, r = np.linalg.qr(reduced.T)                      # reduced = r.T q.T: rows of r.T are lower triangular
    signs = np.diag(np.sign(np.diag(r)))
    q, r = q @ signs, signs @ r
    form = r.T.copy()
    form[2] -= np.round(form[2, 1]/form[1, 1])*form[1]
    form[2] -= np.round(form[2, 0]/form[0, 0])*form[0]
    form[1] -= np.round(form[1, 0]/form[0, 0])*form[0]
    return form, q


def rotateDerivatives(derivatives, rotation, kinds):
    """DUMPDERIVATIVES' numbers (parameters, arguments) of a frame computed in OpenMM's orientation
    (positions @ Q, openmmBox) rotated back into the trajectory's: for a coordination number the
    atoms' derivatives g' (rows of x, y, z) become g' Q^T, as the forces do, and its 9 box derivatives
    V' (-sum over pairs of dfunc d' (x) d', d' = d Q) become Q V' Q^T; a function's derivatives with
    respect to its arguments are numbers of no orientation and stay."""
    derivatives = np.array(derivatives, dtype=float)
    if np.array_equal(rotation, np.eye(3)):
        return derivatives
    for column, kind in enumerate(kinds):
        if kind != 'coordination':
            continue
        atoms = derivatives[:-9, column].reshape(-1, 3) @ rotation.T
        box = rotation @ derivatives[-9:, column].reshape(3, 3) @ rotation.T
        derivatives[:, column] = np.concatenate([atoms.ravel(), box.ravel()])
    return derivatives + 0.0


def _reduce(box):
    """Lagrange-Gauss-like reduction of the rows (subtract integer multiples until no row shortens)."""
    rows = [np.array(r, dtype=float) for r in box]
    changed = True
    while changed:
        changed = False
        for i in range(3):
            for j in range(3):
                if i == j:
                    continue
                factor = np.round(np.dot(rows[i], rows[j])/np.dot(rows[j], rows[j]))
                if factor != 0:
                    candidate = rows[i] - factor*rows[j]
                    if np.dot(candidate, candidate) < np.dot(rows[i], rows[i]) - 1e-12:
                        rows[i] = candidate
                        changed = True
    return np.array(rows)


class Run(object):
    """A test's input run over its trajectory (``frames``: the indices of those to run, default all) on
    one platform; ``output(name)`` the text it wrote to FILE=name, ``forces`` the forces of the
    System at each frame and the DUMPDERIVATIVES files in the trajectory's orientation (a frame whose
    box OpenMM takes only rotated is run rotated, and both are rotated back: rotateDerivatives);
    release() drops its Contexts. ``inputText`` runs another input (the text of a plumed.dat) on the
    test's trajectory."""

    def __init__(self, folder, platformName, directory, frames=None, properties=None, inputText=None):
        options = config(folder)
        self.folder, self.directory = folder, directory
        allFrames = readXyz(trajectoryPath(folder))
        self.frames = allFrames if frames is None else [allFrames[k] for k in frames]
        self.indices = list(range(len(allFrames))) if frames is None else list(frames)
        timestep = float(options.get('--timestep', 1.0))
        stride = int(options.get('--trajectory-stride', 1))
        count = len(self.frames[0][1])
        system = openmm.System()
        for _ in range(count):
            system.addParticle(1.0)
        # The driver passes PLUMED the trajectory's box, which makes the CVs without NOPBC periodic; a box of
        # zeros, none (plain distances). The System has no periodic force: say which (load's periodic).
        periodic = any(np.any(box) for box, _ in allFrames)
        self.input = plumed.load(os.path.join(DATA, folder, 'plumed.dat') if inputText is None else inputText, system,
                                 periodic=periodic)
        # DUMPDERIVATIVES of a frame rotated into OpenMM's form: back into the trajectory's orientation
        self.rotation = np.eye(3)
        computed = self.input.getDerivatives
        self.framePositions = None
        self.input.getDerivatives = lambda context, names, state=None: rotateDerivatives(
            computed(context, names, FrameState(context.getState(getPositions=True), self.framePositions)), self.rotation,
            [self.input.values[name].kind for name in names])
        integrator = openmm.VerletIntegrator(timestep*unit.picoseconds)
        platform = openmm.Platform.getPlatformByName(platformName)
        # The default box is triclinic where any frame's is (CUDA refuses a Context whose box turns
        # from rectangular to triclinic).
        boxes = [openmmBox(box)[0] for box, _ in self.frames]
        system.setDefaultPeriodicBoxVectors(*next((b for b in boxes if np.count_nonzero(b - np.diag(np.diag(b)))), boxes[0]))
        from openmm.app import Simulation, Topology
        topology = Topology()
        chain = topology.addChain()
        residue = topology.addResidue('X', chain)
        for _ in range(count):
            topology.addAtom('X', None, residue)
        self.simulation = Simulation(topology, system, integrator, platform, properties or {})
        context = self.simulation.context
        self.forces = []
        for n, (index, (box, positions)) in enumerate(zip(self.indices, self.frames)):
            reduced, rotation = openmmBox(box)
            self.rotation = rotation
            context.setPeriodicBoxVectors(*reduced)
            self.framePositions = positions @ rotation
            context.setPositions(self.framePositions)
            step = index*stride
            context.setTime(step*timestep)
            self.simulation.currentStep = step
            if n == 0:
                self.input.attach(self.simulation, directory)
            else:
                for reporter in self.simulation.reporters:
                    if step % reporter._reportInterval == 0:
                        reporter.report(self.simulation, context.getState(getPositions=True))
            if self.input.forces:
                state = context.getState(getForces=True)
                forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoules_per_mole/unit.nanometer)
                self.forces.append(np.asarray(forces) @ rotation.T)
        self.input.close()

    def release(self):
        """Drop the Contexts (the simulation's and the derivatives'): on a GPU each holds the device."""
        self.input._derivativeContexts.clear()
        del self.simulation.context
        self.simulation = None

    def output(self, name):
        return open(os.path.join(self.directory, name)).read()


class FrameState:
    """A Context's State whose positions are the frame's as the trajectory gives them, as PLUMED's driver
    hands them to PLUMED: for DUMPDERIVATIVES' box derivatives, which PlumedInput.getDerivatives
    computes on the host from the State's positions. A Context in single precision keeps positions
    rounded to float (in mixed, to about 48 bits), and a pair placed at D_MAX would lie a rounding
    inside it there, where the kernels, comparing r^2 with dmax^2 rounded as the positions are, find
    it at D_MAX (Q's D_0 likewise). Everything else is the State's."""

    def __init__(self, state, positions):
        self._state, self._positions = state, np.asarray(positions, dtype=float)

    def getPositions(self, asNumpy=False):
        return unit.Quantity(self._positions if asNumpy else [openmm.Vec3(*p) for p in self._positions], unit.nanometer)

    def __getattr__(self, name):
        return getattr(self._state, name)


def columns(text):
    """The fields and the rows of a PLUMED output file (#! lines give the fields, other # lines skipped)."""
    fields, rows = None, []
    for line in text.splitlines():
        if line.startswith('#! FIELDS'):
            fields = line.split()[2:]
        elif line.strip() and not line.startswith('#'):
            rows.append(line.split())
    return fields, rows
