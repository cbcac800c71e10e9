#include "CoordinationForceProxy.h"
#include "CoordinationForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/serialization/SerializationNode.h"
#include <cmath>
#include <limits>
#include <memory>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

// Version 2 added the Q switching function (beta, lambda) and the per-pair weights and r0s;
// version 3 the particle function of per-atom coordination numbers and its parameters. Earlier
// files are still read (with the defaults).
static const int version = 3;

CoordinationForceProxy::CoordinationForceProxy() : SerializationProxy("CoordinationForce") {
}

static void writeGroup(SerializationNode& node, const char* name, const vector<int>& group) {
    SerializationNode& groupNode = node.createChildNode(name);
    for (int i : group)
        groupNode.createChildNode("Particle").setIntProperty("index", i);
}

static void writeValues(SerializationNode& node, const char* name, const char* property, const vector<double>& values) {
    SerializationNode& valuesNode = node.createChildNode(name);
    for (double v : values)
        valuesNode.createChildNode("Pair").setDoubleProperty(property, v);
}

static vector<double> readValues(const SerializationNode& node, const char* name, const char* property) {
    vector<double> values;
    for (auto& value : node.getChildNode(name).getChildren())
        values.push_back(value.getDoubleProperty(property));
    return values;
}

static vector<int> readGroup(const SerializationNode& node, const char* name) {
    vector<int> group;
    for (auto& particle : node.getChildNode(name).getChildren())
        group.push_back(particle.getIntProperty("index"));
    return group;
}

void CoordinationForceProxy::serialize(const void* object, SerializationNode& node) const {
    node.setIntProperty("version", version);
    const CoordinationForce& force = *reinterpret_cast<const CoordinationForce*>(object);
    node.setIntProperty("forceGroup", force.getForceGroup());
    node.setStringProperty("name", force.getName());
    node.setIntProperty("mode", force.getMode());
    writeGroup(node, "GroupA", force.getGroupA());
    writeGroup(node, "GroupB", force.getGroupB());
    node.setIntProperty("switchingFunction", force.getSwitchingFunction());
    node.setDoubleProperty("r0", force.getR0());
    node.setDoubleProperty("d0", force.getD0());
    node.setIntProperty("n", force.getN());
    node.setIntProperty("m", force.getM());
    node.setDoubleProperty("a", force.getA());
    node.setDoubleProperty("b", force.getB());
    node.setStringProperty("customExpression", force.getCustomExpression());
    node.setDoubleProperty("beta", force.getBeta());
    node.setDoubleProperty("lambda", force.getLambda());
    writeValues(node, "PairWeights", "w", force.getPairWeights());
    writeValues(node, "PairR0s", "r0", force.getPairR0s());
    node.setBoolProperty("defaultDMax", force.getUsesDefaultDMax());
    node.setBoolProperty("finiteDMax", isfinite(force.getDMax()));
    node.setDoubleProperty("dmax", isfinite(force.getDMax()) ? force.getDMax() : 0.0);
    node.setBoolProperty("stretch", force.getStretch());
    node.setBoolProperty("periodic", force.usesPeriodicBoundaryConditions());
    node.setBoolProperty("periodicSet", force.getPeriodicitySet());
    node.setStringProperty("energyExpression", force.getEnergyExpression());
    node.setIntProperty("particleFunction", force.getParticleFunction());
    node.setDoubleProperty("thresholdR0", force.getThresholdR0());
    node.setDoubleProperty("thresholdD0", force.getThresholdD0());
    node.setIntProperty("thresholdN", force.getThresholdN());
    node.setIntProperty("thresholdM", force.getThresholdM());
    node.setBoolProperty("thresholdFiniteDMax", isfinite(force.getThresholdDMax()));
    node.setDoubleProperty("thresholdDMax", isfinite(force.getThresholdDMax()) ? force.getThresholdDMax() : 0.0);
    node.setDoubleProperty("betweenLower", force.getBetweenLower());
    node.setDoubleProperty("betweenUpper", force.getBetweenUpper());
    node.setDoubleProperty("betweenSmear", force.getBetweenSmear());
    node.setDoubleProperty("functionBeta", force.getFunctionBeta());
    node.setIntProperty("momentPower", force.getMomentPower());
    node.setDoubleProperty("distancePower", force.getDistancePower());
    SerializationNode& parameters = node.createChildNode("GlobalParameters");
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        parameters.createChildNode("Parameter").setStringProperty("name", force.getGlobalParameterName(i))
                .setDoubleProperty("default", force.getGlobalParameterDefaultValue(i));
    SerializationNode& functions = node.createChildNode("Functions");
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        functions.createChildNode("Function", &force.getTabulatedFunction(i)).setStringProperty("name", force.getTabulatedFunctionName(i));
}

void* CoordinationForceProxy::deserialize(const SerializationNode& node) const {
    int fileVersion = node.getIntProperty("version");
    if (fileVersion < 1 || fileVersion > version)
        throw OpenMMException("CoordinationForce: unsupported serialization version "+to_string(fileVersion));
    unique_ptr<CoordinationForce> force(new CoordinationForce());
    int modeValue = node.getIntProperty("mode");
    if (modeValue < CoordinationForce::OneGroup || modeValue > CoordinationForce::PairList)
        throw OpenMMException("CoordinationForce: mode is not a known mode: "+to_string(modeValue));
    CoordinationForce::Mode mode = (CoordinationForce::Mode) modeValue;
    vector<int> groupA = readGroup(node, "GroupA"), groupB = readGroup(node, "GroupB");
    if (mode == CoordinationForce::OneGroup && !groupA.empty())
        force->setGroup(groupA);
    else if (mode != CoordinationForce::OneGroup)
        force->setGroups(groupA, groupB, mode == CoordinationForce::PairList);
    force->setForceGroup(node.getIntProperty("forceGroup", 0));
    force->setName(node.getStringProperty("name", force->getName()));
    force->setSwitchingFunction((CoordinationForce::SwitchingFunction) node.getIntProperty("switchingFunction"));
    force->setR0(node.getDoubleProperty("r0"));
    force->setD0(node.getDoubleProperty("d0"));
    force->setM(0);
    force->setN(node.getIntProperty("n"));
    force->setM(node.getIntProperty("m"));
    force->setA(node.getDoubleProperty("a"));
    force->setB(node.getDoubleProperty("b"));
    force->setCustomExpression(node.getStringProperty("customExpression"));
    if (fileVersion >= 2) {
        force->setBeta(node.getDoubleProperty("beta"));
        force->setLambda(node.getDoubleProperty("lambda"));
        force->setPairParameters(readValues(node, "PairWeights", "w"), readValues(node, "PairR0s", "r0"));
    }
    if (!node.getBoolProperty("defaultDMax"))
        force->setDMax(node.getBoolProperty("finiteDMax") ? node.getDoubleProperty("dmax") : numeric_limits<double>::infinity());
    force->setStretch(node.getBoolProperty("stretch"));
    // A force that never had setUsesPeriodicBoundaryConditions() called (or was written before
    // periodicSet was recorded, and is not periodic) keeps its warning in a periodic System.
    if (node.getBoolProperty("periodicSet", false) || node.getBoolProperty("periodic"))
        force->setUsesPeriodicBoundaryConditions(node.getBoolProperty("periodic"));
    force->setEnergyExpression(node.getStringProperty("energyExpression"));
    if (fileVersion >= 3) {
        force->setParticleFunction((CoordinationForce::ParticleFunction) node.getIntProperty("particleFunction"));
        force->setThreshold(node.getDoubleProperty("thresholdR0"), node.getDoubleProperty("thresholdD0"),
                node.getIntProperty("thresholdN"), node.getIntProperty("thresholdM"), node.getBoolProperty("thresholdFiniteDMax")
                ? node.getDoubleProperty("thresholdDMax") : numeric_limits<double>::infinity());
        force->setBetweenBounds(node.getDoubleProperty("betweenLower"), node.getDoubleProperty("betweenUpper"),
                node.getDoubleProperty("betweenSmear"));
        force->setFunctionBeta(node.getDoubleProperty("functionBeta"));
        force->setMomentPower(node.getIntProperty("momentPower"));
        force->setDistancePower(node.getDoubleProperty("distancePower", 0.0));
    }
    for (auto& parameter : node.getChildNode("GlobalParameters").getChildren())
        force->addGlobalParameter(parameter.getStringProperty("name"), parameter.getDoubleProperty("default"));
    for (auto& function : node.getChildNode("Functions").getChildren())
        force->addTabulatedFunction(function.getStringProperty("name"), function.decodeObject<TabulatedFunction>());
    return force.release();
}
