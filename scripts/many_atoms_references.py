"""References for tests/test_atoms.py::test_random_with_twenty_atoms: the M/G/1 response time
(``queuetheory.Random``) with a runtime on the 20 atoms 1..20 (beyond the 16 atoms whose
density jumps the inversion once took out), by the method of steps in exact polynomial
arithmetic (:func:`random_atoms_references.response`, independent of queuetheory). 30 and 45
digits agree to the digits printed.

Usage: ``python scripts/many_atoms_references.py`` (a second).
"""
from fractions import Fraction

import mpmath as mp
from random_atoms_references import response

ATOMS = tuple(range(1, 21))
PROBS = tuple(Fraction(n, 512) for n in (42, 20, 51, 7, 10, 13, 47, 8, 28, 5, 12, 56, 54, 9,
                                         31, 12, 55, 8, 16, 28))
RATE = Fraction(49, 1024)                       # load 0.497
TIMES = (1.0 + 1e-6, 2.0 + 1e-4, 3.5, 7.0 + 1e-6, 12.0 + 1e-3, 21.0 + 1e-6, 25.5, 33.0 + 1e-4)


def main():
    assert sum(PROBS) == 1
    values = []
    for dps in (30, 45):
        with mp.workdps(dps):
            cdf = response(ATOMS, PROBS, RATE)
            values.append([cdf(mp.mpf(t)) for t in TIMES])
    for t, low, high in zip(TIMES, *values):
        print(f"P(T <= {t!r}) = {mp.nstr(high, 20)}  (30 vs 45 digits: {mp.nstr(abs(low - high), 2)})")


if __name__ == "__main__":
    main()
