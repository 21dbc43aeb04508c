"""A policy added in this file alone (no other module edited) is picked up everywhere:
:func:`from_name`, the command line's help and errors, ``System``, ``simulate`` (both engines),
``analyze`` and ``compare``. See README, "Adding a policy"."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

import queuetheory as qt
from queuetheory.analysis import register
from queuetheory.cli import build_parser, main
from queuetheory.policies import Kernel, from_name, known_names


@dataclass(frozen=True)
class IdleReplicas(qt.RIQ):
    """RIQ under a name of its own: it inherits RIQ's parameters, simulation kernel, stability
    facts and analysis (looked up along the class hierarchy)."""

    names = ("idlereplicas", "idle-replicas")


@dataclass(frozen=True)
class NoCancel(qt.Policy):
    """Redundancy-d without cancellation: a job's ``d`` replicas go to ``d`` distinct random
    servers and every one is served in full; the job is done at its first finished replica."""

    d: int = 2
    names = ("nocancel",)

    def __post_init__(self):
        if not (isinstance(self.d, int) and self.d >= 1):
            raise ValueError(f"d must be an integer >= 1, got {self.d!r}")

    @property
    def polled(self):
        return self.d

    def label(self):
        return f"NoCancel(d={self.d})"

    def kernel(self):
        return Kernel("redundant", {"needed": 1, "groups": 1, "remove": False})


@register(NoCancel)
def _no_cancel(system):
    # Without cancellation every server receives replicas at the Poisson rate d * lam and serves
    # each in full: an M/M/1 queue with IR Exp(mu) runtimes. In the k -> infinity limit the d
    # replicas' response times are independent Exp(mu - d lam), so T ~ Exp(d (mu - d lam)).
    runtime = system.runtime
    if not (isinstance(runtime, qt.IR) and isinstance(runtime.R, qt.Exponential)):
        raise NotImplementedError("NoCancel is analysed for IR exponential runtimes only")
    d, lam, mu = system.policy.d, system.arrival_rate, 1.0 / runtime.R.mean()
    stable = d * lam < mu
    return qt.Prediction(system, method="NoCancel: independent M/M/1 replicas", exact=True,
                         stable=stable, mean=1.0 / (d * (mu - d * lam)) if stable else np.inf,
                         busy_fraction=min(d * lam / mu, 1.0), cost=d / mu, limit=True)


_IR = qt.IR(qt.Exponential(1.0))


def test_from_name_builds_the_new_policies():
    assert from_name("idlereplicas", 3) == IdleReplicas(3)
    assert from_name(" Idle-Replicas ", 2) == IdleReplicas(2)
    assert from_name("nocancel", 4) == NoCancel(4)
    assert type(from_name("riq", 3)) is qt.RIQ  # the parent keeps its own name
    assert {"idlereplicas", "nocancel"} <= set(known_names())


def test_error_messages_and_cli_help_list_the_new_policies(capsys):
    with pytest.raises(ValueError, match=r"unknown policy 'bogus'; use random, riq, .*nocancel"):
        from_name("bogus")
    with pytest.raises(ValueError, match=r"queuetheory policy \(Random, RIQ, .*NoCancel\)"):
        qt.System("nocancel", _IR, arrival_rate=0.5)
    help_text = " ".join(build_parser().format_help().split())
    assert "idlereplicas" in help_text and "nocancel" in help_text
    with pytest.raises(SystemExit) as stop:
        main(["--policy", "bogus"])
    assert stop.value.code == 2
    assert "replication:N, idlereplicas or nocancel" in capsys.readouterr().err


def test_a_name_taken_by_another_class_is_refused():
    with pytest.raises(ValueError, match="policy name 'riq' of .*Clash is taken by .*RIQ"):
        @dataclass(frozen=True)
        class Clash(qt.RIQ):
            names = ("riq",)


def test_a_subclass_without_names_of_its_own_registers_none():
    @dataclass(frozen=True)
    class Unnamed(qt.RedundancyD):
        pass

    assert type(from_name("redundancy", 2)) is qt.RedundancyD
    assert Unnamed.usage() == "redundancy"  # inherited, as its kernel and analysis are


def _runs(system, **kw):
    kw = dict(servers=10, jobs=2000, warmup=200, replications=2, seed=11, samples=True) | kw
    return [qt.simulate(system, engine=engine, **kw) for engine in ("numpy", "numba")]


def _same(first, second):
    np.testing.assert_array_equal(first.samples, second.samples)
    for key, values in first.per_replication.items():
        np.testing.assert_array_equal(values, second.per_replication[key])


@pytest.mark.parametrize("new, old", [
    (IdleReplicas(3), qt.RIQ(3)),
    (NoCancel(2), qt.Replication(n=1, d=2, remove=False)),  # the same rule, spelt as a batch
])
def test_simulated_with_the_kernel_it_declares_on_both_engines(new, old):
    pytest.importorskip("numba")
    runs = _runs(qt.System(new, _IR, arrival_rate=0.3))
    reference = _runs(qt.System(old, _IR, arrival_rate=0.3))
    for run in runs[1:] + reference:
        _same(runs[0], run)
    assert repr(runs[0]).startswith(f"SimulationResult({new.label()}, k=10")


def test_new_policy_without_cancellation_serves_every_replica():
    # Exact for every k: each server receives replicas at the Poisson rate d lam = 0.6 and
    # serves each in full, so its busy fraction is 0.6 and a job costs d E[R] = 2.
    # Intervals at level 0.9995 each: a false failure of this seeded test is rarer than 1e-3.
    sim = qt.simulate(qt.System(NoCancel(2), _IR, arrival_rate=0.3), servers=6, jobs=20_000,
                      replications=8, seed=5, confidence=0.9995)
    low, high = sim.busy_fraction_ci
    assert low < 0.6 < high and high - low < 0.05
    low, high = sim.cost_ci
    assert low < 2.0 < high and high - low < 0.1


def test_inherited_stability_fact_decides_the_verdict():
    sim = qt.simulate(qt.System(IdleReplicas(2), _IR, arrival_rate=1.0), servers=4, jobs=500,
                      replications=2, seed=1, engine="numpy")
    assert sim.verdict == "unstable"
    assert "IdleReplicas(d=2) is stable exactly below load 1" in sim.stability
    # a policy declaring no fact is judged from the trend of its run alone
    assert NoCancel(2).load_bound(_IR) is None


def test_analyze_finds_the_inherited_and_the_registered_analysis():
    system = qt.System(qt.RIQ(3), _IR, arrival_rate=0.5)
    assert qt.analyze(system.replace(policy=IdleReplicas(3))).mean == qt.analyze(system).mean
    # NoCancel(2) at lam = 0.3, mu = 1: 1 / (2 (1 - 0.6)) = 1.25
    prediction = qt.analyze(qt.System(NoCancel(2), _IR, arrival_rate=0.3))
    assert prediction.mean == pytest.approx(1.25, rel=1e-15)
    with pytest.raises(NotImplementedError, match="IR exponential"):
        qt.analyze(qt.System(NoCancel(2), qt.IR(qt.Deterministic(1.0)), arrival_rate=0.3))


def test_compare_and_command_line_take_the_new_names(capsys):
    table = qt.compare(_IR, 0.3, policies=["idlereplicas", "nocancel"], d=[2, 3])
    assert [row["policy"] for row in table.rows] == [
        "IdleReplicas(d=2)", "IdleReplicas(d=3)", "NoCancel(d=2)", "NoCancel(d=3)"]
    assert table.rows[2]["mean"] == pytest.approx(1.25, rel=1e-15)
    assert main(["--policy", "idlereplicas,nocancel", "--d", "2", "--rate", "0.3", "--model",
                 "ir", "--S", "facebook", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["policy"] for row in rows] == ["IdleReplicas(d=2)", "NoCancel(d=2)"]
