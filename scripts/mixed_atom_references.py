"""References for tests/test_atoms.py::test_random_with_an_atom_and_a_density_at_its_kinks: the
M/G/1 response time (``queuetheory.Random`` on one server) with a runtime that mixes an atom and
an exponential density, ``B = p delta_1 + (1 - p) Exp(mu)``, by the method of steps on an
ordinary differential equation (independent of queuetheory).

Level crossing gives the wait's CDF ``F`` (``F(0) = 1 - rho``) as ``F'(x) = lam (F(x) - P(W +
B <= x)) = lam (F(x) - p F(x - 1) - (1 - p) G(x))`` with ``G(x) = P(W + Exp(mu) <= x)``, and
``G' = mu (F - G)``, ``G(0) = 0``. On ``[k, k + 1)`` the delayed term is the previous piece at
the same local time ``u = x - k``, so each piece is a linear ODE with a polynomial forcing term,
solved exactly as a Taylor series in ``u`` (the recurrence ``y_(n+1) = (M y_n + c_n) / (n +
1)``, 120 terms: the solution is entire and ``|M| <= 1``). The response time ``P(T <= t) = p
F(t - 1) + (1 - p) G(t)``. 40 and 60 digits agree to the digits printed.

Usage: ``python scripts/mixed_atom_references.py`` (a second).
"""
import mpmath as mp

P, MU, LAM = "0.5", "1", "0.4"            # the test passes 0.5, 1.0 and the float 0.4
TIMES = (0.5, 1.000001, 1.001, 1.3, 1.999, 2.000001, 2.001, 2.5, 2.999, 3.001)
TERMS = 120


def response(lam):
    p, mu = mp.mpf(P), mp.mpf(MU)
    rho = lam * (p + (1 - p) / mu)
    pieces = []                 # per piece: Taylor coefficients of F and G in u

    def piece(k):
        while len(pieces) <= k:
            j = len(pieces)
            if j == 0:
                f, g = [1 - rho], [mp.mpf(0)]
                delayed = [mp.mpf(0)] * TERMS
            else:
                f_prev, g_prev = pieces[j - 1]
                f, g = [mp.polyval(f_prev[::-1], 1)], [mp.polyval(g_prev[::-1], 1)]
                delayed = f_prev
            for n in range(TERMS - 1):
                f.append(lam * (f[n] - p * delayed[n] - (1 - p) * g[n]) / (n + 1))
                g.append(mu * (f[n] - g[n]) / (n + 1))
            pieces.append((f, g))
        return pieces[k]

    def wait(x):
        """(F(x), G(x)); both 0 below 0."""
        if x < 0:
            return mp.mpf(0), mp.mpf(0)
        k = int(mp.floor(x))
        f, g = piece(k)
        return mp.polyval(f[::-1], x - k), mp.polyval(g[::-1], x - k)

    def cdf(t):
        t = mp.mpf(t)
        return mp.mpf(P) * wait(t - 1)[0] + (1 - mp.mpf(P)) * wait(t)[1]

    return cdf


def main():
    values = {}
    for dps in (40, 60):
        with mp.workdps(dps):
            cdf = response(mp.mpf(float(LAM)))     # the float rate the test passes
            values[dps] = [cdf(t) for t in TIMES]
            assert abs(cdf(200) - 1) < mp.mpf(10) ** -20
    for t, low, high in zip(TIMES, values[40], values[60]):
        print(f"  cdf {t!r}: {mp.nstr(high, 20)}  (40 vs 60 digits: {mp.nstr(abs(low - high), 2)})")


if __name__ == "__main__":
    main()
