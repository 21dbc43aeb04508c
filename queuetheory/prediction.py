"""The result of :func:`queuetheory.analyze`."""

from __future__ import annotations

import math
import pickle
import re
from collections.abc import Callable
from functools import cached_property

import mpmath

from . import _checks
from .export import short_repr, shown
from .response import AccuracyWarning, ResponseLaw, ResponseTime, _Reanalysis
from .system import System

__all__ = ["AccuracyWarning", "Prediction"]


class Prediction:
    """What the analysis predicts for a :class:`System`, with the method that produced it.

    Built by the analyses behind :func:`queuetheory.analyze`; every argument after ``system``
    is keyword-only.

    Parameters
    ----------
    system : System
        The system analysed.
    method : str
        How the numbers were obtained.
    exact : bool
        Whether the method is exact for the system as given (see :attr:`exact`).
    stable : bool
        Whether the system is stable.
    mean : float
        Mean response time; stored as ``inf`` when ``stable`` is False.
    response_time : callable, optional
        Function of no arguments returning the response-time law (a :class:`ResponseLaw`),
        called on the first access of :attr:`response_time`. ``None`` (default): the analysis
        gives the mean only, and :attr:`response_time` raises ``NotImplementedError`` for a
        stable system.
    busy_fraction : float, optional
        Long-run fraction of time a server is busy, in [0, 1]; default ``None`` (not given).
    cost : float, optional
        Expected server time per job, >= 0; default ``None`` (not given).
    assumptions : sequence of str, optional
        The assumptions behind the numbers; default none.
    references : sequence of str, optional
        The sources of the method, listed by :meth:`describe` and :meth:`to_dict`; default
        none.
    limit : bool, optional
        Whether the numbers are the ``k -> infinity`` limit; default True.
    errors : dict of str to float, optional
        Estimated absolute errors (keys ``"mean"``, ``"busy_fraction"``), each >= 0; default
        none (closed forms exact to rounding).

    Attributes
    ----------
    system : System
        The system analysed.
    method : str
        How the numbers were obtained (model, limit, equations), fit for a methods section.
    exact : bool
        ``True`` only if the method is exact for the system as given: for its own ``servers``
        if set (Random for any ``k``, Redundancy-d IR exponential's finite-k mean), else in
        the ``k -> infinity`` limit. ``False`` for an approximation, including a limit used
        for a finite ``k``.
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
    errors : dict of str to float
        Estimated absolute errors of the numerically solved statistics (``"mean"``,
        ``"busy_fraction"``), checked against the true errors in the tests; empty where the
        numbers are closed forms exact to rounding. Quantile errors:
        ``response_time.ppf(q, full_output=True)`` or ``response_time.quantile_error(q)``.
    finite_k_gap : FiniteKGap or None
        When the limit is used for a finite ``servers``: the gap to the finite system
        estimated from the simulated map (see :mod:`queuetheory.analysis.finite_k`).

    Examples
    --------
    >>> import queuetheory as qt
    >>> p = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
    >>> p.mean, p.stable, round(p.quantile(0.99), 6)
    (2.0, True, 9.21034)
    """

    def __init__(self, system: System, *, method: str, exact: bool, stable: bool, mean: float,
                 response_time: Callable[[], ResponseLaw] | None = None,
                 busy_fraction: float | None = None, cost: float | None = None,
                 assumptions: tuple[str, ...] = (), references: tuple[str, ...] = (),
                 limit: bool = True, errors: dict[str, float] | None = None):
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
        self.errors = dict(errors or {})
        self.finite_k_gap = None
        self._response_factory = response_time
        from .analysis import settings

        # the accuracy goal and grid budget it is solved under (for a re-analysis: pickles)
        self._settings = settings()

    def _relabelled(self, prefix: str, system: System | None = None,
                    suffix: str = "", assumptions: tuple | None = None) -> Prediction:
        """The same numbers for ``system`` (default: this one's), ``prefix`` before the
        method and ``suffix`` after it, and ``assumptions`` (default: these): for a policy
        that coincides with another one (Redundancy-1 is Random)."""
        return Prediction(system or self.system, method=prefix + self.method + suffix,
                          exact=self.exact,
                          stable=self.stable, mean=self.mean,
                          response_time=self._response_factory,
                          busy_fraction=self.busy_fraction, cost=self.cost,
                          assumptions=self.assumptions if assumptions is None else assumptions,
                          references=self.references, limit=self.limit, errors=self.errors)

    @cached_property
    def response_time(self) -> ResponseLaw:
        """The response-time distribution (``cdf``, ``sf``, ``ppf``, ``lst``, ``moment``), a
        :class:`~queuetheory.ResponseLaw`: ``precision=`` and ``full_output=`` behave alike
        for every policy."""
        if not self.stable:
            return ResponseTime.unstable()
        if self._response_factory is None:
            raise NotImplementedError(
                f"{self.method}: this analysis gives the mean only; use qt.simulate for the "
                f"distribution")
        law = self._response_factory()
        law._origin = _Reanalysis(self.system, self._settings)   # pickled by it where need be
        # a job finds its servers idle with positive probability: runtimes with atoms (or
        # with an atom at 0 only, as X S with X on atoms) give the response time atoms, and no
        # density (pdf raises, as for every law with atoms)
        runtime = self.system.runtime.replica()
        law._has_atoms = law._has_atoms or runtime._has_atoms or runtime.cdf(0.0) > 0
        return law

    @property
    def cost_error(self) -> float | None:
        """Estimated absolute error of :attr:`cost` (the cost per job is the busy fraction over
        the arrival rate per server: the busy fraction's relative error), or ``None``."""
        error = self.errors.get("busy_fraction")
        if error is None or not self.busy_fraction or self.cost is None:
            return None
        return error / self.busy_fraction * self.cost

    def quantile_error(self, q: float) -> float | None:
        """Estimated absolute error of :meth:`quantile` at ``q`` in (0, 1)
        (``response_time.quantile_error``), or ``None`` where the analysis states none (an
        unstable system, a law without error estimates, or one giving the mean only).

        Examples
        --------
        >>> import queuetheory as qt
        >>> p = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
        >>> bool(p.quantile_error(0.99) < 1e-8)
        True
        """
        _checks.probability_level("q", q)
        if not self.stable:
            return None
        try:
            return float(self.response_time.quantile_error(q))
        except NotImplementedError:
            return None

    def quantile(self, q: float, precision: int | None = None) -> float | mpmath.mpf:
        """The ``q``-quantile of the response time, q in (0, 1) (``inf`` if unstable).

        A float in double precision; with ``precision`` (decimal digits, 15 to 1000) an
        :class:`mpmath.mpf` with that many digits where the law has a high-precision path,
        else ``NotImplementedError`` (see :class:`ResponseLaw`).

        Examples
        --------
        >>> import queuetheory as qt
        >>> p = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
        >>> round(p.quantile(0.99), 9)                 # M/M/1: ln(100) / (mu - lam)
        9.210340372
        >>> import mpmath
        >>> # -2 ln(1 - q) at the binary q = 0.98999999999999999112 (mpmath, 30 digits)
        >>> print(mpmath.nstr(p.quantile(0.99, precision=25), 20))
        9.2103403719761809597
        """
        _checks.probability_level("q", q)
        if not self.stable:
            return math.inf
        return self.response_time.ppf(q, precision=precision)

    def describe(self) -> str:
        """A readable summary for a methods section: the system with short numbers, the
        status and key numbers, the method, one sentence per assumption, the references.

        The key numbers have 4 significant digits, or, where an estimated error (:attr:`errors`)
        exceeds half a unit of the last of them, only the digits the error supports, written
        ``value +- error``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> p = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
        >>> print(p.describe().splitlines()[1])
        Stable at load 0.5: mean response time 2, busy fraction 0.5, cost 1 per job.
        """
        system = self.system
        farm = ("k -> infinity servers" if system.servers is None
                else f"k = {system.servers} servers")
        arrivals = ("Poisson arrivals" if system.interarrival is None
                    else f"renewal arrivals ({short_repr(system.interarrival)})")
        lines = [f"{system.policy.label()} on {farm}: {system.runtime.name} runtimes "
                 f"{short_repr(system.runtime)}, {arrivals} at rate {system.arrival_rate:.4g} per "
                 f"server."]
        if self.stable:
            time = "batch completion time" if system.policy.batch > 1 else "response time"
            busy_error = self.errors.get("busy_fraction")
            numbers = [f"mean {time} {shown(self.mean, self.errors.get('mean'))}"]
            if self.busy_fraction is not None:
                numbers.append(f"busy fraction {shown(self.busy_fraction, busy_error)}")
            if self.cost is not None:
                numbers.append(f"cost {shown(self.cost, self.cost_error)} per job")
            lines.append(f"Stable at load {self.load:.4g}: " + ", ".join(numbers) + ".")
        else:
            lines.append(f"The system is unstable at load {self.load:.4g}: every response time "
                         f"is infinite.")
        kind = "exact" if self.exact else "an approximation"
        scope = "in the k -> infinity limit" if self.limit else "for this number of servers"
        lines.append(f"Method ({kind} {scope}): {self.method}.")
        lines += [f"Assumption: {_sentence(a)}" for a in self.assumptions]
        if self.finite_k_gap is not None:
            lines.append(f"The k -> infinity limit is used for k = {system.servers}: "
                         f"{self.finite_k_gap.describe()}.")
        if self.references:
            lines.append("References: " + "; ".join(self.references) + ".")
        return "\n".join(lines)

    def to_dict(self, quantiles=(0.5, 0.95, 0.99)) -> dict:
        """Everything as plain data (for JSON): the system, the numbers, the method, the
        assumptions and references, and the given response-time quantiles (``pXX``; ``None``
        where the analysis gives the mean only)."""
        system = self.system
        out = {"policy": system.policy.label(), "policy_spec": repr(system.policy),
               "runtime": system.runtime.name, "runtime_spec": repr(system.runtime),
               "arrival_rate": system.arrival_rate, "servers": system.servers,
               "interarrival": None if system.interarrival is None else repr(system.interarrival),
               "stable": self.stable, "load": self.load, "mean": self.mean,
               "busy_fraction": self.busy_fraction, "cost": self.cost}
        for q in quantiles:
            try:
                out[f"p{100 * q:g}"] = self.quantile(q)
            except NotImplementedError:
                out[f"p{100 * q:g}"] = None
        out |= {"method": self.method, "exact": self.exact, "limit": self.limit,
                "finite_k_gap": None if self.finite_k_gap is None else self.finite_k_gap.mean,
                "assumptions": list(self.assumptions), "references": list(self.references)}
        return out

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
                state["_response_factory"] = _Reanalysis(self.system, self._settings)
        return state

    def __setstate__(self, state: dict):
        """The state of :meth:`__getstate__`; one pickled before the grid budget (which kept
        the goal alone, ``_goal``) is taken as solved at the default budget."""
        if "_settings" not in state:
            from .analysis import GOAL

            state["_settings"] = (state.pop("_goal", GOAL), 1.0)
        self.__dict__.update(state)

    def __repr__(self):
        return (f"Prediction({self.system.policy.label()}, stable={self.stable}, "
                f"mean={self.mean:.6g}, method={self.method!r})")


def _sentence(text: str) -> str:
    text = text.strip()
    if not re.match(r"[a-z](\W|$)", text):  # keep a leading symbol such as k or d
        text = text[:1].upper() + text[1:]
    return text + ("" if text.endswith(".") else ".")
