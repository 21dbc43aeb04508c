"""One query for atoms (``Distribution.atoms``): a discrete law of any class takes the exact
discrete branches everywhere, so it gives the numbers of the equivalent ``qt.Discrete``."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from conftest import reference_script
from scipy import stats

import queuetheory as qt
from queuetheory import mg1


def _pair():
    """The same law twice: a discrete scipy law and the Discrete it equals (1, 2, 3 w.p. 1/3)."""
    return qt.from_scipy(stats.randint(1, 4)), qt.Discrete([1, 2, 3], [1 / 3, 1 / 3, 1 / 3])


def test_atoms_of_every_kind_of_discrete_law():
    scipy_law, discrete = _pair()
    for law in (scipy_law, discrete, discrete.scaled(2.0).scaled(0.5),
                qt.Mixture([qt.Deterministic(1.0), qt.Discrete([2, 3], [0.5, 0.5])],
                           [1 / 3, 2 / 3])):
        values, probs = law.atoms
        np.testing.assert_allclose(values, [1, 2, 3], rtol=1e-15)
        np.testing.assert_allclose(probs, [1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    assert qt.Exponential(1.0).atoms is None
    assert qt.Mixture([qt.Exponential(1.0), qt.Deterministic(1.0)], [0.5, 0.5]).atoms is None


@pytest.mark.parametrize("policy", [qt.RIQ(3), qt.RedundancyD(2), qt.MDS(3, 1),
                                    qt.Replication(2, 2)], ids=["riq", "redundancy", "mds",
                                                                "replication"])
def test_discrete_scipy_slowdown_is_analysed_like_discrete(policy):
    scipy_law, discrete = _pair()
    X = qt.Exponential(2.0)
    a = qt.analyze(qt.System(policy, qt.SX(X, scipy_law), arrival_rate=0.3))
    b = qt.analyze(qt.System(policy, qt.SX(X, discrete), arrival_rate=0.3))
    assert a.mean == pytest.approx(b.mean, rel=1e-12)
    assert a.busy_fraction == pytest.approx(b.busy_fraction, rel=1e-12)


def test_transform_of_a_mixed_law_sums_its_atoms_and_integrates_between_them():
    # the fastest of two runtimes 0.5 Deterministic(1) + 0.5 Exponential(1) (RIQ's first
    # service) has an atom at 1 and a density elsewhere. Its transform used to be integrated
    # across the jump of the quantile function (errors 5e-10 to 7e-8, at every s); now the atom
    # is summed and each continuous piece integrated on its own. Reference, closed form of
    # 1 - s int_0^inf exp(-s x) (0.5 [x < 1] + 0.5 exp(-x))^2 dx at 30 digits:
    #   e = mpmath.exp; I = (0.25 * (1 - e(-s)) / s + 0.5 * (1 - e(-(s + 1))) / (s + 1)
    #       + 0.25 * (1 - e(-(s + 2))) / (s + 2) + 0.25 * e(-(s + 2)) / (s + 2)); 1 - s * I
    law = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5]).minimum(2)
    values, probs = law._point_masses()
    assert values.tolist() == [1.0]
    assert probs[0] == pytest.approx((0.5 + 0.5 * np.exp(-1)) ** 2 - (0.5 * np.exp(-1)) ** 2,
                                     rel=1e-15)   # P(min > 1-)^2 - P(min > 1)^2
    s = np.array([0.3, 1 + 5j, 3 + 300j, 13 + 8000j])
    expected = np.array([0.81865722025294932, 0.1113721413535875 - 0.0078216371658855672j,
                         -0.00045790418215023803 + 0.018265656057612248j,
                         2.9100141280244755e-7 - 0.00012597831642287486j])
    np.testing.assert_allclose(law.lst(s), expected, rtol=0, atol=1e-15)
    # scaled (time unit) and as a component of a mixture: the same atoms, moved and weighted
    assert law.scaled(1e-6)._point_masses()[0].tolist() == [1e-6]
    mixed = qt.Mixture([law, qt.Deterministic(1.0), qt.Uniform(0.5, 2.0)], [0.5, 0.25, 0.25])
    values, probs = mixed._point_masses()
    mass = (0.5 + 0.5 * np.exp(-1)) ** 2 - (0.5 * np.exp(-1)) ** 2
    assert values.tolist() == [1.0] and probs[0] == pytest.approx(0.5 * mass + 0.25, rel=1e-15)
    np.testing.assert_allclose(
        mixed.lst(s), 0.5 * expected + 0.25 * np.exp(-s)
        + 0.25 * (np.exp(-0.5 * s) - np.exp(-2.0 * s)) / (1.5 * s), rtol=0, atol=1e-15)


def test_random_sx_slowdown_with_an_atom_and_a_density_against_pollaczek_khinchine():
    # S = 0.7 Deterministic(1) + 0.3 Exponential(0.5), X hyperexponential: the transform of
    # X S integrated across the jump of S's quantile function was off 1e-8 and moved the p99
    # by 6.3e-8 relative, 160 times its stated error. Reference: mpmath (40 digits, Talbot)
    # inversion of Pollaczek-Khinchine with B~(s) = 0.7 sum p mu / (mu + s)
    # + 0.3 sum p (mu nu / s) exp(mu nu / s) E1(mu nu / s), nu = 0.5, lam = 0.3:
    #   mp.findroot(lambda t: sf(t) - mp.mpf('0.01'), 48.479391) -> 48.479391021524397227
    S = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.7, 0.3])
    X = qt.HyperExponential([0.9, 0.1], [2.0, 0.25])
    p = qt.analyze(qt.System(qt.Random(), qt.SX(X, S), arrival_rate=0.3))
    value, error = p.response_time.ppf(0.99, full_output=True)
    true = 48.479391021524397227
    assert abs(value - true) <= error and error < 1e-6 * true


def test_a_tail_piece_beyond_an_atom_keeps_its_relative_accuracy():
    # the fastest of two 0.5 Deterministic(v) + 0.5 Exponential(1): the continuous piece above
    # the atom has mass P(min > v) = (0.5 exp(-v))^2 = 2.19e-27 at v = 30; from levels near 1
    # its length was off 1e-3 relative (a review's measurement); from differences of sf it is
    # exact to rounding. Atoms beyond _PIECES_MAX: one piece, as for unknown atoms
    from queuetheory.distributions import _PIECES_MAX

    for v in (20.0, 30.0):
        law = qt.Mixture([qt.Deterministic(v), qt.Exponential(1.0)], [0.5, 0.5]).minimum(2)
        length = law._continuous_pieces[4][-1]
        assert length == pytest.approx(0.25 * np.exp(-2 * v), rel=1e-14)
    n = _PIECES_MAX + 1
    many = qt.Mixture([qt.Discrete(np.linspace(0.1, 10, n), np.full(n, 1 / n)),
                       qt.Exponential(1.0)], [0.5, 0.5]).minimum(2)
    assert many._point_masses()[0].size == n and many._continuous_pieces is None


@pytest.mark.parametrize("level, true", [
    (0.99, 5.01892011420),
    pytest.param(0.95, 3.08664115314, marks=pytest.mark.slow),   # 20-80 s: kinks nearby
])
def test_riq_runtime_with_an_atom_and_a_density_against_an_mpmath_inversion(level, true):
    # RIQ(2), IR 0.5 Deterministic(1) + 0.5 Exponential(1), lam = 0.5. The known part (the
    # fastest of the idle replicas) has an atom and a density: its density was taken as 0, so
    # the quantile search's slope was short and Newton converged linearly (p95: 82 s). The
    # reference shares only the model with the library: b from b (1 - lam b E[B]) =
    # (1 - b) lam d E[B_e](b) by mp.findroot, the transforms in closed form (the fastest of two:
    # 1 - s int exp(-s x) P(R > x)^2 dx), the queueing part inverted by mp.invertlaplace
    # (de Hoog) at 60 and 90 digits, which agree to 4e-12; the root by mp.findroot:
    #   p99 5.0189201142029891 / 5.0189201141986334, p95 3.0866411531393470 / 3.086641153135072
    R = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5])
    p = qt.analyze(qt.System(qt.RIQ(2), qt.IR(R), arrival_rate=0.5))
    value, error = p.response_time.ppf(level, full_output=True)
    assert abs(value - true) <= error + 1e-11 and error < 1e-6 * true


def test_a_level_inside_the_jump_of_a_mixed_runtime_is_its_atom_exactly():
    # Random (M/G/1), R = 0.5 Deterministic(1) + 0.5 Exponential(1), lam = 0.3: T = R at an
    # empty queue (probability 1 - rho = 0.7), so P(T < 1) <= 0.7 * 0.5 (1 - e^-1) + 0.3 =
    # 0.521 and P(T <= 1) >= 0.7 (0.5 + 0.5 (1 - e^-1)) = 0.571: the 0.55-quantile is 1
    # exactly. The atoms of a law with a density were not checked (1.0 with an estimated error
    # of 1e-4 after a bisection onto the jump); now the jump is found before any search
    R = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5])
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=0.3)).response_time
    value, error = T.ppf(0.55, full_output=True)
    assert value == 1.0 and error == 0.0
    assert 0.7 * 0.5 * (1 - np.exp(-1)) < float(T.cdf(np.nextafter(1.0, 0.0))) < 0.521


def test_a_searched_level_below_a_jump_is_not_carried_over_the_exact_atom():
    # Random, R on {1, 2, 3} w.p. 0.2, 0.5, 0.3, lam = 0.25: P(T < 2) = 0.095 e^0.25 (the
    # only way below 2: R = 1 at an empty queue or within 1 of it), so every level from just
    # above it to P(T <= 2) has the quantile 2 exactly. Asked together, the one level found by
    # the search (2.0000182, error 2.1e-4) was carried up over the exact answers, stated 0
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Discrete([1, 2, 3], [0.2, 0.5, 0.3])),
                             arrival_rate=0.25)).response_time
    below = 0.095 * np.exp(0.25)
    value, error = T.ppf(below + np.array([1e-5, 1e-4, 1e-3, 1e-2, 0.05]), full_output=True)
    assert np.all(np.abs(value - 2.0) <= error)
    assert np.all(value[1:] == 2.0)


def test_the_top_of_the_jump_at_the_lower_bound_is_exact():
    # M/D/1 at load lam (one server, Random): T = 1 + W and P(W <= x) = (1 - lam) e^{lam x} on
    # [0, 1) (Erlang's formula), so P(T <= 1) = 1 - lam and the (1 - lam)-quantile is 1: the
    # median at load 0.5 said 1.0 with an estimated error of 2.3e-4 (and cdf(1) read the
    # inversion's error at the jump, 3e-6 for the runtime {1, 3} below). Levels just above the
    # top, 1 + log(q / (1 - lam)) / lam (mpmath, 50 digits, lam the float 0.3):
    #   0.7 + 1e-7: 1.0000004761904419125, 0.7 + 1e-3: 1.0047585066372844608
    for lam in (0.5, 0.3, 0.1):
        T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), arrival_rate=lam,
                                 servers=1)).response_time
        assert T.cdf(1.0) == 1 - lam
        assert T.ppf(1 - lam, full_output=True) == (1.0, 0.0)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), arrival_rate=0.3,
                             servers=1)).response_time
    values, errors = T.ppf([0.7 + 1e-7, 0.7 + 1e-3], full_output=True)
    assert np.all(np.abs(values - [1.0000004761904419125, 1.0047585066372844608]) <= errors)
    # a runtime on {1, 3}: P(T <= 1) = (1 - rho) 0.6 = 0.384 (rho = 0.2 * 1.8)
    R = qt.IR(qt.Discrete([1.0, 3.0], [0.6, 0.4]))
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=0.2, servers=1)).response_time
    assert T.cdf(1.0) == pytest.approx(0.384, abs=1e-15)
    assert T.ppf(float(T.cdf(1.0)), full_output=True) == (1.0, 0.0)


@pytest.mark.parametrize("remove", [True, False])
def test_the_top_of_a_batch_jump_on_the_grid(remove):
    # MDS(4, 0) with Deterministic(1) at lam = 0.3: four M/D/1 queues, P(C <= 1 + x) =
    # ((1 - lam) e^{lam x})^4 on [0, 1) (Erlang's formula), so the quantile is 1 up to the
    # level (1 - lam)^4 = 0.24010000000000001523 (lam the float 0.3) and 1 + log(q / (1 -
    # lam)^4) / (4 lam) above it: 1.0000000034707760327 at 0.2401 + 1e-9 (mpmath, 50
    # digits). The grid's root search returned the far end of the cell (1.0833 +- 0.0833) at
    # the top, and a level 2.4e-13 above it snapped onto the jump (1.0, 4e-15 stated, 8.4e-13
    # off)
    p = qt.analyze(qt.System(qt.MDS(4, 0, remove=remove), qt.IR(qt.Deterministic(1.0)), 0.3))
    top = 0.7 ** 4   # 0.24009999999999995, below the top
    levels = [np.nextafter(top, 0.0), top, np.nextafter(top, 1.0), 0.2401]
    values, errors = p.response_time.ppf(levels, full_output=True)
    assert np.all(values == 1.0) and np.all(errors <= 3e-14)
    levels = [0.2401 + 1e-9, 0.2401 * (1 + 1e-12)]
    exact = [1.0000000034707760327, 1 + np.log1p(1e-12) / 1.2]   # the latter to 1e-16
    values, errors = p.response_time.ppf(levels, full_output=True)
    assert np.all(values > 1.0)
    assert np.all(np.abs(values - exact) <= errors) and np.all(errors <= 1e-8)


def test_a_level_just_above_an_inner_jump_states_its_distance():
    # Random, R on {1, 2} w.p. 1/2 each, lam = 0.25 (rho = 0.375): the CDF jumps at 2 to
    # 0.3125 (e^0.25 + 1) = 0.71375794271491921377; just above it P(T <= 2 + d) = 0.3125
    # (e^(0.25 (1 + d)) - 0.125 d e^(0.25 d)) + 0.3125 e^(0.25 d) (Erlang's method of steps:
    # F_W(x) = (1 - rho) e^(lam x) on [0, 1), (1 - rho) (e^(lam x) - lam (x - 1) e^(lam (x - 1))
    # / 2) on [1, 2)). A level 1e-7 above the top, 0.7137580427149192, has the quantile
    # 2.000000717478520612198838 (mpmath findroot, 40 digits); the search snapped it onto the
    # atom with its final bracket stated (1.9e-10), where the CDF's own error at the jump
    # (8.4e-6) allows 7e-5
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Discrete([1, 2], [0.5, 0.5])),
                             arrival_rate=0.25, servers=1)).response_time
    value, error = T.ppf(0.7137580427149192, full_output=True)
    assert abs(value - 2.000000717478520612198838) <= error <= 1e-4


# M/G/1 response times with runtimes on an integer lattice: P(T <= t) and quantiles by the
# method of steps in exact arithmetic, ``python scripts/random_atoms_references.py`` (40 and 60
# digits agree to 1e-25 or better): just after each atom, where the CDF jumps, and each sum of
# two atoms, where the density jumps. The inversion of the queued part as it was left errors of
# 6e-6 to 1.6e-5 in the CDF and 8e-6 to 1.8e-5 relative in these quantiles (stated up to 2.2e-4)
RANDOM_ATOMS = {
    "{2, 3, 5}": (([2.0, 3.0, 5.0], [0.25, 0.5, 0.25], 0.125),
                  {3.000001: "0.46507678163670111071", 3.3: "0.48284823390339429684",
                   4.001: "0.52706220978064634105", 5.000001: "0.74035159856007435535",
                   7.001: "0.86858711459058943531", 10.001: "0.96320097149584155312"},
                  {0.465076724502107: "3.0000000172014626666",
                   0.465077723502107: "3.0000172014443960059",
                   0.7403515308271217: "5.0000000145490629533",
                   0.7413515298271217: "5.0145404239792603562"}),
    "{1, 10}": (([1.0, 10.0], [63 / 64, 1 / 64], 0.5),
                {2.000001: "0.69736576586373529848", 10.000001: "0.9485339947476381116",
                 11.001: "0.96740046457635628164", 20.001: "0.99732125648920945321"},
                {0.4229736338125: "1.0000000047284272516",
                 0.4239736328125: "1.0047228464169150385",
                 0.9485339780008862: "10.000000056348341873",
                 0.9485349770008863: "10.000056348173407507"}),
    "M/D/1 at 7/8": (([1.0], [1.0], 0.875),
                     {1.000001: "0.12500010937504784258", 2.000001: "0.29985956474789162517",
                      2.001: "0.30001243280957632249"},
                     {0.125000001: "1.0000000091428571015", 0.125001: "1.0000091428205716328",
                      0.126: "1.0091064795990592921"}),
}


def test_random_with_atoms_off_a_lattice_near_its_jumps_and_kinks():
    # R on {1, sqrt(2)} w.p. 1/2 each at rate 0.4: the method of steps on the pieces between
    # the sums of the atoms (``response_off_lattice`` in scripts/random_atoms_references.py, 30
    # and 45 digits agree to 1e-30); near each atom and each sum of two or three
    cdfs = {1.000001: 0.25857874719416865491, 1.414214562373095: 0.56375384523568938737,
            2.000001: 0.71260852340070485791, 2.414214562373095: 0.81574021234484999142,
            2.82842812474619: 0.88233762399417189505, 3.0001: 0.89985544242086138468,
            3.414213: 0.93433983361115744004, 4.242641: 0.97251009799206694783}
    R = qt.IR(qt.Discrete([1.0, 2 ** 0.5], [0.5, 0.5]))
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=0.4, servers=1)).response_time
    _within_estimates(T, cdfs)


@pytest.mark.parametrize("name", list(RANDOM_ATOMS))
def test_random_with_atoms_near_its_jumps_and_kinks(name):
    (values, probs, lam), cdfs, quantiles = RANDOM_ATOMS[name]
    R = qt.IR(qt.Discrete(values, probs))
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=lam, servers=1)).response_time
    _within_estimates(T, {x: float(v) for x, v in cdfs.items()},
                      {q: float(v) for q, v in quantiles.items()})


def _within_estimates(T, cdfs: dict, quantiles: dict | None = None):
    """The CDF and quantiles against references, each within its estimate, the estimates at
    most 5e-8 (absolute for the CDF, relative for quantiles)."""
    got, errors = T.cdf(list(cdfs), full_output=True)
    assert np.all(np.abs(got - list(cdfs.values())) <= errors)
    assert np.all(errors <= 5e-8)
    if not quantiles:
        return
    got, errors = T.ppf(list(quantiles), full_output=True)
    want = np.array(list(quantiles.values()))
    assert np.all(np.abs(got - want) <= errors)
    assert np.all(errors <= 5e-8 * want)


# RIQ with runtimes on an integer lattice: the queued part E + W + B by the method of steps and
# mpmath's quadrature, given the efs parameters queuetheory derives from RIQ's fixed point,
# ``python scripts/riq_atoms_references.py`` (30 and 45 digits agree to 1e-30). As it was left,
# the inversion erred by 1e-5 (CDF) and 9e-6 (quantiles, relative) here
RIQ_ATOMS = {
    "RIQ(2), {1, 2}": ((2, [1.0, 2.0], [0.5, 0.5], 0.375),
                       {1.000001: 0.34600846107830663734, 2.000001: 0.71849926374572755891,
                        3.000001: 0.87845423235191538384, 4.001: 0.95771808203124868602},
                       {0.3460084724963891: 1.0000011288985527192,
                        0.7184992162709192: 2.0000006780869856856,
                        0.7194991162709192: 2.0067769921363253023}),
    "RIQ(3), Det(1)": ((3, [1.0], [1.0], 0.75),
                       {1.001: 0.45061347730829851853, 2.000001: 0.80521878663721720408,
                        2.001: 0.80539717949359220879},
                       {0.4503404694430629: 1.0000003662478113133,
                        0.4513403694430629: 1.0036591073057460695}),
}


@pytest.mark.parametrize("name", list(RIQ_ATOMS))
def test_riq_with_atoms_near_its_jumps_and_kinks(name):
    (d, values, probs, lam), cdfs, quantiles = RIQ_ATOMS[name]
    T = qt.analyze(qt.System(qt.RIQ(d), qt.IR(qt.Discrete(values, probs)), lam)).response_time
    _within_estimates(T, cdfs, quantiles)


def test_kinks_transform_factorises_over_the_atoms():
    # the jumps at b_j and b_j + e_i have the transform scale sum_j p_j e^{-s b_j} (1 - sum_i
    # q_i e^{-s e_i}) less the jump at the offset: the same as the sum over the (merged) pairs,
    # here 16 atoms off any lattice (85 kinks: 15 atoms beyond the smallest and 80 sums, of
    # which 10 pairs coincide, b_j + e_i = b_i + e_j; one exponential per atom, not per pair)
    values = 1.0 + np.sqrt(np.arange(2, 18)) / 3
    busy = mg1._efs_busy_transform(0.2, qt.Discrete(values[:5], [0.2] * 5),
                                   qt.Discrete(values, [1 / 16] * 16))
    kinks = busy.kinks(offset=values[0])
    assert kinks.times.size == 85 and np.all(kinks.times > 0)
    s = np.array([0.3 + 2j, 5 + 40j, 0.01 + 0.1j, 700 + 0j])
    direct = qt.transforms.Kinks(kinks.times, kinks.jumps)(s)
    assert np.max(np.abs(kinks(s) - direct)) <= 4 * np.finfo(float).eps * np.abs(kinks.jumps).sum()


def test_random_with_an_atom_and_a_density_at_its_kinks():
    # R = 0.5 Det(1) + 0.5 Exp(1) at rate 0.4 (one server): P(T <= t) by the method of steps on
    # the level-crossing ODE, exact Taylor series per unit piece, 40 and 60 digits agreeing to
    # 1e-41 (``python scripts/mixed_atom_references.py``). The density jumps at the atom 1 and
    # at 2 (= 1 + 1): taken out, the CDF there is 1e-11 off; it was 4.6e-6 (stated 1.3e-5)
    cdfs = {1.000001: 0.53314447255778095165, 1.001: 0.53344941314483909985,
            1.999: 0.78633648323449873621, 2.000001: 0.78655156427529843343,
            2.5: 0.85219168450185294316, 3.001: 0.89782558560476408354}
    R = qt.IR(qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5]))
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=0.4, servers=1)).response_time
    _within_estimates(T, cdfs)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["off a lattice", "atom and density"])
def test_error_estimates_cover_the_true_error_on_a_dense_scan(case, mp30):
    # the error estimates with the density's jumps taken out are partly heuristic (the changes
    # between Euler sums, five times): 400 times on each law against the method of steps
    if case == "off a lattice":
        script = reference_script("random_atoms_references")
        atoms, probs, lam, horizon = script.OFF_LATTICE
        cdf = script.response_off_lattice(atoms, probs, lam, horizon)
        R = qt.IR(qt.Discrete(list(atoms), list(probs)))
        times = np.linspace(1.0005, horizon - 0.1, 400)
    else:
        lam = 0.4
        cdf = reference_script("mixed_atom_references").response(mpmath.mpf(lam))
        R = qt.IR(qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5]))
        times = np.linspace(0.01, 5.9, 400)
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=lam, servers=1)).response_time
    got, errors = T.cdf(times, full_output=True)
    want = np.array([float(cdf(mpmath.mpf(t))) for t in times])
    assert np.all(np.abs(got - want) <= errors)
    assert np.all(errors <= 5e-8)


@pytest.mark.parametrize("system", [
    qt.System(qt.Random(), qt.IR(qt.Discrete([2, 3, 5], [1 / 3, 1 / 3, 1 / 3])), 0.05),
    qt.System(qt.RIQ(2), qt.IR(qt.Deterministic(1.0)), 0.3),
    qt.System(qt.RIQ(2), qt.SX(qt.Deterministic(0.5), qt.Discrete([1, 3], [0.7, 0.3])), 0.3),
    qt.System(qt.MDS(4, 2, remove=False), qt.IR(qt.Deterministic(1.0)), 0.3),
    qt.System(qt.MDS(4, 2), qt.IR(qt.Deterministic(1.0)), 0.3),
    qt.System(qt.RedundancyD(2), qt.IR(qt.Deterministic(1.0)), 0.3),
    qt.System(qt.Random(), qt.IR(qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)],
                                            [0.5, 0.5])), 0.3),
], ids=["random-235", "riq-det", "riq-sx-atoms", "mds", "mds-removal", "redundancy", "mixed"])
def test_a_response_time_with_atoms_has_no_density(system):
    # each response time has an atom at the smallest runtime (a job that finds its servers
    # idle); the central difference across it read 69444 at 2.000001 for {2, 3, 5}, where the
    # continuous part's density is about 0.02
    T = qt.analyze(system).response_time
    with pytest.raises(ValueError, match="has atoms"):
        T.pdf(1.5)


def test_response_density_is_the_inversions_own():
    # M/H2/1 (Random, IR HyperExponential([0.9, 0.1], [2, 0.25]), arrival rate 0.5): the
    # sojourn density by partial fractions at 40 digits (scripts/mh2_density_reference.py);
    # the difference quotient of the inverted CDF was 2.6e-9 relative off at t = 2
    R = qt.HyperExponential([0.9, 0.1], [2.0, 0.25])
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=0.5)).response_time
    t = np.array([0.01, 0.5, 2.0, 10.0, 40.0])
    true = np.array([1.0340057561094610586, 0.51073842786224477579, 0.090291598077099552736,
                     0.01094990641129711826, 0.000044480332351308473009])
    np.testing.assert_allclose(T.pdf(t), true, rtol=1e-11, atol=1e-13)
    # S&X with a continuous X and a discrete S has no atoms, and a density
    sx = qt.SX(qt.Exponential(2.0), qt.Discrete([1, 3], [0.7, 0.3]))
    assert qt.analyze(qt.System(qt.RIQ(2), sx, arrival_rate=0.3)).response_time.pdf(1.0) > 0


def test_a_far_tail_quantile_is_not_stopped_where_the_density_is_tiny():
    # M/G/1, runtime 0.5 Det(1) + 0.5 Exp(1), load 0.95: the search stopped at 612 (where
    # P(T > t) is 5e-12) with 12547 stated, its step "within the noise" of a tiny density.
    # The truth from the Cramer-Lundberg pole term at 40 digits, independent of the inversion
    # (scripts/far_tail_references.py; de Hoog's method at precision=20 agrees to 15 digits)
    R = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5])
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=0.95)).response_time
    value, error = T.ppf(1 - 1e-9, full_output=True)
    assert abs(value - 311.759633137145) <= error < 10.0


def test_random_with_twenty_atoms():
    # runtimes on 1..20 (beyond the 16 atoms whose jumps were once taken out: the CDF was
    # 7.5e-7 off, the estimate 3.6 times that): the method of steps, exact polynomials,
    # scripts/many_atoms_references.py
    probs = [n / 512 for n in (42, 20, 51, 7, 10, 13, 47, 8, 28, 5, 12, 56, 54, 9, 31, 12, 55, 8,
                               16, 28)]
    R = qt.Discrete(list(range(1, 21)), probs)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=49 / 1024)).response_time
    t = np.array([1.0 + 1e-6, 2.0 + 1e-4, 3.5, 7.0 + 1e-6, 12.0 + 1e-3, 21.0 + 1e-6, 25.5,
                  33.0 + 1e-4])
    true = np.array([0.041260020919096717771, 0.062930288913996831782, 0.11858770575834815053,
                     0.21479199285327983614, 0.37075611898162151057, 0.73323582078045466311,
                     0.81097709113540968549, 0.9024822378709881673])
    value, error = T.cdf(t, full_output=True)
    assert np.all(np.abs(value - true) <= error) and error.max() < 1e-8


def test_kinks_measure_factorises_over_the_atoms():
    # the CDF and density of the measure taken out, sum_k J_k C(u - kappa_k) and sum_k J_k
    # c(u - kappa_k), without listing the pairs (running sums over the e_i) equal the direct
    # sums over every (merged) jump, here 30 atoms off any lattice (900 pairs)
    rng = np.random.default_rng(5)
    b = np.sort(rng.uniform(1.0, 3.0, 30))
    e = np.sort(rng.uniform(0.5, 2.0, 12))
    kinks = mg1._AtomKinks((b - b[0], rng.dirichlet(np.ones(30))),
                           (e, rng.dirichlet(np.ones(12))), 0.37)
    u, a = np.array([1e-3, 0.4, 1.7, 2.0000001, 3.3, 9.0, 40.0]), 0.6
    times, jumps = kinks.times, kinks.jumps
    assert times.size > 300 and kinks.size >= times.size
    x = np.maximum(u[:, None] - times, 0.0)
    cdf = (np.exp(-a * x) - np.exp(-2 * a * x)) @ jumps / a
    pdf = np.where(u[:, None] > times, 2 * np.exp(-2 * a * x) - np.exp(-a * x), 0.0) @ jumps
    for parts in (kinks.parts(u, a), qt.transforms.Kinks(times, jumps).parts(u, a)):
        np.testing.assert_allclose(parts[0], cdf, rtol=0, atol=1e-14)
        np.testing.assert_allclose(parts[1], pdf, rtol=0, atol=1e-14)
    assert kinks.total >= np.abs(jumps).sum() * (1 - 1e-15)


@pytest.mark.parametrize("atoms, probs, lam, true", [
    ([0, 1], [0.5, 0.5], 0.75, [0.34971008028524392453, 0.43794987762249162724,
                                0.8547239795671391827, 0.97389405150616462048,
                                0.99995628789931986221]),
    ([0, 1, 2], [0.25, 0.25, 0.5], 0.5, [0.10491302408557317736, 0.13138496328674748817,
                                         0.27055270460554387251, 0.57827058866011850083,
                                         0.92633383534309302919]),
])
def test_random_with_an_atom_at_zero(atoms, probs, lam, true):
    # jobs of size 0: the pair of jumps b_j + e_i at 0 is no kink (the jump at the origin
    # stays in), and counting it had left the CDF up to 4% off with 3e-11 stated; the method
    # of steps with the zero-size jobs thinned out, scripts/zero_atom_references.py
    R = qt.Discrete(atoms, probs)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=lam)).response_time
    value, error = T.cdf(np.array([0.3, 0.9, 1.5, 2.5, 6.2]), full_output=True)
    assert np.all(np.abs(value - np.array(true)) <= error) and error.max() < 1e-9


def test_kinks_survive_copies_and_pickles():
    # the running sums were remembered by the id of an array: a copy or an unpickled law could
    # find another array's sums at a reused address (CDF 0.3724 for 0.3708, or IndexError)
    import copy
    import pickle

    probs = [n / 512 for n in (42, 20, 51, 7, 10, 13, 47, 8, 28, 5, 12, 56, 54, 9, 31, 12, 55, 8,
                               16, 28)]
    R = qt.Discrete(list(range(1, 21)), probs)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(R), arrival_rate=49 / 1024)).response_time
    first = T.cdf(12.001)
    for _ in range(30):
        T = pickle.loads(pickle.dumps(copy.deepcopy(T)))
        assert T.cdf(12.001) == first
    assert len(T._rest_kinks.__dict__.get("_running", {})) <= 4


def test_response_density_at_its_edges():
    # M/M/1 at 0.5: density 0.5 exp(-t / 2); far in the tail, below the inversion's error, it
    # is 0 as the tail is (it read 1.8e-15 at t = 200, where it is 1.9e-44)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), 0.5)).response_time
    t = np.array([1.0, 30.0])
    np.testing.assert_allclose(T.pdf(t), 0.5 * np.exp(-t / 2), rtol=1e-7, atol=0)
    t = np.array([60.0, 200.0])               # P(T > 60) = 9.4e-14: within the error of sf
    np.testing.assert_allclose(T.pdf(t), 0.5 * np.exp(-t / 2), rtol=0, atol=1e-13)
    # below the smallest runtime the density is 0 (a difference across it read 0.25)
    U = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Uniform(0.5, 1.5)), 0.5)).response_time
    assert U.pdf(0.5 - 1e-9) == 0.0 and U.pdf(0.4) == 0.0
    # X on {0, 1} times a continuous slowdown: an atom at 0 (no density), though the product
    # law has no other atom
    runtime = qt.SX(qt.Discrete([0.0, 1.0], [0.5, 0.5]), qt.Uniform(1.0, 2.0))
    with pytest.raises(ValueError, match="has atoms"):
        qt.analyze(qt.System(qt.Random(), runtime, 0.5)).response_time.pdf(1.0)




@pytest.mark.parametrize("name", list(RANDOM_ATOMS))
def test_random_on_a_lattice_high_precision_against_the_method_of_steps(name, mp30):
    # the high-precision path sums the wait's exact CDF on the lattice (Takacs-Benes,
    # mg1._LatticeSojourn): the 20-digit references of RANDOM_ATOMS (method of steps, exact
    # arithmetic) to their last digit, at the jumps and kinks where de Hoog's method had not
    # converged by working precision 150
    (values, probs, lam), cdfs, quantiles = RANDOM_ATOMS[name]
    R = qt.IR(qt.Discrete(values, probs))
    T = qt.analyze(qt.System(qt.Random(), R, arrival_rate=lam, servers=1)).response_time
    for x, want in cdfs.items():
        assert abs(T.cdf(x, precision=25) - mpmath.mpf(want)) <= 1e-19
    for q, want in quantiles.items():
        assert abs(T.ppf(q, precision=25) - mpmath.mpf(want)) <= 1e-19 * mpmath.mpf(want)


def _erlang_md1_cdf(t, lam):
    """P(T <= t) of the M/D/1 sojourn (D = 1) by Erlang's formula, P(W <= y) = (1 - rho)
    sum_{k <= y} (lam (k - y))^k / k! exp(-lam (k - y)), with 40 digits beyond the
    cancellation (the terms reach about exp(2 lam y): 25 digits at y = 30, lam = 0.9)."""
    with mpmath.workdps(40 + int(2 * lam * float(t) / 2.3)):
        lam, y = mpmath.mpf(lam), mpmath.mpf(t) - 1
        if y < 0:
            return mpmath.mpf(0)
        total = mpmath.fsum((lam * (k - y)) ** k / mpmath.factorial(k) * mpmath.exp(-lam * (k - y))
                            for k in range(int(mpmath.floor(y)) + 1))
        return (1 - lam) * total


@pytest.mark.parametrize("q", [0.3, 0.7, 0.99, 1 - 1e-9])
def test_md1_high_precision_quantiles_against_erlangs_formula(q, mp30):
    # M/D/1 at load 0.9: precision=20 was refused at level 0.7 ("did not converge up to working
    # precision 150"), and the p99 took 21 s; each quantile now solves Erlang's CDF to 20 digits
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), arrival_rate=0.9,
                             servers=1)).response_time
    value = T.ppf(q, precision=20)
    with mpmath.workdps(60):
        level = mpmath.mpf(q)
        below = _erlang_md1_cdf(value * (1 - mpmath.mpf(10) ** -19), 0.9)
        above = _erlang_md1_cdf(value * (1 + mpmath.mpf(10) ** -19), 0.9)
        assert below < level <= above
    fast, error = T.ppf(q, full_output=True)
    assert abs(fast - value) <= error


@pytest.mark.parametrize("gap", [0.0, 1e-16, 1e-15, 1e-13, 1e-12])
def test_md1_high_precision_quantile_just_above_the_jump(gap, mp30):
    # a level just above P(T <= 1) = 1 - rho: the quantile is 1 + log(q / (1 - rho)) / lam
    # (P(T <= 1 + e) = (1 - rho) exp(lam e) for e < 1); the fast root sits on the atom at 1,
    # and the high-precision path had returned it (1.0 at level 0.1 + 1e-15, where the
    # quantile is 1 + 1.1e-14)
    T = qt.analyze(qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), arrival_rate=0.9,
                             servers=1)).response_time
    q = 0.1 + gap
    with mpmath.workdps(40):
        free = 1 - mpmath.mpf(0.9)
        want = 1 + mpmath.log(mpmath.mpf(q) / free) / mpmath.mpf(0.9)
        assert abs(T.ppf(q, precision=30) - want) <= mpmath.mpf(10) ** -29
        # the fast root on the atom states a finite error (it was inf: the density at the
        # atom is 0 from the left), and a true one
        value, error = T.ppf(q, full_output=True)
        assert abs(value - want) <= error <= 1e-8
    assert T.ppf(0.1 - 1e-15, precision=30) == 1


def test_sx_mixture_job_size_quantile_inside_the_jump_is_the_atom():
    # X = 0.8 Det(1) + 0.2 Exp(0.5), S in {1, 2}: the response time has an atom at 1 of mass
    # (1 - rho) 0.8 * 0.5 = 0.04, between P(T < 1) = 0.0079721 and P(T <= 1) = 0.0480608 (a
    # Volterra solution of the Takacs equation, found by a review). The product law did not
    # list its atoms, so the quantile came back just below the jump (0.999999999909 at level
    # 0.01, cdf(ppf(q)) = 0.00806 < q)
    X = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.8, 0.2])
    T = qt.analyze(qt.System(qt.Random(), qt.SX(X, qt.Discrete([1, 2], [0.5, 0.5])),
                             arrival_rate=0.5)).response_time
    # the jump's ends against the Volterra solution (printed to 7 digits: 5e-8)
    assert abs(T.cdf(0.99) - 0.0079721) <= 1e-7 and abs(T.cdf(1.0) - 0.0480608) <= 1e-7
    for q in (0.009, 0.01, 0.03, 0.047):
        value, error = T.ppf(q, full_output=True)
        assert value == 1.0 and error == 0.0 and T.cdf(value) >= q
    product = qt.SX(X, qt.Discrete([1, 2], [0.5, 0.5])).replica()
    values, probs = product._point_masses()
    assert values.tolist() == [1.0, 2.0] and np.allclose(probs, [0.4, 0.4], rtol=0, atol=1e-16)
