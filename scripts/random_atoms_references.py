"""References for tests/test_atoms.py::test_random_with_atoms_near_its_jumps_and_kinks: the
M/G/1 response time (``queuetheory.Random`` on one server) with a runtime on an integer lattice,
by the method of steps in exact polynomial arithmetic (independent of queuetheory).

The wait's CDF ``F(y) = exp(lam u) P_k(u)`` on ``[k, k + 1)`` (``u = y - k``) is that of
:func:`lattice_wait_near_one_references.method_of_steps`; the response time's ``P(T <= t) =
sum_b p_b F(t - b)``, quantiles by bisection to 1e-30. At 40 and 60 digits they agree to the
digits printed.

Usage: ``python scripts/random_atoms_references.py`` (a few seconds).
"""
from fractions import Fraction

import mpmath as mp
from lattice_wait_near_one_references import exact, method_of_steps

# (atoms, probabilities, arrival rate): every number is a binary fraction, as the test passes it
CASES = (
    ((1, 2), (Fraction(1, 2), Fraction(1, 2)), Fraction(1, 4)),
    ((1, 3), (Fraction(5, 8), Fraction(3, 8)), Fraction(1, 4)),
    ((2, 3, 5), (Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)), Fraction(1, 8)),
    ((1, 10), (Fraction(63, 64), Fraction(1, 64)), Fraction(1, 2)),
    ((1,), (Fraction(1),), Fraction(7, 8)),
)
PIECES = 40
TIMES = (1e-9, 1e-6, 1e-3, 0.3)        # after each atom and each sum of two atoms
LEVELS = (1e-9, 1e-6, 1e-3)            # above the top of each jump


def response(atoms, probs, lam):
    lam = exact(lam)
    probs = [exact(p) for p in probs]
    rho = lam * sum(b * p for b, p in zip(atoms, probs))
    polys = method_of_steps(lam, rho, atoms, probs, PIECES)

    def wait_cdf(y):
        if y < 0:
            return mp.mpf(0)
        k = int(mp.floor(y))
        u = y - k
        return mp.exp(lam * u) * mp.polyval(polys[k][::-1], u)

    def cdf(t):
        return mp.fsum(p * wait_cdf(t - b) for b, p in zip(atoms, probs))

    return cdf


def quantile(cdf, level, lo, hi):
    level = mp.mpf(level)
    for _ in range(120):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < level else (lo, mid)
    return hi


def points(atoms):
    sums = sorted(set(atoms) | {a + b for a in atoms for b in atoms})
    return [mp.mpf(float(x) + d) for x in sums for d in TIMES]   # the float the test passes


def solve(case, dps):
    atoms, probs, lam = case
    with mp.workdps(dps):
        cdf = response(atoms, probs, lam)
        values = [(float(t), cdf(t)) for t in points(atoms)]
        levels = []
        for b in atoms:
            top = cdf(mp.mpf(b))
            for d in LEVELS:
                level = float(top + d)
                levels.append((level, quantile(cdf, level, mp.mpf(b), mp.mpf(b) + 1)))
        return values, levels


def main():
    for case in CASES:
        low, high = solve(case, 40), solve(case, 60)
        print(case)
        for (t, v40), (_, v60) in zip(*[x[0] for x in (low, high)]):
            assert abs(v40 - v60) < mp.mpf(10) ** -30
            print(f"  cdf {t!r}: {mp.nstr(v60, 20)}")
        for (q, v40), (_, v60) in zip(low[1], high[1]):
            assert abs(v40 - v60) < mp.mpf(10) ** -25
            print(f"  ppf {q!r}: {mp.nstr(v60, 20)}")


if __name__ == "__main__":
    main()
