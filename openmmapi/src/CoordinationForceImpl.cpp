#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationSwitching.h"
#include "CoordinationKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "lepton/Operation.h"
#include "lepton/Parser.h"
#include <cmath>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

namespace {
/** Stands in for a tabulated function while an expression is checked. */
class PlaceholderFunction : public Lepton::CustomFunction {
public:
    int getNumArguments() const {
        return 1;
    }
    double evaluate(const double* arguments) const {
        return 0.0;
    }
    double evaluateDerivative(const double* arguments, const int* derivOrder) const {
        return 0.0;
    }
    CustomFunction* clone() const {
        return new PlaceholderFunction();
    }
};

/** Parse an expression, turning Lepton's error into one that names the force. */
Lepton::ParsedExpression parse(const string& expression, const map<string, Lepton::CustomFunction*>& functions) {
    try {
        return Lepton::Parser::parse(expression, functions);
    }
    catch (const exception& e) {
        throw OpenMMException("CoordinationForce: energy expression does not parse: \""+expression+"\": "+e.what());
    }
}

/** Whether Lepton itself defines a function of this name (of one, two or three arguments). */
bool isLeptonFunction(const string& name) {
    for (const char* arguments : {"(0)", "(0,0)", "(0,0,0)"}) {
        try {
            Lepton::Parser::parse(name+arguments);
            return true;
        }
        catch (const exception&) {
        }
    }
    return false;
}
}

CoordinationForceImpl::CoordinationForceImpl(const CoordinationForce& owner) : owner(owner), frames(0),
        histogramBins(0), histogramMaxDistance(0.0) {
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
    map<string, Lepton::CustomFunction*> placeholders;
    PlaceholderFunction placeholder;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        placeholders[force.getTabulatedFunctionName(i)] = &placeholder;
    parseEnergyExpression(force, placeholders);
    checkTabulatedFunctions(force);
}

void CoordinationForceImpl::checkTabulatedFunctions(const CoordinationForce& force) {
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++) {
        stringstream msg;
        msg << "CoordinationForce: tabulated function \"" << force.getTabulatedFunctionName(i) << "\"";
        const Continuous1DFunction* table = dynamic_cast<const Continuous1DFunction*>(&force.getTabulatedFunction(i));
        if (table == NULL)
            throw OpenMMException(msg.str()+" is not a Continuous1DFunction");
        vector<double> values;
        double min, max;
        table->getFunctionParameters(values, min, max);
        if (!isfinite(min) || !isfinite(max) || !(min < max)) {
            msg << " needs a finite range with min < max, got min " << min << " and max " << max;
            throw OpenMMException(msg.str());
        }
        if (values.size() < 2) {
            msg << " needs at least 2 values, got " << values.size();
            throw OpenMMException(msg.str());
        }
        for (int k = 0; k < values.size(); k++)
            if (!isfinite(values[k])) {
                msg << " has a value that is not finite at index " << k << ": " << values[k];
                throw OpenMMException(msg.str());
            }
    }
}

string CoordinationForceImpl::nonFiniteEnergyMessage(const string& expression, const map<string, double>& variables,
        double energy, double dEdcv) {
    stringstream msg;
    msg << "CoordinationForce: the energy expression \"" << expression << "\" gives a non-finite energy or force (energy "
        << energy << ", dE/dcv " << dEdcv << ") at cv = ";
    auto cv = variables.find("cv");
    if (cv != variables.end())
        msg << cv->second;
    else
        msg << "?";
    for (auto& variable : variables)
        if (variable.first != "cv")
            msg << ", " << variable.first << " = " << variable.second;
    return msg.str();
}

string CoordinationForceImpl::nonFiniteCollectiveVariableMessage(double cv, int particle) {
    stringstream msg;
    if (particle < 0)
        msg << "CoordinationForce: the collective variable is not finite: " << cv;
    else
        msg << "CoordinationForce: the derivative of the collective variable (" << cv
            << ") with respect to the position of particle " << particle << " is not finite";
    msg << " (the switching function or the periodic box gives values that are not finite)";
    return msg.str();
}

Lepton::ParsedExpression CoordinationForceImpl::parseEnergyExpression(const CoordinationForce& force,
        const map<string, Lepton::CustomFunction*>& functions) {
    const string& expression = force.getEnergyExpression();
    Lepton::ParsedExpression parsed = parse(expression, functions).optimize();
    set<string> allowed = {"cv"};
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        allowed.insert(force.getGlobalParameterName(i));
    for (const string& variable : CoordinationSwitching::getVariables(parsed))
        if (allowed.count(variable) == 0)
            throw OpenMMException("CoordinationForce: energy expression \""+expression+"\" uses an unknown variable: "+variable);
    return parsed;
}

Lepton::ParsedExpression CoordinationForceImpl::parseEnergyExpressionSyntax(const string& expression) {
    // A call is a name (anything up to an operator, a parenthesis, a comma or a space) before "(".
    static const regex call("([^-+*/^(),\\s]+)\\s*\\(");
    PlaceholderFunction placeholder;
    map<string, Lepton::CustomFunction*> placeholders;
    for (sregex_iterator match(expression.begin(), expression.end(), call), end; match != end; ++match)
        if (!isLeptonFunction((*match)[1]))
            placeholders[(*match)[1]] = &placeholder;
    return parse(expression, placeholders);
}

bool CoordinationForceImpl::isEnergyTheCV(const CoordinationForce& force) {
    map<string, Lepton::CustomFunction*> placeholders;
    PlaceholderFunction placeholder;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        placeholders[force.getTabulatedFunctionName(i)] = &placeholder;
    Lepton::ParsedExpression parsed = parseEnergyExpression(force, placeholders);
    const Lepton::ExpressionTreeNode& root = parsed.getRootNode();
    return (root.getOperation().getId() == Lepton::Operation::VARIABLE && root.getOperation().getName() == "cv");
}

void CoordinationForceImpl::initialize(ContextImpl& context) {
    validate(owner, context.getSystem());
    kernel = context.getPlatform().createKernel(CalcCoordinationForceKernel::Name(), context);
    kernel.getAs<CalcCoordinationForceKernel>().initialize(context.getSystem(), owner);
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
    kernel.getAs<CalcCoordinationForceKernel>().copyParametersToContext(context, owner);
    context.systemChanged();
}

double CoordinationForceImpl::computeCollectiveVariable(ContextImpl& context) {
    double cv = kernel.getAs<CalcCoordinationForceKernel>().computeCollectiveVariable(context);
    if (!isfinite(cv))
        throw OpenMMException(nonFiniteCollectiveVariableMessage(cv));
    return cv;
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
        stringstream msg;
        msg << "CoordinationForce: accumulatePairHistogram called with numBins " << numBins << " and maxDistance "
            << maxDistance << ", but the running histogram has " << histogramBins << " and " << histogramMaxDistance
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
