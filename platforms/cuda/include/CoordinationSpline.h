#ifndef OPENMM_COORDINATION_SPLINE_H_
#define OPENMM_COORDINATION_SPLINE_H_

#include "openmm/TabulatedFunction.h"
#include <vector>
#include "internal/windowsExportCoordination.h"

namespace CoordinationPlugin {

/**
 * The spline coefficients of a Continuous1DFunction, Continuous2DFunction or
 * Continuous3DFunction, as the CUDA platform uploads them for its tabulated functions: the same
 * splines as OpenMM's SplineFitter (natural cubic splines along each axis, the derivatives and
 * cross derivatives of the grid taken from them in SplineFitter's order, and the bicubic or
 * tricubic Hermite patch of each grid cell), in the float layout that
 * ExpressionUtilities::computeFunctionCoefficients() gives and the code ExpressionUtilities
 * generates reads, or in double precision in the same layout, which the chain rule of a Context in
 * double precision reads (CudaCoordinationProgram::getChainRulePart()). Periodic tables take
 * OpenMM's own SplineFitter.
 *
 * Metadynamics replaces the table of a CoordinationBiasForce at every hill. SplineFitter spends
 * about 4 ms on a 121 x 121 grid (a vector per cell, a binary search per derivative, a dense
 * 16 x 16 product per cell); here the tridiagonal systems are factored once per axis, and each
 * patch is the tensor product of the 4 x 4 Hermite matrix with its corner data. A table whose
 * values alone change (CoordinationBiasForce::updateTabulatedFunctionInContext()) is fitted on
 * the device instead, by the same equations (CudaCoordinationTableFit).
 */
class OPENMM_EXPORT_COORDINATION CoordinationSpline {
public:
    /**
     * The coefficients of a tabulated function, four floats an element.
     *
     * @param function   a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction
     * @param[out] width the floats an element (4)
     * @return for 1-D, (y_i, y_i+1, y''_i/6, y''_i+1/6) per interval; for 2-D, the 16
     *         coefficients of each cell (x fastest), c[4i+j] multiplying u^i v^j; for 3-D, the 64
     *         of each cell, c[i+4j+16k] multiplying u^i v^j w^k (u, v, w in [0, 1] across the cell)
     * Throws OpenMMException for any other type of function.
     */
    static std::vector<float> computeCoefficients(const OpenMM::TabulatedFunction& function, int& width);
    /**
     * The same coefficients in double precision (the layout of computeCoefficients(), not rounded to
     * float), which a Context in double precision uploads and its chain rule reads.
     *
     * @param function   a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction
     * @param[out] width the doubles an element (4)
     */
    static std::vector<double> computeDoubleCoefficients(const OpenMM::TabulatedFunction& function, int& width);
    /**
     * The axis of a table as the natural splines along it use it, for fitting them elsewhere (the
     * device's fit, kernels/spline.cu): 4n doubles, the n points from min to max, then a, gamma
     * and pivot of the factored tridiagonal matrix of their second derivatives, each n long.
     */
    static std::vector<double> getAxisFactors(double min, double max, int n);
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_SPLINE_H_*/
