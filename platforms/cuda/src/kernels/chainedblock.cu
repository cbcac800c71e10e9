/** What the launches that run a CV's pass and the chain rule together share (kernels/chained.cu, kernels/chainedlists.cu). */

/**
 * The end of a block of a launch that also runs the chain rule (kernels/chained.cu,
 * kernels/chainedlists.cu), called once by every thread of every block: add the block's sum of s
 * (cvSum, summed over the block here) to cvSums[cv] and count the block in (counter returns to 0);
 * the last block to do so evaluates E and every dE/dcv_k (evaluateChainRule(), as the leader) once
 * every block's sum is in. Only thread 0's sum is ordered before its count, not the block's
 * gradient atomics, which OpenMM's bonded kernel reads after the launch (CudaCoordinationBondedChainRule).
 */
inline DEVICE void finishChainedBlock(mixed cvSum, int cv, unsigned int* RESTRICT counter, double* RESTRICT cvSums,
        double* RESTRICT nextCvSums, int flags, double* RESTRICT state, mixed* RESTRICT energyBuffer, const double* RESTRICT globals,
        int* RESTRICT alarm, const real4* RESTRICT posq, real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX,
        real4 periodicBoxVecY, real4 periodicBoxVecZ, const int* RESTRICT distanceAtoms, unsigned long long* RESTRICT forceBuffer
        ENERGY_TABLE_PARAMETERS) {
    __shared__ mixed scratch[TILE/32];
    __shared__ double derivatives[NUM_CVS];
    __shared__ bool isLast;
    const mixed total = blockSum(cvSum, scratch);
    if (threadIdx.x == 0) {
        atomicAdd(&cvSums[cv], (double) total);
        __threadfence();
        isLast = (atomicInc(counter, gridDim.x-1) == gridDim.x-1);
        if (isLast)
            __threadfence();
    }
    __syncthreads();
    if (isLast)
        evaluateChainRule(true, cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, derivatives, posq, periodicBoxSize,
                invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
}
