"""Tests of queuetheory.policies: parameters, validation, labels, and the polled/batch counts."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import queuetheory as qt


def test_counts_and_labels():
    cases = [
        (qt.Random(), 1, 1, "Random"),
        (qt.RIQ(d=3), 3, 1, "RIQ(d=3)"),
        (qt.RedundancyD(2), 2, 1, "RedundancyD(d=2)"),
        (qt.Threshold(d=4, n=2), 4, 1, "Threshold(d=4, n=2)"),
        (qt.MDS(n=10, m=2), 12, 10, "MDS(n=10, m=2)"),
        (qt.MDS(n=3, m=0, remove=False), 3, 3, "MDS(n=3, m=0, no removal)"),
        (qt.Replication(n=10, d=2), 20, 10, "Replication(n=10, d=2)"),
        (qt.Replication(n=2, d=3, remove=False), 6, 2, "Replication(n=2, d=3, no removal)"),
    ]
    for policy, polled, batch, label in cases:
        assert (policy.polled, policy.batch, policy.label()) == (polled, batch, label)


def test_defaults_and_value_semantics():
    assert qt.RIQ().d == 2 and qt.Threshold(d=2).n == 0
    assert qt.RIQ(3) == qt.RIQ(d=3) and hash(qt.RIQ(3)) == hash(qt.RIQ(3))
    assert qt.RIQ(3) != qt.RedundancyD(3)
    assert qt.RIQ(d=4.0).d == 4 and isinstance(qt.RIQ(d=4.0).d, int)
    with pytest.raises(dataclasses.FrozenInstanceError):
        qt.RIQ(3).d = 4


@pytest.mark.parametrize("make, message", [
    (lambda: qt.RIQ(0), "d must be an integer >= 1"),
    (lambda: qt.RIQ(-2), "d must be an integer >= 1"),
    (lambda: qt.RIQ(2.5), "d must be an integer >= 1"),
    (lambda: qt.RIQ(True), "d must be an integer >= 1"),
    (lambda: qt.RIQ("3"), "d must be an integer >= 1"),
    (lambda: qt.RedundancyD(0), "d must be an integer >= 1"),
    (lambda: qt.Threshold(d=2, n=-1), "n must be an integer >= 0"),
    (lambda: qt.Threshold(d=0, n=1), "d must be an integer >= 1"),
    (lambda: qt.MDS(n=0, m=1), "n must be an integer >= 1"),
    (lambda: qt.MDS(n=2, m=-1), "m must be an integer >= 0"),
    (lambda: qt.MDS(n=2, m=1, remove="yes"), "remove must be True or False"),
    (lambda: qt.Replication(n=2, d=0), "d must be an integer >= 1"),
    (lambda: qt.Replication(n=0, d=2), "n must be an integer >= 1"),
    (lambda: qt.Replication(n=1, d=1, remove=1), "remove must be True or False"),
])
def test_bad_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_policies_pickle():
    for policy in (qt.Random(), qt.RIQ(3), qt.RedundancyD(2), qt.Threshold(d=3, n=1),
                   qt.MDS(n=4, m=2, remove=False), qt.Replication(n=2, d=3)):
        assert pickle.loads(pickle.dumps(policy)) == policy


def test_numpy_scalars_accepted_strings_rejected():
    assert qt.RIQ(np.array(2)) == qt.RIQ(2) and type(qt.RIQ(np.array(2)).d) is int
    assert qt.RIQ(np.int32(3)).d == 3 and qt.Threshold(d=np.uint8(2), n=np.int64(0)).n == 0
    assert qt.MDS(2, 1, remove=np.bool_(False)).remove is False
    assert qt.Replication(2, 2, remove=np.array(True)).remove is True
    for bad in ("2", b"2", np.array("2"), np.bool_(True), np.array([2]), None, 2 + 0j):
        with pytest.raises(ValueError, match="d must be an integer >= 1"):
            qt.RIQ(bad)
    with pytest.raises(ValueError, match="remove must be True or False"):
        qt.MDS(2, 1, remove=np.int64(1))


@pytest.mark.parametrize("name", [None, 3, ["riq"], b"riq"])
def test_from_name_rejects_non_strings(name):
    with pytest.raises(ValueError, match="name must be a policy name"):
        qt.policies.from_name(name)


def test_riq_analysis_refuses_d_beyond_its_range_at_once():
    """RIQ(d=10**7) once ran for minutes (the fixed point sums over d terms per iteration)."""
    system = qt.System(qt.RIQ(d=10**7), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5)
    with pytest.raises(ValueError, match=r"d must be <= 100000 for the RIQ analysis.*d = 10000000"):
        qt.analyze(system)
