"""The result of :func:`queuetheory.simulate`: estimates with confidence intervals."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _checks
from ..system import System
from . import engine

__all__ = ["SimulationResult"]

#: One-sided level of the trend test: a stable run is called unstable this rarely (at most).
TREND_LEVEL = 1e-4
#: ... and only if the fitted rise across the measured window exceeds this fraction of its mean.
TREND_RISE = 0.1
#: A significant rise below ``TREND_RISE`` makes a run inconclusive only above this (a rise
#: of rounding size, with every response time equal, has an infinite t).
TREND_FLOOR = 1e-3
#: A run is called stable only if its rise is below ``TREND_RISE`` with this one-sided
#: confidence (upper bound of the Student-t interval of the replications' rises).
STABLE_CONFIDENCE = 0.9


class SimulationResult:
    """Estimates from independent replications of a simulated :class:`System`.

    Every interval is a two-sided Student-t confidence interval over the replications (each
    replication gives one estimate; they are independent by construction), intersected with
    the support of the quantity (times and costs >= 0, busy fraction in [0, 1]): the true
    value lies in the support, so the coverage is kept. The response time
    of a batch policy (:class:`MDS`, :class:`Replication`) is the **batch completion time**:
    from the arrival of the batch to the completion of its ``n``-th job (see ``statistic``).

    Built by :func:`queuetheory.simulate` from the simulator's raw statistics; every argument
    after ``raw`` is keyword-only.

    Parameters
    ----------
    system : System
        The simulated system, with ``servers`` set.
    raw : queuetheory.simulation.engine.LaneStatistics
        The replications' raw statistics (sums, histograms, segment means, busy time), one
        row per replication; at least two replications for the intervals.
    jobs : int
        Original jobs measured per replication, >= 1.
    warmup : int
        Original jobs simulated and discarded before measuring, per replication, >= 0.
    seed : int
        The entropy of the root ``numpy.random.SeedSequence``, >= 0.
    confidence : float
        Level of the intervals, in (0, 1).
    elapsed : float
        Wall-clock seconds of the run, >= 0.
    warmup_method : str, optional
        How the warm-up was chosen, in words; default ``""``.

    Attributes
    ----------
    system : System
        The simulated system (with ``servers`` set).
    servers, jobs, warmup, replications : int
        Servers ``k``; original jobs measured per replication; original jobs simulated and
        discarded before measuring, per replication; number of replications.
    warmup_method : str
        How the warm-up was chosen (given, or the MSER pilot with its size and truncation
        point; see :func:`queuetheory.simulate`).
    seed : int
        The entropy of the root ``numpy.random.SeedSequence`` (pass it back to reproduce).
    confidence : float
        Level of the intervals (default 0.95).
    statistic : str
        ``"response time"`` or ``"batch completion time"``.
    verdict : str
        ``"stable"``, ``"unstable"`` or ``"inconclusive"`` (see Notes and ``stability``).
    stable : bool or None
        ``True``, ``False`` or ``None`` for the three verdicts. Unless the verdict is
        ``"stable"``, ``mean`` and every quantile are ``inf`` and ``observed_mean`` holds the
        window average (meaningless if unstable, unreliable if inconclusive).
    stability : str
        Why the verdict was reached.
    mean, mean_ci : float, (float, float)
        Mean response (or batch completion) time and its interval.
    cost, cost_ci : float, (float, float)
        Server time consumed per original job, including cancelled replicas.
    busy_fraction, busy_fraction_ci : float, (float, float)
        Fraction of time a server is busy over the measured window (from its first to its
        last arrival), including work on replicas cancelled later: the server time of the
        window's arrivals plus the change in unfinished work, over ``k`` times its length.
    quantile_resolution : float
        Relative width of the histogram bins the quantiles are read from (0.23 %); a quantile
        is exact to half of that beyond its sampling error.
    per_replication : dict of numpy.ndarray
        Each replication's own ``mean`` (the window average, also when unstable), ``cost``
        and ``busy_fraction``: the values the intervals are computed from.
    samples : numpy.ndarray or None
        All measured response times, shape (replications, arrivals), if ``samples=True``.
    elapsed : float
        Wall-clock seconds of the run (the warm-up pilot, if any, not included).

    Notes
    -----
    The verdict reads the trend of the ten segment means of each replication's measured
    window. Per replication the least-squares slope gives a *rise* (fitted change across the
    window, relative to the mean); the replications' rises are independent, so a Student-t
    interval covers their mean.

    * **unstable**: at load >= 1 where stability is known to mean load < 1 (Random, RIQ;
      Redundancy-d with IR exponential runtimes and Poisson arrivals, Gardner et al.,
      Operations Research 2017), or else the rise exceeds 10 % and is significantly positive
      (one-sided t test at level 1e-4). Where stability is known, a load below 1 is stable
      and such a rise makes the verdict inconclusive (not at steady state);
    * **stable**: no significant rise, and its one-sided 90 % upper bound is below 10 % and
      below half of ``N / (W + N / 2)`` (``N`` arrivals measured after ``W`` of warm-up: the
      rise of a backlog growing linearly from the start);
    * **inconclusive**: neither (a rise of 10 % or more is not excluded, nor shown), a
      significant rise between 0.1 % and 10 % (not at steady state: an unstable system after a
      warm-up much longer than the measured window rises little relative to its mean), or
      fewer than three segments were measured. More jobs, replications or warm-up decide it.

    The load rule is the analysis's: a load within ``2**-46`` of 1 (printed as 1) is not
    below 1.

    Examples
    --------
    >>> import queuetheory as qt
    >>> system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    >>> sim = qt.simulate(system, servers=4, jobs=4000, replications=4, seed=1)
    >>> sim.verdict, sim.stable, sim.statistic
    ('stable', True, 'response time')
    >>> low, high = sim.mean_ci
    >>> bool(low < sim.mean < high)
    True
    """

    def __init__(self, system: System, raw: engine.LaneStatistics, *, jobs: int, warmup: int,
                 seed: int, confidence: float, elapsed: float, warmup_method: str = ""):
        self.system = system
        self.servers = int(system.servers)
        self.jobs = int(jobs)
        self.warmup = int(warmup)
        self.warmup_method = warmup_method
        self.seed = seed
        self.confidence = float(confidence)
        self.elapsed = float(elapsed)
        policy = system.policy
        self.batch = policy.batch
        self.statistic = "batch completion time" if self.batch > 1 else "response time"
        self.replications = int(raw.sum.shape[0])
        self._arrivals = int(raw.segment_counts.sum())
        self._hist, self._hist_low = raw.hist, raw.hist_low
        self._low, self._high = raw.low, raw.high
        self._segments, self._segment_counts = raw.segments, raw.segment_counts
        self.samples = raw.samples
        self._per_mean = raw.sum / self._arrivals
        self._per_cost = raw.cost / (self._arrivals * self.batch)
        duration = raw.duration
        self._per_busy = np.divide(raw.busy_time, self.servers * duration,
                                   out=np.ones_like(duration), where=duration > 0)
        self.per_replication = {"mean": self._per_mean, "cost": self._per_cost,
                                "busy_fraction": self._per_busy}
        self.quantile_resolution = 10 ** (1 / engine.BINS_PER_DECADE) - 1
        self.verdict, self.stability = self._stability()
        self.stable = {"stable": True, "unstable": False}.get(self.verdict)
        self.observed_mean, self.observed_mean_ci = self._interval(self._per_mean)
        if self.stable:
            self.mean, self.mean_ci = self.observed_mean, self.observed_mean_ci
        else:
            self.mean, self.mean_ci = math.inf, (math.inf, math.inf)
        self.cost, self.cost_ci = self._interval(self._per_cost)
        self.busy_fraction, self.busy_fraction_ci = self._interval(self._per_busy,
                                                                   support=(0.0, 1.0))
        seconds = max(self.elapsed, 1e-12)
        self.jobs_per_second = (self.replications * self.batch
                                * (self._arrivals + -(-self.warmup // self.batch)) / seconds)

    # -- estimates ---------------------------------------------------------------------------
    def quantile(self, q: float) -> float:
        """The ``q``-quantile of the response (batch completion) time, from all replications.

        ``inf`` if the run is unstable. Read from a log-spaced histogram (see
        ``quantile_resolution``).
        """
        q = float(_checks.probability_level("q", q))
        if not self.stable:
            return math.inf
        return self._hist_quantile(self._hist.sum(axis=0), self._low.min(), self._high.max(), q)

    def quantile_ci(self, q: float, confidence: float | None = None) -> tuple[float, float]:
        """Confidence interval of the ``q``-quantile: the pooled estimate plus or minus the
        Student-t half-width of the replications' own ``q``-quantiles."""
        q = float(_checks.probability_level("q", q))
        level = self._level(confidence)
        if not self.stable:
            return (math.inf, math.inf)
        own = np.array([self._hist_quantile(h, lo, hi, q)
                        for h, lo, hi in zip(self._hist, self._low, self._high)])
        center = self.quantile(q)
        half = self._half_width(own, level)
        return (max(center - half, 0.0), center + half)

    def interval(self, values, confidence: float | None = None,
                 support: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float]:
        """Student-t interval of the mean of per-replication ``values`` (a helper for users
        who compute their own statistic from ``samples``), intersected with ``support``.

        Parameters
        ----------
        values : array_like
            One value per replication.
        confidence : float, optional
            Level in (0, 1); default ``self.confidence``.
        support : (float, float)
            Where the estimated quantity lies (default: anywhere; pass ``(0, inf)`` for times
            and costs, ``(0, 1)`` for fractions). Clipping to it keeps the coverage: the true
            value lies in the support.

        Returns
        -------
        (float, float)
            The interval.

        Examples
        --------
        >>> import queuetheory as qt
        >>> system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
        >>> sim = qt.simulate(system, servers=2, jobs=100, replications=2, seed=1)
        >>> sim.interval([0.1, 0.9], support=(0.0, 1.0))
        (0.0, 1.0)
        """
        values = np.asarray(values, dtype=float)
        return self._interval(values, self._level(confidence), support)[1]

    # -- reporting ---------------------------------------------------------------------------
    def describe(self) -> str:
        """A paragraph: what was simulated, how, and the main estimates."""
        pct = f"{100 * self.confidence:g}%"
        parts = [f"Simulated {self.system.describe()}.",
                 f"{self.replications} independent replications of {self.jobs} measured jobs "
                 f"each after a warm-up of {self.warmup} jobs"
                 + (f" ({self.warmup_method})" if self.warmup_method else "")
                 + f"; seed {self.seed}; {pct} Student-t intervals across replications."]
        if self.batch > 1:
            parts.append(f"Times are batch completion times (arrival of a batch of "
                         f"{self.batch} to the completion of its last job); cost is per job.")
        if self.stable:
            low, high = self.mean_ci
            parts.append(f"Mean {self.statistic} {self.mean:.6g} [{low:.6g}, {high:.6g}]; "
                         f"99th percentile {self.quantile(0.99):.6g}.")
        else:
            parts.append(f"The run looks {self.verdict.upper()}: {self.stability}.")
        low, high = self.cost_ci
        parts.append(f"Cost {self.cost:.6g} [{low:.6g}, {high:.6g}] server time per job; "
                     f"busy fraction {self.busy_fraction:.6g}.")
        return " ".join(parts)

    def to_dict(self) -> dict:
        """The scalar results as a plain dictionary (for JSON output)."""
        out = {"policy": self.system.policy.label(), "runtime": self.system.runtime.name,
               "arrival_rate": self.system.arrival_rate, "servers": self.servers,
               "load": self.system.load, "jobs": self.jobs, "warmup": self.warmup,
               "warmup_method": self.warmup_method,
               "replications": self.replications, "seed": self.seed,
               "confidence": self.confidence, "statistic": self.statistic,
               "stable": self.stable, "verdict": self.verdict,
               "stability": self.stability,
               "mean": self.mean, "mean_ci": list(self.mean_ci),
               "observed_mean": self.observed_mean}
        for q in (0.5, 0.95, 0.99):
            key = f"p{round(100 * q)}"
            out[key] = self.quantile(q)
            out[key + "_ci"] = list(self.quantile_ci(q))
        out.update({"cost": self.cost, "cost_ci": list(self.cost_ci),
                    "busy_fraction": self.busy_fraction,
                    "busy_fraction_ci": list(self.busy_fraction_ci),
                    "quantile_resolution": self.quantile_resolution,
                    "elapsed": self.elapsed, "jobs_per_second": self.jobs_per_second})
        return out

    def __repr__(self):
        if not self.stable:
            return (f"SimulationResult({self.system.policy.label()}, k={self.servers}, "
                    f"{self.verdict})")
        low, high = self.mean_ci
        return (f"SimulationResult({self.system.policy.label()}, k={self.servers}, "
                f"mean={self.mean:.6g} [{low:.6g}, {high:.6g}])")

    # -- helpers -----------------------------------------------------------------------------
    def _level(self, confidence):
        if confidence is None:
            return self.confidence
        return float(_checks.probability_level("confidence", confidence))

    def _half_width(self, values: np.ndarray, level: float) -> float:
        n = values.size
        spread = float(np.std(values, ddof=1))
        if not math.isfinite(spread):
            return math.inf
        return float(special.stdtrit(n - 1, 0.5 + level / 2)) * spread / math.sqrt(n)

    def _interval(self, values: np.ndarray, level: float | None = None,
                  support: tuple[float, float] = (0.0, math.inf)):
        """Mean of ``values`` and its Student-t interval intersected with ``support``."""
        center = float(np.mean(values))
        half = self._half_width(values, self.confidence if level is None else level)
        low, high = support
        return center, (min(max(center - half, low), high), max(min(center + half, high), low))

    def _hist_quantile(self, hist: np.ndarray, low: float, high: float, q: float) -> float:
        """Quantile of a histogram, geometric interpolation inside the bin (linear in the
        end bins, which also hold everything below / above the range)."""
        step = math.log(10.0) / engine.BINS_PER_DECADE
        total = hist.sum()
        cum = np.cumsum(hist)
        target = q * total
        b = int(np.searchsorted(cum, target, side="left"))
        below = cum[b] - hist[b]
        frac = (target - below) / hist[b]
        edge_low = math.exp(self._hist_low + b * step)
        edge_high = edge_low * math.exp(step)
        if b == 0 or b == hist.size - 1:
            lo = min(low, edge_low) if b == 0 else edge_low
            hi = max(high, edge_high) if b == hist.size - 1 else edge_high
            value = lo + frac * (hi - lo)
        else:
            value = edge_low * math.exp(frac * step)
        return float(min(max(value, low), high))

    def _stability(self) -> tuple[str, str]:
        """The verdict (stable, unstable, inconclusive) and its reason; see the class Notes."""
        used = self._segment_counts > 0
        means = self._segments[:, used]
        x = np.arange(means.shape[1], dtype=float)
        load = self.system.load
        bound = self._load_bound()
        # the analysis's rule (_checks.stable_load): a load within its tolerance of 1, which
        # prints as 1, is not below 1
        below = _checks.stable_load(load)
        known = (f"the offered load is {load:.17g} < 1 - {_checks.LOAD_TOLERANCE:.3g}, and "
                 f"{bound}" if below else
                 f"the offered load is {load:.17g}, not below 1 - {_checks.LOAD_TOLERANCE:.3g}, "
                 f"and {bound}")
        if bound is not None and not below:
            return "unstable", known
        if x.size < 3 and bound is not None:
            return "stable", known
        if x.size < 3:
            return "inconclusive", (f"only {x.size} segment(s) measured, too few for a trend "
                                    f"check (measure at least 3 jobs)")
        overall = float(np.mean(self._per_mean))
        if not overall > 0:
            return "stable", "every measured time is 0"
        xc = x - x.mean()
        rises = (means @ xc / (xc @ xc)) * (x[-1] - x[0]) / overall
        n = rises.size
        rise = float(np.mean(rises))
        se = float(np.std(rises, ddof=1)) / math.sqrt(n)
        if se > 0:
            t_value = rise / se
        else:
            t_value = math.copysign(math.inf, rise) if rise else 0.0
        critical = float(special.stdtrit(n - 1, 1.0 - TREND_LEVEL))
        upper = rise + float(special.stdtrit(n - 1, STABLE_CONFIDENCE)) * se
        found = (f"fitted rise over the measured window {100 * rise:.3g}% of the mean "
                 f"(trend t = {t_value:.3g} across {n} replications")
        trending = t_value > critical and rise > TREND_RISE
        if bound is not None:
            if trending:
                return "inconclusive", (f"{known}, but the run is far from steady state: "
                                        f"{found}, significant at level {TREND_LEVEL:g}); "
                                        f"simulate a longer warm-up")
            return "stable", f"{known} ({found}))"
        if trending:
            return "unstable", (f"the {self.statistic} trends upward through the run: {found}, "
                                f"significant at level {TREND_LEVEL:g}, t > {critical:.3g}); the "
                                f"system is unstable or far from steady state at load "
                                f"{load:.4g} (try more jobs or warmup)")
        level = f"{100 * STABLE_CONFIDENCE:g}%"
        # an unstable system's backlog grows about linearly from the start, so a window of N
        # arrivals after W of warm-up rises by about N / (W + N / 2) of its mean: after a long
        # warm-up less than TREND_RISE (MDS(2, 1) with removal at 1.5 times its frontier, 500
        # jobs after 10,000: 3%, had been called stable); a stable verdict needs the rise's
        # bound below half of that too
        measured = self._arrivals
        ahead = -(-self.warmup // self.batch)
        limit = min(TREND_RISE, 0.5 * measured / (ahead + 0.5 * measured))
        if t_value > critical and rise > TREND_FLOOR:
            # a significant rise, if a small one: not at steady state. An unstable system after
            # a warm-up far longer than the window rises little relative to its mean (MDS(2, 1)
            # with removal at 1.5 times its frontier, 500 jobs after 10,000: 3% at t = 21.9,
            # had been called stable)
            return "inconclusive", (f"the {self.statistic} rises through the run: {found}, "
                                    f"significant at level {TREND_LEVEL:g}, t > {critical:.3g}), "
                                    f"though by less than {100 * TREND_RISE:g}%: not at steady "
                                    f"state, or unstable with a warm-up much longer than the "
                                    f"measured window; simulate more jobs")
        if upper < limit:
            return "stable", (f"no upward trend: {found}); its one-sided {level} upper bound "
                              f"{100 * upper:.3g}% is below {100 * limit:.3g}%")
        why = ("" if limit == TREND_RISE else
               f", half the rise of a backlog growing from the start over {measured} arrivals "
               f"after {ahead} of warm-up")
        return "inconclusive", (f"cannot tell stable from unstable: {found}) is not "
                                f"significant at level {TREND_LEVEL:g} (t <= {critical:.3g}), "
                                f"yet a rise of {100 * limit:.3g}%{why} or more is not excluded "
                                f"(one-sided {level} upper bound {100 * upper:.3g}%); simulate "
                                f"more jobs, replications or a longer warm-up")

    def _load_bound(self) -> str | None:
        """Why the system is stable exactly when its load is below 1, if it is known to be
        (the policy's own stability facts, :meth:`queuetheory.Policy.load_bound`)."""
        system = self.system
        return system.policy.load_bound(system.runtime, poisson=system.interarrival is None)
