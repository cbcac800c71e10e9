/**
 * The L side is cut into homes of 32 or fewer particles, each within one row of cells. With
 * runLength > 0, a home is runLength consecutive cells along x (numRuns per row of cells; the last
 * one may be shorter), taken 32 particles at a time. With runLength == 0 (chunks), the L particles
 * in cell order are cut into chunks of 32 (numRuns of them), and a chunk that spans rows into one
 * home per row: homes then fill the lanes of a warp however few particles a cell holds. A work
 * item is one unit (a run or a chunk; numUnits in all) and rowsPerItem of its rows (oy, oz) of S
 * cells (itemsPerRun items a unit), taken by one warp from a counter (nextCellItem) so that uneven
 * cells balance over the GPU. For a home in cells [hx0, hx1] of its row, the cells of a row within
 * rx of it along x are at most three contiguous ranges, each with the periodic shift of its wrap
 * around the box. Of those, only the particles within the cutoff of the bounding box of the home's
 * particles are kept, compacted into full batches of 32. With ny >= 2ry+1, nz >= 2rz+1 and nx >=
 * 2rx+1, the nearest image of every pair within the cutoff lies in a range; a range never holds a
 * particle twice with the same shift, and every other image is beyond the cutoff. One group visits
 * the rows after (0, 0) in (oz, oy) order and, in the home row, the particles from the home's
 * first one to the end of its cell hx1 (pairs j > i) and the rx cells after it: each unordered
 * pair once.
 */

/** The key of sorted particle k (slot: its slot) for PAIR_WANTED: its original index when groups overlap, else k. */
inline DEVICE int cellKey(int k, int slot, const int* RESTRICT groupOriginal) {
#ifdef GROUPS_OVERLAP
    return groupOriginal[slot];
#else
    return k;
#endif
}

/**
 * Start a cell-list visitor's L particle, sorted particle index and slot: its position, key and a
 * zero gradient. A lane without a particle is placed far beyond the cutoff of every S particle
 * (and of the padding, flushCellBatch), so that its pairs count zero without a test.
 */
inline DEVICE void beginCellLane(LaneParticles<1>& l, int index, int slot, bool valid, real4 position,
        const int* RESTRICT groupOriginal) {
    l.valid[0] = valid;
    l.pos[0] = (valid ? position : make_real4((real) -1e15, (real) -1e15, (real) -1e15, 0));
    l.key[0] = (valid ? cellKey(index, slot, groupOriginal) : -1);
    l.gradient[0] = make_real3(0, 0, 0);
}

/**
 * The warp's batch of S particles in shared memory: positions already shifted to the images to
 * use and keys for PAIR_WANTED (64 places each: particle k at batchPlace(k) and again BATCH_COPY
 * places further, so that a rotation reads place first+step without wrapping: with
 * CELL_HALF_BATCHES, particle k of half h = k/16 at 32*h+k%16 and 16 further, else k and k+32),
 * and the particles' sorted indices (place k); count of them filled, and whether any is from the
 * home run (a diagonal batch of one group). Where record is not NULL, a home list is being built:
 * every particle the filter keeps is also written there as a list entry (recorded places used of
 * recordCapacity; see visitCellHome). Where near is not NULL, a home list is being read and
 * the entries that the visitor found within dmax are written there as a shorter one (nearWritten
 * places used; see visitHomeList).
 */
typedef struct {
    real4* pos;
    int* key;
    int* index;
    int count;
    bool diagonal;
    unsigned int* record;
    int recorded, recordCapacity;
    unsigned int* near;
    int nearWritten;
} CellBatch;

/** The shared memory of the batches of a block's warps (blockDim.x == TILE), and this warp's batch in it. */
#define CELL_BATCH_MEMORY __shared__ real4 cellBatchPos[2*TILE]; __shared__ int cellBatchKey[2*TILE], cellBatchIndex[TILE];
#define WARP_CELL_BATCH {cellBatchPos+64*(threadIdx.x/32), cellBatchKey+64*(threadIdx.x/32), cellBatchIndex+32*(threadIdx.x/32), \
        0, false, NULL, 0, 0, NULL, 0}

/**
 * The L particles a lane of the cell coordination kernel holds: two with CELL_HALF_BATCHES, where
 * each half of a warp meets one half of a batch (halfBatch: half the shared loads and shuffles a
 * pair, for registers that double precision cannot spare), else one. The histogram's lanes hold one.
 */
#ifdef CELL_HALF_BATCHES
#define CELL_L_PER_LANE 2
#define BATCH_COPY 16
#else
#define CELL_L_PER_LANE 1
#define BATCH_COPY 32
#endif

/** The lanes that meet one part of a batch: all 32 with one L particle a lane, each half with two. */
#define CELL_WIDTH (32/CELL_L_PER_LANE)

/**
 * The warp's L particles, one a lane (lane l: position pos and key of particle l), spread over the
 * lanes as the batch loops hold them: lane q of part h (q = lane%CELL_WIDTH) holds particles q,
 * q+CELL_WIDTH, ... in lPos and lKey (w 0), and meets the S particles of part h of each batch.
 */
inline DEVICE void spreadLParticles(real4 pos, int key, real4* lPos, int* lKey) {
#ifdef CELL_HALF_BATCHES
    const int q = threadIdx.x%CELL_WIDTH;
    for (int i = 0; i < CELL_L_PER_LANE; i++) {
        lPos[i] = make_real4(__shfl_sync(0xffffffff, pos.x, q+CELL_WIDTH*i), __shfl_sync(0xffffffff, pos.y, q+CELL_WIDTH*i),
                __shfl_sync(0xffffffff, pos.z, q+CELL_WIDTH*i), 0);
        lKey[i] = __shfl_sync(0xffffffff, key, q+CELL_WIDTH*i);
    }
#else
    lPos[0] = pos;
    lKey[0] = key;
#endif
}

/** A value a lane has for each of its L particles (spreadLParticles' layout), spread likewise from one a lane (lane l: particle l's). */
inline DEVICE void spreadLValue(real value, real* lValue) {
#ifdef CELL_HALF_BATCHES
    for (int i = 0; i < CELL_L_PER_LANE; i++)
        lValue[i] = __shfl_sync(0xffffffff, value, threadIdx.x%CELL_WIDTH+CELL_WIDTH*i);
#else
    lValue[0] = value;
#endif
}

/**
 * The inverse of spreadLParticles for sums: from the parts that the lanes hold for their L particles
 * (part[i]: particle lane%CELL_WIDTH+CELL_WIDTH*i, over the S particles of the lane's part of each
 * batch), particle l's total, on lane l.
 */
inline DEVICE real gatherLTotal(const real* part) {
#ifdef CELL_HALF_BATCHES
    // Lane q of half h needs particle q+16h: its own part and that of the lane in the other half.
    const bool upper = (threadIdx.x%32 >= 16);
    return (upper ? part[1] : part[0])+__shfl_xor_sync(0xffffffff, upper ? part[0] : part[1], 16);
#else
    return part[0];
#endif
}

/** gatherLTotal() for vectors. */
inline DEVICE real3 gatherLTotal(const real3* part) {
    real x[CELL_L_PER_LANE], y[CELL_L_PER_LANE], z[CELL_L_PER_LANE];
    for (int i = 0; i < CELL_L_PER_LANE; i++) {
        x[i] = part[i].x;
        y[i] = part[i].y;
        z[i] = part[i].z;
    }
    return make_real3(gatherLTotal(x), gatherLTotal(y), gatherLTotal(z));
}

/** The place of particle k (0 to 31) of a batch in its positions and keys; its copy is BATCH_COPY places further. */
inline DEVICE int batchPlace(int k) {
#ifdef CELL_HALF_BATCHES
    return 2*(k & 16)+(k & 15);
#else
    return k;
#endif
}

/** Store S particle k of the batch, p, with its key and its sorted index. */
inline DEVICE void storeInBatch(CellBatch& b, int k, real4 p, int key, int index) {
    const int place = batchPlace(k);
    b.pos[place] = p;
    b.pos[place+BATCH_COPY] = p;
    b.key[place] = key;
    b.key[place+BATCH_COPY] = key;
    b.index[k] = index;
}

/**
 * Hand the batch to the visitor and empty it. The slots past count hold particles far beyond the
 * cutoff, so that a visitor may treat every batch as full.
 */
template <class Visitor>
inline DEVICE void flushCellBatch(CellBatch& b, int count, Visitor& visitor) {
    const int lane = threadIdx.x%32;
    if (lane >= count)
        storeInBatch(b, lane, make_real4((real) 1e15, (real) 1e15, (real) 1e15, 0), 0x7fffffff, 0);
    __syncwarp();
    visitor.batch(b.pos, b.key, b.index, count, b.diagonal);
    __syncwarp();
}

/**
 * Whether p is within sqrt(filter2) of any of the warp's L positions (pl, one a lane; a lane
 * without an L particle of the home holds a position of the home's row or group, which may only
 * keep more).
 */
inline DEVICE bool nearWarpParticle(real4 p, real4 pl, real filter2) {
    bool near = false;
    for (int i = 0; i < 32; i++) {
        const real dx = p.x-__shfl_sync(0xffffffff, pl.x, i), dy = p.y-__shfl_sync(0xffffffff, pl.y, i);
        const real dz = p.z-__shfl_sync(0xffffffff, pl.z, i);
        near |= (dx*dx+dy*dy+dz*dz <= filter2);
    }
    return near;
}

/**
 * Load the sorted S particles [first, end) 32 at a time, shifted by shift (of image code), keep
 * those within the filter distance of the L bounding box [lo, hi] (and, where a home list is
 * being built, of one of the L particles: pl, the lane's; nearWarpParticle keeps about a quarter
 * fewer than the box alone at water's density, for every evaluation that reads the list, but
 * costs more than it saves where the filter runs at every evaluation), compact them (ballot) and
 * hand every full batch of 32 to the visitor. With one group, the particles of the home run
 * (home) pair only with L particles of lower sorted index: their key is their sorted index, that
 * of the others INT_MAX.
 */
template <class Visitor>
inline DEVICE void filterCellRange(int first, int end, real3 shift, int code, bool home, real3 lo, real3 hi, real4 pl, real filter2,
        const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, const int* RESTRICT groupOriginal, CellBatch& b,
        Visitor& visitor) {
    const int lane = threadIdx.x%32;
    // The next 32 positions (and, where keys need them, slots) load while these are filtered and visited.
    real4 next = (first+lane < end ? sortedPos[first+lane] : make_real4(0, 0, 0, 0));
    int nextSlot = (first+lane < end ? sortedSlot[first+lane] : 0);
    for (int base = first; base < end; base += 32) {
        const int k = base+lane;
        bool keep = false;
        real4 p = next;
        const int particleSlot = nextSlot;
        if (k+32 < end) {
            next = sortedPos[k+32];
            nextSlot = sortedSlot[k+32];
        }
        if (k < end) {
            p.x += shift.x;
            p.y += shift.y;
            p.z += shift.z;
            real dx = max(max(lo.x-p.x, p.x-hi.x), (real) 0);
            real dy = max(max(lo.y-p.y, p.y-hi.y), (real) 0);
            real dz = max(max(lo.z-p.z, p.z-hi.z), (real) 0);
            keep = (dx*dx+dy*dy+dz*dz <= filter2);
        }
        if (b.record != NULL && __any_sync(0xffffffff, keep))
            keep &= nearWarpParticle(p, pl, filter2);
        const unsigned int kept = __ballot_sync(0xffffffff, keep);
        if (kept == 0)
            continue;
        const int before = __popc(kept & ((1u << lane)-1));
        if (b.record != NULL) {
            if (keep && b.recorded+before < b.recordCapacity)
                b.record[b.recorded+before] = k | ((unsigned int) (home ? HOME_CODE : code) << LIST_INDEX_BITS);
            b.recorded += __popc(kept);
        }
        int slot = b.count+before;
#ifdef ONE_GROUP
        const int key = (home ? k : 0x7fffffff);
#else
        const int key = (keep ? cellKey(k, particleSlot, groupOriginal) : 0);
#endif
        if (keep && slot < 32)
            storeInBatch(b, slot, p, key, k);
        b.diagonal |= home;
        b.count += __popc(kept);
        if (b.count >= 32) {
            flushCellBatch(b, 32, visitor);
            b.count -= 32;
            b.diagonal = (home && b.count > 0);
            if (keep && slot >= 32)
                storeInBatch(b, slot-32, p, key, k);
        }
    }
}

/** The bounding box of the positions of a warp's valid lanes (at least one). */
inline DEVICE void warpBounds(real4 p, bool valid, real3* lo, real3* hi) {
    const real far = (real) 1e30;
    real3 a = (valid ? make_real3(p.x, p.y, p.z) : make_real3(far, far, far));
    real3 c = (valid ? a : make_real3(-far, -far, -far));
    for (int mask = 16; mask > 0; mask /= 2) {
        a.x = min(a.x, __shfl_xor_sync(0xffffffff, a.x, mask));
        a.y = min(a.y, __shfl_xor_sync(0xffffffff, a.y, mask));
        a.z = min(a.z, __shfl_xor_sync(0xffffffff, a.z, mask));
        c.x = max(c.x, __shfl_xor_sync(0xffffffff, c.x, mask));
        c.y = max(c.y, __shfl_xor_sync(0xffffffff, c.y, mask));
        c.z = max(c.z, __shfl_xor_sync(0xffffffff, c.z, mask));
    }
    *lo = a;
    *hi = c;
}

/** The periodic shift wx*a + wy*b + wz*c of a range of cells (each of wx, wy, wz -1, 0 or 1). */
inline DEVICE real3 cellRangeShift(int wx, int wy, int wz, real4 vecX, real4 vecY, real4 vecZ) {
    return make_real3((wy*vecY.x+wz*vecZ.x)+wx*vecX.x, wy*vecY.y+wz*vecZ.y, wz*vecZ.z);
}

/** The periodic shift of an image code (IMAGE_CODE; HOME_CODE: none), for a table of all of them. */
inline DEVICE real4 imageShift(int code, real4 vecX, real4 vecY, real4 vecZ) {
    const real3 shift = (code == HOME_CODE ? make_real3(0, 0, 0) : cellRangeShift(code%3-1, (code/3)%3-1, code/9-1, vecX, vecY, vecZ));
    return make_real4(shift.x, shift.y, shift.z, 0);
}

/**
 * The cells [xFirst, xLast] of cell row (y, z) of the grid whose cells start at cellBase, all
 * three unwrapped (within one box of the grid), split where they wrap around the box:
 * visit(first, end, wx, wy, wz) for each range, with its sorted particles [first, end) and the
 * periodic image (cellRangeShift) that brings them next to the unwrapped cells.
 */
template <class RangeVisitor>
inline DEVICE void visitRowRanges(int y, int z, int xFirst, int xLast, int cellBase, const CellGrid& grid,
        const int* RESTRICT cellStart, RangeVisitor& visit) {
    const int wy = (y < 0 ? -1 : (y >= grid.ny ? 1 : 0)), wz = (z < 0 ? -1 : (z >= grid.nz ? 1 : 0));
    y -= wy*grid.ny;
    z -= wz*grid.nz;
    const int rowCells = cellBase+(z*grid.ny+y)*grid.nx;
    for (int wx = -1; wx <= 1; wx++) {
        const int a = max(xFirst, wx*grid.nx), b = min(xLast, wx*grid.nx+grid.nx-1);
        if (a <= b)
            visit(cellStart[rowCells+a-wx*grid.nx], cellStart[rowCells+b-wx*grid.nx+1], wx, wy, wz);
    }
}

/**
 * The S cells of one row (oy, oz) around home run [hx0, hx1] of cell row (hy, hz): the unwrapped
 * x cells [xFirst, xLast] (in the home row of one group, the cells after the run), each range
 * filtered into the batch with its periodic shift (lo, hi: the L bounding box; pl: the lane's L position).
 */
template <class Visitor>
inline DEVICE void visitCellRow(int row, int hx0, int hx1, int hy, int hz, const CellGrid& grid, const int* RESTRICT cellStart,
        real3 lo, real3 hi, real4 pl, real filter2, const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot,
        const int* RESTRICT groupOriginal, real4 vecX, real4 vecY, real4 vecZ, CellBatch& batch, Visitor& visitor) {
    const int width = 2*grid.ry+1;
#ifdef ONE_GROUP
    const bool homeRow = (row == 0);
    const int offset = grid.rz*width+grid.ry+row;
#else
    const bool homeRow = false;
    const int offset = row;
#endif
    const int oz = offset/width-grid.rz, oy = offset%width-grid.ry;
    auto filterRange = [&] (int first, int end, int wx, int wy, int wz) {
        filterCellRange(first, end, cellRangeShift(wx, wy, wz, vecX, vecY, vecZ), IMAGE_CODE(wx, wy, wz), false, lo, hi, pl, filter2,
                sortedPos, sortedSlot,
                groupOriginal, batch, visitor);
    };
    visitRowRanges(hy+oy, hz+oz, (homeRow ? hx1+1 : hx0-grid.rx), hx1+grid.rx, grid.sBase, grid, cellStart, filterRange);
}

/**
 * One home of a work item: the warp's L particles (lane's sorted index l, slot lSlot, position pl;
 * valid where the lane holds one), all in row (hy, hz) within cells [hx0, hx1], the first of them
 * at sorted index homeFirst (visitor.beginL/endL), against the S particles of rows
 * [firstRow, endRow) that lie within the cutoff of their bounding box, in batches of 32
 * (visitor.batch). batch holds the warp's shared slots. Where it builds a home list (record), the
 * home takes HOME_HEADER places (the sorted index of lane 0's L particle, the lanes that hold
 * one, the number of entries that follow) and then its entries (visitHomeList reads them).
 */
template <class Visitor>
inline DEVICE void visitCellHome(int homeFirst, int hx0, int hx1, int hy, int hz, int firstRow, int endRow, int l, int lSlot,
        bool valid, real4 pl, const CellGrid& grid, real cutoff2, const int* RESTRICT cellStart, const real4* RESTRICT sortedPos,
        const int* RESTRICT sortedSlot, const int* RESTRICT groupOriginal, real4 vecX, real4 vecY, real4 vecZ, CellBatch& batch,
        Visitor& visitor) {
    // Rounding never drops a pair the exact test would keep.
    const real filter = SQRT(cutoff2)*(real) 1.0001+(real) 1e-5;
    real3 lo, hi;
    warpBounds(pl, valid, &lo, &hi);
    visitor.beginL(l, lSlot, valid, pl);
    batch.count = 0;
    batch.diagonal = false;
    const int header = batch.recorded;
    batch.recorded += (batch.record != NULL ? HOME_HEADER : 0);
#ifdef ONE_GROUP
    if (firstRow == 0)
        filterCellRange(homeFirst, cellStart[grid.lBase+(hz*grid.ny+hy)*grid.nx+hx1+1], make_real3(0, 0, 0), HOME_CODE, true, lo, hi,
                pl, filter*filter, sortedPos, sortedSlot, groupOriginal, batch, visitor);
#endif
    for (int row = firstRow; row < endRow; row++)
        visitCellRow(row, hx0, hx1, hy, hz, grid, cellStart, lo, hi, pl, filter*filter, sortedPos, sortedSlot, groupOriginal,
                vecX, vecY, vecZ, batch, visitor);
    if (batch.count > 0)
        flushCellBatch(batch, batch.count, visitor);
    const unsigned int lanes = __ballot_sync(0xffffffff, valid);
    if (batch.record != NULL && threadIdx.x%32 == 0 && batch.recorded <= batch.recordCapacity) {
        batch.record[header] = l;
        batch.record[header+1] = lanes;
        batch.record[header+2] = batch.recorded-header-HOME_HEADER;
    }
    visitor.endL(l, valid);
}

/**
 * One work item, by one warp: the homes of one run (32 particles at a time) or of one chunk (one
 * per row it spans; the lanes of its other rows idle) against rowsPerItem of their rows of S
 * cells (visitCellHome, called once so that it is inlined once). sortedPos: the positions in cell
 * order; cellPos: where the w of each holds its cell (sortedPos itself, unless a pass keeps
 * something else in sortedPos' w: kernels/particlehomes.cu).
 */
template <class Visitor>
inline DEVICE void visitCellItem(int item, const CellGrid& grid, real cutoff2, const int* RESTRICT cellStart,
        const real4* RESTRICT sortedPos, const real4* RESTRICT cellPos, const int* RESTRICT sortedSlot,
        const int* RESTRICT groupOriginal, real4 vecX, real4 vecY, real4 vecZ, CellBatch& batch, Visitor& visitor) {
    const int lane = threadIdx.x%32;
    const int home = item/grid.itemsPerRun, firstRow = (item-home*grid.itemsPerRun)*grid.rowsPerItem;
    const int endRow = min(firstRow+grid.rowsPerItem, grid.rowsPerRun);
    const bool chunk = (grid.runLength == 0);
    // A run: its cells and particles [first, end). A chunk: its particles [first, end), their
    // cells (within the L grid), and the lanes whose home is still to visit.
    int hx0 = 0, hx1 = 0, hy = 0, hz = 0, first, end, lCell = 0;
    if (chunk) {
        first = cellStart[grid.lBase]+32*home;
        end = min(first+32, cellStart[grid.lBase+grid.numCells]);
    }
    else {
        hx0 = (home%grid.numRuns)*grid.runLength;
        hx1 = min(hx0+grid.runLength, grid.nx)-1;
        hy = (home/grid.numRuns)%grid.ny;
        hz = home/(grid.numRuns*grid.ny);
        const int homeCells = grid.lBase+(hz*grid.ny+hy)*grid.nx;
        first = cellStart[homeCells+hx0];
        end = cellStart[homeCells+hx1+1];
    }
    unsigned int pending = 0;
    while (first < end) {
        const int l = first+lane;
        bool valid = (l < end);
        const real4 pl = sortedPos[valid ? l : first];
        const int lSlot = (valid ? sortedSlot[l] : -1);
        int homeFirst = first;
        if (chunk) {
            if (pending == 0) {
                pending = __ballot_sync(0xffffffff, valid);
                lCell = (valid ? REAL_AS_CELL(cellPos[l].w)-grid.lBase : 0);
            }
            const int leader = __ffs(pending)-1, firstCell = __shfl_sync(0xffffffff, lCell, leader), row = firstCell/grid.nx;
            valid = ((pending >> lane) & 1) && lCell/grid.nx == row;
            const unsigned int part = __ballot_sync(0xffffffff, valid);
            pending &= ~part;
            homeFirst = first+leader;
            hx0 = firstCell%grid.nx;
            hx1 = __shfl_sync(0xffffffff, lCell, 31-__clz(part))%grid.nx;
            hy = row%grid.ny;
            hz = row/grid.ny;
            if (pending == 0)
                first = end;
        }
        else
            first += 32;
        visitCellHome(homeFirst, hx0, hx1, hy, hz, firstRow, endRow, l, lSlot, valid, pl, grid, cutoff2, cellStart, sortedPos,
                sortedSlot, groupOriginal, vecX, vecY, vecZ, batch, visitor);
    }
}

/**
 * Whether the visitor found the lane's S particle of the batch it has just visited within dmax of
 * one of the home's L particles: true, unless a visitor that keeps track says otherwise (the first
 * pass of per-atom coordination numbers, kernels/particlehomes.cu, overloads this).
 */
template <class Visitor>
inline DEVICE bool sParticleNear(const Visitor& visitor) {
    return true;
}

/**
 * One work item from the home list that visitCellItem recorded for it (record, recorded places):
 * each home's L particles (sorted indices from its header's first on, the lanes its header names)
 * against the S particles of its entries, at their current positions pos (in the sorted order of
 * the build) shifted by shifts[code] (imageShift of every code), in batches of 32
 * (visitor.batch). No filter: the list holds every particle that was within the list cutoff
 * (dmax + skin) of the home's bounding box at the build, so while no particle has moved more than
 * half the skin, every pair within dmax is among them. Where batch.near is not NULL, the entries
 * that the visitor found within dmax of one of their home's L particles (sParticleNear()) are
 * written there as a home list of their own, homes without any left out (batch.nearWritten
 * places): what a later pass at the same positions needs.
 */
template <class Visitor>
inline DEVICE void visitHomeList(const unsigned int* RESTRICT record, int recorded, const real4* RESTRICT pos, const real4* shifts,
        CellBatch& batch, Visitor& visitor) {
    const int lane = threadIdx.x%32;
    for (int c = 0; c < recorded; ) {
        const int first = record[c], end = c+HOME_HEADER+record[c+2];
        const unsigned int lanes = record[c+1];
        const bool valid = (lanes >> lane) & 1;
        visitor.beginL(first+lane, -1, valid, pos[valid ? first+lane : first]);
        const int header = batch.nearWritten;
        batch.nearWritten += HOME_HEADER;
        // Two batches ahead the entries, one ahead their positions, so that the loads wait less.
        c += HOME_HEADER;
        unsigned int entry = (c+lane < end ? record[c+lane] : 0);
        real4 p = pos[entry & LIST_INDEX_MASK];
        unsigned int nextEntry = (c+32+lane < end ? record[c+32+lane] : 0);
        for (; c < end; c += 32) {
            const real4 nextP = pos[nextEntry & LIST_INDEX_MASK];
            const unsigned int laterEntry = (c+64+lane < end ? record[c+64+lane] : 0);
            const int index = entry & LIST_INDEX_MASK, code = entry >> LIST_INDEX_BITS;
            const bool home = (code == HOME_CODE && c+lane < end);
            if (c+lane < end) {
                const real4 shift = shifts[code];
                storeInBatch(batch, lane, make_real4(p.x+shift.x, p.y+shift.y, p.z+shift.z, p.w), (home ? index : 0x7fffffff), index);
            }
            batch.diagonal = __any_sync(0xffffffff, home);
            flushCellBatch(batch, min(32, end-c), visitor);
            if (batch.near != NULL) {
                const bool near = (c+lane < end && sParticleNear(visitor));
                const unsigned int kept = __ballot_sync(0xffffffff, near);
                if (near)
                    batch.near[batch.nearWritten+__popc(kept & ((1u << lane)-1))] = entry;
                batch.nearWritten += __popc(kept);
            }
            entry = nextEntry;
            p = nextP;
            nextEntry = laterEntry;
        }
        c = end;
        visitor.endL(first+lane, valid);
        if (batch.near != NULL) {
            const int kept = batch.nearWritten-header-HOME_HEADER;
            if (kept == 0)
                batch.nearWritten = header;
            else if (lane == 0) {
                batch.near[header] = first;
                batch.near[header+1] = lanes;
                batch.near[header+2] = kept;
            }
        }
    }
}

/**
 * At a build of lists (neighbors.cu), what checkNeighborList needs of sorted particle k of this
 * evaluation's binning: its slot, the shift that wrapped it into the box (its cell in w), and its
 * position, as the current and as the reference one.
 */
inline DEVICE void recordListParticle(int k, const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot,
        const real4* RESTRICT posq, const int* RESTRICT groupAtoms, real4* RESTRICT listPos, real4* RESTRICT refPos,
        real4* RESTRICT listShift, int* RESTRICT listSlot) {
    const int slot = sortedSlot[k];
    const real4 p = sortedPos[k], raw = posq[groupAtoms[slot]];
    listSlot[k] = slot;
    listShift[k] = make_real4(p.x-raw.x, p.y-raw.y, p.z-raw.z, p.w);
    listPos[k] = p;
    refPos[k] = p;
}

/** The next work item for this warp, from the counter that the binning clears. */
inline DEVICE int nextCellItem(unsigned int* workCounter) {
    int item;
    if (threadIdx.x%32 == 0)
        item = atomicAdd(workCounter, 1u);
    return __shfl_sync(0xffffffff, item, 0);
}

/** The number of work items of a grid. */
inline DEVICE int countCellItems(const CellGrid& grid) {
    return grid.numUnits*grid.itemsPerRun;
}
