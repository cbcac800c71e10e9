#include "CpuCoordinationKernels.h"
#include "CpuCoordinationCV.h"

using namespace CoordinationPlugin;

ReferenceCoordinationCV* CpuCalcCoordinationForceKernel::createCV(const CoordinationForce& force) const {
    return new CpuCoordinationCV(force);
}

ReferenceCoordinationCV* CpuCalcCoordinationBiasForceKernel::createCV(const CoordinationForce& force) const {
    return new CpuCoordinationCV(force);
}
