#ifndef CUDA_COORDINATION_KERNELS_H_
#define CUDA_COORDINATION_KERNELS_H_

#include "CoordinationKernels.h"
#include "CudaCoordinationCV.h"
#include "CudaCoordinationEnergy.h"
#include "CudaCoordinationLauncher.h"
#include "CudaCoordinationTuning.h"
#include "internal/CoordinationCVStatistics.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The CoordinationForce on the CUDA platform: one CudaCoordinationCV, and its energy (the CV
 * itself, or its energy expression through CudaCoordinationEnergy's chain rule). The host side
 * only marshals and launches: the pairs, the CV sum, the energy expression and the forces stay
 * on the GPU, and nothing is copied between host and device during a step.
 */
class OPENMM_EXPORT_COORDINATION CudaCalcCoordinationForceKernel : public CalcCoordinationForceKernel {
public:
    CudaCalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform, OpenMM::CudaContext& cu);
    void initialize(const OpenMM::System& system, const CoordinationForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    double computeCollectiveVariable(OpenMM::ContextImpl& context);
    /**
     * The per-atom coordination numbers c_i at the current positions (a force with a particle
     * function), one for each entry of group A in its order, downloaded from the GPU.
     */
    std::vector<double> computeCoordinationNumbers(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationForce& force);
    std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context);
    void clearPairHistogram(OpenMM::ContextImpl& context);
    /**
     * The code path of the last evaluation, for tests of the tuning switches: the pair kernel
     * ("kernel=tiles", "pairs", "cells" or "lists") and its shape (L particles a thread and S
     * chunk of the tiles; lists of homes and forces by sorted index in the cells; lanes of the
     * lists; the cell grid's reach and run length; the lists' skin and when they are rebuilt).
     */
    std::string describeLastEvaluation() const;
private:
    void setParameters(const CoordinationForce& force);
    /** Read the state back and throw for a position or energy that was not finite; returns the CV. */
    double readState(bool checkEnergy);
    OpenMM::CudaContext& cu;
    /** The tuning switches, read once when the Context creates the kernel. */
    CudaCoordinationTuning tuning;
    std::unique_ptr<CudaCoordinationLauncher> launcher;
    std::unique_ptr<CudaCoordinationCV> cv;
    std::unique_ptr<CudaCoordinationEnergy> energy;
    std::string energyExpression;
    OpenMM::CudaArray histogram, histogramScratch;
};

/**
 * The CoordinationBiasForce on the CUDA platform: one CudaCoordinationCV per coordination CV,
 * each with the pair kernel of its own size and box, and one CudaCoordinationEnergy that
 * evaluates the expression and applies the chain rule to every CV's gradient in one launch; the
 * distance CVs are computed in that launch too (CudaCoordinationDistances).
 * Nothing is copied between host and device during a step.
 */
class OPENMM_EXPORT_COORDINATION CudaCalcCoordinationBiasForceKernel : public CalcCoordinationBiasForceKernel {
public:
    CudaCalcCoordinationBiasForceKernel(std::string name, const OpenMM::Platform& platform, OpenMM::CudaContext& cu);
    void initialize(const OpenMM::System& system, const CoordinationBiasForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    std::vector<double> computeCollectiveVariables(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force);
    /** Copy one table's values into the Context, fitted on the GPU (CudaCoordinationEnergy::updateTable()). */
    void copyTabulatedFunctionToContext(OpenMM::ContextImpl& context, const CoordinationBiasForce& force, int index);
    /**
     * The code path each CV took in the last evaluation, for tests: "name: path" for each CV
     * (CudaCalcCoordinationForceKernel::describeLastEvaluation()), separated by "; ".
     */
    std::string describeLastEvaluation() const;
    /** The CVs' running statistics, downloaded; the current step, where not counted, is counted on the host and uploaded. */
    void getCVStatistics(OpenMM::ContextImpl& context, std::vector<double>& mean, std::vector<double>& m2, long long& count);
    /** Upload the CVs' running statistics. */
    void setCVStatistics(OpenMM::ContextImpl& context, const std::vector<double>& mean, const std::vector<double>& m2, long long count);
private:
    void setParameters(const CoordinationBiasForce& force);
    /** Read the state back and throw for a position or energy that was not finite; returns the CVs. */
    std::vector<double> readState(bool checkEnergy);
    OpenMM::CudaContext& cu;
    CudaCoordinationTuning tuning;
    std::unique_ptr<CudaCoordinationLauncher> launcher;
    std::vector<std::unique_ptr<CudaCoordinationCV> > owned;
    /** The CVs, in the force's order (pointers into owned; NULL for a distance). */
    std::vector<CudaCoordinationCV*> cvs;
    /** The distance CVs, in the force's order (CoordinationBiasForce::addDistance()). */
    std::vector<CoordinationDistance> distances;
    std::unique_ptr<CudaCoordinationEnergy> energy;
    std::string energyExpression;
    std::vector<std::string> names;
    /** The stride and the step last counted of the CVs' running statistics (their values are on the device). */
    CoordinationCVStatistics statistics;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_KERNELS_H_*/
