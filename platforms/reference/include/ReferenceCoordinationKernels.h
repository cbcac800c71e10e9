#ifndef REFERENCE_COORDINATION_KERNELS_H_
#define REFERENCE_COORDINATION_KERNELS_H_

#include "CoordinationKernels.h"
#include "ReferenceCoordinationCV.h"
#include "ReferenceCoordinationEnergy.h"
#include "internal/CoordinationCVStatistics.h"
#include "internal/CoordinationDistance.h"
#include "openmm/TabulatedFunction.h"
#include <map>
#include <string>
#include <memory>
#include <vector>

namespace CoordinationPlugin {

/**
 * The CoordinationForce on the Reference platform, in double precision. The CPU platform's kernel
 * derives from it and replaces its CV (createCV()).
 */
class ReferenceCalcCoordinationForceKernel : public CalcCoordinationForceKernel {
public:
    ReferenceCalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform) : CalcCoordinationForceKernel(name, platform) {
    }
    void initialize(const OpenMM::System& system, const CoordinationForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    double computeCollectiveVariable(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationForce& force);
    std::vector<double> computeCoordinationNumbers(OpenMM::ContextImpl& context);
    std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context);
    void clearPairHistogram(OpenMM::ContextImpl& context);
protected:
    /** The CV of a force (the caller deletes it). */
    virtual ReferenceCoordinationCV* createCV(const CoordinationForce& force) const;
private:
    void setParameters(const CoordinationForce& force);
    std::unique_ptr<ReferenceCoordinationCV> cv;
    ReferenceCoordinationEnergy energy;
    std::string energyExpression;
    std::vector<long long> histogram;
    double histogramMaxDistance;
};

/**
 * The CoordinationBiasForce on the Reference platform, in double precision: each CV by
 * ReferenceCoordinationCV (by createCV(), which the CPU platform's kernel replaces), the chain rule
 * and the tables by ReferenceCoordinationEnergy.
 */
class ReferenceCalcCoordinationBiasForceKernel : public CalcCoordinationBiasForceKernel {
public:
    ReferenceCalcCoordinationBiasForceKernel(std::string name, const OpenMM::Platform& platform) : CalcCoordinationBiasForceKernel(name, platform) {
    }
    void initialize(const OpenMM::System& system, const CoordinationBiasForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    std::vector<double> computeCollectiveVariables(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force);
    void copyTabulatedFunctionToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force, int index);
    void getCVStatistics(OpenMM::ContextImpl& context, std::vector<double>& mean, std::vector<double>& m2, long long& count);
    void setCVStatistics(OpenMM::ContextImpl& context, const std::vector<double>& mean, const std::vector<double>& m2, long long count);
protected:
    /** The CV of one of the force's CoordinationForces (the caller deletes it). */
    virtual ReferenceCoordinationCV* createCV(const CoordinationForce& force) const;
private:
    void setParameters(const CoordinationBiasForce& force);
    /** Parse the energy expression with the Context's copies of the tables. */
    void setEnergy();
    /**
     * The value of CV k at positions pos, and its gradient where gradient is not NULL (a vector of
     * one entry per particle): the CoordinationForce's sum, or the distance.
     */
    double computeCV(int k, OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient);
    /** Each CV's CoordinationForce evaluator, NULL for a distance. */
    std::vector<std::unique_ptr<ReferenceCoordinationCV> > cvs;
    /** Each CV's distance parameters, used where cvs[k] is NULL. */
    std::vector<CoordinationDistance> distances;
    ReferenceCoordinationEnergy energy;
    std::string energyExpression;
    std::vector<std::string> cvNames, globalNames, tableNames;
    std::vector<std::unique_ptr<OpenMM::TabulatedFunction> > tables;
    /** The running statistics of the CVs (CoordinationBiasForce::setCVStatisticsStride()). */
    CoordinationCVStatistics statistics;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_KERNELS_H_*/
