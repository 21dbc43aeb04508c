"""numba's ``njit`` with its on-disk cache keyed on every source file of the package.

numba keys a cached function on its own source file only (its documentation: "Cache
invalidation fails to recognize changes in functions defined in a different file"). A kernel
that inlines or calls a function of another module kept its compiled code where only that
module changed: in an edited checkout, and after an upgrade, whose leftover
``__pycache__/*.nbi`` pip does not remove (the S&X march's ``P(C > t)`` went on running the
replaced form of :func:`.analysis.removal._batch_sf_many` from ``removal_continuous``'s cache).
Here each compiled function's stamp is numba's and a hash of every ``.py`` file of the
package, so any change to the package compiles again. Where numba's cache machinery is not
what this expects (a version other than 0.58 to 0.68, or ``NUMBA_CACHE_LOCATOR_CLASSES``
set), the functions compile in each process instead, uncached.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path


@functools.lru_cache(maxsize=1)
def package_stamp() -> str:
    """SHA-256 of the package's ``.py`` files, their paths relative to it and their bytes,
    in sorted order.

    Examples
    --------
    >>> len(package_stamp())
    64
    """
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root)
        if any(part.startswith(".") for part in name.parts):
            continue   # an editor's lock or backup file (may be a dangling link)
        digest.update(name.as_posix().encode())
        digest.update(b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"unreadable")
        digest.update(b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _cache_class():
    """numba's ``FunctionCache`` whose locators add :func:`package_stamp` to the source stamp
    (the locators numba tries, in its order: named with a leading underscore before numba
    0.62), or ``None`` where its internals differ or ``NUMBA_CACHE_LOCATOR_CLASSES`` replaces
    them (numba would then use its own, unstamped)."""
    try:
        from numba.core import caching, config

        if getattr(config, "CACHE_LOCATOR_CLASSES", None):
            return None

        def stamped(base):
            class Locator(base):
                def get_source_stamp(self):
                    return super().get_source_stamp(), package_stamp()

            Locator.__name__ = Locator.__qualname__ = f"Stamped{base.__name__}"
            return Locator

        def named(name):
            return getattr(caching, name, None) or getattr(caching, "_" + name, None)

        required = [named(name) for name in ("UserProvidedCacheLocator", "InTreeCacheLocator",
                                             "UserWideCacheLocator")]
        if any(base is None for base in required):
            return None
        zipped = named("ZipCacheLocator")   # from numba 0.61

        class Impl(caching.CompileResultCacheImpl):
            _locator_classes = [stamped(base) for base in required
                                + ([] if zipped is None else [zipped])]

        class Cache(caching.FunctionCache):
            _impl_class = Impl

        return Cache
    except (ImportError, AttributeError, TypeError):
        return None


def njit(**options) -> Callable:
    """``numba.njit(**options)`` cached on disk under :func:`package_stamp` (module
    docstring); uncached where that cannot be set up. Without numba, the function itself
    (the kernels then run as plain Python).

    Examples
    --------
    >>> import pytest
    >>> numba = pytest.importorskip("numba")
    >>> twice = njit(nogil=True)(lambda x: 2.0 * x)
    >>> twice(1.5)
    3.0
    """
    try:
        import numba
    except ImportError:
        return lambda function: function

    def decorate(function):
        dispatcher = numba.njit(**options)(function)
        cache = _cache_class()
        if cache is not None:
            try:
                dispatcher._cache = cache(function)
            except (RuntimeError, OSError, AttributeError, TypeError):
                pass   # no locator for the function (e.g. a lambda in a doctest): uncached
        return dispatcher

    return decorate
