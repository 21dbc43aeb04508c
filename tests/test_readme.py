"""The README's example runs as written and prints the documented numbers."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _block(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_and_matches_reference_sheet():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_block("Example"), "README.md", "exec"), {})
    first = out.getvalue().splitlines()[0].split()
    mean, p99, busy = map(float, first)
    # docs/theory/riq.rst, "Worked example" (eqs. riq-fixed-point, riq-mean, riq-lst; re-derived
    # by hand in test_riq.py, checked by simulation in test_simulation.py): b = 0.732885,
    # E[T] = 1.777675, T_99 = 10.6456 for Facebook S, exponential X with E[X]E[S] = 1, lam = 0.7,
    # d = 3.
    assert round(mean, 6) == 1.777675
    assert round(p99, 4) == 10.6456
    assert round(busy, 6) == 0.732885
