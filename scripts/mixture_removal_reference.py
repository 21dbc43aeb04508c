"""Independent reference for the removal grids on a runtime with an atom AND a density.

``R = p Deterministic(x) + (1 - p) Exponential(mu)`` (IR runtimes), MDS(n, m) or
Replication(n, d) with removal, k -> infinity. The workload ``V`` of a server (atom ``F(0)``
at 0, density ``f``) solves the level-crossing equation (module docstring of
``queuetheory/analysis/removal.py``); for this ``R`` it is a delay differential equation:
with ``c = 1 - p``,

    q(w) = P(V + R <= w) = p F(w - x) + c (F(w) - D(w)),   F(w < 0) = 0,
    D(w) = F(0) e^{-mu w} + int_0^w f(v) e^{-mu (w - v)} dv,   so  D' = f - mu D,  D(0) = F(0),
    f(w) = lam_t (F(w) - q(w)) Phi(q(w)),

``Phi(q) = P(Binomial(N - 1, q) <= n - 1)`` and ``lam_t = lam N / n`` (MDS, ``N = n + m``),
``Phi(q) = (1 - q)^(d - 1)`` and ``lam_t = lam d`` (replication). The batch time has
``P(C > t) = P(Binomial(N, q(t)) <= n - 1)`` (MDS), ``1 - (1 - (1 - q(t))^d)^n`` (replication).
MDS(1, 0) is the M/G/1 queue (``Phi = 1``, ``F(0) = 1 - rho``).

Solved here apart from the library: Taylor series in mpmath (30 digits) on sub-intervals of
length ``x / J`` (``u = w - w_k``; the delayed ``F(w - x)`` is the series of the sub-interval
``J`` before, in the same ``u``), coefficients from the recurrences ``F_{s+1} = f_s / (s + 1)``,
``D_{s+1} = (f_s - mu D_s) / (s + 1)``, ``f_s`` from the Cauchy products of ``F - q`` and
``Phi(q)`` (the powers of ``q`` kept as series); ``F(0)`` by the secant method on ``F(W) = 1``
(the M/G/1 queue takes ``1 - rho``). The mean is ``int_0^W P(C > t) dt`` (mpmath.quad between
the sub-intervals' ends; Pollaczek-Khinchine for the M/G/1 queue), quantiles by bisection on
``P(C > t)``. A second solve (finer sub-intervals, more terms, a horizon 1.5 times longer) is
printed beside each value.

Usage: ``python scripts/mixture_removal_reference.py`` prints the values pinned in
``tests/test_removal.py::test_removal_grids_on_a_mixture_with_an_atom`` (about two minutes).
"""

from mpmath import binomial, findroot, mp, mpf, quad


class Reference:
    """The workload equation for ``R = p Det(x) + (1 - p) Exp(mu)`` on ``[0, W]``."""

    def __init__(self, policy, n, r, x, p, mu, lam, W, J=8, degree=30):
        self.mds, self.n = policy == "mds", n
        self.N = n + r if self.mds else r
        self.x, self.p, self.mu = mpf(x), mpf(p), mpf(mu)
        self.c = 1 - self.p
        self.lam_t = mpf(lam) * (self.N / mpf(n) if self.mds else r)
        self.J, self.delta, self.K = J, self.x / J, int(round(W / x)) * J
        self.degree = degree
        self.phi = self._phi_polynomial()
        rho = mpf(lam) * (self.p * self.x + self.c / self.mu)
        if self.N == 1:
            self.F0 = 1 - rho                  # M/G/1
        else:
            load = self.lam_t * (self.p * self.x + self.c / self.mu)
            self.F0 = findroot(self._shoot, (1 - load, 1 - 0.9 * load), solver="secant",
                               tol=mpf(10) ** (-mp.dps + 4))
        self._shoot(self.F0)

    def _phi_polynomial(self):
        """``Phi`` as polynomial coefficients in ``q`` (from ``q^0`` up)."""
        if not self.mds:
            d = self.N
            return [binomial(d - 1, j) * (-1) ** j for j in range(d)]
        N, n = self.N, self.n
        out = [mpf(0)] * N
        for i in range(n):
            for j in range(N - i):
                out[i + j] += binomial(N - 1, i) * binomial(N - 1 - i, j) * (-1) ** j
        return out

    def _shoot(self, F0):
        """March the series from ``F(0) = D(0) = F0``; returns ``F(W) - 1``."""
        d, p, c, mu, lam_t = self.degree, self.p, self.c, self.mu, self.lam_t
        top = len(self.phi) - 1
        zero = [mpf(0)] * (d + 1)
        self.series = []
        F_start = D_start = mpf(F0)
        for k in range(self.K):
            Fd = self.series[k - self.J][0] if k >= self.J else zero
            F, D, q, phi, g = [F_start], [D_start], [], [], []
            powers = [[] for _ in range(top)]   # powers[j]: series of q^(j + 1)
            for s in range(d):
                q.append(p * Fd[s] + c * (F[s] - D[s]))
                g.append(F[s] - q[s])
                if top:
                    powers[0].append(q[s])
                for j in range(1, top):
                    powers[j].append(sum(q[i] * powers[j - 1][s - i] for i in range(s + 1)))
                phi.append((self.phi[0] if s == 0 else 0)
                           + sum(self.phi[j + 1] * powers[j][s] for j in range(top)))
                f = lam_t * sum(g[i] * phi[s - i] for i in range(s + 1))
                F.append(f / (s + 1))
                D.append((f - mu * D[s]) / (s + 1))
            self.series.append((F, D))
            F_start = sum(a * self.delta ** i for i, a in enumerate(F))
            D_start = sum(a * self.delta ** i for i, a in enumerate(D))
            if abs(F_start) > 10:                # far from the root: stop the march
                break
        return F_start - 1

    def _FD(self, w):
        if w < 0:
            return mpf(0), mpf(0)
        k = min(int(w / self.delta), len(self.series) - 1)
        u = w - k * self.delta
        F, D = self.series[k]
        return (sum(a * u ** i for i, a in enumerate(F)), sum(a * u ** i for i, a in enumerate(D)))

    def sf(self, t):
        """``P(C > t)``."""
        t = mpf(t)
        F, D = self._FD(t)
        q = self.p * self._FD(t - self.x)[0] + self.c * (F - D)
        if self.mds:
            return sum(binomial(self.N, i) * q ** i * (1 - q) ** (self.N - i)
                       for i in range(self.n))
        return 1 - (1 - (1 - q) ** self.N) ** self.n

    def mean(self):
        """``E[C]``: Pollaczek-Khinchine for the M/G/1 queue, else ``int_0^W P(C > t) dt``."""
        if self.N == 1:
            lam = self.lam_t
            ER = self.p * self.x + self.c / self.mu
            ER2 = self.p * self.x ** 2 + 2 * self.c / self.mu ** 2
            return ER + lam * ER2 / (2 * (1 - lam * ER))
        ends = [k * self.delta for k in range(len(self.series) + 1)]
        return quad(self.sf, ends)

    def quantile(self, level):
        lo, hi = mpf(0), len(self.series) * self.delta
        for _ in range(110):
            mid = (lo + hi) / 2
            if self.sf(mid) > 1 - mpf(level):
                lo = mid
            else:
                hi = mid
        return hi


CASES = {
    # name: (policy, n, m or d, x, p, mu, lam, horizon W)
    "M/G/1": ("mds", 1, 0, 2.0, 0.3, 2.0, 0.7 / 0.95, 40.0),
    "MDS(4, 2)": ("mds", 4, 2, 1.0, 0.5, 1.0, 0.4, 24.0),
    "Replication(2, 2)": ("replication", 2, 2, 1.0, 0.8, 0.25, 0.45, 72.0),
}
LEVELS = (0.1, 0.5, 0.99, 0.999)


def main():
    mp.dps = 30
    for name, (policy, n, r, x, p, mu, lam, W) in CASES.items():
        ref = Reference(policy, n, r, x, p, mu, lam, W)
        check = Reference(policy, n, r, x, p, mu, lam, 1.5 * W, J=12, degree=36)
        print(name, "F(0)", mp.nstr(ref.F0, 20), "(check", mp.nstr(check.F0, 20) + ")")
        print("  mean", mp.nstr(ref.mean(), 17), "(check", mp.nstr(check.mean(), 17) + ")")
        for level in LEVELS:
            print(f"  q={level}", mp.nstr(ref.quantile(level), 17),
                  "(check", mp.nstr(check.quantile(level), 17) + ")")


if __name__ == "__main__":
    main()
