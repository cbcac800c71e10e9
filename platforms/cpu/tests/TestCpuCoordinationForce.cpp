/* The shared test body on the CPU platform with the number of threads named on the command line
 * (default 2); the kernels compute in double precision, so the tolerance is the Reference one. */
#include "CpuCoordinationKernelFactory.h"
#include "ReferenceCoordinationKernelFactory.h"
#include "CpuPlatform.h"
#include "../../../tests/TestCoordinationForce.h"
#include "TestCpuCoordinationDeterminism.h"

/** The CPU platform; a test binary loads no plugins, so register it if needed. */
static Platform& cpuPlatform() {
    try {
        return Platform::getPlatformByName("CPU");
    }
    catch (const OpenMMException&) {
        Platform* cpu = new CpuPlatform();
        Platform::registerPlatform(cpu);
        return *cpu;
    }
}

Platform& platform = cpuPlatform();
map<string, string> properties;
double tolerance = 1e-10;

int main(int argc, char* argv[]) {
    try {
        properties["Threads"] = (argc > 1 ? argv[1] : "2");
        if (argc > 2)
            testFilter() = argv[2];
        registerCoordinationReferenceKernelFactories();
        registerCoordinationCpuKernelFactories();
        cout << "CPU, " << properties["Threads"] << " threads" << endl;
        runCoordinationTests();
        runCpuDeterminismTests();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
