#include "CoordinationBiasForce.h"
#include "internal/CoordinationBiasForceImpl.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationWarnings.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include <cmath>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

namespace {
/** Every CoordinationForce that a CoordinationBiasForce owns, so that a second owner is refused. */
mutex ownedMutex;
set<const CoordinationForce*>& ownedForces() {
    static set<const CoordinationForce*> owned;
    return owned;
}

OpenMMException error(const string& what) {
    return OpenMMException("CoordinationBiasForce: "+what);
}

void checkDefaultValue(const string& name, double defaultValue) {
    if (!isfinite(defaultValue)) {
        stringstream msg;
        msg << "global parameter \"" << name << "\" needs a finite default value, got " << defaultValue;
        throw error(msg.str());
    }
}
}

CoordinationBiasForce::CoordinationBiasForce(const string& energy) {
    setEnergyExpression(energy);
}

CoordinationBiasForce::~CoordinationBiasForce() {
    CoordinationWarnings::forget(this);
    {
        lock_guard<mutex> lock(ownedMutex);
        for (CoordinationForce* variable : variables)
            ownedForces().erase(variable);
    }
    for (CoordinationForce* variable : variables)
        delete variable;
    for (TabulatedFunction* function : functions)
        delete function;
}

void CoordinationBiasForce::checkIndex(int index, int size, const char* what) const {
    if (index < 0 || index >= size) {
        stringstream msg;
        msg << what << " index out of range: " << index << " (there are " << size << ")";
        throw error(msg.str());
    }
}

void CoordinationBiasForce::checkName(const string& name, const char* what, int parameterIndex) const {
    static const regex valid("[A-Za-z_][A-Za-z0-9_]*");
    if (!regex_match(name, valid))
        throw error(string(what)+" name is not a valid variable name: \""+name+"\"");
    for (const string& variable : variableNames)
        if (variable == name)
            throw error(string(what)+" name is already the name of a collective variable: \""+name+"\"");
    for (int i = 0; i < parameterNames.size(); i++)
        if (i != parameterIndex && parameterNames[i] == name)
            throw error(string(what)+" name is already the name of a global parameter: \""+name+"\"");
}

int CoordinationBiasForce::getNumCollectiveVariables() const {
    return variables.size();
}

int CoordinationBiasForce::addCollectiveVariable(const string& name, CoordinationForce* variable) {
    if (variable == NULL)
        throw error("collective variable \""+name+"\" is null");
    checkName(name, "collective variable", -1);
    if (variables.size() >= MaxCollectiveVariables)
        throw error("too many collective variables: at most MaxCollectiveVariables = "+to_string(MaxCollectiveVariables)
            +", adding \""+name+"\"");
    if (!CoordinationExpression::isEnergyTheCV(*variable))
        throw error("collective variable \""+name+"\" has an energy expression that is not \"cv\": \""
            +variable->getEnergyExpression()+"\"");
    const CoordinationForce* first = NULL;
    for (const CoordinationForce* other : variables)
        if (first == NULL)
            first = other;
    if (first != NULL && variable->usesPeriodicBoundaryConditions() != first->usesPeriodicBoundaryConditions())
        throw error("collective variable \""+name+"\" has periodic = "+(variable->usesPeriodicBoundaryConditions() ? "true" : "false")
            +", unlike the collective variables already added");
    {
        lock_guard<mutex> lock(ownedMutex);
        if (!ownedForces().insert(variable).second)
            throw error("collective variable \""+name+"\" already belongs to a CoordinationBiasForce (a CoordinationForce can have one owner)");
    }
    variableNames.push_back(name);
    variables.push_back(variable);
    distances.push_back(Distance());
    return variables.size()-1;
}

void CoordinationBiasForce::checkDistance(const string& name, int particle1, int particle2, int component) const {
    if (particle1 < 0)
        throw error("distance \""+name+"\": particle1 must be >= 0, got "+to_string(particle1));
    if (particle2 < 0)
        throw error("distance \""+name+"\": particle2 must be >= 0, got "+to_string(particle2));
    if (particle1 == particle2)
        throw error("distance \""+name+"\": particle1 and particle2 must differ, got "+to_string(particle1)+" twice");
    if (component < -1 || component > 2)
        throw error("distance \""+name+"\": component must be -1 (the length), 0, 1 or 2 (x, y, z), got "+to_string(component));
}

int CoordinationBiasForce::addDistance(const string& name, int particle1, int particle2, int component, bool usePeriodic) {
    checkName(name, "collective variable", -1);
    if (variables.size() >= MaxCollectiveVariables)
        throw error("too many collective variables: at most MaxCollectiveVariables = "+to_string(MaxCollectiveVariables)
            +", adding \""+name+"\"");
    checkDistance(name, particle1, particle2, component);
    variableNames.push_back(name);
    variables.push_back(NULL);
    distances.push_back({particle1, particle2, component, usePeriodic});
    return variables.size()-1;
}

bool CoordinationBiasForce::isDistance(int index) const {
    checkIndex(index, variables.size(), "collective variable");
    return variables[index] == NULL;
}

int CoordinationBiasForce::getNumDistances() const {
    int count = 0;
    for (const CoordinationForce* variable : variables)
        count += (variable == NULL);
    return count;
}

void CoordinationBiasForce::getDistanceParameters(int index, int& particle1, int& particle2, int& component, bool& usePeriodic) const {
    if (!isDistance(index))
        throw error("collective variable \""+variableNames[index]+"\" (index "+to_string(index)+") is a CoordinationForce, not a distance");
    const Distance& distance = distances[index];
    particle1 = distance.particle1;
    particle2 = distance.particle2;
    component = distance.component;
    usePeriodic = distance.usePeriodic;
}

void CoordinationBiasForce::setDistanceParameters(int index, int particle1, int particle2, int component, bool usePeriodic) {
    if (!isDistance(index))
        throw error("collective variable \""+variableNames[index]+"\" (index "+to_string(index)+") is a CoordinationForce, not a distance");
    checkDistance(variableNames[index], particle1, particle2, component);
    distances[index] = {particle1, particle2, component, usePeriodic};
}

const string& CoordinationBiasForce::getCollectiveVariableName(int index) const {
    checkIndex(index, variables.size(), "collective variable");
    return variableNames[index];
}

int CoordinationBiasForce::getCollectiveVariableIndex(const string& name) const {
    for (int i = 0; i < variableNames.size(); i++)
        if (variableNames[i] == name)
            return i;
    throw error("no collective variable is named \""+name+"\"");
}

const CoordinationForce& CoordinationBiasForce::getCollectiveVariable(int index) const {
    if (isDistance(index))
        throw error("collective variable \""+variableNames[index]+"\" (index "+to_string(index)
            +") is a distance, not a CoordinationForce (see isDistance() and getDistanceParameters())");
    return *variables[index];
}

CoordinationForce& CoordinationBiasForce::getCollectiveVariable(int index) {
    if (isDistance(index))
        throw error("collective variable \""+variableNames[index]+"\" (index "+to_string(index)
            +") is a distance, not a CoordinationForce (see isDistance() and getDistanceParameters())");
    return *variables[index];
}

const string& CoordinationBiasForce::getEnergyFunction() const {
    return energyExpression;
}

void CoordinationBiasForce::setEnergyFunction(const string& energy) {
    CoordinationExpression::parseEnergyExpressionSyntax(energy, "CoordinationBiasForce", true);
    energyExpression = energy;
}

const string& CoordinationBiasForce::getEnergyExpression() const {
    return getEnergyFunction();
}

void CoordinationBiasForce::setEnergyExpression(const string& energy) {
    setEnergyFunction(energy);
}

int CoordinationBiasForce::getNumGlobalParameters() const {
    return parameterNames.size();
}

int CoordinationBiasForce::addGlobalParameter(const string& name, double defaultValue) {
    checkName(name, "global parameter", -1);
    checkDefaultValue(name, defaultValue);
    parameterNames.push_back(name);
    parameterDefaults.push_back(defaultValue);
    return parameterNames.size()-1;
}

const string& CoordinationBiasForce::getGlobalParameterName(int index) const {
    checkIndex(index, parameterNames.size(), "global parameter");
    return parameterNames[index];
}

void CoordinationBiasForce::setGlobalParameterName(int index, const string& name) {
    checkIndex(index, parameterNames.size(), "global parameter");
    checkName(name, "global parameter", index);
    parameterNames[index] = name;
}

double CoordinationBiasForce::getGlobalParameterDefaultValue(int index) const {
    checkIndex(index, parameterNames.size(), "global parameter");
    return parameterDefaults[index];
}

void CoordinationBiasForce::setGlobalParameterDefaultValue(int index, double defaultValue) {
    checkIndex(index, parameterNames.size(), "global parameter");
    checkDefaultValue(parameterNames[index], defaultValue);
    parameterDefaults[index] = defaultValue;
}

int CoordinationBiasForce::getNumTabulatedFunctions() const {
    return functions.size();
}

int CoordinationBiasForce::addTabulatedFunction(const string& name, TabulatedFunction* function) {
    if (function == NULL)
        throw error("tabulated function \""+name+"\" is null");
    if (dynamic_cast<Continuous1DFunction*>(function) == NULL && dynamic_cast<Continuous2DFunction*>(function) == NULL
            && dynamic_cast<Continuous3DFunction*>(function) == NULL)
        throw error("tabulated function \""+name+"\" is not a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction");
    functionNames.push_back(name);
    functions.push_back(function);
    return functions.size()-1;
}

const TabulatedFunction& CoordinationBiasForce::getTabulatedFunction(int index) const {
    checkIndex(index, functions.size(), "tabulated function");
    return *functions[index];
}

TabulatedFunction& CoordinationBiasForce::getTabulatedFunction(int index) {
    checkIndex(index, functions.size(), "tabulated function");
    return *functions[index];
}

const string& CoordinationBiasForce::getTabulatedFunctionName(int index) const {
    checkIndex(index, functions.size(), "tabulated function");
    return functionNames[index];
}

bool CoordinationBiasForce::usesPeriodicBoundaryConditions() const {
    for (int k = 0; k < variables.size(); k++)
        if (variables[k] != NULL ? variables[k]->usesPeriodicBoundaryConditions() : distances[k].usePeriodic)
            return true;
    return false;
}

ForceImpl* CoordinationBiasForce::createImpl() const {
    return new CoordinationBiasForceImpl(*this);
}

CoordinationBiasForceImpl& CoordinationBiasForce::getImpl(Context& context) const {
    return dynamic_cast<CoordinationBiasForceImpl&>(getImplInContext(context));
}

vector<double> CoordinationBiasForce::getCollectiveVariableValues(Context& context) const {
    return getImpl(context).computeCollectiveVariables(getContextImpl(context));
}

void CoordinationBiasForce::updateParametersInContext(Context& context) {
    getImpl(context).updateParametersInContext(getContextImpl(context));
}

void CoordinationBiasForce::updateTabulatedFunctionInContext(Context& context, int index) {
    checkIndex(index, functions.size(), "tabulated function");
    getImpl(context).updateTabulatedFunctionInContext(getContextImpl(context), index);
}

void CoordinationBiasForce::setCVStatisticsStride(int stride) {
    if (stride < 0)
        throw error("setCVStatisticsStride: stride must be >= 0 (0: no statistics), got "+to_string(stride));
    statisticsStride = stride;
}

int CoordinationBiasForce::getCVStatisticsStride() const {
    return statisticsStride;
}

void CoordinationBiasForce::getCVStatistics(Context& context, vector<double>& mean, vector<double>& m2, long long& count) const {
    getImpl(context).getCVStatistics(getContextImpl(context), mean, m2, count);
}

void CoordinationBiasForce::setCVStatistics(Context& context, const vector<double>& mean, const vector<double>& m2, long long count) {
    getImpl(context).setCVStatistics(getContextImpl(context), mean, m2, count);
}
