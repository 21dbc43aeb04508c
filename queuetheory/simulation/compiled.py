"""The simulation kernels compiled with numba (private; needs ``pip install queuetheory[fast]``).

Each kernel applies the same update rule as its numpy twin in :mod:`.engine`, arrival by
arrival, with the same floating-point operations in the same order, so both engines give
bit-identical results from the same random draws (which numpy makes in both cases). Where the
numpy kernel sums over the servers of an arrival (the cost), both kernels write the per-server
terms and the sum is taken by the same numpy call. Compiled functions are cached on disk
(:func:`.._jit.njit`, under a stamp of the package's sources): the first call in a fresh
environment, or after any change to the package, compiles (a few seconds), later processes
load the machine code.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from . import engine

# importable without numba too (e.g. by doctest collection): the kernels then stay plain
# Python, and simulate(engine="numba") refuses to run
_jit = njit(nogil=True)


@_jit
def _lindley(times, flat, runtimes, free, stamp, block, cum, latest, last, response, cost):
    # The closed form of engine._Lindley per server, in arrival order: c_n = c_(n-1) + b_n,
    # L_n = max(L_(n-1), a_n - (c_n - b_n)), D_n = c_n + max(V_0, L_n); V_0 is the server's
    # state at the start of the block, replaced by its last D_n at the end.
    rows, lanes = times.shape
    for i in range(rows):
        for lane in range(lanes):
            j = flat[i, lane, 0]
            a = times[i, lane]
            b = runtimes[i, lane, 0]
            if stamp[j] != block:
                stamp[j] = block
                c = b
                lead = a - (c - b)
                lat = lead
            else:
                c = cum[j] + b
                lead = a - (c - b)
                lat = max(latest[j], lead)
            cum[j] = c
            latest[j] = lat
            hold = max(free[j], lat)
            last[j] = c + hold
            response[i, lane] = b + (hold - lead)
            cost[i, lane] = b
    for i in range(rows):
        for lane in range(lanes):
            j = flat[i, lane, 0]
            free[j] = last[j]


@_jit
def _riq(times, flat, runtimes, free, never, response, cost):
    rows, lanes = times.shape
    polled = flat.shape[2]
    for i in range(rows):
        for lane in range(lanes):
            t = times[i, lane]
            first = never
            count = 0
            for p in range(polled):
                if free[flat[i, lane, p]] <= t:
                    count += 1
                    first = min(first, runtimes[i, lane, p])
            if first < never:
                for p in range(polled):
                    j = flat[i, lane, p]
                    if free[j] <= t:
                        free[j] = t + first
                response[i, lane] = first
                cost[i, lane] = first * count
            else:
                j = flat[i, lane, 0]
                response[i, lane] = (free[j] - t) + runtimes[i, lane, 0]
                free[j] = free[j] + runtimes[i, lane, 0]
                cost[i, lane] = runtimes[i, lane, 0]


@_jit
def _threshold(times, flat, runtimes, free, leave, n, begin, start, finish, eligible, spare,
               response, used):
    # Arrivals are taken in the order (row, lane). Returns the position at which a server
    # that must hold the job has no expired leaving-time slot (the caller grows the buffer
    # and resumes there), or rows * lanes when done.
    rows, lanes = times.shape
    polled = flat.shape[2]
    slots = leave.shape[1]
    for position in range(begin, rows * lanes):
        i, lane = position // lanes, position % lanes
        t = times[i, lane]
        done = np.inf
        any_eligible = False
        for p in range(polled):
            j = flat[i, lane, p]
            held = 0
            spare[p] = False
            for s in range(slots):
                if leave[j, s] > t:
                    held += 1
                else:
                    spare[p] = True
            eligible[p] = held <= n
            start[p] = max(free[j] - t, 0.0)
            finish[p] = start[p] + runtimes[i, lane, p]
            if eligible[p]:
                any_eligible = True
                done = min(done, finish[p])
        if not any_eligible:
            eligible[0] = True
            done = finish[0]
        for p in range(polled):
            if eligible[p] and not spare[p]:
                return position
        for p in range(polled):
            j = flat[i, lane, p]
            if eligible[p]:
                gone = min(finish[p], done)
                kept = max(start[p], gone)
                slot = 0
                for s in range(1, slots):
                    if leave[j, s] < leave[j, slot]:
                        slot = s
                leave[j, slot] = t + gone
                free[j] = t + kept
                used[i, lane, p] = kept - start[p]
            else:
                used[i, lane, p] = 0.0
        response[i, lane] = done
    return rows * lanes


@_jit
def _redundant(times, flat, runtimes, free, needed, groups, remove, start, finish, order,
               cancel, response, used):
    rows, lanes = times.shape
    polled = flat.shape[2]
    size = polled // groups
    for i in range(rows):
        for lane in range(lanes):
            t = times[i, lane]
            for p in range(polled):
                start[p] = max(free[flat[i, lane, p]] - t, 0.0)
                finish[p] = start[p] + runtimes[i, lane, p]
            if groups > 1:
                done = -np.inf
                for g in range(groups):
                    each = finish[g * size]
                    for p in range(g * size + 1, (g + 1) * size):
                        each = min(each, finish[p])
                    for p in range(g * size, (g + 1) * size):
                        cancel[p] = each
                    done = max(done, each)
            else:
                if needed == 1:
                    done = finish[0]
                    for p in range(1, polled):
                        done = min(done, finish[p])
                else:
                    order[:] = finish
                    order.sort()
                    done = order[needed - 1]
                cancel[:] = done
            for p in range(polled):
                kept = max(start[p], min(finish[p], cancel[p])) if remove else finish[p]
                free[flat[i, lane, p]] = t + kept
                used[i, lane, p] = kept - start[p]
            response[i, lane] = done


class Lindley(engine._Lindley):
    """Compiled :class:`engine._Lindley`."""

    def __init__(self, size: int):
        super().__init__(size)
        self.stamp = np.zeros(size, dtype=np.int64)
        self.block = 0
        self.cum, self.latest, self.last = np.empty(size), np.empty(size), np.empty(size)

    def __call__(self, times, flat, runtimes, response, cost):
        self.block += 1
        _lindley(times, flat, runtimes, self.free, self.stamp, self.block, self.cum,
                 self.latest, self.last, response, cost)


class RIQ(engine._RIQ):
    """Compiled :class:`engine._RIQ`."""

    def __call__(self, times, flat, runtimes, response, cost):
        _riq(times, flat, runtimes, self.free, engine._NEVER, response, cost)


class Threshold(engine._Threshold):
    """Compiled :class:`engine._Threshold`."""

    def __call__(self, times, flat, runtimes, response, cost):
        polled = flat.shape[2]
        scratch = (np.empty(polled), np.empty(polled), np.empty(polled, dtype=np.bool_),
                   np.empty(polled, dtype=np.bool_))
        used = np.empty(runtimes.shape)
        position = 0
        while True:
            position = _threshold(times, flat, runtimes, self.free, self.leave, self.n,
                                  position, *scratch, response, used)
            if position == times.size:
                break
            self._grow()
        used.sum(axis=2, out=cost)


class Redundant(engine._Redundant):
    """Compiled :class:`engine._Redundant`."""

    def __call__(self, times, flat, runtimes, response, cost):
        polled = flat.shape[2]
        used = np.empty(runtimes.shape)
        _redundant(times, flat, runtimes, self.free, self.needed, self.groups, self.remove,
                   np.empty(polled), np.empty(polled), np.empty(polled), np.empty(polled),
                   response, used)
        used.sum(axis=2, out=cost)


#: The compiled kernel of each family (the same keys as :data:`.engine.KERNELS`).
KERNELS = {"lindley": Lindley, "riq": RIQ, "threshold": Threshold, "redundant": Redundant}
