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

import numpy as np

from . import _checks

__all__ = ["PUBLICATION_STYLE", "subplots", "plot_response_time", "plot_against",
           "save_figure"]

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
    if _is_prediction(obj):
        return obj.quantile(level)
    if hasattr(obj, "ppf"):
        return float(obj.ppf(level))
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
                       legend: bool = True):
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


def plot_against(xs, results, statistic="mean", ax=None, *, label: str | None = None,
                 xlabel: str | None = None, ylabel: str | None = None,
                 ci: bool = True, logy: bool = False, color=None, **kwargs):
    r"""Draw the mean or a percentile of the response time against load, ``d``, or any ``x``.

    Simulation results get confidence-interval error bars; unstable results (infinite
    response time) are not drawn: an upward triangle at the top of the axes marks the first
    ``x`` of each run of unstable results (where the instability begins).

    Parameters
    ----------
    xs : sequence of float
        The abscissae (arrival rate, load, ``d``, ...).
    results : sequence
        One per ``x``: a :class:`~queuetheory.Prediction`, a simulation result, or a number.
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
    ci : bool
        Draw the simulations' confidence intervals.
    logy : bool
        Logarithmic vertical axis.
    color : optional
        matplotlib colour of the series (default: next in the cycle).
    **kwargs
        Passed to ``Axes.plot`` / ``Axes.errorbar`` (e.g. ``marker``, ``linestyle``).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import queuetheory as qt
    >>> from queuetheory.plot import plot_against
    >>> rates = [0.3, 0.5, 0.7]
    >>> preds = [qt.analyze(qt.System(qt.RIQ(d=2), qt.IR(qt.Exponential(1.0)), arrival_rate=r))
    ...          for r in rates]
    >>> ax = plot_against(rates, preds, 0.95, label="RIQ(d=2)")
    >>> ax.get_ylabel()
    '95th percentile response time\n(mean runtime = 1)'
    """
    xs = np.asarray(xs, dtype=float).ravel()
    results = list(results)
    if xs.size != len(results) or xs.size == 0:
        raise ValueError(f"xs and results must be non-empty and of equal length, got {xs.size} "
                         f"and {len(results)}")
    name = _statistic_name(statistic)
    values = np.array([_value(obj, statistic, ci) for obj in results], dtype=float)
    finite = np.isfinite(values[:, 0])
    y = np.where(finite, values[:, 0], np.nan)
    simulated = any(_is_simulation(obj) for obj in results)
    plt = _pyplot()
    with plt.rc_context(PUBLICATION_STYLE):
        ax = _axes(ax)
        style = {"marker": "o" if simulated else ".",
                 "linestyle": "--" if simulated else "-"} | kwargs
        if simulated and ci:
            err = np.where(finite, [y - values[:, 1], values[:, 2] - y], np.nan)
            line = ax.errorbar(xs, y, yerr=err, color=color, label=label, capsize=2,
                               **style).lines[0]
        else:
            line = ax.plot(xs, y, color=color, label=label, **style)[0]
        starts = ~finite & np.concatenate([[True], finite[:-1]])
        if starts.any():
            top = ax.get_xaxis_transform()
            ax.plot(xs[starts], np.full(starts.sum(), 0.97), transform=top,
                    color=line.get_color(), marker="^", linestyle="none", clip_on=False,
                    label=f"{label}: unstable" if label else "unstable")
        if logy:
            ax.set_yscale("log")
        if xlabel is not None or not ax.get_xlabel():
            ax.set_xlabel(xlabel if xlabel is not None else "arrival rate per server")
        objs = [obj for obj in results if not isinstance(obj, int | float | np.number)]
        unit = _time_name(objs)
        if ylabel is not None or not ax.get_ylabel():
            ax.set_ylabel(ylabel if ylabel is not None else _two_lines(f"{name} {unit}"))
        if label is not None:
            ax.legend()
    return ax


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
