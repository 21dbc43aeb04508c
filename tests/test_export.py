"""Tests of queuetheory.export: text, LaTeX (booktabs), HTML and CSV tables."""

import csv
import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@pytest.mark.parametrize("value, error, text", [
    # the value to the decimal place of the error's second significant digit
    (1.7231, 0.16, "1.72 +- 0.16"), (16.139, 3.53, "16.1 +- 3.5"), (0.5512, 0.44, "0.55 +- 0.44"),
    (475.84, 25.0, "476 +- 25"), (-3.21, 0.5, "-3.21 +- 0.50"), (2.0, 6e-4, "2.00000 +- 0.00060"),
    (12345.6, 300.0, "1.235e+04 +- 3.0e+02"), (1.2e-9, 3e-11, "1.200e-09 +- 3.0e-11"),
    (0.003, 0.04, "0.003 +- 0.040"), (9.9996, 0.01, "10.000 +- 0.010"),
    (0.0999, 0.001, "0.0999 +- 0.0010"), (-0.5, 2.0, "-0.5 +- 2.0"),
    # the error rounded first (0.0995 -> 0.10), and a value that rounds to 0 at its place
    (1.25, 0.0995, "1.25 +- 0.10"), (0.003, 0.5, "0.00 +- 0.50"), (0.0, 0.1, "0.00 +- 0.10"),
    (2.5e-8, 1e-7, "2e-08 +- 1.0e-07"), (4e-9, 1e-7, "0.00000000 +- 1.0e-07"),
    (2.0, math.inf, "2.000 +- inf"),
    # an error within half a unit of the 4th digit, none, or unknown: 4 digits
    (469.3763, 1.2e-4, "469.4"), (2.0, 4e-4, "2.000"), (2.0, None, "2.000"),
    (2.0, math.nan, "2.000"), (math.inf, 1.0, "inf"),
])
def test_format_value_with_an_error_shows_only_the_digits_it_supports(value, error, text):
    assert format_value(value, 4, error) == text


@given(st.floats(-1e12, 1e12).filter(lambda v: abs(v) > 1e-12),
       st.floats(1e-14, 1e13), st.integers(2, 8))
def test_format_value_with_an_error_rounds_to_it(value, error, digits):
    # either the digits the plain format shows are right to half a unit (the error within it),
    # or "a +- b": b the error to 2 significant digits, a the value rounded at b's second digit
    text = format_value(value, digits, error)
    if "+-" not in text:
        assert text == format_value(value, digits)
        assert error <= 0.5 * 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
        return
    shown, stated = (float(part) for part in text.split(" +- "))
    assert stated == pytest.approx(error, rel=0.05)
    place = math.floor(math.log10(stated)) - 1
    assert abs(shown - value) <= 0.5 * 10.0 ** place * (1 + 1e-9) + 1e-15 * abs(value)


def test_tables_show_errors_beyond_the_last_digit():
    rows = [{"p": "coarse", "m": 1.7231, "m_error": 0.16},
            {"p": "fine", "m": 2.5, "m_error": 1e-9}, {"p": "closed form", "m": 1.25}]
    text = text_table(rows, ["p", "m"], errors={"m": "m_error"}).splitlines()
    assert text[2].endswith("1.72 +- 0.16") and text[3].endswith("2.500")
    assert text[4].endswith("1.250")
    assert len({line.index(".") for line in text[2:]}) == 1   # the points line up
    assert r"1.72 $\pm$ 0.16" in latex_table(rows, ["p", "m"], errors={"m": "m_error"})
    assert "1.72 &plusmn; 0.16" in html_table(rows, ["p", "m"], errors={"m": "m_error"})
    assert "+-" not in text_table(rows, ["p", "m"])   # without errors= nothing changes


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
    # scientific notation: the mantissa's point with the others (it was pushed left)
    rows.append({"a": "w", "b": 12345.6})
    lines = text_table(rows, ["a", "b"]).splitlines()
    assert lines[6].rstrip().endswith("1.235e+04")
    assert len({line.index(".") for line in (lines[2], lines[4], lines[5], lines[6])}) == 1


def test_format_value_integer_with_an_error():
    # an integer is exact to its last digit unless its error exceeds half a unit
    assert format_value(12, 4, 0.5) == format_value(np.int64(12), 4, None) == "12"
    assert format_value(12, 4, 3.0) == "12.0 +- 3.0"
    assert format_value(1200, 4, 340.0) == format_value(1200.0, 4, 340.0) == "1.20e+03 +- 3.4e+02"


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
