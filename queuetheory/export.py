"""Tables for terminals and papers: plain text and LaTeX (booktabs)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["format_value", "text_table", "latex_table"]


def format_value(value, digits: int = 6) -> str:
    """A table cell: ``inf``, ``n/a`` for a missing value, yes/NO for booleans, ``digits``
    significant digits for floats.

    Examples
    --------
    >>> from queuetheory.export import format_value
    >>> format_value(1.7776754), format_value(float("inf")), format_value(None), format_value(False)
    ('1.77768', 'inf', 'n/a', 'NO')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.{digits}g}"
    return str(value)


def text_table(rows: Sequence[Mapping], columns: Sequence[str], digits: int = 6) -> str:
    """An aligned plain-text table of ``rows`` (mappings) restricted to ``columns``.

    Examples
    --------
    >>> from queuetheory.export import text_table
    >>> print(text_table([{"policy": "RIQ(d=2)", "mean": 1.5}], ["policy", "mean"]))
    policy    mean
    --------  ----
    RIQ(d=2)  1.5
    """
    cells = [[format_value(r.get(c), digits) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _latex_cell(value, digits: int) -> str:
    if isinstance(value, float) and math.isinf(value):
        return r"$\infty$"
    return _latex_escape(format_value(value, digits))


def latex_table(rows: Sequence[Mapping], columns: Sequence[str], *,
                headers: Sequence[str] | None = None, caption: str | None = None,
                label: str | None = None, digits: int = 4) -> str:
    """A LaTeX ``table`` with ``booktabs`` rules (``\\toprule``, ``\\midrule``,
    ``\\bottomrule``); numbers right-aligned, text left-aligned.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per row.
    columns : sequence of str
        Keys to show, in order.
    headers : sequence of str, optional
        Column headings (LaTeX allowed, not escaped); default the escaped keys.
    caption, label : str, optional
        ``\\caption`` and ``\\label`` of the table.
    digits : int
        Significant digits of floats.

    Examples
    --------
    >>> from queuetheory.export import latex_table
    >>> print(latex_table([{"policy": "RIQ(d=2)", "mean": 1.5}], ["policy", "mean"]))
    \\begin{table}[htbp]
    \\centering
    \\begin{tabular}{lr}
    \\toprule
    policy & mean \\\\
    \\midrule
    RIQ(d=2) & 1.5 \\\\
    \\bottomrule
    \\end{tabular}
    \\end{table}
    """
    numeric = [all(isinstance(r.get(c), int | float) and not isinstance(r.get(c), bool)
                   for r in rows if r.get(c) is not None) for c in columns]
    spec = "".join("r" if n else "l" for n in numeric)
    head = list(headers) if headers is not None else [_latex_escape(c) for c in columns]
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(head) + r" \\",
              r"\midrule"]
    lines += [" & ".join(_latex_cell(r.get(c), digits) for c in columns) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)
