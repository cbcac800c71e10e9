/**
 * The gradient pass of per-atom coordination numbers on the neighbour lists (kernels/particlelists.cu)
 * and the chain rule (kernels/chainrule.cu) in one launch.
 */

/**
 * CV chainedCV of the NUM_CVS, a particle function on the neighbour lists, whose F is complete
 * before this launch (its first pass, or evaluateParticleFunction, added it to cvSums[chainedCV]):
 * each block evaluates E and every dE/dcv_k (evaluateChainRule()), adds -dE/dcv_k times the
 * gradients of the other CVs (whose pair kernels ran before) to the forces (scatterChainRule()), and
 * then its particles' gradients of F times -dE/dF straight to the forces
 * (particleListGradientPass()), without the gradient buffer and without a launch of
 * applyChainRule(). No block waits for another: an ordinary launch. The arguments up to numSlots
 * are computeParticleListGradient's; chainFlags: the chain rule's (GRADIENT, EXPRESSION_ENERGY,
 * CV_STATISTICS); distanceAtoms: the particles of the distance CVs, which the chain rule computes.
 */
KERNEL void computeParticleListGradientChained(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const int* RESTRICT sortedAtom,
        const int* RESTRICT cellStart, CellGrid grid, const real4* RESTRICT listPos, const int* RESTRICT listSlot,
        const unsigned int* RESTRICT entries, const int* RESTRICT listCount, int numParticles, int capacity,
        const int* RESTRICT groupAtoms, PairParams params, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        real distancePower, int numA, const double* RESTRICT w, const real* RESTRICT listWeight, int flags,
        unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots, ChainRuleTargets targets,
        int chainedCV, const double* RESTRICT cvSums, double* RESTRICT nextCvSums, int chainFlags, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, int* RESTRICT alarm, real4 periodicBoxSize,
        real4 invPeriodicBoxSize, const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ real4 shifts[27];
    __shared__ double derivatives[NUM_CVS];
    DEPENDENT_KERNEL_START
    loadImageShifts(shifts, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    evaluateChainRule(blockIdx.x == 0, cvSums, nextCvSums, chainFlags, state, energyBuffer, globals, alarm, derivatives, posq, periodicBoxSize,
            invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
    scatterChainRule(targets, chainFlags, derivatives, chainedCV, forceBuffer);
    particleListGradientPass(rebuildStamp, stamp, posq, sortedAtom, cellStart, grid, listPos, listSlot, entries, listCount, numParticles, capacity,
            groupAtoms, params, shifts, distancePower, numA, w, listWeight, (real) derivatives[chainedCV], FLAG_DIRECT_FORCES,
            forceBuffer, gradient, numSlots);
}
