/* Round trip of a CoordinationBiasForce, its CVs and tables, inside a System, through XmlSerializer. */
#include "CoordinationBiasForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/System.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/internal/AssertionUtilities.h"
#include "openmm/serialization/XmlSerializer.h"
#include <iostream>
#include <memory>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static string toXml(const System& system) {
    stringstream buffer;
    XmlSerializer::serialize<System>(&system, "System", buffer);
    return buffer.str();
}

void testSystemRoundTrip() {
    System system;
    for (int i = 0; i < 10; i++)
        system.addParticle(1.0);
    CoordinationBiasForce* bias = new CoordinationBiasForce("0.5*k*(c1-a)^2 + bias(c1, nw) + line(nw)");
    bias->setForceGroup(5);
    bias->setName("two CVs");
    bias->setCVStatisticsStride(250);
    bias->addGlobalParameter("k", 12.5);
    bias->addGlobalParameter("a", 0.75);
    CoordinationForce* c1 = new CoordinationForce({0, 1, 2});
    c1->setSwitchingFunction(CoordinationForce::Smap);
    c1->setR0(0.35);
    c1->setUsesPeriodicBoundaryConditions(true);
    CoordinationForce* nw = new CoordinationForce();
    nw->setPairs({3, 4, 5}, {7, 8, 9}, {1.0, 0.5, 2.0}, {0.3, 0.4, 0.5});
    nw->setSwitchingFunction(CoordinationForce::Q);
    nw->setUsesPeriodicBoundaryConditions(true);
    nw->setName("water around the ion");
    bias->addCollectiveVariable("c1", c1);
    bias->addDistance("d", 6, 2);
    bias->addCollectiveVariable("nw", nw);
    bias->addDistance("dy", 1, 9, 1, false);
    bias->addTabulatedFunction("bias", new Continuous2DFunction(2, 3, {0.0, 1.0, 2.0, 3.0, 4.0, 5.5}, 0.0, 2.0, -1.0, 4.0));
    bias->addTabulatedFunction("line", new Continuous1DFunction({1.0, 2.0, 0.5}, 0.0, 3.0, true));
    system.addForce(bias);
    string xml = toXml(system);
    stringstream input(xml);
    unique_ptr<System> copy(XmlSerializer::deserialize<System>(input));
    ASSERT_EQUAL(1, copy->getNumForces());
    CoordinationBiasForce* found = dynamic_cast<CoordinationBiasForce*>(&copy->getForce(0));
    ASSERT(found != NULL);
    ASSERT_EQUAL(5, found->getForceGroup());
    ASSERT_EQUAL("two CVs", found->getName());
    ASSERT_EQUAL(250, found->getCVStatisticsStride());
    ASSERT_EQUAL(bias->getEnergyExpression(), found->getEnergyExpression());
    ASSERT_EQUAL(2, found->getNumGlobalParameters());
    ASSERT_EQUAL("a", found->getGlobalParameterName(1));
    ASSERT_EQUAL(0.75, found->getGlobalParameterDefaultValue(1));
    ASSERT_EQUAL(4, found->getNumCollectiveVariables());
    ASSERT_EQUAL(2, found->getNumDistances());
    ASSERT_EQUAL("nw", found->getCollectiveVariableName(2));
    ASSERT_EQUAL(CoordinationForce::Q, found->getCollectiveVariable(2).getSwitchingFunction());
    ASSERT_EQUAL("water around the ion", found->getCollectiveVariable(2).getName());
    ASSERT_EQUAL_CONTAINERS(nw->getPairR0s(), found->getCollectiveVariable(2).getPairR0s());
    // The distances, in their places among the CVs, with their components and periodicity.
    int particle1, particle2, component;
    bool usePeriodic;
    ASSERT(!found->isDistance(0) && found->isDistance(1) && !found->isDistance(2) && found->isDistance(3));
    ASSERT_EQUAL("d", found->getCollectiveVariableName(1));
    found->getDistanceParameters(1, particle1, particle2, component, usePeriodic);
    ASSERT(particle1 == 6 && particle2 == 2 && component == -1 && usePeriodic);
    ASSERT_EQUAL("dy", found->getCollectiveVariableName(3));
    found->getDistanceParameters(3, particle1, particle2, component, usePeriodic);
    ASSERT(particle1 == 1 && particle2 == 9 && component == 1 && !usePeriodic);
    ASSERT_EQUAL(0.35, found->getCollectiveVariable(0).getR0());
    ASSERT(found->usesPeriodicBoundaryConditions());
    ASSERT_EQUAL(2, found->getNumTabulatedFunctions());
    ASSERT(dynamic_cast<Continuous2DFunction*>(&found->getTabulatedFunction(0)) != NULL);
    ASSERT(found->getTabulatedFunction(1).getPeriodic());
    // Every field survives: the copy writes the same XML.
    ASSERT_EQUAL(xml, toXml(*copy));
}

void testUnknownVersion() {
    CoordinationBiasForce bias("c1");
    bias.addCollectiveVariable("c1", new CoordinationForce({0, 1}));
    stringstream buffer;
    XmlSerializer::serialize<CoordinationBiasForce>(&bias, "Force", buffer);
    string xml = buffer.str();
    size_t at = xml.find("version=\"3\"");
    ASSERT(at != string::npos);
    xml.replace(at, 11, "version=\"4\"");
    stringstream input(xml);
    try {
        delete XmlSerializer::deserialize<CoordinationBiasForce>(input);
    }
    catch (const OpenMMException& e) {
        ASSERT(string(e.what()).find("CoordinationBiasForce: unsupported serialization version 4") != string::npos);
        return;
    }
    throw OpenMMException("expected an exception for an unknown version");
}

/** A file of version 1 (before the CV statistics) still reads, with none (stride 0). */
void testVersion1() {
    CoordinationBiasForce bias("c1");
    bias.addCollectiveVariable("c1", new CoordinationForce({0, 1}));
    stringstream buffer;
    XmlSerializer::serialize<CoordinationBiasForce>(&bias, "Force", buffer);
    string xml = buffer.str();
    size_t at = xml.find("version=\"3\"");
    ASSERT(at != string::npos);
    xml.replace(at, 11, "version=\"1\"");
    at = xml.find(" cvStatisticsStride=\"0\"");
    ASSERT(at != string::npos);
    xml.erase(at, 23);
    stringstream input(xml);
    unique_ptr<CoordinationBiasForce> copy(XmlSerializer::deserialize<CoordinationBiasForce>(input));
    ASSERT_EQUAL(0, copy->getCVStatisticsStride());
    ASSERT_EQUAL("c1", copy->getCollectiveVariableName(0));
}

/** A file of version 2 (before distance CVs) still reads: its CVs are CoordinationForces. */
void testVersion2() {
    CoordinationBiasForce bias("c1+c2");
    bias.setCVStatisticsStride(10);
    bias.addCollectiveVariable("c1", new CoordinationForce({0, 1}));
    bias.addCollectiveVariable("c2", new CoordinationForce({2, 3}));
    stringstream buffer;
    XmlSerializer::serialize<CoordinationBiasForce>(&bias, "Force", buffer);
    string xml = buffer.str();
    size_t at = xml.find("version=\"3\"");
    ASSERT(at != string::npos);
    xml.replace(at, 11, "version=\"2\"");
    stringstream input(xml);
    unique_ptr<CoordinationBiasForce> copy(XmlSerializer::deserialize<CoordinationBiasForce>(input));
    ASSERT_EQUAL(10, copy->getCVStatisticsStride());
    ASSERT_EQUAL(2, copy->getNumCollectiveVariables());
    ASSERT_EQUAL(0, copy->getNumDistances());
    ASSERT_EQUAL(2, copy->getCollectiveVariable(1).getGroupA()[0]);
}

int main() {
    try {
        testSystemRoundTrip();
        testVersion1();
        testVersion2();
        testUnknownVersion();
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
