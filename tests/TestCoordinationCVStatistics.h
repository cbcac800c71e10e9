/* Tests of CoordinationBiasForce's running statistics of its CVs (setCVStatisticsStride(),
 * getCVStatistics(), setCVStatistics()): PLUMED's OPES_METAD update once per MD step, against the
 * same update computed here from the CVs of each step, on every platform. Uses
 * TestCoordinationBias.h's CVs and positions. */

/* Included after TestCoordinationBias.h (TestCoordinationForce.h). */
#include "openmm/LangevinMiddleIntegrator.h"

/** The running statistics of PLUMED's OPES_METAD (update()), computed here: mean, m2, count. */
struct HandStatistics {
    vector<double> mean, m2;
    long long count = 0;
    void add(const vector<double>& cv, int stride) {
        if (mean.empty()) {
            mean.assign(cv.size(), 0.0);
            m2.assign(cv.size(), 0.0);
        }
        count++;
        double tau = (count < stride ? count : stride);
        for (int k = 0; k < cv.size(); k++) {
            double before = mean[k];
            mean[k] = before+(cv[k]-before)/tau;
            m2[k] += (cv[k]-before)*(cv[k]-mean[k]);
        }
    }
};

/** Assert that a Context's statistics equal the hand-computed ones (the count exactly). */
static void assertStatistics(const CoordinationBiasForce& bias, Context& context, const HandStatistics& expected) {
    vector<double> mean, m2;
    long long count;
    bias.getCVStatistics(context, mean, m2, count);
    ASSERT_EQUAL(expected.count, count);
    ASSERT_EQUAL(expected.mean.size(), mean.size());
    for (int k = 0; k < mean.size(); k++) {
        ASSERT_EQUAL_TOL(expected.mean[k], mean[k], tolerance);
        // m2 is a sum of products of differences: an absolute tolerance on the scale of the mean's.
        ASSERT_EQUAL_TOL(expected.m2[k], m2[k], tolerance*(1+fabs(expected.mean[k])));
    }
}

/** A bias force of two CVs (biasCV 1 and 2) with statistics of the given stride, in a Langevin Context. */
static CoordinationBiasForce* statisticsBias(int stride) {
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(c1-1)^2 + 0.5*k*(c2-1.5)^2");
    bias->addGlobalParameter("k", 50.0);
    bias->addCollectiveVariable("c1", biasCV(1, true));
    bias->addCollectiveVariable("c2", biasCV(2, true));
    bias->setCVStatisticsStride(stride);
    return bias;
}

void testCVStatisticsEachStep() {
    const int stride = 4, steps = 13;
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    System system;
    CoordinationBiasForce* bias = statisticsBias(stride);
    LangevinMiddleIntegrator integrator(300.0, 5.0, 0.002);
    integrator.setRandomNumberSeed(11);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    // The step at which the Context was created is not counted (PLUMED skips its first step).
    HandStatistics expected;
    expected.mean.assign(2, 0.0);
    expected.m2.assign(2, 0.0);
    context->getState(State::Energy);
    for (int step = 1; step <= steps; step++) {
        integrator.step(1);
        // Every step's CVs count once: each evaluation of the step (the integrator's next one, and
        // these energy reads) after the first adds nothing.
        vector<double> cv = bias->getCollectiveVariableValues(*context);
        expected.add(cv, stride);
        context->getState(State::Energy);
        context->getState(State::Energy | State::Forces);
    }
    assertStatistics(*bias, *context, expected);
    // getCVStatistics() counted the current step (the last one) itself; the next step's evaluation does not count it again.
    integrator.step(1);
    expected.add(bias->getCollectiveVariableValues(*context), stride);
    assertStatistics(*bias, *context, expected);
    ASSERT(expected.count == steps+1 && expected.m2[0] > 0 && expected.m2[1] > 0);
    // Set, then continued exactly: as if the run had gone on from these statistics.
    HandStatistics restored;
    restored.mean = {0.3, 1.2};
    restored.m2 = {0.05, 0.5};
    restored.count = 2;
    bias->setCVStatistics(*context, restored.mean, restored.m2, restored.count);
    assertStatistics(*bias, *context, restored);
    for (int step = 0; step < 3; step++) {
        integrator.step(1);
        restored.add(bias->getCollectiveVariableValues(*context), stride);
    }
    assertStatistics(*bias, *context, restored);
    // Zeros start them again.
    HandStatistics fresh;
    bias->setCVStatistics(*context, {0.0, 0.0}, {0.0, 0.0}, 0);
    fresh.mean.assign(2, 0.0);
    fresh.m2.assign(2, 0.0);
    assertStatistics(*bias, *context, fresh);
    integrator.step(1);
    fresh.add(bias->getCollectiveVariableValues(*context), stride);
    assertStatistics(*bias, *context, fresh);
    // A new stride through updateParametersInContext(), the statistics kept.
    bias->setCVStatisticsStride(1);
    bias->updateParametersInContext(*context);
    for (int step = 0; step < 2; step++) {
        integrator.step(1);
        fresh.add(bias->getCollectiveVariableValues(*context), 1);
    }
    assertStatistics(*bias, *context, fresh);
}

void testCVStatisticsSettingsAndErrors() {
    CoordinationBiasForce force("c1");
    ASSERT_EQUAL(0, force.getCVStatisticsStride());
    ASSERT_BIAS_ERROR(force.setCVStatisticsStride(-2), "stride must be >= 0 (0: no statistics), got -2");
    force.setCVStatisticsStride(500);
    force.addCollectiveVariable("c1", biasCV(0, true));
    unique_ptr<CoordinationBiasForce> copy(XmlSerializer::clone<CoordinationBiasForce>(force));
    ASSERT_EQUAL(500, copy->getCVStatisticsStride());
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    System system;
    CoordinationBiasForce* bias = statisticsBias(0);
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    vector<double> mean, m2;
    long long count;
    ASSERT_BIAS_ERROR(bias->getCVStatistics(*context, mean, m2, count), "keeps no statistics of its CVs in this Context (CV statistics stride 0)");
    ASSERT_BIAS_ERROR(bias->setCVStatistics(*context, {0, 0}, {0, 0}, 0), "setCVStatistics: the force keeps no statistics");
    bias->setCVStatisticsStride(10);
    bias->updateParametersInContext(*context);
    bias->getCVStatistics(*context, mean, m2, count);
    ASSERT_EQUAL(0, count);
    ASSERT_BIAS_ERROR(bias->setCVStatistics(*context, {0}, {0, 0}, 0), "mean and m2 need one value per collective variable (2), got 1 and 2");
    ASSERT_BIAS_ERROR(bias->setCVStatistics(*context, {0, 0}, {0, 0}, -1), "count must be >= 0, got -1");
    ASSERT_BIAS_ERROR(bias->setCVStatistics(*context, {0, NAN}, {0, 0}, 1), "mean[1] must be finite, got nan");
    ASSERT_BIAS_ERROR(bias->setCVStatistics(*context, {0, 0}, {-1, 0}, 1), "m2[0] must be finite and >= 0");
}

void runCVStatisticsTests() {
    RUN_TEST(testCVStatisticsEachStep);
    RUN_TEST(testCVStatisticsSettingsAndErrors);
}
