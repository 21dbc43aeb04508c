"""The shared quadrature rules and moments from survival functions, against closed forms
evaluated in mpmath (exponential, Pareto, atoms, kinks; scales 1e-9 to 1e9)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuetheory import quadrature
from queuetheory.distributions import Distribution

SCALES = [1e-9, 1.0, 1e9]


def exp_moment(a, k):
    """``E[T^k] = k! a^k`` for an exponential law of mean ``a``."""
    return float(mpmath.factorial(k) * mpmath.mpf(a) ** k)


def pareto_moment(alpha, xm, k):
    """``E[T^k] = alpha xm^k / (alpha - k)`` for ``alpha > k``, else infinite."""
    if alpha <= k:
        return math.inf
    return float(mpmath.mpf(alpha) * mpmath.mpf(xm) ** k / (mpmath.mpf(alpha) - k))


def pareto_sf(alpha, xm):
    return lambda t: np.where(t < xm, 1.0, (xm / np.maximum(t, xm)) ** alpha)


def relerr(x, ref):
    return abs(x - ref) / abs(ref)


# ---------------------------------------------------------------------- moment_from_sf
@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_moment_from_sf_exponential(a, k):
    def sf(t):
        return np.exp(-t / a)

    # cut at the median, as Distribution._moment does
    assert relerr(quadrature.moment_from_sf(sf, k, [a * math.log(2.0)]), exp_moment(a, k)) < 1e-10


@pytest.mark.parametrize("xm", SCALES)
@pytest.mark.parametrize(("alpha", "k"), [(2.5, 1), (2.5, 2), (2.5, 3), (1.5, 1), (1.5, 2),
                                          (3.0, 3), (1.0, 1), (0.5, 1), (4.0, 3)])
def test_moment_from_sf_pareto(xm, alpha, k):
    """A divergent moment (alpha <= k) comes back inf, a finite one to 1e-9."""
    got = quadrature.moment_from_sf(pareto_sf(alpha, xm), k, [xm, 2.0 * xm])
    ref = pareto_moment(alpha, xm, k)
    if math.isinf(ref):
        assert got == math.inf
    else:
        assert relerr(got, ref) < 1e-9


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_moment_from_sf_atoms_off_the_cuts(scale, k):
    """Atoms at 1 and 3 (weights 0.3, 0.7) with the only cut at 2 (the median): the jump at 3
    falls inside the tail piece; the moment is ``0.3 + 0.7 * 3^k`` times ``scale^k``."""
    def sf(t):
        return np.where(t < scale, 1.0, np.where(t < 3 * scale, 0.7, 0.0))

    ref = float((mpmath.mpf("0.3") + mpmath.mpf("0.7") * 3**k) * mpmath.mpf(scale) ** k)
    assert relerr(quadrature.moment_from_sf(sf, k, [2.0 * scale]), ref) < 1e-10


@pytest.mark.parametrize("b", SCALES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_moment_from_sf_kink(b, k):
    """Minimum of two Uniform(0, b): ``sf = (1 - t/b)^2`` on [0, b], a kink at b inside the
    tail piece; ``E[T^k] = b^k k B(k, 3)``."""
    ref = float(mpmath.mpf(b) ** k * k * mpmath.beta(k, 3))
    got = quadrature.moment_from_sf(lambda t: np.maximum(1.0 - t / b, 0.0) ** 2, k, [0.3 * b])
    assert relerr(got, ref) < 1e-10


def test_moment_from_sf_no_tail_truncates():
    """``tail=False`` stops at the last cut: ``int_0^1 2 t e^-t dt = 2 - 4/e``."""
    got = quadrature.moment_from_sf(lambda t: np.exp(-t), 2, [0.5, 1.0], tail=False)
    assert relerr(got, float(2 - 4 / mpmath.e)) < 1e-12


# ------------------------------------------------------------- the Distribution fallback
class _CdfOnly(Distribution):
    """A law known only by its survival function (the base class's numerical fallbacks)."""

    def __init__(self, sf):
        self._sf_function = sf

    def _sf(self, x):
        return self._sf_function(np.asarray(x, dtype=float))

    def _cdf(self, x):
        return 1.0 - self._sf(x)


@pytest.mark.parametrize("a", SCALES)
def test_distribution_fallback_exponential(a):
    law = _CdfOnly(lambda t: np.exp(-np.maximum(t, 0.0) / a))
    for k in (1, 2, 3):
        assert relerr(law.moment(k), exp_moment(a, k)) < 1e-10


@pytest.mark.parametrize("xm", SCALES)
def test_distribution_fallback_pareto(xm):
    law = _CdfOnly(pareto_sf(1.5, xm))
    assert relerr(law.moment(1), pareto_moment(1.5, xm, 1)) < 1e-9
    assert law.moment(2) == math.inf


def test_distribution_fallback_atom():
    """A single atom at 2e9: every moment is ``(2e9)^k``."""
    law = _CdfOnly(lambda t: np.where(t < 2e9, 1.0, 0.0))
    for k in (1, 2, 3):
        assert relerr(law.moment(k), 2e9**k) < 1e-10


# ------------------------------------------------ moment_from_sf(scale=): an inverted tail
@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_inverted_sf_exponential(a, k):
    got = quadrature.moment_from_sf(lambda t: np.exp(-t / a), k, scale=a)
    assert relerr(got, exp_moment(a, k)) < 1e-8


@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("k", [1, 2])
def test_inverted_sf_noisy_exponential(a, k):
    """With an absolute error of 1e-11 in the survival function (as from inversion)."""
    rng = np.random.default_rng(12)

    def sf(t):
        return np.exp(-t / a) + 1e-11 * rng.uniform(-1.0, 1.0, np.shape(t))

    assert relerr(quadrature.moment_from_sf(sf, k, scale=a), exp_moment(a, k)) < 1e-8


@pytest.mark.parametrize("xm", SCALES)
def test_inverted_sf_pareto(xm):
    """A power tail: the finite moment extrapolated, the divergent ones inf."""
    sf = pareto_sf(2.5, xm)
    assert relerr(quadrature.moment_from_sf(sf, 1, scale=2.0 * xm),
                  pareto_moment(2.5, xm, 1)) < 1e-6
    assert quadrature.moment_from_sf(sf, 3, scale=2.0 * xm) == math.inf
    assert quadrature.moment_from_sf(pareto_sf(1.5, xm), 2, scale=3.0 * xm) == math.inf


def test_inverted_sf_never_small_is_inf():
    assert quadrature.moment_from_sf(lambda t: np.full(np.shape(t), 0.5), 1, scale=1.0) \
        == math.inf


# ------------------------------------------------ moment_from_sf(rule=...): Gauss-Legendre
@pytest.mark.parametrize("b", SCALES)
def test_moment_from_sf_adaptive_kink_and_atom(b):
    """``sf = (1 - t/b)^2`` on [0, b] plus an atom of 1/2 at 1.5 b (mixture), over one
    piece [0, 4b]: the bisection localises the kink and the jump."""
    def sf(t):
        return 0.5 * np.maximum(1.0 - t / b, 0.0) ** 2 + 0.5 * (t < 1.5 * b)

    for k in (1, 2):
        ref = float(mpmath.mpf(b) ** k * (k * mpmath.beta(k, 3) + mpmath.mpf(1.5) ** k) / 2)
        got = quadrature.moment_from_sf(sf, k, [0.5 * b, 4.0 * b], rule="adaptive", tail=False)
        assert relerr(got, ref) < 1e-11


@pytest.mark.parametrize("a", SCALES)
def test_moment_from_sf_gauss_legendre_exponential(a):
    edges = np.concatenate([[0.0], a * 2.0 ** np.arange(-6, 7)])
    got = quadrature.moment_from_sf(lambda t: np.exp(-t / a), 2, edges, rule=20, tail=False)
    # truncated at 64 a: 2 a^2 (1 - e^-64 (1 + 64 + 64^2/2)) ~ 2 a^2 to 1e-24
    assert relerr(got, exp_moment(a, 2)) < 1e-13


def test_gauss_legendre_cached_read_only():
    x, w = quadrature.gauss_legendre(12)
    assert quadrature.gauss_legendre(12)[0] is x
    assert not x.flags.writeable and not w.flags.writeable
    assert abs(w.sum() - 2.0) < 1e-14


# ----------------------------------------------------------------- double-exponential rules
def test_tanh_sinh_nested_levels_singular_endpoint():
    """``int_0^1 -log(u) cos(3u) du`` (log-singular at 0) by the nested rule, every level
    normalised to 1, against mpmath's quadrature."""
    ref = float(mpmath.quad(lambda u: -mpmath.log(u) * mpmath.cos(3 * u), [0, 1]))
    total = 0.0
    for level in range(4):
        u, _, w, norm = quadrature.tanh_sinh_level(level)
        total = (0.5 if level else 1.0) * total + w @ (-np.log(u) * np.cos(3.0 * u))
        assert relerr(total / norm, ref) < 1e-14
    u, v, w = quadrature.tanh_sinh_probabilities()
    assert abs(w.sum() - 1.0) < 1e-15
    assert np.all(np.abs(u + v - 1.0) <= 2.3e-16)  # one rounding of the sum


@pytest.mark.parametrize("s", [0.5, 2.5, 7.0])
def test_exp_sinh_gamma(s):
    """``int_0^inf t^(s-1) e^-t dt = Gamma(s)``."""
    t, w = quadrature.exp_sinh_nodes()
    integrand = np.exp((s - 1) * np.log(t) - t)
    assert relerr(float(w @ integrand), float(mpmath.gamma(s))) < 1e-13


@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("rule", ["quad", "adaptive", 24])
def test_every_rule_with_the_tail(a, rule):
    """Each rule for the pieces, then the tail in ``log t``: an exponential of mean ``a`` cut
    at ``a`` and ``2 a`` (``E[T^2] = 2 a^2``, mpmath reference in :func:`exp_moment`)."""
    got = quadrature.moment_from_sf(lambda t: np.exp(-t / a), 2, [a, 2.0 * a], rule=rule)
    assert relerr(got, exp_moment(a, 2)) < 1e-11


@pytest.mark.parametrize("k", [1, 2, 3])
def test_fixed_rule_exact_on_cubic_pieces(k):
    """``sf = (1 - t)^3`` on [0, 1] (a Beta(1, 4) law): 4 points per piece integrate
    ``k t^(k-1) sf`` exactly for ``k <= 5``; ``E[T^k] = k B(k, 4)`` (mpmath)."""
    got = quadrature.moment_from_sf(lambda t: np.maximum(1.0 - t, 0.0) ** 3, k,
                                    np.linspace(0.0, 1.0, 5), rule=4, tail=False)
    assert relerr(got, float(k * mpmath.beta(k, 4))) < 1e-14


@pytest.mark.parametrize("kwargs", [{}, {"cuts": [1.0], "scale": 1.0}, {"cuts": [1.0], "rule": 0},
                                    {"cuts": [1.0], "rule": "gauss"}])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="cuts|rule"):
        quadrature.moment_from_sf(lambda t: np.exp(-t), 1, **kwargs)


def test_quantiles_on_pieces_padded_rules_and_narrow_pieces():
    # the removal analysis's use: two rules padded to one width (slots of weight 0 left at 0
    # off the table), a rule per piece, pieces no wider than min_width left at 0, an infinite
    # quantile at posinf; reference: F^-1 at each weighted node computed directly
    import queuetheory as qt

    law = qt.Exponential(2.0)
    points, weights = np.zeros((2, 4)), np.zeros((2, 4))
    points[0], weights[0] = np.polynomial.legendre.leggauss(4)
    points[1, :2], weights[1, :2] = np.polynomial.legendre.leggauss(2)
    levels = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    table = quadrature._quantile_table(law, levels, points[[0, 1, 0, 0]], posinf=1e300)
    lo = np.array([[0.25, 0.1, 0.5, 0.9, 1 - 2.0 ** -53], [0.3, 1e-18, 0.0, 0.95, 0.0]])
    hi = np.array([[0.5, 0.2, 0.9, 1.0, 1.0], [0.3, 5e-18, 0.25, 1.0, 1e-18]])
    rule = np.array([[1, 1, 0, 0, 0], [0, 0, 0, 1, 0]])
    got = quadrature._quantiles_on_pieces(law, lo, hi, levels, table, (points, weights), rule,
                                          min_width=1e-17, posinf=1e300)
    u = 0.5 * (lo + hi)[..., None] + 0.5 * (hi - lo)[..., None] * points[rule]
    direct = np.nan_to_num(law._ppf_all(np.clip(u, 0.0, 1.0)), posinf=1e300)
    weighed = (weights[rule] > 0) & (hi - lo > 1e-17)[..., None]
    np.testing.assert_array_equal(got[weighed], direct[weighed])
    np.testing.assert_array_equal(got[0, 0], table[1])   # on the levels: the table's row
    weighed[0, 0] = True
    assert np.all(got[~weighed] == 0)
    # 4e-17 wide next to 1: some nodes round to u = 1 (F^-1 = inf, at posinf); [1e-18, 5e-18]
    # below min_width (0 although it has a width), [0, 1e-18] too
    assert got[0, 4].max() == 1e300 and np.all(got[1, [1, 4]] == 0)
    wider = quadrature._quantiles_on_pieces(law, lo, hi, levels, table, (points, weights), rule,
                                            posinf=1e300)
    assert np.all(wider[1, 1] > 0) and np.all(wider[1, 4, :4] > 0)   # with min_width 0
    top = quadrature._quantile_table(law, np.array([0.5, 1.0]), np.array([1.0]), posinf=1e300)
    np.testing.assert_array_equal(top, [[1e300], [0.0]])   # F^-1(1) = inf stands at posinf


@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.booleans(),
                          st.integers(0, 9)), min_size=1, max_size=12),
       st.sampled_from([0.0, 1e-17]))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_quantiles_on_pieces_property(pieces, min_width):
    # any pieces of [0, 1], some exactly between two levels (the table's), a rule per piece:
    # every weighed slot is F^-1 at its node (computed directly, the same operations), a
    # piece on the levels its table row, every other slot 0
    from queuetheory.distributions import HyperExponential

    law = HyperExponential([0.7, 0.3], [3.0, 0.3])
    points, weights = np.zeros((2, 4)), np.zeros((2, 4))
    points[0], weights[0] = np.polynomial.legendre.leggauss(4)
    points[1, :2], weights[1, :2] = np.polynomial.legendre.leggauss(2)
    levels = np.array([0.0, 1e-9, 0.05, 0.5, 0.9, 0.99, 1 - 1e-12, 1.0])
    table = quadrature._quantile_table(law, levels, points[np.arange(7) % 2], posinf=1e300)
    lo, hi, rule = [], [], []
    for a, b, on_levels, k in pieces:
        if on_levels:
            a, b = levels[k % 7], levels[k % 7 + 1]
        lo.append(min(a, b))
        hi.append(max(a, b))
        rule.append(k % 7 % 2 if on_levels else k % 2)
    lo, hi, rule = np.array(lo), np.array(hi), np.array(rule)
    got = quadrature._quantiles_on_pieces(law, lo, hi, levels, table, (points, weights), rule,
                                          min_width=min_width, posinf=1e300)
    piece = np.searchsorted(levels, lo)
    tabled = (piece < 7) & (levels[np.minimum(piece, 7)] == lo) & (
        levels[np.minimum(piece + 1, 7)] == hi)
    u = 0.5 * (lo + hi)[:, None] + 0.5 * (hi - lo)[:, None] * points[rule]
    direct = np.nan_to_num(law._ppf_all(np.clip(u, 0.0, 1.0)), posinf=1e300)
    weighed = (weights[rule] > 0) & ((hi - lo) > min_width)[:, None] & ~tabled[:, None]
    np.testing.assert_array_equal(got[weighed], direct[weighed])
    np.testing.assert_array_equal(got[tabled], table[piece[tabled]])
    assert np.all(got[~weighed & ~tabled[:, None]] == 0)
