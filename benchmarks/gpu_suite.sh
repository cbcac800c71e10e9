#!/usr/bin/env bash
# The whole GPU suite in one command, for a machine with an NVIDIA GPU, the CUDA toolkit, cmake
# and Python, but no network: installs the OpenMM wheels carried in .whl/ (see
# ../shared/device/README.md), builds the plugin, then runs the stages named on the command line
# (default: ctest pytest):
#   ctest     the C++ tests: CUDA in single, mixed and double precision, and the NVRTC compile test
#   pytest    the Python tests on CUDA (single, mixed, double; PYTEST_FILES selects test files);
#             ctest and pytest run side by side, ctest's seven tests (CTEST_JOBS) on seven cores and
#             pytest's workers (PYTEST_WORKERS, default: the other cores) on the rest
#   sanitize  compute-sanitizer memcheck and racecheck on the CUDA tests
#   coldstart benchmarks/cold_start.py: what the force adds to a first Context, per precision
#   bench     benchmarks/benchmark.py (BENCH_ARGS adds options, e.g. "--sections md")
# OpenMM's compiled-kernel cache (OPENMM_CACHE_DIR) is unpacked at the start from the parts
# .kernel-cache/kernel-cache.part-* where they exist, and packed at the end into $OUT/kernel-cache.part-*
# (15 MB each): copy those into .kernel-cache/ and carry that folder to the next call, and the
# tests compile nothing they compiled before. Each test stage stops after STAGE_TIMEOUT seconds
# (default 480; pytest is interrupted so that it still reports) so that the summary and the
# cache still come back. Logs and JSON go to $OUT (default ./gpu-out), packed into logs.tgz.
# Ends with a summary of pass counts and times.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
stages=${*:-ctest pytest}
STAGE_TIMEOUT=${STAGE_TIMEOUT:-480}
export OPENMM_CACHE_DIR=/tmp/openmm-kernel-cache
mkdir -p "$OPENMM_CACHE_DIR"
if ls .kernel-cache/kernel-cache.part-* > /dev/null 2>&1; then
    cat .kernel-cache/kernel-cache.part-* | tar xzf - -C "$OPENMM_CACHE_DIR"
fi
SECONDS=0
summary="$OUT/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

SITE=/tmp/site
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE .whl/*.whl || exit 1
    export PYTHONPATH=$SITE PATH=$SITE/bin:$PATH
fi
OMM=$(python3 -c "import openmm.version as v, os; print(os.path.dirname(v.openmm_library_path))") || exit 1
export LD_LIBRARY_PATH=$OMM/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import openmm as mm; print('OpenMM', mm.__version__, [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())], mm.Platform.getPluginLoadFailures())"

# Build with the system compiler where there is one (COORDINATION_CXX overrides): a toolchain
# that links its own libstdc++ into shared libraries (seen on the GPU machine: /opt/gcc, set in
# CXX) crashes in iostreams once Python has loaded the system's libstdc++.
if [ -n "${COORDINATION_CXX:-}" ]; then
    export CXX=$COORDINATION_CXX
elif [ -x /usr/bin/g++ ]; then
    export CXX=/usr/bin/g++
fi
echo "C++ compiler: ${CXX:-$(command -v g++)} ($(${CXX:-g++} -dumpfullversion 2>/dev/null))" | tee -a "$summary"
# Build and install into the OpenMM installation (plugins where `import openmm` loads them).
GEN=$(command -v ninja >/dev/null && echo "-G Ninja")
# A build folder configured with another compiler (a machine kept warm between calls) starts over.
if [ -f build-gpu/CMakeCache.txt ] && ! grep -q "CMAKE_CXX_COMPILER:.*=${CXX:-/usr/bin/g++}\$" build-gpu/CMakeCache.txt; then
    rm -rf build-gpu
fi
cmake -S . -B build-gpu $GEN -DCMAKE_BUILD_TYPE=Release -DOPENMM_DIR="$OMM" -DCOORDINATION_BUILD_CUDA_LIB=ON \
      -DCOORDINATION_PYTHON_INSTALL_DIR="${PYTHONPATH:-$(python3 -c 'import site; print(site.getsitepackages()[0])')}/openmmcoordination" \
      > "$OUT/build.log" 2>&1 && cmake --build build-gpu -j "$(nproc)" >> "$OUT/build.log" 2>&1 \
      && cmake --install build-gpu >> "$OUT/build.log" 2>&1
if [ $? -ne 0 ]; then
    tail -40 "$OUT/build.log"
    note "BUILD FAILED"
    exit 1
fi
note "build: ok"
python3 -c "import openmmcoordination as oc; print('openmmcoordination', oc.__version__, oc.plugin_load_failures)"

note "kernel cache: $(ls "$OPENMM_CACHE_DIR" | wc -l) modules at the start; build took $SECONDS s"
# The tests run in many processes at once. Without MPS the GPU time-slices between their contexts
# and creating a Context does not overlap across processes (0.11 s alone, 0.4 s with four at
# once, on the H100), so most of a test's time is waiting: measured with ctest's 12 shards beside
# 10 pytest workers, ctest took 470 s and pytest ran 500 of its ~2,100 CUDA tests in 460 s.
# GPU_SUITE_MPS=1 runs them under CUDA MPS, about three times faster: ctest in 250 s and 1,820
# pytest tests in 500 s. It is off by default because a Context whose creation fails after the
# platform has created its CUDA context (an index out of range, a bad tuning switch) leaks that
# context (OpenMM does not release it), and under MPS the leaks of the error tests use up the
# server's clients, after which other tests fail with "No compatible CUDA device is available".
# The daemon ends with the script.
if [ "${GPU_SUITE_MPS:-0}" = 1 ] && command -v nvidia-cuda-mps-control > /dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/coordination-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/coordination-mps-log
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    if nvidia-cuda-mps-control -d; then
        trap 'echo quit | nvidia-cuda-mps-control' EXIT
        note "CUDA MPS: on"
    fi
fi
if [[ " $stages " == *" ctest "* ]]; then
    # The two shards of each precision and the compile test at once, beside pytest.
    (cd build-gpu && timeout $STAGE_TIMEOUT ctest --output-on-failure --timeout $STAGE_TIMEOUT -j ${CTEST_JOBS:-7}) > "$OUT/ctest.log" 2>&1 &
    ctestPid=$!
fi

if [[ " $stages " == *" pytest "* ]]; then
    # A quick check that a CUDA Context with the force works from Python, before the suite.
    python3 -X faulthandler -c "
import openmm as mm, openmmcoordination as oc, numpy as np
s = mm.System(); [s.addParticle(1.0) for i in range(3)]; f = oc.CoordinationForce([0, 1, 2]); s.addForce(f)
c = mm.Context(s, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('CUDA'))
c.setPositions(np.array([[0, 0, 0], [0.2, 0, 0], [0.5, 0, 0]]))
print('python CUDA smoke test: CV', f.getCollectiveVariableValue(c), 'energy', c.getState(getEnergy=True).getPotentialEnergy())
" 2>&1 | tee -a "$summary"
    start=$SECONDS
    # The image's auto-loaded pytest plugins (jax, torch, ...) are not needed and can interfere.
    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 COORDINATION_REQUIRE_PLATFORMS=CUDA timeout -s INT -k 30 $STAGE_TIMEOUT python3 -X faulthandler -m pytest \
        ${PYTEST_FILES:-python/tests} -q -k "CUDA" -p no:cacheprovider -p xdist.plugin -n ${PYTEST_WORKERS:-$(( $(nproc) > 9 ? $(nproc)-7 : 2 ))} \
        -rfE --tb=short --junitxml="$OUT/pytest-cuda.xml" > "$OUT/pytest.log" 2>&1
    note "pytest: exit $?, $((SECONDS-start)) s"
    tail -5 "$OUT/pytest.log" | tee -a "$summary"
    for precision in single mixed double; do
        [ -f "$OUT/pytest-cuda.xml" ] || { note "pytest CUDA $precision: no report (pytest crashed or timed out)"; continue; }
        python3 - "$OUT/pytest-cuda.xml" "$precision" <<'EOF' | tee -a "$summary"
import sys, xml.etree.ElementTree as ET
cases = [c for c in ET.parse(sys.argv[1]).getroot().iter('testcase') if 'CUDA-' + sys.argv[2] in c.get('name', '')]
failed = [c for c in cases if c.find('failure') is not None or c.find('error') is not None]
skipped = [c for c in cases if c.find('skipped') is not None]
print('pytest CUDA %s: %d passed, %d failed, %d skipped' % (sys.argv[2], len(cases) - len(failed) - len(skipped), len(failed), len(skipped)))
EOF
    done
fi

if [[ " $stages " == *" ctest "* ]]; then
    wait $ctestPid
    note "ctest: exit $?, done at $SECONDS s"
    grep -E "tests passed|Test +#" "$OUT/ctest.log" | tee -a "$summary"
    for precision in single mixed double; do
        shards=$(grep -cE "Test +#.*TestCudaCoordinationForce_${precision}_[0-9]+ " "$OUT/ctest.log")
        passed=$(grep -cE "TestCudaCoordinationForce_${precision}_[0-9]+ .*Passed" "$OUT/ctest.log")
        [ "$passed" -gt 0 ] && [ "$passed" = "$shards" ] && note "ctest CUDA $precision: passed ($passed of $shards shards)" || note "ctest CUDA $precision: FAILED ($passed of $shards shards passed)"
    done
fi

if [[ " $stages " == *" sanitize "* ]]; then
    TEST=build-gpu/platforms/cuda/tests/TestCudaCoordinationForce
    for tool in memcheck racecheck; do
        # racecheck is slow: the tests of every kernel that shares memory within a block.
        # SANITIZER_MEMCHECK_FILTER / SANITIZER_RACECHECK_FILTER select other tests by name.
        if [ $tool = racecheck ]; then
            filter=${SANITIZER_RACECHECK_FILTER:-Histogram,LargeSystem,testOneGroup,testTwoGroups,testPairList,CellsAllInOneCell,CellsGroupOfOne}
        else
            filter=${SANITIZER_MEMCHECK_FILTER:-}
        fi
        timeout ${SANITIZER_TIMEOUT:-300} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 $TEST mixed "$filter" > "$OUT/sanitizer-$tool.log" 2>&1
        status=$?
        tail -3 "$OUT/sanitizer-$tool.log"
        note "compute-sanitizer $tool (mixed): exit $status, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT/sanitizer-$tool.log") clean summary lines"
    done
fi

if [[ " $stages " == *" coldstart "* ]]; then
    # Timed without MPS, as a user's Context starts.
    [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && { echo quit | nvidia-cuda-mps-control; sleep 2; unset CUDA_MPS_PIPE_DIRECTORY; trap - EXIT; }
    python3 benchmarks/cold_start.py --json "$OUT/coldstart.json" 2>&1 | tee "$OUT/coldstart.log" | tee -a "$summary"
fi

if [[ " $stages " == *" bench "* ]]; then
    for precision in ${BENCH_PRECISIONS:-mixed}; do
        python3 benchmarks/benchmark.py --platform CUDA --precision $precision --json "$OUT/benchmark-$precision.json" \
            ${BENCH_ARGS:-} 2>&1 | tee "$OUT/benchmark-$precision.log"
    done
fi
tar czf - -C "$OPENMM_CACHE_DIR" . | split -b 15000000 - "$OUT/kernel-cache.part-"
note "kernel cache: $(ls "$OPENMM_CACHE_DIR" | wc -l) modules, $(cat "$OUT"/kernel-cache.part-* | wc -c) bytes packed"
note "total: $SECONDS s"
(cd "$OUT" && tar czf logs.tgz --exclude 'kernel-cache.part-*' --exclude summary.txt --exclude logs.tgz --remove-files * 2>/dev/null)
echo "=== summary"
cat "$summary"
