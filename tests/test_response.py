"""Tests of ResponseTime: a response-time distribution known by its LST."""

import math

import mpmath
import numpy as np
import pytest

import queuetheory as qt

# M/M/1 with mu = 1, lam = 0.5: T ~ Exp(0.5) (Kleinrock 1975, eq. 5.105 with B ~ Exp(1)).
RATE = 0.5


@pytest.fixture
def mm1():
    return qt.ResponseTime(lambda s: RATE / (RATE + s), mean=1 / RATE,
                           second_moment=2 / RATE**2)


def test_cdf_sf_ppf_against_exponential(mm1):
    t = np.array([0.1, 1.0, 5.0, 20.0])
    assert np.allclose(mm1.cdf(t), -np.expm1(-RATE * t), rtol=0, atol=1e-10)
    assert np.allclose(mm1.sf(t), np.exp(-RATE * t), rtol=1e-8)
    q = np.array([0.1, 0.5, 0.95, 0.99, 0.9999])
    assert np.allclose(mm1.ppf(q), -np.log1p(-q) / RATE, rtol=1e-9)


def test_negative_times(mm1):
    assert mm1.cdf(-1.0) == 0.0
    assert mm1.sf(-1.0) == 1.0
    assert np.array_equal(mm1.cdf([-2.0, -0.5]), [0.0, 0.0])


def test_high_precision_path(mm1):
    # 30-digit reference: exp(-0.5 * 3) by mpmath.
    ref = float(mpmath.exp(mpmath.mpf(-1.5)))
    assert mm1.sf(3.0, precision=30) == pytest.approx(ref, rel=1e-14)
    assert mm1.ppf(0.99, precision=30) == pytest.approx(math.log(100) / RATE, rel=1e-12)


def test_moments(mm1):
    assert mm1.mean() == 2.0
    assert mm1.moment(2) == 8.0
    # Higher moments from the tail integral: E[T^k] = k!/rate^k.
    for k in (3, 4, 6):
        assert mm1.moment(k) == pytest.approx(math.factorial(k) / RATE**k, rel=1e-7)


def test_second_moment_mg1_against_takacs(facebook_sx):
    # Takacs' recursion for the M/G/1 FCFS wait W: E[W] = lam E[B^2] / (2 (1 - rho)),
    # E[W^2] = 2 E[W]^2 + lam E[B^3] / (3 (1 - rho)); T = W + B with W, B independent.
    lam = 0.7
    B = facebook_sx.replica()
    b1, b2, b3 = B.moment(1), B.moment(2), B.moment(3)
    rho = lam * b1
    w1 = lam * b2 / (2 * (1 - rho))
    w2 = 2 * w1**2 + lam * b3 / (3 * (1 - rho))
    expected = w2 + 2 * w1 * b1 + b2
    T = qt.analyze(qt.System(qt.Random(), facebook_sx, arrival_rate=lam)).response_time
    assert T.moment(2) == pytest.approx(expected, rel=1e-7)


@pytest.mark.slow
def test_heavy_tail_moment_is_inf():
    # IR Pareto(3.5) runtimes: E[B^4] = inf, so the M/G/1 response time has E[T^3] = inf
    # (Takacs: E[W^2] needs E[B^3], E[W^3] needs E[B^4]) while E[T^2] is finite.
    system = qt.System(qt.Random(), qt.IR(qt.Pareto(3.5, 0.4)), arrival_rate=0.5)
    T = qt.analyze(system).response_time
    assert math.isfinite(T.moment(2))
    assert T.moment(3) == math.inf


def test_lst_numpy_and_mpmath(mm1):
    assert complex(mm1.lst(1j)) == pytest.approx(RATE / (RATE + 1j))
    assert mm1.lst(mpmath.mpf(1)) == pytest.approx(RATE / (RATE + 1))


def test_sample_mean_within_ci(mm1):
    # 20k Exp(0.5) draws: standard error 2/sqrt(20000) = 0.0141; 3.3 se bounds a 1e-3 risk.
    draws = mm1.sample(20_000, rng=7)
    assert abs(draws.mean() - 2.0) < 3.3 * 2 / math.sqrt(20_000)
    assert np.all(draws >= 0)


def test_unstable():
    T = qt.ResponseTime.unstable()
    assert not T.stable
    assert T.cdf(10.0) == 0.0 and T.sf(10.0) == 1.0
    assert T.ppf(0.5) == math.inf and T.mean() == math.inf


@pytest.mark.parametrize("q", [0.0, 1.0, -0.1, 2.0])
def test_bad_levels(mm1, q):
    with pytest.raises(ValueError, match="q must lie in the open interval"):
        mm1.ppf(q)


def test_nan_time_rejected(mm1):
    with pytest.raises(ValueError, match="NaN"):
        mm1.cdf(float("nan"))
