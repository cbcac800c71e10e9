#ifndef CUDA_COORDINATION_DISTANCES_H_
#define CUDA_COORDINATION_DISTANCES_H_

#include "CudaCoordinationModulePart.h"
#include "internal/CoordinationDistance.h"
#include "internal/windowsExportCoordination.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <vector>

namespace CoordinationPlugin {

/**
 * The distance CVs of a CoordinationBiasForce on CUDA (addDistance()). They have no pair kernel:
 * the chain rule computes each from the positions, by one thread, in the launch that evaluates
 * the energy expression, and adds its forces there (kernels/chainrule.cu). Their CV indices,
 * components and periodicity are compile-time constants of the chain rule; their particles are
 * an array of sorted indices, which this class updates when the Context reorders atoms.
 */
class OPENMM_EXPORT_COORDINATION CudaCoordinationDistances {
public:
    /** Allocate the array of particles (empty until set()) and follow the Context's reorderings. */
    explicit CudaCoordinationDistances(OpenMM::CudaContext& cu);
    /**
     * Use these distances, and upload their particles' sorted indices.
     *
     * @param indices    the index of each distance among the CVs of the expression
     * @param distances  the distances, in the order of indices
     */
    void set(const std::vector<int>& indices, const std::vector<CoordinationDistance>& distances);
    /** The index of each distance among the CVs. */
    const std::vector<int>& getIndices() const {
        return indices;
    }
    /** The distances, in the order of getIndices(). */
    const std::vector<CoordinationDistance>& getDistances() const {
        return distances;
    }
    /** The sorted indices of the particles of distance j at 2j and 2j+1 (the chain rule's distanceAtoms). */
    OpenMM::CudaArray& getAtoms() {
        return atoms;
    }
    /**
     * Give the chain rule's module part its distance CVs, as compile-time constants (NUM_DISTANCES
     * and DISTANCE_CVS: rows of CV index, component, periodic): a change of a distance's
     * component or periodicity compiles the chain rule again, one of its particles does not.
     *
     * @param chainRule  the part (CudaCoordinationProgram::getChainRulePart())
     * @param indices    the index of each distance among the CVs of the expression
     * @param distances  the distances, in the order of indices
     */
    static void addToChainRule(CudaCoordinationModulePart& chainRule, const std::vector<int>& indices,
            const std::vector<CoordinationDistance>& distances);
private:
    class ReorderListener;
    /** Upload the sorted index of every distance's particles (CudaContext::getAtomIndex() inverted). */
    void uploadAtoms();
    OpenMM::CudaContext& cu;
    std::vector<int> indices;
    std::vector<CoordinationDistance> distances;
    OpenMM::CudaArray atoms;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_DISTANCES_H_*/
