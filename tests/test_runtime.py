"""Tests of queuetheory.runtime (SX and IR): the law of the fastest of i replicas.

References are computed here: exact enumeration over the 12 Facebook slowdown values (with the
probabilities typed in from the published table), closed forms for exponential / Pareto /
shifted-exponential / uniform minima, scipy quadrature, and seeded samples with z = 3.3 intervals.
"""

from __future__ import annotations

import math

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
