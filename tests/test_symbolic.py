"""Tests of queuetheory.symbolic.

Every symbolic form is compared (1) with the numeric implementation at seeded random parameter
points and (2) with an independent derivation: a symbolic identity (reduction, limit, series,
integral), a high-precision mpmath evaluation of a different formula, or the exact CTMC of a
small system.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import sparse
from scipy.sparse.linalg import spsolve

import queuetheory as qt
from queuetheory import symbolic as qs

RNG_SEED = 20240611
TOL = 1e-11  # relative; both sides are double-precision evaluations of the same quantity


def _services(rng):
    """A few service laws with random parameters (exponential, Erlang, deterministic, H2)."""
    p = rng.uniform(0.1, 0.9)
    return [qt.Exponential(rng.uniform(0.5, 3.0)),
            qt.Erlang(int(rng.integers(2, 5)), rng.uniform(0.5, 3.0)),
            qt.Deterministic(rng.uniform(0.2, 2.0)),
            qt.HyperExponential([p, 1 - p], list(rng.uniform(0.3, 4.0, size=2)))]


def _number(expr, values: dict) -> complex:
    """Evaluate ``expr`` after substituting ``values`` (function applications first)."""
    calls = {key: val for key, val in values.items() if isinstance(key, sp.Function)}
    rest = {key: val for key, val in values.items() if key not in calls}
    return complex(sp.N(expr.subs(calls).subs(rest), 30))


def _close(x, y, tol=TOL):
    return abs(complex(x) - complex(y)) <= tol * max(1.0, abs(complex(y)))


def _service_values(Bdist, s0=None) -> dict:
    values = {qs.EB: Bdist.mean(), qs.EB2: Bdist.moment(2)}
    if s0 is not None:
        values[qs.B(qs.s)] = complex(Bdist.lst(s0))
        values[qs.s] = s0
    return values


# ---------------------------------------------------------------------------------------------
# Pollaczek-Khinchine and M/M/1


def test_pollaczek_khinchine_matches_mg1_numeric():
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(3):
        for Bdist in _services(rng):
            lam0 = rng.uniform(0.05, 0.95) / Bdist.mean()
            s0 = complex(rng.uniform(0.05, 3.0), rng.uniform(-3.0, 3.0))
            values = {qs.lam: lam0, **_service_values(Bdist, s0)}
            assert _close(_number(qs.pollaczek_khinchine_mean(), values),
                          qt.mg1.pk_mean(lam0, Bdist))
            assert _close(_number(qs.pollaczek_khinchine_wait_mean(), values),
                          qt.mg1.pk_mean(lam0, Bdist) - Bdist.mean())
            assert _close(_number(qs.pollaczek_khinchine_lst(), values),
                          qt.mg1.pk_lst(lam0, Bdist)(s0))
            # waiting time LST times the service LST is the response time LST
            assert _close(_number(qs.pollaczek_khinchine_wait_lst(), values)
                          * values[qs.B(qs.s)], qt.mg1.pk_lst(lam0, Bdist)(s0))


def test_pollaczek_khinchine_lst_derivative_gives_mean():
    # B(s) = 1 - E[B] s + E[B^2] s^2 / 2 + O(s^3): -dT/ds at 0 must be the P-K mean
    c3 = sp.Symbol("c3", positive=True)
    taylor = sp.Lambda(qs.s, 1 - qs.EB * qs.s + qs.EB2 * qs.s**2 / 2 - c3 * qs.s**3 / 6)
    for lst, mean in [(qs.pollaczek_khinchine_lst(), qs.pollaczek_khinchine_mean()),
                      (qs.pollaczek_khinchine_wait_lst(), qs.pollaczek_khinchine_wait_mean())]:
        T = sp.series(lst.subs(qs.B, taylor), qs.s, 0, 2).removeO()
        assert sp.simplify(T.coeff(qs.s, 0) - 1) == 0
        assert sp.simplify(-T.coeff(qs.s, 1) - mean) == 0


def test_mm1_is_pollaczek_khinchine_with_exponential_service():
    exp_service = qs.exponential_service()
    assert sp.simplify(qs.pollaczek_khinchine_mean().subs(exp_service) - qs.mm1_mean()) == 0
    assert sp.simplify(qs.pollaczek_khinchine_lst().subs(exp_service) - qs.mm1_lst()) == 0
    # the tail is the Laplace inversion of the LST: LST of the density -d/dt sf
    sp_pos = sp.Symbol("sigma", positive=True)
    lam0, mu0 = sp.Rational(1, 3), sp.Integer(2)
    density = -sp.diff(qs.mm1_sf(), qs.t).subs({qs.lam: lam0, qs.mu: mu0})
    lst = sp.integrate(density * sp.exp(-sp_pos * qs.t), (qs.t, 0, sp.oo))
    assert sp.simplify(lst - qs.mm1_lst().subs({qs.lam: lam0, qs.mu: mu0, qs.s: sp_pos})) == 0
    assert qs.mm1_sf().subs(qs.t, 0) == 1
    assert math.isclose(float(qs.mm1_mean().subs({qs.lam: 0.5, qs.mu: 1})),
                        qt.mg1.pk_mean(0.5, qt.Exponential(1.0)), rel_tol=1e-15)


# ---------------------------------------------------------------------------------------------
# M/G/1 with exceptional first service


def test_efs_matches_mg1_numeric():
    rng = np.random.default_rng(RNG_SEED + 1)
    for _ in range(3):
        services = _services(rng)
        for Bdist, Be in itertools.product(services[:2], services[2:]):
            lam_b = rng.uniform(0.0, 0.95) / Bdist.mean()
            lam_i = rng.uniform(0.1, 3.0)
            s0 = complex(rng.uniform(0.05, 3.0), rng.uniform(-3.0, 3.0))
            values = {qs.lam_I: lam_i, qs.lam_B: lam_b, qs.EBe: Be.mean(),
                      qs.EBe2: Be.moment(2), qs.Be(qs.s): complex(Be.lst(s0)),
                      **_service_values(Bdist, s0)}
            assert _close(_number(qs.efs_busy_fraction(), values),
                          qt.mg1.efs_busy_fraction(lam_i, lam_b, Be, Bdist))
            assert _close(_number(qs.efs_busy_response_mean(), values),
                          qt.mg1.efs_busy_response_mean(lam_b, Be, Bdist))
            assert _close(_number(qs.efs_busy_response_lst(), values),
                          qt.mg1.efs_busy_response_lst(lam_b, Be, Bdist)(s0))


def test_efs_without_exception_is_pollaczek_khinchine():
    # same arrival rate idle and busy and B_e = B: an ordinary M/G/1, whose response time is
    # B if the arrival finds it idle (prob 1 - b) and the busy response time otherwise
    plain = {qs.lam_I: qs.lam, qs.lam_B: qs.lam, qs.EBe: qs.EB, qs.EBe2: qs.EB2, qs.Be: qs.B}
    busy = qs.efs_busy_fraction().subs(plain)
    assert sp.simplify(busy - qs.lam * qs.EB) == 0
    mean = (1 - busy) * qs.EB + busy * qs.efs_busy_response_mean().subs(plain)
    assert sp.simplify(mean - qs.pollaczek_khinchine_mean()) == 0
    lst = (1 - busy) * qs.B(qs.s) + busy * qs.efs_busy_response_lst().subs(plain)
    assert sp.simplify(lst - qs.pollaczek_khinchine_lst()) == 0


# ---------------------------------------------------------------------------------------------
# RIQ(d), k -> infinity


def _fastest_values(model, d: int, s0=None) -> dict:
    values = {}
    for x in range(1, d + 1):
        values[qs.EBi(x)] = model.fastest_moment(x, 1)
        values[qs.EBi2(x)] = model.fastest_moment(x, 2)
        if s0 is not None:
            values[qs.Bi(x, qs.s)] = complex(model.fastest(x).lst(s0))
    if s0 is not None:
        values[qs.s] = s0
    return values


def _solve_busy_fraction(d: int, lam0: float, values: dict) -> mpmath.mpf:
    """Root in (0, 1) of the symbolic fixed point, by mpmath at 30 digits (not brentq)."""
    eq = qs.riq_fixed_point(d).subs(values).subs(qs.lam, lam0)
    g = sp.lambdify(qs.b, eq.lhs - eq.rhs, "mpmath")
    with mpmath.workdps(30):
        return mpmath.findroot(g, (mpmath.mpf("1e-12"), 1 - mpmath.mpf("1e-12")),
                               solver="anderson")


def _riq_models(rng):
    S = qt.slowdowns.facebook()
    p = rng.uniform(0.1, 0.9)
    return [qt.IR(qt.Exponential(rng.uniform(0.5, 2.0))),
            qt.IR(qt.Erlang(2, rng.uniform(0.5, 2.0))),
            qt.IR(qt.HyperExponential([p, 1 - p], list(rng.uniform(0.3, 4.0, size=2)))),
            qt.SX(X=qt.Exponential(rng.uniform(0.5, 2.0) * S.mean()), S=S)]


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_riq_matches_analysis(d):
    rng = np.random.default_rng(RNG_SEED + 10 + d)
    mean, lst = qs.riq_mean(d), qs.riq_lst(d)
    for model in _riq_models(rng):
        lam0 = rng.uniform(0.05, 0.95) / model.mean_runtime()
        s0 = complex(rng.uniform(0.05, 2.0), rng.uniform(-2.0, 2.0))
        pred = qt.analyze(qt.System(qt.RIQ(d), model, lam0))
        values = _fastest_values(model, d, s0)
        b_mp = _solve_busy_fraction(d, lam0, values)
        assert math.isclose(float(b_mp), pred.busy_fraction, rel_tol=1e-10)
        values.update({qs.b: pred.busy_fraction, qs.lam: lam0})
        assert _close(_number(mean, values), pred.mean, 1e-10)
        assert _close(_number(lst, values), pred.response_time.lst(s0), 1e-10)


def test_riq_published_sx_facebook_value():
    # docs/theory/riq.rst, worked example (simulation-checked): Dolly S, exponential X with
    # E[X] E[S] = 1, lam = 0.7, d = 3 gives b = 0.732885, E[T] = 1.777675
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    values = _fastest_values(model, 3)
    b0 = _solve_busy_fraction(3, 0.7, values)
    assert abs(float(b0) - 0.732885) < 5e-7
    values.update({qs.b: b0, qs.lam: 0.7})
    assert abs(_number(qs.riq_mean(3), values).real - 1.777675) < 5e-7


def test_riq_reduces_to_pollaczek_khinchine_for_d_1():
    to_pk = {qs.EBi(1): qs.EB, qs.EBi2(1): qs.EB2, qs.Bi(1, qs.s): qs.B(qs.s)}
    (root,) = sp.solve(qs.riq_fixed_point(1).subs(to_pk), qs.b)
    assert sp.simplify(root - qs.lam * qs.EB) == 0
    mean = qs.riq_mean(1).subs(to_pk).subs(qs.b, root)
    assert sp.simplify(mean - qs.pollaczek_khinchine_mean()) == 0
    lst = qs.riq_lst(1).subs(to_pk).subs(qs.b, root)
    assert sp.simplify(lst - qs.pollaczek_khinchine_lst()) == 0


@pytest.mark.parametrize("d", [2, 3, 5])
def test_riq_exponential_replicas_busy_fraction_is_load(d):
    # independent derivation: i exponential(mu) replicas started together all stop after
    # Exp(i mu), costing i / (i mu) = 1 / mu of server time, as one replica would: b = lam / mu
    eq = qs.riq_fixed_point(d).subs(qs.exponential_replicas())
    assert sp.simplify((eq.lhs - eq.rhs).subs(qs.b, qs.lam / qs.mu)) == 0


def test_riq_symbolic_d_sums_match_explicit_forms():
    for d0 in (1, 2, 3):
        for general, explicit in [(qs.riq_mean(), qs.riq_mean(d0)),
                                  (qs.riq_lst(), qs.riq_lst(d0)),
                                  (qs.riq_first_service_moment(order=2),
                                   qs.riq_first_service_moment(d0, 2))]:
            assert sp.simplify(general.subs(qs.d, d0).doit() - explicit) == 0
        eq = qs.riq_fixed_point()
        eq0 = qs.riq_fixed_point(d0)
        assert sp.simplify((eq.lhs - eq.rhs).subs(qs.d, d0).doit() - (eq0.lhs - eq0.rhs)) == 0


# ---------------------------------------------------------------------------------------------
# Redundancy-d with independent exponential runtimes


def test_redundancy_d_tail_reductions():
    sf = qs.redundancy_d_sf()
    assert sp.simplify(sf.subs(qs.t, 0)) == 1
    # d -> 1: the M/M/1 tail exp(-(mu - lam) t) with rho = lam / mu
    limit = sp.limit(sf, qs.d, 1)
    assert sp.simplify(limit - qs.mm1_sf().subs(qs.lam, qs.rho * qs.mu)) == 0
    assert sp.simplify(qs.redundancy_d_sf(1) - limit) == 0
    # d = 2: the explicit form, and its integral over t is the d = 2 closed-form mean
    sf2 = qs.redundancy_d_sf(2)
    assert sp.simplify(sf2 - (qs.rho + (1 - qs.rho) * sp.exp(qs.mu * qs.t)) ** -2) == 0
    # (rho = x / (1 + x), x > 0, keeps 1 - rho visibly positive for the logarithms)
    x = sp.Symbol("x", positive=True)
    gap = sp.integrate(sf2, (qs.t, 0, sp.oo)) - qs.redundancy_d2_mean()
    assert sp.simplify(gap.subs(qs.rho, x / (1 + x))) == 0


def test_redundancy_d2_closed_form_equals_series_and_hypergeometric():
    # Taylor coefficients of rho^2 mu E[T] are those of the series, rho^(j+2) / (j + 2)
    closed = sp.series(qs.redundancy_d2_mean() * qs.mu * qs.rho**2, qs.rho, 0, 14).removeO()
    partial = sum(qs.rho ** (x + 2) / (x + 2) for x in range(12))
    assert sp.expand(closed - partial) == 0
    hyper = sp.hyperexpand(qs.redundancy_d_mean_hyper(2))
    assert sp.simplify(hyper - qs.redundancy_d2_mean()) == 0
    assert sp.simplify(qs.redundancy_d_mean_hyper(1) - qs.mm1_mean().subs(qs.lam,
                                                                         qs.rho * qs.mu)) == 0


def test_redundancy_d_tail_integrates_to_mean():
    rng = np.random.default_rng(RNG_SEED + 20)
    with mpmath.workdps(30):
        for d0 in (2, 3, 5, 2.5):
            rho0, mu0 = rng.uniform(0.05, 0.95), rng.uniform(0.5, 3.0)
            # exact rationals: sympy's Sum.evalf truncates Float ratios (sympy issue 23102)
            point = {qs.rho: sp.Rational(rho0), qs.mu: sp.Rational(mu0)}
            dd = sp.nsimplify(d0)
            sf = sp.lambdify(qs.t, qs.redundancy_d_sf(dd).subs(point), "mpmath")
            integral = mpmath.quad(sf, [0, 1, mpmath.inf])
            series = mpmath.nsum(lambda x, d0=d0, rho0=rho0: mpmath.mpf(rho0) ** x
                                 / (x * (d0 - 1) + d0), [0, mpmath.inf]) / mu0
            summed = sp.N(qs.redundancy_d_mean(dd).subs(point), 25)
            hyper = sp.N(qs.redundancy_d_mean_hyper(dd).subs(point), 25)
            for value in (series, summed, hyper):
                assert abs(integral - mpmath.mpf(str(value))) < 1e-20 * integral


def _redundancy_ctmc_mean(k: int, d: int, lam0: float, mu0: float, cap: int) -> float:
    """Mean response time of Redundancy-d on k servers from its CTMC, at most ``cap`` jobs.

    State: the classes (sets of d servers) of the jobs present, in FCFS order. A server works
    on the oldest job holding one of its copies; a job leaves at rate mu0 times the number of
    its copies in service (its copies are cancelled). Arrivals beyond ``cap`` are blocked.
    """
    classes = list(itertools.combinations(range(k), d))
    states = [()]
    for length in range(1, cap + 1):
        states.extend(itertools.product(range(len(classes)), repeat=length))
    index = {state: x for x, state in enumerate(states)}
    rows, cols, rates = [], [], []
    arrival = k * lam0 / len(classes)
    for x, state in enumerate(states):
        if len(state) < cap:
            for c in range(len(classes)):
                rows.append(x)
                cols.append(index[state + (c,)])
                rates.append(arrival)
        taken: set[int] = set()
        for pos, c in enumerate(state):
            serving = sum(1 for srv in classes[c] if srv not in taken)
            taken.update(classes[c])
            if serving:
                rows.append(x)
                cols.append(index[state[:pos] + state[pos + 1:]])
                rates.append(mu0 * serving)
    size = len(states)
    Q = sparse.csr_matrix((rates, (rows, cols)), shape=(size, size))
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = sparse.vstack([sparse.csr_matrix(np.ones((1, size))), Q.T.tocsr()[1:]]).tocsc()
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = spsolve(A, rhs)
    jobs = np.array([len(state) for state in states])
    return float(pi @ jobs) / (k * lam0)  # Little's law


@pytest.mark.parametrize("k, d, lam0, cap", [(3, 2, 0.1, 7), (3, 2, 0.15, 7), (4, 3, 0.1, 6)])
def test_redundancy_d_finite_mean_matches_ctmc(k, d, lam0, cap):
    exact = float(qs.redundancy_d_finite_mean(k, d).subs({qs.lam: lam0, qs.mu: 1}))
    below = _redundancy_ctmc_mean(k, d, lam0, 1.0, cap - 1)
    at_cap = _redundancy_ctmc_mean(k, d, lam0, 1.0, cap)
    # blocking arrivals only lowers the mean, so the truncated means increase towards the exact
    # one; the increments shrink geometrically (ratio about 1/5 to 1/9 here, assumed <= 1/2), so the
    # exact mean lies within one more increment of the cap-truncated one
    assert below < at_cap <= exact * (1 + 1e-12)
    assert exact - at_cap <= at_cap - below


def test_redundancy_d_finite_mean_reductions_and_large_k_limit():
    for k0 in range(1, 6):
        # k = d: every job on every server, one M/M/1 at rates k lam, k mu
        assert sp.simplify(qs.redundancy_d_finite_mean(k0, k0)
                           - 1 / (k0 * (qs.mu - qs.lam))) == 0
        # d = 1: independent M/M/1 queues
        assert sp.simplify(qs.redundancy_d_finite_mean(k0, 1) - qs.mm1_mean()) == 0
    # k -> infinity: the O(1/k) Riemann-sum error is removed by Richardson extrapolation from
    # k = 1000 and 2000; the O(1/k^2) remainder is about C / k^2 with C = O(1) (allow 1e-5)
    for d0, rho0 in [(2, 0.5), (3, 0.7)]:
        term = qs.redundancy_d_finite_mean(qs.k, d0).function.subs({qs.lam: rho0, qs.mu: 1})
        f = sp.lambdify((qs.i, qs.k), term, "mpmath")
        with mpmath.workdps(30):
            finite = {k0: mpmath.fsum(f(x, k0) for x in range(d0, k0 + 1))
                      for k0 in (1000, 2000)}
            limit = mpmath.mpf(str(sp.N(qs.redundancy_d_mean(d0).subs(
                {qs.rho: sp.Rational(rho0), qs.mu: 1}), 25)))
            assert abs(2 * finite[2000] - finite[1000] - limit) < 1e-5 * limit


# ---------------------------------------------------------------------------------------------
# Exponential order statistics, MDS and replication without removal


@pytest.mark.parametrize("r0, n0", [(1, 1), (1, 4), (3, 5), (5, 5), (7, 12)])
def test_exponential_order_statistics_against_quadrature(r0, n0):
    rng = np.random.default_rng(RNG_SEED + 100 * r0 + n0)
    rate, s0, t0 = rng.uniform(0.3, 3.0), rng.uniform(0.1, 3.0), rng.uniform(0.1, 2.0)
    point = {qs.a: rate, qs.s: s0, qs.t: t0}
    with mpmath.workdps(30):
        # density of the r-th of n: n!/((r-1)!(n-r)!) F^(r-1) (1-F)^(n-r) f
        coef = mpmath.factorial(n0) / (mpmath.factorial(r0 - 1) * mpmath.factorial(n0 - r0))

        def density(x):
            F = -mpmath.expm1(-rate * x)
            return coef * F ** (r0 - 1) * mpmath.exp(-rate * x * (n0 - r0 + 1)) * rate

        mean = mpmath.quad(lambda x: x * density(x), [0, 1, mpmath.inf])
        lst = mpmath.quad(lambda x: mpmath.exp(-s0 * x) * density(x), [0, 1, mpmath.inf])
        cdf = mpmath.betainc(r0, n0 - r0 + 1, 0, -mpmath.expm1(-rate * t0), regularized=True)
    assert _close(_number(qs.exponential_order_statistic_mean(r0, n0), point), mean, 1e-13)
    assert _close(_number(qs.exponential_order_statistic_lst(r0, n0), point), lst, 1e-13)
    assert _close(_number(qs.exponential_order_statistic_cdf(r0, n0), point), cdf, 1e-13)
    # the symbolic-size forms evaluate to the same thing
    general = qs.exponential_order_statistic_mean().subs({qs.r: r0, qs.n: n0}).doit()
    assert sp.simplify(general - qs.exponential_order_statistic_mean(r0, n0)) == 0
    # numeric implementation in queuetheory.orderstats
    assert _close(qt.orderstats.exponential_mean(r0, n0, rate), mean, 1e-12)


@pytest.mark.parametrize("n0, m0", [(1, 0), (2, 1), (5, 3), (10, 2)])
def test_mds_without_removal(n0, m0):
    rng = np.random.default_rng(RNG_SEED + 7 * n0 + m0)
    mu0 = rng.uniform(0.5, 2.0)
    lam0 = rng.uniform(0.05, 0.95) * mu0 * n0 / (n0 + m0)
    a0 = mu0 - (n0 + m0) * lam0 / n0  # M/M/1 sojourn rate at the per-server coded-job rate
    point = {qs.lam: lam0, qs.mu: mu0}
    rate_sub = {qs.a: qs.mu - (n0 + m0) * qs.lam / n0}
    order = qs.exponential_order_statistic_mean(n0, n0 + m0).subs(rate_sub)
    assert sp.simplify(qs.mds_mean(n0, m0) - order) == 0
    with mpmath.workdps(30):
        # E[T] = int P(fewer than n of n + m Exp(a) sojourns done by t) dt
        mean = mpmath.quad(lambda x: 1 - mpmath.betainc(n0, m0 + 1, 0, -mpmath.expm1(-a0 * x),
                                                        regularized=True),
                           [0, 1 / a0, mpmath.inf])
    assert _close(_number(qs.mds_mean(n0, m0), point), mean, 1e-13)
    sf = sp.lambdify(qs.t, 1 - qs.mds_cdf(n0, m0).subs(point), "mpmath")
    with mpmath.workdps(30):
        assert _close(mpmath.quad(sf, [0, 1 / a0, mpmath.inf]), mean, 1e-13)
    t0 = rng.uniform(0.1, 3.0)
    assert _close(_number(qs.mds_cdf(n0, m0), {**point, qs.t: t0}),
                  qt.orderstats.iid_cdf(n0, n0 + m0, -math.expm1(-a0 * t0)), 1e-12)


@pytest.mark.parametrize("n0, d0", [(1, 1), (2, 2), (5, 3), (10, 2)])
def test_replication_without_removal(n0, d0):
    rng = np.random.default_rng(RNG_SEED + 11 * n0 + d0)
    mu0 = rng.uniform(0.5, 2.0)
    lam0 = rng.uniform(0.05, 0.95) * mu0 / d0
    a0 = mu0 - d0 * lam0
    point = {qs.lam: lam0, qs.mu: mu0}
    with mpmath.workdps(30):
        # the batch is done when all n jobs are, each at the first of d Exp(a) sojourns
        mean = mpmath.quad(lambda x: 1 - (-mpmath.expm1(-d0 * a0 * x)) ** n0,
                           [0, 1 / a0, mpmath.inf])
    assert _close(_number(qs.replication_mean(n0, d0), point), mean, 1e-13)
    order = qs.exponential_order_statistic_mean(n0, n0, d0 * (qs.mu - d0 * qs.lam))
    assert sp.simplify(qs.replication_mean(n0, d0) - order) == 0
    # the symbolic CDF integrates to the mean (tail formula)
    sf = sp.lambdify(qs.t, 1 - qs.replication_cdf(n0, d0).subs(point), "mpmath")
    with mpmath.workdps(30):
        assert _close(mpmath.quad(sf, [0, 1 / a0, mpmath.inf]), mean, 1e-13)


# ---------------------------------------------------------------------------------------------
# Comparisons with the numeric analyses of Redundancy-d and MDS / replication


@pytest.mark.parametrize("d0", [1, 2, 3, 5])
def test_redundancy_d_against_analysis(d0):
    rng = np.random.default_rng(RNG_SEED + 30 + d0)
    mu0 = rng.uniform(0.5, 2.0)
    lam0 = rng.uniform(0.05, 0.95) * mu0
    system = qt.System(qt.RedundancyD(d0), qt.IR(qt.Exponential(mu0)), lam0)
    point = {qs.rho: sp.Rational(lam0) / sp.Rational(mu0), qs.mu: sp.Rational(mu0),
             qs.lam: sp.Rational(lam0)}
    pred = qt.analyze(system)
    limit = float(sp.N(qs.redundancy_d_mean(d0).subs(point), 20))
    assert math.isclose(pred.mean, limit, rel_tol=1e-10)
    sf = sp.lambdify(qs.t, qs.redundancy_d_sf(d0).subs(point), "mpmath")
    for t0 in rng.uniform(0.0, 5.0 / mu0, size=4):
        assert _close(pred.response_time.sf(t0), sf(t0), 1e-9)
    k0 = 6
    finite = float(qs.redundancy_d_finite_mean(k0, d0).subs(point))
    assert math.isclose(qt.analyze(system.replace(servers=k0)).mean, finite, rel_tol=1e-10)


@pytest.mark.parametrize("policy", [qt.MDS(n=1, m=0, remove=False),
                                    qt.MDS(n=5, m=2, remove=False),
                                    qt.MDS(n=10, m=3, remove=False),
                                    qt.Replication(n=1, d=3, remove=False),
                                    qt.Replication(n=5, d=2, remove=False)])
def test_mds_and_replication_against_analysis(policy):
    rng = np.random.default_rng(RNG_SEED + 40 + policy.polled)
    mu0 = rng.uniform(0.5, 2.0)
    if isinstance(policy, qt.MDS):
        lam0 = rng.uniform(0.05, 0.95) * mu0 * policy.n / (policy.n + policy.m)
        mean, cdf = qs.mds_mean(policy.n, policy.m), qs.mds_cdf(policy.n, policy.m)
    else:
        lam0 = rng.uniform(0.05, 0.95) * mu0 / policy.d
        mean, cdf = qs.replication_mean(policy.n, policy.d), qs.replication_cdf(policy.n,
                                                                                 policy.d)
    point = {qs.lam: lam0, qs.mu: mu0}
    pred = qt.analyze(qt.System(policy, qt.IR(qt.Exponential(mu0)), lam0))
    assert math.isclose(pred.mean, float(mean.subs(point)), rel_tol=1e-10)
    for t0 in rng.uniform(0.05, 3.0, size=3) * pred.mean:
        assert _close(pred.response_time.sf(t0), 1 - float(cdf.subs(point).subs(qs.t, t0)), 1e-8)


# ---------------------------------------------------------------------------------------------
# Rendering and argument checks


def test_every_form_renders_to_latex():
    forms = [name for name in qs.__all__ if callable(getattr(qs, name))
             and not isinstance(getattr(qs, name), sp.FunctionClass)
             and name not in ("exponential_service", "exponential_replicas")]
    assert len(forms) >= 25
    for name in forms:
        expr = getattr(qs, name)()
        text = sp.latex(expr)
        assert text and "None" not in text, name
    assert sp.latex(qs.EBi(2) ** 2) == r"\left(\mathbb{E}[B_{(2)}]\right)^{2}"
    assert sp.latex(qs.EB**2) == r"\mathbb{E}[B]^{2}"
    assert str(qs.Bi(3, qs.s)) == "B_(3)~(s)"


def test_bad_sizes_raise_value_error():
    with pytest.raises(ValueError, match="d must be an integer >= 1"):
        qs.riq_mean(0)
    with pytest.raises(ValueError, match="d must be an integer in"):
        qs.redundancy_d_finite_mean(2, 3)
    with pytest.raises(ValueError, match="r must be an integer in"):
        qs.exponential_order_statistic_mean(5, 3)
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        qs.riq_first_service_moment(2, order=3)
    with pytest.raises(ValueError, match="m must be an integer >= 0"):
        qs.mds_mean(2, -1)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        qs.replication_mean(1.5, 2)
