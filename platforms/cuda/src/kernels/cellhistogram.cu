/** The pair-distance histogram (histogram.cu) over the cell lists (traversal.cu). */

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
        visitCellItem(item, grid, maxDistance2, cellStart, sortedPos, sortedPos, sortedSlot, groupOriginal, periodicBoxVecX, periodicBoxVecY,
                periodicBoxVecZ, batch, visitor);
    flushCounts(sCounts, numBins, numBins <= MAX_SHARED_BINS_64, counts);
}
