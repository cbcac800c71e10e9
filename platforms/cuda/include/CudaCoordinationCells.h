#ifndef CUDA_COORDINATION_CELLS_H_
#define CUDA_COORDINATION_CELLS_H_

#include "CudaCoordinationLauncher.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <string>

namespace CoordinationPlugin {

/**
 * The cell lists of the CUDA kernels (kernels/cellgrid.cu, binning.cu and traversal.cu) for a
 * finite cutoff in a periodic box. The grid is chosen on the host from the box the Context already
 * holds there, so choosing costs no GPU round trip; the particles are binned on the GPU at every
 * evaluation. Device memory is proportional to the number of group particles (the grid has at
 * most a few cells per particle).
 */
class CudaCoordinationCells {
public:
    /** The grid as the kernels take it (CellGrid in cellgrid.cu). */
    struct Grid {
        int nx, ny, nz, rx, ry, rz, runLength, numRuns, numUnits, rowsPerRun, rowsPerItem, itemsPerRun, numCells, lBase, sBase;
    };
    /**
     * @param cu        the context
     * @param launcher  launches the binning kernels
     * @param oneGroup  whether the pairs are those of one group (each unordered pair once)
     * @param numA      the particles of group A (the first slots)
     * @param numB      the particles of group B (the next slots; 0 with one group)
     * @param lIsA      whether group A is the long side L whose cells are the home cells
     * @param forcedGrid a grid {rx, ry, rz, runLength} to use instead of the cost model's choice
     *                   (CudaCoordinationTuning::cellGrid; rx = 0 for none)
     */
    CudaCoordinationCells(OpenMM::CudaContext& cu, CudaCoordinationLauncher& launcher, bool oneGroup, int numA, int numB, bool lIsA,
            const int forcedGrid[4]);
    /**
     * Choose a grid for a cutoff in the Context's current box. Returns false where all pairs are
     * needed (cutoff infinite or beyond half the box) or, with againstTiles, expected to be faster
     * (the neighbour lists of two groups, which bin only when they rebuild, ask without).
     */
    bool chooseGrid(double cutoff, bool againstTiles = true);
    /** Allocate the arrays of the binning that do not depend on the grid (bin() does, if need be). */
    void initializeArrays();
    /**
     * Bin the group particles on the GPU with the kernels of binning.cu (assignCells, scanCellBlocks,
     * addCellOffsets, scatterCells). With a rebuildStamp (device pointer), the kernels bin only if
     * it holds stamp when they run (the neighbour lists' rebuilds, decided on the GPU).
     */
    void bin(CUfunction assignKernel, CUfunction scanKernel, CUfunction offsetKernel, CUfunction scatterKernel,
            OpenMM::CudaArray& groupAtoms, CUdeviceptr rebuildStamp = 0, int stamp = 0);
    /** The particles binned: those of both groups. */
    int getNumBinned() const {
        return numBinned;
    }
    /** The grid chosen last. */
    Grid& getGrid() {
        return grid;
    }
    /** The number of work items (a run or chunk of home particles and some of its rows) of the grid chosen last. */
    long long getNumItems() const {
        return grid.numUnits*(long long) grid.itemsPerRun;
    }
    /** The wrapped positions in cell order, each with its cell in w (CELL_AS_REAL in cellgrid.cu). */
    OpenMM::CudaArray& getSortedPositions() {
        return sortedPos;
    }
    /** The slot (index into the groups) of each particle in cell order. */
    OpenMM::CudaArray& getSortedSlots() {
        return sortedSlot;
    }
    /** The atom (index into the Context's arrays) of each particle in cell order. */
    OpenMM::CudaArray& getSortedAtoms() {
        return sortedAtom;
    }
    /**
     * The counter of work items the pair kernels take (cleared by each binning and each check of
     * the neighbour lists), then that of the binning's finished blocks, then the count of a build
     * of home lists (atoms close in memory, see CudaCoordinationNeighborList::getNearFraction).
     */
    OpenMM::CudaArray& getWorkCounter() {
        return workCounter;
    }
    /** Where each cell starts in cell order, and the total at the end. */
    OpenMM::CudaArray& getCellStarts() {
        return cellStart;
    }
private:
    /** Search the grids for the fastest one; false where all pairs are needed or (againstTiles) faster. */
    bool searchGrid(double cutoff, const double width[3], bool againstTiles);
    /** The expected time, in steps of one warp, of binning and visiting the pairs with a grid. */
    double cellCost(const Grid& g, const double width[3], double cutoff) const;
    /**
     * Launch a kernel with one thread per work unit (through the launcher); capped: at most
     * OpenMM's number of blocks, for grid-stride kernels.
     */
    void launch(CUfunction kernel, void** arguments, long long threads, int blockSize, bool capped = false);
    /** The cells that one block of scanCellBlocks scans (SCAN_CHUNK in binning.cu). */
    static const int ScanChunk = 4096;
    OpenMM::CudaContext& cu;
    CudaCoordinationLauncher& launcher;
    bool oneGroup, lIsA;
    int numA, numB, numL, numS, numBinned, busyWarps;
    Grid grid;
    // What the last search was for (box widths, cutoff), and whether it found a grid.
    double searchWidth[3] = {0, 0, 0}, searchCutoff = -1;
    int forced[4];
    bool searchFound = false, searchAgainstTiles = true;
    OpenMM::CudaArray cellCount, cellStart, blockOffset, workCounter, cellOf, cellRank, wrapped, sortedPos, sortedSlot, sortedAtom;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_CELLS_H_*/
