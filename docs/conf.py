"""Sphinx configuration: API reference from the numpydoc docstrings, theory pages, notebooks.

The build is offline and deterministic: the notebooks are rendered as stored (no execution) and the
API pages are generated from ``queuetheory.__all__`` at every build, so a new public name is
documented without editing this folder.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if not any(Path(p).resolve() == ROOT for p in sys.path if p):
    # Document the checkout this folder belongs to, installed or not.
    sys.path.insert(0, str(ROOT))

import queuetheory  # noqa: E402

project = "queuetheory"
author = "queuetheory developers"
copyright = "queuetheory developers, BSD-3-Clause"
release = queuetheory.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
root_doc = "index"
nitpicky = False
# numpydoc keeps a References section whose entries the text does not cite: not a defect.
suppress_warnings = ["ref.citation"]
math_number_all = False
math_eqref_format = "({number})"
numfig = True

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc renders the Parameters sections; no duplicate signatures
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = False

# Offline: no intersphinx inventories are fetched (intersphinx_mapping stays empty).
intersphinx_mapping: dict[str, tuple[str, None]] = {}

nb_execution_mode = "off"  # the notebooks are executed by the test suite, not by the docs build
myst_enable_extensions = ["dollarmath", "amsmath"]

html_theme = "alabaster"
html_static_path: list[str] = []
html_theme_options = {"description": "Latency of server farms with redundancy"}


def _copy_notebooks() -> None:
    """Render the notebooks of ``notebooks/`` (copied, so the docs tree stays self-contained)."""
    target = HERE / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copy2(path, target / path.name)


def _write_api_pages() -> None:
    """One page for the top-level names of ``queuetheory.__all__``, one per public submodule.

    A class or function re-exported at the top level is documented once, as ``queuetheory.Name``;
    the submodule pages list the rest of their members.
    """
    import inspect

    out = HERE / "api" / "generated"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = [n for n in queuetheory.__all__ if not n.startswith("_")]
    objects = {n: getattr(queuetheory, n) for n in names}
    modules = sorted(n for n, o in objects.items() if inspect.ismodule(o))
    top = [n for n in names if n not in modules]
    order = {"function": [], "class": []}
    for n in top:
        order["class" if inspect.isclass(objects[n]) else "function"].append(n)
    lines = ["The top-level namespace", "=======================", "",
             ".. currentmodule:: queuetheory", ""]
    for kind, title in (("function", "Functions"), ("class", "Classes")):
        lines += [title, "-" * len(title), ""]
        for n in sorted(order[kind], key=str.lower):
            lines += [f".. auto{kind}:: {n}", ""]
    (out / "queuetheory.rst").write_text("\n".join(lines), encoding="utf-8")
    for m in modules:
        title = f"``queuetheory.{m}``"
        excluded = ", ".join(sorted(n for n in top if getattr(objects[m], n, None) is objects[n]))
        body = [title, "=" * len(title), "", f".. automodule:: queuetheory.{m}",
                "   :members:", "   :member-order: bysource"]
        if excluded:
            body.append(f"   :exclude-members: {excluded}")
        (out / f"{m}.rst").write_text("\n".join(body) + "\n", encoding="utf-8")


_copy_notebooks()
_write_api_pages()
