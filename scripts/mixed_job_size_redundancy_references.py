"""References for Redundancy-d and Replication(n, d) with removal, S&X runtimes whose job size
mixes an atom and an exponential density, ``X = a delta_1 + (1 - a) Exp(mu)``, and a unit
slowdown (``S = 1``: a job's replicas all take ``X``), k -> infinity; independent of
queuetheory (tests/test_redundancy.py::test_redundancy_d_with_a_job_size_mixing_atoms_and_a_density).

Given ``X = x`` the tasks of a batch see i.i.d. workloads ``V`` with CDF ``F`` (atom ``F(0)`` at
0), so ``q(w | x) = F(w - x)``, and the workload level-crossing equation (the module docstring of
``queuetheory/analysis/removal.py``) averaged over ``X`` reads

    f(w) = lam_t E_X[g(F(w - X); F(w))],   g(q; F) = (F - q) phi(q),   phi(q) = (1 - q)^(d - 1),

``lam_t = lam d``, ``F(y < 0) = 0``. Expanding ``g`` in powers of ``q`` (``g_j = F phi_j -
phi_(j - 1)``), the exponential part needs ``H_j(w) = E[F(w - Y)^j]``, ``Y ~ Exp(mu)``, which
solve ``H_j' = mu (F^j - H_j)``, ``H_j(0) = 0`` (and ``H_0 = 1``: where ``Y > w`` the task is
unfinished, ``q = 0``); the atom gives ``g(F(w - 1); F(w))``, a delay of 1. So

    F' = lam_t (a g(F(w - 1); F) + (1 - a) sum_j g_j(F) H_j),

solved by Taylor series in mpmath (30 digits) on sub-intervals of length ``1 / J`` (the delayed
``F(w - 1)`` is the series ``J`` sub-intervals before, in the same local variable), the powers
by Cauchy products; ``F(0)`` by the secant method on ``F(W) = 1``. The batch: ``P(C <= t | x) =
Psi(q) = (1 - (1 - q)^d)^n``, so ``P(C <= t) = a Psi(F(t - 1)) + (1 - a) sum_j psi_j H_j(t)``
(``psi_0 = 0``). Mean ``int_0^W P(C > t) dt`` (mpmath.quad between sub-interval ends),
quantiles by bisection. A second solve (finer sub-intervals, more terms, a longer horizon) is
printed beside each value.

Usage: ``python scripts/mixed_job_size_redundancy_references.py`` (a few minutes).
"""

import sys

from mpmath import binomial, findroot, mp, mpf, quad


def _poly_power(base, j, order):
    """Series of ``base^j`` to ``order`` terms (``base`` a list of coefficients)."""
    out = [mpf(1)] + [mpf(0)] * (order - 1)
    base = list(base) + [mpf(0)] * max(0, order - len(base))
    for _ in range(j):
        out = [sum(out[i] * base[s - i] for i in range(s + 1)) for s in range(order)]
    return out


class Reference:
    def __init__(self, n, d, a, mu, lam, W, J=8, degree=30):
        self.n, self.d = n, d
        self.a, self.mu = mpf(a), mpf(mu)
        self.lam_t = mpf(lam) * d
        self.J, self.delta, self.K = J, mpf(1) / J, int(W) * J
        self.degree = degree
        self.phi = [binomial(d - 1, j) * (-1) ** j for j in range(d)]
        # Psi(q) = (1 - (1 - q)^d)^n as coefficients in q
        inner = [mpf(0)] + [-binomial(d, j) * (-1) ** j for j in range(1, d + 1)]
        self.psi = _poly_power(inner, n, n * d + 1)
        self.top = n * d                      # H_1 .. H_top
        EX = self.a + (1 - self.a) / self.mu
        load = mpf(lam) * EX
        self.F0 = findroot(self._shoot, (1 - 1.2 * load, 1 - 1.1 * load), solver="secant",
                           tol=mpf(10) ** (-mp.dps + 4))
        self._shoot(self.F0)

    def _g_coefficients(self, F, s):
        """Series (to order ``s``) of the coefficients ``g_j = F phi_j - phi_(j - 1)``."""
        d = self.d
        out = []
        for j in range(d + 1):
            fj = self.phi[j] if j < d else 0
            pj = self.phi[j - 1] if j >= 1 else 0
            out.append([fj * F[i] - (pj if i == 0 else 0) for i in range(s + 1)])
        return out

    def _shoot(self, F0):
        order, a, mu, lam_t, d = self.degree, self.a, self.mu, self.lam_t, self.d
        zero = [mpf(0)] * (order + 1)
        self.series = []
        F_start, H_start = mpf(F0), [mpf(0)] * self.top
        for k in range(self.K):
            Fd = self.series[k - self.J][0] if k >= self.J else zero
            Fd_pow = [_poly_power(Fd, j, order + 1) for j in range(d + 1)]
            F = [F_start]
            H = [[h] for h in H_start]
            powers = [[] for _ in range(self.top)]
            for s in range(order):
                g = self._g_coefficients(F, s)
                atom = sum(sum(g[j][i] * Fd_pow[j][s - i] for i in range(s + 1))
                           for j in range(d + 1))
                # H_0 = 1: its series is 1, 0, 0, ...
                dens = g[0][s] + sum(sum(g[j][i] * H[j - 1][s - i] for i in range(s + 1))
                                     for j in range(1, d + 1))
                f = lam_t * (a * atom + (1 - a) * dens)
                # coefficient s of F^j, j = 1 .. top, from those of F^(j - 1)
                powers[0].append(F[s])
                for j in range(1, self.top):
                    powers[j].append(sum(F[i] * powers[j - 1][s - i] for i in range(s + 1)))
                for j in range(self.top):
                    H[j].append(mu * (powers[j][s] - H[j][s]) / (s + 1))
                F.append(f / (s + 1))
            self.series.append((F, H))
            F_start = sum(c * self.delta ** i for i, c in enumerate(F))
            H_start = [sum(c * self.delta ** i for i, c in enumerate(h)) for h in H]
            if abs(F_start) > 10:
                break
        return F_start - 1

    def _at(self, w):
        if w < 0:
            return mpf(0), [mpf(0)] * self.top
        k = min(int(w / self.delta), len(self.series) - 1)
        u = w - k * self.delta
        F, H = self.series[k]
        return (sum(c * u ** i for i, c in enumerate(F)),
                [sum(c * u ** i for i, c in enumerate(h)) for h in H])

    def cdf(self, t):
        t = mpf(t)
        Fd = self._at(t - 1)[0]
        _, H = self._at(t)
        atom = sum(c * Fd ** j for j, c in enumerate(self.psi))
        dens = sum(self.psi[j] * H[j - 1] for j in range(1, self.top + 1))
        return self.a * atom + (1 - self.a) * dens

    def mean(self):
        ends = [k * self.delta for k in range(len(self.series) + 1)]
        return quad(lambda t: 1 - self.cdf(t), ends)

    def quantile(self, level):
        lo, hi = mpf(0), len(self.series) * self.delta
        for _ in range(110):
            mid = (lo + hi) / 2
            if self.cdf(mid) < level:
                lo = mid
            else:
                hi = mid
        return hi


CASES = {
    # name: (n, d, a, mu, lam, horizon W)
    "Redundancy-2": (1, 2, 0.5, 1.0, 0.4, 40),
    "Replication(2, 2)": (2, 2, 0.3, 2.0, 0.3, 40),
}
LEVELS = (0.1, 0.5, 0.9, 0.99)


def main():
    mp.dps = 30
    only = sys.argv[1:]
    for name, (n, d, a, mu, lam, W) in CASES.items():
        if only and name not in only:
            continue
        ref = Reference(n, d, a, mu, lam, W)
        check = Reference(n, d, a, mu, lam, 1.5 * W, J=12, degree=36)
        print(name, "F(0)", mp.nstr(ref.F0, 20), "(check", mp.nstr(check.F0, 20) + ")")
        print("  mean", mp.nstr(ref.mean(), 17), "(check", mp.nstr(check.mean(), 17) + ")")
        for level in LEVELS:
            print(f"  q={level}", mp.nstr(ref.quantile(level), 17),
                  "(check", mp.nstr(check.quantile(level), 17) + ")", flush=True)


if __name__ == "__main__":
    main()
