#ifndef OPENMM_WINDOWS_EXPORT_COORDINATION_H_
#define OPENMM_WINDOWS_EXPORT_COORDINATION_H_

/*
 * Shared libraries export their public symbols with this macro; on Windows it becomes
 * __declspec(dllexport) while the API library is built and __declspec(dllimport) otherwise.
 */

#if defined(_MSC_VER) || defined(__MINGW32__)
    #if defined(OPENMM_COORDINATION_BUILDING_SHARED_LIBRARY)
        #define OPENMM_EXPORT_COORDINATION __declspec(dllexport)
    #else
        #define OPENMM_EXPORT_COORDINATION __declspec(dllimport)
    #endif
#else
    #define OPENMM_EXPORT_COORDINATION __attribute__((visibility("default")))
#endif

#endif // OPENMM_WINDOWS_EXPORT_COORDINATION_H_
