#ifndef CUDA_COORDINATION_CHECKS_H_
#define CUDA_COORDINATION_CHECKS_H_

#include <cuda.h>

namespace CoordinationPlugin {

/**
 * What a launch of a CV's kernels checks and where it records what it finds (checkPosition() and
 * raiseAlarm() in kernels/energy.cu): the positions of the CV's particles, where invalidSlot is
 * set, and always the alarm that CudaCoordinationEnergy reads without waiting for the GPU.
 */
struct CudaCoordinationChecks {
    /** The int that receives the first slot whose position is not finite (0: positions not checked). */
    CUdeviceptr invalidSlot;
    /** The alarm, an int in mapped host memory (CudaCoordinationEnergy::getChecks(), isAlarmRaised()). */
    CUdeviceptr alarm;
    /** The energy buffer, made NaN by a position that is not finite (0: this evaluation's energy is not read). */
    CUdeviceptr energyBuffer;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_CHECKS_H_*/
