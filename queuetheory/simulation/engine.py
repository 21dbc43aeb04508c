"""The exact FCFS + cancel-on-complete engine (private).

Under FCFS a job's completion time is fixed when it arrives (later arrivals never overtake it),
so the whole state of server ``j`` is the time ``V_j`` at which its assigned work runs out. A job
arriving at ``t`` on the polled servers ``P`` with replica runtimes ``r_j`` starts at
``s_j = max(V_j, t)``, would finish at ``f_j = s_j + r_j``, completes at a policy-specific order
statistic ``C`` of the ``f_j``, and every server it used becomes ``V_j <- max(s_j, min(f_j, C))``
(a replica cancelled while still queued leaves at ``C`` without using the server).

Independent replications run in lock-step: each is a row ("lane") of the numpy arrays, so one
Python-level step advances every replication by one arrival. Random numbers are drawn per lane
from that lane's own generator in blocks of :data:`BLOCK` arrivals, so a lane's numbers do not
depend on which other lanes share its process.

Two engines apply the update rules: the numpy kernels below (the portable reference) and, when
numba is installed, their compiled twins in :mod:`.compiled`, which consume the same draws and
perform the same floating-point operations, so the results are bit-identical.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math

import numpy as np

#: Arrivals per lane drawn and simulated per block when an arrival uses at most
#: ``BLOCK_POLLED`` servers (fewer for wider arrivals, to bound memory). Fixed: the random
#: streams depend on it.
BLOCK, BLOCK_POLLED = 4096, 8
#: Segments of the measured window used for the trend (stability) check.
SEGMENTS = 10
#: Histogram bins per decade (relative bin width 10 ** (1 / BINS_PER_DECADE) - 1 = 0.23 %).
BINS_PER_DECADE = 1000
#: Histogram range relative to the runtime scale: 10 ** LOW_DECADE to 10 ** HIGH_DECADE.
LOW_DECADE, HIGH_DECADE = -6, 8
#: Finite stand-in for "no replica" (so that 0 * _NEVER stays 0, never NaN).
_NEVER = 1e300
#: Accepted values of ``simulate(engine=...)``.
ENGINES = ("auto", "numpy", "numba")


def numba_available() -> bool:
    """Whether numba can be imported (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def resolve_engine(name: str) -> str:
    """``"numpy"`` or ``"numba"`` for ``simulate(engine=name)``; ``"auto"`` takes numba when
    it is installed. Raises ValueError for an unknown name or ``"numba"`` without numba."""
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {name!r}")
    if name == "numba" and not numba_available():
        raise ValueError("engine='numba' needs numba, which is not installed: "
                         "pip install 'queuetheory[fast]' (or numba>=0.58), or use "
                         "engine='numpy' (same results, slower)")
    if name == "auto":
        return "numba" if numba_available() else "numpy"
    return name


class Spec:
    """Everything a worker needs to simulate some lanes (picklable)."""

    def __init__(self, system, warm_arrivals: int, measured_arrivals: int, keep_samples: bool,
                 engine: str = "numpy", segments: int = SEGMENTS):
        self.system = system
        #: Parts of the measured window whose means are kept (the trend check's, or the
        #: warm-up pilot's batch means).
        self.segments = int(segments)
        #: "auto" is resolved by each process that runs lanes (results do not depend on it).
        self.engine = engine
        self.servers = int(system.servers)
        self.warm_arrivals = int(warm_arrivals)
        self.measured_arrivals = int(measured_arrivals)
        self.keep_samples = bool(keep_samples)
        policy = system.policy
        self.batch = policy.batch
        self.polled = policy.polled
        self.block = max(64, BLOCK * BLOCK_POLLED // max(self.polled, BLOCK_POLLED))
        self.mean_gap = self.batch / (system.arrival_rate * self.servers)
        shape = system.interarrival
        self.gap_scale = None if shape is None else self.mean_gap / shape.mean()
        mean_runtime = system.runtime.mean_runtime()
        scale = mean_runtime if math.isfinite(mean_runtime) else float(
            system.runtime.replica().ppf(0.5))
        self.hist_low = math.log(scale) + LOW_DECADE * math.log(10.0)
        self.hist_step = math.log(10.0) / BINS_PER_DECADE
        self.hist_bins = (HIGH_DECADE - LOW_DECADE) * BINS_PER_DECADE


@dataclasses.dataclass
class LaneStatistics:
    """The raw statistics of some replications ("lanes"), one row per lane: what a task
    returns (a few small arrays per lane, whatever the run length) and what
    :class:`~queuetheory.simulation.SimulationResult` is computed from."""

    #: Replication numbers of the rows (ascending).
    lanes: list[int]
    #: Log of the lower edge of the histogram's first bin (the same for every lane).
    hist_low: float
    #: Sum of the measured response times, and of the server time they used (cost).
    sum: np.ndarray
    cost: np.ndarray
    #: Mean response time in each of the ``Spec.segments`` parts of the measured window, and the
    #: number of measured arrivals in each part (the same for every lane).
    segments: np.ndarray
    segment_counts: np.ndarray
    #: Histogram (lanes, bins) of the log response times, and the smallest and largest one.
    hist: np.ndarray
    low: np.ndarray
    high: np.ndarray
    #: Length of the measured window, and the server time used in it.
    duration: np.ndarray
    busy_time: np.ndarray
    #: Every measured response time (lanes, arrivals), if asked for; else None.
    samples: np.ndarray | None

    @classmethod
    def merge(cls, parts: list[LaneStatistics]) -> LaneStatistics:
        """Stack the rows of several tasks in replication order."""
        parts = sorted(parts, key=lambda part: part.lanes[0])
        first = parts[0]

        def stack(name):
            return np.concatenate([getattr(part, name) for part in parts])

        return cls(lanes=[lane for part in parts for lane in part.lanes],
                   hist_low=first.hist_low, sum=stack("sum"), cost=stack("cost"),
                   segments=stack("segments"), segment_counts=first.segment_counts,
                   hist=stack("hist"), low=stack("low"), high=stack("high"),
                   duration=stack("duration"), busy_time=stack("busy_time"),
                   samples=None if first.samples is None else stack("samples"))


def run_lanes(spec: Spec, entropy: int, lanes: list[int], progress=None) -> LaneStatistics:
    """Simulate the replications ``lanes`` in lock-step; return their raw statistics.

    ``progress``, if given, is called with the number of arrivals simulated after each block.
    Lane ``i`` draws from ``SeedSequence(entropy, spawn_key=(i,))``, i.e. the ``i``-th child
    of ``SeedSequence(entropy).spawn(...)``.
    """
    rngs = [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(i,)))
            for i in lanes]
    width = len(lanes)
    kernel = _kernel(spec, width, resolve_engine(spec.engine))
    stats = _Statistics(spec, width)
    clock = np.zeros(width)
    done = 0
    for phase_end in (spec.warm_arrivals, spec.warm_arrivals + spec.measured_arrivals):
        if done == spec.warm_arrivals:
            stats.begin(clock, kernel.free)
        while done < phase_end:
            rows = min(spec.block, phase_end - done)
            times, flat, runtimes = _draw(spec, rngs, rows, clock)
            clock = times[-1].copy()
            response = np.empty((rows, width))
            cost = np.empty((rows, width))
            kernel(times, flat, runtimes, response, cost)
            if done >= spec.warm_arrivals:
                stats.add(done - spec.warm_arrivals, response, cost)
            done += rows
            if progress is not None:
                progress(rows * width)
    stats.end(clock, kernel.free)
    return stats.finish(lanes)


def _draw(spec: Spec, rngs, rows: int, clock: np.ndarray):
    """Arrival times (rows, lanes), flat server indices and runtimes (rows, lanes, polled)."""
    width, k, polled = len(rngs), spec.servers, spec.polled
    model, shape = spec.system.runtime, spec.system.interarrival
    gaps, flat, runtimes = [], [], []
    for lane, rng in enumerate(rngs):
        if shape is None:
            gaps.append(rng.exponential(spec.mean_gap, rows))
        else:
            gaps.append(spec.gap_scale * np.asarray(shape.sample(rows, rng), dtype=float))
        flat.append(_distinct(rng, rows, polled, k) + lane * k)
        runtimes.append(np.asarray(model.sample_runtimes(rows, polled, rng), dtype=float))
    if width == 1:  # views, no copies
        gaps, flat, runtimes = gaps[0][:, None], flat[0][:, None, :], runtimes[0][:, None, :]
    else:
        gaps, flat, runtimes = np.stack(gaps, axis=1), np.stack(flat, axis=1), np.stack(
            runtimes, axis=1)
    times = clock + np.cumsum(gaps, axis=0)
    return times, np.ascontiguousarray(flat, dtype=np.intp), np.ascontiguousarray(runtimes)


def _distinct(rng, rows: int, size: int, k: int) -> np.ndarray:
    """``rows`` uniformly random ordered samples of ``size`` distinct servers out of ``k``
    (rejection of rows with a repeat when repeats are rare, else a random permutation)."""
    if size == 1:
        return rng.integers(0, k, (rows, 1))
    if size * size > k:
        return np.argsort(rng.random((rows, k)), axis=1)[:, :size]
    out = rng.integers(0, k, (rows, size))
    check = np.arange(rows)
    while check.size:
        part = np.ascontiguousarray((out if check.size == rows else out[check]).T)
        clash = np.zeros(check.size, dtype=bool)
        for a in range(1, size):
            for b in range(a):
                clash |= part[a] == part[b]
        check = check[clash]
        out[check] = rng.integers(0, k, (check.size, size))
    return out


def _kernel(spec: Spec, width: int, engine: str = "numpy"):
    """The update rule of the policy, holding the server states of ``width`` lanes: the kernel
    family the policy declares (:meth:`queuetheory.Policy.kernel`) from the numpy kernels of
    this module (:data:`KERNELS`) or, with ``engine="numba"``, their compiled twins. An arrival
    on one server is the Lindley recursion whatever the policy (every rule is FCFS)."""
    if engine == "numba":
        from .compiled import KERNELS as kernels
    else:
        kernels = KERNELS
    policy, size = spec.system.policy, width * spec.servers
    if spec.polled == 1:
        return kernels["lindley"](size)
    description = policy.kernel()
    if description is None:
        raise NotImplementedError(f"no simulation rule for {policy.label()}")
    if description.family not in kernels:
        raise NotImplementedError(f"{policy.label()} asks for the simulation kernel "
                                  f"{description.family!r}; the kernels are "
                                  f"{', '.join(map(repr, kernels))}")
    return kernels[description.family](size, **description.parameters)


class _Lindley:
    """One server per job (Random): FCFS servers decouple, so a whole block is solved at once
    by the Lindley recursion ``D_n = max(D_(n-1), a_n) + b_n`` per server, in closed form
    ``D_n = c_n + max(V_0, max_(m<=n) (a_m - c_(m-1)))`` with ``c_n`` the cumulative work."""

    def __init__(self, size: int):
        self.free = np.zeros(size)

    def __call__(self, times, flat, runtimes, response, cost):
        servers = flat.reshape(-1)
        arrivals = times.reshape(-1)
        work = runtimes.reshape(-1)
        order = np.argsort(servers, kind="stable")  # by server, then by arrival time
        sorted_servers = servers[order]
        used, first, counts = np.unique(sorted_servers, return_index=True, return_counts=True)
        row = np.repeat(np.arange(used.size), counts)
        col = np.arange(order.size) - np.repeat(first, counts)
        a = np.zeros((used.size, counts.max()))
        b = np.zeros_like(a)
        a[row, col] = arrivals[order]
        b[row, col] = work[order]
        done_work = np.cumsum(b, axis=1)
        lead = a - (done_work - b)
        latest = np.maximum.accumulate(lead, axis=1)
        hold = np.maximum(self.free[used][:, None], latest)
        last = (np.arange(used.size), counts - 1)
        self.free[used] = done_work[last] + hold[last]   # each server's last departure
        out = np.empty(order.size)
        # D_n - a_n = b_n + (max(V_0, L_n) - (a_n - c_(n-1))): exactly b_n for a job that
        # finds its server idle (then L_n is its own lead), whatever the clock reads
        hold -= lead
        hold += b
        out[order] = hold[row, col]
        response[...] = out.reshape(response.shape)
        cost[...] = runtimes[:, :, 0]


class _RIQ:
    """RIQ(d): replicas to the idle polled servers (``V_j <= t``); if none is idle, the job
    joins the first polled server (a uniformly random one) alone."""

    def __init__(self, size: int):
        self.free = np.zeros(size)

    def __call__(self, times, flat, runtimes, response, cost):
        free, never, where = self.free, _NEVER, np.where
        fastest = np.empty(times.shape)
        alone = np.empty(times.shape)
        idle_count = np.empty(times.shape, dtype=np.intp)
        arrivals = times[:, :, None]
        for i in range(times.shape[0]):
            servers, t = flat[i], arrivals[i]
            v = free[servers]
            idle = v <= t
            first = where(idle, runtimes[i], never).min(axis=1, out=fastest[i])
            new = where(idle, t + first[:, None], v)
            new[:, 0] = where(first < never, new[:, 0], v[:, 0] + runtimes[i, :, 0])
            # the wait and the runtime, not the finish less the arrival (clocks far beyond
            # the response times, at tiny loads, keep few of its digits)
            np.add(v[:, 0] - t[:, 0], runtimes[i, :, 0], out=alone[i])
            free[servers] = new
            idle.sum(axis=1, out=idle_count[i])
        any_idle = fastest < never
        response[...] = where(any_idle, fastest, alone)
        cost[...] = where(any_idle, fastest * idle_count, runtimes[:, :, 0])


class _Threshold:
    """THRESHOLD-n: replicas to the polled servers holding at most ``n`` jobs, else the job
    joins the first polled server alone. A server's job count at ``t`` is the number of its
    assigned replicas leaving after ``t``; their leaving times sit in a per-server buffer whose
    expired entries are reused (the buffer doubles when a server holds more jobs than slots)."""

    def __init__(self, size: int, n: int):
        self.free = np.zeros(size)
        self.leave = np.full((size, 4), -np.inf)
        self.n = n

    def __call__(self, times, flat, runtimes, response, cost):
        free, n, inf = self.free, self.n, np.inf
        used = np.empty(runtimes.shape)
        for i in range(times.shape[0]):
            t, servers, r = times[i], flat[i], runtimes[i]
            tc = t[:, None]
            v = free[servers]
            pending = self.leave[servers]
            eligible = (pending > tc[:, :, None]).sum(axis=2) <= n
            any_eligible = eligible.any(axis=1)
            # times from the arrival on (the wait, the finish, ...): a response is then not
            # a difference of clocks far beyond it (tiny loads)
            start = np.maximum(v - tc, 0.0)
            finish = start + r
            done = np.where(eligible, finish, inf).min(axis=1)
            leave = np.minimum(finish, done[:, None])
            kept = np.where(eligible, np.maximum(start, leave), 0.0)
            kept[:, 0] = np.where(any_eligible, kept[:, 0], finish[:, 0])
            leave[:, 0] = np.where(any_eligible, leave[:, 0], finish[:, 0])
            assigned = eligible.copy()
            assigned[:, 0] |= ~any_eligible
            slot = pending.argmin(axis=2)
            oldest = np.take_along_axis(pending, slot[:, :, None], axis=2)[:, :, 0]
            if np.any(assigned & (oldest > tc)):
                self._grow()
                slot = np.where(oldest > tc, pending.shape[2], slot)
            free[servers] = np.where(assigned, tc + kept, v)
            self.leave[servers[assigned], slot[assigned]] = (tc + leave)[assigned]
            response[i] = np.where(any_eligible, done, finish[:, 0])
            used[i] = np.where(assigned, kept - start, 0.0)
        used.sum(axis=2, out=cost)  # one summation order for both engines

    def _grow(self):
        size, slots = self.leave.shape
        grown = np.full((size, 2 * slots), -np.inf)
        grown[:, :slots] = self.leave
        self.leave = grown


class _Redundant:
    """Replicas on every polled server. ``groups`` jobs of ``polled / groups`` copies each; a
    job completes at the ``needed``-th finish among its copies, the arrival when its last job
    completes. RedundancyD(d): 1 group, needed 1. MDS(n, m): 1 group, needed n.
    Replication(n, d): n groups of d copies, needed 1. With ``remove`` the copies of a job are
    cancelled when it completes; without, every copy runs to the end."""

    def __init__(self, size: int, needed: int, groups: int, remove: bool):
        self.free = np.zeros(size)
        self.needed, self.groups, self.remove = needed, groups, remove

    def __call__(self, times, flat, runtimes, response, cost):
        free, needed, groups, remove = self.free, self.needed, self.groups, self.remove
        done = np.empty(times.shape)
        used = np.empty(runtimes.shape)
        arrivals = times[:, :, None]
        for i in range(times.shape[0]):
            servers = flat[i]
            # times from the arrival on (see _Threshold); in place on the gathered copy
            start = free[servers]
            start -= arrivals[i]
            np.maximum(start, 0.0, out=start)
            finish = start + runtimes[i]
            if groups > 1:
                each = finish.reshape(finish.shape[0], groups, -1).min(axis=2)
                each.max(axis=1, out=done[i])
                cancel = np.repeat(each, finish.shape[1] // groups, axis=1)
            else:
                if needed == 1:
                    finish.min(axis=1, out=done[i])
                else:
                    done[i] = np.partition(finish, needed - 1, axis=1)[:, needed - 1]
                cancel = done[i][:, None]
            kept = np.maximum(start, np.minimum(finish, cancel)) if remove else finish
            np.subtract(kept, start, out=used[i])
            kept += arrivals[i]   # (finish, when it is kept: read already)
            free[servers] = kept
        response[...] = done
        used.sum(axis=2, out=cost)  # one summation order for both engines


#: The numpy kernel of each family a policy may declare (:class:`queuetheory.policies.Kernel`).
KERNELS = {"lindley": _Lindley, "riq": _RIQ, "threshold": _Threshold, "redundant": _Redundant}


def segment_counts(arrivals: int, segments: int = SEGMENTS) -> np.ndarray:
    """Measured arrivals in each of ``segments`` segments: arrival ``i`` (0-based) is in
    segment ``i * segments // arrivals``, so segment ``s`` holds ``i`` from
    ``ceil(s n / segments)`` up to ``ceil((s + 1) n / segments)`` (integers, no array of the
    arrivals).

    Parameters
    ----------
    arrivals : int
        Measured arrivals ``n`` (``>= 0``).
    segments : int, optional
        Number of segments (``>= 1``).

    Returns
    -------
    numpy.ndarray
        ``segments`` counts (int64) summing to ``arrivals``.

    Examples
    --------
    >>> from queuetheory.simulation.engine import segment_counts
    >>> segment_counts(10, 4).tolist()
    [3, 2, 3, 2]
    """
    edges = -(-np.arange(segments + 1, dtype=np.int64) * arrivals // segments)
    return np.diff(edges)


def _unfinished(clock: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Unfinished work per lane at the lane's time: a server assigned work up to ``V`` is busy
    without a break until ``V`` (every job starts at ``max(V, t)``)."""
    lanes = clock.size
    return np.maximum(free.reshape(lanes, -1) - clock[:, None], 0.0).sum(axis=1)


class _Statistics:
    """Streaming per-lane statistics of the measured window: sums, a log-spaced histogram,
    segment means for the trend check, and (on request) the samples themselves."""

    def __init__(self, spec: Spec, width: int):
        self.spec = spec
        self.width = width
        self.sum = np.zeros(width)
        self.cost = np.zeros(width)
        self.segments = np.zeros((width, spec.segments))
        #: Arrival ``i`` is in segment ``s`` for ``edges[s] <= i < edges[s + 1]``.
        self.edges = [int(e) for e in np.cumsum(np.append(0, segment_counts(
            spec.measured_arrivals, spec.segments)))]
        self.hist = np.zeros(width * spec.hist_bins, dtype=np.int64)
        self.low = np.full(width, np.inf)
        self.high = np.zeros(width)
        self.start = np.zeros(width)
        self.end_time = np.zeros(width)
        self.backlog = np.zeros(width)
        self.samples: list[np.ndarray] = []

    def begin(self, clock: np.ndarray, free: np.ndarray) -> None:
        """Start of the measured window: its time and the unfinished work per lane."""
        self.start = clock.copy()
        self.backlog = _unfinished(clock, free)

    def end(self, clock: np.ndarray, free: np.ndarray) -> None:
        """End of the measured window (the last arrival)."""
        self.end_time = clock.copy()
        self.backlog = self.backlog - _unfinished(clock, free)

    def add(self, first: int, response, cost):
        """Measured arrivals ``first, first + 1, ...`` (rows) of every lane (columns)."""
        spec = self.spec
        values = np.ascontiguousarray(response.T)
        self.sum += values.sum(axis=1)
        self.cost += np.ascontiguousarray(cost.T).sum(axis=1)
        np.minimum(self.low, values.min(axis=1), out=self.low)
        np.maximum(self.high, values.max(axis=1), out=self.high)
        rows, edges, segments = values.shape[1], self.edges, spec.segments
        for s in range(first * segments // spec.measured_arrivals,
                       (first + rows - 1) * segments // spec.measured_arrivals + 1):
            part = values[:, max(edges[s] - first, 0):min(edges[s + 1] - first, rows)]
            self.segments[:, s] += part.sum(axis=1)
        with np.errstate(divide="ignore"):
            logs = np.log(values)
        logs -= spec.hist_low
        logs /= spec.hist_step
        bins = np.clip(logs, 0, spec.hist_bins - 1, out=logs).astype(np.intp)
        if self.width > 1:
            bins += (np.arange(self.width) * spec.hist_bins)[:, None]
        self.hist += np.bincount(bins.ravel(), minlength=self.hist.size)
        if spec.keep_samples:
            self.samples.append(values)

    def finish(self, lanes: list[int]) -> LaneStatistics:
        spec = self.spec
        counts = segment_counts(spec.measured_arrivals, spec.segments)
        return LaneStatistics(
            lanes=list(lanes), hist_low=spec.hist_low, sum=self.sum, cost=self.cost,
            segments=self.segments / np.maximum(counts, 1), segment_counts=counts,
            hist=self.hist.reshape(self.width, spec.hist_bins), low=self.low, high=self.high,
            duration=self.end_time - self.start, busy_time=self.cost + self.backlog,
            samples=np.concatenate(self.samples, axis=1) if spec.keep_samples else None)
