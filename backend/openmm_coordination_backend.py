"""In-tree PEP 517 build backend: scikit-build-core, built against the OpenMM the user already has.

pip builds in an isolated environment that does not see the target environment's packages, so a
build requirement `openmm` would pull a second OpenMM from PyPI and compile against it. Instead:

* If the interpreter's own site-packages (sysconfig's purelib/platlib of sys.prefix: pip runs the
  isolated build with the target environment's interpreter) holds an OpenMM, the build asks for no
  `openmm` and passes that OpenMM's folder (site-packages/OpenMM.libs for the PyPI wheel, the
  environment's prefix for conda-forge) to CMake as OPENMM_DIR.
* Only where none is installed does it add `openmm` (the newest supported series) to the build
  requirements, and compiles against that one.

The wheel's run-time requirement on `openmm` (and on `openmm-cuda-13` in the `cuda` extra) is then
narrowed to the minor series it was compiled against, so pip keeps the installed OpenMM and never
replaces it. An OpenMM installed without pip metadata (conda-forge's package may have no
dist-info) would not satisfy a requirement on `openmm`, and pip would install PyPI's beside it: in
that case the requirements on `openmm` and `openmm-cuda-13` are left out of the wheel's metadata.

Environment: OPENMM_DIR (a folder holding include/OpenMM.h and lib/) overrides the detection.
"""

import base64
import glob
import hashlib
import os
import re
import sys
import sysconfig
import zipfile


class _ScikitBuildCore:
    """scikit_build_core.build, imported on first use (the detection above works without it)."""
    def __getattr__(self, name):
        from scikit_build_core import build
        return getattr(build, name)


_skbuild = _ScikitBuildCore()

# The file at the repository's top that names the supported OpenMM range (CMakeLists.txt reads it too).
OPENMM_RANGE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'openmm-range.txt')


def read_openmm_range(path=OPENMM_RANGE_FILE):
    """The oldest and the newest supported OpenMM series, as ((major, minor), (major, minor)), from
    the lines `oldest = 8.2` and `newest = 8.6` of openmm-range.txt."""
    with open(path) as f:
        found = dict(re.findall(r'^(oldest|newest)\s*=\s*(\d+\.\d+)\s*$', f.read(), re.M))
    return tuple(tuple(int(part) for part in found[key].split('.')) for key in ('oldest', 'newest'))


# A build with no OpenMM installed fetches the newest supported series.
OPENMM_MIN, OPENMM_NEWEST = read_openmm_range()
OPENMM_DEFAULT_REQUIREMENT = 'openmm>=%d.%d,<%d.%d' % (OPENMM_NEWEST + (OPENMM_NEWEST[0], OPENMM_NEWEST[1] + 1))
# SWIG for the newest series (OpenMM 8.4 and later: SWIG 4.4 and 4.5, one type-table layout).
DEFAULT_SWIG_REQUIREMENT = 'swig>=4.4,<5'
# openmm-cuda-13 exists from OpenMM 8.4 on; older series have openmm-cuda-12 only.
FIRST_CUDA_13 = (8, 4)


def _read_version(openmm_package):
    """The version of an installed `openmm` package, read from openmm/version.py without importing it."""
    try:
        with open(os.path.join(openmm_package, 'version.py')) as f:
            text = f.read()
    except OSError:
        return None, None
    version = re.search(r"^short_version\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    library = re.search(r"^openmm_library_path\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return (version.group(1) if version else None), (library.group(1) if library else None)


def _has_pip_metadata(site):
    return any(re.match(r'openmm-[0-9]', os.path.basename(path), re.I)
               for path in glob.glob(os.path.join(site, '*.dist-info')) + glob.glob(os.path.join(site, '*.egg-info')))


def _openmm_folder(site, library_path):
    """The folder holding include/OpenMM.h and lib/: the PyPI wheel's OpenMM.libs, else (conda-forge)
    the one named by openmm/version.py, else the environment's prefix."""
    candidates = [os.path.join(site, 'OpenMM.libs')]
    if library_path:
        candidates.append(os.path.dirname(library_path))
    candidates += [sys.prefix, os.environ.get('CONDA_PREFIX', ''), os.path.join(sys.prefix, 'Library')]
    for folder in candidates:
        if folder and os.path.isfile(os.path.join(folder, 'include', 'OpenMM.h')):
            return os.path.abspath(folder)
    return None


def _describe(package):
    """The OpenMM whose Python package is the folder ``package``, as a dict (dir, version,
    pip_metadata, site)."""
    site = os.path.dirname(package)
    version, library_path = _read_version(package)
    return {'dir': _openmm_folder(site, library_path), 'version': version,
            'pip_metadata': _has_pip_metadata(site), 'site': site}


def installed_openmm(sites=None):
    """The OpenMM of the target environment, as a dict (dir, version, pip_metadata, site), or None."""
    if sites is None:
        paths = sysconfig.get_paths(vars={'base': sys.prefix, 'platbase': sys.prefix})
        sites = [paths['purelib'], paths['platlib']]
    for site in dict.fromkeys(sites):
        package = os.path.join(site, 'openmm')
        if os.path.isfile(os.path.join(package, '__init__.py')):
            return _describe(package)
    return None


def _build_env_openmm():
    """The OpenMM importable in the (isolated) build environment, fetched by get_requires_for_build_wheel."""
    import importlib.util
    spec = importlib.util.find_spec('openmm')
    if spec is None or not spec.submodule_search_locations:
        return None
    return _describe(list(spec.submodule_search_locations)[0])


def _target():
    """The OpenMM this build compiles against: OPENMM_DIR if set, else the target environment's,
    else the build environment's."""
    found = installed_openmm() or _build_env_openmm()
    if os.environ.get('OPENMM_DIR'):
        found = dict(found or {'version': None, 'pip_metadata': False, 'site': None}, dir=os.environ['OPENMM_DIR'])
    return found


def _swig_requirement(found):
    """SWIG as OpenMM's own Python wrappers were generated with: the module shares SWIG's type table
    with openmm's, which has another layout from SWIG 4.4 on (swig_runtime_data5; OpenMM 8.2 and 8.3
    on PyPI used 4.2 and 4.3, 8.4 used 4.4, 8.6 4.5). The same minor series is the safe choice."""
    version = None
    if found and found.get('site'):
        try:
            with open(os.path.join(found['site'], 'openmm', 'openmm.py')) as f:
                version = re.search(r'^# Version (\d+)\.(\d+)', f.read(4000), re.M)
        except OSError:
            pass
    if version:
        major, minor = int(version.group(1)), int(version.group(2))
        return 'swig>=%d.%d,<%d.%d' % (major, minor, major, minor + 1)
    return DEFAULT_SWIG_REQUIREMENT


def _series(version):
    match = re.match(r'(\d+)\.(\d+)', version or '')
    return (int(match.group(1)), int(match.group(2))) if match else None


def _requirement_lines(found):
    """Replacement Requires-Dist lines for openmm and openmm-cuda-13: the compiled-against series,
    or nothing for an OpenMM that pip does not know of."""
    if found is None:
        return None
    if not found['pip_metadata']:
        return []
    series = _series(found['version'])
    if series is None:
        return None
    pin = '>=%d.%d,<%d.%d' % (series[0], series[1], series[0], series[1] + 1)
    cuda = 'openmm-cuda-13' if series >= FIRST_CUDA_13 else 'openmm-cuda-12'
    return ['Requires-Dist: openmm%s' % pin, 'Requires-Dist: %s%s; extra == "cuda"' % (cuda, pin)]


def _rewrite_metadata(text, found):
    lines = _requirement_lines(found)
    if lines is None:
        return text
    kept = [line for line in text.split('\n') if not re.match(r'Requires-Dist:\s*openmm(-cuda-1[0-9])?\s*[<>=!~;]', line, re.I)]
    # Requires-Dist lines belong to the headers, before the blank line that starts the description.
    end = kept.index('') if '' in kept else len(kept)
    return '\n'.join(kept[:end] + lines + kept[end:])


def _config_settings(config_settings, found):
    settings = dict(config_settings or {})
    if found and found.get('dir') and not any(key.endswith('OPENMM_DIR') for key in settings):
        settings['cmake.define.OPENMM_DIR'] = found['dir']
    return settings


def _record_hash(data):
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()


def _rewrite_wheel(path, found):
    """Rewrite METADATA (and its RECORD line) inside a built wheel."""
    with zipfile.ZipFile(path) as wheel:
        items = [(info, wheel.read(info.filename)) for info in wheel.infolist()]
    metadata_name = next(info.filename for info, _ in items if info.filename.endswith('.dist-info/METADATA'))
    record_name = metadata_name[:-len('METADATA')] + 'RECORD'
    contents = dict((info.filename, data) for info, data in items)
    metadata = _rewrite_metadata(contents[metadata_name].decode(), found).encode()
    if metadata == contents[metadata_name]:
        return
    record = []
    for line in contents[record_name].decode().splitlines():
        if line.startswith(metadata_name + ','):
            line = '%s,%s,%d' % (metadata_name, _record_hash(metadata), len(metadata))
        record.append(line)
    contents[metadata_name] = metadata
    contents[record_name] = ('\n'.join(record) + '\n').encode()
    tmp = path + '.tmp'
    with zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as wheel:
        for info, _ in items:
            wheel.writestr(info, contents[info.filename])
    os.replace(tmp, path)


# ---- PEP 517 hooks ----

def _extra_requires():
    found = installed_openmm()
    if found is None and not os.environ.get('OPENMM_DIR'):
        return [OPENMM_DEFAULT_REQUIREMENT, DEFAULT_SWIG_REQUIREMENT]
    return [_swig_requirement(found)]


def get_requires_for_build_wheel(config_settings=None):
    return list(_skbuild.get_requires_for_build_wheel(config_settings)) + _extra_requires()


def get_requires_for_build_editable(config_settings=None):
    return list(_skbuild.get_requires_for_build_editable(config_settings)) + _extra_requires()


def get_requires_for_build_sdist(config_settings=None):
    return _skbuild.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    found = _target()
    name = _skbuild.prepare_metadata_for_build_wheel(metadata_directory, _config_settings(config_settings, found))
    path = os.path.join(metadata_directory, name, 'METADATA')
    with open(path) as f:
        text = f.read()
    with open(path, 'w') as f:
        f.write(_rewrite_metadata(text, found))
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    found = _target()
    # Not metadata_directory: scikit-build-core would find our METADATA differs from its own; the
    # rewrite below makes the wheel's the same as the prepared one.
    name = _skbuild.build_wheel(wheel_directory, _config_settings(config_settings, found), None)
    _rewrite_wheel(os.path.join(wheel_directory, name), found)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    found = _target()
    name = _skbuild.build_editable(wheel_directory, _config_settings(config_settings, found), None)
    _rewrite_wheel(os.path.join(wheel_directory, name), found)
    return name


def build_sdist(sdist_directory, config_settings=None):
    return _skbuild.build_sdist(sdist_directory, config_settings)


if __name__ == '__main__':
    # `python backend/openmm_coordination_backend.py`: what a build here would compile against.
    print(installed_openmm() or 'no OpenMM installed: a build fetches %s' % OPENMM_DEFAULT_REQUIREMENT)
