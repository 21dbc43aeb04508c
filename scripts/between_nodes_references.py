"""References for tests/test_removal.py::test_atoms_between_the_nodes_against_the_method_of_steps:
the workload level-crossing equation with removal (Redundancy-d = Replication(1, d), and d = 1:
the M/G/1 queue; MDS(n, m)) for IR runtimes on atoms without a common step, k -> infinity, by
the method of steps in mpmath (independent of queuetheory).

Tasks arrive at each server at rate ``lam_t = d lam`` (MDS: ``(n + m) lam / n``); with ``F``
the CDF of a server's workload (atom ``F(0)`` at 0) and ``q(w) = sum_k p_k F(w - b_k)``
(``F(y < 0) = 0``), for ``w > 0``

    F'(w) = lam_t (F(w) - q(w)) phi(q(w)),   phi(q) = (1 - q)^(d - 1)

(MDS: ``phi(q) = P(Binomial(n + m - 1, q) <= n - 1)``; the module docstring of
``queuetheory/analysis/removal.py``). Between consecutive sums ``t_i``
of atoms ``q`` is a known polynomial (the pieces before, shifted), so on ``[t_i, t_(i+1))``, in
``u = w - t_i``, ``F = sum c_n u^n`` with ``c_(n+1) = lam_t ((c * phi)_n - (q * phi)_n) / (n +
1)`` (Cauchy products), ``c_0`` the value the piece before ends with (``F`` is continuous for
``w > 0``); ``F(0)`` by the secant method on ``F(W) = 1``. A job's response time ``C`` has
``P(C > t) = (1 - q(t))^d`` (a batch's under MDS: ``P(Binomial(n + m, q(t)) <= n - 1)``):
the mean is the exact integral of these polynomials up to ``W``, quantiles by bisection.
Each case is solved twice (30 and 40 digits, a longer horizon and more
terms for the second); the script prints both.

Also S&X runtimes with a job size on atoms (``SX_CASES``: the tasks of a batch share ``X``).

Usage: ``python scripts/between_nodes_references.py`` (about half an hour).
"""

import bisect
import itertools

import mpmath as mp

# (atoms, probabilities, d or (n, m) of MDS, lam): every number a binary fraction or a float
# used exactly, as the test passes them
CASES = (
    ((1.0, 1.6180339887498949), (0.7, 0.3), 2, 0.25),
    ((1.0, 1.0973), (0.5, 0.5), 1, 0.5),
    ((0.5, 1.4142135623730951), (0.25, 0.75), 3, 0.125),
    ((1.0, 2.718281828459045), (0.75, 0.25), (4, 2), 0.375),
)
# S&X with a job size on atoms (tests/test_removal.py::test_sx_job_sizes_on_atoms_between_the_
# nodes_against_the_method_of_steps): ((x atoms, probabilities), (s atoms, probabilities),
# d or (n, m), lam). A batch's tasks share X: given X = x they are independent with runtimes
# x S, so q(w | x) = sum_k p_k F(w - x s_k), F'(w) = lam_t E_X[(F - q(w | X)) phi(q(w | X))]
# and P(C > t) = E_X[Psi(q(t | X))]; the pieces end at the sums of the products x s
SX_CASES = (
    (((1.0, 1.6180339887498949), (0.625, 0.375)), ((1.0, 2.0), (0.75, 0.25)), (4, 2), 0.1875),
    (((0.75, 1.4142135623730951), (0.5, 0.5)), ((1.0, 1.5), (0.5, 0.5)), 2, 0.1875),
)
LEVELS = (0.5, 0.9, 0.99)


def breakpoints(atoms, horizon):
    """The sums of atoms up to ``horizon`` (with 0 and ``horizon``), sorted, those within
    rounding of each other merged."""
    tol = mp.mpf(10) ** (10 - mp.mp.dps)
    counts = [range(int(horizon / b) + 1) for b in atoms]
    sums = sorted(s for s in (mp.fsum(n * b for n, b in zip(ns, atoms))
                              for ns in itertools.product(*counts)) if s < horizon)
    points = [sums[0]]
    for s in sums[1:]:
        if s - points[-1] > tol:
            points.append(s)
    return points + [horizon]


_BINOMIAL = {}


def shifted(c, delta):
    """Coefficients of ``P(u + delta)`` from those of ``P(u)``."""
    n = len(c)
    if n not in _BINOMIAL or _BINOMIAL[n][1] != mp.mp.dps:
        _BINOMIAL[n] = ([[mp.binomial(j, i) for j in range(n)] for i in range(n)], mp.mp.dps)
    table = _BINOMIAL[n][0]
    powers = [mp.mpf(1)]
    for _ in range(n):
        powers.append(powers[-1] * delta)
    return [mp.fsum(c[j] * table[i][j] * powers[j - i] for j in range(i, n)) for i in range(n)]


def product(a, b, order):
    return [mp.fsum(a[i] * b[n - i] for i in range(n + 1)) for n in range(order)]


def binomial_tail(q, tasks, n, order):
    """Series of ``P(Binomial(tasks, q) <= n - 1)`` from that of ``q``."""
    one = [mp.mpf(1)] + [mp.mpf(0)] * (order - 1)
    rest = [1 - q[0]] + [-c for c in q[1:]]
    q_powers, rest_powers = [one], [one]
    for _ in range(tasks):
        q_powers.append(product(q_powers[-1], q, order))
        rest_powers.append(product(rest_powers[-1], rest, order))
    total = [mp.mpf(0)] * order
    for j in range(min(n, tasks + 1)):
        term = product(q_powers[j], rest_powers[tasks - j], order)
        total = [t + mp.binomial(tasks, j) * c for t, c in zip(total, term)]
    return total


def kernel(spec):
    """``(tasks per job over n, phi, P(C > t))`` of Replication(1, d) (``spec = d``) or MDS(n,
    m) (``spec = (n, m)``), the last two as functions of the series of ``q``."""
    n, m = (1, spec - 1) if isinstance(spec, int) else spec
    tasks = n + m
    return (mp.mpf(tasks) / n, lambda q, order: binomial_tail(q, tasks - 1, n, order),
            lambda q, order: binomial_tail(q, tasks, n, order))


class Solution:
    """``F`` on the pieces for one ``F(0)``: ``ends`` and the Taylor coefficients ``F``, ``q``."""

    def __init__(self, groups, spec, lam, idle, ends, degree):
        """``groups``: ``(weight, atoms, probs)`` per job size (IR: one, of weight 1)."""
        self.groups, self.ends = groups, ends
        rate, phi_of, self.sf_of = kernel(spec)
        lam_t = rate * lam
        tol = mp.mpf(10) ** (10 - mp.mp.dps)
        self.F, self.q = [], []
        for i, t in enumerate(ends[:-1]):
            qs, phis, q_phis = [], [], []
            for _, atoms, probs in groups:
                q = [mp.mpf(0)] * degree
                for b, p in zip(atoms, probs):
                    y = t - b
                    if y < -tol:
                        continue
                    j = bisect.bisect_right(ends, y + tol) - 1
                    for n, c in enumerate(shifted(self.F[j], y - ends[j])):
                        q[n] += p * c
                phi = phi_of(q, degree)
                qs.append(q)
                phis.append(phi)
                q_phis.append(product(q, phi, degree))
            start = idle if i == 0 else mp.polyval(self.F[i - 1][::-1], t - ends[i - 1])
            c = [start]
            for n in range(degree - 1):
                total = mp.fsum(w * (mp.fsum(c[k] * phi[n - k] for k in range(n + 1)) - q_phi[n])
                                for (w, _, _), phi, q_phi in zip(groups, phis, q_phis))
                c.append(lam_t * total / (n + 1))
            self.F.append(c)
            self.q.append(qs)
        self.end = mp.polyval(self.F[-1][::-1], ends[-1] - ends[-2])

    def sf_pieces(self):
        """``P(C > t)`` per piece, as coefficients (averaged over the job sizes)."""
        if not hasattr(self, "_sf"):
            self._sf = []
            for qs in self.q:
                parts = [self.sf_of(q, len(q)) for q in qs]
                self._sf.append([mp.fsum(w * part[n] for (w, _, _), part in
                                         zip(self.groups, parts)) for n in range(len(qs[0]))])
        return self._sf

    def mean(self):
        total = mp.mpf(0)
        for s, a, b in zip(self.sf_pieces(), self.ends[:-1], self.ends[1:]):
            total += mp.fsum(c * (b - a) ** (n + 1) / (n + 1) for n, c in enumerate(s))
        return total

    def sf(self, t):
        pieces = self.sf_pieces()
        i = min(bisect.bisect_right(self.ends, t) - 1, len(pieces) - 1)
        return mp.polyval(pieces[i][::-1], t - self.ends[i])

    def quantile(self, level):
        lo, hi = mp.mpf(0), self.ends[-1]
        for _ in range(mp.mp.dps * 4):
            mid = (lo + hi) / 2
            if self.sf(mid) <= 1 - level:
                hi = mid
            else:
                lo = mid
        return hi


def solve(case, dps, horizon, degree, sx=False):
    with mp.workdps(dps):
        if sx:
            (xs, xp), (ss, sp), spec, lam = case
            # the products x * s as the floats the library forms (the test passes these)
            groups = [(mp.mpf(w), [mp.mpf(x * s) for s in ss], [mp.mpf(p) for p in sp])
                      for x, w in zip(xs, xp)]
        else:
            atoms, probs, spec, lam = case
            groups = [(mp.mpf(1), [mp.mpf(x) for x in atoms], [mp.mpf(x) for x in probs])]
        products = sorted({b for _, atoms, _ in groups for b in atoms})
        ends = breakpoints(products, mp.mpf(horizon))
        mean_runtime = mp.fsum(w * mp.fsum(b * p for b, p in zip(atoms, probs))
                               for w, atoms, probs in groups)
        rho = kernel(spec)[0] * lam * mean_runtime
        guess = 1 - min(rho, mp.mpf("0.9"))
        idle = mp.findroot(
            lambda a: Solution(groups, spec, mp.mpf(lam), a, ends, degree).end - 1,
            (guess, guess * mp.mpf("0.99")), solver="secant", tol=mp.mpf(10) ** (4 - 2 * dps))
        sol = Solution(groups, spec, mp.mpf(lam), idle, ends, degree)
        return idle, sol.mean(), [sol.quantile(mp.mpf(level)) for level in LEVELS]


def main():
    for case in SX_CASES:
        for dps, horizon, degree in ((30, 36, 30), (40, 44, 36)):
            idle, mean, quantiles = solve(case, dps, horizon, degree, sx=True)
            print(case, dps, horizon, degree)
            print("  idle", mp.nstr(idle, 20), " mean", mp.nstr(mean, 20))
            print("  quantiles", [mp.nstr(x, 20) for x in quantiles], flush=True)
    for case in CASES:
        for dps, horizon, degree in ((30, 36, 30), (40, 44, 36)):
            idle, mean, quantiles = solve(case, dps, horizon, degree)
            print(case, dps, horizon, degree)
            print("  idle", mp.nstr(idle, 20), " mean", mp.nstr(mean, 20))
            print("  quantiles", [mp.nstr(x, 20) for x in quantiles], flush=True)


if __name__ == "__main__":
    main()
