/**
 * The coordination over the cell lists (traversal.cu), and over the home lists of a large group
 * (neighbors.cu says when they are rebuilt): computeCoordinationCells (forces or the gradient) and
 * computeCoordinationCellValues (the CV alone), the same code with GRADIENT true and false.
 */

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
        spreadLParticles(own.pos[0], own.key[0], l.pos, l.key);
        for (int i = 0; i < 2; i++) {
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
        const real3 total = gatherLTotal(l.gradient);
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
 * near and nearCount (NULL: none) are the same for the lists of entries within dmax: where
 * writeNear, a pass that reads an item's list in KEEP writes them (visitHomeList()) and sets their
 * count (-1 for an item not read from its list: rebuilt, or outgrown); else a pass in KEEP reads
 * them in place of the whole list, where an earlier pass at the same positions wrote them.
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
    unsigned int* near;
    int* nearCount;
    bool writeNear;
} HomeLists;

#ifdef CELL_HALF_BATCHES
// At most 85 registers, so that three blocks fit a multiprocessor (with 96, two did: 0.805 against
// 0.843 ms for 1,000,000 particles, 0.122 against 0.125 ms for 100,000, for 24 bytes of spills).
#define CELL_LAUNCH_BOUNDS __launch_bounds__(TILE, 3)
#else
#define CELL_LAUNCH_BOUNDS
#endif

/**
 * The arguments of the cell kernels, passed by value: CudaCoordinationCV::CellArguments on the
 * host has the same members in the same order.
 */
typedef struct {
    // The sorted particles and cells of the binning, the pair parameters and the box, and where the gradient goes.
    const real4* RESTRICT sortedPos;
    const int* RESTRICT sortedSlot;
    const int* RESTRICT sortedAtom;
    const int* RESTRICT cellStart;
    unsigned int* RESTRICT workCounter;
    const int* RESTRICT groupOriginal;
    CellGrid grid;
    PairParams params;
    real4 periodicBoxVecX;
    real4 periodicBoxVecY;
    real4 periodicBoxVecZ;
    int flags;
    unsigned long long* RESTRICT forceBuffer;
    long long* RESTRICT gradient;
    int numSlots;
    // The home lists (rebuildStamp NULL: none).
    const int* RESTRICT rebuildStamp;
    int stamp;
    const real4* RESTRICT posq;
    const int* RESTRICT groupAtoms;
    real4* RESTRICT listPos;
    real4* RESTRICT refPos;
    real4* RESTRICT listShift;
    int* RESTRICT listSlot;
    unsigned int* RESTRICT listEntries;
    int* RESTRICT listCount;
    unsigned int* RESTRICT maxCount;
    int capacity;
    real listCutoff2;
    // What finishBlock needs.
    mixed* RESTRICT energyBuffer;
    double* RESTRICT cvPartial;
    unsigned int* RESTRICT counter;
    double* RESTRICT cvValue;
    double* RESTRICT record;
    int* RESTRICT alarm;
    // The check of the positions (invalidSlot NULL: none), as computeCoordinationTiles.
    int* RESTRICT invalidSlot;
    mixed* RESTRICT positionEnergy;
} CellKernelArguments;

/**
 * Every work item of the cell lists, one warp each, handed to the visitor (beginL, batch, endL:
 * CellCoordination below, or the per-atom passes of kernels/particlehomes.cu): from its home list
 * where lists keep one (KEEP), else filtered from the cells (and recorded where lists are REBUILD).
 */
template <class Visitor>
inline DEVICE void visitCellItems(Visitor& visitor, const CellKernelArguments& args, CellBatch batch, const HomeLists& lists) {
    const int numItems = countCellItems(args.grid);
    int largest = 0;
    for (int item = nextCellItem(args.workCounter); item < numItems; item = nextCellItem(args.workCounter)) {
        unsigned int* record = lists.entries+(size_t) item*lists.capacity;
        const int recorded = (lists.state == HOME_LISTS_KEEP ? lists.count[item] : 0);
        unsigned int* near = (lists.near == NULL ? NULL : lists.near+(size_t) item*lists.capacity);
        if (lists.state == HOME_LISTS_KEEP && recorded <= lists.capacity) {
            const int nearCount = (near == NULL || lists.writeNear ? -1 : lists.nearCount[item]);
            batch.near = (lists.writeNear ? near : NULL);
            batch.nearWritten = 0;
            if (nearCount >= 0)
                visitHomeList(near, nearCount, lists.pos, lists.shifts, batch, visitor);
            else
                visitHomeList(record, recorded, lists.pos, lists.shifts, batch, visitor);
            if (batch.near != NULL && threadIdx.x%32 == 0)
                lists.nearCount[item] = batch.nearWritten;
            continue;
        }
        if (near != NULL && lists.writeNear && threadIdx.x%32 == 0)
            lists.nearCount[item] = -1;
        batch.near = NULL;
        batch.record = (lists.state == HOME_LISTS_REBUILD ? record : NULL);
        batch.recorded = 0;
        batch.recordCapacity = lists.capacity;
        // Kept lists: the cells of the last build are in listShift's w too (listPos' w may hold a pass's values instead).
        visitCellItem(item, args.grid, (lists.state == HOME_LISTS_NONE ? args.params.dmax2 : lists.cutoff2), args.cellStart,
                (lists.state == HOME_LISTS_KEEP ? lists.pos : args.sortedPos), (lists.state == HOME_LISTS_KEEP ? args.listShift :
                args.sortedPos), args.sortedSlot, args.groupOriginal, args.periodicBoxVecX, args.periodicBoxVecY, args.periodicBoxVecZ,
                batch, visitor);
        if (batch.record != NULL && threadIdx.x%32 == 0) {
            lists.count[item] = batch.recorded;
            largest = max(largest, batch.recorded);
        }
    }
    if (lists.state == HOME_LISTS_REBUILD && threadIdx.x%32 == 0)
        atomicMax(args.maxCount, (unsigned int) largest);
}

/**
 * The body of every kernel on the cells, after DEPENDENT_KERNEL_START: the check of the positions
 * (invalidSlot not NULL), and with home lists (rebuildStamp not NULL: one group,
 * CudaCoordinationNeighborList) their state, REBUILD where *rebuildStamp == stamp and keep is
 * false (the arrays that checkNeighborList reads, listSlot, listShift, refPos and listPos, are
 * then recorded from this evaluation's binning), else KEEP (evaluated at listPos); then every work
 * item to the visitor (visitCellItems()). near and nearCount: the lists of entries within dmax
 * (HomeLists), written by a pass without keep and read by one with it.
 */
template <class Visitor>
inline DEVICE void visitCells(const CellKernelArguments& args, Visitor& visitor, bool keep, unsigned int* near = NULL,
        int* nearCount = NULL) {
    CELL_BATCH_MEMORY
    __shared__ real4 shifts[HOME_CODE+1];
    const CellBatch batch = WARP_CELL_BATCH;
    HomeLists lists = {HOME_LISTS_NONE, args.capacity, args.listEntries, args.listCount, args.listCutoff2, args.listPos, shifts,
            near, nearCount, !keep};
    if (args.invalidSlot != NULL)
        checkSlotPositions(args.posq, args.groupAtoms, args.numSlots, args.invalidSlot, args.alarm, args.positionEnergy);
    if (args.rebuildStamp != NULL) {
        lists.state = (!keep && *args.rebuildStamp == args.stamp ? HOME_LISTS_REBUILD : HOME_LISTS_KEEP);
        if (threadIdx.x <= HOME_CODE)
            shifts[threadIdx.x] = imageShift(threadIdx.x, args.periodicBoxVecX, args.periodicBoxVecY, args.periodicBoxVecZ);
        __syncthreads();
    }
    if (lists.state == HOME_LISTS_REBUILD) {
        // And how many particles have their atom close in memory to that of the next in cell
        // order (the host reads it back: if most do, forces straight to the atoms are cheaper).
        int near = 0;
        for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < args.numSlots; k += blockDim.x*gridDim.x) {
            recordListParticle(k, args.sortedPos, args.sortedSlot, args.posq, args.groupAtoms, args.listPos, args.refPos, args.listShift,
                    args.listSlot);
            near += (k+1 < args.numSlots && abs(args.sortedAtom[k+1]-args.sortedAtom[k]) < NEAR_ATOMS);
        }
        near = __reduce_add_sync(0xffffffff, near);
        if (threadIdx.x%32 == 0 && near > 0)
            atomicAdd(&args.workCounter[2], (unsigned int) near);
    }
    visitCellItems(visitor, args, batch, lists);
}

/**
 * The CV over the pairs of neighbouring cells (a finite cutoff in a periodic box). With GRADIENT,
 * the gradient goes to the forces or to gradient[] by sorted index. With home lists (rebuildStamp
 * not NULL), as visitCells() says.
 */
template <bool GRADIENT>
inline DEVICE void computeCells(const CellKernelArguments& args) {
    DEPENDENT_KERNEL_START
    const real4 unused = make_real4(0, 0, 0, 0);
    const PeriodicBox box = {unused, unused, args.periodicBoxVecX, args.periodicBoxVecY, args.periodicBoxVecZ, 0};
    CellCoordination<GRADIENT> visitor = {args.sortedPos, args.sortedSlot, args.sortedAtom, args.groupOriginal, args.params, box,
            args.flags, args.numSlots, args.forceBuffer, args.gradient};
    visitor.cvSum = 0;
    visitCells(args, visitor, false);
    finishBlock(visitor.cvSum, args.flags, args.energyBuffer, args.cvPartial, args.counter, args.cvValue, args.record, args.alarm);
}

#ifdef COMPILE_CELLS
/** The cell kernel with forces or the gradient (DIRECT_FORCES or GRADIENT). */
KERNEL CELL_LAUNCH_BOUNDS void computeCoordinationCells(CellKernelArguments args) {
    computeCells<true>(args);
}
#endif

#ifdef COMPILE_CELL_VALUES
/** The cell kernel for the CV alone (no forces: compiled when first needed, not at a Context's start). */
KERNEL CELL_LAUNCH_BOUNDS void computeCoordinationCellValues(CellKernelArguments args) {
    computeCells<false>(args);
}
#endif
