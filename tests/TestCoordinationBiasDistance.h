/* Tests of distance CVs in a CoordinationBiasForce (addDistance(): PLUMED's DISTANCE, with
 * COMPONENTS and NOPBC): values against hand formulas, forces against the hand chain rule and
 * finite differences, without a box, in a rectangular and a triclinic one, with and without the
 * nearest image; beside coordination numbers; updateParametersInContext; errors. On every platform. */

// Uses the helpers of TestCoordinationBias.h (biasCV, biasPositions, biasContext, aloneCV, ASSERT_BIAS_ERROR) and
// TestCoordinationCVStatistics.h (HandStatistics, assertStatistics): included after both.

/** A distance CV's description for the hand formulas. */
struct HandDistance {
    int particle1, particle2, component;
    bool usePeriodic;
};

/** A distance's value and gradient (one entry per particle) by hand: r = r2 - r1, nearest image by brute force. */
static double handDistance(const HandDistance& d, const vector<Vec3>& positions, const Vec3* box, vector<Vec3>& gradient) {
    Vec3 r = positions[d.particle2]-positions[d.particle1];
    if (d.usePeriodic && box != NULL) {
        // Where two images are nearly as near, a platform's rounding may pick either: the test avoids that.
        ASSERT(imageGap(r, box) > 1e-3);
        r = nearestImage(r, box);
    }
    gradient.assign(positions.size(), Vec3());
    Vec3 dvalue;
    double value;
    if (d.component < 0) {
        value = sqrt(r.dot(r));
        dvalue = r/value;
    }
    else {
        value = r[d.component];
        dvalue[d.component] = 1.0;
    }
    gradient[d.particle1] -= dvalue;
    gradient[d.particle2] += dvalue;
    return value;
}

/** The Context's energy and forces against the hand ones: the forces -sum_k dE/dcv_k times the gradient of CV k. */
static void assertChainRule(Context& context, double energy, const vector<vector<Vec3> >& gradients, const vector<double>& dEdc) {
    vector<Vec3> forces(biasParticles);
    for (int k = 0; k < dEdc.size(); k++)
        for (int i = 0; i < biasParticles; i++)
            forces[i] -= gradients[k][i]*dEdc[k];
    assertState(context, energy, forces);
}

/**
 * A bias of one coordination number c1 (biasCV(0)) and five distances: the length d between 2 and 9,
 * its NOPBC twin dn, and the components dx, dy, dz between 4 and 7 (dy without the nearest image),
 * in an energy that couples them; its CVs, energy and forces against the hand formulas, and forces
 * against finite differences. boxType: 0 no box (nothing periodic), 1 rectangular, 2 triclinic.
 */
void testBiasDistances() {
    for (int boxType = 0; boxType < 3; boxType++) {
        bool periodic = (boxType != 0);
        CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(d-0.8)^2 + 3*dx + 2*dy^2 - dz*c1 + 0.7*dn*c1 + 0.2*c1^2");
        bias->addGlobalParameter("k", 40.0);
        vector<HandDistance> distances = {{2, 9, -1, true}, {2, 9, -1, false}, {4, 7, 0, true}, {4, 7, 1, false}, {4, 7, 2, true}};
        vector<string> names = {"d", "dn", "dx", "dy", "dz"};
        ASSERT_EQUAL(0, bias->addDistance("d", 2, 9));
        ASSERT_EQUAL(1, bias->addCollectiveVariable("c1", biasCV(0, periodic)));
        for (int j = 1; j < distances.size(); j++) {
            const HandDistance& d = distances[j];
            ASSERT_EQUAL(j+1, bias->addDistance(names[j], d.particle1, d.particle2, d.component, d.usePeriodic && periodic));
        }
        ASSERT_EQUAL(6, bias->getNumCollectiveVariables());
        ASSERT_EQUAL(5, bias->getNumDistances());
        ASSERT(bias->isDistance(0) && !bias->isDistance(1) && bias->isDistance(2));
        // Without a box, the first distance still asks for the nearest image (the force then uses
        // periodic boundary conditions, as a CustomBondForce with usePeriodic would).
        ASSERT_EQUAL(true, bias->usesPeriodicBoundaryConditions());
        vector<Vec3> positions;
        Vec3 box[3];
        biasPositions(positions, box, boxType);
        if (periodic) {
            // Particles 7 and 9 (in no coordination CV) one box vector away: the nearest image
            // differs from the plain difference, which the distances without it keep.
            positions[9] += box[0]+box[1];
            positions[7] -= box[2];
        }
        else {
            // A box the nearest image of d does not change: the one the first distance sees.
            box[0] = Vec3(20, 0, 0);
            box[1] = Vec3(0, 20, 0);
            box[2] = Vec3(0, 0, 20);
        }
        System system;
        VerletIntegrator integrator(0.001);
        unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
        // The hand values: c1 alone in a Context of its own, the distances by hand.
        vector<double> values(6);
        vector<vector<Vec3> > gradients(6);
        values[1] = aloneCV(bias->getCollectiveVariable(1), positions, box, gradients[1]);
        int order[] = {0, 2, 3, 4, 5};
        for (int j = 0; j < distances.size(); j++) {
            HandDistance d = distances[j];
            d.usePeriodic = d.usePeriodic && periodic;
            values[order[j]] = handDistance(d, positions, (periodic || j == 0 ? box : NULL), gradients[order[j]]);
        }
        vector<double> found = bias->getCollectiveVariableValues(*context);
        ASSERT_EQUAL(6, found.size());
        for (int k = 0; k < 6; k++)
            ASSERT_EQUAL_TOL(values[k], found[k], tolerance);
        if (periodic) {
            // The nearest image matters here: the plain difference is not the nearest one.
            Vec3 plain = positions[9]-positions[2];
            ASSERT(fabs(sqrt(plain.dot(plain))-values[0]) > 0.5 && fabs(values[2]-values[0]) > 0.5);
            ASSERT(fabs(values[5]-(positions[7][2]-positions[4][2])) > 0.5);
        }
        double d = values[0], c1 = values[1], dn = values[2], dx = values[3], dy = values[4], dz = values[5];
        double energy = 0.5*40*(d-0.8)*(d-0.8) + 3*dx + 2*dy*dy - dz*c1 + 0.7*dn*c1 + 0.2*c1*c1;
        vector<double> dEdc = {40*(d-0.8), -dz+0.7*dn+0.4*c1, 0.7*c1, 3.0, 4*dy, -c1};
        assertChainRule(*context, energy, gradients, dEdc);
        assertFiniteDifferences(*context, positions, "CoordinationBiasForce with distances, box type "+to_string(boxType));
    }
}

/**
 * A triclinic box where the image OpenMM's reduced form gives is not the nearest (the pair is
 * beyond half the smallest box width): the length and the three components of the distance are
 * those of the shortest image (PLUMED's DISTANCE, and a CoordinationForce's pairs), 0.44 nm
 * shorter than the reduced one; energy and forces against the hand formulas and finite differences.
 * withCoordination: beside a coordination number c1, or the distances alone (a bias of no
 * CoordinationForce, which the chain rule evaluates by itself).
 */
static void checkDistancesBeyondHalfWidth(bool withCoordination) {
    CoordinationBiasForce* bias = new CoordinationBiasForce(withCoordination ? "d + 2*dx - dy + 0.5*dz^2 + 0.1*c1" : "d + 2*dx - dy + 0.5*dz^2");
    vector<HandDistance> distances = {{10, 11, -1, true}, {10, 11, 0, true}, {10, 11, 1, true}, {10, 11, 2, true}};
    vector<string> names = {"d", "dx", "dy", "dz"};
    if (withCoordination)
        bias->addCollectiveVariable("c1", biasCV(0, true));
    for (int j = 0; j < distances.size(); j++)
        bias->addDistance(names[j], distances[j].particle1, distances[j].particle2, distances[j].component, true);
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    box[0] = Vec3(2.0, 0, 0);
    box[1] = Vec3(0.9, 1.0, 0);
    box[2] = Vec3(0.8, 0.45, 1.2);
    positions[10] = Vec3(1.35, 1.01, 0.76);
    positions[11] = Vec3(0.39, 0.22, 1.36);
    Vec3 reduced = positions[11]-positions[10];
    for (int k = 2; k >= 0; k--)
        reduced -= box[k]*floor(reduced[k]/box[k][k]+0.5);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    int first = (withCoordination ? 1 : 0), numCVs = first+4;
    vector<double> values(numCVs);
    vector<vector<Vec3> > gradients(numCVs);
    if (withCoordination)
        values[0] = aloneCV(bias->getCollectiveVariable(0), positions, box, gradients[0]);
    for (int j = 0; j < distances.size(); j++)
        values[first+j] = handDistance(distances[j], positions, box, gradients[first+j]);
    ASSERT(sqrt(reduced.dot(reduced))-values[first] > 0.4);
    for (int k = 0; k < 3; k++)
        ASSERT(fabs(reduced[k]-values[first+k+1]) > 0.1);
    vector<double> found = bias->getCollectiveVariableValues(*context);
    ASSERT_EQUAL(numCVs, found.size());
    for (int k = 0; k < numCVs; k++)
        ASSERT_EQUAL_TOL(values[k], found[k], tolerance);
    double d = values[first], dx = values[first+1], dy = values[first+2], dz = values[first+3];
    vector<double> dEdc = {1.0, 2.0, -1.0, dz};
    double energy = d + 2*dx - dy + 0.5*dz*dz;
    if (withCoordination) {
        dEdc.insert(dEdc.begin(), 0.1);
        energy += 0.1*values[0];
    }
    assertChainRule(*context, energy, gradients, dEdc);
    assertFiniteDifferences(*context, positions, string("CoordinationBiasForce with distances beyond half the box width")
            +(withCoordination ? "" : ", distances alone"));
}

void testBiasDistanceBeyondHalfWidth() {
    checkDistancesBeyondHalfWidth(true);
}

/**
 * A bias of distances and no coordination number: in the triclinic box above, and without a box
 * (a NOPBC length and component, the System not periodic), the CVs, energy and forces against the
 * hand formulas and finite differences.
 */
void testBiasDistancesAlone() {
    checkDistancesBeyondHalfWidth(false);
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(d-0.8)^2 + 3*dz");
    bias->addGlobalParameter("k", 40.0);
    vector<HandDistance> distances = {{2, 9, -1, false}, {4, 7, 2, false}};
    bias->addDistance("d", 2, 9, -1, false);
    bias->addDistance("dz", 4, 7, 2, false);
    ASSERT_EQUAL(false, bias->usesPeriodicBoundaryConditions());
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 0);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    vector<double> values(2);
    vector<vector<Vec3> > gradients(2);
    for (int j = 0; j < 2; j++)
        values[j] = handDistance(distances[j], positions, NULL, gradients[j]);
    vector<double> found = bias->getCollectiveVariableValues(*context);
    for (int k = 0; k < 2; k++)
        ASSERT_EQUAL_TOL(values[k], found[k], tolerance);
    assertChainRule(*context, 0.5*40*(values[0]-0.8)*(values[0]-0.8) + 3*values[1], gradients, {40*(values[0]-0.8), 3.0});
    assertFiniteDifferences(*context, positions, "CoordinationBiasForce of distances alone, no box");
}

/**
 * setDistanceParameters() and updateParametersInContext(): other particles and components of a
 * distance with the nearest image; one without it keeps its particles (OpenMM keeps them in one
 * molecule from the Context's creation on), and a change of them or of usePeriodic is refused.
 */
void testBiasDistanceUpdate() {
    CoordinationBiasForce* bias = new CoordinationBiasForce("c1 + 10*d + dn^2");
    bias->addCollectiveVariable("c1", biasCV(1, true));
    bias->addDistance("d", 0, 5);
    bias->addDistance("dn", 4, 9, -1, false);
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    vector<Vec3> gradient;
    positions[9] += box[0];
    context->setPositions(positions);
    for (HandDistance d : vector<HandDistance>{{0, 5, -1, true}, {3, 11, 2, true}, {9, 4, 0, true}, {8, 1, -1, true}}) {
        bias->setDistanceParameters(1, d.particle1, d.particle2, d.component, d.usePeriodic);
        bias->updateParametersInContext(*context);
        double expected = handDistance(d, positions, box, gradient);
        ASSERT_EQUAL_TOL(expected, bias->getCollectiveVariableValues(*context)[1], tolerance);
        int particle1, particle2, component;
        bool usePeriodic;
        bias->getDistanceParameters(1, particle1, particle2, component, usePeriodic);
        ASSERT(particle1 == d.particle1 && particle2 == d.particle2 && component == d.component && usePeriodic == d.usePeriodic);
    }
    vector<Vec3> gradientN;
    ASSERT_EQUAL_TOL(handDistance({4, 9, -1, false}, positions, box, gradientN), bias->getCollectiveVariableValues(*context)[2], tolerance);
    assertFiniteDifferences(*context, positions, "CoordinationBiasForce with an updated distance");
    bias->setDistanceParameters(2, 4, 9, 0, false);
    bias->updateParametersInContext(*context);
    ASSERT_EQUAL_TOL(positions[9][0]-positions[4][0], bias->getCollectiveVariableValues(*context)[2], tolerance);
    bias->setDistanceParameters(1, 8, 1, -1, false);
    ASSERT_BIAS_ERROR(bias->updateParametersInContext(*context), "reinitialize the Context");
    bias->setDistanceParameters(1, 8, 1, -1, true);
    bias->setDistanceParameters(2, 4, 10, 0, false);
    ASSERT_BIAS_ERROR(bias->updateParametersInContext(*context), "reinitialize the Context");
}

/** Bad distances: refused at once with the class, the parameter and the value. */
void testBiasDistanceErrors() {
    CoordinationBiasForce bias("c1 + d");
    bias.addGlobalParameter("k", 1.0);
    ASSERT_EQUAL(0, bias.addCollectiveVariable("c1", biasCV(0, false)));
    ASSERT_BIAS_ERROR(bias.addDistance("d", -1, 3), "particle1 must be >= 0, got -1");
    ASSERT_BIAS_ERROR(bias.addDistance("d", 3, -2), "particle2 must be >= 0, got -2");
    ASSERT_BIAS_ERROR(bias.addDistance("d", 4, 4), "particle1 and particle2 must differ, got 4 twice");
    ASSERT_BIAS_ERROR(bias.addDistance("d", 0, 1, 3), "component must be -1 (the length), 0, 1 or 2 (x, y, z), got 3");
    ASSERT_BIAS_ERROR(bias.addDistance("d", 0, 1, -2), "got -2");
    ASSERT_BIAS_ERROR(bias.addDistance("c1", 0, 1), "already the name of a collective variable: \"c1\"");
    ASSERT_BIAS_ERROR(bias.addDistance("k", 0, 1), "already the name of a global parameter: \"k\"");
    ASSERT_BIAS_ERROR(bias.addDistance("d.x", 0, 1), "not a valid variable name: \"d.x\"");
    ASSERT_EQUAL(1, bias.getNumCollectiveVariables());
    ASSERT_EQUAL(1, bias.addDistance("d", 0, 1));
    unique_ptr<CoordinationForce> other(biasCV(1, false));
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("d", other.get()), "\"d\"");
    ASSERT_BIAS_ERROR(bias.getCollectiveVariable(1), "\"d\" (index 1) is a distance");
    ASSERT_BIAS_ERROR(bias.setDistanceParameters(1, 0, 1, 5, true), "got 5");
    ASSERT_BIAS_ERROR(bias.setDistanceParameters(0, 0, 1, 0, true), "\"c1\" (index 0) is a CoordinationForce, not a distance");
    int particle1, particle2, component;
    bool usePeriodic;
    ASSERT_BIAS_ERROR(bias.getDistanceParameters(0, particle1, particle2, component, usePeriodic), "not a distance");
    ASSERT_BIAS_ERROR(bias.isDistance(2), "index out of range: 2");
}

/** A distance's particle past the System's: refused when a Context is created (after the platform's context exists). */
void testBiasDistanceOutOfRange() {
    CoordinationBiasForce* bias = new CoordinationBiasForce("c1 + d");
    bias->addCollectiveVariable("c1", biasCV(0, false));
    bias->addDistance("d", 3, biasParticles);
    System system;
    for (int i = 0; i < biasParticles; i++)
        system.addParticle(1.0);
    system.addForce(bias);
    VerletIntegrator integrator(0.001);
    ASSERT_BIAS_ERROR(Context(system, integrator, platform, properties), "distance \"d\": particle2 out of range: 12 (the System has 12 particles)");
}

/**
 * Distances in molecular dynamics against the Reference platform: 64 LJ particles with PME, a bias
 * of a coordination number and three distances (the length with and without the nearest image, a
 * component), 300 steps (GPU platforms reorder atoms every 250 steps and wrap molecules into the
 * box: a distance must follow its particles, and one without the nearest image keep their plain
 * difference), then the bias's CVs, energy and forces against the Reference at the same positions.
 */
void testBiasDistancesInDynamics() {
    const int side = 4, numParticles = side*side*side;
    System system;
    vector<Vec3> positions = latticeSystem(system, side, 11);
    vector<int> group;
    for (int i = 0; i < numParticles; i += 3)
        group.push_back(i);
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(d-1)^2 + 0.5*k*(dn-1.1)^2 + 2*dx + 0.1*k*(c-6)^2");
    bias->addGlobalParameter("k", 20.0);
    CoordinationForce* c = new CoordinationForce(group);
    c->setR0(0.5);
    c->setDMax(1.0);
    c->setUsesPeriodicBoundaryConditions(true);
    bias->addDistance("d", 5, 58);
    bias->addCollectiveVariable("c", c);
    bias->addDistance("dn", 21, 42, -1, false);
    bias->addDistance("dx", 63, 0, 0);
    bias->setForceGroup(1);
    system.addForce(bias);
    DynamicsAgainstReference run(system, positions);
    const State& state = run.state;
    const State& expected = run.expected;
    vector<double> expectedCVs = bias->getCollectiveVariableValues(*run.reference), foundCVs = bias->getCollectiveVariableValues(*run.context);
    for (int k = 0; k < 4; k++)
        ASSERT_EQUAL_TOL(expectedCVs[k], foundCVs[k], tolerance);
    // The plain difference of dn's particles, from the positions as OpenMM returns them (unwrapped).
    Vec3 plain = state.getPositions()[42]-state.getPositions()[21];
    ASSERT_EQUAL_TOL(sqrt(plain.dot(plain)), foundCVs[2], tolerance);
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), state.getPotentialEnergy(), 10*tolerance);
    assertForcesEqual(expected.getForces(), state.getForces(), 10*forceTolerance());
}

/**
 * The running statistics of the CVs (setCVStatisticsStride(), OPES's adaptive sigma) with distances
 * among them: each MD step's CVs, distances included, in the hand update of
 * TestCoordinationCVStatistics.h (on CUDA, the chain rule's update on the device).
 */
void testBiasDistanceStatistics() {
    const int stride = 3, steps = 8;
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 2);
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(d-0.6)^2 + 0.5*k*(c1-1)^2 + k*dy^2");
    bias->addGlobalParameter("k", 50.0);
    bias->addDistance("d", 2, 9);
    bias->addCollectiveVariable("c1", biasCV(1, true));
    bias->addDistance("dy", 4, 7, 1, false);
    bias->setCVStatisticsStride(stride);
    System system;
    LangevinMiddleIntegrator integrator(300.0, 5.0, 0.002);
    integrator.setRandomNumberSeed(13);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    HandStatistics expected;
    expected.mean.assign(3, 0.0);
    expected.m2.assign(3, 0.0);
    context->getState(State::Energy);
    for (int step = 1; step <= steps; step++) {
        integrator.step(1);
        expected.add(bias->getCollectiveVariableValues(*context), stride);
        context->getState(State::Energy | State::Forces);
    }
    assertStatistics(*bias, *context, expected);
    ASSERT(expected.count == steps && expected.m2[0] > 0 && expected.m2[2] > 0);
}

void runBiasDistanceTests() {
    RUN_TEST(testBiasDistances);
    RUN_TEST(testBiasDistanceBeyondHalfWidth);
    RUN_TEST(testBiasDistancesAlone);
    RUN_TEST(testBiasDistanceUpdate);
    RUN_TEST(testBiasDistanceErrors);
    RUN_TEST(testBiasDistanceStatistics);
    if (platform.getName() != referencePlatform().getName())
        RUN_TEST(testBiasDistancesInDynamics);
    RUN_TEST_LEAKING_CONTEXT(testBiasDistanceOutOfRange);
}
