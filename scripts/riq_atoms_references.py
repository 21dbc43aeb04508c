"""References for tests/test_atoms.py::test_riq_with_atoms_near_its_jumps_and_kinks: the RIQ
response time with runtimes on an integer lattice, the queued part by the method of steps.

RIQ's queued part is ``E + W + B`` (docs/theory/riq.rst): ``E`` with density ``P(B_e > x) /
E[B_e]`` (``B_e`` the first service of a busy period), ``W`` the M/G/1 wait at rate ``lam_B``
with service ``B``, and the service ``B``. Its parameters (``lam_B``, ``B_e``, the split weight
and the law of a job that finds idle servers) are those queuetheory derives from RIQ's fixed
point (checked elsewhere against simulation and the closed forms); this script checks the
inversion given them: ``W``'s CDF by the method of steps in mpmath
(:func:`lattice_wait_near_one_references.method_of_steps`), ``P(E + W <= y)`` by mpmath's
quadrature over ``E``'s piecewise constant density on unit pieces, and ``P(T <= t) = w P(A <=
t) + (1 - w) sum_j p_j P(E + W <= t - b_j)``. Quantiles by bisection. 40 and 60 digits agree to
the digits printed.

Usage: ``python scripts/riq_atoms_references.py`` (about a minute).
"""
import mpmath as mp
from lattice_wait_near_one_references import method_of_steps

import queuetheory as qt

CASES = (  # (d, atoms, probabilities, arrival rate)
    (2, (1.0, 2.0), (0.5, 0.5), 0.375),
    (3, (1.0,), (1.0,), 0.75),
)
PIECES = 30
TIMES = (1e-6, 1e-3, 0.3)
LEVELS = (1e-7, 1e-3)


def response(d, atoms, probs, lam):
    system = qt.System(qt.RIQ(d), qt.IR(qt.Discrete(list(atoms), list(probs))), lam)
    T = qt.analyze(system).response_time
    weight, immediate, busy, _ = T._split
    lam_b = mp.mpf(busy.lam)
    rho_b = 1 - mp.mpf(busy.free)
    b = [int(x) for x in atoms]
    p = [mp.mpf(x) for x in probs]
    first_values, first_probs = busy.Be.atoms
    e = [int(x) for x in first_values]
    q = [mp.mpf(x) for x in first_probs]
    be1 = mp.fsum(x * y for x, y in zip(e, q))
    polys = method_of_steps(lam_b, rho_b, b, p, PIECES)

    def wait_cdf(y):
        if y < 0:
            return mp.mpf(0)
        k = int(mp.floor(y))
        return mp.exp(lam_b * (y - k)) * mp.polyval(polys[k][::-1], y - k)

    def residual_density(x):  # P(B_e > x) / E[B_e]
        return mp.fsum(w for v, w in zip(e, q) if v > x) / be1

    def queued_part(y):    # P(E + W <= y)
        if y <= 0:
            return mp.mpf(0)
        cuts = sorted({mp.mpf(0), y} | {mp.mpf(k) for k in range(1, int(y) + 1)}
                      | {y - k for k in range(0, int(y) + 1) if y - k > 0})
        return mp.quad(lambda x: residual_density(x) * wait_cdf(y - x), cuts)

    def cdf(t):
        rest = mp.fsum(w * queued_part(t - v) for v, w in zip(b, p))
        return mp.mpf(weight) * mp.mpf(float(immediate.cdf(float(t)))) + (1 - mp.mpf(weight)) * rest

    return cdf, T


def solve(case, dps):
    d, atoms, probs, lam = case
    with mp.workdps(dps):
        cdf, T = response(d, atoms, probs, lam)
        sums = sorted(set(atoms) | {a + c for a in atoms for c in atoms})
        values = [(float(x) + h, cdf(mp.mpf(float(x) + h))) for x in sums for h in TIMES]
        levels = []
        for v in atoms:
            top = float(T.cdf(v))       # the jump's top: the split-off law's CDF alone
            for h in LEVELS:
                lo, hi = mp.mpf(v), mp.mpf(v) + 1
                for _ in range(100):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if cdf(mid) < top + h else (lo, mid)
                levels.append((top + h, hi))
        return values, levels


def main():
    for case in CASES:
        low, high = solve(case, 30), solve(case, 45)
        print(case)
        for kind, part in (("cdf", 0), ("ppf", 1)):
            for (x, v30), (_, v45) in zip(low[part], high[part]):
                print(f"  {kind} {x!r}: {mp.nstr(v45, 20)}  (30 vs 45 digits: "
                      f"{mp.nstr(abs(v30 - v45), 2)})")


if __name__ == "__main__":
    main()
