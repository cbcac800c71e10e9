#ifndef OPENMM_COORDINATION_BIAS_FORCE_IMPL_H_
#define OPENMM_COORDINATION_BIAS_FORCE_IMPL_H_

#include "CoordinationBiasForce.h"
#include "openmm/Kernel.h"
#include "openmm/internal/ForceImpl.h"
#include <map>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The internal implementation of a CoordinationBiasForce in one Context: validates the force
 * and forwards every request to the platform's kernel.
 */
class OPENMM_EXPORT_COORDINATION CoordinationBiasForceImpl : public OpenMM::ForceImpl {
public:
    /**
     * Create the implementation of a force, checking it with validateForce() before any platform
     * allocates anything for the Context (see CoordinationForceImpl's constructor for why).
     */
    CoordinationBiasForceImpl(const CoordinationBiasForce& owner);
    /** Validate the force against the System and create its kernel. */
    void initialize(OpenMM::ContextImpl& context);
    /** Get the force this implements. */
    const CoordinationBiasForce& getOwner() const {
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
    /**
     * The particles of each distance without the nearest image (addDistance() with usePeriodic
     * false), as bonds: OpenMM then keeps both in one molecule, which a platform that wraps
     * molecules into the box (CUDA) translates as a whole, so that their plain difference is kept.
     */
    std::vector<std::pair<int, int> > getBondedParticles() const;
    /** The platform's kernel of this force in this Context (for platform tests). */
    OpenMM::Kernel& getKernel() {
        return kernel;
    }
    /** Copy changed parameters into the kernel (and changed defaults into the Context). */
    void updateParametersInContext(OpenMM::ContextImpl& context);
    /**
     * Copy the values of one table into the kernel, after checking that the table still has the
     * shape the Context holds (CoordinationExpression::describeTableShape()) and finite values.
     */
    void updateTabulatedFunctionInContext(OpenMM::ContextImpl& context, int index);
    /** The running statistics of the CVs (CoordinationBiasForce::getCVStatistics()); throws if none are kept. */
    void getCVStatistics(OpenMM::ContextImpl& context, std::vector<double>& mean, std::vector<double>& m2, long long& count);
    /** Replace the running statistics of the CVs (CoordinationBiasForce::setCVStatistics()), after checking them. */
    void setCVStatistics(OpenMM::ContextImpl& context, const std::vector<double>& mean, const std::vector<double>& m2, long long count);
    /** Compute every CV at the current positions. */
    std::vector<double> computeCollectiveVariables(OpenMM::ContextImpl& context);
    /**
     * Check everything about a force that does not need the System: at least one CV, each CV
     * valid on its own (CoordinationForceImpl::validateForce) with the energy expression "cv",
     * one periodicity for all, at least one CV that is not a distance, the energy expression's
     * variables and functions, the tables.
     */
    static void validateForce(const CoordinationBiasForce& force);
    /**
     * Check a force against a System: each CoordinationForce CV (CoordinationForceImpl::validate())
     * and each distance's particles in range.
     */
    static void validate(const CoordinationBiasForce& force, const OpenMM::System& system);
    /**
     * The warning for distances that take the nearest periodic image (addDistance()'s default) in
     * a System where nothing else is periodic and whose default box is still OpenMM's 2 nm cube:
     * such a distance is wrapped into a box nobody chose (1.9 nm reads 0.1 nm). Empty where there
     * is nothing to say.
     *
     * @param force   the bias force
     * @param system  the System it is part of
     * @param which   how the message names the force (CoordinationForceImpl::describeForce())
     */
    static std::string periodicDistanceWarning(const CoordinationBiasForce& force, const OpenMM::System& system,
            const std::string& which);
private:
    const CoordinationBiasForce& owner;
    OpenMM::Kernel kernel;
    std::map<std::string, double> defaults;
    /** The shape of each table the Context holds. */
    std::vector<std::string> tableShapes;
    /** The distances without the nearest image when the Context was created (getBondedParticles()). */
    std::vector<std::pair<int, int> > bonds;
    /** The stride of the CVs' statistics in the Context (0: none). */
    int statisticsStride = 0;
    void recordTableShapes();
    void checkStatistics(const char* method);
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_BIAS_FORCE_IMPL_H_*/
