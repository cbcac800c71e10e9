# Installs the CMake package of openmm-coordination (OpenMMCoordinationConfig.cmake and its version
# file, from OpenMMCoordinationConfig.cmake.in) into <lib>/cmake/OpenMMCoordination, so that C++
# programs find it with find_package(OpenMMCoordination CONFIG). Its paths are relative to where it
# is installed (site-packages/OpenMM.libs for a pip install, the install prefix otherwise), except
# OpenMM's where OpenMM lives elsewhere. Needs COORDINATION_{LIB,INCLUDE,PLUGIN}_DIR and
# COORDINATION_INSTALLED_OPENMM_DIR (CMakeLists.txt), and OPENMM_LIBRARY, OPENMM_VERSION and
# OPENMM_CXX11_ABI_FLAGS (FindOpenMMInstall.cmake).

include(CMakePackageConfigHelpers)
set(COORDINATION_CMAKE_DIR ${COORDINATION_LIB_DIR}/cmake/OpenMMCoordination)
set(COORDINATION_LIBRARY_FILE ${CMAKE_SHARED_LIBRARY_PREFIX}OpenMMCoordination${CMAKE_SHARED_LIBRARY_SUFFIX})
get_filename_component(OPENMM_LIBRARY_FILE "${OPENMM_LIBRARY}" NAME)
if(IS_ABSOLUTE "${COORDINATION_INSTALLED_OPENMM_DIR}")
    set(COORDINATION_CONFIG_OPENMM_DIR "${COORDINATION_INSTALLED_OPENMM_DIR}")
else()
    set(COORDINATION_CONFIG_OPENMM_DIR "\${PACKAGE_PREFIX_DIR}/${COORDINATION_INSTALLED_OPENMM_DIR}")
endif()
string(REPLACE "-D" "" OPENMM_ABI_DEFINITION "${OPENMM_CXX11_ABI_FLAGS}")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/OpenMMCoordinationConfig.cmake.in
    ${CMAKE_BINARY_DIR}/OpenMMCoordinationConfig.cmake
    INSTALL_DESTINATION ${COORDINATION_CMAKE_DIR}
    PATH_VARS COORDINATION_INCLUDE_DIR COORDINATION_LIB_DIR COORDINATION_PLUGIN_DIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/OpenMMCoordinationConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/OpenMMCoordinationConfig.cmake ${CMAKE_BINARY_DIR}/OpenMMCoordinationConfigVersion.cmake
    DESTINATION ${COORDINATION_CMAKE_DIR})
