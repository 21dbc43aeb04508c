"""References for tests/test_riq.py::test_queued_weight_at_tiny_loads: RIQ(d), IR
Deterministic(1), ``P(T > t)`` for ``1 < t < 2`` at tiny arrival rates, in mpmath.

With unit runtimes ``E[B] = E[B_e] = 1``, so the busy fraction ``b`` solves ``b (1 - lam
b^(d-1)) = (1 - b) lam d``. A job finding a polled server idle is done at 1; one finding all
``d`` busy (probability ``b^d``) takes ``E + W + 1`` (docs/theory/riq.rst), ``E ~ U(0, 1)`` (the
residual of a unit first service) and ``W`` the M/D/1 wait at ``lam_B = lam b^(d-1)``, whose
CDF on ``[0, 1)`` is ``(1 - lam_B) exp(lam_B x)``. So for ``y = t - 1`` in ``(0, 1)``: ``P(T >
t) = b^d (1 - (1 - lam_B) (exp(lam_B y) - 1) / lam_B)``. 50 and 70 digits agree to the digits
printed.

Usage: ``python scripts/riq_tiny_load_references.py``.
"""
import mpmath as mp

CASES = ((2, "1e-4"), (2, "1e-6"), (2, "1e-8"), (3, "1e-6"))


def tail(d, lam, t):
    lam = mp.mpf(lam)
    b = mp.findroot(lambda b: b * (1 - lam * b ** (d - 1)) - (1 - b) * lam * d, lam * d)
    lam_b, y = lam * b ** (d - 1), mp.mpf(t) - 1
    return b ** d * (1 - (1 - lam_b) * mp.expm1(lam_b * y) / lam_b)


def main():
    for d, lam in CASES:
        with mp.workdps(50):
            low = tail(d, lam, 1.3)
        with mp.workdps(70):
            high = tail(d, lam, 1.3)
        print(f"d = {d}, lam = {lam}: P(T > 1.3) = {mp.nstr(high, 20)} "
              f"(50 vs 70 digits: {mp.nstr(abs(low - high) / high, 2)} relative)")


if __name__ == "__main__":
    main()
