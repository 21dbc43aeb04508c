"""Tests of queuetheory.export: text and LaTeX (booktabs) tables."""

import math

import pytest

from queuetheory.export import format_value, latex_table, text_table


def test_format_value_special_cases():
    assert format_value(math.inf) == "inf"
    assert format_value(None) == "n/a"
    assert format_value(True) == "yes"
    assert format_value(1 / 3, digits=3) == "0.333"


def test_text_table_aligns_columns():
    rows = [{"a": "x", "b": 1.0}, {"a": "longer", "b": math.inf}]
    lines = text_table(rows, ["a", "b"]).splitlines()
    assert lines[0].split() == ["a", "b"]
    assert lines[3].split() == ["longer", "inf"]
    assert len({line.index("b") for line in lines[:1]}) == 1


def test_latex_table_is_booktabs_and_escapes():
    rows = [{"policy": "RIQ_3 & co", "mean": 1.5, "p99": math.inf}]
    tex = latex_table(rows, ["policy", "mean", "p99"], caption="50% load", label="tab:x")
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "RIQ\\_3 \\& co" in tex
    assert "$\\infty$" in tex
    assert "\\caption{50\\% load}" in tex and "\\label{tab:x}" in tex
    assert "\\begin{tabular}{lrr}" in tex


@pytest.mark.parametrize("digits", [2, 6])
def test_latex_digits(digits):
    tex = latex_table([{"v": math.pi}], ["v"], digits=digits)
    assert f"{math.pi:.{digits}g}" in tex
