#include "CoordinationBiasForceProxy.h"
#include "CoordinationBiasForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/serialization/SerializationNode.h"
#include <memory>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

// Each CV is a CollectiveVariable node holding its name and, in a child node of its own, the
// CoordinationForce as its proxy writes it (so that the force's own name and the CV's do not clash).
// Version 2 adds the stride of the CVs' running statistics (cvStatisticsStride); version 1 files
// are read with none (0). Version 3 adds distance CVs (addDistance()): a CollectiveVariable node
// with a Distance child node (particle1, particle2, component, usePeriodic) instead of a Force;
// files of versions 1 and 2 have none.
static const int version = 3;

CoordinationBiasForceProxy::CoordinationBiasForceProxy() : SerializationProxy("CoordinationBiasForce") {
}

void CoordinationBiasForceProxy::serialize(const void* object, SerializationNode& node) const {
    node.setIntProperty("version", version);
    const CoordinationBiasForce& force = *reinterpret_cast<const CoordinationBiasForce*>(object);
    node.setIntProperty("forceGroup", force.getForceGroup());
    node.setStringProperty("name", force.getName());
    node.setStringProperty("energy", force.getEnergyExpression());
    node.setIntProperty("cvStatisticsStride", force.getCVStatisticsStride());
    SerializationNode& parameters = node.createChildNode("GlobalParameters");
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        parameters.createChildNode("Parameter").setStringProperty("name", force.getGlobalParameterName(i))
                .setDoubleProperty("default", force.getGlobalParameterDefaultValue(i));
    SerializationNode& variables = node.createChildNode("CollectiveVariables");
    for (int i = 0; i < force.getNumCollectiveVariables(); i++) {
        SerializationNode& variable = variables.createChildNode("CollectiveVariable").setStringProperty("name", force.getCollectiveVariableName(i));
        if (force.isDistance(i)) {
            int particle1, particle2, component;
            bool usePeriodic;
            force.getDistanceParameters(i, particle1, particle2, component, usePeriodic);
            variable.createChildNode("Distance").setIntProperty("particle1", particle1).setIntProperty("particle2", particle2)
                    .setIntProperty("component", component).setBoolProperty("usePeriodic", usePeriodic);
        }
        else
            variable.createChildNode("Force", &force.getCollectiveVariable(i));
    }
    SerializationNode& functions = node.createChildNode("Functions");
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++)
        functions.createChildNode("Function", &force.getTabulatedFunction(i)).setStringProperty("name", force.getTabulatedFunctionName(i));
}

void* CoordinationBiasForceProxy::deserialize(const SerializationNode& node) const {
    int fileVersion = node.getIntProperty("version");
    if (fileVersion < 1 || fileVersion > version)
        throw OpenMMException("CoordinationBiasForce: unsupported serialization version "+to_string(fileVersion));
    unique_ptr<CoordinationBiasForce> force(new CoordinationBiasForce(node.getStringProperty("energy")));
    force->setForceGroup(node.getIntProperty("forceGroup", 0));
    force->setName(node.getStringProperty("name", force->getName()));
    if (fileVersion >= 2)
        force->setCVStatisticsStride(node.getIntProperty("cvStatisticsStride", 0));
    for (auto& parameter : node.getChildNode("GlobalParameters").getChildren())
        force->addGlobalParameter(parameter.getStringProperty("name"), parameter.getDoubleProperty("default"));
    for (auto& variable : node.getChildNode("CollectiveVariables").getChildren()) {
        if (fileVersion >= 3 && !variable.getChildren().empty() && variable.getChildren()[0].getName() == "Distance") {
            const SerializationNode& distance = variable.getChildNode("Distance");
            force->addDistance(variable.getStringProperty("name"), distance.getIntProperty("particle1"), distance.getIntProperty("particle2"),
                    distance.getIntProperty("component"), distance.getBoolProperty("usePeriodic"));
            continue;
        }
        unique_ptr<CoordinationForce> cv(variable.getChildNode("Force").decodeObject<CoordinationForce>());
        force->addCollectiveVariable(variable.getStringProperty("name"), cv.get());
        cv.release();
    }
    for (auto& function : node.getChildNode("Functions").getChildren()) {
        unique_ptr<TabulatedFunction> table(function.decodeObject<TabulatedFunction>());
        force->addTabulatedFunction(function.getStringProperty("name"), table.get());
        table.release();
    }
    return force.release();
}
