/**
 * Pair-distance histograms: counts[k] += the number of pairs with k*dr <= r < (k+1)*dr.
 * Each block counts into shared memory and merges into the 64-bit global counts: the tile
 * kernels in 32-bit counters, flushed before they could overflow; the cell-list kernel, whose
 * blocks cannot flush together, in 64-bit counters. More bins than fit in shared memory count
 * straight into global memory.
 */

#define MAX_SHARED_BINS 8192
#define MAX_SHARED_BINS_64 4096
#define TILES_PER_FLUSH 16384

template <class T>
inline DEVICE void countPair(real r2, real maxDistance2, real invBinWidth, int numBins, bool shared, T* sCounts,
        unsigned long long* RESTRICT counts) {
    if (r2 < maxDistance2) {
        int bin = min((int) (SQRT(r2)*invBinWidth), numBins-1);
        if (shared)
            atomicAdd(&sCounts[bin], (T) 1);
        else
            atomicAdd(&counts[bin], 1ull);
    }
}

template <class T>
inline DEVICE void flushCounts(T* sCounts, int numBins, bool shared, unsigned long long* RESTRICT counts) {
    __syncthreads();
    if (shared)
        for (int bin = threadIdx.x; bin < numBins; bin += blockDim.x) {
            if (sCounts[bin] != 0)
                atomicAdd(&counts[bin], (unsigned long long) sCounts[bin]);
            sCounts[bin] = 0;
        }
    __syncthreads();
}
