"""References for tests/test_near_load_one.py::test_sx_batches_without_removal_near_load_one:
S&X batches without removal near load 1, by mpmath alone (independent of queuetheory).

Given the batch's job size ``X = x`` (shared by all its tasks) the tasks finish at ``W_j + x
S_j`` with ``W_j`` i.i.d. stationary M/G/1 FCFS waits at the task rate ``N lam / n`` (exactly,
as a rational number) and service ``X S``. Both cases have a rational wait transform
``W~(s) = (1 - rho) s / (s - lam (1 - B~(s)))`` (Kleinrock eq. (5.105) without the service),
so ``P(W > y) = sum_j a_j exp(r_j y) / (-r_j)`` over the poles ``r_j`` (partial fractions):

* ``X ~ Erlang(2, 2)``, ``S = 1``: the tasks of a batch all run ``x``, so ``P(T_b > t) =
  E_X[Psi(P(W > t - X))]``; the service is Erlang(2, 2).
* ``X ~ Exponential(1)``, ``S`` in ``{1, 3}`` w.p. ``{3/4, 1/4}``: the service is
  hyperexponential, ``H(t | x) = sum_k p_k P(W > t - x s_k)`` and ``P(T_b > t) =
  E_X[Psi(H(t | X))]``, the integral over ``x`` split where ``t - x s_k = 0``.

``Psi(H)`` is ``P(Binomial(N, 1 - H) <= n - 1)`` (MDS(n, m), N = n + m) or ``1 - (1 -
H^d)^n`` (Replication(n, d)). Means ``E_X[int P(T_b > t | X) dt]`` by mpmath's quadrature,
quantiles by the secant method on the tail, each at two precisions (:data:`CASES`: 25 and 35
digits, 20 and 28 for the nested quadratures of the hyperexponential case); they agree to the
digits printed.

Usage: ``python scripts/sx_batch_near_one_references.py`` (about 40 minutes).
"""
from fractions import Fraction

import mpmath as mp
import numpy as np


def exact(value):
    value = Fraction(value)
    return mp.mpf(value.numerator) / value.denominator


def wait_tail(lam, numerator, denominator):
    """``y -> P(W > y)`` for ``W~(s) = N(s) / D(s)`` (polynomials, lowest degree first,
    ``deg N = deg D``, ``N(0) = D(0)``): ``W~ = c + sum_j a_j / (s - r_j)``."""
    roots = mp.polyroots(denominator[::-1], maxsteps=200, extraprec=200)

    def value(c, x):
        return mp.fsum(ck * x ** k for k, ck in enumerate(c))

    slope = [k * c for k, c in enumerate(denominator)][1:]
    terms = [(value(numerator, r) / value(slope, r), r) for r in roots]

    def tail(y):
        if y < 0:
            return mp.mpf(1)
        return mp.re(mp.fsum(a * mp.exp(r * y) / -r for a, r in terms))
    return tail


def polymul(a, b):
    """The product of two polynomials (coefficients lowest degree first, mpmath numbers)."""
    return list(np.convolve(np.array(a, dtype=object), np.array(b, dtype=object)))


def hyperexponential_wait(lam, probs, rates):
    """M/H/1: ``W~(s) = (1 - rho) P(s) / D(s)``, ``P = prod (s + mu_i)``, ``D = (s P - lam (P -
    sum_i p_i mu_i prod_{j != i} (s + mu_j))) / s``; the probabilities must sum to 1 exactly."""
    assert sum(Fraction(p) for p in probs) == 1
    ps, mus = [exact(p) for p in probs], [exact(r) for r in rates]
    rho = lam * mp.fsum(p / m for p, m in zip(ps, mus))
    P = [mp.mpf(1)]
    for m in mus:
        P = polymul(P, [m, 1])
    Q = [mp.mpf(0)] * len(P)
    for i, (p, m) in enumerate(zip(ps, mus)):
        term = [p * m]
        for j, other in enumerate(mus):
            if j != i:
                term = polymul(term, [other, 1])
        for k, c in enumerate(term):
            Q[k] += c
    D = [a - lam * (b - c) for a, b, c in zip([mp.mpf(0)] + P, P + [0], Q + [0])][1:]
    return wait_tail(lam, [(1 - rho) * c for c in P], D)


def erlang2_wait(lam, mu):
    """M/E2/1: ``W~(s) = (1 - rho) (s + mu)^2 / (s^2 + (2 mu - lam) s + mu (mu - 2 lam))``."""
    rho = 2 * lam / mu
    return wait_tail(lam, [(1 - rho) * mu * mu, (1 - rho) * 2 * mu, 1 - rho],
                     [mu * (mu - 2 * lam), 2 * mu - lam, mp.mpf(1)])


def batch(policy, tasks):
    kind, n, r = policy
    if kind == "MDS":
        return lambda H: mp.fsum(mp.binomial(tasks, j) * (1 - H) ** j * H ** (tasks - j)
                                 for j in range(n))
    return lambda H: 1 - (1 - H ** r) ** n


def case(name, policy, load):
    kind, n, r = policy
    tasks = n + r if kind == "MDS" else n * r
    if name == "erlang":
        mean_runtime = Fraction(1)
    else:
        mean_runtime = Fraction(1) * (Fraction(3, 4) * 1 + Fraction(1, 4) * 3)
    rate = load * n / tasks / float(mean_runtime)        # the float the test passes
    task_rate = exact(Fraction(tasks) * Fraction(rate) / n)
    psi = batch(policy, tasks)
    if name == "erlang":
        W = erlang2_wait(task_rate, mp.mpf(2))
        slowdowns, weights = (mp.mpf(1),), (mp.mpf(1),)

        def density(x):
            return 4 * x * mp.exp(-2 * x)
    else:
        W = hyperexponential_wait(task_rate, (0.75, 0.25), (Fraction(1), Fraction(1, 3)))
        slowdowns, weights = (mp.mpf(1), mp.mpf(3)), (mp.mpf(3) / 4, mp.mpf(1) / 4)

        def density(x):
            return mp.exp(-x)

    def given(t, x):   # P(T_b > t | X = x)
        return psi(mp.fsum(p * W(t - x * s) for p, s in zip(weights, slowdowns)))

    def sf(t):
        cuts = sorted({mp.mpf(0)} | {t / s for s in slowdowns})
        return mp.quad(lambda x: density(x) * given(t, x), cuts + [cuts[-1] + 30, mp.inf])

    scale = mp.mpf(1) / (1 - load)

    def conditional_mean(x):   # E[T_b | X = x]: every task runs until x s_min at least
        start = x * slowdowns[0]
        cuts = sorted({start} | {x * s for s in slowdowns}
                      | {c + start for c in (scale / 10, scale, 10 * scale, 100 * scale)})
        return start + mp.quad(lambda t: given(t, x), cuts + [mp.inf])

    mean = mp.quad(lambda x: density(x) * conditional_mean(x), [0, 1, 5, 30, mp.inf])
    quantiles = []
    for level in ("0.5", "0.99"):
        target = 1 - mp.mpf(level)
        guess = mean if level == "0.5" else 3 * mean
        quantiles.append(mp.findroot(lambda t, target=target: sf(t) - target,
                                     (guess, guess * 1.01), solver="secant"))
    return rate, mean, quantiles


CASES = [("erlang", ("MDS", 4, 2), 0.5, (25, 35)),
         ("erlang", ("MDS", 4, 2), 1 - 2.0 ** -20, (25, 35)),
         ("erlang", ("MDS", 4, 2), 1 - 2.0 ** -40, (25, 35)),
         ("erlang", ("Replication", 3, 2), 1 - 2.0 ** -40, (25, 35)),
         ("hyper", ("MDS", 4, 2), 0.5, (20, 28))]
"""Cases and the two working precisions (digits) each is computed at."""

if __name__ == "__main__":
    for name, policy, load, precisions in CASES:
        results = []
        for dps in precisions:
            with mp.workdps(dps):
                results.append(case(name, policy, load))
        (rate, mean, quantiles), (_, mean2, quantiles2) = results
        with mp.workdps(40):   # compared at 40 digits
            agree = min(-mp.log10(abs(a / b - 1) + mp.mpf(10) ** -40)
                        for a, b in zip([mean] + quantiles, [mean2] + quantiles2))
        print(name, policy, repr(load), "rate", repr(rate), "mean", mp.nstr(mean, 17),
              "p50, p99", [mp.nstr(q, 17) for q in quantiles],
              f"digits agreeing {float(agree):.1f}", flush=True)
