/**
 * Cell lists for a finite cutoff in a periodic box, built on the GPU at every evaluation and
 * used by the coordination and the histogram kernels.
 *
 * The box (rectangular or triclinic in OpenMM's reduced form) is divided into nx x ny x nz cells
 * of equal size in fractional coordinates; cell (x, y, z) has index (z*ny+y)*nx+x, and with two
 * groups the cells of group B follow those of group A. assignCells wraps each particle into the
 * box and finds its cell, scanCellBlocks and addCellOffsets turn the counts into starts (for few
 * cells, assignCells does), scatterCells writes the wrapped positions in cell order, so that a row
 * of cells along x is one contiguous range.
 *
 * The sorted positions keep their cell in w (CELL_AS_REAL), and the entries of the neighbour lists
 * and of the home lists name a sorted particle and its periodic image (LIST_INDEX_BITS, IMAGE_CODE).
 * binning.cu builds the cells, traversal.cu visits them.
 */

typedef struct {
    int nx, ny, nz, rx, ry, rz, runLength, numRuns, numUnits, rowsPerRun, rowsPerItem, itemsPerRun, numCells, lBase, sBase;
} CellGrid;

/** A cell index kept in the w component of a sorted position (which the pair kernels never read), and read back. */
#ifdef USE_DOUBLE_PRECISION
#define CELL_AS_REAL(cell) __longlong_as_double((long long) (cell))
#define REAL_AS_CELL(w) ((int) __double_as_longlong(w))
#else
#define CELL_AS_REAL(cell) __int_as_float(cell)
#define REAL_AS_CELL(w) __float_as_int(w)
#endif

/**
 * An entry of a list (neighbors.cu): the sorted index of a particle in LIST_INDEX_BITS, and above
 * them the code of the periodic image to use (IMAGE_CODE: 0 to 26; HOME_CODE for a particle of a
 * home's own cells, unshifted, that pairs only with L particles of lower index).
 */
#define LIST_INDEX_BITS 27
#define LIST_INDEX_MASK ((1u << LIST_INDEX_BITS)-1)
#define IMAGE_CODE(wx, wy, wz) (((wz)+1)*9+((wy)+1)*3+(wx)+1)
#define HOME_CODE 27
#define HOME_HEADER 3
