"""Redundancy-d mean-field with continuous X and S at d = 1, against the exact M/G/1.

At d = 1 the mean-field equation is the M/G/1 queue with runtime ``X S``: its mean is
Pollaczek-Khinchine, its busy fraction the load, its quantiles those of the Random analysis
(inversion of the Pollaczek-Khinchine transform, a different method). For 6 laws of ``X``,
7 of ``S`` and loads 0.3 and 0.8 this prints the true relative errors of the mean, busy
fraction and quantiles (p50, p95, p99) beside the stated ones, and the largest ratio of a
true error to its stated error (which must stay below 1).

Run from the repository root: ``python scripts/meanfield_continuous_sweep.py`` (about five
minutes; ``--quick`` for 2 laws of ``X``).
"""

import sys

import numpy as np
from scipy import stats

import queuetheory as qt
from queuetheory.analysis import meanfield

LEVELS = np.array([0.5, 0.95, 0.99])


def _format(values) -> str:
    return " ".join(f"{v:.1e}" for v in values)


def main(quick: bool = False) -> float:
    xs = [qt.Exponential(1.0), qt.Erlang(2, 2.0), qt.Erlang(3, 3.0),
          qt.HyperExponential([0.9, 0.1], [2.0, 0.2]), qt.Uniform(1.0, 3.0), qt.Uniform(0.0, 2.0)]
    ss = [qt.Exponential(1.0), qt.Erlang(2, 1.0), qt.Uniform(1.0, 3.0),
          qt.ShiftedExponential(0.5, 2.0), qt.BoundedPareto(1.5, 1.0, 10.0),
          qt.from_scipy(stats.lognorm(0.5)), qt.HyperExponential([0.5, 0.5], [0.5, 3.0])]
    worst = 0.0
    for X in xs[:2] if quick else xs:
        for S in ss:
            model = qt.SX(X=X, S=S)
            for load in (0.3, 0.8):
                lam = load / model.mean_runtime()
                pk = qt.mg1.pk_mean(lam, model.replica())
                try:
                    r = meanfield.solve_extrapolated(model, 1, lam)
                except NotImplementedError as error:
                    print(f"{X!r} {S!r} {load}: refused ({str(error)[:60]}...)")
                    continue
                exact = qt.analyze(qt.System(qt.Random(), model, lam)).response_time.ppf(LEVELS)
                q, q_error = r.quantile(LEVELS), r.quantile_error(LEVELS)
                ratios = [abs(r.mean - pk) / r.mean_error,
                          abs(r.busy_fraction - load) / r.busy_error,
                          *(np.abs(q - exact) / q_error)]
                worst = max(worst, *ratios)
                print(f"{X!r:34.34s} {S!r:30.30s} load {load}: mean "
                      f"{abs(r.mean / pk - 1):.1e} ({r.mean_error / pk:.1e}), busy "
                      f"{abs(r.busy_fraction / load - 1):.1e} ({r.busy_error / load:.1e}), "
                      f"p50/p95/p99 {_format(np.abs(q / exact - 1))} "
                      f"({_format(q_error / exact)}), "
                      f"ratio {max(ratios):.2f}", flush=True)
    print(f"largest true / stated error: {worst:.2f}")
    return worst


if __name__ == "__main__":
    main("--quick" in sys.argv)
