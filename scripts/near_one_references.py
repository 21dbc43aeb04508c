"""References for tests/test_near_load_one.py: response-time quantiles within 2^-30 (about
1e-9) of load 1, by mpmath alone (independent of queuetheory), at 50 and 80 digits (de Hoog)
and 80 digits (Talbot); the three agree to the digits printed.

* M/D/1 (Random, IR Deterministic(1)), lam = 1 - 2^-30: the sojourn's transform
  ``(1 - rho) s e^{-s} / (s - lam (1 - e^{-s}))`` (Pollaczek-Khinchine, Kleinrock eq. (5.105)),
  its tail ``(1 - T~(s)) / s`` inverted; quantiles by the secant method on the tail.
* RIQ(2), IR Exponential(1) runtimes, lam = 1 - 2^-30: the k -> infinity model of Gardner et
  al. (ToN 2017) written out here: the busy fraction ``b`` solves
  ``b (1 - lam b) = 2 (1 - b) lam E[B_e](b)`` with ``B_e`` the fastest of ``I`` replicas,
  ``I - 1 ~ Binomial(1, 1 - b)`` (``Exp(1)`` or ``Exp(2)``); a job finds ``i`` of its 2 polled
  servers idle with probability ``C(2, i) (1 - b)^i b^(2 - i)`` and then runs ``Exp(i)``, else
  it waits behind a busy server: ``(1 - B_e~(s)) / (s E[B_e])`` (the excess of the first
  service) times the Pollaczek-Khinchine wait at ``lam_b = lam b`` with service ``Exp(1)``,
  then ``Exp(1)``.

Usage: ``python scripts/near_one_references.py`` (about a minute).
"""
import mpmath as mp

LEVELS = ("0.5", "0.99", "0.999999")


def md1(lam):
    rho = lam

    def T(s):
        return (1 - rho) * s * mp.exp(-s) / (s - lam * (1 - mp.exp(-s)))
    return T, rho / (2 * (1 - rho)) + 1   # the mean: where to start the search


def riq2_exponential(lam, mu=1):
    def balance(b):
        first = ((1 - b) / 2 + b) / mu                   # E[B_e]: Exp(2 mu) w.p. 1 - b, else Exp(mu)
        return b * (1 - lam * b / mu) - 2 * (1 - b) * lam * first
    b = mp.findroot(balance, (mp.mpf("0.5"), 1 - (1 - lam / mu) / 100), solver="anderson")
    lam_b, rho_b = lam * b, lam * b / mu
    w0, w1, w2 = b ** 2, 2 * (1 - b) * b, (1 - b) ** 2

    def Be(s):
        return (1 - b) * 2 * mu / (2 * mu + s) + b * mu / (mu + s)
    be1 = ((1 - b) / 2 + b) / mu

    def T(s):
        B = mu / (mu + s)
        busy = (1 - Be(s)) / (s * be1) * (1 - rho_b) * s / (s - lam_b * (1 - B)) * B
        return w1 * mu / (mu + s) + w2 * 2 * mu / (2 * mu + s) + w0 * busy
    return T, lam_b / (1 - rho_b) + 1     # the scale of the wait: where to start the search


def quantiles(T, scale, dps, method):
    with mp.workdps(dps):
        def sf(t):
            return mp.invertlaplace(lambda s: (1 - T(s)) / s, t, method=method)
        out = []
        for level in LEVELS:
            target = 1 - mp.mpf(level)
            guess = scale * mp.log(1 / target)
            out.append(mp.findroot(lambda t, target=target: sf(t) - target,
                                   (guess, guess * 1.01), solver="secant"))
        return out


def riq2_inexact_mean(lam):
    """RIQ(2) with Exponential(1 / 1.3) runtimes (a mean 1.3 that is not a float), arrival rate
    the float ``(1 - 2^-30) / 1.3``: the rate of the float 1 / 1.3, exactly."""
    return riq2_exponential(mp.mpf(float((1 - 2.0 ** -30) / 1.3)), mp.mpf(1 / 1.3))


if __name__ == "__main__":
    lam = 1 - mp.mpf(2) ** -30
    for name, model in (("M/D/1", md1), ("RIQ(2) exponential", riq2_exponential),
                        ("RIQ(2) exponential, rate 1/1.3", lambda lam: riq2_inexact_mean(lam))):
        for dps, method in ((50, "dehoog"), (80, "dehoog"), (80, "talbot")):
            with mp.workdps(dps):
                T, scale = model(mp.mpf(lam))
                values = quantiles(T, scale, dps, method)
            print(name, dps, method, [mp.nstr(v, 17) for v in values])
