#ifndef CUDA_COORDINATION_ENERGY_H_
#define CUDA_COORDINATION_ENERGY_H_

#include "CudaCoordinationBondedChainRule.h"
#include "CudaCoordinationCV.h"
#include "CudaCoordinationDistances.h"
#include "CudaCoordinationLauncher.h"
#include "CudaCoordinationProgram.h"
#include "CudaCoordinationTableFit.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include "openmm/internal/ContextImpl.h"
#include "lepton/ParsedExpression.h"
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The energy of one or more coordination CVs on the GPU (the one chain rule of both CUDA kernels,
 * device code in kernels/energy.cu and kernels/chainrule.cu): either an energy expression of the
 * CVs, with global parameters and tabulated functions, whose E and dE/dcv_k are evaluated on the
 * device from the CVs' sums and applied to their gradients, in one launch (applyChainRule()) or in
 * a chained pass's last block with OpenMM's bonded kernel adding the forces (CudaCoordinationBondedChainRule); or,
 * for one CV without an expression, the CV itself, which the pair kernel adds directly. Also holds the
 * state the host reads back in one download (the CVs, and the first position or energy that
 * was not finite) and the alarm that tells the host, without waiting for the GPU, that something
 * was recorded there; and compiles every kernel the CVs and the expression need in one module.
 */
class CudaCoordinationEnergy {
public:
    /**
     * @param cu        the context
     * @param launcher  the launcher of the owning kernel's evaluations
     * @param numCVs    the number of CVs
     * @param chain     whether a CV on tiles, or a particle function on the lists, may run the chain rule in its own launch
     *                  (CudaCoordinationTuning::chainedTiles)
     * @param widen     whether a CV on tiles may take wider chunks of its short group for that
     *                  (CudaCoordinationTuning::widenChainedTiles)
     * @param shared    at most this many CVs on tiles share that launch, from 1 to
     *                  CudaCoordinationProgram::MaxChainedTileCVs (CudaCoordinationTuning::chainedTileCVs)
     */
    CudaCoordinationEnergy(OpenMM::CudaContext& cu, CudaCoordinationLauncher& launcher, int numCVs, bool chain, bool widen, int shared);
    ~CudaCoordinationEnergy();
    /**
     * Use an energy expression. Its code compiles at the next compile() where it changed; the
     * tables' values are uploaded now, so that new values of tables of the same size need no compile.
     *
     * @param energy       the parsed expression, its tables bound to the placeholders of cu's ExpressionUtilities
     * @param cvNames      the names of the CVs in the expression, in order
     * @param globalNames  the global parameters it reads from the Context
     * @param tables       the tabulated functions, and tableNames their names in the expression
     */
    void setExpression(const Lepton::ParsedExpression& energy, const std::vector<std::string>& cvNames,
            const std::vector<std::string>& globalNames, const std::vector<const OpenMM::TabulatedFunction*>& tables,
            const std::vector<std::string>& tableNames);
    /**
     * The CVs that are distances (CoordinationBiasForce::addDistance()), computed by the chain rule
     * itself (CudaCoordinationDistances); their entries in the CVs passed to compile(), evaluate()
     * and readState() are NULL. Their particles take effect at once, the rest at the next
     * setExpression() and compile().
     *
     * @param indices    the index of each distance among the CVs
     * @param distances  the distances, in the order of indices
     */
    void setDistances(const std::vector<int>& indices, const std::vector<CoordinationDistance>& distances);
    /**
     * Replace the values of table i of the expression in use (its shape unchanged): fitted on the
     * GPU (CudaCoordinationTableFit) unless it is periodic, then fitted on the host and uploaded.
     */
    void updateTable(int index, const OpenMM::TabulatedFunction& table);
    /** Use no expression: the energy is the one CV itself. */
    void clearExpression();
    /** Whether an energy expression is in use. */
    bool hasExpression() const {
        return expression;
    }
    /**
     * Let OpenMM's bonded kernel add -dE/dcv_k times the CVs' gradients to the forces
     * (CudaCoordinationBondedChainRule), where they have few enough slots: then a CV on tiles runs
     * the chain rule in its own launch (computeCoordinationTilesChained(), kernels/chained.cu). Call
     * once, from the kernel's initialize().
     *
     * @param cvs         the CVs, in the order of the expression's (NULL: a distance)
     * @param forceGroup  the force group of the owning force
     */
    void addBondedChainRule(const std::vector<CudaCoordinationCV*>& cvs, int forceGroup);
    /** Compile, in one module, what the CVs and the expression need and have not compiled yet. */
    void compile(const std::vector<CudaCoordinationCV*>& cvs);
    /** Upload the global parameters whose values in the Context changed. */
    void uploadGlobals(OpenMM::ContextImpl& context);
    /** Where CV k's pair kernel accumulates its sum for the next applyChainRule(). */
    CUdeviceptr getSum(int k);
    /** Where CV k's pair kernel stores the CV with Reduce. */
    CUdeviceptr getValue(int k);
    /** Where a pair kernel with BlockEnergy records a CV that is not finite (one CV). */
    CUdeviceptr getRecord();
    /** Where CV k records its first slot whose position is not finite. */
    CUdeviceptr getInvalidSlot(int k);
    /**
     * What a launch of CV k checks and where it records it (CudaCoordinationCV::launch()).
     *
     * @param k          the CV
     * @param positions  whether to check the positions of its particles
     * @param energy     whether this evaluation's energy is read (a position that is not finite makes it NaN)
     */
    CudaCoordinationChecks getChecks(int k, bool positions, bool energy);
    /**
     * Whether a kernel has recorded something in the state (a position, a CV, an energy or a
     * dE/dcv that was not finite) since readState() last found nothing: a read of mapped host
     * memory that never waits for the GPU, so that a kernel still running may raise it later.
     * The kernels' evaluations call readState() where it is raised, and so throw the error of an
     * evaluation at their first call after the GPU finished it.
     */
    bool isAlarmRaised() const {
        return *alarm != 0;
    }
    /**
     * Evaluate the expression: launch each CV's pair kernel (Accumulate, and Gradient for the
     * forces), with the check of the positions where the energy is read, then the chain rule.
     * Where a CV is a particle function on the neighbour lists, its gradient pass runs the chain
     * rule too (computeParticleListGradientChained(), kernels/chainedparticles.cu); else where CVs
     * take tiles and the bonded kernel takes the gradients (addBondedChainRule()), those of one
     * program (the one of the CV with the fewest) share one tile launch, whose last block evaluates
     * the chain rule, and the bonded kernel adds the forces (computeCoordinationTilesChained(),
     * kernels/chained.cu), or, without a CV on tiles, the pass of a CV on the neighbour lists runs
     * it (computeCoordinationListChained(), kernels/chainedlists.cu); otherwise the chain rule is a
     * launch of its own (applyChainRule()).
     *
     * @param cvs         the CVs, in the order of the expression's
     * @param gradient    whether to add the forces
     * @param energy      whether to add E to the energy
     * @param statistics  whether the chain rule adds the CVs to their running statistics (the first evaluation of a step)
     */
    void evaluate(const std::vector<CudaCoordinationCV*>& cvs, bool gradient, bool energy, bool statistics = false);
    /**
     * Set the stride of the CVs' running statistics on the device (CoordinationBiasForce::setCVStatisticsStride()),
     * keeping the statistics. Waits for the GPU (a download and an upload of the state).
     */
    void setStatisticsStride(int stride);
    /** Download the CVs' running statistics (the mean and m2 of each CV, the count); waits for the GPU. */
    void getStatistics(std::vector<double>& mean, std::vector<double>& m2, long long& count);
    /** Replace the CVs' running statistics on the device (the stride kept); waits for the GPU. */
    void setStatistics(const std::vector<double>& mean, const std::vector<double>& m2, long long count);
    /**
     * Read the state back, in one download that waits for the GPU (so only where a result is
     * read anyway, or the alarm is raised), and throw OpenMMException for what it records: a
     * position that is not finite (CV k's first slot, naming its particle), and, if checkEnergy
     * is true, an evaluation since the last check whose energy or dE/dcv_k was not finite (the
     * kernels made dE/dcv_k zero and the energy NaN there). Clears what it throws for, and the
     * alarm where nothing is left recorded.
     *
     * @param cvs          the CVs
     * @param checkEnergy  whether to check the energy record
     * @param message      the error's text for an expression that is not finite: from the
     *                     values of its variables (CVs and global parameters), E and dE/dcv_k
     * @return the CVs' values (of the last Reduce or chain rule)
     */
    std::vector<double> readState(const std::vector<CudaCoordinationCV*>& cvs, bool checkEnergy,
            const std::function<std::string(const std::map<std::string, double>&, double, const std::vector<double>&)>& message);
private:
    /** Upload a table's spline coefficients (CoordinationSpline's layout): double in double precision, else rounded to float. */
    void uploadCoefficients(OpenMM::CudaArray& table, const std::vector<double>& coefficients);
    /** The state as it starts, and as readState() leaves what it cleared. */
    std::vector<double> initialState() const;
    /**
     * The CVs' ChainRuleTargets (kernels/chainrule.cu) as the bytes of a kernel argument, and in slots
     * the entries of the gradients the chain rule scatters: every CV's but CV skip's (-1: none).
     */
    std::vector<char> getChainRuleTargets(const std::vector<CudaCoordinationCV*>& cvs, int skip, int& slots);
    /**
     * Launch CV chainedIndex, on the neighbour lists, with its pass and the chain rule in one launch
     * (computeCoordinationListChained(), kernels/chainedlists.cu) where the lists serve it now;
     * otherwise its own launches alone, and return false (applyChainRule() then follows).
     *
     * @param flags       the CV's flags (Accumulate, Gradient)
     * @param chainFlags  the chain rule's flags, which must outlive the launch
     */
    bool launchChainedList(const std::vector<CudaCoordinationCV*>& cvs, int flags, int& chainFlags);
    /** Launch applyChainRule(): E and every dE/dcv_k from the sums of this evaluation, after the CVs' pair kernels. */
    void launchChainRule(const std::vector<CudaCoordinationCV*>& cvs, int flags);
    /** Launch computeCoordinationTilesChained() for the CVs of chainedSet, if they take their tiles now; false if not launched. */
    bool launchChained(const std::vector<CudaCoordinationCV*>& cvs, int flags);
    /**
     * Launch CV chainedIndex, a particle function, with its gradient pass and the chain rule in one
     * launch (computeParticleListGradientChained(), kernels/chainedparticles.cu) where it takes the
     * neighbour lists now and flags ask for the gradient; otherwise its own launches alone, and
     * return false (applyChainRule() then follows).
     *
     * @param flags       the CV's flags (Accumulate, Gradient)
     * @param chainFlags  the chain rule's flags, which must outlive the launch
     */
    bool launchChainedParticles(const std::vector<CudaCoordinationCV*>& cvs, int flags, int& chainFlags);
    /** The chain rule's flags (kernels/launch.cu): GRADIENT, EXPRESSION_ENERGY, CV_STATISTICS. */
    static int chainRuleFlags(bool gradient, bool energy, bool statistics);
    /** Where the CVs' running statistics start in the state (kernels/energy.cu), and the state's size, in doubles. */
    int statisticsOffset() const {
        return 5*numCVs+2;
    }
    int stateSize() const {
        return 7*numCVs+4;
    }
    OpenMM::CudaContext& cu;
    CudaCoordinationLauncher& launcher;
    int numCVs, shared;
    bool expression = false, chain, widen;
    /** The chain rule's part of the next module, where its code changed; the compiled kernel. */
    std::unique_ptr<CudaCoordinationModulePart> pendingPart, compiledPart;
    CUfunction chainRuleKernel;
    /**
     * The kernel of a CV chained with the chain rule, the CV it computes (-1: none) and its family
     * (CudaCoordinationProgram::TileKernels or ParticleListKernels); for tiles the count of the
     * blocks that have added their sums (kernels/chained.cu).
     */
    CUfunction chainedKernel;
    int chainedIndex = -1, chainedFamily = 0;
    /**
     * The CVs of the chained launch: chainedIndex and, for tiles, the other CVs on tiles compiled
     * from the same program (the same code), at most shared of them.
     */
    std::vector<int> chainedSet;
    OpenMM::CudaArray blocksDone;
    /** The chain rule's last step in OpenMM's bonded kernel (addBondedChainRule()), or NULL. */
    std::unique_ptr<CudaCoordinationBondedChainRule> bonded;
    std::vector<std::string> cvNames, globalNames;
    std::vector<double> globalValues;
    /** The distance CVs (setDistances()) and their particles on the device. */
    CudaCoordinationDistances distances;
    /** The alarm (energy.cu, raiseAlarm()): an int in mapped host memory, and its address on the device. */
    volatile int* alarm;
    CUdeviceptr alarmOnDevice;
    /** The CVs' sums, two sets used in turn; sumParity is the set of the next evaluation. */
    OpenMM::CudaArray sums, state, globals;
    int sumParity = 0;
    std::vector<std::unique_ptr<OpenMM::CudaArray> > tables;
    std::unique_ptr<CudaCoordinationTableFit> tableFit;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_ENERGY_H_*/
