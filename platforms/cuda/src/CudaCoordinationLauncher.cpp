#include "CudaCoordinationLauncher.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

CudaCoordinationLauncher::CudaCoordinationLauncher(CudaContext& cu, bool dependent) : cu(cu), dependentLaunchFailed(!dependent) {
}

void CudaCoordinationLauncher::launch(CUfunction kernel, void** arguments, long long blocks, int blockSize) {
    unsigned int gridSize = (unsigned int) max(1LL, blocks);
    if (!dependentLaunchFailed) {
        CUlaunchAttribute attribute;
        attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attribute.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig config = {};
        config.gridDimX = gridSize;
        config.gridDimY = config.gridDimZ = 1;
        config.blockDimX = blockSize;
        config.blockDimY = config.blockDimZ = 1;
        config.hStream = cu.getCurrentStream();
        config.attrs = &attribute;
        config.numAttrs = 1;
        if (cuLaunchKernelEx(&config, kernel, arguments, NULL) == CUDA_SUCCESS)
            return;
        dependentLaunchFailed = true;
    }
    CUresult result = cuLaunchKernel(kernel, gridSize, 1, 1, blockSize, 1, 1, 0, cu.getCurrentStream(), arguments, NULL);
    if (result != CUDA_SUCCESS)
        throw OpenMMException("CoordinationForce: launching a kernel failed (CUDA error "+to_string((int) result)+")");
}
