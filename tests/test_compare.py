"""Tests of qt.compare: one table across policies and d."""

import math

import pytest

import queuetheory as qt


@pytest.fixture
def mm1():
    return qt.IR(qt.Exponential(1.0))


def test_random_row_is_mm1(mm1):
    # M/M/1: E[T] = 1/(mu - lam) = 2 at mu = 1, lam = 0.5; p99 = ln(100)/(mu - lam).
    table = qt.compare(mm1, 0.5, policies=["random"], quantiles=[0.99])
    (row,) = table.rows
    assert row["mean"] == pytest.approx(2.0, rel=1e-12)
    assert row["p99"] == pytest.approx(math.log(100) / 0.5, rel=1e-8)
    assert row["cost"] == pytest.approx(1.0, rel=1e-12)


def test_redundancy_rows_use_closed_form(mm1):
    # Redundancy-d, IR exponential, k -> inf (Gardner et al. 2017): d = 2 mean
    # (-ln(1-rho) - rho) / (mu rho^2), evaluated here by hand.
    rho = 0.5
    expected = (-math.log(1 - rho) - rho) / rho**2
    table = qt.compare(mm1, rho, policies=["redundancy"], d=[2, 3])
    assert [r["policy"] for r in table.rows] == ["RedundancyD(d=2)", "RedundancyD(d=3)"]
    assert table.rows[0]["mean"] == pytest.approx(expected, rel=1e-9)
    assert table.rows[1]["mean"] < table.rows[0]["mean"]


def test_missing_analysis_is_reported_not_raised(mm1):
    table = qt.compare(mm1, 0.5, policies=["threshold:1"], d=[2])
    (row,) = table.rows
    assert row["stable"] is None and "simulate=True" in row["method"]


def test_simulated_rows_and_exports(mm1):
    table = qt.compare(mm1, 0.5, policies=["random"], simulate=True, servers=10, jobs=20_000,
                       replications=8, seed=3)
    analysis, simulation = table.rows
    assert simulation["source"] == "simulation k=10"
    # Random routing makes each server an exact M/M/1 (mean 2, no finite-k bias). The 95% CI of
    # 8 replications is mean +- 2.365 se (t, 7 df); a false failure below 1e-3 needs 5.408 se.
    low, high = simulation["mean_ci"]
    se = (high - low) / 2 / 2.365
    assert abs(simulation["mean"] - 2.0) < 5.408 * se
    assert "\\toprule" in table.to_latex()
    assert "Random" in str(table)
    assert "Setting:" in table.describe()
    assert table.to_dict()["rows"][0]["mean"] == analysis["mean"]


def test_bad_input(mm1):
    with pytest.raises(ValueError, match="arrival_rate"):
        qt.compare(mm1, -1.0)
    with pytest.raises(ValueError, match="unknown policy"):
        qt.compare(mm1, 0.5, policies=["fastest"])
