/**
 * The chain rule of NUM_CVS CVs through the energy expression (energy.cu says what the state
 * holds), NUM_DISTANCES of them distances computed here.
 */

/** Where each CV's gradient is, passed by value at each launch (the cell kernel's order can change between evaluations). */
typedef struct {
    long long* gradient[NUM_CVS];
    const int* groupAtoms[NUM_CVS];
    const int* entrySlot[NUM_CVS];
    int numSlots[NUM_CVS];
} ChainRuleTargets;

#ifndef NUM_DISTANCES
/**
 * The distance CVs of a CoordinationBiasForce (addDistance()), set by CudaCoordinationDistances:
 * NUM_DISTANCES rows of DISTANCE_CVS, each {CV index, component (-1: the length), periodic}; the
 * sorted indices of distance j's two particles are distanceAtoms[2j] and [2j+1] (the host updates
 * them when atoms are reordered). None for a CoordinationForce.
 */
#define NUM_DISTANCES 0
#define DISTANCE_CVS {{0}}
#endif

/**
 * A distance CV (one row of DISTANCE_CVS, its particles at sorted indices atom1 and atom2): the
 * length of r = r2 - r1, or one of its components, with the nearest image where periodic (the
 * shortest: in a triclinic box the 26 neighbours of the reduced image are searched, as for the
 * pairs of a coordination number), in double from the positions;
 * *dvaluedr its derivative with respect to r2 (-*dvaluedr that with respect to r1). The host's
 * copy is CoordinationDistance::compute().
 */
inline DEVICE double computeDistanceCV(const int* distance, int atom1, int atom2, const real4* RESTRICT posq, real4 periodicBoxSize,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, double3* dvaluedr) {
    const real4 p1 = posq[atom1], p2 = posq[atom2];
    double3 r = make_double3((double) p2.x-(double) p1.x, (double) p2.y-(double) p1.y, (double) p2.z-(double) p1.z);
    if (distance[2]) {
        const double sz = floor(r.z*(double) invPeriodicBoxSize.z+0.5);
        r.x -= sz*periodicBoxVecZ.x;
        r.y -= sz*periodicBoxVecZ.y;
        r.z -= sz*periodicBoxVecZ.z;
        const double sy = floor(r.y*(double) invPeriodicBoxSize.y+0.5);
        r.x -= sy*periodicBoxVecY.x;
        r.y -= sy*periodicBoxVecY.y;
        const double sx = floor(r.x*(double) invPeriodicBoxSize.x+0.5);
        r.x -= sx*periodicBoxVecX.x;
        if (periodicBoxVecY.x != 0 || periodicBoxVecZ.x != 0 || periodicBoxVecZ.y != 0) {
            const double3 reduced = r;
            double r2 = r.x*r.x+r.y*r.y+r.z*r.z;
            for (int a = -1; a <= 1; a++)
                for (int b = -1; b <= 1; b++)
                    for (int c = -1; c <= 1; c++) {
                        const double3 image = make_double3(reduced.x+a*(double) periodicBoxVecX.x+b*(double) periodicBoxVecY.x+c*(double) periodicBoxVecZ.x,
                                reduced.y+b*(double) periodicBoxVecY.y+c*(double) periodicBoxVecZ.y, reduced.z+c*(double) periodicBoxVecZ.z);
                        const double image2 = image.x*image.x+image.y*image.y+image.z*image.z;
                        if (image2 < r2) {
                            r2 = image2;
                            r = image;
                        }
                    }
        }
    }
    if (distance[1] < 0) {
        const double length = sqrt(r.x*r.x+r.y*r.y+r.z*r.z);
        *dvaluedr = make_double3(r.x/length, r.y/length, r.z/length);
        return length;
    }
    *dvaluedr = make_double3(distance[1] == 0, distance[1] == 1, distance[1] == 2);
    return (distance[1] == 0 ? r.x : distance[1] == 1 ? r.y : r.z);
}

/** Add -dEdcv times a distance's gradient to the forces of its two particles (sorted indices atom1, atom2; fixed point). */
inline DEVICE void addDistanceForces(int atom1, int atom2, double dEdcv, double3 dvaluedr, unsigned long long* RESTRICT forceBuffer) {
    const double fx = -dEdcv*dvaluedr.x, fy = -dEdcv*dvaluedr.y, fz = -dEdcv*dvaluedr.z;
    atomicAdd(&forceBuffer[atom2], (unsigned long long) realToFixedPoint((real) fx));
    atomicAdd(&forceBuffer[atom2+PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint((real) fy));
    atomicAdd(&forceBuffer[atom2+2*PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint((real) fz));
    atomicAdd(&forceBuffer[atom1], (unsigned long long) realToFixedPoint((real) -fx));
    atomicAdd(&forceBuffer[atom1+PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint((real) -fy));
    atomicAdd(&forceBuffer[atom1+2*PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint((real) -fz));
}

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
 * chained launch other blocks of the same launch added them) and the distance CVs (DISTANCE_CVS,
 * computed here from posq, by thread 0 of each block: no launch of their own): thread 0 of each
 * block that calls it evaluates them into derivatives[] (shared, valid in every thread on return); the
 * leader (one block of the launch) stores the CVs and dE/dcv_k in state, adds E to the energy buffer (EXPRESSION_ENERGY), adds the
 * distances' forces (GRADIENT), adds the CVs to their running statistics (CV_STATISTICS: the first
 * evaluation of an MD step, which the host tells from the Context's step count) and clears
 * nextCvSums, the sums of the next evaluation (the one before read them).
 */
inline DEVICE void evaluateChainRule(bool leader, const double* RESTRICT cvSums, double* RESTRICT nextCvSums, int flags, double* RESTRICT state,
        mixed* RESTRICT energyBuffer, const double* RESTRICT globals, int* RESTRICT alarm, double* derivatives,
        const real4* RESTRICT posq, real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, const int* RESTRICT distanceAtoms, unsigned long long* RESTRICT forceBuffer ENERGY_TABLE_PARAMETERS) {
    if (threadIdx.x == 0) {
        double cv[NUM_CVS], dEdcv[NUM_CVS], E;
        for (int k = 0; k < NUM_CVS; k++)
            cv[k] = __ldcg(&cvSums[k]);
#if NUM_DISTANCES > 0
        const int distances[NUM_DISTANCES][3] = DISTANCE_CVS;
        double3 dvaluedr[NUM_DISTANCES];
        for (int j = 0; j < NUM_DISTANCES; j++)
            cv[distances[j][0]] = computeDistanceCV(distances[j], distanceAtoms[2*j], distanceAtoms[2*j+1], posq, periodicBoxSize,
                    invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, &dvaluedr[j]);
#endif
        evaluateEnergy(cv, &E, dEdcv, globals ENERGY_TABLE_ARGUMENTS);
        recordNonFinite(state+2*NUM_CVS, NUM_CVS, cv, &E, dEdcv, alarm);
        for (int k = 0; k < NUM_CVS; k++)
            derivatives[k] = dEdcv[k];
        if (leader) {
            for (int k = 0; k < NUM_CVS; k++) {
                state[k] = cv[k];
                state[NUM_CVS+k] = dEdcv[k];
                nextCvSums[k] = 0;
            }
            if (flags & FLAG_EXPRESSION_ENERGY)
                atomicAdd(&energyBuffer[0], (mixed) E);
#if NUM_DISTANCES > 0
            if (flags & FLAG_GRADIENT)
                for (int j = 0; j < NUM_DISTANCES; j++)
                    addDistanceForces(distanceAtoms[2*j], distanceAtoms[2*j+1], dEdcv[distances[j][0]], dvaluedr[j], forceBuffer);
#endif
            if (flags & FLAG_CV_STATISTICS)
                updateCVStatistics(cv, state+5*NUM_CVS+2);
        }
    }
    __syncthreads();
}

/**
 * The chain rule over every CV (evaluateChainRule()); with GRADIENT, -dE/dcv_k times CV k's
 * gradient goes to the forces, except that of CV `skip` (-1: none), whose launch adds its own.
 * The gradients' entries are spread over the grid's threads as one list (scatterGradient()'s
 * offset): a grid of as many threads as entries takes one entry a thread in all.
 */
inline DEVICE void scatterChainRule(const ChainRuleTargets& targets, int flags, const double* derivatives, int skip,
        unsigned long long* RESTRICT forceBuffer) {
    if (flags & FLAG_GRADIENT) {
        int offset = 0;
        for (int k = 0; k < NUM_CVS; k++)
            if (k != skip) {
                scatterGradient(targets.gradient[k], targets.groupAtoms[k], targets.entrySlot[k], targets.numSlots[k],
                        chainRuleScale(derivatives[k]), forceBuffer, offset);
                offset += targets.numSlots[k];
            }
    }
}

/** The chain rule of every CV in a launch of its own, after the CVs' pair kernels. */
KERNEL void applyChainRule(ChainRuleTargets targets, const double* RESTRICT cvSums, double* RESTRICT nextCvSums, int flags,
        double* RESTRICT state, mixed* RESTRICT energyBuffer, unsigned long long* RESTRICT forceBuffer,
        const double* RESTRICT globals, int* RESTRICT alarm, const real4* RESTRICT posq, real4 periodicBoxSize,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        const int* RESTRICT distanceAtoms ENERGY_TABLE_PARAMETERS) {
    __shared__ double derivatives[NUM_CVS];
    DEPENDENT_KERNEL_START
    evaluateChainRule(blockIdx.x == 0, cvSums, nextCvSums, flags, state, energyBuffer, globals, alarm, derivatives, posq, periodicBoxSize,
            invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, distanceAtoms, forceBuffer ENERGY_TABLE_ARGUMENTS);
    scatterChainRule(targets, flags, derivatives, -1, forceBuffer);
}
