#ifndef CUDA_COORDINATION_TUNING_H_
#define CUDA_COORDINATION_TUNING_H_

#include "internal/windowsExportCoordination.h"
#include <string>

namespace CoordinationPlugin {

/**
 * The tuning switches of the CUDA kernels, in one place. Each forces a code path that the kernels
 * otherwise choose by themselves from the force and the system; they exist for tests and
 * benchmarks, and a simulation needs none of them. They are read from the environment once, when
 * a Context creates the kernel (CudaCalcCoordinationForceKernel::initialize()), never during an
 * evaluation. An invalid value throws an OpenMMException naming the variable and the value.
 *
 * | Variable                     | Values            | What it forces (default in brackets)                                  |
 * |------------------------------|-------------------|-----------------------------------------------------------------------|
 * | COORDINATION_L_PER_THREAD    | 1, 2              | L particles a thread of the all-pairs tile kernel [2 from 4M pairs]    |
 * | COORDINATION_SORTED_GRADIENT | 0, 1              | cell kernel forces straight to the atoms (0) or by sorted index (1)    |
 * |                              |                   | [by sorted index from 500,000 particles, unless home lists find the    |
 * |                              |                   | atoms in spatial order]                                                |
 * | COORDINATION_NEIGHBOR_LIST   | 0, 1, always      | neighbour lists with a finite dmax: off, on [on], rebuilt at every     |
 * |                              |                   | evaluation                                                             |
 * | COORDINATION_LIST_KIND       | particles, homes  | the kind of neighbour list [one group: particles up to 50,000, homes   |
 * |                              |                   | above; two groups: particles from 4M pairs and up to 50,000 particles, |
 * |                              |                   | else none]; particles gives two groups lists whatever their size, and  |
 * |                              |                   | homes none; a particle function has lists of particles regardless     |
 * | COORDINATION_LIST_LANES      | 1, 2, 4, ..., 32  | lanes sharing a particle in the list kernel [about 512 threads an SM]  |
 * | COORDINATION_LIST_SIDES      | one, both         | two groups' lists of particles for the plain CV: the smaller group's   |
 * |                              |                   | particles alone have lists, each pair once, the other's gradient by    |
 * |                              |                   | atomics (one), or every particle of both, each pair twice (both)       |
 * |                              |                   | [both: one measured slower, docs/cuda-implementation.md]               |
 * | COORDINATION_NEIGHBOR_SKIN   | a distance >= 0   | the lists' skin in nm [dmax/10]                                        |
 * | COORDINATION_LIST_SCHEDULE   | host, device      | lists of particles: the binning launched only where the host forces a  |
 * |                              |                   | rebuild, which an earlier check asked for (host), or at every          |
 * |                              |                   | evaluation, returning at once unless the GPU finds the lists stale     |
 * |                              |                   | (device) [host]                                                        |
 * | COORDINATION_LIST_EARLY_SHARE| 0 to 0.49         | the share of the skin a particle moves before a check asks the host    |
 * |                              |                   | for a rebuild (host schedule), at first [0.40]; the lists are stale at |
 * |                              |                   | 0.49, and each evaluation that finds them so lowers the share by 0.05  |
 * | COORDINATION_CELL_GRID       | rx,ry,rz,run      | a cell grid of that reach and run length (0: chunks) [cost model]      |
 * | COORDINATION_DEPENDENT_LAUNCH| 0, 1              | plain launches (0) or programmatic dependent ones (1) [1 where the    |
 * |                              |                   | GPU takes them: sm_90 and later]                                       |
 * | COORDINATION_CHAINED_TILES   | 0, 1, 2           | the chain rule of an energy expression in a launch of its own (0), or |
 * |                              |                   | in a tile kernel's launch, the forces in OpenMM's bonded kernel (1),  |
 * |                              |                   | or (2) that with chunks of a CV's short group widened (at most to a   |
 * |                              |                   | tile) where its own give more tiles than multiprocessors [1]          |
 * | COORDINATION_CHAINED_TILE_CVS| 1, 2, 3, 4        | the most CVs of a CoordinationBiasForce on tiles of the same code that |
 * |                              |                   | share that launch [4]; 1: one CV, the others a launch each             |
 */
struct OPENMM_EXPORT_COORDINATION CudaCoordinationTuning {
    enum ListMode {ListsDefault, ListsOff, ListsAlwaysRebuilt};
    enum ListKind {KindDefault, KindParticles, KindHomes};
    enum ListSchedule {ScheduleHost, ScheduleDevice};
    /** L particles a thread of the tile kernel; 0 lets the kernel choose. */
    int lPerThread = 0;
    /** -1 lets the kernel choose; 0 forces forces straight to the atoms, 1 the gradient by sorted index. */
    int sortedGradient = -1;
    ListMode neighborList = ListsDefault;
    ListKind listKind = KindDefault;
    /** Lanes sharing a particle in the neighbour-list kernel; 0 lets the lists choose. */
    int listLanes = 0;
    /** Two groups' lists of particles for the plain CV: true gives the smaller group's particles alone a list (each pair once). */
    bool oneSidedLists = false;
    /** The neighbour lists' skin in nm; negative lets the lists choose (dmax/10). */
    double neighborSkin = -1;
    /** Who decides where the lists of particles launch the binning (CudaCoordinationNeighborList). */
    ListSchedule listSchedule = ScheduleHost;
    /** The share of the skin a particle moves before a check asks the host for a rebuild; negative lets the lists choose. */
    double listEarlyShare = -1;
    /** A forced cell grid {rx, ry, rz, runLength}; rx = 0 lets the cost model choose. */
    int cellGrid[4] = {0, 0, 0, -1};
    /** false forces plain kernel launches; true (the default) launches them as programmatic dependent launches where the GPU can. */
    bool dependentLaunch = true;
    /**
     * false gives the chain rule a launch of its own; true (the default) runs it in the gradient
     * pass of a particle function on the neighbour lists, else in a tile kernel's launch with the
     * forces in OpenMM's bonded kernel (CudaCoordinationBondedChainRule), where it can.
     */
    bool chainedTiles = true;
    /** true lets a CV on tiles take wider chunks of its short group in the launch that runs the chain rule (at most a tile a multiprocessor). */
    bool widenChainedTiles = false;
    /** The most CVs on tiles of the same code that share the chained tile launch (CudaCoordinationProgram::MaxChainedTileCVs at most). */
    int chainedTileCVs = 4;
    /**
     * Read the switches from the environment (see the table above).
     *
     * @throws OpenMMException for a value outside a variable's range
     */
    static CudaCoordinationTuning fromEnvironment();
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_TUNING_H_*/
