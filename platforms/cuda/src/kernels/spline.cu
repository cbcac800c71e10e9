/**
 * The natural cubic splines of a table, fitted on the device (CudaCoordinationTableFit): the
 * equations, the order of operations and the layout of the host's CoordinationSpline, in double
 * precision, the coefficients written as the chain rule reads them: rounded to float as the host rounds
 * them, or in double precision where the Context is (TableCoefficient). The grid holds the table's
 * values followed by its derivatives, each a grid of the same size:
 *   1-D: values, second derivatives;
 *   2-D: values, d/dx, d/dy, d2/dxdy;
 *   3-D: values, d/dx, d/dy, d/dz, d2/dxdy, d2/dydz, d2/dxdz, d3/dxdydz.
 */

/**
 * Along one axis of a grid, for every line of n points along it (numLines of them; line l starts
 * at (l/stride)*stride*n + l%stride, and its points are stride apart), the derivative of the
 * natural cubic spline through in[] at each point (or, if second is nonzero, its second
 * derivative), written to the same places of out[]. One block a line: its threads load the line,
 * the first solves the tridiagonal system (a recurrence), then they all differentiate.
 *
 * axis holds 4n doubles: the points x, and a, gamma and pivot of the factored tridiagonal matrix
 * of the second derivatives (CoordinationSpline::getAxisFactors()). With useShared, the line, its
 * second derivatives and the axis are in 6n doubles of dynamic shared memory; otherwise (a long
 * axis) scratch holds 2n doubles a block and the axis is read where it is.
 */
/** The type of a coefficient: double in a Context of double precision (CoordinationSpline::computeDoubleCoefficients()), else float. */
#ifdef USE_DOUBLE_PRECISION
typedef double TableCoefficient;
#else
typedef float TableCoefficient;
#endif

extern "C" __global__ void fitSplineLines(const double* RESTRICT in, double* RESTRICT out, double* RESTRICT scratch,
        const double* RESTRICT axis, int n, int stride, int numLines, int second, int useShared) {
    extern __shared__ double cache[];
    double* y = (useShared ? cache : scratch+2*(size_t) n*blockIdx.x);
    double* m = y+n;
    const double* factors = axis;
    if (useShared) {
        for (int i = threadIdx.x; i < 4*n; i += blockDim.x)
            cache[2*n+i] = axis[i];
        factors = cache+2*n;
    }
    const double* x = factors;
    const double* a = factors+n;
    const double* gamma = factors+2*n;
    const double* pivot = factors+3*n;
    for (int line = blockIdx.x; line < numLines; line += gridDim.x) {
        const size_t start = (size_t) (line/stride)*stride*n+line%stride;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            y[i] = in[start+(size_t) i*stride];
        __syncthreads();
        if (threadIdx.x == 0) {
            // Forward elimination (rows 0 and n-1: y'' = 0), then back substitution.
            double previous = 0.0;
            m[0] = previous;
            for (int i = 1; i < n; i++) {
                double rhs = 0.0;
                if (i < n-1)
                    rhs = 6.0*((y[i+1]-y[i])/(x[i+1]-x[i])-(y[i]-y[i-1])/(x[i]-x[i-1]));
                previous = (rhs-a[i]*previous)/pivot[i];
                m[i] = previous;
            }
            for (int i = n-2; i >= 0; i--) {
                previous = m[i]-gamma[i+1]*previous;
                m[i] = previous;
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            double value;
            if (second)
                value = m[i];
            else {
                // The interval [lower, lower+1] holding x[i] (the last point: the last interval).
                int lower = (i < n-1 ? i : n-2);
                double dx = x[lower+1]-x[lower], u = (x[lower+1]-x[i])/dx, v = 1.0-u, dudx = -1.0/dx;
                value = dudx*y[lower]-dudx*y[lower+1]+((1.0-3.0*u*u)*m[lower]+(3.0*v*v-1.0)*m[lower+1])*dx/6.0;
            }
            out[start+(size_t) i*stride] = value;
        }
    }
}

/** The cubic on [0, 1] with values f0, f1 and derivatives d0, d1 (times the interval) at its ends. */
inline DEVICE void hermite(double f0, double f1, double d0, double d1, double* out) {
    out[0] = f0;
    out[1] = d0;
    out[2] = -3.0*f0+3.0*f1-2.0*d0-d1;
    out[3] = 2.0*f0-2.0*f1+d0+d1;
}

/** One-dimensional table of n points: per interval, its end values and second derivatives over 6. */
extern "C" __global__ void fitSplineCoefficients1D(const double* RESTRICT grid, TableCoefficient* RESTRICT coefficients, int n) {
    for (int i = blockIdx.x*blockDim.x+threadIdx.x; i < n-1; i += blockDim.x*gridDim.x) {
        coefficients[4*i] = (TableCoefficient) grid[i];
        coefficients[4*i+1] = (TableCoefficient) grid[i+1];
        coefficients[4*i+2] = (TableCoefficient) (grid[n+i]/6.0);
        coefficients[4*i+3] = (TableCoefficient) (grid[n+i+1]/6.0);
    }
}

/** Two-dimensional table of nx by ny points: per cell, the 16 coefficients of its bicubic patch. */
extern "C" __global__ void fitSplineCoefficients2D(const double* RESTRICT grid, TableCoefficient* RESTRICT coefficients,
        const double* RESTRICT xAxis, const double* RESTRICT yAxis, int nx, int ny) {
    const size_t size = (size_t) nx*ny;
    // The grid of the derivative of orders (ox, oy): values, d/dx, d/dy, d2/dxdy.
    const int derivative[2][2] = {{0, 2}, {1, 3}};
    for (int cell = blockIdx.x*blockDim.x+threadIdx.x; cell < (nx-1)*(ny-1); cell += blockDim.x*gridDim.x) {
        int i = cell%(nx-1), j = cell/(nx-1);
        double width[2] = {xAxis[i+1]-xAxis[i], yAxis[j+1]-yAxis[j]}, corner[4][4], alongX[4][4], column[4];
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++) {
                int ox = p/2, oy = q/2;
                size_t point = (i+p%2)+(j+q%2)*(size_t) nx;
                corner[p][q] = grid[derivative[ox][oy]*size+point]*(ox ? width[0] : 1.0)*(oy ? width[1] : 1.0);
            }
        for (int q = 0; q < 4; q++) {
            hermite(corner[0][q], corner[1][q], corner[2][q], corner[3][q], column);
            for (int k = 0; k < 4; k++)
                alongX[k][q] = column[k];
        }
        TableCoefficient* out = coefficients+16*(size_t) cell;
        for (int k = 0; k < 4; k++) {
            hermite(alongX[k][0], alongX[k][1], alongX[k][2], alongX[k][3], column);
            for (int l = 0; l < 4; l++)
                out[4*k+l] = (TableCoefficient) column[l];
        }
    }
}

/** Three-dimensional table of nx by ny by nz points: per cell, the 64 coefficients of its tricubic patch. */
extern "C" __global__ void fitSplineCoefficients3D(const double* RESTRICT grid, TableCoefficient* RESTRICT coefficients,
        const double* RESTRICT xAxis, const double* RESTRICT yAxis, const double* RESTRICT zAxis, int nx, int ny, int nz) {
    const size_t size = (size_t) nx*ny*nz, nxy = (size_t) nx*ny;
    // The grid of the derivative of orders (ox, oy, oz): values, x, y, z, xy, yz, xz, xyz.
    const int derivative[2][2][2] = {{{0, 3}, {2, 5}}, {{1, 6}, {4, 7}}};
    const int cells = (nx-1)*(ny-1)*(nz-1);
    for (int cell = blockIdx.x*blockDim.x+threadIdx.x; cell < cells; cell += blockDim.x*gridDim.x) {
        int i = cell%(nx-1), j = (cell/(nx-1))%(ny-1), k = cell/((nx-1)*(ny-1));
        double width[3] = {xAxis[i+1]-xAxis[i], yAxis[j+1]-yAxis[j], zAxis[k+1]-zAxis[k]};
        double corner[4][4][4], step[4][4][4], column[4];
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++)
                for (int r = 0; r < 4; r++) {
                    int ox = p/2, oy = q/2, oz = r/2;
                    size_t point = (i+p%2)+(j+q%2)*(size_t) nx+(k+r%2)*nxy;
                    corner[p][q][r] = grid[derivative[ox][oy][oz]*size+point]*(ox ? width[0] : 1.0)*(oy ? width[1] : 1.0)*
                            (oz ? width[2] : 1.0);
                }
        // The Hermite matrix along x (corner to step), then y (step to corner), then z (to the output).
        for (int q = 0; q < 4; q++)
            for (int r = 0; r < 4; r++) {
                hermite(corner[0][q][r], corner[1][q][r], corner[2][q][r], corner[3][q][r], column);
                for (int m = 0; m < 4; m++)
                    step[m][q][r] = column[m];
            }
        for (int m = 0; m < 4; m++)
            for (int r = 0; r < 4; r++) {
                hermite(step[m][0][r], step[m][1][r], step[m][2][r], step[m][3][r], column);
                for (int n = 0; n < 4; n++)
                    corner[m][n][r] = column[n];
            }
        TableCoefficient* out = coefficients+64*(size_t) cell;
        for (int m = 0; m < 4; m++)
            for (int n = 0; n < 4; n++) {
                hermite(corner[m][n][0], corner[m][n][1], corner[m][n][2], corner[m][n][3], column);
                for (int l = 0; l < 4; l++)
                    out[m+4*n+16*l] = (TableCoefficient) column[l];
            }
    }
}
