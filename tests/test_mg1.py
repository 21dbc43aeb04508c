"""Tests of queuetheory.mg1: Pollaczek-Khinchine and the M/G/1 with exceptional first service.

References: M/M/1 and M/D/1 closed forms; the plain M/G/1 as a special case of the efs queue; and
a continuous-time Markov chain (CTMC) of the M/M/1 with an exceptional exponential first service
and different arrival rates while idle and while busy, solved numerically with numpy on a
truncated state space -- a derivation independent of the renewal-reward formulas in the code.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import queuetheory as qt
from queuetheory import mg1

# --------------------------------------------------------------------------- Pollaczek-Khinchine


@pytest.mark.parametrize("lam, mu", [(0.5, 1.0), (0.1, 3.0), (2.9, 3.0)])
def test_pk_mean_mm1(lam, mu):
    assert mg1.pk_mean(lam, qt.Exponential(mu)) == pytest.approx(1 / (mu - lam), rel=1e-13)


@pytest.mark.parametrize("lam, D", [(0.5, 1.0), (0.9, 1.0), (0.2, 3.0)])
def test_pk_mean_md1(lam, D):
    rho = lam * D
    ref = D + rho * D / (2 * (1 - rho))  # M/D/1: W = rho D / (2 (1 - rho))
    assert mg1.pk_mean(lam, qt.Deterministic(D)) == pytest.approx(ref, rel=1e-13)


def test_pk_mean_mek1():
    # M/E_k/1 with E[B] = 1: W = rho (1 + 1/k) / (2 (1 - rho))
    for k in (2, 5):
        ref = 1 + 0.6 * (1 + 1 / k) / (2 * 0.4)
        assert mg1.pk_mean(0.6, qt.Erlang(k, float(k))) == pytest.approx(ref, rel=1e-13)


def test_pk_mean_unstable_and_heavy_tail():
    assert mg1.pk_mean(1.0, qt.Exponential(1.0)) == math.inf
    assert mg1.pk_mean(2.0, qt.Exponential(1.0)) == math.inf
    assert mg1.pk_mean(0.1, qt.Pareto(1.5, 1.0)) == math.inf  # E[B^2] = inf, rho = 0.3
    assert mg1.pk_mean(0.1, qt.Pareto(2.5, 1.0)) == pytest.approx(
        2.5 / 1.5 + 0.1 * 5.0 / (2 * (1 - 0.1 * 2.5 / 1.5)), rel=1e-13)
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="arrival_rate must be a finite number > 0"):
            mg1.pk_mean(bad, qt.Exponential(1.0))


def test_pk_lst_mm1(mp30):
    lam, mu = 0.5, 1.25
    T = mg1.pk_lst(lam, qt.Exponential(mu))
    s = np.array([0.0, 1e-3, 0.3, 2.0, 1.0 + 2.0j, 0.01 - 5.0j])
    np.testing.assert_allclose(T(s), (mu - lam) / (mu - lam + s), rtol=1e-12)
    assert T(0.0) == 1.0
    sm = mpmath.mpc("0.5", "0.25")
    ref = (mpmath.mpf(mu) - lam) / (mpmath.mpf(mu) - lam + sm)
    # the mp path uses rho = lam E[B] in double precision, so agreement is to ~1e-16 only
    assert abs(T(sm) - ref) < mpmath.mpf("1e-15")
    assert T(mpmath.mpf(0)) == 1


_PK_LAWS = {
    # (law, its LST in mpmath, its mean exactly), probabilities exact in binary
    "exp": (qt.Exponential(1.25), lambda s: 1.25 / (1.25 + s), 1 / mpmath.mpf(1.25)),
    "det": (qt.Deterministic(1.0), lambda s: mpmath.exp(-s), mpmath.mpf(1)),
    "erlang": (qt.Erlang(3, 4.0), lambda s: (4 / (4 + s)) ** 3, mpmath.mpf(3) / 4),
    "h2": (qt.HyperExponential([0.25, 0.75], [0.25, 2.5]),
           lambda s: 0.25 * 0.25 / (0.25 + s) + 0.75 * 2.5 / (2.5 + s), 1 + 0.75 / mpmath.mpf(2.5)),
    "uniform": (qt.Uniform(1.0, 2.0), lambda s: (mpmath.exp(-s) - mpmath.exp(-2 * s)) / s,
                mpmath.mpf(1.5)),
    "mixed": (qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5]),
              lambda s: (mpmath.exp(-s) + 1 / (1 + s)) / 2, mpmath.mpf(1)),
}


@pytest.mark.parametrize("rho", [0.3, 0.9])
@pytest.mark.parametrize("name", list(_PK_LAWS))
def test_pk_lst_keeps_precision_near_zero(name, rho):
    # (1 - rho) s B~(s) / (s - lam (1 - B~(s))) from the law's closed-form LST at 40 digits:
    # computed directly, 1 - B~(s) cancels at |s| E[B] << 1 and the transform, which decides
    # the far tail, lost eps / (|s| (1 - rho)) relative (7.5e-7 at s = 1e-10, load 0.9); the
    # remainder psi(s) = B~(s) - 1 + s E[B] now serves at every load (rounding at most 1e-12
    # relative beyond its series' radius; measured at most 5.1e-16 here)
    law, lst, mean = _PK_LAWS[name]
    lam = rho / float(mean)
    s = np.array([1e-10, 1e-6, 1e-3 + 2e-3j, 0.5 + 3j, 1e-4 + 30j])
    got = mg1.pk_lst(lam, law)(s)
    with mpmath.workdps(40):
        r = mpmath.mpf(lam) * mean
        for z, value in zip(s, got):
            z = mpmath.mpc(z)
            ref = (1 - r) * z * lst(z) / (z - lam * (1 - lst(z)))
            assert abs(value - ref) <= 1e-12 * abs(ref), z


def test_pk_lst_md1_mean_by_differentiation(mp30):
    # -T'(0) must equal the P-K mean; derivative by mpmath at 30 digits on the mp path
    T = mg1.pk_lst(0.5, qt.Deterministic(1.0))
    deriv = mpmath.diff(lambda s: T(s), mpmath.mpf("1e-12"))
    assert float(-deriv) == pytest.approx(1.0 + 0.5 / (2 * 0.5), rel=1e-9)


def test_pk_lst_unstable_raises():
    with pytest.raises(ValueError, match="must be < 1"):
        mg1.pk_lst(1.0, qt.Exponential(1.0))


# ------------------------------------------------------------- efs: plain M/G/1 as special case


@pytest.mark.parametrize("B", [qt.Exponential(1.0), qt.Deterministic(0.8), qt.Erlang(3, 4.0),
                               qt.HyperExponential([0.2, 0.8], [0.25, 2.5])],
                         ids=["exp", "det", "erlang", "hyperexp"])
def test_efs_reduces_to_mg1(B, mp30):
    lam = 0.6
    rho = lam * B.mean()
    assert mg1.efs_busy_fraction(lam, lam, B, B) == pytest.approx(rho, rel=1e-13)
    # an arrival finds the M/G/1 busy w.p. rho (PASTA) and idle w.p. 1 - rho (then T = B):
    # E[T | busy] = (E[T] - (1 - rho) E[B]) / rho, with E[T] from P-K
    b1, b2 = B.mean(), B.moment(2)
    pk = b1 + lam * b2 / (2 * (1 - rho))
    ref_busy_mean = (pk - (1 - rho) * b1) / rho
    assert mg1.efs_busy_response_mean(lam, B, B) == pytest.approx(ref_busy_mean, rel=1e-12)
    # same for the transform: T~(s) = (1 - rho) B~(s) + rho T~_busy(s), T~ from P-K written here
    busy = mg1.efs_busy_response_lst(lam, B, B)
    for s in (0.4, 2.0 + 1.0j, mpmath.mpc("0.3", "-2")):
        bs = B.lst(s)
        pk_lst = (1 - rho) * s * bs / (s - lam * (1 - bs))
        ref = (pk_lst - (1 - rho) * bs) / rho
        assert abs(complex(busy(s)) - complex(ref)) < 1e-12
    assert busy(0.0) == 1.0


# ------------------------------------------------------------------- efs: CTMC reference (M/M/1)


def _efs_ctmc(lam_idle, lam_busy, first_rates, first_probs, mu, n_max=150):
    """Stationary law of the M/M/1 whose busy periods start with an exceptional first service.

    States: 0 (idle) and (n, phase) with n >= 1 jobs, phase j = 0..J-1 the exceptional service
    Exp(first_rates[j]) chosen with first_probs[j], or phase J = ordinary service Exp(mu).
    Returns (pi0, pi[n, phase]) for n = 1..n_max.
    """
    rates = list(first_rates) + [mu]
    n_ph = len(rates)
    size = 1 + n_max * n_ph

    def idx(n, ph):
        return 1 + (n - 1) * n_ph + ph

    Q = np.zeros((size, size))
    for j, p in enumerate(first_probs):
        Q[0, idx(1, j)] += lam_idle * p
    for n in range(1, n_max + 1):
        for ph, r in enumerate(rates):
            here = idx(n, ph)
            if n < n_max:
                Q[here, idx(n + 1, ph)] += lam_busy
            Q[here, 0 if n == 1 else idx(n - 1, n_ph - 1)] += r
    np.fill_diagonal(Q, -Q.sum(axis=1))
    # pi Q = 0 with one balance equation replaced by sum(pi) = 1 (the truncation at n_max loses
    # mass (lam_busy / min rate)^n_max <= 0.5^150, far below double precision)
    A = Q.T.copy()
    A[-1, :] = 1.0
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    pi = np.linalg.solve(A, rhs)
    return pi[0], pi[1:].reshape(n_max, n_ph), np.array(rates)


def _ctmc_busy_response(pi_busy, rates, mu, s=None):
    """E[T] (or E[exp(-s T)]) of an arrival that finds the server busy in state (n, phase):
    residual of the current service Exp(rate of phase) + (n - 1) ordinary services + its own."""
    n = np.arange(1, pi_busy.shape[0] + 1)[:, None]
    w = pi_busy / pi_busy.sum()
    if s is None:
        return float(np.sum(w * (1 / rates[None, :] + n / mu)))
    return complex(np.sum(w * rates / (rates + s) * (mu / (mu + s)) ** n))


@pytest.mark.parametrize("lam_idle, lam_busy, mu_e, mu", [
    (0.9, 0.3, 2.5, 1.0),   # fast first service, many idle-time arrivals
    (0.2, 0.5, 0.4, 1.0),   # slow first service
    (1.7, 0.05, 1.0, 0.8),
])
def test_efs_against_ctmc(lam_idle, lam_busy, mu_e, mu):
    pi0, pi, rates = _efs_ctmc(lam_idle, lam_busy, [mu_e], [1.0], mu)
    Be, B = qt.Exponential(mu_e), qt.Exponential(mu)
    assert mg1.efs_busy_fraction(lam_idle, lam_busy, Be, B) == pytest.approx(1 - pi0, rel=1e-10)
    assert mg1.efs_busy_response_mean(lam_busy, Be, B) == pytest.approx(
        _ctmc_busy_response(pi, rates, mu), rel=1e-10)
    T = mg1.efs_busy_response_lst(lam_busy, Be, B)
    for s in (0.3, 1.5 + 2.0j):
        assert abs(complex(T(s)) - _ctmc_busy_response(pi, rates, mu, s)) < 1e-10


def test_efs_mixture_first_service_against_ctmc():
    """First service a mixture of exponentials (the RIQ first service under IR exponential)."""
    Be = qt.HyperExponential([0.2, 0.5, 0.3], [1.0, 2.0, 3.0])
    pi0, pi, rates = _efs_ctmc(1.2, 0.35, [1.0, 2.0, 3.0], [0.2, 0.5, 0.3], 1.0)
    B = qt.Exponential(1.0)
    assert mg1.efs_busy_fraction(1.2, 0.35, Be, B) == pytest.approx(1 - pi0, rel=1e-10)
    assert mg1.efs_busy_response_mean(0.35, Be, B) == pytest.approx(
        _ctmc_busy_response(pi, rates, 1.0), rel=1e-10)


def test_efs_edge_cases():
    B = qt.Exponential(1.0)
    assert mg1.efs_busy_fraction(0.5, 1.0, B, B) == 1.0  # rho_B = 1: never empties
    assert mg1.efs_busy_response_mean(1.0, B, B) == math.inf
    with pytest.raises(ValueError, match="must be < 1"):
        mg1.efs_busy_response_lst(1.5, B, B)
    # busy_rate = 0: busy periods are single exceptional services, b = x / (1 + x), x = lam E[Be]
    assert mg1.efs_busy_fraction(2.0, 0.0, qt.Deterministic(0.5), B) == pytest.approx(0.5)
    assert mg1.efs_busy_response_mean(0.0, qt.Deterministic(0.5), B) == pytest.approx(0.25 + 1.0)
    assert mg1.efs_busy_response_mean(0.2, qt.Pareto(1.5, 1.0), B) == math.inf  # E[Be^2] = inf
    # busy_rate = 0 and E[B^2] = inf: no one arrives while busy, so the wait is the excess of
    # Be only: E[Be^2] / (2 E[Be]) + E[B] = 0.25 + 3 (this was NaN: 0 * inf)
    assert mg1.efs_busy_response_mean(0.0, qt.Deterministic(0.5), qt.Pareto(1.5, 1.0)
                                      ) == pytest.approx(3.25)
    with pytest.raises(ValueError, match="idle_rate must be a finite number > 0"):
        mg1.efs_busy_fraction(0.0, 0.5, B, B)
    with pytest.raises(ValueError, match="busy_rate must be a finite number >= 0"):
        mg1.efs_busy_fraction(1.0, -0.5, B, B)


def test_summed_remainder_only_for_few_parts():
    # each part of mg1._SummedRemainder costs about a transform of the whole law: Random with
    # runtimes on 5000 lognormal atoms took 63 s for a p50 and a p99 (3.4 s with the series);
    # a law on more than 64 atoms keeps the series (or the direct form)
    rng = np.random.default_rng(3)
    many = qt.Discrete(rng.lognormal(0.0, 1.5, 5000), rng.dirichlet(np.ones(5000)))
    assert not isinstance(mg1._Remainder.of(many), mg1._SummedRemainder)
    few = qt.Discrete([1.0, 1000.0], [0.99, 0.01])      # far apart: the series rounds badly
    psi = mg1._Remainder.of(few)
    assert isinstance(psi, mg1._SummedRemainder)
    s = np.array([1e-7, 1e-4 + 3e-4j, 0.2 + 1j])
    with mpmath.workdps(40):
        for z, value in zip(s, psi(s)):
            z = mpmath.mpc(z)
            ref = mpmath.fsum(p * (mpmath.exp(-z * v) - 1 + z * v)
                              for v, p in ((1, mpmath.mpf(0.99) / (mpmath.mpf(0.99) + 0.01)),
                                           (1000, mpmath.mpf(0.01) / (mpmath.mpf(0.99) + 0.01))))
            assert abs(value - ref) <= 1e-13 * abs(ref)
