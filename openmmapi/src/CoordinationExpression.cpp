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

/** Whether a part of an expression has a variable. */
bool hasVariable(const Lepton::ExpressionTreeNode& node) {
    if (node.getOperation().getId() == Lepton::Operation::VARIABLE)
        return true;
    for (const Lepton::ExpressionTreeNode& child : node.getChildren())
        if (hasVariable(child))
            return true;
    return false;
}

/**
 * The first of the largest parts of an expression without variables whose value is NaN, as text
 * ("" if none). Those parts are what Lepton's optimize() folds into constants.
 */
string findNaNConstant(const Lepton::ExpressionTreeNode& node) {
    if (!hasVariable(node)) {
        if (!isnan(Lepton::ParsedExpression(node).evaluate()))
            return "";
        stringstream text;
        text << node;
        return text.str();
    }
    for (const Lepton::ExpressionTreeNode& child : node.getChildren()) {
        string found = findNaNConstant(child);
        if (!found.empty())
            return found;
    }
    return "";
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
    Lepton::ParsedExpression parsed = CoordinationExpression::optimize(parse(expression, functions, className),
            className+": energy expression \""+expression+"\"");
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

Lepton::ParsedExpression CoordinationExpression::optimize(const Lepton::ParsedExpression& parsed, const string& description) {
    string found = findNaNConstant(parsed.getRootNode());
    if (!found.empty())
        throw OpenMMException(description+" has a part without variables that is not a number: "+found);
    return parsed.optimize();
}

void CoordinationExpression::checkConstants(const Lepton::ParsedExpression& parsed, const string& description) {
    optimize(parsed, description);
    for (const string& variable : CoordinationSwitching::getVariables(parsed))
        optimize(parsed.differentiate(variable), description+": its derivative by "+variable);
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
    Lepton::ParsedExpression parsed = parse(expression, functions, className);
    checkConstants(parsed, className+": energy expression \""+expression+"\"");
    return parsed;
}

bool CoordinationExpression::isEnergyTheCV(const CoordinationForce& force) {
    Lepton::ParsedExpression parsed = parseEnergyExpression(force);
    const Lepton::ExpressionTreeNode& root = parsed.getRootNode();
    return (root.getOperation().getId() == Lepton::Operation::VARIABLE && root.getOperation().getName() == "cv");
}

namespace {
/** The values, sizes and ranges of a table (axis by axis). */
struct TableParameters {
    vector<double> values, mins, maxs;
    vector<int> sizes;
};

/** Read a Continuous1DFunction (or, with maxDimensions 2 or 3, a 2D or 3D one); false for any other. */
bool readTable(const TabulatedFunction& function, int maxDimensions, TableParameters& table) {
    double min, max;
    if (auto one = dynamic_cast<const Continuous1DFunction*>(&function)) {
        one->getFunctionParameters(table.values, min, max);
        table.sizes = {(int) table.values.size()};
        table.mins = {min};
        table.maxs = {max};
    }
    else if (auto two = dynamic_cast<const Continuous2DFunction*>(&function); two != NULL && maxDimensions >= 2) {
        int xsize, ysize;
        double xmin, xmax, ymin, ymax;
        two->getFunctionParameters(xsize, ysize, table.values, xmin, xmax, ymin, ymax);
        table.sizes = {xsize, ysize};
        table.mins = {xmin, ymin};
        table.maxs = {xmax, ymax};
    }
    else if (auto three = dynamic_cast<const Continuous3DFunction*>(&function); three != NULL && maxDimensions >= 3) {
        int xsize, ysize, zsize;
        double xmin, xmax, ymin, ymax, zmin, zmax;
        three->getFunctionParameters(xsize, ysize, zsize, table.values, xmin, xmax, ymin, ymax, zmin, zmax);
        table.sizes = {xsize, ysize, zsize};
        table.mins = {xmin, ymin, zmin};
        table.maxs = {xmax, ymax, zmax};
    }
    else
        return false;
    return true;
}
}

void CoordinationExpression::checkTable(const string& className, const string& name, const TabulatedFunction& function, int maxDimensions) {
    stringstream msg;
    msg << className << ": tabulated function \"" << name << "\"";
    TableParameters table;
    if (!readTable(function, maxDimensions, table))
        throw OpenMMException(msg.str()+(maxDimensions == 1 ? " is not a Continuous1DFunction"
            : " is not a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction"));
    for (int d = 0; d < table.sizes.size(); d++) {
        if (!isfinite(table.mins[d]) || !isfinite(table.maxs[d]) || !(table.mins[d] < table.maxs[d])) {
            msg << " needs a finite range with min < max, got min " << table.mins[d] << " and max " << table.maxs[d];
            throw OpenMMException(msg.str());
        }
        if (table.sizes[d] < 2) {
            msg << " needs at least 2 values, got " << table.sizes[d];
            throw OpenMMException(msg.str());
        }
    }
    for (int k = 0; k < table.values.size(); k++)
        if (!isfinite(table.values[k])) {
            msg << " has a value that is not finite at index " << k << ": " << table.values[k];
            throw OpenMMException(msg.str());
        }
}

string CoordinationExpression::describeTableShape(const TabulatedFunction& function) {
    TableParameters table;
    if (!readTable(function, 3, table))
        return "not a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction";
    stringstream text;
    text.precision(17);
    for (int d = 0; d < table.sizes.size(); d++)
        text << (d > 0 ? " x " : "") << table.sizes[d];
    text << " points over ";
    for (int d = 0; d < table.sizes.size(); d++)
        text << (d > 0 ? " x " : "") << "[" << table.mins[d] << ", " << table.maxs[d] << "]";
    text << (function.getPeriodic() ? ", periodic" : ", not periodic");
    return text.str();
}

TabulatedFunction* CoordinationExpression::copyTable(const TabulatedFunction& function) {
    TableParameters table;
    if (!readTable(function, 3, table))
        throw OpenMMException("copyTable: the tabulated function is not a Continuous1DFunction, Continuous2DFunction or "
                "Continuous3DFunction");
    const vector<int>& n = table.sizes;
    const vector<double>& lo = table.mins;
    const vector<double>& hi = table.maxs;
    bool periodic = function.getPeriodic();
    if (n.size() == 1)
        return new Continuous1DFunction(table.values, lo[0], hi[0], periodic);
    if (n.size() == 2)
        return new Continuous2DFunction(n[0], n[1], table.values, lo[0], hi[0], lo[1], hi[1], periodic);
    return new Continuous3DFunction(n[0], n[1], n[2], table.values, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], periodic);
}
