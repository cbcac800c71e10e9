/**
 * The pair passes of per-atom coordination numbers (kernels/particles.cu says what they compute)
 * over the lists of homes of the cell kernel (kernels/cellcoordination.cu, visitCells()): one
 * group, more than 50,000 particles by default, and an elementwise F (Sum, Mean, MoreThan,
 * LessThan, Between: particleFunctionIsElementwise()). Each unordered pair is visited once, as the
 * plain CV visits it, and adds to both particles, by sorted index (the order of the last build):
 *   checkNeighborList, the binning     as for the plain CV (the binning returns at once unless
 *                                      the lists are rebuilt)
 *   computeParticleHomeNumbers         c[k] += t(r_kj) for both particles of each pair (double
 *                                      atomics); where *rebuildStamp == stamp it builds the
 *                                      lists first, as computeCoordinationCells does
 *   evaluateParticleTerms              for every k: the term f(c_k), summed as every pair kernel
 *                                      sums its CV (finishBlock(), kernels/sums.cu), and its
 *                                      weight f'(c_k) into the w of listPos[k] (where the cell of
 *                                      the last build was, which listShift[k].w keeps too and
 *                                      checkNeighborList puts back at the next evaluation); clears
 *                                      c[] and the counter of the gradient pass's work items
 *   computeParticleHomeGradient        for each pair, (w_i + w_j) dt(r_ij)/dx to both particles,
 *                                      added as the flags ask (addGradient(): the forces through
 *                                      sortedAtom, or the gradient by sorted index, which the
 *                                      chain rule maps through sortedSlot); always from the lists
 *                                      that the first pass used or built, each particle's weight
 *                                      read with its position; of an item that the first pass read
 *                                      from its list, only the entries that the first pass found
 *                                      within dmax of one of their home's L particles (about a
 *                                      sixth fewer: the lists hold those within dmax + skin)
 * The lanes hold the warp's L particles as the plain CV's do (spreadLParticles(): two a lane in
 * single and mixed precision, each half of the warp meeting one half of a batch, one in double)
 * and meet the S particles of their part of a batch in turn, each S particle's running sum (or
 * gradient) rotating through the part with it (as the plain CV rotates the gradient), so that a
 * lane adds once a batch for its S particle and once a home for its L particles (gatherLTotal()).
 */

/**
 * The term t(r) of a pair and *dtdr (see particleTerm()), 0 from the cutoff on (where it is 0
 * anyway), so that the positions far beyond it that stand for no particle (beginCellLane(),
 * flushCellBatch()) give 0 whatever the distance power does with them.
 */
inline DEVICE real homePairTerm(real4 pi, real4 pj, const PairParams& params, real distancePower, real* dtdr, real3* delta,
        bool* within) {
    real r2;
    *delta = shiftedDelta(pi, pj, &r2);
    const real t = particleTerm(r2, params, distancePower, dtdr);
    *within = (r2 < params.dmax2);
    *dtdr = (*within ? *dtdr : 0);
    return (*within ? t : 0);
}

/**
 * The lane's L particle of sorted index `index` for a visitor of visitCells(): its position (a lane
 * without one far beyond the cutoff of every S particle) and its key for PAIR_WANTED (the index).
 */
inline DEVICE void beginHomeLane(int index, bool valid, real4 position, real4* pos, int* key) {
    *pos = (valid ? position : make_real4((real) -1e15, (real) -1e15, (real) -1e15, 0));
    *key = (valid ? index : -1);
}

/**
 * The pairs of a full batch (the visitor's batch()): the lane's L particles (spreadLParticles()'
 * layout, held by the visitor; their keys lKey) against the S particles of the lane's part of
 * the batch, one a step: op.pair(i, pj, wanted) for L particle i and S particle pj, and
 * op.rotate() after each step (the running sums of the S particles move on one lane). KEYED: a
 * pair counts where PAIR_WANTED admits it (a diagonal batch); otherwise every pair does, a
 * missing particle giving 0 by its distance (as halfBatch() of the plain CV).
 */
template <bool KEYED, class Op>
inline DEVICE void homeBatchPairs(const real4* sPos, const int* sKey, bool diagonal, const int* lKey, Op& op) {
    const int first = batchPlace(threadIdx.x%32);
#pragma unroll (KEYED ? 1 : 4)
    for (int step = 0; step < CELL_WIDTH; step++) {
        const int place = first+step;
        const real4 pj = sPos[place];
#pragma unroll
        for (int i = 0; i < CELL_L_PER_LANE; i++)
            op.pair(i, pj, !KEYED || PAIR_WANTED(place, lKey[i]));
        op.rotate();
    }
}

/**
 * The first pass (visitCells()' visitor): c[k] += t(r_kj) for both particles of each pair; and
 * whether each S particle is within dmax of one of the L particles, for the lists of entries within
 * dmax that it writes for the gradient pass (sParticleNear()).
 */
struct ParticleHomeNumbers {
    PairParams params;
    real distancePower;
    double* c;
    real4 pos[CELL_L_PER_LANE];
    int key[CELL_L_PER_LANE];
    real own[CELL_L_PER_LANE];
    real sj;
    int near;

    inline DEVICE void beginL(int index, int slot, bool valid, real4 position) {
        real4 p;
        int k;
        beginHomeLane(index, valid, position, &p, &k);
        spreadLParticles(p, k, pos, key);
        for (int i = 0; i < CELL_L_PER_LANE; i++)
            own[i] = 0;
    }

    inline DEVICE void batch(real4* sPos, const int* sKey, const int* sIndex, int count, bool diagonal) {
        const int lane = threadIdx.x%32;
        sj = 0;
        near = 0;
        if (isKeyedBatch(diagonal))
            homeBatchPairs<true>(sPos, sKey, diagonal, key, *this);
        else
            homeBatchPairs<false>(sPos, sKey, diagonal, key, *this);
        if (lane < count && sj != 0)
            atomicAdd(&c[sIndex[lane]], (double) sj);
    }

    /** One pair (homeBatchPairs()): t(r) to L particle i and to the S particle's running sum. */
    inline DEVICE void pair(int i, real4 pj, bool wanted) {
        real dtdr;
        real3 delta;
        bool within;
        const real t = homePairTerm(pos[i], pj, params, distancePower, &dtdr, &delta, &within);
        own[i] += (wanted ? t : 0);
        sj += (wanted ? t : 0);
        near |= within;
    }

    inline DEVICE void rotate() {
        sj = __shfl_sync(0xffffffff, sj, threadIdx.x%32+1, CELL_WIDTH);
        near = __shfl_sync(0xffffffff, near, threadIdx.x%32+1, CELL_WIDTH);
    }

    inline DEVICE void endL(int index, bool valid) {
        const real total = gatherLTotal(own);
        if (valid && total != 0)
            atomicAdd(&c[index], (double) total);
    }
};

/** Whether the first pass found the lane's S particle of its last batch within dmax of an L particle (visitHomeList()). */
inline DEVICE bool sParticleNear(const ParticleHomeNumbers& visitor) {
    return visitor.near != 0;
}

/**
 * The second pass (visitCells()' visitor): (w_i + w_j) dt(r_ij)/dx to both particles of each pair,
 * each particle's weight in the w of its position (evaluateParticleTerms()).
 */
struct ParticleHomeGradient {
    PairParams params;
    real distancePower;
    const int* sortedAtom;
    int flags, numSlots;
    unsigned long long* forceBuffer;
    long long* gradient;
    real4 pos[CELL_L_PER_LANE];
    int key[CELL_L_PER_LANE];
    real wi[CELL_L_PER_LANE];
    real3 gi[CELL_L_PER_LANE];
    real3 gj;

    inline DEVICE void beginL(int index, int slot, bool valid, real4 position) {
        real4 p;
        int k;
        beginHomeLane(index, valid, position, &p, &k);
        spreadLParticles(p, k, pos, key);
        spreadLValue(valid ? position.w : 0, wi);
        for (int i = 0; i < CELL_L_PER_LANE; i++)
            gi[i] = make_real3(0, 0, 0);
    }

    inline DEVICE void batch(real4* sPos, const int* sKey, const int* sIndex, int count, bool diagonal) {
        const int lane = threadIdx.x%32;
        // Each S particle's weight is the w of its places (flushCellBatch() pads with 0).
        gj = make_real3(0, 0, 0);
        if (isKeyedBatch(diagonal))
            homeBatchPairs<true>(sPos, sKey, diagonal, key, *this);
        else
            homeBatchPairs<false>(sPos, sKey, diagonal, key, *this);
        if (lane < count && isNonzero(gj))
            addGradient(gj, sIndex[lane], sortedAtom[sIndex[lane]], flags, forceBuffer, gradient, numSlots);
    }

    /** One pair (homeBatchPairs()): (w_i + w_j) dt/dx to L particle i and to the S particle's running gradient. */
    inline DEVICE void pair(int i, real4 pj, bool wanted) {
        real dtdr;
        real3 delta;
        bool within;
        homePairTerm(pos[i], pj, params, distancePower, &dtdr, &delta, &within);
        // delta points from the L particle to the S one: dtdr*delta is the gradient of t with respect to the S particle.
        addPairGradient(wanted ? (wi[i]+pj.w)*dtdr : 0, delta, &gi[i], &gj);
    }

    inline DEVICE void rotate() {
        rotateGradient<CELL_WIDTH>(&gj);
    }

    inline DEVICE void endL(int index, bool valid) {
        const real3 total = gatherLTotal(gi);
        if (valid && isNonzero(total))
            addGradient(total, index, sortedAtom[index], flags, forceBuffer, gradient, numSlots);
    }
};

/**
 * The first pass: c[k] for every particle k in sorted order (c[] is zero before; evaluateParticleTerms() clears it),
 * and, of each item read from its home list, the list of the entries within dmax (near, nearCount; see HomeLists).
 */
KERNEL CELL_LAUNCH_BOUNDS void computeParticleHomeNumbers(CellKernelArguments args, real distancePower, double* RESTRICT c,
        unsigned int* RESTRICT near, int* RESTRICT nearCount) {
    DEPENDENT_KERNEL_START
    ParticleHomeNumbers visitor = {args.params, distancePower, c};
    visitCells(args, visitor, false, near, nearCount);
}

/**
 * The terms and weights of an elementwise F: for each of the numSlots particles in sorted order,
 * f(c[k]) summed as the flags say (finishBlock(), with the arguments from energyBuffer on) and
 * f'(c[k]) into listPos[k].w (the gradient pass reads it with the position); c[k] cleared for the
 * next evaluation, and the gradient pass's counter of work items too. Blocks of TILE threads.
 */
KERNEL void evaluateParticleTerms(double* RESTRICT c, real4* RESTRICT listPos, ParticleFunctionParams function, int numSlots,
        unsigned int* RESTRICT gradientCounter, int flags, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial,
        unsigned int* RESTRICT counter, double* RESTRICT cvValue, double* RESTRICT record, int* RESTRICT alarm) {
    DEPENDENT_KERNEL_START
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *gradientCounter = 0;
    mixed sum = 0;
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x) {
        double w;
        sum += (mixed) particleFunctionTerm(c[k], function, &w);
        listPos[k].w = (real) w;
        c[k] = 0;
    }
    finishBlock(sum, flags, energyBuffer, cvPartial, counter, cvValue, record, alarm);
}

/**
 * The second pass: the gradient of F over the lists that the first pass used or built (args.workCounter:
 * the counter evaluateParticleTerms() cleared), with the weights in the w of args.listPos: of an item
 * that the first pass read from its home list, only the entries it found within dmax (near, nearCount).
 */
KERNEL CELL_LAUNCH_BOUNDS void computeParticleHomeGradient(CellKernelArguments args, real distancePower,
        unsigned int* RESTRICT near, int* RESTRICT nearCount) {
    DEPENDENT_KERNEL_START
    ParticleHomeGradient visitor = {args.params, distancePower, args.sortedAtom, args.flags, args.numSlots, args.forceBuffer,
            args.gradient};
    visitCells(args, visitor, true, near, nearCount);
}
