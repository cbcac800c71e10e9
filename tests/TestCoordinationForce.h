/* The test body shared by every platform. A platform's test main sets `platform` (and its
 * properties, such as the CUDA precision) and calls runCoordinationTests(). */

#include "CoordinationForce.h"
#include "openmm/Context.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/internal/AssertionUtilities.h"
#include "sfmt/SFMT.h"
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

extern Platform& platform;
extern map<string, string> properties;
/** The relative tolerance of values computed by the platform under test. */
extern double tolerance;

void testOneGroupRational() {
    // Three particles on a line: distances 0.2, 0.3, 0.5 nm; r0 = 0.3, n = 6, m = 12, no cutoff.
    System system;
    for (int i = 0; i < 3; i++)
        system.addParticle(1.0);
    CoordinationForce* force = new CoordinationForce({0, 1, 2});
    force->setDMax(INFINITY);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions({Vec3(0, 0, 0), Vec3(0.2, 0, 0), Vec3(0.5, 0, 0)});
    double expected = 0.0;
    for (double r : {0.2, 0.3, 0.5})
        expected += 1.0/(1.0+pow(r/0.3, 6));
    State state = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(expected, state.getPotentialEnergy(), tolerance);
    ASSERT_EQUAL_TOL(expected, force->getCollectiveVariableValue(context), tolerance);
}

void runCoordinationTests() {
    testOneGroupRational();
}
