"""MDS coding and batch replication, k -> infinity: batch completion times as order statistics.

A batch of ``n`` jobs arrives at rate ``lam / n`` per server (``lam`` = ``arrival_rate``, the rate
of original jobs per server).

* ``MDS(n, m)``: ``n + m`` coded jobs go to distinct random servers; the batch completes when any
  ``n`` of them are served.
* ``Replication(n, d)``: each job is copied to ``d`` servers (``n d`` distinct servers); a job is
  done at its first copy, the batch at its last job.

Without removal (``remove=False``) every task runs to completion, so as ``k -> infinity`` each
server is an M/G/1 FCFS queue fed at rate ``Lambda = (n + m) lam / n`` (MDS) or ``d lam``
(replication) with service ``B`` = one task's runtime, and the tasks of one batch see
independent stationary waits ``W_j`` (asymptotic independence; PASTA):

* IR: the task sojourns ``T_j = W_j + R_j`` are i.i.d. with the Pollaczek-Khinchine law, so the
  batch time is the ``n``-th smallest of ``n + m`` of them (MDS), or the maximum over ``n`` jobs
  of the minimum over ``d`` copies (replication):
  ``P(T_b > t) = I_{H(t)}(m + 1, n)``, resp. ``1 - (1 - H(t)^d)^n``, ``H = P(T_j > t)``.
* S&X: a batch is one computation cut into ``n`` equal-sized jobs (the premise of MDS coding),
  so all its tasks -- the ``n + m`` coded jobs, or the ``n d`` copies under replication --
  share one job size ``X``, as in :func:`queuetheory.simulate`; task sojourns ``W_j + X S_j``
  are therefore *not* independent. Given ``X = x`` they are, with
  ``H(t | x) = P(W + x S > t)``; hence exactly (in the limit)
  ``P(T_b > t) = E_X[ I_{H(t|X)}(m + 1, n) ]`` (MDS) and
  ``E_X[ 1 - (1 - H(t|X)^d)^n ]`` (replication).
  ``H(t | x) = sum_s p_s P(W > t - x s)`` (discrete ``S``; ``P(W > y) = 1`` for ``y < 0``).
  The wait's tail is inverted from the P-K transform once, on Chebyshev nodes of pieces
  uniform in ``log(1 + y / c)``, and tabulated (cubic Hermite; a dense monotone table where
  the wait has kinks); ``E_X`` is Gauss-Legendre in probability space split at the jumps
  ``x = t / s`` (beyond ``t / s_min`` every task is unfinished: exact), vectorised over ``t``;
  moments are Gauss-Legendre on geometric pieces of ``t`` (split at jumps and kinks) up to
  where a union bound of the survival function is negligible. Accuracy (exponential ``X``,
  Facebook ``S``; against an exact mixture-of-exponentials wait): means to about 1e-11. The
  law is computed with twice the standard Gauss-Legendre points (24 per piece over ``X`` and
  a continuous ``S``, 20 over ``t``); its change from the standard rules with a coarser table
  of the wait's tail, plus the inversion's own error that both tables share (carried through
  the same rules: ``E_X[Psi'(H) sum_s p_s e(t - X s)]``), is the stated error of the mean
  (``Prediction.errors``) and of the quantiles (``response_time.quantile_error``). Under IR
  a batch quantile is a task sojourn's quantile at a mapped level, with that quantile's error
  estimate; the mean's estimate is the sojourn's stated errors propagated through the order
  statistic plus a second quadrature rule (:func:`.batch_law._ir_batch_mean_error`).

M/M/1 closed forms (IR, exponential runtimes with rate ``mu``, ``a = mu - Lambda``): task
sojourns are Exp(a), so ``E[T_b] = (H_{n+m} - H_m) / a`` (MDS; Renyi) and ``H_n / (d a)``
(replication: the minimum of ``d`` Exp(a) is Exp(d a)); :mod:`queuetheory.orderstats` returns
exactly these.

With removal (``remove=True``) :func:`analyze_batch` hands over to
:mod:`queuetheory.analysis.removal` (mean-field); with nothing redundant (``m = 0``, ``d = 1``)
removal changes nothing, and where that grid refuses or stops short of the accuracy goal
(:func:`.goal`) the analysis without removal answers. Provable facts: removal never
increases any server's workload (the FCFS recursion is monotone), so the no-removal condition
below is sufficient for stability; a batch needs at least the runtimes of ``n`` completed tasks,
so ``lam E[sum of the n smallest of n + m task runtimes] / n < 1`` (MDS) and
``lam E[min of d runtimes] < 1`` (replication) are necessary.

Stability without removal: ``(n + m) / n * lam E[B] < 1`` (MDS), ``d lam E[B] < 1``
(replication).

The laws (batch completion time, M/G/1 task sojourns and the inverted wait tail) live in
:mod:`queuetheory.analysis.batch_law`; the study of which code matches replication, which may
simulate, in :mod:`queuetheory.codematch` (no simulator inside :mod:`queuetheory.analysis`).

References
----------
.. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion times",
   Operations Research Letters 49(1), 2021 (arXiv:1907.11052).
.. [2] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, eq. (5.105) (Pollaczek-Khinchine).
.. [3] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, eq. (2.1.3).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from .. import _checks, mg1
from ..distributions import Exponential
from ..policies import MDS, Random, Replication
from ..prediction import Prediction
from ..quadrature import moment_from_sf
from ..response import ResponseLaw
from ..runtime import IR, SX, RuntimeModel
from ..system import System
from . import goal, goal_text, register
from .batch_law import (
    _GL_T_POINTS,
    _GL_X_POINTS,
    _WAIT_DENSE,
    _WAIT_NODES,
    BatchCompletionTime,
    _all_needed_mean,
    _batch_tail_index,
    _breakpoints,
    _ir_batch_law,
    _ir_batch_mean_error,
    _power_tail,
    _sojourn_scale,
    _sx_batch_sf,
    _tasks,
    _WaitSF,
)
from .riq import analyze_riq

__all__ = ["analyze_batch", "BatchCompletionTime", "stability_limit"]

_NEAR_ONE = 1e-2
"""Batches without removal with heavy-tailed runtimes, or a runtime mean without a closed form,
are refused within this of task load 1 (at 0.99 the numerical means were within 1.1e-8 of exact
values). IR and S&X runtimes with every moment finite and an exact mean are inverted without
the loss of digits near load 1 (:class:`queuetheory.mg1._Remainder`, ``1 - rho`` from
:func:`queuetheory.mg1._slack`); IR runtimes on finitely many points go to the grid, which
states its errors, and where it stops short of the accuracy goal or refuses, to the same model
as S&X with ``X = 1`` (:func:`_unless_short`)."""

_POWER_TAIL_INDEX = 3.0
"""IR batches whose time has a power tail ``t^-beta`` (:func:`.batch_law._batch_tail_index`)
of index up to this integrate their tail as a power law beyond where its inversion is resolved
(Replication(2, 1), Pareto(3.5) at load 0.5: 1.8e-7 off, where the truncated integral was 5.7e-7
off with 4.4e-7 stated); steeper tails keep the truncated adaptive integral, which there
carries a negligible tail and is the more accurate (Pareto(6): 7.7e-9 off, 7.0e-6 with the
power law fitted to a tail that falls too fast for it; against Plancherel references,
``scripts/power_tail_batch_references.py``)."""

_NO_REMOVAL = "no removal: every task runs to completion"
_NOTHING_REMOVED = ("removal, but nothing is redundant (m = 0 or d = 1): every task is needed "
                    "and runs to completion")

_REFERENCES = (
    "K. Duffy, S. Shneer, MDS coding is better than replication for job completion times, "
    "Operations Research Letters 49(1), 2021 (arXiv:1907.11052)",
    "L. Kleinrock, Queueing Systems Vol. 1, 1975, eq. (5.105) (Pollaczek-Khinchine)",
)


def stability_limit(policy, runtime: RuntimeModel) -> float:
    """Largest ``arrival_rate`` (original jobs per server) for which the policy is stable
    without removal: ``n / ((n + m) E[B])`` (MDS) or ``1 / (d E[B])`` (replication).

    Parameters
    ----------
    policy : MDS or Replication
        The batch policy (its ``remove`` flag is ignored: this is the no-removal region, which
        is also sufficient with removal).
    runtime : RuntimeModel
        :class:`~queuetheory.SX` or :class:`~queuetheory.IR`.

    Returns
    -------
    float
        The critical arrival rate (stable iff ``arrival_rate`` is strictly below it).

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.analysis.mds import stability_limit
    >>> stability_limit(qt.MDS(10, 2), qt.IR(qt.Exponential(1.0)))
    0.8333333333333334
    >>> stability_limit(qt.Replication(10, 2), qt.IR(qt.Exponential(1.0)))
    0.5
    """
    if not isinstance(policy, MDS | Replication):
        raise ValueError(f"policy must be qt.MDS or qt.Replication, got {policy!r}")
    tasks = _tasks(policy)
    return policy.n / (tasks * runtime.mean_runtime())


# ------------------------------------------------------------------------ analysis

def _short(p: Prediction) -> float:
    """The relative error a stable prediction states for its mean and busy fraction (0 for an
    unstable one, whose values are exact; ``inf`` where a statistic is not finite)."""
    if not p.stable or not p.errors:
        return 0.0
    worst = 0.0
    for key, value in (("mean", p.mean), ("busy_fraction", p.busy_fraction)):
        error = p.errors.get(key, 0.0)
        if not error <= 0:   # NaN counts as unbounded
            ratio = error / value if math.isfinite(value) and value > 0 else math.inf
            worst = max(worst, ratio if math.isfinite(ratio) else math.inf)
    return worst


def _unless_short(first, second, prefix: str, system: System,
                  assumptions=None) -> Prediction:
    """``first()``, unless it refuses (``NotImplementedError``) or states errors above
    the accuracy goal (:func:`.goal`, 1e-6 unless :func:`.accuracy_goal` asks for less): then
    ``second()`` (the same model by another method) where it answers with a
    smaller stated error, relabelled for ``system`` with ``prefix`` (``{why}`` the reason) and
    ``assumptions`` (a tuple, or a map of the second method's; default: the second's). Both
    refusing: the first's refusal."""
    try:
        p, why, refusal = first(), None, None
    except NotImplementedError as error:
        # its reason, without the advice to simulate (the other method answers)
        p, refusal = None, error
        why = f"refuses ({str(error).split('; use qt.simulate')[0]})"
    if p is not None and _short(p) <= goal():
        return p
    try:
        other = second()
    except NotImplementedError:
        if p is None:
            raise refusal from None
        return p
    if p is not None:
        if _short(other) >= _short(p):
            return p
        why = f"states a relative error of {_short(p):.3g}, short of the {goal_text()} goal"
    if callable(assumptions):
        assumptions = assumptions(other.assumptions)
    return other._relabelled(prefix.format(why=why), system, assumptions=assumptions)


@register(MDS, Replication)
def analyze_batch(system: System) -> Prediction:
    """MDS(n, m) and Replication(n, d) without removal, k -> infinity; see the module docstring.

    Raises ``NotImplementedError`` with removal (use :func:`queuetheory.simulate`).

    Examples
    --------
    M/M/1 servers (IR, exponential runtimes), MDS(10, 2): ``E = (H_12 - H_2) / a`` with
    ``a = 1 - 1.2 * 0.5 = 0.4``:

    >>> import queuetheory as qt
    >>> from queuetheory.orderstats import harmonic
    >>> p = qt.analyze(qt.System(qt.MDS(10, 2, remove=False), qt.IR(qt.Exponential(1.0)),
    ...                          arrival_rate=0.5))
    >>> round(p.mean, 12) == round((harmonic(12) - harmonic(2)) / 0.4, 12)
    True
    """
    policy, runtime, lam = system.policy, system.runtime, system.arrival_rate
    if not policy.remove and policy.n == 1 and _tasks(policy) == 1:
        # one task per batch is the Random system: its exact M/G/1 law (the order statistic
        # of one sojourn integrated from an inverted tail lost digits near load 1). With
        # removal the grid answers, checked against Pollaczek-Khinchine this way
        plain = analyze_riq(System(Random(), runtime, arrival_rate=lam))
        return plain._relabelled(f"{policy.label()}: one task per batch, the Random system: ",
                                 system)
    if policy.remove:
        from .removal import analyze_removal

        if _tasks(policy) > policy.n:
            return analyze_removal(system)
        # nothing to remove: near load 1 or with a long tail (E[R^2] = inf: an infinite mean),
        # where the grid stops short of the goal or refuses, the system without removal (the
        # wait's tail from its transform) reaches further
        plain = dataclasses.replace(policy, remove=False)
        return _unless_short(
            lambda: analyze_removal(system),
            lambda: analyze_batch(system.replace(policy=plain)),
            f"{policy.label()}: nothing is redundant, so removal changes nothing; the workload "
            f"grid with removal {{why}}; the system without removal: ",
            system, lambda those: tuple(_NOTHING_REMOVED if a == _NO_REMOVAL else a
                                        for a in those))
    tasks = _tasks(policy)
    lam_task = tasks * lam / policy.n
    B = runtime.replica()
    load_task = lam_task * B.mean()
    stable = _checks.stable_load(load_task)
    per_server = (f"each server an M/G/1 FCFS queue fed at rate {tasks}/{policy.n} * "
                  f"arrival_rate with one task's runtime as service")
    if isinstance(policy, MDS):
        rule = f"batch time = {policy.n}-th smallest of {tasks} task sojourns"
    else:
        rule = (f"batch time = max over {policy.n} jobs of the min over {policy.d} copies' "
                f"sojourns")
    if isinstance(runtime, SX):
        how = ("tasks sharing a job size X (MDS: the whole batch; replication: the copies of "
               "one job) have sojourns W_j + X S_j that are i.i.d. given X, with W_j the "
               "stationary P-K wait: the order statistic is integrated over X (W's tail by "
               "numerical inversion of the P-K transform)")
    else:
        how = "task sojourns i.i.d. Pollaczek-Khinchine"
    method = (f"{policy.label()}, {runtime.name} runtimes, no removal: k -> infinity limit, "
              f"{per_server}; {rule}; {how}")
    assumptions = ("Poisson batch arrivals at arrival_rate / n per server", "FCFS at every server",
                   "k -> infinity (asymptotic independence of the servers a batch uses)",
                   _NO_REMOVAL)
    if isinstance(runtime, SX):
        assumptions += ("S&X: a batch is n equal-sized jobs, so all its tasks (coded jobs or "
                        "copies) share one job size X; slowdowns i.i.d. per task",)
    cost = tasks / policy.n * B.mean()
    if not stable:
        return Prediction(system, method=method, exact=True, stable=False, mean=math.inf,
                          busy_fraction=1.0, cost=cost, assumptions=assumptions,
                          references=_REFERENCES)
    heavy = math.isinf(B.moment(2))
    if isinstance(runtime, IR) and runtime.R.atoms is not None:
        # atoms: the P-K transform's inversion converges slowly at the jumps; the workload's
        # level-crossing equation on a grid holding the atoms as nodes does not. Near load 1,
        # where the grid stops short of the goal or refuses, the same model as S&X with X = 1
        # (task runtimes i.i.d. R): the wait's tail table, which reaches the boundary
        from ..distributions import Deterministic
        from .removal import RemovalError, grid_prediction, refusal

        def grid():
            try:
                return grid_prediction(system, method + "; the wait law by", assumptions,
                                       exact=True)
            except RemovalError as error:
                raise NotImplementedError(f"{policy.label()}: {refusal(error)}") from None

        return _unless_short(
            grid, lambda: analyze_batch(system.replace(runtime=SX(Deterministic(1.0),
                                                                  runtime.R))),
            f"{policy.label()}, IR runtimes on finitely many points: the workload grid {{why}}; "
            f"the same model as S&X with job size X = 1 and slowdowns S = R (task runtimes "
            f"i.i.d. R): ", system, assumptions)
    # (runtimes with atoms under IR: the grid above, with its error estimates)
    # near load 1: the transforms through the runtime's remainder E[exp(-s B) - 1 + s B]
    # (mg1._Remainder: its moment series, or a closed form) and 1 - rho from its exact
    # rational mean and the exact task rate, to full accuracy at the small |s| that decide the
    # tail; not checked there for S&X runtimes with a power tail (their wait table ends where
    # the power tail still carries mass)
    rate = Fraction(tasks) * Fraction(lam) / policy.n
    free, exact = mg1._slack(rate, B)
    if 1.0 - load_task < _NEAR_ONE and not (
            (isinstance(runtime, IR) and isinstance(runtime.R, Exponential))
            or (exact and mg1._Remainder.of(B) is not None
                and not (isinstance(runtime, SX)
                         and (_power_tail(runtime.X) or _power_tail(runtime.S))))):
        raise NotImplementedError(
            f"{policy.label()} at task load {load_task:.12g}: within "
            f"{_NEAR_ONE:g} of 1 the task sojourn's tail, inverted numerically, loses digits "
            f"like eps / (1 - load)^2 (the mean of Replication(2, 1), IR Erlang(1, 1), was off "
            f"9e-7 at load 0.999, 6e-5 at 0.9999, and without an error estimate); only "
            f"runtimes with a closed-form mean whose remainder E[exp(-s R) - 1 + s R] is "
            f"accurate near s = 0 (a moment series with every moment finite and their ratios "
            f"not growing, not so for slowdowns far apart in scale; Pareto in closed form under "
            f"IR) are inverted without that loss; use qt.simulate, or a load further from 1")
    if isinstance(runtime, SX):
        if heavy:
            raise NotImplementedError(
                "the S&X batch analysis needs E[runtime^2] < inf (its wait table extrapolates "
                "an exponential tail); use qt.simulate for heavy-tailed runtimes")
        # the law with twice the quadrature points over X, S and t, its error estimate the
        # change from the standard rules with a coarser table of the wait (atoms of X:
        # lattice-like service times put kinks of the wait inside the pieces, so the moments
        # are adaptive)
        scale, adaptive = _sojourn_scale(lam_task, B), runtime.X.atoms is not None
        coarse_wait = _WaitSF(lam_task, B, free, exact, 3 * _WAIT_NODES // 4, _WAIT_DENSE // 2)
        sf, edges, rough = _sx_batch_sf(policy, runtime, lam_task, wait_sf=coarse_wait)
        coarser = BatchCompletionTime(sf, scale, edges=edges, adaptive=adaptive)
        sf, edges, shared = _sx_batch_sf(policy, runtime, lam_task, 2 * _GL_X_POINTS,
                                         _WaitSF(lam_task, B, free, exact))
        law = BatchCompletionTime(sf, scale, edges=edges, adaptive=adaptive,
                                  points=2 * _GL_T_POINTS, coarser=coarser, sf_error=shared)
    else:
        inner, sojourn, levels = _ir_batch_law(policy, runtime, lam_task, rate)
        law = BatchCompletionTime(inner._sf_all, _sojourn_scale(lam_task, B), law=inner,
                                  heavy=heavy or (_power_tail(B) and _batch_tail_index(
                                      policy, B) <= _POWER_TAIL_INDEX),
                                  sojourn=(sojourn, levels),
                                  breaks=_breakpoints(runtime.R))
    index = _batch_tail_index(policy, B) if heavy and isinstance(runtime, IR) else math.inf
    if index <= 1.0 + 1e-9:
        method += (f"; P(T_b > t) decays like t^(-{index:.4g}) (runtime tail index alpha, wait "
                   f"index alpha - 1, Cohen), so E[T_b] = inf")
    exact = not (isinstance(runtime, SX) and runtime.S.atoms is None)
    errors = {}
    if index <= 1.0 + 1e-9:
        mean = math.inf
    elif (isinstance(runtime, IR) and tasks == policy.n > 1 and law._heavy
          and isinstance(sojourn, ResponseLaw)):
        # every task needed, a power tail that the law's own moments would extrapolate: n E[T]
        # (Pollaczek-Khinchine, exact) less a remainder whose tail falls like H^2, not H (see
        # _all_needed_mean)
        sojourn_mean = B.mean() + mg1._pk_wait_mean(float(rate), B.mean(), B.moment(2), free)
        mean, mean_error = _all_needed_mean(policy.n, B, sojourn, sojourn_mean, law)
        law = law.with_mean(mean)
        errors = {"mean": mean_error, "busy_fraction": 0.0}
        method += (f"; E[T_b] = n E[T] - int (n H - 1 + (1 - H)^n) dt, H the sojourn's tail, "
                   f"E[T] by Pollaczek-Khinchine, estimated error of the mean {mean_error:.2g} "
                   f"(the sojourn's stated errors propagated, and a second quadrature rule)")
    else:
        mean = law.mean()
    if isinstance(runtime, IR) and math.isfinite(mean) and not errors:
        mean_error = _ir_batch_mean_error(policy, runtime.R, sojourn, law, mean)
        errors = {"mean": mean_error, "busy_fraction": 0.0}
        method += (f"; estimated error of the mean {mean_error:.2g} (the sojourn's stated "
                   f"errors propagated, and a second quadrature rule)")
    if isinstance(runtime, SX):
        # the change from the coarser rules and table, and the error of the inversion both
        # tables come from: its bound (piecewise constant in the wait's table cells, where an
        # adaptive rule would bisect at every step) through the standard rules over X and S
        # (half the cost of the law's own), the standard fixed rule over t, doubled
        shared = 2.0 * moment_from_sf(rough, 1, law._edges, tail=False, rule=_GL_T_POINTS)
        mean_error = abs(mean - law._coarser.mean()) + shared + 4e-15 * mean
        errors = {"mean": mean_error, "busy_fraction": 0.0}
        method += (f"; Gauss-Legendre rules of {2 * _GL_X_POINTS} points per piece over X"
                   f"{'' if runtime.S.atoms is not None else ' and S'} in probability space "
                   f"and {2 * _GL_T_POINTS} over t, estimated error of the mean "
                   f"{mean_error:.2g} (the change from half the points and a coarser table of "
                   f"the wait's tail, and the error of its inversion carried through the same "
                   f"rules; quantiles: response_time.quantile_error)")
    return Prediction(system, method=method, exact=exact, stable=True, mean=mean,
                      response_time=lambda: law, busy_fraction=load_task, cost=cost,
                      assumptions=assumptions, references=_REFERENCES, errors=errors)
