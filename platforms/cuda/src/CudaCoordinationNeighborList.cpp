#include "CudaCoordinationNeighborList.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

// List indices take LIST_INDEX_BITS (cellgrid.cu) of an entry, the image code the rest.
static const int MaxParticles = 1 << 27;
// A particle may move by this share of the skin before the lists are stale (the rest is margin for rounding).
static const double HalfSkinShare = 0.49;
// By default lists of particles serve groups up to this size, lists of homes larger ones: the
// lists of particles wait on their scattered loads of neighbour positions, where the cell
// kernel's shared batches are faster.
static const int MaxDefaultParticles = 50000;
// Two groups get lists of particles where the tiles would evaluate at least this many pairs (the
// md section's 1,000 O against the other 6,894, 6.9e6 pairs, took 23.6 us on tiles in Nsight Compute,
// H100; 100 O, 7.8e5 pairs on 217 tiles, stays with them).
static const long long MinTwoGroupPairs = 4000000;
// Evaluations between reads of the longest list (besides after every forced rebuild).
static const int ReadInterval = 64;
// Lists of particles whose host schedules the binning: a particle that has moved this share of the
// skin asks for a rebuild, which the host launches when it next prepares (an evaluation or two
// later, as far as the host runs ahead of the GPU), before any particle has moved HalfSkinShare of
// it. In the md section's box the fastest oxygen moves about 0.0033 nm a step, 0.1 nm of skin
// between 0.40 and 0.49 of it in 2.7 steps. Measured there (H100, mixed, profile_launches.py
// --replicas 3 --rounds 5): 0.40 the fastest of 0.30, 0.35, 0.40 and 0.45 (a lower share rebuilds
// more often, a higher one falls back).
static const double DefaultEarlySkinShare = 0.40;
// Each evaluation that found the lists stale without the binning (it evaluates all pairs) lowers the
// share by this much: the host's requests came too late for this Context's moves.
static const double FallbackShareStep = 0.05;
// Below this share the host launches the binning at every evaluation again, as for lists of homes:
// rebuilding that early costs as much as the binning's launches save (0.30 measured no faster).
static const double MinEarlySkinShare = 0.25;

/** Whether stamp a (30 bits, cyclic) comes after stamp b. */
static bool isAfter(int a, int b) {
    int d = (a-b) & 0x3fffffff;
    return (d > 0 && d < 0x20000000);
}

CudaCoordinationNeighborList::CudaCoordinationNeighborList(CudaContext& cu, CudaCoordinationLauncher& launcher,
        CudaCoordinationCells& cells, int numParticles, int numNeighbors, const CudaCoordinationTuning& tuning, bool particleFunction,
        bool homesAllowed, int numWithLists) : cu(cu), launcher(launcher), cells(cells), numParticles(numParticles), numNeighbors(numNeighbors),
        forcedSkin(tuning.neighborSkin), earlySkinShare(tuning.listEarlyShare > 0 ? tuning.listEarlyShare : DefaultEarlySkinShare) {
    this->particleFunction = particleFunction;
    // Two groups (numNeighbors < numParticles) have lists of particles only.
    homes = (homesAllowed && numNeighbors == numParticles && (tuning.listKind == CudaCoordinationTuning::KindHomes ||
            (tuning.listKind == CudaCoordinationTuning::KindDefault && numParticles > MaxDefaultParticles)));
    enabled = (tuning.neighborList != CudaCoordinationTuning::ListsOff && numParticles > 1 && numParticles < MaxParticles);
    alwaysRebuild = (tuning.neighborList == CudaCoordinationTuning::ListsAlwaysRebuilt);
    scheduled = (!homes && !alwaysRebuild && tuning.listSchedule == CudaCoordinationTuning::ScheduleHost);
    lanes = chooseLanes(cu, numWithLists > 0 ? numWithLists : numParticles, tuning);
    memset(&grid, 0, sizeof(grid));
}

CudaCoordinationNeighborList::~CudaCoordinationNeighborList() {
    ContextSelector selector(cu);
    if (readEvent != NULL)
        cuEventDestroy(readEvent);
    if (pinnedMaxCount != NULL)
        cuMemFreeHost(pinnedMaxCount);
    if (hint != NULL)
        cuMemFreeHost((void*) hint);
}

int CudaCoordinationNeighborList::chooseLanes(CudaContext& cu, int numParticles, const CudaCoordinationTuning& tuning) {
    if (tuning.listLanes > 0)
        return tuning.listLanes;
    // About 512 threads a multiprocessor.
    int multiprocessors;
    cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.getDevice());
    int lanes = 1;
    while (lanes < 32 && numParticles*(long long) lanes < 512LL*multiprocessors)
        lanes *= 2;
    return lanes;
}

bool CudaCoordinationNeighborList::allocate(int newCapacity) {
    newCapacity = ((newCapacity+lanes-1)/lanes)*lanes;
    // A list a particle, or a list a work item of the cell kernel.
    int numLists = (homes ? (int) cells.getNumItems() : numParticles);
    try {
        if (!rebuildStamp.isInitialized()) {
            int positionSize = (cu.getUseDoublePrecision() ? sizeof(double4) : sizeof(float4));
            rebuildStamp.initialize<int>(cu, 1, "coordinationListStamp");
            rebuildStamp.upload(vector<int>(1, -1));
            listPos.initialize(cu, numParticles, positionSize, "coordinationListPositions");
            refPos.initialize(cu, numParticles, positionSize, "coordinationListReference");
            listShift.initialize(cu, numParticles, positionSize, "coordinationListShifts");
            listSlot.initialize<int>(cu, numParticles, "coordinationListSlots");
            maxCount.initialize<unsigned int>(cu, 1, "coordinationListMaxCount");
            cu.clearBuffer(maxCount);
            if (cuMemHostAlloc((void**) &pinnedMaxCount, 2*sizeof(unsigned int), 0) != CUDA_SUCCESS ||
                    cuEventCreate(&readEvent, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
                throw OpenMMException("CoordinationForce: pinned memory or an event for the neighbour lists");
            // The checks' requests for a rebuild, in host memory that the GPU writes; without it the
            // binning runs at every evaluation.
            if (scheduled) {
                void* mapped = NULL;
                if (cuMemHostAlloc(&mapped, 2*sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS) {
                    hint = (volatile int*) mapped;
                    hint[0] = hint[1] = -1;
                    if (cuMemHostGetDevicePointer(&hintDevice, mapped, 0) != CUDA_SUCCESS)
                        scheduled = false;
                }
                else
                    scheduled = false;
            }
        }
        if (!listCount.isInitialized())
            listCount.initialize<int>(cu, numLists, "coordinationListCounts");
        else if (listCount.getSize() < numLists)
            listCount.resize(numLists);
        size_t size = numLists*(size_t) newCapacity;
        if (!entries.isInitialized())
            entries.initialize<unsigned int>(cu, size, "coordinationListEntries");
        else if (entries.getSize() != size)
            entries.resize(size);
    }
    catch (OpenMMException& error) {
        // Out of device memory: the cell kernel needs none of this.
        enabled = false;
        return false;
    }
    capacity = newCapacity;
    allocatedLists = numLists;
    return true;
}

bool CudaCoordinationNeighborList::servesTwoGroups(int numA, int numB, const CudaCoordinationTuning& tuning) {
    if (tuning.listKind == CudaCoordinationTuning::KindParticles)
        return true;
    return (tuning.listKind == CudaCoordinationTuning::KindDefault && numA+(long long) numB <= MaxDefaultParticles &&
            numA*(long long) numB >= MinTwoGroupPairs);
}

double CudaCoordinationNeighborList::expectedCount(double cutoff) const {
    double density = numNeighbors/(box[0][0]*box[1][1]*box[2][2]);
    if (!homes)
        return density*4*M_PI/3*cutoff*cutoff*cutoff;
    // A home of 32 particles taken as a cube; one group visits half of the space around it.
    double side = cbrt(32/density), homes = ceil(numParticles/32.0);
    double volume = side*side*side+6*side*side*cutoff+3*M_PI*side*cutoff*cutoff+4*M_PI/3*cutoff*cutoff*cutoff;
    return homes*(0.5*density*volume+3)/cells.getNumItems();
}

bool CudaCoordinationNeighborList::prepare(double dmax, CUfunction checkKernel, CUfunction assignKernel, CUfunction scanKernel,
        CUfunction offsetKernel, CUfunction scatterKernel, CudaArray& groupAtoms, const CudaCoordinationChecks& checks) {
    if (!enabled || !isfinite(dmax) || dmax <= 0)
        return false;
    if (dmax != this->dmax) {
        skin = (forcedSkin >= 0 ? forcedSkin : 0.1*dmax);
        this->dmax = dmax;
        stale = true;
        unusable = false;
    }
    Vec3 current[3];
    cu.getPeriodicBoxVectors(current[0], current[1], current[2]);
    for (int k = 0; k < 3; k++)
        if (!(current[k] == box[k])) {
            box[k] = current[k];
            stale = true;
            unusable = false;
        }
    // Where the cells have no grid for dmax + skin, the caller bins for dmax alone: ask again only
    // in another box (each search costs host time).
    const double cutoff = dmax+skin;
    if (unusable)
        return false;
    // Two groups take the lists wherever a grid serves: they were chosen for the pairs the tiles would evaluate.
    // So do particle functions: their all-pairs kernels evaluate each pair twice, or more (kernels/particles.cu).
    if (!cells.chooseGrid(cutoff, numNeighbors == numParticles && !particleFunction)) {
        unusable = true;
        return false;
    }
    // The longest list read back since: more than the capacity asks for more room.
    if (reading && cuEventQuery(readEvent) == CUDA_SUCCESS) {
        reading = false;
        nearFraction = (homes ? pinnedMaxCount[1]/(double) numParticles : 0.0);
        if (*pinnedMaxCount > (unsigned int) capacity) {
            if (!allocate((int) (*pinnedMaxCount*1.2)+32))
                return false;
            stale = true;
        }
    }
    if (memcmp(&cells.getGrid(), &grid, sizeof(grid)) != 0) {
        grid = cells.getGrid();
        stale = true;
    }
    if (capacity == 0 || (homes && cells.getNumItems() != allocatedLists)) {
        // Room for the expected count at the group's mean density and six standard deviations
        // (the lists of homes: half as much again).
        double expected = expectedCount(cutoff);
        double wanted = (homes ? 1.5*expected+64 : min(expected+6*sqrt(expected)+32, (double) numNeighbors));
        if (!allocate((int) max(wanted, (double) capacity)))
            return false;
        stale = true;
    }
    cells.initializeArrays();
    stamp = (stamp+1) & 0x3fffffff;
    int force = (stale || alwaysRebuild ? 1 : 0);
    if (scheduled && !force) {
        // What the checks of earlier evaluations stored, read without waiting: a request for a
        // rebuild since the last one the host forced, and the last evaluation that fell back to all pairs.
        int asked = hint[0], fellBack = hint[1];
        if (fellBack != lastFallback) {
            lastFallback = fellBack;
            fallbacks++;
            earlySkinShare -= FallbackShareStep;
            if (earlySkinShare < MinEarlySkinShare)
                scheduled = false;
        }
        if (asked != -1 && isAfter(asked, lastForced))
            force = 1;
    }
    if (force)
        lastForced = stamp;
    int binned = (force || !scheduled ? 1 : 0);
    double halfSkin2 = pow(HalfSkinShare*skin, 2), earlySkin2 = pow(earlySkinShare*skin, 2);
    float halfSkin2Float = (float) halfSkin2, earlySkin2Float = (float) earlySkin2;
    bool useDouble = cu.getUseDoublePrecision();
    void* halfSkinArg = (useDouble ? (void*) &halfSkin2 : (void*) &halfSkin2Float);
    void* earlySkinArg = (useDouble ? (void*) &earlySkin2 : (void*) &earlySkin2Float);
    CUdeviceptr hintArg = (scheduled ? hintDevice : 0);
    void* checkArgs[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &listSlot.getDevicePointer(),
            &listShift.getDevicePointer(), &refPos.getDevicePointer(), &listPos.getDevicePointer(), &numParticles, halfSkinArg,
            earlySkinArg, &force, &binned, &stamp, &rebuildStamp.getDevicePointer(), &hintArg, &cells.getWorkCounter().getDevicePointer(),
            (void*) &checks.invalidSlot, (void*) &checks.alarm, (void*) &checks.energyBuffer};
    int blockSize = 256;
    bool oneBlock = (force && checks.invalidSlot == 0);
    launcher.launch(checkKernel, checkArgs, (oneBlock ? 1 : min((numParticles+blockSize-1)/blockSize, cu.getNumThreadBlocks())), blockSize);
    if (binned)
        cells.bin(assignKernel, scanKernel, offsetKernel, scatterKernel, groupAtoms, rebuildStamp.getDevicePointer(), stamp);
    listCutoff2 = cutoff*cutoff;
    listCutoff2Float = (float) listCutoff2;
    // A forced rebuild reads the longest list back at once.
    if (stale)
        evaluations = 0;
    stale = false;
    return true;
}

void CudaCoordinationNeighborList::finishLaunch() {
    if (!reading && evaluations%ReadInterval == 0) {
        cuMemcpyDtoHAsync(pinnedMaxCount, maxCount.getDevicePointer(), sizeof(unsigned int), cu.getCurrentStream());
        if (homes)
            cuMemcpyDtoHAsync(pinnedMaxCount+1, cells.getWorkCounter().getDevicePointer()+2*sizeof(unsigned int), sizeof(unsigned int),
                    cu.getCurrentStream());
        cuEventRecord(readEvent, cu.getCurrentStream());
        reading = true;
    }
    evaluations++;
}
