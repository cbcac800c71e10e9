"""Radial distribution functions g(r) and running coordination numbers n(r) from the pair
histogram of a CoordinationForce (docs/gr.md has the formulas).

>>> force = addHistogramForce(system, ions, oxygens, integrator=integrator, periodic=True)
>>> simulation = Simulation(topology, system, integrator); simulation.context.setPositions(positions)
>>> acc = PairDistributionAccumulator(force, numBins=200, maxDistance=1.0)
>>> for i in range(steps//100):
...     simulation.step(100)
...     acc.add(simulation.context)          # summed on the Context's platform (the GPU on CUDA)
>>> gr = acc.getResult(simulation.context)   # one read-back
>>> gr.getBinCenters(), gr.g, gr.n, gr.getFirstMinimum()   # distances as Quantities (nm)

Distances are in nm, volumes in nm^3. As in OpenMM, the getters of distances return Quantities
(getBinCenters(), getBinEdges(), getBinWidths(), getFirstPeak(), getFirstMinimum(), getValidMax(),
getCellMax(); getVolume() and getDensity() in nm^3 and 1/nm^3); the attributes ``r``, ``edges``,
``width``, ``validMax``, ``cellMax``, ``volume``, ``density`` and the methods firstPeak() and
firstMinimum(), the names before issue 44, keep returning plain numbers, so that scripts that format
or compare them still run. Distances
given to this module (maxDistance, coordinationAt(r), volumes in nm^3) may be Quantities or plain
numbers in nm.
"""

import math

import numpy as np

from openmm import unit

from openmmcoordination._checks import _isInteger, _positiveQuantity

__all__ = ['PairDistribution', 'PairDistributionAccumulator', 'computePairDistribution',
           'pairDistributionFromCounts', 'shellVolumes', 'addHistogramForce']

_MODE_NAMES = {0: 'one group', 1: 'two groups', 2: 'pair list'}


def _value(x, u=unit.nanometer):
    return x.value_in_unit(u) if unit.is_quantity(x) else x


def _distance(x, owner, name):
    """A distance in nm as a float, from a Quantity of length or a plain number (nm); ValueError naming
    ``owner``, the parameter ``name`` and the value otherwise."""
    if unit.is_quantity(x):
        if not x.unit.is_compatible(unit.nanometer):
            raise ValueError('%s: %s must be a distance (a Quantity of length or a number in nm), got %s' % (owner, name, x))
        x = x.value_in_unit(unit.nanometer)
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError('%s: %s must be a distance (a Quantity of length or a number in nm), got %r' % (owner, name, x)) from None
    if not math.isfinite(value):
        raise ValueError('%s: %s must be finite, got %r' % (owner, name, x))
    return value


def _histogramArguments(owner, numBins, maxDistance, volume=None):
    """numBins as an int (1 to CoordinationForce.MaxHistogramBins), maxDistance in nm (positive) and volume
    in nm^3 (positive, or None), checked before any frame is computed (a reporter's, before the run);
    ValueError naming ``owner``, the parameter and the value."""
    from openmmcoordination import CoordinationForce
    if not _isInteger(numBins) or not 0 < numBins <= CoordinationForce.MaxHistogramBins:
        raise ValueError('%s: numBins must be an integer from 1 to MaxHistogramBins = %d, got %r'
                         % (owner, CoordinationForce.MaxHistogramBins, numBins))
    distance = _distance(maxDistance, owner, 'maxDistance')
    if distance <= 0:
        raise ValueError('%s: maxDistance must be positive, got %s'
                         % (owner, maxDistance if unit.is_quantity(maxDistance) else repr(maxDistance)))
    if volume is not None:
        volume = _positiveQuantity(volume, unit.nanometer**3, owner, 'volume', 'a volume in nm^3')
    return int(numBins), distance, volume


def _boxArray(boxVectors):
    """The box vectors as a 3x3 array in nm (rows a, b, c), or None."""
    if boxVectors is None:
        return None
    if unit.is_quantity(boxVectors):
        boxVectors = boxVectors.value_in_unit(unit.nanometer)
    return np.array([[_value(x) for x in v] for v in boxVectors], dtype=float)


def _fibonacciSphere(count):
    """Unit vectors spread evenly over the sphere."""
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0*k/count
    phi = np.pi*(3.0 - np.sqrt(5.0))*k
    s = np.sqrt(1.0 - z*z)
    return np.column_stack([s*np.cos(phi), s*np.sin(phi), z])


def _cellRadii(box, directions):
    """For each direction u, the distance from the origin to the surface of the Wigner-Seitz cell of
    the lattice (the region of displacements that are their own nearest image), and the radius of
    the sphere inscribed in the cell."""
    n = np.arange(-2, 3)
    coefficients = np.array(np.meshgrid(n, n, n, indexing='ij')).reshape(3, -1).T
    coefficients = coefficients[np.any(coefficients != 0, axis=1)]
    lattice = coefficients @ box
    lengths2 = np.sum(lattice*lattice, axis=1)
    radii = np.empty(len(directions))
    for start in range(0, len(directions), 8192):
        projection = directions[start:start+8192] @ lattice.T
        with np.errstate(divide='ignore', invalid='ignore'):
            limits = np.where(projection < 0, lengths2/(-2.0*projection), np.inf)
        radii[start:start+8192] = limits.min(axis=1)
    return radii, 0.5*np.sqrt(lengths2.min())


def shellVolumes(edges, boxVectors=None, correct=True, numDirections=50000, minFraction=0.2):
    """The volume of each spherical shell between consecutive edges (nm), and the range of validity.

    Under the minimum image convention a pair's distance is that of its nearest image, so the
    displacements fill the Wigner-Seitz cell of the periodic lattice. A shell is entirely inside it
    up to the inscribed radius (half the shortest lattice vector; half the shortest edge of a
    rectangular box). Beyond it, with ``correct`` the shell volume is that of the part of the shell
    inside the cell (computed over ``numDirections`` directions), so g(r) stays unbiased up to the
    circumscribed radius (sqrt(3)/2 L for a cube); without ``correct`` it is the full shell. Shells
    with less than ``minFraction`` of their volume inside the cell (the corners, where few pairs
    fall and the directional estimate is coarse) get volume 0, so g is NaN there.

    Returns
    -------
    (volumes, validMax, cellMax): volumes in nm^3; validMax the inscribed radius (inf without a
    box); cellMax the largest distance a nearest image can have (inf without a box).
    """
    edges = np.asarray(edges, dtype=float)
    full = 4.0/3.0*np.pi*np.diff(edges**3)
    box = _boxArray(boxVectors)
    if box is None:
        return full, math.inf, math.inf
    key = (edges.tobytes(), box.tobytes(), bool(correct), numDirections, minFraction)
    if key not in _shellCache:
        _shellCache.clear()
        _shellCache[key] = _cellShellVolumes(edges, full, box, correct, numDirections, minFraction)
    volumes, inscribed, cellMax = _shellCache[key]
    return volumes.copy(), inscribed, cellMax


# The last result of _cellShellVolumes, by its arguments: the reads of a reporter in a run at
# constant volume ask for the same bins and box again.
_shellCache = {}


def _cellShellVolumes(edges, full, box, correct, numDirections, minFraction):
    """shellVolumes() with a box: (volumes, inscribed radius, largest nearest-image distance)."""
    radii, inscribed = _cellRadii(box, _fibonacciSphere(numDirections))
    cellMax = float(radii.max())
    if not correct:
        return full, inscribed, cellMax
    volumes = full.copy()
    partial = np.nonzero(edges[1:] > inscribed)[0]
    if len(partial) > 0:
        lo, hi = edges[partial], edges[partial+1]
        # For each direction the shell runs from lo to min(hi, radius): integrate r^2 exactly.
        top = np.clip(radii[:, None], lo[None, :], hi[None, :])
        inside = 4.0*np.pi*np.mean(top**3 - lo[None, :]**3, axis=0)/3.0
        volumes[partial] = np.where(inside >= minFraction*full[partial], inside, 0.0)
    return volumes, inscribed, cellMax


class PairDistribution(object):
    """A radial distribution function g(r) and running coordination number n(r), averaged over frames.

    Attributes (arrays have one entry per bin; distances in nm, plain numbers):

    - ``edges`` the bin edges (numBins + 1), ``r`` the bin centres, ``width`` the bin widths, plain
      arrays in nm (the names before issue 44); getBinEdges(), getBinCenters() and getBinWidths() return
      them as Quantities (nm), as OpenMM's getters do
    - ``counts`` the pair counts summed over frames (int64); ``numFrames`` the number of frames
    - ``mode`` 'one group', 'two groups' or 'pair list'; ``numPairs`` P, the pairs per frame;
      ``numA``, ``numB`` the group sizes
    - ``volume`` the mean box volume in nm^3, the mean of the frames' volumes (None for a pair list
      or without a box; getVolume() as a Quantity), ``density`` the partners' number density in 1/nm^3 (getDensity())
    - ``shellVolume`` V_k in nm^3 (the part inside the periodic cell beyond ``validMax`` when
      corrected)
    - ``g``: one group, g_k = counts_k / (frames N(N-1)/2) V / V_k; two groups, counts_k / (frames P)
      V / V_k with P = N_A N_B - (particles in both groups); pair list, the probability density of
      the distance, counts_k / (frames P width_k), in 1/nm
    - ``n`` the running coordination number at the upper edge of each bin: the mean number of
      group-B particles (the other group members for one group) within r of a group-A particle; for a
      pair list the mean number of listed pairs within r
    - ``pairsWithin`` the mean number of the force's pairs within the upper edge of each bin (the
      coordination number with a step switching function)
    - ``validMax`` g(r) is exact without correction below this distance (half the shortest
      lattice vector; inf without a box); ``cellMax`` beyond it no nearest image exists, g is NaN
      (plain numbers in nm; getValidMax() and getCellMax() as Quantities)
    - ``corrected`` whether shells beyond ``validMax`` were corrected to the part inside the cell
    """

    def __init__(self, edges, counts, numFrames, mode, numPairs, numA, numB, volume=None, boxVectors=None,
                 correct=True):
        edges = np.asarray(edges, dtype=float)
        counts = np.asarray(counts, dtype=np.int64)
        if len(edges) != len(counts) + 1:
            raise ValueError('PairDistribution: %d edges for %d bins' % (len(edges), len(counts)))
        if numFrames <= 0:
            raise ValueError('PairDistribution: no frames were accumulated')
        if numPairs <= 0:
            raise ValueError('PairDistribution: numPairs must be positive, got %r (a group of one particle, or empty '
                             'groups, has no pairs)' % numPairs)
        if volume is not None:
            volume = _positiveQuantity(volume, unit.nanometer**3, 'PairDistribution', 'volume', 'a volume in nm^3')
        if isinstance(mode, int):
            mode = _MODE_NAMES[mode]
        self.edges = edges
        self.r = 0.5*(edges[1:] + edges[:-1])
        self.width = np.diff(edges)
        self.counts = counts
        self.numFrames = int(numFrames)
        self.mode = mode
        self.numPairs = int(numPairs)
        self.numA = int(numA)
        self.numB = int(numB)
        self.corrected = bool(correct)
        self.boxVectors = _boxArray(boxVectors)
        if volume is None and self.boxVectors is not None:
            volume = abs(np.linalg.det(self.boxVectors))
        self.volume = None if volume is None else float(_value(volume, unit.nanometer**3))
        self.shellVolume, self.validMax, self.cellMax = shellVolumes(edges, self.boxVectors, correct)
        perFrame = counts/float(self.numFrames)
        self.pairsWithin = np.cumsum(perFrame)
        if mode == 'pair list':
            self.g = perFrame/(self.numPairs*self.width)
            self.n = self.pairsWithin.copy()
        else:
            if self.volume is None:
                raise ValueError('PairDistribution: g(r) needs a volume; the force is not periodic, so pass volume=')
            with np.errstate(divide='ignore', invalid='ignore'):
                self.g = np.where(self.shellVolume > 0, perFrame/self.numPairs*self.volume/self.shellVolume, np.nan)
            self.n = self.pairsWithin*(2.0/self.numA if mode == 'one group' else 1.0/self.numA)

    @property
    def density(self):
        """The number density of the partners, P/(N_A V) in 1/nm^3 (None for a pair list)."""
        if self.mode == 'pair list':
            return None
        reference = self.numA/2.0 if self.mode == 'one group' else self.numA
        return self.numPairs/(reference*self.volume)

    def getVolume(self):
        """The mean box volume (a Quantity in nm^3; None for a pair list or without a box). ``volume``
        is the same as a plain number in nm^3."""
        return None if self.volume is None else unit.Quantity(self.volume, unit.nanometer**3)

    def getDensity(self):
        """The number density of the partners, P/(N_A V) (a Quantity in 1/nm^3; None for a pair list).
        ``density`` is the same as a plain number in 1/nm^3."""
        density = self.density
        return None if density is None else unit.Quantity(density, unit.nanometer**-3)

    def getValidMax(self):
        """The distance below which g(r) is exact without correction, half the shortest lattice vector
        (a Quantity in nm; inf nm without a box). ``validMax`` is the same as a plain number in nm."""
        return unit.Quantity(self.validMax, unit.nanometer)

    def getCellMax(self):
        """The largest distance a nearest image can have (a Quantity in nm; inf nm without a box);
        beyond it g is NaN. ``cellMax`` is the same as a plain number in nm."""
        return unit.Quantity(self.cellMax, unit.nanometer)

    def getBinCenters(self):
        """The bin centres r (a Quantity: an array in nm). ``r`` is the same array as plain numbers in nm."""
        return unit.Quantity(self.r.copy(), unit.nanometer)

    def getBinEdges(self):
        """The bin edges, numBins + 1 of them (a Quantity: an array in nm). ``edges`` is the same array as
        plain numbers in nm."""
        return unit.Quantity(self.edges.copy(), unit.nanometer)

    def getBinWidths(self):
        """The bin widths (a Quantity: an array in nm). ``width`` is the same array as plain numbers in nm."""
        return unit.Quantity(self.width.copy(), unit.nanometer)

    def getFirstPeak(self, smooth=3):
        """The bin centre of the highest maximum of g(r) below the cell limit (a Quantity in nm).
        firstPeak() returns the same distance as a plain number in nm."""
        return unit.Quantity(self.firstPeak(smooth), unit.nanometer)

    def getFirstMinimum(self, smooth=3, rise=0.05):
        """The bin centre of the first minimum of g(r) after its highest peak (a Quantity in nm): where
        g, smoothed over ``smooth`` bins, stops falling and then rises by more than ``rise`` times the
        peak height (so noise does not stop the search early); the middle of the bottom if it is flat.
        Choose r0 of a coordination number here: ``force.setR0(gr.getFirstMinimum())``. A histogram
        without pairs (maxDistance below the closest pair) has none: ValueError.
        firstMinimum() returns the same distance as a plain number in nm."""
        return unit.Quantity(self.firstMinimum(smooth, rise), unit.nanometer)

    def firstPeak(self, smooth=3):
        """getFirstPeak() as a plain number in nm (the name before issue 44, kept for scripts that
        format or compare it)."""
        g = self._smoothed(smooth, 'firstPeak')
        return float(self.r[int(np.nanargmax(g))])

    def firstMinimum(self, smooth=3, rise=0.05):
        """getFirstMinimum() as a plain number in nm (the name before issue 44, kept for scripts that
        format or compare it)."""
        g = self._smoothed(smooth, 'firstMinimum')
        peak = int(np.nanargmax(g))
        best = peak
        tolerance = rise*g[peak]
        for i in range(peak+1, len(g)):
            if not np.isfinite(g[i]):
                break
            if g[i] < g[best]:
                best = i
            elif g[i] > g[best] + tolerance:
                break
        # The middle of a flat bottom (a run of empty bins, say), not its first bin.
        flat = 0.01*g[peak]
        low = high = best
        while low > peak+1 and g[low-1] <= g[best] + flat:
            low -= 1
        while high+1 < len(g) and np.isfinite(g[high+1]) and g[high+1] <= g[best] + flat:
            high += 1
        return float(0.5*(self.r[low] + self.r[high]))

    def coordinationAt(self, r):
        """n(r) interpolated at a distance r (a Quantity of length, such as getFirstMinimum(), or a
        number in nm) from 0 to the last bin edge: a plain number, as coordination numbers have no
        unit. A distance beyond the histogram raises ValueError."""
        given = r
        r = _distance(r, 'PairDistribution.coordinationAt', 'r')
        # n(r) is known up to the last edge only (beyond it, interpolation would repeat the last value);
        # the tolerance admits the last edge given in another unit (7 A: 0.7000000000000001 nm)
        if not -1e-12*self.edges[-1] <= r <= self.edges[-1]*(1 + 1e-12):
            raise ValueError('PairDistribution.coordinationAt: r must be within the histogram, 0 to %g nm, got %s'
                             % (self.edges[-1], given if unit.is_quantity(given) else repr(given)))
        return float(np.interp(r, self.edges, np.concatenate([[0.0], self.n])))

    def _smoothed(self, smooth, caller):
        g = np.where(self.r < self.cellMax, self.g, np.nan)
        if not np.any(g > 0):
            raise ValueError('PairDistribution.%s: g(r) has no pair below %g nm (the histogram\'s range within the '
                             'periodic cell): it has no peak or minimum; give a larger maxDistance'
                             % (caller, min(self.edges[-1], self.cellMax)))
        if smooth > 1:
            kernel = np.ones(smooth)/smooth
            filled = np.nan_to_num(g)
            g = np.where(np.isfinite(g), np.convolve(filled, kernel, mode='same'), np.nan)
        return g

    def writeCSV(self, file):
        """Write the table (r, width, g, n, counts) as CSV with a commented header of the metadata."""
        header = ['# openmm-coordination pair distribution',
                  '# mode=%s' % self.mode, '# numFrames=%d' % self.numFrames, '# numPairs=%d' % self.numPairs,
                  '# numA=%d' % self.numA, '# numB=%d' % self.numB,
                  '# volume_nm3=%s' % ('' if self.volume is None else '%.17g' % self.volume),
                  '# validMax_nm=%.17g' % self.validMax, '# cellMax_nm=%.17g' % self.cellMax,
                  '# corrected=%d' % self.corrected,
                  '# box_nm=%s' % ('' if self.boxVectors is None else ' '.join('%.17g' % x for x in self.boxVectors.flat))]
        lines = header + ['r_nm,r_low_nm,width_nm,g,n,pairs_within,counts']
        for k in range(len(self.counts)):
            lines.append('%.9g,%.9g,%.9g,%.12g,%.12g,%.12g,%d' % (self.r[k], self.edges[k], self.width[k], self.g[k],
                                                                   self.n[k], self.pairsWithin[k], self.counts[k]))
        text = '\n'.join(lines) + '\n'
        if hasattr(file, 'write'):
            file.write(text)
        else:
            with open(file, 'w') as f:
                f.write(text)

    @classmethod
    def readCSV(cls, file):
        """Read a table written by writeCSV()."""
        with open(file) as f:
            try:
                lines = f.read().splitlines()
            except UnicodeDecodeError:
                lines = []     # a binary file: refused below
        meta = dict(line[2:].split('=', 1) for line in lines if line.startswith('# ') and '=' in line)
        rows = [line.split(',') for line in lines if line and not line.startswith('#') and not line.startswith('r_nm')]
        try:
            data = np.array(rows, dtype=float).reshape(len(rows), 7)
            if not rows or 'r_nm,r_low_nm,width_nm,g,n,pairs_within,counts' not in lines or \
                    any(key not in meta for key in ('numFrames', 'mode', 'numPairs', 'numA', 'numB')):
                raise ValueError
        except ValueError:
            raise ValueError('PairDistribution.readCSV: %r is not a table of g(r) written by writeCSV() (a header of '
                             '# lines and the columns r_nm,r_low_nm,width_nm,g,n,pairs_within,counts, one row a bin)'
                             % (file,)) from None
        edges = np.concatenate([data[:, 1], [data[-1, 1] + data[-1, 2]]])
        box = None
        if meta.get('box_nm'):
            box = np.array(meta['box_nm'].split(), dtype=float).reshape(3, 3)
        volume = float(meta['volume_nm3']) if meta.get('volume_nm3') else None
        return cls(edges, data[:, 6].astype(np.int64), int(meta['numFrames']), meta['mode'], int(meta['numPairs']),
                   int(meta['numA']), int(meta['numB']), volume, box, bool(int(meta.get('corrected', '1'))))


def _groupSizes(force):
    a = len(force.getGroupA())
    b = len(force.getGroupB()) if force.getMode() != 0 else a
    return a, b


def pairDistributionFromCounts(force, counts, numFrames, maxDistance, volume=None, boxVectors=None, correct=True):
    """Normalize a pair histogram of ``force`` (counts summed over ``numFrames`` frames, bins of equal
    width up to ``maxDistance`` nm) into a PairDistribution. Give the mean box vectors (or the
    volume in nm^3) for periodic systems."""
    maxDistance = _value(maxDistance)
    counts = np.asarray(counts, dtype=np.int64)
    edges = np.linspace(0.0, maxDistance, len(counts)+1)
    numA, numB = _groupSizes(force)
    return PairDistribution(edges, counts, numFrames, int(force.getMode()), force.getNumPairs(), numA, numB,
                            volume, boxVectors, correct)


def _contextBox(context, force):
    if not force.usesPeriodicBoundaryConditions():
        return None
    return _boxArray(context.getState().getPeriodicBoxVectors())


def computePairDistribution(force, context, numBins, maxDistance, volume=None, correct=True):
    """g(r) and n(r) of a single frame: the Context's current positions."""
    numBins, maxDistance, volume = _histogramArguments('computePairDistribution', numBins, maxDistance, volume)
    counts = force.getPairHistogram(context, numBins, maxDistance)
    return pairDistributionFromCounts(force, counts, 1, maxDistance, volume, _contextBox(context, force), correct)


class PairDistributionAccumulator(object):
    """Accumulates the pair histogram of a CoordinationForce over frames on the Context's platform
    (on the GPU for CUDA: nothing is read back until getResult()), and keeps the mean box and the mean
    volume of the boxes.

    Parameters
    ----------
    force: CoordinationForce
        a force that is part of the Context's System
    numBins: int
        the number of bins
    maxDistance: float or Quantity
        the upper edge of the last bin, in nm
    volume: float or Quantity (optional)
        the volume in nm^3 for a non-periodic force (periodic forces use the mean volume of the boxes)
    correct: bool
        correct the shells beyond the minimum image range (see shellVolumes())
    """

    def __init__(self, force, numBins, maxDistance, volume=None, correct=True):
        self.force = force
        self.numBins, self.maxDistance, self.volume = _histogramArguments('PairDistributionAccumulator', numBins,
                                                                          maxDistance, volume)
        self.correct = correct
        self._boxSum = np.zeros((3, 3))
        self._volumeSum = 0.0
        self._frames = 0

    def add(self, context, boxVectors=None):
        """Add the histogram of the Context's current positions. Pass the box vectors if you have them
        (a State's), to save a getState() call."""
        self.force.accumulatePairHistogram(context, self.numBins, self.maxDistance)
        if self.force.getNumAccumulatedFrames(context) == 1 and self._frames > 0:
            # the Context's histogram started again (reinitialize(), resetPairHistogram()): so do we
            self._boxSum[:] = 0
            self._volumeSum = 0.0
            self._frames = 0
        if self.force.usesPeriodicBoundaryConditions():
            box = _boxArray(boxVectors) if boxVectors is not None else _contextBox(context, self.force)
            self._boxSum += box
            self._volumeSum += abs(np.linalg.det(box))
        self._frames += 1

    @property
    def numFrames(self):
        """The number of frames added since the last reset."""
        return self._frames

    def reset(self, context):
        """Start again from zero frames."""
        self.force.resetPairHistogram(context)
        self._boxSum[:] = 0
        self._volumeSum = 0.0
        self._frames = 0

    def getResult(self, context):
        """Read the accumulated histogram back and normalize it into a PairDistribution."""
        frames = self.force.getNumAccumulatedFrames(context)
        if frames == 0:
            raise ValueError('PairDistributionAccumulator: no frames have been added')
        counts = self.force.getAccumulatedPairHistogram(context)
        periodic = self.force.usesPeriodicBoundaryConditions()
        box = self._boxSum/self._frames if periodic else None
        # the mean volume (as InterRDF's), not that of the mean box, which differs when the box changes (NPT)
        volume = self._volumeSum/self._frames if periodic and self.volume is None else self.volume
        return pairDistributionFromCounts(self.force, counts, frames, self.maxDistance, volume, box, self.correct)


def addHistogramForce(system, groupA, groupB=None, pairList=False, integrator=None, periodic=None):
    """Add a CoordinationForce that only observes: its energy expression is 0, so it changes no
    dynamics, and it gets a force group of its own. Periodic when the System is. If an integrator
    is given, its integration force groups are set to leave the new group out, so it costs nothing
    per step (only when a histogram or CV is asked for). ``periodic`` defaults to
    system.usesPeriodicBoundaryConditions(). Returns the force."""
    from openmmcoordination import CoordinationForce
    force = CoordinationForce(groupA) if groupB is None else CoordinationForce(groupA, groupB, pairList)
    force.setEnergyExpression('0')
    force.setUsesPeriodicBoundaryConditions(system.usesPeriodicBoundaryConditions() if periodic is None else periodic)
    used = {f.getForceGroup() for f in system.getForces()}
    free = sorted(set(range(32)) - used)
    if not free:
        raise RuntimeError('addHistogramForce: all 32 force groups are in use')
    force.setForceGroup(free[-1])
    system.addForce(force)
    if integrator is not None:
        mask = integrator.getIntegrationForceGroups()
        integrator.setIntegrationForceGroups({g for g in range(32) if mask & (1 << g) and g != free[-1]})
    return force
