#include "CudaCoordinationKernelFactory.h"
#include "CudaCoordinationKernels.h"
#include "internal/windowsExportCoordination.h"
#include "openmm/OpenMMException.h"
#include "openmm/cuda/CudaPlatform.h"
#include "openmm/internal/ContextImpl.h"

using namespace CoordinationPlugin;
using namespace OpenMM;

extern "C" OPENMM_EXPORT_COORDINATION void registerPlatforms() {
}

extern "C" OPENMM_EXPORT_COORDINATION void registerCoordinationCudaKernelFactories() {
    for (int i = 0; i < Platform::getNumPlatforms(); i++) {
        Platform& platform = Platform::getPlatform(i);
        if (dynamic_cast<CudaPlatform*>(&platform) != NULL) {
            platform.registerKernelFactory(CalcCoordinationForceKernel::Name(), new CudaCoordinationKernelFactory());
            platform.registerKernelFactory(CalcCoordinationBiasForceKernel::Name(), new CudaCoordinationKernelFactory());
        }
    }
}

extern "C" OPENMM_EXPORT_COORDINATION void registerKernelFactories() {
    registerCoordinationCudaKernelFactories();
}

KernelImpl* CudaCoordinationKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
    CudaPlatform::PlatformData& data = *static_cast<CudaPlatform::PlatformData*>(context.getPlatformData());
    if (name == CalcCoordinationForceKernel::Name())
        return new CudaCalcCoordinationForceKernel(name, platform, *data.contexts[0]);
    if (name == CalcCoordinationBiasForceKernel::Name())
        return new CudaCalcCoordinationBiasForceKernel(name, platform, *data.contexts[0]);
    throw OpenMMException((std::string("Tried to create kernel with illegal kernel name '")+name+"'").c_str());
}
