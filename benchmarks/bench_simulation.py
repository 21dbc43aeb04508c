"""Throughput of :func:`queuetheory.simulate` (numpy and numba engines), and Ciw.

1. RIQ(d=5) on k = 1000 servers, S&X runtimes with the Facebook slowdowns and exponential X
   (E[X] E[S] = 1), load 0.7, measured side by side in one run: jobs per second (warm-up jobs
   included, since they are simulated too) of the numpy engine with one replication per task
   and with 32 and 128 replications in lock-step, and of the numba engine with one replication
   per task, on one process and with ``workers=2``; the ratios the compiled kernel is judged
   by; its first-call time (compiling, or loading numba's on-disk cache); traced peak memory
   (``tracemalloc``) at two run lengths.
2. k = 10 M/M/1 queues fed by random routing (load 0.7): the mean response time from the same
   number of jobs with queuetheory and with Ciw (``pip install ciw``; skipped if missing),
   with the exact value 1 / (mu - lam) = 3.3333 beside both.

Jobs per second are reported per CPU second of this process (``time.process_time``) and per
wall-clock second: on a shared machine the first is the fairer figure for "one core"; runs
with worker processes are reported per wall second only.

Run from the repository root::

    python -m benchmarks.bench_simulation            # full sizes
    python -m benchmarks.bench_simulation --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import queuetheory as qt
from queuetheory.simulation import engine

ROOT = Path(__file__).resolve().parents[1]


def _timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def _riq_system():
    S = qt.slowdowns.facebook()
    return qt.System(qt.RIQ(d=5), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
                     arrival_rate=0.7, servers=1000)


def _riq_run(jobs: int, replications: int, **kw):
    """Rates of one run: (jobs per CPU second, jobs per wall second, result)."""
    sim, wall, cpu = _timed(lambda: qt.simulate(_riq_system(), jobs=jobs,
                                                replications=replications, seed=1,
                                                progress=False, **kw))
    total = replications * (sim.jobs + sim.warmup)
    low, high = sim.mean_ci
    per_cpu = "(in workers)" if "workers" in kw else f"{total / cpu:>12,.0f}"
    print(f"    {kw.get('engine', 'auto'):>5} {replications:>4} replications, "
          f"tasks={kw.get('tasks', 1)}, workers={kw.get('workers', 1)}: {total:>11,} jobs "
          f"{per_cpu} jobs/CPU s {total / wall:>12,.0f} jobs/wall s   "
          f"(mean {sim.mean:.4f} [{low:.4f}, {high:.4f}])")
    return total / cpu, total / wall, sim


_FIRST_CALL = """
import time
import numba
import queuetheory as qt
t = time.perf_counter()
S = qt.slowdowns.facebook()
system = qt.System(qt.RIQ(d=5), qt.SX(X=qt.Exponential(rate=S.mean()), S=S), arrival_rate=0.7)
qt.simulate(system, servers=1000, jobs=100, replications=2, warmup=0, seed=1, engine="numba")
print(time.perf_counter() - t)
"""


def _first_call() -> str:
    """A first tiny numba simulation in a fresh process (numba and queuetheory imported):
    with an empty numba cache (compiling the RIQ kernel), then with the cache it left."""
    seconds = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                            os.environ.get("PYTHONPATH")])))
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, check=True,
                                 capture_output=True, text=True).stdout
            seconds.append(float(out))
    return f"{seconds[0]:.2f} s compiling, {seconds[1]:.2f} s from numba's cache"


def _peak_memory(jobs: int) -> float:
    """Traced peak memory (MB) of a one-replication-per-task numba run of ``jobs`` jobs."""
    tracemalloc.start()
    qt.simulate(_riq_system(), jobs=jobs, replications=2, tasks=2, warmup=0, seed=1,
                engine="numba", progress=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def bench_riq(jobs: int) -> None:
    print(f"RIQ(d=5), k=1000, S&X Facebook, load 0.7 ({os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at the start)")
    if not engine.numba_available():
        print("    numba not installed (pip install 'queuetheory[fast]'): numpy engine only")
        for replications in (32, 128):
            _riq_run(jobs, replications, engine="numpy")
        return
    print(f"    first numba simulation in a fresh process: {_first_call()}")
    qt.simulate(_riq_system(), jobs=100, replications=2, warmup=0, seed=1, engine="numba")
    one_numpy = _riq_run(jobs // 10, 2, engine="numpy", tasks=2)[0]
    lockstep = max(_riq_run(jobs, replications, engine="numpy")[0]
                   for replications in (32, 128))
    one_numba = _riq_run(10 * jobs, 2, engine="numba", tasks=2)[0]
    serial_cpu, serial, _ = _riq_run(10 * jobs, 4, engine="numba", tasks=2)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, parallel, sim = _riq_run(10 * jobs, 4, engine="numba", tasks=2, workers=2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    worker_rate = 4 * (sim.jobs + sim.warmup) / worker_cpu
    print(f"    numba, one replication per task: {one_numba / one_numpy:.1f}x the numpy "
          f"engine's one-replication rate, {one_numba / lockstep:.1f}x its best lock-step "
          f"rate (per CPU second)")
    print(f"    workers=2: {parallel / serial:.2f}x one process per wall second (process "
          f"start-up included; meaningful only on otherwise idle cores); the workers used "
          f"{serial_cpu / worker_rate:.2f}x the CPU time per job of one process "
          f"(load average now {os.getloadavg()[0]:.2f})")
    small, large = 10 * jobs, 100 * jobs
    print(f"    traced peak memory, numba: {_peak_memory(small):.2f} MB at {small:,} jobs, "
          f"{_peak_memory(large):.2f} MB at {large:,} jobs per replication")


def _ciw_mean(jobs: int, lam: float, k: int) -> float:
    import ciw

    ciw.seed(1)
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=lam) for _ in range(k)],
        service_distributions=[ciw.dists.Exponential(rate=1.0) for _ in range(k)],
        number_of_servers=[1] * k,
        routing=[[0.0] * k for _ in range(k)])  # Poisson thinning: independent streams
    simulation = ciw.Simulation(network)
    simulation.simulate_until_max_customers(jobs, method="Finish")
    records = simulation.get_all_records()
    return sum(r.waiting_time + r.service_time for r in records) / len(records), len(records)


def bench_ciw(jobs: int) -> None:
    lam, k = 0.7, 10
    system = qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), arrival_rate=lam)
    replications = 8
    sim, wall, cpu = _timed(lambda: qt.simulate(system, servers=k, jobs=jobs // replications,
                                                replications=replications, warmup=0,
                                                seed=1, progress=False))
    ours = replications * sim.jobs
    print(f"k={k} M/M/1 queues, random routing, load {lam}: mean response time from "
          f"{ours:,} jobs (exact {1 / (1 - lam):.4f})")
    print(f"    queuetheory: mean {sim.observed_mean:.4f}  {ours / cpu:>12,.0f} jobs per CPU "
          f"second  {ours / wall:>12,.0f} per wall second")
    try:
        import ciw  # noqa: F401
    except ImportError:
        print("    Ciw: not installed (pip install ciw), comparison skipped")
        return
    (mean, done), wall_c, cpu_c = _timed(lambda: _ciw_mean(jobs, lam, k))
    print(f"    Ciw:         mean {mean:.4f}  {done / cpu_c:>12,.0f} jobs per CPU "
          f"second  {done / wall_c:>12,.0f} per wall second")
    print(f"    speed-up: {(ours / cpu) / (done / cpu_c):,.0f}x (CPU), "
          f"{(ours / wall) / (done / wall_c):,.0f}x (wall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    args = parser.parse_args()
    bench_riq(20_000 if args.quick else 100_000)
    bench_ciw(20_000 if args.quick else 200_000)


if __name__ == "__main__":
    main()
