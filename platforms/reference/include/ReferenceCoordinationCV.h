#ifndef REFERENCE_COORDINATION_CV_H_
#define REFERENCE_COORDINATION_CV_H_

#include "CoordinationForce.h"
#include "internal/CoordinationParticleFunction.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/Vec3.h"
#include "openmm/internal/ContextImpl.h"
#include <cmath>
#include <memory>
#include <vector>

namespace CoordinationPlugin {

/**
 * One coordination CV on the Reference platform: its pairs, images and switching function, the
 * sum over pairs and its gradient. The CoordinationForce kernel uses one, the
 * CoordinationBiasForce kernel one per CV. The CPU platform's CpuCoordinationCV derives from it and
 * replaces the loops over pairs (compute() and computeHistogram()).
 */
class ReferenceCoordinationCV {
public:
    /** Take the pairs, periodicity and switching parameters of a force. */
    explicit ReferenceCoordinationCV(const CoordinationForce& force);
    virtual ~ReferenceCoordinationCV() {
    }
    /** Take the switching parameters (and per-pair ones) of a force with the same pairs. */
    void setParameters(const CoordinationForce& force);
    /** Throw OpenMMException if the force's groups or periodicity differ from this CV's. */
    void checkPairsUnchanged(const CoordinationForce& force) const;
    /** Check the groups' positions for NaN and record the Context's box. */
    virtual void prepare(OpenMM::ContextImpl& context);
    /**
     * The CV: the sum of s over the pairs, or the particle function of the per-atom coordination
     * numbers; if gradient is not NULL (and sized), add dcv/dx to it.
     */
    virtual double compute(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const;
    /** The per-atom coordination numbers c_i, one per entry of group A (one-group and two-group modes). */
    virtual std::vector<double> computeCoordinationNumbers(const std::vector<OpenMM::Vec3>& pos) const;
    /**
     * The particle function of the per-atom coordination numbers; if gradient is not NULL (and
     * sized), add its gradient: sum over pairs of (dF/dc_a + dF/dc_b) ds/dx (b's term in one-group mode only).
     */
    virtual double computeParticleFunction(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const;
    /** The pairs closer than maxDistance (nm) counted in numBins bins of equal width. */
    virtual std::vector<long long> computeHistogram(const std::vector<OpenMM::Vec3>& pos, int numBins, double maxDistance) const;
protected:
    /** The displacement from particle i to j (nearest image when periodic) and its length r. */
    OpenMM::Vec3 displacement(const std::vector<OpenMM::Vec3>& pos, int i, int j, double& r) const;
    /**
     * The displacement from particle i to j (nearest image when periodic) and its square r2,
     * inline for the CPU kernels' loops: the reduction of OpenMM's getDeltaRPeriodic, and beyond
     * half the smallest width of a triclinic box the search of the neighboring images.
     */
    OpenMM::Vec3 squaredDisplacement(const std::vector<OpenMM::Vec3>& pos, int i, int j, double& r2) const {
        OpenMM::Vec3 d = pos[j]-pos[i];
        if (periodic) {
            d -= box[2]*std::floor(d[2]/box[2][2]+0.5);
            d -= box[1]*std::floor(d[1]/box[1][1]+0.5);
            d -= box[0]*std::floor(d[0]/box[0][0]+0.5);
        }
        r2 = d.dot(d);
        if (triclinic && r2 > halfMinWidth*halfMinWidth)
            d = nearestNeighborImage(d, r2);
        return d;
    }
    /** The switching values of pair k of a pair list with per-pair parameters, the common ones otherwise. */
    const CoordinationSwitching::Pair& pairValues(int k) const {
        return pairSwitches.empty() ? switching->getCommon() : pairSwitches[k];
    }
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, triclinic;
    OpenMM::Vec3 box[3];
    double halfMinWidth;
    std::unique_ptr<CoordinationSwitching> switching;
    /** The function of the per-atom coordination numbers (NULL for PairSum). */
    std::unique_ptr<CoordinationParticleFunction> particleFunction;
    /** The power k of r in each pair's term of a coordination number, s(r) r^k (0: none). */
    double distancePower;
    /**
     * A pair's term of a coordination number, s(r) r^k, and its derivative with respect to r. Two
     * particles at the same place (r = 0) add 0 with a derivative of 0, as in PLUMED, whose contact
     * matrix leaves out pairs closer than epsilon (r^k has no derivative there for k <= 1).
     */
    double pairTerm(double r, double& dtdr) const {
        double dsdr;
        double s = switching->evaluate(r, switching->getCommon(), dsdr);
        if (distancePower == 0.0) {
            dtdr = dsdr;
            return s;
        }
        double rk = std::pow(r, distancePower);
        dtdr = dsdr*rk+(s == 0.0 || r == 0.0 ? 0.0 : distancePower*s*rk/r);
        return s*rk;
    }
private:
    /**
     * Call f(a, b, i, j) for each pair that adds to a coordination number: a indexes group A and
     * b the neighbours (group A itself in one-group mode, then a < b and the pair adds to both
     * c_a and c_b; group B in two-group mode, pairs of identical particles skipped); i and j are
     * the particles.
     */
    template <class F>
    void forEachCenterPair(F f) const;
    /** The nearest of a reduced displacement's 27 images in a triclinic box (r2 in and out). */
    OpenMM::Vec3 nearestNeighborImage(OpenMM::Vec3 reduced, double& r2) const;
    template <class F>
    void forEachPair(F f) const;
    /** The values of each pair of a pair list with per-pair parameters (empty otherwise). */
    std::vector<CoordinationSwitching::Pair> pairSwitches;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_CV_H_*/
