#ifndef CUDA_COORDINATION_TABLE_FIT_H_
#define CUDA_COORDINATION_TABLE_FIT_H_

#include "openmm/TabulatedFunction.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * The spline coefficients of a table fitted on the GPU from its values (kernels/spline.cu): the
 * natural cubic splines of CoordinationSpline, by its equations, written in its layout (float, or double
 * in a Context of double precision) to
 * the array the chain rule reads. Only the values cross to the device (8 bytes a point, against 16
 * floats a cell of coefficients fitted on the host), and nothing is read back: this is how
 * CoordinationBiasForce::updateTabulatedFunctionInContext() refreshes a metadynamics or OPES bias.
 * Periodic tables are not fitted here (canFit()); the host fits them with OpenMM's SplineFitter.
 */
class CudaCoordinationTableFit {
public:
    /** Compile the fit's kernels (once per owner; OpenMM's kernel cache keeps them). */
    explicit CudaCoordinationTableFit(OpenMM::CudaContext& cu);
    /** Whether fit() handles a table: a Continuous1D/2D/3DFunction that is not periodic. */
    static bool canFit(const OpenMM::TabulatedFunction& table);
    /**
     * Fit a table's splines and write its coefficients (CoordinationSpline's layout) to an array.
     *
     * @param table         a table canFit() accepts
     * @param coefficients  the array of float4 (double4 in double precision) the chain rule reads, of the size for this table
     */
    void fit(const OpenMM::TabulatedFunction& table, OpenMM::CudaArray& coefficients);
private:
    /** The threads of a block of fitSplineLines. */
    static const int LineBlockSize = 128;
    /** The most blocks of fitSplineLines where a line is too long for shared memory (each does lines in turn beyond), and so of its scratch. */
    static const int ScratchBlocks = 1024;
    /** The shared memory a block of fitSplineLines may use (6n doubles for an axis of n points). */
    static const int MaxSharedBytes = 48*1024;
    /** Size the buffers and upload the axes for a table of these sizes and ranges (where they changed). */
    void prepare(const std::vector<int>& sizes, const std::vector<double>& mins, const std::vector<double>& maxs);
    /** Launch fitSplineLines along axis d of the grid, from grid number from to grid number to. */
    void differentiate(int d, int from, int to, bool second);
    OpenMM::CudaContext& cu;
    CUfunction linesKernel, coefficientKernels[3];
    int multiprocessors;
    /** The values and their derivatives (one grid each), the solver's scratch (long axes), the axes' factors. */
    OpenMM::CudaArray grid, scratch, axes;
    std::vector<int> sizes;
    std::vector<double> mins, maxs;
};

} // namespace CoordinationPlugin

#endif /*CUDA_COORDINATION_TABLE_FIT_H_*/
