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
    with pytest.raises(ValueError, match=r"RIQ\(d=10000000\) involves 10000000 servers per "
                                         r"arrival; the analysis takes at most 100000"):
        qt.analyze(system)


# -- what each policy declares about itself (queuetheory.policies module docstring) ----------
_BUILT_IN = ["random", "riq", "redundancy", "threshold:N", "mds:N", "replication:N"]


def test_registry_names_and_help():
    # test modules may register more policies after these (tests/test_new_policy.py)
    assert qt.policies.known_names()[:6] == _BUILT_IN
    assert qt.policies.known_names(note=True)[4] == "mds:N (m = d)"
    assert [c.__name__ for c in qt.policies.policy_classes()[:6]] == [
        "Random", "RIQ", "RedundancyD", "Threshold", "MDS", "Replication"]


@pytest.mark.parametrize("name, d, expected", [
    ("random", 3, qt.Random()), ("RIQ", 3, qt.RIQ(3)),
    ("redundancy", 2, qt.RedundancyD(2)), ("redundancy-d", 2, qt.RedundancyD(2)),
    ("redundancyd", 2, qt.RedundancyD(2)), ("threshold", 3, qt.Threshold(3, 1)),
    ("threshold:0", 3, qt.Threshold(3, 0)), ("mds", 2, qt.MDS(10, 2)),
    ("mds:4", 1, qt.MDS(4, 1)), ("replication", 2, qt.Replication(10, 2)),
    (" Replication:3 ", 2, qt.Replication(3, 2)),
])
def test_from_name_every_name(name, d, expected):
    assert qt.policies.from_name(name, d) == expected


@pytest.mark.parametrize("name, message", [
    ("riq:5", r"policy 'riq:5': riq takes no ':N' \(the degree of redundancy is d"),
    ("random:3", r"random takes no ':N'"),
    ("bogus", r"unknown policy 'bogus'; use random, riq, redundancy, threshold:N, "
              r"mds:N(,| or) replication:N"),
    ("mds:x", "the part after ':' must be an integer"),
    ("threshold:-1", "n must be an integer >= 0"),
])
def test_from_name_errors(name, message):
    with pytest.raises(ValueError, match=message):
        qt.policies.from_name(name, 2)


def test_kernel_descriptions():
    Kernel = qt.policies.Kernel
    assert qt.Random().kernel() == Kernel("lindley")
    assert qt.RIQ(3).kernel() == Kernel("riq")
    assert qt.Threshold(3, 0).kernel() == Kernel("riq")  # THRESHOLD-0 is RIQ
    assert qt.Threshold(3, 2).kernel() == Kernel("threshold", {"n": 2})
    assert qt.RedundancyD(2).kernel() == Kernel("redundant",
                                                {"needed": 1, "groups": 1, "remove": True})
    assert qt.MDS(4, 2, remove=False).kernel() == Kernel(
        "redundant", {"needed": 4, "groups": 1, "remove": False})
    assert qt.Replication(3, 2).kernel() == Kernel("redundant",
                                                   {"needed": 1, "groups": 3, "remove": True})
    assert qt.Policy().kernel() is None


def test_stability_facts():
    ir_exp, ir_det = qt.IR(qt.Exponential(2.0)), qt.IR(qt.Deterministic(1.0))
    sx = qt.SX(X=qt.Exponential(1.0), S=qt.Deterministic(1.0))
    for policy in (qt.Random(), qt.RIQ(3)):
        assert policy.load_bound(sx, poisson=False) == (f"{policy.label()} is stable exactly "
                                                        f"below load 1")
    assert "Gardner et al., Operations Research 2017" in qt.RedundancyD(2).load_bound(ir_exp)
    assert qt.RedundancyD(2).load_bound(ir_exp, poisson=False) is None
    for policy, runtime in ((qt.RedundancyD(2), ir_det), (qt.RedundancyD(2), sx),
                            (qt.Threshold(2, 1), ir_exp), (qt.MDS(2, 1), ir_exp),
                            (qt.Replication(2, 2), ir_exp)):
        assert policy.load_bound(runtime) is None


@pytest.mark.parametrize("runtime", [qt.IR(qt.BoundedPareto(1.5, 1e-250, 1.0)),
                                     qt.IR(qt.Exponential(1e200)),
                                     qt.SX(qt.Exponential(1e-160),
                                           qt.Discrete([1.0, 3.0], [0.5, 0.5]))])
def test_a_runtime_scale_whose_moments_underflow_is_refused(runtime):
    # BoundedPareto(1.5, 1e-250, 1): E[R^2] = 3e-375 underflowed to 0, and Random at load 0.5
    # read the mean 3e-250 for 5e-126 (found by a review); a clear error names the runtime
    mean = runtime.mean_runtime()
    with pytest.raises(ValueError, match=r"runtime: the mean runtime .* lies outside \[1e-150"):
        qt.System(qt.Random(), runtime, arrival_rate=0.5 / mean)
    # within the range results scale exactly with the time unit
    scaled = qt.IR(qt.Exponential(1e140))
    p = qt.analyze(qt.System(qt.Random(), scaled, arrival_rate=0.5e140))
    assert p.mean == 2e-140
