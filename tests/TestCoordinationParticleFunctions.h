/* Tests of per-atom coordination numbers (a CoordinationForce with a particle function, PLUMED's
 * COORDINATIONNUMBER with SUM, MEAN, MORE_THAN, LESS_THAN, BETWEEN, MIN, MAX, LOWEST, HIGHEST and
 * MOMENTS): the c_i and every function against hand-written formulas, the forces against finite
 * differences, one and two groups, periodic boxes, a CoordinationBiasForce CV, the errors, on
 * every platform (CUDA: kernels/particles.cu over all pairs, kernels/particlelists.cu over the
 * neighbour lists). */

#include "CoordinationTestUtilities.h"
#include "CoordinationBiasForce.h"
#include <memory>

static const int particleFunctionParticles = 10;

/** Positions about 0.15 to 0.5 nm apart, so that the c_i spread over 0 to about 4. */
static vector<Vec3> particleFunctionPositions(int seed) {
    return randomPositions(particleFunctionParticles, 1.0, seed);
}

/** The hand c_i of group A: s(r) = Rational(6, 12), r0 0.3, d0 0, no cutoff; neighbours groupB (or A itself when empty). */
static vector<double> handCoordinationNumbers(const vector<int>& groupA, const vector<int>& groupB, const vector<Vec3>& pos, const Vec3* box) {
    HandSwitching s = ofR(0.3, 0.0, rational(6, 12));
    const vector<int>& neighbours = (groupB.empty() ? groupA : groupB);
    vector<double> c(groupA.size(), 0.0);
    for (int a = 0; a < groupA.size(); a++)
        for (int j : neighbours)
            if (j != groupA[a]) {
                Vec3 d = nearestImage(pos[j]-pos[groupA[a]], box);
                double dsdr;
                c[a] += s(sqrt(d.dot(d)), dsdr);
            }
    return c;
}

/** PLUMED's formulas for each particle function, written out on their own (not CoordinationParticleFunction). */
static double handParticleFunction(CoordinationForce::ParticleFunction f, const vector<double>& c) {
    int n = c.size();
    double value = 0.0, mean = 0.0;
    for (double ci : c)
        mean += ci/n;
    // MORE_THAN / LESS_THAN threshold: RATIONAL R_0=1.5 D_0=0.2 NN=6 MM=10 D_MAX=3.5, stretched.
    HandSwitching t = withCutoff(3.5, true, ofR(1.5, 0.2, rational(6, 10)));
    for (double ci : c) {
        double dt;
        switch (f) {
            case CoordinationForce::Sum: value += ci; break;
            case CoordinationForce::Mean: value += ci/n; break;
            case CoordinationForce::MoreThan: value += 1-t(ci, dt); break;
            case CoordinationForce::LessThan: value += t(ci, dt); break;
            case CoordinationForce::Between: {
                // BETWEEN={GAUSSIAN LOWER=1 UPPER=2.5 SMEAR=0.4}
                double w = 0.4*1.5;
                value += 0.5*(erf((2.5-ci)/(sqrt(2.0)*w))-erf((1.0-ci)/(sqrt(2.0)*w)));
                break;
            }
            case CoordinationForce::Min: value += exp(0.2/ci); break;
            case CoordinationForce::Max: value += exp(ci/0.2); break;
            case CoordinationForce::Moment: value += pow(ci-mean, 3)/n; break;
            default: break;
        }
    }
    if (f == CoordinationForce::Min)
        return 0.2/log(value);
    if (f == CoordinationForce::Max)
        return 0.2*log(value);
    if (f == CoordinationForce::Lowest)
        return *min_element(c.begin(), c.end());
    if (f == CoordinationForce::Highest)
        return *max_element(c.begin(), c.end());
    return value;
}

/** A force with the test's switching function and particle function parameters. */
static CoordinationForce* particleFunctionForce(CoordinationForce::ParticleFunction f, const vector<int>& groupA, const vector<int>& groupB) {
    CoordinationForce* force = (groupB.empty() ? new CoordinationForce(groupA) : new CoordinationForce(groupA, groupB));
    force->setR0(0.3);
    force->setDMax(INFINITY);
    force->setParticleFunction(f);
    force->setThreshold(1.5, 0.2, 6, 10, 3.5);
    force->setBetweenBounds(1.0, 2.5, 0.4);
    force->setFunctionBeta(0.2);
    force->setMomentPower(3);
    return force;
}

/** Every function of one configuration: the c_i, the CV, the energy and finite-difference forces. */
static void checkParticleFunctions(const vector<int>& groupA, const vector<int>& groupB, bool periodic, int seed) {
    vector<Vec3> positions = particleFunctionPositions(seed);
    Vec3 box[3] = {Vec3(1.3, 0, 0), Vec3(0, 1.4, 0), Vec3(0, 0, 1.5)};
    vector<double> c = handCoordinationNumbers(groupA, groupB, positions, periodic ? box : NULL);
    for (int f = CoordinationForce::Sum; f <= CoordinationForce::Moment; f++) {
        CoordinationForce::ParticleFunction function = (CoordinationForce::ParticleFunction) f;
        System system;
        for (int i = 0; i < positions.size(); i++)
            system.addParticle(1.0);
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
        CoordinationForce* force = particleFunctionForce(function, groupA, groupB);
        force->setUsesPeriodicBoundaryConditions(periodic);
        // An energy that is not the CV itself, so that the chain rule is exercised.
        force->setEnergyFunction("3*cv+cv^2");
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        context.setPositions(positions);
        vector<double> found = force->getCoordinationNumbers(context);
        ASSERT_EQUAL(c.size(), found.size());
        for (int a = 0; a < c.size(); a++)
            ASSERT_EQUAL_TOL(c[a], found[a], tolerance);
        double expected = handParticleFunction(function, c);
        ASSERT_EQUAL_TOL(expected, force->getCollectiveVariableValue(context), tolerance);
        ASSERT_EQUAL_TOL(3*expected+expected*expected, context.getState(State::Energy).getPotentialEnergy(), tolerance);
        stringstream label;
        label << "particle function " << f << (periodic ? " periodic" : "") << (groupB.empty() ? " one group" : " two groups");
        assertFiniteDifferences(context, positions, label.str());
        vector<double> dFdc;
        ASSERT_EQUAL_TOL(expected, force->evaluateParticleFunction(c, dFdc), 1e-12);
    }
}

void testParticleFunctionMinAtZero() {
    // An atom with no neighbour (c = 0): Min is its limit, 0, with a zero gradient, not NaN.
    unique_ptr<CoordinationForce> force(particleFunctionForce(CoordinationForce::Min, {0, 1}, {}));
    vector<double> dFdc;
    ASSERT_EQUAL(0.0, force->evaluateParticleFunction({0.0, 1.5, 2.0}, dFdc));
    for (double d : dFdc)
        ASSERT_EQUAL(0.0, d);
}

void testParticleFunctionMinMaxLimits() {
    // Min where a c_i is tiny (an atom whose neighbours are far, with a switching function without a
    // cutoff): F is about the smallest c_i, and its gradient about 1 there, not NaN (F^2/c_i^2 underflowed
    // from c_i = 1e-154 on), nor NaN where beta/c_i overflows (c_i below beta/1.8e308): the limit, min_i c_i.
    unique_ptr<CoordinationForce> force(particleFunctionForce(CoordinationForce::Min, {0, 1}, {}));
    vector<double> dFdc;
    for (double tiny : {1e-100, 1e-200, 1e-310}) {
        ASSERT_EQUAL_TOL(tiny, force->evaluateParticleFunction({1.5, tiny, 2.0}, dFdc), 1e-12);
        ASSERT_EQUAL_TOL(0.0, dFdc[0], 1e-12);
        ASSERT_EQUAL_TOL(1.0, dFdc[1], 1e-12);
        ASSERT_EQUAL_TOL(0.0, dFdc[2], 1e-12);
    }
    // Max with a beta so small that c_i/beta overflows: the limit, max_i c_i (was NaN).
    force->setParticleFunction(CoordinationForce::Max);
    force->setFunctionBeta(1e-310);
    ASSERT_EQUAL_TOL(2.0, force->evaluateParticleFunction({1.5, 0.5, 2.0}, dFdc), 1e-12);
    ASSERT_EQUAL(0.0, dFdc[0]);
    ASSERT_EQUAL(0.0, dFdc[1]);
    ASSERT_EQUAL(1.0, dFdc[2]);
}

void testRationalWhereXToTheMOverflows() {
    // Rational with m != 2n where x^m overflows (x above 1.8e308^(1/m): 1.4e5 for m = 60, 7100 for
    // m = 80): (1 - x^n)/(1 - x^m) was inf/inf = NaN (PLUMED's is too). Now x^(n-m) (1 - x^-n)/(1 - x^-m):
    // a threshold NN=40 MM=60 (c = 140 below the overflow, 2e5 and 1e6 above), and s(r) without a cutoff.
    unique_ptr<CoordinationForce> force(particleFunctionForce(CoordinationForce::LessThan, {0, 1}, {}));
    force->setThreshold(1.0, 0.0, 40, 60);
    vector<double> dFdc;
    for (double c : {140.0, 2e5, 1e6}) {
        double t = pow(c, -20.0)*(1-pow(c, -40.0))/(1-pow(c, -60.0));
        ASSERT_EQUAL_TOL(t, force->evaluateParticleFunction({c}, dFdc), 1e-12);
        ASSERT_EQUAL_TOL(-20*t/c, dFdc[0], 1e-6);
    }
    force->setParticleFunction(CoordinationForce::PairSum);
    force->setN(8);
    force->setM(80);
    force->setR0(0.001);
    force->setDMax(INFINITY);
    double dsdr;
    for (double r : {5.0, 10.0, 30.0}) {
        double x = r/0.001, s = pow(x, -72.0)*(1-pow(x, -8.0))/(1-pow(x, -80.0));
        ASSERT_EQUAL_TOL(s, force->evaluateSwitchingFunction(r, dsdr), 1e-12);
        ASSERT_EQUAL_TOL(-72*s/r, dsdr, 1e-6);
    }
}

void testCoordinationNumbersOfTheContext() {
    // getCoordinationNumbers() answers for the Context's copy of the force: a particle function set
    // after the Context was created (not yet copied with updateParametersInContext()) is refused, in a
    // pair list too (whose c_i were computed as if the lists were two groups); one the Context has is
    // computed even where the force was set back to PairSum since.
    vector<Vec3> positions = particleFunctionPositions(9);
    System system;
    for (int i = 0; i < positions.size(); i++)
        system.addParticle(1.0);
    CoordinationForce* pairs = new CoordinationForce({0, 1}, {2, 3}, true);
    CoordinationForce* plain = new CoordinationForce({0, 1, 2, 3});
    CoordinationForce* numbers = particleFunctionForce(CoordinationForce::Sum, {4, 5, 6}, {});
    system.addForce(pairs);
    system.addForce(plain);
    system.addForce(numbers);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    pairs->setParticleFunction(CoordinationForce::Sum);
    ASSERT_COORDINATION_ERROR_NAMING(pairs->getCoordinationNumbers(context), "call updateParametersInContext() first");
    ASSERT_COORDINATION_ERROR_NAMING(pairs->updateParametersInContext(context), "pair-list mode");
    ASSERT_COORDINATION_ERROR_NAMING(pairs->getCoordinationNumbers(context), "PairSum");
    plain->setParticleFunction(CoordinationForce::Mean);
    ASSERT_COORDINATION_ERROR_NAMING(plain->getCoordinationNumbers(context), "call updateParametersInContext() first");
    plain->setDMax(INFINITY);
    plain->updateParametersInContext(context);
    vector<double> c = handCoordinationNumbers({0, 1, 2, 3}, {}, positions, NULL);
    vector<double> found = plain->getCoordinationNumbers(context);
    ASSERT_EQUAL(c.size(), found.size());
    for (int a = 0; a < c.size(); a++)
        ASSERT_EQUAL_TOL(c[a], found[a], tolerance);
    numbers->setParticleFunction(CoordinationForce::PairSum);
    c = handCoordinationNumbers({4, 5, 6}, {}, positions, NULL);
    found = numbers->getCoordinationNumbers(context);
    for (int a = 0; a < c.size(); a++)
        ASSERT_EQUAL_TOL(c[a], found[a], tolerance);
    // A CV of a CoordinationBiasForce is no force of the System: a message that says so.
    System biased;
    for (int i = 0; i < positions.size(); i++)
        biased.addParticle(1.0);
    CoordinationForce* cv = particleFunctionForce(CoordinationForce::Sum, {0, 1, 2}, {});
    CoordinationBiasForce* bias = new CoordinationBiasForce("q");
    bias->addCollectiveVariable("q", cv);
    biased.addForce(bias);
    VerletIntegrator biasedIntegrator(0.001);
    Context biasedContext(biased, biasedIntegrator, platform, properties);
    biasedContext.setPositions(positions);
    ASSERT_COORDINATION_ERROR_NAMING(cv->getCoordinationNumbers(biasedContext), "not in the Context's System");
}

void testParticleFunctionsOneGroup() {
    checkParticleFunctions({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {}, false, 3);
    checkParticleFunctions({9, 2, 4, 7, 0}, {}, true, 4);
}

void testParticleFunctionsTwoGroups() {
    // Particle 2 is in both groups: it is not its own neighbour.
    checkParticleFunctions({0, 1, 2, 3}, {2, 4, 5, 6, 7, 8, 9}, false, 5);
    checkParticleFunctions({5, 6, 7}, {0, 1, 2, 3, 4, 5}, true, 6);
}

void testParticleFunctionDistancePower() {
    // c_i = sum_j s(r_ij) r_ij^k (PLUMED's COORDINATION_MOMENTS R_POWER=k), Mean and Moment of it.
    vector<Vec3> positions = particleFunctionPositions(9);
    Vec3 box[3] = {Vec3(1.3, 0, 0), Vec3(0, 1.4, 0), Vec3(0, 0, 1.5)};
    HandSwitching s = ofR(0.3, 0.0, rational(6, 12));
    for (double k : {1.0, 2.0, 1.5})
        for (int periodic = 0; periodic < 2; periodic++) {
            vector<int> groupA = {0, 1, 2, 3, 4}, groupB = {3, 4, 5, 6, 7, 8, 9};
            vector<double> c(groupA.size(), 0.0), plain(groupA.size(), 0.0);
            for (int a = 0; a < groupA.size(); a++)
                for (int j : groupB)
                    if (j != groupA[a]) {
                        Vec3 d = nearestImage(positions[j]-positions[groupA[a]], periodic ? box : NULL);
                        double r = sqrt(d.dot(d)), dsdr;
                        c[a] += s(r, dsdr)*pow(r, k);
                        plain[a] += s(r, dsdr);
                    }
            System system;
            for (int i = 0; i < positions.size(); i++)
                system.addParticle(1.0);
            system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
            CoordinationForce* force = particleFunctionForce(CoordinationForce::Moment, groupA, groupB);
            force->setDistancePower(k);
            force->setUsesPeriodicBoundaryConditions(periodic);
            system.addForce(force);
            VerletIntegrator integrator(0.001);
            Context context(system, integrator, platform, properties);
            context.setPositions(positions);
            vector<double> found = force->getCoordinationNumbers(context);
            for (int a = 0; a < c.size(); a++)
                ASSERT_EQUAL_TOL(c[a], found[a], tolerance);
            ASSERT_EQUAL_TOL(handParticleFunction(CoordinationForce::Moment, c), force->getCollectiveVariableValue(context), tolerance);
            assertFiniteDifferences(context, positions, "distance power");
            // The power turned off and on again in the Context (on CUDA, each a program of its own: PARTICLE_DISTANCE_POWER).
            for (double power : {0.0, k}) {
                force->setDistancePower(power);
                force->updateParametersInContext(context);
                found = force->getCoordinationNumbers(context);
                for (int a = 0; a < c.size(); a++)
                    ASSERT_EQUAL_TOL(power == 0 ? plain[a] : c[a], found[a], tolerance);
            }
            assertFiniteDifferences(context, positions, "distance power, updated");
        }
}

void testParticleFunctionGradient() {
    // dF/dc_i of every function against central differences of F.
    vector<double> c = {0.3, 1.2, 2.0, 2.7, 3.3, 0.9};
    for (int f = CoordinationForce::Sum; f <= CoordinationForce::Moment; f++) {
        unique_ptr<CoordinationForce> force(particleFunctionForce((CoordinationForce::ParticleFunction) f, {0, 1}, {}));
        vector<double> dFdc, unused;
        force->evaluateParticleFunction(c, dFdc);
        for (int i = 0; i < c.size(); i++) {
            vector<double> plus = c, minus = c;
            plus[i] += 1e-6;
            minus[i] -= 1e-6;
            double numerical = (force->evaluateParticleFunction(plus, unused)-force->evaluateParticleFunction(minus, unused))/2e-6;
            ASSERT_EQUAL_TOL(numerical, dFdc[i], 1e-6);
        }
    }
}

void testParticleFunctionsAgainstReference() {
    // 400 particles in a periodic box with a cutoff: enough pairs for cell lists and threads on CPU, and
    // for two chunks of 256 centres on CUDA (group A of 280 in two-group mode). On CUDA every function
    // over all pairs (COORDINATION_NEIGHBOR_LIST=0), on the neighbour lists (1), where the first
    // pass evaluates the elementwise ones itself (kernels/particlelists.cu), and with
    // COORDINATION_LIST_KIND=homes, on the lists of homes where they serve (one group, an elementwise
    // function: kernels/particlehomes.cu); the other platforms ignore the switches.
    int numParticles = 400;
    vector<Vec3> positions = randomPositions(numParticles, 3.0, 17);
    Vec3 box[3] = {Vec3(3.0, 0, 0), Vec3(0, 3.0, 0), Vec3(0, 0, 3.0)};
    vector<int> all, first, second;
    for (int i = 0; i < numParticles; i++) {
        all.push_back(i);
        (i < 280 ? first : second).push_back(i);
    }
    for (string lists : {"0", "1", "homes"})
        for (int groups = 0; groups < 2; groups++)
            for (int f = CoordinationForce::Sum; f <= CoordinationForce::Moment; f++) {
                ScopedEnvironment setting("COORDINATION_NEIGHBOR_LIST", lists == "homes" ? "1" : lists);
                ScopedEnvironment kind("COORDINATION_LIST_KIND", lists == "homes" ? "homes" : "");
                System system;
                for (int i = 0; i < numParticles; i++)
                    system.addParticle(1.0);
                system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
                CoordinationForce* force = particleFunctionForce((CoordinationForce::ParticleFunction) f, groups == 0 ? all : first,
                        groups == 0 ? vector<int>() : second);
                force->setDMax(0.6);
                force->setUsesPeriodicBoundaryConditions(true);
                force->setThreshold(3.0, 0.5, 6, 12, 8.0);
                force->setBetweenBounds(2.0, 4.0, 0.4);
                force->setFunctionBeta(0.5);
                // The energy the CV itself (forces straight from the pair kernel on CUDA) or an expression of it (the chain rule).
                force->setEnergyFunction(f%2 == 0 ? "cv" : "cv^2");
                // A distance power in two groups, and in one group on the lists of homes (kernels/particlehomes.cu).
                force->setDistancePower(groups == 1 ? 1.0 : lists == "homes" ? 1.5 : 0.0);
                system.addForce(force);
                VerletIntegrator integrator(0.001), integrator2(0.001);
                Context context(system, integrator, platform, properties);
                Context reference(system, integrator2, referencePlatform());
                context.setPositions(positions);
                reference.setPositions(positions);
                vector<double> c = force->getCoordinationNumbers(context), expected = force->getCoordinationNumbers(reference);
                for (int a = 0; a < c.size(); a++)
                    ASSERT_EQUAL_TOL(expected[a], c[a], tolerance);
                State state = reference.getState(State::Energy | State::Forces);
                // Twice: each evaluation starts from cleared coordination numbers.
                for (int repeat = 0; repeat < 2; repeat++) {
                    ASSERT_EQUAL_TOL(state.getPotentialEnergy(), context.getState(State::Energy).getPotentialEnergy(), tolerance);
                    assertForcesEqual(state.getForces(), context.getState(State::Forces).getForces(), forceTolerance());
                }
                ASSERT_EQUAL_TOL(reference.getState(State::Energy).getPotentialEnergy(),
                        context.getState(State::Energy | State::Forces).getPotentialEnergy(), tolerance);
                ASSERT_EQUAL_TOL(force->getCollectiveVariableValue(reference), force->getCollectiveVariableValue(context), tolerance);
            }
}

void testParticleFunctionForcesOnly() {
    // Forces alone (as in an MD step, where the chain rule takes F from the sum the function's
    // kernel added), then the energy alone, then both, three frames in a row against Reference:
    // MoreThan of one group of 1,500 in a periodic box with a cutoff, restrained, and a
    // CoordinationBiasForce of Max of two groups beside a plain CV. gpu_suite.sh's stress stage runs
    // it (its name holds ForcesOnly) in many processes at once, where an ordering error between
    // CUDA's three launches (the coordination numbers cleared after use, the weights read after
    // they are written) shows.
    const int numParticles = 1500;
    const double edge = 3.5;
    Vec3 box[3] = {Vec3(edge, 0, 0), Vec3(0, edge, 0), Vec3(0, 0, edge)};
    vector<int> all, first, rest;
    for (int i = 0; i < numParticles; i++) {
        all.push_back(i);
        (i < 500 ? first : rest).push_back(i);
    }
    for (int variant = 0; variant < 2; variant++) {
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
        CoordinationForce* cv = particleFunctionForce(variant == 0 ? CoordinationForce::MoreThan : CoordinationForce::Max,
                variant == 0 ? all : first, variant == 0 ? vector<int>() : rest);
        cv->setDMax(0.6);
        cv->setUsesPeriodicBoundaryConditions(true);
        cv->setThreshold(3.0, 0.5, 6, 12, 8.0);
        if (variant == 0) {
            cv->setEnergyExpression("0.5*k*(cv-cv0)^2");
            cv->addGlobalParameter("k", 0.05);
            cv->addGlobalParameter("cv0", 1.0);
            system.addForce(cv);
        }
        else {
            CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(q-1)^2+0.5*k*(p-1)^2");
            bias->addGlobalParameter("k", 2.0);
            CoordinationForce* plain = new CoordinationForce(vector<int>(first.begin(), first.begin()+200));
            plain->setR0(0.3);
            plain->setDMax(0.6);
            plain->setUsesPeriodicBoundaryConditions(true);
            bias->addCollectiveVariable("q", cv);
            bias->addCollectiveVariable("p", plain);
            system.addForce(bias);
        }
        VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
        Context context(system, integrator, platform, properties);
        Context reference(system, referenceIntegrator, referencePlatform());
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(80+variant, sfmt);
        vector<Vec3> positions = randomPositions(numParticles, edge, 23+variant);
        for (int frame = 0; frame < 3; frame++) {
            if (frame == 1)
                for (Vec3& p : positions)
                    p += randomVector(sfmt, 0.02);
            if (frame == 2)
                positions = randomPositions(numParticles, edge, 29+variant);
            assertForcesOnlyAgree(context, reference, positions, "particle function case "+to_string(variant)+" frame "+to_string(frame));
        }
    }
}

void testParticleFunctionListsForcesOnly() {
    // A particle function over the neighbour lists (CUDA: kernels/particlelists.cu, where a finite
    // cutoff in a periodic box gives them; the other platforms ignore the switch), against
    // Reference over eight frames: kept (small moves), rebuilt (20 particles moved past half the
    // skin, dmax/20), kept, rebuilt with a cluster of 120 particles whose lists outgrow their
    // capacity (evaluated from the cells), kept, and a particle moved by a box vector. One group
    // (MoreThan, the energy the CV: forces straight from the kernels) and two overlapping groups
    // (MoreThan with a distance power, restrained: the chain rule's gradient); the lists on, rebuilt
    // at every evaluation, and off (COORDINATION_NEIGHBOR_LIST=0: the all-pairs kernels), and lists of
    // homes (COORDINATION_LIST_KIND=homes: kernels/particlehomes.cu for the one group; the two groups
    // keep lists of particles). Forces
    // alone, the energy alone, then both, as gpu_suite.sh's stress stage runs every ForcesOnly test;
    // then the c_i (getCoordinationNumbers()).
    const int numParticles = 600;
    const double edge = 3.2;
    Vec3 box[3] = {Vec3(edge, 0, 0), Vec3(0, edge, 0), Vec3(0, 0, edge)};
    vector<int> all, first, second;
    for (int i = 0; i < numParticles; i++) {
        all.push_back(i);
        if (i < 350)
            first.push_back(i);
        if (i >= 250)
            second.push_back(i);
    }
    for (string lists : {"1", "always", "0", "homes"})
        for (int variant = 0; variant < 2; variant++) {
            ScopedEnvironment setting("COORDINATION_NEIGHBOR_LIST", lists == "homes" ? "1" : lists);
            ScopedEnvironment kind("COORDINATION_LIST_KIND", lists == "homes" ? "homes" : "");
            System system;
            for (int i = 0; i < numParticles; i++)
                system.addParticle(1.0);
            system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
            CoordinationForce* cv = particleFunctionForce(CoordinationForce::MoreThan, variant == 0 ? all : first,
                    variant == 0 ? vector<int>() : second);
            cv->setDMax(0.6);
            cv->setUsesPeriodicBoundaryConditions(true);
            if (variant == 0)
                cv->setThreshold(3.0, 0.5, 6, 12, 8.0);
            else {
                // t = s(r) r makes the c_a about 0.6: a threshold there.
                cv->setDistancePower(1.0);
                cv->setThreshold(0.6, 0.0, 6, 12, 2.0);
                // Restrained below any value it takes, so that the energy exceeds 1 (assertForcesOnlyAgree()).
                cv->setEnergyExpression("0.5*k*(cv-cv0)^2");
                cv->addGlobalParameter("k", 0.05);
                cv->addGlobalParameter("cv0", -10.0);
            }
            system.addForce(cv);
            VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
            Context context(system, integrator, platform, properties);
            Context reference(system, referenceIntegrator, referencePlatform());
            OpenMM_SFMT::SFMT sfmt;
            OpenMM_SFMT::init_gen_rand(90+variant, sfmt);
            vector<Vec3> positions = randomPositions(numParticles, edge, 41+variant);
            auto nudge = [&] () {
                for (Vec3& p : positions)
                    p += randomVector(sfmt, 0.01)-Vec3(0.005, 0.005, 0.005);
            };
            for (int frame = 0; frame < 8; frame++) {
                if (frame == 1 || frame == 2 || frame == 4 || frame == 6)
                    nudge();
                if (frame == 3)
                    for (int i = 0; i < 20; i++)
                        positions[7*i] += direction(i)*0.05;
                if (frame == 5)
                    for (int i = 100; i < 220; i++)
                        positions[i] = Vec3(1.0, 1.2, 0.8)+randomVector(sfmt, 0.4);
                if (frame == 7)
                    positions[3] += box[0];
                assertForcesOnlyAgree(context, reference, positions, "particle function lists="+lists+" case "+to_string(variant)+
                        " frame "+to_string(frame));
                // The c_i alone (CUDA: the first pass, on the lists where they serve), between evaluations.
                vector<double> c = cv->getCoordinationNumbers(context), expected = cv->getCoordinationNumbers(reference);
                ASSERT_EQUAL(expected.size(), c.size());
                for (int a = 0; a < c.size(); a++)
                    ASSERT_EQUAL_TOL(expected[a], c[a], tolerance);
            }
        }
}

void testParticleFunctionAsBiasCV() {
    // A CoordinationBiasForce of a MoreThan CV and a plain one: the CVs are the forces' own.
    vector<Vec3> positions = particleFunctionPositions(8);
    System system;
    for (int i = 0; i < positions.size(); i++)
        system.addParticle(1.0);
    CoordinationBiasForce* bias = new CoordinationBiasForce("10*(q-1)^2+p");
    bias->addCollectiveVariable("q", particleFunctionForce(CoordinationForce::MoreThan, {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}));
    CoordinationForce* plain = new CoordinationForce({0, 1, 2, 3});
    bias->addCollectiveVariable("p", plain);
    system.addForce(bias);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    vector<double> c = handCoordinationNumbers({0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, positions, NULL);
    double q = handParticleFunction(CoordinationForce::MoreThan, c);
    vector<double> values = bias->getCollectiveVariableValues(context);
    ASSERT_EQUAL_TOL(q, values[0], tolerance);
    ASSERT_EQUAL_TOL(10*(q-1)*(q-1)+values[1], context.getState(State::Energy).getPotentialEnergy(), tolerance);
    assertFiniteDifferences(context, positions, "bias of a MoreThan CV");
}

void testParticleFunctionErrors() {
    CoordinationForce force({0, 1, 2});
    ASSERT_COORDINATION_ERROR_NAMING(force.setParticleFunction((CoordinationForce::ParticleFunction) 11), "particleFunction");
    ASSERT_COORDINATION_ERROR_NAMING(force.setThreshold(0.0), "threshold r0");
    ASSERT_COORDINATION_ERROR_NAMING(force.setThreshold(1.0, -1.0), "threshold d0");
    ASSERT_COORDINATION_ERROR_NAMING(force.setThreshold(1.0, 0.0, 6, 6), "threshold m");
    ASSERT_COORDINATION_ERROR_NAMING(force.setThreshold(1.0, 0.5, 6, 12, 0.5), "threshold dmax must be greater than d0 0.5, got 0.5");
    ASSERT_COORDINATION_ERROR_NAMING(force.setBetweenBounds(2.0, 1.0), "Between upper must be greater than lower 2, got 1");
    ASSERT_COORDINATION_ERROR_NAMING(force.setBetweenBounds(1.0, 2.0, 0.0), "Between smear");
    // A width smear (U - L) that is subnormal or overflows made NaN (0 times infinity) where a c_i is a bound.
    ASSERT_COORDINATION_ERROR_NAMING(force.setBetweenBounds(0.0, 1.0, 1e-310), "Between width smear*(upper - lower)");
    ASSERT_COORDINATION_ERROR_NAMING(force.setBetweenBounds(-1e308, 1e308, 1.0), "Between width smear*(upper - lower)");
    ASSERT_COORDINATION_ERROR_NAMING(force.setFunctionBeta(-1.0), "functionBeta must be positive and finite, got -1");
    ASSERT_COORDINATION_ERROR_NAMING(force.setMomentPower(1), "momentPower must be at least 2");
    ASSERT_COORDINATION_ERROR_NAMING(force.setDistancePower(-1.0), "distancePower must be non-negative and finite, got -1");
    vector<double> dFdc;
    ASSERT_COORDINATION_ERROR_NAMING(force.evaluateParticleFunction({1.0}, dFdc), "PairSum");
    System system;
    for (int i = 0; i < 4; i++)
        system.addParticle(1.0);
    CoordinationForce* pairs = new CoordinationForce({0, 1}, {2, 3}, true);
    pairs->setParticleFunction(CoordinationForce::Mean);
    system.addForce(pairs);
    VerletIntegrator integrator(0.001);
    ASSERT_COORDINATION_ERROR_NAMING(Context(system, integrator, platform, properties), "pair-list mode");
    system.removeForce(0);
    CoordinationForce* powered = new CoordinationForce({0, 1, 2});
    powered->setDistancePower(2.0);
    system.addForce(powered);
    ASSERT_COORDINATION_ERROR_NAMING(Context(system, integrator, platform, properties), "distancePower 2 needs a particle function");
    system.removeForce(0);
    CoordinationForce* plain = new CoordinationForce({0, 1, 2});
    system.addForce(plain);
    Context context(system, integrator, platform, properties);
    context.setPositions({Vec3(0, 0, 0), Vec3(0.3, 0, 0), Vec3(0, 0.3, 0), Vec3(0, 0, 0.3)});
    ASSERT_COORDINATION_ERROR_NAMING(plain->getCoordinationNumbers(context), "PairSum");
}

void runParticleFunctionTests() {
    RUN_TEST(testParticleFunctionGradient);
    RUN_TEST(testParticleFunctionMinAtZero);
    RUN_TEST(testParticleFunctionMinMaxLimits);
    RUN_TEST(testCoordinationNumbersOfTheContext);
    RUN_TEST(testRationalWhereXToTheMOverflows);
    RUN_TEST(testParticleFunctionsOneGroup);
    RUN_TEST(testParticleFunctionsTwoGroups);
    RUN_TEST(testParticleFunctionsAgainstReference);
    RUN_TEST(testParticleFunctionDistancePower);
    RUN_TEST(testParticleFunctionAsBiasCV);
    RUN_TEST(testParticleFunctionForcesOnly);
    RUN_TEST(testParticleFunctionListsForcesOnly);
    RUN_TEST(testParticleFunctionErrors);
}
