"""The result of :func:`queuetheory.analyze`."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from functools import cached_property

from . import _checks
from .response import ResponseTime
from .system import System

__all__ = ["Prediction"]


class Prediction:
    """What the analysis predicts for a :class:`System`, with the method that produced it.

    Attributes
    ----------
    system : System
        The system analysed.
    method : str
        How the numbers were obtained (model, limit, equations), fit for a methods section.
    exact : bool
        ``True`` for an exact result (in the stated limit), ``False`` for an approximation.
    stable : bool
        Whether the system is stable; if not, every time is ``inf``.
    load : float
        Offered load per server without redundancy, ``arrival_rate * E[R]``.
    mean : float
        Mean response time (``inf`` if unstable or if it diverges).
    busy_fraction : float or None
        Long-run fraction of time a server is busy (including work on cancelled replicas).
    cost : float or None
        Expected server time consumed per job, including cancelled replicas.
    assumptions : tuple of str
        The assumptions behind the numbers.
    limit : bool
        ``True`` when the numbers are the ``k -> infinity`` limit, ``False`` when they hold
        exactly for the system's own number of servers (e.g. Random, or an exact finite-k
        formula).

    Examples
    --------
    >>> import queuetheory as qt
    >>> p = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
    >>> p.mean, p.stable, round(p.quantile(0.99), 6)
    (2.0, True, 9.21034)
    """

    def __init__(self, system: System, *, method: str, exact: bool, stable: bool, mean: float,
                 response_time: Callable[[], ResponseTime] | None = None,
                 busy_fraction: float | None = None, cost: float | None = None,
                 assumptions: tuple[str, ...] = (), references: tuple[str, ...] = (),
                 limit: bool = True):
        self.system = system
        self.method = method
        self.exact = exact
        self.stable = bool(stable)
        self.load = system.load
        self.mean = float(mean) if self.stable else math.inf
        self.busy_fraction = busy_fraction
        self.cost = cost
        self.assumptions = tuple(assumptions)
        self.references = tuple(references)
        self.limit = bool(limit)
        self._response_factory = response_time

    @cached_property
    def response_time(self) -> ResponseTime:
        """The response-time distribution (``cdf``, ``sf``, ``ppf``, ``lst``, ``moment``)."""
        if not self.stable:
            return ResponseTime.unstable()
        if self._response_factory is None:
            raise NotImplementedError(
                f"{self.method}: this analysis gives the mean only; use qt.simulate for the "
                f"distribution")
        return self._response_factory()

    def quantile(self, q: float, precision: int | None = None) -> float:
        """The ``q``-quantile of the response time, q in (0, 1) (``inf`` if unstable)."""
        _checks.probability_level("q", q)
        if not self.stable:
            return math.inf
        return self.response_time.ppf(q, precision=precision)

    def describe(self) -> str:
        """A paragraph stating the system, the method, the assumptions and the key numbers."""
        status = ("stable" if self.stable else "unstable (all response times are infinite)")
        parts = [f"System: {self.system.describe()}.",
                 f"Method: {self.method} ({'exact' if self.exact else 'approximation'}).",
                 f"The system is {status} at load {self.load:.6g}."]
        if self.assumptions:
            parts.append("Assumptions: " + "; ".join(self.assumptions) + ".")
        if self.stable:
            parts.append(f"Mean response time {self.mean:.6g}.")
        if self.references:
            parts.append("References: " + "; ".join(self.references) + ".")
        return " ".join(parts)

    def to_dict(self) -> dict:
        """The scalar results as a plain dictionary (for JSON output)."""
        return {"policy": self.system.policy.label(), "runtime": self.system.runtime.name,
                "arrival_rate": self.system.arrival_rate, "servers": self.system.servers,
                "stable": self.stable, "load": self.load, "mean": self.mean,
                "busy_fraction": self.busy_fraction, "cost": self.cost, "method": self.method,
                "exact": self.exact, "limit": self.limit}

    def __getstate__(self) -> dict:
        """Picklable state (for multiprocessing, dask): the response-time law is rebuilt on
        demand, by re-running the analysis of the system where its factory is a closure."""
        state = self.__dict__.copy()
        state.pop("response_time", None)
        factory = state.get("_response_factory")
        if factory is not None:
            try:
                pickle.dumps(factory)
            except (pickle.PicklingError, AttributeError, TypeError):
                state["_response_factory"] = _Reanalysis(self.system)
        return state

    def __repr__(self):
        return (f"Prediction({self.system.policy.label()}, stable={self.stable}, "
                f"mean={self.mean:.6g}, method={self.method!r})")


class _Reanalysis:
    """``analyze(system).response_time``, a picklable stand-in for a closure."""

    def __init__(self, system: System):
        self.system = system

    def __call__(self) -> ResponseTime:
        from .analysis import analyze

        return analyze(self.system).response_time
