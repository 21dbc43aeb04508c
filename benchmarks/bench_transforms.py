"""Speed and accuracy of :func:`queuetheory.transforms.invert_quantile` (the fast path).

For a few response-time transforms this prints the time per call of the 99th percentile, the
number of transform calls it makes, the cost of one call of the transform on 50 points, and the
relative error against the 30-digit mpmath path (de Hoog) and against a closed form where there
is one.

Run from the repository root::

    python -m benchmarks.bench_transforms
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

import mpmath
import numpy as np

from queuetheory.transforms import invert_quantile, invert_quantile_mp

Q = 0.99


def _exp(s):
    """``exp`` for numpy arrays and for mpmath numbers alike."""
    if isinstance(s, (mpmath.mpf, mpmath.mpc)):
        return mpmath.exp(s)
    return np.exp(s)


def _pk_response(lam: float, service: Callable, mean_service: float) -> Callable:
    """M/G/1 FCFS response time: ``(1 - rho) s B(s) / (s - lam (1 - B(s)))``."""
    rho = lam * mean_service

    def lst(s):
        b = service(s)
        return (1 - rho) * s * b / (s - lam * (1 - b))
    return lst


def _slowdown_case():
    """M/G/1 with B = X S, X ~ Exp(4.691), S in 1..12 with the given weights, rho = 0.7."""
    rate = 4.691
    probs = (0.23, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002)
    mean_b = sum(p * j for j, p in enumerate(probs, start=1)) / rate
    lam = 0.7 / mean_b
    second_b = 2 * sum(p * j * j for j, p in enumerate(probs, start=1)) / rate**2

    def service(s):
        return sum(p * rate / (rate + s * j) for j, p in enumerate(probs, start=1))
    mean_t = mean_b + lam * second_b / (2 * (1 - 0.7))
    return _pk_response(lam, service, mean_b), mean_t, None


def _md1_wait_cdf(x: float, lam: float = 0.7, d: float = 1.0) -> float:
    """M/D/1 waiting-time CDF by Erlang's formula, with ``u_k = lam (k D - x)``:
    ``P(W <= x) = (1 - rho) sum_{k <= x / D} u_k^k / k! exp(-u_k)``, summed with 50 digits."""
    with mpmath.workdps(50):
        total = mpmath.fsum((lam * (k * d - mpmath.mpf(x))) ** k / mpmath.factorial(k)
                            * mpmath.exp(-lam * (k * d - mpmath.mpf(x)))
                            for k in range(int(x // d) + 1))
        return float((1 - lam * d) * total)


def _md1_response_quantile(q: float) -> float:
    """``D + w_q`` with ``w_q`` solved by bisection on Erlang's formula (D = 1, rho = 0.7)."""
    lo, hi = 0.0, 100.0
    while hi - lo > 1e-13 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _md1_wait_cdf(mid) < q else (lo, mid)
    return 1.0 + hi


def _cases():
    """(name, lst, mean, exact 0.99-quantile or None)."""
    a = 0.5
    mm1 = _pk_response(0.5, lambda s: 1.0 / (1.0 + s), 1.0)   # Exp(mu - lam) = Exp(0.5)
    weights, rates = (0.9, 0.1), (10.0, 0.1)

    def h2(s):
        return weights[0] * rates[0] / (rates[0] + s) + weights[1] * rates[1] / (rates[1] + s)

    def md1_response(s):
        return 0.3 * s * _exp(-s) / (s - 0.7 * (1 - _exp(-s)))
    return [
        ("M/M/1, LST a/(a+s)", lambda s: a / (a + s), 1 / a, -math.log(1 - Q) / a),
        ("M/M/1 in P-K form", mm1, 2.0, -math.log(1 - Q) / 0.5),
        ("Erlang-5, mean 1", lambda s: (5.0 / (5.0 + s)) ** 5, 1.0, None),
        ("H2 0.9 Exp(10) + 0.1 Exp(0.1)", h2, 1.09, None),
        ("M/G/1 12-point slowdown, rho 0.7", *_slowdown_case()),
        ("M/D/1 response, D 1, rho 0.7", md1_response, 1 + 0.7 / (2 * 0.3),
         _md1_response_quantile(Q)),
    ]


def _per_call(func: Callable[[], object], min_seconds: float = 0.3) -> float:
    """Median time of one call of ``func`` over batches lasting ``min_seconds`` in all."""
    func()
    samples = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_seconds or len(samples) < 5:
        t0 = time.perf_counter()
        func()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _count_calls(lst: Callable) -> tuple[Callable, list[int]]:
    counter = [0]

    def counted(s):
        counter[0] += 1
        return lst(s)
    return counted, counter


def main() -> None:
    """Print one line per transform."""
    s50 = np.linspace(0.05, 5.0, 50) * (1 + 2j)
    header = (f"{'transform':34s} {'q99':>12s} {'ms/call':>8s} {'lst calls':>9s} "
              f"{'us/lst(50)':>10s} {'rel err vs mp':>13s} {'vs exact':>9s} {'mp s':>6s}")
    print(header)
    print("-" * len(header))
    for name, lst, mean, exact in _cases():
        counted, counter = _count_calls(lst)
        value = invert_quantile(counted, Q, mean=mean)
        calls = counter[0]
        seconds = _per_call(lambda lst=lst, mean=mean: invert_quantile(lst, Q, mean=mean))
        lst_us = _per_call(lambda lst=lst: lst(s50), 0.1) * 1e6
        t0 = time.perf_counter()
        reference = invert_quantile_mp(lst, Q, precision=30, mean=mean)
        mp_seconds = time.perf_counter() - t0
        vs_exact = "-" if exact is None else f"{abs(value / exact - 1):.1e}"
        print(f"{name:34s} {value:12.8f} {seconds * 1e3:8.3f} {calls:9d} {lst_us:10.1f} "
              f"{abs(value / reference - 1):13.1e} {vs_exact:>9s} {mp_seconds:6.2f}")


def continuous_slowdowns() -> None:
    """p99 of S&X response times with a continuous slowdown and a job size with kinks.

    Before the transforms along rays and the refinement at the root only (measured on the
    same 2-core machine, 2026-11-30): X ~ Uniform(1, 3), S ~ Uniform(1, 5), load 0.5, p99 in
    8.5 to 11 s (Random), 16 to 21 s (RIQ(2)), minutes (RIQ(4)); X ~ Uniform(1, 3),
    S ~ Exponential(1): 3.3 s (Random), 12.7 s (RIQ(4), two levels).
    """
    import queuetheory as qt

    header = f"{'S&X law (load 0.5)':34s} {'policy':>7s} {'p99':>12s} {'error est':>10s} {'s':>6s}"
    print()
    print(header)
    print("-" * len(header))
    laws = [("X U(1,3), S U(1,5)", qt.Uniform(1.0, 3.0), qt.Uniform(1.0, 5.0)),
            ("X U(1,3), S Exp(1)", qt.Uniform(1.0, 3.0), qt.Exponential(1.0)),
            ("X Det(1), S U(1,5)", qt.Deterministic(1.0), qt.Uniform(1.0, 5.0))]
    for name, X, S in laws:
        for policy in (qt.Random(), qt.RIQ(2), qt.RIQ(4)):
            model = qt.SX(X, S)
            system = qt.System(policy, model, arrival_rate=0.5 / model.mean_runtime())
            law = qt.analyze(system).response_time
            t0 = time.perf_counter()
            value, error = law.ppf(Q, full_output=True)
            seconds = time.perf_counter() - t0
            label = "Random" if policy.polled == 1 else f"RIQ({policy.polled})"
            print(f"{name:34s} {label:>7s} {value:12.8f} {error:10.1e} {seconds:6.2f}")


def atoms_and_densities() -> None:
    """CPU seconds of quantiles (and a batch mean) for runtimes with an atom and a density.

    Before the transforms split at the atoms, the known part's density in the quantile search,
    its stop within the noise and the remembered power-tail transforms (the same 2-core
    machine, old and new side by side in one run, 2026-12-01): RIQ(2), 0.5 Det(1) + 0.5 Exp(1),
    p50 / p95 / p99 17.5 / 94.9 / 15.7 s; Random, SX(HyperExp, 0.7 Det(1) + 0.3 Exp(0.5)):
    mean, p50 and p99 11.3 s; MDS(4, 2) without removal, IR Pareto(2.5, 0.6): mean 200 s.
    Pareto transforms by the exponential integral's series and continued fraction instead of
    exp-sinh quadrature (2026-12-02, old and new in one run, CPU s): that batch mean 43.1 ->
    2.37, Replication(4, 2) 31.0 -> 1.58, the same MDS as S&X with X = 1 30.6 -> 1.13, IR
    BoundedPareto(1.5, 0.3, 100) MDS(4, 2) 73.6 -> 2.65 (the means equal to 4e-16 relative).
    The fastest of i replicas of atoms and exponentials in closed form, and the batch mean's
    pieces ending at the runtime's atoms (2026-12-02, old and new in one run, CPU s): RIQ(2),
    0.5 Det(1) + 0.5 Exp(0.5), median 29.6 -> 0.09; MDS(4, 2) without removal, 0.5 Det(1) +
    0.5 Exp(1), mean 13.0 -> 3.8 (stated error 1.0e-3 -> 4.8e-10).
    """
    import queuetheory as qt

    mixed = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5])
    cases = [
        ("RIQ(2), IR 0.5 Det(1) + 0.5 Exp(1)", qt.System(qt.RIQ(2), qt.IR(mixed), 0.5),
         (0.5, 0.95, 0.99)),
        ("Random, SX(HypExp, .7 Det(1) + .3 Exp)",
         qt.System(qt.Random(), qt.SX(qt.HyperExponential([0.9, 0.1], [2.0, 0.25]),
                                      qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)],
                                                 [0.7, 0.3])), 0.3), (0.5, 0.99)),
        ("MDS(4, 2) no removal, IR Pareto(2.5)",
         qt.System(qt.MDS(4, 2, remove=False), qt.IR(qt.Pareto(2.5, 0.6)), 0.3), ()),
        ("RIQ(2), IR 0.5 Det(1) + 0.5 Exp(0.5)",
         qt.System(qt.RIQ(2), qt.IR(qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)],
                                               [0.5, 0.5])), 0.5), (0.5,)),
        ("MDS(4, 2) no removal, 0.5 Det + 0.5 Exp",
         qt.System(qt.MDS(4, 2, remove=False), qt.IR(mixed), 0.26666666666666666), ()),
    ]
    _timed(cases)


def _timed(cases) -> None:
    """CPU seconds of the mean and of each quantile (with its stated relative error where the
    law states one) of ``(name, system, levels)``."""
    import queuetheory as qt

    print()
    print(f"{'system':40s} {'statistic':>11s} {'value':>14s} {'stated':>8s} {'CPU s':>7s}")
    for name, system, levels in cases:
        c = time.process_time()
        p = qt.analyze(system)
        print(f"{name:40s} {'mean':>11s} {p.mean:14.10f} {'':>8s} "
              f"{time.process_time() - c:7.2f}", flush=True)
        for q in levels:
            c = time.process_time()
            try:
                value, error = p.response_time.ppf(q, full_output=True)
                stated = f"{error / value:8.1e}"
            except NotImplementedError:
                value, stated = p.quantile(q), "-"
            print(f"{'':40s} {f'q={q:.13g}':>11s} {value:14.10f} {stated:>8s} "
                  f"{time.process_time() - c:7.2f}", flush=True)


def lattice_runtimes() -> None:
    """CPU seconds and stated errors of quantiles just above the jumps of runtimes on atoms, and
    of an S&X batch with uniform job size and slowdown.

    Before the queued part was inverted from the smallest runtime with the density's jumps
    taken out, and before the uniform product's closed form (old and new side by side in one
    run, 2026-12-02): M/D/1 at 0.3, levels 0.7 + (1e-7, 1e-3) and 0.99: true errors 2.8e-7 and
    1.1e-6 relative (stated 2.2e-4, 1e-5); Random {2, 3, 5}: up to 1.8e-5 (stated 2.2e-4);
    Uniform(1, 2) x Uniform(1, 3) MDS(4, 2) without removal: 128 s for the mean.
    """
    import queuetheory as qt

    cases = [
        ("Random, M/D/1, load 0.3", qt.System(qt.Random(), qt.IR(qt.Deterministic(1.0)), 0.3,
                                              servers=1), (0.7 + 1e-7, 0.7 + 1e-3, 0.99)),
        ("Random, IR {2, 3, 5}, load 0.465",
         qt.System(qt.Random(), qt.IR(qt.Discrete([2.0, 3.0, 5.0], [0.25, 0.5, 0.25])), 0.125,
                   servers=1), (0.465076724502107, 0.7403515308271217, 0.99)),
        ("RIQ(2), IR Det(1), load 0.7", qt.System(qt.RIQ(2), qt.IR(qt.Deterministic(1.0)), 0.7),
         (0.5, 0.99)),
        ("MDS(4, 2) no removal, SX U(1,2) U(1,3)",
         qt.System(qt.MDS(4, 2, remove=False), qt.SX(qt.Uniform(1.0, 2.0), qt.Uniform(1.0, 3.0)),
                   0.1), (0.99,)),
    ]
    _timed(cases)


def many_atoms() -> None:
    """CPU seconds and stated errors of quantiles of Random and RIQ with runtimes on 60 and 500
    atoms off any lattice (their density's jumps at the atoms and the sums of two taken out
    without listing the pairs). With the jumps left in (before, 2026-12-02, old and new in one
    run): CDF errors near the atoms up to 2.5 times the estimate; p50 and p99 of Random with 60
    atoms 0.085 s (now 0.134 s: the estimate's safety factor refines more), RIQ(2) 0.40 s (now
    0.36 s)."""
    import numpy as np

    import queuetheory as qt

    rng = np.random.default_rng(1)
    cases = []
    for n in (60, 500):
        R = qt.Discrete(np.sort(rng.uniform(1.0, 3.0, n)), rng.dirichlet(np.ones(n)))
        for policy in (qt.Random(), qt.RIQ(2)):
            cases.append((f"{policy.label()}, IR {n} atoms, load 0.5",
                          qt.System(policy, qt.IR(R), 0.5 / R.mean()), (0.5, 0.99)))
    _timed(cases)


def far_tails() -> None:
    """CPU seconds and stated errors of far-tail quantiles (``1 - 1e-9``, ``1 - 1e-12``) of
    Random with runtimes exponential, hyperexponential and an atom plus a density, and of S&X
    runtimes on far-apart scales near load 1; the references (true quantiles) are printed by
    ``scripts/far_tail_references.py`` and ``scripts/multiscale_references.py``. Before
    (2026-12-02, old and new in one run): the transforms' denominators were computed directly
    away from load 1; M/M/1 at load 0.9 read 621.7 +- 1.8e4 at ``1 - 1e-12`` (truth 276.31),
    now 275.98 +- 18, at about 0.005 s more per call (0.004 -> 0.024 s for both levels)."""
    import queuetheory as qt

    mixed = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(1.0)], [0.5, 0.5])
    far = qt.SX(qt.HyperExponential([0.875, 0.125], [2.0, 0.25]),
                qt.Discrete([1, 1024], [1 - 2**-7, 2**-7]))
    levels = (1 - 1e-9, 1 - 1e-12)
    cases = [("Random, M/M/1, load 0.9", qt.System(qt.Random(), qt.IR(qt.Exponential(1.0)), 0.9),
              levels),
             ("Random, M/H2/1, load 0.85",
              qt.System(qt.Random(), qt.IR(qt.HyperExponential([0.9, 0.1], [2.0, 0.25])), 1.0),
              levels),
             ("Random, Det + Exp, load 0.95", qt.System(qt.Random(), qt.IR(mixed), 0.95), levels),
             ("Random, S&X H2 x {1, 1024}, load 0.999",
              qt.System(qt.Random(), far, 0.999 / far.mean_runtime()), (0.99, 1 - 1e-6)),
             ("RIQ(3), S&X H2 x {1, 1024}, load 0.999",
              qt.System(qt.RIQ(3), far, 0.999 / far.mean_runtime()), (0.99, 1 - 1e-6))]
    _timed(cases)


def scipy_laws_near_load_one() -> None:
    """Laws from ``from_scipy`` without a moment series (power tails, lognormal) near load 1:
    the remainder ``E[exp(-s B) - 1 + s B]`` by quadrature (``mg1._QuadratureRemainder``)
    beside the direct form it replaced (the same run, the quadrature remainder switched off),
    CPU seconds of the p50 and p99 with their stated relative errors. The references:
    ``scripts/pareto_sojourn_references.py``."""
    import warnings

    from scipy import stats

    import queuetheory as qt
    from queuetheory import mg1

    cases = [("Random, scipy pareto(1.8), load 0.99", qt.Random(), stats.pareto(1.8), 1e-2),
             ("Random, scipy pareto(2.5), 1 - 1e-6", qt.Random(), stats.pareto(2.5), 1e-6),
             ("RIQ(2), scipy pareto(1.8), load 0.99", qt.RIQ(2), stats.pareto(1.8), 1e-2),
             ("Random, scipy lognorm(1.5), load 0.99", qt.Random(), stats.lognorm(1.5), 1e-2),
             ("Random, scipy lognorm(1.5), 1 - 1e-6", qt.Random(), stats.lognorm(1.5), 1e-6)]
    of = mg1._Remainder.of

    def direct(B):
        psi = of(B)
        return None if isinstance(psi, mg1._QuadratureRemainder) else psi

    print()
    print(f"{'system':40s} {'remainder':>10s} {'p50':>14s} {'stated':>8s} {'p99':>16s} "
          f"{'stated':>8s} {'CPU s':>7s}")
    for name, policy, frozen, free in cases:
        for label in ("quadrature", "direct"):
            mg1._Remainder.of = of if label == "quadrature" else direct
            R = qt.from_scipy(frozen)
            c = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = qt.analyze(qt.System(policy, qt.IR(R), (1 - free) / R.mean()))
                try:
                    values, errors = p.response_time.ppf([0.5, 0.99], full_output=True)
                except ValueError:
                    values = errors = np.full(2, np.nan)
            stated = errors / values
            print(f"{name:40s} {label:>10s} {values[0]:14.6f} {stated[0]:8.1e} {values[1]:16.6f} "
                  f"{stated[1]:8.1e} {time.process_time() - c:7.2f}", flush=True)
    mg1._Remainder.of = of


if __name__ == "__main__":
    main()
    continuous_slowdowns()
    atoms_and_densities()
    lattice_runtimes()
    many_atoms()
    far_tails()
    scipy_laws_near_load_one()
