"""References for tests/test_near_load_one.py::test_far_apart_scales_in_batches_near_load_one:
S&X batches without removal with far-apart time scales near load 1, by mpmath alone.

``X ~ HyperExponential([0.875, 0.125], [2, 0.25])``, ``S`` in ``{1, 1024}`` w.p. ``{1 - 2^-7,
2^-7}``, MDS(4, 2) without removal. Given the batch's ``X = x`` its tasks finish at ``W_j + x
S_j``, ``W_j`` i.i.d. stationary M/H4/1 waits (service ``X S``: four phases, probabilities
``p_i q_k``, rates ``mu_i / s_k``, all exact in binary) at the task rate ``N lam / n``, so
``P(T_b > t) = E_X[Psi(sum_k q_k P(W > t - x s_k))]`` with ``Psi(H) = P(Binomial(N, 1 - H) <=
n - 1)`` (the functions of ``scripts/sx_batch_near_one_references.py``: partial fractions of the
rational wait transform). The p99 by secant steps on ``log P(T_b > t)``, at 20 and 28 digits.

Usage: ``python scripts/multiscale_batch_references.py`` (a few minutes).
"""
import sys
from fractions import Fraction
from pathlib import Path

import mpmath as mp

sys.path.insert(0, str(Path(__file__).parent))
from sx_batch_near_one_references import batch, exact, hyperexponential_wait  # noqa: E402

P_X, MU = (Fraction(7, 8), Fraction(1, 8)), (Fraction(2), Fraction(1, 4))
Q_S, S = (Fraction(127, 128), Fraction(1, 128)), (1, 1024)
MEAN = sum(p / m for p, m in zip(P_X, MU)) * sum(q * s for q, s in zip(Q_S, S))


def p99(load, policy=("MDS", 4, 2)):
    kind, n, r = policy
    tasks = n + r
    rate = load * n / tasks / float(MEAN)            # the float the test passes
    task_rate = exact(Fraction(tasks) * Fraction(rate) / n)
    W = hyperexponential_wait(task_rate, [p * q for p in P_X for q in Q_S],
                              [m / s for m in MU for s in S])
    psi = batch(policy, tasks)
    ps, mus = [exact(p) for p in P_X], [exact(m) for m in MU]
    qs = [exact(q) for q in Q_S]

    def density(x):
        return mp.fsum(p * m * mp.exp(-m * x) for p, m in zip(ps, mus))

    def sf(t):
        cuts = sorted({mp.mpf(0)} | {t / s for s in S})
        return mp.quad(lambda x: density(x) * psi(mp.fsum(q * W(t - x * s)
                                                          for q, s in zip(qs, S))),
                       cuts + [cuts[-1] + 100, mp.inf])

    guess = mp.mpf(5) / (1 - load) * 1e3
    t = mp.findroot(lambda t: mp.log(sf(t) / mp.mpf("0.01")), (guess, guess * 1.01),
                    solver="secant")
    return rate, t


if __name__ == "__main__":
    for load in (0.995, 0.999):
        values = []
        for dps in (20, 28):
            with mp.workdps(dps):
                values.append(p99(load))
        (rate, a), (_, b) = values
        print(repr(load), "rate", repr(rate), "p99", mp.nstr(a, 17), mp.nstr(b, 17), flush=True)
