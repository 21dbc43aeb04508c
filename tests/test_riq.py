"""Tests of the Random / RIQ analysis (queuetheory.analysis.riq) in the k -> infinity limit.

Reference values and how each is obtained:
* d = 1: the Pollaczek-Khinchine mean (closed form written out here);
* docs/theory/riq.rst, "Worked example" (simulation-checked): Facebook S, exponential X with
  E[X] E[S] = 1, lam = 0.7, d = 3: b = 0.732885, E[T] = 1.777675, T_95 = 6.4559, T_99 = 10.6456;
* the fixed point and mean re-derived in this file from docs/theory/riq.rst, eqs.
  riq-fixed-point and riq-mean (Gardner et al., IEEE/ACM ToN 25(6) 2017), by exact
  enumeration over the slowdown table and plain bisection (no library code);
* work conservation: b = lam * cost (a different derivation of the busy fraction);
* IR exponential: a mean-field continuous-time Markov chain (one server's queue length and
  replica-group size, the other servers entering through b), solved numerically with numpy;
* a seeded finite-k simulation (the exact FCFS state update, docs/theory/model.rst, eq.
  model-state) with a
  batch-means confidence interval and a stated finite-k allowance.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from conftest import FACEBOOK_PROBS, FACEBOOK_VALUES, slow_without_numba
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize
from test_mg1 import _ctmc_busy_response, _efs_ctmc

import queuetheory as qt
from queuetheory._checks import stable_load

FB_MEAN = sum(v * p for v, p in zip(FACEBOOK_VALUES, FACEBOOK_PROBS))  # 4.691


def _riq(d, runtime, lam):
    return qt.analyze(qt.System(qt.RIQ(d), runtime, arrival_rate=lam))


# ------------------------------------------------------------------------ d = 1 is M/G/1 P-K


def _pk(lam, m1, m2):
    return m1 + lam * m2 / (2 * (1 - lam * m1))


@pytest.mark.parametrize("policy", [qt.Random(), qt.RIQ(1)], ids=["Random", "RIQ(1)"])
@pytest.mark.parametrize("runtime, m1, m2", [
    (qt.IR(qt.Exponential(1.0)), 1.0, 2.0),
    (qt.IR(qt.Erlang(3, 2.0)), 1.5, 3.0),
    (qt.IR(qt.Pareto(2.5, 0.6)), 1.0, 2.5 * 0.36 / 0.5),
    (qt.SX(qt.Exponential(FB_MEAN), qt.slowdowns.facebook()), 1.0, 2 / FB_MEAN**2 * 31.555),
], ids=["exp", "erlang", "pareto", "facebook-sx"])
def test_d1_is_pollaczek_khinchine(policy, runtime, m1, m2):
    for lam in (0.05, 0.5, 0.9):
        p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam / m1))
        assert p.mean == pytest.approx(_pk(lam / m1, m1, m2), rel=1e-12)
        assert p.mean == pytest.approx(qt.mg1.pk_mean(lam / m1, runtime.replica()), rel=1e-12)
        assert p.busy_fraction == pytest.approx(lam, rel=1e-12)
        assert p.cost == pytest.approx(m1, rel=1e-12)
        assert p.stable and p.exact


def test_d1_quantile_mm1():
    # M/M/1 response time ~ Exp(mu - lam): q-quantile -ln(1 - q) / (mu - lam)
    p = qt.analyze(qt.System(qt.RIQ(1), qt.IR(qt.Exponential(1.0)), arrival_rate=0.6))
    for q in (0.5, 0.95, 0.999):
        assert p.quantile(q) == pytest.approx(-math.log1p(-q) / 0.4, rel=1e-8)


@pytest.mark.slow   # 11 s: four 30-digit inversions checked at rising working precisions
def test_d1_high_precision_holds_the_digits_asked():
    # Random at load 0.3 (the float 0.3): the 30-digit values were 16 digits right (M/M/1 sf
    # 1.3e-16 relative off, the M/E2/1 median 4.8e-17) because the split weight 1 - rho and
    # E[B] inside the transform were floats; both now exact rationals at the working precision.
    # References (mpmath, 60 digits): M/E2/1 (Erlang(2, 2.0)) has the sojourn transform
    # 4 (1 - lam) / (s^2 + (4 - lam) s + 4 (1 - lam)), a hypoexponential with the rates
    # a, b = ((4 - lam) -+ sqrt((4 - lam)^2 - 16 (1 - lam))) / 2, P(T > t) = (b e^(-a t) -
    # a e^(-b t)) / (b - a), quantiles by findroot (the float level 0.99); M/D/1 by Erlang's
    # formula, P(T > 2.5) = 1 - (1 - lam) sum_{k <= 1} (lam (k - 1.5))^k e^(-lam (k - 1.5)) / k!
    with mpmath.workdps(40):   # the comparison itself, beyond the 30 digits
        e2 = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Erlang(2, 2.0)), arrival_rate=0.3,
                                  servers=1)).response_time
        md1 = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), arrival_rate=0.3,
                                   servers=1)).response_time
        for value, reference in (
                (e2.median(precision=30), "1.0645469494326064065687521001882891"),
                (e2.ppf(0.99, precision=30), "4.8248455246813453644997994377500762"),
                (e2.sf(2.0, precision=30), "0.19690222327644183917888540099476041"),
                (md1.sf(2.5, precision=30), "0.024174065643351557662628233421211751")):
            assert abs(value / mpmath.mpf(reference) - 1) < mpmath.mpf(10) ** -29
    # RIQ's weights come from the float root b of its fixed point: no high-precision path
    riq = qt.analyze(qt.System(qt.RIQ(2), qt.IR(qt.Erlang(2, 2.0)), arrival_rate=0.3))
    with pytest.raises(NotImplementedError, match="float root of its fixed point"):
        riq.response_time.sf(2.0, precision=30)


def test_d1_high_precision_needs_a_transform_in_mpmath():
    # an S&X runtime X S (X ~ Exp(1), S ~ Uniform(1, 2)) has a transform by quadrature in
    # double precision: the "30-digit" tail at t = 2, load 0.3, read 1.0 (both working
    # precisions agreed on it) where de Hoog at 50 digits on the P-K transform with the closed
    # form B~(s) = log((1 + 2 s) / (1 + s)) / s gives 0.3901756869005070813908824
    # (mpmath.invertlaplace, lam = 0.2); now refused, and the double path still answers
    # within its estimate
    runtime = qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 2.0))
    T = qt.analyze(qt.System(qt.Random(), runtime, arrival_rate=0.2, servers=1)).response_time
    with pytest.raises(NotImplementedError, match="no closed form in mpmath"):
        T.sf(2.0, precision=30)
    value, error = T.sf(2.0, full_output=True)
    assert abs(value - 0.3901756869005070813908824) <= error


def test_d1_high_precision_with_slowdowns_on_atoms():
    # X ~ Exp(1), S = 1 w.p. 3/4, 4 w.p. 1/4 (every parameter a binary fraction): the service
    # X S is hyperexponential, so the M/H2/1 response-time tail is a sum of exponentials whose
    # rates are the poles of the P-K transform (bisection at 60 digits in
    # ``python scripts/uniform_product_references.py``); the product's transform is a sum over
    # the atoms in mpmath (before: refused, "no closed form in mpmath")
    runtime = qt.SX(qt.Exponential(1.0), qt.Discrete([1.0, 4.0], [0.75, 0.25]))
    T = qt.analyze(qt.System(qt.Random(), runtime, arrival_rate=0.125, servers=1)).response_time
    assert T.high_precision
    with mpmath.workdps(40):
        want = {3.0: mpmath.mpf("0.2474804665296671206554209459695702"),
                25.0: mpmath.mpf("0.001857003893213325769251007727234629")}
        for t, tail in want.items():
            assert abs(T.sf(t, precision=30) - tail) <= mpmath.mpf(1e-29) * tail


# --------------------------------------------- worked example of docs/theory/riq.rst


def test_reference_facebook_values(facebook_sx):
    p = _riq(3, facebook_sx, 0.7)
    assert p.busy_fraction == pytest.approx(0.732885, abs=5e-7)
    assert p.mean == pytest.approx(1.777675, abs=5e-7)
    assert p.load == pytest.approx(0.7)
    assert "RIQ" in p.method and p.exact


def test_reference_facebook_quantiles(facebook_sx):
    p = _riq(3, facebook_sx, 0.7)
    # docs/theory/riq.rst, worked example (4 decimals): T_95 = 6.4559, T_99 = 10.6456
    assert p.quantile(0.95) == pytest.approx(6.4559, abs=5e-5)
    assert p.quantile(0.99) == pytest.approx(10.6456, abs=5e-5)
    T = p.response_time
    assert T.cdf(p.quantile(0.95)) == pytest.approx(0.95, abs=1e-9)
    assert T.lst(0.0) == pytest.approx(1.0, abs=1e-14)


# ------------------------------------------------------- the formulas re-derived in this file


def _facebook_min_mean(i):
    """E[min of i Facebook slowdowns] = sum_s P(S >= s)^i (integer support starting at 1)."""
    return sum(sum(FACEBOOK_PROBS[j:]) ** i for j in range(12))


def _facebook_min_second(i):
    return sum((2 * s - 1) * sum(FACEBOOK_PROBS[s - 1:]) ** i for s in FACEBOOK_VALUES)


def _riq_reference_sx_facebook(lam, d):
    """RIQ(d), S&X with X ~ Exp(E[S]) and the Facebook S, by hand from docs/theory/riq.rst,
    eqs. riq-group, riq-busy-rate, riq-fixed-point and riq-mean."""
    ex1, ex2 = 1 / FB_MEAN, 2 / FB_MEAN**2
    fm = [None] + [ex1 * _facebook_min_mean(i) for i in range(1, d + 1)]
    fm2 = [None] + [ex2 * _facebook_min_second(i) for i in range(1, d + 1)]

    def first(b, moments):
        return sum(math.comb(d - 1, j) * (1 - b) ** j * b ** (d - 1 - j) * moments[j + 1]
                   for j in range(d))

    def balance(b):  # b / (1 - b) = lam d E[Be] / (1 - rho_B)
        return b * (1 - lam * b ** (d - 1) * fm[1]) - (1 - b) * lam * d * first(b, fm)

    lo, hi = 0.0, 1.0
    for _ in range(200):  # plain bisection
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if balance(mid) < 0 else (lo, mid)
    b = 0.5 * (lo + hi)
    lam_b = lam * b ** (d - 1)
    immediate = sum(math.comb(d, i) * (1 - b) ** i * b ** (d - i) * fm[i] for i in range(1, d + 1))
    wait = first(b, fm2) / (2 * first(b, fm)) + lam_b * fm2[1] / (2 * (1 - lam_b * fm[1]))
    return b, immediate + b**d * (wait + fm[1])


@pytest.mark.parametrize("lam, d", [(0.7, 3), (0.3, 2), (0.9, 5), (0.5, 10), (0.95, 20)])
def test_riq_facebook_against_hand_derivation(facebook_sx, lam, d):
    b, mean = _riq_reference_sx_facebook(lam, d)
    p = _riq(d, facebook_sx, lam)
    assert p.busy_fraction == pytest.approx(b, rel=1e-11)
    assert p.mean == pytest.approx(mean, rel=1e-11)


@pytest.mark.parametrize("runtime", [
    qt.SX(qt.Exponential(FB_MEAN), qt.slowdowns.facebook()),
    qt.SX(qt.Erlang(2, 1.0), qt.Uniform(1.0, 3.0)),
    qt.IR(qt.Exponential(1.0)),
    qt.IR(qt.ShiftedExponential(0.3, 2.0)),
    qt.IR(qt.Pareto(1.5, 0.5)),
], ids=["facebook-sx", "uniform-sx", "ir-exp", "ir-shifted", "ir-pareto"])
@pytest.mark.parametrize("d", [2, 3, 8])
def test_work_conservation(runtime, d):
    """b = lam * cost: the busy fraction is the server time consumed per unit time per server."""
    for rho in (0.2, 0.6, 0.9):
        lam = rho / runtime.mean_runtime()
        p = _riq(d, runtime, lam)
        assert p.busy_fraction == pytest.approx(lam * p.cost, rel=1e-10)
        assert 0 < p.busy_fraction < 1
        # never more than d replicas' work per job
        assert p.cost <= d * runtime.mean_runtime()


# --------------------------------------------------------- IR exponential: mean-field CTMC check


def _riq_ir_exponential_ctmc(lam, d, mu=1.0):
    """Mean-field RIQ(d), IR Exp(mu): one server's CTMC (queue length, size of the replica group
    of its first service), the rest of the farm entering through the busy fraction b, which is
    the solution of b = 1 - pi0(b). A replica group of i idle servers runs at rate i mu."""
    def chain(b):
        probs = [math.comb(d - 1, j) * (1 - b) ** j * b ** (d - 1 - j) for j in range(d)]
        return _efs_ctmc(lam * d, lam * b ** (d - 1), [(j + 1) * mu for j in range(d)], probs, mu)

    b = optimize.brentq(lambda b: 1 - chain(b)[0] - b, 1e-9, 1 - 1e-9, xtol=1e-15, rtol=1e-15)
    _, pi, rates = chain(b)
    immediate = sum(math.comb(d, i) * (1 - b) ** i * b ** (d - i) / (i * mu)
                    for i in range(1, d + 1))
    return b, immediate + b**d * _ctmc_busy_response(pi, rates, mu), (pi, rates)


@pytest.mark.parametrize("lam, d", [(0.7, 2), (0.5, 3), (0.85, 4)])
def test_ir_exponential_against_ctmc(lam, d):
    b, mean, (pi, rates) = _riq_ir_exponential_ctmc(lam, d)
    p = _riq(d, qt.IR(qt.Exponential(1.0)), lam)
    assert p.busy_fraction == pytest.approx(b, rel=1e-9)
    assert p.mean == pytest.approx(mean, rel=1e-9)
    # the response-time transform: immediate groups Exp(i mu), else the CTMC's busy transform
    for s in (0.4, 1.0 + 2.0j):
        ref = sum(math.comb(d, i) * (1 - b) ** i * b ** (d - i) * i / (i + s)
                  for i in range(1, d + 1))
        ref += b**d * _ctmc_busy_response(pi, rates, 1.0, s)
        assert abs(complex(p.response_time.lst(s)) - ref) < 1e-9


# ----------------------------------------------------------------- finite-k simulation cross-check


def _simulate_riq(k, lam, d, n_jobs, model, seed):
    """RIQ(d) on k FCFS servers with cancel-on-complete, by the exact state update of
    docs/theory/model.rst, eq. model-state: V_j is the time server j's work runs out. Returns
    (response times, busy time)."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / (lam * k), n_jobs)).tolist()
    runtimes = model.sample_runtimes(n_jobs, d, rng).tolist()
    picks = rng.integers(0, k, size=(n_jobs, d))
    for j in range(1, d):  # redraw duplicates: d distinct servers, uniformly
        while True:
            dup = np.any(picks[:, :j] == picks[:, j:j + 1], axis=1)
            if not dup.any():
                break
            picks[dup, j] = rng.integers(0, k, size=int(dup.sum()))
    picks = picks.tolist()
    choice = rng.integers(0, d, size=n_jobs).tolist()
    V = [0.0] * k
    T = [0.0] * n_jobs
    work = [0.0] * n_jobs  # server time this job consumes, cancelled replicas included
    for n in range(n_jobs):
        t, P, r = arrivals[n], picks[n], runtimes[n]
        idle = [j for j in range(d) if V[P[j]] <= t]
        if idle:
            c = t + min(r[j] for j in idle)
            for j in idle:
                V[P[j]] = c
            work[n] = len(idle) * (c - t)
        else:
            j = choice[n]
            c = V[P[j]] + r[j]
            V[P[j]] = c
            work[n] = r[j]
        T[n] = c - t
    return np.array(T), np.array(work)


def _batch_ci(values, n_batches=20):
    """Mean and half-width of a two-sided 1e-3 batch-means interval (t quantile, 19 df)."""
    usable = values[: len(values) // n_batches * n_batches].reshape(n_batches, -1).mean(axis=1)
    return usable.mean(), 3.883 * usable.std(ddof=1) / math.sqrt(n_batches)


@pytest.mark.slow
@pytest.mark.parametrize("runtime, lam, d", [
    (qt.SX(qt.Exponential(FB_MEAN), qt.slowdowns.facebook()), 0.7, 3),
    (qt.IR(qt.Exponential(1.0)), 0.8, 2),
], ids=["facebook-sx", "ir-exp"])
def test_simulation_cross_check(runtime, lam, d):
    """k = 1000 servers, 1.2 million jobs, the first 20% discarded as warm-up.

    Tolerance: the 1e-3 batch-means interval plus a finite-k allowance of 0.5% of the mean
    (the k -> infinity limit has an O(1/k) bias; at k = 100 the worked example is already
    within 0.2% of the limit, so 0.5% at k = 1000 is generous)."""
    k, n = 1000, 1_200_000
    T, work = _simulate_riq(k, lam, d, n, runtime, seed=20240611)
    p = _riq(d, runtime, lam)
    mean, half = _batch_ci(T[n // 5:])
    assert abs(mean - p.mean) <= half + 0.005 * p.mean, (mean, half, p.mean)
    # busy fraction: work per job * arrival rate per server (lam jobs per server per unit time)
    cost, half_c = _batch_ci(work[n // 5:])
    assert abs(cost - p.cost) <= half_c + 0.005 * p.cost, (cost, half_c, p.cost)


# ---------------------------------------------------------------------- unstable and heavy tails


@pytest.mark.parametrize("rho", [1.0, 1.3, 50.0])
@pytest.mark.parametrize("d", [1, 3])
def test_unstable_is_a_result(facebook_sx, rho, d):
    p = _riq(d, facebook_sx, rho)
    assert not p.stable and p.mean == math.inf and p.load == pytest.approx(rho)
    assert p.busy_fraction == 1.0
    assert p.quantile(0.5) == math.inf and p.quantile(0.99) == math.inf
    assert not any(isinstance(v, float) and math.isnan(v) for v in p.to_dict().values())
    assert "unstable" in p.describe()


def test_infinite_second_moment_gives_infinite_mean_while_stable():
    for d in (1, 2, 5, 20):
        for runtime in (qt.IR(qt.Pareto(1.5, 0.1)),
                        qt.SX(qt.Pareto(1.8, 0.1), qt.slowdowns.facebook())):
            p = _riq(d, runtime, 0.5 / runtime.mean_runtime())
            assert p.stable and p.mean == math.inf
            assert 0 < p.busy_fraction < 1 and math.isfinite(p.cost)
    # a mean runtime of inf: load inf, unstable
    p = _riq(3, qt.IR(qt.Pareto(0.9, 1.0)), 0.1)
    assert not p.stable and p.load == math.inf and p.mean == math.inf


def test_tiny_arrival_rate_no_nan():
    """b^d underflows to 0 for tiny lam and large d; an infinite wait must not give NaN."""
    p = _riq(20, qt.IR(qt.Pareto(1.5, 1.0)), 1e-30)
    assert p.mean == math.inf and p.stable
    p = _riq(20, qt.IR(qt.Exponential(1.0)), 1e-30)
    # the mean tends to E[min of d runtimes] = 1 / d; b to lam * d * E[min of d]
    assert p.mean == pytest.approx(1 / 20, rel=1e-12)
    assert p.busy_fraction == pytest.approx(1e-30, rel=1e-9)


# ------------------------------------------------------------------------------ caching, inputs


def test_analyze_twice_is_identical(facebook_s, facebook_sx):
    a = _riq(4, facebook_sx, 0.6)
    b = _riq(4, facebook_sx, 0.6)
    fresh = qt.SX(qt.Exponential(facebook_s.mean()), qt.slowdowns.facebook())  # empty caches
    c = _riq(4, fresh, 0.6)
    for p in (b, c):
        assert (p.mean, p.busy_fraction, p.cost, p.load) == (a.mean, a.busy_fraction, a.cost,
                                                             a.load)
    assert a.quantile(0.9) == b.quantile(0.9) == c.quantile(0.9)
    # a different arrival rate on the warm cache is unaffected by the earlier call
    assert _riq(4, facebook_sx, 0.3).mean == _riq(
        4, qt.SX(qt.Exponential(facebook_s.mean()), qt.slowdowns.facebook()), 0.3).mean


def test_bad_input(facebook_sx):
    p = _riq(3, facebook_sx, 0.7)
    for q in (0.0, 1.0, -0.5, 2.0):
        with pytest.raises(ValueError, match=r"q must lie in the open interval \(0, 1\)"):
            p.quantile(q)
    with pytest.raises(ValueError, match="system must be a qt.System"):
        qt.analyze(qt.RIQ(3))
    with pytest.raises(ValueError, match="d must be an integer >= 1"):
        qt.RIQ(0)


# -------------------------------------------------------------------------- property-based tests

_runtimes = st.one_of(
    st.builds(lambda r: qt.IR(qt.Exponential(r)), st.floats(0.01, 100)),
    st.builds(lambda a, c: qt.IR(qt.Pareto(a, c)), st.floats(0.5, 5), st.floats(0.01, 10)),
    st.builds(lambda sh, r: qt.IR(qt.ShiftedExponential(sh, r)), st.floats(0, 5),
              st.floats(0.05, 20)),
    st.builds(lambda k, r: qt.IR(qt.Erlang(k, r)), st.integers(1, 8), st.floats(0.05, 20)),
    st.builds(lambda r: qt.SX(qt.Exponential(r), qt.slowdowns.facebook()), st.floats(0.01, 100)),
    st.builds(lambda a, c: qt.SX(qt.Pareto(a, c), qt.Uniform(1.0, 3.0)), st.floats(0.5, 5),
              st.floats(0.01, 10)),
)


@slow_without_numba   # 5 s without numba
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runtime=_runtimes, d=st.integers(1, 20),
       rho=st.one_of(st.floats(1e-6, 1.5), st.sampled_from([1e-12, 0.999999, 1.0, 1.000001])))
def test_properties(runtime, d, rho):
    mean_r = runtime.mean_runtime()
    lam = rho / mean_r if math.isfinite(mean_r) else rho
    p = _riq(d, runtime, lam)
    for value in (p.mean, p.busy_fraction, p.cost, p.load):
        assert not math.isnan(value) and value >= 0
    assert p.stable == stable_load(p.load)
    if not p.stable:
        assert p.mean == math.inf
    else:
        # b < 1, except that a load within rounding of 1 may give b = 1.0
        assert 0 < p.busy_fraction < 1 or (p.busy_fraction == 1.0 and p.load > 1 - 1e-12)
        assert p.busy_fraction == pytest.approx(lam * p.cost, rel=1e-8, abs=1e-300)
        assert p.mean >= runtime.fastest(d).mean() * (1 - 1e-12)  # never faster than d replicas
        x = runtime.X if isinstance(runtime, qt.SX) else runtime.R
        if isinstance(x, qt.Pareto) and x.alpha <= 2:
            assert p.mean == math.inf
        elif not isinstance(x, qt.Pareto):
            assert math.isfinite(p.mean)


def test_limit_flag(facebook_sx):
    # Random routing makes every server an exact M/G/1 queue for any k; RIQ(d >= 2) is the
    # k -> infinity limit. validate() widens its intervals by a finite-k allowance only then.
    assert not qt.analyze(qt.System(qt.Random(), facebook_sx, arrival_rate=0.5)).limit
    assert qt.analyze(qt.System(qt.RIQ(2), facebook_sx, arrival_rate=0.5)).limit


# ------------------------------------------------------------- laws with atoms: exact reference
#
# RIQ(2), S&X with X = Deterministic(0.5), S = {1, 3} w.p. {0.7, 0.3}, lam = 0.75 (issue 9,
# item 2). Every runtime is an atom, so the response time is known exactly in the time domain:
# * a job that finds i >= 1 of its d = 2 polled servers idle runs 0.5 min(S_1..S_i) (atoms);
# * otherwise it waits for the work of a busy server, U + W, then runs B = 0.5 S: U is the
#   equilibrium excess of the first service B_e = 0.5 min(S_1..S_I), I - 1 ~ Bin(1, 1 - b)
#   (density P(B_e > u) / E[B_e], piecewise constant), and W the M/G/1 wait with rate
#   lam_B = lam b and service B, by the generalisation of Erlang's M/D/1 formula to a service
#   with atoms (Takacs): P(W <= x) = (1 - rho_B) sum_n E[(lam (S_n - x))^n / n!
#   exp(lam (x - S_n)); S_n <= x], S_n a sum of n services; integrated in closed form over u
#   with int_0^Z z^n e^z / n! dz = e^Z P_n(Z) - (-1)^n, P_n(Z) = sum_k (-1)^(n-k) Z^k / k!;
# * b solves b (1 - lam b E[B]) = (1 - b) lam 2 E[B_e](b) (Gardner et al., ToN 2017;
#   docs/theory/riq.rst, riq-fixed-point), by mpmath.findroot. All in 60-digit mpmath,
#   independent of the library.

def _atom_case():
    with mpmath.workdps(60):
        lam, x = mpmath.mpf("0.75"), mpmath.mpf("0.5")
        s_vals, s_probs = [mpmath.mpf(1), mpmath.mpf(3)], [mpmath.mpf("0.7"), mpmath.mpf("0.3")]
        single = [(x * v, p) for v, p in zip(s_vals, s_probs)]
        pair = [(x * 1, 1 - s_probs[1] ** 2), (x * 3, s_probs[1] ** 2)]   # min(S_1, S_2)
        mean = lambda law: mpmath.fsum(v * p for v, p in law)   # noqa: E731
        b = mpmath.findroot(lambda b: b * (1 - lam * b * mean(single))
                            - (1 - b) * lam * 2 * (b * mean(single) + (1 - b) * mean(pair)),
                            mpmath.mpf("0.6"))
        first = [(v, b * p) for v, p in single] + [(v, (1 - b) * p) for v, p in pair]
        lam_b = lam * b
        weights = {2: (1 - b) ** 2, 1: 2 * b * (1 - b)}                   # i idle of 2 polled
        immediate = [(v, weights[1] * p) for v, p in single] + [(v, weights[2] * p)
                                                                for v, p in pair]
        return dict(b=b, first=first, service=single, lam_b=lam_b, all_busy=b * b,
                    immediate=immediate)


def _sums(service, n_max):
    out = [{mpmath.mpf(0): mpmath.mpf(1)}]
    for _ in range(n_max):
        nxt: dict = {}
        for c, p in out[-1].items():
            for v, q in service:
                nxt[c + v] = nxt.get(c + v, 0) + p * q
        out.append(nxt)
    return out


def _integrated_wait_cdf(x, lam, service):
    """int_0^x P(W <= v) dv for the M/G/1 wait with a service of finitely many atoms."""
    if x <= 0:
        return mpmath.mpf(0)
    rho = lam * mpmath.fsum(v * p for v, p in service)
    n_max = int(mpmath.floor(x / min(v for v, _ in service))) + 1
    total = mpmath.mpf(0)
    for n, dist in enumerate(_sums(service, n_max)):
        for c, p in dist.items():
            if c <= x:
                z = lam * (x - c)
                poly = mpmath.fsum((-1) ** (n - k) * z**k / mpmath.factorial(k)
                                   for k in range(n + 1))
                total += p * (-1) ** n / lam * (mpmath.exp(z) * poly - (-1) ** n)
    return (1 - rho) * total


def _atom_case_sf(t, case):
    """P(T > t) exactly (60 digits)."""
    with mpmath.workdps(60):
        t = mpmath.mpf(t)
        immediate = mpmath.fsum(p for v, p in case["immediate"] if v > t)
        first = sorted(case["first"])
        be = mpmath.fsum(v * p for v, p in first)
        # U has density P(B_e > u) / E[B_e] on the pieces between the atoms of B_e
        cuts = [mpmath.mpf(0)] + [v for v, _ in first]
        busy_cdf = mpmath.mpf(0)
        for bv, bp in case["service"]:
            y = t - bv
            if y <= 0:
                continue
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                if lo >= y:
                    break
                tail = mpmath.fsum(p for v, p in first if v > lo)
                upper = min(hi, y)
                busy_cdf += bp * tail / be * (
                    _integrated_wait_cdf(y - lo, case["lam_b"], case["service"])
                    - _integrated_wait_cdf(y - upper, case["lam_b"], case["service"]))
        return immediate + case["all_busy"] * (1 - busy_cdf)


@pytest.fixture(scope="module")
def atom_case():
    case = _atom_case()
    system = qt.System(qt.RIQ(2), qt.SX(qt.Deterministic(0.5), qt.Discrete([1, 3], [0.7, 0.3])),
                       arrival_rate=0.75)
    return case, qt.analyze(system)


def test_atoms_busy_fraction_against_exact(atom_case):
    case, p = atom_case
    assert p.busy_fraction == pytest.approx(float(case["b"]), rel=1e-12)


def test_atoms_tail_and_error_estimate_against_exact(atom_case):
    # Kinks of the CDF at multiples of 0.5; t = 2.64 is the point of issue 9.
    case, p = atom_case
    t = np.array([0.7, 1.2, 2.0, 2.3, 2.64, 3.7, 5.1, 8.3])
    value, error = p.response_time.sf(t, full_output=True)
    exact = np.array([float(_atom_case_sf(x, case)) for x in t])
    assert np.all(np.abs(value - exact) <= error)
    away = np.abs(2 * t - np.round(2 * t)) >= 0.2     # at least 0.1 from a kink
    assert np.all(np.abs(value - exact)[away] <= 1e-6 * exact[away])   # the target
    assert abs(value[4] - exact[4]) <= 1e-9 * exact[4]                  # t = 2.64


@pytest.mark.parametrize("level, lo, hi", [(0.95, 2.5, 2.8), (0.99, 3.0, 6.0)])
def test_atoms_quantiles_against_exact(atom_case, level, lo, hi):
    case, p = atom_case
    while hi - lo > 1e-13 * hi:   # bisection on the exact tail
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _atom_case_sf(mid, case) > 1 - level else (lo, mid)
    value, error = p.response_time.ppf(level, full_output=True)
    assert abs(value - hi) <= 1e-6 * hi
    assert abs(value - hi) <= error + 1e-13 * hi


def test_atoms_error_estimates_hold_near_every_kink(atom_case):
    # Within 0.1 of a kink the inversion converges slowly and unevenly (Gibbs-like in the number
    # of terms): the error is up to about 2e-5 relative there, and the estimate must cover it
    # on both sides at 0.001, 0.01 and 0.1 from the kinks at 1, 1.5, 2, 2.5 and 3.
    case, p = atom_case
    offsets = np.array([-0.1, -0.01, -0.001, 0.001, 0.01, 0.1])
    t = np.concatenate([k + offsets for k in (1.0, 1.5, 2.0, 2.5, 3.0)])
    value, error = p.response_time.sf(t, full_output=True)
    exact = np.array([float(_atom_case_sf(x, case)) for x in t])
    assert np.all(np.abs(value - exact) <= error)
    assert np.all(np.abs(value - exact) <= 5e-5 * exact)


def test_riq_uniform_runtimes_split_off_the_immediate_part():
    # RIQ(2), IR Uniform(1, 3), lam = 0.4: the fastest-of-i part (kinks at 1 and 3) is known in
    # the time domain and split off; only the queueing part is inverted. The CDF errors near
    # the kink at 3 fall from ~3e-7 (the whole law inverted) to below 1e-10, and each error
    # estimate covers the true error. Reference: w F_A(x) exactly (mpmath) plus (1 - w) times
    # the queueing part inverted by de Hoog at 60 and at 90 digits (they agree to 7e-11):
    #   T = qt.analyze(system).response_time; w, A, rest, _ = T._split
    #   with mpmath.workdps(90):
    #       R = qt.transforms._invert_mp_one(rest, mpmath.mpf(x), False, "dehoog")
    #       F_A = A.weights[0] * F_U(x) + A.weights[1] * (1 - (1 - F_U(x))**2)
    #       reference = w * F_A + (1 - w) * R
    system = qt.System(qt.RIQ(2), qt.IR(qt.Uniform(1, 3)), arrival_rate=0.4)
    T = qt.analyze(system).response_time
    x = np.array([1.5, 2.0, 2.9, 3.1])
    reference = np.array([0.09693929888898451, 0.2073182462010925, 0.4454385923167866,
                          0.4896594567995146])
    value, error = T.cdf(x, full_output=True)
    assert np.all(np.abs(value - reference) <= error + 7e-11)
    assert np.all(np.abs(value - reference) <= 1e-10)
    # the median: the reference CDF (90 digits) at the fast root t0 = 3.16952536827 is
    # 1/2 - 2.8e-12, so the median is t0 + 1.9e-11 (the whole law inverted gave 3.16952562)
    median, err = T.median(full_output=True)
    assert abs(median - 3.16952536829) <= err + 1e-10


@pytest.mark.parametrize("d, lam, true", [
    (2, 1e-4, 2.7988804682086387743e-8), (2, 1e-6, 2.7999888000468396309e-12),
    (2, 1e-8, 2.7999998880000045064e-16), (3, 1e-6, 1.889982990102059427e-17)])
def test_queued_weight_at_tiny_loads(d, lam, true):
    # P(T > 1.3) = b^d P(E + W + 1 > 1.3), all in the queued part: its weight was 1 - float(1
    # - b^d), 4.6e-6 relative off at 1e-6 and 11% at 1e-8, with 1e-11 stated; the literals are
    # from scripts/riq_tiny_load_references.py (mpmath, the fixed point and the M/D/1 wait)
    system = qt.System(qt.RIQ(d), qt.IR(qt.Deterministic(1.0)), arrival_rate=lam)
    value, error = qt.analyze(system).response_time.sf(1.3, full_output=True)
    assert abs(value - true) <= error
    assert error <= 1e-10 * true
