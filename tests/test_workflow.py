"""A researcher's whole workflow through the public API: a sweep over loads and d with analysis
and simulated intervals in one table, shown as HTML, written to LaTeX and CSV, and one figure
with confidence bands (the README's "Comparing policies" study, at a small size)."""

from __future__ import annotations

import csv
import json
import math

import pytest
from conftest import slow_without_numba

import queuetheory as qt


@pytest.fixture(scope="module")
def study():
    """RIQ vs Redundancy-d p99 against load, simulated on 10 servers (small, fast; one d: each
    Redundancy-d point under S&X takes 2 to 5 s without numba; 4000 jobs x 3 replications: too
    few for every verdict to be conclusive, and the table, not the verdict, is under test
    here)."""
    S = qt.slowdowns.facebook()
    runtime = qt.SX(qt.Exponential(S.mean()), S)
    return qt.compare(runtime, [0.5, 0.6], policies=["riq", "redundancy"], d=[2],
                      quantiles=[0.99], simulate=True, servers=10, jobs=4000, replications=3,
                      seed=1)


def test_one_table_holds_analysis_and_simulated_intervals(study):
    keys = [(r["load"], r["policy"], r["source"]) for r in study.rows]
    assert len(keys) == 8 and len(set(keys)) == 8
    for row in study.rows:
        if row["source"] == "analysis":
            assert row["stable"] is True and math.isfinite(row["p99"])
            assert "p99_ci" not in row
        else:
            # every load is stable on 10 servers; a short run may only fail to show it
            assert row["source"] == "simulation k=10" and row["stable"] is not False
            low, high = row["p99_ci"]
            assert low <= row["p99"] <= high
    # the analytic rows are qt.analyze's numbers
    riq = qt.analyze(qt.System(qt.RIQ(2), qt.SX(qt.Exponential(qt.slowdowns.facebook().mean()),
                                                qt.slowdowns.facebook()), arrival_rate=0.6))
    assert study.rows[4]["p99"] == riq.quantile(0.99)


def test_html_latex_csv(study, tmp_path):
    html = study._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + len(study.rows)
    tex = study.to_latex(caption=r"$p_{99}$ of RIQ and Redundancy-$d$", label="tab:p99")
    lines = tex.splitlines()
    assert r"\caption{$p_{99}$ of RIQ and Redundancy-$d$}" in lines
    spec = next(line for line in lines if line.startswith(r"\begin{tabular}"))
    assert spec == r"\begin{tabular}{rrlllrlrlrl}"  # numbers right, intervals beside them
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    assert len(body) == len(study.rows) and all(line.count("&") == 10 for line in body)
    path = tmp_path / "p99.csv"
    study.to_csv(path)
    rows = list(csv.DictReader(path.open()))
    assert [float(r["p99"]) for r in rows] == [r["p99"] for r in study.rows]
    assert float(rows[1]["p99_ci_low"]) == study.rows[1]["p99_ci"][0]
    json.dumps(study.to_dict())  # plain data


def test_one_figure_call_with_bands(study, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    drawn = qt.plot.plot_comparison(study, 0.99, logy=True)
    # one series per policy and source; a simulated series with no conclusive point is not drawn
    drawable = {(r["policy"], r["source"]) for r in study.rows if math.isfinite(r["p99"])}
    assert len(drawn.series) == len(drawable) >= 3     # of 4: two policies, two sources
    for name, series in drawn.series.items():
        if name.endswith("simulation"):
            assert series.band is not None
            assert series.line.get_color() == drawn.series[name[:-len(", simulation")]
                                                           ].line.get_color()
    paths = qt.plot.save_figure(drawn.figure, tmp_path / "p99")
    assert all(p.stat().st_size > 1000 for p in paths)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_prediction_describe_is_readable_and_to_dict_complete():
    S = qt.slowdowns.facebook()
    p = qt.analyze(qt.System(qt.RIQ(3), qt.SX(qt.Exponential(S.mean()), S), arrival_rate=0.7))
    text = p.describe()
    lines = text.splitlines()
    assert "values=" not in text and "probs=" not in text  # no raw reprs of long laws
    assert lines[1].startswith("Stable at load 0.7: mean response time 1.778")
    assumptions = [line for line in lines if line.startswith("Assumption: ")]
    assert len(assumptions) == len(p.assumptions) and all(a.endswith(".") for a in assumptions)
    data = p.to_dict()
    assert data["p99"] == p.quantile(0.99) and data["assumptions"] == list(p.assumptions)
    assert data["references"] and "probs=" in data["runtime_spec"]
    json.dumps(data)


def test_validation_table_right_aligns_numbers():
    system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    report = qt.validate(system, servers=4, jobs=1000, replications=3, seed=1)
    spec = next(line for line in report.to_latex().splitlines()
                if line.startswith(r"\begin{tabular}"))
    assert spec == r"\begin{tabular}{lrrrrl}"


def test_progress_is_off_when_stderr_is_not_a_terminal(capsys):
    system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    qt.simulate(system, servers=3, jobs=500, replications=2, seed=1)
    qt.compare(qt.IR(qt.Exponential(1.0)), 0.5, policies=["random"])
    assert capsys.readouterr().err == ""


@slow_without_numba   # 8 s without numba
def test_readme_study_runs_at_a_small_size(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib").use("Agg")
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Comparing policies\n", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    smaller = {"[0.3, 0.4, 0.5, 0.6]": "[0.5, 0.6]", "range(2, 11)": "[2]",
               "servers=1000": "servers=10", "jobs=100_000": "jobs=1000",
               "replications=8": "replications=2"}
    for old, new in smaller.items():
        assert old in block
        block = block.replace(old, new)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert len(namespace["table"].rows) == 8
    assert {p.name for p in tmp_path.iterdir()} == {"p99.csv", "p99.tex", "p99.pdf", "p99.png"}
    import matplotlib.pyplot as plt

    plt.close("all")


def test_few_replications_with_workers_run_serially(monkeypatch):
    # splitting 4 lock-step replications over processes would be slower (MIN_LANES_PER_TASK)
    import sys

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started for 4 replications")

    monkeypatch.setattr(sys.modules["queuetheory.simulation.driver"], "ProcessPoolExecutor",
                        no_pool)
    system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    kw = {"servers": 3, "jobs": 500, "replications": 4, "seed": 1}
    assert qt.simulate(system, workers=2, **kw).mean == qt.simulate(system, **kw).mean
