"""References for tests/test_removal.py (independent of queuetheory; written for an audit,
2026-12-07): MDS(n, m) and Replication(n, d) WITH removal in the mean-field limit, S&X runtimes
``X S`` with a continuous job size (Exponential, Erlang(2) or Uniform) and discrete slowdowns::

    f(w) = lam_t E_X[(F(w) - q(w|X)) phi(q(w|X))],   q(w|x) = sum_j p_j F(w - x s_j).

Grid in ``w`` (step ``h``), ``F`` read off by cubic Hermite interpolation of ``(F, f)`` at the
nodes, Adams-Moulton of order 4 (trapezoid and AM2 to start, restarted at the kinks ``a s_j``,
``b s_j`` of a uniform ``X`` on ``[a, b]``, which are nodes), implicit by fixed point; the
integral over ``X`` by 12-point Gauss-Legendre on pieces split at every jump (``x = w / s_j``)
and kink (``(w - kink) / s_j``) of the integrand; shooting on ``F(0)`` by Brent's method so that
``F(W) = 1``; values on ``h``, ``h/2``, ``h/4`` fitted exactly to ``v + A h^3 + B h^4``.
``P(C > t) = E_X[Psi(q(t|X))]`` by the same rule; quantiles by Brent's method on it. The
stability frontier (``FRONTIERS``): the same march from ``F(0) = 1e-12`` reaches the level behind
the travelling front, ``F(W)`` (settled: ``F(3 W / 4)`` within 1e-14); Brent's method on the
rate where it is 1, on each grid, extrapolated as the values.

Checks (measured 2026-12-07): the S&X M/G/1 (MDS(1, 0)) against Pollaczek-Khinchine, busy
fraction within 5e-10 and mean within 8e-9; the raw grids converge monotonically at O(h^3) (five
grids, h = 1/16 to 1/256), extrapolations from different starting grids agree to about 1e-10.
The frontier (2026-12-07): grids from h = 1/16 and from 1/32 agree to 7.7e-12, seed 1e-14 moves it
by 5e-13, the horizon 800 instead of 400 not at all. Near the frontier (``NEAR_FRONTIER``, from
h = 1/16): the extrapolations' spreads are at most 3.8e-9 (busy fraction) and 4.6e-10 (mean, p99).

Run: ``python scripts/sx_uniform_kink_references.py`` (numba; about two minutes) prints the values
pinned in the tests.
"""
import math

import numpy as np
from numba import njit
from scipy.optimize import brentq
from scipy.special import comb


class Pol:
    def __init__(self, kind, n, r):  # kind 'mds' (r=m) or 'rep' (r=d)
        self.kind, self.n = kind, n
        if kind == 'mds':
            self.N = n + r; self.M = self.N - 1
            self.coef = np.array([comb(self.M, j, exact=True) if j <= n - 1 else 0.0 for j in range(self.M + 1)], float)
            self.tasks_per_job = self.N / n
        else:
            self.d = r; self.M = r - 1
            self.coef = np.zeros(self.M + 1); self.coef[0] = 1.0
            self.tasks_per_job = r


GX, GW = np.polynomial.legendre.leggauss(12)

@njit(cache=True)
def Fi(y, Fv, fv, h, imax):
    if y < 0.0: return 0.0
    k = int(y / h)
    if k >= imax: k = imax - 1
    if k < 0: k = 0
    t = (y - k * h) / h
    t2 = t * t; t3 = t2 * t
    return (2*t3 - 3*t2 + 1) * Fv[k] + (t3 - 2*t2 + t) * h * fv[k] + (-2*t3 + 3*t2) * Fv[k+1] + (t3 - t2) * h * fv[k+1]

@njit(cache=True)
def bsum(q, coef, M):
    if q < 0.0: q = 0.0
    if q > 1.0: q = 1.0
    s = 0.0
    for j in range(M + 1):
        if coef[j] != 0.0:
            s += coef[j] * q**j * (1.0 - q)**(M - j)
    return s

@njit(cache=True)
def xint(w, Fw, Fv, fv, h, imax, sv, sp, xkind, xa, xb, kinks, coef, M, mode, psic, psiM, repn, repd, GX, GW):
    # mode 0: E[(Fw - q) phi(q)] ; mode 1: E[Psi(q)]
    smin = sv.min()
    lo = xa if xkind == 1 else 0.0
    hi = xb if xkind == 1 else 40.0 / xa
    top = w / smin
    if top < lo: top = lo
    up = min(hi, top)
    # breakpoints
    nb = 2 + sv.shape[0] * (1 + kinks.shape[0])
    bp = np.empty(nb); c = 0
    bp[c] = lo; c += 1; bp[c] = up; c += 1
    for j in range(sv.shape[0]):
        v = w / sv[j]
        if v > lo and v < up: bp[c] = v; c += 1
        for kk in range(kinks.shape[0]):
            v = (w - kinks[kk]) / sv[j]
            if v > lo and v < up: bp[c] = v; c += 1
    b = np.sort(bp[:c])
    tot = 0.0
    Lmax = 1.0 if xkind == 1 else 1.0 / xa
    for p in range(c - 1):
        u0 = b[p]; u1 = b[p + 1]
        if u1 - u0 <= 0: continue
        npc = int(math.ceil((u1 - u0) / Lmax))
        L = (u1 - u0) / npc
        for sp_ in range(npc):
            a0 = u0 + sp_ * L
            for g in range(GX.shape[0]):
                x = a0 + (GX[g] + 1) * 0.5 * L
                if xkind == 1:
                    dens = 1.0 / (xb - xa)
                elif xkind == 2:
                    dens = xa * xa * x * math.exp(-xa * x)
                else:
                    dens = xa * math.exp(-xa * x)
                q = 0.0
                for j in range(sv.shape[0]):
                    q += sp[j] * Fi(w - x * sv[j], Fv, fv, h, imax)
                if mode == 0:
                    val = (Fw - q) * bsum(q, coef, M)
                else:
                    if repd > 0:
                        qq = min(max(q, 0.0), 1.0)
                        val = 1.0 - (1.0 - (1.0 - qq)**repd)**repn
                    else:
                        val = bsum(q, psic, psiM)
                tot += GW[g] * 0.5 * L * dens * val
    # remainder x > up (q = 0): integrand Fw (mode 0) or 1 (mode 1)
    if xkind == 1:
        rem = (xb - max(up, xa)) / (xb - xa) if up < xb else 0.0
    elif xkind == 2:
        rem = math.exp(-xa * up) * (1.0 + xa * up)
    else:
        rem = math.exp(-xa * up)
    return tot + rem * (Fw if mode == 0 else 1.0)

@njit(cache=True)
def march(F0, lam_t, h, nn, sv, sp, xkind, xa, xb, kinks, coef, M, GX, GW, Fcap, restart):
    Fv = np.zeros(nn + 2); fv = np.zeros(nn + 2)
    Fv[0] = F0; fv[0] = lam_t * F0
    rs = 0
    for i in range(nn):
        if restart[i]: rs = 0
        w = (i + 1) * h
        # predictor
        if rs >= 3:
            Fp = Fv[i] + h / 24 * (55 * fv[i] - 59 * fv[i-1] + 37 * fv[i-2] - 9 * fv[i-3])
        else:
            Fp = Fv[i] + h * fv[i]
        Fv[i + 1] = Fp; fv[i + 1] = fv[i]
        for it in range(30):
            fn = lam_t * xint(w, Fv[i + 1], Fv, fv, h, i + 1, sv, sp, xkind, xa, xb, kinks, coef, M, 0, coef, M, 0, 0, GX, GW)
            fv[i + 1] = fn
            if rs == 0:
                Fn = Fv[i] + h / 2 * (fv[i] + fn)
            elif rs == 1:
                Fn = Fv[i] + h / 12 * (5 * fn + 8 * fv[i] - fv[i-1])
            else:
                Fn = Fv[i] + h / 24 * (9 * fn + 19 * fv[i] - 5 * fv[i-1] + fv[i-2])
            d = abs(Fn - Fv[i + 1])
            Fv[i + 1] = Fn
            if d < 2e-16 * max(1.0, abs(Fn)) and it > 0: break
        rs += 1
        if Fv[i + 1] > Fcap or not np.isfinite(Fv[i + 1]):
            return Fv, fv, i + 1
    return Fv, fv, nn

class SXGrid:
    def __init__(self, X, S, pol, lam):
        # X: ('exp', rate), ('erlang2', rate) or ('unif', a, b); S: (values, probs)
        self.pol = pol; self.lam_t = lam * pol.tasks_per_job
        self.sv = np.array(S[0], float); self.sp = np.array(S[1], float)
        if X[0] in ('exp', 'erlang2'):
            self.xkind, self.xa, self.xb = (0 if X[0] == 'exp' else 2), float(X[1]), 0.0
            kinks = []
            self.EX = (1 if X[0] == 'exp' else 2) / X[1]
        else:
            self.xkind, self.xa, self.xb = 1, float(X[1]), float(X[2])
            kinks = sorted(set([X[1] * s for s in S[0]] + [X[2] * s for s in S[0]]))
            self.EX = (X[1] + X[2]) / 2
        self.kinks = np.array(kinks, float)
        if pol.kind == 'mds':
            self.psic = np.array([comb(pol.N, j, exact=True) if j <= pol.n - 1 else 0.0 for j in range(pol.N + 1)], float)
            self.psiM = pol.N; self.repn = 0; self.repd = 0
        else:
            self.psic = np.zeros(1); self.psiM = 0; self.repn = pol.n; self.repd = pol.d

    def run(self, F0, h, W, Fcap=2.0):
        nn = int(round(W / h))
        restart = np.zeros(nn + 1, np.bool_)
        for k in self.kinks:
            j = k / h
            if abs(j - round(j)) < 1e-9 and round(j) <= nn: restart[int(round(j))] = True
            elif k < W: raise ValueError('kink off grid')
        return march(F0, self.lam_t, h, nn, self.sv, self.sp, self.xkind, self.xa, self.xb, self.kinks,
                     self.pol.coef, self.pol.M, GX, GW, Fcap, restart)

    def solve(self, h, W, bracket=(1e-12, 1.0)):
        nn = int(round(W / h))
        def g(F0):
            Fv, fv, k = self.run(F0, h, W)
            if k < nn: return 1.0 + Fv[k]
            return Fv[nn] - 1.0
        F0 = brentq(g, *bracket, xtol=1e-16, rtol=1e-15)
        Fv, fv, k = self.run(F0, h, W, Fcap=1e300)
        return F0, Fv, fv

    def sf(self, t, Fv, fv, h, nn):
        return xint(t, 0.0, Fv, fv, h, nn, self.sv, self.sp, self.xkind, self.xa, self.xb, self.kinks,
                    self.pol.coef, self.pol.M, 1, self.psic, self.psiM, self.repn, self.repd, GX, GW)

    def stats(self, h, W, levels, bracket=(1e-12, 1.0)):
        nn = int(round(W / h))
        F0, Fv, fv = self.solve(h, W, bracket)
        g3, w3 = np.polynomial.legendre.leggauss(4)
        mean = 0.0
        for i in range(nn):
            for a, b in zip(g3, w3):
                mean += b * h / 2 * self.sf(i * h + (a + 1) * h / 2, Fv, fv, h, nn)
        qs = []
        for p in levels:
            hi = h
            while self.sf(hi, Fv, fv, h, nn) > 1 - p: hi *= 1.5
            qs.append(brentq(lambda t: self.sf(t, Fv, fv, h, nn) - (1 - p), 0.0, hi, xtol=1e-14, rtol=1e-14))
        Fat = lambda y: Fi(y, Fv, fv, h, nn)
        return dict(busy=1 - F0, mean=mean, q=qs, tail=(1 - Fat(W / 4), 1 - Fat(W / 2)), F0=F0)

    def front_level(self, h, W, seed=1e-12):
        """The level behind the travelling front: ``F(W)`` marched from ``F(0) = seed`` (and
        ``F(3 W / 4)``, to see that it has settled)."""
        nn = int(round(W / h))
        Fv, _, _ = self.run(seed, h, W, Fcap=1e300)
        return Fv[nn], Fv[3 * nn // 4]

    def auto_W(self, h):
        W = 40 * self.EX * self.sv @ self.sp
        while True:
            nn = int(round(W / h)); F0, Fv, fv = self.solve(h, W)
            t1, t2 = 1 - Fi(W / 4, Fv, fv, h, nn), 1 - Fi(W / 2, Fv, fv, h, nn)
            if t2 < 1e-14 or (t2 < 1e-7 and t2 < t1 and t2 * t2 / t1 < 1e-14) or W > 5000: return W, F0
            W *= 2

def richardson(vals, hs):
    # vals on h, h/2, h/4: fit v = v* + A h^3 + B h^4 exactly; also v*(p=4) from last two
    v1, v2, v3 = vals; h = hs[0]
    A = np.array([[1, h**3, h**4], [1, (h/2)**3, (h/2)**4], [1, (h/4)**3, (h/4)**4]])
    sol = np.linalg.solve(A, np.array([v1, v2, v3]))[0]
    p4 = v3 + (v3 - v2) / 15
    return sol, abs(sol - p4), abs(v3 - v2)


CASES = [
    # (slowdowns (values, probs), policy (kind, n, m or d), arrival rate, levels, horizon)
    (([1, 10], [0.9, 0.1]), ('mds', 2, 1), 0.05803325105067067,
     [0.999983912786, 0.999985653087], 152.0),
    (([1, 10], [0.9, 0.1]), ('rep', 2, 2), 0.06103375851750523, [0.999987698313], 152.0),
    (([1, 2], [0.7, 0.3]), ('mds', 2, 1), 0.06899817644027326, [0.999, 0.998961051361], 104.0),
]

NEAR_FRONTIER = [
    # (job size, slowdowns, policy, arrival rate): mean, busy fraction and p99 at 0.97 and 0.99
    # of the frontier, for tests/test_removal.py::test_point_near_the_frontier_on_a_finer_step
    (('exp', 1.0), ([1, 10], [0.9, 0.1]), ('rep', 5, 3), 0.5601908062748266),
    (('exp', 1.0), ([1, 10], [0.9, 0.1]), ('rep', 5, 3), 0.5717411321774004),
]

FRONTIERS = [
    # (job size, slowdowns, policy, bracket of the frontier, horizon): the rate where the level
    # behind the front is 1, for tests/test_removal.py::test_frontier_bracketed_on_finer_grids
    (('erlang2', 2.0), ([1, 10], [0.9, 0.1]), ('rep', 1, 3), (0.58, 0.59), 400.0),
]


def frontier(X, S, spec, bracket, W, h, seed=1e-12):
    """The frontier on the grid of step ``h``: Brent's method on the front's level minus 1."""
    def excess(lam):
        level, earlier = SXGrid(X, S, Pol(*spec), lam).front_level(h, W, seed)
        assert abs(level - earlier) < 1e-14, (lam, level, earlier)   # the front has passed
        return level - 1.0
    return brentq(excess, *bracket, xtol=1e-15, rtol=1e-15)


MEANS = [
    # (slowdowns, policy, arrival rate): the mean, for
    # tests/test_removal.py::test_sx_rule_error_of_the_extrapolated_mean
    (([1, 2], [0.7, 0.3]), ('mds', 4, 2), 0.26894422302076626),
]

if __name__ == "__main__":
    hs = (0.03125, 0.015625, 0.0078125)
    for S, spec, lam, levels, W in CASES:
        grid = SXGrid(('unif', 0.5, 1.5), S, Pol(*spec), lam)
        res = [grid.stats(h, W, levels) for h in hs]
        for j, level in enumerate(levels):
            value, spread, _ = richardson([r['q'][j] for r in res], [hs[0]])
            print(f"{S} {spec} lam={lam!r} level {level}: {float(value)!r} (+- {spread:.1e})")
    for S, spec, lam in MEANS:
        grid = SXGrid(('unif', 0.5, 1.5), S, Pol(*spec), lam)
        W = 2 * grid.auto_W(hs[0])[0]
        res = [grid.stats(h, W, [0.5]) for h in hs[1:] + (hs[-1] / 2,)]
        value, spread, _ = richardson([r['mean'] for r in res], [hs[1]])
        print(f"{S} {spec} lam={lam!r} mean: {float(value)!r} (+- {spread:.1e})")
    for X, S, spec, lam in NEAR_FRONTIER:
        grid = SXGrid(X, S, Pol(*spec), lam)
        W = 2 * grid.auto_W(0.0625)[0]
        res = [grid.stats(h, W, [0.99]) for h in (0.0625,) + hs[:2]]
        values = [richardson([r[key] for r in res], [0.0625])[:2]
                  for key in ('mean', 'busy')] + [richardson([r['q'][0] for r in res], [0.0625])[:2]]
        print(f"{X} x {S} {spec} lam={lam!r}: mean, busy, p99 " +
              ", ".join(f"{float(v)!r} (+- {e:.1e})" for v, e in values))
    for X, S, spec, bracket, W in FRONTIERS:
        values = [frontier(X, S, spec, bracket, W, h) for h in hs]
        value, spread, _ = richardson(values, [hs[0]])
        print(f"{X} x {S} {spec} frontier: {float(value)!r} (+- {spread:.1e})")
