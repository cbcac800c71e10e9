#include "CpuCoordinationKernelFactory.h"
#include "CpuCoordinationKernels.h"
#include "openmm/OpenMMException.h"
#include "internal/windowsExportCoordination.h"

using namespace CoordinationPlugin;
using namespace OpenMM;

extern "C" OPENMM_EXPORT_COORDINATION void registerPlatforms() {
}

extern "C" OPENMM_EXPORT_COORDINATION void registerCoordinationCpuKernelFactories() {
    try {
        Platform& platform = Platform::getPlatformByName("CPU");
        platform.registerKernelFactory(CalcCoordinationForceKernel::Name(), new CpuCoordinationKernelFactory());
        platform.registerKernelFactory(CalcCoordinationBiasForceKernel::Name(), new CpuCoordinationKernelFactory());
    }
    catch (const OpenMMException&) {
        // No CPU platform (a processor it does not support): nothing to register.
    }
}

extern "C" OPENMM_EXPORT_COORDINATION void registerKernelFactories() {
    registerCoordinationCpuKernelFactories();
}

KernelImpl* CpuCoordinationKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
    if (name == CalcCoordinationForceKernel::Name())
        return new CpuCalcCoordinationForceKernel(name, platform);
    if (name == CalcCoordinationBiasForceKernel::Name())
        return new CpuCalcCoordinationBiasForceKernel(name, platform);
    throw OpenMMException((std::string("Tried to create kernel with illegal kernel name '")+name+"'").c_str());
}
