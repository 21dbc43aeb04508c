"""Publication figures: response-time CDFs and tails, and statistics against load or ``d``.

matplotlib is optional (``pip install "queuetheory[plot]"``): it is imported only when one of
these functions is called, never when :mod:`queuetheory` is imported. The functions draw on a
given ``matplotlib.axes.Axes`` or on a new figure in :data:`PUBLICATION_STYLE`; nothing here
calls ``show()``, so they work with the non-interactive Agg backend.

Anything with a response-time law can be drawn: a :class:`~queuetheory.Prediction` (its
``response_time``), a :class:`~queuetheory.ResponseTime` or any other
:class:`~queuetheory.Distribution`, a simulation result (read through its histogram quantiles,
so ``samples=True`` is not needed), or a plain array of observed response times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import _checks

if TYPE_CHECKING:
    from .compare import Comparison

__all__ = ["PUBLICATION_STYLE", "subplots", "plot_response_time", "plot_against",
           "plot_comparison", "Plotted", "ComparisonPlot", "save_figure"]

#: matplotlib rc settings of the figures: sans-serif text at 8-9 pt for a 3.5 inch column,
#: no top/right spines, light grid, TrueType (type 42) fonts embedded in PDF.
PUBLICATION_STYLE = {
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.labelsize": 9,
    "axes.titlesize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.4,
    "lines.markersize": 4,
    "legend.frameon": False,
    "figure.figsize": (3.5, 2.6),
    "figure.constrained_layout.use": True,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}

_FORMATS = ("pdf", "png", "svg", "eps")
_UNIT = " (mean runtime = 1)"


def _pyplot():
    """``matplotlib.pyplot``, or an ImportError saying how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError('queuetheory.plot needs matplotlib: pip install "queuetheory[plot]"'
                          ) from exc
    return plt


def subplots(nrows: int = 1, ncols: int = 1, **kwargs):
    """A new figure and axes in :data:`PUBLICATION_STYLE` (``matplotlib.pyplot.subplots``).

    Parameters
    ----------
    nrows, ncols : int
        Grid of axes.
    **kwargs
        Passed to ``matplotlib.pyplot.subplots`` (e.g. ``figsize``, ``sharey``); the default
        size is 3.5 by 2.6 inches per panel.

    Returns
    -------
    (matplotlib.figure.Figure, matplotlib.axes.Axes or numpy.ndarray of Axes)

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from queuetheory.plot import subplots
    >>> fig, axes = subplots(1, 2)
    >>> axes.shape, fig.get_size_inches().tolist()
    ((2,), [7.0, 2.6])
    """
    plt = _pyplot()
    nrows = _checks.positive_int("nrows", nrows)
    ncols = _checks.positive_int("ncols", ncols)
    width, height = PUBLICATION_STYLE["figure.figsize"]
    kwargs.setdefault("figsize", (width * ncols, height * nrows))
    with plt.rc_context(PUBLICATION_STYLE):
        return plt.subplots(nrows, ncols, **kwargs)


def _axes(ax):
    if ax is not None:
        return ax
    return subplots()[1]


# -- reading a result ------------------------------------------------------------------------
def _system(obj):
    return getattr(obj, "system", None)


def _is_simulation(obj) -> bool:
    return all(hasattr(obj, name) for name in ("quantile_ci", "replications", "jobs"))


def _is_prediction(obj) -> bool:
    return hasattr(obj, "response_time") and hasattr(obj, "method")


def _kind_of(obj) -> str:
    if _is_simulation(obj):
        return "simulation"
    if _is_prediction(obj) or hasattr(obj, "cdf"):
        return "analysis"
    return "samples"


def _default_label(obj) -> str | None:
    system = _system(obj)
    if system is None:
        return None
    if _is_simulation(obj):
        return f"{system.policy.label()}, simulation k={obj.servers}"
    return system.policy.label()


def _time_name(objs) -> str:
    """Axis name of the time, with the unit when every system has mean runtime 1."""
    systems = [_system(obj) for obj in objs]
    batch = any(s is not None and s.policy.batch > 1 for s in systems)
    name = "batch completion time" if batch else "response time"
    known = [s for s in systems if s is not None]
    if known and all(math.isclose(s.runtime.mean_runtime(), 1.0, rel_tol=1e-9) for s in known):
        name += _UNIT
    return name


def _samples(obj) -> np.ndarray:
    values = np.sort(np.asarray(obj, dtype=float).ravel())
    if values.size == 0 or np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("samples must be a non-empty array of response times >= 0 (no NaN)")
    return values


def _stable(obj) -> bool:
    if _is_prediction(obj) or _is_simulation(obj):
        return bool(obj.stable)
    return bool(getattr(obj, "stable", True))


def _simulation_levels(sim, kind: str, tail: float) -> np.ndarray:
    """Quantile levels read off a simulation's histogram: a body grid, and for ``sf`` a tail
    grid down to ``tail`` or to 10 observations above the level, whichever is larger."""
    observed = sim.replications * sim.jobs / max(sim.batch, 1)
    floor = max(tail, 10.0 / observed)
    body = np.linspace(0.005, 0.995, 199)
    if kind == "cdf" or floor >= 0.01:
        return body
    return np.unique(np.concatenate([body, 1 - np.geomspace(0.01, floor, 120)]))


def _upper_time(obj, kind: str, tail: float) -> float:
    """A time beyond which the curve of ``obj`` holds nothing worth drawing."""
    level = 1 - tail if kind == "sf" else 0.995
    if _is_simulation(obj):
        return obj.quantile(float(_simulation_levels(obj, kind, tail).max()))
    try:
        if _is_prediction(obj):
            return obj.quantile(level)
        if hasattr(obj, "ppf"):
            return float(obj.ppf(level))
    except ValueError as error:   # a law tabulated only down to some tail level
        raise ValueError(f"tail must be within what every curve resolves: {error}") from None
    values = _samples(obj)
    return float(values[min(int(level * values.size), values.size - 1)])


def _curve(obj, kind: str, t: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Points ``(t, P(T <= t))`` or ``(t, P(T > t))`` of one result."""
    if _is_simulation(obj):
        levels = _simulation_levels(obj, kind, tail)
        times = np.array([obj.quantile(float(q)) for q in levels])
        return times, (levels if kind == "cdf" else 1 - levels)
    if _is_prediction(obj) or hasattr(obj, "cdf"):
        law = obj.response_time if _is_prediction(obj) else obj
        y = law.cdf(t) if kind == "cdf" else law.sf(t)
        return t, np.asarray(y, dtype=float)
    values = _samples(obj)
    below = np.searchsorted(values, t, side="right") / values.size
    return t, (below if kind == "cdf" else 1 - below)


def _groups(results, labels) -> list[tuple[str | None, list]]:
    """Normalise the accepted inputs to (label, [results drawn in one colour])."""
    if isinstance(results, Mapping):
        pairs = list(results.items())
    else:
        single = (not isinstance(results, Sequence | np.ndarray)
                  or _looks_like_samples(results))
        items = [results] if single else list(results)
        if labels is not None:
            labels = list(labels)
            if len(labels) != len(items):
                raise ValueError(f"labels must have one entry per result ({len(items)}), got "
                                 f"{len(labels)}")
        else:
            labels = [None] * len(items)
        pairs = list(zip(labels, items))
    groups = []
    for label, entry in pairs:
        members = list(entry) if isinstance(entry, tuple) else [entry]
        if not members:
            raise ValueError(f"the entry for {label!r} is empty")
        groups.append((label if label is not None else _default_label(members[0]), members))
    if not groups:
        raise ValueError("results must contain at least one result to plot")
    return groups


def _looks_like_samples(results) -> bool:
    return isinstance(results, np.ndarray) or (
        len(results) > 0 and all(isinstance(v, int | float | np.number) for v in results))


_STYLE = {"analysis": {"linestyle": "-"},
          "simulation": {"linestyle": "--", "linewidth": 1.1},
          "samples": {"linestyle": ":", "drawstyle": "steps-post"}}


def plot_response_time(results, kind: str = "cdf", ax=None, *, labels: Sequence[str] | None = None,
                       t_max: float | None = None, tail: float = 1e-4, points: int = 400,
                       legend: bool = True, ci: bool = True):
    """Draw response-time CDFs (``kind="cdf"``) or tails ``P(T > t)`` on a log scale (``"sf"``).

    Parameters
    ----------
    results : result, sequence of results, or mapping label -> result or tuple of results
        Each result is a :class:`~queuetheory.Prediction`, a
        :class:`~queuetheory.ResponseTime` or other :class:`~queuetheory.Distribution`, a
        simulation result, or an array of observed response times. A tuple ``(prediction,
        simulation)`` is drawn in one colour: analysis solid, simulation dashed, samples
        dotted.
    kind : {"cdf", "sf"}
        Distribution function on a linear scale, or tail on a log scale.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure (:func:`subplots`).
    labels : sequence of str, optional
        Legend labels, one per result (not with a mapping); default the policy label.
    t_max : float, optional
        Right end of the time axis; default the largest ``0.995``-quantile (``cdf``) or
        ``(1 - tail)``-quantile (``sf``) over the results.
    tail : float
        Smallest tail probability shown by ``sf`` (in (0, 1)); simulated tails stop earlier,
        where fewer than 10 observations lie above.
    points : int
        Times at which analytic curves are evaluated.
    legend : bool
        Draw a legend when any curve has a label.
    ci : bool
        Shade each simulated curve's confidence band: at every probability level, the
        simulation's confidence interval of the quantile at that level.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import queuetheory as qt
    >>> from queuetheory.plot import plot_response_time
    >>> mm1 = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
    >>> ax = plot_response_time({"M/M/1": mm1}, kind="sf")
    >>> ax.get_yscale(), ax.get_xlabel(), ax.get_ylabel()
    ('log', 'response time (mean runtime = 1)', 'P(T > t)')
    """
    if kind not in ("cdf", "sf"):
        raise ValueError(f"kind must be 'cdf' or 'sf', got {kind!r}")
    tail = float(_checks.probability_level("tail", tail))
    points = _checks.positive_int("points", points, minimum=2)
    groups = _groups(results, labels)
    members = [obj for _, group in groups for obj in group]
    drawable = [obj for obj in members if _stable(obj)]
    if t_max is None:
        tops = [_upper_time(obj, kind, tail) for obj in drawable]
        t_max = max([v for v in tops if math.isfinite(v)] + [0.0])
        t_max = t_max if t_max > 0 else 1.0
    t_max = _checks.positive("t_max", t_max)
    plt = _pyplot()
    with plt.rc_context(PUBLICATION_STYLE):
        ax = _axes(ax)
        t = np.linspace(0.0, t_max, points)
        sources = set()
        for index, (label, group) in enumerate(groups):
            color = f"C{index % 10}"
            for position, obj in enumerate(group):
                text = label if position == 0 else "_nolegend_"
                if not _stable(obj):
                    ax.plot([], [], color=color, linestyle="none", marker="x",
                            label=f"{label} (unstable)" if position == 0 else "_nolegend_")
                    continue
                source = _kind_of(obj)
                sources.add(source)
                x, y = _curve(obj, kind, t, tail)
                if kind == "sf":
                    y = np.where(y > 0, y, np.nan)
                ax.plot(x, y, color=color, label=text, **_STYLE[source])
                if ci and source == "simulation":
                    levels = _simulation_levels(obj, kind, tail)
                    band = np.array([obj.quantile_ci(float(q)) for q in levels])
                    ax.fill_betweenx(levels if kind == "cdf" else 1 - levels, band[:, 0],
                                     band[:, 1], color=color, alpha=0.2, linewidth=0)
        if len(sources) > 1:
            for source in sorted(sources):
                ax.plot([], [], color="0.4", label=source, **_STYLE[source])
        ax.set_xlim(0.0, t_max)
        ax.set_xlabel(_time_name(members))
        if kind == "cdf":
            ax.set_ylim(0.0, 1.0)
            ax.set_ylabel("P(T ≤ t)")
        else:
            ax.set_yscale("log")
            _readable_log_ticks(ax.yaxis)
            ax.set_ylim(tail / 2, 1.05)
            ax.set_ylabel("P(T > t)")
        if legend and any(not h.startswith("_") for h in ax.get_legend_handles_labels()[1]):
            ax.legend()
    return ax


def _statistic_name(statistic) -> str:
    if isinstance(statistic, str):
        if statistic != "mean":
            raise ValueError(f"statistic must be 'mean' or a quantile level in (0, 1), got "
                             f"{statistic!r}")
        return "mean"
    q = float(_checks.probability_level("statistic", statistic))
    return f"{100 * q:g}th percentile"


def _two_lines(text: str) -> str:
    """Put the unit of a long axis label on its own line."""
    return text.replace(_UNIT, "\n" + _UNIT.strip()) if len(text) > 30 else text


def _value(obj, statistic, ci: bool) -> tuple[float, float, float]:
    """``(value, low, high)`` of one result; ``inf`` when unstable, no interval -> value."""
    if isinstance(obj, int | float | np.number):
        value = float(obj)
        return value, value, value
    if isinstance(obj, tuple):
        value, low, high = (float(v) for v in obj)
        return (value, low, high) if ci else (value, value, value)
    if not obj.stable:
        return math.inf, math.inf, math.inf
    if statistic == "mean":
        value = float(obj.mean)
        interval = getattr(obj, "mean_ci", None)
    else:
        value = float(obj.quantile(float(statistic)))
        interval = obj.quantile_ci(float(statistic)) if _is_simulation(obj) else None
    if not ci or interval is None:
        return value, value, value
    return value, float(interval[0]), float(interval[1])


def _readable_log_ticks(axis) -> None:
    """Plain tick labels on a log axis (``40``, not ``4x10^1``), minor ones where the axis
    spans less than about two decades."""
    from matplotlib import ticker

    axis.set_major_formatter(ticker.LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False,
                                                 minor_thresholds=(2, 0.4)))


class Plotted(NamedTuple):
    """What :func:`plot_against` drew: the axes and the series' artists.

    ``line.get_color()`` is the series' colour (pass it as ``color=`` to draw matching
    points); ``errorbar``, ``band`` and ``unstable`` are ``None`` when not drawn.
    """

    ax: Any
    line: Any
    errorbar: Any = None
    band: Any = None
    unstable: Any = None

    @property
    def figure(self):
        """The figure of the axes."""
        return self.ax.figure


_UNSTABLE_GID = "queuetheory-unstable"


def plot_against(xs, results, statistic="mean", ax=None, *, label: str | None = None,
                 xlabel: str | None = None, ylabel: str | None = None,
                 ci: bool | str = True, logy: bool = False, color=None, legend: bool = True,
                 **kwargs) -> Plotted:
    r"""Draw the mean or a percentile of the response time against load, ``d``, or any ``x``.

    Results with an interval (simulations, or ``(value, low, high)`` triples) get
    confidence-interval error bars or a shaded band; unstable results (infinite response
    time) are not drawn: an upward triangle at the top of the axes marks the first ``x`` of
    each run of unstable results (where the instability begins), the triangles of later
    series on the same axes a little lower, so that they stay apart.

    Parameters
    ----------
    xs : sequence of float
        The abscissae (arrival rate, load, ``d``, ...).
    results : sequence
        One per ``x``: a :class:`~queuetheory.Prediction`, a simulation result, a number, or
        a triple ``(value, low, high)`` (a value with its confidence interval).
    statistic : "mean" or float
        ``"mean"`` or a quantile level ``q`` in (0, 1), e.g. ``0.95``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure (:func:`subplots`). Call again with the same
        ``ax`` to add series.
    label : str, optional
        Legend label of the series.
    xlabel, ylabel : str, optional
        Axis labels; by default ``"arrival rate per server"`` and the statistic with its unit,
        set only on axes that have no label yet (so later series keep the first labels).
    ci : bool or {"bars", "band"}
        Draw the confidence intervals as error bars (``True`` or ``"bars"``), as a shaded
        band (``"band"``), or not (``False``).
    logy : bool
        Logarithmic vertical axis, with plain tick labels.
    color : optional
        matplotlib colour of the series (default: next in the cycle).
    legend : bool
        Draw (update) the legend when the series has a label.
    **kwargs
        Passed to ``Axes.plot`` / ``Axes.errorbar`` (e.g. ``marker``, ``linestyle``).

    Returns
    -------
    Plotted
        ``(ax, line, errorbar, band, unstable)``: the axes and the artists drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import queuetheory as qt
    >>> from queuetheory.plot import plot_against
    >>> rates = [0.3, 0.5, 0.7]
    >>> preds = [qt.analyze(qt.System(qt.RIQ(d=2), qt.IR(qt.Exponential(1.0)), arrival_rate=r))
    ...          for r in rates]
    >>> drawn = plot_against(rates, preds, 0.95, label="RIQ(d=2)")
    >>> drawn.ax.get_ylabel(), matplotlib.colors.to_hex(drawn.line.get_color())
    ('95th percentile response time\n(mean runtime = 1)', '#1f77b4')
    """
    xs = np.asarray(xs, dtype=float).ravel()
    results = list(results)
    if xs.size != len(results) or xs.size == 0:
        raise ValueError(f"xs and results must be non-empty and of equal length, got {xs.size} "
                         f"and {len(results)}")
    if ci not in (True, False, "bars", "band"):
        raise ValueError(f"ci must be True, False, 'bars' or 'band', got {ci!r}")
    name = _statistic_name(statistic)
    values = np.array([_value(obj, statistic, bool(ci)) for obj in results], dtype=float)
    finite = np.isfinite(values[:, 0])
    y = np.where(finite, values[:, 0], np.nan)
    simulated = any(_is_simulation(obj) or isinstance(obj, tuple) for obj in results)
    plt = _pyplot()
    with plt.rc_context(PUBLICATION_STYLE):
        ax = _axes(ax)
        style = {"marker": "o" if simulated else ".",
                 "linestyle": "--" if simulated else "-"} | kwargs
        errorbar = band = unstable = None
        if simulated and ci in (True, "bars"):
            err = np.where(finite, [y - values[:, 1], values[:, 2] - y], np.nan)
            errorbar = ax.errorbar(xs, y, yerr=err, color=color, label=label, capsize=2,
                                   **style)
            line = errorbar.lines[0]
        else:
            line = ax.plot(xs, y, color=color, label=label, **style)[0]
            if simulated and ci == "band":
                band = ax.fill_between(xs, np.where(finite, values[:, 1], np.nan),
                                       np.where(finite, values[:, 2], np.nan),
                                       color=line.get_color(), alpha=0.2, linewidth=0)
        starts = ~finite & np.concatenate([[True], finite[:-1]])
        if starts.any():
            earlier = sum(1 for ln in ax.get_lines() if ln.get_gid() == _UNSTABLE_GID)
            height = 0.97 - 0.04 * (earlier % 8)
            unstable = ax.plot(xs[starts], np.full(starts.sum(), height),
                               transform=ax.get_xaxis_transform(), color=line.get_color(),
                               marker="^", linestyle="none", clip_on=False, gid=_UNSTABLE_GID,
                               label=f"{label}: unstable" if label else "_nolegend_")[0]
        if logy:
            ax.set_yscale("log")
            _readable_log_ticks(ax.yaxis)
        if xlabel is not None or not ax.get_xlabel():
            ax.set_xlabel(xlabel if xlabel is not None else "arrival rate per server")
        objs = [obj for obj in results if not isinstance(obj, int | float | np.number | tuple)]
        unit = _time_name(objs)
        if ylabel is not None or not ax.get_ylabel():
            ax.set_ylabel(ylabel if ylabel is not None else _two_lines(f"{name} {unit}"))
        if legend and label is not None:
            ax.legend()
    return Plotted(ax, line, errorbar, band, unstable)


class ComparisonPlot(NamedTuple):
    """What :func:`plot_comparison` drew: the axes and, per series label, its
    :class:`Plotted` (the analysis under the policy's label, the simulation under
    ``"<label>, simulation"``)."""

    ax: Any
    series: dict

    @property
    def figure(self):
        """The figure of the axes."""
        return self.ax.figure


_X_NAMES = {"load": "load", "arrival_rate": "arrival rate per server",
            "d": "degree of redundancy d"}


def plot_comparison(table: Comparison, statistic="mean", x: str = "load", ax=None, *,
                    ci: bool | str = "band", logy: bool = False,
                    legend: bool = True) -> ComparisonPlot:
    """Draw one statistic of a :func:`queuetheory.compare` table against load or ``d``: one
    colour per policy, analysis as a line, simulation as points with their confidence
    band (or error bars).

    Parameters
    ----------
    table : Comparison
        The result of :func:`queuetheory.compare` (a sweep over loads or ``d``).
    statistic : "mean" or float
        ``"mean"`` or one of the table's quantile levels (e.g. ``0.99``).
    x : {"load", "arrival_rate", "d"}
        The abscissa; with ``"d"`` there is one series per policy family and arrival rate.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.
    ci : bool or {"bars", "band"}
        How to draw the simulated intervals (default a shaded band).
    logy : bool
        Logarithmic vertical axis.
    legend : bool
        Draw a legend (policies, and which style is analysis and which simulation).

    Returns
    -------
    ComparisonPlot
        ``(ax, series)``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import queuetheory as qt
    >>> from queuetheory.plot import plot_comparison
    >>> table = qt.compare(qt.IR(qt.Exponential(1.0)), [0.3, 0.5, 0.7], policies=["riq"],
    ...                    d=[2, 3])
    >>> drawn = plot_comparison(table, 0.99)
    >>> sorted(drawn.series), drawn.ax.get_xlabel()
    (['RIQ(d=2)', 'RIQ(d=3)'], 'load')
    """
    if x not in _X_NAMES:
        raise ValueError(f"x must be one of {sorted(_X_NAMES)}, got {x!r}")
    if statistic == "mean":
        key = "mean"
    else:
        q = float(_checks.probability_level("statistic", statistic))
        if not any(math.isclose(q, level) for level in table.quantiles):
            raise ValueError(f"statistic must be 'mean' or one of the table's quantiles "
                             f"{list(table.quantiles)}, got {statistic!r}")
        key = f"p{100 * q:g}"
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in table.rows:
        if row.get("stable") is None or (row["stable"] and row.get(key) is None):
            continue  # no analysis (not simulated), or no such statistic
        if row.get(x) is None:
            continue  # e.g. Random has no d
        name = (row["policy"] if x != "d"
                else f"{row['policy'].split('(')[0]}, load {row['load']:.3g}")
        source = "analysis" if row["source"] == "analysis" else "simulation"
        groups.setdefault((name, source), []).append(row)
    names = list(dict.fromkeys(name for name, _ in groups))
    sources = {source for _, source in groups}
    plt = _pyplot()
    series = {}
    with plt.rc_context(PUBLICATION_STYLE):
        ax = _axes(ax)
        for index, name in enumerate(names):
            color = f"C{index % 10}"
            for source in ("analysis", "simulation"):
                rows = groups.get((name, source))
                if not rows:
                    continue
                xs = [row[x] for row in rows]
                if source == "analysis":
                    values = [row[key] if row["stable"] else math.inf for row in rows]
                    drawn = plot_against(xs, values, statistic, ax, label=name, color=color,
                                         logy=logy, legend=False, marker="")
                    series[name] = drawn
                else:
                    values = [(row[key], *row[f"{key}_ci"]) if row["stable"] else math.inf
                              for row in rows]
                    own = name if (name, "analysis") not in groups else None
                    drawn = plot_against(xs, values, statistic, ax, label=own, color=color,
                                         ci=ci, logy=logy, legend=False, linestyle="none",
                                         marker="o", markersize=3)
                    series[f"{name}, simulation"] = drawn
        ax.set_xlabel(_X_NAMES[x])
        if len(sources) > 1:
            ax.plot([], [], color="0.4", linestyle="-", label="analysis")
            ax.plot([], [], color="0.4", linestyle="none", marker="o", markersize=3,
                    label="simulation")
        if legend:
            ax.legend()
    return ComparisonPlot(ax, series)


def save_figure(fig, path_stem, formats: Sequence[str] = ("pdf", "png"),
                dpi: int = 300) -> list[Path]:
    """Save ``fig`` as ``path_stem.pdf``, ``path_stem.png``, ... with a tight bounding box.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (e.g. ``ax.figure``).
    path_stem : str or os.PathLike
        Path without the extension; missing parent directories are created.
    formats : sequence of str
        Any of ``"pdf"``, ``"png"``, ``"svg"``, ``"eps"``.
    dpi : int
        Resolution of raster formats (PNG), >= 72.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``formats``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import tempfile, pathlib
    >>> from queuetheory.plot import save_figure, subplots
    >>> fig, ax = subplots()
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = save_figure(fig, pathlib.Path(tmp) / "figure")
    ...     [p.name for p in paths], all(p.stat().st_size > 0 for p in paths)
    (['figure.pdf', 'figure.png'], True)
    """
    formats = [formats] if isinstance(formats, str) else list(formats)
    if not formats or any(f not in _FORMATS for f in formats):
        raise ValueError(f"formats must be a non-empty selection of {_FORMATS}, got {formats!r}")
    dpi = _checks.positive_int("dpi", dpi, minimum=72)
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    paths = []
    with plt.rc_context(PUBLICATION_STYLE):
        for fmt in formats:
            path = stem.parent / f"{stem.name}.{fmt}"
            fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight")
            paths.append(path)
    return paths
