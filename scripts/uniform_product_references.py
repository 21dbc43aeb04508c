"""Independent references for the product of two uniform laws and for an M/G/1 queue whose
service time is an S&X runtime ``X * S``.

* ``E[exp(-s X M)]`` for ``X ~ Uniform(a, b)``, ``M ~ Uniform(A, B)`` by ``mpmath.quad`` of the
  uniform transform ``(exp(-s a m) - exp(-s b m)) / (s m (b - a))`` over ``m`` (no exponential
  integral), at 45 and 60 digits; the script prints both and their difference.
* The response-time tail of the M/G/1 FCFS queue (``queuetheory.Random`` on one server) with
  service ``X * S``, ``X ~ Exp(1)`` and ``S`` on two atoms: the service time is hyperexponential,
  so the Pollaczek-Khinchine transform ``(1 - rho) s B(s) / (s - lam + lam B(s))`` is rational;
  its poles are found by bisection at 60 digits and the tail is a sum of exponentials.

Run: ``python scripts/uniform_product_references.py`` (about 1 minute).
"""

import mpmath as mp

UNIFORM_CASES = [  # (a, b, A, B, s)
    (1.0, 2.0, 1.0, 3.0, mp.mpc(0.05, 0.0)),
    (1.0, 2.0, 1.0, 3.0, mp.mpc(0.3, 4.0)),
    (1.0, 2.0, 1.0, 3.0, mp.mpc(0.02, 60.0)),
    (0.0, 1.0, 0.5, 4.0, mp.mpc(1.5, 9.0)),
    (0.2, 5.0, 0.0, 3.0, mp.mpc(4.0, 0.0)),
    (0.0, 2.0, 0.0, 1.0, mp.mpc(0.1, 30.0)),
    (3.0, 3.01, 1.0, 2.0, mp.mpc(0.5, 2.0)),
    (0.001, 1000.0, 2.0, 2.5, mp.mpc(0.0, 0.7)),
]


def uniform_product_lst(a, b, A, B, s):
    a, b, A, B = map(mp.mpf, (a, b, A, B))

    def inner(m):
        return (mp.exp(-s * a * m) - mp.exp(-s * b * m)) / (s * m * (b - a))

    cuts = mp.linspace(A, B, 2 + int(abs(s) * b * (B - A) / 2))
    return mp.quad(inner, cuts) / (B - A)


def hyperexponential_mg1_tail(lam, rates, probs, t):
    """P(T > t) for the M/H/1 FCFS response time by partial fractions.

    ``T~(s) = (1 - rho) s B(s) / D(s)``, ``D(s) = s - lam + lam B(s)``, ``B(s) = sum_j p_j mu_j /
    (mu_j + s)``: between consecutive poles ``-mu_j`` of ``B`` (and between the smallest and 0,
    where ``D(0-) < 0``) ``D`` runs from ``+inf`` to below 0, so it has one root ``r`` there
    (bisection); ``P(T > t) = sum_r (1 - rho) B(r) exp(r t) / (-D'(r))``."""
    rates, probs = [mp.mpf(r) for r in rates], [mp.mpf(p) for p in probs]
    rho = lam * sum(p / r for r, p in zip(rates, probs))

    def B(s):
        return mp.fsum(p * r / (r + s) for r, p in zip(rates, probs))

    def D(s):
        return s - lam + lam * B(s)

    def slope(s):
        return 1 - lam * mp.fsum(p * r / (r + s) ** 2 for r, p in zip(rates, probs))

    ends = sorted(-r for r in rates) + [mp.mpf(0)]
    tail = mp.mpf(0)
    for lo, hi in zip(ends[:-1], ends[1:]):
        lo, hi = lo + (hi - lo) * mp.eps, hi - (hi - lo) * mp.eps
        for _ in range(3 * mp.mp.prec):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if D(mid) > 0 else (lo, mid)
        root = (lo + hi) / 2
        tail += (1 - rho) * B(root) * mp.exp(root * t) / -slope(root)
    return tail


def main():
    for a, b, A, B, s in UNIFORM_CASES:
        with mp.workdps(45):
            v45 = uniform_product_lst(a, b, A, B, s)
        with mp.workdps(60):
            v60 = uniform_product_lst(a, b, A, B, s)
            print((a, b, A, B, complex(s)), mp.nstr(v60, 34), "diff", mp.nstr(abs(v60 - v45), 3))
    # X ~ Exp(1), S = 1 w.p. 3/4, 4 w.p. 1/4 (rates 1 and 1/4), lam = 1/8 (load 7/32); every
    # parameter is a binary fraction, so the library sees the same system exactly
    with mp.workdps(60):
        args = (mp.mpf("0.125"), [1, mp.mpf(1) / 4], [mp.mpf("0.75"), mp.mpf("0.25")])
        assert abs(hyperexponential_mg1_tail(*args, 0) - 1) < mp.mpf(10) ** -50
        for t in (0.5, 3.0, 25.0):
            print("M/H2/1 tail", t, mp.nstr(hyperexponential_mg1_tail(*args, t), 34))


if __name__ == "__main__":
    main()
