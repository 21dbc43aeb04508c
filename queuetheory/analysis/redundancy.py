"""Redundancy-d and THRESHOLD-n: closed forms under IR exponential runtimes, mean-field otherwise.

* IR with exponential(``mu``) runtimes (Gardner et al. 2017): as ``k -> infinity``

      P(T > t) = (rho + (1 - rho) exp((d - 1) mu t))^(-d / (d - 1)),
      E[T] = (1 / mu) sum_(n >= 0) rho^n / (n (d - 1) + d) = 2F1(1, a; a + 1; rho) / (mu d),

  ``a = d / (d - 1)``; for ``k`` servers the exact mean is
  ``sum_(i=d..k) 1 / (i mu C(k, d) / C(i, d) - k lam)``. Stable iff ``lam < mu`` for every
  ``d``. Cost: every replica completion completes a job (the others are cancelled at once), and
  by memorylessness a busy server completes its replica at rate ``mu`` whenever it started, so
  each job consumes ``1 / mu`` of server time on average, for every ``d`` and ``k``; the busy
  fraction is ``rho``.
* Every other runtime model: the mean-field (cavity) equation of :mod:`.meanfield`, solved
  for IR runtimes, S&X with discrete slowdowns and S&X with a continuous slowdown and a job size
  on atoms as the workload equation of Replication(1, d) with removal (the same system, the
  same equation: :mod:`.removal`, errors about 1e-7), else (a continuous slowdown with a
  continuous job size; where that grid finds no law) on the cavity grid of :mod:`.meanfield`.
* THRESHOLD-0 is RIQ (:mod:`.riq`); THRESHOLD-n with ``n >= 1`` has no analysis here.
"""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath
import numpy as np

from .. import _checks
from ..distributions import Exponential
from ..policies import MDS, Policy, RedundancyD, Replication, Threshold
from ..prediction import Prediction
from ..quadrature import moment_from_sf
from ..response import ResponseLaw
from ..runtime import IR, SX, RuntimeModel
from ..system import System
from . import frontier_verdict, meanfield, register, settings
from .riq import analyze_riq

__all__ = [
    "stability_frontier",
    "smallest_unstable_d",
    "ir_exponential_mean",
    "ir_exponential_sf",
    "ir_exponential_finite_mean",
    "TabulatedResponseTime",
]

_REFERENCES = (
    "K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky, "
    "'Redundancy-d: the power of d choices for redundancy', Operations Research 65(4), 2017",
    "T. Hellemans, B. Van Houdt, 'Performance of redundancy(d) with identical/independent "
    "replicas', ACM TOMPECS 4(2), 2019 (mean-field workload equation)",
)
_TAIL_LEVEL = 1e-7     # smallest tail level the mean-field table resolves
_NEAR_FRONTIER = 0.01   # 1 - busy fraction below which the frontier is computed to decide
_ASSUMPTIONS = ("Poisson arrivals", "FCFS at every server",
                "replicas cancelled when the first finishes")


def _is_ir_exponential(model: RuntimeModel) -> bool:
    return isinstance(model, IR) and isinstance(model.R, Exponential)


def ir_exponential_mean(arrival_rate: float, rate: float, d: int) -> float:
    """Mean response time of Redundancy-d, IR exponential(``rate``) runtimes, k -> infinity.

    ``E[T] = (1/mu) sum_(n>=0) rho^n / (n (d-1) + d) = 2F1(1, a; a+1; rho) / (mu d)`` with
    ``a = d / (d - 1)`` (``1 / (mu - lam)`` for ``d = 1``); ``inf`` if ``rho >= 1``. The
    hypergeometric function in mpmath at 30 digits (``a`` exact): ``c - a - b = 0`` is the
    logarithmic case at ``rho -> 1``, where ``scipy.special.hyp2f1`` returned negative values
    (``d = 4`` at ``rho = 0.999``: -33.34 for 8.629).

    Parameters
    ----------
    arrival_rate : float
        Arrival rate per server ``lam`` > 0.
    rate : float
        Runtime rate ``mu`` > 0.
    d : int
        Replicas per job, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> from queuetheory.analysis.redundancy import ir_exponential_mean
    >>> import math
    >>> rho = 0.5   # d = 2: (-ln(1 - rho) - rho) / (mu rho^2)
    >>> round(ir_exponential_mean(0.5, 1.0, 2), 12), round((-math.log(1 - rho) - rho) / rho**2, 12)
    (0.77258872224, 0.77258872224)

    References
    ----------
    .. [1] Gardner et al., Operations Research 65(4), 2017, Theorem on the mean response time.
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    mu = _checks.positive("rate", rate)
    d = _checks.positive_int("d", d)
    rho = lam / mu
    if not _checks.stable_load(rho):
        return math.inf
    if d == 1:
        return 1.0 / (mu - lam)
    with mpmath.workdps(30):
        a = mpmath.mpf(d) / (d - 1)
        return float(mpmath.hyp2f1(1, a, a + 1, mpmath.mpf(lam) / mu) / (mpmath.mpf(mu) * d))


def ir_exponential_sf(t, arrival_rate: float, rate: float, d: int):
    """``P(T > t)`` of Redundancy-d, IR exponential runtimes, k -> infinity.

    ``(rho + (1 - rho) exp((d - 1) mu t))^(-d/(d-1))`` (``exp(-(mu - lam) t)`` for ``d = 1``).

    Examples
    --------
    >>> from queuetheory.analysis.redundancy import ir_exponential_sf
    >>> import math
    >>> round(ir_exponential_sf(1.0, 0.5, 1.0, 2), 12), round((0.5 + 0.5 * math.e) ** -2, 12)
    (0.289317952514, 0.289317952514)
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    mu = _checks.positive("rate", rate)
    d = _checks.positive_int("d", d)
    rho = lam / mu
    t = np.maximum(np.asarray(t, dtype=float), 0.0)
    if not _checks.stable_load(rho):
        out = np.ones_like(t)
    elif d == 1:
        out = np.exp(-(mu - lam) * t)
    else:
        x = (d - 1) * mu * t
        out = np.exp(-d / (d - 1.0) * (x + np.log((1.0 - rho) + rho * np.exp(-x))))
    return float(out) if out.ndim == 0 else out


def _ir_exponential_ppf(q, rho: float, mu: float, d: int):
    """The inverse of :func:`ir_exponential_sf`, written so that no digit cancels near ``q =
    0``: ``log1p(expm1(u) / (1 - rho)) / ((d - 1) mu)``, ``u = -log1p(-q) (d - 1) / d``."""
    log_p = np.log1p(-np.asarray(q, dtype=float))
    if d == 1:
        return -log_p / (mu * (1.0 - rho))
    return np.log1p(np.expm1(-log_p * (d - 1) / d) / (1.0 - rho)) / ((d - 1) * mu)


def _ir_exponential_ppf_error(q, rho: float, lam: float, mu: float, d: int) -> np.ndarray:
    """The rounding error of :func:`_ir_exponential_ppf` at the levels ``q``, measured: its
    distance to :func:`_ir_exponential_ppf_mp` at 30 digits, plus two units in the last place
    (the formula is exact; its floating-point evaluation is not)."""
    q = np.asarray(q, dtype=float)
    values = np.asarray(_ir_exponential_ppf(q, rho, mu, d), dtype=float)
    out = np.empty(q.shape)
    with mpmath.workdps(30):
        for i, level in np.ndenumerate(q):
            exact = _ir_exponential_ppf_mp(mpmath.mpf(float(level)), lam, mu, d)
            out[i] = float(abs(mpmath.mpf(float(values[i])) - exact))
    return out + 2 * np.spacing(np.abs(values))


def _ir_exponential_log_sf_mp(t: mpmath.mpf, lam: float, mu: float, d: int) -> mpmath.mpf:
    """``log P(T > t)`` of :func:`ir_exponential_sf` in mpmath arithmetic, written so that no
    digit cancels: ``-(d / (d - 1)) log1p((1 - rho) expm1((d - 1) mu t))``."""
    lam, mu = mpmath.mpf(lam), mpmath.mpf(mu)
    if d == 1:
        return -(mu - lam) * t
    rho = lam / mu
    return -mpmath.mpf(d) / (d - 1) * mpmath.log1p((1 - rho) * mpmath.expm1((d - 1) * mu * t))


def _ir_exponential_ppf_mp(q: mpmath.mpf, lam: float, mu: float, d: int) -> mpmath.mpf:
    """The ``q``-quantile, the inverse of :func:`_ir_exponential_log_sf_mp`, in mpmath."""
    lam, mu = mpmath.mpf(lam), mpmath.mpf(mu)
    log_p = mpmath.log1p(-q)
    if d == 1:
        return -log_p / (mu - lam)
    rho = lam / mu
    u = -log_p * (d - 1) / d
    return mpmath.log1p(mpmath.expm1(u) / (1 - rho)) / ((d - 1) * mu)


_FINITE_K_MP = 200_000
"""Servers up to which :func:`ir_exponential_finite_mean` sums in mpmath (about 2 s at the
largest); beyond, in double precision (relative error at most about ``4 eps k``)."""


def ir_exponential_finite_mean(arrival_rate: float, rate: float, d: int, servers: int) -> float:
    """Exact mean response time of Redundancy-d with ``k`` servers, IR exponential runtimes.

    ``E[T] = sum_(i=d..k) 1 / (i mu C(k, d) / C(i, d) - k lam)`` (from the product-form
    stationary distribution); ``inf`` if ``lam >= mu``. Each denominator is summed as ``k (mu
    - lam) + mu q_i`` with ``q_i = i C(k, d) / C(i, d) - k >= 0`` from the recurrence ``q_k =
    0``, ``q_i = (i q_(i+1) + k (d - 1)) / (i + 1 - d)`` (non-negative terms throughout: the
    direct form cancels near load 1, where the mean was 6.7e-5 off at ``1 - 1e-12``), in
    mpmath with ``2 log2(k) + 20`` guard bits for ``k <= 200000`` (correctly rounded but for
    about an ulp), in double precision beyond.

    Examples
    --------
    >>> from queuetheory.analysis.redundancy import ir_exponential_finite_mean
    >>> ir_exponential_finite_mean(0.5, 1.0, 1, 1)    # M/M/1
    2.0
    >>> round(ir_exponential_finite_mean(0.5, 1.0, 2, 2), 12)   # k = d = 2: M/M/1 at rate 2 mu
    1.0

    References
    ----------
    .. [1] Gardner et al., Operations Research 65(4), 2017, Section 4 (exact analysis).
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    mu = _checks.positive("rate", rate)
    d = _checks.positive_int("d", d)
    k = _checks.positive_int("servers", servers, minimum=d)
    if lam >= mu:
        return math.inf
    step = k * (d - 1)
    if k > _FINITE_K_MP:
        base, q, terms = k * (mu - lam), 0.0, []
        for i in range(k, d - 1, -1):
            if i < k:
                q = (i * q + step) / (i + 1 - d)
            terms.append(1.0 / (base + mu * q))
        return math.fsum(terms)
    with mpmath.workprec(73 + 2 * k.bit_length()):
        L, M = mpmath.mpf(lam), mpmath.mpf(mu)
        base, q, terms = k * (M - L), mpmath.mpf(0), []
        for i in range(k, d - 1, -1):
            if i < k:
                q = (i * q + step) / (i + 1 - d)
            terms.append(1 / (base + M * q))
        return float(mpmath.fsum(terms))


class TabulatedResponseTime(ResponseLaw):
    """A response time known through its tail ``P(T > t)`` (a callable or a table).

    ``sf`` is the given tail (a table is interpolated linearly in ``log P(T > t)`` and is 0
    beyond its last point); ``ppf`` inverts it by bisection unless a closed form is given;
    ``mean`` returns the given mean. A :class:`~queuetheory.ResponseLaw`: ``precision=`` has a
    high-precision path where mpmath closed forms are given (``log_sf_mp`` and ``ppf_mp``) and
    raises ``NotImplementedError`` otherwise; ``full_output=True`` gives the quantiles' errors
    where ``error`` is given and raises ``NotImplementedError`` otherwise.

    Parameters
    ----------
    sf : callable or tuple of arrays
        ``t -> P(T > t)`` for numpy arrays, or ``(grid, values)``.
    mean : float
        ``E[T]``.
    ppf : callable, optional
        Closed-form quantile function.
    breaks : array, optional
        Points ``0 = t_0 < ... < t_m`` with ``P(T > t) = 0`` beyond ``t_m`` and ``sf`` a cubic
        polynomial between consecutive points (moments ``E[T^k] = int k t^(k-1) P(T > t) dt``
        are then integrated exactly by 4-point Gauss-Legendre rules on every cell).
    error : callable, optional
        ``q (array) -> estimated absolute errors of ppf(q)``, returned by
        ``ppf(q, full_output=True)`` and :meth:`~queuetheory.ResponseLaw.quantile_error`.
    label : str, optional
        How the tail was obtained, for messages.
    log_sf_mp, ppf_mp : callable, optional
        Closed forms in mpmath arithmetic at the current precision: ``t (mpf > 0) ->
        log P(T > t)`` and ``q (mpf in (0, 1)) -> ppf(q)``. Both given: the high-precision
        path, evaluated with 10 guard digits and rounded to the digits asked.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.analysis.redundancy import TabulatedResponseTime
    >>> grid = np.linspace(0.0, 40.0, 4001)
    >>> T = TabulatedResponseTime((grid, np.exp(-grid)), mean=1.0)
    >>> round(T.sf(1.0), 9), round(T.ppf(0.5), 6), T.mean()
    (0.367879441, 0.693147, 1.0)
    """

    _label = "TabulatedResponseTime"

    def __init__(self, sf, mean: float, ppf=None, breaks=None, error=None,
                 label: str | None = None, log_sf_mp=None, ppf_mp=None):
        if callable(sf):
            self._tail = sf
        else:
            grid, values = (np.asarray(v, dtype=float) for v in sf)
            logs = np.log(np.maximum(values, 1e-300))

            def tail(t):
                return np.where(t > grid[-1], 0.0, np.exp(np.interp(t, grid, logs)))

            self._tail = tail
        self._mean = float(mean)
        self._closed_ppf = ppf
        self._breaks = None if breaks is None else np.asarray(breaks, dtype=float)
        self._error = error
        if label is not None:
            self._label = f"TabulatedResponseTime ({label})"
        self._accuracy = ("its values are double precision" if error is None else
                          "its values are double precision, with error estimates of the "
                          "quantiles (ppf(q, full_output=True))")
        self._mp = (log_sf_mp, ppf_mp)
        self.high_precision = log_sf_mp is not None and ppf_mp is not None

    def __repr__(self):
        return f"TabulatedResponseTime(mean={self._mean!r})"

    def _sf(self, x):
        return self._tail(x)

    def _ppf(self, q):
        if self._closed_ppf is not None:
            return self._closed_ppf(q)
        return super()._ppf(q)

    def _quantile_errors(self, q, values):
        return None if self._error is None else np.asarray(self._error(q), dtype=float)

    def _distribution_mp(self, x, precision, upper):
        log_sf = self._mp[0]

        def one(t):
            log_tail = log_sf(t) if t > 0 else mpmath.mpf(0)
            return mpmath.exp(log_tail) if upper else -mpmath.expm1(log_tail)

        return _elementwise_mp(one, x, precision)

    def _quantile_mp(self, levels, precision, tails=None):
        if tails is None:
            return _elementwise_mp(self._mp[1], levels, precision)
        # a level 1 - p formed again, and used, with as many more digits as p has leading
        # zeros
        extra = [0 if p is None else max(0, int(-mpmath.floor(mpmath.log10(p))))
                 for p in tails.ravel()]
        args = np.empty(levels.size, dtype=object)
        for i, (level, p) in enumerate(zip(levels.ravel(), tails.ravel())):
            with mpmath.workdps(precision + 10 + extra[i]):
                args[i] = level if p is None else 1 - p
        return _elementwise_mp(self._mp[1], args.reshape(levels.shape), precision, extra)

    def _moment(self, k):
        if k == 1:
            return self._mean
        if self._breaks is None:
            return super()._moment(k)
        return moment_from_sf(self._tail, k, self._breaks, rule=4, tail=False)


def _elementwise_mp(function, args: np.ndarray, precision: int, extra=None):
    """``function`` of each entry (as an mpf) with 10 guard digits (and ``extra[i]`` more),
    rounded to ``precision`` digits: an mpf for a 0-d ``args``, else an object array of its
    shape."""
    out = np.empty(args.size, dtype=object)
    for i, arg in enumerate(args.ravel()):
        with mpmath.workdps(precision + 10 + (0 if extra is None else extra[i])):
            value = function(mpmath.mpf(arg))
        with mpmath.workdps(precision):
            out[i] = +value
    return out.reshape(args.shape)[()]


def _ir_exponential(system: System) -> Prediction:
    policy, model, lam = system.policy, system.runtime, system.arrival_rate
    mu, d, k = model.R.rate, policy.d, system.servers
    rho = lam / mu
    stable = _checks.stable_load(rho)
    assumptions = _ASSUMPTIONS + ("independent exponential runtimes (IR)",)
    if k is not None:
        method = (f"Redundancy-d (d={d}), IR exponential runtimes: exact finite-k mean for "
                  f"k = {k} servers from the product-form stationary distribution (Gardner et "
                  f"al. 2017); cost 1/mu by memorylessness; no finite-k distribution")
        mean = ir_exponential_finite_mean(lam, mu, d, k)
        errors = {}
        if k > _FINITE_K_MP and math.isfinite(mean):
            # summed in double precision: each step of the recurrence rounds by at most 3 eps
            # and the sum is exact (fsum), at most 4 eps k relative
            errors = {"mean": 4 * np.finfo(float).eps * k * mean, "busy_fraction": 0.0}
            method += f"; summed in double precision, estimated error {errors['mean']:.2g}"
        return Prediction(system, method=method, exact=True, stable=stable, mean=mean,
                          busy_fraction=min(rho, 1.0), cost=1.0 / mu, errors=errors,
                          assumptions=assumptions, references=_REFERENCES[:1], limit=False)
    method = (f"Redundancy-d (d={d}), IR exponential runtimes: closed form in the k -> infinity "
              f"limit, P(T > t) = (rho + (1 - rho) exp((d-1) mu t))^(-d/(d-1)) (Gardner et "
              f"al. 2017); cost 1/mu by memorylessness")
    mean = ir_exponential_mean(lam, mu, d)

    def response_time():
        return TabulatedResponseTime(lambda t: ir_exponential_sf(t, lam, mu, d), mean,
                                     ppf=lambda q: _ir_exponential_ppf(q, rho, mu, d),
                                     error=lambda q: _ir_exponential_ppf_error(q, rho, lam, mu,
                                                                               d),
                                     label="Redundancy-d, IR exponential: closed form",
                                     log_sf_mp=lambda t: _ir_exponential_log_sf_mp(t, lam, mu, d),
                                     ppf_mp=lambda q: _ir_exponential_ppf_mp(q, lam, mu, d))

    return Prediction(system, method=method, exact=True, stable=stable, mean=mean,
                      response_time=response_time, busy_fraction=min(rho, 1.0),
                      cost=1.0 / mu, assumptions=assumptions + ("k -> infinity",),
                      references=_REFERENCES[:1])


def _crossing_applies(model: RuntimeModel) -> bool:
    """Whether the level-crossing grid of :mod:`.removal` takes the model: IR runtimes, S&X
    with a discrete slowdown, and S&X with a continuous slowdown and a job size on atoms (one
    IR convolution per atom, :mod:`.removal_continuous`: 0.01 s and errors about 1e-8 where
    the cavity grid took 0.1 s and stated 1e-4 to 1e-3), and S&X with a discrete slowdown and
    a job size mixing a density with at most ``removal._X_ATOMS_MAX`` atoms (each a piece of
    the rule over ``X``; the cavity grid, which integrates against the density of ``X``,
    refuses it), ``E[R^2] < inf``. Not a continuous job size with a continuous slowdown (the
    grid is 5 s per point there against the cavity grid's 0.6 s: the cavity grid, stated)."""
    from .removal import _X_ATOMS_MAX

    if isinstance(model, SX):
        if model.S.atoms is None and (model.S._has_atoms or model.X.atoms is None):
            return False
        if model.X._has_atoms and model.X.atoms is None:
            masses = model.X._point_masses()
            if masses is None or masses[0].size > _X_ATOMS_MAX:
                return False
    return math.isfinite(model.replica().moment(2))


def _crossing_on_request(model: RuntimeModel) -> bool:
    """Whether the level-crossing grid takes the model but is left out for speed: S&X with a
    continuous job size and a continuous slowdown (``E[R^2] < inf``), where
    ``Replication(1, d)`` with removal is a second, independent solution of the same system
    (seconds per point against the cavity grid's 0.2 to 1 s). Neither is always the more
    accurate: against the independent reference of ``tests/test_meanfield.py``
    (``CONTINUOUS_D2``), Exp x Exp at d = 2, lam = 0.3, the cavity mean is 2.8e-6 off (3.4e-4
    stated) and the level-crossing mean 2.0e-5 off (6.0e-5 stated)."""
    return (isinstance(model, SX) and model.S.atoms is None and not model.S._has_atoms
            and model.X.atoms is None and not model.X._has_atoms
            and math.isfinite(model.replica().moment(2)))


def _frontier_and_error(model: RuntimeModel, d: int, points: int) -> tuple[float, float]:
    """The frontier of the travelling-front form of the level-crossing equation
    (:func:`queuetheory.analysis.removal.frontier` of Replication(1, d), errors about 1e-7
    where the continuation of the cavity grid states 1e-5 to 1e-3); where that does not
    apply or cannot place the front, the continuation (:mod:`.meanfield`). Remembered per
    accuracy goal and grid budget (:func:`.settings`: the front's grids depend on both). Also
    where the frontier is known exactly (S&X with exponential slowdowns, ``1 / E[R]``:
    :func:`stability_frontier` says so): its error band is where the cavity grid's verdicts and
    estimates are not trusted (Exp x Exp at d = 2, 1 - 1e-9 of the frontier: with the exact
    frontier the cavity grid answered 12.44 +- 8.58 where the mean is above 19.5)."""
    return _frontier_remembered(model, d, points, settings())


@lru_cache(maxsize=256)
def _frontier_remembered(model: RuntimeModel, d: int, points: int,
                         solved: tuple[float, float]) -> tuple[float, float]:
    """:func:`_frontier_and_error` under the goal and budget ``solved`` (those in force)."""
    from . import removal

    if _crossing_applies(model):
        try:
            return removal.frontier(Replication(1, d), model.R if isinstance(model, IR) else model,
                                    full_output=True)
        except removal.RemovalError:
            pass
    return meanfield.frontier_extrapolated(model, d, points=points)


def stability_frontier(runtime: RuntimeModel, d: int | Policy, *, points: int = 400,
                       full_output: bool = False) -> float | tuple[float, float]:
    """Largest stable arrival rate per server of Redundancy-d (or of a policy) as ``k -> infinity``.

    ``d`` may be a policy object: ``RedundancyD(d)``; ``MDS(n, m)`` or ``Replication(n, d)``
    (without removal ``n / ((n + m) E[R])`` resp. ``1 / (d E[R])``; with removal, IR or S&X
    runtimes, the travelling-front equation of
    :func:`queuetheory.analysis.removal.frontier`, which can exceed ``1 / E[R]``).

    ``1 / E[R]`` for ``d = 1`` (M/G/1) and ``mu`` for IR exponential(``mu``) runtimes (every
    ``d``, Gardner et al. 2017); otherwise the mean-field frontier, the arrival rate at which
    the workload's travelling front stands still: for IR runtimes and S&X with discrete
    slowdowns that of Replication(1, d) with removal (the same system;
    :func:`queuetheory.analysis.removal.frontier`, errors about 1e-7), else (continuous
    slowdowns, or where that method cannot place the front) the continuation of
    :func:`queuetheory.analysis.meanfield.frontier` from the stationary solutions as the busy
    fraction tends to 1 (Richardson-extrapolated over grid steps ``h`` and ``h / 2``). Cached
    per runtime model and ``d``.

    Parameters
    ----------
    runtime : RuntimeModel
        ``qt.SX(X, S)`` or ``qt.IR(R)``.
    d : int
        Replicas per job, >= 1.
    points : int
        Grid intervals of the continuation of the cavity grid (default 400; Redundancy-d
        where it is used).
    full_output : bool, optional
        Also return the estimated absolute error of the frontier (0 where it is exact:
        exponential runtimes, ``d = 1``, no removal).

    Returns
    -------
    float or (float, float)
        The frontier ``lam*``: stable for ``arrival_rate < lam*``, unstable above; with
        ``full_output``, ``(lam*, estimated error)``.

    Raises
    ------
    NotImplementedError
        MDS or Replication with removal where the travelling-front method cannot place the
        frontier (the front forms too slowly for the grid), pointing to ``qt.simulate``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.stability_frontier(qt.IR(qt.Exponential(2.0)), d=5)
    2.0
    >>> S = qt.slowdowns.facebook()
    >>> round(qt.stability_frontier(qt.SX(X=qt.Exponential(rate=S.mean()), S=S), d=10), 3)
    0.663
    >>> qt.stability_frontier(qt.IR(qt.Exponential(1.0)), qt.MDS(10, 2))   # with removal
    1.0
    >>> lam, error = qt.stability_frontier(qt.IR(qt.Deterministic(1.0)), qt.MDS(4, 2),
    ...                                    full_output=True)
    >>> round(lam, 6), bool(error < 1e-6)
    (0.851515, True)

    References
    ----------
    .. [1] Gardner et al., Operations Research 65(4), 2017 (IR exponential).
    """
    if not isinstance(runtime, RuntimeModel):
        raise ValueError(f"runtime must be qt.SX(X, S) or qt.IR(R), got {runtime!r}")
    full_output = _checks.boolean("full_output", full_output)
    if isinstance(d, MDS | Replication):
        _checks.analysable(d)
        value, error = _batch_frontier(runtime, d)
        return (value, error) if full_output else value
    if isinstance(d, RedundancyD):
        d = d.d
    elif isinstance(d, Policy):
        raise ValueError(f"policy must be qt.RedundancyD, qt.MDS or qt.Replication, got {d!r}")
    d = _checks.positive_int("d", d)
    _checks.analysable(RedundancyD(d))
    points = _checks.positive_int("points", points, minimum=50)
    from . import removal

    if _is_ir_exponential(runtime):
        value, error = float(runtime.R.rate), 0.0
    elif d == 1 or removal._memoryless_given_x(runtime):
        value, error = 1.0 / runtime.mean_runtime(), 0.0
    else:
        value, error = _frontier_and_error(runtime, d, points)
    return (float(value), float(error)) if full_output else float(value)


def _batch_frontier(runtime: RuntimeModel, policy) -> tuple[float, float]:
    from . import mds, removal

    if not policy.remove:
        return mds.stability_limit(policy, runtime), 0.0
    try:
        return removal.frontier(policy, runtime.R if isinstance(runtime, IR) else runtime,
                                full_output=True)
    except removal.RemovalError as error:   # the documented refusal, not an ArithmeticError
        raise NotImplementedError(f"stability frontier of {policy.label()}: {error}") from None


def smallest_unstable_d(runtime: RuntimeModel, arrival_rate: float, *, d_max: int = 64,
                        points: int = 400) -> int | None:
    """Smallest ``d`` at which Redundancy-d is unstable at ``arrival_rate`` (k -> infinity).

    Bisection on ``d`` in ``[1, d_max]`` over :func:`stability_frontier`, assuming the frontier
    decreases with ``d`` (as it does in every case computed, e.g. the Facebook slowdowns with
    exponential ``X``: 0.910, 0.839, 0.768, 0.663, 0.494 at d = 2, 3, 5, 10, 20). ``None`` if
    the system is stable for every ``d <= d_max`` (IR exponential: for every ``d`` iff
    ``arrival_rate < mu``). Each ``d`` is judged by the rule of :func:`analyze` (the frontier
    with its error, ``queuetheory.analysis.frontier_verdict``).

    Parameters
    ----------
    runtime : RuntimeModel
        The runtime model (:class:`~queuetheory.SX` or :class:`~queuetheory.IR`).
    arrival_rate : float
        Arrival rate per server, > 0.
    d_max : int, optional
        Largest ``d`` searched, >= 1 (default 64).
    points : int, optional
        Grid intervals of the frontier's cavity grid, passed to :func:`stability_frontier`
        (default 400).

    Returns
    -------
    int or None
        The smallest unstable ``d`` in ``[1, d_max]``, or ``None`` if every ``d <= d_max`` is
        stable.

    Raises
    ------
    ValueError
        When ``arrival_rate`` is not > 0 or ``d_max`` is not an integer >= 1.
    NotImplementedError
        When ``arrival_rate`` lies within the estimated error of the frontier at a ``d`` the
        bisection probes: whether that ``d`` is stable is undecided.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.smallest_unstable_d(qt.IR(qt.Exponential(1.0)), 0.9) is None
    True

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for
       job redundancy: decoupling server slowdown and job size", IEEE/ACM Transactions on
       Networking 25(6), 2017 (the S&X model and Redundancy-d under it).
    """
    lam = _checks.positive("arrival_rate", arrival_rate)
    d_max = _checks.positive_int("d_max", d_max)
    if _is_ir_exponential(runtime):
        return None if lam < runtime.R.rate else 1

    def unstable(d):
        frontier, error = stability_frontier(runtime, d, points=points, full_output=True)
        return not frontier_verdict(f"Redundancy-d (d={d}), {runtime.name} runtimes", lam,
                                    frontier, error)

    if not unstable(d_max):
        return None
    lo, hi = 0, d_max                      # stable at lo (or lo = 0), unstable at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if unstable(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _level_crossing(system: System, where: str, assumptions: tuple) -> Prediction | None:
    """The mean-field solved by the level-crossing grid of :mod:`.removal`: Redundancy-d is
    Replication(1, d) with removal (a job's other replicas are cancelled when its first
    completes), whose workload equation is the cavity equation of :mod:`.meanfield` in
    ``F = 1 - H`` and ``q = 1 - a``. Errors of 1e-7 relative where the cavity grid states 1e-5
    to 1e-3. ``None`` where it does not apply (S&X with a continuous slowdown, runtimes with
    ``E[R^2] = inf``) or finds no stationary law on its grids (then the cavity grid)."""
    from . import removal

    model, d = system.runtime, system.policy.d
    if not _crossing_applies(model):
        return None
    name = (f"Redundancy-d (d={d}), {model.name} runtimes: mean-field (cavity) approximation, "
            f"{where}, solved as Replication(1, {d}) with removal (the same system)")
    try:
        return removal.grid_prediction(system, name, assumptions, references=_REFERENCES)
    except removal.RemovalError:
        return None


def _beyond_frontier(system: System, where: str, assumptions: tuple, frontier: float,
                     error: float) -> Prediction:
    """The unstable result: the arrival rate at or above the frontier plus its error."""
    model, d = system.runtime, system.policy.d
    method = (f"Redundancy-d (d={d}), {model.name} runtimes: mean-field (cavity) "
              f"approximation, {where}: unstable, the arrival rate is at or above the stability "
              f"frontier {frontier:.6g} (estimated error {error:.2g}) plus its error (no "
              f"stationary workload law)")
    return Prediction(system, method=method, exact=False, stable=False, mean=math.inf,
                      busy_fraction=1.0, assumptions=assumptions, references=_REFERENCES)


def _mean_field(system: System) -> Prediction:
    from . import removal

    policy, model, lam = system.policy, system.runtime, system.arrival_rate
    d = policy.d
    points = 400
    where = ("k -> infinity" if system.servers is None
             else f"k -> infinity limit used as an approximation for k = {system.servers}")
    assumptions = _ASSUMPTIONS + (f"{model.name} runtimes",
                                  "k -> infinity (asymptotic independence of servers)")
    # Stability is decided by the solve itself: lam(b) increases with the busy fraction b
    # towards the frontier, so a stationary solution at lam (b < 1, decaying tails) means
    # lam < lam*. The frontier is computed (cached) only when no solution is found or b is
    # within _NEAR_FRONTIER of 1, where the grid's own frontier may differ from the
    # extrapolated one by its discretisation error.
    crossing = _level_crossing(system, where, assumptions)
    too_large = result = None
    frontier = None
    if crossing is None and _crossing_applies(model):
        # the level-crossing grid found no stationary law: the frontier (cached; a fraction
        # of a second) decides before the cavity grid is tried (seconds, and in vain beyond
        # the frontier or within its error: 8 s for a refusal at the frontier, S&X exp X x
        # {1, 4}, d = 2)
        frontier, error = _frontier_and_error(model, d, points)
        if not frontier_verdict(f"Redundancy-d (d={d}), {model.name} runtimes", lam, frontier,
                                error):
            return _beyond_frontier(system, where, assumptions, frontier, error)
    if crossing is None:
        try:
            result = meanfield.solve_extrapolated(model, d, lam, points=points)
        except meanfield.GridTooLarge as error:
            too_large = error                 # unless the system is unstable: see below
        except meanfield.MeanFieldError:
            pass
    busy = (crossing.busy_fraction if crossing is not None else
            None if result is None else result.fine.busy_fraction)
    if busy is None or 1.0 - busy < _NEAR_FRONTIER:
        frontier, error = _frontier_and_error(model, d, points)
        frontier_text = f"stability frontier {frontier:.6g} (estimated error {error:.2g})"
        stable = frontier_verdict(f"Redundancy-d (d={d}), {model.name} runtimes", lam,
                                  frontier, error)
        if too_large is not None and stable:
            raise too_large
        if not stable:
            return _beyond_frontier(system, where, assumptions, frontier, error)
        if crossing is None and result is None:
            # Between the N-point grid's own frontier and the extrapolated one: a finer grid
            # moves its frontier towards the extrapolated value.
            try:
                result = meanfield.solve_extrapolated(model, d, lam, points=4 * points)
            except meanfield.GridTooLarge:
                raise
            except meanfield.MeanFieldError:
                result = None
        if crossing is None and result is None:
            raise NotImplementedError(
                f"Redundancy-d (d={d}), {model.name} runtimes: no mean-field solution found at "
                f"arrival_rate = {lam!r}, below the {frontier_text} minus its error: too close "
                f"to the frontier for the grid; use qt.simulate, or an arrival_rate further "
                f"from the frontier")
    stability = (f"stable: arrival rate below the {frontier_text} minus its error"
                 if frontier is not None else
                 "stable: a stationary workload law exists at this arrival rate (the "
                 f"grid's busy fraction {busy:.4g} < 1; the arrival rate increases with the "
                 "busy fraction up to the frontier)")
    if crossing is not None:
        return crossing._relabelled("", suffix=f"; {stability}")
    if _crossing_applies(model) and 1.0 - result.fine.busy_fraction < _NEAR_FRONTIER:
        # the level-crossing grid applies but found no stationary law this close to the
        # frontier: the cavity grid's estimates do not hold there (S&X {0.5, 3} x Exp(2), d = 2,
        # at 1 - 1e-6 of the frontier: mean 5.655 +- 2.06 where the ODE of
        # scripts/sx_atom_phase_removal_references.py gives 9.4054; at 1 - 1e-9, 5.659 +- 2.07
        # against 14.585)
        raise NotImplementedError(
            f"Redundancy-d (d={d}), {model.name} runtimes: arrival_rate = {lam!r} is too close "
            f"to the frontier for the level-crossing grid (no stationary law on its grids), "
            f"and the cavity grid's error estimates do not hold there; use qt.simulate, or an "
            f"arrival_rate further from the frontier")
    fine = result.fine
    n, h = fine.grid.size - 1, float(fine.grid[1])
    busy, busy_error, busy_text = result.busy_fraction, result.busy_error, ""
    if removal._memoryless_given_x(model):
        busy, busy_error = lam * model.mean_runtime(), 0.0
        busy_text = " (lam E[R] exactly: exponential slowdowns, memoryless given X)"
    levels = np.array([0.5, 0.95, 0.99])
    q_errors = result.quantile_error(levels)
    q_text = ", ".join(f"p{round(100 * q)} {e:.2g}" for q, e in zip(levels, q_errors))
    if result.fourth_order:
        third = (", extrapolated again with N/4 points (fourth order: X integrated between "
                 "the kinks of the interpolated workload), errors the estimated error of the "
                 "first extrapolation" + ("" if result.resolved else " times 15 (the memory "
                                          "bound keeps the step above E[X] min S / 2)"))
    elif result.log_term:
        third = (" (tail, quantiles), mean and busy fraction expanded in h^2 log h and h^2 "
                 "through N/4, N/2 and N points, errors four times the change from N/8, N/4 "
                 "and N/2 points")
    elif result.smooth_pair and result.previous is not None:
        third = (", errors four times the change from the extrapolation of N/4 and N/2 "
                 "points (of a quantile: of the tail near it, over the density)")
    elif result.previous is not None:
        third = (", errors at least twice the change from the extrapolation of N/4 and N/2 "
                 "points (a third grid)")
    else:
        third = ""
    extrapolation = (f"Richardson-extrapolated from N/2 and N points{third}"
                     if result.second_order
                     else "from N points (first order: the atoms of the runtimes have no "
                          "common measure, so the jumps fall between nodes)")
    method = (f"Redundancy-d (d={d}), {model.name} runtimes: mean-field (cavity) approximation, "
              f"{where}, grid of N = {n} points, step h = {h:.4g} on [0, {fine.grid[-1]:.4g}] "
              f"({meanfield.scheme(model, result)}), Newton's method; mean, busy fraction "
              f"and tail P(T > t) "
              f"{extrapolation}; estimated errors: mean {result.mean_error:.2g}, busy "
              f"fraction {busy_error:.2g}{busy_text}, quantiles {q_text}; quantiles by "
              f"bisection on the tail (cubic interpolation between nodes), resolved for "
              f"levels up to 1 - {_TAIL_LEVEL:g}; {stability}")
    if _crossing_on_request(model):
        method += (f"; a second, independent solution of the same system: Replication(1, "
                   f"{d}) with removal (the level-crossing grid, seconds per point, with its "
                   f"own error estimates)")
    mean = result.mean

    def response_time():
        return TabulatedResponseTime(result.sf, mean, ppf=_resolved(result.quantile),
                                     breaks=result.coarse.grid, error=result.quantile_error,
                                     label="Redundancy-d mean-field grid solution")

    return Prediction(system, method=method, exact=False, stable=True, mean=mean,
                      response_time=response_time, busy_fraction=busy, cost=busy / lam,
                      assumptions=assumptions, references=_REFERENCES,
                      errors={"mean": result.mean_error, "busy_fraction": busy_error})


def _resolved(quantile):
    """``quantile`` refusing levels beyond ``1 - _TAIL_LEVEL`` (the grid's tail ends there)."""
    def ppf(q):
        if np.any(np.asarray(q) > 1.0 - _TAIL_LEVEL):
            raise ValueError(f"q must be at most 1 - {_TAIL_LEVEL:g} for the mean-field "
                             f"response time: its tail P(T > t) is tabulated down to "
                             f"{_TAIL_LEVEL:g}")
        return quantile(q)
    return ppf


@register(RedundancyD)
def analyze_redundancy(system: System) -> Prediction:
    """Redundancy-d: closed forms under IR exponential runtimes, the mean-field otherwise."""
    if system.policy.d == 1:
        return analyze_riq(system)._relabelled("Redundancy-d with d = 1 is Random: ")
    if _is_ir_exponential(system.runtime):
        return _ir_exponential(system)
    return _mean_field(system)


@register(Threshold)
def analyze_threshold(system: System) -> Prediction:
    """THRESHOLD-0 is RIQ (exact in the k -> infinity limit); no analysis for n >= 1."""
    if system.policy.n == 0:
        return analyze_riq(system)._relabelled("THRESHOLD-0 coincides with RIQ: ")
    raise NotImplementedError(
        f"no analysis of {system.policy.label()} (THRESHOLD-n with n >= 1) yet; use "
        f"qt.simulate(system) for its response time")
