#ifndef CPU_COORDINATION_KERNELS_H_
#define CPU_COORDINATION_KERNELS_H_

#include "ReferenceCoordinationKernels.h"
#include <string>

namespace CoordinationPlugin {

/**
 * The CoordinationForce on the CPU platform, in double precision: the Reference kernel (energy
 * expression, chain rule, checks, accumulated histogram) with CpuCoordinationCV for the sums over
 * pairs and the pair histogram, on the platform's threads.
 */
class CpuCalcCoordinationForceKernel : public ReferenceCalcCoordinationForceKernel {
public:
    CpuCalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform) : ReferenceCalcCoordinationForceKernel(name, platform) {
    }
protected:
    ReferenceCoordinationCV* createCV(const CoordinationForce& force) const override;
};

/**
 * The CoordinationBiasForce on the CPU platform, in double precision: the Reference kernel
 * (energy expression, tables, chain rule) with a CpuCoordinationCV for each CV.
 */
class CpuCalcCoordinationBiasForceKernel : public ReferenceCalcCoordinationBiasForceKernel {
public:
    CpuCalcCoordinationBiasForceKernel(std::string name, const OpenMM::Platform& platform) : ReferenceCalcCoordinationBiasForceKernel(name, platform) {
    }
protected:
    ReferenceCoordinationCV* createCV(const CoordinationForce& force) const override;
};

} // namespace CoordinationPlugin

#endif /*CPU_COORDINATION_KERNELS_H_*/
