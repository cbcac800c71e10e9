/* Tests of the three pair modes and of periodic boundary conditions (rectangular and triclinic
 * boxes, nearest image), against sums over explicitly listed pairs. */

#include "CoordinationTestUtilities.h"

/** Evaluate a force on the platform under test and compare it with explicit pairs and r0 = 0.3, n = 6, m = 12. */
static void checkPairs(CoordinationForce* force, const vector<pair<int, int> >& pairs, const vector<Vec3>& positions) {
    System system;
    for (int i = 0; i < positions.size(); i++)
        system.addParticle(1.0);
    force->setR0(0.3);
    force->setDMax(INFINITY);
    system.addForce(force);
    ASSERT_EQUAL(pairs.size(), force->getNumPairs());
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    vector<Vec3> gradient;
    double cv = handCV(pairs, positions, NULL, ofR(0.3, 0.0, rational(6, 12)), gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
}

void testOneGroup() {
    // An unsorted group that leaves particles 1 and 3 out: each unordered pair once.
    CoordinationForce* force = new CoordinationForce({4, 0, 2, 5});
    ASSERT_EQUAL(CoordinationForce::OneGroup, force->getMode());
    checkPairs(force, {{4, 0}, {4, 2}, {4, 5}, {0, 2}, {0, 5}, {2, 5}}, modePositions());
}

void testTwoGroups() {
    // Particle 2 is in both groups: the pair (2, 2) is skipped; particle 5 is in neither.
    CoordinationForce* force = new CoordinationForce({0, 1, 2}, {2, 3, 4});
    ASSERT_EQUAL(CoordinationForce::TwoGroups, force->getMode());
    checkPairs(force, {{0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}}, modePositions());
    // The same list as both groups counts each unordered pair twice.
    checkPairs(new CoordinationForce({0, 1, 2}, {0, 1, 2}), {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}}, modePositions());
}

void testPairList() {
    // Element by element; a pair may repeat and a particle may appear in many pairs.
    CoordinationForce* force = new CoordinationForce({0, 3, 0, 4}, {1, 1, 1, 2}, true);
    ASSERT_EQUAL(CoordinationForce::PairList, force->getMode());
    checkPairs(force, {{0, 1}, {3, 1}, {0, 1}, {4, 2}}, modePositions());
}

/**
 * Evaluate a periodic one-group force over every particle in a box and compare with the
 * nearest-image sum. The System's default box differs from the Context's, which must be used.
 */
static void checkPeriodic(const Vec3* box, const vector<Vec3>& positions, const function<void(CoordinationForce&)>& configure, const HandSwitching& s) {
    int numParticles = positions.size();
    System system;
    vector<int> group;
    vector<pair<int, int> > pairs;
    for (int i = 0; i < numParticles; i++) {
        system.addParticle(1.0);
        group.push_back(i);
        for (int j = i+1; j < numParticles; j++)
            pairs.push_back(make_pair(i, j));
    }
    // The Context's box overrides the default; GPU platforms need a triclinic default for a triclinic box.
    bool triclinic = (box[1][0] != 0 || box[2][0] != 0 || box[2][1] != 0);
    if (triclinic)
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    else
        system.setDefaultPeriodicBoxVectors(Vec3(5, 0, 0), Vec3(0, 5, 0), Vec3(0, 0, 5));
    CoordinationForce* force = new CoordinationForce(group);
    configure(*force);
    force->setUsesPeriodicBoundaryConditions(true);
    ASSERT(force->usesPeriodicBoundaryConditions());
    system.addForce(force);
    ASSERT(system.usesPeriodicBoundaryConditions());
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPeriodicBoxVectors(box[0], box[1], box[2]);
    context.setPositions(positions);
    // No pair that contributes a force has two images at nearly the same distance.
    for (const pair<int, int>& p : pairs) {
        Vec3 d = nearestImage(positions[p.second]-positions[p.first], box);
        double dsdr;
        s(sqrt(d.dot(d)), dsdr);
        ASSERT(dsdr == 0.0 || imageGap(d, box) > 1e-3);
    }
    vector<Vec3> gradient, directGradient;
    double cv = handCV(pairs, positions, box, s, gradient);
    double direct = handCV(pairs, positions, NULL, s, directGradient);
    ASSERT(fabs(cv-direct) > 0.1); // The configuration does test the images.
    assertState(context, cv, scaledForces(gradient, 1.0));
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
}

void testPeriodicRectangular() {
    // Particles outside the box and pairs across its faces; Exp has no cutoff, so every pair counts.
    Vec3 box[3] = {Vec3(1.6, 0, 0), Vec3(0, 1.8, 0), Vec3(0, 0, 2.0)};
    vector<Vec3> positions = {Vec3(0.05, 0.1, 0.1), Vec3(1.5, 1.75, 1.95), Vec3(-1.5, 0.3, 4.1), Vec3(0.8, 0.9, 1.0),
                              Vec3(3.3, -1.6, 0.2), Vec3(0.4, 1.25, -0.3), Vec3(1.1, 0.2, 1.7)};
    checkPeriodic(box, positions, [] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Exp); f.setR0(0.25); },
                  ofR(0.25, 0.0, [] (double x, double& dsdx) { dsdx = -exp(-x); return exp(-x); }));
}

void testPeriodicTriclinic() {
    // A cutoff below half the smallest width: every pair's image within dmax is unambiguous.
    Vec3 box[3];
    triclinicBox(box);
    checkPeriodic(box, randomPositions(20, 4.0, 11), [] (CoordinationForce& f) { f.setR0(0.25); f.setDMax(0.8); },
                  withCutoff(0.8, true, ofR(0.25, 0.0, rational(6, 12))));
}

void testTriclinicNearestImageBeyondHalfWidth() {
    // No cutoff: pairs farther apart than half the smallest width must still use the nearest
    // image, which is not always the one a single reduction by the box vectors gives.
    Vec3 box[3];
    triclinicBox(box);
    vector<Vec3> positions = randomPositions(12, 4.0, 5);
    int differ = 0;
    for (int i = 0; i < positions.size(); i++)
        for (int j = i+1; j < positions.size(); j++) {
            Vec3 d = positions[j]-positions[i];
            d -= box[2]*round(d[2]/box[2][2]);
            d -= box[1]*round(d[1]/box[1][1]);
            d -= box[0]*round(d[0]/box[0][0]);
            Vec3 nearest = nearestImage(d, box);
            if (d.dot(d) > nearest.dot(nearest)+1e-6)
                differ++;
        }
    ASSERT(differ > 0);
    checkPeriodic(box, positions, [] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Gaussian); f.setR0(0.6); },
                  ofR(0.6, 0.0, [] (double x, double& dsdx) { dsdx = -x*exp(-x*x/2); return exp(-x*x/2); }));
}

void runModeTests() {
    RUN_TEST(testOneGroup);
    RUN_TEST(testTwoGroups);
    RUN_TEST(testPairList);
    RUN_TEST(testPeriodicRectangular);
    RUN_TEST(testPeriodicTriclinic);
    RUN_TEST(testTriclinicNearestImageBeyondHalfWidth);
}
