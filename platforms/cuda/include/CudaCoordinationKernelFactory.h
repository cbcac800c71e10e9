#ifndef CUDA_COORDINATION_KERNEL_FACTORY_H_
#define CUDA_COORDINATION_KERNEL_FACTORY_H_

#include "openmm/KernelFactory.h"

namespace CoordinationPlugin {

/** Creates the CUDA kernels of the coordination plugin. */
class CudaCoordinationKernelFactory : public OpenMM::KernelFactory {
public:
    /** Create a kernel by name for a Context. */
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform, OpenMM::ContextImpl& context) const;
};

} // namespace CoordinationPlugin

/** Register the CUDA kernels with the CUDA platform; does nothing if there is none. */
extern "C" void registerCoordinationCudaKernelFactories();

#endif /*CUDA_COORDINATION_KERNEL_FACTORY_H_*/
