#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationErrorMessages.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationParticleFunction.h"
#include "internal/CoordinationSwitching.h"
#include "internal/CoordinationWarnings.h"
#include "CoordinationKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include <cmath>
#include <iomanip>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

CoordinationForceImpl::CoordinationForceImpl(const CoordinationForce& owner) : owner(owner), frames(0),
        histogramBins(0), histogramMaxDistance(0.0), particleFunctionInContext(false) {
    forceGroup = owner.getForceGroup();
    validateForce(owner);
}

void CoordinationForceImpl::validate(const CoordinationForce& force, const System& system) {
    validateForce(force);
    const vector<int>* groups[] = {&force.getGroupA(), &force.getGroupB()};
    const char* names[] = {"groupA", "groupB"};
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < groups[g]->size(); i++)
            if ((*groups[g])[i] >= system.getNumParticles()) {
                stringstream msg;
                msg << "CoordinationForce: " << names[g] << " has an invalid particle index at position " << i << ": "
                    << (*groups[g])[i] << " (the System has " << system.getNumParticles() << " particles)";
                throw OpenMMException(msg.str());
            }
}

void CoordinationForceImpl::validateForce(const CoordinationForce& force) {
    if (force.getGroupA().empty())
        throw OpenMMException("CoordinationForce: groupA is empty: size 0");
    CoordinationSwitching switching(force);
    if (switching.hasPairParameters())
        for (int k = 0; k < force.getGroupA().size(); k++)
            switching.forPair(k);
    if (force.getDistancePower() != 0.0 && !force.usesParticleFunction()) {
        stringstream msg;
        msg << "CoordinationForce: distancePower " << force.getDistancePower() << " needs a particle function (per-atom coordination numbers); the force's is PairSum";
        throw OpenMMException(msg.str());
    }
    if (force.usesParticleFunction()) {
        if (force.getMode() == CoordinationForce::PairList)
            throw OpenMMException("CoordinationForce: particleFunction "+to_string((int) force.getParticleFunction())
                    +" needs one-group or two-group mode (per-atom coordination numbers); the force is in pair-list mode");
        CoordinationParticleFunction function(force);
    }
    CoordinationExpression::parseEnergyExpression(force);
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        CoordinationExpression::checkTable("CoordinationForce", force.getTabulatedFunctionName(i), force.getTabulatedFunction(i), 1);
}

void CoordinationForceImpl::initialize(ContextImpl& context) {
    validate(owner, context.getSystem());
    string warning = periodicBoundaryWarning(owner, context.getSystem(), describeForce(owner, "CoordinationForce", context.getSystem()));
    if (!warning.empty())
        CoordinationWarnings::warnOnce(&owner, warning);
    kernel = context.getPlatform().createKernel(CalcCoordinationForceKernel::Name(), context);
    kernel.getAs<CalcCoordinationForceKernel>().initialize(context.getSystem(), owner);
    particleFunctionInContext = owner.usesParticleFunction();
}

double CoordinationForceImpl::calcForcesAndEnergy(ContextImpl& context, bool includeForces, bool includeEnergy, int groups) {
    if ((groups&(1<<forceGroup)) != 0)
        return kernel.getAs<CalcCoordinationForceKernel>().execute(context, includeForces, includeEnergy);
    return 0.0;
}

map<string, double> CoordinationForceImpl::getDefaultParameters() {
    map<string, double> parameters;
    for (int i = 0; i < owner.getNumGlobalParameters(); i++)
        parameters[owner.getGlobalParameterName(i)] = owner.getGlobalParameterDefaultValue(i);
    return parameters;
}

vector<string> CoordinationForceImpl::getKernelNames() {
    return {CalcCoordinationForceKernel::Name()};
}

void CoordinationForceImpl::updateParametersInContext(ContextImpl& context) {
    validate(owner, context.getSystem());
    string missing = CoordinationErrorMessages::globalParameterNotInContext("CoordinationForce", getDefaultParameters(), context.getParameters());
    if (!missing.empty())
        throw OpenMMException(missing);
    kernel.getAs<CalcCoordinationForceKernel>().copyParametersToContext(context, owner);
    particleFunctionInContext = owner.usesParticleFunction();
    context.systemChanged();
}

double CoordinationForceImpl::computeCollectiveVariable(ContextImpl& context) {
    double cv = kernel.getAs<CalcCoordinationForceKernel>().computeCollectiveVariable(context);
    if (!isfinite(cv))
        throw OpenMMException(CoordinationErrorMessages::nonFiniteCollectiveVariable(cv));
    return cv;
}

vector<double> CoordinationForceImpl::computeCoordinationNumbers(ContextImpl& context) {
    // The Context's copy decides: a pair list, or PairSum, has no c_i to compute, whatever the force now says.
    if (!particleFunctionInContext) {
        if (owner.usesParticleFunction())
            throw OpenMMException("CoordinationForce: getCoordinationNumbers needs a particle function; the force's in this "
                    "Context is PairSum (setParticleFunction() was called after the Context was created or last updated: "
                    "call updateParametersInContext() first)");
        throw OpenMMException("CoordinationForce: getCoordinationNumbers needs a particle function; the force's is PairSum "
                "(call setParticleFunction() before creating the Context)");
    }
    return kernel.getAs<CalcCoordinationForceKernel>().computeCoordinationNumbers(context);
}

void CoordinationForceImpl::checkHistogramArguments(int numBins, double maxDistance) {
    if (numBins <= 0)
        throw OpenMMException("CoordinationForce: numBins must be positive, got "+to_string(numBins));
    if (numBins > CoordinationForce::MaxHistogramBins)
        throw OpenMMException("CoordinationForce: numBins must be at most MaxHistogramBins = "
            +to_string(CoordinationForce::MaxHistogramBins)+", got "+to_string(numBins));
    if (!(maxDistance > 0) || !isfinite(maxDistance)) {
        stringstream msg;
        msg << "CoordinationForce: maxDistance must be positive and finite, got " << maxDistance;
        throw OpenMMException(msg.str());
    }
}

vector<long long> CoordinationForceImpl::computePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    checkHistogramArguments(numBins, maxDistance);
    return kernel.getAs<CalcCoordinationForceKernel>().computePairHistogram(context, numBins, maxDistance);
}

void CoordinationForceImpl::accumulatePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    checkHistogramArguments(numBins, maxDistance);
    if (frames > 0 && (numBins != histogramBins || maxDistance != histogramMaxDistance)) {
        // Two distances that differ only beyond the default 6 digits (7 A is 0.7000000000000001 nm) are
        // written with all 17.
        stringstream given, running;
        given << maxDistance;
        running << histogramMaxDistance;
        if (given.str() == running.str()) {
            given.str("");
            running.str("");
            given << setprecision(17) << maxDistance;
            running << setprecision(17) << histogramMaxDistance;
        }
        stringstream msg;
        msg << "CoordinationForce: accumulatePairHistogram called with numBins " << numBins << " and maxDistance "
            << given.str() << ", but the running histogram has " << histogramBins << " and " << running.str()
            << "; call resetPairHistogram() first";
        throw OpenMMException(msg.str());
    }
    kernel.getAs<CalcCoordinationForceKernel>().accumulatePairHistogram(context, numBins, maxDistance);
    histogramBins = numBins;
    histogramMaxDistance = maxDistance;
    frames++;
}

vector<long long> CoordinationForceImpl::getAccumulatedPairHistogram(ContextImpl& context) {
    if (frames == 0)
        return vector<long long>();
    return kernel.getAs<CalcCoordinationForceKernel>().getAccumulatedPairHistogram(context);
}

void CoordinationForceImpl::resetPairHistogram(ContextImpl& context) {
    if (frames > 0)
        kernel.getAs<CalcCoordinationForceKernel>().clearPairHistogram(context);
    frames = 0;
}

string CoordinationForceImpl::describeForce(const Force& force, const string& className, const System& system) {
    stringstream description;
    description << className << " \"" << force.getName() << "\"";
    for (int i = 0; i < system.getNumForces(); i++)
        if (&system.getForce(i) == &force)
            description << " (force " << i << " of the System)";
    return description.str();
}

string CoordinationForceImpl::periodicBoundaryWarning(const CoordinationForce& force, const System& system, const string& which,
        const Force* owner) {
    if (force.usesPeriodicBoundaryConditions() || force.getPeriodicitySet())
        return "";
    for (int i = 0; i < system.getNumForces(); i++) {
        const Force& other = system.getForce(i);
        if (&other != &force && &other != owner && other.usesPeriodicBoundaryConditions())
            return which+" does not use periodic boundary conditions, but force "+to_string(i)+" of the System (\""+other.getName()
                +"\") does: the CV's distances ignore the periodic box, so a particle near a face of the box misses its neighbors "
                "across it. Call setUsesPeriodicBoundaryConditions(True) on the CoordinationForce (C++: true) for the nearest periodic "
                "image, PLUMED's default, or setUsesPeriodicBoundaryConditions(False) to keep distances without periodic images and "
                "silence this warning";
    }
    return "";
}
