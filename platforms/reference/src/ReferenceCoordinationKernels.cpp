#include "ReferenceCoordinationKernels.h"
#include "internal/CoordinationForceImpl.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/reference/ReferenceForce.h"
#include "openmm/reference/ReferencePlatform.h"
#include "openmm/reference/ReferenceTabulatedFunction.h"
#include <algorithm>
#include <cmath>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static ReferencePlatform::PlatformData& getData(ContextImpl& context) {
    return *reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
}

template <class F>
void ReferenceCalcCoordinationForceKernel::forEachPair(F f) const {
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

void ReferenceCalcCoordinationForceKernel::initialize(const System& system, const CoordinationForce& force) {
    mode = force.getMode();
    groupA = force.getGroupA();
    groupB = force.getGroupB();
    periodic = force.usesPeriodicBoundaryConditions();
    histogramMaxDistance = 0.0;
    setParameters(force);
}

void ReferenceCalcCoordinationForceKernel::setParameters(const CoordinationForce& force) {
    switching.reset(new CoordinationSwitching(force));
    pairSwitches.clear();
    if (switching->hasPairParameters())
        for (int k = 0; k < groupA.size(); k++)
            pairSwitches.push_back(switching->forPair(k));
    map<string, Lepton::CustomFunction*> functions;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        functions[force.getTabulatedFunctionName(i)] = createReferenceTabulatedFunction(force.getTabulatedFunction(i));
    Lepton::ParsedExpression parsed = CoordinationForceImpl::parseEnergyExpression(force, functions);
    energyExpression = force.getEnergyExpression();
    energy = parsed.createProgram();
    energyDerivative = parsed.differentiate("cv").optimize().createProgram();
    for (auto& function : functions)
        delete function.second;
    parameterNames.clear();
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        parameterNames.push_back(force.getGlobalParameterName(i));
}

void ReferenceCalcCoordinationForceKernel::copyParametersToContext(ContextImpl& context, const CoordinationForce& force) {
    if (force.getMode() != mode || force.getGroupA() != groupA || force.getGroupB() != groupB)
        throw OpenMMException("updateParametersInContext: The groups of the CoordinationForce have changed; reinitialize the Context");
    if (force.usesPeriodicBoundaryConditions() != periodic)
        throw OpenMMException("updateParametersInContext: The periodic flag of the CoordinationForce has changed; reinitialize the Context");
    setParameters(force);
}

void ReferenceCalcCoordinationForceKernel::prepare(ContextImpl& context) {
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

Vec3 ReferenceCalcCoordinationForceKernel::displacement(const vector<Vec3>& pos, int i, int j, double& r) const {
    if (!periodic) {
        Vec3 d = pos[j]-pos[i];
        r = sqrt(d.dot(d));
        return d;
    }
    Vec3 d = ReferenceForce::getDeltaRPeriodic(pos[i], pos[j], box);
    double r2 = d.dot(d);
    if (triclinic && r2 > halfMinWidth*halfMinWidth) {
        // Beyond half the smallest width the reduced image may not be the nearest: search its neighbors.
        Vec3 reduced = d;
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
    }
    r = sqrt(r2);
    return d;
}

double ReferenceCalcCoordinationForceKernel::computeCV(const vector<Vec3>& pos, vector<Vec3>* gradient) const {
    double cv = 0.0;
    int k = 0;
    forEachPair([&] (int i, int j) {
        double r, dsdr;
        Vec3 d = displacement(pos, i, j, r);
        cv += switching->evaluate(r, pairSwitches.empty() ? switching->getCommon() : pairSwitches[k++], dsdr);
        if (gradient != NULL && dsdr != 0.0) {
            Vec3 g = d*(dsdr/r);
            (*gradient)[j] += g;
            (*gradient)[i] -= g;
        }
    });
    return cv;
}

double ReferenceCalcCoordinationForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    prepare(context);
    const vector<Vec3>& pos = *getData(context).positions;
    vector<Vec3> gradient;
    if (includeForces)
        gradient.resize(pos.size());
    double cv = computeCV(pos, includeForces ? &gradient : NULL);
    if (!isfinite(cv))
        throw OpenMMException(CoordinationForceImpl::nonFiniteCollectiveVariableMessage(cv));
    for (int i = 0; i < gradient.size(); i++)
        if (!(isfinite(gradient[i][0]) && isfinite(gradient[i][1]) && isfinite(gradient[i][2])))
            throw OpenMMException(CoordinationForceImpl::nonFiniteCollectiveVariableMessage(cv, i));
    for (const string& name : parameterNames)
        energyVariables[name] = context.getParameter(name);
    energyVariables["cv"] = cv;
    double energyValue = energy.evaluate(energyVariables);
    double dEdcv = energyDerivative.evaluate(energyVariables);
    bool finite = (isfinite(energyValue) && isfinite(dEdcv));
    for (int i = 0; finite && i < gradient.size(); i++) {
        Vec3 force = gradient[i]*dEdcv;
        finite = (isfinite(force[0]) && isfinite(force[1]) && isfinite(force[2]));
    }
    if (!finite)
        throw OpenMMException(CoordinationForceImpl::nonFiniteEnergyMessage(energyExpression, energyVariables, energyValue, dEdcv));
    if (includeForces) {
        vector<Vec3>& forces = *getData(context).forces;
        for (int i = 0; i < forces.size(); i++)
            forces[i] -= gradient[i]*dEdcv;
    }
    return energyValue;
}

double ReferenceCalcCoordinationForceKernel::computeCollectiveVariable(ContextImpl& context) {
    prepare(context);
    return computeCV(*getData(context).positions, NULL);
}

vector<long long> ReferenceCalcCoordinationForceKernel::computePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    prepare(context);
    const vector<Vec3>& pos = *getData(context).positions;
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

void ReferenceCalcCoordinationForceKernel::accumulatePairHistogram(ContextImpl& context, int numBins, double maxDistance) {
    vector<long long> counts = computePairHistogram(context, numBins, maxDistance);
    if (histogram.size() != numBins || histogramMaxDistance != maxDistance)
        histogram.assign(numBins, 0);
    histogramMaxDistance = maxDistance;
    for (int k = 0; k < numBins; k++)
        histogram[k] += counts[k];
}

vector<long long> ReferenceCalcCoordinationForceKernel::getAccumulatedPairHistogram(ContextImpl& context) {
    return histogram;
}

void ReferenceCalcCoordinationForceKernel::clearPairHistogram(ContextImpl& context) {
    fill(histogram.begin(), histogram.end(), 0);
}
