#ifndef CUDA_COORDINATION_PROGRAM_H_
#define CUDA_COORDINATION_PROGRAM_H_

#include "CoordinationForce.h"
#include "internal/windowsExportCoordination.h"
#include "openmm/common/ComputeContext.h"
#include <map>
#include <string>

namespace CoordinationPlugin {

/**
 * The source and compile-time defines of the CUDA kernels for one CoordinationForce, exactly
 * as the CUDA kernel hands them to CudaContext::createModule(). The switching type and the
 * parameters that fix the code path become defines; the Custom switching expression and the
 * energy expression become code through OpenMM's ExpressionUtilities. The NVRTC test builds
 * the same program on a machine without a GPU.
 */
class OPENMM_EXPORT_COORDINATION CudaCoordinationProgram {
public:
    /** The number of particles on each side of a tile, and the threads of a block. */
    static const int TileSize = 256;
    /**
     * Assemble the program for a force.
     *
     * @param force      the force
     * @param cc         the context whose precision, padding, box shape and expression utilities apply
     */
    CudaCoordinationProgram(const CoordinationForce& force, OpenMM::ComputeContext& cc);
    /** Whether two-group mode has particles in both groups (pairs of a particle with itself are skipped). */
    static bool groupsOverlap(const CoordinationForce& force);
    std::string source;
    std::map<std::string, std::string> defines;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_PROGRAM_H_*/
