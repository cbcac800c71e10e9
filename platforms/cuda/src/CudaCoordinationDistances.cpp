#include "CudaCoordinationDistances.h"
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

class CudaCoordinationDistances::ReorderListener : public ComputeContext::ReorderListener {
public:
    ReorderListener(CudaCoordinationDistances& owner) : owner(owner) {
    }
    void execute() {
        owner.uploadAtoms();
    }
private:
    CudaCoordinationDistances& owner;
};

CudaCoordinationDistances::CudaCoordinationDistances(CudaContext& cu) : cu(cu) {
    // Never empty, so that the chain rule always has a pointer.
    atoms.initialize<int>(cu, 2, "coordinationDistanceAtoms");
    atoms.upload(vector<int>(2, 0));
    cu.addReorderListener(new ReorderListener(*this));
}

void CudaCoordinationDistances::set(const vector<int>& indices, const vector<CoordinationDistance>& distances) {
    this->indices = indices;
    this->distances = distances;
    if (atoms.getSize() < 2*distances.size())
        atoms.resize(2*distances.size());
    uploadAtoms();
}

void CudaCoordinationDistances::uploadAtoms() {
    if (distances.empty())
        return;
    // Atoms are reordered (rarely, between steps): the sorted index of each particle, from the host's copy of the order.
    const vector<int>& order = cu.getAtomIndex();
    vector<int> sorted(order.size());
    for (int i = 0; i < order.size(); i++)
        sorted[order[i]] = i;
    vector<int> values(atoms.getSize(), 0);
    for (int j = 0; j < distances.size(); j++) {
        values[2*j] = sorted[distances[j].particle1];
        values[2*j+1] = sorted[distances[j].particle2];
    }
    atoms.upload(values);
}

void CudaCoordinationDistances::addToChainRule(CudaCoordinationModulePart& chainRule, const vector<int>& indices,
        const vector<CoordinationDistance>& distances) {
    if (distances.empty())
        return;
    // Rows of {CV index, component, periodic} (kernels/chainrule.cu).
    string rows;
    for (int j = 0; j < distances.size(); j++) {
        const CoordinationDistance& d = distances[j];
        rows += string(j > 0 ? ", " : "")+"{"+to_string(indices[j])+", "+to_string(d.component)+", "+(d.usePeriodic ? "1" : "0")+"}";
    }
    chainRule.defines["NUM_DISTANCES"] = to_string(distances.size());
    chainRule.defines["DISTANCE_CVS"] = "{"+rows+"}";
}
