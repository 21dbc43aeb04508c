"""References for tests/test_mds.py::test_batches_with_atoms_near_load_one_against_the_exact_wait:
batches without removal (and MDS(4, 0) with removal, which removes nothing) with runtimes on
an integer lattice (IR), near task load 1, by exact arithmetic on the wait (independent of
queuetheory).

The stationary M/G/1 FCFS wait ``F(y) = P(W <= y)`` solves ``F'(y) = lam (F(y) - sum_b p_b
F(y - b))`` for ``y > 0``, ``F(0) = 1 - rho``, ``F = 0`` below 0. On ``[0, K)`` by the method of
steps, as in ``scripts/lattice_wait_reference.py``: ``F(y) = exp(lam u) P_k(u)`` on ``[k, k +
1)``, ``u = y - k``, ``P_k(u) = F(k) - lam int_0^u sum_b p_b P_{k-b}``. Beyond ``K`` by the
dominant pole of the P-K transform ``W~(s) = (1 - rho) s / D(s)``, ``D(s) = s - lam (1 -
sum_b p_b exp(-s b))``: ``P(W > y) = c exp(-gamma y)`` with ``D(-gamma) = 0`` (the real root
``gamma > 0``) and ``c = -(1 - rho) / D'(-gamma)``; the other poles are complex with real parts
below ``-1`` for these lattices, so the tail is that exponential to about ``exp(-K)`` relative.
The script checks it: both forms agree at ``K - 1/2`` to the digits printed (``junction``).

A task's sojourn tail is ``H(t) = sum_b p_b P(W > t - b)``; the batch's ``P(T_b > t)`` is
``P(Binomial(N, 1 - H) <= n - 1)`` (MDS(n, m), ``N = n + m``) or ``1 - (1 - H^d)^n``
(Replication(n, d)). Means by mpmath's quadrature on the unit pieces up to ``K + max b`` and
on ``[K + max b, inf)``, quantiles by bisection, at 60 and 80 digits (they agree to the
digits printed, ``agree``).

Usage: ``python scripts/lattice_wait_near_one_references.py`` (a few minutes).
"""
from fractions import Fraction

import mpmath as mp

# (name, atoms, probabilities, policy (kind, n, m or d), task load: 1 - 2^-10 and 1 - 2^-20,
# exactly representable: the float rate is task load * n / tasks / E[R] as the test passes it)
CASES = (
    ("Det(1) MDS(4, 2)", (1,), (Fraction(1),), ("MDS", 4, 2), 1 - Fraction(1, 2 ** 10)),
    ("Det(1) MDS(4, 2)", (1,), (Fraction(1),), ("MDS", 4, 2), 1 - Fraction(1, 2 ** 20)),
    ("Det(1) MDS(4, 0)", (1,), (Fraction(1),), ("MDS", 4, 0), 1 - Fraction(1, 2 ** 10)),
    ("{1 (0.6), 3 (0.4)} Replication(3, 2)", (1, 3), (Fraction(3, 5), Fraction(2, 5)),
     ("Replication", 3, 2), 1 - Fraction(1, 2 ** 10)),
)
PIECES = 60


def exact(value):
    value = Fraction(value)
    return mp.mpf(value.numerator) / value.denominator


def method_of_steps(lam, rho, atoms, probs, pieces):
    """``P_k`` (coefficients in ``u``) on ``[k, k + 1)`` for ``k < pieces``."""
    polys = []
    for k in range(pieces):
        Q = []
        for b, p in zip(atoms, probs):
            if k - b >= 0:
                coefficients = [c * p for c in polys[k - b]]
                Q = [(Q[j] if j < len(Q) else 0) + (coefficients[j] if j < len(coefficients)
                                                     else 0)
                     for j in range(max(len(Q), len(coefficients)))]
        start = (1 - rho) if k == 0 else mp.polyval(polys[k - 1][::-1], 1) * mp.exp(lam)
        polys.append([start] + [-lam * c / (j + 1) for j, c in enumerate(Q)])
    return polys


def make(case):
    _, atoms, probs, (kind, n, r), load = case
    tasks = n + r if kind == "MDS" else n * r
    mean_runtime = sum(Fraction(b) * p for b, p in zip(atoms, probs))
    rate = float(load) * n / tasks / float(mean_runtime)     # the float the test passes
    lam = exact(Fraction(tasks) * Fraction(rate) / n)
    rho = lam * exact(mean_runtime)
    p = [exact(x) for x in probs]
    polys = method_of_steps(lam, rho, atoms, p, PIECES)

    def D(s):
        return s - lam * (1 - mp.fsum(q * mp.exp(-s * b) for b, q in zip(atoms, p)))

    def dD(s):
        return 1 - lam * mp.fsum(q * b * mp.exp(-s * b) for b, q in zip(atoms, p))

    # gamma: near 2 (1 - rho) / E[R^2] (the heavy-traffic value); refined by the secant method
    second = exact(sum(Fraction(b) ** 2 * q for b, q in zip(atoms, probs)))
    gamma = mp.findroot(lambda g: D(-g), 2 * (1 - rho) / second)
    c = -(1 - rho) / dD(-gamma)

    def wait_tail(y):
        if y < 0:
            return mp.mpf(1)
        if y >= PIECES:
            return c * mp.exp(-gamma * y)
        k = int(mp.floor(y))
        return 1 - mp.exp(lam * (y - k)) * mp.polyval(polys[k][::-1], y - k)

    junction = PIECES - mp.mpf(1) / 2
    k = PIECES - 1
    steps = 1 - mp.exp(lam * (junction - k)) * mp.polyval(polys[k][::-1], junction - k)
    agreement = abs(steps / (c * mp.exp(-gamma * junction)) - 1)

    def sf(t):
        h = mp.fsum(q * wait_tail(t - b) for b, q in zip(atoms, p))
        if kind == "MDS":
            return mp.fsum(mp.binomial(tasks, j) * (1 - h) ** j * h ** (tasks - j)
                           for j in range(n))
        return 1 - (1 - h ** r) ** n

    return rate, sf, max(atoms), agreement


def quantile(sf, level):
    lo, hi = mp.mpf(0), mp.mpf(1)
    while sf(hi) > 1 - level:
        hi *= 2
    for _ in range(mp.mp.prec + 20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sf(mid) > 1 - level else (lo, mid)
    return hi


def solve(case):
    rate, sf, top, agreement = make(case)
    end = PIECES + top
    mean = mp.fsum(mp.quad(sf, [j, j + 1]) for j in range(end)) + mp.quad(sf, [end, mp.inf])
    return rate, mean, [quantile(sf, mp.mpf(q)) for q in ("0.5", "0.99")], agreement


if __name__ == "__main__":
    for case in CASES:
        results = []
        for dps in (60, 80):
            with mp.workdps(dps):
                results.append(solve(case))
        (rate, mean, quantiles, agreement), (_, mean2, quantiles2, _) = results
        with mp.workdps(80):
            agree = min(-mp.log10(abs(a / b - 1) + mp.mpf(10) ** -60)
                        for a, b in zip([mean] + quantiles, [mean2] + quantiles2))
        print(case[0], case[3], "task load 1 -", mp.nstr(exact(1 - case[4]), 5),
              "rate", repr(rate), "mean", mp.nstr(mean, 17), "p50, p99",
              [mp.nstr(q, 17) for q in quantiles], f"agree {float(agree):.1f} digits",
              f"junction {mp.nstr(agreement, 3)}", flush=True)
