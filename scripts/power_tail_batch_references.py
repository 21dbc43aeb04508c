"""Independent references: the mean of the larger of two M/G/1 FCFS sojourns with Pareto runtimes.

Replication(2, 1) without removal under IR: each job's two tasks queue at two servers, each an
M/G/1 queue fed at the arrival rate, so the batch time is ``max(T1, T2)`` of two i.i.d.
sojourns and ``E[max] = 2 E[T] - int_0^inf P(T > t)^2 dt`` with ``E[T]`` by
Pollaczek-Khinchine. The square integral is taken in the frequency domain (Plancherel):
``int_0^inf H(t)^2 dt = (1 / pi) int_0^inf |F(i w)|^2 dw`` for ``H = P(T > .)`` (in L^2 when
``E[T]`` is finite) and its transform ``F(s) = (1 - T~(s)) / s``, with

    T~(s) = (1 - rho) s B~(s) / (s - lam (1 - B~(s))),   B~(s) = alpha s^alpha Gamma(-alpha, s)

(Pareto(alpha, 1)), in mpmath at 30 digits: no inversion, so no slow convergence at the kinks
of ``H`` (at t = 1, 2, ...), where Talbot's method at 30 digits left errors of 3e-5 in ``H``.
The integral runs over pieces of an eighth of a decade of ``w`` from ``1e-14 / E[T]`` to
``1e14 / E[T]``, with ``|F|^2 ~ E[T]^2`` below and ``~ 1 / w^2`` above (the kink of ``H`` at
``t = 1`` makes the integrand oscillate like ``cos(w) / w^2``: on half-decade pieces mpmath's
quadrature left 1e-7 relative). A second grid (quarter decades) is printed beside each value.

Near load 1 (``1 - rho = 1e-6, 1e-9``, Pareto(2.5)) the frequency integral is ill-conditioned
(a peak of height ``E[T]^2`` at ``w ~ 1 / E[T]``); there ``H`` is inverted by Talbot's method
(mpmath.invertlaplace) instead: the kinks near ``t = 1`` move the integral by O(1e-5), against a
mean of order ``1 / (1 - rho)``. The square integral by 20-point Gauss-Legendre on the pieces
``[1, 1.5 2^(k/2) / (1 - rho)]``, ``k = -40..13`` (``H = 1`` below 1; beyond, ``H^2`` leaves
less than 1e-5), and the batch's quantiles at levels 0.5 and 0.99 as the sojourn's at their
square roots (Newton's method, a central difference for the density).

Usage: ``python scripts/power_tail_batch_references.py`` prints the values pinned in
``tests/test_mds.py::test_power_tailed_batch_means_against_plancherel`` and
``tests/test_near_load_one.py::test_pareto_batches_near_load_one`` (about ten minutes).
"""

import numpy as np
from mpmath import gammainc, invertlaplace, mp, mpc, mpf, pi, quad, sqrt

CASES = ((2.5, 0.5), (2.5, 0.9), (3.5, 0.5), (2.2, 0.7), (6.0, 0.5))
"""(alpha, load): arrival rate ``load / E[B]`` in floats, ``E[B] = alpha / (alpha - 1)``."""


def batch_mean(alpha: float, rate: float, per_decade: int = 8) -> mpf:
    a, lam = mpf(alpha), mpf(rate)
    rho = lam * a / (a - 1)
    mean = a / (a - 1) + lam * (a / (a - 2)) / (2 * (1 - rho))

    def transform(w):
        s = mpc(0, w)
        b = a * s ** a * gammainc(-a, s)
        return (1 - (1 - rho) * s * b / (s - lam * (1 - b))) / s

    def square(w):
        return abs(transform(w)) ** 2

    scale = 1 / mean
    lo, hi = scale * mpf(10) ** -14, scale * mpf(10) ** 14
    points = [lo] + [scale * mpf(10) ** (k / mpf(per_decade))
                     for k in range(-14 * per_decade + 1, 14 * per_decade)] + [hi]
    integral = (quad(square, points) + lo * square(lo) + 1 / hi) / pi
    return 2 * mean - integral


def near_one(free: float):
    """Pareto(2.5), ``rate = (1 - free) / E[B]``: the batch's mean, p50 and p99."""
    a = mpf(2.5)
    rate = (1 - free) / 2.5 * 1.5
    lam = mpf(rate)
    rho = lam * a / (a - 1)
    mean = a / (a - 1) + lam * (a / (a - 2)) / (2 * (1 - rho))

    def sojourn(s):
        b = a * s ** a * gammainc(-a, s)
        return (1 - rho) * s * b / (s - lam * (1 - b))

    def H(t):
        return invertlaplace(lambda s: (1 - sojourn(s)) / s, t, method="talbot")

    edges = [mpf(1)] + [mpf(1.5 / free) * 2 ** (k / mpf(2)) for k in range(-40, 14)]
    x, w = np.polynomial.legendre.leggauss(20)
    square = mpf(1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        for xi, wi in zip(x, w):
            square += (hi - lo) / 2 * mpf(wi) * H((lo + hi) / 2 + (hi - lo) / 2 * mpf(xi)) ** 2
    quantiles = []
    for level, guess in ((0.5, 1.23), (0.99, 5.3)):
        t, target = mpf(guess * 1.5 / free), 1 - sqrt(mpf(level))
        for _ in range(8):
            h = t * mpf(10) ** -10
            t += (H(t) - target) / ((H(t - h) - H(t + h)) / (2 * h))
        quantiles.append(t)
    return 2 * mean - square, quantiles


def main():
    mp.dps = 30
    for alpha, load in CASES:
        rate = load / (alpha / (alpha - 1))
        print(alpha, load, mp.nstr(batch_mean(alpha, rate), 17),
              "(quarter decades:", mp.nstr(batch_mean(alpha, rate, 4), 17) + ")", flush=True)
    for free in (1e-6, 1e-9):
        mean, quantiles = near_one(free)
        print("near one", free, mp.nstr(mean, 20), [mp.nstr(q, 20) for q in quantiles])


if __name__ == "__main__":
    main()
