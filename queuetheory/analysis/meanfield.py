"""Mean-field (cavity) analysis of Redundancy-d: one server's stationary workload as k -> inf.

Model
-----
As ``k -> infinity`` the ``d`` servers polled by a job have i.i.d. workloads ``U_j`` with law
``F`` (asymptotic independence). Under FCFS with cancel-on-complete a job's replica on server
``j`` finishes at ``U_j + R_j`` and the job at ``T = min_j (U_j + R_j)``; every polled server's
workload becomes ``max(U_j, min(U_j + R_j, T))``. With ``R_j = X S_j`` (S&X: ``X`` shared by the
job's replicas; IR is the case ``X = 1``, ``S = R``) and ``H(w) = P(U > w)`` (``H(0) = b`` is the
busy fraction, ``H = 1`` on ``w < 0``), level crossing at ``w > 0`` (jobs arrive at a server at
rate ``lam d`` and lift its workload over ``w`` iff its own replica and every other replica is
still running at ``w``; the workload falls at rate 1) gives

    -H'(w) = lam d E_X[ (a_X(w) - H(w)) a_X(w)^(d-1) ],     a_x(w) = E_S[ H(w - x S) ],

with ``H(inf) = 0`` (``a_x(w) = P(U + x S > w)``), and the response time has the tail

    P(T > t) = E_X[ a_X(t)^d ].

Discretisation
--------------
``H`` is represented by its values on a uniform grid ``w_i = i h`` on ``[0, W]`` (``H = 0``
beyond ``W``) and interpolated linearly between nodes. ``a_x(w_i)`` is evaluated exactly for
that piecewise-linear ``H``: for a discrete ``S`` by interpolation at the points
``w_i - x s``; for a continuous ``S`` the hat functions are integrated against the law of
``x S`` exactly, by second differences of its stop-loss transform ``E[(x S - y)^+]`` (each
law's ``_stop_loss``; a lower-triangular Toeplitz matrix), and the response tail is evaluated
the same way between the nodes (:func:`_refined_sf`). The expectation
over ``X`` uses its atoms when ``X`` is discrete; for a continuous ``X`` and a discrete ``S`` the
integrand jumps where ``x s = w``, so ``x`` is integrated piece by piece between the
breakpoints ``w_i / s``; when the grid fits the bounds below, ``x`` is integrated between
all the kinks ``k h / s_j`` of the interpolated ``H(w_i - x s_j)`` by 3-point Gauss-Legendre
rules, the same nodes for every row (a shift of ``H`` by ``x s_j / h`` steps): the integrand
is then a polynomial times the density on every segment and the error expands in even
powers of ``h`` ("aligned"); otherwise each piece is cut into parts no longer than ``E[X]``
(at most 8) with an
8-point Gauss-Legendre rule against the density of ``X`` on each part, so the density integrates
to 1 however long a piece is (the piece beyond ``w_i / min s`` contributes exactly
``P(X > w_i / min s)``; the pieces are clipped to the support of ``X``, where its density may
jump, and ``X`` beyond its ``1e-17`` and ``1 - 1e-17`` quantiles is dropped); for a continuous
``X`` and a continuous ``S`` a tanh-sinh rule in probability space of 49 nodes, or 193 where
49 and 97 nodes differ by more than ``_RULE_CLOSE`` on the coarsest grid; four times that
change is added to every stated error (:func:`_x_rule_level`). When both densities are
positive at 0 the runtime density is logarithmic at 0 and the grid error expands in
``h^2 log h`` and ``h^2`` (:func:`_log_singular`): a fourth grid is solved.

Atoms. When ``X`` and ``S`` are both discrete, ``a`` jumps (the atom of ``U`` at 0 meets the
atoms ``x s`` of the runtime) and ``H'`` jumps with it, at the points ``x s`` and their sums.
If every ``x s`` is a multiple of one ``g`` (:func:`_lattice`), the step divides ``g`` (at
most ``g / 3``) so that every such point is a node, and the right limit of the integrand at a
cell's left end and its left limit at its right end are kept apart; the scheme is then as
accurate as on smooth laws (it reproduces M/D/1 to rounding). Without a common measure the
jumps fall between nodes and the method is first order (said in ``method``).

The equation is integrated by the trapezoidal rule, ``H_i - H_(i+1) = h (f_i+ + f_(i+1)-) / 2``,
and the resulting nonlinear system is solved by Newton's method with a dense Jacobian and
backtracking. ``W`` is doubled until both ``H`` and the response-time tail are below ``1e-8``
at ``0.75 W``. The discretisation error is ``O(h^2)``: mean, busy fraction and the tail at
the nodes are Richardson-extrapolated from steps ``h`` and ``h / 2`` (between nodes the tail is
interpolated by cubics that never cross a lattice point), and ``|fine - coarse|``, three times
the estimated error of the step-``h / 2`` value, is reported as the error of each (see
:class:`ExtrapolatedSolution`); quantile errors come from the quantiles of the two grids.
The mean's error also counts the tail beyond ``W`` (``W P(T > 0.75 W)``). Unless both laws
are discrete a third grid of step ``2 h`` is solved too, and every error is at least twice
the change of the extrapolated value from the steps ``(2 h, h)`` to ``(h, h / 2)`` (the
convergence may be irregular). On the aligned path the three grids are extrapolated once
more, ``(16 R(h, h/2) - R(2 h, h)) / 15``, and ``|that - R(h, h/2)|`` is stated as the error
(for continuous ``X`` and discrete ``S`` measured at d = 1 against the exact M/G/1 law: mean
errors 2e-8 to 4e-7 and busy fraction errors 2e-7 to 9e-6 relative, 3 to 90 times below the
stated ones); there the grid step is refined up to ``E[X] min S / 4`` while the finest grid
keeps at most ``_MAX_ENTRIES`` node-row pairs and ``_MAX_WORK = 3e7`` interpolations.

Kinks. Where a continuous law's density jumps at an end ``e`` of its support (uniform,
shifted exponential) and the other law has atoms ``v``, the equation kinks at ``e v`` and
their sums: if these have a common measure (:func:`_kink_lattice`), it is a multiple of twice
the step (when that is not finer than the step asked for), so they fall on nodes of all
three grids, and the tail table is interpolated within the cells between them.

Memory. A grid has at most ``_MAX_POINTS = 4096`` intervals (dense Newton matrices of at most
134 MB, a few alive at once; the step, normally at most half the mean of the fastest of ``d``
replicas, grows up to that mean to keep a long workload within the bound) and at most
``_MAX_ENTRIES = 1e7`` interpolation entries (about 48 bytes each), so one analysis stays
below about 1 GB; a workload that does not fit (a runtime tail too heavy for the grid, e.g.
Pareto job sizes, or a system at its stability frontier) raises :class:`GridTooLarge`, a
``NotImplementedError`` pointing to ``qt.simulate``.

Stability
---------
Parametrise the solutions by the busy fraction ``b = H(0)`` instead of ``lam``: solving for
``lam`` with ``H(0) = b`` fixed gives the arrival rate ``lam(b)`` at which the busy fraction is
``b``. As ``b -> 1`` the workload law becomes a front that moves away from 0 (its shape
converges to a translation-invariant travelling front) and ``lam(b)`` converges to the largest
stable arrival rate ``lam*``: for ``lam > lam*`` no proper stationary workload exists (the front
moves to infinity: instability). ``lam*`` is computed as ``lam(1 - eps)`` for decreasing
``eps`` until it stops changing. Under IR with exponential runtimes this gives ``lam* = mu``
for every ``d``, as proved in [1]_.

References
----------
.. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky,
   "Redundancy-d: the power of d choices for redundancy", Operations Research 65(4), 2017.
.. [2] T. Hellemans, B. Van Houdt, "Performance of redundancy(d) with identical/independent
   replicas", ACM TOMPECS 4(2), 2019 (the cavity equation for the workload).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import fft, linalg, sparse

from ..distributions import Discrete, Distribution, _tanh_sinh_probabilities
from ..runtime import IR, SX, RuntimeModel

_GL_X = np.polynomial.legendre.leggauss(8)
_GL_SEGMENT = np.polynomial.legendre.leggauss(3)
_MAX_PARTS = 8
_MAX_POINTS = 4096      # grid intervals: dense Newton matrices of at most 134 MB each
_MAX_ENTRIES = 10_000_000   # interpolation entries: about 48 bytes each
_MAX_WORK = 30_000_000      # interpolations per application of an aligned map
_PART = 1.0
_NEGLIGIBLE = 1e-17   # probability of X beyond its last quadrature piece (dropped)


@lru_cache(maxsize=4)
def _x_rule(level: int):
    """The tanh-sinh rule over ``X`` in probability space: ``48 2^level + 1`` nodes."""
    return _tanh_sinh_probabilities(n_half=24 * 2 ** level, t_max=3.2)

_TAIL_TOL = 1e-8
_PROBE_POINTS = 128


class MeanFieldError(RuntimeError):
    """The Newton iteration of the mean-field equations did not converge."""


class GridTooLarge(MeanFieldError, NotImplementedError):
    """The workload needs a grid beyond the memory bound (a tail too heavy to resolve)."""


def _laws(model: RuntimeModel) -> tuple[Distribution, Distribution]:
    """The shared factor ``X`` and the per-replica factor ``S`` (IR: ``X = 1``, ``S = R``)."""
    for law in (model.X, model.S) if isinstance(model, SX) else (getattr(model, "R", None),):
        if law is not None and not math.isfinite(law.mean()):
            raise GridTooLarge(
                f"{law!r} has an infinite mean: the mean-field grid integrates its stop-loss "
                f"transform E[(S - y)^+] and scales to its mean; use qt.simulate(system)")
    if isinstance(model, SX):
        if model.X.atoms is None and model.X._has_atoms:
            raise NotImplementedError(
                f"X = {model.X!r} mixes atoms with a continuous part: the mean-field analysis "
                "integrates against the density of X (a law with a density or on finitely many "
                "points); use qt.simulate")
        return _as_discrete(model.X), _as_discrete(model.S)
    if isinstance(model, IR):
        return Discrete([1.0], [1.0]), _as_discrete(model.R)
    raise ValueError(f"runtime must be qt.SX or qt.IR, got {model!r}")


def _as_discrete(law: Distribution) -> Distribution:
    """A law on finitely many points as a :class:`Discrete` (whatever its class, e.g. a
    discrete scipy law), so that the exact discrete branches apply; other laws unchanged."""
    atoms = law.atoms
    return law if atoms is None or isinstance(law, Discrete) else Discrete(*atoms)


def _gauss_pieces(X: Distribution, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights (times the density of ``X``) on the pieces between
    ``edges`` (shape (n_pieces + 1, n_rows)), each piece cut into equal parts no longer than
    ``E[X] / 2`` at the last row (at most ``_MAX_PARTS``), so that a long piece, over which the
    density of ``X`` changes by orders of magnitude, is integrated as accurately as a short
    one. Returns arrays of shape (n_nodes, n_rows)."""
    t, wt = _GL_X
    # the support [lower, upper] (up to 1e-17 at each end): a density that jumps at an end of
    # its support (uniform, shifted exponential, Pareto) is then smooth on every part
    lower = float(X._ppf_all(np.array([_NEGLIGIBLE]))[0])
    edges = np.clip(edges, lower, max(lower, float(X._isf_all(np.array([_NEGLIGIBLE]))[0])))
    length = edges[1:] - edges[:-1]
    wanted = np.clip(np.ceil(length / (_PART * X.mean())), 1, _MAX_PARTS).astype(int)
    xs, weights, pieces = [], [], []
    for k in range(length.shape[0]):
        count = wanted[k]                                       # parts of piece k, per row
        width = length[k] / count
        frac = np.arange(count.max())[:, None] + 0.5 * (1.0 + t[None, :])    # (parts, 8)
        x = edges[k][None, None, :] + width[None, None, :] * frac[:, :, None]
        used = np.arange(count.max())[:, None, None] < count[None, None, :]
        weight = np.where(used, width[None, None, :] * (0.5 * wt)[None, :, None]
                          * X.pdf(x), 0.0)
        xs.append(x.reshape(-1, x.shape[2]))
        weights.append(weight.reshape(-1, x.shape[2]))
        pieces.append(np.full(xs[-1].shape[0], k))
    return np.vstack(xs), np.vstack(weights), np.concatenate(pieces)


@dataclass
class _Discretisation:
    """The linear map ``H -> a`` on a grid: ``a[q, i] = c[q, i] + (A H)[q, i]``."""

    h: float
    n: int
    omega: np.ndarray          # (Q, n + 1) quadrature weights over X
    c: np.ndarray              # (Q, n + 1) P(x S > w_i)
    tau: np.ndarray            # (n + 1,) P(X > w_i / min S): there a = 1 exactly
    sparse_map: list | None = None    # CSR blocks (Q (n + 1), n + 1), one per slowdown
    toeplitz: tuple | None = None                 # (g, first column): (Q, n + 1) each
    flat: tuple | None = None     # (row of sparse_map, i (n + 1) + column, value) per entry
    left: _Discretisation | None = None   # left limits w_i- where a jumps (discrete X)
    lattice_steps: int = 0                # steps per cell of the lattice of jumps (0: none)
    shifts: tuple | None = None   # (Q, m) steps and fractions x_q s_j / h, and p (aligned)
    laws: tuple | None = None     # (x nodes, weights, S) of the continuous-S map (_refined_sf)


    @property
    def grid(self) -> np.ndarray:
        return self.h * np.arange(self.n + 1)

    def apply(self, H: np.ndarray) -> np.ndarray:
        if self.shifts is not None:
            return self._apply_shifts(H)
        if self.sparse_map is not None:
            lin = sum(block @ H for block in self.sparse_map).reshape(self.c.shape)
        else:
            g, first = self.toeplitz
            lin = _causal_convolve(g, H)
            lin += (first - g) * H[0]
        return self.c + lin

    def _apply_shifts(self, H: np.ndarray) -> np.ndarray:
        """``a[q, i] = sum_j p_j (theta H(i - l - 1) + (1 - theta) H(i - l))``, ``l`` and
        ``theta`` the whole and fractional steps of ``x_q s_j``, ``H = 1`` at negative
        arguments (``i - l <= 0`` in the second term: the argument is then below 0)."""
        shift, theta, p = self.shifts
        n = self.n
        ones = np.ones(n + 2)
        # row r of a window holds H(i + r - n - 2), i = 0..n (1 below 0): node i - l is row
        # n + 2 - l, contiguous copies instead of a gather of single entries
        below = sliding_window_view(np.concatenate([ones, H]), n + 1)
        above = sliding_window_view(np.concatenate([ones, [1.0], H[1:]]), n + 1)
        out = np.zeros((shift.shape[0], n + 1))
        for j in range(shift.shape[1]):
            row = n + 2 - shift[:, j]
            out += (p[j] * theta[:, j:j + 1]) * below[row - 1]
            out += (p[j] * (1.0 - theta[:, j:j + 1])) * above[row]
        return out

    def _weighted_shifts(self, coef: np.ndarray) -> np.ndarray:
        """:meth:`weighted_map` of the aligned map: the entries of ``J[i, i - m]`` summed
        over the nodes shifted by ``m`` steps (a sparse (offsets, Q) matrix times ``coef``),
        then put on the subdiagonals."""
        shift, theta, p = self.shifts
        n = self.n
        Q = shift.shape[0]
        q = np.arange(Q)
        first = np.zeros((n + 2, n + 1))          # nodes i - l - 1 (valid for i >= l + 1)
        second = np.zeros((n + 2, n + 1))         # nodes i - l (valid for i >= l + 1)
        for j in range(shift.shape[1]):
            m = shift[:, j]
            inside = m <= n
            first += sparse.csr_matrix((p[j] * theta[inside, j], (m[inside] + 1, q[inside])),
                                       shape=(n + 2, Q)) @ coef
            second += sparse.csr_matrix((p[j] * (1.0 - theta[inside, j]),
                                         (m[inside], q[inside])), shape=(n + 2, Q)) @ coef
        row, offset = _lower_indices(n)
        J = np.zeros((n + 1, n + 1))
        J[row, row - offset] = first[offset, row] + np.where(row > offset,
                                                             second[offset, row], 0.0)
        return J

    def weighted_map(self, coef: np.ndarray) -> np.ndarray:
        """``sum_q diag(coef[q]) A_q`` as a dense lower-triangular (n + 1, n + 1) matrix."""
        if self.shifts is not None:
            return self._weighted_shifts(np.broadcast_to(coef, (coef.shape[0], self.n + 1)))
        if self.sparse_map is not None:
            row, target, data = self.flat
            out = np.bincount(target, weights=data * coef.ravel()[row],
                              minlength=(self.n + 1) ** 2)
            return out.reshape(self.n + 1, self.n + 1)
        # entry (i, i - l) is sum_q coef[q, i] g[q, l]: one matrix product, then the lags
        # put on the subdiagonals; column 0 holds the half hats at w_i
        g, first = self.toeplitz
        coef = np.broadcast_to(coef, g.shape)
        lags = coef.T @ g
        size = self.n + 1
        out = np.zeros((size, size))
        flat = out.reshape(-1)
        for lag in range(size):              # the diagonal from (lag, 0): a strided slice
            flat[lag * size::size + 1] = lags[lag:, lag]
        out[:, 0] = (coef * first).sum(axis=0)
        return out


def _tail_lattice(laws: tuple, sub: float, count: int) -> tuple:
    """The stop-loss transform ``pi(c) = E[(R - c)^+]``, ``P(R <= c)`` and ``P(R > c)`` of
    ``R = x S`` at ``c = m sub``, ``m = 0..count``, one row per ``x`` node of ``laws``: the
    node map (:func:`_discretise_continuous_s`) and every table of :func:`_refined_sf` at this
    ``sub`` read their points from it."""
    xs, _, S = laws
    cx = (sub * np.arange(count + 1))[None, :] / xs[:, None]
    return xs[:, None] * S._stop_loss_all(cx), S._cdf_all(cx), S._sf_all(cx)


def _hat_weights(laws: tuple, lattice: tuple, h: float, n: int, K: int, k: int) -> tuple:
    """The hats of the grid of step ``h`` integrated against the law of ``R = x S``, seen
    from the points ``t_i = (i + k / K) h`` (``lattice``: :func:`_tail_lattice` at
    ``h / K``), exactly: with ``psi(c) = E[(c - R)^+] = c - E[R] + pi(c)`` (0 for
    ``c <= 0``), the full hat centred at ``t_i - l h`` gets ``(psi(c + h) - 2 psi(c) +
    psi(c - h)) / h`` at ``c = (l + k / K) h`` (second differences of ``pi`` where every point
    is positive: no cancellation), the half hat at 0 ``(h P(R <= t) - psi(t) + psi(t - h)) /
    h``. Returns, per ``x`` node, the weights of the lags ``0..n``, of the half hat at 0, of
    the node ``i + 1`` (lag -1, nonzero only for ``k > 0``) and ``P(R > t_i)``."""
    xs, _, S = laws
    pi_all, cdf_all, sf_all = lattice
    m = np.arange(-1, n + 2) * K + k                    # c = (l + k / K) h, l = -1..n + 1
    c = m * (h / K)
    pi = pi_all[:, np.maximum(m, 0)]
    psi = np.where(m > 0, c - xs[:, None] * S.mean() + pi, 0.0)
    g = np.empty((xs.size, n + 1))
    g[:, 0] = (psi[:, 2] - 2.0 * psi[:, 1] + psi[:, 0]) / h
    g[:, 1:] = (pi[:, 1:-2] - 2.0 * pi[:, 2:-1] + pi[:, 3:]) / h
    at = np.arange(n + 1) * K + k                       # t_i = (i + k / K) h: column i + 1
    positive = m[:-2] > 0                                # t_i - h > 0
    first = np.where(positive, (pi[:, :-2] - pi[:, 1:-1]) / h - sf_all[:, at],
                     (h * cdf_all[:, at] - psi[:, 1:-1] + psi[:, :-2]) / h)
    return g, first, psi[:, 1] / h, sf_all[:, at]


def _refined_sf(laws: tuple, h: float, n: int, H: np.ndarray, d: int, K: int,
                lattice: tuple | None = None) -> np.ndarray:
    """``P(T > t)`` at ``t = j h / K``, ``j = 0..n K`` (continuous ``S``): exactly for the
    piecewise-linear ``H``, as at the nodes, so the tail keeps its accuracy between nodes
    (where the law varies within a cell, near 0); ``laws`` is ``(x nodes, their weights,
    S)``, ``lattice`` its :func:`_tail_lattice` at ``h / K`` (computed if not given). For each
    shift ``k / K`` one causal convolution per ``x`` node (:func:`_hat_weights`)."""
    weights = laws[1]
    lattice = lattice if lattice is not None else _tail_lattice(laws, h / K, (n + 2) * K)
    out = np.empty(n * K + 1)
    for k in range(K):
        g, first, above, sf = _hat_weights(laws, lattice, h, n, K, k)
        a = sf + _causal_convolve(g, H) + (first - g) * H[0]
        a[:, :-1] += above[:, None] * H[None, 1:]
        value = weights @ np.clip(a, 0.0, 1.0) ** d
        if k == 0:
            out[::K] = value
        else:
            out[k::K] = value[:-1]
    return out


def _fill_tables(solutions, sub: float):
    """:meth:`MeanFieldSolution.table` at ``sub`` for every solution with a continuous
    ``S``, those with the same ``x`` nodes reading one :func:`_tail_lattice` (released
    afterwards; the laws' transforms are evaluated once instead of once per grid)."""
    groups: dict = {}
    for sol in solutions:
        if sol.laws is not None:
            groups.setdefault(sol.laws[0].tobytes(), []).append(sol)
    for group in groups.values():
        steps = [int(round(float(sol.grid[1]) / sub)) for sol in group]
        count = max((sol.grid.size + 1) * K for sol, K in zip(group, steps))
        lattice = _tail_lattice(group[0].laws, sub, count)
        for sol, K in zip(group, steps):
            if K not in sol._tables:
                sol._tables[K] = _refined_sf(sol.laws, float(sol.grid[1]), sol.grid.size - 1,
                                             sol.workload_sf, sol.d, K, lattice)


@lru_cache(maxsize=8)
def _lower_indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ``i`` and offset ``m <= i`` of every entry on or below the diagonal of an
    (n + 1, n + 1) matrix."""
    row, col = np.tril_indices(n + 1)
    return row, row - col


def _check_size(n: int, entries: int = 0):
    """Refuse grids beyond the memory bound (see the module docstring)."""
    if n > _MAX_POINTS or entries > _MAX_ENTRIES:
        size = f"{n} points" + (f" and {entries:.3g} interpolation entries" if entries else "")
        raise GridTooLarge(
            f"the mean-field workload needs a grid of {size}, beyond the bound of "
            f"{_MAX_POINTS} points and {_MAX_ENTRIES:.0e} entries that keeps the analysis "
            f"within about 1 GB: the runtime tail is too heavy (or the system too close to "
            f"its stability frontier) for the grid to hold the workload. Use "
            f"qt.simulate(system) for this system")


def _discretise(model: RuntimeModel, h: float, n: int, aligned: bool = False,
                level: int = 0) -> _Discretisation:
    """The map ``H -> a`` on the grid ``w_i = i h``, i = 0..n (``aligned``: for continuous
    ``X`` and discrete ``S``, integrate ``x`` between the kinks if the grid fits
    :func:`_aligned_fits`)."""
    _check_size(n)
    X, S = _laws(model)
    w = h * np.arange(n + 1)
    if isinstance(S, Discrete):
        disc = _discretise_discrete_s(X, S, w, h, n, aligned)
    else:
        disc = _discretise_continuous_s(X, S, w, h, n, level)
    g = _lattice(model)
    if g is None:
        # the kinks of a jumping density, when they fall on nodes (see _grid)
        g = _aligned(_kink_lattice(model), h)
    disc.lattice_steps = n if g is None else int(round(g / h))
    return disc


def _discretise_discrete_s(X, S, w, h, n, aligned=True) -> _Discretisation:
    s, p = S.values[::-1], S.probs[::-1]           # slowdowns in decreasing order
    if isinstance(X, Discrete):
        # a_x jumps where x s = w: the grid holds those points (see _lattice), and the right
        # limits (for the trapezoid of the cell to the right of w_i) and left limits (to the
        # left) are kept apart; H(w_i - x s) falls on nodes, so linear interpolation is exact
        x = np.repeat(X.values[:, None], n + 1, axis=1)
        omega = np.repeat(X.probs[:, None], n + 1, axis=1)
        tau = np.zeros(n + 1)
        right = _interpolation_map(x, omega, tau, s, p, h, n, closed=True, order=1)
        right.left = _interpolation_map(x, omega, tau, s, p, h, n, closed=False, order=1)
        return right
    if aligned and _aligned_fits(X, s, h, n):
        return _aligned_discretisation(X, s, p, h, n)
    edges = np.vstack([np.zeros(n + 1), w[None, :] / s[:, None]])       # breakpoints w / s
    x, omega, piece = _gauss_pieces(X, edges)
    tau = X.sf(w / s[-1])
    return _interpolation_map(x, omega, tau, s, p, h, n, closed=True, order=1, piece=piece)


def _x_segments(X: Distribution, s: np.ndarray, h: float, reach: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, float]:
    """Gauss-Legendre nodes and weights (times the density of ``X``) on the segments of ``x``
    between consecutive kinks ``(reach_j - k h) / s_j >= 0`` of the linearly interpolated
    ``H(reach_j - x s_j)`` (``H`` on the grid of step ``h``; ``reach_j`` the row ``w_i`` or a
    time ``t``), clipped to the support of ``X`` (its ``1e-17`` and ``1 - 1e-17``
    quantiles), and ``P(X > x)`` beyond the last kink if all of them lie below it. On each
    segment the integrand is a polynomial of degree ``d`` in ``x`` times the density, so the
    rule is exact up to the density's variation and the error expands in powers of ``h``
    (the kinks scale with ``h``)."""
    t, wt = _GL_SEGMENT
    lower = float(X._ppf_all(np.array([_NEGLIGIBLE]))[0])
    upper = float(X._isf_all(np.array([_NEGLIGIBLE]))[0])
    kinks = [np.array([lower])]
    for sj, rj in zip(s, reach):
        # the arguments reach - k h of H, reach itself (x = reach / s_j, where H jumps to
        # 1) computed exactly
        top = min(rj, upper * sj)
        k = np.arange(max(0, math.floor((rj - top) / h)), math.floor(rj / h) + 2)
        v = rj - h * k
        kinks.append(v[(v >= 0.0) & (v <= top)] / sj)
    kinks = np.sort(np.concatenate(kinks))
    kinks = kinks[(kinks >= lower) & (kinks <= upper)]
    # kinks of different slowdowns within rounding of each other are one kink
    keep = np.concatenate([[True], np.diff(kinks) > 1e-12 * max(h / s.max(), kinks[-1])])
    kinks = kinks[keep]
    if kinks[-1] < upper and kinks[-1] >= reach.max() / s.min() * (1.0 - 1e-12):
        last = float(X.sf(np.array([kinks[-1]]))[0])
    else:
        kinks, last = np.append(kinks, upper), 0.0
    lo, width = kinks[:-1], np.diff(kinks)
    x = (lo[:, None] + 0.5 * width[:, None] * (1.0 + t[None, :])).ravel()
    weight = (0.5 * width[:, None] * wt[None, :]).ravel() * X.pdf(x)
    return x, weight, last


def _aligned_nodes(X: Distribution, s: np.ndarray, h: float, n: int) -> int:
    """An upper bound on the nodes of :func:`_x_segments` on the grid of ``n`` steps ``h``:
    ``3`` per kink, ``min(upper s_j, n h) / h`` kinks per slowdown."""
    upper = float(X._isf_all(np.array([_NEGLIGIBLE]))[0])
    return int(_GL_SEGMENT[0].size * (np.minimum(upper * s, n * h) / h + 2).sum())


def _aligned_fits(X: Distribution, s: np.ndarray, h: float, n: int) -> bool:
    """Whether the aligned map of :func:`_aligned_discretisation` on this grid stays within
    ``_MAX_ENTRIES`` node-row pairs (memory) and ``_MAX_WORK`` interpolations (time)."""
    entries = _aligned_nodes(X, s, h, n) * (n + 1)
    return entries <= _MAX_ENTRIES and entries * s.size <= _MAX_WORK


def _aligned_discretisation(X, s, p, h, n) -> _Discretisation:
    """Continuous ``X``, discrete ``S``: the map ``H -> a`` with ``x`` integrated between the
    kinks of the interpolated ``H`` (:func:`_x_segments`), the same nodes for every row, so
    that ``a[q, i] = sum_j p_j H(w_i - x_q s_j)`` is a shift of ``H`` by ``x_q s_j / h``
    steps."""
    x, weight, last = _x_segments(X, s, h, np.full(s.size, h * n))
    u = x[:, None] * (s[None, :] / h)                     # (Q, m) shifts in steps
    shift = np.minimum(np.floor(u), n + 1).astype(np.int64)
    theta = u - np.floor(u)
    disc = _Discretisation(h, n, weight[:, None], np.zeros((x.size, n + 1)),
                           np.full(n + 1, last), shifts=(shift, theta, p))
    disc.c = disc.apply(np.zeros(n + 1))
    return disc


def _stencil(pos: np.ndarray, row: np.ndarray, order: int, n: int):
    """Nodes and weights interpolating ``H`` linearly at ``pos`` (in steps, ``0 <= pos <=
    row``) from nodes never beyond ``row``."""
    del order
    nodes = np.empty((pos.size, 2), dtype=np.int64)
    weights = np.empty((pos.size, 2))
    nodes[:, 0] = np.minimum(pos.astype(np.int64), np.maximum(row - 1, 0))
    np.minimum(nodes[:, 0] + 1, n, out=nodes[:, 1])
    weights[:, 1] = pos - nodes[:, 0]
    weights[:, 0] = 1.0 - weights[:, 1]
    return nodes, weights


def _interpolation_map(x, omega, tau, s, p, h, n, closed: bool, order: int, piece=None
                       ) -> _Discretisation:
    """``a[q, i] = sum_j p_j H(w_i - x[q, i] s_j)`` with ``H = 1`` below 0 (at 0: ``H[0]`` if
    ``closed``, the right limit in ``w``, else 1, the left limit; arguments within 1e-9 steps
    of a node are put on it), ``H`` interpolated on ``order + 1`` nodes that never reach
    beyond ``w_i`` (so the Newton matrix stays lower Hessenberg). ``piece[q]`` (slowdowns in
    decreasing order) says that ``x[q]`` lies between ``w / s_(piece - 1)`` and
    ``w / s_piece``, so only slowdowns ``j >= piece`` can be inside. Memory is proportional
    to the entries kept."""
    q = x.shape[0]
    piece_ends = np.searchsorted(np.zeros(q, dtype=np.int64) if piece is None else piece,
                                 np.arange(len(s)), side="right")
    _check_size(n, int(piece_ends.sum()) * (n + 1) * (order + 1))
    c = np.zeros_like(x)
    steps = np.arange(n + 1)[None, :]
    rows, cols, blocks = [], [], []
    snap = piece is None            # discrete X: the arguments should fall on nodes
    piece = np.zeros(q, dtype=np.int64) if piece is None else piece
    for j, (sj, pj) in enumerate(zip(s, p)):
        end = int(np.searchsorted(piece, j, side="right"))       # pieces are in order
        y = steps - x[:end] * (sj / h)                                  # in steps
        if snap:
            nearest = np.round(y)
            close = np.abs(y - nearest) < 1e-9 * np.maximum(np.abs(nearest), 1.0)
            y = np.where(close, nearest, y)
        inside = (y >= 0) if closed else (y > 0)
        c += pj
        c[:end] -= np.where(inside, pj, 0.0)
        qi, ii = np.nonzero(inside & (omega[:end] > _NEGLIGIBLE))
        pos = y[qi, ii]
        node, weight = _stencil(pos, ii, order, n)
        flat_row = qi * (n + 1) + ii                            # sorted: C order
        row = np.repeat(flat_row, order + 1)
        indptr = np.zeros(q * (n + 1) + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat_row, minlength=q * (n + 1)) * (order + 1), out=indptr[1:])
        blocks.append(sparse.csr_matrix(((pj * weight).ravel(), node.ravel(), indptr),
                                        shape=(q * (n + 1), n + 1)))
        rows.append(row)
        cols.append(node.ravel())
    row, col = np.concatenate(rows), np.concatenate(cols)
    value = np.concatenate([block.data for block in blocks])
    target = (row % (n + 1)) * (n + 1) + col
    return _Discretisation(h, n, omega, c, tau, sparse_map=blocks, flat=(row, target, value))


def _discretise_continuous_s(X, S, w, h, n, level: int = 0) -> _Discretisation:
    if isinstance(X, Discrete):
        xs, ws = X.values, X.probs
    else:
        u, one_minus_u, ws = _x_rule(level)
        xs = np.where(u <= 0.5, X.ppf(np.minimum(u, 0.5)), X._isf_all(np.minimum(one_minus_u, 0.5)))
        keep = (ws > 1e-300) & (xs > 0) & np.isfinite(xs)
        xs, ws = xs[keep], ws[keep] / ws[keep].sum()
    # the hat functions integrated against the law of R = x S exactly (_hat_weights)
    laws = (np.atleast_1d(np.asarray(xs, dtype=float)), np.asarray(ws, dtype=float), S)
    g, first, _, consts = _hat_weights(laws, _tail_lattice(laws, h, n + 2), h, n, 1, 0)
    omega = np.repeat(np.asarray(ws, dtype=float)[:, None], n + 1, axis=1)
    return _Discretisation(h, n, omega, consts, np.zeros(n + 1), toeplitz=(g, first),
                           laws=laws)


@dataclass
class MeanFieldSolution:
    """A solved mean-field workload law on a grid.

    Attributes
    ----------
    arrival_rate : float
        Arrival rate per server ``lam``.
    d : int
        Replicas per job.
    grid : ndarray
        The grid ``w_i = i h`` on ``[0, W]``.
    workload_sf : ndarray
        ``P(U > w_i)``; ``workload_sf[0]`` is the busy fraction.
    response_sf : ndarray
        ``P(T > w_i)``.
    response_sf_left : ndarray
        ``P(T >= w_i)`` (differs from ``response_sf`` where ``T`` has an atom).
    lattice_steps : int
        Grid steps between consecutive points where the law may jump or kink (``n`` when the
        laws are continuous).
    mean : float
        Mean response time (trapezoidal rule on ``response_sf``).
    newton_iterations : int
        Newton steps used.
    """

    arrival_rate: float
    d: int
    grid: np.ndarray
    workload_sf: np.ndarray
    response_sf: np.ndarray
    mean: float
    newton_iterations: int
    response_sf_left: np.ndarray
    lattice_steps: int
    aligned: bool = False          # x integrated between the kinks (see _x_segments)
    laws: tuple | None = field(default=None, repr=False)  # continuous S: (_refined_sf)
    _tables: dict = field(default_factory=dict, repr=False)

    @property
    def busy_fraction(self) -> float:
        return float(self.workload_sf[0])

    @property
    def refinable(self) -> bool:
        """Whether :meth:`table` can evaluate the tail between nodes (continuous ``S``)."""
        return self.laws is not None

    def table(self, sub: float) -> np.ndarray:
        """``P(T > j sub)`` for ``j = 0 .. W / sub`` (``sub`` dividing the step), exactly
        for this grid's ``H`` (:func:`_refined_sf`), cached."""
        K = int(round(float(self.grid[1]) / sub))
        if K not in self._tables:
            h, n = float(self.grid[1]), self.grid.size - 1
            self._tables[K] = _refined_sf(self.laws, h, n, self.workload_sf, self.d, K)
        return self._tables[K]


def _phi(disc: _Discretisation, H: np.ndarray, d: int):
    """``phi_i = E_X[(a - H_i) a^(d-1)]`` and the pieces of its Jacobian."""
    a = np.clip(disc.apply(H), 0.0, 1.0)
    ad1 = a ** (d - 1)
    phi = (disc.omega * (a - H) * ad1).sum(axis=0) + disc.tau * (1.0 - H)
    return a, ad1, phi


def _jacobian_phi(disc, H, d, a, ad1):
    if d == 1:
        coef = disc.omega * np.ones_like(a)
    else:
        coef = disc.omega * a ** (d - 2) * (d * a - (d - 1) * H)
    J = disc.weighted_map(coef)
    J[np.diag_indices_from(J)] -= (disc.omega * ad1).sum(axis=0) + disc.tau
    return J


def _cell_phi(disc: _Discretisation, H: np.ndarray, d: int):
    """``phi`` at the left ends of the cells (right limits) and at their right ends (left
    limits): equal unless ``a`` jumps at grid nodes (discrete ``X`` and ``S``)."""
    right = _phi(disc, H, d)[2]
    left = right if disc.left is None else _phi(disc.left, H, d)[2]
    return right[:-1], left[1:]


def _cell_jacobian(disc: _Discretisation, H: np.ndarray, d: int):
    """Jacobians of :func:`_cell_phi` (rows 0..n-1 and 1..n, all columns)."""
    a, ad1, _ = _phi(disc, H, d)
    right = _jacobian_phi(disc, H, d, a, ad1)
    if disc.left is None:
        return right[:-1], right[1:]
    a, ad1, _ = _phi(disc.left, H, d)
    return right[:-1], _jacobian_phi(disc.left, H, d, a, ad1)[1:]


def _solve_hessenberg(J: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``J x = rhs`` for a lower Hessenberg ``J`` (``J[i, j] = 0`` for ``j > i + 1``).

    Gaussian elimination with partial pivoting between adjacent rows of the reversed (upper
    Hessenberg) matrix, then one triangular solve: ``O(n^2)`` operations, and no multithreaded
    BLAS factorisation (which is slow on a loaded machine for these sizes).
    """
    A = J[::-1, ::-1].copy()
    b = np.array(rhs[::-1], dtype=float)
    for k in range(A.shape[0] - 1):
        upper, lower = A[k, k:], A[k + 1, k:]
        if abs(lower[0]) > abs(upper[0]):
            upper_row, b_k = upper.copy(), b[k].copy()
            upper[:], b[k] = lower, b[k + 1]
            lower[:], b[k + 1] = upper_row, b_k
        m = lower[0] / upper[0]
        lower -= m * upper
        b[k + 1] -= m * b[k]
    return linalg.solve_triangular(A, b, check_finite=False)[::-1]


def _newton(disc: _Discretisation, d: int, H: np.ndarray, lam: float,
            pin: tuple[float, float] | None = None, max_iter: int = 60):
    """Solve the trapezoidal system for ``H`` (``H_n = 0``) at rate ``lam``, or, if
    ``pin = (w, value)`` is given, for ``H`` and ``lam`` with ``H(w) = value`` (``w`` rounded to
    the grid). Returns (H, lam, iterations)."""
    n, h = disc.n, disc.h
    where = None if pin is None else min(int(round(pin[0] / h)), n - 1)
    H = np.asarray(H, dtype=float).copy()
    H[n] = 0.0

    def residual(H, lam):
        right, left = _cell_phi(disc, H, d)
        phi = right + left
        r = H[:n] - H[1:] - 0.5 * h * lam * d * phi
        if pin is not None:
            r = np.append(r, H[where] - pin[1])
        return r, phi

    r, phi = residual(H, lam)
    norm = np.max(np.abs(r))
    for it in range(1, max_iter + 1):
        right, left = _cell_jacobian(disc, H, d)
        J = -0.5 * h * lam * d * (right[:, :n] + left[:, :n])
        J[np.arange(n), np.arange(n)] += 1.0
        J[np.arange(n - 1), np.arange(1, n)] -= 1.0
        if pin is None:
            step = _solve_hessenberg(J, -r)
        else:
            # bordered system [[J, col], [e_where, 0]]: block elimination
            col = -0.5 * h * d * phi
            y = _solve_hessenberg(J, np.column_stack([-r[:n], col]))
            dlam = (y[where, 0] + r[n]) / y[where, 1]
            step = np.append(y[:, 0] - dlam * y[:, 1], dlam)
        t = 1.0
        while True:
            H_new = H.copy()
            H_new[:n] = np.clip(H[:n] + t * step[:n], 0.0, 1.0)
            lam_new = lam + t * step[n] if pin is not None else lam
            r_new, phi_new = residual(H_new, lam_new)
            norm_new = np.max(np.abs(r_new))
            if norm_new < (1.0 - 1e-4 * t) * norm or t < 1e-3:
                break
            t *= 0.5
        H, lam, r, phi = H_new, lam_new, r_new, phi_new
        converged = norm_new < 1e-13 or (np.max(np.abs(t * step)) < 1e-14 and norm_new < 1e-9)
        norm = norm_new
        if converged:
            return H, lam, it
    raise MeanFieldError(f"Newton did not converge (residual {norm:.3g} after {max_iter} "
                         f"steps)")


def _initial_guess(disc: _Discretisation, d: int, lam: float) -> np.ndarray:
    """Light-load guess: ``H(w) = lam d int_w^inf P(min_j x S_j > v) dv`` (capped)."""
    a = disc.c
    sigma = (disc.omega * a ** d).sum(axis=0) + disc.tau
    tail = np.concatenate([np.cumsum((0.5 * disc.h * (sigma[1:] + sigma[:-1]))[::-1])[::-1],
                           [0.0]])
    return np.minimum(lam * d * tail, 0.95)


def _response_sf(disc, H, d) -> tuple[np.ndarray, np.ndarray]:
    """``P(T > w_i)`` (right limits) and ``P(T >= w_i)`` (left limits) at the nodes."""
    def sf(part):
        a = np.clip(part.apply(H), 0.0, 1.0)
        return (part.omega * a ** d).sum(axis=0) + part.tau
    right = sf(disc)
    return right, (right if disc.left is None else sf(disc.left))


def _trapezoid(right: np.ndarray, left: np.ndarray, h: float) -> float:
    """Trapezoidal rule with the right limit at each cell's left end and the left limit at
    its right end."""
    return float(0.5 * h * (right[:-1].sum() + left[1:].sum()))


def _jump_ends(law: Distribution) -> tuple[float | None, float | None]:
    """The lower and upper ends of a continuous law's support that are positive and finite
    and where its density may jump (``None`` for an end that is not): an end is one where the
    quantiles do not move between the levels 1e-17 and 1e-30, its value the exact end
    ``law._support()`` states (the quantile found where the law states no finite end)."""
    a, b = law._support()
    tiny = np.array([1e-17, 1e-30])
    low, lower = law._ppf_all(tiny)
    lo = None
    if low > 0 and abs(low - lower) <= 1e-12 * low:
        lo = float(a) if a > 0 else float(low)
    high, higher = law._isf_all(tiny)
    hi = None
    if np.isfinite(higher) and abs(high - higher) <= 1e-12 * high:
        hi = float(b) if math.isfinite(b) else float(high)
    return lo, hi


def _support_ends(law: Distribution) -> np.ndarray:
    """The atoms of a discrete law; for a continuous law the ends of its support that are
    positive and finite, where a density may jump (:func:`_jump_ends`)."""
    if isinstance(law, Discrete):
        return law.values
    return np.array([e for e in _jump_ends(law) if e is not None])


def _common_measure(values: np.ndarray) -> float | None:
    """The largest ``g`` of which every positive value is a multiple, or ``None`` (no common
    measure down to 1/1000 of the smallest)."""
    values = np.unique(values)
    values = values[values > 0]
    if values.size == 0:
        return None
    base = float(values[0])
    ratios = [Fraction(float(r)).limit_denominator(1000) for r in values / base]
    if any(abs(float(f) - r) > 1e-12 * r for f, r in zip(ratios, values / base)):
        return None
    common = math.lcm(*(f.denominator for f in ratios))
    divisor = math.gcd(*(f.numerator * common // f.denominator for f in ratios))
    return base * divisor / common


@lru_cache(maxsize=256)
def _lattice(model: RuntimeModel) -> float | None:
    """The largest ``g`` of which every runtime ``x s`` is a multiple when ``X`` and ``S`` are
    both discrete (the points where the workload equation jumps), or ``None`` (continuous
    laws, or runtimes with no common measure down to 1/1000 of the smallest)."""
    X, S = _laws(model)
    if not (isinstance(X, Discrete) and isinstance(S, Discrete)):
        return None
    return _common_measure(np.outer(X.values, S.values).ravel())


@lru_cache(maxsize=256)
def _kink_lattice(model: RuntimeModel) -> float | None:
    """For a continuous law whose density jumps at an end ``e`` of its support, with the
    other law discrete (atoms ``v``): the common measure of the points ``e v`` (where the
    derivative of the workload equation jumps, and so, through the shifts by the runtimes,
    at their sums), or ``None``."""
    if not jumping_density(model):
        return None
    X, S = _laws(model)
    discrete, continuous = (X, S) if isinstance(X, Discrete) else (S, X)
    return _common_measure(np.outer(_support_ends(continuous), discrete.values).ravel())


def jumping_density(model: RuntimeModel) -> bool:
    """Whether a continuous ``X`` (S&X with a discrete ``S``) or ``S`` (with a discrete ``X``)
    has a density that jumps at a positive, finite end of its support (uniform, shifted
    exponential, Pareto): the workload equation then kinks at the points ``e v`` (``e`` the
    end, ``v`` an atom of the other law) and their sums, put on grid nodes when they have a
    common measure (:func:`_kink_lattice`); otherwise the convergence in ``h`` is irregular,
    which the third grid of :func:`solve_extrapolated` detects."""
    X, S = _laws(model)
    if isinstance(X, Discrete) == isinstance(S, Discrete):
        return False
    continuous = S if isinstance(X, Discrete) else X
    return _support_ends(continuous).size > 0


def _grid(model: RuntimeModel, length: float, n: int) -> tuple[float, int]:
    """Step and number of intervals of a grid of about ``n`` intervals on ``[0, length]``,
    the step a divisor (at most a third) of the lattice of :func:`_lattice` when there is
    one, so the jumps fall on nodes and every lattice cell holds a cubic stencil; else half a
    divisor of the lattice of :func:`_kink_lattice` when there is one not finer than
    ``length / n``, so the kinks fall on the nodes of this grid and of the grid of twice the
    step. Otherwise ``n`` is rounded up to even (within the memory bound), so that grid
    exists."""
    g = _lattice(model)
    if g is not None:
        per_cell = max(3, int(math.ceil(n * g / length)))
        h = g / per_cell
        return h, int(math.ceil(length / h - 1e-9))
    g = _kink_lattice(model)
    if g is not None and g >= length / n:
        h = g / (2 * int(math.ceil(0.5 * n * g / length)))
        aligned = int(math.ceil(length / h - 1e-9))
        aligned += aligned % 2
        if aligned <= _MAX_POINTS // 2:
            return h, aligned
    if n % 2 and n < _MAX_POINTS // 2:
        n += 1
    return length / n, n


@lru_cache(maxsize=256)
def _scale(model: RuntimeModel, d: int) -> float:
    """Length scale of the workload: the mean of the fastest of ``d`` replicas, computed in
    units of ``E[X]`` (S&X) or ``E[R]`` (IR) so that it scales exactly with the time unit
    (a minimum taken at the scale 1e-9 or 1e9 would meet the absolute tolerances of the
    quadratures)."""
    X, S = _laws(model)
    if isinstance(model, SX):
        return float(X.mean() * S.minimum(d).mean())
    unit = S.mean()
    return float(unit * S.scaled(1.0 / unit).minimum(d).mean())


def _regridded(H: np.ndarray, h_old: float, grid: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """``H`` (on the grid of step ``h_old``) interpolated onto ``grid - shift`` (1 before its
    start, 0 beyond its end)."""
    old = h_old * np.arange(H.size)
    return np.interp(grid - shift, old, H, left=1.0, right=0.0)


def _solve_on(model, d, lam, length, n, H0=None, h0=None, pin=None, fitted=False,
              aligned=False, level=0):
    """Newton solve on ``n`` intervals of a grid whose length is found first (unless
    ``fitted``: ``length`` is known to hold the tails): it is doubled, on a coarse grid of at
    most 128 intervals, until the tails at 0.75 W are below 1e-8.
    ``H0`` on a grid of step ``h0`` seeds Newton. Returns (discretisation, H, lam, iterations).
    """
    if fitted:
        disc = _discretise(model, length / n, n, aligned, level)
        H, lam, iters = _newton(disc, d, _regridded(H0, h0, disc.grid), lam, pin)
        return disc, H, lam, iters
    for _ in range(12):
        disc = _discretise(model, *_grid(model, length, min(n, _PROBE_POINTS)))
        guess = (_initial_guess(disc, d, lam) if H0 is None
                 else _regridded(H0, h0, disc.grid))
        H, lam, iters = _newton(disc, d, guess, lam, pin)
        H0, h0 = H, disc.h
        sf_t = _response_sf(disc, H, d)[0]
        probe = int(0.75 * disc.n)
        if H[probe] < _TAIL_TOL and sf_t[probe] < _TAIL_TOL:
            break
        try:
            _intervals(model, d, 2.0 * length, n)
        except GridTooLarge:
            # the probe's step may be too coarse to read the tail (measured: 3.2e-8 at
            # 0.75 W on 128 intervals where the tail is 1e-16): read it on the grid that
            # would be used before refusing
            disc = _discretise(model, *_grid(model, length,
                                             _intervals(model, d, length, n, aligned)), aligned)
            H, lam, iters = _newton(disc, d, _regridded(H0, h0, disc.grid), lam, pin)
            probe = int(0.75 * disc.n)
            if H[probe] < _TAIL_TOL and _response_sf(disc, H, d)[0][probe] < _TAIL_TOL:
                H0, h0 = H, disc.h
                break
            raise
        length *= 2.0
    else:
        raise MeanFieldError("the workload does not fit on the grid (the system is at or "
                             "beyond its stability frontier)")
    h, n = _grid(model, length, _intervals(model, d, length, n, aligned))
    if n == disc.n and (disc.shifts is not None) == aligned:
        return disc, H, lam, iters
    disc = _discretise(model, h, n, aligned)
    H, lam, iters = _newton(disc, d, _regridded(H0, h0, disc.grid), lam, pin)
    return disc, H, lam, iters


def _intervals(model: RuntimeModel, d: int, length: float, n: int,
               aligned: bool = False) -> int:
    """Intervals of the coarse grid on ``[0, length]``: at least ``n`` and a step of at most
    :func:`_max_step`, but at most half the memory bound (the fine grid doubles it), the step
    then growing up to the length scale :func:`_scale`; beyond that the workload cannot be
    resolved (:class:`GridTooLarge`)."""
    coarsest = int(math.ceil(length / _scale(model, d)))
    _check_size(2 * coarsest)
    wanted = max(n, int(math.ceil(length / _max_step(model, d))))
    if aligned:
        wanted = _aligned_intervals(model, length, wanted)
    return max(min(wanted, _MAX_POINTS // 2), coarsest)


def _can_align(X: Distribution, S: Distribution) -> bool:
    """Continuous ``X`` and discrete ``S``: the case of :func:`_aligned_discretisation`."""
    return isinstance(S, Discrete) and not isinstance(X, Discrete)


def _aligned_intervals(model: RuntimeModel, length: float, n: int) -> int:
    """For continuous ``X`` and discrete ``S``: more intervals than ``n``, up to a step of
    a quarter of ``E[X] min S`` (the scale of the fastest runtimes, which the fourth-order
    extrapolation must resolve), as long as the grid of twice as many still fits
    :func:`_aligned_fits`; otherwise ``n``."""
    X, S = _laws(model)
    if not _can_align(X, S) or not _aligned_fits(X, S.values, 0.5 * length / n, 2 * n):
        return n
    lo, hi = n, max(n, min(int(math.ceil(4.0 * length / (X.mean() * S.values[0]))),
                           _MAX_POINTS // 2))
    while hi > lo:                      # the largest count whose doubled grid fits
        mid = (lo + hi + 1) // 2
        if _aligned_fits(X, S.values, 0.5 * length / mid, 2 * mid):
            lo = mid
        else:
            hi = mid - 1
    return lo + lo % 2


def _max_step(model: RuntimeModel, d: int) -> float:
    """Largest grid step allowed: half the mean of the fastest of ``d`` replicas."""
    return _scale(model, d) / 2.0


def _default_length(model: RuntimeModel, d: int) -> float:
    return max(12.0 * _scale(model, d), 4.0 * model.mean_runtime())


def _solution(disc, H, lam, d, iters) -> MeanFieldSolution:
    right, left = _response_sf(disc, H, d)
    return MeanFieldSolution(lam, d, disc.grid, H, right, _trapezoid(right, left, disc.h),
                             iters, left, disc.lattice_steps, disc.shifts is not None,
                             disc.laws)


def solve(model: RuntimeModel, d: int, arrival_rate: float, *, points: int = 400,
          length: float | None = None) -> MeanFieldSolution:
    """Solve the mean-field workload equation of Redundancy-d at one arrival rate.

    The caller must check stability first (:func:`frontier`): beyond the frontier there is no
    solution and :class:`MeanFieldError` is raised.

    Parameters
    ----------
    model : RuntimeModel
        ``qt.SX(X, S)`` or ``qt.IR(R)``.
    d : int
        Replicas per job.
    arrival_rate : float
        Arrival rate per server.
    points : int
        Grid intervals ``n``.
    length : float, optional
        Initial grid length ``W`` (default ``12`` times the mean of the fastest of ``d``
        replicas, at least ``4 E[R]``); doubled until the tails fit.

    Returns
    -------
    MeanFieldSolution
    """
    length = _default_length(model, d) if length is None else length
    disc, H, lam, iters = _solve_on(model, d, arrival_rate, length, points, aligned=True)
    return _solution(disc, H, lam, d, iters)


def _aligned(lattice: float | None, h: float) -> float | None:
    """``lattice`` where it is a multiple of the step ``h`` (to 1e-9 of a step: its points are
    nodes, and :func:`_table` counts its cells in steps), else ``None``."""
    if lattice is None or abs(lattice / h - round(lattice / h)) > 1e-9 * lattice / h:
        return None
    return lattice


def _table(right: np.ndarray, left: np.ndarray, h: float, steps: int, t: np.ndarray,
           lattice: float | None = None) -> np.ndarray:
    """``P(T > t)`` from node values: right limits ``right``, left limits ``left``, step ``h``.

    Cubic Lagrange interpolation on 4 nodes of the lattice cell (``steps`` grid steps) holding
    ``t``, never across a lattice point, where the law may jump or kink (quadratic on 3 nodes if
    the cell holds 2 steps, linear if 1); 1 below 0, 0 beyond the grid. A ``t`` equal to a multiple
    ``k g`` of the ``lattice`` (computed as ``k * g``) is read as that lattice node, so its
    right limit is taken however ``k g / h`` rounds."""
    n = right.size - 1
    t = np.asarray(t, dtype=float)
    pos = np.clip(t / h, 0.0, n)
    i = np.minimum(pos.astype(np.int64), n - 1)
    if lattice is not None:
        k = np.round(t / lattice)
        node = np.clip(k * steps, 0, n).astype(np.int64)
        pos = np.where(k * lattice == t, node, pos)
        # just below a lattice node but rounded onto it: the left limit, from the cell before
        below = (t < k * lattice) & (pos >= node) & (node > 0)
        pos = np.where(below, node, pos)
        i = np.where(below, node - 1, np.minimum(pos.astype(np.int64), n - 1))
    start = (i // steps) * steps
    end = np.minimum(start + steps, n)
    degree = np.minimum(end - start, 3)
    first = np.where(degree > 1, np.clip(i - 1, start, end - degree), i)
    u = pos - first
    base = np.where(first == end, left[first], right[first])
    out = base.copy()                     # differences: a constant stencil stays exact
    for m in range(1, 4):                 # m = 0 adds its value minus base: nothing
        node = np.minimum(first + m, n)
        value = np.where(node == end, left[node], right[node]) - base
        weight = (m <= degree).astype(float)
        for k in range(4):
            if k != m:
                weight = weight * np.where(k <= degree, (u - k) / (m - k), 1.0)
        out += weight * value
    out = np.clip(out, 0.0, 1.0)
    return np.where(t < 0, 1.0, np.where(t > h * n, 0.0, out))


def _direct_sf(model: RuntimeModel, sol: MeanFieldSolution, t) -> np.ndarray:
    """``P(T > t) = E_X[a_X(t)^d]`` of an aligned solution at any ``t``, with ``x`` integrated
    between the kinks ``(t - k h) / s_j`` of the interpolated ``H(t - x s_j)`` (as at the
    nodes, :func:`_x_segments`), so that the error expands in even powers of ``h`` between
    nodes too (0 beyond the grid)."""
    X, S = _laws(model)
    s, p = S.values[::-1], S.probs[::-1]
    grid, H = sol.grid, sol.workload_sf
    h = float(grid[1])
    t = np.asarray(t, dtype=float)
    out = np.empty(t.size)
    for k, tk in enumerate(t.ravel()):
        if tk > grid[-1]:
            out[k] = 0.0
            continue
        tk = max(tk, 0.0)
        x, weight, last = _x_segments(X, s, h, np.full(s.size, tk))
        arg = tk - x[:, None] * s[None, :]
        a = np.where(arg < 0, 1.0, np.interp(arg, grid, H)) @ p
        out[k] = weight @ np.clip(a, 0.0, 1.0) ** sol.d + last
    return out.reshape(t.shape)


@dataclass
class ExtrapolatedSolution:
    """Mean-field solutions on grids of steps ``h`` and ``h / 2`` and their Richardson
    extrapolation, with error estimates.

    The discretisation error is ``O(h^2)`` (the trapezoidal rule in ``w``, linear
    interpolation of ``H``): the fine value's error is about ``|fine - coarse| / 3`` and the
    extrapolated value ``(4 fine - coarse) / 3`` is much closer. Each ``*_error`` attribute is
    ``|fine - coarse|``, three times the fine value's estimated error, stated as a bound on the
    extrapolated value's: for continuous ``X`` and discrete ``S`` the quadrature over ``X``
    samples the kinks of the interpolated ``H`` and the extrapolation gains less than the
    ``O(h^4)`` of smooth laws (measured against Pollaczek-Khinchine at d = 1 over 22 systems
    with exponential, Erlang and hyperexponential ``X`` and four discrete ``S``: errors 4e-7
    to 4e-4 relative, at most 0.39 of the stated error). When the runtimes are
    discrete but their atoms have no common measure (the jumps fall between nodes) the method
    is only first order: the fine values are returned unextrapolated, with
    ``2 |fine - coarse|`` as their error.

    Continuous ``X`` and discrete ``S`` on the aligned path (``fourth_order``; ``x``
    integrated between the kinks, :func:`_x_segments`): the error of every grid expands in
    even powers of ``h``, so ``(16 R(h, h/2) - R(2 h, h)) / 15`` is returned for the mean,
    the busy fraction and the tail (between nodes evaluated directly, :func:`_direct_sf`),
    with ``|that - R(h, h/2)|`` as the error of the mean and busy fraction, 15 times that
    where the step is above ``E[X] min S / 2`` (``resolved`` false: measured true/stated
    up to 2 at step ``E[X] min S / 2``); quantile errors stay those of the fine and coarse
    tables and the third grid (loose: the tail is extrapolated less cleanly within a few
    steps of 0). Measured against the exact M/G/1 law at d = 1 (``X`` exponential, Erlang;
    ``S`` with 2 and 3 atoms 10 and 20 apart): mean errors 2e-8 to 4e-7, busy fraction 2e-7
    to 9e-6, p95 and p99 3e-9 to 3e-7, p50 2e-7 to 1.2e-4 relative, every one within its
    stated error.

    With ``previous`` (the same extrapolation from the steps ``2 h`` and ``h``), every error is
    at least twice the change of the extrapolated value between the two pairs, which catches
    an irregular convergence (a density jumping at an end of its support; measured against
    Pollaczek-Khinchine at d = 1 over 24 systems with uniform and shifted exponential ``X``
    and four discrete ``S``: mean and busy fraction errors at most 0.91 of the stated error,
    were up to 8 times it; quantiles against the M/G/1 transform inversion, 32 systems: at
    most 0.48).

    Continuous ``X`` and ``S`` whose density does not jump (``smooth_pair``): the errors of
    the mean, busy fraction and quantiles are four times the change of the extrapolated value
    from ``previous`` (quantiles: :meth:`_tail_change_error`); where the density of ``S``
    jumps at an end of its support the convergence in ``h`` is irregular and the errors are
    those above. Both add four times the change from the rule over ``X`` one level below
    (``rule_check``); the
    tail and quantiles read the tables at ``sub_step`` (four points per cell of the finest
    grid). Where the runtime density is logarithmic at 0 (``log_term``) the mean and busy
    fraction are extrapolated in ``h^2 log h`` and ``h^2`` (:func:`_log_extrapolation`), their
    errors four times the change from the three grids one step coarser.
    Measured over 83 systems at d = 1 (``scripts/meanfield_continuous_sweep.py``): every
    error at most 0.36 of the stated one (mean, busy fraction, p50, p95, p99).

    Attributes
    ----------
    fine, coarse : MeanFieldSolution
    previous : ExtrapolatedSolution or None
        The extrapolation from the grids of steps ``2 h`` and ``h``.
    mean, mean_error : float
        ``E[T]`` and its error estimate.
    busy_fraction, busy_error : float
        ``P(U > 0)`` and its error estimate.
    """

    fine: MeanFieldSolution
    coarse: MeanFieldSolution
    second_order: bool
    lattice: float | None = None
    minimum: float = 0.0          # the smallest possible runtime: P(T > t) = 1 below it
    previous: ExtrapolatedSolution | None = None    # the same from steps 2 h and h
    model: RuntimeModel | None = None     # for the direct tail of the aligned path
    resolved: bool = False    # aligned, and the step h at most E[X] min S / 2
    log_term: bool = False    # the runtime density is unbounded at 0 (see _log_singular)
    rule_check: ExtrapolatedSolution | None = None   # coarsest grid: the X rule, the one below
    smooth_pair: bool = False     # X and S continuous, the density of S without jumps
    x_nodes: int = 0              # nodes of the rule over a continuous X (0: X discrete)
    sub_step: float = 0.0         # continuous S: the tail tabulated at this step (refined)

    def _check(self, error, value, previous_value):
        """``error``, or twice the change of the extrapolated value from the previous pair
        of grids if larger (the convergence is then irregular: at first order the change
        is the error)."""
        if self.previous is None:
            return error
        return np.maximum(error, 2.0 * np.abs(value - previous_value))

    def _extrapolate(self, fine: np.ndarray | float, coarse: np.ndarray | float):
        if self.second_order:
            return (4.0 * fine - coarse) / 3.0, np.abs(fine - coarse)
        return fine, 2.0 * np.abs(fine - coarse)

    @property
    def fourth_order(self) -> bool:
        """Whether all three grids integrate ``x`` between the kinks (:func:`_x_segments`):
        the error then expands in even powers of ``h`` and the extrapolations from the
        steps ``(2 h, h)`` and ``(h, h / 2)`` are extrapolated once more."""
        return (self.previous is not None and self.fine.aligned and self.coarse.aligned
                and self.previous.coarse.aligned)

    def _scalar(self, name: str) -> tuple[float, float]:
        """A scalar statistic (``mean`` or ``busy_fraction``) and its error estimate: at
        fourth order ``(16 R(h, h/2) - R(2 h, h)) / 15`` with ``|that - R(h, h/2)|``, the
        estimated error of ``R(h, h/2)``, as its error; else :meth:`_extrapolate` and
        :meth:`_check`."""
        grids = self._grids()
        if self.log_term and len(grids) >= 4:
            values = [getattr(g, name) for g in grids]
            steps = [float(g.grid[1]) for g in grids]
            value = _log_extrapolation(values[-3:], steps[-3:])
            # four times the change from the three coarser grids (measured over 34 systems
            # at d = 1 with the rule's error added: at most 0.21 of the stated error)
            error = 4.0 * abs(value - _log_extrapolation(values[-4:-1], steps[-4:-1]))
            return value, float(error + 1e-14 * abs(value))
        value, error = self._extrapolate(getattr(self.fine, name), getattr(self.coarse, name))
        if self.fourth_order:
            before = getattr(self.previous, name)
            better = (16.0 * value - before) / 15.0
            # unresolved (the memory bound kept the step above E[X] min S / 2): the change
            # of the first extrapolation, 15 times as much
            error = abs(better - value) * (1.0 if self.resolved else 15.0)
            return float(better), float(error + 1e-14 * abs(better))
        previous = None if self.previous is None else getattr(self.previous, name)
        if self.smooth_pair and previous is not None:
            return float(value), float(4.0 * abs(value - previous) + 1e-14 * abs(value))
        return float(value), float(self._check(error, value, previous))

    def _grids(self) -> list[MeanFieldSolution]:
        """The solutions, from the coarsest grid to the finest."""
        chain, before = [self.fine, self.coarse], self.previous
        while before is not None:
            chain.append(before.coarse)
            before = before.previous
        return chain[::-1]

    @property
    def mean(self) -> float:
        return self._scalar("mean")[0]

    def _rule_error(self, name: str) -> float:
        """Error of the quadrature over ``X`` (continuous ``X`` and ``S``): four times the change
        of ``name`` from the rule one level below on the coarsest grid (0 otherwise; see
        :func:`_x_rule_level`)."""
        check = self.rule_check
        if check is None:
            return 0.0
        return 4.0 * abs(getattr(check.fine, name) - getattr(check.coarse, name))

    @property
    def mean_error(self) -> float:
        """Discretisation error estimate plus ``W P(T > 0.75 W)`` for the tail beyond ``W``
        (plus the error of the quadrature over ``X``, :meth:`_rule_error`)."""
        c = self.coarse
        truncation = self.length * float(c.response_sf[int(0.75 * (c.grid.size - 1))])
        return self._scalar("mean")[1] + truncation + self._rule_error("mean")

    @property
    def busy_fraction(self) -> float:
        return self._scalar("busy_fraction")[0]

    @property
    def busy_error(self) -> float:
        return self._scalar("busy_fraction")[1] + self._rule_error("busy_fraction")

    @property
    def length(self) -> float:
        return float(self.coarse.grid[-1])

    def sf(self, t, which: str = "extrapolated") -> np.ndarray:
        """``P(T > t)``: ``which`` is ``"extrapolated"``, ``"fine"``, ``"coarse"`` or (aligned
        path) ``"first"``, the extrapolation from ``h`` and ``h / 2`` alone (1 below
        the smallest possible runtime, whatever the interpolation)."""
        t = np.asarray(t, dtype=float)
        return np.where(t < self.minimum, 1.0, self._sf(t, which))

    def _refined(self, which: str) -> np.ndarray:
        """Continuous ``S``: the tail at the points ``j sub_step`` (four per cell of the finest
        grid), evaluated between the nodes as exactly as at them, extrapolated as at the
        nodes (monotone, in [0, 1])."""
        if which == "fine":
            return self.fine.table(self.sub_step)
        if which == "coarse":
            return self.coarse.table(self.sub_step)
        f, c = self.fine.table(self.sub_step), self.coarse.table(self.sub_step)
        return np.minimum.accumulate(np.clip(self._extrapolate(f, c)[0], 0.0, 1.0))

    def _sf(self, t, which: str) -> np.ndarray:
        c, f = self.coarse, self.fine
        if self.sub_step and which in ("fine", "coarse", "extrapolated"):
            values = self._refined(which)
            steps = self.fine.lattice_steps * int(round(float(self.fine.grid[1])
                                                         / self.sub_step))
            return _table(values, values, self.sub_step, min(steps, values.size - 1), t)
        if self.fourth_order and self.model is not None:
            if which == "fine":
                return _direct_sf(self.model, f, t)
            if which == "coarse":
                return _direct_sf(self.model, c, t)
            one = (4.0 * _direct_sf(self.model, f, t) - _direct_sf(self.model, c, t)) / 3.0
            if which == "first":
                return np.clip(one, 0.0, 1.0)
            two = (4.0 * _direct_sf(self.model, c, t)
                   - _direct_sf(self.model, self.previous.coarse, t)) / 3.0
            return np.clip((16.0 * one - two) / 15.0, 0.0, 1.0)
        if which == "coarse":
            return _table(c.response_sf, c.response_sf_left, float(c.grid[1]),
                          c.lattice_steps, t, self.lattice)
        if which == "fine":
            return _table(f.response_sf, f.response_sf_left, float(f.grid[1]),
                          f.lattice_steps, t, self.lattice)
        right = self._extrapolate(f.response_sf[::2], c.response_sf)[0]
        left = self._extrapolate(f.response_sf_left[::2], c.response_sf_left)[0]
        # monotone and in [0, 1]: P(T >= w_i) >= P(T > w_i) >= P(T >= w_(i+1))
        both = np.minimum.accumulate(np.clip(np.column_stack([left, right]).ravel(), 0, 1))
        return _table(both[1::2], both[0::2], float(c.grid[1]), c.lattice_steps, t,
                      self.lattice)

    def _nodes(self, which: str) -> tuple[np.ndarray, np.ndarray]:
        """A grid and the tail at its nodes, to bracket quantiles. On the aligned path the
        tables (the direct tail at the nodes), extrapolated on the grid of step ``2 h``;
        for continuous ``S`` the refined table (:meth:`_refined`)."""
        if self.sub_step and which in ("fine", "coarse", "extrapolated"):
            values = self._refined(which)
            grid = self.sub_step * np.arange(values.size)
            return grid, np.where(grid < self.minimum, 1.0, values)
        if not (self.fourth_order and self.model is not None):
            grid = self.coarse.grid if which == "coarse" else self.fine.grid
            return grid, self.sf(grid, which)
        if which in ("fine", "coarse"):
            sol = self.fine if which == "fine" else self.coarse
            return sol.grid, np.where(sol.grid < self.minimum, 1.0, sol.response_sf)
        f, c = self.fine.response_sf[::4], self.coarse.response_sf[::2]
        p = self.previous.coarse.response_sf
        nodes = (4.0 * f - c) / 3.0
        if which != "first":
            nodes = (16.0 * nodes - (4.0 * c - p) / 3.0) / 15.0
        nodes = np.clip(nodes, 0.0, 1.0)
        grid = self.previous.coarse.grid
        return grid, np.where(grid < self.minimum, 1.0, nodes)

    def quantile(self, q, which: str = "extrapolated"):
        """The smallest ``t`` with ``P(T > t) <= 1 - q`` (``q`` a float or an array): the
        bracketing grid cell from the node values, then bisection inside it (a level inside
        a jump of the law returns the jump's point exactly)."""
        q = np.asarray(q, dtype=float)
        level = 1.0 - q.ravel()
        grid, nodes = self._nodes(which)
        # first node at which the (non-increasing) tail is at or below the level
        k = np.searchsorted(-np.minimum.accumulate(nodes), -level, side="left")
        k = np.minimum(k, grid.size - 1)
        hi = grid[k]
        lo = np.where(k > 0, grid[np.maximum(k - 1, 0)], 0.0)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            below = self.sf(mid, which) <= level
            hi = np.where(below, mid, hi)
            lo = np.where(below, lo, mid)
            if np.all(hi - lo <= 2e-16 * hi):
                break
        if self.lattice is not None:
            # a level inside a jump: the bisection ends within rounding of a lattice point
            point = np.round(hi / self.lattice) * self.lattice
            hi = np.where(np.abs(hi - point) <= 1e-9 * hi, point, hi)
        out = np.where(level >= nodes[0], 0.0, hi).reshape(q.shape)
        return float(out) if out.ndim == 0 else out

    def _tail_change_error(self, t: np.ndarray) -> np.ndarray:
        """Continuous ``X`` and ``S``: the error of the quantiles ``t`` from the tail, four
        times the largest change of the extrapolated tail from ``previous`` within
        ``max(4 h, t / 10)`` of ``t`` (a change that crosses 0 near ``t`` by accident does
        not pass for a small error; measured: the change of the quantile itself vanished so
        at the p95 of Erlang(3, 3) x Exp(1), load 0.3, 5.6 times below the true error),
        divided by the density there (infinite where the tail is flat)."""
        h = float(self.fine.grid[1])
        out = np.empty(t.size)
        for k, tk in enumerate(t):
            reach = max(4.0 * h, 0.1 * tk)
            window = np.linspace(max(tk - reach, 0.0), tk + reach, 65)
            change = np.max(np.abs(self.sf(window) - self.previous.sf(window)))
            step = 2.0 * self.sub_step
            density = (self.sf(max(tk - step, 0.0)) - self.sf(tk + step)) / (
                tk + step - max(tk - step, 0.0))
            out[k] = 4.0 * change / density if density > 0 else math.inf
        return out

    def quantile_error(self, q):
        """Error estimate of :meth:`quantile`: from the fine and coarse tables' quantiles; on
        the aligned path 15 times the change from the quantile of the first extrapolation
        (the tail converges less cleanly within a few steps of 0)."""
        if self.fourth_order and self.model is not None:
            value = self.quantile(q)
            return 15.0 * np.abs(value - self.quantile(q, "first")) + 1e-14 * np.abs(value)
        if self.smooth_pair and self.previous is not None:
            value = self.quantile(q)
            error = self._tail_change_error(np.atleast_1d(value)).reshape(np.shape(value))
            error = np.maximum(error, 4.0 * np.abs(value - self.previous.quantile(q)))
            error = error + 1e-14 * np.abs(value)
        else:
            fine, coarse = self.quantile(q, "fine"), self.quantile(q, "coarse")
            error = self._check(self._extrapolate(fine, coarse)[1], self.quantile(q),
                                None if self.previous is None else self.previous.quantile(q))
        if self.rule_check is not None:
            error = error + 4.0 * np.abs(self.rule_check.quantile(q, "fine")
                                         - self.rule_check.quantile(q, "coarse"))
        return error


def solve_extrapolated(model: RuntimeModel, d: int, arrival_rate: float, *, points: int = 400,
                       length: float | None = None) -> ExtrapolatedSolution:
    """:func:`solve` with ``n`` and ``2 n`` intervals on the same ``W`` (``n`` at least
    ``points``, and at least ``W`` over half the mean of the fastest of ``d``), Richardson
    extrapolated (see :class:`ExtrapolatedSolution`); unless both laws are discrete, also
    with ``n / 2`` intervals, to check the convergence (and ``n / 4`` where the runtime
    density is unbounded at 0, :func:`_log_singular`). For continuous ``X`` and ``S`` the
    rule over ``X`` is chosen on the coarsest grid first (:func:`_x_rule_level`)."""
    coarse = solve(model, d, arrival_rate, points=points, length=length)
    X, S = _laws(model)
    n, length = coarse.grid.size - 1, float(coarse.grid[-1])
    # the three grids take the same path: aligned only if the finest one fits
    aligned = _can_align(X, S) and _aligned_fits(X, S.values, 0.5 * length / n, 2 * n)
    both_discrete = isinstance(X, Discrete) and isinstance(S, Discrete)
    log_term = _log_singular(X, S) and n % 4 == 0
    counts = [n, 2 * n]
    if not both_discrete and n % 2 == 0:
        counts += [n // 2, n // 4] if log_term else [n // 2]
    seed = coarse
    solved: dict = {}

    def grid(count: int, level: int = 0) -> MeanFieldSolution:
        if (count, level) not in solved:
            disc, H, lam, iters = _solve_on(model, d, arrival_rate, length, count,
                                            H0=seed.workload_sf, h0=float(seed.grid[1]),
                                            fitted=True, aligned=aligned, level=level)
            solved[count, level] = _solution(disc, H, lam, d, iters)
        return solved[count, level]

    if coarse.aligned == aligned:
        solved[n, 0] = coarse
    second = not both_discrete or _lattice(model) is not None
    smallest = _smallest(X) * _smallest(S)
    # continuous S: tails between the nodes at a quarter of the finest step (_refined_sf)
    sub = 0.25 * length / (2 * n) if not isinstance(S, Discrete) else 0.0
    level, rule_check = 0, None
    if _x_rule_applies(X, S):
        level, pair = _x_rule_level(grid, min(counts))
        rule_check = ExtrapolatedSolution(*pair, second, None, smallest, sub_step=sub)
    fine, coarse = grid(2 * n, level), grid(n, level)
    previous = None
    if len(counts) > 2:
        if log_term:
            previous = ExtrapolatedSolution(grid(n // 2, level), grid(n // 4, level), second,
                                            None, smallest, sub_step=sub)
        previous = ExtrapolatedSolution(coarse, grid(n // 2, level), second, _lattice(model),
                                        smallest, previous, sub_step=sub)
    resolved = aligned and length / n <= X.mean() * S.values[0] / 2.0 * (1 + 1e-9)
    if sub:
        _fill_tables(solved.values(), sub)
    return ExtrapolatedSolution(fine, coarse, second, _lattice(model), smallest, previous,
                                model, resolved, log_term, rule_check,
                                rule_check is not None and _support_ends(S).size == 0,
                                _x_rule(level)[2].size if rule_check is not None else 0, sub)


def scheme(model: RuntimeModel, result: ExtrapolatedSolution) -> str:
    """The discretisation behind ``result``, in words (for ``Prediction.method``)."""
    X, S = _laws(model)
    parts = ["trapezoidal rule", "linear interpolation of the workload tail"]
    if isinstance(S, Discrete) and isinstance(X, Discrete):
        parts.append("runtime atoms on grid nodes with left and right limits")
    elif isinstance(S, Discrete):
        parts.append("X integrated by 3-point Gauss-Legendre rules between the kinks of the "
                     "interpolated workload" if result.fourth_order else
                     "Gauss-Legendre over X between the breakpoints w / s")
    else:
        parts.append("the law of the runtime integrated exactly against the hat functions "
                     "(second differences of its stop-loss transform)")
        if result.x_nodes:
            lower = 48 * 2 ** (round(math.log2((result.x_nodes - 1) / 48)) - 1) + 1
            other = 97 if result.x_nodes == 49 else lower
            parts.append(f"X by a {result.x_nodes}-node tanh-sinh rule in probability space "
                         f"(four times its change from {other} nodes added to every error)")
        if result.log_term:
            parts.append("a runtime density unbounded at 0: four grids, the error expanded in "
                         "h^2 log h and h^2")
    return ", ".join(parts)


_RULE_CLOSE = 1e-9
"""Relative change of the mean and busy fraction from the 49-node to the 97-node rule over
``X`` below which the 49-node rule is kept (:func:`_x_rule_level`)."""


def _x_rule_applies(X: Distribution, S: Distribution) -> bool:
    """Continuous ``X`` and ``S``: ``X`` is integrated by a tanh-sinh rule in probability
    space, whose accuracy depends on ``X`` (a hyperexponential ``X`` with rates 2 and 0.2:
    9e-4 relative with 49 nodes, 4e-6 with 97) and on ``S`` (where the density of ``S``
    jumps at an end ``e`` of its support, ``a_x(w)`` kinks at ``x = w / e``, a point that
    moves with ``w``: the rule then converges only like its step squared)."""
    return not isinstance(X, Discrete) and not isinstance(S, Discrete)


def _x_rule_level(grid, count: int) -> tuple[int, tuple]:
    """The rule over ``X`` (level ``k``: ``48 2^k + 1`` tanh-sinh nodes), chosen on the grid
    of ``count`` intervals: 49 nodes if the mean and busy fraction move by less than
    ``_RULE_CLOSE`` (relative) from 49 to 97 nodes, else 193. Returns the level and the
    solutions on that grid with it and the level below (whose difference, times 4, is the
    rule's stated error: :meth:`ExtrapolatedSolution._rule_error`)."""
    low, high = grid(count, 0), grid(count, 1)
    if all(abs(getattr(high, name) - getattr(low, name)) <= _RULE_CLOSE * getattr(high, name)
           for name in ("mean", "busy_fraction")):
        return 0, (low, high)
    return 2, (grid(count, 2), high)


def _log_singular(X: Distribution, S: Distribution) -> bool:
    """Whether the runtime ``X S`` has a density with a logarithmic singularity at 0: ``X``
    and ``S`` both continuous with a positive density at 0 (``f_XS(r) ~ f_X(0) f_S(0)
    log(1 / r)``). The workload tail ``H`` then has ``H'' ~ log w`` near 0, and the grid
    error expands as ``a h^2 log h + b h^2 + ...``, not in powers of ``h``."""
    if isinstance(X, Discrete) or isinstance(S, Discrete):
        return False
    zero = np.zeros(1)
    return bool(X._pdf_all(zero)[0] > 0 and S._pdf_all(zero)[0] > 0)


def _log_extrapolation(values, steps) -> float:
    """The limit ``V`` of ``v(h) = V + a h^2 log h + b h^2`` through three grids."""
    h = np.asarray(steps, dtype=float) / steps[-1]
    A = np.column_stack([np.ones(3), h ** 2 * np.log(h), h ** 2])
    return float(np.linalg.solve(A, np.asarray(values, dtype=float))[0])


def _smallest(law: Distribution) -> float:
    """The lower end of the support (0 unless it is positive; see :func:`_support_ends`)."""
    if isinstance(law, Discrete):
        return float(law.values[0])
    low = _jump_ends(law)[0]
    return 0.0 if low is None else low


def arrival_rate_at_busy_fraction(model: RuntimeModel, d: int, busy: float, *,
                                  points: int = 400, start: MeanFieldSolution | None = None
                                  ) -> MeanFieldSolution:
    """The arrival rate at which the mean-field busy fraction equals ``busy``, with its
    solution (Newton in ``(H, lam)`` with ``H(0) = busy`` fixed), seeded by ``start``."""
    if start is None:
        disc, H, lam, iters = _solve_on(model, d, busy / model.mean_runtime(),
                                        _default_length(model, d), points, pin=(0.0, busy))
    else:
        disc, H, lam, iters = _solve_on(model, d, start.arrival_rate, float(start.grid[-1]),
                                        points, H0=start.workload_sf,
                                        h0=float(start.grid[1]), pin=(0.0, busy))
    return _solution(disc, H, lam, d, iters)


def _front(model, d, start: MeanFieldSolution, position: float, step: float):
    """Solution with ``H(position) = 1/2`` (the front pinned there) on a grid of about the given
    step, seeded by ``start``."""
    grid, H = start.grid, start.workload_sf
    here = float(np.interp(0.5, H[::-1], grid[::-1]))
    shift = position - here
    length = float(grid[-1]) + max(shift, 0.0)
    disc = _discretise(model, *_grid(model, length, 2 * int(math.ceil(0.5 * length / step))))
    guess = _regridded(H, float(grid[1]), disc.grid, shift)
    H, lam, iters = _newton(disc, d, guess, start.arrival_rate, pin=(position, 0.5))
    return _solution(disc, H, lam, d, iters)


def frontier_extrapolated(model: RuntimeModel, d: int, *, points: int = 400,
                          tol: float = 1e-10) -> tuple[float, float]:
    """Largest stable arrival rate of Redundancy-d in the mean-field limit and the estimated
    discretisation error of the unextrapolated value; see :func:`frontier`."""
    if d == 1:
        return 1.0 / model.mean_runtime(), 0.0
    sol = None
    for busy in (0.5, 0.9, 0.99):
        sol = arrival_rate_at_busy_fraction(model, d, busy, points=points, start=sol)
    step = float(sol.grid[1])
    position = 2.0 * float(np.interp(0.5, sol.workload_sf[::-1], sol.grid[::-1]))
    for _ in range(12):
        coarse = _front(model, d, sol, position, step)
        if 1.0 - coarse.busy_fraction < tol:
            fine = _front(model, d, coarse, position, 0.5 * step)
            lam = (4.0 * fine.arrival_rate - coarse.arrival_rate) / 3.0
            return lam, abs(fine.arrival_rate - coarse.arrival_rate) / 3.0
        sol, position = coarse, 1.5 * position
    raise MeanFieldError("the stability frontier did not converge")


def frontier(model: RuntimeModel, d: int, *, points: int = 400) -> float:
    """Largest stable arrival rate per server of Redundancy-d in the mean-field limit.

    The solutions are continued in the busy fraction ``b = H(0)`` (``b = 0.5, 0.9, 0.99``,
    solving for the arrival rate ``lam(b)``); then the workload front (``H = 1/2``) is pinned
    at increasing distances from 0, solving for ``lam`` each time, until ``1 - H(0) < 1e-10``:
    that limit is the arrival rate at which the travelling
    front of the translation-invariant equation stands still, beyond which the workload
    escapes to infinity. Steps ``h`` and ``h / 2`` are Richardson-extrapolated. ``d = 1`` is
    the M/G/1 queue: ``1 / E[R]``.
    """
    return frontier_extrapolated(model, d, points=points)[0]


def _causal_convolve(g: np.ndarray, H: np.ndarray) -> np.ndarray:
    """The first ``H.size`` terms of the convolution of every row of ``g`` with ``H`` (FFT)."""
    size = fft.next_fast_len(g.shape[1] + H.size - 1, real=True)
    spectrum = fft.rfft(g, size, axis=1) * fft.rfft(H, size)
    return fft.irfft(spectrum, size, axis=1)[:, :H.size]
