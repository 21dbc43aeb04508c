"""Speed of five law-level paths against the ones they replaced, side by side in one run.

* the generic quantile search (false position, safeguarded; levels above 1/2 on the survival
  function) against plain bisection on the CDF, on the levels the S&X removal analysis asks of
  a hyperexponential job size (most of them next to 1), the law given as a ``Mixture`` of
  exponentials (which has no quantile of its own);
* the same levels of the law as a ``HyperExponential``: Newton's method on ``-log P(X > x)``
  against the generic search;
* the transform of a mixture of BoundedPareto minima (RIQ's first service) as one ray
  quadrature against one quadrature per minimum;
* moments of the fastest of ``i`` copies (BoundedPareto; atoms and exponentials) against the
  generic adaptive quadrature of ``P(X > t)^i``;
* Erlang's CDF and survival function in closed form (the Poisson sum) against scipy's
  ``gammainc`` and ``gammaincc``.

Best of 3 CPU times; the ratio is the figure to read on a shared machine. Run from the
repository root: ``python benchmarks/bench_laws.py``.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy import special  # noqa: E402

import queuetheory as qt  # noqa: E402
from queuetheory.distributions import Distribution, _Minimum  # noqa: E402


def _best(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _bisection(law, q):
    """The search the generic quantile used before: bisection on the CDF from a bracket of
    factors of 2, to 4e-16 relative."""
    hi = np.ones(q.size)
    lo = np.ones(q.size)
    grow = law._cdf_all(hi) < q
    while grow.any():
        lo = np.where(grow, hi, lo)
        hi = np.where(grow, 2 * hi, hi)
        grow &= law._cdf_all(hi) < q
    shrink = law._cdf_all(lo) >= q
    while shrink.any():
        hi = np.where(shrink, lo, hi)
        lo = np.where(shrink, 0.5 * lo, lo)
        shrink &= law._cdf_all(lo) >= q
    while np.any(hi - lo > 4e-16 * hi):
        mid = 0.5 * (lo + hi)
        ok = law._cdf_all(mid) >= q
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    return hi


def main():
    rows = []
    X = qt.HyperExponential([0.9, 0.1], [2.0, 0.25])
    mixture = qt.Mixture([qt.Exponential(2.0), qt.Exponential(0.25)], [0.9, 0.1])
    rng = np.random.default_rng(1)
    levels = np.concatenate([rng.random(20000), 1 - 10.0 ** -rng.uniform(3, 10, 80000)])
    rows.append(("generic search, 1e5 levels (80% above 0.999)",
                 _best(lambda: _bisection(mixture, levels)),
                 _best(lambda: mixture._ppf_all(levels))))
    rows.append(("HyperExponential ppf (Newton), the same levels",
                 _best(lambda: mixture._ppf_all(levels)), _best(lambda: X._ppf_all(levels))))
    B = qt.BoundedPareto(1.5, 0.3, 100.0)
    mix = qt.IR(B).fastest_mixture(np.ones(100))
    s = 0.05 * (1 + 1j) * np.arange(1, 2049)
    rows.append(("BoundedPareto minima 1..100 mixed, lst at 2048 s",
                 _best(lambda: mix._combine("_lst", s)), _best(lambda: mix._lst(s))))
    minima = [_Minimum(B, i) for i in range(2, 30, 3)]
    rows.append(("BoundedPareto minimum moments (10 i, k = 1, 2)",
                 _best(lambda: [Distribution._moment(m, k) for m in minima for k in (1, 2)], 1),
                 _best(lambda: [m._moment(k) for m in minima for k in (1, 2)])))
    R = qt.Mixture([qt.Deterministic(1.0), qt.Exponential(0.5)], [0.5, 0.5])
    minima = [_Minimum(R, i) for i in range(2, 30, 3)]
    rows.append(("0.5 Det(1) + 0.5 Exp(0.5) minimum moments",
                 _best(lambda: [Distribution._moment(m, k) for m in minima for k in (1, 2)], 1),
                 _best(lambda: [m._moment(k) for m in minima for k in (1, 2)])))
    y = np.concatenate([rng.exponential(3.0, 500000), rng.uniform(0.0, 40.0, 500000)])
    for k in (2, 4, 8):
        E = qt.Erlang(k, 1.0)
        rows.append((f"Erlang({k}) cdf and sf, 1e6 points (scipy gammainc/c)",
                     _best(lambda k=k: (special.gammainc(k, y), special.gammaincc(k, y))),
                     _best(lambda E=E: (E._cdf(y), E._sf(y)))))
    print(f"{'case':54s} {'before (s)':>10s} {'now (s)':>9s} {'ratio':>7s}")
    for name, before, now in rows:
        print(f"{name:54s} {before:10.4f} {now:9.4f} {before / now:7.1f}")


if __name__ == "__main__":
    main()
