"""The default warm-up of :func:`queuetheory.simulate`: MSER on a pilot run (private).

A simulation starts from the empty system, whose response times are shorter than in steady
state; the first arrivals must be discarded. Rather than a fixed rule, a *pilot* of a few
replications, started from empty and measured from its first arrival, shows where the transient
ends: MSER (White 1997) on the pilot's batch means gives the truncation point ``d``, and the
warm-up is ``2 d`` (MSER-5 did best among five truncation heuristics in White, Cobb and
Spratt 2000; the factor 2 is a safety margin, as MSER locates the transient's end only to
within a batch and through the pilot's noise), but at least the floor ``10 k / (1 - rho)``
(``k`` servers, ``rho`` the offered load capped at 0.95): a queue relaxes on a time scale
growing like ``1 / (1 - rho)``, and MSER on a noisy pilot can miss a slow drift (see
:data:`FLOOR_PER_SERVER`). The floor alone was the previous rule, too short where the
transient is long (RIQ(3), hyperexponential X, k = 1000: MSER finds about 40,000 jobs where
the floor is 31,251 and the mean was 3.4 % low).

**Size.** The pilot runs ``P = max(min(4, R), ceil(R / 8))`` replications (``R`` those of
the run) of ``L = max(ceil(R n / (4 P)), ceil(n / 2))`` arrivals (``n`` those measured per
replication): a quarter of the run's measured arrivals for ``R >= 8``, up to half for fewer, so the
standard error of its averaged output is at most twice the run's own. The truncation is
*established* when it lies in the pilot's first quarter; else the pilot is repeated at twice
the length while the pilots' total stays below the run's measured arrivals (at most one
repetition), and otherwise the warm-up is still ``max(2 d, floor)`` and
:attr:`WarmupChoice.established` is ``False`` (said in the result's ``warmup_method``). The
warm-up is at most the larger of the floor and the last pilot's length (MSER discards at
most half of it). A system unstable by a known load bound (load >= 1) has no warm-up and no
pilot.

**Reproducibility.** Pilot replication ``j`` draws from the child ``2 ** 32 + j`` of the run's
root ``SeedSequence`` (a branch the run's own replications never reach), and its statistics do
not depend on how the lanes are grouped, so the warm-up, like every number of the run, depends
on the seed, ``jobs`` and ``replications`` only, not on workers, tasks or engine.

References: K. P. White Jr., Simulation 69(6), 323-334, 1997 (MSER); K. P. White Jr.,
M. J. Cobb, S. C. Spratt, Proc. Winter Simulation Conference 2000 (five truncation heuristics
compared).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..system import System
from .engine import segment_counts

__all__ = ["mser_truncation", "mser_batches", "WarmupChoice", "choose_warmup",
           "PILOT_BATCHES", "PILOT_LANE"]

#: Batch means MSER reads from the pilot (at least 5 arrivals per batch).
PILOT_BATCHES = 100
#: Pilot replication ``j`` draws from the child ``PILOT_LANE + j`` of the root SeedSequence.
PILOT_LANE = 2 ** 32
#: Replications of the pilot: at least this many (or all of the run's, if fewer) ...
PILOT_MIN_REPLICATIONS = 4
#: ... and at least one per this many replications of the run.
PILOT_SHARE = 8
#: Floor of the warm-up: this many jobs per server, divided by ``1 - rho`` (``rho`` the
#: offered load, capped at ``FLOOR_LOAD_CAP``): the relaxation time of a queue grows like
#: ``1 / (1 - rho)``, and MSER on a noisy pilot can miss a slow drift (THRESHOLD-1(d=5),
#: Facebook S&X, k = 200, load 0.85: MSER 5,600 jobs, after which the run still rose 10-14%
#: with trend t = 2.6-3.5; the floor is 13,334).
FLOOR_PER_SERVER = 10
FLOOR_LOAD_CAP = 0.95


def mser_batches(means) -> int:
    """MSER truncation of a sequence of batch means: how many leading batches to discard.

    The truncation ``d`` (``d <= m / 2`` of the ``m`` batch means ``y_1..y_m``) minimises the
    squared standard error of the mean of the rest, ``sum_{j>d} (y_j - mean)^2 / (m - d)^2``
    (White 1997).

    Parameters
    ----------
    means : array_like
        Batch means in time order.

    Returns
    -------
    int
        Batches to discard.

    Examples
    --------
    >>> mser_batches([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    2
    """
    y = np.asarray(means, dtype=float)
    m = y.size
    if m < 2:
        return 0
    y = y - y[-1]  # less cancellation below; a constant tail is exactly 0 (no spurious minimum)
    d = np.arange(m // 2 + 1)                  # batches discarded
    n = m - d                                  # batches kept: y[d:]
    total = np.cumsum(y[::-1])[n - 1]          # sum of y[d:]
    squares = np.cumsum((y * y)[::-1])[n - 1]
    criterion = np.maximum(squares - total * total / n, 0.0) / (n * n)
    return int(d[int(np.argmin(criterion))])


def mser_truncation(values, batches: int = PILOT_BATCHES) -> int:
    """MSER truncation point of an output sequence: how many leading values to discard.

    The sequence is cut into ``batches`` batch means (at least 5 values each; MSER-5 is
    batches of 5 values) and :func:`mser_batches` applied to them.

    Parameters
    ----------
    values : array_like
        The output sequence in time order (e.g. response times by arrival).
    batches : int
        Number of batch means (default 100).

    Returns
    -------
    int
        Values to discard (a multiple of the batch size).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.zeros(300), np.ones(700)]      # a transient of 300 values, then steady
    >>> mser_truncation(x, batches=100)
    300

    References
    ----------
    .. [1] K. P. White Jr., "An effective truncation heuristic for bias reduction in
       simulation output", Simulation 69(6), 323-334, 1997.
    """
    values = np.asarray(values, dtype=float)
    size = max(values.size // batches, 5)
    m = values.size // size
    if m < 2:
        return 0
    return mser_batches(values[:m * size].reshape(m, size).mean(axis=1)) * size


@dataclass(frozen=True)
class WarmupChoice:
    """How the warm-up of a simulation was chosen.

    Attributes
    ----------
    arrivals : int
        Arrivals (batches for batch policies) discarded per replication.
    rule : str
        ``"given"`` (``warmup=``), ``"mser"`` (twice the pilot's MSER truncation point),
        ``"floor"`` (the floor ``10 k / (1 - rho)``, when longer) or ``"none"`` (unstable by
        a known load bound: no steady state to reach).
    pilot_replications, pilot_arrivals : int
        Size of the (last) pilot (0 without one).
    truncation : int
        MSER's truncation point in the pilot, in arrivals.
    established : bool
        Whether the truncation lay in the pilot's first quarter.
    floor : int
        The floor ``10 k / (1 - rho)``, in arrivals.
    """

    arrivals: int
    rule: str
    pilot_replications: int = 0
    pilot_arrivals: int = 0
    truncation: int = 0
    established: bool = True
    floor: int = 0

    def describe(self, batch: int = 1) -> str:
        """How the warm-up was chosen, in words (``batch`` jobs per arrival)."""
        if self.rule == "given":
            return "given by the caller"
        if self.rule == "none":
            return "none: the system is unstable at this load"
        mser = (f"twice the truncation point that MSER (White 1997) finds at "
                f"{self.truncation * batch} jobs in a pilot of {self.pilot_replications} "
                f"replications x {self.pilot_arrivals * batch} jobs from the empty system")
        floor = f"the floor 10 k / (1 - rho) = {self.floor * batch} jobs"
        text = (f"{mser}, above {floor}" if self.rule == "mser"
                else f"{floor}, above {mser}")
        if not self.established:
            text += (" -- the truncation lies beyond the pilot's first quarter, so the "
                     "transient may be longer: simulate more jobs to establish it")
        return text


def choose_warmup(system: System, measured: int, replications: int,
                  run: Callable[[int, int, list[int]], np.ndarray]) -> WarmupChoice:
    """The default warm-up (in arrivals) of a run of ``replications`` x ``measured`` arrivals.

    Parameters
    ----------
    system : System
        The simulated system (with ``servers``).
    measured : int
        Arrivals measured per replication.
    replications : int
        Replications of the run.
    run : callable
        ``run(arrivals, segments, lanes)``: simulate the replications ``lanes`` (numbers of
        ``SeedSequence`` children) for ``arrivals`` arrivals from empty, without warm-up, and
        return their mean response times in ``segments`` consecutive parts, shape
        ``(len(lanes), segments)``.

    Returns
    -------
    WarmupChoice
    """
    policy = system.policy
    bound = policy.load_bound(system.runtime, poisson=system.interarrival is None)
    if bound is not None and system.load >= 1:
        return WarmupChoice(0, "none")
    floor = math.ceil(FLOOR_PER_SERVER * system.servers
                      / (1.0 - min(system.load, FLOOR_LOAD_CAP)) / policy.batch)
    lanes = max(min(PILOT_MIN_REPLICATIONS, replications), -(-replications // PILOT_SHARE))
    length = max(-(-replications * measured // (4 * lanes)), -(-measured // 2))
    budget = replications * measured
    spent = 0
    while True:
        spent += lanes * length
        segments = max(min(PILOT_BATCHES, length // 5), 1)
        means = run(length, segments, [PILOT_LANE + j for j in range(lanes)]).mean(axis=0)
        edges = np.cumsum(np.append(0, segment_counts(length, segments)))
        cut = int(edges[mser_batches(means)])
        established = cut <= length // 4
        if established or spent + 2 * lanes * length > budget:
            return WarmupChoice(max(2 * cut, floor), "mser" if 2 * cut >= floor else "floor",
                                lanes, length, cut, established, floor)
        length *= 2
