"""Redundancy-d and THRESHOLD-n analysis: closed forms, handlers, frontier, simulation checks.

Reference values and how they were obtained:
* IR exponential k -> infinity mean: mpmath.nsum of (1/mu) sum_n rho^n / (n (d-1) + d) at 30
  digits, and the d = 2 closed form (-ln(1-rho) - rho) / (mu rho^2) (Gardner et al. 2017).
* Finite k: k = d is an M/M/1 queue with arrival rate d lam and service rate d mu (every job
  runs on all d servers, which stay in lockstep): E[T] = 1 / (d (mu - lam)).
* Simulations: an independent exact event-by-event simulator written below (docs/theory/
  model.rst, eq. model-state: per-server free-at times V_j, completion C = min_j f_j, every
  polled server
  becomes max(s_j, min(f_j, C))), seeded, with batch-means standard errors; tolerances are
  z = 3.3 standard errors (two-sided 1e-3) plus the stated finite-k allowance.
"""

import math
import tracemalloc
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import slow_without_numba

import queuetheory as qt
from queuetheory.analysis import redundancy, removal

Z = 3.3


def _facebook_model():
    S = qt.slowdowns.facebook()
    return qt.SX(X=qt.Exponential(rate=S.mean()), S=S)


def _simulate(model, d, lam, k, n_jobs, seed, warmup=0.2):
    """Response times of Redundancy-d (FCFS, cancel-on-complete) after a warm-up fraction, and
    the per-server workloads at the end."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.exponential(1.0 / (lam * k), n_jobs))
    polled = rng.integers(k, size=(n_jobs, d))
    while d > 1:
        ordered = np.sort(polled, axis=1)
        bad = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
        if not bad.any():
            break
        polled[bad] = rng.integers(k, size=(int(bad.sum()), d))
    runtimes = model.sample_runtimes(n_jobs, d, rng)
    free_at = np.zeros(k)
    response = np.empty(n_jobs)
    for j in range(n_jobs):
        p, t = polled[j], times[j]
        start = np.maximum(free_at[p], t)
        finish = start + runtimes[j]
        done = finish.min()
        free_at[p] = np.maximum(start, np.minimum(finish, done))
        response[j] = done - t
    return response[int(warmup * n_jobs):], free_at - times[-1]


def _batch_means(x, batches=30):
    means = np.array([b.mean() for b in np.array_split(x, batches)])
    return x.mean(), means.std(ddof=1) / math.sqrt(batches)


# ----------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize(("lam", "d"), [(0.3, 2), (0.9, 3), (0.99, 10), (0.5, 1)])
def test_ir_exponential_mean_series(lam, d):
    with mpmath.workdps(30):
        exact = float(mpmath.nsum(lambda n: mpmath.mpf(lam) ** n / (n * (d - 1) + d),
                                  [0, mpmath.inf]) / 2.0)
    assert redundancy.ir_exponential_mean(2.0 * lam, 2.0, d) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(("d", "rho", "ref"), [
    (4, 0.999, 2.1571780188826737433),
    (4, 0.999999999, 6.7593613359061314601),
    (6, 0.998, 1.188217649758687348),
    (16, 0.999, 0.45403099709350974993),
    (3, 1 - 1e-12, 13.508668799527137145),
    (20, 0.999999, 0.72274363978449314591),
])
def test_ir_exponential_mean_near_load_one(d, rho, ref):
    """Near load 1 (the logarithmic case ``c - a - b = 0`` of ``2F1(1, a; a + 1; rho)``)
    ``scipy.special.hyp2f1`` gave negative means (-8.33 for 2.157 at ``d = 4``, ``rho =
    0.999``; 60 of 152 systems with ``d`` in 2..20 at loads from 0.998 on). References: the
    integral of the tail the method states, mpmath at 40 digits, independent of ``2F1``::

        e = mpf(d) / (d - 1); t0 = -log(1 - rho) / (d - 1)
        sf = lambda t: exp(-e * log1p((1 - rho) * expm1((d - 1) * t)))
        quad(sf, [0, t0/4, t0/2, 3*t0/4, t0, t0+1, t0+5, t0+20, t0+80, inf])
    """
    assert redundancy.ir_exponential_mean(rho, 1.0, d) == pytest.approx(ref, rel=1e-14)
    p = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(1.0)), rho))
    assert p.stable and p.mean == pytest.approx(ref, rel=1e-14)
    # positive and increasing in the load for every d, up to 1 - 1e-12
    for replicas in range(2, 21):
        means = [redundancy.ir_exponential_mean(r, 1.0, replicas)
                 for r in (0.9, 0.99, 0.998, 0.999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12)]
        assert means[0] > 1.0 / replicas and np.all(np.diff(means) > 0)


def test_ir_exponential_d2_closed_form_and_instability():
    rho = 0.7
    assert redundancy.ir_exponential_mean(rho, 1.0, 2) == pytest.approx(
        (-math.log(1 - rho) - rho) / rho**2, rel=1e-13)
    assert redundancy.ir_exponential_mean(1.0, 1.0, 4) == math.inf


def test_ir_exponential_tail_integrates_to_mean_and_ppf_inverts():
    lam, mu, d = 0.8, 1.5, 4
    integral = mpmath.quad(lambda t: redundancy.ir_exponential_sf(float(t), lam, mu, d),
                           [0, 1, 10, mpmath.inf])
    assert float(integral) == pytest.approx(redundancy.ir_exponential_mean(lam, mu, d),
                                            rel=1e-9)
    p = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(mu)), lam))
    q = p.quantile(0.99)
    assert redundancy.ir_exponential_sf(q, lam, mu, d) == pytest.approx(0.01, rel=1e-9)
    assert p.response_time.cdf(q) == pytest.approx(0.99, rel=1e-12)


@pytest.mark.parametrize(("lam", "d"), [(0.5, 2), (0.999999, 5), (1e-9, 3), (0.7, 30)])
def test_ir_exponential_quantile_errors_are_true(lam, d):
    # the closed-form quantiles state their rounding error (they used to have none); the
    # reference solves the closed-form tail P(T > t) = (rho + (1 - rho) e^((d-1) t))^(-d/(d-1))
    # (mu = 1) for t at 40 digits by mpmath.findroot, apart from the code's inverse formula
    # (which lost 8e-8 relative at q = 1e-9 before it was written with log1p and expm1)
    levels = np.array([1e-12, 1e-9, 0.3, 0.99, 1 - 1e-12])
    law = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(1.0)), lam)).response_time
    values, errors = law.ppf(levels, full_output=True)
    with mpmath.workdps(40):
        for q, value, error in zip(levels, values, errors):
            def excess(t, q=q):
                rho = mpmath.mpf(lam)
                sf = (rho + (1 - rho) * mpmath.exp((d - 1) * t)) ** (-mpmath.mpf(d) / (d - 1))
                return sf - (1 - mpmath.mpf(float(q)))

            reference = mpmath.findroot(excess, mpmath.mpf(float(value)))
            assert abs(value - reference) <= error <= 1e-15 * value


def test_finite_k_equal_d_is_mm1_and_tends_to_limit():
    assert redundancy.ir_exponential_finite_mean(0.6, 1.0, 3, 3) == pytest.approx(
        1 / (3 * 0.4), rel=1e-13)
    limit = redundancy.ir_exponential_mean(0.6, 1.0, 3)
    big = redundancy.ir_exponential_finite_mean(0.6, 1.0, 3, 100_000)
    assert big == pytest.approx(limit, rel=1e-4)


@pytest.mark.parametrize("d, k, load", [(4, 5, 1 - 1e-12), (4, 5, 1 - 1e-9), (2, 2000, 0.99),
                                         (2, 2000, 1 - 1e-12), (7, 60, 0.5), (1, 30, 0.9)])
def test_finite_k_mean_near_load_one_against_exact_rationals(d, k, load):
    # the sum in exact rational arithmetic (math.comb, Fraction of the float rates): the
    # denominators i mu C(k, d) / C(i, d) - k lam had cancelled in floats (exp of gammaln),
    # 6.7e-5 off at load 1 - 1e-12 (k = 5, d = 4) with the method called exact
    lam, mu = load, 1.0
    exact = sum(Fraction(1) / (i * Fraction(mu) * Fraction(math.comb(k, d), math.comb(i, d))
                               - k * Fraction(lam)) for i in range(d, k + 1))
    p = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(mu)), lam, servers=k))
    assert p.exact and abs(p.mean - float(exact)) <= 4e-16 * float(exact)


def test_finite_k_mean_in_double_precision_states_its_rounding(monkeypatch):
    # beyond _FINITE_K_MP servers the recurrence runs in floats: the mean states its rounding
    # bound (4 eps k), checked against the sum in exact rational arithmetic
    monkeypatch.setattr(redundancy, "_FINITE_K_MP", 100)
    d, k, lam = 3, 3000, 1 - 1e-9
    exact = sum(Fraction(1) / (i * Fraction(math.comb(k, d), math.comb(i, d)) - k * Fraction(lam))
                for i in range(d, k + 1))
    p = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(1.0)), lam, servers=k))
    error = p.errors["mean"]
    assert abs(p.mean - float(exact)) <= error <= 1e-11 * p.mean
    assert "summed in double precision" in p.method


def test_finite_k_mean_against_simulation():
    lam, d, k = 0.7, 2, 4
    model = qt.IR(qt.Exponential(1.0))
    p = qt.analyze(qt.System(qt.RedundancyD(d), model, lam, servers=k))
    assert p.exact and "finite-k" in p.method and p.cost == 1.0
    resp, _ = _simulate(model, d, lam, k, 200_000, seed=11)
    mean, se = _batch_means(resp)
    assert abs(mean - p.mean) < Z * se


def test_ir_exponential_cost_is_one_over_mu_in_simulation():
    # cost per job = total server time / jobs; derived: 1/mu for every d and k
    lam, d, k, mu = 0.6, 3, 50, 2.0
    model = qt.IR(qt.Exponential(mu))
    rng = np.random.default_rng(5)
    n = 100_000
    times = np.cumsum(rng.exponential(1.0 / (lam * k), n))
    free_at, busy = np.zeros(k), 0.0
    runtimes = model.sample_runtimes(n, d, rng)
    for j in range(n):
        p = rng.choice(k, d, replace=False)
        start = np.maximum(free_at[p], times[j])
        finish = start + runtimes[j]
        new = np.maximum(start, np.minimum(finish, finish.min()))
        busy += float(np.sum(new - start))
        free_at[p] = new
    # per-job server times are i.i.d.-like with sd <= 1/mu; 3.3 sd of the mean of n
    assert abs(busy / n - 1 / mu) < Z * (1 / mu) / math.sqrt(n) * 2
    assert qt.analyze(qt.System(qt.RedundancyD(d), model, lam)).cost == 1 / mu


# --------------------------------------------------------------------------------- handlers
def test_unstable_is_a_result():
    p = qt.analyze(qt.System(qt.RedundancyD(3), qt.IR(qt.Exponential(1.0)), 1.2))
    assert not p.stable and p.mean == math.inf and p.quantile(0.5) == math.inf
    # beyond the mean-field frontier 0.9119 of Erlang(2, 2) at d = 2 (a computed frontier,
    # which the independent cavity continuation puts at 0.91194448 +- 1.2e-5: see
    # test_within_the_frontier_error_the_verdict_is_undecided_as_with_removal; the Facebook S&X
    # cases, 11 s without numba, are in the slow tests below)
    p = qt.analyze(qt.System(qt.RedundancyD(2), qt.IR(qt.Erlang(2, 2.0)), 1.0))
    assert not p.stable and p.mean == math.inf and not p.exact and "frontier 0.9119" in p.method


@pytest.mark.slow   # 11 s without numba (the frontier of Redundancy-10 under S&X decides)
def test_unstable_facebook_is_a_result():
    p = qt.analyze(qt.System(qt.RedundancyD(10), _facebook_model(), 0.7))
    assert not p.stable and p.mean == math.inf and not p.exact


def test_d1_is_pollaczek_khinchine():
    model = _facebook_model()
    p = qt.analyze(qt.System(qt.RedundancyD(1), model, 0.5))
    assert p.exact and p.mean == pytest.approx(qt.mg1.pk_mean(0.5, model.replica()), rel=1e-12)


@slow_without_numba   # 4.5 s without numba
def test_mean_field_prediction_fields():
    model = _facebook_model()
    p = qt.analyze(qt.System(qt.RedundancyD(3), model, 0.6))
    assert not p.exact and "mean-field (cavity) approximation" in p.method
    assert "solved as Replication(1, 3) with removal" in p.method
    assert "marched on grids of step h" in p.method
    assert p.cost == pytest.approx(p.busy_fraction / 0.6)
    T = p.response_time
    assert T.mean() == p.mean
    assert T.sf(p.quantile(0.9)) == pytest.approx(0.1, abs=1e-9)
    # the mean is the integral of the tabulated tail (trapezoidal rule on the fine grid)
    grid = np.linspace(0, 40, 4001)
    assert np.trapezoid(T.sf(grid), grid) == pytest.approx(p.mean, rel=2e-3)


def _stated_errors(p):
    """The error estimates a mean-field prediction states: mean, busy fraction, p50, p95, p99."""
    levels = np.array([0.5, 0.95, 0.99])
    return [p.errors["mean"], p.errors["busy_fraction"],
            *p.response_time.quantile_error(levels)]


def test_mean_field_with_atoms_states_true_errors():
    # IR Deterministic(1), d = 2, lam = 0.6: reference from the method of steps on the delay
    # differential equation (code in tests/test_meanfield.py; the independent solver
    # and simulation at k = 2000 give 1.507201 and 1.507195 +- 0.0011). The level-crossing
    # grid (atoms as nodes): mean off 5.1e-8 (2.2e-7 stated), busy fraction 3.9e-9 (1.8e-8),
    # p99 off 1.8e-6 (1.4e-5); the cavity grid stated 1.2e-5 for the mean
    p = qt.analyze(qt.System(qt.RedundancyD(2), qt.IR(qt.Deterministic(1.0)), 0.6))
    mean_err, busy_err, *q_err = _stated_errors(p)
    reference = [1.421226575359442, 2.466184925771187, 2.8381097782047053]
    assert abs(p.mean - 1.5072010595743486) <= mean_err
    assert abs(p.busy_fraction - 0.8233207023858847) <= busy_err
    for q, ref, err in zip((0.5, 0.95, 0.99), reference, q_err):
        assert abs(p.quantile(q) - ref) <= err
    assert mean_err < 1e-6 and busy_err < 1e-7 and max(q_err) < 1e-4


def test_mean_field_erlang1_states_true_errors():
    # Erlang(1, 1) is exponential(1) but takes the mean-field path: the closed forms of
    # Gardner et al. (2017) give mean, busy fraction rho and quantiles; each stated error must
    # bound the true one (the issue measured busy 0.5000406 with no error stated)
    lam, d = 0.5, 2
    p = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Erlang(1, 1.0)), lam))
    mean_err, busy_err, *q_err = _stated_errors(p)
    with mpmath.workdps(30):
        exact = float(mpmath.nsum(lambda n: mpmath.mpf(lam) ** n / (n * (d - 1) + d),
                                  [0, mpmath.inf]))
    assert abs(p.mean - exact) <= mean_err <= 1e-6 * exact
    assert abs(p.busy_fraction - lam) <= busy_err <= 1e-6
    for q, err in zip((0.5, 0.95, 0.99), q_err):
        closed = math.log(((1 - q) ** (-(d - 1) / d) - lam) / (1 - lam)) / (d - 1)
        assert abs(p.quantile(q) - closed) <= err <= 1e-5 * closed


# X = a delta_1 + (1 - a) Exp(mu) with a unit slowdown (a job's replicas all take X): the
# workload equation averaged over X is a delay equation in F and E[F(w - Y)^j], Y ~ Exp(mu),
# solved by Taylor series in mpmath at 30 digits, F(0) by shooting; a finer, longer second
# solve agrees to 17 digits (scripts/mixed_job_size_redundancy_references.py):
# (policy, a, mu, lam, idle fraction F(0), mean, quantiles at 0.1, 0.5, 0.9, 0.99)
MIXED_X_REDUNDANCY = [
    (qt.RedundancyD(2), 0.5, 1.0, 0.4, 0.39891903638308185879, 1.2145213946968387,
     [0.33401616316309119, 1.0, 2.136383836847703, 4.2735956015012342]),
    (qt.Replication(2, 2, remove=True), 0.3, 2.0, 0.3, 0.66747160122845774984,
     0.72134886527538301,
     [0.096566351002064477, 0.73365243315623265, 1.2819161672897201, 2.263756248408019]),
]


@pytest.mark.parametrize("policy, a, mu, lam, idle, mean, quantiles", MIXED_X_REDUNDANCY)
def test_redundancy_d_with_a_job_size_mixing_atoms_and_a_density(policy, a, mu, lam, idle,
                                                                 mean, quantiles):
    # the cavity grid integrates against the density of X and refuses such a job size; the
    # level-crossing grid (Replication(1, d) with removal) takes each atom as a piece of the
    # rule over X. Measured (Redundancy-2): idle fraction 3.7e-7 off with 1.1e-6 stated, mean
    # 1.6e-6 with 5.0e-6, quantiles 2.2e-7, 0, 1.2e-5, 1.6e-4 off with 1.1e-6, 2.1e-6, 4.5e-5,
    # 3.6e-4 stated; the median is the atom 1 (P(T < 1) < 0.5 <= P(T <= 1)); Replication(2, 2)
    # with removal, a batch of two jobs sharing X: idle 4.2e-9 off (6.9e-8 stated), mean 4.5e-9
    # (3.1e-7), quantiles 1.3e-9 to 1.7e-5 off (6.4e-8 to 5.1e-5 stated)
    X = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(mu)], [a, 1 - a])
    p = qt.analyze(qt.System(policy, qt.SX(X, qt.Discrete([1.0], [1.0])), arrival_rate=lam))
    assert abs((1 - p.busy_fraction) - idle) <= p.errors["busy_fraction"]
    assert abs(p.mean - mean) <= p.errors["mean"] <= 1e-5 * mean
    values, errors = p.response_time.ppf([0.1, 0.5, 0.9, 0.99], full_output=True)
    assert np.all(np.abs(values - np.array(quantiles)) <= errors)
    assert np.all(errors <= 1e-3 * np.array(quantiles))
    assert "with removal" in p.method


def test_far_apart_slowdowns_against_an_independent_cavity_solver():
    # X = Exp(1.9), S = {1, 10} w.p. {0.9, 0.1}, d = 2, lam = 0.4 (the case, where the
    # cavity grid's busy fraction was off 8e-4). Reference: the independent solver of
    # tests/meanfield_references.py (quintic spline, step 0.1; 0.2 changes the mean by 3.4e-7),
    # pinned in tests/test_meanfield.py. Level-crossing grid: measured mean 6.8e-8 off
    # (2.9e-7 stated), busy fraction 1.1e-8 (6e-8), p99 3.8e-8 (9.6e-7)
    model = qt.SX(X=qt.Exponential(1.9), S=qt.Discrete([1.0, 10.0], [0.9, 0.1]))
    p = qt.analyze(qt.System(qt.RedundancyD(2), model, 0.4))
    mean_err, busy_err, *q_err = _stated_errors(p)
    assert abs(p.mean - 0.6936670415723935) <= mean_err <= 1e-6 * p.mean
    assert abs(p.busy_fraction - 0.40092590075872503) <= busy_err <= 1e-6 * p.busy_fraction
    references = (0.4508890451854967, 1.983035269323072, 3.772109163738293)
    for q, ref, err in zip((0.5, 0.95, 0.99), references, q_err):
        assert abs(p.quantile(q) - ref) <= err <= 1e-5 * ref


def test_mean_field_hard_bounds_and_moments():
    # every response time is at least the smallest runtime (1): quantiles, mean and the tail
    # respect it; E[T^2] is finite for light tails and at least E[T]^2
    p = qt.analyze(qt.System(qt.RedundancyD(3), qt.IR(qt.Deterministic(1.0)), 0.3))
    T = p.response_time
    assert all(p.quantile(q) >= 1.0 for q in (1e-6, 0.01, 0.3, 0.5))
    assert T.sf(np.nextafter(1.0, 0.0)) == 1.0 and p.mean >= 1.0
    m2 = T.moment(2)
    assert math.isfinite(m2) and m2 >= p.mean ** 2
    qs = np.array([0.1, 0.5, 0.9, 0.99, 1 - 1e-9])
    assert np.all(np.diff([p.quantile(q) for q in qs]) >= 0)
    assert np.all(np.isfinite(T.quantile_error(qs)))


@pytest.mark.parametrize("unit", [pytest.param(1e-9, marks=pytest.mark.slow), 1e-3, 1e3,
                                  pytest.param(1e9, marks=pytest.mark.slow)])
def test_mean_field_is_equivariant_under_time_unit(unit):
    # the same system in another time unit: times scale by the unit, fractions do not
    def predict(c):
        runtime = qt.SX(X=qt.Exponential(1.0 / c), S=qt.Discrete([1.0, 3.0], [0.7, 0.3]))
        return qt.analyze(qt.System(qt.RedundancyD(2), runtime, 0.4 / c))

    base, scaled = predict(1.0), predict(unit)
    assert scaled.mean / unit == pytest.approx(base.mean, rel=1e-12)
    assert scaled.busy_fraction == pytest.approx(base.busy_fraction, rel=1e-12)
    assert scaled.quantile(0.95) / unit == pytest.approx(base.quantile(0.95), rel=1e-12)


@pytest.mark.slow
def test_heavy_tail_refused_in_bounded_memory():
    # Pareto(2.5) job sizes: the workload tail does not fit on a grid of 4096 points; the
    # analysis refuses (pointing to simulation) within its stated memory bound of about 1 GB
    S = qt.slowdowns.facebook()
    X = qt.Pareto(2.5, 1.5 / 2.5 / S.mean())
    system = qt.System(qt.RedundancyD(3), qt.SX(X=X, S=S), 0.5)
    tracemalloc.start()
    try:
        with pytest.raises(NotImplementedError, match="simulate"):
            qt.analyze(system)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1e9


def test_threshold_zero_is_riq_and_n1_not_implemented():
    model = _facebook_model()
    riq = qt.analyze(qt.System(qt.RIQ(3), model, 0.7))
    thr = qt.analyze(qt.System(qt.Threshold(3, 0), model, 0.7))
    assert thr.mean == riq.mean and thr.busy_fraction == riq.busy_fraction
    assert thr.mean == pytest.approx(1.777675, abs=1e-6)    # docs/theory/riq.rst, worked example
    assert "THRESHOLD-0 coincides with RIQ" in thr.method
    with pytest.raises(NotImplementedError, match="simulate"):
        qt.analyze(qt.System(qt.Threshold(3, 1), model, 0.7))


# ------------------------------------------------------------------------------- frontier
def test_frontier_ir_exponential_and_d1():
    assert qt.stability_frontier(qt.IR(qt.Exponential(3.0)), 7) == 3.0
    assert qt.stability_frontier(_facebook_model(), 1) == pytest.approx(1.0)
    assert qt.smallest_unstable_d(qt.IR(qt.Exponential(1.0)), 1.0) == 1
    with pytest.raises(ValueError, match="d"):
        qt.stability_frontier(_facebook_model(), 0)


@pytest.mark.slow
def test_frontier_facebook_matches_simulated_instability():
    # Simulation at k = 100 and 1000 (docs/theory/redundancy.rst, mean-field "Stability"):
    # lam = 0.5 stable at d = 10,
    # unstable at d = 20; lam = 0.7 unstable at d = 10; d = 10 stable at 0.64, unstable at 0.67
    model = _facebook_model()
    f10 = qt.stability_frontier(model, 10)
    assert 0.64 < f10 < 0.67
    assert qt.stability_frontier(model, 20) < 0.5


@pytest.mark.slow
def test_solve_based_stability_decision_agrees_with_frontier():
    # analyze decides stability from the existence of the mean-field solution (computing the
    # frontier only when 1 - busy fraction < 0.01 or no solution is found); reference: the
    # frontier 0.49433 of the busy-fraction continuation at d = 20 (stated error 2e-4), and the
    # simulation quoted in docs/theory/redundancy.rst, "Stability" (lam = 0.5 unstable at d = 20)
    model = _facebook_model()
    stable = qt.analyze(qt.System(qt.RedundancyD(20), model, 0.48))
    assert stable.stable and stable.busy_fraction < 0.99
    assert "below the stability frontier" not in stable.method
    unstable = qt.analyze(qt.System(qt.RedundancyD(20), model, 0.5))
    assert not unstable.stable and "frontier 0.4943" in unstable.method


@pytest.mark.slow
def test_within_the_frontier_error_the_verdict_is_undecided_as_with_removal():
    # one rule for every computed frontier (qt.analysis.frontier_verdict, shared with MDS and
    # Replication with removal): at the frontier times 1 -+ 1e-12 no verdict and no number;
    # beyond its error the frontier decides. Erlang(2, 2) at d = 2: frontier 0.9119444649
    # (Replication(1, 2)'s travelling front, error 8.7e-9; four finer grids give 0.9119444630,
    # the cavity continuation 0.91194448 +- 1.2e-5). At 3 errors below it (busy fraction
    # 1 - 2.2e-8) the level-crossing grid finds the stationary law, short of its accuracy goal
    # and saying so, or (numpy 2.4.6: Newton's method on F(0) ~ 2e-8 did not converge on a
    # refined grid) refuses as documented, pointing to simulate; never a number without a verdict
    model, d = qt.IR(qt.Erlang(2, 2.0)), 2
    lam_star, error = qt.stability_frontier(model, d, full_output=True)
    assert 0 < error < 1e-6 and lam_star == pytest.approx(0.9119444771519675, abs=1.2e-5)
    for lam in (lam_star * (1 - 1e-12), lam_star * (1 + 1e-12)):
        with pytest.raises(NotImplementedError, match="within the error .* undecided"):
            qt.analyze(qt.System(qt.RedundancyD(d), model, lam))
        with pytest.raises(NotImplementedError, match="undecided"):
            qt.smallest_unstable_d(model, lam, d_max=d)
    assert qt.smallest_unstable_d(model, lam_star + 3 * error, d_max=d) == d
    above = qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star + 3 * error))
    assert not above.stable and above.mean == math.inf and "plus its error" in above.method
    try:
        near = qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star - 3 * error))
    except NotImplementedError as refusal:
        assert "too close to the frontier" in str(refusal) and "qt.simulate" in str(refusal)
    else:
        assert near.stable and near.busy_fraction > 1 - 1e-6 and "minus its error" in near.method
        assert "short of the 1e-6 goal" in near.method and near.errors["mean"] > 1e-6 * near.mean
    below = qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star - 1e-4))
    assert below.stable and below.errors["mean"] < 1e-6 * below.mean


@pytest.mark.slow
def test_cavity_grid_refuses_too_close_to_its_frontier(monkeypatch):
    # where the level-crossing grid does not apply (S&X with a continuous slowdown) the cavity
    # grid and its continuation decide, by the same rule; forced here for Erlang(2, 2), d = 2:
    # frontier 0.911944 (error 1.2e-5), and at 3 errors below it the cavity grids find no
    # stationary law (Newton stalls at residual 1e-6 on 3200 points): refused, not a
    # RuntimeError
    from queuetheory.analysis import redundancy

    monkeypatch.setattr(redundancy, "_crossing_applies", lambda model: False)
    redundancy._frontier_remembered.cache_clear()
    try:
        model, d = qt.IR(qt.Erlang(2, 2.0)), 2
        lam_star, error = qt.stability_frontier(model, d, full_output=True)
        assert 1e-6 < error < 1e-4
        with pytest.raises(NotImplementedError, match="within the error .* undecided"):
            qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star))
        with pytest.raises(NotImplementedError, match="too close to the frontier"):
            qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star - 3 * error))
        below = qt.analyze(qt.System(qt.RedundancyD(d), model, lam_star - 100 * error))
        assert below.stable and "grid of N" in below.method and "minus its error" in below.method
    finally:
        redundancy._frontier_remembered.cache_clear()


def test_frontier_is_remembered_per_goal_and_budget(monkeypatch):
    # the front's grids depend on the accuracy goal and the grid budget: a frontier remembered
    # under one is not reused under another (it had been, keyed on the runtime, d and points)
    from queuetheory.analysis import meanfield, redundancy, settings

    solved = []

    def frontier(model, d, points):
        solved.append(settings())
        return 1.0, 0.0

    monkeypatch.setattr(redundancy, "_crossing_applies", lambda model: False)
    monkeypatch.setattr(meanfield, "frontier_extrapolated", frontier)
    redundancy._frontier_remembered.cache_clear()
    try:
        model = qt.IR(qt.Erlang(2, 2.0))
        for _ in range(2):
            redundancy._frontier_and_error(model, 2, 400)
            with qt.grid_budget(4):
                redundancy._frontier_and_error(model, 2, 400)
            with qt.accuracy_goal(1e-3):
                redundancy._frontier_and_error(model, 2, 400)
        assert solved == [(1e-6, 1.0), (1e-6, 4.0), (1e-3, 1.0)]
    finally:
        redundancy._frontier_remembered.cache_clear()


@pytest.mark.parametrize("d", [2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14])
def test_frontier_errors_cover_the_exact_frontier_of_exponential_runtimes(d):
    # Erlang(1, 1) is exponential(1), not recognised as such: the frontier is exactly 1 for
    # every d (Gardner et al. 2017). With three front grids the stated error fell below the
    # true one (d = 8: 1.0000017688 +- 3.9e-7); at d = 10 the bracket search raised scipy's
    # "f(a) and f(b) must have different signs"
    value, error = qt.stability_frontier(qt.IR(qt.Erlang(1, 1.0)), d, full_output=True)
    assert abs(value - 1.0) <= error <= 1e-4


@pytest.mark.parametrize("d", [10, 12, 14])
def test_front_above_the_frontier_need_not_pass_to_settle_the_sign(d):
    # well above the frontier a fast front on the coarse bracket grid had kept F - q above
    # 1e-11 at the horizon; the horizon doubled until the step could not resolve the front
    # ("the front has not passed w = 8.4e6") and the cavity continuation answered. F does not
    # decrease, so F(W) > 1 settles the sign: the travelling-front frontier answers, covering
    # the exact 1 (measured 3.2e-7, 6.7e-7, 1.2e-6 off; 1.8e-6, 1.1e-5, 4.6e-5 stated)
    value, error = removal.frontier(qt.Replication(1, d), qt.Erlang(1, 1.0), full_output=True)
    assert abs(value - 1.0) <= error <= 1e-4


def test_exponential_at_high_load_and_d10_is_analysed():
    # the frontier's bracket search used to leak a scipy ValueError through analyze
    p = qt.analyze(qt.System(qt.RedundancyD(10), qt.IR(qt.Erlang(1, 1.0)), arrival_rate=0.999))
    exact = redundancy.ir_exponential_mean(0.999, 1.0, 10)
    assert p.stable and abs(p.mean - exact) <= p.errors["mean"] <= 1e-6 * exact


def test_quantiles_at_atoms_off_the_grid_are_the_atoms():
    # runtimes 1 and sqrt(2) (no common step: the jumps of the tail fall between nodes): at
    # levels inside the jumps the quantiles are the atoms themselves, never below the shortest
    # runtime and never decreasing (they were 0.9999999999999998, 1.0000000000000089,
    # 1.0000000000000029, 1.4142135623731054, 1.4142135623731027)
    runtime = qt.IR(qt.Discrete([1.0, math.sqrt(2.0)], [0.5, 0.5]))
    p = qt.analyze(qt.System(qt.RedundancyD(5), runtime, arrival_rate=0.020364424535258677))
    levels = (0.1, 0.5, 0.9, 0.99, 0.999)
    assert [p.quantile(q) for q in levels] == [1.0, 1.0, 1.0, math.sqrt(2.0), math.sqrt(2.0)]


def test_frontier_verdict_rejects_a_negative_or_nan_error():
    from queuetheory.analysis import frontier_verdict

    for error, frontier in ((-0.1, 0.6), (math.nan, 0.6), (0.0, math.nan)):
        with pytest.raises(ValueError, match="error must be a number >= 0"):
            frontier_verdict("Redundancy-2", 0.55, frontier, error)
    assert frontier_verdict("Redundancy-2", 0.5, 0.75, 0.25) is True       # the lower end
    assert frontier_verdict("Redundancy-2", 1.0, 0.75, 0.25) is False      # the upper end


# ----------------------------------------------------------------------- simulation checks
def test_mean_field_against_simulation_k250_fast():
    # lam = 0.6, d = 3 at k = 250; finite-k allowance 1% (the measured finite-k bias at
    # d = 10, lam = 0.5 is +0.0026 at k = 1000, scaling like 1/k)
    model, lam, d = _facebook_model(), 0.6, 3
    p = qt.analyze(qt.System(qt.RedundancyD(d), model, lam))
    resp, _ = _simulate(model, d, lam, 250, 150_000, seed=3)
    mean, se = _batch_means(resp)
    assert abs(mean - p.mean) < Z * se + 0.01 * p.mean


@pytest.mark.slow
@pytest.mark.parametrize(("lam", "d"), [(0.6, 3), (0.5, 10), (0.7, 5)])
def test_mean_field_against_simulation_k1000(lam, d):
    # qt.simulate at k = 1000 and 4000 (16 independent replications each, so the standard
    # errors are honest), extrapolated linearly in 1/k to k = infinity (measured bias at
    # lam = 0.5, d = 10: +0.0104 at k = 250, +0.0034 at k = 1000, +0.0001 at k = 4000); the
    # mean-field must lie within 4.07 standard errors of the extrapolation (Student t with 15
    # degrees of freedom, two-sided 1e-3)
    model = _facebook_model()
    system = qt.System(qt.RedundancyD(d), model, lam)
    p = qt.analyze(system)
    limit, se = _extrapolated_simulation(system)
    assert abs(limit - p.mean) < 4.07 * se


def _extrapolated_simulation(system):
    """The k -> infinity mean from qt.simulate at k = 1000 and 4000 (16 replications each),
    extrapolated linearly in 1/k, and its standard error."""
    runs = [qt.simulate(system, servers=k, jobs=400_000, replications=16, seed=7 + k,
                        warmup=200_000).per_replication["mean"] for k in (1000, 4000)]
    (m1, s1), (m4, s4) = [(r.mean(), r.std(ddof=1) / math.sqrt(r.size)) for r in runs]
    return (4 * m4 - m1) / 3, math.hypot(4 * s4, s1) / 3


@pytest.mark.slow
@pytest.mark.parametrize(("lam", "d"), [(0.5, 20), (0.7, 10)])
def test_simulated_instability_k1000(lam, d):
    # unstable: the mean workload keeps growing; stable case (0.5, 10) for contrast
    model = _facebook_model()
    assert not qt.analyze(qt.System(qt.RedundancyD(d), model, lam)).stable
    n = 1_000_000
    resp, _ = _simulate(model, d, lam, 1000, n, seed=9, warmup=0.0)
    quarters = [q.mean() for q in np.array_split(resp, 4)]
    assert quarters[3] > quarters[2] > quarters[1] > 2 * quarters[0]


@pytest.mark.slow
def test_far_apart_slowdowns_against_simulation():
    # S = {1, 10} w.p. {0.9, 0.1}, X = Exp(1.9), d = 2, lam = 0.4: qt.simulate at k = 1000
    # and 4000 (16 replications each), extrapolated linearly in 1/k as in the test above
    # (measured: 0.69460 +- 0.00065 and 0.69414 +- 0.00055, limit 0.69399 +- 0.00076; the
    # mean-field gives 0.693683)
    model = qt.SX(X=qt.Exponential(1.9), S=qt.Discrete([1.0, 10.0], [0.9, 0.1]))
    system = qt.System(qt.RedundancyD(2), model, 0.4)
    p = qt.analyze(system)
    limit, se = _extrapolated_simulation(system)
    assert abs(limit - p.mean) < 4.07 * se


def test_mean_field_does_not_depend_on_the_order_of_the_atoms():
    # the same laws given in another order give the same numbers and the same verdict
    def predict(values, probs):
        runtime = qt.SX(X=qt.Exponential(2.0), S=qt.Discrete(values, probs))
        return qt.analyze(qt.System(qt.RedundancyD(3), runtime, 0.45))

    a = predict([1.0, 2.0, 4.0], [0.5, 0.3, 0.2])
    b = predict([4.0, 1.0, 2.0], [0.2, 0.5, 0.3])
    assert a.stable == b.stable and a.mean == b.mean and a.busy_fraction == b.busy_fraction
    assert not math.isnan(a.mean)


def test_jumping_density_is_not_flagged_any_more():
    # a uniform runtime's density jumps at the ends of its support: the kinks of its CDF are
    # nodes of the level-crossing grids (tests/test_removal.py checks such laws against the
    # delay equation), so the method states no caution and reaches the 1e-6 goal
    p = qt.analyze(qt.System(qt.RedundancyD(2), qt.IR(qt.Uniform(0.5, 1.5)), 0.4))
    assert "CAUTION" not in p.method and "short of" not in p.method
    assert p.errors["mean"] < 1e-6 * p.mean


def test_prediction_errors_cover_the_true_errors():
    # IR Erlang(1, 1) is exponential but takes the mean-field path. Closed forms (Gardner et al.,
    # Operations Research 65(4) 2017): E[T] = (-ln(1 - rho) - rho) / (mu rho^2) for d = 2,
    # mpmath: (mpmath.log(2) - 0.5) / 0.25 = 0.77258872223978123767; busy fraction rho = 0.5.
    p = qt.analyze(qt.System(qt.RedundancyD(2), qt.IR(qt.Erlang(1, 1.0)), arrival_rate=0.5))
    assert set(p.errors) == {"mean", "busy_fraction"}
    assert abs(p.mean - 0.77258872223978123767) <= p.errors["mean"]
    assert abs(p.busy_fraction - 0.5) <= p.errors["busy_fraction"]


@pytest.mark.parametrize("d,lam,mean,quantiles", [
    (2, 0.25, 1.5451774444795624753, [1.2069122052035746766, 5.88887795833288092]),
    (3, 0.35, 1.2747116355977240603, [1.0845145497377582258, 4.2410555839286606734]),
])
def test_continuous_slowdown_with_a_job_size_on_atoms_is_the_level_crossing_grid(
        d, lam, mean, quantiles):
    # S&X with X = 2 and S ~ Exponential(1) is IR Exponential(1/2): Gardner et al.'s closed
    # form, at 40 digits (mu = 1/2, rho = lam / mu, a = d / (d - 1)):
    #   mean = hyp2f1(1, a, a + 1, rho) / (mu d)
    #   t_L = log(((1 - L)^(-(d - 1) / d) - rho) / (1 - rho)) / ((d - 1) mu), L = 0.5, 0.99
    # The cavity grid stated 4.9e-4 (mean) where this grid states about 1e-8, in 0.01 s
    model = qt.SX(qt.Deterministic(2.0), qt.Exponential(1.0))
    p = qt.analyze(qt.System(qt.RedundancyD(d), model, arrival_rate=lam))
    assert "solved as Replication(1" in p.method
    assert abs(p.mean - mean) <= p.errors["mean"] <= 1e-6 * mean
    assert abs(p.busy_fraction - 2 * lam) <= p.errors["busy_fraction"] <= 1e-6
    values, errors = p.response_time.ppf([0.5, 0.99], full_output=True)
    assert np.all(np.abs(np.asarray(values) - quantiles) <= errors)
    assert np.all(np.asarray(errors) <= 1e-5 * np.asarray(quantiles))


@pytest.mark.parametrize("d", [2, 3])
def test_cavity_grid_busy_fraction_is_exact_for_exponential_slowdowns(d):
    # S&X Exp(1) x Exp(1): given X the replicas are memoryless and a job ends at one
    # completion, so the busy fraction is lam E[R] exactly; the cavity grid had stated 0.300008
    # +- 0.0005 (d = 2) and 0.300005 +- 0.00043 (d = 3), an AccuracyWarning for a number known
    # exactly. Its frontier, 1 / E[R], the same way
    model = qt.SX(qt.Exponential(1.0), qt.Exponential(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", qt.AccuracyWarning)
        p = qt.analyze(qt.System(qt.RedundancyD(d), model, 0.3))
    assert "mean-field (cavity) approximation" in p.method
    assert p.busy_fraction == 0.3 and p.errors["busy_fraction"] == 0.0
    assert "lam E[R] exactly" in p.method
    assert qt.stability_frontier(model, d, full_output=True) == (1.0, 0.0)


@slow_without_numba   # 4.4 s without numba
def test_cavity_fallback_is_refused_close_to_the_frontier():
    # S&X X on {0.5, 3} (0.8, 0.2) x Exp(2), d = 2: frontier 1 / E[R] = 2 exactly. At 0.999 of
    # it the level-crossing grid answers; at 1 - 1e-6 it finds no stationary law and the cavity
    # grid had answered 5.655 +- 2.06 (and, with the exact frontier, 5.659 +- 2.07 at 1 - 1e-9)
    # where the mean is 9.4054 (14.585): refused now. Reference: the ODE of
    # scripts/sx_atom_phase_removal_references.py, Reference(False, 1, 2, lam, (0.5, 3.0),
    # (0.8, 0.2), ((1.0, 1, 2.0),)).solve(W) at task load 2 (1 - eps): eps = 1e-3, W = 200, 1000
    # and 4000 gave 4.234322607068225 (to 1e-14); eps = 1e-6, 9.40538238 (W = 1000, 4000)
    model = qt.SX(qt.Discrete([0.5, 3.0], [0.8, 0.2]), qt.Exponential(2.0))
    p = qt.analyze(qt.System(qt.RedundancyD(2), model, 2.0 * 0.999))
    assert abs(p.mean - 4.234322607068225) <= p.errors["mean"] < 1e-3 * p.mean
    assert p.busy_fraction == 0.999 and p.errors["busy_fraction"] == 0.0
    for eps in (1e-6, 1e-9):
        with pytest.raises(NotImplementedError, match="too close to the frontier.*qt.simulate"):
            qt.analyze(qt.System(qt.RedundancyD(2), model, 2.0 * (1 - eps)))
    # where the cavity grid is the method (Exp x Exp) the computed frontier's error band still
    # guards it, the exact frontier notwithstanding: with that band at 0 it had answered 12.44
    # +- 8.58 at 1 - 1e-9, where the ODE (the rule of erlang_job_size_rule(1, 1.0, 10)) gives
    # 19.52 already at 1 - 1e-6
    both = qt.SX(qt.Exponential(1.0), qt.Exponential(1.0))
    assert qt.stability_frontier(both, 2, full_output=True) == (1.0, 0.0)
    with pytest.raises(NotImplementedError, match="undecided.*qt.simulate"):
        qt.analyze(qt.System(qt.RedundancyD(2), both, 1 - 1e-9))


def test_cavity_grid_points_to_the_level_crossing_grid_where_it_applies():
    # S&X with a continuous job size and a continuous slowdown: the cavity grid answers
    # (0.2 to 1 s) and names the second, slower solution of the same system (Replication(1, d)
    # with removal; its accuracy against an independent solver:
    # tests/test_removal.py::test_sx_continuous_slowdown_against_an_independent_solver)
    model = qt.SX(qt.Exponential(1.0), qt.Exponential(1.0))
    p = qt.analyze(qt.System(qt.RedundancyD(2), model, 0.3))
    assert "mean-field (cavity) approximation" in p.method
    assert "independent solution of the same system: Replication(1, 2) with removal" in p.method
    q = qt.analyze(qt.System(qt.RedundancyD(2), qt.IR(qt.Erlang(2, 2.0)), 0.3))
    assert "independent solution" not in q.method


@pytest.mark.slow   # 64-69 s without numba, 2.7 s with (the level-crossing grid marches 80
# times at the frontier before it gives up: a quarter of the default run's time without numba)
def test_at_the_frontier_the_frontier_decides_before_the_cavity_grid(monkeypatch):
    """Where the level-crossing grid finds no stationary law (at or beyond the frontier), the
    frontier (a fraction of a second) decides before the cavity grid runs: a refusal at the
    frontier of S&X exp X x {1, 4}, d = 2, had spent 8 s in it (found by a fuzzing helper,
    over 60 s on a loaded machine). The cavity grid must not run here at all."""
    runtime = qt.SX(qt.Exponential(3.0), qt.Discrete([1.0, 4.0], [0.5, 0.5]))
    frontier = qt.stability_frontier(runtime, d=2)

    def cavity(*args, **kwargs):
        raise AssertionError("the cavity grid ran")

    monkeypatch.setattr(redundancy.meanfield, "solve_extrapolated", cavity)
    with pytest.raises(NotImplementedError, match="undecided"):
        qt.analyze(qt.System(qt.RedundancyD(2), runtime, frontier))
    beyond = qt.analyze(qt.System(qt.RedundancyD(2), runtime, 1.01 * frontier))
    assert not beyond.stable and beyond.mean == math.inf and "unstable" in beyond.method
