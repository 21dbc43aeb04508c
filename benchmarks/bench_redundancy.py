"""Speed of the Redundancy-d analysis: IR exponential closed forms and mean-field solves.

Run from the repository root: ``python benchmarks/bench_redundancy.py`` (``--paths`` for only
the table of the two mean-field solvers side by side: the level-crossing grid of
Replication(1, d) with removal, which ``analyze`` uses for IR runtimes and discrete slowdowns,
and the cavity grid it replaced there; CPU of ``analyze`` plus p99 and the stated errors). The
cavity grid's Newton systems are solved by an O(n^2) Hessenberg elimination (no multithreaded
BLAS factorisation); one BLAS thread is still requested so the figures do not depend on other
users of the machine.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
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
            redundancy._frontier_remembered.cache_clear()
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


def paths():
    """CPU seconds of ``analyze`` plus p99 (best of 2, frontier cache cleared) and the stated
    relative errors of the mean and p99, by the level-crossing grid (``analyze``'s path for IR
    runtimes and discrete slowdowns) and by the cavity grid (forced), side by side."""
    S = qt.slowdowns.facebook()
    cases = [("IR Erlang(2, 2)", qt.IR(qt.Erlang(2, 2.0)), 2, 0.5),
             ("IR Deterministic(1)", qt.IR(qt.Deterministic(1.0)), 2, 0.6),
             ("IR Uniform(0.5, 1.5)", qt.IR(qt.Uniform(0.5, 1.5)), 2, 0.6),
             ("IR HyperExp [.9,.1],[2,.25]",
              qt.IR(qt.HyperExponential([0.9, 0.1], [2.0, 0.25])), 2, 0.5),
             ("S&X Exp(1.9) x {1, 10}",
              qt.SX(qt.Exponential(1.9), qt.Discrete([1.0, 10.0], [0.9, 0.1])), 2, 0.4),
             ("S&X facebook", qt.SX(qt.Exponential(rate=S.mean()), S), 3, 0.6),
             ("S&X facebook", qt.SX(qt.Exponential(rate=S.mean()), S), 10, 0.5)]
    crossing = redundancy._crossing_applies
    print("Redundancy-d mean-field: level-crossing grid vs cavity grid (CPU s of analyze + p99, "
          "best of 2; stated relative errors of the mean and p99)")
    for name, model, d, lam in cases:
        row = []
        for path in ("crossing", "cavity"):
            redundancy._crossing_applies = crossing if path == "crossing" else (lambda m: False)
            best = float("inf")
            for _ in range(2):
                redundancy._frontier_remembered.cache_clear()
                c = time.process_time()
                p = qt.analyze(qt.System(qt.RedundancyD(d), model, lam))
                p99 = p.quantile(0.99)
                best = min(best, time.process_time() - c)
            row.append((best, p.errors["mean"] / p.mean,
                        p.response_time.quantile_error(0.99) / p99))
        redundancy._crossing_applies = crossing
        (t1, m1, q1), (t2, m2, q2) = row
        print(f"  {name:28s} d={d:2} lam={lam:4}  crossing {t1:6.3f} s (mean {m1:.1e}, p99 "
              f"{q1:.1e})  cavity {t2:6.3f} s (mean {m2:.1e}, p99 {q2:.1e})", flush=True)


if __name__ == "__main__":
    if "--paths" not in sys.argv:
        main()
    paths()
