#ifndef CUDA_COORDINATION_LAUNCHER_H_
#define CUDA_COORDINATION_LAUNCHER_H_

#include "openmm/cuda/CudaContext.h"

namespace CoordinationPlugin {

/**
 * Launches the plugin's kernels of one evaluation as programmatic dependent launches (sm_90 and
 * later): each may start while the kernel before it finishes; it waits for that kernel's results
 * before it reads anything, and only then lets the next kernel launch (DEPENDENT_KERNEL_START in
 * kernels/launch.cu), so that at most two kernels of the stream are in flight
 * (docs/cuda-implementation.md, "Ordering"). Where the GPU or driver refuses such a launch
 * (before sm_90), or COORDINATION_DEPENDENT_LAUNCH=0 (CudaCoordinationTuning) asks, it and every
 * later one are plain launches.
 */
class CudaCoordinationLauncher {
public:
    /**
     * @param cu         the context
     * @param dependent  whether to try programmatic dependent launches (false: plain launches only)
     */
    CudaCoordinationLauncher(OpenMM::CudaContext& cu, bool dependent);
    /**
     * Launch a kernel that begins with DEPENDENT_KERNEL_START on the Context's current stream.
     *
     * @param kernel     the kernel
     * @param arguments  its arguments
     * @param blocks     the number of blocks (at least 1)
     * @param blockSize  the threads of a block
     */
    void launch(CUfunction kernel, void** arguments, long long blocks, int blockSize);
    /** Whether the launches are programmatic dependent launches (so far: none refused). */
    bool usesDependentLaunches() const {
        return !dependentLaunchFailed;
    }
private:
    OpenMM::CudaContext& cu;
    bool dependentLaunchFailed;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_LAUNCHER_H_*/
