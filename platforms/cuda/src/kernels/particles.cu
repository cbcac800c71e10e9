/**
 * The pair passes of per-atom coordination numbers (CoordinationForce::setParticleFunction(),
 * PLUMED's COORDINATIONNUMBER): for each entry a of group A, c_a = sum_j t(r_aj) with
 * t = s(r) r^k (k: the distance power, 0 for none), j over group A itself (ONE_GROUP, j != a) or
 * over group B (pairs of one particle skipped). An evaluation is three launches:
 *   computeParticleNumbers    c_a, added tile by tile into c[] (which evaluateParticleFunction() clears)
 *   evaluateParticleFunction  F(c) and w_a = dF/dc_a (kernels/particlefunction.cu)
 *   computeParticleGradient   the gradient of F, as the flags ask (kernels/sums.cu, addGradient()):
 *                             for slot i, sum_j (w_i + w_j) dt(r_ij)/dx_i in one group, and in two
 *                             groups w_a dt(r_ab)/dx for both particles of each pair
 * The two pair kernels share one tile (particleTile()): TILE centres, one a thread, against TILE
 * neighbours in shared memory. Each ordered pair is evaluated from its centre's side, so that a
 * thread adds only to its own centre: no atomics per pair, one per centre and tile.
 */

/**
 * One tile: the thread's centre (slot `centre`, where validCentre) against the neighbours
 * [neighbourFirst, neighbourFirst+numNeighbours) of the slots (at most TILE), which the block
 * loads into shared memory; every thread of the block calls it. Without GRADIENT, returns the sum
 * of t over the centre's pairs; with GRADIENT, leaves in *gradient the gradient of
 * sum_j (wCentre + w_j) t(r_ij) with respect to the centre's particle (w_j = weights[j] where
 * neighbourWeights, else 0). Pairs of one particle (equal groupOriginal) are skipped.
 */
template <bool GRADIENT>
inline DEVICE mixed particleTile(int centre, bool validCentre, int neighbourFirst, int numNeighbours, real wCentre,
        bool neighbourWeights, const real4* RESTRICT posq, const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal,
        const double* RESTRICT weights, const PairParams& params, real distancePower, real4 periodicBoxSize,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, real4* sPos, int* sKey,
        real* sWeight, real3* gradient) {
    const real4 pi = (validCentre ? posq[groupAtoms[centre]] : make_real4(0, 0, 0, 0));
    const int key = (validCentre ? groupOriginal[centre] : -1);
    for (int k = threadIdx.x; k < numNeighbours; k += blockDim.x) {
        const int slot = neighbourFirst+k;
        sPos[k] = posq[groupAtoms[slot]];
        sKey[k] = groupOriginal[slot];
        if (GRADIENT)
            sWeight[k] = (neighbourWeights ? (real) weights[slot] : 0);
    }
    __syncthreads();
    mixed sum = 0;
    real3 g = make_real3(0, 0, 0);
    if (validCentre)
        for (int k = 0; k < numNeighbours; k++) {
            if (sKey[k] == key)
                continue;
            real r2, dsdr;
            const real3 delta = pairDelta(pi, sPos[k], &r2, params.imageSearch2, periodicBoxSize, invPeriodicBoxSize,
                    periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
            // dsdr: (dt/dr)/r.
            const real t = particleTerm(r2, params, distancePower, &dsdr);
            if (GRADIENT) {
                // The gradient of t with respect to the centre is -dsdr*delta (delta points from the centre to the neighbour).
                const real w = wCentre+sWeight[k];
                g.x -= w*dsdr*delta.x;
                g.y -= w*dsdr*delta.y;
                g.z -= w*dsdr*delta.z;
            }
            else
                sum += t;
        }
    __syncthreads();
    *gradient = g;
    return sum;
}

/** The number of neighbour slots, and the first, of centre group `side` (0: group A, 1: group B). */
inline DEVICE void particleNeighbours(int side, int numA, int numB, int* first, int* count) {
#ifdef ONE_GROUP
    *first = 0;
    *count = numA;
#else
    *first = (side == 0 ? numA : 0);
    *count = (side == 0 ? numB : numA);
#endif
}

/**
 * c[a] += sum_j t(r_aj) for each entry a of group A, tile by tile (c[] is zero before the
 * first launch, and evaluateParticleFunction() clears it after reading it); first, where
 * invalidSlot is not NULL, the check of every slot's position (checkSlotPositions(), energy.cu).
 */
KERNEL void computeParticleNumbers(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal,
        int numA, int numB, int numSlots, PairParams params, real distancePower, real4 periodicBoxSize, real4 invPeriodicBoxSize,
        real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, double* RESTRICT c, int* RESTRICT invalidSlot,
        int* RESTRICT alarm, mixed* RESTRICT positionEnergy) {
    __shared__ real4 sPos[TILE];
    __shared__ int sKey[TILE];
    DEPENDENT_KERNEL_START
    if (invalidSlot != NULL)
        checkSlotPositions(posq, groupAtoms, numSlots, invalidSlot, alarm, positionEnergy);
    int neighbourFirst, numNeighbours;
    particleNeighbours(0, numA, numB, &neighbourFirst, &numNeighbours);
    const int centreChunks = (numA+TILE-1)/TILE, neighbourChunks = (numNeighbours+TILE-1)/TILE;
    for (int tile = blockIdx.x; tile < centreChunks*neighbourChunks; tile += gridDim.x) {
        const int centre = (tile/neighbourChunks)*TILE+threadIdx.x, chunk = (tile%neighbourChunks)*TILE;
        const bool valid = (centre < numA);
        real3 unused;
        const mixed sum = particleTile<false>(centre, valid, neighbourFirst+chunk, min(TILE, numNeighbours-chunk), 0, false, posq,
                groupAtoms, groupOriginal, NULL, params, distancePower, periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX,
                periodicBoxVecY, periodicBoxVecZ, sPos, sKey, NULL, &unused);
        if (valid && sum != 0)
            atomicAdd(&c[centre], (double) sum);
    }
}

/**
 * The gradient of F: for each slot i, sum over its pairs of (w_i + w_j) dt/dx_i (one group), or
 * w_a dt/dx_i with a the pair's entry of group A (two groups), added as the flags ask
 * (addGradient(): the forces, or the fixed-point gradient of the chain rule), once per slot and
 * tile. The centres of a block are all of one group: the tiles of group A's centres first, then
 * (two groups) those of group B's.
 */
KERNEL void computeParticleGradient(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, const int* RESTRICT groupOriginal,
        int numA, int numB, int numSlots, PairParams params, real distancePower, real4 periodicBoxSize, real4 invPeriodicBoxSize,
        real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, const double* RESTRICT w, int flags,
        unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient) {
    __shared__ real4 sPos[TILE];
    __shared__ int sKey[TILE];
    __shared__ real sWeight[TILE];
    DEPENDENT_KERNEL_START
#ifdef ONE_GROUP
    const int sides = 1;
#else
    const int sides = 2;
#endif
    int tilesOfA;
    {
        int first, count;
        particleNeighbours(0, numA, numB, &first, &count);
        tilesOfA = ((numA+TILE-1)/TILE)*((count+TILE-1)/TILE);
    }
    const int tilesOfB = (sides == 2 ? ((numB+TILE-1)/TILE)*((numA+TILE-1)/TILE) : 0);
    for (int tile = blockIdx.x; tile < tilesOfA+tilesOfB; tile += gridDim.x) {
        const int side = (tile < tilesOfA ? 0 : 1), local = (side == 0 ? tile : tile-tilesOfA);
        const int numCentres = (side == 0 ? numA : numB), centreFirst = (side == 0 ? 0 : numA);
        int neighbourFirst, numNeighbours;
        particleNeighbours(side, numA, numB, &neighbourFirst, &numNeighbours);
        const int neighbourChunks = (numNeighbours+TILE-1)/TILE;
        const int index = (local/neighbourChunks)*TILE+threadIdx.x, chunk = (local%neighbourChunks)*TILE;
        const bool valid = (index < numCentres);
        const int centre = centreFirst+index;
        // The weights live on group A's entries (slots 0 to numA-1).
        const real wCentre = (valid && side == 0 ? (real) w[centre] : 0);
        const bool neighbourWeights = (sides == 1 || side == 1);
        real3 g;
        particleTile<true>(centre, valid, neighbourFirst+chunk, min(TILE, numNeighbours-chunk), wCentre, neighbourWeights, posq,
                groupAtoms, groupOriginal, w, params, distancePower, periodicBoxSize, invPeriodicBoxSize, periodicBoxVecX,
                periodicBoxVecY, periodicBoxVecZ, sPos, sKey, sWeight, &g);
        if (valid && (g.x != 0 || g.y != 0 || g.z != 0))
            addGradient(g, centre, groupAtoms[centre], flags, forceBuffer, gradient, numSlots);
    }
}
