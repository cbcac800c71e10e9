/* The shared test body on the CUDA platform, in the precision named on the command line;
 * an optional second argument selects tests: comma-separated parts of their names, "shard:k/n"
 * (every n-th test, those that leak a context left out) or "leaks-context" (only those; see
 * RUN_TEST_LEAKING_CONTEXT in tests/CoordinationTestUtilities.h). */
#include "CudaCoordinationKernelFactory.h"
#include "ReferenceCoordinationKernelFactory.h"
#include "openmm/cuda/CudaPlatform.h"
#include "../../../tests/TestCoordinationForce.h"
#include "TestCudaCoordinationTuning.h"
#include "TestCudaCoordinationBiasPaths.h"

/** The CUDA platform; a test binary loads no plugins, so register it if needed. */
static Platform& cudaPlatform() {
    try {
        return Platform::getPlatformByName("CUDA");
    }
    catch (const OpenMMException&) {
        Platform* cuda = new CudaPlatform();
        Platform::registerPlatform(cuda);
        return *cuda;
    }
}

Platform& platform = cudaPlatform();
map<string, string> properties;
double tolerance;

int main(int argc, char* argv[]) {
    try {
        string precision = (argc > 1 ? argv[1] : "single");
        properties["Precision"] = precision;
        if (argc > 2)
            testFilter() = argv[2];
        tolerance = (precision == "double" ? 1e-8 : 2e-5);
        registerCoordinationReferenceKernelFactories();
        registerCoordinationCudaKernelFactories();
        cout << "CUDA, " << precision << " precision" << endl;
        runCoordinationTests();
        runCudaTuningTests();
        runCudaBiasPathTests();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
