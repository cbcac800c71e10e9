#ifndef OPENMM_COORDINATION_WARNINGS_H_
#define OPENMM_COORDINATION_WARNINGS_H_

#include "internal/windowsExportCoordination.h"
#include <string>

namespace CoordinationPlugin {

/**
 * The warnings of the plugin: things that are allowed but probably not what the user meant (OpenMM
 * has no warning mechanism of its own). A warning goes to the handler if one is set, else to
 * stderr as one line "Warning: <message>". The Python module sets a handler that issues a Python
 * warning (openmmcoordination.PeriodicBoundaryWarning), so Python users can filter or catch it.
 */
class OPENMM_EXPORT_COORDINATION CoordinationWarnings {
public:
    /** A function that receives each warning's message. It may throw to turn the warning into an error. */
    typedef void (*Handler)(const std::string& message);
    /**
     * Set the function that receives the warnings; NULL restores the default (stderr).
     *
     * @return the previous handler (NULL for the default)
     */
    static Handler setHandler(Handler handler);
    /** Report a warning to the handler, or to stderr if none is set. */
    static void warn(const std::string& message);
    /**
     * Report a warning about an object once: the first call for a key reports it and returns true,
     * later calls for the same key do nothing and return false, until forget(key).
     *
     * @param key      the object the warning is about (a CoordinationForce)
     * @param message  the warning
     */
    static bool warnOnce(const void* key, const std::string& message);
    /** Forget the warnings about an object (its destructor calls this: its address may be reused). */
    static void forget(const void* key);
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_WARNINGS_H_*/
