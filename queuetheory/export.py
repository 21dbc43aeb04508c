"""Tables for terminals, papers and notebooks: plain text, LaTeX (booktabs), HTML and CSV.

Every table is built from rows (mappings) and the keys to show. A column may carry a
confidence interval: ``intervals={"mean": "mean_ci"}`` shows each row's ``mean_ci`` (a pair
``(low, high)``) beside its ``mean`` where the row has one; and an estimated error:
``errors={"mean": "mean_error"}`` shows a value whose error exceeds half a unit of its last
shown digit as ``value +- error``, rounded to the error's second significant digit (only the
digits that are right are shown). Numbers are written with a fixed number of significant
digits (trailing zeros kept, so a column's decimal points line up) and right-aligned; text is
left-aligned.

LaTeX output needs ``\\usepackage{booktabs}`` in the preamble. Formulas from
:mod:`queuetheory.symbolic` printed with ``sympy.latex`` may use ``amsmath`` and ``amssymb``
macros (e.g. ``\\operatorname``, ``\\mathbb``): add ``\\usepackage{amsmath,amssymb}``.
"""

from __future__ import annotations

import csv
import html
import io
import math
import numbers
import re
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["format_value", "shown", "text_table", "latex_table", "html_table", "csv_table",
           "flat_rows", "latex_text", "short_repr"]


def format_value(value, digits: int = 4, error: float | None = None) -> str:
    """A table cell: ``inf``, ``n/a`` for a missing value, yes/NO for booleans, ``digits``
    significant digits for floats (trailing zeros kept, so columns line up).

    With ``error`` (an estimated absolute error) larger than half a unit of the last of those
    digits, the value is written to the decimal place of the error's second significant digit,
    followed by ``+-`` and the error: a cell shows no digit its error does not support.

    Examples
    --------
    >>> from queuetheory.export import format_value
    >>> format_value(1.7776754), format_value(2.0), format_value(12345.6)
    ('1.778', '2.000', '1.235e+04')
    >>> format_value(float("inf")), format_value(None), format_value(False), format_value(3)
    ('inf', 'n/a', 'NO', '3')
    >>> format_value(1.7231, error=0.16), format_value(1.7231, error=1e-7)
    ('1.72 +- 0.16', '1.723')
    >>> format_value(12, error=0.2), format_value(12, error=3.0)
    ('12', '12.0 +- 3.0')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "NO"
    if isinstance(value, numbers.Integral) and (error is None or not error > 0.5):
        return str(int(value))   # exact, or within half a unit of its last digit
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if error is None or math.isnan(error) or error <= 0:
            return _significant(value, digits)
        if math.isinf(error):   # stated, but unbounded
            return f"{_significant(value, digits)} +- inf"
        if value != 0 and error <= 0.5 * 10.0 ** (math.floor(math.log10(abs(value)))
                                                  - digits + 1):
            return _significant(value, digits)
        stated = float(f"{error:.2g}")   # 0.0995 -> 0.10
        place = math.floor(math.log10(stated)) - 1   # its second digit
        rounded = round(value, -place)   # 9.9996 -> 10.000 at 1e-3
        if rounded == 0:
            value_text = "0" if place >= 0 else f"{0:.{-place}f}"
        else:
            count = max(1, math.floor(math.log10(abs(rounded))) - place + 1)
            value_text = _significant(rounded, count)
        return f"{value_text} +- {_significant(stated, 2)}"
    return str(value)


def shown(value: float, error: float | None = None, digits: int = 4) -> str:
    """``value`` in running text: ``digits`` significant digits without trailing zeros, or,
    where its estimated ``error`` exceeds half a unit of the last of them, the digits the error
    supports and the error (``value +- error``, as :func:`format_value`).

    Examples
    --------
    >>> from queuetheory.export import shown
    >>> shown(2.0), shown(16.139, 3.53), shown(1.5, 1e-9, digits=6)
    ('2', '16.1 +- 3.5', '1.5')
    """
    text = format_value(value, digits, error)
    return text if "+-" in text else f"{value:.{digits}g}"


def _significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros kept."""
    return f"{value:#.{digits}g}".rstrip(".").replace(".e", "e")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _numeric_columns(rows: Sequence[Mapping], columns: Sequence[str]) -> list[bool]:
    """A column is numeric (right-aligned) when any of its cells is a number."""
    return [any(_is_number(r.get(c)) for r in rows) for c in columns]


def _interval_of(row: Mapping, key: str | None):
    """The row's finite ``(low, high)`` under ``key``, else None."""
    if key is None:
        return None
    interval = row.get(key)
    if interval is None or len(interval) != 2 or interval[0] is None:
        return None
    low, high = (float(v) for v in interval)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def _error_of(row: Mapping, key: str | None) -> float | None:
    """The row's estimated absolute error under ``key`` (a number), else None."""
    error = row.get(key) if key is not None else None
    return float(error) if _is_number(error) else None


def _interval_text(interval, digits: int) -> str:
    low, high = interval
    return f"[{format_value(low, digits)}, {format_value(high, digits)}]"


def _decimal_aligned(cells: list[str]) -> list[str]:
    """Pad number cells so that their decimal points line up (in scientific notation the
    mantissa's; cells without a point, such as ``inf`` or integers, end where the points
    are)."""
    split = [cell.split(".", 1) if "." in cell else [cell, None] for cell in cells]
    whole = max(len(w) for w, _ in split)
    frac = max((len(f) + 1 for _, f in split if f is not None), default=0)
    return [w.rjust(whole) + ("." + f if f is not None else "").ljust(frac) for w, f in split]


def text_table(rows: Sequence[Mapping], columns: Sequence[str], digits: int = 4, *,
               headers: Sequence[str] | None = None,
               intervals: Mapping[str, str] | None = None,
               errors: Mapping[str, str] | None = None) -> str:
    """An aligned plain-text table of ``rows`` (mappings) restricted to ``columns``.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per row.
    columns : sequence of str
        Keys to show, in order.
    digits : int
        Significant digits of floats.
    headers : sequence of str, optional
        Column headings; default the keys.
    intervals : mapping of str to str, optional
        Column -> key of its ``(low, high)`` interval, shown as ``value [low, high]``.
    errors : mapping of str to str, optional
        Column -> key of its estimated absolute error, shown as ``value +- error`` where it
        exceeds half a unit of the last shown digit (:func:`format_value`).

    Examples
    --------
    >>> from queuetheory.export import text_table
    >>> rows = [{"policy": "RIQ(d=2)", "mean": 1.5},
    ...         {"policy": "simulated", "mean": 1.52, "mean_ci": (1.49, 1.55)}]
    >>> print(text_table(rows, ["policy", "mean"], intervals={"mean": "mean_ci"}))
    policy     mean
    ---------  --------------------
    RIQ(d=2)   1.500
    simulated  1.520 [1.490, 1.550]
    """
    intervals, errors = dict(intervals or {}), dict(errors or {})
    heads = list(headers) if headers is not None else list(columns)
    numeric = _numeric_columns(rows, columns)
    body: list[list[str]] = [[] for _ in rows]
    aligned: list[bool] = []
    for c, is_number in zip(columns, numeric):
        values = [format_value(r.get(c), digits, _error_of(r, errors.get(c))) for r in rows]
        if is_number:
            values = _decimal_aligned(values)
        cis = [_interval_of(r, intervals.get(c)) for r in rows]
        if any(cis):
            width = max(len(v) for v in values)
            values = [(v.rjust(width) + (" " + _interval_text(ci, digits) if ci else "")).rstrip()
                      for v, ci in zip(values, cis)]
            aligned.append(False)
        else:
            aligned.append(is_number)
        for cells, value in zip(body, values):
            cells.append(value)
    widths = [max([len(h)] + [len(cells[j]) for cells in body]) for j, h in enumerate(heads)]

    def line(cells):
        return "  ".join(v.rjust(w) if right else v.ljust(w)
                         for v, w, right in zip(cells, widths, aligned)).rstrip()

    return "\n".join([line(heads), "  ".join("-" * w for w in widths)]
                     + [line(cells) for cells in body])


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def latex_text(text: str) -> str:
    """Escape ``text`` for LaTeX, keeping ``$...$`` math as written.

    Examples
    --------
    >>> from queuetheory.export import latex_text
    >>> print(latex_text("p99 of $T$ at 50% load, d_max = $d$"))
    p99 of $T$ at 50\\% load, d\\_max = $d$
    """
    parts = re.split(r"(\$[^$]+\$)", text)
    return "".join(part if len(part) > 2 and part[0] == part[-1] == "$" else _latex_escape(part)
                   for part in parts)


def _latex_cell(value, digits: int, error: float | None = None) -> str:
    if _is_number(value) and math.isinf(value):
        return r"$\infty$" if value > 0 else r"$-\infty$"
    return _latex_escape(format_value(value, digits, error)).replace(" +- ", r" $\pm$ ")


def latex_table(rows: Sequence[Mapping], columns: Sequence[str], *,
                headers: Sequence[str] | None = None, caption: str | None = None,
                label: str | None = None, digits: int = 4,
                intervals: Mapping[str, str] | None = None,
                errors: Mapping[str, str] | None = None) -> str:
    """A LaTeX ``table`` with ``booktabs`` rules (``\\toprule``, ``\\midrule``,
    ``\\bottomrule``); numbers right-aligned, text left-aligned.

    Needs ``\\usepackage{booktabs}``.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per row.
    columns : sequence of str
        Keys to show, in order.
    headers : sequence of str, optional
        Column headings (LaTeX allowed, not escaped); default the escaped keys.
    caption : str, optional
        ``\\caption`` of the table: text is escaped, ``$...$`` math is kept as written.
    label : str, optional
        ``\\label`` of the table.
    digits : int
        Significant digits of floats.
    intervals : mapping of str to str, optional
        Column -> key of its ``(low, high)`` interval: such a column becomes two, the value
        (right-aligned) and the interval in brackets, under one heading.
    errors : mapping of str to str, optional
        Column -> key of its estimated absolute error, shown as ``value $\\pm$ error`` where
        it exceeds half a unit of the last shown digit (:func:`format_value`).

    Examples
    --------
    >>> from queuetheory.export import latex_table
    >>> print(latex_table([{"policy": "RIQ(d=2)", "mean": 1.5}], ["policy", "mean"],
    ...                   caption="Mean of $T$ at 50% load"))
    \\begin{table}[htbp]
    \\centering
    \\caption{Mean of $T$ at 50\\% load}
    \\begin{tabular}{lr}
    \\toprule
    policy & mean \\\\
    \\midrule
    RIQ(d=2) & 1.500 \\\\
    \\bottomrule
    \\end{tabular}
    \\end{table}
    """
    intervals, errors = dict(intervals or {}), dict(errors or {})
    numeric = _numeric_columns(rows, columns)
    head = list(headers) if headers is not None else [_latex_escape(c) for c in columns]
    spec, heads = "", []
    cells: list[list[str]] = [[] for _ in rows]
    for c, h, is_number in zip(columns, head, numeric):
        cis = [_interval_of(r, intervals.get(c)) for r in rows]
        values = [_latex_cell(r.get(c), digits, _error_of(r, errors.get(c))) for r in rows]
        if any(cis):
            spec += "rl"
            heads.append(rf"\multicolumn{{2}}{{c}}{{{h}}}")
            for out, value, ci in zip(cells, values, cis):
                out += [value, _interval_text(ci, digits) if ci else ""]
        else:
            spec += "r" if is_number else "l"
            heads.append(h)
            for out, value in zip(cells, values):
                out.append(value)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_text(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(heads) + r" \\",
              r"\midrule"]
    lines += [" & ".join(out) + r" \\" for out in cells]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def html_table(rows: Sequence[Mapping], columns: Sequence[str], *,
               headers: Sequence[str] | None = None, caption: str | None = None,
               digits: int = 4, intervals: Mapping[str, str] | None = None,
               errors: Mapping[str, str] | None = None) -> str:
    """An HTML ``<table>`` (what Jupyter shows): numbers right-aligned, intervals small, a
    value with an error beyond its last shown digit as ``value ± error``
    (:func:`format_value`).

    Examples
    --------
    >>> from queuetheory.export import html_table
    >>> print(html_table([{"policy": "RIQ", "mean": 1.5}], ["policy", "mean"]))
    <table>
    <thead><tr><th style="text-align:left">policy</th><th style="text-align:right">mean</th></tr></thead>
    <tbody>
    <tr><td style="text-align:left">RIQ</td><td style="text-align:right">1.500</td></tr>
    </tbody>
    </table>
    """  # noqa: E501
    intervals, errors = dict(intervals or {}), dict(errors or {})
    numeric = _numeric_columns(rows, columns)
    heads = list(headers) if headers is not None else list(columns)
    align = ['style="text-align:right"' if n else 'style="text-align:left"' for n in numeric]
    lines = ["<table>"]
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines.append("<thead><tr>" + "".join(f"<th {a}>{html.escape(h)}</th>"
                                         for h, a in zip(heads, align)) + "</tr></thead>")
    lines.append("<tbody>")
    for r in rows:
        cells = []
        for c, a in zip(columns, align):
            text = html.escape(format_value(r.get(c), digits, _error_of(r, errors.get(c))))
            text = text.replace(" +- ", " &plusmn; ")
            ci = _interval_of(r, intervals.get(c))
            if ci:
                text += f" <small>{html.escape(_interval_text(ci, digits))}</small>"
            cells.append(f"<td {a}>{text}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def flat_rows(rows: Sequence[Mapping]) -> list[dict]:
    """Rows with every pair value ``key: (low, high)`` split into ``key_low`` and ``key_high``
    (for CSV and data frames); other values unchanged.

    Examples
    --------
    >>> from queuetheory.export import flat_rows
    >>> flat_rows([{"mean": 1.5, "mean_ci": (1.4, 1.6)}])
    [{'mean': 1.5, 'mean_ci_low': 1.4, 'mean_ci_high': 1.6}]
    """
    out = []
    for r in rows:
        flat = {}
        for key, value in r.items():
            if isinstance(value, tuple | list) and len(value) == 2:
                flat[f"{key}_low"], flat[f"{key}_high"] = value
            else:
                flat[key] = value
        out.append(flat)
    return out


def csv_table(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> str:
    """CSV text of ``rows`` at full precision (intervals split by :func:`flat_rows`; missing
    values empty, infinities ``inf``). ``columns`` default: every key, in order of appearance.

    Examples
    --------
    >>> from queuetheory.export import csv_table
    >>> print(csv_table([{"policy": "RIQ", "mean": 1.5, "mean_ci": (1.4, 1.6)}]), end="")
    policy,mean,mean_ci_low,mean_ci_high
    RIQ,1.5,1.4,1.6
    """
    flat = flat_rows(rows)
    if columns is None:
        columns = list(dict.fromkeys(key for r in flat for key in r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for r in flat:
        writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buffer.getvalue()


def short_repr(obj) -> str:
    """``repr(obj)`` for prose: floats at 4 significant digits, long discrete laws summarised.

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.export import short_repr
    >>> S = qt.slowdowns.facebook()
    >>> short_repr(qt.SX(qt.Exponential(1 / 0.213174163), S))
    'SX(X=Exponential(rate=4.691), S=Discrete(12 values in [1, 12], mean 4.691))'
    """
    values = getattr(obj, "values", None)
    if values is not None and getattr(obj, "probs", None) is not None and len(values) > 4:
        return (f"Discrete({len(values)} values in [{values[0]:.4g}, {values[-1]:.4g}], "
                f"mean {obj.mean():.4g})")
    parts = {name: getattr(obj, name) for name in ("X", "S", "R") if hasattr(obj, name)}
    if parts and type(obj).__name__ in ("SX", "IR"):
        inner = ", ".join(f"{name}={short_repr(law)}" for name, law in parts.items())
        return f"{type(obj).__name__}({inner})"
    return re.sub(r"-?\d+\.\d+(?:e[+-]?\d+)?", lambda m: f"{float(m.group()):.4g}", repr(obj))

