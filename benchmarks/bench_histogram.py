"""The `histogram` section of benchmark.py: pair histograms against CuPy (where CuPy is installed),
all pairs of 100,000 atoms and a million atoms within 1.5 nm (cell lists).
"""

import numpy as np

from openmmcoordination import CoordinationForce

from common import ATOM_DENSITY, force_system, make_context, median_time, random_positions


def cupy_histogram(positions, edge, numBins, maxDistance):
    import cupy as cp
    pos = cp.asarray(positions, dtype=cp.float32)
    n = len(positions)
    counts = cp.zeros(numBins, dtype=cp.int64)
    block = 2048
    for start in range(0, n, block):
        d = pos[start:start + block, None, :] - pos[None, :, :]
        d -= edge * cp.rint(d / edge)
        r = cp.sqrt((d * d).sum(axis=2))
        counts += cp.histogram(r, bins=numBins, range=(0.0, maxDistance))[0]
    counts[0] -= n  # each particle with itself
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(counts) // 2


def run(platform, precision, quick):
    """The rows of both cases: all pairs, and within rmax."""
    return run_all_pairs(platform, precision, quick) + run_cutoff(platform, precision, quick)


def run_all_pairs(platform, precision, quick):
    n = 5000 if quick else 100000
    numBins = 200
    positions, edge = random_positions(n)
    maxDistance = 0.5 * edge
    force, context = histogram_context(positions, edge, platform, precision)
    ours = force.getPairHistogram(context, numBins, maxDistance)
    pairs = n * (n - 1) // 2
    single, accumulated = histogram_times(force, context, numBins, maxDistance)
    rows = [{'section': 'histogram', 'case': '%d atoms, all pairs, %d bins, one frame read back' % (n, numBins),
             'ms': 1000 * single, 'pairs_per_s': pairs / single},
            {'section': 'histogram', 'case': '%d atoms, accumulated on the device, per frame' % n,
             'ms': 1000 * accumulated, 'pairs_per_s': pairs / accumulated}]
    try:
        import cupy  # noqa: F401
    except ImportError:
        return rows
    peer = cupy_histogram(positions, edge, numBins, maxDistance)
    moved = int(np.abs(peer - ours).sum())
    if moved > 1e-5 * ours.sum() + 10:
        raise RuntimeError('histogram disagrees with CuPy: %d counts differ' % moved)
    peerTime = median_time(lambda: cupy_histogram(positions, edge, numBins, maxDistance), 3)
    for row in rows:
        row.update({'peer': 'CuPy', 'peer_ms': 1000 * peerTime, 'peer_pairs_per_s': pairs / peerTime,
                    'speedup_vs_peer': peerTime / (row['ms'] / 1000), 'counts_differing_from_peer': moved})
    return rows


def histogram_times(force, context, numBins, maxDistance, frames=10):
    """Seconds for one frame read back, and per frame accumulated on the device."""
    single = median_time(lambda: force.getPairHistogram(context, numBins, maxDistance), 5)

    def accumulate():
        force.resetPairHistogram(context)
        for _ in range(frames):
            force.accumulatePairHistogram(context, numBins, maxDistance)
        force.getAccumulatedPairHistogram(context)
    return single, median_time(accumulate, 3) / frames


def histogram_context(positions, edge, platform, precision):
    force = CoordinationForce(list(range(len(positions))))
    force.setUsesPeriodicBoundaryConditions(True)
    context, _ = make_context(force_system(force, len(positions), edge), platform, precision)
    context.setPositions(positions)
    return force, context


def run_cutoff(platform, precision, quick):
    """A million atoms at the density of water's atoms, rmax 1.5 nm (cell lists): pairs within
    rmax per second. CuPy's all-pairs histogram of a million atoms is out of reach, so its peer
    figure is its pairs/s on 100,000 atoms (same density, own box)."""
    n, maxDistance, numBins = (5000, 0.6, 200) if quick else (1000000, 1.5, 200)
    positions, edge = random_positions(n, seed=3, density=ATOM_DENSITY)
    force, context = histogram_context(positions, edge, platform, precision)
    pairs = int(force.getPairHistogram(context, numBins, maxDistance).sum())  # pairs within rmax
    single, accumulated = histogram_times(force, context, numBins, maxDistance)
    del context
    name = '%s atoms, rmax %g nm' % (format(n, ','), maxDistance)
    note = 'periodic cube, cell lists; pairs_per_s: pairs within rmax (the histogram\'s count) per second'
    rows = [{'section': 'histogram', 'case': name + ': one frame read back', 'bins': numBins, 'pairs_within_rmax': pairs,
             'ms': 1000 * single, 'pairs_per_s': pairs / single, 'note': note},
            {'section': 'histogram', 'case': name + ': accumulated on the device, per frame', 'bins': numBins,
             'pairs_within_rmax': pairs, 'ms': 1000 * accumulated, 'pairs_per_s': pairs / accumulated, 'note': note}]
    try:
        import cupy  # noqa: F401
    except ImportError:
        return rows
    peerN = min(n, 100000)
    peerPositions, peerEdge = random_positions(peerN, seed=4, density=ATOM_DENSITY)
    peerForce, peerContext = histogram_context(peerPositions, peerEdge, platform, precision)
    ours = peerForce.getPairHistogram(peerContext, numBins, maxDistance)
    del peerContext
    peer = cupy_histogram(peerPositions, peerEdge, numBins, maxDistance)
    moved = int(np.abs(peer - ours).sum())
    # float distances err by about 1e-6 nm: pairs that close to a bin edge may land on either side
    if moved > 4e-6 / (maxDistance / numBins) * ours.sum() + 10:
        raise RuntimeError('histogram disagrees with CuPy: %d counts differ' % moved)
    peerTime = median_time(lambda: cupy_histogram(peerPositions, peerEdge, numBins, maxDistance), 3)
    peerRate = peerN * (peerN - 1) / 2 / peerTime
    for row in rows:
        row.update({'peer': 'CuPy', 'peer_ms': 1000 * peerTime, 'peer_pairs_per_s': peerRate,
                    'pairs_per_s_ratio_vs_peer': row['pairs_per_s'] / peerRate, 'counts_differing_from_peer': moved,
                    'note': note + '; peer: CuPy blocked all-pairs histogram of %s atoms (same density, own box; '
                            'a million is out of its reach), all pairs per second, peer_ms for those atoms; '
                            'pairs_per_s_ratio_vs_peer compares the two rates, not times' % format(peerN, ',')})
    return rows


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick)."""
    return run(platform, options.precision, options.quick)
