#ifndef REFERENCE_COORDINATION_CV_H_
#define REFERENCE_COORDINATION_CV_H_

#include "CoordinationForce.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/Vec3.h"
#include "openmm/internal/ContextImpl.h"
#include <functional>
#include <memory>
#include <vector>

namespace CoordinationPlugin {

/**
 * One coordination CV on the Reference platform: its pairs, images and switching function, the
 * sum over pairs and its gradient. The CoordinationForce kernel uses one, the
 * CoordinationBiasForce kernel one per CV.
 */
class ReferenceCoordinationCV {
public:
    /** Take the pairs, periodicity and switching parameters of a force. */
    explicit ReferenceCoordinationCV(const CoordinationForce& force);
    /** Take the switching parameters (and per-pair ones) of a force with the same pairs. */
    void setParameters(const CoordinationForce& force);
    /** Throw OpenMMException if the force's groups or periodicity differ from this CV's. */
    void checkPairsUnchanged(const CoordinationForce& force) const;
    /** Check the groups' positions for NaN and record the Context's box. */
    void prepare(OpenMM::ContextImpl& context);
    /** Sum s over the pairs; if gradient is not NULL (and sized), add dcv/dx to it. */
    double compute(const std::vector<OpenMM::Vec3>& pos, std::vector<OpenMM::Vec3>* gradient) const;
    /** Call f(r) with the distance of every pair (nearest image when periodic). */
    void forEachDistance(const std::vector<OpenMM::Vec3>& pos, const std::function<void(double)>& f) const;
private:
    template <class F>
    void forEachPair(F f) const;
    OpenMM::Vec3 displacement(const std::vector<OpenMM::Vec3>& pos, int i, int j, double& r) const;
    CoordinationForce::Mode mode;
    std::vector<int> groupA, groupB;
    bool periodic, triclinic;
    OpenMM::Vec3 box[3];
    double halfMinWidth;
    std::unique_ptr<CoordinationSwitching> switching;
    /** The values of each pair of a pair list with per-pair parameters (empty otherwise). */
    std::vector<CoordinationSwitching::Pair> pairSwitches;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_CV_H_*/
