"""Tests of queuetheory.slowdowns against the published Facebook table (docs/theory/model.rst)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FACEBOOK_PROBS, FACEBOOK_VALUES

import queuetheory as qt


def test_facebook_table():
    S = qt.slowdowns.facebook()
    np.testing.assert_array_equal(S.values, FACEBOOK_VALUES)
    np.testing.assert_allclose(S.probs, FACEBOOK_PROBS, rtol=1e-14)
    assert sum(FACEBOOK_PROBS) == pytest.approx(1.0, abs=1e-12)


def test_facebook_moments():
    # published: E[S] = 4.691, E[S^2] = 31.555; recomputed here from the table
    m1 = sum(v * p for v, p in zip(FACEBOOK_VALUES, FACEBOOK_PROBS))
    m2 = sum(v * v * p for v, p in zip(FACEBOOK_VALUES, FACEBOOK_PROBS))
    assert (m1, m2) == (pytest.approx(4.691, abs=1e-12), pytest.approx(31.555, abs=1e-12))
    S = qt.slowdowns.facebook()
    assert S.mean() == pytest.approx(m1, rel=1e-14)
    assert S.moment(2) == pytest.approx(m2, rel=1e-14)


def test_registry():
    assert qt.slowdowns.available() == ["facebook"]
    assert qt.slowdowns.by_name("Facebook").mean() == pytest.approx(4.691)
    with pytest.raises(ValueError, match="unknown slowdown distribution 'bing'"):
        qt.slowdowns.by_name("bing")
