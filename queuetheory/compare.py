"""Tables across policies, degrees of redundancy and loads: analysis and simulation side by side."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

import numpy as np

from . import _checks, _progress
from .analysis import predict, settings, under
from .export import csv_table, flat_rows, html_table, latex_table, short_repr, text_table
from .policies import Policy, from_name, policy_class
from .runtime import RuntimeModel
from .simulation import simulate as run_simulation
from .system import System

__all__ = ["compare", "Comparison", "PARALLEL_MIN_JOBS"]

#: ``compare(..., workers=N)`` runs its simulations in N processes only when they simulate at
#: least this many jobs in total (warm-up included); smaller sweeps run serially. Measured on
#: 2 cores (RIQ(3), Facebook S&X, k = 100): the engine simulates about 5e5 jobs/s, and a
#: process pool costs about 0.25 s to start (5,000 jobs x 8 replications: 0.14 s serial,
#: 0.38 s with workers=2), so a pool pays off from about 1 s of serial work.
PARALLEL_MIN_JOBS = 500_000


class Comparison:
    """The table produced by :func:`compare`: one row per arrival rate, policy and source.

    Each row holds ``arrival_rate``, ``load``, ``policy`` (label), ``d``, ``source``
    (``analysis`` or ``simulation``), ``servers``, ``stable``, ``mean``, one ``pXX`` per
    quantile, ``cost``, ``busy_fraction`` and ``method``. Analysed rows also hold ``exact``
    and, where the ``k -> infinity`` limit stands in for ``servers``, the estimated relative
    ``finite_k_gap`` of the mean and its ``finite_k_gap_range`` (``None`` where the gap is
    unknown; see :mod:`queuetheory.analysis.finite_k`), and where the method estimates them
    the absolute errors ``mean_error``, ``pXX_error``, ``cost_error`` and
    ``busy_fraction_error`` (:attr:`Prediction.errors`, ``quantile_error``). Simulated rows
    also hold the
    confidence interval of every statistic, under ``mean_ci``, ``pXX_ci``, ``cost_ci`` and
    ``busy_fraction_ci`` (pairs ``(low, high)`` at level ``confidence``), and the simulation's
    ``replications``, ``jobs`` and ``seed``.

    ``str()`` is an aligned text table, :meth:`to_latex` a booktabs table, Jupyter shows an
    HTML table; :meth:`to_csv`, :meth:`to_pandas` and :meth:`to_dict` give every value at
    full precision. Tables show 4 significant digits (``digits=`` changes it), each
    simulated value with its interval, and an analysed value whose estimated error exceeds
    half a unit of its last digit as ``value +- error`` (only the digits the error supports:
    the value rounded at the error's second significant digit).

    Parameters
    ----------
    rows : list of dict
        The rows described above (as :func:`compare` builds them), kept as given.
    quantiles : sequence of float
        The quantile levels of the ``pXX`` columns, each in (0, 1).
    setting : str
        The runtime model and the arrival rates, in words (the first line of ``str()``).
    confidence : float, optional
        Level of the simulated intervals, in (0, 1); default 0.95.
    caption : str, optional
        Caption of the LaTeX and HTML tables; default ``setting``.

    Attributes
    ----------
    rows : list of dict
        The rows described above.
    quantiles : tuple of float
        The quantile levels of the ``pXX`` columns.
    setting : str
        The runtime model and the arrival rates, in words.
    confidence : float
        Level of the simulated intervals.

    Examples
    --------
    >>> import queuetheory as qt
    >>> table = qt.compare(qt.IR(qt.Exponential(1.0)), 0.5, policies=["random", "riq"], d=[2])
    >>> table.columns
    ['policy', 'source', 'stable', 'mean', 'p95', 'p99', 'cost']
    >>> print(table)
    IR runtimes IR(R=Exponential(rate=1)), arrival rate 0.5 per server (load 0.5)
    policy    source    stable   mean    p95    p99   cost
    --------  --------  ------  -----  -----  -----  -----
    Random    analysis  yes     2.000  5.991  9.210  1.000
    RIQ(d=2)  analysis  yes     1.167  3.700  5.843  1.000
    >>> qt.Comparison(table.rows[:1], table.quantiles, "IR, load 0.5")
    Comparison(1 rows; IR, load 0.5)
    """

    def __init__(self, rows: list[dict], quantiles: Sequence[float], setting: str, *,
                 confidence: float = 0.95, caption: str = ""):
        self.rows = rows
        self.quantiles = tuple(quantiles)
        self.setting = setting
        self.confidence = confidence
        self.caption = caption or setting

    @property
    def columns(self) -> list[str]:
        """The columns shown by ``str()``, :meth:`to_latex` and the HTML table."""
        rates = {row["arrival_rate"] for row in self.rows}
        return ((["arrival_rate", "load"] if len(rates) > 1 else []) + ["policy", "source",
                "stable", "mean"] + [_quantile_key(q) for q in self.quantiles] + ["cost"])

    @property
    def _intervals(self) -> dict[str, str]:
        return {c: f"{c}_ci" for c in ["mean", "cost"]
                + [_quantile_key(q) for q in self.quantiles]}

    @property
    def _errors(self) -> dict[str, str]:
        return {c: f"{c}_error" for c in ["mean", "cost"]
                + [_quantile_key(q) for q in self.quantiles]}

    def _headers(self, latex: bool) -> list[str]:
        names = {"arrival_rate": r"$\lambda$" if latex else "arrival_rate",
                 "load": r"$\rho$" if latex else "load", "policy": "Policy", "source": "Source",
                 "stable": "Stable", "mean": r"$E[T]$" if latex else "mean", "cost": "Cost"}
        for q in self.quantiles:
            key = _quantile_key(q)
            names[key] = rf"$T_{{{100 * q:g}}}$" if latex else key
        if not latex:
            names.update(policy="policy", source="source", stable="stable", cost="cost")
        return [names[c] for c in self.columns]

    def __str__(self):
        table = text_table(self.rows, self.columns, intervals=self._intervals,
                           errors=self._errors)
        return f"{self.setting}\n{table}" + self._ci_note()

    def _ci_note(self) -> str:
        if any(row["source"] != "analysis" for row in self.rows):
            return (f"\n[low, high]: {100 * self.confidence:g}% confidence interval of the "
                    f"simulation")
        return ""

    def __repr__(self):
        return f"Comparison({len(self.rows)} rows; {self.setting})"

    def _repr_html_(self) -> str:
        return html_table(self.rows, self.columns, caption=self.caption.replace("$", ""),
                          intervals=self._intervals, errors=self._errors)

    def to_latex(self, caption: str | None = None, label: str | None = None,
                 digits: int = 4) -> str:
        """A LaTeX booktabs table of the comparison (needs ``\\usepackage{booktabs}``).

        Parameters
        ----------
        caption : str, optional
            Caption; text is escaped, ``$...$`` math kept. Default: a short description of
            the setting and of the intervals.
        label : str, optional
            ``\\label`` of the table.
        digits : int
            Significant digits.
        """
        return latex_table(self.rows, self.columns, headers=self._headers(latex=True),
                           caption=caption or self.caption, label=label, digits=digits,
                           intervals=self._intervals, errors=self._errors)

    def to_csv(self, path: str | Path | None = None) -> str:
        """Every row and column at full precision as CSV (intervals as ``..._ci_low`` and
        ``..._ci_high``); written to ``path`` if given. Returns the CSV text."""
        text = csv_table(self.rows)
        if path is not None:
            Path(path).write_text(text)
        return text

    def to_pandas(self):
        """The rows as a ``pandas.DataFrame`` (intervals split as in :meth:`to_csv`).

        Needs pandas (``pip install "queuetheory[pandas]"``).
        """
        try:
            import pandas
        except ImportError as exc:
            raise ImportError('Comparison.to_pandas needs pandas: pip install '
                              '"queuetheory[pandas]"') from exc
        return pandas.DataFrame(flat_rows(self.rows))

    def describe(self) -> str:
        """A paragraph for a paper's methods section: the setting and every method used."""
        methods = sorted({row["method"] for row in self.rows if row.get("method")})
        return (f"Setting: {self.setting}. Methods: " + "; ".join(methods) + ". Cost is the "
                "expected server time per job, cancelled replicas included.")

    def to_dict(self) -> dict:
        """Setting, quantiles, confidence level and rows (intervals as lists) as plain data,
        JSON-ready except for infinities."""
        rows = [{k: list(v) if isinstance(v, tuple) else v for k, v in row.items()}
                for row in self.rows]
        return {"setting": self.setting, "quantiles": list(self.quantiles),
                "confidence": self.confidence, "rows": rows}


def _quantile_key(q: float) -> str:
    return f"p{100 * q:g}"


def _systems(runtime, rate, policies, d, servers, remove) -> list[System]:
    systems = []
    for entry in policies:
        if isinstance(entry, Policy):
            found = [entry]
        elif not isinstance(entry, str):
            raise ValueError(f"policies must hold names or qt.Policy objects, got {entry!r}")
        elif not policy_class(entry)[0].uses_d:
            found = [from_name(entry)]
        else:
            found = [from_name(entry, k) for k in d]
        if remove is not None:
            found = [dataclasses.replace(p, remove=remove) if hasattr(p, "remove") else p
                     for p in found]
        systems += [System(p, runtime, rate, servers=servers) for p in found]
    return systems



def _items(name: str, value, what: str, single: type | tuple = ()) -> list:
    """``value`` as a list: a number (a numpy scalar or 0-d array too) or a ``single`` as one
    item, a sequence as its items; anything else a ValueError naming ``name``."""
    value = _checks._scalar(value)
    if isinstance(value, numbers.Number | np.generic) or (single and isinstance(value, single)):
        return [value]
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise ValueError(f"{name} must be one of {what} or a sequence of them, got {value!r}")
    return list(value)

def compare(runtime: RuntimeModel, arrival_rate: float | Sequence[float], *,
            policies: Sequence[str | Policy] = ("random", "riq", "redundancy"),
            d: Sequence[int] = (2, 3, 5), quantiles: Sequence[float] = (0.95, 0.99),
            servers: int | None = None, simulate: bool = False, jobs: int = 200_000,
            replications: int = 8, seed: int = 0, remove: bool | None = None,
            confidence: float = 0.95, workers: int | None = None,
            executor: Executor | None = None, progress: bool | None = None) -> Comparison:
    """Tabulate mean, percentiles, cost and stability across loads, policies and degrees ``d``.

    Analysis is used wherever :func:`analyze` has a method; with ``simulate=True`` every
    system is also simulated on ``servers`` servers (rows with ``source`` "simulation", every
    statistic with its confidence interval), and systems without an analysis come from
    simulation only.

    Parameters
    ----------
    runtime : RuntimeModel
        ``qt.SX(X, S)`` or ``qt.IR(R)``.
    arrival_rate : float or sequence of float
        Jobs per unit time per server; a sequence gives a sweep (rows for every rate).
    policies : sequence of str or Policy
        Names as in :func:`queuetheory.policies.from_name` (expanded over ``d``; a policy
        without ``d``, such as ``random``, appears once) or policy objects (used as given).
    d : sequence of int
        Degrees of redundancy for named policies (for ``mds:N`` the number of coded extras).
    quantiles : sequence of float
        Response-time quantile levels, each in (0, 1).
    servers : int, optional
        Number of servers ``k``: the analysis uses an exact finite-``k`` method where one exists
        (else the ``k -> infinity`` limit, as its ``method`` says) and the simulation runs on
        ``k`` servers. Default: the limit for the analysis, 1000 servers for simulation.
    simulate : bool
        Add simulated rows (with confidence intervals) beside the analytic ones.
    jobs, replications, seed : int
        Simulation size per replication and seed (see :func:`queuetheory.simulate`); every
        system is simulated with the same seed (common random numbers, paired arrival by
        arrival where the default warm-ups of two systems coincide).
    remove : bool, optional
        For named batch policies (``mds:N``, ``replication:N``): cancel the redundant tasks
        when the batch (job) completes (``True``, the default of the policies) or not.
    confidence : float
        Level of the simulated intervals, in (0, 1); default 0.95.
    workers : int, optional
        Analyse and simulate the systems in this many processes, one system per task, when
        the sweep simulates at least :data:`PARALLEL_MIN_JOBS` jobs in total; smaller sweeps
        and sweeps without simulation run serially (a process pool would make them slower).
        The numbers do not depend on it.
    executor : concurrent.futures.Executor, optional
        Analyse and simulate the systems through this executor (e.g. dask's), whatever the
        size.
    progress : bool, optional
        A progress bar over the table's rows (tqdm, with ETA) on stderr. Default: only when
        stderr is a terminal.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> table = qt.compare(qt.SX(qt.Exponential(S.mean()), S), 0.7, policies=["random", "riq"],
    ...                    d=[3])
    >>> [(row["policy"], round(row["mean"], 4)) for row in table.rows]
    [('Random', 4.3459), ('RIQ(d=3)', 1.7777)]
    >>> sweep = qt.compare(qt.IR(qt.Exponential(1.0)), [0.3, 0.6], policies=["riq"], d=[2, 3])
    >>> [(row["arrival_rate"], row["d"]) for row in sweep.rows]
    [(0.3, 2), (0.3, 3), (0.6, 2), (0.6, 3)]
    """
    rates = _items("arrival_rate", arrival_rate, "numbers")
    if not rates:
        raise ValueError("arrival_rate must be a number or a non-empty sequence of numbers")
    policies = _items("policies", policies, "policies (names or Policy objects)",
                      single=str | Policy)
    d = _items("d", d, "integers")
    if not policies:
        raise ValueError("policies must name at least one policy")
    if not d and any(isinstance(p, str) and policy_class(p)[0].uses_d for p in policies):
        raise ValueError("d must hold at least one degree of redundancy")
    quantiles = [float(_checks.probability_level("quantiles", q))
                 for q in _items("quantiles", quantiles, "levels in (0, 1)")]
    level = float(_checks.probability_level("confidence", confidence))
    if remove is not None and not isinstance(remove, bool | np.bool_):
        raise ValueError(f"remove must be True, False or None, got {remove!r}")
    if simulate:
        servers_sim = _checks.positive_int("servers", servers if servers is not None else 1000)
        jobs = _checks.positive_int("jobs", jobs)
        replications = _checks.positive_int("replications", replications, minimum=2)
        seed = _checks.positive_int("seed", seed, minimum=0)
    if workers is not None:
        workers = _checks.positive_int("workers", workers)
        if executor is not None:
            raise ValueError("give workers or executor, not both")
    if executor is not None and not isinstance(executor, Executor):
        raise ValueError(f"executor must be a concurrent.futures.Executor, got {executor!r}")
    grid = [(rate, _systems(runtime, rate, policies, d, servers,
                            None if remove is None else bool(remove))) for rate in rates]
    todo = [s for _, systems in grid for s in systems]
    calls = [(_analysed_row, (system, quantiles), {}) for system in todo]
    size = 0.0
    if simulate:
        options = {"servers": servers_sim, "jobs": jobs, "replications": replications,
                   "seed": seed, "confidence": level, "progress": False}
        calls += [(run_simulation, (system,), options) for system in todo]
        size = len(todo) * replications * jobs * 1.25  # warm-up included, roughly
    parallel = executor is not None or (workers is not None and workers > 1 and simulate
                                        and size >= PARALLEL_MIN_JOBS)
    bar = _progress.Bar(len(calls), "compare", unit="row", show=_progress.wanted(progress))
    try:
        if not parallel:
            results = []
            for fn, args, kwargs in calls:
                results.append(fn(*args, **kwargs))
                bar.advance()
        elif executor is not None:
            results = _fan_out(executor, calls, bar)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                results = _fan_out(pool, calls, bar)
    finally:
        bar.close()
    analysed = dict(zip(map(id, todo), results[:len(todo)]))
    sims = dict(zip(map(id, todo), results[len(todo):]))
    rows = []
    for _, systems in grid:
        for system in systems:
            row = analysed[id(system)]
            if "note" not in row or not simulate:
                rows.append(row)
            if simulate:
                rows.append(_simulated_row(sims[id(system)], quantiles))
    load_text = ", ".join(f"{s[0].load:.3g}" for _, s in grid)
    rate_text = ", ".join(f"{rate:g}" for rate, _ in grid)
    plural = "s" if len(grid) > 1 else ""
    setting = (f"{runtime.name} runtimes {short_repr(runtime)}, arrival rate{plural} "
               f"{rate_text} per server (load{plural} {load_text})")
    caption = (f"Response time $T$ under {runtime.name} runtimes (mean runtime "
               f"{runtime.mean_runtime():.4g}) at load{plural} {load_text}")
    if simulate:
        caption += (f"; simulated on $k$ = {servers_sim} servers, {replications} replications, "
                    f"{100 * level:g}% confidence intervals in brackets")
    return Comparison(rows, quantiles, setting, confidence=level, caption=caption + ".")


def _fan_out(executor: Executor, calls, bar) -> list:
    """Run ``(function, args, kwargs)`` calls through ``executor``; results in call order. The
    accuracy goal and the grid budget of the caller (:func:`.analysis.accuracy_goal`,
    :func:`.analysis.grid_budget`: context variables, which worker threads and processes do
    not inherit) go with each call."""
    solved = settings()
    futures = [executor.submit(_under_settings, solved, fn, *args, **kwargs)
               for fn, args, kwargs in calls]
    results = []
    for future in futures:
        results.append(future.result())
        bar.advance()
    return results


def _base(system: System) -> dict:
    policy = system.policy
    return {"arrival_rate": system.arrival_rate, "load": system.load, "policy": policy.label(),
            "d": getattr(policy, "d", getattr(policy, "m", None))}


def _analysed_row(system: System, quantiles: Sequence[float]) -> dict:
    """The analysis's row; without an analysis a row saying why (with a ``note``)."""
    try:
        p = predict(system)
    except NotImplementedError as exc:
        return _base(system) | {"source": "analysis", "servers": system.servers,
                                "stable": None, "method": "no analysis (simulate it)",
                                "note": str(exc)}
    row = _base(system) | {"source": "analysis", "servers": system.servers,
                           "stable": p.stable, "mean": p.mean}
    errors = {"mean_error": p.errors.get("mean")} if p.stable else {}
    for q in quantiles:
        key = _quantile_key(q)
        try:
            row[key] = p.quantile(q)
        except NotImplementedError:
            row[key] = None
            continue
        errors[f"{key}_error"] = p.quantile_error(q)
    if p.stable:
        errors |= {"busy_fraction_error": p.errors.get("busy_fraction"),
                   "cost_error": p.cost_error}
    gap = p.finite_k_gap
    row |= {"cost": p.cost, "busy_fraction": p.busy_fraction, "method": p.method,
            "exact": p.exact, "finite_k_gap": None if gap is None else gap.mean,
            "finite_k_gap_range": None if gap is None else gap.mean_interval}
    return row | {key: value for key, value in errors.items() if value is not None}


def _simulated_row(sim, quantiles: Sequence[float]) -> dict:
    row = _base(sim.system) | {"source": f"simulation k={sim.servers}", "servers": sim.servers,
                               "stable": sim.stable, "mean": sim.mean,
                               "mean_ci": tuple(sim.mean_ci)}
    for q in quantiles:
        key = _quantile_key(q)
        row[key] = sim.quantile(q) if sim.stable else math.inf
        row[f"{key}_ci"] = tuple(sim.quantile_ci(q)) if sim.stable else (math.inf, math.inf)
    row |= {"cost": sim.cost, "cost_ci": tuple(sim.cost_ci),
            "busy_fraction": sim.busy_fraction, "busy_fraction_ci": tuple(sim.busy_fraction_ci),
            "method": "simulation", "replications": sim.replications, "jobs": sim.jobs,
            "seed": sim.seed}
    return row


def _under_settings(solved: tuple[float, float], fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` under the accuracy goal and grid budget ``solved`` (in a
    worker)."""
    with under(solved):
        return fn(*args, **kwargs)
