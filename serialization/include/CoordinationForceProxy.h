#ifndef OPENMM_COORDINATION_FORCE_PROXY_H_
#define OPENMM_COORDINATION_FORCE_PROXY_H_

#include "internal/windowsExportCoordination.h"
#include "openmm/serialization/SerializationProxy.h"

namespace CoordinationPlugin {

/**
 * Serializes and deserializes a CoordinationForce with every field, its force group and name,
 * so that XmlSerializer, CustomCVForce and Metadynamics can clone it.
 */
class OPENMM_EXPORT_COORDINATION CoordinationForceProxy : public OpenMM::SerializationProxy {
public:
    CoordinationForceProxy();
    /** Write a CoordinationForce into a node. */
    void serialize(const void* object, OpenMM::SerializationNode& node) const;
    /** Create a CoordinationForce from a node. */
    void* deserialize(const OpenMM::SerializationNode& node) const;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_FORCE_PROXY_H_*/
