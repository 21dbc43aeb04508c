"""Shared fixtures for the core tests: the Facebook (Dolly) S&X set-up of docs/theory/riq.rst,
"Worked example"; and the collection rules of the suite.

* Doctests that draw (they import matplotlib) are skipped when matplotlib is not installed
  (whenever tests/ is collected too, as in the default run and in CI).
* With ``QUEUETHEORY_TEST_INSTALLED=1`` (set by ``.ci/run``) the suite refuses to run against the
  source tree: the tests must import the installed package, so that a file missing from the
  distribution (package data, ``py.typed``) fails them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import mpmath
import pytest

import queuetheory as qt
from queuetheory.analysis import removal

ROOT = Path(__file__).resolve().parents[1]

SLOW_WITHOUT_NUMBA = [pytest.mark.slow] if removal.numba is None else []
"""The marks of a check of about 4 to 27 s without numba (under 2 s to 8 s with it): slow
without numba, out of the default run of a plain install, which must stay within 5 minutes on
2 cores (340 s in CI on a slow day, 279 s on a quiet one before these moved); with numba the
default run keeps them, and CI runs it (the numpy marches are compared with the compiled ones
elsewhere: ``test_sx_compiled_march_is_the_numpy_march``,
``test_many_parities_on_the_numpy_march_are_replication``)."""


def slow_without_numba(test):
    """``test`` with the marks of :data:`SLOW_WITHOUT_NUMBA`."""
    for mark in SLOW_WITHOUT_NUMBA:
        test = mark(test)
    return test


if os.environ.get("QUEUETHEORY_TEST_INSTALLED") == "1":
    _imported = Path(qt.__file__).resolve().parent
    if _imported.is_relative_to(ROOT):
        raise pytest.UsageError(
            f"QUEUETHEORY_TEST_INSTALLED=1 but queuetheory was imported from the source tree "
            f"({_imported}): run pytest from a directory where the checkout is not importable")


def pytest_collection_modifyitems(config, items):
    """Skip the doctests that draw when matplotlib is absent (the ``plot`` extra is optional)."""
    if importlib.util.find_spec("matplotlib") is not None:
        return
    skip = pytest.mark.skip(reason='matplotlib is not installed: pip install "queuetheory[plot]"')
    for item in items:
        examples = getattr(getattr(item, "dtest", None), "examples", ())
        if any("matplotlib" in example.source for example in examples):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _mpmath_precision():
    """Restore mpmath's global precision after every test: a test that sets ``mp.dps`` and
    does not restore it changes what later doctests print (``sympy.nsolve`` at 50 digits)."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


def reference_script(name: str):
    """A reference script of ``scripts/`` as a module (they need no queuetheory), registered
    in ``sys.modules`` under its name: numba's cache of its compiled functions (``cache=True``)
    imports the module by name when another process loads them (unregistered, the cache
    recorded ``<dynamic>``, and a second pytest process, or an xdist worker after another had
    compiled them, failed with ``ModuleNotFoundError: No module named '<dynamic>'``)."""
    import sys

    folder = Path(__file__).resolve().parents[1] / "scripts"
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def batch_tasks(policy) -> int:
    """Tasks per batch: ``n + m`` coded jobs (MDS) or ``n d`` copies (replication)."""
    return policy.n + policy.m if isinstance(policy, qt.MDS) else policy.n * policy.d


#: Facebook slowdowns, typed in from the published table (Ananthanarayanan et al., NSDI 2013,
#: as used by Gardner et al., IEEE/ACM ToN 25(6) 2017; docs/theory/model.rst), independently of
#: ``qt.slowdowns.facebook`` so that the two can be compared.
FACEBOOK_VALUES = tuple(range(1, 13))
FACEBOOK_PROBS = (0.23, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002)


@pytest.fixture
def facebook_s():
    """The Facebook slowdown distribution S (values 1..12)."""
    return qt.slowdowns.facebook()


@pytest.fixture
def facebook_sx(facebook_s):
    """S&X runtime with exponential X and E[X] E[S] = 1 (docs/theory/riq.rst, "Worked example")."""
    return qt.SX(X=qt.Exponential(rate=facebook_s.mean()), S=facebook_s)


@pytest.fixture
def mp30():
    """Run the test body with mpmath at 30 significant digits, restoring the precision after."""
    with mpmath.workdps(30):
        yield
