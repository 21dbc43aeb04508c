"""Speed of order statistics and of the MDS / replication analysis (issue 5).

Run: ``python benchmarks/bench_orderstats.py``. Prints the time per call and, where a closed form
exists, the relative error against it; ``--slowdowns`` only the S&X analysis with a continuous
slowdown, its quantiles over ``S`` from the table of the fixed pieces
(``quadrature._quantiles_on_pieces``) and computed at every piece (as before), side by side (CPU
seconds, one call each).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import queuetheory as qt
from queuetheory.analysis import batch_law
from queuetheory.orderstats import OrderStatistic


def _timed(fn, repeat: int = 3):
    value = fn()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return value, best


def main() -> None:
    print("Identical variables, n = 1000 (incomplete beta path):")
    for r in (1, 500, 1000):
        law = OrderStatistic(qt.Uniform(0.0, 1.0), r, 1000)
        value, t = _timed(lambda law=law: OrderStatistic(law.base, law.r, law.n).mean())
        print(f"  Uniform mean, r = {r:4d}: {t * 1e3:7.1f} ms, rel. error vs r/(n+1) "
              f"{abs(value - r / 1001) / (r / 1001):.1e}")
        law = OrderStatistic(qt.Erlang(1, 1.0), r, 1000)
        exact = qt.orderstats.exponential_mean(r, 1000, 1.0)
        value, t = _timed(lambda law=law: OrderStatistic(law.base, law.r, law.n).mean())
        print(f"  Exp mean by quadrature, r = {r:4d}: {t * 1e3:7.1f} ms, rel. error vs harmonic "
              f"{abs(value - exact) / exact:.1e}")
    law = OrderStatistic(qt.Exponential(1.0), 500, 1000)
    _, t = _timed(lambda: law.cdf(np.linspace(0.0, 2.0, 10_000)))
    print(f"  cdf at 10^4 points: {t * 1e3:.1f} ms")

    print("Non-identical variables, n = 1000 (Poisson-binomial DP):")
    dists = [qt.Exponential(1.0 + 0.01 * i) for i in range(1000)]
    for r in (1, 500):
        law = OrderStatistic(dists, r)
        _, t = _timed(lambda law=law: law.cdf(np.linspace(0.0, 1.0, 100)), 1)
        value, tm = _timed(lambda r=r: OrderStatistic(dists, r).mean(), 1)
        print(f"  r = {r:3d}: cdf at 100 points {t * 1e3:7.1f} ms, mean {tm:5.2f} s")

    print("MDS / replication without removal, k -> infinity (analysis incl. the mean):")
    S = qt.slowdowns.facebook()
    sx = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    for policy, lam in ((qt.MDS(10, 2, remove=False), 0.5),
                        (qt.Replication(10, 2, remove=False), 0.4)):
        for model in (qt.IR(qt.Exponential(1.0)), qt.IR(qt.Erlang(2, 2.0)), sx):
            system = qt.System(policy, model, lam)
            p, t = _timed(lambda system=system: qt.analyze(system), 5)
            _, tq = _timed(lambda system=system: qt.analyze(system).quantile(0.99), 5)
            tq -= t  # the quantile alone, on a fresh prediction (no cached state)
            runtime = repr(model.R) if isinstance(model, qt.IR) else "S&X Facebook"
            print(f"  {policy.label():34s} {runtime:26s} mean {p.mean:8.4f} in {t:6.3f} s; "
                  f"99th pct {p.quantile(0.99):8.4f} in {tq:6.3f} s")


def _every_piece(law, lo, hi, levels, table, rules, rule=None, min_width=0.0,
                 posinf: float = np.finfo(float).max):
    """``quadrature._quantiles_on_pieces`` without its table: every piece computed (one rule, as
    ``batch_law`` uses it)."""
    u = 0.5 * (lo + hi)[..., None] + 0.5 * (hi - lo)[..., None] * rules[0][0]
    return np.nan_to_num(law._ppf_all(np.clip(u, 0.0, 1.0)), posinf=posinf)


def slowdowns() -> None:
    """S&X with a continuous slowdown, no removal: a point (mean and p99) with the quantiles
    over ``S`` of the fixed pieces from their table and with every piece computed (arrival
    rate 0.4, ``E[X S] = 1``: task loads 0.5, 0.4 and 0.8)."""
    print("S&X, continuous slowdown, no removal: point (mean and p99), CPU s, one call each")
    table = batch_law._quantiles_on_pieces
    for name, S in (("S Erlang(2, 2)", qt.Erlang(2, 2.0)), ("S Uniform(0.5, 1.5)",
                                                         qt.Uniform(0.5, 1.5))):
        runtime = qt.SX(qt.Exponential(1.0), S)
        for policy in (qt.MDS(4, 1, remove=False), qt.MDS(4, 0, remove=False),
                       qt.Replication(3, 2, remove=False)):
            row = []
            for quantiles in (table, _every_piece):
                batch_law._quantiles_on_pieces = quantiles
                start = time.process_time()
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=0.4))
                p.mean, p.quantile(0.99)
                row.append(time.process_time() - start)
            batch_law._quantiles_on_pieces = table
            print(f"  exp X, {name:20s} {policy.label():34s} table {row[0]:6.2f} s  every "
                  f"piece {row[1]:6.2f} s  ratio {row[1] / row[0]:5.1f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slowdowns", action="store_true",
                        help="only S&X with a continuous slowdown, table vs every piece")
    if parser.parse_args().slowdowns:
        slowdowns()
    else:
        main()
        slowdowns()
