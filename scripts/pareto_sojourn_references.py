"""Quantiles of the M/G/1 FCFS sojourn with Pareto(alpha, 1) runtimes, in mpmath.

``P(T > t)`` is the inverse of ``(1 - T~(s)) / s`` with ``T~(s) = (1 - rho) s B~(s) / (s - lam
(1 - B~(s)))``, ``B~(s) = alpha s^alpha Gamma(-alpha, s)``, by Talbot's method
(:func:`mpmath.invertlaplace`) at ``DPS`` digits, checked against de Hoog's; ``lam = (1 - free) /
E[B]`` in floats (as a user writes it), ``rho = lam alpha / (alpha - 1)`` exactly. Quantiles by
the secant method on ``P(T > t) = 1 - level``. Run: ``python scripts/pareto_sojourn_references.py``
(about a minute); it also reproduces the literal of ``(1.8, 1e-2)`` pinned in
``tests/test_near_load_one.py``.
"""

import mpmath

DPS = 40


def sojourn_sf(alpha: float, free: float):
    a = mpmath.mpf(alpha)
    lam = mpmath.mpf((1 - free) / (alpha / (alpha - 1)))
    rho = lam * a / (a - 1)

    def lst(s):
        b = a * s**a * mpmath.gammainc(-a, s)
        return (1 - rho) * s * b / (s - lam * (1 - b))

    def sf(t, method="talbot"):
        return mpmath.invertlaplace(lambda s: (1 - lst(s)) / s, t, method=method)

    return sf


def quantile(sf, level, guess):
    target = 1 - mpmath.mpf(level)
    return mpmath.findroot(lambda t: sf(t) - target, (guess, 1.01 * guess), solver="secant",
                           tol=mpmath.mpf(10) ** (-2 * DPS // 3))


if __name__ == "__main__":
    mpmath.mp.dps = DPS
    for alpha, free, guesses in ((1.8, 1e-2, (484.0, 50368.0)), (1.8, 0.1, (19.4, 2499.7)),
                                 (2.5, 0.1, (3.1, 38.0))):
        sf = sojourn_sf(alpha, free)
        for level, guess in zip((0.5, 0.99), guesses):
            t = quantile(sf, level, guess)
            check = sf(t, "dehoog") - (1 - mpmath.mpf(level))
            print(alpha, free, level, mpmath.nstr(t, 20), "de Hoog residual",
                  mpmath.nstr(check, 3))
