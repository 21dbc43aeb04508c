"""Response-time distributions known through their Laplace-Stieltjes transform."""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np

from . import _checks, transforms
from .distributions import Distribution, Mixture, _is_mp
from .quadrature import moment_from_inverted_sf

__all__ = ["ResponseTime"]

_RTOL = 1e-10
"""Relative tolerance of the fast quantile solver."""

_MP_MAX_WORK = 2000
"""Largest working precision (digits) of the self-checking mpmath path."""


class ResponseTime(Distribution):
    """A response time given by its LST, with its CDF, tail and quantiles by inversion.

    The default path inverts numerically in double precision with vectorised numpy (the
    Abate-Whitt Euler algorithm, refined adaptively where it converges slowly) and can report
    an error estimate (``full_output=True``); pass ``precision=`` (decimal digits) to ``cdf``,
    ``sf`` or ``ppf`` for a high-precision value (an :class:`mpmath.mpf`) through
    :func:`mpmath.invertlaplace`.

    Laws with atoms (deterministic or discrete runtimes) are handled by splitting: with
    ``atoms=(w, A, rest, rest_mean)`` the response time is ``A`` (a discrete law, known exactly)
    with probability ``w`` and otherwise has the transform ``rest``, so only the part without
    jumps is inverted and quantiles that fall in a jump are its exact location.

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
    atoms : tuple, optional
        ``(w, A, rest, rest_mean)``: ``T`` is the discrete law ``A`` with probability ``w`` in
        ``[0, 1]``, and otherwise the law with LST ``rest`` and mean ``rest_mean``.
    lower : float, optional
        A hard lower bound of ``T`` (the smallest possible runtime); default 0.
    scale : float, optional
        The service-time scale ``E[B]`` of the queue behind ``T`` (default ``E[T]``): the
        error estimate allows for the loss of digits ``eps E[T] / (|s| E[B]^2)`` of queueing
        transforms at small ``|s|``, which grows as the load approaches 1.

    Examples
    --------
    >>> import queuetheory as qt
    >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)   # M/M/1, mu - lam = 0.5
    >>> round(T.cdf(2.0), 9), round(T.ppf(0.99), 6), round(T.median(), 6)
    (0.632120559, 9.21034, 1.386294)
    >>> qt.ResponseTime.unstable().ppf(0.5)
    inf
    """

    def __init__(self, lst: Callable, mean: float, *, second_moment: float | None = None,
                 stable: bool = True, atoms: tuple | None = None, lower: float = 0.0,
                 scale: float | None = None):
        self._transform = lst
        self._mean = float(mean)
        self._scale = scale
        self._second = None if second_moment is None else float(second_moment)
        self.stable = bool(stable)
        self._lower = _checks.nonnegative("lower", lower)
        self._split = None
        if atoms is not None:
            weight, law, rest, rest_mean = atoms
            if not (0.0 <= weight <= 1.0 and law.discrete):
                raise ValueError("atoms must be (w, A, rest, rest_mean) with w in [0, 1] and A "
                                 "a discrete law")
            self._split = (float(weight), law, rest, float(rest_mean))

    @classmethod
    def unstable(cls) -> ResponseTime:
        """The response time of an unstable system: infinite with probability 1."""
        return cls(_zero, math.inf, second_moment=math.inf, stable=False)

    def __repr__(self):
        return f"ResponseTime(mean={self._mean!r}, stable={self.stable})"

    # ------------------------------------------------------------------------ public
    def cdf(self, x, precision: int | None = None, *, full_output: bool = False):
        """``P(T <= x)``.

        Parameters
        ----------
        x : float or array_like
            Times (NaN not allowed; ``P(T <= x) = 0`` for ``x < 0``).
        precision : int, optional
            Decimal digits in [15, 1000] for the mpmath path; the result is then an
            :class:`mpmath.mpf` (an object array of them for an array ``x``).
        full_output : bool, optional
            Fast path only: also return an estimate of the absolute error.

        Returns
        -------
        float, numpy.ndarray or mpmath.mpf
            The CDF, and with ``full_output`` a tuple ``(cdf, error)``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> value, error = T.cdf(2.0, full_output=True)
        >>> round(value, 10), bool(error < 1e-10)
        (0.6321205588, True)
        """
        return self._distribution(x, precision, full_output, upper=False)

    def sf(self, x, precision: int | None = None, *, full_output: bool = False):
        """``P(T > x)``, inverted directly (small tails keep their relative accuracy).

        Parameters and returns as for :meth:`cdf`.

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> print(f"{T.sf(20.0):.6e}")   # exp(-10)
        4.539993e-05
        >>> import mpmath
        >>> print(mpmath.nstr(T.sf(3.0, precision=30), 30))   # exp(-1.5) to 30 digits
        0.223130160148429828933280470764
        """
        return self._distribution(x, precision, full_output, upper=True)

    def ppf(self, q, precision: int | None = None, *, full_output: bool = False):
        """Quantile ``inf{t : P(T <= t) >= q}``, q in (0, 1); ``inf`` for an unstable system.

        Parameters
        ----------
        q : float or array_like
            Levels in the open interval (0, 1).
        precision : int, optional
            Decimal digits in [15, 1000] for the mpmath path: the quantile is then an
            :class:`mpmath.mpf` with that many digits (an object array for an array ``q``), the
            quantile of the level ``q`` exactly as given in binary (``0.99`` is
            ``0.98999999999999999112...``).
        full_output : bool, optional
            Fast path only: also return an estimate of the absolute error of each quantile
            (the CDF error over the density, plus the solver's tolerance; 0 for a quantile in a
            jump of the CDF, which is located exactly).

        Returns
        -------
        float, numpy.ndarray or mpmath.mpf
            The quantiles (non-decreasing in ``q``, never below the smallest possible response
            time), and with ``full_output`` a tuple ``(quantiles, errors)``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> T.ppf([0.5, 0.99]).round(9)
        array([1.38629436, 9.21034037])
        >>> import mpmath
        >>> print(mpmath.nstr(T.median(precision=30), 30))   # 2 log(2)
        1.38629436111989061883446424292
        """
        arr = _checks.probability_level("q", q)
        if not self.stable:
            return self._finish(np.full(arr.shape, math.inf), np.zeros(arr.shape), full_output)
        if precision is not None:
            _no_error(full_output)
            return self._quantile_mp(arr.astype(object), transforms._precision(precision))
        flat = arr.ravel()
        roots, err = self._quantile_fast(flat)
        return self._finish(roots.reshape(arr.shape), err.reshape(arr.shape), full_output)

    quantile = ppf

    def isf(self, p, precision: int | None = None, *, full_output: bool = False):
        """Inverse survival function: the ``(1 - p)``-quantile, p in (0, 1) (scipy.stats).

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> round(T.isf(0.01), 6)   # P(T > t) = 0.01
        9.21034
        """
        arr = _checks.probability_level("p", p)
        if precision is None:
            return self.ppf(1.0 - arr, full_output=full_output)
        _no_error(full_output)
        precision = transforms._precision(precision)
        with mpmath.workdps(precision):
            levels = np.array([1 - mpmath.mpf(float(v)) for v in arr.ravel()], dtype=object)
        return self._quantile_mp(levels.reshape(arr.shape), precision)

    def median(self, precision: int | None = None):
        """The median, ``ppf(0.5)`` (scipy.stats).

        Examples
        --------
        >>> import queuetheory as qt
        >>> round(qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0).median(), 9)   # 2 log 2
        1.386294361
        """
        return self.ppf(0.5, precision=precision)

    def interval(self, confidence: float, precision: int | None = None):
        """Equal-tailed interval holding ``T`` with probability ``confidence`` (scipy.stats).

        Parameters
        ----------
        confidence : float
            In the open interval (0, 1).
        precision : int, optional
            Decimal digits for the mpmath path, as for :meth:`ppf`.

        Returns
        -------
        tuple
            ``(ppf((1 - confidence) / 2), ppf((1 + confidence) / 2))``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> lo, hi = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0).interval(0.9)
        >>> round(lo, 6), round(hi, 6)   # -2 log(0.95), -2 log(0.05)
        (0.102587, 5.991465)
        """
        c = float(_checks.probability_level("confidence", confidence))
        if precision is not None:
            precision = transforms._precision(precision)
            with mpmath.workdps(precision):
                half = (1 - mpmath.mpf(c)) / 2
                levels = np.array([half, 1 - half], dtype=object)
            lo, hi = self._quantile_mp(levels, precision)
            return lo, hi
        lo, hi = self.ppf(np.array([(1.0 - c) / 2.0, (1.0 + c) / 2.0]))
        return float(lo), float(hi)

    def lst(self, s):
        """The transform ``E[exp(-s T)]`` (numpy arrays or mpmath numbers), ``Re(s) >= 0``."""
        if _is_mp(s):
            if mpmath.isnan(s) or mpmath.re(s) < 0:
                raise ValueError(f"s must have Re(s) >= 0 (and not be NaN), got {s!r}")
            return self._transform(s)
        return super().lst(s)

    # ------------------------------------------------------------------------ fast path
    @property
    def _hint(self) -> float | None:
        return self._mean if math.isfinite(self._mean) and self._mean > 0 else None

    def _inversion(self) -> transforms._Inversion:
        """The fast inversion of the part without atoms (or of the whole transform)."""
        if self._split is None:
            lst, mean = self._transform, self._hint
        else:
            lst, mean = self._split[2], self._split[3]
        return transforms._Inversion(lst, transforms._DAMPING, transforms._N_TERMS,
                                     transforms._N_EULER, mean, self._scale)

    def _evaluator(self) -> Callable:
        """``(t, density, refine) -> (cdf, sf, pdf, err_cdf, err_sf)`` at times ``t >= lower``,
        ``t > 0`` (as :class:`queuetheory.transforms._Inversion`)."""
        inversion = self._inversion()
        if self._split is None:
            return inversion
        weight, law, _, _ = self._split

        def evaluate(t, density=False, refine=True):
            cdf, sf, pdf, err_cdf, err_sf = inversion(t, density, refine)
            rest = 1.0 - weight
            cdf = weight * law.cdf(t) + rest * cdf
            sf = weight * law.sf(t) + rest * sf
            return cdf, sf, (None if pdf is None else rest * pdf), rest * err_cdf, rest * err_sf

        return evaluate

    def _distribution(self, x, precision, full_output, upper):
        arr = np.asarray(x, dtype=float)
        if np.any(np.isnan(arr)):
            raise ValueError(f"x must not contain NaN, got {x!r}")
        outside = 1.0 if upper else 0.0
        if precision is not None:
            _no_error(full_output)
            return self._distribution_mp(arr, transforms._precision(precision), upper)
        flat = arr.ravel()
        out, err = np.full(flat.size, outside), np.zeros(flat.size)
        if self.stable:
            inner = (flat >= self._lower) & (flat > 0) & np.isfinite(flat)
            out[np.isinf(flat)] = 1.0 - outside
            if self._lower == 0:
                zero = flat == 0
                atom = self._atom_at_zero()
                out[zero] = 1.0 - atom if upper else atom
            if inner.any():
                values = self._evaluator()(flat[inner])
                out[inner] = values[1] if upper else values[0]
                err[inner] = values[4] if upper else values[3]
            out = np.clip(out, 0.0, 1.0)
            # a value within its own error estimate of 0 (or 1) is noise: it is 0 (or 1)
            low, high = out < err, 1.0 - out < err
            both = low & high                     # then the tail reads 0 and the CDF 1
            out[low & ~both] = 0.0
            out[high & ~both] = 1.0
            out[both] = 0.0 if upper else 1.0
            if self._hint is not None:
                # Markov's inequality P(T > t) <= E[T] / t, a hard bound the noise cannot break
                positive = flat > 0
                bound = self._mean / flat[positive]
                out[positive] = (np.minimum(out[positive], bound) if upper
                                 else np.maximum(out[positive], 1.0 - bound))
            # monotone in x within one call: a later value that noise lifted above an earlier
            # one (both within their error estimates) takes the earlier value, and the larger
            # of the two error estimates
            order = np.argsort(flat, kind="stable")
            accumulate = np.minimum.accumulate if upper else np.maximum.accumulate
            ordered = accumulate(out[order])
            moved = ordered != out[order]
            err[order] = np.where(moved, np.maximum.accumulate(err[order]), err[order])
            out[order] = ordered
        return self._finish(out.reshape(arr.shape), err.reshape(arr.shape), full_output)

    def _atom_at_zero(self) -> float:
        if self._split is None:
            return transforms._atom_at_zero(self._transform)
        weight, law, rest, _ = self._split
        return weight * float(law.cdf(0.0)) + (1 - weight) * transforms._atom_at_zero(rest)

    def _quantile_fast(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        evaluate = self._evaluator()
        out, err = np.zeros(q.size), np.zeros(q.size)
        todo = q > self._atom_at_zero()
        if todo.any():
            roots, lo, hi = transforms._solve_levels(evaluate, q[todo], self._hint or 1.0,
                                                     _RTOL)
            roots, snapped = self._snap(roots, lo, hi)
            out[todo] = roots
            inner = np.flatnonzero(todo)[(roots > 0) & ~snapped]
            if inner.size:
                err[inner] = transforms._quantile_error(evaluate, out[inner], _RTOL)
        out = np.maximum(transforms._monotone(q, out), self._lower)
        return out, err

    def _snap(self, roots, lo, hi):
        """Roots whose final bracket holds an atom of the split-off law sit on the atom: the
        CDF jumps there, so the quantile is exactly its location."""
        snapped = np.zeros(roots.size, dtype=bool)
        values = _atom_values(self._split[1]) if self._split is not None else None
        if values is None or values.size == 0:
            return roots, snapped
        idx = np.clip(np.searchsorted(values, lo, side="left"), 0, values.size - 1)
        candidate = values[idx]
        # only a bracket that collapsed onto the atom (bisection onto the jump) locates it
        snapped = (candidate >= lo) & (candidate <= hi) & (hi > 0) & (hi - lo <= 4 * _RTOL * hi)
        return np.where(snapped, candidate, roots), snapped

    def _finish(self, out, err, full_output):
        value = float(out) if out.ndim == 0 else out
        if not full_output:
            return value
        return value, (float(err) if err.ndim == 0 else err)

    # ------------------------------------------------------------------------ mpmath path
    def _distribution_mp(self, arr: np.ndarray, precision: int, upper: bool):
        flat = arr.ravel()
        out = np.empty(flat.size, dtype=object)
        with mpmath.workdps(precision):
            for i, x in enumerate(flat):
                out[i] = self._distribution_mp_one(mpmath.mpf(float(x)), upper)
        return out.reshape(arr.shape)[()] if arr.ndim == 0 else out.reshape(arr.shape)

    def _distribution_mp_one(self, x: mpmath.mpf, upper: bool) -> mpmath.mpf:
        """``P(T > x)`` or ``P(T <= x)`` to the current mpmath precision ``p`` (digits).

        de Hoog's algorithm converges slowly where the law is not smooth (atoms, kinks: about
        ``0.3 p`` correct digits at working precision ``p`` for the M/D/1 response time), so the
        value is recomputed at working precisions ``p, 1.5 p, 2.25 p, ...`` (at most ``8 p`` and
        2000) until two successive values agree to ``p`` digits. This checks the inversion; the
        transform itself must be evaluated in mpmath arithmetic (every family of
        :mod:`queuetheory.distributions` is, except the generic quadrature fallback).
        """
        digits = mpmath.mp.dps
        previous = None
        work = digits
        while work <= min(8 * digits, _MP_MAX_WORK):
            with mpmath.workdps(work):
                value = self._distribution_mp_raw(x, upper)
            if previous is not None and abs(value - previous) <= (
                    mpmath.mpf(10) ** (1 - digits) * abs(value) + mpmath.mpf(10) ** (-2 * digits)):
                return +value
            previous, work = value, work * 3 // 2
        raise ValueError(f"the {digits}-digit inversion at t = {mpmath.nstr(x, 8)} did not "
                         f"converge up to working precision {work * 2 // 3} (laws with atoms "
                         "or kinks converge slowly); lower precision or use the fast path with "
                         "full_output=True for an error estimate")

    def _distribution_mp_raw(self, x: mpmath.mpf, upper: bool) -> mpmath.mpf:
        """``P(T > x)`` or ``P(T <= x)`` at the current working precision (de Hoog)."""
        outside = mpmath.mpf(1 if upper else 0)
        if not self.stable or x < 0 or x < self._lower:
            return outside
        if mpmath.isinf(x):
            return 1 - outside
        if x == 0:
            atom = mpmath.mpf(self._atom_at_zero())
            return 1 - atom if upper else atom
        if self._split is None:
            return _clip(transforms._invert_mp_one(self._transform, x, upper, "dehoog"))
        weight, law, rest, _ = self._split
        w = mpmath.mpf(weight)
        part = transforms._invert_mp_one(rest, x, upper, "dehoog")
        return _clip(w * _discrete_mp(law, x, upper) + (1 - w) * part)

    def _quantile_mp(self, levels: np.ndarray, precision: int):
        """Quantiles to ``precision`` digits: the fast root as a start, then the secant method on
        the high-precision SF (or CDF), or the atom when the level falls in a jump."""
        flat = levels.ravel()
        out = np.empty(flat.size, dtype=object)
        with mpmath.workdps(precision):
            for i, level in enumerate(flat):
                out[i] = self._quantile_mp_one(mpmath.mpf(level), precision)
        return out.reshape(levels.shape)[()] if levels.ndim == 0 else out.reshape(levels.shape)

    def _quantile_mp_one(self, q: mpmath.mpf, precision: int) -> mpmath.mpf:
        if not self.stable:
            return mpmath.inf
        start, error = self._quantile_fast(np.array([float(q)]))
        t0 = mpmath.mpf(float(start[0]))
        if t0 == 0 or t0 <= self._lower:
            return t0
        upper = q > 0.5
        target = 1 - q if upper else q

        def objective(t):
            value = self._distribution_mp_one(t, upper)
            return (target - value) if upper else (value - target)

        if error[0] == 0 and self._split is not None:  # on an atom: is the level in its jump?
            if objective(t0 * (1 - mpmath.mpf(10) ** (-12))) < 0 <= objective(t0):
                return t0
        step = max(float(error[0]), 1e-9 * float(t0))
        x0, x1 = t0 - step, t0
        f0, f1 = objective(x0), objective(x1)
        tol = mpmath.mpf(10) ** (1 - precision) * t0
        for _ in range(40):
            if f1 == f0:
                break
            x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
            f0, f1 = f1, objective(x1)
            if abs(x1 - x0) <= tol:
                return x1
        if f1 == 0 or abs(x1 - x0) <= tol:
            return x1
        raise ValueError(f"the {precision}-digit quantile at level {mpmath.nstr(q, 8)} did not "
                         "converge (secant steps on the mpmath inversion); use the fast path")

    # ------------------------------------------------------------------------ hooks
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
        return moment_from_inverted_sf(self.sf, k, self._mean)

    def _sample(self, size, rng):
        if not self.stable:
            return np.full(size, math.inf) if size is not None else math.inf
        return self.ppf(rng.uniform(np.finfo(float).tiny, 1.0, size))


def _zero(s):
    """The transform of ``T = inf``."""
    return 0 * s


def _no_error(full_output: bool) -> None:
    if full_output:
        raise ValueError("full_output is for the fast path; the mpmath path (precision=) has "
                         "no error estimate")


def _clip(value: mpmath.mpf) -> mpmath.mpf:
    return min(max(value, mpmath.mpf(0)), mpmath.mpf(1))


def _atom_values(law: Distribution) -> np.ndarray | None:
    """Sorted support of a discrete law, ``None`` for a law with a continuous part."""
    atoms = law.atoms
    return None if atoms is None else atoms[0]


def _discrete_mp(law: Distribution, x: float, upper: bool) -> mpmath.mpf:
    """``P(A > x)`` or ``P(A <= x)`` of a discrete law, summed in mpmath."""
    if isinstance(law, Mixture):
        return mpmath.fsum(mpmath.mpf(w) * _discrete_mp(c, x, upper)
                           for c, w in zip(law.components, law.weights) if w > 0)
    values, probs = law.atoms
    return mpmath.fsum(mpmath.mpf(float(p)) for v, p in zip(values, probs)
                       if (v > x if upper else v <= x))
