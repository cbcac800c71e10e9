/* CoordinationSpline against OpenMM's SplineFitter, whose splines the CUDA platform's tables
 * (ExpressionUtilities::computeFunctionCoefficients) and the Reference platform's are: the float
 * coefficients of 1-D, 2-D and 3-D tables, natural (its own splines) and periodic (SplineFitter's,
 * in the same layout), on grids of different sizes along each axis; the patches reproduce the
 * grid; the error for a table that is not continuous. */
#include "CoordinationSpline.h"
#include "openmm/OpenMMException.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/AssertionUtilities.h"
#include "openmm/internal/SplineFitter.h"
#include <cmath>
#include <iostream>
#include <random>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** n points from min to max, as OpenMM spaces the points of a table. */
static vector<double> axis(double min, double max, int n) {
    vector<double> x(n);
    for (int i = 0; i < n; i++)
        x[i] = min+i*(max-min)/(n-1);
    return x;
}

/**
 * Random grid values, smooth plus noise; periodic: equal on opposite faces (index 0 and n-1 of
 * each axis), as a periodic table requires.
 */
static vector<double> gridValues(const vector<int>& sizes, bool periodic, unsigned seed) {
    mt19937 random(seed);
    uniform_real_distribution<double> noise(-1.0, 1.0);
    size_t total = 1;
    for (int n : sizes)
        total *= n;
    vector<double> values(total);
    for (size_t index = 0; index < total; index++) {
        size_t rest = index, wrapped = 0, stride = 1;
        double smooth = 0.0;
        for (int n : sizes) {
            int i = rest%n;
            rest /= n;
            smooth += 3.0*sin(2*M_PI*i/(n-1.0));
            wrapped += (periodic && i == n-1 ? 0 : i)*stride;
            stride *= n;
        }
        values[index] = smooth+noise(random);
        if (wrapped != index)
            values[index] = values[wrapped];
    }
    return values;
}

/** Each float against OpenMM's coefficient (double, as computeFunctionCoefficients casts it). */
static void assertCoefficientsEqual(const vector<vector<double> >& expected, const vector<float>& actual) {
    size_t perCell = expected[0].size();
    ASSERT_EQUAL(expected.size()*perCell, actual.size());
    double largest = 0.0;
    for (auto& cell : expected)
        for (double c : cell)
            largest = max(largest, fabs(c));
    for (size_t i = 0; i < expected.size(); i++)
        for (size_t j = 0; j < perCell; j++) {
            double want = (float) expected[i][j], got = actual[i*perCell+j];
            if (fabs(want-got) > 1e-6*max(fabs(want), 1e-3*largest)) {
                cout << "cell " << i << " coefficient " << j << ": expected " << want << ", found " << got << endl;
                throw OpenMMException("Coefficients differ from SplineFitter's");
            }
        }
}

void testOneDimension() {
    for (bool periodic : {false, true}) {
        vector<double> x = axis(-1.5, 2.5, 37), values = gridValues({37}, periodic, 1);
        vector<double> second;
        SplineFitter::createSpline(x, values, periodic, second);
        vector<vector<double> > expected(36);
        for (int i = 0; i < 36; i++)
            expected[i] = {values[i], values[i+1], second[i]/6.0, second[i+1]/6.0};
        int width = 0;
        assertCoefficientsEqual(expected, CoordinationSpline::computeCoefficients(Continuous1DFunction(values, -1.5, 2.5, periodic), width));
        ASSERT_EQUAL(4, width);
    }
    // Two points: a straight line.
    int width;
    vector<float> line = CoordinationSpline::computeCoefficients(Continuous1DFunction({1.0, 3.0}, 0.0, 1.0), width);
    ASSERT_EQUAL(4, line.size());
    ASSERT_EQUAL_TOL(1.0, line[0], 0);
    ASSERT_EQUAL_TOL(3.0, line[1], 0);
    ASSERT_EQUAL_TOL(0.0, line[2], 0);
    ASSERT_EQUAL_TOL(0.0, line[3], 0);
}

void testTwoDimensions() {
    for (bool periodic : {false, true}) {
        int nx = 23, ny = 17;
        vector<double> values = gridValues({nx, ny}, periodic, 2);
        vector<vector<double> > expected;
        SplineFitter::create2DSpline(axis(0.0, 1.0, nx), axis(397.0, 517.0, ny), values, periodic, expected);
        int width;
        vector<float> actual = CoordinationSpline::computeCoefficients(Continuous2DFunction(nx, ny, values, 0.0, 1.0, 397.0, 517.0, periodic), width);
        assertCoefficientsEqual(expected, actual);
        // Each patch at its lower corner (u = v = 0) is the grid value there, at its upper corner the sum of its coefficients.
        for (int j = 0; j < ny-1; j++)
            for (int i = 0; i < nx-1; i++) {
                const float* c = &actual[16*(i+j*(nx-1))];
                double sum = 0.0;
                for (int k = 0; k < 16; k++)
                    sum += c[k];
                ASSERT_EQUAL_TOL(values[i+j*nx], c[0], 1e-6);
                ASSERT_EQUAL_TOL(values[(i+1)+(j+1)*nx], sum, 1e-5);
            }
    }
}

void testThreeDimensions() {
    for (bool periodic : {false, true}) {
        // OpenMM's 3-D fitter takes each cell's z width from the y axis (the same on a uniform grid
        // while ny <= nz).
        int nx = 9, ny = 7, nz = 11;
        vector<double> values = gridValues({nx, ny, nz}, periodic, 3);
        vector<vector<double> > expected;
        SplineFitter::create3DSpline(axis(-1.0, 1.0, nx), axis(0.0, 2.0, ny), axis(2.0, 3.5, nz), values, periodic, expected);
        int width;
        vector<float> actual = CoordinationSpline::computeCoefficients(
                Continuous3DFunction(nx, ny, nz, values, -1.0, 1.0, 0.0, 2.0, 2.0, 3.5, periodic), width);
        assertCoefficientsEqual(expected, actual);
        ASSERT_EQUAL(4, width);
        // A patch at its lower corner is the grid value there.
        for (int k = 0; k < nz-1; k++)
            for (int j = 0; j < ny-1; j++)
                for (int i = 0; i < nx-1; i++)
                    ASSERT_EQUAL_TOL(values[i+nx*(j+ny*k)], actual[64*(i+(nx-1)*(j+(ny-1)*k))], 1e-6);
    }
}

void testErrors() {
    int width;
    try {
        CoordinationSpline::computeCoefficients(Discrete1DFunction({0.0, 1.0}), width);
        throw OpenMMException("no error for a discrete table");
    }
    catch (const OpenMMException& e) {
        ASSERT(string(e.what()).find("CoordinationSpline: the tabulated function is not a Continuous1DFunction") == 0);
    }
}

int main() {
    try {
        testOneDimension();
        testTwoDimensions();
        testThreeDimensions();
        testErrors();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
