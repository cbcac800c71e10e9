#ifndef COORDINATION_TEST_UTILITIES_H_
#define COORDINATION_TEST_UTILITIES_H_

/* Helpers shared by the CoordinationForce test bodies (tests/TestCoordination*.h). A platform's
 * test main defines the three globals below and calls runCoordinationTests(). */

#include "CoordinationForce.h"
#include "openmm/Context.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/State.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/internal/AssertionUtilities.h"
#include "sfmt/SFMT.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** The platform under test. */
extern Platform& platform;
/** Its properties (for CUDA, the precision). */
extern map<string, string> properties;
/** The relative tolerance of values (energies, CVs) computed by the platform under test. */
extern double tolerance;

/** The relative tolerance of forces: they sum more terms of larger size than the values do. */
static double forceTolerance() {
    return 10*tolerance;
}

static Platform& referencePlatform() {
    return Platform::getPlatformByName("Reference");
}

/** A uniform random number in [0, 1). */
static double uniform(OpenMM_SFMT::SFMT& sfmt) {
    return OpenMM_SFMT::genrand_real2(sfmt);
}

static Vec3 randomVector(OpenMM_SFMT::SFMT& sfmt, double size) {
    return Vec3(uniform(sfmt), uniform(sfmt), uniform(sfmt))*size;
}

/** A unit vector in a fixed, not axis-aligned direction chosen by an index. */
static Vec3 direction(int k) {
    Vec3 d(sin(1.0+k), cos(2.0+3*k), 0.5+0.3*sin(5.0*k));
    return d/sqrt(d.dot(d));
}

/** Six particles at distances between about 0.15 and 0.9 nm from each other. */
static vector<Vec3> modePositions() {
    return {Vec3(0, 0, 0), Vec3(0.21, 0.05, -0.1), Vec3(0.1, 0.3, 0.12), Vec3(-0.3, 0.4, 0.5), Vec3(0.5, -0.2, 0.3), Vec3(0.05, -0.35, -0.25)};
}

/** A triclinic box in OpenMM's reduced form: half its smallest width is about 0.81 nm. */
static void triclinicBox(Vec3* box) {
    box[0] = Vec3(1.8, 0, 0);
    box[1] = Vec3(0.5, 1.9, 0);
    box[2] = Vec3(-0.6, 0.7, 2.0);
}

/** Seeded random positions in a cube of side size, a quarter of it on the negative side of the origin. */
static vector<Vec3> randomPositions(int numParticles, double size, int seed) {
    OpenMM_SFMT::SFMT sfmt;
    OpenMM_SFMT::init_gen_rand(seed, sfmt);
    vector<Vec3> positions;
    for (int i = 0; i < numParticles; i++)
        positions.push_back(randomVector(sfmt, size)-Vec3(1, 1, 1)*(0.25*size));
    return positions;
}

/**
 * The nearest image of a displacement, by brute force over every image within two cells of the
 * reduced one (exact for any box OpenMM allows, whatever the length of the displacement).
 */
static Vec3 nearestImage(Vec3 d, const Vec3* box) {
    if (box == NULL)
        return d;
    d -= box[2]*round(d[2]/box[2][2]);
    d -= box[1]*round(d[1]/box[1][1]);
    d -= box[0]*round(d[0]/box[0][0]);
    Vec3 best = d;
    for (int a = -2; a <= 2; a++)
        for (int b = -2; b <= 2; b++)
            for (int c = -2; c <= 2; c++) {
                Vec3 image = d+box[0]*a+box[1]*b+box[2]*c;
                if (image.dot(image) < best.dot(best))
                    best = image;
            }
    return best;
}

/**
 * How much farther than the nearest image the second nearest one is (nm). Where it is tiny, a
 * platform's rounding may pick either, and the force's direction with it.
 */
static double imageGap(Vec3 d, const Vec3* box) {
    Vec3 nearest = nearestImage(d, box);
    double r = sqrt(nearest.dot(nearest)), second = INFINITY;
    for (int a = -2; a <= 2; a++)
        for (int b = -2; b <= 2; b++)
            for (int c = -2; c <= 2; c++)
                if (a != 0 || b != 0 || c != 0) {
                    Vec3 image = nearest+box[0]*a+box[1]*b+box[2]*c;
                    second = min(second, sqrt(image.dot(image)));
                }
    return second-r;
}

/** Call f(i, j) for every pair of a force, in the order the contract defines them. */
static void forEachPair(const CoordinationForce& force, const function<void(int, int)>& f) {
    const vector<int>& a = force.getGroupA();
    const vector<int>& b = force.getGroupB();
    if (force.getMode() == CoordinationForce::OneGroup) {
        for (int i = 0; i < a.size(); i++)
            for (int j = i+1; j < a.size(); j++)
                f(a[i], a[j]);
    }
    else if (force.getMode() == CoordinationForce::PairList) {
        for (int k = 0; k < a.size(); k++)
            f(a[k], b[k]);
    }
    else {
        for (int i : a)
            for (int j : b)
                if (i != j)
                    f(i, j);
    }
}

/**
 * The CV of a force computed here, on the host, from the force's own switching function
 * (evaluateSwitchingFunction), with pairs and images found independently of any platform.
 * If gradient is not NULL it receives dCV/dx.
 */
static double expectedCV(const CoordinationForce& force, const vector<Vec3>& positions, const Vec3* box, vector<Vec3>* gradient = NULL) {
    double cv = 0.0;
    if (gradient != NULL)
        gradient->assign(positions.size(), Vec3());
    forEachPair(force, [&] (int i, int j) {
        Vec3 d = nearestImage(positions[j]-positions[i], force.usesPeriodicBoundaryConditions() ? box : NULL);
        double r = sqrt(d.dot(d)), dsdr;
        cv += force.evaluateSwitchingFunction(r, dsdr);
        if (gradient != NULL && dsdr != 0.0) {
            (*gradient)[j] += d*(dsdr/r);
            (*gradient)[i] -= d*(dsdr/r);
        }
    });
    return cv;
}

/** A hand-written switching function: returns s(r) and sets ds/dr. */
typedef function<double(double r, double& dsdr)> HandSwitching;

/** s(x) for x > 0 (d0 and the x <= 0 branch are handled by the caller). */
typedef function<double(double x, double& dsdx)> HandFunctionOfX;

/** Turn s(x) into s(r) with d0 and r0, no cutoff. */
static HandSwitching ofR(double r0, double d0, const HandFunctionOfX& s) {
    return [=] (double r, double& dsdr) {
        double x = (r-d0)/r0;
        if (x <= 0) {
            dsdr = 0;
            return 1.0;
        }
        double dsdx;
        double value = s(x, dsdx);
        dsdr = dsdx/r0;
        return value;
    };
}

/** Add a cutoff at dmax to s(r), stretched or not. */
static HandSwitching withCutoff(double dmax, bool stretch, const HandSwitching& s) {
    double unused;
    double sMax = s(dmax, unused);
    double scale = (stretch ? 1/(1-sMax) : 1.0), shift = (stretch ? -sMax*scale : 0.0);
    return [=] (double r, double& dsdr) {
        if (r > dmax) {
            dsdr = 0;
            return 0.0;
        }
        double value = s(r, dsdr);
        dsdr *= scale;
        return value*scale+shift;
    };
}

/**
 * Rational (1 - x^n)/(1 - x^m), written as P_n(x)/P_m(x) with P_k(x) = 1 + x + ... + x^(k-1):
 * the same function with the common factor (1 - x) cancelled, so it is exact at and near x = 1
 * (where it is n/m) without any special case.
 */
static HandFunctionOfX rational(int n, int m) {
    return [=] (double x, double& dsdx) {
        long double pn = 0, pm = 0, dpn = 0, dpm = 0, power = 1, lower = 0;
        for (int k = 0; k < max(n, m); k++) {
            if (k < n) {
                pn += power;
                dpn += k*lower;
            }
            if (k < m) {
                pm += power;
                dpm += k*lower;
            }
            lower = power;
            power *= x;
        }
        dsdx = (double) ((dpn*pm-pn*dpm)/(pm*pm));
        return (double) (pn/pm);
    };
}

/**
 * The CV and dCV/dx of explicit pairs (i, j) with a hand-written switching function, nearest
 * image when box is not NULL.
 */
static double handCV(const vector<pair<int, int> >& pairs, const vector<Vec3>& positions, const Vec3* box, const HandSwitching& s, vector<Vec3>& gradient) {
    double cv = 0.0;
    gradient.assign(positions.size(), Vec3());
    for (const pair<int, int>& p : pairs) {
        Vec3 d = nearestImage(positions[p.second]-positions[p.first], box);
        double r = sqrt(d.dot(d)), dsdr;
        cv += s(r, dsdr);
        gradient[p.second] += d*(dsdr/r);
        gradient[p.first] -= d*(dsdr/r);
    }
    return cv;
}

/**
 * Which tests run: all of them if empty; comma-separated parts of test names; "shard:k/n" for
 * every n-th test from the k-th (0 <= k < n, in the order they run) among those that leak no
 * context; or "leaks-context" for those that do (RUN_TEST_LEAKING_CONTEXT). A test main may set it.
 */
static std::string& testFilter() {
    static std::string filter;
    return filter;
}

static bool testSelected(const std::string& name, bool leaksContext) {
    if (testFilter().empty())
        return true;
    if (testFilter() == "leaks-context")
        return leaksContext;
    int shard, shards;
    if (sscanf(testFilter().c_str(), "shard:%d/%d", &shard, &shards) == 2) {
        static int index = 0;
        return !leaksContext && (index++)%shards == shard;
    }
    std::stringstream parts(testFilter());
    std::string part;
    while (std::getline(parts, part, ','))
        if (!part.empty() && name.find(part) != std::string::npos)
            return true;
    return false;
}

/** Run one test function if selected, naming it first so that a failure can be located, and timing it. */
#define RUN_SELECTED_TEST(test, leaksContext) do { \
    if (testSelected(#test, leaksContext)) { \
        std::cout << "  " << #test << std::flush; \
        auto start = std::chrono::steady_clock::now(); \
        test(); \
        std::cout << " (" << std::chrono::duration<double>(std::chrono::steady_clock::now()-start).count() << " s)" << std::endl; \
    } \
} while (0)
#define RUN_TEST(test) RUN_SELECTED_TEST(test, false)
/**
 * A test that makes Context creation fail after the platform has created its device context (a
 * check in a ForceImpl's or a kernel's initialize()): OpenMM does not release that context, and
 * under CUDA MPS each leaked one holds a client of the server until the process ends. The shards
 * leave these tests out; the CUDA tests run them in a process of their own ("leaks-context"),
 * after the others and outside MPS (benchmarks/gpu_suite.sh).
 */
#define RUN_TEST_LEAKING_CONTEXT(test) RUN_SELECTED_TEST(test, true)

/** Assert that two sets of forces agree, each vector relative to max(1, its length). */
static void assertForcesEqual(const vector<Vec3>& expected, const vector<Vec3>& found, double tol) {
    ASSERT_EQUAL(expected.size(), found.size());
    for (int i = 0; i < expected.size(); i++)
        ASSERT_EQUAL_VEC(expected[i], found[i], tol);
}

/** Check a Context's energy and forces (the whole System) against expected values. */
static void assertState(Context& context, double expectedEnergy, const vector<Vec3>& expectedForces) {
    State state = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(expectedEnergy, state.getPotentialEnergy(), tolerance);
    assertForcesEqual(expectedForces, state.getForces(), forceTolerance());
}

/**
 * Give both Contexts the positions and check the Context under test against the reference: forces
 * alone (as in an MD step, where the chain rule takes the CV from the sums the pair kernels
 * accumulated), then the energy alone, then both. label names the case in the output (the stress
 * stage of gpu_suite.sh reports where a run failed from it); the energy must be above 1.
 */
static void assertForcesOnlyAgree(Context& context, Context& reference, const vector<Vec3>& positions, const string& label) {
    context.setPositions(positions);
    reference.setPositions(positions);
    State expected = reference.getState(State::Energy | State::Forces);
    cout << "    " << label << endl;
    assertForcesEqual(expected.getForces(), context.getState(State::Forces).getForces(), forceTolerance());
    ASSERT(expected.getPotentialEnergy() > 1.0);
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), context.getState(State::Energy).getPotentialEnergy(), tolerance);
    assertState(context, expected.getPotentialEnergy(), expected.getForces());
}

/** Forces -scale*dCV/dx from a gradient. */
static vector<Vec3> scaledForces(const vector<Vec3>& gradient, double scale) {
    vector<Vec3> forces(gradient.size());
    for (int i = 0; i < gradient.size(); i++)
        forces[i] = -gradient[i]*scale;
    return forces;
}

/**
 * Check the forces of a Context against central finite differences of its energy, one
 * coordinate at a time. The step and the tolerance follow the platform's precision.
 */
static void assertFiniteDifferences(Context& context, const vector<Vec3>& positions, const string& label) {
    // Double precision: a 1e-4 nm step and 1e-5 relative error. Single: about 1e-3 nm, so that
    // the rounding of the energy (~1e-7 of it) divided by the step stays small, and a looser check.
    const double step = max(1e-4, 0.2*sqrt(tolerance));
    const double tol = max(1e-5, 100*tolerance);
    context.setPositions(positions);
    vector<Vec3> forces = context.getState(State::Forces).getForces();
    double scale = 1.0;
    for (const Vec3& f : forces)
        scale = max(scale, sqrt(f.dot(f)));
    for (int i = 0; i < positions.size(); i++)
        for (int k = 0; k < 3; k++) {
            vector<Vec3> displaced = positions;
            displaced[i][k] = positions[i][k]+step;
            context.setPositions(displaced);
            double plus = context.getState(State::Energy).getPotentialEnergy();
            displaced[i][k] = positions[i][k]-step;
            context.setPositions(displaced);
            double minus = context.getState(State::Energy).getPotentialEnergy();
            double numerical = -(plus-minus)/(2*step);
            if (!(fabs(numerical-forces[i][k]) <= tol*scale)) {
                stringstream details;
                details << label << ": particle " << i << " component " << k << ": finite difference " << numerical << ", force " << forces[i][k];
                throwException(__FILE__, __LINE__, details.str());
            }
        }
    context.setPositions(positions);
}

/**
 * Assert that a statement throws an OpenMMException whose message names CoordinationForce (or
 * CoordinationBiasForce).
 * The statement runs inside a lambda that captures by reference.
 */
#define ASSERT_COORDINATION_ERROR(statement) expectCoordinationError([&] () { statement; }, __FILE__, __LINE__, #statement, "")
/** The same, and the message must also contain the given text (the parameter or the value at fault). */
#define ASSERT_COORDINATION_ERROR_NAMING(statement, text) expectCoordinationError([&] () { statement; }, __FILE__, __LINE__, #statement, text)

static void expectCoordinationError(const function<void()>& f, const char* file, int line, const char* statement, const string& text) {
    bool thrown = false;
    string message;
    try {
        f();
    }
    catch (const OpenMMException& e) {
        thrown = true;
        message = e.what();
    }
    if (!thrown)
        throwException(file, line, string("expected an OpenMMException from: ")+statement);
    if (message.find("CoordinationForce") == string::npos && message.find("CoordinationBiasForce") == string::npos)
        throwException(file, line, "the message does not name CoordinationForce or CoordinationBiasForce: "+message);
    if (message.find(text) == string::npos)
        throwException(file, line, "the message does not contain \""+text+"\": "+message);
}

/**
 * Assert that an evaluation meets a value that is not finite (a position, a CV or an energy) and
 * says so: the statement throws an OpenMMException naming the class (Coordination...) and text at once
 * (Reference, CPU), or else (CUDA, where no evaluation waits for the GPU to check its values) the
 * energy it read, if any, is NaN, never a finite number, and the Context's next energy read
 * throws (the next two, where the statement did not wait for the GPU: a step). energyRead is a
 * statement whose value is the potential energy it read, or NAN where it reads none.
 */
#define ASSERT_EVALUATION_ERROR(energyRead, waits, context, text) \
    expectEvaluationError([&] () -> double { return energyRead; }, waits, context, __FILE__, __LINE__, #energyRead, text)

static void expectEvaluationError(const function<double()>& f, bool waits, Context& context, const char* file, int line,
        const char* statement, const string& text) {
    auto check = [&] (const string& message) {
        if (message.find("Coordination") == string::npos || message.find(text) == string::npos)
            throwException(file, line, "the message does not name the class and \""+text+"\": "+message);
    };
    try {
        double energy = f();
        if (!isnan(energy))
            throwException(file, line, string("a finite energy and no OpenMMException from: ")+statement);
    }
    catch (const OpenMMException& e) {
        check(e.what());
        return;
    }
    for (int read = 0; read < (waits ? 1 : 2); read++) {
        try {
            double energy = context.getState(State::Energy).getPotentialEnergy();
            if (!isnan(energy))
                throwException(file, line, string("a finite energy and no OpenMMException after: ")+statement);
        }
        catch (const OpenMMException& e) {
            check(e.what());
            return;
        }
    }
    throwException(file, line, string("no OpenMMException from the energy reads after: ")+statement);
}

#endif /*COORDINATION_TEST_UTILITIES_H_*/
