/** The tile kernel and the chain rule in one launch (kernels/tiles.cu, kernels/chainrule.cu). */

/**
 * Wait until every block of the launch has called this, with all its threads, after the writes
 * the others are to see (visible to every block on return). Only for a launch whose blocks are all
 * resident at once, a cooperative launch: a block waits here for all the others. barrier[0] counts
 * the blocks in (and returns to 0), barrier[1] the barriers passed.
 */
inline DEVICE void gridBarrier(unsigned int* barrier) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned int* passed = barrier+1;
        const unsigned int before = *passed;
        __threadfence();
        if (atomicInc(barrier, gridDim.x-1) == gridDim.x-1)
            atomicAdd(barrier+1, 1);
        else
            while (*passed == before) {
#if __CUDA_ARCH__ >= 700
                __nanosleep(32);
#endif
            }
        __threadfence();
    }
    __syncthreads();
}

/**
 * CV chainedCV of the NUM_CVS, on the tile path with one tile a block (and where the other CVs'
 * gradients have more entries than the tiles have threads, blocks without a tile), and the chain
 * rule, in one cooperative launch: the blocks add the CV's sum to cvSums[chainedCV] and wait for each other
 * (gridBarrier()); each then evaluates E and every dE/dcv_k (evaluateChainRule()), adds -dE/dcv_k
 * times the gradients of the other CVs (whose pair kernels ran before) to the forces, and the
 * gradients of its own pairs times -dE/dcv straight to the forces, without the gradient buffer
 * and without a launch of applyChainRule(). flags: the chain rule's (GRADIENT, EXPRESSION_ENERGY).
 * First, where invalidSlot is not NULL, the check of every slot's position (checkSlotPositions()).
 * distanceAtoms: the particles of the distance CVs, which the chain rule computes (chainrule.cu).
 */
KERNEL void computeCoordinationTilesChained(const real4* RESTRICT posq, const int* RESTRICT groupAtoms,
        const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS, int sChunk, PairParams params,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        ChainRuleTargets targets, int chainedCV, double* RESTRICT cvSums, double* RESTRICT nextCvSums, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, unsigned int* RESTRICT barrier, int* RESTRICT alarm,
        int* RESTRICT invalidSlot, mixed* RESTRICT positionEnergy, const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ real4 sPos[2*TILE];
    __shared__ int sKey[2*TILE];
    __shared__ real3 sGradient[TILE];
    __shared__ mixed scratch[TILE/32];
    __shared__ double derivatives[NUM_CVS];
    DEPENDENT_KERNEL_START
    if (invalidSlot != NULL)
        checkSlotPositions(posq, groupAtoms, numSlots, invalidSlot, alarm, positionEnergy);
    const PeriodicBox box = {periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, params.imageSearch2};
    auto finish = [&] (mixed cvSum) -> real {
        const mixed total = blockSum(cvSum, scratch);
        if (threadIdx.x == 0)
            atomicAdd(&cvSums[chainedCV], (double) total);
        gridBarrier(barrier);
        evaluateChainRule(cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, derivatives, posq, periodicBoxSize,
                invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
        scatterChainRule(targets, flags, derivatives, chainedCV, forceBuffer);
        return (real) derivatives[chainedCV];
    };
    int a, b;
    bool diagonal;
    // Blocks beyond the tiles (launched to spread the chain rule's scatter) join at the barrier.
    if (blockIdx.x >= countTiles(numL, numS, sChunk) || !decodeTile(blockIdx.x, (numL+TILE-1)/TILE, &a, &b, &diagonal))
        finish(0);
    else if (flags & FLAG_GRADIENT)
        computeTile<true>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params, box,
                FLAG_DIRECT_FORCES, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, finish);
    else
        computeTile<false>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params, box,
                FLAG_DIRECT_FORCES, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, finish);
}
