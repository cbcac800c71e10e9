/**
 * Cell lists for a finite cutoff in a periodic box, built on the GPU at every evaluation and
 * used by the coordination and the histogram kernels.
 *
 * The box (rectangular or triclinic in OpenMM's reduced form) is divided into nx x ny x nz cells
 * of equal size in fractional coordinates; cell (x, y, z) has index (z*ny+y)*nx+x, and with two
 * groups the cells of group B follow those of group A. assignCells wraps each particle into the
 * box and finds its cell, scanCells turns the counts into starts, scatterCells writes the wrapped
 * positions in cell order, so that a row of cells along x is one contiguous range.
 *
 * A work item is one home cell of L and one row (oy, oz) of S cells, taken by one warp from a
 * counter (nextCellItem) so that uneven cells balance over the GPU: the cells within rx, ry, rz
 * of the home cell, at most three contiguous ranges, each with the periodic shift that makes its
 * particles the images nearest to the home cell. With at least 2r+1 cells in every dimension,
 * every image within the cutoff lies in exactly one range. One group visits the rows after
 * (0, 0) in (oz, oy) order and, in the home row, the home cell (pairs j > i) and the cells after
 * it: each unordered pair once.
 */

typedef struct {
    int nx, ny, nz, rx, ry, rz, rowsPerCell, numCells, lBase, sBase;
} CellGrid;

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

/** Find every group particle's cell and its rank within the cell; keep the wrapped position. */
KERNEL void assignCells(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numBinned, int numA, CellGrid grid,
        real4 invPeriodicBoxSize, real4 periodicBoxVecX, real4 periodicBoxVecY, real4 periodicBoxVecZ,
        unsigned int* RESTRICT cellCount, int* RESTRICT cellOf, int* RESTRICT cellRank, real4* RESTRICT wrapped) {
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x) {
        real4 p = posq[groupAtoms[slot]];
        int cell = findCell(&p, grid, invPeriodicBoxSize, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
        if (slot >= numA)
            cell += grid.numCells;
        cellOf[slot] = cell;
        cellRank[slot] = atomicAdd(&cellCount[cell], 1u);
        wrapped[slot] = p;
    }
}

/**
 * Exclusive scan of the counts into cellStart[0..numBins], by one block of 1024 threads, 4096
 * cells a round; clears the counts, and the counter of the work items the pair kernels take.
 */
KERNEL void scanCells(unsigned int* RESTRICT cellCount, int* RESTRICT cellStart, int numBins, unsigned int* RESTRICT workCounter) {
    __shared__ int warpTotals[32];
    __shared__ int carry;
    const int lane = threadIdx.x%32, warp = threadIdx.x/32;
    if (threadIdx.x == 0) {
        carry = 0;
        *workCounter = 0;
    }
    for (int base = 0; base < numBins; base += 4*blockDim.x) {
        const int first = base+4*threadIdx.x;
        int count[4], sum = 0;
        for (int i = 0; i < 4; i++) {
            count[i] = (first+i < numBins ? cellCount[first+i] : 0);
            sum += count[i];
        }
        int inclusive = sum;
        for (int offset = 1; offset < 32; offset *= 2) {
            int value = __shfl_up_sync(0xffffffff, inclusive, offset);
            if (lane >= offset)
                inclusive += value;
        }
        if (lane == 31)
            warpTotals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            int total = (lane < blockDim.x/32 ? warpTotals[lane] : 0), scanned = total;
            for (int offset = 1; offset < 32; offset *= 2) {
                int value = __shfl_up_sync(0xffffffff, scanned, offset);
                if (lane >= offset)
                    scanned += value;
            }
            warpTotals[lane] = scanned-total;
        }
        __syncthreads();
        int start = carry+warpTotals[warp]+inclusive-sum;
        for (int i = 0; i < 4; i++)
            if (first+i < numBins) {
                cellStart[first+i] = start;
                cellCount[first+i] = 0;
                start += count[i];
            }
        __syncthreads();
        if (threadIdx.x == blockDim.x-1)
            carry = start;
        __syncthreads();
    }
    if (threadIdx.x == 0)
        cellStart[numBins] = carry;
}

/** Write the wrapped positions and the slots in cell order. */
KERNEL void scatterCells(const int* RESTRICT cellOf, const int* RESTRICT cellRank, const int* RESTRICT cellStart,
        const real4* RESTRICT wrapped, int numBinned, real4* RESTRICT sortedPos, int* RESTRICT sortedSlot) {
    for (int slot = blockIdx.x*blockDim.x+threadIdx.x; slot < numBinned; slot += blockDim.x*gridDim.x) {
        int k = cellStart[cellOf[slot]]+cellRank[slot];
        sortedPos[k] = wrapped[slot];
        sortedSlot[k] = slot;
    }
}

/** The key of sorted particle k for PAIR_WANTED: its sorted index, or its original index when groups overlap. */
inline DEVICE int cellKey(int k, const int* RESTRICT sortedSlot, const int* RESTRICT groupOriginal) {
#ifdef GROUPS_OVERLAP
    return groupOriginal[sortedSlot[k]];
#else
    return k;
#endif
}

/**
 * Load the sorted S particles [first, end) into this warp's shared slots in batches of 32,
 * shifted to the images to use, and hand each batch to the visitor.
 */
template <class Visitor>
inline DEVICE void visitCellRange(int first, int end, real3 shift, bool diagonal, const real4* RESTRICT sortedPos,
        const int* RESTRICT sortedSlot, const int* RESTRICT groupOriginal, real4* sPos, int* sKey, Visitor& visitor) {
    const int lane = threadIdx.x%32;
    for (int batch = first; batch < end; batch += 32) {
        const int count = min(32, end-batch);
        if (lane < count) {
            real4 p = sortedPos[batch+lane];
            sPos[lane] = make_real4(p.x+shift.x, p.y+shift.y, p.z+shift.z, p.w);
            sKey[lane] = cellKey(batch+lane, sortedSlot, groupOriginal);
        }
        __syncwarp();
        visitor.batch(sPos, sKey, count, diagonal, batch);
        __syncwarp();
    }
}

/**
 * One work item, by one warp: the home cell's particles, 32 at a time (visitor.beginL/endL),
 * against the S ranges of one row (visitor.batch). sPos and sKey are the warp's 32 shared slots.
 */
template <class Visitor>
inline DEVICE void visitCellItem(int item, const CellGrid& grid, const int* RESTRICT cellStart, const real4* RESTRICT sortedPos,
        const int* RESTRICT sortedSlot, const int* RESTRICT groupOriginal, real4 vecX, real4 vecY, real4 vecZ,
        real4* sPos, int* sKey, Visitor& visitor) {
    const int lane = threadIdx.x%32;
    const int home = item/grid.rowsPerCell, row = item-home*grid.rowsPerCell;
    const int hx = home%grid.nx, hy = (home/grid.nx)%grid.ny, hz = home/(grid.nx*grid.ny);
    const int width = 2*grid.ry+1;
#ifdef ONE_GROUP
    const bool homeRow = (row == 0);
    const int offset = grid.rz*width+grid.ry+row;
#else
    const bool homeRow = false;
    const int offset = row;
#endif
    const int oz = offset/width-grid.rz, oy = offset%width-grid.ry;
    int y = hy+oy, z = hz+oz;
    const int wy = (y < 0 ? -1 : (y >= grid.ny ? 1 : 0)), wz = (z < 0 ? -1 : (z >= grid.nz ? 1 : 0));
    y -= wy*grid.ny;
    z -= wz*grid.nz;
    const real3 rowShift = make_real3(wy*vecY.x+wz*vecZ.x, wy*vecY.y+wz*vecZ.y, wz*vecZ.z);
    const int rowCells = grid.sBase+(z*grid.ny+y)*grid.nx;
    const int homeStart = cellStart[grid.lBase+home], homeEnd = cellStart[grid.lBase+home+1];
    const int xFirst = (homeRow ? hx+1 : hx-grid.rx), xLast = hx+grid.rx;
    for (int first = homeStart; first < homeEnd; first += 32) {
        const int l = first+lane;
        visitor.beginL(l, l < homeEnd);
        if (homeRow)
            visitCellRange(homeStart, homeEnd, make_real3(0, 0, 0), true, sortedPos, sortedSlot, groupOriginal, sPos, sKey, visitor);
        // Unwrapped x cells [xFirst, xLast], split where they wrap around the box.
        for (int wx = -1; wx <= 1; wx++) {
            const int a = max(xFirst, wx*grid.nx), b = min(xLast, wx*grid.nx+grid.nx-1);
            if (a > b)
                continue;
            const real3 shift = make_real3(rowShift.x+wx*vecX.x, rowShift.y, rowShift.z);
            visitCellRange(cellStart[rowCells+a-wx*grid.nx], cellStart[rowCells+b-wx*grid.nx+1], shift, false, sortedPos,
                    sortedSlot, groupOriginal, sPos, sKey, visitor);
        }
        visitor.endL(l, l < homeEnd);
    }
}

/** The next work item for this warp, from the counter that scanCells clears. */
inline DEVICE int nextCellItem(unsigned int* workCounter) {
    int item;
    if (threadIdx.x%32 == 0)
        item = atomicAdd(workCounter, 1u);
    return __shfl_sync(0xffffffff, item, 0);
}
