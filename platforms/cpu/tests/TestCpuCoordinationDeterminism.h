/* The CPU platform's own tests: its forces are the same from one evaluation to the next and from
 * one Context to another for a given thread count (each thread sums its own share, added in thread
 * order), in each mode, over cells and without. Uses the globals of the test main. */

/** A System of particles at random in a periodic box with one force of the given mode. */
static void determinismSystem(System& system, CoordinationForce::Mode mode, double dmax, int numParticles, double edge) {
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(Vec3(edge, 0, 0), Vec3(0, edge, 0), Vec3(0, 0, edge));
    vector<int> a, b;
    for (int i = 0; i < numParticles; i++)
        (i%3 == 0 || mode == CoordinationForce::OneGroup ? a : b).push_back(i);
    if (mode == CoordinationForce::PairList)
        a.resize(b.size());
    CoordinationForce* force = (mode == CoordinationForce::OneGroup ? new CoordinationForce(a) : new CoordinationForce(a, b, mode == CoordinationForce::PairList));
    force->setR0(0.3);
    force->setDMax(dmax);
    force->setUsesPeriodicBoundaryConditions(true);
    force->setEnergyExpression("10*cv");
    system.addForce(force);
}

static void testSameForcesEveryTime() {
    const int numParticles = 900;
    const double edge = 3.0;
    vector<Vec3> positions = randomPositions(numParticles, edge, 77);
    for (CoordinationForce::Mode mode : {CoordinationForce::OneGroup, CoordinationForce::TwoGroups, CoordinationForce::PairList})
        for (double dmax : {0.9, (double) INFINITY}) {
            System system;
            determinismSystem(system, mode, dmax, numParticles, edge);
            VerletIntegrator integrator1(0.001), integrator2(0.001), integrator3(0.001);
            Context context1(system, integrator1, platform, properties), context2(system, integrator2, platform, properties);
            Context reference(system, integrator3, referencePlatform());
            context1.setPositions(positions);
            context2.setPositions(positions);
            reference.setPositions(positions);
            State first = context1.getState(State::Energy | State::Forces);
            State again = context1.getState(State::Energy | State::Forces);
            State other = context2.getState(State::Energy | State::Forces);
            State expected = reference.getState(State::Energy | State::Forces);
            ASSERT(first.getPotentialEnergy() > 1.0);
            ASSERT_EQUAL(first.getPotentialEnergy(), again.getPotentialEnergy());
            ASSERT_EQUAL(first.getPotentialEnergy(), other.getPotentialEnergy());
            for (int i = 0; i < numParticles; i++)
                for (int k = 0; k < 3; k++) {
                    ASSERT_EQUAL(first.getForces()[i][k], again.getForces()[i][k]);
                    ASSERT_EQUAL(first.getForces()[i][k], other.getForces()[i][k]);
                }
            ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), first.getPotentialEnergy(), tolerance);
            assertForcesEqual(expected.getForces(), first.getForces(), forceTolerance());
        }
}

void runCpuDeterminismTests() {
    RUN_TEST(testSameForcesEveryTime);
}
