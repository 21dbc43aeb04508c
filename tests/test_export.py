"""Tests of queuetheory.export: text, LaTeX (booktabs), HTML and CSV tables."""

import csv
import io
import math

import numpy as np
import pytest

from queuetheory.export import (
    csv_table,
    flat_rows,
    format_value,
    html_table,
    latex_table,
    latex_text,
    text_table,
)


def test_format_value_special_cases():
    assert format_value(math.inf) == "inf"
    assert format_value(-math.inf) == "-inf"
    assert format_value(None) == "n/a"
    assert format_value(True) == "yes"
    assert format_value(np.bool_(False)) == "NO"
    assert format_value(1 / 3, digits=3) == "0.333"
    assert format_value(np.int64(7)) == "7"


@pytest.mark.parametrize("value, text", [
    (2.0, "2.000"), (1.5, "1.500"), (10.0, "10.00"), (0.001, "0.001000"), (1234.0, "1234"),
    (12345.6, "1.235e+04"), (np.float64(0.7), "0.7000"), (1e-300, "1.000e-300"),
])
def test_format_value_keeps_trailing_zeros(value, text):
    assert format_value(value, digits=4) == text


def test_text_table_aligns_decimal_points():
    rows = [{"a": "x", "b": 1.0}, {"a": "longer", "b": math.inf}, {"a": "y", "b": 22.5},
            {"a": "z", "b": 0.09875}]
    lines = text_table(rows, ["a", "b"]).splitlines()
    assert lines[0].split() == ["a", "b"]
    assert lines[3].split() == ["longer", "inf"]
    points = {line.index(".") for line in (lines[2], lines[4], lines[5])}
    assert len(points) == 1
    assert lines[3].index("inf") + 3 == points.pop()  # inf ends where the points are
    assert lines[4].rstrip().endswith("22.50") and lines[5].endswith("0.09875")


def test_text_table_intervals_line_up():
    rows = [{"p": "analysis", "m": 1.5}, {"p": "simulation", "m": 1.52, "m_ci": (1.49, 1.55)},
            {"p": "unstable", "m": math.inf, "m_ci": (math.inf, math.inf)}]
    lines = text_table(rows, ["p", "m"], intervals={"m": "m_ci"}).splitlines()
    assert lines[3].endswith("1.520 [1.490, 1.550]")
    assert lines[2].endswith("1.500") and lines[4].endswith("inf")
    assert len({line.index(".5") for line in lines[2:4]}) == 1


def test_latex_table_is_booktabs_and_escapes():
    rows = [{"policy": "RIQ_3 & co", "mean": 1.5, "p99": math.inf}]
    tex = latex_table(rows, ["policy", "mean", "p99"], caption="50% load", label="tab:x")
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "RIQ\\_3 \\& co" in tex
    assert "$\\infty$" in tex
    assert "\\caption{50\\% load}" in tex and "\\label{tab:x}" in tex
    assert "\\begin{tabular}{lrr}" in tex


def test_latex_caption_keeps_math():
    assert latex_text("$p_{99}$ of $T$, 50% & more") == r"$p_{99}$ of $T$, 50\% \& more"
    assert latex_text("costs $5") == r"costs \$5"
    tex = latex_table([{"v": 1.0}], ["v"], caption=r"$E[T]$ against $\lambda$")
    assert r"\caption{$E[T]$ against $\lambda$}" in tex


def test_latex_numbers_right_aligned_beside_words():
    # a column with a word in one row and numbers in the others (as ValidationReport has) is
    # still a numeric column
    rows = [{"s": "stability", "a": "stable"}, {"s": "mean", "a": 1.25}]
    assert "\\begin{tabular}{lr}" in latex_table(rows, ["s", "a"])


def test_latex_intervals_get_their_own_column():
    rows = [{"p": "a", "m": 1.5}, {"p": "s", "m": 1.52, "m_ci": (1.49, 1.55)}]
    tex = latex_table(rows, ["p", "m"], headers=["P", "$E[T]$"], intervals={"m": "m_ci"})
    assert "\\begin{tabular}{lrl}" in tex
    assert "\\multicolumn{2}{c}{$E[T]$}" in tex
    assert "s & 1.520 & [1.490, 1.550] \\\\" in tex and "a & 1.500 &  \\\\" in tex


@pytest.mark.parametrize("digits", [2, 6])
def test_latex_digits(digits):
    tex = latex_table([{"v": math.pi}], ["v"], digits=digits)
    assert f"{math.pi:.{digits}g}" in tex


def test_html_escapes_and_shows_intervals():
    rows = [{"p": "<b>", "m": 1.52, "m_ci": (1.49, 1.55)}]
    out = html_table(rows, ["p", "m"], caption="a & b", intervals={"m": "m_ci"})
    assert "&lt;b&gt;" in out and "<caption>a &amp; b</caption>" in out
    assert "1.520 <small>[1.490, 1.550]</small>" in out


def test_csv_full_precision_and_flat_intervals():
    rows = [{"p": "x", "m": 1 / 3, "m_ci": (0.25, 0.5)}, {"p": "y", "m": math.inf, "c": None}]
    assert flat_rows(rows)[0] == {"p": "x", "m": 1 / 3, "m_ci_low": 0.25, "m_ci_high": 0.5}
    parsed = list(csv.DictReader(io.StringIO(csv_table(rows))))
    assert float(parsed[0]["m"]) == 1 / 3
    assert parsed[1]["m"] == "inf" and parsed[1]["m_ci_low"] == "" and parsed[1]["c"] == ""
