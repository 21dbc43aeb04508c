"""References for tests/test_atoms.py::test_random_with_an_atom_at_zero: the M/G/1 response
time (``queuetheory.Random``) with runtimes on integers including 0, by the method of steps
(independent of queuetheory).

A job of size 0 leaves the workload unchanged, so the wait is that of the M/G/1 queue fed only
by the positive jobs: rate ``lam (1 - p_0)``, sizes ``B | B > 0``; by PASTA every job, of any
size, sees that wait, and ``P(T <= t) = sum_b p_b W(t - b)``. ``W`` by
:func:`lattice_wait_near_one_references.method_of_steps` in exact polynomial arithmetic. 40 and
60 digits agree to the digits printed.

Usage: ``python scripts/zero_atom_references.py``.
"""
from fractions import Fraction

import mpmath as mp
from lattice_wait_near_one_references import exact, method_of_steps

CASES = (((0, 1), (Fraction(1, 2), Fraction(1, 2)), Fraction(3, 4)),
         ((0, 1, 2), (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)), Fraction(1, 2)))
TIMES = (0.3, 0.9, 1.5, 2.5, 6.2)


def response(atoms, probs, lam):
    p0 = sum(p for a, p in zip(atoms, probs) if a == 0)
    positive = [(a, p / (1 - p0)) for a, p in zip(atoms, probs) if a > 0]
    rate = lam * (1 - p0)
    rho = rate * sum(a * p for a, p in positive)
    polys = method_of_steps(exact(rate), exact(rho), [a for a, _ in positive],
                            [exact(p) for _, p in positive], 40)

    def wait(y):
        if y < 0:
            return mp.mpf(0)
        k = int(mp.floor(y))
        return mp.exp(exact(rate) * (y - k)) * mp.polyval(polys[k][::-1], y - k)

    return lambda t: mp.fsum(exact(p) * wait(mp.mpf(t) - a) for a, p in zip(atoms, probs))


def main():
    for atoms, probs, lam in CASES:
        print(atoms, [str(p) for p in probs], lam)
        values = []
        for dps in (40, 60):
            with mp.workdps(dps):
                cdf = response(atoms, probs, lam)
                values.append([cdf(t) for t in TIMES])
        for t, low, high in zip(TIMES, *values):
            print(f"  P(T <= {t}) = {mp.nstr(high, 20)}  (40 vs 60 digits: "
                  f"{mp.nstr(abs(low - high), 2)})")


if __name__ == "__main__":
    main()
