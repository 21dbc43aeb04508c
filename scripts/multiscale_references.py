"""The M/G/1 sojourn with far-apart time scales, independently of queuetheory
(tests/test_near_load_one.py::test_far_apart_scales_near_load_one).

``B = X S`` with ``X`` HyperExponential([0.875, 0.125], [2, 0.25]) and ``S`` in {1, 1024} w.p.
{1 - 2^-7, 2^-7}: a hyperexponential with four phases (probabilities ``p_i q_j``, rates
``mu_i / s_j``), so the Pollaczek-Khinchine sojourn transform ``(1 - rho) s B~(s) / (s - lam (1 -
B~(s)))`` is rational. Its tail by partial fractions at 60 digits: ``P(T > t) = sum_r -c_r / r
exp(r t)`` over the roots ``r`` of the denominator (times the phases' factors, less ``s = 0``),
``c_r`` the residues. The arrival rates are the floats ``load / E[B]`` a caller passes.
Prints the quantiles at 0.99 and ``1 - 1e-6`` and the mean.
"""
import mpmath as mp

mp.mp.dps = 60
# probabilities and rates exact in binary: the law is the same in both codes to every digit
# (within 1e-9 of load 1, a probability rounded by 1e-17 moves the tail by 1e-8)
probs = [mp.mpf(a) * mp.mpf(b) for a in (0.875, 0.125) for b in (1 - 2.0 ** -7, 2.0 ** -7)]
rates = [mp.mpf(m) / s for m in (2.0, 0.25) for s in (1, 1024)]
mean = mp.fsum(p / r for p, r in zip(probs, rates))
second = mp.fsum(2 * p / r ** 2 for p, r in zip(probs, rates))


def poly(roots):
    """Coefficients, lowest degree first, of prod (s + r)."""
    c = [mp.mpf(1)]
    for r in roots:
        c = [r * x + y for x, y in zip(c + [0], [0] + c)]
    return c


def add(*polys):
    """The sum of polynomials given lowest degree first, each with its factor: (factor, c)."""
    out = [mp.mpf(0)] * max(len(c) for _, c in polys)
    for factor, c in polys:
        for i, x in enumerate(c):
            out[i] += factor * x
    return out


def value(c, s):
    return mp.fsum(x * s ** i for i, x in enumerate(c))


def reference(lam):
    lam = mp.mpf(lam)
    rho = lam * mean
    prod = poly(rates)                             # prod (s + r_k)
    # B~(s) prod(s) = sum_k p_k r_k prod_{l != k} (s + r_l)
    top = add(*[(p * r, poly(rates[:k] + rates[k + 1:]))
                for k, (p, r) in enumerate(zip(probs, rates))])
    # (s - lam (1 - B~(s))) prod(s) = s prod - lam prod + lam top: its constant term is 0
    den = add((1, [0] + prod), (-lam, prod), (lam, top))
    assert abs(den[0]) < mp.mpf(10) ** -50
    den = den[1:]                                  # divided by s
    roots = mp.polyroots(den[::-1], maxsteps=500, extraprec=500)
    # T~(s) = (1 - rho) top(s) / den(s): residues at the simple roots
    dden = [i * x for i, x in enumerate(den)][1:]
    residues = [(1 - rho) * value(top, r) / value(dden, r) for r in roots]

    def sf(t):
        return mp.re(mp.fsum(-c / r * mp.exp(r * t) for c, r in zip(residues, roots)))

    assert abs(sf(0) - 1) < mp.mpf(10) ** -40
    slowest = max(mp.re(r) for r in roots)
    out = []
    for p in (1 - mp.mpf(0.99), 1 - mp.mpf(1 - 1e-6)):
        out.append(mp.findroot(lambda t, p=p: mp.log(sf(t) / p), mp.log(1 / p) / -slowest))
    return out, mean + lam * second / (2 * (1 - rho))


for load in (0.999, 1 - 1e-9):
    lam = load / float(mean)                       # the float arrival rate the test passes
    quantiles, mean_t = reference(lam)
    print(f"load {load!r}: E[B] = {mp.nstr(mean, 20)}, arrival rate {lam!r}, rho = "
          f"{mp.nstr(lam * mean, 20)}; p99, q(1 - 1e-6):", [mp.nstr(q, 16) for q in quantiles],
          "mean", mp.nstr(mean_t, 16))
