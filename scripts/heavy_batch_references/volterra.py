"""Time-domain solver (float64) for the M/G/1 waiting-time tail Wbar(y) = P(W > y):

   Wbar(y) = lam * int_y^inf Rbar(u) du  +  lam * int_0^y Wbar(y-u) Rbar(u) du

with Rbar(u) = Rlow(u) for u < c and Rhigh(u) for u >= c (both analytic).
Solution is piecewise analytic with breakpoints at multiples of c.  Mesh: elements of length
h = c/m; on each element Wbar is represented by its values at p Gauss-Legendre nodes
(Nystrom / collocation, spectral accuracy).  All integrals are split at the kernel breakpoint
y - c, which for node i of element k falls in element k-m at the same relative position.

Sojourn tail:  H(t) = P(W + R > t) = Rbar(t) + int_0^{t-c} Wbar(v) f_R(t-v) dv   (t >= c)
for Pareto service (f_R(x) = alpha c^alpha x^(-alpha-1), x >= c).
"""
import numpy as np
from numpy.polynomial.legendre import leggauss


def bary_weights(x):
    n = len(x)
    w = np.ones(n)
    for i in range(n):
        d = x[i] - np.delete(x, i)
        w[i] = 1.0 / np.prod(d)
    return w


def interp_matrix(xn, bw, xt):
    """Lagrange interpolation matrix from nodes xn (barycentric weights bw) to targets xt."""
    xt = np.atleast_1d(xt)
    M = np.zeros((len(xt), len(xn)))
    for r, x in enumerate(xt):
        d = x - xn
        j = np.where(np.abs(d) < 1e-15)[0]
        if len(j):
            M[r, j[0]] = 1.0
        else:
            tmp = bw / d
            M[r] = tmp / tmp.sum()
    return M


class VolterraMG1:
    def __init__(self, lam, c, Rlow, Rhigh, lamIbar, Y, m=2, p=16, q=24):
        self.lam, self.c, self.m, self.p, self.q = lam, c, m, p, q
        self.Rlow, self.Rhigh, self.lamIbar = Rlow, Rhigh, lamIbar
        self.h = h = c / m
        self.K = K = int(np.ceil(Y / h - 1e-9))
        xg, wg = leggauss(p)
        self.xg, self.wg = xg, wg
        self.bw = bary_weights(xg)
        xq, wq = leggauss(q)
        self.xq, self.wq = xq, wq
        # nodes
        self.y = (np.arange(K)[:, None] * h + h * (1 + xg[None, :]) / 2)  # K x p
        self.W = np.zeros((K, p))
        self._solve()

    def _sub(self, a, b):
        """q-point GL nodes/weights on [a,b] in local element coords [-1,1]."""
        xs = (a + b) / 2 + (b - a) / 2 * self.xq
        ws = (b - a) / 2 * self.wq
        return xs, ws

    def _solve(self):
        K, p, m, h, lam = self.K, self.p, self.m, self.h, self.lam
        xg, wg = self.xg, self.wg
        # Precomputed per-node-position (relative) interpolation data.
        # current element partial [-1, x_i]:
        self.cur = []
        for i in range(p):
            xs, ws = self._sub(-1.0, xg[i])
            self.cur.append((xs, ws * h / 2, interp_matrix(xg, self.bw, xs)))
        # split element: [-1, x_i] uses Rhigh,  [x_i, 1] uses Rlow
        self.splitL, self.splitR = self.cur, []
        for i in range(p):
            xs, ws = self._sub(xg[i], 1.0)
            self.splitR.append((xs, ws * h / 2, interp_matrix(xg, self.bw, xs)))
        yflat = self.y.ravel()
        wflat = np.tile(wg * h / 2, K)
        for k in range(K):
            A = np.zeros((p, p))
            rhs = np.zeros(p)
            for i in range(p):
                yi = self.y[k, i]
                acc = self.lamIbar(yi)
                s = 0.0
                j0 = k - m  # split element index
                # full 'high' elements j <= k-m-1
                if j0 >= 1:
                    n = j0 * p
                    s += np.dot(self.W.ravel()[:n] * wflat[:n], self.Rhigh(yi - yflat[:n]))
                if j0 >= 0:
                    lo = j0 * h
                    xs, ws, L = self.splitL[i]
                    v = lo + h * (1 + xs) / 2
                    s += np.dot(ws * self.Rhigh(yi - v), L @ self.W[j0])
                    xs, ws, L = self.splitR[i]
                    v = lo + h * (1 + xs) / 2
                    s += np.dot(ws * self.Rlow(yi - v), L @ self.W[j0])
                # full 'low' elements max(j0+1,0) .. k-1
                for j in range(max(j0 + 1, 0), k):
                    s += np.dot(wg * h / 2 * self.Rlow(yi - self.y[j]), self.W[j])
                # current element (unknown)
                xs, ws, L = self.cur[i]
                v = k * h + h * (1 + xs) / 2
                A[i] = (ws * self.Rlow(yi - v)) @ L
                rhs[i] = acc + lam * s
            self.W[k] = np.linalg.solve(np.eye(p) - lam * A, rhs)

    def Wbar(self, yv):
        """Evaluate Wbar at arbitrary points (0 <= y < K h)."""
        yv = np.atleast_1d(np.asarray(yv, float))
        out = np.empty(len(yv))
        for r, yy in enumerate(yv):
            k = min(int(yy // self.h), self.K - 1)
            x = 2 * (yy - k * self.h) / self.h - 1
            out[r] = (interp_matrix(self.xg, self.bw, [x]) @ self.W[k])[0]
        return out

    # ---------- sojourn tail for Pareto service ----------
    def H_pareto(self, tv, alpha):
        c, h, p = self.c, self.h, self.p
        def fR(x):
            return alpha * c ** alpha * x ** (-alpha - 1)

        tv = np.atleast_1d(np.asarray(tv, float))
        out = np.empty(len(tv))
        yflat = self.y.ravel()
        wflat = np.tile(self.wg * h / 2, self.K)
        Wf = self.W.ravel()
        for r, t in enumerate(tv):
            if t <= c:
                out[r] = 1.0
                continue
            u = t - c
            k = int(u // h)
            assert k < self.K, 't beyond solved range'
            x = 2 * (u - k * h) / h - 1
            n = k * p
            s = np.dot(Wf[:n] * wflat[:n], fR(t - yflat[:n]))
            xs, ws = self._sub(-1.0, x)
            ws = ws * h / 2
            L = interp_matrix(self.xg, self.bw, xs)
            v = k * h + h * (1 + xs) / 2
            s += np.dot(ws * fR(t - v), L @ self.W[k])
            out[r] = (c / t) ** alpha + s
        return out


def pareto_solver(alpha, c, lam, Y, **kw):
    def Rlow(u):
        return np.ones_like(u)

    def Rhigh(u):
        return (c / u) ** alpha

    def lamIbar(y):
        if y < c:
            return lam * ((c - y) + c / (alpha - 1))
        return lam * c ** alpha * y ** (1 - alpha) / (alpha - 1)
    return VolterraMG1(lam, c, Rlow, Rhigh, lamIbar, Y, **kw)
