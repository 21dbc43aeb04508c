"""References for tests/test_removal.py::test_sx_job_size_mixing_atoms_and_a_density_against_mpmath:
S&X runtimes ``X S`` whose job size mixes an atom and an exponential density, ``X = a delta_1 +
(1 - a) Exp(mu)``, with slowdowns ``S`` on {1, 2} (``P(S = 1) = p``), by the method of steps on
ordinary differential equations (independent of queuetheory).

One task per server and batch, nothing removed (MDS(1, 0), or Replication(n, 1)): each server is
an M/G/1 queue with service ``B = X S``, so ``B`` has atoms ``a p`` at 1 and ``a (1 - p)`` at 2,
and exponential parts of rates ``mu`` (weight ``(1 - a) p``) and ``mu / 2`` (weight ``(1 - a)
(1 - p)``). Level crossing gives the wait's CDF ``F`` (``F(0) = 1 - rho``) as

    F'(x) = lam (F(x) - a p F(x - 1) - a (1 - p) F(x - 2) - (1 - a) (p G1(x) + (1 - p) G2(x))),
    Gj' = nu_j (F - Gj),  Gj(0) = 0,  nu_1 = mu, nu_2 = mu / 2,

``Gj(x) = P(W + Exp(nu_j) <= x)``. On ``[k, k + 1)`` the delayed terms are the pieces ``k - 1``
and ``k - 2`` at the same local time ``u = x - k``, so each piece is a linear ODE with a
polynomial forcing term, solved exactly as a Taylor series in ``u`` (the recurrence ``y_(n+1) =
(M y_n + c_n) / (n + 1)``, 120 terms: the solution is entire and the rates are at most 1).

* The sojourn (MDS(1, 0)): ``P(T <= t) = a (p F(t - 1) + (1 - p) F(t - 2)) + (1 - a) (p G1(t)
  + (1 - p) G2(t))``; its mean is Pollaczek-Khinchine (in the test, a closed form).
* A batch of ``n`` jobs sharing one ``X`` (Replication(n, 1)): given ``X = x`` the ``n`` tasks
  are independent (k -> infinity) with ``q(t | x) = p F(t - x) + (1 - p) F(t - 2 x)``, so
  ``P(C <= t) = a q(t | 1)^n + (1 - a) int_0^inf mu e^(-mu x) q(t | x)^n dx`` (mpmath's quad,
  split where ``t - x s`` crosses an integer: the jump of ``F`` at 0 and its kinks).

Quantiles by the secant method on the CDF. 30 and 45 digits agree to the digits printed.

Usage: ``python scripts/mixed_job_size_references.py`` (about a minute).
"""
import mpmath as mp

TERMS = 120
# (a, mu, p, lam as the test passes it, levels of the sojourn, n and levels of the batch)
CASES = (("0.5", "1", "0.6", "0.5", (0.5, 0.9, 0.99), 3, (0.5, 0.99)),
         ("0.3", "2", "0.5", "0.8", (0.5, 0.9, 0.99), 3, (0.5, 0.99)))


def solve(a, mu, p, lam):
    """The sojourn's CDF and the batch's CDF (functions of mpf arguments)."""
    a, mu, p, lam = (mp.mpf(v) for v in (a, mu, p, lam))
    nu = (mu, mu / 2)
    rho = lam * (a + (1 - a) / mu) * (p + 2 * (1 - p))
    pieces = []            # per piece: Taylor coefficients of F, G1, G2 in u

    def piece(k):
        while len(pieces) <= k:
            j = len(pieces)
            zero = [mp.mpf(0)] * TERMS
            if j == 0:
                f, g1, g2 = [1 - rho], [mp.mpf(0)], [mp.mpf(0)]
            else:
                f, g1, g2 = ([mp.polyval(c[::-1], 1)] for c in pieces[j - 1])
            one = pieces[j - 1][0] if j >= 1 else zero
            two = pieces[j - 2][0] if j >= 2 else zero
            for n in range(TERMS - 1):
                f.append(lam * (f[n] - a * (p * one[n] + (1 - p) * two[n])
                                - (1 - a) * (p * g1[n] + (1 - p) * g2[n])) / (n + 1))
                g1.append(nu[0] * (f[n] - g1[n]) / (n + 1))
                g2.append(nu[1] * (f[n] - g2[n]) / (n + 1))
            pieces.append((f, g1, g2))
        return pieces[k]

    def wait(x):
        """``(F(x), G1(x), G2(x))``, all 0 below 0."""
        if x < 0:
            return mp.mpf(0), mp.mpf(0), mp.mpf(0)
        k = int(mp.floor(x))
        return tuple(mp.polyval(c[::-1], x - k) for c in piece(k))

    def sojourn(t):
        return (a * (p * wait(t - 1)[0] + (1 - p) * wait(t - 2)[0])
                + (1 - a) * (p * wait(t)[1] + (1 - p) * wait(t)[2]))

    def batch(t, n):
        def q(x):
            return p * wait(t - x)[0] + (1 - p) * wait(t - 2 * x)[0]

        # breaks where t - x or t - 2x is an integer (0 included: the jump of F)
        breaks = sorted({mp.mpf(0)} | {t - m for m in range(int(t) + 1) if t - m > 0}
                        | {(t - m) / 2 for m in range(int(t) + 1) if t - m > 0})
        inner = mp.quad(lambda x: mu * mp.exp(-mu * x) * q(x) ** n, breaks + [t])
        # beyond x = t every task is unfinished (q = 0)
        return a * q(mp.mpf(1)) ** n + (1 - a) * inner

    return sojourn, batch


def quantile(cdf, level, guess):
    level = mp.mpf(level)
    return mp.findroot(lambda t: cdf(t) - level, (mp.mpf(guess), mp.mpf(guess) * 1.01),
                       solver="secant", tol=mp.mpf(10) ** (-2 * mp.mp.dps + 10))


def main():
    for dps in (30, 45):
        mp.mp.dps = dps
        print(f"dps {dps}")
        for a, mu, p, lam, levels, n, batch_levels in CASES:
            # lam as the float the test passes, taken exactly
            sojourn, batch = solve(a, mu, p, mp.mpf(float(lam)))
            values = [quantile(sojourn, q, 1 + 5 * q) for q in levels]
            batches = [quantile(lambda t: batch(t, n), q, 2 + 8 * q) for q in batch_levels]
            print(f"  a={a} mu={mu} p={p} lam={lam}: sojourn {levels}:",
                  [mp.nstr(v, 20) for v in values])
            print(f"    batch n={n} {batch_levels}:", [mp.nstr(v, 20) for v in batches])
            # the jumps of P(T <= t) at the atoms 1 and 2 of B (times the atom of W at 0)
            eps = mp.mpf(10) ** (-dps // 2)
            print("    sojourn CDF just below and at 1 and 2:",
                  [mp.nstr(sojourn(mp.mpf(t)), 12) for t in (1 - eps, 1, 2 - eps, 2)])


if __name__ == "__main__":
    main()
