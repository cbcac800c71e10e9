# Locates OpenMM (OPENMM_DIR: the folder holding include/OpenMM.h and lib/libOpenMM.so), asking the
# Python package `openmm` when OPENMM_DIR is not given, and stops with a clear message when OpenMM
# is missing or older than OPENMM_MIN_VERSION (or newer than OPENMM_MAX_VERSION). Sets OPENMM_LIBRARY,
# OPENMM_VERSION and OPENMM_VERSION_CODE, and the compile definitions every target needs.

if(NOT OPENMM_DIR)
    find_package(Python3 COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
        execute_process(
            COMMAND ${Python3_EXECUTABLE} -c "import os, openmm.version as v; print(os.path.dirname(v.openmm_library_path))"
            OUTPUT_VARIABLE _openmm_from_python OUTPUT_STRIP_TRAILING_WHITESPACE
            RESULT_VARIABLE _openmm_python_result ERROR_QUIET)
        if(_openmm_python_result EQUAL 0)
            set(OPENMM_DIR "${_openmm_from_python}" CACHE PATH "Where OpenMM is installed" FORCE)
        endif()
    endif()
endif()
if(NOT OPENMM_DIR OR NOT EXISTS "${OPENMM_DIR}/include/OpenMM.h")
    message(FATAL_ERROR "OpenMM not found (OPENMM_DIR='${OPENMM_DIR}'). Install it with "
        "`pip install \"openmm>=${OPENMM_MIN_VERSION}\"` or pass -DOPENMM_DIR=<folder with include/OpenMM.h and lib/>.")
endif()
# A build folder reused with another OpenMM (pip's build-wheel/, another venv) must not keep what it
# found for the previous one.
if(DEFINED _OPENMM_DIR_FOUND AND NOT _OPENMM_DIR_FOUND STREQUAL OPENMM_DIR)
    unset(OPENMM_LIBRARY CACHE)
    unset(OPENMM_CUDA_LIBRARY CACHE)
endif()
set(_OPENMM_DIR_FOUND "${OPENMM_DIR}" CACHE INTERNAL "The OpenMM the cached results belong to")
find_library(OPENMM_LIBRARY OpenMM PATHS "${OPENMM_DIR}/lib" NO_DEFAULT_PATH)
if(NOT OPENMM_LIBRARY)
    message(FATAL_ERROR "OpenMM headers found in ${OPENMM_DIR}/include but no libOpenMM in ${OPENMM_DIR}/lib.")
endif()
# The C++ ABI of libstdc++ strings: OpenMM's PyPI wheels up to 8.3 were built with the old one
# (_GLIBCXX_USE_CXX11_ABI=0, manylinux2014 toolchains), 8.4 and later and conda-forge with the new
# one. Whatever passes std::string across OpenMM's API must match, so try the default first, then
# the old ABI, and compile everything with the one that links.
foreach(_openmm_abi DEFAULT 0)
    if(_openmm_abi STREQUAL "DEFAULT")
        set(_openmm_abi_flags "")
    else()
        set(_openmm_abi_flags "-D_GLIBCXX_USE_CXX11_ABI=${_openmm_abi}")
    endif()
    try_run(_openmm_run_result _openmm_compile_result ${CMAKE_BINARY_DIR}/openmm_version
        ${CMAKE_CURRENT_LIST_DIR}/openmm_version.cpp
        CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${OPENMM_DIR}/include"
        COMPILE_DEFINITIONS ${_openmm_abi_flags}
        LINK_LIBRARIES ${OPENMM_LIBRARY}
        LINK_OPTIONS "-Wl,-rpath,${OPENMM_DIR}/lib"
        COMPILE_OUTPUT_VARIABLE _openmm_compile_output
        RUN_OUTPUT_VARIABLE OPENMM_VERSION)
    if(_openmm_compile_result AND _openmm_run_result EQUAL 0)
        break()
    endif()
    if(NOT _openmm_first_compile_output)
        set(_openmm_first_compile_output "${_openmm_compile_output}")
    endif()
endforeach()
if(NOT _openmm_compile_result OR NOT _openmm_run_result EQUAL 0)
    message(FATAL_ERROR "Could not build and run a program against OpenMM in ${OPENMM_DIR}:\n${_openmm_first_compile_output}")
endif()
if(_openmm_abi_flags)
    message(STATUS "OpenMM in ${OPENMM_DIR} uses the old C++ ABI: compiling with ${_openmm_abi_flags}")
    add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
endif()
set(OPENMM_CXX11_ABI_FLAGS "${_openmm_abi_flags}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+(\\.[0-9]+)?" OPENMM_VERSION "${OPENMM_VERSION}")
if(OPENMM_VERSION VERSION_LESS OPENMM_MIN_VERSION)
    message(FATAL_ERROR "OpenMM ${OPENMM_VERSION} in ${OPENMM_DIR} is too old: this plugin needs ${OPENMM_MIN_VERSION} or newer "
        "(pip install \"openmm>=${OPENMM_MIN_VERSION}\", or pass -DOPENMM_DIR=<a newer OpenMM>).")
endif()
if(DEFINED OPENMM_MAX_VERSION AND NOT OPENMM_VERSION VERSION_LESS OPENMM_MAX_VERSION)
    message(WARNING "OpenMM ${OPENMM_VERSION} is newer than the versions this plugin was tested with "
        "(${OPENMM_MIN_VERSION} up to, not including, ${OPENMM_MAX_VERSION}): it uses OpenMM's internal "
        "CUDA API, which may have changed.")
endif()
# OPENMM_VERSION_CODE (8.2.0 -> 80200) is passed to every source as COORDINATION_OPENMM_VERSION,
# for the few places where OpenMM's internal API differs between the supported versions.
string(REPLACE "." ";" _openmm_version_parts "${OPENMM_VERSION}.0.0")
list(GET _openmm_version_parts 0 OPENMM_VERSION_MAJOR)
list(GET _openmm_version_parts 1 OPENMM_VERSION_MINOR)
list(GET _openmm_version_parts 2 OPENMM_VERSION_PATCH)
math(EXPR OPENMM_VERSION_CODE "${OPENMM_VERSION_MAJOR} * 10000 + ${OPENMM_VERSION_MINOR} * 100 + ${OPENMM_VERSION_PATCH}")
add_compile_definitions(COORDINATION_OPENMM_VERSION=${OPENMM_VERSION_CODE})
message(STATUS "OpenMM ${OPENMM_VERSION} in ${OPENMM_DIR}")
