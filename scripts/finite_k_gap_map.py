"""Measure the finite-k gap of the k -> infinity analyses by simulation.

For every policy whose analysis is the k -> infinity limit (RIQ, Redundancy-d mean-field,
MDS and batch Replication without removal), two runtime models (S&X with the Facebook
slowdowns and exponential X; IR exponential), four loads and k = 10, 30, 100, 300 servers,
this script simulates the finite system (12 independent replications) and writes the relative
gap (simulated - limit) / limit of the mean and the 99th percentile, with the 95% interval of
the simulated value turned into an interval of the gap, to
``queuetheory/data/finite_k_gap.csv``. ``qt.analyze`` reads that file to decide whether to
emit ``qt.AccuracyWarning`` (see ``queuetheory/analysis/finite_k.py``). A row names its
policy by label (for reading) and by the key ``qt.analyze`` looks up: the registered name
(``family``) and the dataclass fields (``parameters``, JSON).

Run from the repository root (13 minutes wall-clock, niced, on a shared 2-core machine; an
optional argument names another output file)::

    nice python scripts/finite_k_gap_map.py
"""

from __future__ import annotations

import csv
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import queuetheory as qt  # noqa: E402
from queuetheory.analysis.finite_k import policy_columns  # noqa: E402

OUT = ROOT / "queuetheory" / "data" / "finite_k_gap.csv"
SEED = 20261130
LOADS = (0.3, 0.5, 0.7, 0.9)
SERVERS = (10, 30, 100, 300)
REPLICATIONS = 12
FIELDS = ["policy", "family", "parameters", "runtime", "polled", "servers", "load", "jobs",
          "warmup", "replications", "seed", "verdict", "limit_mean", "sim_mean", "gap_mean",
          "gap_mean_low", "gap_mean_high", "limit_p99", "sim_p99", "gap_p99", "gap_p99_low",
          "gap_p99_high"]


def runtimes():
    S = qt.slowdowns.facebook()
    return {"sx-facebook": qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
            "ir-exponential": qt.IR(qt.Exponential(1.0))}


def policies(runtime_key):
    out = [qt.RIQ(d) for d in (2, 3, 5, 10)]
    if runtime_key == "sx-facebook":  # IR exponential Redundancy-d has an exact finite-k mean
        out += [qt.RedundancyD(d) for d in (2, 3, 5, 10)]
    out += [qt.MDS(n, m, remove=False) for n, m in ((2, 1), (4, 2), (8, 2))]
    out += [qt.Replication(n, d, remove=False) for n, d in ((2, 2), (4, 2))]
    return out


def main():
    fields = FIELDS
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for key, runtime in runtimes().items():
            for policy in policies(key):
                for load in LOADS:
                    rate = load / runtime.mean_runtime()
                    limit = qt.analyze(qt.System(policy, runtime, arrival_rate=rate))
                    if not limit.stable:
                        continue
                    limit_p99 = limit.quantile(0.99)
                    for k in SERVERS:
                        if k < policy.polled:
                            continue
                        begin = time.perf_counter()
                        jobs = (20_000 + 100 * k) * (2 if load >= 0.8 else 1)
                        warmup = max(jobs // 2, math.ceil(20 * k / (1 - load)))
                        sim = qt.simulate(qt.System(policy, runtime, arrival_rate=rate),
                                          servers=k, jobs=jobs, replications=REPLICATIONS,
                                          warmup=warmup, seed=SEED)
                        row = {"policy": policy.label(), **policy_columns(policy),
                               "runtime": key, "polled": policy.polled,
                               "servers": k, "load": load, "jobs": jobs, "warmup": warmup,
                               "replications": REPLICATIONS, "seed": SEED,
                               "verdict": sim.verdict, "limit_mean": limit.mean,
                               "limit_p99": limit_p99}
                        if sim.verdict != "stable":
                            # unstable: the finite system has no finite mean (gap inf);
                            # inconclusive: no gap measured (nan)
                            gap = math.inf if sim.verdict == "unstable" else math.nan
                            row.update({f"{name}{stat}{suffix}": gap
                                        for name in ("sim_", "gap_") for stat in ("mean", "p99")
                                        for suffix in ("", "_low", "_high")
                                        if f"{name}{stat}{suffix}" in fields})
                            writer.writerow(row)
                            print(f"{policy.label():32s} {key:15s} load {load} k {k:4d}: "
                                  f"{sim.verdict}: {sim.stability}", flush=True)
                            continue
                        row.update({"sim_mean": sim.mean, "sim_p99": sim.quantile(0.99)})
                        for stat, value, interval in (("mean", limit.mean, sim.mean_ci),
                                                      ("p99", limit_p99, sim.quantile_ci(0.99))):
                            low, high = interval
                            row[f"gap_{stat}"] = row[f"sim_{stat}"] / value - 1
                            row[f"gap_{stat}_low"] = low / value - 1
                            row[f"gap_{stat}_high"] = high / value - 1
                        writer.writerow({f: (f"{row[f]:.6g}" if isinstance(row[f], float)
                                             else row[f]) for f in fields})
                        handle.flush()
                        print(f"{policy.label():32s} {key:15s} load {load} k {k:4d}: gap mean "
                              f"{100 * row['gap_mean']:+.2f}% p99 {100 * row['gap_p99']:+.2f}% "
                              f"({time.perf_counter() - begin:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
