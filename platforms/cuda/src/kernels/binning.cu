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
 * Exclusive scan of in[first, first+count) (count <= SCAN_CHUNK) into out[], by one block of
 * 1024 threads, 4 values a thread, starting from carry; returns the total in every thread.
 * in may be out: each thread reads its values before it writes them. With clear, in[] is zeroed.
 */
inline DEVICE int scanChunk(int* in, int* out, int first, int count, int carry, bool clear) {
    __shared__ int warpTotals[32];
    const int lane = threadIdx.x%32, warp = threadIdx.x/32, mine = first+4*threadIdx.x;
    int value[4], sum = 0;
    for (int i = 0; i < 4; i++) {
        value[i] = (4*threadIdx.x+i < count ? __ldcg(&in[mine+i]) : 0);
        sum += value[i];
    }
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
    int start = carry+(warp > 0 ? warpTotals[warp-1] : 0)+inclusive-sum;
    const int total = warpTotals[31];
    for (int i = 0; i < 4; i++)
        if (4*threadIdx.x+i < count) {
            out[mine+i] = start;
            if (clear)
                in[mine+i] = 0;
            start += value[i];
        }
    __syncthreads();
    return carry+total;
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
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x) {
        real4 p = posq[groupAtoms[slot]];
        int cell = findCell(&p, grid, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
        if (slot >= numA)
            cell += grid.numCells;
        cellOf[slot] = cell;
        cellRank[slot] = atomicAdd(&cellCount[cell], 1u);
        wrapped[slot] = p;
    }
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
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x) {
        const int cell = cellOf[slot], k = cellStart[cell]+cellRank[slot];
        real4 p = wrapped[slot];
        p.w = CELL_AS_REAL(cell);
        sortedPos[k] = p;
        sortedSlot[k] = slot;
        sortedAtom[k] = groupAtoms[slot];
    }
}
