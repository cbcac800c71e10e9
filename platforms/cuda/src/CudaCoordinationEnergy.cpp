#include "CudaCoordinationEnergy.h"
#include "CoordinationSpline.h"
#include "internal/CoordinationErrorMessages.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static const int NoSlot = numeric_limits<int>::max();

CudaCoordinationEnergy::CudaCoordinationEnergy(CudaContext& cu, CudaCoordinationLauncher& launcher, int numCVs, bool chain,
        bool widen, int shared) : cu(cu), launcher(launcher), numCVs(numCVs), shared(shared), chain(chain), widen(widen), distances(cu) {
    blocksDone.initialize<unsigned int>(cu, 1, "coordinationBlocksDone");
    blocksDone.upload(vector<unsigned int>(1, 0));
    sums.initialize<double>(cu, 2*numCVs, "coordinationSums");
    sums.upload(vector<double>(2*numCVs, 0.0));
    state.initialize<double>(cu, stateSize(), "coordinationState");
    state.upload(initialState());
    globals.initialize<double>(cu, 1, "coordinationGlobals");
    void* memory;
    if (cuMemHostAlloc(&memory, sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS)
        throw OpenMMException("CoordinationForce: allocating the alarm in mapped host memory failed");
    alarm = (volatile int*) memory;
    *alarm = 0;
    if (cuMemHostGetDevicePointer(&alarmOnDevice, memory, 0) != CUDA_SUCCESS) {
        cuMemFreeHost(memory);
        throw OpenMMException("CoordinationForce: the device cannot address mapped host memory");
    }
}

CudaCoordinationEnergy::~CudaCoordinationEnergy() {
    ContextSelector selector(cu);
    cuMemFreeHost((void*) alarm);
}

vector<double> CudaCoordinationEnergy::initialState() const {
    vector<double> values(stateSize(), 0.0);
    for (int k = 0; k < numCVs; k++)
        memcpy(&values[4*numCVs+2+k], &NoSlot, sizeof(int));
    return values;
}

void CudaCoordinationEnergy::setExpression(const Lepton::ParsedExpression& energy, const vector<string>& cvNames,
        const vector<string>& globalNames, const vector<const TabulatedFunction*>& tables, const vector<string>& tableNames) {
    CudaCoordinationModulePart part = CudaCoordinationProgram::getChainRulePart(cu, energy, cvNames, globalNames, tables, tableNames);
    CudaCoordinationDistances::addToChainRule(part, distances.getIndices(), distances.getDistances());
    bool compiled = (compiledPart && compiledPart->source == part.source && compiledPart->defines == part.defines);
    pendingPart.reset(compiled ? NULL : new CudaCoordinationModulePart(part));
    expression = true;
    this->cvNames = cvNames;
    this->globalNames = globalNames;
    globalValues.assign(globalNames.size(), numeric_limits<double>::quiet_NaN());
    int numGlobals = max(1, (int) globalNames.size());
    if (globals.getSize() != numGlobals)
        globals.resize(numGlobals);
    this->tables.resize(tables.size());
    for (int i = 0; i < tables.size(); i++) {
        // The layout of ExpressionUtilities::computeFunctionCoefficients(), several times faster (a hill of metadynamics).
        int width;
        vector<double> coefficients = CoordinationSpline::computeDoubleCoefficients(*tables[i], width);
        unique_ptr<CudaArray>& table = this->tables[i];
        if (!table || table->getSize()*4 != coefficients.size()) {
            table.reset(new CudaArray());
            table->initialize(cu, coefficients.size()/4, 4*(cu.getUseDoublePrecision() ? sizeof(double) : sizeof(float)),
                    "coordinationTable");
        }
        uploadCoefficients(*table, coefficients);
    }
}

void CudaCoordinationEnergy::setDistances(const vector<int>& indices, const vector<CoordinationDistance>& distances) {
    this->distances.set(indices, distances);
}

void CudaCoordinationEnergy::uploadCoefficients(CudaArray& table, const vector<double>& coefficients) {
    // Double in a Context of double precision (CudaCoordinationProgram::getChainRulePart()), else float.
    if (cu.getUseDoublePrecision())
        table.upload(coefficients.data());
    else {
        vector<float> rounded(coefficients.begin(), coefficients.end());
        table.upload(rounded.data());
    }
}

void CudaCoordinationEnergy::updateTable(int index, const TabulatedFunction& table) {
    if (!CudaCoordinationTableFit::canFit(table)) {
        int width;
        uploadCoefficients(*tables[index], CoordinationSpline::computeDoubleCoefficients(table, width));
        return;
    }
    if (!tableFit)
        tableFit.reset(new CudaCoordinationTableFit(cu));
    tableFit->fit(table, *tables[index]);
}

void CudaCoordinationEnergy::clearExpression() {
    expression = false;
    pendingPart.reset();
}

void CudaCoordinationEnergy::addBondedChainRule(const vector<CudaCoordinationCV*>& cvs, int forceGroup) {
    bonded.reset(new CudaCoordinationBondedChainRule(cu, cvs, state, forceGroup));
}

void CudaCoordinationEnergy::compile(const vector<CudaCoordinationCV*>& cvs) {
    typedef CudaCoordinationProgram P;
    // Buffers may have been reallocated (CudaCoordinationCV::setParameters()).
    if (bonded)
        bonded->setTargets(cvs, expression);
    // The CV whose pass runs the chain rule in its launch: a particle function on the neighbour lists
    // (kernels/chainedparticles.cu: its gradient pass, which starts with F complete), else, where
    // the bonded kernel takes the gradients, of the CVs that take tiles the one with the fewest
    // (kernels/chained.cu), else one on the neighbour lists (kernels/chainedlists.cu).
    int chained = -1, family = P::TileKernels, multiprocessors = 0;
    cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.getDevice());
    // (A distance, NULL among the CVs, has no kernels: the chain rule computes it.)
    for (int k = 0; k < cvs.size() && chained < 0; k++)
        if (cvs[k] != NULL && expression && chain && cvs[k]->takesParticleLists()) {
            chained = k;
            family = P::ParticleListKernels;
        }
    // A CV of two groups whose own chunks of the short group give more tiles than multiprocessors may take wider ones for it.
    for (int k = 0; k < cvs.size(); k++)
        if (cvs[k] != NULL)
            cvs[k]->setChainedTileLimit(widen ? multiprocessors : 0);
    bool bondedGradients = (bonded && bonded->covers());
    for (int k = 0; k < cvs.size() && family == P::TileKernels; k++)
        if (cvs[k] != NULL && expression && chain && bondedGradients && cvs[k]->takesTiles() &&
                (chained < 0 || cvs[k]->getNumChainedTiles() < cvs[chained]->getNumChainedTiles()))
            chained = k;
    // Else a CV on the neighbour lists of particles (kernels/chainedlists.cu).
    for (int k = 0; k < cvs.size() && chained < 0; k++)
        if (cvs[k] != NULL && expression && chain && bondedGradients && cvs[k]->takesNeighborLists()) {
            chained = k;
            family = P::ListKernels;
        }
    // Its family compiles with the chain rule where either is new; a chained kernel compiled
    // before serves only while that CV's kernels of the same program and family do.
    bool rechain = (chained >= 0 && (pendingPart || chained != chainedIndex || family != chainedFamily || !cvs[chained]->hasKernels(family)));
    if (rechain || chained != chainedIndex)
        chainedIndex = -1;
    // The other CVs on tiles of the same program (the same code) share the chained tile launch.
    chainedSet.clear();
    if (chained >= 0)
        chainedSet.push_back(chained);
    if (chained >= 0 && family == P::TileKernels) {
        CudaCoordinationModulePart own = cvs[chained]->getProgram().getPart(P::TileKernels);
        for (int k = 0; k < cvs.size() && chainedSet.size() < min(shared, (int) P::MaxChainedTileCVs); k++)
            if (k != chained && cvs[k] != NULL && cvs[k]->takesTiles()) {
                CudaCoordinationModulePart other = cvs[k]->getProgram().getPart(P::TileKernels);
                if (other.source == own.source && other.defines == own.defines)
                    chainedSet.push_back(k);
            }
    }
    const CudaCoordinationModulePart* chainRule = (pendingPart ? pendingPart.get() : compiledPart.get());
    // One part per distinct program and families (CVs of the same configuration share it), and the chain rule.
    vector<CudaCoordinationModulePart> parts;
    vector<int> missing(cvs.size()), partOf(cvs.size());
    for (int k = 0; k < cvs.size(); k++) {
        missing[k] = (cvs[k] == NULL ? 0 : cvs[k]->getMissingKernels() | (k == chained && rechain ? family : 0));
        if (missing[k] == 0)
            continue;
        CudaCoordinationModulePart part = cvs[k]->getProgram().getPart(missing[k]);
        partOf[k] = P::addPart(parts, k == chained && rechain ? P::getChainedPart(part, *chainRule, family) : part);
    }
    int chainRulePart = (rechain ? partOf[chained] : pendingPart ? P::addPart(parts, P::getStandaloneChainRulePart(*pendingPart)) : -1);
    if (parts.empty())
        return;
    CUmodule module = cu.createModule(P::assemble(parts, cu));
    for (int k = 0; k < cvs.size(); k++)
        if (missing[k] != 0)
            cvs[k]->loadKernels(module, missing[k], partOf[k]);
    if (chainRulePart >= 0)
        chainRuleKernel = cu.getKernel(module, P::getKernelName("applyChainRule", chainRulePart));
    if (pendingPart)
        compiledPart = move(pendingPart);
    if (rechain) {
        chainedKernel = cu.getKernel(module, P::getKernelName(P::getChainedKernelName(family), chainRulePart));
        chainedIndex = chained;
        chainedFamily = family;
    }
}

void CudaCoordinationEnergy::uploadGlobals(ContextImpl& context) {
    bool changed = false;
    for (int i = 0; i < globalNames.size(); i++) {
        double value = context.getParameter(globalNames[i]);
        if (value != globalValues[i]) {
            globalValues[i] = value;
            changed = true;
        }
    }
    if (changed)
        globals.upload(globalValues);
}

CUdeviceptr CudaCoordinationEnergy::getSum(int k) {
    return sums.getDevicePointer()+(sumParity*numCVs+k)*sizeof(double);
}

CUdeviceptr CudaCoordinationEnergy::getValue(int k) {
    return state.getDevicePointer()+k*sizeof(double);
}

CUdeviceptr CudaCoordinationEnergy::getRecord() {
    return state.getDevicePointer()+2*numCVs*sizeof(double);
}

CUdeviceptr CudaCoordinationEnergy::getInvalidSlot(int k) {
    return state.getDevicePointer()+(4*numCVs+2+k)*sizeof(double);
}

CudaCoordinationChecks CudaCoordinationEnergy::getChecks(int k, bool positions, bool energy) {
    return {positions ? getInvalidSlot(k) : 0, alarmOnDevice, energy ? cu.getEnergyBuffer().getDevicePointer() : 0};
}

vector<char> CudaCoordinationEnergy::getChainRuleTargets(const vector<CudaCoordinationCV*>& cvs, int skip, int& slots) {
    // ChainRuleTargets (kernels/chainrule.cu), by value: NUM_CVS pointers to each gradient, to each
    // groupAtoms and to each entrySlot, then NUM_CVS ints, padded to a multiple of 8 bytes.
    int pointers = 3*numCVs*sizeof(CUdeviceptr);
    vector<char> targets((pointers+numCVs*sizeof(int)+7)/8*8, 0);
    slots = 0;
    for (int k = 0; k < numCVs; k++) {
        // A distance (NULL) has no gradient buffer: no slots, its forces added by the chain rule itself.
        if (cvs[k] == NULL)
            continue;
        CudaCoordinationCV::ChainRuleTarget target = cvs[k]->getChainRuleTarget();
        memcpy(&targets[k*sizeof(CUdeviceptr)], &target.gradient, sizeof(CUdeviceptr));
        memcpy(&targets[(numCVs+k)*sizeof(CUdeviceptr)], &target.groupAtoms, sizeof(CUdeviceptr));
        memcpy(&targets[(2*numCVs+k)*sizeof(CUdeviceptr)], &target.entrySlot, sizeof(CUdeviceptr));
        memcpy(&targets[pointers+k*sizeof(int)], &target.numSlots, sizeof(int));
        if (k != skip)
            slots += target.numSlots;
    }
    return targets;
}

int CudaCoordinationEnergy::chainRuleFlags(bool gradient, bool energy, bool statistics) {
    // CV_STATISTICS (kernels/launch.cu) is no flag of the pair kernels: it has a bit apart from CudaCoordinationCV::Flags.
    const int CVStatistics = 1024;
    return (gradient ? CudaCoordinationCV::Gradient : 0) | (energy ? CudaCoordinationCV::ExpressionEnergy : 0) |
            (statistics ? CVStatistics : 0);
}

void CudaCoordinationEnergy::evaluate(const vector<CudaCoordinationCV*>& cvs, bool gradient, bool energy, bool statistics) {
    int flags = CudaCoordinationCV::Accumulate | (gradient ? CudaCoordinationCV::Gradient : 0);
    int chainFlags = chainRuleFlags(gradient, energy, statistics);
    vector<bool> inChained(numCVs);
    for (int k = 0; k < numCVs; k++)
        inChained[k] = (chainedIndex >= 0 && find(chainedSet.begin(), chainedSet.end(), k) != chainedSet.end());
    for (int k = 0; k < numCVs; k++)
        if (!inChained[k] && cvs[k] != NULL)
            cvs[k]->launch(flags, getSum(k), 0, 0, getChecks(k, energy, energy));
    if (chainedIndex >= 0 && chainedFamily == CudaCoordinationProgram::ParticleListKernels) {
        if (!launchChainedParticles(cvs, flags, chainFlags))
            launchChainRule(cvs, chainFlags);
    }
    else if (chainedIndex >= 0 && chainedFamily == CudaCoordinationProgram::ListKernels) {
        if (!launchChainedList(cvs, flags, chainFlags))
            launchChainRule(cvs, chainFlags);
    }
    else if (chainedIndex < 0 || !launchChained(cvs, chainFlags)) {
        for (int k = 0; k < numCVs; k++)
            if (inChained[k])
                cvs[k]->launch(flags, getSum(k), 0, 0, getChecks(k, energy, energy));
        launchChainRule(cvs, chainFlags);
    }
    // Where this evaluation left the gradients (the cell kernel's order may be new) for the bonded kernel.
    if (bonded)
        bonded->setTargets(cvs, true);
}

/** The CVs of set in one ChainedTileCVs, their tiles one after another; false where one of them does not take its tiles now. */
template <class Real>
static bool getChainedTileCVs(const vector<CudaCoordinationCV*>& cvs, const vector<int>& set, bool checkPositions,
        const function<CUdeviceptr(int)>& invalidSlot, CudaCoordinationCV::ChainedTileCVs<Real>& chained, int& tiles) {
    chained = CudaCoordinationCV::ChainedTileCVs<Real>();
    chained.count = set.size();
    tiles = 0;
    for (int i = 0; i < set.size(); i++) {
        int count = cvs[set[i]]->getChainableTiles();
        if (count == 0)
            return false;
        chained.cv[i] = cvs[set[i]]->getChainedTileCV<Real>(set[i], tiles, checkPositions ? invalidSlot(set[i]) : 0);
        tiles += count;
    }
    return true;
}

bool CudaCoordinationEnergy::launchChained(const vector<CudaCoordinationCV*>& cvs, int flags) {
    bool energy = (flags & CudaCoordinationCV::ExpressionEnergy) != 0;
    auto invalidSlot = [&] (int k) {return getInvalidSlot(k);};
    CudaCoordinationCV::ChainedTileCVs<float> chainedFloat;
    CudaCoordinationCV::ChainedTileCVs<double> chainedDouble;
    int tiles;
    bool ready = (cu.getUseDoublePrecision() ? getChainedTileCVs(cvs, chainedSet, energy, invalidSlot, chainedDouble, tiles) :
            getChainedTileCVs(cvs, chainedSet, energy, invalidSlot, chainedFloat, tiles));
    if (!ready)
        return false;
    CUdeviceptr sum = getSum(0);
    CUdeviceptr nextSum = sums.getDevicePointer()+(1-sumParity)*numCVs*sizeof(double);
    CUdeviceptr positionEnergy = (energy ? cu.getEnergyBuffer().getDevicePointer() : 0);
    vector<void*> args = {&cu.getPosq().getDevicePointer(), cu.getUseDoublePrecision() ? (void*) &chainedDouble : (void*) &chainedFloat,
            cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(),
            cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &flags, &cu.getLongForceBuffer().getDevicePointer(), &sum,
            &nextSum, &state.getDevicePointer(), &cu.getEnergyBuffer().getDevicePointer(), &globals.getDevicePointer(),
            &blocksDone.getDevicePointer(), &alarmOnDevice, &positionEnergy, &distances.getAtoms().getDevicePointer()};
    for (auto& table : tables)
        args.push_back(&table->getDevicePointer());
    // One block a tile; no block waits for another, so any number of them.
    launcher.launch(chainedKernel, args.data(), tiles, cvs[chainedIndex]->getTileThreads());
    for (int k : chainedSet)
        cvs[k]->setChained();
    // The next evaluation adds to the other sums, which this launch clears.
    sumParity = 1-sumParity;
    return true;
}

bool CudaCoordinationEnergy::launchChainedParticles(const vector<CudaCoordinationCV*>& cvs, int flags, int& chainFlags) {
    CudaCoordinationCV& cv = *cvs[chainedIndex];
    bool energy = (chainFlags & CudaCoordinationCV::ExpressionEnergy) != 0;
    CudaCoordinationChecks checks = getChecks(chainedIndex, energy, energy);
    if (!(flags & CudaCoordinationCV::Gradient)) {
        // No gradient pass to run the chain rule in: the CV's own launches, then applyChainRule().
        cv.launch(flags, getSum(chainedIndex), 0, 0, checks);
        return false;
    }
    int slots;
    vector<char> targets = getChainRuleTargets(cvs, chainedIndex, slots);
    CUdeviceptr sum = getSum(0);
    CUdeviceptr nextSum = sums.getDevicePointer()+(1-sumParity)*numCVs*sizeof(double);
    vector<void*> chainArgs = {targets.data(), &chainedIndex, &sum, &nextSum, &chainFlags, &state.getDevicePointer(),
            &cu.getEnergyBuffer().getDevicePointer(), &globals.getDevicePointer(), &alarmOnDevice, cu.getPeriodicBoxSizePointer(),
            cu.getInvPeriodicBoxSizePointer(), &distances.getAtoms().getDevicePointer()};
    for (auto& table : tables)
        chainArgs.push_back(&table->getDevicePointer());
    if (!cv.launchParticleFunction(flags, getSum(chainedIndex), 0, 0, checks, chainedKernel, &chainArgs))
        return false;
    // The next evaluation adds to the other sums, which this launch clears.
    sumParity = 1-sumParity;
    return true;
}

bool CudaCoordinationEnergy::launchChainedList(const vector<CudaCoordinationCV*>& cvs, int flags, int& chainFlags) {
    bool energy = (chainFlags & CudaCoordinationCV::ExpressionEnergy) != 0;
    CUdeviceptr sum = getSum(0);
    CUdeviceptr nextSum = sums.getDevicePointer()+(1-sumParity)*numCVs*sizeof(double);
    vector<void*> chainArgs = {&chainedIndex, &sum, &nextSum, &chainFlags, &state.getDevicePointer(),
            &cu.getEnergyBuffer().getDevicePointer(), &globals.getDevicePointer(), &blocksDone.getDevicePointer(), &alarmOnDevice,
            cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(), &distances.getAtoms().getDevicePointer()};
    for (auto& table : tables)
        chainArgs.push_back(&table->getDevicePointer());
    if (!cvs[chainedIndex]->launch(flags, getSum(chainedIndex), 0, 0, getChecks(chainedIndex, energy, energy), chainedKernel, &chainArgs))
        return false;
    // The next evaluation adds to the other sums, which this launch clears.
    sumParity = 1-sumParity;
    return true;
}

void CudaCoordinationEnergy::launchChainRule(const vector<CudaCoordinationCV*>& cvs, int flags) {
    int slots;
    vector<char> targets = getChainRuleTargets(cvs, -1, slots);
    bool gradient = (flags & CudaCoordinationCV::Gradient) != 0;
    CUdeviceptr sum = getSum(0);
    CUdeviceptr nextSum = sums.getDevicePointer()+(1-sumParity)*numCVs*sizeof(double);
    vector<void*> args = {targets.data(), &sum, &nextSum, &flags, &state.getDevicePointer(), &cu.getEnergyBuffer().getDevicePointer(),
            &cu.getLongForceBuffer().getDevicePointer(), &globals.getDevicePointer(), &alarmOnDevice, &cu.getPosq().getDevicePointer(),
            cu.getPeriodicBoxSizePointer(), cu.getInvPeriodicBoxSizePointer(), cu.getPeriodicBoxVecXPointer(),
            cu.getPeriodicBoxVecYPointer(), cu.getPeriodicBoxVecZPointer(), &distances.getAtoms().getDevicePointer()};
    for (auto& table : tables)
        args.push_back(&table->getDevicePointer());
    int blockSize = CudaCoordinationProgram::TileSize;
    int blocks = (gradient ? min((slots+blockSize-1)/blockSize, cu.getNumThreadBlocks()) : 1);
    launcher.launch(chainRuleKernel, args.data(), max(1, blocks), blockSize);
    // The next evaluation adds to the other sums, which this launch clears.
    sumParity = 1-sumParity;
}

void CudaCoordinationEnergy::setStatisticsStride(int stride) {
    vector<double> values;
    state.download(values);
    values[statisticsOffset()+2*numCVs+1] = stride;
    state.upload(values);
}

void CudaCoordinationEnergy::getStatistics(vector<double>& mean, vector<double>& m2, long long& count) {
    vector<double> values;
    state.download(values);
    const double* statistics = &values[statisticsOffset()];
    mean.assign(statistics, statistics+numCVs);
    m2.assign(statistics+numCVs, statistics+2*numCVs);
    count = (long long) statistics[2*numCVs];
}

void CudaCoordinationEnergy::setStatistics(const vector<double>& mean, const vector<double>& m2, long long count) {
    vector<double> values;
    state.download(values);
    double* statistics = &values[statisticsOffset()];
    copy(mean.begin(), mean.end(), statistics);
    copy(m2.begin(), m2.end(), statistics+numCVs);
    statistics[2*numCVs] = (double) count;
    state.upload(values);
}

vector<double> CudaCoordinationEnergy::readState(const vector<CudaCoordinationCV*>& cvs, bool checkEnergy,
        const function<string(const map<string, double>&, double, const vector<double>&)>& message) {
    vector<double> values;
    state.download(values);
    vector<double> cvValues(values.begin(), values.begin()+numCVs);
    int invalidCV = -1, slot = NoSlot;
    for (int k = 0; k < numCVs && invalidCV < 0; k++) {
        memcpy(&slot, &values[4*numCVs+2+k], sizeof(int));
        if (slot != NoSlot)
            invalidCV = k;
    }
    const double* record = &values[2*numCVs];
    bool energyInvalid = (checkEnergy && record[0] != 0);
    if (invalidCV < 0 && !energyInvalid) {
        // The GPU has finished (the download waited): lower the alarm unless a record is kept for later.
        if (record[0] == 0)
            *alarm = 0;
        return cvValues;
    }
    // Clear the record thrown for (an invalid position first), and keep any other for later.
    vector<double> cleared = values;
    if (invalidCV >= 0)
        cleared[4*numCVs+2+invalidCV] = initialState()[4*numCVs+2+invalidCV];
    else
        cleared[2*numCVs] = 0;
    state.upload(cleared);
    bool remaining = (cleared[2*numCVs] != 0);
    for (int k = 0; k < numCVs; k++) {
        int kept;
        memcpy(&kept, &cleared[4*numCVs+2+k], sizeof(int));
        remaining |= (kept != NoSlot);
    }
    *alarm = (remaining ? 1 : 0);
    if (invalidCV >= 0)
        throw OpenMMException("CoordinationForce: the position of particle "+to_string(cvs[invalidCV]->getParticle(slot))+
                " is not finite (NaN or infinity)");
    double energy = record[1];
    vector<double> recorded(record+2, record+2+numCVs), dEdcv(record+2+numCVs, record+2+2*numCVs);
    for (double cv : recorded)
        if (!isfinite(cv) || !expression)
            throw OpenMMException(CoordinationErrorMessages::nonFiniteCollectiveVariable(cv));
    map<string, double> variables;
    for (int k = 0; k < numCVs; k++)
        variables[cvNames[k]] = recorded[k];
    for (int i = 0; i < globalNames.size(); i++)
        variables[globalNames[i]] = globalValues[i];
    throw OpenMMException(message(variables, energy, dEdcv));
}
