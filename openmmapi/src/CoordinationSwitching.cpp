#include "internal/CoordinationSwitching.h"
#include "internal/CoordinationExpression.h"
#include "openmm/OpenMMException.h"
#include "lepton/ParsedExpression.h"
#include "lepton/Operation.h"
#include "lepton/Parser.h"
#include <cmath>
#include <limits>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static void addVariables(const Lepton::ExpressionTreeNode& node, set<string>& variables) {
    if (node.getOperation().getId() == Lepton::Operation::VARIABLE)
        variables.insert(node.getOperation().getName());
    for (const Lepton::ExpressionTreeNode& child : node.getChildren())
        addVariables(child, variables);
}

set<string> CoordinationSwitching::getVariables(const Lepton::ParsedExpression& expression) {
    set<string> variables;
    addVariables(expression.getRootNode(), variables);
    return variables;
}

double CoordinationSwitching::defaultDMax(const CoordinationForce& force, double r0) {
    if (force.getSwitchingFunction() == CoordinationForce::Rational) {
        int n = force.getN(), m = (force.getM() == 0 ? 2*n : force.getM());
        return force.getD0()+r0*pow(1e-5, 1.0/(n-m));
    }
    return numeric_limits<double>::infinity();
}

CoordinationSwitching::CoordinationSwitching(const CoordinationForce& force) : type(force.getSwitchingFunction()),
        r0(force.getR0()), d0(force.getD0()), dmax(force.getDMax()), a(force.getA()), b(force.getB()), scale(1.0), shift(0.0),
        beta(force.getBeta()), lambda(force.getLambda()), n(force.getN()), m(force.getM() == 0 ? 2*force.getN() : force.getM()),
        stretch(force.getStretch()), automaticDMax(force.getUsesDefaultDMax()), weights(force.getPairWeights()),
        r0s(force.getPairR0s()) {
    smapC = pow(2.0, a/b)-1.0;
    if (type == CoordinationForce::Cubic) {
        if (isinf(dmax)) {
            stringstream msg;
            msg << "CoordinationForce: dmax " << dmax << " must be finite for the Cubic switching function";
            throw OpenMMException(msg.str());
        }
        if (!r0s.empty())
            throw OpenMMException("CoordinationForce: the Cubic switching function has no r0 (its length is dmax - d0), so it "
                    "takes no per-pair r0s; got "+to_string(r0s.size()));
        r0 = dmax-d0;
    }
    if (!(dmax > d0)) {
        stringstream msg;
        msg << "CoordinationForce: dmax " << dmax << " must be greater than d0 " << d0;
        throw OpenMMException(msg.str());
    }
    if (type == CoordinationForce::Custom) {
        string description = "CoordinationForce: custom expression \""+force.getCustomExpression()+"\"";
        Lepton::ParsedExpression parsed = CoordinationExpression::optimize(Lepton::Parser::parse(force.getCustomExpression()), description);
        custom = parsed.createProgram();
        customDerivative = CoordinationExpression::optimize(parsed.differentiate("x"), description+": its derivative by x").createProgram();
    }
    common = makePair(1.0, r0, -1);
    scale = common.scale;
    shift = common.shift;
}

CoordinationSwitching::Pair CoordinationSwitching::makePair(double weight, double length, int k) const {
    Pair pair = {length, dmax, weight, weight, 0.0};
    // The automatic cutoff of Rational is PLUMED's for each pair's own r0.
    if (automaticDMax && type == CoordinationForce::Rational)
        pair.dmax = d0+length*pow(1e-5, 1.0/(n-m));
    if (stretch && !isinf(pair.dmax)) {
        double dsdx;
        double sMax = evaluateUnstretched((pair.dmax-d0)/length, length, dsdx);
        if (!(sMax != 1.0) || !isfinite(sMax)) {
            stringstream msg;
            msg << "CoordinationForce: cannot stretch: s(dmax) = " << sMax << " for dmax " << pair.dmax;
            if (k >= 0)
                msg << " (pair " << k << ", r0 " << length << ")";
            throw OpenMMException(msg.str());
        }
        pair.scale = weight/(1.0-sMax);
        pair.shift = -sMax*pair.scale;
    }
    return pair;
}

CoordinationSwitching::Pair CoordinationSwitching::forPair(int k) const {
    return makePair(weights.empty() ? 1.0 : weights[k], r0s.empty() ? r0 : r0s[k], k);
}

/** x^k for an integer k >= 0 by repeated squaring: several times faster than pow(). */
static double integerPower(double x, int k) {
    double result = 1.0;
    while (k > 0) {
        if (k & 1)
            result *= x;
        x *= x;
        k >>= 1;
    }
    return result;
}

double CoordinationSwitching::evaluateRational(double x, double& dsdx) const {
    if (m == 2*n) {
        double xn1 = integerPower(x, n-1);
        double s = 1.0/(1.0+xn1*x);
        dsdx = -n*xn1*s*s;
        return s;
    }
    double delta = x-1.0;
    if (fabs(delta) < RationalWindow) {
        // Near x = 1 the direct form cancels (its derivative loses ~eps/delta^2), so use
        // (1 - x^n)/(1 - x^m) = (1 + x + ... + x^(n-1))/(1 + x + ... + x^(m-1)): sums of
        // positive terms, exact at x = 1 (n/m, ds/dx = n(n - m)/(2m)) and smooth around it.
        double num = 0.0, dnum = 0.0, den = 0.0, dden = 0.0;
        for (int k = n-1; k >= 0; k--) {
            dnum = dnum*x+num;
            num = num*x+1.0;
        }
        for (int k = m-1; k >= 0; k--) {
            dden = dden*x+den;
            den = den*x+1.0;
        }
        dsdx = (dnum*den-num*dden)/(den*den);
        return num/den;
    }
    double xn1 = integerPower(x, n-1), xm1 = integerPower(x, m-1);
    if (m > n && !isfinite(xm1*x)) {
        // x^m overflows (x > 1.8e308^(1/m): a c of 137 for MM=60, a distance beyond dmax-less r0 times
        // that): the direct form is inf/inf = NaN (PLUMED's too). In y = 1/x, multiplied through by y^m,
        // s = y^(m-n) (1 - y^n)/(1 - y^m) and ds/dx = (n y^(m-n+1) - s m y)/(1 - y^m), all finite.
        double y = 1.0/x, ym = integerPower(y, m), ymn = integerPower(y, m-n);
        double inverse = 1.0/(1.0-ym);
        double s = ymn*(1.0-integerPower(y, n))*inverse;
        dsdx = (n*ymn*y-s*m*y)*inverse;
        return s;
    }
    double inverseDenominator = 1.0/(1.0-xm1*x);
    double s = (1.0-xn1*x)*inverseDenominator;
    dsdx = (-n*xn1+s*m*xm1)*inverseDenominator;
    return s;
}

double CoordinationSwitching::evaluateUnstretched(double x, double length, double& dsdx) const {
    switch (type) {
        case CoordinationForce::Rational:
            return evaluateRational(x, dsdx);
        case CoordinationForce::Exp: {
            double s = exp(-x);
            dsdx = -s;
            return s;
        }
        case CoordinationForce::Gaussian: {
            double s = exp(-0.5*x*x);
            dsdx = -x*s;
            return s;
        }
        case CoordinationForce::Smap: {
            double xa1 = pow(x, a-1.0);
            double base = 1.0+smapC*xa1*x;
            double s = pow(base, -b/a);
            dsdx = -b*smapC*xa1*s/base;
            return s;
        }
        case CoordinationForce::Cubic: {
            if (x >= 1.0) {
                dsdx = 0.0;
                return 0.0;
            }
            dsdx = 6.0*x*(x-1.0);
            return (x-1.0)*(x-1.0)*(1.0+2.0*x);
        }
        case CoordinationForce::Tanh: {
            double t = tanh(x);
            dsdx = -(1.0-t*t);
            return 1.0-t;
        }
        case CoordinationForce::Cosinus: {
            if (x > 1.0) {
                dsdx = 0.0;
                return 0.0;
            }
            dsdx = -0.5*M_PI*sin(M_PI*x);
            return 0.5*(cos(M_PI*x)+1.0);
        }
        case CoordinationForce::Custom: {
            // A map of each thread's own: the CPU kernels evaluate pairs on several threads at once.
            thread_local std::map<std::string, double> variables;
            variables["x"] = x;
            dsdx = customDerivative.evaluate(variables);
            return custom.evaluate(variables);
        }
        case CoordinationForce::Q: {
            // 1/(1 + exp(u)), u = beta (r - lambda r0), from exp(-|u|) so that nothing overflows;
            // ds/du = -exp(u)/(1 + exp(u))^2, the same for u and -u.
            double u = beta*(d0+(x-lambda)*length);
            double e = exp(-fabs(u)), inverse = 1.0/(1.0+e);
            dsdx = -beta*length*e*inverse*inverse;
            return (u > 0 ? e*inverse : inverse);
        }
    }
    throw OpenMMException("CoordinationForce: unknown switching function");
}

double CoordinationSwitching::evaluate(double r, const Pair& pair, double& dsdr) const {
    // PLUMED 2.10's values at the ends (its rt20-switch-* regtests): 0 from r = dmax on; 1 up to
    // r = d0, which Q alone evaluates.
    if (r >= pair.dmax) {
        dsdr = 0.0;
        return 0.0;
    }
    double x = (r-d0)/pair.length;
    if (x < 0.0 || (x == 0.0 && type != CoordinationForce::Q)) {
        dsdr = 0.0;
        return pair.weight;
    }
    double dsdx;
    double s = evaluateUnstretched(x, pair.length, dsdx);
    dsdr = dsdx*pair.scale/pair.length;
    return s*pair.scale+pair.shift;
}
