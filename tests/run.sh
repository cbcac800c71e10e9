#!/usr/bin/env bash
# The README's test command: the C++ tests (ctest) and the Python tests (pytest), against the
# installed package (pip install ".[analysis,test]"). The C++ tests get their own CMake build
# (build-tests/) against the same OpenMM. GPU tests run only where an NVIDIA GPU answers;
# elsewhere they are left out (ctest -LE gpu), never counted as passed. The tests that leak a device
# context (ctest label and pytest marker leaks_context) run here with the others, in one go: no CUDA
# MPS here (benchmarks/gpu_suite.sh runs them last, outside MPS). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
OMM=$(python -c "import os, openmm.version as v; print(os.path.dirname(v.openmm_library_path))")
JOBS=${JOBS:-$(nproc)}
echo "== C++ tests (OpenMM in $OMM)"
mkdir -p build-tests
if ! { cmake -S . -B build-tests -DOPENMM_DIR="$OMM" -DCOORDINATION_BUILD_PYTHON_WRAPPERS=OFF -DCMAKE_BUILD_TYPE=Release \
        && cmake --build build-tests -j "$JOBS"; } > build-tests/build.log 2>&1; then
    tail -50 build-tests/build.log
    exit 1
fi
if command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1; then
    (cd build-tests && ctest --output-on-failure)
else
    echo "(no GPU: the CUDA tests are left out; the NVRTC compile test still runs where a CUDA toolkit is)"
    (cd build-tests && ctest --output-on-failure -LE gpu)
fi
echo "== Python tests"
python -c "import openmmcoordination as oc; print('openmmcoordination', oc.__version__, 'from', oc.__file__)"
python -m pytest python/tests -q -p no:cacheprovider
