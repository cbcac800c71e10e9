/* Round trip of every CoordinationForce field through XmlSerializer. */
#include "CoordinationForce.h"
#include "openmm/Platform.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/AssertionUtilities.h"
#include "openmm/serialization/XmlSerializer.h"
#include <cmath>
#include <iostream>
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
    ASSERT_EQUAL(a.getUsesDefaultDMax(), b.getUsesDefaultDMax());
    ASSERT(a.getDMax() == b.getDMax());
    ASSERT_EQUAL(a.getStretch(), b.getStretch());
    ASSERT_EQUAL(a.usesPeriodicBoundaryConditions(), b.usesPeriodicBoundaryConditions());
    ASSERT_EQUAL(a.getEnergyExpression(), b.getEnergyExpression());
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

void testModesAndDMax() {
    CoordinationForce one({0, 1, 2, 3});
    roundTrip(one);
    CoordinationForce pairs({0, 0, 1}, {1, 2, 2}, true);
    pairs.setDMax(INFINITY);
    roundTrip(pairs);
    CoordinationForce empty;
    roundTrip(empty);
}

int main() {
    try {
        testEveryField();
        testModesAndDMax();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
