"""Which MDS code matches replication? A study on top of the analysis and the simulator.

:func:`smallest_matching_code` compares MDS(n, m) with Replication(n, d) for growing ``m`` by
the k -> infinity analysis (:mod:`queuetheory.analysis.mds`, :mod:`queuetheory.analysis.removal`)
or, on request or where no analysis exists, by simulation (:func:`queuetheory.simulate`).

References
----------
.. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion times",
   Operations Research Letters 49(1), 2021 (arXiv:1907.11052).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

from . import _checks
from .analysis import GOAL, accuracy_goal, goal_text, predict
from .policies import MDS, Replication
from .runtime import SX, RuntimeModel
from .simulation import simulate
from .system import System

__all__ = ["CodeMatch", "smallest_matching_code"]


@dataclass(frozen=True)
class CodeMatch:
    """Result of :func:`smallest_matching_code`.

    Attributes
    ----------
    m : int or None
        Smallest number of redundant coded jobs for which MDS(n, m) is at least as good as
        Replication(n, d) in both the mean and the percentile (``None`` if none up to
        ``m_max``).
    n, d : int
        Batch size and replication factor.
    remove : bool
        Whether redundant tasks are removed (at batch completion for MDS, at job completion
        for replication).
    percentile : float
        The percentile compared (e.g. 0.99).
    method : str
        ``"analysis"`` (k -> infinity) or ``"simulation"`` (finite k, with CIs).
    replication : dict
        Mean, percentile and stability of Replication(n, d): with ``"analysis"`` their stated
        errors (``mean_error``, ``quantile_error``: absolute; ``None`` for a law without an
        estimate, whose value then counts as exact) and ``goal``, the relative
        accuracy the analysis was asked for (1e-2 in the first pass, 1e-6 where a verdict
        needed it; closed forms and the other cheap methods do better, as their stated
        errors show); with ``"simulation"`` their 95% confidence intervals (``mean_ci``,
        ``quantile_ci``).
    candidates : tuple of dict
        The same for every MDS(n, m) tried, with a verdict per statistic: ``"better"`` or
        ``"worse"`` when the values differ by more than their stated errors (analysis) or
        their confidence intervals do not overlap (simulation), else ``"not
        distinguishable"`` (two unstable simulations too); with the analysis ``"equal"`` when
        both are infinite or equal to rounding.
    stability : dict
        Stability region (critical ``arrival_rate``) of each policy, with what is proved.
    assumptions : tuple of str
        What the answer assumes (runtime model, load, removal, k).
    """

    m: int | None
    n: int
    d: int
    remove: bool
    arrival_rate: float
    runtime: str
    percentile: float
    method: str
    replication: dict
    candidates: tuple = ()
    stability: dict = field(default_factory=dict)
    assumptions: tuple = ()

    def describe(self) -> str:
        """A paragraph with the answer and the assumptions it holds under."""
        found = (f"MDS(n={self.n}, m={self.m}) is the smallest code at least as good as "
                 f"Replication(n={self.n}, d={self.d})" if self.m is not None else
                 f"no MDS(n={self.n}, m) with m <= {self.candidates[-1]['m']} is at least as good "
                 f"as Replication(n={self.n}, d={self.d})")
        return (f"{found} in the mean and the {100 * self.percentile:g}th percentile "
                f"({self.method}). Assumptions: " + "; ".join(self.assumptions) + ".")


def _verdict(mds: float, rep: float, mds_error: float = 0.0, rep_error: float = 0.0,
             mds_ci=None, rep_ci=None) -> str:
    """MDS against replication for one statistic: ``"better"`` or ``"worse"`` when the values
    differ by more than their stated errors (analysis) or their confidence intervals do not
    overlap (simulation), else ``"not distinguishable"``; without intervals ``"equal"`` when
    both are infinite (both unstable) or the values are the same to rounding."""
    if mds_ci is not None and rep_ci is not None:
        if mds_ci[1] < rep_ci[0]:
            return "better"
        if mds_ci[0] > rep_ci[1]:
            return "worse"
        return "not distinguishable"
    if math.isinf(mds) and math.isinf(rep) or math.isclose(mds, rep, rel_tol=1e-12):
        return "equal"
    if abs(mds - rep) <= mds_error + rep_error:
        return "not distinguishable"
    return "better" if mds < rep else "worse"


def smallest_matching_code(n: int, d: int, runtime: RuntimeModel, arrival_rate: float, *,
                           remove: bool = False, percentile: float = 0.99,
                           method: str | None = None, m_max: int | None = None,
                           servers: int = 1000, jobs: int = 200_000, replications: int = 5,
                           seed: int | None = 0) -> CodeMatch:
    """The smallest ``m`` for which MDS(n, m) is at least as good as Replication(n, d).

    "At least as good" means a mean and a ``percentile`` of the batch completion time not
    larger than replication's: a comparison that the analysis's stated errors (or the
    simulation's 95% confidence intervals) cannot decide is reported as "not distinguishable"
    and counts as a match. Stability matters: an unstable policy has infinite times.

    The analysis is solved in two passes: first to a relative accuracy of 1e-2
    (:func:`queuetheory.accuracy_goal`: the grids with removal stop early, the other
    methods are exact or reach 1e-6 anyway), and only where the values differ by less than
    three times those errors, both values again to the 1e-6 goal. The values in the result
    carry their stated errors and the goal they were solved to; :func:`queuetheory.analyze`
    gives any of them to 1e-6.

    Parameters
    ----------
    n : int
        Jobs per batch, >= 1.
    d : int
        Copies per job under replication, >= 1.
    runtime : RuntimeModel
        :class:`~queuetheory.SX` (all tasks of a batch share its job size) or
        :class:`~queuetheory.IR`.
    arrival_rate : float
        Original jobs per unit time per server, > 0.
    remove : bool, optional
        Remove redundant tasks (MDS: at batch completion; replication: a job's other copies at
        its completion). Default False.
    percentile : float, optional
        Level in (0, 1) of the compared percentile; default 0.99.
    method : {"analysis", "simulation"}, optional
        Default: ``"analysis"`` (k -> infinity: exact without removal; with removal the
        mean-field solution of :mod:`queuetheory.analysis.removal`), else ``"simulation"``.
    m_max : int, optional
        Largest ``m`` tried; default ``n (d - 1)`` (as many tasks as replication) or at least 1.
    servers, jobs, replications, seed : optional
        Passed to :func:`queuetheory.simulate` (simulation only).

    Returns
    -------
    CodeMatch
        The answer, the numbers behind it, the stability regions and the assumptions.

    Raises
    ------
    NotImplementedError
        With ``method="analysis"`` where the analysis refuses a system (e.g. with removal, a
        slowdown mixing atoms with a density, or heavy tails): use ``method="simulation"``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> r = qt.smallest_matching_code(4, 2, qt.IR(qt.Exponential(1.0)), 0.3)
    >>> r.m, r.candidates[r.m]["mean_verdict"]
    (1, 'better')

    References
    ----------
    .. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion
       times", Operations Research Letters 49(1), 2021 (arXiv:1907.11052).
    """
    n = _checks.positive_int("n", n)
    d = _checks.positive_int("d", d)
    if not isinstance(runtime, RuntimeModel):
        raise ValueError(f"runtime must be qt.SX(X, S) or qt.IR(R), got {runtime!r}")
    lam = _checks.positive("arrival_rate", arrival_rate)
    remove = _checks.boolean("remove", remove)
    q = float(_checks.probability_level("percentile", percentile))
    method = "analysis" if method is None else method
    if method not in ("analysis", "simulation"):
        raise ValueError(f"method must be 'analysis' or 'simulation', got {method!r}")
    m_max = max(n * (d - 1), 1) if m_max is None else _checks.positive_int("m_max", m_max, 0)
    if method == "analysis":
        evaluate = _analysed
    else:
        run = _simulated(servers, jobs, replications, seed)

        def evaluate(system: System, q: float, first_pass: bool = True) -> dict:
            return run(system, q)

    rep_system = System(Replication(n, d, remove=remove), runtime, lam)
    rep = evaluate(rep_system, q)
    candidates, found, m = [], None, 0
    while m <= m_max:
        system = System(MDS(n, m, remove=remove), runtime, lam)
        row = {"m": m, **evaluate(system, q)}
        if method == "analysis" and _undecided(row, rep) and max(row["goal"], rep["goal"]) > GOAL:
            # the first pass's errors leave a verdict open: both values to the full goal
            if rep["goal"] > GOAL:
                rep = evaluate(rep_system, q, first_pass=False)
                # the codes already tried, against replication's new values: a verdict they
                # leave open is taken at the full goal too (and may find a smaller match)
                for i, earlier in enumerate(candidates):
                    if _undecided(earlier, rep) and earlier["goal"] > GOAL:
                        candidates[i] = {"m": earlier["m"], **evaluate(System(
                            MDS(n, earlier["m"], remove=remove), runtime, lam), q, False)}
                found = next((c["m"] for c in candidates if _judge(c, rep)), None)
                if found is not None:
                    del candidates[found + 1:]
                    break
            if row["goal"] > GOAL:
                row = {"m": m, **evaluate(system, q, first_pass=False)}
        candidates.append(row)
        if _judge(row, rep):
            found = m
            break
        m += 1
    for row in candidates:
        _judge(row, rep)
    e_r = runtime.mean_runtime()
    larger = ("sufficient with removal; the region with removal is larger, see "
              "qt.stability_frontier(runtime, policy)")
    stability = {
        f"Replication(n={n}, d={d})": (f"stable iff arrival_rate < {1 / (d * e_r):.6g} without "
                                       f"removal ({larger})"),
        **{f"MDS(n={n}, m={row['m']})": (f"stable iff arrival_rate < "
                                          f"{n / ((n + row['m']) * e_r):.6g} without removal "
                                          f"({larger})") for row in candidates},
    }
    assumptions = (f"{runtime.name} runtimes {runtime!r}",
                   f"arrival_rate {lam:g} original jobs per server (batches at arrival_rate / n)",
                   "Poisson batch arrivals, FCFS at every server",
                   ("removal of redundant tasks (MDS: at batch completion; replication: at job "
                    "completion)") if remove else "no removal: every task runs to completion")
    if isinstance(runtime, SX):
        assumptions += ("S&X: a batch is n equal-sized jobs, so all its tasks (coded jobs or "
                        "copies) share one job size X",)
    if method == "analysis":
        assumptions += ("k -> infinity limit (mean-field analysis with removal)" if remove else
                        "k -> infinity limit (exact analysis)",
                        f"values solved to a relative accuracy of {goal_text(_FIRST_PASS)} "
                        f"first, to {goal_text(GOAL)} where they were closer than "
                        f"{_FIRST_PASS_MARGIN:g} times their first-pass errors (each row's "
                        f"'goal'); values closer than their stated errors are 'not "
                        f"distinguishable' (a match)")
    else:
        assumptions += (f"simulation with k = {servers} servers, {replications} replications of "
                        f"{jobs} original jobs ({-(-jobs // n)} batches), 95% confidence "
                        "intervals; overlapping intervals count as 'not distinguishable' (a "
                        "match)",)
    return CodeMatch(m=found, n=n, d=d, remove=remove, arrival_rate=lam, runtime=repr(runtime),
                     percentile=q, method=method, replication=rep, candidates=tuple(candidates),
                     stability=stability, assumptions=assumptions)


_FIRST_PASS = 1e-2
"""Relative accuracy goal of the analysis's first pass (:func:`.analysis.accuracy_goal`): a
verdict its stated errors leave open is taken again from both values at the full goal."""
_FIRST_PASS_MARGIN = 3.0
"""A first-pass verdict stands only where the values differ by more than this many times their
stated errors: on coarse grids the estimates are less sure. Held out (M/G/1 through the grid,
against Pollaczek-Khinchine and the Random system's inversion; 360 cases at goals 1e-2 and
1e-3), four statistics were beyond their estimates: a median 2.51 and a p10 1.61 times (S&X
hyperexponential job size times five slowdowns, goal 1e-2, loads 0.9 and 0.85), and two means
1.23 and 1.07 times (the first a first-order grid, short alike at the full goal)."""


def _analysed(system: System, q: float, first_pass: bool = True) -> dict:
    """Mean and ``q``-quantile of ``system``'s batch time with their stated errors, solved to
    the first pass's goal or (``first_pass=False``) the full one; ``goal`` records which."""
    with accuracy_goal(_FIRST_PASS) if first_pass else contextlib.nullcontext():
        p = predict(system)
        row = {"stable": p.stable, "goal": _FIRST_PASS if first_pass else GOAL, "mean": p.mean,
               "mean_error": p.errors.get("mean", 0.0) if p.stable else 0.0}
        if not p.stable:
            return {**row, "quantile": math.inf, "quantile_error": 0.0}
        try:
            value, error = p.response_time.ppf(q, full_output=True)
        except NotImplementedError:   # a law without an estimate: the value, its error unknown
            value, error = p.quantile(q), None
    return {**row, "quantile": float(value), "quantile_error": error if error is None
            else float(error)}


def _judge(row: dict, rep: dict) -> bool:
    """Set ``row``'s verdicts against ``rep``; whether MDS is at least as good (none "worse")."""
    for stat in ("mean", "quantile"):
        row[f"{stat}_verdict"] = _verdict(
            row[stat], rep[stat], row.get(f"{stat}_error") or 0.0,
            rep.get(f"{stat}_error") or 0.0, row.get(f"{stat}_ci"), rep.get(f"{stat}_ci"))
    return all(row[f"{s}_verdict"] != "worse" for s in ("mean", "quantile"))


def _undecided(row: dict, rep: dict) -> bool:
    """Whether a statistic's verdict is left open by the stated errors: ``_FIRST_PASS_MARGIN``
    times them where either value is from the first pass."""
    margin = _FIRST_PASS_MARGIN if max(row.get("goal", GOAL), rep.get("goal", GOAL)) > GOAL else 1
    return any(_verdict(row[s], rep[s], margin * (row.get(f"{s}_error") or 0.0),
                        margin * (rep.get(f"{s}_error") or 0.0)) == "not distinguishable"
               for s in ("mean", "quantile"))


def _simulated(servers: int, jobs: int, replications: int, seed):
    def run(system: System, q: float) -> dict:
        res = simulate(system, servers=servers, jobs=jobs, replications=replications, seed=seed)
        stable = bool(res.stable)
        return {"stable": stable, "mean": res.mean if stable else math.inf,
                "mean_ci": tuple(res.mean_ci) if stable else (math.inf, math.inf),
                "quantile": res.quantile(q) if stable else math.inf,
                "quantile_ci": tuple(res.quantile_ci(q)) if stable else (math.inf, math.inf)}

    return run
