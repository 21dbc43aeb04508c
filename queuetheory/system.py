"""The :class:`System` spec that :func:`analyze`, :func:`simulate` and :func:`validate` take."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from . import _checks
from .distributions import Distribution, as_distribution
from .policies import Policy, policy_classes
from .runtime import RuntimeModel

__all__ = ["System"]

_RUNTIME_SCALE = (1e-150, 1e150)
"""Mean runtimes a :class:`System` accepts: within them the squares and products of the
runtime's moments stay floats (an M/G/1 wait is ``lam E[R^2] / (2 (1 - rho))``: with
``BoundedPareto(1.5, 1e-250, 1)`` runtimes, ``E[R^2] = 3e-375`` underflowed to 0 and Random
at load 0.5 read a mean 1e124 times too small). Results are equivariant in the time unit."""


@dataclass(frozen=True)
class System:
    """A server farm: a dispatching policy, a runtime model and an arrival rate.

    Parameters
    ----------
    policy : Policy
        :class:`Random`, :class:`RIQ`, :class:`RedundancyD`, :class:`Threshold`, :class:`MDS`
        or :class:`Replication`.
    runtime : RuntimeModel
        :class:`SX` or :class:`IR`.
    arrival_rate : float
        Original jobs per unit time **per server** (> 0); the farm receives
        ``arrival_rate * servers`` jobs per unit time. Batch policies receive batches of ``n``
        jobs at ``arrival_rate / n`` per server.
    servers : int, optional
        Number of servers ``k``. ``None`` (default) means the ``k -> infinity`` limit for the
        analysis; the simulator then needs ``servers=`` itself.
    interarrival : Distribution, optional
        Shape of the law of the time between consecutive arrivals to the farm, rescaled to mean
        ``1 / (arrival_rate * servers)`` (batch policies: per batch). ``None`` (default):
        Poisson arrivals. The analysis assumes Poisson arrivals.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> system = qt.System(qt.RIQ(d=3), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
    ...                    arrival_rate=0.7)
    >>> round(system.load, 12)
    0.7

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for
       job redundancy: decoupling server slowdown and job size", IEEE/ACM Transactions on
       Networking 25(6), 2017 (the farm: ``k`` FCFS servers, Poisson arrivals, redundant
       replicas cancelled on completion, with S&X or IR runtimes).
    """

    policy: Policy
    runtime: RuntimeModel
    arrival_rate: float
    servers: int | None = None
    interarrival: Distribution | None = None

    def __post_init__(self):
        if not isinstance(self.policy, Policy):
            names = ", ".join(cls.__name__ for cls in policy_classes())
            raise ValueError(f"policy must be a queuetheory policy ({names}), "
                             f"got {self.policy!r}")
        if not isinstance(self.runtime, RuntimeModel):
            raise ValueError(f"runtime must be qt.SX(X, S) or qt.IR(R), got {self.runtime!r}")
        mean = self.runtime.mean_runtime()
        low, high = _RUNTIME_SCALE
        if math.isfinite(mean) and mean > 0 and not low <= mean <= high:
            raise ValueError(f"runtime: the mean runtime {mean:.3g} lies outside [{low:g}, "
                             f"{high:g}], where its moments under- or overflow; choose a time "
                             f"unit nearer the runtimes (results scale with it: times by c, "
                             f"rates by 1/c)")
        object.__setattr__(self, "arrival_rate",
                           _checks.positive("arrival_rate", self.arrival_rate))
        if self.servers is not None:
            k = _checks.positive_int("servers", self.servers)
            if k < self.policy.polled:
                raise ValueError(f"servers must be >= {self.policy.polled} (the servers one "
                                 f"arrival of {self.policy.label()} uses), got {k}")
            object.__setattr__(self, "servers", k)
        if self.interarrival is not None:
            object.__setattr__(self, "interarrival", as_distribution(self.interarrival))

    @property
    def load(self) -> float:
        """Offered load per server without redundancy, ``arrival_rate * E[R]`` (``rho``)."""
        mean = self.runtime.mean_runtime()
        return math.inf if math.isinf(mean) else self.arrival_rate * mean

    def replace(self, **changes) -> System:
        """A copy with some fields changed, e.g. ``system.replace(arrival_rate=0.5)``."""
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """One sentence naming the policy, the runtime model and the arrival process."""
        arrivals = ("Poisson arrivals" if self.interarrival is None
                    else f"renewal arrivals with interarrival shape {self.interarrival!r}")
        farm = "k -> infinity servers" if self.servers is None else f"k = {self.servers} servers"
        return (f"{self.policy.label()} on {farm}, {self.runtime.name} runtimes "
                f"{self.runtime!r}, {arrivals} at rate {self.arrival_rate:g} per server, "
                f"FCFS at every server, redundant replicas cancelled on completion")
