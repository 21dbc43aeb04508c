"""S&X runtimes with a continuous slowdown ``S`` in the workload equation of :mod:`.removal`.

Given the batch's job size ``X = x`` the tasks are independent with runtime ``x S``, so

    q(w | x) = P(V + x S <= w) = F(0) G_S(w / x) + int_0^w f(v) G_S((w - v) / x) dv,

an IR convolution of the same ``f`` with the runtime law of ``x S``. On fixed ``X`` nodes
``x_j`` (the atoms of ``X``, or Gauss-Legendre nodes in probability space on the pieces of
``removal._x_levels``, graded towards 0, where ``q(w | x)`` changes on the scale ``x ~ w``, and
towards 1, where ``F_X^{-1}`` is singular, split at the kinks of ``F_X^{-1}``; one node per atom
of a job size mixing atoms with a density) the equation becomes

    f(w) = lam_t sum_j w_j (F(w) - q(w | x_j)) phi(q(w | x_j)),
    P(C > t) = sum_j w_j Psi(q(t | x_j)),

``J`` IR kernels sharing one ``f``: the product-integration weights of :class:`._Weights` per
node, the history sums by the online FFT convolution of :class:`._History` with the ``J``
kernels at once (one transform of ``f`` per block, ``J`` products), the nodes of a block by
direct sums (compiled with numba when installed). Without atoms ``f^- = f^+`` at every node
but 0, so each kernel convolves ``f`` once with ``a_k + b_k`` (the IR march's two kernels
summed; the term ``b_i f^+_0`` that adds, where ``f^-_0 = 0``, taken away from the history at
the start). The sums are those of ``1 - G``, as in the
IR march: ``F(w_i) - q(w_i | x_j)`` is their sum, not ``F`` minus a sum close to 1. Taken as
that difference, the march drifted past the tail, ``F`` rising above 1, the more so the more
cells (X = 1 times Erlang(2, 2) slowdowns at load 0.99, step 0.15: the mean 2.4e-5, 2.0e-5
and -1.4e-6 off Pollaczek-Khinchine on horizons 3000, 6000 and 12000; 2.4604e-5 on all three
now, as the IR march of ``R = S``). Cost ``O(J M log^2 M)`` per march. A phase-type
slowdown (exponential, Erlang, hyperexponential, mixtures of them; :class:`_Phases`) needs
no history: ``F - q(. | x_j)`` is the sum of the states of its phases, each a convolution of
``f`` with ``e^(-mu u) (mu u)^m / m!``, stepped from node to node in ``O(J sum_c k_c (k_c +
1) / 2)`` for parts of ``k_c`` phases (compiled; ``O(J P^2)`` for ``P`` phases with numpy and
between the nodes), the cells' integrals exact (the same product integration: the arrays of
the two marches agree to rounding where Gauss-Legendre resolves ``x_j S`` on a cell); no
``log^2 M`` factor (exponential ``X`` times Erlang(2, 2) slowdowns, MDS(4, 2) at load 0.5,
mean and p99 with numba: 0.20 s of CPU where the history took 2.84 s in the same run). A
piecewise-linear slowdown (a uniform, a mixture of uniforms; :class:`_Windows`) needs no
history either when compiled: its kernels are affine in the lag between their knots, so the
history is a few running sums per node, ``O(J)`` per node; ``q`` between the nodes in closed
form. The rule over ``X`` has an error of its own, estimated by doubling its nodes on one grid
(:func:`.removal.grid_prediction`). ``docs/theory/removal.md`` ("S&X, continuous slowdowns")
holds the derivation and the checks.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .removal import (
    _COARSE_STEP_MEAN,
    _FRONT_ROUGH_STEP_FASTEST,
    _KERNEL_CHUNK,
    _LEAF,
    _ROUGH_STEP_FASTEST,
    _UNRESOLVED_STEP_FASTEST,
    _batch_sf_many,
    _budgeted,
    _fastest_mean,
    _GridModel,
    _History,
    _IRModel,
    _jit_inline,
    _jit_sums,
    _kink_lattice,
    _kinks,
    _memoryless_given_x,
    _phi_many,
    _piece_rule,
    _power_at_zero,
    _q_at,
    _sx_lower,
    _sx_max_cells,
    _Weights,
    _x_levels,
)

_NODES = 6
"""Gauss-Legendre nodes per piece of ``_U_LEVELS`` over ``X`` (two on the low pieces:
:func:`.removal._piece_rule`; doubled once for the error estimate; pieces not graded towards 0
gave 1.3e-4 errors for Erlang(2) x Erlang(2), d = 2, and four nodes 9.6e-7 where six give
2.3e-8)."""
_KNEE = 64.0
"""The rule over a continuous ``X`` has a level at ``F_X(E[X] / _KNEE)`` (its piece of
``_U_LEVELS`` split there; not where that would lower the grids' cell bound, and the rule's
check, :meth:`_SXContinuousModel.doubled`, splits where its model does): where
``x_j E[S]`` is about a grid's step, ``f`` has a boundary layer of that width at ``w = 0``
(the atom of ``V`` at 0 through ``G(w / x_j)``) that the trapezoid spreads over ``h / 2``,
and six nodes on a piece spanning it (``u`` in [0.003, 0.05] for an exponential ``X``)
integrate it differently on each grid: the grids' differences did not fall regularly and the
cell bound stopped them short of the goal (exponential ``X`` times Weibull(2), MDS(4, 2) at
load 0.5: ratios 3.996, 3.650, 4.958, 1.3e-6 relative stated; 12 nodes per piece gave 4.003,
4.002, 3.999). With the split, against the solution with 24 nodes per piece or
Pollaczek-Khinchine (Weibull(2), gamma(2.5), lognormal(0.5), uniform and Pareto slowdowns,
exponential and Erlang(2) job sizes, MDS(4, 2) at 0.5 and M/G/1 at 0.5 and 0.9): Weibull,
gamma and lognormal slowdowns, MDS(4, 2), 2.1e-7, 2.0e-7 and 2.3e-7 stated where 1.3e-6,
2.7e-6 and 3.7e-7 had been; M/G/1 within the goal in 9 of 16 systems, 8 before; no value
beyond half its estimate; the time within the noise of the runs (measured by an independent
audit); a phase-type slowdown's march, whose cost grows with the nodes, took 5 to 10% more
(exponential ``X`` times Erlang(2, 2) and a hyperexponential, MDS(4, 2) and MDS(20, 10): 0.23
to 0.41 s where 0.21 to 0.37, the stated errors 3 to 11% smaller). Where steps are coarser
(long horizons) the knee lies higher; uniform slowdowns at load 0.9 moved further from
Pollaczek-Khinchine (9.8e-7, then 3.8e-6 relative off, with 1.2e-5 and 2.5e-5 stated)."""
_COMPILED_LEAF = 32
"""Nodes per block of the compiled block solve (:func:`_mix_leaf`): its direct sums cost
``O(32 J)`` per node and column, and the larger blocks spare two levels of FFT products
(measured: 4.4 s for a point where blocks of 16 took 4.8 s and of 64, 5.0 s)."""
_SMALL_ATOM = 0.1
"""An atom of the job size whose runtimes' mean is below this times the mean runtime is the
runtime's fastest part, whose grids are refused where they do not resolve it
(:attr:`._GridModel.refuse_unresolved`). M/G/1 against Pollaczek-Khinchine, 81 systems with
atoms of 1e-4 to 0.12 beside 1 to 3 (gamma(3.3), exponential and uniform slowdowns, loads 0.5
to 0.98): with at least the last difference of the grids as the estimates, the seven beyond
them (up to 10.9 times) had such an atom below 0.06 of the mean runtime; from 0.087 on, at
most 0.81 of them (exponential slowdowns at 0.98)."""
_BYTES = 2 ** 29
"""Memory of the largest shoot of an analysis on its finest grid (:func:`._shoot`: its marches,
the interpolation at the root, ``P(C > t)`` at the nodes), which bounds the grids
(:attr:`_SXContinuousModel.max_cells`; beyond J = 3896 X nodes its floor of 128 cells
holds)."""
_SHOOT = 1.2
"""A shoot's memory over its march's (:func:`_march_bytes`): Newton's steps hold the last
march's arrays while the next runs, and the root's interpolation and ``P(C > t)`` take their
own (the march's bound alone: shoots measured 1.015 to 1.056 of it, an analysis 1.022; with
1.1, shoots at the bound 0.92 to 0.99 of it with numba and 1.015 with numpy operations; with
1.2, 0.85 to 0.93)."""


def _march_bytes(nodes: int, columns: int) -> int:
    """Bytes per cell of a march with ``nodes`` ``X`` nodes and ``columns`` columns: per node
    8 for ``1 - G``, 32 for the padded kernels, 16 per column for the history and ``q`` and 40
    for the kernels' spectra and temporaries, and 512 per column for the temporaries of one chunk
    of :data:`._KERNEL_CHUNK` kernels (allocated, as ``tracemalloc`` counts them: 90 to 106
    per node measured with two columns, 110 to 124 with three, at 512 to 8192 cells and J =
    108 to 561; 168 with three and J = 32; the process's resident memory is lower, the padding
    left unmapped. The history alone had been bounded: an analysis of J = 282 nodes peaked at
    471 MB, 634 MB resident). Kept since the two kernels became one (:class:`_MixWeights`: 8
    for ``b_i``, 16 for the padded kernel, half the spectra; a march and its weights measured
    80 to 117 per node with two columns, at 4096 and 16384 cells and J = 108 and 213, where
    the two kernels took 85 to 143): the grids stop where they did."""
    return nodes * (80 + 16 * columns) + 512 * columns


def _shoot_bytes(nodes: int, columns: int, phases: int | None) -> int:
    """:meth:`_SXContinuousModel.march_bytes` for ``phases`` phases of a phase-type slowdown
    (``None``: the history's march, :func:`_march_bytes`)."""
    if phases is None:
        return _march_bytes(nodes, columns)
    per_node = 8 * (columns + 3) + 8 * (columns + 1) * phases / _CHECKPOINT
    return int(nodes * per_node) + 128 * columns


def _memory_cells(nodes: int, form: tuple | None) -> int:
    """The cells of the finest grid (a quarter of them: ``max_cells``) whose largest shoot, of
    ``nodes`` ``X`` nodes and two columns, fits :data:`_BYTES` (``form``: the slowdown's
    :func:`_phase_form`)."""
    phases = None if form is None else int(np.sum(form[2]))
    return max(128, int(_budgeted(_BYTES) / (4 * _SHOOT * _shoot_bytes(nodes, 2, phases))))


def _max_cells(J: int, discrete_x: bool, form: tuple | None) -> int:
    """:attr:`_SXContinuousModel.max_cells` of ``J`` ``X`` nodes: the S&X cell bound, and the
    memory of the largest shoot (:func:`_memory_cells`: the rule's check, ``2 J`` nodes, for a
    continuous ``X``, else Newton's marches, ``J``)."""
    return _sx_max_cells(discrete_x, J, _memory_cells(J if discrete_x else 2 * J, form))


_FFT_MIN = 64
"""Blocks from this size on are convolved by FFT (the Toeplitz kernels of ``J`` nodes would
take ``2 J P^2`` floats per block size)."""


class _MixWeights:
    """The :class:`._Weights` of ``x_j S`` for every ``X`` node side by side, those of ``1 -
    G`` as the IR march takes them: ``Gbar`` of shape ``(M + 1, J)`` (``P(x_j S > w_i)``;
    continuous: no jumps), ``beta1`` and ``slope`` (``beta_1`` and ``h / 2 - beta_1`` of each
    node), the kernel of :class:`._History` (``a_k + b_k = alpha_bar_k + beta_bar_{k+1}``
    padded, of shape ``(size, J)``: ``f^- = f^+`` at every node but 0, one convolution instead
    of two) and ``head`` (``b_i = beta_bar_{i+1}`` at the nodes, of shape ``(M + 1, J)``: the
    term ``b_i f^+_0`` the kernel adds where ``f^-_0 = 0``), filled node by node (the weights of
    one node at a time besides them: stacked from a list, and copied by each march's history,
    the two kernels had taken 72 bytes per cell and node where these take 32, the padding's
    zero pages left unmapped). One kernel, not two: a march of ``exp X`` times Erlang(2, 2)
    slowdowns, MDS(4, 2) at load 0.5, about 0.6 of the CPU time, the values within 1e-14."""

    def __init__(self, model: _SXContinuousModel, h: float, M: int, leaf: int):
        J = len(model.laws)
        # each filled as (J, .) rows, contiguous, and read as its transpose
        Gbar, head = np.empty((J, M + 1)), np.zeros((J, M + 1))
        kernel = np.zeros((J, _History.size_of(M, leaf)))
        self.beta1, self.slope = np.empty(J), np.empty(J)
        last = np.zeros(J, dtype=np.intp)   # the largest lag where each kernel is not 0
        for j, (R, kinks) in enumerate(zip(model.laws, model.kinks)):
            w = _Weights(R, h, M, kinks, bars=True)
            Gbar[j], self.beta1[j], self.slope[j] = w.Gbar_left, w.beta1, w.beta_bar[0]
            kernel[j, 1:M + 1] = w.alpha_bar
            kernel[j, 1:M] += w.beta_bar[1:]
            head[j, 1:M] = w.beta_bar[1:]
            nonzero = np.flatnonzero(kernel[j, :M + 1])
            last[j] = nonzero[-1] if nonzero.size else 0
        self.Gbar, self.head, self.kernels = Gbar.T, head.T, (kernel.T, None)
        # per chunk of kernels, the lags the history's blocks need (._History's reach: the
        # short runtimes of small x_j take a small FFT in the large blocks)
        self.reach = np.maximum.reduceat(last, np.arange(0, J, _KERNEL_CHUNK))
        self.spectra = {}


_REFRESH = 256
"""The running sums of :class:`_Windows` are summed afresh every this many nodes at least (and
at least every window's length): each update adds its rounding, which the tail, where the
sums fall far below their peak, would otherwise carry on."""


class _Windows:
    """A slowdown whose CDF is piecewise linear (``Distribution._piecewise_linear``: a uniform, a
    mixture of uniforms) at the ``X`` nodes, for the compiled march (:func:`_march_windows`).

    ``1 - G`` of ``x_j S`` is linear between its knots ``x_j c_s`` (``c`` is 0, the kinks of
    ``S`` and its upper end, beyond which ``1 - G = 0``), so the fused kernel of
    :class:`_MixWeights` at a lag ``l`` whose hat ``[(l - 1) h, (l + 1) h]`` holds no knot is
    ``h (1 - G(l h))``, affine in ``l`` between two knots. There ``sum_l kappa_l f_(i - l)`` is
    ``h (1 - G(U h)) Z0 + h d Z1`` with the running sums ``Z0 = sum_(l = L..U) f_(i - l)`` and
    ``Z1 = sum_(l = L..U) (U - l) f_(i - l)`` (``d`` the fall of ``1 - G`` per step: no
    cancellation, every term is >= 0), stepped from node to node in ``O(1)`` and summed
    afresh every :data:`_REFRESH` nodes; the few lags whose hat holds a knot, and the cells of
    ``F(0) (1 - G(i h))`` and ``alpha_bar_i f^+_0``, from the cells' integrals (Simpson's rule
    on each part between knots, exact for a linear ``1 - G`` times a linear weight). The same
    approximation as the history's convolution, ``O(J)`` per node instead of ``O(J log^2
    M)``."""

    def __init__(self, S, x: np.ndarray):
        upper = S._support()[1]
        self.c = np.unique(np.concatenate([[0.0], S._kinks(), [upper]]))
        self.gbar = np.asarray(S._sf_all(self.c), dtype=float)   # 1 - G_S at the knots
        self.S, self.x = S, x

    def moments(self, lo: np.ndarray, j: np.ndarray, h: float,
                law) -> tuple[np.ndarray, np.ndarray]:
        """``(1 / h) int (u - lo) g(u) du`` and ``(1 / h) int (lo + h - u) g(u) du`` over the
        cells ``[lo, lo + h]`` of the nodes ``j`` (``g(u) = law(u / x_j)``, ``law`` the slowdown's
        ``_sf_all`` or ``_cdf_all``), by
        Simpson's rule on the parts between the knots (exact: ``g`` is linear on each)."""
        hi = lo + h
        ends = np.sort(np.concatenate([lo[:, None], np.clip(self.x[j, None] * self.c, lo[:, None],
                                                             hi[:, None]), hi[:, None]], axis=1),
                       axis=1)
        a, b = ends[:, :-1], ends[:, 1:]
        mid = 0.5 * (a + b)
        jj = np.broadcast_to(j[:, None], a.shape)
        ga, gm, gb = (law(p / self.x[jj]) for p in (a, mid, b))
        rising = (b - a) / 6 * ((a - lo[:, None]) * ga + 4 * (mid - lo[:, None]) * gm
                                + (b - lo[:, None]) * gb) / h
        falling = (b - a) / 6 * ((hi[:, None] - a) * ga + 4 * (hi[:, None] - mid) * gm
                                 + (hi[:, None] - b) * gb) / h
        return rising.sum(axis=1), falling.sum(axis=1)

    def q_at(self, sol, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``q(t | x) = F(t) - D``, ``D = F(0) (1 - G(t / x)) + int_0^t f(v) (1 - G((t - v) /
        x)) dv``, at the times ``t >= 0`` and ``X`` values ``x`` (arrays of one shape), for the
        grid's piecewise-linear ``f`` (falling to 0 over the cell past the horizon, 0 beyond:
        the approximation of :func:`._q_at`) in closed form: on a part ``[e_s, e_(s + 1)]`` of
        ``x S`` where ``1 - G(u) = g_(s + 1) + d_s (e_(s + 1) - u)``, with ``a' = t - e_(s +
        1)``, ``a = max(a', 0)`` and ``b = t - e_s``,

            int_a^b f(v) (1 - G(t - v)) dv = g_(s + 1) (F(b) - F(a)) + d_s ((a - a') (F(b) -
            F(a)) + int_a^b (F(b) - F(v)) dv),

        every term >= 0; ``int F`` from its running sum over the cells, kept with its
        rounding (two floats: the difference of two such sums is then exact to the rounding of
        the difference, not of the sums), so that ``q`` is within a few units of rounding in
        absolute terms (measured: 3.4e-15 off mpmath at most, :func:`._q_at` 4.7e-15; on
        6000 cells 7e-15, :func:`._q_at` 1.9e-14). ``O(1)`` per time and node, where
        :func:`._q_at` integrates over every cell of the runtime's support."""
        h, M = sol.h, sol.F.size - 1
        fa = np.asarray(sol.f_right, dtype=float)                  # cell k: fa_k .. fb_k
        fb = np.append(sol.f_left[1:], 0.0)
        F = np.append(sol.F, sol.F[-1] + 0.5 * h * fa[-1])         # nodes 0..M + 1
        cell = h * F[:-1] + h * h * (fa / 3 + fb / 6)
        top = np.concatenate([[0.0], np.cumsum(cell)])
        # the rounding of each step of the running sum (two-sum), summed apart
        prev, step = top[:-1], cell
        back = top[1:] - prev
        low = np.concatenate([[0.0], np.cumsum((prev - (top[1:] - back)) + (step - back))])
        V = h * (M + 1)

        def at(v):
            """``F(v)`` and ``int_0^v F`` as its node's running sum (two parts) and the part in
            its cell, and the node and the offset from it."""
            k = np.minimum(v / h, M + 1).astype(np.intp)
            tau = v - h * k
            inside = k <= M
            kc = np.minimum(k, M)
            a_, b_ = fa[kc], fb[kc]
            slope = np.where(inside, (b_ - a_) / h, 0.0)
            first = np.where(inside, a_, 0.0)
            Fv = F[k] + tau * (first + 0.5 * slope * tau)
            part = tau * (F[k] + tau * (0.5 * first + slope * tau / 6))
            return Fv, top[k], low[k], part, k, tau

        def density(v):
            """``f(v)`` (the march's ``f`` linear in each cell, 0 past the horizon's next)."""
            k = np.minimum(v / h, M + 1).astype(np.intp)
            kc = np.minimum(k, M)
            return np.where(k <= M, fa[kc] + (fb[kc] - fa[kc]) * (v / h - k), 0.0)

        t = np.asarray(t, dtype=float)
        tc = np.minimum(t, V)
        # t / x and x c_s overflow to inf only where 1 - G is flat (0 or 1) at the time
        with np.errstate(over="ignore"):
            D = sol.F0 * self.S._sf_all(t / x)
            for s in range(self.c.size - 1):
                # finite (t = inf less an inf had been NaN)
                e0, e1 = (np.minimum(x * c, np.finfo(float).max) for c in self.c[s:s + 2])
                g1 = self.gbar[s + 1]
                # d_s = fall / x: its terms divided by x (at a subnormal x, x c_s is 0 and d_s
                # inf, and a huge x c_s inf, each had made q NaN; found by review)
                fall = (self.gbar[s] - g1) / (self.c[s + 1] - self.c[s])
                a_raw = t - e1
                a = np.clip(a_raw, 0.0, V)
                b = np.clip(t - e0, 0.0, V)
                Fa, ta, la, pa, ka, oa = at(a)
                Fb, tb, lb, pb, kb, ob = at(b)
                mass = Fb - Fa
                # int_a^b (F(b) - F(v)) dv: the running sums where [a, b] spans two cells or more
                # (their rounding, about that of (b - a) F, is then within that of d_s's inverse),
                # b - a taken from the nodes and offsets the sums used (b - a itself differs from it
                # by the rounding of the times, 1e-14 at t = 100: times F and d_s, 2e-13 in q);
                # else int_a^b f(w) (w - a) dw over its parts in the cells (Simpson's, exact: the
                # sums' in-cell parts round at h F, beyond the narrow part's width)
                width = h * (kb - ka) + (ob - oa)
                rest = np.where(b - a >= 2 * h,
                                width * Fb - (((tb - ta) + (lb - la)) + (pb - pa)), 0.0)
                near = b - a < 2 * h
                if near.any():
                    lo, hi = a[near], b[near]
                    for piece in range(3):
                        p0 = np.minimum(lo if piece == 0 else h * (np.floor(lo / h) + piece), hi)
                        p1 = np.minimum(h * (np.floor(lo / h) + piece + 1), hi)
                        mid = 0.5 * (p0 + p1)
                        rest[near] += (p1 - p0) / 6 * (density(p0) * (p0 - lo)
                                                       + 4 * density(mid) * (mid - lo)
                                                       + density(p1) * (p1 - lo))
                beyond = np.maximum(self.c[s + 1] - t / x, 0.0)   # (a - a') / x
                D = D + g1 * mass + fall * (beyond * mass + rest / x)
        return at(tc)[0] - D

    def plan(self, h: float, M: int) -> dict:
        """The arrays of :func:`_window_march` on the grid ``(h, M)``."""
        J = self.x.size
        nodes = np.arange(J)
        Gbar = self.S._sf_all(h * np.arange(M + 1)[:, None] / self.x)   # (M + 1, J)
        # alpha_bar_i of cell i = [(i - 1) h, i h]: Simpson's on a cell without a knot, the
        # integrals of the cells holding one (either side of its node, where it is on one)
        abar = np.zeros((M + 1, J))
        abar[1:] = h * (Gbar[:-1] / 6 + Gbar[1:] / 3)
        knots = self.x[:, None] * self.c[None, 1:]                 # (J, r)
        cell = np.floor(np.minimum(knots / h, M + 1)).astype(np.intp)
        cells = np.stack([cell, cell + 1], axis=-1)
        jj = np.broadcast_to(nodes[:, None, None], cells.shape)
        keep = (cells >= 1) & (cells <= M)
        cells, jj = cells[keep], jj[keep]
        sf, cdf = self.S._sf_all, self.S._cdf_all
        abar[cells, jj] = self.moments(h * (cells - 1.0), jj, h, sf)[0]
        slope = self.moments(np.zeros(J), nodes, h, sf)[1]
        beta1 = self.moments(np.zeros(J), nodes, h, cdf)[1]
        # the lags whose hat holds no knot, segment by segment: windows (L, U); the knots in
        # cells, clipped past the grid in floating point before the cast (x c / h beyond 2^63
        # had cast to a negative lag: an X atom of 1e18, found by review)
        e = np.minimum(self.x[:, None] * self.c[None, :] / h, M + 2)   # (J, r + 1)
        tol = 1e-12
        L = np.maximum(np.ceil(e[:, :-1] - tol).astype(np.intp) + 1, 1)
        U = np.minimum(np.floor(e[:, 1:] + tol).astype(np.intp) - 1, M - 1)
        open_ = (L <= U) & (self.gbar[:-1] > 0)[None, :]
        win_j, win_s = np.nonzero(open_)
        lo, up = L[open_], U[open_]
        fall = (self.gbar[win_s] - self.gbar[win_s + 1]) / (self.c[win_s + 1] - self.c[win_s])
        # the other lags up to M - 1, those whose hat holds a knot (the one or two beside
        # each, sorted per node): the hats' integrals
        near = np.concatenate([np.floor(e[:, 1:] + tol), np.ceil(e[:, 1:] - tol)],
                              axis=1).astype(np.intp)
        owner = np.broadcast_to(nodes[:, None], near.shape)
        keep = (near >= 1) & (near <= M - 1)
        key = np.unique(owner[keep] * (M + 1) + near[keep])
        owner, lag = key // (M + 1), key % (M + 1)
        value = (self.moments(h * (lag - 1.0), owner, h, sf)[0]
                 + self.moments(h * lag, owner, h, sf)[1])
        start = np.searchsorted(owner, np.arange(J + 1))
        return dict(Gbar=Gbar, abar=abar, slope=slope, beta1=beta1,
                    lag=lag, value=value, start=start.astype(np.intp),
                    win_j=win_j.astype(np.intp), win_lo=lo.astype(np.intp),
                    win_hi=up.astype(np.intp), top=h * Gbar[up, win_j],
                    step=h * h * fall / self.x[win_j],
                    period=np.maximum(_REFRESH, up - lo + 1).astype(np.intp))


_PHASES = 16
"""Most phases (Erlang stages summed over the components) of a slowdown marched by its states
(:class:`_Phases`); beyond, by the history convolution of :class:`._History`."""
_CHECKPOINT = 16
"""The phase march keeps its states every this many nodes at least, the starts of ``q``
between the nodes (:meth:`_Phases.q_at`: at most that many steps to a time's cell)."""
_STATES_BYTES = 2 ** 22
"""Memory of the states a solution keeps (:meth:`_Phases.every`: the checkpoints spaced by
:data:`_CHECKPOINT` times the power of 2 that holds them within this). A prediction keeps
four solutions (its three grids and the rule's check): an exponential job size times an
Erlang(16) slowdown had kept 55 MB of states every 16 nodes."""
_Q_AT_BYTES = 2 ** 25
"""Memory of the arrays of one block of times in :meth:`_Phases.q_at` (its steps ``E(tau)``
take ``J P^2`` floats per time: 20000 times of an Erlang(16) slowdown at once had taken 4 GB,
found by review)."""


def _phase_form(S) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(p, rate, k)`` with ``P(S > s) = sum_c p_c e^(-rate_c s) sum_{m < k_c} (rate_c s)^m /
    m!`` (:meth:`.Distribution._phases`) for a slowdown without atoms of at most
    :data:`_PHASES` phases (``Exponential``, ``Erlang``, ``HyperExponential`` and mixtures of
    them); else ``None``."""
    form = None if S._has_atoms else S._phases()
    return form if form is not None and 0 < form[2].sum() <= _PHASES else None


class _Phases:
    """A phase-type slowdown (:func:`_phase_form`) at the ``X`` nodes: ``x_j S`` has phases
    ``(c, m)``, ``m < k_c``, of rate ``rate_c / x_j``, and ``F(w) - q(w | x_j) = sum_(c, m)
    H_(c, m)(w)`` with ``H_(c, m)(w) = p_c (F(0) phi_m(w) + int_0^w f(v) phi_m(w - v) dv)``,
    ``phi_m(u) = e^(-mu u) (mu u)^m / m!``. As ``phi_m(u + h) = sum_(l <= m) phi_l(u)
    phi_(m-l)(h)``, with ``f`` linear on the cell (the march's approximation):

        H(w + h) = E(h) H(w) + u(h) f^+(w) + v(h) f^-(w + h),

    ``E_(m, l) = phi_(m-l)(h)``, ``u_m = p_c int_0^h phi_m(s) s / h ds = p_c h (m + 1) P(m + 2,
    z) / z^2`` and ``v_m = p_c int_0^h phi_m(s) (1 - s / h) ds = p_c h (P(m + 1, z) / z - (m +
    1) P(m + 2, z) / z^2)``, ``z = mu h``, ``P`` the regularized lower incomplete gamma
    function: the product integration of :class:`._Weights` with its cells' integrals exact,
    ``E`` block lower triangular (one block per part ``c``): ``O(J sum_c k_c (k_c + 1) / 2)``
    per node compiled, ``O(J P^2)`` with numpy, instead of the history's convolution
    (``sum_m v_m`` is the weight ``beta_bar_1`` of ``f^-`` at the node)."""

    def __init__(self, form: tuple, x: np.ndarray):
        p, rate, k = form
        part = np.repeat(np.arange(k.size), k)
        self.order = np.concatenate([np.arange(c) for c in k])
        self.start = np.repeat(np.cumsum(k) - k, k)
        self.weight = p[part]
        self.first = np.where(self.order == 0, self.weight, 0.0)
        self.rate = rate[part][None, :] / x[:, None]            # (J, P)
        # phase b feeds phase m of its part (b <= m) with phi_(m-b)(h), the phase start + m - b
        m, fed = np.meshgrid(np.arange(self.order.size), np.arange(self.order.size),
                             indexing="ij")
        self.feeds = (self.start[m] == self.start[fed]) & (self.order[fed] <= self.order[m])
        self.lag = np.where(self.feeds, self.start[m] + self.order[m] - self.order[fed], 0)
        self.top = 800.0 / self.rate.min()   # phi_m(u) below 1e-300 from here on

    def every(self, M: int) -> int:
        """The spacing of the states kept by a march of ``M`` cells: :data:`_CHECKPOINT` times
        the smallest power of 2 that holds a solution's (``8 J P (M / every + 1)`` bytes; the
        march's, one set per column) within :data:`_STATES_BYTES`; at most ``M`` (two sets, which
        exceed it only for ``J P`` above 262144)."""
        every, size = _CHECKPOINT, 8 * self.rate.size
        while size * (M // every + 1) > _STATES_BYTES and every < M:
            every *= 2
        return every

    def step(self, tau) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(phi(tau), E(tau), u(tau), v(tau))`` for steps ``tau >= 0`` (a float, or of shape
        ``(T, 1, 1)``): ``phi_m`` of each phase and the rest of shape ``(..., J, P)``, ``E`` of
        ``(..., J, P, P)``; at ``tau = 0``, ``E = I`` and ``u = v = 0``. Below ``z = mu tau =
        1e-5``, ``u`` and ``v`` by the series ``P(a, z) = z^a e^(-z) / a! (1 + z / (a + 1) + z^2
        / ((a + 1) (a + 2)) + ...)`` to ``z^2`` (relative remainder below 2e-16): the closed form
        divides by ``z^2``, which underflows below 1.5e-154 (``q`` at times below 1e-154 had been
        NaN; found by review)."""
        z = self.rate * tau
        m = self.order
        large = z >= 1e-5
        zs = np.where(large, z, 1.0)
        phi = np.exp(-z + special.xlogy(m, z) - special.gammaln(m + 1))
        one, two = special.gammainc(m + 1, zs), special.gammainc(m + 2, zs)
        u = self.weight * tau * (m + 1) * two / (zs * zs)
        v = self.weight * tau * (one / zs - (m + 1) * two / (zs * zs))
        # the series: u = w tau (m + 1) z^m e^(-z) S(m + 2) / (m + 2)!, v = w tau z^m e^(-z)
        # ((m + 2) S(m + 1) - (m + 1) S(m + 2)) / (m + 2)!, S(a) = 1 + z / (a + 1) + ...
        zt = np.where(large, 0.0, z)
        lead = self.weight * tau * phi / ((m + 1) * (m + 2))      # w tau z^m e^(-z) / (m + 2)!

        def series(a):
            return 1.0 + zt / (a + 1) * (1.0 + zt / (a + 2))

        u = np.where(large, u, (m + 1) * lead * series(m + 2))
        v = np.where(large, v, lead * ((m + 2) * series(m + 1) - (m + 1) * series(m + 2)))
        E = np.where(self.feeds, phi[..., self.lag], 0.0)
        return phi, E, u, v

    def q_at(self, sol, t: np.ndarray) -> np.ndarray:
        """``q(t | x_j)``, of shape ``(T, J)``, at the times ``t >= 0``: the states of the
        solution's last checkpoint before ``t`` (every ``sol.every`` nodes) stepped to ``t``'s
        cell, then across its part (``f`` linear from ``f^+`` to ``f^-`` of the cell's end), the
        approximation the march made at the nodes; ``f`` falls linearly to 0 over the cell past
        the horizon and is 0 beyond, as for :func:`._q_at`. The times are taken in order, in
        blocks whose steps ``E(tau)`` (``J P^2`` floats per time) stay within
        :data:`_Q_AT_BYTES`, the states stepped once per cell of a block."""
        J, P = self.rate.shape
        block = max(1, _Q_AT_BYTES // (8 * J * P * (P + 4)))
        order = np.argsort(t, kind="stable")
        out = np.empty((t.size, J))
        for a in range(0, t.size, block):
            rows = order[a:a + block]
            out[rows] = self._q_block(sol, t[rows])
        return out

    def _q_block(self, sol, t: np.ndarray) -> np.ndarray:
        """:meth:`q_at` for one block of times."""
        h, M = sol.h, sol.F.size - 1
        fp = np.append(sol.f_right, 0.0)
        fm = np.append(sol.f_left, [0.0, 0.0])
        F = np.append(sol.F, sol.F[-1] + 0.5 * h * sol.f_right[-1])
        i = np.minimum(t / h, M + 1).astype(np.intp)
        # t - h i can round below 0 where t / h rounds up to an integer; past the cell after
        # the horizon (f = 0) the states decay, to 0 from top on (no overflow of mu tau)
        tau = np.maximum(t - h * i, 0.0)
        tau = np.where(i > M, np.minimum(tau, self.top), tau)
        cells, inverse = np.unique(i, return_inverse=True)
        every = sol.every
        base = np.minimum(cells, M) // every * every
        H = sol.states[base // every]                           # (cells, J, P)
        _, E, u, v = self.step(h)
        for s in range(int((cells - base).max(initial=0))):
            node = np.minimum(base + s, M)
            moved = (np.einsum("jml,tjl->tjm", E, H) + u * fp[node, None, None]
                     + v * fm[node + 1, None, None])
            H = np.where((base + s < cells)[:, None, None], moved, H)
        H = H[inverse.ravel()]                                  # (T, J, P)
        end = fp[i] + tau / h * (fm[i + 1] - fp[i])             # f(t)
        _, E, u, v = self.step(tau[:, None, None])
        H = (np.einsum("tjml,tjl->tjm", E, H) + u * fp[i, None, None]
             + v * end[:, None, None])
        return (F[i] + 0.5 * tau * (fp[i] + end))[:, None] - H.sum(axis=2)


def _march_phases(kernel, phases: _Phases, wx: np.ndarray, h: float, M: int, F0: np.ndarray):
    """The march of :func:`_march_mix` for a phase-type slowdown (:class:`_Phases`): the
    states stepped node by node, no history; returns its arrays and the states every
    ``phases.every(M)`` nodes, of shape ``(M // every + 1, columns, J, P)``."""
    K, J, P = F0.size, wx.size, phases.order.size
    every = phases.every(M)
    _, E, u, v = phases.step(h)
    slope = v.sum(axis=1)                                   # beta_bar_1: f^- at the node
    beta1 = 0.5 * h - slope
    F, fp = np.empty((M + 1, K)), np.empty((M + 1, K))
    Q = np.empty((M + 1, K, J))
    states = np.empty((M // every + 1, K, J, P))
    compiled = kernel.compiled_phi()
    if compiled is not None:
        _phase_march(kernel.lam_t, compiled[0], kernel.n, kernel.r, compiled[1], F0,
                     np.ascontiguousarray(E.transpose(1, 2, 0)), np.ascontiguousarray(u.T),
                     np.ascontiguousarray(v.T), phases.first, phases.start, wx, beta1, slope, h,
                     M, every, F, fp, Q, states)
    else:
        _phase_march_numpy(kernel, E, u, v, phases.first, wx, beta1, slope, h, M, every, F0,
                           F, fp, Q, states)
    fm = fp.copy()
    fm[0] = 0.0
    qbar = Q @ wx
    return F, fm, fp, qbar, qbar, Q, states


def _phase_march_numpy(kernel, E, u, v, first, wx, beta1, slope, h, M, every, F0, F, fp, Q,
                       states):
    """:func:`_march_phases`'s march with numpy, the columns, ``X`` nodes and phases
    vectorised (:func:`_mix_leaf_numpy`'s fixed-point steps on ``F - q = c + slope f``)."""
    lam_t, half, phi = kernel.lam_t, 0.5 * h, kernel.phi
    H = F0[:, None, None] * first                           # (K, J, P)
    F[0], Q[0], states[0] = F0, 0.0, H
    fp[0] = lam_t * F0 * (phi(np.zeros(wx.size)) @ wx)
    for i in range(1, M + 1):
        G = np.einsum("jml,kjl->kjm", E, H) + u * fp[i - 1][:, None, None]
        c = G.sum(axis=2)
        A = F[i - 1] + half * fp[i - 1]
        y = _node_solve_numpy(A, fp[i - 1], c, beta1, slope, wx, lam_t, phi)
        F[i] = A + half * y
        fp[i] = y
        Q[i] = A[:, None] - c + beta1 * y[:, None]
        H = G + v * y[:, None, None]
        if i % every == 0:
            states[i // every] = H


@_jit_sums
def _phase_march(lam_t, mode, n, r, combs, F0, E, u, v, first, start, wx, beta1, slope, h, M,
                 every, F, fp, Q, states):
    """:func:`_phase_march_numpy` compiled with numba (the same operations; ``E``, ``u``, ``v``
    with the ``X`` nodes last, shaped ``(P, P, J)`` and ``(P, J)``, so that the loops over the
    nodes run innermost, side by side; ``E`` read where it is not 0: row ``m`` from its part's
    first phase ``start[m]`` to ``m``)."""
    K, J, P = F0.size, wx.size, first.size
    H, G = np.empty((P, J)), np.empty((P, J))
    c, q, ph, work = np.empty(J), np.empty(J), np.empty(J), np.empty((3, J))
    half = 0.5 * h
    for k in range(K):
        for m in range(P):
            for j in range(J):
                H[m, j] = F0[k] * first[m]
                states[0, k, j, m] = H[m, j]
        q[:] = 0.0
        _phi_many(q, J, ph, work, mode, n, r, combs)
        total = 0.0
        for j in range(J):
            total += wx[j] * ph[j]
            Q[0, k, j] = 0.0
        F[0, k] = F0[k]
        fp[0, k] = lam_t * F0[k] * total
        for i in range(1, M + 1):
            f0 = fp[i - 1, k]
            c[:] = 0.0
            for m in range(P):
                for j in range(J):
                    G[m, j] = u[m, j] * f0
                for b in range(start[m], m + 1):
                    for j in range(J):
                        G[m, j] += E[m, b, j] * H[b, j]
                for j in range(J):
                    c[j] += G[m, j]
            A = F[i - 1, k] + half * f0
            y = _node_solve(A, f0, c, q, ph, work, beta1, slope, wx, lam_t, mode, n, r, combs)
            F[i, k] = A + half * y
            fp[i, k] = y
            for j in range(J):
                Q[i, k, j] = A - c[j] + beta1[j] * y
            for m in range(P):
                for j in range(J):
                    H[m, j] = G[m, j] + v[m, j] * y
            if i % every == 0:
                for j in range(J):
                    for m in range(P):
                        states[i // every, k, j, m] = H[m, j]


class _SXContinuousModel(_GridModel):
    """S&X runtimes ``X S`` with a continuous ``S``: fixed ``X`` nodes, each an IR kernel
    (module docstring); the model interface of :class:`._IRModel` (``marcher``, ``node_sf``,
    ``sf_at``, ``tails``)."""

    floor = 1e-9
    """Smallest relative error stated for the mean and the busy fraction is this over the idle
    fraction, set when the march took ``F - q`` as ``F`` minus sums close to 1 (module
    docstring), whose error grew like ``1 / (1 - load)`` and faster (X = 1 with a
    hyperexponential S: 2.95e-9, 8.9e-9 and 1.6e-8 off Pollaczek-Khinchine at loads 0.9, 0.95
    and 0.97, where the grids stated 1.4e-9 at 0.9; the IR march, direct sums, 2.8e-10). With
    the sums of ``1 - G``: 2.5e-9, 1.8e-9 and 1.3e-8 off, within the grids' own estimates
    (1.4e-8, 1.2e-8 and 7.3e-8), with numba and without. Kept, as ``floor_squared``: over 97
    M/G/1 systems against Pollaczek-Khinchine (five job sizes times five slowdowns, loads 0.5
    to 0.99) the grids' estimates without either covered the true errors (at most 0.66 of
    them), and ``floor_squared`` eight times lower would bring one more within the goal."""
    floor_squared = 8e-10
    """...and this over its square, the larger below an idle fraction of 0.8 (above the goal
    from M/G/1 loads of 0.972, where the goal is not claimed): set as twice the largest
    ``error (1 - load)^2`` measured with the former march (X = 1 with a hyperexponential S,
    6.8e-9 and 1.1e-7 off at loads 0.95 and 0.97, 1.7e-7 without numba; X on {1, 3} times
    Exp(1) at 0.97, 4.3e-7 off with 3.8e-7 stated; now 1.8e-9, 1.3e-8 and 5.9e-9)."""
    accept = 1e-7
    """Newton's tolerance on ``F(0)`` (as :class:`._IRModel`)."""
    approach_checked = True
    fastest_text = "the smallest job size times the slowdown"
    jumps = np.array([])
    """Times where ``P(C > t)`` jumps: none (``x S`` has no atoms)."""

    def __init__(self, kernel, runtime, nodes: int = _NODES, knee: bool | None = None):
        X, S = runtime.X, runtime.S
        if S._has_atoms:
            raise NotImplementedError("S&X with removal: a slowdown mixing atoms with a density "
                                      "is not analysed; use qt.simulate")
        self.kernel, self.runtime, self.nodes = kernel, runtime, nodes
        self.knee = False   # whether the rule over X has its level at the knee (_KNEE)
        form = _phase_form(S)
        self.scale = runtime.mean_runtime()
        self.busy_exact = _memoryless_given_x(runtime)
        self.discrete_x = X.atoms is not None
        # X on atoms: the IR marches' Newton steps (X = 1 is the IR analysis of S, to 1e-12)
        self.one_march = not self.discrete_x
        self.pieces = None   # the rule's pieces of probability, for split_rule
        if self.discrete_x:
            x, w = X.atoms
        else:
            # Gauss-Legendre on the pieces of the continuous part (fewer nodes on the low ones:
            # _piece_rule), one node per atom's piece. Not fewer on the narrow ones: here they
            # are only the graded pieces next to 1, the largest x, whose integrand is not
            # constant (Gamma(0.5, 2) x lognormal(0.4) slowdowns, M/G/1 at load 0.9: 1.9e-5 off
            # Pollaczek-Khinchine with them on two nodes, 3.8e-7 on six)
            levels, piece_atoms = _x_levels(X)
            on_atom = np.isfinite(piece_atoms)
            lo, hi = levels[:-1][~on_atom], levels[1:][~on_atom]

            def rule(lo, hi):
                x, w = self._piece_nodes(lo, hi)
                return (np.concatenate([x.ravel(), piece_atoms[on_atom]]),
                        np.concatenate([w.ravel(), (levels[1:] - levels[:-1])[on_atom]]))

            x, w = rule(lo, hi)
            # the piece holding F_X(E[X] / _KNEE) split there, where that does not lower the
            # grids' cell bound (knee None) or as asked (the rule's check: as its model)
            cut = float(X._cdf_all(np.array([X.mean() / _KNEE]))[0])
            inside = (lo < cut) & (cut < hi) & (np.minimum(cut - lo, hi - cut) > 1e-14)
            if inside.any() and knee is not False:
                split_lo, split_hi = np.sort(np.append(lo, cut)), np.sort(np.append(hi, cut))
                split_x, split_w = rule(split_lo, split_hi)
                if knee or (_max_cells(np.count_nonzero(split_w), False, form)
                            >= _max_cells(np.count_nonzero(w), False, form)):
                    x, w, lo, hi = split_x, split_w, split_lo, split_hi
                    self.knee = True
            if _kinks(S):
                self.pieces = (lo, hi, piece_atoms[on_atom],
                               (levels[1:] - levels[:-1])[on_atom], self._piece_nodes(lo, hi))
        x, w = np.asarray(x, dtype=float), np.asarray(w, dtype=float)
        if np.any((w > 0) & (x <= 0)):
            raise NotImplementedError("S&X with removal: a job size with an atom at 0 is not "
                                      "analysed; use qt.simulate")
        self.x, self.w = x[w > 0], w[w > 0]
        self.phases = None if form is None else _Phases(form, self.x)
        self.windows = _Windows(S, self.x) if S._piecewise_linear else None
        self.laws = [S.scaled(float(v)) for v in self.x]
        self.kinks = [_kinks(R) for R in self.laws]
        # where G = 1 in floating point (P(x S > u) <= 2^-54), for the off-node q (_q_at): x
        # times the slowdown's (a search per node had taken half of a point for a mixture)
        self.ones_per_x = float(S._isf_all(np.array([2.0 ** -54]))[0])
        # the kinks x_j c of G (uniform, Pareto slowdowns) as nodes where they have a common
        # step (X on atoms; see removal._solve_grids)
        every = tuple(np.unique(np.concatenate([np.array(k, dtype=float) for k in self.kinks])))
        self.kink_lattice = _kink_lattice(every) if self.discrete_x else None
        # Richardson's extrapolation leaves an O(h^2) error, not O(h^3), when the density of
        # X S is unbounded at 0 (X continuous: an h^2 log h term for Exp x Exp; a slowdown's
        # density c s^a at 0, a below 1, not an integer: an h^(2 + a) term, as for IR runtimes,
        # _power_at_zero) or kinks of G lie between the nodes. Without the slowdown's power, on
        # X on atoms, a seventh of the difference had stated 1.2 to 1.8 times too little
        # against Pollaczek-Khinchine (MDS(1, 0): X = 1 times gamma(0.2) at load 0.8, 3.27e-5
        # off with 2.94e-5 stated; X on {0.3, 3} times gamma(0.7) at 0.95, 6.8e-6 off with
        # 3.87e-6 stated), where the IR grids of the same slowdowns, rough, were within 0.47
        power = _power_at_zero(S)
        self.rough = (not self.discrete_x or (len(every) > 0 and self.kink_lattice is None)
                      or (power is not None and power < 1))
        # the largest shoot on the finest grid (4 max_cells cells) within _BYTES: the rule's
        # check (2 J nodes, two columns) for a continuous X, else Newton's marches (J nodes, two
        # columns: one_march is for a continuous X); binds for J > 117 and J > 234. A job size
        # on few atoms takes the IR cell bound, as on discrete slowdowns (X = 1 times gamma(0.5)
        # at load 0.8, M/G/1: 3.95e-6 off Pollaczek-Khinchine on 4 * 4096 cells, where the IR
        # grids of the slowdown reach 5.0e-7 on 4 * 16384)
        self.memory_cells = _memory_cells(2 * self.x.size if not self.discrete_x
                                          else self.x.size, form)
        self.max_cells = _max_cells(self.x.size, self.discrete_x, form)
        self.lower = _sx_lower(runtime)
        if self.discrete_x:
            # the smallest atom's runtimes x S: f has a spike of their scale at w = 0, an error
            # the grids' differences do not see where they do not resolve it, refused (X on
            # {1e-6, 2} times gamma(3.3) slowdowns, M/G/1 at load 0.9: 4.9e-4 off
            # Pollaczek-Khinchine with 4.3e-4 stated, found by review; with at least the last
            # difference of the grids as the estimates, {1e-4, 2} at 0.95 was 10.9 times
            # beyond, {0.03, 2} times uniform(0.5, 1.5) at 0.95 2.2 times); a continuous X's
            # smallest nodes carry its smallest levels. The spike's scale is the atom times the
            # mean of the slowdown's fastest phase or component (of any weight: one of 1e-6
            # refuses systems answered within their estimates, coverage lost, no wrong number),
            # else of the slowdown: with removal, against the ODE of
            # scripts/sx_atom_phase_removal_references.py, eight of 548 answers with
            # hyperexponential S had been up to 5.5 times beyond at steps of 0.23 to 0.39 of
            # the atom times E[S] (X on {0.01, 3} times phases of means E[S] / 4 and 7 E[S] / 4,
            # MDS(2, 3) at 0.8), and with atoms of ordinary size X on {1, 3} times
            # HyperExponential([0.5, 0.5], [400, 0.5]) 4.3 times (found by review). Only where
            # that scale is small beside the mean runtime (below _SMALL_ATOM of it): elsewhere a
            # coarse step is the whole runtime's, which the grids' differences follow (X on {1,
            # 3} times Erlang(2, 2) at load 0.99, a step of 0.6: 5.3e-6 off, 2.2e-4 stated); not
            # for one job size (the IR analysis of x S: 0.63 of its estimates there). Beyond
            # _ROUGH_STEP_FASTEST of it Richardson's remainder is not yet h^3: the rough
            # estimates (exponential S, MDS(2, 3) at 0.7, a step of 0.39 of it: 1.01 times).
            # Above _SMALL_ATOM of the mean runtime a step beyond _UNRESOLVED_STEP_FASTEST of it
            # is answered with at least the last difference of the grids as the estimates (X on
            # {0.1, 3} times lognormal(1) slowdowns, M/G/1 at load 0.8, a step of 1.37 of it on
            # the IR cell bound: the extrapolations 1.2e-5, then 2.3e-5 off Pollaczek-Khinchine
            # as the steps halved, 9.6e-6 stated). The grids are refined to resolve it within the
            # cell bound (resolve_above, as on discrete slowdowns): where their estimates stopped
            # them first, a refusal had pointed to qt.grid_budget, which did not help (X on {0.1,
            # 2} times Exp(1), M/G/1 at load 0.9, a step of 0.0499 where the bound allows 0.0125;
            # found by review)
            smallest = float(self.x.min())
            fastest = smallest * _fastest_mean(S, below_median=False)
            if self.x.size > 1:
                self.fastest = fastest
                if self.fastest < smallest * S.mean():
                    self.fastest_text = "the smallest job size times the slowdown's fastest part"
                self.unresolved_above = _UNRESOLVED_STEP_FASTEST * self.fastest
                self.rough_above = self.resolve_above = _ROUGH_STEP_FASTEST * self.fastest
                # the frontier's grids refined to resolve it too (X on {0.01, 3} times Erlang(2,
                # 2), Replication(1, 3): 0.5490232614 +- 1.7e-9 where the front's ODE,
                # scripts/sx_phase_frontier_references.py, gives 0.5490232697)
                self.front_rough_above = _FRONT_ROUGH_STEP_FASTEST * self.fastest
                self.refuse_unresolved = fastest < _SMALL_ATOM * self.scale
        # steps coarse beside the mean runtime, as for IR runtimes (X = 1 is the IR analysis)
        self.coarse_above = _COARSE_STEP_MEAN * self.scale
        self.resolve_above = min(self.resolve_above, self.coarse_above)
        self.stalls = power is not None and power < 0

    def march_bytes(self, nodes: int, columns: int) -> int:
        """Bytes per cell of a march with ``nodes`` ``X`` nodes and ``columns`` columns and
        its shoot's solution: :func:`_march_bytes`, or for a phase-type slowdown (no history)
        8 per node and column for ``q``, 24 for the solution's ``q`` and the temporaries of
        its ``P(C > t)`` (numpy), the states of each column and of the solution every
        :data:`_CHECKPOINT` nodes (at most; fewer beyond :data:`_STATES_BYTES`), and 128 per
        column (measured with ``tracemalloc``, two columns: 34 to 43 per node at J = 213 and
        38 to 47 at J = 32, on 1024 and 4096 cells, exponential, Erlang(2) and Erlang(5)
        slowdowns; 66 with Erlang(16), where the solution's states had been left out and the
        shoot took 0.99 of its budget)."""
        return _shoot_bytes(nodes, columns, None if self.phases is None
                            else self.phases.order.size)

    def doubled(self) -> _SXContinuousModel | None:
        """The model with twice the Gauss-Legendre nodes over ``X`` (``None``: ``X`` on
        atoms, no rule to check)."""
        return None if self.discrete_x else _SXContinuousModel(self.kernel, self.runtime,
                                                               2 * self.nodes, self.knee)

    def release(self):
        """Nothing is kept across grids (the weights live with their marcher)."""

    def marcher(self, h: float, M: int):
        if self.phases is not None:
            return lambda cols: _march_phases(self.kernel, self.phases, self.w, h, M, cols)
        if self.windows is not None and self.kernel.compiled_phi() is not None:
            plan = self.windows.plan(h, M)
            return lambda cols: _march_windows(self.kernel, plan, self.w, h, M, cols)
        leaf = _LEAF if self.kernel.compiled_phi() is None else _COMPILED_LEAF
        weights = _MixWeights(self, h, M, leaf)
        return lambda cols: _march_mix(self.kernel, weights, self.w, h, M, cols, leaf)

    def node_sf(self, sol):
        """``P(C > t)`` at the nodes from ``q(w_i | x_j)`` of the solution (interpolated
        between the march's columns like ``F``: ``Psi`` of each column, interpolated, had left
        a floor of 8e-11 in the tail where a column's ``q`` exceeds 1 and ``Psi`` clips it),
        which it then drops (memory: ``8 J (M + 1)`` bytes), keeping a phase march's states
        every :meth:`_Phases.every` nodes for ``q`` between the nodes (at most
        :data:`_STATES_BYTES`); continuous: no jumps."""
        compiled = self.kernel.compiled_sf()
        if compiled is None:
            sf = self.kernel.batch_sf(sol.extra[0]) @ self.w
        else:
            sf = _mix_sf(sol.extra[0], self.w, compiled[0], self.kernel.n, self.kernel.r,
                         compiled[1])
        if self.phases is not None:
            sol.states, sol.every = sol.extra[1], self.phases.every(sol.F.size - 1)
        sol.extra = ()
        return sf, sf

    def sf_at(self, sol, t: np.ndarray) -> np.ndarray:
        """``P(C > t)`` at the times ``t >= 0``: ``q(t | x_j)`` by the product integration of
        :func:`._q_at`, or of a phase march's states (:meth:`_Phases.q_at`): the approximation
        the march used at the nodes. With :attr:`pieces` (a continuous ``X`` times a slowdown
        whose ``G`` kinks at ``c``) over the rule of :meth:`split_rule` for each time."""
        if self.phases is not None:
            return self.kernel.batch_sf(self.phases.q_at(sol, t)) @ self.w
        if self.pieces is not None:
            time, x, w = self.split_rule(t)
            q = self._q(sol, t[time], x)
            psi = self.kernel.batch_sf(q)
            sf = np.bincount(time, psi * w, minlength=t.size)
            # above 1/2 from the complement: each time's weights sum to 1 only to rounding,
            # and P(C > t) must be 1 exactly where q = 0 (below the shortest runtime: the CDF
            # at subnormal times had been 3.3e-16)
            above = 1.0 - np.bincount(time, (1.0 - psi) * w, minlength=t.size)
            return np.where(sf > 0.5, above, sf)
        q = self._q(sol, np.repeat(t, self.x.size), np.tile(self.x, t.size))
        return self.kernel.batch_sf(q.reshape(t.size, self.x.size)) @ self.w

    def _q(self, sol, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``q(t | x)`` at the times ``t`` and ``X`` values ``x`` (flat, one shape): in closed
        form for a piecewise-linear slowdown (:meth:`_Windows.q_at`), else by the product
        integration of :func:`._q_at` (the same approximation)."""
        if self.windows is not None:
            return self.windows.q_at(sol, t, x)
        S = self.runtime.S
        return _q_at(sol, S, t, _kinks(S), x * self.ones_per_x, x)

    def split_rule(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rule over ``X`` for ``P(C > t)`` at each time of ``t``: the pieces of the
        march's rule (:attr:`pieces`), each holding a level ``F_X(t / c)`` (``c`` a kink of
        ``G``) split there, with as many Gauss-Legendre nodes on each part as on the piece;
        the atoms of a job size mixing them with a density as they are. Returns the time's
        index, the node and its weight of every node, flat. There ``G(t / x)``, through the
        atom ``F(0)`` of ``V``, kinks in ``x``, so ``P(C > t)`` of the march's fixed nodes
        ripples (exponential ``X`` times Uniform(0.5, 1.5), M/G/1 at load 0.5: its p10 and
        p50 were 1.2e-3 and 1.8e-3 off the Random system's inversion, 5.7e-3 and 5.4e-3
        stated)."""
        lo, hi, atoms, masses, (base_x, base_w) = self.pieces
        cuts = np.array(_kinks(self.runtime.S), dtype=float)
        levels = self.runtime.X._cdf_all((t[:, None] / cuts).ravel()).reshape(t.size, cuts.size)
        times, xs, ws = [], [], []
        for i in range(t.size):
            inside = ((lo[:, None] + 1e-14 < levels[i]) & (levels[i] < hi[:, None] - 1e-14))
            split = inside.any(axis=1)
            parts = [base_x[~split].ravel()], [base_w[~split].ravel()]
            if split.any():
                ends = np.unique(np.concatenate([lo[split], hi[split], levels[i][
                    inside.any(axis=0)]]))
                # the parts of the split pieces: consecutive ends inside one of them
                a, b = ends[:-1], ends[1:]
                keep = ((a[:, None] >= lo[split]) & (b[:, None] <= hi[split])).any(axis=1)
                x, w = self._piece_nodes(a[keep], b[keep])
                parts[0].append(x.ravel())
                parts[1].append(w.ravel())
            x, w = np.concatenate(parts[0] + [atoms]), np.concatenate(parts[1] + [masses])
            x, w = x[w > 0], w[w > 0]
            times.append(np.full(x.size, i))
            xs.append(x)
            ws.append(w)
        return np.concatenate(times), np.concatenate(xs), np.concatenate(ws)

    def _piece_nodes(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Gauss-Legendre nodes ``x`` and weights of the pieces ``[lo, hi]`` of probability,
        :attr:`nodes` per piece as the march's rule has them, shape ``lo.shape + (nodes,)``."""
        gl_nodes, gl_weights = _piece_rule(lo, hi, self.nodes, narrow=False)
        u = 0.5 * (lo + hi)[:, None] + 0.5 * (hi - lo)[:, None] * gl_nodes
        x = self.runtime.X._ppf_all(u.ravel()).reshape(u.shape)
        return x, 0.5 * (hi - lo)[:, None] * gl_weights

    tails = staticmethod(_IRModel.tails)


def _march_mix(kernel, weights: _MixWeights, wx: np.ndarray, h: float, M: int, F0: np.ndarray,
               leaf: int):
    """The march of :func:`._march` with ``J`` kernels (the module docstring): returns ``F``,
    ``f^-``, ``f^+``, ``E_X q`` twice (no jumps), each of shape ``(M + 1, columns)``, and
    ``q(w_i | x_j)`` of shape ``(M + 1, columns, J)``."""
    K, J = F0.size, wx.size
    lam_t, half = kernel.lam_t, 0.5 * h
    F = np.empty((M + 1, K))
    fm = np.zeros((M + 1, K))
    fp = np.empty((M + 1, K))
    qbar = np.empty((M + 1, K))
    Q = np.empty((M + 1, K, J))
    beta1, slope = weights.beta1, weights.slope
    q0 = F0[:, None] * (1.0 - weights.Gbar[0])
    F[0] = F0
    fp[0] = lam_t * ((F0[:, None] * weights.Gbar[0]) * kernel.phi(q0)) @ wx
    Q[0], qbar[0] = q0, q0 @ wx
    # F - q at each node without the term of f^-_i (the IR march's history: a sum of small
    # terms, no difference of two sums close to 1 whose rounding F's march would carry on),
    # less the b_i f^+_0 of the fused kernel (f^-_0 = 0): at most one of its terms
    history = (F0[None, :, None] * weights.Gbar[:, None, :]
               - fp[0][None, :, None] * weights.head[:, None, :])
    compiled = kernel.compiled_phi()
    blocks = _History(None, None, weights.spectra, M, fp, None, history, fft_min=_FFT_MIN,
                      leaf=leaf, kernels=weights.kernels, reach=weights.reach)
    ab_in = np.ascontiguousarray(blocks.a[:blocks.leaf])
    phi = kernel.phi

    def leaf(lo, hi):
        start = max(lo, 1)
        if compiled is not None:
            _mix_leaf(lo, hi, history, ab_in, F, fp, fm, beta1, slope, wx, lam_t,
                      compiled[0], kernel.n, kernel.r, compiled[1], half, Q[start:hi])
        else:
            Q[start:hi] = _mix_leaf_numpy(lo, hi, history, ab_in, F, fp, fm, beta1, slope, wx,
                                          lam_t, phi, half)
        qbar[start:hi] = Q[start:hi] @ wx

    blocks.run(leaf)
    return F, fm, fp, qbar, qbar, Q


def _march_windows(kernel, plan: dict, wx: np.ndarray, h: float, M: int, F0: np.ndarray):
    """The march of :func:`_march_mix` for a piecewise-linear slowdown (:class:`_Windows`),
    compiled: the history's convolution replaced by the running sums of its windows (with
    numpy operations per node this took 1.2 to 1.9 times the history's march: the history
    stays the numpy path's)."""
    K, J = F0.size, wx.size
    F, fp = np.empty((M + 1, K)), np.empty((M + 1, K))
    Q = np.empty((M + 1, K, J))
    Gbar = plan["Gbar"]
    q0 = F0[:, None] * (1.0 - Gbar[0])
    F[0] = F0
    fp[0] = kernel.lam_t * ((F0[:, None] * Gbar[0]) * kernel.phi(q0)) @ wx
    Q[0] = q0
    mode, combs = kernel.compiled_phi()
    _window_march(kernel.lam_t, mode, kernel.n, kernel.r, combs, wx, plan["beta1"],
                  plan["slope"], Gbar, plan["abar"], plan["start"], plan["lag"],
                  plan["value"], plan["win_j"], plan["win_lo"], plan["win_hi"], plan["top"],
                  plan["step"], plan["period"], h, M, F, fp, Q)
    fm = fp.copy()
    fm[0] = 0.0
    qbar = Q @ wx
    return F, fm, fp, qbar, qbar, Q


@_jit_sums
def _window_march(lam_t, mode, n, r, combs, wx, beta1, slope, Gbar, abar, start, lag, value,
                  win_j, win_lo, win_hi, top, step, period, h, M, F, fp, Q):
    """:func:`_march_windows`'s march (``F``, ``f^+`` and ``q`` from node 1 on, into ``F``,
    ``fp`` and ``Q``): ``F - q(w_i | x_j) = c_j + slope_j f_i`` with ``c_j`` the cells of
    ``F(0)`` and ``f^+_0``, the lags of ``value`` (sorted per node) and the windows' running
    sums, solved by :func:`_node_solve`; then the windows stepped to the next node (each
    summed afresh every ``period`` nodes)."""
    K, J, W = F.shape[1], wx.size, win_j.size
    half = 0.5 * h
    c, q, ph, work = np.empty(J), np.empty(J), np.empty(J), np.empty((3, J))
    Z0, Z1 = np.zeros(W), np.zeros(W)
    for k in range(K):
        F0, y0 = F[0, k], fp[0, k]
        Z0[:] = 0.0
        Z1[:] = 0.0
        for i in range(1, M + 1):
            for j in range(J):
                v = F0 * Gbar[i, j] + y0 * abar[i, j]
                for e in range(start[j], start[j + 1]):
                    if lag[e] >= i:
                        break
                    v += value[e] * fp[i - lag[e], k]
                c[j] = v
            for w in range(W):
                c[win_j[w]] += top[w] * Z0[w] + step[w] * Z1[w]
            A = F[i - 1, k] + half * fp[i - 1, k]
            y = _node_solve(A, fp[i - 1, k], c, q, ph, work, beta1, slope, wx, lam_t, mode, n,
                            r, combs)
            F[i, k] = A + half * y
            fp[i, k] = y
            for j in range(J):
                Q[i, k, j] = A - c[j] + beta1[j] * y
            # the windows at node i + 1: lags L..U reach f_(i + 1 - U) .. f_(i + 1 - L)
            for w in range(W):
                lo, up = win_lo[w], win_hi[w]
                if (i + 1) % period[w] == 0:
                    s0 = s1 = 0.0
                    for t in range(max(i + 1 - up, 1), i + 2 - lo):
                        v = fp[t, k]
                        s0 += v
                        s1 += (up - (i + 1 - t)) * v
                    Z0[w], Z1[w] = s0, s1
                else:
                    enter = fp[i + 1 - lo, k] if i + 1 - lo >= 1 else 0.0
                    leave = fp[i - up, k] if i - up >= 1 else 0.0
                    Z1[w] += (up - lo) * enter - (Z0[w] - leave)
                    Z0[w] += enter - leave


@_jit_inline
def _node_solve(A, y, c, q, ph, work, beta1, slope, wx, lam_t, mode, n, r, combs):
    """``f_i`` of a node from ``F - q(w_i | x_j) = c_j + slope_j f_i`` and ``F_i = A + h f_i /
    2`` (so ``q(w_i | x_j) = A - c_j + beta1_j f_i``): two fixed-point steps from ``y =
    f_{i-1}``, ``phi`` of the ``X`` nodes side by side (:func:`._phi_many`)."""
    J = wx.size
    for _ in range(2):
        for j in range(J):
            q[j] = A - c[j] + beta1[j] * y
        _phi_many(q, J, ph, work, mode, n, r, combs)
        num = den = 0.0
        for j in range(J):
            num += wx[j] * c[j] * ph[j]
            den += wx[j] * slope[j] * ph[j]
        y = lam_t * num / (1.0 - lam_t * den)
    return y


def _node_solve_numpy(A, y, c, beta1, slope, wx, lam_t, phi):
    """:func:`_node_solve` for the columns at once (``A``, ``y`` of shape ``(K,)``, ``c`` of
    ``(K, J)``) with numpy."""
    for _ in range(2):
        ph = phi(A[:, None] - c + beta1 * y[:, None])
        y = lam_t * ((c * ph) @ wx) / (1.0 - lam_t * ((ph * slope) @ wx))
    return y


@_jit_sums
def _mix_sf(Q, wx, mds, n, r, combs):
    """``P(C > w_i) = sum_j w_j Psi(q(w_i | x_j))`` at the nodes (compiled with numba:
    :func:`._batch_sf_many` row by row, the ``X`` nodes side by side)."""
    rows, J = Q.shape
    sf, out, work = np.empty(rows), np.empty(J), np.empty((3, J))
    for i in range(rows):
        _batch_sf_many(Q[i], J, out, work, mds, n, r, combs)
        total = 0.0
        for j in range(J):
            total += wx[j] * out[j]
        sf[i] = total
    return sf


def _mix_leaf_numpy(lo, hi, history, ab_in, F, fp, fm, beta1, slope, wx, lam_t, phi, half):
    """The nodes ``lo..hi - 1`` (not 0) of a block, the columns and ``X`` nodes vectorised:
    ``F_i - q(w_i | x_j) = c_j + slope_j f_i`` with ``c`` the history plus the sums within the
    block (of ``1 - G``, the fused kernel ``ab_in`` times ``f^+``), so ``q(w_i | x_j) = A - c_j
    + beta_1j f_i`` with ``F_i = A + h f_i / 2``; ``f_i`` by two fixed-point steps from
    ``f_{i-1}``. Returns ``q`` of the nodes."""
    start = max(lo, 1)
    Q = np.empty((hi - start, F.shape[1], wx.size))
    for i in range(start, hi):
        u = i - lo
        c = history[i] + np.einsum("uj,uk->kj", ab_in[u:0:-1], fp[lo:i])
        A = F[i - 1] + half * fp[i - 1]
        y = _node_solve_numpy(A, fp[i - 1], c, beta1, slope, wx, lam_t, phi)
        F[i] = A + half * y
        fm[i] = fp[i] = y
        Q[i - start] = A[:, None] - c + beta1 * y[:, None]
    return Q


@_jit_sums
def _mix_leaf(lo, hi, history, ab_in, F, fp, fm, beta1, slope, wx, lam_t, mode, n, r, combs,
              half, Q):
    """:func:`_mix_leaf_numpy` compiled with numba (the same operations, ``q`` into ``Q``; the
    sums over the ``X`` nodes innermost, along the kernels' rows)."""
    K, J = F.shape[1], wx.size
    start = max(lo, 1)
    c, q, ph, work = np.empty(J), np.empty(J), np.empty(J), np.empty((3, J))
    for i in range(start, hi):
        for k in range(K):
            for j in range(J):
                c[j] = history[i, k, j]
            for t in range(lo, i):
                v = fp[t, k]
                for j in range(J):
                    c[j] += ab_in[i - t, j] * v
            A = F[i - 1, k] + half * fp[i - 1, k]
            y = _node_solve(A, fp[i - 1, k], c, q, ph, work, beta1, slope, wx, lam_t, mode, n, r,
                            combs)
            F[i, k] = A + half * y
            fm[i, k] = y
            fp[i, k] = y
            for j in range(J):
                Q[i - start, k, j] = A - c[j] + beta1[j] * y

