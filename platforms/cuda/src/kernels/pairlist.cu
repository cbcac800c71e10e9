/**
 * The CV over a list of pairs (groupAtoms[k], groupAtoms[numPairs+k]); with PAIR_PARAMETERS,
 * pair k has its own weight and r0 in pairValues[k] (unused otherwise). Where invalidSlot is not
 * NULL, first the check of every slot's position, as computeCoordinationTiles.
 */
KERNEL void computeCoordinationPairs(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numPairs,
        PairParams params, real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient,
        const PairValues* RESTRICT pairValues, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial,
        unsigned int* RESTRICT counter, double* RESTRICT cvValue,
        double* RESTRICT record, int* RESTRICT alarm, int* RESTRICT invalidSlot, mixed* RESTRICT positionEnergy) {
    DEPENDENT_KERNEL_START
    if (invalidSlot != NULL)
        checkSlotPositions(posq, groupAtoms, 2*numPairs, invalidSlot, alarm, positionEnergy);
    bool gradientWanted = (flags & (FLAG_DIRECT_FORCES | FLAG_GRADIENT)) != 0;
    mixed cvSum = 0;
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numPairs; k += blockDim.x*gridDim.x) {
        int i = groupAtoms[k], j = groupAtoms[numPairs+k];
#ifdef PAIR_PARAMETERS
        PairParams pair = params;
        const real weight = applyPairValues(pairValues[k], &pair);
#else
        const PairParams& pair = params;
#endif
        real r2, g;
        real3 delta = pairDelta(posq[i], posq[j], &r2, params.imageSearch2, periodicBoxSize, invPeriodicBoxSize,
                periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
        real s = switchingFunction(r2, pair, &g);
        g *= gradientScale(pair);
#ifdef PAIR_PARAMETERS
        s *= weight;
        g *= weight;
#endif
        cvSum += s;
        if (gradientWanted && g != 0) {
            real3 gj = make_real3(g*delta.x, g*delta.y, g*delta.z);
            addGradient(gj, numPairs+k, j, flags, forceBuffer, gradient, 2*numPairs);
            addGradient(make_real3(-gj.x, -gj.y, -gj.z), k, i, flags, forceBuffer, gradient, 2*numPairs);
        }
    }
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record, alarm);
}
