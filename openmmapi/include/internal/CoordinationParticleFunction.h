#ifndef OPENMM_COORDINATION_PARTICLE_FUNCTION_H_
#define OPENMM_COORDINATION_PARTICLE_FUNCTION_H_

#include "CoordinationForce.h"
#include "internal/CoordinationSwitching.h"
#include "internal/windowsExportCoordination.h"
#include <memory>
#include <vector>

namespace CoordinationPlugin {

/**
 * The function F(c_1, ..., c_N) of per-atom coordination numbers that a CoordinationForce with a
 * particle function is (PLUMED's SUM, MEAN, MORE_THAN, LESS_THAN, BETWEEN, MIN, MAX, LOWEST,
 * HIGHEST, MOMENTS of COORDINATIONNUMBER), in double precision: the single C++ home of these
 * formulas. The threshold of MoreThan and LessThan is a CoordinationSwitching (Rational), the
 * same code as s(r). The Reference and CPU kernels and CoordinationForce::evaluateParticleFunction()
 * use it.
 */
class OPENMM_EXPORT_COORDINATION CoordinationParticleFunction {
public:
    /** Capture the particle function and its parameters of a force (PairSum is refused). */
    explicit CoordinationParticleFunction(const CoordinationForce& force);
    /**
     * Evaluate F and its gradient.
     *
     * @param c          the coordination numbers (not empty)
     * @param[out] dFdc  dF/dc_i, resized to c's size
     * @return F(c)
     */
    double evaluate(const std::vector<double>& c, std::vector<double>& dFdc) const;
    /**
     * Configure a force as the threshold of MoreThan and LessThan: PLUMED's RATIONAL of c with the
     * threshold parameters of force, so that CoordinationSwitching gives it the switching
     * function's own code (cutoff and stretch included). The CUDA kernels take their parameters
     * from it too.
     *
     * @param force          the force with a particle function
     * @param[out] threshold a new CoordinationForce, configured here
     */
    static void configureThreshold(const CoordinationForce& force, CoordinationForce& threshold);
private:
    CoordinationForce::ParticleFunction function;
    double lower, upper, width, beta;
    int power;
    std::unique_ptr<CoordinationSwitching> threshold;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_PARTICLE_FUNCTION_H_*/
