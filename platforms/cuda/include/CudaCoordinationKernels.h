#ifndef CUDA_COORDINATION_KERNELS_H_
#define CUDA_COORDINATION_KERNELS_H_

#include "CoordinationKernels.h"
#include "CudaCoordinationCells.h"
#include "CudaCoordinationLaunch.h"
#include "CudaCoordinationNeighborList.h"
#include "CudaCoordinationProgram.h"
#include "CudaCoordinationTuning.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The CoordinationForce on the CUDA platform. The host side only marshals and launches: the
 * pairs, the CV sum, the energy expression and the forces stay on the GPU, and nothing is
 * copied between host and device during a step.
 */
class OPENMM_EXPORT_COORDINATION CudaCalcCoordinationForceKernel : public CalcCoordinationForceKernel {
public:
    CudaCalcCoordinationForceKernel(std::string name, const OpenMM::Platform& platform, OpenMM::CudaContext& cu);
    void initialize(const OpenMM::System& system, const CoordinationForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    double computeCollectiveVariable(OpenMM::ContextImpl& context);
    void copyParametersToContext(OpenMM::ContextImpl& context, const CoordinationForce& force);
    std::vector<long long> computePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    void accumulatePairHistogram(OpenMM::ContextImpl& context, int numBins, double maxDistance);
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::ContextImpl& context);
    void clearPairHistogram(OpenMM::ContextImpl& context);
    /** Recompute where each group particle sits after OpenMM reorders atoms (on the GPU). */
    void updateGroupAtoms();
    /**
     * The code path of the last evaluation, for tests of the tuning switches: the pair kernel
     * ("kernel=tiles", "pairs", "cells" or "lists") and its shape (L particles a thread and S
     * chunk of the tiles; lists of homes and forces by sorted index in the cells; lanes of the
     * lists; the cell grid's reach and run length; the lists' skin and when they are rebuilt).
     */
    std::string describeLastEvaluation() const;
private:
    class ReorderListener;
    /** Runtime values of the switching function and pair geometry, in the device's precision. */
    template <class T>
    struct PairParams {
        T invR0, d0, dmax2, scale, shift, a, b, c, imageSearch2, beta, ref;
    };
    void setParameters(const CoordinationForce& force);
    /** Upload the weight and r0 of each pair of a pair list (PairValues in kernels/switching.cu). */
    void uploadPairValues(const CoordinationForce& force, const CoordinationSwitching& switching);
    /** The kernel families (CudaCoordinationProgram::Kernels) this force's configuration uses. */
    int expectedKernels() const;
    /** Compile, in one module, the kernel families of these that are not compiled yet. */
    void requireKernels(int kernels);
    void setImageSearchDistance();
    void uploadGlobals(OpenMM::ContextImpl& context);
    void launchCoordination(int flags);
    /** The arguments of computeCoordinationList, before those that every pair kernel ends with. */
    std::vector<void*> listArguments(void* params, int& flags);
    /** The arguments of computeCoordinationCells for its lists of homes (homeLists), or for none. */
    std::vector<void*> homeListArguments(bool homeLists);
    /**
     * Add -dE/dcv times the gradient to the forces (flags: those of the pair kernel's launch, or
     * DirectForces for dE/dcv = 1); entrySlot: the slot of each gradient entry (the cells' sorted
     * slots), or 0 where entry k is slot k.
     */
    void launchChainRule(int flags, CUdeviceptr entrySlot);
    void launchHistogram(OpenMM::CudaArray& counts, int numBins, double maxDistance);
    /**
     * Whether the cell kernel's forces go through the gradient buffer by sorted index and
     * applyChainRule() (a launch more, fewer scattered atomics: faster for large groups), rather
     * than straight to the atoms. CudaCoordinationTuning::sortedGradient can force either.
     */
    bool useSortedGradient() const;
    /** Whether to use the cell lists for this cutoff in the current box; if so, bin the particles. */
    bool binCells(double cutoff);
    /** Blocks for the tile kernels: one per tile of L chunks and S chunks of the given size, at most maxTileBlocks. */
    int getNumTileBlocks(int chunk, int maxTileBlocks) const;
    /** Record, on the GPU, the first group particle whose position is not finite (in cvState). */
    void checkPositions();
    /**
     * Read cvState back, in one download that waits for the GPU (so only where a result is
     * read anyway), and throw for what it records: a group particle whose position is not
     * finite, and, if checkEnergy is true, an evaluation since the last such check that gave an
     * energy or dE/dcv that is not finite (checkEnergy() in kernels/coordination.cu made it
     * zero there). Clears what it throws for; returns the state (cvState[0] is the CV).
     */
    std::vector<double> readState(bool checkEnergy);
    /** cvState as it starts, and as readState() leaves what it cleared. */
    static std::vector<double> initialState();
    /** The doubles of cvState, and the one whose first bytes hold the first invalid slot (an int). */
    static const int StateSize = 7, InvalidSlotIndex = 6;
    OpenMM::CudaContext& cu;
    /** The tuning switches, read once when the Context creates the kernel. */
    CudaCoordinationTuning tuning;
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, chainRule, sortedGradient;
    int numL, numS, offsetL, offsetS, sChunk, numSlots, maxBlocks, lPerThread, tileThreads, listLanes;
    int residentTileBlocks = 1, residentListBlocks = 1;
    double dmax;
    std::string energyExpression;
    /** The program of the current configuration, and the kernel families compiled from it. */
    std::unique_ptr<CudaCoordinationProgram> program;
    int compiledKernels = 0;
    /** The pair kernel of the last evaluation (a CudaCoordinationProgram::Kernels bit) and its options. */
    int lastPath = 0;
    bool lastHomeLists = false, lastSortedForces = false;
    CUfunction tilesKernel, pairsKernel, applyKernel, histogramTilesKernel, histogramPairsKernel, invertKernel, updateKernel, checkKernel;
    CUfunction cellsKernel, histogramCellsKernel, assignCellsKernel, scanCellsKernel, offsetCellsKernel, scatterCellsKernel;
    CUfunction checkListKernel, listKernel;
    /** Launches the kernels of an evaluation, each overlapping the end of the one before. */
    std::unique_ptr<CudaCoordinationLauncher> launcher;
    /** Cell lists for a finite cutoff in a periodic box (null where they cannot apply). */
    std::unique_ptr<CudaCoordinationCells> cells;
    /** Verlet lists built from the cells, for one group (null where they cannot apply). */
    std::unique_ptr<CudaCoordinationNeighborList> neighborList;
    OpenMM::CudaArray groupOriginal, groupAtoms, inverseAtomIndex, gradient, cvPartial, counter, cvState, globals;
    /** Where checkPositions() records the first invalid slot: an int inside cvState. */
    CUdeviceptr invalidSlot;
    /** Two CV sums (ACCUMULATE), used in turn; sumParity is the one of the next evaluation. */
    OpenMM::CudaArray cvSums;
    int sumParity = 0;
    OpenMM::CudaArray histogram, histogramScratch;
    /** The weight and r0 of each pair of a pair list with parameters of its own (null otherwise). */
    std::unique_ptr<OpenMM::CudaArray> pairValues;
    std::vector<std::unique_ptr<OpenMM::CudaArray> > tables;
    std::vector<std::string> globalNames;
    std::vector<double> globalValues;
    PairParams<float> paramsFloat;
    PairParams<double> paramsDouble;
    /** The list arguments of a cell kernel without lists of homes. */
    CUdeviceptr noPointer = 0;
    int noStamp = 0;
    double noCutoffDouble = 0;
    float noCutoffFloat = 0;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_KERNELS_H_*/
