# Locates OpenMM (OPENMM_DIR: the folder holding include/OpenMM.h and lib/libOpenMM.so), asking the
# Python package `openmm` when OPENMM_DIR is not given, and stops with a clear message when OpenMM
# is missing or older than OPENMM_MIN_VERSION. Sets OPENMM_LIBRARY and OPENMM_VERSION.

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
find_library(OPENMM_LIBRARY OpenMM PATHS "${OPENMM_DIR}/lib" NO_DEFAULT_PATH)
if(NOT OPENMM_LIBRARY)
    message(FATAL_ERROR "OpenMM headers found in ${OPENMM_DIR}/include but no libOpenMM in ${OPENMM_DIR}/lib.")
endif()
try_run(_openmm_run_result _openmm_compile_result ${CMAKE_BINARY_DIR}/openmm_version
    ${CMAKE_CURRENT_LIST_DIR}/openmm_version.cpp
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${OPENMM_DIR}/include"
    LINK_LIBRARIES ${OPENMM_LIBRARY}
    LINK_OPTIONS "-Wl,-rpath,${OPENMM_DIR}/lib"
    COMPILE_OUTPUT_VARIABLE _openmm_compile_output
    RUN_OUTPUT_VARIABLE OPENMM_VERSION)
if(NOT _openmm_compile_result OR NOT _openmm_run_result EQUAL 0)
    message(FATAL_ERROR "Could not build and run a program against OpenMM in ${OPENMM_DIR}:\n${_openmm_compile_output}")
endif()
string(REGEX MATCH "^[0-9]+\\.[0-9]+(\\.[0-9]+)?" OPENMM_VERSION "${OPENMM_VERSION}")
if(OPENMM_VERSION VERSION_LESS OPENMM_MIN_VERSION)
    message(FATAL_ERROR "OpenMM ${OPENMM_VERSION} in ${OPENMM_DIR} is too old: this plugin needs ${OPENMM_MIN_VERSION} or newer.")
endif()
message(STATUS "OpenMM ${OPENMM_VERSION} in ${OPENMM_DIR}")
