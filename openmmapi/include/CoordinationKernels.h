#ifndef COORDINATION_KERNELS_H_
#define COORDINATION_KERNELS_H_

#include "CoordinationBiasForce.h"
#include "CoordinationForce.h"
#include "openmm/KernelImpl.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include "openmm/internal/ContextImpl.h"
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The kernel that evaluates a CoordinationForce and the histogram of its pair distances.
 * Each platform implements it; one instance belongs to one Context.
 */
class CalcCoordinationForceKernel : public OpenMM::KernelImpl {
public:
    /** The name platforms register this kernel under. */
    static std::string Name() {
        return "CalcCoordinationForce";
    }
    CalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {
    }
    /**
     * Prepare the kernel for a System. The force has been validated against the System.
     *
     * @param system  the System the force belongs to
     * @param force   the CoordinationForce
     */
    virtual void initialize(const OpenMM::System& system, const CoordinationForce& force) = 0;
    /**
     * Add the force's forces to the Context and return its energy.
     *
     * @param context        the Context
     * @param includeForces  whether to add forces
     * @param includeEnergy  whether the energy is needed
     * @return the energy in kJ/mol (may be 0 when includeEnergy is false)
     */
    virtual double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy) = 0;
    /** Compute the collective variable at the Context's current positions. */
    virtual double computeCollectiveVariable(OpenMM::ContextImpl& context) = 0;
    /** Copy the parameters that do not change the pairs from the force into the Context. */
    virtual void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationForce& force) = 0;
    /**
     * Compute the per-atom coordination numbers c_i (one per entry of group A) at the Context's
     * current positions. The force has a particle function. A platform without per-atom
     * coordination numbers keeps this default, which throws OpenMMException.
     */
    virtual std::vector<double> computeCoordinationNumbers(OpenMM::ContextImpl& context) {
        throw OpenMM::OpenMMException("CoordinationForce: per-atom coordination numbers (a particle function) are not supported "
                "on the "+getPlatform().getName()+" platform");
    }
    /**
     * Count the pairs by distance at the Context's current positions, leaving the running
     * histogram alone. Arguments have been validated.
     *
     * @param context      the Context
     * @param numBins      the number of bins
     * @param maxDistance  the upper edge of the last bin in nm
     * @return numBins counts
     */
    virtual std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance) = 0;
    /**
     * Add the histogram of pair distances at the Context's current positions to the running
     * histogram. Arguments have been validated; the caller checks they match earlier frames.
     *
     * @param context      the Context
     * @param numBins      the number of bins
     * @param maxDistance  the upper edge of the last bin in nm
     */
    virtual void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance) = 0;
    /** Read back the running histogram (numBins counts). */
    virtual std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context) = 0;
    /** Set every count of the running histogram to zero, keeping its size. */
    virtual void clearPairHistogram(OpenMM::ContextImpl& context) = 0;
};

/**
 * The kernel that evaluates a CoordinationBiasForce: every CV, the energy expression of them
 * and the forces by the chain rule. Each platform implements it; one instance belongs to one Context.
 */
class CalcCoordinationBiasForceKernel : public OpenMM::KernelImpl {
public:
    /** The name platforms register this kernel under. */
    static std::string Name() {
        return "CalcCoordinationBiasForce";
    }
    CalcCoordinationBiasForceKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {
    }
    /**
     * Prepare the kernel for a System. The force and its CVs have been validated against the System.
     *
     * @param system  the System the force belongs to
     * @param force   the CoordinationBiasForce
     */
    virtual void initialize(const OpenMM::System& system, const CoordinationBiasForce& force) = 0;
    /**
     * Add the force's forces to the Context and return its energy.
     *
     * @param context        the Context
     * @param includeForces  whether to add forces
     * @param includeEnergy  whether the energy is needed
     * @return the energy in kJ/mol (may be 0 when includeEnergy is false)
     */
    virtual double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy) = 0;
    /** Compute every collective variable at the Context's current positions, in the force's order. */
    virtual std::vector<double> computeCollectiveVariables(OpenMM::ContextImpl& context) = 0;
    /** Copy the parameters that do not change the pairs from the force into the Context. */
    virtual void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force) = 0;
    /**
     * Copy the values of one tabulated function of the force into the Context; its shape is the
     * one the Context holds (CoordinationBiasForceImpl checked it).
     */
    virtual void copyTabulatedFunctionToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force, int index) = 0;
    /**
     * Get the running statistics of the CVs (CoordinationBiasForce::getCVStatistics()), counting
     * the Context's current step first where it has not been counted. Only called where the force
     * keeps statistics in the Context.
     */
    virtual void getCVStatistics(OpenMM::ContextImpl& context, std::vector<double>& mean, std::vector<double>& m2, long long& count) = 0;
    /**
     * Replace the running statistics of the CVs (checked by the caller): they hold the Context's
     * current step from now on.
     */
    virtual void setCVStatistics(OpenMM::ContextImpl& context, const std::vector<double>& mean, const std::vector<double>& m2,
            long long count) = 0;
};

} // namespace CoordinationPlugin

#endif /*COORDINATION_KERNELS_H_*/
