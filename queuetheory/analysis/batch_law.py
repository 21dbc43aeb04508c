"""Batch completion times without removal, k -> infinity: the law of a batch's completion time
(:class:`BatchCompletionTime`) built from M/G/1 FCFS task sojourns (Pollaczek-Khinchine), with
the S&X tasks of a batch sharing one job size (the wait's tail by numerical inversion).

The derivation is in :mod:`queuetheory.analysis.mds`, which uses these laws.

References
----------
.. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion times",
   Operations Research Letters 49(1), 2021 (arXiv:1907.11052).
.. [2] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, eq. (5.105) (Pollaczek-Khinchine).
.. [3] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, eq. (2.1.3).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import interpolate, optimize, special

from .. import mg1, transforms
from ..distributions import Distribution, Exponential, Mixture, Pareto
from ..orderstats import OrderStatistic
from ..policies import MDS, Random
from ..quadrature import _quantile_table, _quantiles_on_pieces, gauss_legendre, moment_from_sf
from ..response import ResponseLaw, ResponseTime
from ..runtime import IR, SX
from ..system import System
from .riq import analyze_riq

__all__ = ["BatchCompletionTime"]

_GL_X_POINTS = 12
"""Gauss-Legendre rule per piece of ``E_X`` and ``E_S`` (probability space); the error
estimate repeats the computation with twice as many points (and ``2 _GL_T_POINTS``)."""
_GL_T_POINTS = 10
"""Gauss-Legendre rule per piece of ``int t^(k-1) P(T_b > t) dt``."""
_U_LEVELS = np.array([0.0, 1e-12, 1e-9, 1e-6, 1e-4, 0.003, 0.05, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99,
                      0.997, 0.999, 1 - 1e-4, 1 - 1e-5, 1 - 1e-6, 1 - 1e-8, 1 - 1e-10, 1.0])
"""Probability levels of ``X`` bounding the Gauss-Legendre pieces of ``E_X``, graded towards 0
and 1 where ``F_X^{-1}`` is singular (``u^(1/k)`` for Erlang-k, ``-log(1 - u)`` for tails)."""

_WAIT_PIECES = 10
_WAIT_NODES = 16
_WAIT_CELLS = 512
_WAIT_CHECK = 1e-9
"""Largest error of the smooth (Chebyshev) table of the wait's tail, else the dense one."""
_WAIT_DENSE = 2048
_WAIT_FLOOR = 1e-10
"""The wait's tail is inverted up to where ``P(W > y | W > 0)`` falls below this."""
_SF_NEGLIGIBLE = 1e-16
"""Moments and quantiles use ``P(T_b > t)`` up to where a bound of it falls below this."""
_MASS_NEGLIGIBLE = 1e-17
"""Pieces of ``E_X`` with less probability than this are left out."""
_CHUNK = 1 << 15
"""Evaluations of the wait's tail per numpy call."""
_INVERT_CHUNK = 48
"""Times per call of the transform inversion."""
_FAR_LEVELS = (1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12)


def _tasks(policy) -> int:
    """Tasks (coded jobs or copies) per batch: ``n + m`` for MDS, ``n d`` for replication."""
    return policy.n + policy.m if isinstance(policy, MDS) else policy.n * policy.d


class BatchCompletionTime(ResponseLaw):
    """Law of a batch's completion time (``Prediction.response_time`` for batch policies).

    A :class:`~queuetheory.ResponseLaw` given by a vectorised survival function, in double
    precision only: ``precision=`` raises ``NotImplementedError``, and so does
    ``full_output=True`` unless ``coarser`` gives the error estimates of the quantiles.

    Parameters
    ----------
    sf : callable
        ``t (1-d numpy array) -> P(T_b > t)``.
    scale : float
        A typical time (the mean task sojourn), used to place quadrature pieces.
    law : Distribution, optional
        A distribution with the same law to delegate to (its moments, quantiles and sampler).
    edges : array_like, optional
        Increasing times from 0 splitting ``t`` into pieces on which ``sf`` is smooth, the last
        one where ``sf`` is negligible (below about 1e-16): moments are then a fixed
        Gauss-Legendre rule per piece and quantiles a bracketed root search, instead of an
        adaptive search over a log grid.
    adaptive : bool, optional
        With ``edges``: ``sf`` may have further kinks inside the pieces, so moments use
        adaptive (bisecting) Gauss-Legendre from these pieces instead of a fixed rule.
    heavy : bool, optional
        The tasks' runtimes have an infinite second moment, so the tail may decay like a power
        and moments may diverge: they come from the tail with power-law extrapolation and a
        divergence check, as for :class:`~queuetheory.ResponseTime`.
    points : int, optional
        Gauss-Legendre points per piece of :attr:`_edges` for the moments (fixed rule).
    coarser : BatchCompletionTime, optional
        The same law computed with half the quadrature points: the distance of its quantiles
        is their error estimate (``ppf(q, full_output=True)``).
    sf_error : callable, optional
        With ``coarser``: ``t -> `` a bound of the error ``sf`` and ``coarser`` share (the
        inversion of the wait's tail both tables come from), added to the quantiles' estimates
        through the density.
    sojourn : (ResponseLaw, callable), optional
        Under IR, the task sojourn's law and the map from the batch time's levels to the
        sojourn's: a batch quantile is a sojourn quantile, and so is its error estimate.
    breaks : array_like, optional
        Times where ``sf`` jumps or kinks (:func:`_breakpoints`), made ends of the pieces of
        the adaptive moments (without ``edges``).
    """

    _label = "BatchCompletionTime (MDS/Replication without removal)"
    _accuracy = ("its double-precision values (order statistics of Pollaczek-Khinchine task "
                 "sojourns, the wait's tail by numerical inversion, quadrature over the job "
                 "size) carry no error estimate (qt.validate checks them against simulation)")

    def __init__(self, sf, scale: float, law: Distribution | None = None, *,
                 edges=None, adaptive: bool = False, heavy: bool = False,
                 points: int = _GL_T_POINTS, coarser: BatchCompletionTime | None = None,
                 sojourn: tuple | None = None, sf_error: Callable | None = None,
                 breaks=()):
        self._sf_function = sf
        self._breaks = np.unique(np.asarray(breaks, dtype=float))
        self._scale = float(scale)
        self._law = law
        self._edges = None if edges is None else np.asarray(edges, dtype=float)
        self._adaptive = bool(adaptive)
        self._heavy = bool(heavy)
        self._points = int(points)
        self._coarser = coarser
        self._sojourn = sojourn
        self._sf_error = sf_error
        if coarser is not None or sojourn is not None:
            self._accuracy = ("its double-precision values carry error estimates of the "
                              "quantiles (ppf(q, full_output=True)): " + (
                                  "the change when the quadrature points over the job size, "
                                  "the slowdown and t are halved" if coarser is not None else
                                  "those of the task sojourn's quantiles they are"))

    def __repr__(self):
        return f"BatchCompletionTime(law={self._law!r})" if self._law else "BatchCompletionTime()"

    def _sf(self, x):
        return self._sf_function(np.asarray(x, dtype=float).ravel()).reshape(np.shape(x))

    def _ppf(self, q):
        if self._law is not None:
            return self._law._ppf_all(q)
        if self._edges is None:
            return super()._ppf(q)
        q = np.asarray(q, dtype=float)
        sf_edges = self._sf(self._edges)
        out = np.empty(q.shape)
        for i, level in np.ndenumerate(q):
            out[i] = self._root(level, sf_edges)
        return out

    def _root(self, level: float, sf_edges: np.ndarray) -> float:
        """Smallest ``t`` with ``P(T_b <= t) >= level``: Brent's method in the piece of
        :attr:`_edges` where the survival function crosses ``1 - level`` (``0 < level < 1``,
        as the contract passes it to ``_ppf``)."""
        target = 1.0 - level
        j = int(np.argmax(sf_edges <= target))
        if sf_edges[j] > target:  # beyond the last edge
            return float(super()._ppf(np.array([level]))[0])
        if j == 0:
            return 0.0
        lo, hi = self._edges[j - 1], self._edges[j]
        if sf_edges[j] == target:
            return float(hi)
        root = optimize.brentq(lambda t: float(self._sf(np.array([t]))[0]) - target, lo, hi,
                               xtol=1e-300, rtol=4 * np.finfo(float).eps)
        # at a jump of the law Brent's method can stop a few ulps below it, where P(T_b <= t)
        # is still below the level (Replication(2, 3) without removal, S&X Deterministic(1) x
        # {1, 2}: 0.9999999999999993 for the jump at 1, found by a held-out fuzz): the first
        # point up to 16 ulps above with P(T_b <= t) >= level (else Brent's root: rounding of
        # P(T_b > t) where the density is tiny)
        for ulps in (0, 1, 2, 4, 8, 16):
            t = min(root * (1.0 + ulps * np.finfo(float).eps), hi)
            if float(self._sf(np.array([t]))[0]) <= target:
                return t
        return root

    def _isf(self, p):
        return self._law._isf_all(p) if self._law is not None else super()._isf(p)

    def _quantile_errors(self, q, values):
        if self._sojourn is not None:
            law, levels = self._sojourn
            if not isinstance(law, ResponseLaw):   # a closed form (M/M/1): rounding only
                return 4e-15 * np.abs(values)
            level, tail = levels(np.ravel(q))
            # the sojourn's solver on its tail level (the level itself rounds to 1 beyond
            # 1 - 1e-16: the batch's p = 1e-16 is a sojourn tail of 5e-17 for MDS(2, 0))
            sojourn = (law._fast_quantile(level, True, tail=tail)[1]
                       if isinstance(law, ResponseTime) else law.quantile_error(level))
            return np.reshape(sojourn, np.shape(q)) + 4e-15 * values
        if self._coarser is None:
            return None
        values = np.asarray(values, dtype=float)
        error = np.abs(values - self._coarser._ppf(q)) + 4e-15 * np.abs(values)
        if self._sf_error is not None:
            # the shared error of P(T_b > t) moves the root by about itself over the density
            # (central difference; at a jump the density is unbounded and the term vanishes)
            step = 1e-5 * np.maximum(values, self._scale * 1e-3)
            lower = np.maximum(values - step, 0.0)
            density = (self._sf(lower) - self._sf(values + step)) / (values + step - lower)
            shared = self._sf_error(values.ravel()).reshape(values.shape)
            with np.errstate(divide="ignore", invalid="ignore"):
                moved = np.where(shared > 0, shared / np.abs(density), 0.0)
            error = error + np.where(values > 0, moved, 0.0)
        return error

    def _scale_hint(self):
        return self._scale

    def with_mean(self, mean: float) -> BatchCompletionTime:
        """The same law, its mean computed elsewhere (:func:`_all_needed_mean`)."""
        law = copy.copy(self)
        law._first_moment = float(mean)
        return law

    _first_moment: float | None = None

    def _moment(self, k):
        if k == 1 and self._first_moment is not None:
            return self._first_moment
        if self._heavy:
            return moment_from_sf(self._sf, k, scale=self._scale)
        if isinstance(self._law, OrderStatistic) and self._law._renyi is not None:
            return self._law.moment(k)
        if self._edges is not None:
            return moment_from_sf(self._sf, k, self._edges, tail=False,
                                  rule="adaptive" if self._adaptive else self._points)
        # The survival function comes from numerical inversion, accurate to ~1e-11 absolute on
        # a bounded range: integrate (vectorised adaptive Gauss-Legendre) up to where it falls
        # below 1e-12; the truncated tail is negligible for light-tailed sojourns.
        grid = self._scale * 2.0 ** np.arange(-30.0, 30.25, 0.25)
        tail = np.minimum.accumulate(self._sf(grid))
        idx = np.searchsorted(-tail, -(1.0 - np.array(_FAR_LEVELS)))
        cuts = np.unique(grid[np.minimum(idx, grid.size - 1)])
        # the jumps and kinks as piece ends: inside a piece the adaptive rule bisects towards
        # each of them for dozens of rounds (an atom at 1 of the runtime: 11 s for the mean)
        cuts = np.union1d(cuts, self._breaks[(self._breaks > 0) & (self._breaks < cuts[-1])])
        return moment_from_sf(self._sf, k, cuts, rule="adaptive", tail=False)

    def _sample(self, size, rng):
        if self._law is not None:
            return self._law._sample(size, rng)
        return super()._sample(size, rng)


# ------------------------------------------------------------------------ waiting time
@functools.lru_cache(maxsize=4)
def _chebyshev_to_uniform(n_nodes: int, n_cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chebyshev (first kind) nodes ``tau_j`` in (0, 1) and the matrices mapping values at them
    to the interpolating polynomial's values and ``d/dtau`` at ``tau = i / n_cells``."""
    cheb = np.polynomial.chebyshev
    xi = np.cos(np.pi * (np.arange(n_nodes) + 0.5) / n_nodes)[::-1]
    to_coef = np.linalg.inv(cheb.chebvander(xi, n_nodes - 1))
    uniform = np.linspace(-1.0, 1.0, n_cells + 1)
    values = cheb.chebvander(uniform, n_nodes - 1) @ to_coef
    slopes = 2.0 * cheb.chebvander(uniform, n_nodes - 2) @ cheb.chebder(np.eye(n_nodes)) @ to_coef
    return 0.5 * (xi + 1.0), values, slopes


def _invert_sf(lst, t: np.ndarray, full_output: bool = False):
    """:func:`~queuetheory.transforms.invert_sf` at the 1-d array ``t``, ``_INVERT_CHUNK`` times
    per call (a few times faster than one call with large temporaries); with ``full_output``
    also its error estimates."""
    parts = [transforms.invert_sf(lst, t[a:a + _INVERT_CHUNK], full_output=True)
             for a in range(0, t.size, _INVERT_CHUNK)]
    values = np.concatenate([np.atleast_1d(v) for v, _ in parts])
    if not full_output:
        return values
    return values, np.concatenate([np.atleast_1d(e) for _, e in parts])


def _tail_end(lst, floor: float, probes: np.ndarray) -> float:
    """The point before the first of increasing ``probes`` (octaves apart, refined to an eighth
    of an octave) at which the inverted survival function falls below ``floor`` (beyond it the
    inversion's round-off can dominate)."""
    below = np.nonzero(_invert_sf(lst, probes) < floor)[0]
    if below.size == 0:
        return float(probes[-1])
    if below[0] == 0:
        return float(probes[0])
    fine = probes[below[0] - 1] * 2.0 ** (np.arange(1, 8) / 8.0)
    fine_below = _invert_sf(lst, fine) < floor
    first = int(np.argmax(fine_below)) if fine_below.any() else fine.size
    return float(fine[first - 1]) if first > 0 else float(probes[below[0] - 1])


class _WaitSF:
    """``y -> P(W > y)`` (1 for ``y < 0``) of the stationary M/G/1 FCFS wait ``W``.

    ``log P(W > y | W > 0)`` is inverted from the P-K transform once, on Chebyshev nodes of
    ``_WAIT_PIECES`` pieces uniform in ``zeta = log(1 + y / c)`` up to where the tail falls below
    ``_WAIT_FLOOR``, and turned into a fine cubic Hermite table in ``zeta`` (values and slopes of
    the piecewise Chebyshev interpolant). The table is checked against the inversion between the
    nodes; where the wait is not smooth (service times with atoms or bounded support give kinks)
    and it is off by more than ``_WAIT_CHECK``, the table comes instead from ``_WAIT_DENSE``
    inverted points with monotone (PCHIP) slopes, which keeps the error local to the kinks.
    Beyond ``w_max`` the tail is exponential with the secant decay rate of the last piece.
    Evaluating is a table look-up, so millions of points cost milliseconds. ``nodes`` and
    ``dense`` replace ``_WAIT_NODES`` and ``_WAIT_DENSE`` (a coarser table for the error
    estimate of :func:`queuetheory.analysis.mds.analyze_batch`). ``free`` and ``exact``: ``1 -
    rho`` as :func:`queuetheory.mg1._slack` gives it for the exact rate (near load 1 the
    transform then goes through the moment series). :meth:`error` bounds the error the
    inversion leaves in every table of this wait.
    """

    def __init__(self, lam: float, B: Distribution, free=None, exact: bool = False,
                 nodes: int = _WAIT_NODES, dense: int = _WAIT_DENSE):
        if free is None:
            free, exact = mg1._slack(lam, B)
        lst = mg1._PKTransform(lam, B, free, exact, wait=True)
        # the load itself: exactly rate E[B] where 1 - rho is exact (1 - float(free) would
        # lose its digits at small loads: 0 at load 1e-17)
        self.rho = rho = float(1 - free) if isinstance(free, Fraction) else lam * B.mean()
        self.c = c = B.mean() / 8.0
        # probes to 2^40 mean runtimes, and beyond by the wait's scale E[B] / (1 - rho)
        octaves = 41 + max(0, math.ceil(-math.log2(float(free))))
        self.w_max = w_max = _tail_end(lst, _WAIT_FLOOR * rho, c * 2.0 ** np.arange(1, octaves))
        self.zeta_max = zeta_max = math.log1p(w_max / c)

        def log_tail(zeta):
            """Inverted ``log P(W > y | W > 0)`` at ``y(zeta)``, monotone, and the inversion's
            error estimate relative to ``P(W > y)`` (the error of the logarithm)."""
            tail, error = _invert_sf(lst, c * np.expm1(zeta_max * zeta), full_output=True)
            tail = np.minimum.accumulate(np.clip(tail / rho, 1e-300, 1.0))
            with np.errstate(divide="ignore", over="ignore"):   # rho tail below the floats
                return np.log(tail), np.minimum(error / (rho * tail), 1e300)

        taus, values, slopes = _chebyshev_to_uniform(nodes, _WAIT_CELLS)
        at, relative = log_tail(((np.arange(_WAIT_PIECES)[:, None] + taus)
                                 / _WAIT_PIECES).ravel())
        at = at.reshape(_WAIT_PIECES, nodes)
        # the inversion's errors at the nodes through the interpolation of the logarithm:
        # sum_j |l_j| e_j / P_j at the table's points (l_j the cardinal polynomials), relative
        # to the tail, per cell the larger of its two ends
        spread = (relative.reshape(_WAIT_PIECES, nodes) @ np.abs(values).T).ravel()
        self._error_edges = ((np.arange(_WAIT_PIECES)[:, None]
                              + np.arange(_WAIT_CELLS + 1) / _WAIT_CELLS) / _WAIT_PIECES).ravel()
        self._error_envelope = np.maximum(spread[:-1], spread[1:])
        fine = (at @ values.T).ravel()  # per piece, cells + 1 values
        slope = (at @ slopes.T).ravel() / _WAIT_CELLS  # d/d(cell)
        keep = np.ones(fine.size, dtype=bool)
        keep[_WAIT_CELLS + 1::_WAIT_CELLS + 1] = False  # piece ends: keep the left piece's
        self._tabulate(fine[keep], slope[keep])
        check = (np.arange(_WAIT_PIECES)[:, None] + np.array([0.27, 0.73])).ravel()
        check_y = c * np.expm1(zeta_max * check / _WAIT_PIECES)
        error = rho * np.abs(np.exp(self._log_tail(check_y))
                             - np.exp(log_tail(check / _WAIT_PIECES)[0]))
        if error.max() > _WAIT_CHECK:
            zeta = np.linspace(0.0, 1.0, dense + 1)
            values, relative = log_tail(zeta)
            pchip = interpolate.PchipInterpolator(zeta, values)
            self._tabulate(values, pchip.derivative()(zeta) / dense)
            # PCHIP on a cell depends on the values of the two nodes either side, and moves
            # by at most about twice their errors (its slopes are harmonic means of secants)
            padded = np.pad(relative, 1, mode="edge")
            self._error_edges = zeta
            self._error_envelope = 2.0 * np.max([padded[j:j + dense] for j in range(4)], axis=0)
        self.log_end = self.coef[0][-1] + self.coef[1][-1] + self.coef[2][-1] + self.coef[3][-1]
        half = c * math.expm1(zeta_max * (1.0 - 1.0 / _WAIT_PIECES))
        self.decay = min((self.log_end - float(self._log_tail(np.array([half]))[0]))
                         / (w_max - half), -1e-300)

    def _tabulate(self, f: np.ndarray, d: np.ndarray):
        """Cubic Hermite coefficients per cell from values ``f`` and slopes ``d`` (per cell) at
        the cell ends, uniform in ``zeta``."""
        f, d = np.minimum(f, 0.0), np.minimum(d, 0.0)
        self.cells = f.size - 1
        self.per_zeta = self.cells / self.zeta_max
        self.coef = (f[:-1], d[:-1], 3.0 * (f[1:] - f[:-1]) - 2.0 * d[:-1] - d[1:],
                     2.0 * (f[:-1] - f[1:]) + d[:-1] + d[1:])

    def _log_tail(self, y):
        """``log P(W > y | W > 0)`` for ``y`` in ``[0, w_max]`` (in-place numpy throughout)."""
        z = y * (1.0 / self.c)
        np.log1p(z, out=z)
        z *= self.per_zeta
        i = z.astype(np.intp)
        np.minimum(i, self.cells - 1, out=i)
        z -= i
        a0, a1, a2, out = (a.take(i) for a in self.coef)
        out *= z
        out += a2
        out *= z
        out += a1
        out *= z
        out += a0
        return out

    def error(self, y):
        """A bound of the error of ``P(W > y)`` that every table of this wait shares: the
        inversion's estimate at the table's nodes about ``y``, relative to the tail (the table
        holds its logarithm), times the tail; at most ``rho``, since the table and the true
        tail both lie in ``[0, rho]`` (at small loads the inversion's absolute error exceeds
        the tail, and the relative bound means nothing); 0 for ``y < 0``, where ``P(W > y) =
        1`` exactly; beyond ``w_max``, where the tail is extrapolated, at least the tail at
        ``w_max``."""
        y = np.asarray(y, dtype=float)
        zeta = np.log1p(np.maximum(y, 0.0) / self.c) / self.zeta_max
        cell = np.clip(np.searchsorted(self._error_edges, zeta) - 1, 0,
                       self._error_envelope.size - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.minimum(np.nan_to_num(self._error_envelope[cell] * self(y), nan=np.inf),
                             self.rho)
        far = self.rho * math.exp(self.log_end)
        return np.where(y < 0, 0.0, np.where(y > self.w_max, np.maximum(out, far), out))

    def __call__(self, y):
        y = np.asarray(y, dtype=float)
        out = self._log_tail(np.clip(y, 0.0, self.w_max))
        far = y > self.w_max
        if far.any():
            out[far] = self.log_end + self.decay * (y[far] - self.w_max)
        np.exp(out, out=out)
        out *= self.rho
        out[y < 0] = 1.0
        return out


# ------------------------------------------------------------------------ batch laws
def _given_size(policy, H):
    """P(batch not done) given the batch's job size, from ``H`` = P(a task is not done), tasks
    conditionally i.i.d.: the ``(m + 1)``-th largest of ``n + m`` (MDS), or any of ``n`` jobs
    whose ``d`` copies are all unfinished (replication)."""
    H = np.clip(H, 0.0, 1.0)
    if isinstance(policy, MDS):
        return special.betainc(policy.m + 1, policy.n, H)
    with np.errstate(divide="ignore"):  # H = 1: log1p(-1) = -inf gives exactly 1
        return -np.expm1(policy.n * np.log1p(-H**policy.d))


def _given_size_slope(policy, H):
    """``d/dH`` of :func:`_given_size`: the Beta(m + 1, n) density at ``H`` (MDS), ``n d
    H^(d - 1) (1 - H^d)^(n - 1)`` (replication); at most the number of tasks."""
    H = np.clip(H, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if isinstance(policy, MDS):
            m, n = policy.m, policy.n
            return np.exp(special.xlogy(m, H) + special.xlog1py(n - 1, -H)
                          - special.betaln(m + 1, n))
        d, n = policy.d, policy.n
        return n * d * H ** (d - 1) * (1.0 - H ** d) ** (n - 1)


def _support_nodes(dist: Distribution):
    """Atoms and weights of a discrete law, or its tanh-sinh probability nodes."""
    if dist.atoms is not None:
        return dist.atoms
    x, w = dist._nodes
    keep = (w > 1e-300) & np.isfinite(x)
    return x[keep], w[keep] / w[keep].sum()


def _sx_batch_sf(policy, runtime: SX, lam_task: float, points: int = _GL_X_POINTS,
                 wait_sf: _WaitSF | None = None):
    """``t -> P(T_b > t)`` under S&X without removal: ``E_X[I_{H(t|X)}(m + 1, n)]`` (MDS) or
    ``E_X[1 - (1 - H(t|X)^d)^n]`` (replication), and the times splitting
    ``t`` into pieces on which it is smooth (jumps ``t = x s`` for atoms ``x`` of ``X`` and
    ``s`` of ``S``, kinks at the ends ``x`` of a bounded support; geometric otherwise) up to
    where it is negligible.

    ``H(t | x) = sum_s p_s P(W > t - x s)`` for discrete ``S`` (``P(W > y) = 1`` for
    ``y < 0``); for continuous ``S``, ``P(S > t / x) + int_0^{F_S(t / x)} P(W > t - x
    F_S^{-1}(u)) du`` (Gauss-Legendre pieces between the levels :data:`_U_LEVELS`). ``E_X``
    is Gauss-Legendre in probability space on ``[0, F_X(t / s_min)]`` split
    at the probability levels of :data:`_U_LEVELS` and at the jumps ``F_X(t / s)``; beyond,
    every task is unfinished (``H = 1``), which contributes ``P(X > t / s_min)`` exactly.
    ``points`` Gauss-Legendre points per piece; ``wait_sf``, the table of ``P(W > y)`` when
    already built. Returns the survival function, the edges and a bound of the error of the
    survival function that the table's inversion leaves (:meth:`_WaitSF.error` through the
    same rules: ``E_X[Psi'(H(t | X)) sum_s p_s e(t - X s)]``).
    """
    X, S = runtime.X, runtime.S
    B = runtime.replica()
    wait_sf = _WaitSF(lam_task, B) if wait_sf is None else wait_sf
    gl_nodes, gl_weights = gauss_legendre(points)
    gl_rule = (gl_nodes[None, :], gl_weights[None, :])
    s_values, s_weights = _support_nodes(S)
    atoms = S.atoms is not None
    s_fixed = None if atoms else _quantile_table(S, _U_LEVELS, gl_nodes)

    def H_chunk(t, x, error):  # P(W + x S > t) for 1-d arrays t, x of one size (its error)
        tail = wait_sf.error if error else wait_sf
        if atoms:
            return tail(t[:, None] - x[:, None] * s_values) @ s_weights
        # continuous S: P(x S > t) + E[P(W > t - x S); x S <= t], the expectation by
        # Gauss-Legendre in probability space on [0, F_S(t / x)] (the integrand jumps from
        # P(W > 0) = rho to 1 at S = t / x: a rule across it is first order, 0.5 % of a tail)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(x > 0, t / np.where(x > 0, x, 1.0), np.inf)
        top = S._cdf_all(ratio)
        levels = np.minimum(_U_LEVELS, top[:, None])
        lo, hi = levels[:, :-1], levels[:, 1:]
        w = (0.5 * (hi - lo)[..., None] * gl_weights).reshape(t.size, -1)
        s = _quantiles_on_pieces(S, lo, hi, _U_LEVELS, s_fixed, gl_rule).reshape(t.size, -1)
        below = (tail(np.maximum(t[:, None] - x[:, None] * s, 0.0)) * w).sum(axis=1)
        return below if error else S._sf_all(ratio) + below

    def H(t, x, error=False):  # in chunks: large temporaries are much slower (cache, paging)
        t, x = np.broadcast_arrays(t, x)
        flat_t, flat_x = t.ravel(), x.ravel()
        out = np.empty(flat_t.size)
        per_row = s_values.size if atoms else (_U_LEVELS.size - 1) * gl_nodes.size
        step = max(1, _CHUNK // per_row)
        for a in range(0, flat_t.size, step):
            out[a:a + step] = H_chunk(flat_t[a:a + step], flat_x[a:a + step], error)
        return out.reshape(t.shape)

    def given(t, x, error):  # P(T_b > t | X = x), or the bound of its error
        tail = H(t, x)
        if error:
            return _given_size_slope(policy, tail) * H(t, x, True)
        return _given_size(policy, tail)

    if X.atoms is not None:
        x_atoms, x_probs = _support_nodes(X)

        def sf(t, error=False):
            tt = np.repeat(t[:, None], x_atoms.size, axis=1)
            xx = np.broadcast_to(x_atoms, tt.shape)
            return given(tt, xx, error) @ x_probs

        jumps = np.outer(x_atoms, s_values).ravel() if atoms else np.array([])
    else:
        # the pieces over X end where x s crosses t at an atom of S (a jump of H(t | x)) or
        # at a finite end of a continuous S's support (a kink: 1e-4 of a tail across it)
        s_jumps = s_values if atoms else _positive_ends(S)
        s_min = s_values.min() if atoms else 0.0
        x_fixed = _quantile_table(X, _U_LEVELS, gl_nodes)

        def sf(t, error=False):
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                return _integrate_over_x(t, error)

        def _integrate_over_x(t, error):
            top = X._cdf_all(t / s_min) if s_min > 0 else np.ones_like(t)
            jumps = X._cdf_all(np.divide.outer(t, s_jumps))
            levels = np.sort(np.concatenate([np.minimum(_U_LEVELS, top[:, None]), jumps],
                                            axis=1), axis=1)
            lo, hi = levels[:, :-1], levels[:, 1:]
            keep = hi - lo > _MASS_NEGLIGIBLE  # each piece contributes at most its mass
            rows = np.nonzero(keep)[0]
            lo, hi = lo[keep], hi[keep]
            w = 0.5 * (hi - lo)[:, None] * gl_weights
            x = _quantiles_on_pieces(X, lo, hi, _U_LEVELS, x_fixed, gl_rule)
            tt = np.broadcast_to(t[rows, None], x.shape)
            pieces = (given(tt, x, error) * w).sum(axis=1)
            inner = np.bincount(rows, weights=pieces, minlength=t.size)
            # beyond t / s_min every task is unfinished: P(T_b > t | x) = 1 exactly
            return inner if error else inner + (1.0 - top)

        ends = X._ppf_all(np.array([0.0, 1.0]))  # kinks of P(T_b > t)
        ends = ends[np.isfinite(ends) & (ends > 0)]
        jumps = np.outer(ends, s_values).ravel() if atoms else np.array([])

    scale = _sojourn_scale(lam_task, B)
    geometric = scale * 2.0 ** np.arange(-8.0, 61.0)
    bound = _tail_bound(policy, wait_sf, X, s_values, s_weights, geometric)
    last = np.argmax(bound < _SF_NEGLIGIBLE) if (bound < _SF_NEGLIGIBLE).any() else -1
    horizon = geometric[last]
    edges = np.unique(np.concatenate([[0.0], geometric[:last + 1 if last >= 0 else None],
                                      jumps[jumps < horizon]]))

    def sf_any(t, error=False):
        t = np.asarray(t, dtype=float)
        out = np.zeros(t.shape) if error else np.ones(t.shape)
        positive = t > 0
        if positive.any():
            out[positive] = sf(t[positive], error)
        return out

    return sf_any, edges, functools.partial(sf_any, error=True)


_BREAKS_MAX = 64
"""Most jumps and kinks :func:`_breakpoints` lists (beyond, the adaptive rule finds them)."""


def _breakpoints(R: Distribution) -> np.ndarray:
    """Times where an M/G/1 sojourn ``W + R`` with runtimes ``R`` jumps or kinks, as far as
    they are known: the atoms of ``R`` (where the sojourn has atoms, the wait having one at 0)
    and their pairwise sums (jumps of the density of ``W``, hence of the sojourn's), and the
    finite ends of the supports of ``R`` and of its mixture components (jumps of the density);
    empty beyond ``_BREAKS_MAX`` of them."""
    masses = R._point_masses()
    atoms = masses[0] if masses is not None else np.empty(0)
    parts = R.components if isinstance(R, Mixture) else (R,)
    ends = np.concatenate([_positive_ends(part) for part in parts] + [atoms])
    if 0 < atoms.size <= 8:
        ends = np.concatenate([ends, np.add.outer(atoms, atoms).ravel()])
    ends = np.unique(ends[np.isfinite(ends) & (ends > 0)])
    return ends if ends.size <= _BREAKS_MAX else np.empty(0)


def _positive_ends(law: Distribution) -> np.ndarray:
    """The finite positive ends of the support of ``law`` (where its CDF may have a kink)."""
    ends = np.array(law._support(), dtype=float)
    return ends[np.isfinite(ends) & (ends > 0)]


def _tail_bound(policy, wait_sf, X, s_values, s_weights, t):
    """Upper bound of ``P(T_b > t)``: (tasks) ``P(W + X S > t) <= P(W > t/2) + P(X S > t/2)``
    (a union bound over the tasks; ``T_b`` is at most the last task's sojourn)."""
    half = 0.5 * t
    task = wait_sf(half) + X._sf_all(np.divide.outer(half, s_values)) @ s_weights
    return _tasks(policy) * task


def _sojourn_scale(lam_task: float, B: Distribution) -> float:
    """A finite typical task sojourn: the P-K mean, or ``E[B]`` when that mean is infinite."""
    mean = mg1.pk_mean(lam_task, B)
    return mean if math.isfinite(mean) else B.mean()


def _ir_batch_law(policy, runtime: IR, lam_task: float, exact_rate: Fraction | None = None):
    """Batch time under IR: an order statistic of i.i.d. P-K sojourns (exact M/M/1 forms),
    the sojourn's law, and the map from the batch time's levels ``q`` to the sojourn's levels
    and tails ``(u, 1 - u)`` (the ``q``-quantile of the batch time is the sojourn's quantile
    at ``u``), each to full relative accuracy: ``u`` from ``q`` below 1/2, ``1 - u`` from ``p
    = 1 - q`` (exact there) above (MDS: ``I_u(n, m + 1) = q``, ``I_(1-u)(m + 1, n) = p``;
    replication: ``1 - u = (1 - q^(1/n))^(1/d)``). ``exact_rate``:
    the task rate ``N lam / n`` as a Fraction, whose float ``lam_task`` would move ``1 - rho``
    by ``eps / (1 - rho)`` near load 1."""
    R = runtime.R
    rate = Fraction(lam_task) if exact_rate is None else exact_rate
    if isinstance(R, Exponential):
        sojourn = Exponential(float(Fraction(R.rate) - rate))
    else:
        # the M/G/1 (Random) response time: R itself, split off with probability 1 - rho, and
        # the queueing part inverted (kinks of R cost nothing)
        free, exact = mg1._slack(rate, R)
        sojourn = analyze_riq(System(Random(), runtime, arrival_rate=lam_task),
                              free=free if exact else None).response_time
    n = policy.n
    if isinstance(policy, MDS):
        m = policy.m
        inner = OrderStatistic(sojourn, n, n + m)

        def low(q):
            return special.betaincinv(n, m + 1, q)

        def high(p):
            return special.betaincinv(m + 1, n, p)
    else:
        # the largest of n minima of d: the minimum's tail 1 - q^(1/n), a sojourn's its d-th root
        d = policy.d
        inner = OrderStatistic(sojourn.minimum(d), n, n)

        def low(q):
            return -np.expm1(np.log1p(-q ** (1.0 / n)) / d)

        def high(p):
            return (-np.expm1(np.log1p(-p) / n)) ** (1.0 / d)

    def levels(q):
        q = np.asarray(q, dtype=float)
        upper = q >= 0.5
        with np.errstate(divide="ignore"):
            u = np.where(upper, 0.0, low(np.where(upper, 0.25, q)))
            tail = np.where(upper, high(np.where(upper, 1.0 - q, 0.5)), 1.0 - u)
        return np.where(upper, 1.0 - tail, u), tail

    return inner, sojourn, levels


def _sojourn_on_pieces(sojourn, edges: np.ndarray) -> tuple:
    """12-point Gauss-Legendre nodes ``t`` and weights on the pieces between ``edges``, and the
    sojourn's tail there with its stated errors: ``(t, weights, H, dH)``."""
    x, w = gauss_legendre(12)
    half = 0.5 * np.diff(edges)[:, None]
    t = (0.5 * (edges[:-1] + edges[1:])[:, None] + half * x).ravel()
    H, dH = sojourn.sf(t, full_output=True)
    return (t, (half * w).ravel(), np.clip(np.asarray(H, dtype=float), 0.0, 1.0),
            np.asarray(dH, dtype=float))


def _ir_batch_mean_error(policy, R: Distribution, sojourn, law: BatchCompletionTime,
                         mean: float) -> float:
    """Estimated error of the IR batch mean without removal, ``E[T_b] = int psi(H(t)) dt``
    with ``H`` the task sojourn's survival function and ``psi`` the order statistic's map
    (``I_H(m + 1, n)``, resp. ``1 - (1 - H^d)^n``): the sojourn's stated errors ``dH``
    propagated, ``int psi'(H) dH dt``, plus the difference between the mean and a second rule
    (12-point Gauss-Legendre on quarter octaves of ``t``: it bounds the quadrature error of
    either), plus the tail beyond ``t_end`` (where ``P(T_b > t)`` falls below 1e-17):
    ``P(T_b > t_end) t_end / (beta - 1)`` for a power tail ``t^-beta`` (the batch's tail index
    of :func:`_batch_tail_index`, at least 1 for ``E[R^2] < inf``; ``beta - 1`` taken as at
    most 1, the bound of tails decaying at least as fast as ``1 / t^2``). A closed-form (M/M/1)
    sojourn: rounding only."""
    if not isinstance(sojourn, ResponseLaw):
        return 4e-15 * mean
    edges = law._scale * 2.0 ** np.arange(-30.0, 40.25, 0.25)
    # the jumps and kinks as piece ends (a rule across a jump errs by about its size)
    edges = np.union1d(edges, law._breaks[(law._breaks > edges[0]) & (law._breaks < edges[-1])])
    tail = np.minimum.accumulate(law._sf(edges))
    index = _batch_tail_index(policy, R)
    # a power tail t^-beta: the inverted sojourn's tail is noise below about 1e-10 (there the
    # mean extrapolates it, moment_from_sf); the rule is cut there too and the power tail
    # added beyond, its index uncertain by the change of the local slope over the last octave
    floor = 1e-10 if math.isfinite(index) and law._heavy and _power_tail(R) else 1e-17
    last = int(np.searchsorted(-tail, -floor))
    first = max(int(np.searchsorted(-tail, -1.0, side="right")) - 1, 0)   # P(T_b > t) = 1 below
    edges, tail = edges[first:min(last + 1, edges.size)], tail[first:]
    last -= first
    t, weights, H, dH = _sojourn_on_pieces(sojourn, edges)
    n = policy.n
    if isinstance(policy, MDS):
        m = policy.m
        slope = np.exp(special.xlogy(m, H) + special.xlog1py(n - 1, -H) - special.betaln(m + 1, n))
    else:
        d = policy.d
        slope = n * d * (1.0 - H ** d) ** (n - 1) * H ** (d - 1)
    propagated = float(weights @ (slope * dH))
    integral = float(weights @ law._sf(t)) + edges[0]   # P(T_b > t) = 1 below edges[0]
    end = tail[min(last, tail.size - 1)] * edges[-1]
    if floor > 1e-17 and 5 <= last < tail.size:
        # the tail beyond the cut from the power law of the batch's index, and the error of
        # that index: the local slope over the last octave against it
        end = tail[last - 1] * edges[last - 1]
        local = math.log(tail[last - 5] / tail[last - 1]) / math.log(edges[last - 1]
                                                                      / edges[last - 5])
        integral += end / max(index - 1.0, 1e-3) - float(
            weights[t > edges[last - 1]] @ law._sf(t[t > edges[last - 1]]))
        beyond = end * abs(1.0 / max(local - 1.0, 1e-3) - 1.0 / max(index - 1.0, 1e-3))
        return float(propagated + abs(integral - mean) + beyond + 4e-15 * mean)
    rule = abs(integral - mean)
    beyond = end / min(max(index - 1.0, 1e-3), 1.0)
    return float(propagated + rule + beyond + 4e-15 * mean)


def _all_needed_mean(n: int, R: Distribution, sojourn, sojourn_mean: float,
                     law: BatchCompletionTime) -> tuple[float, float]:
    """Mean of a batch whose ``n`` tasks are all needed (MDS(n, 0), Replication(n, 1): the
    largest of ``n`` i.i.d. task sojourns ``T``) under IR runtimes with a power tail, and its
    estimated error, through the exact ``E[T]`` (Pollaczek-Khinchine): ``E[T_b] = int 1 - (1 -
    H)^n dt = n E[T] - int r(H) dt``, ``H(t) = P(T > t)``, ``r(H) = n H - 1 + (1 - H)^n = H
    sum_{j<n} (1 - (1 - H)^j)`` (a sum of positive terms, no cancellation). For a tail ``H ~
    t^-beta`` (runtimes of index ``alpha``: ``beta = alpha - 1``, Cohen) ``1 - (1 - H)^n`` falls
    like ``n t^-beta``, so that the mean of the law itself hangs on a tail extrapolated from
    where the inverted ``H`` is still above its noise, about 1e-10 (IR Pareto(2.5), MDS(4, 0)
    at load 0.3: 1.5e-4 relative stated), while ``r`` falls like ``C(n, 2) t^(-2 beta)``: what
    lies beyond that point is at most ``C(n, 2) H_c^2 t_c / (2 beta - 1)``, negligible.

    The integral: the adaptive rule of :func:`.moment_from_sf` on octaves of ``t`` from the
    shortest runtime (the jumps and kinks of ``H`` as piece ends) up to ``t_c``, where ``H``
    falls below 1e-10. The estimate: the sojourn's stated errors ``dH`` propagated (``int r'(H)
    dH dt``, ``r' = n (1 - (1 - H)^(n - 1))``, 12-point Gauss-Legendre on quarter octaves), the
    difference from that fixed rule, the part beyond ``t_c`` and rounding; at least
    ``_ALL_NEEDED_FLOOR`` relative."""
    floor = 1e-10
    # from the shortest runtime (H = 1 below it) or far below the sojourn's scale
    lower = float(R._support()[0])
    start = lower if lower > 0 else law._scale * 2.0 ** -30

    def pieces(step):
        edges = start * 2.0 ** np.arange(0.0, 120.0 + step, step)
        return np.union1d(edges, law._breaks[(law._breaks > start) & (law._breaks < edges[-1])])

    edges = pieces(0.25)
    tail = np.minimum.accumulate(np.clip(np.asarray(sojourn._sf(edges), dtype=float), 0, 1))
    last = min(int(np.searchsorted(-tail, -floor)), edges.size - 1)
    cuts = edges[:last + 1]
    octaves = pieces(1.0)
    octaves = np.append(octaves[octaves < cuts[-1]], cuts[-1])

    def r(H):
        H = np.clip(np.asarray(H, dtype=float), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            log_rest = np.log1p(-H)
        return H * sum(-np.expm1(j * log_rest) for j in range(1, n))

    # (from 0: the adaptive rule's first piece is [0, cuts[0]], where H = 1 below the
    # shortest runtime)
    integral = moment_from_sf(lambda t: r(sojourn._sf(t)), 1, octaves, rule="adaptive",
                              tail=False)
    below = cuts[0] * (n - 1) if lower > 0 else float(r(sojourn._sf(cuts[:1]))[0]) * cuts[0]
    t, weights, H, dH = _sojourn_on_pieces(sojourn, cuts)
    fixed = below + float(weights @ r(H))
    with np.errstate(divide="ignore"):
        slope = n * -np.expm1((n - 1) * np.log1p(-H))
    propagated = float(weights @ (slope * dH))
    beta = _batch_tail_index(MDS(n, 0), R)
    beyond = math.comb(n, 2) * tail[last] ** 2 * cuts[-1] / max(2.0 * beta - 1.0, 1e-3)
    mean = n * sojourn_mean - integral
    # at least _ALL_NEEDED_FLOOR relative: the terms above miss what the sojourn's inversion
    # errs near the kinks of H beyond its own estimates
    return mean, max(propagated + abs(integral - fixed) + beyond + 4e-15 * n * sojourn_mean,
                     _ALL_NEEDED_FLOOR * mean)


_ALL_NEEDED_FLOOR = 1e-8
"""Least relative error stated by :func:`_all_needed_mean`. Against five references for
Replication(2, 1) with Pareto(alpha, 1) runtimes (``2 E[T] - int H^2 dt``, the square integral
by Plancherel in mpmath, no inversion: ``scripts/power_tail_batch_references.py``; a second
grid agrees to 2.5e-9 relative or better) the means were 5e-13 to 3.4e-9 relative off (alpha 6
at load 0.5, where the mean of the law itself, by another integral of the same ``H``, is off
alike), with 1.8e-11 to 1.2e-10 relative stated by the sojourn's propagated errors and the
rules' difference."""


def _power_tail(R: Distribution) -> bool:
    """Whether ``P(R > t)`` decays like a power of ``t`` (a Pareto law, or a mixture with one):
    the M/G/1 sojourn then has a power tail too, of index ``alpha - 1`` (Cohen, below), even
    where ``E[R^2]`` is finite, so that its moments come from a tail extrapolated as a power
    law (a truncated integral left Replication(2, 1) with Pareto(2.5) runtimes at load 0.5
    2.7e-3 low, with 9.6e-4 stated)."""
    if isinstance(R, Pareto):
        return True
    return isinstance(R, Mixture) and any(
        _power_tail(c) for c, w in zip(R.components, R.weights) if w > 0)


def _batch_tail_index(policy, R: Distribution) -> float:
    """Tail index of the batch time without removal under IR, for runtimes with a power tail
    ``P(R > t) ~ c t^(-alpha)``: the M/G/1 wait (hence a sojourn) has index ``alpha - 1``
    (J. W. Cohen, "Some results on regular variation for distributions in queueing and
    fluctuation theory", J. Appl. Prob. 10, 1973), a batch is late only if ``m + 1`` tasks
    are (MDS: index ``(m + 1)(alpha - 1)``) or if the ``d`` copies of one job are
    (replication: ``d (alpha - 1)``). ``alpha`` is the Pareto parameter, else the local slope
    of ``log P(R > t)`` over an octave far in the tail; ``inf`` if the tail is lighter."""
    if isinstance(R, Pareto):
        alpha = R.alpha
    else:
        t = float(R.ppf(1.0 - 1e-9))
        tails = R.sf(np.array([t, 2.0 * t]))
        if not (np.isfinite(t) and tails[1] > 0):
            return math.inf
        alpha = math.log(tails[0] / tails[1]) / math.log(2.0)
    copies = policy.m + 1 if isinstance(policy, MDS) else policy.d
    return copies * (alpha - 1.0)
