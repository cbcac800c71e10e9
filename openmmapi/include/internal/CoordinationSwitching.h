#ifndef OPENMM_COORDINATION_SWITCHING_H_
#define OPENMM_COORDINATION_SWITCHING_H_

#include "CoordinationForce.h"
#include "lepton/ExpressionProgram.h"
#include "lepton/ParsedExpression.h"
#include <map>
#include <set>
#include <string>
#include "internal/windowsExportCoordination.h"

namespace CoordinationPlugin {

/**
 * The switching function of a CoordinationForce in double precision: the single C++ home of
 * its formulas (d0, the eight types, the x = 1 limit of Rational, dmax and stretch). The
 * Reference kernel, the force's evaluateSwitchingFunction() and the automatic dmax use it.
 */
class OPENMM_EXPORT_COORDINATION CoordinationSwitching {
public:
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
     * @return s(r): 1 for r <= d0, 0 for r > dmax, stretched when requested
     */
    double evaluate(double r, double& dsdr) const;
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
    /**
     * The unstretched s(x) of a type for x > 0.
     *
     * @param x          (r - d0)/r0
     * @param[out] dsdx  ds/dx
     */
    double evaluateUnstretched(double x, double& dsdx) const;
    /**
     * The names of the variables an expression uses. (Lepton's CompiledExpression is not used
     * anywhere in the plugin: its layout in the OpenMM wheels depends on JIT headers they omit.)
     */
    static std::set<std::string> getVariables(const Lepton::ParsedExpression& expression);
private:
    CoordinationForce::SwitchingFunction type;
    double r0, d0, dmax, a, b, smapC, scale, shift;
    int n, m;
    Lepton::ExpressionProgram custom, customDerivative;
    mutable std::map<std::string, double> customVariables;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_SWITCHING_H_*/
