"""Independent references for tests/test_meanfield.py (run by hand, not collected by pytest).

* ``mg1_phase_type``: the M/G/1 FCFS sojourn time for B = X S with X exponential, Erlang or
  hyperexponential and S discrete (a rational transform), with mpmath (40 digits in main).
* ``cavity``: an independent solver of the Redundancy-d mean-field (cavity) equation for S&X
  with continuous X and discrete S, written apart from queuetheory/analysis/meanfield.py.

Usage: ``python tests/meanfield_references.py`` prints the pinned values (the cavity solve
takes minutes).
"""

import mpmath as mp
import numpy as np
from scipy import interpolate, optimize

GL = np.polynomial.legendre.leggauss(10)


def poly_mul(a, b):
    out = [mp.mpf(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out

def poly_add(a, b):
    n = max(len(a), len(b))
    a = a + [0] * (n - len(a))
    b = b + [0] * (n - len(b))
    return [x + y for x, y in zip(a, b)]

def rational_B(components):
    """components: (weight, k, rate), Erlang(k, rate) w.p. weight; B* = N / D, coefficients
    from the constant term up."""
    N, D = [mp.mpf(0)], [mp.mpf(1)]
    for w, k, r in components:
        r = mp.mpf(r)
        Ni = [mp.mpf(w) * r**k]
        Di = [mp.mpf(1)]
        for _ in range(k):
            Di = poly_mul(Di, [r, mp.mpf(1)])
        N = poly_add(poly_mul(N, Di), poly_mul(Ni, D))
        D = poly_mul(D, Di)
    return N, D

def peval(p, s):
    return sum(c * s**i for i, c in enumerate(p))

def mg1_phase_type(components, lam):
    lam = mp.mpf(lam)
    N, D = rational_B(components)
    mean = sum(mp.mpf(w) * k / mp.mpf(r) for w, k, r in components)
    m2 = sum(mp.mpf(w) * k * (k + 1) / mp.mpf(r)**2 for w, k, r in components)
    rho = lam * mean
    P = poly_add(poly_mul([-lam, mp.mpf(1)], D), [lam * c for c in N])   # (s - lam) D + lam N
    assert abs(P[0]) < mp.mpf(10) ** (-30)
    Q = P[1:]
    roots = mp.polyroots(Q[::-1], maxsteps=500, extraprec=400)
    dQ = [i * c for i, c in enumerate(Q)][1:]
    terms = []
    for r in roots:
        res = (1 - rho) * peval(N, r) / peval(dQ, r)
        terms.append((r, -res / r))
    def sf(t):
        return mp.re(sum(c * mp.exp(r * t) for r, c in terms))
    pk = mean + lam * m2 / (2 * (1 - rho))
    return dict(mean=pk, busy=rho, sf=sf, terms=terms)

def mg1_quantile(ref, q):
    sf = ref['sf']
    lo, hi = mp.mpf(0), mp.mpf(1)
    while sf(hi) > 1 - q:
        hi *= 2
    return mp.findroot(lambda t: sf(t) - (1 - q), (lo, hi), solver='anderson', tol=1e-35)

def components(X, S):
    """X: ('exp', rate) | ('erlang', k, rate) | ('hyper', [p], [rates]); S: (values, probs)."""
    out = []
    kind = X[0]
    xs = ([(1.0, 1, X[1])] if kind == 'exp' else [(1.0, X[1], X[2])] if kind == 'erlang'
          else [(p, 1, r) for p, r in zip(X[1], X[2])])
    for s, ps in zip(*S):
        for w, k, r in xs:
            out.append((mp.mpf(str(ps)) * mp.mpf(str(w)), k, mp.mpf(str(r)) / mp.mpf(str(s))))
    tot = sum(c[0] for c in out)
    return [(w / tot, k, r) for w, k, r in out]


def x_rule(X, lo, hi, part):
    """nodes, weights*pdf on [lo, hi] cut into parts <= part."""
    if hi <= lo:
        return np.empty(0), np.empty(0)
    k = max(1, int(np.ceil((hi - lo) / part)))
    e = np.linspace(lo, hi, k + 1)
    a, b = e[:-1, None], e[1:, None]
    x = (0.5 * (a + b) + 0.5 * (b - a) * GL[0][None, :]).ravel()
    w = (0.5 * (b - a) * GL[1][None, :]).ravel()
    return x, w * X.pdf(x)

class Problem:
    def __init__(self, X, s, p, d, lam, W, delta):
        self.X, self.d, self.lam = X, d, lam
        self.s, self.p = np.asarray(s, float), np.asarray(p, float)
        self.grid = np.linspace(0.0, W, int(round(W / delta)) + 1)
        self.upper = float(X._isf_all(np.array([1e-18]))[0])
        self.part = X.mean() / 8.0
        order = np.argsort(-self.s)
        self.s, self.p = self.s[order], self.p[order]
        self.rules = [self._rule(w) for w in self.grid]

    def _rule(self, w):
        """x nodes/weights for a(w) (all pieces up to w / min s) and the mass beyond."""
        edges = [0.0] + [min(w / sj, self.upper) for sj in self.s]
        xs, ws = [], []
        for lo, hi in zip(edges[:-1], edges[1:]):
            x, wt = x_rule(self.X, lo, hi, self.part)
            xs.append(x)
            ws.append(wt)
        return np.concatenate(xs), np.concatenate(ws), float(self.X.sf(w / self.s[-1]))

    def a(self, spline, w, x):
        args = w - x[:, None] * self.s[None, :]
        vals = np.where(args < 0, 1.0, spline(np.clip(args, 0, self.grid[-1])))
        vals = np.where(args > self.grid[-1], 0.0, vals)
        return vals @ self.p

    def rhs(self, H):
        spline = interpolate.make_interp_spline(self.grid, H, k=5)
        out = np.empty_like(H)
        for i, w in enumerate(self.grid):
            x, wt, beyond = self.rules[i]
            a = np.clip(self.a(spline, w, x), 0, 1) if x.size else np.empty(0)
            out[i] = self.lam * self.d * (wt @ ((a - H[i]) * a ** (self.d - 1))
                                          + beyond * (1 - H[i]))
        return out

    def T(self, H):
        F = interpolate.make_interp_spline(self.grid, self.rhs(H), k=5)
        anti = F.antiderivative()
        return anti(self.grid[-1]) - anti(self.grid)

    def solve(self, H0):
        def res(H):
            return H - self.T(H)

        H = optimize.newton_krylov(res, H0, f_tol=1e-13, verbose=False, maxiter=200)
        return H, float(np.max(np.abs(res(H))))

    def sf(self, spline, t):
        x, wt, beyond = self._rule(t)
        a = np.clip(self.a(spline, t, x), 0, 1)
        return float(wt @ a ** self.d + beyond)

def solve_case(X, s, p, d, lam, W, delta, H0fun):
    P = Problem(X, s, p, d, lam, W, delta)
    H, resid = P.solve(H0fun(P.grid))
    spline = interpolate.make_interp_spline(P.grid, H, k=5)
    # mean: composite 10-point GL on unit-ish cells of the t-axis (sf smooth for continuous X)
    edges = np.linspace(0, W, int(W / (X.mean() / 4)) + 1)
    mean = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        t = 0.5 * (lo + hi) + 0.5 * (hi - lo) * GL[0]
        mean += 0.5 * (hi - lo) * sum(wq * P.sf(spline, tq) for tq, wq in zip(t, GL[1]))
    qs = []
    for q in (0.5, 0.95, 0.99):
        def f(t, q=q):
            return P.sf(spline, t) - (1 - q)

        hi = 1.0
        while f(hi) > 0:
            hi *= 2
        qs.append(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-15))
    return dict(busy=float(H[0]), mean=mean, q=qs, resid=resid)


def main():
    import queuetheory as qt  # only for the laws' pdf and sf
    from queuetheory.analysis import meanfield

    for X, S, lam in [(("exp", 1.9), ([1.0, 10.0], [0.9, 0.1]), 0.4),
                      (("exp", 1.95), ([1.0, 20.0], [0.95, 0.05]), 0.5),
                      (("erlang", 3, 3.0), ([1.0, 2.0, 5.0], [0.5, 0.3, 0.2]), 0.3),
                      (("exp", 1.0), ([1.0, 3.0], [0.7, 0.3]), 0.4)]:
        with mp.workdps(40):
            ref = mg1_phase_type(components(X, S), lam)
            print(X, S, lam, float(ref["mean"]), float(ref["busy"]),
                  [float(mg1_quantile(ref, q)) for q in (0.5, 0.95, 0.99)])
    X = qt.Exponential(1.9)
    # Newton-Krylov is seeded by the library's solution (the seed does not move the converged
    # fixed point: residual 1e-14)
    seed = meanfield.solve_extrapolated(qt.SX(X, qt.Discrete([1.0, 10.0], [0.9, 0.1])), 2, 0.4)

    def guess(grid):
        return np.interp(grid, seed.fine.grid, seed.fine.workload_sf)

    for delta in (0.2, 0.1):
        print(delta, solve_case(X, [1.0, 10.0], [0.9, 0.1], 2, 0.4, 110.0, delta, guess))


if __name__ == "__main__":
    main()
