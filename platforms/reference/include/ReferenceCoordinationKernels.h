#ifndef REFERENCE_COORDINATION_KERNELS_H_
#define REFERENCE_COORDINATION_KERNELS_H_

#include "CoordinationKernels.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/Vec3.h"
#include "lepton/ExpressionProgram.h"
#include <map>
#include <string>
#include <memory>
#include <vector>

namespace CoordinationPlugin {

/**
 * The CoordinationForce on the Reference platform (and the CPU platform, which derives from
 * it), in double precision.
 */
class ReferenceCalcCoordinationForceKernel : public CalcCoordinationForceKernel {
public:
    ReferenceCalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform) : CalcCoordinationForceKernel(name, platform) {
    }
    void initialize(const OpenMM::System& system, const CoordinationForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    double computeCollectiveVariable(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationForce& force);
    std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context);
    void clearPairHistogram(OpenMM::ContextImpl& context);
private:
    /** Call f(i, j) for every pair of the force. */
    template <class F>
    void forEachPair(F f) const;
    /** The displacement from particle i to j and its length, nearest image when periodic. */
    OpenMM::Vec3 displacement(const std::vector<OpenMM::Vec3>& pos, int i, int j, double& r) const;
    /** Check the groups' positions for NaN and record the box. */
    void prepare(OpenMM::ContextImpl& context);
    /** Sum s over the pairs; if gradient is not NULL, add dcv/dx to it. */
    double computeCV(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const;
    void setParameters(const CoordinationForce& force);
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, triclinic;
    OpenMM::Vec3 box[3];
    double halfMinWidth;
    std::unique_ptr<CoordinationSwitching> switching;
    /** The values of each pair of a pair list with per-pair parameters (empty otherwise). */
    std::vector<CoordinationSwitching::Pair> pairSwitches;
    std::string energyExpression;
    Lepton::ExpressionProgram energy, energyDerivative;
    std::map<std::string, double> energyVariables;
    std::vector<std::string> parameterNames;
    std::vector<long long> histogram;
    double histogramMaxDistance;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_KERNELS_H_*/
