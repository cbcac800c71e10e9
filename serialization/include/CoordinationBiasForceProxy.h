#ifndef OPENMM_COORDINATION_BIAS_FORCE_PROXY_H_
#define OPENMM_COORDINATION_BIAS_FORCE_PROXY_H_

#include "internal/windowsExportCoordination.h"
#include "openmm/serialization/SerializationProxy.h"

namespace CoordinationPlugin {

/**
 * Serializes and deserializes a CoordinationBiasForce with its force group, name, energy
 * expression, global parameters, tables and CVs (each CoordinationForce through its own proxy).
 */
class OPENMM_EXPORT_COORDINATION CoordinationBiasForceProxy : public OpenMM::SerializationProxy {
public:
    CoordinationBiasForceProxy();
    /** Write a CoordinationBiasForce into a node. */
    void serialize(const void* object, OpenMM::SerializationNode& node) const;
    /** Create a CoordinationBiasForce from a node. */
    void* deserialize(const OpenMM::SerializationNode& node) const;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_BIAS_FORCE_PROXY_H_*/
