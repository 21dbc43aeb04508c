"""Tests of the command line (python -m queuetheory / queuetheory)."""

import json
import math
import subprocess
import sys

import pytest

from queuetheory.cli import main


def test_default_table_runs(capsys):
    assert main(["--rate", "0.5", "--d", "1-2"]) == 0
    out = capsys.readouterr().out
    assert "Random" in out and "RIQ(d=2)" in out and "method:" in out


def test_json_random_ir_exponential_is_mm1(capsys, tmp_path):
    # With --S a CSV holding only slowdown 1 and E[X] = 1 the runtime is Exp(1), so Random is the
    # M/M/1 queue: E[T] = 1/(1 - lam), p99 = ln(100)/(1 - lam).
    csv = tmp_path / "slowdowns.csv"
    csv.write_text("slowdown\n1\n1\n")
    assert main(["--policy", "random", "--rate", "0.25", "--format", "json", "--model", "ir",
                 "--S", str(csv), "--size-mean", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["mean"] == pytest.approx(1 / 0.75, rel=1e-12)
    assert row["p99"] == pytest.approx(math.log(100) / 0.75, rel=1e-8)


def test_unstable_is_inf_in_json(capsys):
    assert main(["--policy", "random", "--rate", "1.5", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["stable"] is False and row["mean"] == "inf"


@pytest.mark.parametrize("args, message", [
    (["--policy", "bogus"], "unknown policy"),
    (["--rate", "x"], "comma-separated numbers"),
    (["--X", "weird"], "unknown size distribution"),
    (["--rate", "-0.5"], "arrival_rate"),
])
def test_bad_arguments_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_module_help():
    done = subprocess.run([sys.executable, "-m", "queuetheory", "--help"], capture_output=True,
                          text=True, check=True)
    assert "--policy" in done.stdout and "--simulate" in done.stdout
