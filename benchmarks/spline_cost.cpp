/* The host cost of a table's spline coefficients, which the CUDA platform recomputes and uploads
 * whenever a table changes (at every hill of metadynamics): CoordinationSpline against OpenMM's
 * SplineFitter, which CustomCVForce's tables use (ExpressionUtilities::computeFunctionCoefficients,
 * SplineFitter's coefficients cast to float), side by side on the same grids, as a ratio.
 *
 * Built with the CUDA plugin's C++ tests (build/benchmarks/CoordinationSplineCost); run it with no
 * arguments. */
#include "CoordinationSpline.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/SplineFitter.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** Milliseconds per call, the best of five rounds of repeats calls. */
static double milliseconds(const function<void()>& call, int repeats) {
    double best = INFINITY;
    for (int round = 0; round < 5; round++) {
        auto start = chrono::steady_clock::now();
        for (int r = 0; r < repeats; r++)
            call();
        best = min(best, chrono::duration<double, milli>(chrono::steady_clock::now()-start).count()/repeats);
    }
    return best;
}

static vector<double> axis(int n) {
    vector<double> x(n);
    for (int i = 0; i < n; i++)
        x[i] = i/(n-1.0);
    return x;
}

/** SplineFitter's coefficients as float, the layout of computeFunctionCoefficients. */
static vector<float> asFloats(const vector<vector<double> >& cells) {
    vector<float> f;
    for (auto& cell : cells)
        f.insert(f.end(), cell.begin(), cell.end());
    return f;
}

int main() {
    printf("%-12s %14s %20s %8s\n", "grid", "SplineFitter", "CoordinationSpline", "ratio");
    for (int n : {121, 201}) {
        vector<double> values(n*n);
        for (int i = 0; i < n*n; i++)
            values[i] = sin(0.37*(i%n))*cos(0.23*(i/n));
        Continuous2DFunction table(n, n, values, 0, 1, 0, 1);
        int width;
        double peer = milliseconds([&] {
            vector<vector<double> > cells;
            SplineFitter::create2DSpline(axis(n), axis(n), values, false, cells);
            asFloats(cells);
        }, 10);
        double ours = milliseconds([&] { CoordinationSpline::computeCoefficients(table, width); }, 10);
        printf("%3d x %-6d %11.2f ms %17.2f ms %7.1fx\n", n, n, peer, ours, peer/ours);
    }
    int n = 41;
    vector<double> values(n*n*n);
    for (int i = 0; i < n*n*n; i++)
        values[i] = sin(0.37*(i%n))*cos(0.23*((i/n)%n))*sin(0.11*(i/(n*n)));
    Continuous3DFunction table(n, n, n, values, 0, 1, 0, 1, 0, 1);
    int width;
    double peer = milliseconds([&] {
        vector<vector<double> > cells;
        SplineFitter::create3DSpline(axis(n), axis(n), axis(n), values, false, cells);
        asFloats(cells);
    }, 1);
    double ours = milliseconds([&] { CoordinationSpline::computeCoefficients(table, width); }, 1);
    printf("%2d^3        %11.2f ms %17.2f ms %7.1fx\n", n, peer, ours, peer/ours);
    return 0;
}
