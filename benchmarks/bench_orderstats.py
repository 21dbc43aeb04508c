"""Speed of order statistics and of the MDS / replication analysis (issue 5).

Run: ``python benchmarks/bench_orderstats.py``. Prints the time per call and, where a closed form
exists, the relative error against it.
"""

from __future__ import annotations

import math
import time

import numpy as np

import queuetheory as qt
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


if __name__ == "__main__":
    main()
