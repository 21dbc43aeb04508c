""":func:`validate`: the analysis beside a simulation of the finite system, with a verdict."""

from __future__ import annotations

import math
import warnings
from concurrent.futures import Executor

import numpy as np

from . import _checks
from .analysis import predict
from .export import latex_table, shown
from .prediction import AccuracyWarning, Prediction
from .simulation import SimulationResult, simulate
from .system import System

__all__ = ["validate", "ValidationReport"]

#: The largest load used in the finite-k allowance ``1 / (k (1 - rho))`` (keeps it finite).
_LOAD_CAP = 0.99


class ValidationReport:
    """The analysis beside the simulation, one row per statistic, each with a verdict.

    Built by :func:`validate`; the verdict is computed from the rows' verdicts.

    Parameters
    ----------
    system : System
        The system validated (``servers`` set to the simulated ``k``).
    prediction : Prediction or None
        The analysis, or ``None`` if no analysis exists for the policy.
    simulation : SimulationResult
        The simulation.
    rows : list of dict
        One row per statistic, each with a ``"verdict"`` key (see :attr:`rows`).
    allowance : float
        Relative finite-k allowance, >= 0 (0 for an exact finite-k analysis).
    limit : bool
        Whether the analysis is the ``k -> infinity`` limit.
    caveat : str
        What the comparison means (finite ``k`` versus the limit).
    note : str, optional
        Why there is no analysis, if there is none; default ``""``.
    confidence : float, optional
        Level of the intervals in ``rows``, in (0, 1); default 0.95.
    resolution : float, optional
        Relative error the comparison must be able to detect, > 0; default ``None`` (not
        required).

    Attributes
    ----------
    system : System
        The system validated (``servers`` set to the simulated ``k``).
    prediction : Prediction or None
        The analysis, or ``None`` if no analysis exists for the policy (see ``note``).
    simulation : SimulationResult
        The simulation.
    rows : list of dict
        Per statistic: ``statistic``, ``analysis``, ``analysis_error`` (the analysis's own
        estimated absolute error, ``None`` where it states none), ``simulation``,
        ``interval`` (low, high) at level ``confidence``, ``allowance`` (absolute finite-k
        allowance), ``verdict`` (``"agree"``, ``"disagree"`` or ``"n/a"``) and ``note``. The
        analysis disagrees where it lies beyond the interval by more than the allowance and
        its own error.
    confidence : float
        Level of the intervals in ``rows``.
    allowance : float
        Relative finite-k allowance used (0 for an exact finite-k analysis).
    limit : bool
        Whether the analysis is the ``k -> infinity`` limit.
    caveat : str
        What the comparison means (finite ``k`` versus the limit).
    verdict : str
        ``"disagree"`` if a row disagrees, else ``"inconclusive"`` if a row is inconclusive
        (its interval plus allowance, plus the analysis's own estimated error, is too wide to
        resolve ``resolution``), else ``"agree"``.
    agree : bool
        ``verdict == "agree"``.
    resolution : float or None
        Relative error the comparison must be able to detect (``None``: not required).

    Examples
    --------
    >>> import queuetheory as qt
    >>> system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    >>> report = qt.validate(system, servers=10, jobs=4000, replications=4, seed=2)
    >>> report.verdict, [row["statistic"] for row in report.rows][:2]
    ('inconclusive', ['stability', 'mean'])
    """

    def __init__(self, system: System, prediction: Prediction | None,
                 simulation: SimulationResult, rows: list[dict], allowance: float,
                 limit: bool, caveat: str, note: str = "", confidence: float = 0.95,
                 resolution: float | None = None):
        self.system = system
        self.prediction = prediction
        self.simulation = simulation
        self.rows = rows
        self.allowance = allowance
        self.limit = limit
        self.caveat = caveat
        self.note = note
        self.confidence = confidence
        self.resolution = resolution
        verdicts = {row["verdict"] for row in rows}
        self.verdict = next((v for v in ("disagree", "inconclusive") if v in verdicts), "agree")
        self.agree = self.verdict == "agree"

    def to_dict(self) -> dict:
        """Everything as plain Python values (for JSON output)."""
        return {"policy": self.system.policy.label(), "servers": self.system.servers,
                "method": None if self.prediction is None else self.prediction.method,
                "limit": self.limit, "allowance": self.allowance,
                "confidence": self.confidence, "resolution": self.resolution,
                "verdict": self.verdict, "agree": self.agree,
                "rows": [dict(row, interval=list(row["interval"])) for row in self.rows],
                "caveat": self.caveat, "note": self.note,
                "simulation": self.simulation.to_dict()}

    def __str__(self):
        sim = self.simulation
        level = f"{100 * self.confidence:g}%"
        lines = [f"Validation of {self.system.policy.label()} on k = {sim.servers} servers, "
                 f"{self.system.runtime.name} runtimes, arrival rate "
                 f"{self.system.arrival_rate:g} per server (load {self.system.load:.4g})"]
        if self.prediction is not None:
            lines.append(f"Analysis:   {self.prediction.method}")
        lines.append(f"Simulation: {sim.replications} replications x {sim.jobs} jobs "
                     f"(warm-up {sim.warmup}"
                     + (f": {sim.warmup_method}" if sim.warmup_method else "")
                     + f"), seed {sim.seed}; {level} intervals")
        if sim.batch > 1:
            lines.append(f"Times are batch completion times (batches of {sim.batch}); cost "
                         f"is per job.")
        header = (f"{'statistic':<15}{'analysis':>12}{'simulation':>12}  "
                  f"{level + ' interval':<24}{'allowance':>11}  verdict")
        lines += ["", header, "-" * len(header)]
        for row in self.rows:
            lines.append(f"{row['statistic']:<15}"
                         f"{_cell(row['analysis'], row.get('analysis_error')):>12}"
                         f"{_cell(row['simulation']):>12}  {_interval(row['interval']):<24}"
                         f"{_allow(row['allowance']):>11}  {row['verdict']}"
                         + (f" ({row['note']})" if row["note"] else ""))
        lines.append("")
        if self.note:
            lines.append(f"Note: {self.note}")
        lines.append(f"Caveat: {self.caveat}")
        lines.append("Verdict: " + self._summary() + ".")
        return "\n".join(lines)

    def _summary(self) -> str:
        bad = [row["statistic"] for row in self.rows if row["verdict"] == "disagree"]
        if bad:
            return f"DISAGREE on {', '.join(bad)}"
        unsure = [row["statistic"] for row in self.rows if row["verdict"] == "inconclusive"]
        if unsure:
            return (f"INCONCLUSIVE on {', '.join(unsure)} (no disagreement, but the intervals "
                    f"are too wide to resolve a {100 * self.resolution:g}% error; simulate "
                    f"more jobs or replications)" if self.resolution is not None
                    else f"INCONCLUSIVE on {', '.join(unsure)}")
        return "agree on every statistic compared"

    def describe(self) -> str:
        """A paragraph for a paper's methods section: both methods, the criterion, the verdict."""
        sim = self.simulation
        analysis = (f"Analysis: {self.prediction.method}." if self.prediction is not None
                    else "No analysis exists for this policy; simulation only.")
        verdict = f"Verdict: {self._summary()}"
        caveat = self.caveat[:1].upper() + self.caveat[1:]
        return (f"{analysis} {sim.describe()} Criterion: the analytic value must lie "
                f"in the simulation's {100 * self.confidence:g}% confidence interval widened by a "
                f"relative finite-k allowance of {self.allowance:.3g} and by the analysis's own "
                f"estimated error, where it states one"
                + ("" if self.resolution is None else
                   f", and the interval plus allowance and that error must be narrow enough "
                   f"(half-width at most {100 * self.resolution / 2:g}% of the value) to detect a "
                   f"{100 * self.resolution:g}% error, else the verdict is inconclusive")
                + f". {verdict}. {caveat}")

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """The comparison as a LaTeX booktabs table."""
        rows = [dict(row, low=row["interval"][0], high=row["interval"][1]) for row in self.rows]
        headers = ["Statistic", "Analysis", "Simulation",
                   f"{100 * self.confidence:g}\\% CI low", "CI high", "Verdict"]
        return latex_table(rows, ["statistic", "analysis", "simulation", "low", "high",
                                  "verdict"], headers=headers, label=label,
                           errors={"analysis": "analysis_error"},
                           caption=caption or f"Validation of {self.system.policy.label()} on "
                                              f"k = {self.simulation.servers} servers")

    def __repr__(self):
        return (f"ValidationReport({self.system.policy.label()}, k={self.system.servers}, "
                f"verdict={self.verdict!r})")


def validate(system: System, servers: int = 1000, jobs: int = 100_000, replications: int = 16,
             seed: int | None = None, *, confidence: float = 0.999,
             allowance: float | None = None, prediction: Prediction | None = None,
             simulation: SimulationResult | None = None, warmup: int | None = None,
             resolution: float | None = 0.01, workers: int | None = None,
             executor: Executor | None = None, progress: bool | None = None
             ) -> ValidationReport:
    """Compare the analysis of ``system`` with a simulation of it on ``servers`` servers.

    For each statistic the analysis gives (stability, mean, 95th and 99th percentiles, busy
    fraction, cost), the analytic value is set beside the simulated one and its confidence
    interval. The verdict is *agree* when the analytic value lies in the interval widened on
    both sides by the finite-k allowance ``allowance * |analytic value|`` and by the
    analysis's own estimated error where it states one (``Prediction.errors``, the quantiles'
    ``quantile_error``), else *disagree*; an *agree* is downgraded to *inconclusive* when that
    widened interval is too wide to detect an error of ``resolution`` (its half-width plus the
    allowance and the analysis's error exceeds ``resolution / 2`` of the value: then a true
    relative error of ``resolution`` would fall inside it about half the time or more). With
    ``resolution=None`` an analysis stating a large error can only agree or disagree beyond
    it.

    **Warm-up.** Unless ``warmup`` is given, :func:`queuetheory.simulate`'s default: twice
    the MSER (White 1997) truncation point of a pilot run from the empty system (see its
    Notes; the report's simulation states the warm-up and how it was chosen). The fixed rule
    ``10 k / (1 - rho)`` used before was too short at high variance (RIQ(3) at k = 1000 with
    hyperexponential X: 31,251 jobs where the pilot finds a transient of about 45,000).

    **The finite-k allowance.** Most analyses are the ``k -> infinity`` (mean-field) limit,
    which a system of ``k`` servers approaches at rate ``O(1/k)``. The default relative
    allowance is ``1 / (k (1 - rho))``, with ``rho`` the larger of the offered load and the
    simulated busy fraction (capped at 0.99). It was chosen from simulations of RIQ with the
    Facebook S&X runtimes (``k`` = 10 to 300): the relative gap between simulation and limit
    was about ``1/k`` at load 0.7 (d = 3) and up to ``3.4/k`` at load 0.9 (d = 5, 99th
    percentile), i.e. about ``0.3 / (k (1 - rho))``; the default is three times that. When the
    analysis is exact for the finite ``k`` (``Prediction.limit`` is False) the allowance is 0.

    Parameters
    ----------
    system : System
        The system (its own ``servers`` is ignored in favour of ``servers``).
    servers : int
        Servers ``k`` of the simulated system (default 1000).
    jobs, replications, seed, workers, executor, progress
        Simulation size and execution, see :func:`queuetheory.simulate`.
    confidence : float
        Level of the intervals the verdicts use (default 0.999: a correct analysis is called
        *disagree* on one statistic about once in a thousand, beyond the allowance), also
        when a ``simulation`` is passed in.
    allowance : float, optional
        Relative finite-k allowance (>= 0) instead of the default rule.
    prediction : Prediction, optional
        Use this analysis instead of ``qt.analyze`` (e.g. one from an alternative method).
    simulation : SimulationResult, optional
        Use this simulation of the same system instead of running one (``ValueError`` if it
        simulated another system).
    warmup : int, optional
        Jobs discarded per replication; default: chosen by the MSER pilot of
        :func:`queuetheory.simulate` (see above).
    resolution : float or None
        Relative error (> 0) every compared statistic must be able to reveal for an *agree*
        (default 0.01); ``None`` accepts any interval width.

    Returns
    -------
    ValidationReport
        ``str(report)`` is a table; ``report.to_dict()`` the same as plain values.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> system = qt.System(qt.RIQ(d=3), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
    ...                    arrival_rate=0.7)
    >>> report = qt.validate(system, servers=100, jobs=2000, replications=4, seed=1)
    >>> [row["statistic"] for row in report.rows]
    ['stability', 'mean', 'p95', 'p99', 'busy fraction', 'cost']
    >>> "k -> infinity" in report.caveat
    True

    References
    ----------
    .. [1] K. P. White Jr., "An effective truncation heuristic for bias reduction in
       simulation output", Simulation 69(6), 323-334, 1997 (MSER).
    .. [2] K. P. White Jr., M. J. Cobb, S. C. Spratt, "A comparison of five steady-state
       truncation heuristics for simulation", Proc. Winter Simulation Conference 2000.
    """
    if not isinstance(system, System):
        raise ValueError(f"system must be a qt.System, got {system!r}")
    servers = _checks.positive_int("servers", servers)
    system = system.replace(servers=servers)
    if allowance is not None:
        allowance = _checks.nonnegative("allowance", allowance)
    level = float(_checks.probability_level("confidence", confidence))
    if resolution is not None:
        resolution = _checks.positive("resolution", resolution)
    if prediction is not None and not isinstance(prediction, Prediction):
        raise ValueError(f"prediction must be a qt.Prediction, got {prediction!r}")
    if simulation is None:
        jobs = _checks.positive_int("jobs", jobs)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)
        seed = _checks.positive_int("seed", seed, minimum=0)
        simulation = simulate(system, jobs=jobs, replications=replications, seed=seed,
                              warmup=warmup, workers=workers, executor=executor,
                              progress=progress, confidence=level)
    elif not isinstance(simulation, SimulationResult):
        raise ValueError(f"simulation must be a qt.SimulationResult, got {simulation!r}")
    elif simulation.servers != servers:
        raise ValueError(f"servers must match the simulation's {simulation.servers}, got "
                         f"{servers}")
    elif not _same_system(system, simulation.system):
        raise ValueError(f"simulation must be a simulation of system: it simulated "
                         f"{simulation.system.describe()}, not {system.describe()}")
    note = ""
    if prediction is None:
        try:
            with warnings.catch_warnings():  # the caveat below states the finite-k gap
                warnings.simplefilter("ignore", AccuracyWarning)
                prediction = predict(system)
        except NotImplementedError as exc:
            note = f"no analysis available ({exc}); simulation only"
    if prediction is None:
        rows = _simulation_rows(simulation)
        caveat = "nothing to compare: the figures are the simulation's alone."
        return ValidationReport(system, None, simulation, rows, 0.0, False, caveat, note,
                                level, resolution)
    limit = prediction.limit
    if allowance is None:
        rho = min(max(system.load, simulation.busy_fraction), _LOAD_CAP)
        allowance = 1.0 / (servers * (1.0 - rho)) if limit else 0.0
    rows = _compare(prediction, simulation, allowance, level, resolution)
    if limit:
        caveat = (f"the analysis is the k -> infinity limit; the simulated system has k = "
                  f"{servers} servers, whose statistics differ from the limit by O(1/k). "
                  f"Intervals are widened by a relative finite-k allowance of "
                  f"{100 * allowance:.3g}% (1 / (k (1 - rho)), rho = "
                  f"{min(max(system.load, simulation.busy_fraction), _LOAD_CAP):.3g}).")
        if prediction.finite_k_gap is not None:
            caveat += f" Map of simulated gaps: {prediction.finite_k_gap.describe()}."
    else:
        caveat = (f"the analysis claims to be exact for k = {servers}; no finite-k "
                  f"allowance ({100 * allowance:.3g}%) beyond the confidence interval.")
    return ValidationReport(system, prediction, simulation, rows, allowance, limit, caveat,
                            note, level, resolution)


def _same_system(a: System, b: System) -> bool:
    """Whether two systems are the same model (runtime laws compared by their repr and the
    first moments of the fastest of one and two replicas)."""
    if a == b:
        return True
    if (a.policy != b.policy or a.servers != b.servers
            or not math.isclose(a.arrival_rate, b.arrival_rate, rel_tol=1e-12)
            or repr(a.interarrival) != repr(b.interarrival)
            or type(a.runtime) is not type(b.runtime) or repr(a.runtime) != repr(b.runtime)):
        return False
    keys = [(1, 1), (1, 2)] + ([(2, 1)] if a.policy.polled > 1 else [])
    return all(x == y or math.isclose(x, y, rel_tol=1e-12)
               for x, y in ((a.runtime.fastest_moment(*key), b.runtime.fastest_moment(*key))
                            for key in keys))


def _compare(prediction: Prediction, sim: SimulationResult, allowance: float,
             level: float, resolution: float | None) -> list[dict]:
    rows = [_stability_row(prediction.stable, sim)]
    both_unstable = not prediction.stable and not sim.stable
    per = sim.per_replication
    positive = (0.0, math.inf)
    mean_ci = sim.interval(per["mean"], level, positive) if sim.stable else sim.mean_ci
    errors = prediction.errors if prediction.stable else {}
    candidates = [("mean", prediction.mean, errors.get("mean"), sim.mean, mean_ci)]
    for q in (0.95, 0.99):
        try:
            value = prediction.quantile(q)
        except NotImplementedError:
            value = None
        error = None if value is None else prediction.quantile_error(q)
        simulated, interval = ((sim.quantile(q), sim.quantile_ci(q, level)) if sim.stable
                               else (math.inf, (math.inf, math.inf)))
        candidates.append((f"p{round(100 * q)}", value, error, simulated, interval))
    candidates.append(("busy fraction", prediction.busy_fraction,
                       errors.get("busy_fraction"), sim.busy_fraction,
                       sim.interval(per["busy_fraction"], level, support=(0.0, 1.0))))
    candidates.append(("cost", prediction.cost, prediction.cost_error if errors else None,
                       sim.cost, sim.interval(per["cost"], level, positive)))
    for name, value, error, simulated, interval in candidates:
        error = error if error is not None and math.isfinite(error) else None
        row = {"statistic": name, "analysis": value, "analysis_error": error,
               "simulation": simulated, "interval": interval, "allowance": None,
               "verdict": "n/a", "note": ""}
        if value is None:
            row["note"] = "not given by the analysis"
        elif name in ("mean", "p95", "p99") and (both_unstable or not math.isfinite(value)
                                                 or not sim.stable):
            row["note"] = ("both unstable" if both_unstable
                           else "see stability")
        else:
            value = float(value)
            row["analysis"] = value
            room = allowance * abs(value)
            row["allowance"] = room
            own = error or 0.0   # the analysis's own estimated error
            low, high = interval
            if not low - room - own <= value <= high + room + own:
                row["verdict"] = "disagree"
            elif (resolution is not None
                  and (high - low) / 2 + room + own > resolution / 2 * abs(value)):
                row["verdict"] = "inconclusive"
                row["note"] = (f"interval +-{100 * (high - low) / 2 / abs(value):.3g}% plus "
                               f"allowance {100 * room / abs(value):.3g}%"
                               + (f" plus the analysis's error {100 * own / abs(value):.3g}%"
                                  if own > 0.01 * room else "")
                               + f": cannot resolve a {100 * resolution:g}% error")
            else:
                row["verdict"] = "agree"
        rows.append(row)
    return rows


def _stability_row(stable: bool, sim: SimulationResult) -> dict:
    if sim.stable is None:
        verdict = "inconclusive"
    else:
        verdict = "agree" if stable == sim.stable else "disagree"
    return {"statistic": "stability", "analysis": "stable" if stable else "unstable",
            "analysis_error": None, "simulation": sim.verdict, "interval": (None, None),
            "allowance": None, "verdict": verdict,
            "note": "" if verdict == "agree" else sim.stability}


def _simulation_rows(sim: SimulationResult) -> list[dict]:
    rows = [{"statistic": "stability", "analysis": None, "analysis_error": None,
             "simulation": sim.verdict, "interval": (None, None),
             "allowance": None, "verdict": "n/a", "note": "" if sim.stable else sim.stability}]
    values = [("mean", sim.mean, sim.mean_ci)]
    if sim.stable:
        values += [(f"p{round(100 * q)}", sim.quantile(q), sim.quantile_ci(q))
                   for q in (0.95, 0.99)]
    values += [("busy fraction", sim.busy_fraction, sim.busy_fraction_ci),
               ("cost", sim.cost, sim.cost_ci)]
    rows += [{"statistic": name, "analysis": None, "analysis_error": None, "simulation": value,
              "interval": interval, "allowance": None, "verdict": "n/a", "note": "no analysis"}
             for name, value, interval in values]
    return rows


def _cell(value, error: float | None = None) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return shown(value, error, digits=6)


def _interval(interval) -> str:
    low, high = interval
    if low is None:
        return ""
    return f"[{low:.6g}, {high:.6g}]"


def _allow(value) -> str:
    return "" if value is None else f"+-{value:.3g}"
