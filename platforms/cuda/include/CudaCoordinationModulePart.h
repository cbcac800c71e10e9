#ifndef CUDA_COORDINATION_MODULE_PART_H_
#define CUDA_COORDINATION_MODULE_PART_H_

#include "internal/windowsExportCoordination.h"
#include <map>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * A part of a module: source, the defines it is compiled with, and the names of its kernels.
 * CudaCoordinationProgram::assemble() puts several in one module.
 */
struct OPENMM_EXPORT_COORDINATION CudaCoordinationModulePart {
    std::string source;
    std::map<std::string, std::string> defines;
    std::vector<std::string> kernels;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_MODULE_PART_H_*/
