"""Tests of queuetheory.runtime (SX and IR): the law of the fastest of i replicas.

References are computed here: exact enumeration over the 12 Facebook slowdown values (with the
probabilities typed in from the published table), closed forms for exponential / Pareto /
shifted-exponential / uniform minima, scipy quadrature, and seeded samples with z = 3.3 intervals.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from conftest import FACEBOOK_PROBS, FACEBOOK_VALUES
from scipy import integrate, stats

import queuetheory as qt


def _facebook_min_tail(i):
    """P(M_i >= s) for s = 1..12: P(S >= s)^i from the published table."""
    tail = [sum(FACEBOOK_PROBS[j:]) for j in range(12)]
    return [t**i for t in tail]


def _facebook_min_moment(i, k):
    """E[M_i^k] = sum_s (s^k - (s-1)^k) P(M_i >= s) over integer s (M_i >= 1)."""
    return sum((s**k - (s - 1) ** k) * t for s, t in zip(FACEBOOK_VALUES, _facebook_min_tail(i)))


def _facebook_min_pmf(i):
    tail = _facebook_min_tail(i) + [0.0]
    return [tail[j] - tail[j + 1] for j in range(12)]


@pytest.mark.parametrize("i", [1, 2, 3, 5, 10, 20])
def test_sx_fastest_mean_and_second_moment_by_enumeration(facebook_sx, i):
    mu = sum(v * p for v, p in zip(FACEBOOK_VALUES, FACEBOOK_PROBS))  # E[S] = 4.691, X ~ Exp(mu)
    ex1, ex2 = 1 / mu, 2 / mu**2
    fastest = facebook_sx.fastest(i)
    assert fastest.mean() == pytest.approx(ex1 * _facebook_min_moment(i, 1), rel=1e-12)
    assert fastest.moment(2) == pytest.approx(ex2 * _facebook_min_moment(i, 2), rel=1e-12)
    assert facebook_sx.fastest_moment(i, 1) == pytest.approx(ex1 * _facebook_min_moment(i, 1),
                                                             rel=1e-12)
    assert facebook_sx.fastest_moment(i, 3) == pytest.approx(
        6 / mu**3 * _facebook_min_moment(i, 3), rel=1e-12)


def test_sx_fastest_three_matches_docstring_value(facebook_sx):
    # E[X] E[min(S1, S2, S3)] = (1 / 4.691) * 2.139930... by enumeration
    ref = _facebook_min_moment(3, 1) / 4.691
    assert ref == pytest.approx(0.456178, abs=5e-7)
    assert facebook_sx.fastest(3).mean() == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("i", [1, 4])
def test_sx_fastest_cdf_and_lst_by_enumeration(facebook_sx, i):
    mu = 4.691
    pmf = _facebook_min_pmf(i)
    fastest = facebook_sx.fastest(i)
    t = np.array([0.05, 0.3, 1.0, 3.0, 10.0])
    ref_cdf = sum(p * (1 - np.exp(-mu * t / m)) for m, p in zip(FACEBOOK_VALUES, pmf))
    np.testing.assert_allclose(fastest.cdf(t), ref_cdf, rtol=1e-12)
    s = np.array([0.2, 1.0, 2.0 + 3.0j])
    ref_lst = sum(p * mu / (mu + m * s) for m, p in zip(FACEBOOK_VALUES, pmf))
    np.testing.assert_allclose(fastest.lst(s), ref_lst, rtol=1e-12)


def test_sx_replica_and_mean_runtime(facebook_sx):
    assert facebook_sx.mean_runtime() == pytest.approx(1.0, rel=1e-14)  # E[X] E[S] = 1
    assert facebook_sx.replica() is facebook_sx.fastest(1)
    assert facebook_sx.fastest(3) is facebook_sx.fastest(3)  # cached


def test_sx_continuous_slowdown():
    # S ~ U(1, 3): E[min of i] = 1 + 2 / (i + 1); X ~ Erlang(2, 1): E[X] = 2, E[X^2] = 6
    model = qt.SX(qt.Erlang(2, 1.0), qt.Uniform(1.0, 3.0))
    for i in (1, 2, 5):
        assert model.fastest(i).mean() == pytest.approx(2 * (1 + 2 / (i + 1)), rel=1e-9)
        # E[min^2] = int_1^3 2 x ((3 - x) / 2)^i dx + 1 = 1 + 4/(i+1) + 8/((i+1)(i+2))
        m2 = 1 + 4 / (i + 1) + 8 / ((i + 1) * (i + 2))
        assert model.fastest_moment(i, 2) == pytest.approx(6 * m2, rel=1e-9)


def test_sx_accepts_scipy_and_rejects_zero_slowdown():
    model = qt.SX(X=stats.expon(scale=2.0), S=qt.Deterministic(1.5))
    assert model.mean_runtime() == pytest.approx(3.0)
    assert model.fastest(4).mean() == pytest.approx(3.0)  # identical replicas
    with pytest.raises(ValueError, match="S must be > 0"):
        qt.SX(qt.Exponential(1.0), qt.Discrete([0.0, 1.0], [0.5, 0.5]))
    with pytest.raises(ValueError, match="expected a queuetheory distribution"):
        qt.SX("exp", qt.Deterministic(1.0))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_fastest_rejects_bad_i(bad):
    with pytest.raises(ValueError, match="i must be an integer >= 1"):
        qt.IR(qt.Exponential(1.0)).fastest(bad)


def test_ir_exponential():
    model = qt.IR(qt.Exponential(2.0))
    for i in (1, 3, 7):
        assert model.fastest(i).mean() == pytest.approx(1 / (2.0 * i), rel=1e-15)
        assert model.fastest(i).cdf(0.3) == pytest.approx(1 - math.exp(-2.0 * i * 0.3))
    assert model.mean_runtime() == 0.5
    assert model.fastest(np.int64(3)).mean() == pytest.approx(1 / 6)


def test_ir_pareto():
    # min of i Pareto(alpha, c) is Pareto(i alpha, c): mean i alpha c / (i alpha - 1)
    model = qt.IR(qt.Pareto(alpha=0.8, scale=2.0))
    assert model.mean_runtime() == math.inf
    for i in (2, 3):
        a = 0.8 * i
        assert model.fastest(i).mean() == pytest.approx(a * 2.0 / (a - 1), rel=1e-14)
    assert model.fastest_moment(2, 2) == math.inf  # 2 alpha = 1.6 < 2
    assert model.fastest_moment(3, 2) == pytest.approx(2.4 * 4 / 0.4, rel=1e-14)


def test_ir_shifted_exponential_and_erlang():
    model = qt.IR(qt.ShiftedExponential(1.0, 0.5))
    for i in (1, 2, 4):
        assert model.fastest(i).mean() == pytest.approx(1.0 + 1 / (0.5 * i), rel=1e-14)
    # Erlang(3, 1): E[min of i] = int_0^inf sf(t)^i dt by scipy quad
    erl = qt.IR(qt.Erlang(3, 1.0))
    for i in (2, 5):
        ref = integrate.quad(lambda t, i=i: stats.gamma(3).sf(t) ** i, 0, np.inf,
                             epsabs=1e-13, epsrel=1e-12)[0]
        assert erl.fastest(i).mean() == pytest.approx(ref, rel=1e-9)


def test_sample_runtimes_shapes_and_shared_x():
    model = qt.SX(qt.Exponential(1.0), qt.Discrete([1.0, 2.0], [0.5, 0.5]))
    r = model.sample_runtimes(1000, 4, np.random.default_rng(1))
    assert r.shape == (1000, 4) and np.all(r > 0)
    # X is shared within a row: every ratio between replicas of a job is 1, 2 or 1/2
    ratio = r.max(axis=1) / r.min(axis=1)
    assert np.all(np.isclose(ratio, 1.0) | np.isclose(ratio, 2.0))
    ir = qt.IR(qt.Exponential(1.0)).sample_runtimes(1000, 4, np.random.default_rng(1))
    assert ir.shape == (1000, 4)
    assert not np.all(np.isclose(ir.max(axis=1) / ir.min(axis=1), 1.0) |
                      np.isclose(ir.max(axis=1) / ir.min(axis=1), 2.0))


def test_sampled_fastest_matches_law(facebook_sx):
    """Seeded: the mean of the row minimum of sampled runtimes within z = 3.3 standard errors."""
    n, i = 200_000, 3
    for model in (facebook_sx, qt.IR(qt.Erlang(2, 1.0))):
        draws = model.sample_runtimes(n, i, np.random.default_rng(77)).min(axis=1)
        law = model.fastest(i)
        se = math.sqrt((law.moment(2) - law.mean() ** 2) / n)
        assert abs(draws.mean() - law.mean()) < 3.3 * se


# ------------------------------------------------ S&X with continuous slowdowns: the product law
# References by mpmath quadrature (20 digits) over the density of M_i = min(S_1, ..., S_i),
# f_M(m) = i f_S(m) P(S > m)^(i-1), with the closed-form tail and transform of X written here:
#   P(X M > t) = int P(X > t / m) f_M(m) dm,   E[exp(-s X M)] = int lst_X(s m) f_M(m) dm.

def _mp_slowdowns():
    mp = mpmath
    lognormal_sigma = mp.mpf("0.5")

    def erlang_pdf(m):
        return m**2 * mp.exp(-m) / 2

    return {
        "uniform": (qt.Uniform(1.0, 3.0), lambda m: mp.mpf(1) / 2, lambda m: (3 - m) / 2, [1, 3]),
        "exponential": (qt.Exponential(1.0), lambda m: mp.exp(-m), lambda m: mp.exp(-m),
                        [0, 1, 5, mp.inf]),
        "erlang": (qt.Erlang(3, 1.0), erlang_pdf,
                   lambda m: mp.gammainc(3, m, mp.inf, regularized=True), [0, 3, 10, mp.inf]),
        "pareto": (qt.Pareto(2.5, 1.0), lambda m: mp.mpf("2.5") / m**mp.mpf("3.5"),
                   lambda m: m ** mp.mpf("-2.5"), [1, 3, 30, mp.inf]),
        "boundedpareto": (qt.BoundedPareto(1.2, 1.0, 100.0),
                          lambda m: mp.mpf("1.2") * m ** mp.mpf("-2.2") / (1 - mp.mpf(100) ** -1.2),
                          lambda m: (m ** mp.mpf("-1.2") - mp.mpf(100) ** mp.mpf("-1.2"))
                          / (1 - mp.mpf(100) ** mp.mpf("-1.2")), [1, 5, 100]),
        "lognormal": (qt.from_scipy(stats.lognorm(0.5)),
                      lambda m: mp.exp(-mp.log(m) ** 2 / (2 * lognormal_sigma**2))
                      / (m * lognormal_sigma * mp.sqrt(2 * mp.pi)),
                      lambda m: mp.erfc(mp.log(m) / (lognormal_sigma * mp.sqrt(2))) / 2,
                      [0, 1, 4, mp.inf]),
    }


def _mp_job_sizes():
    """(X, P(X > x), lst_X(s), points where P(X > x) jumps or kinks) in mpmath."""
    mp = mpmath
    bp_mass = 1 - (mp.mpf("0.5") / 50) ** mp.mpf("1.5")

    def bp_sf(x):
        x = min(max(x, mp.mpf("0.5")), mp.mpf(50))
        return ((mp.mpf("0.5") / x) ** mp.mpf("1.5") - (mp.mpf("0.5") / 50) ** mp.mpf("1.5")) \
            / bp_mass

    def bp_lst(s):  # alpha lo^alpha s^alpha (Gamma(-alpha, s lo) - Gamma(-alpha, s hi)) / mass
        a = mp.mpf("1.5")
        return a * mp.mpf("0.5") ** a * s**a * mp.gammainc(-a, s / 2, 50 * s) / bp_mass

    return {
        "exponential": (qt.Exponential(1.3), lambda x: mp.exp(-1.3 * x), lambda s: 1.3 / (1.3 + s),
                        []),
        "erlang": (qt.Erlang(2, 2.0), lambda x: mp.exp(-2 * x) * (1 + 2 * x),
                   lambda s: (2 / (2 + s)) ** 2, []),
        "hyperexponential": (qt.HyperExponential([0.9, 0.1], [2.0, 0.25]),
                             lambda x: 0.9 * mp.exp(-2 * x) + 0.1 * mp.exp(-0.25 * x),
                             lambda s: 0.9 * 2 / (2 + s) + 0.1 * 0.25 / (0.25 + s), []),
        "deterministic": (qt.Deterministic(0.7), lambda x: 1 if x < 0.7 else 0,
                          lambda s: mp.exp(-0.7 * s), [0.7]),
        "discrete": (qt.Discrete([0.5, 1.0, 4.0], [0.5, 0.3, 0.2]),
                     lambda x: sum(p for v, p in ((0.5, 0.5), (1, 0.3), (4, 0.2)) if v > x),
                     lambda s: 0.5 * mp.exp(-s / 2) + 0.3 * mp.exp(-s) + 0.2 * mp.exp(-4 * s),
                     [0.5, 1.0, 4.0]),
        "uniform": (qt.Uniform(0.2, 2.0), lambda x: min(max((2 - x) / 1.8, 0), 1),
                    lambda s: (mp.exp(-0.2 * s) - mp.exp(-2 * s)) / (1.8 * s), [0.2, 2.0]),
        "boundedpareto": (qt.BoundedPareto(1.5, 0.5, 50.0), bp_sf, bp_lst, [0.5, 50.0]),
    }


_SX_POINTS = (0.7, 13.0 + 15.0j, 0.4 + 6.0j)   # real, and on Euler contours of Laplace inversion


_X_NAMES = ("exponential", "erlang", "hyperexponential", "deterministic", "discrete", "uniform",
            "boundedpareto")
_S_NAMES = ("uniform", "exponential", "erlang", "pareto", "boundedpareto", "lognormal")
_DEFAULT_SX = {("hyperexponential", "lognormal", 3), ("deterministic", "pareto", 3),
               ("discrete", "erlang", 3), ("uniform", "boundedpareto", 1),
               ("uniform", "exponential", 3), ("exponential", "uniform", 3)}


@pytest.mark.parametrize("x_name, s_name, i", [
    pytest.param(x, s, i, marks=() if (x, s, i) in _DEFAULT_SX else pytest.mark.slow)
    for x in _X_NAMES for s in _S_NAMES for i in (1, 3)])
def test_sx_continuous_slowdown_law_against_mpmath(x_name, s_name, i):
    X, sf_X, lst_X, kinks = _mp_job_sizes()[x_name]
    S, pdf_S, sf_S, breaks = _mp_slowdowns()[s_name]
    model = qt.SX(X, S)
    fastest = model.fastest(i)
    with mpmath.workdps(20):
        def pdf_M(m):
            return i * pdf_S(m) * sf_S(m) ** (i - 1)

        low, high = breaks[0], breaks[-1]
        for t in (0.9, 4.0):
            jumps = sorted({mpmath.mpf(t) / k for k in kinks if low < t / k < high})
            ref = mpmath.quad(lambda m, t=t: sf_X(t / m) * pdf_M(m),
                              sorted(set(breaks) | set(jumps)))
            # documented accuracy of product laws: 1e-12 when one factor's CDF is smooth, 1e-8
            # when both have kinks (bounds of their supports)
            tol = 1e-8 if x_name in ("uniform", "boundedpareto") and s_name in (
                "uniform", "pareto", "boundedpareto") else 1e-12
            assert fastest.sf(t) == pytest.approx(float(ref), abs=tol)
            assert fastest.cdf(t) == pytest.approx(1 - float(ref), abs=tol)
        for s in _SX_POINTS:
            ref = mpmath.quad(lambda m, s=s: lst_X(mpmath.mpmathify(s) * m) * pdf_M(m), breaks)
            assert abs(complex(fastest.lst(s)) - complex(ref)) < 1e-10
    for q in (0.01, 0.5, 0.99):   # quantiles invert the CDF
        x = fastest.ppf(q)
        assert math.isfinite(x) and x > 0
        assert fastest.cdf(x) >= q - 1e-12 and fastest.cdf(x * (1 - 1e-9)) <= q + 1e-12


def test_random_with_continuous_slowdown_distribution_against_mpmath_inversion():
    """M/G/1 (Random) with B = X S, X ~ Exp(1), S ~ Uniform(1, 3): E[B] = 2, lam = 1/4.
    References: Pollaczek-Khinchine transform with B~(s) = E[1/(1 + s S)] = log((1+3s)/(1+s))/(2s)
    in closed form, inverted by mpmath (30 digits):
        mp.dps = 30; lam = mpf(1)/4; rho = 2 * lam
        B = lambda s: log((1 + 3*s) / (1 + s)) / (2*s)
        T = lambda s: (1 - rho) * s * B(s) / (s - lam * (1 - B(s)))
        invertlaplace(lambda s: T(s) / s, t, method='talbot')   for t = 1, 5, 20
    and the mean 2 + lam E[B^2] / (2 (1 - rho)) with E[B^2] = 2 * 13/3: 25/6."""
    system = qt.System(qt.Random(), qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 3.0)),
                       arrival_rate=0.25)
    p = qt.analyze(system)
    assert p.mean == pytest.approx(25 / 6, rel=1e-14)
    refs = {1.0: 0.232654041394020188055385299024, 5.0: 0.704208376133240450789342962757,
            20.0: 0.989213639273147230097058942359}
    for t, ref in refs.items():
        assert p.response_time.cdf(t) == pytest.approx(ref, abs=1e-9)
    # the quantile at the reference CDF value returns the reference time
    assert p.quantile(refs[5.0]) == pytest.approx(5.0, rel=1e-7)


def test_fastest_mixture_of_continuous_slowdowns_skips_zero_weights():
    model = qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 3.0))
    mix = model.fastest_mixture([0.0, 0.25, 0.0, 0.75])
    ref = 0.25 * model.fastest(2).sf(2.0) + 0.75 * model.fastest(4).sf(2.0)
    assert mix.sf(2.0) == pytest.approx(ref, rel=1e-14)
    assert 1 not in model._fastest and 3 not in model._fastest
    with pytest.raises(ValueError, match="weights"):
        model.fastest_mixture([0.0, 0.0])


def test_measured_slowdowns_with_many_values_bounded_memory():
    """50,000 distinct measured slowdowns: the transform of the fastest-of-i law is summed in
    chunks of bounded size (it once built a (points x values) array of several GB)."""
    import tracemalloc

    rng = np.random.default_rng(5)
    S = qt.Discrete.from_samples(1.0 + rng.pareto(3.0, 50_000))
    assert S.values.size == 50_000
    model = qt.SX(qt.Exponential(S.mean()), S)
    law = model.fastest(3)
    s = 0.5 + 1j * np.linspace(0.0, 40.0, 500)
    tracemalloc.start()
    values = law.lst(s)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100e6  # 500 x 50,000 complex numbers would take 400 MB
    # reference: the sum over the atoms of M_3 = min of 3, one point at a time
    M = S.minimum(3)
    for j in (0, 277, 499):
        ref = np.sum(M.probs * S.mean() / (S.mean() + s[j] * M.values))
        assert values[j] == pytest.approx(ref, rel=1e-12)
