#ifndef OPENMM_COORDINATION_FORCE_IMPL_H_
#define OPENMM_COORDINATION_FORCE_IMPL_H_

#include "CoordinationForce.h"
#include "openmm/Kernel.h"
#include "openmm/internal/ForceImpl.h"
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
    /**
     * The per-atom coordination numbers at the current positions: refused where the Context's copy of
     * the force has no particle function (PairSum when the Context was created or last updated,
     * whatever the force has been set to since).
     */
    std::vector<double> computeCoordinationNumbers(OpenMM::ContextImpl& context);
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
     * The warning when a force without periodic boundary conditions, on which
     * setUsesPeriodicBoundaryConditions() was never called, is used in a System whose other forces
     * use periodic boundary conditions: it names the force, the periodic force found and the calls
     * to make. Empty when there is nothing to warn about.
     *
     * @param force   the CoordinationForce (a CV of a CoordinationBiasForce included)
     * @param system  the System of the Context
     * @param which   how the message names the force, for example CoordinationForce "cv" (force 3 of the System)
     * @param owner   the CoordinationBiasForce whose CV the force is, or NULL: not counted among the other
     *                forces (its distances may use periodic boundary conditions, CoordinationBiasForce::addDistance())
     */
    static std::string periodicBoundaryWarning(const CoordinationForce& force, const OpenMM::System& system,
            const std::string& which,
            const OpenMM::Force* owner = NULL);
    /**
     * Describe a force of a System for the messages: its class, its name in quotes (getName()) and
     * its index in the System, for example CoordinationForce "cv" (force 3 of the System).
     */
    static std::string describeForce(const OpenMM::Force& force, const std::string& className, const OpenMM::System& system);
private:
    static void checkHistogramArguments(int numBins, double maxDistance);
    const CoordinationForce& owner;
    OpenMM::Kernel kernel;
    int frames, histogramBins;
    double histogramMaxDistance;
    /** Whether the kernel has a particle function: the force's at initialize() or the last updateParametersInContext(). */
    bool particleFunctionInContext;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_FORCE_IMPL_H_*/
