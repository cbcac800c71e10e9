#ifndef CPU_COORDINATION_KERNEL_FACTORY_H_
#define CPU_COORDINATION_KERNEL_FACTORY_H_

#include "openmm/KernelFactory.h"

namespace CoordinationPlugin {

/** Creates the CPU kernels of the coordination plugin. */
class CpuCoordinationKernelFactory : public OpenMM::KernelFactory {
public:
    /** Create a kernel by name for a Context. */
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform, OpenMM::ContextImpl& context) const;
};

} // namespace CoordinationPlugin

/** Register the CPU kernels with the CPU platform (replacing the Reference ones registered there before). */
extern "C" void registerCoordinationCpuKernelFactories();

#endif /*CPU_COORDINATION_KERNEL_FACTORY_H_*/
