#include "CoordinationBiasForce.h"
#include "CoordinationBiasForceProxy.h"
#include "CoordinationForce.h"
#include "CoordinationForceProxy.h"
#include "openmm/serialization/SerializationProxy.h"

using namespace CoordinationPlugin;
using namespace OpenMM;

/** Register the serialization proxies of the plugin. Runs when the library is loaded. */
extern "C" OPENMM_EXPORT_COORDINATION void registerCoordinationSerializationProxies() {
    SerializationProxy::registerProxy(typeid(CoordinationForce), new CoordinationForceProxy());
    SerializationProxy::registerProxy(typeid(CoordinationBiasForce), new CoordinationBiasForceProxy());
}

namespace {
struct ProxyRegistrar {
    ProxyRegistrar() {
        registerCoordinationSerializationProxies();
    }
} registrar;
}
