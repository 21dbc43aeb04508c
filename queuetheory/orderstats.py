"""Order statistics: the law of the ``r``-th smallest of ``n`` independent variables.

:class:`OrderStatistic` is a :class:`~queuetheory.distributions.Distribution`, so it has
``cdf``, ``sf``, ``pdf``, ``ppf``, ``moment``, ``mean``, ``lst`` and ``sample`` like every other
law in the package. It never uses inclusion-exclusion (whose alternating sums cancel
catastrophically beyond ``n ~ 15``):

* identical variables with CDF ``F`` and survival function ``S``:
  ``P(X_(r) <= t) = P(Binomial(n, F(t)) >= r) = I_{F(t)}(r, n - r + 1)`` and
  ``P(X_(r) > t) = I_{S(t)}(n - r + 1, r)``, with ``I`` the regularised incomplete beta
  function (:func:`scipy.special.betainc`); both are sums of positive terms, accurate to
  round-off for any ``n``;
* non-identical variables: the number of variables ``<= t`` has a Poisson-binomial law, computed
  by the usual dynamic programme over the variables (vectorised over ``t``), truncated at ``r``
  (or at ``n - r + 1`` for the count of unfinished variables, whichever is smaller): again only
  products and sums of probabilities, ``O(n min(r, n - r + 1))`` per time point;
* exponential and shifted exponential variables: the exact Renyi representation
  ``X_(r) = shift + sum_{j=0}^{r-1} E_j / ((n - j) a)`` with independent standard exponentials
  ``E_j`` gives the harmonic-number mean, every moment (through the cumulants) and the LST.

Moments of other laws integrate ``k t^(k-1) P(X_(r) > t)`` with adaptive quadrature on pieces
bounded by quantiles of ``X_(r)`` itself (exact finite sums for discrete laws).

References
----------
.. [1] H. A. David and H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, eq. (2.1.3)
   (binomial form of the CDF) and Section 2.5 (Renyi representation of exponential order
   statistics).
.. [2] Y. H. Wang, "On the number of successes in independent trials", Statistica Sinica 3,
   1993 (the Poisson-binomial law).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mpmath
import numpy as np
from scipy import special

from . import _checks
from .distributions import Distribution, Exponential, ShiftedExponential, as_distribution
from .quadrature import moment_from_sf

__all__ = ["OrderStatistic", "harmonic", "exponential_mean", "iid_cdf", "iid_sf",
           "smallest_sum_mean"]

_PIECE_LEVELS = (1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 1 - 1e-6, 1 - 1e-10,
                 1 - 1e-13, 1 - 1e-16)
"""Quantile levels of ``X_(r)`` that bound the pieces of the moment quadrature."""



def harmonic(n: int) -> float:
    """The harmonic number ``H_n = 1 + 1/2 + ... + 1/n`` (``H_0 = 0``).

    Parameters
    ----------
    n : int
        Non-negative integer.

    Returns
    -------
    float
        ``H_n``, correctly rounded sum (``math.fsum``).

    Examples
    --------
    >>> from queuetheory.orderstats import harmonic
    >>> harmonic(0), harmonic(1), harmonic(4)
    (0.0, 1.0, 2.0833333333333335)
    """
    n = _checks.positive_int("n", n, minimum=0)
    return math.fsum(1.0 / j for j in range(1, n + 1))


def exponential_mean(r: int, n: int, rate: float, shift: float = 0.0) -> float:
    """Mean of the ``r``-th smallest of ``n`` i.i.d. ``shift + Exponential(rate)`` variables.

    ``shift + sum_{j=0}^{r-1} 1 / ((n - j) rate) = shift + (H_n - H_{n-r}) / rate``.

    Parameters
    ----------
    r : int
        Rank, ``1 <= r <= n``.
    n : int
        Number of variables, >= 1.
    rate : float
        Exponential rate, > 0.
    shift : float, optional
        Constant added to every variable, >= 0.

    Returns
    -------
    float
        ``E[X_(r)]``.

    Examples
    --------
    The maximum of 3 standard exponentials has mean ``H_3 = 11/6``:

    >>> from queuetheory.orderstats import exponential_mean
    >>> round(exponential_mean(3, 3, 1.0), 12)
    1.833333333333

    References
    ----------
    .. [1] H. A. David and H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, Section 2.5.
    """
    r, n = _rank("r", r, n)
    rate = _checks.positive("rate", rate)
    shift = _checks.nonnegative("shift", shift)
    return shift + math.fsum(1.0 / ((n - j) * rate) for j in range(r))


def iid_cdf(r: int, n: int, F):
    """``P(X_(r) <= t)`` of ``n`` i.i.d. variables from their CDF value ``F = F(t)``.

    ``P(Binomial(n, F) >= r) = I_F(r, n - r + 1)`` (regularised incomplete beta function).

    Parameters
    ----------
    r, n : int
        Rank and number of variables, ``1 <= r <= n``.
    F : float or array_like
        Values of the common CDF, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        The CDF of the order statistic.

    Examples
    --------
    >>> from queuetheory.orderstats import iid_cdf
    >>> float(iid_cdf(2, 2, 0.5))   # maximum of two: F^2
    0.25
    """
    r, n = _rank("r", r, n)
    return special.betainc(r, n - r + 1, np.clip(F, 0.0, 1.0))


def iid_sf(r: int, n: int, S):
    """``P(X_(r) > t)`` of ``n`` i.i.d. variables from their survival value ``S = P(X > t)``.

    ``P(Binomial(n, S) >= n - r + 1) = I_S(n - r + 1, r)``: accurate in the far tail, where
    ``1 - iid_cdf`` would lose every digit.

    Parameters
    ----------
    r, n : int
        Rank and number of variables, ``1 <= r <= n``.
    S : float or array_like
        Values of the common survival function, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        The survival function of the order statistic.

    Examples
    --------
    >>> from queuetheory.orderstats import iid_sf
    >>> float(iid_sf(1, 3, 0.5))   # minimum of three: S^3
    0.125
    >>> print(f"{float(iid_sf(1000, 1000, 1e-20)):.6e}")   # maximum: 1 - (1 - S)^1000
    1.000000e-17
    """
    r, n = _rank("r", r, n)
    return special.betainc(n - r + 1, r, np.clip(S, 0.0, 1.0))


def _rank(name: str, r: int, n: int) -> tuple[int, int]:
    n = _checks.positive_int("n", n)
    r = _checks.positive_int(name, r)
    if r > n:
        raise ValueError(f"{name} must be an integer in [1, n] = [1, {n}], got {r}")
    return r, n


class OrderStatistic(Distribution):
    """Law of the ``r``-th smallest of ``n`` independent non-negative variables.

    Parameters
    ----------
    dist : Distribution, scipy frozen distribution, or sequence of them
        The common law of ``n`` i.i.d. variables, or one law per variable (then ``n`` defaults
        to the length of the sequence).
    r : int
        Rank, ``1 <= r <= n`` (``1`` is the minimum, ``n`` the maximum).
    n : int, optional
        Number of variables; required when ``dist`` is a single law.

    Attributes
    ----------
    components : tuple of Distribution
        The laws of the ``n`` variables.
    identical : bool
        ``True`` when all variables share one law (the incomplete-beta path).

    Examples
    --------
    >>> import queuetheory as qt
    >>> X = qt.orderstats.OrderStatistic(qt.Exponential(1.0), r=2, n=3)
    >>> round(X.mean(), 12)          # 1/3 + 1/2
    0.833333333333
    >>> round(X.cdf(1.0), 10)        # 3 F^2 (1 - F) + F^3 with F = 1 - e^-1
    0.693568287
    >>> Y = qt.orderstats.OrderStatistic([qt.Exponential(1.0), qt.Exponential(2.0)], r=2)
    >>> round(Y.mean(), 10)          # 1 + 1/2 - 1/3
    1.1666666667
    >>> U = qt.orderstats.OrderStatistic(qt.Uniform(0.0, 1.0), r=300, n=1000)
    >>> round(U.mean(), 10)          # r / (n + 1)
    0.2997002997

    References
    ----------
    .. [1] H. A. David and H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, eq. (2.1.3).
    """

    def __init__(self, dist, r: int, n: int | None = None):
        if isinstance(dist, Sequence) and not isinstance(dist, str):
            comps = tuple(as_distribution(d) for d in dist)
            if not comps:
                raise ValueError("dist must hold at least one distribution, got an empty list")
            if n is not None and _checks.positive_int("n", n) != len(comps):
                raise ValueError(f"n must equal the number of distributions ({len(comps)}), "
                                 f"got {n!r}")
            n = len(comps)
            identical = all(c is comps[0] for c in comps)
        else:
            if n is None:
                raise ValueError("n (the number of variables, an integer >= 1) is required "
                                 "with a single distribution")
            n = _checks.positive_int("n", n)
            comps = (as_distribution(dist),) * n
            identical = True
        self.r, self.n = _rank("r", r, n)
        self.components = comps
        self.identical = identical
        self.discrete = all(c.discrete for c in comps)
        self._has_atoms = any(c._has_atoms for c in comps)
        self._atom_low = any(c._atom_low for c in comps)
        # X_(r) lies between the r-th smallest lower and the r-th smallest upper end
        ends = np.array([c._support() for c in comps])
        self._ends = float(np.sort(ends[:, 0])[self.r - 1]), float(np.sort(ends[:, 1])[self.r - 1])
        self._renyi = self._renyi_rates() if identical else None

    def __repr__(self):
        if self.identical:
            return f"OrderStatistic({self.components[0]!r}, r={self.r}, n={self.n})"
        return f"OrderStatistic({list(self.components)!r}, r={self.r})"

    @property
    def base(self) -> Distribution:
        """The common law of the variables (identical variables only)."""
        if not self.identical:
            raise ValueError("the variables are not identically distributed: use .components")
        return self.components[0]

    # ----------------------------------------------------------------- exponential forms
    def _renyi_rates(self):
        """``(shift, rates)`` of the Renyi representation, or None for other families."""
        base = self.components[0]
        if isinstance(base, Exponential):
            shift = 0.0
        elif isinstance(base, ShiftedExponential):
            shift = base.shift
        else:
            return None
        return shift, np.array([(self.n - j) * base.rate for j in range(self.r)])

    # ----------------------------------------------------------------- hooks
    def _support(self):
        return self._ends

    def _cdf(self, x):
        if self.identical:
            return special.betainc(self.r, self.n - self.r + 1, self.base._cdf_all(x))
        below, above = self._count(x)
        return above if self._count_finished else below

    def _sf(self, x):
        if self.identical:
            return special.betainc(self.n - self.r + 1, self.r, self.base._sf_all(x))
        below, above = self._count(x)
        return below if self._count_finished else above

    def _pdf(self, x):
        if self.identical:
            r, n = self.r, self.n
            F, S = self.base._cdf_all(x), self.base._sf_all(x)
            log = (special.xlogy(r - 1, F) + special.xlogy(n - r, S)
                   - special.betaln(r, n - r + 1))
            return np.exp(log) * self.base._pdf_all(x)
        _, _, slope = self._count(x, derivative=True)
        return slope if self._count_finished else -slope

    def _ppf(self, q):
        if self.identical:
            # levels above 1/2 through the tail (1 - q exact there): the base's level near 1
            # rounds its tail (the largest of three M/M/1 sojourns at 1 - 1e-12 was 3.9e-6 off)
            q = np.asarray(q, dtype=float)
            upper = q > 0.5
            out = np.empty(q.shape)
            out[~upper] = self.base._ppf_all(special.betaincinv(self.r, self.n - self.r + 1,
                                                                q[~upper]))
            out[upper] = self._isf(1.0 - q[upper])
            return out
        return super()._ppf(q)

    def _isf(self, p):
        if self.identical:
            return self.base._isf_all(special.betaincinv(self.n - self.r + 1, self.r, p))
        return super()._isf(p)

    def _scale_hint(self):
        means = [c.mean() for c in self.components]
        finite = [m for m in means if math.isfinite(m) and m > 0]
        return max(finite) if finite else 1.0

    def _moment(self, k):
        if self._renyi is not None:
            return _shifted_hypoexponential_moment(*self._renyi, k)
        if all(c.atoms is not None for c in self.components):
            return self._discrete_moment(k)
        return self._integrated_moment(k)

    def _lst(self, s):
        if self._renyi is not None:
            shift, rates = self._renyi
            out = np.exp(-s * shift)
            for a in rates:
                out = out * (a / (a + s))
            return out
        return super()._lst(s)

    def _lst_mp(self, s):
        if self._renyi is not None:
            shift, rates = self._renyi
            out = mpmath.exp(-s * shift)
            for a in rates:
                out *= a / (a + s)
            return out
        return super()._lst_mp(s)

    def _sample(self, size, rng):
        if self.identical:
            u = rng.beta(self.r, self.n - self.r + 1, size)
            out = self.base._ppf_all(np.atleast_1d(u))
            return float(out[0]) if size is None else np.reshape(out, size)
        shape = () if size is None else tuple(np.atleast_1d(size))
        draws = np.stack([np.asarray(c.sample(shape, rng), dtype=float)
                          for c in self.components])
        out = np.partition(draws, self.r - 1, axis=0)[self.r - 1]
        return float(out) if size is None else out

    def _scaled(self, c):
        if self.identical:
            return OrderStatistic(self.base.scaled(c), self.r, self.n)
        return OrderStatistic([comp.scaled(c) for comp in self.components], self.r)

    # ----------------------------------------------------------------- non-identical laws
    @property
    def _count_finished(self) -> bool:
        """Track the count of variables <= t (True) or of those > t (False): the shorter DP."""
        return self.r <= self.n - self.r + 1

    def _count(self, x, derivative: bool = False):
        """Poisson-binomial tails of the tracked count at the times ``x``.

        Returns ``(P(count <= K - 1), P(count >= K))`` and, if asked, the time derivative of the
        second, where the count is of finished variables with ``K = r`` or of unfinished ones
        with ``K = n - r + 1``.
        """
        x = np.asarray(x, dtype=float).ravel()
        finished = self._count_finished
        K = self.r if finished else self.n - self.r + 1
        v = np.zeros((x.size, K + 1))
        v[:, 0] = 1.0
        dv = np.zeros_like(v) if derivative else None
        for comp in self.components:
            F, S = comp._cdf_all(x), comp._sf_all(x)
            p, q = (F, S) if finished else (S, F)
            if derivative:
                dp = comp._pdf_all(x) * (1.0 if finished else -1.0)
                moved_d = dv[:, :K] * p[:, None] + v[:, :K] * dp[:, None]
                dv[:, :K] = dv[:, :K] * q[:, None] - v[:, :K] * dp[:, None]
                dv[:, 1:] += moved_d
            moved = v[:, :K] * p[:, None]
            v[:, :K] *= q[:, None]
            v[:, 1:] += moved
        below, above = v[:, :K].sum(axis=1), v[:, K]
        if derivative:
            return below, above, dv[:, K]
        return below, above

    # ----------------------------------------------------------------- moments
    def _discrete_moment(self, k):
        """``sum_j (v_j^k - v_{j-1}^k) P(X_(r) > v_{j-1})`` over the support: positive terms."""
        support = np.unique(np.concatenate([c.atoms[0] for c in self.components]))
        lower = np.concatenate([[0.0], support[:-1]])
        return float(np.dot(support**k - lower**k, self._sf_all(lower)))

    def _integrated_moment(self, k):
        """``int_0^inf k t^(k-1) P(X_(r) > t) dt`` on pieces bounded by quantiles of X_(r).

        (:func:`~queuetheory.quadrature.moment_from_sf`): identical variables by adaptive
        quadrature per piece, non-identical ones by vectorised adaptive Gauss-Legendre (one
        Poisson-binomial pass per refinement round); the same tail treatment.
        """
        return moment_from_sf(self._sf_all, k, self._cuts(),
                              rule="quad" if self.identical else "adaptive")

    def _cuts(self) -> np.ndarray:
        """Times near the quantiles ``_PIECE_LEVELS`` of ``X_(r)`` (positive, finite, sorted)."""
        levels = np.array(_PIECE_LEVELS)
        with np.errstate(all="ignore"):
            if self.identical:
                cuts = np.concatenate([self.ppf(levels[levels <= 0.5]),
                                       self._isf_all(1.0 - levels[levels > 0.5])])
            else:  # a scan of a log grid: one Poisson-binomial pass instead of bisections
                grid = self._scale_hint() * 2.0 ** np.arange(-60.0, 60.25, 0.25)
                idx = np.searchsorted(-self._sf_all(grid), -(1.0 - levels))
                cuts = grid[np.minimum(idx, grid.size - 1)]
        return np.unique(cuts[np.isfinite(cuts) & (cuts > 0)])


def smallest_sum_mean(law: Distribution, count: int, of: int) -> float:
    """``E[X_(1) + ... + X_(count)]``, the sum of the ``count`` smallest of ``of`` i.i.d.
    copies of ``law``: one integral, ``int_0^inf sum_(j < count) P(Bin(of, F(t)) <= j) dt``
    (``(count - B)^+ = sum_(j < count) 1{B <= j}`` with ``B`` the number finished by ``t``;
    ``P(B <= j) = I_(P(X > t))(of - j, j + 1)``), instead of ``count`` order-statistic means;
    laws with atoms and (shifted) exponential laws: the exact sums of :class:`OrderStatistic`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.orderstats import smallest_sum_mean
    >>> round(smallest_sum_mean(qt.Exponential(1.0), 2, 3), 12)   # 1/3 + (1/3 + 1/2)
    1.166666666667
    """
    law = as_distribution(law)
    count, of = _checks.positive_int("count", count), _checks.positive_int("of", of)
    if count > of:
        raise ValueError(f"count must be an integer in [1, of] = [1, {of}], got {count}")
    if (law.atoms is not None or law._has_atoms or count == 1
            or isinstance(law, (Exponential, ShiftedExponential))):    # exact sums
        return math.fsum(OrderStatistic(law, r, of).mean() for r in range(1, count + 1))
    j = np.arange(count)

    def sf(t):
        tail = law._sf_all(t)
        return special.betainc(of - j, j + 1, tail[..., None]).sum(axis=-1) / count

    cuts = np.unique(np.concatenate([OrderStatistic(law, 1, of)._cuts(),
                                     OrderStatistic(law, count, of)._cuts()]))
    return count * moment_from_sf(sf, 1, cuts, rule="quad")


def _shifted_hypoexponential_moment(shift: float, rates: np.ndarray, k: int) -> float:
    """``E[(shift + Y)^k]`` for ``Y`` a sum of independent exponentials with these rates.

    Cumulants ``kappa_i = (i - 1)! sum_j rates_j^-i`` give the raw moments of ``Y`` through
    ``m_k = sum_{i=1}^k C(k-1, i-1) kappa_i m_{k-i}`` (all terms positive).
    """
    kappa = [0.0] + [math.factorial(i - 1) * math.fsum(rates ** -float(i)) for i in range(1, k + 1)]
    m = [1.0]
    for j in range(1, k + 1):
        m.append(math.fsum(math.comb(j - 1, i - 1) * kappa[i] * m[j - i] for i in range(1, j + 1)))
    return math.fsum(math.comb(k, j) * shift ** (k - j) * m[j] for j in range(k + 1))
