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
    /** The particles on each side of a tile; the threads of a block, except in the coordination tile kernel. */
    static const int TileSize = 256;
    /**
     * The L particles each thread of the coordination tile kernel should hold (its blocks have
     * TileSize/lPerThread threads): 2 where the all-pairs work (4M pairs or more) fills the GPU
     * (two per thread halve the cost of passing S gradients through the warp), 1 for less (each
     * warp's chain of pairs is then shorter). The environment variable COORDINATION_L_PER_THREAD
     * (1, 2 or 4) overrides the choice, for benchmarking.
     */
    static int chooseLPerThread(const CoordinationForce& force);
    /**
     * Assemble the program for a force.
     *
     * @param force      the force
     * @param cc         the context whose precision, padding, box shape and expression utilities apply
     * @param lPerThread the L particles a thread of the tile kernel holds (1, 2 or 4)
     * @param listLanes  the lanes that share a particle in the neighbour-list kernel (a power of 2 up to 32)
     * @param sBatch     the S particles of a batch in the tile kernel: 32, or 16 where its S chunks are 16
     */
    CudaCoordinationProgram(const CoordinationForce& force, OpenMM::ComputeContext& cc, int lPerThread, int listLanes = 1,
            int sBatch = 32);
    /** Whether two-group mode has particles in both groups (pairs of a particle with itself are skipped). */
    static bool groupsOverlap(const CoordinationForce& force);
    std::string source;
    std::map<std::string, std::string> defines;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_PROGRAM_H_*/
