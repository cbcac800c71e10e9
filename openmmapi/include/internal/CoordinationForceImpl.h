#ifndef OPENMM_COORDINATION_FORCE_IMPL_H_
#define OPENMM_COORDINATION_FORCE_IMPL_H_

#include "CoordinationForce.h"
#include "openmm/Kernel.h"
#include "openmm/internal/ForceImpl.h"
#include "lepton/CustomFunction.h"
#include "lepton/ParsedExpression.h"
#include <map>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The internal implementation of a CoordinationForce in one Context: validates the force
 * against the System and forwards every request to the platform's kernel.
 */
class OPENMM_EXPORT_COORDINATION CoordinationForceImpl : public OpenMM::ForceImpl {
public:
    /**
     * Create the implementation of a force, checking it with validateForce(). OpenMM creates
     * the implementations of a System's forces before the platform allocates anything for a
     * Context, so a force that is wrong in itself is refused before a GPU context exists.
     * (OpenMM cannot release what a platform allocated for a Context whose creation fails.)
     */
    CoordinationForceImpl(const CoordinationForce& owner);
    /** Validate the force against the System and create its kernel. */
    void initialize(OpenMM::ContextImpl& context);
    /** Get the force this implements. */
    const CoordinationForce& getOwner() const {
        return owner;
    }
    /** Nothing to update between steps. */
    void updateContextState(OpenMM::ContextImpl& context, bool& forcesInvalid) {
    }
    /** Evaluate the force if its group is among those requested. */
    double calcForcesAndEnergy(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, int groups);
    /** The global parameters of the energy expression and their default values. */
    std::map<std::string, double> getDefaultParameters();
    /** The kernel this force uses. */
    std::vector<std::string> getKernelNames();
    /** The platform's kernel of this force in this Context (for platform tests). */
    OpenMM::Kernel& getKernel() {
        return kernel;
    }
    /** Copy changed parameters into the kernel; the pairs must not change. */
    void updateParametersInContext(OpenMM::ContextImpl& context);
    /** Compute the collective variable at the current positions. */
    double computeCollectiveVariable(OpenMM::ContextImpl& context);
    /** Histogram of pair distances at the current positions. */
    std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    /** Add the current positions' histogram to the running one. */
    void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    /** Read back the running histogram. */
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context);
    /** The number of frames in the running histogram. */
    int getNumAccumulatedFrames() const {
        return frames;
    }
    /** Clear the running histogram. */
    void resetPairHistogram(OpenMM::ContextImpl& context);
    /**
     * Check everything about a force that does not need the System: a non-empty group, the
     * switching parameters taken together (per pair where pairs have their own), the energy
     * expression, the tabulated functions (finite values, finite min < max). Throws
     * OpenMMException.
     */
    static void validateForce(const CoordinationForce& force);
    /**
     * Check a force against a System: validateForce() and the particle indices. Throws
     * OpenMMException.
     */
    static void validate(const CoordinationForce& force, const OpenMM::System& system);
    /**
     * Parse the energy expression of a force, checking that it uses no variable other than
     * cv and the force's global parameters.
     *
     * @param force      the force
     * @param functions  Lepton functions for the force's tabulated functions, by name
     */
    static Lepton::ParsedExpression parseEnergyExpression(const CoordinationForce& force,
            const std::map<std::string, Lepton::CustomFunction*>& functions);
    /**
     * Parse an energy expression on its own, before the force's tables are known: every call
     * of a function Lepton does not define stands for a table of one argument (of as many
     * arguments as the call has, if tablesOfSeveralArguments). Throws OpenMMException, naming
     * className, if the expression does not parse.
     */
    static Lepton::ParsedExpression parseEnergyExpressionSyntax(const std::string& expression,
            const std::string& className = "CoordinationForce", bool tablesOfSeveralArguments = false);
    /**
     * Parse an expression whose tables are known by name and number of arguments (placeholders
     * stand for them), and optimize it. Throws OpenMMException naming className if it does not parse.
     */
    static Lepton::ParsedExpression parseWithTables(const std::string& expression, const std::map<std::string, int>& tableArguments,
            const std::string& className);
    /** Whether the energy expression is just the CV (the default), so that no chain rule is needed. */
    static bool isEnergyTheCV(const CoordinationForce& force);
    /**
     * The message of the OpenMMException a platform throws when the energy expression gives a
     * non-finite energy or dE/dcv (or forces that overflow): it names the expression and the
     * values of its variables. Every platform builds its message here.
     *
     * @param expression  the energy expression
     * @param variables   the values of cv and of the global parameters, by name
     * @param energy      the energy the expression gave
     * @param dEdcv       the derivative the expression gave
     */
    static std::string nonFiniteEnergyMessage(const std::string& expression, const std::map<std::string, double>& variables,
            double energy, double dEdcv);
    /**
     * The message of the OpenMMException thrown when the collective variable is not finite or,
     * if particle is not -1, when its derivative with respect to that particle's position is not.
     */
    static std::string nonFiniteCollectiveVariableMessage(double cv, int particle = -1);
    /**
     * Check a tabulated function: a Continuous1DFunction (or, with maxDimensions 2 or 3, a
     * Continuous2DFunction or Continuous3DFunction) with finite values, at least 2 points and
     * a finite range min < max along each axis. Throws OpenMMException naming className.
     */
    static void checkTable(const std::string& className, const std::string& name, const OpenMM::TabulatedFunction& function,
            int maxDimensions);
private:
    static void checkHistogramArguments(int numBins, double maxDistance);
    static void checkTabulatedFunctions(const CoordinationForce& force);
    const CoordinationForce& owner;
    OpenMM::Kernel kernel;
    int frames, histogramBins;
    double histogramMaxDistance;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_FORCE_IMPL_H_*/
