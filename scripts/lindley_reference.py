"""Reference for tests/test_mds.py::test_atoms_1e5_apart_against_lindleys_recursion: the M/G/1
sojourn time by Lindley's recursion (independent of queuetheory), runtimes R in {0.00037 (0.999),
37 (0.001)}, arrival rate 0.1 / E[R] (load 0.1). MDS(10, 0) without removal is 10 independent such
queues, so the batch's level-L quantile is the sojourn's at L^(1 / 10).

    w <- max(w + s - a, 0), T = w + s   (s ~ R, a ~ Exponential(lam)), from w = 0

48 runs of 2e7 customers (seeds 100..147); the quantiles of each run are averaged and the
standard error is that of the mean over the runs. Usage: ``python scripts/lindley_reference.py``
(about 35 s with numba; without it, pure Python, hours).
"""
import numpy as np

try:
    from numba import njit
except ImportError:  # pure Python: the same numbers, far slower
    def njit(function):
        return function


# numba compiles the legacy np.random functions only (hence NPY002 below)
@njit
def sojourns(n, lam, seed):
    np.random.seed(seed)  # noqa: NPY002
    w = 0.0
    out = np.empty(n)
    for i in range(n):
        s = 37.0 if np.random.random() < 0.001 else 0.00037  # noqa: NPY002
        out[i] = w + s
        w = max(w + s - np.random.exponential(1.0 / lam), 0.0)  # noqa: NPY002
    return out


if __name__ == "__main__":
    lam = 0.1 / 0.03737
    runs = np.array([np.quantile(sojourns(20_000_000, lam, seed), [0.5 ** 0.1, 0.99 ** 0.1])
                     for seed in range(100, 148)])
    print("quantiles", runs.mean(axis=0), "standard errors",
          runs.std(axis=0) / np.sqrt(len(runs)))
