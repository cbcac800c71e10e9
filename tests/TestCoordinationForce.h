/* The CoordinationForce test suite shared by every platform. A platform's test main defines
 *
 *     Platform& platform;              // the platform under test
 *     map<string, string> properties;  // its properties, e.g. {"Precision": "single"}
 *     double tolerance;                // relative tolerance of values (forces get 10x)
 *
 * registers the plugin's kernels (the Reference ones too: several tests compare against the
 * Reference platform) and calls runCoordinationTests(). */

#include "CoordinationTestUtilities.h"
#include "TestCoordinationSwitching.h"
#include "TestCoordinationModes.h"
#include "TestCoordinationEnergy.h"
#include "TestCoordinationHistogram.h"
#include "TestCoordinationErrors.h"
#include "TestCoordinationRandom.h"
#include "TestCoordinationCells.h"
#include "TestCoordinationPairParameters.h"
#include "TestCoordinationBias.h"
#include "TestCoordinationCVStatistics.h"
#include "TestCoordinationBiasDistance.h"
#include "TestCoordinationWarnings.h"
#include "TestCoordinationParticleFunctions.h"

void runCoordinationTests() {
    runSwitchingTests();
    runModeTests();
    runEnergyTests();
    runHistogramTests();
    runErrorTests();
    runRandomTests();
    runCellTests();
    runPairParameterTests();
    runBiasTests();
    runBiasDistanceTests();
    runCVStatisticsTests();
    runWarningTests();
    runParticleFunctionTests();
}
