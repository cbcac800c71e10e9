"""The compressed kernel density estimate of OPES (Invernizzi and Parrinello, J. Phys. Chem. Lett. 11,
2731 (2020)) as PLUMED's OPES_METAD keeps it, in double precision on the host: truncated Gaussian
kernels, their merging (kernel compression, recursive), the normalization Z over the compressed
kernels (updated from the changed kernels, as PLUMED does), and the unnormalized kernel sum on a
grid, updated from the same changes.

A kernel of height h, centre c and widths sigma has the value h (exp(-r^2/2) - exp(-cutoff^2/2)) at x
where r^2 = sum_i ((x_i - c_i)/sigma_i)^2 < cutoff^2, and 0 beyond.

Along a periodic variable (a torsion from -pi to pi) every difference is PLUMED's
(src/opes/OPESmetad.cpp through Value::difference): the nearest periodic image, in the kernels' values,
in the distance to the nearest kernel for compression, and in the merge, where the taker's centre is
first moved to its image nearest the giver's and the merged centre brought back into the period
(Value::bringBackInPbc). The grid sum takes the same image at each grid point, its window wrapped
around the period."""

import numpy as np

#: The grid sum is recomputed from all kernels after this many updates from changes, so that
#: rounding cannot build up (the updates themselves are exact to rounding).
GRID_REFRESH_UPDATES = 100

#: Points x kernels evaluated at once in a full sum (bounds the memory of one chunk, about 64 MB).
_CHUNK = 8*1024*1024


def _nearestImage(delta, period):
    """delta brought into [-period/2, period/2) by whole periods, as PLUMED's Tools::pbc of delta/period."""
    scaled = delta/period
    return (scaled - np.floor(scaled + 0.5))*period


class Kernels(object):
    """The compressed kernels: ``centers`` (n, d), ``sigmas`` (n, d), ``heights`` (n,); ``deltas``, the
    kernels added (positive heights) and removed (negative heights) since clearDeltas(). ``domains``:
    per variable None, or (minValue, maxValue) of a periodic one."""

    def __init__(self, dimensions, cutoff, threshold, domains=None):
        self.dimensions = dimensions
        domains = [None]*dimensions if domains is None else list(domains)
        self.periodic = np.array([domain is not None for domain in domains], dtype=bool)
        self.anyPeriodic = bool(self.periodic.any())
        self.low = np.array([0.0 if domain is None else domain[0] for domain in domains], dtype=float)
        self.period = np.array([0.0 if domain is None else domain[1] - domain[0] for domain in domains], dtype=float)
        self.cutoff2 = cutoff*cutoff
        self.valueAtCutoff = np.exp(-0.5*self.cutoff2)
        self.threshold2 = threshold*threshold
        self.centers = np.empty((0, dimensions))
        self.sigmas = np.empty((0, dimensions))
        self.heights = np.empty(0)
        self.deltas = []

    def __len__(self):
        return len(self.heights)

    def difference(self, a, b):
        """b - a (broadcast, the variables along the last axis), the nearest periodic image along each
        periodic variable: PLUMED's Value::difference(a, b), (b - a)/P brought into [-1/2, 1/2), times P."""
        delta = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
        if not self.anyPeriodic:
            return delta
        delta = np.array(delta, dtype=float)
        p = self.periodic
        delta[..., p] = _nearestImage(delta[..., p], self.period[p])
        return delta

    def axisDifference(self, k, a, b):
        """b - a along variable k alone (arrays of its values), the nearest image where it is periodic."""
        delta = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
        return _nearestImage(delta, self.period[k]) if self.periodic[k] else delta

    def bringBack(self, center):
        """A centre with each periodic variable brought into its period, [minValue, maxValue): PLUMED's
        Value::bringBackInPbc, the middle of the period plus the nearest-image difference from it."""
        if not self.anyPeriodic:
            return center
        middle = self.low + 0.5*self.period
        back = middle + self.difference(middle, center)
        return np.where(self.periodic, back, center)

    def profile(self, norm2):
        """The unit-height truncated Gaussian at squared scaled distances norm2 (an array)."""
        return np.where(norm2 < self.cutoff2, np.exp(-0.5*norm2) - self.valueAtCutoff, 0.0)

    def evaluate(self, points, heights=None, centers=None, sigmas=None):
        """The sum of kernels (these, or those given) at each of points (m, d): an array (m,)."""
        heights = self.heights if heights is None else heights
        centers = self.centers if centers is None else centers
        sigmas = self.sigmas if sigmas is None else sigmas
        points = np.asarray(points, dtype=float).reshape(-1, self.dimensions)
        total = np.zeros(len(points))
        step = max(1, _CHUNK//max(1, len(heights)))
        for start in range(0, len(points), step):
            x = points[start:start + step, None, :]
            norm2 = np.sum((self.difference(centers[None, :, :], x)/sigmas[None, :, :])**2, axis=2)
            total[start:start + step] = self.profile(norm2) @ heights
        return total

    def _mergeable(self, center, exclude):
        """The index of the kernel nearest to center (in its own widths) within the compression
        threshold, other than ``exclude``; None if there is none (the first of equals, as PLUMED)."""
        if self.threshold2 == 0 or len(self) == 0:
            return None
        norm2 = np.sum((self.difference(center[None, :], self.centers)/self.sigmas)**2, axis=1)
        if exclude is not None:
            norm2[exclude] = np.inf
        best = int(np.argmin(norm2))
        return best if norm2[best] < self.threshold2 else None

    def _merge(self, taker, height, center, sigma):
        """Kernel ``taker`` becomes the merge of itself and (height, center, sigma): the heights add,
        the centre is their weighted mean and the variance that of the two Gaussians together. Along a
        periodic variable, as PLUMED's mergeKernels: the taker's centre at its image nearest the giver's
        centre, and the merged centre brought back into the period."""
        h1, c1, s1 = self.heights[taker], self.centers[taker], self.sigmas[taker]
        if self.anyPeriodic:
            c1 = np.where(self.periodic, center + self.difference(center, c1), c1)
        h = h1 + height
        c = (h1*c1 + height*center)/h
        ss = (h1*(s1*s1 + c1*c1) + height*(sigma*sigma + center*center))/h - c*c
        self.heights[taker], self.centers[taker], self.sigmas[taker] = h, self.bringBack(c), np.sqrt(ss)

    def _kernel(self, k, sign=1.0):
        return (sign*self.heights[k], self.centers[k].copy(), self.sigmas[k].copy())

    def add(self, height, center, sigma):
        """Add a kernel, merged into the nearest one within the threshold if there is one, and then,
        recursively, the result into its own nearest (PLUMED's default, not RECURSIVE_MERGE_OFF)."""
        center = np.array(center, dtype=float)
        sigma = np.array(sigma, dtype=float)
        taker = self._mergeable(center, None)
        if taker is None:
            self.heights = np.append(self.heights, height)
            self.centers = np.vstack([self.centers, center])
            self.sigmas = np.vstack([self.sigmas, sigma])
            self.deltas.append((height, center, sigma))
            return
        self.deltas.append(self._kernel(taker, -1.0))
        self._merge(taker, height, center, sigma)
        self.deltas.append(self._kernel(taker))
        giver = taker
        taker = self._mergeable(self.centers[giver], giver)
        while taker is not None:
            self.deltas.pop()                              # the merged kernel is merged again
            self.deltas.append(self._kernel(taker, -1.0))
            if taker > giver:
                taker, giver = giver, taker
            self._merge(taker, self.heights[giver], self.centers[giver].copy(), self.sigmas[giver].copy())
            self.deltas.append(self._kernel(taker))
            self.heights = np.delete(self.heights, giver)
            self.centers = np.delete(self.centers, giver, axis=0)
            self.sigmas = np.delete(self.sigmas, giver, axis=0)
            giver = taker
            taker = self._mergeable(self.centers[giver], giver)

    def clearDeltas(self):
        self.deltas = []

    def _deltaArrays(self):
        heights = np.array([d[0] for d in self.deltas])
        centers = np.array([d[1] for d in self.deltas]).reshape(-1, self.dimensions)
        sigmas = np.array([d[2] for d in self.deltas]).reshape(-1, self.dimensions)
        return heights, centers, sigmas

    def zed(self, oldZed, oldNorm, oldCount, norm):
        """Z of PLUMED's OPES after the changes since clearDeltas(): the mean over the compressed
        kernels' centres of the normalized estimate, sum_k sum_l G_l(c_k)/norm/n. As PLUMED, the
        double sum is redone in full when there are few kernels, else updated from the changes:
        sum = oldZed oldNorm oldCount + sum_k sum_d [G_d(c_k) + sign_d G_k(c_d)] - sum_d sum_e sign_d G_e(c_d)."""
        count, changes = len(self), len(self.deltas)
        if count*count < 3*count*changes + 2*changes*changes + 100:
            total = np.sum(self.evaluate(self.centers))
        else:
            heights, centers, sigmas = self._deltaArrays()
            signs = np.where(heights < 0, -1.0, 1.0)
            total = np.sum(self.evaluate(self.centers, heights, centers, sigmas))
            total += np.sum(signs*self.evaluate(centers))
            total -= np.sum(signs*self.evaluate(centers, heights, centers, sigmas))
            total += oldZed*oldNorm*oldCount
        return total/norm/count


class GridSum(object):
    """The unnormalized kernel sum on a grid (the bias array's layout: axis 0 is the last variable),
    kept up to date from the kernels' changes, each evaluated on the grid points within its cutoff.
    Along a periodic variable the grid's last point is its first again (the same value), and a
    kernel's window of points wraps around the period."""

    def __init__(self, kernels, axes):
        self.kernels = kernels
        self.axes = axes
        self.shape = tuple(len(axis) for axis in reversed(axes))
        self.values = np.zeros(self.shape)
        self.updates = 0

    def refresh(self):
        """Recompute the sum from all kernels, each on the grid points within its cutoff."""
        self.values = np.zeros(self.shape)
        kernels = self.kernels
        for height, center, sigma in zip(kernels.heights, kernels.centers, kernels.sigmas):
            self._add(height, center, sigma)
        self._closePeriods()
        self.updates = 0

    def apply(self, deltas):
        """Add the changed kernels (height, center, sigma) to the sum; every GRID_REFRESH_UPDATES calls,
        recompute it instead."""
        self.updates += 1
        if self.updates >= GRID_REFRESH_UPDATES:
            self.refresh()
            return
        for height, center, sigma in deltas:
            self._add(height, center, sigma)
        self._closePeriods()

    def _closePeriods(self):
        """The last point of each periodic axis (the first one again) given the first's value."""
        dimensions = len(self.axes)
        for k in np.flatnonzero(self.kernels.periodic):
            axis = dimensions - 1 - k
            self.values[(slice(None),)*axis + (-1,)] = self.values[(slice(None),)*axis + (0,)]

    def _add(self, height, center, sigma):
        """Add one kernel at the grid points within its cutoff."""
        if self.kernels.anyPeriodic:
            self._addWrapped(height, center, sigma)
            return
        cutoff = np.sqrt(self.kernels.cutoff2)
        dimensions = len(self.axes)
        window = []
        for k, axis in enumerate(self.axes):
            low = np.searchsorted(axis, center[k] - cutoff*sigma[k], side='left')
            high = np.searchsorted(axis, center[k] + cutoff*sigma[k], side='right')
            if low >= high:
                return
            window.append(slice(low, high))
        norm2 = 0.0
        for k, (axis, w) in enumerate(zip(self.axes, window)):
            shape = [1]*dimensions
            shape[dimensions - 1 - k] = w.stop - w.start
            norm2 = norm2 + (((axis[w] - center[k])/sigma[k])**2).reshape(shape)
        self.values[tuple(reversed(window))] += height*self.kernels.profile(norm2)

    def _addWrapped(self, height, center, sigma):
        """_add() where a variable is periodic: along it, the points of one period (all but the last)
        whose nearest image of the centre is within the cutoff, the window's indices taken modulo the
        period (each point once, where the cutoff reaches farther than half the period too)."""
        kernels = self.kernels
        cutoff = np.sqrt(kernels.cutoff2)
        dimensions = len(self.axes)
        indices, distances = [], []
        for k, axis in enumerate(self.axes):
            reach = cutoff*sigma[k]
            if kernels.periodic[k]:
                points = len(axis) - 1
                spacing = kernels.period[k]/points
                first = int(np.floor((center[k] - reach - kernels.low[k])/spacing))
                last = int(np.ceil((center[k] + reach - kernels.low[k])/spacing))
                if last - first + 1 >= points:
                    index = np.arange(points)
                else:
                    index = np.arange(first, last + 1) % points
                delta = kernels.axisDifference(k, center[k], axis[index])
            else:
                low = np.searchsorted(axis, center[k] - reach, side='left')
                high = np.searchsorted(axis, center[k] + reach, side='right')
                index = np.arange(low, high)
                delta = axis[index] - center[k]
            if len(index) == 0:
                return
            indices.append(index)
            distances.append(delta)
        norm2 = 0.0
        for k, delta in enumerate(distances):
            shape = [1]*dimensions
            shape[dimensions - 1 - k] = len(delta)
            norm2 = norm2 + ((delta/sigma[k])**2).reshape(shape)
        self.values[np.ix_(*reversed(indices))] += height*kernels.profile(norm2)
