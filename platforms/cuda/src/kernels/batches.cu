/** Batches of S particles against the L particles of a warp: the pair loops of the tile and cell kernels. */

#define ROTATION_THRESHOLD 12

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
