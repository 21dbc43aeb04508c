"""Runtime models: how long a job's replicas run.

* :class:`SX` -- the S&X model: a replica of a job on server ``j`` runs ``X * S_j``; the job size
  ``X`` is drawn once per job and shared by all its replicas, the slowdown ``S_j`` once per
  replica. Replicas started together finish together at ``X * min(S_1, ..., S_i)``.
* :class:`IR` -- independent runtimes: every replica draws its own runtime ``R_j``.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .distributions import Discrete, Distribution, Mixture, as_distribution, product

__all__ = ["RuntimeModel", "SX", "IR"]


class RuntimeModel:
    """Base class of the runtime models (see :class:`SX` and :class:`IR`).

    A subclass sets :attr:`name` and implements ``_fastest_law(i)`` (the law of the fastest of
    ``i`` replicas started together) and :meth:`sample_runtimes`; the base class caches the
    laws and their moments.

    Examples
    --------
    >>> import queuetheory as qt
    >>> model = qt.IR(qt.Exponential(1.0))
    >>> isinstance(model, qt.RuntimeModel), model.name, model.mean_runtime()
    (True, 'IR', 1.0)
    >>> model.fastest(3), model.fastest_moment(2, 2)   # E[min(R1, R2)^2] = 2 / 2^2
    (Exponential(rate=3.0), 0.5)
    >>> model.fastest_mixture([0.5, 0.5]).mean()         # one or two replicas, each w.p. 1/2
    0.75
    """

    #: Short name used in method descriptions.
    name: str = ""

    def __init__(self):
        self._fastest: dict[int, Distribution] = {}
        self._moments: dict[tuple[int, int], float] = {}

    def fastest(self, i: int) -> Distribution:
        """Law of the fastest of ``i`` replicas started together (``i >= 1``)."""
        i = _checks.positive_int("i", i)
        if i not in self._fastest:
            self._fastest[i] = self._fastest_law(i)
        return self._fastest[i]

    def replica(self) -> Distribution:
        """Law of one replica's runtime (the same for every replica)."""
        return self.fastest(1)

    def fastest_moment(self, i: int, k: int) -> float:
        """``E[min of i replicas' runtimes ^ k]`` (cached: the analysis calls it in loops)."""
        key = (i, k)
        if key not in self._moments:
            self._moments[key] = self.fastest(i).moment(k)
        return self._moments[key]

    def fastest_mixture(self, weights) -> Distribution:
        """Law of the fastest of ``I`` replicas started together, ``P(I = i) = weights[i-1]``
        (only the ``i`` with ``weights[i-1] > 0`` are built)."""
        w = _mixture_weights(weights)
        used = np.flatnonzero(w > 0)
        if used.size == 1:
            return self.fastest(int(used[0]) + 1)
        return Mixture([self.fastest(int(i) + 1) for i in used], w[used])

    def mean_runtime(self) -> float:
        """Mean runtime of one replica, ``E[R]``."""
        return self.fastest_moment(1, 1)

    def sample_runtimes(self, n_jobs: int, n_replicas: int, rng) -> np.ndarray:
        """Runtimes of ``n_replicas`` replicas of ``n_jobs`` jobs, shape (jobs, replicas)."""
        raise NotImplementedError

    def _fastest_law(self, i: int) -> Distribution:
        raise NotImplementedError


def _mixture_weights(weights) -> np.ndarray:
    w = _checks.real_array("weights", weights).ravel()
    if w.size == 0 or not np.all(np.isfinite(w) & (w >= 0)) or not w.sum() > 0:
        raise ValueError(f"weights must be finite, >= 0 and not all 0, got {weights!r}")
    return w / w.sum()


class SX(RuntimeModel):
    """The S&X model: replica runtime ``X * S_j`` with ``X`` shared by a job's replicas.

    Parameters
    ----------
    X : Distribution or scipy frozen distribution
        Job size, drawn once per job.
    S : Distribution or scipy frozen distribution
        Slowdown, drawn independently for every replica; must be > 0. Discrete (measured)
        or continuous: the law of ``X * min(S_1, ..., S_i)`` is a finite sum over the atoms of
        the minimum, or else an adaptive quadrature over its quantiles (CDF and transform to
        about 1e-12; about 1e-8 for the CDF when both ``X`` and ``S`` have kinks, such as
        the bounds of uniform laws), see :func:`queuetheory.product`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> model = qt.SX(X=qt.Exponential(rate=S.mean()), S=S)
    >>> round(model.mean_runtime(), 12)
    1.0
    >>> round(model.fastest(3).mean(), 6)   # E[X] E[min(S1, S2, S3)]
    0.456178
    >>> smooth = qt.SX(X=qt.Exponential(1.0), S=qt.Uniform(1.0, 3.0))
    >>> round(smooth.fastest(1).sf(1.0), 12)  # int_1^3 exp(-1/s) ds / 2 = 0.5861053397984295
    0.586105339798

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for
       job redundancy: decoupling server slowdown and job size", IEEE/ACM Transactions on
       Networking 25(6), 2017.
    """

    name = "S&X"

    def __init__(self, X, S):
        super().__init__()
        self.X = as_distribution(X)
        self.S = as_distribution(S)
        self._minima: dict[int, Distribution] = {}
        if float(self.S.cdf(0.0)) > 0:
            raise ValueError("S must be > 0 with probability 1 (the slowdown has mass at 0)")

    def __repr__(self):
        return f"SX(X={self.X!r}, S={self.S!r})"

    def _fastest_law(self, i):
        return product(self.X, self._slowdown_minimum(i))

    def _slowdown_minimum(self, i: int) -> Distribution:
        if i not in self._minima:
            self._minima[i] = self.S.minimum(i)
        return self._minima[i]

    def fastest_mixture(self, weights):
        w = _mixture_weights(weights)
        used = np.flatnonzero(w > 0)
        mins = [self._slowdown_minimum(int(i) + 1) for i in used]
        atoms = [m.atoms for m in mins]
        if all(a is not None for a in atoms):
            values = np.concatenate([a[0] for a in atoms])
            probs = np.concatenate([w[i] * a[1] for i, a in zip(used, atoms)])
            return product(self.X, Discrete(values, probs))
        # continuous slowdowns: a mixture of the products, each over its own minimum's
        # quantiles (closed forms), never over a mixture's quantiles found by bisection
        return super().fastest_mixture(w)

    def fastest_moment(self, i, k):
        key = (i, k)
        if key not in self._moments:
            self._moments[key] = self.X.moment(k) * self._slowdown_minimum(i).moment(k)
        return self._moments[key]

    def sample_runtimes(self, n_jobs, n_replicas, rng):
        sizes = self.X.sample(n_jobs, rng)
        return sizes[:, None] * self.S.sample((n_jobs, n_replicas), rng)


class IR(RuntimeModel):
    """Independent runtimes: every replica draws its own runtime from ``R``.

    Parameters
    ----------
    R : Distribution or scipy frozen distribution
        Runtime of one replica.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.IR(qt.Exponential(1.0)).fastest(4)
    Exponential(rate=4.0)

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for
       job redundancy: decoupling server slowdown and job size", IEEE/ACM Transactions on
       Networking 25(6), 2017 (the independent-runtimes model as the classical one the S&X
       model is compared with).
    """

    name = "IR"

    def __init__(self, R):
        super().__init__()
        self.R = as_distribution(R)

    def __repr__(self):
        return f"IR(R={self.R!r})"

    def _fastest_law(self, i):
        return self.R.minimum(i)

    def sample_runtimes(self, n_jobs, n_replicas, rng):
        return self.R.sample((n_jobs, n_replicas), rng)
