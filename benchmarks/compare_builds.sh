#!/usr/bin/env bash
# Time two builds of the plugin on one GPU machine: this tree's (A) and the tree in the folder
# given first (B: e.g. a git worktree of a branch, `git worktree add other-src some-branch`,
# carried beside the tree: name it in the device call's carry). Each is built and installed by
# benchmarks/gpu_suite.sh (stage none, its own build-gpu), then they are installed in turn
# (cmake --install) before each run of benchmarks/profile_launches.py with the other arguments:
# A, B, A, B, ... RUNS times each (default 2), so that a drift of the machine hits both alike.
# Every run's JSON and log go to $OUT (compare-A-1.json, ...), and a table ends the output: each
# case's overhead over plain per run and build (us a step; with --replicas, the median over the
# rounds of the mean of its Contexts) and the medians of the runs.
#
#   bash benchmarks/compare_builds.sh other-src --cases plain,fast-1,fast-100,bias-2 --replicas 3 --rounds 6
#
# Measured this way without --replicas (session of 2026-12-06), runs of the same build differed by
# 3 to 8 us: use --replicas (profile_launches.py's header says why).
set -u
other=${1:?usage: bash benchmarks/compare_builds.sh OTHER_TREE profile_launches.py-arguments...}
shift
[ -f "$other/benchmarks/gpu_suite.sh" ] || { echo "compare_builds.sh: $other holds no tree of this project"; exit 1; }
: "${OUT:?compare_builds.sh: set OUT, the folder the logs go to}"
here=$(pwd)
SUITE_BUDGET=${SUITE_BUDGET:-200} bash benchmarks/gpu_suite.sh none > "$OUT/compare-build-A.log" 2>&1 || { tail -20 "$OUT/compare-build-A.log"; exit 1; }
mkdir -p "$OUT/compare-build-B"
# The environment gpu_suite.sh sets up for its own stages, from here on: the other tree carries no
# wheels, so its build finds OpenMM where A's build installed it.
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH OPENMM_CACHE_DIR=/tmp/openmm-kernel-cache PYTHONUNBUFFERED=1
(cd "$other" && OUT="$OUT/compare-build-B" SUITE_BUDGET=${SUITE_BUDGET:-200} bash benchmarks/gpu_suite.sh none \
    > "$OUT/compare-build-B.log" 2>&1) || { tail -20 "$OUT/compare-build-B.log"; exit 1; }
OMM=$(python3 -c "import openmm.version as v, os; print(os.path.dirname(v.openmm_library_path))") || exit 1
export LD_LIBRARY_PATH=$OMM/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for run in $(seq 1 "${RUNS:-2}"); do
    for build in A B; do
        tree=$([ $build = A ] && echo "$here" || echo "$other")
        cmake --install "$tree/build-gpu" > /dev/null || exit 1
        echo "== build $build ($tree), run $run"
        python3 benchmarks/profile_launches.py "$@" --json "$OUT/compare-$build-$run.json" 2>&1 \
            | tee "$OUT/compare-$build-$run.log" | grep -A40 "^over\|^[0-9]* rounds of"
    done
done
cmake --install "$here/build-gpu" > /dev/null
python3 benchmarks/compare_builds.py "$OUT"
