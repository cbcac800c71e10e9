/* Tests of the switching functions, d0, dmax and stretch: values and forces against formulas
 * written out here, independently of the plugin's own switching code. */

#include "CoordinationTestUtilities.h"

/**
 * Put pair k of a pair-list force at distance distances[k] along direction(k), evaluate the
 * platform under test and compare each pair's value and force with the hand-written function.
 */
static void checkSwitching(const function<void(CoordinationForce&)>& configure, const vector<double>& distances, const HandSwitching& expected) {
    int numPairs = distances.size();
    System system;
    vector<int> a, b;
    vector<Vec3> positions;
    for (int k = 0; k < numPairs; k++) {
        system.addParticle(1.0);
        system.addParticle(1.0);
        a.push_back(2*k);
        b.push_back(2*k+1);
        Vec3 base(0.7*k, -0.4*k, 0.2*k+0.1);
        positions.push_back(base);
        positions.push_back(base+direction(k)*distances[k]);
    }
    CoordinationForce* force = new CoordinationForce(a, b, true);
    configure(*force);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    double cv = 0.0;
    vector<Vec3> forces(2*numPairs);
    for (int k = 0; k < numPairs; k++) {
        double dsdr, hostDsdr;
        double s = expected(distances[k], dsdr);
        cv += s;
        forces[2*k] = direction(k)*dsdr;
        forces[2*k+1] = -direction(k)*dsdr;
        // The force's host-side evaluation of the same function (double precision everywhere).
        ASSERT_EQUAL_TOL(s, force->evaluateSwitchingFunction(distances[k], hostDsdr), 1e-10);
        ASSERT_EQUAL_TOL(dsdr, hostDsdr, 1e-9);
    }
    assertState(context, cv, forces);
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
}

void testRationalShortForm() {
    // m = 2n: 1/(1 + x^n). Defaults (n = 6, m = 12) without a cutoff, then n = 8, m = 16 with d0.
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.3); f.setDMax(INFINITY); },
                   {0.1, 0.25, 0.3, 0.4, 0.7, 1.5}, ofR(0.3, 0.0, rational(6, 12)));
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.2); f.setD0(0.1); f.setN(8); f.setM(16); f.setDMax(INFINITY); },
                   {0.05, 0.15, 0.3, 0.45, 1.0}, ofR(0.2, 0.1, rational(8, 16)));
    // In the hand formula for 1/(1 + x^6): at x = 1 the value is exactly 1/2 and ds/dx = -3/2.
    double dsdx;
    ASSERT_EQUAL_TOL(0.5, rational(6, 12)(1.0, dsdx), 1e-15);
    ASSERT_EQUAL_TOL(-1.5, dsdx, 1e-15);
}

void testRationalGeneral() {
    // m != 2n, including x = 1 exactly (s = n/m, ds/dx = n(n - m)/(2m)) and x within 1e-6 of it.
    double dsdx;
    ASSERT_EQUAL_TOL(0.6, rational(6, 10)(1.0, dsdx), 1e-15);
    ASSERT_EQUAL_TOL(6.0*(6-10)/(2*10), dsdx, 1e-15);
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.3); f.setN(6); f.setM(10); f.setDMax(INFINITY); },
                   {0.1, 0.3, 0.3*(1+1e-6), 0.3*(1-1e-6), 0.3*1.05, 0.5, 1.0}, ofR(0.3, 0.0, rational(6, 10)));
    // Odd m, d0, and a force at x = 1 checked against the closed form.
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.25); f.setD0(0.05); f.setN(4); f.setM(7); f.setDMax(INFINITY); },
                   {0.03, 0.2, 0.3, 0.3+1e-7, 0.6, 1.2}, ofR(0.25, 0.05, rational(4, 7)));
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.5); f.setN(6); f.setM(10); f.setDMax(INFINITY); },
                   {0.5}, [] (double r, double& dsdr) { dsdr = 6.0*(6-10)/(2*10)/0.5; return 0.6; });
}

void testExpAndGaussian() {
    checkSwitching([] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Exp); f.setR0(0.2); f.setD0(0.1); },
                   {0.05, 0.15, 0.3, 0.8, 2.0},
                   ofR(0.2, 0.1, [] (double x, double& dsdx) { dsdx = -exp(-x); return exp(-x); }));
    checkSwitching([] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Gaussian); f.setR0(0.25); },
                   {0.1, 0.25, 0.5, 1.0},
                   ofR(0.25, 0.0, [] (double x, double& dsdx) { dsdx = -x*exp(-x*x/2); return exp(-x*x/2); }));
}

void testSmap() {
    for (pair<double, double> ab : vector<pair<double, double> >{{4.0, 8.0}, {2.5, 7.0}}) {
        double a = ab.first, b = ab.second, c = pow(2.0, a/b)-1;
        HandFunctionOfX s = [=] (double x, double& dsdx) {
            double base = 1+c*pow(x, a);
            dsdx = -b*c*pow(x, a-1)*pow(base, -b/a-1);
            return pow(base, -b/a);
        };
        // s(x = 1) = 1/2 for every a and b.
        double dsdx;
        ASSERT_EQUAL_TOL(0.5, s(1.0, dsdx), 1e-14);
        checkSwitching([=] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Smap); f.setR0(0.3); f.setD0(0.05); f.setA(a); f.setB(b); },
                       {0.04, 0.2, 0.35, 0.6, 1.4}, ofR(0.3, 0.05, s));
    }
}

void testCubic() {
    // y = (r - d0)/(dmax - d0); s = (y - 1)^2 (1 + 2y); 0 beyond dmax. Stretching changes nothing (s(dmax) = 0).
    HandSwitching s = [] (double r, double& dsdr) {
        double y = (r-0.1)/0.5;
        if (y <= 0 || y > 1) {
            dsdr = 0;
            return (y <= 0 ? 1.0 : 0.0);
        }
        dsdr = 6*y*(y-1)/0.5;
        return (y-1)*(y-1)*(1+2*y);
    };
    for (bool stretch : {true, false})
        checkSwitching([=] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Cubic); f.setD0(0.1); f.setDMax(0.6); f.setStretch(stretch); },
                       {0.05, 0.2, 0.35, 0.55, 0.7}, s);
}

void testTanhAndCosinus() {
    checkSwitching([] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Tanh); f.setR0(0.3); f.setD0(0.05); },
                   {0.03, 0.2, 0.35, 0.8, 1.5},
                   ofR(0.3, 0.05, [] (double x, double& dsdx) { dsdx = -(1-tanh(x)*tanh(x)); return 1-tanh(x); }));
    checkSwitching([] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Cosinus); f.setR0(0.4); f.setD0(0.1); },
                   {0.05, 0.2, 0.3, 0.45, 0.6, 1.0},
                   ofR(0.4, 0.1, [] (double x, double& dsdx) {
                       dsdx = (x > 1 ? 0.0 : -0.5*M_PI*sin(M_PI*x));
                       return (x > 1 ? 0.0 : 0.5*(cos(M_PI*x)+1));
                   }));
}

void testCustom() {
    checkSwitching([] (CoordinationForce& f) {
                       f.setSwitchingFunction(CoordinationForce::Custom);
                       f.setCustomExpression("exp(-x^2)*(1+x)");
                       f.setR0(0.3);
                       f.setD0(0.05);
                   },
                   {0.02, 0.2, 0.35, 0.7, 1.3},
                   ofR(0.3, 0.05, [] (double x, double& dsdx) { dsdx = exp(-x*x)*(1-2*x-2*x*x); return exp(-x*x)*(1+x); }));
}

void testDMaxAndStretch() {
    vector<double> distances = {0.2, 0.45, 0.55, 0.9};
    HandSwitching rational6 = ofR(0.3, 0.0, rational(6, 12));
    // A cutoff without stretching (PLUMED's NOSTRETCH): s unchanged up to dmax, 0 beyond.
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.3); f.setDMax(0.5); f.setStretch(false); }, distances, withCutoff(0.5, false, rational6));
    // With stretching: (s(r) - s(dmax))/(1 - s(dmax)).
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.3); f.setDMax(0.5); }, distances, withCutoff(0.5, true, rational6));
    // Stretching another type, with d0.
    HandSwitching exp1 = ofR(0.2, 0.1, [] (double x, double& dsdx) { dsdx = -exp(-x); return exp(-x); });
    checkSwitching([] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Exp); f.setR0(0.2); f.setD0(0.1); f.setDMax(1.0); },
                   {0.05, 0.3, 0.7, 0.95, 1.1}, withCutoff(1.0, true, exp1));
}

void testAutomaticDMax() {
    // PLUMED's short syntax: Rational gets dmax = d0 + r0*(1e-5)^(1/(n - m)), stretched.
    CoordinationForce force;
    force.setR0(0.2);
    force.setD0(0.05);
    double dmax = 0.05+0.2*pow(10.0, 5.0/6.0);
    ASSERT(force.getUsesDefaultDMax());
    ASSERT_EQUAL_TOL(dmax, force.getDMax(), 1e-12);
    ASSERT(force.getStretch());
    force.setN(8);
    force.setM(12);
    ASSERT_EQUAL_TOL(0.05+0.2*pow(10.0, 5.0/4.0), force.getDMax(), 1e-12);
    force.setDMax(0.9);
    ASSERT(!force.getUsesDefaultDMax());
    ASSERT_EQUAL(0.9, force.getDMax());
    force.setDefaultDMax();
    ASSERT(force.getUsesDefaultDMax());
    ASSERT_EQUAL_TOL(0.05+0.2*pow(10.0, 5.0/4.0), force.getDMax(), 1e-12);
    // Every other type has no cutoff by default.
    for (CoordinationForce::SwitchingFunction type : {CoordinationForce::Exp, CoordinationForce::Gaussian, CoordinationForce::Smap,
            CoordinationForce::Tanh, CoordinationForce::Cosinus, CoordinationForce::Custom}) {
        force.setSwitchingFunction(type);
        ASSERT(isinf(force.getDMax()));
    }
    // The values: s(dmax) = 1/(1 + 1e5) for n = 6, m = 12, and the function is stretched to 0 there.
    HandSwitching s = withCutoff(dmax, true, ofR(0.2, 0.05, rational(6, 12)));
    double dsdr;
    ASSERT_EQUAL_TOL(0.0, s(dmax, dsdr), 1e-12);
    checkSwitching([] (CoordinationForce& f) { f.setR0(0.2); f.setD0(0.05); }, {0.03, 0.2, 0.6, 1.3, 1.45}, s);
}

void runSwitchingTests() {
    RUN_TEST(testRationalShortForm);
    RUN_TEST(testRationalGeneral);
    RUN_TEST(testExpAndGaussian);
    RUN_TEST(testSmap);
    RUN_TEST(testCubic);
    RUN_TEST(testTanhAndCosinus);
    RUN_TEST(testCustom);
    RUN_TEST(testDMaxAndStretch);
    RUN_TEST(testAutomaticDMax);
}
