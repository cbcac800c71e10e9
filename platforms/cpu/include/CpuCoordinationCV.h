#ifndef CPU_COORDINATION_CV_H_
#define CPU_COORDINATION_CV_H_

#include "CpuCoordinationCells.h"
#include "ReferenceCoordinationCV.h"
#include "openmm/internal/ThreadPool.h"
#include <vector>

namespace CoordinationPlugin {

/**
 * One coordination CV on the CPU platform: the Reference CV (pairs, images, switching function,
 * checks) with its loops over pairs on the platform's threads and, where the switching function
 * has a cutoff, over cell lists. Each thread sums its share of the pairs into arrays of its own,
 * added up in thread order: the result is the same from run to run for a given thread count.
 */
class CpuCoordinationCV : public ReferenceCoordinationCV {
public:
    /** Take the pairs, periodicity and switching parameters of a force. */
    explicit CpuCoordinationCV(const CoordinationForce& force);
    /** The Reference checks, and the Context's thread pool. */
    void prepare(OpenMM::ContextImpl& context) override;
    /**
     * Sum s over the pairs, or the particle function of the per-atom coordination numbers, on
     * the platform's threads; if gradient is not NULL (and sized), add dcv/dx to it.
     */
    double compute(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const override;
    /** The per-atom coordination numbers, each share's pairs in arrays of its own added in share order. */
    std::vector<double> computeCoordinationNumbers(const std::vector<OpenMM::Vec3>& pos) const override;
    /** The particle function and its gradient: the c_i, then dF/dc by the chain rule over the same pairs. */
    double computeParticleFunction(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const override;
    /** The pairs closer than maxDistance (nm) counted in numBins bins of equal width. */
    std::vector<long long> computeHistogram(const std::vector<OpenMM::Vec3>& pos, int numBins, double maxDistance) const override;
private:
    /**
     * Sort the groups into cells for a cutoff where that pays (a finite cutoff, enough pairs, a
     * box at least three cells wide); returns whether the pairs are to be found through them.
     */
    bool buildCells(const std::vector<OpenMM::Vec3>& pos, double cutoff) const;
    /**
     * Into how many shares the pairs are cut: the pool's thread count, or one (computed on the
     * calling thread) where there are too few pairs to be worth waking the pool. It depends on
     * the groups alone, so that results stay the same from one evaluation to the next.
     */
    int numShares(bool useCells) const;
    /** Call f(share) for each share: on the pool's threads, or on this one for a single share. */
    template <class F>
    void runShares(int shares, F f) const;
    /**
     * Call f(a, b, k, d, r2) for share thread (of numThreads) of the pairs: a and b index groupA and the second
     * group (groupA itself in OneGroup mode, then a < b), k is the pair's index in a pair list, d
     * the displacement from a to b and r2 its square. With cells, pairs farther apart than the
     * cutoff may be left out; d is then the displacement between the points' images in the box.
     */
    template <class F>
    void forThreadPairs(int thread, int numThreads, const std::vector<OpenMM::Vec3>& pos, bool useCells, F f) const;
    /**
     * Add the shares' gradients (threadGradients, per slot) to gradient (per particle), each
     * particle's terms in share order, so that the sum does not depend on the threads' timing.
     */
    void addThreadGradients(int shares, std::vector<OpenMM::Vec3>& gradient) const;
    /** The particle of entry b of the second group. */
    int second(int b) const {
        return mode == CoordinationForce::OneGroup ? groupA[b] : groupB[b];
    }
    OpenMM::ThreadPool* threads;
    /** The particles of the groups (each once), and the index among them of each entry of groupA and the second group. */
    std::vector<int> particles, slotA, slotB;
    mutable CpuCoordinationCells cells;
    /** The images of groupA's entries in the box and their cells (with cells, in TwoGroups mode). */
    mutable std::vector<OpenMM::Vec3> imagesA;
    mutable std::vector<int> cellsA;
    /** Each share's sum, gradient (per slot) and histogram. */
    mutable std::vector<double> threadSums;
    mutable std::vector<std::vector<OpenMM::Vec3> > threadGradients;
    mutable std::vector<std::vector<long long> > threadCounts;
    /** Each share's coordination numbers (per entry of group A). */
    mutable std::vector<std::vector<double> > threadNumbers;
};

} // namespace CoordinationPlugin

#endif /*CPU_COORDINATION_CV_H_*/
