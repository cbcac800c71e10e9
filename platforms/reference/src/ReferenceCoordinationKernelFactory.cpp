#include "ReferenceCoordinationKernelFactory.h"
#include "ReferenceCoordinationKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/reference/ReferencePlatform.h"
#include "internal/windowsExportCoordination.h"

using namespace CoordinationPlugin;
using namespace OpenMM;

extern "C" OPENMM_EXPORT_COORDINATION void registerPlatforms() {
}

extern "C" OPENMM_EXPORT_COORDINATION void registerCoordinationReferenceKernelFactories() {
    for (int i = 0; i < Platform::getNumPlatforms(); i++) {
        Platform& platform = Platform::getPlatform(i);
        // A platform derived from Reference (CPU) keeps kernels of its own registered before (the CPU
        // plugin replaces these if it comes later), whichever order OpenMM loads the plugins in.
        bool derived = (platform.getName() != "Reference");
        if (dynamic_cast<ReferencePlatform*>(&platform) != NULL)
            for (const std::string& name : {CalcCoordinationForceKernel::Name(), CalcCoordinationBiasForceKernel::Name()})
                if (!derived || !platform.supportsKernels({name}))
                    platform.registerKernelFactory(name, new ReferenceCoordinationKernelFactory());
    }
}

extern "C" OPENMM_EXPORT_COORDINATION void registerKernelFactories() {
    registerCoordinationReferenceKernelFactories();
}

KernelImpl* ReferenceCoordinationKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
    if (name == CalcCoordinationForceKernel::Name())
        return new ReferenceCalcCoordinationForceKernel(name, platform);
    if (name == CalcCoordinationBiasForceKernel::Name())
        return new ReferenceCalcCoordinationBiasForceKernel(name, platform);
    throw OpenMMException((std::string("Tried to create kernel with illegal kernel name '")+name+"'").c_str());
}
