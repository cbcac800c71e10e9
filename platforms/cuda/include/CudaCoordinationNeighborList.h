#ifndef CUDA_COORDINATION_NEIGHBOR_LIST_H_
#define CUDA_COORDINATION_NEIGHBOR_LIST_H_

#include "CudaCoordinationCells.h"
#include "CudaCoordinationChecks.h"
#include "CudaCoordinationTuning.h"
#include "CudaCoordinationLauncher.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"

namespace CoordinationPlugin {

/**
 * Verlet neighbour lists for one group, or two, with a finite cutoff in a periodic box (kernels/neighbors.cu):
 * each particle's list holds the particles (of the other group) within dmax + skin, and the GPU rebuilds the lists from
 * the cell lists only when a particle has moved more than skin/2 since the last build. The host
 * forces a rebuild where it knows the lists are stale (the first evaluation, a new box, a new
 * cutoff, cells rebinned for a histogram), and never learns whether the GPU rebuilt them: it only
 * reads, now and then and without waiting, the longest list, to grow the lists' capacity.
 *
 * Lists of particles go further: the host launches the binning only in the evaluations where it
 * forces a rebuild, and it forces one where a check of an earlier evaluation asked for it (a particle
 * moved further than a share of the skin, DefaultEarlySkinShare unless the tuning sets it; a store
 * into host memory, read without waiting). An evaluation whose check finds the lists stale without
 * the binning takes every pair from all particles (exact, and slow), and each one the host sees
 * lowers the share (FallbackShareStep); below MinEarlySkinShare the binning runs at every
 * evaluation again. Measured on the md section's box, this saves the two binning launches that
 * return at once in most evaluations, for a rebuild every 11 evaluations rather than every 15.
 * The tuning switch COORDINATION_LIST_SCHEDULE=device launches it at every evaluation from the start.
 * Device memory: about (dmax + skin)^3 times the density times 4 bytes per particle.
 *
 * Lists come in two kinds. Lists of particles (computeCoordinationList) serve groups of up to
 * 50,000 particles by default. Larger groups get lists of homes: the cell kernel
 * (computeCoordinationCells) records, for each home of up to 32 particles, the particles its
 * filter kept within dmax + skin, and evaluates those lists without filtering or binning until the
 * lists are stale; a list a work item of the cells, about (home + dmax + skin)^3 / 2 times the
 * density times 4 bytes a home. The tuning switches (CudaCoordinationTuning) can force the kind,
 * turn the lists off (the cell kernel then filters and evaluates every pair each time), rebuild
 * them at every evaluation (to measure a rebuild), and set the skin (default a tenth of dmax).
 */
class CudaCoordinationNeighborList {
public:
    /**
     * @param cu          the context
     * @param launcher    launches the kernels
     * @param cells       the cell lists the lists are built from
     * @param numParticles the particles that have a list: those of the group, or of both groups
     * @param numNeighbors the particles a list may hold: numParticles for one group, the larger
     *                    group for two (which get lists of particles, not of homes)
     * @param tuning      the switches that force a kind, a mode, lanes or a skin
     * @param particleFunction the lists serve a particle function's passes: wherever a grid serves,
     *                    not weighed against the tiles (whose passes evaluate each pair twice or more)
     * @param homesAllowed whether lists of homes may serve (one group; a particle function only where
     *                    F is elementwise, kernels/particlehomes.cu); else lists of particles whatever
     *                    the size and the tuning's kind
     * @param numWithLists the particles whose lists are filled: numParticles, or for two groups with
     *                    lists of one group alone (LIST_ONE_SIDED, kernels/neighbors.cu) that group's;
     *                    0 means numParticles. It sets the lanes of a list particle (chooseLanes()).
     */
    CudaCoordinationNeighborList(OpenMM::CudaContext& cu, CudaCoordinationLauncher& launcher, CudaCoordinationCells& cells,
            int numParticles, int numNeighbors, const CudaCoordinationTuning& tuning, bool particleFunction = false,
            bool homesAllowed = true, int numWithLists = 0);
    /**
     * Whether two groups of these sizes get lists (of particles): where the tiles would evaluate
     * many pairs (MinTwoGroupPairs) and the groups together are no larger than the lists of
     * particles serve by default, or where the tuning asks for lists of particles.
     */
    static bool servesTwoGroups(int numA, int numB, const CudaCoordinationTuning& tuning);
    /** The particles that have a list (computeCoordinationList's threads: LIST_LANES each). */
    int getNumParticles() const {
        return numParticles;
    }
    ~CudaCoordinationNeighborList();
    /**
     * The lanes that share a particle in computeCoordinationList (LIST_LANES): enough for the
     * GPU to hold many warps however few particles there are, unless the tuning forces a number.
     */
    static int chooseLanes(OpenMM::CudaContext& cu, int numParticles, const CudaCoordinationTuning& tuning);
    /**
     * Whether the lists serve this cutoff in the Context's current box (the cells have a grid for
     * dmax + skin, and the lists fit in memory). If so, launch checkNeighborList and the binning,
     * which rebuild nothing unless the GPU finds the lists stale; then the caller launches
     * computeCoordinationList with getStamp() and the arrays below, and calls finishLaunch().
     * checkNeighborList also checks the positions as checks asks (in place of checkPositions).
     */
    bool prepare(double dmax, CUfunction checkKernel, CUfunction assignKernel, CUfunction scanKernel, CUfunction offsetKernel,
            CUfunction scatterKernel, OpenMM::CudaArray& groupAtoms, const CudaCoordinationChecks& checks);
    /** Whether the lists may serve at all (not turned off, and their memory could be allocated). */
    bool isEnabled() const {
        return enabled;
    }
    /** The skin of the lists in nm (negative before the first prepare()). */
    double getSkin() const {
        return skin;
    }
    /**
     * Whether the host launches the binning only where it forces a rebuild (lists of particles),
     * rather than at every evaluation; false once fallbacks have lowered the share below MinEarlySkinShare.
     */
    bool schedulesBinning() const {
        return scheduled;
    }
    /**
     * The evaluations that found the lists stale without the binning and took all pairs instead, as
     * far as the host has seen them (it reads their record, without waiting, when it prepares the next).
     */
    int getFallbacks() const {
        return fallbacks;
    }
    /** Whether the lists are rebuilt at every evaluation (a tuning switch). */
    bool rebuildsAlways() const {
        return alwaysRebuild;
    }
    /** Whether the lists are lists of homes, evaluated by the cell kernel (else of particles). */
    bool hasHomeLists() const {
        return homes;
    }
    /**
     * Of the particles of the last build of home lists read back (0 before), the share whose atom
     * is within 64 in memory of the atom of the next particle in cell order: near 1 where the atoms
     * are numbered in spatial order (as OpenMM reorders those of a System with a cutoff), near 0
     * for a random numbering.
     */
    double getNearFraction() const {
        return nearFraction;
    }
    /** After the pair kernel's launch: now and then, start reading back the longest list (and the near fraction). */
    void finishLaunch();
    /** The cells were rebinned for something else: the next evaluation rebuilds. */
    void invalidate() {
        stale = true;
    }
    /** This evaluation's stamp (a kernel argument: the reference stays valid). */
    const int& getStamp() const {
        return stamp;
    }
    /** The entries a list holds (a kernel argument: the reference stays valid). */
    const int& getCapacity() const {
        return capacity;
    }
    /** The squared cutoff of the lists, in the precision of the kernels. */
    void* getListCutoff2() {
        return (cu.getUseDoublePrecision() ? (void*) &listCutoff2 : (void*) &listCutoff2Float);
    }
    /** The grid of the last build (the binning's, when it rebuilds). */
    CudaCoordinationCells::Grid& getGrid() {
        return grid;
    }
    /** The stamp of the last evaluation that found the lists stale (an int). */
    OpenMM::CudaArray& getRebuildStamp() {
        return rebuildStamp;
    }
    /** The current positions in list order, each with its cell of the last build in w. */
    OpenMM::CudaArray& getListPositions() {
        return listPos;
    }
    /** The positions at the last build, in list order. */
    OpenMM::CudaArray& getReferencePositions() {
        return refPos;
    }
    /** What wrapped each particle into the box at the last build (its cell in w), in list order. */
    OpenMM::CudaArray& getShifts() {
        return listShift;
    }
    /** The slot (index into the group) of each list particle. */
    OpenMM::CudaArray& getSlots() {
        return listSlot;
    }
    /** The entries of the lists: a neighbour's list index and the code of its image (neighbors.cu). */
    OpenMM::CudaArray& getEntries() {
        return entries;
    }
    /** The true length of each list, a particle's or a work item's (more than the capacity: evaluated from the cells). */
    OpenMM::CudaArray& getCounts() {
        return listCount;
    }
    /** The longest list since the lists were allocated. */
    OpenMM::CudaArray& getMaxCount() {
        return maxCount;
    }
private:
    /** Allocate the entries for this capacity (false, with the lists off, where memory runs out). */
    bool allocate(int newCapacity);
    /** The mean length of a list for this list cutoff, at the group's mean density in the current box. */
    double expectedCount(double cutoff) const;
    OpenMM::CudaContext& cu;
    CudaCoordinationLauncher& launcher;
    CudaCoordinationCells& cells;
    int numParticles, numNeighbors, lanes, capacity = 0, stamp = 0, evaluations = 0, allocatedLists = 0;
    bool enabled = true, homes = false, alwaysRebuild = false, stale = true, unusable = false, reading = false;
    /** Lists for a particle function: taken wherever a grid serves (not weighed against the tiles). */
    bool particleFunction = false;
    double forcedSkin, earlySkinShare, skin = -1, dmax = -1, listCutoff2 = 0, nearFraction = 0;
    float listCutoff2Float = 0;
    OpenMM::Vec3 box[3];
    CudaCoordinationCells::Grid grid;
    OpenMM::CudaArray rebuildStamp, listPos, refPos, listShift, listSlot, entries, listCount, maxCount;
    unsigned int* pinnedMaxCount = NULL;
    CUevent readEvent = NULL;
    /** Whether the host launches the binning only where it forces a rebuild (see the class's description). */
    bool scheduled = false;
    /** The checks' requests (host memory the GPU writes): [0] the last stamp that asked for a rebuild, [1] the last that fell back. */
    volatile int* hint = NULL;
    CUdeviceptr hintDevice = 0;
    /** The stamp of the last rebuild the host forced, the last fallback it saw, and how many it has seen. */
    int lastForced = -1, lastFallback = -1, fallbacks = 0;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_NEIGHBOR_LIST_H_*/
