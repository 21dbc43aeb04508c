"""Analysis: one module per policy family; :func:`analyze` dispatches on the policy."""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from collections.abc import Callable, Iterator

from .. import _checks
from ..policies import nearest
from ..prediction import AccuracyWarning, Prediction
from ..response import _WARN_RELATIVE
from ..system import System

__all__ = ["accuracy_goal", "analyze", "frontier_verdict", "grid_budget", "register"]

_HANDLERS: dict[type, Callable[[System], Prediction]] = {}

GOAL = 1e-6
"""Relative error of the mean and the busy fraction that the refined numerical methods aim at
(the grids with removal refine to half of it, :mod:`.removal`), unless :func:`accuracy_goal`
asks for less."""
_REQUESTED: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "queuetheory_accuracy_goal", default=None)


@contextlib.contextmanager
def accuracy_goal(relative: float) -> Iterator[None]:
    """Within the block, the refined numerical methods stop at a coarser relative accuracy.

    The workload grids of MDS and Replication with removal (and of the systems solved through
    them: Redundancy-d where its level-crossing grid applies, IR runtimes on atoms without
    removal) are refined until the estimated relative errors of the mean and the busy fraction
    are below half of ``relative`` and those of the quantiles at 0.5, 0.9, 0.99 and 0.999 below
    ``5 relative``, instead of the 1e-6 goal (``GOAL``): a first look over a parameter sweep, or
    the first pass of :func:`queuetheory.smallest_matching_code`. Coarse grids are often not yet
    in their ``h^2`` regime, so the errors are then estimated from the whole difference of two
    extrapolations rather than a seventh of it (their rough form); a quantile's estimate is at
    least the mean's relative estimate times the quantile, as at the default goal (the two
    extrapolations can share an error that their difference does not show, and the mean, which
    integrates the law, does). Coarse estimates are less sure than the default's: held out
    (M/G/1 through the grid against Pollaczek-Khinchine and the Random system's inversion, 360
    cases at goals 1e-2 and 1e-3), four statistics had been beyond their estimates, by up to
    2.5 times, and in a second check (72 systems, five levels, goals 1e-2 and 1e-3) five of 720
    quantiles, up to 7.4 times, before the mean's floor (then none, at most 0.51 of the
    estimates); at the default goal, none of 320 and, before the floor, 3 of 960 quantiles (up
    to 2.1 times, 3e-8 relative); cite numbers solved to the default goal. Every prediction still
    states its errors (``Prediction.errors``, ``quantile_error``), and its ``method`` says how
    far it was refined. Closed forms, transform inversions and the other methods, which reach
    the goal at little cost, are not affected; a ``relative`` below ``GOAL`` is ``GOAL``.
    Blocks nest (the innermost goal holds) and are local to a thread or task
    (:mod:`contextvars`): :func:`queuetheory.compare` passes the goal to its workers, but a
    thread or process pool of your own does not inherit it (enter the block in the worker),
    and a generator suspended inside a block leaves it in force for its caller.

    Parameters
    ----------
    relative : float
        The relative accuracy aimed at, in (0, 1).

    Yields
    ------
    None

    Raises
    ------
    ValueError
        When ``relative`` is not in (0, 1).

    Examples
    --------
    >>> import queuetheory as qt
    >>> system = qt.System(qt.MDS(4, 2), qt.IR(qt.Erlang(2, 2.0)), arrival_rate=0.5)
    >>> with qt.accuracy_goal(1e-3):
    ...     quick = qt.analyze(system)
    >>> full = qt.analyze(system)
    >>> abs(quick.mean - full.mean) <= quick.errors["mean"] + full.errors["mean"]
    True
    >>> quick.errors["mean"] <= 1e-3 * quick.mean
    True
    """
    value = _number_in("relative", relative, lambda v: 0 < v < 1, "(0, 1)")
    with _holding(_REQUESTED, max(value, GOAL)):
        yield


def _number_in(name: str, value: object, inside: Callable[[float], bool],
               allowed: str) -> float:
    """``value`` as a float (:func:`._checks._real`: numpy scalars and 0-d arrays as numbers)
    where ``inside`` holds, else a ``ValueError`` naming ``name`` and the ``allowed`` range."""
    try:
        number = _checks._real(name, value)
    except ValueError:
        number = math.nan
    if not inside(number):
        raise ValueError(f"{name} must be a number in {allowed}, got {value!r}")
    return number


@contextlib.contextmanager
def _holding(variable: contextvars.ContextVar, value) -> Iterator[None]:
    """``variable`` set to ``value`` within the block, restored after it."""
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


def goal() -> float:
    """The relative accuracy aimed at: ``GOAL``, or what :func:`accuracy_goal` asked for."""
    requested = _REQUESTED.get()
    return GOAL if requested is None else requested


GRID_BUDGET_MAX = 64
"""Largest factor :func:`grid_budget` takes: S&X tables of ``X`` nodes up to 16 GB."""
_BUDGET: contextvars.ContextVar[float] = contextvars.ContextVar("queuetheory_grid_budget",
                                                                default=1.0)


@contextlib.contextmanager
def grid_budget(factor: float) -> Iterator[None]:
    """Within the block, the workload grids may take ``factor`` times the cells and memory.

    The grids of MDS and Replication with removal (and of the systems solved through them, as
    for :func:`accuracy_goal`) are refined until their estimated errors meet the goal or until a
    bound stops them: on their cells (16384 for the coarsest of the last three grids; 4096 under
    S&X, except for a job size on at most 16 atoms) and, under S&X, on the memory of their ``X``
    nodes (256 MB of tables with discrete slowdowns, 512 MB for the largest march with
    continuous ones). A point stopped there says so in its ``method`` ("short of the 1e-6 goal:
    the grid has reached its limit"). Both bounds are multiplied by ``factor``: memory and time
    grow about in proportion (the step halves once per factor of 2 to 4; choose a factor the
    machine's memory holds: at 64, 16 GB of ``X`` nodes). The stated errors shrink where a bound
    is what limits them: the grids' step (as in the example below, a Pareto tail), or the memory
    that keeps the second solve with twelve nodes over ``X`` off the first solve's grids; not
    where the rule over ``X`` binds with twelve nodes. Held out (S&X M/G/1 through the grid
    against Pollaczek-Khinchine), the stated relative errors at factors 1, 4 and 16 were 2.1e-5,
    7.4e-7 and 5.5e-7 for HyperExponential([0.9, 0.1], [10, 0.5]) job sizes times the Facebook
    slowdowns at load 0.5 (3.3, 9.6 and 16 s of CPU, peak memory 0.4, 0.8 and 1.4 GB); 4.1e-4,
    5.2e-5 and 8.8e-6 for HyperExponential([0.7, 0.3], [3, 0.3]) times {0.1, 1, 10}
    (probabilities 0.3, 0.5, 0.2) at 0.5; 3.0e-4, 8.3e-5 and 8.1e-5 for the first times {1, 10}
    (0.9, 0.1) at 0.5, where the rule binds; 2.6e-6, 1.3e-6 and 1.3e-6 for
    HyperExponential([0.5, 0.5], [1, 0.2]) times {1, 10} at 0.7. The true errors were at most
    0.51 of them. Blocks nest (the innermost factor holds) and are local to a thread or task
    (:mod:`contextvars`), as :func:`accuracy_goal`'s: :func:`queuetheory.compare` passes the
    factor to its workers, and the law of an unpickled prediction is solved again under the
    factor (and goal) it was first solved under.

    Parameters
    ----------
    factor : float
        The factor on the bounds, in [1, 64].

    Yields
    ------
    None

    Raises
    ------
    ValueError
        When ``factor`` is not in [1, 64].

    Examples
    --------
    >>> import queuetheory as qt
    >>> system = qt.System(qt.MDS(2, 1), qt.IR(qt.Pareto(2.2, 1.0)), arrival_rate=0.3)
    >>> "the grid has reached its limit" in qt.analyze(system).method
    True
    >>> with qt.grid_budget(2):
    ...     finer = qt.analyze(system)
    >>> finer.errors["mean"] <= 1e-6 * finer.mean
    True
    """
    value = _number_in("factor", factor, lambda v: 1 <= v <= GRID_BUDGET_MAX,
                       f"[1, {GRID_BUDGET_MAX}]")
    with _holding(_BUDGET, value):
        yield


def budget() -> float:
    """The factor on the grids' bounds: 1, or what :func:`grid_budget` asked for."""
    return _BUDGET.get()


def settings() -> tuple[float, float]:
    """The accuracy goal and the grid budget in force (:func:`goal`, :func:`budget`): what a
    worker or a re-analysis enters again with :func:`under`."""
    return goal(), budget()


@contextlib.contextmanager
def under(solved: tuple[float, float]) -> Iterator[None]:
    """Within the block, the accuracy goal and the grid budget of :func:`settings`."""
    relative, factor = solved
    with accuracy_goal(relative), grid_budget(factor):
        yield


def goal_text(value: float | None = None) -> str:
    """``value`` (default: :func:`goal`) as written in the ``method`` texts: ``1e-6``."""
    return f"{goal() if value is None else value:.3g}".replace("e-0", "e-")


def register(*policy_types: type):
    """Decorator: make ``function(system) -> Prediction`` the analysis of these policy types.

    :func:`analyze` looks the handler up along the policy's class hierarchy: a subclass
    without a handler of its own is analysed by its nearest registered ancestor. A new policy
    registers its analysis from its own module; no edit here is needed.

    Parameters
    ----------
    *policy_types : type
        Subclasses of :class:`queuetheory.Policy`.

    Returns
    -------
    callable
        The decorator, which returns the function unchanged.
    """

    def decorate(function):
        for policy_type in policy_types:
            _HANDLERS[policy_type] = function
        return function

    return decorate


def frontier_verdict(label: str, arrival_rate: float, frontier: float, error: float) -> bool:
    """Whether a system is stable, from a computed stability frontier and its error.

    One rule for every policy whose frontier is computed rather than known exactly: stable
    below ``frontier - error``, unstable at or above ``frontier + error`` (``frontier`` when the
    error is 0); in between the verdict is undecided and no number is given.

    Parameters
    ----------
    label : str
        The policy and runtime model, for the message.
    arrival_rate, frontier, error : float
        The arrival rate per server, the frontier and its estimated absolute error.

    Returns
    -------
    bool
        ``True`` if stable, ``False`` if unstable.

    Raises
    ------
    NotImplementedError
        When ``|arrival_rate - frontier| < error`` (use :func:`simulate`, or an arrival rate
        further from the frontier).
    ValueError
        When ``error`` is negative or NaN, or ``frontier`` is NaN.

    Examples
    --------
    >>> from queuetheory.analysis import frontier_verdict
    >>> frontier_verdict("Redundancy-2", 0.5, 0.6, 1e-6)
    True
    >>> frontier_verdict("Redundancy-2", 0.7, 0.6, 0.0)
    False
    """
    if not error >= 0 or math.isnan(frontier):
        raise ValueError(f"error must be a number >= 0 and frontier a number, got error = "
                         f"{error!r}, frontier = {frontier!r}")
    if arrival_rate >= frontier + error:
        return False
    if arrival_rate <= frontier - error:
        return True
    raise NotImplementedError(
        f"{label}: arrival_rate = {arrival_rate!r} is within the error {error:.2g} of the "
        f"stability frontier {frontier:.10g}, so whether the system is stable is undecided; "
        f"use qt.simulate, or an arrival_rate further from the frontier")


def analyze(system: System) -> Prediction:
    """Predict the response time of ``system`` from the formulas.

    The ``k -> infinity`` (mean-field) limit is used unless ``System(..., servers=k)`` names a
    finite ``k`` for which the policy has an exact finite-``k`` method; ``Prediction.method``
    says which. When the limit stands in for a finite ``k``, ``Prediction.exact`` is
    ``False``, ``Prediction.finite_k_gap`` holds the gap estimated from a map measured by
    simulation (:mod:`queuetheory.analysis.finite_k`), and an :class:`AccuracyWarning` is
    emitted where that gap may exceed 1 % (its 95 % range reaches beyond 1 %) or is unknown.

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
        When no analysis exists for the policy and runtime model (use :func:`simulate`), or
        the arrival rate lies within the estimated error of a computed stability frontier
        (Redundancy-d mean-field, MDS and Replication with removal): whether the system is
        stable is then undecided (``queuetheory.analysis.frontier_verdict``).

    Warns
    -----
    AccuracyWarning
        When the ``k -> infinity`` limit is used for ``servers=k`` and the finite-k gap may
        exceed 1 % or is unknown; the message states the estimated gap. Also when the stated
        error of the mean or the busy fraction (``Prediction.errors``) exceeds 1e-3 of the
        value, or the accuracy goal asked for (:func:`accuracy_goal`) if coarser.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> system = qt.System(qt.RIQ(d=3), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
    ...                    arrival_rate=0.7)
    >>> p = qt.analyze(system)
    >>> round(p.busy_fraction, 6), round(p.mean, 6)
    (0.732885, 1.777675)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     small = qt.analyze(system.replace(servers=10))
    >>> small.exact, caught[0].category.__name__
    (False, 'AccuracyWarning')

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, IEEE/ACM
       Transactions on Networking 25(6), 2017 (the limits and their finite-k behaviour).
    """
    prediction = predict(system)
    _warn_if_coarse(prediction)
    return prediction


def predict(system: System) -> Prediction:
    """:func:`analyze` without its warning about coarse stated errors, for the callers that
    show or use ``Prediction.errors`` themselves (:func:`queuetheory.compare`,
    :func:`queuetheory.smallest_matching_code`, :func:`queuetheory.validate`)."""
    if not isinstance(system, System):
        raise ValueError(f"system must be a qt.System, got {system!r}")
    if system.interarrival is not None:
        raise NotImplementedError("the analysis assumes Poisson arrivals; use qt.simulate for "
                                  "renewal arrivals")
    # looked up along the class hierarchy, as the policy's kernel and stability facts are
    # inherited: a subclass of RIQ is analysed as RIQ
    found = nearest(_HANDLERS, system.policy)
    _checks.analysable(system.policy)
    if found is None:
        raise NotImplementedError(f"no analysis of {system.policy.label()} yet; use qt.simulate")
    prediction = found[1](system)
    if system.servers is not None and prediction.limit:
        prediction.exact = False
        gap = finite_k.finite_k_gap(system)
        prediction.finite_k_gap = gap
        if gap.bound > finite_k.THRESHOLD:
            warnings.warn(AccuracyWarning(
                f"the k -> infinity limit is used for k = {system.servers} servers of "
                f"{system.policy.label()} at load {system.load:.4g}: {gap.describe()}; the "
                f"finite system {'may differ' if gap.known else 'is not mapped and may differ'} "
                f"by more than {100 * finite_k.THRESHOLD:g}% (qt.simulate gives the "
                f"finite-k values)"), stacklevel=3)
    return prediction


def _warn_if_coarse(prediction: Prediction) -> None:
    """:class:`AccuracyWarning` when the stated error of the mean or the busy fraction exceeds
    ``_WARN_RELATIVE`` of the value (or the accuracy goal asked for, if coarser), as for the
    quantiles: fewer digits of ``Prediction.mean`` are right than a float shows."""
    if not prediction.stable:
        return
    limit = max(_WARN_RELATIVE, goal())
    parts = []
    for name in ("mean", "busy_fraction"):
        value, error = getattr(prediction, name), prediction.errors.get(name)
        if error is not None and value is not None and value > 0 and error > limit * value:
            parts.append(f"the {name.replace('_', ' ')} {value:.6g} has an estimated error of "
                         f"{error:.2g} ({error / value:.2g} relative)")
    if parts:
        warnings.warn(AccuracyWarning(
            f"{prediction.system.policy.label()}: {'; '.join(parts)}: fewer digits than a "
            f"float shows are right (Prediction.errors; Prediction.method says why)"),
            stacklevel=3)


from . import finite_k, mds, redundancy, riq  # noqa: E402,F401  (riq etc. register handlers)
