#include "internal/CoordinationBiasForceImpl.h"
#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationErrorMessages.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationWarnings.h"
#include "CoordinationKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/ContextImpl.h"
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static const string className = "CoordinationBiasForce";

CoordinationBiasForceImpl::CoordinationBiasForceImpl(const CoordinationBiasForce& owner) : owner(owner) {
    forceGroup = owner.getForceGroup();
    validateForce(owner);
}

void CoordinationBiasForceImpl::validateForce(const CoordinationBiasForce& force) {
    if (force.getNumCollectiveVariables() == 0)
        throw OpenMMException(className+": the force has no collective variables: 0");
    int first = -1;
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (force.isDistance(k))
            continue;
        const CoordinationForce& variable = force.getCollectiveVariable(k);
        const string& name = force.getCollectiveVariableName(k);
        CoordinationForceImpl::validateForce(variable);
        if (!CoordinationExpression::isEnergyTheCV(variable))
            throw OpenMMException(className+": collective variable \""+name+"\" has an energy expression that is not \"cv\": \""
                +variable.getEnergyExpression()+"\"");
        if (first < 0)
            first = k;
        if (variable.usesPeriodicBoundaryConditions() != force.getCollectiveVariable(first).usesPeriodicBoundaryConditions())
            throw OpenMMException(className+": collective variable \""+name+"\" has periodic = "
                +(variable.usesPeriodicBoundaryConditions() ? "true" : "false")+", unlike \""+force.getCollectiveVariableName(first)+"\"");
    }
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        CoordinationExpression::checkTable(className, force.getTabulatedFunctionName(i), force.getTabulatedFunction(i), 3);
    CoordinationExpression::parseEnergyExpression(force);
}

void CoordinationBiasForceImpl::validate(const CoordinationBiasForce& force, const System& system) {
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (!force.isDistance(k)) {
            CoordinationForceImpl::validate(force.getCollectiveVariable(k), system);
            continue;
        }
        int particles[2];
        int component;
        bool usePeriodic;
        force.getDistanceParameters(k, particles[0], particles[1], component, usePeriodic);
        for (int j = 0; j < 2; j++)
            if (particles[j] >= system.getNumParticles())
                throw OpenMMException(className+": distance \""+force.getCollectiveVariableName(k)+"\": particle"+to_string(j+1)
                    +" out of range: "+to_string(particles[j])+" (the System has "+to_string(system.getNumParticles())+" particles)");
    }
}

string CoordinationBiasForceImpl::periodicDistanceWarning(const CoordinationBiasForce& force, const System& system, const string& which) {
    vector<string> names;
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (!force.isDistance(k)) {
            if (force.getCollectiveVariable(k).usesPeriodicBoundaryConditions())
                return "";
            continue;
        }
        int particle1, particle2, component;
        bool usePeriodic;
        force.getDistanceParameters(k, particle1, particle2, component, usePeriodic);
        if (usePeriodic)
            names.push_back("\""+force.getCollectiveVariableName(k)+"\"");
    }
    if (names.empty())
        return "";
    for (int i = 0; i < system.getNumForces(); i++)
        if (&system.getForce(i) != &force && system.getForce(i).usesPeriodicBoundaryConditions())
            return "";
    Vec3 a, b, c;
    system.getDefaultPeriodicBoxVectors(a, b, c);
    if (a != Vec3(2, 0, 0) || b != Vec3(0, 2, 0) || c != Vec3(0, 0, 2))
        return "";
    string list;
    for (int i = 0; i < names.size(); i++)
        list += (i == 0 ? "" : i+1 == names.size() ? " and " : ", ")+names[i];
    return which+": the distance"+(names.size() > 1 ? "s " : " ")+list+(names.size() > 1 ? " take" : " takes")
        +" the nearest periodic image (addDistance's default), but no other force of the System uses periodic boundary "
        "conditions and the System's default box is OpenMM's 2 nm cube, which nothing has changed: a distance beyond 1 nm is "
        "wrapped into that box (1.9 nm reads 0.1 nm). Pass usePeriodic=False to addDistance or setDistanceParameters (C++: "
        "false) for plain distances, or give the System its box with setDefaultPeriodicBoxVectors";
}

void CoordinationBiasForceImpl::initialize(ContextImpl& context) {
    validateForce(owner);
    validate(owner, context.getSystem());
    string which = CoordinationForceImpl::describeForce(owner, className, context.getSystem());
    for (int k = 0; k < owner.getNumCollectiveVariables(); k++) {
        if (owner.isDistance(k))
            continue;
        const CoordinationForce& variable = owner.getCollectiveVariable(k);
        string warning = CoordinationForceImpl::periodicBoundaryWarning(variable, context.getSystem(),
                which+", its collective variable \""+owner.getCollectiveVariableName(k)+"\",", &owner);
        if (!warning.empty())
            CoordinationWarnings::warnOnce(&variable, warning);
    }
    string warning = periodicDistanceWarning(owner, context.getSystem(), which);
    if (!warning.empty())
        CoordinationWarnings::warnOnce(&owner, warning);
    defaults = getDefaultParameters();
    recordTableShapes();
    bonds = getBondedParticles();
    kernel = context.getPlatform().createKernel(CalcCoordinationBiasForceKernel::Name(), context);
    kernel.getAs<CalcCoordinationBiasForceKernel>().initialize(context.getSystem(), owner);
    statisticsStride = owner.getCVStatisticsStride();
}

double CoordinationBiasForceImpl::calcForcesAndEnergy(ContextImpl& context, bool includeForces, bool includeEnergy, int groups) {
    if ((groups&(1<<forceGroup)) != 0)
        return kernel.getAs<CalcCoordinationBiasForceKernel>().execute(context, includeForces, includeEnergy);
    return 0.0;
}

map<string, double> CoordinationBiasForceImpl::getDefaultParameters() {
    map<string, double> parameters;
    for (int i = 0; i < owner.getNumGlobalParameters(); i++)
        parameters[owner.getGlobalParameterName(i)] = owner.getGlobalParameterDefaultValue(i);
    return parameters;
}

vector<string> CoordinationBiasForceImpl::getKernelNames() {
    return {CalcCoordinationBiasForceKernel::Name()};
}

vector<pair<int, int> > CoordinationBiasForceImpl::getBondedParticles() const {
    vector<pair<int, int> > bonds;
    for (int k = 0; k < owner.getNumCollectiveVariables(); k++)
        if (owner.isDistance(k)) {
            int particle1, particle2, component;
            bool usePeriodic;
            owner.getDistanceParameters(k, particle1, particle2, component, usePeriodic);
            if (!usePeriodic)
                bonds.push_back(make_pair(particle1, particle2));
        }
    return bonds;
}

void CoordinationBiasForceImpl::updateParametersInContext(ContextImpl& context) {
    validateForce(owner);
    validate(owner, context.getSystem());
    string missing = CoordinationErrorMessages::globalParameterNotInContext("CoordinationBiasForce", getDefaultParameters(), context.getParameters());
    if (!missing.empty())
        throw OpenMMException(missing);
    if (getBondedParticles() != bonds)
        throw OpenMMException("updateParametersInContext: CoordinationBiasForce: the particles of the distances without the nearest image "
            "(usePeriodic false) have changed, or a distance's usePeriodic has; reinitialize the Context");
    kernel.getAs<CalcCoordinationBiasForceKernel>().copyParametersToContext(context, owner);
    // A default that changed since the Context was created or last updated replaces the Context's value.
    for (auto& parameter : getDefaultParameters()) {
        auto previous = defaults.find(parameter.first);
        if (previous != defaults.end() && previous->second != parameter.second)
            context.setParameter(parameter.first, parameter.second);
    }
    defaults = getDefaultParameters();
    recordTableShapes();
    statisticsStride = owner.getCVStatisticsStride();
    context.systemChanged();
}

void CoordinationBiasForceImpl::recordTableShapes() {
    tableShapes.clear();
    for (int i = 0; i < owner.getNumTabulatedFunctions(); i++)
        tableShapes.push_back(CoordinationExpression::describeTableShape(owner.getTabulatedFunction(i)));
}

void CoordinationBiasForceImpl::updateTabulatedFunctionInContext(ContextImpl& context, int index) {
    const string& name = owner.getTabulatedFunctionName(index);
    if (index >= tableShapes.size())
        throw OpenMMException(className+": updateTabulatedFunctionInContext: the Context has no tabulated function \""+name+
                "\" (index "+to_string(index)+"); call updateParametersInContext()");
    const TabulatedFunction& table = owner.getTabulatedFunction(index);
    string shape = CoordinationExpression::describeTableShape(table);
    if (shape != tableShapes[index])
        throw OpenMMException(className+": updateTabulatedFunctionInContext: tabulated function \""+name+"\" has "+shape+
                ", the Context's has "+tableShapes[index]+"; call updateParametersInContext() for a new shape");
    CoordinationExpression::checkTable(className, name, table, 3);
    kernel.getAs<CalcCoordinationBiasForceKernel>().copyTabulatedFunctionToContext(context, owner, index);
    context.systemChanged();
}

vector<double> CoordinationBiasForceImpl::computeCollectiveVariables(ContextImpl& context) {
    vector<double> values = kernel.getAs<CalcCoordinationBiasForceKernel>().computeCollectiveVariables(context);
    for (double cv : values)
        if (!isfinite(cv))
            throw OpenMMException(CoordinationErrorMessages::nonFiniteCollectiveVariable(cv));
    return values;
}

void CoordinationBiasForceImpl::checkStatistics(const char* method) {
    if (statisticsStride <= 0)
        throw OpenMMException(className+": "+method+": the force keeps no statistics of its CVs in this Context (CV statistics stride "
                +to_string(statisticsStride)+"); call setCVStatisticsStride() with a stride > 0, then updateParametersInContext()");
}

void CoordinationBiasForceImpl::getCVStatistics(ContextImpl& context, vector<double>& mean, vector<double>& m2, long long& count) {
    checkStatistics("getCVStatistics");
    kernel.getAs<CalcCoordinationBiasForceKernel>().getCVStatistics(context, mean, m2, count);
}

void CoordinationBiasForceImpl::setCVStatistics(ContextImpl& context, const vector<double>& mean, const vector<double>& m2, long long count) {
    checkStatistics("setCVStatistics");
    int numCVs = owner.getNumCollectiveVariables();
    if (mean.size() != numCVs || m2.size() != numCVs)
        throw OpenMMException(className+": setCVStatistics: mean and m2 need one value per collective variable ("+to_string(numCVs)
                +"), got "+to_string(mean.size())+" and "+to_string(m2.size()));
    if (count < 0)
        throw OpenMMException(className+": setCVStatistics: count must be >= 0, got "+to_string(count));
    for (int k = 0; k < numCVs; k++) {
        if (!isfinite(mean[k]))
            throw OpenMMException(className+": setCVStatistics: mean["+to_string(k)+"] must be finite, got "+to_string(mean[k]));
        if (!isfinite(m2[k]) || m2[k] < 0)
            throw OpenMMException(className+": setCVStatistics: m2["+to_string(k)+"] must be finite and >= 0, got "+to_string(m2[k]));
    }
    kernel.getAs<CalcCoordinationBiasForceKernel>().setCVStatistics(context, mean, m2, count);
}
