"""The ``queuetheory`` command line: predicted latency tables from the formulas and simulation.

Run ``python -m queuetheory --help``. With no arguments it prints, for the built-in Facebook
slowdowns and exponential job sizes with ``E[X] E[S] = 1``, the mean, 95th and 99th percentile
response times of Random and RIQ with d = 1..5 at loads 0.3, 0.5 and 0.7, and the method used.

Every error is one line on stderr naming the option at fault, with exit status 2 (bad input)
or 1 (a failure of the computation); never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from . import __version__, _checks, slowdowns
from .compare import Comparison, compare
from .distributions import (
    Deterministic,
    Discrete,
    Distribution,
    Erlang,
    Exponential,
    HyperExponential,
    Pareto,
    Uniform,
)
from .policies import from_name, known_names
from .runtime import IR, SX

__all__ = ["main", "build_parser"]


class _OptionError(ValueError):
    """Bad input, attributed to the command-line option the user typed."""

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")


def _items(option: str, text: str) -> list[str]:
    """The comma-separated items of ``text``; an empty one (``0.5,,0.6``, ``riq,``) is an
    error, not skipped."""
    parts = [v.strip() for v in text.split(",")]
    if any(parts) and not all(parts):
        raise _OptionError(option, f"an empty item in {text!r} (items are separated by one "
                                   f"comma)")
    return parts if any(parts) else []


def _floats(option: str, text: str) -> list[float]:
    parts = _items(option, text)
    if not parts:
        raise _OptionError(option, "give at least one number, e.g. 0.5 or 0.3,0.5,0.7")
    try:
        values = [float(v) for v in parts]
    except ValueError:
        raise _OptionError(option, f"expected comma-separated numbers, got {text!r}") from None
    if not all(math.isfinite(v) for v in values):
        raise _OptionError(option, f"numbers must be finite, got {text!r}")
    return values


_MAX_VALUES = 1000
"""Most values an integer option (``--d``) takes: each is a row of the table (``--d
1-100000000`` had filled 4 GB before failing)."""


def _ints(option: str, text: str) -> list[int]:
    """``"1-5"`` or ``"1,2,10"`` -> a list of positive integers."""
    out: list[int] = []
    try:
        for part in _items(option, text):
            if "-" in part[1:]:
                lo, hi = (int(v) for v in part.split("-", 1))
                if lo > hi:
                    raise _OptionError(option, f"range {part} is empty (write low-high with "
                                               f"low <= high, e.g. 1-5)")
                if hi - lo >= _MAX_VALUES or hi > _checks.MAX_POLLED:
                    raise _OptionError(option, f"range {part} is too large (at most "
                                               f"{_MAX_VALUES} values, each <= "
                                               f"{_checks.MAX_POLLED})")
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
    except ValueError as exc:
        if isinstance(exc, _OptionError):
            raise
        raise _OptionError(option, f"expected integers like 1-5 or 1,2,10, got {text!r}") \
            from None
    if not out:
        raise _OptionError(option, "give at least one integer, e.g. 2 or 1-5")
    if min(out) < 1 or max(out) > _checks.MAX_POLLED or len(out) > _MAX_VALUES:
        raise _OptionError(option, f"values must be integers >= 1 and <= "
                                   f"{_checks.MAX_POLLED} (at most {_MAX_VALUES} of them), got "
                                   f"{text!r}")
    return out


def _size(spec: str, mean: float) -> Distribution:
    """Job-size distribution from a short spec (``--X``), scaled to the given mean."""
    name, _, arg = spec.partition(":")
    name = name.strip().lower()
    try:
        if name in ("exp", "exponential"):
            return Exponential(1.0 / mean)
        if name in ("det", "deterministic"):
            return Deterministic(mean)
        if name == "erlang":
            k = int(arg or 2) if (arg or "2").strip().isdigit() else 0
            if k < 1:
                raise ValueError(f"erlang:K needs an integer K >= 1, got {arg}")
            return Erlang(k, k / mean)
        if name in ("hyperexp", "hyperexponential"):
            scv = float(arg or 4.0)
            if not scv > 1 or not math.isfinite(scv):
                raise ValueError(f"hyperexp:SCV needs a finite SCV > 1, got {arg}")
            p = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
            return HyperExponential([p, 1.0 - p], [2.0 * p / mean, 2.0 * (1.0 - p) / mean])
        if name == "pareto":
            alpha = float(arg or 2.5)
            if not alpha > 1 or not math.isfinite(alpha):
                raise ValueError(f"pareto:ALPHA needs ALPHA > 1 for a finite mean, got {arg}")
            return Pareto(alpha, mean * (alpha - 1.0) / alpha)
        if name == "uniform":
            return Uniform(0.0, 2.0 * mean)
    except (ValueError, ArithmeticError) as exc:
        text = str(exc)
        if text.startswith("could not convert"):
            text = f"the number after ':' in {spec!r} must be a number"
        raise _OptionError("--X", text) from None
    raise _OptionError("--X", f"unknown size distribution {spec!r}; use exponential, "
                              f"deterministic, erlang:K, hyperexp:SCV, pareto:ALPHA or uniform")


def _slowdown(spec: str) -> Discrete:
    """The ``--S`` slowdowns: a built-in name or a CSV file of positive samples."""
    if spec.strip().lower() in slowdowns.available():
        return slowdowns.by_name(spec.strip().lower())
    if os.path.isdir(spec):
        raise _OptionError("--S", f"{spec!r} is a directory; give a CSV file of slowdown "
                                  f"samples or a built-in name "
                                  f"({', '.join(slowdowns.available())})")
    if not os.path.exists(spec):
        raise _OptionError("--S", f"{spec!r} is neither a built-in slowdown distribution "
                                  f"({', '.join(slowdowns.available())}) nor an existing file")
    try:
        S = Discrete.from_samples(spec)
    except (ValueError, OSError) as exc:
        raise _OptionError("--S", f"cannot read slowdowns from {spec!r}: {exc}") from None
    if not S.values[0] > 0:
        raise _OptionError("--S", f"slowdowns must be > 0 (a slowdown of 0 is an infinitely "
                                  f"fast server); {spec!r} holds {S.values[0]:g}")
    return S


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``queuetheory`` command."""
    parser = _Parser(
        prog="queuetheory",
        description="Predicted response times of server farms with redundancy, from the "
                    "formulas (k -> infinity limit unless --servers is given) and, with "
                    "--simulate, from simulation with confidence intervals.",
        epilog="Example: queuetheory --policy riq --d 1-5 --rate 0.5,0.7 --format json")
    parser.add_argument("--version", action="version", version=f"queuetheory {__version__}")
    parser.add_argument("--policy", default="random,riq",
                        help=f"comma-separated: {', '.join(known_names(note=True))} "
                             f"(default: random,riq)")
    parser.add_argument("--d", default="1-5",
                        help="degrees of redundancy, e.g. 1-5 or 2,5,10 (default 1-5)")
    parser.add_argument("--rate", default="0.3,0.5,0.7",
                        help="arrival rates per server, comma-separated (default 0.3,0.5,0.7)")
    parser.add_argument("--model", choices=["sx", "ir"], default="sx",
                        help="runtime model: sx (X*S, X shared by replicas) or ir (independent "
                             "runtimes X*S per replica); default sx")
    parser.add_argument("--X", dest="size", default="exponential",
                        help="job size: exponential, deterministic, erlang:K, hyperexp:SCV, "
                             "pareto:ALPHA, uniform (default exponential)")
    parser.add_argument("--size-mean", type=str, default=None,
                        help="mean job size E[X] > 0 (default 1/E[S], so that E[X] E[S] = 1)")
    parser.add_argument("--S", dest="slowdown", default="facebook",
                        help="slowdown: a built-in name (facebook) or a CSV file of samples > 0 "
                             "(only the runtime X*S matters: if E[S] is outside 1e-6..1e6, S "
                             "is rescaled to mean 1 and X takes the scale)")
    parser.add_argument("--remove", choices=["yes", "no"], default=None,
                        help="mds:N and replication:N: cancel the redundant tasks when the "
                             "batch (job) completes (default yes)")
    parser.add_argument("--servers", type=str, default=None,
                        help="number of servers k: exact finite-k methods where they exist, and "
                             "the simulated farm (default: k -> inf; 1000 for --simulate)")
    parser.add_argument("--simulate", action="store_true",
                        help="add Monte Carlo rows (95%% confidence intervals in brackets) "
                             "beside the analysis")
    parser.add_argument("--jobs", type=str, default="200000",
                        help="simulated jobs per replication (default 200000)")
    parser.add_argument("--replications", type=str, default="8",
                        help="independent simulation replications, >= 2 (default 8)")
    parser.add_argument("--seed", type=str, default="0", help="simulation seed (default 0)")
    parser.add_argument("--workers", type=str, default=None,
                        help="simulate in this many processes (large runs only)")
    parser.add_argument("--quantiles", default="0.95,0.99",
                        help="response-time quantiles to print, each in (0, 1) "
                             "(default 0.95,0.99)")
    parser.add_argument("--format", choices=["table", "json", "csv"], default="table",
                        help="output: an aligned table (default), JSON with the run's "
                             "metadata, or CSV at full precision")
    return parser


def _integer(option: str, text: str | None, minimum: int) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise _OptionError(option, f"expected an integer >= {minimum}, got {text!r}") from None
    if value < minimum:
        raise _OptionError(option, f"expected an integer >= {minimum}, got {value}")
    return value


#: Mean slowdowns outside this range are rescaled to 1 (the job size takes the scale).
_SCALE_RANGE = (1e-6, 1e6)

#: Parameter names of the Python API -> the option that sets them.
_OPTIONS = {"arrival_rate": "--rate", "servers": "--servers", "jobs": "--jobs",
            "replications": "--replications", "seed": "--seed", "quantiles": "--quantiles",
            "workers": "--workers", "d": "--d", "runtime": "--size-mean"}


def _run(args) -> tuple[Comparison, dict]:
    names = _items("--policy", args.policy)
    if not names:
        raise _OptionError("--policy", "give at least one policy, e.g. random,riq")
    for name in names:
        try:
            from_name(name)
        except ValueError as exc:
            raise _OptionError("--policy", str(exc)) from None
    d = _ints("--d", args.d)
    rates = _floats("--rate", args.rate)
    if min(rates) <= 0:
        raise _OptionError("--rate", f"arrival rates must be > 0, got {args.rate!r}")
    quantiles = _floats("--quantiles", args.quantiles)
    if not all(0 < q < 1 for q in quantiles):
        raise _OptionError("--quantiles", f"levels must lie in (0, 1), got {args.quantiles!r}")
    S = _slowdown(args.slowdown)
    if args.size_mean is None:
        size_mean = 1.0 / S.mean()
    else:
        (size_mean,) = _floats("--size-mean", args.size_mean)
        if not size_mean > 0:
            raise _OptionError("--size-mean", f"must be > 0, got {args.size_mean!r}")
    # Only X * S matters: slowdowns of an extreme scale are brought to mean 1 and their scale
    # moved into X, so that 1e-300 or 1e300 slowdowns give the same answer as 1 or 2.
    scale = S.mean()
    if not _SCALE_RANGE[0] <= scale <= _SCALE_RANGE[1]:
        values = S.values / scale
        if not np.all(values > 0):
            raise _OptionError("--S", f"the slowdowns span {S.values.min():g} to "
                                      f"{S.values.max():g}, more than floats hold once brought "
                                      f"to mean 1 (the smallest become 0)")
        S, size_mean = Discrete(values, S.probs), size_mean * scale
    if not math.isfinite(1.0 / size_mean) or not math.isfinite(size_mean):
        # the job size's rate 1 / mean leaves the floats: said of the option the user typed
        # (it had been "--X: rate must be a finite number > 0, got inf" for 1e-320)
        raise _OptionError("--size-mean", f"the mean job size {size_mean:g} (times the mean "
                                          f"slowdown) is beyond the floats; choose a time unit "
                                          f"nearer the runtimes")
    X = _size(args.size, size_mean)
    runtime = SX(X, S) if args.model == "sx" else IR(SX(X, S).replica())
    options = {"servers": _integer("--servers", args.servers, 1),
               "jobs": _integer("--jobs", args.jobs, 1),
               "replications": _integer("--replications", args.replications, 2),
               "seed": _integer("--seed", args.seed, 0),
               "workers": _integer("--workers", args.workers, 1)}
    remove = None if args.remove is None else args.remove == "yes"
    try:
        table = compare(runtime, rates, policies=names, d=d, quantiles=quantiles,
                        simulate=args.simulate, remove=remove, **options)
    except ValueError as exc:
        raise _attributed(exc) from None
    for row in table.rows:
        if row.get("note"):
            row["method"], row["note"] = _refusal(row["policy"], row["note"]), ""
    metadata = {"queuetheory": __version__, "policy": args.policy, "d": d,
                "arrival_rates": rates, "model": args.model, "X": args.size,
                "size_mean": size_mean, "S": args.slowdown, "mean_slowdown": scale,
                "runtime": repr(runtime), "remove": remove, "quantiles": quantiles,
                "servers": options["servers"], "simulate": args.simulate,
                "methods": sorted({r["method"] for r in table.rows})}
    if args.simulate:
        metadata |= {"jobs": options["jobs"], "replications": options["replications"],
                     "seed": options["seed"], "confidence": table.confidence}
    return table, metadata


def _refusal(policy: str, reason: str) -> str:
    """The analysis's reason for refusing (a tail too heavy for the grid, a policy without an
    analysis, ...) in the options of this command."""
    reason = (reason.strip().removesuffix(".").replace("qt.simulate(system)", "--simulate")
              .replace("qt.simulate", "--simulate")
              .replace("qt.analyze with remove=False", "--remove no"))
    if reason.startswith(policy):          # "MDS(n=4, m=2) with removal: ..."
        reason = f"no analysis of {reason}"
    elif not reason.startswith("no analysis"):
        reason = f"no analysis of {policy}: {reason}"
    return reason if "--simulate" in reason else f"{reason}; rerun with --simulate"


def _attributed(exc: ValueError) -> _OptionError:
    """An error of the Python API, attributed to the option that set the parameter."""
    text = str(exc)
    for name, option in _OPTIONS.items():
        if text.startswith(name + " ") or text.startswith(name + ":"):
            return _OptionError(option, text[len(name):].lstrip(": "))
    return _OptionError("input", text)


def _table(table: Comparison) -> str:
    methods = sorted({r["method"] for r in table.rows if r["method"] != "simulation"})
    return "\n".join([str(table), ""] + ["method: " + m for m in methods])


def _json_value(value):
    """Strict JSON has no infinity: an infinite time is written as the string "inf"."""
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return "inf" if math.isinf(value) else float(value)
    return value


def _report(caught: list, prog: str) -> None:
    """The warnings of a run on standard error, one line each and each once (``prog: warning:
    message``), not Python's two lines naming a file of the package."""
    seen = set()
    for record in caught:
        text = f"{prog}: warning: {record.message}"
        if text not in seen:
            seen.add(text)
            print(text, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``queuetheory`` and ``python -m queuetheory``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            table, metadata = _run(args)
        _report(caught, parser.prog)
    except ValueError as exc:
        parser.error(str(exc))
    except ArithmeticError as exc:
        parser.exit(1, f"{parser.prog}: error: the computation failed at these time scales "
                       f"({type(exc).__name__}); choose --S, --X and --size-mean so that the "
                       f"mean runtime is not extreme\n")
    except NotImplementedError as exc:
        parser.exit(1, f"{parser.prog}: error: {exc}\n")
    except KeyboardInterrupt:
        parser.exit(130, f"{parser.prog}: interrupted\n")
    except Exception as exc:  # one line, never a traceback; the type helps a bug report
        parser.exit(1, f"{parser.prog}: internal error ({type(exc).__name__}: {exc}); please "
                       f"report it with the command line\n")
    if args.format == "json":
        rows = [{k: _json_value(v) for k, v in r.items()} for r in table.rows]
        text = json.dumps({"metadata": {k: _json_value(v) for k, v in metadata.items()},
                           "rows": rows}, indent=2) + "\n"
    elif args.format == "csv":
        text = table.to_csv()
    else:
        text = _table(table) + "\n"
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

