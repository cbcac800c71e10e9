/** Pair-distance histograms (histogram.cu) over all pairs of one or two groups, tile by tile, and over a pair list. */
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
