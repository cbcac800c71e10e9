#ifndef REFERENCE_COORDINATION_KERNEL_FACTORY_H_
#define REFERENCE_COORDINATION_KERNEL_FACTORY_H_

#include "openmm/KernelFactory.h"

namespace CoordinationPlugin {

/** Creates the Reference kernels of the coordination plugin. */
class ReferenceCoordinationKernelFactory : public OpenMM::KernelFactory {
public:
    /** Create a kernel by name for a Context. */
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform, OpenMM::ContextImpl& context) const;
};

} // namespace CoordinationPlugin

/** Register the Reference kernels with the Reference platform and every platform derived from it that has none of its own (CPU without its plugin). */
extern "C" void registerCoordinationReferenceKernelFactories();

#endif /*REFERENCE_COORDINATION_KERNEL_FACTORY_H_*/
