/**
 * Pair-distance histograms: counts[k] += the number of pairs with k*dr <= r < (k+1)*dr.
 * Each block counts into shared memory (32-bit, flushed before they could overflow) and
 * merges into the 64-bit global counts once per flush. More bins than fit in shared memory
 * count straight into global memory.
 */

#define MAX_SHARED_BINS 8192
#define TILES_PER_FLUSH 16384

inline DEVICE void countPair(real r2, real maxDistance2, real invBinWidth, int numBins, unsigned int* sCounts,
        unsigned long long* RESTRICT counts) {
    if (r2 < maxDistance2) {
        int bin = min((int) (SQRT(r2)*invBinWidth), numBins-1);
        if (numBins <= MAX_SHARED_BINS)
            atomicAdd(&sCounts[bin], 1u);
        else
            atomicAdd(&counts[bin], 1ull);
    }
}

inline DEVICE void flushCounts(unsigned int* sCounts, int numBins, unsigned long long* RESTRICT counts) {
    __syncthreads();
    if (numBins <= MAX_SHARED_BINS)
        for (int bin = threadIdx.x; bin < numBins; bin += blockDim.x) {
            if (sCounts[bin] != 0)
                atomicAdd(&counts[bin], (unsigned long long) sCounts[bin]);
            sCounts[bin] = 0;
        }
    __syncthreads();
}

KERNEL void histogramTiles(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal,
        int numL, int numS, int offsetL, int offsetS, real imageSearch2, real4 periodicBoxSize, real4 invPeriodicBoxSize,
        real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, int numBins, real maxDistance2, real invBinWidth,
        unsigned long long* RESTRICT counts) {
    __shared__ real4 sPos[TILE];
    __shared__ int sOriginal[TILE];
    __shared__ unsigned int sCounts[MAX_SHARED_BINS];
    for (int bin = threadIdx.x; bin < min(numBins, MAX_SHARED_BINS); bin += blockDim.x)
        sCounts[bin] = 0;
    int numLChunks = (numL+TILE-1)/TILE;
    int numTiles = countTiles(numL, numS, TILE);
    int tilesSinceFlush = 0;
    for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
        int a, b;
        bool diagonal;
        if (!decodeTile(tile, numLChunks, &a, &b, &diagonal))
            continue;
        int sFirst = b*TILE, sCount = min(TILE, numS-sFirst);
        __syncthreads();
        if (threadIdx.x < sCount) {
            sPos[threadIdx.x] = posq[groupAtoms[offsetS+sFirst+threadIdx.x]];
#ifdef GROUPS_OVERLAP
            sOriginal[threadIdx.x] = groupOriginal[offsetS+sFirst+threadIdx.x];
#endif
        }
        __syncthreads();
        int lIndex = a*TILE+threadIdx.x;
        if (lIndex < numL) {
            real4 pi = posq[groupAtoms[offsetL+lIndex]];
#ifdef GROUPS_OVERLAP
            int lOriginal = groupOriginal[offsetL+lIndex];
#endif
            for (int j = (diagonal ? threadIdx.x+1 : 0); j < sCount; j++) {
#ifdef GROUPS_OVERLAP
                if (sOriginal[j] == lOriginal)
                    continue;
#endif
                real r2;
                pairDelta(pi, sPos[j], &r2, imageSearch2, periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
                countPair(r2, maxDistance2, invBinWidth, numBins, sCounts, counts);
            }
        }
        if (++tilesSinceFlush == TILES_PER_FLUSH) {
            flushCounts(sCounts, numBins, counts);
            tilesSinceFlush = 0;
        }
    }
    flushCounts(sCounts, numBins, counts);
}

KERNEL void histogramPairs(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numPairs, real imageSearch2,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int numBins, real maxDistance2, real invBinWidth, unsigned long long* RESTRICT counts) {
    __shared__ unsigned int sCounts[MAX_SHARED_BINS];
    for (int bin = threadIdx.x; bin < min(numBins, MAX_SHARED_BINS); bin += blockDim.x)
        sCounts[bin] = 0;
    __syncthreads();
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numPairs; k += blockDim.x*gridDim.x) {
        real r2;
        pairDelta(posq[groupAtoms[k]], posq[groupAtoms[numPairs+k]], &r2, imageSearch2, periodicBoxSize, invPeriodicBoxSize,
                periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
        countPair(r2, maxDistance2, invBinWidth, numBins, sCounts, counts);
    }
    flushCounts(sCounts, numBins, counts);
}
