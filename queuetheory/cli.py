"""The ``queuetheory`` command line: predicted latency tables from the formulas.

Run ``python -m queuetheory --help``. With no arguments it prints, for the built-in Facebook
slowdowns and exponential job sizes with ``E[X] E[S] = 1``, the mean, 95th and 99th percentile
response times of Random and RIQ with d = 1..5 at loads 0.3, 0.5 and 0.7, and the method used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from . import slowdowns
from .compare import compare
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
from .export import text_table
from .runtime import IR, SX

__all__ = ["main", "build_parser"]


def _floats(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") \
            from None


def _ints(text: str) -> list[int]:
    """``"1-5"`` or ``"1,2,10"`` -> a list of integers."""
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part.strip()[1:]:
                lo, hi = part.split("-")
                out.extend(range(int(lo), int(hi) + 1))
            elif part.strip():
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 1-5 or 1,2,10, got {text!r}") \
            from None
    return out


def _size(spec: str, mean: float) -> Distribution:
    """Job-size distribution from a short spec, scaled to the given mean."""
    name, _, arg = spec.partition(":")
    name = name.lower()
    if name in ("exp", "exponential"):
        return Exponential(1.0 / mean)
    if name in ("det", "deterministic"):
        return Deterministic(mean)
    if name == "erlang":
        k = int(arg or 2)
        return Erlang(k, k / mean)
    if name in ("hyperexp", "hyperexponential"):
        scv = float(arg or 4.0)
        if scv <= 1:
            raise ValueError(f"hyperexponential SCV must be > 1, got {scv}")
        p = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
        return HyperExponential([p, 1.0 - p], [2.0 * p / mean, 2.0 * (1.0 - p) / mean])
    if name == "pareto":
        alpha = float(arg or 2.5)
        if alpha <= 1:
            raise ValueError(f"pareto alpha must be > 1 for a finite mean, got {alpha}")
        return Pareto(alpha, mean * (alpha - 1.0) / alpha)
    if name == "uniform":
        return Uniform(0.0, 2.0 * mean)
    raise ValueError(f"unknown size distribution {spec!r}; use exponential, "
                     f"deterministic, "
                     f"erlang:K, hyperexp:SCV, pareto:ALPHA or uniform")


def _slowdown(spec: str) -> Distribution:
    if spec.lower() in slowdowns.available():
        return slowdowns.by_name(spec)
    return Discrete.from_samples(spec)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``queuetheory`` command."""
    parser = argparse.ArgumentParser(
        prog="queuetheory",
        description="Predicted response times of server farms with redundancy, from the "
                    "formulas (k -> infinity limit unless --servers is given).",
        epilog="Example: queuetheory --policy riq --d 1-5 --rate 0.5,0.7 --format json")
    parser.add_argument("--policy", default="random,riq",
                        help="comma-separated: random, riq, redundancy, threshold:N, mds:N "
                             "(m = d), replication:N (default: random,riq)")
    parser.add_argument("--d", type=_ints, default=[1, 2, 3, 4, 5],
                        help="degrees of redundancy, e.g. 1-5 or 2,5,10 (default 1-5)")
    parser.add_argument("--rate", type=_floats, default=[0.3, 0.5, 0.7],
                        help="arrival rates per server, comma-separated (default 0.3,0.5,0.7)")
    parser.add_argument("--model", choices=["sx", "ir"], default="sx",
                        help="runtime model: sx (X*S, X shared by replicas) or ir (independent "
                             "runtimes X*S per replica); default sx")
    parser.add_argument("--X", dest="size", default="exponential",
                        help="job size: exponential, deterministic, erlang:K, hyperexp:SCV, "
                             "pareto:ALPHA, uniform (default exponential)")
    parser.add_argument("--size-mean", type=float, default=None,
                        help="mean job size E[X] (default 1/E[S], so that E[X] E[S] = 1)")
    parser.add_argument("--S", dest="slowdown", default="facebook",
                        help="slowdown: a built-in name (facebook) or a CSV file of samples")
    parser.add_argument("--servers", type=int, default=None,
                        help="number of servers k: exact finite-k methods where they exist, and "
                             "the simulated farm (default: k -> inf; 1000 for --simulate)")
    parser.add_argument("--simulate", action="store_true",
                        help="add Monte Carlo rows (95%% confidence intervals) beside the analysis")
    parser.add_argument("--jobs", type=int, default=200_000,
                        help="simulated jobs per replication (default 200000)")
    parser.add_argument("--replications", type=int, default=8,
                        help="independent simulation replications (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="simulation seed (default 0)")
    parser.add_argument("--quantiles", type=_floats, default=[0.95, 0.99],
                        help="response-time quantiles to print (default 0.95,0.99)")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    return parser


def _rows(args) -> list[dict]:
    S = _slowdown(args.slowdown)
    mean_size = args.size_mean if args.size_mean is not None else 1.0 / S.mean()
    X = _size(args.size, mean_size)
    runtime = SX(X, S) if args.model == "sx" else IR(SX(X, S).replica())
    names = [p.strip() for p in args.policy.split(",") if p.strip()]
    rows = []
    for rate in args.rate:
        table = compare(runtime, rate, policies=names, d=args.d, quantiles=args.quantiles,
                        servers=args.servers, simulate=args.simulate, jobs=args.jobs,
                        replications=args.replications, seed=args.seed)
        load = rate * runtime.mean_runtime()
        rows += [{"arrival_rate": rate, "load": load, **row} for row in table.rows]
    return rows


def _table(rows: list[dict], quantiles: Sequence[float]) -> str:
    cols = (["policy", "arrival_rate", "load", "source", "stable", "mean"]
            + [f"p{100 * q:g}" for q in quantiles] + ["cost"])
    methods = sorted({r["method"] for r in rows if r["method"] != "simulation"})
    return "\n".join([text_table(rows, cols), ""] + ["method: " + m for m in methods])


def _json_value(value):
    """Strict JSON has no infinity: an infinite time is written as the string "inf"."""
    return "inf" if isinstance(value, float) and math.isinf(value) else value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``queuetheory`` and ``python -m queuetheory``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rows = _rows(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.format == "json":
        print(json.dumps([{k: _json_value(v) for k, v in r.items()} for r in rows], indent=2))
    else:
        print(_table(rows, args.quantiles))
    return 0


if __name__ == "__main__":
    sys.exit(main())
