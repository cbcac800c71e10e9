/** The tile kernel and the chain rule in one launch (kernels/tiles.cu, kernels/chainrule.cu). */

/**
 * CV chainedCV of the NUM_CVS on the tile path, one tile a block, and the chain rule, in one
 * ordinary launch: each block adds its sum of s to cvSums[chainedCV] (the other CVs' pair kernels
 * ran before), and the last block to do so evaluates E and every dE/dcv_k (evaluateChainRule():
 * the state, the energy, the distances' forces, the statistics) before its own gradient goes out.
 * Every block adds its pairs' gradient to the CV's gradient buffer by slot, as the tile kernel does;
 * OpenMM's bonded kernel, later in the step, adds -dE/dcv_k times each CV's gradient to the forces
 * and clears it (CudaCoordinationBondedChainRule), so that no block waits for another and no
 * launch of applyChainRule() follows. flags: the chain rule's (GRADIENT, EXPRESSION_ENERGY,
 * CV_STATISTICS). First, where invalidSlot is not NULL, the check of every slot's position
 * (checkSlotPositions()). counter: the blocks that have added their sums (returns to 0).
 * distanceAtoms: the particles of the distance CVs, which the chain rule computes (chainrule.cu).
 */
KERNEL void computeCoordinationTilesChained(const real4* RESTRICT posq, const int* RESTRICT groupAtoms,
        const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS, int sChunk, PairParams params,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        int chainedCV, double* RESTRICT cvSums, double* RESTRICT nextCvSums, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, unsigned int* RESTRICT counter, int* RESTRICT alarm,
        int* RESTRICT invalidSlot, mixed* RESTRICT positionEnergy, const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ real4 sPos[2*TILE];
    __shared__ int sKey[2*TILE];
    __shared__ real3 sGradient[TILE];
    __shared__ mixed scratch[TILE/32];
    __shared__ double derivatives[NUM_CVS];
    __shared__ bool isLast;
    DEPENDENT_KERNEL_START
    if (invalidSlot != NULL)
        checkSlotPositions(posq, groupAtoms, numSlots, invalidSlot, alarm, positionEnergy);
    const PeriodicBox box = {periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, params.imageSearch2};
    auto finish = [&] (mixed cvSum) -> real {
        const mixed total = blockSum(cvSum, scratch);
        // Only thread 0's sum orders before the count (not the block's gradient atomics, which the bonded kernel reads after this launch).
        if (threadIdx.x == 0) {
            atomicAdd(&cvSums[chainedCV], (double) total);
            __threadfence();
            isLast = (atomicInc(counter, gridDim.x-1) == gridDim.x-1);
            if (isLast)
                __threadfence();
        }
        __syncthreads();
        if (isLast)
            evaluateChainRule(true, cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, derivatives, posq, periodicBoxSize,
                    invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
        return 1;
    };
    int a, b;
    bool diagonal;
    if (!decodeTile(blockIdx.x, (numL+TILE-1)/TILE, &a, &b, &diagonal))
        finish(0);
    else if (flags & FLAG_GRADIENT)
        computeTile<true>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params, box,
                FLAG_GRADIENT, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, finish);
    else
        computeTile<false>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params, box,
                FLAG_GRADIENT, forceBuffer, gradient, numSlots, sPos, sKey, sGradient, finish);
}
