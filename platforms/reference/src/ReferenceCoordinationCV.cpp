#include "ReferenceCoordinationCV.h"
#include "openmm/OpenMMException.h"
#include "openmm/reference/ReferencePlatform.h"
#include <algorithm>
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static ReferencePlatform::PlatformData& getData(ContextImpl& context) {
    return *reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
}

ReferenceCoordinationCV::ReferenceCoordinationCV(const CoordinationForce& force) : mode(force.getMode()), groupA(force.getGroupA()),
        groupB(force.getGroupB()), periodic(force.usesPeriodicBoundaryConditions()), triclinic(false), halfMinWidth(0.0),
        distancePower(0.0) {
    setParameters(force);
}

template <class F>
void ReferenceCoordinationCV::forEachPair(F f) const {
    if (mode == CoordinationForce::OneGroup) {
        for (int i = 0; i < groupA.size(); i++)
            for (int j = i+1; j < groupA.size(); j++)
                f(groupA[i], groupA[j]);
    }
    else if (mode == CoordinationForce::PairList) {
        for (int k = 0; k < groupA.size(); k++)
            f(groupA[k], groupB[k]);
    }
    else {
        for (int i : groupA)
            for (int j : groupB)
                if (i != j)
                    f(i, j);
    }
}

template <class F>
void ReferenceCoordinationCV::forEachCenterPair(F f) const {
    if (mode == CoordinationForce::OneGroup) {
        for (int a = 0; a < groupA.size(); a++)
            for (int b = a+1; b < groupA.size(); b++)
                f(a, b, groupA[a], groupA[b]);
    }
    else {
        for (int a = 0; a < groupA.size(); a++)
            for (int b = 0; b < groupB.size(); b++)
                if (groupA[a] != groupB[b])
                    f(a, b, groupA[a], groupB[b]);
    }
}

void ReferenceCoordinationCV::setParameters(const CoordinationForce& force) {
    switching.reset(new CoordinationSwitching(force));
    particleFunction.reset(force.usesParticleFunction() ? new CoordinationParticleFunction(force) : NULL);
    distancePower = force.getDistancePower();
    pairSwitches.clear();
    if (switching->hasPairParameters())
        for (int k = 0; k < groupA.size(); k++)
            pairSwitches.push_back(switching->forPair(k));
}

void ReferenceCoordinationCV::checkPairsUnchanged(const CoordinationForce& force) const {
    if (force.getMode() != mode || force.getGroupA() != groupA || force.getGroupB() != groupB)
        throw OpenMMException("updateParametersInContext: The groups of the CoordinationForce have changed; reinitialize the Context");
    if (force.usesPeriodicBoundaryConditions() != periodic)
        throw OpenMMException("updateParametersInContext: The periodic flag of the CoordinationForce has changed; reinitialize the Context");
}

void ReferenceCoordinationCV::prepare(ContextImpl& context) {
    const vector<Vec3>& pos = *getData(context).positions;
    for (const vector<int>* group : {&groupA, &groupB})
        for (int i : *group)
            if (!(isfinite(pos[i][0]) && isfinite(pos[i][1]) && isfinite(pos[i][2])))
                throw OpenMMException("CoordinationForce: the position of particle "+to_string(i)+" is not finite (NaN or infinity)");
    if (!periodic)
        return;
    const Vec3* vectors = getData(context).periodicBoxVectors;
    for (int k = 0; k < 3; k++)
        box[k] = vectors[k];
    triclinic = (box[1][0] != 0 || box[2][0] != 0 || box[2][1] != 0);
    double volume = box[0][0]*box[1][1]*box[2][2];
    Vec3 bc = box[1].cross(box[2]), ca = box[2].cross(box[0]), ab = box[0].cross(box[1]);
    halfMinWidth = 0.5*volume/max(sqrt(bc.dot(bc)), max(sqrt(ca.dot(ca)), sqrt(ab.dot(ab))));
}

Vec3 ReferenceCoordinationCV::displacement(const vector<Vec3>& pos, int i, int j, double& r) const {
    double r2;
    Vec3 d = squaredDisplacement(pos, i, j, r2);
    r = sqrt(r2);
    return d;
}

Vec3 ReferenceCoordinationCV::nearestNeighborImage(Vec3 reduced, double& r2) const {
    // Beyond half the smallest width the reduced image may not be the nearest: search its neighbors.
    Vec3 d = reduced;
    for (int a = -1; a <= 1; a++)
        for (int b = -1; b <= 1; b++)
            for (int c = -1; c <= 1; c++) {
                Vec3 image = reduced+box[0]*a+box[1]*b+box[2]*c;
                double image2 = image.dot(image);
                if (image2 < r2) {
                    r2 = image2;
                    d = image;
                }
            }
    return d;
}

vector<double> ReferenceCoordinationCV::computeCoordinationNumbers(const vector<Vec3>& pos) const {
    vector<double> c(groupA.size(), 0.0);
    bool both = (mode == CoordinationForce::OneGroup);
    forEachCenterPair([&] (int a, int b, int i, int j) {
        double r, dsdr;
        displacement(pos, i, j, r);
        double s = pairTerm(r, dsdr);
        c[a] += s;
        if (both)
            c[b] += s;
    });
    return c;
}

double ReferenceCoordinationCV::computeParticleFunction(const vector<Vec3>& pos, vector<Vec3>* gradient) const {
    vector<double> dFdc;
    double value = particleFunction->evaluate(computeCoordinationNumbers(pos), dFdc);
    if (gradient == NULL)
        return value;
    bool both = (mode == CoordinationForce::OneGroup);
    forEachCenterPair([&] (int a, int b, int i, int j) {
        double r, dsdr;
        Vec3 d = displacement(pos, i, j, r);
        pairTerm(r, dsdr);
        double weight = dFdc[a]+(both ? dFdc[b] : 0.0);
        if (dsdr != 0.0 && weight != 0.0) {
            Vec3 g = d*(weight*dsdr/r);
            (*gradient)[j] += g;
            (*gradient)[i] -= g;
        }
    });
    return value;
}

double ReferenceCoordinationCV::compute(const vector<Vec3>& pos, vector<Vec3>* gradient) const {
    if (particleFunction)
        return computeParticleFunction(pos, gradient);
    double cv = 0.0;
    int k = 0;
    forEachPair([&] (int i, int j) {
        double r, dsdr;
        Vec3 d = displacement(pos, i, j, r);
        cv += switching->evaluate(r, pairValues(k++), dsdr);
        if (gradient != NULL && dsdr != 0.0) {
            Vec3 g = d*(dsdr/r);
            (*gradient)[j] += g;
            (*gradient)[i] -= g;
        }
    });
    return cv;
}

vector<long long> ReferenceCoordinationCV::computeHistogram(const vector<Vec3>& pos, int numBins, double maxDistance) const {
    vector<long long> counts(numBins, 0);
    double binWidth = maxDistance/numBins;
    forEachPair([&] (int i, int j) {
        double r;
        displacement(pos, i, j, r);
        if (r < maxDistance)
            counts[min(numBins-1, (int) (r/binWidth))]++;
    });
    return counts;
}
