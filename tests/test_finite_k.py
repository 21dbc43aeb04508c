"""Exactness flags and the finite-k AccuracyWarning (issue #9 item 4).

The references are simulations of the finite systems (seeded, with their intervals), run here
independently of the map in queuetheory/data/finite_k_gap.csv (other seeds), and the exact
finite-k conditions: Random routing makes every server an M/G/1 queue for any k; Redundancy-d
with IR exponential runtimes has the product-form finite-k mean (Gardner et al., Operations
Research 2017).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import warnings

import pytest

import queuetheory as qt
from queuetheory.analysis import finite_k


def _facebook():
    S = qt.slowdowns.facebook()
    return qt.SX(X=qt.Exponential(rate=S.mean()), S=S)


def _quiet(system):
    """analyze(system), failing if it warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return qt.analyze(system)


def test_accuracy_warning_is_a_top_level_user_warning():
    assert issubclass(qt.AccuracyWarning, UserWarning) and "AccuracyWarning" in qt.__all__


def test_small_farm_limit_is_not_exact_and_warns_with_a_true_size():
    # Issue #9 item 4: k = 10 servers of RIQ(10) used to return the limit 0.9246 as exact.
    system = qt.System(qt.RIQ(10), _facebook(), arrival_rate=0.7, servers=10)
    with pytest.warns(qt.AccuracyWarning, match=r"estimated finite-k gap \+\d+"):
        p = qt.analyze(system)
    assert not p.exact and p.limit and p.to_dict()["exact"] is False
    assert "(exact)" not in p.describe() and "finite-k gap" in p.describe()
    gap = p.finite_k_gap
    assert gap.known and gap.mean > 0.5
    # The true gap, from a simulation of the 10-server system (seed not used by the map).
    sim = qt.simulate(system, jobs=20_000, replications=12, seed=90, confidence=0.999)
    low, high = (v / p.mean - 1 for v in sim.mean_ci)
    assert gap.mean_interval[0] <= high and low <= gap.mean_interval[1], (low, high, gap)


@pytest.mark.slow   # 5 s without numba
def test_interpolated_gap_covers_the_true_gap():
    # Between mapped loads (0.3 / 0.5 / ...) and mapped k (30 and 100): Redundancy-3 S&X.
    system = qt.System(qt.RedundancyD(3), _facebook(), arrival_rate=0.4, servers=50)
    with pytest.warns(qt.AccuracyWarning):
        p = qt.analyze(system)
    gap = p.finite_k_gap
    assert gap.known and "interpolated" in gap.source
    sim = qt.simulate(system, jobs=25_000, replications=12, seed=91, confidence=0.999)
    low, high = (v / p.mean - 1 for v in sim.mean_ci)
    assert gap.mean_interval[0] <= high and low <= gap.mean_interval[1], (low, high, gap)


@pytest.mark.parametrize("system", [
    qt.System(qt.Random(), _facebook(), arrival_rate=0.7, servers=3),
    qt.System(qt.RedundancyD(2), qt.IR(qt.Exponential(2.0)), arrival_rate=1.2, servers=4),
    qt.System(qt.RIQ(3), _facebook(), arrival_rate=0.7),          # no k: the limit itself
], ids=["random", "redundancy-ir-exponential", "riq-limit"])
def test_exact_methods_stay_exact_and_quiet(system):
    p = _quiet(system)
    assert p.exact and p.finite_k_gap is None


@pytest.mark.parametrize("system, why", [
    (qt.System(qt.RIQ(7), _facebook(), arrival_rate=0.5, servers=100), "no data for RIQ(d=7)"),
    (qt.System(qt.RIQ(3), qt.IR(qt.HyperExponential([0.9, 0.1], [2.0, 0.25])),
               arrival_rate=0.3, servers=100), "no data for IR runtimes"),
    (qt.System(qt.RIQ(3), _facebook(), arrival_rate=0.1, servers=100), "outside the mapped"),
    (qt.System(qt.RIQ(3), _facebook(), arrival_rate=0.5, servers=5), "below the smallest"),
], ids=["parameters", "runtime", "load", "small-k"])
def test_unmapped_systems_warn_unknown_gap(system, why):
    with pytest.warns(qt.AccuracyWarning, match="finite-k gap unknown") as caught:
        p = qt.analyze(system)
    assert why in str(caught[0].message) and not p.exact and not p.finite_k_gap.known
    assert p.finite_k_gap.bound == math.inf and p.to_dict()["finite_k_gap"] is None


def test_runtime_key_is_unit_free():
    # The same S&X model in another unit of time (slowdowns x 1000, X / 1000) is mapped.
    S = qt.slowdowns.facebook()
    scaled = qt.SX(X=qt.Exponential(rate=1000 * S.mean()),
                   S=qt.Discrete(1000 * S.values, S.probs))
    assert finite_k.runtime_key(scaled) == "sx-facebook"
    assert finite_k.runtime_key(qt.IR(qt.Exponential(1e-9))) == "ir-exponential"
    assert finite_k.runtime_key(qt.IR(qt.Erlang(2, 1.0))) is None


def test_large_farm_with_a_small_mapped_gap_is_quiet():
    # RIQ(2), IR exponential, load 0.3 at k = 3000: the map's k = 300 range scaled by 1/10.
    p = _quiet(qt.System(qt.RIQ(2), qt.IR(qt.Exponential(1.0)), arrival_rate=0.3,
                         servers=3000))
    assert not p.exact and p.finite_k_gap.known and p.finite_k_gap.bound <= 0.01
    assert "extrapolated" in p.finite_k_gap.source


def test_map_rows_are_consistent_with_the_analysis():
    # Every stable row's gap is sim / limit - 1 (inf if unstable, nan if inconclusive), and the
    # RIQ rows' limits are today's analysis.
    with finite_k.MAP_FILE.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) > 100
    runtimes = {"sx-facebook": _facebook(), "ir-exponential": qt.IR(qt.Exponential(1.0))}
    assert {row["verdict"] for row in rows} <= {"stable", "unstable", "inconclusive"}
    for row in rows:
        if row["verdict"] != "stable":
            expected = math.inf if row["verdict"] == "unstable" else None
            assert all((float(row[f"gap_{stat}"]) == expected) if expected
                       else math.isnan(float(row[f"gap_{stat}"])) for stat in ("mean", "p99"))
            continue
        for stat in ("mean", "p99"):
            gap = float(row[f"sim_{stat}"]) / float(row[f"limit_{stat}"]) - 1
            assert gap == pytest.approx(float(row[f"gap_{stat}"]), rel=2e-5, abs=2e-5)
            assert float(row[f"gap_{stat}_low"]) <= gap <= float(row[f"gap_{stat}_high"])
        if row["policy"].startswith("RIQ"):
            runtime = runtimes[row["runtime"]]
            d = int(row["polled"])
            limit = qt.analyze(qt.System(qt.RIQ(d), runtime,
                                         arrival_rate=float(row["load"]) / runtime.mean_runtime()))
            assert limit.mean == pytest.approx(float(row["limit_mean"]), rel=1e-5)


@pytest.mark.slow   # 10 s without numba (Redundancy-10 under S&X: its frontier decides)
def test_finite_farm_found_unstable_gives_an_infinite_gap():
    # The map's k = 10 simulation of Redundancy-10 at load 0.5 was unstable although the
    # mean-field limit is stable (frontier 0.663). Independently: with d = k all servers start
    # every job together (FCFS), so the farm is one queue with arrival rate k lam = 5 and
    # service X min(S_1..S_10): E = E[min] / E[S] = 1.0866505 / 4.691 (E[min] = sum_s
    # P(S >= s)^10, exact fractions), load 5 * 0.2316 = 1.158 > 1. A fresh run agrees.
    system = qt.System(qt.RedundancyD(10), _facebook(), arrival_rate=0.5, servers=10)
    with pytest.warns(qt.AccuracyWarning, match="UNSTABLE"):
        p = qt.analyze(system)
    assert p.stable and p.finite_k_gap.mean == math.inf and p.finite_k_gap.bound == math.inf
    sim = qt.simulate(system, jobs=40_000, replications=8, seed=92)
    assert sim.verdict == "unstable", sim.stability


def _point(gap, verdict="stable"):
    point = {stat: (gap, gap - 0.01, gap + 0.01) for stat in ("mean", "p99")}
    point["verdict"] = verdict
    return point


@pytest.fixture
def synthetic_map(monkeypatch):
    """A made-up map for RIQ(2), IR exponential: gap 1/k * 3 at load 0.4, 6/k at load 0.8."""
    table = {qt.RIQ: {((("d", 2),), "ir-exponential"): {
        0.4: {10: _point(0.3), 100: _point(0.03)},
        0.8: {10: _point(0.6), 100: _point(0.06, "stable")}}}}
    monkeypatch.setattr(finite_k, "_load_map", lambda: table)
    return lambda lam, k: finite_k.finite_k_gap(
        qt.System(qt.RIQ(2), qt.IR(qt.Exponential(1.0)), arrival_rate=lam, servers=k))


def test_interpolation_rules_on_a_synthetic_map(synthetic_map):
    # at a mapped point: the point
    assert synthetic_map(0.4, 10).mean == pytest.approx(0.3)
    # halfway in load: linear; range spans both neighbours
    gap = synthetic_map(0.6, 10)
    assert gap.mean == pytest.approx(0.45) and gap.mean_interval == pytest.approx((0.29, 0.61))
    # between k = 10 and 100: k * gap is 3 at both, so the gap is 3 / k
    assert synthetic_map(0.4, 30).mean == pytest.approx(0.1)
    # beyond k = 100: scaled by 100 / k, and said to be extrapolated
    gap = synthetic_map(0.8, 1000)
    assert gap.mean == pytest.approx(0.006) and "extrapolated" in gap.source
    # outside: unknown
    assert not synthetic_map(0.3, 10).known and not synthetic_map(0.4, 5).known


def test_unstable_and_inconclusive_points_on_a_synthetic_map(synthetic_map, monkeypatch):
    entry = finite_k._load_map()[qt.RIQ][((("d", 2),), "ir-exponential")]
    entry[0.8][100] = _point(math.nan, "inconclusive")
    entry[0.4][10] = _point(math.inf, "unstable")
    unknown = synthetic_map(0.8, 100)
    assert not unknown.known and unknown.mean is None and unknown.mean_interval is None
    assert "inconclusive" in synthetic_map(0.8, 200).source
    assert synthetic_map(0.6, 10).mean == math.inf       # a neighbour was unstable
    assert synthetic_map(0.4, 100).mean == pytest.approx(0.03)


class _Renamed(qt.RIQ):
    """A user's RIQ under another label (no ``names``: not registered, analysed as RIQ)."""

    def label(self):
        return "my dispatcher"


@dataclasses.dataclass(frozen=True)
class _Tagged(qt.RIQ):
    """A user's RIQ subclass with a field of its own."""

    tag: str = "mine"


@pytest.mark.parametrize("policy", [_Renamed(10), _Tagged(10, "x"), qt.Threshold(10, 0)],
                         ids=["renamed-label", "extra-field", "threshold-0"])
def test_subclasses_and_renamed_labels_inherit_the_map(policy):
    # Issue #9: the map was keyed on labels, so these got "unknown". They are RIQ(10) by
    # their class hierarchy (THRESHOLD-0 by definition) and read RIQ(10)'s map entry.
    runtime = _facebook()
    base = finite_k.finite_k_gap(qt.System(qt.RIQ(10), runtime, arrival_rate=0.7, servers=10))
    with pytest.warns(qt.AccuracyWarning, match=r"estimated finite-k gap \+\d+"):
        p = qt.analyze(qt.System(policy, runtime, arrival_rate=0.7, servers=10))
    gap = p.finite_k_gap
    assert base.known and gap.known
    assert (gap.mean, gap.mean_interval, gap.p99, gap.p99_interval) == (
        base.mean, base.mean_interval, base.p99, base.p99_interval)
    if not isinstance(policy, qt.Threshold):
        assert "mapped as its parent class, RIQ(d=10)" in gap.source
    # the parameters come from the object: d = 7 is not mapped, whatever the class
    other = finite_k.finite_k_gap(qt.System(type(policy)(7), runtime, arrival_rate=0.7,
                                            servers=10))
    assert not other.known and "RIQ(d=7)" in other.source


def test_batch_policy_subclass_is_keyed_on_all_its_parameters():
    class MyMDS(qt.MDS):
        pass

    runtime = _facebook()

    def gap(policy):
        return finite_k.finite_k_gap(qt.System(policy, runtime, arrival_rate=0.5, servers=30))

    base = gap(qt.MDS(4, 2, remove=False))
    assert base.known and gap(MyMDS(4, 2, remove=False)).mean == base.mean
    assert not gap(MyMDS(4, 2, remove=True)).known           # removal is not in the map
    assert not gap(MyMDS(4, 3, remove=False)).known


def test_map_columns_name_the_registered_policy():
    # Every row's key (family, parameters) rebuilds a policy whose label is the row's label.
    with finite_k.MAP_FILE.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        cls, _ = qt.policies.policy_class(row["family"])
        policy = cls(**json.loads(row["parameters"]))
        assert policy.label() == row["policy"] and policy.polled == int(row["polled"])
        assert finite_k.policy_columns(policy) == {"family": row["family"],
                                                   "parameters": row["parameters"]}


def _no_nan(value):
    if isinstance(value, dict):
        return all(_no_nan(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_no_nan(v) for v in value)
    return not (isinstance(value, float) and math.isnan(value))


@pytest.mark.parametrize("policy, lam, known", [
    (qt.RIQ(10), 0.7, True), (qt.RIQ(7), 0.7, False),
    pytest.param(qt.RedundancyD(10), 0.5, True, marks=pytest.mark.slow),   # 9 s without numba
], ids=["known", "unknown", "infinite"])
def test_gap_fields_are_none_when_unknown_and_json_has_no_nan(policy, lam, known):
    system = qt.System(policy, _facebook(), arrival_rate=lam, servers=10)
    with pytest.warns(qt.AccuracyWarning, match="finite-k gap" if known else "gap unknown"):
        p = qt.analyze(system)
    gap = p.finite_k_gap
    out = gap.to_dict()
    assert gap.known is known and out["known"] is known and _no_nan(out)
    assert _no_nan(p.to_dict()) and p.to_dict()["finite_k_gap"] == gap.mean
    if not known:
        assert (gap.mean, gap.mean_interval, gap.p99, gap.p99_interval) == (None,) * 4
        assert set(out.values()) >= {None} and gap.bound == math.inf
        assert "unknown" in gap.describe() and "unknown" in p.describe()
        json.dumps(out, allow_nan=False)                     # strict JSON
    else:
        assert all(isinstance(v, float) for v in (gap.mean, gap.p99))
        assert all(len(r) == 2 for r in (out["mean_interval"], out["p99_interval"]))


@pytest.mark.slow   # 17 s without numba (Redundancy-10 under S&X: its frontier decides)
def test_cli_json_with_servers_is_strict_json(capsys):
    # --servers 10: RIQ(3) mapped at k = 10, RIQ(7) not (gap null), Redundancy-10 found
    # unstable at k = 10 (gap "inf", as the CLI writes infinities). No NaN anywhere.
    from queuetheory.cli import main

    def strict(name):
        raise AssertionError(f"non-strict JSON constant {name}")

    assert main(["--policy", "riq,redundancy", "--d", "3,7,10", "--rate", "0.5",
                 "--servers", "10", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    # the gaps' warnings on standard error, one line each (the CLI's form of AccuracyWarning)
    assert err and all(line.startswith("queuetheory: warning: ") for line in err.splitlines())
    rows = {row["policy"]: row for row in json.loads(out, parse_constant=strict)["rows"]}
    assert rows["RIQ(d=7)"]["finite_k_gap"] is None and rows["RIQ(d=7)"]["exact"] is False
    assert rows["RIQ(d=7)"]["finite_k_gap_range"] is None
    assert isinstance(rows["RIQ(d=3)"]["finite_k_gap"], float)
    assert rows["RedundancyD(d=10)"]["finite_k_gap"] == "inf"
