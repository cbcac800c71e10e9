/* Tests of the energy as a function of the CV (expressions, global parameters, tables), force
 * groups, energy-only evaluation and updateParametersInContext. */

#include "CoordinationTestUtilities.h"
#include "openmm/HarmonicBondForce.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/TabulatedFunction.h"

/** Every pair of the six mode-test particles (one group, r0 = 0.3, no cutoff). */
static vector<pair<int, int> > allPairs(int numParticles) {
    vector<pair<int, int> > pairs;
    for (int i = 0; i < numParticles; i++)
        for (int j = i+1; j < numParticles; j++)
            pairs.push_back(make_pair(i, j));
    return pairs;
}

/** A System of the six mode-test particles with a one-group force over all of them; returns the force. */
static CoordinationForce* energySystem(System& system) {
    for (int i = 0; i < 6; i++)
        system.addParticle(1.0);
    CoordinationForce* force = new CoordinationForce({0, 1, 2, 3, 4, 5});
    force->setR0(0.3);
    force->setDMax(INFINITY);
    system.addForce(force);
    return force;
}

/** The CV of energySystem() at modePositions(), by hand, and its gradient. */
static double energySystemCV(vector<Vec3>& gradient) {
    return handCV(allPairs(6), modePositions(), NULL, ofR(0.3, 0.0, rational(6, 12)), gradient);
}

void testEnergyExpressionWithParameters() {
    System system;
    CoordinationForce* force = energySystem(system);
    force->setEnergyExpression("0.5*k*(cv-cv0)^2");
    force->addGlobalParameter("k", 100.0);
    force->addGlobalParameter("cv0", 0.25);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(modePositions());
    vector<Vec3> gradient;
    double cv = energySystemCV(gradient);
    ASSERT(cv > 1.0);
    ASSERT_EQUAL(100.0, context.getParameter("k"));
    assertState(context, 50*(cv-0.25)*(cv-0.25), scaledForces(gradient, 100*(cv-0.25)));
    // The CV, not the energy.
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
    // Context parameters change the energy and the forces.
    context.setParameter("k", 40.0);
    context.setParameter("cv0", -0.5);
    assertState(context, 20*(cv+0.5)*(cv+0.5), scaledForces(gradient, 40*(cv+0.5)));
    ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
    // A flat-bottomed restraint on either side of its wall.
    System system2;
    CoordinationForce* force2 = energySystem(system2);
    force2->setEnergyExpression("k*max(0, cv-upper)^2");
    force2->addGlobalParameter("k", 10.0);
    force2->addGlobalParameter("upper", cv+1);
    VerletIntegrator integrator2(0.001);
    Context context2(system2, integrator2, platform, properties);
    context2.setPositions(modePositions());
    assertState(context2, 0.0, vector<Vec3>(6));
    context2.setParameter("upper", cv-0.5);
    assertState(context2, 10*0.25, scaledForces(gradient, 10*2*0.5));
}

void testTabulatedEnergy() {
    vector<Vec3> gradient;
    double cv = energySystemCV(gradient);
    // A linear table (its natural spline is exactly linear) plus a term of cv.
    {
        System system;
        CoordinationForce* force = energySystem(system);
        vector<double> values;
        for (int i = 0; i <= 10; i++)
            values.push_back(2.0-3.0*i);
        force->addTabulatedFunction("bias", new Continuous1DFunction(values, 0.0, 10.0));
        force->setEnergyExpression("bias(cv)+0.5*cv");
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
        context.setPositions(modePositions());
        assertState(context, 2.0-2.5*cv, scaledForces(gradient, -2.5));
    }
    // A finely sampled sin(cv), then the table replaced by 2 sin(cv) between evaluations. GPU
    // platforms keep spline coefficients in single precision (OpenMM's design), so dE/dcv from a
    // table is good to about 1e-4 even in double precision.
    double tableTolerance = max(forceTolerance(), 1e-4);
    System system;
    CoordinationForce* force = energySystem(system);
    vector<double> values;
    for (int i = 0; i <= 800; i++)
        values.push_back(sin(-1.0+0.01*i));
    force->addTabulatedFunction("bias", new Continuous1DFunction(values, -1.0, 7.0));
    force->setEnergyExpression("bias(cv)");
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(modePositions());
    State state = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(sin(cv), state.getPotentialEnergy(), max(tolerance, 1e-7));
    assertForcesEqual(scaledForces(gradient, cos(cv)), state.getForces(), tableTolerance);
    for (double& v : values)
        v *= 2;
    dynamic_cast<Continuous1DFunction&>(force->getTabulatedFunction(0)).setFunctionParameters(values, -1.0, 7.0);
    force->updateParametersInContext(context);
    state = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(2*sin(cv), state.getPotentialEnergy(), max(tolerance, 1e-7));
    assertForcesEqual(scaledForces(gradient, 2*cos(cv)), state.getForces(), tableTolerance);
}

void testForceGroups() {
    System system;
    CoordinationForce* force = energySystem(system);
    force->setForceGroup(3);
    HarmonicBondForce* bond = new HarmonicBondForce();
    bond->addBond(0, 1, 0.1, 1000.0);
    system.addForce(bond);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    vector<Vec3> positions = modePositions();
    context.setPositions(positions);
    vector<Vec3> gradient;
    double cv = energySystemCV(gradient);
    Vec3 d = positions[1]-positions[0];
    double r = sqrt(d.dot(d));
    double bondEnergy = 500.0*(r-0.1)*(r-0.1);
    vector<Vec3> bondForces(6);
    bondForces[0] = d*(1000.0*(r-0.1)/r);
    bondForces[1] = -bondForces[0];
    State ours = context.getState(State::Energy | State::Forces, false, 1<<3);
    ASSERT_EQUAL_TOL(cv, ours.getPotentialEnergy(), tolerance);
    assertForcesEqual(scaledForces(gradient, 1.0), ours.getForces(), forceTolerance());
    // OpenMM's own HarmonicBondForce keeps its parameters in single precision on GPU platforms.
    double bondTolerance = max(tolerance, 1e-6);
    State theirs = context.getState(State::Energy | State::Forces, false, 1<<0);
    ASSERT_EQUAL_TOL(bondEnergy, theirs.getPotentialEnergy(), bondTolerance);
    assertForcesEqual(bondForces, theirs.getForces(), max(forceTolerance(), 1e-5));
    ASSERT_EQUAL_TOL(0.0, context.getState(State::Energy, false, 1<<1).getPotentialEnergy(), tolerance);
    vector<Vec3> total = scaledForces(gradient, 1.0);
    for (int i = 0; i < 6; i++)
        total[i] += bondForces[i];
    State all = context.getState(State::Energy | State::Forces);
    ASSERT_EQUAL_TOL(cv+bondEnergy, all.getPotentialEnergy(), bondTolerance);
    assertForcesEqual(total, all.getForces(), max(forceTolerance(), 1e-5));
}

/** Access to a Context's ContextImpl, to ask for the energy alone (Context::getState always asks for forces too). */
class ContextImplAccess : public Force {
public:
    ContextImpl& get(Context& context) const {
        return getContextImpl(context);
    }
protected:
    ForceImpl* createImpl() const {
        return NULL;
    }
};

void testEnergyOnly() {
    // A nonlinear expression: the energy needs the CV even when no forces are requested.
    System system;
    CoordinationForce* force = energySystem(system);
    force->setEnergyExpression("cv^2+2*cv");
    force->setForceGroup(2);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(modePositions());
    vector<Vec3> gradient;
    double cv = energySystemCV(gradient);
    ContextImpl& impl = ContextImplAccess().get(context);
    ASSERT_EQUAL_TOL(cv*cv+2*cv, impl.calcForcesAndEnergy(false, true), tolerance);
    ASSERT_EQUAL_TOL(cv*cv+2*cv, impl.calcForcesAndEnergy(false, true, 1<<2), tolerance);
    ASSERT_EQUAL_TOL(0.0, impl.calcForcesAndEnergy(false, true, 1<<0), tolerance);
    ASSERT_EQUAL_TOL(cv*cv+2*cv, context.getState(State::Energy).getPotentialEnergy(), tolerance);
    ASSERT_EQUAL_TOL(cv*cv+2*cv, context.getState(State::Energy, false, 1<<2).getPotentialEnergy(), tolerance);
    assertForcesEqual(scaledForces(gradient, 2*cv+2), context.getState(State::Forces).getForces(), forceTolerance());
    ASSERT_EQUAL_TOL(cv*cv+2*cv, context.getState(State::Energy).getPotentialEnergy(), tolerance);
}

void testUpdateParametersInContext() {
    System system;
    CoordinationForce* force = energySystem(system);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    vector<Vec3> positions = modePositions();
    context.setPositions(positions);
    vector<function<void(CoordinationForce&)> > changes = {
        [] (CoordinationForce& f) { f.setR0(0.25); },
        [] (CoordinationForce& f) { f.setD0(0.05); },
        [] (CoordinationForce& f) { f.setN(8); },
        [] (CoordinationForce& f) { f.setM(10); },
        [] (CoordinationForce& f) { f.setDefaultDMax(); f.setR0(0.1); },
        [] (CoordinationForce& f) { f.setDMax(0.45); },
        [] (CoordinationForce& f) { f.setStretch(false); },
        [] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Smap); f.setA(3.0); f.setB(5.0); f.setDMax(INFINITY); },
        [] (CoordinationForce& f) { f.setB(9.0); },
        [] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Custom); f.setCustomExpression("exp(-x)"); },
        [] (CoordinationForce& f) { f.setCustomExpression("1/(1+x^2)"); },
        [] (CoordinationForce& f) { f.setSwitchingFunction(CoordinationForce::Cubic); f.setDMax(0.5); },
        [] (CoordinationForce& f) { f.setEnergyExpression("3*cv+1"); }
    };
    double previous = context.getState(State::Energy).getPotentialEnergy();
    for (auto& change : changes) {
        change(*force);
        force->updateParametersInContext(context);
        vector<Vec3> gradient;
        double cv = expectedCV(*force, positions, NULL, &gradient);
        bool linear = (force->getEnergyExpression() == "3*cv+1");
        double energy = (linear ? 3*cv+1 : cv);
        assertState(context, energy, scaledForces(gradient, linear ? 3.0 : 1.0));
        ASSERT_EQUAL_TOL(cv, force->getCollectiveVariableValue(context), tolerance);
        ASSERT(fabs(energy-previous) > 1e-3);
        previous = energy;
    }
    // What changes the pairs needs a new Context.
    force->setGroups({0, 1, 2}, {3, 4, 5});
    ASSERT_COORDINATION_ERROR(force->updateParametersInContext(context));
    force->setGroup({0, 1, 2, 3, 4});
    ASSERT_COORDINATION_ERROR(force->updateParametersInContext(context));
    force->setGroup({0, 1, 2, 3, 4, 5});
    force->updateParametersInContext(context);
    force->setUsesPeriodicBoundaryConditions(true);
    ASSERT_COORDINATION_ERROR(force->updateParametersInContext(context));
}

void runEnergyTests() {
    RUN_TEST(testEnergyExpressionWithParameters);
    RUN_TEST(testTabulatedEnergy);
    RUN_TEST(testForceGroups);
    RUN_TEST(testEnergyOnly);
    RUN_TEST(testUpdateParametersInContext);
}
