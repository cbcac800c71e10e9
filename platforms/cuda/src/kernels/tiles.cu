/** The coordination over all pairs of one group or of two groups, tile by tile (geometry.cu enumerates the tiles). */

// The L particles a thread of the tile kernel holds, and the threads of its blocks.
#define TILE_THREADS (TILE/L_PER_THREAD)

/**
 * One tile: the block holds the TILE particles of L chunk a in registers, L_PER_THREAD a thread
 * (lane l of warp w holds particles 32*(L_PER_THREAD*w+i)+l), and walks the particles of S chunk
 * b in shared memory in batches of S_BATCH (pairBatch: 32, or 16 where the host chose S chunks of
 * 16 to fill the GPU with more, shorter warps). The gradient with respect to each S particle
 * is summed over the warp before one shared-memory atomic per particle and warp; global gradient
 * atomics happen once per particle per tile. Between the pairs and those atomics the block calls
 * finish(its threads' sums of s), which returns the factor of every gradient added (1 in the tile
 * kernel; dE/dcv where the chain rule runs in the same launch, kernels/chained.cu).
 */
template <bool GRADIENT, class Finish>
inline DEVICE mixed computeTile(int a, int b, bool diagonal, int sChunk, const real4* RESTRICT posq,
        const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS,
        const PairParams& params, const PeriodicBox& box, int flags, unsigned long long* RESTRICT forceBuffer,
        long long* RESTRICT gradient, int numSlots, real4* sPos, int* sKey, real3* sGradient, Finish finish) {
    const int lane = threadIdx.x%32, warp = threadIdx.x/32;
    const int sFirst = b*sChunk, sCount = min(sChunk, numS-sFirst);
    // The L particles load first, so that their loads overlap those of the S particles.
    LaneParticles<L_PER_THREAD> l;
    int lAtom[L_PER_THREAD];
#pragma unroll
    for (int i = 0; i < L_PER_THREAD; i++) {
        const int inChunk = 32*(L_PER_THREAD*warp+i)+lane, lIndex = a*TILE+inChunk;
        l.valid[i] = (lIndex < numL);
        lAtom[i] = (l.valid[i] ? groupAtoms[offsetL+lIndex] : 0);
        l.pos[i] = posq[lAtom[i]];
#ifdef GROUPS_OVERLAP
        l.key[i] = (l.valid[i] ? groupOriginal[offsetL+lIndex] : -1);
#else
        l.key[i] = inChunk;
#endif
        l.gradient[i] = make_real3(0, 0, 0);
    }
    for (int j = threadIdx.x; j < sCount; j += TILE_THREADS) {
        // Each batch of S_BATCH positions twice (pairBatch).
        const real4 p = posq[groupAtoms[offsetS+sFirst+j]];
        const int doubled = j+(j & ~(S_BATCH-1));
#ifdef GROUPS_OVERLAP
        const int key = groupOriginal[offsetS+sFirst+j];
#else
        const int key = j;
#endif
        sPos[doubled] = p;
        sPos[doubled+S_BATCH] = p;
        sKey[doubled] = key;
        sKey[doubled+S_BATCH] = key;
    }
    if (GRADIENT)
        for (int j = threadIdx.x; j < TILE; j += TILE_THREADS)
            sGradient[j] = make_real3(0, 0, 0);
    __syncthreads();
    const bool allValid = (a*TILE+32*L_PER_THREAD*(warp+1) <= numL);
    mixed cvSum = 0;
    for (int batch = 0; batch < sCount; batch += S_BATCH) {
        const int count = min(S_BATCH, sCount-batch);
        real3 gj;
        cvSum += pairBatch<L_PER_THREAD, S_BATCH, GRADIENT, true>(l, allValid, sPos+2*batch, sKey+2*batch, count, diagonal, params,
                box, &gj);
        if (GRADIENT && lane < count && isNonzero(gj)) {
            atomicAdd(&sGradient[batch+lane].x, gj.x);
            atomicAdd(&sGradient[batch+lane].y, gj.y);
            atomicAdd(&sGradient[batch+lane].z, gj.z);
        }
    }
    __syncthreads();
    const real factor = finish(cvSum);
    if (GRADIENT) {
#pragma unroll
        for (int i = 0; i < L_PER_THREAD; i++) {
            const int lIndex = a*TILE+32*(L_PER_THREAD*warp+i)+lane;
            const real3 gi = scaled(factor*gradientScale(params), l.gradient[i]);
            if (l.valid[i] && isNonzero(gi))
                addGradient(gi, offsetL+lIndex, lAtom[i], flags, forceBuffer, gradient, numSlots);
        }
        for (int j = threadIdx.x; j < sCount; j += TILE_THREADS)
            if (isNonzero(sGradient[j]))
                addGradient(scaled(factor, sGradient[j]), offsetS+sFirst+j, groupAtoms[offsetS+sFirst+j], flags, forceBuffer, gradient,
                        numSlots);
        __syncthreads();
    }
    return cvSum;
}

/** The finish of a tile in the tile kernel: the gradients go out as they are. */
struct PlainTileFinish {
    inline DEVICE real operator()(mixed cvSum) const {
        return 1;
    }
};

/**
 * The CV over all pairs of one group or of two groups, tile by tile; first, where invalidSlot is not
 * NULL, the check of every slot's position (checkSlotPositions(), energy.cu; positionEnergy: the
 * energy buffer where this evaluation's energy is read, else NULL).
 */
KERNEL void computeCoordinationTiles(const real4* RESTRICT posq, const int* RESTRICT groupAtoms,
        const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS, int sChunk, PairParams params,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial, unsigned int* RESTRICT counter, double* RESTRICT cvValue,
        double* RESTRICT record, int* RESTRICT alarm, int* RESTRICT invalidSlot, mixed* RESTRICT positionEnergy) {
    __shared__ real4 sPos[2*TILE];
    __shared__ int sKey[2*TILE];
    __shared__ real3 sGradient[TILE];
    DEPENDENT_KERNEL_START
    if (invalidSlot != NULL)
        checkSlotPositions(posq, groupAtoms, numSlots, invalidSlot, alarm, positionEnergy);
    const PeriodicBox box = {periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, params.imageSearch2};
    int numLChunks = (numL+TILE-1)/TILE;
    int numTiles = countTiles(numL, numS, sChunk);
    bool gradientWanted = (flags & (FLAG_DIRECT_FORCES | FLAG_GRADIENT)) != 0;
    mixed cvSum = 0;
    for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
        int a, b;
        bool diagonal;
        if (!decodeTile(tile, numLChunks, &a, &b, &diagonal))
            continue;
        if (gradientWanted)
            cvSum += computeTile<true>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params,
                    box, flags, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, PlainTileFinish());
        else
            cvSum += computeTile<false>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params,
                    box, flags, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, PlainTileFinish());
    }
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record, alarm);
}
