"""Numerics of the Redundancy-d mean-field (cavity) solver, against independent closed forms.

Reference values and how they were obtained:
* IR exponential(mu): E[T] = (1/mu) sum_n rho^n / (n (d-1) + d) summed with mpmath.nsum at 30
  digits; P(U + R > t) = (rho + (1-rho) e^{(d-1) mu t})^{-1/(d-1)}, busy fraction rho and
  frontier mu (Gardner et al. 2017; busy fraction and cost derived in analysis/redundancy.py).
* d = 1: the M/G/1 Pollaczek-Khinchine mean E[B] + lam E[B^2] / (2 (1 - rho)) written out
  here from the moments (not through queuetheory.mg1).
"""

import mpmath
import numpy as np
import pytest

import queuetheory as qt
from queuetheory.analysis import meanfield


def _ir_exponential_mean_mp(lam, mu, d):
    rho = mpmath.mpf(lam) / mu
    with mpmath.workdps(30):
        return float(mpmath.nsum(lambda n: rho**n / (n * (d - 1) + d), [0, mpmath.inf]) / mu)


@pytest.mark.parametrize(("d", "lam"), [(2, 0.5), (3, 0.9), (10, 0.7)])
def test_ir_exponential_mean_reproduced(d, lam):
    model = qt.IR(qt.Exponential(1.0))
    fine, mean, error = meanfield.solve_extrapolated(model, d, lam, points=300)
    exact = _ir_exponential_mean_mp(lam, 1.0, d)
    # the N-point mean is O(h^2) accurate: its reported error estimate must bound its error
    assert abs(fine.mean - exact) < 1.5 * error
    # the Richardson-extrapolated mean is much closer (measured ~1e-6 relative)
    assert abs(mean - exact) < 2e-5 * exact
    assert abs(fine.busy_fraction - lam) < 2e-4


def test_ir_exponential_tail_reproduced():
    lam, d = 0.8, 3
    sol = meanfield.solve(qt.IR(qt.Exponential(1.0)), d, lam, points=800)
    t = sol.grid[sol.grid < 6.0]
    exact = (lam + (1 - lam) * np.exp((d - 1) * t)) ** (-d / (d - 1))   # P(T > t)
    assert np.max(np.abs(sol.response_sf[: t.size] - exact)) < 2e-4


def test_mg1_pollaczek_khinchine_at_d1():
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    lam = 0.5
    m1 = 1.0                                     # E[X] E[S]
    m2 = 2.0 / S.mean() ** 2 * 31.555            # E[X^2] E[S^2], X exponential
    pk = m1 + lam * m2 / (2 * (1 - lam * m1))
    _, mean, _ = meanfield.solve_extrapolated(model, 1, lam, points=300)
    assert abs(mean - pk) < 1e-3 * pk


def test_discretisation_is_second_order():
    # halving h divides the error of the mean by ~4 (measured on IR exponential)
    model, d, lam = qt.IR(qt.Exponential(1.0)), 3, 0.6
    exact = _ir_exponential_mean_mp(lam, 1.0, d)
    errors = [abs(meanfield.solve(model, d, lam, points=n, length=16.0).mean - exact)
              for n in (400, 800)]
    assert 3.5 < errors[0] / errors[1] < 4.5


@pytest.mark.parametrize("d", [2, 4])
def test_frontier_ir_exponential_is_mu(d):
    # computed by the mean-field continuation, not the closed-form shortcut
    lam_star, error = meanfield.frontier_extrapolated(qt.IR(qt.Exponential(2.0)), d,
                                                      points=200)
    assert abs(lam_star - 2.0) < 1e-4
    assert error < 1e-3


def test_busy_fraction_continuation_is_monotone():
    # lam(b) increases with b towards the frontier: the criterion "stable iff lam < lam*"
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    rates, sol = [], None
    for b in (0.3, 0.6, 0.9, 0.95):
        sol = meanfield.arrival_rate_at_busy_fraction(model, 5, b, points=200, start=sol)
        rates.append(sol.arrival_rate)
    assert np.all(np.diff(rates) > 0)


def test_solve_beyond_frontier_raises():
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    with pytest.raises(meanfield.MeanFieldError):
        meanfield.solve(model, 10, 0.8, points=100)


def _pk(model, lam):
    m1, m2 = model.mean_runtime(), model.fastest_moment(1, 2)
    return m1 + lam * m2 / (2 * (1 - lam * m1))


def test_product_integration_reproduces_pollaczek_khinchine():
    model, lam = qt.IR(qt.Erlang(2, 2.0)), 0.6            # continuous runtimes
    _, mean, _ = meanfield.solve_extrapolated(model, 1, lam, points=300)
    assert abs(mean - _pk(model, lam)) < 2e-4 * _pk(model, lam)


def test_continuous_x_and_s_reproduce_pollaczek_khinchine():
    # continuous X and continuous S: tanh-sinh nodes over X, product integration over S. Less
    # accurate (measured 8e-4 relative): for small x the law of x S lies inside one grid cell
    # and its tail is integrated by the trapezoidal rule. Tolerance fixed before measuring.
    model, lam = qt.SX(X=qt.Exponential(2.0), S=qt.Uniform(1.0, 3.0)), 0.6
    _, mean, _ = meanfield.solve_extrapolated(model, 1, lam, points=300)
    assert abs(mean - _pk(model, lam)) < 2e-3 * _pk(model, lam)
