"""Non-negative distributions for job sizes, slowdowns and runtimes.

Every distribution follows one pattern, in the spirit of :mod:`scipy.stats`: a public method
validates its arguments and shapes the result, a private hook (``_cdf``, ``_lst``, ...) computes.
A family supplies closed forms for its hooks; the base class supplies numerical fallbacks
(quadrature in probability space, bisection for quantiles), so a new family needs only a
cumulative distribution function and its sampler to work everywhere.

A :mod:`scipy.stats` frozen distribution is accepted wherever a queuetheory distribution is:
:func:`as_distribution` wraps it (see :func:`from_scipy`).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import cached_property

import mpmath
import numpy as np
from scipy import integrate, special

from . import _checks, quadrature

__all__ = [
    "Distribution",
    "Exponential",
    "Deterministic",
    "Erlang",
    "HyperExponential",
    "ShiftedExponential",
    "Uniform",
    "Pareto",
    "BoundedPareto",
    "Discrete",
    "Mixture",
    "from_scipy",
    "as_distribution",
    "product",
]

_MP_TYPES = (mpmath.mpf, mpmath.mpc)


def _is_mp(s) -> bool:
    return isinstance(s, _MP_TYPES)


_TS_HALF, _TS_TMAX, _TS_MAX_LEVEL = quadrature.TS_HALF, quadrature.TS_TMAX, quadrature.TS_MAX_LEVEL
_tanh_sinh_probabilities = quadrature.tanh_sinh_probabilities
_tanh_sinh_level = quadrature.tanh_sinh_level

_TS_TOL = 1e-13
"""Absolute tolerance on ``E[g(s, X)]``, met when two successive levels agree to it."""

_TS_RTOL = 1e-14
"""Relative tolerance of :meth:`Distribution._remainder_by_quadrature` (values far below 1)."""

_DIRECT_LOSS = 1e-13
"""Largest relative rounding of ``lst(s) - 1 + s E[X]`` that
:meth:`Distribution._remainder_by_quadrature` takes instead of its quadrature (as the moment
series of ``mg1._Remainder`` away from load 1)."""

_PHI_TERMS = 17
"""The last power of the series of ``exp(-z) - 1 + z`` below ``|z| = 1/2`` (the next term,
``2^-18 / 18!``, is 1e-21 of ``z^2 / 2`` there)."""

_PIECES_MAX = 32
"""Most atoms of a law with a continuous part that :meth:`Distribution._expect` sums apart,
integrating each piece between them on its own (each piece has the whole rule's nodes: 1000
atoms cost 13 s and 220 MB for four transform values; beyond this the whole range is one
piece, as for a law whose atoms are unknown)."""

_TS_MIN_BLOCK = 64
"""Values of ``s`` summed together (a block shares the node range of its largest member)."""

_W = _tanh_sinh_probabilities(_TS_HALF, _TS_TMAX)[2]

_ES_T, _ES_W = quadrature.exp_sinh_nodes()


_EXPINT_SERIES_RADIUS = 1.0
"""Below this ``|z|`` :func:`_expint` sums the power series, at or above it the continued
fraction (at ``|z| = 1`` on the imaginary axis about 170 steps; the series' cancellation grows
like ``exp(|z|)``: 3e-14 relative at ``|z| = 2``, 1e-15 at 1)."""

_EXPINT_MAX_STEPS = 2000
"""Most steps of the continued fraction of :func:`_expint` (about 170 are needed)."""


def _expint_pair(beta: float) -> tuple[int, float, float]:
    """``(n, eps, c)`` with ``beta - 1 = n + eps`` (``n`` the nearest integer) and ``c =
    [log Gamma(1 - eps) - sum_{i<=n} log(1 + eps / i)] / eps`` (``gamma - H_n`` at ``eps =
    0``): the two terms of the series of :func:`_expint` that diverge as ``beta`` nears an
    integer, taken together."""
    n = int(round(beta - 1.0))
    eps = (beta - 1.0) - n
    k = np.arange(2, 80)
    # log Gamma(1 - eps) / eps = gamma + sum_{k>=2} zeta(k) eps^(k-1) / k  (|eps| <= 1/2)
    log_gamma = np.euler_gamma + float(np.sum(special.zeta(k) * eps ** (k - 1) / k))
    harmonic = sum(math.log1p(eps / i) / eps if eps else 1.0 / i for i in range(1, n + 1))
    return n, eps, log_gamma - harmonic


def _expint_series(z: np.ndarray, beta: float, skip: int = 0) -> np.ndarray:
    """:func:`_expint` for ``0 < |z| < 1`` by DLMF 8.19.10, ``E_beta(z) = Gamma(1 - beta)
    z^(beta - 1) - sum_k (-z)^k / (k! (1 - beta + k))``, with the first term and the one of
    ``k = n`` (both ``~ 1 / eps``) summed in closed form: ``(-z)^n / n! (1 - P z^eps) / eps``,
    ``P = exp(eps c)`` (:func:`_expint_pair`), which at ``eps = 0`` is DLMF 8.19.8. ``skip``:
    the terms ``k < skip`` of the sum left out (the first term alone, without its partner,
    where ``n < skip``)."""
    n, eps, c = _expint_pair(beta)
    log_z = np.log(z)
    x = eps * (c + log_z)
    safe = np.where(x == 0, 1.0, x)
    ratio = np.where(x == 0, 1.0, np.expm1(x) / safe)      # (exp(x) - 1) / x
    power, total, lead = np.ones_like(z), np.zeros_like(z), None
    for k in range(max(22, n + 1)):                       # |z|^22 / 22! < 1e-21
        if k == n and n >= skip:
            lead = power
        elif k >= skip:
            total += power / (k - n - eps)
        power = power * (-z) / (k + 1)
    if lead is None:
        return special.gamma(1.0 - beta) * np.exp((beta - 1.0) * log_z) - total
    return -lead * (c + log_z) * ratio - total


def _expint_fraction(z: np.ndarray, beta: float) -> np.ndarray:
    """:func:`_expint` for ``|z| >= 1`` by the continued fraction DLMF 8.19.17 in its even
    form, ``E_beta(z) = exp(-z) / (z + beta - 1 beta / (z + beta + 2 - 2 (beta + 1) / (z +
    beta + 4 - ...)))``, evaluated by the modified Lentz method (Numerical Recipes, 3rd ed.,
    sections 5.2 and 6.3), each value until its step changes it by less than one ulp."""
    b = z + beta
    c = np.full(z.shape, 1e300, dtype=complex)
    d = 1.0 / b
    h = d.copy()
    active = np.arange(z.size)
    for i in range(1, _EXPINT_MAX_STEPS):
        a = -i * (beta - 1.0 + i)
        b = b + 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        step = c * d
        h[active] *= step
        going = np.abs(step - 1.0) >= np.finfo(float).eps
        if not going.any():
            break
        active, b, c, d = active[going], b[going], c[going], d[going]
    return h * np.exp(-z)


def _expint(s, beta: float, scale: float = 1.0) -> np.ndarray:
    """The generalised exponential integral ``E_beta(z) = int_1^inf exp(-z t) t^(-beta) dt``
    (DLMF 8.19.3) at ``z = s scale``, for complex ``s`` with ``Re(s) >= 0`` and ``beta > 1``,
    to about 1e-14
    relative: the power series below ``|z| = 1`` (:func:`_expint_series`), the continued
    fraction above (:func:`_expint_fraction`); ``1 / (beta - 1)`` at 0, 0 where ``Re(z) >
    745`` (below the smallest float) or ``z`` is not finite (the limit ``|z| -> inf``).

    The Laplace transform of a Pareto tail, ``a^(beta - 1) int_a^inf exp(-s x) x^(-beta) dx =
    E_beta(s a)`` (``scale = a``); checked against ``mpmath.expint`` in
    ``tests/test_distributions.py``.

    Examples
    --------
    >>> import mpmath
    >>> from queuetheory.distributions import _expint
    >>> value = complex(_expint(3.0 + 4.0j, 2.0))
    >>> abs(value - complex(mpmath.expint(2, 3 + 4j))) < 1e-16
    True
    """
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.asarray(s, dtype=complex) * scale
    flat = z.ravel()
    out = np.zeros(flat.size, dtype=complex)
    size = np.abs(flat)
    zero = size == 0
    out[zero] = 1.0 / (beta - 1.0)
    small = ~zero & (size < _EXPINT_SERIES_RADIUS)
    if small.any():
        out[small] = _expint_series(flat[small], beta)
    large = ~zero & ~small & np.isfinite(flat) & (flat.real <= 745.0)
    if large.any():
        out[large] = _expint_fraction(flat[large], beta)
    return out.reshape(z.shape)


def _log_ratio(x, y):
    """``log(x / y)`` for positive ``x`` and ``y`` (arrays or floats), to a few ulps relative:
    ``log1p((x - y) / y)`` for ``y / 2 < x < 2 y`` (``x - y`` exact there), ``log(x / y)``
    where the ratio is a normal float, ``log(x) - log(y)`` where it under- or overflows."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        d = x / y
        near = (d > 0.5) & (d < 2.0)
        out = np.where(near, np.log1p((x - y) / y), np.log(d))
        extreme = ~((d >= np.finfo(float).tiny) & (d < math.inf))
        if np.any(extreme):
            out = np.where(extreme, np.log(x) - np.log(y), out)
    return out


def _power_of_ratio(x, y, alpha: float):
    """``(x / y)^alpha`` for positive ``x``, ``y``: the power of the rounded ratio (relative
    error about ``alpha`` half-ulps, the conditioning of the power), through logarithms where
    the ratio under- or overflows."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        d = x / y
        out = d**alpha
        extreme = ~((d >= np.finfo(float).tiny) & (d < math.inf))
        if np.any(extreme):
            out = np.where(extreme, np.exp(alpha * (np.log(x) - np.log(y))), out)
    return out


def _exp_neg_product(z: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``exp(-z x)``, 0 where ``x`` is the overflow stand-in of an infinite quantile."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-z * x)
    if not np.all(np.isfinite(out)):
        out[~np.isfinite(out)] = 0.0
    return out


def _phi_product(z: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``exp(-z x) - 1 + z x`` to full relative accuracy for ``Re(z x) >= 0`` (below ``|z x| =
    1/2``, where the difference cancels, ``u^2 / 2 (1 + u / 3 (1 + u / 4 (...)))`` with ``u =
    -z x``, to ``u^17``); 0 where ``x`` is the overflow stand-in of an infinite quantile (its
    weight is 0).

    Examples
    --------
    >>> import numpy as np
    >>> float(_phi_product(np.array(1e-9), np.array(1.0)))   # z^2 / 2 - z^3 / 6
    4.999999998333334e-19
    """
    w = np.asarray(z * x)
    out = np.empty(w.shape, dtype=w.dtype)
    small = np.abs(w.real) + np.abs(w.imag) < 0.5
    far = ~small
    with np.errstate(over="ignore", invalid="ignore"):
        wide = w[far]
        out[far] = np.exp(-wide) - 1.0 + wide
    u = -w[small]
    total = u / _PHI_TERMS + 1.0
    for k in range(_PHI_TERMS - 1, 2, -1):
        total = total * (u / k) + 1.0
    out[small] = total * u * u / 2.0
    if not np.all(np.isfinite(out)):
        out[~np.isfinite(out)] = 0.0
    return out


def _sum_by_blocks(integrand, z: np.ndarray, x: np.ndarray, weights: np.ndarray,
                   cutoff: np.ndarray) -> np.ndarray:
    """``sum_j weights[j] integrand(z[i], x[j])`` over the sorted nodes ``x[j] <= cutoff[i]``.

    The values of ``z`` are sorted by cutoff and handled in blocks of ``_TS_MIN_BLOCK`` (bounded
    memory), each block summing up to the largest cutoff among its members.
    """
    out = np.empty(z.size, dtype=complex)
    ends = np.searchsorted(x, cutoff, side="right")
    order = np.argsort(ends, kind="stable")
    for start in range(0, z.size, _TS_MIN_BLOCK):
        idx = order[start:start + _TS_MIN_BLOCK]
        width = max(int(ends[idx[-1]]), 1)
        out[idx] = _weighted(integrand(z[idx, None], x[:width]), weights[:width])
    return out


def _key(s: np.ndarray) -> tuple:
    """A hashable fingerprint of the array ``s`` (shape, type and contents)."""
    return (s.shape, s.dtype.str, s.tobytes())


def _memo(owner, slot: str, key: tuple, compute):
    """``compute()``, remembered on ``owner`` for the last ``key`` only: composite transforms
    (queue models) ask for one law several times at the same points."""
    memo = owner.__dict__.get(slot)
    if memo is None or memo[0] != key:
        memo = owner.__dict__[slot] = (key, compute())
    return memo[1]


def _weighted(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_j values[..., j] * weights[j]`` (einsum: faster than complex ``@`` with OpenBLAS)."""
    return np.einsum("...j,j->...", values, weights)


def _through(hook, x: np.ndarray, inside: np.ndarray, outside, low: float,
             high: float) -> np.ndarray:
    """``hook`` at the entries ``inside`` of ``x``, the values ``outside()`` (an array like
    ``x``) elsewhere, NaN where ``x`` is NaN; clipped to ``[low, high]`` (scipy's
    ``argsreduce``)."""
    if inside.all():
        out = np.asarray(hook(x), dtype=float).reshape(x.shape)
    else:
        out = np.array(outside(), dtype=float)
        if inside.any():
            out[inside] = hook(x[inside])
        out[np.isnan(x)] = math.nan
    out = np.maximum(out, low)  # two ufuncs: faster than np.clip on short arrays
    return out if high == math.inf else np.minimum(out, high)


class Distribution:
    """Base class of queuetheory's distributions of non-negative random variables.

    Public methods validate and shape; subclasses implement the private hooks. Every method
    accepts scalars or numpy arrays and returns a float for a scalar argument, an array of the
    argument's shape otherwise.

    **The contract** (scipy's ``rv_continuous``: ``argsreduce`` and the support masks). A family
    states its support ``[a, b]`` with :meth:`_support` (default ``(0, inf)``) and writes each
    hook as one formula, valid where the public method calls it:

    * ``_cdf(x)``, ``_sf(x)``: only for ``a < x < b`` (also ``x = a`` when ``_atom_low`` is
      True, for a law that may put mass on ``a``: then ``P(X <= a) = P(X = a)``, as for scipy's
      discrete laws). Outside, the public method fills ``P(X <= x) = 0`` below ``a`` and ``1``
      from ``b`` on (``P(X > x)`` likewise), so no hook clamps ``x``.
    * ``_pdf(x)``: only for finite ``x`` in the closed support ``[a, b]`` (the density at an
      end is its one-sided limit, as in scipy); 0 elsewhere.
    * ``_ppf(q)``, ``_isf(q)``: only for ``0 < q < 1``; ``ppf(0) = a`` and ``ppf(1) = b``
      (``isf`` the other way round).

    Each hook receives a float array (no NaN) and returns an array of the same shape. The
    public method clips probabilities to ``[0, 1]``, densities to ``>= 0`` and quantiles to
    ``[a, b]`` (the round-off of a formula), and rejects NaN. A new family needs ``_cdf`` or
    ``_sf`` (and ``_support`` if it is not ``(0, inf)``); ``_pdf``, ``_ppf``, ``_isf``, moments
    and the Laplace-Stieltjes transform have numerical fallbacks. A law with atoms and a
    continuous part names its atoms with ``_point_masses()`` (mixtures, minima and scaled
    copies derive theirs from their parts): the expectation fallback (transforms, products)
    then sums over up to ``_PIECES_MAX`` atoms exactly and integrates only between them, where
    the quantile function has no jump.

    Code that composes laws (mixtures, products, order statistics, the analyses) evaluates
    its parts with ``_cdf_all``, ``_sf_all``, ``_pdf_all``, ``_ppf_all`` and ``_isf_all``: the
    public methods without validation, for arrays of any real ``x`` (levels in ``[0, 1]``),
    the support handled as above, so that a part's hooks too see only their own support.

    Examples
    --------
    >>> import queuetheory as qt
    >>> X = qt.Exponential(rate=2.0)
    >>> X.mean(), X.moment(2), X.var()
    (0.5, 0.5, 0.25)
    >>> round(X.cdf(1.0), 6), round(X.ppf(0.5), 6)
    (0.864665, 0.346574)
    >>> complex(X.lst(1j))
    (0.8-0.4j)

    A minimal family: the density ``2 x / c^2`` on ``[0, c]``, written without a clamp.

    >>> import numpy as np
    >>> from queuetheory.distributions import Distribution
    >>> class Triangle(Distribution):
    ...     def __init__(self, c):
    ...         self.c = c
    ...     def _support(self):
    ...         return 0.0, self.c
    ...     def _cdf(self, x):            # called only for 0 < x < c
    ...         return (x / self.c) ** 2
    ...     def _ppf(self, q):            # called only for 0 < q < 1
    ...         return self.c * np.sqrt(q)
    >>> T = Triangle(2.0)
    >>> T.cdf([-1.0, 1.0, 2.0, 5.0]), T.sf(1.0), T.ppf([0.0, 0.25, 1.0])
    (array([0.  , 0.25, 1.  , 1.  ]), 0.75, array([0., 1., 2.]))
    >>> round(T.mean(), 10), round(T.pdf(1.0), 6), T.pdf(3.0)   # 2 c / 3 = 4/3; 2 x / c^2
    (1.3333333333, 0.5, 0.0)
    """

    #: True for distributions with a probability mass function instead of a density.
    discrete: bool = False

    #: True for a law with a point mass (a discrete law, or a mixture with a discrete part),
    #: which has no density: :meth:`pdf` raises.
    _has_atoms: bool = False

    #: ``(values, probs)`` when ``_nodes`` are exact atoms rather than a quadrature rule.
    _atoms = None

    #: True when ``_lst`` is a cheap closed form (no quadrature).
    _closed_lst: bool = False

    #: True when the CDF is smooth on ``(0, inf)`` (no jump or kink, e.g. at a support bound).
    _smooth: bool = False

    #: True when the law has a density that is constant between 0, its kinks (:meth:`_kinks`)
    #: and its support's finite upper end, so that its CDF is continuous and linear there (a
    #: uniform, a mixture of uniforms).
    _piecewise_linear: bool = False

    #: True when the law may put mass on the lower end ``a`` of its support: ``_cdf`` and
    #: ``_sf`` are then called at ``x = a`` too (``P(X <= a) = P(X = a)``).
    _atom_low: bool = False

    # ----------------------------------------------------------------------------- public
    def mean(self) -> float:
        """Expected value (``inf`` when it does not exist)."""
        return self.moment(1)

    def moment(self, k: int) -> float:
        """Raw moment ``E[X^k]`` for an integer ``k`` in ``[1, 10000]`` (``inf`` if it
        diverges or leaves the floats)."""
        k = _checks.positive_int("k", k)
        if k > _MAX_MOMENT:
            raise ValueError(f"k must be an integer >= 1 and <= {_MAX_MOMENT}, got {k!r}")
        # remembered per law (laws are immutable; a generic moment is a quadrature, and the
        # transforms near load 1 ask for a law's first 27 moments at every analysis)
        memo = self.__dict__.setdefault("_moment_memo", {})
        if k not in memo:
            try:
                value = float(self._moment(k))
            except (OverflowError, ZeroDivisionError):   # a power beyond the floats: logs
                with np.errstate(over="ignore"):
                    value = float(np.exp(self._log_moment(k)))
            memo[k] = value if value >= 0 else math.inf
        return memo[k]

    def _log_moment(self, k: int) -> float:
        """``log E[X^k]`` where the moment itself may leave the floats (a closed form's
        ``rate^k`` had raised ``OverflowError``): ``k log c + log E[(X / c)^k]`` with ``c =
        E[X]``; ``inf`` for a law already in units of its mean (families whose moments grow
        like factorials give theirs in closed form)."""
        c = self.mean()
        unit = self.scaled(1.0 / c) if math.isfinite(c) and c > 0 else self
        # (a law in units of its mean up to rounding: its own copies would recurse forever)
        if unit is self or abs(c - 1.0) <= 1e-9:
            return math.inf
        return k * math.log(c) + unit._log_moment(k)

    def _mean_exact(self) -> Fraction | None:
        """``E[X]`` as the exact rational number the law's float parameters give, where a
        closed form allows (``None`` otherwise): near load 1 the wait is inversely
        proportional to ``1 - lam E[X]``, which the rounding of ``E[X]`` alone moves by
        ``eps / (1 - rho)`` relative."""
        return None

    def _lst_remainder(self, s):
        """``E[exp(-s X) - 1 + s X]`` at complex ``s`` (``Re(s) >= 0``, an array) in closed
        form, to full relative accuracy near ``s = 0``, where ``lst(s) - 1 + s E[X]`` cancels
        (the M/G/1 transforms near load 1 divide by it); ``None`` for a law without one (its
        moment series then serves, where its moments are finite)."""
        return None

    def var(self) -> float:
        """Variance (``inf`` when the second moment diverges)."""
        m2 = self.moment(2)
        if math.isinf(m2):
            return math.inf
        return max(m2 - self.mean() ** 2, 0.0)

    def std(self) -> float:
        """Standard deviation."""
        return math.sqrt(self.var())

    def scv(self) -> float:
        """Squared coefficient of variation ``Var[X] / E[X]^2``."""
        return self.var() / self.mean() ** 2

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(values, probs)`` of a law on finitely many points (sorted values, probabilities
        summing to 1), or ``None`` for a law with a continuous part. The one question the
        analysis asks to take an exact sum over a discrete law.

        Examples
        --------
        >>> import queuetheory as qt
        >>> qt.Discrete([2, 1], [0.5, 0.5]).atoms[0].tolist(), qt.Exponential(1.0).atoms
        ([1.0, 2.0], None)
        >>> qt.Mixture([qt.Deterministic(1.0), qt.Deterministic(3.0)], [0.25, 0.75]).atoms
        (array([1., 3.]), array([0.25, 0.75]))
        """
        return self._atoms

    def _point_masses(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(values, probs)`` of every atom, sorted, for a law that may also have a
        continuous part (empty arrays for a law without atoms); ``None`` when a law with atoms
        does not know them. :meth:`_expect` sums over them and integrates the continuous part
        between the levels where the quantile function jumps."""
        if not self._has_atoms:
            return np.empty(0), np.empty(0)
        return self.atoms

    def cdf(self, x):
        """Cumulative distribution function ``P(X <= x)``."""
        return self._evaluate(x, self._cdf_all)

    def sf(self, x):
        """Survival function ``P(X > x)``."""
        return self._evaluate(x, self._sf_all)

    def pdf(self, x):
        """Probability density function (continuous distributions only: ``ValueError`` for a
        law with atoms, discrete or mixed, as :mod:`scipy.stats` has no density for them)."""
        if self.discrete:
            raise ValueError(f"{type(self).__name__} is discrete: use pmf, not pdf")
        if self._has_atoms:
            raise ValueError(f"{type(self).__name__} has atoms (a discrete part) and no "
                             f"density: use cdf, sf or atoms, not pdf")
        return self._evaluate(x, self._pdf_all)

    def ppf(self, q):
        """Quantile function: the smallest ``x`` with ``P(X <= x) >= q``, for q in [0, 1]
        (``ppf(0)`` and ``ppf(1)`` are the ends of the support)."""
        arr = _checks.real_array("q", q)
        if not np.all((arr >= 0) & (arr <= 1)):
            raise ValueError(f"q must lie in [0, 1], got {q!r}")
        out = self._ppf_all(np.atleast_1d(arr)).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def lst(self, s):
        """Laplace-Stieltjes transform ``E[exp(-s X)]``.

        ``s`` may be real or complex (``Re(s) >= 0``; ``ValueError`` for ``Re(s) < 0`` or NaN),
        a numpy array, or an mpmath number (not checked: contour methods of mpmath's Laplace
        inversion evaluate composite transforms at ``Re(s) < 0``); with
        an mpmath argument the transform is evaluated at the current mpmath precision (closed
        forms for every named family; a double-precision value otherwise).
        """
        if _is_mp(s):
            return self._lst_mp(s)
        try:
            arr = np.asarray(s)
        except (TypeError, ValueError):
            arr = np.asarray(None)
        if not np.issubdtype(arr.dtype, np.number) or arr.dtype.kind == "b":
            raise ValueError(f"s must be a number or an array of numbers, got {s!r}")
        arr = arr.astype(complex if np.iscomplexobj(arr) else float)
        if np.any(np.isnan(arr)) or np.any(arr.real < 0):
            raise ValueError(f"s must have Re(s) >= 0 and not be NaN (the transform of a "
                             f"non-negative variable may diverge for Re(s) < 0), got {s!r}")
        out = self._lst(arr)
        if np.isrealobj(arr):
            out = np.real(out)
        return out[()] if np.ndim(out) == 0 else out

    def sample(self, size=None, rng=None):
        """Draw random variates using ``rng`` (a seed, a ``numpy.random.Generator`` or None)."""
        size = _sample_size(size)
        try:
            rng = np.random.default_rng(rng)
        except (TypeError, ValueError):
            raise ValueError(f"rng must be a seed, a numpy.random.Generator or None, got "
                             f"{rng!r}") from None
        return self._sample(size, rng)

    def minimum(self, i: int) -> Distribution:
        """Law of the minimum of ``i`` independent copies (closed form where one exists)."""
        i = _checks.positive_int("i", i)
        return self if i == 1 else self._minimum(i)

    def scaled(self, c: float) -> Distribution:
        """Law of ``c * X`` for a constant ``c > 0``."""
        c = _checks.positive("c", c)
        return self if c == 1 else self._scaled(c)

    def __mul__(self, other):
        if isinstance(other, int | float) and not isinstance(other, bool):
            return self.scaled(other)
        return NotImplemented

    __rmul__ = __mul__

    # ---------------------------------------------------------------- validation, shaping
    def _evaluate(self, x, method):
        arr = _checks.real_array("x", x)
        if np.any(np.isnan(arr)):
            raise ValueError(f"x must not contain NaN, got {x!r}")
        out = method(np.atleast_1d(arr)).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    # ------------------------------------------------------- the support, handled once
    def _support(self) -> tuple[float, float]:
        """``(a, b)``: the smallest interval ``[a, b]`` holding the variable."""
        return 0.0, math.inf

    def _kinks(self) -> tuple[float, ...]:
        """Positive finite points where the CDF of the continuous part is not smooth (a jump
        or kink of the density: the ends of a uniform's or a Pareto's support), sorted; empty
        for a smooth law and for a law on finitely many points. Laws built from others (a
        mixture, a scaled law, a minimum) take their parts' kinks, which may lie inside the
        support: ``Mixture([Uniform(1, 2), Uniform(3, 4)], ...)`` has kinks at 1, 2, 3, 4."""
        if self._smooth or self.atoms is not None:
            return ()
        return tuple(sorted({float(c) for c in self._support() if 0 < c < math.inf}))

    def _phases(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The continuous part as a mixture of Erlang laws, ``(p, rate, k)``: ``P(X > x) =
        P(atoms > x) + sum_c p_c e^(-rate_c x) sum_(m < k_c) (rate_c x)^m / m!`` (``p`` sums
        to the continuous part's mass; empty arrays for a law on finitely many points), or
        ``None`` where it is not one (the phase-type laws: ``Exponential``, ``Erlang``,
        ``HyperExponential``, and mixtures of them and of atoms).

        Examples
        --------
        >>> import queuetheory as qt
        >>> p, rate, k = qt.Mixture([qt.Erlang(3, 2.0), qt.Deterministic(1.0)],
        ...                         [0.25, 0.75])._phases()
        >>> p.tolist(), rate.tolist(), k.tolist()
        ([0.25], [2.0], [3])
        >>> qt.Uniform(0.0, 1.0)._phases() is None
        True
        """
        return None

    def _inside(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Where ``_cdf`` and ``_sf`` are called, ``a < x < b`` (``a <= x`` with an atom at
        ``a``), and ``b``."""
        a, b = self._support()
        return ((x >= a) if self._atom_low else (x > a)) & (x < b), b

    def _cdf_all(self, x) -> np.ndarray:
        """``P(X <= x)`` at an array of any real ``x`` (not validated): 0 below the support, 1
        from its upper end on, ``_cdf`` inside."""
        x = np.asarray(x, dtype=float)
        inside, b = self._inside(x)
        return _through(self._cdf, x, inside, lambda: x >= b, 0.0, 1.0)

    def _sf_all(self, x) -> np.ndarray:
        """``P(X > x)`` at an array of any real ``x``: 1 below the support, 0 from its upper end
        on, ``_sf`` inside."""
        x = np.asarray(x, dtype=float)
        inside, b = self._inside(x)
        return _through(self._sf, x, inside, lambda: x < b, 0.0, 1.0)

    def _pdf_all(self, x) -> np.ndarray:
        """Density at an array of any real ``x``: ``_pdf`` on the closed support, 0 elsewhere."""
        x = np.asarray(x, dtype=float)
        a, b = self._support()
        inside = (x >= a) & (x <= b) & (x < math.inf)
        return _through(self._pdf, x, inside, lambda: np.zeros(x.shape), 0.0, math.inf)

    def _ppf_all(self, q) -> np.ndarray:
        """Quantiles at an array of levels in ``[0, 1]`` (NaN outside): ``ppf(0) = a``,
        ``ppf(1) = b``, ``_ppf`` in between."""
        q = np.asarray(q, dtype=float)
        a, b = self._support()
        return _through(self._ppf, q, (q > 0) & (q < 1),
                        lambda: np.where(q >= 1, b, np.where(q <= 0, a, math.nan)), a, b)

    def _isf_all(self, p) -> np.ndarray:
        """Quantiles ``isf(p) = ppf(1 - p)`` at an array of tail levels in ``[0, 1]`` (NaN
        outside): ``isf(0) = b``, ``isf(1) = a``, ``_isf`` in between."""
        p = np.asarray(p, dtype=float)
        a, b = self._support()
        return _through(self._isf, p, (p > 0) & (p < 1),
                        lambda: np.where(p >= 1, a, np.where(p <= 0, b, math.nan)), a, b)

    def _stop_loss_all(self, y) -> np.ndarray:
        """``E[(X - y)^+] = int_y^inf P(X > u) du`` at an array of any real ``y`` (not
        validated): ``E[X] - y`` up to the lower end ``a`` of the support, 0 from its upper
        end on, ``_stop_loss`` inside. Its second differences are the integrals of the law
        against hat functions, exactly: ``int hat dF = (pi(c - h) - 2 pi(c) + pi(c + h)) / h``
        for the hat of half-width ``h`` centred at ``c`` (used by the mean-field analysis)."""
        y = np.asarray(y, dtype=float)
        a, b = self._support()
        mean = self.mean()
        return _through(self._stop_loss, y, (y > a) & (y < b),
                        lambda: np.where(y <= a, mean - y, 0.0), 0.0, math.inf)

    # ------------------------------------------------------------------ numerical fallbacks
    def _stop_loss(self, y):
        """``int_y^b P(X > u) du`` for ``a < y < b``: from the largest ``y`` to the end of the
        support by QUADPACK, then down between consecutive ``y`` by 8-point Gauss-Legendre
        rules on parts growing geometrically by at most 25% (families override with closed
        forms)."""
        y = np.asarray(y, dtype=float)
        points, where = np.unique(y, return_inverse=True)
        b, top = self._support()[1], float(points[-1])
        tail = 0.0
        if self._sf_all(np.array([top]))[0] > 0:
            with warnings.catch_warnings():     # a tail of rounding size: its accuracy is moot
                warnings.simplefilter("ignore", integrate.IntegrationWarning)
                tail, _ = integrate.quad(lambda u: float(self._sf_all(np.array([u]))[0]), top,
                                         b, limit=200, epsabs=0.0, epsrel=1e-13)
        lo, hi = points[:-1], points[1:]
        parts = np.clip(np.ceil(np.log(hi / lo) / math.log(1.25)), 1, 256).astype(np.int64)
        interval = np.repeat(np.arange(lo.size), parts)
        start = np.cumsum(parts) - parts
        j = np.arange(interval.size) - start[interval]
        ratio = hi[interval] / lo[interval]
        left = lo[interval] * ratio ** (j / parts[interval])
        right = lo[interval] * ratio ** ((j + 1) / parts[interval])
        nodes, weights = quadrature.gauss_legendre(8)
        u = 0.5 * (left + right)[:, None] + 0.5 * (right - left)[:, None] * nodes
        sub = 0.5 * (right - left) * (self._sf_all(u) @ weights)
        pieces = np.add.reduceat(sub, start) if sub.size else sub
        values = tail + np.concatenate([np.cumsum(pieces[::-1])[::-1], [0.0]])
        return values[where].reshape(y.shape)

    def _cdf(self, x):
        return 1.0 - self._sf(x)

    def _sf(self, x):
        return 1.0 - self._cdf(x)

    def _pdf(self, x):
        # central difference, one-sided at the lower end of the support
        h = 1e-6 * np.maximum(np.abs(x), 1.0)
        lo = np.maximum(x - h, self._support()[0])
        return (self._cdf_all(x + h) - self._cdf_all(lo)) / (x + h - lo)

    def _isf(self, p):
        """Search on the survival function (keeps its relative accuracy for tiny ``p``; false
        position on ``log P(X > x)``, linear in an exponential tail); the exact atom for a law
        with :attr:`atoms`."""
        p = np.asarray(p, dtype=float)
        law = self._atom_law()
        if law is not None:
            return law._isf(p)
        flat = p.ravel()

        def probe(x, i=slice(None)):
            sf = self._sf_all(x)
            with np.errstate(divide="ignore"):
                return sf <= flat[i], np.log(flat[i]) - np.log(sf)

        return self._search(probe, flat.size).reshape(p.shape)

    def _ppf(self, q):
        """Search on the CDF (vectorised) up to the level 1/2, :meth:`_isf` of ``1 - q``
        (exact) beyond: the survival function keeps its relative accuracy in the tail, where
        the CDF is flat to rounding over a range of ``x`` (levels 1 - 1e-10: about 1e-6 of
        ``x``); families override with closed forms. For a law with :attr:`atoms`, the atom
        itself (a search would stop a few ulps above it)."""
        q = np.asarray(q, dtype=float)
        law = self._atom_law()
        if law is not None:
            return law._ppf(q)
        flat = q.ravel()
        upper = flat > 0.5
        if upper.any():
            out = np.empty(flat.size)
            out[upper] = self._isf(1.0 - flat[upper])
            if not upper.all():
                out[~upper] = self._ppf(flat[~upper])
            return out.reshape(q.shape)

        def probe(x, i=slice(None)):
            cdf = self._cdf_all(x)
            return cdf >= flat[i], cdf - flat[i]

        return self._search(probe, flat.size).reshape(q.shape)

    def _atom_law(self) -> Discrete | None:
        """The :class:`Discrete` law of :attr:`atoms` (canonical order, probabilities summing to
        1 by ``fsum``), or None for a law with a continuous part; built once per law."""
        law = self.__dict__.get("_atom_law_cache", False)
        if law is False:
            atoms = self.atoms
            law = self.__dict__["_atom_law_cache"] = None if atoms is None else Discrete(*atoms)
        return law

    def _search(self, probe, size: int) -> np.ndarray:
        """Smallest ``x > 0`` (to 4e-16 relative) where a monotone test holds, elementwise for
        ``size`` entries: ``probe(x, i)`` returns, at the points ``x`` of the entries ``i`` (all
        by default), the test and a value increasing in ``x`` whose sign follows it (its root is
        the answer).

        The bracket grows or shrinks by factors of 2 from ``_scale_hint()``, so the search does
        not depend on the unit of time (1e-300 to 1e300). Inside it, false position with the
        Anderson-Bjorck correction (superlinear, one evaluation per step, no density needed),
        safeguarded: the points are kept 2e-16 relative inside the bracket (so that a converged
        end is closed from the other side) and a bracket that does not halve in two steps is
        bisected; once two values are exactly 0 (a plateau of the rounded function), the
        points step away from the end nearer the root by growing amounts until they cross the
        plateau, then bisect it. About 10 steps
        where bisection took 55.
        """
        reached = lambda x, i=slice(None): probe(x, i)[0]   # noqa: E731
        start = max(self._scale_hint(), 1e-300)
        hi = np.full(size, start)
        lo = np.full(size, start)
        shrink = reached(hi)
        j = np.flatnonzero(~shrink)     # only the entries still moving are evaluated
        for _ in range(2100):  # doubling from 1e-300 reaches inf: reached(inf) holds
            if j.size == 0:
                break
            lo[j] = hi[j]
            hi[j] *= 2.0
            j = j[~reached(hi[j], j)]
        j = np.flatnonzero(shrink)
        lo[j] = 0.5 * hi[j]
        for _ in range(2100):  # halving reaches 0
            if j.size == 0:
                break
            j = j[reached(lo[j], j)]
            hi[j] = lo[j]
            lo[j] *= 0.5
        i = np.flatnonzero((hi - lo > 4e-16 * hi) & np.isfinite(hi))
        g_lo, g_hi = np.minimum(probe(lo[i], i)[1], -0.0), np.maximum(probe(hi[i], i)[1], 0.0)
        raw = np.stack([-g_lo, g_hi])              # |value| at the ends, as evaluated
        width, last = hi[i] - lo[i], np.zeros(i.size)
        quiet, nudges = np.zeros(i.size), np.zeros(i.size)
        for step in range(400):
            if i.size == 0:
                break
            a, b = lo[i], hi[i]
            with np.errstate(all="ignore"):
                x = (a * g_hi - b * g_lo) / (g_hi - g_lo)
            if step % 2 == 1:   # the bracket must halve every two steps
                slow = b - a > 0.5 * width
                x[slow], width = np.nan, np.where(slow, width, b - a)
            # two values exactly 0 (a plateau of the rounded function, ulps wide): steps
            # away from the end nearer the root, growing twofold, until the bracket closes
            nudge = (quiet > 1) & (nudges >= 0)
            delta = 2e-16 * b * 2.0 ** nudges
            down = raw[1] <= raw[0]
            x = np.where(nudge, np.where(down, b - delta, a + delta), x)
            nudges += nudge
            x[nudges < 0] = np.nan   # the plateau crossed: bisection inside it
            # a point on a converged end moves 2e-16 into the bracket, to close it
            x = np.where(np.isnan(x), 0.5 * (a + b), np.clip(x, a + 2e-16 * b, b - 2e-16 * b))
            x = np.where((x > a) & (x < b), x, 0.5 * (a + b))
            ok, g = probe(x, i)
            g = np.where(ok, np.maximum(g, 0.0), np.minimum(g, -0.0))
            quiet += g == 0
            nudges[nudge & (ok != down)] = -1
            # Anderson-Bjorck: the end kept twice in a row has its value scaled down
            side = np.where(ok, 1.0, -1.0)
            with np.errstate(all="ignore"):
                scale = np.where(ok, 1.0 - g / g_hi, 1.0 - g / g_lo)
            scale = np.where(np.isfinite(scale) & (scale > 0), scale, 0.5)
            again = side == last
            g_lo = np.where(ok, np.where(again, g_lo * scale, g_lo), g)
            g_hi = np.where(ok, g, np.where(again, g_hi * scale, g_hi))
            raw[np.where(ok, 1, 0), np.arange(i.size)] = np.abs(g)
            lo[i], hi[i] = np.where(ok, a, x), np.where(ok, x, b)
            last = side
            keep = hi[i] - lo[i] > 4e-16 * hi[i]
            i, g_lo, g_hi, raw = i[keep], g_lo[keep], g_hi[keep], raw[:, keep]
            width, last, quiet, nudges = width[keep], last[keep], quiet[keep], nudges[keep]
        # an atom inside a final bracket (lo, hi] where the test holds is the answer exactly
        # (the search stops within 4e-16 above it: two levels in its jump, one searched on the
        # CDF and one on the survival function, read a few ulps apart, out of order)
        masses = self._point_masses() if self._has_atoms else None
        if masses is not None and masses[0].size:
            values = masses[0]
            k = np.searchsorted(values, hi, side="right") - 1
            inside = np.flatnonzero((k >= 0) & (values[np.maximum(k, 0)] > lo))
            atom = values[k[inside]]
            hold = reached(atom, inside)
            hi[inside[hold]] = atom[hold]
        return hi

    def _scale_hint(self) -> float:
        """A typical magnitude of the variable, where quantile searches start (families with a
        cheap scale override it; the searches do not depend on it)."""
        return 1.0

    @cached_property
    def _nodes(self):
        """Quantile nodes and weights of the level-0 tanh-sinh rule (cached per distribution)."""
        return self._level_quantiles(0), _W

    def _level_quantiles(self, level: int, t_max: float = _TS_TMAX) -> np.ndarray:
        """Quantiles at the nodes added at ``level`` of the nested rule ending at ``t_max``
        (cached per level and rule)."""
        cache = self.__dict__.setdefault("_quantile_cache", {})
        if (level, t_max) not in cache:
            cache[level, t_max] = self._quantiles_at(*_tanh_sinh_level(level, t_max)[:2])
        return cache[level, t_max]

    def _quantiles_at(self, u: np.ndarray, one_minus_u: np.ndarray) -> np.ndarray:
        """Quantiles at the levels ``u`` (``ppf`` up to 1/2, ``isf`` of the complements
        beyond, which keeps tail levels accurate); the overflow stand-in for ``inf``."""
        half = u <= 0.5
        with np.errstate(divide="ignore"):
            x = np.where(half, self._ppf_all(np.where(half, u, 0.5)),
                         self._isf_all(np.where(half, 0.5, one_minus_u)))
        return np.nan_to_num(np.asarray(x, dtype=float), posinf=np.finfo(float).max)

    @cached_property
    def _continuous_pieces(self):
        """The atoms and the probability levels between which the quantile function is
        continuous: ``(values, probs, top, complement, length)``, piece ``k`` spanning the
        levels ``1 - top[k]`` to ``1 - complement[k]`` (pieces of zero length left out);
        ``None`` when the law has no atoms, does not know them or has more than
        ``_PIECES_MAX`` (then one piece, ``[0, 1]``: the rule's nodes grow with the pieces)."""
        masses = self._point_masses()
        if masses is None or not 0 < masses[0].size <= _PIECES_MAX:
            return None
        values, probs = masses
        above = self._sf_all(values)                          # P(X > v)
        # piece k lies between the atoms v_k and v_(k+1): levels F(v_k) to F(v_(k+1)-), as
        # complements P(X > v_k) and P(X >= v_(k+1)) (their difference keeps a tail piece's
        # length accurate in relative terms)
        top = np.concatenate([[1.0], above])
        complement = np.concatenate([above + probs, [0.0]])
        length = top - complement
        keep = length > 0
        return values, probs, top[keep], complement[keep], length[keep]

    def _piece_quantiles(self, level: int,
                         t_max: float = _TS_TMAX) -> tuple[np.ndarray, np.ndarray]:
        """Quantiles at the level-``level`` nodes of the rule ending at ``t_max`` mapped onto
        each continuous piece of a law with atoms, and their weights (cached per level and
        rule)."""
        cache = self.__dict__.setdefault("_piece_cache", {})
        if (level, t_max) not in cache:
            _, _, top, complement, length = self._continuous_pieces
            u, one_minus_u, weights = _tanh_sinh_level(level, t_max)[:3]
            x = self._quantiles_at((1.0 - top)[:, None] + length[:, None] * u,
                                   complement[:, None] + length[:, None] * one_minus_u)
            cache[level, t_max] = x.ravel(), (length[:, None] * weights).ravel()
        return cache[level, t_max]

    def _expect(self, integrand, s, decay=None, rtol=None, t_max=_TS_TMAX):
        """``E[integrand(s, X)]`` for an array ``s``, by the nested tanh-sinh rule in probability
        space, ``int_0^1 integrand(s, ppf(u)) du``.

        Each value of ``s`` is refined (halving the step, reusing the earlier nodes) until two
        successive levels agree to ``_TS_TOL``, at most to level ``_TS_MAX_LEVEL``. Oscillating
        integrands such as ``exp(-s x)`` with ``|Im s| >> Re s``, met on the contours of Laplace
        inversion, need the finer levels; real ``s`` stop at level 1 or 2. Where the cap is
        reached (a quantile function with a jump or kink inside a piece) the finest estimate
        is returned. A law whose atoms are known (:meth:`_point_masses`) is the sum over its
        atoms plus the rule on each piece between the levels where the quantile function
        jumps, so the rule never meets a jump. ``decay`` (an array like
        ``s``, optional) bounds the integrand by ``exp(-decay x)``: nodes where that is below
        1e-18 are skipped. With ``rtol`` the tolerance is ``rtol`` times the estimate's size
        rather than ``_TS_TOL``, for integrands of any size; ``t_max`` chooses the rule
        (``quadrature.TS_WIDE``: levels down to about 1e-83 from either end).
        """
        s = np.asarray(s)
        flat = s.ravel()
        cutoff = np.full(flat.size, np.inf)
        if decay is not None:
            with np.errstate(divide="ignore"):
                cutoff = 41.5 / np.broadcast_to(decay, s.shape).ravel()
        pieces = self._continuous_pieces
        atoms = 0.0
        if pieces is not None:
            atoms = _over_atoms(integrand, flat, pieces[0], pieces[1])
            if pieces[2].size == 0:
                return atoms.reshape(s.shape)
        total = np.zeros(flat.size, dtype=complex)
        estimate = np.zeros(flat.size, dtype=complex)
        change = np.full(flat.size, np.nan)  # no estimate of the error before level 1
        active = np.arange(flat.size)
        for level in range(_TS_MAX_LEVEL + 1):
            if pieces is None:
                x = self._level_quantiles(level, t_max)
                weights = _tanh_sinh_level(level, t_max)[2]
            else:
                x, weights = self._piece_quantiles(level, t_max)
            norm = _tanh_sinh_level(level, t_max)[3]
            new = _sum_by_blocks(integrand, flat[active], x, weights, cutoff[active])
            total[active] = (0.5 if level else 1.0) * total[active] + new
            previous, before = estimate[active], change[active]
            estimate[active] = total[active] / norm
            if level == 0:
                continue
            now = np.abs(estimate[active] - previous)
            change[active] = now
            # the error of a converging double-exponential rule roughly squares per level, so
            # the error left after this level is about now**2 / before (Bailey's estimate)
            tol = _TS_TOL if rtol is None else rtol * np.abs(estimate[active])
            done = (now <= tol) | ((now < before) & (now * now <= tol * before))
            active = active[~done]
            if active.size == 0:
                break
        return (estimate + atoms).reshape(s.shape)

    def _lst(self, s):
        def compute():
            out = self._expect(_exp_neg_product, s, decay=s.real)
            return out if np.iscomplexobj(s) else out.real

        return _memo(self, "_lst_memo", _key(s), compute).copy()

    def _lst_mp(self, s):
        return mpmath.mpmathify(complex(self._lst(np.asarray(complex(s)))))

    def _remainder_by_quadrature(self, s: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
        """``E[exp(-s X) - 1 + s X]`` at complex ``s`` (an array) for a law with a finite
        mean and no closed form (:meth:`_lst_remainder`) or trusted moment series (a heavy
        tail): ``lst(s) - 1 + s E[X]`` (``b``: ``lst(s)``, where the caller has it) where that
        loses at most ``_DIRECT_LOSS`` relative (``eps (2 + |s E[X]|)`` of rounding), else by
        the wide nested tanh-sinh rule of :meth:`_expect` (a power tail's share lies beyond
        the standard rule's last level at small ``s``), on the integrand's power series, to
        ``_TS_RTOL`` relative.

        Examples
        --------
        >>> import numpy as np
        >>> from scipy import stats
        >>> from queuetheory import from_scipy
        >>> G = from_scipy(stats.gamma(2.0))   # 1 / (1 + s)^2 - 1 + 2 s = s^2 (3 + 2 s) / (1 + s)^2
        >>> s = np.array([1e-7 + 0j])
        >>> exact = s**2 * (3 + 2 * s) / (1 + s) ** 2
        >>> bool(np.isclose(G._remainder_by_quadrature(s)[0], exact[0], rtol=1e-13, atol=0))
        True
        """
        mean = self.mean()
        s = np.asarray(s, dtype=complex)
        flat = s.ravel()

        def compute():
            w = flat * mean
            lst = self.lst(flat) if b is None else np.broadcast_to(b, s.shape).ravel()
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = np.asarray(lst - 1.0 + w, dtype=complex)
                loss = np.finfo(float).eps * (2.0 + np.abs(w)) / np.abs(out)
            near = ~(loss <= _DIRECT_LOSS)
            if np.any(near):
                out[near] = self._expect(_phi_product, flat[near], rtol=_TS_RTOL,
                                         t_max=quadrature.TS_WIDE)
            return out

        # remembered: a law and the fastest of one replica (the same law) ask at one s
        return _memo(self, "_remainder_memo", _key(flat), compute).copy().reshape(s.shape)

    @property
    def _mp_lst(self) -> bool:
        """Whether ``lst`` at an mpmath argument is evaluated at the working precision (a
        family's closed form), rather than a double-precision value converted (the default
        ``_lst_mp``): only then can a high-precision inversion hold more than 16 digits."""
        return type(self)._lst_mp is not Distribution._lst_mp

    def _moment(self, k):
        # E[X^k] = c^k int_0^inf k y^(k-1) P(X > c y) dy, with c the median, so that the
        # quadrature sees the same integrand in every unit of time; split at the median
        c = float(self._ppf(np.array([0.5]))[0])
        if not (math.isfinite(c) and c > 0):
            c = float(self._isf(np.array([0.5]))[0])
        if not (math.isfinite(c) and c > 0):
            return 0.0 if c == 0 else math.inf
        # and at the atoms, where the survival function jumps (the quadrature across a jump
        # had missed it: the fastest of 15 copies of 0.5 Det(1) + 0.5 Exp(0.5), 3e-4 off)
        masses = self._point_masses() if self._has_atoms else None
        atoms = masses[0][(masses[0] > 0) & np.isfinite(masses[0])] / c if masses else ()
        cuts = np.unique(np.concatenate([[1.0], atoms]))
        value = quadrature.moment_from_sf(lambda y: self._sf_all(c * y), k, cuts, epsrel=1e-13)
        try:
            return value * c**k
        except OverflowError:
            return math.inf

    def _sample(self, size, rng):
        return self.ppf(rng.random(size))

    def _minimum(self, i):
        return _Minimum(self, i)

    def _scaled(self, c):
        return _Scaled(self, c)


def _sample_size(size):
    """``size`` of :meth:`Distribution.sample` checked: None, an integer >= 0 or a tuple of them."""
    if size is None:
        return None
    if isinstance(size, tuple | list) or (isinstance(size, np.ndarray) and size.ndim == 1):
        return tuple(_checks.positive_int("size", n, minimum=0) for n in size)
    return _checks.positive_int("size", size, minimum=0)


def _repr(obj, **params) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f"{type(obj).__name__}({inner})"


class Exponential(Distribution):
    """Exponential distribution with the given ``rate`` (mean ``1/rate``).

    Parameters
    ----------
    rate : float
        Rate, > 0.

    Examples
    --------
    >>> from queuetheory import Exponential
    >>> Exponential(4.0).mean()
    0.25
    >>> Exponential(1.0).minimum(3)
    Exponential(rate=3.0)
    """

    _closed_lst = True
    _smooth = True

    def __init__(self, rate: float):
        self.rate = _checks.positive("rate", rate)

    def __repr__(self):
        return _repr(self, rate=self.rate)

    def _cdf(self, x):
        return -np.expm1(-self.rate * x)

    def _sf(self, x):
        return np.exp(-self.rate * x)

    def _pdf(self, x):
        return self.rate * np.exp(-self.rate * x)

    def _ppf(self, q):
        return -np.log1p(-q) / self.rate

    def _isf(self, p):
        return -np.log(p) / self.rate

    def _stop_loss(self, y):
        return np.exp(-self.rate * y) / self.rate

    def _moment(self, k):
        return math.factorial(k) / self.rate**k

    def _log_moment(self, k):
        return math.lgamma(k + 1) - k * math.log(self.rate)

    def _mean_exact(self):
        return 1 / Fraction(self.rate)

    def _lst(self, s):
        return self.rate / (self.rate + s)

    _lst_mp = _lst

    def _sample(self, size, rng):
        return rng.exponential(1.0 / self.rate, size)

    def _minimum(self, i):
        return Exponential(i * self.rate)

    def _scaled(self, c):
        return Exponential(self.rate / c)

    def _phases(self):
        return np.ones(1), np.array([self.rate]), np.ones(1, dtype=np.intp)


class Discrete(Distribution):
    """Distribution on finitely many non-negative values.

    Parameters
    ----------
    values : sequence of float
        Support points, >= 0 (duplicates are merged).
    probs : sequence of float
        Their probabilities, >= 0 and summing to 1.

    Examples
    --------
    >>> from queuetheory import Discrete
    >>> S = Discrete([1, 2, 4], [0.5, 0.25, 0.25])
    >>> S.mean(), S.minimum(2).mean()
    (2.0, 1.375)
    """

    discrete = True
    _has_atoms = True
    _closed_lst = True
    _atom_low = True

    def __init__(self, values: Sequence[float], probs: Sequence[float]):
        v = _checks.real_array("values", values).ravel()
        p = _checks.probabilities("probs", probs)
        if v.size != p.size:
            raise ValueError(f"values and probs must have the same length, got {v.size} and "
                             f"{p.size}")
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"values must be finite and >= 0, got {values!r}")
        # canonical order (by value, then probability) so that merged duplicates and the
        # normalisation give the same bits whatever order the atoms were listed in
        order = np.lexsort((p, v))
        v, p = v[order], p[order]
        uniq, inverse = np.unique(v, return_inverse=True)
        merged = np.bincount(inverse, weights=p, minlength=uniq.size)
        keep = merged > 0
        self.values = uniq[keep]
        self.probs = merged[keep] / math.fsum(merged[keep])
        self._cum = np.cumsum(self.probs)
        self._cum[-1] = 1.0
        # P(X > values[j]) as sums of the masses above (relative accuracy in the far tail)
        self._tail = np.append(np.cumsum(self.probs[:0:-1])[::-1], 0.0)

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, probs)``: every discrete law is its own atoms."""
        return self.values, self.probs

    @classmethod
    def from_samples(cls, data) -> Discrete:
        """Empirical distribution of measured samples (a sequence or the path of a CSV file).

        A CSV file (UTF-8, with or without a byte-order mark) may hold one number per line or
        several per line separated by commas; a first line that is not numeric is taken as a
        header.

        Parameters
        ----------
        data : sequence of float, str or os.PathLike
            The samples (finite, >= 0), or the path of a CSV file holding them.

        Returns
        -------
        Discrete
            Each distinct value with its relative frequency.

        Raises
        ------
        ValueError
            If the file cannot be read (missing, a directory, not permitted, not UTF-8; the
            message names the path, the ``OSError`` is chained as the cause), holds no numeric
            samples or a non-numeric line after the first, or if a sample is negative or not
            finite.

        Examples
        --------
        >>> from queuetheory import Discrete
        >>> Discrete.from_samples([1, 1, 2, 4]).probs.tolist()
        [0.5, 0.25, 0.25]
        """
        if isinstance(data, str | os.PathLike):
            data = _read_csv_numbers(data)
        try:
            arr = _checks.real_array("data", data).ravel()
        except ValueError:
            raise ValueError("data must be numeric") from None
        if arr.size == 0:
            raise ValueError("data must hold at least one sample, got none")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("data must be finite numbers >= 0")
        values, counts = np.unique(arr, return_counts=True)
        return cls(values, counts / counts.sum())

    def __repr__(self):
        return _repr(self, values=self.values.tolist(), probs=self.probs.tolist())

    def pmf(self, x):
        """Probability mass ``P(X = x)``."""
        return self._evaluate(x, self._pmf_all)

    def _pmf_all(self, x):
        x = np.asarray(x, dtype=float)
        inside = (x >= self.values[0]) & (x <= self.values[-1])
        return _through(self._pmf, x, inside, lambda: np.zeros(x.shape), 0.0, 1.0)

    def _support(self):
        return float(self.values[0]), float(self.values[-1])

    def _pmf(self, x):
        idx = np.searchsorted(self.values, x)
        return np.where(self.values[idx] == x, self.probs[idx], 0.0)

    def _cdf(self, x):
        return self._cum[np.searchsorted(self.values, x, side="right") - 1]

    def _sf(self, x):
        return self._tail[np.searchsorted(self.values, x, side="right") - 1]

    def _stop_loss(self, y):
        return np.maximum(self.values - y[..., None], 0.0) @ self.probs

    def _ppf(self, q):
        return self.values[np.searchsorted(self._cum, q - 1e-15, side="left")]

    def _isf(self, p):
        # the first atom whose tail (as in _sf) is <= p, to the round-off of the sums (as _ppf)
        return self.values[np.searchsorted(-self._tail, -p * (1.0 + 1e-15), side="left")]

    def _atom_law(self) -> Discrete:
        return self

    def _moment(self, k):
        return math.fsum(self.probs * self.values**k)

    def _mean_exact(self):
        return sum((p * Fraction(v) for p, v in zip(_exact_probs_of(self, self.probs),
                                                     self.values)),
                   Fraction(0))

    def _lst(self, s):
        # remembered for the last s: a queue's transform and the kinks an inversion takes out
        # of it (mg1._AtomKinks) sum the same exponentials
        return _memo(self, "_lst_memo", _key(s), lambda: _over_atoms(
            lambda z, v: np.exp(-z * v), s, self.values, self.probs)).copy()

    def _lst_mp(self, s):
        return mpmath.fsum(p * mpmath.exp(-s * v)
                           for v, p in zip(self.values, _mp_probs(self, self.probs)))

    def _sample(self, size, rng):
        # The variates of rng.choice(values, size, p=probs): values[#{j: cdf_j <= U}] with
        # U = rng.random(size) and cdf = cumsum(probs) / its last term (numpy's
        # Generator.choice), the count read from a table over 2^m equal cells of [0, 1) (one
        # comparison per variate) instead of a binary search (4x faster for simulations).
        if size is None:
            return rng.choice(self.values, p=self.probs)
        table = self.__dict__.get("_sample_table")
        if table is None:
            table = self.__dict__["_sample_table"] = _count_table(self.probs)
        cdf, cells, low, threshold, crowded = table
        u = rng.random(size)
        cell = (u * cells).astype(np.intp)  # exact: cells is a power of 2
        idx = low[cell] + (u >= threshold[cell])
        if crowded is not None:
            hard = crowded[cell]
            idx[hard] = cdf.searchsorted(u[hard], side="right")
        return self.values[idx]

    def _minimum(self, i):
        above = np.concatenate([[1.0], np.maximum(1.0 - self._cum[:-1], 0.0)])
        strictly_above = np.maximum(1.0 - self._cum, 0.0)
        return Discrete(self.values, above**i - strictly_above**i)

    def _scaled(self, c):
        return Discrete(c * self.values, self.probs)

    def _phases(self):
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.intp)


def _count_table(probs: np.ndarray):
    """For ``Discrete._sample``: ``#{j: cdf_j <= u}`` for ``u`` in cell ``[g, g + 1) / cells``
    is ``low[g] + (u >= threshold[g])`` unless the cell holds two or more ``cdf_j``
    (``crowded[g]``, None if no cell does)."""
    cdf = probs.cumsum()
    cdf /= cdf[-1]
    cells = 1 << int(min(max(12, math.ceil(math.log2(4 * cdf.size))), 20))
    grid = np.arange(cells + 1) / cells
    low = cdf.searchsorted(grid[:-1], side="right")
    high = cdf.searchsorted(grid[1:], side="left")
    threshold = np.where(high > low, cdf[np.minimum(low, cdf.size - 1)], 2.0)
    crowded = high > low + 1
    return cdf, cells, low, threshold, (crowded if crowded.any() else None)


class Deterministic(Discrete):
    """A constant ``value`` > 0 (a point mass).

    Parameters
    ----------
    value : float
        The constant, finite and > 0.

    Examples
    --------
    >>> from queuetheory import Deterministic
    >>> D = Deterministic(2.0)
    >>> D.mean(), D.var(), D.cdf([1.9, 2.0])
    (2.0, 0.0, array([0., 1.]))
    """

    def __init__(self, value: float):
        super().__init__([_checks.positive("value", value)], [1.0])
        self.value = float(value)

    def __repr__(self):
        return _repr(self, value=self.value)

    def _minimum(self, i):
        return self

    def _scaled(self, c):
        return Deterministic(c * self.value)


_ERLANG_CLOSED_K = 16
"""Erlang laws with at most this many phases take ``P(R > x)`` as the Poisson sum
``e^-y sum_{j < k} y^j / j!`` (``y = rate x``) and ``P(R <= x)`` as its complement where that is
at least 1/2: against mpmath (40 digits, 600 points of ``y`` in ``[1e-8, 700]`` per ``k`` of 1 to
16) the sum was at most 7.5e-16 off relative where scipy's ``gammaincc`` was up to 9.9e-14 off,
and the CDF as accurate as ``gammainc`` (its error where it is used). Both together 2.6, 2.0
and 1.6 times faster for ``k`` = 2, 4 and 8 (``python benchmarks/bench_laws.py``): an S&X point
of Exp(1) x Erlang(2, 2), MDS(4, 2) at task load 0.75, 4.9 s of CPU instead of 5.8 s, its values
the same to 2e-14."""


class Erlang(Distribution):
    """Erlang distribution: the sum of ``k`` independent exponentials of the given ``rate``.

    Parameters
    ----------
    k : int
        Number of phases, >= 1.
    rate : float
        Rate of each phase, > 0 (mean ``k / rate``).

    Examples
    --------
    >>> from queuetheory import Erlang
    >>> round(Erlang(3, 2.0).mean(), 12)
    1.5
    """

    _closed_lst = True
    _smooth = True

    def __init__(self, k: int, rate: float):
        self.k = _checks.positive_int("k", k)
        self.rate = _checks.positive("rate", rate)

    def __repr__(self):
        return _repr(self, k=self.k, rate=self.rate)

    def _cdf(self, x):
        y = self.rate * np.asarray(x, dtype=float)
        if self.k > _ERLANG_CLOSED_K:
            return special.gammainc(self.k, y)
        flat = y.ravel()
        sf = self._poisson_sf(flat)
        # its complement where it is at most 1/2 (no digits lost), scipy's below
        out = 1.0 - sf
        low = sf > 0.5
        if np.any(low):
            out[low] = special.gammainc(self.k, flat[low])
        return out.reshape(y.shape)

    def _sf(self, x):
        y = self.rate * np.asarray(x, dtype=float)
        if self.k > _ERLANG_CLOSED_K:
            return special.gammaincc(self.k, y)
        return self._poisson_sf(y.ravel()).reshape(y.shape)

    def _poisson_sf(self, y: np.ndarray) -> np.ndarray:
        """``P(R > y / rate) = e^-y sum_{j < k} y^j / j!`` at the values of the 1-d ``y``
        (Horner's rule; scipy's ``gammaincc`` beyond ``y = 700``, where ``e^-y`` nears the
        underflow)."""
        near = np.minimum(y, 700.0)   # no overflow of the sum (inf times e^-inf) beyond
        total = np.ones_like(near)
        for j in range(self.k - 1, 0, -1):
            total = 1.0 + total * (near / j)
        # at most 1: near y = 0 the product of e^-y and the sum, each rounded, can reach 1 + 2^-52
        # (numpy 2.4's exp: Erlang(12, 0.5) at 1e-6 had read 1.0000000000000002 from the hook)
        out = np.minimum(np.exp(-near) * total, 1.0)
        far = y > 700.0
        if np.any(far):
            out[far] = special.gammaincc(self.k, y[far])
        return out

    def _pdf(self, x):
        return np.exp(special.xlogy(self.k - 1, x) + self.k * math.log(self.rate)
                      - self.rate * x - special.gammaln(self.k))

    def _ppf(self, q):
        return special.gammaincinv(self.k, q) / self.rate

    def _isf(self, p):
        return special.gammainccinv(self.k, p) / self.rate

    def _stop_loss(self, y):
        # E[X 1{X > y}] - y P(X > y) = ((k - z) Q(k, z) + z^k e^-z / (k - 1)!) / rate, z = rate y
        z = self.rate * y
        power = np.exp(special.xlogy(self.k, z) - z - special.gammaln(self.k))
        return ((self.k - z) * special.gammaincc(self.k, z) + power) / self.rate

    def _moment(self, n):
        # k (k + 1) ... (k + n - 1) / rate^n: the difference of log-gammas cancels for a large
        # k (Erlang(10**9, 1e9) had a mean of 1 + 7.6e-7), the product does not
        if n > _ERLANG_PRODUCT:
            return math.exp(special.gammaln(self.k + n) - special.gammaln(self.k)) / self.rate**n
        value = math.prod((self.k + i) / self.rate for i in range(n))
        if not math.isfinite(value):
            raise OverflowError("the moment leaves the floats")   # Distribution.moment: logs
        return value

    def _log_moment(self, n):
        if n > _ERLANG_PRODUCT:
            return float(special.gammaln(self.k + n) - special.gammaln(self.k)) - n * math.log(
                self.rate)
        return math.fsum(math.log((self.k + i) / self.rate) for i in range(n))

    def _mean_exact(self):
        return self.k / Fraction(self.rate)

    def _lst(self, s):
        return (self.rate / (self.rate + s)) ** self.k

    _lst_mp = _lst

    def _sample(self, size, rng):
        return rng.gamma(self.k, 1.0 / self.rate, size)

    def _scaled(self, c):
        return Erlang(self.k, self.rate / c)

    def _phases(self):
        return np.ones(1), np.array([self.rate]), np.array([self.k], dtype=np.intp)


_ERLANG_PRODUCT = 256
"""Erlang moments up to this order as products (relative error about ``n`` ulps), beyond from
log-gamma functions."""


_MAX_MOMENT = 10_000
"""Largest moment order :meth:`Distribution.moment` takes (``2**70`` had raised a TypeError in
a log-gamma function, ``10**6`` of an exponential took 19 s to reach ``inf``)."""


_COMPILED_LEVELS = 4096
"""Levels from which :meth:`HyperExponential._root` runs compiled (numba installed; 4.8 to 5.5
times faster on the 2.3 million levels of an S&X analysis's ``X`` nodes): smaller calls, such
as a single quantile, do not import numba nor load the compiled function."""


def _hyperexponential_root(level, upper, p, rates, out):
    """:meth:`HyperExponential._root` a level at a time (compiled with numba): for each level,
    ``L``, the lower bound, Newton's steps on ``-log P(X > x)`` and the last step on the
    probability, the same formulas as the numpy operations, into ``out``."""
    slowest = rates.min()
    J = p.size
    for i in range(level.size):
        q = level[i]
        L = -math.log(q) if upper[i] else -math.log1p(-q)
        x = 0.0
        for j in range(J):
            x = max(x, (math.log(p[j]) + L) / rates[j])
        for _ in range(100):
            S = dS = 0.0
            for j in range(J):
                e = math.exp(-x * (rates[j] - slowest))
                S += p[j] * e
                dS += p[j] * e * (rates[j] - slowest)
            if S < 0.5:
                log_S = math.log(S) if S > 0 else -math.inf
            else:   # S near 1: from the expm1 form (relative accuracy)
                total = 0.0
                for j in range(J):
                    total += p[j] * math.expm1(-x * (rates[j] - slowest))
                log_S = math.log1p(total)
            step = (L - slowest * x + log_S) / (slowest + dS / S)
            x = x + max(step, 0.0)
            if not step > 4e-16 * x:
                break
        density = sf = cdf = 0.0
        for j in range(J):
            density += rates[j] * math.exp(-x * rates[j]) * p[j]
            if upper[i]:
                sf += math.exp(-x * rates[j]) * p[j]
            else:
                cdf += -math.expm1(-x * rates[j]) * p[j]
        if density > 0:
            x = max(x + ((sf - q) if upper[i] else (q - cdf)) / density, 0.0)
        out[i] = x


@functools.cache
def _compiled_root():
    """:func:`_hyperexponential_root` compiled with numba (imported on the first call, not with
    the package), or ``None`` when numba is not installed (numpy operations, slower)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    from ._jit import njit

    return njit(nogil=True)(_hyperexponential_root)


class HyperExponential(Distribution):
    """Mixture of exponentials: rate ``rates[j]`` with probability ``probs[j]``.

    Parameters
    ----------
    probs : sequence of float
        Probabilities of the phases, >= 0 and summing to 1.
    rates : sequence of float
        Their rates, each > 0; as many as ``probs``.

    Examples
    --------
    >>> from queuetheory import HyperExponential
    >>> H = HyperExponential([0.5, 0.5], [1.0, 2.0])
    >>> H.mean()
    0.75
    """

    _closed_lst = True
    _smooth = True

    def __init__(self, probs: Sequence[float], rates: Sequence[float]):
        self.probs = _checks.probabilities("probs", probs)
        r = _checks.real_array("rates", rates).ravel()
        if r.size != self.probs.size:
            raise ValueError(f"probs and rates must have the same length, got {self.probs.size} "
                             f"and {r.size}")
        for j, rate in enumerate(r):
            _checks.positive(f"rates[{j}]", rate)
        self.rates = r

    def __repr__(self):
        return _repr(self, probs=self.probs.tolist(), rates=self.rates.tolist())

    def _sf(self, x):
        return np.exp(-x[..., None] * self.rates) @ self.probs

    def _cdf(self, x):
        return -np.expm1(-x[..., None] * self.rates) @ self.probs

    def _pdf(self, x):
        return (self.rates * np.exp(-x[..., None] * self.rates)) @ self.probs

    def _stop_loss(self, y):
        return (np.exp(-y[..., None] * self.rates) / self.rates) @ self.probs

    def _ppf(self, q):
        upper = q > 0.5
        return self._root(np.where(upper, 1.0 - q, q), upper)

    def _isf(self, p):
        return self._root(p, np.ones(np.shape(p), dtype=bool))

    def _root(self, level: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """The ``x`` with ``P(X > x) = level`` where ``upper``, ``P(X <= x) = level`` elsewhere:
        Newton's method on ``phi(x) = -log P(X > x)``, then one Newton step on the
        probability itself.

        A mixture of exponentials has a decreasing hazard rate ``phi'``, so ``phi`` is concave:
        from below the root every Newton step stays below it and the iterates rise to it
        (steps clipped at 0 against rounding). The start is below the root: ``P(X > x) >=
        p_j e^(-r_j x)`` for every phase, so ``x >= (log p_j + L) / r_j`` (``L = phi(x)``).
        About 7 steps to 4e-16. ``phi(x) = r x - log S(x)`` with ``r`` the smallest rate and
        ``S = sum_j p_j e^(-(r_j - r) x)`` in ``[p_slowest, 1]``, through the ``expm1`` form
        where ``S > 1/2`` (relative accuracy near 0). ``L`` itself carries an absolute
        rounding error, which ``phi``'s flat stretches magnify (``ulp(L) / (x phi'(x))``:
        5.6e-15 relative at the median of ``HyperExponential([0.5, 0.3, 0.2], [1e3, 1,
        1e-3])``); the last step, on ``P(X > x) - level`` or ``level - P(X <= x)`` over the
        density, evaluated relative to the level, removes it. The generic search
        (:meth:`Distribution._ppf`) took 2.5 times as long, most of the time of the S&X removal
        analysis's ``X`` nodes. With numba installed, calls of at least
        :data:`_COMPILED_LEVELS` levels run the same steps compiled, a level at a time
        (:func:`_hyperexponential_root`).
        """
        shape, level, upper = np.shape(level), np.ravel(level), np.ravel(upper)
        keep = self.probs > 0
        p, rates = self.probs[keep], self.rates[keep]
        compiled = _compiled_root() if level.size >= _COMPILED_LEVELS else None
        if compiled is not None:
            out = np.empty(level.size)
            compiled(np.asarray(level, dtype=float), upper, p, rates, out)
            return out.reshape(shape)
        L = np.where(upper, -np.log(level), -np.log1p(-level))
        slowest = rates.min()
        d = rates - slowest
        x = np.maximum(((np.log(p) + L[:, None]) / rates).max(axis=1), 0.0)
        active = np.arange(x.size)
        for _ in range(100):
            xa = x[active]
            e = np.exp(-xa[:, None] * d)
            S = e @ p
            with np.errstate(divide="ignore"):
                log_S = np.where(S < 0.5, np.log(S), np.log1p(np.expm1(-xa[:, None] * d) @ p))
            step = (L[active] - slowest * xa + log_S) / (slowest + (e * d) @ p / S)
            x[active] = xa + np.maximum(step, 0.0)
            active = active[step > 4e-16 * x[active]]
            if not active.size:
                break
        density = self._pdf(x)
        miss = np.where(upper, self._sf(x) - level, level - self._cdf(x))
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(density > 0, np.maximum(x + miss / density, 0.0), x)
        return x.reshape(shape)

    def _moment(self, k):
        return math.factorial(k) * math.fsum(self.probs * self.rates**-float(k))

    def _mean_exact(self):
        return sum((p / Fraction(r) for p, r in zip(_exact_probs_of(self, self.probs),
                                                     self.rates)),
                   Fraction(0))

    def _lst(self, s):
        return _weighted(self.rates / (self.rates + s[..., None]), self.probs)

    def _lst_mp(self, s):
        return mpmath.fsum(p * r / (r + s)
                           for p, r in zip(_mp_probs(self, self.probs), self.rates))

    def _sample(self, size, rng):
        rates = rng.choice(self.rates, size=size, p=self.probs)
        return rng.exponential(1.0, size) / rates

    def _scaled(self, c):
        return HyperExponential(self.probs, self.rates / c)

    def _phases(self):
        keep = self.probs > 0
        return self.probs[keep], self.rates[keep], np.ones(int(keep.sum()), dtype=np.intp)


class ShiftedExponential(Distribution):
    """``shift + Exponential(rate)``: a constant start-up time followed by exponential work.

    Parameters
    ----------
    shift : float
        The constant start-up time, >= 0.
    rate : float
        Rate of the exponential part, > 0.

    Examples
    --------
    >>> from queuetheory import ShiftedExponential
    >>> ShiftedExponential(1.0, 2.0).mean()
    1.5
    """

    _closed_lst = True

    def __init__(self, shift: float, rate: float):
        self.shift = _checks.nonnegative("shift", shift)
        self.rate = _checks.positive("rate", rate)

    def __repr__(self):
        return _repr(self, shift=self.shift, rate=self.rate)

    def _support(self):
        return self.shift, math.inf

    def _cdf(self, x):
        return -np.expm1(-self.rate * (x - self.shift))

    def _sf(self, x):
        return np.exp(-self.rate * (x - self.shift))

    def _pdf(self, x):
        return self.rate * np.exp(-self.rate * (x - self.shift))

    def _ppf(self, q):
        return self.shift - np.log1p(-q) / self.rate

    def _isf(self, p):
        return self.shift - np.log(p) / self.rate

    def _stop_loss(self, y):
        return np.exp(-self.rate * (y - self.shift)) / self.rate

    def _moment(self, k):
        return sum(math.comb(k, j) * self.shift ** (k - j) * math.factorial(j) / self.rate**j
                   for j in range(k + 1))

    def _mean_exact(self):
        return Fraction(self.shift) + 1 / Fraction(self.rate)

    def _lst(self, s):
        return np.exp(-s * self.shift) * self.rate / (self.rate + s)

    def _lst_mp(self, s):
        return mpmath.exp(-s * self.shift) * self.rate / (self.rate + s)

    def _sample(self, size, rng):
        return self.shift + rng.exponential(1.0 / self.rate, size)

    def _minimum(self, i):
        return ShiftedExponential(self.shift, i * self.rate)

    def _scaled(self, c):
        return ShiftedExponential(c * self.shift, self.rate / c)


class Uniform(Distribution):
    """Uniform distribution on ``[low, high]`` with ``0 <= low < high``.

    Parameters
    ----------
    low : float
        Lower end, >= 0.
    high : float
        Upper end, finite and > ``low``.

    Examples
    --------
    >>> from queuetheory import Uniform
    >>> Uniform(1.0, 3.0).mean()
    2.0
    """

    _closed_lst = True
    _piecewise_linear = True

    def __init__(self, low: float, high: float):
        self.low = _checks.nonnegative("low", low)
        self.high = _checks.positive("high", high)
        if not self.high > self.low:
            raise ValueError(f"high must be > low, got low={low!r}, high={high!r}")

    def __repr__(self):
        return _repr(self, low=self.low, high=self.high)

    def _support(self):
        return self.low, self.high

    def _cdf(self, x):
        return (x - self.low) / (self.high - self.low)

    def _pdf(self, x):
        return np.full(x.shape, 1.0 / (self.high - self.low))

    def _ppf(self, q):
        return self.low + q * (self.high - self.low)

    def _stop_loss(self, y):
        return (self.high - y) ** 2 / (2.0 * (self.high - self.low))

    def _moment(self, k):
        a, b = self.low, self.high
        return (b ** (k + 1) - a ** (k + 1)) / ((k + 1) * (b - a))

    def _mean_exact(self):
        return (Fraction(self.low) + Fraction(self.high)) / 2

    def _lst(self, s):
        width = self.high - self.low
        z = s * width
        small = np.abs(z) < 1e-8
        ratio = np.where(small, 1.0 - z / 2, -np.expm1(-z) / np.where(small, 1.0, z))
        return np.exp(-s * self.low) * ratio

    def _lst_mp(self, s):
        if s == 0:
            return mpmath.mpf(1)
        return (mpmath.exp(-s * self.low) - mpmath.exp(-s * self.high)) / (
            s * (self.high - self.low))

    def _sample(self, size, rng):
        return rng.uniform(self.low, self.high, size)

    def _scaled(self, c):
        return Uniform(c * self.low, c * self.high)


class Pareto(Distribution):
    """Pareto distribution: ``P(X > x) = (scale / x)^alpha`` for ``x >= scale``.

    The ``k``-th moment is infinite for ``k >= alpha``.

    Parameters
    ----------
    alpha : float
        Tail index, > 0.
    scale : float
        Lower end of the support, > 0.

    Examples
    --------
    >>> from queuetheory import Pareto
    >>> P = Pareto(alpha=1.5, scale=1.0)
    >>> P.mean(), P.moment(2)
    (3.0, inf)
    """

    def __init__(self, alpha: float, scale: float):
        self.alpha = _checks.positive("alpha", alpha)
        self.scale = _checks.positive("scale", scale)

    def __repr__(self):
        return _repr(self, alpha=self.alpha, scale=self.scale)

    def _support(self):
        return self.scale, math.inf

    def _sf(self, x):
        return (self.scale / x) ** self.alpha

    def _pdf(self, x):
        return self.alpha * self.scale**self.alpha / x ** (self.alpha + 1)

    def _ppf(self, q):
        return self.scale * (1.0 - q) ** (-1.0 / self.alpha)

    def _isf(self, p):
        return self.scale * p ** (-1.0 / self.alpha)

    def _stop_loss(self, y):
        if self.alpha <= 1:
            return np.full(y.shape, math.inf)
        return y * (self.scale / y) ** self.alpha / (self.alpha - 1.0)

    def _mean_exact(self):
        if self.alpha <= 1:
            return None
        alpha = Fraction(self.alpha)
        return alpha * Fraction(self.scale) / (alpha - 1)

    def _moment(self, k):
        if k >= self.alpha:
            return math.inf
        return self.alpha * self.scale**k / (self.alpha - k)

    def _lst(self, s):
        if not np.iscomplexobj(s):
            return super()._lst(s)
        # remembered: queue models ask for the same points more than once
        return _memo(self, "_lst_memo", _key(s), lambda: self.alpha * _expint(
            s, self.alpha + 1, self.scale)).copy()

    def _lst_remainder(self, s):
        if self.alpha <= 1:
            return None
        # alpha E_{alpha + 1}(z) (z = s c) less the first two terms of its power series, which
        # are 1 - s E[X]; beyond the series' radius the difference itself, which no longer
        # cancels
        z = np.asarray(s, dtype=complex) * self.scale
        out = np.zeros(z.shape, dtype=complex)
        small = (np.abs(z) < _EXPINT_SERIES_RADIUS) & (z != 0)
        out[small] = self.alpha * _expint_series(z[small], self.alpha + 1.0, skip=2)
        large = np.abs(z) >= _EXPINT_SERIES_RADIUS
        out[large] = (self.alpha * _expint(z[large], self.alpha + 1.0) - 1.0
                      + z[large] * (self.alpha / (self.alpha - 1.0)))
        return out

    def _lst_mp(self, s):
        # alpha (s c)^alpha Gamma(-alpha, s c), the upper incomplete gamma function
        if s == 0:
            return mpmath.mpf(1)
        z = s * self.scale
        return self.alpha * z**self.alpha * mpmath.gammainc(-self.alpha, z)

    def _sample(self, size, rng):
        return self.scale * (1.0 - rng.random(size)) ** (-1.0 / self.alpha)

    def _minimum(self, i):
        return Pareto(i * self.alpha, self.scale)

    def _scaled(self, c):
        return Pareto(self.alpha, c * self.scale)


class BoundedPareto(Distribution):
    """Pareto distribution with index ``alpha`` truncated to ``[low, high]``.

    Parameters
    ----------
    alpha : float
        Tail index, > 0.
    low : float
        Lower end of the support, > 0.
    high : float
        Upper end of the support, finite and > ``low``.

    Examples
    --------
    >>> from queuetheory import BoundedPareto
    >>> round(BoundedPareto(1.5, 1.0, 100.0).mean(), 6)   # 1.5 * 1.8 / (1 - 100**-1.5)
    2.702703
    """

    def __init__(self, alpha: float, low: float, high: float):
        self.alpha = _checks.positive("alpha", alpha)
        self.low = _checks.positive("low", low)
        self.high = _checks.positive("high", high)
        if not self.high > self.low:
            raise ValueError(f"high must be > low, got low={low!r}, high={high!r}")
        self._log_ratio = float(_log_ratio(self.low, self.high))  # log(low / high) < 0
        self._mass = -math.expm1(self.alpha * self._log_ratio)  # 1 - (low / high)^alpha
        # (high / low)^alpha - 1 = mass / (low / high)^alpha, inf when it overflows
        e = -self.alpha * self._log_ratio
        self._odds = math.expm1(e) if e < 709.0 else math.inf
        self._r = float(_power_of_ratio(self.low, self.high, self.alpha))  # (low / high)^alpha

    def __repr__(self):
        return _repr(self, alpha=self.alpha, low=self.low, high=self.high)

    def _support(self):
        return self.low, self.high

    # Each formula is a product of factors without cancellation, each accurate to a few ulps
    # relative (logarithms of ratios by ``_log_ratio``, ``expm1`` near 0), so that the tail near
    # ``high``, the head near ``low`` and tiny ``alpha`` keep their relative accuracy.
    def _cdf(self, x):
        # (1 - (low / x)^alpha) / mass
        return -np.expm1(self.alpha * _log_ratio(self.low, x)) / self._mass

    def _sf(self, x):
        # ((low / x)^alpha - (low / high)^alpha) / mass = (low/x)^alpha (1 - (x/high)^alpha) / mass
        return (_power_of_ratio(self.low, x, self.alpha)
                * -np.expm1(self.alpha * _log_ratio(x, self.high)) / self._mass)

    def _pdf(self, x):
        return self.alpha / x * _power_of_ratio(self.low, x, self.alpha) / self._mass

    def _stop_loss(self, y):
        # (int_y^high (low / u)^alpha du - (low / high)^alpha (high - y)) / mass, the integral
        # (low / y)^alpha y int_0^T e^((1 - alpha) t) dt with T = log(high / y)
        e, T = 1.0 - self.alpha, _log_ratio(self.high, y)
        part = T if e == 0 else np.expm1(e * T) / e
        head = _power_of_ratio(self.low, y, self.alpha) * y * part
        return (head - self._r * (self.high - y)) / self._mass

    def _ppf(self, q):
        # low (1 - q mass)^(-1/alpha) = low exp(-log1p(-q mass) / alpha) below the median
        # (relative error a few ulps times the condition number q mass / (alpha (1 - q mass)));
        # above it, isf(1 - q) (1 - q exact there)
        q = np.asarray(q, dtype=float)
        head = q <= 0.5
        return np.where(head, self.low * np.exp(-np.log1p(-np.where(head, q, 0.0) * self._mass)
                                                / self.alpha),
                        self._isf(np.where(head, 0.5, 1.0 - q)))

    def _isf(self, p):
        # (low / x)^alpha = p + r (1 - p), r = (low / high)^alpha. Near high (p odds <= 1):
        # x = high (1 + p odds)^(-1/alpha) with odds = (1 - r) / r, by log1p; elsewhere
        # x = low (p + r (1 - p))^(-1/alpha), the base a sum of positive terms
        p = np.asarray(p, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            z = p * self._odds
            tail = z <= 1.0
            near_high = self.high * np.exp(-np.log1p(np.where(tail, z, 0.0)) / self.alpha)
            base = p + self._r * (1.0 - p)
            near_low = self.low * np.where(tail, 1.0, base) ** (-1.0 / self.alpha)
        return np.where(tail, near_high, near_low)

    def _minimum_moment(self, i: int, k: float) -> float | None:
        """``E[min^k]`` of ``i`` copies, ``low^k int_0^1 (r + m v)^(-k/alpha) i v^(i-1) dv``
        (``v^i = P(min > x)``, ``r = (low/high)^alpha``, ``m = 1 - r``): Gauss-Legendre on
        pieces graded geometrically from ``v = 0`` (the integrand's singularity is at ``-r/m``:
        each piece lies its width away from it) and of width ``2/i`` then geometric towards
        ``v = 1`` (where ``v^(i-1)`` lives; beyond ``60/i`` of 1 it is below ``e^-60``
        relative). ``None`` where ``r`` underflows and the moment grows as ``i <= k/alpha``
        (the quadrature of the caller then). One evaluation of 20 nodes per piece, about
        60 pieces, instead of an adaptive quadrature of ``P(X > x)^i`` (RIQ(100) with this
        law needed 200 of those for its mean)."""
        c = k / self.alpha
        t = self._r / self._mass
        floor = max(t, 1e-300)
        if t < 1e-300 and i <= c:
            return None
        near_zero = floor * 2.0 ** np.arange(0, max(0, math.ceil(-math.log2(floor))) + 1)
        steps = np.concatenate([2.0 * np.arange(1, 31), 60.0 * 2.0 ** np.arange(1, 60)])
        near_one = 1.0 - steps / i
        edges = np.unique(np.concatenate([[0.0, 1.0], near_zero, near_one]))
        edges = edges[(edges >= 0.0) & (edges <= 1.0)]
        nodes, weights = quadrature.gauss_legendre(20)
        lo, hi = edges[:-1, None], edges[1:, None]
        v = 0.5 * (lo + hi) + 0.5 * (hi - lo) * nodes
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            log_f = (math.log(i) + (i - 1) * np.log(v) - c * np.log(self._r + self._mass * v)
                     + k * math.log(self.low))
            total = float(np.sum(0.5 * (hi - lo) * np.exp(log_f) * weights))
        if t < 1e-300:   # [0, 1e-300]: i v^(i - 1 - c) m^-c, exactly
            with np.errstate(over="ignore", under="ignore"):
                total += float(np.exp(math.log(i / (i - c)) + (i - c) * math.log(1e-300)
                                      - c * math.log(self._mass) + k * math.log(self.low)))
        return total

    def _mean_exact(self):
        # not rational (powers of the parameters): in mpmath to more digits than the 1000 the
        # high-precision path offers (which takes 1 - rho from this mean as exact), far below
        # the eps / (1 - rho) the float mean leaves near load 1 (Random at 1 - 1e-12: 2.8e-4
        # off); 0.5 ms
        with mpmath.workdps(1050):
            a, low, high = (mpmath.mpf(v) for v in (self.alpha, self.low, self.high))
            mass = 1 - (low / high) ** a
            if a == 1:
                mean = low * mpmath.log(high / low) / mass
            else:
                mean = a / (1 - a) * (low ** a * high ** (1 - a) - low) / mass
            mantissa, exponent = mean.man, mean.exp
        return Fraction(int(mantissa)) * Fraction(2) ** int(exponent)

    def _moment(self, k):
        # E[X^k] = alpha / (k - alpha) (low^alpha high^(k - alpha) - low^k) / mass
        #        = alpha / (k - alpha) low^k expm1((k - alpha) log(high / low)) / mass,
        # in logarithms so that extreme low and high neither under- nor overflow
        # (low^k as a power where it is a normal float: exp(k log(low)) loses |k log(low)| ulps;
        # only k = alpha exactly needs the limit, k - alpha being exact when they are close)
        a, log_low, log_span = self.alpha, math.log(self.low), -self._log_ratio
        e = (k - a) * log_span
        try:
            low_k = float(_power_of_ratio(self.low, 1.0, k))
            if not np.finfo(float).tiny <= low_k < math.inf:
                low_k = math.exp(k * log_low)
            if k == a:
                return a * low_k * log_span / self._mass
            if e > 700.0:  # expm1(e) = exp(e) to double precision
                return a / (k - a) * math.exp(k * log_low + e) / self._mass
            return a / (k - a) * low_k * math.expm1(e) / self._mass
        except OverflowError:
            return math.inf

    def _lst(self, s):
        if not np.iscomplexobj(s):
            return super()._lst(s)
        a, beta = self.alpha, self.alpha + 1

        def compute():
            tails = (_expint(s, beta, self.low)
                     - math.exp(a * self._log_ratio) * _expint(s, beta, self.high))
            return a * tails / self._mass

        return _memo(self, "_lst_memo", _key(s), compute).copy()

    def _minimum_density(self, counts: np.ndarray, weights: np.ndarray, z):
        """The density ``f(z) sum_j w_j i_j P(X > z)^(i_j - 1)`` of the minimum of ``I`` copies,
        ``P(I = counts[j]) = weights[j]``, continued analytically to complex ``z`` with
        ``Re(z) > 0`` (powers on the principal branch); for several counts the polynomial in
        ``P(X > z)`` by Horner's rule (one complex power instead of one per count: RIQ(100)
        mixes the minima of 1 to 100 copies)."""
        a, r = self.alpha, math.exp(self.alpha * self._log_ratio)
        ratio = (self.low / z) ** a
        tail = (ratio - r) / self._mass
        if len(counts) == 1:
            poly = counts[0] * weights[0] * tail ** (counts[0] - 1)
        else:
            coef = np.zeros(int(max(counts)))
            np.add.at(coef, np.asarray(counts) - 1, np.asarray(counts) * np.asarray(weights))
            poly = np.full(tail.shape, coef[-1], dtype=complex)
            for c in coef[-2::-1]:
                poly = poly * tail + c
        return a * ratio / z * poly / self._mass

    def _lst_mp(self, s):
        # alpha lo^alpha s^alpha (Gamma(-alpha, s lo) - Gamma(-alpha, s hi)) / mass
        if s == 0:
            return mpmath.mpf(1)
        a, low = mpmath.mpf(self.alpha), mpmath.mpf(self.low)
        mass = 1 - (low / self.high) ** a
        return a * low**a * s**a * mpmath.gammainc(-a, s * low, s * self.high) / mass

    def _scaled(self, c):
        return BoundedPareto(self.alpha, c * self.low, c * self.high)


class Mixture(Distribution):
    """Finite mixture: component ``components[j]`` with probability ``weights[j]``.

    Parameters
    ----------
    components : sequence of Distribution
        The component laws: queuetheory distributions or frozen :mod:`scipy.stats`
        distributions supported on ``[0, inf)`` (wrapped by :func:`as_distribution`).
    weights : sequence of float
        Their probabilities, >= 0 and summing to 1; as many as ``components``.

    Examples
    --------
    >>> from queuetheory import Exponential, Mixture
    >>> Mixture([Exponential(1.0), Exponential(2.0)], [0.5, 0.5]).mean()
    0.75
    """

    def __init__(self, components: Sequence[Distribution], weights: Sequence[float]):
        if (isinstance(components, str | Distribution) or not isinstance(components, Iterable)
                or np.ndim(components) == 0):
            raise ValueError(f"components must be a sequence of distributions, got "
                             f"{components!r}")
        self.components = [as_distribution(c) for c in components]
        self.weights = _checks.probabilities("weights", weights)
        if len(self.components) != self.weights.size:
            raise ValueError("components and weights must have the same length")
        self.discrete = all(c.discrete for c in self.components)
        self._has_atoms = any(c._has_atoms for c, w in zip(self.components, self.weights)
                              if w > 0)
        self._closed_lst = all(c._closed_lst for c in self.components)
        self._smooth = all(c._smooth for c in self.components)
        self._piecewise_linear = all(c._piecewise_linear for c, w in zip(self.components,
                                                                          self.weights) if w > 0)
        self._atom_low = any(c._atom_low for c in self.components)

    def __repr__(self):
        return _repr(self, components=self.components, weights=self.weights.tolist())

    def _support(self):
        ends = [c._support() for c, w in zip(self.components, self.weights) if w > 0]
        return min(a for a, _ in ends), max(b for _, b in ends)

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The merged atoms when every component with positive weight is discrete."""
        parts = [(c.atoms, w) for c, w in zip(self.components, self.weights) if w > 0]
        if any(a is None for a, _ in parts):
            return None
        merged = Discrete(np.concatenate([a[0] for a, _ in parts]),
                          np.concatenate([w * a[1] for a, w in parts]))
        return merged.values, merged.probs

    def _point_masses(self):
        parts = [(c._point_masses(), w) for c, w in zip(self.components, self.weights) if w > 0]
        if any(m is None for m, _ in parts):
            return None
        values, where = np.unique(np.concatenate([m[0] for m, _ in parts]), return_inverse=True)
        probs = np.bincount(where, np.concatenate([w * m[1] for m, w in parts]), values.size)
        return values, probs

    def _phases(self):
        parts = [(c._phases(), w) for c, w in zip(self.components, self.weights) if w > 0]
        if any(form is None for form, _ in parts):
            return None
        return (np.concatenate([w * form[0] for form, w in parts]),
                np.concatenate([form[1] for form, _ in parts]),
                np.concatenate([form[2] for form, _ in parts]).astype(np.intp))

    def _kinks(self):
        if self._smooth or self.atoms is not None:
            return ()
        return tuple(sorted({c for part, w in zip(self.components, self.weights) if w > 0
                             for c in part._kinks()}))

    def _combine(self, hook, x):
        return sum(w * getattr(c, hook)(x) for c, w in zip(self.components, self.weights))

    def _cdf(self, x):
        return self._combine("_cdf_all", x)

    def _stop_loss(self, y):
        return self._combine("_stop_loss_all", y)

    def _sf(self, x):
        return self._combine("_sf_all", x)

    def _pdf(self, x):
        return self._combine("_pdf_all", x)

    def _moment(self, k):
        return math.fsum(w * c.moment(k) for c, w in zip(self.components, self.weights)
                         if w > 0)

    def _mean_exact(self):
        means = [(w, c._mean_exact()) for c, w in zip(self.components,
                                                       _exact_probs_of(self, self.weights))
                 if w > 0]
        if any(mean is None for _, mean in means):
            return None
        return sum((w * mean for w, mean in means), Fraction(0))

    def _lst(self, s):
        groups = self._minimum_groups if np.iscomplexobj(s) else {}
        if not groups:
            return self._combine("_lst", s)
        grouped = {j for _, members in groups.values() for j, _, _ in members}
        total = sum(w * c._lst(s) for j, (c, w) in enumerate(zip(self.components, self.weights))
                    if j not in grouped and w > 0)
        for base, members in groups.values():
            counts = [i for _, i, _ in members]
            weights = np.array([w for _, _, w in members])
            mass = weights.sum()
            near = members   # near the real axis: each minimum's own quadrature

            def quadrature(t, near=near):
                return sum(w * Distribution._lst(self.components[j], t) for j, _, w in near)

            total = total + mass * _ray_lst(
                lambda z, base=base, counts=counts, share=weights / mass:
                base._minimum_density(counts, share, z), s, base.low, base.high,
                lambda t, quadrature=quadrature, mass=mass: quadrature(t) / mass)
        return total

    @cached_property
    def _minimum_groups(self) -> dict:
        """Components that are minima of copies of one law with an analytic density along
        rays (:meth:`BoundedPareto._minimum_density`), by law, when two or more share it:
        ``{id: (law, [(index, copies, weight)])}``; their transforms are one ray quadrature
        of the mixed density (:meth:`_lst`)."""
        groups: dict = {}
        for j, (c, w) in enumerate(zip(self.components, self.weights)):
            if isinstance(c, _Minimum) and isinstance(c.base, BoundedPareto) and w > 0:
                groups.setdefault(id(c.base), (c.base, []))[1].append((j, c.i, float(w)))
        return {key: group for key, group in groups.items() if len(group[1]) > 1}

    def _lst_mp(self, s):
        return mpmath.fsum(w * c.lst(s)
                           for c, w in zip(self.components, _mp_probs(self, self.weights)))

    @property
    def _mp_lst(self) -> bool:
        return all(c._mp_lst for c in self.components)

    def _sample(self, size, rng):
        n = int(np.prod(size)) if size is not None else 1
        which = rng.choice(len(self.components), size=n, p=self.weights)
        out = np.empty(n)
        for j, comp in enumerate(self.components):
            mask = which == j
            out[mask] = comp.sample(int(mask.sum()), rng)
        return out.reshape(size) if size is not None else float(out[0])

    def _scaled(self, c):
        return Mixture([comp.scaled(c) for comp in self.components], self.weights)


_MIX_CHUNK = 1 << 20
"""Entries of the largest (points x atoms) array a sum over atoms builds at once (16 MiB)."""


def _exact_probs(probs) -> tuple[Fraction, ...]:
    """Probabilities as rationals summing to 1 exactly: the floats' own values over their exact
    sum. Floats normalised in floating point sum to 1 only within rounding, and at high
    precision a mass ``1 + 1e-17`` puts a spurious pole near ``s = 0`` into a queue's transform
    (the 20-digit quantile of the M/H2/1 sojourn with probabilities [0.9, 0.1] at load 0.9 and
    level ``1 - 1e-12`` was 0.7% off)."""
    values = [Fraction(float(p)) for p in probs]
    total = sum(values, Fraction(0))
    return tuple(p / total for p in values)


def _exact_probs_of(owner, probs) -> tuple[Fraction, ...]:
    """:func:`_exact_probs`, remembered on ``owner`` for the last probabilities (:func:`_memo`,
    keyed by the probabilities themselves)."""
    probs = np.asarray(probs, dtype=float)
    return _memo(owner, "_exact_probs_memo", _key(probs), lambda: _exact_probs(probs))


def _mp_probs(owner, probs) -> list:
    """:func:`_exact_probs` at the working precision."""
    return [mpmath.mpf(p.numerator) / p.denominator for p in _exact_probs_of(owner, probs)]


def _over_atoms(f, x: np.ndarray, values: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``sum_j probs[j] f(x[..., None], values[j])``, in chunks of at most ``_MIX_CHUNK``
    entries (memory bounded whatever the number of atoms)."""
    flat = x.ravel()
    out = np.empty(flat.size, dtype=complex if np.iscomplexobj(x) else float)
    step = max(1, _MIX_CHUNK // max(values.size, 1))
    for start in range(0, flat.size, step):
        total = _weighted(f(flat[start:start + step, None], values), probs)
        out[start:start + step] = total if np.iscomplexobj(out) else np.real(total)
    return out.reshape(x.shape)


def _ratio(x, m):
    """``x / m`` with ``x / 0 = inf`` for ``x >= 0`` (the law of ``0 * M`` is the atom at 0)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(m > 0, x / np.where(m > 0, m, 1.0), np.inf)


def _window(x: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x / b, x / a)``: where ``x / m`` lies in the support ``[a, b]`` of a factor."""
    with np.errstate(divide="ignore", over="ignore"):
        return x / b, (np.full(x.shape, math.inf) if a == 0 else x / a)


def _expect_between(law: Distribution, integrand, x: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray) -> np.ndarray:
    """``E[integrand(x, M); lo < M <= hi]`` for the law ``M``, one window per entry of ``x``.

    The nested tanh-sinh rule of :meth:`Distribution._expect` in probability space, mapped to
    ``[P(M <= lo), P(M <= hi)]`` (levels below 1/2 through ``ppf``, above through ``isf`` of
    the tail, so neither end loses digits), refined until two levels agree to ``_TS_TOL``
    times the window's probability. ``integrand`` must be smooth inside the window.
    """
    flat, lo, hi = x.ravel(), lo.ravel(), hi.ravel()
    c_lo, c_hi = law._cdf_all(lo), law._cdf_all(hi)
    s_lo, s_hi = law._sf_all(lo), law._sf_all(hi)
    width = np.maximum(np.where(c_lo <= 0.5, c_hi - c_lo, s_lo - s_hi), 0.0)
    total, estimate = np.zeros(flat.size), np.zeros(flat.size)
    change = np.full(flat.size, np.nan)
    active = np.flatnonzero(width > 0)
    for level in range(_TS_MAX_LEVEL + 1):
        if active.size == 0:
            break
        u, one_minus_u, weights, norm = _tanh_sinh_level(level)
        w = width[active, None]
        below = c_lo[active, None] + u * w
        above = s_hi[active, None] + one_minus_u * w
        low_half = below <= 0.5
        m = np.where(low_half, law._ppf_all(np.where(low_half, below, 0.5)),
                     law._isf_all(np.where(low_half, 0.5, above)))
        m = np.clip(m, lo[active, None], hi[active, None])
        new = _weighted(integrand(flat[active, None], m), weights)
        total[active] = (0.5 if level else 1.0) * total[active] + new
        previous, before = estimate[active], change[active]
        estimate[active] = width[active] * total[active] / norm
        if level == 0:
            continue
        now = np.abs(estimate[active] - previous)
        change[active] = now
        tol = _TS_TOL * np.maximum(width[active], np.finfo(float).tiny)
        done = (now <= tol) | ((now < before) & (now * now <= tol * before))
        active = active[~done]
    return estimate.reshape(x.shape)


def _lst_at(D: Distribution, z: np.ndarray) -> np.ndarray:
    """``D._lst(z)`` for ``Re(z) >= 0``, where ``|z| = inf`` (an overflowed product) gives the
    limit ``P(D = 0)`` instead of NaN; evaluated in chunks (a transform computed by quadrature
    builds an array of its nodes per point)."""
    with np.errstate(over="ignore", invalid="ignore"):
        far = ~np.isfinite(z)
        arg = np.where(far, 1.0, z)
        if D._closed_lst:
            out = D._lst(arg)
        else:
            flat = arg.ravel()
            out = np.concatenate([np.atleast_1d(D._lst(flat[i:i + 4096]))
                                  for i in range(0, flat.size, 4096)]).reshape(arg.shape)
    if far.any():
        out = np.where(far, float(D._cdf_all(np.zeros(1))[0]), out)
    return out


class _Product(Distribution):
    """Law of ``X * M`` for independent ``X >= 0`` and ``M > 0``.

    Every function is an expectation over one factor given the other: a finite sum over the
    atoms of ``M`` (or of ``X``) where one has finitely many, else the adaptive tanh-sinh rule
    over ``M``'s quantiles (:meth:`Distribution._expect`):

    * ``P(X M <= x) = E[F_X(x / M)]`` (``= sum_j p_j F_M(x / x_j)`` over atoms ``x_j`` of ``X``),
    * ``E[exp(-s X M)] = E[lst_X(s M)]`` (``= sum_j p_j lst_M(s x_j)``),
    * ``E[(X M)^k] = E[X^k] E[M^k]``.

    Quantiles come from bisection on the CDF or tail; no infinite quantile of either factor
    enters a sum.
    """

    def __init__(self, X: Distribution, M: Distribution):
        self.X, self.M = X, M
        self._m_atoms = M.atoms
        self._x_atoms = None if self._m_atoms is not None else X.atoms
        self.discrete = X.discrete and M.discrete
        self._has_atoms = X._has_atoms and M._has_atoms
        self._atom_low = X._atom_low or M._atom_low

    def __repr__(self):
        return f"product({self.X!r}, {self.M!r})"

    def _support(self):
        (ax, bx), (am, bm) = self.X._support(), self.M._support()
        return ax * am, (0.0 if bx == 0 else bx * bm)

    def _scale_hint(self):
        hints = self.X._scale_hint() * self.M._scale_hint()
        return hints if math.isfinite(hints) and hints > 0 else 1.0

    def _moment(self, k):
        a, b = self.X.moment(k), self.M.moment(k)
        return 0.0 if a == 0 or b == 0 else a * b

    def _mean_exact(self):
        a, b = self.X._mean_exact(), self.M._mean_exact()
        return None if a is None or b is None else a * b

    def _point_masses(self):
        # X M has an atom only where both factors do (an atom times a density is a density):
        # the products of the atoms, equal products merged (a quantile on an atom of a
        # mixture job size times a discrete slowdown came back just below it)
        if not self._has_atoms:
            return np.empty(0), np.empty(0)
        first, second = self.X._point_masses(), self.M._point_masses()
        if first is None or second is None:
            return None
        values = np.multiply.outer(first[0], second[0]).ravel()
        probs = np.multiply.outer(first[1], second[1]).ravel()
        unique, where = np.unique(values, return_inverse=True)
        return unique, np.bincount(where, weights=probs, minlength=unique.size)

    def _given(self, hook: str, x):
        """``P(X M <= x)`` (``_cdf_all``) or ``P(X M > x)`` (``_sf_all``) at the array ``x``."""
        if self._m_atoms is not None:
            X_hook = getattr(self.X, hook)
            return _over_atoms(lambda y, v: X_hook(_ratio(y, v)), x, *self._m_atoms)
        if self._x_atoms is not None:
            M_hook = getattr(self.M, hook)
            return _over_atoms(lambda y, v: M_hook(_ratio(y, v)), x, *self._x_atoms)
        inner, outer = self._inner_outer()
        inner_hook = getattr(inner, hook)
        a, b = inner._support()
        if a == 0 and b == math.inf:
            return outer._expect(lambda y, m: inner_hook(_ratio(y, m)), x).real
        # the integrand F(x / m) is constant outside x / b < m < x / a, where the bounds of
        # the inner law's support put kinks that would slow the quadrature down to ~1e-7:
        # P(M <= x / b) (CDF) or P(M > x / a) (SF) plus the smooth part in between
        lo, hi = _window(x, a, b)
        edge = outer._cdf_all(lo) if hook == "_cdf_all" else outer._sf_all(hi)
        return edge + _expect_between(outer, lambda y, m: inner_hook(y / m), x, lo, hi)

    def _inner_outer(self) -> tuple[Distribution, Distribution]:
        """The factor integrated in closed form (inner) and the one integrated over (outer):
        quadrature over the factor whose partner's CDF is smooth."""
        if self.X._smooth or not self.M._smooth:
            return self.X, self.M
        return self.M, self.X

    def _cdf(self, x):
        return self._given("_cdf_all", x)

    def _sf(self, x):
        return self._given("_sf_all", x)

    def _pdf(self, x):
        if self._m_atoms is not None:  # f(x) = sum_j p_j f_X(x / m_j) / m_j
            return _over_atoms(lambda y, v: self.X._pdf_all(y / v) / v, x, *self._m_atoms)
        if self._x_atoms is not None:
            return super()._pdf(x)
        # f(x) = E[f_I(x / O) / O] over the window where the inner density is positive
        inner, outer = self._inner_outer()
        lo, hi = _window(x, *inner._support())
        return _expect_between(outer, lambda y, m: inner._pdf_all(y / m) / m, x, lo, hi)

    def _lst(self, s):
        if isinstance(self.X, Uniform) and isinstance(self.M, Uniform):
            return _memo(self, "_lst_memo", _key(s), lambda: _uniform_pair_lst(
                self.X, self.M, s, self._lst_general)).copy()
        return self._lst_general(s)

    def _lst_mp(self, s):
        if isinstance(self.X, Uniform) and isinstance(self.M, Uniform):
            return _uniform_pair_lst_mp(self.X, self.M, s)
        if self._m_atoms is not None:
            other, (values, probs) = self.X, self._m_atoms
        elif self._x_atoms is not None:
            other, (values, probs) = self.M, self._x_atoms
        else:       # the double-precision value (Distribution._mp_lst says so)
            return super()._lst_mp(s)
        return mpmath.fsum(p * other.lst(s * v)
                           for v, p in zip(values.tolist(), _mp_probs(self, probs)))

    @property
    def _mp_lst(self) -> bool:
        if isinstance(self.X, Uniform) and isinstance(self.M, Uniform):
            return True
        if self._m_atoms is not None:
            return self.X._mp_lst
        return self._x_atoms is not None and self.M._mp_lst

    def _lst_general(self, s):
        if self._m_atoms is not None:
            values, probs = self._m_atoms
            if s.size * values.size > _MIX_CHUNK:
                return _over_atoms(lambda z, v: self.X._lst(z * v), s, values, probs)
            # RIQ's transform takes several products of one X over the same slowdown values
            matrix = _memo(self.X, "_scaled_lst_memo", _key(s) + (values.tobytes(),),
                           lambda: self.X._lst(s[..., None] * values))
            return _weighted(matrix, probs)
        if self._x_atoms is not None:
            # the factor with atoms scales the other's own transform (closed forms and contour
            # quadrature stay accurate far from the real axis, where Laplace inversion looks)
            values, probs = self._x_atoms
            return _over_atoms(lambda z, v: _lst_at(self.M, z * v), s, values, probs)
        # E[lst_X(s M)] over M's quantiles, or E[lst_M(s X)] over X's where only M's transform
        # is a closed form (a quadrature inside a quadrature would cost their product)
        inner, outer = ((self.X, self.M) if self.X._closed_lst or not self.M._closed_lst
                        else (self.M, self.X))
        for first, second in ((inner, outer), (outer, inner)):
            power = _uniform_minimum_power(second, first)
            if power:
                def compute(first=first, second=second, power=power):
                    return _uniform_product_lst(first, second, power, s, lambda z: (
                        second._expect(lambda y, m: _lst_at(first, y * m), z)))

                # queue transforms ask for one runtime law several times at the same points
                return _memo(self, "_lst_memo", _key(s), compute).copy()
        out = outer._expect(lambda z, m: _lst_at(inner, z * m), s)
        return out if np.iscomplexobj(s) else out.real

    def _sample(self, size, rng):
        return self.X.sample(size, rng) * self.M.sample(size, rng)

    def _scaled(self, c):
        return product(self.X.scaled(c), self.M)


_RAY_T, _RAY_W = (array[quadrature.exp_sinh_nodes(96, 4.5)[0] > 1e-18]
                  for array in quadrature.exp_sinh_nodes(96, 4.5))
"""Exp-sinh rule for integrands that decay exponentially (step 0.047; 1e-16 on the products of
uniform laws against mpmath), without the nodes below 1e-18."""

_RAY_CHUNK = 2048
"""Values of ``s`` per block of :func:`_uniform_product_lst` (bounded memory)."""


def _ray_lst(density, s, low: float, high: float, quadrature):
    """``int_low^high exp(-s x) f(x) dx`` for a density ``f`` analytic in ``Re(x) > 0`` (given
    at complex points by ``density``) and growing at most polynomially.

    By Cauchy's theorem the segment is replaced by the two rays ``x = c + r exp(-i arg s)``
    (``c = low, high``, ``r >= 0``), along which ``exp(-s x)`` decays without oscillating:
    ``exp(-s c) / |s| int_0^inf exp(-u) f(c + u exp(-i arg s) / |s|) exp(-i arg s) du`` by the
    exp-sinh rule, the ray from ``high`` subtracted. Near the real axis (``|s| (high - low)
    <= 8``, where the two rays would cancel) and for real ``s``, ``quadrature(s)`` is used.
    """
    if not np.iscomplexobj(s):
        return quadrature(s)
    flat = np.asarray(s).ravel()
    out = np.empty(flat.size, dtype=complex)
    far = np.abs(flat) * (high - low) > 8.0
    if (~far).any():
        out[~far] = quadrature(flat[~far])
    idx = np.flatnonzero(far)
    weights = np.exp(-_ES_T) * _ES_W
    for start in range(0, idx.size, _RAY_CHUNK):
        z = flat[idx[start:start + _RAY_CHUNK], None]
        rot, size = np.exp(-1j * np.angle(z)), np.abs(z)
        step = _ES_T * rot / size
        with np.errstate(under="ignore"):
            rays = (np.exp(-z[:, 0] * low) * _weighted(density(low + step), weights)
                    - np.exp(-z[:, 0] * high) * _weighted(density(high + step), weights))
        out[idx[start:start + _RAY_CHUNK]] = rays * rot[:, 0] / size[:, 0]
    return out.reshape(np.shape(s))


_E1_SERIES = 48
"""Terms of the power series of ``E1`` for ``|z| <= 2`` (7.5e-16 absolute against mpmath, up to
1.5e-14 relative where ``E1`` is small: :func:`_e1_error`)."""

_E1_FRACTION = ((2.0, 128), (4.0, 48), (10.0, 24), (40.0, 12))
"""``(r, n)``: ``n`` terms of ``E1``'s continued fraction for ``|z| > r`` up to the next ``r``
(3e-16 relative against mpmath at each band's smallest ``|z|``, where it converges slowest,
on the whole half-plane ``Re(z) >= 0``)."""


def _e1(z: np.ndarray) -> np.ndarray:
    """The exponential integral ``E1(z) = int_z^inf exp(-t) / t dt`` for complex ``Re(z) >= 0``,
    ``z != 0``: the power series ``-gamma - log z - sum_k (-z)^k / (k k!)`` for ``|z| <= 2``,
    else ``exp(-z)`` times the continued fraction ``1 / (z + 1 - 1 / (z + 3 - 4 / (z + 5 -
    ...)))`` evaluated backwards (Abramowitz and Stegun 5.1.11 and 5.1.22). scipy's complex
    ``exp1`` is off by up to 1e-12 relative for ``1 < |z| < 20`` and worse beyond."""
    z = np.asarray(z, dtype=complex)
    out = np.empty_like(z)
    size = np.abs(z)
    small = size <= 2.0
    near = z[small]
    term, total = np.ones_like(near), np.zeros_like(near)
    for k in range(1, _E1_SERIES):
        term = term * (-near) / k
        total = total + term / k
    out[small] = -np.euler_gamma - np.log(near) - total
    bounds = [r for r, _ in _E1_FRACTION[1:]] + [math.inf]
    for (low, n), high in zip(_E1_FRACTION, bounds):
        band = (size > low) & (size <= high)
        far = z[band]
        tail = np.zeros_like(far)
        for k in range(n, 0, -1):
            tail = k * k / (far + (2 * k + 1) - tail)
        with np.errstate(under="ignore"):
            out[band] = np.exp(-far) / (far + 1.0 - tail)
    return out


def _e1_error(z: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A bound of the rounding error of :func:`_e1`: ``8 eps`` times the sizes of the series'
    parts (``gamma + |log z| + e^|z|``) for ``|z| <= 2``, ``4 eps |E1(z)|`` beyond."""
    size = np.abs(z)
    with np.errstate(divide="ignore"):
        series = 0.6 + np.abs(np.log(np.where(size > 0, z, 1.0))) + np.exp(np.minimum(size, 2.0))
    eps = np.finfo(float).eps
    return np.where(size <= 2.0, 8 * eps * series, 4 * eps * np.abs(value))


def _uniform_pair_terms(X: Uniform, M: Uniform, s, number, e1, log, euler):
    """The terms whose sum is ``s (b - a) (B - A) E[exp(-s X M)]`` for ``X ~ Uniform(a, b)``,
    ``M ~ Uniform(A, B)``: ``int_a^b int_A^B exp(-s x m) dm dx = (1/s) int_a^b (exp(-s A x) -
    exp(-s B x)) / x dx``, that is ``E1(saA) - E1(sbA) - E1(saB) + E1(sbB)`` when ``a, A > 0``
    (``ln(b/a)`` or ``ln(B/A)`` replaces the pair whose argument is 0; ``Ein(sbB) = E1(sbB) +
    ln(sbB) + gamma`` when both lower ends are 0). ``number`` converts the ends (to mpmath)."""
    (a, b), (A, B) = sorted([(X.low, X.high), (M.low, M.high)], reverse=True)
    a, b, A, B = number(a), number(b), number(A), number(B)
    if A > 0:
        return [e1(s * a * A), -e1(s * b * A), -e1(s * a * B), e1(s * b * B)]
    if a > 0:
        return [log(b / a), -e1(s * a * B), e1(s * b * B)]
    return [e1(s * b * B), log(s * b * B), euler]


_PAIR_ERROR = 1e-15
"""Largest rounding error (the terms' bounds, :func:`_e1_error`, over ``|s| (b - a) (B - A)``)
accepted from the closed form of a product of two uniform laws; elsewhere (near ``s = 0`` and
where narrow laws make the terms cancel) quadrature answers."""


def _uniform_pair_lst(X: Uniform, M: Uniform, s: np.ndarray, fallback) -> np.ndarray:
    """``E[exp(-s X M)]`` for independent uniform ``X`` and ``M``, in closed form through the
    exponential integral (:func:`_uniform_pair_terms`) wherever its rounding error is at most
    ``_PAIR_ERROR``, by ``fallback(s)`` at the other points. The closed form replaces 2e9
    complex exponentials of the quadrature along rays for a batch's wait distribution.

    References
    ----------
    M. Abramowitz and I. A. Stegun, Handbook of Mathematical Functions, 1964, eq. 5.1.1.
    """
    flat = np.asarray(s, dtype=complex).ravel()
    out = np.empty(flat.size, dtype=complex)
    norm = flat * ((X.high - X.low) * (M.high - M.low))
    far = np.abs(flat) * (X.high * M.high) > 1.0
    bounds = []

    def e1(z):
        value = _e1(z)
        bounds.append(_e1_error(z, value))
        return value

    terms = _uniform_pair_terms(X, M, flat[far], float, e1, np.log, np.euler_gamma)
    error = sum(bounds) + 4 * np.finfo(float).eps * sum(np.abs(t) for t in terms)
    good = ~far
    good[far] = error <= _PAIR_ERROR * np.abs(norm[far])
    out[far] = sum(terms) / norm[far]
    # in units of b B (moments of X / b and M / B in [0, 1]: no overflow at any scale)
    total, power = np.zeros(flat.size - far.sum(), dtype=complex), 1.0
    z = -flat[~far] * (X.high * M.high)
    for k, (mx, mm) in enumerate(zip(*(itertools.islice(_uniform_moments(U, float), _PAIR_SERIES)
                                     for U in (X.scaled(1 / X.high), M.scaled(1 / M.high))))):
        total += power * (mx * mm)
        power = power * z / (k + 1)
    out[~far] = total
    if (~good).any():
        out[~good] = fallback(flat[~good])
    out = out.reshape(np.shape(s))
    return out if np.iscomplexobj(s) else out.real


def _uniform_pair_lst_mp(X: Uniform, M: Uniform, s):
    """:func:`_uniform_pair_lst` at the mpmath working precision: the moment series where
    ``|s| b B <= 1``, else the closed form with as many guard digits as its terms cancel."""
    if abs(s) * X.high * M.high <= 1:
        # the k-th term is at most (|s| b B)^k / k! <= 1 / k!, and |E[exp(-s X M)]| >=
        # Re(...) >= cos(1) / e > 0.1 there, so a bound below eps / 10 ends the sum
        moments = zip(*(_uniform_moments(U, mpmath.mpf) for U in (X, M)))
        total, power, bound = mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1)
        for k, (mx, mm) in enumerate(moments):
            total += power * mx * mm
            power *= -s / (k + 1)
            bound *= abs(s) * X.high * M.high / (k + 1)
            if bound <= mpmath.eps / 10:
                return total
    width = (mpmath.mpf(X.high) - X.low) * (mpmath.mpf(M.high) - M.low)
    guard = 10
    while True:
        with mpmath.workdps(mpmath.mp.dps + guard):
            terms = _uniform_pair_terms(X, M, s, mpmath.mpf, mpmath.e1, mpmath.log,
                                        mpmath.euler)
            total = mpmath.fsum(terms)
            lost = mpmath.log10(mpmath.fsum(abs(t) for t in terms) / abs(total))
            if lost <= guard - 5:
                value = total / (s * width)
                break
        guard = int(lost) + 10
    return +value


_PAIR_SERIES = 28
"""Terms of ``E[exp(-s X M)] = sum_k (-s)^k E[X^k] E[M^k] / k!`` for ``|s| b B <= 1`` (the
``k``-th term is at most ``1 / k!``: 1e-28 at the last)."""


def _uniform_moments(U: Uniform, number):
    """``E[U^k] = (b^(k+1) - a^(k+1)) / ((k + 1) (b - a))`` for ``k = 0, 1, ...``, as ``sum_j
    b^j a^(k-j) / (k + 1)`` through ``S_k = b S_(k-1) + a^k`` (positive terms: no cancellation
    for narrow laws), in the type ``number`` (float or mpmath)."""
    a, b = number(U.low), number(U.high)
    total, power, k = number(0), number(1), 0
    while True:
        total = b * total + power
        power = power * a
        k += 1
        yield total / k


def _uniform_minimum_power(U: Distribution, inner: Distribution) -> int:
    """``i`` when ``U`` is the minimum of ``i`` uniform laws and ``E[lst_inner(s U)]`` can be
    taken along rays by :func:`_uniform_product_lst`, else 0: ``inner`` needs a closed-form
    transform and, for ``i >= 2``, a positive lower bound (so that its transform decays
    exponentially along the rays, against the polynomial density of ``U``)."""
    i = 1
    if isinstance(U, _Minimum):
        U, i = U.base, U.i
    if not (isinstance(U, Uniform) and inner._closed_lst):
        return 0
    if i > 1 and not float(inner._ppf_all(np.zeros(1))[0]) > 0:
        return 0
    return i


def _uniform_product_lst(inner: Distribution, U: Distribution, i: int, s: np.ndarray,
                         quadrature):
    """``E[lst_I(s M)]`` for ``M`` the minimum of ``i`` laws ``Uniform(A, B)`` (density
    ``p(m) = i (B - m)^(i-1) / (B - A)^i`` on ``[A, B]``) and ``I`` with a closed-form
    transform.

    Far from the real axis ``lst_I(s m)`` oscillates in ``m`` and quadrature over ``m`` needs
    thousands of nodes. There the integral is taken along rays instead: ``lst_I(s m) p(m)`` is
    analytic in ``m`` and, along ``m = c + r / s`` (``r >= 0``), decays without oscillating
    (``lst_I`` vanishes as ``Re(w) -> inf`` for ``I > 0``; a constant atom at 0 cancels for
    ``i = 1``; for ``i >= 2``, ``I >= delta > 0`` gives ``|lst_I(w)| <= exp(-delta Re w)``),
    so by Cauchy's theorem ``int_A^B lst_I(s m) p(m) dm = (1/s) int_0^inf [lst_I(sA + r)
    p(A + r/s) - lst_I(sB + r) p(B + r/s)] dr`` (exp-sinh rule, scaled by ``E[I]``). Near the
    real axis (``|s| (B - A) E[I] <= 8``, where the two rays would cancel) ``quadrature(s)``
    is used.
    """
    base = U.base if isinstance(U, _Minimum) else U
    A, B = base.low, base.high
    width = B - A
    scale = inner.mean()
    scale = scale if math.isfinite(scale) and scale > 0 else 1.0
    flat = np.asarray(s, dtype=complex).ravel()
    out = np.empty(flat.size, dtype=complex)
    far = np.abs(flat) * width * scale > 8.0
    if (~far).any():
        out[~far] = quadrature(flat[~far])
    idx = np.flatnonzero(far)
    delta = float(inner._support()[0])
    if delta > 0:
        # an integrand that decays like exp(-delta r): a coarser rule suffices, and beyond
        # r = 745 / delta the transform underflows (while the density may overflow)
        r, weights = _RAY_T / scale, _RAY_W
        keep = r * delta < 745.0
        r, weights = r[keep], weights[keep]
    else:
        r, weights = _ES_T / scale, _ES_W

    def density(m):
        return i * ((B - m) / width) ** (i - 1) / width

    for start in range(0, idx.size, _RAY_CHUNK):
        z = flat[idx[start:start + _RAY_CHUNK], None]
        g = (_lst_at(inner, z * A + r) * density(A + r / z)
             - _lst_at(inner, z * B + r) * density(B + r / z))
        out[idx[start:start + _RAY_CHUNK]] = _weighted(g, weights) / (scale * z[:, 0])
    out = out.reshape(np.shape(s))
    return out if np.iscomplexobj(s) else out.real


def product(X, M) -> Distribution:
    """Law of ``X * M`` for independent non-negative ``X`` and ``M`` with ``M > 0``.

    Exact sums where either factor has finitely many atoms (a :class:`Discrete` law when both
    do); a :class:`Mixture` factor distributes (the mixture of the products with its
    components); otherwise expectations by adaptive tanh-sinh quadrature over ``M``'s
    quantiles, to about 1e-13. Moments are exact products.

    Parameters
    ----------
    X, M : Distribution or scipy frozen distribution
        The factors; ``M`` must be > 0 with probability 1.

    Returns
    -------
    Distribution
        The law of the product, with CDF, tail, quantiles, moments and LST.

    Examples
    --------
    >>> from queuetheory import Discrete, Exponential, Uniform, product
    >>> product(Exponential(1.0), Discrete([1, 3], [0.5, 0.5])).mean()
    2.0
    >>> P = product(Exponential(1.0), Uniform(1.0, 2.0))   # P(X M > x) = E[exp(-x / M)]
    >>> round(P.sf(1.0), 12)    # int_1^2 exp(-1/m) dm = 0.50479221787318398754 (mpmath.quad)
    0.504792217873
    """
    X, M = as_distribution(X), as_distribution(M)
    if float(M.cdf(0.0)) > 0:
        raise ValueError("M must be > 0 with probability 1 (it has mass at 0)")
    if isinstance(M, Deterministic):
        return X.scaled(M.value)
    if isinstance(X, Deterministic):
        return M.scaled(X.value)
    x_atoms, m_atoms = X.atoms, M.atoms
    if x_atoms is not None and m_atoms is not None and x_atoms[0].size * m_atoms[0].size <= 10**6:
        return Discrete(np.multiply.outer(x_atoms[0], m_atoms[0]).ravel(),
                        np.multiply.outer(x_atoms[1], m_atoms[1]).ravel())
    # a mixture factor distributes, exactly: the quadrature over the quantiles of a mixture
    # whose support has a gap (its quantile function jumps) had erred (Erlang(2, 2) times
    # 0.7 Uniform(0.5, 1) + 0.3 Uniform(2, 3): P(X M > t) 1.7e-5 to 4.2e-5 relative off at t = 1
    # to 5, the M/G/1 sojourn's tail 0 from t = 40 on; found by an independent review)
    for mixture, other, first in ((M, X, False), (X, M, True)):
        if isinstance(mixture, Mixture):
            parts = [(c, w) for c, w in zip(mixture.components, mixture.weights) if w > 0]
            return Mixture([product(c, other) if first else product(other, c) for c, _ in parts],
                           [w for _, w in parts])
    return _Product(X, M)


class _Minimum(Distribution):
    """Minimum of ``i`` independent copies of a distribution (numerical fallback)."""

    def __init__(self, base: Distribution, i: int):
        self.base, self.i = base, i
        self.discrete = base.discrete
        self._has_atoms = base._has_atoms
        self._smooth = base._smooth
        self._atom_low = base._atom_low
        self._closed_lst = isinstance(base, (Uniform, BoundedPareto))

    def __repr__(self):
        return f"{self.base!r}.minimum({self.i})"

    def _support(self):
        return self.base._support()

    def _kinks(self):
        return self.base._kinks()

    @property
    def atoms(self):
        base = self.base.atoms
        return None if base is None else Discrete(*base).minimum(self.i).atoms

    def _point_masses(self):
        masses = self.base._point_masses()
        if masses is None or masses[0].size == 0:
            return masses
        values, probs = masses
        above = self.base._sf_all(values)          # P(min > v) = P(X > v)^i
        return values, (above + probs) ** self.i - above**self.i

    def _sf(self, x):
        return self.base._sf_all(x) ** self.i

    def _moment(self, k):
        if isinstance(self.base, BoundedPareto):
            value = self.base._minimum_moment(self.i, k)
        elif self._exponential_terms is not None:
            value = _minimum_exponential_moment(*self._exponential_terms, k)
        else:
            value = None
        return super()._moment(k) if value is None else value

    def _cdf(self, x):
        # 1 - P(X > x)^i = -expm1(i log P(X > x)), the logarithm from the CDF where it is
        # small (1 - (1 - 5e-7)^2 had lost 10 digits)
        cdf = self.base._cdf_all(x)
        with np.errstate(divide="ignore"):
            log_sf = np.where(cdf <= 0.5, np.log1p(-np.minimum(cdf, 0.5)),
                              np.log(self.base._sf_all(x)))
        return -np.expm1(self.i * log_sf)

    def _pdf(self, x):
        return self.i * self.base._pdf_all(x) * self.base._sf_all(x) ** (self.i - 1)

    def _ppf(self, q):
        # levels above 1/2 through the tail, 1 - q exact there (the base's level next to 1
        # would round its tail: 1 - 1e-12 for two copies is the base's 1 - 1e-6 to 1e-10)
        q = np.asarray(q, dtype=float)
        upper = q > 0.5
        out = np.empty(q.shape)
        out[upper] = self._isf(1.0 - q[upper])
        out[~upper] = self.base._ppf_all(-np.expm1(np.log1p(-q[~upper]) / self.i))
        return out

    def _isf(self, p):
        return self.base._isf_all(p ** (1.0 / self.i))

    def _lst(self, s):
        if np.iscomplexobj(s) and self._exponential_terms is not None:
            return _minimum_exponential_lst(*self._exponential_terms, s)
        if isinstance(self.base, BoundedPareto):
            base, i = self.base, self.i
            return _ray_lst(lambda z: base._minimum_density([i], [1.0], z), s, base.low,
                            base.high, super()._lst)
        if not isinstance(self.base, Uniform):
            return super()._lst(s)
        # the minimum of uniform laws: along rays, as the product with the unit atom
        return _uniform_product_lst(Deterministic(1.0), self, self.i, s, super()._lst)

    @cached_property
    def _exponential_terms(self):
        """The pieces of a base law of atoms and exponentials (:func:`_exponential_pieces`) and
        the powers ``E^m``, ``m <= i``, of its exponential part (:func:`_exponential_powers`);
        ``None`` for other laws or too many terms."""
        pieces = _exponential_pieces(self.base)
        if pieces is None:
            return None
        powers = _exponential_powers(pieces[2], pieces[3], self.i)
        return None if powers is None else (pieces, powers, self.i)

    def _sample(self, size, rng):
        n = 1 if size is None else size
        draws = self.base.sample((self.i, *np.atleast_1d(n)), rng).min(axis=0)
        return float(draws[0]) if size is None else draws.reshape(size)

    def _scaled(self, c):
        return _Minimum(self.base.scaled(c), self.i)


_EXP_TERMS_MAX = 4096
"""Most exponentials in the powers of :func:`_exponential_powers` (beyond, the minimum's
transform is the generic quadrature)."""


def _exponential_pieces(law: Distribution):
    """``P(X > x) = c_j + sum_k w_k exp(-mu_k x)`` on ``[b_j, b_(j+1))`` for a law made of atoms
    and exponentials (:meth:`Distribution._phases` of one phase each: ``Discrete``,
    ``Exponential``, ``HyperExponential`` and mixtures of them): ``(b, c, w, mu)`` with ``b``
    from 0 through the atoms to ``inf`` and ``c_j`` the mass of the atoms above the piece;
    ``None`` for any other law."""
    masses, form = law._point_masses(), law._phases()
    if (masses is None or (masses[0].size and masses[0][0] <= 0) or form is None
            or np.any(form[2] != 1)):
        return None
    values, mass = masses
    above = np.append(np.cumsum(mass[::-1])[::-1], 0.0)      # mass of the atoms >= b_(j+1)
    return np.concatenate([[0.0], values, [np.inf]]), above, form[0], form[1]


def _exponential_powers(weights: np.ndarray, rates: np.ndarray, i: int):
    """``E^m`` for ``m = 0..i`` of ``E(x) = sum_k w_k exp(-mu_k x)``, each as ``(rates,
    coefficients)`` (equal rates merged), or ``None`` beyond ``_EXP_TERMS_MAX`` terms."""
    powers = [(np.zeros(1), np.ones(1))]
    for _ in range(i):
        nu, coef = powers[-1]
        nu = np.add.outer(nu, rates).ravel()
        coef = np.multiply.outer(coef, weights).ravel()
        nu, where = np.unique(nu, return_inverse=True)
        coef = np.bincount(where, weights=coef, minlength=nu.size)
        if nu.size > _EXP_TERMS_MAX:
            return None
        powers.append((nu, coef))
    return powers


def _minimum_exponential_lst(pieces, powers, i: int, s) -> np.ndarray:
    """The transform of the minimum of ``i`` copies of a law of :func:`_exponential_pieces`,
    ``1 - s int_0^inf exp(-s x) P(X > x)^i dx`` (integration by parts, the atoms in the jumps
    of the tail), in closed form: on each piece ``(c_j + E)^i = sum_m C(i, m) c_j^(i-m) E^m``
    (:func:`_exponential_powers`), each exponential integrated exactly. The generic quadrature
    in probability space took 0.36 ms per value (``0.5 Det(1) + 0.5 Exp(0.5)``, i = 2)."""
    bounds, above, _, _ = pieces
    flat = np.asarray(s, dtype=complex).ravel()
    out = np.empty(flat.size, dtype=complex)
    step = max(1, (1 << 18) // sum(nu.size for nu, _ in powers))
    for start in range(0, flat.size, step):
        z0 = flat[start:start + step, None]
        total = np.zeros(z0.shape[0], dtype=complex)
        for j in range(bounds.size - 1):
            lo, hi, c = bounds[j], bounds[j + 1], above[j]
            for m in range(i + 1) if c > 0 else (i,):
                nu, coef = powers[m]
                factor = math.comb(i, m) * c ** (i - m)
                z = z0 + nu
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    head = np.exp(-z * lo)
                    if math.isinf(hi):
                        part = head / z
                    else:
                        width = hi - lo
                        part = np.where(z == 0, width, head * -np.expm1(-z * width)
                                        / np.where(z == 0, 1.0, z))
                total += factor * (part @ coef)
        out[start:start + step] = 1.0 - flat[start:start + step] * total
    return out.reshape(np.shape(s))


def _minimum_exponential_moment(pieces, powers, i: int, k: float) -> float:
    """``E[min^k]`` of ``i`` copies of a law of :func:`_exponential_pieces`: ``int_0^inf k
    t^(k-1) P(X > t)^i dt`` with, on each piece, ``(c_j + E)^i = sum_m C(i, m) c_j^(i-m) E^m``
    and each exponential integrated exactly, ``int_lo^hi k t^(k-1) exp(-nu t) dt = Gamma(k + 1)
    nu^-k (Q(k, nu lo) - Q(k, nu hi))`` (``hi^k - lo^k`` at ``nu = 0``): a sum of positive
    terms. The generic quadrature took 50 ms per moment (RIQ(50)'s mean, 100 of them)."""
    bounds, above, _, _ = pieces
    total = 0.0
    for j in range(bounds.size - 1):
        lo, hi, c = bounds[j], bounds[j + 1], above[j]
        for m in range(i + 1) if c > 0 else (i,):
            nu, coef = powers[m]
            factor = math.comb(i, m) * c ** (i - m)
            positive = nu > 0
            with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
                n = nu[positive]
                part = np.zeros(nu.shape)
                part[positive] = (special.gamma(k + 1) * n ** -k
                                  * (special.gammaincc(k, n * lo) - special.gammaincc(k, n * hi)))
                part[~positive] = hi ** k - lo ** k
            total += factor * float(part @ coef)
    return total


class _Scaled(Distribution):
    """``c * X`` for a distribution without a closed-form scaling."""

    def __init__(self, base: Distribution, c: float):
        self.base, self.c = base, c
        self.discrete = base.discrete
        self._has_atoms = base._has_atoms
        self._closed_lst = base._closed_lst
        self._smooth = base._smooth
        self._piecewise_linear = base._piecewise_linear
        self._atom_low = base._atom_low

    def __repr__(self):
        return f"{self.base!r}.scaled({self.c!r})"

    def _support(self):
        a, b = self.base._support()
        return self.c * a, self.c * b

    def _kinks(self):
        return tuple(self.c * c for c in self.base._kinks())

    @property
    def atoms(self):
        base = self.base.atoms
        return None if base is None else (self.c * base[0], base[1])

    def _point_masses(self):
        masses = self.base._point_masses()
        return None if masses is None else (self.c * masses[0], masses[1])

    def _cdf(self, x):
        return self.base._cdf_all(x / self.c)

    def _sf(self, x):
        return self.base._sf_all(x / self.c)

    def _pdf(self, x):
        return self.base._pdf_all(x / self.c) / self.c

    def _stop_loss(self, y):
        return self.c * self.base._stop_loss_all(y / self.c)

    def _ppf(self, q):
        return self.c * self.base._ppf_all(q)

    def _isf(self, p):
        return self.c * self.base._isf_all(p)

    def _moment(self, k):
        return self.c**k * self.base.moment(k)

    def _mean_exact(self):
        base = self.base._mean_exact()
        return None if base is None else Fraction(self.c) * base

    def _lst(self, s):
        return self.base._lst(self.c * s)

    def _lst_mp(self, s):
        return self.base.lst(self.c * s)

    @property
    def _mp_lst(self) -> bool:
        return self.base._mp_lst

    def _sample(self, size, rng):
        return self.c * self.base._sample(size, rng)

    def _scaled(self, c):
        return self.base.scaled(self.c * c)


class _SciPy(Distribution):
    """Adapter for a frozen :mod:`scipy.stats` distribution with support in ``[0, inf)``."""

    def __init__(self, frozen):
        self.frozen = frozen
        self.discrete = hasattr(frozen.dist, "pmf") and not hasattr(frozen.dist, "pdf")
        self._has_atoms = self.discrete
        low, high = frozen.support()
        if not low >= 0:
            raise ValueError(f"the distribution must be supported on [0, inf), its support "
                             f"starts at {low}")
        self._smooth = not self.discrete and low == 0 and high == np.inf
        self._atom_low = self.discrete
        self._ends = float(low), float(high)

    def __repr__(self):
        args = ", ".join(map(repr, self.frozen.args))
        kwds = ", ".join(f"{k}={v!r}" for k, v in self.frozen.kwds.items())
        return f"from_scipy({self.frozen.dist.name}({', '.join(x for x in (args, kwds) if x)}))"

    def _support(self):
        return self._ends

    def _cdf(self, x):
        return self.frozen.cdf(x)

    def _sf(self, x):
        return self.frozen.sf(x)

    def _pdf(self, x):
        return self.frozen.pdf(x)

    def pmf(self, x):
        """Probability mass function (discrete scipy distributions only)."""
        return self.frozen.pmf(x)

    def _ppf(self, q):
        return self.frozen.ppf(q)

    def _isf(self, p):
        return self.frozen.isf(p)

    def _moment(self, k):
        value = float(self.frozen.moment(k))
        return value if math.isfinite(value) else math.inf

    def _sample(self, size, rng):
        return self.frozen.rvs(size=size, random_state=rng)

    @cached_property
    def _atoms(self):
        """``(values, probs)`` of a discrete law with at most 10**6 atoms below its
        ``1 - 1e-18`` quantile (scipy's discrete laws live on ``loc`` + integers, or on the
        sample points ``xk`` of ``rv_discrete(values=...)``); ``None`` otherwise."""
        if not self.discrete:
            return None
        low, high = self.frozen.support()
        xk = getattr(self.frozen.dist, "xk", None)
        if xk is not None:
            values = np.asarray(xk, dtype=float) + (low - np.min(xk))
        else:
            top = low + 1.0
            while top < high and self.frozen.sf(top) > 1e-18:
                if top - low > 1e6:
                    return None
                top = low + 2.0 * (top - low)
            top = min(top, high)
            values = low + np.arange(int(round(top - low)) + 1, dtype=float)
        probs = self.frozen.pmf(values)
        return values[probs > 0], probs[probs > 0]

    @cached_property
    def _nodes(self):
        """Exact atoms for a discrete law (so LSTs and products are sums), else tanh-sinh."""
        return self._atoms if self._atoms is not None else super()._nodes

    def _lst(self, s):
        if self._atoms is None:
            return super()._lst(s)
        return _over_atoms(lambda z, v: np.exp(-z * v), s, *self._atoms)

    def _minimum(self, i):
        if self._atoms is None:
            return super()._minimum(i)
        return Discrete(*self._atoms).minimum(i)


def from_scipy(frozen) -> Distribution:
    """Wrap a frozen :mod:`scipy.stats` distribution supported on ``[0, inf)``.

    Its own ``cdf``, ``sf``, ``ppf``, ``moment`` and ``rvs`` are used; the Laplace-Stieltjes
    transform comes from adaptive (nested) tanh-sinh quadrature in probability space, accurate
    to about 1e-13 also far from the real axis, where Laplace inversion evaluates it.

    Parameters
    ----------
    frozen : scipy.stats frozen distribution
        A frozen distribution (such as ``stats.gamma(2.0)``) whose support starts at >= 0.

    Returns
    -------
    Distribution
        A queuetheory distribution backed by ``frozen``.

    Raises
    ------
    ValueError
        If ``frozen`` is not a frozen scipy.stats distribution, or its support starts below 0.

    Examples
    --------
    >>> from scipy import stats
    >>> from queuetheory import from_scipy
    >>> G = from_scipy(stats.gamma(2.0, scale=0.5))
    >>> G.mean(), round(float(G.lst(1.0)), 10)
    (1.0, 0.4444444444)
    """
    if not (hasattr(frozen, "dist") and hasattr(frozen, "cdf") and hasattr(frozen, "rvs")):
        raise ValueError(f"expected a frozen scipy.stats distribution, got {frozen!r}")
    return _SciPy(frozen)


def as_distribution(obj) -> Distribution:
    """Return ``obj`` if it is a queuetheory distribution; wrap a frozen scipy distribution.

    Parameters
    ----------
    obj : Distribution or scipy.stats frozen distribution
        A queuetheory distribution, or a frozen :mod:`scipy.stats` distribution whose support
        starts at >= 0.

    Returns
    -------
    Distribution
        ``obj`` itself if it is a :class:`Distribution`, otherwise ``from_scipy(obj)``.

    Raises
    ------
    ValueError
        If ``obj`` is neither, or a scipy distribution whose support starts below 0.

    Examples
    --------
    >>> from scipy import stats
    >>> from queuetheory import Exponential, as_distribution
    >>> X = Exponential(2.0)
    >>> as_distribution(X) is X
    True
    >>> as_distribution(stats.expon(scale=0.5))
    from_scipy(expon(scale=0.5))
    """
    if isinstance(obj, Distribution):
        return obj
    if hasattr(obj, "dist") and hasattr(obj, "cdf"):
        return from_scipy(obj)
    raise ValueError(f"expected a queuetheory distribution or a frozen scipy.stats distribution, "
                     f"got {obj!r}")


def _read_csv_numbers(path) -> list[float]:
    try:
        # utf-8-sig: a byte-order mark written by spreadsheet programs is not part of the data
        with open(path, encoding="utf-8-sig") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError as exc:
        raise ValueError(f"data: cannot read the file {os.fspath(path)!r}: "
                         f"{exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise ValueError(f"data: the file {os.fspath(path)!r} is not UTF-8 text") from None
    numbers: list[float] = []
    for n, line in enumerate(lines):
        cells = [c.strip() for c in line.split(",") if c.strip()]
        try:
            numbers.extend(float(c) for c in cells)
        except ValueError:
            if n == 0:
                continue
            raise ValueError(f"{os.fspath(path)}: line {n + 1} is not numeric: {line!r}") from None
    if not numbers:
        raise ValueError(f"{os.fspath(path)}: the file holds no numeric samples")
    return numbers
