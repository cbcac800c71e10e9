#include "openmm/reference/ReferencePlatform.h"
#include "ReferenceCoordinationKernelFactory.h"
#include "../../../tests/TestCoordinationForce.h"

Platform& platform = Platform::getPlatformByName("Reference");
map<string, string> properties;
double tolerance = 1e-10;

int main() {
    try {
        registerCoordinationReferenceKernelFactories();
        runCoordinationTests();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
