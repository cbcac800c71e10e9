// Prints the version of the OpenMM library it links against; CMake runs it to check the version.
#include "OpenMM.h"
#include <iostream>

int main() {
    std::cout << OpenMM::Platform::getOpenMMVersion();
    return 0;
}
