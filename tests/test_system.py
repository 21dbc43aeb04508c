"""Tests of queuetheory.system.System: validation, load, replace and describe."""

from __future__ import annotations

import dataclasses
import math

import pytest
from scipy import stats

import queuetheory as qt


def test_load_sx_and_ir(facebook_sx):
    # rho = lam E[X] E[S] (S&X) or lam E[R] (IR)
    assert qt.System(qt.RIQ(3), facebook_sx, arrival_rate=0.7).load == pytest.approx(0.7)
    sx = qt.SX(qt.Exponential(2.0), qt.Uniform(1.0, 3.0))
    assert qt.System(qt.Random(), sx, arrival_rate=0.3).load == pytest.approx(0.3 * 0.5 * 2.0)
    ir = qt.IR(qt.Erlang(3, 2.0))
    assert qt.System(qt.RIQ(2), ir, arrival_rate=0.4).load == pytest.approx(0.4 * 1.5)
    assert qt.System(qt.Random(), qt.IR(qt.Pareto(1.0, 1.0)), arrival_rate=1e-9).load == math.inf


def test_replace_and_immutability(facebook_sx):
    system = qt.System(qt.RIQ(3), facebook_sx, arrival_rate=0.7)
    other = system.replace(arrival_rate=0.5, policy=qt.RIQ(2))
    assert (other.arrival_rate, other.policy, other.runtime) == (0.5, qt.RIQ(2), facebook_sx)
    assert system.arrival_rate == 0.7
    with pytest.raises(dataclasses.FrozenInstanceError):
        system.arrival_rate = 0.1
    with pytest.raises(ValueError, match="arrival_rate"):
        system.replace(arrival_rate=-1.0)


def test_servers_and_interarrival(facebook_sx):
    s = qt.System(qt.MDS(n=4, m=2), facebook_sx, arrival_rate=0.2, servers=10.0)
    assert s.servers == 10 and isinstance(s.servers, int)
    g = qt.System(qt.Random(), facebook_sx, arrival_rate=0.2, interarrival=stats.gamma(2.0))
    assert isinstance(g.interarrival, qt.Distribution)
    assert "renewal arrivals" in g.describe()


def test_describe(facebook_sx):
    text = qt.System(qt.RIQ(3), facebook_sx, arrival_rate=0.7).describe()
    for part in ("RIQ(d=3)", "k -> infinity", "S&X", "Poisson arrivals", "0.7", "FCFS"):
        assert part in text
    assert "k = 20 servers" in qt.System(qt.RIQ(3), facebook_sx, 0.7, servers=20).describe()


@pytest.mark.parametrize("kwargs, message", [
    ({"arrival_rate": 0.0}, "arrival_rate must be a finite number > 0"),
    ({"arrival_rate": -0.5}, "arrival_rate must be a finite number > 0"),
    ({"arrival_rate": math.nan}, "arrival_rate must be a finite number > 0"),
    ({"arrival_rate": math.inf}, "arrival_rate must be a finite number > 0"),
    ({"arrival_rate": "fast"}, "arrival_rate must be a number"),
    ({"servers": 2}, "servers must be >= 3"),
    ({"servers": 0}, "servers must be an integer >= 1"),
    ({"servers": 5.5}, "servers must be an integer >= 1"),
    ({"policy": "RIQ"}, "policy must be a queuetheory policy"),
    ({"runtime": qt.Exponential(1.0)}, r"runtime must be qt.SX\(X, S\) or qt.IR\(R\)"),
    ({"interarrival": 3.0}, "expected a queuetheory distribution"),
])
def test_bad_input(facebook_sx, kwargs, message):
    args = {"policy": qt.RIQ(3), "runtime": facebook_sx, "arrival_rate": 0.7} | kwargs
    with pytest.raises(ValueError, match=message):
        qt.System(**args)


def test_policy_subclass_is_analysed_like_its_parent():
    """analyze and simulate look policies up the same way, along the class hierarchy."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class MyRIQ(qt.RIQ):
        pass

    runtime = qt.IR(qt.Exponential(1.0))
    mine = qt.analyze(qt.System(MyRIQ(3), runtime, arrival_rate=0.5))
    base = qt.analyze(qt.System(qt.RIQ(3), runtime, arrival_rate=0.5))
    assert mine.mean == base.mean and mine.busy_fraction == base.busy_fraction
