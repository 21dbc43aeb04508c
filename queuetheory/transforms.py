"""Numerical inversion of Laplace-Stieltjes transforms of non-negative random variables.

A response time ``T >= 0`` is known here through its Laplace-Stieltjes transform (LST)
``lst(s) = E[exp(-s T)]``. This module turns it into the CDF ``P(T <= t)``, the survival
function ``P(T > t)`` and quantiles.

Two paths are offered:

* a fast path (:func:`invert_cdf`, :func:`invert_sf`, :func:`invert_quantile`) in vectorised
  double-precision numpy: the Fourier-series method of Abate and Whitt with Euler summation, in
  the lattice-refined form of Abate, Choudhury and Whitt (``l = 2``) [1]_ [2]_. It evaluates the
  transform only on the vertical line ``Re(s) = damping / (2 l t) > 0``, so it is safe for every
  LST, including M/G/1 forms such as ``(1 - rho) s B(s) / (s - lam (1 - B(s)))`` whose
  singularities lie in ``Re(s) < 0`` and transforms with delays ``exp(-s D)``, which grow without
  bound in the left half-plane.
* a high-precision path (:func:`invert_cdf_mp`, :func:`invert_sf_mp`, :func:`invert_quantile_mp`)
  through :func:`mpmath.invertlaplace`, by default with the de Hoog, Knight and Stokes
  algorithm [3]_, which also stays in ``Re(s) > 0``. It is meant as a reference and for checks.

Accuracy of the fast path with the default parameters (``damping=26``, ``n_terms=40``,
``n_euler=25``, so 132 transform evaluations per time point), measured against closed forms and
30-digit mpmath references (exponential, Erlang-5/20/50/100/200, hyperexponentials, M/M/1 and
M/E4/1 in Pollaczek-Khinchine form, an M/G/1 queue with a 12-point discrete slowdown mixture):

* CDF: absolute error <= 1e-11 (the discretisation error is about ``exp(-damping)``).
* SF: relative error <= 1e-9 where the SF is >= 1e-4, <= 2e-7 where it is >= 1e-6, about 1e-5
  where it is near 1e-8 (round-off, amplified by ``exp(damping / 4)``, then dominates).

Every evaluation also yields an error estimate (``full_output=True``): the change between the Euler
sums after ``n_terms / 2`` and ``n_terms`` blocks on the same transform values, plus the
discretisation and round-off bounds. Where the change is above ``1e-9`` relative (distributions
that are not smooth: kinks and jumps, or nearly deterministic ones), the time is inverted again
with 160, 640 and 2560 blocks (``n_euler = 100``) until it is not, and the estimate then also
bounds the step from the previous rule. Quantiles use the longer rules only near their roots.
Measured against exact references: the M/D/1 response time (Erlang's formula) to 1e-10 relative in
the quantiles and 1e-8 in the SF 0.2 away from its kinks; at a kink the error decays like ``1 / n``
(4e-5 relative at ``t = 2 D``) and the estimate says so. Erlang-500 is refined to 5e-12. At a jump
of the CDF the result is close to the midpoint of the jump; :class:`queuetheory.ResponseTime`
therefore splits atoms off exactly before inverting.

References
----------
.. [1] J. Abate and W. Whitt, "The Fourier-series method for inverting transforms of probability
   distributions", Queueing Systems 10, 5-87, 1992.
.. [2] J. Abate, G. L. Choudhury and W. Whitt, "An introduction to numerical transform inversion
   and its application to probability models", in *Computational Probability*, W. Grassmann
   (ed.), Kluwer, 257-323, 2000.
.. [3] F. R. de Hoog, J. H. Knight and A. N. Stokes, "An improved method for numerical inversion
   of Laplace transforms", SIAM J. Sci. Stat. Comput. 3(3), 357-366, 1982.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from . import _checks

__all__ = [
    "invert_cdf",
    "invert_sf",
    "invert_quantile",
    "invert_cdf_mp",
    "invert_sf_mp",
    "invert_quantile_mp",
]

LST = Callable[[Any], Any]

_LATTICE = 2
"""Lattice refinement ``l`` of Abate-Choudhury-Whitt: round-off grows like ``exp(A / (2 l))``."""

_DAMPING = 26.0
_N_TERMS = 40
_N_EULER = 25

_T_TINY = 1e-280
"""Times below this are treated as 0 (the transform would be evaluated near overflow)."""

_T_HUGE = 1e300
_ATOM_ABSCISSAE = (1e300, 1e200, 1e100, 1e50, 1e25, 1e16)
"""Large real points where ``lst`` approximates ``P(T = 0)``; the first finite value is used."""

_ATOM_FLOOR = 1e-250

_CHUNK = 1 << 20
"""Largest number of transform evaluations in one call of ``lst``."""

_MP_METHODS = ("dehoog", "cohen", "talbot", "stehfest")
_MIN_PRECISION = 15
_MAX_PRECISION = 1000

_LOG_TINY = 1e-300


# --------------------------------------------------------------------------- validation


def _times(name: str, t: ArrayLike) -> np.ndarray:
    """Return ``t`` as a float array, or raise unless every entry is >= 0 (``inf`` allowed)."""
    arr = np.asarray(t, dtype=float)
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (inf allowed, NaN not), got {t!r}")
    return arr


def _positive_float(name: str, value: float, upper: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in (0, {upper}), got {value!r}")
    v = float(value)
    if not (0 < v < upper):
        raise ValueError(f"{name} must be a number in (0, {upper}), got {value!r}")
    return v


def _mean_hint(mean: float | None) -> float:
    return 1.0 if mean is None else _checks.positive("mean", mean)


def _method(method: str) -> str:
    if method not in _MP_METHODS:
        raise ValueError(f"method must be one of {_MP_METHODS}, got {method!r}")
    return method


def _shaped(values: np.ndarray, like: np.ndarray) -> float | np.ndarray:
    """``values`` in the shape of ``like``; a Python float when ``like`` is 0-d."""
    out = np.asarray(values, dtype=float).reshape(like.shape)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------- fast path


@functools.lru_cache(maxsize=16)
def _euler_rule(damping: float, n_terms: int, n_euler: int) -> tuple[np.ndarray, ...]:
    """Nodes ``u_k``, weights ``c_k`` of the Euler-summed Fourier-series rule, and (columns) the
    weights of the coarser rules with ``4/8, 5/8, 6/8, 7/8`` of ``n_terms`` blocks on the same
    nodes (for the error estimate: the largest change; one difference can pass through 0 where
    the error does not: with the kinks of the M/G/1 with runtimes {2, 3, 5} taken out, at t =
    3.3 the half-rule's change was 9.6e-10 against an error of 1e-8).

    For ``F(s) = G(s) / s`` the rule reads ``f(t) ~ Re(sum_k c_k G(u_k / t) / u_k)`` and for the
    density ``g(t) ~ Re(sum_k c_k G(u_k / t)) / t``. The trapezoidal rule with step
    ``pi / (l t)`` on the Bromwich line ``Re(s) = A / (2 l t)`` gives terms whose blocks of ``l``
    alternate in sign; the series is summed to block ``n`` and then Euler (binomial) averaged over
    ``m`` more partial sums, which is a weighted sum with weight 1 up to block ``n`` and binomial
    tail weights beyond. The last entry is the round-off bound ``4 eps sum_k |c_k / u_k|`` of a
    CDF or SF for an LST evaluated to full relative precision.
    """
    n_blocks = n_terms + n_euler + 1
    k = np.arange(_LATTICE * n_blocks)
    nodes = (damping + 2j * np.pi * k) / (2 * _LATTICE)
    phase = np.exp(1j * np.pi * k / _LATTICE) * math.exp(damping / (2 * _LATTICE)) / _LATTICE

    def coefficients(n: int) -> np.ndarray:
        binomial = special.comb(n_euler, np.arange(n_euler + 1)) / 2.0**n_euler
        tail = np.cumsum(binomial[::-1])[::-1]
        block_weight = np.concatenate([np.ones(n + 1), tail[1:], np.zeros(n_terms - n)])
        weights = block_weight[k // _LATTICE]
        weights[0] *= 0.5
        return weights * phase

    coef = coefficients(n_terms)
    coarse = np.stack([coefficients(j * n_terms // 8) for j in (4, 5, 6, 7)], axis=1)
    roundoff = 4.0 * np.finfo(float).eps * float(np.sum(np.abs(coef / nodes)))
    cancellation = 4.0 * np.finfo(float).eps * float(np.sum(np.abs(coef / nodes**2)))
    for array in (nodes, coef, coarse):
        array.flags.writeable = False
    return nodes, coef, coarse, roundoff, cancellation


def _tuning(damping: float, n_terms: int, n_euler: int) -> tuple[float, int, int]:
    return (
        _positive_float("damping", damping, 700.0),
        _checks.positive_int("n_terms", n_terms, 2),
        _checks.positive_int("n_euler", n_euler, 1),
    )


def _atom_at_zero(lst: LST) -> float:
    """``P(T = 0) = lim lst(s)`` as real ``s -> inf``, read at the largest finite evaluation."""
    s = np.array(_ATOM_ABSCISSAE, dtype=complex)
    with np.errstate(all="ignore"):
        values = np.broadcast_to(np.asarray(lst(s), dtype=complex), s.shape)
    finite = np.isfinite(values)
    if not finite.any():
        return 0.0
    return _clean_atom(float(values[np.argmax(finite)].real))


def _clean_atom(value: float) -> float:
    """Clip an atom estimate into [0, 1]; below 1e-250 it is the residual ``f(0+) / s``: 0."""
    return 0.0 if value < _ATOM_FLOOR else min(value, 1.0)


_KINK_SAFETY = 5.0
"""Factor on the change between Euler sums (:class:`_Inversion`) where kinks are taken out."""


class Kinks:
    """Jumps ``jumps[i]`` of a density at ``times[i] > 0``: their transform ``s -> sum_i
    jumps[i] exp(-s times[i])`` (numpy arrays, one exponential per jump at a time: memory of one
    array of ``s``), and the CDF and density of the zero-mass measure with the same jumps that
    :class:`_Inversion` takes out (:meth:`parts`)."""

    def __init__(self, times, jumps):
        times = np.asarray(times, dtype=float).ravel()
        jumps = np.asarray(jumps, dtype=float).ravel()
        order = np.argsort(times, kind="stable")
        self.times, self.jumps = times[order], jumps[order]

    @property
    def size(self) -> int:
        """The number of jumps (at most; 0: none)."""
        return self.times.size

    @property
    def total(self) -> float:
        """An upper bound of ``sum_i |jumps[i]|``."""
        return float(np.abs(self.jumps).sum())

    def __call__(self, s):
        out = np.zeros(np.shape(s), dtype=complex)
        with np.errstate(under="ignore"):
            for kappa, jump in zip(self.times.tolist(), self.jumps.tolist()):
                out += jump * np.exp(-s * kappa)
        return out

    def parts(self, u: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray]:
        """The CDF ``sum_i J_i C(u - kappa_i)`` and density ``sum_i J_i c(u - kappa_i)`` of
        the measure with these jumps, ``c(x) = 2 exp(-2 a x) - exp(-a x)`` and ``C(x) =
        (exp(-a x) - exp(-2 a x)) / a`` for ``x > 0`` (0 else): through :func:`_decayed`, in
        time linear in the jumps and the times."""
        one = _decayed(self, "times", "jumps", u, a)
        two = _decayed(self, "times", "jumps", u, 2.0 * a)
        return (one - two) / a, 2.0 * two - one


def _decayed(owner, points: str, masses: str, v: np.ndarray, rate: float) -> np.ndarray:
    """``sum_{points_i < v} masses_i exp(-rate (v - points_i))`` at every ``v`` (an array of any
    shape), ``points`` and ``masses`` the names of arrays on ``owner``, ``points`` ascending:
    the running sums ``P_k = sum_{i <= k} masses_i exp(-rate (points_k - points_i))`` by the
    recurrence ``P_k = P_(k-1) exp(-rate (points_k - points_(k-1))) + masses_k`` (every exponent
    <= 0: no overflow whatever the spread), remembered on ``owner`` per name and rate (a copy
    or an unpickled owner carries them with its arrays), then ``P_k exp(-rate (v - points_k))``
    for the last point below ``v``."""
    cache = owner.__dict__.setdefault("_running", {})
    key = (points, masses, rate)
    points, masses = getattr(owner, points), getattr(owner, masses)
    if key not in cache:
        running = np.empty(points.size)
        with np.errstate(under="ignore"):
            decay = np.exp(-rate * np.diff(points)).tolist()
        total = 0.0
        for k, mass in enumerate(masses.tolist()):
            total = (total * decay[k - 1] if k else 0.0) + mass
            running[k] = total
        cache[key] = running
    running = cache[key]
    last = np.searchsorted(points, v, side="left") - 1
    below = last >= 0
    out = np.zeros(np.shape(v))
    k = last[below]
    with np.errstate(under="ignore"):
        out[below] = running[k] * np.exp(-rate * (v[below] - points[k]))
    return out


class _Inversion:
    """CDF, SF, density and their error estimates at times in ``(0, inf)`` (the fast path).

    Every time is first inverted with the given tuning; the error estimate is the largest
    difference between the Euler sum after ``n`` blocks and those after ``4/8, 5/8, 6/8, 7/8``
    of ``n`` (on the same transform values), plus
    the discretisation error ``exp(-A) / (1 - exp(-A))`` (times the SF for the SF) and the
    round-off bound of the rule (with ``mean``, plus the loss of digits
    ``eps t E[T] / scale^2`` of queueing transforms at small ``|s|``, scaled by the rule;
    ``scale`` is the service time's, ``E[T]`` by default; where ``E[T]`` is infinite, ``slack``,
    the ``1 - rho`` of the queue, gives ``scale / slack`` in its place: the denominator ``s -
    lam (1 - B~(s))`` is about ``s (1 - rho)`` at small ``|s|`` whatever the tail of ``B``;
    ``slack`` without ``scale``: a transform without that loss but on a rounded ``1 - rho``,
    whose values move by up to about ``eps / slack``: the round-off bound times ``1 + 1 /
    slack``). Where the difference exceeds
    ``max(2 round-off, 1e-9 min(CDF, SF))``, as near kinks of distributions with atoms, those
    times are inverted again with the longer rules of ``_REFINEMENTS``; the error estimate then
    also bounds the change from the previous rule (the error decays only like ``1 / n`` at a
    kink). With ``known=(w, A)`` the transform is the part ``rest`` of a law
    ``w A + (1 - w) rest`` whose part ``A`` is known in the time domain: the goal ``1e-9``
    is relative to that whole law's CDF and SF. With ``offset=L > 0`` the transform is that of
    ``T - L`` for a law ``T >= L`` (``mean`` still ``E[T]``), inverted at ``t - L`` for the
    times ``t > L`` asked: a kink or jump of the density at ``L`` then sits at the origin,
    where the Fourier-series method does not see it (at ``t`` itself it costs about 1e-6).
    With ``kinks`` (a :class:`Kinks`: ``times`` ``kappa_i > 0`` after the offset, ``jumps``
    ``J_i`` and the transform ``sum_i J_i exp(-s kappa_i)``) the density of the law inverted
    jumps by ``J_i`` at ``kappa_i``: the zero-mass measure ``sum_i J_i c(u - kappa_i)``, ``c(u)
    = 2 exp(-2 a u) - exp(-a u)`` (``c(0+) = 1``, ``a = 1 / (mean - offset)``), with the same
    jumps is taken out of the transform before the inversion and added back in closed form (its
    CDF ``(exp(-a u) - exp(-2 a u)) / a``): the rest is smooth to one more derivative there,
    where the inversion otherwise leaves errors of about 1e-5.

    With ``mean`` (``E[T]``, finite), a time whose transform values at small ``s`` contradict it
    (``(1 - lst(s)) / s`` must lie in ``[0, E[T]]`` for real ``s > 0``; cancellation in the
    transform breaks this far beyond the scale of ``T``) is not inverted: its SF is reported as
    0 with the Markov bound ``E[T] / t`` as error.
    """

    def __init__(self, lst: LST, damping: float, n_terms: int, n_euler: int,
                 mean: float | None = None, scale: float | None = None,
                 known: tuple | None = None, offset: float = 0.0, kinks: Kinks | None = None,
                 slack: float | None = None):
        self.lst = lst
        self.known = known
        self.offset = offset
        self.kinks = None
        if kinks is not None and kinks.size and mean is not None and mean > offset:
            self.kinks, self._decay = kinks, 1.0 / (mean - offset)
        self.damping, self.n_terms, self.n_euler = _tuning(damping, n_terms, n_euler)
        self.mean = mean if mean is not None and math.isfinite(mean) and mean > 0 else None
        ok = scale is not None and math.isfinite(scale) and scale > 0
        self.scale = scale if ok else self.mean
        self.loss_mean = self.mean
        self.rounding = 1.0
        if slack is not None and 0 < slack <= 1:
            if self.mean is None and ok:
                self.loss_mean = scale / slack
            elif not ok:
                self.rounding += 1.0 / slack

    def __call__(self, t: np.ndarray, density: bool = False,
                 refine: bool = True) -> tuple[np.ndarray, ...]:
        """``(cdf, sf, pdf, err_cdf, err_sf)`` at the 1-d array ``t`` (pdf is None unless asked);
        ``refine=False``: the first rule only, with its error estimate.

        Refined values with the density are remembered per time (the quantile solver asks for
        its roots' error estimates where its last step evaluated them)."""
        if not (density and refine):
            return self._invert(t, density, refine)
        known = self.__dict__.setdefault("_known", {})
        missing = np.array([x for x in dict.fromkeys(t.tolist()) if x not in known])
        if missing.size:
            if len(known) > _KNOWN_MAX:
                known.clear()
            for x, *values in zip(missing.tolist(), *self._invert(missing, True, True)):
                known[x] = values
        return tuple(np.array([known[x][j] for x in t.tolist()], dtype=float).reshape(t.shape)
                     for j in range(5))

    def _invert(self, t: np.ndarray, density: bool, refine: bool) -> tuple[np.ndarray, ...]:
        out = [np.zeros(t.size) for _ in range(5)]
        todo = np.arange(t.size)
        u = t - self.offset if self.offset else t     # the time of the law inverted
        schedule = ((self.n_terms, self.n_euler),) + tuple(
            (n, m) for n, m in _REFINEMENTS if refine and n > self.n_terms)

        for level, (n_terms, n_euler) in enumerate(schedule):
            part = self._evaluate(u[todo], _euler_rule(self.damping, n_terms, n_euler), density)
            cdf, sf, _, change, roundoff = part
            if level:
                # at kinks the error decays like 1/n, and unevenly (Gibbs-like): the step from
                # the previous level bounds it
                step = np.maximum(np.abs(cdf - out[0][todo]), np.abs(sf - out[1][todo]))
                change = np.maximum(change, step)
            for array, values in zip(out, (cdf, sf, part[2], change, roundoff)):
                if values is not None:
                    array[todo] = values
            if level == 0:
                floor_cdf, floor_sf = self._known_floor(t)
            target = np.maximum(2.0 * roundoff, 1e-9 * np.minimum(cdf + floor_cdf[todo],
                                                                  sf + floor_sf[todo]))
            todo = todo[change > target]
            if not todo.size:
                break
        cdf, sf, pdf, change, roundoff = out
        if self.kinks is not None:
            part, part_pdf = self._kink_parts(u)
            cdf, sf = cdf + part, sf - part
            if density:
                pdf = pdf + part_pdf
        alias = math.exp(-self.damping) / -math.expm1(-self.damping)
        if self.kinks is not None:   # the measure taken out: |CDF| up to 1 + sum |J| / (4 a)
            alias *= 1.0 + self.kinks.total / (4.0 * self._decay)
        err_cdf = change + alias + roundoff
        err_sf = change + alias * np.clip(sf, 0.0, 1.0) + roundoff
        if self.mean is not None:
            bad = self._contradicts_mean(u)
            if bad.any():
                markov = np.minimum(1.0, self.mean / t[bad])
                cdf[bad], sf[bad], err_cdf[bad], err_sf[bad] = 1.0, 0.0, markov, markov
                if density:
                    pdf[bad] = 0.0
        return cdf, sf, (pdf if density else None), err_cdf, err_sf

    def _kink_parts(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The CDF and density of the measure ``sum_i J_i c(u - kappa_i)`` taken out at the
        kinks (``kinks``)."""
        return self.kinks.parts(u, self._decay)

    def _smoothed(self, s):
        """The transform less that of the measure taken out at the kinks."""
        values = self.lst(s)
        if self.kinks is None:
            return values
        a = self._decay
        return values - self.kinks(s) * (2.0 / (s + 2.0 * a) - 1.0 / (s + a))

    def _known_floor(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``w / (1 - w)`` times the CDF and SF of the law ``A`` split off with probability
        ``w`` (``known=(w, A)``; zeros without it): the inverted part's share of the relative
        accuracy goal is measured against the whole law's CDF and SF, ``w A + (1 - w) rest``,
        so a part of small weight is not refined further than the whole law needs."""
        if self.known is None:
            return np.zeros(t.size), np.zeros(t.size)
        weight, law = self.known
        # a rest below the floats' resolution (load 1e-17: 1 - rho exact, w the float 1)
        ratio = weight / (1.0 - weight) if weight < 1.0 else math.inf
        with np.errstate(over="ignore", invalid="ignore"):
            return tuple(np.where(part > 0, ratio * part, 0.0)
                         for part in (law.cdf(t), law.sf(t)))

    def _evaluate(self, t, rule, density):
        nodes, coef, coarse, roundoff, cancellation = rule
        if self.kinks is not None:   # the transform less that of the kinks: up to sum |J| / a
            roundoff = roundoff * (1.0 + self.kinks.total / self._decay)
        roundoff = roundoff * self.rounding
        if self.loss_mean is not None:
            # queueing transforms built on s - lam (1 - B~(s)) lose digits like
            # eps E[T] / (|s| E[B]^2) at small |s| (E[B]: the service scale)
            roundoff = roundoff + cancellation * t * self.loss_mean / self.scale**2
        weights = np.column_stack([coef / nodes, coarse / nodes[:, None]])
        step = max(1, _CHUNK // nodes.size)
        cdf, sf, change = np.empty(t.size), np.empty(t.size), np.empty(t.size)
        pdf = np.empty(t.size) if density else None
        for start in range(0, t.size, step):
            chunk = slice(start, start + step)
            tc = t[chunk]
            s = nodes[None, :] / tc[:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                values = np.broadcast_to(np.asarray(self._smoothed(s), dtype=complex),
                                         s.shape)
            if not np.all(np.isfinite(values)):
                bad = s[~np.isfinite(values)][0]
                raise ValueError(f"lst returned a non-finite value at s = {bad!r}; an LST must "
                                 "be finite on Re(s) > 0")
            direct = np.einsum("ij,jk->ik", values, weights).real
            complement = np.einsum("ij,jk->ik", 1.0 - values, weights).real
            cdf[chunk], sf[chunk] = direct[:, 0], complement[:, 0]
            change[chunk] = np.maximum(np.abs(direct[:, 1:] - direct[:, :1]),
                                       np.abs(complement[:, 1:] - complement[:, :1])).max(axis=1)
            if density:
                pdf[chunk] = np.einsum("ij,j->i", values, coef).real / tc
        if self.kinks is not None:
            # with the density's jumps taken out the error of the first rule is small, but the
            # changes between its Euler sums can all pass close to 0 together: on dense scans
            # (1500 times each, five laws with atoms, against the method of steps) up to 8
            # times below the error (M/D/1 at 7/8, t = 1.72: 2e-12 against 1.6e-11)
            change *= _KINK_SAFETY
        return cdf, sf, pdf, change, np.broadcast_to(roundoff, t.shape).copy()

    def _contradicts_mean(self, t: np.ndarray) -> np.ndarray:
        """Times (of the law inverted) whose real node ``s0 = A / (2 l t)`` gives ``(1 -
        lst(s0)) / s0`` outside ``[0, E[T - offset] (1 + 1e-6)]`` (a Markov-type inequality
        every LST obeys)."""
        s0 = self.damping / (2 * _LATTICE) / t
        mean = self.mean - self.offset
        with np.errstate(all="ignore"):
            value = np.broadcast_to(np.asarray(self.lst(s0.astype(complex)), dtype=complex),
                                    s0.shape).real
            ratio = (1.0 - value) / s0
        return ~((ratio >= -1e-6 * mean) & (ratio <= mean * (1.0 + 1e-6)))


_KNOWN_MAX = 4096
"""Times whose refined values :class:`_Inversion` remembers (then it forgets them all)."""

_REFINEMENTS = ((160, 100), (640, 100), (2560, 100))
"""``(n_terms, n_euler)`` of the successive refinements of :class:`_Inversion` (at most 5322
transform evaluations per time)."""


def _invert_fast(lst: LST, t: ArrayLike, complement: bool, damping: float, n_terms: int,
                 n_euler: int, mean: float | None,
                 full_output: bool) -> float | np.ndarray | tuple:
    arr = _times("t", t)
    inversion = _Inversion(lst, damping, n_terms, n_euler, mean)
    flat = arr.ravel()
    out, err = np.empty(flat.size), np.zeros(flat.size)
    small = flat < _T_TINY
    infinite = np.isinf(flat)
    inner = ~(small | infinite)
    if small.any():
        atom = _atom_at_zero(lst)
        out[small] = 1.0 - atom if complement else atom
    out[infinite] = 0.0 if complement else 1.0
    if inner.any():
        cdf, sf, _, err_cdf, err_sf = inversion(flat[inner])
        out[inner] = sf if complement else cdf
        err[inner] = err_sf if complement else err_cdf
    value = _shaped(np.clip(out, 0.0, 1.0), arr)
    return (value, _shaped(err, arr)) if full_output else value


def invert_cdf(lst: LST, t: ArrayLike, *, damping: float = _DAMPING, n_terms: int = _N_TERMS,
               n_euler: int = _N_EULER,
               full_output: bool = False) -> float | np.ndarray | tuple:
    """CDF ``P(T <= t)`` of a non-negative random variable from its LST (fast path).

    Inverts ``lst(s) / s`` with the Euler-summed Fourier-series method of Abate and Whitt in its
    lattice-refined form (``l = 2``), fully vectorised: one call of ``lst`` (per chunk of about
    a million nodes) serves every ``t``.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]``, applied elementwise to a complex numpy array of any shape (here 2-d:
        one row per time, one column per node), returning an array of that shape (or one that
        broadcasts to it). It is only evaluated with ``Re(s) > 0``.
    t : float or array_like
        Times ``>= 0``; ``inf`` gives 1. Times below 1e-280 are treated as 0.
    damping : float, optional
        Abscissa parameter ``A`` in (0, 700): the discretisation error is about
        ``exp(-A)`` and the round-off error grows like ``exp(A / 4)``. Default 26.
    n_terms : int, optional
        Blocks of terms summed before Euler averaging in the first rule (``n``, >= 2).
        Default 40.
    n_euler : int, optional
        Number of binomially averaged partial sums (``m``, >= 1). Default 25.
    full_output : bool, optional
        Also return an estimate of the absolute error of each value (see the module notes).

    Returns
    -------
    float or numpy.ndarray
        ``P(T <= t)`` clipped into ``[0, 1]``, in the shape of ``t`` (a float for a scalar
        ``t``); with ``full_output`` a tuple ``(value, error)``. At ``t = 0`` this is the atom
        ``P(T = 0)``, read off as ``lst(s)`` at a huge real ``s`` (0 when ``lst`` is not
        finite there).

    Raises
    ------
    ValueError
        If ``t`` has negative or NaN entries, a tuning argument is out of range, or ``lst``
        returns non-finite values on ``Re(s) > 0``.

    See Also
    --------
    invert_sf, invert_quantile, invert_cdf_mp

    Notes
    -----
    With the defaults the absolute error is below about 1e-11 for smooth distributions; see the
    module documentation for measured figures and for the behaviour at kinks and jumps.

    References
    ----------
    .. [1] J. Abate and W. Whitt, "The Fourier-series method for inverting transforms of
       probability distributions", Queueing Systems 10, 5-87, 1992.
    .. [2] J. Abate, G. L. Choudhury and W. Whitt, "An introduction to numerical transform
       inversion and its application to probability models", in *Computational Probability*,
       Kluwer, 257-323, 2000.

    Examples
    --------
    The M/M/1 response time with ``mu - lam = 2`` is exponential with rate 2:

    >>> from queuetheory.transforms import invert_cdf
    >>> print(f"{invert_cdf(lambda s: 2.0 / (2.0 + s), 1.0):.10f}")   # 1 - exp(-2)
    0.8646647168
    >>> invert_cdf(lambda s: 2.0 / (2.0 + s), [0.0, 0.5]).round(10)
    array([0.        , 0.63212056])
    """
    return _invert_fast(lst, t, False, damping, n_terms, n_euler, None, full_output)


def invert_sf(lst: LST, t: ArrayLike, *, damping: float = _DAMPING, n_terms: int = _N_TERMS,
              n_euler: int = _N_EULER,
              full_output: bool = False) -> float | np.ndarray | tuple:
    """Survival function ``P(T > t)`` of a non-negative random variable from its LST (fast path).

    Inverts ``(1 - lst(s)) / s`` directly (not ``1 - cdf``), so that small tail probabilities
    keep their relative accuracy; see :func:`invert_cdf` for the method.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]`` on complex numpy arrays, as for :func:`invert_cdf`.
    t : float or array_like
        Times ``>= 0``; ``inf`` gives 0. Times below 1e-280 are treated as 0.
    damping, n_terms, n_euler : optional
        Tuning parameters, as for :func:`invert_cdf`.
    full_output : bool, optional
        Also return an estimate of the absolute error of each value.

    Returns
    -------
    float or numpy.ndarray
        ``P(T > t)`` clipped into ``[0, 1]``, in the shape of ``t`` (a float for a scalar ``t``);
        with ``full_output`` a tuple ``(value, error)``.
        At ``t = 0`` this is ``1 - P(T = 0)``.

    Raises
    ------
    ValueError
        If ``t`` has negative or NaN entries, a tuning argument is out of range, or ``lst``
        returns non-finite values on ``Re(s) > 0``.

    See Also
    --------
    invert_cdf, invert_quantile, invert_sf_mp

    Notes
    -----
    With the defaults the relative error is below about 1e-9 where ``P(T > t) >= 1e-4`` and
    below about 2e-7 where ``P(T > t) >= 1e-6`` for smooth distributions; use
    :func:`invert_sf_mp` further out in the tail.

    References
    ----------
    .. [1] J. Abate and W. Whitt, "The Fourier-series method for inverting transforms of
       probability distributions", Queueing Systems 10, 5-87, 1992.

    Examples
    --------
    >>> from queuetheory.transforms import invert_sf
    >>> print(f"{invert_sf(lambda s: 2.0 / (2.0 + s), 4.0):.8e}")   # exp(-8)
    3.35462628e-04
    """
    return _invert_fast(lst, t, True, damping, n_terms, n_euler, None, full_output)


def _bracket(evaluate: Callable, upper: np.ndarray, log_target: np.ndarray,
             scale: float) -> tuple[np.ndarray, ...]:
    """Times ``lo < hi`` (one pair per level) with ``h(lo) < 0 <= h(hi)``, on a grid of powers.

    The grid starts at ``scale * 4**k``, ``k = -2..2``, and grows on the side where a level is
    not yet bracketed by 4 points at a time, spaced 4, 16, 256, ... times apart in successive
    rounds (from 1e-280 to 1e300 in at most 8 rounds a side). Levels whose root lies below
    1e-280 (``q`` within round-off of the atom at 0) get ``lo = hi = 0``.
    """
    grid = scale * 4.0 ** np.arange(-2, 3)
    cdf, sf = _settled(evaluate, grid, upper, log_target)
    rounds = {"up": 0, "down": 0}
    while True:
        h = _objective(upper[:, None], log_target[:, None], cdf[None, :], sf[None, :])
        nonneg = h >= 0
        first = np.argmax(nonneg, axis=1)
        need_up = ~nonneg.any(axis=1)
        need_down = nonneg[:, 0] & (grid[0] > _T_TINY)
        if not (need_up.any() or need_down.any()):
            break
        new = []
        with np.errstate(over="ignore", under="ignore"):
            if need_up.any():
                if grid[-1] >= _T_HUGE:
                    raise ValueError("could not bracket the quantile below t = 1e300: is lst "
                                     "the LST of a proper distribution (lst(0+) = 1)?")
                steps = 4.0 ** (2 ** rounds["up"] * np.arange(1, 5))
                new.append(np.minimum(grid[-1] * steps, _T_HUGE))
                rounds["up"] += 1
            if need_down.any():
                steps = 4.0 ** (2 ** rounds["down"] * np.arange(1, 5))
                new.append(np.maximum(grid[0] / steps, _T_TINY / 2))
                rounds["down"] += 1
        extra = np.setdiff1d(np.concatenate(new), grid)
        ecdf, esf = _settled(evaluate, extra, upper, log_target)
        order = np.argsort(np.concatenate([grid, extra]))
        grid = np.concatenate([grid, extra])[order]
        cdf = np.concatenate([cdf, ecdf])[order]
        sf = np.concatenate([sf, esf])[order]
    rows = np.arange(upper.size)
    at_zero = first == 0
    lo_idx = np.maximum(first - 1, 0)
    lo = np.where(at_zero, 0.0, grid[lo_idx])
    hi = np.where(at_zero, 0.0, grid[first])
    return lo, hi, h[rows, lo_idx], h[rows, first]


def _settled(evaluate: Callable, t: np.ndarray, upper: np.ndarray,
             log_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CDF and SF at ``t`` from the first rule, refined only at times where the side of some
    level they fall on is in doubt (within ``_HONEST`` error estimates): a bracket needs signs."""
    cdf, sf, _, err_cdf, err_sf = evaluate(t, False, False)
    doubt = _in_doubt(upper[:, None], log_target[:, None], cdf, sf, err_cdf, err_sf).any(axis=0)
    if doubt.any():
        cdf[doubt], sf[doubt] = evaluate(t[doubt])[:2]
    return cdf, sf


def _in_doubt(upper, log_target, cdf, sf, err_cdf, err_sf):
    """Whether the CDF (SF for the upper levels) is within ``_HONEST`` error estimates of the
    level (broadcasting)."""
    value, err = np.where(upper, sf, cdf), np.where(upper, err_sf, err_cdf)
    return np.abs(value - np.exp(log_target)) <= _HONEST * err


_NOISE_STEP = 0.05
"""The refined quantile search stops once its step is below this fraction of the root's error
estimate (steps within the inversion's noise; at 1 the M/D/1-like RIQ(2) p95 moved 1.3e-6, a
quarter of its estimate, where the converged search was 3e-8 from the 20-digit value)."""

_HONEST = 4.0
"""Safety factor on the first rule's error estimate where only a sign is needed."""


def _objective(upper, log_target, cdf, sf):
    """Increasing in ``t``, zero at the quantile: ``log(1-q) - log SF`` or ``log CDF - log q``."""
    with np.errstate(divide="ignore"):
        return np.where(upper, log_target - np.log(np.maximum(sf, _LOG_TINY)),
                        np.log(np.maximum(cdf, _LOG_TINY)) - log_target)


def _solve_levels(evaluate: Callable, q: np.ndarray, scale: float, rtol: float,
                  maxiter: int = 100, tail: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised safeguarded Newton (rtsafe) on the log-CDF or log-SF, one root per level.

    ``evaluate(t, density, refine)`` returns ``(cdf, sf, pdf, err_cdf, err_sf)`` at a 1-d array
    of times in ``(0, inf)`` (``refine=False``: from the first rule of the inversion only, as
    :class:`_Inversion`); the CDF may jump (Newton steps stay inside the bracket, bisection
    otherwise, which converges onto a jump). Returns the roots, their final brackets
    ``lo <= t <= hi`` and the last Newton step of the roots where the refined iteration stopped
    because that step fell within the root's error estimate (0 elsewhere): a quantile's error
    estimate adds it. ``tail``: the levels ``1 - q`` to full relative accuracy (``1 - q``
    rounds the tail of a level computed near 1), the targets of the levels above 1/2.
    """
    upper = q > 0.5
    with np.errstate(divide="ignore"):
        log_tail = np.log1p(-q) if tail is None else np.log(tail)
    log_target = np.where(upper, log_tail, np.log(q))
    t, lo, hi, step = _solve(evaluate, upper, log_target, scale, rtol, maxiter)
    # The first rule's estimate can be far too small near a kink, so a side judged sure may be
    # wrong: a root the refined inversion does not confirm (the level between the CDF at
    # t -+ its error estimate) is solved again on the refined inversion alone.
    redo = ~_confirmed(evaluate, t, upper, log_target, rtol)
    if redo.any():
        def refined(x, density=False, refine=True):
            return evaluate(x, density, True)

        t[redo], lo[redo], hi[redo], step[redo] = _solve(refined, upper[redo],
                                                         log_target[redo], scale, rtol, maxiter)
    return t, lo, hi, step


def _solve(evaluate, upper, log_target, scale, rtol, maxiter):
    lo, hi, hlo, hhi = _bracket(evaluate, upper, log_target, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = lo - hlo * (hi - lo) / (hhi - hlo)
    t = np.where((t > lo) & (t < hi), t, 0.5 * (lo + hi))
    dx_old = hi - lo
    step = np.zeros(t.size)
    # first on the first rule alone (cheap, close to the root), moving the bracket only where
    # the sign is sure; then on the refined inversion from there
    for refine in (False, True):
        _newton(evaluate, refine, t, lo, hi, dx_old, upper, log_target, rtol, maxiter, step)
        dx_old = hi - lo
    return t, lo, hi, step


def _confirmed(evaluate, t, upper, log_target, rtol):
    """Whether the refined CDF (SF) at ``t -+ e`` lies on either side of each level within
    its error estimates, ``e`` the root's error estimate (:func:`_quantile_error`); roots at 0
    and where the density vanishes (jumps) are taken as they are."""
    ok = np.ones(t.size, dtype=bool)
    inner = np.flatnonzero(t > 0)
    if not inner.size:
        return ok
    e = _quantile_error(evaluate, t[inner], rtol)
    check = np.isfinite(e) & (e < t[inner])
    idx, e = inner[check], e[check]
    if not idx.size:
        return ok
    cdf, sf, _, err_cdf, err_sf = evaluate(np.concatenate([t[idx] - e, t[idx] + e]))
    target = np.exp(log_target[idx])
    up = upper[idx]
    value = np.where(np.tile(up, 2), sf, cdf)
    err = np.where(np.tile(up, 2), err_sf, err_cdf)
    below, above = value[:idx.size], value[idx.size:]
    eb, ea = err[:idx.size], err[idx.size:]
    # the SF falls through 1 - q, the CDF rises through q
    good = np.where(up, (below >= target - eb) & (above <= target + ea),
                    (below <= target + eb) & (above >= target - ea))
    ok[idx] = good
    return ok


def _newton(evaluate, refine, t, lo, hi, dx_old, upper, log_target, rtol, maxiter, step):
    """Safeguarded Newton steps of :func:`_solve_levels`, updating ``t``, ``lo``, ``hi`` and
    ``dx_old`` in place until converged (``refine=False``: on the first rule of the
    inversion, with the bracket moved only where the sign is beyond doubt). On the refined
    inversion a root is also converged when the next step is below ``_NOISE_STEP`` times its
    error estimate (the CDF's error over the density: steps within the noise of the inversion,
    each at the finest rule near a kink, locate the root no better); that step is written to
    ``step``, which the quantile's error estimate adds."""
    active = hi > 0
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        ti = t[idx]
        cdf, sf, pdf, err_cdf, err_sf = evaluate(ti, True, refine)
        h = _objective(upper[idx], log_target[idx], cdf, sf)
        sure = (np.ones(idx.size, dtype=bool) if refine else
                ~_in_doubt(upper[idx], log_target[idx], cdf, sf, err_cdf, err_sf))
        with np.errstate(over="ignore"):  # an infinite slope is a step: Newton skips it
            slope = pdf / np.maximum(np.where(upper[idx], sf, cdf), _LOG_TINY)
        lo[idx] = np.where((h < 0) & sure, ti, lo[idx])
        hi[idx] = np.where((h >= 0) & sure, ti, hi[idx])
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = ti - h / slope
        ok = (np.isfinite(newton) & (slope > 0) & (newton > lo[idx]) & (newton < hi[idx])
              & (2.0 * np.abs(newton - ti) <= np.abs(dx_old[idx])))
        mid = np.where(hi[idx] > 4.0 * lo[idx], np.sqrt(lo[idx] * hi[idx]),
                       0.5 * (lo[idx] + hi[idx]))
        t_new = np.where(h == 0, ti, np.where(ok, newton, mid))
        dx_old[idx] = t_new - ti
        done = ((h == 0) | (np.abs(t_new - ti) <= rtol * t_new)
                | (hi[idx] - lo[idx] <= rtol * hi[idx]))
        if refine:
            noise = _root_noise(pdf, err_cdf, err_sf)
            # only where the level lies within the CDF's error estimate of the value (far out
            # in a tail the density is tiny and the noise large: the M/G/1 quantile at 1 - 1e-9
            # of 0.5 Det(1) + 0.5 Exp(1) at load 0.95 stopped at 612, where P(T > t) is 5e-12,
            # not at 311.76), and not where the density vanishes (bisection then closes the
            # bracket on a jump)
            value = np.where(upper[idx], sf, cdf)
            level_err = np.where(upper[idx], err_sf, err_cdf)
            within = (~done & np.isfinite(noise) & (np.abs(t_new - ti) <= _NOISE_STEP * noise)
                      & (np.abs(value - np.exp(log_target[idx])) <= level_err))
            step[idx[within]] = np.abs(t_new - ti)[within]
            done |= within
        # a converged root stays at the time last evaluated (within rtol of the next step),
        # where the refined inversion already holds its density and error estimate
        t[idx] = np.where(done & refine, ti, t_new)
        active[idx[done]] = False


def _quantile_error(evaluate: Callable, t: np.ndarray, rtol: float) -> np.ndarray:
    """Error estimate of quantiles ``t > 0``: the CDF error over the density, plus ``rtol t``.

    ``inf`` where the density vanishes (a jump of the CDF, which the fast path cannot locate).
    """
    return _root_noise(*evaluate(t, True)[2:]) + rtol * t


def _root_noise(pdf, err_cdf, err_sf) -> np.ndarray:
    """How far a root moves within the CDF's error: that error over the density (``inf``
    where the density vanishes)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pdf > 0, np.minimum(err_cdf, err_sf) / pdf, np.inf)


def _monotone(levels: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """``roots`` made non-decreasing in ``levels`` (the quantile function is monotone; projecting
    estimates onto monotone sequences never increases the largest error)."""
    order = np.argsort(levels, kind="stable")
    out = np.empty_like(roots)
    out[order] = np.maximum.accumulate(roots[order])
    return out


def invert_quantile(lst: LST, q: ArrayLike, *, mean: float | None = None, rtol: float = 1e-10,
                    damping: float = _DAMPING, n_terms: int = _N_TERMS,
                    n_euler: int = _N_EULER,
                    full_output: bool = False) -> float | np.ndarray | tuple:
    """Quantile ``inf{t : P(T <= t) >= q}`` of a non-negative random variable from its LST.

    Brackets every level on the grid ``mean * 4**k``, ``k = -2..2`` (one vectorised inversion
    at 5 times, extended by 4 times at a time, ever further apart, until bracketed), then runs
    a vectorised safeguarded Newton iteration (Newton steps kept inside the bracket, bisection
    otherwise) on ``log P(T > t) - log(1 - q)`` for ``q > 1/2`` and on ``log P(T <= t) - log q``
    otherwise. The CDF, SF and density at the current iterates come from a single call of
    ``lst``. The bracket and the first Newton steps use the first rule of the inversion alone
    (refined only where the side of the level is in doubt), the last steps the adaptively
    refined inversion: a law with kinks costs the long rules at the root only.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]`` on complex numpy arrays, as for :func:`invert_cdf`.
    q : float or array_like
        Levels in the open interval (0, 1). All levels are solved together.
    mean : float, optional
        ``E[T]`` or any typical scale of ``T`` (finite, > 0), used to place the bracketing grid;
        1 if omitted.
    rtol : float, optional
        Relative tolerance on ``t`` for stopping the iteration, in (0, 1); default 1e-10. The
        result cannot be more accurate than the inversion itself.
    damping, n_terms, n_euler : optional
        Tuning parameters of the inversion, as for :func:`invert_cdf`.
    full_output : bool, optional
        Also return an estimate of the absolute error of each quantile: the CDF error over the
        density, plus ``rtol`` times the quantile (``inf`` where the density vanishes).

    Returns
    -------
    float or numpy.ndarray
        The quantiles, non-decreasing in ``q``, in the shape of ``q`` (a float for a scalar
        ``q``); 0 where ``q`` is at most the atom ``P(T = 0)``; with ``full_output`` a tuple
        ``(quantiles, errors)``.

    Raises
    ------
    ValueError
        If ``q`` is outside (0, 1), ``mean`` is not a finite positive number, ``rtol`` or a
        tuning argument is out of range, or the quantile cannot be bracketed in
        ``[1e-280, 1e300]`` (for instance for a defective transform with ``lst(0+) < 1``).

    See Also
    --------
    invert_quantile_mp, invert_sf

    Notes
    -----
    The relative error is that of the inverted SF (or CDF) divided by ``t f(t) / P(T > t)``
    (or ``t f(t) / P(T <= t)``). Measured on smooth transforms (exponential, Erlang,
    hyperexponentials, M/M/1 and M/G/1 in Pollaczek-Khinchine form): about 1e-12 for
    ``1e-4 <= q <= 0.9999``, 5e-9 at ``q = 1 - 1e-6`` and 5e-7 at ``q = 1 - 1e-8``. In the lower
    tail the CDF error is absolute, about ``exp(-damping) P(T <= 5 t)``, so very small levels of
    nearly deterministic distributions lose accuracy (Erlang-50: 2e-7 in ``P(T <= x)`` at
    ``q = 1e-6``, useless at ``q = 1e-12``); use :func:`invert_quantile_mp` there. Levels within
    round-off of an atom at 0 give 0. Near a jump of the CDF (M/D/1 response time) the result
    is only accurate to about 1e-2.

    A typical call costs 5 to 10 calls of ``lst``: one at 6 points for the atom at 0, one or
    two at ``5 * 132`` or ``4 * 132`` points for the bracketing grid and 3 to 8 Newton steps at
    132 points per level (more where the inversion refines).

    References
    ----------
    .. [1] W. H. Press, S. A. Teukolsky, W. T. Vetterling and B. P. Flannery, *Numerical
       Recipes*, 3rd ed., Cambridge University Press, 2007, Section 9.4 (``rtsafe``).

    Examples
    --------
    Quantiles of the exponential distribution with rate 2 are ``-log(1 - q) / 2``:

    >>> import math
    >>> from queuetheory.transforms import invert_quantile
    >>> x = invert_quantile(lambda s: 2.0 / (2.0 + s), 0.99, mean=0.5)
    >>> print(f"{x:.9f} {-math.log(0.01) / 2:.9f}")
    2.302585093 2.302585093
    >>> invert_quantile(lambda s: 2.0 / (2.0 + s), [0.5, 0.9]).round(9)
    array([0.34657359, 1.15129255])
    """
    arr = _checks.probability_level("q", q)
    scale = _mean_hint(mean)
    rtol = _positive_float("rtol", rtol, 1.0)
    inversion = _Inversion(lst, damping, n_terms, n_euler)
    flat = arr.ravel()
    out, err = np.zeros(flat.size), np.zeros(flat.size)
    todo = flat > _atom_at_zero(lst)
    if todo.any():
        out[todo], _, _, step = _solve_levels(inversion, flat[todo], scale, rtol)
        err[todo] = step
    out = _monotone(flat, out)
    inner = out > 0
    if full_output and inner.any():
        err[inner] += _quantile_error(inversion, out[inner], rtol)
    value = _shaped(out, arr)
    return (value, _shaped(err, arr)) if full_output else value


# --------------------------------------------------------------------------- mpmath path


def _precision(precision: int) -> int:
    """``precision`` as an int in ``[15, 1000]`` (decimal digits), or a ValueError."""
    value = _checks.positive_int("precision", precision, _MIN_PRECISION)
    if value > _MAX_PRECISION:
        raise ValueError(f"precision must be an integer >= {_MIN_PRECISION} and <= "
                         f"{_MAX_PRECISION} (decimal digits), got {precision!r}")
    return value


def _invert_mp_one(lst: LST, t: float, complement: bool, method: str) -> mpmath.mpf:
    """``P(T > t)`` or ``P(T <= t)`` at one finite ``t > 0`` in the current mpmath precision."""
    if complement:
        def transform(s):
            return (1 - lst(s)) / s
    else:
        def transform(s):
            return lst(s) / s
    try:
        value = mpmath.invertlaplace(transform, mpmath.mpf(t), method=method)
    except ZeroDivisionError:
        raise ValueError(f"mpmath.invertlaplace (method {method!r}) broke down at t = {t!r}; "
                         "raise precision or try another method") from None
    return mpmath.re(value)


def _atom_at_zero_mp(lst: LST) -> float:
    return _clean_atom(float(mpmath.re(lst(mpmath.mpf(_ATOM_ABSCISSAE[0])))))


def _invert_mp(lst: LST, t: ArrayLike, precision: int, complement: bool,
               method: str) -> float | np.ndarray:
    arr = _times("t", t)
    precision = _precision(precision)
    method = _method(method)
    flat = arr.ravel()
    out = np.empty(flat.size)
    with mpmath.workdps(precision):
        for i, ti in enumerate(flat):
            if ti == 0:
                atom = _atom_at_zero_mp(lst)
                out[i] = 1.0 - atom if complement else atom
            elif np.isinf(ti):
                out[i] = 0.0 if complement else 1.0
            else:
                out[i] = float(_invert_mp_one(lst, float(ti), complement, method))
    return _shaped(np.clip(out, 0.0, 1.0), arr)


def invert_cdf_mp(lst: LST, t: ArrayLike, precision: int = 30, *,
                  method: str = "dehoog") -> float | np.ndarray:
    """CDF ``P(T <= t)`` in high precision through :func:`mpmath.invertlaplace`.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]`` for a scalar mpmath ``mpc`` (or ``mpf`` for ``"stehfest"``),
        returning an mpmath number. Plain arithmetic keeps the working precision.
    t : float or array_like
        Times ``>= 0``; ``inf`` gives 1. Each time is a separate inversion (a Python loop).
    precision : int, optional
        Working precision in decimal digits (15 to 1000), set with :func:`mpmath.workdps`;
        :func:`mpmath.invertlaplace` raises it further internally. Default 30.
    method : {"dehoog", "cohen", "talbot", "stehfest"}, optional
        Inversion algorithm of :func:`mpmath.invertlaplace`. ``"dehoog"`` (default, about 50 ms
        per point at 30 digits) evaluates only on ``Re(s) > 0`` and is the most robust on
        non-smooth distributions. ``"cohen"`` (about 5 to 20 ms) also stays in ``Re(s) > 0``
        and is as accurate for smooth distributions, but not near kinks (errors of 1e-2 on the
        M/D/1 waiting time). ``"talbot"`` deforms the contour into ``Re(s) < 0`` and fails when
        ``lst`` has singularities there or grows there (``exp(-s D)``); ``"stehfest"`` loses
        accuracy on everything but very smooth distributions.

    Returns
    -------
    float or numpy.ndarray
        ``P(T <= t)`` rounded to double precision and clipped into ``[0, 1]``, in the shape of
        ``t`` (a float for a scalar ``t``). At ``t = 0`` this is the atom ``P(T = 0)``, read off
        as ``lst(1e300)``.

    Raises
    ------
    ValueError
        If ``t`` has negative or NaN entries, ``precision`` is not an integer in [15, 1000],
        ``method`` is unknown, or :func:`mpmath.invertlaplace` breaks down (a division by zero,
        seen with ``"dehoog"`` at times about ``10**(precision / 2)`` times the scale of ``T``).

    See Also
    --------
    invert_cdf, invert_sf_mp

    Notes
    -----
    Measured at 30 digits, the de Hoog result has an absolute error of about ``10**-precision``
    (relative error below 1e-25 where the SF is above 1e-4) for exponential, M/M/1 in
    Pollaczek-Khinchine form, M/E4/1 and M/G/1 mixture transforms. Where the distribution has
    kinks it converges slowly near them: for the M/D/1 waiting time (against Erlang's formula)
    the relative error is 2e-4 at ``t = D`` (a density jump), 2e-7 at ``2 D``, 3e-8 at ``3 D``,
    but 5e-14 at ``1.5 D`` and 5e-11 at ``2.5 D``. ``"cohen"`` is worse there: 1e-2 at
    ``1.5 D``, 1e-4 at ``3 D``.

    References
    ----------
    .. [1] F. R. de Hoog, J. H. Knight and A. N. Stokes, "An improved method for numerical
       inversion of Laplace transforms", SIAM J. Sci. Stat. Comput. 3(3), 357-366, 1982.
    .. [2] mpmath documentation, "Numerical inverse Laplace transform",
       https://mpmath.org/doc/current/calculus/inverselaplace.html

    Examples
    --------
    >>> from queuetheory.transforms import invert_cdf_mp
    >>> print(f"{invert_cdf_mp(lambda s: 2 / (2 + s), 1.0):.15f}")   # 1 - exp(-2)
    0.864664716763387
    """
    return _invert_mp(lst, t, precision, False, method)


def invert_sf_mp(lst: LST, t: ArrayLike, precision: int = 30, *,
                 method: str = "dehoog") -> float | np.ndarray:
    """Survival function ``P(T > t)`` in high precision through :func:`mpmath.invertlaplace`.

    Inverts ``(1 - lst(s)) / s``; the absolute error is about ``10**-precision``, so tail
    probabilities far below double-precision round-off keep many correct digits. For times far
    beyond the scale of ``T`` the cancellation in ``1 - lst(s)`` at small ``s`` eats digits:
    raise ``precision`` beyond ``t / E[T]`` of about ``10**(precision / 2)``.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]`` for scalar mpmath numbers, as for :func:`invert_cdf_mp`.
    t : float or array_like
        Times ``>= 0``; ``inf`` gives 0.
    precision : int, optional
        Working precision in decimal digits (15 to 1000). Default 30.
    method : {"dehoog", "cohen", "talbot", "stehfest"}, optional
        Inversion algorithm; see :func:`invert_cdf_mp`. Default ``"dehoog"``.

    Returns
    -------
    float or numpy.ndarray
        ``P(T > t)`` rounded to double precision and clipped into ``[0, 1]``, in the shape of
        ``t`` (a float for a scalar ``t``). At ``t = 0`` this is ``1 - P(T = 0)``.

    Raises
    ------
    ValueError
        If ``t`` has negative or NaN entries, ``precision`` is not an integer in [15, 1000],
        ``method`` is unknown, or :func:`mpmath.invertlaplace` breaks down (a division by zero,
        seen with ``"dehoog"`` at times about ``10**(precision / 2)`` times the scale of ``T``).

    See Also
    --------
    invert_sf, invert_cdf_mp

    References
    ----------
    .. [1] F. R. de Hoog, J. H. Knight and A. N. Stokes, "An improved method for numerical
       inversion of Laplace transforms", SIAM J. Sci. Stat. Comput. 3(3), 357-366, 1982.

    Examples
    --------
    >>> from queuetheory.transforms import invert_sf_mp
    >>> print(f"{invert_sf_mp(lambda s: 2 / (2 + s), 20.0):.12e}")   # exp(-40)
    4.248354255292e-18
    """
    return _invert_mp(lst, t, precision, True, method)


def invert_quantile_mp(lst: LST, q: ArrayLike, precision: int = 30, *,
                       mean: float | None = None, method: str = "dehoog",
                       rtol: float = 1e-13) -> float | np.ndarray:
    """Quantile ``inf{t : P(T <= t) >= q}`` in high precision through :func:`mpmath.invertlaplace`.

    Independent of the fast path: starting from ``mean``, the bracket grows or shrinks by
    factors 2, 4, 8, ... until it encloses the quantile, then :func:`scipy.optimize.brentq` solves
    ``log P(T > t) = log(1 - q)`` (``q > 1/2``) or ``log P(T <= t) = log q`` with every value of
    the function computed in ``precision`` digits (in ``log t`` for ``q <= 1/2``). Expect 15
    to 30 inversions per level.

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]`` for scalar mpmath numbers, as for :func:`invert_cdf_mp`.
    q : float or array_like
        Levels in the open interval (0, 1), solved one after the other.
    precision : int, optional
        Working precision in decimal digits (15 to 1000). Default 30.
    mean : float, optional
        ``E[T]`` or a typical scale of ``T`` (finite, > 0), the starting point; 1 if omitted.
    method : {"dehoog", "cohen", "talbot", "stehfest"}, optional
        Inversion algorithm; see :func:`invert_cdf_mp`. Default ``"dehoog"``.
    rtol : float, optional
        Relative tolerance of the root solve, in ``[4 eps, 1)``; default 1e-13.

    Returns
    -------
    float or numpy.ndarray
        The quantiles as floats, in the shape of ``q`` (a float for a scalar ``q``); 0 where
        ``q`` is at most the atom ``P(T = 0)``.

    Raises
    ------
    ValueError
        If ``q`` is outside (0, 1), ``precision`` is not an integer in [15, 1000], ``method`` is
        unknown, ``mean`` or ``rtol`` is out of range, or the quantile is above
        ``mean * 10**(precision / 2)`` (for instance for a defective transform with
        ``lst(0+) < 1``), where cancellation in ``1 - lst(s)`` would make the inversion
        unreliable; also if :func:`mpmath.invertlaplace` breaks down. A quantile below 1e-280
        is returned as 0.

    See Also
    --------
    invert_quantile, invert_sf_mp

    References
    ----------
    .. [1] R. P. Brent, *Algorithms for Minimization without Derivatives*, Prentice-Hall, 1973,
       Chapter 4.

    Examples
    --------
    >>> import math
    >>> from queuetheory.transforms import invert_quantile_mp
    >>> x = invert_quantile_mp(lambda s: 2 / (2 + s), 0.99, mean=0.5, method="cohen")
    >>> print(f"{x:.12f} {-math.log(0.01) / 2:.12f}")
    2.302585092994 2.302585092994
    """
    arr = _checks.probability_level("q", q)
    precision = _precision(precision)
    method = _method(method)
    start = _mean_hint(mean)
    rtol = _positive_float("rtol", rtol, 1.0)
    rtol = max(rtol, 4 * np.finfo(float).eps)
    flat = arr.ravel()
    out = np.zeros(flat.size)
    limit = min(start * 10.0 ** min(precision / 2, 300), _T_HUGE)
    with mpmath.workdps(precision):
        atom = _atom_at_zero_mp(lst)
        for i, qi in enumerate(flat):
            if qi > atom:
                out[i] = _quantile_mp_one(lst, float(qi), start, limit, method, rtol)
    return _shaped(out, arr)


def _quantile_mp_one(lst: LST, q: float, start: float, limit: float, method: str,
                     rtol: float) -> float:
    """One quantile: bracket from ``start`` up to ``limit`` (or down to 1e-280), then Brent."""
    upper = q > 0.5
    log_target = mpmath.log(1 - mpmath.mpf(q)) if upper else mpmath.log(mpmath.mpf(q))

    def objective(t: float) -> float:
        value = _invert_mp_one(lst, t, upper, method)
        log_value = mpmath.log(max(value, mpmath.mpf(_LOG_TINY)))
        return float(log_target - log_value) if upper else float(log_value - log_target)

    lo = hi = start
    h_lo = h_hi = objective(start)
    factor = 2.0
    while h_hi < 0:
        lo, h_lo = hi, h_hi
        hi *= factor
        factor *= 2.0
        if hi > limit:
            raise ValueError(f"could not bracket the quantile below t = {limit:g} (mean * "
                             "10**(precision / 2), where 1 - lst(s) loses half the digits): is "
                             "lst the LST of a proper distribution (lst(0+) = 1)? Otherwise "
                             "pass a larger mean or raise precision")
        h_hi = objective(hi)
    factor = 2.0
    while h_lo >= 0:
        if h_lo == 0:
            return lo
        hi, h_hi = lo, h_lo
        lo /= factor
        factor *= 2.0
        if lo < _T_TINY:
            return 0.0
        h_lo = objective(lo)
    if h_hi == 0:
        return hi
    if upper:
        return optimize.brentq(objective, lo, hi, xtol=_LOG_TINY, rtol=rtol)
    log_root = optimize.brentq(lambda x: objective(math.exp(x)), math.log(lo), math.log(hi),
                               xtol=rtol)
    return math.exp(log_root)
