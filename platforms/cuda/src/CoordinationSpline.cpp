#include "CoordinationSpline.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/SplineFitter.h"
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

namespace {

/** n points from min to max, as SplineFitter's callers space the points of a table. */
vector<double> axis(double min, double max, int n) {
    vector<double> x(n);
    for (int i = 0; i < n; i++)
        x[i] = min+i*(max-min)/(n-1);
    return x;
}

/**
 * The natural cubic splines along one axis of a grid: SplineFitter's equations for the second
 * derivatives (zero at both ends), their tridiagonal matrix factored once for every line of the
 * axis, and the first derivative at each grid point taken from the spline of its line.
 */
class AxisSplines {
public:
    /** The axis of a table: n points from min to max, spaced as SplineFitter's callers space them. */
    AxisSplines(double min, double max, int n) : x(axis(min, max, n)), a(n, 0.0), gamma(n, 0.0), pivot(n), rhs(n), line(n), second(n) {
        // Rows 0 and n-1: y'' = 0; row i: (x_i - x_i-1) y''_i-1 + 2(x_i+1 - x_i-1) y''_i + (x_i+1 - x_i) y''_i+1 = rhs_i.
        vector<double> b(n, 1.0), c(n, 0.0);
        for (int i = 1; i < n-1; i++) {
            a[i] = x[i]-x[i-1];
            b[i] = 2.0*(x[i+1]-x[i-1]);
            c[i] = x[i+1]-x[i];
        }
        pivot[0] = b[0];
        for (int i = 1; i < n; i++) {
            gamma[i] = c[i-1]/pivot[i-1];
            pivot[i] = b[i]-a[i]*gamma[i];
        }
    }

    /** The grid points. */
    const vector<double>& points() const {
        return x;
    }

    /** The points, then a, gamma and pivot of the factored matrix (CoordinationSpline::getAxisFactors()). */
    vector<double> factors() const {
        vector<double> all(x);
        all.insert(all.end(), a.begin(), a.end());
        all.insert(all.end(), gamma.begin(), gamma.end());
        all.insert(all.end(), pivot.begin(), pivot.end());
        return all;
    }

    /** The second derivatives of the natural spline through y (n values). */
    const vector<double>& secondDerivatives(const vector<double>& y) {
        const int n = x.size();
        rhs[0] = rhs[n-1] = 0.0;
        for (int i = 1; i < n-1; i++)
            rhs[i] = 6.0*((y[i+1]-y[i])/(x[i+1]-x[i])-(y[i]-y[i-1])/(x[i]-x[i-1]));
        second[0] = rhs[0]/pivot[0];
        for (int i = 1; i < n; i++)
            second[i] = (rhs[i]-a[i]*second[i-1])/pivot[i];
        for (int i = n-2; i >= 0; i--)
            second[i] -= gamma[i+1]*second[i+1];
        return second;
    }

    /**
     * The derivative along this axis at every grid point, for the line of in[] that starts at
     * start with this stride, written to the same places of out[].
     */
    void differentiate(const vector<double>& in, vector<double>& out, size_t start, size_t stride) {
        const int n = x.size();
        for (int i = 0; i < n; i++)
            line[i] = in[start+i*stride];
        const vector<double>& m = secondDerivatives(line);
        for (int i = 0; i < n; i++) {
            // The interval [lower, lower+1] holding x[i] (the last point: the last interval), the
            // spline's derivative there at u = 1 - (x - x[lower])/dx.
            int lower = (i < n-1 ? i : n-2);
            double dx = x[lower+1]-x[lower], u = (x[lower+1]-x[i])/dx, v = 1.0-u, dudx = -1.0/dx;
            out[start+i*stride] = dudx*line[lower]-dudx*line[lower+1]+((1.0-3.0*u*u)*m[lower]+(3.0*v*v-1.0)*m[lower+1])*dx/6.0;
        }
    }

    /**
     * The derivative along this axis at every point of a grid (in[] to out[]), this axis's index
     * having the given stride in the grid's layout: every line along the axis.
     */
    void differentiateGrid(const vector<double>& in, vector<double>& out, size_t stride) {
        const size_t block = stride*x.size();
        for (size_t base = 0; base < in.size(); base += block)
            for (size_t offset = 0; offset < stride; offset++)
                differentiate(in, out, base+offset, stride);
    }

private:
    vector<double> x, a, gamma, pivot, rhs, line, second;
};

/**
 * The cubic on [0, 1] with values f0, f1 and derivatives d0, d1 (times the interval) at its ends:
 * in = (f0, f1, d0, d1) with the given stride, out = its coefficients of 1, u, u^2, u^3.
 */
inline void hermite(const double* in, int stride, double* out) {
    double f0 = in[0], f1 = in[stride], d0 = in[2*stride], d1 = in[3*stride];
    out[0] = f0;
    out[1] = d0;
    out[2] = -3.0*f0+3.0*f1-2.0*d0-d1;
    out[3] = 2.0*f0-2.0*f1+d0+d1;
}

vector<double> coefficients1D(const Continuous1DFunction& function) {
    vector<double> values;
    double min, max;
    function.getFunctionParameters(values, min, max);
    int n = values.size();
    AxisSplines axis(min, max, n);
    const vector<double>& m = axis.secondDerivatives(values);
    vector<double> f(4*(n-1));
    for (int i = 0; i < n-1; i++) {
        f[4*i] = values[i];
        f[4*i+1] = values[i+1];
        f[4*i+2] = m[i]/6.0;
        f[4*i+3] = m[i+1]/6.0;
    }
    return f;
}

vector<double> coefficients2D(const Continuous2DFunction& function) {
    vector<double> values;
    int nx, ny;
    double xmin, xmax, ymin, ymax;
    function.getFunctionParameters(nx, ny, values, xmin, xmax, ymin, ymax);
    AxisSplines xAxis(xmin, xmax, nx), yAxis(ymin, ymax, ny);
    // Derivatives in SplineFitter's order: d/dx, d/dy, then d/dx of d/dy.
    vector<double> dx(values.size()), dy(values.size()), dxy(values.size());
    xAxis.differentiateGrid(values, dx, 1);
    yAxis.differentiateGrid(values, dy, nx);
    xAxis.differentiateGrid(dy, dxy, 1);
    const vector<double>* data[2][2] = {{&values, &dy}, {&dx, &dxy}};
    const vector<double>& x = xAxis.points();
    const vector<double>& y = yAxis.points();
    vector<double> f(16*(size_t) (nx-1)*(ny-1));
    for (int j = 0; j < ny-1; j++)
        for (int i = 0; i < nx-1; i++) {
            // corner[p][q]: p, q = (value at the lower point, at the upper, derivative at the lower, at the upper) along x, y.
            double width[2] = {x[i+1]-x[i], y[j+1]-y[j]}, corner[4][4], alongX[4][4], patch[4][4];
            for (int p = 0; p < 4; p++)
                for (int q = 0; q < 4; q++) {
                    int ox = p/2, oy = q/2;
                    size_t point = (i+p%2)+(j+q%2)*(size_t) nx;
                    corner[p][q] = (*data[ox][oy])[point]*(ox ? width[0] : 1.0)*(oy ? width[1] : 1.0);
                }
            for (int q = 0; q < 4; q++) {
                double column[4];
                hermite(&corner[0][q], 4, column);
                for (int k = 0; k < 4; k++)
                    alongX[k][q] = column[k];
            }
            for (int k = 0; k < 4; k++)
                hermite(alongX[k], 1, patch[k]);
            double* out = &f[16*(i+j*(size_t) (nx-1))];
            for (int k = 0; k < 4; k++)
                for (int l = 0; l < 4; l++)
                    out[4*k+l] = patch[k][l];
        }
    return f;
}

vector<double> coefficients3D(const Continuous3DFunction& function) {
    vector<double> values;
    int nx, ny, nz;
    double xmin, xmax, ymin, ymax, zmin, zmax;
    function.getFunctionParameters(nx, ny, nz, values, xmin, xmax, ymin, ymax, zmin, zmax);
    AxisSplines xAxis(xmin, xmax, nx), yAxis(ymin, ymax, ny), zAxis(zmin, zmax, nz);
    size_t nxy = nx*(size_t) ny, size = values.size();
    // Derivatives in SplineFitter's order: x, y, z; xy = x of y, yz = y of z, xz = z of x; xyz = x of yz.
    vector<double> dx(size), dy(size), dz(size), dxy(size), dyz(size), dxz(size), dxyz(size);
    xAxis.differentiateGrid(values, dx, 1);
    yAxis.differentiateGrid(values, dy, nx);
    zAxis.differentiateGrid(values, dz, nxy);
    xAxis.differentiateGrid(dy, dxy, 1);
    yAxis.differentiateGrid(dz, dyz, nx);
    zAxis.differentiateGrid(dx, dxz, nxy);
    xAxis.differentiateGrid(dyz, dxyz, 1);
    // data[ox][oy][oz]: the grid of the derivative of those orders.
    const vector<double>* data[2][2][2] = {{{&values, &dz}, {&dy, &dyz}}, {{&dx, &dxz}, {&dxy, &dxyz}}};
    const vector<double>& x = xAxis.points();
    const vector<double>& y = yAxis.points();
    const vector<double>& z = zAxis.points();
    vector<double> f(64*(size_t) (nx-1)*(ny-1)*(nz-1));
    for (int k = 0; k < nz-1; k++)
        for (int j = 0; j < ny-1; j++)
            for (int i = 0; i < nx-1; i++) {
                double width[3] = {x[i+1]-x[i], y[j+1]-y[j], z[k+1]-z[k]}, corner[4][4][4], step1[4][4][4], step2[4][4][4];
                for (int p = 0; p < 4; p++)
                    for (int q = 0; q < 4; q++)
                        for (int r = 0; r < 4; r++) {
                            int ox = p/2, oy = q/2, oz = r/2;
                            size_t point = (i+p%2)+(j+q%2)*(size_t) nx+(k+r%2)*nxy;
                            corner[p][q][r] = (*data[ox][oy][oz])[point]*(ox ? width[0] : 1.0)*(oy ? width[1] : 1.0)*(oz ? width[2] : 1.0);
                        }
                // The Hermite matrix along x, then y, then z.
                double column[4];
                for (int q = 0; q < 4; q++)
                    for (int r = 0; r < 4; r++) {
                        hermite(&corner[0][q][r], 16, column);
                        for (int m = 0; m < 4; m++)
                            step1[m][q][r] = column[m];
                    }
                for (int m = 0; m < 4; m++)
                    for (int r = 0; r < 4; r++) {
                        hermite(&step1[m][0][r], 4, column);
                        for (int n = 0; n < 4; n++)
                            step2[m][n][r] = column[n];
                    }
                double* out = &f[64*(i+j*(size_t) (nx-1)+k*(size_t) (nx-1)*(ny-1))];
                for (int m = 0; m < 4; m++)
                    for (int n = 0; n < 4; n++) {
                        hermite(&step2[m][n][0], 1, column);
                        for (int l = 0; l < 4; l++)
                            out[m+4*n+16*l] = column[l];
                    }
            }
    return f;
}

/**
 * The coefficients of a periodic table from OpenMM's own SplineFitter (the layout of
 * ExpressionUtilities), so that they match the Reference platform of whichever OpenMM is
 * installed: OpenMM's periodic splines have changed over its versions.
 */
vector<double> fitterCoefficients(const TabulatedFunction& function) {
    vector<double> values, second;
    vector<vector<double> > cells;
    int nx, ny, nz;
    double xmin, xmax, ymin, ymax, zmin, zmax;
    if (auto table = dynamic_cast<const Continuous1DFunction*>(&function)) {
        table->getFunctionParameters(values, xmin, xmax);
        SplineFitter::createSpline(axis(xmin, xmax, values.size()), values, true, second);
        for (int i = 0; i+1 < values.size(); i++)
            cells.push_back({values[i], values[i+1], second[i]/6.0, second[i+1]/6.0});
    }
    else if (auto table = dynamic_cast<const Continuous2DFunction*>(&function)) {
        table->getFunctionParameters(nx, ny, values, xmin, xmax, ymin, ymax);
        SplineFitter::create2DSpline(axis(xmin, xmax, nx), axis(ymin, ymax, ny), values, true, cells);
    }
    else {
        auto& cube = dynamic_cast<const Continuous3DFunction&>(function);
        cube.getFunctionParameters(nx, ny, nz, values, xmin, xmax, ymin, ymax, zmin, zmax);
        SplineFitter::create3DSpline(axis(xmin, xmax, nx), axis(ymin, ymax, ny), axis(zmin, zmax, nz), values, true, cells);
    }
    vector<double> f;
    for (auto& cell : cells)
        f.insert(f.end(), cell.begin(), cell.end());
    return f;
}

} // namespace

vector<float> CoordinationSpline::computeCoefficients(const TabulatedFunction& function, int& width) {
    vector<double> coefficients = computeDoubleCoefficients(function, width);
    return vector<float>(coefficients.begin(), coefficients.end());
}

vector<double> CoordinationSpline::computeDoubleCoefficients(const TabulatedFunction& function, int& width) {
    width = 4;
    auto table1 = dynamic_cast<const Continuous1DFunction*>(&function);
    auto table2 = dynamic_cast<const Continuous2DFunction*>(&function);
    auto table3 = dynamic_cast<const Continuous3DFunction*>(&function);
    if (table1 == NULL && table2 == NULL && table3 == NULL)
        throw OpenMMException("CoordinationSpline: the tabulated function is not a Continuous1DFunction, Continuous2DFunction or "
                "Continuous3DFunction");
    if (function.getPeriodic())
        return fitterCoefficients(function);
    if (table1 != NULL)
        return coefficients1D(*table1);
    if (table2 != NULL)
        return coefficients2D(*table2);
    return coefficients3D(*table3);
}

vector<double> CoordinationSpline::getAxisFactors(double min, double max, int n) {
    return AxisSplines(min, max, n).factors();
}
