#include "internal/CoordinationExpression.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/OpenMMException.h"
#include "lepton/Operation.h"
#include "lepton/Parser.h"
#include <cmath>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

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
        const string& className) {
    try {
        return Lepton::Parser::parse(expression, functions);
    }
    catch (const exception& e) {
        throw OpenMMException(className+": energy expression does not parse: \""+expression+"\": "+e.what());
    }
}

/**
 * Parse and optimize the energy expression of a force, checking that it uses no variable other
 * than those allowed and the force's global parameters.
 */
template <class F>
Lepton::ParsedExpression parseWithVariables(const F& force, const map<string, Lepton::CustomFunction*>& functions,
        set<string> allowed, const string& className) {
    const string& expression = force.getEnergyExpression();
    Lepton::ParsedExpression parsed = parse(expression, functions, className).optimize();
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        allowed.insert(force.getGlobalParameterName(i));
    for (const string& variable : CoordinationSwitching::getVariables(parsed))
        if (allowed.count(variable) == 0)
            throw OpenMMException(className+": energy expression \""+expression+"\" uses an unknown variable: "+variable);
    return parsed;
}

/**
 * Parse the energy expression of a force with a placeholder for each of its tables: of one
 * argument, or, if byDimensions, of as many arguments as the table has dimensions.
 */
template <class F>
Lepton::ParsedExpression parseWithPlaceholders(const F& force, bool byDimensions) {
    vector<unique_ptr<PlaceholderFunction> > placeholders;
    map<string, Lepton::CustomFunction*> functions;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++) {
        const TabulatedFunction& table = force.getTabulatedFunction(i);
        int numArguments = (!byDimensions || dynamic_cast<const Continuous1DFunction*>(&table) != NULL ? 1
            : dynamic_cast<const Continuous2DFunction*>(&table) != NULL ? 2 : 3);
        placeholders.emplace_back(new PlaceholderFunction(numArguments));
        functions[force.getTabulatedFunctionName(i)] = placeholders.back().get();
    }
    return CoordinationExpression::parseEnergyExpression(force, functions);
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

Lepton::ParsedExpression CoordinationExpression::parseEnergyExpression(const CoordinationForce& force,
        const map<string, Lepton::CustomFunction*>& functions) {
    return parseWithVariables(force, functions, {"cv"}, "CoordinationForce");
}

Lepton::ParsedExpression CoordinationExpression::parseEnergyExpression(const CoordinationForce& force) {
    return parseWithPlaceholders(force, false);
}

Lepton::ParsedExpression CoordinationExpression::parseEnergyExpression(const CoordinationBiasForce& force,
        const map<string, Lepton::CustomFunction*>& functions) {
    set<string> allowed;
    for (int k = 0; k < force.getNumCollectiveVariables(); k++)
        allowed.insert(force.getCollectiveVariableName(k));
    return parseWithVariables(force, functions, allowed, "CoordinationBiasForce");
}

Lepton::ParsedExpression CoordinationExpression::parseEnergyExpression(const CoordinationBiasForce& force) {
    return parseWithPlaceholders(force, true);
}

Lepton::ParsedExpression CoordinationExpression::parseEnergyExpressionSyntax(const string& expression, const string& className,
        bool tablesOfSeveralArguments) {
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

bool CoordinationExpression::isEnergyTheCV(const CoordinationForce& force) {
    Lepton::ParsedExpression parsed = parseEnergyExpression(force);
    const Lepton::ExpressionTreeNode& root = parsed.getRootNode();
    return (root.getOperation().getId() == Lepton::Operation::VARIABLE && root.getOperation().getName() == "cv");
}

void CoordinationExpression::checkTable(const string& className, const string& name, const TabulatedFunction& function, int maxDimensions) {
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
