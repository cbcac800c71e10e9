#include "CudaCoordinationCells.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

// Rounding margins: the grid leaves room for positions a little outside their cell.
static const double GridMargin = 2e-4, ReachMargin = 1e-4;
// Costs in steps of one warp (one S particle against 32 L particles): a range of S particles, a
// work item, a binned particle, and the three binning launches.
static const double RangeCost = 4, ItemCost = 3, BinCost = 2, LaunchCost = 2e5;

CudaCoordinationCells::CudaCoordinationCells(CudaContext& cu, bool oneGroup, int numA, int numB, bool lIsA) :
        cu(cu), oneGroup(oneGroup), lIsA(lIsA), numA(numA), numB(numB) {
    numL = (oneGroup ? numA : (lIsA ? numA : numB));
    numS = (oneGroup ? numA : (lIsA ? numB : numA));
    numBinned = numA+numB;
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

double CudaCoordinationCells::cellCost(const Grid& g) const {
    double mL = numL/(double) g.numCells, mS = numS/(double) g.numCells;
    double fullRow = 32*expectedBatches((2*g.rx+1)*mS)+2*RangeCost;
    double rows = g.rowsPerCell*fullRow;
    if (oneGroup)
        rows += 32*expectedBatches(mS)+32*expectedBatches(g.rx*mS)+3*RangeCost-fullRow;
    return g.numCells*(expectedBatches(mL)*rows+g.rowsPerCell*ItemCost)+numBinned*BinCost+LaunchCost;
}

bool CudaCoordinationCells::chooseGrid(double cutoff) {
    if (!isfinite(cutoff) || cutoff <= 0 || numL == 0 || numS == 0)
        return false;
    Vec3 a, b, c;
    cu.getPeriodicBoxVectors(a, b, c);
    double volume = a[0]*b[1]*c[2];
    Vec3 bc = b.cross(c), ca = c.cross(a), ab = a.cross(b);
    double width[3] = {volume/sqrt(bc.dot(bc)), volume/sqrt(ca.dot(ca)), volume/sqrt(ab.dot(ab))};
    if (cutoff > 0.5*min(width[0], min(width[1], width[2])))
        return false;
    double allPairs = (oneGroup ? 0.5*numL*(double) numL : numL*(double) numS)/32;
    double bestCost = allPairs;
    bool found = false;
    long long maxCells = 4*(long long) numBinned+64;
    // COORDINATION_CELL_REACH="rx,ry,rz" forces the reach in cells (for benchmarking grids).
    int forced[3] = {0, 0, 0};
    if (getenv("COORDINATION_CELL_REACH") != NULL)
        sscanf(getenv("COORDINATION_CELL_REACH"), "%d,%d,%d", &forced[0], &forced[1], &forced[2]);
    for (int rx = 1; rx <= 3; rx++)
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
                Grid g;
                g.nx = n[0];
                g.ny = n[1];
                g.nz = n[2];
                g.rx = reach[0];
                g.ry = reach[1];
                g.rz = reach[2];
                int rows = (2*g.ry+1)*(2*g.rz+1);
                g.rowsPerCell = (oneGroup ? (rows+1)/2 : rows);
                g.numCells = n[0]*n[1]*n[2];
                g.lBase = (oneGroup || lIsA ? 0 : g.numCells);
                g.sBase = (oneGroup || !lIsA ? 0 : g.numCells);
                double cost = cellCost(g);
                if (cost < bestCost || (forced[0] > 0 && !found)) {
                    bestCost = cost;
                    grid = g;
                    found = true;
                }
            }
    return found;
}

void CudaCoordinationCells::bin(CUfunction assignKernel, CUfunction scanKernel, CUfunction scatterKernel, CudaArray& groupAtoms) {
    int numBins = grid.numCells*(oneGroup ? 1 : 2);
    int positionSize = (cu.getUseDoublePrecision() ? sizeof(double4) : sizeof(float4));
    if (!wrapped.isInitialized()) {
        wrapped.initialize(cu, numBinned, positionSize, "coordinationCellWrapped");
        sortedPos.initialize(cu, numBinned, positionSize, "coordinationCellPositions");
        sortedSlot.initialize<int>(cu, numBinned, "coordinationCellSlots");
        cellOf.initialize<int>(cu, numBinned, "coordinationCellOf");
        cellRank.initialize<int>(cu, numBinned, "coordinationCellRank");
        workCounter.initialize<unsigned int>(cu, 1, "coordinationCellWorkCounter");
    }
    if (!cellCount.isInitialized() || cellCount.getSize() < numBins) {
        // The scan clears the counts it reads; fresh ones start cleared.
        if (cellCount.isInitialized()) {
            cellCount.resize(numBins);
            cellStart.resize(numBins+1);
        }
        else {
            cellCount.initialize<unsigned int>(cu, numBins, "coordinationCellCounts");
            cellStart.initialize<int>(cu, numBins+1, "coordinationCellStarts");
        }
        cu.clearBuffer(cellCount);
    }
    void* assignArgs[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &numBinned, &numA, &grid,
            cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(),
            cu.getPeriodicBoxVecZPointer(), &cellCount.getDevicePointer(), &cellOf.getDevicePointer(),
            &cellRank.getDevicePointer(), &wrapped.getDevicePointer()};
    cu.executeKernel(assignKernel, assignArgs, numBinned);
    void* scanArgs[] = {&cellCount.getDevicePointer(), &cellStart.getDevicePointer(), &numBins, &workCounter.getDevicePointer()};
    cu.executeKernel(scanKernel, scanArgs, 1024, 1024);
    void* scatterArgs[] = {&cellOf.getDevicePointer(), &cellRank.getDevicePointer(), &cellStart.getDevicePointer(),
            &wrapped.getDevicePointer(), &numBinned, &sortedPos.getDevicePointer(), &sortedSlot.getDevicePointer()};
    cu.executeKernel(scatterKernel, scatterArgs, numBinned);
}
