"""The M/G/1 family: Pollaczek-Khinchine, and the M/G/1 with an exceptional first service and
different arrival rates while idle and while busy ("M/G/1/efs*", the building block of RIQ).

All transforms are Laplace-Stieltjes transforms (LSTs) ``E[exp(-s T)]``. The callables returned
here use plain arithmetic on the service LSTs, so they accept numpy arrays (real or complex) as
well as mpmath numbers (for high-precision inversion).

References
----------
.. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, Section 5.6 (Pollaczek-Khinchine).
.. [2] P. D. Welch, "On a generalized M/G/1 queuing process in which the first customer of each
   busy period receives exceptional service", Operations Research 12(5), 1964.
.. [3] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for job
   redundancy: decoupling server slowdown and job size", IEEE/ACM ToN 25(6), 2017 (RIQ).
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
from scipy import special

from . import _checks
from .distributions import (
    Discrete,
    Distribution,
    Exponential,
    HyperExponential,
    Mixture,
    _is_mp,
    _over_atoms,
    _Product,
    as_distribution,
)
from .transforms import Kinks, _decayed

__all__ = [
    "pk_mean",
    "pk_lst",
    "efs_busy_fraction",
    "efs_busy_response_mean",
    "efs_busy_response_lst",
]


def _one_at_zero(s, value):
    """Replace the removable 0/0 of a transform at ``s = 0`` by its limit 1."""
    if _is_mp(s):
        return 1 if s == 0 else value
    return np.where(s == 0, 1.0, value)


def _safe(s):
    """``s`` with zeros replaced by 1 so that dividing by it is harmless (patched afterwards)."""
    if _is_mp(s):
        return s if s != 0 else 1
    return np.where(s == 0, 1.0, s)


_NEAR_ONE = 0.05
"""The transforms evaluate their denominators ``s - lam (1 - B~(s))`` as ``s (1 - rho) + lam
psi(s)`` (:class:`_Remainder`, where the law's moment series is trusted): computed directly they
lose digits like ``eps / (|s| (1 - rho))`` at the small ``|s|`` that decide the tail, so that the
M/E2/1 p99 was 117% off at load ``1 - 2^-20``, and at load 0.9 the M/M/1 quantile at ``1 -
1e-12`` read 621.7 (276.3) with an error estimate of 1.8e4. Within this of load 1 only where
``1 - rho`` is exact (:func:`_slack`): a rounded mean there moves ``1 - rho`` by up to ``eps /
(1 - rho)`` relative whichever form is used."""


class _Remainder:
    """``psi(s) = E[exp(-s B) - 1 + s B]`` for ``Re(s) >= 0`` (numpy arrays), to full relative
    accuracy: the moment series ``sum_{k >= 2} (-s)^k E[B^k] / k!`` (``k <= _TERMS``, by
    Horner's rule) where ``|s| E[B]`` is below ``radius`` (a quarter of the inverse of the
    largest ratio of consecutive coefficients, so the terms fall at least fourfold), else
    ``B~(s) - 1 + s E[B]`` (``b = B~(s)`` from the caller where it has it), whose rounding is
    then at most ``_DIRECT_LOSS`` relative. :meth:`of` gives ``None`` (the transforms keep the
    direct form) unless the series is trusted: every moment finite, the ratios of the last
    coefficients not growing (a geometric tail, or faster: a lognormal's grow without end),
    and the series
    and the direct form agree at the radius.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory import Exponential
    >>> psi = _Remainder.of(Exponential(2.0))      # exactly s^2 / (mu (mu + s))
    >>> s = np.array([1e-9, 3.0 + 4.0j])
    >>> bool(np.allclose(psi(s), s**2 / (2.0 * (2.0 + s)), rtol=1e-14, atol=0))
    True
    """

    _TERMS = 27
    _DIRECT_LOSS = 1e-12
    _SUMMED_BELOW = 1e-13
    """A law made of parts whose series loses more than this at its radius takes the sum of its
    parts' remainders where theirs lose less (HyperExponential([0.99, 0.01], [1, 0.01]): 8.8e-13
    at the radius, 5.7e-14 relative in the transform, beyond the tail's error estimate)."""

    def __init__(self, B: Distribution, mean: float, coefficients: np.ndarray, radius: float):
        self.B, self.mean = B, mean
        self.coefficients, self.radius = coefficients, radius
        self.loss = 0.0
        """Relative rounding of the direct form at the radius, ``eps (2 + |w|) / |psi|``."""

    @classmethod
    def of(cls, B: Distribution) -> _Remainder | _SummedRemainder | None:
        """The remainder of ``B`` by its moment series, or, for a law made of parts (a
        mixture, a law on atoms, a product with a factor on atoms) where that series cannot be
        trusted or loses more than ``_SUMMED_BELOW`` at its radius, the sum of its parts'
        remainders (:class:`_SummedRemainder`) if they lose less; ``None`` where neither can be
        trusted. ``loss`` says how much the one returned loses. A law with the remainder in
        closed form (:meth:`Distribution._lst_remainder`: Pareto, whose moments from
        ``alpha`` on are infinite) has it as :class:`_ClosedRemainder`; a law with a finite mean
        and none of these (a power tail from :func:`~queuetheory.from_scipy`) has it by
        quadrature (:class:`_QuadratureRemainder`)."""
        if B._lst_remainder(np.ones(1, dtype=complex)) is not None:
            return _ClosedRemainder(B)
        psi = cls._by_series(B)
        if psi is not None and psi.loss <= cls._SUMMED_BELOW:
            return psi
        summed = _SummedRemainder.of(B)
        if summed is not None and (psi is None or summed.loss < psi.loss):
            return summed
        if psi is None and math.isfinite(B.mean()) and B.mean() > 0:
            return _QuadratureRemainder(B)
        return psi

    @classmethod
    def _by_series(cls, B: Distribution) -> _Remainder | None:
        mean = B.mean()
        if not (math.isfinite(mean) and mean > 0):
            return None
        # E[(B / E[B])^k] / k! through logarithms: the law's own moments (remembered on it; a
        # scaled copy would recompute them at every analysis), or, where they leave the
        # normal floats (a long or short time unit), those of the law in units of E[B]
        k = np.arange(2, cls._TERMS + 1)
        # (a moment by a failing quadrature warns; the checks below reject it)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            moments = np.array([B.moment(int(j)) for j in k])
            scale = math.log(mean)
            if not np.all(np.isfinite(moments) & (moments > 1e-300)):
                unit = B.scaled(1.0 / mean)
                moments, scale = np.array([unit.moment(int(j)) for j in k]), 0.0
            a = np.exp(np.log(moments) - k * scale - special.gammaln(k + 1))
            ratios = a[1:] / a[:-1]
        if not (np.all(np.isfinite(a)) and np.all(a > 0) and np.all(np.isfinite(ratios))
                and ratios[-1] <= 1.02 * ratios[-2]):
            return None
        psi = cls(B, mean, a[::-1].copy(), 0.25 / float(ratios.max()))
        # at the radius: the direct form's rounding (eps (2 + |w|) / |psi|) small, and the two
        # forms agreeing within it (moments by a failing quadrature disagree)
        w = psi.radius * np.exp(1j * np.array([0.0, 0.25, 0.5]) * np.pi)
        series = psi._series(w)
        with np.errstate(all="ignore"):
            direct = B.lst(w / mean) - 1.0 + w
        loss = np.finfo(float).eps * (2.0 + np.abs(w)) / np.abs(series)
        if not (np.all(loss <= cls._DIRECT_LOSS)
                and np.all(np.abs(direct - series) <= 16 * loss * np.abs(series))):
            return None
        psi.loss = float(loss.max())
        return psi

    def _series(self, w):
        """The series at ``w = s E[B]`` (``|w| <= radius``)."""
        u = -w
        total = np.zeros(u.shape, dtype=np.result_type(u, float))
        for coefficient in self.coefficients:
            total = total * u + coefficient
        return total * u * u

    def __call__(self, s, b=None):
        s = np.asarray(s)
        w = s * self.mean
        near = np.abs(w) <= self.radius
        out = np.empty(s.shape, dtype=complex if np.iscomplexobj(s) else float)
        out[near] = self._series(w[near])
        far = s[~near]
        lst = self.B.lst(far) if b is None else np.broadcast_to(b, s.shape)[~near]
        with np.errstate(over="ignore", invalid="ignore"):
            out[~near] = lst - 1.0 + far * self.mean
        return out


class _ClosedRemainder:
    """``psi(s) = E[exp(-s B) - 1 + s B]`` from the law's closed form
    (:meth:`Distribution._lst_remainder`), as :class:`_Remainder` gives it from a moment
    series: Pareto(2.5) at load ``1 - 1e-9`` had its p50 and p99 both at 1.22e9 (1.04e9 and
    6.9e9 in heavy traffic) with an error estimate of 1.1e12, the direct form ``B~(s) - 1 +
    s E[B]`` cancelling at the ``s`` of order ``1 - rho`` that decide them.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory import Pareto
    >>> psi = _ClosedRemainder(Pareto(2.5, 1.0))
    >>> # s^2 E[B^2] / 2 + alpha Gamma(-alpha) s^alpha + O(s^3): 2.5e-18 - 7.4733e-23
    >>> print(f"{psi(np.array([1e-9 + 0j]))[0].real:.8e}")
    2.49992527e-18
    """

    loss = 0.0

    def __init__(self, B: Distribution):
        self.B = B

    def _evaluate(self, s):
        return self.B._lst_remainder(s)

    def __call__(self, s, b=None):
        s = np.asarray(s)
        out = self._evaluate(s)
        return out if np.iscomplexobj(s) else out.real


class _QuadratureRemainder(_ClosedRemainder):
    """``psi(s) = E[exp(-s B) - 1 + s B]`` by quadrature
    (:meth:`Distribution._remainder_by_quadrature`), for a law with a finite mean but neither a
    closed form nor a trusted moment series: scipy's ``pareto(1.8)`` at load ``1 - 1e-6`` had
    its p50 at 6.36e7 (6.39e7 in closed form) with 0.06 stated and no p99 at all, the direct form
    ``B~(s) - 1 + s E[B]`` cancelling at the small ``s`` that decide them.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from queuetheory import from_scipy
    >>> psi = _QuadratureRemainder(from_scipy(stats.pareto(2.5)))
    >>> print(f"{psi(np.array([1e-9 + 0j]))[0].real:.8e}")   # as Pareto(2.5, 1) in closed form
    2.49992527e-18
    """

    def __call__(self, s, b=None):
        s = np.asarray(s)
        out = self.B._remainder_by_quadrature(s, b)
        return out if np.iscomplexobj(s) else out.real


_SUMMED_PARTS = 64
"""Most parts :class:`_SummedRemainder` sums: each costs about a transform of the whole law
(Random with runtimes on 5000 lognormal atoms took 63 s for 3.4 s); beyond, the series alone."""


class _SummedRemainder:
    """``psi(s) = sum_i w_i psi_i(c_i s)`` for ``B`` equal to ``c_i B_i`` with probability
    ``w_i``: a mixture (``c_i = 1``), a law on atoms (``B_i = 1``, ``c_i`` the atoms), a product
    ``X S`` with ``S`` on atoms (``B_i = X``, ``c_i`` the atoms of ``S``; likewise with ``X`` on
    atoms). ``psi`` is linear in the law, and each part's :class:`_Remainder` keeps full relative
    accuracy on its own scale, where the series of the whole law does not reach far enough for
    the direct form to take over: parts on far-apart scales (HyperExponential([0.9, 0.1], [2,
    0.25]) times slowdowns {1, 1000}) make the ratios of its moments, and so its radius, those of
    the slowest part, beyond which ``B~(s) - 1 + s E[B]`` still cancels. Near ``s = 0`` every
    term is about ``s^2 E[(c_i B_i)^2] / 2``: no cancellation in the sum.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory import HyperExponential
    >>> psi = _SummedRemainder.of(HyperExponential([0.5, 0.5], [1.0, 1e-3]))
    >>> s = np.array([1e-9, 0.01 + 0.02j])
    >>> exact = 0.5 * s**2 / (1.0 + s) + 0.5 * s**2 / (1e-3 * (1e-3 + s))
    >>> bool(np.allclose(psi(s), exact, rtol=1e-13, atol=0))
    True
    """

    def __init__(self, parts: list):
        self.parts = parts     # (remainder, scales c_i, weights w_i): one remainder, many scales
        self.loss = max(psi.loss for psi, _, _ in parts)

    @classmethod
    def of(cls, B: Distribution) -> _SummedRemainder | None:
        atoms = B.atoms
        if atoms is not None:
            parts = [(_Remainder._by_series(Discrete([1.0], [1.0])), *atoms)]
        elif isinstance(B, Mixture):
            parts = [(_Remainder.of(c), np.ones(1), np.array([w]))
                     for c, w in zip(B.components, B.weights) if w > 0]
        elif isinstance(B, HyperExponential):
            parts = [(_Remainder.of(Exponential(float(r))), np.ones(1), np.array([w]))
                     for r, w in zip(B.rates, B.probs) if w > 0]
        elif isinstance(B, _Product) and (B.M.atoms is not None or B.X.atoms is not None):
            other, atoms = (B.X, B.M.atoms) if B.M.atoms is not None else (B.M, B.X.atoms)
            parts = [(_Remainder.of(other), *atoms)]
        else:
            return None
        if (not parts or any(psi is None for psi, _, _ in parts)
                or sum(np.size(c) for _, c, _ in parts) > _SUMMED_PARTS):
            return None
        return cls([(psi, np.asarray(c, dtype=float), np.asarray(w, dtype=float))
                    for psi, c, w in parts])

    def __call__(self, s, b=None):
        s = np.asarray(s)
        return sum(_over_atoms(lambda z, c, psi=psi: psi(z * c), s, scales, weights)
                   for psi, scales, weights in self.parts)


def _slack(rate, B: Distribution) -> tuple[Fraction | float, bool]:
    """``1 - rate E[B]`` (``rate`` a float or a Fraction) and whether it is exact to its final
    rounding: a Fraction from the law's exact rational mean where its closed form gives one
    (:meth:`Distribution._mean_exact`), else a float from its float mean (the product taken
    exactly; the mean's own rounding stays). Near load 1 the wait is inversely proportional to
    it, and the rounded product ``rate E[B]`` or mean moves it by up to ``eps / (1 - rho)``
    relative (1.2e-5 at ``1 - rho = 1e-12``).

    Examples
    --------
    >>> from queuetheory import Exponential
    >>> lam = (1 - 1e-12) / 1.3
    >>> free, exact = _slack(lam, Exponential(1 / 1.3))
    >>> float(free), exact, 1 - lam * Exponential(1 / 1.3).mean()
    (9.999112648984011e-13, True, 9.999778782798785e-13)
    """
    mean = B._mean_exact()
    if mean is not None:
        return 1 - Fraction(rate) * mean, True
    value = B.mean()
    if not (math.isfinite(value) and math.isfinite(float(rate))):
        return 1.0 - float(rate) * value, False
    return float(1 - Fraction(rate) * Fraction(value)), False


def _at_precision(value):
    """``value`` (a Fraction or a float) as an mpmath number at the working precision."""
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


_LATTICE_WORK = 4_000_000
"""Most multiply-adds in mpmath of one value of :class:`_LatticeSojourn` (about 2 s at 40
digits); beyond, ``None``: the high-precision path inverts the transform instead."""


class _LatticeSojourn:
    """``P(T <= t)`` or ``P(T > t)`` in mpmath of the M/G/1 FCFS sojourn ``T = W + R`` for
    runtimes on finitely many points of a lattice ``delta N`` (``Deterministic``, ``Discrete``
    with commensurate values), exact to the working precision.

    The wait's CDF is the lattice form of the Takacs-Benes formula, ``P(W <= y) = (1 - rho)
    sum_{j=0}^{floor(y / delta)} P(A(u_j) = j delta)`` with ``u_j = j delta - y <= 0``, where
    ``P(A(u) = j delta) = exp(-lam u) sum_n (lam u)^n / n! P(R_1 + ... + R_n = j delta)`` is
    the compound-Poisson probability continued to negative times (for ``R = 1`` Erlang's
    formula, ``(1 - rho) sum_j (lam (j - y))^j / j! exp(-lam (j - y))``; L. Takacs,
    *Introduction to the Theory of Queues*, Oxford 1962, ch. 2; V. E. Benes, *General
    Stochastic Processes in the Theory of Queues*, 1963), summed by Panjer's recursion
    ``f_k = (lam u / k) sum_i k_i p_i f_(k - k_i)``, ``f_0 = exp(-lam u)``. The terms reach
    about ``exp(2 lam y)``: they are summed with that many more digits (``2 lam y log10(e)``).
    ``P(T <= t) = sum_i p_i P(W <= t - a_i)``. Checked against the double-precision
    inversion and the method of steps (exact arithmetic) in ``tests/test_atoms.py``.
    """

    def __init__(self, lam: float, values, probs, free):
        exact = [Fraction(v) for v in values]
        common = math.lcm(*(v.denominator for v in exact))
        numerators = [v.numerator * (common // v.denominator) for v in exact]
        unit = math.gcd(*numerators)
        self.delta = Fraction(unit, common)
        self.steps = [n // unit for n in numerators]
        self.values = exact
        self.probs = list(probs)
        self.lam = float(lam)
        self.free = free

    @classmethod
    def of(cls, lam: float, law: Distribution, free) -> _LatticeSojourn | None:
        """The sojourn behind a Random queue at rate ``lam`` with runtimes ``law`` and ``1 -
        rho`` exactly ``free`` (a Fraction), or ``None`` if the runtime is not on finitely
        many positive points with exact probabilities (:class:`Deterministic`,
        :class:`Discrete`)."""
        from .distributions import Deterministic, _exact_probs_of

        if not isinstance(free, Fraction) or not free > 0:
            return None
        if isinstance(law, Deterministic):
            values, probs = [law.value], [Fraction(1)]
        elif type(law) is Discrete:
            values, probs = law.values, _exact_probs_of(law, law.probs)
        else:
            return None
        if not all(math.isfinite(v) and v > 0 for v in values):
            return None
        return cls(lam, values, probs, free)

    def _wait_cdf(self, y: mpmath.mpf, p: list) -> mpmath.mpf:
        """``P(W <= y)`` for ``y >= 0`` at the working precision (``p``: the probabilities)."""
        lam = mpmath.mpf(self.lam)
        delta = _at_precision(self.delta)
        total = mpmath.mpf(0)
        for j in range(int(mpmath.floor(y / delta)) + 1):
            rate = lam * (j * delta - y)                  # lam u_j <= 0
            f = [mpmath.exp(-rate)]
            for k in range(1, j + 1):
                f.append(rate / k * mpmath.fsum(step * pk * f[k - step]
                                                 for step, pk in zip(self.steps, p)
                                                 if step <= k))
            total += f[j]
        return _at_precision(self.free) * total

    def __call__(self, t: mpmath.mpf, upper: bool) -> mpmath.mpf | None:
        """``P(T > t)`` (``upper``) or ``P(T <= t)`` to the working precision, ``None`` where
        that costs more than ``_LATTICE_WORK``."""
        span = float(t) / float(self.delta)
        if len(self.steps) ** 2 * span * span / 2 > _LATTICE_WORK:
            return None
        digits = mpmath.mp.dps
        guard = int(2 * self.lam * float(t) / math.log(10)) + len(str(int(span))) + 10
        with mpmath.workdps(digits + guard):
            t = mpmath.mpf(t)
            p = [_at_precision(pk) for pk in self.probs]
            at = [_at_precision(v) for v in self.values]
            cdf = mpmath.fsum(pk * self._wait_cdf(t - v, p) for v, pk in zip(at, p) if v <= t)
            value = 1 - cdf if upper else cdf
        return +value


def _pk_wait_mean(lam: float, m1: float, m2: float, free=None) -> float:
    """The Pollaczek-Khinchine wait ``lam E[B^2] / (2 (1 - rho))``; ``free`` is ``1 - rho``
    (:func:`_slack`), else taken from the float product ``lam m1``."""
    rho = lam * m1
    if not _checks.stable_load(rho):
        return math.inf
    if lam == 0:
        return 0.0  # no arrivals while busy: nothing to wait for, even if E[B^2] = inf
    return lam * m2 / (2.0 * float(1.0 - rho if free is None else free))


def pk_mean(arrival_rate: float, service) -> float:
    """Mean response time of the M/G/1 FCFS queue (Pollaczek-Khinchine).

    ``E[T] = E[B] + lam E[B^2] / (2 (1 - rho))`` with ``rho = lam E[B]``; ``inf`` if
    ``rho >= 1`` or ``E[B^2] = inf``.

    Parameters
    ----------
    arrival_rate : float
        Poisson arrival rate ``lam`` > 0.
    service : Distribution
        Service time ``B``.

    Returns
    -------
    float
        Mean response time (waiting plus service).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.mg1.pk_mean(0.5, qt.Exponential(1.0))   # M/M/1: 1 / (mu - lam)
    2.0

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, eq. (5.86).
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    B = as_distribution(service)
    m1 = B.mean()
    if not _checks.stable_load(lam * m1):
        return math.inf
    return m1 + _pk_wait_mean(lam, m1, B.moment(2), _slack(lam, B)[0])


def pk_lst(arrival_rate: float, service) -> Callable:
    """LST of the M/G/1 FCFS response time: ``(1 - rho) s B~(s) / (s - lam (1 - B~(s)))``.

    Parameters
    ----------
    arrival_rate : float
        Poisson arrival rate ``lam`` > 0 with ``lam E[B] < 1``.
    service : Distribution
        Service time ``B``.

    Returns
    -------
    callable
        ``s -> E[exp(-s T)]`` for numpy arrays or mpmath numbers.

    Examples
    --------
    >>> import queuetheory as qt
    >>> T = qt.mg1.pk_lst(0.5, qt.Exponential(1.0))
    >>> complex(T(1.0 + 0j))     # M/M/1: (mu - lam) / (mu - lam + s)
    (0.3333333333333333+0j)

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, eq. (5.105).
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    B = as_distribution(service)
    rho = lam * B.mean()
    if not _checks.stable_load(rho):
        raise ValueError(f"arrival_rate * E[service] must be < 1 for a stationary queue, "
                         f"got {rho!r}")

    return _PKTransform(lam, B)


_AWAY_LOSS = 1e-13
"""Largest rounding (relative, at its radius) of a remainder used beyond ``_NEAR_ONE`` of load
1: the inversion's error estimate allows a few units of ``eps`` in the transform's values,
and a remainder's rounding reaches the transform about twenty times smaller."""


class _NearOne:
    """What the M/G/1 transforms share near load 1: ``1 - rho`` (``free``, a Fraction where
    exact; ``rounded`` where not), the service's :class:`_Remainder` (always within
    ``_NEAR_ONE`` of load 1; beyond, where the law's mean is a closed form), the denominator
    ``z - lam (1 - b)`` through it, and ``1 - rho`` at the working precision for mpmath
    arguments (a float ``1 - rho`` had left ``ppf(precision=20)`` of
    M/M/1 1.2e-6 off at load ``1 - 1e-9``, agreeing with itself at every precision)."""

    def _near_one(self, lam: float, B: Distribution, free=None, exact: bool = False):
        self.lam, self.B = lam, B
        if free is None:
            free, exact = _slack(lam, B)
        self.free_value = free
        self.free = float(free)
        # near load 1 where 1 - rho is exact; away from it where the law's moments are closed
        # forms (its mean is: laws whose moments are quadratures would pay 26 of them per
        # analysis, a scipy uniform's p99 took 0.44 s for 0.026 s), and only a remainder that
        # loses at most _AWAY_LOSS at its radius (the direct form loses less there)
        # (near load 1 also where 1 - rho is rounded: the transform then errs by about
        # eps / (1 - rho), which the inversion allows for, rather than cancelling)
        self.rounded = not exact
        cheap = exact or B._mean_exact() is not None
        psi = _Remainder.of(B) if (self.free < _NEAR_ONE or cheap) else None
        if psi is not None and self.free >= _NEAR_ONE and psi.loss > _AWAY_LOSS:
            psi = None
        self.remainder = psi

    def _free(self, z):
        """``1 - rho`` for the argument ``z`` (at the working precision for mpmath)."""
        return _at_precision(self.free_value) if _is_mp(z) else self.free

    def _denominator(self, z, b):
        """``z - lam (1 - b)`` with ``b = B~(z)``: as ``z (1 - rho) + lam psi(z)`` through
        the remainder when there is one and ``z`` is not an mpmath number (whose working
        precision absorbs the cancellation), else directly."""
        if self.remainder is None or _is_mp(z):
            return z - self.lam * (1 - b)
        return z * self.free + self.lam * self.remainder(z, b)


class _PKTransform(_NearOne):
    """``(1 - rho) s B~(s) / (s - lam (1 - B~(s)))`` (a class, so that it can be pickled); with
    ``wait`` the wait's, without the factor ``B~(s)``. ``free``: ``1 - rho`` (:func:`_slack`,
    exact or not as ``exact`` says) where the caller knows the rate exactly."""

    def __init__(self, lam: float, B: Distribution, free=None, exact: bool = False,
                 wait: bool = False):
        self._near_one(lam, B, free, exact)
        self.wait = wait

    @property
    def accurate(self) -> bool:
        """Computed to full relative accuracy near ``s = 0`` (no loss ``eps / (1 - rho)``)."""
        return self.remainder is not None

    def __call__(self, s):
        b = self.B.lst(s)
        z = _safe(s)
        top = self._free(z) * z if self.wait else self._free(z) * z * b
        return _one_at_zero(s, top / self._denominator(z, b))


def efs_busy_fraction(idle_rate: float, busy_rate: float, first_service, service) -> float:
    """Fraction of time busy of the M/G/1 with exceptional first service.

    While idle, arrivals come at ``idle_rate`` and the first one starts a busy period with
    service ``first_service`` (``B_e``); while busy, arrivals come at ``busy_rate`` with service
    ``service`` (``B``). A busy period lasts ``E[B_e] / (1 - rho_B)`` on average, an idle period
    ``1 / idle_rate``, so by renewal-reward

        b = x / (1 + x),    x = idle_rate E[B_e] / (1 - rho_B),    rho_B = busy_rate E[B].

    Returns ``1.0`` when ``rho_B >= 1`` (the queue never empties).

    Examples
    --------
    >>> import queuetheory as qt
    >>> B = qt.Exponential(1.0)
    >>> qt.mg1.efs_busy_fraction(0.5, 0.5, B, B)   # plain M/M/1: rho
    0.5
    """
    lam_i = _checks.positive("idle_rate", idle_rate)
    lam_b = _checks.nonnegative("busy_rate", busy_rate)
    B = as_distribution(service)
    if not _checks.stable_load(lam_b * B.mean()):
        return 1.0
    x = lam_i * as_distribution(first_service).mean() / float(_slack(lam_b, B)[0])
    return x / (1.0 + x) if math.isfinite(x) else 1.0


def _efs_wait_mean(lam_b: float, be1: float, be2: float, b1: float, b2: float,
                   free=None) -> float:
    """Mean work found by an arrival during a busy period: excess of B_e plus a P-K wait
    (``free``: ``1 - rho_B``, as for :func:`_pk_wait_mean`)."""
    return be2 / (2.0 * be1) + _pk_wait_mean(lam_b, b1, b2, free)


def efs_busy_response_mean(busy_rate: float, first_service, service) -> float:
    """Mean response time of a job that arrives while the efs server is busy.

    It waits for the workload of a busy server, whose law is the equilibrium excess of ``B_e``
    plus an independent Pollaczek-Khinchine waiting time with rate ``busy_rate`` and service
    ``B``, and is then served for ``B``:

        E[B_e^2] / (2 E[B_e]) + busy_rate E[B^2] / (2 (1 - rho_B)) + E[B].

    Examples
    --------
    >>> import queuetheory as qt
    >>> B = qt.Exponential(1.0)
    >>> qt.mg1.efs_busy_response_mean(0.5, B, B)   # M/M/1 given busy: 1 + 1 + 0.5/(1-0.5)
    3.0
    """
    lam_b = _checks.nonnegative("busy_rate", busy_rate)
    Be, B = as_distribution(first_service), as_distribution(service)
    b1 = B.mean()
    if not _checks.stable_load(lam_b * b1):
        return math.inf
    return _efs_wait_mean(lam_b, Be.mean(), Be.moment(2), b1, B.moment(2),
                          _slack(lam_b, B)[0]) + b1


def efs_busy_response_lst(busy_rate: float, first_service, service) -> Callable:
    """LST of the response time of a job that arrives while the efs server is busy.

        (1 - B_e~(s)) / (s E[B_e]) * (1 - rho_B) s / (s - lam_B (1 - B~(s))) * B~(s)

    obtained by level crossing on the workload: the density ``f`` of the workload obeys
    ``f~(s) = (1 - b) lam_idle (1 - B_e~(s)) / (s - lam_B (1 - B~(s)))``; dividing by ``b``
    (its value at ``s = 0``) conditions on a busy server.

    Examples
    --------
    >>> import queuetheory as qt
    >>> B = qt.Exponential(1.0)
    >>> T = qt.mg1.efs_busy_response_lst(0.5, B, B)   # M/M/1 given busy: Exp(0.5) + Exp(1)
    >>> round(complex(T(0.5 + 0j)).real, 12)         # (0.5 / 1.0) * (1 / 1.5)
    0.333333333333
    """
    lam_b = _checks.nonnegative("busy_rate", busy_rate)
    Be, B = as_distribution(first_service), as_distribution(service)
    rho_b = lam_b * B.mean()
    if not _checks.stable_load(rho_b):
        raise ValueError(f"busy_rate * E[service] must be < 1, got {rho_b!r}")
    return _efs_busy_transform(lam_b, Be, B)


def _efs_busy_transform(lam_b: float, Be: Distribution, B: Distribution, free=None,
                        exact: bool = False) -> Callable:
    return _EFSBusyTransform(lam_b, Be, B, free, exact)


_KINK_CHUNK = 1 << 20
"""Entries of the largest (times x atoms) array :meth:`_AtomKinks.parts` builds at once."""


class _AtomKinks(Kinks):
    """The jumps of :meth:`_EFSBusyTransform.kinks` beyond ``offset`` (measured from it): ``scale
    p_j`` at ``b_j`` and ``-scale p_j q_i`` at ``b_j + e_i``. Neither the transform nor the
    measure's CDF enumerates the pairs: the transform factorises, ``scale sum_j p_j exp(-s b_j)
    (1 - sum_i q_i exp(-s e_i))`` less the jumps at ``offset`` itself (no cost where ``service``
    and ``first`` are the laws whose transforms the queue's transform has just summed at the same
    points: a :class:`~queuetheory.Discrete` remembers them), and so does the CDF, ``scale
    sum_j p_j (C(u - b_j) - sum_i q_i C(u - b_j - e_i))``, the inner sums by the running sums
    of :func:`~queuetheory.transforms._decayed` over the ``e_i`` (memory of the atoms, not of
    the pairs; time ``O(times x atoms)``). ``service`` is the law of ``B - offset``, ``first``
    that of ``B_e``: each a law on atoms, a :class:`_Shifted` one, or ``(values, masses)`` of
    the atoms of a law that also has a density."""

    def __init__(self, service, first, scale: float):
        self.service, self.first, self.scale = service, first, scale
        (b, p), (e, q) = (_atoms_of(law) for law in (service, first))
        order_b, order_e = np.argsort(b, kind="stable"), np.argsort(e, kind="stable")
        self.b, self.p = np.asarray(b, float)[order_b], np.asarray(p, float)[order_b]
        self.e, self.q = np.asarray(e, float)[order_e], np.asarray(q, float)[order_e]
        # the jumps at the offset itself (times 0) are not kinks: the origin of the inversion
        origin = self.b <= 0
        # and the pairs b_j + e_i at the offset (an atom of B at the offset, one of B_e at 0)
        self.origin_pairs = float(self.p[origin].sum() * self.q[self.e <= 0].sum())
        self.at_offset = scale * (float(self.p[origin].sum()) - self.origin_pairs)
        self.b_positive, self.p_positive = self.b[~origin], self.p[~origin]
        self._size = self.b_positive.size + self.b.size * self.e.size
        self._total = scale * float(self.p_positive.sum() + self.p.sum() * self.q.sum())

    @property
    def size(self) -> int:
        return self._size

    @property
    def total(self) -> float:
        return self._total

    @functools.cached_property
    def _enumerated(self) -> tuple[np.ndarray, np.ndarray]:
        """Every jump, those at one time merged (for checks: ``atoms x atoms`` entries)."""
        times = np.concatenate([self.b, np.add.outer(self.b, self.e).ravel()])
        jumps = np.concatenate([self.p, -np.multiply.outer(self.p, self.q).ravel()]) * self.scale
        order = np.argsort(times, kind="stable")
        times, jumps = times[order], jumps[order]
        first_of = np.concatenate([[True], np.diff(times) > 1e-12 * np.abs(times[1:])])
        times, jumps = times[first_of], np.add.reduceat(jumps, np.flatnonzero(first_of))
        keep = (times > 0) & (jumps != 0)
        return times[keep], jumps[keep]

    @property
    def times(self) -> np.ndarray:
        return self._enumerated[0]

    @property
    def jumps(self) -> np.ndarray:
        return self._enumerated[1]

    def __call__(self, s):
        service, first = (_atom_lst(law, s) for law in (self.service, self.first))
        return self.scale * service * (1.0 - first) - self.at_offset

    def parts(self, u: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray]:
        one = _decayed(self, "b_positive", "p_positive", u, a)
        two = _decayed(self, "b_positive", "p_positive", u, 2.0 * a)
        step = max(1, _KINK_CHUNK // max(u.size, 1))
        for start in range(0, self.b.size, step):
            v = u[:, None] - self.b[start:start + step]      # the pairs' times: b_j + e_i < u
            weight = self.p[start:start + step]
            one -= _decayed(self, "e", "q", v, a) @ weight
            two -= _decayed(self, "e", "q", v, 2.0 * a) @ weight
        if self.origin_pairs:   # not the pairs at the offset (time 0: no kink, at_offset)
            with np.errstate(under="ignore"):
                one += self.origin_pairs * np.exp(-a * u)
                two += self.origin_pairs * np.exp(-2.0 * a * u)
        return self.scale * (one - two) / a, self.scale * (2.0 * two - one)


class _Shifted:
    """The law on atoms ``law + shift`` (``shift >= 0``), through ``law``'s own transform."""

    def __init__(self, law: Distribution, shift: float):
        self.law, self.shift = law, shift

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        values, probs = self.law.atoms
        return values + self.shift, probs

    def lst(self, s):
        with np.errstate(under="ignore"):
            return np.exp(-s * self.shift) * self.law.lst(s)


def _atoms_of(law) -> tuple[np.ndarray, np.ndarray]:
    """``(values, masses)`` of a law on atoms, or the pair itself."""
    return law if isinstance(law, tuple) else law.atoms


def _atom_lst(law, s):
    """``sum_j m_j exp(-s v_j)`` over the atoms of ``law`` (its own transform for a law on
    atoms)."""
    return Kinks(*law)(s) if isinstance(law, tuple) else law.lst(s)


class _EFSBusyTransform(_NearOne):
    """The transform of :func:`efs_busy_response_lst` (a class, so that it can be pickled).
    ``free``: ``1 - rho_B`` from the caller (a Fraction where exact; ``exact``: accurate to its
    rounding), else :func:`_slack`."""

    def __init__(self, lam_b: float, Be: Distribution, B: Distribution, free=None,
                 exact: bool = False):
        self._near_one(lam_b, B, free, exact)
        self.Be, self.be1 = Be, Be.mean()
        # the first service's remainder likewise: near load 1, or where its moments are
        # closed forms (a fastest of replicas by quadrature costs 26 of them: RIQ(2) with a
        # mixture of Deterministic and Exponential runtimes took 1.5 s for 0.36 s)
        first = (None if self.remainder is None or Be is B
                 or (self.free >= _NEAR_ONE and Be._mean_exact() is None) else _Remainder.of(Be))
        if first is not None and self.free >= _NEAR_ONE and first.loss > _AWAY_LOSS:
            first = None
        self.first = self.remainder if Be is B else first
        self.last = B

    def from_lower(self, lower: float) -> _EFSBusyTransform | None:
        """The transform of ``T - lower`` (``T`` this response time), where the service ``B``
        has finitely many atoms, the smallest at ``lower``: the last factor ``B~(s)`` becomes
        ``sum_j p_j exp(-s (b_j - lower))`` (no ``exp(s lower)``, which overflows far from
        the origin); else None."""
        atoms = self.B.atoms
        if atoms is None or not float(atoms[0].min()) == lower > 0:
            return None
        shifted = copy.copy(self)
        shifted.last, shifted.lower = Discrete(atoms[0] - lower, atoms[1]), lower
        return shifted

    def kinks(self, offset: float = 0.0) -> _AtomKinks | None:
        """Where the density of this response time (measured from ``offset``) jumps, and by
        how much, for a service ``B`` (atoms ``b_j`` of mass ``p_j``) and a first service
        ``B_e`` (atoms ``e_i`` of mass ``q_i``), besides any density; None without atoms (any
        number of atoms: :class:`_AtomKinks` never lists the pairs; left in, the jumps of 17 to
        500 atoms had left CDF errors of 3e-8 to 2e-6, up to 3.3 times the estimate).

        The transform is that of ``E + W + B``: ``E`` with density ``P(B_e > x) / E[B_e]``
        (``1 / E[B_e]`` at 0, jumping by ``-q_i / E[B_e]`` at ``e_i``), ``W`` the M/G/1 wait at
        rate ``lam_B`` (an atom ``1 - rho_B`` at 0 and a bounded density; level crossing,
        ``f(x) = lam_B (F(x) - P(W + B <= x))``, makes that density jump too, but the
        convolution of two bounded densities is continuous, as is that of ``E`` with the
        continuous part of ``B``). So the density of ``E + W + B`` jumps by ``p_j (1 - rho_B) /
        E[B_e]`` at ``b_j`` and by ``-p_j q_i (1 - rho_B) / E[B_e]`` at ``b_j + e_i``;
        elsewhere only its derivatives jump. For Random (``B_e = B``) these are the jumps of the
        Pollaczek-Khinchine response time given a wait."""
        service, first = self.B._point_masses(), self.Be._point_masses()
        if service is None or first is None or not service[0].size:
            return None
        # the laws this transform sums where they lie on atoms (their sums are remembered)
        if offset == getattr(self, "lower", None) and self.last is not self.B:
            service = self.last
        elif offset == 0 and self.B.atoms is not None:
            service = self.B
        else:
            service = (service[0] - offset, service[1])
        if self.Be is self.B and self.last is not self.B:
            first = _Shifted(self.last, self.lower)   # B~ as this transform computes it
        elif self.Be.atoms is not None:
            first = self.Be
        kinks = _AtomKinks(service, first, self.free / self.be1)
        return kinks if kinks.size else None

    @functools.cached_property
    def be1_exact(self):
        """``E[B_e]`` exactly (a Fraction) where its closed form gives it, else the float: for
        mpmath arguments, at the working precision (a rounded mean scales the transform by
        ``1 + 1e-16``, which the tail magnifies: M/M/1 at load ``1 - 1e-9``, rate ``1 / 1.3``,
        the 20-digit p99 was 1.2e-15 off)."""
        exact_mean = self.Be._mean_exact()
        return self.be1 if exact_mean is None else exact_mean

    @property
    def accurate(self) -> bool:
        """Computed to full relative accuracy near ``s = 0`` (no loss ``eps / (1 - rho_B)``)."""
        return self.first is not None

    def __call__(self, s):
        z = _safe(s)
        if self.last is self.B:
            b = last = self.B.lst(s)
        else:   # B~(s) = exp(-s lower) times the shifted transform (one sum over the atoms)
            last = self.last.lst(s)
            if _is_mp(s):
                b = mpmath.exp(-s * self.lower) * last
            else:
                with np.errstate(under="ignore"):
                    b = np.exp(-s * self.lower) * last
        wait = self._free(z) * z / self._denominator(z, b)
        if self.accurate and not _is_mp(s):
            # (1 - B_e~(z)) / z = E[B_e] - psi_e(z) / z: no cancellation at small |z|
            psi = self.first(z, b) if self.Be is self.B else self.first(z)
            return _one_at_zero(s, (1 - psi / (z * self.be1)) * wait * last)
        # Random (d = 1): the first service is the service (a costly transform, once)
        be = b if self.Be is self.B else self.Be.lst(s)
        be1 = _at_precision(self.be1_exact) if _is_mp(s) else self.be1
        return _one_at_zero(s, (1 - be) / (z * be1) * wait * last)
