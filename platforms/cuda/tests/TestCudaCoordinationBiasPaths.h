/* Tests of the CUDA CoordinationBiasForce kernel, included by the CUDA test main after the shared
 * test body: each CV of a bias takes the pair kernel of its own size and box (tiles, a pair list,
 * cell lists, neighbour lists), as CudaCalcCoordinationBiasForceKernel::describeLastEvaluation()
 * reports it, and with every such path the bias agrees with the Reference platform. */
#include "CudaCoordinationKernels.h"
#include "internal/CoordinationBiasForceImpl.h"

/** Reaches a bias force's implementation in a Context (Force::getImplInContext() is protected). */
struct BiasImplAccess : public CoordinationBiasForce {
    static CoordinationBiasForceImpl& get(const CoordinationBiasForce& force, Context& context) {
        ForceImpl& (Force::*getImpl)(Context&) const = &BiasImplAccess::getImplInContext;
        return dynamic_cast<CoordinationBiasForceImpl&>((force.*getImpl)(context));
    }
};

/** Evaluate a bias in a new Context and assert that each CV took the path named in parts. */
static void assertBiasPaths(System& system, CoordinationBiasForce& bias, const vector<Vec3>& positions, const vector<string>& parts) {
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    context.getState(State::Energy | State::Forces);
    string paths = BiasImplAccess::get(bias, context).getKernel().getAs<CudaCalcCoordinationBiasForceKernel>().describeLastEvaluation();
    cout << "    " << paths << endl;
    for (const string& part : parts)
        if (paths.find(part) == string::npos)
            throw OpenMMException("The paths '"+paths+"' lack '"+part+"'");
}

/**
 * In a system of 30,000 particles, each CV takes the pair kernel its size asks for: the two halves
 * ("cells", 2.25e8 pairs, 30,000 particles) neighbour lists of two groups; without lists, cells.
 */
void testBiasPathPerCV() {
    System system;
    vector<Vec3> positions;
    Vec3 box[3];
    CoordinationBiasForce* bias = largeBias(system, positions, box, 30000, 9.0);
    assertBiasPaths(system, *bias, positions, {"tiles: kernel=tiles", "pairs: kernel=pairs", "cells: kernel=lists", "lists: kernel=lists"});
    ScopedEnvironment noLists("COORDINATION_NEIGHBOR_LIST", "0");
    assertBiasPaths(system, *bias, positions, {"tiles: kernel=tiles", "pairs: kernel=pairs", "cells: kernel=cells", "lists: kernel=cells"});
}

/**
 * Over 2,000 particles the cells CV would take tiles: on a forced grid it takes cells (by sorted
 * index for the chain rule) and agrees with Reference, with lists and tiles beside it.
 */
void testBiasCellsAgainstReference() {
    ScopedEnvironment grid("COORDINATION_CELL_GRID", "1,1,1,1");
    System system;
    vector<Vec3> positions;
    Vec3 box[3];
    CoordinationBiasForce* bias = largeBias(system, positions, box, 2000, 4.0);
    assertBiasPaths(system, *bias, positions, {"tiles: kernel=tiles", "pairs: kernel=pairs", "cells: kernel=cells", "lists: kernel=lists"});
    compareBiasWithReference(system, bias, positions);
}

/**
 * The CVs on tiles of one program (the same code: here the same switching function, r0 apart) share
 * the chained tile launch, whose last block runs the chain rule (kernels/chained.cu); a CV of another
 * program takes a launch of its own. Against Reference, as created and after a move.
 */
void testBiasChainedTileCVs() {
    const int numParticles = 2000;
    System system;
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    const double edge = 4.0;
    system.setDefaultPeriodicBoxVectors(Vec3(edge, 0, 0), Vec3(0, edge, 0), Vec3(0, 0, edge));
    vector<Vec3> positions = randomPositions(numParticles, edge, 29);
    vector<int> ten, otherTen, thousand;
    for (int i = 0; i < 1020; i++)
        (i < 10 ? ten : i < 20 ? otherTen : thousand).push_back(i);
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(a-20)^2 + k*(b-10)^2 + 1e-2*k*c^2");
    bias->addGlobalParameter("k", 2.0);
    CoordinationForce* a = new CoordinationForce(ten, thousand);
    CoordinationForce* b = new CoordinationForce(otherTen, thousand);
    b->setR0(0.4);
    CoordinationForce* c = new CoordinationForce(ten, thousand);
    c->setSwitchingFunction(CoordinationForce::Gaussian);
    for (CoordinationForce* cv : {a, b, c})
        cv->setUsesPeriodicBoundaryConditions(true);
    bias->addCollectiveVariable("a", a);
    bias->addCollectiveVariable("b", b);
    bias->addCollectiveVariable("c", c);
    system.addForce(bias);
    // By default a and b share the launch; with COORDINATION_CHAINED_TILE_CVS=1 only the first of them.
    for (int shared : {4, 1}) {
        ScopedEnvironment sharing("COORDINATION_CHAINED_TILE_CVS", to_string(shared));
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        context.setPositions(positions);
        context.getState(State::Energy | State::Forces);
        string paths = BiasImplAccess::get(*bias, context).getKernel().getAs<CudaCalcCoordinationBiasForceKernel>().describeLastEvaluation();
        cout << "    COORDINATION_CHAINED_TILE_CVS=" << shared << ": " << paths << endl;
        size_t ofB = paths.find("; b: "), ofC = paths.find("; c: ");
        ASSERT(ofB != string::npos && ofC != string::npos);
        ASSERT(paths.substr(0, ofB).find("chainRule=chained") != string::npos);
        ASSERT((paths.substr(ofB, ofC-ofB).find("chainRule=chained") != string::npos) == (shared > 1));
        ASSERT(paths.substr(ofC).find("chainRule=chained") == string::npos);
        compareBiasWithReference(system, bias, positions);
    }
}

void runCudaBiasPathTests() {
    RUN_TEST(testBiasPathPerCV);
    RUN_TEST(testBiasCellsAgainstReference);
    RUN_TEST(testBiasChainedTileCVs);
}
