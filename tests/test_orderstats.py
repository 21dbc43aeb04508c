"""Tests of queuetheory.orderstats.

Reference values: closed forms of uniform and exponential order statistics (Beta moments,
Renyi harmonic sums, evaluated with exact rationals), mpmath at 30-50 digits (regularised
incomplete beta, inclusion-exclusion over all subsets for small non-identical sets, quadrature of
the survival function), exhaustive enumeration for discrete laws, and seeded Monte Carlo with a
stated confidence interval.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import queuetheory as qt
from queuetheory.orderstats import (
    OrderStatistic,
    exponential_mean,
    harmonic,
    iid_cdf,
    iid_sf,
    smallest_sum_mean,
)


# ----------------------------------------------------------------------------- identical, closed
@pytest.mark.parametrize("r", [1, 2, 300, 999, 1000])
def test_uniform_moments_n1000(r):
    # U_(r) ~ Beta(r, n - r + 1): E = r/(n+1), E[U^2] = r(r+1)/((n+1)(n+2))
    n = 1000
    X = OrderStatistic(qt.Uniform(0.0, 1.0), r, n)
    assert X.mean() == pytest.approx(r / (n + 1), rel=1e-10)
    assert X.moment(2) == pytest.approx(r * (r + 1) / ((n + 1) * (n + 2)), rel=1e-10)


@pytest.mark.parametrize("r,n", [(1, 1000), (500, 1000), (1000, 1000), (3, 7)])
def test_exponential_renyi_forms(r, n):
    rate = 2.5
    c = [Fraction((n - j) * 5, 2) for j in range(r)]  # (n - j) * rate, exact
    mean = float(sum(1 / x for x in c))
    var = float(sum(1 / x**2 for x in c))
    X = OrderStatistic(qt.Exponential(rate), r, n)
    assert X.mean() == pytest.approx(mean, rel=1e-14)
    assert X.var() == pytest.approx(var, rel=1e-10)
    assert exponential_mean(r, n, rate) == pytest.approx(mean, rel=1e-14)
    # the general quadrature path (Erlang(1) is the same law, not recognised as exponential)
    Y = OrderStatistic(qt.Erlang(1, rate), r, n)
    assert Y.mean() == pytest.approx(mean, rel=1e-9)
    assert Y.moment(2) == pytest.approx(var + mean**2, rel=1e-9)


def test_exponential_third_moment_and_lst_mpmath(mp30):
    # sum of independent Exp(c_j): third moment by mpmath differentiation of the product LST
    r, n, rate, shift = 3, 5, 1.0, 0.5
    rates = [(n - j) * rate for j in range(r)]

    def lst(s):
        out = mpmath.exp(-s * shift)
        for a in rates:
            out *= a / (a + s)
        return out

    third = -mpmath.diff(lst, 0, 3)
    X = OrderStatistic(qt.ShiftedExponential(shift, rate), r, n)
    assert X.moment(3) == pytest.approx(float(third), rel=1e-10)
    assert X.mean() == pytest.approx(shift + 1 / 5 + 1 / 4 + 1 / 3, rel=1e-14)
    assert complex(X.lst(mpmath.mpf("0.7"))).real == pytest.approx(float(lst(0.7)), rel=1e-14)


def test_harmonic():
    assert harmonic(10) == pytest.approx(float(sum(Fraction(1, j) for j in range(1, 11))),
                                         rel=1e-15)
    assert harmonic(0) == 0.0


# ----------------------------------------------------------------------------- identical, mpmath
def test_cdf_sf_against_mpmath_betainc():
    n, r = 1000, 990
    base = qt.Exponential(1.0)
    X = OrderStatistic(base, r, n)
    t = np.array([2.0, 5.0, 8.0, 12.0, 30.0])
    with mpmath.workdps(50):
        cdf = [float(mpmath.betainc(r, n - r + 1, 0, 1 - mpmath.exp(-v), regularized=True))
               for v in t]
        sf = [float(mpmath.betainc(n - r + 1, r, 0, mpmath.exp(-v), regularized=True))
              for v in t]
    np.testing.assert_allclose(X.cdf(t), cdf, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(X.sf(t), sf, rtol=1e-10)   # tail values down to ~1e-100


def test_max_tail_keeps_relative_accuracy():
    # P(max of 1000 Exp(1) > 40) = 1 - (1 - e^-40)^1000, mpmath at 50 digits (~4.25e-15)
    with mpmath.workdps(50):
        expected = float(1 - (1 - mpmath.exp(-40)) ** 1000)
    assert OrderStatistic(qt.Exponential(1.0), 1000, 1000).sf(40.0) == pytest.approx(
        expected, rel=1e-12)
    assert float(iid_sf(1000, 1000, math.exp(-40.0))) == pytest.approx(expected, rel=1e-12)
    assert float(iid_cdf(1, 2, 0.5)) == pytest.approx(0.75, rel=1e-15)


def test_weibull_mean_against_mpmath_quadrature(mp30):
    from scipy import stats

    n, r, c = 200, 150, 0.7
    X = OrderStatistic(qt.from_scipy(stats.weibull_min(c)), r, n)

    def sf(t):
        return mpmath.betainc(n - r + 1, r, 0, mpmath.exp(-(t**c)), regularized=True)

    expected = mpmath.quad(sf, [0, 0.5, 1, 2, 4, 8, 16, mpmath.inf])
    assert X.mean() == pytest.approx(float(expected), rel=1e-9)


def test_pdf_and_quantiles_uniform():
    # U_(r) has the Beta(r, n - r + 1) density; quantiles from mpmath root finding
    n, r = 50, 10
    X = OrderStatistic(qt.Uniform(0.0, 1.0), r, n)
    x = np.array([0.05, 0.2, 0.4])
    with mpmath.workdps(30):
        dens = [float(mpmath.mpf(v) ** (r - 1) * (1 - mpmath.mpf(v)) ** (n - r)
                      / mpmath.beta(r, n - r + 1)) for v in x]
        q99 = float(mpmath.findroot(lambda v: mpmath.betainc(r, n - r + 1, 0, v,
                                                             regularized=True) - 0.99,
                                    (0.1, 0.6), solver="illinois"))
    np.testing.assert_allclose(X.pdf(x), dens, rtol=1e-11)
    assert X.ppf(0.99) == pytest.approx(q99, rel=1e-11)
    assert X.cdf(X.ppf(0.3)) == pytest.approx(0.3, rel=1e-12)


def test_pareto_moments_and_divergence():
    # max of 3 Pareto(1.5, 1): E = 1 + int_1^inf (3 t^-1.5 - 3 t^-3 + t^-4.5) dt
    #                            = 1 + 6 - 3/2 + 1/3.5
    X = OrderStatistic(qt.Pareto(1.5, 1.0), 3, 3)
    assert X.mean() == pytest.approx(1 + 6 - 1.5 + 1 / 3.5, rel=1e-9)
    assert X.moment(2) == math.inf
    # min of 3: Pareto(4.5, 1): E[X^k] = 4.5 / (4.5 - k)
    Y = OrderStatistic(qt.Pareto(1.5, 1.0), 1, 3)
    assert Y.moment(4) == pytest.approx(9.0, rel=1e-9)
    assert Y.moment(5) == math.inf


def test_discrete_against_enumeration():
    S = qt.Discrete([1.0, 2.0, 4.0], [0.5, 0.3, 0.2])
    n, r = 4, 2
    mean = second = 0.0
    for combo in itertools.product(range(3), repeat=n):
        p = math.prod(S.probs[i] for i in combo)
        v = sorted(S.values[i] for i in combo)[r - 1]
        mean += p * v
        second += p * v * v
    X = OrderStatistic(S, r, n)
    assert X.mean() == pytest.approx(mean, rel=1e-13)
    assert X.moment(2) == pytest.approx(second, rel=1e-13)


# ----------------------------------------------------------------------------- non-identical
def _inclusion_exclusion_sf(dists, r, t):
    """mpmath (50 digits): P(fewer than r of the variables are <= t), summed over all subsets."""
    with mpmath.workdps(50):
        F = [mpmath.mpf(float(d.cdf(t))) for d in dists]
        total = mpmath.mpf(0)
        for size in range(r):
            for subset in itertools.combinations(range(len(dists)), size):
                total += mpmath.fprod(F[i] if i in subset else 1 - F[i]
                                      for i in range(len(dists)))
        return float(total)


def test_poisson_binomial_against_enumeration():
    dists = [qt.Exponential(1.0), qt.Erlang(2, 3.0), qt.Uniform(0.2, 1.5), qt.Exponential(0.3),
             qt.ShiftedExponential(0.1, 2.0), qt.Pareto(2.0, 0.5)]
    for r in (1, 3, 6):
        X = OrderStatistic(dists, r)
        for t in (0.3, 0.9, 2.5):
            expected = _inclusion_exclusion_sf(dists, r, t)
            assert X.sf(t) == pytest.approx(expected, rel=1e-12)
            assert X.cdf(t) == pytest.approx(1 - expected, rel=1e-12, abs=1e-15)


def test_non_identical_exponential_means():
    # max of Exp(a), Exp(b): 1/a + 1/b - 1/(a+b); min of Exp(a_i): 1/sum a_i
    X = OrderStatistic([qt.Exponential(1.0), qt.Exponential(2.0)], 2)
    assert X.mean() == pytest.approx(1 + 0.5 - 1 / 3, rel=1e-10)
    rates = [1.0 + 0.01 * i for i in range(1000)]
    Y = OrderStatistic([qt.Exponential(a) for a in rates], 1)
    assert Y.mean() == pytest.approx(1 / math.fsum(rates), rel=1e-9)


def test_non_identical_pdf_against_enumeration():
    # f_(r)(t) = sum_i f_i(t) P(exactly r - 1 of the others are <= t), by enumerating subsets
    dists = [qt.Exponential(1.0), qt.Erlang(2, 3.0), qt.Exponential(0.5), qt.Uniform(0.0, 4.0)]
    r = 2
    X = OrderStatistic(dists, r)
    for t in (0.2, 1.0, 3.0):
        F = [float(d.cdf(t)) for d in dists]
        expected = 0.0
        for i, d in enumerate(dists):
            others = [j for j in range(len(dists)) if j != i]
            for subset in itertools.combinations(others, r - 1):
                expected += float(d.pdf(t)) * math.prod(F[j] if j in subset else 1 - F[j]
                                                        for j in others)
        assert X.pdf(t) == pytest.approx(expected, rel=1e-12)


def test_non_identical_median_n1000_against_monte_carlo():
    # 2000 seeded draws; tolerance z = 3.3 standard errors (two-sided 1e-3)
    rates = np.array([1.0 + 0.01 * i for i in range(1000)])
    X = OrderStatistic([qt.Exponential(a) for a in rates], 500)
    rng = np.random.default_rng(7)
    draws = np.partition(rng.exponential(1.0 / rates, (2000, 1000)), 499, axis=1)[:, 499]
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(X.mean() - draws.mean()) <= 3.3 * se


def test_sampling_matches_mean():
    X = OrderStatistic(qt.Uniform(0.0, 1.0), 3, 10)
    draws = X.sample(20000, rng=3)
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(draws.mean() - 3 / 11) <= 3.3 * se
    Y = OrderStatistic([qt.Uniform(0.0, 1.0), qt.Uniform(0.0, 2.0)], 1)
    draws = Y.sample(20000, rng=4)
    # E[min(U1, U2)] = int_0^1 (1 - t)(1 - t/2) dt = 1 - 3/4 + 1/6 = 5/12
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(draws.mean() - 5 / 12) <= 3.3 * se


# ----------------------------------------------------------------------------- validation
def test_bad_input():
    with pytest.raises(ValueError, match="r must be an integer in"):
        OrderStatistic(qt.Exponential(1.0), 4, 3)
    with pytest.raises(ValueError, match="n"):
        OrderStatistic(qt.Exponential(1.0), 1)
    with pytest.raises(ValueError, match="at least one"):
        OrderStatistic([], 1)
    with pytest.raises(ValueError, match="n must equal"):
        OrderStatistic([qt.Exponential(1.0)] * 2, 1, 3)
    with pytest.raises(ValueError, match="r"):
        OrderStatistic(qt.Exponential(1.0), 0, 3)


@pytest.mark.parametrize("law, count, of, exact", [
    # E[U_(r:N)] = r / (N + 1) for uniform laws: sum over r <= n of a + (b - a) r / (N + 1)
    (qt.Uniform(1.0, 3.0), 3, 5, 3 + 2 * 6 / 6),
    (qt.Uniform(0.0, 2.0), 20, 30, 2 * 210 / 31),
    # Pareto(alpha, c): E[X_(r:N)] = c G(N + 1) G(N - r + 1 - 1/alpha) / (G(N - r + 1)
    # G(N + 1 - 1/alpha)), summed in mpmath at 30 digits (below)
    (qt.Pareto(2.5, 1.0), 4, 6, None),
    (qt.Pareto(1.5, 2.0), 10, 10, None),
])
def test_smallest_sum_mean_against_closed_forms(law, count, of, exact):
    # one integral of sum_j P(Bin(N, F(t)) <= j) instead of `count` order-statistic means
    # (the removal analysis's necessary rate); references in closed form
    if exact is None:
        with mpmath.workdps(30):
            a, c = mpmath.mpf(law.alpha), mpmath.mpf(law.scale)
            exact = float(mpmath.fsum(
                c * mpmath.gamma(of + 1) * mpmath.gamma(of - r + 1 - 1 / a)
                / (mpmath.gamma(of - r + 1) * mpmath.gamma(of + 1 - 1 / a))
                for r in range(1, count + 1)))
    assert smallest_sum_mean(law, count, of) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("count, of, message", [(0, 3, "count"), (4, 3, "count"),
                                                (2.5, 3, "count"), (1, 0, "of")])
def test_smallest_sum_mean_bad_input(count, of, message):
    with pytest.raises(ValueError, match=message):
        smallest_sum_mean(qt.Uniform(1.0, 3.0), count, of)
