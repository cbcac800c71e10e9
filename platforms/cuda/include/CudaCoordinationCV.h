#ifndef CUDA_COORDINATION_CV_H_
#define CUDA_COORDINATION_CV_H_

#include "CoordinationForce.h"
#include "CudaCoordinationCells.h"
#include "CudaCoordinationChecks.h"
#include "CudaCoordinationLauncher.h"
#include "CudaCoordinationNeighborList.h"
#include "CudaCoordinationProgram.h"
#include "CudaCoordinationTuning.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * One coordination CV on the GPU: its groups, its pair kernel (tiles, a pair list, cell lists or
 * neighbour lists, chosen for its own size and box), its sum and its gradient. The CoordinationForce
 * kernel uses one, the CoordinationBiasForce kernel one per CV; CudaCoordinationEnergy turns their
 * sums and gradients into the energy and the forces. Nothing here copies between host and
 * device during an evaluation.
 */
class CudaCoordinationCV {
public:
    /** The launch flags of the pair kernels (kernels/launch.cu). */
    enum Flags {DirectForces = 1, Gradient = 2, BlockEnergy = 4, Reduce = 8, ExpressionEnergy = 16, Accumulate = 32};
    /** Where the chain rule finds this CV's gradient after a launch with Gradient. */
    struct ChainRuleTarget {
        CUdeviceptr gradient, groupAtoms, entrySlot;
        int numSlots;
    };
    /** Runtime values of the switching function and pair geometry, in the device's precision. */
    template <class T>
    struct PairParams {
        T invR0, d0, dmax2, scale, shift, a, b, c, imageSearch2, beta, ref;
    };
    /** One CV of a chained tile launch (ChainedTileCV in kernels/chained.cu: the same members in the same order). */
    template <class Real>
    struct ChainedTileCV {
        CUdeviceptr groupAtoms, groupOriginal, gradient, invalidSlot;
        int numL, numS, offsetL, offsetS, sChunk, numSlots, cv, firstTile;
        PairParams<Real> params;
    };
    /** The CVs of a chained tile launch (ChainedTileCVs in kernels/chained.cu: the same layout). */
    template <class Real>
    struct ChainedTileCVs {
        ChainedTileCV<Real> cv[CudaCoordinationProgram::MaxChainedTileCVs];
        int count;
    };
    /**
     * The parameters of a particle function (ParticleFunctionParams in kernels/particles.cu: the
     * same members in the same order): Between's bounds and width, beta of Min and Max, the
     * Rational threshold of MoreThan and LessThan (r0, d0, cutoff, stretch scale and shift, n, m),
     * the function, the number of coordination numbers (group A's size), the power of Moment.
     */
    struct ParticleFunctionParams {
        double lower, upper, width, beta, r0, d0, dmax, scale, shift;
        int function, numCenters, n, m, power;
    };
    /**
     * The arguments of the cell kernels, passed by value (CellKernelArguments in
     * kernels/cellcoordination.cu: the same members in the same order), in the device's precision.
     */
    template <class Real, class Real4>
    struct CellArguments {
        // The sorted particles and cells of the binning, the pair parameters and the box, and where the gradient goes.
        CUdeviceptr sortedPos, sortedSlot, sortedAtom, cellStart, workCounter, groupOriginal;
        CudaCoordinationCells::Grid grid;
        PairParams<Real> params;
        Real4 periodicBoxVecX, periodicBoxVecY, periodicBoxVecZ;
        int flags;
        CUdeviceptr forceBuffer, gradient;
        int numSlots;
        // The home lists (rebuildStamp 0: none).
        CUdeviceptr rebuildStamp;
        int stamp;
        CUdeviceptr posq, groupAtoms, listPos, refPos, listShift, listSlot, listEntries, listCount, maxCount;
        int capacity;
        Real listCutoff2;
        // What finishBlock needs.
        CUdeviceptr energyBuffer, cvPartial, counter, cvValue, record, alarm;
        // The check of the positions (invalidSlot 0: none).
        CUdeviceptr invalidSlot, positionEnergy;
    };
    /**
     * Take the pairs and periodicity of a force (its switching parameters come with setParameters()).
     *
     * @param cu        the context
     * @param force     the force whose CV this is
     * @param tuning    the tuning switches of the Context (read once by the owning kernel)
     * @param launcher  the launcher of the owning kernel's evaluations
     */
    CudaCoordinationCV(OpenMM::CudaContext& cu, const CoordinationForce& force, const CudaCoordinationTuning& tuning,
            CudaCoordinationLauncher& launcher);
    /**
     * Take the switching parameters (and per-pair values) of a force with the same pairs. A changed
     * code path leaves kernels to compile (getMissingKernels()).
     *
     * @param force      the force
     * @param chainRule  whether an energy expression uses the CV (its gradient goes through the chain rule)
     */
    void setParameters(const CoordinationForce& force, bool chainRule);
    /** Throw OpenMMException if the force's groups or periodicity differ from this CV's. */
    void checkPairsUnchanged(const CoordinationForce& force) const;
    /** The kernel families (CudaCoordinationProgram::Kernels) the configuration uses now and that are not compiled yet. */
    int getMissingKernels() const;
    /** The program of the current configuration. */
    const CudaCoordinationProgram& getProgram() const;
    /** Take the kernels of some families from part `part` of a module (CudaCoordinationProgram::assemble()). */
    void loadKernels(CUmodule module, int kernels, int part);
    /** Compile, in a module of their own, the kernel families of these that are not compiled yet. */
    void requireKernels(int kernels);
    /**
     * Launch the pair kernel (and, for the cell kernel's sorted forces, applyGradient()), with
     * the check of the positions where checks asks for it: by checkNeighborList where the
     * neighbour lists serve, else by the pair kernel itself, so that the check adds no launch.
     *
     * @param flags   a combination of Flags
     * @param sum     where Accumulate adds the CV
     * @param value   where Reduce stores the CV
     * @param record  where BlockEnergy records a CV that is not finite (kernels/energy.cu)
     * @param checks  the position check and the alarm
     * @param chainedKernel   with chainArguments (CudaCoordinationEnergy, where this CV runs the chain
     *                        rule), the lists' pass where the neighbour lists of particles serve
     *                        (kernels/chainedlists.cu), those arguments after its own
     * @return whether chainedKernel was launched
     */
    bool launch(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks,
            CUfunction chainedKernel = 0, const std::vector<void*>* chainArguments = NULL);
    /**
     * launch() for a force with a particle function: the coordination numbers, the function and
     * its weights, and, where the flags ask for forces or the gradient, the gradient; over the
     * lists of homes where they serve (kernels/particlehomes.cu: one group, an elementwise F), else
     * over the neighbour lists of particles where they serve (kernels/particlelists.cu; both after
     * checkNeighborList and the binning), else over all pairs (kernels/particles.cu, which checks the
     * positions itself). With chainArguments (CudaCoordinationEnergy, where this CV runs the chain
     * rule), the gradient pass on the lists of particles is chainedKernel (kernels/chainedparticles.cu),
     * those arguments after its own.
     *
     * @return whether chainedKernel was launched (the lists of particles served and the flags asked for the gradient)
     */
    bool launchParticleFunction(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks,
            CUfunction chainedKernel = 0, const std::vector<void*>* chainArguments = NULL);
    /** Where the last launch with Gradient left the gradient. */
    ChainRuleTarget getChainRuleTarget();
    /** Whether the kernels of all these families (CudaCoordinationProgram::Kernels) are compiled for the current configuration. */
    bool hasKernels(int kernels) const {
        return (compiledKernels & kernels) == kernels;
    }
    /** Whether the configuration takes the tile kernel in the Context's box (as launch() will ask). */
    bool takesTiles() const;
    /** Whether the CV takes the neighbour lists of particles (not of homes; no particle function) in the Context's box. */
    bool takesNeighborLists() const;
    /** Whether the configuration is a particle function on the neighbour lists in the Context's box (as launch() will ask). */
    bool takesParticleLists() const;
    /**
     * Let the launch that also runs the chain rule take chunks of the short group wider than the
     * tile kernel's own (at most a tile), the narrowest that make its tiles at most maxTiles, where
     * the own chunks make more (two groups; one group has no chunks of its own). Before, and where
     * maxTiles is 0, that launch takes the tile kernel's chunks.
     *
     * @param maxTiles  the most tiles a chained launch may have (0: the own chunks)
     */
    void setChainedTileLimit(int maxTiles);
    /**
     * The number of tiles of a launch that also runs the chain rule, one a block (the chunks
     * setChainedTileLimit() chose; before, the tile kernel's own).
     */
    int getNumChainedTiles() const;
    /**
     * The number of tiles, where this evaluation takes the tile kernel (no pair list, neighbour
     * lists or cell lists, its kernels compiled), for a launch of one block a tile that also runs
     * the chain rule (CudaCoordinationEnergy, kernels/chained.cu; the chunks setChainedTileLimit()
     * chose); 0 where it takes another path.
     */
    int getChainableTiles();
    /**
     * The arguments the tile kernel starts with (particles, groups, chunks, pair parameters, box,
     * flags, forces and gradient: kernels/tiles.cu), for this evaluation's box.
     *
     * @param flags    the flags argument, which must outlive the launch
     */
    std::vector<void*> getTileArguments(int& flags);
    /** The threads of a block of the tile kernels. */
    int getTileThreads() const {
        return tileThreads;
    }
    /**
     * This CV's entry of a chained tile launch (kernels/chained.cu), for this evaluation's box, with
     * the chunks of setChainedTileLimit().
     *
     * @param cvIndex      the CV's index among the energy's (where its sum goes)
     * @param firstTile    the launch's block of its first tile
     * @param invalidSlot  where to record a position that is not finite (0: no check)
     */
    template <class Real>
    ChainedTileCV<Real> getChainedTileCV(int cvIndex, int firstTile, CUdeviceptr invalidSlot);
    /** Record that the chain rule's launch computed this CV on its tiles (describeLastEvaluation()). */
    void setChained();
    /**
     * Record, on the GPU, the first slot whose particle's position is not finite (an int at
     * checks.invalidSlot) and raise the alarm (kernels/energy.cu, checkPosition()): a launch of
     * its own, before a histogram (launch() checks in the pair kernels).
     */
    void checkPositions(const CudaCoordinationChecks& checks);
    /** The particle of a slot (group A, then group B). */
    int getParticle(int slot) const;
    /** The number of slots: the particles of group A, then those of group B. */
    int getNumSlots() const {
        return numSlots;
    }
    /** Count the pair distances into counts (numBins bins up to maxDistance), adding to what is there. */
    void launchHistogram(OpenMM::CudaArray& counts, int numBins, double maxDistance);
    /**
     * The per-atom coordination numbers c_i of a force with a particle function, one for each
     * entry of group A in its order, at the current positions (the first pass over the neighbour
     * lists where they serve, else over all pairs, and a download).
     *
     * @param checks  the position check and the alarm
     */
    std::vector<double> computeCoordinationNumbers(const CudaCoordinationChecks& checks);
    /** Recompute where each group particle sits after OpenMM reorders atoms (on the GPU). */
    void updateGroupAtoms();
    /** The code path of the last evaluation (CudaCalcCoordinationForceKernel::describeLastEvaluation()). */
    std::string describeLastEvaluation() const;
private:
    class ReorderListener;
    /**
     * The arguments the particle function's pair kernels start with (kernels/particles.cu), numA
     * and numB the caller's, which must outlive the launch.
     */
    std::vector<void*> particleArguments(int& numA, int& numB);
    /** Launch computeParticleNumbers (c_i added into particleNumbers) with the position check of checks; returns its tiles. */
    long long launchParticleNumbers(const CudaCoordinationChecks& checks);
    /**
     * Where the neighbour lists serve this box (hasParticleLists() and their prepare(), which
     * launches checkNeighborList, with the position check of checks, and the binning), launch
     * computeParticleListNumbers and return true; else launch nothing and return false. With
     * evaluate, the launch evaluates the elementwise particle function too (its sum where flags,
     * sum, value and record say, as launch() does; its weights into particleListWeights);
     * otherwise it stores the c_i into particleNumbers.
     */
    bool launchParticleListNumbers(const CudaCoordinationChecks& checks, bool evaluate = false, int flags = 0, CUdeviceptr sum = 0,
            CUdeviceptr value = 0, CUdeviceptr record = 0);
    /**
     * The blocks of a launch of a particle-list kernel (ListBlockSize threads, LIST_LANES a list
     * particle): one for every ListBlockSize lanes, at most resident (as many as fit at once).
     */
    long long getParticleListBlocks(int resident) const;
    /** Take the particle function's parameters of a force (the kernel argument of evaluateParticleFunction). */
    void setParticleFunctionParameters(const CoordinationForce& force);
    /**
     * A length squared as the kernels compare squared distances with it: in double precision
     * length*length, in single and mixed the product of the length rounded to float, in float, so
     * that a particle placed at that distance (its position a float) is at it, not a rounding
     * below (PLUMED's values at r = dmax: issue 40).
     */
    double squaredLength(double length) const;
    /** Upload the weight and r0 of each pair of a pair list (PairValues in kernels/switching.cu). */
    void uploadPairValues(const CoordinationForce& force, const CoordinationSwitching& switching);
    /** The kernel families (CudaCoordinationProgram::Kernels) this force's configuration uses. */
    int expectedKernels() const;
    void setImageSearchDistance();
    /**
     * The arguments computeCoordinationList and computeParticleListNumbers (kernels/particlelists.cu)
     * start with: the lists, their cells, the pair parameters and the box.
     */
    std::vector<void*> listArguments(void* params);
    /**
     * Whether a particle function's passes may take the neighbour lists (lists of particles, enabled,
     * a finite cutoff in a periodic box): launchParticleFunction() then asks them for this box.
     */
    bool hasParticleLists() const;
    /**
     * Whether a particle function's passes may take the lists of homes (kernels/particlehomes.cu:
     * one group, F elementwise, the lists enabled and of homes, a finite cutoff in a periodic box).
     */
    bool hasParticleHomeLists() const;
    /**
     * Where the lists of homes serve this box (hasParticleHomeLists() and their prepare(), which
     * launches checkNeighborList, with the position check of checks, and the binning), launch the
     * first pass, computeParticleHomeNumbers (c by sorted index into particleNumbers), and return
     * true; else launch nothing and return false.
     */
    bool launchParticleHomeNumbers(const CudaCoordinationChecks& checks);
    /**
     * After launchParticleHomeNumbers(): evaluateParticleTerms (the elementwise F, summed where flags,
     * sum, value and record say, as launch() does; its weights by sorted index) and, where the flags
     * ask for forces or the gradient, computeParticleHomeGradient.
     */
    void launchParticleHomeFunction(int flags, CUdeviceptr sum, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks);
    /**
     * Set the arguments of a cell kernel: its flags, its lists of homes (homeLists) or none, and
     * finishBlock's cvPartial, cvValue, record and alarm, and the check of the positions.
     */
    template <class Real, class Real4>
    void setCellArguments(CellArguments<Real, Real4>& arguments, const PairParams<Real>& params, int flags, bool homeLists,
            CUdeviceptr partial, CUdeviceptr value, CUdeviceptr record, const CudaCoordinationChecks& checks);
    /**
     * Whether the cell kernel's forces go through the gradient buffer by sorted index and
     * applyGradient() (a launch more, fewer scattered atomics: faster for large groups), rather
     * than straight to the atoms. CudaCoordinationTuning::sortedGradient can force either.
     */
    bool useSortedGradient() const;
    /**
     * Set the arguments of a cell kernel on the lists of homes for the per-atom passes (no position
     * check: checkNeighborList's), in the struct of the device's precision, and return its address.
     */
    void* setHomeCellArguments(CellArguments<float, float4>& cellFloat, CellArguments<double, double4>& cellDouble, int flags,
            CUdeviceptr workCounter, CUdeviceptr alarm);
    /** Record the path of a particle function's evaluation (describeLastEvaluation(), getChainRuleTarget()). */
    void recordParticlePath(bool particleLists, bool particleHomes, bool chained, CUdeviceptr entrySlot);
    /** The blocks of a launch of a cell kernel: a warp a work item, at most maxBlocks. */
    long long getCellBlocks() const;
    /** Whether to use the cell lists for this cutoff in the current box; if so, bin the particles. */
    bool binCells(double cutoff);
    /** Blocks for the tile kernels: one per tile of L chunks and S chunks of the given size, at most maxTileBlocks. */
    int getNumTileBlocks(int chunk, int maxTileBlocks) const;
    OpenMM::CudaContext& cu;
    const CudaCoordinationTuning& tuning;
    CudaCoordinationLauncher& launcher;
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, sortedGradient;
    int numL, numS, offsetL, offsetS, sChunk, numSlots, maxBlocks, lPerThread, tileThreads, listLanes;
    // The chunks of the short group in a launch that also runs the chain rule (setChainedTileLimit()).
    int chainedSChunk;
    // The particles the neighbour lists follow: the group's, or both groups' (computeCoordinationList's numParticles).
    int listParticles = 0;
    // Those of them with a list of their own (computeCoordinationList's LIST_LANES threads each): all,
    // or for two groups and the plain CV the smaller group's, listSide (0: A, 1: B; -1: every particle has one).
    int listedParticles = 0, listSide = -1;
    int residentTileBlocks = 1, residentListBlocks = 1, residentParticleListBlocks = 1, residentParticleGradientBlocks = 1;
    double dmax;
    /** The program of the current configuration, and the kernel families compiled from it. */
    std::unique_ptr<CudaCoordinationProgram> program;
    int compiledKernels = 0;
    /** The pair kernel of the last evaluation (a CudaCoordinationProgram::Kernels bit), its options and gradient order. */
    int lastPath = 0;
    bool lastHomeLists = false, lastSortedForces = false, lastChained = false, lastParticleLists = false, lastParticleHomes = false;
    CUdeviceptr lastEntrySlot = 0;
    CUfunction tilesKernel, pairsKernel, applyKernel, histogramTilesKernel, histogramPairsKernel, invertKernel, updateKernel, checkKernel;
    CUfunction cellsKernel, cellValuesKernel, histogramCellsKernel, assignCellsKernel, scanCellsKernel, offsetCellsKernel, scatterCellsKernel;
    CUfunction checkListKernel, listKernel;
    CUfunction particleNumbersKernel, particleFunctionKernel, particleGradientKernel, particleListNumbersKernel, particleListGradientKernel;
    CUfunction particleHomeNumbersKernel, particleTermsKernel, particleHomeGradientKernel;
    /** Whether the CV is a particle function of per-atom coordination numbers (kernels/particles.cu), and its parameters. */
    bool particleFunction = false;
    ParticleFunctionParams particleParams;
    /** The power of r in each pair's term of a coordination number, in the device's precisions. */
    double distancePowerDouble = 0.0;
    float distancePowerFloat = 0.0f;
    /** The coordination numbers c_i (zero between evaluations) and the weights dF/dc_i of a particle function. */
    OpenMM::CudaArray particleNumbers, particleWeights;
    /**
     * The weights dF/dc of an elementwise particle function by list index (on lists of homes: by
     * sorted index), in the device's precision (0 for group B).
     */
    OpenMM::CudaArray particleListWeights;
    /** The counter of the work items of computeParticleHomeGradient (evaluateParticleTerms clears it). */
    OpenMM::CudaArray particleHomeCounter;
    /**
     * The lists of homes' entries within dmax that computeParticleHomeNumbers writes and
     * computeParticleHomeGradient reads (as large as the lists of homes), and each item's count.
     */
    OpenMM::CudaArray homeNearEntries, homeNearCount;
    /** Cell lists for a finite cutoff in a periodic box (null where they cannot apply). */
    std::unique_ptr<CudaCoordinationCells> cells;
    /** Verlet lists built from the cells (null where they cannot apply). */
    std::unique_ptr<CudaCoordinationNeighborList> neighborList;
    OpenMM::CudaArray groupOriginal, groupAtoms, inverseAtomIndex, gradient, cvPartial, counter;
    /** The weight and r0 of each pair of a pair list with parameters of its own (null otherwise). */
    std::unique_ptr<OpenMM::CudaArray> pairValues;
    PairParams<float> paramsFloat;
    PairParams<double> paramsDouble;
    /** The pair values of a pair list without them. */
    CUdeviceptr noPointer = 0;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_CV_H_*/
