"""The stability decision at load 1 is the same on every machine and in every summation order.

A load is computed from floating inputs with a few roundings; ``queuetheory._checks.stable_load``
takes loads within ``LOAD_TOLERANCE`` (2**-46) of 1 as exactly 1. The moments behind the load are
correctly rounded sums (``math.fsum``), so their bits do not depend on the order of the atoms or
on the machine's vectorised summation; the tests compare them with exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import FACEBOOK_PROBS, FACEBOOK_VALUES
from hypothesis import given, settings
from hypothesis import strategies as st

import queuetheory as qt
from queuetheory._checks import LOAD_TOLERANCE, stable_load


def _exact_mean(values, probs) -> Fraction:
    """E[S] of the float atoms in exact rational arithmetic (the independent reference)."""
    p = [Fraction(float(x)) for x in probs]
    total = sum(p)
    return sum(Fraction(float(v)) * x for v, x in zip(values, p)) / total


def _orders(n: int, count: int, seed: int):
    rng = np.random.default_rng(seed)
    yield np.arange(n)
    yield np.arange(n)[::-1]
    for _ in range(count):
        yield rng.permutation(n)


def test_facebook_mean_is_correctly_rounded_in_every_order():
    values, probs = np.array(FACEBOOK_VALUES, float), np.array(FACEBOOK_PROBS)
    stored = qt.Discrete(values, probs).probs
    # the exact rational sum of the rounded products p_i * v_i, rounded once: the one answer a
    # correctly rounded sum gives, whatever the order or the machine
    reference = float(sum(Fraction(float(p * v)) for p, v in zip(stored, values)))
    for order in _orders(values.size, 30, seed=11):
        S = qt.Discrete(values[order], probs[order])
        assert S.probs.tobytes() == stored.tobytes()
        assert S.mean() == reference
        assert qt.SX(qt.Exponential(rate=reference), S).mean_runtime() == \
            qt.SX(qt.Exponential(rate=reference), qt.slowdowns.facebook()).mean_runtime()


def test_split_atoms_merge_to_the_same_bits():
    # atom 1 (p = 0.23) listed as two pieces in different places: merged in a canonical order
    values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1]
    probs = [0.1, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002, 0.13]
    a = qt.Discrete(values, probs)
    b = qt.Discrete(values[::-1], probs[::-1])
    assert a.probs.tobytes() == b.probs.tobytes() and a.mean() == b.mean()


@pytest.mark.parametrize("policy", [qt.Random(), qt.RIQ(1), qt.RIQ(3), qt.RIQ(10),
                                    qt.MDS(4, 0, remove=False)])
@pytest.mark.parametrize("model", ["ir", "sx"])
def test_load_exactly_one_is_unstable_in_every_order(policy, model):
    values, probs = np.array(FACEBOOK_VALUES, float), np.array(FACEBOOK_PROBS)
    for order in _orders(values.size, 5, seed=3):
        S = qt.Discrete(values[order], probs[order])
        X = qt.Exponential(rate=S.mean())
        runtime = qt.SX(X, S) if model == "sx" else qt.IR(qt.product(X, S))
        p = qt.analyze(qt.System(policy, runtime, arrival_rate=1.0))
        assert abs(p.load - 1.0) < LOAD_TOLERANCE
        assert p.stable is False and p.mean == math.inf
        assert p.quantile(0.99) == math.inf


def test_pk_mean_just_below_one_matches_mpmath():
    """Load 1 - 1e-12 is stable, and its mean is the P-K mean of the float inputs.

    Reference: the load in exact rationals, P-K in 40-digit mpmath. The computed load carries an
    absolute rounding error of a few 2**-53, so the mean (condition number 1 / (1 - rho) = 1e12)
    is right to about 1e-3 relative; the test allows that and no more.
    """
    S = qt.slowdowns.facebook()
    X = qt.Exponential(rate=S.mean())
    lam = 1.0 - 1e-12
    p = qt.analyze(qt.System(qt.Random(), qt.SX(X, S), arrival_rate=lam))
    assert p.stable
    es = _exact_mean(S.values, S.probs)
    es2 = sum(Fraction(float(v)) ** 2 * Fraction(float(x)) for v, x in zip(S.values, S.probs))
    ex = 1 / Fraction(X.rate)
    m1, m2 = ex * es, 2 * ex**2 * es2
    rho = Fraction(lam) * m1
    with mpmath.workdps(40):
        ref = mpmath.mpf(m1.numerator) / m1.denominator + (
            mpmath.mpf((Fraction(lam) * m2).numerator) / (Fraction(lam) * m2).denominator
            / (2 * (1 - mpmath.mpf(rho.numerator) / rho.denominator)))
    assert p.mean == pytest.approx(float(ref), rel=1e-3)
    assert 1e11 < p.mean < math.inf


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-3, 1e3), st.floats(1e-3, 1.0)), min_size=1, max_size=12),
       st.sampled_from([1, 2, 5]), st.sampled_from([1.0, 1.0 + 2**-52, 1.0 - 2**-53]))
def test_random_discrete_laws_at_load_one(atoms, d, lam):
    values = [v for v, _ in atoms]
    weights = np.array([w for _, w in atoms])
    probs = weights / math.fsum(weights)
    S = qt.Discrete(values, probs)
    X = qt.Exponential(rate=S.mean())
    p = qt.analyze(qt.System(qt.RIQ(d), qt.SX(X, S), arrival_rate=lam))
    assert p.stable is False and p.mean == math.inf and p.busy_fraction == 1.0


def test_stable_load_rule():
    assert stable_load(1.0 - 2 * LOAD_TOLERANCE) and not stable_load(1.0 - LOAD_TOLERANCE / 2)
    assert not stable_load(math.inf) and not stable_load(math.nan)
