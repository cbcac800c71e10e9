#include "CudaCoordinationBondedChainRule.h"
#include "CudaCoordinationProgram.h"
#include "openmm/common/BondedUtilities.h"

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

CudaCoordinationBondedChainRule::CudaCoordinationBondedChainRule(CudaContext& cu, const vector<CudaCoordinationCV*>& cvs,
        CudaArray& state, int forceGroup) {
    int numCVs = cvs.size(), entries = 0;
    for (CudaCoordinationCV* cv : cvs)
        if (cv != NULL)
            entries += cv->getNumSlots();
    if (entries > MaxEntries)
        return;
    uploaded.assign(4*numCVs, 0);
    targets.initialize<long long>(cu, uploaded.size(), "coordinationBondedTargets");
    targets.upload(uploaded);
    BondedUtilities& bonded = cu.getBondedUtilities();
    bonded.addPrefixCode(CudaCoordinationProgram::getBondedChainRuleSource());
    string targetsName = bonded.addArgument(targets, "long long");
    string stateName = bonded.addArgument(state, "double");
    for (int k = 0; k < numCVs; k++) {
        if (cvs[k] == NULL)
            continue;
        // One "bond" an entry, of the slot's particle at the start: an entry whose force is zero adds
        // zero there, so that those additions spread over the atoms.
        vector<vector<int> > atoms(cvs[k]->getNumSlots());
        for (int slot = 0; slot < atoms.size(); slot++)
            atoms[slot] = {cvs[k]->getParticle(slot)};
        bonded.addInteraction(atoms, getInteractionSource(targetsName, stateName, k, numCVs), forceGroup);
    }
    registered = true;
}

string CudaCoordinationBondedChainRule::getInteractionSource(const string& targetsName, const string& stateName, int k, int numCVs) {
    return "real3 force1 = CoordinationBondedChainRule::bondedChainRuleForce("+targetsName+"+"+to_string(4*k)+", "+stateName+"+"+
            to_string(numCVs+k)+", index, &atom1);\n";
}

void CudaCoordinationBondedChainRule::setTargets(const vector<CudaCoordinationCV*>& cvs, bool gradients) {
    if (!registered)
        return;
    vector<long long> values(uploaded.size(), 0);
    for (int k = 0; k < cvs.size(); k++)
        if (cvs[k] != NULL && gradients) {
            CudaCoordinationCV::ChainRuleTarget target = cvs[k]->getChainRuleTarget();
            values[4*k] = (long long) target.gradient;
            values[4*k+1] = (long long) target.groupAtoms;
            values[4*k+2] = (long long) target.entrySlot;
            values[4*k+3] = target.numSlots;
        }
    if (values != uploaded) {
        // Seldom (a new path or buffer): a copy in the Context's stream (the driver stages pageable
        // memory at once), ordered after the bonded kernels before it and before those after it.
        uploaded = values;
        targets.uploadSubArray(uploaded.data(), 0, uploaded.size(), false);
    }
}
