#include "ReferenceCoordinationKernels.h"
#include "internal/CoordinationErrorMessages.h"
#include "internal/CoordinationExpression.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/reference/ReferenceForce.h"
#include "openmm/reference/ReferencePlatform.h"
#include "openmm/reference/ReferenceTabulatedFunction.h"
#include "lepton/Parser.h"
#include <algorithm>
#include <cmath>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static ReferencePlatform::PlatformData& getData(ContextImpl& context) {
    return *reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
}

ReferenceCoordinationCV* ReferenceCalcCoordinationForceKernel::createCV(const CoordinationForce& force) const {
    return new ReferenceCoordinationCV(force);
}

void ReferenceCalcCoordinationForceKernel::initialize(const System& system, const CoordinationForce& force) {
    cv.reset(createCV(force));
    histogramMaxDistance = 0.0;
    setParameters(force);
}

/** Lepton functions for the tables of a force (the caller deletes them). */
template <class F>
static map<string, Lepton::CustomFunction*> createFunctions(const F& force) {
    map<string, Lepton::CustomFunction*> functions;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        functions[force.getTabulatedFunctionName(i)] = createReferenceTabulatedFunction(force.getTabulatedFunction(i));
    return functions;
}

template <class F>
static vector<string> parameterNames(const F& force) {
    vector<string> names;
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        names.push_back(force.getGlobalParameterName(i));
    return names;
}

void ReferenceCalcCoordinationForceKernel::setParameters(const CoordinationForce& force) {
    cv->setParameters(force);
    map<string, Lepton::CustomFunction*> functions = createFunctions(force);
    Lepton::ParsedExpression parsed = CoordinationExpression::parseEnergyExpression(force, functions);
    energyExpression = force.getEnergyExpression();
    energy.set(parsed, {"cv"}, parameterNames(force));
    for (auto& function : functions)
        delete function.second;
}

void ReferenceCalcCoordinationForceKernel::copyParametersToContext(ContextImpl& context, const CoordinationForce& force) {
    cv->checkPairsUnchanged(force);
    setParameters(force);
}

double ReferenceCalcCoordinationForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    cv->prepare(context);
    const vector<Vec3>& pos = *getData(context).positions;
    vector<vector<Vec3> > gradient(1);
    if (includeForces)
        gradient[0].resize(pos.size());
    double value = cv->compute(pos, includeForces ? &gradient[0] : NULL);
    return energy.apply(context, {value}, gradient, includeForces, [&] (const map<string, double>& variables, double e, const vector<double>& dEdcv) {
        return CoordinationErrorMessages::nonFiniteEnergy(energyExpression, variables, e, dEdcv[0]);
    });
}

double ReferenceCalcCoordinationForceKernel::computeCollectiveVariable(ContextImpl& context) {
    cv->prepare(context);
    return cv->compute(*getData(context).positions, NULL);
}

vector<double> ReferenceCalcCoordinationForceKernel::computeCoordinationNumbers(ContextImpl& context) {
    cv->prepare(context);
    return cv->computeCoordinationNumbers(*getData(context).positions);
}

vector<long long> ReferenceCalcCoordinationForceKernel::computePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    cv->prepare(context);
    return cv->computeHistogram(*getData(context).positions, numBins, maxDistance);
}

void ReferenceCalcCoordinationForceKernel::accumulatePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    vector<long long> counts = computePairHistogram(context, numBins, maxDistance);
    if (histogram.size() != numBins || histogramMaxDistance != maxDistance)
        histogram.assign(numBins, 0);
    histogramMaxDistance = maxDistance;
    for (int k = 0; k < numBins; k++)
        histogram[k] += counts[k];
}

vector<long long> ReferenceCalcCoordinationForceKernel::getAccumulatedPairHistogram(ContextImpl& context) {
    return histogram;
}

void ReferenceCalcCoordinationForceKernel::clearPairHistogram(ContextImpl& context) {
    fill(histogram.begin(), histogram.end(), 0);
}

ReferenceCoordinationCV* ReferenceCalcCoordinationBiasForceKernel::createCV(const CoordinationForce& force) const {
    return new ReferenceCoordinationCV(force);
}

void ReferenceCalcCoordinationBiasForceKernel::initialize(const System& system, const CoordinationBiasForce& force) {
    cvs.clear();
    for (int k = 0; k < force.getNumCollectiveVariables(); k++)
        cvs.emplace_back(force.isDistance(k) ? NULL : createCV(force.getCollectiveVariable(k)));
    distances.resize(cvs.size());
    statistics.reset(cvs.size());
    setParameters(force);
}

void ReferenceCalcCoordinationBiasForceKernel::setParameters(const CoordinationBiasForce& force) {
    cvNames.clear();
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (cvs[k])
            cvs[k]->setParameters(force.getCollectiveVariable(k));
        else {
            CoordinationDistance& d = distances[k];
            force.getDistanceParameters(k, d.particle1, d.particle2, d.component, d.usePeriodic);
        }
        cvNames.push_back(force.getCollectiveVariableName(k));
    }
    tables.clear();
    tableNames.clear();
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++) {
        tables.emplace_back(CoordinationExpression::copyTable(force.getTabulatedFunction(i)));
        tableNames.push_back(force.getTabulatedFunctionName(i));
    }
    globalNames = parameterNames(force);
    energyExpression = force.getEnergyExpression();
    statistics.stride = force.getCVStatisticsStride();
    setEnergy();
}

void ReferenceCalcCoordinationBiasForceKernel::setEnergy() {
    // The expression was checked (CoordinationBiasForceImpl::validateForce()) before it came here.
    map<string, Lepton::CustomFunction*> functions;
    for (int i = 0; i < tables.size(); i++)
        functions[tableNames[i]] = createReferenceTabulatedFunction(*tables[i]);
    try {
        energy.set(CoordinationExpression::optimize(Lepton::Parser::parse(energyExpression, functions),
                "CoordinationBiasForce: energy expression \""+energyExpression+"\""), cvNames, globalNames);
    }
    catch (...) {
        for (auto& function : functions)
            delete function.second;
        throw;
    }
    for (auto& function : functions)
        delete function.second;
}

void ReferenceCalcCoordinationBiasForceKernel::copyParametersToContext(ContextImpl& context, const CoordinationBiasForce& force) {
    if (force.getNumCollectiveVariables() != cvs.size())
        throw OpenMMException("updateParametersInContext: The number of collective variables of the CoordinationBiasForce has changed; reinitialize the Context");
    for (int k = 0; k < cvs.size(); k++) {
        if (force.isDistance(k) != !cvs[k])
            throw OpenMMException("updateParametersInContext: CoordinationBiasForce: collective variable \""+force.getCollectiveVariableName(k)
                +"\" changed between a distance and a CoordinationForce; reinitialize the Context");
        if (cvs[k])
            cvs[k]->checkPairsUnchanged(force.getCollectiveVariable(k));
    }
    setParameters(force);
}

void ReferenceCalcCoordinationBiasForceKernel::copyTabulatedFunctionToContext(ContextImpl& context, const CoordinationBiasForce& force,
        int index) {
    tables[index].reset(CoordinationExpression::copyTable(force.getTabulatedFunction(index)));
    setEnergy();
}

double ReferenceCalcCoordinationBiasForceKernel::computeCV(int k, ContextImpl& context, const vector<Vec3>& pos, vector<Vec3>* gradient) {
    if (cvs[k]) {
        cvs[k]->prepare(context);
        return cvs[k]->compute(pos, gradient);
    }
    // A distance: r = r2 - r1 (nearest image if periodic), its length or one component.
    const CoordinationDistance& d = distances[k];
    Vec3 dvaluedr;
    double value = d.compute(pos, getData(context).periodicBoxVectors, gradient == NULL ? NULL : &dvaluedr);
    if (gradient != NULL) {
        (*gradient)[d.particle1] -= dvaluedr;
        (*gradient)[d.particle2] += dvaluedr;
    }
    return value;
}

double ReferenceCalcCoordinationBiasForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    const vector<Vec3>& pos = *getData(context).positions;
    vector<vector<Vec3> > gradients(cvs.size());
    vector<double> values(cvs.size());
    for (int k = 0; k < cvs.size(); k++) {
        if (includeForces)
            gradients[k].resize(pos.size());
        values[k] = computeCV(k, context, pos, includeForces ? &gradients[k] : NULL);
    }
    // The first evaluation of a step not counted yet adds its CVs to the statistics.
    if (statistics.takeStep(context.getStepCount()))
        statistics.add(values);
    return energy.apply(context, values, gradients, includeForces, [&] (const map<string, double>& variables, double e, const vector<double>& dEdcv) {
        return CoordinationErrorMessages::nonFiniteBiasEnergy(energyExpression, variables, e, dEdcv);
    });
}

vector<double> ReferenceCalcCoordinationBiasForceKernel::computeCollectiveVariables(ContextImpl& context) {
    vector<double> values;
    for (int k = 0; k < cvs.size(); k++)
        values.push_back(computeCV(k, context, *getData(context).positions, NULL));
    return values;
}

void ReferenceCalcCoordinationBiasForceKernel::getCVStatistics(ContextImpl& context, vector<double>& mean, vector<double>& m2, long long& count) {
    if (statistics.takeStep(context.getStepCount()))
        statistics.add(computeCollectiveVariables(context));
    mean = statistics.mean;
    m2 = statistics.m2;
    count = statistics.count;
}

void ReferenceCalcCoordinationBiasForceKernel::setCVStatistics(ContextImpl& context, const vector<double>& mean, const vector<double>& m2,
        long long count) {
    statistics.mean = mean;
    statistics.m2 = m2;
    statistics.count = count;
    statistics.setStep(context.getStepCount());
}
