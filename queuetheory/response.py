"""Response-time distributions known through their Laplace-Stieltjes transform."""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np

from . import _checks, transforms
from .distributions import Distribution, _is_mp

__all__ = ["ResponseTime"]


class ResponseTime(Distribution):
    """A response time given by its LST, with its CDF, tail and quantiles by inversion.

    The default path inverts numerically in double precision with vectorised numpy (the
    Abate-Whitt Euler algorithm); pass ``precision=`` (decimal digits) to ``cdf``, ``sf`` or
    ``ppf`` for a high-precision value through :func:`mpmath.invertlaplace`, as a reference.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]``, for numpy arrays (real or complex) and for mpmath numbers.
    mean : float
        ``E[T]`` from its closed form (``inf`` allowed).
    second_moment : float, optional
        ``E[T^2]`` if known in closed form; otherwise computed from the tail when asked.
    stable : bool
        ``False`` for an unstable system: every response time is infinite.

    Examples
    --------
    >>> import queuetheory as qt
    >>> T = qt.ResponseTime(lambda s: 0.5 / (0.5 + s), mean=2.0)   # M/M/1, mu - lam = 0.5
    >>> round(T.cdf(2.0), 9), round(T.ppf(0.99), 6)
    (0.632120559, 9.21034)
    >>> qt.ResponseTime.unstable().ppf(0.5)
    inf
    """

    def __init__(self, lst: Callable, mean: float, *, second_moment: float | None = None,
                 stable: bool = True):
        self._transform = lst
        self._mean = float(mean)
        self._second = None if second_moment is None else float(second_moment)
        self.stable = bool(stable)

    @classmethod
    def unstable(cls) -> ResponseTime:
        """The response time of an unstable system: infinite with probability 1."""
        return cls(lambda s: 0 * s, math.inf, second_moment=math.inf, stable=False)

    def __repr__(self):
        return f"ResponseTime(mean={self._mean!r}, stable={self.stable})"

    def cdf(self, x, precision: int | None = None):
        """``P(T <= x)``; ``precision`` (digits, >= 15) selects the mpmath path."""
        return self._invert(x, precision, transforms.invert_cdf, transforms.invert_cdf_mp, 0.0)

    def sf(self, x, precision: int | None = None):
        """``P(T > x)``; ``precision`` (digits, >= 15) selects the mpmath path."""
        return self._invert(x, precision, transforms.invert_sf, transforms.invert_sf_mp, 1.0)

    def ppf(self, q, precision: int | None = None):
        """Quantile ``inf{t : P(T <= t) >= q}``, q in (0, 1); ``inf`` for an unstable system."""
        arr = _checks.probability_level("q", q)
        if not self.stable:
            out = np.full(arr.shape, math.inf)
        elif precision is None:
            out = np.asarray(transforms.invert_quantile(self._transform, arr, mean=self._hint))
        else:
            out = np.asarray(transforms.invert_quantile_mp(self._transform, arr,
                                                           precision=precision, mean=self._hint))
        out = np.maximum(out, 0.0)
        return float(out) if out.ndim == 0 else out

    quantile = ppf

    def lst(self, s):
        """The transform ``E[exp(-s T)]`` (numpy arrays or mpmath numbers)."""
        if _is_mp(s):
            return self._transform(s)
        return super().lst(s)

    @property
    def _hint(self) -> float | None:
        return self._mean if math.isfinite(self._mean) and self._mean > 0 else None

    def _invert(self, x, precision, fast, slow, outside):
        """CDF or SF by inversion; ``outside`` is its value for ``x < 0`` and, when the system is
        unstable (``T = inf``), for every ``x``."""
        arr = np.asarray(x, dtype=float)
        if np.any(np.isnan(arr)):
            raise ValueError(f"x must not contain NaN, got {x!r}")
        if not self.stable:
            out = np.full(arr.shape, outside)
        else:
            t = np.maximum(arr, 0.0)
            if precision is None:
                out = np.asarray(fast(self._transform, t), dtype=float)
            else:
                out = np.asarray(slow(self._transform, t, precision=precision), dtype=float)
            if np.any(arr < 0):
                out = np.where(arr < 0, outside, out)
        out = np.clip(out, 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def _cdf(self, x):
        return self.cdf(x)

    def _sf(self, x):
        return self.sf(x)

    def _lst(self, s):
        return self._transform(s)

    def _moment(self, k):
        if k == 1:
            return self._mean
        if k == 2 and self._second is not None:
            return self._second
        if not (self.stable and math.isfinite(self._mean)):
            return math.inf
        return _tail_moment(self.sf, k, self._mean)

    def _sample(self, size, rng):
        if not self.stable:
            return np.full(size, math.inf) if size is not None else math.inf
        return self.ppf(rng.uniform(np.finfo(float).tiny, 1.0, size))


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(20)


def _tail_moment(sf: Callable, k: int, scale: float) -> float:
    """``E[T^k] = int_0^inf k t^(k-1) P(T > t) dt`` by Gauss-Legendre on geometric panels.

    The panels stop at ``c = scale 2^j``, the last point before the tail first falls below
    1e-10 (the fast
    inversion's absolute error is about 1e-11, so beyond that the tail is noise). The rest is
    extrapolated from the tail at ``c/4, c/2, c``: a power law ``P(T > t) ~ t^(-a)`` if the
    log-ratios per doubling are about equal (``a <= k`` means a divergent moment: ``inf``),
    otherwise an exponential tail.
    """
    ladder = scale * 2.0 ** np.arange(-30, 64)
    tail = sf(ladder)
    below = np.nonzero(tail < 1e-10)[0]
    if below.size == 0 or below[0] < 3:
        return math.inf
    j = below[0] - 1
    c = ladder[j]
    near, far = math.log(tail[j - 2] / tail[j - 1]), math.log(tail[j - 1] / tail[j])
    if far < 1.5 * near:
        exponent = far / math.log(2.0)
        if exponent <= k:
            return math.inf
        remainder = k * c**k * tail[j] / (exponent - k)
    else:
        rate = far / (c / 2)
        remainder = float(k * tail[j] * mpmath.gammainc(k, rate * c) * mpmath.exp(rate * c)
                          / rate**k)
    return _panels(sf, k, ladder[: j + 1]) + remainder


def _panels(sf: Callable, k: int, edges: np.ndarray) -> float:
    edges = np.concatenate([[0.0], edges])
    left, width = edges[:-1, None], np.diff(edges)[:, None]
    t = left + 0.5 * width * (_NODES + 1.0)
    return float(np.sum(0.5 * width * _WEIGHTS * k * t ** (k - 1) * sf(t)))
