/* A test of the CUDA CoordinationBiasForce kernel, included by the CUDA test main after the shared
 * test body: each CV of a bias takes the pair kernel of its own size and box (tiles, a pair list,
 * cell lists, neighbour lists), as CudaCalcCoordinationBiasForceKernel::describeLastEvaluation()
 * reports it; testBiasAgainstReference() of the shared body checks the same force's values. */
#include "CudaCoordinationKernels.h"
#include "internal/CoordinationBiasForceImpl.h"

/** Reaches a bias force's implementation in a Context (Force::getImplInContext() is protected). */
struct BiasImplAccess : public CoordinationBiasForce {
    static CoordinationBiasForceImpl& get(const CoordinationBiasForce& force, Context& context) {
        ForceImpl& (Force::*getImpl)(Context&) const = &BiasImplAccess::getImplInContext;
        return dynamic_cast<CoordinationBiasForceImpl&>((force.*getImpl)(context));
    }
};

void testBiasPathPerCV() {
    System system;
    vector<Vec3> positions;
    Vec3 box[3];
    CoordinationBiasForce* bias = largeBias(system, positions, box);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    context.getState(State::Energy | State::Forces);
    string paths = BiasImplAccess::get(*bias, context).getKernel().getAs<CudaCalcCoordinationBiasForceKernel>().describeLastEvaluation();
    cout << "    " << paths << endl;
    for (string part : {"tiles: kernel=tiles", "pairs: kernel=pairs", "cells: kernel=cells", "lists: kernel=lists"})
        if (paths.find(part) == string::npos)
            throw OpenMMException("The paths '"+paths+"' lack '"+part+"'");
}

void runCudaBiasPathTests() {
    RUN_TEST(testBiasPathPerCV);
}
