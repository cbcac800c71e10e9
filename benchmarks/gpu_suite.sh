#!/usr/bin/env bash
# The whole GPU suite in one command, for a machine with an NVIDIA GPU, the CUDA toolkit, cmake
# and Python, but no network: installs the OpenMM wheels carried in .whl/ (see
# ../shared/device/README.md), builds the plugin, then runs the stages named on the command line
# (default: stress ctest pytest; each stage is described below). In a 10-minute device call the
# whole suite takes two calls, the second carrying the first's kernel cache (see the end of this
# header):
#   1. bash benchmarks/gpu_suite.sh stress ctest    (carry .whl and .kernel-cache)
#   2. bash benchmarks/gpu_suite.sh pytest          (carry .whl and the new .kernel-cache)
# The stages:
#   ctest     the C++ tests: CUDA in single, mixed and double precision (COORDINATION_CUDA_TEST_SHARDS,
#             CTEST_SHARDS here, default 4 shards a precision) and the NVRTC compile test; CTEST_REGEX
#             selects tests by name (ctest -R), e.g. "single_3|double_1" for the shards an earlier
#             call's time cut (the summary counts the selected shards that did not report as not passed)
#   pytest    the Python tests on CUDA (single, mixed, double; PYTEST_FILES selects test files),
#             in PYTEST_WORKERS pytest-xdist workers (default: the cores less four, at most 12);
#             PYTEST_SELECT picks tests (pytest -k; default "CUDA", e.g. "CUDA-double" for one precision);
#             COORDINATION_TEST_SHARD=k/n runs the k-th of n parts (python/tests/conftest.py), so
#             that n calls run the suite where one cannot: with a kernel cache of the C++ tests
#             only, one call ran 1,083 of the 1,570 tests in its 305 s (H100, 2026-11-27); every
#             comparison's error, per configuration and tolerance, into test-errors.txt
#             (benchmarks/test_errors.py): what the CUDA tolerances of python/tests/helpers.py could be
#   stress    ordering between kernels under load, first: the C++ tests STRESS_FILTER (default ForcesOnly:
#             testForcesOnlyAgainstReference, every kind of pair kernel, testBiasForcesOnly, 2 and
#             8 CVs, and testParticleFunctionForcesOnly and testParticleFunctionListsForcesOnly, per-atom coordination numbers on
#             the neighbour lists and over all pairs) in STRESS_PROCS processes at once (default 12, the precisions in turn) under CUDA
#             MPS, STRESS_ROUNDS rounds (default 3, the first on an empty kernel cache), in every
#             launch mode that ships: programmatic dependent launches and plain ones
#             (COORDINATION_DEPENDENT_LAUNCH=1 and 0); 72 runs by default, and every one must pass
#   filter    the C++ tests whose names contain one of TEST_FILTER's comma-separated words (e.g.
#             "Distance,TuningSwitches"), in single, mixed and double precision at once, outside MPS,
#             each within FILTER_TIMEOUT seconds (default 170): what a change needs run first, in a
#             fraction of ctest's time
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck on the CUDA tests (racecheck and
#             synccheck on the stress stage's tests too)
#   coldstart benchmarks/bench_coldstart.py: what the force adds to a first Context, per precision
#   bench     benchmarks/benchmark.py (BENCH_ARGS adds options, e.g. "--sections md"; BENCH_RESUME=file goes
#             on with a run an earlier call cut short, on the same warm machine: its JSON, carried back).
#             The md section's openmm-opes rows need openmm-opes and SciPy there: their wheels
#             (pip download --no-deps ... openmm-opes scipy, as for OpenMM's) in .whl; with them .whl
#             is about 55 MB, so such a call carries no kernel cache. The contacts section needs the
#             solvated DHFR, which ../shared/data beside a developer's checkout holds but a device call
#             does not take along: copy it into the checkout's shared/data/ (git ignores /shared/) and
#             name shared in the call's carry; benchmark.py looks there too, and refuses a run that
#             lacks it before timing anything (COORDINATION_DHFR_PDB names another place)
# The test stages run in two steps:
#   1. under CUDA MPS (GPU_SUITE_MPS=0 leaves it off): ctest's shards (ctest -LE leaks_context,
#      CTEST_JOBS at once, default all of them) beside pytest -m "not leaks_context", until both end;
#   2. then the daemon is stopped and, outside MPS, the tests that make Context creation fail after
#      the CUDA platform has created its device context (an index out of range, a bad tuning switch;
#      OpenMM does not release that context): ctest -L leaks_context (one test a precision) beside
#      pytest -m leaks_context (see python/tests/conftest.py). Under MPS each leaked context holds a
#      client of the server until its process ends, and these tests leaked enough of them to use the
#      server up ("No compatible CUDA device is available" in the tests after them).
# Why MPS: without it the GPU time-slices between the processes' contexts and creating a Context
# does not overlap across processes (0.11 s alone, 0.4 s with four at once, on the H100), so most
# of a test's time is waiting. Measured on the H100 before the leaking tests were split off and
# before the Python tests shared Contexts between modes: ctest's 12 shards beside 10 pytest
# workers took 466 s for ctest while pytest ran 503 of its ~2,100 CUDA tests in 463 s; under MPS,
# ctest 235-254 s and 1,820 pytest tests in ~500 s. Since then the three modes of a case share one
# Context (test_values_forces, test_plumed, test_pair_histogram): 1,161 CUDA pytest tests (21 of
# them leaks_context) creating about 1,180 CUDA Contexts, were 2,193 creating about 2,210 (counted
# on the CPU platform, python/tests/context_count.py). Measured on the H100 (2026-11-25, OpenMM
# 8.6.1): `stress ctest` 315 s in all (build 28 s, stress 119 s for 72 runs, ctest's 17 tests under
# MPS 142 s, the 3 leaks_context tests 17 s), every test run and passed; then `pytest` on the warm
# machine 293 s (1,176 tests in 256 s, the 21 leaks_context tests in 8 s), every test run and
# passed. All stages in one call took 505 s, but with ctest beside it pytest had run only 919 of its
# 1,178 tests when its time was up (ctest took 325 s there): hence the two calls. The summary says
# "N of M tests ran" for ctest and pytest; a Python test file that skips itself because a module it
# imports is missing there (MDAnalysis: test_analysis, test_native_contacts, which CI runs) is named
# apart, not counted.
# Stage timeouts: the main step stops at SUITE_BUDGET (default 560) seconds after the start less
# LEAK_TIMEOUT (default 60) and 60 s (pytest's 30 s to report after the interrupt, the packing), or
# after STAGE_TIMEOUT seconds where that is set; the leak step after LEAK_TIMEOUT. pytest is
# interrupted so that it still reports: the summary and the cache come back within 600 s.
# OpenMM's compiled-kernel cache (OPENMM_CACHE_DIR) is unpacked at the start from the parts
# .kernel-cache/kernel-cache.part-* where they exist, and packed at the end into $OUT/kernel-cache.part-*
# (15 MB each): copy those into .kernel-cache/ and carry that folder to the next call, and the
# tests compile nothing they compiled before (about 5 s of NVRTC for each new configuration). The
# parts are a tar compressed with xz where the machine has it (8.7 MB for the 1,117 modules of the
# stress and ctest stages, against 42 MB with gzip: the working tree a call carries is at most
# 64 MiB, .whl 18 MB of it), else with gzip; either is read. They are at most KERNEL_CACHE_LIMIT
# bytes (default 40,000,000): beyond it the modules this call read or compiled are kept first, then
# the newest others (benchmarks/kernel_cache.sh, which unpacks and packs them).
# Logs and JSON go to $OUT (default ./gpu-out), packed into logs.tgz (among them the slowest C++
# and Python tests, ctest-times.txt and pytest-times.txt, for balancing the shards and workers).
# Ends with a summary: pass and fail counts per precision for ctest and pytest, and times.
set -uo pipefail
SECONDS=0
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
stages=${*:-stress ctest pytest}
SUITE_BUDGET=${SUITE_BUDGET:-560}
LEAK_TIMEOUT=${LEAK_TIMEOUT:-60}
export OPENMM_CACHE_DIR=/tmp/openmm-kernel-cache
CACHE_STAMP=/tmp/openmm-kernel-cache.stamp
bash benchmarks/kernel_cache.sh unpack "$OPENMM_CACHE_DIR" .kernel-cache "$CACHE_STAMP"
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
      -DCOORDINATION_CUDA_TEST_SHARDS=${CTEST_SHARDS:-4} \
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

note "kernel cache: $(ls "$OPENMM_CACHE_DIR" | wc -l) modules at the start; setup and build took $SECONDS s"
runs_ctest=$([[ " $stages " == *" ctest "* ]] && echo 1)
runs_pytest=$([[ " $stages " == *" pytest "* ]] && echo 1)
runs_stress=$([[ " $stages " == *" stress "* ]] && echo 1)

# CUDA MPS for the main test step (see the header); the daemon ends after it, or with the script.
stop_mps() {
    [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] || return 0
    echo quit | nvidia-cuda-mps-control
    # the server leaves once its clients have; wait for it (a few seconds at most)
    for i in $(seq 20); do pgrep -x nvidia-cuda-mps > /dev/null || break; sleep 0.5; done
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    trap - EXIT
    note "CUDA MPS: off at $SECONDS s"
}
if [ -n "$runs_ctest$runs_pytest$runs_stress" ] && [ "${GPU_SUITE_MPS:-1}" = 1 ] && command -v nvidia-cuda-mps-control > /dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/coordination-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/coordination-mps-log
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    if nvidia-cuda-mps-control -d; then
        trap 'echo quit | nvidia-cuda-mps-control' EXIT
        note "CUDA MPS: on"
    else
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        note "CUDA MPS: the daemon did not start; the tests run without it"
    fi
else
    [ -n "$runs_ctest$runs_pytest$runs_stress" ] && note "CUDA MPS: off"
fi

# pytest, as both steps run it: python3 -m pytest with the stage's timeout, report name and arguments.
# Every comparison's error goes to $testErrors (python/tests/helpers.py's record_error), summarized
# at the end into $OUT/test-errors.txt by benchmarks/test_errors.py: what the CUDA tolerances could be.
# The image's auto-loaded pytest plugins (jax, torch, ...) are not needed and can interfere; one
# BLAS thread a process, as many run at once.
testErrors=/tmp/coordination-test-errors
rm -rf $testErrors
run_pytest() {
    local timeout=$1 name=$2
    shift 2
    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 COORDINATION_REQUIRE_PLATFORMS=CUDA COORDINATION_TEST_ERRORS=$testErrors OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        timeout -s INT -k 30 $timeout python3 -X faulthandler -m pytest ${PYTEST_FILES:-python/tests} -k "${PYTEST_SELECT:-CUDA}" \
        -p no:cacheprovider -rfE --tb=short --junitxml="$OUT/pytest-$name.xml" "$@" > "$OUT/pytest-$name.log" 2>&1
}
# ctest, as both steps run it: the step's timeout, log name and arguments; LastTest.log (every test's output) kept.
run_ctest() {
    local timeout=$1 name=$2
    shift 2
    (cd build-gpu && timeout $timeout ctest --output-on-failure --timeout $timeout "$@") > "$OUT/ctest-$name.log" 2>&1
    local status=$?
    cp build-gpu/Testing/Temporary/LastTest.log "$OUT/ctest-$name-output.log" 2>/dev/null
    return $status
}

# The stress stage, under MPS before the main step (alone on the GPU, as walkers and throughput
# users run): per round and per launch mode, how many runs failed, and where (the tests print the
# case and frame they are at). Its logs (72 by default) go outside $OUT, packed into stress-logs.tgz
# at the end of the stage, the failed ones also copied to $OUT: a call cut short during the stage
# still brings back summary.txt, which a device call's limit on the number of files would otherwise
# leave out among the logs.
if [ -n "$runs_stress" ]; then
    TEST=build-gpu/platforms/cuda/tests/TestCudaCoordinationForce
    precisions=(single mixed double)
    stressRuns=0 stressFailed=0
    stressLogs=/tmp/coordination-stress-logs
    rm -rf $stressLogs && mkdir -p $stressLogs
    for mode in 1 0; do
        stressStart=$SECONDS
        cache=/tmp/coordination-stress-cache-$mode
        rm -rf $cache && mkdir -p $cache
        runs=0 failed=0 where=""
        for round in $(seq ${STRESS_ROUNDS:-3}); do
            pids=()
            for p in $(seq ${STRESS_PROCS:-12}); do
                log="$stressLogs/stress-launch$mode-round$round-$p-${precisions[$(( (p-1)%3 ))]}.log"
                OPENMM_CACHE_DIR=$cache COORDINATION_DEPENDENT_LAUNCH=$mode timeout ${STRESS_TIMEOUT:-240} \
                    $TEST ${precisions[$(( (p-1)%3 ))]} ${STRESS_FILTER:-ForcesOnly} > "$log" 2>&1 &
                pids+=($!)
            done
            roundFailed=0
            for p in "${!pids[@]}"; do
                runs=$((runs+1))
                if ! wait ${pids[$p]}; then
                    failed=$((failed+1)) roundFailed=$((roundFailed+1))
                    log=$(ls $stressLogs/stress-launch$mode-round$round-$((p+1))-*.log)
                    cp "$log" "$OUT"/
                    where="$where [round $round, $(basename "$log" .log | sed 's/.*-//'): $(grep -hE '(case [0-9]+|[0-9]+ CVs,) frame [0-9]+' "$log" | tail -1 | xargs): $(grep -hE 'Expected|exception' "$log" | head -1 | cut -c1-160)]"
                fi
            done
            echo "stress ($([ $mode = 1 ] && echo 'dependent' || echo 'plain') launches), round $round: $roundFailed of ${#pids[@]} runs failed ($((SECONDS-stressStart)) s into the mode)"
        done
        note "stress ($([ $mode = 1 ] && echo 'dependent launches' || echo 'plain launches'), ${STRESS_FILTER:-ForcesOnly}): $failed of $runs runs failed$where ($((SECONDS-stressStart)) s)"
        stressRuns=$((stressRuns+runs)) stressFailed=$((stressFailed+failed))
    done
    note "stress: $((stressRuns-stressFailed)) of $stressRuns stressed runs passed"
    tar czf "$OUT/stress-logs.tgz" -C $stressLogs . && rm -rf $stressLogs
fi

mainTimeout=${STAGE_TIMEOUT:-$(( SUITE_BUDGET - SECONDS - LEAK_TIMEOUT - 60 ))}
[ "$mainTimeout" -lt 60 ] && mainTimeout=60
[ -n "$runs_ctest$runs_pytest" ] && note "main test step: up to $mainTimeout s from $SECONDS s"

if [ -n "$runs_ctest" ]; then
    # Every shard and the compile test at once (CTEST_JOBS), beside pytest.
    run_ctest $mainTimeout main -LE leaks_context ${CTEST_REGEX:+-R "$CTEST_REGEX"} -j ${CTEST_JOBS:-$(( 3*${CTEST_SHARDS:-4} + 1 ))} &
    ctestPid=$!
fi

if [ -n "$runs_pytest" ]; then
    # A quick check that a CUDA Context with the force works from Python, before the suite.
    python3 -X faulthandler -c "
import openmm as mm, openmmcoordination as oc, numpy as np
s = mm.System(); [s.addParticle(1.0) for i in range(3)]; f = oc.CoordinationForce([0, 1, 2]); s.addForce(f)
c = mm.Context(s, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('CUDA'))
c.setPositions(np.array([[0, 0, 0], [0.2, 0, 0], [0.5, 0, 0]]))
print('python CUDA smoke test: CV', f.getCollectiveVariableValue(c), 'energy', c.getState(getEnergy=True).getPotentialEnergy())
" 2>&1 | tee -a "$summary"
    # --dist loadgroup (pytest-xdist >= 2.5) keeps the tests of one xdist_group on one worker.
    dist=$(python3 -c "import sys, xdist; sys.exit(tuple(int(v) for v in xdist.__version__.split('.')[:2]) < (2, 5))" 2>/dev/null && echo loadgroup || echo load)
    workers=${PYTEST_WORKERS:-$(( $(nproc) > 16 ? 12 : ($(nproc) > 6 ? $(nproc)-4 : 2) ))}
    start=$SECONDS
    run_pytest $mainTimeout main -m "not leaks_context" -p xdist.plugin -n $workers --dist $dist --durations=40
    note "pytest (main, under MPS if on; $workers workers, --dist $dist): exit $?, $((SECONDS-start)) s"
    tail -3 "$OUT/pytest-main.log" | tee -a "$summary"
fi
if [ -n "$runs_ctest" ]; then
    wait $ctestPid
    note "ctest (main): exit $?, done at $SECONDS s"
    grep -E "tests passed" "$OUT/ctest-main.log" | tee -a "$summary"
fi

# Step 2, outside MPS: the tests that leak a device context.
stop_mps
if [ -n "$runs_ctest" ]; then
    run_ctest $LEAK_TIMEOUT leaks -L leaks_context ${CTEST_REGEX:+-R "$CTEST_REGEX"} -j 3 &
    ctestPid=$!
fi
if [ -n "$runs_pytest" ]; then
    start=$SECONDS
    run_pytest $LEAK_TIMEOUT leaks -m leaks_context
    note "pytest (leaks_context, outside MPS): exit $?, $((SECONDS-start)) s"
    tail -1 "$OUT/pytest-leaks.log" | tee -a "$summary"
fi
if [ -n "$runs_ctest" ]; then
    wait $ctestPid
    note "ctest (leaks_context, outside MPS): exit $?, done at $SECONDS s"
    grep -E "tests passed" "$OUT/ctest-leaks.log" | tee -a "$summary"
fi

# The summary per precision, and the slowest tests for the logs.
if [ -n "$runs_ctest" ]; then
    # The shards selected (all, or CTEST_REGEX's), counted from ctest's list: a shard the time cut
    # reports nothing, and counts as not passed.
    selected=$(cd build-gpu && ctest -N ${CTEST_REGEX:+-R "$CTEST_REGEX"})
    for precision in single mixed double; do
        shards=$(echo "$selected" | grep -cE "TestCudaCoordinationForce_${precision}_[0-9]+$")
        wantLeaks=$(echo "$selected" | grep -cE "TestCudaCoordinationForce_${precision}_leaks$")
        passed=$(grep -cE "TestCudaCoordinationForce_${precision}_[0-9]+ .*Passed" "$OUT/ctest-main.log")
        leaks=$(grep -cE "TestCudaCoordinationForce_${precision}_leaks .*Passed" "$OUT/ctest-leaks.log" 2>/dev/null)
        leaks=${leaks:-0}
        [ "$shards" = 0 ] && [ "$wantLeaks" = 0 ] && continue
        if [ "$passed" = "$shards" ] && [ "$leaks" = "$wantLeaks" ]; then
            note "ctest CUDA $precision: passed ($passed of $shards shards$([ "$wantLeaks" = 1 ] && echo ', and the leaks_context test'))"
        else
            note "ctest CUDA $precision: FAILED or not run ($passed of $shards shards passed; leaks_context test: $([ "$leaks" = 1 ] && echo passed || ([ "$wantLeaks" = 1 ] && echo 'not passed' || echo 'not selected')))"
        fi
    done
    grep -hE "TestCudaCoordinationCompile .*(Passed|Failed|\*\*\*)" "$OUT/ctest-main.log" | sed 's/^ *[0-9]*\/[0-9]* //' | tee -a "$summary"
    total=$(echo "$selected" | sed -n 's/^Total Tests: //p')
    ran=$(cat "$OUT/ctest-main.log" "$OUT/ctest-leaks.log" 2>/dev/null | grep -cE "Test +#[0-9]+: .* (Passed|\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout)")
    note "ctest: $ran of $total tests ran"

    # The C++ tests by time (the runner prints "  testName (seconds s)"), for balancing the shards.
    grep -hE "^  test[A-Za-z0-9_]+ \([0-9.e+-]+ s\)" "$OUT"/ctest-*-output.log 2>/dev/null | sort -t'(' -k2 -gr | head -60 > "$OUT/ctest-times.txt"
fi
if [ -n "$runs_pytest" ]; then
    python3 - "$OUT" <<'EOF' | tee -a "$summary"
import collections, os, re, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
cases = {}
for name in ('main', 'leaks'):
    path = os.path.join(out, 'pytest-%s.xml' % name)
    cases[name] = list(ET.parse(path).getroot().iter('testcase')) if os.path.exists(path) else None
    if cases[name] is None:
        print('pytest %s: no report (pytest crashed or was killed)' % name)
    log = os.path.join(out, 'pytest-%s.log' % name)
    text = open(log).read() if os.path.exists(log) else ''
    collected = re.findall(r'workers \[(\d+) items?\]|(\d+) selected|collected (\d+) items?', text)
    if collected:
        print('pytest %s: %s tests selected' % (name, max(collected[-1])))
def count(testcases, precision):
    mine = [c for c in testcases or [] if 'CUDA-' + precision in c.get('name', '')]
    failed = sum(1 for c in mine if c.find('failure') is not None or c.find('error') is not None)
    skipped = sum(1 for c in mine if c.find('skipped') is not None)
    return len(mine) - failed - skipped, failed, skipped
selected = {}
for name in ('main', 'leaks'):
    log = os.path.join(out, 'pytest-%s.log' % name)
    found = re.findall(r'\[(\d+) items?\]|(\d+) selected|collected (\d+) items?', open(log).read()) if os.path.exists(log) else []
    selected[name] = max(int(v or 0) for v in found[-1]) if found else 0
# A test file that skips itself at collection (a module it imports is missing here) is a
# 'collection skipped' entry, not a test: named apart, not counted as one that ran.
def uncollected(c):
    return c.find('skipped') is not None and 'collection skipped' in (c.find('skipped').get('message') or '')
ran = {name: sum(1 for c in cases[name] or [] if not uncollected(c)) for name in ('main', 'leaks')}
print('pytest: %d of %d collected tests ran (main %d of %d, leaks_context %d of %d)' % (
    ran['main'] + ran['leaks'], selected['main'] + selected['leaks'], ran['main'], selected['main'], ran['leaks'], selected['leaks']))
skippedFiles = sorted({(c.get('classname') or c.get('name', '')).split('.')[-1] for c in (cases['main'] or []) + (cases['leaks'] or []) if uncollected(c)})
if skippedFiles:
    print('pytest: test files not collected here (a module they import is missing): %s' % ', '.join(skippedFiles))
for precision in ('single', 'mixed', 'double'):
    main, leaks = count(cases['main'], precision), count(cases['leaks'], precision)
    print('pytest CUDA %s: %d passed, %d failed, %d skipped (main %d/%d/%d, leaks_context %d/%d/%d)' % (
        (precision, main[0] + leaks[0], main[1] + leaks[1], main[2] + leaks[2]) + main + leaks))
# Seconds by test file and the slowest tests, for balancing the workers (into the logs).
files, tests = collections.Counter(), []
for c in (cases['main'] or []) + (cases['leaks'] or []):
    files[c.get('classname', '').split('.')[-1]] += float(c.get('time', 0))
    tests.append((float(c.get('time', 0)), c.get('classname', '') + '::' + c.get('name', '')))
with open(os.path.join(out, 'pytest-times.txt'), 'w') as f:
    f.write('seconds by file (summed over tests)\n')
    f.writelines('%8.1f %s\n' % (t, name) for name, t in files.most_common())
    f.write('\nslowest tests\n')
    f.writelines('%8.1f %s\n' % test for test in sorted(tests, reverse=True)[:60])
EOF
    python3 benchmarks/test_errors.py $testErrors > "$OUT/test-errors.txt" 2>&1
    tar czf "$OUT/test-errors.tgz" -C $testErrors . 2>/dev/null
    note "test errors: $OUT/test-errors.txt ($(cat $testErrors/*.tsv 2>/dev/null | wc -l) comparisons)"
fi

if [[ " $stages " == *" filter "* ]]; then
    if [ -z "${TEST_FILTER:-}" ]; then
        note "filter: TEST_FILTER is not set (the words of the tests' names to run, comma-separated)"
    else
        pids=()
        for precision in single mixed double; do
            timeout ${FILTER_TIMEOUT:-170} build-gpu/platforms/cuda/tests/TestCudaCoordinationForce $precision "$TEST_FILTER" \
                > "$OUT/filter-$precision.log" 2>&1 &
            pids+=($!)
        done
        for k in 0 1 2; do
            precision=$(echo single mixed double | cut -d' ' -f$((k+1)))
            wait ${pids[$k]}
            status=$?
            note "filter $TEST_FILTER, CUDA $precision: exit $status ($(grep -c '^  test' "$OUT/filter-$precision.log") tests ran)$(grep -hE 'exception|Expected' "$OUT/filter-$precision.log" | head -2 | cut -c1-200 | sed 's/^/; /' | tr -d '\n')"
        done
    fi
fi

if [[ " $stages " == *" sanitize "* ]]; then
    TEST=build-gpu/platforms/cuda/tests/TestCudaCoordinationForce
    for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
        # racecheck and synccheck are slow: the tests of every kernel that shares memory within a
        # block, and the stress stage's tests (every path an MD step takes, the bias force's too).
        # SANITIZER_MEMCHECK_FILTER / SANITIZER_RACECHECK_FILTER / SANITIZER_SYNCCHECK_FILTER select other tests by name.
        if [ $tool = racecheck ]; then
            filter=${SANITIZER_RACECHECK_FILTER:-Histogram,LargeSystem,testOneGroup,testTwoGroups,testPairList,CellsAllInOneCell,CellsGroupOfOne,ForcesOnly}
        elif [ $tool = synccheck ]; then
            filter=${SANITIZER_SYNCCHECK_FILTER:-ForcesOnly}
        else
            filter=${SANITIZER_MEMCHECK_FILTER:-}
        fi
        timeout ${SANITIZER_TIMEOUT:-300} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 $TEST mixed "$filter" > "$OUT/sanitizer-$tool.log" 2>&1
        status=$?
        tail -3 "$OUT/sanitizer-$tool.log"
        note "compute-sanitizer $tool (mixed, ${filter:-all tests}): exit $status; $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | sort | uniq -c | xargs)"
    done
fi

if [[ " $stages " == *" coldstart "* ]]; then
    # Timed without MPS (stopped after the main test step), as a user's Context starts.
    python3 benchmarks/bench_coldstart.py --json "$OUT/coldstart.json" 2>&1 | tee "$OUT/coldstart.log" | tee -a "$summary"
fi

if [[ " $stages " == *" bench "* ]]; then
    for precision in ${BENCH_PRECISIONS:-mixed}; do
        python3 benchmarks/benchmark.py --platform CUDA --precision $precision --json "$OUT/benchmark-$precision.json" \
            ${BENCH_ARGS:-} ${BENCH_RESUME:+--resume "$BENCH_RESUME"} 2>&1 | tee "$OUT/benchmark-$precision.log"
    done
fi
note "$(bash benchmarks/kernel_cache.sh pack "$OPENMM_CACHE_DIR" "$OUT" "$CACHE_STAMP")"
note "total: $SECONDS s"
(cd "$OUT" && tar czf logs.tgz --exclude 'kernel-cache.part-*' --exclude summary.txt --exclude logs.tgz --remove-files * 2>/dev/null)
echo "=== summary"
cat "$summary"
