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

/** The type of a coefficient: double in a Context of double precision (CoordinationSpline::computeDoubleCoefficients()), else float. */
#ifdef USE_DOUBLE_PRECISION
typedef double TableCoefficient;
#else
typedef float TableCoefficient;
#endif

/**
 * Line `line` of n points along an axis whose index has the given stride: where it starts in a grid.
 */
inline DEVICE size_t lineStart(int line, int n, int stride) {
    return (size_t) (line/stride)*stride*n+line%stride;
}

/**
 * Item k of `count` lines of n points: line *l of them, point *i. Along the axis of stride 1 a line's
 * points are adjacent in memory, along the others the lines are: consecutive k take adjacent places.
 */
inline DEVICE void linePoint(int k, int count, int n, int stride, int* l, int* i) {
    if (stride == 1) {
        *l = k/n;
        *i = k-(*l)*n;
    }
    else {
        *i = k/count;
        *l = k-(*i)*count;
    }
}

/**
 * Along one axis of a grid, for every line of n points along it (numLines of them; line l starts
 * at (l/stride)*stride*n + l%stride, and its points are stride apart), the derivative of the
 * natural cubic spline through in[] at each point (or, if second is nonzero, its second
 * derivative), written to the same places of out[] (another grid than in[]). A block takes `lines`
 * lines at a time: its threads load them and compute the right-hand sides of their tridiagonal
 * systems, a thread a line solves its system (a recurrence, the one part that is not parallel:
 * its division is all that remains in it), then they all differentiate.
 *
 * axis holds 4n doubles: the points x, and a, gamma and pivot of the factored tridiagonal matrix
 * of the second derivatives (CoordinationSpline::getAxisFactors()). With useShared, the axis, then
 * the lines and then their second derivatives are in (4 + 2 lines) n doubles of dynamic shared
 * memory; otherwise (a long axis: lines is 1) scratch holds 2n doubles a block and the axis is read
 * where it is. The operations are CoordinationSpline's, in its order.
 */
extern "C" __global__ void fitSplineLines(const double* RESTRICT in, double* RESTRICT out, double* RESTRICT scratch,
        const double* RESTRICT axis, int n, int stride, int numLines, int second, int lines, int useShared) {
    extern __shared__ double cache[];
    double* y = (useShared ? cache+4*n : scratch+2*(size_t) n*blockIdx.x);
    double* m = y+(size_t) lines*n;
    const double* factors = axis;
    if (useShared) {
        for (int i = threadIdx.x; i < 4*n; i += blockDim.x)
            cache[i] = axis[i];
        factors = cache;
    }
    const double* x = factors;
    const double* a = factors+n;
    const double* gamma = factors+2*n;
    const double* pivot = factors+3*n;
    for (int group = blockIdx.x*lines; group < numLines; group += gridDim.x*lines) {
        const int count = min(lines, numLines-group);
        __syncthreads();
        for (int k = threadIdx.x; k < count*n; k += blockDim.x) {
            int l, i;
            linePoint(k, count, n, stride, &l, &i);
            y[l*n+i] = in[lineStart(group+l, n, stride)+(size_t) i*stride];
        }
        __syncthreads();
        // The right-hand sides (rows 0 and n-1: y'' = 0).
        for (int k = threadIdx.x; k < count*n; k += blockDim.x) {
            int l, i;
            linePoint(k, count, n, stride, &l, &i);
            const double* line = y+l*n;
            m[l*n+i] = (i == 0 || i == n-1 ? 0.0 : 6.0*((line[i+1]-line[i])/(x[i+1]-x[i])-(line[i]-line[i-1])/(x[i]-x[i-1])));
        }
        __syncthreads();
        // Forward elimination, then back substitution, a thread a line.
        for (int l = threadIdx.x; l < count; l += blockDim.x) {
            double* solved = m+l*n;
            double previous = 0.0;
            solved[0] = previous;
            for (int i = 1; i < n; i++) {
                previous = (solved[i]-a[i]*previous)/pivot[i];
                solved[i] = previous;
            }
            for (int i = n-2; i >= 0; i--) {
                previous = solved[i]-gamma[i+1]*previous;
                solved[i] = previous;
            }
        }
        __syncthreads();
        for (int k = threadIdx.x; k < count*n; k += blockDim.x) {
            int l, i;
            linePoint(k, count, n, stride, &l, &i);
            const double* line = y+l*n;
            const double* ml = m+l*n;
            double value;
            if (second)
                value = ml[i];
            else {
                // The interval [lower, lower+1] holding x[i] (the last point: the last interval).
                int lower = (i < n-1 ? i : n-2);
                double dx = x[lower+1]-x[lower], u = (x[lower+1]-x[i])/dx, v = 1.0-u, dudx = -1.0/dx;
                value = dudx*line[lower]-dudx*line[lower+1]+((1.0-3.0*u*u)*ml[lower]+(3.0*v*v-1.0)*ml[lower+1])*dx/6.0;
            }
            out[lineStart(group+l, n, stride)+(size_t) i*stride] = value;
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

/**
 * Three-dimensional table of nx by ny by nz points: per cell, the 64 coefficients of its tricubic
 * patch, the Hermite matrix applied along x, then y, then z. Sixteen threads a cell, CELLS_3D cells
 * a block (CudaCoordinationProgram::SplineCells3D): along each axis a thread takes one of the 16
 * lines of 4 values, in registers, and hands the results to the next axis through shared memory;
 * along z, thread t writes coefficients t, t+16, t+32 and t+48 of its cell, so that a cell's 16
 * threads write 64 consecutive values.
 */
extern "C" __global__ void __launch_bounds__(16*CELLS_3D) fitSplineCoefficients3D(const double* RESTRICT grid,
        TableCoefficient* RESTRICT coefficients, const double* RESTRICT xAxis, const double* RESTRICT yAxis,
        const double* RESTRICT zAxis, int nx, int ny, int nz) {
    __shared__ double alongX[CELLS_3D][64], alongY[CELLS_3D][64];
    const size_t size = (size_t) nx*ny*nz, nxy = (size_t) nx*ny;
    // The grid of the derivative of orders (ox, oy, oz): values, x, y, z, xy, yz, xz, xyz.
    const int derivative[2][2][2] = {{{0, 3}, {2, 5}}, {{1, 6}, {4, 7}}};
    const int cells = (nx-1)*(ny-1)*(nz-1), local = threadIdx.x/16, t = threadIdx.x%16;
    double* x = alongX[local];
    double* y = alongY[local];
    for (int first = blockIdx.x*CELLS_3D; first < cells; first += gridDim.x*CELLS_3D) {
        const int cell = first+local;
        double line[4], column[4];
        if (cell < cells) {
            int i = cell%(nx-1), j = (cell/(nx-1))%(ny-1), k = cell/((nx-1)*(ny-1));
            double width[3] = {xAxis[i+1]-xAxis[i], yAxis[j+1]-yAxis[j], zAxis[k+1]-zAxis[k]};
            // Along x: line (q, r) of the corner data, [p] for p = 0 to 3.
            const int q = t/4, r = t%4;
            for (int p = 0; p < 4; p++) {
                int ox = p/2, oy = q/2, oz = r/2;
                size_t point = (i+p%2)+(j+q%2)*(size_t) nx+(k+r%2)*nxy;
                line[p] = grid[derivative[ox][oy][oz]*size+point]*(ox ? width[0] : 1.0)*(oy ? width[1] : 1.0)*(oz ? width[2] : 1.0);
            }
            hermite(line[0], line[1], line[2], line[3], column);
            for (int m = 0; m < 4; m++)
                x[16*m+4*q+r] = column[m];
        }
        __syncthreads();
        if (cell < cells) {
            // Along y: line (m, r).
            const int m = t/4, r = t%4;
            hermite(x[16*m+r], x[16*m+4+r], x[16*m+8+r], x[16*m+12+r], column);
            for (int n = 0; n < 4; n++)
                y[16*m+4*n+r] = column[n];
        }
        __syncthreads();
        if (cell < cells) {
            // Along z: line (m, n), coefficient m+4n+16l of the cell for l = 0 to 3.
            const int m = t%4, n = t/4;
            hermite(y[16*m+4*n], y[16*m+4*n+1], y[16*m+4*n+2], y[16*m+4*n+3], column);
            TableCoefficient* out = coefficients+64*(size_t) cell;
            for (int l = 0; l < 4; l++)
                out[m+4*n+16*l] = (TableCoefficient) column[l];
        }
        __syncthreads();
    }
}
