"""Tests of queuetheory.distributions against scipy.stats, mpmath and closed forms.

Every reference value is computed here independently of the code under test: scipy.stats for
cdf/sf/pdf/ppf/moments, mpmath quadrature at 30 digits for Laplace-Stieltjes transforms (LSTs),
exhaustive enumeration for discrete minima, and seeded samples with a stated false-failure rate
(KS / chi-square p-value threshold 1e-3, or z = 3.3 confidence intervals).
"""

from __future__ import annotations

import itertools
import math
import pickle
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

import queuetheory as qt
from queuetheory import distributions
from queuetheory.analysis.redundancy import TabulatedResponseTime
from queuetheory.transforms import invert_quantile_mp

# ------------------------------------------------------------------------------------------------
# Reference catalogue: each queuetheory family beside an independent scipy.stats description and
# its density written out for mpmath (continuous) or its atoms (discrete).
# ------------------------------------------------------------------------------------------------


class _Case:
    """A family, its scipy reference (a list of (weight, frozen) pairs) and mpmath density."""

    def __init__(self, name, make, scipy_mix, mp_pdf=None, breakpoints=None, atoms=None,
                 moments=None):
        self.moments = moments
        self.name = name
        self.make = make
        self.scipy_mix = scipy_mix
        self.mp_pdf = mp_pdf
        self.breakpoints = breakpoints
        self.atoms = atoms

    def ref_cdf(self, x):
        return sum(w * f.cdf(x) for w, f in self.scipy_mix)

    def ref_sf(self, x):
        return sum(w * f.sf(x) for w, f in self.scipy_mix)

    def ref_pdf(self, x):
        return sum(w * f.pdf(x) for w, f in self.scipy_mix)

    def ref_moment(self, k):
        if self.moments is not None:
            return self.moments(k)
        return sum(w * f.moment(k) for w, f in self.scipy_mix)

    def ref_ppf(self, q):
        if len(self.scipy_mix) == 1:
            return self.scipy_mix[0][1].ppf(q)
        # a mixture: solve sf(x) = 1 - q (exact in floating point for q >= 1/2) by Brent's method
        return np.array([optimize.brentq(lambda x, v=v: self.ref_sf(x) - (1 - v), 0, 1e6,
                                         xtol=1e-300, rtol=1e-15) for v in np.atleast_1d(q)])

    def mp_lst(self, s):
        """30-digit reference LST: mpmath quadrature of exp(-s x) f(x), or a sum over atoms."""
        s = mpmath.mpmathify(s)
        if self.atoms is not None:
            # the floats' probabilities over their exact sum: a law of mass 1 (0.1 + 0.4 + 0.25
            # + 0.25 is 1 + 2.8e-17 in binary)
            total = mpmath.fsum(mpmath.mpf(p) for _, p in self.atoms)
            return mpmath.fsum(mpmath.mpf(p) * mpmath.exp(-s * v) for v, p in self.atoms) / total
        return mpmath.quad(lambda x: mpmath.exp(-s * x) * self.mp_pdf(x), self.breakpoints)


def _mpf(v):
    # the double the library receives, exactly (a decimal 0.3 would be a different law)
    return mpmath.mpf(float(v))


CONTINUOUS = [
    _Case("exponential", lambda: qt.Exponential(rate=2.0), [(1.0, stats.expon(scale=0.5))],
          lambda x: 2 * mpmath.exp(-2 * x), [0, 1, mpmath.inf]),
    _Case("erlang", lambda: qt.Erlang(3, 1.5), [(1.0, stats.gamma(3, scale=1 / 1.5))],
          lambda x: _mpf(1.5) ** 3 * x**2 * mpmath.exp(-_mpf(1.5) * x) / 2, [0, 2, mpmath.inf]),
    _Case("hyperexponential", lambda: qt.HyperExponential([0.3, 0.7], [0.5, 4.0]),
          [(0.3, stats.expon(scale=2.0)), (0.7, stats.expon(scale=0.25))],
          # normalised by the floats' exact sum, 1 - 5.6e-17 in binary: a law of mass 1
          lambda x: (_mpf(0.3) * _mpf(0.5) * mpmath.exp(-x / 2)
                     + _mpf(0.7) * 4 * mpmath.exp(-4 * x)) / (_mpf(0.3) + _mpf(0.7)),
          [0, 1, mpmath.inf]),
    _Case("shifted-exponential", lambda: qt.ShiftedExponential(0.5, 2.0),
          [(1.0, stats.expon(loc=0.5, scale=0.5))],
          lambda x: 2 * mpmath.exp(-2 * (x - _mpf(0.5))), [_mpf(0.5), 2, mpmath.inf]),
    _Case("uniform", lambda: qt.Uniform(1.0, 3.0), [(1.0, stats.uniform(1.0, 2.0))],
          lambda x: mpmath.mpf(1) / 2, [1, 3]),
    _Case("uniform-from-0", lambda: qt.Uniform(0.0, 2.0), [(1.0, stats.uniform(0.0, 2.0))],
          lambda x: mpmath.mpf(1) / 2, [0, 2]),
    _Case("pareto", lambda: qt.Pareto(alpha=2.5, scale=1.5), [(1.0, stats.pareto(2.5, scale=1.5))],
          lambda x: _mpf(2.5) * _mpf(1.5) ** _mpf(2.5) / x ** _mpf(3.5),
          [_mpf(1.5), 10, 100, mpmath.inf],
          # closed form alpha c^k / (alpha - k): scipy's pareto.moment(2) is off by 1e-11
          moments=lambda k: 2.5 * 1.5**k / (2.5 - k) if k < 2.5 else math.inf),
    _Case("bounded-pareto", lambda: qt.BoundedPareto(1.5, 1.0, 100.0),
          [(1.0, stats.truncpareto(1.5, 100.0, scale=1.0))],
          lambda x: _mpf(1.5) / x ** _mpf(2.5) / (1 - mpmath.mpf(100) ** _mpf(-1.5)),
          [1, 10, 100]),
]

_DISCRETE_VALUES = [0.5, 1.0, 2.0, 4.0]
_DISCRETE_PROBS = [0.1, 0.4, 0.25, 0.25]
DISCRETE = [
    _Case("discrete", lambda: qt.Discrete(_DISCRETE_VALUES, _DISCRETE_PROBS),
          [(1.0, stats.rv_discrete(values=(_DISCRETE_VALUES, _DISCRETE_PROBS)))],
          atoms=list(zip(_DISCRETE_VALUES, _DISCRETE_PROBS))),
    _Case("deterministic", lambda: qt.Deterministic(2.0),
          [(1.0, stats.rv_discrete(values=([2.0], [1.0])))], atoms=[(2.0, 1.0)]),
]
ALL = CONTINUOUS + DISCRETE

X_GRID = np.array([0.0, 0.3, 0.5, 0.999, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 7.0, 30.0, 1e3, np.inf])
Q_GRID = np.array([1e-10, 1e-3, 0.05, 0.3, 0.5, 0.77, 0.95, 0.999, 1 - 1e-9])
S_REAL = [0.0, 1e-9, 0.1, 1.0, 7.5]
S_COMPLEX = [0.3 + 0.4j, 1.0 - 2.0j, 3.0 + 2.0j]


def _ids(cases):
    return [c.name for c in cases]


# ------------------------------------------------------------------------------- cdf, sf, pdf


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_cdf_sf_match_scipy(case):
    dist = case.make()
    np.testing.assert_allclose(dist.cdf(X_GRID), case.ref_cdf(X_GRID), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dist.sf(X_GRID), case.ref_sf(X_GRID), rtol=1e-12, atol=1e-15)
    # scalar in, float out
    assert isinstance(dist.cdf(1.0), float) and isinstance(dist.sf(1.0), float)
    assert dist.cdf(-1.0) == 0.0 and dist.sf(-1.0) == 1.0


@pytest.mark.parametrize("case", CONTINUOUS, ids=_ids(CONTINUOUS))
def test_pdf_matches_scipy(case):
    dist = case.make()
    # away from support end points, where a density has no single value
    x = np.array([0.2, 0.7, 1.2, 1.7, 2.2, 2.9, 5.0, 20.0, 90.0])
    np.testing.assert_allclose(dist.pdf(x), case.ref_pdf(x), rtol=1e-12, atol=1e-15)
    assert dist.pdf(-1.0) == 0.0


def test_discrete_pmf_and_no_pdf():
    D = qt.Discrete(_DISCRETE_VALUES, _DISCRETE_PROBS)
    np.testing.assert_allclose(D.pmf([0.5, 1.0, 1.5, 4.0, 5.0]), [0.1, 0.4, 0.0, 0.25, 0.0])
    with pytest.raises(ValueError, match="pmf"):
        D.pdf(1.0)
    assert qt.Deterministic(2.0).pmf(2.0) == 1.0


# ------------------------------------------------------------------------------------- ppf


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_ppf_matches_scipy(case):
    dist = case.make()
    ref = case.ref_ppf(Q_GRID)
    got = dist.ppf(Q_GRID)
    if dist.discrete:
        np.testing.assert_array_equal(got, ref)
    else:
        # a quantile found from the cdf is only determined to |dq| / f(x), dq ~ 2 ulp(1): the
        # tolerance is 1e-9 relative plus that conditioning limit
        cond = 4.4e-16 / case.ref_pdf(ref)
        assert np.all(np.abs(got - ref) <= 1e-9 * ref + cond), (got, ref)
    assert dist.ppf(0.0) >= 0.0


@pytest.mark.parametrize("case", CONTINUOUS, ids=_ids(CONTINUOUS))
def test_ppf_inverts_cdf(case):
    dist = case.make()
    q = np.array([0.01, 0.25, 0.5, 0.75, 0.99])
    np.testing.assert_allclose(case.ref_cdf(dist.ppf(q)), q, rtol=1e-10)


def test_ppf_rejects_levels_outside_unit_interval():
    X = qt.Exponential(1.0)
    for q in (-0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match=r"q must lie in \[0, 1\]"):
            X.ppf(q)
    assert X.ppf(1.0) == math.inf


# ------------------------------------------------------------------------------------ moments


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_moments_match_scipy(case):
    dist = case.make()
    for k in (1, 2):
        assert dist.moment(k) == pytest.approx(case.ref_moment(k), rel=1e-12)
    # Pareto(2.5) has no third moment; the others do
    finite_third = case.name != "pareto"
    if finite_third:
        assert dist.moment(3) == pytest.approx(case.ref_moment(3), rel=1e-12)
    else:
        assert dist.moment(3) == math.inf
    ref_var = case.ref_moment(2) - case.ref_moment(1) ** 2
    assert dist.mean() == pytest.approx(case.ref_moment(1), rel=1e-12)
    assert dist.var() == pytest.approx(ref_var, rel=1e-10, abs=1e-15)


def test_pareto_infinite_moments():
    # E[X^k] = inf exactly for k >= alpha
    heavy = qt.Pareto(alpha=1.5, scale=1.0)
    assert heavy.mean() == pytest.approx(3.0)  # alpha scale / (alpha - 1)
    assert heavy.moment(2) == math.inf and heavy.var() == math.inf
    assert qt.Pareto(alpha=1.0, scale=2.0).mean() == math.inf
    assert qt.Pareto(alpha=0.7, scale=2.0).mean() == math.inf
    assert qt.Pareto(alpha=2.0, scale=1.0).moment(2) == math.inf


def test_bounded_pareto_moment_at_k_equal_alpha():
    # k == alpha: E[X^k] = alpha lo^alpha ln(hi/lo) / (1 - (lo/hi)^alpha)
    bp = qt.BoundedPareto(2.0, 1.0, 10.0)
    assert bp.moment(2) == pytest.approx(2 * math.log(10) / (1 - 0.01), rel=1e-12)
    ref = stats.truncpareto(2.0, 10.0).moment(2)
    assert bp.moment(2) == pytest.approx(ref, rel=1e-10)


def test_moment_order_validated():
    for k in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            qt.Exponential(1.0).moment(k)


# ----------------------------------------------------------------------------------------- LST


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_lst_real_and_complex_against_mpmath(case, mp30):
    dist = case.make()
    for s in S_REAL + S_COMPLEX:
        ref = complex(case.mp_lst(s))
        got = dist.lst(s)
        assert abs(complex(got) - ref) < 1e-12, (s, got, ref)
    # real s gives a real result; arrays keep their shape
    assert np.isrealobj(dist.lst(np.array([0.5, 1.0])))
    arr = dist.lst(np.array([[0.1, 1.0], [2.0 + 1j, 0.0]]))
    assert arr.shape == (2, 2) and np.iscomplexobj(arr)
    assert abs(arr[1, 1] - 1.0) < 1e-14  # LST(0) = 1


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_lst_mpmath_argument_is_high_precision(case, mp30):
    """Named families have closed forms, so the mpmath path must agree to ~30 digits."""
    dist = case.make()
    for s in (mpmath.mpf("0.37"), mpmath.mpf(2), mpmath.mpc("0.5", "1.5"), mpmath.mpc(3, -2)):
        ref = case.mp_lst(s)
        got = dist.lst(s)
        assert isinstance(got, mpmath.mpf | mpmath.mpc)
        assert abs(got - ref) < mpmath.mpf("1e-25"), (s, got, ref)


def test_pareto_lst_mp_integer_alpha(mp30):
    # alpha = 2 (Gamma(-2, z) at a pole of Gamma): reference by mpmath quadrature
    s = mpmath.mpf("0.5")
    ref = mpmath.quad(lambda x: mpmath.exp(-s * x) * 2 / x**3, [1, 10, mpmath.inf])
    assert abs(qt.Pareto(2.0, 1.0).lst(s) - ref) < mpmath.mpf("1e-25")
    assert qt.Pareto(2.0, 1.0).lst(mpmath.mpf(0)) == 1


def test_pareto_lst_on_imaginary_axis_mp(mp30):
    # P(e^{-i w X}) for Pareto needs an oscillatory quadrature as reference (quadosc)
    alpha, c = mpmath.mpf("1.5"), mpmath.mpf(2)
    s = mpmath.mpc(0, 2)
    ref = mpmath.quadosc(lambda x: mpmath.exp(-s * x) * alpha * c**alpha / x ** (alpha + 1),
                         [c, mpmath.inf], omega=2)
    assert abs(qt.Pareto(1.5, 2.0).lst(s) - ref) < mpmath.mpf("1e-20")


def _pareto_lst_ref(alpha, c, s):
    """alpha (s c)^alpha Gamma(-alpha, s c): checked against quadosc in the test above."""
    alpha, c, s = mpmath.mpf(alpha), mpmath.mpf(c), mpmath.mpmathify(s)
    return alpha * (s * c) ** alpha * mpmath.gammainc(-alpha, s * c)


@pytest.mark.parametrize("beta", [1.0001, 1.3, 1.5, 2.0, 2.5, 3.0, 3.0000001, 2.9999999,
                                  3.5, 5.0, 11.0, 21.5, 51.0])
def test_expint_against_mpmath(beta, mp30):
    """E_beta(z) of the Pareto transforms on both sides of the switch from the series to the
    continued fraction (|z| = 1), near and at integer beta (where two terms of the series
    diverge and are summed together), on the imaginary axis (the fraction's slowest) and at
    extreme |z|; reference mpmath.expint at 30 digits."""
    from queuetheory.distributions import _expint
    radii = [1e-300, 1e-12, 1e-6, 0.01, 0.5, 0.999999, 1.0, 1.000001, 2.0, 20.0, 300.0, 1e5]
    angles = np.linspace(-np.pi / 2, np.pi / 2, 9)
    z = (np.array(radii)[:, None] * np.exp(1j * angles)).ravel()
    got = _expint(z, beta)
    for zj, gj in zip(z, got):
        ref = complex(mpmath.expint(mpmath.mpf(beta), mpmath.mpc(zj)))
        assert abs(gj - ref) <= 5e-14 * abs(ref) + 1e-300, (zj, gj, ref)
    assert _expint(0.0, beta) == 1.0 / (beta - 1.0)
    assert _expint(800.0, beta) == 0.0 and _expint(complex(math.inf, 0.0), beta) == 0.0


@pytest.mark.parametrize("alpha", [0.6, 1.5, 2.0, 3.0, 10.0])
def test_heavy_tail_lst_double_precision_far_from_real_axis(alpha, mp30):
    """s on Euler-inversion contours (Re s = 26 / (4 t), Im s = pi k / (2 t)), where a
    quadrature in probability space misses the oscillations of exp(-s X) in the tail."""
    P = qt.Pareto(alpha=alpha, scale=1.0)
    B = qt.BoundedPareto(alpha, 1.0, 200.0)
    mass = 1 - mpmath.mpf(200) ** -mpmath.mpf(alpha)
    for t in (0.5, 10.0, 200.0):
        s = 26 / (4 * t) + 1j * math.pi * np.array([0, 1, 5, 20, 60]) / (2 * t)
        got_p, got_b = P.lst(s), B.lst(s)
        for j, sj in enumerate(s):
            sm = mpmath.mpc(sj)
            assert abs(got_p[j] - complex(_pareto_lst_ref(alpha, 1, sm))) < 1e-12
            # bounded: alpha lo^alpha s^alpha (Gamma(-alpha, s lo) - Gamma(-alpha, s hi)) / mass
            ref_b = (alpha * sm**alpha * mpmath.gammainc(-alpha, sm, 200 * sm) / mass)
            assert abs(got_b[j] - complex(ref_b)) < 1e-12
    assert abs(complex(P.lst(2j)) - complex(_pareto_lst_ref(alpha, 1, 2j))) < 1e-12
    assert abs(complex(P.lst(0j)) - 1) < 1e-12


def test_uniform_lst_continuous_at_zero():
    U = qt.Uniform(0.0, 2.0)
    # (1 - e^{-2 s}) / (2 s) = 1 - s + 2 s^2 / 3 - ...
    for s in (1e-12, 1e-9, 1e-7):
        assert U.lst(s) == pytest.approx(1 - s + 2 * s * s / 3, rel=1e-15)
    assert U.lst(0.0) == 1.0 and U.lst(mpmath.mpf(0)) == 1


def test_lst_rejects_non_numbers():
    with pytest.raises(ValueError, match="s must be a number"):
        qt.Exponential(1.0).lst("abc")


# ------------------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("case", CONTINUOUS, ids=_ids(CONTINUOUS))
def test_sample_ks(case):
    """Kolmogorov-Smirnov against the scipy cdf; false-failure probability 1e-3 (seeded)."""
    draws = case.make().sample(20_000, rng=12345)
    assert draws.shape == (20_000,) and np.all(draws >= 0)
    assert stats.kstest(draws, case.ref_cdf).pvalue > 1e-3


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_sample_mean_within_ci(case):
    """Sample mean within z = 3.3 standard errors (two-sided 1e-3) of the scipy mean."""
    n = 100_000
    draws = case.make().sample(n, rng=np.random.default_rng(2024))
    mean, var = case.ref_moment(1), case.ref_moment(2) - case.ref_moment(1) ** 2
    assert abs(draws.mean() - mean) <= 3.3 * math.sqrt(var / n) + 1e-12


def test_discrete_sample_chi_square():
    D = qt.Discrete(_DISCRETE_VALUES, _DISCRETE_PROBS)
    draws = D.sample(50_000, rng=7)
    counts = np.array([(draws == v).sum() for v in _DISCRETE_VALUES])
    assert counts.sum() == 50_000
    assert stats.chisquare(counts, 50_000 * np.array(_DISCRETE_PROBS)).pvalue > 1e-3


def test_sample_shapes_and_seeding():
    X = qt.Erlang(2, 1.0)
    assert isinstance(X.sample(rng=1), float | np.floating)
    assert X.sample((3, 4), rng=1).shape == (3, 4)
    np.testing.assert_array_equal(X.sample(10, rng=5), X.sample(10, rng=5))
    mix = qt.Mixture([qt.Exponential(1.0), qt.Deterministic(3.0)], [0.5, 0.5])
    assert mix.sample((2, 5), rng=3).shape == (2, 5)
    assert qt.Uniform(0, 1).minimum(3).sample((4, 2), rng=0).shape == (4, 2)


# -------------------------------------------------------------------------------------- minimum

MIN_CASES = [c for c in CONTINUOUS]


@pytest.mark.parametrize("case", MIN_CASES, ids=_ids(MIN_CASES))
@pytest.mark.parametrize("i", [2, 5])
def test_minimum_sf_is_power_of_sf(case, i):
    m = case.make().minimum(i)
    x = np.array([0.1, 0.6, 1.2, 1.7, 2.5, 4.0, 10.0])
    np.testing.assert_allclose(m.sf(x), case.ref_sf(x) ** i, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(m.cdf(x), 1 - case.ref_sf(x) ** i, rtol=1e-11, atol=1e-15)
    # mean of the minimum: integral of sf^i (scipy quad, independent of the library)
    from scipy import integrate

    lo = float(case.scipy_mix[0][1].support()[0]) if len(case.scipy_mix) == 1 else 0.0
    ref_mean = lo + integrate.quad(lambda t: case.ref_sf(lo + t) ** i, 0, np.inf,
                                   epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    assert m.mean() == pytest.approx(ref_mean, rel=1e-8)
    # median: sf(x)^i = 1/2
    np.testing.assert_allclose(case.ref_sf(m.ppf(0.5)) ** i, 0.5, rtol=1e-9)


@pytest.mark.parametrize("case", MIN_CASES, ids=_ids(MIN_CASES))
def test_minimum_lst_against_mpmath(case, mp30):
    i = 3
    dist = case.make()

    # density of the minimum: i f(x) sf(x)^(i-1), with sf from the scipy reference in mp
    def pdf_min(x):
        return i * case.mp_pdf(x) * mpmath.mpf(float(case.ref_sf(float(x)))) ** (i - 1)

    for s in (0.5, 2.0 + 1.0j):
        ref = mpmath.quad(lambda x, s=s: mpmath.exp(-s * x) * pdf_min(x), case.breakpoints)
        assert abs(complex(dist.minimum(i).lst(s)) - complex(ref)) < 1e-10


def test_mixture_of_bounded_pareto_minima_is_one_ray_quadrature():
    """RIQ mixes the fastest of 1 to d replicas; for a BoundedPareto runtime the minima's
    transforms are one ray quadrature of the mixed density, a polynomial in P(X > z) by
    Horner's rule (RIQ(100)'s p99 took 89 s, 100 quadratures per transform value). Reference,
    for i = 1, 2, 5, 30 w.p. 0.1 to 0.4 (mpmath, 30 digits)::

        a, lo, hi = mpf(1.5), mpf(0.3), mpf(10); r = (lo / hi)**a; mass = 1 - r
        def dens(x):
            S = ((lo / x)**a - r) / mass
            return a * lo**a / x**(a + 1) / mass * sum(w * i * S**(i - 1) for i, w in
                                                      zip([1, 2, 5, 30], [.1, .2, .3, .4]))
        quad(lambda x: exp(-s * x) * dens(x), linspace(lo, hi, 200))
    """
    B = qt.BoundedPareto(1.5, 0.3, 10.0)
    w = np.zeros(30)
    w[[0, 1, 4, 29]] = [0.1, 0.2, 0.3, 0.4]
    M = qt.IR(B).fastest_mixture(w)
    assert len(M._minimum_groups) == 1
    s = np.array([1 + 1j, 0.5 + 5j, 3 + 0.2j, 0.01 + 40j])
    ref = np.array([0.6456597586706877 - 0.23771353631146228j,
                    -0.10381804159800123 - 0.7444531991837189j,
                    0.34687640890388766 - 0.023462065490812135j,
                    0.5494314989229913 + 0.013952984280265012j])
    np.testing.assert_allclose(M.lst(s), ref, rtol=1e-14)
    # near the real axis each minimum's own quadrature: the same values either way
    near = np.array([0.05 + 0.1j, 0.3 + 0.0j])
    np.testing.assert_allclose(M.lst(near), M._combine("_lst", near), rtol=1e-13)


@pytest.mark.parametrize("params, i, k, ref", [
    ((1.5, 0.3, 100.0), 100, 1, 0.30201308637316702),
    ((1.5, 0.3, 100.0), 100, 2, 0.091216011597863689),
    ((0.5, 1.0, 2.0), 3, 2, 1.414213562373095),      # sqrt(2), by coincidence
    ((2.5, 1e-3, 1e3), 10, 3, 1.1363636363636363e-9),
    ((1.1, 1.0, 1e6), 2, 1, 1.8333300006370635),
    ((3.0, 2.0, 2.5), 1000, 2, 4.0013010899215209)])
def test_bounded_pareto_minimum_moments(params, i, k, ref):
    """Moments of the fastest of i BoundedPareto copies by graded Gauss-Legendre pieces
    (RIQ(100)'s mean took 4.9 s of adaptive quadratures, now 0.01 s).
    References: mpmath at 30 digits, ``lo^k + quad(k x^(k-1) P(X > x)^i, 60 log-spaced
    pieces of [lo, hi])`` with ``P(X > x) = ((lo/x)^a - (lo/hi)^a) / (1 - (lo/hi)^a)``; and
    the Pareto limit ``lo^k a i / (a i - k)`` where ``(lo/hi)^a`` is 1e-150."""
    B = qt.BoundedPareto(*params)
    assert B.minimum(i).moment(k) == pytest.approx(ref, rel=1e-13)
    P = qt.BoundedPareto(1.5, 1e-100, 1.0)
    assert P.minimum(i).moment(k) == pytest.approx(1e-100**k * 1.5 * i / (1.5 * i - k),
                                                   rel=1e-13)


def test_minimum_moments_of_atoms_and_exponentials_in_closed_form():
    """The fastest of i copies of a law of atoms and exponentials: its moments term by term
    (``P(X > t)^i`` a sum of positive exponentials on each piece between the atoms, each
    integrated by the incomplete gamma function). RIQ(50)'s mean with ``0.5 Det(1) + 0.5
    Exp(0.5)`` took 2.9 s of adaptive quadratures, 4.6e-12 off. References: mpmath at 30
    digits, ``quad(k t^(k-1) (1/2 + exp(-t/2)/2)^i, [0, 1]) + quad(k t^(k-1) (exp(-t/2)/2)^i,
    [1, inf])`` (i = 15, k = 1: 0.27443862559126139); exact sums for the others."""
    from queuetheory.distributions import _Minimum

    L = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.5, 0.5])
    for i, k, ref in [(10, 2, 0.2533445576271898), (50, 1, 0.081703527926396571),
                      (3, 3, 0.78687856903833152)]:
        assert L.minimum(i).moment(k) == pytest.approx(ref, rel=1e-14)
    # 1 + 8 / 2^3 + 91 / 5^3 (the tail 1, 0.5, 0.2 beyond the atoms 1, 3, 10, cubed)
    assert qt.Discrete([1, 3, 10], [0.5, 0.3, 0.2]).minimum(3).moment(2) == pytest.approx(
        2.728, rel=1e-15)
    # i = 1: 0.3 (0.25 + 1) + 0.7 (1 + 1/3) / 2, the mixture's own mean (quadrature: 6e-8 off)
    mixed = qt.Mixture([qt.Discrete([0.5, 2.0], [0.5, 0.5]),
                        qt.HyperExponential([0.5, 0.5], [1.0, 3.0])], [0.3, 0.7])
    assert _Minimum(mixed, 1).moment(1) == pytest.approx(0.375 + 0.7 * 2 / 3, rel=1e-15)
    # the generic quadrature of P(X > t)^i splits at the atoms too: across the jump at 1 it
    # had read the fastest of 15 copies 3.2e-4 high (the RIQ(50) mean 3e-8 off)
    generic = qt.Distribution._moment(L.minimum(15), 1)
    assert generic == pytest.approx(0.27443862559126139, rel=1e-12)


def test_minimum_closed_forms():
    assert repr(qt.Exponential(1.5).minimum(4)) == "Exponential(rate=6.0)"
    assert repr(qt.Pareto(1.5, 2.0).minimum(3)) == "Pareto(alpha=4.5, scale=2.0)"
    shifted = qt.ShiftedExponential(1.0, 2.0).minimum(2)
    assert repr(shifted) == "ShiftedExponential(shift=1.0, rate=4.0)"
    D = qt.Deterministic(3.0)
    assert D.minimum(7) is D
    X = qt.Erlang(2, 1.0)
    assert X.minimum(1) is X
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match="i must be an integer >= 1"):
            X.minimum(bad)


def test_discrete_minimum_by_enumeration():
    """pmf of min(S_1..S_i) by summing over all i-tuples of atoms."""
    vals, probs = _DISCRETE_VALUES, _DISCRETE_PROBS
    for i in (2, 3, 4):
        ref = dict.fromkeys(vals, 0.0)
        for combo in itertools.product(range(len(vals)), repeat=i):
            ref[min(vals[j] for j in combo)] += math.prod(probs[j] for j in combo)
        got = qt.Discrete(vals, probs).minimum(i)
        np.testing.assert_allclose(got.pmf(vals), [ref[v] for v in vals], rtol=1e-12, atol=1e-17)


def test_minimum_by_sampling():
    """Seeded: min of 4 Uniform(1, 3) draws vs the library's minimum law (KS, p > 1e-3)."""
    rng = np.random.default_rng(99)
    draws = rng.uniform(1.0, 3.0, size=(4, 20_000)).min(axis=0)
    law = qt.Uniform(1.0, 3.0).minimum(4)
    assert stats.kstest(draws, law.cdf).pvalue > 1e-3


# --------------------------------------------------------------------------------------- scaled


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_scaled(case, mp30):
    c = 2.5
    dist = case.make()
    scaled = dist.scaled(c)
    x = np.array([0.2, 1.0, 2.6, 5.0, 9.0, 40.0])
    np.testing.assert_allclose(scaled.cdf(x), case.ref_cdf(x / c), rtol=1e-12, atol=1e-15)
    for k in (1, 2):
        assert scaled.moment(k) == pytest.approx(c**k * case.ref_moment(k), rel=1e-12)
    for s in (0.4, 1.0 + 2.0j):
        assert abs(complex(scaled.lst(s)) - complex(case.mp_lst(c * s))) < 1e-12
    assert (c * dist).mean() == pytest.approx(scaled.mean(), rel=1e-15)
    assert (dist * c).mean() == pytest.approx(scaled.mean(), rel=1e-15)
    assert dist.scaled(1.0) is dist
    for bad in (0.0, -1.0, math.inf):
        with pytest.raises(ValueError, match="c must be a finite number > 0"):
            dist.scaled(bad)


def test_scaled_minimum_and_scipy_fallbacks():
    G = qt.from_scipy(stats.gamma(2.0, scale=0.5))
    G3 = G.scaled(3.0)
    ref = stats.gamma(2.0, scale=1.5)
    x = np.array([0.5, 1.0, 4.0])
    np.testing.assert_allclose(G3.cdf(x), ref.cdf(x), rtol=1e-12)
    np.testing.assert_allclose(G3.ppf([0.1, 0.9]), ref.ppf([0.1, 0.9]), rtol=1e-12)
    assert G3.lst(0.7) == pytest.approx((1 + 1.5 * 0.7) ** -2, rel=1e-12)
    m = qt.Uniform(0.0, 1.0).minimum(2).scaled(4.0)  # min of 2 U(0, 4): mean 4/3
    assert m.mean() == pytest.approx(4.0 / 3.0, rel=1e-9)


# -------------------------------------------------------------------------------------- product


def test_product_with_discrete_multiplier_is_exact(mp30):
    X = qt.Erlang(2, 3.0)
    M = qt.Discrete([1.0, 2.0, 5.0], [0.5, 0.3, 0.2])
    XM = qt.product(X, M)
    ref_X = stats.gamma(2, scale=1 / 3.0)
    x = np.array([0.1, 0.5, 1.0, 3.0, 8.0])
    ref_cdf = sum(p * ref_X.cdf(x / m) for m, p in zip([1, 2, 5], [0.5, 0.3, 0.2]))
    np.testing.assert_allclose(XM.cdf(x), ref_cdf, rtol=1e-12)
    for k in (1, 2, 3):
        ref = ref_X.moment(k) * (0.5 + 0.3 * 2**k + 0.2 * 5**k)
        assert XM.moment(k) == pytest.approx(ref, rel=1e-12)
    for s in (0.3, 2.0 - 1.0j, mpmath.mpc(1, 1)):
        ref = mpmath.fsum(mpmath.mpf(p) * (3 / (3 + m * mpmath.mpmathify(s))) ** 2
                          for m, p in zip([1, 2, 5], [0.5, 0.3, 0.2]))
        assert abs(complex(XM.lst(s)) - complex(ref)) < 1e-14
    # pdf: mixture of scaled densities
    ref_pdf = sum(p * ref_X.pdf(x / m) / m for m, p in zip([1, 2, 5], [0.5, 0.3, 0.2]))
    np.testing.assert_allclose(XM.pdf(x), ref_pdf, rtol=1e-12)


@pytest.mark.parametrize("M, mp_pdf_M, breaks", [
    (qt.Uniform(1.0, 3.0), lambda m: mpmath.mpf(1) / 2, [1, 3]),
    (qt.Pareto(3.0, 1.0), lambda m: 3 / m**4, [1, 10, mpmath.inf]),
], ids=["uniform-M", "pareto-M"])
def test_product_with_continuous_multiplier(M, mp_pdf_M, breaks, mp30):
    X = qt.Exponential(2.0)
    XM = qt.product(X, M)
    for k in (1, 2):
        assert XM.moment(k) == pytest.approx(X.moment(k) * M.moment(k), rel=1e-14)
    for s in (0.5, 3.0, 1.0 + 1.0j):
        # double integral int int exp(-s x m) f_X(x) f_M(m) dx dm, the x integral done by mpmath
        # int int exp(-s x m) f_X(x) f_M(m) dx dm, the inner (x) integral in closed form
        # 2 / (2 + s m), the outer by mpmath at 30 digits
        ref = mpmath.quad(lambda m, s=s: 2 / (2 + s * m) * mp_pdf_M(m), breaks)
        assert abs(complex(XM.lst(s)) - complex(ref)) < 1e-9
    # cdf: P(X M <= t) = int F_X(t / m) f_M(m) dm
    for t in (0.5, 2.0):
        ref = mpmath.quad(lambda m, t=t: (1 - mpmath.exp(-2 * t / m)) * mp_pdf_M(m), breaks)
        assert XM.cdf(t) == pytest.approx(float(ref), abs=1e-9)


def test_product_sampling_and_validation():
    XM = qt.product(qt.Exponential(1.0), qt.Discrete([1.0, 3.0], [0.5, 0.5]))
    draws = XM.sample(100_000, rng=11)
    # E = 2, Var = E[X^2] E[M^2] - 4 = 2 * 5 - 4 = 6; z = 3.3
    assert abs(draws.mean() - 2.0) < 3.3 * math.sqrt(6 / 100_000)
    with pytest.raises(ValueError, match="M must be > 0"):
        qt.product(qt.Exponential(1.0), qt.Discrete([0.0, 1.0], [0.5, 0.5]))
    assert repr(qt.product(qt.Exponential(1.0), qt.Deterministic(2.0))) == "Exponential(rate=0.5)"


# ------------------------------------------------------------------------------------ from_scipy


def test_from_scipy_gamma(mp30):
    G = qt.from_scipy(stats.gamma(2.5, scale=0.7))
    ref = stats.gamma(2.5, scale=0.7)
    x = np.array([0.1, 1.0, 3.0])
    np.testing.assert_allclose(G.cdf(x), ref.cdf(x), rtol=1e-14)
    np.testing.assert_allclose(G.pdf(x), ref.pdf(x), rtol=1e-14)
    assert G.mean() == pytest.approx(1.75) and G.moment(2) == pytest.approx(2.5 * 3.5 * 0.49)
    for s in (0.0, 0.1, 2.0, 3.0 + 2.0j, 0.5 - 4.0j):
        # closed form (1 + theta s)^(-k), principal branch
        ref_lst = complex((1 + mpmath.mpf("0.7") * mpmath.mpmathify(s)) ** mpmath.mpf("-2.5"))
        assert abs(complex(G.lst(s)) - ref_lst) < 1e-12
    assert abs(complex(G.lst(mpmath.mpf(1))) - float((1 + mpmath.mpf("0.7")) ** -2.5)) < 1e-12


def test_from_scipy_lognormal(mp30):
    L = qt.from_scipy(stats.lognorm(0.8, scale=1.3))
    assert L.mean() == pytest.approx(1.3 * math.exp(0.32), rel=1e-12)
    for s in (0.2, 1.0, 2.0 + 1.0j):
        ref = mpmath.quad(lambda x, s=s: mpmath.exp(-s * x) * mpmath.npdf(
            mpmath.log(x / mpmath.mpf("1.3")), 0, mpmath.mpf("0.8")) / x, [0, 1, 5, mpmath.inf])
        assert abs(complex(L.lst(s)) - complex(ref)) < 1e-12
    draws = L.sample(20_000, rng=3)
    assert stats.kstest(draws, stats.lognorm(0.8, scale=1.3).cdf).pvalue > 1e-3


def test_from_scipy_discrete():
    B = qt.from_scipy(stats.binom(6, 0.3, loc=1))
    ref = stats.binom(6, 0.3, loc=1)
    assert B.discrete
    ks = np.arange(1, 8)
    np.testing.assert_allclose(B.pmf(ks), ref.pmf(ks), rtol=1e-14)
    np.testing.assert_allclose(B.cdf(ks + 0.5), ref.cdf(ks + 0.5), rtol=1e-14)
    assert B.mean() == pytest.approx(2.8) and B.var() == pytest.approx(6 * 0.3 * 0.7)
    for s in (0.1, 1.0, 0.5 + 2.0j):
        exact = np.sum(ref.pmf(ks) * np.exp(-s * ks))
        assert abs(complex(B.lst(s)) - exact) < 1e-12


def test_from_scipy_discrete_unbounded_and_sample_points(mp30):
    P = qt.from_scipy(stats.poisson(3.0))
    for s in (0.2, 1.0 + 1.0j):
        # E[exp(-s N)] = exp(lam (e^{-s} - 1))
        assert abs(complex(P.lst(s)) - np.exp(3.0 * (np.exp(-s) - 1))) < 1e-12
    V = qt.from_scipy(stats.rv_discrete(values=([0.5, 1.0, 2.5], [0.2, 0.3, 0.5])).freeze())
    assert abs(V.lst(0.4) - (0.2 * math.exp(-0.2) + 0.3 * math.exp(-0.4) + 0.5 * math.exp(-1.0))
               ) < 1e-14


def test_from_scipy_discrete_slowdown_in_sx():
    """A scipy randint slowdown: min of 2 of U{1,2,3} has pmf (5, 3, 1) / 9, mean 14/9."""
    S = qt.from_scipy(stats.randint(1, 4))
    np.testing.assert_allclose(S.minimum(2).pmf([1, 2, 3]), np.array([5, 3, 1]) / 9, rtol=1e-12)
    model = qt.SX(qt.Exponential(2.0), S)
    assert model.fastest(2).mean() == pytest.approx(0.5 * 14 / 9, rel=1e-12)
    s = 0.7 + 0.3j
    ref = sum(p * 2 / (2 + m * s) for m, p in zip([1, 2, 3], np.array([5, 3, 1]) / 9))
    assert abs(complex(model.fastest(2).lst(s)) - ref) < 1e-14


def test_from_scipy_rejects_bad_input():
    with pytest.raises(ValueError, match=r"supported on \[0, inf\)"):
        qt.from_scipy(stats.norm(0, 1))
    with pytest.raises(ValueError, match="frozen scipy.stats"):
        qt.from_scipy(stats.gamma)
    with pytest.raises(ValueError, match="frozen scipy.stats"):
        qt.as_distribution(3.0)
    X = qt.Exponential(1.0)
    assert qt.as_distribution(X) is X
    assert qt.as_distribution(stats.expon()).mean() == pytest.approx(1.0)


# ---------------------------------------------------------------------------------- from_samples


def test_from_samples_sequence():
    D = qt.Discrete.from_samples([3, 1, 1, 2, 1, 3])
    np.testing.assert_array_equal(D.values, [1, 2, 3])
    np.testing.assert_allclose(D.probs, [0.5, 1 / 6, 1 / 3])
    assert D.mean() == pytest.approx(11 / 6)
    table = np.array([[1.0, 2.0], [2.0, 2.0]])
    assert qt.Discrete.from_samples(table).mean() == pytest.approx(1.75)


def test_from_samples_csv_one_column(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("1.5\n2.5\n\n1.5\n4\n")
    for arg in (path, str(path)):
        D = qt.Discrete.from_samples(arg)
        np.testing.assert_array_equal(D.values, [1.5, 2.5, 4.0])
        np.testing.assert_allclose(D.probs, [0.5, 0.25, 0.25])


def test_from_samples_csv_header_and_columns(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("slowdown_a,slowdown_b\n1,2\n3,1\n1,1\n")
    D = qt.Discrete.from_samples(path)  # every number in the file is a sample
    np.testing.assert_array_equal(D.values, [1, 2, 3])
    np.testing.assert_allclose(D.probs, [4 / 6, 1 / 6, 1 / 6])


def test_from_samples_csv_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="no numeric samples"):
        qt.Discrete.from_samples(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("runtime\n")
    with pytest.raises(ValueError, match="no numeric samples"):
        qt.Discrete.from_samples(header_only)
    junk = tmp_path / "junk.csv"
    junk.write_text("runtime\n1.0\nabc\n")
    with pytest.raises(ValueError, match="line 3 is not numeric"):
        qt.Discrete.from_samples(junk)
    negative = tmp_path / "negative.csv"
    negative.write_text("1.0\n-2.0\n")
    with pytest.raises(ValueError, match=">= 0"):
        qt.Discrete.from_samples(negative)
    with pytest.raises(ValueError, match="at least one sample"):
        qt.Discrete.from_samples([])
    with pytest.raises(ValueError, match="numeric"):
        qt.Discrete.from_samples(["a", "b"])
    missing = tmp_path / "missing.csv"
    with pytest.raises(ValueError, match="cannot read the file .*missing.csv.*No such file"):
        qt.Discrete.from_samples(missing)
    with pytest.raises(ValueError, match="cannot read the file"):
        qt.Discrete.from_samples(tmp_path)  # a directory
    latin = tmp_path / "latin.csv"
    latin.write_bytes("caf\xe9\n1.0\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        qt.Discrete.from_samples(latin)


def test_from_samples_csv_with_byte_order_mark_keeps_first_sample(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("1.5\n2\n2\n", encoding="utf-8-sig")  # as spreadsheet programs write it
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    S = qt.Discrete.from_samples(path)
    assert S.values.tolist() == [1.5, 2.0] and S.probs.tolist() == [1 / 3, 2 / 3]
    header = tmp_path / "bom_header.csv"
    header.write_text("slowdown\n3\n", encoding="utf-8-sig")
    assert qt.Discrete.from_samples(header).values.tolist() == [3.0]


# ------------------------------------------------------------------------------------- mixture


def test_mixture(mp30):
    mix = qt.Mixture([qt.Exponential(1.0), qt.Deterministic(2.0)], [0.25, 0.75])
    assert mix.mean() == pytest.approx(0.25 + 1.5)
    assert mix.moment(2) == pytest.approx(0.25 * 2 + 0.75 * 4)
    assert mix.cdf(1.0) == pytest.approx(0.25 * (1 - math.exp(-1)))
    assert mix.cdf(2.0) == pytest.approx(0.25 * (1 - math.exp(-2)) + 0.75)
    s = mpmath.mpc(1, 2)
    ref = mpmath.mpf("0.25") / (1 + s) + mpmath.mpf("0.75") * mpmath.exp(-2 * s)
    assert abs(mix.lst(s) - ref) < mpmath.mpf("1e-25")
    with pytest.raises(ValueError, match="same length"):
        qt.Mixture([qt.Exponential(1.0)], [0.5, 0.5])


# ----------------------------------------------------------------------------------- bad input

BAD_INPUT = [
    (lambda: qt.Exponential(0.0), "rate must be a finite number > 0"),
    (lambda: qt.Exponential(-1.0), "rate must be a finite number > 0"),
    (lambda: qt.Exponential(math.inf), "rate must be a finite number > 0"),
    (lambda: qt.Exponential(math.nan), "rate must be a finite number > 0"),
    (lambda: qt.Exponential("fast"), "rate must be a number"),
    (lambda: qt.Exponential(True), "rate must be a number"),
    (lambda: qt.Deterministic(0.0), "value must be a finite number > 0"),
    (lambda: qt.Erlang(0, 1.0), "k must be an integer >= 1"),
    (lambda: qt.Erlang(2.5, 1.0), "k must be an integer >= 1"),
    (lambda: qt.Erlang(2, -1.0), "rate must be a finite number > 0"),
    (lambda: qt.HyperExponential([0.5, 0.5], [1.0, 0.0]),
     r"rates\[1\] must be a finite number > 0"),
    (lambda: qt.HyperExponential([0.5, 0.6], [1.0, 2.0]), "probs must sum to 1"),
    (lambda: qt.HyperExponential([1.5, -0.5], [1.0, 2.0]), "probs must be finite and >= 0"),
    (lambda: qt.HyperExponential([1.0], [1.0, 2.0]), "same length"),
    (lambda: qt.ShiftedExponential(-0.1, 1.0), "shift must be a finite number >= 0"),
    (lambda: qt.ShiftedExponential(1.0, 0.0), "rate must be a finite number > 0"),
    (lambda: qt.Uniform(-1.0, 1.0), "low must be a finite number >= 0"),
    (lambda: qt.Uniform(2.0, 1.0), "high must be > low"),
    (lambda: qt.Uniform(1.0, 1.0), "high must be > low"),
    (lambda: qt.Pareto(0.0, 1.0), "alpha must be a finite number > 0"),
    (lambda: qt.Pareto(1.5, -1.0), "scale must be a finite number > 0"),
    (lambda: qt.BoundedPareto(1.5, 0.0, 2.0), "low must be a finite number > 0"),
    (lambda: qt.BoundedPareto(1.5, 3.0, 2.0), "high must be > low"),
    (lambda: qt.Discrete([1, 2], [0.5, 0.6]), "probs must sum to 1"),
    (lambda: qt.Discrete([1, 2], [-0.5, 1.5]), "probs must be finite and >= 0"),
    (lambda: qt.Discrete([1, 2], []), "probs must be a non-empty"),
    (lambda: qt.Discrete([1, 2, 3], [0.5, 0.5]), "same length"),
    (lambda: qt.Discrete([-1, 2], [0.5, 0.5]), "values must be finite and >= 0"),
    (lambda: qt.Mixture([qt.Exponential(1.0)], [0.9]), "weights must sum to 1"),
]


@pytest.mark.parametrize("make, message", BAD_INPUT, ids=[m for _, m in BAD_INPUT])
def test_bad_input_raises_value_error_naming_parameter(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_public_outputs_never_nan_or_negative():
    dists = [c.make() for c in ALL] + [qt.Pareto(0.6, 1.0), qt.Pareto(1.0, 1.0).minimum(3)]
    x = np.array([0.0, 1e-300, 0.5, 1.0, 3.0, 1e10, 1e300, np.inf])
    for D in dists:
        for values in (D.cdf(x), D.sf(x), D.ppf(np.linspace(0, 1, 11))):
            assert not np.any(np.isnan(values)) and np.all(values >= 0)
        for k in (1, 2, 3):
            m = D.moment(k)
            assert m >= 0 and not math.isnan(m)
        assert not math.isnan(D.var()) and D.var() >= 0
        lst = D.lst(np.array([0.0, 0.5, 2.0, 1e6]))
        assert not np.any(np.isnan(lst)) and np.all((lst >= 0) & (lst <= 1 + 1e-14))
    with pytest.raises(ValueError, match="NaN"):
        qt.Exponential(1.0).cdf(np.nan)


# ----------------------------------------------------------- generic LST on inversion contours
# Laws without a closed-form transform use the adaptive tanh-sinh rule in probability space.
# Laplace inversion (transforms.py, damping A = 26, lattice l = 2, 66 blocks) evaluates them at
# s = (A + 2 pi i k) / (4 t), k = 0..131, where |Im s| / Re s reaches 32. References:
# * an analytic density f: mpmath.quad of exp(-s z) f(z) along the ray z = r exp(-i arg s), on
#   which exp(-s z) decays without oscillating (Cauchy: exp(-s z) f(z) is analytic in the right
#   half-plane and decays on the arc between the ray and the real axis). Spot-checked against
#   direct real-axis mpmath.quad split at every period (agreement to 1e-30);
# * polynomial densities and products: closed forms through mpmath.gammainc / mpmath.log.


def _ray_lst(pdf, s):
    s = mpmath.mpmathify(s)
    rot = mpmath.exp(-1j * mpmath.arg(s))
    a = abs(s)
    return mpmath.quad(lambda r: mpmath.exp(-s * r * rot) * pdf(r * rot) * rot,
                       [0, 1 / a, 4 / a, 16 / a, 64 / a, mpmath.inf])


def _lognormal_pdf(sigma):
    return lambda z: (mpmath.exp(-mpmath.log(z) ** 2 / (2 * _mpf(sigma) ** 2))
                      / (z * _mpf(sigma) * mpmath.sqrt(2 * mpmath.pi)))


def _weibull_pdf(c):
    return lambda z: _mpf(c) * z ** (_mpf(c) - 1) * mpmath.exp(-(z ** _mpf(c)))


def _erlang3_min2_pdf(z):
    # Erlang(3, 1).minimum(2): 2 f(z) sf(z), f = z^2 e^-z / 2, sf = e^-z (1 + z + z^2 / 2)
    return z**2 * mpmath.exp(-2 * z) * (1 + z + z**2 / 2)


def _uniform02_min3_lst(s):
    # minimum of 3 U(0, 2): density 3/2 (1 - z + z^2 / 4) on [0, 2], and
    # int_0^2 z^n exp(-s z) dz = gammainc(n + 1, 0, 2 s) / s^(n + 1)
    s = mpmath.mpmathify(s)
    i0, i1, i2 = (mpmath.gammainc(n + 1, 0, 2 * s) / s ** (n + 1) for n in range(3))
    return mpmath.mpf(3) / 2 * (i0 - i1 + i2 / 4)


def _exp_times_uniform13_lst(s):
    # E[1 / (1 + s M)], M ~ U(1, 3): (log(1 + 3 s) - log(1 + s)) / (2 s) (principal logs: the
    # segment 1 + s m, m in [1, 3], stays in the right half-plane)
    s = mpmath.mpmathify(s)
    return (mpmath.log(1 + 3 * s) - mpmath.log(1 + s)) / (2 * s)


def _det_times_uniform13_lst(s):
    # Deterministic(1) * U(1, 3) is U(1, 3): (exp(-s) - exp(-3 s)) / (2 s)
    s = mpmath.mpmathify(s)
    return (mpmath.exp(-s) - mpmath.exp(-3 * s)) / (2 * s)


GENERIC_LST = {
    "scipy-lognorm-0.5": (lambda: qt.from_scipy(stats.lognorm(0.5)),
                          lambda s: _ray_lst(_lognormal_pdf(0.5), s)),
    "scipy-lognorm-1.5": (lambda: qt.from_scipy(stats.lognorm(1.5)),
                          lambda s: _ray_lst(_lognormal_pdf(1.5), s)),
    "scipy-weibull-0.7": (lambda: qt.from_scipy(stats.weibull_min(0.7)),
                          lambda s: _ray_lst(_weibull_pdf(0.7), s)),
    "erlang-min": (lambda: qt.Erlang(3, 1.0).minimum(2), lambda s: _ray_lst(_erlang3_min2_pdf, s)),
    "uniform-min": (lambda: qt.Uniform(0.0, 2.0).minimum(3), _uniform02_min3_lst),
    "product-exp": (lambda: qt.product(qt.Exponential(1.0), qt.Uniform(1.0, 3.0)),
                    _exp_times_uniform13_lst),
    "product-det": (lambda: qt.product(qt.Deterministic(1.0), qt.Uniform(1.0, 3.0)),
                    _det_times_uniform13_lst),
}
_QUICK_K = np.array([0, 13, 40, 77, 110, 131])


def _euler_contour(t, k):
    return (26.0 + 2j * np.pi * k) / (4.0 * t)


def _check_generic_lst(name, t, k):
    make, ref = GENERIC_LST[name]
    s = _euler_contour(t, k)
    got = make().lst(s)
    want = np.array([complex(ref(v)) for v in s])
    # before the adaptive rule (129 fixed nodes) the error reached 2e-3 to 3e-2 at large k
    assert np.max(np.abs(got - want)) < 1e-12


@pytest.mark.parametrize("t", [1.0, 10.0])
@pytest.mark.parametrize("name", list(GENERIC_LST))
def test_generic_lst_on_euler_contour(name, t, mp30):
    _check_generic_lst(name, t, _QUICK_K)


@pytest.mark.slow
@pytest.mark.parametrize("t", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name", list(GENERIC_LST))
def test_generic_lst_on_full_euler_contour(name, t, mp30):
    _check_generic_lst(name, t, np.arange(132))


def test_generic_lst_real_and_shapes(mp30):
    # real s: E[exp(-s X)] for scipy's gamma(2, scale 1/2) is (1 + s / 2)^-2 (closed form); the
    # rule's tolerance is absolute (1e-13 between levels), so a tiny value such as the one at
    # s = 1e4 (4e-8) is checked in absolute terms
    G = qt.from_scipy(stats.gamma(2.0, scale=0.5))
    s = np.array([[0.0, 1e-9, 0.3], [2.0, 50.0, 1e4]])
    got = G.lst(s)
    assert np.isrealobj(got) and got.shape == (2, 3)
    np.testing.assert_allclose(got, (1 + s / 2) ** -2, rtol=1e-13, atol=1e-15)
    again = G.lst(s)  # a repeated call (memoised) returns an equal, independent array
    again[0, 0] = -1.0
    np.testing.assert_allclose(G.lst(s), (1 + s / 2) ** -2, rtol=1e-13, atol=1e-15)
    # the mpmath argument path returns the (double-precision) adaptive value
    value = complex(G.lst(mpmath.mpc(1.0, 30.0)))
    assert abs(value - (1 + (1.0 + 30.0j) / 2) ** -2) < 1e-13


# E[exp(-s X M)] for X ~ Uniform(a, b), M ~ Uniform(A, B): mpmath.quad of the uniform
# transform over m at 60 digits (no exponential integral), printed by
# ``python scripts/uniform_product_references.py`` (45 and 60 digits agree to 1e-47)
UNIFORM_PAIRS = [  # (a, b, A, B, s, E[exp(-s X M)])
    (1.0, 2.0, 1.0, 3.0, 0.05, "0.8618951124615412855076962074724707"),
    (1.0, 2.0, 1.0, 3.0, 0.3 + 4j, ("0.02237195425381775585276298128054104",
                                    "-0.01638539752081381938106770721168163")),
    (1.0, 2.0, 1.0, 3.0, 0.02 + 60j, ("0.0001644161360902364804969651991960383",
                                      "-0.0000230013833335953264459439596307302")),
    (0.0, 1.0, 0.5, 4.0, 1.5 + 9j, ("0.008725059775341109575720570344650731",
                                    "-0.06197418910636884627919147970389952")),
    (0.2, 5.0, 0.0, 3.0, 4.0, "0.05538950631827092073574750648748792"),
    (0.0, 2.0, 0.0, 1.0, 0.1 + 30j, ("0.02660167628065180204288267142688481",
                                     "-0.07783570750032078130457388526329466")),
    (3.0, 3.01, 1.0, 2.0, 0.5 + 2j, ("0.01210692773804606132240674199825769",
                                     "-0.0255909824224420162305440504024457")),
    (0.001, 1000.0, 2.0, 2.5, 0.7j, ("0.000001450095726755855255656606595954138",
                                     "-0.0006359046094311613124228279614319569")),
]


@pytest.mark.parametrize("a, b, A, B, s, want", UNIFORM_PAIRS)
def test_product_of_uniform_laws_transform(a, b, A, B, s, want, mp30):
    # a closed form through the exponential integral (zero lower ends, narrow laws, far and near
    # the real axis); 30 digits through mpmath
    with mpmath.workdps(40):
        want = mpmath.mpc(*want) if isinstance(want, tuple) else mpmath.mpf(want)
    P = qt.product(qt.Uniform(a, b), qt.Uniform(A, B))
    got = P.lst(np.array([s]))[0]
    assert abs(got - complex(want)) <= 2e-16
    with mpmath.workdps(30):
        assert P._mp_lst
        assert abs(P.lst(mpmath.mpmathify(s)) - want) <= mpmath.mpf(1e-30) * abs(want)


@pytest.mark.slow
def test_quantile_with_scipy_runtime_matches_closed_form_family():
    """End to end: RIQ(d=3) with IR runtimes given once as a scipy Pareto (generic transform of
    the law and of its minima) and once as qt.Pareto (closed-form transform, exact minima).
    The two predictions are independent computations of the same quantity; with the old
    fixed 129-node rule the 0.99 quantile of this scipy lognormal example was off by 3.5%."""
    scipy_law = qt.from_scipy(stats.pareto(2.5, scale=0.6))
    closed = qt.Pareto(2.5, 0.6)
    preds = [qt.analyze(qt.System(qt.RIQ(d=3), qt.IR(R), arrival_rate=0.5))
             for R in (scipy_law, closed)]
    assert preds[0].quantile(0.99) == pytest.approx(preds[1].quantile(0.99), rel=1e-9)
    assert preds[0].quantile(0.5) == pytest.approx(preds[1].quantile(0.5), rel=1e-9)


@pytest.mark.slow
def test_quantile_with_scipy_lognormal_fast_matches_mpmath_inversion():
    """Fast Euler inversion vs mpmath (de Hoog) inversion at 30 digits of the same RIQ(d=3)
    transform with a scipy lognormal(1.5) runtime of mean 1. Both invert the same generic LST
    (whose accuracy the contour tests above establish), so this checks that the fast path is
    fed transform values accurate enough on its contour: the old rule gave 6.2018 here, the
    reference is 5.98861 (de Hoog at 30 digits; its own error is about 1e-8 relative because the
    transform values are doubles)."""
    R = qt.from_scipy(stats.lognorm(1.5, scale=math.exp(-1.5**2 / 2)))
    pred = qt.analyze(qt.System(qt.RIQ(d=3), qt.IR(R), arrival_rate=0.5))
    # the raw de Hoog inversion: ResponseTime's precision= path refuses here, because its
    # self-check finds that a transform with double-precision values cannot give 30 digits
    reference = invert_quantile_mp(pred.response_time._transform, 0.99, precision=30,
                                   mean=pred.mean)
    assert pred.quantile(0.99) == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize("law", [
    qt.slowdowns.facebook(),
    qt.Discrete([1.0, 2.0, 3.0], [0.5, 1e-6, 0.5 - 1e-6]),   # a cdf step on a table edge
    qt.Discrete(np.arange(5000.0), np.full(5000, 1 / 5000)),  # cells holding several steps
    qt.Deterministic(2.0),
], ids=["facebook", "tiny-mass", "5000-values", "deterministic"])
def test_discrete_sample_is_numpy_choice(law):
    # Discrete sampling reads a table instead of numpy's binary search: the variates must be
    # those of Generator.choice(values, p=probs) for the same generator state, draw by draw.
    for seed, size in [(1, (4096, 5)), (2, 7), (3, (3, 0)), (4, 200_000), (5, None)]:
        ours = law.sample(size, np.random.default_rng(seed))
        numpy_choice = np.random.default_rng(seed).choice(law.values, size=size, p=law.probs)
        np.testing.assert_array_equal(ours, numpy_choice)


# ------------------------------------------------------------------- units of time, pickling

def _families_at_scale(c):
    """One law of every family, in a time unit scaled by ``c`` (shape parameters fixed)."""
    return {
        "uniform": qt.Uniform(c, 3 * c),
        "erlang": qt.Erlang(2, 1 / c),
        "boundedpareto": qt.BoundedPareto(1.5, c, 10 * c),
        "hyperexponential": qt.HyperExponential([0.5, 0.5], [1 / c, 2 / c]),
        "lognormal": qt.from_scipy(stats.lognorm(0.5, scale=c)),
        "pareto": qt.Pareto(2.5, c),
        "shifted": qt.ShiftedExponential(c, 1 / c),
        "mixture": qt.Mixture([qt.Uniform(c, 2 * c), qt.Erlang(3, 1 / c)], [0.5, 0.5]),
    }


# E[min of 3] at unit scale by mpmath, int_0^inf P(X > x)^3 dx (independent closed-form tails):
#   uniform:  int_1^3 ((3 - x)/2)^3 dx + 1 = 1.5
#   erlang:   quad(lambda x: (exp(-x) * (1 + x))**3, [0, inf])            = 0.962962962962963
#   boundedpareto: quad(lambda x: ((x**-1.5 - 10**-1.5) / (1 - 10**-1.5))**3, [1, 10]) + 1
#   hyperexponential: quad(lambda x: ((exp(-x) + exp(-2 x)) / 2)**3, [0, inf]) = 0.23125
#   lognormal: quad(lambda x: (erfc(log(x) / (0.5 sqrt 2)) / 2)**3, [0, 1, inf])
#   pareto:   1 + 1 / (7.5 - 1) = 15 / 13;  shifted: 1 + 1/3
#   mixture:  quad(lambda x: (0.5 sf_U(1,2)(x) + 0.5 exp(-x)(1 + x + x^2/2))**3, [0, 1, 2, inf])
_MIN3_MEANS = {"uniform": 1.5, "erlang": 0.962962962962963, "hyperexponential": 0.23125,
               "pareto": 15 / 13, "shifted": 4 / 3}


def _mp_min3_mean(name):
    mp = mpmath
    tails = {
        "boundedpareto": (lambda x: 1 if x < 1 else ((x**-1.5 - 10**-1.5) / (1 - 10**-1.5))
                          if x < 10 else 0, [0, 1, 10]),
        "lognormal": (lambda x: mp.erfc(mp.log(x) / (0.5 * mp.sqrt(2))) / 2, [0, 1, 3, mp.inf]),
        "mixture": (lambda x: 0.5 * min(max(2 - x, 0), 1)
                    + 0.5 * mp.exp(-x) * (1 + x + x**2 / 2), [0, 1, 2, mp.inf]),
    }
    if name in _MIN3_MEANS:
        return _MIN3_MEANS[name]
    tail, points = tails[name]
    with mp.workdps(25):
        return float(mp.quad(lambda x: tail(x) ** 3, points))


@pytest.mark.parametrize("c", [1e-9, 1e-3, 1.0, 1e3, 1e9])
@pytest.mark.parametrize("name", sorted(_families_at_scale(1.0)))
def test_minimum_mean_equivariant_in_the_unit_of_time(name, c):
    law = _families_at_scale(c)[name]
    fastest = law.minimum(3)
    assert fastest.mean() / c == pytest.approx(_mp_min3_mean(name), rel=1e-9)
    median = fastest.ppf(0.5)
    assert math.isfinite(median) and median > 0
    assert fastest.cdf(median) == pytest.approx(0.5, abs=1e-9)


def _round_trip(obj):
    return pickle.loads(pickle.dumps(obj))


def test_every_distribution_pickles_after_use():
    S = qt.slowdowns.facebook()
    laws = list(_families_at_scale(1.0).values()) + [
        qt.Exponential(2.0), qt.Deterministic(1.5), S, qt.Discrete.from_samples([1, 2, 2, 7]),
        qt.Uniform(0, 1).minimum(2), qt.Pareto(2.5, 1.0).scaled(3.0),
        qt.from_scipy(stats.gamma(2.0)).scaled(2.0), qt.from_scipy(stats.poisson(3.0, loc=1)),
        qt.product(qt.Exponential(1.0), S), qt.product(qt.Erlang(2, 1.0), qt.Uniform(1, 3)),
        qt.product(qt.Discrete([1, 2], [0.5, 0.5]), qt.Pareto(3.0, 1.0)),
    ]
    for law in laws:
        # use every cache first (quantile nodes, transforms), then compare the copy's numbers
        before = (law.mean(), law.cdf(1.7), complex(law.lst(0.3 + 2j)), law.ppf(0.9))
        law._nodes  # noqa: B018 (fills the quantile cache)
        copy = _round_trip(law)
        assert repr(copy) == repr(law)
        after = (copy.mean(), copy.cdf(1.7), complex(copy.lst(0.3 + 2j)), copy.ppf(0.9))
        assert after == before


@pytest.mark.parametrize("call, message", [
    (lambda: qt.Exponential(1.0).cdf({}), "x must be a number"),
    (lambda: qt.Exponential(1.0).sf("1.0"), "x must be a number"),
    (lambda: qt.Exponential(1.0).ppf(["0.5"]), "q must be a number"),
    (lambda: qt.Exponential(1.0).lst({}), "s must be a number"),
    (lambda: qt.Exponential(1.0).lst(True), "s must be a number"),
    (lambda: qt.Exponential(1.0).sample(size=1.5), "size must be an integer >= 0"),
    (lambda: qt.Exponential(1.0).sample(size=(2, -1)), "size must be an integer >= 0"),
    (lambda: qt.Exponential(1.0).sample(size="3"), "size must be an integer >= 0"),
    (lambda: qt.Exponential(1.0).sample(3, rng="seed"), "rng must be a seed"),
    (lambda: qt.Exponential("0.5"), "rate must be a number"),
    (lambda: qt.Uniform(0, b"1"), "high must be a number"),
    (lambda: qt.Discrete(["1", "2"], [0.5, 0.5]), "values must be a number"),
    (lambda: qt.Discrete([1, 2], ["0.5", "0.5"]), "probs must be a number"),
    (lambda: qt.HyperExponential([1.0], ["2"]), "rates must be a number"),
    (lambda: qt.Discrete.from_samples(["1", "2"]), "data must be numeric"),
    (lambda: qt.Discrete([1, 2], [0.5, 0.5]).pmf({}), "x must be a number"),
])
def test_bad_input_types_raise_value_error_naming_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_numpy_scalars_and_zero_d_arrays_are_numbers():
    assert qt.Exponential(np.float32(2.0)).rate == 2.0
    assert qt.Erlang(np.array(3), np.array(1.5)).k == 3
    assert qt.Exponential(1.0).sample(size=np.int64(4), rng=1).shape == (4,)
    assert qt.Exponential(1.0).sample(size=np.array([2, 3]), rng=1).shape == (2, 3)
    assert qt.Exponential(1.0).moment(np.array(2)) == 2.0


def test_bounded_pareto_at_the_extremes_of_double_precision():
    """low = 5e-324 (the smallest subnormal): low / high underflows to 0, which made
    log(low / high) a math domain error. Closed forms at these bounds (alpha = 1.5, high = 10):
    mass = 1 - (low/high)^1.5 = 1; E[X] = alpha/(alpha-1) low (1 - (low/high)^0.5) = 3 low;
    E[X^2] = alpha/(2-alpha) low^1.5 high^0.5 (the low^2 term is 0): 3 * 5e-324**1.5 * 10**0.5
    underflows to 0; P(X <= 1e-300) = 1 - (low / 1e-300)^1.5 = 1."""
    B = qt.BoundedPareto(1.5, 5e-324, 10.0)
    assert B.mean() == 3 * 5e-324 and B.moment(2) == 0.0
    assert B.cdf(1e-300) == 1.0 and B.sf(10.0) == 0.0 and B.ppf(1.0) == 10.0
    assert np.all(np.isfinite(B.lst(np.array([1.0, 1.0 + 1.0j, 1e6j]))))
    # huge bounds: E[X] = 1.5 * 1e300 * (1 - (1e300/1e308)^0.5) / (1 - (1e300/1e308)^1.5) / 0.5
    H = qt.BoundedPareto(1.5, 1e300, 1e308)
    ref = 3e300 * (1 - 1e-4) / (1 - 1e-12)
    assert H.mean() == pytest.approx(ref, rel=1e-13) and H.moment(2) == math.inf
    assert H.cdf(1e304) == pytest.approx(1 - 1e-6, rel=1e-13)


def test_quantiles_of_a_mixture_of_atoms_are_the_atoms():
    """Mixture of point masses: ppf(q) is exactly the atom x_j for q in (c_(j-1), c_j] with
    c_j the cumulative masses (bisection on the mixture's cdf stopped a few ulps above an atom:
    ppf(0.7) was 0.30000000000000004 below). Atoms and masses by hand: 0.1 w.p. 0.7 * 0.5, 0.3
    w.p. 0.7 * 0.5, 0.7 w.p. 0.3, so c = (0.35, 0.7, 1)."""
    N = qt.Mixture([qt.Deterministic(0.7), qt.Discrete([0.1, 0.3], [0.5, 0.5])], [0.3, 0.7])
    levels = [0.0, 1e-300, np.nextafter(0.35, 0), 0.35, 0.35 + 1e-9, np.nextafter(0.7, 0), 0.7,
              0.7 + 1e-9, 0.999, 1.0]
    assert N.ppf(levels).tolist() == [0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.7, 0.7, 0.7]
    # the tail levels p = 1 - q: isf(p) is the first atom with P(X > x_j) <= p
    tails = [0.65, 0.3, 0.3 + 1e-9, 0.3 - 1e-9, 1e-300]
    assert N._isf_all(np.array(tails)).tolist() == [0.1, 0.3, 0.3, 0.7, 0.7]
    M = qt.Mixture([qt.Deterministic(1.0), qt.Deterministic(2.0), qt.Deterministic(3.0)],
                   [0.1, 0.2, 0.7])
    assert M.ppf([0.1, 0.1 + 0.2, 0.3, 0.5]).tolist() == [1.0, 2.0, 2.0, 3.0]
    assert (3.0 * N).ppf(0.7) == 3.0 * 0.3
    # a far tail: P(X > 1) = 1e-20 / (1 + 1e-20) = 1e-20 to double precision (1 - cum gave 0)
    D = qt.Discrete([1.0, 2.0], [1.0, 1e-20])
    assert D.sf(1.0) == 1e-20 and D._isf_all(np.array([1e-20, 1e-21])).tolist() == [1.0, 2.0]


def test_quantile_search_without_closed_form_keeps_the_tail_accurate():
    """A mixture of exponentials as a Mixture has no closed-form quantile: the generic search.
    Levels above 1/2 are searched on the survival function (``isf(1 - q)``, ``1 - q`` exact):
    on the CDF, flat to rounding near 1, ppf(1 - 1e-12) read 104.97882897342282 (1.6e-6 off)
    and the removal analysis's ``X`` nodes took 55 bisection steps each. The same law as a
    HyperExponential: Newton's method on ``-log P(X > x)`` (concave; 2.5 times faster than the
    search). References: mpmath at 50 digits, ``findroot`` on ``log P(X > x) = log(1 - q)``
    above 1/2 and on ``P(X <= x) / q = 1`` (``-expm1`` forms) below, for ``P(X > x) = 3/4
    e^(-2x) + 1/4 e^(-x/4)``."""
    H = qt.HyperExponential([0.75, 0.25], [2.0, 0.25])
    mixture = qt.Mixture([qt.Exponential(2.0), qt.Exponential(0.25)], [0.75, 0.25])
    levels = [1e-300, 1e-8, 0.3, 0.5, 0.7, 0.99, 1 - 1e-6, 1 - 1e-10, 1 - 1e-12]
    ref = [6.4000000000000002e-301, 6.4000000395264005e-9, 0.23952270245895911,
           0.49431921566104555, 0.98509431085947174, 12.875503301438879, 49.716864787262511,
           86.558225944320795, 104.97899550709387]
    for law in (H, mixture):
        np.testing.assert_allclose(law.ppf(levels), ref, rtol=1e-15, atol=0)
    # the same levels within a call of many (compiled with numba where installed)
    many = np.concatenate([levels, np.linspace(0.01, 0.99, distributions._COMPILED_LEVELS)])
    np.testing.assert_allclose(H._ppf_all(many)[:len(levels)], ref, rtol=1e-15, atol=0)
    # a flat CDF (a gap in the support): the smallest x, at either end of the plateau
    G = qt.Mixture([qt.Uniform(0.0, 1.0), qt.Uniform(2.0, 3.0)], [0.25, 0.75])
    assert G.ppf(0.25) == 1.0
    assert G._isf_all(np.array([0.75]))[0] == pytest.approx(1.0, rel=4e-16)   # sf: 1 - x / 4
    assert G.ppf(0.25 + 2.0**-40) == pytest.approx(2.0 + 2.0**-40 / 0.75, rel=4e-16)
    # a jump (an atom beside a density): every level inside it is the atom
    J = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.5, 0.5])
    assert J.ppf([0.2, 0.5, 0.69]).tolist() == [1.0, 1.0, 1.0]   # the jump: 0.197 to 0.697


@pytest.mark.parametrize("probs, rates, ppf_ref, isf_ref", [
    # a slow phase of weight 1e-9 and phases 1e6 apart (one of weight 0): the tail is the slow
    # phase's, the median is past the fast phase, where -log P(X > x) is nearly flat
    ([1 - 1e-9, 1e-9], [1.0, 1e-3],
     [1.000000000999e-300, 1.0000000009995e-12, 0.28768207278473074, 0.6931471815585595,
      2.302585101971047, 24.44672450668163], [6907.755278982137, 670052.2620612673]),
    ([0.5, 0.0, 0.3, 0.2], [1e3, 5.0, 1.0, 1e-3],
     [1.9987999205277153e-303, 1.9987999205297115e-15, 0.0006923164795739984,
      0.005683232638370031, 693.1471805599456, 19113.827952794243],
     [26021.583203494447, 689166.0899857796]),
])
def test_hyperexponential_quantiles_by_newton_far_apart_phases(probs, rates, ppf_ref, isf_ref):
    """HyperExponential's quantiles by Newton's method on ``-log P(X > x)`` (concave), then one
    step on the probability: at the levels ``1e-300, 1e-12, 0.25, 0.5, 0.9, 1 - 1e-9`` and the
    tail levels ``1e-12, 1e-300``. Without the last step the median of the second law was
    5.6e-15 off (the rounding of ``log 2`` over a flat ``-log P(X > x)``). References: mpmath
    at 60 digits, geometric bisection to 1e-40 on ``P(X <= x) = q`` (``-expm1`` form) for ``q
    <= 1/2``, on ``P(X > x) = 1 - q`` above and ``P(X > x) = p`` for the tail levels (the
    probabilities as given, their sum 1 + 2.8e-17 for the first law)::

        P = [mpf(p) for p in probs]; R = [mpf(r) for r in rates]
        cdf = lambda x: fsum(-p * expm1(-r * x) for p, r in zip(P, R))
        sf = lambda x: fsum(p * exp(-r * x) for p, r in zip(P, R))
        lo, hi = mpf("1e-330"), mpf("1e8")   # then mid = sqrt(lo hi) until 1e-40 relative
    """
    H = qt.HyperExponential(probs, rates)
    levels = [1e-300, 1e-12, 0.25, 0.5, 0.9, 1 - 1e-9]
    np.testing.assert_allclose(H.ppf(levels), ppf_ref, rtol=1e-15, atol=0)
    np.testing.assert_allclose(H._isf_all(np.array([1e-12, 1e-300])), isf_ref, rtol=1e-15,
                               atol=0)
    # the same levels within a call of many (compiled with numba where installed)
    many = np.concatenate([levels, np.linspace(0.01, 0.99, distributions._COMPILED_LEVELS)])
    np.testing.assert_allclose(H._ppf_all(many)[:len(levels)], ppf_ref, rtol=1e-15, atol=0)
    tails = np.concatenate([[1e-12, 1e-300], np.geomspace(0.1, 1e-300,
                                                          distributions._COMPILED_LEVELS)])
    np.testing.assert_allclose(H._isf_all(tails)[:2], isf_ref, rtol=1e-15, atol=0)
    # one phase: the exponential's closed form
    E = qt.HyperExponential([1.0], [2.0])
    np.testing.assert_allclose(E.ppf(levels), -np.log1p(-np.array(levels)) / 2.0, rtol=2e-16)


@pytest.mark.parametrize("probs, rates", [([0.7, 0.3], [3.0, 0.3]), ([1 - 1e-9, 1e-9], [1.0, 1e-3]),
                                          ([0.5, 0.0, 0.3, 0.2], [1e3, 5.0, 1.0, 1e-3]),
                                          ([1.0], [2.0])])
def test_hyperexponential_many_quantiles_compiled(probs, rates):
    """A call with many levels (the S&X analysis's ``X`` nodes) runs Newton's method compiled
    a level at a time when numba is installed: the same quantiles as a call with few levels
    (numpy operations; both against mpmath in the tests above), from 1e-300 to 1 - 1e-16,
    to 4e-16 times ``1 + kappa``, ``kappa = min(P(X <= x), P(X > x)) / (x f(x))`` the
    condition number of the quantile: both end on rounding, in different orders (measured: at
    most 0.68 of it; 20 to 27% of the values differ, in their last digits)."""
    H = qt.HyperExponential(probs, rates)
    rng = np.random.default_rng(5)
    levels = np.concatenate([rng.random(30000), 10.0 ** -rng.uniform(0, 300, 5000),
                             1 - 10.0 ** -rng.uniform(0, 16, 5000), [1e-300, 1e-13, 1 - 1e-16]])
    tails = 10.0 ** -rng.uniform(0, 300, 20000)
    # the whole calls compiled, their hundredths not
    assert levels.size // 100 + 1 < distributions._COMPILED_LEVELS <= tails.size < levels.size
    for many, few in ((H._ppf_all(levels), np.concatenate([
            H._ppf_all(part) for part in np.array_split(levels, 100)])),
            (H._isf_all(tails), np.concatenate([
                H._isf_all(part) for part in np.array_split(tails, 100)]))):
        kappa = np.minimum(H.cdf(few), H.sf(few)) / (few * H.pdf(few))
        assert np.all(np.abs(many - few) <= 4e-16 * (1 + kappa) * few)


def test_pdf_of_a_law_with_atoms_raises():
    """A mixture with a discrete part has no density (scipy has none either): pdf raised no
    error; with the component Discrete([1, 2], [.5, .5]) it returned a finite-difference spike
    of 6.25e4 at x = 2 (0.25 / 4e-6) and ignored the atom at a Deterministic(2)."""
    spiky = qt.Mixture([qt.Exponential(1.0), qt.Discrete([1.0, 2.0], [0.5, 0.5])], [0.5, 0.5])
    mix = qt.Mixture([qt.Exponential(1.0), qt.Deterministic(2.0)], [0.5, 0.5])
    for law in (spiky, mix, 3.0 * mix, mix.minimum(2)):
        with pytest.raises(ValueError, match="has atoms"):
            law.pdf(2.0)
    with pytest.raises(ValueError, match="is discrete"):
        qt.Discrete([1.0, 2.0], [0.5, 0.5]).pdf(1.0)
    # a mixture of continuous laws keeps its density: 0.5 e^-x + 0.5 * 2 e^-2x at x = 1
    smooth = qt.Mixture([qt.Exponential(1.0), qt.Exponential(2.0)], [0.5, 0.5])
    assert smooth.pdf(1.0) == pytest.approx(0.5 * math.exp(-1) + math.exp(-2), rel=1e-15)


@pytest.mark.parametrize("alpha, low, high, k, ref", [
    # mpmath at 50 digits: a lo^a (hi^(k-a) - lo^(k-a)) / ((k - a) (1 - (lo/hi)^a))
    (2.0 + 1e-10, 1.0, 1e3, 2, 13.81552436940770086),  # was the k = a limit: 3.5e-10 off
    (1.5, 3e-7, 5e4, 3, 0.0018371173070873834489),
    (0.01, 1e-3, 1e3, 2, 33918.344873133363201),
    (1.5, 3e-7, 5e4, 2, 1.1022676842524300856e-7),
    # k = a: a lo^a log(hi / lo) / (1 - (lo/hi)^a) = 2 log(1000) / (1 - 1e-6)
    (2.0, 1.0, 1e3, 2, 13.815524373488647593)])
def test_bounded_pareto_moments_against_mpmath(alpha, low, high, k, ref):
    assert qt.BoundedPareto(alpha, low, high).moment(k) == pytest.approx(ref, rel=1e-15)


def _bounded_pareto_grid(low, high):
    """Points of (low, high): a log-spaced grid, the last floats below high, the first above low
    and points at relative distances 1e-15 ... 1e-1 below high."""
    xs = np.concatenate([low * (high / low) ** np.linspace(0, 1, 25)[1:-1],
                         np.nextafter(high, 0) - np.arange(4) * 7 * np.spacing(high),
                         low + np.arange(1, 4) * 3 * np.spacing(low),
                         high * (1 - np.logspace(-15, -1, 8))])
    return np.unique(xs[(xs > low) & (xs < high)])


@pytest.mark.parametrize("alpha, low, high", [
    (0.01, 1e-3, 1e3), (0.1, 1.0, 2.0), (1.5, 1.0, 100.0), (2.0, 1e-300, 1e300),
    (0.5, 1.0, 1.0 + 1e-9), (40.0, 1.0, 10.0)])
def test_bounded_pareto_relative_accuracy_against_mpmath(alpha, low, high):
    """cdf, sf (also where the tail near high is tiny) and the quantiles ppf, isf against the
    closed forms at 50 digits: F(x) = (1 - (low/x)^a) / m, m = 1 - (low/high)^a,
    x_q = low (1 - q m)^(-1/a), isf(p) = low (p + (low/high)^a (1 - p))^(-1/a). sf and cdf to
    a few ulps times (1 + a) (the conditioning of the power of the rounded ratio low / x), the
    quantiles to a few ulps times (1 + their condition number q / (x f(x)))."""
    B = qt.BoundedPareto(alpha, low, high)
    eps = np.finfo(float).eps
    with mpmath.workdps(50):
        a, lo, hi = mpmath.mpf(alpha), mpmath.mpf(low), mpmath.mpf(high)
        r = (lo / hi) ** a
        m = 1 - r
        xs = _bounded_pareto_grid(low, high)
        got_sf, got_cdf = B.sf(xs), B.cdf(xs)
        for x, s, c in zip(xs, got_sf, got_cdf):
            ref_sf = ((lo / x) ** a - r) / m
            ref_cdf = (1 - (lo / x) ** a) / m
            if ref_sf > 1e-300:  # below, the tail underflows
                assert abs(s / ref_sf - 1) <= 4 * eps * (1 + alpha), x
            assert abs(c / ref_cdf - 1) <= 4 * eps * (1 + alpha), x
        levels = np.concatenate([np.logspace(-300, -1, 16), np.linspace(0.05, 0.95, 19),
                                 1 - np.logspace(-16, -1, 8)])
        got_ppf, got_isf = B.ppf(levels), B._isf_all(levels)
        for q, xq, xp in zip(levels, got_ppf, got_isf):
            for level, got, base in ((q, xq, 1 - mpmath.mpf(q) * m),
                                     (q, xp, q + r * (1 - mpmath.mpf(q)))):
                ref = lo * base ** (-1 / a)
                density = a / ref * (lo / ref) ** a / m
                cond = level / (ref * density)
                assert abs(got / ref - 1) <= 4 * eps * (1 + cond), (q, got, ref)


def test_bounded_pareto_small_tail_pinned():
    """The cases where sf subtracted two close numbers (5e-13 and 2e-14 relative error).
    mpmath at 50 digits: ((lo/x)^a - (lo/hi)^a) / (1 - (lo/hi)^a) with
    (a, lo, hi, x) = (0.01, 1e-3, 1e3, 999) -> 0.000067531615393273665205,
    (0.01, 1e-3, 1e3, 1)   -> 0.482737475567623773,
    (0.1, 1, 2, 1.999)     -> 0.00069682795070768680812."""
    B = qt.BoundedPareto(0.01, 1e-3, 1e3)
    assert B.sf(999.0) == pytest.approx(0.000067531615393273665205, rel=1e-15)
    assert B.sf(1.0) == pytest.approx(0.482737475567623773, rel=1e-15)
    assert qt.BoundedPareto(0.1, 1.0, 2.0).sf(1.999) == pytest.approx(
        0.00069682795070768680812, rel=1e-15)


@pytest.mark.parametrize("s", [-1.0, -1e-300 + 5j, math.nan, complex(1.0, math.nan),
                               np.array([1.0, -2.0])])
def test_lst_rejects_negative_real_part_and_nan(s):
    with pytest.raises(ValueError, match=r"s must have Re\(s\) >= 0"):
        qt.Exponential(1.0).lst(s)


# ------------------------------------------------------------------ the support, handled once
# The public methods fill the values outside the support [a, b] and call a family's hooks only
# inside it (scipy's argsreduce). Each case: the law, a, b, P(X = a), the density at a and at b
# (the one-sided limits; None where the law has no density or only a numerical one). The
# constants are the closed forms of each family at its bounds, written out by hand:
# exponential f(0) = rate; Erlang(3) f(0) = 0; hyperexponential f(0) = sum p_j r_j; shifted
# exponential f(shift) = rate; uniform 1 / (high - low); Pareto f(c) = alpha / c; bounded Pareto
# f(low) = alpha / low / mass, f(high) = alpha / high (low / high)^alpha / mass with
# mass = 1 - (low / high)^alpha; the product U(1, 3) * {1, 2} has f(1) = 0.5 * f_U(1) / 1 and
# f(6) = 0.5 * f_U(3) / 2; the minimum of two U(1, 3) has f(1) = 2 f_U(1) = 1, f(3) = 0; the
# mixture of ShiftedExponential(0.5, 2) and U(1, 3) has f(0.5) = 0.5 * 2; U(1, 3) from scipy
# scaled by 2 is U(2, 6); the 2nd of 3 U(1, 3) has density 6 F (1 - F) f, 0 at both ends.
_BP_MASS = 1 - 100.0**-1.5
SUPPORT_CASES = [
    ("exponential", lambda: qt.Exponential(2.0), 0.0, math.inf, 0.0, 2.0, None),
    ("erlang", lambda: qt.Erlang(3, 1.5), 0.0, math.inf, 0.0, 0.0, None),
    ("erlang-1", lambda: qt.Erlang(1, 2.0), 0.0, math.inf, 0.0, 2.0, None),
    ("hyperexponential", lambda: qt.HyperExponential([0.5, 0.5], [1.0, 4.0]), 0.0, math.inf,
     0.0, 2.5, None),
    ("shifted-exponential", lambda: qt.ShiftedExponential(0.5, 2.0), 0.5, math.inf, 0.0, 2.0,
     None),
    ("uniform", lambda: qt.Uniform(1.0, 3.0), 1.0, 3.0, 0.0, 0.5, 0.5),
    ("uniform-from-0", lambda: qt.Uniform(0.0, 2.0), 0.0, 2.0, 0.0, 0.5, 0.5),
    ("pareto", lambda: qt.Pareto(2.5, 1.25), 1.25, math.inf, 0.0, 2.0, None),
    ("bounded-pareto", lambda: qt.BoundedPareto(1.5, 1.0, 100.0), 1.0, 100.0, 0.0,
     1.5 / _BP_MASS, 1.5 / 100.0 * 100.0**-1.5 / _BP_MASS),
    ("discrete", lambda: qt.Discrete([0.5, 1.0, 2.0, 4.0], [0.125, 0.375, 0.25, 0.25]), 0.5, 4.0,
     0.125, None, None),
    ("discrete-at-0", lambda: qt.Discrete([0.0, 1.0], [0.25, 0.75]), 0.0, 1.0, 0.25, None, None),
    ("deterministic", lambda: qt.Deterministic(2.0), 2.0, 2.0, 1.0, None, None),
    ("mixture", lambda: qt.Mixture([qt.ShiftedExponential(0.5, 2.0), qt.Uniform(1.0, 3.0)],
                                   [0.5, 0.5]), 0.5, math.inf, 0.0, 1.0, None),
    ("mixture-with-atom", lambda: qt.Mixture([qt.Uniform(1.0, 3.0), qt.Deterministic(1.0)],
                                             [0.5, 0.5]), 1.0, 3.0, 0.5, None, None),
    ("product", lambda: qt.product(qt.Pareto(2.5, 1.25), qt.Uniform(1.0, 2.0)), 1.25, math.inf,
     0.0, None, None),
    ("product-atoms", lambda: qt.product(qt.Uniform(1.0, 3.0), qt.Discrete([1.0, 2.0],
                                                                          [0.5, 0.5])),
     1.0, 6.0, 0.0, 0.25, 0.125),
    ("minimum", lambda: qt.Uniform(1.0, 3.0).minimum(2), 1.0, 3.0, 0.0, 1.0, 0.0),
    ("scaled", lambda: qt.from_scipy(stats.uniform(1.0, 2.0)).scaled(2.0), 2.0, 6.0, 0.0, 0.25,
     0.25),
    ("scipy", lambda: qt.from_scipy(stats.uniform(1.0, 2.0)), 1.0, 3.0, 0.0, 0.5, 0.5),
    ("scipy-discrete", lambda: qt.from_scipy(stats.binom(3, 0.5)), 0.0, 3.0, 0.125, None, None),
    ("order-statistic", lambda: qt.orderstats.OrderStatistic(qt.Uniform(1.0, 3.0), r=2, n=3),
     1.0, 3.0, 0.0, 0.0, 0.0),
    ("order-statistic-mixed", lambda: qt.orderstats.OrderStatistic(
        [qt.Uniform(1.0, 3.0), qt.ShiftedExponential(2.0, 1.0)], r=2), 2.0, math.inf, 0.0, None,
     None),
    ("tabulated-response-time", lambda: TabulatedResponseTime(
        (np.linspace(0.0, 40.0, 401), np.exp(-np.linspace(0.0, 40.0, 401))), mean=1.0),
     0.0, math.inf, 0.0, None, None),
]


def _has_pdf(D):
    return not D.discrete and D.atoms is None and not isinstance(D, qt.Mixture)


@pytest.mark.parametrize("name, make, a, b, mass, pdf_a, pdf_b", SUPPORT_CASES,
                         ids=[c[0] for c in SUPPORT_CASES])
def test_values_below_at_and_above_the_support_bounds(name, make, a, b, mass, pdf_a, pdf_b):
    D = make()
    assert D._support() == (a, b)
    below = np.array([-np.inf, -1.0, np.nextafter(a, -np.inf)] + ([0.0, 0.5 * a] if a > 0 else []))
    assert np.all(D.cdf(below) == 0.0) and np.all(D.sf(below) == 1.0)
    # at the lower end: the atom there, if any
    assert D.cdf(a) == mass and D.sf(a) == pytest.approx(1.0 - mass, abs=1e-16)
    inside = np.nextafter(a, np.inf) if a < b else None
    if inside is not None:  # the CDF is right-continuous at a
        assert mass <= D.cdf(inside) <= mass + 1e-12
        assert D.sf(inside) == pytest.approx(1.0 - D.cdf(inside), abs=1e-16)
    # from the upper end on
    above = np.array([b, np.nextafter(b, np.inf), 2.0 * b + 1.0, np.inf])
    assert np.all(D.cdf(above) == 1.0) and np.all(D.sf(above) == 0.0)
    if math.isfinite(b) and a < b and D.atoms is None:
        assert 1.0 - 1e-12 <= D.cdf(np.nextafter(b, -np.inf)) <= 1.0
    # quantiles: the ends of the support at levels 0 and 1, inside it in between
    if isinstance(D, qt.ResponseLaw):   # levels in (0, 1) only, the ends refused by name
        for q in (0.0, 1.0):
            with pytest.raises(ValueError, match="q must lie in the open interval"):
                D.ppf(q)
    else:
        assert D.ppf(0.0) == a and D.ppf(1.0) == b
    assert np.all((D.ppf([1e-12, 0.5, 1 - 1e-12]) >= a) & (D.ppf([1e-12, 0.5, 1 - 1e-12]) <= b))
    if not _has_pdf(D):
        return
    outside = np.concatenate([below, above[1:]] if math.isfinite(b) else [below, above[-1:]])
    assert np.all(D.pdf(outside) == 0.0)
    if pdf_a is not None:
        assert D.pdf(a) == pytest.approx(pdf_a, rel=1e-15, abs=1e-300)
        assert D.pdf(inside) == pytest.approx(pdf_a, rel=1e-9, abs=1e-12)
    if pdf_b is not None:
        assert D.pdf(b) == pytest.approx(pdf_b, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("name, make, a, b, mass, pdf_a, pdf_b", SUPPORT_CASES,
                         ids=[c[0] for c in SUPPORT_CASES])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_broadcasting_keeps_shape_and_matches_scalars(name, make, a, b, mass, pdf_a, pdf_b,
                                                      shape):
    D = make()
    top = b if math.isfinite(b) else a + 10.0
    points = np.array([-1.0, a, 0.5 * (a + top), top, 2 * top + 1, np.inf])
    levels = np.array([0.0, 0.1, 0.5, 0.9, 1.0, 0.25])
    if isinstance(D, qt.ResponseLaw):   # response-time quantiles take levels in (0, 1)
        levels = np.array([1e-9, 0.1, 0.5, 0.9, 1 - 1e-9, 0.25])
    size = int(np.prod(shape))
    x, q = points[:size].reshape(shape), levels[:size].reshape(shape)
    methods = [("cdf", x), ("sf", x), ("ppf", q)] + ([("pdf", x)] if _has_pdf(D) else [])
    for method, arg in methods:
        out = getattr(D, method)(arg)
        if shape == ():
            assert type(out) is float
        else:
            assert isinstance(out, np.ndarray) and out.shape == shape and out.dtype == float
        scalars = [getattr(D, method)(float(v)) for v in np.ravel(arg)]
        np.testing.assert_allclose(np.ravel(out), scalars, rtol=1e-14, atol=0)


def _parts(D):
    """``D`` and every law it is built from (components, factors, base laws)."""
    out = [D]
    for name in ("components", "X", "M", "base"):
        part = getattr(D, name, None) if name != "base" or not hasattr(D, "components") else None
        for p in (part if isinstance(part, list | tuple) else [part]):
            if isinstance(p, qt.Distribution) and all(p is not o for o in out):
                out.extend(q for q in _parts(p) if all(q is not o for o in out))
    return out


@pytest.mark.parametrize("name, make, a, b, mass, pdf_a, pdf_b", SUPPORT_CASES,
                         ids=[c[0] for c in SUPPORT_CASES])
def test_hooks_never_receive_points_outside_the_support(name, make, a, b, mass, pdf_a, pdf_b):
    """Spy on the hooks of the law and of all its parts while every public method runs over
    points outside, at and inside the support: ``_cdf``/``_sf`` see only ``a < x < b`` (or
    ``x = a`` for a law that may have an atom there), ``_pdf`` only the closed support, the
    quantile hooks only levels in (0, 1)."""
    D = make()
    bad = []

    def spy(law, hook, ok):
        original = getattr(law, hook)

        def wrapper(arg):
            arg = np.asarray(arg, dtype=float)
            if arg.size and not np.all(ok(arg)):
                bad.append((repr(law), hook, arg[~ok(arg)][:3]))
            return original(arg)

        setattr(law, hook, wrapper)

    for law in _parts(D):
        lo, hi = law._support()
        low_ok = (lambda x, lo=lo: x >= lo) if law._atom_low else (lambda x, lo=lo: x > lo)
        for hook in ("_cdf", "_sf"):
            spy(law, hook, lambda x, low_ok=low_ok, hi=hi: low_ok(x) & (x < hi))
        spy(law, "_pdf", lambda x, lo=lo, hi=hi: (x >= lo) & (x <= hi) & np.isfinite(x))
        for hook in ("_ppf", "_isf"):
            spy(law, hook, lambda q: (q > 0) & (q < 1))
        if hasattr(law, "_pmf"):
            spy(law, "_pmf", lambda x, lo=lo, hi=hi: (x >= lo) & (x <= hi))
    top = b if math.isfinite(b) else a + 10.0
    ends = [np.nextafter(b, -np.inf), b, np.nextafter(b, np.inf)] if math.isfinite(b) else []
    x = np.concatenate([[-np.inf, -1.0, 0.0, np.nextafter(a, -np.inf), a, np.nextafter(a, np.inf)],
                        np.linspace(a, top, 7), ends, [2 * top + 1, np.inf]])
    levels = np.linspace(0.0, 1.0, 11)
    if isinstance(D, qt.ResponseLaw):
        levels = levels[1:-1]
    D.cdf(x), D.sf(x), D.ppf(levels), D.mean(), D.lst(np.array([0.5, 2.0]))
    if _has_pdf(D):
        D.pdf(x)
    if hasattr(D, "pmf") and not isinstance(D, qt.distributions._SciPy):
        D.pmf(x)
    assert not bad, bad


# Hypothesis: over families and parameters, P(X <= x) + P(X > x) = 1 to 1e-15, the CDF is
# non-decreasing, and the quantile function is its generalised inverse.
_positive = st.floats(1e-3, 1e3)


@st.composite
def _laws(draw):
    kind = draw(st.sampled_from(["exponential", "erlang", "hyperexponential", "shifted",
                                 "uniform", "pareto", "bounded-pareto", "discrete",
                                 "deterministic", "mixture"]))
    if kind == "exponential":
        return qt.Exponential(draw(_positive))
    if kind == "erlang":
        return qt.Erlang(draw(st.integers(1, 50)), draw(_positive))
    if kind == "hyperexponential":
        p = draw(st.floats(0.01, 0.99))
        return qt.HyperExponential([p, 1 - p], [draw(_positive), draw(_positive)])
    if kind == "shifted":
        return qt.ShiftedExponential(draw(st.floats(0.0, 1e3)), draw(_positive))
    if kind == "uniform":
        low = draw(st.floats(0.0, 1e3))
        return qt.Uniform(low, low + draw(_positive))
    if kind == "pareto":
        return qt.Pareto(draw(st.floats(0.1, 10.0)), draw(_positive))
    if kind == "bounded-pareto":
        low = draw(_positive)
        return qt.BoundedPareto(draw(st.floats(0.1, 10.0)), low, low * draw(st.floats(1.01, 1e6)))
    if kind in ("discrete", "deterministic"):
        n = 1 if kind == "deterministic" else draw(st.integers(1, 5))
        values = draw(st.lists(st.floats(0.0, 1e3), min_size=n, max_size=n))
        weights = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
        return qt.Discrete(values, weights / weights.sum())
    return qt.Mixture([draw(_laws()), draw(_laws())], [0.5, 0.5])


def _sum_tolerance(D):
    """Round-off bound of cdf + sf - 1: 1e-15, except for the bounded Pareto law, whose tail is
    a difference ``((low/x)^alpha - (low/high)^alpha) / mass`` of terms below 1 computed to a
    few ulps each and divided by the mass ``1 - (low/high)^alpha``: 4 eps / mass."""
    if isinstance(D, qt.BoundedPareto):
        return max(1e-15, 4 * np.finfo(float).eps / D._mass)
    if isinstance(D, qt.Mixture):
        return max(_sum_tolerance(c) for c in D.components)
    return 1e-15


@settings(max_examples=100, deadline=None, derandomize=True)
@given(D=_laws(), t=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20),
       q=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=10))
def test_cdf_sf_sum_monotone_and_quantiles_property(D, t, q):
    a, b = D._support()
    top = b if math.isfinite(b) else max(D.ppf(1 - 1e-9), a + 1.0)
    # points across and around the support, sorted
    x = np.sort(np.concatenate([a - 1.0 + 2 * (top - a + 1.0) * np.array(t), [a, b],
                                D.ppf(np.array(q))]))
    cdf, sf = D.cdf(x), D.sf(x)
    assert np.all(np.abs(cdf + sf - 1.0) <= _sum_tolerance(D))
    assert np.all(np.diff(cdf) >= 0) and np.all(np.diff(sf) <= 0)
    # ppf is the generalised inverse, up to the representation of its value (a quantile is a
    # double: 4 ulps of it, e.g. 4 ulps of 128 move a ShiftedExponential(128, 151) CDF by 2e-11):
    # F(ppf(u)+) >= u and F(ppf(u)-) <= u, and ppf(F(x)) is a point of the level F(x), at or
    # before x for a law on atoms (the atom carrying x's level)
    def around(y):
        step = np.where(np.isfinite(y), 4 * np.spacing(np.abs(y)), 0.0)
        return D.cdf(y - step), D.cdf(y + step)

    u = np.array(q)
    left, right = around(D.ppf(u))
    assert np.all(right >= u - 1e-12) and np.all(left <= u + 1e-12)
    inner = x[(x >= a) & (x <= top)]
    back = D.ppf(D.cdf(inner))
    left, right = around(back)
    assert np.all(right >= D.cdf(inner) - 1e-12) and np.all(left <= D.cdf(inner) + 1e-12)
    if D.atoms is not None:  # (a mixture's quantiles are bisections: to 4 ulps of the atom)
        assert np.all(back <= inner + 4 * np.spacing(inner))


# ------------------------------------------------- products with uniform laws, far off the axis
#
# Laplace inversion evaluates transforms far from the real axis, where lst_X(s m) oscillates
# in m; products with a uniform law (and minima of uniform laws) are taken along rays there.
# References in 20-digit mpmath, independent of the library: for X ~ U(a, b), S ~ U(A, B),
# E[exp(-s X S)] = [E1(aAs) - E1(aBs) - E1(bAs) + E1(bBs)] / ((b - a)(B - A) s) (integrate
# exp(-s x m) over x, then int_A^B exp(-c m) / m dm = E1(cA) - E1(cB)); for S ~ Exp(1),
# E[1 / (1 + s X)] = [log(1 + s b) - log(1 + s a)] / ((b - a) s); the minimum of i uniform
# laws has the density i (B - m)^(i-1) / (B - A)^i on [A, B] (mpmath.quad on short pieces).

_RAY_S = np.concatenate([np.geomspace(0.05, 100.0, 6) * np.exp(1j * np.linspace(-1.5, 1.5, 6)),
                         [0.3 + 40j, 0.5 - 150j, 0.01 + 5j, 0.7]])


def _mp_uniform_lst(s, a, b):
    return (mpmath.exp(-a * s) - mpmath.exp(-b * s)) / ((b - a) * s)


def _mp_over_uniform_minimum(f, s, i, low, high):
    pieces = mpmath.linspace(low, high, int(abs(s.imag) * (high - low) / 8) + 4)
    return mpmath.quad(lambda m: f(m) * i * ((high - m) / (high - low)) ** (i - 1)
                       / (high - low), pieces)


def _mp_references():
    a, b, A, B = 1, 3, 1, 5
    out = {}
    with mpmath.workdps(20):
        for s in map(mpmath.mpc, _RAY_S):
            out.setdefault("uxu", []).append(
                (mpmath.e1(a * A * s) - mpmath.e1(a * B * s) - mpmath.e1(b * A * s)
                 + mpmath.e1(b * B * s)) / ((b - a) * (B - A) * s))
            out.setdefault("uxexp", []).append(
                (mpmath.log(1 + s * b) - mpmath.log(1 + s * a)) / ((b - a) * s))
            for i in (2, 4):
                out.setdefault(f"min{i}", []).append(_mp_over_uniform_minimum(
                    lambda m, s=s: mpmath.exp(-s * m), s, i, A, B))
            out.setdefault("uxmin3", []).append(_mp_over_uniform_minimum(
                lambda m, s=s: _mp_uniform_lst(s * m, a, b), s, 3, A, B))
    return {k: np.array([complex(v) for v in values]) for k, values in out.items()}


def test_products_with_uniform_laws_far_from_the_real_axis():
    ref = _mp_references()
    X, S = qt.Uniform(1.0, 3.0), qt.Uniform(1.0, 5.0)
    laws = {"uxu": qt.product(X, S), "uxexp": qt.product(X, qt.Exponential(1.0)),
            "min2": S.minimum(2), "min4": S.minimum(4), "uxmin3": qt.product(X, S.minimum(3))}
    for name, law in laws.items():
        assert np.max(np.abs(law.lst(_RAY_S) - ref[name])) <= 1e-14, name
    # the same law with the factors swapped, and scaled
    assert np.max(np.abs(qt.product(qt.Exponential(1.0), X).lst(_RAY_S) - ref["uxexp"])) <= 1e-14
    assert np.max(np.abs(S.minimum(2).scaled(2.0).lst(_RAY_S / 2.0) - ref["min2"])) <= 1e-14


class _StrictShifted(qt.ShiftedExponential):
    """A law whose quantile hooks refuse the levels the contract never passes them."""

    def _ppf(self, q):
        assert np.all((q > 0) & (q < 1)), q
        return super()._ppf(q)

    def _isf(self, p):
        assert np.all((p > 0) & (p < 1)), p
        return super()._isf(p)


def test_composition_calls_quantile_hooks_inside_the_contract():
    """Composed code reads another law's quantiles through ``_ppf_all``/``_isf_all`` (levels 0
    and 1 are the support ends), never through its hooks at the ends."""
    from queuetheory.distributions import _Minimum, _uniform_minimum_power
    inner = _StrictShifted(1.0, 2.0)
    assert _uniform_minimum_power(_Minimum(qt.Uniform(1.0, 3.0), 2), inner) == 2
    assert inner._ppf_all(np.array([0.0, 1.0])).tolist() == [1.0, math.inf]
    assert inner._isf_all(np.array([0.0, 1.0])).tolist() == [math.inf, 1.0]


def _product_reference(X, M, x, what):
    """``P(X M <= x)``, ``P(X M > x)`` or the density of ``X M`` at 40 digits: ``mpmath.quad``
    over ``m`` with ``M``'s density (``M`` Uniform, or the minimum of two Uniforms), split at
    the kinks ``m = x / b_X, x / a_X`` of ``F_X(x / m)``; ``X`` given by exact mpmath CDF and
    density formulas (independent of the package)."""
    with mpmath.workdps(40):
        x = mpmath.mpf(x)
        if isinstance(M, qt.Uniform):
            A, B, i = mpmath.mpf(M.low), mpmath.mpf(M.high), 1
        else:
            A, B, i = mpmath.mpf(M.base.low), mpmath.mpf(M.base.high), M.i
        dens = lambda m: i * ((B - m) / (B - A)) ** (i - 1) / (B - A)  # noqa: E731
        a, b, cdf, pdf = X
        g = {"cdf": lambda m: cdf(x / m), "sf": lambda m: 1 - cdf(x / m),
             "pdf": lambda m: pdf(x / m) / m}[what]
        cuts = sorted({A, B} | {c for c in (x / b, x / a) if A < c < B})
        return float(mpmath.quad(lambda m: g(m) * dens(m), cuts))


def _mp_uniform(low, high):
    lo, hi = mpmath.mpf(low), mpmath.mpf(high)
    return (lo, hi, lambda y: min(max((y - lo) / (hi - lo), 0), 1),
            lambda y: 1 / (hi - lo) if lo < y < hi else 0)


def _mp_bounded_pareto(alpha, low, high):
    a, lo, hi = mpmath.mpf(alpha), mpmath.mpf(low), mpmath.mpf(high)
    mass = 1 - (lo / hi) ** a
    return (lo, hi, lambda y: 0 if y <= lo else 1 if y >= hi else (1 - (lo / y) ** a) / mass,
            lambda y: a * lo**a * y ** (-a - 1) / mass if lo < y < hi else 0)


@pytest.mark.parametrize("X, mp_X, M", [
    (qt.Uniform(1, 3), _mp_uniform(1, 3), qt.Uniform(1, 5)),
    (qt.Uniform(1, 3), _mp_uniform(1, 3), qt.Uniform(1, 5).minimum(2)),
    (qt.BoundedPareto(1.5, 0.5, 40.0), _mp_bounded_pareto(1.5, 0.5, 40.0), qt.Uniform(0.2, 9.0)),
])
def test_product_of_kinked_continuous_laws_to_machine_precision(X, mp_X, M):
    # A kink of the inner CDF (a bound of a uniform law) used to cost the quadrature over the
    # other factor its accuracy: U(1, 3) x U(1, 5) had CDF errors up to 5.4e-7, erratic in x,
    # and its finite-difference density was off 0.5%; the integral is now split at the kinks
    law = qt.product(X, M)
    x = np.linspace(float(X.ppf(0.0) * M.ppf(0.0)), float(X.ppf(1.0) * M.ppf(1.0)), 23)[1:-1]
    x = np.concatenate([x, [7.0145627, 7.01456134]])
    for what, got in (("cdf", law.cdf(x)), ("sf", law.sf(x)), ("pdf", law.pdf(x))):
        ref = np.array([_product_reference(mp_X, M, xi, what) for xi in x])
        tol = 1e-13 if what != "pdf" else 1e-11 * np.max(ref)
        assert np.max(np.abs(got - ref)) <= tol, what


def _bounded_pareto_minimum_lst_mp(alpha, low, high, i, s):
    """``E[exp(-s min)]`` for the minimum of ``i`` BoundedPareto laws at 50 digits: the density
    ``-d/dx ((low/x)^a - r)^i / mass^i`` expanded binomially into power laws, each integrated
    exactly, ``int_low^high exp(-s x) x^(-b) dx = s^(b-1) Gamma(1 - b, s low, s high)``."""
    with mpmath.workdps(50):
        a, lo, hi, s = mpmath.mpf(alpha), mpmath.mpf(low), mpmath.mpf(high), mpmath.mpc(s)
        r, mass = (lo / hi) ** a, 1 - (lo / hi) ** a
        total = 0
        for j in range(1, i + 1):
            c = mpmath.binomial(i, j) * (-r) ** (i - j) / mass**i * a * j * lo ** (a * j)
            b = a * j + 1
            total += c * s ** (b - 1) * mpmath.gammainc(1 - b, s * lo, s * hi)
        return complex(total)


@pytest.mark.parametrize("alpha, low, high, i", [
    (0.5, 500.0, 750.0, 3), (0.995, 9105.7, 1.8e7, 3), (1.5, 1.0, 100.0, 4), (0.5, 1.0, 1.05, 2),
    (2.5, 1e-6, 1e-3, 2)])
def test_minimum_of_bounded_pareto_transform_far_from_the_real_axis(alpha, low, high, i):
    # The transform of the fastest of i bounded-Pareto runtimes, as Laplace inversion asks for it
    # (|Im s| >> Re s): taken along rays, 1e-15 everywhere. The quadrature over quantiles it
    # replaces was off 2e-6 at s = (0.01 + 3000j) / low for (1.5, 1, 100), and 35-48 s of
    # RIQ(3) quantiles went into it.
    law = qt.BoundedPareto(alpha, low, high).minimum(i)
    s = np.array([1e-3 + 0.2j, 0.5 + 30j, 2 - 300j, 0.01 + 3000j, 1e-4 + 4e4j]) / low
    got = law.lst(s)
    ref = np.array([_bounded_pareto_minimum_lst_mp(alpha, low, high, i, z) for z in s])
    assert np.max(np.abs(got - ref)) <= 1e-14


# ------------------------------------------------------------------------- stop-loss transform
_STOP_LOSS_Y = np.array([-1.0, 0.0, 0.3, 0.5, 0.999, 1.0, 1.5, 2.5, 3.0, 7.0, 30.0, 150.0])


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_stop_loss_against_mpmath(case):
    # E[(X - y)^+] = int_0^inf t f(y + t) dt by mpmath quadrature of the density at 30 digits
    # (a sum over the atoms for a discrete law), against the closed forms of the integrated
    # tail int_y^inf P(X > u) du; the mean-field analysis takes their second differences
    dist = case.make()
    got = dist._stop_loss_all(_STOP_LOSS_Y)
    with mpmath.workdps(30):
        for y, value in zip(_STOP_LOSS_Y, got):
            y = mpmath.mpf(float(y))
            if case.atoms is not None:
                ref = mpmath.fsum(mpmath.mpf(p) * max(mpmath.mpf(v) - y, 0) for v, p in case.atoms)
            else:
                # in t = x - y, from the support's start, split at its breakpoints and 1, 10
                low = max(y, case.breakpoints[0])
                ends = case.breakpoints[-1]
                points = sorted({low - y, *(b - y for b in case.breakpoints if b > low),
                                 *(t for t in (1, 10) if low - y < t < ends - y)})
                # scaled by the density at the start (mpmath's tolerance is absolute)
                top = max(case.mp_pdf(y + points[0] + step) for step in (0, 0.5))
                ref = (top * mpmath.quad(lambda t, y=y, top=top: t * case.mp_pdf(y + t) / top,
                                         points) if len(points) > 1 else mpmath.mpf(0))
            assert value == pytest.approx(float(ref), rel=1e-12, abs=1e-300)


def test_stop_loss_generic_fallback_and_compositions():
    # a law without a closed form (scipy's lognormal) goes through the numerical fallback;
    # mixtures and scaled laws combine their parts' closed forms. Reference: mpmath quadrature
    # of (x - y) times the density
    lognormal = qt.from_scipy(stats.lognorm(0.8))
    mixture = qt.Mixture([qt.Exponential(1.0), qt.Uniform(0.0, 2.0)], [0.3, 0.7])
    scaled = qt.Erlang(2, 1.0).scaled(3.0)
    densities = {
        "lognormal": (lognormal, lambda x: mpmath.npdf(mpmath.log(x), 0, 0.8) / x),
        "mixture": (mixture, lambda x: 0.3 * mpmath.exp(-x) + (0.35 if x < 2 else 0)),
        "scaled": (scaled, lambda x: x / 9 * mpmath.exp(-x / 3)),
    }
    y = np.array([0.0, 0.2, 1.0, 1.9, 2.0, 5.0, 12.0])
    with mpmath.workdps(30):
        for name, (law, pdf) in densities.items():
            got = law._stop_loss_all(y)
            for yk, value in zip(y, got):
                yk = mpmath.mpf(float(yk))
                ref = mpmath.quad(lambda x, yk=yk, pdf=pdf: (x - yk) * pdf(x),
                                  sorted({yk, max(yk, 2), max(yk, 10), mpmath.inf}))
                assert value == pytest.approx(float(ref), rel=1e-11), (name, yk)


def test_stop_loss_of_an_erlang_law_with_many_phases():
    # the closed form ((k - z) Q(k, z) + z^k e^-z / (k - 1)!) / rate, O(1) per point (a sum over
    # the k phases took points x k memory: 2.45 GB for k = 1000 in the mean-field map).
    # Reference: mpmath quadrature of t f(y + t) at 30 digits
    law = qt.Erlang(1000, 1000.0)
    y = np.array([0.5, 0.97, 1.0, 1.03, 1.2])
    got = law._stop_loss_all(y)
    with mpmath.workdps(30):
        k, rate = 1000, mpmath.mpf(1000)

        def pdf(x):
            return mpmath.exp(k * mpmath.log(rate) + (k - 1) * mpmath.log(x) - rate * x
                              - mpmath.loggamma(k))

        for yk, value in zip(y, got):
            yk = mpmath.mpf(float(yk))
            points = sorted({0, 3, *(b - yk for b in (0.9, 1.0, 1.1, 1.5) if b > yk)})
            ref = mpmath.quad(lambda t, yk=yk: t * pdf(yk + t), points)
            assert value == pytest.approx(float(ref), rel=1e-9, abs=1e-25)


def test_moments_beyond_the_floats_are_inf_or_zero_not_an_exception():
    # a closed form's rate^k left the floats: OverflowError (and, through the time unit, a
    # recursion) from moment(); now combined in logarithms. References by mpmath at 30 digits
    import mpmath
    with mpmath.workdps(30):
        erlang = mpmath.gamma(203) / mpmath.gamma(3) / mpmath.mpf(3) ** 200
        small = mpmath.factorial(27) / mpmath.mpf(10) ** (13 * 27)
    assert qt.Erlang(3, 3.0).moment(200) == pytest.approx(float(erlang), rel=1e-12)
    assert qt.Exponential(1e13).moment(27) == pytest.approx(float(small), rel=1e-3)  # subnormal
    assert qt.Exponential(1e13).moment(200) == 0.0      # 200! / 1e2600
    assert qt.Exponential(1.0).moment(200) == math.inf   # 200! > 1e308
    assert qt.Exponential(1e-13).moment(27) == math.inf


@pytest.mark.parametrize("law, i", [
    (qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.5, 0.5]), 2),
    (qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.5, 0.5]), 5),
    (qt.Mixture([qt.Discrete([1.0, 3.0], [0.5, 0.5]),
                 qt.HyperExponential([0.9, 0.1], [2.0, 0.25])], [0.3, 0.7]), 3),
    (qt.HyperExponential([0.9, 0.1], [2.0, 0.25]), 4)])
def test_minimum_of_atoms_and_exponentials_transform_in_closed_form(law, i, mp30):
    # the fastest of i replicas (RIQ, Redundancy-d) of a law of atoms and exponentials: its
    # transform by integration by parts over the pieces between the atoms, in closed form; the
    # generic quadrature took 0.36 ms per value (a RIQ(2) median 30 s). References: the same
    # integral in mpmath at 30 digits (quad on each piece, the tail piece along the ray where
    # exp(-s x) decays), and the generic quadrature (another method, accurate on these
    # contours)
    m = law.minimum(i)
    s = np.concatenate([(13 + 1j * np.pi * np.array([0, 1, 5, 65, 660])) / t
                        for t in (0.3, 3.0, 30.0)])
    got = m.lst(s)
    generic = qt.Distribution._lst(m, s)      # its own accuracy about 1e-13 on these contours
    assert np.all(np.abs(got - generic) <= 1e-12)
    values, masses = law._point_masses()
    bounds = [0.0] + sorted(set(values.tolist())) + [math.inf]
    exps = _exponential_part(law)
    for sj, gj in zip(s[::3], got[::3]):
        sj = mpmath.mpc(sj)
        direction = mpmath.exp(-1j * mpmath.arg(sj))
        total = mpmath.mpf(0)
        for a, b in zip(bounds[:-1], bounds[1:]):
            # (c + E(z))^i on the piece, c the mass of the atoms above it, E continued off the
            # real axis: int_a^b = (ray from a) - (ray from b), along which exp(-s z) decays
            c = mpmath.fsum(mpmath.mpf(p) for v, p in zip(values, masses) if v > a)

            def ray(x0, c=c, s0=sj, d=direction):
                def integrand(r):
                    z = x0 + r * d
                    parts = mpmath.fsum(w * mpmath.exp(-rate * z) for w, rate in exps)
                    return mpmath.exp(-s0 * z) * d * (c + parts) ** i
                return mpmath.quad(integrand, [0, mpmath.inf])

            total += ray(mpmath.mpf(a)) - (ray(mpmath.mpf(b)) if math.isfinite(b) else 0)
        want = 1 - sj * total
        assert abs(gj - complex(want)) <= 2e-15, (sj, gj, want)


def _exponential_part(law):
    """``(w, rate)`` of the exponential components of a law of atoms and exponentials."""
    parts = zip(law.components, law.weights) if isinstance(law, qt.Mixture) else ((law, 1.0),)
    out = []
    for part, weight in parts:
        if isinstance(part, qt.Exponential):
            out.append((weight, part.rate))
        elif isinstance(part, qt.HyperExponential):
            out += [(weight * p, r) for p, r in zip(part.probs, part.rates)]
    return out


@pytest.mark.parametrize(("k", "rate"), [(10**9, 1e9), (10**11, 4.691e11), (10**4, 1e4)])
def test_erlang_moments_of_a_large_shape(k, rate):
    """``E[X^n] = k (k + 1) ... (k + n - 1) / rate^n`` as a product: the difference of
    log-gamma functions had cancelled (``Erlang(10**9, 1e9)``: mean 1 + 7.6e-7, and the load
    of every system built on it as far off; ``10**11``: 3.1e-4; found by a fuzzing helper).
    Reference: the same product in exact rationals (``Fraction``), rounded once."""
    E = qt.Erlang(k, rate)
    exact = [Fraction(1)]
    for i in range(3):
        exact.append(exact[-1] * (k + i) / Fraction(rate))
    for n in (1, 2, 3):
        assert E.moment(n) == pytest.approx(float(exact[n]), rel=4e-16)
    p = qt.analyze(qt.System(qt.Random(), qt.IR(E), 0.5 / E.mean()))
    assert p.system.load == pytest.approx(0.5, rel=1e-15)


@pytest.mark.parametrize(("k", "rate", "sf", "cdf", "rtol"), [
    # mpmath, 40 digits: float(mp.gammainc(k, rate * x, mp.inf, regularized=True)) and
    # float(mp.gammainc(k, 0, rate * x, regularized=True)) at x = 1e-6, 0.5, 3, 50, 300
    (3, 2.0, [1.0, 0.9196986029286058, 0.06196880441665896, 1.8976107553682285e-40,
              4.786642678691315e-256],
     [1.333331333334933e-18, 0.08030139707139419, 0.938031195583341, 1.0, 1.0], 4e-15),
    (12, 0.5, [1.0, 0.9999999999999999, 0.9999999317578198, 0.0014159729740810289,
               1.6769065659778715e-49],
     [5.096862146592779e-85, 9.880770749612384e-17, 6.824218029236008e-08, 0.998584027025919,
      1.0], 4e-15),
    (17, 0.5, [1.0, 1.0, 0.999999999999326, 0.037747647226841465, 2.519267045618001e-44],
     [2.14497064721164e-122, 1.2924318083100598e-25, 6.739758583246639e-13, 0.9622523527731586,
      1.0], 1e-13),
])
def test_erlang_cdf_and_sf_in_both_tails(k, rate, sf, cdf, rtol):
    # up to 16 phases the survival function is the Poisson sum e^-y sum_{j<k} y^j / j! and the
    # CDF its complement where that is at least 1/2 (scipy's gammainc below): each to a few ulps
    # in both tails; beyond 16 phases both are scipy's (gammaincc had been up to 9.9e-14 off
    # relative over k = 1 to 16; here 7e-15 at k = 17)
    law = qt.Erlang(k, rate)
    x = np.array([1e-6, 0.5, 3.0, 50.0, 300.0])
    np.testing.assert_allclose(law.sf(x), sf, rtol=rtol, atol=0)
    np.testing.assert_allclose(law.cdf(x), cdf, rtol=rtol, atol=0)
    # the hooks keep their argument's shape, a 0-d array included (it had raised IndexError)
    for i in (0, 2):
        assert law._sf(np.array(x[i])).shape == law._cdf(np.array(x[i])).shape == ()
        assert law._sf(np.array(x[i])) == law.sf(x)[i] and law._cdf(np.array(x[i])) == law.cdf(x)[i]
    assert law._cdf(x.reshape(5, 1)).shape == (5, 1)


PHASE_LAWS = [qt.Exponential(2.5), qt.Erlang(4, 3.0), qt.HyperExponential([0.3, 0.0, 0.7],
                                                                          [0.2, 5.0, 9.0]),
              qt.Deterministic(1.5), qt.Discrete([0.5, 2.0], [0.4, 0.6]),
              qt.Mixture([qt.Erlang(3, 2.0), qt.Deterministic(1.0), qt.Exponential(0.5)],
                         [0.25, 0.5, 0.25]),
              qt.Mixture([qt.Mixture([qt.Erlang(2, 1.0), qt.Uniform(0, 1)], [1.0, 0.0]),
                          qt.HyperExponential([0.5, 0.5], [1.0, 3.0])], [0.6, 0.4])]


@pytest.mark.parametrize("law", PHASE_LAWS)
def test_phases_are_the_continuous_part(law):
    # Distribution._phases: P(X > x) = P(atoms > x) + sum_c p_c e^(-r_c x) sum_(m < k_c)
    # (r_c x)^m / m!, against the law's own survival function (mpmath for the Erlang sums)
    p, rate, k = law._phases()
    values, masses = law._point_masses()
    assert p.sum() + masses.sum() == pytest.approx(1.0, abs=1e-15)
    for x in (0.0, 0.3, 1.0, 1.5, 2.7, 12.0):
        expected = float(sum(masses[values > x]) + sum(
            pc * mpmath.exp(-rc * x) * sum((rc * x) ** m / mpmath.factorial(m)
                                            for m in range(int(kc)))
            for pc, rc, kc in zip(p, rate, k)))
        assert law.sf(x) == pytest.approx(expected, rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("law", [qt.Uniform(0.5, 1.5), qt.Pareto(2.5, 1.0),
                                 qt.Mixture([qt.Exponential(1.0), qt.Uniform(0, 1)],
                                            [0.5, 0.5]),
                                 qt.BoundedPareto(1.5, 1.0, 10.0)])
def test_laws_without_phases_say_so(law):
    assert law._phases() is None


def test_product_with_a_mixture_whose_support_has_a_gap():
    # a mixture factor distributes over its components (exact); the quadrature over the
    # quantiles of 0.7 U(0.5, 1) + 0.3 U(2, 3), which jump at 0.7, had erred by 1.7e-5 to
    # 4.2e-5 relative, and the M/G/1 sojourn's tail read 0 from t = 40 on (an independent
    # review). References (mpmath, 30 digits; Erlang(2, 2): P(X > x) = (1 + 2 x) e^(-2 x))::
    #
    #     g = lambda s: (1 + 2 * t / s) * mp.e ** (-2 * t / s)
    #     0.7 * mp.quad(g, [0.5, 1]) / mp.mpf(0.5) + mp.mpf("0.3") * mp.quad(g, [2, 3])
    S = qt.Mixture([qt.Uniform(0.5, 1.0), qt.Uniform(2.0, 3.0)], [0.7, 0.3])
    P = qt.product(qt.Erlang(2, 2.0), S)
    t = np.array([1.0, 3.0, 5.0, 10.0, 30.0])
    exact = [0.41799619173561126247, 0.095395465990918628743, 0.028127384271935820667,
             0.0011181333489634050202, 1.8549821144568890164e-9]
    np.testing.assert_allclose(P.sf(t), exact, rtol=1e-13)
    assert qt.product(S, qt.Erlang(2, 2.0)).sf(t) == pytest.approx(exact, rel=1e-13)
    runtime = qt.SX(qt.Erlang(2, 2.0), S)
    law = qt.analyze(qt.System(qt.Random(), runtime, 0.5 / runtime.mean_runtime())).response_time
    assert law.sf(40.0) >= P.sf(40.0) > 2.3e-12   # the sojourn T >= the service B (it read 0)


@pytest.mark.parametrize(("X", "M", "exact"), [
    # a job size mixing an atom with a density, the quadrature over M's quantiles had been
    # 7.4e-5 relative off: 0.4 P(U(1, 2) > t) + 0.6 mp.quad(lambda m: mp.e ** (-t / m), [1, 2])
    (qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.4, 0.6]), qt.Uniform(1.0, 2.0),
     [0.8252898319578326, 0.41667265974602213, 0.2062602707655327, 0.08133578879501333,
      0.0038173925121155975]),
    # a factor mixing an atom with a uniform: 0.5 g(1) + 0.5 mp.quad(g, [2, 3]), g as above
    (qt.Erlang(2, 2.0), qt.Mixture([qt.Deterministic(1.0), qt.Uniform(2.0, 3.0)], [0.5, 0.5]),
     [0.8361457473194928, 0.42826313834446156, 0.3267751668745999, 0.16189148910538734,
      0.006907418911829762])])
def test_product_with_a_mixture_holding_an_atom(X, M, exact):
    # mpmath at 30 digits, as in test_product_with_a_mixture_whose_support_has_a_gap
    t = np.array([0.5, 1.5, 1.9, 3.0, 8.0])
    np.testing.assert_allclose(qt.product(X, M).sf(t), exact, rtol=1e-13)
