"""Speed of the calculator (issue 2): RIQ mean, a 99th percentile, and a 1000-point sweep.

Run: ``python benchmarks/bench_calculator.py``. Prints the time per call after warm-up and the
relative error of the fast 99th percentile against the 30-digit mpmath inversion.
"""

from __future__ import annotations

import time

import numpy as np

import queuetheory as qt


def _per_call(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def main() -> None:
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    print("RIQ mean, Facebook S (12 points), exponential X, lam = 0.7, after warm-up:")
    for d in (1, 2, 3, 5, 10):
        system = qt.System(qt.RIQ(d), model, arrival_rate=0.7)
        t = _per_call(lambda system=system: qt.analyze(system).mean, 2000)
        print(f"  d = {d:2d}: {t * 1e6:7.1f} us per call")

    print("RIQ 99th percentile (fast path, its stated error), and the 30-digit mpmath inversion "
          "where the law has one (RIQ with d > 1 has none: its fixed point is a float root):")
    for d in (1, 3, 5, 10):
        system = qt.System(qt.RIQ(d), model, arrival_rate=0.7)
        fast, stated = qt.analyze(system).response_time.ppf(0.99, full_output=True)
        t = _per_call(lambda system=system: qt.analyze(system).quantile(0.99), 20)
        start = time.perf_counter()
        try:
            ref = qt.analyze(system).quantile(0.99, precision=30)   # an mpmath.mpf
            versus = (f"relative error {float(abs(fast - ref) / ref):.1e} (mpmath: "
                      f"{time.perf_counter() - start:.1f} s)")
        except (NotImplementedError, ValueError) as error:
            versus = f"no 30-digit value ({type(error).__name__})"
        print(f"  d = {d:2d}: {t * 1e3:6.2f} ms per call, p99 = {fast:.10g}, stated relative "
              f"error {stated / fast:.1e}, {versus}")

    rates = np.linspace(0.05, 0.95, 100)
    points = [(float(r), d) for r in rates for d in range(1, 11)]
    start = time.perf_counter()
    for rate, d in points:
        _ = qt.analyze(qt.System(qt.RIQ(d), model, arrival_rate=rate)).mean
    print(f"Sweep of {len(points)} (arrival_rate, d) points, RIQ mean: "
          f"{time.perf_counter() - start:.3f} s in all")


if __name__ == "__main__":
    main()
