""":func:`simulate`: argument checks, seeding, fan-out of the replications over an Executor."""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed

import numpy as np

from .. import _checks, _progress
from ..system import System
from . import engine as _engine
from .result import SimulationResult
from .warmup import WarmupChoice, choose_warmup

__all__ = ["simulate"]

#: ``workers=N`` splits the replications over processes only in groups of at least this many:
#: lock-step replications are nearly free, so smaller groups lose more than a second core
#: gains. Measured serially (RIQ(3), Facebook S&X, k = 100, 20,000 jobs): 4, 8, 16, 32 and 64
#: replications took 0.98, 1.11, 1.36, 2.12 and 3.45 s; 8 replications x 200,000 jobs took
#: 3.3 s serially and 6.6 s with workers=2.
MIN_LANES_PER_TASK = 32


MAX_JOBS = 10**13
"""Most jobs (and warm-up jobs) per replication :func:`simulate` takes (about a day's run)."""
MAX_REPLICATIONS = 10**6
"""Most replications :func:`simulate` takes."""

def simulate(system: System, servers: int | None = None, jobs: int = 100_000,
             replications: int = 32, seed: int | None = None, *, warmup: int | None = None,
             workers: int | None = None, executor: Executor | None = None,
             tasks: int | None = None, progress: bool | None = None, samples: bool = False,
             confidence: float = 0.95, engine: str = "auto") -> SimulationResult:
    """Simulate ``system`` exactly: ``k`` FCFS servers with cancel-on-complete.

    Every policy of the package is simulated event by event with the exact state of
    FCFS + cancel-on-complete (as in [1]): a job's completion time is fixed at its
    arrival, so a server is described by the time its assigned work runs out (and, for
    THRESHOLD-n, the leaving times of the jobs it holds). Under S&X a job's size ``X`` is drawn
    once and shared by its replicas, and the slowdown ``S`` once per replica; for the batch
    policies a batch is one computation cut into ``n`` equal-sized jobs, so one ``X`` is shared
    by all the coded jobs (MDS) or all the copies of all the jobs (Replication) of a batch.
    Under IR every replica, coded job or copy draws its own runtime.

    * **Random**: one server, solved per block by the Lindley recursion (servers decouple).
    * **RIQ(d)**: replicas to the idle polled servers, else one polled server at random.
    * **Threshold(d, n)**: replicas to the polled servers holding at most ``n`` jobs (jobs
      counted at the arrival instant, cancelled replicas gone), else one polled server at
      random.
    * **RedundancyD(d)**: replicas on all ``d``; the first to finish cancels the others.
    * **MDS(n, m)**: ``n + m`` coded jobs; the batch completes at the ``n``-th finish; with
      ``remove=True`` the other coded jobs are then cancelled (queued ones removed, running
      ones stopped), with ``remove=False`` all ``n + m`` run to the end.
    * **Replication(n, d)**: ``d`` copies of each of ``n`` jobs (``n d`` distinct servers); a
      job completes at its first copy; ``remove=True`` cancels that job's other copies at that
      moment, ``remove=False`` cancels nothing (every copy runs fully). The batch completes at
      its last job.

    For batch policies the reported time is the batch completion time (batch arrival to the
    completion of its ``n``-th job) and the cost is per original job.

    Parameters
    ----------
    system : System
        Policy, runtime model, arrival rate per server and (optionally) interarrival shape.
    servers : int, optional
        Number of servers ``k``; defaults to ``system.servers``. Must be >= the servers one
        arrival uses (``policy.polled``).
    jobs : int
        Original jobs measured per replication (>= 1; batch policies: rounded up to whole
        batches).
    replications : int
        Independent replications (>= 2): the confidence intervals come from their spread.
    seed : int, optional
        Root seed. Replication ``i`` draws from the ``i``-th child of
        ``numpy.random.SeedSequence(seed)``, so a seed gives the same numbers on any machine
        and with any number of workers or tasks. ``None``: fresh entropy (kept in
        ``result.seed``).
    warmup : int, optional
        Original jobs simulated and discarded at the start of every replication (the system
        starts empty). Default: chosen by a statistical rule, twice the MSER truncation point
        (White 1997) of a pilot run from the empty system, at least ``10 k / (1 - rho)``;
        the pilot costs a quarter of the measured jobs (up to half for fewer than 8 replications;
        at most as much as the measured jobs when it is repeated at twice the length); see
        Notes. ``result.warmup`` and ``result.warmup_method`` report it.
    workers : int, optional
        Run the replications in up to this many processes (``ProcessPoolExecutor``), keeping
        at least :data:`MIN_LANES_PER_TASK` (32) replications per process unless ``tasks`` is
        given: fewer replications run serially, which is faster (see the constant).
    executor : concurrent.futures.Executor, optional
        Run the replications through this executor instead (not together with ``workers``).
    tasks : int, optional
        Split the replications into this many tasks (default: ``workers``, the executor's
        ``_max_workers`` if it has one, else one task per replication). Replications of one
        task run in lock-step (faster per job); the numbers do not depend on the split.
    progress : bool, optional
        Show a progress bar (tqdm: jobs done, rate, ETA) on stderr. Default: only when stderr
        is a terminal.
    samples : bool
        Keep every measured response time in ``result.samples`` (memory grows with ``jobs``;
        without it, memory does not).
    confidence : float
        Level of the confidence intervals, in (0, 1); default 0.95.
    engine : {"auto", "numpy", "numba"}
        Which kernels apply the update rules: ``"numpy"`` (portable, replications in
        lock-step), ``"numba"`` (compiled, ``pip install 'queuetheory[fast]'``; measured on
        RIQ(5), k = 1000: one replication tens of times faster than with numpy, and about
        three times numpy's rate with 128 replications in lock-step; see
        ``benchmarks/bench_simulation.py``) or ``"auto"`` (numba when it can be imported,
        decided in every worker process). Both engines
        consume the same random draws with the same arithmetic: the results are
        bit-identical, so the choice changes the speed only.

    Returns
    -------
    SimulationResult
        Mean, quantiles, cost and busy fraction with confidence intervals, and a stability
        verdict.

    Notes
    -----
    *Speed.* With the numba engine every replication runs as a compiled loop; with numpy, the
    replications of a task advance in lock-step, as the rows of numpy arrays:
    one Python step moves every replication by one arrival, touching only the polled servers;
    random numbers are drawn in blocks of 4096 arrivals. More replications per task means
    more jobs per second. Random routing is solved in closed form block by block.

    *Memory.* Statistics are streamed: per replication the sums, ten segment means (for the
    trend check) and a histogram with 1000 log-spaced bins per decade (relative width
    0.23 %) from ``1e-6`` to ``1e8`` times the mean runtime, from which quantiles are read
    with geometric interpolation (resolution about 0.12 %).

    *Warm-up.* Unless ``warmup`` is given, a pilot of ``P = max(min(4, R), ceil(R / 8))``
    replications (``R = replications``) of ``L = max(R n / (4 P), n / 2)`` jobs (``n = jobs``)
    is simulated from the empty system; MSER on 100 batch means of its averaged response
    times gives the truncation point ``d`` (the end of the transient) and the warm-up is
    ``2 d``, but at least ``10 k / (1 - rho)`` (``rho`` the load, capped at 0.95: relaxation
    slows like ``1 / (1 - rho)``, and MSER on a noisy pilot can miss a slow drift). If ``d``
    lies beyond the pilot's first quarter, the pilot is repeated at length ``2 L`` while the
    pilots' total stays within ``R n`` jobs; a truncation still beyond the first quarter is
    reported in ``warmup_method`` (the transient may be longer). The pilot draws from its
    own branch of the seed and does not depend on workers or tasks, so the numbers stay
    reproducible. As the warm-up depends on the system, runs of different policies with one
    seed are paired arrival by arrival (common random numbers) only if they are given the
    same ``warmup``. A system unstable by a known load bound gets no warm-up. The fixed rule
    used before, ``max(n / 4, 10 k / (1 - rho))``, was too short at high variance (RIQ(3),
    S&X hyperexponential X, k = 1000, load 0.68: 31,251 jobs, while the transient lasts
    about 45,000 jobs and left the mean 3.4 % low).

    *Stability.* A run is reported unstable (``stable=False``, ``mean = inf``, with the reason
    in ``result.stability``) when Random or RIQ run at load >= 1, or when the response times
    trend upward through the measured window: the per-replication least-squares slopes of the
    ten segment means are significantly positive (one-sided Student t test at level 1e-4)
    and the fitted rise exceeds 10 % of the mean.

    *Clusters.* Any ``concurrent.futures.Executor`` works, including dask.distributed's:
    ``with Client("tcp://scheduler:8786") as client: qt.simulate(system, servers=1000,
    jobs=10**7, replications=256, seed=1, executor=client.get_executor(), tasks=64)``.
    The replications are split into ``tasks`` groups, each sent to a worker as one task
    (queuetheory must be importable on the workers); every group's result is a few small
    arrays per replication, merged on the client. Because replication ``i`` always draws from
    the ``i``-th child of the root ``SeedSequence``, the numbers are identical to a local run
    with the same seed, whatever the cluster size or split. Use at least as many tasks as
    worker cores, and a few replications per task so the lock-step vectorisation pays off.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> system = qt.System(qt.RIQ(d=3), qt.SX(X=qt.Exponential(rate=S.mean()), S=S),
    ...                    arrival_rate=0.7)
    >>> sim = qt.simulate(system, servers=50, jobs=2000, replications=4, seed=1)
    >>> sim.stable, sim.replications, sim.jobs
    (True, 4, 2000)
    >>> low, high = sim.quantile_ci(0.99)
    >>> bool(0 < low <= sim.quantile(0.99) <= high)
    True

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, IEEE/ACM
       Transactions on Networking 25(6), 2017 (S&X model, RIQ, exact FCFS state).
    .. [2] D. V. Lindley, "The theory of queues with a single server", Proc. Cambridge Philos.
       Soc. 48(2), 1952 (the recursion used for Random routing).
    .. [3] K. P. White Jr., "An effective truncation heuristic for bias reduction in
       simulation output", Simulation 69(6), 323-334, 1997 (MSER, the default warm-up).
    """
    if not isinstance(system, System):
        raise ValueError(f"system must be a qt.System, got {system!r}")
    if servers is None:
        if system.servers is None:
            raise ValueError("servers must be given (an integer >= the polled servers), "
                             "either here or as System(servers=...)")
        servers = system.servers
    servers = _checks.positive_int("servers", servers)
    system = system.replace(servers=servers)  # System checks servers >= policy.polled
    # (bounds far beyond any run that ends: 2**70 had raised OverflowError, or run on)
    jobs = _checks.positive_int("jobs", jobs, maximum=MAX_JOBS)
    replications = _checks.positive_int("replications", replications, minimum=2,
                                        maximum=MAX_REPLICATIONS)
    if warmup is not None:
        warmup = _checks.positive_int("warmup", warmup, minimum=0, maximum=MAX_JOBS)
    samples = _checks.boolean("samples", samples)
    if progress is not None:
        progress = _checks.boolean("progress", progress)
    level = float(_checks.probability_level("confidence", confidence))
    if workers is not None and executor is not None:
        raise ValueError("give workers or executor, not both")
    if workers is not None:
        workers = _checks.positive_int("workers", workers)
    if executor is not None and not isinstance(executor, Executor):
        raise ValueError(f"executor must be a concurrent.futures.Executor, got {executor!r}")
    _engine.resolve_engine(engine)  # the name, and numba if it is asked for
    _check_runtimes(system)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    else:
        seed = _checks.positive_int("seed", seed, minimum=0)
    if tasks is None:
        if workers is not None:
            tasks = max(1, min(workers, replications // MIN_LANES_PER_TASK))
            workers = None if tasks == 1 else workers  # serial: no process pool to start
        elif executor is not None:
            tasks = getattr(executor, "_max_workers", None) or replications
        else:
            tasks = 1
    tasks = min(_checks.positive_int("tasks", tasks), replications)

    batch = system.policy.batch
    measured = -(-jobs // batch)
    wanted = _progress.wanted(progress)
    execution = {"seed": seed, "tasks": tasks, "workers": workers, "executor": executor}
    if warmup is None:
        def pilot(arrivals: int, segments: int, lanes: list[int]) -> np.ndarray:
            spec = _engine.Spec(system, 0, arrivals, False, engine, segments=segments)
            return _execute(spec, lanes, "warm-up pilot" if wanted else None,
                            **execution).segments

        choice = choose_warmup(system, measured, replications, pilot)
    else:
        choice = WarmupChoice(-(-warmup // batch), "given")
    spec = _engine.Spec(system, choice.arrivals, measured, samples, engine)
    begin = time.perf_counter()
    raw = _execute(spec, list(range(replications)), "simulating" if wanted else None,
                   **execution)
    elapsed = time.perf_counter() - begin
    return SimulationResult(system, raw, jobs=spec.measured_arrivals * batch,
                            warmup=spec.warm_arrivals * batch, seed=seed, confidence=level,
                            elapsed=elapsed, warmup_method=choice.describe(batch))


def _execute(spec, lanes: list[int], title: str | None, *, seed: int, tasks: int,
             workers: int | None, executor: Executor | None) -> _engine.LaneStatistics:
    """Simulate the replications ``lanes`` in ``tasks`` groups (at most one per lane),
    serially, through ``executor`` or in ``workers`` processes, with a progress bar titled
    ``title`` (none if ``None``); their statistics merged in lane order."""
    groups = [list(map(int, g)) for g in np.array_split(np.asarray(lanes),
                                                         min(tasks, len(lanes)))]
    total = len(lanes) * (spec.warm_arrivals + spec.measured_arrivals) * spec.batch
    bar = _progress.Bar(total, title, scale=spec.batch) if title is not None else None
    try:
        if workers is None and executor is None:
            parts = [_engine.run_lanes(spec, seed, g, bar and bar.advance) for g in groups]
        elif executor is not None:
            parts = _fan_out(executor, spec, seed, groups, bar)
        else:
            parts = _in_processes(workers, spec, seed, groups, bar)
    finally:
        if bar is not None:
            bar.close()
    return _engine.LaneStatistics.merge(parts)


def _check_runtimes(system: System) -> None:
    """Reject inputs the engine cannot simulate, naming the parameter."""
    shape = system.interarrival
    if shape is not None:
        mean = shape.mean()
        if not (math.isfinite(mean) and mean > 0):
            raise ValueError(f"interarrival must have a finite mean > 0, got mean {mean!r}")


def _fan_out(executor: Executor, spec, seed: int, groups,
             bar) -> list[_engine.LaneStatistics]:
    """Run the groups as tasks of ``executor``; on any exception or interrupt (e.g. Ctrl-C or
    a Jupyter "interrupt kernel") the tasks not yet started are cancelled."""
    futures = {executor.submit(_engine.run_lanes, spec, seed, g): len(g) for g in groups}
    try:
        for future in as_completed(futures):
            if bar is not None:
                bar.advance(futures[future] * (spec.warm_arrivals + spec.measured_arrivals))
        return [future.result() for future in futures]
    except BaseException:
        for future in futures:
            future.cancel()
        raise


def _in_processes(workers: int, spec, seed: int, groups,
                  bar) -> list[_engine.LaneStatistics]:
    """Run the groups in a pool of ``workers`` local processes. If the parent is interrupted
    while they run (only the parent receives the interrupt in Jupyter), the workers are
    terminated at once instead of finishing their tasks."""
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        parts = _fan_out(pool, spec, seed, groups, bar)
    except BaseException:
        _terminate(pool)
        raise
    pool.shutdown()
    return parts


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a process pool now: cancel its queue and kill its workers."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()

