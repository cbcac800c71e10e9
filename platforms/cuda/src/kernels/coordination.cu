/**
 * The collective variable and its gradient. Runtime flags (kernels/launch.cu) select what a launch does:
 *   DIRECT_FORCES    add -ds/dx to the force buffer (the energy is the CV itself)
 *   GRADIENT         add ds/dx to the fixed-point gradient buffer, for the chain rule
 *                    (kernels/energy.cu) or applyGradient()
 *   BLOCK_ENERGY     add each block's sum of s to the energy buffer (the energy is the CV)
 *   REDUCE           the last block to finish sums the blocks' values into *cvValue
 *   ACCUMULATE       each block adds its sum of s to one double, the CV's sum that
 *                    applyChainRule() reads, without a last block's reduction in between
 */

/** Sum a value over the threads of a block (at most TILE); the result is valid in thread 0. */
inline DEVICE mixed blockSum(mixed value, mixed* scratch) {
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffff, value, offset);
    if (threadIdx.x%32 == 0)
        scratch[threadIdx.x/32] = value;
    __syncthreads();
    value = 0;
    if (threadIdx.x < 32) {
        value = (threadIdx.x < blockDim.x/32 ? scratch[threadIdx.x] : 0);
        for (int offset = 16; offset > 0; offset /= 2)
            value += __shfl_down_sync(0xffffffff, value, offset);
    }
    __syncthreads();
    return value;
}

/** Sum a vector over the 32 lanes of a warp; every lane gets the result. */
inline DEVICE real3 warpSum(real3 v) {
    for (int mask = 16; mask > 0; mask /= 2) {
        v.x += __shfl_xor_sync(0xffffffff, v.x, mask);
        v.y += __shfl_xor_sync(0xffffffff, v.y, mask);
        v.z += __shfl_xor_sync(0xffffffff, v.z, mask);
    }
    return v;
}

/** Add the gradient g of the CV with respect to one slot's particle, as the flags ask. */
inline DEVICE void addGradient(real3 g, int slot, int atom, int flags, unsigned long long* RESTRICT forceBuffer,
        long long* RESTRICT gradient, int numSlots) {
    if (flags & FLAG_DIRECT_FORCES) {
        atomicAdd(&forceBuffer[atom], (unsigned long long) realToFixedPoint(-g.x));
        atomicAdd(&forceBuffer[atom+PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(-g.y));
        atomicAdd(&forceBuffer[atom+2*PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(-g.z));
    }
    else {
        atomicAdd((unsigned long long*) &gradient[slot], (unsigned long long) realToFixedPoint(g.x));
        atomicAdd((unsigned long long*) &gradient[slot+numSlots], (unsigned long long) realToFixedPoint(g.y));
        atomicAdd((unsigned long long*) &gradient[slot+2*numSlots], (unsigned long long) realToFixedPoint(g.z));
    }
}

/**
 * Finish a launch: add the block's sum to the energy (BLOCK_ENERGY, recording a CV that is not
 * finite in record[], kernels/energy.cu); then either add it to *cvPartial (ACCUMULATE), or let
 * the last block reduce the blocks' sums in cvPartial into *cvValue (REDUCE).
 */
inline DEVICE void finishBlock(mixed cvSum, int flags, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial,
        unsigned int* RESTRICT counter, double* RESTRICT cvValue, double* RESTRICT record) {
    __shared__ mixed scratch[TILE/32];
    if (!(flags & (FLAG_BLOCK_ENERGY | FLAG_REDUCE | FLAG_ACCUMULATE)))
        return;
    mixed total = blockSum(cvSum, scratch);
    if (threadIdx.x == 0 && (flags & FLAG_BLOCK_ENERGY)) {
        double cv = total, energy = total, derivative = 1;
        recordNonFinite(record, 1, &cv, &energy, &derivative);
        atomicAdd(&energyBuffer[blockIdx.x], (mixed) energy);
    }
    if (threadIdx.x == 0 && (flags & FLAG_ACCUMULATE))
        atomicAdd(cvPartial, (double) total);
    if (!(flags & FLAG_REDUCE))
        return;
    if (threadIdx.x == 0)
        cvPartial[blockIdx.x] = total;
    if (!isLastBlockToFinish(counter))
        return;
    mixed sum = 0;
    for (int i = threadIdx.x; i < gridDim.x; i += blockDim.x)
        sum += __ldcg(&cvPartial[i]);
    sum = blockSum(sum, scratch);
    if (threadIdx.x == 0)
        *cvValue = sum;
}

#define ROTATION_THRESHOLD 12
// The L particles a thread of the tile kernel holds, and the threads of its blocks.
#define TILE_THREADS (TILE/L_PER_THREAD)

#ifdef ONE_GROUP
// Keys order the particles of a diagonal block: each unordered pair once.
#define PAIR_WANTED(k, lKey) (!diagonal || sKey[k] > (lKey))
#elif defined(GROUPS_OVERLAP)
// Keys are the original particle indices: no pair of a particle with itself.
#define PAIR_WANTED(k, lKey) (sKey[k] != (lKey))
#else
#define PAIR_WANTED(k, lKey) true
#endif

/**
 * One pair: s at the distance from pi to pj, with *g (ds/dr)/r but for gradientScale() and *delta
 * their displacement, so that gradientScale()*g*delta is the gradient of s with respect to pj.
 * MIN_IMAGE: the displacement is reduced to the nearest image; otherwise pj already carries its
 * periodic shift.
 */
template <bool MIN_IMAGE>
inline DEVICE real pairTerm(real4 pi, real4 pj, const PairParams& params, const PeriodicBox& box, real* g, real3* delta) {
    real r2;
    *delta = (MIN_IMAGE ? boxDelta(pi, pj, &r2, box) : shiftedDelta(pi, pj, &r2));
    return switchingFunction(r2, params, g);
}

/** The vector v times a. */
inline DEVICE real3 scaled(real a, real3 v) {
    return make_real3(a*v.x, a*v.y, a*v.z);
}

/** Add g*delta to the gradient of the S particle and subtract it from that of the L particle. */
inline DEVICE void addPairGradient(real g, real3 delta, real3* gi, real3* gj) {
    gj->x += g*delta.x;
    gj->y += g*delta.y;
    gj->z += g*delta.z;
    gi->x -= g*delta.x;
    gi->y -= g*delta.y;
    gi->z -= g*delta.z;
}

/** Whether a full batch must test keys: a pair may be unwanted (a diagonal batch, or groups that share particles). */
inline DEVICE bool isKeyedBatch(bool diagonal) {
#ifdef GROUPS_OVERLAP
    return true;
#else
    return diagonal;
#endif
}

/**
 * Hand the running gradient of an S particle to the next lane down within groups of WIDTH lanes
 * (lane l gets that of lane l+1, modulo WIDTH).
 */
template <int WIDTH>
inline DEVICE void rotateGradient(real3* gj) {
    const int lane = threadIdx.x%32;
    gj->x = __shfl_sync(0xffffffff, gj->x, lane+1, WIDTH);
    gj->y = __shfl_sync(0xffffffff, gj->y, lane+1, WIDTH);
    gj->z = __shfl_sync(0xffffffff, gj->z, lane+1, WIDTH);
}

/**
 * A full batch of WIDTH (32 or 16) S particles against the lane's L particles, without a branch
 * per pair (see pairBatch). With WIDTH 16, both halves of the warp meet the same 16 S particles
 * (the halves' sums of each S particle's gradient are added at the end). KEYED: only the pairs
 * PAIR_WANTED admits count (a loop, not unrolled: unrolled, its registers would cost the cell
 * kernel a quarter of its warps); otherwise every pair does. An L particle past the end of L
 * computes its pairs and drops them; ALL_VALID: the warp has none.
 */
template <int NL, int WIDTH, bool GRADIENT, bool MIN_IMAGE, bool KEYED, bool ALL_VALID>
inline DEVICE real fullBatch(LaneParticles<NL>& l, const real4* sPos, const int* sKey, bool diagonal,
        const PairParams& params, const PeriodicBox& box, real3* gj) {
    const int lane = threadIdx.x%32;
    real sum[NL], g;
    real3 delta;
#pragma unroll
    for (int i = 0; i < NL; i++)
        sum[i] = 0;
    if (GRADIENT) {
#pragma unroll (KEYED ? 1 : 8)
        for (int step = 0; step < WIDTH; step++) {
            const int k = lane%WIDTH+step;
            const real4 pj = sPos[k];
#pragma unroll
            for (int i = 0; i < NL; i++) {
                real s = pairTerm<MIN_IMAGE>(l.pos[i], pj, params, box, &g, &delta);
                const bool wanted = (KEYED ? l.valid[i] && PAIR_WANTED(k, l.key[i]) : ALL_VALID || l.valid[i]);
                sum[i] += (KEYED && !wanted ? 0 : s);
                addPairGradient(wanted ? g : 0, delta, &l.gradient[i], gj);
            }
            rotateGradient<WIDTH>(gj);
        }
        if (WIDTH < 32) {
            gj->x += __shfl_xor_sync(0xffffffff, gj->x, WIDTH);
            gj->y += __shfl_xor_sync(0xffffffff, gj->y, WIDTH);
            gj->z += __shfl_xor_sync(0xffffffff, gj->z, WIDTH);
        }
    }
    else {
#pragma unroll (KEYED ? 1 : 8)
        for (int k = 0; k < WIDTH; k++) {
            const real4 pj = sPos[k];
#pragma unroll
            for (int i = 0; i < NL; i++) {
                real s = pairTerm<MIN_IMAGE>(l.pos[i], pj, params, box, &g, &delta);
                sum[i] += (KEYED && !PAIR_WANTED(k, l.key[i]) ? 0 : s);
            }
        }
    }
    real batchSum = 0;
#pragma unroll
    for (int i = 0; i < NL; i++)
        batchSum += (l.valid[i] ? sum[i] : 0);
    return batchSum;
}

/**
 * One batch of up to WIDTH (32 or 16) S particles, in shared memory, against the lane's L
 * particles. A batch holds its positions and keys twice (sPos[k+WIDTH] == sPos[k]), so that a
 * rotation reads sPos[lane%WIDTH+step] without wrapping. Adds the gradients with respect to the
 * lane's L particles to l.gradient (without gradientScale(), which its user applies), returns the
 * lane's sum of s, and leaves in *gjSum, on lane k, the warp's total gradient with respect to S
 * particle k:
 * - a full batch rotates: lane l starts with the sum of particle l%WIDTH and, after each step,
 *   hands it to the next lane down (within groups of WIDTH lanes), so that every lane meets every
 *   particle and each sum returns home after WIDTH steps (3 shuffles a step, shared by the lane's
 *   NL pairs); it runs without a branch per pair (fullBatch), tests keys only where a pair may be
 *   unwanted (a diagonal batch, or groups that share particles), and validity only where allValid
 *   does not say every L particle exists;
 * - a short batch is broadcast: every lane meets particle k at step k and the warp reduces.
 */
template <int NL, int WIDTH, bool GRADIENT, bool MIN_IMAGE>
inline DEVICE real pairBatch(LaneParticles<NL>& l, bool allValid, const real4* sPos, const int* sKey, int count, bool diagonal,
        const PairParams& params, const PeriodicBox& box, real3* gjSum) {
    const int lane = threadIdx.x%32;
    real batchSum = 0, g;
    real3 gj = make_real3(0, 0, 0), delta;
    if (count == WIDTH) {
        if (isKeyedBatch(diagonal))
            batchSum = fullBatch<NL, WIDTH, GRADIENT, MIN_IMAGE, true, false>(l, sPos, sKey, diagonal, params, box, &gj);
        else if (allValid)
            batchSum = fullBatch<NL, WIDTH, GRADIENT, MIN_IMAGE, false, true>(l, sPos, sKey, diagonal, params, box, &gj);
        else
            batchSum = fullBatch<NL, WIDTH, GRADIENT, MIN_IMAGE, false, false>(l, sPos, sKey, diagonal, params, box, &gj);
    }
    else if (GRADIENT && count >= ROTATION_THRESHOLD) {
        int k = lane;
        for (int step = 0; step < 32; step++) {
            for (int i = 0; i < NL; i++)
                if (l.valid[i] && k < count && PAIR_WANTED(k, l.key[i])) {
                    batchSum += pairTerm<MIN_IMAGE>(l.pos[i], sPos[k], params, box, &g, &delta);
                    addPairGradient(g, delta, &l.gradient[i], &gj);
                }
            rotateGradient<32>(&gj);
            k = (k+1)&31;
        }
    }
    else {
        for (int k = 0; k < count; k++) {
            real3 d = make_real3(0, 0, 0);
            for (int i = 0; i < NL; i++)
                if (l.valid[i] && PAIR_WANTED(k, l.key[i])) {
                    batchSum += pairTerm<MIN_IMAGE>(l.pos[i], sPos[k], params, box, &g, &delta);
                    addPairGradient(g, delta, &l.gradient[i], &d);
                }
            if (GRADIENT) {
                d = warpSum(d);
                if (lane == k)
                    gj = d;
            }
        }
    }
    *gjSum = scaled(gradientScale(params), gj);
    return batchSum;
}

inline DEVICE bool isNonzero(real3 v) {
    return v.x != 0 || v.y != 0 || v.z != 0;
}

/**
 * One tile: the block holds the TILE particles of L chunk a in registers, L_PER_THREAD a thread
 * (lane l of warp w holds particles 32*(L_PER_THREAD*w+i)+l), and walks the particles of S chunk
 * b in shared memory in batches of S_BATCH (pairBatch: 32, or 16 where the host chose S chunks of
 * 16 to fill the GPU with more, shorter warps). The gradient with respect to each S particle
 * is summed over the warp before one shared-memory atomic per particle and warp; global gradient
 * atomics happen once per particle per tile.
 */
template <bool GRADIENT>
inline DEVICE mixed computeTile(int a, int b, bool diagonal, int sChunk, const real4* RESTRICT posq,
        const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS,
        const PairParams& params, const PeriodicBox& box, int flags, unsigned long long* RESTRICT forceBuffer,
        long long* RESTRICT gradient, int numSlots, real4* sPos, int* sKey, real3* sGradient) {
    const int lane = threadIdx.x%32, warp = threadIdx.x/32;
    const int sFirst = b*sChunk, sCount = min(sChunk, numS-sFirst);
    // The L particles load first, so that their loads overlap those of the S particles.
    LaneParticles<L_PER_THREAD> l;
    int lAtom[L_PER_THREAD];
#pragma unroll
    for (int i = 0; i < L_PER_THREAD; i++) {
        const int inChunk = 32*(L_PER_THREAD*warp+i)+lane, lIndex = a*TILE+inChunk;
        l.valid[i] = (lIndex < numL);
        lAtom[i] = (l.valid[i] ? groupAtoms[offsetL+lIndex] : 0);
        l.pos[i] = posq[lAtom[i]];
#ifdef GROUPS_OVERLAP
        l.key[i] = (l.valid[i] ? groupOriginal[offsetL+lIndex] : -1);
#else
        l.key[i] = inChunk;
#endif
        l.gradient[i] = make_real3(0, 0, 0);
    }
    for (int j = threadIdx.x; j < sCount; j += TILE_THREADS) {
        // Each batch of S_BATCH positions twice (pairBatch).
        const real4 p = posq[groupAtoms[offsetS+sFirst+j]];
        const int doubled = j+(j & ~(S_BATCH-1));
#ifdef GROUPS_OVERLAP
        const int key = groupOriginal[offsetS+sFirst+j];
#else
        const int key = j;
#endif
        sPos[doubled] = p;
        sPos[doubled+S_BATCH] = p;
        sKey[doubled] = key;
        sKey[doubled+S_BATCH] = key;
    }
    if (GRADIENT)
        for (int j = threadIdx.x; j < TILE; j += TILE_THREADS)
            sGradient[j] = make_real3(0, 0, 0);
    __syncthreads();
    const bool allValid = (a*TILE+32*L_PER_THREAD*(warp+1) <= numL);
    mixed cvSum = 0;
    for (int batch = 0; batch < sCount; batch += S_BATCH) {
        const int count = min(S_BATCH, sCount-batch);
        real3 gj;
        cvSum += pairBatch<L_PER_THREAD, S_BATCH, GRADIENT, true>(l, allValid, sPos+2*batch, sKey+2*batch, count, diagonal, params,
                box, &gj);
        if (GRADIENT && lane < count && isNonzero(gj)) {
            atomicAdd(&sGradient[batch+lane].x, gj.x);
            atomicAdd(&sGradient[batch+lane].y, gj.y);
            atomicAdd(&sGradient[batch+lane].z, gj.z);
        }
    }
    __syncthreads();
    if (GRADIENT) {
#pragma unroll
        for (int i = 0; i < L_PER_THREAD; i++) {
            const int lIndex = a*TILE+32*(L_PER_THREAD*warp+i)+lane;
            const real3 gi = scaled(gradientScale(params), l.gradient[i]);
            if (l.valid[i] && isNonzero(gi))
                addGradient(gi, offsetL+lIndex, lAtom[i], flags, forceBuffer, gradient, numSlots);
        }
        for (int j = threadIdx.x; j < sCount; j += TILE_THREADS)
            if (isNonzero(sGradient[j]))
                addGradient(sGradient[j], offsetS+sFirst+j, groupAtoms[offsetS+sFirst+j], flags, forceBuffer, gradient, numSlots);
        __syncthreads();
    }
    return cvSum;
}

#ifdef COMPILE_TILES
/** The CV over all pairs of one group or of two groups, tile by tile. */
KERNEL void computeCoordinationTiles(const real4* RESTRICT posq, const int* RESTRICT groupAtoms,
        const int* RESTRICT groupOriginal, int numL, int numS, int offsetL, int offsetS, int sChunk, PairParams params,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial, unsigned int* RESTRICT counter, double* RESTRICT cvValue,
        double* RESTRICT record) {
    __shared__ real4 sPos[2*TILE];
    __shared__ int sKey[2*TILE];
    __shared__ real3 sGradient[TILE];
    DEPENDENT_KERNEL_START
    const PeriodicBox box = {periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, params.imageSearch2};
    int numLChunks = (numL+TILE-1)/TILE;
    int numTiles = countTiles(numL, numS, sChunk);
    bool gradientWanted = (flags & (FLAG_DIRECT_FORCES | FLAG_GRADIENT)) != 0;
    mixed cvSum = 0;
    for (int tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {
        int a, b;
        bool diagonal;
        if (!decodeTile(tile, numLChunks, &a, &b, &diagonal))
            continue;
        if (gradientWanted)
            cvSum += computeTile<true>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params,
                    box, flags, forceBuffer, gradient, numSlots, sPos, sKey, sGradient);
        else
            cvSum += computeTile<false>(a, b, diagonal, sChunk, posq, groupAtoms, groupOriginal, numL, numS, offsetL, offsetS, params,
                    box, flags, forceBuffer, gradient, numSlots, sPos, sKey, sGradient);
    }
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record);
}
#endif

#ifdef CELL_HALF_BATCHES
/**
 * A full batch of 32 S particles of the cell lists (CellBatch's layout) against the warp's 32 L
 * particles, two a lane: lane q of half h (q = lane%16) holds L particles q and q+16 and meets
 * the 16 S particles of half h of the batch, one a step, their running gradients rotating within
 * the half (3 shuffles and one shared load a step, for two pairs). Adds the gradients with respect
 * to the lane's L particles to l.gradient (without gradientScale()), returns the lane's sum of s
 * and leaves in *gjSum, on lane k, the warp's total gradient with respect to S particle k.
 * Every lane holds two L particles: one that does not exist lies beyond the cutoff (beginCellLane),
 * as does the padding of a batch. KEYED: only the pairs PAIR_WANTED admits count.
 */
template <bool GRADIENT, bool KEYED>
inline DEVICE real halfBatch(LaneParticles<2>& l, const real4* sPos, const int* sKey, bool diagonal, const PairParams& params,
        const PeriodicBox& box, real3* gjSum) {
    const int first = batchPlace(threadIdx.x%32);
    real sum = 0, g;
    real3 delta, gj = make_real3(0, 0, 0);
#pragma unroll (KEYED ? 1 : 4)
    for (int step = 0; step < 16; step++) {
        const int k = first+step;
        const real4 pj = sPos[k];
#pragma unroll
        for (int i = 0; i < 2; i++) {
            real s = pairTerm<false>(l.pos[i], pj, params, box, &g, &delta);
            const bool wanted = (!KEYED || PAIR_WANTED(k, l.key[i]));
            sum += (wanted ? s : 0);
            if (GRADIENT)
                addPairGradient(wanted ? g : 0, delta, &l.gradient[i], &gj);
        }
        if (GRADIENT)
            rotateGradient<16>(&gj);
    }
    *gjSum = scaled(gradientScale(params), gj);
    return sum;
}
#endif

/**
 * The CV of the pairs a cell-list work item visits (visitCellItem). With CELL_HALF_BATCHES, the
 * warp's L particles are held two a lane (halfBatch: lane q of each half holds particles q and
 * q+16 of the home); otherwise one a lane (pairBatch: lane l, particle l). Forces go to the
 * particles' atoms (DIRECT_FORCES), or the gradient to the fixed-point gradient buffer by sorted
 * index (GRADIENT), where the atomics of a batch's S particles (neighbours in cell order) touch
 * few memory sectors; applyChainRule() then maps it to the atoms.
 */
template <bool GRADIENT>
struct CellCoordination {
    const real4* sortedPos;
    const int* sortedSlot;
    const int* sortedAtom;
    const int* groupOriginal;
    PairParams params;
    PeriodicBox box;
    int flags, numSlots;
    unsigned long long* forceBuffer;
    long long* gradient;

    /** Add the gradient g with respect to sorted particle index, as the flags ask. */
    inline DEVICE void addSortedGradient(real3 g, int index) {
        addGradient(g, index, (flags & FLAG_DIRECT_FORCES ? sortedAtom[index] : 0), flags, forceBuffer, gradient, numSlots);
    }
    LaneParticles<CELL_L_PER_LANE> l;
    mixed cvSum;

    inline DEVICE void beginL(int index, int slot, bool valid, real4 position) {
#ifdef CELL_HALF_BATCHES
        LaneParticles<1> own;
        beginCellLane(own, index, slot, valid, position, groupOriginal);
        const int q = threadIdx.x%16;
        for (int i = 0; i < 2; i++) {
            l.pos[i] = make_real4(__shfl_sync(0xffffffff, own.pos[0].x, q+16*i), __shfl_sync(0xffffffff, own.pos[0].y, q+16*i),
                    __shfl_sync(0xffffffff, own.pos[0].z, q+16*i), 0);
            l.key[i] = __shfl_sync(0xffffffff, own.key[0], q+16*i);
            l.valid[i] = true;
            l.gradient[i] = make_real3(0, 0, 0);
        }
#else
        beginCellLane(l, index, slot, valid, position, groupOriginal);
#endif
    }

    inline DEVICE void batch(const real4* sPos, const int* sKey, const int* sIndex, int count, bool diagonal) {
        // The batch is padded to 32 with particles beyond the cutoff (flushCellBatch), and a lane
        // without an L particle lies beyond the cutoff too (beginCellLane).
        real3 gj;
#ifdef CELL_HALF_BATCHES
        if (isKeyedBatch(diagonal))
            cvSum += halfBatch<GRADIENT, true>(l, sPos, sKey, diagonal, params, box, &gj);
        else
            cvSum += halfBatch<GRADIENT, false>(l, sPos, sKey, diagonal, params, box, &gj);
#else
        cvSum += pairBatch<1, 32, GRADIENT, false>(l, true, sPos, sKey, 32, diagonal, params, box, &gj);
#endif
        if (GRADIENT && threadIdx.x%32 < count && isNonzero(gj))
            addSortedGradient(gj, sIndex[threadIdx.x%32]);
    }

    inline DEVICE void endL(int index, bool valid) {
        if (!GRADIENT)
            return;
#ifdef CELL_HALF_BATCHES
        // Lane q of half h gets the gradient of L particle q+16h: its own part and that of the
        // lane in the other half.
        const bool upper = (threadIdx.x%32 >= 16);
        const real3 own = (upper ? l.gradient[1] : l.gradient[0]);
        real3 other = (upper ? l.gradient[0] : l.gradient[1]);
        other.x = __shfl_xor_sync(0xffffffff, other.x, 16);
        other.y = __shfl_xor_sync(0xffffffff, other.y, 16);
        other.z = __shfl_xor_sync(0xffffffff, other.z, 16);
        const real3 total = make_real3(own.x+other.x, own.y+other.y, own.z+other.z);
#else
        const real3 total = l.gradient[0];
#endif
        if (valid && isNonzero(total))
            addSortedGradient(scaled(gradientScale(params), total), index);
    }
};

/**
 * The home lists of the cell kernel (one group, kernels/neighbors.cu's checks): none (every
 * evaluation filters the cells), REBUILD (this evaluation's binning is new: each item's list is
 * recorded while it is evaluated, with the list cutoff) or KEEP (each item is evaluated from its
 * list at the current positions pos; an item whose list outgrew the capacity is filtered from the
 * cells of the last build, at pos). entries: capacity places an item; count: the places each item used.
 */
#define HOME_LISTS_NONE 0
// Atoms whose indices differ by less than this are close in memory (CudaCoordinationNeighborList::getNearFraction).
#define NEAR_ATOMS 64
#define HOME_LISTS_REBUILD 1
#define HOME_LISTS_KEEP 2
typedef struct {
    int state, capacity;
    unsigned int* entries;
    int* count;
    real cutoff2;
    const real4* pos;
    const real4* shifts;
} HomeLists;

/** Every work item of the cell lists, one warp each (from its home list where lists keeps one). */
template <bool GRADIENT>
inline DEVICE mixed computeCellItems(CellCoordination<GRADIENT> visitor, const CellGrid& grid, const int* RESTRICT cellStart,
        unsigned int* RESTRICT workCounter, CellBatch batch, const HomeLists& lists, unsigned int* RESTRICT maxCount) {
    const int numItems = countCellItems(grid);
    int largest = 0;
    visitor.cvSum = 0;
    for (int item = nextCellItem(workCounter); item < numItems; item = nextCellItem(workCounter)) {
        unsigned int* record = lists.entries+(size_t) item*lists.capacity;
        const int recorded = (lists.state == HOME_LISTS_KEEP ? lists.count[item] : 0);
        if (lists.state == HOME_LISTS_KEEP && recorded <= lists.capacity) {
            visitHomeList(record, recorded, lists.pos, lists.shifts, batch, visitor);
            continue;
        }
        batch.record = (lists.state == HOME_LISTS_REBUILD ? record : NULL);
        batch.recorded = 0;
        batch.recordCapacity = lists.capacity;
        visitCellItem(item, grid, (lists.state == HOME_LISTS_NONE ? visitor.params.dmax2 : lists.cutoff2), cellStart,
                (lists.state == HOME_LISTS_KEEP ? lists.pos : visitor.sortedPos), visitor.sortedSlot, visitor.groupOriginal,
                visitor.box.vecX, visitor.box.vecY, visitor.box.vecZ, batch, visitor);
        if (batch.record != NULL && threadIdx.x%32 == 0) {
            lists.count[item] = batch.recorded;
            largest = max(largest, batch.recorded);
        }
    }
    if (lists.state == HOME_LISTS_REBUILD && threadIdx.x%32 == 0)
        atomicMax(maxCount, (unsigned int) largest);
    return visitor.cvSum;
}

#ifdef CELL_HALF_BATCHES
// At most 85 registers, so that three blocks fit a multiprocessor (with 96, two did: 0.805 against
// 0.843 ms for 1,000,000 particles, 0.122 against 0.125 ms for 100,000, for 24 bytes of spills).
#define CELL_LAUNCH_BOUNDS __launch_bounds__(TILE, 3)
#else
#define CELL_LAUNCH_BOUNDS
#endif

#if defined(COMPILE_CELLS) || defined(COMPILE_CELL_VALUES)
#define CELL_KERNEL_PARAMETERS const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, \
        const int* RESTRICT sortedAtom, const int* RESTRICT cellStart, unsigned int* RESTRICT workCounter, \
        const int* RESTRICT groupOriginal, CellGrid grid, PairParams params, real4 periodicBoxVecX, real4 periodicBoxVecY, \
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots, \
        const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq, const int* RESTRICT groupAtoms, \
        real4* RESTRICT listPos, real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot, \
        unsigned int* RESTRICT listEntries, int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int capacity, \
        real listCutoff2, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial, unsigned int* RESTRICT counter, \
        double* RESTRICT cvValue, double* RESTRICT record
#define CELL_KERNEL_ARGUMENTS sortedPos, sortedSlot, sortedAtom, cellStart, workCounter, groupOriginal, grid, params, \
        periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, flags, forceBuffer, gradient, numSlots, rebuildStamp, stamp, posq, \
        groupAtoms, listPos, refPos, listShift, listSlot, listEntries, listCount, maxCount, capacity, listCutoff2, energyBuffer, \
        cvPartial, counter, cvValue, record

/**
 * The CV over the pairs of neighbouring cells (a finite cutoff in a periodic box). With GRADIENT,
 * the gradient goes to the forces or to gradient[] by sorted index. With home lists (rebuildStamp
 * not NULL: one group, CudaCoordinationNeighborList), the lists are rebuilt where *rebuildStamp ==
 * stamp, and the arrays that checkNeighborList reads (listSlot, listShift, refPos, listPos)
 * recorded from this evaluation's binning; otherwise the lists are evaluated at listPos.
 */
template <bool GRADIENT>
inline DEVICE void computeCells(CELL_KERNEL_PARAMETERS) {
    CELL_BATCH_MEMORY
    __shared__ real4 shifts[HOME_CODE+1];
    DEPENDENT_KERNEL_START
    const CellBatch batch = WARP_CELL_BATCH;
    const real4 unused = make_real4(0, 0, 0, 0);
    const PeriodicBox box = {unused, unused, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, 0};
    HomeLists lists = {HOME_LISTS_NONE, capacity, listEntries, listCount, listCutoff2, listPos, shifts};
    if (rebuildStamp != NULL) {
        lists.state = (*rebuildStamp == stamp ? HOME_LISTS_REBUILD : HOME_LISTS_KEEP);
        if (threadIdx.x <= HOME_CODE)
            shifts[threadIdx.x] = imageShift(threadIdx.x, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
        __syncthreads();
    }
    if (lists.state == HOME_LISTS_REBUILD) {
        // And how many particles have their atom close in memory to that of the next in cell
        // order (the host reads it back: if most do, forces straight to the atoms are cheaper).
        int near = 0;
        for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x) {
            recordListParticle(k, sortedPos, sortedSlot, posq, groupAtoms, listPos, refPos, listShift, listSlot);
            near += (k+1 < numSlots && abs(sortedAtom[k+1]-sortedAtom[k]) < NEAR_ATOMS);
        }
        near = __reduce_add_sync(0xffffffff, near);
        if (threadIdx.x%32 == 0 && near > 0)
            atomicAdd(&workCounter[2], (unsigned int) near);
    }
    CellCoordination<GRADIENT> visitor = {sortedPos, sortedSlot, sortedAtom, groupOriginal, params, box, flags, numSlots, forceBuffer,
            gradient};
    mixed cvSum = computeCellItems(visitor, grid, cellStart, workCounter, batch, lists, maxCount);
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record);
}
#endif

#ifdef COMPILE_CELLS
/** The cell kernel with forces or the gradient (DIRECT_FORCES or GRADIENT). */
KERNEL CELL_LAUNCH_BOUNDS void computeCoordinationCells(CELL_KERNEL_PARAMETERS) {
    computeCells<true>(CELL_KERNEL_ARGUMENTS);
}
#endif

#ifdef COMPILE_CELL_VALUES
/** The cell kernel for the CV alone (no forces: compiled when first needed, not at a Context's start). */
KERNEL CELL_LAUNCH_BOUNDS void computeCoordinationCellValues(CELL_KERNEL_PARAMETERS) {
    computeCells<false>(CELL_KERNEL_ARGUMENTS);
}
#endif

#ifdef COMPILE_PAIRS
/**
 * The CV over a list of pairs (groupAtoms[k], groupAtoms[numPairs+k]); with PAIR_PARAMETERS,
 * pair k has its own weight and r0 in pairValues[k] (unused otherwise).
 */
KERNEL void computeCoordinationPairs(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numPairs,
        PairParams params, real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient,
        const PairValues* RESTRICT pairValues, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial,
        unsigned int* RESTRICT counter, double* RESTRICT cvValue,
        double* RESTRICT record) {
    DEPENDENT_KERNEL_START
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
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record);
}
#endif

#ifdef COMPILE_CORE
/**
 * Add the accumulated gradient of the CV to the forces as -dcv/dx (the energy is the CV) and
 * clear it: the cell kernel's forces of a large group, by sorted index (entrySlot).
 */
KERNEL void applyGradient(const int* RESTRICT groupAtoms, const int* RESTRICT entrySlot, int numSlots, long long* RESTRICT gradient,
        unsigned long long* RESTRICT forceBuffer) {
    DEPENDENT_KERNEL_START
    scatterGradient(gradient, groupAtoms, entrySlot, numSlots, chainRuleScale(1.0), forceBuffer);
}

/** After atoms are reordered: inverse[atomIndex[i]] = i. */
KERNEL void invertAtomIndex(const int* RESTRICT atomIndex, int* RESTRICT inverse, int numAtoms) {
    for (int i = blockIdx.x*blockDim.x+threadIdx.x; i < numAtoms; i += blockDim.x*gridDim.x)
        inverse[atomIndex[i]] = i;
}

/** After atoms are reordered: where each slot's particle now is. */
KERNEL void updateGroupAtoms(const int* RESTRICT groupOriginal, const int* RESTRICT inverse, int* RESTRICT groupAtoms, int numSlots) {
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x)
        groupAtoms[k] = inverse[groupOriginal[k]];
}

/** Record in *firstInvalid the smallest slot whose particle has a non-finite position. */
KERNEL void checkPositions(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numSlots, int* RESTRICT firstInvalid) {
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x) {
        real4 p = posq[groupAtoms[k]];
        if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z)))
            atomicMin(firstInvalid, k);
    }
}
#endif
