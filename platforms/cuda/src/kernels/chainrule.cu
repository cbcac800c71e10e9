/** The chain rule of NUM_CVS CVs through the energy expression (energy.cu says what the state holds). */

/** Where each CV's gradient is, passed by value at each launch (the cell kernel's order can change between evaluations). */
typedef struct {
    long long* gradient[NUM_CVS];
    const int* groupAtoms[NUM_CVS];
    const int* entrySlot[NUM_CVS];
    int numSlots[NUM_CVS];
} ChainRuleTargets;

/** The energy expression E(cv[0], ..., cv[NUM_CVS-1]) and every dE/dcv_k, from the global parameters and the tables. */
inline DEVICE void evaluateEnergy(const double* cv, double* energy, double* dEdcv, const double* RESTRICT globals
        ENERGY_TABLE_PARAMETERS) {
    double E;
    COMPUTE_ENERGY_EXPRESSION
    *energy = E;
}

/**
 * Add the CVs of this evaluation to their running statistics (CoordinationBiasForce::
 * setCVStatisticsStride(), PLUMED's OPES_METAD update; the host's copy of the same update is
 * CoordinationCVStatistics::add()), held in statistics[] (energy.cu): the mean of each CV, the sum
 * of its squared deviations m2, the count and the stride, all double in every precision. Rounded
 * operations (__dadd_rn, ...), so that no multiply-add is contracted and the result is the host's.
 */
inline DEVICE void updateCVStatistics(const double* cv, double* RESTRICT statistics) {
    const double count = statistics[2*NUM_CVS]+1;
    const double tau = fmin(count, statistics[2*NUM_CVS+1]);
    statistics[2*NUM_CVS] = count;
    for (int k = 0; k < NUM_CVS; k++) {
        const double difference = __dsub_rn(cv[k], statistics[k]);
        statistics[k] = __dadd_rn(statistics[k], __ddiv_rn(difference, tau));
        statistics[NUM_CVS+k] = __dadd_rn(statistics[NUM_CVS+k], __dmul_rn(difference, __dsub_rn(cv[k], statistics[k])));
    }
}

/**
 * E and every dE/dcv_k from the sums the pair kernels accumulated (cvSums, read from L2: in a
 * chained launch other blocks of the same launch added them): thread 0 of each block evaluates them
 * into derivatives[] (shared, valid in every thread on return); block 0 stores the CVs and
 * dE/dcv_k in state, adds E to the energy buffer (EXPRESSION_ENERGY), adds the CVs to their
 * running statistics (CV_STATISTICS: the first evaluation of an MD step, which the host tells
 * from the Context's step count) and clears nextCvSums, the sums of the next evaluation (the one
 * before read them).
 */
inline DEVICE void evaluateChainRule(const double* RESTRICT cvSums, double* RESTRICT nextCvSums, int flags, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, int* RESTRICT alarm, double* derivatives ENERGY_TABLE_PARAMETERS) {
    if (threadIdx.x == 0) {
        double cv[NUM_CVS], dEdcv[NUM_CVS], E;
        for (int k = 0; k < NUM_CVS; k++)
            cv[k] = __ldcg(&cvSums[k]);
        evaluateEnergy(cv, &E, dEdcv, globals ENERGY_TABLE_ARGUMENTS);
        recordNonFinite(state+2*NUM_CVS, NUM_CVS, cv, &E, dEdcv, alarm);
        for (int k = 0; k < NUM_CVS; k++)
            derivatives[k] = dEdcv[k];
        if (blockIdx.x == 0) {
            for (int k = 0; k < NUM_CVS; k++) {
                state[k] = cv[k];
                state[NUM_CVS+k] = dEdcv[k];
                nextCvSums[k] = 0;
            }
            if (flags & FLAG_EXPRESSION_ENERGY)
                atomicAdd(&energyBuffer[0], (mixed) E);
            if (flags & FLAG_CV_STATISTICS)
                updateCVStatistics(cv, state+5*NUM_CVS+2);
        }
    }
    __syncthreads();
}

/**
 * The chain rule over every CV (evaluateChainRule()); with GRADIENT, -dE/dcv_k times CV k's
 * gradient goes to the forces, except that of CV `skip` (-1: none), whose launch adds its own.
 */
inline DEVICE void scatterChainRule(const ChainRuleTargets& targets, int flags, const double* derivatives, int skip,
        unsigned long long* RESTRICT forceBuffer) {
    if (flags & FLAG_GRADIENT)
        for (int k = 0; k < NUM_CVS; k++)
            if (k != skip)
                scatterGradient(targets.gradient[k], targets.groupAtoms[k], targets.entrySlot[k], targets.numSlots[k],
                        chainRuleScale(derivatives[k]), forceBuffer);
}

/** The chain rule of every CV in a launch of its own, after the CVs' pair kernels. */
KERNEL void applyChainRule(ChainRuleTargets targets, const double* RESTRICT cvSums, double* RESTRICT nextCvSums, int flags,
        double* RESTRICT state, mixed* RESTRICT energyBuffer, unsigned long long* RESTRICT forceBuffer,
        const double* RESTRICT globals, int* RESTRICT alarm ENERGY_TABLE_PARAMETERS) {
    __shared__ double derivatives[NUM_CVS];
    DEPENDENT_KERNEL_START
    evaluateChainRule(cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, derivatives ENERGY_TABLE_ARGUMENTS);
    scatterChainRule(targets, flags, derivatives, -1, forceBuffer);
}
