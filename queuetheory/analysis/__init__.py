"""Analysis: one module per policy family; :func:`analyze` dispatches on the policy."""

from __future__ import annotations

from collections.abc import Callable

from ..prediction import Prediction
from ..system import System

__all__ = ["analyze", "register"]

_HANDLERS: dict[type, Callable[[System], Prediction]] = {}


def register(*policy_types: type):
    """Decorator: make ``function(system) -> Prediction`` the analysis of these policy types."""

    def decorate(function):
        for policy_type in policy_types:
            _HANDLERS[policy_type] = function
        return function

    return decorate


def analyze(system: System) -> Prediction:
    """Predict the response time of ``system`` from the formulas.

    The ``k -> infinity`` (mean-field) limit is used unless ``System(..., servers=k)`` names a
    finite ``k`` for which the policy has an exact finite-``k`` method; ``Prediction.method``
    says which.

    Parameters
    ----------
    system : System
        The policy, runtime model and arrival rate.

    Returns
    -------
    Prediction
        Mean, stability, load, busy fraction, cost and the response-time distribution.

    Raises
    ------
    NotImplementedError
        When no analysis exists for the policy and runtime model (use :func:`simulate`).

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> system = qt.System(qt.RIQ(d=3), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
    ...                    arrival_rate=0.7)
    >>> p = qt.analyze(system)
    >>> round(p.busy_fraction, 6), round(p.mean, 6)
    (0.732885, 1.777675)
    """
    if not isinstance(system, System):
        raise ValueError(f"system must be a qt.System, got {system!r}")
    if system.interarrival is not None:
        raise NotImplementedError("the analysis assumes Poisson arrivals; use qt.simulate for "
                                  "renewal arrivals")
    # looked up along the class hierarchy, as the simulator's kernels are: a subclass of RIQ is
    # analysed as RIQ
    handler = next((_HANDLERS[cls] for cls in type(system.policy).__mro__ if cls in _HANDLERS),
                   None)
    if handler is None:
        raise NotImplementedError(f"no analysis of {system.policy.label()} yet; use qt.simulate")
    return handler(system)


from . import mds, redundancy, riq  # noqa: E402,F401  (each registers its handlers)
