#include "CudaCoordinationCells.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

// Rounding margins: the grid leaves room for positions a little outside their cell.
static const double GridMargin = 2e-4, ReachMargin = 1e-4;
// Costs in steps of one warp (one S particle against 32 L particles): filtering 32 loaded S
// particles, a range of them, the bounding box of 32 L particles, a work item; and, spread over
// the GPU, a binned particle, a cell, and the binning launches together (tuned when there were
// always four; up to 4,096 bins there are now two).
static const double FilterCost = 1.5, RangeCost = 4, BoundsCost = 2, ItemCost = 3;
static const double BinCost = 0.7, CellCost = 0.2, LaunchCost = 100;
// Warps per multiprocessor that keep it busy, and the threads of a binning block.
static const int BusyWarps = 16, BinBlockSize = 256;

CudaCoordinationCells::CudaCoordinationCells(CudaContext& cu, CudaCoordinationLauncher& launcher, bool oneGroup, int numA, int numB,
        bool lIsA, const int forcedGrid[4]) : cu(cu), launcher(launcher), oneGroup(oneGroup), lIsA(lIsA), numA(numA), numB(numB) {
    for (int k = 0; k < 4; k++)
        forced[k] = forcedGrid[k];
    numL = (oneGroup ? numA : (lIsA ? numA : numB));
    numS = (oneGroup ? numA : (lIsA ? numB : numA));
    numBinned = numA+numB;
    int multiprocessors;
    cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.getDevice());
    busyWarps = BusyWarps*max(1, multiprocessors);
}

/** The expected number of batches of 32 for a Poisson-distributed count with this mean (0 for none). */
static double expectedBatches(double mean) {
    if (mean <= 0)
        return 0;
    double batches = 1-exp(-mean), sigma = sqrt(2*mean);
    for (int k = 1; 32*k < mean+10*sqrt(mean)+10; k++)
        batches += 0.5*erfc((32*k+0.5-mean)/sigma);
    return batches;
}

double CudaCoordinationCells::cellCost(const Grid& g, const double width[3], double cutoff) const {
    double mL = numL/(double) g.numCells, mS = numS/(double) g.numCells;
    // The homes: runs of runLength cells, whose particles go 32 at a time (passes), or a chunk's
    // share of one row (a chunk spans about one more row than 32 particles fill): the cells along
    // x that their particles span (extent) and touch, and the S particles of the home row of one
    // group (from the home's first particle on).
    double homes, passes, extent, touched, homeLoaded;
    if (g.runLength > 0) {
        homes = g.numRuns*(double) g.ny*g.nz;
        passes = expectedBatches(g.runLength*mL);
        extent = touched = g.runLength;
        homeLoaded = (g.runLength+g.rx)*mS;
    }
    else {
        homes = min((double) numL, numL/32.0+g.ny*(double) g.nz*(1-exp(-g.nx*mL)));
        passes = 1;
        double perHome = numL/homes;
        extent = min((double) g.nx, max(1.0, perHome/mL));
        touched = min((double) g.nx, extent+1);
        homeLoaded = perHome+(0.5+g.rx)*mS;
    }
    // The share of a row's S particles within the cutoff of a home's bounding box (its Minkowski
    // sum with a ball, against the stencil of cells).
    double ex = extent*width[0]/g.nx, ey = width[1]/g.ny, ez = width[2]/g.nz;
    double minkowski = ex*ey*ez+2*cutoff*(ex*ey+ey*ez+ez*ex)+M_PI*cutoff*cutoff*(ex+ey+ez)+4*M_PI/3*cutoff*cutoff*cutoff;
    double stencil = (touched+2*g.rx)*(2*g.ry+1)*(2*g.rz+1)*(width[0]*width[1]*width[2]/g.numCells);
    double kept = min(1.0, minkowski/stencil);
    double loaded = (touched+2*g.rx)*mS;
    // The steps of one home: an item's rows fill batches together; the home row of one group holds
    // the home itself and the cells after it. Items differ only in the first and the last.
    auto itemSteps = [&] (int rows, bool first) {
        double itemLoaded = rows*loaded+(oneGroup && first ? homeLoaded-loaded : 0);
        return 32*expectedBatches(kept*itemLoaded)+FilterCost*expectedBatches(itemLoaded)+RangeCost*rows+BoundsCost;
    };
    int lastRows = g.rowsPerRun-(g.itemsPerRun-1)*g.rowsPerItem;
    double homeSteps = (g.itemsPerRun == 1 ? itemSteps(lastRows, true) :
            itemSteps(g.rowsPerItem, true)+itemSteps(lastRows, false)+(g.itemsPerRun-2)*itemSteps(g.rowsPerItem, false));
    double items = g.numUnits*(double) g.itemsPerRun;
    double work = homes*passes*homeSteps+items*ItemCost;
    return work/min(items, (double) busyWarps)+(numBinned*BinCost+g.numCells*CellCost)/busyWarps+LaunchCost;
}

bool CudaCoordinationCells::chooseGrid(double cutoff, bool againstTiles) {
    if (!isfinite(cutoff) || cutoff <= 0 || numL == 0 || numS == 0)
        return false;
    Vec3 a, b, c;
    cu.getPeriodicBoxVectors(a, b, c);
    double volume = a[0]*b[1]*c[2];
    Vec3 bc = b.cross(c), ca = c.cross(a), ab = a.cross(b);
    double width[3] = {volume/sqrt(bc.dot(bc)), volume/sqrt(ca.dot(ca)), volume/sqrt(ab.dot(ab))};
    // The search takes a millisecond: it runs again only when the cutoff changed or a width moved
    // by more than 3% since (a barostat's steps keep the grid, with its reach checked).
    bool similar = (cutoff == searchCutoff && againstTiles == searchAgainstTiles);
    for (int k = 0; k < 3; k++)
        similar &= (fabs(width[k]-searchWidth[k]) < 0.03*searchWidth[k]);
    if (similar) {
        if (!searchFound)
            return false;
        int n[3] = {grid.nx, grid.ny, grid.nz}, reach[3] = {grid.rx, grid.ry, grid.rz};
        for (int k = 0; k < 3; k++)
            if ((int) ceil(cutoff*n[k]/width[k]*(1+ReachMargin)) != reach[k])
                similar = false;
        if (similar)
            return true;
    }
    searchCutoff = cutoff;
    searchAgainstTiles = againstTiles;
    for (int k = 0; k < 3; k++)
        searchWidth[k] = width[k];
    searchFound = searchGrid(cutoff, width, againstTiles);
    return searchFound;
}

bool CudaCoordinationCells::searchGrid(double cutoff, const double width[3], bool againstTiles) {
    if (cutoff > 0.5*min(width[0], min(width[1], width[2])))
        return false;
    // All pairs: tiles of 256 x 256 (8 warps each), or of 256 x 32 and smaller for two groups.
    double tiles = (oneGroup ? 0.5*(numL/256.0+1)*(numL/256.0+1) : (numL/256.0+1)*(numS/32.0+1));
    double allPairs = (oneGroup ? 0.5*numL*(double) numL : numL*(double) numS)/32/min(8*tiles, (double) busyWarps);
    double bestCost = (againstTiles ? allPairs : numeric_limits<double>::infinity());
    bool found = false;
    long long maxCells = 4*(long long) numBinned+64;
    // A forced grid (CudaCoordinationTuning::cellGrid) is the only candidate; runLength 0 asks for chunks.
    for (int rx = 1; rx <= 4; rx++)
        for (int ry = 1; ry <= 3; ry++)
            for (int rz = 1; rz <= 3; rz++) {
                if (forced[0] > 0 && (rx != forced[0] || ry != forced[1] || rz != forced[2]))
                    continue;
                int target[3] = {rx, ry, rz}, n[3], reach[3];
                for (int k = 0; k < 3; k++)
                    n[k] = (int) min(1e6, floor(width[k]*target[k]/(cutoff*(1+GridMargin))));
                while ((long long) n[0]*n[1]*n[2] > maxCells) {
                    int largest = (n[0] >= n[1] && n[0] >= n[2] ? 0 : (n[1] >= n[2] ? 1 : 2));
                    n[largest] = max(1, (int) (n[largest]*0.9));
                }
                bool valid = true;
                for (int k = 0; k < 3; k++) {
                    reach[k] = (int) ceil(cutoff*n[k]/width[k]*(1+ReachMargin));
                    valid &= (reach[k] >= 1 && n[k] >= 2*reach[k]+1);
                }
                if (!valid)
                    continue;
                for (int runLength = 0; runLength <= 8 && (runLength == 0 || n[0] >= 2*(runLength+reach[0])-1); runLength++) {
                    if (forced[3] >= 0 && runLength != forced[3])
                        continue;
                    Grid g;
                    g.nx = n[0];
                    g.ny = n[1];
                    g.nz = n[2];
                    g.rx = reach[0];
                    g.ry = reach[1];
                    g.rz = reach[2];
                    g.runLength = runLength;
                    // Runs per row of cells, or chunks (each a home per row it spans); units (runs of all
                    // rows, or chunks) are cut into work items by rows.
                    g.numRuns = (runLength > 0 ? (n[0]+runLength-1)/runLength : (numL+31)/32);
                    g.numUnits = (runLength > 0 ? g.numRuns*g.ny*g.nz : g.numRuns);
                    int rows = (2*g.ry+1)*(2*g.rz+1);
                    g.rowsPerRun = (oneGroup ? (rows+1)/2 : rows);
                    g.numCells = n[0]*n[1]*n[2];
                    g.lBase = (oneGroup || lIsA ? 0 : g.numCells);
                    g.sBase = (oneGroup || !lIsA ? 0 : g.numCells);
                    // Rows per item: few for parallelism in small systems, all for fuller batches in large ones.
                    for (int rowsPerItem : {1, 2, 3, (g.rowsPerRun+1)/2, g.rowsPerRun}) {
                        if (rowsPerItem > g.rowsPerRun)
                            continue;
                        g.rowsPerItem = rowsPerItem;
                        g.itemsPerRun = (g.rowsPerRun+rowsPerItem-1)/rowsPerItem;
                        double cost = cellCost(g, width, cutoff);
                        if (cost < bestCost || (forced[0] > 0 && !found)) {
                            bestCost = cost;
                            grid = g;
                            found = true;
                        }
                    }
                }
            }
    return found;
}

void CudaCoordinationCells::launch(CUfunction kernel, void** arguments, long long threads, int blockSize, bool capped) {
    long long blocks = (threads+blockSize-1)/blockSize;
    launcher.launch(kernel, arguments, (capped ? min(blocks, (long long) cu.getNumThreadBlocks()) : blocks), blockSize);
}

void CudaCoordinationCells::initializeArrays() {
    int positionSize = (cu.getUseDoublePrecision() ? sizeof(double4) : sizeof(float4));
    if (!wrapped.isInitialized()) {
        wrapped.initialize(cu, numBinned, positionSize, "coordinationCellWrapped");
        sortedPos.initialize(cu, numBinned, positionSize, "coordinationCellPositions");
        sortedSlot.initialize<int>(cu, numBinned, "coordinationCellSlots");
        sortedAtom.initialize<int>(cu, numBinned, "coordinationCellAtoms");
        cellOf.initialize<int>(cu, numBinned, "coordinationCellOf");
        cellRank.initialize<int>(cu, numBinned, "coordinationCellRank");
        workCounter.initialize<unsigned int>(cu, 3, "coordinationCellCounters");
        cu.clearBuffer(workCounter);
    }
}

void CudaCoordinationCells::bin(CUfunction assignKernel, CUfunction scanKernel, CUfunction offsetKernel, CUfunction scatterKernel,
        CudaArray& groupAtoms, CUdeviceptr rebuildStamp, int stamp) {
    int numBins = grid.numCells*(oneGroup ? 1 : 2), numScanBlocks = (numBins+ScanChunk-1)/ScanChunk;
    initializeArrays();
    if (!cellCount.isInitialized() || cellCount.getSize() < numBins) {
        // The scan clears the counts it reads; fresh ones start cleared.
        if (cellCount.isInitialized()) {
            cellCount.resize(numBins);
            cellStart.resize(numBins+1);
            blockOffset.resize(numScanBlocks);
        }
        else {
            cellCount.initialize<unsigned int>(cu, numBins, "coordinationCellCounts");
            cellStart.initialize<int>(cu, numBins+1, "coordinationCellStarts");
            blockOffset.initialize<int>(cu, numScanBlocks, "coordinationCellBlockOffsets");
        }
        cu.clearBuffer(cellCount);
    }
    // One thread per particle or cell: these kernels wait on memory, and want every thread the GPU holds.
    // workCounter holds the counter of work items and, after it, that of finished blocks.
    CUdeviceptr blocksDone = workCounter.getDevicePointer()+sizeof(unsigned int);
    void* assignArgs[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &numBinned, &numA, &grid,
            cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(),
            cu.getPeriodicBoxVecZPointer(), &cellCount.getDevicePointer(), &cellOf.getDevicePointer(),
            &cellRank.getDevicePointer(), &wrapped.getDevicePointer(), &numBins, &cellStart.getDevicePointer(), &blocksDone,
            &workCounter.getDevicePointer(), &rebuildStamp, &stamp};
    // Few cells: the assignment's last block scans them (in blocks of 1024 threads), which saves two launches.
    // Where the lists decide (rebuildStamp), most evaluations bin nothing: the grid-stride kernels
    // then take fewer blocks, which return sooner.
    bool capped = (rebuildStamp != 0);
    launch(assignKernel, assignArgs, numBinned, numScanBlocks == 1 ? 1024 : BinBlockSize, capped);
    if (numScanBlocks > 1) {
        void* scanArgs[] = {&cellCount.getDevicePointer(), &cellStart.getDevicePointer(), &numBins, &blockOffset.getDevicePointer(),
                &blocksDone, &workCounter.getDevicePointer(), &rebuildStamp, &stamp};
        launch(scanKernel, scanArgs, numScanBlocks*1024LL, 1024);
        void* offsetArgs[] = {&cellStart.getDevicePointer(), &numBins, &blockOffset.getDevicePointer(), &rebuildStamp, &stamp};
        launch(offsetKernel, offsetArgs, numBins, BinBlockSize, capped);
    }
    void* scatterArgs[] = {&cellOf.getDevicePointer(), &cellRank.getDevicePointer(), &cellStart.getDevicePointer(),
            &wrapped.getDevicePointer(), &groupAtoms.getDevicePointer(), &numBinned, &sortedPos.getDevicePointer(),
            &sortedSlot.getDevicePointer(), &sortedAtom.getDevicePointer(), &rebuildStamp, &stamp};
    launch(scatterKernel, scatterArgs, numBinned, BinBlockSize, capped);
}
