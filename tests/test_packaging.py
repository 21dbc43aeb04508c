"""The installed distribution is complete: every file of the source package ships.

A file that the build leaves out (package data, ``py.typed``) passes every test run from the
source tree; this test compares the installed distribution's file list with the checkout's. It is
skipped when queuetheory is not installed (or installed in editable mode, whose file list does not
name the package files).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

import queuetheory

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "queuetheory"


def _distribution():
    try:
        dist = importlib.metadata.distribution("queuetheory")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("queuetheory is not installed (pip install .)")
    direct = dist.read_text("direct_url.json")
    if direct and json.loads(direct).get("dir_info", {}).get("editable"):
        pytest.skip("editable install: the package files are the checkout's")
    return dist


def test_installed_distribution_ships_every_package_file():
    if not SOURCE.is_dir():
        pytest.skip("no source checkout next to the tests")
    dist = _distribution()
    shipped = {str(f) for f in dist.files or ()}
    expected = {f.relative_to(ROOT).as_posix() for f in SOURCE.rglob("*")
                if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"}
    missing = sorted(expected - shipped)
    assert not missing, (f"files of queuetheory/ missing from the installed distribution "
                         f"(or the install is older than the checkout: pip install .): {missing}")
    assert "queuetheory/py.typed" in shipped, "the type hints are not marked (PEP 561)"


def test_version_is_single_sourced():
    assert _distribution().version == queuetheory.__version__
