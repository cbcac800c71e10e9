/**
 * The pair passes of per-atom coordination numbers (kernels/particles.cu says what they compute)
 * over the neighbour lists of particles (kernels/neighbors.cu), where the CV has them: a finite
 * dmax in a periodic box. Every list particle of group A has every neighbour j with t(r_aj) != 0
 * in its own list (one group: all particles of the group; two groups: every particle of both
 * groups has a list of the other group's), so that each lane group sums its own particle's pairs
 * and writes without atomics per pair. An evaluation launches
 *   checkNeighborList             the current positions in list order, and whether to rebuild
 *   the binning                   (binning.cu) only where the lists are rebuilt
 *   computeParticleListNumbers    c_a = sum_j t(r_aj) for each list particle of group A; where
 *                                 *rebuildStamp == stamp it builds the lists first, as
 *                                 computeCoordinationList does. For an elementwise F (Sum, Mean,
 *                                 MoreThan, LessThan, Between: particleFunctionIsElementwise())
 *                                 it also evaluates F: each particle's term f(c_a), summed as
 *                                 every pair kernel sums its CV (finishBlock(), kernels/sums.cu),
 *                                 and its weight f'(c_a) stored by list index in listWeight[]
 *                                 (0 for group B's particles). Otherwise it stores c[slot] (a
 *                                 store: no clearing needed) for
 *   evaluateParticleFunction      F(c) and w[slot] = dF/dc_slot (kernels/particlefunction.cu)
 *   computeParticleListGradient   each list particle's own gradient, added as the flags ask
 *                                 (addGradient(), kernels/sums.cu): one group
 *                                 sum_j (w_i + w_j) dt(r_ij)/dx_i; two groups, for a particle a of
 *                                 group A w_a sum_b dt/dx_a, for a particle b of group B
 *                                 sum_a w_a dt/dx_b
 * The weight of list particle j is listWeight[j] where the first pass evaluated F, else
 * w[listSlot[j]] where its slot is group A's (slot < numA), else 0. The elementwise functions so
 * take three launches less one (no evaluateParticleFunction) and one load less a pair in the second.
 */

/**
 * The first pass: the lane's particle's coordination number (particles of group A only), stored
 * into c[slot], or (listWeight not NULL) evaluated: its term of F returned and its weight stored
 * into listWeight[k].
 */
struct ParticleListNumbers {
    PairParams params;
    real distancePower;
    int numA;
    double* c;
    ParticleFunctionParams function;
    real* listWeight;
    real4 pi;
    real sum;
    int k;

    inline DEVICE bool begin(real4 p, int slot, int listIndex) {
        pi = p;
        sum = 0;
        k = listIndex;
        if (slot >= numA && listWeight != NULL)
            listWeight[k] = 0;
        return (slot < numA);
    }

    inline DEVICE void add(bool valid, int j, real4 pj) {
        if (!valid)
            return;
        real r2, dtdr;
        shiftedDelta(pi, pj, &r2);
        sum += particleTerm(r2, params, distancePower, &dtdr);
    }

    inline DEVICE void operator()(bool valid, int j, int code, real4 pj) {
        add(valid, j, pj);
    }

    inline DEVICE mixed end(int slot, int t, unsigned int mask) {
        const real total = listLaneSum(sum, mask);
        if (t != 0)
            return 0;
        if (listWeight == NULL) {
            c[slot] = total;
            return 0;
        }
        double weight;
        const double term = particleFunctionTerm(total, function, &weight);
        listWeight[k] = (real) weight;
        return (mixed) term;
    }
};

/**
 * The second pass: the gradient of F with respect to the lane's particle, sum_j (w_i + w_j) dt(r_ij)/dx_i,
 * times scale (dE/dF where the chain rule runs in the launch, else 1).
 */
struct ParticleListGradient {
    PairParams params;
    real distancePower;
    real scale;
    int numA, flags, numSlots;
    const double* w;
    const real* listWeight;
    const int* listSlot;
    const int* groupAtoms;
    unsigned long long* forceBuffer;
    long long* gradient;
    real4 pi;
    real wi;
    real3 gi;

    /** The weight of list particle j: listWeight[j] where the first pass stored it, else group A's w by slot, 0 for group B's. */
    inline DEVICE real weight(int j) const {
        if (listWeight != NULL)
            return listWeight[j];
        const int slot = listSlot[j];
        return (slot < numA ? (real) w[slot] : 0);
    }

    inline DEVICE bool begin(real4 p, int slot, int k) {
        pi = p;
        wi = weight(k);
        gi = make_real3(0, 0, 0);
        return true;
    }

    inline DEVICE void add(bool valid, int j, real4 pj) {
        if (!valid)
            return;
        real r2, dtdr;
        const real3 delta = shiftedDelta(pi, pj, &r2);
        particleTerm(r2, params, distancePower, &dtdr);
        // The gradient of t with respect to the lane's particle is -dtdr*delta (delta points to the neighbour).
        const real g = (wi+weight(j))*dtdr;
        gi.x -= g*delta.x;
        gi.y -= g*delta.y;
        gi.z -= g*delta.z;
    }

    inline DEVICE void operator()(bool valid, int j, int code, real4 pj) {
        add(valid, j, pj);
    }

    inline DEVICE mixed end(int slot, int t, unsigned int mask) {
        const real3 g = make_real3(scale*listLaneSum(gi.x, mask), scale*listLaneSum(gi.y, mask), scale*listLaneSum(gi.z, mask));
        if (t == 0 && isNonzero(g))
            addGradient(g, slot, groupAtoms[slot], flags, forceBuffer, gradient, numSlots);
        return 0;
    }
};

/** The 27 periodic shifts of the image codes, into shared memory (every thread of the block calls it). */
inline DEVICE void loadImageShifts(real4* shifts, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ) {
    if (threadIdx.x < 27)
        shifts[threadIdx.x] = imageShift(threadIdx.x, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    __syncthreads();
}

/**
 * The first pass: for each list particle of group A, over the lists, which it first builds where
 * *rebuildStamp == stamp (the arguments up to the box as computeCoordinationList's), c[slot]; or,
 * where listWeight is not NULL, its term of the elementwise F, summed as the flags say
 * (finishBlock(), kernels/sums.cu, with the arguments from energyBuffer on), and its weight
 * into listWeight[] (0 for group B's particles). Bounded to the registers that let
 * PARTICLE_LIST_MIN_BLOCKS blocks run at once (CudaCoordinationProgram::ListBlockSize says why).
 */
KERNEL void __launch_bounds__(LIST_BLOCK_SIZE, PARTICLE_LIST_MIN_BLOCKS) computeParticleListNumbers(const int* RESTRICT rebuildStamp,
        int stamp, const real4* RESTRICT posq, const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot,
        const int* RESTRICT sortedAtom, const int* RESTRICT cellStart, CellGrid grid, real4* RESTRICT listPos, real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot,
        unsigned int* RESTRICT entries, int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int numParticles, int capacity,
        real listCutoff2, const int* RESTRICT groupAtoms, PairParams params, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, real distancePower, int numA, double* RESTRICT c, ParticleFunctionParams function,
        real* RESTRICT listWeight, int flags, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial, unsigned int* RESTRICT counter,
        double* RESTRICT cvValue, double* RESTRICT record, int* RESTRICT alarm) {
    __shared__ real4 shifts[27];
    DEPENDENT_KERNEL_START
    loadImageShifts(shifts, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    const bool rebuild = (*rebuildStamp == stamp), fallback = (*rebuildStamp == (stamp | LIST_FALLBACK));
    ParticleListNumbers sums = {params, distancePower, numA, c, function, listWeight};
    const mixed cvSum = computeListParticles(rebuild, fallback, params.imageSearch2, posq, sortedPos, sortedSlot, sortedAtom, cellStart, grid, listPos, refPos,
            listShift, listSlot, entries, listCount, maxCount, numParticles, capacity, listCutoff2, shifts, groupAtoms, sums);
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record, alarm);
}

/**
 * The second pass, for every kernel that runs it: each list particle's gradient of F over the lists
 * that the first pass of this evaluation used (or built), with the weights listWeight[] of the
 * first pass where not NULL, else w[] of evaluateParticleFunction, times scale, added as the flags
 * ask, from all particles where the first pass took them (*rebuildStamp == stamp | LIST_FALLBACK,
 * neighbors.cu). shifts: the image shifts in shared memory (loadImageShifts()).
 */
inline DEVICE void particleListGradientPass(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const int* RESTRICT sortedAtom,
        const int* RESTRICT cellStart, const CellGrid& grid, const real4* RESTRICT listPos, const int* RESTRICT listSlot,
        const unsigned int* RESTRICT entries, const int* RESTRICT listCount, int numParticles, int capacity,
        const int* RESTRICT groupAtoms, const PairParams& params, const real4* shifts, real distancePower, int numA,
        const double* RESTRICT w, const real* RESTRICT listWeight, real scale, int flags, unsigned long long* RESTRICT forceBuffer,
        long long* RESTRICT gradient, int numSlots) {
    ParticleListGradient sums = {params, distancePower, scale, numA, flags, numSlots, w, listWeight, listSlot, groupAtoms,
            forceBuffer, gradient};
    // No rebuild: the arrays that only a build writes are not touched (NULL). All pairs where the first pass took them.
    computeListParticles(false, *rebuildStamp == (stamp | LIST_FALLBACK), params.imageSearch2, posq, NULL, NULL, sortedAtom, cellStart, grid, (real4*) listPos, NULL, NULL, (int*) listSlot,
            (unsigned int*) entries, (int*) listCount, NULL, numParticles, capacity, 0, shifts, groupAtoms, sums);
}

/** The second pass (particleListGradientPass()), where the chain rule runs in a launch of its own or F is the energy. */
KERNEL void computeParticleListGradient(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const int* RESTRICT sortedAtom, const int* RESTRICT cellStart,
        CellGrid grid, const real4* RESTRICT listPos, const int* RESTRICT listSlot, const unsigned int* RESTRICT entries,
        const int* RESTRICT listCount, int numParticles, int capacity, const int* RESTRICT groupAtoms, PairParams params,
        real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, real distancePower, int numA, const double* RESTRICT w,
        const real* RESTRICT listWeight, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient,
        int numSlots) {
    __shared__ real4 shifts[27];
    DEPENDENT_KERNEL_START
    loadImageShifts(shifts, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    particleListGradientPass(rebuildStamp, stamp, posq, sortedAtom, cellStart, grid, listPos, listSlot, entries, listCount, numParticles, capacity,
            groupAtoms, params, shifts, distancePower, numA, w, listWeight, 1, flags, forceBuffer, gradient, numSlots);
}
