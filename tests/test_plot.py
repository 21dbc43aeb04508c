"""Tests of queuetheory.plot: files, formats, labels, scales, and the plotted values."""

from __future__ import annotations

import builtins
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import queuetheory as qt

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from queuetheory import plot  # noqa: E402
from queuetheory.simulation import simulate  # noqa: E402

PDF_MAGIC = b"%PDF-"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def mm1():
    """M/M/1 under Random routing, mu = 1, lam = 0.5: T ~ Exponential(0.5) (closed form)."""
    return qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))


@pytest.fixture(scope="module")
def small_sim():
    return simulate(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5),
                    servers=4, jobs=4000, replications=4, seed=7)


def test_save_figure_writes_pdf_and_png(tmp_path, mm1):
    ax = plot.plot_response_time(mm1)
    paths = plot.save_figure(ax.figure, tmp_path / "sub" / "fig")
    assert [p.name for p in paths] == ["fig.pdf", "fig.png"]
    for path, magic in zip(paths, (PDF_MAGIC, PNG_MAGIC)):
        data = path.read_bytes()
        assert len(data) > 1000
        assert data.startswith(magic)


def test_png_resolution_follows_dpi(tmp_path):
    fig, _ = plot.subplots()
    (path,) = plot.save_figure(fig, tmp_path / "fig", formats=("png",), dpi=300)
    width_inches = 3.5
    # PNG header: width and height are big-endian 32-bit integers at bytes 16..24.
    width = int.from_bytes(path.read_bytes()[16:20], "big")
    # tight bbox trims or pads a little, never by more than an inch at 300 dpi
    assert abs(width - width_inches * 300) < 300


def test_save_figure_rejects_bad_arguments(tmp_path):
    fig, _ = plot.subplots()
    with pytest.raises(ValueError, match="formats"):
        plot.save_figure(fig, tmp_path / "f", formats=("jpg",))
    with pytest.raises(ValueError, match="dpi"):
        plot.save_figure(fig, tmp_path / "f", dpi=10)


def test_cdf_axes_labels_and_values(mm1):
    ax = plot.plot_response_time({"M/M/1": mm1}, kind="cdf", points=50)
    assert ax.get_xlabel() == "response time (mean runtime = 1)"
    assert ax.get_ylabel() == "P(T ≤ t)"
    assert ax.get_yscale() == "linear"
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "M/M/1"]
    t, y = line.get_xdata(), line.get_ydata()
    # M/M/1 sojourn time is exponential with rate mu - lam = 0.5 (closed form)
    np.testing.assert_allclose(y, 1 - np.exp(-0.5 * t), atol=1e-7)
    # default right end: the 0.995-quantile, -ln(0.005)/0.5
    assert ax.get_xlim()[1] == pytest.approx(-math.log(0.005) / 0.5, rel=1e-6)


def test_tail_uses_log_scale(mm1):
    ax = plot.plot_response_time(mm1, kind="sf", tail=1e-3, points=50)
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "P(T > t)"
    line = ax.get_lines()[0]
    t, y = line.get_xdata(), line.get_ydata()
    np.testing.assert_allclose(y, np.exp(-0.5 * t), rtol=1e-6)
    assert ax.get_xlim()[1] == pytest.approx(-math.log(1e-3) / 0.5, rel=1e-6)


def test_samples_are_drawn_as_an_empirical_cdf():
    ax = plot.plot_response_time(np.array([1.0, 2.0, 3.0, 4.0]), t_max=5.0, points=6)
    line = ax.get_lines()[0]
    # ECDF of {1,2,3,4} at t = 0..5: counted by hand
    np.testing.assert_allclose(line.get_xdata(), [0, 1, 2, 3, 4, 5])
    np.testing.assert_allclose(line.get_ydata(), [0, 0.25, 0.5, 0.75, 1.0, 1.0])
    assert ax.get_xlabel() == "response time"  # no system: no unit claimed


def test_simulation_curve_reads_the_histogram_quantiles(small_sim):
    ax = plot.plot_response_time(small_sim, kind="cdf")
    line = ax.get_lines()[0]
    x, y = line.get_xdata(), line.get_ydata()
    assert np.all(np.diff(x) >= 0) and np.all((y > 0) & (y < 1))
    i = int(np.argmin(abs(y - 0.5)))
    assert x[i] == pytest.approx(small_sim.quantile(float(y[i])))
    assert "simulation k=4" in line.get_label()


def test_analysis_and_simulation_share_a_colour(mm1, small_sim):
    ax = plot.plot_response_time({"M/M/1": (mm1, small_sim)}, kind="sf")
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata())]
    assert len(lines) == 2
    assert lines[0].get_color() == lines[1].get_color()
    assert lines[0].get_linestyle() == "-" and lines[1].get_linestyle() == "--"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["M/M/1", "analysis", "simulation"]


def test_unstable_result_is_listed_not_drawn(mm1):
    unstable = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=1.2))
    ax = plot.plot_response_time({"ok": mm1, "overloaded": unstable})
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "overloaded (unstable)" in legend
    assert all(np.all(np.isfinite(ln.get_xdata())) for ln in ax.get_lines())


def test_plot_response_time_rejects_bad_input(mm1):
    with pytest.raises(ValueError, match="kind"):
        plot.plot_response_time(mm1, kind="pdf")
    with pytest.raises(ValueError, match="tail"):
        plot.plot_response_time(mm1, kind="sf", tail=0.0)
    with pytest.raises(ValueError, match="labels"):
        plot.plot_response_time([mm1, mm1], labels=["one"])
    with pytest.raises(ValueError, match="samples"):
        plot.plot_response_time(np.array([1.0, -1.0]))


def test_plot_against_values_errorbars_and_unstable(small_sim):
    rates = [0.25, 0.5, 1.5]
    preds = [qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=r))
             for r in rates]
    drawn = plot.plot_against(rates, preds, "mean", label="analysis")
    ax, line = drawn.ax, drawn.line
    assert ax.get_lines()[0] is line
    # M/M/1 mean 1/(1 - lam) at lam = 0.25, 0.5; lam = 1.5 is unstable (not drawn)
    np.testing.assert_allclose(line.get_ydata()[:2], [4 / 3, 2.0], rtol=1e-12)
    assert np.isnan(line.get_ydata()[2])
    markers = [ln for ln in ax.get_lines() if ln.get_marker() == "^"]
    assert len(markers) == 1 and list(markers[0].get_xdata()) == [1.5]
    assert ax.get_ylabel() == "mean response time\n(mean runtime = 1)"
    assert ax.get_xlabel() == "arrival rate per server"
    # a run of unstable results is marked once, where it begins
    ax3 = plot.plot_against([1, 2, 3, 4, 5], [1.0, math.inf, math.inf, 2.0, math.inf]).ax
    (marks,) = [ln for ln in ax3.get_lines() if ln.get_marker() == "^"]
    assert list(marks.get_xdata()) == [2, 5]

    ax2 = plot.plot_against([0.5], [small_sim], 0.95, xlabel="load", logy=True).ax
    assert ax2.get_yscale() == "log" and ax2.get_xlabel() == "load"
    assert ax2.get_ylabel() == "95th percentile response time\n(mean runtime = 1)"
    # a second series keeps the axis labels of the first
    plot.plot_against([0.5], [1.0], "mean", ax=ax2)
    assert ax2.get_xlabel() == "load" and ax2.get_ylabel().startswith("95th")
    low, high = small_sim.quantile_ci(0.95)
    segments = ax2.collections[0].get_segments()  # the error bar
    np.testing.assert_allclose(segments[0][:, 1], [low, high])


def test_plot_against_rejects_bad_input(mm1):
    with pytest.raises(ValueError, match="equal length"):
        plot.plot_against([1, 2], [mm1])
    with pytest.raises(ValueError, match="statistic"):
        plot.plot_against([1], [mm1], statistic="median")
    with pytest.raises(ValueError, match="statistic"):
        plot.plot_against([1], [mm1], statistic=1.5)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "queuetheory\[plot\]"'):
        plot.subplots()


def test_importing_queuetheory_does_not_import_matplotlib():
    import subprocess

    code = "import sys, queuetheory, queuetheory.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"


# -- artists, legends, bands, ticks ------------------------------------------------------------
def test_plot_against_returns_artists_and_skips_legend(small_sim):
    rates = [0.25, 0.5]
    preds = [qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=r))
             for r in rates]
    drawn = plot.plot_against(rates, preds, label="analysis", legend=False)
    assert drawn.ax.get_legend() is None and drawn.figure is drawn.ax.figure
    assert drawn.errorbar is None and drawn.band is None and drawn.unstable is None
    # simulated points in the analysis' colour, matched through the returned line
    sim = plot.plot_against([0.5], [small_sim], ax=drawn.ax, color=drawn.line.get_color())
    assert sim.line.get_color() == drawn.line.get_color() and sim.errorbar is not None


def test_plot_against_band_spans_the_intervals():
    triples = [(1.0, 0.9, 1.2), (2.0, 1.7, 2.4), (math.inf, math.inf, math.inf)]
    drawn = plot.plot_against([1, 2, 3], triples, ci="band", label="sim")
    vertices = drawn.band.get_paths()[0].vertices
    assert vertices[:, 1].min() == pytest.approx(0.9) and vertices[:, 1].max() == 2.4
    assert list(drawn.unstable.get_xdata()) == [3]
    with pytest.raises(ValueError, match="ci"):
        plot.plot_against([1], [1.0], ci="shade")


def test_unstable_markers_of_several_series_do_not_overlap():
    ax = plot.plot_against([1, 2], [1.0, math.inf]).ax
    second = plot.plot_against([1, 2], [1.5, math.inf], ax=ax)
    heights = [ln.get_ydata()[0] for ln in ax.get_lines() if ln.get_marker() == "^"]
    assert len(heights) == 2 and heights[0] != heights[1]
    assert second.unstable.get_ydata()[0] == heights[1]


def test_log_ticks_are_plain_numbers():
    drawn = plot.plot_against([0.3, 0.5, 0.9], [4.0, 15.0, 60.0], logy=True)
    drawn.figure.canvas.draw()
    labels = [t.get_text() for t in drawn.ax.get_yticklabels(minor=True)
              + drawn.ax.get_yticklabels()]
    assert "40" in labels and not any("times" in text or "^" in text for text in labels)


def test_simulated_tail_has_a_confidence_band(small_sim):
    ax = plot.plot_response_time(small_sim, kind="sf", tail=1e-2)
    (band,) = ax.collections
    x = band.get_paths()[0].vertices[:, 0]
    low, high = small_sim.quantile_ci(0.5)
    assert x.min() <= low and x.max() >= high
    assert not plot.plot_response_time(small_sim, kind="sf", ci=False).collections


def test_plot_comparison_draws_analysis_and_simulation_in_one_colour():
    table = qt.compare(qt.IR(qt.Exponential(1.0)), [0.3, 0.6], policies=["random", "riq"],
                       d=[2], simulate=True, servers=6, jobs=1000, replications=3, seed=2)
    drawn = plot.plot_comparison(table, 0.95)
    assert sorted(drawn.series) == ["RIQ(d=2)", "RIQ(d=2), simulation", "Random",
                                    "Random, simulation"]
    riq, riq_sim = drawn.series["RIQ(d=2)"], drawn.series["RIQ(d=2), simulation"]
    assert riq.line.get_color() == riq_sim.line.get_color()
    np.testing.assert_allclose(riq.line.get_xdata(), [0.3, 0.6])
    # the band spans the simulated intervals of the 95th percentile
    lows = [r["p95_ci"][0] for r in table.rows if r["policy"] == "RIQ(d=2)"
            and r["source"] != "analysis"]
    assert riq_sim.band.get_paths()[0].vertices[:, 1].min() == pytest.approx(min(lows))
    legend = [t.get_text() for t in drawn.ax.get_legend().get_texts()]
    assert legend == ["Random", "RIQ(d=2)", "analysis", "simulation"]
    by_d = plot.plot_comparison(table, "mean", x="d", legend=False)
    assert "RIQ, load 0.3" in by_d.series and by_d.ax.get_legend() is None
    with pytest.raises(ValueError, match="quantiles"):
        plot.plot_comparison(table, 0.5)


def test_tail_beyond_a_tabulated_law_names_tail():
    # the Redundancy-d cavity grid (S&X with a continuous slowdown) tabulates the tail down to
    # 1e-7: a deeper ``tail`` is refused by the name the user typed
    p = qt.analyze(qt.System(qt.RedundancyD(2), qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 2.0)),
                             arrival_rate=0.3))
    with pytest.raises(ValueError, match="^tail must be within what every curve resolves"):
        plot.plot_response_time(p, kind="sf", tail=1e-9)
    assert plot.plot_response_time(p, kind="sf", tail=1e-6).get_yscale() == "log"
