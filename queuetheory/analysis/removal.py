"""MDS coding and batch replication WITH removal, k -> infinity: a mean-field (level-crossing) law.

Model: ``k`` FCFS servers; batches of ``n`` jobs arrive at rate ``lam k / n`` (``lam`` =
``arrival_rate`` per server). ``MDS(n, m)`` sends ``N = n + m`` coded tasks to distinct random
servers and completes at the ``n``-th task completion; ``Replication(n, d)`` sends ``d`` copies
of each job (``n d`` servers), a job completes at its first copy, the batch at its last job.
With removal, a task's unfinished work is removed when its batch (MDS) or its job (replication)
completes.

Derivation (``docs/theory/removal.md`` holds it in full). A task's occupancy is fixed when it
arrives, so a server's state is ``V``, the time until it is free of the work assigned to it. A task
arriving when the server's state is ``v`` and whose runtime is ``x`` moves it to
``v + min(x, (C - v)^+)`` with ``C`` the completion time (from the arrival) of the batch
(MDS) or of the job (replication). As ``k -> infinity`` the servers a batch uses are independent
with the stationary law ``F(w) = P(V <= w)`` (PASTA), tasks arrive at a server at rate
``lam_t = lam N / n`` (MDS) or ``lam d`` (replication), and ``V`` falls at rate 1 between them.
Level crossing at ``w > 0``: downcrossings ``f(w) = F'(w)``; upcrossings are task arrivals with
``V <= w < V + x`` whose batch is not complete at ``w``. Under IR, with
``q(w) = P(V + R <= w)``, the other tasks are independent, finished by ``w`` each with
probability ``q(w)``, so

    f(w) = lam_t (F(w) - q(w)) phi(q(w)),
    phi(q) = P(Binomial(N - 1, q) <= n - 1)      (MDS),   (1 - q)^(d - 1)   (replication),

with ``F(0) = 1 - busy fraction`` fixed by ``F(inf) = 1``; the batch completion time has

    P(C > t) = P(Binomial(N, q(t)) <= n - 1)     (MDS),   1 - (1 - (1 - q(t))^d)^n  (replication).

``n = 1`` (MDS) and ``n = 1`` (replication) are Redundancy-d; ``m = 0`` / ``d = 1`` give
``phi = 1``: independent M/G/1 queues. Exponential(``mu``) runtimes: ``q' = mu (F - q)``,
hence ``dF/dq = (lam_t / mu) phi(q)``, ``F = 1 - busy + (lam_t / mu) int_0^q phi`` and, from
``F(1) = 1`` and ``int_0^1 phi = n / N`` (MDS) or ``1 / d`` (replication), busy fraction
``lam / mu`` exactly; ``w(q) = int_0^q dq' / (mu (F(q') - q'))``.

Numerical method (IR): a uniform grid ``w_i = i h`` holding atoms of ``R`` as nodes; ``f``
piecewise linear between nodes with separate left and right limits at each node (``q`` jumps by
``F(0) P(R = w)`` at an atom ``w`` of ``R``: the atom of ``V`` at 0 meets the atom of ``R``), so
``F`` is the exact integral of ``f`` (trapezoid with one-sided limits) and ``q`` the exact
integral of that ``f`` against ``G = P(R <= .)`` (product integration; Gauss-Legendre per cell for
continuous ``R``, exact for atoms). The march is explicit in ``w`` up to a scalar solve per node;
``F(0)`` is found by Newton's method on ``F(W) = 1``. Three grids (``h``, ``h / 2``, ``h / 4``)
give Richardson-extrapolated statistics and their error estimates (``Prediction.errors``,
``response_time.quantile_error``); under IR they are refined until the estimated relative
errors of the mean and the busy fraction are below ``5e-7`` (a fourth grid ``2 h`` guards the
estimates) and those of the quantiles at levels 0.5, 0.9, 0.99 and 0.999 below ``5e-6``,
kinks of ``G`` (ends of a support) are nodes or split their cells, atoms of a law on at most
32 atoms that fall between the nodes are placed exactly (the jump of ``f`` in their cell,
:class:`_Between`; more atoms: first order, reported as such), and the march is
compiled with numba when installed, else its history sums are a blocked FFT (online)
convolution (``docs/theory/removal.md``, "IR accuracy"). Memory: at most
four grids of at most ``4 * 16384`` cells, five arrays of two columns each (IR, about 20 MB; with
atoms between the nodes also one row of ``P`` per atom while a grid is marched, at most 32 rows,
17 MB); the
S&X tables hold a few hundred ``X`` nodes per cell (the finest grid's at most ``_SX_BYTES / 4``,
64 MB, all grids' about three times that), and the numpy S&X march keeps the latest grid's
geometry while it fits in ``_SX_GEOMETRY_BYTES`` (256 MB).

S&X (discrete slowdowns ``S``): conditioned on the batch's ``X`` (Gauss-Legendre in probability
space, split where ``w = x s``), ``q(w | x) = sum_k p_k F(w - x s_k)`` evaluated from the grid.
Its grids are refined as under IR, bounded by the memory of their ``X`` nodes, and refused where
the finest grid cannot resolve the runtime over the workload's reach; for a continuous ``X``
the estimates include the Gauss-Legendre rule's error (nodes doubled once); for a job size
on atoms, products ``x s`` (up to 256) that fall between the nodes are placed exactly as IR's
atoms are (the jump of ``f`` in their cell, :meth:`_SXModel._jumps`); for a job size whose
density jumps at ``c``, the jumps of ``f``'s slope at ``c s_k`` that fall between the nodes are
placed exactly too (:func:`_density_bends`, :func:`_bend_shift`). Its march is
compiled with numba when it is installed (``pip install 'queuetheory[fast]'``), placing the
points ``w - x s_k`` on the grid as it uses them (:func:`_sx_point`), else numpy operations
per node (one gather and one contraction for the ``X`` nodes of a grid node, the geometry
built a block of nodes at a time); ``benchmarks/bench_removal.py --paths`` times both.
S&X with a continuous slowdown: fixed ``X`` nodes, each an IR convolution with ``x S``
(:mod:`.removal_continuous`), for a phase-type slowdown (exponential, Erlang,
hyperexponential, mixtures of them) the convolutions carried by the states of its phases.
Stability frontier: :func:`frontier`, from the travelling-front form of the equation, with
an error estimate from four grids (``full_output=True``).
Heavy tails (``E[R^2] = inf``) are refused, pointing to :func:`queuetheory.simulate`, and so
are long tails whose workload tail a grid of ``4 * 16384`` cells cannot reach while resolving
``R`` (Pareto runtimes with nothing removed).
"""

from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction
from typing import TypeVar

import numpy as np
from scipy import integrate, optimize, special

from .._jit import njit
from ..distributions import (
    Discrete,
    Distribution,
    Erlang,
    Exponential,
    HyperExponential,
    Mixture,
)
from ..orderstats import smallest_sum_mean
from ..policies import MDS, RedundancyD, Replication
from ..prediction import Prediction
from ..quadrature import _quantile_table, _quantiles_on_pieces
from ..response import ResponseLaw
from ..runtime import IR, SX
from ..system import System
from . import GOAL, budget, frontier_verdict, goal, goal_text
from .mds import BatchCompletionTime
from .meanfield import _aligned, _table

try:
    import numba
except ImportError:  # the S&X march then runs as numpy operations per node (slower)
    numba = None
# compiled, cached on disk under a stamp of the package's sources (.._jit; plain Python
# without numba)
_jit = njit(nogil=True)
# the same, inlined where it is called (a helper of the inner loops)
_jit_inline = njit(nogil=True, inline="always")
# the same, free to reorder the terms of a sum (SIMD: several times faster history sums)
_jit_sums = njit(nogil=True, fastmath={"reassoc", "contract"})

__all__ = ["analyze_removal", "frontier", "necessary_rate", "RemovalBatchTime",
           "ExponentialBatchTime", "RemovalError"]

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_ACCEPT = 1e-5
"""Newton steps on ``F(0)`` below this (relative) end the iteration (see :func:`_shoot`)."""
_M_BASE = 128
"""Cells of the coarsest of the three grids (``h``, ``h / 2``, ``h / 4``)."""
_M_MAX = 16384
"""Largest number of cells of the coarsest grid under IR (memory: a few arrays of 4 * this,
about 5 MB per grid; loads up to about 0.995 for runtimes on atoms, 0.99 for smooth ones)."""
_M_MAX_SX = 4096
"""The same under S&X (its grids also hold ``X`` nodes: further bounded by memory), except for
a job size on at most :data:`_FEW_X_ATOMS` atoms, whose grids cost about what IR grids do and
take :data:`_M_MAX` (the 4096 bound had left ``X`` on {0.5, 1.65, 3} times ``S`` in {1, 3} at
load 0.8 off its lattice of 0.05: first order, a p32 4.7e-3 off with 1.1e-4 stated)."""
_FEW_X_ATOMS = 16
"""Most atoms of a discrete job size whose S&X grids take the IR cell bound :data:`_M_MAX`."""


def _sx_cell_bound(discrete_x: bool, atoms: int) -> int:
    """The cell bound of an S&X model's grids before its memory bound: :data:`_M_MAX` for a
    job size on at most :data:`_FEW_X_ATOMS` atoms, else :data:`_M_MAX_SX` (discrete and
    continuous slowdowns alike)."""
    return _M_MAX if discrete_x and atoms <= _FEW_X_ATOMS else _M_MAX_SX


_Bound = TypeVar("_Bound", int, float)


def _sx_max_cells(discrete_x: bool, columns: int, memory_cells: int) -> int:
    """An S&X model's ``max_cells`` with ``columns`` ``X`` nodes per grid node: its cell bound
    (:func:`_sx_cell_bound`, times the grid budget, at least ``_M_BASE``) within
    ``memory_cells``, the cells its memory allows (as each model counts it)."""
    return min(max(_M_BASE, _budgeted(_sx_cell_bound(discrete_x, columns))), memory_cells)


def _sx_cells(discrete_x: bool, columns: int) -> tuple[int, int]:
    """:class:`_SXModel`'s ``max_cells`` and ``memory_cells``: the cells within which its
    finest grid (``4 max_cells`` cells) holds its table of ``X`` nodes in ``_SX_BYTES / 4``."""
    memory = max(_M_BASE, int(_budgeted(_SX_BYTES) / (256 * columns)))
    return _sx_max_cells(discrete_x, columns, memory), memory


def _budgeted(bound: _Bound) -> _Bound:
    """A bound on the grids' cells or memory times the grid budget (:func:`.grid_budget`), of
    the bound's type (a count of cells stays an integer)."""
    factor = budget()
    return bound if factor == 1 else type(bound)(bound * factor)


class RemovalError(ArithmeticError):
    """The mean-field equation with removal could not be solved to the stated accuracy."""


def refusal(error) -> str:
    """A :class:`RemovalError`'s message ending with what to do instead: "; use qt.simulate"
    unless it already says so."""
    text = str(error)
    return text if "qt.simulate" in text else f"{text}; use qt.simulate"


# ------------------------------------------------------------------------ the policy's kernel
class _Kernel:
    """``lam_t``, ``phi``, ``phi'`` and the batch survival function for MDS or replication."""

    def __init__(self, mds: bool, n: int, r: int, lam: float, remove: bool = True):
        self.mds, self.n, self.r = mds, n, r          # r = m (MDS) or d (replication)
        self.remove = remove                          # without: phi = 1 (M/G/1 queues)
        self.tasks = n + r if mds else r
        self.lam_t = lam * (n + r) / n if mds else lam * r
        self.phi_scalar = self._phi_scalar()

    def phi(self, q):
        if not self.remove:
            return np.ones_like(q)
        # p = 1 - q in [0, 1] (phi is a probability): rounding puts q a few units of 1e-16
        # below 0 before the first atom of R, and far above the frontier the march's q runs
        # negative (phi > 1 there had fed back into f < 0 and overflowed)
        p = np.minimum(np.maximum(1.0 - q, 0.0), 1.0)   # two ufuncs: np.clip's wrapper costs more
        if not self.mds:
            return p ** (self.r - 1)
        if self.r == 0:
            return np.ones_like(q)
        if self.r > 8:
            return special.betainc(self.r, self.n, p)   # NaN at p > 1
        # m <= 8: 1 - (1-p)^n sum_{j < m} C(N-1, j) p^j (1-p)^(m-1-j), the sum by Horner's
        # rule (absolute error ~1e-16, as phi_scalar; several times faster than betainc)
        rest = np.maximum(1.0 - p, 0.0)
        below, power = 1.0, 1.0
        for j in range(1, self.r):
            power = power * p
            below = below * rest + math.comb(self.tasks - 1, j) * power
        return np.maximum(1.0 - rest ** self.n * below, 0.0)

    def _phi_scalar(self):
        """:meth:`phi` for one float (the march's inner loop), as a function with the
        kernel's constants bound: for ``m <= 8``, ``1 - sum_{j < m} C(N-1, j) p^j
        (1-p)^(N-1-j)`` in Python floats (absolute error ~1e-16, several times faster than a
        scalar ``betainc``)."""
        if not self.remove or (self.mds and self.r == 0):
            return lambda q: 1.0
        # p = 1 - q in [0, 1], as in phi (betainc is NaN at p > 1: MDS(20, 10) with R in
        # {1, 10} was 24% off without numba)
        if not self.mds:
            power = self.r - 1
            return lambda q: min(max(1.0 - q, 0.0), 1.0) ** power
        if self.r > 8:
            return lambda q: float(special.betainc(self.r, self.n, min(max(1.0 - q, 0.0), 1.0)))
        first, ratios = self.tasks - 1, [(self.tasks - j) / j for j in range(1, self.r)]

        def phi(q: float) -> float:
            p = min(max(1.0 - q, 0.0), 1.0)
            rest = 1.0 - p
            if rest <= 0:
                return 1.0
            below = term = rest ** first     # j = 0
            for ratio in ratios:
                term *= ratio * p / rest
                below += term
            return max(1.0 - below, 0.0)

        return phi

    def phi_form(self) -> tuple[int, np.ndarray] | None:
        """``(mode, combs)`` for :func:`_phi_compiled` (``combs = C(N - 1, j)``, ``j < m``, the
        Horner sum of MDS with removal), compiled or not, or ``None`` where ``phi`` has no such
        form: MDS whose coefficients reach ``1e280`` (never for ``n + m <= 936``; the Horner
        sum stays accurate below, see :func:`_phi_compiled`). Without the form the march is the
        numpy one and places no atom between the nodes (first order). ``m`` had been capped
        at 32: MDS(1, 33) on IR runtimes ``{1, sqrt 2}`` w.p. 0.7, 0.3 at half its frontier
        took 9.9 s for a mean 6.3e-5 off (5.5e-4 stated), and is 1.1e-14 off Replication(1,
        34), the same system through ``phi = p^33``, with the same stated 2.9e-8."""
        mode = 0 if not self.remove else (1 if not self.mds else 2)
        combs, comb = [1], 1
        for j in range(1, self.r if mode == 2 else 0):
            comb = comb * (self.tasks - j) // j        # C(N - 1, j), exact
            if comb >= 1e280:
                return None
            combs.append(comb)
        return mode, np.array(combs, dtype=float)

    def compiled_phi(self) -> tuple[int, np.ndarray] | None:
        """:meth:`phi_form`, or ``None`` when numba is not installed."""
        return None if numba is None else self.phi_form()

    def compiled_sf(self) -> tuple[bool, np.ndarray] | None:
        """``(mds, combs)`` for :func:`_batch_sf_compiled` (``combs = C(N, k)``, ``k < n``, for
        MDS), or ``None`` when numba is not installed or the coefficients overflow."""
        combs = [math.comb(self.tasks, k) for k in range(self.n)] if self.mds else [1]
        if numba is None or max(combs) >= 1e280:
            return None
        return self.mds, np.array(combs, dtype=float)

    def batch_sf(self, q):
        """``P(C > t)`` from ``q = q(t)``."""
        return self.batch_sf_p(np.clip(1.0 - q, 0.0, 1.0))

    def batch_sf_p(self, p):
        """``P(C > t)`` from ``p = 1 - q(t)``."""
        if self.mds:
            return special.betainc(self.r + 1, self.n, p)
        with np.errstate(divide="ignore"):
            return -np.expm1(self.n * np.log1p(-(p ** self.r)))

    def phi_integral(self) -> float:
        """``int_0^1 phi(q) dq``: ``n / N`` (MDS), ``1 / d`` (replication)."""
        return self.n / self.tasks if self.mds else 1.0 / self.r


# ------------------------------------------------------------------------ runtime law on a grid
def _atoms(R: Distribution) -> tuple[np.ndarray, np.ndarray]:
    """The atoms of a law on finitely many points, empty arrays for any other law."""
    atoms = R.atoms
    return (np.array([]), np.array([])) if atoms is None else atoms


def _masses(R: Distribution) -> tuple[np.ndarray, np.ndarray]:
    """The point masses of any law (values and probabilities, summing to less than 1 for a law
    with a density too, such as a mixture with a Deterministic; empty arrays for a law without
    atoms or one that does not know them)."""
    masses = R._point_masses() if R._has_atoms else None
    return (np.array([]), np.array([])) if masses is None else masses


class _Weights:
    """Product-integration weights of ``G = P(R <= .)`` on the grid ``i h``, ``i = 0..M``.

    ``alpha[k] = (1/h) int_{(k-1)h}^{kh} (u - (k-1)h) G(u) du`` and
    ``beta[k] = (1/h) int_{(k-1)h}^{kh} (kh - u) G(u) du`` (``k = 1..M``), so that for ``f``
    linear on each cell ``int_0^{ih} f(v) G(ih - v) dv = sum_k alpha_k f_{i-k}^+ +
    beta_k f_{i-k+1}^-``; ``G_left[i] = G(ih-)``, ``G_right[i] = G(ih)``. ``alpha_bar``,
    ``beta_bar`` and ``Gbar_left`` are the same with ``1 - G`` (``alpha + alpha_bar = h / 2``),
    computed from ``P(R > .)`` so that they keep their relative accuracy where ``G`` is close to
    1: the march's ``F - q`` is their sum, not a difference of two sums close to 1. ``beta1 =
    beta_1``. With ``bars`` (S&X with a continuous slowdown takes only the weights of ``1 - G``
    and ``beta1``) ``alpha`` and ``beta`` are None, ``1 - G`` is the law's survival function on
    every cell (not one minus its CDF below its median: an Erlang's CDF there is scipy's
    ``gammainc``, half a table's time) and ``G`` its CDF on the first cell alone.
    """

    def __init__(self, R: Distribution, h: float, M: int, kinks: tuple = (),
                 bars: bool = False):
        values, probs = _atoms(R)
        a = h * np.arange(M)                          # cell k = 1..M is [a[k-1], a[k-1] + h]
        grid = h * np.arange(M + 1)
        if values.size:
            y = np.clip(values[None, :] - a[:, None], 0.0, h)
            self.alpha = ((h * h - y * y) / (2 * h)) @ probs
            self.beta = ((h - y) ** 2 / (2 * h)) @ probs
            self.alpha_bar = (y * y / (2 * h)) @ probs
            self.beta_bar = (y * (2 * h - y) / (2 * h)) @ probs
            self.G_right = (values[None, :] <= grid[:, None] * (1 + 1e-13)) @ probs
            self.G_left = (values[None, :] < grid[:, None] * (1 - 1e-13)) @ probs
            self.Gbar_left = (values[None, :] >= grid[:, None] * (1 - 1e-13)) @ probs
        else:
            # the atoms of a law with a density too (nodes where they have a common step) make
            # G jump there: G(ih-) = G(ih) - P(R = ih), and cells holding one are split at it
            values, probs = _masses(R)
            mass, nodes = _mass_at(values, probs, grid)
            self.Gbar_left = R._sf_all(nodes) + mass
            # with bars, G at the nodes by difference (where it is 1 in floating point)
            self.G_right = 1.0 - (self.Gbar_left - mass) if bars else R._cdf_all(nodes)
            self.G_left = self.G_right - mass
            # from the first node where G = 1 (in floating point) on, alpha = beta = h / 2
            # exactly: no Gauss-Legendre points there
            ones = np.flatnonzero(self.G_right[:M] >= 1.0)
            L = int(ones[0]) if ones.size else M
            tau = 0.5 * (1.0 + _GL_NODES)
            u = a[:L, None] + h * tau
            # G below the first node where it reaches 1/2, 1 - G beyond: each by its own
            # function where it is small (its relative accuracy), the other one by difference
            # (no cancellation above 1/2), half the evaluations of both (IR MDS(10, 2) at load
            # 0.5, best of 3: gamma(0.5) 0.70 -> 0.64 s, a product law U(0.5, 1.5) x
            # lognormal(0.5), fastest of 2, 1.55 -> 1.46 s; the same values to 13 digits);
            # with bars, 1 - G everywhere
            c = 0 if bars else min(int(np.searchsorted(self.G_right, 0.5)), L)
            G, Gbar = np.empty(u.shape), np.empty(u.shape)
            G[:c] = R._cdf_all(u[:c].ravel()).reshape(u[:c].shape)
            Gbar[c:] = R._sf_all(u[c:].ravel()).reshape(u[c:].shape)
            Gbar[:c] = 1.0 - G[:c]
            if bars:   # G on the first cell alone (beta_1), by the CDF
                top = min(L, 1)
                G[:top] = R._cdf_all(u[:top].ravel()).reshape(u[:top].shape)
            else:
                top = L
                G[c:] = 1.0 - Gbar[c:]
            # the cell's two weights as one product with the rule's (8, 2) matrix (four sums
            # of products had taken 40% of a weight table's time)
            rule = 0.5 * h * _GL_WEIGHTS[:, None] * np.stack([tau, 1.0 - tau], axis=1)
            self.alpha = np.full(M, 0.5 * h)
            self.beta = np.full(M, 0.5 * h)
            self.alpha[:top], self.beta[:top] = (G[:top] @ rule).T
            self.alpha_bar, self.beta_bar = np.zeros(M), np.zeros(M)
            self.alpha_bar[:L], self.beta_bar[:L] = (Gbar @ rule).T
            # G is not smooth at a kink or an atom c: Gauss-Legendre between them, all of a
            # cell's at once (a cell holding both ends of a narrow uniform, split at one of
            # them, had been 2e-3 off: U(0.01, 0.03) on a step of 0.05)
            cuts = {}
            for c in sorted(set(kinks) | set(values.tolist())):
                k = int(c // h)
                if k < M and 1e-12 * h < c - a[k] < h * (1 - 1e-12):
                    cuts.setdefault(k, []).append(c)
            for k, inside in cuts.items():
                self.alpha[k], self.beta[k] = _split_cell(R, a[k], h, inside)
                self.alpha_bar[k] = 0.5 * h - self.alpha[k]
                self.beta_bar[k] = 0.5 * h - self.beta[k]
        self.beta1 = float(self.beta[0])
        if bars:
            self.alpha = self.beta = None
            return
        self.abar_rev = self.alpha_bar[::-1].copy()  # abar_rev[M - k] = alpha_bar_k
        self.bbar_rev = self.beta_bar[::-1].copy()
        self.spectra = {}                            # of _History, by block size


def _mass_at(values: np.ndarray, probs: np.ndarray,
             grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P(R = x)`` at the nodes ``x`` of the ``grid`` for the atoms ``values`` (``probs``),
    an atom taken at a node within 1e-13 relative, and the nodes with such atoms in their
    place (the law's CDF there holds the atom whichever side of it the node's rounding
    fell)."""
    if not values.size:
        return np.zeros(grid.size), grid
    on = np.abs(values[None, :] - grid[:, None]) <= 1e-13 * grid[:, None]
    nodes = np.where(on.any(axis=1), values[np.argmax(on, axis=1)], grid)
    return on @ probs, nodes


def _split_cell(R: Distribution, a: float, h: float, cuts: list) -> tuple[float, float]:
    """``alpha`` and ``beta`` of :class:`_Weights` for the cell ``[a, a + h]`` with kinks or
    jumps of the density of ``R`` at the sorted ``cuts`` inside: Gauss-Legendre on each part
    between them (on each ``G`` is smooth)."""
    alpha = beta = 0.0
    ends = [a, *cuts, a + h]
    for lo, hi in zip(ends[:-1], ends[1:]):
        u = 0.5 * (lo + hi) + 0.5 * (hi - lo) * _GL_NODES
        w = 0.5 * (hi - lo) * _GL_WEIGHTS * R._cdf_all(u) / h
        alpha += float(w @ (u - a))
        beta += float(w @ (a + h - u))
    return alpha, beta


_JUMPS_MAX = 32
"""Most atoms of an IR runtime whose jumps between the nodes the march places exactly
(:class:`_Between`); with more, or an MDS ``phi`` without the form of :func:`_phi_compiled`,
they are a first-order error, reported as such."""


def _shifted_steps(b: np.ndarray, mass: np.ndarray, h: float) -> tuple[float, float] | None:
    """The steps ``h' = h c / (c - 1/2)`` and ``h c / (c + 1/4)``, ``c = b / h`` for the atom
    ``b`` of the largest mass between the nodes of step ``h`` and at least two cells out (its
    ``theta`` moves by half a cell back and a quarter forward; the others' by ``b' / b`` times
    that), or ``None`` when there is none."""
    cells = b / h
    off = np.abs(cells - np.round(cells)) > 1e-9 * cells
    # an atom at least two cells out (a step within a third of h; an atom below half a cell
    # would ask for a negative one: X {0.01, 16.2} x S {1, 2} was refused)
    off &= cells >= 2
    if not off.any():
        return None
    major = cells[off][int(np.argmax(mass[off]))]
    return h * major / (major - 0.5), h * major / (major + 0.25)


def _sawtooth(d, theta, h: float):
    """``int_0^d g`` for ``g(v) = [v >= theta h] - v / h`` on a cell ``[0, h]``: the unit jump
    of ``f`` at ``theta h`` beside the linear interpolation of the cell's end values (``g`` is
    0 at both ends; ``h (1/2 - theta)`` over the whole cell)."""
    return np.maximum(d - theta * h, 0.0) - d * d / (2.0 * h)


class _Between:
    """The atoms ``b`` of an IR runtime on atoms that fall between the nodes of the grid ``(h,
    M)``. ``q`` jumps at each (by ``F(0) P(R = b)``: the atom of ``V`` at 0), and so does
    ``f``, by ``J``: on the atom's cell ``c`` (``b = (c + theta) h``) ``f`` is the linear
    interpolation of the cell's end values plus ``J g`` (:func:`_sawtooth`), exact for ``f``
    linear on either side of ``b`` with one slope (a trapezoid that ignores the jump errs by
    ``J h (1/2 - theta)``: a first-order error, irregular in ``h``, that Richardson's
    extrapolation cannot remove and that a grid's differences can miss: IR {1, 1.0973}, M/G/1
    at load 0.6, the idle fraction 2.52e-4 off on grids of 8000 and of 16000 cells alike).
    The march adds ``J h (1/2 - theta)`` to ``F`` at the node ``c + 1`` and ``J P[j, i]`` to
    ``F - q`` at the nodes ``i >= c + 1``, with ``P[j, i] = h (1/2 - theta) - sum_k p_k
    int_0^{z_k} g``, ``z_k = min(max(i h - b_k - c h, 0), h)`` (the part of the cell ``q(ih)``
    reads through ``F(ih - b_k)``); ``P`` vanishes from ``end`` on.

    Attributes: ``b``, ``node`` (``c + 1``, nondecreasing), ``cell``, ``theta``, ``mass``
    (``P(R = b)``) and ``end``; ``P`` (``(atoms, M + 1)``) from :meth:`arrays`."""

    def __init__(self, values: np.ndarray, probs: np.ndarray, h: float, M: int):
        keep = (values > 0) & (values < M * h)
        b, mass = values[keep], probs[keep]
        off = np.abs(b - np.round(b / h) * h) > 1e-13 * b   # within rounding: on the node
        order = np.argsort(b[off])
        b, self.mass = b[off][order], mass[off][order]
        self.b = b
        self.cell = np.minimum(np.floor(b / h).astype(np.int64), M - 1)
        self.theta = b / h - self.cell
        self.node = self.cell + 1
        self.end = np.minimum(self.node + int(math.ceil(float(values.max()) / h)) + 2, M + 1)
        self._law, self._h, self._M = (values, probs), h, M

    def arrays(self) -> tuple:
        """What the marches take: ``node``, ``theta``, ``mass``, ``P``, ``end`` (``P`` built
        here: the readings off the nodes need only the geometry)."""
        (values, probs), h = self._law, self._h
        P = np.zeros((self.b.size, self._M + 1))
        for j in range(self.b.size):
            i = np.arange(self.node[j], self.end[j])
            z = np.clip(((i - self.cell[j]) * h)[:, None] - values[None, :], 0.0, h)
            P[j, i] = h * (0.5 - self.theta[j]) - _sawtooth(z, self.theta[j], h) @ probs
        return self.node, self.theta, self.mass, P, self.end


_NO_ATOMS_BETWEEN = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros((0, 1)),
                     np.zeros(0, dtype=np.int64))
""":meth:`_Between.arrays` of a grid without atoms between its nodes."""


_SX_JUMPS_MAX = 256
"""Most products ``x s`` of a job size on atoms and the slowdowns whose jumps between the nodes
the S&X march places exactly (:meth:`_SXModel._jumps`; no memory per product, but the node
after each is solved five times); with more, a first-order error, reported as such."""
_X_ATOMS_MAX = 32
"""Most atoms of a job size ``X`` mixing atoms with a density that S&X with removal takes
(each is a piece of the rule over ``X``, and its products with ``S`` nodes of the grids)."""


def _x_levels(X: Distribution) -> tuple[np.ndarray, np.ndarray]:
    """Probability levels bounding the pieces of the rule over ``X`` in probability space, and
    per piece the atom of ``X`` whose jump of ``F_X`` it spans (``nan``: a piece of the
    continuous part). The levels are :data:`_U_LEVELS`, ``F_X`` at the kinks of ``X`` (a
    mixture's parts' support ends: there ``F_X^{-1}`` has a kink, and a piece across it is
    integrated to second order only: S&X ``Mixture([U(1, 2.37), U(3.1, 4)])`` times ``{1, 2}``,
    MDS(1, 0), 5.3e-6 off Pollaczek-Khinchine with 1.1e-4 stated) and the ends ``F_X(a^-)``,
    ``F_X(a)`` of each atom ``a`` of a job size mixing atoms with a density (the quantile
    function is ``a`` between them: the rule there is exact). Raises ``NotImplementedError``
    for a mixed job size that does not know its atoms or has more than :data:`_X_ATOMS_MAX`."""
    parts = [_U_LEVELS]
    kinks = np.array(X._kinks(), dtype=float)
    if kinks.size:
        parts.append(X._cdf_all(kinks))
    values = tops = bottoms = np.empty(0)
    if X._has_atoms and X.atoms is None:
        masses = X._point_masses()
        if masses is None or masses[0].size > _X_ATOMS_MAX:
            raise NotImplementedError(
                f"S&X with removal: a job size mixing a density with atoms that it does not "
                f"list, or with more than {_X_ATOMS_MAX}, is not analysed; use qt.simulate")
        values, probs = masses
        tops = np.minimum(X._cdf_all(values), 1.0)
        bottoms = np.maximum(tops - probs, 0.0)
        parts += [tops, bottoms]
    levels = np.unique(np.clip(np.concatenate(parts), 0.0, 1.0))
    for bottom, top in zip(bottoms, tops):   # an atom's jump is one piece
        levels = levels[(levels <= bottom) | (levels >= top)]
    atom = np.full(levels.size - 1, np.nan)
    for value, bottom, top in zip(values, bottoms, tops):
        k = np.searchsorted(levels, bottom)
        if k + 1 < levels.size and levels[k + 1] == top and top > bottom:
            atom[k] = value
    return levels, atom


def _density_bends(X: Distribution, s: np.ndarray) -> tuple | None:
    """Where the slope of ``q`` jumps under S&X with a job size ``X`` whose density jumps at its
    kinks ``c`` (:func:`_kinks`: a Pareto's or uniform's support ends) by ``D = f_X(c^+) -
    f_X(c^-)``: ``q(w | x)`` holds ``p_k F(0)`` for ``x < w / s_k`` (the atom of ``V`` at 0)
    and not above, so ``E_X`` of a function ``G(q(w | X))`` has the slope term ``f_X(w /
    s_k) (G(q^-) - G(q^+)) / s_k``, which jumps by ``D / s_k`` times that difference at ``w =
    b = c s_k`` (``q^+`` the terms ``j`` with ``s_j < s_k``, ``q^- = q^+ + p_k F(0)``).
    Returns ``(b, c, D / s_k, k)`` sorted by ``b``, or ``None`` where a jump is not finite or
    none is (kinks of a continuous density stay first order, as before: not checked)."""
    kinks = np.array(X._kinks(), dtype=float)
    D = X._pdf_all(kinks * (1 + 1e-12)) - X._pdf_all(kinks * (1 - 1e-12))
    keep = np.abs(D) * kinks > 1e-9   # a density continuous there (rounding of order 1e-12)
    if not np.all(np.isfinite(D)) or not keep.any():
        return None
    c = np.repeat(kinks[keep], s.size)
    k = np.tile(np.arange(s.size), int(keep.sum()))
    b = c * s[k]
    order = np.argsort(b, kind="stable")
    return b[order], c[order], (np.repeat(D[keep], s.size) / s[k])[order], k[order]


@_jit
def _bend_shift(i, u0, u1, h, rows, F0, theta, c, slope, ks, s, p, lam_t, mode, n, r, combs):
    """What the trapezoid ``F_i = F_{i-1} + h (f_{i-1}^+ + f_i^-) / 2`` misses over the cell
    ``i - 1`` holding the bends ``u0..u1 - 1`` (:func:`_density_bends`) of one column (``rows``:
    the march's state ``F_c, f_c^+, f_{c+1}^-`` per cell, the last unknown and 0): ``-B h^2
    theta (1 - theta) / 2`` for a jump ``B`` of ``f``'s slope at ``(i - 1 + theta) h``, ``B =
    lam_t slope (g(q^-) - g(q^+))``, ``g(q) = (F - q) phi(q)``, with ``F(b)`` and ``q^+``
    read to ``O(h)`` (an ``O(h^3)`` error of ``F``)."""
    total = 0.0
    cell = i - 1
    for u in range(u0, u1):
        Fb = rows[cell, 0] + theta[u] * h * rows[cell, 1]
        q = 0.0
        for j in range(s.size):
            if s[j] < s[ks[u]]:
                z = c[u] * (s[ks[u]] - s[j])
                e = min(int(z / h), cell)
                d = z - e * h
                a2 = 0.5 * d * d / h
                q += p[j] * (rows[e, 0] + (d - a2) * rows[e, 1] + a2 * rows[e, 2])
        low = q + p[ks[u]] * F0
        B = lam_t * slope[u] * ((Fb - low) * _phi_compiled(low, mode, n, r, combs)
                                - (Fb - q) * _phi_compiled(q, mode, n, r, combs))
        total -= 0.5 * B * h * h * theta[u] * (1.0 - theta[u])
    return total


_NO_BENDS = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
             np.zeros(0, dtype=np.int64))
""":meth:`_SXModel.bends_between` of a grid without bends between its nodes."""


def _sx_lower(runtime) -> float:
    """The shortest S&X runtime ``x s`` (a batch takes at least that long)."""
    return max(float(runtime.X._support()[0]) * float(runtime.S._support()[0]), 0.0)


def _kink_lattice(kinks: tuple) -> float | None:
    """The common step of the kinks of ``G`` (see :func:`_lattice`), or ``None``."""
    return (_lattice(Discrete(np.array(kinks, dtype=float), np.full(len(kinks), 1 / len(kinks))))
            if kinks else None)


def _kinks(R: Distribution) -> tuple:
    """Positive finite points where ``G = P(R <= .)`` has a kink (:meth:`Distribution._kinks`:
    the ends of a uniform's, shifted exponential's or Pareto's support, and those of a
    mixture's parts inside its support). Empty for smooth laws and laws on finitely many
    points."""
    return R._kinks()


def _power_at_zero(R: Distribution) -> float | None:
    """A power ``a``, not an integer, in the density of ``R`` near 0 (``c x^a``, or ``c0 + c x^a``
    behind an integer power), or ``None`` (no density at 0, integer powers only, or one flatter
    than any power: a lognormal's). Read off the density at ``x``, ``2 x``, ``4 x``, ``8 x`` for
    ``x`` = 1e-6 mean runtimes: the leading power from the ratios, and where it is an integer
    the next from the ratios of successive differences (an exponential mixed with a
    Weibull(1.5)); a power must hold over the points (slopes within 0.05) and is an integer
    within 1e-3. Such a density puts an ``h^(2 + a)`` term in the grids' errors (the workload's
    density is not smooth at 0): below ``h^3`` (``a < 1``) a seventh of the extrapolations'
    difference does not cover it (S&X Weibull(1.5) x {1, 3, 7, 10, 12}, MDS(1, 0) at 0.9:
    6.8e-8 off Pollaczek-Khinchine with 2.2e-8 stated; IR Weibull(1.5) at 0.9: 3.9e-8 off,
    2.5e-8 stated; S&X Weibull(1.005), ``a = 0.005``, 1.27 times beyond). At the lower end ``c``
    of the support where it is above 0 (``c (x - c)^a``: a shifted gamma): there too (IR
    gamma(0.25) shifted by 0.03, M/G/1 at load 0.9, 3.6e-6 off with 1.0e-6 stated, the kink at
    ``c`` a node of every grid; found by review)."""
    if R.atoms is not None:
        return None
    x = R._support()[0] + 1e-6 * R.mean() * 2.0 ** np.arange(4)
    with np.errstate(all="ignore"):
        pdf = np.asarray(R._pdf_all(x), dtype=float)
        for values in (pdf, np.diff(pdf)):
            slopes = np.log2(values[1:] / values[:-1])
            if not np.all(np.isfinite(slopes)) or np.ptp(slopes) > 0.05:
                return None
            if abs(slopes[-1] - round(slopes[-1])) > 1e-3:
                return float(slopes[-1])
    return None


# ------------------------------------------------------------------------ the march
class _Solution:
    """One grid's solution: ``F`` at the nodes, ``f`` and ``q`` left/right limits."""

    def __init__(self, h, F, f_left, f_right, q_left, q_right, *extra):
        self.h, self.F = h, F
        self.f_left, self.f_right = f_left, f_right
        self.q_left, self.q_right = q_left, q_right
        self.extra = extra                    # a model's own node arrays (marched with F)
        self.sf_left = self.sf_right = None   # P(C > t) at the nodes, set by the model
        self.mean_fix = 0.0   # what the trapezoid of _grid_mean misses (set by the model)
        self.slopes = None    # the march's arrays' derivatives in F0 (_solved)

    @property
    def F0(self) -> float:
        return float(self.F[0])


class _GridModel:
    """What :func:`_solve_grids`, :func:`_refine` and :func:`grid_prediction` read of a runtime
    model (:class:`_IRModel`, :class:`_SXModel`, :class:`.removal_continuous.
    _SXContinuousModel`), with the defaults the models override."""

    lattice: float | None = None
    """Common step of the atoms of the runtime (held as nodes), or ``None``."""
    kink_lattice: float | None = None
    """Common step of the kinks of the equation (held as nodes where cheap), or ``None``."""
    loose_kinks = False
    """Kinks without a common step: between the nodes, a first-order error."""
    has_atoms = False
    between = False
    """Atoms of the runtime between the nodes are placed exactly (:class:`_Between`)."""
    bends = None
    """Jumps of the slope of ``f`` placed between the nodes exactly (S&X:
    :func:`_density_bends`), or ``None``."""
    rough = False
    """Richardson's extrapolation leaves an ``O(h^2)`` remainder (see :func:`_richardson`)."""
    approach_checked = False
    """The grids' differences must be seen to approach the ``h^2`` regime (:func:`_moving_away`),
    else the estimates are at least the last difference of the grids (S&X on continuous
    slowdowns)."""
    rough_above = math.inf
    """Finest step beyond which the final estimates are rough (S&X on discrete slowdowns:
    :data:`_ROUGH_STEP` mean runtimes, or for a job size with a density
    :data:`_ROUGH_STEP_FASTEST` times its mean at the smallest slowdown, whichever is
    smaller)."""
    unresolved_above = math.inf
    """Finest step beyond which the grids do not resolve the runtime's fastest part and the
    estimates are at least the last difference of the grids (S&X on discrete slowdowns, a job
    size with a density: :data:`_UNRESOLVED_STEP_FASTEST` times its mean at the smallest
    slowdown; on continuous slowdowns, a job size on atoms: the same times the smallest atom
    times ``E[S]``, beyond which the grids are refused: :attr:`refuse_unresolved`)."""
    fastest_text = "the job size at the smallest slowdown"
    """What the runtime's fastest part is, in the ``method`` where it is not resolved."""
    refuse_unresolved = False
    """Whether grids that do not resolve the runtime's fastest part are refused rather than
    answered with at least the last difference of the grids as their estimates."""
    read_stretched = False
    """Whether :meth:`sf_stretched` reads ``P(C > t)`` off the nodes: where the stretched
    grids measure a first-order term (atoms the march does not place: of a law with a density,
    beyond ``_JUMPS_MAX`` or ``_SX_JUMPS_MAX`` of them, or with an MDS ``phi`` without the
    form of :func:`_phi_compiled`), beside which the reading's ``O(h^2)`` error is small, and
    :meth:`sf_at` at every node of the finest grid is costly (IR with a density: :func:`_q_at`
    over the runtime's span, quadratic in the cells, minutes for 65536 cells of an exponential
    part; a law on 300 atoms: 1.4 GB, twice the point's memory; S&X: 0.35 s for 16384
    nodes, a third of such a point's CPU). Not for the second-order terms of placed atoms or
    bends (a uniform job size times three slowdowns, M/G/1 at 0.5: the relative estimates of
    its p10 to p99, 1.4e-7 to 1.2e-6 with :meth:`sf_at`, were 1.4e-6 to 1.9e-5 with the
    reading)."""
    jumps = np.zeros(0)
    """Where ``P(C > t)`` jumps (the atom of ``V`` at 0 meets an atom of the runtime)."""
    busy_exact = False
    """Whether the busy fraction is ``lam E[R]`` exactly (:func:`_memoryless_given_x`): then
    it is stated so, and sets no target of the refinement."""
    front_rough_above = math.inf
    """Finest step of the frontier's grids beyond which they are refined, or where that does
    not suffice its estimate is rough (:data:`_FRONT_ROUGH_STEP_FASTEST` times the mean of the
    runtime's fastest part: S&X on discrete slowdowns, a job size with a density, its mean at
    the smallest slowdown; IR, :func:`_fastest_mean`; :func:`frontier`)."""
    resolve_above = math.inf
    """Finest step :func:`_refine` refines to within the cell bound at the default goal, the
    estimates met or not (S&X on discrete slowdowns, a job size with a density:
    :data:`_ROUGH_STEP_FASTEST` times its mean at the smallest slowdown; a runtime with a
    density: :data:`_COARSE_STEP_MEAN` mean runtimes)."""
    coarse_above = math.inf
    """Finest step beyond which, on grids the cell bound stopped, the estimates are at least
    twice the last difference of the grids, or the larger of the last two with ``stalls`` (a
    runtime with a density: :data:`_COARSE_STEP_MEAN` mean runtimes)."""
    stalls = False
    """The grids' errors can stall between two of their terms of opposite signs (a density
    ``c x^a`` at 0 with ``a < 0``: ``h^2`` and ``h^(2 + a)``), so that one difference vanishes
    by chance (:data:`_COARSE_STEP_MEAN`)."""
    floor = 0.0
    """Rounding floor of the relative error estimates, over the idle fraction."""
    floor_squared = 0.0
    """The same over the idle fraction squared (near load 1 the larger)."""
    sf_floor_squared = 0.0
    """Rounding floor of ``P(C > t)`` (absolute) over the idle fraction squared, in the
    quantiles' error estimates (:meth:`RemovalBatchTime._quantile_errors`)."""
    accept = _ACCEPT
    """Newton's tolerance on ``F(0)`` (relative) in :func:`_shoot`."""
    tangents = False
    """Solutions keep their derivatives in ``F0`` (:func:`_solved`): the rule over ``X`` is
    checked on the finest grid by one march (:func:`grid_prediction`)."""
    one_march = False
    """The finer grids are shot in one march of three columns, the guess and the guess plus and
    minus a fifth of its expected change (:func:`_shoot`'s ``spread``), not by Newton's steps
    of two columns: S&X on discrete slowdowns, and a continuous job size on continuous ones,
    whose marches cost per column and ``X`` node (a point with continuous slowdowns 1.06 to
    1.10 times less CPU, ``benchmarks/bench_removal.py --shots``). Not under IR (0.95 to 1.02
    times the time but Pareto(2.5)'s 1.2; the quadratic's weights moved ``F`` at an atom's jump
    by a unit in the last place, where quantiles at the top of a jump are exact), nor for a job
    size on atoms on continuous slowdowns (the IR march's steps: ``X = 1`` is the IR analysis
    of ``S`` to 1e-12)."""
    _max_cells: int | None = None
    memory_cells: int | None = None
    """S&X: the cells its memory bound alone allows the coarsest grid (its ``X`` nodes; the
    frontier's grids take it up to the IR cell bound, :meth:`_Front.max_cells`), else
    ``None``."""

    @property
    def max_cells(self) -> int:
        """Largest number of cells of the coarsest of the last three grids (``_M_MAX`` times
        the grid budget, :func:`.grid_budget`, unless the model bounds it by its memory)."""
        return _budgeted(_M_MAX) if self._max_cells is None else self._max_cells

    @max_cells.setter
    def max_cells(self, cells: int):
        self._max_cells = cells

    def shifted_steps(self, sol: _Solution) -> tuple[float, float] | None:
        """Two steps within a cell's width of ``sol``'s that move the atoms of the runtime
        between its nodes by about half a cell back and a quarter forward (for the error
        estimate of :func:`grid_prediction`: :func:`_shifted_steps`), or ``None`` (no atom
        between the nodes)."""
        return None

    def sf_stretched(self, sol: _Solution, t: np.ndarray) -> np.ndarray:
        """``P(C > t)`` of ``sol``, solved on a grid of :meth:`shifted_steps`, at the nodes
        ``t`` of the finest grid: :meth:`sf_at`, or with :attr:`read_stretched` read off
        ``sol``'s nodes (:func:`_sf_read`, one-sided at :attr:`jumps`)."""
        if not self.read_stretched:
            return self.sf_at(sol, t)
        out = _sf_read(sol, t, self.jumps)
        between = np.isnan(out)
        if between.any():
            out[between] = self.sf_at(sol, t[between])
        return out

    def interpolation_gap(self, sol: _Solution, t: np.ndarray) -> np.ndarray | None:
        """The gap between ``P(C > t)`` with ``F`` read off the march's quadratic of each cell
        and with ``F`` from cubics through four nodes (:func:`_F_cubic`), at the times ``t``:
        the size of the quadratic's error between the nodes, which depends on where ``t - x``
        falls in its cell for runtimes on atoms (see :meth:`RemovalBatchTime.
        _quantile_errors`); ``None`` for runtimes without atoms (the cells' errors average
        out)."""
        return None


def _march(kernel: _Kernel, weights: _Weights, h: float, M: int, F0: np.ndarray,
           geometry: tuple | None = None):
    """March the level-crossing equation from ``w = 0`` for each starting atom ``F0`` (columns).

    Returns arrays of shape ``(M + 1, columns)``: ``F``, ``f^-``, ``f^+``, ``q^-``, ``q^+``
    and the jumps ``J`` of ``f`` at atoms between the nodes, ``(atoms, columns)`` (their
    ``geometry``: :meth:`_Between.arrays`; :func:`_jump_node`). The
    history sums are a blocked online convolution (:class:`_History`, ``O(M log^2 M)``); the
    per-node solve is scalar Python, column by column. When numba is installed and ``phi`` has
    the polynomial form of :func:`_phi_compiled`: the same operations compiled, with direct
    ``O(M min(M, L))`` sums (:func:`_march_compiled`) where ``min(M, L) <= _COMPILED_SPAN``,
    else with the blocks of :class:`_History` marched by :func:`_leaf_compiled`.
    """
    compiled = kernel.compiled_phi()
    # cells k >= L lie where G = 1 (in floating point): alpha_k = beta_k = h / 2 there
    ones = np.flatnonzero(weights.G_right[1:] >= 1.0)
    L = max(int(ones[0]) + 2, 2) if ones.size else M + 1
    geometry = _NO_ATOMS_BETWEEN if geometry is None else geometry
    node = geometry[0]
    if compiled is not None and min(L, M) <= _COMPILED_SPAN:
        out = _march_compiled(kernel.lam_t, compiled[0], kernel.n, kernel.r,
                              compiled[1], weights.abar_rev, weights.bbar_rev,
                              weights.beta[0], weights.G_left, weights.G_right, h, M,
                              np.ascontiguousarray(F0, dtype=float), L, *geometry)
        return tuple(a.T for a in out)
    K = F0.size
    J = np.zeros((K, node.size))
    lam_t, phi = kernel.lam_t, kernel.phi_scalar
    F = np.empty((M + 1, K))
    fm = np.zeros((M + 1, K))
    fp = np.empty((M + 1, K))
    qm = np.empty((M + 1, K))
    qp = np.empty((M + 1, K))
    Gl, Gr = weights.G_left.tolist(), weights.G_right.tolist()
    beta1 = float(weights.beta[0])
    half = 0.5 * h
    slope = float(weights.beta_bar[0])     # h / 2 - beta_1
    F[0] = F0
    qm[0] = F0 * Gl[0]
    qp[0] = F0 * Gr[0]
    fp[0] = [lam_t * (a - a * Gr[0]) * phi(a * Gr[0]) for a in F0.tolist()]
    # history[i] = F0 (1 - G(ih-)) + sum_{j < i} alpha_bar_{i-j} f^+_j + beta_bar_{i-j+1} f^-_j
    # (F - q at node i without the term of f^-_i), the nodes j outside node i's block of _LEAF
    # added by _History as blocks complete
    history = np.outer(weights.Gbar_left, F0)
    blocks = _History(weights.alpha_bar, weights.beta_bar, weights.spectra, M, fp, fm, history,
                      leaf=_LEAF if compiled is None else _COMPILED_LEAF)
    if compiled is not None:   # the blocks' nodes compiled, the sums across blocks by FFT
        a_in, b_in = blocks.a[:blocks.leaf], blocks.b[:blocks.leaf]
        jump = np.asarray(weights.G_right) - np.asarray(weights.G_left)
        blocks.run(lambda lo, hi: _leaf_compiled(
            lo, hi, history, a_in, b_in, F, fm, fp, qm, qp, F0, jump, lam_t, beta1, slope,
            half, compiled[0], kernel.n, kernel.r, compiled[1], *geometry, J, h))
        return F, fm, fp, qm, qp, J.T

    a_in, b_in = blocks.a[:_LEAF].tolist(), blocks.b[:_LEAF].tolist()
    mul, lam_slope = operator.mul, lam_t * slope
    jumps = {i for i in range(M + 1) if Gr[i] != Gl[i]}
    starts = F0.tolist()
    nodes = set(node.tolist())   # those of atoms between the nodes
    form = kernel.phi_form() if nodes else None

    def leaf(lo, hi):
        """March the nodes ``lo..hi - 1`` (not 0) of a block, column by column (the columns are
        independent): sums within the block in Python floats, then the solve."""
        start = max(lo, 1)
        for col in range(K):
            known = history[start:hi, col].tolist()
            fp_c, fm_c = fp[lo:start, col].tolist(), fm[lo:start, col].tolist()
            F_c, qm_c, qp_c = [], [], []
            F_prev, y_prev = float(F[start - 1, col]), float(fp[start - 1, col])
            q_prev = float(qp[start - 1, col])
            a = starts[col]
            for i in range(start, hi):
                u = i - lo
                d = (known[i - start] + sum(map(mul, a_in[u:0:-1], fp_c))
                     + sum(map(mul, b_in[u:0:-1], fm_c)))
                A = F_prev + half * y_prev
                if i in nodes:
                    _, (Fi, y_left, qi, q_right, y) = _jump_node(
                        i, int(np.searchsorted(node, i)), *geometry, J[col],
                        history[:, col], d, A, y_prev, a, Gr[i] - Gl[i], F_prev, y_prev, q_prev,
                        h, lam_t, beta1, slope, half, form[0], kernel.n, kernel.r, form[1])
                    known[i + 1 - start:] = history[i + 1:hi, col].tolist()
                    F_c.append(Fi)
                    fm_c.append(y_left)
                    qm_c.append(qi)
                    qp_c.append(q_right)
                    fp_c.append(y)
                    F_prev, y_prev, q_prev = Fi, y, q_right
                    continue
                c = A - d                      # q_i^- without the term of f^-_i
                ph = phi(c + beta1 * y_prev)   # two fixed-point steps from y = f^+_{i-1}
                y = lam_t * d * ph / (1.0 - lam_slope * ph)
                ph = phi(c + beta1 * y)
                y = lam_t * d * ph / (1.0 - lam_slope * ph)
                Fi, qi = A + half * y, c + beta1 * y
                F_c.append(Fi)
                fm_c.append(y)
                qm_c.append(qi)
                if i in jumps:
                    qi += a * (Gr[i] - Gl[i])
                    y = lam_t * (d + slope * y - a * (Gr[i] - Gl[i])) * phi(qi)
                qp_c.append(qi)
                fp_c.append(y)
                F_prev, y_prev, q_prev = Fi, y, qi
            skip = start - lo
            F[start:hi, col], qm[start:hi, col], qp[start:hi, col] = F_c, qm_c, qp_c
            fm[start:hi, col], fp[start:hi, col] = fm_c[skip:], fp_c[skip:]

    blocks.run(leaf)
    return F, fm, fp, qm, qp, J.T


_COMPILED_SPAN = 256
"""With numba, the IR march sums the history directly (:func:`_march_compiled`, about 1.2 ns
per node, column and term, ``min(i, L)`` terms at node ``i``) up to this span; beyond it
(``G < 1`` on more of the grid: long tails, fine grids) by blocks, FFT products across blocks
and compiled direct sums within them (:func:`_leaf_compiled`). Measured (``benchmarks/
bench_removal.py``, CPU s per point): Pareto(2.5, 0.6), Replication(10, 2) 0.22 at 256 and
0.30 at 4096 (1.3 with the numpy leaves); hyperexponential MDS(4, 2) 0.049, 0.055 at 1024 and
0.12 at 4096; rounding differences of the two sums about 1e-14 of the mean."""
_COMPILED_LEAF = 64
"""Nodes per block of the IR march beyond ``_COMPILED_SPAN`` with numba (32 and 128 measured
within 5% of it)."""
_LEAF = 16
"""Nodes of the numpy march's blocks (:class:`_History`): history sums within a block in Python
floats per node, across blocks products of blocks (FFT or Toeplitz)."""
_FFT_MIN = 512
"""Blocks of :class:`_History` from this size on are convolved by FFT, smaller ones by a
Toeplitz matrix product."""


class _History:
    """The history sums of the numpy march (:func:`_march`) by blocks: a divide-and-conquer
    (online) convolution. The nodes ``0..T - 1`` (``T`` a power of two) are halved down to
    blocks of ``_LEAF`` marched in turn; when the first half ``[lo, mid)`` of a range
    ``[lo, hi)`` is marched, its contribution ``sum_{lo <= j < mid} a_{i-j} f^+_j + b_{i-j}
    f^-_j`` to the nodes ``i`` of the second half is added to ``history`` at once (``a_k =
    alpha_k``, ``b_k = beta_{k+1}``; the weights of ``1 - G`` for IR): an FFT of size ``hi -
    lo`` (a circular convolution of that size is exact for these ``i``: the wrapped terms land
    below ``mid``), a Toeplitz product below ``_FFT_MIN``. Each pair ``j < i`` in different
    blocks is added once; the cost is ``O(M log^2 M)`` instead of ``O(M^2)`` (the same sums,
    the order of the terms changed: rounding differences about 1e-16 of the history sums)."""

    def __init__(self, alpha, beta, spectra: dict, M: int, fp, fm, history,
                 fft_min: int = _FFT_MIN, leaf: int = _LEAF, kernels: tuple | None = None,
                 reach: np.ndarray | None = None):
        self.M, self.fp, self.fm, self.history = M, fp, fm, history
        # J kernels: per chunk of _KERNEL_CHUNK, the largest lag at which one is not 0 (None:
        # taken as reaching every lag)
        self.reach = reach
        self.leaf = leaf
        self.size = self.size_of(M, leaf)
        # one kernel (IR), or J of them side by side (a trailing axis: S&X, continuous S);
        # or the padded kernels given (``kernels``, from :meth:`padded`: alpha and beta unused),
        # ``b`` None where f^- = f^+ but at node 0 (continuous S: ``a`` holds a + b, ``fm`` is
        # not read and the caller's history takes away the b_i f^+_0 that adds)
        self.a, self.b = self.padded(alpha, beta, self.size) if kernels is None else kernels
        self.spectra = spectra   # kernels per block size, shared by the marches
        self.fft_min = fft_min

    @staticmethod
    def size_of(M: int, leaf: int) -> int:
        """The length of the padded kernels (a power of 2 above ``M``)."""
        return max(1 << (M).bit_length(), 2 * leaf)

    @staticmethod
    def padded(alpha, beta, size: int) -> tuple[np.ndarray, np.ndarray]:
        """The kernels of :meth:`place` as arrays of length ``size``, zeros elsewhere (zero
        pages, not written: mapped where filled)."""
        a = np.zeros((size,) + alpha.shape[1:])
        b = np.zeros(a.shape)
        _History.place(a, b, alpha, beta)
        return a, b

    @staticmethod
    def place(a, b, alpha, beta):
        """Write the kernels ``a_k = alpha_k`` (``k = 1..M``) and ``b_k = beta_{k+1}`` (``k =
        1..M - 1``) into ``a`` and ``b`` (one kernel's column of several, for instance)."""
        M = alpha.shape[0]
        a[1:M + 1] = alpha
        b[1:M] = beta[1:]

    def run(self, leaf):
        """March every node ``1..M`` with ``leaf(lo, hi)`` (the block of nodes ``lo..hi - 1``)."""
        self._solve(0, self.size, leaf)

    def _solve(self, lo, hi, leaf):
        end = self.M + 1
        if lo >= end:
            return
        if hi - lo <= self.leaf:
            leaf(lo, min(hi, end))
            return
        mid = (lo + hi) // 2
        self._solve(lo, mid, leaf)
        if mid < end:
            self._cross(lo, mid, hi)
        self._solve(mid, hi, leaf)

    def _cross(self, lo, mid, hi):
        n, P = hi - lo, mid - lo
        top = min(hi, self.M + 1) - mid
        fp, fm = self.fp[lo:mid], (None if self.fm is None else self.fm[lo:mid])
        if top <= _DIRECT_ROWS < P:
            # a few nodes past a power of 2 (the last of M = 2^k cells): direct sums, row by
            # row (a_{P + u - t}, t = 0..P - 1), not an FFT of twice the size
            for u in range(top):
                for kernel, f in self._terms(fp, fm):
                    rows = kernel[P + u:u:-1]
                    self.history[mid + u] += (rows @ f if kernel.ndim == 1
                                              else np.einsum("tj,tk->kj", rows, f))
            return
        fft = n >= self.fft_min
        if fft and self.a.ndim > 1:
            self._cross_kernels(n, P, top, mid, fp, fm)
            return
        terms = self._terms(fp, fm)
        kernels = self.spectra.get(n)
        if kernels is None:
            if fft:
                kernels = [np.fft.rfft(kernel[:n])[:, None] for kernel, _ in terms]
            else:   # T[u, t] = a_{P + u - t}
                index = P + np.arange(P)[:, None] - np.arange(P)[None, :]
                kernels = [kernel[index] for kernel, _ in terms]
            self.spectra[n] = kernels
        if fft:
            spectrum = sum(k * np.fft.rfft(f, n, axis=0) for k, (_, f) in zip(kernels, terms))
            self.history[mid:mid + top] += np.fft.irfft(spectrum, n, axis=0)[P:P + top]
        else:
            self.history[mid:mid + top] += sum(
                k[:top] @ f if self.a.ndim == 1 else np.einsum("utj,tk->ukj", k[:top], f)
                for k, (_, f) in zip(kernels, terms))

    def _terms(self, fp, fm) -> list:
        """The kernels with the values they convolve: ``(a, f^+)`` and ``(b, f^-)``, or ``(a,
        f^+)`` alone where ``b`` is None (``a`` then holds ``a + b``)."""
        return [(self.a, fp)] + ([] if self.b is None else [(self.b, fm)])

    def _cross_kernels(self, n, P, top, mid, fp, fm):
        """:meth:`_cross` by FFT with ``J`` kernels (a trailing axis): ``_KERNEL_CHUNK`` kernels
        at a time, their spectra kept up to blocks of ``_SPECTRA_MAX`` (memory: the
        temporaries of one chunk, not of all ``J``). A chunk whose kernels are 0 beyond lag
        ``r`` (``reach``), ``r <= P' < P`` for a power of 2 ``P'`` (at least ``fft_min / 2``),
        takes the block's last ``P'`` sources and first ``P'`` targets only: the other pairs
        are more than ``P'`` apart, their terms 0 (an FFT of size ``2 P'``, the same sums)."""
        terms = self._terms(fp, fm)
        values = {}   # the sources' spectra at each size
        for start in range(0, self.a.shape[1], _KERNEL_CHUNK):
            part = slice(start, start + _KERNEL_CHUNK)
            Q = P if self.reach is None else min(P, max(
                1 << int(self.reach[start // _KERNEL_CHUNK] - 1).bit_length(),
                self.fft_min // 2))
            size = 2 * Q
            if size not in values:
                values[size] = [np.fft.rfft(f[P - Q:], size, axis=0)[:, :, None]
                                for _, f in terms]
            keep = size <= _SPECTRA_MAX
            kernels = self.spectra.get((size, start)) if keep else None
            if kernels is None:
                kernels = [np.fft.rfft(kernel[:size, part], axis=0)[:, None]
                           for kernel, _ in terms]
                if keep:
                    self.spectra[(size, start)] = kernels
            spectrum = kernels[0] * values[size][0]
            for k, v in zip(kernels[1:], values[size][1:]):
                spectrum += k * v
            rows = min(top, Q)
            self.history[mid:mid + rows, :, part] += np.fft.irfft(spectrum, size,
                                                                  axis=0)[Q:Q + rows]


_DIRECT_ROWS = 8
"""Rows of a block's second half past the last node at most which :meth:`_History._cross`
sums directly."""
_KERNEL_CHUNK = 16
"""Kernels per FFT product in :meth:`_History._cross_kernels`."""
_SPECTRA_MAX = 4096
"""Largest block whose kernel spectra :meth:`_History._cross_kernels` keeps for the next march
(beyond, recomputed: a ``(n / 2 + 1) J`` complex array per block size was 126 MB for ``J =
120`` at 16384 cells)."""


@_jit_sums
def _march_compiled(lam_t, mode, n, r, combs, aR, bR, beta1, Gl, Gr, h, M, F0, L, node, theta,
                    mass, P, end):
    """:func:`_march` column by column (compiled with numba); arrays of shape
    ``(columns, M + 1)``. ``aR``, ``bR``: the weights of ``1 - G`` reversed; where ``G = 1``
    (cells ``k >= L``) they vanish, so ``F - q`` at a node is a sum of ``min(i, L)`` terms and a
    node costs ``O(min(i, L))``. Atoms between the nodes (:class:`_Between`): :func:`_jump_node`
    at their nodes, their ``J P`` added ahead; also returns ``J``, ``(columns, atoms)``."""
    K = F0.size
    J = np.zeros((K, node.size))
    F = np.empty((K, M + 1))
    fm = np.zeros((K, M + 1))
    fp = np.empty((K, M + 1))
    qm = np.empty((K, M + 1))
    qp = np.empty((K, M + 1))
    half = 0.5 * h
    slope = bR[M - 1]                          # beta_bar_1 = h / 2 - beta_1
    bS = np.empty(M + 1)                       # bS[j] = bR[j - 1]: one loop for both sums
    bS[1:] = bR
    bS[0] = 0.0
    for k in range(K):
        a = F0[k]
        fpk, fmk = fp[k], fm[k]
        F[k, 0], qm[k, 0], qp[k, 0] = a, a * Gl[0], a * Gr[0]
        fp[k, 0] = lam_t * (a - a * Gr[0]) * _phi_compiled(a * Gr[0], mode, n, r, combs)
        ahead = np.zeros(M + 1)                # the J P of the atoms between nodes passed
        g = 0
        for i in range(1, M + 1):
            base = M - i
            d = a * (1.0 - Gl[i]) + ahead[i]   # F - q without the term of f^-_i
            for j in range(max(i - L + 1, 0), i):   # fm[0] = 0: no beta term at j = 0
                d += aR[base + j] * fpk[j] + bS[base + j] * fmk[j]
            A = F[k, i - 1] + half * fp[k, i - 1]
            if g < node.size and node[g] == i:
                g, (F[k, i], fm[k, i], qm[k, i], qp[k, i], fp[k, i]) = _jump_node(
                    i, g, node, theta, mass, P, end, J[k], ahead, d, A, fp[k, i - 1], a,
                    Gr[i] - Gl[i], F[k, i - 1], fp[k, i - 1], qp[k, i - 1], h, lam_t, beta1,
                    slope, half, mode, n, r, combs)
                continue
            F[k, i], fm[k, i], qm[k, i], qp[k, i], fp[k, i] = _node_compiled(
                d, A, fp[k, i - 1], a, Gr[i] - Gl[i], lam_t, beta1, slope, half, mode, n, r,
                combs)
    return F, fm, fp, qm, qp, J


@_jit_inline
def _node_compiled(d, A, y, a, jump, lam_t, beta1, slope, half, mode, n, r, combs):
    """The solve at one node of the IR march (compiled with numba): ``d`` is ``F - q`` without
    the term of ``f^-_i``, ``A = F_{i-1} + h f^+_{i-1} / 2``, ``y = f^+_{i-1}`` the start of two
    fixed-point steps on ``f^-_i``, ``a = F(0)`` and ``jump`` the atom of ``G`` at the node.
    Returns ``F_i``, ``f^-_i``, ``q^-_i``, ``q^+_i``, ``f^+_i``."""
    c = A - d
    for _ in range(2):
        ph = _phi_compiled(c + beta1 * y, mode, n, r, combs)
        y = lam_t * d * ph / (1.0 - lam_t * slope * ph)
    Fi, qi = A + half * y, c + beta1 * y
    if jump == 0.0:
        return Fi, y, qi, qi, y
    q_right = qi + a * jump
    return Fi, y, qi, q_right, (lam_t * (d + slope * y - a * jump)
                                * _phi_compiled(q_right, mode, n, r, combs))


@_jit
def _jump_node(i, g, node, theta, mass, P, end, J, ahead, d, A, y, a, jump, Fc, fc, qc, h,
               lam_t, beta1, slope, half, mode, n, r, combs):
    """The solve at the node ``i = c + 1`` ending a cell ``c`` that holds atoms of the runtime
    between the nodes (:class:`_Between`: those ``g, g + 1, ...`` with ``node == i``), as
    :func:`_node_compiled` (``Fc``, ``fc``, ``qc``: ``F``, ``f^+``, ``q^+`` at node ``c``) with
    the jumps ``J`` of ``f`` there (written, one column), by a fixed point: ``J = lam_t ((F -
    q^+) phi(q^+) - (F - q^-) phi(q^-))`` at each atom ``b``, ``F(b)`` from the cell's reading
    (:func:`_sawtooth`) and ``q(b^-)`` linear between ``q_c^+`` and ``q_i^-`` less the cell's
    jumps (an ``O(h)`` error of ``J``: ``O(h^2)`` of ``F``); then adds their ``J P`` to
    ``ahead`` (``F - q`` of the nodes after ``i``). Returns the next atom's index and those of
    :func:`_node_compiled`."""
    stop = g
    while stop < node.size and node[stop] == i:
        stop += 1
    for u in range(g, stop):
        J[u] = 0.0
    # one runtime law: _new_jumps with one "job size" of probability 1
    masses, one = mass.reshape((mass.size, 1)), np.ones(1)
    for sweep in range(5):
        dd, shift = d, 0.0
        for u in range(g, stop):
            dd += J[u] * P[u, i]
            shift += J[u] * h * (0.5 - theta[u])
        out = _node_compiled(dd, A + shift, y, a, jump, lam_t, beta1, slope, half, mode, n, r,
                             combs)
        if sweep == 4:
            break
        J[g:stop] = _new_jumps(g, stop, h, theta, masses, J, Fc, fc, out[1], a,
                               np.full(1, out[2]), np.full(1, qc), one, lam_t, mode, n, r, combs)
    for u in range(g, stop):
        for v in range(i + 1, end[u]):
            ahead[v] += J[u] * P[u, v]
    return stop, out


@_jit_sums
def _leaf_compiled(lo, hi, history, a_in, b_in, F, fm, fp, qm, qp, F0, jump, lam_t, beta1,
                   slope, half, mode, n, r, combs, node, theta, mass, P, end, J, h):
    """The leaf of :func:`_march` compiled with numba: the nodes ``lo..hi - 1`` (not 0) of a
    block of :class:`_History`, the sums within the block direct, then :func:`_node_compiled`
    (the arrays of shape ``(M + 1, columns)``, written in place), or :func:`_jump_node` at the
    nodes of atoms between the nodes (their ``J P`` then added to ``history`` ahead, ``J`` of
    shape ``(columns, atoms)``)."""
    first = np.searchsorted(node, max(lo, 1))
    for k in range(F0.size):
        g = first
        for i in range(max(lo, 1), hi):
            d = history[i, k]
            for j in range(lo, i):
                d += a_in[i - j] * fp[j, k] + b_in[i - j] * fm[j, k]
            A = F[i - 1, k] + half * fp[i - 1, k]
            if g < node.size and node[g] == i:
                g, (F[i, k], fm[i, k], qm[i, k], qp[i, k], fp[i, k]) = _jump_node(
                    i, g, node, theta, mass, P, end, J[k], history[:, k], d, A, fp[i - 1, k],
                    F0[k], jump[i], F[i - 1, k], fp[i - 1, k], qp[i - 1, k], h, lam_t, beta1,
                    slope, half, mode, n, r, combs)
                continue
            F[i, k], fm[i, k], qm[i, k], qp[i, k], fp[i, k] = _node_compiled(
                d, A, fp[i - 1, k], F0[k], jump[i], lam_t, beta1, slope, half, mode, n, r,
                combs)


def _shoot(model, h: float, M: int, guess: float, spread: float = 0.0,
           tangent: _Solution | None = None) -> _Solution:
    """Safeguarded Newton's method on ``F0`` in ``(0, 1]`` so that ``F(Mh) = 1``.

    ``F(Mh)`` increases with ``F0`` (0 at ``F0 = 0``, at least 1 at ``F0 = 1``). Each march
    carries a second column at ``F0 (1 + 1e-7)`` for the slope; once the Newton step is below
    ``_ACCEPT F0`` the solution at the root is interpolated linearly between the two columns
    (the neglected curvature term is of order ``step^2``). With ``spread > 0`` (the guess's
    uncertainty) the first march carries columns at ``guess`` and ``guess +- spread``: a root
    within ``2 spread`` of the guess is taken from the quadratic through them (interpolation
    error of order ``spread^3``), one march instead of two. Outside the bracket's Newton steps:
    bisection (geometric across decades), or, with no lower bound yet, ``F0`` tenfold down, squared
    below 1e-6, to :data:`_NO_IDLE`, where ``F(W) >= 1`` still raises :class:`RemovalError`.
    With ``tangent`` (the solution of a nearby equation on the same grid, the guess its
    ``F0``), the first march has one column, at the guess, and a root within ``_ACCEPT F0``
    of it is taken along ``tangent``'s derivatives in ``F0`` (their difference between the
    two equations times the step: a term of second order in the equations' difference)."""
    march = model.marcher(h, M)
    lo, hi = 0.0, 1.0
    F0 = min(max(guess, 1e-12), 1.0)
    if (tangent is not None and tangent.slopes is not None and tangent.h == h
            and tangent.F.size == M + 1):   # its derivatives are of this grid's nodes
        slopes = tangent.slopes
        out = march(np.array([F0]))
        slope = float(slopes[0][-1])
        step = (1.0 - out[0][-1, 0]) / slope if slope > 0 else math.inf
        if abs(step) <= model.accept * F0:
            return _solved(model, h, [a[:, 0] + step * d for a, d in zip(out, slopes)], slopes)
    if 0 < spread <= 1e-3 * F0 and F0 + spread < 1:
        cols = np.array([F0 - spread, F0, F0 + spread])
        arrays = march(cols)
        e = arrays[0][-1] - 1.0
        # Newton's form of the quadratic through (cols, e), its root nearest F0
        d1, d2 = (e[1] - e[0]) / spread, (e[2] - e[1]) / spread
        a, b, c = (d2 - d1) / (2 * spread), 0.5 * (d1 + d2), e[1]   # e ~ c + b u + a u^2
        disc = b * b - 4 * a * c
        if b > 0 and disc >= 0:
            u = -2 * c / (b + math.sqrt(disc))
            if abs(u) <= 2 * spread:
                t = u / spread
                weights = np.array([0.5 * t * (t - 1), 1 - t * t, 0.5 * t * (t + 1)])
                slopes = np.array([t - 0.5, -2 * t, t + 0.5]) / spread
                # along the columns' axis (1; the continuous slowdowns' q has a third)
                return _solved(model, h, _across(arrays, weights),
                               _across(arrays, slopes) if model.tangents else None)
        lo, hi = (cols[0], hi) if e[0] < 0 else (lo, cols[0])
        lo, hi = (lo, cols[2]) if e[2] >= 0 else (max(lo, cols[2]), hi)
        slope = b if b > 0 else math.nan
        F0 = F0 - c / slope if lo < F0 - c / slope < hi else 0.5 * (lo + hi)
    for _ in range(60):
        eps = 1e-7 * F0
        cols = np.array([F0, F0 - eps if F0 + eps > 1 else F0 + eps])
        out = march(cols)
        end = out[0][-1]
        if end[0] < 1.0:
            lo = max(lo, F0)
        else:
            hi = min(hi, F0)
        slope = (end[1] - end[0]) / (cols[1] - cols[0])
        step = (1.0 - end[0]) / slope if slope > 0 and math.isfinite(slope) else math.nan
        if math.isfinite(step) and abs(step) <= model.accept * F0:
            width = cols[1] - cols[0]
            t = step / width
            # t = step / width reaches 100 (model.accept 1e-5): there the difference form
            # (the weights' rounding had been 3.6e-15 where it is 7e-17)
            values = (_across(out, np.array([1.0 - t, t])) if abs(t) <= 1 else
                      [a[:, 0] + t * (a[:, 1] - a[:, 0]) for a in out])
            return _solved(model, h, values, _across(out, np.array([-1.0, 1.0]), width)
                           if model.tangents else None)
        new = F0 + step if math.isfinite(step) else math.nan
        if lo < new < hi:
            F0 = new
        elif lo > 0:   # bisection, geometric across decades
            F0 = math.sqrt(lo * hi) if hi > 1e3 * lo else 0.5 * (lo + hi)
        elif hi <= _NO_IDLE:
            break
        else:   # down to the root: tenfold, then squared (F(W) > 1 at every F0 beyond the
            # frontier: MDS(4, 2), S&X U(1, 2) x {1, 2} at 0.5 marched 60 times per grid)
            F0 = 0.1 * hi if hi > 1e-6 else max(hi * hi, _NO_IDLE)
        if hi - lo <= 1e-15 * hi:
            break
    raise RemovalError("Newton's method on the idle probability F(0) did not converge (F(W) = 1 "
                       "has no root on this grid: a load close to the stability frontier, or "
                       "a step too coarse for the runtime)")


def _sf_read(sol: _Solution, t: np.ndarray, jumps: np.ndarray) -> np.ndarray:
    """``P(C > t)`` of ``sol`` at the times ``t`` (clipped to its horizon) read off its nodes:
    linear in each cell from the right limit at its start to the left limit at its end; in a
    cell holding one of the ``jumps`` of ``P(C > t)``, the value at the cell's end on ``t``'s
    side of it; ``nan`` between two jumps of one cell (neither end is on its side). An ``O(h)``
    error next to a jump and at kinks (sums of atoms), ``h^2 / 8`` times ``P''`` elsewhere:
    small beside the first-order change a stretched grid measures."""
    h, M = sol.h, sol.F.size - 1
    u = np.clip(t / h, 0.0, M)
    c = np.minimum(u.astype(np.intp), M - 1)
    left, right = sol.sf_right[c], sol.sf_left[c + 1]
    out = left + (u - c) * (right - left)
    b = np.sort(jumps[(jumps > 0) & (jumps < M * h)])
    if b.size:
        k = np.searchsorted(b, t, side="right")   # b[k - 1] <= t < b[k]
        before = (k < b.size) & (b[np.minimum(k, b.size - 1)] < (c + 1) * h)
        after = (k > 0) & (b[np.maximum(k - 1, 0)] > c * h)
        out = np.where(before, left, np.where(after, right, out))
        out[before & after] = np.nan
    return out


def _across(arrays: list, weights: np.ndarray, divide: float = 1.0) -> list:
    """The march's ``arrays`` (the columns on axis 1) combined with ``weights`` across the
    columns, over ``divide`` (one pass over each: the root's arrays of Q, a few MB, had taken
    15 ms as ``a_0 + t (a_1 - a_0)``, 4 ms so; weights ``(-1, 1)`` take the difference
    exactly, as ``a_1 - a_0``, before the division: ``-a_0 / w + a_1 / w`` had lost 7 digits of
    the slopes, found by review)."""
    combined = [np.einsum("ik...,k->i...", a, weights) for a in arrays]
    if divide != 1.0:
        for c in combined:
            c /= divide
    return combined


def _solved(model, h: float, arrays: list, slopes: list | None) -> _Solution:
    """The :class:`_Solution` of the march's ``arrays`` at the root, its ``P(C > t)`` at the
    nodes (``model.node_sf``), and ``slopes``, the arrays' derivatives in ``F0`` there (for
    :func:`_shoot`'s ``tangent``; computed and kept only where ``model.tangents``)."""
    sol = _Solution(h, *arrays)
    sol.sf_left, sol.sf_right = model.node_sf(sol)
    if model.tangents:
        sol.slopes = slopes
    return sol


# ------------------------------------------------------------------------ S&X: condition on X
_SX_BYTES = 2 ** 28
"""Memory of the S&X tables of ``X`` nodes (:meth:`_SXModel.table`, 16 bytes per grid node and
``X`` node, kept for every grid of an analysis: about 3 times the finest grid's): the finest
grid's table is held within a quarter of it, which bounds the grids S&X is refined to
(:func:`_refine`)."""
_NODES_BLOCK = 2 ** 18
"""Values per array that :meth:`_SXModel.nodes` computes at a time (rows of ``X`` nodes): its
temporaries of 2 MB stay in the cache's reach and below numpy's 4 MB threshold for huge pages,
whose page faults (the kernel compacting memory) had taken a third of the time of an S&X
point: HyperExponential([0.9, 0.1], [10, 0.5]) x Facebook, MDS(4, 1)."""
_SX_GEOMETRY_BYTES = 2 ** 28
"""Memory of the latest grid's geometry kept by the numpy S&X march (:meth:`_SXModel.block`,
28 bytes per grid node, ``X`` node and atom of ``S``, and 8 per product ``x s`` between the
nodes): beyond it the blocks are rebuilt."""
_U_LEVELS = np.array([0.0, 1e-12, 1e-9, 1e-6, 1e-4, 0.003, 0.05, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99,
                      0.997, 0.999, 1 - 1e-4, 1 - 1e-5, 1 - 1e-6, 1 - 1e-8, 1 - 1e-10, 1.0])
"""Probability levels of ``X`` bounding the Gauss-Legendre pieces of ``E_X`` (as in
:mod:`.mds`): graded towards 0 and 1 where ``F_X^{-1}`` is singular."""


_SX_RULE_NODES = 8
"""Gauss-Legendre nodes per piece of ``E_X`` (:class:`_SXModel`; fewer on the pieces of
:data:`_FEW_NODES`, twice as many for the rule's error, :meth:`_SXModel.doubled`). Eight, not
twelve: the tables of ``X`` nodes take 2/3 of the memory, so the cell bound lets the grids go
1.5 times finer, and a point costs about 0.7 of the time. Over 64 S&X systems (eight job sizes,
four slowdown laws, MDS and Replication, loads 0.3 and 0.7) the stated relative error met the
1e-6 goal in 7 more systems than with twelve (hyperexponential and lognormal job sizes, whose
grids the bound had stopped) and in 4 fewer (the rule's error, up to 3.1e-6: then the point is
solved again with :data:`_SX_RULE_NODES_MORE`, :func:`grid_prediction`)."""
_SX_LAYER = (1.0 / 3.0, 3.0)
"""Where the rule over ``X`` is most of what keeps a point short of its goal
(:func:`grid_prediction`), the point is first solved again with each piece of ``E_X`` that
ends at a jump ``F_X(w / s_k)`` split again at ``F_X((w - c) / s_k)``, ``c`` these times
``E[X] s_min``: ``q(w | x)`` reads ``F(w - x s_k)`` near 0 there, where ``f`` falls steeply
over the fastest runtimes (a layer of a few hundredths of such a piece), which the pieces'
Gauss-Legendre rule integrates to only algebraic order
(hyperexponential ``X`` ([0.9, 0.1], [10, 0.5]) times {1, 10}, MDS(4, 1) at load 0.5, on one
grid of 4096 cells: the mean moved by 1.1e-4, 4.5e-5, 2.0e-5 and 1.6e-6 from 8 to 12, 16, 24
and 32 nodes per piece; with the splits by 8.9e-6, 4.3e-8, then about 3e-8, the grid's own
floor, as for an exponential ``X``). Found by review: the layer is the solution's (splits at
multiples of the step lost their effect on finer grids), and ``F_X^{-1}`` is right to
3.4e-16 against mpmath. Not for every point: held out against Pollaczek-Khinchine (60 M/G/1
systems, seven job sizes times four slowdown laws), no estimate was exceeded with the splits
everywhere, but uniform and gamma(0.5) job sizes, whose rule did not bind, were less accurate
(up to 34 and 17 times, within their estimates). As that second solve, over the same systems
and seven MDS(4, 2) points: none beyond its estimate (at most 0.52 of it, 0.70 before), 33
within the goal (30 before), and the stated errors down by up to 11 times
(``HyperExponential([0.7, 0.3], [3, 0.3])`` times {1, 10} at load 0.9: 3.6e-5 to 6.7e-6, 1.6e-5
to 1.0e-6 off)."""
_SX_RULE_NODES_MORE = 12
"""Gauss-Legendre nodes per piece when the rule's error of :data:`_SX_RULE_NODES` keeps a point
short of its goal (:func:`grid_prediction`)."""
_FEW_NODES = (1e-8, 1e-6, 4)
"""A piece of ``E_X`` narrower than the first (in probability) or below the level of the second
gets the third's fraction of the Gauss-Legendre nodes (at least one). There the integrand is
nearly constant or weighs little: ``q(w | x) ~ F(w)`` for the small ``x`` below
``F_X^{-1}(1e-6)``, and pieces of width 1e-8 (the levels graded towards 0 and 1, and near 1 the
jumps ``F_X(t / s_k)`` that cut them). Such pieces held a fifth of the nodes (S&X, exponential
``X`` times the Facebook slowdowns: 337 nodes per grid node, 260 now). Over 320 S&X systems
(six job sizes, four slowdown laws, MDS, Replication, loads 0.3 to 0.95) the means moved by at
most 0.15 of their stated errors and the estimates by factors 0.93 to 1.37; the rule's error
stays measured by :meth:`_SXModel.doubled` (every count doubled). The level 1e-4 instead of
1e-6 took an Erlang(3) job size's estimates up to 7.6 times (``F_X^{-1}(u) ~ u^(1/3)``)."""


@functools.cache
def _padded_rules(nodes: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre's nodes and weights on ``[-1, 1]``: row 0 the ``nodes``-point rule, row 1
    that of ``nodes / share`` points (at least one), padded to ``nodes`` slots with weight 0
    (at the midpoint)."""
    points, weights = np.zeros((2, nodes)), np.zeros((2, nodes))
    for row, count in enumerate((nodes, max(1, round(nodes / share)))):
        points[row, :count], weights[row, :count] = np.polynomial.legendre.leggauss(count)
    points.flags.writeable = weights.flags.writeable = False
    return points, weights


def _piece_rule(lo: np.ndarray, hi: np.ndarray, nodes: int,
                narrow: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on ``[-1, 1]`` for the pieces ``[lo, hi]`` of
    probability, ``nodes`` of them, or fewer on the pieces of :data:`_FEW_NODES` (with
    ``narrow=False`` only on those below its level); shape ``lo.shape + (nodes,)``, the slots a
    piece does not use of weight 0."""
    points, weights = _padded_rules(nodes, _FEW_NODES[2])
    rule = _rule_rows(lo, hi, narrow)
    return np.take(points, rule, axis=0), np.take(weights, rule, axis=0)


def _rule_rows(lo: np.ndarray, hi: np.ndarray, narrow: bool = True) -> np.ndarray:
    """The row of :func:`_padded_rules` each piece ``[lo, hi]`` takes (:func:`_piece_rule`): 1
    on the pieces of :data:`_FEW_NODES`, else 0."""
    width, level, _ = _FEW_NODES
    return ((hi - lo < (width if narrow else 0.0)) | (hi <= level)).astype(np.intp)


_X_INFINITY = 1e300
"""``X`` nodes with an infinite ``F_X^{-1}`` (rounding at levels next to 1) stand there, far
beyond any grid (``q = 0`` there)."""


def _evaluate_F(sol_F, fp, fm, h, z, current: int | None = None, between=None):
    """``F(z)`` from the grid (``f`` linear per cell), ``0`` for ``z < 0``; with ``current = i``
    the points in cell ``i - 1`` are returned as ``(known, coefficient of f_i^-)``. ``between``:
    ``(cells, theta, J)`` of atoms between the nodes (sorted by cell), whose jumps of ``f``
    the cells holding them add (:func:`_sawtooth`)."""
    z = np.clip(np.asarray(z, dtype=float), -1.0, sol_F.shape[0] * h)
    top = sol_F.shape[0] - 2 if current is None else current - 1
    c = np.clip(np.floor(z / h).astype(np.intp), 0, top)
    d = z - c * h
    fa = fp[c]
    fb = fm[c + 1] if current is None else np.where(c < top, fm[np.minimum(c + 1, top)], 0.0)
    known = sol_F[c] + d * fa + (fb - fa) * d * d / (2 * h)
    if between is not None and between[0].size:
        # the jumps in each point's cell (sorted by cell: those of cell c are lo..hi - 1)
        cells, theta, J = between
        lo, hi = np.searchsorted(cells, c, "left"), np.searchsorted(cells, c, "right")
        for m in range(int((hi - lo).max(initial=0))):
            u = np.minimum(lo + m, cells.size - 1)
            known = known + np.where(lo + m < hi, J[u] * _sawtooth(d, theta[u], h), 0.0)
    if current is None:
        return np.where(z < 0, 0.0, known), None
    coef = np.where(c == top, d * d / (2 * h), 0.0)
    known = np.where(c == top, sol_F[c] + d * fa - fa * d * d / (2 * h), known)
    return np.where(z < 0, 0.0, known), np.where(z < 0, 0.0, coef)


class _SXModel(_GridModel):
    """S&X runtimes ``X S`` with discrete ``S``, one ``X`` per batch: given ``X = x`` the tasks
    are independent with ``q(w | x) = sum_k p_k F(w - x s_k)``; the equation and the batch law
    are averaged over ``X``: Gauss-Legendre in probability space on the pieces of
    :func:`_x_levels` (an atom of a job size with a density is a piece of its own), split
    where ``w - x s_k = 0`` (the atom of ``V`` at 0 meets an atom of ``x S``); beyond
    ``x = w / s_min`` every task is unfinished (``q = 0``), exactly."""

    floor_squared = 8e-13
    """Near load 1 the march's rounding, not the grids' differences, sets the error: on lattices
    (nodes on the atoms) the grids' means moved by 9.3e-8, then 7.7e-7, as the step halved (X
    {0.5, 1.5} x S {1, 3}, M/G/1 at load 0.995: the extrapolation 7.0e-9 off
    Pollaczek-Khinchine with 3.4e-9 stated). Twice the largest ``error (1 - load)^2`` over 5
    such laws at loads 0.98 to 0.997 (19 on their lattice, 4 beyond their estimates before,
    up to 2.0 times; the IR march on the same law: 2.7e-12 off at 0.99)."""
    one_march = True
    sf_floor_squared = 1.5e-14
    """...and of ``P(C > t)``: about 3e-10 absolute in the tail of the same system (its p99 to
    p9999 1.7 to 1.8 times beyond their estimates, the errors tenfold per decade of level; at
    load 0.993, X {0.5, 1.5} x S {1, 3}: 11 times at the p9999). Twice the largest over the same
    19 systems' quantiles (against the Random system's inversion)."""

    def __init__(self, kernel: _Kernel, runtime, nodes: int | None = None,
                 layer: bool = False):
        X, S = runtime.X, runtime.S
        if S.atoms is not None:
            S = Discrete(*S.atoms)
        if X.atoms is not None:
            X = Discrete(*X.atoms)
        if not isinstance(S, Discrete):
            raise NotImplementedError("_SXModel takes discrete slowdowns S (continuous ones: "
                                      "removal_continuous._SXContinuousModel, via _model_of)")
        self.kernel, self.X = kernel, X
        self.s, self.p = np.asarray(S.values, dtype=float), np.asarray(S.probs, dtype=float)
        self.discrete_x = isinstance(X, Discrete)
        self.levels, self.piece_atoms = (None, None) if self.discrete_x else _x_levels(X)
        # the atoms of X (all of a discrete one, those of a mixed one)
        atoms = (_atoms(X)[0] if self.discrete_x
                 else self.piece_atoms[np.isfinite(self.piece_atoms)])
        self.scale = runtime.mean_runtime()
        # the mean of the runtime's fastest part, the job size at the smallest slowdown: a
        # density the grids must resolve (a job size on atoms has none: its products are placed
        # on or between the nodes exactly, and refining for them only cost time, X on {0.5,
        # 1.65, 3} x {0.1, 1, 10} at load 0.8 taking 2.75 s for the same grids as 0.21 s)
        self.fastest = X.mean() * float(self.s.min())
        if not self.discrete_x:
            self.resolve_above = _ROUGH_STEP_FASTEST * self.fastest
            self.unresolved_above = _UNRESOLVED_STEP_FASTEST * self.fastest
            self.front_rough_above = _FRONT_ROUGH_STEP_FASTEST * self.fastest
        self.rough_above = min(_ROUGH_STEP * self.scale, self.resolve_above)
        self.has_atoms = atoms.size > 0
        # a density of X with a jump or kink at c (uniform, Pareto: the ends of its support)
        # puts a kink in f at w = c s_k, where the piece boundary F_X(w / s_k) starts or
        # stops moving: nodes there where they have a common step (see _solve_grids), else a
        # first-order error (an irregular O(h^2) term that Richardson's extrapolation cannot
        # remove: Uniform(1, 2) x S in {1, 2}, 1.3e-5 off Pollaczek-Khinchine, 9.7e-7 stated)
        # products x s of the atoms (distinct: two of them may coincide, 0.185 * 6 = 1.11 * 1),
        # where P(C > t) jumps: nodes where they have a common step, with the kinks (as IR)
        products = np.unique(np.outer(atoms, self.s))
        kinks = () if self.discrete_x else tuple(
            sorted({c * float(s) for c in _kinks(X) for s in self.s}))
        self.kink_lattice = _kink_lattice(tuple(sorted(set(kinks) | set(products.tolist())))
                                          ) if kinks else None
        # where X's density jumps (at a kink c), the atom of V at 0 puts a jump in the slope
        # of q(. | X) averaged over X, and of f, at w = c s_k: placed between the nodes
        # exactly (_bend_shift), a second-order march where it was first order (S&X
        # Pareto(4.98, 1.094) x six slowdowns, M/G/1 at load 0.9: the grids' means 1.2e-3,
        # 2.1e-3 and 4.0e-4 off Pollaczek-Khinchine, 2.07e-3 off with 1.69e-3 stated)
        self.bends = (_density_bends(X, self.s) if kinks and not atoms.size
                      and kernel.phi_form() is not None else None)
        self.loose_kinks = bool(kinks) and self.kink_lattice is None and self.bends is None
        self._bends_key = self._bends_kept = None
        self.lattice = (_lattice(Discrete(products, np.full(products.size, 1.0 / products.size)))
                        if products.size else None)
        # a job size on (few) atoms: the products between the nodes placed exactly, as IR's
        # atoms (_Between): f jumps at each, by J (the march's _new_jumps); the O(h^2) term
        # left is irregular (where each falls in its cell): the rough estimates
        self.between = (self.discrete_x and 0 < products.size <= _SX_JUMPS_MAX
                        and kernel.phi_form() is not None)
        # a density x^a at 0, a not an integer below 1 (_power_at_zero): an h^(2 + a) term
        power = None if self.discrete_x else _power_at_zero(X)
        self.rough = (self.between and self.lattice is None) or (power is not None and power < 1)
        self._tables, self._blocks, self._blocks_key = {}, {}, None
        self._jumps_key = self._jumps_kept = None   # the latest grid's (h, M) and _jumps
        self.runtime = runtime
        self.rule_nodes = _SX_RULE_NODES if nodes is None else nodes
        self.tangents = not self.discrete_x
        self._fixed = None
        # the shortest runtime (a batch takes at least that long), and where P(C > t) jumps
        # (the atom of V at 0 times an atom of x S)
        self.lower = _sx_lower(runtime)
        self.jumps = products
        self.read_stretched = self.has_atoms and not self.between
        # the pieces of E_X per grid node (with the layer's splits below each jump: _SX_LAYER)
        self.layer = (self.fastest * np.array(_SX_LAYER) if layer and not self.discrete_x
                      else np.zeros(0))
        self.pieces = (0 if self.discrete_x else
                       self.levels.size - 1 + self.s.size * (1 + self.layer.size))
        self.max_cells, self.memory_cells = _sx_cells(
            self.discrete_x, X.values.size if self.discrete_x else self.pieces * self.rule_nodes)

    def shifted_steps(self, sol: _Solution) -> tuple[float, float] | None:
        """For a job size on atoms (:func:`_shifted_steps` of the products ``x s``: placed
        between the nodes, an irregular ``O(h^2)`` term whose size depends on where they fall,
        as IR's atoms; beyond ``_SX_JUMPS_MAX`` products, a first-order error); for a job size
        with a density and atoms (a mixture with a ``Deterministic``), of the products of its
        atoms (not placed: a first-order error, irregular alike, that the grids' differences
        can miss: 0.6 at 0.7 and 0.4 exponential(1) times {1, 10}, M/G/1 at load 0.97, the
        mean 2.7e-4 off Pollaczek-Khinchine with 2.1e-4 stated from them alone); for a job
        size whose density jumps, of its bends (:meth:`bends_between`), weighed ``|slope|
        p_k``."""
        if not self.discrete_x:
            values, probs = _masses(self.X)
            if values.size:
                return _shifted_steps(np.outer(values, self.s).ravel(),
                                      np.outer(probs, self.p).ravel(), sol.h)
            # bends between the nodes: the O(h^3) terms of their cells (f's curvature jumps
            # there too, and F is read off the cells' quadratics), irregular as the atoms'
            _, _, c, slope, k = self.bends_between(sol.h, sol.F.size - 1)
            return (_shifted_steps(c * self.s[k], np.abs(slope) * self.p[k], sol.h)
                    if c.size else None)
        xs, ws = _atoms(self.X)
        return _shifted_steps(np.outer(xs, self.s).ravel(), np.outer(ws, self.p).ravel(), sol.h)

    def _jumps(self, h: float, M: int) -> tuple:
        """The products ``b = x s`` of a job size on atoms that fall between the nodes of the grid
        ``(h, M)`` (within ``1e-9 h`` of a node: on it, as :func:`_sx_point` reads them), sorted:
        ``node`` (``c + 1``), ``cell`` ``c``, ``theta`` (``b = (c + theta) h``), ``mass`` (``(b,
        X atoms)``: ``P(S = b / x)``, the jump of ``q(. | x)`` over ``F(0)``) and ``first`` (per
        cell, the first product in it, or -1; of size 1 without products), and ``b``."""
        if not self.between:
            return _NO_SX_JUMPS
        if self._jumps_key == (h, M):
            return self._jumps_kept
        self._jumps_key, self._jumps_kept = (h, M), self._products_between(h, M)
        return self._jumps_kept

    def _products_between(self, h: float, M: int) -> tuple:
        """:meth:`_jumps`, computed."""
        xs, _ = _atoms(self.X)
        products = np.outer(xs, self.s)
        b = np.unique(products)
        cells = np.round(b / h)
        b = b[(np.abs(b - cells * h) > 1e-9 * h) & (b > 0) & (b < M * h)]
        if not b.size:
            return _NO_SX_JUMPS
        mass = ((products[None, :, :] == b[:, None, None]) * self.p).sum(axis=2)
        cell = np.minimum(np.floor(b / h).astype(np.int64), M - 1)
        first = np.full(M, -1, dtype=np.int64)
        for u in range(b.size - 1, -1, -1):
            first[cell[u]] = u
        return cell + 1, cell, b / h - cell, mass, first, b

    def bends_between(self, h: float, M: int) -> tuple:
        """The bends of :func:`_density_bends` that fall between the nodes of the grid ``(h,
        M)`` (within ``1e-9 h`` of a node: on it, where the trapezoid is exact), sorted:
        ``node`` (``c + 1``), ``theta`` (``b = (c + theta) h``), ``c``, ``slope`` and ``k``
        (:func:`_density_bends`); ``_NO_BENDS`` without."""
        if self.bends is None:
            return _NO_BENDS
        if self._bends_key != (h, M):
            b, c, slope, k = self.bends
            cells = np.round(b / h)
            keep = (np.abs(b - cells * h) > 1e-9 * h) & (b < M * h)
            cell = np.floor(b[keep] / h).astype(np.int64)
            self._bends_key = (h, M)
            self._bends_kept = (cell + 1, b[keep] / h - cell, c[keep], slope[keep], k[keep])
        return self._bends_kept

    def _jumps_of(self, sol: _Solution) -> tuple | None:
        """:meth:`_jumps` of ``sol``'s grid and their ``J`` (one column), or None."""
        if not self.between or not sol.extra or not sol.extra[0].size:
            return None
        return self._jumps(sol.h, sol.F.size - 1), sol.extra[0]

    def _reading(self, sol: _Solution):
        """``between`` of :func:`_evaluate_F` for ``sol``."""
        jumps = self._jumps_of(sol)
        return None if jumps is None else (jumps[0][1], jumps[0][2], jumps[1])

    def doubled(self) -> _SXModel | None:
        """The model with twice the Gauss-Legendre nodes over ``X`` (``None``: ``X`` on atoms,
        no rule to check)."""
        return None if self.discrete_x else _SXModel(self.kernel, self.runtime, 2 * self.rule_nodes,
                                                     self.layer.size > 0)

    def release(self):
        """Forget the grids' ``X`` nodes and geometry (memory)."""
        self._tables, self._blocks, self._blocks_key = {}, {}, None

    def nodes(self, t, out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``X`` nodes and weights for the times ``t`` (one row each, shape ``(t.size, J)``;
        pieces of zero width carry zero weight) and ``P(X > t / s_min)`` (``q = 0`` there),
        into ``out`` (three arrays of those shapes) when given. Computed
        :data:`_NODES_BLOCK` values at a time: the same operations row by row (a law whose
        quantiles run compiled only in calls of many levels, as ``HyperExponential``'s, may
        differ by an ulp where a block's call falls below that size)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self.discrete_x:
            xs, ps = _atoms(self.X)
            parts = (np.broadcast_to(xs, (t.size, xs.size)),
                     np.broadcast_to(ps, (t.size, xs.size)), np.zeros(t.size))
            if out is None:
                return parts
            for part, block in zip(out, parts):
                part[...] = block
            return out
        J = self.pieces * self.rule_nodes
        rows = max(1, _NODES_BLOCK // J)
        if out is None:
            if t.size <= rows:
                return self._nodes_block(t)
            out = (np.empty((t.size, J)), np.empty((t.size, J)), np.empty(t.size))
        for a in range(0, t.size, rows):
            for part, block in zip(out, self._nodes_block(t[a:a + rows])):
                part[a:a + rows] = block
        return out

    def _nodes_block(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`nodes` of a continuous ``X`` at the times ``t``, in one pass."""
        X, positive = self.X, t > 0
        top = np.where(positive, X._cdf_all(t / self.s.min()), 0.0)
        ratios = (t[:, None] / self.s[None, :]).ravel()
        jumps = np.where(positive[:, None], X._cdf_all(ratios).reshape(t.size, -1), 0.0)
        fixed_levels = self.levels
        parts = [np.minimum(fixed_levels[None, :], top[:, None]), jumps]
        if self.layer.size:   # the layer below each jump F_X(t / s_k) (_SX_LAYER)
            below = np.maximum((t[:, None, None] - self.layer[:, None]) / self.s, 0.0).ravel()
            parts.append(np.where(positive[:, None], X._cdf_all(below).reshape(t.size, -1), 0.0))
        levels = np.sort(np.concatenate(parts, axis=1), axis=1)
        lo, hi = levels[:, :-1], levels[:, 1:]
        width = hi - lo
        rules = _padded_rules(self.rule_nodes, _FEW_NODES[2])
        rule = _rule_rows(lo, hi)
        w = (np.where(width > 1e-17, 0.5 * width, 0.0)[..., None] * rules[1][rule]).reshape(
            t.size, -1)
        # F_X^{-1} on the pieces between two consecutive fixed levels from the model's table
        # (the same at every t), elsewhere only on the pieces that carry weight (16% of them
        # with slowdowns {1, 10}, 62% with the Facebook ones)
        x = _quantiles_on_pieces(X, lo, hi, fixed_levels, self._fixed_x(), rules, rule,
                                 min_width=1e-17, posinf=_X_INFINITY)
        return x.reshape(t.size, -1), w, 1.0 - top

    def _fixed_x(self) -> np.ndarray:
        """``F_X^{-1}`` at the Gauss-Legendre nodes of the pieces between consecutive levels of
        :func:`_x_levels` (one row per piece; on an atom's piece the atom), and a last row of
        zeros, computed once."""
        if self._fixed is None:
            lo, hi = self.levels[:-1, None], self.levels[1:, None]
            points = _piece_rule(lo, hi, self.rule_nodes)[0][:, 0]
            self._fixed = _quantile_table(self.X, self.levels, points, posinf=_X_INFINITY)
            on_atom = np.isfinite(self.piece_atoms)
            self._fixed[:-1][on_atom] = self.piece_atoms[on_atom, None]
        return self._fixed

    def table(self, h: float, M: int):
        """``X`` nodes at every grid node (kept for the grid's marches and its ``P(C > t)``)."""
        key = (h, M)
        if key not in self._tables:
            coarse = self._tables.get((2 * h, M // 2)) if M % 2 == 0 else None
            if coarse is None:
                self._tables[key] = self.nodes(h * np.arange(M + 1))
            else:  # the even nodes are those of the grid 2h (the same times, exactly)
                both = tuple(np.empty((M + 1,) + part.shape[1:]) for part in coarse)
                for rows, even_part in zip(both, coarse):
                    rows[0::2] = even_part
                self.nodes(h * np.arange(1, M + 1, 2), out=tuple(rows[1::2] for rows in both))
                self._tables[key] = both
        return self._tables[key]

    def marcher(self, h: float, M: int):
        table = self.table(h, M)
        return lambda cols: _march_sx(self, table, h, M, cols)

    def block(self, h: float, M: int, start: int):
        """The ``X`` nodes used by the grid nodes ``start..start + _SF_ROWS - 1`` and their
        :func:`_sx_geometry` (the numpy path), kept for the latest grid when its whole geometry
        fits in ``_SX_GEOMETRY_BYTES`` (the grid's marches and its ``P(C > t)`` reuse it), else
        built each time it is needed."""
        if self._blocks_key != (h, M):
            J = self.table(h, M)[0].shape[1]
            self._blocks_key, self._blocks = (h, M), {}
            saw = 8 * self._jumps(h, M)[1].size   # the products' sawtooth coefficients
            self._keep_blocks = ((M + 1) * J * (28 * self.s.size + 16 + saw)
                                 <= _SX_GEOMETRY_BYTES)
        block = self._blocks.get(start)
        if block is None:
            xs, ws, _ = self.table(h, M)
            # the X nodes of positive weight in some row of the block (those on pieces of zero
            # width, above t / s_min or between coinciding jumps, contribute nothing)
            keep = np.flatnonzero((ws[start:start + _SF_ROWS] > 0).any(axis=0))
            block = (keep,) + _sx_geometry(self.s, self.p, xs[start:start + _SF_ROWS, keep],
                                           h, start, self._jumps(h, M))
            if self._keep_blocks:
                self._blocks[start] = block
        return block

    def _sf(self, sol: _Solution, t: np.ndarray, nodes,
            cubic: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``P(C > t^-)`` and ``P(C > t)`` at the times ``t`` (rows of ``nodes``); ``F`` off the
        nodes by the march's quadratic of the cell, or by :func:`_F_cubic`."""
        x, w, ptop = nodes
        z = t[:, None, None] - x[:, :, None] * self.s
        if cubic:
            F = np.where(z < 0, 0.0, _F_cubic(sol, np.maximum(z, 0.0), self.lattice))
        else:
            F, _ = _evaluate_F(sol.F, sol.f_right, sol.f_left, sol.h, z,
                               between=self._reading(sol))
        used = w > 0
        sf = np.zeros(w.shape)
        sf[used] = self.kernel.batch_sf((F @ self.p)[used])
        right = (sf * w).sum(axis=1) + ptop
        at_zero = np.abs(z) <= 1e-12 * np.maximum(t, 1e-300)[:, None, None]
        rows = at_zero.any(axis=(1, 2))
        left = right.copy()
        if rows.any():
            masked = np.where(at_zero[rows], 0.0, F[rows]) @ self.p
            sf = np.zeros(masked.shape)
            sf[used[rows]] = self.kernel.batch_sf(masked[used[rows]])
            left[rows] = (sf * w[rows]).sum(axis=1) + ptop[rows]
        return left, right

    def node_sf(self, sol: _Solution) -> tuple[np.ndarray, np.ndarray]:
        """``P(C > t^-)`` and ``P(C > t)`` at the grid nodes: :meth:`_sf` through the points
        of :func:`_sx_geometry`, a block of ``_SF_ROWS`` nodes at a time (with numba
        :func:`_sx_node_sf`, the same coefficients, node by node); with products between the
        nodes, also ``sol.mean_fix`` (as :meth:`_IRModel.node_sf`)."""
        h, M = sol.h, sol.F.size - 1
        xs, ws, ptops = self.table(h, M)
        jumps = self._jumps(h, M)
        J = sol.extra[0] if jumps[1].size else np.zeros(0)
        if jumps[1].size:
            # the trapezoid of _grid_mean misses D h (1/2 - theta) of P(C > t)'s jump D (- to
            # +) at each product between the nodes
            # q(b | x) at each product b as formed (its own point reads F(0) at t - x s = 0
            # exactly) less the jump there: D product by product (no tolerance: products a few
            # ulps apart, 0.05 * 3 and 0.15, are two jumps, each counted once)
            b, mass = jumps[5], jumps[3]
            x, w, _ = self.nodes(b)
            z = b[:, None, None] - x[:, :, None] * self.s
            q = _evaluate_F(sol.F, sol.f_right, sol.f_left, h, z,
                            between=self._reading(sol))[0] @ self.p
            batch_sf = self.kernel.batch_sf
            D = ((batch_sf(q) - batch_sf(q - sol.F0 * mass)) * w).sum(axis=1)
            sol.mean_fix = float(D @ (h * (0.5 - jumps[2])))
        _, theta, c, slope, k = self.bends_between(h, M)
        if theta.size:
            # and -B h^2 theta (1 - theta) / 2 at each bend, B the jump of P(C > t)'s slope
            # (_density_bends with G = Psi, the batch's P(C > t) given q)
            below = self.s[None, :] < self.s[k][:, None]
            z = np.where(below, c[:, None] * (self.s[k][:, None] - self.s[None, :]), -1.0)
            q = _evaluate_F(sol.F, sol.f_right, sol.f_left, h, z)[0] @ self.p
            batch_sf = self.kernel.batch_sf
            B = slope * (batch_sf(q + self.p[k] * sol.F0) - batch_sf(q))
            sol.mean_fix = float(-0.5 * h * h * (B * theta * (1.0 - theta)).sum())
        compiled = self.kernel.compiled_sf()
        if compiled is not None:
            mds, combs = compiled
            return _sx_node_sf(h, xs, ws, ptops, self.s, self.p, sol.F, sol.f_right,
                               sol.f_left, sol.F0, mds, self.kernel.n, self.kernel.r, combs,
                               jumps[4], jumps[1], jumps[2], np.ascontiguousarray(J))
        state = np.stack([sol.F, sol.f_right, np.append(sol.f_left[1:], 0.0)], axis=1)
        left, right = np.empty(M + 1), np.empty(M + 1)
        batch_sf = self.kernel.batch_sf
        for start in range(0, M + 1, _SF_ROWS):
            rows = slice(start, start + _SF_ROWS)
            keep, cells, coef, _, at_zero, _, saw = self.block(h, M, start)
            w = ws[rows, keep]
            used = w > 0
            q = np.einsum("ijst,ijst->ij", coef, np.take(state, cells, axis=0))
            if saw is not None:
                q += saw @ J
            sf = np.zeros(q.shape)
            sf[used] = batch_sf(q[used])
            left[rows] = (sf * w).sum(axis=1) + ptops[rows]
            right[rows] = left[rows]
            jump = np.flatnonzero((at_zero > 0).any(axis=1))
            if jump.size:
                q = q[jump] + at_zero[jump] * sol.F0
                sf = np.zeros(q.shape)
                sf[used[jump]] = batch_sf(q[used[jump]])
                right[start + jump] = (sf * w[jump]).sum(axis=1) + ptops[rows][jump]
        return left, right

    def sf_at(self, sol: _Solution, t: np.ndarray, cubic: bool = False) -> np.ndarray:
        """``P(C > t)`` at the times ``t >= 0`` (a 1-d array), ``_SF_ROWS`` times at a time
        (bounds the memory of the ``X`` nodes)."""
        return np.concatenate([self._sf(sol, t[a:a + _SF_ROWS], self.nodes(t[a:a + _SF_ROWS]),
                                        cubic)[1]
                               for a in range(0, t.size, _SF_ROWS)] or [np.empty(0)])

    def interpolation_gap(self, sol: _Solution, t: np.ndarray) -> np.ndarray | None:
        # also with bends between the nodes: the quadratic of a bend's cell misses the jump
        # of f's slope wherever a point t - x s_k reads it (an O(h^2) error of P(C > t) at t,
        # weighed by the X nodes that read it: Uniform(1.022, 2.284) x {1, 4.3982} at load 0.7,
        # a p99 1.7e-6 off with 6.0e-8 stated without it)
        if not self.has_atoms and not self.bends_between(sol.h, sol.F.size - 1)[0].size:
            return None
        return np.abs(self.sf_at(sol, t) - self.sf_at(sol, t, cubic=True))


_NO_SX_JUMPS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0),
                np.zeros((0, 1)), np.full(1, -1, dtype=np.int64), np.zeros(0))
""":meth:`_SXModel._jumps` of a grid without products between its nodes."""
_GEOMETRIC_N = 64
"""Largest ``n`` for which the compiled ``P(C > t)`` of replication is ``1 - (1 - x)^n = x
sum_(k < n) (1 - x)^k``, ``x = p^d``, by Horner's rule: a sum of positive terms, its relative
error at most about ``2 n`` units of 1e-16 in the tail too (against mpmath at 50 digits, found
by review: 9.3e-16 at ``n = 20``, 2.8e-15 at 64, where ``-expm1(n log1p(-x))`` errs by 3e-16);
1.8 to 3.3 ns per point for ``n`` of 2 to 20, side by side, where ``expm1`` and ``log1p`` took
15."""
_SF_ROWS = 64
"""Grid nodes per block when :meth:`_SXModel.node_sf` evaluates ``P(C > t)`` (bounds memory)."""


def _sx_geometry(s: np.ndarray, p: np.ndarray, x: np.ndarray, h: float, start: int,
                 jumps: tuple = _NO_SX_JUMPS):
    """Where the points ``w_i - x s_k`` fall on the grid (independent of the solution), for
    the nodes ``i = start, start + 1, ...`` (the rows of ``x``, one block at a time: the
    arrays are small). With ``f`` linear on each cell, ``F(z) = F_c + (d - d^2/(2h)) f_c^+ +
    d^2/(2h) f_{c+1}^-`` for ``z = c h + d``: ``sum_k p_k F(w_i - x s_k)`` is a dot product of
    coefficients with the march's values kept as rows ``(F_c, f_c^+, f_{c+1}^-)``. Returns, of
    shape ``(nodes, J, atoms of S)``, the cells ``c`` (capped at ``i - 1``: cell ``i - 1``
    holds the unknown ``f_i^-``, 0 until solved) and, with a trailing axis of 3, the
    coefficients times ``p_k`` (zero for the points on or below the atom of ``V`` at 0: ``F =
    0`` there, the left limit); per ``(node, J)``: the coefficient ``bq`` of ``f_i^-`` in
    ``q(w_i | x)`` and the mass ``at_zero`` of the points on the atom of ``V`` (the jump of
    ``q`` is ``at_zero F(0)``); per node: whether there is such a point; and the coefficients
    ``(nodes, J, products)`` of the jumps ``J`` of ``f`` at the products between the nodes
    (``jumps``: :meth:`_SXModel._jumps`) in ``q`` (their :func:`_sawtooth`; ``None`` without).
    The numpy twin of :func:`_sx_point`."""
    i = np.arange(start, start + x.shape[0])
    z = (i * h)[:, None, None] - x[:, :, None] * s
    zero = np.abs(z) <= 1e-9 * h
    on = ~zero & (z > 0)
    z *= on                                    # off the grid's support: z = 0, d = 0
    c = np.minimum((z / h).astype(np.int32), np.maximum(i - 1, 0)[:, None, None])
    d = z - c * h
    quad = d * d / (2 * h)
    coef = np.stack([on * p, (d - quad) * p, quad * p], axis=-1)
    bq = (quad * (c == (i - 1)[:, None, None])) @ p
    _, cells, theta, _, _, _ = jumps
    saw = None
    if cells.size:
        saw = np.stack([((on & (c == cell)) * _sawtooth(d, t, h)) @ p
                        for cell, t in zip(cells, theta)], axis=-1)
    return c, coef, bq, zero @ p, zero.any(axis=(1, 2)), saw


def _march_sx(model: _SXModel, table, h: float, M: int, F0: np.ndarray):
    """The march of :func:`_march` for S&X: ``f(w) = lam_t (E_X[(F - q(w|X)) phi(q(w|X))])``,
    the ``X`` nodes and the columns (starting atoms) vectorised. The values ``(F_c, f_c^+,
    f_{c+1}^-)`` are kept as one row per cell, so ``q(w_i | x)`` at every ``X`` node is one
    gather and one contraction (:func:`_sx_geometry`, a block of ``_SF_ROWS`` nodes at a
    time). Compiled (:func:`_march_sx_compiled`, the same operations per node, for
    ``_SX_COLUMNS`` columns at a time) when :meth:`_Kernel.compiled_phi` allows."""
    kernel = model.kernel
    xs, ws, ptops = table
    compiled = kernel.compiled_phi()
    jumps = model._jumps(h, M)
    if compiled is not None:
        F0 = np.ascontiguousarray(F0, dtype=float)
        xs, ws, ptops = (np.ascontiguousarray(a) for a in table)
        groups = [_march_sx_compiled(kernel.lam_t, compiled[0], kernel.n, kernel.r,
                                     compiled[1], h, M, F0[a:a + _SX_COLUMNS], xs, ws, ptops,
                                     model.s, model.p, *jumps[:5],
                                     *model.bends_between(h, M))
                  for a in range(0, F0.size, _SX_COLUMNS)]
        return tuple(np.concatenate(arrays, axis=1) for arrays in zip(*groups))
    K = F0.size
    lam_t, phi = kernel.lam_t, kernel.phi
    state = np.zeros((K, M + 1, 3))       # per column, row c: F_c, f_c^+, f_{c+1}^-
    qm = np.zeros((M + 1, K))
    qp = np.zeros((M + 1, K))
    half = 0.5 * h
    state[:, 0, 0] = F0
    state[:, 0, 1] = lam_t * F0 * (float(ws[0].sum()) * float(phi(np.zeros(1))[0]) + ptops[0])
    node, cells_b, theta_b, mass, _, _ = jumps
    Jv = np.zeros((cells_b.size, K))
    qc = np.zeros((ws.shape[1], K))      # q^+ at the node before, per X node (for J)
    bends = model.bends_between(h, M)
    form = kernel.phi_form() if cells_b.size or bends[0].size else None
    g = gb = 0

    def solve(A, cq):
        """``f_i^-`` (three fixed-point steps from ``f_{i-1}^+``) for ``F_i = A + h f_i^- / 2``;
        after the first, ``phi`` evaluated again only at the ``X`` nodes whose ``q`` depends on
        ``f_i^-`` (``bq != 0``; the same values at the others, as :func:`_march_sx_compiled`
        takes them)."""
        y = previous[:, 1]
        wg = (A - cq) * (lam_t * w)[:, None]       # y = lam_t num / den, lam_t folded in
        wb = (lam_t * w) * (half - bq[:, 0])
        a_top, d_top = lam_t * A * ptop, 1.0 - lam_t * half * ptop
        moving = np.flatnonzero(bq[:, 0])
        cq_moving, bq_moving = cq[moving], bq[moving]
        ph = phi(cq + bq * y)
        for step in range(3):
            if step:
                ph[moving] = phi(cq_moving + bq_moving * y)
            y = ((wg * ph).sum(axis=0) + a_top) / (d_top - wb @ ph)
        return y

    for i in range(1, M + 1):
        r = i % _SF_ROWS
        if r == 0 or i == 1:
            keep, cells, coef, bq_all, zero_all, jumps_at, saw = model.block(h, M, i - r)
        w, ptop, bq = ws[i, keep], ptops[i], bq_all[r][:, None]
        cq = np.einsum("kjst,jst->jk", np.take(state, cells[r], axis=1), coef[r])
        if saw is not None:
            cq += saw[r] @ Jv
        previous = state[:, i - 1]
        A = previous[:, 0] + half * previous[:, 1]
        stop = int(np.searchsorted(bends[0], i, side="right"))
        if stop > gb:   # bends in the cell before (as _march_sx_compiled)
            A = A + np.array([_bend_shift(i, gb, stop, h, state[k], F0[k], *bends[1:], model.s,
                                          model.p, lam_t, form[0], kernel.n, kernel.r, form[1])
                              for k in range(K)])
            gb = stop
        y = solve(A, cq)
        stop = int(np.searchsorted(node, i, side="right"))
        if stop > g:   # products in the cell before: their jumps, as _march_sx_compiled
            base_cq, base_A = cq, A
            for _ in range(4):
                for k in range(K):
                    Jv[g:stop, k] = _new_jumps(
                        g, stop, h, theta_b, mass[:, keep], Jv[:, k], previous[k, 0],
                        previous[k, 1], y[k], F0[k], cq[:, k] + bq[:, 0] * y[k], qc[keep, k], w,
                        lam_t, form[0], kernel.n, kernel.r, form[1])
                cq = base_cq + saw[r][:, g:stop] @ Jv[g:stop]
                A = base_A + (h * (0.5 - theta_b[g:stop])) @ Jv[g:stop]
                y = solve(A, cq)
            g = stop
        Fi = A + half * y
        q = cq + bq * y
        state[:, i, 0], previous[:, 2] = Fi, y
        qm[i] = w @ q
        if jumps_at[r]:
            q = q + zero_all[r][:, None] * F0[None, :]
            y = lam_t * (w @ ((Fi - q) * phi(q)) + Fi * ptop)
        qp[i] = w @ q
        qc[keep] = q
        state[:, i, 1] = y
    fm = np.zeros((M + 1, K))
    fm[1:] = state[:, :-1, 2].T
    return state[:, :, 0].T.copy(), fm, state[:, :, 1].T.copy(), qm, qp, Jv


@_jit
def _phi_compiled(q, mode, n, r, combs):
    """:meth:`_Kernel.phi` at one point, for ``mode`` 0 (no removal), 1 (replication), 2 (MDS:
    the Horner sum of :meth:`_Kernel.phi`, wherever its coefficients stay below ``1e280``:
    absolute error about ``m`` units of 1e-16, against ``mpmath.betainc`` at 60 digits over
    900 values of ``q`` each (at most ``1.1e-16 m``, :func:`_phi_many` alike): 3.4e-15 for
    MDS(1, 33), 5.5e-14 for MDS(400, 500), 1.0e-13 for MDS(2, 900), 3.7e-15 for MDS(10^4,
    33), where ``(1 - p)^n`` by squaring had been 3.1e-13 off (:func:`_power`))."""
    if mode == 0:
        return 1.0
    p = min(max(1.0 - q, 0.0), 1.0)
    if mode == 1:
        return _power(p, r - 1)
    if r == 0:
        return 1.0
    rest = max(1.0 - p, 0.0)
    below, power = 1.0, 1.0
    for j in range(1, r):
        power = power * p
        below = below * rest + combs[j] * power
    return max(1.0 - _power(rest, n) * below, 0.0)


@_jit
def _batch_sf_compiled(q, mds, n, r, combs):
    """:meth:`_Kernel.batch_sf` at one point (compiled with numba). MDS: ``P(Binomial(N, q) <=
    n - 1) = p^(m+1) sum_{k<n} C(N, k) q^k p^(n-1-k)``, ``p = 1 - q``, a sum of positive terms
    by Horner's rule (relative error about ``n`` units of 1e-16, in the tail too);
    replication: ``1 - (1 - x)^n``, ``x = p^d``, as ``x sum_(k < n) (1 - x)^k`` up to
    :data:`_GEOMETRIC_N`, else ``-expm1(n log1p(-x))``."""
    p = min(max(1.0 - q, 0.0), 1.0)
    if not mds:
        pd = _power(p, r)
        if n <= _GEOMETRIC_N:
            total, y = 1.0, 1.0 - pd
            for _ in range(1, n):
                total = total * y + 1.0
            return pd * total
        return 1.0 if pd >= 1.0 else -math.expm1(n * math.log1p(-pd))
    rest = 1.0 - p
    total, power = 0.0, 1.0
    for k in range(n):
        total = total * p + combs[k] * power
        power *= rest
    return _power(p, r + 1) * total


_SQUARED_POWER = 64
"""Exponents below which the compiled code takes integer powers by squaring (numba's ``x **
e``, :func:`_pow_many`), with a relative error of up to about ``e`` units of 1e-16; from it on
by ``math.pow`` (within about a unit): by squaring, ``phi`` of MDS(10^4, 33) had been 3.1e-13
off (``rest ** n``, found by review), 3.7e-15 with ``math.pow`` (at most over 900 values of
``q``, :func:`_phi_compiled`)."""


@_jit_inline
def _power(x, e):
    """``x ** e`` for an integer ``e >= 0``: by squaring below :data:`_SQUARED_POWER`, else
    ``math.pow``."""
    return x ** e if e < _SQUARED_POWER else math.pow(x, float(e))


@_jit_inline
def _pow_many(x, e, count, out):
    """``out[:count] = x[:count] ** e`` for an integer ``e >= 0``, as :func:`_power`: below
    :data:`_SQUARED_POWER` by squaring with the bits of ``e`` in the outer loop, so the points
    run side by side (SIMD); ``x`` is overwritten. Numba's ``x ** e`` squares too, one point at
    a time (the same values, bit for bit, measured for ``e < 64`` on 500000 points; ``phi`` of
    MDS(4, 2) and MDS(20, 10) took 2.0 and 2.5 times less)."""
    if e >= _SQUARED_POWER:
        for u in range(count):
            out[u] = math.pow(x[u], float(e))
        return
    for u in range(count):
        out[u] = 1.0
    while e > 0:
        if e & 1:
            for u in range(count):
                out[u] *= x[u]
        e >>= 1
        if e:
            for u in range(count):
                x[u] *= x[u]


@_jit_inline
def _phi_many(q, count, out, work, mode, n, r, combs):
    """:func:`_phi_compiled` at ``q[:count]`` into ``out`` (``work``: three arrays of at least
    ``count``): the same operations per point, the Horner sum's terms in the outer loop, so the
    points' independent chains run side by side (SIMD) instead of one after another."""
    if mode == 0 or (mode == 2 and r == 0):
        out[:count] = 1.0
        return
    p, rest, power = work[0], work[1], work[2]
    for u in range(count):
        p[u] = min(max(1.0 - q[u], 0.0), 1.0)
    if mode == 1:
        _pow_many(p, r - 1, count, out)
        return
    for u in range(count):
        rest[u] = max(1.0 - p[u], 0.0)
        out[u] = power[u] = 1.0
    for j in range(1, r):
        c = combs[j]
        for u in range(count):
            power[u] = power[u] * p[u]
            out[u] = out[u] * rest[u] + c * power[u]
    _pow_many(rest, n, count, power)
    for u in range(count):
        out[u] = max(1.0 - power[u] * out[u], 0.0)


@_jit_inline
def _batch_sf_many(q, count, out, work, mds, n, r, combs):
    """:func:`_batch_sf_compiled` at ``q[:count]`` into ``out`` (``work`` as for
    :func:`_phi_many`): the same operations per point, the Horner sum's terms in the outer
    loop."""
    p, rest, power = work[0], work[1], work[2]
    for u in range(count):
        p[u] = min(max(1.0 - q[u], 0.0), 1.0)
    if not mds:
        _pow_many(p, r, count, rest)
        if n <= _GEOMETRIC_N:
            for u in range(count):
                p[u], out[u] = 1.0 - rest[u], 1.0
            for _ in range(1, n):
                for u in range(count):
                    out[u] = out[u] * p[u] + 1.0
            for u in range(count):
                out[u] *= rest[u]
            return
        for u in range(count):
            pd = rest[u]
            out[u] = 1.0 if pd >= 1.0 else -math.expm1(n * math.log1p(-pd))
        return
    for u in range(count):
        rest[u] = 1.0 - p[u]
        out[u], power[u] = 0.0, 1.0
    for k in range(n):
        c = combs[k]
        for u in range(count):
            out[u] = out[u] * p[u] + c * power[u]
            power[u] = power[u] * rest[u]
    _pow_many(p, r + 1, count, rest)
    for u in range(count):
        out[u] = rest[u] * out[u]


@_jit_inline
def _sx_point(i, h, inverse, x, s, p, st, K, first, cells, theta, Jv):
    """``sum_k p_k F(w_i - x s_k)`` for the columns ``0..K - 1`` (``K <= 3``) of the march's
    state ``st`` (row ``c``, column ``col``: ``F_c, f_c^+, f_{c+1}^-``), without the term of the
    unknown ``f_i^-`` (cell ``i - 1``, 0 in ``st`` until solved), whose coefficient ``bq`` is
    returned with the mass ``at_zero`` of the points on the atom of ``V`` at 0: the
    coefficients of :func:`_sx_geometry`, computed where they are used (compiled with numba; no
    array of them in memory, the sums in registers). A cell holding products between the nodes
    (:meth:`_SXModel._jumps`: ``first``, ``cells``, ``theta``; their jumps ``Jv``, one row
    each) adds their :func:`_sawtooth`. Returns ``(bq, at_zero, q_0, q_1, q_2)``."""
    bq = at_zero = 0.0
    q0 = q1 = q2 = 0.0
    top = i - 1
    w = i * h
    for k in range(s.size):
        z = w - x * s[k]
        if abs(z) <= 1e-9 * h:
            at_zero += p[k]
            continue
        if z < 0.0:
            continue
        c = min(int(z * inverse), top)
        d = z - c * h
        pk = p[k]
        quad = 0.5 * d * d * inverse
        a1, a2 = (d - quad) * pk, quad * pk
        if c == top:
            bq += a2
        q0 += pk * st[c, 0, 0] + a1 * st[c, 0, 1] + a2 * st[c, 0, 2]
        if K > 1:
            q1 += pk * st[c, 1, 0] + a1 * st[c, 1, 1] + a2 * st[c, 1, 2]
            if K > 2:
                q2 += pk * st[c, 2, 0] + a1 * st[c, 2, 1] + a2 * st[c, 2, 2]
        if cells.size and first[c] >= 0:
            u = first[c]
            while u < cells.size and cells[u] == c:
                g = pk * (max(d - theta[u] * h, 0.0) - quad)
                q0 += g * Jv[u, 0]
                if K > 1:
                    q1 += g * Jv[u, 1]
                    if K > 2:
                        q2 += g * Jv[u, 2]
                u += 1
    return bq, at_zero, q0, q1, q2


@_jit
def _sx_settle(i, h, inverse, x, s, p, shift, coef, products):
    """For an ``X`` node ``x`` that kept its slot from the grid node before (a piece between
    fixed levels), each point's cell as an offset from the node (``shift``) and its
    coefficients of ``f_c^+``, ``f_{c+1}^-`` (``coef``): the point of the next grid node lies
    one cell further at the same place. Returns the first node from which
    :func:`_sx_settled` may sum them: every point then at least one cell above the atom of
    ``V`` at 0 and in a cell below the node (the cell ending at the node holds the unknown
    ``f_i^-``: its coefficient is :func:`_sx_settled`'s ``bq``; a point within rounding of the
    node, ``x s_k`` below its ulp, in that cell at its end, as :func:`_sx_point` places it:
    the smallest ``X`` nodes settle too; exponential ``X`` times the Facebook slowdowns, 2048
    cells, a march of three columns 19 ms and ``P(C > t)`` at the nodes 8.4 ms, where they had
    been placed afresh at every node 22 and 10 ms); never with products between the nodes
    (their sawtooth)."""
    first_row = i
    for k in range(s.size):
        u = max((i * h - x * s[k]) * inverse, -4.0e15)   # far below 0: never reached
        c = min(int(math.floor(u)), i - 1)   # x s_k below rounding: the node's left limit
        d = (u - c) * h
        quad = 0.5 * d * d * inverse
        shift[k] = i - c
        coef[k, 0], coef[k, 1] = (d - quad) * p[k], quad * p[k]
        first_row = max(first_row, i - c + 1)
    return 1 << 62 if products else first_row


@_jit_inline
def _sx_settled(i, shift, coef, p, st, K):
    """:func:`_sx_point` of a node settled by :func:`_sx_settle` (no point near 0):
    ``(bq, q_0, q_1, q_2)``, ``bq`` the coefficient of the unknown ``f_i^-`` (the points
    in the cell ending at the node; 0 in ``st`` until solved)."""
    bq = q0 = q1 = q2 = 0.0
    for k in range(p.size):
        c = i - shift[k]
        pk, a1, a2 = p[k], coef[k, 0], coef[k, 1]
        if c == i - 1:
            bq += a2
        q0 += pk * st[c, 0, 0] + a1 * st[c, 0, 1] + a2 * st[c, 0, 2]
        if K > 1:
            q1 += pk * st[c, 1, 0] + a1 * st[c, 1, 1] + a2 * st[c, 1, 2]
            if K > 2:
                q2 += pk * st[c, 2, 0] + a1 * st[c, 2, 1] + a2 * st[c, 2, 2]
    return bq, q0, q1, q2


@_jit_inline
def _sx_cache(J, S):
    """Per slot of the ``X`` nodes: the node it held at the grid node before (none yet), the
    node from which :func:`_sx_settled` sums its points (-1: not settled), and the points'
    offsets and coefficients (:func:`_sx_settle`)."""
    return (np.full(J, np.nan), np.full(J, -1, dtype=np.int64),
            np.zeros((J, S), dtype=np.int64), np.zeros((J, S, 2)))


@_jit
def _new_jumps(g, stop, h, theta, mass, Jk, Fc, fc, y, a, qi, qc, wx, lam_t, mode, n, r,
                  combs):
    """The jumps ``J`` of ``f`` at the atoms (IR, :func:`_jump_node`: one job size of
    probability 1) or products ``x s`` (S&X with a job size on atoms) ``g..stop - 1`` between
    the nodes of the cell ``c`` ending at the node being solved (one column: ``Jk`` the
    current ones, ``F_c``, ``f_c^+``, ``f^-`` at the node ``y``, ``F(0) = a``; ``mass[u, j]``
    the jump of ``q(. | x_j)`` over ``F(0)`` at ``b_u``, ``wx`` the job sizes' probabilities):
    ``J = lam_t sum_x P(X = x) ((F - q^+) phi(q^+) - (F - q^-) phi(q^-))`` at each ``b``,
    ``F(b)`` from the cell's reading (:func:`_sawtooth`) and ``q(b^- | x)`` linear between
    ``q^+`` at the node ``c`` (``qc``, per job size) and ``q^-`` at the node (``qi``) less the
    cell's jumps (an ``O(h)`` error of ``J``: ``O(h^2)`` of ``F``)."""
    out = np.zeros(stop - g)
    for u in range(g, stop):
        at = theta[u] * h
        square = at * at / (2.0 * h)
        Fb = Fc + at * fc + (y - fc) * square
        for v in range(g, stop):
            Fb += Jk[v] * (max(at - theta[v] * h, 0.0) - square)
        total = 0.0
        for j in range(mass.shape[1]):
            if mass[u, j] == 0.0:
                continue
            cell = below = 0.0
            for v in range(g, stop):
                cell += mass[v, j]
                if theta[v] < theta[u]:
                    below += mass[v, j]
            q_minus = (1.0 - theta[u]) * qc[j] + theta[u] * (qi[j] - a * cell) + a * below
            q_plus = q_minus + a * mass[u, j]
            total += wx[j] * ((Fb - q_plus) * _phi_compiled(q_plus, mode, n, r, combs)
                              - (Fb - q_minus) * _phi_compiled(q_minus, mode, n, r, combs))
        out[u - g] = lam_t * total
    return out


_SX_COLUMNS = 3
"""Columns (starting atoms) per compiled S&X march: their sums kept in registers
(:func:`_sx_point`); more columns are marched in groups."""


@_jit
def _march_sx_compiled(lam_t, mode, n, r, combs, h, M, F0, xs, ws, ptops, s, p, node, cells,
                       theta, mass, first, bnode, btheta, bc, bslope, bk):
    """:func:`_march_sx` node by node (compiled with numba) for up to ``_SX_COLUMNS`` columns,
    the points ``w_i - x s_k`` placed on the grid as they are used (:func:`_sx_point`). The
    fixed-point iteration on ``f_i^-`` re-evaluates ``phi`` only at the ``X`` nodes whose ``q``
    depends on it (``x s_k < h`` for some ``k``: a few small ``x``), side by side
    (:func:`_phi_many`, the same values as :func:`_phi_compiled`, bit for bit: MDS(20, 10),
    exponential ``X`` times ``S`` in {1, 10}, 8192 cells, 25 such nodes of 134 per grid node,
    41 ms a march where one call each had taken 61); at the others it is evaluated once.
    Products between the nodes (:meth:`_SXModel._jumps`): at the node ending their cell the
    node is solved five times, their jumps ``J`` (:func:`_new_jumps`) from the
    solve before (as :func:`_jump_node`); also returns ``J``, ``(products, columns)``. Bends
    between the nodes (:meth:`_SXModel.bends_between`: ``bnode``, ...) add
    :func:`_bend_shift` to the node ending their cell. An ``X`` node that keeps its slot from
    one grid node to the next is summed from its cached cells once settled
    (:func:`_sx_settle`, :func:`_sx_settled`)."""
    K, J = F0.size, ws.shape[1]
    st = np.zeros((M + 1, K, 3))       # row c: F_c, f_c^+, f_{c+1}^- per column
    qm = np.zeros((M + 1, K))
    qp = np.zeros((M + 1, K))
    cq = np.zeros((J, 3))
    bq = np.zeros(J)
    at_zero = np.zeros(J)
    moving = np.empty(J, dtype=np.int64)
    Jv = np.zeros((cells.size, K))
    Jnew = np.zeros((cells.size, K))
    qc = np.zeros((J, K))              # q^+ at the node before, per X node (for J)
    qi = np.zeros(J)
    fixed = np.empty(J, dtype=np.int64)     # the X nodes whose q does not depend on f_i^-
    qf, phf, work = np.empty(J), np.empty(J), np.empty((3, J))
    half, inverse = 0.5 * h, 1.0 / h
    held, ready, shift, coef = _sx_cache(J, s.size)
    phi0 = _phi_compiled(0.0, mode, n, r, combs)
    for k in range(K):
        st[0, k, 0] = F0[k]
        st[0, k, 1] = lam_t * F0[k] * (ws[0].sum() * phi0 + ptops[0])
    g = gb = 0
    for i in range(1, M + 1):
        ptop = ptops[i]
        stop = g
        while stop < cells.size and node[stop] == i:
            stop += 1
        bstop = gb
        while bstop < bnode.size and bnode[bstop] == i:
            bstop += 1
        sweeps = 5 if stop > g else 1
        for sweep in range(sweeps):
            jump = False
            count = still = 0
            for j in range(J):
                bq[j] = at_zero[j] = 0.0
                if ws[i, j] != 0.0:   # a piece of zero width: no contribution
                    x = xs[i, j]
                    if x != held[j]:
                        held[j], ready[j] = x, -1
                    elif ready[j] < 0:
                        ready[j] = _sx_settle(i, h, inverse, x, s, p, shift[j], coef[j],
                                              cells.size)
                    if 0 <= ready[j] <= i:
                        bq[j], cq[j, 0], cq[j, 1], cq[j, 2] = _sx_settled(
                            i, shift[j], coef[j], p, st, K)
                    else:
                        bq[j], at_zero[j], cq[j, 0], cq[j, 1], cq[j, 2] = _sx_point(
                            i, h, inverse, x, s, p, st, K, first, cells, theta, Jv)
                    jump = jump or at_zero[j] > 0.0
                    if bq[j] != 0.0:
                        moving[count] = j
                        count += 1
                    else:
                        fixed[still] = j
                        still += 1
            for k in range(K):
                A = st[i - 1, k, 0] + half * st[i - 1, k, 1]
                for u in range(g, stop):
                    A += Jv[u, k] * h * (0.5 - theta[u])
                if bstop > gb:
                    A += _bend_shift(i, gb, bstop, h, st[:, k, :], F0[k], btheta, bc, bslope,
                                     bk, s, p, lam_t, mode, n, r, combs)
                y = st[i - 1, k, 1]
                fixed_num, fixed_den = A * ptop, half * ptop
                for u in range(still):
                    qf[u] = cq[fixed[u], k]
                _phi_many(qf, still, phf, work, mode, n, r, combs)   # side by side
                for u in range(still):
                    j = fixed[u]
                    fixed_num += ws[i, j] * (A - qf[u]) * phf[u]
                    fixed_den += ws[i, j] * half * phf[u]
                for _ in range(3):
                    for u in range(count):
                        j = moving[u]
                        qf[u] = cq[j, k] + bq[j] * y
                    _phi_many(qf, count, phf, work, mode, n, r, combs)   # side by side
                    num, den = fixed_num, fixed_den
                    for u in range(count):
                        j = moving[u]
                        num += ws[i, j] * (A - cq[j, k]) * phf[u]
                        den += ws[i, j] * (half - bq[j]) * phf[u]
                    y = lam_t * num / (1.0 - lam_t * den)
                if sweep < sweeps - 1:
                    for j in range(J):
                        qi[j] = cq[j, k] + bq[j] * y
                    Jnew[g:stop, k] = _new_jumps(
                        g, stop, h, theta, mass, Jv[:, k], st[i - 1, k, 0], st[i - 1, k, 1],
                        y, F0[k], qi, qc[:, k], ws[i], lam_t, mode, n, r, combs)
                    continue
                Fi = A + half * y
                st[i, k, 0], st[i - 1, k, 2] = Fi, y
                total = Fi * ptop
                below = above = 0.0
                for j in range(J):
                    if ws[i, j] == 0.0:
                        continue
                    q = cq[j, k] + bq[j] * y
                    below += ws[i, j] * q
                    if jump:
                        q += at_zero[j] * F0[k]
                        total += ws[i, j] * (Fi - q) * _phi_compiled(q, mode, n, r, combs)
                    above += ws[i, j] * q
                    qc[j, k] = q
                qm[i, k], qp[i, k] = below, above
                st[i, k, 1] = lam_t * total if jump else y
            if sweep < sweeps - 1:
                Jv[g:stop] = Jnew[g:stop]
        g, gb = stop, bstop
    fm = np.zeros((M + 1, K))
    fm[1:] = st[:-1, :, 2]
    return st[:, :, 0].copy(), fm, st[:, :, 1].copy(), qm, qp, Jv


@_jit
def _sx_node_sf(h, xs, ws, ptops, s, p, F, fp, fm, F0, mds, n, r, combs, first, cells, theta,
                Js):
    """``P(C > t^-)`` and ``P(C > t)`` at the grid nodes of a solution (its ``f_i^-`` known):
    ``q(w_i^- | x_j)`` by :func:`_sx_point`, the jump ``at_zero F(0)`` on the atom of ``V`` at
    0, :func:`_batch_sf_compiled`, summed with the ``X`` weights (compiled with numba; no
    array of the nodes' ``q`` in memory; settled ``X`` nodes from their cached cells, as in
    :func:`_march_sx_compiled`); ``Js``: the jumps of ``f`` at the products between the nodes
    (``first``, ``cells``, ``theta``: :meth:`_SXModel._jumps`)."""
    rows, J = ws.shape
    Jv = Js.reshape(-1, 1)
    st = np.empty((rows, 1, 3))
    st[:, 0, 0], st[:, 0, 1] = F, fp
    st[:-1, 0, 2], st[-1, 0, 2] = fm[1:], 0.0
    inverse = 1.0 / h
    held, ready, shift, coef = _sx_cache(J, s.size)
    left, right = np.empty(rows), np.empty(rows)
    # a node's points first, then their P(C > t) side by side (_batch_sf_many)
    q, w, sf = np.empty(J), np.empty(J), np.empty(J)
    jumped, jump_sf, where = np.empty(J), np.empty(J), np.empty(J, dtype=np.int64)
    work = np.empty((3, J))
    for i in range(rows):
        count = jumps = 0
        for j in range(J):
            if ws[i, j] == 0.0:
                continue
            q[count], w[count], at_zero = 0.0, ws[i, j], 0.0
            x = xs[i, j]
            if x != held[j]:
                held[j], ready[j] = x, -1
            elif ready[j] < 0:
                ready[j] = _sx_settle(i, h, inverse, x, s, p, shift[j], coef[j], cells.size)
            if 0 <= ready[j] <= i:
                q[count] = _sx_settled(i, shift[j], coef[j], p, st, 1)[1]
            elif i > 0:
                _, at_zero, q[count], _, _ = _sx_point(i, h, inverse, x, s, p, st, 1, first,
                                                       cells, theta, Jv)
            if at_zero != 0.0:
                jumped[jumps], where[jumps] = q[count] + at_zero * F0, count
                jumps += 1
            count += 1
        _batch_sf_many(q, count, sf, work, mds, n, r, combs)
        _batch_sf_many(jumped, jumps, jump_sf, work, mds, n, r, combs)
        below = above = ptops[i]
        g = 0
        for u in range(count):
            below += w[u] * sf[u]
            if g < jumps and where[g] == u:
                above += w[u] * jump_sf[g]
                g += 1
            else:
                above += w[u] * sf[u]
        left[i], right[i] = below, above
    return left, right


# ------------------------------------------------------------------------ q and P(C > t) off-node
def _F_cubic(sol: _Solution, z: np.ndarray, lattice: float | None = None) -> np.ndarray:
    """``F(z)`` for ``0 <= z <= W`` by cubic Lagrange interpolation of the node values within
    one step of the ``lattice`` (:func:`.meanfield._table`: ``f`` jumps, or its slope does, only
    at its multiples, where the atom of ``V`` at 0 meets the atoms of the runtime), a second
    interpolation of the grid's ``F`` beside the march's quadratic of the cell (``f`` linear),
    for :meth:`RemovalBatchTime._quantile_errors`. A lattice that is not a multiple of the step
    (the cell bound reached: its atoms between the nodes) is not used: its cells, counted in
    steps, drifted from its points (IR {1, 2.5} at load 0.995, a step of 0.15 against a lattice
    of 0.5: ``F`` read 0.026 off in runs of cells, a p90 stated +-133 where it was 2.7e-4 off)."""
    M = sol.F.size - 1
    lattice = _aligned(lattice, sol.h)
    steps = M if lattice is None else max(int(round(lattice / sol.h)), 1)
    return _table(sol.F, sol.F, sol.h, steps, np.asarray(z, dtype=float), lattice)


_Q_AT_VALUES = 2 ** 16
"""Gauss-Legendre points :func:`_q_at` evaluates at once (memory: a few arrays of this, 512 kB
each, in the cache's reach: the quantiles of S&X Exp(1) x Erlang(2, 2), Replication(2, 2) at
load 0.5, took 3.26 s of CPU with it, 3.50 s with 2^18 and 3.86 s with 2^20; with 2^14, 3.49 s)."""


def _q_at(sol: _Solution, R: Distribution, t: np.ndarray, kinks: tuple = (),
          one: float | np.ndarray = math.inf, scale: np.ndarray | None = None) -> np.ndarray:
    """``q(t) = F(0) G(t) + int_0^t f(v) G(t - v) dv`` at the times ``t >= 0`` (a 1-d array),
    for a continuous ``R``, with the grid's piecewise-linear ``f``: Gauss-Legendre per cell
    (exact product integration up to the rule: the approximation the march used at the
    nodes), the cells split where ``t - v`` is a kink of ``G``. ``one``: ``G = 1`` (in floating
    point) from there on, so the cells with ``t - v >= one`` add ``F`` at their end minus
    ``F(0)`` (the trapezoid of ``f``, exactly as the march's weights ``h / 2`` do) instead of
    their quadrature. With ``scale`` (an array of the shape of ``t``, and ``one`` one too) each
    time has its own law, ``G(u) = P(scale R <= u)`` with the kinks ``scale c``: the ``X``
    nodes of continuous slowdowns in one call (a call per node and time set had taken two
    thirds of an S&X point at a goal of 1e-2, its quantiles' root search). The times are taken
    a block at a time, in order of the cells they span (at most ``_Q_AT_VALUES`` points)."""
    h, M = sol.h, sol.F.size - 1
    t = np.asarray(t, dtype=float)
    scale = np.ones(t.shape) if scale is None else np.asarray(scale, dtype=float)
    # in floating point before the cast (t / h beyond 2^63 cast to a negative index)
    j = np.minimum(t / h, M).astype(np.intp)
    first = np.minimum(np.maximum(t - one, 0.0) // h, j).astype(np.intp)
    base = np.where(first > 0, sol.F[first] - sol.F0, 0.0)
    cuts = np.asarray(kinks, dtype=float)
    f_end = np.append(sol.f_left[1:], 0.0)   # f at the right end of each cell
    with np.errstate(over="ignore"):   # far times over a small scale: G(inf) = 1
        out = sol.F0 * R._cdf_all(t / scale) + base
    span = (j - first) + 2 + cuts.size   # pieces per time, at most
    order = np.argsort(span, kind="stable")
    spans = span[order]
    cap = _Q_AT_VALUES // _GL_NODES.size
    a = 0
    while a < t.size:
        # the next times in order of span, up to twice the first one's (each is padded to the
        # block's widest) and within the cap
        b = int(np.searchsorted(spans, 2 * spans[a], side="right"))
        b = min(b, a + max(1, cap // int(spans[b - 1])))
        rows, a = order[a:b], b
        ti, start, stop = t[rows, None], first[rows, None], j[rows, None]
        width = int((stop - start).max()) + 2
        # each time's breakpoints: its cells' ends up to t, and t - c for the kinks c inside
        edges = np.minimum(h * (start + np.arange(width)), ti)
        inner = ti - scale[rows, None] * cuts
        edges = np.sort(np.concatenate(
            [edges, np.where((inner > h * start) & (inner < ti), inner, ti)], axis=1), axis=1)
        lo, hi = edges[:, :-1], edges[:, 1:]
        cell = np.clip(np.floor(0.5 * (lo + hi) / h), start, stop).astype(np.intp)
        fa, fb = sol.f_right[cell], f_end[cell]
        half = 0.5 * (hi - lo)
        v = 0.5 * (lo + hi)[..., None] + half[..., None] * _GL_NODES
        # f linear in each cell; 0 (exactly: fa - fa) beyond the cell after the horizon (a
        # time far out: its last piece reaches t, where the line had grown to 1e256)
        frac = np.minimum((v - (h * cell)[..., None]) / h, 1.0)
        f = fa[..., None] + (fb - fa)[..., None] * frac
        with np.errstate(over="ignore"):
            u = np.maximum(ti[..., None] - v, 0.0) / scale[rows, None, None]
        g = R._cdf_all(u.ravel()).reshape(v.shape)
        out[rows] += (f * g * (half[..., None] * _GL_WEIGHTS)).sum(axis=(1, 2))
    return out


# ------------------------------------------------------------------------ grids and horizon
_TAIL = 1e-12
"""The horizon ``W`` is where ``1 - q(W)`` (a bound of the workload's tail) falls below this."""
_HORIZON_DOUBLINGS = 14
_NEAR_TAIL = 1e3
"""A tail at the horizon within this factor of :data:`_TAIL` grows the horizon by what the
tail's rate asks for (with a quarter more), from a tenth on, where other tails grow it by half
at least: S&X X on {1, 2, 4} times lognormal(0.4) slowdowns, M/G/1 at load 0.97, read 5.6e-12
at ``W = 1884`` (its rate asked for 6% more): the step of half, to 2827, had made the cells 1.5
times wider, the mean 1.1e-7 off Pollaczek-Khinchine (4.5e-6 stated, short of the goal), and
is 1.1e-8 off at 2073 (the march had stopped at 1884, 3.0e-9 off, reading the tail as 0 where
``F`` rose above 1: :mod:`.removal_continuous`)."""
_TAIL_FINEST = 1e-9
"""Largest tail at the horizon on the finest grid (placed below ``_TAIL`` on a coarser one)
before the grid method refuses (see :func:`grid_prediction`)."""
_DEGENERATE = 1e-10
"""An idle probability below this with most of the workload at the horizon is a coarse grid's
artefact near the stability frontier (:func:`_solve_grids`)..."""
_NO_IDLE = 1e-60
"""The smallest idle probability :func:`_shoot` tries: ``F(W) >= 1`` there, no stationary law
on that grid (far below :data:`_DEGENERATE`; the tenfold steps it took before stopped about
here, after 60 marches)."""
_FINER = 4
"""...answered by a step up to this many times finer at the same horizon (beyond the frontier
every step sees it: the frontier then decides, at the cost of these extra marches)."""
_FLOOR = 1e-9
"""Smallest relative error estimate of a grid statistic: what the horizon, Newton's method and
rounding over up to ``4 * 16384`` nodes leave (measured up to 4.3e-10 of an M/D/1 mean at load
0.98 against Pollaczek-Khinchine, where the grids' differences stated 5e-11)."""


def _lattice(R: Distribution) -> float | None:
    """The largest ``b`` with every atom of ``R`` a multiple of ``b`` (atoms are then nodes of a
    grid of step ``b / j``), or ``None`` (continuous law, or atoms without a common step: ratios
    to the largest atom that are not fractions with denominators up to 1000)."""
    values, _ = _masses(R)
    values = values[values > 0]   # an atom at 0 is a node of every grid
    if values.size == 0:
        return None
    top = float(values.max())
    ratios = [Fraction(float(v) / top).limit_denominator(1000) for v in values if v > 0]
    if any(abs(float(f) * top - v) > 1e-12 * top for f, v in zip(ratios, values[values > 0])):
        return None
    lcm = math.lcm(*(f.denominator for f in ratios))
    g = math.gcd(*(f.numerator * (lcm // f.denominator) for f in ratios))
    return top * g / lcm


def _grid_step(W: float, lattice: float | None, cells: int,
               limit: int) -> tuple[float, int, bool]:
    """Step ``h`` (about ``W / cells``, a divisor of the lattice step if any, with at most
    ``limit`` cells), cells ``M`` covering ``[0, W]``, and whether every atom is a node."""
    h = W / cells
    aligned = True
    if lattice is not None:
        h = lattice / math.ceil(lattice / h - 1e-9)
        if math.ceil(W / h - 1e-9) > limit:
            h, aligned = W / limit, False
    return h, math.ceil(W / h - 1e-9), aligned


def _horizon_tails(model, sol: _Solution) -> tuple[float, float]:
    """What the horizon leaves out, at ``W`` and half a horizon earlier (``model.tails``,
    else ``1 - q``)."""
    if hasattr(model, "tails"):
        return model.tails(sol)
    M = sol.F.size - 1
    return 1.0 - float(sol.q_left[-1]), 1.0 - float(sol.q_left[M // 2])


def _keeping_nodes(W: float, grown: float, step: float | None, limit: int) -> float:
    """The horizon after ``W``: ``grown``, or where that would lose the lattice ``step`` the
    grids hold as nodes (of the kinks or atoms, at most ``limit`` cells of ``step``), the
    longest that keeps it, if it still grows the horizon by 5% (its tail is read there, and
    the horizon grows past it if need be, from where it would have without it). S&X X on {1, 3}
    times uniform(0.5, 1.5) slowdowns, M/G/1 at load 0.97: the tail was 4.2e-12 at ``W =
    1566`` and the horizon grew to 2349, beyond 4096 cells of the kinks' common step 0.5; the
    kinks between the nodes, the mean was 2.6e-5 off Pollaczek-Khinchine (2.4e-4 stated), and
    is 1.9e-12 off on ``W = 2048``."""
    if step is None:
        return grown
    longest = step * (limit - 1e-9)   # within the bound after rounding (see _grid_step)
    return longest if grown > longest >= 1.05 * W else grown


def _check_resolved(model, W: float) -> None:
    """:class:`RemovalError` if the finest grid (``4 max_cells`` cells) on ``[0, W]`` has a step
    above half the mean runtime (it cannot resolve the runtime)."""
    cells = 4 * model.max_cells
    if W / cells > model.scale / 2:
        raise RemovalError(
            f"the workload's tail reaches w = {W:.4g} (a heavy tail, or a load close to the "
            f"stability frontier): a uniform grid of at most {cells} cells cannot resolve the "
            f"runtime (mean {model.scale:.4g}) as well (qt.grid_budget raises the bound)")


def _check_fastest(model, step: float) -> None:
    """:class:`RemovalError` where ``model`` refuses grids that do not resolve its runtime's
    fastest part (``refuse_unresolved``) and ``step`` is beyond ``unresolved_above``."""
    if model.refuse_unresolved and step > model.unresolved_above:
        raise RemovalError(
            f"the finest step the grids reach, {step:.3g}, does not resolve the runtime's "
            f"fastest part ({model.fastest_text}, mean {model.fastest:.3g}), and its error is "
            f"not seen by the grids: qt.grid_budget raises the cell bound "
            f"({4 * model.max_cells} cells now); or use qt.simulate")


def _solve_grids(model, guess: float):
    """The horizon ``W`` (growing), then the solutions on grids ``h``, ``h / 2``, ``h / 4``;
    also whether the grids are aligned (second order) and the ``(h, M)`` of the last grid
    whose shoot failed as too coarse, or ``None``.
    The grids that place the horizon keep ``h`` within twice the mean runtime (within their
    cell bound): coarser, they do not resolve the runtime, and their tail can vanish where the
    true one does not (M/E2/1 at load 0.999: ``h = 32``, ``P(V > 3 W / 4) = 0`` at
    ``W = 4096`` where the finest grid read 0.012; the mean was 2.3% off, 3e-7 stated)."""
    lattice = model.lattice
    # atoms between the nodes placed exactly (IR on atoms: _Between) count as nodes
    between = model.between
    aligned = (lattice is not None or not model.has_atoms or between) and not model.loose_kinks
    W = 16.0 * model.scale
    kinks = model.kink_lattice   # IR: kinks of G as nodes, where cheap
    finer = 1   # steps halved because a coarse grid saw the system as unstable
    best = None  # (tail at the horizon, the state with it) of the horizons tried
    resume = None   # the horizon planned, where one was kept short to hold the nodes
    short_steps = 0   # steps of less than half the horizon
    failed = None  # ((h, M), error) of the grid whose shoot failed
    for _ in range(_HORIZON_DOUBLINGS):
        limit = model.max_cells
        use = kinks is not None and W / kinks <= limit
        # a power of 2 times _M_BASE (the refinement halves steps up to the cell bound)
        cells = _M_BASE * 2 ** max(0, math.ceil(math.log2(W / (2.0 * model.scale * _M_BASE))))
        cells = min(limit, cells * finer)
        h, M, on_nodes = _grid_step(W, kinks if use else lattice, cells, limit)
        on_nodes = on_nodes and (use or kinks is None)
        if failed is not None and failed[0] == (h, M):   # the finer step is this same grid
            raise failed[1]
        try:
            coarse = _shoot(model, h, M, guess)
        except RemovalError as error:
            # a step too coarse for the runtime: where bends are placed on cells wider than the
            # pieces of X's density (S&X 0.67 U(0.057, 0.35) + 0.33 U(2.484, 3.589) x five
            # slowdowns at load 0.95: F(W) = 1 had no root at h = 1.5), or near the frontier
            # (exponential X x {1, 10} w.p. .9, .1, Replication(5, 3) at 0.97 of its frontier:
            # F(W) not monotone in F0 at h = 2.28, 1.2 mean runtimes): a finer step. Beyond the
            # frontier the finer steps fail too, and the frontier decides (_grid_or_frontier)
            if cells >= limit or finer >= _FINER:
                raise
            failed = ((h, M), error)
            finer *= 2
            continue
        tail_end, tail_mid = _horizon_tails(model, coarse)
        if coarse.F0 < _DEGENERATE and tail_end > 0.5:
            # near the frontier a coarse step moves it below the load: no idle mass, the
            # workload piled at the horizon (HyperExponential MDS(4, 2) at 0.999 of its
            # frontier: F0 = 1.3e-20 at h = 0.59, where h = 0.28 finds 0.0031 at 0.998). Not a
            # tail to chase: a finer step at the same horizon, and if that too finds none, no
            # stationary law (beyond the frontier, which then decides)
            if cells >= limit or finer >= _FINER:
                raise RemovalError(
                    f"no stationary law on grids of step down to {h:.3g}: the idle probability "
                    f"is {coarse.F0:.2g} with the workload piled at the horizon (a load at the "
                    f"stability frontier, beyond it, or too close to it for these grids)")
            finer *= 2
            continue
        guess = coarse.F0
        if tail_end < _TAIL:
            break
        if best is not None and tail_end >= best[0] and best[0] < _TAIL_FINEST:
            # a longer horizon read a larger tail: the march's rounding (growing with the
            # nodes and with 1 / (1 - load)), not the tail, is read there; the horizon with
            # the smallest one stands (S&X X = 1 times a hyperexponential S at load 0.97:
            # 7.8e-12 at W = 2051, then 7.4e-11 and 6.3e-10 at 3077 and 4615, until the
            # grid refused at 17280)
            tail_end, (W, coarse, h, M, on_nodes, guess) = best
            break
        if best is None or tail_end < best[0]:
            best = (tail_end, (W, coarse, h, M, on_nodes, guess))
        rate = math.log(tail_mid / tail_end) / (0.5 * M * h) if tail_mid > tail_end > 0 else 0
        # the tail is read at 3 W / 4 (model.tails, else at W), which moves by 3 / 4 of the
        # horizon's growth
        reading = 0.75 if hasattr(model, "tails") else 1.0
        grow = 1.25 * math.log(tail_end / _TAIL) / rate / (reading * W) if rate > 0 else 1.0
        # the horizon planned before one kept short to hold the nodes (_keeping_nodes), where
        # that did not hold the tail: as without it from there on
        # a tail within _NEAR_TAIL of _TAIL: the step its rate asks for, from a tenth on (twice
        # at most: a heavier tail than its rate says takes the steps of half on from there)
        near = tail_end < _NEAR_TAIL * _TAIL and short_steps < 2
        short_steps += near
        target = (W * min(max(grow + 1.0, 1.1 if near else 1.5), 4.0) if resume is None
                  else resume)
        W = _keeping_nodes(W, target, kinks if use else lattice if on_nodes else None, limit)
        resume = target if W < target else None
        _check_resolved(model, W)   # before the next (longer) march: a refusal is certain
    else:
        raise RemovalError(
            f"the workload's tail P(V > w) is still above {_TAIL:g} at w = {W:.4g} (a heavy tail "
            f"or a load close to the stability frontier): the grid method cannot resolve it; "
            f"use qt.simulate")
    if between and not on_nodes:
        # atoms (products) placed between the nodes because their common step is finer than
        # these grids: the irregular O(h^2) term of atoms without one, the rough estimates
        # (IR {1, 1.618} w.p. .6, .4, a step of 0.002, M/G/1 at load 0.85: the grids' means
        # 6.1e-7 and 5.9e-7 off Pollaczek-Khinchine on 32768 and 65536 cells, the
        # extrapolation 5.8e-7 off with 4.7e-7 stated from a seventh of its difference)
        model.rough = True
    if model.bends is not None and model.bends_between(h / 4, M * 4)[0].size:
        # bends between the nodes: their cells' O(h^3) terms are irregular (where each falls),
        # as the atoms' O(h^2) terms are: the rough estimates (held out, 40 S&X laws with
        # density jumps at loads 0.3 to 0.9: with a seventh of the difference, 13 of 107 means
        # up to 4.1 times beyond their estimates; rough and with the re-solves of
        # grid_prediction, the 40 worst at most 0.33 of them)
        model.rough = True
    sols = [coarse]
    spread = 0.0
    for factor in (2, 4):
        if len(sols) == 2:   # F0 extrapolated (O(h^2) cancelled), as in _refine
            change = (sols[0].F0 - sols[1].F0) / 4.0
            guess = sols[1].F0 - change
            spread = 0.2 * abs(change) if model.one_march else 0.0
        sols.append(_shoot(model, h / factor, M * factor, guess, spread))
    return sols, aligned and (on_nodes or between or model.bends is not None
                              or not (model.has_atoms or kinks is not None)), (
        failed[0] if failed is not None else None)


_ROUGH_STEP = 0.1
"""Finest step, in mean runtimes, beyond which :func:`grid_prediction` takes the rough error
estimate of :func:`_richardson` (the whole difference of two extrapolations) for S&X runtimes
on discrete slowdowns (:class:`_SXModel`, whose cells are bounded by the memory of its ``X``
nodes; IR grids reach four times finer, and there a seventh held: M/E2/1 at load 0.99, 1.1e-7
off Pollaczek-Khinchine with 3.4e-7 stated, and none of 36 IR cases fell short). Steps that
coarse come where the horizon is long (loads near the frontier, long tails): there the
differences of successive grids did not yet fall fourfold (ratios 4.6 then 3.8, S&X Erlang(2)
x {1, 10} at load 0.97, MDS(1, 0)), and a seventh of the difference stated 1.6e-6 of a mean
7.5e-6 off Pollaczek-Khinchine. Over 60 such S&X cases (four job-size laws, three slowdowns,
loads 0.3 to 0.97) the estimates of 8 had fallen short of the true error, 2.4-fold at worst:
none with the rough estimate beyond this step and the rule over X checked on the finest grid;
over 44 others (held out: four more job-size laws, three more slowdowns) 2 of 7, by 1.18 at
most."""

_ROUGH_STEP_FASTEST = 0.25
"""Finest step, in means of the job size at the smallest slowdown (``E[X] min S``, the mean of the
runtime's fastest part), that :func:`_refine` refines S&X runtimes on discrete slowdowns to
within the cell bound (at the default goal), and beyond which :func:`grid_prediction` takes the
rough estimates (as beyond :data:`_ROUGH_STEP` mean runtimes): slowdowns spread over a wide
range put in the runtime a fast part that a step of a tenth of the mean runtime does not
resolve. There the differences of successive grids fall fourfold while the extrapolations have
not settled (S&X Erlang(2) x uniform {1, ..., 12} at load 0.95, MDS(1, 0): the grids'
differences fell 3.69, 3.96, 4.08 and 4.00-fold, the extrapolations' errors were 8.3e-6,
-8.7e-6, 3.7e-7 and 2.7e-7, then 2.8e-8 and 1.7e-9 on finer grids; 2.7e-7 off
Pollaczek-Khinchine with 1.8e-7 stated, at a finest step of 0.082 mean runtimes and 0.54 of
``E[X] min S``). Against Pollaczek-Khinchine, 7 of 491 S&X M/G/1 systems (twelve job-size laws
and eight slowdown laws at loads 0.3 to 0.95, six and five more at 0.5 to 0.97) had been beyond
their estimates (up to 5.3 times: lognormal(0.5) x uniform {1, ..., 12} at 0.95, 1.1e-6 off with
2.2e-7 stated and the goal claimed), at finest steps of 0.35 to 0.55 of it, where this threshold
and :data:`_UNRESOLVED_STEP_FASTEST` were set; the largest of the systems at most 0.25 of it was
0.85 of its estimate. Refining to this step within the cell bound changed 4 of the 491 values,
each closer to Pollaczek-Khinchine (Uniform(0, 2) x uniform {1, ..., 12} at load 0.6: 1.2e-8 off
before, 5.1e-11 after), for twice their time; the others had reached the bound. Also the rough
estimates' step for continuous slowdowns with a small atom of the job size (in means of that
atom times the slowdown's fastest phase: :class:`.removal_continuous._SXContinuousModel`)."""
_COARSE_STEP_MEAN = 0.15
"""Finest step, in mean runtimes, that :func:`_refine` refines a runtime with a density (IR, and
S&X on a continuous slowdown) to within the cell bound, and beyond which, where the bound
stopped them, the estimates are at least twice the last difference of the grids, or the
larger of the last two for a density unbounded at 0 (``coarse_above``, ``stalls``): such
steps come where the horizon is long for the cell bound (heavy tails), and there the grids are
not shown to be in the regime of their leading error. IR Weibull(0.29) to (0.315), M/G/1 at
loads 0.785 to 0.8, on finest steps of 0.24 to 0.49 of the mean, had been up to 1.31 times
beyond their estimates against Pollaczek-Khinchine: a density ``c x^a`` at 0 with ``a < 0``
puts an ``h^(2 + a)`` term in the errors, below the ``h^2`` that Richardson's extrapolation
cancels, and the grids can stall (Weibull(0.29) at 0.8: 3.1e-4, -3.2e-4 and -3.0e-4 off on
the last three, so the last difference alone would have left one 1.27 times beyond; on finer
grids at 0.79 -1.2e-4, -6.2e-5, -2.8e-5 and -1.2e-5, their ratios rising to ``2^1.29``).
Lognormal(1.25), M/G/1 at loads 0.3 to 0.8, on steps of 0.31 of the mean, had been 1.8 to
4.8 times beyond (the grids' errors falling 5.7, 5.4, 4.4 then 3.85-fold: faster than ``h^2``,
so the extrapolations overshoot and agree by chance; found by review). 0.15, not 0.2:
lognormal(1.2) at loads 0.3 and 0.5, on steps of 0.154 and 0.175 of the mean, were 0.88 and
0.89 of their estimates, and at most 0.41 on steps below 0.12 (lognormal(1.1))."""
_UNRESOLVED_STEP_FASTEST = 0.4
"""Finest step, in means of the job size at the smallest slowdown, beyond which (the cell bound
reached first, or under a coarser goal) :func:`grid_prediction` takes as the error estimates at
least the last difference of the grids (for quantiles twice that of ``P(C > t)`` around them,
over the density): there the extrapolation can be further off than the finest grid, and two
extrapolations can agree while both are off (S&X gamma(3.3) x {0.3, 1, 3} at load 0.97, MDS(1,
0): the extrapolations' errors 1.53e-6 and 1.74e-6, the rough estimate 7.0e-7, 2.5 times short;
lognormal(0.2) x {1, 25} at 0.96, the grids 0.898, 0.222, 0.0407 and -0.0026 off and the
extrapolation -0.017, beyond the extrapolation's own correction). The finest steps of the
systems whose rough estimates fell short were 0.535 to 1.23 of ``E[X] min S``. Second-order
grids only: first-order ones (atoms between the nodes) state twice the last difference already."""


_REGULAR_RATIOS = (2.5, 6.0)
"""Band of the ratios of successive differences of the grids' means and idle fractions (fourfold
in the ``h^2`` regime; an ``h^3`` term still weighing moves them towards eightfold, which the
band leaves out on the safe side) outside which grids stopped by the cell bound, with atoms or
bends between the nodes (whose terms depend on where they fall in their cells), are not taken
to be in their ``h^2`` regime: :func:`grid_prediction` then states at least the last
difference of the grids for the mean and the busy fraction, and the quantiles' estimates at
least twice that of ``P(C > t)`` around them, as for :data:`_UNRESOLVED_STEP_FASTEST`
(S&X X {0.5, 1.5} x S {1, 3}, M/G/1 at load 0.999, 65536 cells of 0.64, the products between
the nodes: the idle fraction's differences fell 2.2-, then 8.1-fold, the means' 3.4- and
4.7-fold, and the mean was 1.75e-5 off Pollaczek-Khinchine with 1.33e-5 stated, the rough
estimate; now 0.49 of its estimate). Not without them: a density with a fractional power at 0
makes the idle fraction converge at a lower order (S&X Weibull(1.5) x five slowdowns at 0.9:
its differences fell 1.2- and 3.0-fold, the means' 3.97- and 4.00-fold, 6.8e-8 off with
2.7e-7 stated; with the last difference 3.2e-5). Over 41 M/G/1 systems stopped by the cell
bound (twelve laws, loads 0.98 to 0.999) this changed three estimates (1.2 to 2.7 times
larger); over 37 held out (loads 0.9935 to 0.9993) none, and none was beyond its estimate."""


def _irregular(values) -> bool:
    """Whether successive differences of ``values`` (grids ``2 h``, ``h``, ``h / 2``, ...) fall
    at a ratio outside :data:`_REGULAR_RATIOS` (differences at rounding level ignored)."""
    values = np.asarray(values, dtype=float)
    d = np.diff(values)
    tiny = np.abs(d) <= 1e-13 * np.abs(values[1:])
    for a, b, small in zip(d[:-1], d[1:], tiny[:-1] & tiny[1:]):
        if not small and not (b != 0 and _REGULAR_RATIOS[0] <= a / b <= _REGULAR_RATIOS[1]):
            return True
    return False


_FOURFOLD = 0.1
"""Ratios of successive differences of the grids within this of 4 count as fourfold for
:func:`_moving_away` (rounding and ``h^3`` terms move ratios in the ``h^2`` regime by a few
thousandths to a few tenths: 4.001 then 4.002, 3.992 then 3.961; the idle fractions of X on
{0.5, 2} times gamma(2.5) at load 0.8, 4.101 then 4.150, their extrapolation 2.0e-7 off)."""
_AWAY = 1.25
"""...and a ratio falls away from 4 when its distance below 4 exceeds this factor times the
distance before: a term ``h^p`` emerging from under ``h^2`` grows it by ``2^(2 - p)`` per
halving (more than 1.25 for ``p`` below 1.68), while an ``h^2 log h`` term keeps the ratios
nearly level (a job size mixing an atom with a density times Erlang(2, 2), M/G/1 at load 0.5:
the idle fraction's 3.869 then 3.862, the mean 3.9e-7 off Pollaczek-Khinchine with 2.5e-6
stated). The same above 4: a ratio rising away from 4 (the grids leaving a regime they had
not settled in, which neither the extrapolation nor the observed ratio of :func:`_richardson`
follows: X on {0.3, 3} times lognormal(1) slowdowns, M/G/1 at load 0.5, ratios 3.67 then 5.19,
the extrapolation 1.2e-4 off Pollaczek-Khinchine with 9.2e-5 stated); ratios that stay above 4
are left to the observed ratio."""


def _moving_away(values) -> bool:
    """Whether the successive differences of ``values`` (grids ``2 h``, ``h``, ``h / 2``, ``h /
    4``) stop falling regularly: a difference changes sign or vanishes, or the ratio of the last
    two falls below 4, or rises above it, by more than :data:`_FOURFOLD` and by more than
    :data:`_AWAY` times the distance of the ratio before it (differences at rounding level
    ignored). Set for S&X on
    continuous slowdowns near load 1, where neither the extrapolation nor its estimate
    accounts for it: X on {1, 3} times Erlang(2, 2) slowdowns, M/G/1 at load 0.99, the
    extrapolation had been 8.4e-4 off Pollaczek-Khinchine with 5.6e-4 stated on 4096 to 16384
    cells (the idle fractions' differences changed sign), and 2.2e-3 with 9.5e-4 on grids four
    times finer (the means' ratios 3.96, then 3.6 and 2.9, then a sign change), the march
    drifting past the tail (:mod:`.removal_continuous`: its error grew with the horizon and
    the cells). With the march's sums of ``1 - G`` the same grids converge (5.3e-6 and 3.8e-8
    off), but the coarse grids' idle fractions still fall irregularly there (ratios -0.02, then
    1.3), and the check stands."""
    values = np.asarray(values[-4:], dtype=float)
    if values.size < 4:
        return False
    d = np.diff(values)
    if np.all(np.abs(d[1:]) <= 1e-13 * np.abs(values[2:])):
        return False
    if d[1] == 0 or d[2] == 0:
        return True
    before, last = d[0] / d[1], d[1] / d[2]
    falling = last < 4 - _FOURFOLD and 4 - last > _AWAY * abs(before - 4)
    rising = last > 4 + _FOURFOLD and last - 4 > _AWAY * abs(before - 4)
    return before <= 0 or last <= 0 or falling or rising


def _richardson(values, order: int = 2, rough: bool = False,
                observed: bool = False) -> tuple[float, float]:
    """Value on the finest grid extrapolated from ``h / 2`` and ``h / 4`` (``O(h^2)`` error
    cancelled), and its error estimate: a seventh of its difference from the same extrapolation
    one grid coarser (the remaining error is ``O(h^3)``, ``O(h^4)`` where smooth); the whole
    difference with ``rough`` (an ``O(h^2)`` remainder, for which a third would be exact: an
    ``h^2 log h`` term, the runtime's density unbounded at 0, or kinks between the nodes; a
    third under-covered the busy fraction of S&X Exp x Exp, 2.24e-5 off, 2.23e-5 stated).
    With ``order = 1`` (atoms between nodes: a first-order error) the finest value,
    unextrapolated, with twice its difference from the next grid as the error estimate.

    With ``observed`` (the stated errors; not the refinement's stopping test, which the
    extra term would drive to finer grids: 2.4 times the time of an S&X point) and
    ``order = 2``, plus
    the change of the extrapolation if the differences keep falling
    at their observed ratio ``rho`` rather than fourfold: ``|v3 - v2| |1 / (rho - 1) - 1 / 3|``
    (the whole last difference when they do not fall). Grids not yet in their ``h^2`` regime
    (ratios 4.55 then 3.77: S&X Erlang(3) x Facebook slowdowns at load 0.96, MDS(1, 0), 1.40e-4
    off Pollaczek-Khinchine with 1.20e-4 stated) are then covered; over 210 S&X systems against
    Pollaczek-Khinchine the estimates grew 1.36-fold at the median."""
    v1, v2, v3 = values
    if order == 1:
        return v3, 2 * abs(v3 - v2) + 4e-15 * abs(v3)
    r1, r2 = (4 * v2 - v1) / 3, (4 * v3 - v2) / 3
    d1, d2 = v2 - v1, v3 - v2
    rho = d1 / d2 if d2 != 0 else math.inf
    extra = abs(d2) * (abs(1 / (rho - 1) - 1 / 3) if rho > 1 else 1.0) if observed else 0.0
    return r2, abs(r2 - r1) / (1 if rough else 7) + extra + 4e-15 * abs(r2)


_TARGET = 5e-7
"""Relative error the IR grids are refined to (mean and busy fraction; the goal is 1e-6)."""
_QUANTILE_TARGET = 5e-6
"""Relative error the grids are refined to for the quantiles at :data:`_QUANTILE_LEVELS`
(their estimates, :meth:`RemovalBatchTime._quantile_errors`; the goal is 1e-5)."""
_QUANTILE_LEVELS = (0.5, 0.9, 0.99, 0.999)
"""Levels whose quantiles the grids are refined for (others carry their own estimates)."""


def _targets() -> tuple[float, float]:
    """``_TARGET`` and ``_QUANTILE_TARGET``, scaled by a coarser accuracy goal where one is
    asked for (:func:`.accuracy_goal`)."""
    scale = goal() / GOAL
    return _TARGET * scale, _QUANTILE_TARGET * scale


def _guarded(values, order: int, rough: bool = False,
             observed: bool = False) -> tuple[float, float]:
    """:func:`_richardson` on the last three of ``values`` (grids ``h``, ``h / 2``, ``h / 4``,
    ...), its error estimate guarded by the grid before them when there is one: the estimate
    one grid coarser divided by 8 (the ``h^3`` rate; 4 with ``rough``, 2 for ``order = 1``), so
    that a difference that vanishes by accident (the error changing sign between grids) does
    not pass for a small error; and at least ``_FLOOR`` relative. ``observed``: the stated
    error's term for differences not falling fourfold (:func:`_richardson`)."""
    value, error = _richardson(values[-3:], order, rough, observed)
    if len(values) > 3:
        rate = 2 if order == 1 else (4 if rough else 8)
        error = max(error, _richardson(values[-4:-1], order, rough)[1] / rate)
    return value, max(error, _FLOOR * abs(value))


def _quantile_excess(model, sols, order: int) -> float:
    """Largest estimated relative error of the quantiles at :data:`_QUANTILE_LEVELS` from the
    grids ``sols`` (``h``, ``h / 2``, ``h / 4``), over :data:`_QUANTILE_TARGET`; quantiles on a
    jump of ``P(C > t)`` (an atom's, where the level is within rounding of the jump's top,
    finer grids do not help) are left out."""
    law = RemovalBatchTime(model, sols, _grid_mean(sols[-1]), order)
    levels = np.array(_QUANTILE_LEVELS)
    values, coarse = law._quantile_sets(levels, (0, 1))
    errors = law._quantile_errors(levels, values, coarse)
    smooth = ~np.isin(values, model.jumps) & ~np.isin(coarse, model.jumps)
    relative = np.where(smooth, errors / np.maximum(values, 1e-300), 0.0)
    return float(relative.max()) / _targets()[1]


def _refine(model, sols, order: int, failed: tuple[float, int] | None = None):
    """The IR grids: ``sols`` (``h``, ``h / 2``, ``h / 4``), one grid of step ``2 h`` ahead of them
    (half their cells, rounded up; for the guard of :func:`_guarded`; when it holds the atoms
    as nodes; where it is too coarse to solve, at least one finer grid, so that ``h`` guards),
    and finer grids
    (``h`` divided by a power of 2, grids already solved reused) until the estimated relative
    errors of the mean and the busy fraction are below ``_TARGET`` and those of the quantiles at
    :data:`_QUANTILE_LEVELS` below ``_QUANTILE_TARGET`` and (at the default goal) the finest
    step is at most ``model.resolve_above``, or the coarsest of the last three grids has
    ``_M_MAX`` cells (then the estimates say what was reached). The factor is chosen for an
    ``h^4`` rate of the mean and ``h^3`` of the quantiles (``h`` for ``order = 1``); if that was
    optimistic the loop refines again. Returns the last four grids (``2 h``, ``h``, ``h / 2``,
    ``h / 4``), or three, and whether the cell bound stopped the refinement. ``failed``: the
    ``(h, M)`` of a grid whose shoot failed (:func:`_solve_grids`), not shot again."""
    M, h = sols[0].F.size - 1, sols[0].h
    steps = [lat / h for lat in (model.lattice, model.kink_lattice) if lat is not None]
    steps = [j / 2 for j in steps if abs(j - round(j)) < 1e-9 * j]   # held as nodes
    unguarded = False   # the guard's grid too coarse to solve: one finer grid brings one
    # an odd count of cells (a memory bound such as 3971, or a horizon of an odd count of
    # lattice steps): the guard's grid reaches one step ``h`` further, where the tail is
    # below _TAIL (without it, S&X H2 X x {1, 10} at load 0.95 on 3971 cells had ended on
    # three grids, their estimates unguarded)
    half = (M + 1) // 2
    if all(abs(j - round(j)) < 1e-9 * j for j in steps):
        # too coarse for the runtime (S&X Uniform(0.087, 0.952) x {1, 2.4183} at load 0.9, 64
        # cells of 1.97; exponential X x {1, 10} w.p. .9, .1, Replication(5, 3) at 0.97 of its
        # frontier, 128 cells of 2.28: F(W) = 1 had no root, F(W) not monotone in F0): the
        # three grids solved stand, and one finer grid makes the coarsest of them the guard
        # (the estimates of three grids alone can vanish by accident). Not shot again where
        # _solve_grids saw it fail
        unguarded = (failed is not None and failed[1] == half
                     and abs(failed[0] / (2 * h) - 1) < 1e-9)
        try:
            if not unguarded:
                sols = [_shoot(model, 2 * h, half, sols[0].F0)] + sols
        except RemovalError:
            unguarded = True
    while True:
        M = sols[-3].F.size - 1
        means, idles = [_grid_mean(s) for s in sols], [s.F0 for s in sols]
        rough = model.rough
        mean, mean_error = _richardson(means[-3:], order, rough)
        idle, idle_error = _richardson(idles[-3:], order, rough)
        target = _targets()[0]
        scales = target * mean, target * max(1 - idle, 1e-300)
        ratio = mean_error / scales[0]
        guarded = _guarded(means, order, rough)[1] / scales[0]
        if not model.busy_exact:   # a busy fraction known exactly sets no target
            ratio = max(ratio, idle_error / scales[1])
            guarded = max(guarded, _guarded(idles, order, rough)[1] / scales[1])
        limit = model.max_cells
        if M >= limit:
            return sols, True
        quantiles = _quantile_excess(model, sols[-3:], order) if guarded <= 1 else 0.0
        # a step too coarse for the runtime's fastest part (_ROUGH_STEP_FASTEST): finer grids
        # within the cell bound, whatever the estimates say (they are not shown to hold there);
        # not under a coarser goal, whose first look it would cost 5 to 9 times (S&X Erlang(3)
        # x {0.1, 1, 10}, MDS(4, 1) at 0.6 of its frontier, goal 1e-2: 0.09 s, 0.68 s refined):
        # there the rough and unresolved estimates say what was reached. Where such grids are
        # refused (refuse_unresolved), to the step the refusal asks for, under any goal: the
        # first pass of smallest_matching_code at 1e-2 had been refused, pointing to
        # qt.grid_budget, where the cell bound allowed it (S&X X on {0.1, 2} times Erlang(2, 2),
        # Replication(2, 2); found in the final read)
        if goal() <= GOAL:
            coarse = sols[-1].h / model.resolve_above
        elif model.refuse_unresolved:
            coarse = sols[-1].h / model.unresolved_above
        else:
            coarse = 0.0
        if guarded <= 1 and quantiles <= 1 and coarse <= 1 and not (unguarded
                                                                     and len(sols) < 4):
            return sols, False
        # the factor from the last three grids (the guard reads a coarser, less regular one)
        power = (0.5 if rough else 0.25) if order == 2 else 1.0
        factor = 2 ** max(1, math.ceil(math.log2(max(
            max(ratio, 1.0) ** power,
            quantiles ** ((0.5 if rough else 1 / 3) if order == 2 else 1.0), coarse, 1.0))))
        factor = min(factor, 2 ** int(math.log2(limit / M)))
        if factor < 2:
            return sols, True
        h = sols[-3].h / factor
        for j in (0.5, 1, 2, 4):
            if not any(abs(s.h * j / h - 1) < 1e-9 for s in sols):
                # F0 extrapolated from the two finest grids so far (O(h^2) cancelled)
                a, b, step = sols[-2], sols[-1], h / j
                change = (a.F0 - b.F0) * (b.h ** 2 - step ** 2) / (a.h ** 2 - b.h ** 2)
                guess = b.F0 - change
                # S&X: one march with columns guess +- a fifth of the change (its error was
                # 1e-5 to 4e-4 relative, a twentieth of the change), see _shoot
                spread = 0.2 * abs(change) if model.one_march else 0.0
                sols.append(_shoot(model, step, round(M * factor * j), guess, spread))
                sols.sort(key=lambda s: -s.h)
        sols = [s for s in sols if any(abs(s.h * j / h - 1) < 1e-9 for j in (0.5, 1, 2, 4))]


def _grid_mean(sol: _Solution) -> float:
    """``int P(C > t) dt`` on one grid: trapezoid with one-sided limits at the nodes (and the
    jumps between the nodes, ``sol.mean_fix``: :meth:`_IRModel.node_sf`)."""
    return float(0.5 * sol.h * (sol.sf_right[:-1] + sol.sf_left[1:]).sum() + sol.mean_fix)


_FASTEST_LEVELS = np.array([0.0, 1e-9, 1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.15, 0.3, 0.5])
"""Pieces of ``[0, 1/2]`` for :func:`_fastest_mean`'s rule."""


def _fastest_mean(R: Distribution, below_median: bool = True) -> float:
    """The mean of the fastest part with a density of an IR runtime: of its fastest phase
    (:class:`HyperExponential`) or component (:class:`Mixture`, recursively; components on
    atoms left out: the grids place atoms exactly), else of ``R`` below its median,
    ``2 int_0^(1/2) F^-1(u) du`` (``inf`` for a law on atoms), or with ``below_median=False``
    its mean (the continuous slowdowns' scale, :class:`.removal_continuous._SXContinuousModel`).
    The frontier's grids are refined to resolve it (:meth:`_Front.resolve`), else their
    estimates are rough (:data:`_FRONT_ROUGH_STEP_FASTEST`). Below the median, not the mean: a
    lognormal(1) runtime (mean 1.65, mode 0.37) under MDS(20, 5) had its frontier 4.7e-4 off
    with 1.1e-4 stated on grids of step 0.82, and within its estimate on a step of 0.41."""
    if isinstance(R, HyperExponential):
        return min(1.0 / rate for prob, rate in zip(R.probs, R.rates) if prob > 0)
    if isinstance(R, Mixture):
        return min((_fastest_mean(c, below_median) for c, w in zip(R.components, R.weights)
                    if w > 0), default=math.inf)
    if R.discrete:
        return math.inf
    if not below_median:
        return R.mean()
    # Gauss-Legendre on pieces graded towards 0 (where F^-1 may be singular), the ppf in one
    # call: a threshold needs no more (quad over a root-finding ppf took 0.8 s, a product law)
    lo, hi = _FASTEST_LEVELS[:-1, None], _FASTEST_LEVELS[1:, None]
    u = 0.5 * (lo + hi) + 0.5 * (hi - lo) * _GL_NODES
    return float((R._ppf_all(u.ravel()).reshape(u.shape) * (hi - lo) * _GL_WEIGHTS).sum())


class _IRModel(_GridModel):
    """IR runtimes ``R``: the march of :func:`_march`, ``P(C > t) = Psi(q(t))``."""

    accept = 1e-7
    """Newton steps on ``F(0)`` below this (relative) end :func:`_shoot` (not ``_ACCEPT``: the
    linear interpolation to the root then leaves an error of order ``step^2`` times the march's
    curvature, which near the frontier reached 2e-8 of a p99, the same on every grid)."""

    @functools.cached_property
    def front_rough_above(self) -> float:
        """:data:`_FRONT_ROUGH_STEP_FASTEST` times :func:`_fastest_mean` (for the frontier
        only: computed when first asked for)."""
        return _FRONT_ROUGH_STEP_FASTEST * _fastest_mean(self.R)

    def __init__(self, kernel: _Kernel, R: Distribution):
        self.kernel, self.R = kernel, R
        self.scale = R.mean()
        self.kinks = _kinks(R)
        # the atoms (also those of a law with a density: a mixture with a Deterministic) are
        # nodes where they have a common step, and the grids are then second order
        self.masses = _masses(R)
        self.lattice = _lattice(R)
        # kinks of G are nodes too where they have a common step (with the atoms) not finer
        # than the coarsest grid's (see _solve_grids; else their cells are split: irregular
        # O(h^3) errors)
        self.breaks = tuple(sorted(set(self.kinks) | set(self.masses[0].tolist())))
        self.kink_lattice = _kink_lattice(self.breaks) if self.kinks else None
        # kinks without a common step (with each other and the atoms) have their cells split:
        # an irregular O(h^3) term that a seventh of the extrapolations' difference can miss
        # (IR Uniform(1.282, 2.947), M/G/1 at load 0.58: 1.4e-6 off Pollaczek-Khinchine with
        # 1.0e-7 stated); the whole difference is taken (over 16 random uniform laws at most
        # 0.78 of it, the errors themselves smaller: the refinement goes further)
        self.rough = bool(self.kinks) and self.kink_lattice is None
        # atoms without a common step (or a law that does not know them) fall between nodes:
        # first order, reported as such; an atom at 0 is a node of every grid
        known = R._point_masses() if R._has_atoms else None
        self.has_atoms = R._has_atoms and (known is None or bool(np.any(known[0] > 0)))
        # the shortest runtime (a batch takes at least that long), and where P(C > t) jumps
        self.lower, self.jumps = max(float(R._support()[0]), 0.0), self.masses[0]
        # a law on (few) atoms: those between the nodes are placed exactly (_Between), a
        # second-order march; its O(h^2) term is irregular (kinks of f where the jumps' cells
        # are read, wherever they fall in a cell): the rough estimates
        self.between = (R.atoms is not None and self.masses[0].size <= _JUMPS_MAX
                        and kernel.phi_form() is not None)
        if self.between and self.lattice is None:
            self.rough = True
        self.read_stretched = not self.between
        # a density x^a at 0, a not an integer below 1 (_power_at_zero): an h^(2 + a) term
        power = _power_at_zero(R)
        if power is not None and power < 1:
            self.rough = True
        if not R.discrete:
            self.coarse_above = self.resolve_above = _COARSE_STEP_MEAN * self.scale
        self.stalls = power is not None and power < 0

    def _between(self, h: float, M: int) -> _Between | None:
        return _Between(*self.masses, h, M) if self.between else None

    def shifted_steps(self, sol: _Solution) -> tuple[float, float] | None:
        """Of the atoms between the nodes: placed exactly (:class:`_Between`), an irregular
        ``O(h^2)`` term; else (a law with a density too, or more than ``_JUMPS_MAX`` atoms) a
        first-order error, irregular in ``h`` alike, that the grids' differences can miss
        (0.45 at 1, 0.45 at 1.0973 and 0.1 exponential(3), M/G/1 at load 0.97: 7.9e-5 off
        Pollaczek-Khinchine with 6.0e-5 stated from twice the last difference alone)."""
        jumps = self._jumps_of(sol)
        if jumps is not None:
            return _shifted_steps(jumps[0].b, jumps[0].mass, sol.h)
        if self.between:
            return None
        values, probs = self.masses
        inside = values < sol.h * (sol.F.size - 1)
        return _shifted_steps(values[inside], probs[inside], sol.h)

    def _jumps_of(self, sol: _Solution) -> tuple[_Between, np.ndarray] | None:
        """The atoms between the nodes of ``sol``'s grid and their ``J``, or None."""
        if not self.between or not sol.extra or not sol.extra[0].size:
            return None
        return self._between(sol.h, sol.F.size - 1), sol.extra[0]

    def _reading(self, sol: _Solution):
        """``between`` of :func:`_evaluate_F` for ``sol``."""
        jumps = self._jumps_of(sol)
        return None if jumps is None else (jumps[0].cell, jumps[0].theta, jumps[1])

    def marcher(self, h: float, M: int):
        weights = _Weights(self.R, h, M, self.kinks)
        between = self._between(h, M)
        geometry = None if between is None or not between.b.size else between.arrays()
        return lambda cols: _march(self.kernel, weights, h, M, cols, geometry)

    def node_sf(self, sol: _Solution):
        """``P(C > t^-)``, ``P(C > t)`` at the nodes; with atoms between the nodes, also
        ``sol.mean_fix``: what the trapezoid of :func:`_grid_mean` misses of ``P(C > t)``'s jump
        at each, ``D h (1/2 - theta)`` (``D`` the jump, ``-`` to ``+``)."""
        jumps = self._jumps_of(sol)
        if jumps is not None:
            geometry = jumps[0]
            right = self.sf_at(sol, geometry.b, q=True)   # F(b - b) = F(0): the right limit
            D = (self.kernel.batch_sf(right)
                 - self.kernel.batch_sf(right - sol.F0 * geometry.mass))
            sol.mean_fix = float(D @ (sol.h * (0.5 - geometry.theta)))
        return self.kernel.batch_sf(sol.q_left), self.kernel.batch_sf(sol.q_right)

    def sf_at(self, sol: _Solution, t: np.ndarray, cubic: bool = False,
              q: bool = False) -> np.ndarray:
        """``P(C > t)`` at the times ``t >= 0`` (a 1-d array; ``q(t)`` with ``q``); for a law on
        atoms ``q(t) = sum_{x_k <= t} p_k F(t - x_k)``, ``F`` off the nodes by the march's
        quadratic of the cell (what :func:`_q_at` integrates; with the jumps of atoms between
        the nodes) or by :func:`_F_cubic`."""
        values, probs = self.masses
        if self.R.atoms is None:
            q_t = _q_at(sol, self.R, t, self.breaks)
        else:
            z = np.minimum(t[:, None] - values, sol.h * (sol.F.size - 1))
            F, _ = _evaluate_F(sol.F, sol.f_right, sol.f_left, sol.h, z,
                               between=self._reading(sol))
            q_t = F @ probs
        if q:
            return q_t
        if cubic and values.size:
            # the atoms' share of q, p_k F(t - x_k), with F off the nodes by cubics instead
            z = np.minimum(t[:, None] - values, sol.h * (sol.F.size - 1))
            F, _ = _evaluate_F(sol.F, sol.f_right, sol.f_left, sol.h, z,
                               between=self._reading(sol))
            cubics = np.where(z < 0, 0.0, _F_cubic(sol, np.maximum(z, 0.0), self.lattice))
            q_t = q_t + (cubics - F) @ probs
        return self.kernel.batch_sf(q_t)

    def interpolation_gap(self, sol: _Solution, t: np.ndarray) -> np.ndarray | None:
        if not self.masses[0].size:
            return None
        return np.abs(self.sf_at(sol, t) - self.sf_at(sol, t, cubic=True))

    @staticmethod
    def tails(sol: _Solution) -> tuple[float, float]:
        """What the horizon ``W`` leaves out, at ``W`` and at ``W / 2`` (for the rate): the
        larger of ``P(V > 3 W / 4)`` (the mass of ``(3 W / 4, W]``: ``F(W) = 1`` is imposed) and
        ``P(C > W)``, and the same half a horizon earlier. ``1 - q(W)`` would also hold the tail
        of ``R`` itself, which removal cuts off: long-tailed runtimes (Pareto) have a workload
        and a batch time with much lighter tails than theirs when tasks are removed."""
        M = sol.F.size - 1
        return tuple(max(1.0 - float(sol.F[j]), float(sol.sf_left[j + M // 4]))
                     for j in (3 * M // 4, M // 4))


# ------------------------------------------------------------------------ the batch law
_SF_FLOOR = 1e-13
"""Absolute accuracy of the grids' ``1 - q(t)`` taken in the error estimates of quantiles
beyond a tail of ``_SF_FLOOR_TAIL`` (:meth:`RemovalBatchTime._quantile_errors`; measured
about 2e-14), at least; times the slope of ``P(C > t)`` in ``1 - q`` there (``n`` for ``MDS(n,
0)`` and ``Replication(n, 1)``, whose ``P(C > t)`` is about ``n (1 - q)``)."""
_SF_FLOOR_CELL = 2e-17
"""...and this per cell of the finest grid: the normalisation ``F(W) = 1`` over longer
marches leaves an offset growing with the cells (found by review, against the exact
Pollaczek-Khinchine sojourn law by residues: IR HyperExponential runtimes of squared
coefficient of variation 25, M/G/1 at load 0.9, ``P(C > t)`` -3.2e-13 off through its tail on
65536 cells, the p(1 - 1e-7) 1.25 times beyond its estimate; Erlang(2) at 0.9 on 8192, -2.6e-14;
``MDS(20, 0)`` of the latter, -5.2e-13 on the batch's ``P(C > t)`` about ``20 (1 - q)``, its
p(1 - 1e-7) 3.3 times beyond its estimate and deeper levels up to 8.9 times)."""
_SF_FLOOR_TAIL = 1e-4
"""Tails below which the quantiles' estimates take the floors :data:`_SF_FLOOR` and
:data:`_SF_FLOOR_CELL` (times :meth:`RemovalBatchTime._tail_slope`), beyond the levels the
grids are refined for (:data:`_QUANTILE_LEVELS`). From 1e-6 on, the p(1 - 1e-6) of IR
HyperExponential runtimes of squared coefficient of variation 9, ``MDS(5, 0)`` at load 0.9,
had been 4.3 times beyond its estimate, ``P(C > t)`` -3.1e-13 off there on 32768 cells."""
_HELD_TAIL = 1e-14
"""The smallest ``1 - q(t)`` whose quantiles carry a finite error estimate (the horizon is
placed where the workload's tail at ``3 W / 4`` falls below ``_TAIL``, 1e-12, and the grids'
``P(C > t)`` is followed a quarter of the horizon further). Beyond, the estimate is infinite:
found by review against the exact sojourn laws, with the floors of ``_SF_FLOOR`` and
``_SF_FLOOR_CELL`` 3 of 149 quantiles at levels ``1 - 1e-6`` to ``1 - 1e-15`` were beyond
their estimates, all where ``1 - q`` is below 1e-14 (``MDS(20, 0)``, IR Erlang(2) at load
0.9: the quantiles at ``1 - 1e-14`` and ``1 - 1e-15``, 1.3 and 1.9 times, the latter where the
grids' ``P(C > t)`` had reached 0; a hyperexponential runtime, M/G/1 at 0.9, at ``1 -
1e-15``, 1.5 times); those from 1e-14 on were within them."""
_SF_BODY_FLOOR = 2e-14
"""The measured accuracy of the grids' ``P(C > t)``, taken in the body (where the difference
of the extrapolations dominates, but can fall just short: IR {1, 100} w.p. .99, .01 at load
0.5, the p99.9 was 3.661e-9 off with 3.653e-9 stated, found by a review)."""


class RemovalBatchTime(BatchCompletionTime):
    """Batch completion time from the workload equation on grids (``Prediction.response_time``
    with removal, and without removal for IR runtimes with atoms): ``P(C > t)``
    Richardson-extrapolated from the grids ``h / 2`` and ``h / 4``; quantiles by Brent's method
    between the nodes of the coarsest grid, each with an error estimate
    (``ppf(q, full_output=True)``, :meth:`~queuetheory.ResponseLaw.quantile_error`); double
    precision only (``precision=`` raises ``NotImplementedError``).

    Examples
    --------
    >>> import queuetheory as qt
    >>> p = qt.analyze(qt.System(qt.MDS(4, 2), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
    >>> T = p.response_time
    >>> bool(T.sf(T.quantile(0.99)) <= 0.01 + 1e-9)
    True
    """

    def __init__(self, model, sols, mean: float, order: int = 2, rule_error=None,
                 mean_error: float | None = None, rough: bool = False,
                 unresolved: bool = False, coarse: int = 0):
        self._model, self._sols, self._mean_value = model, sols, mean
        # the rough estimates (model.rough, or a step too coarse: grid_prediction), and grids
        # too coarse for the runtime's fastest part or not shown to be in their h^2 regime
        # (grid_prediction): the quantiles' estimates at least twice the last difference of
        # the grids (_quantile_errors)
        self._rough, self._unresolved = rough or model.rough, unresolved
        # a step beyond model.coarse_above (grid_prediction): the larger of the last `coarse`
        # differences of the grids (twice, with the factor of the rough estimates)
        self._coarse = coarse
        # (nodes, error of P(C > t) there, the checks, the finest grid's solution, the doubled
        # rule on the grid before it or None) of the rule over a continuous X, or None
        self._order, self._rule_error = order, rule_error
        # the shortest possible runtime of a task (a batch takes at least that long), and
        # where P(C > t) jumps (q does, by the atom of V at 0 times an atom of the runtime)
        self._lower, self._jumps = model.lower, model.jumps
        # the mean's relative error estimate, a floor of the quantiles' (_quantile_errors)
        self._mean_floor = (mean_error / mean if mean_error is not None and mean > 0
                            else 0.0)
        edges = sols[0].h * np.arange(sols[0].F.size)
        super().__init__(self._extrapolated_sf, mean, edges=edges)

    def _tail_slope(self) -> float:
        """The slope of ``P(C > t)`` in ``1 - q`` at a tail of :data:`_SF_FLOOR_TAIL` (at least
        1; about ``n`` for ``MDS(n, 0)`` and ``Replication(n, 1)``): what an error of the
        grids' ``1 - q`` makes of ``P(C > t)``'s in the tail."""
        u = _SF_FLOOR_TAIL
        batch = self._model.kernel.batch_sf_p(np.array([u, 2 * u]))
        return max(1.0, float(batch[1] - batch[0]) / u)

    _label = "RemovalBatchTime (workload level-crossing equation on three grids)"
    _accuracy = ("its double-precision values are Richardson-extrapolated from grids h, h/2, "
                 "h/4, with error estimates of the quantiles (ppf(q, full_output=True)) and of "
                 "the mean (Prediction.errors)")

    def __repr__(self):
        return f"RemovalBatchTime(mean={self._mean_value!r})"

    def _grid_sf(self, t: np.ndarray) -> np.ndarray:
        """``P(C > t)`` on each grid, shape ``(3, t.size)``."""
        out = np.ones((len(self._sols), t.size))
        inside = t >= 0
        for j, sol in enumerate(self._sols):
            out[j, inside] = self._model.sf_at(sol, t[inside])
        return out

    def _extrapolated_sf(self, t, coarser: int = 0):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        value = np.clip(self._combine(self._grid_sf(t), coarser), 0.0, 1.0)
        # Markov's bound E[C] / t, which a rounding floor far out can cross (the numpy S&X
        # path, Redundancy-2: P(C > t) = (1 - q)^2 = 1.6e-32 with q one ulp below 1)
        with np.errstate(divide="ignore", over="ignore"):   # t = 0, subnormal t: no bound
            return np.minimum(value, np.where(t > 0, self._mean_value / t, 1.0))

    def _moment(self, k):
        return self._mean_value if k == 1 else super()._moment(k)

    def _node_sf(self, coarser: int = 0) -> np.ndarray:
        """Extrapolated ``P(C > t)`` at the coarsest grid's nodes, from the node arrays."""
        s = [sol.sf_right[::2 ** j] for j, sol in enumerate(self._sols)]
        return np.clip(self._combine(s, coarser), 0.0, 1.0)

    def _combine(self, s, coarser: int):
        """Richardson extrapolation of per-grid values (none when ``order == 1``) from the
        finest grids (``coarser = 0``) or ``coarser`` grids coarser (1; with ``order == 1`` also
        2: the coarsest grid's values)."""
        if self._order == 1:
            return s[2 - coarser]
        return (4 * s[1] - s[0]) / 3 if coarser else (4 * s[2] - s[1]) / 3

    def _ppf(self, q):
        return self._quantile_sets(q, (0,))[0]

    def _fast_quantile(self, q: np.ndarray, errors: bool):
        if not errors:
            return super()._fast_quantile(q, False)
        values, coarse = self._quantile_sets(q, (0, 1))
        values = np.maximum(values, 0.0)
        return values, self._quantile_errors(q, values, coarse)

    def _quantile_sets(self, q, variants: tuple) -> list:
        """Quantiles at the levels ``q`` of the extrapolation from the finest grids (``coarser``
        0) and from the grids one step coarser (1; two steps: 2, with ``order == 1``), one array
        per entry of ``variants``: each root bracketed by the coarsest grid's nodes, all of them
        refined together (:meth:`_roots`)."""
        q = np.asarray(q, dtype=float)
        levels = q.ravel()
        out = np.empty((len(variants), levels.size))
        brackets = []   # (variant, index, lo, hi, target)
        for v, coarser in enumerate(variants):
            nodes = self._node_sf(coarser)
            for i, level in enumerate(levels):
                target = 1.0 - level
                j = int(np.argmax(nodes <= target))
                if j == 0 and nodes[0] <= target:
                    out[v, i] = 0.0
                elif nodes[j] > target:   # beyond the last node (levels are in (0, 1) here)
                    out[v, i] = float(super()._ppf(np.array([level]))[0])
                else:
                    brackets.append((v, i, self._edges[j - 1], self._edges[j], target))
        if brackets and getattr(self._model, "pieces", None) is not None:
            # P(C > t) split at each time (continuous slowdowns: split_rule) is not the nodes'
            # rippled one: each bracket moved until it holds the root of the former
            brackets = [self._bracket(variants[b[0]], *b) for b in brackets]
        if brackets:
            v, i, lo, hi, target = (np.array(column) for column in zip(*brackets))
            coarser = np.array(variants, dtype=int)[v]
            roots = self._roots(lo, hi, target, coarser)
            # a jump of P(C > t) between nodes: a root within the roots' tolerance of it is
            # the jump if P(C > t) at the jump (its right limit) is already at most the target
            # (a level just above the jump's top has its root just beyond it)
            jump = np.full(roots.size, np.nan)
            for k, root in enumerate(roots):
                near = np.abs(self._jumps - root) <= 1e-12 * root
                if near.any():
                    jump[k] = self._jumps[near][0]
            check = np.flatnonzero(~np.isnan(jump))
            if check.size:
                on = self._excess(jump[check], target[check], coarser[check]) <= 0
                roots[check[on]] = jump[check[on]]
            out[v, i] = roots
        # a batch takes at least the shortest runtime; the roots' tolerance (1e-14 relative)
        # must not make quantiles at nearby levels decrease
        order = np.argsort(levels, kind="stable")
        sets = []
        for row in out:
            flat = np.maximum(row, self._lower)
            flat[order] = np.maximum.accumulate(flat[order])
            sets.append(flat.reshape(q.shape))
        return sets

    def _bracket(self, coarser: int, v: int, i: int, lo: float, hi: float,
                 target: float) -> tuple:
        """The bracket ``(v, i, lo, hi, target)`` of :meth:`_quantile_sets` moved along the
        nodes (:attr:`_edges`) until ``P(C > lo) > target >= P(C > hi)`` on the extrapolation
        ``coarser`` evaluated between the nodes (:meth:`_excess`), or an end is reached."""
        edges = self._edges
        j = int(np.searchsorted(edges, hi))

        def excess(k):
            return self._excess(np.array([edges[k]]), np.array([target]), np.array([coarser]))[0]

        while j > 1 and excess(j - 1) <= 0:
            j -= 1
        while j < edges.size - 1 and excess(j) > 0:
            j += 1
        return v, i, edges[j - 1], edges[j], target

    def _excess(self, t: np.ndarray, target: np.ndarray, coarser: np.ndarray) -> np.ndarray:
        """``P(C > t) - target`` elementwise, each from its own extrapolation (``coarser``)."""
        s, coarser = self._grid_sf(t), np.asarray(coarser, dtype=int)
        value = np.choose(coarser, [self._combine(s, j) for j in range(int(coarser.max()) + 1)])
        return np.clip(value, 0.0, 1.0) - target

    def _roots(self, lo, hi, target, coarser) -> np.ndarray:
        """The smallest ``t`` in ``(lo, hi]`` with ``P(C > t) <= target`` (to ``1e-14``
        relative), elementwise: Chandrupatla's method (inverse quadratic interpolation where
        the last three points allow it, else bisection, each point at least the tolerance
        inside the bracket), all roots refined together. ``hi`` itself where ``P(C > t)`` is
        still above ``target`` at ``hi`` (a jump at the node: atoms of the runtime are nodes
        of every grid); ``lo`` where it is already at most ``target`` at ``lo`` (a level at the
        top of a jump at ``lo``, which the node values and ``sf_at`` may place on either side
        of it by a rounding).

        References: T. R. Chandrupatla, "A new hybrid quadratic/bisection algorithm for
        finding the zero of a nonlinear function without using derivatives", Advances in
        Engineering Software 28 (1997) 145-149."""
        x1, x2 = hi.astype(float), lo.astype(float)
        f1, f2 = self._excess(x1, target, coarser), self._excess(x2, target, coarser)
        bracketed = (f1 <= 0) & (f2 > 0)
        active = bracketed.copy()
        x3, f3 = x2.copy(), f2.copy()
        step = np.full(x1.size, 0.5)
        for _ in range(200):
            tolerance = 5e-15 * np.maximum(x1, x2) / np.abs(x2 - x1)
            active &= tolerance < 0.5
            if not active.any():
                break
            k = np.flatnonzero(active)
            x = x1[k] + np.clip(step[k], tolerance[k], 1 - tolerance[k]) * (x2[k] - x1[k])
            g = self._excess(x, target[k], coarser[k])
            # the new point and the end of the other sign bracket the root; the end dropped
            # (or the old x1) is kept as the third point
            same = (g > 0) == (f1[k] > 0)
            x3[k] = np.where(same, x1[k], x2[k])
            f3[k] = np.where(same, f1[k], f2[k])
            x2[k] = np.where(same, x2[k], x1[k])
            f2[k] = np.where(same, f2[k], f1[k])
            x1[k], f1[k] = x, g
            with np.errstate(divide="ignore", invalid="ignore"):
                xi = (x1[k] - x2[k]) / (x3[k] - x2[k])
                phi = (f1[k] - f2[k]) / (f3[k] - f2[k])
                quadratic = (f1[k] / (f2[k] - f1[k]) * f3[k] / (f2[k] - f3[k])
                             + (x3[k] - x1[k]) / (x2[k] - x1[k])
                             * f1[k] / (f3[k] - f1[k]) * f2[k] / (f3[k] - f2[k]))
            usable = (phi ** 2 < xi) & ((1 - phi) ** 2 < 1 - xi) & np.isfinite(quadratic)
            step[k] = np.where(usable, quadratic, 0.5)
        # the end at which P(C > t) <= target; unbracketed: hi if P(C > hi) > target, else lo
        return np.where(bracketed, np.where(f1 > 0, x2, x1), np.where(f1 > 0, x1, x2))

    def _quantile_errors(self, q, values, coarse=None):
        """The difference between the quantiles of the extrapolations from grids (``h / 2``,
        ``h / 4``) and (``h``, ``h / 2``), that is the error of the coarser one, a bound of the
        reported one's wherever halving ``h`` at least halves the error (a third of it covered
        too little next to the jumps of atoms: measured against the delay equation in
        ``tests/test_removal.py``); twice the difference between the ``h / 4`` and ``h / 2``
        grids when atoms of ``R`` lie between the nodes. Added, over the density: the rule
        over a continuous ``X`` (its change when doubled, near ``t`` and at ``t``), and for
        runtimes on atoms the error of reading ``F`` between the nodes: twice its leading-order
        bound from :meth:`_GridModel.interpolation_gap` (see the comment below)."""
        if coarse is None:
            coarse = self._quantile_sets(q, (1,))[0]
        # (plus the roots' tolerance, 1e-14 relative: a level just above a jump's top was 7e-15
        # off at 1.0 with 4.5e-15 stated)
        # twice with an irregular O(h^2) term too (model.rough: the two extrapolations can
        # agree by chance; IR on {1, e}, MDS(4, 2) at rate 0.375: a p99 3.18e-8 off the method
        # of steps where they differed by 3.0e-8), and on grids refined for a coarse accuracy
        # goal (see grid_prediction)
        factor = 2 if self._order == 1 or self._rough else 1
        errors = np.abs(values - coarse) * factor + 1e-14 * values
        if self._order == 1:
            # first order, but irregular: the error on each grid depends on where the atoms
            # fall in its cells, and two grids can err alike (IR {1, 1.0973}, M/G/1 at load
            # 0.6: the p50 9.51e-5 off on the h / 4 grid, 9.50e-5 on h / 2, 2.3e-7 stated; on
            # h, -8.0e-4): also the difference of the two coarser grids (at h / 2, half of it)
            errors = np.maximum(errors, np.abs(coarse - self._quantile_sets(q, (2,))[0]))
        times = np.atleast_1d(np.asarray(values, dtype=float)).ravel()
        # errors of P(C > t) the difference above does not see, each turned into one of the
        # quantile by the density (the smaller one-sided difference over the coarsest step,
        # below)
        extra = np.zeros(times.size)
        if self._rule_error is not None:
            # the rule over X moves P(C > t) by up to its error at the nodes around t (two
            # steps of that grid either side), or at t itself, where it may be larger (S&X,
            # Uniform(1, 3) x {1, 2, 5}: 1.2e-9 at a p50, 2.4e-10 at the nodes around it)
            nodes, rule, checks, base, coarser = self._rule_error
            step = nodes[1] - nodes[0]
            # a rule split at each time (continuous slowdowns whose G kinks: split_rule) is not
            # the nodes' rule, whose P(C > t) ripples: its change at t and two steps either side
            split = getattr(self._model, "pieces", None) is not None
            probe = (np.maximum(times[None, :] + step * np.arange(-2.0, 3.0)[:, None], 0.0)
                     .ravel() if split else times)
            at_base = self._model.sf_at(base, probe)
            moved = [[check.sf_at(d, probe) - at_base for d in solved] for check, solved in checks]
            changes = [np.max(np.abs(m), axis=0) for m in moved]
            if coarser is not None:
                # the extrapolation's change, from the grid before the finest too (as for the
                # mean, grid_prediction); the doubled rule is the first check
                doubled, doubled_before, before = coarser
                changes[0] = np.maximum(changes[0], np.abs(_extrapolated_change(
                    moved[0][0], doubled.sf_at(doubled_before, probe)
                    - self._model.sf_at(before, probe))))
            at_t = 2 * sum(changes)
            if split:
                extra += at_t.reshape(-1, times.size).max(axis=0)
            else:
                for i, t in enumerate(times):
                    near = rule[(nodes >= t - 2 * step) & (nodes <= t + 2 * step)]
                    extra[i] += max(float(near.max()) if near.size else float(rule.max()),
                                    at_t[i])
        gaps = ([self._model.interpolation_gap(sol, times) for sol in self._sols[1:]]
                if self._order == 2 else [None])
        if gaps[0] is not None:
            # off the nodes the quadratic of a cell errs by O(h^3) depending on where t - x
            # falls in the cell: a term the extrapolation cannot remove, and a difference of
            # two extrapolations can miss (M/D/1 at load 0.3: a p90 9.6e-9 off, 4.4e-9
            # stated). Its size on each grid is about that of the gap to a cubic interpolation;
            # in the extrapolation (4 s_{h/4} - s_{h/2}) / 3 at most (4 gap_{h/4} + gap_{h/2})
            # / 3, taken twice (the gap estimates the error to leading order only: for
            # Deterministic(1), MDS(17, 3) at 0.255 the p99's sf erred by 1.06 times the bound,
            # and with the idle fraction's error the p99 was 1.05e-7 off, 8.8e-8 stated)
            extra += 2 * (4 * gaps[1] + gaps[0]) / 3
        # the grids' P(C > t) is read to about 1e-14 absolute (rounding over thousands of
        # nodes, the normalisation F(W) = 1): beyond tails of about 1e-9 that dominates (the
        # largest of three M/D/1 sojourns, load 0.3: at 1 - 1e-12, 7.4e-3 off with 6.5e-3 stated,
        # about 2e-14 of P(C > t) over the density; Erlang's formula in mpmath); taken in the
        # tail only (in the body the grids' differences dominate, and at the top of a jump the
        # floor over the density there had doubled an exact quantile's estimate of 3e-14)
        tail = 1.0 - np.atleast_1d(np.asarray(q, dtype=float)).ravel()
        slope = self._tail_slope()
        floor = max(_SF_FLOOR, _SF_FLOOR_CELL * (self._sols[-1].F.size - 1)) * slope
        extra += np.where(tail < _SF_FLOOR_TAIL, floor, _SF_BODY_FLOOR)
        # and the march's rounding near load 1 (_GridModel.sf_floor_squared)
        extra += self._model.sf_floor_squared / max(self._sols[-1].F0, 1e-3) ** 2
        h = self._sols[0].h
        # the two extrapolations' P(C > t) at t +- h / 2 and t +- h too: their difference
        # changes sign within a cell (where t falls in it), and at t it can be small by chance
        # (a mixture 0.3 Deterministic(2) + 0.7 Exponential(2), M/G/1 at load 0.7: the p10 was
        # 8.5e-9 off with 6.4e-9 stated, the delay equation's power series in mpmath). Not at
        # a jump: a level inside it has the jump itself as its quantile on both extrapolations
        shifts = np.array([-1.0, -0.5, 0.5, 1.0])
        around = np.maximum(times[None, :] + h * shifts[:, None], 0.0).ravel()
        grids = self._grid_sf(around)
        window = np.abs(self._combine(grids, 0) - self._combine(grids, 1))
        if self._order == 1:   # and half that of the two coarser grids (as above)
            window = np.maximum(window, 0.5 * np.abs(grids[1] - grids[0]))
        elif self._unresolved:   # and the last difference of the grids (grid_prediction)
            window = np.maximum(window, np.abs(grids[-1] - grids[-2]))
        if self._coarse and self._order == 2:   # twice them, as for the mean
            window = np.maximum(window, np.abs(np.diff(grids[-self._coarse - 1:], axis=0)).max(
                axis=0) * (2 / factor))
        window = window.reshape(shifts.size, times.size).max(axis=0)
        window[np.isin(times, self._jumps)] = 0.0
        # the density over [t - h, t + h], shrunk to halfway to the nearest jump on either side
        # (across one, the jump inflated it: S&X X on {0.5, U(1, 2.3), 3} times {1, 3}, just
        # above the jump at 9, a p50 1.18e-5 off with 1.05e-5 stated, the density 3 times too
        # large)
        left, right = around[:times.size], around[-times.size:]
        jumps = np.sort(np.asarray(self._jumps, dtype=float))
        if jumps.size:
            below = np.searchsorted(jumps, times, side="left") - 1
            above = np.searchsorted(jumps, times, side="right")
            left = np.where(below >= 0, np.maximum(left, 0.5 * (times + jumps[np.maximum(
                below, 0)])), left)
            right = np.where(above < jumps.size, np.minimum(right, 0.5 * (times + jumps[
                np.minimum(above, jumps.size - 1)])), right)
        sf = self._extrapolated_sf(np.concatenate([left, times, right]))
        low, mid, high = sf[:times.size], sf[times.size:-times.size], sf[-times.size:]
        density = (low - high) / (right - left)
        # the smaller of the one-sided densities, where the slope of P(C > t) bends between
        # them (S&X Uniform(0.5, 1.5) x {1, 10}, MDS(2, 1) at 0.1 of its frontier: just past
        # t = 15, the top of 10 X, where the density falls about thirtyfold, a p99.9986 3.2e-5
        # off with 2.2e-6 stated; found by an independent audit); not at a jump, whose
        # quantiles both extrapolations have exactly (the central difference is the two sides'
        # mean weighted by their widths, never below the smaller). A side narrower than a
        # quarter of the step (shrunk next to a jump) or without a fall is left out: its
        # difference is rounding
        quarter = 0.25 * h
        with np.errstate(divide="ignore", invalid="ignore"):
            sides = np.minimum(
                np.where((times - left >= quarter) & (low > mid), (low - mid) / (times - left),
                         np.inf),
                np.where((right - times >= quarter) & (mid > high),
                         (mid - high) / (right - times), np.inf))
        density = np.where(np.isin(times, self._jumps) | ~np.isfinite(sides), density, sides)
        with np.errstate(divide="ignore"):
            errors = np.where(density > 0, np.maximum(errors.ravel(), factor * window / density)
                              + extra / density, math.inf)
        if self._mean_floor:
            # the two extrapolations can share an error, a shift in time their difference
            # does not see: at least the mean's relative estimate, which integrates P(C >
            # t)'s. On grids solved for a coarser goal, often not yet in their h^2 regime
            # (held out, 72 M/G/1 systems at goal 1e-2, IR and S&X, against the Random
            # system's inversion: four of 360 quantiles beyond their estimates, up to 7.4
            # times, an S&X p99 1.4e-5 off with 1.9e-6 stated; an S&X hyperexponential job
            # size x five slowdowns at load 0.9, every quantile about 2e-5 off, a median 2.24
            # times its estimate; with the floor none, at most 0.51); and at the default goal
            # (S&X gamma(5) x {1, 8} at load 0.9, MDS(1, 0): the p50 and p90 3.2e-8 and
            # 8.7e-9 relative off, 2.1 times their estimates, both extrapolations and the
            # mean off by about -4.6e-6; over 192 S&X M/G/1 systems, 3 of 960 quantiles beyond
            # their estimates, up to 2.1 times, none with the floor, at most 0.89).
            # Not at the shortest runtime or on a jump: both extrapolations have it exactly
            exact = (times <= self._lower) | np.isin(times, self._jumps)
            errors = np.where(exact, errors, np.maximum(errors, self._mean_floor * times))
        # tails below what the horizon holds (P(C > t) where 1 - q is _HELD_TAIL): the grids
        # carry no information there
        held = float(self._model.kernel.batch_sf_p(np.array([_HELD_TAIL]))[0])
        errors = np.where(tail < held, math.inf, errors.ravel())
        return errors.reshape(np.shape(values))


# ------------------------------------------------------------------------ exponential runtimes
class _ExponentialClosedForm:
    """IR exponential(``mu``) runtimes: ``q' = mu (F - q)`` and ``F' = lam_t (F - q) phi(q)`` give
    ``F(q) = 1 - lam / mu + (lam_t / mu) Phi(q)`` with ``Phi(q) = int_0^q phi``:
    ``E[min(Binomial(N, q), n)] / N`` (MDS), ``(1 - (1 - q)^d) / d`` (replication). In
    ``p = 1 - q`` (accurate in the tail): ``F - q = p - (lam_t / mu) (Phi(1) - Phi(1 - p))``,
    the time at which ``p`` is reached is ``t(p) = int_p^1 dx / (mu (F - q)(x))``, so
    ``E[C] = int_0^1 P(C > t(p)) dp / (mu (F - q)(p))`` and quantiles invert ``P(C > t(p))``.
    Integrals in ``u = -log p`` (bounded integrand), adaptive Gauss-Kronrod."""

    def __init__(self, kernel: _Kernel, mu: float, lam: float):
        self.kernel, self.mu, self.lam = kernel, mu, lam

    def gap(self, p: float, q: float | None = None) -> float:
        """``mu (F - q)`` at ``q = 1 - p``, > 0 for ``p`` in (0, 1]: from the tail form for
        ``p <= 1/2``, else ``(mu - lam) + lam_t Phi(q) - mu q`` (no cancellation near the
        frontier, where ``mu - lam`` is tiny)."""
        k = self.kernel
        if (k.mds and k.r == 0) or (not k.mds and k.r == 1):   # M/M/1 queues: exactly
            return (self.mu - self.lam) * p
        if p > 0.5:
            q = 1.0 - p if q is None else q
            if k.mds:
                j = np.arange(1, k.n + 1)
                head = float(special.bdtrc(j - 1, k.tasks, q).sum()) / k.tasks
            else:
                head = -math.expm1(k.r * math.log1p(-q)) / k.r
            return (self.mu - self.lam) + (k.lam_t * head - self.mu * q)
        if k.mds:
            j = np.arange(1, k.n + 1)
            tail = float(special.bdtrc(k.tasks - j, k.tasks, p).sum()) / k.tasks
        else:
            tail = p ** k.r / k.r
        return self.mu * p - k.lam_t * tail

    def _dt(self, u: float) -> float:
        k = self.kernel
        if (k.mds and k.r == 0) or (not k.mds and k.r == 1):   # M/M/1 queues: p / gap
            return 1.0 / (self.mu - self.lam)
        p = math.exp(-u)
        if p < 1e-300:  # the limit of p / gap as p -> 0
            return 1.0 / self.mu
        return p / self.gap(p, -math.expm1(-u))

    def _cuts(self, top: float) -> list:
        """Break points in ``u`` up to ``top``: near ``u = 0`` the integrand ``p / gap`` peaks
        with width ``1 - lam / mu`` and decays like ``1 / u`` beyond (decades from there)."""
        slack = 1.0 - self.lam / self.mu
        decades = [slack * 10.0 ** k for k in range(-2, 40) if slack * 10.0 ** k < 1.0]
        inner = decades + [1.0, 4.0, 16.0, 64.0]
        return [0.0] + sorted(c for c in set(inner) if c < top) + [top]

    def time(self, u: float) -> float:
        """``t(p)`` at ``p = exp(-u)``."""
        return self.integral(0.0, u)

    def integral(self, a: float, b: float) -> float:
        """``t(exp(-b)) - t(exp(-a))`` for ``0 <= a <= b``: the quadrature split at the break
        points of :meth:`_cuts` between them."""
        cuts = [a] + [c for c in self._cuts(b) if a < c < b] + [b]
        return sum(integrate.quad(self._dt, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
                   for lo, hi in zip(cuts[:-1], cuts[1:]))

    def mean(self) -> float:
        k = self.kernel
        pieces = self._cuts(745.0)
        return sum(integrate.quad(lambda u: float(k.batch_sf_p(np.array(math.exp(-u))))
                                  * self._dt(u), a, b, epsabs=1e-16 / self.mu, epsrel=1e-13,
                                  limit=200)[0]
                   for a, b in zip(pieces[:-1], pieces[1:]))

    def level(self, survival: float) -> float:
        """``u = -log p`` at which ``P(C > t) = survival``."""
        k = self.kernel
        if k.mds:
            return -math.log(float(special.betaincinv(k.r + 1, k.n, survival)))
        # p^d = 1 - (1 - survival)^(1 / n) as an expm1: the power rounds a tiny survival
        # (Replication(3, 2) at level 1 - 1e-12 was 3.7e-6 off with 1e-12 stated)
        return -math.log(-math.expm1(math.log1p(-survival) / k.n)) / k.r


_U_MAX = 745.0
"""``u = -log p`` beyond which ``p = e^-u`` underflows: the batch time's tail is 0 there."""


class ExponentialBatchTime(ResponseLaw):
    """Batch completion time with removal under IR exponential runtimes (closed form in ``q``;
    see :class:`_ExponentialClosedForm`); double precision, each quantile with the quadrature
    tolerance as its error estimate (``ppf(q, full_output=True)``)."""

    _label = "ExponentialBatchTime (MDS/Replication with removal, exponential runtimes)"
    _accuracy = ("its double-precision values come from a closed form in q by adaptive "
                 "quadrature (relative tolerance 1e-13), quantile errors estimated at 1e-12 "
                 "relative (ppf(q, full_output=True))")

    def __init__(self, form: _ExponentialClosedForm, mean: float):
        self._form, self._mean = form, mean

    def __repr__(self):
        return f"ExponentialBatchTime(mean={self._mean!r})"

    def _quantile_errors(self, q, values, coarse=None):
        """The quadrature tolerance: 1e-12 relative."""
        return 1e-12 * values

    def _sf(self, x):
        """``P(C > t) = Psi(exp(-u))`` with ``t(u) = t``: the times in increasing order, each
        root by Newton's method on ``t(u)`` (``t'(u)`` is the integrand), safeguarded by a
        bracket, ``t`` at a new ``u`` integrated from the largest ``u`` known below the root
        (a per-time root search with the whole integral at every step had cost 3 ms per time
        for MDS(4, 2); brentq to 1e-15 in ``u``, as here)."""
        x = np.asarray(x, dtype=float)
        flat = x.ravel()
        out = np.ones(flat.size)
        form = self._form
        u_lo = t_lo = 0.0            # a point known below every remaining time
        for i in np.argsort(flat, kind="stable"):
            t = flat[i]
            if not t > 0:
                continue
            step, u_hi, t_hi = max(u_lo, 1.0), u_lo, t_lo
            while t_hi < t and u_hi < _U_MAX:   # a bracket, doubling the step
                u_lo, t_lo = u_hi, t_hi
                u_hi = min(u_hi + step, _U_MAX)
                t_hi, step = t_lo + form.integral(u_lo, u_hi), 2.0 * step
            if t_hi < t:                         # beyond p = e^-745: 0
                out[i] = 0.0
                continue
            u = u_lo + (t - t_lo) / form._dt(u_lo)
            for _ in range(100):
                if not u_lo < u < u_hi:
                    u = 0.5 * (u_lo + u_hi)
                t_u = t_lo + form.integral(u_lo, u)
                if t_u < t:
                    u_lo, t_lo = u, t_u
                else:
                    u_hi, t_hi = u, t_u
                new = u + (t - t_u) / form._dt(u)
                if abs(new - u) <= 1e-15 * u or u_hi - u_lo <= 1e-15 * u_hi:
                    u = min(max(new, u_lo), u_hi)
                    break
                u = new
            out[i] = float(form.kernel.batch_sf_p(np.array(math.exp(-u))))
        return out.reshape(x.shape)

    def _ppf(self, q):
        q = np.asarray(q, dtype=float)
        out = np.empty(q.shape)
        for i, level in np.ndenumerate(q):
            out[i] = self._form.time(self._form.level(1.0 - level))
        return out

    def _moment(self, k):
        return self._mean if k == 1 else super()._moment(k)


# ------------------------------------------------------------------------ analysis
_REFERENCES = (
    "K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky, "
    "'Redundancy-d: the power of d choices for redundancy', Operations Research 65(4), 2017 "
    "(the n = 1 case)",
    "T. Hellemans, B. Van Houdt, 'Performance of redundancy(d) with identical/independent "
    "replicas', ACM TOMPECS 4(2), 2019 (the workload level-crossing equation)",
    "K. Duffy, S. Shneer, 'MDS coding is better than replication for job completion times', "
    "Operations Research Letters 49(1), 2021",
)


def _one_job_size(runtime: SX) -> bool:
    """Whether S&X runtimes have one job size (``X`` a single atom)."""
    atoms = runtime.X.atoms
    return atoms is not None and atoms[0].size == 1


def _model_of(kernel: _Kernel, runtime, rule_nodes: int | None = None):
    """The grid model of a runtime: IR, S&X with a discrete slowdown (:class:`_SXModel`, with
    ``rule_nodes`` per piece of its rule over ``X``, by default :data:`_SX_RULE_NODES`) or a
    continuous one
    (:mod:`.removal_continuous`). S&X with one job size ``x`` and a discrete slowdown is IR with
    runtimes ``x S`` (the tasks' runtimes are then independent): the IR march, which places
    atoms between the nodes exactly (:class:`_Between`)."""
    if isinstance(runtime, IR):
        return _IRModel(kernel, runtime.R)
    if runtime.S.atoms is not None:
        if _one_job_size(runtime):
            return _IRModel(kernel, runtime.replica())
        return _SXModel(kernel, runtime, rule_nodes)
    from .removal_continuous import _SXContinuousModel

    return _SXContinuousModel(kernel, runtime)


def _kernel_of(policy, lam: float) -> _Kernel:
    """The kernel of MDS or Replication, and of Redundancy-d: Replication(1, d) with removal
    (a job's other replicas are cancelled when the first completes: the same system)."""
    if isinstance(policy, MDS):
        return _Kernel(True, policy.n, policy.m, lam, policy.remove)
    if isinstance(policy, RedundancyD):
        return _Kernel(False, 1, policy.d, lam)
    return _Kernel(False, policy.n, policy.d, lam, policy.remove)


def necessary_rate(policy, R: Distribution) -> float:
    """An upper bound of the stable arrival rates with removal (IR).

    A batch needs at least the runtimes of ``n`` completed tasks, so
    ``lam E[sum of the n smallest of N runtimes] / n < 1`` (MDS) and ``lam E[min of d
    runtimes] < 1`` (replication) are necessary.

    Parameters
    ----------
    policy : MDS or Replication
    R : Distribution
        One task's runtime.

    Returns
    -------
    float
        Arrival rates at or above this are unstable.

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.analysis.removal import necessary_rate
    >>> necessary_rate(qt.MDS(4, 2), qt.Deterministic(1.0))   # 4 units of work per batch
    1.0
    """
    if isinstance(policy, MDS):
        work = smallest_sum_mean(R, policy.n, policy.n + policy.m)
        return policy.n / work
    return 1.0 / R.minimum(policy.d).mean()


def analyze_removal(system: System) -> Prediction:
    """MDS(n, m) and Replication(n, d) with removal under IR, k -> infinity (mean-field).

    See the module docstring for the equation and the numerical method. ``Prediction.errors``
    holds the estimated errors of the mean and the busy fraction;
    ``response_time.quantile_error(q)`` that of a quantile.

    Examples
    --------
    Exponential runtimes: busy fraction ``lam / mu`` exactly (module docstring):

    >>> import queuetheory as qt
    >>> p = qt.analyze(qt.System(qt.MDS(4, 2), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5))
    >>> round(p.busy_fraction, 7), round(p.mean, 6)
    (0.5, 1.453297)

    References
    ----------
    .. [1] Gardner et al., Operations Research 65(4), 2017 (``n = 1``: Redundancy-d).
    .. [2] Hellemans, Van Houdt, ACM TOMPECS 4(2), 2019 (workload equation).
    """
    policy, runtime, lam = system.policy, system.runtime, system.arrival_rate
    if isinstance(runtime, SX):
        return _analyze_sx(system)
    R = runtime.R
    if math.isinf(R.moment(2)):
        raise NotImplementedError(
            f"{policy.label()} with removal: runtimes with E[R^2] = inf have a workload tail the "
            f"grid method cannot resolve; use qt.simulate")
    kernel = _kernel_of(policy, lam)
    where = ("k -> infinity" if system.servers is None
             else f"k -> infinity limit used as an approximation for k = {system.servers}")
    assumptions = ("Poisson batch arrivals at arrival_rate / n per server", "FCFS at every server",
                   "removal: a task's unfinished work is removed when its batch (MDS) or its job "
                   "(replication) completes", "independent runtimes (IR)",
                   "k -> infinity (the servers a batch uses are independent)")
    name = f"{policy.label()}, IR runtimes, with removal: mean-field, {where}"
    upper = necessary_rate(policy, R)
    if lam >= upper:
        method = (f"{name}: unstable, arrival_rate >= {upper:.6g} (a batch needs at least the "
                  f"runtimes of the n completed tasks)")
        return Prediction(system, method=method, exact=False, stable=False, mean=math.inf,
                          busy_fraction=1.0, cost=math.inf, assumptions=assumptions,
                          references=_REFERENCES)
    if isinstance(R, Exponential):
        return _exponential(system, kernel, name, assumptions)
    return _grid_or_frontier(system, name, assumptions, kernel)


def _grid_or_frontier(system: System, name: str, assumptions: tuple,
                      kernel: _Kernel) -> Prediction:
    """The grid solution, where the stability frontier leaves no doubt that there is one.

    Beyond the no-removal limit (``lam_t E[R] >= 1``) only removal keeps the system stable,
    and within the frontier's own error the grid may find a law for an unstable system (MDS(4,
    2), Deterministic(1), at the frontier times 1 + 1e-12 gave a mean of 29.06). There the
    frontier decides, with its error estimate: unstable at or above ``lam* + error``, refused
    (``NotImplementedError``, pointing to simulate) within ``error`` of ``lam*``. First the
    sign of the front's level at the rate (:func:`_front_side`, a handful of marches): beyond
    its error it decides alone, unstable without the grid, or stable with the grid's law.
    """
    policy, runtime, lam = system.policy, system.runtime, system.arrival_rate
    law = runtime if isinstance(runtime, SX) else runtime.R
    side = 0   # the side of the frontier by the front's level at lam (0: undecided)
    if kernel.lam_t * runtime.mean_runtime() >= 1:
        try:
            side = _front_side(policy, law, lam)
        except RemovalError:
            pass
        if side > 0:
            # beyond the frontier by more than the error of its own side, before the grid: a
            # law the grids find there (within their error of the frontier) is not one to
            # refine (IR Erlang(3, 3), MDS(10, 3), at 1.001 of its frontier: 171 s on its
            # quantiles' far tail, then discarded)
            return _beyond_frontier(system, name, assumptions)
    try:
        prediction = grid_prediction(system, name, assumptions)
    except RemovalError as error:
        return _unstable_or_refuse(system, runtime, name, assumptions, kernel, error)
    if kernel.lam_t * runtime.mean_runtime() < 1 or side < 0:
        return prediction   # within the no-removal limit, or the frontier beyond its error
    try:
        lam_star, error = frontier(policy, law, full_output=True)
    except RemovalError:
        # said in the method: a verdict without the frontier's check (SX of X on {0.44, 3.76,
        # 4.12} times a hyperexponential S, Replication(4, 4), at 1.01 of the no-removal limit:
        # a front too slow for its grids)
        return prediction._relabelled("", suffix=(
            "; the stability frontier could not be placed (qt.stability_frontier says why): "
            "this load is taken as stable because the grids found a stationary law, which "
            "within their error of the frontier they can also find for an unstable system"))
    if frontier_verdict(f"{policy.label()} with removal", lam, lam_star, error):
        return prediction
    return _beyond_frontier(system, name, assumptions, lam_star, error)


def _beyond_frontier(system: System, name: str, assumptions: tuple,
                     lam_star: float | None = None, error: float = 0.0) -> Prediction:
    """The unstable result at or beyond the frontier plus its error (``lam_star``), or beyond
    it as the sign of the front's level at the rate says (:func:`_front_side`, no frontier
    computed: ``None``)."""
    if lam_star is None:
        method = (f"{name}: unstable, arrival_rate beyond the stability frontier: the level "
                  f"behind the travelling front exceeds 1 at this rate by more than its "
                  f"estimated error (travelling-front equation; qt.stability_frontier gives "
                  f"the frontier)")
    else:
        method = (f"{name}: unstable, arrival_rate >= the stability frontier {lam_star:.10g} "
                  f"plus its estimated error {error:.2g} (travelling-front equation, see "
                  f"qt.stability_frontier)")
    return Prediction(system, method=method, exact=False, stable=False, mean=math.inf,
                      busy_fraction=1.0, cost=math.inf, assumptions=assumptions,
                      references=_REFERENCES)


def _exponential(system: System, kernel: _Kernel, name: str, assumptions) -> Prediction:
    lam, mu = system.arrival_rate, system.runtime.R.rate
    if lam >= mu:
        method = f"{name}: unstable, arrival_rate >= mu = {mu:.6g} (busy fraction lam / mu)"
        return Prediction(system, method=method, exact=False, stable=False, mean=math.inf,
                          busy_fraction=1.0, cost=math.inf, assumptions=assumptions,
                          references=_REFERENCES)
    form = _ExponentialClosedForm(kernel, mu, lam)
    mean = form.mean()
    law = ExponentialBatchTime(form, mean)
    method = (f"{name}, exponential runtimes: closed form through dF/dq = (lam_t / mu) phi(q), "
              f"F(q) = 1 - lam/mu + (lam_t/mu) int_0^q phi, t(q) = int_0^q dx / (mu (F - x)); "
              f"busy fraction lam / mu exactly; mean and quantiles by adaptive quadrature in q "
              f"(relative tolerance 1e-13)")
    prediction = Prediction(system, method=method, exact=False, stable=True, mean=mean,
                            response_time=lambda: law, busy_fraction=lam / mu, cost=1.0 / mu,
                            assumptions=assumptions, references=_REFERENCES,
                            errors={"mean": 1e-12 * mean, "busy_fraction": 0.0})
    return prediction


# ------------------------------------------------------------------------ stability frontier
_FRONT_SEED = 1e-12
"""Idle probability of the march that traces the travelling front (see :func:`frontier`)."""
_FRONT_MAX_CELLS = 2 ** 20
"""Most cells of a grid of :func:`frontier` (atoms on a common step are nodes: a step of 1e-6,
``Discrete([1, 996 / 997, 990 / 991], ...)``, asked for 3.2e7 cells and raised ``MemoryError``;
beyond this :func:`_front_level` raises :class:`RemovalError`, a refusal; ``{1, 1.618}``, a step
of 0.002, takes 3.2e5)."""
_FRONT_ROUGH_STEP_FASTEST = 1.0
"""Finest step of the frontier's grids, in means of the runtime's fastest part (S&X: the job
size at the smallest slowdown, ``E[X] min S``; IR: :func:`_fastest_mean`), beyond which its
grids are refined (:meth:`_Front.resolve`, up to :data:`_FRONT_REFINE` times) or, where that
does not suffice, its error estimate is the rough one (:func:`_richardson`). Measured against
the same solver on grids four times finer, with a seventh of the extrapolations' difference: of
242 S&X systems (9 job sizes with a density, 7 slowdown laws, MDS(4, 1), MDS(10, 2),
Replication(3, 2) and Replication(1, 3)) 5 frontiers had been beyond their estimates, all with
steps of 1.36 to 2.31 ``E[X] min S`` (Erlang(3) x {0.1, 1, 10}, Replication(3, 2): 1.1e-8 off
with 5.0e-9 stated), none with steps below 1; of 98 IR frontiers (17 laws, 6 policies) 7, up to
4.4 times (HyperExponential([0.7, 0.3], [100, 0.3]), MDS(20, 5): 9.8e-4 off with 4.7e-4 stated;
lognormal(1), MDS(20, 5), on a step of 0.82). Now none (at most 0.69 and 0.60 of the
estimates), nor of 48 IR frontiers held out (at most 0.30; 0.86 before)."""
_FRONT_REFINE = 32
"""Most the frontier's grids are refined (:meth:`_Front.resolve`) to resolve the runtime's
fastest part (within the cell bounds there); beyond, the rough estimate
(:data:`_FRONT_ROUGH_STEP_FASTEST`). It was 8: where 16 or 32 times was needed, IR frontiers
stated the rough estimate, 2.0e-5 to 5.3e-2 relative and 1 to 33 times their true error
(HyperExponential([0.99, 0.01], [1000, 1]), MDS(10, 2): 475.84 +- 25 where 32 times gives
469.37630 +- 1.2e-4; HyperExponential([0.5, 0.5], [100, 0.5]), MDS(10, 2): 1.0967661 +-
2.2e-5, 4.0e-6 off, now +- 1.1e-9). Over 50 IR frontiers (ten laws, five codes) 10 changed,
their estimates now 1.0e-9 to 2.6e-7 relative, the slowest in 0.68 s of CPU (0.08 s at 8);
S&X frontiers are held by the memory of their ``X`` nodes first (none of 12 changed; since
the frontier's grids take that memory bound rather than the points' S&X cell bound, a job size
on more than 16 atoms times a continuous slowdown is refined where it took the rough estimate:
20 atoms from 0.15 times ``HyperExponential([0.9, 0.1], [1.8, 0.2])``, Replication(1, 3),
0.15771647 +- 1.7e-5 before, 0.1577163621 +- 1.6e-10 now, in at most 0.25 s)."""
_FRONT_STEP_MEAN = 0.5
"""Largest step of the frontier's grids, in mean runtimes (:meth:`_Front.refinement`): on the
longer horizons a slowly forming front asks for, 256 cells had taken steps of 4 to 8 mean
runtimes, where the front's level is not even monotone in the rate (S&X exponential ``X`` times
``HyperExponential([0.9, 0.1], [1.8, 0.2])``, MDS(10, 5): 0.82 at step 4, 6.1 at step 8, and
between 0.91 and 1.46 at one rate's neighbours), so Brent's method found no bracket and the
frontier was refused. Over 160 systems (IR hyperexponential, lognormal(1), gamma(0.3),
deterministic and two-point laws; S&X exponential, Erlang(2), uniform and two-atom job sizes
times hyperexponential, Erlang(2), uniform and discrete slowdowns; MDS(2, 1), MDS(4, 2),
MDS(10, 5), Replication(2, 2) and Replication(1, 3)) 21 had been refused, 3 are (fronts
whose cells at this step exceed the bound); of the 139 answered before 80 moved, by at most
0.42 of their earlier estimates; against the same grids four times finer (104 systems) 103
are within their estimates (the one beyond, X on {0.01, 3} times Erlang(2, 2) slowdowns,
Replication(1, 3), 1.5e-8 relative off the front's ODE with 3.1e-9 stated, did not move here;
it is now refined for its smallest atom, ``front_rough_above``). Bounded by
:meth:`_Front.max_cells`: at 1 mean runtime, without the bound, one search let the horizon grow
to 3.4e7 and asked for 27 GB."""
_FRONT_CELLS = (256, 512, 1024, 2048)
"""Cells of the grids of :func:`frontier` on one horizon: Richardson-extrapolated from the two
finest, the error estimate that of :func:`_guarded` (the coarsest grid guards it: with three
grids the estimate fell below the true error, against the exact frontier 1 of Erlang(1, 1)
runtimes 1.8e-6 stated 3.9e-7 at d = 8, and against four finer grids 4e-5 stated 2.2e-5 for a
hyperexponential runtime)."""


def _front_step(model, cells: int, W: float) -> float:
    """The step of the frontier's grid of about ``cells`` cells on ``[0, W]``
    (:func:`_front_level`)."""
    h = W / _FRONT_CELLS[0]
    if _front_on_lattice(model, W):
        h = model.lattice / math.ceil(model.lattice / h - 1e-9)
    return h * _FRONT_CELLS[0] / cells


def _front_on_lattice(model, W: float) -> bool:
    """Whether the frontier's grids on ``[0, W]`` hold the runtime's atoms (S&X: the products
    ``x s`` of the job size's atoms) on their nodes, their step a divisor of the atoms' common
    step. Raises :class:`RemovalError` where the finest would need more than
    :data:`_FRONT_MAX_CELLS` cells. S&X with a continuous job size, whose ``X`` nodes take 16
    bytes per cell each: not where the finest grid's table with the doubled rule of the
    frontier (:data:`_SX_RULE_NODES_MORE` nodes per piece, twice) would exceed
    :data:`_SX_BYTES` (the same decision for the rule and its check), the atoms then between the
    nodes (first order, as in a point's analysis): a mixture of an atom and an exponential
    times two slowdowns, whose products have a step of 2.4e-5, had grids of 3.7e5 cells and
    took 5.1 GB and 75 s (with the bound 214 MB and 0.42 s, the frontier 1.3e-3 from the value
    on the lattice with 0.016 stated)."""
    if model.lattice is None:
        return False
    h = W / _FRONT_CELLS[0]
    h = model.lattice / math.ceil(model.lattice / h - 1e-9)
    finest = W / h * _FRONT_CELLS[-1] / _FRONT_CELLS[0]
    if isinstance(model, _SXModel) and not model.discrete_x:
        columns = model.pieces * 2 * _SX_RULE_NODES_MORE
        if finest * 16 * columns > _budgeted(_SX_BYTES):
            return False
    if finest > _FRONT_MAX_CELLS:
        raise RemovalError(
            f"the runtime's atoms have a common step of {model.lattice:.3g}, which the "
            f"frontier's grids on [0, {W:.4g}] would need more than {_FRONT_MAX_CELLS} "
            f"cells to hold")
    return True


def _front_level(model, cells: int, W: float) -> float | None:
    """``F(W)`` of the march on ``[0, W]`` started from the tiny atom ``_FRONT_SEED``: the
    level behind the travelling front, or ``None`` if the front has not passed ``W``
    (``F - q >= 1e-11`` at the end) and ``F(W) <= 1``. ``F`` does not decrease, so
    ``F(W) > 1`` settles the sign of ``F(inf) - 1`` whether or not the front has passed (well
    above the frontier a fast front on a coarse grid had kept ``F - q`` above 1e-11, the
    horizon doubled until the step could not resolve the front: Erlang(1) runtimes,
    Redundancy-12, "the front has not passed w = 8.4e6"). About ``cells`` cells: the step of
    the coarsest grid (``W / _FRONT_CELLS[0]``, lowered to a divisor of the lattice step if
    any) times ``_FRONT_CELLS[0] / cells``, so the steps of the grids halve exactly."""
    h = _front_step(model, cells, W)
    M = math.ceil(W / h - 1e-9)
    marched = model.marcher(h, M)(np.array([_FRONT_SEED]))
    F, qm = marched[0], marched[3]
    if (F[-1, 0] - qm[-1, 0] < 1e-11 and F[-1, 0] > 1e-3) or F[-1, 0] > 1.0:
        return float(F[-1, 0])
    return None


def _memoryless_given_x(runtime) -> bool:
    """Whether ``runtime`` is S&X with an exponential slowdown: given the batch's ``X = x`` a
    task in service finishes at rate ``1 / (x E[S])`` whatever it has run, and a batch ends at
    exactly ``n`` completions (MDS: its ``n``-th; Replication: one per job), removal or not, so
    it costs ``n x E[S]`` of server time on average and the busy fraction is ``lam E[R]``
    exactly, the frontier ``1 / E[R]`` (as for IR exponential runtimes, ``lam / mu``; the ODE
    of ``scripts/sx_atom_phase_removal_references.py``: 0.28 to 2e-13 for X on {0.003, 2},
    MDS(2, 3) at task load 0.7; 0.05 / 1.1 to 1e-12 for a hyperexponential X, MDS(10, 1) at
    0.05, where the grids had stated 0.0464 +- 0.0039). Exponential also as ``Erlang(1, r)``
    or a ``HyperExponential`` whose rates are all equal."""
    if not isinstance(runtime, SX):
        return False
    S = runtime.S
    return (isinstance(S, Exponential) or (isinstance(S, Erlang) and S.k == 1)
            or (isinstance(S, HyperExponential) and bool(np.all(S.rates == S.rates[0]))))


def frontier(policy: MDS | Replication, R: Distribution | SX, *,
             full_output: bool = False) -> float | tuple[float, float]:
    """Largest stable ``arrival_rate`` of ``policy`` (MDS or Replication with removal) under IR
    runtimes ``R`` (or an S&X model), k -> infinity.

    Above the frontier the workload law travels to infinity at some speed ``c > 0`` keeping a
    shape ``Psi``; level crossing in the moving frame gives ``(1 + c) Psi' = lam_t (Psi - q)
    phi(q)``, so a front at rest exists only for one task rate ``Lambda*``: the one at which the
    march started from a vanishing idle probability ends at level 1 (below: the stationary law
    has a positive idle probability; above: none). ``Lambda*`` by Brent's method between the
    no-removal limit ``1 / E[R]`` and the necessary bound of :func:`necessary_rate` (bracketed
    from the bound downwards: near the no-removal limit the front forms slowly) on a grid of
    256 cells, which also fixes the horizon ``W`` (doubled until the front has passed); then on
    grids of 256, 512, 1024 and 2048 cells on that horizon, each bracketed around the value the
    coarser grids predict (widened down to the no-removal limit); every grid's cells
    multiplied by a power of 2 where the horizon needs it to keep its step within
    :data:`_FRONT_STEP_MEAN` mean runtimes (refused beyond the cell bound).
    Richardson-extrapolated from the two finest grids, with the error estimate of
    :func:`_guarded` (atoms of ``R`` off the grid: the finest value, first order;
    a finest step over the mean of the runtime's fastest part, S&X ``E[X] min S``, IR
    :func:`_fastest_mean`: every grid refined by up to 32 times to resolve it, else the rough
    estimate, :data:`_FRONT_ROUGH_STEP_FASTEST`) plus the
    root-finding tolerance (S&X with a continuous ``X``: plus twice the change of the 512-cell
    root when the rule over ``X`` is doubled). Exponential runtimes: ``mu`` exactly; S&X with
    exponential slowdowns: ``1 / E[R]`` exactly (:func:`_memoryless_given_x`).

    Parameters
    ----------
    policy : MDS or Replication
        With removal (its flag is not consulted here).
    R : Distribution or SX
        One task's runtime (IR), ``E[R^2] < inf``; or ``qt.SX(X, S)`` (conditioned on the
        batch's ``X``; slower, seconds).
    full_output : bool, optional
        Also return the estimated error.

    Returns
    -------
    float or (float, float)
        The frontier ``lam*`` (original jobs per server per unit time); with ``full_output``,
        ``(lam*, estimated absolute error)``.

    Raises
    ------
    RemovalError
        When the grid method cannot place the front (near the no-removal limit, or where the
        front stalls at its foot), or where its grids would need more than the cell bound to
        keep their step within :data:`_FRONT_STEP_MEAN` mean runtimes (a front that forms
        too slowly).

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.analysis.removal import frontier
    >>> frontier(qt.MDS(4, 2), qt.Exponential(2.0))
    2.0
    >>> value, error = frontier(qt.MDS(4, 2), qt.Deterministic(1.0), full_output=True)
    >>> round(value, 3), bool(error < 1e-6)
    (0.852, True)

    References
    ----------
    .. [1] docs/theory/removal.md (travelling front); Gardner et al., Operations Research 65(4),
       2017 (exponential runtimes, ``n = 1``).
    """
    value, error = _frontier_and_error(policy, R)
    return (value, error) if full_output else value


class _Front:
    """The level behind the travelling front less 1, ``F(inf) - 1``, of ``policy`` under the
    runtime ``R`` (IR law or S&X model) as a function of the rate (:func:`_front_level`): below
    0 within the stability frontier, above it beyond. Keeps the horizon (doubled until the front
    passes) and the levels found, each evaluated once."""

    def __init__(self, policy: MDS | Replication, R):
        self.policy = policy
        mds = isinstance(policy, MDS)
        per_task = policy.n / (policy.n + policy.m) if mds else 1.0 / policy.d
        if isinstance(R, SX):
            # twelve nodes over X, not a point's eight: one number, its grids not refined by
            # its estimate (with eight, S&X Erlang(3) x {0.1, 1, 10} under Replication(3, 2)
            # stated 3.4e-8 relative, 1e-8 with twelve)
            self.model = _model_of(_kernel_of(policy, 1.0), R, _SX_RULE_NODES_MORE)
            mean = R.mean_runtime()
            self.upper = necessary_rate(policy, R.S) / R.X.mean()
        else:
            self.model = _IRModel(_kernel_of(policy, 1.0), R)
            mean = R.mean()
            self.upper = necessary_rate(policy, R)
        self.no_removal = per_task / mean
        self.removes = not ((mds and policy.m == 0) or (not mds and policy.d == 1))
        self.horizon = 32.0 * self.model.scale
        self.levels = {}   # (rate, cells, W) -> level
        self.factor = 1    # the grids' cells times _FRONT_CELLS (resolve)
        self.plain_at = None   # the horizon with the grids of _FRONT_CELLS only (fallback)

    def excess(self, rate: float, cells: int, grow: bool = True,
               doublings: int = _HORIZON_DOUBLINGS + 4) -> float:
        """``F(inf) - 1`` at ``rate``; the horizon doubled until the front passes (``grow``, at
        most ``doublings`` times, then :class:`RemovalError`), else :class:`_FrontNotPassed`."""
        self.model.kernel = _kernel_of(self.policy, rate)
        for _ in range(doublings):
            grid = cells * self.refinement(cells)
            key = (rate, grid, self.horizon)
            if key not in self.levels:
                self.levels[key] = _front_level(self.model, grid, self.horizon)
            level = self.levels[key]
            if level is not None:
                return level - 1.0
            if not grow:
                raise _FrontNotPassed
            self.horizon *= 2.0
        raise RemovalError(f"the front has not passed w = {self.horizon:.4g}: it forms too "
                           f"slowly for the grid method (near the no-removal limit, or where the "
                           f"front stalls at its foot: exponential-like runtimes at large d); "
                           f"use qt.simulate")

    def rough(self, cells: int) -> bool:
        """Whether the estimates on grids up to ``cells`` cells are the rough ones: the model's
        (:attr:`_GridModel.rough`), or a step over its ``front_rough_above``."""
        model = self.model
        return bool(model.rough or _front_step(model, cells * self.refinement(cells), self.horizon)
                    > model.front_rough_above)

    def refinement(self, cells: int, horizon: float | None = None) -> int:
        """What the grid of ``cells`` of :data:`_FRONT_CELLS` is refined by on ``horizon`` (by
        default the current one): :meth:`resolve`'s ``factor``, at least the smallest power of
        2 that keeps the coarsest grid's step within :data:`_FRONT_STEP_MEAN` mean runtimes.
        :class:`RemovalError` where that grid would then hold more than :meth:`max_cells`
        cells (a front that forms too slowly; on a lattice the step is lowered to a divisor of
        the atoms' common step, and the cells counted so)."""
        model = self.model
        horizon = self.horizon if horizon is None else horizon
        h = _front_step(model, _FRONT_CELLS[0], horizon)
        floor = 1
        while h / floor > _FRONT_STEP_MEAN * model.scale:
            floor *= 2
        # the cells the grid holds (a lattice lowers the step below W / cells)
        if floor > self.factor and horizon / _front_step(model, cells * floor, horizon) > (
                self.max_cells()):
            bound = self.max_cells()
            hint = " (qt.grid_budget raises the bound)" if bound < _FRONT_MAX_CELLS else ""
            raise RemovalError(
                f"the travelling front forms too slowly: on [0, {horizon:.4g}] the "
                f"frontier's grids would need more than {bound} cells to keep their step "
                f"within {_FRONT_STEP_MEAN} mean runtimes{hint}; use qt.simulate")
        return max(self.factor, floor)

    def max_cells(self) -> int:
        """Most cells of the frontier's finest grid: :data:`_FRONT_MAX_CELLS`, and four times
        the model's ``max_cells``, under S&X its memory bound up to the IR cell bound
        (``memory_cells``: the points' lower bound :data:`_M_MAX_SX` had refused a slowly forming
        front, hyperexponential X and S, MDS(8, 1), whose finest grid needed 32768 cells)."""
        model = self.model
        cells = model.max_cells
        if model.memory_cells is not None:
            cells = max(cells, min(_budgeted(_M_MAX), model.memory_cells))
        return min(_FRONT_MAX_CELLS, 4 * cells)

    def resolve(self) -> bool:
        """Set ``factor``, the grids' cells over :data:`_FRONT_CELLS`: the smallest power of 2
        whose finest step on the current horizon is at most the model's ``front_rough_above``
        (the mean of the runtime's fastest part), where that is at most :data:`_FRONT_REFINE`
        and the finest grid then holds at most :meth:`max_cells` cells; else 1 (the rough
        estimate: refining part of the way only costs time, and where a slowly forming front
        asks for a horizon of 1e9 it tripled the time of a refusal). ``True`` if it changed
        (the levels found are kept, keyed by their cells)."""
        model = self.model
        h = _front_step(model, _FRONT_CELLS[-1], self.horizon)
        factor = 1
        while (self.plain_at != self.horizon and h / factor > model.front_rough_above
               and factor <= _FRONT_REFINE):
            factor *= 2
        if factor > _FRONT_REFINE or factor * self.horizon / h > self.max_cells():
            factor = 1
        changed, self.factor = factor != self.factor, factor
        return changed

    def fallback(self) -> bool:
        """Where the front has not passed the horizon on the refined grids: the grids of
        :data:`_FRONT_CELLS` on the same horizon (``True``), as without :meth:`resolve`'s
        refinement (:meth:`refinement`'s floor on the step still holds);
        ``False`` where they were not refined (the horizon is to grow, and :meth:`resolve`
        refines again on the longer one: IR gamma(0.3), MDS(10, 2) passed on neither grid at
        w = 76.8, and the unrefined grids kept at 153.6 stated 1.6e-3, 2.5e-4 off, where the
        refined ones state 1.3e-5, 8.0e-6 off grids 32 times finer). Their roots are bracketed
        from the coarsest grid's, and the wider brackets of the first refined grid reached
        rates where the front forms more slowly (S&X exponential ``X`` x {1, 100},
        Replication(1, 3): refused on the refined grids, 0.334 +- 2.7e-3 without)."""
        if self.factor == 1:
            return False
        self.plain_at, self.factor = self.horizon, 1
        return True

    @property
    def order(self) -> int:
        """The grids' order (1 where atoms of the runtime fall between the nodes)."""
        model = self.model
        aligned = ((_front_on_lattice(model, self.horizon) or not model.has_atoms)
                   and not model.loose_kinks)
        return 2 if aligned else 1

    def double_rule(self) -> bool:
        """S&X with a continuous ``X``: from here on the model with twice the nodes of the rule
        over ``X`` (the levels found are forgotten); ``False`` where there is no such rule."""
        doubled = None if isinstance(self.model, _IRModel) else self.model.doubled()
        if doubled is None:
            return False
        self.model = doubled
        self.levels.clear()
        return True


_SIDE_DOUBLINGS = 6
"""Doublings of the horizon :func:`_front_side` tries (from ``32 E[R]``) before it leaves the
verdict to :func:`frontier`: near the no-removal limit the front forms slowly (MDS(4, 2),
Deterministic(1) at 0.7 of its frontier: 2.4 s of doublings to 8e6 before it refused)."""


def _front_side(policy: MDS | Replication, R, rate: float) -> int:
    """Whether ``rate`` lies within the stability frontier (-1), beyond it (+1) or too close to
    tell (0), from the sign of ``F(inf) - 1`` at ``rate`` alone (:class:`_Front`): on the grids
    of :data:`_FRONT_CELLS` extrapolated as :func:`frontier` does, with its error estimate
    (:func:`_guarded`, plus twice the change when the rule over a continuous ``X`` is
    doubled), decided where the value lies beyond the estimate. A handful of marches where the
    frontier takes about fifty: a point's verdict beyond the no-removal limit needs only this
    (MDS(4, 2), S&X Erlang X, S in {1, 3}: 0.44 s of the point's 0.59 s was the frontier).
    Three grids first, decided only beyond 16 times their estimate (three grids alone had
    under-stated the frontier's error 4.6-fold); else the fourth. :class:`RemovalError` where
    the front cannot be placed."""
    front = _Front(policy, R)
    if not front.removes:
        return int(np.sign(rate - front.no_removal))
    if rate >= front.upper:
        return 1
    attempts = 0
    while attempts < _SIDE_DOUBLINGS:
        try:
            values = [front.excess(rate, _FRONT_CELLS[0], doublings=_SIDE_DOUBLINGS)]
            if front.resolve():   # the grids refined for the fastest part on this horizon
                values = [front.excess(rate, _FRONT_CELLS[0], False)]
            values += [front.excess(rate, cells, False) for cells in _FRONT_CELLS[1:3]]
            value, error = _richardson(values, front.order, front.rough(_FRONT_CELLS[2]))
            decided = abs(value) > 16.0 * error
            if not decided:
                values.append(front.excess(rate, _FRONT_CELLS[3], False))
                value, error = _guarded(values, front.order, front.rough(_FRONT_CELLS[3]))
            break
        except _FrontNotPassed:
            if not front.fallback():
                attempts += 1
                front.horizon *= 2.0
    else:
        raise RemovalError("the travelling front did not pass the horizon; use qt.simulate")
    if front.double_rule():
        try:
            error += 2.0 * abs(front.excess(rate, _FRONT_CELLS[1], False) - values[1])
        except _FrontNotPassed:
            return 0
    return int(np.sign(value)) if abs(value) > (16.0 if decided else 1.0) * error else 0


def _frontier_and_error(policy, R) -> tuple[float, float]:
    """:func:`frontier` and its estimated error."""
    if isinstance(R, Exponential):
        return float(R.rate), 0.0
    if _memoryless_given_x(R):
        return 1.0 / R.mean_runtime(), 0.0
    front = _Front(policy, R)
    no_removal, upper = front.no_removal, front.upper
    if not front.removes:
        return no_removal, 0.0
    tol = 1e-12 * upper
    excess = front.excess

    def root(cells, lo, hi, grow=True):
        """Brent's method on ``excess`` in ``[lo, hi]`` (``excess(lo) < 0``); ``hi`` if
        ``excess(hi) <= 0``."""
        if excess(hi, cells, grow) <= 0:
            return hi
        return optimize.brentq(lambda rate: excess(rate, cells, grow), lo, hi, xtol=tol,
                               rtol=1e-12)

    def bracket(hi):
        """Rates ``lo < hi`` with ``excess(lo) < 0`` on the coarsest grid, coming down from
        ``hi`` towards the no-removal limit (there the front is far and slow)."""
        for k in range(1, 9):
            lo = no_removal + width * 0.5 ** k
            if lo < hi:
                if excess(lo, coarsest) < 0:
                    return lo, hi
                hi = lo
        raise RemovalError(f"the frontier lies within {width * 0.5 ** 8:.3g} of the "
                           f"no-removal limit {no_removal:.6g}; use qt.simulate")

    coarsest, width = _FRONT_CELLS[0], upper - no_removal
    lo, hi = bracket(upper)
    for _ in range(_HORIZON_DOUBLINGS):
        # a horizon grown since lo was bracketed (a coarser step: 256 cells on each) may move
        # the sign at lo (a Redundancy-10 S&X frontier far above it: scipy's "f(a) and f(b)
        # must have different signs"): bracket again on the grown horizon
        if excess(hi, coarsest) > 0 and excess(lo, coarsest) >= 0:
            lo, hi = bracket(lo)
            continue
        W = front.horizon
        try:
            values = [root(coarsest, lo, hi)]
            break
        except ValueError:
            if front.horizon == W:   # not a horizon grown within Brent's method
                raise RemovalError("Brent's method on the front's level failed on a fixed "
                                   "horizon; use qt.simulate") from None
            lo, hi = bracket(hi)
    else:
        raise RemovalError(f"no bracket of the frontier holds as the horizon grows to w = "
                           f"{front.horizon:.4g}; use qt.simulate")
    # the horizon of the grids: the shortest (doubling) the front passes at that root (the
    # bracket may have needed a longer one: near the no-removal limit the front forms slowly)
    model = front.model
    model.kernel = _kernel_of(front.policy, values[0])
    while (front.horizon > 32.0 * model.scale * 1.5
           and _front_level(model, coarsest * front.refinement(coarsest, 0.5 * front.horizon),
                            0.5 * front.horizon) is not None):
        front.horizon *= 0.5
    front.refinement(_FRONT_CELLS[-1])   # refused here where the finest grid would not fit
    attempts = 0
    while attempts < _HORIZON_DOUBLINGS:
        front.resolve()   # the grids refined for the fastest part on this horizon
        try:   # down to the no-removal limit: a finer root can lie below the coarsest's bracket
            # (S&X Erlang(2) x {1, 10}, Replication(1, 3): its lower end 2.3e-4 below the root)
            values = _front_roots(values[0], no_removal, upper, tol, excess, root, lo)
            break
        except _FrontNotPassed:
            if not front.fallback():
                attempts += 1
                front.horizon *= 2.0
    else:
        raise RemovalError("the travelling front did not pass the horizon; use qt.simulate")
    value, error = _guarded(values, front.order, front.rough(_FRONT_CELLS[-1]))
    if front.double_rule():
        # the rule over a continuous X: twice the change of the 512-cell root when its nodes
        # are doubled (as grid_prediction does for the mean)
        base = values[1]
        half = 1e-3 * base
        for _ in range(_HORIZON_DOUBLINGS):
            try:   # the horizon doubled where the front has not passed it
                if not excess(base - half, _FRONT_CELLS[1], False) < 0 <= excess(
                        base + half, _FRONT_CELLS[1], False):
                    raise RemovalError("the frontier moves by more than 1e-3 when the rule "
                                       "over X is refined; use qt.simulate")
                refined = root(_FRONT_CELLS[1], base - half, base + half, False)
                break
            except _FrontNotPassed:
                front.horizon *= 2.0
        else:
            raise RemovalError("the travelling front did not pass the horizon; use qt.simulate")
        error += 2 * abs(refined - base)
    return value, error + 2 * tol


class _FrontNotPassed(Exception):
    """The travelling front has not passed the fixed horizon (see :func:`_front_roots`)."""


def _front_roots(guess, low, high, tol, excess, root, passed) -> list:
    """The frontier on each grid of ``_FRONT_CELLS`` on the fixed horizon, each bracketed around
    the value the coarser grids predict (widened until it brackets, within ``[low, high]``);
    :class:`_FrontNotPassed` if the front does not pass the horizon at some rate tried from
    ``passed`` on (the lower end of the coarsest grid's bracket; below it, where the front
    forms ever more slowly towards the no-removal limit, the brackets stop at ``passed``),
    :class:`RemovalError` if no bracket is found (the level is not monotone in the rate
    there)."""
    values = []
    for cells in _FRONT_CELLS:
        if len(values) >= 2:
            guess = values[-1] + (values[-1] - values[-2]) / 4.0
            half = 2.0 * abs(values[-1] - values[-2]) + 4 * tol
        elif values:
            guess, half = values[-1], 1e-3 * abs(values[-1]) + 4 * tol
        else:
            half = 1e-6 * abs(guess) + 4 * tol
        floor = low
        while True:
            lo, hi = max(guess - half, floor), min(guess + half, high)
            try:
                below = excess(lo, cells, False) < 0
            except _FrontNotPassed:
                if lo >= passed:
                    raise
                floor = passed   # below the coarsest grid's bracket the front did not pass
                continue
            if below and 0 <= excess(hi, cells, False):
                break
            if lo == floor and hi == high:
                if not below:
                    where = ("the no-removal limit" if floor == low else
                             f"{floor:.6g} (below it the front does not pass the horizon)")
                    raise RemovalError(f"the front's level does not cross 1 between {where} "
                                       f"and the necessary bound on a finer grid; use "
                                       f"qt.simulate")
                break
            half *= 8.0
        values.append(root(cells, lo, hi, False))
    return values


def grid_prediction(system: System, name: str, assumptions: tuple, *,
                    exact: bool = False, references: tuple = _REFERENCES) -> Prediction:
    """The grid solution of the level-crossing equation as a :class:`Prediction` (also used
    without removal, ``phi = 1``: M/G/1 workloads, for runtimes with atoms; and for
    Redundancy-d, ``n = 1``). Raises :class:`RemovalError` when no stationary law is found on
    the grid. S&X with a continuous job size and discrete slowdowns: the rule over ``X`` has
    :data:`_SX_RULE_NODES` nodes per piece; where its error (the change when they are doubled)
    is most of what keeps the point short of the goal, the point is solved again with the
    pieces below each jump split at the layer of :data:`_SX_LAYER`, and, if that does not
    bring it within the goal and :func:`_rule_binds`, with :data:`_SX_RULE_NODES_MORE` nodes
    per piece (each on the same grids, where they fit its memory bound, else from scratch
    unless :func:`_coarser_short` shows it cannot do better); the one with the smallest
    stated error is returned."""
    kernel = _kernel_of(system.policy, system.arrival_rate)
    model = _model_of(kernel, system.runtime)
    prediction, short, plan = _grid_prediction(system, name, assumptions, kernel, model, exact,
                                               references)
    if not (isinstance(model, _SXModel) and not model.discrete_x
            and model.rule_nodes < _SX_RULE_NODES_MORE):
        return prediction
    achieved, rule, _ = short
    models = []
    if _SX_LAYER and achieved > 1 and rule > 0.5 * achieved:   # the rule most of it: its layer
        models.append(_SXModel(kernel, system.runtime, layer=True))
    if _rule_binds(*short):
        models.append(_SXModel(kernel, system.runtime, _SX_RULE_NODES_MORE))
    best, least = prediction, max(short[0], short[2])
    for more in models:
        # on the first solve's grids where their tables of X nodes fit the memory bound (its
        # grids go 1.5 times finer than 12 nodes'), else from scratch, on grids at least one
        # level coarser: not where their differences alone, as the first solve's coarser grids
        # show them, already keep it from doing better (then it is only ever discarded)
        grids = plan
        if plan[0][-1].F.size - 1 > 4 * more.max_cells:
            if _coarser_short(prediction, plan) >= least:
                continue
            grids = None
        try:
            again, short_again, _ = _grid_prediction(system, name, assumptions, kernel, more,
                                                     exact, references, grids)
        except RemovalError:
            continue
        if max(short_again[0], short_again[2]) < least:
            best, least = again, max(short_again[0], short_again[2])
            if least <= 1:
                break
    return best


def _coarser_short(prediction: Prediction, plan: tuple) -> float:
    """How far from the goal the grids' differences alone would keep a point solved on the
    grids of ``plan`` one level coarser (its grids ``2 h``, ``h``, ``h / 2`` without ``h /
    4``): the relative error estimates of :func:`_richardson` (observed, no guard) of the mean
    and, unless it is exact, of the busy fraction, over the goal; 0 without such grids. About
    the least a solve with more nodes over ``X`` states where its memory bound keeps it that
    coarse, not a proven bound: its grids' differences hardly depend on the rule over ``X``
    (a wrong guess costs a better answer, never a wrong one: the first solve is returned with
    its own estimates), as measured (``HyperExponential([0.9, 0.1], [10, 0.5])`` times the
    Facebook slowdowns, MDS(4, 1) at load 0.5: the relative differences of the means with 8
    and 12 nodes -3.0854e-4, -7.5112e-5 and -3.0791e-4, -7.5350e-5 on the same steps). Over
    the six hyperexponential systems of
    ``benchmarks/bench_removal.py --jobsize`` solved again from scratch, this bound was 0.21
    to 0.995 of what the second solve stated (that system: 47.7 and 48.0 times the goal, the
    first solve 6.4); the five it puts beyond the first solve were those discarded."""
    sols, aligned, _, rough = plan
    if len(sols) < 4:
        return 0.0
    order = 2 if aligned else 1
    coarser = sols[-4:-1]
    mean, mean_error = _richardson([_grid_mean(s) for s in coarser], order, rough, True)
    short = mean_error / max(abs(mean), 1e-300)
    if prediction.errors["busy_fraction"] > 0:
        idle, busy_error = _richardson([s.F0 for s in coarser], order, rough, True)
        short = max(short, busy_error / max(1.0 - idle, 1e-300))
    return short / goal()


def _rule_binds(achieved: float, rule: float, quantiles: float) -> bool:
    """Whether the error of the rule over ``X`` keeps a point short of its goal where twelve
    nodes per piece could bring it within: ``achieved``, the relative error of the mean and the
    busy fraction over the goal, more than twice ``rule``, the rule's part of it, and within the
    goal with the rule's part divided by 16 (over 36 M/G/1 systems, where a point was solved
    again, the rule's part with eight nodes was 1.3 to 14 times the whole stated error with
    twelve; hyperexponential job sizes the slowest: a second solve that kept 3.9e-5 stated had
    tripled the time); or ``quantiles``,
    the rule's part alone of the quantiles' errors at :data:`_QUANTILE_LEVELS` over their goal
    (ten times the mean's), beyond it by at most 16 times."""
    mean = achieved > 1 and rule > 0.5 * achieved and achieved - rule + rule / 16 <= 1
    return mean or 1 < quantiles <= 16


def _extrapolated_change(finest: float | np.ndarray,
                         before: float | np.ndarray) -> float | np.ndarray:
    """The change of the Richardson extrapolation ``(4 v_{h/4} - v_{h/2}) / 3`` of two grids
    whose values change by ``finest`` and ``before``."""
    return (4.0 * finest - before) / 3.0


def _grid_prediction(system: System, name: str, assumptions: tuple, kernel: _Kernel, model,
                     exact: bool, references: tuple,
                     plan: tuple | None = None) -> tuple[Prediction, tuple, tuple]:
    """:func:`grid_prediction` with the given ``model``: the prediction, how far it is from the
    goal (the arguments of :func:`_rule_binds`, 0 for the rule's parts without a rule to check)
    and its plan: the grids it was solved on (the solutions, from the guard's on), whether they
    are aligned, whether the cell bound stopped them and ``model.rough``. Given a ``plan`` (of
    the same system with fewer nodes over ``X``) the same grids are solved again, each by one
    march of one column along the plan's derivatives in ``F0`` (:func:`_shoot`'s ``tangent``),
    without placing the horizon or refining."""
    runtime, lam = system.runtime, system.arrival_rate
    if goal() > GOAL:
        # a coarse accuracy goal stops on coarse grids, often before their h^2 regime: the
        # rough estimates, in the refinement and in what is stated (with a seventh, over 210
        # systems refined for 1e-3, a mean 1.22 times beyond its estimate, IR Pareto(3.5)
        # Replication(4, 2) at 0.3 of the no-removal limit, successive differences falling
        # 4.6-fold; quantiles up to 1.19 times, S&X Erlang(2) x five slowdowns, MDS(4, 1) at
        # 0.85; with the rough estimates and a goal of 1e-2, at most 0.40 and 0.63 of them)
        model.rough = True
    mean_runtime = runtime.mean_runtime()
    if plan is None:
        sols, aligned, failed = _solve_grids(model, max(1.0 - kernel.lam_t * mean_runtime,
                                                        0.05))
        order = 2 if aligned else 1
        horizon = sols[0].h * (sols[0].F.size - 1)
        _check_resolved(model, horizon)
        # the finest step the refinement can reach on this horizon: where it does not resolve
        # the fastest part the refusal below is certain, before the refinement's marches (X on
        # {0.0025, 3} times a hyperexponential S, MDS(2, 3) at 0.8: 12 s of them without numba)
        _check_fastest(model, horizon / (4 * model.max_cells))
        sols, at_limit = _refine(model, sols, order, failed)
    else:
        grids, aligned, at_limit, model.rough = plan
        order = 2 if aligned else 1
        sols = [_shoot(model, s.h, s.F.size - 1, s.F0, tangent=s) for s in grids]
    plan = (sols, aligned, at_limit, model.rough)
    # the horizon, read again on the finest grid (placed on coarser ones)
    tail = _horizon_tails(model, sols[-1])[0]
    if tail > _TAIL_FINEST:
        raise RemovalError(
            f"the workload's tail at the horizon w = {sols[-1].h * (sols[-1].F.size - 1):.4g} "
            f"is {tail:.2g} on the finest grid (a load close to the stability frontier or a "
            f"long tail): the grid method cannot resolve it; use qt.simulate")
    # a finest step over model.rough_above: the grids' errors not shown to be in their h^2
    # regime, the extrapolation's remainder of the order of its change (_ROUGH_STEP and
    # _ROUGH_STEP_FASTEST)
    rough = model.rough or sols[-1].h > model.rough_above
    means, idles = [_grid_mean(s) for s in sols], [s.F0 for s in sols]
    mean, mean_error = _guarded(means, order, rough, observed=True)
    idle, busy_error = _guarded(idles, order, rough, observed=True)
    # a finest step over model.unresolved_above (the cell bound reached before _refine
    # resolved the runtime's fastest part, or a coarser goal): not even the rough estimates
    # hold, at least the last difference of the grids (_UNRESOLVED_STEP_FASTEST)
    unresolved = order == 2 and sols[-1].h > model.unresolved_above
    _check_fastest(model, sols[-1].h)
    # atoms or bends between the nodes of the finest grid (their irregular terms, see below),
    # the cell bound reached and the grids' differences not falling regularly (_REGULAR_RATIOS):
    # not shown to be in the h^2 regime, the same
    shifted = model.shifted_steps(sols[-1])
    irregular = (at_limit and order == 2 and not unresolved and shifted is not None
                 and (_irregular(means) or _irregular(idles)))
    # or their differences' ratios moving away from fourfold (model.approach_checked)
    irregular = irregular or (model.approach_checked and order == 2 and not unresolved
                              and (_moving_away(means) or _moving_away(idles)))
    if unresolved or irregular:
        mean_error = max(mean_error, abs(means[-1] - means[-2]))
        busy_error = max(busy_error, abs(idles[-1] - idles[-2]))
    # a finest step over model.coarse_above (a runtime with a density) where the cell bound
    # stopped the grids (under a coarser goal, grids its estimates stopped are rough already):
    # twice the last difference, or the larger of the last two where the grids' error can
    # stall (model.stalls: the last alone can vanish between the h^2 and h^(2 + a) terms of a
    # density c x^a at 0, a < 0); `coarse` counts the differences taken
    coarse = ((2 if model.stalls else 1) if order == 2 and at_limit
              and sols[-1].h > model.coarse_above else 0)
    if coarse:
        mean_error = max(mean_error, 2 * np.max(np.abs(np.diff(means[-coarse - 1:]))))
        busy_error = max(busy_error, 2 * np.max(np.abs(np.diff(idles[-coarse - 1:]))))
    # errors the grids' differences do not see: the finest grid solved again with the rule over
    # X doubled, and with its step stretched (atoms or bends between the nodes); twice the
    # largest change of each
    base = sols[-1]
    nodes = base.h * np.arange(base.F.size)
    checks = []   # (model, its solutions on the grids of the check)
    coarser_check = None   # the doubled rule's solution on the grid before the finest
    doubled = None if isinstance(model, _IRModel) else model.doubled()
    if doubled is not None:
        # the error of the Gauss-Legendre rule over X: twice the change on the finest grid
        # when its nodes are doubled. It depends on the grid (F is read off a piecewise
        # quadratic whose kinks the nodes over X cross), and the extrapolation weighs the
        # finest grid's 4/3: with MDS(1, 0) the mean changed by 1.4e-8, 1.4e-7 and 1.2e-7 on
        # the three grids (S&X HyperExponential([.7, .3], [3, .3]) x {1, 2}, load 0.7; it was
        # 1.0e-7 off Pollaczek-Khinchine with 7.5e-8 stated from the coarsest), by 4.2e-10,
        # 4.2e-9 and 1.2e-8 (Uniform(0.5, 1.5) x {1, 2, 4}, load 0.5: 1.6e-8 off, 3.5e-9
        # stated); on still coarser grids the kinks inflate it (6e-6 at 128 cells where the
        # true error was 2e-8)
        model.release()   # the grids' X nodes: not needed any more
        if order == 2:
            # and on the grid before: the extrapolation (4 m_{h/4} - m_{h/2}) / 3 moves by
            # the same combination of the two grids' changes, which can exceed the finest's
            # (S&X Uniform(0.5, 1.5) x {1, 2}, MDS(4, 2) at 0.4 of its frontier: the mean
            # 1.0e-8 off an independent reference with 7.1e-9 stated, 1.4e-9 off with 16 nodes;
            # found by an independent audit). Solved first: the finest grid's table of X nodes
            # then takes every other node from its (_SXModel.table)
            before = sols[-2]
            coarser_check = _shoot(doubled, before.h, before.F.size - 1, before.F0,
                                   tangent=before)
        checks.append((doubled, [_shoot(doubled, base.h, base.F.size - 1, base.F0,
                                        tangent=base)]))
        doubled.release()
    if shifted is not None:
        # atoms between the nodes: an O(h^2) term that depends on where each atom (and its
        # sums, where f has kinks) falls in its cell, about lam_t |J| h^2 dist^2 (dist to the
        # nearest node, in cells: M/D/1 at {1.0973}, load 0.6). Halving h doubles dist while
        # it is below 1/4, so h, h/2, h/4 can err alike and their differences vanish (IR {1,
        # 1.618...} at load 0.3: the idle fraction 2.4e-9 off on all three grids, a p50 1.4e-8
        # off with 1e-11 stated). The same where they stay a first-order error (more atoms than
        # are placed; S&X products first order had X {1, e^2} x S {1, 1.1} at 0.3 a p70 2.8e-4
        # off with 1.2e-4 stated), and for bends (S&X, a job size whose density jumps: the
        # O(h^3) terms of their cells; 13 of 107 held-out means up to 4.1 times beyond the
        # estimates without it). The finest grid twice more with its step stretched to move
        # the heaviest atom half a cell back and a quarter forward: twice the larger change, as
        # for the rule over X. One placement can move the term little by chance (S&X X {0.75,
        # 1.414...} x S {1, 1.5}, Redundancy-2 at 0.1875: the half-cell change of the idle
        # fraction was 2.1e-9 where the quarter moved it 1.8e-8; with the first alone the
        # extrapolation, 9.17e-9 off the method of steps, stated 9.13e-9)
        checks.append((model, [_shoot(model, step, base.F.size - 1, base.F0)
                               for step in shifted]))
    rule = np.zeros(nodes.size)
    rule_share = rule_quantiles = 0.0   # the rule over X's part of the errors, over the goal
    for check, solved in checks:
        mean_part = 2 * max(abs(_grid_mean(d) - _grid_mean(base)) for d in solved)
        busy_part = 2 * max(abs(d.F0 - base.F0) for d in solved)
        if check is doubled and coarser_check is not None:
            before = sols[-2]
            mean_part = max(mean_part, 2 * abs(_extrapolated_change(
                _grid_mean(solved[0]) - _grid_mean(base),
                _grid_mean(coarser_check) - _grid_mean(before))))
            busy_part = max(busy_part, 2 * abs(_extrapolated_change(
                solved[0].F0 - base.F0, coarser_check.F0 - before.F0)))
        mean_error += mean_part
        busy_error += busy_part
        # and of P(C > t): twice its change at each node (for the quantiles' errors)
        change = 2 * np.max([np.abs((d.sf_right if d.h == base.h else check.sf_stretched(d, nodes))
                                    - base.sf_right) for d in solved], axis=0)
        if check is doubled and coarser_check is not None:
            # at the nodes of the grid before (every other node), the extrapolation's change
            change[::2] = np.maximum(change[::2], 2 * np.abs(_extrapolated_change(
                solved[0].sf_right[::2] - base.sf_right[::2],
                coarser_check.sf_right - sols[-2].sf_right)))
        rule += change
        if check is doubled:
            rule_share = max(mean_part / abs(_grid_mean(base)),
                             busy_part / max(1.0 - base.F0, 1e-300)) / goal()
            rule_quantiles = _rule_quantiles(base, change) / (10 * goal())
    coarser = None if coarser_check is None else (doubled, coarser_check, sols[-2])
    rule_error = (nodes, rule, checks, base, coarser) if checks else None
    # int_W^inf P(C > t) dt, P(C > W) below max(_TAIL, tail) decaying at least at the rate
    # the horizon assumed (W >= log(1 / _TAIL) / rate): at most that times W / 27
    W = sols[-1].h * (sols[-1].F.size - 1)
    # rounding, growing near load 1
    floor = max(model.floor / max(idle, 1e-3), model.floor_squared / max(idle, 1e-3) ** 2)
    mean_error = max(mean_error, max(_TAIL, tail) * W, floor * abs(mean))
    sols = sols[-3:]
    # a probability: the extrapolated idle fraction may fall below 0 by its error near the
    # frontier, and clipping only moves the value towards the truth
    busy = min(max(1.0 - idle, 0.0), 1.0)
    busy_error = max(busy_error, floor * busy)
    if not kernel.remove or kernel.r == (0 if kernel.mds else 1):
        # nothing is removed, every task runs fully: the load, exactly
        busy, busy_error = kernel.lam_t * mean_runtime, 0.0
    elif model.busy_exact:
        busy, busy_error = lam * mean_runtime, 0.0
    if isinstance(model, _SXModel):
        model.release()   # the law evaluates P(C > t) off the nodes with fresh X nodes
    law = RemovalBatchTime(model, sols, mean, order, rule_error, mean_error, rough,
                           unresolved or irregular, coarse)
    h, M = sols[0].h, sols[0].F.size - 1
    extrapolation = ("Richardson-extrapolated from h/2 and h/4" if aligned else
                     "atoms (or kinks) of R between the nodes (first-order error): values of "
                     "the h/4 grid, not extrapolated")
    equation = ("f(w) = lam_t (F(w) - q(w)) phi(q(w))" if kernel.remove else
                "f(w) = lam_t (F(w) - q(w)) (no removal: the M/G/1 wait, q the sojourn law)")
    method = (f"{name}: workload level-crossing equation {equation} "
              f"(lam_t = {kernel.lam_t:.6g} tasks per server), marched on grids of step h = "
              f"{h:.4g}, h/2, h/4 on [0, {M * h:.4g}] (trapezoid with one-sided limits at the "
              f"atoms, product integration of q), busy fraction by Newton's method on F(W) = 1; "
              f"{extrapolation}, estimated errors: mean {mean_error:.2g}, "
              f"busy fraction {busy_error:.2g} (quantiles: response_time.quantile_error)")
    if doubled is not None and isinstance(model, _SXModel):
        layer = " (pieces split again below each jump)" if model.layer.size else ""
        method += (f"; the rule over X: {model.rule_nodes} Gauss-Legendre nodes per "
                   f"piece{layer}, its error from {doubled.rule_nodes}")
    if model.busy_exact and kernel.remove:
        method += ("; the busy fraction lam E[R] exactly (exponential slowdowns: given X every "
                   "task in service finishes at rate 1 / (x E[S]), and a batch ends at n "
                   "completions)")
    achieved = max(mean_error / mean, busy_error / max(busy, 1e-300))
    if GOAL < achieved <= goal():
        method += (f"; relative accuracy about {achieved:.1g}: refined for the coarser goal "
                   f"{goal_text()} asked for (qt.accuracy_goal), not {goal_text(GOAL)}")
    elif achieved > goal():
        limit = (f"{4 * model.max_cells} cells (S&X: {_budgeted(_SX_BYTES) / 2 ** 22:.0f} MB of "
                 f"X nodes on the finest grid)" if isinstance(model, _SXModel) else
                 f"{4 * model.max_cells} cells")
        limit += (f" at the grid budget {budget():g} (qt.grid_budget)" if budget() > 1 else
                  "; qt.grid_budget raises it")
        why = (f"the grid has reached its limit of {limit}" if at_limit else
               "the refinement met its targets, and the grids' observed convergence, the rule "
               "over X or rounding near load 1 add the rest")
        method += (f"; relative accuracy about {achieved:.1g}, short of the {goal_text()} goal: "
                   f"{why}")
    if unresolved:
        method += (f"; the finest step, {sols[-1].h:.3g}, does not resolve the runtime's fastest "
                   f"part ({model.fastest_text}, mean {model.fastest:.3g}): the estimates are at "
                   f"least the last difference of the grids")
    elif irregular:
        method += ("; the grids' differences did not fall regularly (not shown to be in their "
                   "h^2 regime): the estimates are at least the last difference of the grids")
    if coarse:
        method += (f"; the finest step, {sols[-1].h:.3g}, is beyond {_COARSE_STEP_MEAN:g} of "
                   f"the mean runtime (the grids not shown to be in the regime of their leading "
                   f"error): the estimates are at least twice the "
                   f"{'larger of the last two differences' if coarse == 2 else 'last difference'}"
                   f" of the grids")
    prediction = Prediction(system, method=method, exact=exact, stable=True, mean=mean,
                            response_time=lambda: law, busy_fraction=busy, cost=busy / lam,
                            assumptions=assumptions, references=references,
                            errors={"mean": mean_error, "busy_fraction": busy_error})
    return prediction, (achieved / goal(), rule_share, rule_quantiles), plan


def _rule_quantiles(base: _Solution, change: np.ndarray) -> float:
    """The largest relative error of a quantile at levels 0.05 to 0.999 that the change
    ``change`` of ``P(C > t)`` at the nodes of ``base`` makes, where it is at most 16 times the
    quantiles' goal (beyond, more nodes over ``X`` cannot bring it within): at each node, the
    largest change within two nodes over the density (a central difference; at a bend of
    ``P(C > t)`` :meth:`RemovalBatchTime._quantile_errors` takes the smaller one-sided one, so
    this share can be smaller than the stated errors' there); not next to a jump of
    ``P(C > t)`` (a level inside it has the jump's time as its quantile), nor at the ends."""
    sf, h = base.sf_right, base.h
    i = np.arange(1, sf.size - 1)
    density = (sf[i - 1] - sf[i + 1]) / (2 * h)
    jump = base.sf_left - base.sf_right > 0
    near = jump[:-2] | jump[1:-1] | jump[2:]
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(change, 2, mode="edge"), 5)
    body = (sf[i] >= 1e-3) & (sf[i] <= 0.95) & (density > 0) & ~near
    with np.errstate(divide="ignore", over="ignore"):
        ratio = windows[i[body]].max(axis=1) / density[body] / (i[body] * h)
    ratio = ratio[ratio <= 16 * 10 * goal()]
    return float(ratio.max(initial=0.0))


def _analyze_sx(system: System) -> Prediction:
    """S&X with removal: the grid method with ``E_X`` (:class:`_SXModel` for a discrete ``S``,
    :class:`.removal_continuous._SXContinuousModel` for a continuous one).
    Stability: a failed solve beyond the no-removal limit is decided by :func:`frontier`."""
    policy, runtime, lam = system.policy, system.runtime, system.arrival_rate
    if math.isinf(runtime.X.moment(2)) or math.isinf(runtime.S.moment(2)):
        raise NotImplementedError(
            f"{policy.label()} with removal: runtimes with E[R^2] = inf have a workload tail the "
            f"grid method cannot resolve; use qt.simulate")
    where = ("k -> infinity" if system.servers is None
             else f"k -> infinity limit used as an approximation for k = {system.servers}")
    assumptions = ("Poisson batch arrivals at arrival_rate / n per server", "FCFS at every server",
                   "removal: a task's unfinished work is removed when its batch (MDS) or its job "
                   "(replication) completes",
                   "S&X: a batch is n equal-sized jobs, so all its tasks share one job size X; "
                   "slowdowns i.i.d. per task",
                   "k -> infinity (the servers a batch uses are independent)")
    rule = ("Gauss-Legendre over X split at the jumps" if runtime.S.atoms is not None else
            "continuous slowdown: fixed X nodes, Gauss-Legendre in probability space, each an "
            "IR convolution with x S")
    if runtime.S.atoms is not None and _one_job_size(runtime):
        rule = "one job size x: the tasks' runtimes x S are independent, the IR march"
    elif runtime.S.atoms is None:
        from .removal_continuous import _phase_form

        if _phase_form(runtime.S) is not None:
            rule += ", marched by the states of the slowdown's phases"
    name = (f"{policy.label()}, S&X runtimes, with removal: mean-field, {where}, conditioned on "
            f"the batch's X ({rule})")
    kernel = _kernel_of(policy, lam)
    if kernel.lam_t * runtime.mean_runtime() >= 1:
        # below the necessary bound the solve decides; no frontier under S&X yet
        work = runtime.X.mean() * (necessary_rate(policy, runtime.S) ** -1)
        if lam * work >= 1:
            method = (f"{name}: unstable, arrival_rate >= {1 / work:.6g} (a batch needs at least "
                      f"the runtimes of the n completed tasks)")
            return Prediction(system, method=method, exact=False, stable=False, mean=math.inf,
                              busy_fraction=1.0, cost=math.inf, assumptions=assumptions,
                              references=_REFERENCES)
    return _grid_or_frontier(system, name, assumptions, kernel)


def _unstable_or_refuse(system, runtime, name, assumptions, kernel, error) -> Prediction:
    """No stationary law on the grid, at a rate :func:`_front_side` does not put beyond the
    frontier: beyond the no-removal limit decide by the frontier
    (``queuetheory.analysis.frontier_verdict``), else refuse pointing to simulate."""
    policy, lam = system.policy, system.arrival_rate
    if kernel.lam_t * runtime.mean_runtime() >= 1:
        law = runtime if isinstance(runtime, SX) else runtime.R
        try:
            lam_star, spread = frontier(policy, law, full_output=True)
        except RemovalError:
            lam_star = None
        if lam_star is not None:
            if not frontier_verdict(f"{policy.label()} with removal", lam, lam_star, spread):
                return _beyond_frontier(system, name, assumptions, lam_star, spread)
            error = f"{error} (stability frontier {lam_star:.6g})"
    hint = ""
    if (policy.m == 0) if isinstance(policy, MDS) else (policy.d == 1):
        hint = (" (or qt.analyze with remove=False: nothing is redundant here, so that is the "
                "same system; its batch mean integrates the runtime's tail, slowly for power "
                "tails)")
    raise NotImplementedError(f"{policy.label()} with removal: {refusal(error)}{hint}")
