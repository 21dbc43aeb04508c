"""Speed of the Redundancy-d analysis: IR exponential closed forms and mean-field solves.

Run from the repository root: ``python benchmarks/bench_redundancy.py``. The Newton systems are
solved by an O(n^2) Hessenberg elimination (no multithreaded BLAS factorisation); one BLAS
thread is still requested so the figures do not depend on other users of the machine.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time  # noqa: E402

from scipy import stats  # noqa: E402

import queuetheory as qt  # noqa: E402
from queuetheory.analysis import meanfield, redundancy  # noqa: E402


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    print("IR exponential closed forms (best of 2000 calls):")
    for name, fn in [
        ("mean, k -> inf, d = 10", lambda: redundancy.ir_exponential_mean(0.9, 1.0, 10)),
        ("tail at one t, d = 10", lambda: redundancy.ir_exponential_sf(1.0, 0.9, 1.0, 10)),
        ("exact mean, k = 1000", lambda: redundancy.ir_exponential_finite_mean(0.9, 1.0, 10,
                                                                               1000)),
    ]:
        print(f"  {name:28s} {_best(fn, 2000) * 1e6:8.1f} us")
    S = qt.slowdowns.facebook()
    model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    print("Mean-field solve (Richardson pair N/2, N), Facebook S, exponential X:")
    for lam, d in [(0.6, 3), (0.7, 5), (0.5, 10), (0.45, 20)]:
        t = time.perf_counter()
        r = meanfield.solve_extrapolated(model, d, lam)
        el = time.perf_counter() - t
        print(f"  lam={lam:4} d={d:2}  E[T]={r.mean:.6f}  (N={r.fine.grid.size - 1}, "
              f"stated error {r.mean_error:.1e})  {el:6.3f} s")
    print("qt.analyze including the stability decision (frontier cache cleared; best of 3, "
          "wall and CPU):")
    for lam, d in [(0.6, 3), (0.7, 5), (0.5, 10), (0.45, 20), (0.7, 10), (0.66, 10)]:
        best = (float("inf"), float("inf"))
        for _ in range(3):
            redundancy._frontier_and_error.cache_clear()
            t, c = time.perf_counter(), time.process_time()
            p = qt.analyze(qt.System(qt.RedundancyD(d), model, lam))
            best = min(best, (time.perf_counter() - t, time.process_time() - c))
        print(f"  lam={lam:4} d={d:2}  stable={p.stable!s:5}  wall {best[0]:6.3f} s  "
              f"CPU {best[1]:6.3f} s")
    print("Stability frontier (continuation + pinned front, Richardson):")
    for d in (3, 10, 20):
        t = time.perf_counter()
        lam_star = meanfield.frontier(model, d)
        print(f"  d={d:2}  lam*={lam_star:.5f}  {time.perf_counter() - t:6.3f} s")
    print("Continuous X and S, d = 2: qt.analyze, mean and p99 (best of 2, CPU):")
    for name, runtime, lam in [
        ("Exp x Exp", qt.SX(qt.Exponential(1.0), qt.Exponential(1.0)), 0.3),
        ("Exp x Uniform(1, 3)", qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 3.0)), 0.2),
        ("Erlang(2) x lognormal", qt.SX(qt.Erlang(2, 2.0), qt.from_scipy(stats.lognorm(0.5))),
         0.3),
        ("HyperExp x Exp", qt.SX(qt.HyperExponential([0.9, 0.1], [2.0, 0.2]),
                                 qt.Exponential(1.0)), 0.25),
    ]:
        best = float("inf")
        for _ in range(2):
            c = time.process_time()
            p = qt.analyze(qt.System(qt.RedundancyD(2), runtime, lam))
            p99 = p.quantile(0.99)
            best = min(best, time.process_time() - c)
        print(f"  {name:22s} E[T]={p.mean:.6f} (stated error {p.errors['mean']:.1e})  "
              f"p99={p99:.5f}  CPU {best:6.3f} s")


if __name__ == "__main__":
    main()
