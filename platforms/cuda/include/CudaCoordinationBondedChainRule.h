#ifndef CUDA_COORDINATION_BONDED_CHAIN_RULE_H_
#define CUDA_COORDINATION_BONDED_CHAIN_RULE_H_

#include "CudaCoordinationCV.h"
#include "internal/windowsExportCoordination.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <vector>

namespace CoordinationPlugin {

/**
 * The last step of the chain rule, -dE/dcv_k times each CV's gradient added to the forces, in
 * OpenMM's bonded kernel (BondedUtilities), which every step launches after the forces' own
 * kernels: no launch of the plugin's own for it. Each CV of at most MaxEntries gradient entries in
 * all is one interaction of the bonded kernel, an entry of its gradient a "bond" of one particle
 * (kernels/bondedchainrule.cu): the entry's force, from the gradient and dE/dcv_k as the
 * evaluation left them in device memory, goes to the particle the entry belongs to now, and the
 * entry is cleared. A gradient that another launch scattered (applyChainRule() and the chained
 * kernels clear what they add) reads zero there and adds nothing. The interactions are registered
 * before the Context is initialized; where the CVs' gradients are (buffers can be reallocated, the
 * cell kernel's entries are in sorted order) is an array on the device, uploaded where it changed.
 */
class OPENMM_EXPORT_COORDINATION CudaCoordinationBondedChainRule {
public:
    /** The most gradient entries (slots of all the CVs) that go through the bonded kernel. */
    static const int MaxEntries = 50000;
    /**
     * Register one interaction per CV with cu's BondedUtilities, unless the CVs have more than
     * MaxEntries slots in all (then none: covers() is false). Call from the kernel's initialize().
     *
     * @param cvs         the CVs of the energy (NULL: a distance, which has no gradient)
     * @param state       the energy's state on the device (kernels/energy.cu): dE/dcv_k at numCVs+k
     * @param forceGroup  the force group of the owning force
     */
    CudaCoordinationBondedChainRule(OpenMM::CudaContext& cu, const std::vector<CudaCoordinationCV*>& cvs, OpenMM::CudaArray& state,
            int forceGroup);
    /**
     * The code of CV k's interaction in the bonded kernel (kernels/bondedchainrule.cu): the force on
     * atom1 from entry `index`, with the names BondedUtilities gave the targets and the state.
     */
    static std::string getInteractionSource(const std::string& targetsName, const std::string& stateName, int k, int numCVs);
    /** Whether the bonded kernel adds the forces of every CV's gradient. */
    bool covers() const {
        return registered;
    }
    /**
     * Point the bonded kernel at each CV's gradient as the launches so far left it (none where
     * gradients is false: the buffers may then be smaller than the slots), uploading only what changed.
     */
    void setTargets(const std::vector<CudaCoordinationCV*>& cvs, bool gradients);
private:
    bool registered = false;
    /** Per CV: the gradient, groupAtoms and entrySlot pointers and the number of slots, as on the device. */
    OpenMM::CudaArray targets;
    std::vector<long long> uploaded;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_BONDED_CHAIN_RULE_H_*/
