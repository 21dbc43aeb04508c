"""Speed of the MDS/Replication analysis with removal (mean-field level-crossing equation).

Run from the repository root: ``python benchmarks/bench_removal.py`` (``--paths`` for only the
numpy-versus-numba table, ``--matching`` for ``smallest_matching_code`` with its first pass
and without, ``--frontier`` for stability frontiers with their grids refined for the runtime's
fastest part and without, ``--unstable`` for points beyond the stability frontier (CPU and marches),
``--continuous`` for S&X with continuous slowdowns (phase-type and piecewise-linear ones also
by the history's march), ``--jobsize`` for S&X hyperexponential job
sizes as ``HyperExponential`` (Newton quantiles, compiled and numpy) and as the same ``Mixture``
(the generic search), ``--rule`` for the rule over a continuous ``X`` at 12 nodes per piece
and at 8 (with its fallback to 12), ``--shots`` for the refined grids of a continuous job size
and slowdown shot in one march against Newton's steps, and the fallback to 12 nodes solved on
the first solve's grids against from scratch, ``--blocks`` for the tables of ``X`` nodes
computed in blocks and in one pass, ``--quantiles`` for the quantiles of continuous slowdowns
with ``P(C > t)`` of every ``X`` node in one call and per node, ``--parities`` for MDS
with more than 32 parities, ``phi`` by the Horner sum and by ``betainc`` only, ``--split``
for S&X continuous job sizes times kinked slowdowns, ``P(C > t)`` over the rule split at the
kinks and over the fixed nodes, ``--between``
for IR runtimes on atoms, and S&X products of a job size on atoms and the slowdowns, without a
common step, placed exactly or first order; and the bends of a job size whose density jumps).
Goals (issue #10): one analysed point (mean and p99) within 200 ms
for n + m <= 30; a stability frontier within 2 s; ``smallest_matching_code(..., remove=True)``
well under 1 s for n <= 20. Best of 3, wall and CPU time (the CPU figure is the one to read on
a shared machine). The S&X march is compiled with numba when it is installed
(``pip install 'queuetheory[fast]'``): one S&X point runs first to compile it, or load it from
numba's cache, a one-off cost of about 0.5 s per process that the figures below leave out.
The last table times the numpy path (numba hidden) and the numba path side by side in one run,
for IR and S&X runtimes with the Facebook slowdowns and far-apart slowdowns (``S`` in {1, 10}
w.p. 0.9, 0.1) at n + m = 5, 12, 30; the table before it the same for IR runtimes whose grids
are refined to ``4 * 4096`` cells (high variance, long tails).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import queuetheory as qt  # noqa: E402
from queuetheory import codematch  # noqa: E402
from queuetheory.analysis import GOAL, removal  # noqa: E402


def _best(fn, repeat=3):
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - t, time.process_time() - c))
    return best


def paths():
    """CPU seconds of a point (mean and p99, best of 3) and of a frontier (one call), numpy path
    and numba path of the S&X march, side by side (IR has no compiled path: one column)."""
    compiled = removal.numba
    facebook, far = qt.slowdowns.facebook(), qt.Discrete([1, 10], [0.9, 0.1])
    laws = {"IR, R = facebook S": qt.IR(facebook), "IR, R = S in {1, 10}": qt.IR(far),
            "S&X, exp X, facebook S": qt.SX(qt.Exponential(facebook.mean()), facebook),
            "S&X, exp X, S in {1, 10}": qt.SX(qt.Exponential(far.mean()), far)}
    print("numpy path vs numba path (CPU s; point best of 3 at load 0.5 / E[R], frontier once)")
    print(f"  {'runtime':26s} {'policy':16s} {'point numpy':>11s} {'numba':>7s} "
          f"{'frontier numpy':>14s} {'numba':>7s}")
    for name, runtime in laws.items():
        lam = 0.5 / runtime.mean_runtime()
        sx = isinstance(runtime, qt.SX)
        for policy in (qt.MDS(4, 1), qt.MDS(10, 2), qt.MDS(20, 10)):
            row = []
            for what in ("point", "frontier"):
                for path in ("numpy", "numba") if sx and compiled is not None else ("numpy",):
                    removal.numba = compiled if path == "numba" else None
                    if what == "point":
                        def point(policy=policy, lam=lam, runtime=runtime):
                            p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                            return p.mean, p.quantile(0.99)

                        row.append(_best(point)[1])
                    else:
                        row.append(_best(lambda runtime=runtime, policy=policy:
                                         qt.stability_frontier(runtime, policy), 1)[1])
                if len(row) % 2:
                    row.append(float("nan"))
            removal.numba = compiled
            print(f"  {name:26s} {policy.label():16s} {row[0]:11.3f} {row[1]:7.3f} "
                  f"{row[2]:14.3f} {row[3]:7.3f}", flush=True)


def ir_paths():
    """CPU seconds of a point (mean and p99, best of 3) under IR runtimes whose grids are
    refined to ``4 * 4096`` cells (high variance, long tails), numpy path and numba path of the
    IR march side by side (the numpy march's history sums are a blocked FFT convolution)."""
    compiled = removal.numba
    cases = (("HyperExp [.95,.05],[1.9,.1]",
              qt.HyperExponential([0.95, 0.05], [1.9, 0.1]), qt.MDS(4, 2), 0.5),
             ("HyperExp [.9,.1],[2,.25]",
              qt.HyperExponential([0.9, 0.1], [2.0, 0.25]), qt.MDS(4, 2), 0.5),
             ("Pareto(2.5, 0.6)", qt.Pareto(2.5, 0.6), qt.Replication(10, 2), 0.3),
             ("Erlang(2, 2)", qt.Erlang(2, 2.0), qt.MDS(10, 4), 0.8),
             ("Deterministic(1)", qt.Deterministic(1.0), qt.MDS(4, 2), 0.5))
    print("IR march, numpy path vs numba path (CPU s; point best of 3)")
    for name, R, policy, lam in cases:
        row = []
        for path in ("numpy", "numba") if compiled is not None else ("numpy",):
            removal.numba = compiled if path == "numba" else None

            def point(policy=policy, R=R, lam=lam):
                p = qt.analyze(qt.System(policy, qt.IR(R), arrival_rate=lam))
                return p.mean, p.quantile(0.99)

            row.append(_best(point)[1])
        removal.numba = compiled
        row += [float("nan")] * (2 - len(row))
        print(f"  {name:28s} {policy.label():24s} lam={lam:3}  numpy {row[0]:6.3f} s  "
              f"numba {row[1]:6.3f} s", flush=True)


def continuous():
    """CPU seconds of a point (mean and p99, best of 2) under S&X with a continuous slowdown
    (:mod:`queuetheory.analysis.removal_continuous`): numpy and numba side by side, and for a
    phase-type slowdown (marched by its phases' states) or a piecewise-linear one (a uniform
    or a mixture of uniforms, by its windows' running sums) the history's convolution with
    numba (the march for any other continuous slowdown, and the numpy path's for a
    piecewise-linear one)."""
    from queuetheory.analysis import removal_continuous

    compiled, phase_form = removal.numba, removal_continuous._phase_form
    windows = removal_continuous._Windows
    cases = (("det. X, S Uniform(0.5, 1.5)", qt.SX(qt.Deterministic(1.0), qt.Uniform(0.5, 1.5))),
             ("X in {1, 2}, S Exp(2)", qt.SX(qt.Discrete([1, 2], [.5, .5]), qt.Exponential(2.0))),
             ("exp X, S Erlang(2, 2)", qt.SX(qt.Exponential(1.0), qt.Erlang(2, 2.0))),
             ("exp X, S HyperExp", qt.SX(qt.Exponential(1.0),
                                         qt.HyperExponential([0.5, 0.5], [0.5, 2.0]))),
             ("Erlang(2) X, S Exp(1)", qt.SX(qt.Erlang(2, 2.0), qt.Exponential(1.0))),
             ("exp X, S Uniform(0.5, 1.5)", qt.SX(qt.Exponential(1.0), qt.Uniform(0.5, 1.5))),
             ("Erlang(2) X, S Uniform(0, 2)", qt.SX(qt.Erlang(2, 2.0), qt.Uniform(0.0, 2.0))),
             ("exp X, S two uniforms", qt.SX(qt.Exponential(1.0), qt.Mixture(
                 [qt.Uniform(0.2, 0.6), qt.Uniform(1.0, 3.0)], [0.6, 0.4]))))
    print("S&X, continuous slowdown: numpy vs numba, and the history's march for phase-type "
          "and piecewise-linear slowdowns (CPU s; point best of 2 at load 0.5)")
    for name, runtime in cases:
        for policy in (qt.MDS(4, 2), qt.Replication(2, 2), qt.MDS(20, 10)):
            lam = 0.5 / runtime.mean_runtime()

            def point(policy=policy, lam=lam, runtime=runtime):
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                return p.mean, p.quantile(0.99)

            row = []
            for path in ("numpy", "numba", "history"):
                if compiled is None and path != "numpy" or (
                        path == "history" and phase_form(runtime.S) is None
                        and not runtime.S._piecewise_linear):
                    row.append(float("nan"))
                    continue
                removal.numba = None if path == "numpy" else compiled
                if path == "history":
                    removal_continuous._phase_form = lambda S: None
                    removal_continuous._Windows = lambda S, x: None
                row.append(_best(point, 2)[1])
                removal.numba, removal_continuous._phase_form = compiled, phase_form
                removal_continuous._Windows = windows
            print(f"  {name:28s} {policy.label():24s} numpy {row[0]:6.3f} s  "
                  f"numba {row[1]:6.3f} s  history (numba) {row[2]:6.3f} s", flush=True)


def jobsize():
    """CPU seconds of an S&X point (mean and p99, best of 2, load 0.5) with a hyperexponential
    job size given as ``HyperExponential`` (quantiles by Newton's method, compiled with numba
    for calls of many levels, and by numpy operations: ``distributions._COMPILED_LEVELS``) and
    as the same law as a ``Mixture`` of exponentials (the generic quantile search), side by
    side: the analysis evaluates ``F_X^{-1}`` at every ``X`` node of every grid node."""
    from queuetheory import distributions

    compiled = distributions._COMPILED_LEVELS
    slowdowns = {"facebook S": qt.slowdowns.facebook(), "S in {1, 10}": qt.Discrete([1, 10],
                                                                                    [0.9, 0.1])}
    print("S&X hyperexponential job size: HyperExponential vs the same Mixture (CPU s; point "
          "best of 2 at load 0.5)")
    for probs, rates in (([0.7, 0.3], [3.0, 0.3]), ([0.9, 0.1], [10.0, 0.5])):
        X = qt.HyperExponential(probs, rates)
        mixture = qt.Mixture([qt.Exponential(r) for r in rates], probs)
        for name, S in slowdowns.items():
            for policy in (qt.MDS(4, 1), qt.MDS(20, 10)):
                row = []
                for size, levels in ((X, compiled), (X, 2 ** 62), (mixture, compiled)):
                    runtime = qt.SX(size, S)
                    lam = 0.5 / runtime.mean_runtime()
                    distributions._COMPILED_LEVELS = levels

                    def point(policy=policy, lam=lam, runtime=runtime):
                        with warnings.catch_warnings():   # coarse ones warn: timed alike
                            warnings.simplefilter("ignore", qt.AccuracyWarning)
                            p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                        return p.mean, p.quantile(0.99)

                    row.append(_best(point, 2)[1])
                distributions._COMPILED_LEVELS = compiled
                print(f"  H2{tuple(probs)}{tuple(rates)} x {name:13s} {policy.label():16s} "
                      f"HyperExponential {row[0]:6.3f} s (numpy ppf {row[1]:6.3f} s, ratio "
                      f"{row[1] / row[0]:4.2f})  Mixture {row[2]:6.3f} s  ratio "
                      f"{row[2] / row[0]:4.2f}", flush=True)


def rule():
    """CPU seconds and stated relative error (the larger of the mean's and the busy fraction's)
    of an S&X point (mean and p99, best of 2, load 0.5) with a continuous job size, its rule
    over ``X`` at 12 Gauss-Legendre nodes per piece (before) and at 8 with the fallback to 12
    where the rule's error keeps the point short of the goal (now), side by side, numba or numpy
    as installed (``removal._SX_RULE_NODES``)."""
    slowdowns = {"facebook S": qt.slowdowns.facebook(),
                 "S in {1, 10}": qt.Discrete([1, 10], [0.9, 0.1]),
                 "S in {1, 2}": qt.Discrete([1, 2], [0.5, 0.5])}
    sizes = {"exp X": qt.Exponential(1.0), "Erlang(3) X": qt.Erlang(3, 3.0),
             "H2 X": qt.HyperExponential([0.7, 0.3], [3.0, 0.3])}
    print("S&X rule over X: 12 nodes per piece vs 8 (fallback to 12) (CPU s, relative error; "
          "point best of 2 at load 0.5)")
    default = removal._SX_RULE_NODES
    for (size_name, X), (name, S) in itertools.product(sizes.items(), slowdowns.items()):
        runtime = qt.SX(X, S)
        lam = 0.5 / runtime.mean_runtime()
        for policy in (qt.MDS(4, 1), qt.MDS(20, 10)):
            row = []
            for nodes in (12, default):
                removal._SX_RULE_NODES = nodes

                def point(policy=policy, runtime=runtime, lam=lam):
                    with warnings.catch_warnings():   # coarse ones warn: timed alike
                        warnings.simplefilter("ignore", qt.AccuracyWarning)
                        p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                    p.quantile(0.99)
                    return max(p.errors["mean"] / p.mean,
                               p.errors["busy_fraction"] / p.busy_fraction)

                row += [_best(point, 2)[1], point()]
            removal._SX_RULE_NODES = default
            print(f"  {size_name:11s} x {name:12s} {policy.label():16s} 12: {row[0]:6.3f} s "
                  f"({row[1]:.1e})  {default}: {row[2]:6.3f} s ({row[3]:.1e})  ratio "
                  f"{row[0] / row[2]:4.2f}", flush=True)


def shots():
    """CPU seconds of S&X points (mean and p99, best of 2, load 0.5), each change against what
    it replaced, side by side in one run: (1) a continuous job size and slowdown, the refined
    grids shot in one march of three columns (``one_march``) and by Newton's steps of two
    columns; (2) the fallback to 12 nodes over a continuous ``X`` (discrete slowdowns), solved
    on the 8-node solution's grids along its derivatives (``plan``) and from scratch."""
    from queuetheory.analysis import removal_continuous

    print("S&X, continuous X and S: one march per refined grid vs Newton's steps (CPU s)")
    model = removal_continuous._SXContinuousModel
    for name, runtime in (("exp X, S Erlang(2, 2)", qt.SX(qt.Exponential(1.0), qt.Erlang(2, 2.0))),
                          ("Erlang X, S Uniform(0.5, 1.5)",
                           qt.SX(qt.Erlang(2, 2.0), qt.Uniform(0.5, 1.5)))):
        for policy in (qt.MDS(4, 2), qt.Replication(2, 2)):
            system = qt.System(policy, runtime, arrival_rate=0.5 / runtime.mean_runtime())
            row = []
            for one in (False, True):
                init = model.__init__

                def patched(self, *args, one=one, init=init, **kwargs):
                    init(self, *args, **kwargs)
                    self.one_march = one and not self.discrete_x

                model.__init__ = patched
                row.append(_best(lambda system=system: qt.analyze(system).quantile(0.99), 2)[1])
                model.__init__ = init
            print(f"  {name:30s} {policy.label():24s} Newton {row[0]:6.3f} s  one march "
                  f"{row[1]:6.3f} s  ratio {row[0] / row[1]:4.2f}", flush=True)
    print("S&X fallback to 12 nodes over X: from scratch vs on the 8-node grids (CPU s)")
    solve = removal._grid_prediction
    far = qt.Discrete([1, 10], [0.9, 0.1])
    for policy in (qt.MDS(1, 0), qt.MDS(10, 2)):
        runtime = qt.SX(qt.Exponential(far.mean()), far)
        system = qt.System(policy, runtime, arrival_rate=0.5 / runtime.mean_runtime())
        row = []
        for scratch in (True, False):
            removal._grid_prediction = ((lambda *args: solve(*args[:7])) if scratch else solve)
            row.append(_best(lambda system=system: removal.grid_prediction(
                system, "", ()).quantile(0.99), 2)[1])
            removal._grid_prediction = solve
        print(f"  exp X x S in {{1, 10}}     {policy.label():16s} scratch {row[0]:6.3f} s  "
              f"plan {row[1]:6.3f} s  ratio {row[0] / row[1]:4.2f}", flush=True)


def main():
    laws = {"exponential": qt.IR(qt.Exponential(1.0)), "Erlang(2)": qt.IR(qt.Erlang(2, 2.0)),
            "deterministic": qt.IR(qt.Deterministic(1.0)),
            "hyperexponential": qt.IR(qt.HyperExponential([0.9, 0.1], [1.8, 0.2])),
            "S&X, exp X, S in {1, 2}": qt.SX(qt.Exponential(1.3), qt.Discrete([1, 2], [.7, .3])),
            "S&X, Erlang X, S in {1, 3}": qt.SX(qt.Erlang(2, 2.0), qt.Discrete([1, 3], [.8, .2])),
            "S&X, det. X, S in {1, 2}": qt.SX(qt.Deterministic(1.0),
                                              qt.Discrete([1, 2], [.7, .3])),
            "S&X, unif. X, S in {1, 2}": qt.SX(qt.Uniform(1.0, 2.0),
                                               qt.Discrete([1, 2], [.7, .3]))}
    qt.analyze(qt.System(qt.MDS(2, 1), laws["S&X, exp X, S in {1, 2}"], arrival_rate=0.3))
    print("one point: qt.analyze + p99 (best of 3: wall, CPU)")
    for name, runtime in laws.items():
        for policy, lam in ((qt.MDS(4, 2), 0.5), (qt.MDS(20, 10), 0.4),
                            (qt.Replication(10, 2), 0.3)):
            def point(policy=policy, lam=lam, runtime=runtime):
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                return p.mean, p.quantile(0.99)

            wall, cpu = _best(point)
            print(f"  {name:24s} {policy.label():24s} lam={lam:3}  wall {wall:6.3f} s  "
                  f"CPU {cpu:6.3f} s")
    print("stability frontier (one call)")
    for name in ("deterministic", "hyperexponential", "S&X, exp X, S in {1, 2}",
                 "S&X, Erlang X, S in {1, 3}"):
        for policy in (qt.MDS(4, 2), qt.Replication(2, 2)):
            wall, cpu = _best(lambda name=name, policy=policy: qt.stability_frontier(
                laws[name], policy), 1)
            print(f"  {name:26s} {policy.label():24s} wall {wall:6.3f} s  CPU {cpu:6.3f} s")
    matching()


def matching():
    """CPU seconds of ``smallest_matching_code(n, 2, ..., remove=True)`` (one call), as it runs
    (a first pass to a relative accuracy of 1e-2, the full goal only where a verdict needs it)
    and with every code solved to the full goal (the first pass's goal set to 1e-6), side by
    side, with the answers ``m`` of both."""
    facebook, far = qt.slowdowns.facebook(), qt.Discrete([1, 10], [0.9, 0.1])
    laws = {"IR deterministic": qt.IR(qt.Deterministic(1.0)),
            "IR hyperexponential": qt.IR(qt.HyperExponential([0.9, 0.1], [1.8, 0.2])),
            "S&X, exp X, facebook S": qt.SX(qt.Exponential(facebook.mean()), facebook),
            "S&X, exp X, S in {1, 10}": qt.SX(qt.Exponential(far.mean()), far),
            "S&X, exp X, Erlang(2, 2) S": qt.SX(qt.Exponential(1.0), qt.Erlang(2, 2.0))}
    first = codematch._FIRST_PASS
    print("smallest_matching_code(n, 2, ..., 0.3 / E[R], remove=True), CPU s (one call)")
    print(f"  {'runtime':26s} {'n':>3s} {'two passes':>10s} {'full goal':>10s} {'ratio':>6s} "
          f"{'m':>5s}")
    for name, runtime in laws.items():
        lam = 0.3 / runtime.mean_runtime()
        for n in (4, 10, 20):
            row, found = [], []
            for goal in (first, GOAL):
                codematch._FIRST_PASS = goal
                start = time.process_time()
                found.append(qt.smallest_matching_code(n, 2, runtime, lam, remove=True).m)
                row.append(time.process_time() - start)
            codematch._FIRST_PASS = first
            print(f"  {name:26s} {n:3d} {row[0]:10.3f} {row[1]:10.3f} {row[1] / row[0]:6.1f} "
                  f"{found[0]!s:>2s}/{found[1]!s:<2s}", flush=True)


def between():
    """CPU seconds of a point (mean and p99, best of 3) for runtimes on atoms without a common
    step: the atoms (IR) or the products ``x s`` of a job size on atoms and the slowdowns (S&X)
    placed exactly between the nodes (the default) and the first-order march (``_JUMPS_MAX =
    _SX_JUMPS_MAX = 0``) side by side, with the relative error each states for the mean."""
    def ir(values, probs):
        return qt.IR(qt.Discrete(values, probs))

    root2, e, pi = 1.4142135623730951, 2.718281828459045, 3.141592653589793
    cases = (("IR {1, 1.618} w.p. .7, .3", ir([1.0, 1.6180339887498949], [0.7, 0.3]),
              qt.RedundancyD(2), 0.25),
             ("IR {1, 1.0973} w.p. .5, .5", ir([1.0, 1.0973], [0.5, 0.5]), qt.MDS(4, 2), 0.3),
             ("IR {.5, 1.414, 2.25}", ir([0.5, root2, 2.25], [0.25, 0.5, 0.25]), qt.MDS(10, 2),
              0.4),
             ("S&X {1, 1.618} x {1, 2}", qt.SX(qt.Discrete([1.0, 1.6180339887498949],
                                                           [0.625, 0.375]),
                                               qt.Discrete([1.0, 2.0], [0.75, 0.25])),
              qt.MDS(4, 2), 0.1875),
             ("S&X {1, 1.414, e, pi} x fb", qt.SX(qt.Discrete([1.0, root2, e, pi],
                                                              [0.4, 0.3, 0.2, 0.1]),
                                                  qt.slowdowns.facebook()), qt.MDS(10, 2),
              0.05),
             # a job size whose density jumps: the bends c s_k placed (_density_bends) or not
             ("S&X U(1, 2) x {1, e}", qt.SX(qt.Uniform(1.0, 2.0), qt.Discrete([1.0, e],
                                                                             [0.6, 0.4])),
              qt.MDS(4, 2), 0.3),
             ("S&X U(.5, 1.5) x {1, r2, pi}", qt.SX(qt.Uniform(0.5, 1.5), qt.Discrete(
                 [1.0, root2, pi], [0.5, 0.3, 0.2])), qt.Replication(3, 2), 0.2),
             ("S&X Pareto(4.98) x 6 values", qt.SX(qt.Pareto(4.98, 1.094), qt.Discrete(
                 [1.0, 2.24, 2.53, 2.954, 3.4106, 3.6147],
                 [0.2439, 0.0723, 0.0459, 0.2590, 0.1200, 0.2589])), qt.MDS(10, 2), 0.1))
    print("atoms (and bends) between the nodes: exact placement vs first order (CPU s, stated "
          "mean error)")
    limits = removal._JUMPS_MAX, removal._SX_JUMPS_MAX
    bends = removal._density_bends
    for name, runtime, policy, lam in cases:
        row = []
        for removal._JUMPS_MAX, removal._SX_JUMPS_MAX in (limits, (0, 0)):
            removal._density_bends = bends if removal._JUMPS_MAX else (lambda X, s: None)
            def point(policy=policy, lam=lam, runtime=runtime):
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                return p, p.quantile(0.99)

            row.append(_best(point)[1])
            p = point()[0]
            row.append(p.errors["mean"] / p.mean)
        removal._JUMPS_MAX, removal._SX_JUMPS_MAX = limits
        removal._density_bends = bends
        print(f"  {name:28s} {policy.label():22s} exact {row[0]:6.3f} s ({row[1]:.1e})  "
              f"first order {row[2]:6.3f} s ({row[3]:.1e})", flush=True)


def unstable():
    """CPU seconds (best of 3) and marches of points beyond the stability frontier (the verdict
    ``stable=False`` from the sign of the front's level at the rate, read before the grid).
    Before, the grids were solved first: where they had no stationary law, with 216, 49, 91, 77
    and 94 marches for the first five rows (1.18, 0.158, 0.228, 0.007, 0.065 s in one A/B run);
    where they found one within their error of the frontier, its quantiles were refined through
    the far tail (the last row, 171 s)."""
    from queuetheory.analysis import removal

    count = [0]
    march_sx, ir_marcher = removal._march_sx, removal._IRModel.marcher

    def counted_sx(*args):
        count[0] += 1
        return march_sx(*args)

    def counted_ir(self, h, M):
        march = ir_marcher(self, h, M)
        return lambda columns: count.__setitem__(0, count[0] + 1) or march(columns)

    removal._march_sx, removal._IRModel.marcher = counted_sx, counted_ir
    uniform = qt.SX(qt.Uniform(1.0, 2.0), qt.Discrete([1, 2], [.7, .3]))
    cases = (("S&X, unif. X, S in {1, 2}", uniform, qt.MDS(4, 2), 0.5),
             ("S&X, unif. X, S in {1, 2}", uniform, qt.Replication(10, 2), 0.6),
             ("S&X, Erlang X, S in {1, 3}", qt.SX(qt.Erlang(2, 2.0), qt.Discrete([1, 3], [.8, .2])),
              qt.MDS(4, 2), 0.7),
             ("IR deterministic", qt.IR(qt.Deterministic(1.0)), qt.MDS(4, 2), 0.95),
             ("IR hyperexponential", qt.IR(qt.HyperExponential([0.9, 0.1], [1.8, 0.2])),
              qt.MDS(4, 2), 1.6),
             # 1.001 times its frontier 0.9309257 (error 7e-8)
             ("IR Erlang(3)", qt.IR(qt.Erlang(3, 3.0)), qt.MDS(10, 3), 0.9318566))
    print("beyond the frontier: qt.analyze (CPU s, best of 3; marches of one call)")
    try:
        for name, runtime, policy, lam in cases:
            system = qt.System(policy, runtime, arrival_rate=lam)
            _, cpu = _best(lambda system=system: qt.analyze(system))
            count[0] = 0
            stable = qt.analyze(system).stable
            print(f"  {name:26s} {policy.label():24s} lam={lam:4}  stable={stable!s:5s} "
                  f"marches {count[0]:4d}  CPU {cpu:6.3f} s", flush=True)
    finally:
        removal._march_sx, removal._IRModel.marcher = march_sx, ir_marcher


def blocks():
    """CPU seconds of S&X points (mean and p99, best of 3, load 0.5) with the tables of ``X``
    nodes computed ``removal._NODES_BLOCK`` values at a time and in one pass (the block made
    larger than any table), alternately: CPU time counts the kernel's page faults on the
    temporaries (the third column, the system part of the one-pass time)."""
    import resource

    block = removal._NODES_BLOCK
    far = qt.Discrete([1, 10], [0.9, 0.1])
    cases = [(qt.HyperExponential([0.9, 0.1], [10.0, 0.5]), qt.slowdowns.facebook(), qt.MDS(4, 1)),
             (qt.HyperExponential([0.7, 0.3], [3.0, 0.3]), far, qt.MDS(4, 1)),
             (qt.Erlang(2, 2.0), qt.slowdowns.facebook(), qt.MDS(10, 2)),
             (qt.Exponential(1.0), qt.slowdowns.facebook(), qt.MDS(4, 1)),
             (qt.Exponential(1.0), far, qt.MDS(20, 10))]
    print("S&X X nodes in blocks vs one pass (CPU s; point best of 3 at load 0.5; system "
          "time of the one-pass runs)")
    for X, S, policy in cases:
        runtime = qt.SX(X, S)
        lam = 0.5 / runtime.mean_runtime()

        def point(policy=policy, lam=lam, runtime=runtime):
            with warnings.catch_warnings():   # short of the goal: timed alike
                warnings.simplefilter("ignore", qt.AccuracyWarning)
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
            return p.mean, p.quantile(0.99)

        best = {"blocks": float("inf"), "one pass": float("inf")}
        kernel_time = float("inf")
        try:
            for _ in range(3):
                for name, size in (("blocks", block), ("one pass", 2 ** 62)):
                    removal._NODES_BLOCK = size
                    before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
                    best[name] = min(best[name], _best(point, 1)[1])
                    if name == "one pass":
                        kernel_time = min(kernel_time, resource.getrusage(
                            resource.RUSAGE_SELF).ru_stime - before)
        finally:
            removal._NODES_BLOCK = block
        print(f"  {X!r:48.48s} x {len(S.values):2d} slowdowns {policy.label():16s} blocks "
              f"{best['blocks']:6.3f} s  one pass {best['one pass']:6.3f} s (system "
              f"{kernel_time:5.3f} s)  ratio {best['one pass'] / best['blocks']:4.2f}",
              flush=True)


def quantiles():
    """CPU seconds of the quantiles (0.5, 0.9, 0.99 and 0.999 with their errors, best of 3) of
    S&X points with a continuous slowdown, ``P(C > t)`` off the nodes taken by one call of
    ``removal._q_at`` for every ``X`` node, and by one call per node (as before the call took
    them together), alternately, at a goal of 1e-2 (``smallest_matching_code``'s first pass)
    and at the default goal."""
    from queuetheory.analysis import removal_continuous

    model_class = removal_continuous._SXContinuousModel
    together = model_class.sf_at

    def per_node(self, sol, t):
        S = self.runtime.S
        q = np.stack([removal._q_at(sol, S, t, removal._kinks(S), np.full(t.size, one),
                                    np.full(t.size, x))
                      for x, one in zip(self.x, self.x * self.ones_per_x)],
                     axis=1)
        return self.kernel.batch_sf(q) @ self.w

    cases = [(qt.SX(qt.Exponential(1.0), qt.Erlang(2, 2.0)), qt.MDS(4, 1), 1e-2),
             (qt.SX(qt.Uniform(0.5, 1.5), qt.Erlang(2, 2.0)), qt.MDS(10, 2), 1e-2),
             (qt.SX(qt.Discrete([0.5, 2.0], [0.5, 0.5]), qt.Erlang(2, 2.0)), qt.MDS(4, 2), 1e-6),
             (qt.SX(qt.Exponential(1.0), qt.Erlang(2, 2.0)), qt.Replication(2, 2), 1e-6)]
    levels = [0.5, 0.9, 0.99, 0.999]
    print("S&X continuous slowdown: quantiles with P(C > t) of all X nodes in one call vs one "
          "call per node (CPU s, best of 3, load 0.5)")
    for runtime, policy, goal in cases:
        lam = 0.5 / runtime.mean_runtime()
        with warnings.catch_warnings(), qt.accuracy_goal(goal):
            warnings.simplefilter("ignore", qt.AccuracyWarning)
            law = qt.analyze(qt.System(policy, runtime, arrival_rate=lam)).response_time
            best = {"one call": float("inf"), "per node": float("inf")}
            try:
                for _ in range(3):
                    for name, sf_at in (("one call", together), ("per node", per_node)):
                        model_class.sf_at = sf_at
                        best[name] = min(best[name], _best(
                            lambda law=law: law.ppf(levels, full_output=True), 1)[1])
            finally:
                model_class.sf_at = together
        print(f"  {runtime!r:60.60s} {policy.label():22s} goal {goal:.0e} one call "
              f"{best['one call']:6.3f} s  per node {best['per node']:6.3f} s  ratio "
              f"{best['one call'] / best['per node']:4.2f}", flush=True)


def frontier_refinement():
    """CPU seconds of a stability frontier (one call each, alternated) with its grids refined to
    resolve the runtime's fastest part (``removal._Front.resolve``) and without (the grids of
    ``_FRONT_CELLS`` and a seventh of the extrapolations' difference, as before the refinement),
    side by side in one run, with the stated errors."""
    import scipy.stats as st
    tenfold = qt.Discrete([0.1, 1, 10], [1 / 3] * 3)
    cases = {
        "S&X Erlang(3) x {0.1, 1, 10}": (qt.SX(qt.Erlang(3, 3.0), tenfold), qt.Replication(3, 2)),
        "S&X lognormal(0.5) x {0.1, 1, 10}": (
            qt.SX(qt.from_scipy(st.lognorm(0.5, scale=0.8825)), tenfold), qt.MDS(10, 2)),
        "S&X exp x Facebook": (
            qt.SX(qt.Exponential(1.0), qt.slowdowns.facebook()), qt.MDS(10, 2)),
        "IR H2, a phase of rate 100": (
            qt.IR(qt.HyperExponential([0.5, 0.5], [100.0, 0.5])), qt.MDS(10, 2)),
        "IR Erlang(3, 300) + Erlang(3, 3)": (
            qt.IR(qt.Mixture([qt.Erlang(3, 300.0), qt.Erlang(3, 3.0)], [0.4, 0.6])),
            qt.Replication(1, 3)),
        "IR lognormal(1)": (qt.IR(qt.from_scipy(st.lognorm(1.0))), qt.MDS(20, 5))}
    saved = removal._FRONT_REFINE, removal._FRONT_ROUGH_STEP_FASTEST
    print("stability frontier: refined for the fastest part vs not (CPU s, one call each)")
    for name, (runtime, policy) in cases.items():
        row = []
        for refine in (True, False):
            removal._FRONT_REFINE, removal._FRONT_ROUGH_STEP_FASTEST = (
                saved if refine else (1, float("inf")))
            start = time.process_time()
            value, error = qt.stability_frontier(runtime, policy, full_output=True)
            row += [time.process_time() - start, error]
        removal._FRONT_REFINE, removal._FRONT_ROUGH_STEP_FASTEST = saved
        print(f"  {name:34s} {policy.label():24s} refined {row[0]:6.3f} s (error {row[1]:.1e})"
              f"  unrefined {row[2]:6.3f} s (error {row[3]:.1e})  ratio {row[0] / row[2]:5.2f}")


def parities():
    """CPU seconds of a point (mean and p99, best of 3) of MDS codes with more than 32 parities,
    ``phi`` by the Horner sum (:meth:`removal._Kernel.phi_form`, the default: compiled march,
    atoms between the nodes placed) and without it (``betainc``, the numpy march, atoms first
    order: what ``m > 32`` had before) side by side, with the relative error each states."""
    far = qt.Discrete([1, 10], [0.9, 0.1])
    cases = (("IR {1, 1.414} w.p. .7, .3", qt.IR(qt.Discrete([1.0, 2 ** 0.5], [0.7, 0.3])),
              qt.MDS(1, 33), 0.057),
             ("IR Deterministic(1)", qt.IR(qt.Deterministic(1.0)), qt.MDS(100, 50), 0.333),
             ("IR Erlang(2, 2)", qt.IR(qt.Erlang(2, 2.0)), qt.MDS(20, 40), 0.167),
             ("S&X exp X x {1, 10}", qt.SX(qt.Exponential(1.0), far), qt.MDS(20, 40), 0.087),
             ("S&X {1, 2} x {1, 1.732}", qt.SX(qt.Discrete([1.0, 2.0], [0.5, 0.5]),
                                                qt.Discrete([1.0, 3 ** 0.5], [0.8, 0.2])),
              qt.MDS(1, 33), 0.039))
    print("MDS with m > 32: phi by the Horner sum vs betainc only (CPU s, stated mean error)")
    form = removal._Kernel.phi_form

    def without(kernel):
        return None if kernel.mds and kernel.remove and kernel.r > 32 else form(kernel)

    for name, runtime, policy, lam in cases:
        row = []
        for removal._Kernel.phi_form in (form, without):
            def point(policy=policy, lam=lam, runtime=runtime):
                p = qt.analyze(qt.System(policy, runtime, arrival_rate=lam))
                p.quantile(0.99)
                return p.errors["mean"] / p.mean

            row += [_best(point)[1], point()]
        removal._Kernel.phi_form = form
        print(f"  {name:26s} {policy.label():16s} lam={lam:<6g} Horner {row[0]:6.3f} s "
              f"({row[1]:.1e})  betainc {row[2]:6.3f} s ({row[3]:.1e})  ratio "
              f"{row[2] / row[0]:5.1f}", flush=True)


def split():
    """CPU seconds of an S&X point with a continuous job size and a slowdown whose law kinks
    (analyze, then the quantiles 0.1, 0.5, 0.9 and 0.99 with their errors; best of 2), with
    ``P(C > t)`` over the rule over ``X`` split at the kinks ``x = t / c`` for each time (the
    default, ``_SXContinuousModel.split_rule``) and over the march's fixed nodes (``pieces``
    set to ``None``), side by side, with the largest relative error each states for the
    quantiles."""
    from queuetheory.analysis import removal_continuous

    model_class = removal_continuous._SXContinuousModel
    init = model_class.__init__

    def fixed(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.pieces = None

    cases = [(qt.SX(qt.Exponential(1.0), qt.Uniform(0.5, 1.5)), qt.MDS(4, 2)),
             (qt.SX(qt.Erlang(2, 2.0), qt.Uniform(0.0, 2.0)), qt.MDS(10, 3)),
             (qt.SX(qt.Exponential(1.0), qt.BoundedPareto(2.0, 0.5, 3.0)), qt.MDS(10, 3)),
             (qt.SX(qt.Uniform(0.5, 1.5), qt.Mixture([qt.Uniform(0.5, 1.0),
                                                     qt.Uniform(2.0, 3.0)], [0.7, 0.3])),
              qt.Replication(2, 2))]
    levels = [0.1, 0.5, 0.9, 0.99]
    print("S&X continuous X x kinked slowdown: P(C > t) over the rule split at the kinks vs the "
          "fixed nodes (CPU s, point and 4 quantiles, best of 2, load 0.5)")
    for runtime, policy in cases:
        lam = 0.5 / runtime.mean_runtime()
        row = []
        for variant in (init, fixed):
            model_class.__init__ = variant
            try:
                def point(policy=policy, runtime=runtime, lam=lam):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", qt.AccuracyWarning)
                        law = qt.analyze(qt.System(policy, runtime,
                                                   arrival_rate=lam)).response_time
                        values, errors = law.ppf(levels, full_output=True)
                    return float(np.max(np.asarray(errors) / np.asarray(values)))

                row += [_best(point, 2)[1], point()]
            finally:
                model_class.__init__ = init
        print(f"  {runtime!r:64.64s} {policy.label():22s} split {row[0]:6.3f} s ({row[1]:.1e}) "
              f"fixed {row[2]:6.3f} s ({row[3]:.1e})  ratio {row[0] / row[2]:5.2f}", flush=True)


def _compile():
    """One S&X point and one IR frontier: compiles the S&X and IR marches, or loads them from
    numba's cache (left out of the figures; the IR march's compilation had counted in the
    first IR frontier, 5.5 s)."""
    qt.analyze(qt.System(qt.MDS(2, 1), qt.SX(qt.Exponential(1.3), qt.Discrete([1, 2], [.7, .3])),
                         arrival_rate=0.3))
    qt.stability_frontier(qt.IR(qt.Erlang(2, 1.0)), qt.MDS(4, 2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tables = parser.add_mutually_exclusive_group()
    for option, text in [
            ("--paths", "only the numpy-versus-numba tables"),
            ("--matching", "smallest_matching_code with its first pass and without"),
            ("--frontier", "stability frontiers refined for the runtime's fastest part and not"),
            ("--unstable", "points beyond the stability frontier (CPU and marches)"),
            ("--continuous", "S&X with continuous slowdowns, numpy and numba"),
            ("--jobsize", "S&X hyperexponential job sizes, as HyperExponential and as Mixture"),
            ("--rule", "S&X rule over a continuous X: 12 nodes per piece and 8 (fallback)"),
            ("--shots", "S&X refined grids in one march and by Newton's steps; the fallback "
                        "to 12 nodes on the first solve's grids and from scratch"),
            ("--blocks", "S&X tables of X nodes computed in blocks and in one pass"),
            ("--quantiles", "S&X continuous slowdowns: quantiles with P(C > t) of every X "
                            "node in one call and in one call per node"),
            ("--between", "runtimes on atoms between the nodes, and job sizes whose density "
                          "jumps"),
            ("--parities", "MDS with more than 32 parities: phi by the Horner sum and by "
                           "betainc only"),
            ("--split", "S&X continuous X times a kinked slowdown: P(C > t) over the rule "
                        "split at the kinks and over the fixed nodes")]:
        tables.add_argument(option, action="store_true", help=text)
    args = parser.parse_args()
    if args.continuous:
        continuous()
    elif args.split:
        split()
    elif args.between:
        between()
    else:
        _compile()
        if args.frontier:
            frontier_refinement()
        elif args.unstable:
            unstable()
        elif args.matching:
            matching()
        elif args.jobsize:
            jobsize()
        elif args.rule:
            rule()
        elif args.shots:
            shots()
        elif args.blocks:
            blocks()
        elif args.quantiles:
            quantiles()
        elif args.parities:
            parities()
        else:
            if not args.paths:
                main()
            ir_paths()
            paths()
