#ifndef CUDA_COORDINATION_CELLS_H_
#define CUDA_COORDINATION_CELLS_H_

#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"

namespace CoordinationPlugin {

/**
 * The cell lists of the CUDA kernels (kernels/cells.cu) for a finite cutoff in a periodic box.
 * The grid is chosen on the host from the box the Context already holds there, so choosing
 * costs no GPU round trip; the particles are binned on the GPU at every evaluation. Device
 * memory is proportional to the number of group particles (the grid has at most a few cells
 * per particle).
 */
class CudaCoordinationCells {
public:
    /** The grid as the kernels take it (CellGrid in cells.cu). */
    struct Grid {
        int nx, ny, nz, rx, ry, rz, rowsPerCell, numCells, lBase, sBase;
    };
    /**
     * @param cu        the context
     * @param oneGroup  whether the pairs are those of one group (each unordered pair once)
     * @param numA      the particles of group A (the first slots)
     * @param numB      the particles of group B (the next slots; 0 with one group)
     * @param lIsA      whether group A is the long side L whose cells are the home cells
     */
    CudaCoordinationCells(OpenMM::CudaContext& cu, bool oneGroup, int numA, int numB, bool lIsA);
    /**
     * Choose a grid for a cutoff in the Context's current box. Returns false where all pairs are
     * needed (cutoff infinite or beyond half the box) or expected to be faster.
     */
    bool chooseGrid(double cutoff);
    /** Bin the group particles on the GPU with the kernels of cells.cu. */
    void bin(CUfunction assignKernel, CUfunction scanKernel, CUfunction scatterKernel, OpenMM::CudaArray& groupAtoms);
    /** The grid chosen last. */
    Grid& getGrid() {
        return grid;
    }
    /** The number of work items (home cell and row pairs) of the grid chosen last. */
    int getNumItems() const {
        return grid.numCells*grid.rowsPerCell;
    }
    /** The wrapped positions in cell order. */
    OpenMM::CudaArray& getSortedPositions() {
        return sortedPos;
    }
    /** The slot (index into the groups) of each particle in cell order. */
    OpenMM::CudaArray& getSortedSlots() {
        return sortedSlot;
    }
    /** The counter of work items the pair kernels take (cleared by each binning). */
    OpenMM::CudaArray& getWorkCounter() {
        return workCounter;
    }
    /** Where each cell starts in cell order, and the total at the end. */
    OpenMM::CudaArray& getCellStarts() {
        return cellStart;
    }
private:
    /** The expected cost, in steps of one warp, of visiting the pairs with a grid. */
    double cellCost(const Grid& g) const;
    OpenMM::CudaContext& cu;
    bool oneGroup, lIsA;
    int numA, numB, numL, numS, numBinned;
    Grid grid;
    OpenMM::CudaArray cellCount, cellStart, workCounter, cellOf, cellRank, wrapped, sortedPos, sortedSlot;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_CELLS_H_*/
