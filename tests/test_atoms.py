"""One query for atoms (``Distribution.atoms``): a discrete law of any class takes the exact
discrete branches everywhere, so it gives the numbers of the equivalent ``qt.Discrete``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import queuetheory as qt


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
