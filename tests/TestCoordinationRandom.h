/* Tests on random configurations: forces against finite differences, a larger periodic system
 * against the Reference platform, and molecular dynamics with PME (which makes GPU platforms
 * reorder atoms) followed by a comparison with the Reference platform. */

#include "CoordinationTestUtilities.h"
#include "openmm/LangevinMiddleIntegrator.h"
#include "openmm/NonbondedForce.h"

/** No box, a rectangular one or a triclinic one. */
enum TestBox {NoBox, RectangularBox, TriclinicBox};

static void setBox(TestBox type, double scale, Vec3* box) {
    if (type == TriclinicBox)
        triclinicBox(box);
    else {
        box[0] = Vec3(1.5, 0, 0);
        box[1] = Vec3(0, 1.6, 0);
        box[2] = Vec3(0, 0, 1.7);
    }
    for (int k = 0; k < 3; k++)
        box[k] *= scale;
}

/** Create a force of the given mode over numParticles particles (pair lists: random pairs). */
static CoordinationForce* randomForce(CoordinationForce::Mode mode, int numParticles, int numPairs, OpenMM_SFMT::SFMT& sfmt) {
    vector<int> all, a, b;
    for (int i = 0; i < numParticles; i++)
        all.push_back(i);
    if (mode == CoordinationForce::OneGroup)
        return new CoordinationForce(all);
    if (mode == CoordinationForce::TwoGroups) {
        // Overlapping groups, listed out of order.
        for (int i = 0; i < numParticles; i++) {
            if (i < 0.6*numParticles)
                a.push_back(i);
            if (i >= 0.4*numParticles)
                b.insert(b.begin(), i);
        }
        return new CoordinationForce(a, b);
    }
    for (int k = 0; k < numPairs; k++) {
        int i = (int) (uniform(sfmt)*numParticles), j = (int) (uniform(sfmt)*(numParticles-1));
        a.push_back(i);
        b.push_back(j < i ? j : j+1);
    }
    return new CoordinationForce(a, b, true);
}

/** Whether every pair distance is at least margin away from d0 and dmax. */
static bool farFromKinks(const CoordinationForce& force, const vector<Vec3>& positions, const Vec3* box, double margin) {
    bool far = true;
    forEachPair(force, [&] (int i, int j) {
        Vec3 d = nearestImage(positions[j]-positions[i], force.usesPeriodicBoundaryConditions() ? box : NULL);
        double r = sqrt(d.dot(d));
        if (fabs(r-force.getD0()) < margin || fabs(r-force.getDMax()) < margin)
            far = false;
    });
    return far;
}

struct FiniteDifferenceCase {
    CoordinationForce::Mode mode;
    TestBox box;
    string energy;
    function<void(CoordinationForce&)> configure;
};

void testFiniteDifferences() {
    typedef CoordinationForce F;
    vector<FiniteDifferenceCase> cases = {
        {F::OneGroup, NoBox, "cv", [] (F& f) { f.setR0(0.3); }},
        {F::TwoGroups, RectangularBox, "cv+0.3*cv^2", [] (F& f) { f.setR0(0.25); f.setD0(0.05); f.setN(6); f.setM(10); f.setDMax(INFINITY); }},
        {F::PairList, TriclinicBox, "cv", [] (F& f) { f.setSwitchingFunction(F::Smap); f.setR0(0.3); f.setD0(0.02); f.setA(4); f.setB(8); f.setDMax(0.8); }},
        {F::OneGroup, TriclinicBox, "sin(cv)", [] (F& f) { f.setSwitchingFunction(F::Gaussian); f.setR0(0.3); }},
        {F::TwoGroups, NoBox, "cv", [] (F& f) { f.setSwitchingFunction(F::Exp); f.setR0(0.2); f.setD0(0.1); f.setDMax(1.0); }},
        {F::OneGroup, RectangularBox, "2*cv", [] (F& f) { f.setSwitchingFunction(F::Tanh); f.setR0(0.25); }},
        {F::TwoGroups, TriclinicBox, "cv", [] (F& f) { f.setSwitchingFunction(F::Cosinus); f.setR0(0.5); f.setD0(0.05); }},
        {F::PairList, NoBox, "cv^2", [] (F& f) { f.setSwitchingFunction(F::Custom); f.setCustomExpression("exp(-x^2)*(1+x)"); f.setR0(0.3); }},
        {F::OneGroup, RectangularBox, "cv", [] (F& f) { f.setSwitchingFunction(F::Cubic); f.setD0(0.05); f.setDMax(0.7); }}
    };
    const int numParticles = 9;
    for (int c = 0; c < cases.size(); c++) {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(100+c, sfmt);
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        Vec3 box[3];
        setBox(cases[c].box, 1.0, box);
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
        CoordinationForce* force = randomForce(cases[c].mode, numParticles, 12, sfmt);
        cases[c].configure(*force);
        force->setEnergyExpression(cases[c].energy);
        force->setUsesPeriodicBoundaryConditions(cases[c].box != NoBox);
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        // Redraw until no pair lies within the finite-difference step of a kink (d0, dmax). With a
        // box, the particles lie in a ball narrower than half the box (so no two images of a pair
        // tie), each moved by a random lattice vector.
        vector<Vec3> positions;
        do {
            positions.clear();
            for (int i = 0; i < numParticles; i++) {
                if (cases[c].box == NoBox)
                    positions.push_back(randomVector(sfmt, 1.2));
                else {
                    Vec3 p;
                    do {
                        p = randomVector(sfmt, 0.74)-Vec3(0.37, 0.37, 0.37);
                    } while (p.dot(p) > 0.37*0.37);
                    for (int k = 0; k < 3; k++)
                        p += box[k]*(floor(3*uniform(sfmt))-1);
                    positions.push_back(p);
                }
            }
        } while (!farFromKinks(*force, positions, box, 0.01));
        assertFiniteDifferences(context, positions, "finite-difference case "+to_string(c));
    }
}

/**
 * Histogram counts must be equal, except that rounding in lower precision may move a pair lying
 * on a bin edge to the next bin (the GPU's cell lists shift positions by box vectors in single
 * precision: a few pairs in a million).
 */
static void assertHistogramsEqual(const vector<long long>& expected, const vector<long long>& found) {
    ASSERT_EQUAL(expected.size(), found.size());
    long long differences = 0, total = 0;
    for (int k = 0; k < found.size(); k++) {
        differences += llabs(expected[k]-found[k]);
        total += expected[k];
    }
    ASSERT(total > 20);
    ASSERT(differences <= (tolerance < 1e-8 ? 0 : 4+total/100000));
}

/** Compare energy, CV, forces and histogram of a Context on the platform under test with Reference. */
static void compareWithReference(System& system, CoordinationForce& force, const vector<Vec3>& positions, const Vec3* box, double histogramRange) {
    if (box != NULL)
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
    Context context(system, integrator, platform, properties);
    Context reference(system, referenceIntegrator, referencePlatform());
    for (Context* c : {&context, &reference}) {
        if (box != NULL)
            c->setPeriodicBoxVectors(box[0], box[1], box[2]);
        c->setPositions(positions);
    }
    State expected = reference.getState(State::Energy | State::Forces);
    State found = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), found.getPotentialEnergy(), tolerance);
    assertForcesEqual(expected.getForces(), found.getForces(), forceTolerance());
    double cv = force.getCollectiveVariableValue(reference);
    ASSERT(cv > 1.0);
    ASSERT_EQUAL_TOL(cv, force.getCollectiveVariableValue(context), tolerance);
    // Energy only.
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), context.getState(State::Energy).getPotentialEnergy(), tolerance);
    assertHistogramsEqual(force.getPairHistogram(reference, 64, histogramRange), force.getPairHistogram(context, 64, histogramRange));
}

/**
 * Add numParticles particles and a force of overlapping random groups (randomForce, its generator
 * seeded with seed) to system: periodic, with r0 and a harmonic restraint 0.5*k*(cv-cv0)^2 on the CV.
 */
static CoordinationForce* restrainedTwoGroups(System& system, int numParticles, int seed, double r0, double k, double cv0) {
    OpenMM_SFMT::SFMT sfmt;
    OpenMM_SFMT::init_gen_rand(seed, sfmt);
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    CoordinationForce* force = randomForce(CoordinationForce::TwoGroups, numParticles, 0, sfmt);
    force->setR0(r0);
    force->setUsesPeriodicBoundaryConditions(true);
    force->setEnergyExpression("0.5*k*(cv-cv0)^2");
    force->addGlobalParameter("k", k);
    force->addGlobalParameter("cv0", cv0);
    system.addForce(force);
    return force;
}

void testLargeSystemAgainstReference() {
    const int numParticles = 200;
    vector<Vec3> positions = randomPositions(numParticles, 6.0, 21);
    // Two overlapping groups in a triclinic box (half its smallest width 1.63 nm), PLUMED's
    // automatic dmax (about 1.5 nm), a harmonic restraint on the CV.
    {
        System system;
        CoordinationForce* force = restrainedTwoGroups(system, numParticles, 1, 0.22, 0.05, 5.0);
        Vec3 box[3];
        setBox(TriclinicBox, 2.0, box);
        compareWithReference(system, *force, positions, box, 1.6);
    }
    // One group in a rectangular box, a custom switching function with a stretched cutoff.
    {
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        vector<int> group;
        for (int i = numParticles-1; i >= 0; i--)
            group.push_back(i);
        CoordinationForce* force = new CoordinationForce(group);
        force->setSwitchingFunction(CoordinationForce::Custom);
        force->setCustomExpression("1/(1+x^4)");
        force->setR0(0.2);
        force->setDMax(1.2);
        force->setUsesPeriodicBoundaryConditions(true);
        system.addForce(force);
        Vec3 box[3];
        setBox(RectangularBox, 2.4, box);
        compareWithReference(system, *force, positions, box, 1.7);
    }
    // A pair list of 2000 random pairs without periodicity or cutoff.
    {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(2, sfmt);
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        CoordinationForce* force = randomForce(CoordinationForce::PairList, numParticles, 2000, sfmt);
        force->setSwitchingFunction(CoordinationForce::Smap);
        force->setR0(1.0);
        force->setA(2.0);
        force->setB(4.0);
        system.addForce(force);
        compareWithReference(system, *force, positions, NULL, 8.0);
    }
}

/** Sets an environment variable for its lifetime. */
class ScopedEnvironment {
public:
    ScopedEnvironment(const string& name, const string& value) : name(name) {
        setenv(name.c_str(), value.c_str(), 1);
    }
    ~ScopedEnvironment() {
        unsetenv(name.c_str());
    }
private:
    string name;
};

/** Overlapping random groups of some particles in a triclinic box of a size, a restraint on the CV, against Reference. */
static void compareTwoGroupTiles(int numParticles, const vector<Vec3>& positions, double boxSize) {
    System system;
    CoordinationForce* force = restrainedTwoGroups(system, numParticles, 4, 0.25, 0.01, 20.0);
    force->setN(5);
    force->setM(10);
    Vec3 box[3];
    setBox(TriclinicBox, boxSize, box);
    compareWithReference(system, *force, positions, box, 1.5);
}

void testTileShapesAgainstReference() {
    // GPU tile kernels may hold 1 or 2 L particles a thread (chosen by the number of pairs;
    // forced here through COORDINATION_L_PER_THREAD, which other platforms ignore): one group
    // without a box (three chunks of L, the last one partial), and overlapping groups in a
    // triclinic box with a restraint on the CV, against Reference. Two groups this small get S
    // chunks, and batches, of 16 on GPUs; two groups of 3,000 fill the GPU with S chunks of 32.
    const int numParticles = 600;
    vector<Vec3> positions = randomPositions(numParticles, 4.0, 31);
    for (string lPerThread : {"1", "2"}) {
        ScopedEnvironment environment("COORDINATION_L_PER_THREAD", lPerThread);
        {
            System system;
            vector<int> group;
            for (int i = 0; i < numParticles; i++) {
                system.addParticle(1.0);
                group.push_back(i);
            }
            CoordinationForce* force = new CoordinationForce(group);
            force->setR0(0.3);
            system.addForce(force);
            compareWithReference(system, *force, positions, NULL, 2.0);
        }
        compareTwoGroupTiles(numParticles, positions, 2.5);
    }
    compareTwoGroupTiles(5000, randomPositions(5000, 6.8, 32), 6.8);
}

/**
 * The System of the molecular-dynamics tests: side^3 particles of mass 40 with Lennard-Jones and
 * alternating charges of +-0.2 under PME (cutoff 0.9 nm) in a periodic cube, on a lattice of
 * spacing 0.55 nm, each position moved by a random vector of up to 0.04 nm per axis (from seed).
 * Returns the positions; the caller adds its force.
 */
static vector<Vec3> latticeSystem(System& system, int side, int seed) {
    const double spacing = 0.55, size = side*spacing;
    OpenMM_SFMT::SFMT sfmt;
    OpenMM_SFMT::init_gen_rand(seed, sfmt);
    system.setDefaultPeriodicBoxVectors(Vec3(size, 0, 0), Vec3(0, size, 0), Vec3(0, 0, size));
    NonbondedForce* nonbonded = new NonbondedForce();
    nonbonded->setNonbondedMethod(NonbondedForce::PME);
    nonbonded->setCutoffDistance(0.9);
    vector<Vec3> positions;
    for (int i = 0; i < side*side*side; i++) {
        system.addParticle(40.0);
        nonbonded->addParticle((i+i/side+i/(side*side))%2 == 0 ? 0.2 : -0.2, 0.3, 0.5);
        positions.push_back(Vec3(i%side, (i/side)%side, i/(side*side))*spacing+randomVector(sfmt, 0.04));
    }
    system.addForce(nonbonded);
    return positions;
}

/**
 * A molecular-dynamics run of the tests: 300 LangevinMiddle steps (300 K, 2 fs, seeded) of a System on
 * the platform under test (context), the state of force group 1 at its end (state: positions,
 * energy, forces), and a Context of the same System on the Reference platform at that state's box
 * and positions (reference) with its state of group 1 (expected).
 */
struct DynamicsAgainstReference {
    LangevinMiddleIntegrator integrator;
    VerletIntegrator referenceIntegrator;
    unique_ptr<Context> context, reference;
    State state, expected;

    DynamicsAgainstReference(System& system, const vector<Vec3>& positions) : integrator(300.0, 1.0, 0.002), referenceIntegrator(0.001) {
        integrator.setRandomNumberSeed(5);
        context.reset(new Context(system, integrator, platform, properties));
        context->setPositions(positions);
        context->setVelocitiesToTemperature(300.0, 7);
        integrator.step(300);
        state = context->getState(State::Positions | State::Energy | State::Forces, false, 1<<1);
        reference.reset(new Context(system, referenceIntegrator, referencePlatform()));
        Vec3 box[3];
        state.getPeriodicBoxVectors(box[0], box[1], box[2]);
        reference->setPeriodicBoxVectors(box[0], box[1], box[2]);
        reference->setPositions(state.getPositions());
        expected = reference->getState(State::Energy | State::Forces, false, 1<<1);
    }
};

void testMolecularDynamicsAgainstReference() {
    // 64 LJ particles with alternating charges (PME) and our force between the even and the odd
    // ones. GPU platforms reorder atoms every 250 steps; the CV must still use the right ones.
    const int side = 4, numParticles = side*side*side;
    System system;
    vector<Vec3> positions = latticeSystem(system, side, 3);
    vector<int> even, odd;
    for (int i = 0; i < numParticles; i++)
        (i%2 == 0 ? even : odd).push_back(i);
    CoordinationForce* force = new CoordinationForce(even, odd);
    force->setR0(0.4);
    force->setDMax(1.0);
    force->setUsesPeriodicBoundaryConditions(true);
    force->setEnergyExpression("0.5*k*(cv-cv0)^2");
    force->addGlobalParameter("k", 1.0);
    force->addGlobalParameter("cv0", 40.0);
    force->setForceGroup(1);
    system.addForce(force);
    DynamicsAgainstReference run(system, positions);
    const State& state = run.state;
    const State& expected = run.expected;
    for (const Vec3& p : state.getPositions())
        ASSERT(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]));
    Context& context = *run.context;
    Context& reference = *run.reference;
    double cv = force->getCollectiveVariableValue(reference);
    ASSERT(cv > 1.0);
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
    ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), state.getPotentialEnergy(), tolerance*max(1.0, 2*cv/fabs(cv-40.0)));
    assertForcesEqual(expected.getForces(), state.getForces(), forceTolerance()*max(1.0, 2*cv/fabs(cv-40.0)));
    assertHistogramsEqual(force->getPairHistogram(reference, 10, 1.0), force->getPairHistogram(context, 10, 1.0));
}

void runRandomTests() {
    RUN_TEST(testFiniteDifferences);
    RUN_TEST(testLargeSystemAgainstReference);
    RUN_TEST(testTileShapesAgainstReference);
    RUN_TEST(testMolecularDynamicsAgainstReference);
}
