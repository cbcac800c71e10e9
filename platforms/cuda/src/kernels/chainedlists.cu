/** The CV's pass over the neighbour lists and the chain rule in one launch (kernels/neighbors.cu, kernels/chainrule.cu). */

/**
 * CV chainedCV of the NUM_CVS over its neighbour lists (coordinationListPass(), the arguments up to
 * numSlots computeCoordinationList's; the other CVs' pair kernels ran before), and the chain rule:
 * the last block to add its sum evaluates E and every dE/dcv_k (finishChainedBlock()); the gradient
 * stays in the CV's buffer by slot for OpenMM's bonded kernel (CudaCoordinationBondedChainRule), so
 * that no launch of applyChainRule() follows. chainFlags: the chain rule's (GRADIENT,
 * EXPRESSION_ENERGY, CV_STATISTICS); counter: the blocks that have added their sums (returns to 0);
 * distanceAtoms: the particles of the distance CVs, which the chain rule computes.
 */
KERNEL void computeCoordinationListChained(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, const int* RESTRICT sortedAtom, const int* RESTRICT cellStart,
        CellGrid grid, real4* RESTRICT listPos, real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot,
        unsigned int* RESTRICT entries, int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int numParticles, int capacity,
        real listCutoff2, const int* RESTRICT groupAtoms, PairParams params, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        int chainedCV, double* RESTRICT cvSums, double* RESTRICT nextCvSums, int chainFlags, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, unsigned int* RESTRICT counter, int* RESTRICT alarm,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ real4 shifts[27];
    DEPENDENT_KERNEL_START
    const mixed cvSum = coordinationListPass(rebuildStamp, stamp, posq, sortedPos, sortedSlot, sortedAtom, cellStart, grid, listPos,
            refPos, listShift, listSlot, entries, listCount, maxCount, numParticles, capacity, listCutoff2, groupAtoms, params,
            periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, flags, forceBuffer, gradient, numSlots, shifts);
    finishChainedBlock(cvSum, chainedCV, counter, cvSums, nextCvSums, chainFlags, state, energyBuffer, globals, alarm, posq,
            periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer
            ENERGY_TABLE_ARGUMENTS);
}
