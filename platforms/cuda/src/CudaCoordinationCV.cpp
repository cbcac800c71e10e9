#include "CudaCoordinationCV.h"
#include "internal/CoordinationParticleFunction.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** Whether F is a sum of terms f(c_a), each weight its own term's (particleFunctionIsElementwise() in kernels/particlefunction.cu). */
static bool isElementwise(CoordinationForce::ParticleFunction function) {
    return (function >= CoordinationForce::Sum && function <= CoordinationForce::Between);
}

// The threads of a block of computeCoordinationList.
static const int ListBlockSize = CudaCoordinationProgram::ListBlockSize;
// From this many particles binned, the cell kernel's forces go through the gradient buffer by
// sorted index (useSortedGradient()). H100, mixed precision, random particles at 33.4/nm^3, dmax
// 1 nm, in-step ms straight to the atoms against by sorted index: 100,000 0.114 against 0.118,
// 300,000 0.256 against 0.265, 1,000,000 0.847 against 0.807.
static const int SortedGradientMinParticles = 500000;
// The smallest S chunk of the tile kernel for two groups, which halves its chunks while they would
// leave the GPU half idle. Chunks of 16 make batches of 16 S particles (each half of a warp meets
// all of them): for 100 x 7,900 pairs (H100, in MD steps of the water box, by Nsight Compute) the
// tile kernel took 8.3 against 9.2 us with batches of 32.
static const int MinSChunk = 16;

class CudaCoordinationCV::ReorderListener : public ComputeContext::ReorderListener {
public:
    ReorderListener(CudaCoordinationCV& owner) : owner(owner) {
    }
    void execute() {
        owner.updateGroupAtoms();
    }
private:
    CudaCoordinationCV& owner;
};

CudaCoordinationCV::CudaCoordinationCV(CudaContext& cu, const CoordinationForce& force, const CudaCoordinationTuning& tuning,
        CudaCoordinationLauncher& launcher) : cu(cu), tuning(tuning), launcher(launcher) {
    mode = force.getMode();
    groupA = force.getGroupA();
    groupB = force.getGroupB();
    periodic = force.usesPeriodicBoundaryConditions();
    vector<int> slots = groupA;
    slots.insert(slots.end(), groupB.begin(), groupB.end());
    numSlots = slots.size();
    int nA = groupA.size(), nB = groupB.size();
    if (mode == CoordinationForce::OneGroup) {
        numL = numS = nA;
        offsetL = offsetS = 0;
    }
    else if (nA >= nB) {
        numL = nA;
        numS = nB;
        offsetL = 0;
        offsetS = nA;
    }
    else {
        numL = nB;
        numS = nA;
        offsetL = nA;
        offsetS = 0;
    }
    maxBlocks = cu.getNumThreadBlocks();
    // Smaller chunks of the short group when there are too few tiles to fill the GPU.
    int tile = CudaCoordinationProgram::TileSize;
    lPerThread = (tuning.lPerThread > 0 ? tuning.lPerThread : CudaCoordinationProgram::chooseLPerThread(force));
    tileThreads = tile/lPerThread;
    sChunk = tile;
    if (mode != CoordinationForce::OneGroup)
        while (sChunk > MinSChunk &&
                ((numL+tile-1)/tile)*((numS+sChunk-1)/sChunk)*(long long) tileThreads < maxBlocks*(long long) tile/2)
            sChunk /= 2;
    chainedSChunk = sChunk;
    groupOriginal.initialize<int>(cu, numSlots, "coordinationGroupOriginal");
    groupOriginal.upload(slots);
    // No atoms have been reordered yet; the ReorderListener follows every later reordering.
    groupAtoms.initialize<int>(cu, numSlots, "coordinationGroupAtoms");
    groupAtoms.upload(slots);
    inverseAtomIndex.initialize<int>(cu, cu.getNumAtoms(), "coordinationInverseAtomIndex");
    cvPartial.initialize<double>(cu, maxBlocks, "coordinationPartialSums");
    counter.initialize<unsigned int>(cu, 1, "coordinationCounter");
    counter.upload(vector<unsigned int>(1, 0));
    cu.addReorderListener(new ReorderListener(*this));
    if (periodic && mode != CoordinationForce::PairList)
        cells.reset(new CudaCoordinationCells(cu, launcher, mode == CoordinationForce::OneGroup, nA, nB, offsetL == 0, tuning.cellGrid));
    listLanes = 1;
    // Neighbour lists: for one group, and for two where the tiles would evaluate many pairs (a list
    // for each particle of both groups, of the other group's particles; with the tuning's
    // oneSidedLists for the smaller group's alone, LIST_ONE_SIDED in kernels/neighbors.cu); for a
    // particle function lists of particles (kernels/particlelists.cu), one group or two, or for one
    // group and an elementwise F of more particles lists of homes (kernels/particlehomes.cu), as
    // for the plain CV.
    bool oneGroup = (mode == CoordinationForce::OneGroup), particleLists = force.usesParticleFunction();
    bool homesAllowed = (!particleLists || (oneGroup && isElementwise(force.getParticleFunction())));
    if (cells && isfinite(force.getDMax()) && (oneGroup || particleLists || CudaCoordinationNeighborList::servesTwoGroups(nA, nB, tuning))) {
        int numListed = (oneGroup ? nA : nA+nB);
        listParticles = listedParticles = numListed;
        if (!oneGroup && !particleLists && tuning.oneSidedLists) {
            listSide = (nA <= nB ? 0 : 1);
            listedParticles = min(nA, nB);
        }
        neighborList.reset(new CudaCoordinationNeighborList(cu, launcher, *cells, numListed, oneGroup ? nA : max(nA, nB), tuning,
                particleLists, homesAllowed, listedParticles));
        listLanes = CudaCoordinationNeighborList::chooseLanes(cu, listedParticles, tuning);
    }
}


void CudaCoordinationCV::setParameters(const CoordinationForce& force, bool chainRule) {
    // Values that are kernel arguments.

    CoordinationSwitching switching(force);
    dmax = switching.getDMax();
    paramsDouble.invR0 = 1.0/switching.getLength();
    paramsDouble.d0 = force.getD0();
    paramsDouble.dmax2 = (isfinite(dmax) ? squaredLength(dmax) : numeric_limits<double>::infinity());
    paramsDouble.scale = switching.getStretchScale();
    paramsDouble.shift = switching.getStretchShift();
    paramsDouble.a = force.getA();
    paramsDouble.b = force.getB();
    paramsDouble.c = switching.getSmapConstant();
    paramsDouble.imageSearch2 = numeric_limits<double>::infinity();
    // Q on the device: a length of 1 nm, so x = r - d0, and ref = lambda r0 - d0 (kernels/switching.cu).
    paramsDouble.beta = force.getBeta();
    paramsDouble.ref = force.getLambda()*force.getR0()-force.getD0();
    if (force.getSwitchingFunction() == CoordinationForce::Q)
        paramsDouble.invR0 = 1.0;
    if (switching.hasPairParameters())
        uploadPairValues(force, switching);
    setParticleFunctionParameters(force);

    // A new program only when the code path changed; the owner compiles the kernels this
    // configuration uses now, the others (histograms, tiles where the box is too small for
    // cells) compile when first needed.

    CudaCoordinationProgram changed(force, cu, lPerThread, listLanes, min(sChunk, 32), listSide);
    if (!program || changed.files != program->files || changed.defines != program->defines) {
        program.reset(new CudaCoordinationProgram(changed));
        compiledKernels = 0;
    }

    // The gradient buffer: for the chain rule, and the cell kernel's forces by sorted index.

    sortedGradient = (cells && useSortedGradient());
    int gradientSize = (chainRule || sortedGradient ? 3*numSlots : 1);
    if (!gradient.isInitialized())
        gradient.initialize<long long>(cu, gradientSize, "coordinationGradient");
    else if (gradient.getSize() < gradientSize)
        gradient.resize(gradientSize);
    cu.clearBuffer(gradient);
}

void CudaCoordinationCV::setParticleFunctionParameters(const CoordinationForce& force) {
    particleFunction = force.usesParticleFunction();
    if (!particleFunction)
        return;
    ParticleFunctionParams& p = particleParams;
    p = {};
    p.lower = force.getBetweenLower();
    p.upper = force.getBetweenUpper();
    p.width = force.getBetweenSmear()*(force.getBetweenUpper()-force.getBetweenLower());
    p.beta = force.getFunctionBeta();
    // The threshold of MoreThan and LessThan: Rational of c, configured as CoordinationParticleFunction configures it.
    p.r0 = 1.0;
    p.dmax = numeric_limits<double>::infinity();
    p.scale = 1.0;
    p.n = 6;
    p.m = 12;
    CoordinationForce::ParticleFunction function = force.getParticleFunction();
    if (function == CoordinationForce::MoreThan || function == CoordinationForce::LessThan) {
        CoordinationForce thresholdForce;
        CoordinationParticleFunction::configureThreshold(force, thresholdForce);
        CoordinationSwitching threshold(thresholdForce);
        p.r0 = force.getThresholdR0();
        p.d0 = force.getThresholdD0();
        p.dmax = force.getThresholdDMax();
        p.scale = threshold.getStretchScale();
        p.shift = threshold.getStretchShift();
        p.n = force.getThresholdN();
        p.m = (force.getThresholdM() == 0 ? 2*p.n : force.getThresholdM());
    }
    p.function = (int) function;
    p.numCenters = groupA.size();
    p.power = force.getMomentPower();
    distancePowerDouble = force.getDistancePower();
    distancePowerFloat = (float) distancePowerDouble;
    if (!particleNumbers.isInitialized()) {
        // Zero before the first evaluation; evaluateParticleFunction() (or computeCoordinationNumbers()) clears it after each.
        particleNumbers.initialize<double>(cu, groupA.size(), "coordinationParticleNumbers");
        particleWeights.initialize<double>(cu, groupA.size(), "coordinationParticleWeights");
        cu.clearBuffer(particleNumbers);
    }
}

double CudaCoordinationCV::squaredLength(double length) const {
    if (cu.getUseDoublePrecision())
        return length*length;
    float rounded = (float) length;
    return (float) (rounded*rounded);
}

void CudaCoordinationCV::uploadPairValues(const CoordinationForce& force, const CoordinationSwitching& switching) {
    // Per pair: (w scale, w shift, length, dmax^2) with a cutoff, (w, length) without; the length
    // is 1/r0, or lambda r0 - d0 for Q. The image search must reach the largest cutoff of a pair.
    bool cutoff = isfinite(dmax), q = (force.getSwitchingFunction() == CoordinationForce::Q);
    int width = (cutoff ? 4 : 2);
    vector<double> values;
    values.reserve(width*groupA.size());
    for (int k = 0; k < groupA.size(); k++) {
        CoordinationSwitching::Pair pair = switching.forPair(k);
        double length = (q ? force.getLambda()*pair.length-force.getD0() : 1.0/pair.length);
        if (cutoff) {
            values.insert(values.end(), {pair.scale, pair.shift, length, squaredLength(pair.dmax)});
            dmax = max(dmax, pair.dmax);
        }
        else
            values.insert(values.end(), {pair.weight, length});
    }
    bool useDouble = cu.getUseDoublePrecision();
    int elementSize = width*(useDouble ? sizeof(double) : sizeof(float));
    if (!pairValues || pairValues->getSize() != groupA.size() || pairValues->getElementSize() != elementSize) {
        pairValues.reset(new CudaArray());
        pairValues->initialize(cu, groupA.size(), elementSize, "coordinationPairValues");
    }
    if (useDouble)
        pairValues->upload(values.data());
    else {
        vector<float> floats(values.begin(), values.end());
        pairValues->upload(floats.data());
    }
}

void CudaCoordinationCV::checkPairsUnchanged(const CoordinationForce& force) const {
    if (force.getMode() != mode || force.getGroupA() != groupA || force.getGroupB() != groupB)
        throw OpenMMException("updateParametersInContext: The groups of the CoordinationForce have changed; reinitialize the Context");
    if (force.usesPeriodicBoundaryConditions() != periodic)
        throw OpenMMException("updateParametersInContext: The periodic flag of the CoordinationForce has changed; reinitialize the Context");
}

void CudaCoordinationCV::updateGroupAtoms() {
    // Lists of homes keep the atoms of the last build (sortedAtom): build them anew.
    if (neighborList)
        neighborList->invalidate();
    int numAtoms = cu.getNumAtoms();
    void* invertArgs[] = {&cu.getAtomIndexArray().getDevicePointer(), &inverseAtomIndex.getDevicePointer(), &numAtoms};
    cu.executeKernel(invertKernel, invertArgs, numAtoms);
    void* updateArgs[] = {&groupOriginal.getDevicePointer(), &inverseAtomIndex.getDevicePointer(), &groupAtoms.getDevicePointer(), &numSlots};
    cu.executeKernel(updateKernel, updateArgs, numSlots);
}

void CudaCoordinationCV::setImageSearchDistance() {
    // In a triclinic box the reduced displacement is the nearest image only within half the
    // smallest box width; beyond it (and only if dmax reaches there) the kernels search.
    paramsDouble.imageSearch2 = numeric_limits<double>::infinity();
    if (periodic && cu.getBoxIsTriclinic()) {
        Vec3 a, b, c;
        cu.getPeriodicBoxVectors(a, b, c);
        double volume = a[0]*b[1]*c[2];
        Vec3 bc = b.cross(c), ca = c.cross(a), ab = a.cross(b);
        double halfWidth = 0.5*volume/max(sqrt(bc.dot(bc)), max(sqrt(ca.dot(ca)), sqrt(ab.dot(ab))));
        if (halfWidth < dmax)
            paramsDouble.imageSearch2 = halfWidth*halfWidth;
    }
    PairParams<double>& d = paramsDouble;
    paramsFloat = {(float) d.invR0, (float) d.d0, (float) d.dmax2, (float) d.scale, (float) d.shift, (float) d.a,
            (float) d.b, (float) d.c, (float) d.imageSearch2, (float) d.beta, (float) d.ref};
}

int CudaCoordinationCV::getNumTileBlocks(int chunk, int maxTileBlocks) const {
    long long tile = CudaCoordinationProgram::TileSize;
    long long numLChunks = (numL+tile-1)/tile;
    long long numTiles = (mode == CoordinationForce::OneGroup ? numLChunks*(numLChunks/2+1) : numLChunks*((numS+chunk-1)/chunk));
    return (int) max(1LL, min(numTiles, (long long) maxTileBlocks));
}

int CudaCoordinationCV::expectedKernels() const {
    typedef CudaCoordinationProgram P;
    if (particleFunction && hasParticleLists())
        return P::CoreKernels | P::ParticleKernels | P::BinningKernels | P::ListKernels | P::ParticleListKernels;
    if (particleFunction && hasParticleHomeLists())
        return P::CoreKernels | P::BinningKernels | P::ListKernels | P::ParticleHomeKernels;
    if (particleFunction)
        return P::CoreKernels | P::ParticleKernels;
    if (mode == CoordinationForce::PairList)
        return P::CoreKernels | P::PairKernels;
    bool lists = (cells && isfinite(dmax) && neighborList && neighborList->isEnabled());
    if (lists && !neighborList->hasHomeLists())
        return P::CoreKernels | P::BinningKernels | P::ListKernels;
    if (lists)
        return P::CoreKernels | P::BinningKernels | P::CellKernels | P::ListKernels;
    // The cells only where the cost model chooses them in the Context's box (as launch() will ask).
    if (!cells || !cells->chooseGrid(dmax))
        return P::CoreKernels | P::TileKernels;
    return P::CoreKernels | P::BinningKernels | P::CellKernels;
}

bool CudaCoordinationCV::takesTiles() const {
    return (expectedKernels() & CudaCoordinationProgram::TileKernels) != 0;
}

bool CudaCoordinationCV::takesNeighborLists() const {
    typedef CudaCoordinationProgram P;
    return expectedKernels() == (P::CoreKernels | P::BinningKernels | P::ListKernels);
}

bool CudaCoordinationCV::takesParticleLists() const {
    return (expectedKernels() & CudaCoordinationProgram::ParticleListKernels) != 0;
}

void CudaCoordinationCV::setChainedTileLimit(int maxTiles) {
    // Twice as wide at each try: the kernels' batches of S_BATCH (compiled for the own chunks) divide every width.
    chainedSChunk = sChunk;
    while (maxTiles > 0 && chainedSChunk < CudaCoordinationProgram::TileSize && getNumTileBlocks(chainedSChunk,
            numeric_limits<int>::max()) > maxTiles)
        chainedSChunk *= 2;
}

int CudaCoordinationCV::getNumChainedTiles() const {
    return getNumTileBlocks(chainedSChunk, numeric_limits<int>::max());
}

int CudaCoordinationCV::getChainableTiles() {
    if (particleFunction || mode == CoordinationForce::PairList || (neighborList && neighborList->isEnabled()) || (cells && cells->chooseGrid(dmax)) ||
            !hasKernels(CudaCoordinationProgram::TileKernels))
        return 0;
    return getNumChainedTiles();
}

vector<void*> CudaCoordinationCV::getTileArguments(int& flags) {
    setImageSearchDistance();
    void* params = (cu.getUseDoublePrecision() ? (void*) &paramsDouble : (void*) &paramsFloat);
    return {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &groupOriginal.getDevicePointer(), &numL, &numS,
            &offsetL, &offsetS, &sChunk, params, cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(),
            cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &flags,
            &cu.getLongForceBuffer().getDevicePointer(), &gradient.getDevicePointer(), &numSlots};
}

template <class Real>
CudaCoordinationCV::ChainedTileCV<Real> CudaCoordinationCV::getChainedTileCV(int cvIndex, int firstTile, CUdeviceptr invalidSlot) {
    setImageSearchDistance();
    ChainedTileCV<Real> entry;
    entry.groupAtoms = groupAtoms.getDevicePointer();
    entry.groupOriginal = groupOriginal.getDevicePointer();
    entry.gradient = gradient.getDevicePointer();
    entry.invalidSlot = invalidSlot;
    entry.numL = numL;
    entry.numS = numS;
    entry.offsetL = offsetL;
    entry.offsetS = offsetS;
    entry.sChunk = chainedSChunk;
    entry.numSlots = numSlots;
    entry.cv = cvIndex;
    entry.firstTile = firstTile;
    if constexpr (is_same<Real, double>::value)
        entry.params = paramsDouble;
    else
        entry.params = paramsFloat;
    return entry;
}

template CudaCoordinationCV::ChainedTileCV<float> CudaCoordinationCV::getChainedTileCV<float>(int, int, CUdeviceptr);
template CudaCoordinationCV::ChainedTileCV<double> CudaCoordinationCV::getChainedTileCV<double>(int, int, CUdeviceptr);

void CudaCoordinationCV::setChained() {
    lastPath = CudaCoordinationProgram::TileKernels;
    lastChained = true;
}

int CudaCoordinationCV::getMissingKernels() const {
    return expectedKernels() & ~compiledKernels;
}

const CudaCoordinationProgram& CudaCoordinationCV::getProgram() const {
    return *program;
}

void CudaCoordinationCV::requireKernels(int kernels) {
    int missing = kernels & ~compiledKernels;
    if (missing != 0)
        loadKernels(cu.createModule(CudaCoordinationProgram::assemble({program->getPart(missing)}, cu)), missing, 0);
}

void CudaCoordinationCV::loadKernels(CUmodule module, int kernels, int part) {
    map<string, CUfunction*> slots = {{"computeCoordinationTiles", &tilesKernel}, {"computeCoordinationPairs", &pairsKernel},
            {"applyGradient", &applyKernel}, {"histogramTiles", &histogramTilesKernel}, {"histogramPairs", &histogramPairsKernel},
            {"invertAtomIndex", &invertKernel}, {"updateGroupAtoms", &updateKernel}, {"checkPositions", &checkKernel},
            {"computeCoordinationCells", &cellsKernel}, {"computeCoordinationCellValues", &cellValuesKernel}, {"histogramCells", &histogramCellsKernel}, {"assignCells", &assignCellsKernel},
            {"scanCellBlocks", &scanCellsKernel}, {"addCellOffsets", &offsetCellsKernel}, {"scatterCells", &scatterCellsKernel},
            {"checkNeighborList", &checkListKernel}, {"computeCoordinationList", &listKernel},
            {"computeParticleNumbers", &particleNumbersKernel}, {"evaluateParticleFunction", &particleFunctionKernel},
            {"computeParticleGradient", &particleGradientKernel}, {"computeParticleListNumbers", &particleListNumbersKernel},
            {"computeParticleListGradient", &particleListGradientKernel}, {"computeParticleHomeNumbers", &particleHomeNumbersKernel},
            {"evaluateParticleTerms", &particleTermsKernel}, {"computeParticleHomeGradient", &particleHomeGradientKernel}};
    for (const string& name : CudaCoordinationProgram::getKernelNames(kernels))
        *slots.at(name) = cu.getKernel(module, CudaCoordinationProgram::getKernelName(name, part));
    compiledKernels |= kernels;
    // The tile and list kernels walk their work in a fixed order: as many blocks as run at once,
    // so that no block starts its share after the others have finished theirs. The tile kernel's
    // blocks need little cache: shared memory may take all it can, so that registers alone limit them.
    int perMultiprocessor = 0, multiprocessors = 0;
    cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.getDevice());
    if (kernels & CudaCoordinationProgram::TileKernels) {
        cuFuncSetAttribute(tilesKernel, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, tilesKernel, tileThreads, 0);
        residentTileBlocks = max(1, perMultiprocessor*multiprocessors);
    }
    if (kernels & CudaCoordinationProgram::ListKernels) {
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, listKernel, ListBlockSize, 0);
        residentListBlocks = max(1, perMultiprocessor*multiprocessors);
    }
    if (kernels & CudaCoordinationProgram::ParticleListKernels) {
        // Each pass as many blocks as fit at once (the first holds more registers: fewer may fit).
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, particleListNumbersKernel, ListBlockSize, 0);
        residentParticleListBlocks = max(1, perMultiprocessor*multiprocessors);
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, particleListGradientKernel, ListBlockSize, 0);
        residentParticleGradientBlocks = max(1, perMultiprocessor*multiprocessors);
    }
    int resident = max(max(residentTileBlocks, residentListBlocks), residentParticleListBlocks);
    if (resident > cvPartial.getSize())
        cvPartial.resize(resident);
}

bool CudaCoordinationCV::useSortedGradient() const {
    if (tuning.sortedGradient >= 0)
        return tuning.sortedGradient == 1;
    return cells->getNumBinned() >= SortedGradientMinParticles;
}

bool CudaCoordinationCV::binCells(double cutoff) {
    if (!cells || !cells->chooseGrid(cutoff))
        return false;
    requireKernels(CudaCoordinationProgram::BinningKernels);
    cells->bin(assignCellsKernel, scanCellsKernel, offsetCellsKernel, scatterCellsKernel, groupAtoms);
    return true;
}

bool CudaCoordinationCV::launch(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks,
        CUfunction chainedKernel, const vector<void*>* chainArguments) {
    if (particleFunction) {
        launchParticleFunction(flags, sum, value, record, checks);
        return false;
    }
    setImageSearchDistance();
    void* params = (cu.getUseDoublePrecision() ? (void*) &paramsDouble : (void*) &paramsFloat);
    int tile = CudaCoordinationProgram::TileSize;
    if (neighborList && neighborList->isEnabled())
        requireKernels(CudaCoordinationProgram::ListKernels | CudaCoordinationProgram::BinningKernels);
    bool useList = (neighborList && neighborList->prepare(dmax, checkListKernel, assignCellsKernel, scanCellsKernel, offsetCellsKernel,
            scatterCellsKernel, groupAtoms, checks));
    // Without the lists, the pair kernel checks the positions itself (kernels/energy.cu, checkSlotPositions()).
    CudaCoordinationChecks kernelChecks = {useList ? 0 : checks.invalidSlot, checks.alarm, useList ? 0 : checks.energyBuffer};
    // Lists of homes are the cell kernel's: prepare() launched the check and the binning.
    bool homeLists = (useList && neighborList->hasHomeLists());
    // With chainArguments, the lists' pass runs the chain rule too (kernels/chainedlists.cu).
    bool chained = (chainArguments != NULL && useList && !homeLists);
    bool useCells = (homeLists || (!useList && binCells(dmax)));
    // The cell kernel's forces for a large group: its gradient, by sorted index, then applyGradient();
    // with home lists, only while the atoms are not in spatial order (the lists measure it at each build).
    bool spatialAtoms = (homeLists && tuning.sortedGradient < 0 && neighborList->getNearFraction() > 0.5);
    bool sortedForces = (useCells && (flags & DirectForces) && sortedGradient && !spatialAtoms);
    int cellFlags = (sortedForces ? (flags & ~DirectForces) | Gradient : flags);
    CUdeviceptr sortedSlots = (useCells ? cells->getSortedSlots().getDevicePointer() : 0);
    vector<void*> args;
    CellArguments<float, float4> cellFloat;
    CellArguments<double, double4> cellDouble;
    if (useList && !homeLists) {
        args = listArguments(params);
        args.insert(args.end(), {&flags, &cu.getLongForceBuffer().getDevicePointer(), &gradient.getDevicePointer(), &numSlots});
    }
    else if (useCells)
        args = {cu.getUseDoublePrecision() ? (void*) &cellDouble : (void*) &cellFloat};
    else if (mode == CoordinationForce::PairList) {
        args = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &numL, params,
                cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(),
                cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &flags, &cu.getLongForceBuffer().getDevicePointer(),
                &gradient.getDevicePointer(), (pairValues ? &pairValues->getDevicePointer() : &noPointer)};
    }
    else
        args = getTileArguments(flags);
    // ACCUMULATE: the blocks add their sums to *sum.
    CUdeviceptr partial = (flags & Accumulate ? sum : cvPartial.getDevicePointer());
    vector<void*> tail = {&cu.getEnergyBuffer().getDevicePointer(), &partial, &counter.getDevicePointer(), &value, &record,
            &kernelChecks.alarm};
    if (useCells && cu.getUseDoublePrecision())
        setCellArguments(cellDouble, paramsDouble, cellFlags, homeLists, partial, value, record, kernelChecks);
    else if (useCells)
        setCellArguments(cellFloat, paramsFloat, cellFlags, homeLists, partial, value, record, kernelChecks);
    else if (chained)
        args.insert(args.end(), chainArguments->begin(), chainArguments->end());
    else {
        args.insert(args.end(), tail.begin(), tail.end());
        // The tile and pair kernels check the positions (the list kernel leaves it to checkNeighborList).
        if (!useList)
            args.insert(args.end(), {&kernelChecks.invalidSlot, &kernelChecks.energyBuffer});
    }
    typedef CudaCoordinationProgram P;
    lastPath = (useList && !homeLists ? P::ListKernels : useCells ? P::CellKernels : mode == CoordinationForce::PairList ?
            P::PairKernels : P::TileKernels);
    lastHomeLists = homeLists;
    lastSortedForces = sortedForces;
    lastChained = chained;
    lastEntrySlot = sortedSlots;
    // The cell kernel without forces is a family of its own, compiled only once it is first needed.
    bool cellValues = (useCells && !(cellFlags & (DirectForces | Gradient)));
    requireKernels(cellValues ? P::CellValueKernels : lastPath);
    if (useList && !homeLists)
        launcher.launch(chained ? chainedKernel : listKernel, args.data(),
                min((listedParticles*(long long) listLanes+ListBlockSize-1)/ListBlockSize, (long long) residentListBlocks), ListBlockSize);
    else if (useCells)
        launcher.launch(cellValues ? cellValuesKernel : cellsKernel, args.data(), getCellBlocks(), tile);
    else if (mode == CoordinationForce::PairList)
        launcher.launch(pairsKernel, args.data(), min((numL+tile-1)/tile, maxBlocks), tile);
    else
        launcher.launch(tilesKernel, args.data(), getNumTileBlocks(sChunk, residentTileBlocks), tileThreads);
    if (useList)
        neighborList->finishLaunch();
    if (sortedForces) {
        vector<void*> applyArgs = {&groupAtoms.getDevicePointer(), &sortedSlots, &numSlots, &gradient.getDevicePointer(),
                &cu.getLongForceBuffer().getDevicePointer()};
        launcher.launch(applyKernel, applyArgs.data(), min((numSlots+tile-1)/tile, maxBlocks), tile);
    }
    return chained;
}

vector<void*> CudaCoordinationCV::particleArguments(int& numA, int& numB) {
    void* params = (cu.getUseDoublePrecision() ? (void*) &paramsDouble : (void*) &paramsFloat);
    void* power = (cu.getUseDoublePrecision() ? (void*) &distancePowerDouble : (void*) &distancePowerFloat);
    return {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &groupOriginal.getDevicePointer(), &numA, &numB,
            &numSlots, params, power, cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(),
            cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer()};
}

long long CudaCoordinationCV::launchParticleNumbers(const CudaCoordinationChecks& checks) {
    typedef CudaCoordinationProgram P;
    setImageSearchDistance();
    requireKernels(P::ParticleKernels);
    int numA = groupA.size(), numB = groupB.size();
    long long tile = P::TileSize, chunksA = (numA+tile-1)/tile, chunksB = (numB+tile-1)/tile;
    long long tiles = chunksA*(mode == CoordinationForce::OneGroup ? chunksA : chunksB);
    vector<void*> args = particleArguments(numA, numB);
    args.insert(args.end(), {&particleNumbers.getDevicePointer(), (void*) &checks.invalidSlot, (void*) &checks.alarm,
            (void*) &checks.energyBuffer});
    launcher.launch(particleNumbersKernel, args.data(), min(tiles, (long long) maxBlocks), tile);
    return tiles;
}

bool CudaCoordinationCV::hasParticleLists() const {
    return (cells && isfinite(dmax) && neighborList && neighborList->isEnabled() && !neighborList->hasHomeLists());
}

bool CudaCoordinationCV::hasParticleHomeLists() const {
    return (cells && isfinite(dmax) && neighborList && neighborList->isEnabled() && neighborList->hasHomeLists() &&
            isElementwise((CoordinationForce::ParticleFunction) particleParams.function));
}

/** Make an array of 32-bit words hold at least size of them (initialized where it is not yet). */
static void atLeast(CudaContext& cu, CudaArray& array, size_t size, const char* name) {
    if (!array.isInitialized())
        array.initialize<int>(cu, size, name);
    else if (array.getSize() < size)
        array.resize(size);
}

bool CudaCoordinationCV::launchParticleHomeNumbers(const CudaCoordinationChecks& checks) {
    typedef CudaCoordinationProgram P;
    setImageSearchDistance();
    if (!hasParticleHomeLists())
        return false;
    requireKernels(P::BinningKernels | P::ListKernels | P::ParticleHomeKernels);
    // The positions are checked by checkNeighborList.
    if (!neighborList->prepare(dmax, checkListKernel, assignCellsKernel, scanCellsKernel, offsetCellsKernel, scatterCellsKernel,
            groupAtoms, checks))
        return false;
    if (!particleHomeCounter.isInitialized()) {
        particleHomeCounter.initialize<unsigned int>(cu, 1, "coordinationParticleHomeCounter");
        cu.clearBuffer(particleHomeCounter);
    }
    // The lists of entries within dmax: as large as the lists of homes.
    atLeast(cu, homeNearEntries, neighborList->getEntries().getSize(), "coordinationHomeNearEntries");
    atLeast(cu, homeNearCount, neighborList->getCounts().getSize(), "coordinationHomeNearCounts");
    CellArguments<float, float4> cellFloat;
    CellArguments<double, double4> cellDouble;
    void* power = (cu.getUseDoublePrecision() ? (void*) &distancePowerDouble : (void*) &distancePowerFloat);
    vector<void*> args = {setHomeCellArguments(cellFloat, cellDouble, 0, cells->getWorkCounter().getDevicePointer(), checks.alarm), power,
            &particleNumbers.getDevicePointer(), &homeNearEntries.getDevicePointer(), &homeNearCount.getDevicePointer()};
    launcher.launch(particleHomeNumbersKernel, args.data(), getCellBlocks(), CudaCoordinationProgram::TileSize);
    return true;
}

void* CudaCoordinationCV::setHomeCellArguments(CellArguments<float, float4>& cellFloat, CellArguments<double, double4>& cellDouble,
        int flags, CUdeviceptr workCounter, CUdeviceptr alarm) {
    // checkNeighborList checks the positions.
    CudaCoordinationChecks none = {0, alarm, 0};
    if (cu.getUseDoublePrecision()) {
        setCellArguments(cellDouble, paramsDouble, flags, true, 0, 0, 0, none);
        cellDouble.workCounter = workCounter;
        return &cellDouble;
    }
    setCellArguments(cellFloat, paramsFloat, flags, true, 0, 0, 0, none);
    cellFloat.workCounter = workCounter;
    return &cellFloat;
}

long long CudaCoordinationCV::getCellBlocks() const {
    long long tile = CudaCoordinationProgram::TileSize;
    return min(((long long) cells->getNumItems()*32+tile-1)/tile, (long long) maxBlocks);
}

void CudaCoordinationCV::launchParticleHomeFunction(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record,
        const CudaCoordinationChecks& checks) {
    int tile = CudaCoordinationProgram::TileSize;
    CUdeviceptr partial = (flags & Accumulate ? sum : cvPartial.getDevicePointer());
    // The weights go into the w of the lists' positions (kernels/particlehomes.cu).
    vector<void*> termArgs = {&particleNumbers.getDevicePointer(), &neighborList->getListPositions().getDevicePointer(), &particleParams,
            &numSlots, &particleHomeCounter.getDevicePointer(), &flags, &cu.getEnergyBuffer().getDevicePointer(), &partial,
            &counter.getDevicePointer(), &value, &record, (void*) &checks.alarm};
    launcher.launch(particleTermsKernel, termArgs.data(), min((numSlots+tile-1)/tile, maxBlocks), tile);
    int gradientFlags = flags & (DirectForces | Gradient);
    if (gradientFlags != 0) {
        // The same lists as the first pass (visitCells() with keep), its own counter of work items.
        CellArguments<float, float4> cellFloat;
        CellArguments<double, double4> cellDouble;
        void* power = (cu.getUseDoublePrecision() ? (void*) &distancePowerDouble : (void*) &distancePowerFloat);
        vector<void*> args = {setHomeCellArguments(cellFloat, cellDouble, gradientFlags, particleHomeCounter.getDevicePointer(),
                checks.alarm), power, &homeNearEntries.getDevicePointer(), &homeNearCount.getDevicePointer()};
        launcher.launch(particleHomeGradientKernel, args.data(), getCellBlocks(), tile);
    }
    neighborList->finishLaunch();
    // The gradient by sorted index (Gradient): the chain rule maps entry k to slot sortedSlot[k].
    recordParticlePath(false, true, false, cells->getSortedSlots().getDevicePointer());
}

void CudaCoordinationCV::recordParticlePath(bool particleLists, bool particleHomes, bool chained, CUdeviceptr entrySlot) {
    lastPath = CudaCoordinationProgram::ParticleKernels;
    lastParticleLists = particleLists;
    lastParticleHomes = particleHomes;
    lastHomeLists = particleHomes;
    lastSortedForces = false;
    lastChained = chained;
    lastEntrySlot = entrySlot;
}

bool CudaCoordinationCV::launchParticleListNumbers(const CudaCoordinationChecks& checks, bool evaluate, int flags, CUdeviceptr sum,
        CUdeviceptr value, CUdeviceptr record) {
    typedef CudaCoordinationProgram P;
    setImageSearchDistance();
    if (!hasParticleLists())
        return false;
    requireKernels(P::ParticleKernels | P::BinningKernels | P::ListKernels | P::ParticleListKernels);
    // The positions are checked by checkNeighborList.
    if (!neighborList->prepare(dmax, checkListKernel, assignCellsKernel, scanCellsKernel, offsetCellsKernel, scatterCellsKernel,
            groupAtoms, checks))
        return false;
    int numA = groupA.size();
    void* params = (cu.getUseDoublePrecision() ? (void*) &paramsDouble : (void*) &paramsFloat);
    void* power = (cu.getUseDoublePrecision() ? (void*) &distancePowerDouble : (void*) &distancePowerFloat);
    if (evaluate && (!particleListWeights.isInitialized() || particleListWeights.getSize() < listParticles)) {
        int elementSize = (cu.getUseDoublePrecision() ? sizeof(double) : sizeof(float));
        if (particleListWeights.isInitialized())
            particleListWeights.resize(listParticles);
        else
            particleListWeights.initialize(cu, listParticles, elementSize, "coordinationParticleListWeights");
    }
    // Without evaluate, no weights (NULL) and nothing summed (flags 0).
    CUdeviceptr weights = (evaluate ? particleListWeights.getDevicePointer() : 0);
    int finishFlags = (evaluate ? flags : 0);
    CUdeviceptr partial = (flags & Accumulate ? sum : cvPartial.getDevicePointer());
    vector<void*> args = listArguments(params);
    args.insert(args.end(), {power, &numA, &particleNumbers.getDevicePointer(), &particleParams, &weights, &finishFlags,
            &cu.getEnergyBuffer().getDevicePointer(), &partial, &counter.getDevicePointer(), &value, &record, (void*) &checks.alarm});
    launcher.launch(particleListNumbersKernel, args.data(), getParticleListBlocks(residentParticleListBlocks), ListBlockSize);
    return true;
}

long long CudaCoordinationCV::getParticleListBlocks(int resident) const {
    return min((listParticles*(long long) listLanes+ListBlockSize-1)/ListBlockSize, (long long) resident);
}

bool CudaCoordinationCV::launchParticleFunction(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record,
        const CudaCoordinationChecks& checks, CUfunction chainedKernel, const vector<void*>* chainArguments) {
    // Three launches (kernels/particles.cu, or on the neighbour lists kernels/particlelists.cu after
    // the lists' check and binning): the coordination numbers, the function and its weights, the
    // gradient. On the lists an elementwise function is evaluated by the first pass: two launches.
    typedef CudaCoordinationProgram P;
    int tile = P::TileSize;
    if (launchParticleHomeNumbers(checks)) {
        launchParticleHomeFunction(flags, sum, value, record, checks);
        return false;
    }
    bool elementwise = isElementwise((CoordinationForce::ParticleFunction) particleParams.function);
    bool chained = false;
    bool useList = launchParticleListNumbers(checks, elementwise, flags, sum, value, record);
    bool listWeights = (useList && elementwise);
    long long numberTiles = (useList ? 0 : launchParticleNumbers(checks));
    int numA = groupA.size(), numB = groupB.size();
    void* params = (cu.getUseDoublePrecision() ? (void*) &paramsDouble : (void*) &paramsFloat);
    void* power = (cu.getUseDoublePrecision() ? (void*) &distancePowerDouble : (void*) &distancePowerFloat);
    if (!listWeights) {
        vector<void*> functionArgs = {&particleNumbers.getDevicePointer(), &particleWeights.getDevicePointer(), &particleParams, &flags,
                &cu.getEnergyBuffer().getDevicePointer(), &sum, &value, &record, (void*) &checks.alarm};
        launcher.launch(particleFunctionKernel, functionArgs.data(), 1, P::ParticleFunctionThreads);
    }
    CUdeviceptr weightsByList = (listWeights ? particleListWeights.getDevicePointer() : 0);
    if ((flags & (DirectForces | Gradient)) && useList) {
        CudaCoordinationNeighborList& list = *neighborList;
        vector<void*> args = {&list.getRebuildStamp().getDevicePointer(), (void*) &list.getStamp(), &cu.getPosq().getDevicePointer(),
                &cells->getSortedAtoms().getDevicePointer(), &cells->getCellStarts().getDevicePointer(), &list.getGrid(),
                &list.getListPositions().getDevicePointer(),
                &list.getSlots().getDevicePointer(), &list.getEntries().getDevicePointer(), &list.getCounts().getDevicePointer(),
                &listParticles, (void*) &list.getCapacity(), &groupAtoms.getDevicePointer(), params, cu.getPeriodicBoxVecXPointer(),
                cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), power, &numA, &particleWeights.getDevicePointer(),
                &weightsByList, &flags, &cu.getLongForceBuffer().getDevicePointer(), &gradient.getDevicePointer(), &numSlots};
        // With the chain rule's arguments, the chained kernel: the same pass, its gradient times dE/dF to the forces.
        chained = (chainArguments != NULL);
        if (chained)
            args.insert(args.end(), chainArguments->begin(), chainArguments->end());
        launcher.launch(chained ? chainedKernel : particleListGradientKernel, args.data(),
                getParticleListBlocks(residentParticleGradientBlocks), ListBlockSize);
    }
    else if (flags & (DirectForces | Gradient)) {
        // In two groups, the tiles of group B's centres too (as many as group A's).
        long long gradientTiles = (mode == CoordinationForce::OneGroup ? numberTiles : 2*numberTiles);
        vector<void*> args = particleArguments(numA, numB);
        args.insert(args.end(), {&particleWeights.getDevicePointer(), &flags, &cu.getLongForceBuffer().getDevicePointer(),
                &gradient.getDevicePointer()});
        launcher.launch(particleGradientKernel, args.data(), min(gradientTiles, (long long) maxBlocks), tile);
    }
    // The longest list read back after the last launch (the first pass wrote it).
    if (useList)
        neighborList->finishLaunch();
    recordParticlePath(useList, false, chained, 0);
    return chained;
}

vector<double> CudaCoordinationCV::computeCoordinationNumbers(const CudaCoordinationChecks& checks) {
    // The first pass over the neighbour lists where they serve, else over all pairs.
    vector<double> c;
    if (launchParticleHomeNumbers(checks)) {
        // By sorted index: each one's slot is in the lists' slots (the order of their last build).
        neighborList->finishLaunch();
        vector<double> sorted;
        vector<int> slots;
        particleNumbers.download(sorted);
        neighborList->getSlots().download(slots);
        c.resize(sorted.size());
        for (int k = 0; k < numSlots; k++)
            c[slots[k]] = sorted[k];
        cu.clearBuffer(particleNumbers);
        return c;
    }
    if (launchParticleListNumbers(checks))
        neighborList->finishLaunch();
    else
        launchParticleNumbers(checks);
    particleNumbers.download(c);
    // Zero again for the next evaluation (evaluateParticleFunction() clears it where it runs; the
    // all-pairs pass adds to it).
    cu.clearBuffer(particleNumbers);
    return c;
}

CudaCoordinationCV::ChainRuleTarget CudaCoordinationCV::getChainRuleTarget() {
    return {gradient.getDevicePointer(), groupAtoms.getDevicePointer(), lastEntrySlot, numSlots};
}

int CudaCoordinationCV::getParticle(int slot) const {
    return (slot < groupA.size() ? groupA[slot] : groupB[slot-groupA.size()]);
}

template <class Real, class Real4>
void CudaCoordinationCV::setCellArguments(CellArguments<Real, Real4>& arguments, const PairParams<Real>& params, int flags,
        bool homeLists, CUdeviceptr partial, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks) {
    CellArguments<Real, Real4>& a = arguments;
    a = {};
    a.sortedPos = cells->getSortedPositions().getDevicePointer();
    a.sortedSlot = cells->getSortedSlots().getDevicePointer();
    a.sortedAtom = cells->getSortedAtoms().getDevicePointer();
    a.cellStart = cells->getCellStarts().getDevicePointer();
    a.workCounter = cells->getWorkCounter().getDevicePointer();
    a.groupOriginal = groupOriginal.getDevicePointer();
    a.grid = cells->getGrid();
    a.params = params;
    a.periodicBoxVecX = *(Real4*) cu.getPeriodicBoxVecXPointer();
    a.periodicBoxVecY = *(Real4*) cu.getPeriodicBoxVecYPointer();
    a.periodicBoxVecZ = *(Real4*) cu.getPeriodicBoxVecZPointer();
    a.flags = flags;
    a.forceBuffer = cu.getLongForceBuffer().getDevicePointer();
    a.gradient = gradient.getDevicePointer();
    a.numSlots = numSlots;
    a.posq = cu.getPosq().getDevicePointer();
    a.groupAtoms = groupAtoms.getDevicePointer();
    if (homeLists) {
        CudaCoordinationNeighborList& list = *neighborList;
        a.rebuildStamp = list.getRebuildStamp().getDevicePointer();
        a.stamp = list.getStamp();
        a.listPos = list.getListPositions().getDevicePointer();
        a.refPos = list.getReferencePositions().getDevicePointer();
        a.listShift = list.getShifts().getDevicePointer();
        a.listSlot = list.getSlots().getDevicePointer();
        a.listEntries = list.getEntries().getDevicePointer();
        a.listCount = list.getCounts().getDevicePointer();
        a.maxCount = list.getMaxCount().getDevicePointer();
        a.capacity = list.getCapacity();
        a.listCutoff2 = *(Real*) list.getListCutoff2();
    }
    a.energyBuffer = cu.getEnergyBuffer().getDevicePointer();
    a.cvPartial = partial;
    a.counter = counter.getDevicePointer();
    a.cvValue = value;
    a.record = record;
    a.alarm = checks.alarm;
    a.invalidSlot = checks.invalidSlot;
    a.positionEnergy = checks.energyBuffer;
}

vector<void*> CudaCoordinationCV::listArguments(void* params) {
    CudaCoordinationNeighborList& list = *neighborList;
    return {&list.getRebuildStamp().getDevicePointer(), (void*) &list.getStamp(), &cu.getPosq().getDevicePointer(),
            &cells->getSortedPositions().getDevicePointer(), &cells->getSortedSlots().getDevicePointer(),
            &cells->getSortedAtoms().getDevicePointer(), &cells->getCellStarts().getDevicePointer(), &list.getGrid(),
            &list.getListPositions().getDevicePointer(),
            &list.getReferencePositions().getDevicePointer(), &list.getShifts().getDevicePointer(), &list.getSlots().getDevicePointer(),
            &list.getEntries().getDevicePointer(), &list.getCounts().getDevicePointer(), &list.getMaxCount().getDevicePointer(), &listParticles,
            (void*) &list.getCapacity(), list.getListCutoff2(), &groupAtoms.getDevicePointer(), params, cu.getPeriodicBoxVecXPointer(),
            cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer()};
}

void CudaCoordinationCV::checkPositions(const CudaCoordinationChecks& checks) {
    void* args[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &numSlots, (void*) &checks.invalidSlot,
            (void*) &checks.alarm, (void*) &checks.energyBuffer};
    cu.executeKernel(checkKernel, args, numSlots);
}

void CudaCoordinationCV::launchHistogram(CudaArray& counts, int numBins, double maxDistance) {
    setImageSearchDistance();
    double maxDistance2 = maxDistance*maxDistance, invBinWidth = numBins/maxDistance;
    float maxDistance2Float = (float) maxDistance2, invBinWidthFloat = (float) invBinWidth;
    bool useDouble = cu.getUseDoublePrecision();
    void* imageSearch = (useDouble ? (void*) &paramsDouble.imageSearch2 : (void*) &paramsFloat.imageSearch2);
    void* maxArg = (useDouble ? (void*) &maxDistance2 : (void*) &maxDistance2Float);
    void* binArg = (useDouble ? (void*) &invBinWidth : (void*) &invBinWidthFloat);
    int tile = CudaCoordinationProgram::TileSize;
    if (binCells(maxDistance)) {
        // The binning for the histogram replaced that of the neighbour lists.
        if (neighborList)
            neighborList->invalidate();
        void* args[] = {&cells->getSortedPositions().getDevicePointer(), &cells->getSortedSlots().getDevicePointer(),
                &cells->getCellStarts().getDevicePointer(), &cells->getWorkCounter().getDevicePointer(), &groupOriginal.getDevicePointer(),
                &cells->getGrid(),
                cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &numBins, maxArg,
                binArg, &counts.getDevicePointer()};
        requireKernels(CudaCoordinationProgram::HistogramCellKernels);
        cu.executeKernel(histogramCellsKernel, args, (int) min((long long) cells->getNumItems()*32, (long long) maxBlocks*tile), tile);
    }
    else if (mode == CoordinationForce::PairList) {
        requireKernels(CudaCoordinationProgram::HistogramKernels);
        void* args[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &numL, imageSearch,
                cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(),
                cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &numBins, maxArg, binArg, &counts.getDevicePointer()};
        cu.executeKernel(histogramPairsKernel, args, numL, tile);
    }
    else {
        requireKernels(CudaCoordinationProgram::HistogramKernels);
        void* args[] = {&cu.getPosq().getDevicePointer(), &groupAtoms.getDevicePointer(), &groupOriginal.getDevicePointer(),
                &numL, &numS, &offsetL, &offsetS, imageSearch, cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(),
                cu.getPeriodicBoxVecXPointer(), cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &numBins, maxArg,
                binArg, &counts.getDevicePointer()};
        cu.executeKernel(histogramTilesKernel, args, getNumTileBlocks(tile, maxBlocks)*tile, tile);
    }
}

string CudaCoordinationCV::describeLastEvaluation() const {
    typedef CudaCoordinationProgram P;
    stringstream text;
    text << "kernel=" << (lastPath == P::TileKernels ? "tiles" : lastPath == P::PairKernels ? "pairs" : lastPath == P::CellKernels ?
            "cells" : lastPath == P::ListKernels ? "lists" : lastPath == P::ParticleKernels ? "particles" : "none");
    if (lastPath == P::TileKernels)
        text << " lPerThread=" << lPerThread << " sChunk=" << (lastChained ? chainedSChunk : sChunk);
    if (lastChained)
        text << " chainRule=chained";
    if (lastPath == P::CellKernels)
        text << " homeLists=" << lastHomeLists << " sortedForces=" << lastSortedForces;
    if (lastPath == P::ListKernels || (lastPath == P::ParticleKernels && lastParticleLists))
        text << " lanes=" << listLanes;
    if (lastPath == P::ListKernels && mode == CoordinationForce::TwoGroups)
        text << " sides=" << (listSide >= 0 ? "one" : "both");
    if (lastPath == P::ParticleKernels)
        text << " lists=" << (lastParticleHomes ? "homes" : lastParticleLists ? "particles" : "none");
    bool listPath = (lastPath == P::ListKernels || (lastPath == P::ParticleKernels && (lastParticleLists || lastParticleHomes)));
    if (lastPath == P::CellKernels || listPath) {
        const CudaCoordinationCells::Grid& grid = cells->getGrid();
        text << " grid=" << grid.rx << "," << grid.ry << "," << grid.rz << "," << grid.runLength;
    }
    if (neighborList && (listPath || lastHomeLists)) {
        text << " skin=" << neighborList->getSkin() << " rebuilds=" << (neighborList->rebuildsAlways() ? "always" : "when stale");
        text << " binning=" << (neighborList->schedulesBinning() ? "host" : "device") << " fallbacks=" << neighborList->getFallbacks();
    }
    text << " launches=" << (launcher.usesDependentLaunches() ? "dependent" : "plain");
    return text.str();
}
