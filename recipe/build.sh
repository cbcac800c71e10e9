#!/bin/bash
# conda-build script: a plain CMake build and install into $PREFIX, where conda-forge's OpenMM is
# (include/OpenMM.h, lib/libOpenMM.so, lib/plugins). Options are those of CMakeLists.txt.
set -euxo pipefail

CMAKE_FLAGS="${CMAKE_ARGS} -DCMAKE_INSTALL_PREFIX=${PREFIX} -DCMAKE_BUILD_TYPE=Release"
CMAKE_FLAGS+=" -DOPENMM_DIR=${PREFIX}"
CMAKE_FLAGS+=" -DCOORDINATION_BUILD_TESTS=OFF"
CMAKE_FLAGS+=" -DCOORDINATION_BUILD_PYTHON_WRAPPERS=ON"
CMAKE_FLAGS+=" -DPython3_EXECUTABLE=${PYTHON}"
CMAKE_FLAGS+=" -DCOORDINATION_PYTHON_INSTALL_DIR=${SP_DIR}/openmmcoordination"
CMAKE_FLAGS+=" -DSWIG_EXECUTABLE=$(which swig)"
if [[ "${cuda_compiler_version:-None}" != "None" ]]; then
    CMAKE_FLAGS+=" -DCOORDINATION_BUILD_CUDA_LIB=ON"
else
    CMAKE_FLAGS+=" -DCOORDINATION_BUILD_CUDA_LIB=OFF"
fi

cmake -S "${SRC_DIR}" -B build ${CMAKE_FLAGS}
cmake --build build -j"${CPU_COUNT}"
cmake --install build
