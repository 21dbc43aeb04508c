"""Far-tail quantiles of M/G/1 sojourn times, independently of queuetheory
(tests/test_response.py::test_far_tail_quantiles and tests/test_atoms.py).

The sojourn ``T = W + B`` of the M/G/1 queue (Pollaczek-Khinchine) at the float levels
``1 - 1e-9`` and ``1 - 1e-12``, at 40 digits:

* M/M/1: ``P(T > t) = exp(-(mu - lam) t)``;
* M/H2/1 (``B`` HyperExponential([0.9, 0.1], [2, 0.25]), mean 0.85, arrival rates 0.5 and 1):
  partial fractions of the rational transform (two poles);
* ``B = 0.5 Det(1) + 0.5 Exp(1)``: the Cramer-Lundberg term of the pole ``-gamma`` nearest the
  origin, ``P(T > t) ~ (1 - rho) B~(-gamma) / (lam E[B exp(gamma B)] - 1) exp(-gamma t)``,
  checked here against de Hoog's inversion (mpmath.invertlaplace) of the transform at t = 60,
  where the remaining poles have decayed below the digits printed.
"""
import mpmath as mp

mp.mp.dps = 40
# the tail probabilities 1 - q of the float levels q = 1 - 1e-9, 1 - 1e-12 a caller passes
# (exactly: 1 - float(1 - 1e-12) is 9.99978e-13, which moves the quantile by 2.2e-5 / gamma)
LEVELS = tuple(1 - mp.mpf(1 - p) for p in (1e-9, 1e-12))


def mm1(lam):
    gamma = 1 - mp.mpf(lam)
    return [mp.log(1 / p) / gamma for p in LEVELS]


def mh2(lam):
    lam = mp.mpf(lam)
    p1, p2, m1, m2 = mp.mpf(9) / 10, mp.mpf(1) / 10, mp.mpf(2), mp.mpf(1) / 4
    rho = lam * (p1 / m1 + p2 / m2)
    # T~(s) = (1 - rho) s B~(s) / (s - lam (1 - B~(s))) = (1 - rho) P(s) / Q(s): the
    # denominator times (s + m1)(s + m2) over s is the quadratic Q
    c2, c1 = m1 + m2 - lam, m1 * m2 - lam * (m1 + m2) + lam * (p1 * m1 + p2 * m2)
    roots = mp.polyroots([1, c2, c1])

    def sf(t):
        return mp.fsum(-(1 - rho) * (p1 * m1 * (r + m2) + p2 * m2 * (r + m1)) / (2 * r + c2) / r
                       * mp.exp(r * t) for r in roots)

    assert abs(sf(0) - 1) < mp.mpf(10) ** -35
    return [mp.findroot(lambda t, p=p: mp.log(sf(t) / p), mp.log(1 / p) / -max(roots))
            for p in LEVELS]


def mixed(lam):
    lam = mp.mpf(lam)
    rho = lam

    def B(s):
        return (mp.exp(-s) + 1 / (1 + s)) / 2

    def dB(s):       # B~'(s) = -E[B exp(-s B)]
        return (-mp.exp(-s) - 1 / (1 + s) ** 2) / 2

    def D(s):
        return s - lam * (1 - B(s))

    # D < 0 just left of 0 (slope 1 - rho), D -> +inf at the pole -1 of B~: one root between
    lo, hi = -1 + mp.mpf(10) ** -30, -mp.mpf(10) ** -30
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if D(mid) > 0 else (lo, mid)
    gamma = -mp.findroot(D, (lo + hi) / 2)
    C = (1 - rho) * B(-gamma) / (-lam * dB(-gamma) - 1)
    t0 = mp.mpf(60)
    dehoog = mp.invertlaplace(lambda s: (1 - (1 - rho) * s * B(s) / D(s)) / s, t0,
                              method="dehoog")
    print("  check: de Hoog at t = 60", mp.nstr(dehoog, 15), "pole term",
          mp.nstr(C * mp.exp(-gamma * t0), 15))
    return [mp.log(C / p) / gamma for p in LEVELS]


for name, f, lams in (("M/M/1", mm1, (0.5, 0.9, 0.95)), ("M/H2/1", mh2, (0.5, 1.0)),
                      ("0.5 Det(1) + 0.5 Exp(1)", mixed, (0.5, 0.9, 0.95))):
    for lam in lams:
        print(name, lam, [mp.nstr(v, 15) for v in f(lam)])


def hyperexponential_quantiles(probs, rates, load, levels):
    """M/H2/1 sojourn quantiles by partial fractions, the float probabilities over their exact
    sum (tests/test_response.py::test_far_tail_of_far_apart_rates and
    test_far_tail_quantile_with_inexact_probabilities_in_high_precision)."""
    ps = [mp.mpf(p) for p in probs]
    ps = [p / mp.fsum(ps) for p in ps]
    (p1, p2), (r1, r2) = ps, [mp.mpf(r) for r in rates]
    lam = mp.mpf(load / float(p1 / r1 + p2 / r2))      # the float arrival rate the test passes
    rho = lam * (p1 / r1 + p2 / r2)
    c2, c1 = r1 + r2 - lam, r1 * r2 - lam * (r1 + r2) + lam * (p1 * r1 + p2 * r2)
    roots = mp.polyroots([1, c2, c1])

    def sf(t):
        return mp.fsum(-(1 - rho) * (p1 * r1 * (r + r2) + p2 * r2 * (r + r1)) / (2 * r + c2) / r
                       * mp.exp(r * t) for r in roots)

    return float(lam), [mp.findroot(lambda t, q=q: mp.log(sf(t) / (1 - mp.mpf(q))),
                                    mp.log(1 / (1 - mp.mpf(q))) / -max(roots)) for q in levels]


for probs, rates, load, levels in (
        ([0.99, 0.01], [1.0, 0.01], 0.7, (1 - 1e-9, 1 - 1e-12, 1 - 1e-13)),
        ([0.9, 0.1], [2.0, 0.25], 0.9, (1 - 1e-9, 1 - 1e-12))):
    lam, values = hyperexponential_quantiles(probs, rates, load, levels)
    print("H2", probs, rates, "arrival rate", repr(lam), [mp.nstr(v, 20) for v in values])
