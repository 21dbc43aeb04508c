"""Execute every notebook in notebooks/: each claim there is an ``assert`` that fails the run.

The notebooks run in a fresh ``python3`` kernel whose working directory is a temporary
directory (so nothing is written to the repository) and import the same queuetheory as these
tests (the installed package under ``.ci/run``, else this checkout). They take minutes, so they
carry the ``notebooks`` marker: the default run deselects them, ``python -m pytest -m notebooks``
(and CI) runs them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import queuetheory

nbformat = pytest.importorskip(
    "nbformat", reason='notebook tests need nbformat: pip install "queuetheory[notebooks]"')
nbclient = pytest.importorskip(
    "nbclient", reason='notebook tests need nbclient: pip install "queuetheory[notebooks]"')
pytest.importorskip(
    "ipykernel", reason='notebook tests need ipykernel: pip install "queuetheory[notebooks]"')
pytest.importorskip(
    "matplotlib", reason='the notebooks draw figures: pip install "queuetheory[notebooks]"')

ROOT = Path(__file__).resolve().parents[1]
#: The directory holding the queuetheory package these tests import, for the kernel's sys.path.
PACKAGE_HOME = Path(queuetheory.__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Seconds any one cell may take (the heaviest cells take well under 30 s on 2 cores).
CELL_TIMEOUT = 300


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 5, f"expected the five claim notebooks in {ROOT / 'notebooks'}"


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_claims_hold(path, tmp_path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    sources = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "assert " in sources, f"{path.name} states no claim as an assertion"
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebooks save their figures in a temp dir
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(PACKAGE_HOME)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    before = sorted((ROOT / "notebooks").iterdir())
    client.execute()  # raises CellExecutionError (with the traceback) if any assertion fails
    outputs = [out for cell in notebook.cells if cell.cell_type == "code"
               for out in cell.get("outputs", [])]
    assert any("image/png" in out.get("data", {}) for out in outputs), \
        f"{path.name} shows no figure"
    assert sorted((ROOT / "notebooks").iterdir()) == before, "the run wrote into notebooks/"
