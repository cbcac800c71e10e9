/* Tests of CoordinationBiasForce: an energy of several coordination CVs (values and forces
 * against each CV evaluated alone and against finite differences, tables, boxes,
 * updateParametersInContext, errors), on every platform. */

#include "CoordinationTestUtilities.h"
#include "CoordinationBiasForce.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/serialization/XmlSerializer.h"
#include <memory>

/** Assert that a statement throws an OpenMMException naming the class and containing text. */
#define ASSERT_BIAS_ERROR(statement, text) expectBiasError([&] () { statement; }, __FILE__, __LINE__, #statement, text)

static void expectBiasError(const function<void()>& f, const char* file, int line, const char* statement, const string& text) {
    try {
        f();
    }
    catch (const OpenMMException& e) {
        string message = e.what();
        if (message.find("Coordination") == string::npos || message.find(text) == string::npos)
            throwException(file, line, "the message does not name the class and \""+text+"\": "+message);
        return;
    }
    throwException(file, line, string("expected an OpenMMException from: ")+statement);
}

static const int biasParticles = 12;

/** The k-th of eight CVs over 12 particles: every mode, several switching functions, per-pair parameters. */
static CoordinationForce* biasCV(int k, bool periodic) {
    CoordinationForce* cv = NULL;
    switch (k%8) {
    case 0:
        cv = new CoordinationForce({0, 1, 2, 3, 4, 5});
        break;
    case 1:
        cv = new CoordinationForce({0, 1, 2}, {6, 7, 8, 9});
        cv->setSwitchingFunction(CoordinationForce::Exp);
        cv->setR0(0.2);
        cv->setD0(0.05);
        break;
    case 2:
        cv = new CoordinationForce();
        cv->setPairs({0, 3, 5, 7}, {11, 2, 9, 1}, {1.0, 0.5, 2.0, 0.25}, {0.3, 0.5, 0.4, 0.6});
        cv->setSwitchingFunction(CoordinationForce::Q);
        cv->setBeta(10.0);
        break;
    case 3:
        cv = new CoordinationForce({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
        cv->setSwitchingFunction(CoordinationForce::Gaussian);
        cv->setR0(0.25);
        cv->setDMax(0.8);
        break;
    case 4:
        cv = new CoordinationForce({6, 7, 8, 9, 10, 11});
        cv->setSwitchingFunction(CoordinationForce::Smap);
        cv->setR0(0.35);
        cv->setA(4);
        cv->setB(2);
        break;
    case 5:
        cv = new CoordinationForce();
        cv->setPairs({1, 2, 4}, {8, 10, 6}, {0.5, 1.5, 1.0}, {0.35, 0.45, 0.25});
        cv->setN(8);
        break;
    case 6:
        cv = new CoordinationForce({10, 11}, {0, 1, 2, 3, 4, 5});
        cv->setSwitchingFunction(CoordinationForce::Cubic);
        cv->setD0(0.05);
        cv->setDMax(0.9);
        break;
    default:
        cv = new CoordinationForce({0, 2, 4, 6, 8, 10});
        cv->setSwitchingFunction(CoordinationForce::Custom);
        cv->setCustomExpression("exp(-x^2)");
        cv->setR0(0.4);
    }
    cv->setUsesPeriodicBoundaryConditions(periodic);
    return cv;
}

static void biasPositions(vector<Vec3>& positions, Vec3* box, int boxType) {
    positions = randomPositions(biasParticles, 1.4, 17+boxType);
    box[0] = Vec3(2.2, 0, 0);
    box[1] = Vec3(0, 2.1, 0);
    box[2] = Vec3(0, 0, 2.3);
    if (boxType == 2)
        triclinicBox(box);
}

/** A Context of a System of the 12 particles with the given forces (the caller's integrator outlives it). */
static Context* biasContext(System& system, Integrator& integrator, const vector<Force*>& forces, const vector<Vec3>& positions,
        const Vec3* box) {
    for (int i = 0; i < biasParticles; i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    for (Force* force : forces)
        system.addForce(force);
    Context* context = new Context(system, integrator, platform, properties);
    context->setPositions(positions);
    return context;
}

/** One CV evaluated alone, in a Context of its own on the platform under test: its value and gradient. */
static double aloneCV(const CoordinationForce& cv, const vector<Vec3>& positions, const Vec3* box, vector<Vec3>& gradient) {
    System system;
    VerletIntegrator integrator(0.001);
    for (int i = 0; i < biasParticles; i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    system.addForce(XmlSerializer::clone<CoordinationForce>(cv));
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    State state = context.getState(State::Energy | State::Forces);
    gradient = scaledForces(state.getForces(), 1.0);
    // The host's own sum, independent of any platform, agrees too (it knows no per-pair parameters).
    if (!cv.getUsesPairParameters())
        ASSERT_EQUAL_TOL(expectedCV(cv, positions, box), state.getPotentialEnergy(), tolerance);
    return state.getPotentialEnergy();
}

/**
 * Build a bias force over the CVs biasCV(first..first+count-1) named c1, c2, ..., compare its
 * CV values, energy and forces with energy(values, dEdc) on the CVs evaluated alone, and its
 * forces with finite differences.
 */
static void checkBias(CoordinationBiasForce* bias, int first, int count, int boxType,
        const function<double(const vector<double>&, vector<double>&)>& energy) {
    for (int k = 0; k < count; k++)
        bias->addCollectiveVariable("c"+to_string(k+1), biasCV(first+k, boxType != 0));
    ASSERT_EQUAL(count, bias->getNumCollectiveVariables());
    ASSERT_EQUAL(boxType != 0, bias->usesPeriodicBoundaryConditions());
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, boxType);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    vector<double> values(count), dEdc(count);
    vector<vector<Vec3> > gradients(count);
    for (int k = 0; k < count; k++)
        values[k] = aloneCV(bias->getCollectiveVariable(k), positions, box, gradients[k]);
    vector<double> found = bias->getCollectiveVariableValues(*context);
    ASSERT_EQUAL(count, found.size());
    for (int k = 0; k < count; k++)
        ASSERT_EQUAL_TOL(values[k], found[k], tolerance);
    double expectedEnergy = energy(values, dEdc);
    vector<Vec3> expectedForces(biasParticles);
    for (int k = 0; k < count; k++)
        for (int i = 0; i < biasParticles; i++)
            expectedForces[i] -= gradients[k][i]*dEdc[k];
    assertState(*context, expectedEnergy, expectedForces);
    assertFiniteDifferences(*context, positions, "CoordinationBiasForce with "+to_string(count)+" CVs");
}

void testBiasTwoHarmonic() {
    for (int boxType = 0; boxType < 3; boxType++) {
        CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k1*(c1-a)^2 + 0.5*k2*(c2-b)^2");
        bias->addGlobalParameter("k1", 30.0);
        bias->addGlobalParameter("k2", 20.0);
        bias->addGlobalParameter("a", 0.5);
        bias->addGlobalParameter("b", 2.0);
        checkBias(bias, 1, 2, boxType, [] (const vector<double>& c, vector<double>& d) {
            d = {30*(c[0]-0.5), 20*(c[1]-2.0)};
            return 15*(c[0]-0.5)*(c[0]-0.5)+10*(c[1]-2.0)*(c[1]-2.0);
        });
    }
}

void testBiasThreeWall() {
    for (int boxType = 0; boxType < 3; boxType++) {
        CoordinationBiasForce* bias = new CoordinationBiasForce("k*max(0, c1+c2-w)^2 + 0.3*c3");
        bias->addGlobalParameter("k", 40.0);
        bias->addGlobalParameter("w", 0.2);
        checkBias(bias, 2, 3, boxType, [] (const vector<double>& c, vector<double>& d) {
            double excess = max(0.0, c[0]+c[1]-0.2);
            ASSERT(excess > 0);
            d = {80*excess, 80*excess, 0.3};
            return 40*excess*excess+0.3*c[2];
        });
    }
}

void testBiasEightCVs() {
    for (int boxType = 0; boxType < 3; boxType++) {
        CoordinationBiasForce* bias = new CoordinationBiasForce(
            "0.5*(c1-1)^2 + 0.3*c2*c3 + c4^2 + sin(c5) + 0.2*c6*c7 + 0.1*c8");
        checkBias(bias, 0, 8, boxType, [] (const vector<double>& c, vector<double>& d) {
            d = {c[0]-1, 0.3*c[2], 0.3*c[1], 2*c[3], cos(c[4]), 0.2*c[6], 0.2*c[5], 0.1};
            return 0.5*(c[0]-1)*(c[0]-1)+0.3*c[1]*c[2]+c[3]*c[3]+sin(c[4])+0.2*c[5]*c[6]+0.1*c[7];
        });
    }
}

/**
 * A bias of four CVs over numParticles random particles in a periodic cubic box of the given edge
 * (nm), of the kinds a GPU evaluates with another pair kernel each: "tiles" (10 x 1,000 particles,
 * no cutoff), "pairs" (a pair list of 500 pairs with per-pair Q values), "cells" (two halves with
 * a cutoff: cell lists in a large system) and "lists" (one group of all with a cutoff: neighbour
 * lists). Adds them to system and returns the force.
 */
static CoordinationBiasForce* largeBias(System& system, vector<Vec3>& positions, Vec3* box, int numParticles, double edge) {
    positions = randomPositions(numParticles, edge, 23);
    box[0] = Vec3(edge, 0, 0);
    box[1] = Vec3(0, edge, 0);
    box[2] = Vec3(0, 0, edge);
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    vector<int> ten, thousand, first, second, all, pairA, pairB;
    vector<double> weights, r0s;
    for (int i = 0; i < numParticles; i++) {
        (i < numParticles/2 ? first : second).push_back(i);
        all.push_back(i);
        if (i < 10)
            ten.push_back(i);
        else if (i < 1010)
            thousand.push_back(i);
    }
    for (int k = 0; k < 500; k++) {
        pairA.push_back((7*k)%numParticles);
        pairB.push_back((13*k+1)%numParticles);
        weights.push_back(0.002*(k%5+1));
        r0s.push_back(0.4+0.001*k);
    }
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(tiles-40)^2 + k*(pairs-0.5)^2 + 1e-3*k*cells + 2e-3*lists^2");
    bias->addGlobalParameter("k", 2.0);
    CoordinationForce* tiles = new CoordinationForce(ten, thousand);
    CoordinationForce* pairs = new CoordinationForce();
    pairs->setPairs(pairA, pairB, weights, r0s);
    pairs->setSwitchingFunction(CoordinationForce::Q);
    CoordinationForce* cells = new CoordinationForce(first, second);
    cells->setDMax(1.0);
    CoordinationForce* lists = new CoordinationForce(all);
    lists->setSwitchingFunction(CoordinationForce::Gaussian);
    lists->setR0(0.2);
    lists->setDMax(0.8);
    vector<pair<string, CoordinationForce*> > cvs = {{"tiles", tiles}, {"pairs", pairs}, {"cells", cells}, {"lists", lists}};
    for (auto& cv : cvs) {
        cv.second->setUsesPeriodicBoundaryConditions(true);
        bias->addCollectiveVariable(cv.first, cv.second);
    }
    system.addForce(bias);
    return bias;
}

/**
 * A bias against the Reference platform: CVs, energy and forces (together, forces alone, energy
 * alone), at the first positions and after the particles move (lists are reused).
 */
static void compareBiasWithReference(System& system, CoordinationBiasForce* bias, vector<Vec3> positions) {
    VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
    Context context(system, integrator, platform, properties);
    Context reference(system, referenceIntegrator, referencePlatform());
    OpenMM_SFMT::SFMT sfmt;
    OpenMM_SFMT::init_gen_rand(5, sfmt);
    for (int move = 0; move < 2; move++) {
        context.setPositions(positions);
        reference.setPositions(positions);
        vector<double> expectedCVs = bias->getCollectiveVariableValues(reference);
        vector<double> foundCVs = bias->getCollectiveVariableValues(context);
        for (int k = 0; k < expectedCVs.size(); k++) {
            ASSERT(expectedCVs[k] > 0.1);
            ASSERT_EQUAL_TOL(expectedCVs[k], foundCVs[k], tolerance);
        }
        State expected = reference.getState(State::Energy | State::Forces);
        State found = context.getState(State::Energy | State::Forces);
        ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), found.getPotentialEnergy(), tolerance);
        assertForcesEqual(expected.getForces(), found.getForces(), forceTolerance());
        assertForcesEqual(expected.getForces(), context.getState(State::Forces).getForces(), forceTolerance());
        ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), context.getState(State::Energy).getPotentialEnergy(), tolerance);
        for (Vec3& p : positions)
            p += randomVector(sfmt, 0.02);
    }
}

/** The bias of largeBias() over 2,000 particles in a 4 nm box against the Reference platform. */
void testBiasAgainstReference() {
    System system;
    vector<Vec3> positions;
    Vec3 box[3];
    CoordinationBiasForce* bias = largeBias(system, positions, box, 2000, 4.0);
    compareBiasWithReference(system, bias, positions);
}

/**
 * CV number `variant` of one kind for testBiasForcesOnly, over numParticles particles in a
 * periodic box, with its term of the energy: kind 0 all pairs (tiles: 10 particles against 1,000),
 * 1 a pair list (500 pairs, Q with per-pair values), 2 cells (two halves, cutoff 1 nm), 3 neighbour
 * lists (one group of all, cutoff 0.8 nm); variants shift the groups and r0.
 */
static CoordinationForce* forcesOnlyCV(int kind, int variant, int numParticles, const string& name, string& term) {
    CoordinationForce* cv = new CoordinationForce();
    vector<int> a, b;
    if (kind == 0) {
        for (int i = 0; i < 1010; i++)
            (i < 10 ? a : b).push_back((i+37*variant)%numParticles);
        cv->setGroups(a, b);
        term = "0.5*k*("+name+"-40)^2";
    }
    else if (kind == 1) {
        vector<double> weights, r0s;
        for (int k = 0; k < 500; k++) {
            a.push_back((7*k+variant)%numParticles);
            b.push_back((13*k+1+3*variant)%numParticles);
            weights.push_back(0.002*(k%5+1));
            r0s.push_back(0.4+0.001*k);
        }
        cv->setPairs(a, b, weights, r0s);
        cv->setSwitchingFunction(CoordinationForce::Q);
        term = "k*("+name+"-0.5)^2";
    }
    else if (kind == 2) {
        for (int i = 0; i < numParticles; i++)
            ((i+variant)%numParticles < numParticles/2 ? a : b).push_back(i);
        cv->setGroups(a, b);
        cv->setR0(0.3+0.02*variant);
        cv->setDMax(1.0);
        term = "1e-3*k*"+name;
    }
    else {
        for (int i = 0; i < numParticles; i++)
            a.push_back(i);
        cv->setGroup(a);
        cv->setSwitchingFunction(CoordinationForce::Gaussian);
        cv->setR0(0.2+0.02*variant);
        cv->setDMax(0.8);
        term = "2e-3*"+name+"^2";
    }
    cv->setUsesPeriodicBoundaryConditions(true);
    return cv;
}

/**
 * A bias of 2 CVs (neighbour lists and cells, the longest chains of kernels) and of 8 (two of each
 * kind of pair kernel: tiles, a pair list, cells, lists) against the Reference platform: forces
 * alone (as in an MD step), then the energy alone, then both, over three frames in a row (the
 * second moves every particle a little, which keeps the lists; the third is new). The chain rule
 * reads every CV's sum and gradient, written by kernels launched up to eight CVs before it.
 * gpu_suite.sh's stress stage runs this test (with testForcesOnlyAgainstReference) in many
 * processes at once under CUDA MPS, where an ordering error between kernels shows.
 */
void testBiasForcesOnly() {
    const int numParticles = 2000;
    const double edge = 4.0;
    for (int numCVs : {2, 8}) {
        System system;
        Vec3 box[3] = {Vec3(edge, 0, 0), Vec3(0, edge, 0), Vec3(0, 0, edge)};
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
        CoordinationBiasForce* bias = new CoordinationBiasForce("0");
        string expression = "0", term;
        for (int k = 0; k < numCVs; k++) {
            string name = "c"+to_string(k);
            int kind = (numCVs == 2 ? 3-k : k%4);
            bias->addCollectiveVariable(name, forcesOnlyCV(kind, k/4, numParticles, name, term));
            expression += "+"+term;
        }
        bias->setEnergyExpression(expression);
        bias->addGlobalParameter("k", 2.0);
        system.addForce(bias);
        VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
        Context context(system, integrator, platform, properties);
        Context reference(system, referenceIntegrator, referencePlatform());
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(60+numCVs, sfmt);
        vector<Vec3> positions = randomPositions(numParticles, edge, 31+numCVs);
        for (int frame = 0; frame < 3; frame++) {
            if (frame == 1)
                for (Vec3& p : positions)
                    p += randomVector(sfmt, 0.02);
            if (frame == 2)
                positions = randomPositions(numParticles, edge, 47+numCVs);
            assertForcesOnlyAgree(context, reference, positions, to_string(numCVs)+" CVs, frame "+to_string(frame));
        }
    }
}

/** A table of f(x, y) = x*y + x + 2y over a grid (splines reproduce it). */
static Continuous2DFunction* bilinearTable(double scale) {
    int size = 12;
    double min = -1.0, max = 21.0;
    vector<double> values(size*size);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < size; i++) {
            double x = min+(max-min)*i/(size-1), y = min+(max-min)*j/(size-1);
            values[i+size*j] = scale*(x*y+x+2*y);
        }
    return new Continuous2DFunction(size, size, values, min, max, min, max);
}

void testBiasTables() {
    for (int boxType = 0; boxType < 3; boxType += 2) {
        CoordinationBiasForce* bias = new CoordinationBiasForce("bias(c1, c2) + line(c3)");
        bias->addTabulatedFunction("bias", bilinearTable(1.0));
        bias->addTabulatedFunction("line", new Continuous1DFunction({-2.0, 10.0, 22.0, 34.0}, -1.0, 11.0));
        checkBias(bias, 0, 3, boxType, [] (const vector<double>& c, vector<double>& d) {
            d = {c[1]+1, c[0]+2, 3.0};
            return c[0]*c[1]+c[0]+2*c[1]+3*c[2]+1;
        });
    }
    // A three-dimensional table of a linear function.
    CoordinationBiasForce* bias = new CoordinationBiasForce("t(c1, c2, c3)");
    vector<double> values(4*4*4);
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++)
                values[i+4*(j+4*k)] = 4.0*i+2.0*j-1.0*k;
    bias->addTabulatedFunction("t", new Continuous3DFunction(4, 4, 4, values, 0, 12, 0, 12, 0, 12));
    checkBias(bias, 1, 3, 0, [] (const vector<double>& c, vector<double>& d) {
        d = {1.0, 0.5, -0.25};
        return c[0]+0.5*c[1]-0.25*c[2];
    });
}

void testBiasUpdateParameters() {
    CoordinationBiasForce* bias = new CoordinationBiasForce("k*c1 + bias(c1, c2)");
    bias->addGlobalParameter("k", 2.0);
    bias->addCollectiveVariable("c1", biasCV(0, true));
    bias->addCollectiveVariable("c2", biasCV(5, true));
    bias->addTabulatedFunction("bias", bilinearTable(1.0));
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    vector<Vec3> gradient;
    double c1 = aloneCV(bias->getCollectiveVariable(0), positions, box, gradient);
    double c2 = bias->getCollectiveVariableValues(*context)[1];
    ASSERT_EQUAL_TOL(2*c1+c1*c2+c1+2*c2, context->getState(State::Energy).getPotentialEnergy(), tolerance);
    // New switching parameters, a new default of k, new table values.
    bias->getCollectiveVariable(0).setR0(0.4);
    bias->getCollectiveVariable(1).setPairParameters({2.0, 1.0, 1.0}, {});
    bias->setGlobalParameterDefaultValue(0, 5.0);
    dynamic_cast<Continuous2DFunction&>(bias->getTabulatedFunction(0)) = *unique_ptr<Continuous2DFunction>(bilinearTable(3.0));
    bias->updateParametersInContext(*context);
    ASSERT_EQUAL(5.0, context->getParameter("k"));
    double newC1 = aloneCV(bias->getCollectiveVariable(0), positions, box, gradient);
    double newC2 = aloneCV(bias->getCollectiveVariable(1), positions, box, gradient);
    ASSERT(fabs(newC1-c1) > 1e-3 && fabs(newC2-c2) > 1e-3);
    vector<double> values = bias->getCollectiveVariableValues(*context);
    ASSERT_EQUAL_TOL(newC1, values[0], tolerance);
    ASSERT_EQUAL_TOL(newC2, values[1], tolerance);
    ASSERT_EQUAL_TOL(5*newC1+3*(newC1*newC2+newC1+2*newC2), context->getState(State::Energy).getPotentialEnergy(), tolerance);
    // A Context parameter set by the user stays when the default does not change.
    context->setParameter("k", 1.0);
    bias->updateParametersInContext(*context);
    ASSERT_EQUAL(1.0, context->getParameter("k"));
    // Pairs cannot change.
    bias->getCollectiveVariable(0).setGroup({0, 1, 2});
    ASSERT_BIAS_ERROR(bias->updateParametersInContext(*context), "groups");
    // A global parameter added after the Context was created: the update names it.
    bias->getCollectiveVariable(0).setGroup({0, 1, 2, 3, 4, 5});
    bias->addGlobalParameter("late", 2.0);
    ASSERT_BIAS_ERROR(bias->updateParametersInContext(*context), "CoordinationBiasForce: updateParametersInContext: the global parameter \"late\" is not in the Context");
    ASSERT_EQUAL(1.0, context->getParameter("k"));
}

/**
 * A table of 1, 2 or 3 dimensions over [-1, 21] on each axis of sizes[d] points (the first
 * `dimensions` of them) with the values of f(x, y, z) (y and z at the minimum for fewer
 * dimensions). A periodic table takes each axis's last point as its first again, the same value.
 */
static TabulatedFunction* gridTable(int dimensions, const int sizes[3], bool periodic, const function<double(double, double, double)>& f) {
    const double min = -1.0, max = 21.0;
    int n[3] = {sizes[0], dimensions > 1 ? sizes[1] : 1, dimensions > 2 ? sizes[2] : 1};
    auto point = [&] (int i, int size) {
        return min+(max-min)*(periodic ? i%(size-1) : i)/(size-1);
    };
    vector<double> values(n[0]*n[1]*n[2]);
    for (int k = 0; k < n[2]; k++)
        for (int j = 0; j < n[1]; j++)
            for (int i = 0; i < n[0]; i++)
                values[i+n[0]*(j+n[1]*k)] = f(point(i, sizes[0]), point(j, sizes[1]), point(k, sizes[2]));
    if (dimensions == 1)
        return new Continuous1DFunction(values, min, max, periodic);
    if (dimensions == 2)
        return new Continuous2DFunction(n[0], n[1], values, min, max, min, max, periodic);
    return new Continuous3DFunction(n[0], n[1], n[2], values, min, max, min, max, min, max, periodic);
}

/**
 * A smooth table of 1, 2 or 3 dimensions over [-1, 21] on each axis that no cubic reproduces
 * (a 1-D one of `points` points: 1200 are too many for the CUDA fit's shared memory).
 */
static TabulatedFunction* curvedTable(int dimensions, double phase, bool periodic = false, int points = 13) {
    const int sizes[3] = {points, 11, 7};
    return gridTable(dimensions, sizes, periodic, [phase] (double x, double y, double z) {
        return 3*sin(0.4*x+phase)+2*cos(0.3*y-phase)*(1+0.05*z)+0.01*x*y*z;
    });
}

/** Give a table the values (and shape) of another of the same type. */
static void setTableValues(TabulatedFunction& table, const TabulatedFunction& source) {
    vector<double> values;
    int nx, ny, nz;
    double xmin, xmax, ymin, ymax, zmin, zmax;
    if (auto line = dynamic_cast<const Continuous1DFunction*>(&source)) {
        line->getFunctionParameters(values, xmin, xmax);
        dynamic_cast<Continuous1DFunction&>(table).setFunctionParameters(values, xmin, xmax);
    }
    else if (auto plane = dynamic_cast<const Continuous2DFunction*>(&source)) {
        plane->getFunctionParameters(nx, ny, values, xmin, xmax, ymin, ymax);
        dynamic_cast<Continuous2DFunction&>(table).setFunctionParameters(nx, ny, values, xmin, xmax, ymin, ymax);
    }
    else {
        dynamic_cast<const Continuous3DFunction&>(source).getFunctionParameters(nx, ny, nz, values, xmin, xmax, ymin, ymax, zmin, zmax);
        dynamic_cast<Continuous3DFunction&>(table).setFunctionParameters(nx, ny, nz, values, xmin, xmax, ymin, ymax, zmin, zmax);
    }
}

void testBiasUpdateTable() {
    // Tables of 1, 2 and 3 dimensions, a periodic one and a long one, each replaced in a Context by
    // updateTabulatedFunctionInContext(): the energy and forces are then those of a Context
    // created with the new tables (on CUDA: fitted on the GPU, against fitted on the host).
    auto makeForce = [] (double phase) {
        CoordinationBiasForce* bias = new CoordinationBiasForce("t1(c1) + t2(c1, c2) + t3(c1, c2, c3) + p(c3) + long(c2)");
        for (int k = 0; k < 3; k++)
            bias->addCollectiveVariable("c"+to_string(k+1), biasCV(k, true));
        for (int d = 1; d <= 3; d++)
            bias->addTabulatedFunction("t"+to_string(d), curvedTable(d, phase));
        bias->addTabulatedFunction("p", curvedTable(1, 2*phase, true));
        bias->addTabulatedFunction("long", curvedTable(1, 3*phase, false, 1200));
        return bias;
    };
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    CoordinationBiasForce* bias = makeForce(0.0);
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
    double oldEnergy = context->getState(State::Energy).getPotentialEnergy();
    CoordinationBiasForce* updated = makeForce(0.7);
    for (int i = 0; i < 5; i++) {
        setTableValues(bias->getTabulatedFunction(i), updated->getTabulatedFunction(i));
        bias->updateTabulatedFunctionInContext(*context, i);
    }
    System freshSystem;
    VerletIntegrator freshIntegrator(0.001);
    unique_ptr<Context> fresh(biasContext(freshSystem, freshIntegrator, {updated}, positions, box));
    State expected = fresh->getState(State::Energy | State::Forces);
    State found = context->getState(State::Energy | State::Forces);
    ASSERT(fabs(expected.getPotentialEnergy()-oldEnergy) > 1.0);
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), found.getPotentialEnergy(), tolerance);
    assertForcesEqual(expected.getForces(), found.getForces(), forceTolerance());
    // A table of another shape, an index out of range or a value that is not finite: an error,
    // and the Context keeps its tables.
    Continuous1DFunction& line = dynamic_cast<Continuous1DFunction&>(bias->getTabulatedFunction(0));
    line.setFunctionParameters({1.0, 2.0, 3.0}, -1.0, 21.0);
    ASSERT_BIAS_ERROR(bias->updateTabulatedFunctionInContext(*context, 0), "3 points over [-1, 21], not periodic, the Context's has 13 points");
    line.setFunctionParameters(vector<double>(13, 1.0), -1.0, 22.0);
    ASSERT_BIAS_ERROR(bias->updateTabulatedFunctionInContext(*context, 0), "updateParametersInContext");
    vector<double> values(13, 1.0);
    values[5] = NAN;
    line.setFunctionParameters(values, -1.0, 21.0);
    ASSERT_BIAS_ERROR(bias->updateTabulatedFunctionInContext(*context, 0), "not finite at index 5");
    ASSERT_BIAS_ERROR(bias->updateTabulatedFunctionInContext(*context, 5), "tabulated function index out of range: 5");
    ASSERT_BIAS_ERROR(bias->updateTabulatedFunctionInContext(*context, -1), "tabulated function index out of range: -1");
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), context->getState(State::Energy).getPotentialEnergy(), tolerance);
}

/** The function periodicTable() tabulates, at a point (y and z at the axes' minimum for fewer dimensions). */
static double periodicFunction(double x, double y, double z, double phase) {
    const double min = -1.0, max = 21.0, w = 2*M_PI/(max-min);
    return 2*sin(w*(x-min)+phase)+cos(w*(y-min)-phase)*(1.5+sin(w*(z-min)));
}

/** A smooth periodic table of 1, 2 or 3 dimensions over [-1, 21] on each axis (the period its range). */
static TabulatedFunction* periodicTable(int dimensions, double phase) {
    const int sizes[3] = {15, 9, 7};
    return gridTable(dimensions, sizes, true, [phase] (double x, double y, double z) {
        return periodicFunction(x, y, z, phase);
    });
}

/** The largest difference between two sets of forces over the largest force of the first. */
static double relativeForceDifference(const vector<Vec3>& expected, const vector<Vec3>& found) {
    double largest = 0, difference = 0;
    for (int i = 0; i < expected.size(); i++) {
        largest = max(largest, sqrt(expected[i].dot(expected[i])));
        Vec3 delta = expected[i]-found[i];
        difference = max(difference, sqrt(delta.dot(delta)));
    }
    return difference/largest;
}

/**
 * Curved tables of 1, 2 and 3 dimensions, periodic and not, against the Reference platform, as
 * created and after updateTabulatedFunctionInContext() (on CUDA: fitted on the GPU, the periodic
 * ones on the host). In double precision (a tolerance under 1e-7) the energy agrees to 1e-12
 * relative and the forces to 1e-10 of the largest force: the tables' spline coefficients are double
 * there, on every platform.
 */
void testBiasTablesAgainstReference() {
    // Forces in double precision: a GPU platform adds them in OpenMM's 64-bit fixed point (2^-32
    // kJ/mol/nm a unit), once an atom for each CV's chain rule, an absolute floor of 2.3e-10
    // kJ/mol/nm a CV. Unscaled, these tables gave forces of 0.5 to 2.2 kJ/mol/nm and errors of 1.4e-10
    // to 1.1e-9 of the largest on CUDA (H100); scaled by `amplitude`, the forces are those of a real
    // bias (metadynamics of a coordination number: tens of kJ/mol/nm), where the floor is under 1e-10
    // and the gradient buffers' unit (2^-40 in double) decides: 6.9e-12 to 3.9e-11 (H100, 2026-12-05).
    const double amplitude = 20;
    bool doublePrecision = (tolerance < 1e-7);
    double energyTolerance = (doublePrecision ? 1e-12 : tolerance), forceTol = (doublePrecision ? 1e-10 : forceTolerance());
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 1);
    const string arguments[3] = {"c1", "c1, c2", "c1, c2, c3"};
    string failures;
    for (bool periodic : {false, true})
        for (int dimensions = 1; dimensions <= 3; dimensions++) {
            auto makeForce = [&] (double phase) {
                CoordinationBiasForce* bias = new CoordinationBiasForce(to_string(amplitude)+"*t("+arguments[dimensions-1]+")");
                for (int k = 0; k < 3; k++)
                    bias->addCollectiveVariable("c"+to_string(k+1), biasCV(k, true));
                bias->addTabulatedFunction("t", periodic ? periodicTable(dimensions, phase) : curvedTable(dimensions, phase));
                return bias;
            };
            CoordinationBiasForce* bias = makeForce(0.0);
            System system;
            VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
            unique_ptr<Context> context(biasContext(system, integrator, {bias}, positions, box));
            Context reference(system, referenceIntegrator, referencePlatform());
            reference.setPositions(positions);
            unique_ptr<CoordinationBiasForce> updated(makeForce(0.7));
            for (int round = 0; round < 2; round++) {
                State expected = reference.getState(State::Energy | State::Forces);
                State found = context->getState(State::Energy | State::Forces);
                double energyError = fabs(found.getPotentialEnergy()-expected.getPotentialEnergy())/fabs(expected.getPotentialEnergy());
                double forceError = relativeForceDifference(expected.getForces(), found.getForces()), largest = 0;
                for (const Vec3& f : expected.getForces())
                    largest = max(largest, sqrt(f.dot(f)));
                cout << "    " << dimensions << "-D" << (periodic ? ", periodic" : "") << (round == 0 ? ", as created" : ", updated")
                        << ": energy " << expected.getPotentialEnergy() << " (relative error " << energyError
                        << "), forces' relative error " << forceError << " (the largest force " << largest << " kJ/mol/nm)" << endl;
                ASSERT(fabs(expected.getPotentialEnergy()) > 0.1);
                if (periodic) {
                    // The Reference platform too is checked: a periodic table interpolates its smooth
                    // function to 2e-5 (1-D) and 4e-3 (3-D, 7 points along z) relative here, where a
                    // natural spline (a periodic table copied by TabulatedFunction::Copy(), which
                    // drops periodicity) was 7.5e-4 off in 1-D and 2% in 2-D and 3-D.
                    vector<double> c = bias->getCollectiveVariableValues(reference);
                    double phase = (round == 0 ? 0.0 : 0.7);
                    double exact = amplitude*periodicFunction(c[0], dimensions > 1 ? c[1] : -1.0, dimensions > 2 ? c[2] : -1.0, phase);
                    ASSERT_EQUAL_TOL(exact, expected.getPotentialEnergy(), dimensions == 1 ? 2e-4 : 5e-3);
                }
                // Every table is compared before the test fails, naming those that disagree.
                if (!(energyError <= energyTolerance && forceError <= forceTol))
                    failures += " "+to_string(dimensions)+"-D"+(periodic ? " periodic" : "")+(round == 0 ? " as created" : " updated")+";";
                if (round == 1)
                    break;
                // New values, in both Contexts.
                setTableValues(bias->getTabulatedFunction(0), updated->getTabulatedFunction(0));
                bias->updateTabulatedFunctionInContext(*context, 0);
                bias->updateTabulatedFunctionInContext(reference, 0);
            }
        }
    if (!failures.empty())
        throw OpenMMException("Tables that disagree with the Reference platform:"+failures);
}

void testBiasErrors() {
    ASSERT_BIAS_ERROR(CoordinationBiasForce("c1*"), "c1*");
    CoordinationBiasForce bias("c1 + c2");
    CoordinationForce* cv = biasCV(0, false);
    // Names.
    for (string name : {"", "1c", "a b", "c-1"})
        ASSERT_BIAS_ERROR(bias.addCollectiveVariable(name, cv), name);
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("c1", NULL), "null");
    bias.addGlobalParameter("k", 1.0);
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("k", cv), "global parameter");
    ASSERT_EQUAL(0, bias.addCollectiveVariable("c1", cv));
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("c1", biasCV(1, false)), "c1");
    ASSERT_BIAS_ERROR(bias.addGlobalParameter("c1", 1.0), "c1");
    ASSERT_BIAS_ERROR(bias.setGlobalParameterName(0, "c1"), "c1");
    ASSERT_BIAS_ERROR(bias.addGlobalParameter("w", NAN), "nan");
    ASSERT_EQUAL(0, bias.getCollectiveVariableIndex("c1"));
    ASSERT_BIAS_ERROR(bias.getCollectiveVariableIndex("c9"), "c9");
    ASSERT_BIAS_ERROR(bias.getCollectiveVariable(1), "1");
    // The same force twice, or to a second owner.
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("c2", cv), "already belongs");
    CoordinationBiasForce other("d");
    ASSERT_BIAS_ERROR(other.addCollectiveVariable("d", cv), "already belongs");
    // A CV with an energy expression of its own; mixed periodicity.
    unique_ptr<CoordinationForce> restrained(biasCV(1, false));
    restrained->setEnergyExpression("2*cv");
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("c2", restrained.get()), "2*cv");
    unique_ptr<CoordinationForce> periodic(biasCV(1, true));
    ASSERT_BIAS_ERROR(bias.addCollectiveVariable("c2", periodic.get()), "periodic");
    // Too many CVs.
    CoordinationBiasForce many("c0");
    for (int k = 0; k < CoordinationBiasForce::MaxCollectiveVariables; k++)
        many.addCollectiveVariable("c"+to_string(k), biasCV(k, false));
    unique_ptr<CoordinationForce> extra(biasCV(0, false));
    ASSERT_BIAS_ERROR(many.addCollectiveVariable("extra", extra.get()), "MaxCollectiveVariables");
    // Tables.
    unique_ptr<Discrete1DFunction> discrete(new Discrete1DFunction({1.0, 2.0}));
    ASSERT_BIAS_ERROR(bias.addTabulatedFunction("f", discrete.get()), "Continuous");
    // Checked when a Context is created: unknown variables and functions, CVs changed after
    // they were added, tables, no CVs.
    vector<Vec3> positions;
    Vec3 box[3];
    biasPositions(positions, box, 0);
    auto contextError = [&] (CoordinationBiasForce* force, const string& text) {
        System system;
        for (int i = 0; i < biasParticles; i++)
            system.addParticle(1.0);
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        ASSERT_BIAS_ERROR(Context(system, integrator, platform, properties), text);
    };
    auto twoCVs = [&] (const string& expression) {
        CoordinationBiasForce* force = new CoordinationBiasForce(expression);
        force->addCollectiveVariable("c1", biasCV(0, false));
        force->addCollectiveVariable("c2", biasCV(1, false));
        return force;
    };
    contextError(twoCVs("c1 + zz"), "zz");
    contextError(twoCVs("foo(c1)"), "foo");
    contextError(new CoordinationBiasForce("1"), "no collective variables");
    CoordinationBiasForce* changed = twoCVs("c1+c2");
    changed->getCollectiveVariable(1).setEnergyExpression("cv^2");
    contextError(changed, "cv^2");
    changed = twoCVs("c1+c2");
    changed->getCollectiveVariable(1).setUsesPeriodicBoundaryConditions(true);
    contextError(changed, "periodic");
    CoordinationBiasForce* table = twoCVs("t(c1, c2)");
    table->addTabulatedFunction("t", new Continuous2DFunction(2, 2, {0.0, 1.0, NAN, 2.0}, 0, 1, 0, 1));
    contextError(table, "not finite");
    table = twoCVs("t(c1, c2)");
    table->addTabulatedFunction("t", new Continuous2DFunction(2, 2, {0.0, 1.0, 1.0, 2.0}, 0, INFINITY, 0, 1));
    contextError(table, "min < max");
    contextError(twoCVs("t(c1)"), "t");
    // A non-finite energy.
    System system;
    VerletIntegrator integrator(0.001);
    unique_ptr<Context> context(biasContext(system, integrator, {twoCVs("sqrt(c1-1000)")}, positions, box));
    ASSERT_EVALUATION_ERROR(context->getState(State::Energy).getPotentialEnergy(), true, *context, "sqrt(c1-1000)");
}

/** setEnergyFunction and getEnergyFunction (OpenMM's names, as in CustomCVForce) on both forces, and the
 * earlier names, their aliases: each reads what the other wrote; an expression that does not parse, or
 * that has a part without variables that is not a number, is refused. */
void testEnergyFunctionNames() {
    CoordinationForce force(vector<int>{0, 1});
    ASSERT_EQUAL(string("cv"), force.getEnergyFunction());
    force.setEnergyFunction("2*cv");
    ASSERT_EQUAL(string("2*cv"), force.getEnergyExpression());
    force.setEnergyExpression("3*cv");
    ASSERT_EQUAL(string("3*cv"), force.getEnergyFunction());
    ASSERT_COORDINATION_ERROR(force.setEnergyFunction("cv+"));
    CoordinationBiasForce bias("c1");
    ASSERT_EQUAL(string("c1"), bias.getEnergyFunction());
    bias.setEnergyFunction("2*c1");
    ASSERT_EQUAL(string("2*c1"), bias.getEnergyExpression());
    bias.setEnergyExpression("c1^2");
    ASSERT_EQUAL(string("c1^2"), bias.getEnergyFunction());
    // A part that is not a number (Lepton's optimize() would never end on it), in the constructor too.
    ASSERT_COORDINATION_ERROR_NAMING(bias.setEnergyFunction("bias(c1, c2)+sqrt(-1)"), "CoordinationBiasForce");
    ASSERT_COORDINATION_ERROR_NAMING(CoordinationBiasForce("c1*(-1)^c2"), "log");
    ASSERT_EQUAL(string("c1^2"), bias.getEnergyFunction());
}

void runBiasTests() {
    RUN_TEST(testEnergyFunctionNames);
    RUN_TEST(testBiasTwoHarmonic);
    RUN_TEST(testBiasThreeWall);
    RUN_TEST(testBiasEightCVs);
    // Against the Reference platform: on every other platform.
    if (platform.getName() != referencePlatform().getName())
        RUN_TEST(testBiasAgainstReference);
    if (platform.getName() != referencePlatform().getName())
        RUN_TEST(testBiasForcesOnly);
    RUN_TEST(testBiasTables);
    RUN_TEST(testBiasUpdateParameters);
    RUN_TEST(testBiasUpdateTable);
    if (platform.getName() != referencePlatform().getName())
        RUN_TEST(testBiasTablesAgainstReference);
    RUN_TEST(testBiasErrors);
}
