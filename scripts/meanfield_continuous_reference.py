"""Independent reference solver for the Redundancy-d (S&X) mean-field equation.

Written apart from queuetheory (it imports nothing from it) to pin the references of
``tests/test_meanfield.py::test_continuous_d2_against_an_independent_solver``. Needs numba.
Run from the repository root, e.g. ``python scripts/meanfield_continuous_reference.py A 2 -
W=250`` (``B 2 - W=200``, ``C 2 - W=160``; for d = 1 give the arrival rate in place of ``-``):
prints the busy fraction, the mean and the quantiles at 0.5, 0.95 and 0.99. About 6 to 25 s per
case on 2 cores; changing every resolution setting moves the results by at most 1e-12
relative, and at d = 1 it reproduces Pollaczek-Khinchine to 1e-14.

    -H'(w) = lam d E_X[(a_X(w) - H(w)) a_X(w)^(d-1)],   w > 0,  H(inf) = 0
    a_x(w) = E_S[ H~(w - x S) ],   H~ = 1 on (-inf,0), H on [0,inf)
    P(T > t) = E_X[ a_X(t)^d ]

Method (no code shared with /work/main/queuetheory):
  * H is represented by piecewise Chebyshev-Lobatto interpolants of degree p on a
    mesh that is geometric (ratio 2) from h0 to Lmax, then uniform with element
    length Lmax up to W (H = 0 beyond W).
  * Nystrom/collocation: H(v_i) = int_{v_i}^W F(v) dv with F interpolated on the
    same nodes and integrated exactly (spectral integration matrix).
  * a_x(v) = P(S > v/x) + int_{s_lo}^{min(v/x, s_hi)} H(v - x s) f_S(s) ds is linear in
    the nodal values of H; its coefficients are computed by Gauss-Legendre in s,
    split at every s where v - x s crosses a mesh boundary (so the integrand is a
    polynomial times f_S on each piece) and at the panel breaks of f_S.
  * E_X by composite Gauss-Legendre in x on panels graded geometrically around
    the scale v (x0 = min(v,1)/128, ratio 2, up to 3), then length-3 panels up to
    x_max (P(X > x_max) < 1e-20), split at kinks x = v/s of a_x(v) (uniform S).
  * Nonlinear system solved by Newton with the exact Jacobian (dense).
  * P(T > t) evaluated at arbitrary t with the same quadratures; E[T] by
    Gauss-Legendre on every mesh element; quantiles by brentq on exact P(T > t).
"""
import math
import sys
import time

import numba
import numpy as np
import scipy.sparse as sp
from numpy.polynomial import chebyshev as Ch
from numpy.polynomial.legendre import leggauss
from scipy.optimize import brentq


# ----------------------------------------------------------------- distributions
class Dist:
    """kind 0: Exponential(rate); 1: Erlang(k, rate); 2: Uniform(a, b)."""

    def __init__(self, kind, p1, p2=0.0):
        self.kind, self.p1, self.p2 = kind, float(p1), float(p2)
        if kind == 0:
            self.lo, self.hi = 0.0, 46.0 / self.p1
            self.breaks = np.array([0, 1, 2, 4, 8, 16, 24, 32, 40, 46.0]) / self.p1
            self.jumps = []
            self.mean, self.m2 = 1 / self.p1, 2 / self.p1 ** 2
        elif kind == 1:
            k, r = int(p1), float(p2)
            self.k, self.r = k, r
            hi = 1.0
            while self.sf(hi) > 1e-21:
                hi *= 1.1
            self.lo, self.hi = 0.0, hi
            b = [0.0]
            for z in [0.5, 1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80]:
                if z / r < hi:
                    b.append(z / r)
            b.append(hi)
            self.breaks = np.array(b)
            self.jumps = []
            self.mean, self.m2 = k / r, k * (k + 1) / r ** 2
        elif kind == 2:
            self.lo, self.hi = self.p1, self.p2
            self.breaks = np.array([self.p1, self.p2])
            self.jumps = [self.p1, self.p2]
            self.mean = (self.p1 + self.p2) / 2
            self.m2 = (self.p1 ** 2 + self.p1 * self.p2 + self.p2 ** 2) / 3
        self.par = np.array([float(p1), float(p2)])

    def pdf(self, x):
        x = np.asarray(x, float)
        if self.kind == 0:
            return np.where(x >= 0, self.p1 * np.exp(-self.p1 * x), 0.0)
        if self.kind == 1:
            k, r = self.k, self.r
            return np.where(x >= 0, r ** k * x ** (k - 1) * np.exp(-r * x)
                            / math.factorial(k - 1), 0.0)
        return np.where((x >= self.p1) & (x <= self.p2), 1 / (self.p2 - self.p1), 0.0)

    def sf(self, x):
        x = np.asarray(x, float)
        if self.kind == 0:
            return np.exp(-self.p1 * np.maximum(x, 0))
        if self.kind == 1:
            k, r = self.k, self.r
            z = r * np.maximum(x, 0)
            return np.exp(-z) * sum(z ** n / math.factorial(n) for n in range(k))
        return np.clip((self.p2 - x) / (self.p2 - self.p1), 0, 1)


@numba.njit(cache=True)
def _pdf(kind, p1, p2, s):
    if kind == 0:
        return p1 * math.exp(-p1 * s)
    if kind == 1:
        k = int(p1)
        f = 1.0
        for n in range(1, k):
            f *= n
        return p2 ** k * s ** (k - 1) * math.exp(-p2 * s) / f
    if s < p1 or s > p2:
        return 0.0
    return 1.0 / (p2 - p1)


@numba.njit(cache=True)
def _sf(kind, p1, p2, s):
    if s <= 0.0:
        return 1.0
    if kind == 0:
        return math.exp(-p1 * s)
    if kind == 1:
        k = int(p1)
        z = p2 * s
        acc = 0.0
        term = 1.0
        for n in range(k):
            if n > 0:
                term *= z / n
            acc += term
        return math.exp(-z) * acc
    if s <= p1:
        return 1.0
    if s >= p2:
        return 0.0
    return (p2 - s) / (p2 - p1)


# ------------------------------------------------------------------ a_x(v) kernel
@numba.njit(cache=True)
def _rows(vs, xs, E, p, tn, bw, gt, gw, Sbr, Skind, Sp1, Sp2, Slo, Shi,
          H, store, K, c, aval):
    """For each row r (point v=vs[r], x=xs[r]) compute a_x(v) = c + K[r] . H.
    store=True: fill K[r,:] and c[r]; else aval[r] = c + sum(K[r]*H) directly."""
    M = E.shape[0] - 1
    np1 = p + 1
    nb = Sbr.shape[0]
    bps = np.empty(M + nb + 4)
    ell = np.empty(np1)
    for r in range(vs.shape[0]):
        v = vs[r]
        x = xs[r]
        if v <= 0.0:
            c[r] = 1.0
            aval[r] = 1.0
            continue
        sstar = v / x
        cr = _sf(Skind, Sp1, Sp2, sstar)
        c[r] = cr
        acc = cr
        send = min(sstar, Shi)
        if send > Slo:
            nbp = 0
            bps[nbp] = Slo
            nbp += 1
            bps[nbp] = send
            nbp += 1
            for j in range(nb):
                if Sbr[j] > Slo and Sbr[j] < send:
                    bps[nbp] = Sbr[j]
                    nbp += 1
            wlo = v - x * send
            for j in range(1, M):
                if E[j] > wlo and E[j] < v:
                    bps[nbp] = (v - E[j]) / x
                    nbp += 1
            bb = np.sort(bps[:nbp])
            for q in range(nbp - 1):
                sa = bb[q]
                sb = bb[q + 1]
                if sb - sa <= 1e-15 * max(1.0, sb):
                    continue
                wm = v - x * 0.5 * (sa + sb)
                # element containing wm
                lo = 0
                hi = M
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if E[mid] <= wm:
                        lo = mid
                    else:
                        hi = mid
                e = lo
                he = E[e + 1] - E[e]
                half = 0.5 * (sb - sa)
                cen = 0.5 * (sa + sb)
                for g in range(gt.shape[0]):
                    s = cen + half * gt[g]
                    wt = gw[g] * half * _pdf(Skind, Sp1, Sp2, s)
                    w = v - x * s
                    t = 2.0 * (w - E[e]) / he - 1.0
                    # barycentric Lagrange basis
                    exact = -1
                    den = 0.0
                    for j in range(np1):
                        dt = t - tn[j]
                        if dt == 0.0:
                            exact = j
                            break
                        ell[j] = bw[j] / dt
                        den += ell[j]
                    if exact >= 0:
                        for j in range(np1):
                            ell[j] = 0.0
                        ell[exact] = 1.0
                    else:
                        for j in range(np1):
                            ell[j] /= den
                    base = e * np1
                    if store:
                        for j in range(np1):
                            K[r, base + j] += wt * ell[j]
                    else:
                        for j in range(np1):
                            acc += wt * ell[j] * H[base + j]
        aval[r] = acc


# ------------------------------------------------------------------------ solver
class Solver:
    def __init__(self, X, S, lam, d, p=16, h0=1e-5, Lmax=8.0, W=150.0, qx=12, qs=None,
                 xgeo0=128.0, xcap=3.0, verbose=True):
        self.X, self.S, self.lam, self.d = X, S, lam, d
        self.p, self.qx = p, qx
        self.qs = qs if qs is not None else p // 2 + 8
        self.xgeo0, self.xcap = xgeo0, xcap
        self.verbose = verbose
        # mesh
        E = [0.0, h0]
        while E[-1] * 2 < Lmax:
            E.append(E[-1] * 2)
        while E[-1] + Lmax < W - 1e-12:
            E.append(E[-1] + Lmax)
        E.append(W)
        self.E = np.array(E)
        self.M = len(E) - 1
        j = np.arange(p + 1)
        self.tn = -np.cos(np.pi * j / p)            # ascending Lobatto nodes
        bw = (-1.0) ** j
        bw[0] *= 0.5
        bw[-1] *= 0.5
        self.bw = bw
        self.N = self.M * (p + 1)
        hs = np.diff(self.E)
        self.v = (self.E[:-1, None] + hs[:, None] * (self.tn[None, :] + 1) / 2).ravel()
        self.gt, self.gw = leggauss(self.qs)
        self._build_Q()

    # spectral integration matrix: H(v_i) = int_{v_i}^W F
    def _build_Q(self):
        p = self.p
        V = Ch.chebvander(self.tn, p)
        coef = np.linalg.solve(V, np.eye(p + 1))   # column j: cheb coeffs of l_j
        A = np.zeros((p + 1, p + 1))                # int_{t_i}^1 l_j
        wcc = np.zeros(p + 1)
        for jj in range(p + 1):
            ci = Ch.chebint(coef[:, jj])
            A[:, jj] = Ch.chebval(1.0, ci) - Ch.chebval(self.tn, ci)
            wcc[jj] = Ch.chebval(1.0, ci) - Ch.chebval(-1.0, ci)
        hs = np.diff(self.E)
        M, n1 = self.M, p + 1
        Q = np.zeros((self.N, self.N))
        for e in range(M):
            rows = slice(e * n1, (e + 1) * n1)
            Q[rows, e * n1:(e + 1) * n1] = hs[e] / 2 * A
            for e2 in range(e + 1, M):
                Q[rows, e2 * n1:(e2 + 1) * n1] = hs[e2] / 2 * wcc[None, :]
        self.Q = Q
        self.wcc = wcc

    def xnodes(self, v):
        X = self.X
        xmax = X.hi
        bp = [0.0, xmax]
        g = (min(v, 1.0) if v > 0 else 1.0) / self.xgeo0
        while g < self.xcap:
            bp.append(g)
            g *= 2
        z = self.xcap
        while z < xmax:
            bp.append(z)
            z += self.xcap
        if v > 0:
            for s in self.S.jumps:
                if 0 < v / s < xmax:
                    bp.append(v / s)
        bp = np.unique(np.array(bp))
        bp = bp[(bp >= 0) & (bp <= xmax)]
        keep = np.concatenate([[True], np.diff(bp) > 1e-13 * np.maximum(1, bp[1:])])
        bp = bp[keep]
        t, w = leggauss(self.qx)
        a, b = bp[:-1], bp[1:]
        x = ((a + b)[:, None] / 2 + (b - a)[:, None] / 2 * t[None, :]).ravel()
        wx = ((b - a)[:, None] / 2 * w[None, :]).ravel() * X.pdf(x)
        return x, wx

    def _rowset(self, vs):
        own, xs, ws, vv = [], [], [], []
        for i, v in enumerate(vs):
            x, w = self.xnodes(v)
            own.append(np.full(x.size, i))
            xs.append(x)
            ws.append(w)
            vv.append(np.full(x.size, v))
        return (np.concatenate(own), np.concatenate(vv), np.concatenate(xs),
                np.concatenate(ws))

    def _kernel(self, vv, xx, H, store):
        R = vv.size
        K = np.zeros((R, self.N)) if store else np.zeros((1, 1))
        c = np.zeros(R)
        a = np.zeros(R)
        S = self.S
        _rows(vv, xx, self.E, self.p, self.tn, self.bw, self.gt, self.gw,
              S.breaks.astype(float), S.kind, S.par[0], S.par[1], S.lo, S.hi,
              H if H is not None else np.zeros(self.N), store, K, c, a)
        return K, c, a

    def solve(self, H0=None, tol=1e-14, maxit=40):
        t0 = time.time()
        own, vv, xx, wx = self._rowset(self.v)
        K, c, _ = self._kernel(vv, xx, None, True)
        self.nrows = vv.size
        if self.verbose:
            print(f"  mesh M={self.M} p={self.p} N={self.N} rows={vv.size} "
                  f"K build {time.time()-t0:.1f}s", flush=True)
        lam, d, N = self.lam, self.d, self.N
        H = H0.copy() if H0 is not None else 0.5 * np.exp(-self.v)
        Rsz = vv.size

        def resid(H):
            a = c + K @ H  # noqa: F821 (K is the enclosing solve's)
            Hv = H[own]
            F = lam * d * np.bincount(own, wx * (a - Hv) * a ** (d - 1), minlength=N)
            return H - self.Q @ F, a

        r, a = resid(H)
        nr = np.linalg.norm(r, np.inf)
        for it in range(maxit):
            Hv = H[own]
            if d == 1:
                ck = lam * wx
                dg = -lam * np.bincount(own, wx, minlength=N)
            else:
                ck = lam * d * wx * (a ** (d - 1) + (d - 1) * (a - Hv) * a ** (d - 2))
                dg = -lam * d * np.bincount(own, wx * a ** (d - 1), minlength=N)
            P = sp.csr_matrix((ck, (own, np.arange(Rsz))), shape=(N, Rsz))
            dF = np.asarray(P @ K)
            dF[np.arange(N), np.arange(N)] += dg
            J = np.eye(N) - self.Q @ dF
            step = np.linalg.solve(J, -r)
            tau = 1.0
            while True:
                Hn = H + tau * step
                rn, an = resid(Hn)
                nrn = np.linalg.norm(rn, np.inf)
                if nrn < nr or tau < 1e-3:
                    break
                tau /= 2
            H, r, a, nr = Hn, rn, an, nrn
            if self.verbose:
                print(f"  newton {it}: |res|={nr:.3e} tau={tau} "
                      f"|step|={np.abs(step).max() * tau:.2e}",
                      flush=True)
            if np.abs(step).max() * tau < tol or nr < 1e-15:
                break
        self.H = H
        self.b = H[0]
        self.time_solve = time.time() - t0
        del K
        return H

    # ------------------------------------------------------------ response time
    def tail_T(self, ts):
        ts = np.atleast_1d(np.asarray(ts, float))
        own, vv, xx, wx = self._rowset(ts)
        _, _, a = self._kernel(vv, xx, self.H, False)
        return np.bincount(own, wx * a ** self.d, minlength=ts.size)

    def H_at(self, w):
        """Interpolated H at arbitrary points (w in [0, W])."""
        w = np.atleast_1d(np.asarray(w, float))
        out = np.zeros(w.size)
        n1 = self.p + 1
        for k, ww in enumerate(w):
            e = min(max(np.searchsorted(self.E, ww, side='right') - 1, 0), self.M - 1)
            t = 2 * (ww - self.E[e]) / (self.E[e + 1] - self.E[e]) - 1
            dt = t - self.tn
            if np.any(dt == 0):
                out[k] = self.H[e * n1 + np.argmin(np.abs(dt))]
            else:
                weights = self.bw / dt
                out[k] = weights @ self.H[e * n1:(e + 1) * n1] / weights.sum()
        return out

    def moments(self, qg=24):
        t, w = leggauss(qg)
        a, b = self.E[:-1], self.E[1:]
        ts = ((a + b)[:, None] / 2 + (b - a)[:, None] / 2 * t[None, :]).ravel()
        ws = ((b - a)[:, None] / 2 * w[None, :]).ravel()
        P = self.tail_T(ts)
        self._tgrid, self._Pgrid = ts, P
        ET = ws @ P
        ET2 = 2 * (ws * ts) @ P
        return ET, ET2

    def quantile(self, q):
        target = 1 - q
        ts, P = self._tgrid, self._Pgrid
        i = np.argmax(P <= target)
        lo = ts[i - 1] if i > 0 else 0.0
        hi = ts[i]
        def f(t):
            return self.tail_T(t)[0] - target

        while f(lo) <= 0:
            lo /= 2
        while f(hi) > 0:
            hi *= 1.5
        return brentq(f, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=200)


def run(name, X, S, lam, d, **kw):
    t0 = time.time()
    s = Solver(X, S, lam, d, **kw)
    s.solve()
    ET, ET2 = s.moments()
    qs = [s.quantile(q) for q in (0.5, 0.95, 0.99)]
    W = s.E[-1]
    PW = s.tail_T([W / 2, W])
    out = dict(name=name, d=d, lam=lam, b=s.b, ET=ET, ET2=ET2, q50=qs[0], q95=qs[1], q99=qs[2],
               H_half_W=s.H_at(W / 2)[0], PT_half_W=PW[0], PT_W=PW[1], N=s.N, rows=s.nrows,
               time=time.time() - t0, kw=kw)
    return out, s


CASES = {
    'A': (lambda: Dist(0, 1.0), lambda: Dist(0, 1.0), 0.3),
    'B': (lambda: Dist(1, 2, 2.0), lambda: Dist(1, 2, 1.0), 0.35),
    'C': (lambda: Dist(0, 1.0), lambda: Dist(2, 1.0, 3.0), 0.2),
}


def pk(X, S, lam):
    ER = X.mean * S.mean
    ER2 = X.m2 * S.m2
    rho = lam * ER
    return rho, ER + lam * ER2 / (2 * (1 - rho))


if __name__ == '__main__':
    case = sys.argv[1]
    d = int(sys.argv[2])
    lam = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] != '-' else CASES[case][2]
    kw = {}
    for a in sys.argv[4:]:
        k, v = a.split('=')
        kw[k] = int(v) if k in ('p', 'qx', 'qs') else float(v)
    X, S = CASES[case][0](), CASES[case][1]()
    out, s = run(case, X, S, lam, d, **kw)
    if d == 1:
        rho, ETpk = pk(X, S, lam)
        out['PK_b'] = rho
        out['PK_ET'] = ETpk
        out['err_b'] = out['b'] - rho
        out['err_ET'] = out['ET'] - ETpk
    for k, v in out.items():
        print(f"{k:10s} {v!r}" if not isinstance(v, float) else f"{k:10s} {v:.15g}")
