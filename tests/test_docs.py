"""The Sphinx documentation builds without a warning (``sphinx-build -W``), offline.

Marked ``docs``: the default run deselects it; ``python -m pytest -m docs`` (and CI) runs it. It
needs the ``docs`` extra (``pip install ".[docs]"``) and is skipped without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.docs


def test_docs_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "myst_nb"):
        pytest.importorskip(module, reason='the docs need the docs extra: pip install ".[docs]"')
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    html = tmp_path / "html"
    for page in ("index", "getting_started", "theory/riq", "theory/redundancy", "theory/batch",
                 "theory/validity", "api/generated/queuetheory"):
        assert (html / f"{page}.html").is_file(), f"docs page {page} was not built"
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    rendered = sorted(p.stem for p in (html / "notebooks").glob("*.html"))
    assert rendered == notebooks, "every notebook is rendered in the docs"
