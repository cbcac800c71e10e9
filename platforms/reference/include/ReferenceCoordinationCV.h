#ifndef REFERENCE_COORDINATION_CV_H_
#define REFERENCE_COORDINATION_CV_H_

#include "CoordinationForce.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/Vec3.h"
#include "openmm/internal/ContextImpl.h"
#include "lepton/ExpressionProgram.h"
#include "lepton/ParsedExpression.h"
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * One coordination CV on the Reference platform: its pairs, images and switching function, the
 * sum over pairs and its gradient. The CoordinationForce kernel uses one, the
 * CoordinationBiasForce kernel one per CV.
 */
class ReferenceCoordinationCV {
public:
    /** Take the pairs, periodicity and switching parameters of a force. */
    explicit ReferenceCoordinationCV(const CoordinationForce& force);
    /** Take the switching parameters (and per-pair ones) of a force with the same pairs. */
    void setParameters(const CoordinationForce& force);
    /** Throw OpenMMException if the force's groups or periodicity differ from this CV's. */
    void checkPairsUnchanged(const CoordinationForce& force) const;
    /** Check the groups' positions for NaN and record the Context's box. */
    void prepare(OpenMM::ContextImpl& context);
    /** Sum s over the pairs; if gradient is not NULL (and sized), add dcv/dx to it. */
    double compute(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const;
    /** Call f(r) with the distance of every pair (nearest image when periodic). */
    void forEachDistance(const std::vector<OpenMM::Vec3>& pos, const std::function<void(double)>& f) const;
private:
    template <class F>
    void forEachPair(F f) const;
    OpenMM::Vec3 displacement(const std::vector<OpenMM::Vec3>& pos, int i, int j, double& r) const;
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, triclinic;
    OpenMM::Vec3 box[3];
    double halfMinWidth;
    std::unique_ptr<CoordinationSwitching> switching;
    /** The values of each pair of a pair list with per-pair parameters (empty otherwise). */
    std::vector<CoordinationSwitching::Pair> pairSwitches;
};

/**
 * An energy expression of CVs on the Reference platform: E, every dE/dcv_k, and the forces
 * -sum_k dE/dcv_k dcv_k/dx. The one chain rule of both Reference kernels.
 */
class ReferenceCoordinationEnergy {
public:
    /**
     * Compile an expression.
     *
     * @param parsed          the parsed expression (its tables bound to Lepton functions)
     * @param cvNames         the names of the CVs, in order
     * @param parameterNames  the global parameters it reads from the Context
     */
    void set(const Lepton::ParsedExpression& parsed, const std::vector<std::string>& cvNames, const std::vector<std::string>& parameterNames);
    /**
     * Evaluate E and add the forces. message(variables, energy, derivatives) builds the
     * OpenMMException's text if E, a dE/dcv_k or a force is not finite.
     */
    double apply(OpenMM::ContextImpl& context, const std::vector<double>& cvs, const std::vector<std::vector<OpenMM::Vec3> >& gradients,
            bool includeForces, const std::function<std::string(const std::map<std::string, double>&, double, const std::vector<double>&)>& message);
private:
    std::vector<std::string> cvNames, parameterNames;
    /** Held by pointer: Lepton's ExpressionProgram::operator= does not free the program it replaces. */
    std::unique_ptr<Lepton::ExpressionProgram> energy;
    std::vector<Lepton::ExpressionProgram> derivatives;
    std::map<std::string, double> variables;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_CV_H_*/
