/** The tile kernel of one or more CVs and the chain rule in one launch (kernels/tiles.cu, kernels/chainrule.cu). */

/**
 * One CV of a chained tile launch (CudaCoordinationCV::ChainedTileCV on the host, the same layout):
 * its tiles are the blocks from firstTile to the next CV's firstTile, its sum goes to cvSums[cv];
 * invalidSlot NULL: no check of its positions.
 */
typedef struct {
    const int* groupAtoms;
    const int* groupOriginal;
    long long* gradient;
    int* invalidSlot;
    int numL, numS, offsetL, offsetS, sChunk, numSlots, cv, firstTile;
    PairParams params;
} ChainedTileCV;

/**
 * A kernel parameter read in place, by any index, rather than copied to local memory per thread
 * (__grid_constant__, sm_70 and later).
 */
#if __CUDA_ARCH__ >= 700
#define GRID_CONSTANT __grid_constant__
#else
#define GRID_CONSTANT
#endif

/**
 * The CVs of a chained tile launch, by value: count of them, in the order of their tiles; at most
 * MAX_CHAINED_TILE_CVS (CudaCoordinationProgram::MaxChainedTileCVs, a define of the part).
 */
typedef struct {
    ChainedTileCV cv[MAX_CHAINED_TILE_CVS];
    int count;
} ChainedTileCVs;

/**
 * The CVs of chained (all compiled from this program: the same code path) on the tile path, one
 * tile a block, and the chain rule, in one ordinary launch: each block adds its sum of s to its CV's
 * cvSums (the other CVs' pair kernels ran before), and the last block to do so evaluates E and every
 * dE/dcv_k (finishChainedBlock(): the state, the energy, the distances' forces, the statistics) before
 * its own gradient goes out. Every block adds its pairs' gradient to its CV's gradient buffer by
 * slot, as the tile kernel does; OpenMM's bonded kernel, later in the step, adds -dE/dcv_k times each
 * CV's gradient to the forces and clears it (CudaCoordinationBondedChainRule), so that no block
 * waits for another and no launch of applyChainRule() follows. flags: the chain rule's (GRADIENT,
 * EXPRESSION_ENERGY, CV_STATISTICS). First, for each CV whose invalidSlot is not NULL, the check of
 * every slot's position (checkSlotPositions()). counter: the blocks that have added their sums
 * (returns to 0). distanceAtoms: the particles of the distance CVs, which the chain rule computes.
 */
KERNEL void computeCoordinationTilesChained(const real4* RESTRICT posq, const GRID_CONSTANT ChainedTileCVs chained, real4 periodicBoxSize,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, int flags,
        unsigned long long* RESTRICT forceBuffer, double* RESTRICT cvSums, double* RESTRICT nextCvSums, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, unsigned int* RESTRICT counter, int* RESTRICT alarm,
        mixed* RESTRICT positionEnergy, const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ real4 sPos[2*TILE];
    __shared__ int sKey[2*TILE];
    __shared__ real3 sGradient[TILE];
    DEPENDENT_KERNEL_START
    int c = 0;
    for (int k = 0; k < chained.count; k++) {
        if (chained.cv[k].invalidSlot != NULL)
            checkSlotPositions(posq, chained.cv[k].groupAtoms, chained.cv[k].numSlots, chained.cv[k].invalidSlot, alarm, positionEnergy);
        if (k > 0 && blockIdx.x >= chained.cv[k].firstTile)
            c = k;
    }
    const ChainedTileCV& cv = chained.cv[c];
    const PeriodicBox box = {periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, cv.params.imageSearch2};
    auto finish = [&] (mixed cvSum) -> real {
        finishChainedBlock(cvSum, cv.cv, counter, cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, posq, periodicBoxSize,
                invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
        return 1;
    };
    int a, b;
    bool diagonal;
    if (!decodeTile(blockIdx.x-cv.firstTile, (cv.numL+TILE-1)/TILE, &a, &b, &diagonal))
        finish(0);
    else if (flags & FLAG_GRADIENT)
        computeTile<true>(a, b, diagonal, cv.sChunk, posq, cv.groupAtoms, cv.groupOriginal, cv.numL, cv.numS, cv.offsetL, cv.offsetS,
                cv.params, box, FLAG_GRADIENT, forceBuffer, cv.gradient, cv.numSlots, sPos, sKey, sGradient, finish);
    else
        computeTile<false>(a, b, diagonal, cv.sChunk, posq, cv.groupAtoms, cv.groupOriginal, cv.numL, cv.numS, cv.offsetL, cv.offsetS,
                cv.params, box, FLAG_GRADIENT, forceBuffer, cv.gradient, cv.numSlots, sPos, sKey, sGradient, finish);
}
