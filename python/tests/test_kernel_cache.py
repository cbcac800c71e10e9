"""benchmarks/kernel_cache.sh, which carries OpenMM's kernel cache between device calls
(gpu_suite.sh): unpack resets the modules' access times and writes the stamp; pack keeps the
modules read or compiled since the stamp first, then the newest others, within the limit, and
what it writes unpacks to the same bytes. Fake modules of random bytes (they pack to about their
size); needs bash, tar and xz or gzip, not OpenMM."""

import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'benchmarks', 'kernel_cache.sh')
MODULE_BYTES = 60000


def run(*args):
    return subprocess.run(['bash', SCRIPT] + [str(a) for a in args], capture_output=True, text=True)


def make_modules(folder, count, seed):
    """count modules of random bytes, module i modified at 1,000,000 + 1,000 i s (i = count - 1 the newest)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    contents = {}
    for i in range(count):
        name = 'module%02d_90_64' % i
        contents[name] = rng.integers(0, 256, MODULE_BYTES, dtype=np.uint8).tobytes()
        (folder / name).write_bytes(contents[name])
        os.utime(folder / name, (1000000 + 1000*i, 1000000 + 1000*i))
    return contents


def unpacked(parts, folder, stamp):
    """Unpack; return the modules' contents and their access times as unpack left them (reading
    them here sets those again: they are put back)."""
    result = run('unpack', folder, parts, stamp)
    assert result.returncode == 0, result.stderr
    times = {path.name: (path.stat().st_atime, path.stat().st_mtime) for path in folder.iterdir()}
    contents = {path.name: path.read_bytes() for path in folder.iterdir()}
    for name, (atime, mtime) in times.items():
        os.utime(folder / name, (atime, mtime))
    return contents, {name: atime for name, (atime, _) in times.items()}


def test_round_trip_and_stamp(tmp_path):
    contents = make_modules(tmp_path / 'cache', 12, 1)
    result = run('pack', tmp_path / 'cache', tmp_path / 'parts', tmp_path / 'none', 10000000)
    assert result.returncode == 0, result.stderr
    assert 'kernel cache: 12 of 12 modules kept (0 read or compiled in this call)' in result.stdout
    parts = sorted((tmp_path / 'parts').glob('kernel-cache.part-*'))
    packed = sum(p.stat().st_size for p in parts)
    assert '%d bytes packed' % packed in result.stdout
    restored, atimes = unpacked(tmp_path / 'parts', tmp_path / 'restored', tmp_path / 'stamp')
    assert restored == contents
    # every module's access time reset; the stamp holds the parts' bytes and the modules' count
    assert atimes == {name: 0 for name in contents}
    assert (tmp_path / 'stamp').read_text().split() == [str(packed), '12']


def test_used_modules_first_then_the_newest_within_the_limit(tmp_path):
    make_modules(tmp_path / 'first', 30, 2)
    assert run('pack', tmp_path / 'first', tmp_path / 'carried', tmp_path / 'none', 10000000).returncode == 0
    cache = tmp_path / 'cache'
    contents, _ = unpacked(tmp_path / 'carried', cache, tmp_path / 'stamp')
    stamp = (tmp_path / 'stamp').stat().st_mtime
    # Three old modules read (their access time after the stamp, as OpenMM's read sets it) and two compiled.
    used = ['module03_90_64', 'module07_90_64', 'module11_90_64']
    for name in used:
        os.utime(cache / name, (stamp + 10, os.stat(cache / name).st_mtime))
    compiled = make_modules(tmp_path / 'new', 2, 3)
    for name, data in compiled.items():
        target = 'new_' + name
        (cache / target).write_bytes(data)
        os.utime(cache / target, (stamp + 20, stamp + 20))
        used.append(target)
        contents[target] = data
    limit = 1000000
    result = run('pack', cache, tmp_path / 'out', tmp_path / 'stamp', limit)
    assert result.returncode == 0, result.stderr
    assert '(5 read or compiled in this call)' in result.stdout
    packed = sum(p.stat().st_size for p in (tmp_path / 'out').glob('kernel-cache.part-*'))
    assert packed <= limit
    kept, _ = unpacked(tmp_path / 'out', tmp_path / 'kept', tmp_path / 'stamp2')
    assert all(kept[name] == contents[name] for name in kept)
    assert set(used) <= set(kept)
    # the others kept are the newest: modules 29, 28, ... (the read ones aside)
    others = sorted((name for name in kept if name not in used), reverse=True)
    expected = [name for name in sorted(contents, reverse=True) if name not in used and not name.startswith('new_')]
    assert others == expected[:len(others)]
    # not far below the limit: 60 kB modules against 1 MB
    assert len(kept) >= 12
    assert 'kernel cache: %d of 32 modules kept' % len(kept) in result.stdout


def test_the_limit_environment_variable_and_a_bad_limit(tmp_path):
    make_modules(tmp_path / 'cache', 25, 4)
    env = dict(os.environ, KERNEL_CACHE_LIMIT='1000000')
    result = subprocess.run(['bash', SCRIPT, 'pack', tmp_path / 'cache', tmp_path / 'out', tmp_path / 'none'],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert '(limit 1000000)' in result.stdout
    assert sum(p.stat().st_size for p in (tmp_path / 'out').glob('kernel-cache.part-*')) <= 1000000
    for bad in ('12x', '5'):
        result = run('pack', tmp_path / 'cache', tmp_path / 'out', tmp_path / 'none', bad)
        assert result.returncode == 2
        assert "the limit must be a number of bytes >= 1000000, not '%s'" % bad in result.stderr


@pytest.mark.parametrize('args', [[], ['unpack', 'a'], ['pack', 'a', 'b'], ['copy', 'a', 'b', 'c']])
def test_usage(args):
    result = run(*args)
    assert result.returncode == 2
    assert 'usage:' in result.stderr
