"""Throughput of :func:`queuetheory.simulate`, and a comparison with Ciw.

1. RIQ(d=5) on k = 1000 servers, S&X runtimes with the Facebook slowdowns and exponential X
   (E[X] E[S] = 1), load 0.7: simulated jobs per second on one core (warm-up jobs included,
   since they are simulated too), for 32 and 128 replications run in lock-step.
2. k = 10 M/M/1 queues fed by random routing (load 0.7): the mean response time from the same
   number of jobs with queuetheory and with Ciw (``pip install ciw``; skipped if missing),
   with the exact value 1 / (mu - lam) = 3.3333 beside both.

Jobs per second are reported per CPU second of this process (``time.process_time``) and per
wall-clock second: on a shared machine the first is the fairer figure for "one core".

Run from the repository root::

    python -m benchmarks.bench_simulation            # full sizes
    python -m benchmarks.bench_simulation --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import time

import queuetheory as qt


def _timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def bench_riq(jobs: int, replications: int) -> None:
    S = qt.slowdowns.facebook()
    system = qt.System(qt.RIQ(d=5), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
                       arrival_rate=0.7)
    sim, wall, cpu = _timed(lambda: qt.simulate(system, servers=1000, jobs=jobs,
                                                replications=replications, seed=1,
                                                progress=False))
    total = replications * (sim.jobs + sim.warmup)
    low, high = sim.mean_ci
    print(f"RIQ(d=5), k=1000, S&X Facebook, load 0.7: {replications} replications x "
          f"({sim.jobs} + {sim.warmup} warm-up) jobs = {total:,} jobs")
    print(f"    {total / cpu:>12,.0f} jobs per CPU second   {total / wall:>12,.0f} jobs per "
          f"wall second   (mean {sim.mean:.4f} [{low:.4f}, {high:.4f}])")


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
    riq_jobs = 20_000 if args.quick else 100_000
    for replications in (32, 128):
        bench_riq(riq_jobs, replications)
    bench_ciw(20_000 if args.quick else 200_000)


if __name__ == "__main__":
    main()
