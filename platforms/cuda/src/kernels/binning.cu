/**
 * The cell binning (cellgrid.cu): every group particle wrapped into the box and written in cell
 * order, its cell in w. For a neighbour list (neighbors.cu), only where the lists are rebuilt.
 */

/** Wrap a position into the box and return the index of its cell. */
inline DEVICE int findCell(real4* pos, const CellGrid& grid, real4 invBoxSize, real4 vecX, real4 vecY, real4 vecZ) {
    real4 p = *pos;
    real sz = p.z*invBoxSize.z;
    real sy = (p.y-sz*vecZ.y)*invBoxSize.y;
    real sx = (p.x-sz*vecZ.x-sy*vecY.x)*invBoxSize.x;
    real fx = floor(sx), fy = floor(sy), fz = floor(sz);
    p.x -= fx*vecX.x+fy*vecY.x+fz*vecZ.x;
    p.y -= fy*vecY.y+fz*vecZ.y;
    p.z -= fz*vecZ.z;
    *pos = p;
    // Clamped: rounding (or a non-finite position, reported elsewhere) never leaves the grid.
    int cx = min(max((int) ((sx-fx)*grid.nx), 0), grid.nx-1);
    int cy = min(max((int) ((sy-fy)*grid.ny), 0), grid.ny-1);
    int cz = min(max((int) ((sz-fz)*grid.nz), 0), grid.nz-1);
    return (cz*grid.ny+cy)*grid.nx+cx;
}

/**
 * Whether a binning kernel has nothing to do: the neighbour lists (neighbors.cu) pass their
 * rebuildStamp, and need new cells only where it holds this evaluation's stamp; other users pass none.
 */
inline DEVICE bool isBinningSkipped(const int* RESTRICT rebuildStamp, int stamp) {
    return (rebuildStamp != NULL && *rebuildStamp != stamp);
}

#define SCAN_CHUNK 4096

/**
 * Exclusive scan over a block of 1024 threads of 4 values a thread (thread t's are values
 * 4t to 4t+3): the start of each of the thread's values, from carry, in start[]; returns carry
 * plus the total in every thread.
 */
inline DEVICE int scanBlockValues(const int* value, int* start, int carry) {
    __shared__ int warpTotals[32];
    const int lane = threadIdx.x%32, warp = threadIdx.x/32;
    const int sum = value[0]+value[1]+value[2]+value[3];
    int inclusive = sum;
    for (int offset = 1; offset < 32; offset *= 2) {
        int other = __shfl_up_sync(0xffffffff, inclusive, offset);
        if (lane >= offset)
            inclusive += other;
    }
    if (lane == 31)
        warpTotals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int total = (lane < blockDim.x/32 ? warpTotals[lane] : 0), scanned = total;
        for (int offset = 1; offset < 32; offset *= 2) {
            int other = __shfl_up_sync(0xffffffff, scanned, offset);
            if (lane >= offset)
                scanned += other;
        }
        warpTotals[lane] = scanned;
    }
    __syncthreads();
    start[0] = carry+(warp > 0 ? warpTotals[warp-1] : 0)+inclusive-sum;
    for (int i = 1; i < 4; i++)
        start[i] = start[i-1]+value[i-1];
    const int total = warpTotals[31];
    __syncthreads();
    return carry+total;
}

/**
 * Exclusive scan of in[first, first+count) (count <= SCAN_CHUNK) into out[], by one block of
 * 1024 threads, 4 values a thread, starting from carry; returns the total in every thread.
 * in may be out: each thread reads its values before it writes them. With clear, in[] is zeroed.
 */
inline DEVICE int scanChunk(int* in, int* out, int first, int count, int carry, bool clear) {
    const int mine = first+4*threadIdx.x;
    int value[4], start[4];
    for (int i = 0; i < 4; i++)
        value[i] = (4*threadIdx.x+i < count ? __ldcg(&in[mine+i]) : 0);
    const int total = scanBlockValues(value, start, carry);
    for (int i = 0; i < 4; i++)
        if (4*threadIdx.x+i < count) {
            out[mine+i] = start[i];
            if (clear)
                in[mine+i] = 0;
        }
    return total;
}

/**
 * Wrap group particle slot into the box, find its cell (group B's after group A's) and its rank
 * among the particles counted in that cell so far (count: global or shared memory); keep the cell,
 * the rank and the wrapped position for scatterCell().
 */
inline DEVICE void assignCell(int slot, const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numA, const CellGrid& grid,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ, unsigned int* count,
        int* RESTRICT cellOf, int* RESTRICT cellRank, real4* RESTRICT wrapped) {
    real4 p = posq[groupAtoms[slot]];
    int cell = findCell(&p, grid, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    if (slot >= numA)
        cell += grid.numCells;
    cellOf[slot] = cell;
    cellRank[slot] = atomicAdd(&count[cell], 1u);
    wrapped[slot] = p;
}

/** Write group particle slot's wrapped position (with its cell in w), slot and atom at its place in cell order (cellStart: global or shared memory). */
inline DEVICE void scatterCell(int slot, const int* RESTRICT cellOf, const int* RESTRICT cellRank, const int* cellStart,
        const real4* RESTRICT wrapped, const int* RESTRICT groupAtoms, real4* RESTRICT sortedPos, int* RESTRICT sortedSlot,
        int* RESTRICT sortedAtom) {
    const int cell = cellOf[slot], k = cellStart[cell]+cellRank[slot];
    real4 p = wrapped[slot];
    p.w = CELL_AS_REAL(cell);
    sortedPos[k] = p;
    sortedSlot[k] = slot;
    sortedAtom[k] = groupAtoms[slot];
}

/**
 * Find every group particle's cell and its rank within the cell; keep the wrapped position.
 * Clears workCounter[2], where a build of home lists counts the neighbours in cell order whose
 * atoms are close in memory (computeCoordinationCells).
 * Where the bins fit in one scan chunk (numBins <= SCAN_CHUNK; then blocks of 1024 threads), the
 * last block to finish turns the counts into starts (as scanCellBlocks would) and clears the
 * counter of work items.
 */
KERNEL void assignCells(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numBinned, int numA, CellGrid grid,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        unsigned int* RESTRICT cellCount, int* RESTRICT cellOf, int* RESTRICT cellRank, real4* RESTRICT wrapped,
        int numBins, int* RESTRICT cellStart, unsigned int* RESTRICT blocksDone, unsigned int* RESTRICT workCounter,
        const int* RESTRICT rebuildStamp, int stamp) {
    DEPENDENT_KERNEL_START
    if (isBinningSkipped(rebuildStamp, stamp))
        return;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        workCounter[2] = 0;
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x)
        assignCell(slot, posq, groupAtoms, numA, grid, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ,
                cellCount, cellOf, cellRank, wrapped);
    if (numBins > SCAN_CHUNK || !isLastBlockToFinish(blocksDone))
        return;
    const int total = scanChunk((int*) cellCount, cellStart, 0, numBins, 0, true);
    if (threadIdx.x == 0) {
        cellStart[numBins] = total;
        *workCounter = 0;
    }
}

/**
 * The counts turned into cell starts, SCAN_CHUNK cells a block of 1024 threads: each block scans
 * its cells (and clears their counts) and records its total; the last block to finish scans the
 * totals into the blocks' offsets, which addCellOffsets adds, and clears the counter of work items.
 */
KERNEL void scanCellBlocks(unsigned int* RESTRICT cellCount, int* RESTRICT cellStart, int numBins, int* RESTRICT blockOffset,
        unsigned int* RESTRICT blocksDone, unsigned int* RESTRICT workCounter, const int* RESTRICT rebuildStamp, int stamp) {
    DEPENDENT_KERNEL_START
    if (isBinningSkipped(rebuildStamp, stamp))
        return;
    const int first = blockIdx.x*SCAN_CHUNK;
    const int total = scanChunk((int*) cellCount, cellStart, first, min(SCAN_CHUNK, numBins-first), 0, true);
    if (threadIdx.x == 0)
        blockOffset[blockIdx.x] = total;
    if (!isLastBlockToFinish(blocksDone))
        return;
    int carry = 0;
    for (int base = 0; base < gridDim.x; base += SCAN_CHUNK)
        carry = scanChunk(blockOffset, blockOffset, base, min(SCAN_CHUNK, (int) gridDim.x-base), carry, false);
    if (threadIdx.x == 0) {
        cellStart[numBins] = carry;
        *workCounter = 0;
    }
}

/** Add each block's offset to the starts of its cells. */
KERNEL void addCellOffsets(int* RESTRICT cellStart, int numBins, const int* RESTRICT blockOffset, const int* RESTRICT rebuildStamp,
        int stamp) {
    DEPENDENT_KERNEL_START
    if (isBinningSkipped(rebuildStamp, stamp))
        return;
    for (int cell = blockIdx.x*blockDim.x+threadIdx.x; cell < numBins; cell += blockDim.x*gridDim.x)
        cellStart[cell] += blockOffset[cell/SCAN_CHUNK];
}

/** Write the wrapped positions (with the cell in w), the slots and the atoms in cell order. */
KERNEL void scatterCells(const int* RESTRICT cellOf, const int* RESTRICT cellRank, const int* RESTRICT cellStart,
        const real4* RESTRICT wrapped, const int* RESTRICT groupAtoms, int numBinned, real4* RESTRICT sortedPos,
        int* RESTRICT sortedSlot, int* RESTRICT sortedAtom, const int* RESTRICT rebuildStamp, int stamp) {
    DEPENDENT_KERNEL_START
    if (isBinningSkipped(rebuildStamp, stamp))
        return;
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x)
        scatterCell(slot, cellOf, cellRank, cellStart, wrapped, groupAtoms, sortedPos, sortedSlot, sortedAtom);
}

/**
 * The whole binning by one block of 1024 threads, with the counts and starts in shared memory
 * (numBins <= SCAN_CHUNK): what assignCells (with its scan) and scatterCells do, in one block of
 * the neighbour lists' check where it finds the lists stale (checkNeighborList), so that the
 * evaluations that rebuild nothing launch no binning at all. Also clears workCounter[2] as
 * assignCells does; the check cleared the counter of work items.
 */
inline DEVICE void binInOneBlock(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numBinned, int numA,
        const CellGrid& grid, real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        int* RESTRICT cellOf, int* RESTRICT cellRank, real4* RESTRICT wrapped, int numBins, int* RESTRICT cellStart,
        real4* RESTRICT sortedPos, int* RESTRICT sortedSlot, int* RESTRICT sortedAtom, unsigned int* RESTRICT workCounter) {
    // The counts, then the starts.
    __shared__ int bins[SCAN_CHUNK];
    for (int cell = threadIdx.x; cell < numBins; cell += blockDim.x)
        bins[cell] = 0;
    __syncthreads();
    for (int slot = threadIdx.x; slot < numBinned; slot += blockDim.x)
        assignCell(slot, posq, groupAtoms, numA, grid, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ,
                (unsigned int*) bins, cellOf, cellRank, wrapped);
    __syncthreads();
    int value[4], start[4];
    for (int i = 0; i < 4; i++)
        value[i] = (4*threadIdx.x+i < numBins ? bins[4*threadIdx.x+i] : 0);
    const int total = scanBlockValues(value, start, 0);
    for (int i = 0; i < 4; i++)
        if (4*threadIdx.x+i < numBins) {
            bins[4*threadIdx.x+i] = start[i];
            cellStart[4*threadIdx.x+i] = start[i];
        }
    if (threadIdx.x == 0) {
        cellStart[numBins] = total;
        workCounter[2] = 0;
    }
    __syncthreads();
    // Each thread scatters the slots it assigned (its own writes of cellOf, cellRank and wrapped).
    for (int slot = threadIdx.x; slot < numBinned; slot += blockDim.x)
        scatterCell(slot, cellOf, cellRank, bins, wrapped, groupAtoms, sortedPos, sortedSlot, sortedAtom);
}
