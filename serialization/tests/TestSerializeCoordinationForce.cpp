/* Round trip of every CoordinationForce field through XmlSerializer. */
#include "CoordinationForce.h"
#include "internal/CoordinationForceImpl.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/AssertionUtilities.h"
#include "openmm/serialization/XmlSerializer.h"
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static void compare(const CoordinationForce& a, const CoordinationForce& b) {
    ASSERT_EQUAL(a.getForceGroup(), b.getForceGroup());
    ASSERT_EQUAL(a.getName(), b.getName());
    ASSERT_EQUAL(a.getMode(), b.getMode());
    ASSERT_EQUAL_CONTAINERS(a.getGroupA(), b.getGroupA());
    ASSERT_EQUAL_CONTAINERS(a.getGroupB(), b.getGroupB());
    ASSERT_EQUAL(a.getSwitchingFunction(), b.getSwitchingFunction());
    ASSERT_EQUAL(a.getR0(), b.getR0());
    ASSERT_EQUAL(a.getD0(), b.getD0());
    ASSERT_EQUAL(a.getN(), b.getN());
    ASSERT_EQUAL(a.getM(), b.getM());
    ASSERT_EQUAL(a.getA(), b.getA());
    ASSERT_EQUAL(a.getB(), b.getB());
    ASSERT_EQUAL(a.getCustomExpression(), b.getCustomExpression());
    ASSERT_EQUAL(a.getBeta(), b.getBeta());
    ASSERT_EQUAL(a.getLambda(), b.getLambda());
    ASSERT_EQUAL_CONTAINERS(a.getPairWeights(), b.getPairWeights());
    ASSERT_EQUAL_CONTAINERS(a.getPairR0s(), b.getPairR0s());
    ASSERT_EQUAL(a.getUsesDefaultDMax(), b.getUsesDefaultDMax());
    ASSERT(a.getDMax() == b.getDMax());
    ASSERT_EQUAL(a.getStretch(), b.getStretch());
    ASSERT_EQUAL(a.usesPeriodicBoundaryConditions(), b.usesPeriodicBoundaryConditions());
    ASSERT_EQUAL(a.getEnergyExpression(), b.getEnergyExpression());
    ASSERT_EQUAL(a.getParticleFunction(), b.getParticleFunction());
    ASSERT_EQUAL(a.getThresholdR0(), b.getThresholdR0());
    ASSERT_EQUAL(a.getThresholdD0(), b.getThresholdD0());
    ASSERT_EQUAL(a.getThresholdN(), b.getThresholdN());
    ASSERT_EQUAL(a.getThresholdM(), b.getThresholdM());
    ASSERT(a.getThresholdDMax() == b.getThresholdDMax());
    ASSERT_EQUAL(a.getBetweenLower(), b.getBetweenLower());
    ASSERT_EQUAL(a.getBetweenUpper(), b.getBetweenUpper());
    ASSERT_EQUAL(a.getBetweenSmear(), b.getBetweenSmear());
    ASSERT_EQUAL(a.getFunctionBeta(), b.getFunctionBeta());
    ASSERT_EQUAL(a.getMomentPower(), b.getMomentPower());
    ASSERT_EQUAL(a.getDistancePower(), b.getDistancePower());
    ASSERT_EQUAL(a.getNumGlobalParameters(), b.getNumGlobalParameters());
    for (int i = 0; i < a.getNumGlobalParameters(); i++) {
        ASSERT_EQUAL(a.getGlobalParameterName(i), b.getGlobalParameterName(i));
        ASSERT_EQUAL(a.getGlobalParameterDefaultValue(i), b.getGlobalParameterDefaultValue(i));
    }
    ASSERT_EQUAL(a.getNumTabulatedFunctions(), b.getNumTabulatedFunctions());
    for (int i = 0; i < a.getNumTabulatedFunctions(); i++) {
        ASSERT_EQUAL(a.getTabulatedFunctionName(i), b.getTabulatedFunctionName(i));
        vector<double> valuesA, valuesB;
        double minA, maxA, minB, maxB;
        dynamic_cast<const Continuous1DFunction&>(a.getTabulatedFunction(i)).getFunctionParameters(valuesA, minA, maxA);
        dynamic_cast<const Continuous1DFunction&>(b.getTabulatedFunction(i)).getFunctionParameters(valuesB, minB, maxB);
        ASSERT_EQUAL_CONTAINERS(valuesA, valuesB);
        ASSERT_EQUAL(minA, minB);
        ASSERT_EQUAL(maxA, maxB);
        ASSERT_EQUAL(a.getTabulatedFunction(i).getPeriodic(), b.getTabulatedFunction(i).getPeriodic());
    }
    // The copy evaluates the same switching function (where the original can evaluate it at all).
    for (double r : {0.0, 0.05, 0.2, 0.31, 0.5, 0.9, 1.4, 2.5}) {
        double dsdrA, dsdrB, sA;
        try {
            sA = a.evaluateSwitchingFunction(r, dsdrA);
        }
        catch (const OpenMMException&) {
            continue;
        }
        ASSERT_EQUAL(sA, b.evaluateSwitchingFunction(r, dsdrB));
        ASSERT_EQUAL(dsdrA, dsdrB);
        if (a.getMode() == CoordinationForce::PairList)
            for (int k = 0; k < a.getGroupA().size(); k++) {
                ASSERT_EQUAL(a.evaluatePairSwitchingFunction(k, r, dsdrA), b.evaluatePairSwitchingFunction(k, r, dsdrB));
                ASSERT_EQUAL(dsdrA, dsdrB);
            }
    }
}

static void roundTrip(const CoordinationForce& force) {
    stringstream buffer;
    XmlSerializer::serialize<CoordinationForce>(&force, "Force", buffer);
    CoordinationForce* copy = XmlSerializer::deserialize<CoordinationForce>(buffer);
    compare(force, *copy);
    delete copy;
}

void testEveryField() {
    CoordinationForce force({1, 5, 7}, {2, 3, 4, 7});
    force.setForceGroup(3);
    force.setName("pocket water");
    force.setSwitchingFunction(CoordinationForce::Smap);
    force.setR0(0.41);
    force.setD0(0.05);
    force.setN(8);
    force.setM(14);
    force.setA(3.5);
    force.setB(7.25);
    force.setCustomExpression("exp(-x^2)*(1+x)");
    force.setDMax(1.3);
    force.setStretch(false);
    force.setUsesPeriodicBoundaryConditions(true);
    force.setEnergyExpression("0.5*k*(cv-cv0)^2+bias(cv)");
    force.addGlobalParameter("k", 100.0);
    force.addGlobalParameter("cv0", 2.5);
    force.addTabulatedFunction("bias", new Continuous1DFunction({0.0, 1.5, 0.25, -3.0}, 0.0, 8.0));
    roundTrip(force);
}

void testParticleFunction() {
    // Every parameter of the per-atom coordination numbers (version 3), each away from its default.
    CoordinationForce force({0, 2, 4}, {1, 3, 5});
    force.setParticleFunction(CoordinationForce::Between);
    force.setThreshold(2.5, 0.25, 8, 14, 4.5);
    force.setBetweenBounds(-1.5, 3.25, 0.3);
    force.setFunctionBeta(0.7);
    force.setMomentPower(4);
    force.setDistancePower(1.5);
    roundTrip(force);
}

void testModesAndDMax() {
    CoordinationForce one({0, 1, 2, 3});
    roundTrip(one);
    CoordinationForce pairs({0, 0, 1}, {1, 2, 2}, true);
    pairs.setDMax(INFINITY);
    roundTrip(pairs);
    CoordinationForce empty;
    roundTrip(empty);
}

void testSwitchingTypes() {
    // Every type, with its default dmax (automatic for Rational, none for the others) and with a finite one.
    for (int type = CoordinationForce::Rational; type <= CoordinationForce::Q; type++) {
        CoordinationForce force({0, 2}, {1, 3}, true);
        force.setSwitchingFunction((CoordinationForce::SwitchingFunction) type);
        force.setCustomExpression("1/(1+x^3)");
        force.setR0(0.35);
        force.setD0(0.1);
        if (type != CoordinationForce::Cubic)
            roundTrip(force);
        force.setDMax(0.8);
        roundTrip(force);
        force.setStretch(false);
        roundTrip(force);
    }
    CoordinationForce rational({0, 1, 2});
    rational.setN(5);
    rational.setM(9);
    rational.setD0(0.02);
    roundTrip(rational);
}

void testPairParameters() {
    // Weights and r0s, each alone and together, with Q and its parameters.
    CoordinationForce force;
    force.setPairs({0, 3, 5}, {1, 2, 4}, {0.25, 1.5, 0.0}, {0.31, 0.47, 0.3333333333333333});
    force.setSwitchingFunction(CoordinationForce::Q);
    force.setBeta(42.5);
    force.setLambda(1.5);
    roundTrip(force);
    force.setPairParameters({}, {0.4, 0.5, 0.6});
    roundTrip(force);
    force.setPairParameters({1.0, 2.0, 3.0}, {});
    force.setSwitchingFunction(CoordinationForce::Rational);
    force.setDMax(1.2);
    roundTrip(force);
}

void testVersion1() {
    // A force as version 1 of the proxy wrote it: no beta, lambda or per-pair values; it reads
    // with the defaults (beta 50/nm, lambda 1.8, weight 1 and the force's r0 for every pair).
    string xml = "<Force a=\"6\" b=\"6\" customExpression=\"1/(1+x^6)\" d0=\"0\" defaultDMax=\"1\" dmax=\"0\" "
            "energyExpression=\"cv\" finiteDMax=\"0\" forceGroup=\"2\" m=\"0\" mode=\"2\" n=\"6\" name=\"contacts\" "
            "periodic=\"0\" r0=\".35\" stretch=\"1\" switchingFunction=\"0\" type=\"CoordinationForce\" version=\"1\">"
            "<GroupA><Particle index=\"0\"/><Particle index=\"2\"/></GroupA>"
            "<GroupB><Particle index=\"1\"/><Particle index=\"3\"/></GroupB>"
            "<GlobalParameters/><Functions/></Force>";
    stringstream buffer(xml);
    unique_ptr<CoordinationForce> force(XmlSerializer::deserialize<CoordinationForce>(buffer));
    ASSERT_EQUAL(CoordinationForce::PairList, force->getMode());
    ASSERT_EQUAL(2, force->getForceGroup());
    ASSERT_EQUAL(string("contacts"), force->getName());
    ASSERT_EQUAL_CONTAINERS(vector<int>({0, 2}), force->getGroupA());
    ASSERT_EQUAL_CONTAINERS(vector<int>({1, 3}), force->getGroupB());
    ASSERT_EQUAL(0.35, force->getR0());
    ASSERT_EQUAL(50.0, force->getBeta());
    ASSERT_EQUAL(1.8, force->getLambda());
    ASSERT(!force->getUsesPairParameters());
    ASSERT(force->getPairWeights().empty() && force->getPairR0s().empty());
    // It writes itself back as the current version.
    stringstream rewritten;
    XmlSerializer::serialize<CoordinationForce>(force.get(), "Force", rewritten);
    ASSERT(rewritten.str().find("version=\"3\"") != string::npos);
    roundTrip(*force);
}

void testCloneAsForce() {
    // CustomCVForce and Metadynamics copy their forces through XmlSerializer as a plain Force.
    CoordinationForce force({0, 1, 2}, {3, 4});
    force.setForceGroup(5);
    force.setName("cv");
    force.setR0(0.4);
    force.addGlobalParameter("k", 2.0);
    force.setEnergyExpression("k*cv");
    Force* copy = XmlSerializer::clone<Force>(force);
    CoordinationForce* coordination = dynamic_cast<CoordinationForce*>(copy);
    ASSERT(coordination != NULL);
    compare(force, *coordination);
    delete copy;
    // Inside a System.
    System system;
    for (int i = 0; i < 5; i++)
        system.addParticle(1.0);
    system.addForce(new CoordinationForce({0, 1, 2, 3, 4}));
    System* systemCopy = XmlSerializer::clone<System>(system);
    ASSERT_EQUAL(1, systemCopy->getNumForces());
    compare(dynamic_cast<const CoordinationForce&>(system.getForce(0)), dynamic_cast<const CoordinationForce&>(systemCopy->getForce(0)));
    delete systemCopy;
}

void testUnknownVersion() {
    CoordinationForce force({0, 1});
    stringstream buffer;
    XmlSerializer::serialize<CoordinationForce>(&force, "Force", buffer);
    string xml = buffer.str();
    size_t position = xml.find("version=\"3\"");
    ASSERT(position != string::npos);
    xml.replace(position, 11, "version=\"99\"");
    stringstream modified(xml);
    bool thrown = false;
    try {
        delete XmlSerializer::deserialize<CoordinationForce>(modified);
    }
    catch (const OpenMMException& e) {
        thrown = true;
        ASSERT(string(e.what()).find("CoordinationForce") != string::npos);
    }
    ASSERT(thrown);
}

/** The XML of a force with one global parameter and one table, with one piece of it replaced. */
static string editedXml(const string& from, const string& to) {
    CoordinationForce force({0, 1, 2});
    force.addGlobalParameter("k", 2.0);
    force.addTabulatedFunction("bias", new Continuous1DFunction({0.0, 1.0, 2.0}, 0.0, 4.0));
    force.setEnergyExpression("k*bias(cv)");
    stringstream buffer;
    XmlSerializer::serialize<CoordinationForce>(&force, "Force", buffer);
    string xml = buffer.str();
    size_t position = xml.find(from);
    ASSERT(position != string::npos);
    return xml.replace(position, from.size(), to);
}

/** Assert that f throws an OpenMMException naming CoordinationForce and the given text. */
template <class F>
static void expectError(F f, const string& text) {
    try {
        f();
    }
    catch (const OpenMMException& e) {
        string message = e.what();
        if (message.find("CoordinationForce") == string::npos || message.find(text) == string::npos)
            throw OpenMMException("the error \""+message+"\" does not name "+text);
        return;
    }
    throw OpenMMException("no error naming "+text);
}

void testValuesThatAreNotFinite() {
    // Refused while reading: an energy expression that does not parse, a default that is not finite.
    stringstream unparsable(editedXml("energyExpression=\"k*bias(cv)\"", "energyExpression=\"cv*\""));
    expectError([&] () { delete XmlSerializer::deserialize<CoordinationForce>(unparsable); }, "energy expression does not parse: \"cv*\"");
    stringstream notANumber(editedXml("default=\"2\"", "default=\"nan\""));
    expectError([&] () { delete XmlSerializer::deserialize<CoordinationForce>(notANumber); }, "\"k\" needs a finite default value, got nan");
    // OpenMM reads a table with an infinite max or value; the force refuses it when a Context is created.
    System system;
    for (int i = 0; i < 3; i++)
        system.addParticle(1.0);
    for (auto edit : {make_pair(string("max=\"4\""), string("max=\"inf\"")),
                      make_pair(string("<Value v=\"1\"/>"), string("<Value v=\"-inf\"/>"))}) {
        stringstream xml(editedXml(edit.first, edit.second));
        unique_ptr<CoordinationForce> force(XmlSerializer::deserialize<CoordinationForce>(xml));
        expectError([&] () { CoordinationForceImpl::validate(*force, system); }, "\"bias\"");
    }
}

int main() {
    try {
        testEveryField();
        testModesAndDMax();
        testParticleFunction();
        testSwitchingTypes();
        testCloneAsForce();
        testPairParameters();
        testVersion1();
        testUnknownVersion();
        testValuesThatAreNotFinite();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
