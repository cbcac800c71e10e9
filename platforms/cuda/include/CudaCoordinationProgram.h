#ifndef CUDA_COORDINATION_PROGRAM_H_
#define CUDA_COORDINATION_PROGRAM_H_

#include "CoordinationForce.h"
#include "CudaCoordinationModulePart.h"
#include "internal/windowsExportCoordination.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/common/ComputeContext.h"
#include "lepton/ParsedExpression.h"
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace CoordinationPlugin {

/**
 * The source and compile-time defines of the CUDA kernels of one coordination CV, exactly as the
 * CUDA kernels hand them to CudaContext::createModule(), and of the chain rule of an energy
 * expression of several CVs. A part's source is the kernel files (src/kernels/, one job each)
 * that its families of kernels need, in the order of the list in platforms/cuda/CMakeLists.txt.
 * The switching type and the parameters that fix the code path become defines; the Custom
 * switching expression and the energy expression become code through OpenMM's
 * ExpressionUtilities. The NVRTC test builds the same programs on a machine without a GPU.
 */
class OPENMM_EXPORT_COORDINATION CudaCoordinationProgram {
public:
    /** The particles on each side of a tile; the threads of a block, except in the coordination tile kernel. */
    static const int TileSize = 256;
    /**
     * The threads of evaluateParticleFunction's one block (kernels/particlefunction.cu), which
     * reduces the coordination numbers of a non-elementwise particle function (Min, Max, Lowest,
     * Highest, Moment, and any where the lists do not serve): 512, so that each of its loops over
     * 8,000 coordination numbers takes 16 steps a thread, not the 32 of TileSize.
     */
    static const int ParticleFunctionThreads = 512;
    /**
     * The threads of a block of the neighbour-list kernels (kernels/neighbors.cu, particlelists.cu).
     * The first pass of per-atom coordination numbers is bounded to registers that let 4 such
     * blocks run at once on a multiprocessor in single and mixed precision (2 in double, which it
     * fits anyway): its evaluation of the function in double would otherwise take 71 registers a
     * thread and leave room for 3 (NVCC 13, sm_90).
     */
    static const int ListBlockSize = 256;
    /** The most CVs of one chained tile launch (MAX_CHAINED_TILE_CVS in kernels/chained.cu, set from this). */
    static const int MaxChainedTileCVs = 4;
    /**
     * The families of kernels a module may hold (a bit each; each needs some of the kernel files).
     * A Context compiles those its force's configuration uses, the others (histograms, the tiles
     * where the box turns out too small for cells) only when first needed.
     */
    enum Kernels {
        CoreKernels = 1,            ///< applyGradient, invertAtomIndex, updateGroupAtoms, checkPositions
        TileKernels = 2,            ///< computeCoordinationTiles: all pairs
        PairKernels = 4,            ///< computeCoordinationPairs: a pair list
        CellKernels = 8,            ///< computeCoordinationCells: cell lists and lists of homes
        BinningKernels = 16,        ///< assignCells, scanCellBlocks, addCellOffsets, scatterCells
        ListKernels = 32,           ///< checkNeighborList, computeCoordinationList
        HistogramKernels = 64,      ///< histogramTiles, histogramPairs
        HistogramCellKernels = 128, ///< histogramCells
        CellValueKernels = 256,     ///< computeCoordinationCellValues: the cells without forces
        ParticleKernels = 512,      ///< computeParticleNumbers, evaluateParticleFunction, computeParticleGradient: a particle function
        ParticleListKernels = 1024, ///< computeParticleListNumbers, computeParticleListGradient: a particle function on neighbour lists
        ParticleHomeKernels = 2048, ///< computeParticleHomeNumbers, evaluateParticleTerms, computeParticleHomeGradient: on lists of homes
        AllKernels = 4095
    };
    /** The names of the kernels of some families (a combination of Kernels). */
    static std::vector<std::string> getKernelNames(int kernels);
    /**
     * The L particles each thread of the coordination tile kernel should hold (its blocks have
     * TileSize/lPerThread threads): 2 where the all-pairs work (4M pairs or more) fills the GPU
     * (two per thread halve the cost of passing S gradients through the warp), 1 for less (each
     * warp's chain of pairs is then shorter). CudaCoordinationTuning::lPerThread can force it.
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
     * @param listSide   two groups whose lists of particles belong to one group alone (LIST_ONE_SIDED,
     *                   kernels/neighbors.cu): 0 group A's, 1 group B's; -1 every particle's
     */
    CudaCoordinationProgram(const CoordinationForce& force, OpenMM::ComputeContext& cc, int lPerThread, int listLanes = 1,
            int sBatch = 32, int listSide = -1);
    /** The defines of a module holding some families of kernels (a combination of Kernels). */
    std::map<std::string, std::string> getDefines(int kernels) const;
    /** The part of a module holding some families of kernels (a combination of Kernels). */
    CudaCoordinationModulePart getPart(int kernels) const;
    /**
     * The chain rule (kernels/chainrule.cu, with applyChainRule()) for an energy expression of
     * several CVs: a part to complete with the files it uses, by getStandaloneChainRulePart() or
     * getChainedPart().
     *
     * @param cc           the context whose precision and expression utilities apply
     * @param energy       the parsed expression, its tables bound to the placeholders of cc's ExpressionUtilities
     * @param cvNames      the names of the CVs in the expression, in the order of their sums
     * @param globalNames  the global parameters, in the order of the kernel's globals array
     * @param tables       the tabulated functions, and tableNames their names in the expression
     */
    static CudaCoordinationModulePart getChainRulePart(OpenMM::ComputeContext& cc, const Lepton::ParsedExpression& energy,
            const std::vector<std::string>& cvNames, const std::vector<std::string>& globalNames,
            const std::vector<const OpenMM::TabulatedFunction*>& tables, const std::vector<std::string>& tableNames);
    /** The part of a module holding the device's fit of a table's splines (kernels/spline.cu, CudaCoordinationTableFit). */
    static CudaCoordinationModulePart getSplinePart();
    /** The cells of a block of fitSplineCoefficients3D (16 threads a cell; CELLS_3D in kernels/spline.cu). */
    static const int SplineCells3D = 8;
    /** The part of a module holding the chain rule alone: chainRule (getChainRulePart()) and the files it uses. */
    static CudaCoordinationModulePart getStandaloneChainRulePart(const CudaCoordinationModulePart& chainRule);
    /**
     * A CV's part holding its tile kernel (getPart() with TileKernels), with the chain rule
     * (getChainRulePart()) and computeCoordinationTilesChained() (kernels/chained.cu), which runs
     * the two in one launch, added: one part, so that the tile code compiles once for both. With
     * family ParticleListKernels, a part holding the particle function's list kernels, with the
     * chain rule and computeParticleListGradientChained() (kernels/chainedparticles.cu), the
     * gradient pass and the chain rule in one launch; with ListKernels, the CV's neighbour-list
     * kernels with computeCoordinationListChained() (kernels/chainedlists.cu).
     */
    static CudaCoordinationModulePart getChainedPart(const CudaCoordinationModulePart& cvPart, const CudaCoordinationModulePart& chainRule,
            int family = TileKernels);
    /** The kernel that runs a CV's pass and the chain rule in one launch, for a family getChainedPart() takes. */
    static std::string getChainedKernelName(int family);
    /**
     * The prefix code of OpenMM's bonded kernel for CudaCoordinationBondedChainRule: kernels/energy.cu
     * and kernels/bondedchainrule.cu in the namespace CoordinationBondedChainRule, their macros undefined after it.
     */
    static std::string getBondedChainRuleSource();
    /**
     * One module's source from several parts: each part in a namespace of its own, after its
     * defines and before their #undef (and that of every macro its source defines), its kernels
     * renamed to name_i for part i (getKernelName()). createModule() compiles it without defines.
     */
    static std::string assemble(const std::vector<CudaCoordinationModulePart>& parts, OpenMM::ComputeContext& cc);
    /**
     * Add a part to those of a module unless an identical one is there (CVs of the same
     * configuration share their kernels); returns its index.
     */
    static int addPart(std::vector<CudaCoordinationModulePart>& parts, const CudaCoordinationModulePart& part);
    /** The name of a kernel of part i in an assembled module. */
    static std::string getKernelName(const std::string& kernel, int part);
    /** Whether two-group mode has particles in both groups (pairs of a particle with itself are skipped). */
    static bool groupsOverlap(const CoordinationForce& force);
    /** The kernel files (name and text), in the order of the list, with the code of a Custom switching function. */
    std::vector<std::pair<std::string, std::string> > files;
    std::map<std::string, std::string> defines;
private:
    /** Some of the kernel files (names without .cu) of a list of them (name and text), one after another in its order. */
    static std::string getSource(const std::vector<std::pair<std::string, std::string> >& files, const std::set<std::string>& names);
    /** The defines of the force's configuration: switching type, cutoff, box, mode, launch shape. */
    void defineConfiguration(const CoordinationForce& force, OpenMM::ComputeContext& cc, int lPerThread, int listLanes, int sBatch,
            int listSide);
    /** The code that sets s and dsdxValue from x for a Custom switching function (else empty). */
    static std::string customSwitchCode(const CoordinationForce& force, OpenMM::ComputeContext& cc);
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_PROGRAM_H_*/
