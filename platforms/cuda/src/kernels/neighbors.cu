/**
 * Verlet neighbour lists for one group, or two, with a finite cutoff in a periodic box: the list
 * of each particle holds every other particle (with two groups: every particle of the other group,
 * the particle itself left out where the groups share it) within listCutoff = dmax + skin, and
 * stays valid until a particle has moved more than skin/2 from where it was when the lists were
 * built. With two groups the binning holds group A's cells first and then group B's (binning.cu).
 * There every particle of both has a list, so that here too each pair is in two lists; for the
 * plain CV with COORDINATION_LIST_SIDES=one (LIST_ONE_SIDED), only the particles of the smaller
 * group (see below). Each evaluation runs, in order:
 *   checkNeighborList   the current positions in list order (listPos) and, where a particle moved
 *                       too far (or the host asks), *rebuildStamp = stamp
 *   the cell binning    (binning.cu) only where *rebuildStamp == stamp, otherwise it returns at once
 *   computeCoordinationList  where *rebuildStamp == stamp, builds the lists from the cells and
 *                       evaluates the pairs on the way; otherwise evaluates the lists
 * so that the host never waits for whether the lists were rebuilt. The lists of particles go
 * further (CudaCoordinationNeighborList: the schedule of the binning): the host launches the
 * binning only where it forces a rebuild, and forces one where an earlier check asked for it.
 * checkNeighborList asks, without waiting, by a store to host memory (hint[0] = stamp) as soon as
 * a particle has moved further than sqrt(earlySkin2), before the lists are stale. Where it finds
 * them stale in an evaluation without the binning, *rebuildStamp = stamp | LIST_FALLBACK (and
 * hint[1] = stamp): that evaluation's passes take every pair from all particles
 * (visitAllParticles()), exact and slow, and the next evaluation the host sees it rebuilds.
 *
 * The list order is the cell order of the last build. A particle's entries are the list indices
 * of its neighbours, each with the periodic image used (IMAGE_CODE), so that evaluating a pair
 * needs no nearest-image reduction. Every unordered pair is in two lists (each particle adds only
 * its own gradient, without atomics, and counts half of s), but with LIST_ONE_SIDED: two groups
 * whose lists belong to one of them alone (0: A, the first list indices [0, cellStart[numCells]),
 * 1: B, the rest), the smaller. There each pair is in one list, counts whole, and its other
 * particle's gradient is added by atomics as the pair is evaluated; the other group's particles are
 * checked and positioned as the listed ones. With 6,894 and 1,000 particles a build then visits
 * the cells for 1,000 particles, not for 7,894, and took half the time, but an evaluation of the
 * lists took longer (docs/cuda-implementation.md). LIST_LANES lanes share a particle and
 * take its entries in turn; entry c of list particle k is at listPlace(k, c), so that those lanes
 * read consecutive words. A particle with more neighbours than the capacity keeps the true count
 * and is evaluated from the cells of the last build instead (correct, only slower), and the host
 * grows the capacity (maxCount).
 *
 * Large groups keep lists of homes instead, with the same check and binning: the cell kernel
 * (computeCoordinationCells in cellcoordination.cu, visitHomeList in traversal.cu) takes the place of
 * computeCoordinationList, and a list belongs to a work item of the cells, not to a particle.
 */

// Entries: LIST_INDEX_BITS and IMAGE_CODE in cellgrid.cu, imageShift in traversal.cu.

/** Added to the stamp in *rebuildStamp: the lists are stale and no binning ran (stamps have 30 bits). */
#define LIST_FALLBACK 0x40000000

/** Where entry c of list particle k is stored. */
inline DEVICE size_t listPlace(int k, int c, int numParticles) {
    return ((size_t) (c/LIST_LANES)*numParticles+k)*LIST_LANES+c%LIST_LANES;
}

/** The lanes of the warp that share this lane's particle. */
inline DEVICE unsigned int listLaneMask() {
    return (LIST_LANES == 32 ? 0xffffffffu : ((1u << LIST_LANES)-1) << ((threadIdx.x%32) & ~(LIST_LANES-1)));
}

/** A value summed over the lanes of a particle (every one of them gets the sum). */
inline DEVICE real listLaneSum(real v, unsigned int mask) {
    for (int offset = LIST_LANES/2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(mask, v, offset);
    return v;
}

/**
 * The current positions in list order, each with its cell of the last build in w, and whether
 * the lists must be rebuilt: a particle moved further than sqrt(halfSkin2) from where it was at
 * the last build (or its position is not finite), or the host asks (force). Where binned (the
 * binning runs in this evaluation), stale lists get *rebuildStamp = stamp, else stamp |
 * LIST_FALLBACK and hint[1] = stamp. Where hint is not NULL (the host schedules the binning), a
 * particle that moved further than sqrt(earlySkin2) sets hint[0] = stamp: a store to host memory
 * that asks the host for a rebuild (see the top of this file). Clears the counter of the cell
 * kernel's work items (which the binning clears too, where it runs). Where firstInvalid is not
 * NULL, also checks every position (checkPosition(), energy.cu), in place of checkPositions.
 */
KERNEL void checkNeighborList(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, const int* RESTRICT listSlot,
        const real4* RESTRICT listShift, const real4* RESTRICT refPos, real4* RESTRICT listPos, int numParticles, real halfSkin2,
        real earlySkin2, int force, int binned, int stamp, int* RESTRICT rebuildStamp, volatile int* RESTRICT hint,
        unsigned int* RESTRICT workCounter, int* RESTRICT firstInvalid, int* RESTRICT alarm, mixed* RESTRICT energyBuffer) {
    DEPENDENT_KERNEL_START
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *workCounter = 0;
    if (force) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            *rebuildStamp = stamp;
        // The lists' slots are not set yet: the positions by slot.
        if (firstInvalid != NULL)
            for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numParticles; k += blockDim.x*gridDim.x)
                checkPosition(posq[groupAtoms[k]], k, firstInvalid, alarm, energyBuffer);
        return;
    }
    bool moved = false, early = false;
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numParticles; k += blockDim.x*gridDim.x) {
        const real4 shift = listShift[k], r = refPos[k];
        const int slot = listSlot[k];
        real4 p = posq[groupAtoms[slot]];
        if (firstInvalid != NULL)
            checkPosition(p, slot, firstInvalid, alarm, energyBuffer);
        p = make_real4(p.x+shift.x, p.y+shift.y, p.z+shift.z, shift.w);
        listPos[k] = p;
        const real dx = p.x-r.x, dy = p.y-r.y, dz = p.z-r.z, d2 = dx*dx+dy*dy+dz*dz;
        moved |= !(d2 <= halfSkin2);
        early |= !(d2 <= earlySkin2);
    }
    if (__any_sync(0xffffffff, moved) && threadIdx.x%32 == 0) {
        *rebuildStamp = (binned ? stamp : stamp | LIST_FALLBACK);
        if (!binned)
            hint[1] = stamp;
    }
    if (hint != NULL && __any_sync(0xffffffff, early) && threadIdx.x%32 == 0)
        hint[0] = stamp;
}

/**
 * The particles [first, end) at positions pos, for list particle k (atom: its atom, with two
 * groups): the lanes of the particle take them in turn and call visitor(valid, j, code, image(pj))
 * equally often, valid false past the end and for k itself (one group: the same index; two groups:
 * the same atom of the binning, sortedAtom).
 */
template <class Image, class Visitor>
inline DEVICE void visitListRange(int k, int atom, int first, int end, const real4* RESTRICT pos, const int* RESTRICT sortedAtom,
        int code, const Image& image, Visitor& visitor) {
    const int t = threadIdx.x%LIST_LANES;
    for (int j = first+t; j-t < end; j += LIST_LANES) {
#ifdef ONE_GROUP
        const bool valid = (j < end && j != k);
#else
        const bool valid = (j < end && sortedAtom[j] != atom);
#endif
        visitor(valid, j, code, image(pos[valid ? j : k]));
    }
}

/**
 * The particles of the cells around list particle k (position pk, with its cell in w) at
 * positions pos: visitor(valid, j, code, pj) for each, pj shifted to the image of code. The lanes
 * of the particle take them in turn and call the visitor equally often (valid false past the end
 * and for k itself). With the grid's nx >= 2rx+1 (and so on), every image within the cutoff
 * appears once. With two groups the cells are the other group's, and valid is false for the
 * particle itself (sortedAtom, the atoms of the same binning, equal).
 */
template <class Visitor>
inline DEVICE void visitNeighborCells(int k, real4 pk, const real4* RESTRICT pos, const int* RESTRICT cellStart, const CellGrid& grid,
        const real4* shifts, const int* RESTRICT sortedAtom, Visitor& visitor) {
#ifdef ONE_GROUP
    const int cell = REAL_AS_CELL(pk.w), otherBase = 0, atom = 0;
#else
    const int ownCell = REAL_AS_CELL(pk.w), ownBase = (ownCell >= grid.numCells ? grid.numCells : 0);
    const int cell = ownCell-ownBase, otherBase = grid.numCells-ownBase, atom = sortedAtom[k];
#endif
    const int hx = cell%grid.nx, hy = (cell/grid.nx)%grid.ny, hz = cell/(grid.nx*grid.ny);
    auto visitRange = [&] (int first, int end, int wx, int wy, int wz) {
        const int code = IMAGE_CODE(wx, wy, wz);
        const real4 shift = shifts[code];
        auto image = [&] (real4 pj) {
            return make_real4(pj.x+shift.x, pj.y+shift.y, pj.z+shift.z, 0);
        };
        visitListRange(k, atom, first, end, pos, sortedAtom, code, image, visitor);
    };
    for (int oz = -grid.rz; oz <= grid.rz; oz++)
        for (int oy = -grid.ry; oy <= grid.ry; oy++)
            visitRowRanges(hy+oy, hz+oz, hx-grid.rx, hx+grid.rx, otherBase, grid, cellStart, visitRange);
}

/**
 * The fallback of an evaluation whose lists are stale where no binning ran (LIST_FALLBACK): every
 * particle that list particle k (position pk, its cell of the last build in w) pairs with, at its
 * position pos[j] moved to the image nearest pk (pairDelta(), geometry.cu; the box from the image
 * shifts), visitor(valid, j, HOME_CODE, pj) for each. The lanes of the particle take them in turn
 * and call the visitor equally often (valid false past the end and for k itself). Every pair of
 * the group, or of the two groups (group A's cells first in the cells of the last build), without
 * the cells: exact wherever the particles have moved, and as slow as all pairs.
 */
template <class Visitor>
inline DEVICE void visitAllParticles(int k, real4 pk, const real4* RESTRICT pos, int numParticles, const int* RESTRICT cellStart,
        const CellGrid& grid, const real4* shifts, real imageSearch2, const int* RESTRICT sortedAtom, Visitor& visitor) {
#ifdef ONE_GROUP
    const int first = 0, end = numParticles, atom = 0;
#else
    const bool ownA = (REAL_AS_CELL(pk.w) < grid.numCells);
    const int first = (ownA ? cellStart[grid.numCells] : 0), end = (ownA ? numParticles : cellStart[grid.numCells]);
    const int atom = sortedAtom[k];
#endif
    const real4 vecX = shifts[IMAGE_CODE(1, 0, 0)], vecY = shifts[IMAGE_CODE(0, 1, 0)], vecZ = shifts[IMAGE_CODE(0, 0, 1)];
    const real4 size = make_real4(vecX.x, vecY.y, vecZ.z, 0);
    const real4 invSize = make_real4(1/vecX.x, 1/vecY.y, 1/vecZ.z, 0);
    auto nearest = [&] (real4 pj) {
        real r2;
        const real3 delta = pairDelta(pk, pj, &r2, imageSearch2, size, invSize, vecX, vecY, vecZ);
        return make_real4(pk.x+delta.x, pk.y+delta.y, pk.z+delta.z, 0);
    };
    visitListRange(k, atom, first, end, pos, sortedAtom, HOME_CODE, nearest, visitor);
}

/**
 * What computeListParticles() does with each list particle: the CV's sums of s and its
 * gradient (ListSums), or a pass of per-atom coordination numbers (particlelists.cu). A Sums
 * type has
 *   bool begin(real4 pi, int slot, int k)   start the lane's particle (its position, slot and list
 *                                    index); false where this pass has nothing to do for it (its
 *                                    pairs are skipped)
 *   void add(bool valid, int j, real4 pj)   the pair with list particle j at pj (already the image
 *                                    to use), counted only where valid; operator() the same for
 *                                    visitNeighborCells()
 *   mixed end(int slot, int t, unsigned int mask)   the particle's lanes (lane t of mask) combine
 *                                    their sums and store or add what the pass writes; returns
 *                                    the particle's share of the CV sum (0 in every lane but one)
 */

/**
 * The sum of s and the gradient with respect to a lane's particle over its pairs: the CV of
 * computeCoordinationList. With LIST_ONE_SIDED also the gradient with respect to the other
 * particle of each pair (slots: the slots by list index, those of this evaluation's binning while
 * it rebuilds).
 */
template <bool GRADIENT>
struct ListSums {
    PairParams params;
    const int* groupAtoms;
    int flags, numSlots;
    unsigned long long* forceBuffer;
    long long* gradient;
    const int* slots;
    real4 pi;
    real sum;
    real3 gi;

    inline DEVICE bool begin(real4 p, int slot, int k) {
        pi = p;
        sum = 0;
        gi = make_real3(0, 0, 0);
        return true;
    }

    /** Add the pair of the lane's particle with pj (already the image to use), where valid. */
    inline DEVICE void add(bool valid, int j, real4 pj) {
        real g;
        real3 delta;
        const PeriodicBox unused = {};
        const real s = pairTerm<false>(pi, pj, params, unused, &g, &delta);
        sum += (valid ? s : 0);
        if (GRADIENT) {
#ifdef LIST_ONE_SIDED
            // The pair is in this list alone: the other particle's gradient too, where s varies.
            real3 gj = make_real3(0, 0, 0);
            addPairGradient(valid ? g : 0, delta, &gi, &gj);
            if (valid && g != 0) {
                const int slot = slots[j];
                addGradient(scaled(gradientScale(params), gj), slot, (flags & FLAG_DIRECT_FORCES ? groupAtoms[slot] : 0), flags,
                        forceBuffer, gradient, numSlots);
            }
#else
            // The other particle's gradient is its own lane's to add (every pair is in both lists).
            real3 unusedGj;
            addPairGradient(valid ? g : 0, delta, &gi, &unusedGj);
#endif
        }
    }

    inline DEVICE void operator()(bool valid, int j, int code, real4 pj) {
        add(valid, j, pj);
    }

    /**
     * Each pair is in both particles' lists: half of s each (with LIST_ONE_SIDED in one list: all
     * of s); the gradient with respect to the particle, added once.
     */
    inline DEVICE mixed end(int slot, int t, unsigned int mask) {
        const real total = listLaneSum(sum, mask);
        if (GRADIENT) {
            const real3 g = make_real3(listLaneSum(gi.x, mask), listLaneSum(gi.y, mask), listLaneSum(gi.z, mask));
            if (t == 0 && isNonzero(g))
                addGradient(scaled(gradientScale(params), g), slot, groupAtoms[slot], flags, forceBuffer, gradient, numSlots);
        }
#ifdef LIST_ONE_SIDED
        return (t == 0 ? total : 0);
#else
        return (t == 0 ? (real) 0.5*total : 0);
#endif
    }
};

/**
 * Building the lists from the cells: every particle within listCutoff2 of the lane's particle
 * (at pi) is appended to its list, the lanes of the particle compacting theirs by a ballot.
 */
struct ListBuilder {
    real4 pi;
    unsigned int* entries;
    int k, count, capacity, numParticles;
    real listCutoff2;

    inline DEVICE void operator()(bool valid, int j, int code, real4 pj) {
        const real dx = pj.x-pi.x, dy = pj.y-pi.y, dz = pj.z-pi.z;
        const bool keep = valid && (dx*dx+dy*dy+dz*dz <= listCutoff2);
        const unsigned int mask = listLaneMask(), kept = __ballot_sync(mask, keep) & mask;
        const int place = count+__popc(kept & ((1u << (threadIdx.x%32))-1));
        if (keep && place < capacity)
            entries[listPlace(k, place, numParticles)] = j | ((unsigned int) code << LIST_INDEX_BITS);
        count += __popc(kept);
    }
};

/**
 * The list particles' pairs over the neighbour lists (see the top of this file), LIST_LANES lanes
 * a list particle, each particle's pairs given to sums (a Sums type, above): the CV's sums
 * (computeCoordinationList) or a pass of per-atom coordination numbers (particlelists.cu).
 * Where rebuild (*rebuildStamp == stamp, which only the launch that builds passes), the cells of
 * this evaluation's binning (sortedPos, sortedSlot, cellStart, grid) are current: each particle's
 * list is first built from them (with listCutoff2), its position, slot and periodic shift
 * recorded for checkNeighborList, and then evaluated as always. Where fallback (*rebuildStamp ==
 * stamp | LIST_FALLBACK: stale lists and no binning), every particle's pairs come from all
 * particles (visitAllParticles(), imageSearch2 as pairDelta() takes it). Returns the lane's share
 * of the CV sum.
 */
template <class Sums>
inline DEVICE mixed computeListParticles(bool rebuild, bool fallback, real imageSearch2, const real4* RESTRICT posq, const real4* RESTRICT sortedPos,
        const int* RESTRICT sortedSlot, const int* RESTRICT sortedAtom, const int* RESTRICT cellStart, const CellGrid& grid, real4* RESTRICT listPos,
        real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot, unsigned int* RESTRICT entries,
        int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int numParticles, int capacity, real listCutoff2,
        const real4* shifts, const int* RESTRICT groupAtoms, Sums& sums) {
    const int t = threadIdx.x%LIST_LANES, lanesPerGrid = blockDim.x*gridDim.x;
    const unsigned int mask = listLaneMask();
    mixed cvSum = 0;
    int largest = 0;
#ifdef LIST_ONE_SIDED
    // The list particles [first, end): one group's (the cells of the last build hold group A's first).
    const int boundary = cellStart[grid.numCells];
    const int first = (LIST_ONE_SIDED ? boundary : 0), end = (LIST_ONE_SIDED ? numParticles : boundary);
    if (rebuild) {
        // The other group's particles have no list, but the check follows them as the listed ones.
        const int otherFirst = (LIST_ONE_SIDED ? 0 : boundary), otherEnd = (LIST_ONE_SIDED ? boundary : numParticles);
        for (int k = otherFirst+blockIdx.x*blockDim.x+threadIdx.x; k < otherEnd; k += lanesPerGrid)
            recordListParticle(k, sortedPos, sortedSlot, posq, groupAtoms, listPos, refPos, listShift, listSlot);
    }
#else
    const int first = 0, end = numParticles;
#endif
    for (int k = first+(blockIdx.x*blockDim.x+threadIdx.x)/LIST_LANES; k < end; k += lanesPerGrid/LIST_LANES) {
        // Positions: this evaluation's binning while it rebuilds (listPos is being written), else listPos.
        const real4* pos = (rebuild ? sortedPos : listPos);
        const real4 pk = pos[k];
        int slot, count;
        if (rebuild) {
            slot = sortedSlot[k];
            ListBuilder builder = {pk, entries, k, 0, capacity, numParticles, listCutoff2};
            visitNeighborCells(k, pk, sortedPos, cellStart, grid, shifts, sortedAtom, builder);
            count = builder.count;
            if (t == 0) {
                recordListParticle(k, sortedPos, sortedSlot, posq, groupAtoms, listPos, refPos, listShift, listSlot);
                listCount[k] = count;
                largest = max(largest, count);
            }
            // The particle's lanes read back what they wrote.
            __syncwarp(mask);
        }
        else {
            slot = listSlot[k];
            count = listCount[k];
        }
        // The same for all lanes of the particle (its slot), so that their shuffles in end() match.
        if (!sums.begin(pk, slot, k))
            continue;
        if (fallback)
            visitAllParticles(k, pk, pos, numParticles, cellStart, grid, shifts, imageSearch2, sortedAtom, sums);
        else if (count > capacity)
            visitNeighborCells(k, pk, pos, cellStart, grid, shifts, sortedAtom, sums);
        else {
#pragma unroll 4
            for (int c = t; c < count; c += LIST_LANES) {
                const unsigned int entry = entries[listPlace(k, c, numParticles)];
                const int j = entry & LIST_INDEX_MASK;
                const real4 shift = shifts[entry >> LIST_INDEX_BITS], pj = pos[j];
                sums.add(true, j, make_real4(pj.x+shift.x, pj.y+shift.y, pj.z+shift.z, 0));
            }
        }
        cvSum += sums.end(slot, t, mask);
    }
    if (rebuild) {
        largest = __reduce_max_sync(0xffffffff, largest);
        if (threadIdx.x%32 == 0)
            atomicMax(maxCount, (unsigned int) largest);
    }
    return cvSum;
}

/**
 * The CV's pass over the neighbour lists (computeListParticles(), building them where rebuildStamp
 * is this evaluation's stamp): the block's part of the sum of s, and the gradient as flags ask.
 * shifts: the 27 image shifts, loaded here (a barrier follows).
 */
inline DEVICE mixed coordinationListPass(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, const int* RESTRICT sortedAtom, const int* RESTRICT cellStart,
        CellGrid grid, real4* RESTRICT listPos, real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot,
        unsigned int* RESTRICT entries, int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int numParticles, int capacity,
        real listCutoff2, const int* RESTRICT groupAtoms, const PairParams& params, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        real4* shifts) {
    if (threadIdx.x < 27)
        shifts[threadIdx.x] = imageShift(threadIdx.x, periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ);
    __syncthreads();
    const bool rebuild = (*rebuildStamp == stamp), fallback = (*rebuildStamp == (stamp | LIST_FALLBACK));
    const int* slots = (rebuild ? sortedSlot : listSlot);
    if (flags & (FLAG_DIRECT_FORCES | FLAG_GRADIENT)) {
        ListSums<true> sums = {params, groupAtoms, flags, numSlots, forceBuffer, gradient, slots};
        return computeListParticles(rebuild, fallback, params.imageSearch2, posq, sortedPos, sortedSlot, sortedAtom, cellStart, grid, listPos, refPos, listShift,
                listSlot, entries, listCount, maxCount, numParticles, capacity, listCutoff2, shifts, groupAtoms, sums);
    }
    ListSums<false> sums = {params, groupAtoms, flags, numSlots, forceBuffer, gradient, slots};
    return computeListParticles(rebuild, fallback, params.imageSearch2, posq, sortedPos, sortedSlot, sortedAtom, cellStart, grid, listPos, refPos, listShift,
            listSlot, entries, listCount, maxCount, numParticles, capacity, listCutoff2, shifts, groupAtoms, sums);
}

/** The CV over the neighbour lists (coordinationListPass()), then finishBlock as every pair kernel. */
KERNEL void computeCoordinationList(const int* RESTRICT rebuildStamp, int stamp, const real4* RESTRICT posq,
        const real4* RESTRICT sortedPos, const int* RESTRICT sortedSlot, const int* RESTRICT sortedAtom, const int* RESTRICT cellStart,
        CellGrid grid,
        real4* RESTRICT listPos, real4* RESTRICT refPos, real4* RESTRICT listShift, int* RESTRICT listSlot,
        unsigned int* RESTRICT entries, int* RESTRICT listCount, unsigned int* RESTRICT maxCount, int numParticles, int capacity,
        real listCutoff2, const int* RESTRICT groupAtoms, PairParams params, real4 periodicBoxVecX, real4 periodicBoxVecY,
        real4 periodicBoxVecZ, int flags, unsigned long long* RESTRICT forceBuffer, long long* RESTRICT gradient, int numSlots,
        mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial, unsigned int* RESTRICT counter, double* RESTRICT cvValue,
        double* RESTRICT record, int* RESTRICT alarm) {
    __shared__ real4 shifts[27];
    DEPENDENT_KERNEL_START
    const mixed cvSum = coordinationListPass(rebuildStamp, stamp, posq, sortedPos, sortedSlot, sortedAtom, cellStart, grid, listPos,
            refPos, listShift, listSlot, entries, listCount, maxCount, numParticles, capacity, listCutoff2, groupAtoms, params,
            periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ, flags, forceBuffer, gradient, numSlots, shifts);
    finishBlock(cvSum, flags, energyBuffer, cvPartial, counter, cvValue, record, alarm);
}
