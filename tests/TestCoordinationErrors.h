/* Tests of the errors of the contract: each is an OpenMMException that names CoordinationForce. */

#include "CoordinationTestUtilities.h"
#include "openmm/TabulatedFunction.h"
#include <memory>

void testSetterErrors() {
    // Groups: repeated or negative indices, empty groups, pair lists of different lengths.
    ASSERT_COORDINATION_ERROR_NAMING(CoordinationForce({0, 1, 1}), "repeat");
    ASSERT_COORDINATION_ERROR_NAMING(CoordinationForce({0, -1}), "-1");
    ASSERT_COORDINATION_ERROR(CoordinationForce({0, 1}, {2, 2}));
    ASSERT_COORDINATION_ERROR(CoordinationForce({3, 0, 3}, {1, 2}));
    ASSERT_COORDINATION_ERROR(CoordinationForce({0, 1}, {}));
    ASSERT_COORDINATION_ERROR_NAMING(CoordinationForce({0, 1}, {2, 3, 4}, true), "3");
    ASSERT_COORDINATION_ERROR(CoordinationForce({0, -1}, {2, 3}, true));
    CoordinationForce force({0, 1, 2});
    ASSERT_COORDINATION_ERROR(force.setGroup({}));
    ASSERT_COORDINATION_ERROR(force.setGroups({0, 1}, {2}, true));
    // A failed setter leaves the force as it was.
    ASSERT_EQUAL_CONTAINERS(vector<int>({0, 1, 2}), force.getGroupA());
    ASSERT_EQUAL(CoordinationForce::OneGroup, force.getMode());
    // Switching parameters.
    ASSERT_COORDINATION_ERROR(force.setR0(0.0));
    ASSERT_COORDINATION_ERROR_NAMING(force.setR0(-0.3), "r0");
    ASSERT_COORDINATION_ERROR(force.setN(0));
    ASSERT_COORDINATION_ERROR_NAMING(force.setN(-6), "-6");
    ASSERT_COORDINATION_ERROR_NAMING(force.setM(-1), "m");
    // Exponents so large that one evaluation would take seconds (a loop of n + m terms near x = 1).
    ASSERT_COORDINATION_ERROR_NAMING(force.setN(2147483647), "2147483647");
    ASSERT_COORDINATION_ERROR_NAMING(force.setM(CoordinationForce::MaxExponent+1), "MaxExponent");
    ASSERT_COORDINATION_ERROR(force.setM(6));
    force.setM(8);
    ASSERT_COORDINATION_ERROR(force.setN(8));
    ASSERT_COORDINATION_ERROR_NAMING(force.setD0(-0.1), "d0");
    ASSERT_COORDINATION_ERROR(force.setDMax(0.0));
    force.setD0(0.2);
    ASSERT_COORDINATION_ERROR(force.setDMax(0.2));
    ASSERT_COORDINATION_ERROR_NAMING(force.setDMax(0.1), "dmax");
    ASSERT_COORDINATION_ERROR(force.setA(0.0));
    ASSERT_COORDINATION_ERROR_NAMING(force.setA(-2.0), "-2");
    ASSERT_COORDINATION_ERROR(force.setB(0.0));
    ASSERT_COORDINATION_ERROR(force.setB(-2.0));
    ASSERT_COORDINATION_ERROR(force.setCustomExpression("exp(-x"));
    ASSERT_COORDINATION_ERROR_NAMING(force.setCustomExpression("x*y"), "y");
    // A part without variables that is not a number, in the expression or its derivative, is refused
    // (Lepton's optimize() would never end); one inside a part that is a number is not.
    ASSERT_COORDINATION_ERROR_NAMING(force.setCustomExpression("cos(x)+sqrt(-1)"), "sqrt");
    ASSERT_COORDINATION_ERROR_NAMING(force.setCustomExpression("(-1)^x"), "derivative by x");
    force.setCustomExpression("1/(1+x^6)+step(sqrt(-1))");
    ASSERT_EQUAL("1/(1+x^6)+step(sqrt(-1))", force.getCustomExpression());
    ASSERT_EQUAL(0.3, force.getR0());
    ASSERT_EQUAL(8, force.getM());
    ASSERT_EQUAL(6, force.getN());
    ASSERT_EQUAL(0.2, force.getD0());
    // Only Continuous1DFunction tables.
    Discrete1DFunction* discrete = new Discrete1DFunction({1.0, 2.0});
    ASSERT_COORDINATION_ERROR(force.addTabulatedFunction("f", discrete));
    delete discrete;
    ASSERT_EQUAL(0, force.getNumTabulatedFunctions());
    // Index checks of the accessors.
    ASSERT_COORDINATION_ERROR(force.getGlobalParameterName(0));
    ASSERT_COORDINATION_ERROR(force.getTabulatedFunction(0));
    // An energy expression that does not parse is refused at once; a table may come later.
    ASSERT_COORDINATION_ERROR_NAMING(force.setEnergyExpression("cv*"), "cv*");
    ASSERT_COORDINATION_ERROR_NAMING(force.setEnergyExpression("0.5*(cv-1"), "parse");
    ASSERT_COORDINATION_ERROR(force.setEnergyExpression("bias(cv, 2)"));
    ASSERT_COORDINATION_ERROR_NAMING(force.setEnergyExpression("cv+0/0"), "not a number");
    ASSERT_COORDINATION_ERROR_NAMING(force.setEnergyExpression("k*log(-1)*cv"), "log");
    ASSERT_COORDINATION_ERROR_NAMING(force.setEnergyExpression("(-2)^cv"), "derivative by cv");
    ASSERT_EQUAL("cv", force.getEnergyExpression());
    force.setEnergyExpression("bias(cv)+min(cv, 2)+k*later(cv)");
    ASSERT_EQUAL("bias(cv)+min(cv, 2)+k*later(cv)", force.getEnergyExpression());
    // Global parameters need finite defaults.
    ASSERT_COORDINATION_ERROR_NAMING(force.addGlobalParameter("k", NAN), "k");
    ASSERT_COORDINATION_ERROR_NAMING(force.addGlobalParameter("k", -INFINITY), "-inf");
    ASSERT_EQUAL(0, force.getNumGlobalParameters());
    force.addGlobalParameter("k", 1e300);
    ASSERT_COORDINATION_ERROR_NAMING(force.setGlobalParameterDefaultValue(0, INFINITY), "inf");
    ASSERT_EQUAL(1e300, force.getGlobalParameterDefaultValue(0));
}

/** Create a Context for a force on six particles (the checks that need the System happen here). */
static void createContext(CoordinationForce* force) {
    System system;
    for (int i = 0; i < 6; i++)
        system.addParticle(1.0);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
}

/**
 * Indices beyond the System, in either group or a pair list: checked in initialize(), against
 * the System, after the platform has created its device context (RUN_TEST_LEAKING_CONTEXT).
 */
void testContextIndexErrors() {
    ASSERT_COORDINATION_ERROR_NAMING(createContext(new CoordinationForce({0, 1, 6})), "6");
    ASSERT_COORDINATION_ERROR(createContext(new CoordinationForce({0, 1}, {2, 7})));
    ASSERT_COORDINATION_ERROR(createContext(new CoordinationForce({0, 10}, {2, 3}, true)));
}

/** Errors of the force alone, found by CoordinationForceImpl's constructor, before the platform makes a device context. */
void testContextErrors() {
    // An empty group.
    ASSERT_COORDINATION_ERROR(createContext(new CoordinationForce()));
    // Cubic needs dmax.
    CoordinationForce* cubic = new CoordinationForce({0, 1, 2});
    cubic->setSwitchingFunction(CoordinationForce::Cubic);
    ASSERT_COORDINATION_ERROR_NAMING(createContext(cubic), "dmax");
    // dmax below a d0 set after it.
    CoordinationForce* inverted = new CoordinationForce({0, 1, 2});
    inverted->setDMax(0.3);
    inverted->setD0(0.4);
    ASSERT_COORDINATION_ERROR(createContext(inverted));
    // Energy expressions that use unknown variables (one that does not parse is refused by the setter).
    CoordinationForce* unknown = new CoordinationForce({0, 1, 2});
    unknown->addGlobalParameter("k", 1.0);
    unknown->setEnergyExpression("k*cv*q");
    ASSERT_COORDINATION_ERROR_NAMING(createContext(unknown), "q");
    CoordinationForce* missingTable = new CoordinationForce({0, 1, 2});
    missingTable->setEnergyExpression("bias(cv)");
    ASSERT_COORDINATION_ERROR(createContext(missingTable));
    // Tables with a range or values that are not finite (OpenMM itself accepts them).
    CoordinationForce* infiniteMax = new CoordinationForce({0, 1, 2});
    infiniteMax->addTabulatedFunction("bias", new Continuous1DFunction({0.0, 1.0, 2.0}, 0.0, INFINITY));
    infiniteMax->setEnergyExpression("bias(cv)");
    ASSERT_COORDINATION_ERROR_NAMING(createContext(infiniteMax), "inf");
    CoordinationForce* infiniteValue = new CoordinationForce({0, 1, 2});
    infiniteValue->addTabulatedFunction("bias", new Continuous1DFunction({0.0, INFINITY, 2.0}, 0.0, 3.0));
    infiniteValue->setEnergyExpression("bias(cv)");
    ASSERT_COORDINATION_ERROR_NAMING(createContext(infiniteValue), "index 1");
}

void testRuntimeErrors() {
    System system;
    for (int i = 0; i < 6; i++)
        system.addParticle(1.0);
    CoordinationForce* force = new CoordinationForce({0, 1, 2}, {3, 4});
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    vector<Vec3> positions = modePositions();
    context.setPositions(positions);
    // Histogram arguments.
    ASSERT_COORDINATION_ERROR(force->getPairHistogram(context, 0, 1.0));
    ASSERT_COORDINATION_ERROR_NAMING(force->getPairHistogram(context, -3, 1.0), "-3");
    ASSERT_COORDINATION_ERROR(force->getPairHistogram(context, 10, 0.0));
    ASSERT_COORDINATION_ERROR_NAMING(force->getPairHistogram(context, 10, -1.0), "-1");
    ASSERT_COORDINATION_ERROR(force->getPairHistogram(context, 10, NAN));
    ASSERT_COORDINATION_ERROR(force->accumulatePairHistogram(context, 0, 1.0));
    ASSERT_COORDINATION_ERROR(force->accumulatePairHistogram(context, 10, 0.0));
    // Histograms too large to allocate are refused before anything is allocated.
    ASSERT_COORDINATION_ERROR_NAMING(force->getPairHistogram(context, 1000000000, 1.0), "1000000000");
    ASSERT_COORDINATION_ERROR_NAMING(force->getPairHistogram(context, CoordinationForce::MaxHistogramBins+1, 1.0), "MaxHistogramBins");
    ASSERT_COORDINATION_ERROR_NAMING(force->accumulatePairHistogram(context, 1000000000, 1.0), "1000000000");
    ASSERT_EQUAL(0, force->getNumAccumulatedFrames(context));
    // A NaN position of a particle in a group gives an error (at once, or at the next energy read
    // on a GPU, the energy read that met it being NaN), not a finite energy.
    // (The CPU platform checks every position itself before any force is computed: there the
    // error is OpenMM's own.)
    positions[4] = Vec3(NAN, 0, 0);
    context.setPositions(positions);
    if (platform.getName() == "CPU") {
        bool thrown = false;
        try {
            context.getState(State::Energy | State::Forces);
        }
        catch (const OpenMMException& e) {
            thrown = (string(e.what()).find("NaN") != string::npos);
        }
        ASSERT(thrown);
    }
    else
        ASSERT_EVALUATION_ERROR(context.getState(State::Energy | State::Forces).getPotentialEnergy(), true, context, "particle 4");
    ASSERT_COORDINATION_ERROR_NAMING(force->getCollectiveVariableValue(context), "particle 4");
    positions[4] = Vec3(0.5, -0.2, 0.3);
    positions[1] = Vec3(0, INFINITY, 0);
    context.setPositions(positions);
    ASSERT_EVALUATION_ERROR(context.getState(State::Energy).getPotentialEnergy(), true, context, "particle 1");
    // The Context works again once the positions are finite.
    positions[1] = Vec3(0.21, 0.05, -0.1);
    context.setPositions(positions);
    ASSERT(isfinite(context.getState(State::Energy).getPotentialEnergy()));
}

/** A force in a Context of its own, on the six modePositions() particles. */
struct ForceInContext {
    System system;
    VerletIntegrator integrator;
    unique_ptr<Context> context;
    explicit ForceInContext(CoordinationForce* force) : integrator(0.001) {
        for (int i = 0; i < 6; i++)
            system.addParticle(1.0);
        system.addForce(force);
        context.reset(new Context(system, integrator, platform, properties));
        context->setPositions(modePositions());
    }
};

void testNonFiniteEnergy() {
    // A global parameter set to NaN in the Context.
    CoordinationForce* force = new CoordinationForce({0, 1, 2}, {3, 4});
    force->addGlobalParameter("k", 2.0);
    force->setEnergyExpression("k*cv");
    ForceInContext withK(force);
    Context* context = withK.context.get();
    double cv = force->getCollectiveVariableValue(*context);
    ASSERT_EQUAL_TOL(2*cv, context->getState(State::Energy).getPotentialEnergy(), tolerance);
    context->setParameter("k", NAN);
    ASSERT_EVALUATION_ERROR(context->getState(State::Energy).getPotentialEnergy(), true, *context, "k = nan");
    // Forces alone, and a step: the error comes at once (Reference), or with the next energy
    // read (a GPU, which reads nothing back during a step and adds no force meanwhile; a step
    // does not wait for the GPU either).
    ASSERT_EVALUATION_ERROR((context->getState(State::Forces), NAN), true, *context, "k*cv");
    ASSERT_EVALUATION_ERROR((withK.integrator.step(1), NAN), false, *context, "k = nan");
    context->setParameter("k", 3.0);
    ASSERT_EQUAL_TOL(3*cv, context->getState(State::Energy).getPotentialEnergy(), tolerance);
    // A global parameter added after the Context was created: the update names it and the remedy.
    force->addGlobalParameter("q", 1.0);
    force->setEnergyExpression("k*cv+q");
    ASSERT_COORDINATION_ERROR_NAMING(force->updateParametersInContext(*context), "CoordinationForce: updateParametersInContext: "
            "the global parameter \"q\" is not in the Context (it was added after the Context was created); call context.reinitialize");
    context->reinitialize(true);
    ASSERT_EQUAL_TOL(3*cv+1, context->getState(State::Energy).getPotentialEnergy(), tolerance);
    // A finite default whose energy overflows.
    CoordinationForce* huge = new CoordinationForce({0, 1, 2}, {3, 4});
    huge->addGlobalParameter("k", 1e300);
    huge->setEnergyExpression("k^2*cv");
    ForceInContext withHugeK(huge);
    ASSERT_EVALUATION_ERROR(withHugeK.context->getState(State::Energy).getPotentialEnergy(), true, *withHugeK.context, "k = 1e+300");
    ASSERT_EQUAL_TOL(cv, huge->getCollectiveVariableValue(*withHugeK.context), tolerance);
    // A table updated to an infinite value.
    CoordinationForce* biased = new CoordinationForce({0, 1, 2}, {3, 4});
    biased->addTabulatedFunction("bias", new Continuous1DFunction({1.0, 1.0, 1.0}, 0.0, 10.0));
    biased->setEnergyExpression("bias(cv)");
    ForceInContext withTable(biased);
    ASSERT_EQUAL_TOL(1.0, withTable.context->getState(State::Energy).getPotentialEnergy(), tolerance);
    dynamic_cast<Continuous1DFunction&>(biased->getTabulatedFunction(0)).setFunctionParameters({1.0, INFINITY, 1.0}, 0.0, 10.0);
    ASSERT_COORDINATION_ERROR_NAMING(biased->updateParametersInContext(*withTable.context), "bias");
    // A switching function that is not finite at some distance gives an error, not a NaN CV.
    CoordinationForce* custom = new CoordinationForce({0, 1, 2}, {3, 4});
    custom->setSwitchingFunction(CoordinationForce::Custom);
    custom->setCustomExpression("log(x-2)");
    ForceInContext withLog(custom);
    ASSERT_COORDINATION_ERROR_NAMING(custom->getCollectiveVariableValue(*withLog.context), "collective variable");
    ASSERT_EVALUATION_ERROR(withLog.context->getState(State::Energy).getPotentialEnergy(), true, *withLog.context, "collective variable");
}

void runErrorTests() {
    RUN_TEST(testSetterErrors);
    RUN_TEST(testContextErrors);
    RUN_TEST_LEAKING_CONTEXT(testContextIndexErrors);
    RUN_TEST(testRuntimeErrors);
    RUN_TEST(testNonFiniteEnergy);
}
