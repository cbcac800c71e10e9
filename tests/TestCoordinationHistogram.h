/* Tests of the pair-distance histogram: exact counts for hand-built configurations in every
 * mode and with periodic images, and the running (accumulated) histogram. */

#include "CoordinationTestUtilities.h"

/**
 * Five particles on a line (not along an axis) at 0, 0.15, 0.42, 0.91 and 1.37 nm. Their ten
 * distances, none near a multiple of 0.1 nm:
 * (0,1) 0.15, (0,2) 0.42, (0,3) 0.91, (0,4) 1.37, (1,2) 0.27, (1,3) 0.76, (1,4) 1.22, (2,3) 0.49, (2,4) 0.95, (3,4) 0.46.
 */
static vector<Vec3> linePositions(double scale = 1.0) {
    Vec3 u = Vec3(1, 2, 2)/3.0;
    vector<Vec3> positions;
    for (double x : {0.0, 0.15, 0.42, 0.91, 1.37})
        positions.push_back(u*(x*scale)+Vec3(0.3, -0.2, 0.1));
    return positions;
}

/** A Context on the platform under test for a force over the line particles (the System takes the force). */
static Context* histogramContext(System& system, VerletIntegrator& integrator, CoordinationForce* force, const vector<Vec3>& positions) {
    for (int i = 0; i < positions.size(); i++)
        system.addParticle(1.0);
    system.addForce(force);
    Context* context = new Context(system, integrator, platform, properties);
    context->setPositions(positions);
    return context;
}

static void checkHistogram(CoordinationForce* force, int numBins, double maxDistance, const vector<long long>& expected) {
    System system;
    VerletIntegrator integrator(0.001);
    Context* context = histogramContext(system, integrator, force, linePositions());
    vector<long long> counts = force->getPairHistogram(*context, numBins, maxDistance);
    ASSERT_EQUAL_CONTAINERS(expected, counts);
    delete context;
}

void testPairHistogramModes() {
    // One group: bins of 0.1 nm up to 1 nm; 1.37 and 1.22 are beyond the last bin.
    checkHistogram(new CoordinationForce({0, 1, 2, 3, 4}), 10, 1.0, {0, 1, 1, 0, 3, 0, 0, 1, 0, 2});
    checkHistogram(new CoordinationForce({0, 1, 2, 3, 4}), 5, 0.5, {0, 1, 1, 0, 3});
    checkHistogram(new CoordinationForce({0, 1, 2, 3, 4}), 1, 2.0, {10});
    // Two groups sharing particle 2: (2, 2) is not a pair.
    checkHistogram(new CoordinationForce({0, 1, 2}, {2, 3, 4}), 10, 1.0, {0, 0, 1, 0, 2, 0, 0, 1, 0, 2});
    // Pair list (0,1) (3,4) (0,1) (4,0): the repeated pair counts twice, (4,0) is beyond the range.
    checkHistogram(new CoordinationForce({0, 3, 0, 4}, {1, 4, 1, 0}, true), 10, 1.0, {0, 2, 0, 0, 1, 0, 0, 0, 0, 0});
}

void testPairHistogramPeriodic() {
    // Two pairs that are close only through the box faces: 0.05 nm and sqrt(0.12^2 + 0.07^2) = 0.139 nm.
    vector<Vec3> positions = {Vec3(0.02, 0.6, 0.7), Vec3(0.97, 0.6, 0.7), Vec3(0.5, 1.15, 1.35), Vec3(0.5, 0.07, 0.02)};
    for (bool periodic : {true, false}) {
        System system;
        for (int i = 0; i < 4; i++)
            system.addParticle(1.0);
        system.setDefaultPeriodicBoxVectors(Vec3(1.0, 0, 0), Vec3(0, 1.2, 0), Vec3(0, 0, 1.4));
        CoordinationForce* force = new CoordinationForce({0, 1, 2, 3});
        force->setUsesPeriodicBoundaryConditions(periodic);
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        context.setPositions(positions);
        vector<long long> expected = (periodic ? vector<long long>{1, 1, 0, 0, 0, 0} : vector<long long>(6, 0));
        ASSERT_EQUAL_CONTAINERS(expected, force->getPairHistogram(context, 6, 0.6));
    }
}

void testAccumulatedHistogram() {
    System system;
    VerletIntegrator integrator(0.001);
    CoordinationForce* force = new CoordinationForce({0, 1, 2, 3, 4});
    Context* context = histogramContext(system, integrator, force, linePositions());
    ASSERT_EQUAL(0, force->getNumAccumulatedFrames(*context));
    ASSERT(force->getAccumulatedPairHistogram(*context).empty());
    vector<long long> first = {0, 1, 1, 0, 3, 0, 0, 1, 0, 2};
    // Halved distances: 0.075 0.21 0.455 0.685 0.135 0.38 0.61 0.245 0.475 0.23.
    vector<long long> second = {1, 1, 3, 1, 2, 0, 2, 0, 0, 0};
    force->accumulatePairHistogram(*context, 10, 1.0);
    context->setPositions(linePositions(0.5));
    ASSERT_EQUAL_CONTAINERS(second, force->getPairHistogram(*context, 10, 1.0));
    force->accumulatePairHistogram(*context, 10, 1.0);
    // A one-off histogram with other bins leaves the running one alone.
    force->getPairHistogram(*context, 3, 0.7);
    context->setPositions(linePositions());
    force->accumulatePairHistogram(*context, 10, 1.0);
    ASSERT_EQUAL(3, force->getNumAccumulatedFrames(*context));
    vector<long long> sum(10);
    for (int k = 0; k < 10; k++)
        sum[k] = 2*first[k]+second[k];
    ASSERT_EQUAL_CONTAINERS(sum, force->getAccumulatedPairHistogram(*context));
    // Reading back does not clear it.
    ASSERT_EQUAL_CONTAINERS(sum, force->getAccumulatedPairHistogram(*context));
    // Other bins need a reset first.
    ASSERT_COORDINATION_ERROR(force->accumulatePairHistogram(*context, 5, 1.0));
    ASSERT_COORDINATION_ERROR_NAMING(force->accumulatePairHistogram(*context, 10, 0.9), "maxDistance 0.9, but the running histogram has 10 and 1;");
    // Distances that differ beyond six digits are written with all of theirs.
    ASSERT_COORDINATION_ERROR_NAMING(force->accumulatePairHistogram(*context, 10, 1.0+1e-12), "maxDistance 1.0000000000010001, but the running histogram has 10 and 1;");
    ASSERT_EQUAL(3, force->getNumAccumulatedFrames(*context));
    force->resetPairHistogram(*context);
    ASSERT_EQUAL(0, force->getNumAccumulatedFrames(*context));
    ASSERT(force->getAccumulatedPairHistogram(*context).empty());
    force->accumulatePairHistogram(*context, 5, 0.5);
    ASSERT_EQUAL(1, force->getNumAccumulatedFrames(*context));
    ASSERT_EQUAL_CONTAINERS(vector<long long>({0, 1, 1, 0, 3}), force->getAccumulatedPairHistogram(*context));
    // Stepping the integrator does not touch the running histogram.
    integrator.step(1);
    ASSERT_EQUAL_CONTAINERS(vector<long long>({0, 1, 1, 0, 3}), force->getAccumulatedPairHistogram(*context));
    force->resetPairHistogram(*context);
    force->resetPairHistogram(*context);
    ASSERT_EQUAL(0, force->getNumAccumulatedFrames(*context));
    delete context;
}

void runHistogramTests() {
    RUN_TEST(testPairHistogramModes);
    RUN_TEST(testPairHistogramPeriodic);
    RUN_TEST(testAccumulatedHistogram);
}
