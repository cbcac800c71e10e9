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
    explicit PlaceholderFunction(int numArguments = 1) : numArguments(numArguments) {
    }
    int getNumArguments() const {
        return numArguments;
    }
    double evaluate(const double* arguments) const {
        return 0.0;
    }
    double evaluateDerivative(const double* arguments, const int* derivOrder) const {
        return 0.0;
    }
    CustomFunction* clone() const {
        return new PlaceholderFunction(numArguments);
    }
private:
    int numArguments;
};

/** The number of arguments of the call whose "(" is at position open: top-level commas plus one. */
int countArguments(const string& expression, size_t open) {
    int depth = 0, commas = 0;
    for (size_t i = open; i < expression.size(); i++) {
        if (expression[i] == '(')
            depth++;
        else if (expression[i] == ')' && --depth == 0)
            break;
        else if (expression[i] == ',' && depth == 1)
            commas++;
    }
    return commas+1;
}

/** Parse an expression, turning Lepton's error into one that names the force. */
Lepton::ParsedExpression parse(const string& expression, const map<string, Lepton::CustomFunction*>& functions,
        const string& className = "CoordinationForce") {
    try {
        return Lepton::Parser::parse(expression, functions);
    }
    catch (const exception& e) {
        throw OpenMMException(className+": energy expression does not parse: \""+expression+"\": "+e.what());
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
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        checkTable("CoordinationForce", force.getTabulatedFunctionName(i), force.getTabulatedFunction(i), 1);
}

void CoordinationForceImpl::checkTable(const string& className, const string& name, const TabulatedFunction& function, int maxDimensions) {
    stringstream msg;
    msg << className << ": tabulated function \"" << name << "\"";
    vector<double> values, mins, maxs;
    vector<int> sizes;
    double min, max;
    if (auto table = dynamic_cast<const Continuous1DFunction*>(&function)) {
        table->getFunctionParameters(values, min, max);
        sizes = {(int) values.size()};
        mins = {min};
        maxs = {max};
    }
    else if (auto table = dynamic_cast<const Continuous2DFunction*>(&function); table != NULL && maxDimensions >= 2) {
        int xsize, ysize;
        double xmin, xmax, ymin, ymax;
        table->getFunctionParameters(xsize, ysize, values, xmin, xmax, ymin, ymax);
        sizes = {xsize, ysize};
        mins = {xmin, ymin};
        maxs = {xmax, ymax};
    }
    else if (auto table = dynamic_cast<const Continuous3DFunction*>(&function); table != NULL && maxDimensions >= 3) {
        int xsize, ysize, zsize;
        double xmin, xmax, ymin, ymax, zmin, zmax;
        table->getFunctionParameters(xsize, ysize, zsize, values, xmin, xmax, ymin, ymax, zmin, zmax);
        sizes = {xsize, ysize, zsize};
        mins = {xmin, ymin, zmin};
        maxs = {xmax, ymax, zmax};
    }
    else
        throw OpenMMException(msg.str()+(maxDimensions == 1 ? " is not a Continuous1DFunction"
            : " is not a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction"));
    for (int d = 0; d < sizes.size(); d++) {
        if (!isfinite(mins[d]) || !isfinite(maxs[d]) || !(mins[d] < maxs[d])) {
            msg << " needs a finite range with min < max, got min " << mins[d] << " and max " << maxs[d];
            throw OpenMMException(msg.str());
        }
        if (sizes[d] < 2) {
            msg << " needs at least 2 values, got " << sizes[d];
            throw OpenMMException(msg.str());
        }
    }
    for (int k = 0; k < values.size(); k++)
        if (!isfinite(values[k])) {
            msg << " has a value that is not finite at index " << k << ": " << values[k];
            throw OpenMMException(msg.str());
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

Lepton::ParsedExpression CoordinationForceImpl::parseEnergyExpressionSyntax(const string& expression, const string& className, bool tablesOfSeveralArguments) {
    // A call is a name (anything up to an operator, a parenthesis, a comma or a space) before "(".
    static const regex call("([^-+*/^(),\\s]+)\\s*\\(");
    vector<unique_ptr<PlaceholderFunction> > placeholders;
    map<string, Lepton::CustomFunction*> functions;
    for (sregex_iterator match(expression.begin(), expression.end(), call), end; match != end; ++match)
        if (!isLeptonFunction((*match)[1])) {
            int numArguments = (tablesOfSeveralArguments ? countArguments(expression, match->position(0)+match->length(0)-1) : 1);
            placeholders.emplace_back(new PlaceholderFunction(numArguments));
            functions[(*match)[1]] = placeholders.back().get();
        }
    return parse(expression, functions, className);
}

Lepton::ParsedExpression CoordinationForceImpl::parseWithTables(const string& expression, const map<string, int>& tableArguments,
        const string& className) {
    vector<unique_ptr<PlaceholderFunction> > placeholders;
    map<string, Lepton::CustomFunction*> functions;
    for (auto& table : tableArguments) {
        placeholders.emplace_back(new PlaceholderFunction(table.second));
        functions[table.first] = placeholders.back().get();
    }
    return parse(expression, functions, className).optimize();
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
