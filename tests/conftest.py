"""Shared fixtures for the core tests: the Facebook (Dolly) S&X set-up of REFERENCE section 3."""

from __future__ import annotations

import mpmath
import pytest

import queuetheory as qt

#: Facebook slowdowns, typed in from the published table (REFERENCE section 1), independently of
#: ``qt.slowdowns.facebook`` so that the two can be compared.
FACEBOOK_VALUES = tuple(range(1, 13))
FACEBOOK_PROBS = (0.23, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002)


@pytest.fixture
def facebook_s():
    """The Facebook slowdown distribution S (values 1..12)."""
    return qt.slowdowns.facebook()


@pytest.fixture
def facebook_sx(facebook_s):
    """S&X runtime with exponential X and E[X] E[S] = 1 (the REFERENCE section 3 example)."""
    return qt.SX(X=qt.Exponential(rate=facebook_s.mean()), S=facebook_s)


@pytest.fixture
def mp30():
    """Run the test body with mpmath at 30 significant digits, restoring the precision after."""
    with mpmath.workdps(30):
        yield
