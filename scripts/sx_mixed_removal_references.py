"""References for tests/test_removal.py (independent of queuetheory):
``test_sx_job_size_mixing_an_atom_with_a_density_against_collocation`` and the frontiers of
``test_frontier_continuous_x_with_an_atom_*``.

MDS(n, m) with removal, S&X runtimes ``X S``, in the mean-field limit, for a job size mixing an
atom with a density: ``X = x_d`` with probability ``p_d``, else ``Exponential(mu)`` (``p_e = 1 -
p_d``), and a discrete slowdown ``S``. Written apart from queuetheory/analysis/removal.py, from
the model: a server's workload ``V`` (law ``F``, atom ``F(0)``), ``q(w | x) = sum_s p_s F(w - x
s)``, ``B_M(q) = P(Binomial(M, q) <= n - 1)`` and, for ``w > 0``::

    f(w) = lam_t E_X[(F(w) - q(w | X)) B_(N-1)(q(w | X))],    P(C > t) = E_X[B_N(q(t | X))].

Method (not the package's grids): multi-domain spectral collocation. ``F`` is a polynomial of
degree ``p`` on each cell (Chebyshev-Lobatto or Legendre-Gauss-Lobatto nodes), solved cell by
cell by fixed-point iteration to 1e-16; every sum of up to ``L`` products ``x_d s`` is a cell
end (``f`` jumps there), with the left limit at a cell's right end; the integrals over the
exponential part of ``X`` are Gauss-Legendre on panels split at ``w / s`` and at ``(w - b) / s``
for every cell end ``b`` (the part inside the current cell iterated with ``F``); ``F(0)`` by the
secant method on ``F(W) = 1``. The frontier: the task rate at which the front march started
from ``F(0) = eps`` ends at 1 (Brent), extrapolated linearly to ``eps -> 0`` (it moves by
``-1.31 eps``).

Convergence, measured (2026-12-06): over ``h`` in {0.125, 0.25, 0.5}, ``p`` in {14, 16, 18}, both
node families, ``W`` in {75, 85} (60 to 70 for the second case) and ``L`` in {12, 16}, the
values below agree to 2e-14 relative or better (1e-13 quoted); the frontier moves by 1e-15
from ``h = 0.5, p = 10`` to ``h = 0.25, p = 14`` and by 1.3e-12 from ``eps = 1e-12`` to
``1e-14`` (linear in ``eps``: the extrapolation to about 5e-15). The frontier of MDS(4, 3)
with slowdowns {0.287, 0.418} (``X`` scaled to 0.5 Det(1) + 0.5 Exp(1), ``lam_t`` = 3.9)
needs finer cells: at ``h = 0.5``, degree 10, it is up to 5e-7 off, and with degree 14 at ``h =
0.25`` or 16 at ``h = 0.5`` the iteration per cell diverges (it had returned NaN; now it
raises). ``h = 0.1`` with degree 10 or 14, ``h = 0.25`` with degree 10 (``F(W)`` at the root
the same to 1e-15) and ``h = 0.05`` (``W = 140``) agree to 1e-15, and the value moves by
1.1e-12 relative from ``eps = 1e-12`` to ``1e-14``. Checks: ``m = 0`` (M/G/1 queues, ``F(0)
= 1 - lam_t E[X] E[S]``) to 1e-15 for this ``X`` and for ``X = 1``; a simulation of the finite
system (k = 2000, 1.5e6 batches) within its noise and the finite-k gap.

Usage: ``python scripts/sx_mixed_removal_references.py`` prints the points at ``h = 0.25``, ``p =
14`` and the frontiers at ``h = 0.5`` and ``0.1``, ``p = 10`` (about 2 minutes each; the
frontiers twice, at both ``eps``), within 2e-14 of the pinned values (those of the finest
runs)::

    point {1, 2}:       F(0) 0.13493044005490107  E[C] 4.565048701030073  p99 9.737152301377446
    point {1, sqrt 2}:  F(0) 0.2792811638603849   E[C] 2.4433703758463974 p99 6.328333390413349
    frontier {1, 1.25}: lam* 0.770675001479188
    frontier {0.287, 0.418}, MDS(4, 3), X scaled by 0.0236...: lam* 94.1961181347713
"""

import math

import numpy as np
from numpy.polynomial import chebyshev, legendre
from scipy import optimize, special


class Model:
    """MDS(n, m) at ``lam`` jobs per server; slowdowns ``values`` w.p. ``probs``; ``X = x_d``
    w.p. ``p_d``, else Exponential(``mu``)."""

    def __init__(self, n, m, lam, values, probs, p_d=0.5, x_d=1.0, mu=1.0):
        self.n, self.N = n, n + m
        self.lam_t = lam * (n + m) / n
        self.s, self.ps = np.array(values, float), np.array(probs, float)
        self.p_d, self.x_d, self.p_e, self.mu = p_d, x_d, 1.0 - p_d, mu
        self.s_min = self.s.min()


def binomial_below(q, M, n):
    """``P(Binomial(M, q) <= n - 1)``, a polynomial in ``q``."""
    return sum(special.comb(M, k) * q ** k * (1 - q) ** (M - k) for k in range(n))


def collocation(p, kind):
    """Nodes on [-1, 1], barycentric weights and the integration matrix (``int_{-1}^tau``)."""
    if kind == "cheb":
        tau = -np.cos(np.pi * np.arange(p + 1) / p)
    else:
        inner = np.sort(legendre.Legendre.basis(p).deriv().roots().real)
        tau = np.concatenate([[-1.0], inner, [1.0]])
    w = np.array([1.0 / np.prod(tau[j] - np.delete(tau, j)) for j in range(p + 1)])
    w /= np.abs(w).max()
    coef = np.linalg.solve(chebyshev.chebvander(tau, p), np.eye(p + 1))
    integrate = np.column_stack([chebyshev.chebval(tau, chebyshev.chebint(coef[:, j], lbnd=-1))
                                 for j in range(p + 1)])
    return tau, w, integrate


def lagrange_rows(points, tau, w):
    """Rows of barycentric interpolation at ``points`` (on [-1, 1])."""
    d = points[:, None] - tau[None, :]
    r = w[None, :] / np.where(d == 0.0, 1e-300, d)
    return r / r.sum(axis=1, keepdims=True)


def cell_ends(model, W, L):
    """0 and the sums of up to ``L`` products ``x_d s`` up to ``W``."""
    points, level = {0.0}, [0.0]
    for _ in range(L):
        level = sorted({round(b + model.x_d * s, 12) for b in level for s in model.s
                        if b + model.x_d * s <= W + 1e-9})
        points.update(level)
    return np.array(sorted(points))


def mesh_of(ends, W, h):
    points = sorted(set(ends[ends < W - 1e-9].tolist()) | {W})
    mesh = [points[0]]
    for a, b in zip(points[:-1], points[1:]):
        k = max(1, math.ceil((b - a) / h - 1e-9))
        mesh.extend(a + (b - a) * j / k for j in range(1, k + 1))
        mesh[-1] = b
    return np.array(mesh)


class Solution:
    def __init__(self, mesh, values, tau, w, F0):
        self.mesh, self.values, self.tau, self.w, self.F0 = mesh, values, tau, w, F0

    def F(self, y, cells=None):
        """``F(y)`` from the first ``cells`` cells (the last one's polynomial beyond them), 0
        for ``y < 0``; by default from all of them, ``F(W)`` beyond ``W``."""
        y = np.asarray(y, float)
        if cells is None:
            cells = self.values.shape[0]
            y = np.minimum(y, self.mesh[-1])
        out = np.zeros_like(y)
        pos = y >= 0
        k = np.clip(np.searchsorted(self.mesh[:cells + 1], y[pos], side="right") - 1, 0,
                    cells - 1)
        a, b = self.mesh[k], self.mesh[k + 1]
        d = (2 * (y[pos] - a) / (b - a) - 1)[:, None] - self.tau[None, :]
        r = self.w[None, :] / np.where(d == 0.0, 1e-300, d)
        out[pos] = (r * self.values[k]).sum(1) / r.sum(1)
        return out


def panels(lo, hi, splits, width):
    cuts = [lo] + sorted(x for x in splits if lo < x < hi) + [hi]
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a > 1e-15:
            edges = np.linspace(a, b, max(1, math.ceil((b - a) / width)) + 1)
            out.extend(zip(edges[:-1], edges[1:]))
    return out


def gauss_points(pieces, count):
    if not pieces:
        return np.zeros(0), np.zeros(0)
    x0, w0 = np.polynomial.legendre.leggauss(count)
    P = np.array(pieces)
    a, b = P[:, :1], P[:, 1:]
    return ((a + b) / 2 + (b - a) / 2 * x0).ravel(), ((b - a) / 2 * w0 * np.ones_like(a)).ravel()


def solve(model, F0, h=0.25, p=14, kind="cheb", W=75.0, L=12, x_max=None, past_nodes=12,
          current_nodes=20, width=0.5, tol=1e-16):
    """``F`` on ``[0, W]`` from ``F(0) = F0`` (no normalisation)."""
    x_max = 40.0 / model.mu if x_max is None else x_max
    tau, wb, integrate = collocation(p, kind)
    ends = cell_ends(model, W, L)
    mesh = mesh_of(ends, W, h)
    sol = Solution(mesh, np.zeros((mesh.size - 1, p + 1)), tau, wb, F0)
    splits_at = np.concatenate([ends, [0.0]])
    start = F0
    for k in range(mesh.size - 1):
        c0, c1 = mesh[k], mesh[k + 1]
        hc = c1 - c0
        t = c0 + hc * (tau + 1) / 2
        t[0], t[-1] = c0, c1
        q_atom = np.zeros(p + 1)       # q(t | x_d), from the cells before
        if model.p_d > 0:
            for s, ps in zip(model.s, model.ps):
                y = t - model.x_d * s
                v = np.zeros(p + 1)
                zero, pos = np.abs(y) <= 1e-11, y > 1e-11
                if pos.any():
                    if k == 0:
                        raise RuntimeError("h too large for x_d s_min")
                    v[pos] = sol.F(y[pos], k)
                v[zero] = F0
                if zero[-1]:
                    v[-1] = 0.0        # the left limit at the cell's right end
                q_atom += ps * v
        b_atom = binomial_below(q_atom, model.N - 1, model.n)
        A, Cc, E = np.zeros(p + 1), np.zeros(p + 1), np.zeros(p + 1)
        rows, weights = [], []
        current = {j: [] for j in range(model.s.size)}
        known = {j: [] for j in range(model.s.size)}
        if model.p_e > 0:
            E = np.exp(-model.mu * t / model.s_min)   # P(X > t / s_min): q = 0 there
            for i, ti in enumerate(t):
                delta = (ti - c0) / model.s_min
                top = min(ti / model.s_min, x_max)
                splits = ([(ti - b) / s for b in splits_at for s in model.s]
                          + [(ti - c0) / s for s in model.s])
                if top > delta and k > 0:       # x s reaching back before this cell
                    X, Wt = gauss_points(panels(delta, top, splits, width), past_nodes)
                    Wt = Wt * model.mu * np.exp(-model.mu * X)
                    q = sum(ps * sol.F(np.minimum(ti - X * s, c0), k)
                            for s, ps in zip(model.s, model.ps))
                    Bq = binomial_below(q, model.N - 1, model.n)
                    A[i], Cc[i] = (Wt * Bq).sum(), (Wt * q * Bq).sum()
                if delta > 0:                    # x s within this cell: iterated with F
                    X, Wt = gauss_points(panels(0.0, min(delta, x_max),
                                                splits + [ti / s for s in model.s], 10.0),
                                         current_nodes)
                    rows.append(np.full(X.size, i))
                    weights.append(Wt * model.mu * np.exp(-model.mu * X))
                    for j, s in enumerate(model.s):
                        y = ti - X * s
                        M, fixed = np.zeros((X.size, p + 1)), np.zeros(X.size)
                        inside = y >= c0 - 1e-14
                        before = (y >= 0) & ~inside
                        if inside.any():
                            M[inside] = lagrange_rows(2 * (np.maximum(y[inside], c0) - c0) / hc
                                                      - 1, tau, wb)
                        if before.any():
                            fixed[before] = sol.F(y[before], k)
                        current[j].append(M)
                        known[j].append(fixed)
        if rows:
            rows, weights = np.concatenate(rows), np.concatenate(weights)
            current = [np.vstack(current[j]) for j in range(model.s.size)]
            known = [np.concatenate(known[j]) for j in range(model.s.size)]
        F = np.full(p + 1, F0) if k == 0 else sol.F(np.maximum(t, 0), k)
        F[0] = start
        for _ in range(200):
            f = model.p_d * (F - q_atom) * b_atom
            if model.p_e > 0:
                inner = np.zeros(p + 1)
                if len(rows):
                    q = sum(model.ps[j] * (current[j] @ F + known[j])
                            for j in range(model.s.size))
                    inner = np.bincount(rows, weights * (F[rows] - q)
                                        * binomial_below(q, model.N - 1, model.n),
                                        minlength=p + 1)
                f = f + model.p_e * (F * A - Cc + F * E + inner)
            new = start + hc / 2 * (integrate @ (model.lam_t * f))
            change = np.abs(new - F).max()
            F = new
            if change <= tol:
                break
        else:   # no change below 1e-16 (rounding can keep it at an ulp of 1): unless diverging
            if not change <= 1e-13:   # NaN too
                raise RuntimeError(f"no fixed point in cell {k}: a smaller h or degree")
        sol.values[k] = F
        start = F[-1]
    return sol


def shoot(model, a0, a1, **options):
    """``F(0)`` with ``F(W) = 1`` by the secant method from ``a0``, ``a1`` (near the root)."""
    s0 = solve(model, a0, **options)
    s1 = solve(model, a1, **options)
    L0, L1 = s0.values[-1, -1] - 1, s1.values[-1, -1] - 1
    for _ in range(30):
        a2 = a1 - L1 * (a1 - a0) / (L1 - L0)
        a0, L0 = a1, L1
        s1 = solve(model, a2, **options)
        a1, L1 = a2, s1.values[-1, -1] - 1
        if abs(L1) < 2e-15 or abs(a1 - a0) < 1e-16:
            break
    return s1


def batch_sf(model, sol, t, ends, nodes=16, width=0.5, x_max=None):
    """``P(C > t)`` (right-continuous: ``q(t | x) = P(V + x S <= t)``)."""
    x_max = 40.0 / model.mu if x_max is None else x_max
    out = 0.0
    if model.p_d > 0:
        q = 0.0
        for s, ps in zip(model.s, model.ps):
            y = t - model.x_d * s
            q += ps * (sol.F0 if abs(y) <= 1e-11 else (sol.F([y])[0] if y > 0 else 0.0))
        out += model.p_d * binomial_below(q, model.N, model.n)
    if model.p_e > 0:
        splits = [(t - b) / s for b in ends for s in model.s]
        X, Wt = gauss_points(panels(0.0, min(t / model.s_min, x_max), splits, width), nodes)
        Wt = Wt * model.mu * np.exp(-model.mu * X)
        q = sum(ps * sol.F(t - X * s) for s, ps in zip(model.s, model.ps))
        out += model.p_e * ((Wt * binomial_below(q, model.N, model.n)).sum()
                            + math.exp(-model.mu * t / model.s_min))
    return out


def point(values, W=75.0, L=12, **options):
    """MDS(4, 2) at ``lam = 0.5``, ``X = 0.5 Det(1) + 0.5 Exp(1)``: ``F(0)``, ``E[C]``, p99."""
    model = Model(4, 2, 0.5, values, [0.5, 0.5])
    sol = shoot(model, 0.13, 0.14, W=W, L=L, **options)
    ends = cell_ends(model, W, L)
    X, Wt = gauss_points(panels(0.0, 70.0, [b for b in ends if 0 < b < 70.0], 0.25), 16)
    mean = (Wt * np.array([batch_sf(model, sol, x, ends) for x in X])).sum()
    t = 1.0
    while batch_sf(model, sol, t, ends) > 0.01:
        t += 1.0
    p99 = optimize.brentq(lambda u: batch_sf(model, sol, u, ends) - 0.01, t - 1.0, t,
                          xtol=1e-15, rtol=1e-15, maxiter=200)
    return sol.F0, mean, p99


def frontier(eps, n=4, m=2, values=(1.0, 1.25), probs=(0.5, 0.5), lo=1.155, hi=1.157,
             W=160.0, **options):
    """``lam*`` of MDS(n, m), ``X = 0.5 Det(1) + 0.5 Exp(1)``, slowdowns ``values`` w.p.
    ``probs``: the task rate in ``[lo, hi]`` at which the front from ``F(0) = eps`` ends at 1,
    times ``n / N``."""
    def excess(lam_t):
        model = Model(n, m, lam_t * n / (n + m), values, probs)
        end = solve(model, eps, W=W, L=10, **options).values[-1, -1]
        return (end if np.isfinite(end) else 1e3) - 1.0

    return optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=1e-15) * n / (n + m)


def extrapolated_frontier(h=0.5, **case):
    """:func:`frontier` at ``eps = 1e-12`` and ``1e-14`` (degree 10), extrapolated linearly to
    ``eps = 0`` (it moves by ``-c eps``)."""
    lam12, lam14 = (frontier(eps, h=h, p=10, **case) for eps in (1e-12, 1e-14))
    return lam14 + (lam14 - lam12) * 1e-14 / (1e-12 - 1e-14)


def main():
    for name, values, W in (("{1, 2}:      ", [1.0, 2.0], 75.0),
                            ("{1, sqrt 2}: ", [1.0, math.sqrt(2)], 65.0)):
        F0, mean, p99 = point(values, W=W)
        print(f"point {name} F(0) {float(F0)!r}  E[C] {float(mean)!r}  p99 {p99!r}", flush=True)
    print(f"frontier {{1, 1.25}}: lam* {extrapolated_frontier()!r}", flush=True)
    # X = 0.0236... (0.5 Det(1) + 0.5 Exp(1)): lam* scales as 1 / 0.0236...
    lam = extrapolated_frontier(0.1, n=4, m=3, values=(0.287, 0.418),
                                probs=(0.41255889282223274, 0.5874411071777673), lo=3.8925,
                                hi=3.8932, W=120.0) / 0.023615430180016085
    print(f"frontier {{0.287, 0.418}}, MDS(4, 3), X scaled by 0.0236...: lam* {lam!r}")


if __name__ == "__main__":
    main()
