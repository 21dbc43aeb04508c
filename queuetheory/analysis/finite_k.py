"""The finite-k gap of the k -> infinity analyses, read from a map measured by simulation.

``queuetheory/data/finite_k_gap.csv`` holds, for each policy whose analysis is the
``k -> infinity`` limit (RIQ, Redundancy-d mean-field, MDS and batch Replication without
removal), two runtime models (S&X with the Facebook slowdowns and exponential X; IR
exponential), loads 0.3, 0.5, 0.7, 0.9 and k = 10, 30, 100, 300 servers, the relative gap
``simulated / limit - 1`` of the mean and the 99th percentile with the 95 % interval of the
simulated value; ``verdict`` is the simulation's (an unstable finite farm has gap ``inf``, an
inconclusive one ``nan``). ``scripts/finite_k_gap_map.py`` produced it (seeded; see its
docstring).

:func:`finite_k_gap` turns the map into an estimate for a given system:

* between two mapped loads the estimate is interpolated linearly in the load; the interval
  spans both neighbours' intervals;
* in ``k`` the gap is taken to shrink like ``1 / k`` (the O(1/k) convergence of mean-field
  limits): between mapped ``k`` the scaled gap ``k * gap`` is interpolated linearly in
  ``log k``; beyond ``k = 300`` the ``k = 300`` value is scaled by ``300 / k`` (an
  extrapolation, stated as such);
* where a mapped point used was unstable the gap is ``inf``; where one was inconclusive,
  outside the mapped loads, below ``k = 10``, for other runtime models or policy parameters
  the gap is *unknown* (``None``).

The map is keyed on the policy's class and parameters, not on its label: each row names the
registered policy (``family``, e.g. ``riq``, see :func:`queuetheory.policies.policy_class`)
and its dataclass fields (``parameters``, JSON). A policy is looked up along its class
hierarchy (:func:`queuetheory.policies.nearest`, as :func:`queuetheory.analyze` finds its
analysis), so a subclass of :class:`~queuetheory.RIQ` is mapped as RIQ with the same ``d``,
whatever its label; THRESHOLD-0 is RIQ.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..distributions import Exponential
from ..policies import RIQ, Policy, Threshold, nearest, policy_class
from ..runtime import IR, SX
from ..slowdowns import facebook
from ..system import System

__all__ = ["FiniteKGap", "finite_k_gap", "runtime_key", "policy_columns", "THRESHOLD"]

#: Relative gap above which ``qt.analyze`` warns that the limit may be off for finite k.
THRESHOLD = 0.01
MAP_FILE = Path(__file__).resolve().parents[1] / "data" / "finite_k_gap.csv"
_STATISTICS = ("mean", "p99")
_RUNTIME_NAMES = {"sx-facebook": "S&X (Facebook slowdowns, exponential X)",
                  "ir-exponential": "IR exponential"}


@dataclass(frozen=True)
class FiniteKGap:
    """The estimated relative gap ``finite-k value / limit - 1`` of one system.

    Attributes
    ----------
    mean : float or None
        Estimated gap of the mean (``inf`` if the map found the finite farm unstable;
        ``None`` if the gap is unknown).
    mean_interval : (float, float) or None
        The range the map's 95 % intervals allow (``None`` if unknown).
    p99, p99_interval : float or None, (float, float) or None
        The same for the 99th percentile.
    source : str
        Where the numbers come from (or why the gap is unknown).
    """

    mean: float | None
    mean_interval: tuple[float, float] | None
    p99: float | None
    p99_interval: tuple[float, float] | None
    source: str

    @property
    def known(self) -> bool:
        """Whether the map covers the system (else every number is ``None``)."""
        return self.mean is not None

    @property
    def bound(self) -> float:
        """The largest relative gap the map's intervals allow (``inf`` if unknown)."""
        if not self.known:
            return math.inf
        return max(abs(v) for v in (*self.mean_interval, *self.p99_interval))

    def describe(self) -> str:
        """One sentence: the estimated gap and its range, or why it is unknown."""
        if not self.known:
            return f"finite-k gap unknown ({self.source})"
        if math.isinf(self.mean):
            return f"finite-k gap infinite: {self.source}"
        low, high = self.mean_interval
        p_low, p_high = self.p99_interval
        return (f"estimated finite-k gap {100 * self.mean:+.3g}% on the mean (range "
                f"[{100 * low:+.3g}%, {100 * high:+.3g}%]) and {100 * self.p99:+.3g}% on the "
                f"99th percentile (range [{100 * p_low:+.3g}%, {100 * p_high:+.3g}%]), "
                f"{self.source}")

    def to_dict(self) -> dict:
        """Plain data: ``known``, the gaps and ranges (lists; ``None`` where unknown, ``inf``
        where the finite farm was found unstable, never NaN) and ``source``.

        Examples
        --------
        >>> from queuetheory.analysis.finite_k import FiniteKGap
        >>> FiniteKGap(None, None, None, None, "no data").to_dict()["mean"] is None
        True
        """
        def pair(value):
            return None if value is None else [float(v) for v in value]

        return {"known": self.known, "mean": self.mean, "mean_interval": pair(self.mean_interval),
                "p99": self.p99, "p99_interval": pair(self.p99_interval), "source": self.source}


def runtime_key(runtime) -> str | None:
    """The map's name of a runtime model, or ``None`` if the map does not cover it.

    The gap does not depend on the unit of time, so ``X``'s rate and a common scale of the
    slowdowns do not matter (``S c`` with ``X / c`` is the same model).
    """
    if isinstance(runtime, IR) and isinstance(runtime.R, Exponential):
        return "ir-exponential"
    if isinstance(runtime, SX) and isinstance(runtime.X, Exponential) \
            and runtime.S.atoms is not None:
        ref = facebook()
        values, probs = runtime.S.atoms
        if values.size == ref.values.size and np.allclose(
                values / runtime.S.mean(), ref.values / ref.mean(), rtol=1e-9, atol=0) \
                and np.allclose(probs, ref.probs, rtol=1e-9, atol=1e-12):
            return "sx-facebook"
    return None


def policy_columns(policy: Policy) -> dict[str, str]:
    """The map's ``family`` (registered name) and ``parameters`` (JSON of the dataclass
    fields) of a registered policy, as ``scripts/finite_k_gap_map.py`` writes them.

    Parameters
    ----------
    policy : Policy
        An instance of a class that declares its ``names``.

    Returns
    -------
    dict
        ``{"family": ..., "parameters": ...}``, both strings.

    Raises
    ------
    ValueError
        If ``policy``'s own class declares no ``names``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> policy_columns(qt.MDS(4, 2, remove=False))
    {'family': 'mds', 'parameters': '{"n": 4, "m": 2, "remove": false}'}
    """
    family = type(policy).__dict__.get("names", ())
    if not family:
        raise ValueError(f"policy must be of a registered class (one declaring names), got "
                         f"{policy!r}")
    return {"family": family[0], "parameters": json.dumps(_parameters(policy, type(policy)))}


def _parameters(policy: Policy, cls: type) -> dict:
    """The values of ``cls``'s dataclass fields on ``policy`` (a subclass's extra fields are
    not ``cls``'s)."""
    return {f.name: getattr(policy, f.name) for f in dataclasses.fields(cls)}


@lru_cache(maxsize=1)
def _load_map() -> dict:
    """``{policy class: {(parameters, runtime key): {load: {k: {stat: (gap, low, high)}}}}}``
    with ``parameters`` a sorted tuple of ``(field, value)``."""
    table: dict = {}
    with MAP_FILE.open(newline="") as handle:
        for row in csv.DictReader(handle):
            cls, _ = policy_class(row["family"])
            parameters = tuple(sorted(json.loads(row["parameters"]).items()))
            entry = table.setdefault(cls, {}).setdefault((parameters, row["runtime"]), {})
            per_k = entry.setdefault(float(row["load"]), {})
            point = {stat: tuple(float(row[f"gap_{stat}{suffix}"])
                                 for suffix in ("", "_low", "_high"))
                     for stat in _STATISTICS}
            point["verdict"] = row["verdict"]
            per_k[int(row["servers"])] = point
    return table


def _mapped(policy: Policy, key: str) -> tuple[str, dict | None]:
    """The policy as the map names it, and its entry for runtime ``key`` (or ``None``)."""
    if isinstance(policy, Threshold) and policy.n == 0:
        policy = RIQ(policy.d)  # THRESHOLD-0 is RIQ
    found = nearest(_load_map(), policy)
    if found is None:
        return policy.label(), None
    cls, entries = found
    parameters = _parameters(policy, cls)
    name = policy.label()
    if type(policy) is not cls:
        name += f" (mapped as its parent class, {cls(**parameters).label()})"
    return name, entries.get((tuple(sorted(parameters.items())), key))


def _at_k(per_k: dict, k: int) -> tuple[dict | str, str] | None:
    """The gaps at ``k`` from the mapped ``k`` (1/k scaling), or ``None`` below the map;
    ``("unstable" or "inconclusive", k used)`` where a mapped point used had that verdict."""
    ks = sorted(per_k)
    if k < ks[0]:
        return None
    if k in per_k:
        used = [k]
    elif k > ks[-1]:
        used = [ks[-1]]
    else:
        upper = next(i for i, m in enumerate(ks) if m > k)
        used = [ks[upper - 1], ks[upper]]
    for verdict in ("unstable", "inconclusive"):
        bad = [m for m in used if per_k[m]["verdict"] == verdict]
        if bad:
            return verdict, f"k = {bad[0]}"
    if k in per_k:
        return per_k[k], ""
    if k > ks[-1]:
        top = ks[-1]
        scale = top / k
        return ({stat: tuple(scale * v for v in per_k[top][stat]) for stat in _STATISTICS},
                f"extrapolated as 1/k from k = {top}")
    k1, k2 = used
    w = math.log(k / k1) / math.log(k2 / k1)
    out = {}
    for stat in _STATISTICS:
        a = [k1 * v for v in per_k[k1][stat]]
        b = [k2 * v for v in per_k[k2][stat]]
        gap = ((1 - w) * a[0] + w * b[0]) / k
        low = min(a[1], b[1]) / k
        high = max(a[2], b[2]) / k
        out[stat] = (gap, low, high)
    return out, f"interpolated as 1/k between k = {k1} and {k2}"


def finite_k_gap(system: System) -> FiniteKGap:
    """Estimated relative gap between ``system`` on ``system.servers`` servers and its limit.

    Parameters
    ----------
    system : System
        A system with ``servers`` set.

    Returns
    -------
    FiniteKGap
        The estimate with its range, or ``known=False`` with the reason.

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.analysis.finite_k import finite_k_gap
    >>> S = qt.slowdowns.facebook()
    >>> runtime = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    >>> gap = finite_k_gap(qt.System(qt.RIQ(10), runtime, arrival_rate=0.7, servers=10))
    >>> gap.known, gap.mean > 0.5
    (True, True)
    >>> finite_k_gap(qt.System(qt.RIQ(7), runtime, arrival_rate=0.7, servers=10)).known
    False
    """
    def unknown(reason: str) -> FiniteKGap:
        return FiniteKGap(None, None, None, None, reason)

    k, key = system.servers, runtime_key(system.runtime)
    if key is None:
        return unknown(f"the map has no data for {system.runtime.name} runtimes other than "
                       f"{' and '.join(_RUNTIME_NAMES.values())}")
    label, entry = _mapped(system.policy, key)
    if entry is None:
        return unknown(f"the map has no data for {label} with {_RUNTIME_NAMES[key]} runtimes")
    loads = sorted(entry)
    # a mapped load computed from rounded inputs (0.3 as 0.29999999999999993) is that load
    load = min((x for x in loads if math.isclose(x, system.load, rel_tol=1e-9)),
               default=system.load)
    if not loads[0] <= load <= loads[-1]:
        return unknown(f"load {load:.4g} is outside the mapped loads {loads[0]:g} to "
                       f"{loads[-1]:g} for {label}")
    lower = max(x for x in loads if x <= load)
    upper = min(x for x in loads if x >= load)
    sides = [_at_k(entry[x], k) for x in (lower, upper)]
    if any(side is None for side in sides):
        return unknown(f"k = {k} is below the smallest mapped k for {label}")
    where = f"{label} with {_RUNTIME_NAMES[key]} runtimes"
    for verdict in ("unstable", "inconclusive"):
        for x, (found, point) in zip((lower, upper), sides):
            if found != verdict:
                continue
            what = f"the map's simulation of {where} at load {x:g}, {point}, was"
            if verdict == "inconclusive":
                return unknown(f"{what} inconclusive")
            inf = (math.inf, math.inf)
            return FiniteKGap(math.inf, inf, math.inf, inf,
                              f"{what} UNSTABLE although the limit is stable: the finite farm "
                              f"may have no steady state at all")
    w = 0.0 if upper == lower else (load - lower) / (upper - lower)
    values = {}
    for stat in _STATISTICS:
        (g1, l1, h1), (g2, l2, h2) = sides[0][0][stat], sides[1][0][stat]
        values[stat] = ((1 - w) * g1 + w * g2, (min(l1, l2), max(h1, h2)))
    how = "; ".join(sorted({note for _, note in sides if note}))
    source = (f"from the simulated map for {where} at "
              f"load{'s' if upper != lower else ''} "
              f"{lower:g}{f' and {upper:g}' if upper != lower else ''}"
              + (f" ({how})" if how else ""))
    return FiniteKGap(values["mean"][0], values["mean"][1], values["p99"][0],
                      values["p99"][1], source)
