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

#ifdef COMPILE_HISTOGRAM
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
                countPair(r2, maxDistance2, invBinWidth, numBins, numBins <= MAX_SHARED_BINS, sCounts, counts);
            }
        }
        if (++tilesSinceFlush == TILES_PER_FLUSH) {
            flushCounts(sCounts, numBins, numBins <= MAX_SHARED_BINS, counts);
            tilesSinceFlush = 0;
        }
    }
    flushCounts(sCounts, numBins, numBins <= MAX_SHARED_BINS, counts);
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
        countPair(r2, maxDistance2, invBinWidth, numBins, numBins <= MAX_SHARED_BINS, sCounts, counts);
    }
    flushCounts(sCounts, numBins, numBins <= MAX_SHARED_BINS, counts);
}
#endif

/** The pairs a cell-list work item visits (visitCellItem), counted into 64-bit shared counters. */
struct CellHistogram {
    const int* groupOriginal;
    real maxDistance2, invBinWidth;
    int numBins;
    unsigned long long* sCounts;
    unsigned long long* counts;
    LaneParticles<1> l;

    inline DEVICE void beginL(int index, int slot, bool valid, real4 position) {
        beginCellLane(l, index, slot, valid, position, groupOriginal);
    }

    inline DEVICE void batch(const real4* sPos, const int* sKey, const int* sSlot, int count, bool diagonal) {
        if (!l.valid[0])
            return;
        for (int k = 0; k < count; k++) {
            const int place = batchPlace(k);
            if (PAIR_WANTED(place, l.key[0])) {
                real r2;
                shiftedDelta(l.pos[0], sPos[place], &r2);
                countPair(r2, maxDistance2, invBinWidth, numBins, numBins <= MAX_SHARED_BINS_64, sCounts, counts);
            }
        }
    }

    inline DEVICE void endL(int slot, bool valid) {
    }
};

#ifdef COMPILE_HISTOGRAM_CELLS
/** The histogram over the pairs of neighbouring cells (maxDistance below half the box). */
KERNEL void histogramCells(const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, const int* RESTRICT cellStart,
        unsigned int* RESTRICT workCounter, const int* RESTRICT groupOriginal, CellGrid grid, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int numBins, real maxDistance2, real invBinWidth, unsigned long long* RESTRICT counts) {
    CELL_BATCH_MEMORY
    __shared__ unsigned long long sCounts[MAX_SHARED_BINS_64];
    for (int bin = threadIdx.x; bin < min(numBins, MAX_SHARED_BINS_64); bin += blockDim.x)
        sCounts[bin] = 0;
    __syncthreads();
    const int numItems = countCellItems(grid);
    CellBatch batch = WARP_CELL_BATCH;
    CellHistogram visitor = {groupOriginal, maxDistance2, invBinWidth, numBins, sCounts, counts};
    for (int item = nextCellItem(workCounter); item < numItems; item = nextCellItem(workCounter))
        visitCellItem(item, grid, maxDistance2, cellStart, sortedPos, sortedSlot, groupOriginal, periodicBoxVecX, periodicBoxVecY,
                periodicBoxVecZ, batch, visitor);
    flushCounts(sCounts, numBins, numBins <= MAX_SHARED_BINS_64, counts);
}
#endif
