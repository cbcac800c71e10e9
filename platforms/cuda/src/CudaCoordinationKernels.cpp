#include "CudaCoordinationKernels.h"
#include "internal/CoordinationErrorMessages.h"
#include "internal/CoordinationExpression.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ContextSelector.h"
#include "openmm/common/ExpressionUtilities.h"
#include "openmm/internal/ContextImpl.h"

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

typedef CudaCoordinationCV CV;

/**
 * Give an energy the expression of a CoordinationForce or CoordinationBiasForce, parsed by
 * CoordinationExpression::parseEnergyExpression(force, placeholders).
 */
template <class F>
static void setExpression(CudaCoordinationEnergy& energy, CudaContext& cu, const F& force, const vector<string>& cvNames) {
    ExpressionUtilities& expressions = cu.getExpressionUtilities();
    map<string, Lepton::CustomFunction*> placeholders;
    vector<const TabulatedFunction*> tables;
    vector<string> tableNames, globalNames;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++) {
        placeholders[force.getTabulatedFunctionName(i)] = expressions.getFunctionPlaceholder(force.getTabulatedFunction(i));
        tables.push_back(&force.getTabulatedFunction(i));
        tableNames.push_back(force.getTabulatedFunctionName(i));
    }
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        globalNames.push_back(force.getGlobalParameterName(i));
    energy.setExpression(CoordinationExpression::parseEnergyExpression(force, placeholders), cvNames, globalNames, tables, tableNames);
}

CudaCalcCoordinationForceKernel::CudaCalcCoordinationForceKernel(string name, const Platform& platform, CudaContext& cu) :
        CalcCoordinationForceKernel(name, platform), cu(cu) {
}

void CudaCalcCoordinationForceKernel::initialize(const System& system, const CoordinationForce& force) {
    ContextSelector selector(cu);
    tuning = CudaCoordinationTuning::fromEnvironment();
    launcher.reset(new CudaCoordinationLauncher(cu, tuning.dependentLaunch));
    cv.reset(new CudaCoordinationCV(cu, force, tuning, *launcher));
    energy.reset(new CudaCoordinationEnergy(cu, *launcher, 1, tuning.chainedTiles, tuning.widenChainedTiles, tuning.chainedTileCVs));
    // A CV that is its own energy has no gradient buffer for the bonded kernel to read.
    if (!CoordinationExpression::isEnergyTheCV(force))
        energy->addBondedChainRule({cv.get()}, force.getForceGroup());
    setParameters(force);
}

void CudaCalcCoordinationForceKernel::setParameters(const CoordinationForce& force) {
    bool chainRule = !CoordinationExpression::isEnergyTheCV(force);
    cv->setParameters(force, chainRule);
    if (chainRule)
        setExpression(*energy, cu, force, {"cv"});
    else
        energy->clearExpression();
    energyExpression = force.getEnergyExpression();
    energy->compile({cv.get()});
}

void CudaCalcCoordinationForceKernel::copyParametersToContext(ContextImpl& context, const CoordinationForce& force) {
    cv->checkPairsUnchanged(force);
    ContextSelector selector(cu);
    setParameters(force);
}

double CudaCalcCoordinationForceKernel::readState(bool checkEnergy) {
    return energy->readState({cv.get()}, checkEnergy, [&] (const map<string, double>& variables, double e, const vector<double>& dEdcv) {
        return CoordinationErrorMessages::nonFiniteEnergy(energyExpression, variables, e, dEdcv[0]);
    })[0];
}

double CudaCalcCoordinationForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    if (!includeForces && !includeEnergy)
        return 0.0;
    ContextSelector selector(cu);
    // What an earlier evaluation recorded, once the GPU has finished it: nothing here waits for the GPU.
    if (energy->isAlarmRaised())
        readState(true);
    // Positions are checked where the energy is read (an energy read of an evaluation that met a
    // position or energy that is not finite is NaN, and the next call throws).
    CudaCoordinationChecks checks = energy->getChecks(0, includeEnergy, includeEnergy);
    if (energy->hasExpression()) {
        // The pair kernel accumulates the CV (and its gradient), the chain rule does the rest.
        energy->uploadGlobals(context);
        energy->evaluate({cv.get()}, includeForces, includeEnergy);
    }
    else
        cv->launch((includeForces ? CV::DirectForces : 0) | (includeEnergy ? CV::BlockEnergy : 0), 0, 0, energy->getRecord(), checks);
    return 0.0;
}

double CudaCalcCoordinationForceKernel::computeCollectiveVariable(ContextImpl& context) {
    ContextSelector selector(cu);
    cv->launch(CV::Reduce, 0, energy->getValue(0), 0, energy->getChecks(0, true, false));
    return readState(false);
}

vector<double> CudaCalcCoordinationForceKernel::computeCoordinationNumbers(ContextImpl& context) {
    ContextSelector selector(cu);
    vector<double> c = cv->computeCoordinationNumbers(energy->getChecks(0, true, false));
    // A position that is not finite throws here, as on Reference.
    readState(false);
    return c;
}

static vector<long long> downloadCounts(CudaArray& counts) {
    vector<unsigned long long> values;
    counts.download(values);
    return vector<long long>(values.begin(), values.end());
}

vector<long long> CudaCalcCoordinationForceKernel::computePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    ContextSelector selector(cu);
    if (!histogramScratch.isInitialized())
        histogramScratch.initialize<unsigned long long>(cu, numBins, "coordinationHistogramScratch");
    else if (histogramScratch.getSize() != numBins)
        histogramScratch.resize(numBins);
    cu.clearBuffer(histogramScratch);
    cv->checkPositions(energy->getChecks(0, true, false));
    cv->launchHistogram(histogramScratch, numBins, maxDistance);
    readState(false);
    return downloadCounts(histogramScratch);
}

void CudaCalcCoordinationForceKernel::accumulatePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    ContextSelector selector(cu);
    if (!histogram.isInitialized() || histogram.getSize() != numBins) {
        if (!histogram.isInitialized())
            histogram.initialize<unsigned long long>(cu, numBins, "coordinationHistogram");
        else
            histogram.resize(numBins);
        cu.clearBuffer(histogram);
    }
    cv->checkPositions(energy->getChecks(0, true, false));
    cv->launchHistogram(histogram, numBins, maxDistance);
}

vector<long long> CudaCalcCoordinationForceKernel::getAccumulatedPairHistogram(ContextImpl& context) {
    ContextSelector selector(cu);
    readState(false);
    return downloadCounts(histogram);
}

void CudaCalcCoordinationForceKernel::clearPairHistogram(ContextImpl& context) {
    ContextSelector selector(cu);
    if (histogram.isInitialized())
        cu.clearBuffer(histogram);
}

string CudaCalcCoordinationForceKernel::describeLastEvaluation() const {
    return cv->describeLastEvaluation();
}

CudaCalcCoordinationBiasForceKernel::CudaCalcCoordinationBiasForceKernel(string name, const Platform& platform, CudaContext& cu) :
        CalcCoordinationBiasForceKernel(name, platform), cu(cu) {
}

void CudaCalcCoordinationBiasForceKernel::initialize(const System& system, const CoordinationBiasForce& force) {
    ContextSelector selector(cu);
    tuning = CudaCoordinationTuning::fromEnvironment();
    launcher.reset(new CudaCoordinationLauncher(cu, tuning.dependentLaunch));
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (force.isDistance(k)) {
            // A distance has no CudaCoordinationCV: the chain rule computes it (CudaCoordinationDistances).
            cvs.push_back(NULL);
            continue;
        }
        owned.emplace_back(new CudaCoordinationCV(cu, force.getCollectiveVariable(k), tuning, *launcher));
        cvs.push_back(owned.back().get());
    }
    energy.reset(new CudaCoordinationEnergy(cu, *launcher, cvs.size(), tuning.chainedTiles, tuning.widenChainedTiles, tuning.chainedTileCVs));
    energy->addBondedChainRule(cvs, force.getForceGroup());
    setParameters(force);
}

void CudaCalcCoordinationBiasForceKernel::setParameters(const CoordinationBiasForce& force) {
    names.clear();
    vector<int> distanceIndices;
    distances.clear();
    for (int k = 0; k < cvs.size(); k++) {
        if (cvs[k] != NULL)
            cvs[k]->setParameters(force.getCollectiveVariable(k), true);
        else {
            CoordinationDistance d;
            force.getDistanceParameters(k, d.particle1, d.particle2, d.component, d.usePeriodic);
            distanceIndices.push_back(k);
            distances.push_back(d);
        }
        names.push_back(force.getCollectiveVariableName(k));
    }
    energy->setDistances(distanceIndices, distances);
    setExpression(*energy, cu, force, names);
    energyExpression = force.getEnergyExpression();
    energy->compile(cvs);
    if (force.getCVStatisticsStride() != statistics.stride)
        energy->setStatisticsStride(force.getCVStatisticsStride());
    statistics.stride = force.getCVStatisticsStride();
}

void CudaCalcCoordinationBiasForceKernel::copyParametersToContext(ContextImpl& context, const CoordinationBiasForce& force) {
    if (force.getNumCollectiveVariables() != cvs.size())
        throw OpenMMException("updateParametersInContext: The number of collective variables of the CoordinationBiasForce has changed; reinitialize the Context");
    for (int k = 0; k < cvs.size(); k++) {
        if (force.isDistance(k) != (cvs[k] == NULL))
            throw OpenMMException("updateParametersInContext: CoordinationBiasForce: collective variable \""+force.getCollectiveVariableName(k)
                +"\" changed between a distance and a CoordinationForce; reinitialize the Context");
        if (cvs[k] != NULL)
            cvs[k]->checkPairsUnchanged(force.getCollectiveVariable(k));
    }
    ContextSelector selector(cu);
    setParameters(force);
}

void CudaCalcCoordinationBiasForceKernel::copyTabulatedFunctionToContext(ContextImpl& context, const CoordinationBiasForce& force, int index) {
    ContextSelector selector(cu);
    energy->updateTable(index, force.getTabulatedFunction(index));
}

vector<double> CudaCalcCoordinationBiasForceKernel::readState(bool checkEnergy) {
    return energy->readState(cvs, checkEnergy, [&] (const map<string, double>& variables, double e, const vector<double>& dEdcv) {
        return CoordinationErrorMessages::nonFiniteBiasEnergy(energyExpression, variables, e, dEdcv);
    });
}

double CudaCalcCoordinationBiasForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    if (!includeForces && !includeEnergy)
        return 0.0;
    ContextSelector selector(cu);
    // As CudaCalcCoordinationForceKernel::execute(): what an earlier evaluation recorded, without waiting for the GPU.
    if (energy->isAlarmRaised())
        readState(true);
    energy->uploadGlobals(context);
    // The first evaluation of a step not counted yet adds its CVs to their statistics, on the device (the step count is the host's).
    energy->evaluate(cvs, includeForces, includeEnergy, statistics.takeStep(context.getStepCount()));
    return 0.0;
}

vector<double> CudaCalcCoordinationBiasForceKernel::computeCollectiveVariables(ContextImpl& context) {
    ContextSelector selector(cu);
    for (int k = 0; k < cvs.size(); k++)
        if (cvs[k] != NULL)
            cvs[k]->launch(CV::Reduce, 0, energy->getValue(k), 0, energy->getChecks(k, true, false));
    vector<double> values = readState(false);
    if (!distances.empty()) {
        // The distances from the positions, on the host (CoordinationDistance::compute(), the device's math): a value
        // read back, not a step. In the order of the CVs, as setParameters() collected them.
        vector<Vec3> positions;
        context.getPositions(positions);
        Vec3 box[3];
        context.getPeriodicBoxVectors(box[0], box[1], box[2]);
        for (int k = 0, j = 0; k < cvs.size(); k++)
            if (cvs[k] == NULL)
                values[k] = distances[j++].compute(positions, box, NULL);
    }
    return values;
}

void CudaCalcCoordinationBiasForceKernel::getCVStatistics(ContextImpl& context, vector<double>& mean, vector<double>& m2, long long& count) {
    ContextSelector selector(cu);
    bool countNow = statistics.takeStep(context.getStepCount());
    vector<double> values = (countNow ? computeCollectiveVariables(context) : vector<double>());
    energy->getStatistics(mean, m2, count);
    if (countNow) {
        // The same update as the device's (kernels/chainrule.cu), here where the CVs were read back anyway.
        CoordinationCVStatistics::add(values, count, mean, m2, statistics.stride);
        energy->setStatistics(mean, m2, count);
    }
}

void CudaCalcCoordinationBiasForceKernel::setCVStatistics(ContextImpl& context, const vector<double>& mean, const vector<double>& m2,
        long long count) {
    ContextSelector selector(cu);
    energy->setStatistics(mean, m2, count);
    statistics.setStep(context.getStepCount());
}

string CudaCalcCoordinationBiasForceKernel::describeLastEvaluation() const {
    string text;
    for (int k = 0; k < cvs.size(); k++)
        text += (k > 0 ? "; " : "")+names[k]+": "+(cvs[k] == NULL ? string("distance (in the chain rule)") : cvs[k]->describeLastEvaluation());
    return text;
}
