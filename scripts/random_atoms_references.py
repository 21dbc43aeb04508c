"""References for tests/test_atoms.py::test_random_with_atoms_near_its_jumps_and_kinks: the
M/G/1 response time (``queuetheory.Random`` on one server) with a runtime on an integer lattice,
by the method of steps in exact polynomial arithmetic (independent of queuetheory).

The wait's CDF ``F(y) = exp(lam u) P_k(u)`` on ``[k, k + 1)`` (``u = y - k``) is that of
:func:`lattice_wait_near_one_references.method_of_steps`; the response time's ``P(T <= t) =
sum_b p_b F(t - b)``, quantiles by bisection to 1e-30. At 40 and 60 digits they agree to the
digits printed.

Atoms off any lattice (:func:`response_off_lattice`): the method of steps on the pieces between
the sums of atoms, a Taylor polynomial per piece.

Usage: ``python scripts/random_atoms_references.py`` (a minute).
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


def response_off_lattice(atoms, probs, lam, horizon, degree=40):
    """``P(T <= t)`` for atoms off any lattice (floats, used exactly): the method of steps on the
    pieces between the sums ``sum_k n_k b_k <= horizon`` of the atoms, ``F`` a Taylor
    polynomial in ``u = y - t_i`` on each (``c_(n+1) = lam (c_n - g_n) / (n + 1)``, ``g`` the
    delayed terms ``sum_k p_k F(y - b_k)``, each inside one earlier piece: a breakpoint strictly
    inside ``(t_i - b_k, t_(i+1) - b_k)`` would put one strictly inside ``(t_i, t_(i+1))``)."""
    b = [mp.mpf(x) for x in atoms]
    p = [mp.mpf(x) for x in probs]
    lam = mp.mpf(lam)
    rho = lam * mp.fsum(x * y for x, y in zip(b, p))
    tol = mp.mpf(10) ** (8 - mp.mp.dps)
    points, frontier = [mp.mpf(0)], [mp.mpf(0)]
    while frontier:
        new = []
        for t in frontier:
            for x in b:
                u = t + x
                if u <= horizon and all(abs(u - v) > tol for v in points + new):
                    new.append(u)
        points += new
        frontier = new
    ends = sorted(points) + [mp.mpf(horizon)]
    polys = []

    def shifted(c, d):          # coefficients of P(u + d) from those of P(u)
        return [mp.fsum(c[j] * mp.binomial(j, i) * d ** (j - i) for j in range(i, len(c)))
                for i in range(len(c))]

    def piece_of(y):
        return max(j for j, t in enumerate(ends[:-1]) if t <= y + tol)

    for i, t in enumerate(ends[:-1]):
        forcing = [mp.mpf(0)] * degree
        for x, w in zip(b, p):
            if t - x < -tol:
                continue
            j = piece_of(t - x)
            for n, c in enumerate(shifted(polys[j], t - x - ends[j])[:degree]):
                forcing[n] += w * c
        c = [1 - rho if i == 0 else mp.polyval(polys[i - 1][::-1], t - ends[i - 1])]
        for n in range(degree - 1):
            c.append(lam * (c[n] - forcing[n]) / (n + 1))
        polys.append(c)

    def wait_cdf(y):
        if y < 0:
            return mp.mpf(0)
        j = piece_of(y)
        return mp.polyval(polys[j][::-1], y - ends[j])

    def cdf(t):
        return mp.fsum(w * wait_cdf(mp.mpf(t) - x) for x, w in zip(b, p))

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


OFF_LATTICE = ((1.0, 2 ** 0.5), (0.5, 0.5), 0.4, 6.0)   # atoms, probabilities, rate, horizon
OFF_LATTICE_TIMES = (1.000001, 1.2, 1.414214562373095, 1.45, 2.000001, 2.2, 2.414214562373095,
                     2.5, 2.828428124746190, 3.0001, 3.414213, 3.8, 4.242641, 4.5)


def main():
    atoms, probs, lam, horizon = OFF_LATTICE
    low, high = [], []
    for dps, values in ((30, low), (45, high)):
        with mp.workdps(dps):
            cdf = response_off_lattice(atoms, probs, lam, horizon)
            values += [cdf(t) for t in OFF_LATTICE_TIMES]
    print(OFF_LATTICE)
    for t, v30, v45 in zip(OFF_LATTICE_TIMES, low, high):
        print(f"  cdf {t!r}: {mp.nstr(v45, 20)}  (30 vs 45 digits: {mp.nstr(abs(v30 - v45), 2)})")
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
