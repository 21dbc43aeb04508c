"""The compiled kernels' on-disk cache is keyed on every source file of the package."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import queuetheory as qt
from queuetheory import _jit


def test_package_stamp_hashes_every_source_file():
    # an independent hash of the package's .py files (relative path, bytes) in sorted order
    root = Path(qt.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes()
                      + b"\0")
    assert _jit.package_stamp() == digest.hexdigest()
    assert (root / "analysis" / "removal_continuous.py") in set(root.rglob("*.py"))


def test_compiled_kernels_are_stamped_with_the_package():
    # numba's own stamp (the function's file) and the package's, for the kernels of the
    # removal analysis (one inlines another module's) and of the simulator
    pytest.importorskip("numba")
    from queuetheory.analysis import removal, removal_continuous
    from queuetheory.simulation import compiled

    for kernel in (removal._batch_sf_compiled, removal_continuous._mix_sf, compiled._lindley):
        stamp = kernel._cache._impl.locator.get_source_stamp()
        assert stamp[1] == _jit.package_stamp()


def test_numba_before_0_62_and_replaced_locators(monkeypatch):
    # numba 0.58 to 0.61 name the locators with a leading underscore (and 0.58, 0.60 have no
    # zip locator): stamped all the same; NUMBA_CACHE_LOCATOR_CLASSES makes numba use its own
    # locators, unstamped: then uncached (compiled in each process) rather than stale
    pytest.importorskip("numba")
    from numba.core import caching, config

    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, name) for name in names]
    for name, base in zip(names, bases):
        monkeypatch.setattr(caching, "_" + name, base, raising=False)
        monkeypatch.delattr(caching, name)
    monkeypatch.delattr(caching, "ZipCacheLocator", raising=False)
    monkeypatch.delattr(caching, "_ZipCacheLocator", raising=False)
    _jit._cache_class.cache_clear()
    try:
        cache = _jit._cache_class()
        assert [cls.__mro__[1] for cls in cache._impl_class._locator_classes] == bases
        monkeypatch.setattr(config, "CACHE_LOCATOR_CLASSES", "InTreeCacheLocator",
                            raising=False)
        _jit._cache_class.cache_clear()
        assert _jit._cache_class() is None
    finally:
        monkeypatch.undo()
        _jit._cache_class.cache_clear()
    assert _jit._cache_class() is not None


@pytest.mark.slow   # three processes that import numba, two compiles: about 10 s
def test_a_change_to_another_module_compiles_again(tmp_path):
    # numba alone keys a cached function on its own file: a kernel inlining a function of
    # another module kept its machine code when only that module changed (the S&X march's
    # P(C > t) ran a replaced form from removal_continuous's cache). A copy of the package:
    # compiled and saved, then loaded, then compiled again once another module changes
    pytest.importorskip("numba")
    copy = tmp_path / "qtcopy"
    shutil.copytree(Path(qt.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import numpy as np\n"
            "from qtcopy.analysis import removal_continuous as rc\n"
            "rc._mix_sf(np.full((2, 3), 0.5), np.full(3, 1 / 3), False, 2, 2, np.ones(1))\n")
    env = dict(os.environ, NUMBA_DEBUG_CACHE="1", PYTHONPATH=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)

    def run() -> str:
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True).stdout
        return "\n".join(line for line in out.splitlines() if "_mix_sf" in line)

    assert "data saved" in run()
    assert "data loaded" in run()
    with open(copy / "analysis" / "removal.py", "a") as module:
        module.write("\n# another module changed\n")
    again = run()
    assert "data saved" in again and "data loaded" not in again
