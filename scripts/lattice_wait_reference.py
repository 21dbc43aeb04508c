"""References for tests/test_mds.py::test_batches_with_atoms_far_apart_against_the_exact_wait:
MDS(4, 2) and Replication(3, 2) without removal, runtimes on the lattice {1 (0.9), 10 (0.1)}
(IR, or S&X with X = 1), task load 0.3, by exact arithmetic on the wait (independent of
queuetheory).

The stationary M/G/1 FCFS wait ``F(y) = P(W <= y)`` solves the level-crossing (Takacs)
equation ``F'(y) = lam (F(y) - 0.9 F(y - 1) - 0.1 F(y - 10))`` for ``y > 0``, ``F(0) = 1 -
rho``, ``F = 0`` below 0. By the method of steps on ``[k, k + 1)``, in the local variable
``u = y - k``, ``F(y) = exp(lam u) P_k(u)`` with the polynomial ``P_k(u) = F(k) - lam int_0^u
Q_k``, ``Q_k = 0.9 P_{k-1} + 0.1 P_{k-10}`` (``F(y - b) = exp(lam u) P_{k-b}(u)``; ``F`` is
continuous for ``y > 0``). A task's sojourn tail is ``H(t) = 0.9 P(W > t - 1) + 0.1 P(W > t -
10)``; the batch's ``P(T_b > t)`` is ``P(Binomial(6, 1 - H) <= 3)`` (MDS(4, 2)) or ``1 - (1 -
H^2)^3`` (Replication(3, 2)). Means by mpmath's quadrature on the unit pieces up to where the
tail is below 1e-40, quantiles (levels 0.7, 0.8, 0.9, 0.999) by bisection, at 80 digits (at
100 they agree to the digits printed).

Usage: ``python scripts/lattice_wait_reference.py`` (about a minute).
"""
from fractions import Fraction

import mpmath as mp

ATOMS, PROBS = (1, 10), (Fraction(9, 10), Fraction(1, 10))


def exact(value):
    value = Fraction(value)
    return mp.mpf(value.numerator) / value.denominator


def wait_cdf(lam, rho, pieces):
    """``F`` on ``[0, pieces)`` as polynomials ``P_k`` (coefficients in ``u = y - k``)."""
    polys = []
    probs = [exact(p) for p in PROBS]
    for k in range(pieces):
        # Q_k(u) on u in [0, 1): the delayed pieces, shifted to the local variable
        Q = [mp.mpf(0)]
        for b, p in zip(ATOMS, probs):
            if k - b >= 0:
                coefficients = [c * p for c in polys[k - b]]
                Q = [a + c for a, c in zip(Q + [0] * (len(coefficients) - len(Q)),
                                            coefficients + [0] * (len(Q) - len(coefficients)))]
        start = (1 - rho) if k == 0 else mp.polyval(polys[k - 1][::-1], 1) * mp.exp(lam)
        polys.append([start] + [-lam * c / (j + 1) for j, c in enumerate(Q)])
    return polys


def make(load, policy):
    kind, n, r = policy
    tasks = n + r if kind == "MDS" else n * r
    rate = load * n / tasks / 1.9                  # the float the test passes
    lam = exact(Fraction(tasks) * Fraction(rate) / n)
    rho = lam * exact(Fraction(19, 10))
    pieces = 400
    polys = wait_cdf(lam, rho, pieces)

    def F(y):
        if y < 0:
            return mp.mpf(0)
        k = int(mp.floor(y))
        return mp.exp(lam * (y - k)) * mp.polyval(polys[k][::-1], y - k)

    def H(t):
        return mp.fsum(exact(p) * (1 - F(t - b)) for b, p in zip(ATOMS, PROBS))

    def sf(t):
        h = H(t)
        if kind == "MDS":
            return mp.fsum(mp.binomial(tasks, j) * (1 - h) ** j * h ** (tasks - j)
                           for j in range(n))
        return 1 - (1 - h ** r) ** n

    return rate, sf


def quantile(sf, level):
    lo, hi = mp.mpf(0), mp.mpf(1)
    while sf(hi) > 1 - level:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sf(mid) > 1 - level else (lo, mid)
    return hi


def case(load, policy):
    rate, sf = make(load, policy)
    top = 1
    while sf(top) > mp.mpf(10) ** -40:
        top += 1
    # the tail jumps and kinks only at integers
    mean = mp.fsum(mp.quad(sf, [k, k + 1]) for k in range(top))
    return rate, mean, [quantile(sf, mp.mpf(q)) for q in ("0.7", "0.8", "0.9", "0.999")]


if __name__ == "__main__":
    for policy in (("MDS", 4, 2), ("Replication", 3, 2)):
        results = []
        for dps in (80, 100):
            with mp.workdps(dps):
                results.append(case(0.3, policy))
        (rate, mean, quantiles), (_, mean2, quantiles2) = results
        with mp.workdps(100):
            agree = min(-mp.log10(abs(a / b - 1) + mp.mpf(10) ** -60)
                        for a, b in zip([mean] + quantiles, [mean2] + quantiles2))
        print(policy, "rate", repr(rate), "mean", mp.nstr(mean, 17), "p70, p80, p90, p99.9",
              [mp.nstr(q, 17) for q in quantiles], f"digits agreeing {float(agree):.1f}",
              flush=True)
