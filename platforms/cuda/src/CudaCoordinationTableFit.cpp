#include "CudaCoordinationTableFit.h"
#include "CoordinationSpline.h"
#include "CudaCoordinationProgram.h"
#include "openmm/OpenMMException.h"
#include <algorithm>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

CudaCoordinationTableFit::CudaCoordinationTableFit(CudaContext& cu) : cu(cu) {
    cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.getDevice());
    CUmodule module = cu.createModule(CudaCoordinationProgram::assemble({CudaCoordinationProgram::getSplinePart()}, cu));
    linesKernel = cu.getKernel(module, CudaCoordinationProgram::getKernelName("fitSplineLines", 0));
    for (int d = 0; d < 3; d++)
        coefficientKernels[d] = cu.getKernel(module, CudaCoordinationProgram::getKernelName("fitSplineCoefficients"+to_string(d+1)+"D", 0));
}

bool CudaCoordinationTableFit::canFit(const TabulatedFunction& table) {
    return !table.getPeriodic() && (dynamic_cast<const Continuous1DFunction*>(&table) != NULL ||
            dynamic_cast<const Continuous2DFunction*>(&table) != NULL || dynamic_cast<const Continuous3DFunction*>(&table) != NULL);
}

void CudaCoordinationTableFit::prepare(const vector<int>& newSizes, const vector<double>& newMins, const vector<double>& newMaxs) {
    if (newSizes == sizes && newMins == mins && newMaxs == maxs)
        return;
    sizes = newSizes;
    mins = newMins;
    maxs = newMaxs;
    size_t points = 1, axisLength = 0;
    for (int n : sizes) {
        points *= n;
        axisLength += 4*n;
    }
    int grids = (sizes.size() == 1 ? 2 : sizes.size() == 2 ? 4 : 8);
    if (grid.isInitialized())
        grid.resize(grids*points);
    else
        grid.initialize<double>(cu, grids*points, "coordinationTableGrid");
    // Each block of a line's solve keeps 2n doubles here where its axis is too long for shared memory.
    int longest = *max_element(sizes.begin(), sizes.end());
    size_t scratchSize = (6*longest*sizeof(double) > MaxSharedBytes ? 2*(size_t) longest*ScratchBlocks : 1);
    if (scratch.isInitialized())
        scratch.resize(scratchSize);
    else
        scratch.initialize<double>(cu, scratchSize, "coordinationTableScratch");
    vector<double> factors;
    for (int d = 0; d < sizes.size(); d++) {
        vector<double> axis = CoordinationSpline::getAxisFactors(mins[d], maxs[d], sizes[d]);
        factors.insert(factors.end(), axis.begin(), axis.end());
    }
    if (axes.isInitialized())
        axes.resize(axisLength);
    else
        axes.initialize<double>(cu, axisLength, "coordinationTableAxes");
    axes.upload(factors);
}

void CudaCoordinationTableFit::differentiate(int d, int from, int to, bool second) {
    int points = 1, stride = 1, offset = 0;
    for (int k = 0; k < sizes.size(); k++) {
        points *= sizes[k];
        if (k < d) {
            stride *= sizes[k];
            offset += 4*sizes[k];
        }
    }
    int n = sizes[d], numLines = points/n, secondFlag = (second ? 1 : 0);
    // Where one line and the axis fit in shared memory, a block takes `lines` lines at a time, so
    // many that the blocks are about twice the multiprocessors (at most 32, and as many as fit):
    // its recurrences run side by side. Otherwise a line a block, in scratch.
    int lines = 1, useShared = (6*n*sizeof(double) <= MaxSharedBytes ? 1 : 0), blocks = min(numLines, ScratchBlocks);
    if (useShared) {
        int fit = ((int) (MaxSharedBytes/sizeof(double))-4*n)/(2*n);
        lines = max(1, min(min(32, fit), numLines/(2*multiprocessors)));
        blocks = (numLines+lines-1)/lines;
    }
    int sharedSize = (useShared ? (4+2*lines)*n*sizeof(double) : 0);
    CUdeviceptr in = grid.getDevicePointer()+from*(size_t) points*sizeof(double);
    CUdeviceptr out = grid.getDevicePointer()+to*(size_t) points*sizeof(double);
    CUdeviceptr axis = axes.getDevicePointer()+offset*sizeof(double);
    void* args[] = {&in, &out, &scratch.getDevicePointer(), &axis, &n, &stride, &numLines, &secondFlag, &lines, &useShared};
    // Launched here, not by executeKernel(), which would hold the grid to a few blocks a multiprocessor.
    CUresult result = cuLaunchKernel(linesKernel, blocks, 1, 1, LineBlockSize, 1, 1, sharedSize, cu.getCurrentStream(),
            args, NULL);
    if (result != CUDA_SUCCESS)
        throw OpenMMException("CudaCoordinationTableFit: launching fitSplineLines failed (CUDA error "+to_string((int) result)+")");
}

void CudaCoordinationTableFit::fit(const TabulatedFunction& table, CudaArray& coefficients) {
    vector<double> values, newMins(3), newMaxs(3);
    vector<int> newSizes(3);
    int dimensions;
    if (auto one = dynamic_cast<const Continuous1DFunction*>(&table)) {
        one->getFunctionParameters(values, newMins[0], newMaxs[0]);
        newSizes[0] = values.size();
        dimensions = 1;
    }
    else if (auto two = dynamic_cast<const Continuous2DFunction*>(&table)) {
        two->getFunctionParameters(newSizes[0], newSizes[1], values, newMins[0], newMaxs[0], newMins[1], newMaxs[1]);
        dimensions = 2;
    }
    else {
        auto& three = dynamic_cast<const Continuous3DFunction&>(table);
        three.getFunctionParameters(newSizes[0], newSizes[1], newSizes[2], values, newMins[0], newMaxs[0], newMins[1], newMaxs[1],
                newMins[2], newMaxs[2]);
        dimensions = 3;
    }
    newSizes.resize(dimensions);
    newMins.resize(dimensions);
    newMaxs.resize(dimensions);
    prepare(newSizes, newMins, newMaxs);
    int cells = 1;
    for (int n : sizes)
        cells *= n-1;
    if (coefficients.getSize()*4 != (dimensions == 1 ? 4 : dimensions == 2 ? 16 : 64)*(size_t) cells)
        throw OpenMMException("CudaCoordinationTableFit: the coefficient array does not have the size of the table");
    grid.uploadSubArray(values.data(), 0, values.size());
    // The derivatives in CoordinationSpline's order (grid numbers of kernels/spline.cu).
    if (dimensions == 1)
        differentiate(0, 0, 1, true);
    else if (dimensions == 2) {
        differentiate(0, 0, 1, false);      // d/dx
        differentiate(1, 0, 2, false);      // d/dy
        differentiate(0, 2, 3, false);      // d/dx of d/dy
    }
    else {
        differentiate(0, 0, 1, false);      // x
        differentiate(1, 0, 2, false);      // y
        differentiate(2, 0, 3, false);      // z
        differentiate(0, 2, 4, false);      // xy: x of y
        differentiate(1, 3, 5, false);      // yz: y of z
        differentiate(2, 1, 6, false);      // xz: z of x
        differentiate(0, 5, 7, false);      // xyz: x of yz
    }
    CUdeviceptr axis[3] = {axes.getDevicePointer(), 0, 0};
    for (int d = 1; d < dimensions; d++)
        axis[d] = axis[d-1]+4*sizes[d-1]*sizeof(double);
    int n[3] = {sizes[0], dimensions > 1 ? sizes[1] : 1, dimensions > 2 ? sizes[2] : 1};
    CUdeviceptr coefficientPointer = coefficients.getDevicePointer();
    if (dimensions == 1) {
        void* args[] = {&grid.getDevicePointer(), &coefficientPointer, &n[0]};
        cu.executeKernel(coefficientKernels[0], args, cells, 128);
    }
    else if (dimensions == 2) {
        void* args[] = {&grid.getDevicePointer(), &coefficientPointer, &axis[0], &axis[1], &n[0], &n[1]};
        cu.executeKernel(coefficientKernels[1], args, cells, 128);
    }
    else {
        void* args[] = {&grid.getDevicePointer(), &coefficientPointer, &axis[0], &axis[1], &axis[2], &n[0], &n[1], &n[2]};
        cu.executeKernel(coefficientKernels[2], args, 16*cells, 16*CudaCoordinationProgram::SplineCells3D);
    }
}
