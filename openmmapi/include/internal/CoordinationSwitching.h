#ifndef OPENMM_COORDINATION_SWITCHING_H_
#define OPENMM_COORDINATION_SWITCHING_H_

#include "CoordinationForce.h"
#include "lepton/ExpressionProgram.h"
#include "lepton/ParsedExpression.h"
#include <map>
#include <set>
#include <string>
#include <vector>
#include "internal/windowsExportCoordination.h"

namespace CoordinationPlugin {

/**
 * The switching function of a CoordinationForce in double precision: the single C++ home of
 * its formulas (d0, the nine types, the x = 1 limit of Rational, dmax and stretch, the weights
 * and r0s of the pairs of a pair list). The Reference and CPU kernels, the force's
 * evaluateSwitchingFunction() and the automatic dmax use it. evaluate() may be called from several
 * threads at once.
 */
class OPENMM_EXPORT_COORDINATION CoordinationSwitching {
public:
    /**
     * What the switching function of one pair depends on: its length r0, its cutoff, its
     * weight w, and the factor and constant that apply the weight and the stretch:
     * w s_k(r) = scale s(x) + shift for d0 < r < dmax (Q: d0 <= r < dmax).
     */
    struct Pair {
        double length, dmax, weight, scale, shift;
    };
    /**
     * Capture the switching parameters of a force. Throws OpenMMException if they are
     * inconsistent (for example Cubic without dmax).
     */
    explicit CoordinationSwitching(const CoordinationForce& force);
    CoordinationSwitching(const CoordinationSwitching&) = delete;
    CoordinationSwitching& operator=(const CoordinationSwitching&) = delete;
    /**
     * Evaluate s at a distance.
     *
     * @param r          the distance in nm
     * @param[out] dsdr  ds/dr in 1/nm
     * @return s(r): 1 for r <= d0 (Q: r < d0), 0 for r >= dmax, stretched when requested
     */
    double evaluate(double r, double& dsdr) const {
        return evaluate(r, common, dsdr);
    }
    /**
     * Evaluate the weighted switching function of one pair.
     *
     * @param r          the distance in nm
     * @param pair       the pair's values (forPair())
     * @param[out] dsdr  its derivative in 1/nm
     * @return w s(r)
     */
    double evaluate(double r, const Pair& pair, double& dsdr) const;
    /**
     * The values of pair k of the force's pair list: its weight and r0 (the force's where it has
     * none), the cutoff (the automatic one of Rational follows r0) and the stretch at it. Throws
     * OpenMMException if the pair's function cannot be stretched.
     */
    Pair forPair(int k) const;
    /** Whether the pairs have their own weights or r0s. */
    bool hasPairParameters() const {
        return !weights.empty() || !r0s.empty();
    }
    /** The values shared by every pair without parameters of its own (weight 1, the force's r0). */
    const Pair& getCommon() const {
        return common;
    }
    /** The switching function's type. */
    CoordinationForce::SwitchingFunction getType() const {
        return type;
    }
    /**
     * The default dmax of a force for a given r0: for Rational, PLUMED's automatic
     * d0 + r0*(1e-5)^(1/(n-m)); for every other type, infinity.
     */
    static double defaultDMax(const CoordinationForce& force, double r0);
    /** The cutoff in nm actually used (infinity if none). */
    double getDMax() const {
        return dmax;
    }
    /** The length x is measured in, in nm: r0, or dmax - d0 for Cubic. */
    double getLength() const {
        return r0;
    }
    /** The constant 2^(a/b) - 1 of Smap. */
    double getSmapConstant() const {
        return smapC;
    }
    /** The factor s is multiplied by (1 without stretching). */
    double getStretchScale() const {
        return scale;
    }
    /** The constant added to the scaled s (0 without stretching). */
    double getStretchShift() const {
        return shift;
    }
    /**
     * The half width of the window around x = 1 where Rational (m != 2n) is evaluated as a ratio
     * of geometric sums instead of (1 - x^n)/(1 - x^m), whose derivative cancels near x = 1.
     */
    static constexpr double RationalWindow = 0.1;
    /** Rational's s(x) and ds/dx: 1/(1 + x^n) where m = 2n, a ratio of geometric sums near x = 1. */
    double evaluateRational(double x, double& dsdx) const;
    /**
     * The unstretched s(x) of a type for x > 0.
     *
     * @param x          (r - d0)/r0
     * @param length     r0 in nm (Q needs it: s = 1/(1 + exp(beta (d0 + x r0 - lambda r0))))
     * @param[out] dsdx  ds/dx
     */
    double evaluateUnstretched(double x, double length, double& dsdx) const;
    /**
     * The names of the variables an expression uses. (Lepton's CompiledExpression is not used
     * anywhere in the plugin: its layout in the OpenMM wheels depends on JIT headers they omit.)
     */
    static std::set<std::string> getVariables(const Lepton::ParsedExpression& expression);
private:
    /** The values of a pair with weight w and length r0 (stretched at its cutoff when requested). */
    Pair makePair(double weight, double length, int k) const;
    CoordinationForce::SwitchingFunction type;
    double r0, d0, dmax, a, b, smapC, scale, shift, beta, lambda;
    int n, m;
    bool stretch, automaticDMax;
    Pair common;
    std::vector<double> weights, r0s;
    Lepton::ExpressionProgram custom, customDerivative;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_SWITCHING_H_*/
