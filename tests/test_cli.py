"""Tests of the command line (python -m queuetheory / queuetheory)."""

import csv
import io
import json
import math
import subprocess
import sys

import pytest

import queuetheory as qt
from queuetheory.cli import main


def test_default_table_runs(capsys):
    assert main(["--rate", "0.5", "--d", "1-2"]) == 0
    out = capsys.readouterr().out
    assert "Random" in out and "RIQ(d=2)" in out and "method:" in out


@pytest.fixture
def ones(tmp_path):
    """A CSV holding only slowdown 1: with E[X] = 1 the runtime is Exp(1)."""
    path = tmp_path / "slowdowns.csv"
    path.write_text("slowdown\n1\n1\n")
    return path


def test_json_random_ir_exponential_is_mm1(capsys, ones):
    # Random with Exp(1) runtimes is the M/M/1 queue: E[T] = 1/(1 - lam), p99 = ln(100)/(1 - lam).
    assert main(["--policy", "random", "--rate", "0.25", "--format", "json", "--model", "ir",
                 "--S", str(ones), "--size-mean", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["rows"]
    assert row["mean"] == pytest.approx(1 / 0.75, rel=1e-12)
    assert row["p99"] == pytest.approx(math.log(100) / 0.75, rel=1e-8)
    meta = out["metadata"]
    assert meta["queuetheory"] == qt.__version__
    assert (meta["X"], meta["S"], meta["model"], meta["size_mean"]) == ("exponential",
                                                                       str(ones), "ir", 1.0)
    assert meta["methods"] == [row["method"]] and "Pollaczek" in row["method"]


def test_json_simulation_has_intervals_and_seed(capsys, ones):
    assert main(["--policy", "random", "--rate", "0.5", "--format", "json", "--S", str(ones),
                 "--size-mean", "1", "--simulate", "--servers", "4", "--jobs", "2000",
                 "--replications", "4", "--seed", "7"]) == 0
    out = json.loads(capsys.readouterr().out)
    simulated = out["rows"][1]
    for key in ("mean", "p95", "p99", "cost", "busy_fraction"):
        low, high = simulated[f"{key}_ci"]
        assert low <= simulated[key] <= high
    assert out["metadata"]["seed"] == 7 and out["metadata"]["replications"] == 4


def test_simulate_table_shows_intervals(capsys, ones):
    assert main(["--policy", "random", "--rate", "0.5", "--S", str(ones), "--size-mean", "1",
                 "--simulate", "--servers", "4", "--jobs", "2000", "--replications", "4"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "simulation k=4" in line)
    assert line.count("[") == 4  # mean, p95, p99, cost
    assert "confidence interval" in out


def test_csv_format(capsys, ones):
    assert main(["--policy", "random,riq", "--d", "2", "--rate", "0.25,0.5", "--S", str(ones),
                 "--size-mean", "1", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["arrival_rate"], r["policy"]) for r in rows] == [
        ("0.25", "Random"), ("0.25", "RIQ(d=2)"), ("0.5", "Random"), ("0.5", "RIQ(d=2)")]
    assert float(rows[2]["mean"]) == pytest.approx(2.0, rel=1e-12)  # M/M/1 at load 0.5


def test_remove_option(capsys):
    assert main(["--policy", "mds:4", "--d", "1", "--rate", "0.3", "--remove", "no",
                 "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["policy"] == "MDS(n=4, m=1, no removal)" and row["stable"] is True


def test_no_analysis_points_at_the_option(capsys):
    assert main(["--policy", "threshold:1", "--d", "2", "--rate", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "--simulate" in out and "qt." not in out and "simulate=True" not in out
    assert "(THRESHOLD-n with n >= 1)" in out           # the analysis's own reason, kept
    # a refusal by the grid: its reason (the tail), in the command's options
    assert main(["--policy", "mds:4", "--d", "2", "--remove", "yes", "--rate", "0.5",
                 "--X", "pareto:1.5"]) == 0
    out = capsys.readouterr().out
    assert "E[R^2] = inf" in out and "use --simulate" in out and "qt." not in out
    assert out.count("MDS(n=4, m=2)") == 2 and out.count("--simulate") == 1   # row, reason


def test_unstable_is_inf_in_json(capsys):
    assert main(["--policy", "random", "--rate", "1.5", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["stable"] is False and row["mean"] == "inf"


@pytest.mark.parametrize("scale", ["1e-300", "1e300"])
def test_extreme_slowdown_scales_give_the_unit_answer(capsys, tmp_path, scale):
    # Only X * S matters: slowdowns {1, 2} * 10^(+-300) with the default E[X] = 1/E[S] give the
    # runtime of slowdowns {1, 2}.
    answers = []
    for factor in ("1", scale):
        path = tmp_path / f"s{factor}.csv"
        path.write_text(f"{factor}\n{2 * float(factor)!r}\n")
        assert main(["--S", str(path), "--policy", "riq", "--d", "2", "--rate", "0.5",
                     "--format", "json"]) == 0
        answers.append(json.loads(capsys.readouterr().out)["rows"][0])
    assert answers[1]["mean"] == pytest.approx(answers[0]["mean"], rel=1e-12)
    assert answers[1]["p99"] == pytest.approx(answers[0]["p99"], rel=1e-9)


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BAD = [
    (["--S", "no_such_file.csv"], "--S", "neither a built-in"),
    (["--S", "google"], "--S", "facebook"),
    (["--S", "{dir}"], "--S", "directory"),
    (["--S", "{zero}"], "--S", "> 0"),
    (["--S", "{text}"], "--S", "cannot read"),
    (["--size-mean", "0"], "--size-mean", "> 0"),
    (["--size-mean", "-1"], "--size-mean", "> 0"),
    (["--size-mean", "abc"], "--size-mean", "numbers"),
    (["--size-mean", "1e-320"], "--size-mean", "beyond the floats"),
    (["--policy", ""], "--policy", "at least one"),
    (["--policy", " , "], "--policy", "at least one"),
    (["--policy", "bogus"], "--policy", "unknown policy"),
    (["--policy", "mds:x"], "--policy", "integer"),
    (["--d", ""], "--d", "at least one"),
    (["--d", "5-1"], "--d", "empty"),
    (["--d", "0"], "--d", ">= 1"),
    (["--d", "a"], "--d", "integers"),
    # found by a fuzzing helper: 4 GB then "internal error (MemoryError)"; silently accepted
    (["--d", "1-100000000"], "--d", "too large"),
    (["--d", "100001"], "--d", "<= 100000"),
    (["--policy", "mds:"], "--policy", "give the number after ':'"),
    (["--policy", "threshold:"], "--policy", "give the number after ':'"),
    (["--policy", "riq,"], "--policy", "an empty item"),
    (["--rate", "0.5,,0.6"], "--rate", "an empty item"),
    (["--rate", ""], "--rate", "at least one"),
    (["--rate", "x"], "--rate", "comma-separated numbers"),
    (["--rate", "-0.5"], "--rate", "> 0"),
    (["--rate", "nan"], "--rate", "finite"),
    (["--rate", "1e400"], "--rate", "finite"),
    (["--quantiles", "1.5"], "--quantiles", "(0, 1)"),
    (["--X", "weird"], "--X", "unknown size distribution"),
    (["--X", "erlang:x"], "--X", "erlang:K"),
    (["--X", "pareto:0.5"], "--X", "ALPHA > 1"),
    (["--X", "hyperexp:abc"], "--X", "must be a number"),
    (["--servers", "2", "--policy", "riq", "--d", "3"], "--servers", ">= 3"),
    (["--servers", "x"], "--servers", "integer"),
    (["--simulate", "--jobs", "0"], "--jobs", ">= 1"),
    (["--simulate", "--replications", "1"], "--replications", ">= 2"),
    (["--seed", "-1"], "--seed", ">= 0"),
    (["--model", "foo"], "--model", "invalid choice"),
    (["--format", "xml"], "--format", "invalid choice"),
]


@pytest.mark.parametrize("args, option, message", BAD, ids=[" ".join(a[0]) for a in BAD])
def test_bad_arguments_one_line_naming_the_option(args, option, message, capsys, tmp_path):
    (tmp_path / "adir").mkdir()
    files = {"dir": str(tmp_path / "adir"), "zero": _write(tmp_path, "zero.csv", "0\n0\n"),
             "text": _write(tmp_path, "text.csv", "a\nb\nc\n")}
    args = [a.format(**files) for a in args]
    with pytest.raises(SystemExit) as exc:
        main(args + (["--rate", "0.5"] if "--rate" not in args else []))
    assert exc.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == ""
    assert option in lines[0] and message in lines[0]
    for internal in ("qt.", "simulate=True", "probs", "arrival_rate", "Traceback"):
        assert internal not in lines[0]


def test_extreme_size_is_an_answer_or_one_line(capsys):
    # E[X] = 1e-300 stresses the moments of the job size: either a table or a one-line
    # failure naming the options to change, never a traceback
    try:
        code = main(["--size-mean", "1e-300", "--policy", "riq", "--d", "2", "--rate", "0.5",
                     "--format", "json"])
    except SystemExit as exc:
        code = exc.code
        err = capsys.readouterr().err.strip().splitlines()
        assert code != 0 and len(err) == 1 and "--size-mean" in err[0]
    else:
        assert code == 0 and json.loads(capsys.readouterr().out)["rows"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"queuetheory {qt.__version__}"


def test_module_help_and_error_without_traceback():
    done = subprocess.run([sys.executable, "-m", "queuetheory", "--help"], capture_output=True,
                          text=True, check=True)
    assert "--policy" in done.stdout and "--simulate" in done.stdout
    done = subprocess.run([sys.executable, "-m", "queuetheory", "--S", "google"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_slowdowns_too_wide_for_the_floats_name_the_option(capsys, tmp_path):
    # 1e-300 and 1e300 brought to mean 1 (the documented rescaling) put the smallest at 0: the
    # error named S's internal rule ("S must be > 0 with probability 1") without the option
    path = _write(tmp_path, "wide.csv", "1e-300\n1e300\n")
    with pytest.raises(SystemExit) as exc:
        main(["--S", path, "--policy", "riq", "--d", "2", "--rate", "0.5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code != 0 and len(err) == 1 and "--S: the slowdowns span" in err[-1]


def test_warnings_are_one_line_each_without_a_file(capsys):
    # the finite-k gap of RedundancyD(2) on 10 servers at load 0.6 (its simulated map: +12%):
    # "queuetheory: warning: ..." on standard error, once, not Python's two lines naming
    # compare.py and its source line
    assert main(["--policy", "redundancy", "--d", "2", "--rate", "0.6", "--servers", "10"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("queuetheory: warning: the k -> infinity limit")
    assert ".py" not in err[0]
