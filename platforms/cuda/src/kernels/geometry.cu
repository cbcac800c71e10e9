/**
 * Pair geometry and the enumeration of all-pairs tiles, shared by the coordination and the
 * histogram kernels. A tile is TILE particles of the long side L (one per thread, kept in
 * registers) against up to TILE particles of the short side S (kept in shared memory).
 *   ONE_GROUP   L = S = group A; tiles cover each unordered pair once (diagonal tiles: j > i)
 *   otherwise   L and S are the larger and the smaller group
 *   PERIODIC    nearest image; with TRICLINIC, pairs beyond half the smallest box width search
 *               the neighboring images, as the Reference platform does
 */

/**
 * Whether this block is the last of its launch to get here; every block calls it once, with all
 * its threads, after the writes the last block is to see (they are visible to it on return).
 * blocksDone counts the blocks and returns to 0 for the next launch.
 */
inline DEVICE bool isLastBlockToFinish(unsigned int* blocksDone) {
    __shared__ bool isLast;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        isLast = (atomicInc(blocksDone, gridDim.x-1) == gridDim.x-1);
    __syncthreads();
    if (isLast)
        __threadfence();
    return isLast;
}

/** The displacement from pi to pj (nearest image when periodic) and its squared length. */
inline DEVICE real3 pairDelta(real4 pi, real4 pj, real* r2, real imageSearch2,
        real4 periodicBoxSize, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ) {
    real3 delta = make_real3(pj.x-pi.x, pj.y-pi.y, pj.z-pi.z);
#ifdef PERIODIC
    APPLY_PERIODIC_TO_DELTA(delta)
#endif
    real d2 = delta.x*delta.x+delta.y*delta.y+delta.z*delta.z;
#if defined(PERIODIC) && defined(TRICLINIC)
    if (d2 > imageSearch2) {
        real3 reduced = delta;
        for (int a = -1; a <= 1; a++)
            for (int b = -1; b <= 1; b++)
                for (int c = -1; c <= 1; c++) {
                    real3 image = make_real3(reduced.x+a*periodicBoxVecX.x+b*periodicBoxVecY.x+c*periodicBoxVecZ.x,
                            reduced.y+b*periodicBoxVecY.y+c*periodicBoxVecZ.y, reduced.z+c*periodicBoxVecZ.z);
                    real image2 = image.x*image.x+image.y*image.y+image.z*image.z;
                    if (image2 < d2) {
                        d2 = image2;
                        delta = image;
                    }
                }
    }
#endif
    *r2 = d2;
    return delta;
}

/**
 * The NL particles of the L side a lane holds in registers (NL is 1 in the cell lists and
 * L_PER_THREAD in the coordination tiles): positions, whether each exists, their keys and the
 * gradients with respect to them.
 */
template <int NL>
struct LaneParticles {
    real4 pos[NL];
    real3 gradient[NL];
    int key[NL];
    bool valid[NL];
};

/** The periodic box as the pair functions need it. */
typedef struct {
    real4 size, invSize, vecX, vecY, vecZ;
    real imageSearch2;
} PeriodicBox;

/** pairDelta() with the box in one argument. */
inline DEVICE real3 boxDelta(real4 pi, real4 pj, real* r2, const PeriodicBox& box) {
    return pairDelta(pi, pj, r2, box.imageSearch2, box.size, box.invSize, box.vecX, box.vecY, box.vecZ);
}

/** The displacement from pi to pj where pj already is the image to use (cell lists), and its squared length. */
inline DEVICE real3 shiftedDelta(real4 pi, real4 pj, real* r2) {
    real3 delta = make_real3(pj.x-pi.x, pj.y-pi.y, pj.z-pi.z);
    *r2 = delta.x*delta.x+delta.y*delta.y+delta.z*delta.z;
    return delta;
}

/**
 * Which chunks of L and S a tile pairs, and whether it is a diagonal tile of ONE_GROUP. Returns
 * false for a tile to skip: with an even number of chunks, ONE_GROUP meets each opposite chunk twice.
 */
inline DEVICE bool decodeTile(int tile, int numLChunks, int* a, int* b, bool* diagonal) {
#ifdef ONE_GROUP
    // Chunk a meets chunks a, a+1, ..., a+numLChunks/2 (cyclically): each unordered pair once,
    // but for the duplicate of an opposite pair.
    int column = tile/numLChunks;
    *a = tile-column*numLChunks;
    *b = (*a+column)%numLChunks;
    *diagonal = (column == 0);
    return !(numLChunks%2 == 0 && 2*column == numLChunks && *a >= numLChunks/2);
#else
    *b = tile/numLChunks;
    *a = tile-(*b)*numLChunks;
    *diagonal = false;
    return true;
#endif
}

/**
 * The number of tiles for numL particles on the L side (chunks of TILE) and numS on the S side
 * (chunks of sChunk, at most TILE; ONE_GROUP needs sChunk == TILE).
 */
inline DEVICE int countTiles(int numL, int numS, int sChunk) {
    int numLChunks = (numL+TILE-1)/TILE;
#ifdef ONE_GROUP
    return numLChunks*(numLChunks/2+1);
#else
    return numLChunks*((numS+sChunk-1)/sChunk);
#endif
}

/** Whether the pair of S particle k of a batch (keys sKey) with an L particle of key lKey counts. */
#ifdef ONE_GROUP
// Keys order the particles of a diagonal block: each unordered pair once.
#define PAIR_WANTED(k, lKey) (!diagonal || sKey[k] > (lKey))
#elif defined(GROUPS_OVERLAP)
// Keys are the original particle indices: no pair of a particle with itself.
#define PAIR_WANTED(k, lKey) (sKey[k] != (lKey))
#else
#define PAIR_WANTED(k, lKey) true
#endif
