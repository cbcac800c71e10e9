/* Tests of the warning for a CoordinationForce without periodic boundary conditions in a periodic
 * System (issue 41 item 6): when it is given, what it names, once per force, and when it is not
 * (periodicity chosen explicitly, a System without periodic forces), for CoordinationForce and the
 * CVs of CoordinationBiasForce, through serialization, on every platform; and of its converse for
 * the distances of a CoordinationBiasForce, periodic by default, in a System that is not. */

#include "CoordinationTestUtilities.h"
#include "CoordinationBiasForce.h"
#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationWarnings.h"
#include "openmm/NonbondedForce.h"
#include "openmm/serialization/XmlSerializer.h"
#include <memory>

/** The warnings received by captureWarning() since the last clear. */
static vector<string> capturedWarnings;

static void captureWarning(const string& message) {
    capturedWarnings.push_back(message);
}

/**
 * A 3 nm periodic box: a "Na+" (particle 0) near a corner, an "O" (particle 1) 0.2 nm from it
 * across the box's face (2.8 nm away without periodic images), a periodic NonbondedForce (zero
 * charges, no interactions) unless periodicSystem is false, and the force.
 */
static System* cornerSystem(Force* force, bool periodicSystem) {
    System* system = new System();
    system->setDefaultPeriodicBoxVectors(Vec3(3, 0, 0), Vec3(0, 3, 0), Vec3(0, 0, 3));
    NonbondedForce* nonbonded = new NonbondedForce();
    nonbonded->setNonbondedMethod(periodicSystem ? NonbondedForce::CutoffPeriodic : NonbondedForce::NoCutoff);
    nonbonded->setCutoffDistance(1.0);
    for (int i = 0; i < 2; i++) {
        system->addParticle(20.0);
        nonbonded->addParticle(0.0, 0.3, 0.0);
    }
    system->addForce(nonbonded);
    system->addForce(force);
    return system;
}

static vector<Vec3> cornerPositions() {
    return {Vec3(0.1, 0.1, 0.1), Vec3(2.9, 0.1, 0.1)};
}

/** The CV of a force in the corner System, warnings captured. */
static double cornerCV(System& system, const CoordinationForce& force) {
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(cornerPositions());
    return force.getCollectiveVariableValue(context);
}

static void assertWarned(int count, const string& text) {
    ASSERT_EQUAL(count, capturedWarnings.size());
    for (const string& message : capturedWarnings)
        if (message.find(text) == string::npos || message.find("setUsesPeriodicBoundaryConditions(True)") == string::npos
                || message.find("setUsesPeriodicBoundaryConditions(False)") == string::npos)
            throwException(__FILE__, __LINE__, "the warning does not name \""+text+"\" and the calls: "+message);
}

/** The default: not periodic, a warning naming the force, its index and the periodic force, once per force. */
void testPeriodicWarningGiven() {
    capturedWarnings.clear();
    CoordinationForce* force = new CoordinationForce({0}, {1});
    force->setName("ion-water");
    unique_ptr<System> system(cornerSystem(force, true));
    ASSERT(!force->getPeriodicitySet());
    double cv = cornerCV(*system, *force);
    assertWarned(1, "CoordinationForce \"ion-water\" (force 1 of the System)");
    ASSERT(capturedWarnings[0].find("force 0 of the System (\""+system->getForce(0).getName()+"\")") != string::npos);
    // The CV the warning is about: the pair 2.8 nm apart without periodic images.
    double dsdr;
    ASSERT_EQUAL_TOL(force->evaluateSwitchingFunction(2.8, dsdr), cv, 1e-5);
    // Once per force: a second Context warns no more.
    cornerCV(*system, *force);
    ASSERT_EQUAL(1, capturedWarnings.size());
    // Choosing periodic boundaries: the CV across the face, no warning.
    capturedWarnings.clear();
    CoordinationForce* periodic = new CoordinationForce({0}, {1});
    periodic->setUsesPeriodicBoundaryConditions(true);
    unique_ptr<System> periodicSystem(cornerSystem(periodic, true));
    ASSERT_EQUAL_TOL(periodic->evaluateSwitchingFunction(0.2, dsdr), cornerCV(*periodicSystem, *periodic), 1e-5);
    ASSERT_EQUAL(0, capturedWarnings.size());
}

/** No warning where the periodicity was chosen, or where the System has no periodic force. */
void testPeriodicWarningNotGiven() {
    capturedWarnings.clear();
    CoordinationForce* chosen = new CoordinationForce({0}, {1});
    chosen->setUsesPeriodicBoundaryConditions(false);
    ASSERT(chosen->getPeriodicitySet());
    unique_ptr<System> system(cornerSystem(chosen, true));
    cornerCV(*system, *chosen);
    CoordinationForce* isolated = new CoordinationForce({0}, {1});
    unique_ptr<System> freeSystem(cornerSystem(isolated, false));
    cornerCV(*freeSystem, *isolated);
    ASSERT_EQUAL(0, capturedWarnings.size());
    ASSERT_EQUAL("", CoordinationForceImpl::periodicBoundaryWarning(*isolated, *freeSystem, "this"));
    ASSERT_EQUAL("", CoordinationForceImpl::periodicBoundaryWarning(*chosen, *system, "this"));
    CoordinationForce unset({0}, {1});
    ASSERT(CoordinationForceImpl::periodicBoundaryWarning(unset, *system, "this").find("this does not use") == 0);
}

/** Serialization keeps whether the periodicity was chosen: the warning survives a copy, and so does the choice. */
void testPeriodicWarningSerialized() {
    CoordinationForce unset({0}, {1}), chosen({0}, {1});
    chosen.setUsesPeriodicBoundaryConditions(false);
    unique_ptr<CoordinationForce> unsetCopy(XmlSerializer::clone<CoordinationForce>(unset));
    unique_ptr<CoordinationForce> chosenCopy(XmlSerializer::clone<CoordinationForce>(chosen));
    ASSERT(!unsetCopy->getPeriodicitySet());
    ASSERT(chosenCopy->getPeriodicitySet());
    ASSERT(!chosenCopy->usesPeriodicBoundaryConditions());
    capturedWarnings.clear();
    CoordinationForce* copy = XmlSerializer::clone<CoordinationForce>(unset);
    unique_ptr<System> system(cornerSystem(copy, true));
    cornerCV(*system, *copy);
    assertWarned(1, "CoordinationForce");
}

/** A CV of a CoordinationBiasForce: the warning names the bias force and the CV, once per CV. */
void testPeriodicWarningBias() {
    capturedWarnings.clear();
    CoordinationBiasForce* bias = new CoordinationBiasForce("2*c1+c2");
    bias->addCollectiveVariable("c1", new CoordinationForce({0}, {1}));
    bias->addCollectiveVariable("c2", new CoordinationForce({1}, {0}));
    unique_ptr<System> system(cornerSystem(bias, true));
    for (int repeat = 0; repeat < 2; repeat++) {
        VerletIntegrator integrator(0.001);
        Context context(*system, integrator, platform, properties);
    }
    assertWarned(2, "CoordinationBiasForce \""+bias->getName()+"\" (force 1 of the System), its collective variable \"c");
    ASSERT(capturedWarnings[0].find("\"c1\"") != string::npos);
    ASSERT(capturedWarnings[1].find("\"c2\"") != string::npos);
    // CVs that chose no periodic images: none.
    capturedWarnings.clear();
    CoordinationBiasForce* chosen = new CoordinationBiasForce("c1");
    CoordinationForce* cv = new CoordinationForce({0}, {1});
    cv->setUsesPeriodicBoundaryConditions(false);
    chosen->addCollectiveVariable("c1", cv);
    unique_ptr<System> chosenSystem(cornerSystem(chosen, true));
    VerletIntegrator integrator(0.001);
    Context context(*chosenSystem, integrator, platform, properties);
    ASSERT_EQUAL(0, capturedWarnings.size());
}

/**
 * A bias of the distance "d" between particles 0 and 1 (periodic as given) beside a coordination
 * number that is not periodic, alone in a System of two particles 1.9 nm apart along x whose
 * default box is OpenMM's 2 nm cube unless box is given; the distance in a Context, warnings captured.
 */
static double distanceInSystem(bool usePeriodic, const Vec3* box, bool periodicCV = false) {
    System system;
    for (int i = 0; i < 2; i++)
        system.addParticle(1.0);
    if (box != NULL)
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    CoordinationBiasForce* bias = new CoordinationBiasForce("d+c");
    bias->setName("pulling");
    bias->addDistance("d", 0, 1, -1, usePeriodic);
    CoordinationForce* cv = new CoordinationForce({0}, {1});
    cv->setUsesPeriodicBoundaryConditions(periodicCV);
    bias->addCollectiveVariable("c", cv);
    system.addForce(bias);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions({Vec3(0, 0, 0), Vec3(1.9, 0, 0)});
    return bias->getCollectiveVariableValues(context)[0];
}

/**
 * A distance that takes the nearest image (addDistance()'s default) where nothing else in the
 * System is periodic and its box is OpenMM's untouched 2 nm cube: the value is wrapped into that
 * box, and the warning names the force, the distance and the calls; once per force. No warning
 * for a plain distance, a box the System was given, or a periodic CV beside it.
 */
void testPeriodicDistanceWarning() {
    capturedWarnings.clear();
    ASSERT_EQUAL_TOL(0.1, distanceInSystem(true, NULL), 1e-5);
    ASSERT_EQUAL(1, capturedWarnings.size());
    for (const string& text : {string("CoordinationBiasForce \"pulling\" (force 0 of the System): the distance \"d\" takes the nearest"),
            string("2 nm cube"), string("usePeriodic=False"), string("setDefaultPeriodicBoxVectors")})
        if (capturedWarnings[0].find(text) == string::npos)
            throwException(__FILE__, __LINE__, "the warning does not say \""+text+"\": "+capturedWarnings[0]);
    capturedWarnings.clear();
    ASSERT_EQUAL_TOL(1.9, distanceInSystem(false, NULL), 1e-5);
    const Vec3 box[3] = {Vec3(5, 0, 0), Vec3(0, 5, 0), Vec3(0, 0, 5)};
    ASSERT_EQUAL_TOL(1.9, distanceInSystem(true, box), 1e-5);
    ASSERT_EQUAL_TOL(0.1, distanceInSystem(true, NULL, true), 1e-5);
    ASSERT_EQUAL(0, capturedWarnings.size());
    // Two distances: one warning naming both; once per force.
    System system;
    for (int i = 0; i < 3; i++)
        system.addParticle(1.0);
    CoordinationBiasForce* bias = new CoordinationBiasForce("d1+d2+d3");
    bias->addDistance("d1", 0, 1);
    bias->addDistance("d2", 1, 2, -1, false);
    bias->addDistance("d3", 0, 2, 0);
    system.addForce(bias);
    for (int repeat = 0; repeat < 2; repeat++) {
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
    }
    ASSERT_EQUAL(1, capturedWarnings.size());
    ASSERT(capturedWarnings[0].find("the distances \"d1\" and \"d3\" take the nearest") != string::npos);
}

/** Without a handler the warning goes to stderr, one line starting "Warning: ". */
void testPeriodicWarningStderr() {
    CoordinationWarnings::Handler previous = CoordinationWarnings::setHandler(NULL);
    stringstream err;
    streambuf* saved = cerr.rdbuf(err.rdbuf());
    try {
        CoordinationForce* force = new CoordinationForce({0}, {1});
        unique_ptr<System> system(cornerSystem(force, true));
        cornerCV(*system, *force);
    }
    catch (...) {
        cerr.rdbuf(saved);
        CoordinationWarnings::setHandler(previous);
        throw;
    }
    cerr.rdbuf(saved);
    CoordinationWarnings::setHandler(previous);
    string text = err.str();
    ASSERT(text.find("Warning: CoordinationForce \"") == 0);
    ASSERT(text.find("setUsesPeriodicBoundaryConditions(True)") != string::npos);
    ASSERT_EQUAL(1, count(text.begin(), text.end(), '\n'));
}

void runWarningTests() {
    CoordinationWarnings::Handler previous = CoordinationWarnings::setHandler(captureWarning);
    try {
        RUN_TEST(testPeriodicWarningGiven);
        RUN_TEST(testPeriodicWarningNotGiven);
        RUN_TEST(testPeriodicWarningSerialized);
        RUN_TEST(testPeriodicWarningBias);
        RUN_TEST(testPeriodicDistanceWarning);
    }
    catch (...) {
        CoordinationWarnings::setHandler(previous);
        throw;
    }
    CoordinationWarnings::setHandler(previous);
    RUN_TEST(testPeriodicWarningStderr);
}
