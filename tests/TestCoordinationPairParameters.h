/* Tests of the per-pair weights and r0s of a pair list and of the Q (native contacts) switching
 * function: values and forces against sums written out here, finite differences, updates in a
 * Context, the defaults, and the errors. */

#include "CoordinationTestUtilities.h"

/** Q written out in r: 1/(1 + exp(beta (r - lambda ref))), 1 for r <= d0. */
static HandSwitching handQ(double beta, double lambda, double ref, double d0) {
    return [=] (double r, double& dsdr) {
        if (r <= d0) {
            dsdr = 0;
            return 1.0;
        }
        double e = exp(beta*(r-lambda*ref));
        dsdr = -beta*e/((1+e)*(1+e));
        return 1/(1+e);
    };
}

/** A pair list over numParticles random particles: pairs, weights in [0, 2), r0s in [0.25, 0.55) nm. */
struct RandomPairs {
    vector<int> a, b;
    vector<double> weights, r0s;
    vector<Vec3> positions;
};

static RandomPairs randomPairs(int numParticles, int numPairs, int seed) {
    OpenMM_SFMT::SFMT sfmt;
    OpenMM_SFMT::init_gen_rand(seed, sfmt);
    RandomPairs pairs;
    pairs.positions = randomPositions(numParticles, 1.6, seed);
    while (pairs.a.size() < numPairs) {
        int i = (int) (uniform(sfmt)*numParticles), j = (int) (uniform(sfmt)*numParticles);
        if (i == j)
            continue;
        pairs.a.push_back(i);
        pairs.b.push_back(j);
        pairs.weights.push_back(2*uniform(sfmt));
        pairs.r0s.push_back(0.25+0.3*uniform(sfmt));
    }
    return pairs;
}

/**
 * The weighted CV of a pair list and its gradient, each pair with its own switching function
 * (made by makeSwitching from the pair's r0), nearest image when box is not NULL.
 */
static double handPairCV(const RandomPairs& pairs, const Vec3* box, const function<HandSwitching(double r0)>& makeSwitching,
        vector<Vec3>& gradient) {
    double cv = 0.0;
    gradient.assign(pairs.positions.size(), Vec3());
    for (int k = 0; k < pairs.a.size(); k++) {
        vector<Vec3> pairGradient;
        double w = (pairs.weights.empty() ? 1.0 : pairs.weights[k]);
        cv += w*handCV({{pairs.a[k], pairs.b[k]}}, pairs.positions, box, makeSwitching(pairs.r0s[k]), pairGradient);
        for (int i = 0; i < gradient.size(); i++)
            gradient[i] += pairGradient[i]*w;
    }
    return cv;
}

/** Evaluate a pair-list force with per-pair parameters on the platform under test and compare it with the hand sum. */
static void checkPairParameters(CoordinationForce* force, const RandomPairs& pairs, const Vec3* box,
        const function<HandSwitching(double r0)>& makeSwitching, const string& label) {
    System system;
    for (int i = 0; i < pairs.positions.size(); i++)
        system.addParticle(1.0);
    if (box != NULL)
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    force->setUsesPeriodicBoundaryConditions(box != NULL);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(pairs.positions);
    vector<Vec3> gradient;
    double cv = handPairCV(pairs, box, makeSwitching, gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
    // The force's own evaluation of each pair agrees with the hand-written one.
    for (int k = 0; k < pairs.a.size(); k += 7)
        for (double r : {0.1, 0.33, 0.6, 0.95}) {
            double dsdr, expectedDsdr;
            double w = (pairs.weights.empty() ? 1.0 : pairs.weights[k]);
            double expected = w*makeSwitching(pairs.r0s[k])(r, expectedDsdr);
            ASSERT_EQUAL_TOL(expected, force->evaluatePairSwitchingFunction(k, r, dsdr), 1e-10);
            ASSERT_EQUAL_TOL(w*expectedDsdr, dsdr, 1e-9);
        }
    assertFiniteDifferences(context, pairs.positions, label);
}

void testPairWeightsAndR0s() {
    // Rational with its automatic cutoff, which follows each pair's r0 (PLUMED's short syntax per pair).
    RandomPairs pairs = randomPairs(14, 30, 11);
    CoordinationForce* rationalForce = new CoordinationForce();
    rationalForce->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    checkPairParameters(rationalForce, pairs, NULL, [] (double r0) {
        return withCutoff(r0*pow(1e-5, 1.0/(6-12)), true, ofR(r0, 0.0, rational(6, 12)));
    }, "Rational per pair");
    // Exp with d0 and a cutoff set with setDMax(): the same distance for every pair, each stretched there.
    CoordinationForce* expForce = new CoordinationForce();
    expForce->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    expForce->setSwitchingFunction(CoordinationForce::Exp);
    expForce->setD0(0.05);
    expForce->setDMax(1.1);
    checkPairParameters(expForce, pairs, NULL, [] (double r0) {
        return withCutoff(1.1, true, ofR(r0, 0.05, [] (double x, double& dsdx) { dsdx = -std::exp(-x); return std::exp(-x); }));
    }, "Exp per pair, dmax");
    // Gaussian, no stretch, in a triclinic box.
    Vec3 box[3];
    triclinicBox(box);
    CoordinationForce* gaussian = new CoordinationForce();
    gaussian->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    gaussian->setSwitchingFunction(CoordinationForce::Gaussian);
    gaussian->setDMax(0.9);
    gaussian->setStretch(false);
    checkPairParameters(gaussian, pairs, box, [] (double r0) {
        return withCutoff(0.9, false, ofR(r0, 0.0, [] (double x, double& dsdx) { dsdx = -x*std::exp(-0.5*x*x); return std::exp(-0.5*x*x); }));
    }, "Gaussian per pair, triclinic");
}

void testQPerPair() {
    // Q: r0s are the native distances (PLUMED's REF), beta and lambda the force's.
    RandomPairs pairs = randomPairs(14, 30, 12);
    CoordinationForce* q = new CoordinationForce();
    q->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    q->setSwitchingFunction(CoordinationForce::Q);
    q->setBeta(30.0);
    q->setLambda(1.5);
    checkPairParameters(q, pairs, NULL, [] (double r0) { return handQ(30.0, 1.5, r0, 0.0); }, "Q per pair");
    // The defaults (beta 50/nm, lambda 1.8), weights 1, d0 and a stretched cutoff, periodic.
    Vec3 box[3] = {Vec3(2.1, 0, 0), Vec3(0, 2.2, 0), Vec3(0, 0, 2.3)};
    RandomPairs unweighted = pairs;
    unweighted.weights.clear();
    CoordinationForce* stretched = new CoordinationForce();
    stretched->setPairs(pairs.a, pairs.b, {}, pairs.r0s);
    stretched->setSwitchingFunction(CoordinationForce::Q);
    stretched->setD0(0.08);
    stretched->setDMax(1.0);
    ASSERT_EQUAL(50.0, stretched->getBeta());
    ASSERT_EQUAL(1.8, stretched->getLambda());
    checkPairParameters(stretched, unweighted, box, [] (double r0) { return withCutoff(1.0, true, handQ(50.0, 1.8, r0, 0.08)); },
            "Q per pair, d0, dmax, periodic");
}

void testQInEveryMode() {
    // Without per-pair r0s Q uses the force's r0, in every mode (and the GPU's all-pairs, cell and list paths).
    vector<Vec3> positions = randomPositions(40, 1.5, 13);
    Vec3 box[3] = {Vec3(1.9, 0, 0), Vec3(0, 2.0, 0), Vec3(0, 0, 2.1)};
    for (int mode = 0; mode < 3; mode++)
        for (bool periodic : {false, true}) {
            System system;
            vector<int> all, half, rest;
            for (int i = 0; i < positions.size(); i++) {
                system.addParticle(1.0);
                all.push_back(i);
                (i < 20 ? half : rest).push_back(i);
            }
            system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
            CoordinationForce* force = (mode == 0 ? new CoordinationForce(all) : new CoordinationForce(half, rest, mode == 2));
            force->setSwitchingFunction(CoordinationForce::Q);
            force->setR0(0.4);
            force->setBeta(40.0);
            force->setLambda(1.6);
            if (periodic)
                force->setDMax(0.9);
            force->setUsesPeriodicBoundaryConditions(periodic);
            system.addForce(force);
            vector<pair<int, int> > pairs;
            forEachPair(*force, [&] (int i, int j) { pairs.push_back(make_pair(i, j)); });
            HandSwitching s = handQ(40.0, 1.6, 0.4, 0.0);
            if (periodic)
                s = withCutoff(0.9, true, s);
            vector<Vec3> gradient;
            double cv = handCV(pairs, positions, periodic ? box : NULL, s, gradient);
            VerletIntegrator integrator(0.001);
            Context context(system, integrator, platform, properties);
            context.setPositions(positions);
            assertState(context, cv, scaledForces(gradient, 1.0));
        }
}

void testPairParameterDefaults() {
    // Empty vectors, weights of 1 and r0s equal to the force's r0 all give the plain pair list.
    RandomPairs pairs = randomPairs(10, 25, 14);
    vector<double> ones(pairs.a.size(), 1.0), r0s(pairs.a.size(), 0.37);
    double expected = 0.0;
    for (int variant = 0; variant < 4; variant++) {
        System system;
        for (int i = 0; i < pairs.positions.size(); i++)
            system.addParticle(1.0);
        CoordinationForce* force = new CoordinationForce(pairs.a, pairs.b, true);
        force->setR0(0.37);
        if (variant == 1)
            force->setPairs(pairs.a, pairs.b, {}, {});
        if (variant == 2)
            force->setPairParameters(ones, {});
        if (variant == 3)
            force->setPairParameters(ones, r0s);
        ASSERT_EQUAL(variant >= 2, force->getUsesPairParameters());
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        context.setPositions(pairs.positions);
        double cv = force->getCollectiveVariableValue(context);
        if (variant == 0)
            expected = cv;
        else
            ASSERT_EQUAL_TOL(expected, cv, tolerance);
    }
    // New groups clear the parameters.
    CoordinationForce force;
    force.setPairs(pairs.a, pairs.b, ones, r0s);
    ASSERT(force.getUsesPairParameters());
    force.setGroups(pairs.a, pairs.b, true);
    ASSERT(!force.getUsesPairParameters());
    ASSERT(force.getPairWeights().empty() && force.getPairR0s().empty());
}

void testUpdatePairParameters() {
    // updateParametersInContext() changes weights, r0s, beta and lambda (on the GPU, without recompiling).
    RandomPairs pairs = randomPairs(12, 40, 15);
    System system;
    for (int i = 0; i < pairs.positions.size(); i++)
        system.addParticle(1.0);
    CoordinationForce* force = new CoordinationForce();
    force->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    force->setSwitchingFunction(CoordinationForce::Q);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(pairs.positions);
    vector<Vec3> gradient;
    double cv = handPairCV(pairs, NULL, [] (double r0) { return handQ(50.0, 1.8, r0, 0.0); }, gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
    RandomPairs changed = randomPairs(12, 40, 16);
    changed.a = pairs.a;
    changed.b = pairs.b;
    changed.positions = pairs.positions;
    force->setPairParameters(changed.weights, changed.r0s);
    force->setBeta(35.0);
    force->setLambda(1.5);
    force->updateParametersInContext(context);
    cv = handPairCV(changed, NULL, [] (double r0) { return handQ(35.0, 1.5, r0, 0.0); }, gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
    // From per-pair values back to none, and to them again.
    force->setPairParameters({}, {});
    force->updateParametersInContext(context);
    RandomPairs plain = changed;
    plain.weights.clear();
    plain.r0s.assign(plain.a.size(), force->getR0());
    cv = handPairCV(plain, NULL, [] (double r0) { return handQ(35.0, 1.5, r0, 0.0); }, gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
    force->setPairParameters(pairs.weights, {});
    force->setDMax(1.2);
    force->updateParametersInContext(context);
    plain.weights = pairs.weights;
    cv = handPairCV(plain, NULL, [] (double r0) { return withCutoff(1.2, true, handQ(35.0, 1.5, r0, 0.0)); }, gradient);
    assertState(context, cv, scaledForces(gradient, 1.0));
}

void testManyPairsAgainstReference() {
    // 20,000 pairs with weights and r0s, periodic, against the Reference platform.
    RandomPairs pairs = randomPairs(3000, 20000, 17);
    for (Vec3& p : pairs.positions)
        p *= 2.0;
    System system;
    for (int i = 0; i < pairs.positions.size(); i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(Vec3(3.2, 0, 0), Vec3(0, 3.2, 0), Vec3(0, 0, 3.2));
    CoordinationForce* force = new CoordinationForce();
    force->setPairs(pairs.a, pairs.b, pairs.weights, pairs.r0s);
    force->setSwitchingFunction(CoordinationForce::Q);
    force->setUsesPeriodicBoundaryConditions(true);
    force->setEnergyExpression("0.5*k*(cv-500)^2");
    force->addGlobalParameter("k", 0.01);
    system.addForce(force);
    VerletIntegrator integrator1(0.001), integrator2(0.001);
    Context context(system, integrator1, platform, properties);
    Context reference(system, integrator2, referencePlatform());
    context.setPositions(pairs.positions);
    reference.setPositions(pairs.positions);
    State expected = reference.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(force->getCollectiveVariableValue(reference), force->getCollectiveVariableValue(context), tolerance);
    assertState(context, expected.getPotentialEnergy(), expected.getForces());
}

void testPairParameterErrors() {
    CoordinationForce force({0, 1, 2}, {3, 4, 5}, true);
    // NaN, negative, infinite values, and the wrong count.
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({1.0, NAN, 1.0}, {}), "weights");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({1.0, 1.0, -0.5}, {}), "-0.5");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({1.0, INFINITY, 1.0}, {}), "inf");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({}, {0.3, NAN, 0.3}), "r0s");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({}, {0.3, 0.3, -0.2}), "-0.2");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({}, {0.3, 0.0, 0.3}), "pair 1");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({1.0, 1.0}, {}), "weights must have one value per pair (3 pairs), got 2");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairParameters({}, {0.3, 0.3, 0.3, 0.3}), "r0s must have one value per pair (3 pairs), got 4");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairs({0, 1}, {2, 3}, {1.0}, {}), "weights");
    ASSERT_COORDINATION_ERROR_NAMING(force.setPairs({0, 1}, {2, 3}, {}, {0.3, NAN}), "nan");
    ASSERT(!force.getUsesPairParameters());
    ASSERT_EQUAL(3, force.getNumPairs());
    // Only pair lists have per-pair values.
    CoordinationForce groups({0, 1}, {2, 3});
    ASSERT_COORDINATION_ERROR_NAMING(groups.setPairParameters({1.0, 1.0, 1.0, 1.0}, {}), "pair-list mode");
    double dsdr;
    ASSERT_COORDINATION_ERROR_NAMING(groups.evaluatePairSwitchingFunction(0, 0.3, dsdr), "pair-list mode");
    ASSERT_COORDINATION_ERROR_NAMING(force.evaluatePairSwitchingFunction(3, 0.3, dsdr), "pair index");
    // beta and lambda of Q.
    ASSERT_COORDINATION_ERROR_NAMING(force.setBeta(0.0), "beta");
    ASSERT_COORDINATION_ERROR_NAMING(force.setBeta(-50.0), "-50");
    ASSERT_COORDINATION_ERROR_NAMING(force.setBeta(NAN), "nan");
    ASSERT_COORDINATION_ERROR_NAMING(force.setLambda(0.0), "lambda");
    ASSERT_COORDINATION_ERROR_NAMING(force.setLambda(-1.8), "-1.8");
    ASSERT_COORDINATION_ERROR_NAMING(force.setLambda(NAN), "nan");
    ASSERT_EQUAL(50.0, force.getBeta());
    ASSERT_EQUAL(1.8, force.getLambda());
    // Cubic has no r0: per-pair r0s are refused when the Context is created.
    System system;
    for (int i = 0; i < 6; i++)
        system.addParticle(1.0);
    CoordinationForce* cubic = new CoordinationForce();
    cubic->setPairs({0, 1, 2}, {3, 4, 5}, {}, {0.3, 0.4, 0.5});
    cubic->setSwitchingFunction(CoordinationForce::Cubic);
    cubic->setDMax(0.8);
    system.addForce(cubic);
    VerletIntegrator integrator(0.001);
    ASSERT_COORDINATION_ERROR_NAMING(Context(system, integrator, platform, properties), "Cubic");
}

void runPairParameterTests() {
    RUN_TEST(testPairWeightsAndR0s);
    RUN_TEST(testQPerPair);
    RUN_TEST(testQInEveryMode);
    RUN_TEST(testPairParameterDefaults);
    RUN_TEST(testUpdatePairParameters);
    RUN_TEST(testManyPairsAgainstReference);
    RUN_TEST(testPairParameterErrors);
}
