"""Random and RIQ in the k -> infinity limit: the M/G/1 with exceptional first service.

Under asymptotic independence every server is an M/G/1 queue which, while idle, is polled at
rate ``lam d`` and then starts a replica group of ``I`` idle servers (``I - 1 ~ Binomial(d - 1,
1 - b)``) that runs ``B_e = fastest of I``; while busy it receives non-redundant jobs at rate
``lam_B = lam b^(d-1)`` with service ``B`` (one replica). The busy fraction ``b`` is the root in
(0, 1) of ``b (1 - rho_B(b)) = (1 - b) lam d E[B_e](b)``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from scipy import optimize

from .. import _checks, mg1
from ..distributions import Distribution, Mixture, _is_mp, _Product
from ..policies import RIQ, Random
from ..prediction import Prediction
from ..response import ResponseTime
from ..system import System
from . import register

_REFERENCES = (
    "K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, IEEE/ACM Transactions on "
    "Networking 25(6), 2017",
    "P. D. Welch, Operations Research 12(5), 1964 (exceptional first service)",
)


def _binomial_weights(n: int, p: float, q: float | None = None) -> list[float]:
    """``P(Binomial(n, p) = j)`` for j = 0..n, in log space (safe for large n); ``q``: ``1 -
    p`` where it is known to full relative accuracy (a tiny busy fraction, whose ``1 - (1 -
    b)`` keeps only ``eps / b`` of it)."""
    if p <= 0.0:
        return [1.0] + [0.0] * n
    if p >= 1.0 or (q is not None and q <= 0.0):
        return [0.0] * n + [1.0]
    lp, lq = math.log(p), (math.log1p(-p) if q is None else math.log(q))
    lg = math.lgamma
    return [math.exp(lg(n + 1) - lg(j + 1) - lg(n - j + 1) + j * lp + (n - j) * lq)
            for j in range(n + 1)]


def _first_service_moment(model, d: int, idle: float, k: int,
                          busy: float | None = None) -> float:
    """``E[B_e^k]`` given the idle fraction ``idle = 1 - b`` (and ``busy = b`` where known to
    full relative accuracy): ``I - 1 ~ Binomial(d - 1, idle)``."""
    w = _binomial_weights(d - 1, idle, busy)
    return sum(wj * model.fastest_moment(j + 1, k) for j, wj in enumerate(w) if wj > 0)


def busy_fraction(system: System) -> float:
    """Busy fraction ``b`` of a server under RIQ(d) in the k -> infinity limit.

    The root in (0, 1) of ``b (1 - lam b^(d-1) E[B]) = (1 - b) lam d E[B_e](b)``; ``1.0`` if the
    system is unstable (``lam E[B] >= 1``).
    """
    return _busy_state(system)[0]


def _busy_state(system: System, free=None) -> tuple[float, float, float, object, bool]:
    """``(b, 1 - b, lam_B, 1 - rho_B, exact)`` with ``lam_B = lam b^(d-1)`` and ``rho_B = lam_B
    E[B]``, the differences from 1 to full relative accuracy (near load 1 they set the wait,
    which is inversely proportional to ``1 - rho_B``) where ``exact``: ``1 - rho`` from the
    law's exact rational mean (:func:`queuetheory.mg1._slack`; a Fraction for ``d = 1``, or
    ``free`` from the caller), and the balance of :func:`busy_fraction` solved for ``b`` and,
    within ``mg1._NEAR_ONE`` of load 1, for ``delta = 1 - b`` as ``(1 - delta) (1 -
    rho_B(delta)) = delta lam d E[B_e]`` with ``1 - rho_B(delta) = (1 - rho) + lam E[B] (1 -
    (1 - delta)^(d-1))``, a sum of positive terms (the root for ``b`` to the rounding of ``b``
    had left ``1 - rho_B`` 4.7e-10 off at load ``1 - 2^-30``, RIQ(2), exponential runtimes,
    and up to ``1e-15 / (1 - rho)`` relative). ``(1, 0, lam, 0, True)`` for an unstable
    system."""
    model, lam = system.runtime, system.arrival_rate
    d = system.policy.polled
    _checks.analysable(system.policy)
    rho = system.load
    if not _checks.stable_load(rho):
        return 1.0, 0.0, lam, 0.0, True
    m1 = model.fastest_moment(1, 1)
    exact = True
    if free is None:
        free, exact = mg1._slack(lam, model.replica())   # 1 - rho
    if d == 1:
        return rho, float(free), lam, free, exact
    free = float(free)
    if free < mg1._NEAR_ONE:
        def lost(delta):   # 1 - (1 - delta)^(d-1)
            return 1.0 if delta >= 1.0 else -math.expm1((d - 1) * math.log1p(-delta))

        def balance_idle(delta):
            return ((1.0 - delta) * (free + lam * m1 * lost(delta))
                    - delta * lam * d * _first_service_moment(model, d, delta, 1))

        delta = optimize.brentq(balance_idle, 0.0, 1.0, xtol=1e-300,
                                rtol=4 * np.finfo(float).eps)
        return (1.0 - delta, delta, lam * (1.0 - lost(delta)), free + lam * m1 * lost(delta),
                exact)

    def balance(b):
        return (b * (1.0 - lam * b ** (d - 1) * m1)
                - (1.0 - b) * lam * d * _first_service_moment(model, d, 1.0 - b, 1))

    # b = lam * cost <= d * rho: a tight bracket keeps full relative precision for tiny loads
    hi = min(1.0, 2.0 * d * rho)
    if balance(hi) <= 0:
        hi = 1.0
    b = optimize.brentq(balance, 0.0, hi, xtol=1e-300, rtol=1e-15)
    lam_b = lam * b ** (d - 1)
    return b, 1.0 - b, lam_b, 1.0 - lam_b * m1, False


@register(Random, RIQ)
def analyze_riq(system: System, *, free=None) -> Prediction:
    """Random (d = 1) and RIQ(d) in the k -> infinity limit; see the module docstring.

    ``free``: ``1 - rho`` exactly (a Fraction) where the caller knows it better than the
    arrival rate's float does (a batch's task rate ``N lam / n``)."""
    policy, model = system.policy, system.runtime
    d = policy.polled
    _checks.analysable(policy)
    if d == 1:
        method = (f"Random, {model.name} runtimes: M/G/1 Pollaczek-Khinchine, exact for any "
                  f"number of servers (random routing makes each server an M/G/1 queue)")
    else:
        method = (f"RIQ, {model.name} runtimes: k -> infinity limit, each server an M/G/1 queue "
                  f"with exceptional first service (two arrival rates), busy fraction from the "
                  f"renewal-reward fixed point")
    assumptions = ("Poisson arrivals", "FCFS at every server")
    if d > 1:
        assumptions += ("k -> infinity (asymptotic independence of servers)",
                        "replicas started together are cancelled when the first finishes")
    stable = _checks.stable_load(system.load)
    if not stable:
        return Prediction(system, method=method, exact=True, stable=False, mean=math.inf,
                          busy_fraction=1.0, cost=model.mean_runtime(), assumptions=assumptions,
                          references=_REFERENCES, limit=d > 1)
    b, idle, lam_b, free, exact = _busy_state(system, free)
    idle_weights = _binomial_weights(d, idle, b)  # P(i of the d polled servers are idle)
    b1, b2 = model.fastest_moment(1, 1), model.fastest_moment(1, 2)
    be1 = _first_service_moment(model, d, idle, 1, b)
    be2 = _first_service_moment(model, d, idle, 2, b)
    all_busy = idle_weights[0]
    immediate = sum(idle_weights[i] * model.fastest_moment(i, 1) for i in range(1, d + 1))
    # lam_b > 0 in exact arithmetic (b > 0), even where it underflows: E[B^2] = inf means an
    # infinite wait
    wait = math.inf if math.isinf(b2) else mg1._efs_wait_mean(lam_b, be1, be2, b1, b2, free)
    # b > 0, so an infinite wait makes the mean infinite even if b^d underflows to 0
    mean = immediate + (math.inf if math.isinf(wait) else all_busy * (wait + b1))
    cost = sum(idle_weights[i] * i * model.fastest_moment(i, 1) for i in range(1, d + 1))
    cost += all_busy * b1

    response_time = functools.partial(_response_time, model, d, idle, b, lam_b, free, exact,
                                      mean, wait + b1)
    return Prediction(system, method=method, exact=True, stable=True, mean=mean,
                      response_time=response_time, busy_fraction=b, cost=cost,
                      assumptions=assumptions, references=_REFERENCES, limit=d > 1)


def _response_time(model, d: int, idle: float, b: float, lam_b: float, free, exact: bool,
                   mean: float, busy_mean: float) -> ResponseTime:
    """The response-time law: with probability ``1 - b^d`` the job finds ``i >= 1`` idle servers
    and runs the fastest of ``i`` replicas (a law known in the time domain, split off so that
    only the rest is inverted), otherwise it queues behind a busy server (the efs busy
    transform, mean ``busy_mean``, ``free = 1 - rho_B``, ``exact`` as :func:`_busy_state`).
    For Random (``d = 1``) this is the
    Pollaczek-Khinchine law split at the empty queue: ``T = B`` with probability ``1 - rho``
    (``idle``)."""
    idle_weights = _binomial_weights(d, idle, b)
    all_busy = idle_weights[0]                      # b^d, to full relative accuracy
    first = model.fastest_mixture(_binomial_weights(d - 1, idle, b))
    busy = mg1._efs_busy_transform(lam_b, first, model.replica(), free, exact)
    lower = _smallest(model.fastest(d))
    # the inversion allows for the loss of digits of the busy transform at small |s| (near
    # load 1) unless the transform is computed without it (mg1._Remainder)
    scale = None if busy.accurate else model.mean_runtime()
    # and for the rounding of 1 - rho_B where the remainder is used with it (near load 1)
    slack = (float(free) if scale is not None or (busy.rounded and float(free) < mg1._NEAR_ONE)
             else None)
    # the high-precision path needs exact parameters: Random's split weight is 1 - rho, exact
    # where the runtime's mean has an exact rational form; RIQ's weights come from the float
    # root b of its fixed point; and the runtime's transform must be a closed form in mpmath
    # (S&X products give double-precision values: the 30-digit M/G/1 tail with X ~ Exp(1),
    # S ~ Uniform(1, 2) read 1.0 where it is 0.39)
    rounded = (f"RIQ's busy fraction b = {1 - idle:.6g}, a float root of its fixed point"
               if d > 1 else
               "1 - rho from a runtime mean without an exact rational form" if not exact else
               "the runtime's transform has no closed form in mpmath"
               if not model.replica()._mp_lst else None)
    if all_busy >= 1.0:
        return ResponseTime(busy, mean, lower=lower, scale=scale, slack=slack, rounded=rounded)
    immediate = model.fastest_mixture(idle_weights[1:])
    # 1 - b^d as a Fraction whose complement is exact: where b^d < 1/2, 1 less the float b^d,
    # so that the queued part's weight is b^d itself (at tiny loads 1 - float(1 - b^d) had left
    # P(T > 1.3) of RIQ(2), IR Deterministic(1) 4.6e-6 relative off at arrival rate 1e-6 and 11%
    # at 1e-8); else 1 - b^d from 1 - b (near load 1 the root is delta = 1 - b: from the float
    # b, 1 - b^d kept only eps / delta of it); d = 1 with an exact rational mean: 1 - rho
    some_idle = 1.0 if idle >= 1.0 else -math.expm1(d * math.log1p(-idle))
    weight = (free if rounded is None else
              1 - Fraction(all_busy) if all_busy < 0.5 else Fraction(some_idle))
    transform = _TwoParts(float(weight), immediate.lst, busy, weight)
    split = (weight, immediate, busy, busy_mean)
    # a job that queues waits a positive time: the rest lies above the smallest runtime (and
    # where that runtime is an atom, it is inverted measured from it: its density jumps there);
    # the other jumps of its density, where the runtime has atoms, are taken out
    from_lower = busy.from_lower(lower)
    kinks = (from_lower or busy).kinks(offset=lower if from_lower is not None else 0.0)
    # Random with runtimes on a lattice: the high-precision path sums the wait's exact CDF
    exact_mp = (mg1._LatticeSojourn.of(lam_b, model.replica(), free)
                if d == 1 and rounded is None else None)
    return ResponseTime(transform, mean, split=split, lower=lower, scale=scale, slack=slack,
                        rounded=rounded,
                        rest_above_lower=True, rest_from_lower=from_lower, rest_kinks=kinks,
                        exact_mp=exact_mp)


class _TwoParts:
    """``w f(s) + (1 - w) g(s)`` (a class, so that the response time can be pickled); ``exact``:
    ``w`` exactly (a Fraction), used at the working precision for mpmath arguments."""

    def __init__(self, weight: float, first, second, exact=None):
        self.weight, self.first, self.second = weight, first, second
        self.exact = weight if exact is None else exact

    def __call__(self, s):
        w = mg1._at_precision(self.exact) if _is_mp(s) else self.weight
        return w * self.first(s) + (1 - w) * self.second(s)


def _smallest(law: Distribution) -> float:
    """A hard lower bound of a runtime law: its essential infimum where it is known exactly."""
    if isinstance(law, _Product):
        return _smallest(law.X) * _smallest(law.M)
    if isinstance(law, Mixture):
        return min(_smallest(c) for c, w in zip(law.components, law.weights) if w > 0)
    if law.atoms is not None:
        return float(law.atoms[0][0])
    value = float(law.ppf(0.0))
    return value if math.isfinite(value) and value > 0 else 0.0
