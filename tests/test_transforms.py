"""Tests of queuetheory.transforms against independent closed forms.

Every reference value below comes from a closed-form distribution function derived next to it,
never from another numerical inversion (except the explicit fast-versus-mpmath agreement tests).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuetheory.transforms import (
    invert_cdf,
    invert_cdf_mp,
    invert_quantile,
    invert_quantile_mp,
    invert_sf,
    invert_sf_mp,
)

# Targets of the fast path: absolute error on the CDF, relative error on the SF down to 1e-4.
CDF_ABS = 1e-9
SF_REL = 1e-7


def exponential_lst(a):
    """Exp(a): E[exp(-sT)] = int_0^inf a e^{-a t} e^{-s t} dt = a / (a + s)."""
    return lambda s: a / (a + s)


def erlang_lst(k, rate):
    """Erlang-k: sum of k independent Exp(rate), so the LST is (rate / (rate + s))^k."""
    return lambda s: (rate / (rate + s)) ** k


def erlang_sf(k, rate, t):
    """P(Erlang-k > t) = P(Poisson(rate t) < k) = sum_{i<k} e^{-x} x^i / i!, x = rate t > 0
    (each term summed as exp(i log x - x - log i!) so that large k does not overflow)."""
    x = rate * np.asarray(t, dtype=float)
    return sum(np.exp(i * np.log(x) - x - math.lgamma(i + 1)) for i in range(k))


def mixture_lst(weights, rates):
    """Hyperexponential: with probability w_i an Exp(r_i), so the LST is sum_i w_i r_i/(r_i+s)."""
    return lambda s: sum(w * r / (r + s) for w, r in zip(weights, rates, strict=True))


def mixture_sf(weights, rates, t):
    """P(T > t) = sum_i w_i exp(-r_i t)."""
    t = np.asarray(t, dtype=float)
    return sum(w * np.exp(-r * t) for w, r in zip(weights, rates, strict=True))


def pk_response_lst(lam, service_lst):
    """Pollaczek-Khinchine response time of M/G/1: (1 - rho) s B(s) / (s - lam (1 - B(s)))."""
    def lst(s):
        b = service_lst(s)
        rho = lam * mean_of(service_lst)
        return (1 - rho) * s * b / (s - lam * (1 - b))
    return lst


def mean_of(service_lst):
    """E[B] read off the ``mean`` attribute attached by the helpers below."""
    return service_lst.mean


def exponential_service(mu):
    """Exp(mu) service time B(s) = mu / (mu + s), with E[B] = 1/mu."""
    def b(s):
        return mu / (mu + s)
    b.mean = 1.0 / mu
    return b


# Parameters of the M/M/1 queue used throughout: lam = 0.7, mu = 1, rho = 0.7.
LAM, MU = 0.7, 1.0
RHO = LAM / MU


def mm1_pk_lst():
    """M/M/1 response time in P-K form. With B(s) = mu/(mu+s):
    (1-rho) s mu/(mu+s) / (s - lam s/(mu+s)) = (1-rho) mu / (mu - lam + s) = (mu-lam)/(mu-lam+s),
    i.e. Exp(mu - lam)."""
    return pk_response_lst(LAM, exponential_service(MU))


def mm1_wait_lst(s):
    """M/M/1 waiting time: (1-rho) s / (s - lam (1 - B(s))) = (1-rho) (mu+s)/(mu-lam+s)
    = (1-rho) + rho (mu-lam)/(mu-lam+s): an atom 1-rho at 0, else Exp(mu-lam); hence
    P(W <= t) = 1 - rho exp(-(mu-lam) t)."""
    b = MU / (MU + s)
    return (1 - RHO) * s / (s - LAM * (1 - b))


# M/D/1 with D = 1, lam = 0.7: waiting-time LST (1-rho) s / (s - lam (1 - e^{-sD})).
MD1_LAM, MD1_D = 0.7, 1.0


def md1_wait_lst_np(s):
    return (1 - MD1_LAM * MD1_D) * s / (s - MD1_LAM * (1 - np.exp(-s * MD1_D)))


def md1_wait_lst_mp(s):
    return (1 - MD1_LAM * MD1_D) * s / (s - MD1_LAM * (1 - mpmath.exp(-s * MD1_D)))


def md1_wait_cdf(x):
    """Erlang's (Crommelin's) formula for the M/D/1 waiting time:
    P(W <= x) = (1 - rho) sum_{k=0}^{floor(x/D)} [lam (k D - x)]^k / k! e^{-lam (k D - x)}.
    The sum alternates with large terms, so it is evaluated with 50 digits."""
    with mpmath.workdps(50):
        x = mpmath.mpf(x)
        lam, d = mpmath.mpf(MD1_LAM), mpmath.mpf(MD1_D)
        total = mpmath.fsum((lam * (k * d - x)) ** k / mpmath.factorial(k)
                            * mpmath.exp(-lam * (k * d - x))
                            for k in range(int(mpmath.floor(x / d)) + 1))
        return float((1 - lam * d) * total)


# M/G/1 with a 12-point discrete slowdown: B = X S, X ~ Exp(r), P(S = j) = p_j, so
# B(s) = sum_j p_j r / (r + s j) and E[B] = sum_j p_j j / r; lam is set for rho = 0.7.
SLOW_R = 4.691
SLOW_P = (0.23, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002)


def slowdown_mg1_lst():
    mean_b = sum(p * j for j, p in enumerate(SLOW_P, start=1)) / SLOW_R
    lam = 0.7 / mean_b

    def service(s):
        return sum(p * SLOW_R / (SLOW_R + s * j) for j, p in enumerate(SLOW_P, start=1))
    service.mean = mean_b
    return pk_response_lst(lam, service), mean_b / 0.3


# --------------------------------------------------------------------------- CDF and SF


@pytest.mark.parametrize("a", [0.3, 1.0, 25.0])
def test_exponential_cdf_sf(a):
    lst = exponential_lst(a)
    t = np.linspace(0.0, -math.log(1e-4) / a, 301)
    assert np.max(np.abs(invert_cdf(lst, t) - (1 - np.exp(-a * t)))) <= CDF_ABS
    assert np.max(np.abs(invert_sf(lst, t) / np.exp(-a * t) - 1)) <= SF_REL


@pytest.mark.parametrize("k", [2, 5, 20, 50])
def test_erlang(k):
    rate = 3.0 * k     # mean 1/3
    lst = erlang_lst(k, rate)
    t = np.geomspace(1e-3, 3.0, 400)
    sf = erlang_sf(k, rate, t)
    assert np.max(np.abs(invert_cdf(lst, t) - (1 - sf))) <= CDF_ABS
    keep = sf >= 1e-4
    assert np.max(np.abs(invert_sf(lst, t)[keep] / sf[keep] - 1)) <= SF_REL


def test_hyperexponential():
    weights, rates = (0.05, 0.15, 0.3, 0.5), (0.01, 0.3, 2.0, 40.0)   # squared CV about 80
    lst = mixture_lst(weights, rates)
    t = np.geomspace(1e-4, 1e3, 500)
    sf = mixture_sf(weights, rates, t)
    assert np.max(np.abs(invert_cdf(lst, t) - (1 - sf))) <= CDF_ABS
    keep = sf >= 1e-4
    assert np.max(np.abs(invert_sf(lst, t)[keep] / sf[keep] - 1)) <= SF_REL


def test_mm1_in_pollaczek_khinchine_form_is_exponential():
    lst = mm1_pk_lst()
    t = np.linspace(0.0, 30.0, 301)   # SF down to exp(-9) ~ 1.2e-4
    a = MU - LAM
    assert np.max(np.abs(invert_cdf(lst, t) - (1 - np.exp(-a * t)))) <= CDF_ABS
    assert np.max(np.abs(invert_sf(lst, t) / np.exp(-a * t) - 1)) <= SF_REL


def test_sf_relative_accuracy_deeper_in_the_tail():
    # Documented figure: relative error <= 2e-7 down to SF = 1e-6 (M/M/1, SF = exp(-0.3 t)).
    t = np.linspace(30.0, -math.log(1e-6) / 0.3, 50)
    assert np.max(np.abs(invert_sf(mm1_pk_lst(), t) / np.exp(-0.3 * t) - 1)) <= 2e-7


def test_atom_at_zero():
    # P(W = 0) = 1 - rho for the M/M/1 waiting time; CDF(t) = 1 - rho exp(-(mu - lam) t).
    assert invert_cdf(mm1_wait_lst, 0.0) == pytest.approx(1 - RHO, abs=1e-12)
    assert invert_sf(mm1_wait_lst, 0.0) == pytest.approx(RHO, abs=1e-12)
    t = np.array([1e-6, 0.1, 1.0, 10.0])
    assert np.allclose(invert_cdf(mm1_wait_lst, t), 1 - RHO * np.exp(-(MU - LAM) * t),
                       rtol=0, atol=CDF_ABS)
    assert invert_cdf_mp(mm1_wait_lst, 0.0) == pytest.approx(1 - RHO, abs=1e-12)


def test_zero_and_infinite_times_of_a_continuous_distribution():
    lst = exponential_lst(2.0)
    assert invert_cdf(lst, 0.0) == 0.0
    assert invert_sf(lst, 0.0) == 1.0
    assert invert_cdf(lst, math.inf) == 1.0
    assert invert_sf(lst, math.inf) == 0.0
    assert invert_cdf(lst, 1e-300) == 0.0
    assert invert_sf(lst, 1e300) == 0.0
    assert invert_sf_mp(lst, 0.0) == 1.0
    assert invert_sf_mp(lst, math.inf) == 0.0


def test_shapes_and_types():
    lst = exponential_lst(1.0)
    assert isinstance(invert_cdf(lst, 1.0), float)
    assert isinstance(invert_sf(lst, np.float64(1.0)), float)
    grid = np.linspace(0.0, 5.0, 12).reshape(3, 4)
    assert invert_cdf(lst, grid).shape == (3, 4)
    assert invert_sf(lst, grid.tolist()).shape == (3, 4)
    assert invert_quantile(lst, np.full((2, 3), 0.5)).shape == (2, 3)
    assert isinstance(invert_quantile(lst, 0.5), float)
    assert isinstance(invert_cdf_mp(lst, 1.0), float)
    assert invert_sf_mp(lst, [0.5, 1.0]).shape == (2,)


def test_lst_returning_a_scalar_broadcasts():
    # T = 0 almost surely: lst = 1, CDF = 1 everywhere (including the atom at 0).
    assert invert_cdf(lambda s: 1.0, [0.0, 1.0]).tolist() == [1.0, 1.0]
    assert invert_quantile(lambda s: 1.0, 0.9) == 0.0


def test_cdf_plus_sf_is_one():
    lst, _ = slowdown_mg1_lst()
    t = np.geomspace(1e-3, 1e3, 200)
    assert np.max(np.abs(invert_cdf(lst, t) + invert_sf(lst, t) - 1)) <= 1e-10


def test_nearly_deterministic_distributions_are_refined():
    # Erlang-500 (squared CV 1/500) needs more Euler terms than the first rule (its error peaks
    # at about 3e-8 near t = 1.9 with 40 blocks): the adaptive refinement finds them, and the
    # error estimate bounds the true error (closed-form Erlang CDF as reference).
    k, rate = 500, 500.0
    t = np.linspace(0.5, 2.0, 151)
    exact = 1 - erlang_sf(k, rate, t)
    value, error = invert_cdf(erlang_lst(k, rate), t, full_output=True)
    assert np.max(np.abs(value - exact)) <= CDF_ABS
    assert np.all(np.abs(value - exact) <= error)


# --------------------------------------------------------------------------- M/D/1


def test_md1_waiting_time_fast_path_is_sane():
    # Atom 1 - rho at 0, a density jump at D: the documented accuracy is about 4e-4 at D,
    # 1e-6 outside [0.85 D, 2.1 D] and 1e-8 beyond 3.8 D.
    t = np.linspace(0.0, 12.0, 121)
    exact = np.array([md1_wait_cdf(x) for x in t])
    cdf = invert_cdf(md1_wait_lst_np, t)
    sf = invert_sf(md1_wait_lst_np, t)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.isfinite(cdf))
    assert np.max(np.abs(cdf + sf - 1)) <= 1e-10
    err = np.abs(cdf - exact)
    assert cdf[0] == pytest.approx(1 - MD1_LAM * MD1_D, abs=1e-12)
    assert np.max(err) <= 5e-4
    assert np.max(err[(t < 0.85) | (t > 2.1)]) <= 1e-6
    assert np.max(err[t > 3.8]) <= 1e-8
    assert np.all(np.diff(cdf) >= -1e-4)


def test_md1_waiting_time_mp_path_against_erlang_formula():
    for x, tol in [(0.5, 1e-20), (1.5, 1e-11)]:
        got = invert_cdf_mp(md1_wait_lst_mp, x, precision=30)
        assert got == pytest.approx(md1_wait_cdf(x), rel=tol, abs=0)


def test_md1_response_time_quantile_away_from_the_jump():
    # T = W + D, so P(T <= t) = P(W <= t - D); the CDF jumps by 1 - rho at D. Away from the
    # jump the fast quantile is accurate: P(T <= x) = 0.99 at x = D + w_0.99.
    def lst(s):
        return md1_wait_lst_np(s) * np.exp(-s * MD1_D)
    x = invert_quantile(lst, 0.99, mean=2.0)
    assert md1_wait_cdf(x - MD1_D) == pytest.approx(0.99, abs=1e-8)


# --------------------------------------------------------------------------- mpmath path


def test_mp_against_closed_forms():
    a = MU - LAM
    for t in (0.5, 4.0, 40.0):
        assert invert_sf_mp(mm1_pk_lst(), t) == pytest.approx(math.exp(-a * t), rel=1e-14)
        assert invert_cdf_mp(mm1_pk_lst(), t, method="cohen") == pytest.approx(
            -math.expm1(-a * t), rel=1e-14)
    # Deep tail (2e-44) stays relatively accurate with 40 digits.
    assert invert_sf_mp(exponential_lst(1.0), 100.0, precision=40) == pytest.approx(
        math.exp(-100.0), rel=1e-12)


@pytest.mark.parametrize("method", ["dehoog", "cohen", "talbot", "stehfest"])
def test_mp_methods_on_erlang(method):
    # All four methods are fine on a smooth transform with a pole on the negative real axis.
    assert invert_sf_mp(erlang_lst(3, 2.0), 1.2, method=method) == pytest.approx(
        float(erlang_sf(3, 2.0, 1.2)), rel=1e-12)


def test_fast_agrees_with_mp_on_slowdown_mg1():
    lst, mean = slowdown_mg1_lst()
    t = np.array([0.1, 1.0, 3.0, 10.0, 30.0])   # SF from 0.99 down to about 2e-4
    mp_sf = invert_sf_mp(lst, t, method="cohen")
    assert mp_sf[-1] >= 1e-4
    assert np.max(np.abs(invert_sf(lst, t) / mp_sf - 1)) <= SF_REL
    assert np.max(np.abs(invert_cdf(lst, t) - invert_cdf_mp(lst, t, method="cohen"))) <= CDF_ABS


# --------------------------------------------------------------------------- quantiles


@pytest.mark.parametrize("q", [1e-6, 0.01, 0.3, 0.5, 0.9, 0.99, 0.999, 0.9999])
@pytest.mark.parametrize("a", [0.02, 1.0, 300.0])
def test_exponential_quantiles(q, a):
    exact = -math.log1p(-q) / a            # F(t) = 1 - exp(-a t) = q
    assert invert_quantile(exponential_lst(a), q) == pytest.approx(exact, rel=1e-9)
    assert invert_quantile(exponential_lst(a), q, mean=1 / a) == pytest.approx(exact, rel=1e-9)


def test_quantiles_vectorised():
    q = np.array([[0.1, 0.5], [0.99, 0.999]])
    exact = -np.log1p(-q) / 0.3
    got = invert_quantile(mm1_pk_lst(), q, mean=1 / 0.3)
    assert np.allclose(got, exact, rtol=1e-9, atol=0)


def test_quantiles_with_an_atom():
    # P(W <= t) = 1 - rho exp(-(mu-lam) t): the quantile is 0 for q <= 1 - rho, else
    # t = log(rho / (1 - q)) / (mu - lam).
    q = np.array([0.1, 0.3, 0.31, 0.9, 0.99])
    exact = np.where(q <= 1 - RHO, 0.0, np.log(RHO / (1 - q)) / (MU - LAM))
    assert np.allclose(invert_quantile(mm1_wait_lst, q), exact, rtol=1e-9, atol=0)
    assert invert_quantile_mp(mm1_wait_lst, 0.2, method="cohen") == 0.0


def test_erlang_quantile_lower_branch():
    # Erlang-4 with rate 4: solve P(T <= x) = q independently by bisection on the closed form.
    q = 0.001
    lo, hi = 0.0, 5.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 1 - erlang_sf(4, 4.0, mid) < q else (lo, mid)
    assert invert_quantile(erlang_lst(4, 4.0), q, mean=1.0) == pytest.approx(hi, rel=1e-8)


def test_quantile_mp_against_closed_form():
    exact = -math.log(0.01) / 0.3
    got = invert_quantile_mp(mm1_pk_lst(), 0.99, mean=1 / 0.3)
    assert got == pytest.approx(exact, rel=1e-12)
    got = invert_quantile_mp(mm1_pk_lst(), [0.25, 0.999], method="cohen")
    assert np.allclose(got, -np.log1p(-np.array([0.25, 0.999])) / 0.3, rtol=1e-12, atol=0)


def test_fast_quantile_agrees_with_mp_on_slowdown_mg1():
    lst, mean = slowdown_mg1_lst()
    fast = invert_quantile(lst, 0.99, mean=mean)
    ref = invert_quantile_mp(lst, 0.99, mean=mean, method="cohen")
    assert fast == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("a", [1e-9, 1e12])
def test_quantile_bracket_extends_far_from_the_default_scale(a):
    # No mean hint: the grid around 1 must be extended up (a = 1e-9) or down (a = 1e12).
    assert invert_quantile(exponential_lst(a), 0.99) == pytest.approx(-math.log(0.01) / a,
                                                                      rel=1e-9)


def test_quantile_within_round_off_of_the_atom_is_zero():
    # True quantile log(rho / (1 - q)) / (mu - lam) = 4.8e-12 for q = 1 - rho + 1e-12: below
    # what the CDF resolves (absolute error ~1e-12), so it comes out as (nearly) 0;
    # q = 1 - rho + 1e-4 is resolved (relative error ~ 1e-12 / 1e-4).
    assert invert_quantile(mm1_wait_lst, 1 - RHO + 1e-12) <= 1e-10
    q = 1 - RHO + 1e-4
    assert invert_quantile(mm1_wait_lst, q) == pytest.approx(
        math.log(RHO / (1 - q)) / (MU - LAM), rel=1e-6)


def test_many_levels_at_once_invert_the_cdf():
    lst, mean = slowdown_mg1_lst()
    q = np.linspace(0.001, 0.999, 200)
    x = invert_quantile(lst, q, mean=mean)
    assert np.all(np.diff(x) > 0)
    assert np.max(np.abs(invert_cdf(lst, x) - q)) <= 1e-10


def test_quantile_mp_lower_tail():
    # Exp(0.3): the 1e-6 quantile is -log(1 - 1e-6) / 0.3, solved in log t by the mp path.
    got = invert_quantile_mp(mm1_pk_lst(), 1e-6, mean=1 / 0.3, method="cohen")
    assert got == pytest.approx(-math.log1p(-1e-6) / 0.3, rel=1e-12)


def test_defective_transform_cannot_be_bracketed():
    with pytest.raises(ValueError, match="bracket"):
        invert_quantile(lambda s: 0.5 / (1 + s), 0.9)     # P(T = inf) = 1/2
    with pytest.raises(ValueError, match="bracket"):
        invert_quantile_mp(lambda s: 0.5 / (1 + s), 0.9, method="cohen")


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("func", [invert_cdf, invert_sf, invert_cdf_mp, invert_sf_mp])
@pytest.mark.parametrize("t", [-1.0, [0.5, -1e-9], math.nan])
def test_bad_times(func, t):
    with pytest.raises(ValueError, match="t must be >= 0"):
        func(exponential_lst(1.0), t)


@pytest.mark.parametrize("func", [invert_quantile, invert_quantile_mp])
@pytest.mark.parametrize("q", [0.0, 1.0, -0.5, 1.5, math.nan, [0.5, 1.0], []])
def test_bad_levels(func, q):
    with pytest.raises(ValueError, match=r"q must lie in the open interval \(0, 1\)"):
        func(exponential_lst(1.0), q)


@pytest.mark.parametrize("precision", [14, 0, 30.5, True, "30"])
def test_bad_precision(precision):
    for func, arg in [(invert_cdf_mp, 1.0), (invert_sf_mp, 1.0), (invert_quantile_mp, 0.5)]:
        with pytest.raises(ValueError, match="precision must be an integer >= 15"):
            func(exponential_lst(1.0), arg, precision=precision)


def test_bad_method_mean_and_tuning():
    lst = exponential_lst(1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        invert_cdf_mp(lst, 1.0, method="euler")
    for mean in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="mean must be a finite number > 0"):
            invert_quantile(lst, 0.5, mean=mean)
        with pytest.raises(ValueError, match="mean must be a finite number > 0"):
            invert_quantile_mp(lst, 0.5, mean=mean)
    with pytest.raises(ValueError, match="rtol"):
        invert_quantile(lst, 0.5, rtol=0.0)
    with pytest.raises(ValueError, match="damping"):
        invert_cdf(lst, 1.0, damping=-1.0)
    with pytest.raises(ValueError, match="n_terms"):
        invert_sf(lst, 1.0, n_terms=0)
    with pytest.raises(ValueError, match="n_euler"):
        invert_cdf(lst, 1.0, n_euler=2.5)


def test_non_finite_lst_values_raise():
    with pytest.raises(ValueError, match="non-finite"):
        invert_cdf(lambda s: np.full(np.shape(s), np.nan), 1.0)


# --------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(
    components=st.lists(
        st.tuples(st.floats(0.01, 1.0), st.floats(-2.0, 2.0)), min_size=1, max_size=4),
    t=st.floats(min_value=0.0, max_value=1e3, exclude_min=True),
)
def test_random_exponential_mixtures(components, t):
    total = sum(w for w, _ in components)
    weights = [w / total for w, _ in components]
    rates = [10.0**e for _, e in components]
    lst = mixture_lst(weights, rates)
    cdf, sf = invert_cdf(lst, t), invert_sf(lst, t)
    assert math.isfinite(cdf) and 0.0 <= cdf <= 1.0
    assert math.isfinite(sf) and 0.0 <= sf <= 1.0
    exact = float(mixture_sf(weights, rates, t))
    assert abs(cdf - (1 - exact)) <= CDF_ABS
    assert abs(sf - exact) <= max(CDF_ABS * exact, 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    components=st.lists(
        st.tuples(st.floats(0.01, 1.0), st.floats(-2.0, 2.0)), min_size=1, max_size=4),
    q=st.floats(min_value=0.001, max_value=0.999),
)
def test_random_mixture_quantiles_invert_the_cdf(components, q):
    total = sum(w for w, _ in components)
    weights = [w / total for w, _ in components]
    rates = [10.0**e for _, e in components]
    x = invert_quantile(mixture_lst(weights, rates), q)
    assert math.isfinite(x) and x > 0
    assert 1 - float(mixture_sf(weights, rates, x)) == pytest.approx(q, abs=1e-9)
