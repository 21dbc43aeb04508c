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

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import special

from . import _checks
from .distributions import Distribution, _is_mp, as_distribution

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
"""Queue loads ``rho`` within this of 1 evaluate the transforms' denominators ``s - lam (1 -
B~(s))`` as ``s (1 - rho) + lam psi(s)`` (:class:`_Remainder`): computed directly they lose
digits like ``eps / (1 - rho)`` at the small ``|s|`` that decide the tail, so that the M/E2/1
p99 was 117% off at load ``1 - 2^-20`` and the inversion's error estimate, which allows for
that loss, was larger than the value."""


class _Remainder:
    """``psi(s) = E[exp(-s B) - 1 + s B]`` for ``Re(s) >= 0`` (numpy arrays), to full relative
    accuracy: the moment series ``sum_{k >= 2} (-s)^k E[B^k] / k!`` (``k <= _TERMS``, by
    Horner's rule) where ``|s| E[B]`` is below ``radius`` (a quarter of the inverse of the
    largest ratio of consecutive coefficients, so the terms fall at least fourfold and the
    first left out is below ``4^-25`` of the first), else
    ``B~(s) - 1 + s E[B]`` (no cancellation there). :meth:`of` gives ``None`` for a law whose
    moments are not all finite (heavy tails: no series), whose transforms keep the direct form.

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

    def __init__(self, B: Distribution, mean: float, coefficients: np.ndarray, radius: float):
        self.B, self.mean = B, mean
        self.coefficients, self.radius = coefficients, radius

    @classmethod
    def of(cls, B: Distribution) -> _Remainder | None:
        mean = B.mean()
        if not (math.isfinite(mean) and mean > 0):
            return None
        # E[(B / E[B])^k] / k! through logarithms: the law's own moments (remembered on it; a
        # scaled copy would recompute them at every analysis), or, where they overflow (a long
        # time unit), the moments of the law in units of E[B]
        k = np.arange(2, cls._TERMS + 1)
        with np.errstate(all="ignore"):
            moments = np.array([B.moment(int(j)) for j in k])
            scale = math.log(mean)
            if not np.all(np.isfinite(moments)):
                unit = B.scaled(1.0 / mean)
                moments, scale = np.array([unit.moment(int(j)) for j in k]), 0.0
            a = np.exp(np.log(moments) - k * scale - special.gammaln(k + 1))
            ratios = a[1:] / a[:-1]
        if not (np.all(np.isfinite(a)) and np.all(a > 0) and np.all(np.isfinite(ratios))):
            return None
        return cls(B, mean, a[::-1].copy(), 0.25 / float(ratios.max()))

    def __call__(self, s):
        s = np.asarray(s)
        w = s * self.mean
        near = np.abs(w) <= self.radius
        out = np.empty(s.shape, dtype=complex if np.iscomplexobj(s) else float)
        u = -w[near]
        total = np.zeros(u.shape, dtype=out.dtype)
        for coefficient in self.coefficients:
            total = total * u + coefficient
        out[near] = total * u * u
        far = s[~near]
        with np.errstate(over="ignore", invalid="ignore"):
            out[~near] = self.B.lst(far) - 1.0 + far * self.mean
        return out


def _slack(lam: float, mean: float) -> float:
    """``1 - lam mean`` to the rounding of the result alone (the product taken exactly): near
    load 1 the rounded product ``lam mean`` moves ``1 - rho``, and with it the wait, by up to
    ``eps / (1 - rho)`` relative (1e-4 at ``1 - rho = 1e-12``).

    Examples
    --------
    >>> lam = (1 - 1e-12) / 1.3
    >>> _slack(lam, 1.3), 1 - lam * 1.3
    (9.99965922031921e-13, 9.999778782798785e-13)
    """
    if not (math.isfinite(lam) and math.isfinite(mean)):
        return 1.0 - lam * mean
    return float(1 - Fraction(lam) * Fraction(mean))


def _pk_wait_mean(lam: float, m1: float, m2: float, free: float | None = None) -> float:
    """The Pollaczek-Khinchine wait ``lam E[B^2] / (2 (1 - rho))``; ``free`` is ``1 - rho``
    when it is known more accurately than from ``lam m1``."""
    rho = lam * m1
    if not _checks.stable_load(rho):
        return math.inf
    if lam == 0:
        return 0.0  # no arrivals while busy: nothing to wait for, even if E[B^2] = inf
    return lam * m2 / (2.0 * (_slack(lam, m1) if free is None else free))


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
    return m1 + _pk_wait_mean(lam, m1, B.moment(2))


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

    return _PKTransform(lam, B, rho)


class _PKTransform:
    """``(1 - rho) s B~(s) / (s - lam (1 - B~(s)))`` (a class, so that it can be pickled)."""

    def __init__(self, lam: float, B: Distribution, rho: float):
        self.lam, self.B, self.rho = lam, B, rho
        self.free = _slack(lam, B.mean())   # 1 - rho
        self.remainder = _Remainder.of(B) if self.free < _NEAR_ONE else None

    @property
    def accurate(self) -> bool:
        """Computed to full relative accuracy near ``s = 0`` (no loss ``eps / (1 - rho)``)."""
        return self.remainder is not None

    def __call__(self, s):
        b = self.B.lst(s)
        z = _safe(s)
        return _one_at_zero(s, self.free * z * b / _denominator(
            z, b, self.lam, self.free, self.remainder))


def _denominator(z, b, lam: float, free: float, remainder: _Remainder | None):
    """``z - lam (1 - b)`` with ``b = B~(z)``: as ``z (1 - rho) + lam psi(z)`` (``free = 1 -
    rho``) through ``remainder`` (:class:`_Remainder` of ``B``) when there is one and ``z`` is
    not an mpmath number (whose working precision absorbs the cancellation), else directly."""
    if remainder is None or _is_mp(z):
        return z - lam * (1 - b)
    return z * free + lam * remainder(z)


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
    mean = as_distribution(service).mean()
    if not _checks.stable_load(lam_b * mean):
        return 1.0
    x = lam_i * as_distribution(first_service).mean() / _slack(lam_b, mean)
    return x / (1.0 + x) if math.isfinite(x) else 1.0


def _efs_wait_mean(lam_b: float, be1: float, be2: float, b1: float, b2: float,
                   free: float | None = None) -> float:
    """Mean work found by an arrival during a busy period: excess of B_e plus a P-K wait
    (``free``: ``1 - rho_B`` if known more accurately than from ``lam_b b1``)."""
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
    return _efs_wait_mean(lam_b, Be.mean(), Be.moment(2), b1, B.moment(2)) + b1


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


def _efs_busy_transform(lam_b: float, Be: Distribution, B: Distribution,
                        free: float | None = None) -> Callable:
    return _EFSBusyTransform(lam_b, Be, B, free)


class _EFSBusyTransform:
    """The transform of :func:`efs_busy_response_lst` (a class, so that it can be pickled)."""

    def __init__(self, lam_b: float, Be: Distribution, B: Distribution,
                 free: float | None = None):
        self.lam_b, self.Be, self.B = lam_b, Be, B
        self.be1 = Be.mean()
        self.rho_b = lam_b * B.mean()
        # 1 - rho_B, from the caller where it knows it more accurately than lam_b E[B]
        self.free = _slack(lam_b, B.mean()) if free is None else free
        self.remainder = self.first = None
        if self.free < _NEAR_ONE:
            self.remainder = _Remainder.of(B)
            self.first = (self.remainder if Be is B or self.remainder is None
                          else _Remainder.of(Be))

    @property
    def accurate(self) -> bool:
        """Computed to full relative accuracy near ``s = 0`` (no loss ``eps / (1 - rho_B)``)."""
        return self.first is not None

    def __call__(self, s):
        z = _safe(s)
        b = self.B.lst(s)
        if self.accurate and not _is_mp(s):
            # (1 - B_e~(z)) / z = E[B_e] - psi_e(z) / z: no cancellation at small |z|
            excess = 1 - self.first(z) / (z * self.be1)
            wait = self.free * z / _denominator(z, b, self.lam_b, self.free, self.remainder)
            return _one_at_zero(s, excess * wait * b)
        # Random (d = 1): the first service is the service (a costly transform, once)
        be = b if self.Be is self.B else self.Be.lst(s)
        excess = (1 - be) / (z * self.be1)
        wait = self.free * z / (z - self.lam_b * (1 - b))
        return _one_at_zero(s, excess * wait * b)
