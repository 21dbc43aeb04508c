"""Response-time distributions known through their Laplace-Stieltjes transform."""

from __future__ import annotations

import copy
import math
import os
import pickle
import sys
import warnings
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np

from . import _checks, mg1, transforms
from .distributions import Distribution, Mixture, _is_mp, _mp_probs
from .quadrature import moment_from_sf

__all__ = ["ResponseLaw", "ResponseTime"]

_JUMPS_CHECKED = 64
"""Most atoms of a split-off law whose jumps are checked before the quantile search."""
_RTOL = 1e-10
"""Relative tolerance of the fast quantile solver."""

_MP_MAX_WORK = 2000
"""Largest working precision (digits) of the self-checking mpmath path."""


class AccuracyWarning(UserWarning):
    """A result may be less accurate than its method suggests (e.g. the ``k -> infinity``
    limit used for a small farm); the message gives the estimated size of the error.

    Examples
    --------
    >>> import warnings
    >>> import queuetheory as qt
    >>> small = qt.System(qt.RIQ(d=2), qt.IR(qt.Exponential(1.0)), arrival_rate=0.5, servers=10)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     p = qt.analyze(small)
    >>> caught[0].category is qt.AccuracyWarning, str(caught[0].message)[:48]
    (True, 'the k -> infinity limit is used for k = 10 serve')

    It is a :class:`UserWarning`, silenced like any other:

    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", qt.AccuracyWarning)
    ...     p = qt.analyze(small)
    >>> p.exact
    False
    """


_WARN_RELATIVE = 1e-3
"""Quantiles whose estimated error exceeds this fraction of their value, and probabilities
whose estimated error exceeds this, come with an :class:`AccuracyWarning` when their errors
are not asked for (``full_output=False``)."""


class _Reanalysis:
    """``analyze(system).response_time`` under the accuracy goal and the grid budget it was
    first solved under (``solved``: :func:`.analysis.settings`; :func:`queuetheory.accuracy_goal`,
    :func:`queuetheory.grid_budget`), a picklable stand-in for a closure."""

    def __init__(self, system, solved: tuple[float, float]):
        self.system, self.solved = system, solved

    def __setstate__(self, state: dict):
        """One pickled before the grid budget (the goal alone, ``goal``): the default budget."""
        if "solved" not in state:
            state = {"system": state["system"], "solved": (state["goal"], 1.0)}
        self.__dict__.update(state)

    def __call__(self) -> ResponseLaw:
        from .analysis import analyze, under

        with under(self.solved):
            return analyze(self.system).response_time


class ResponseLaw(Distribution):
    """Base class of every response-time law (what ``Prediction.response_time`` returns).

    It owns the public ``cdf``, ``sf``, ``ppf`` (``quantile``), ``isf``, ``median``,
    ``interval`` and ``quantile_error``, with one contract for ``precision=`` and
    ``full_output=`` whatever the policy:

    * ``precision=None`` (default): double precision, a float (a numpy array for an array
      argument).
    * ``precision=p``, an integer in [15, 1000]: an :class:`mpmath.mpf` with ``p`` significant
      digits (an object array for an array argument) from the law's high-precision path
      (:class:`ResponseTime`: inversions at rising working precisions until two agree; closed
      forms: evaluated in mpmath with guard digits). A law without one raises
      ``NotImplementedError("<law> has no high-precision path (precision=p); <how its values
      are computed and their stated error>; use precision=None")``.
    * ``full_output=True`` (double precision only; with ``precision=`` it is a ``ValueError``):
      ``(value, error)``, with ``error`` an estimate of the absolute error of each value,
      checked against the true error in the tests. A law without an estimate for that
      statistic raises ``NotImplementedError("<law> has no error estimate of its <statistic>
      (full_output=True); <how its values are computed and their stated error>; use
      full_output=False")``.
    * ``quantile_error(q)`` is ``ppf(q, full_output=True)[1]``.

    Levels ``q`` lie in the open interval (0, 1); an unstable system's law
    (``stable=False``) has every time infinite.

    Subclasses implement private hooks: ``_sf``/``_cdf``/``_ppf`` (double precision, as for
    every :class:`~queuetheory.distributions.Distribution`), optionally ``_quantile_errors``
    and ``_distribution_errors`` (error estimates) or the whole fast path
    (``_fast_distribution``, ``_fast_quantile``), and, with ``high_precision = True``, the
    mpmath path (``_distribution_mp``, ``_quantile_mp``).

    Examples
    --------
    >>> import mpmath
    >>> import queuetheory as qt
    >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)   # M/M/1, mu - lam = 0.5
    >>> isinstance(T, qt.ResponseLaw), T.high_precision
    (True, True)
    >>> value, error = T.ppf(0.99, full_output=True)             # -2 log(0.01)
    >>> round(value, 9), bool(error < 1e-8)
    (9.210340372, True)
    >>> print(mpmath.nstr(T.median(precision=30), 30))          # 2 log 2
    1.38629436111989061883446424292
    >>> system = qt.System(qt.MDS(4, 2, remove=False), qt.IR(qt.Erlang(2, 2.0)), arrival_rate=0.4)
    >>> B = qt.analyze(system).response_time
    >>> isinstance(B, qt.ResponseLaw), B.high_precision
    (True, False)
    >>> try:
    ...     B.ppf(0.99, precision=30)
    ... except NotImplementedError as error:
    ...     print(str(error).split(";")[0])
    BatchCompletionTime (MDS/Replication without removal) has no high-precision path (precision=30)
    """

    #: ``False`` for an unstable system: every response time is infinite.
    stable: bool = True

    #: ``True`` when ``precision=`` has a high-precision (mpmath) path.
    high_precision: bool = False

    #: The law's name in messages.
    _label: str = "response time"

    #: How the double-precision values are computed and their stated error (in messages).
    _accuracy: str = "its values are double precision"

    def __reduce_ex__(self, protocol):
        """Pickling (multiprocessing, dask): the law's own state where it pickles; a law built
        by ``qt.analyze`` whose state holds closures (the batch policies' laws: functions of
        the grid, the kernel's ``phi``) is rebuilt on loading by analysing its system again
        (:class:`_Reanalysis`; the analysis is deterministic: the same law)."""
        reduced = super().__reduce_ex__(protocol)
        origin = self.__dict__.get("_origin")   # a _Reanalysis
        if origin is None or self.__dict__.get("_trial_pickle"):
            return reduced
        self.__dict__["_trial_pickle"] = True   # the state may refer back to the law
        try:
            pickle.dumps(reduced, protocol)
        except (pickle.PicklingError, AttributeError, TypeError):
            return origin, ()
        finally:
            del self.__dict__["_trial_pickle"]
        return reduced

    def __copy__(self):
        """A shallow copy of the state, without the trial pickling of :meth:`__reduce_ex__`."""
        copied = type(self).__new__(type(self))
        copied.__dict__.update(self.__dict__)
        return copied

    def __deepcopy__(self, memo):
        """A copy of the state (functions are shared, as ``copy.deepcopy`` does), without
        the trial pickling of :meth:`__reduce_ex__`."""
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        copied.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return copied

    # ------------------------------------------------------------------------ public
    def cdf(self, x, precision: int | None = None, *, full_output: bool = False):
        """``P(T <= x)``.

        Parameters
        ----------
        x : float or array_like
            Times (NaN not allowed; ``P(T <= x) = 0`` for ``x < 0``).
        precision : int, optional
            Decimal digits in [15, 1000] for the high-precision path: the result is then an
            :class:`mpmath.mpf` (an object array of them for an array ``x``).
        full_output : bool, optional
            Double precision only: also return an estimate of the absolute error.

        Returns
        -------
        float, numpy.ndarray or mpmath.mpf
            The CDF, and with ``full_output`` a tuple ``(cdf, error)``.

        Raises
        ------
        NotImplementedError
            ``precision`` for a law without a high-precision path, ``full_output`` for one
            without an error estimate of its CDF (see :class:`ResponseLaw`).

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> value, error = T.cdf(2.0, full_output=True)
        >>> round(value, 10), bool(error < 1e-10)
        (0.6321205588, True)
        """
        return self._distribution(x, precision, full_output, upper=False)

    def sf(self, x, precision: int | None = None, *, full_output: bool = False):
        """``P(T > x)`` (small tails keep their relative accuracy).

        Parameters, returns and exceptions as for :meth:`cdf`.

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> print(f"{T.sf(20.0):.6e}")   # exp(-10)
        4.539993e-05
        >>> import mpmath
        >>> print(mpmath.nstr(T.sf(3.0, precision=30), 30))   # exp(-1.5) to 30 digits
        0.223130160148429828933280470764
        """
        return self._distribution(x, precision, full_output, upper=True)

    def ppf(self, q, precision: int | None = None, *, full_output: bool = False):
        """Quantile ``inf{t : P(T <= t) >= q}``, q in (0, 1); ``inf`` for an unstable system.

        Parameters
        ----------
        q : float or array_like
            Levels in the open interval (0, 1).
        precision : int, optional
            Decimal digits in [15, 1000] for the high-precision path: the quantile is then an
            :class:`mpmath.mpf` with that many digits (an object array for an array ``q``), the
            quantile of the level ``q`` exactly as given in binary (``0.99`` is
            ``0.98999999999999999112...``).
        full_output : bool, optional
            Double precision only: also return an estimate of the absolute error of each
            quantile.

        Returns
        -------
        float, numpy.ndarray or mpmath.mpf
            The quantiles (non-decreasing in ``q``), and with ``full_output`` a tuple
            ``(quantiles, errors)``.

        Raises
        ------
        NotImplementedError
            ``precision`` for a law without a high-precision path, ``full_output`` for one
            without an error estimate of its quantiles (see :class:`ResponseLaw`).

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> T.ppf([0.5, 0.99]).round(9)
        array([1.38629436, 9.21034037])
        """
        arr = _checks.probability_level("q", q)
        digits = self._precision(precision, full_output)
        if digits is not None:
            return self._quantile_mp(arr.astype(object), digits)
        values, errors = self._fast_quantile(arr.ravel(), full_output)
        return self._finish(values, errors, arr.shape, full_output, "quantiles")

    quantile = ppf

    def isf(self, p, precision: int | None = None, *, full_output: bool = False):
        """Inverse survival function: the ``(1 - p)``-quantile, p in (0, 1) (scipy.stats).

        Parameters, returns and exceptions as for :meth:`ppf`.

        Examples
        --------
        >>> import queuetheory as qt
        >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)
        >>> round(T.isf(0.01), 6)   # P(T > t) = 0.01
        9.21034
        """
        arr = _checks.probability_level("p", p)
        precision = self._precision(precision, full_output)
        if precision is None:
            if np.any(1.0 - arr == 1.0):
                raise ValueError(f"p must be at least 2**-53 (about 1.1e-16) in double "
                                 f"precision, where 1 - p rounds to 1; got {p!r} (smaller tail "
                                 f"levels: precision=, where the law has a high-precision path)")
            return self.ppf(1.0 - arr, full_output=full_output)
        # the tail levels themselves go along: 1 - p at the working precision keeps only the
        # digits of p that 1 - p has room for (isf(1e-10, precision=20) had 9.5e-14 relative)
        tails = np.array([mpmath.mpf(float(v)) for v in arr.ravel()], dtype=object)
        with mpmath.workdps(precision):
            levels = np.array([1 - p for p in tails], dtype=object)
        return self._quantile_mp(levels.reshape(arr.shape), precision, tails.reshape(arr.shape))

    def median(self, precision: int | None = None, *, full_output: bool = False):
        """The median, ``ppf(0.5)`` (scipy.stats).

        Parameters
        ----------
        precision : int, optional
            Decimal digits for the high-precision path, as for :meth:`ppf`.
        full_output : bool, optional
            Double precision only: also return the estimated error.

        Returns
        -------
        float or mpmath.mpf or tuple
            The median; an ``mpmath.mpf`` with ``precision``; ``(value, error)`` with
            ``full_output``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> round(qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0).median(), 9)   # 2 log 2
        1.386294361
        """
        return self.ppf(0.5, precision=precision, full_output=full_output)

    def interval(self, confidence: float, precision: int | None = None, *,
                 full_output: bool = False):
        """Equal-tailed interval holding ``T`` with probability ``confidence`` (scipy.stats).

        Parameters
        ----------
        confidence : float
            In the open interval (0, 1).
        precision : int, optional
            Decimal digits for the high-precision path, as for :meth:`ppf`.
        full_output : bool, optional
            Double precision only: also return the estimated errors of the two ends.

        Returns
        -------
        tuple
            ``(ppf((1 - confidence) / 2), ppf((1 + confidence) / 2))``, and with
            ``full_output`` ``((lo, hi), (error_lo, error_hi))``.

        Examples
        --------
        >>> import queuetheory as qt
        >>> lo, hi = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0).interval(0.9)
        >>> round(lo, 6), round(hi, 6)   # -2 log(0.95), -2 log(0.05)
        (0.102587, 5.991465)
        """
        c = float(_checks.probability_level("confidence", confidence))
        precision = self._precision(precision, full_output)
        if precision is not None:
            with mpmath.workdps(precision + 20):
                half = (1 - mpmath.mpf(c)) / 2   # exact: c is a double
            with mpmath.workdps(precision):
                levels = np.array([half, 1 - half], dtype=object)
            lo, hi = self._quantile_mp(levels, precision, np.array([None, half], dtype=object))
            return lo, hi
        out = self.ppf(np.array([(1.0 - c) / 2.0, (1.0 + c) / 2.0]), full_output=full_output)
        if not full_output:
            return float(out[0]), float(out[1])
        (lo, hi), (err_lo, err_hi) = out
        return (float(lo), float(hi)), (float(err_lo), float(err_hi))

    def quantile_error(self, q):
        """Estimated absolute error of ``ppf(q)``: ``ppf(q, full_output=True)[1]``.

        Parameters
        ----------
        q : float or array_like
            Levels in the open interval (0, 1).

        Returns
        -------
        float or numpy.ndarray
            The estimated absolute errors, in the shape of ``q``.

        Raises
        ------
        NotImplementedError
            If the law has no error estimate.

        Examples
        --------
        >>> import queuetheory as qt
        >>> bool(qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0).quantile_error(0.99) < 1e-8)
        True
        """
        return self.ppf(q, full_output=True)[1]

    # ------------------------------------------------------------------------ the contract
    def _precision(self, precision, full_output: bool) -> int | None:
        """``precision`` checked (``None``, or digits in [15, 1000] with a high-precision path),
        and ``full_output`` (a bool)."""
        full_output = _checks.boolean("full_output", full_output)
        if precision is None:
            return None
        precision = transforms._precision(precision)
        if full_output:
            raise ValueError("full_output is for the double-precision path; the "
                             "high-precision path (precision=) has no error estimate")
        if not self.high_precision:
            raise self._unavailable(f"high-precision path (precision={precision})",
                                    "precision=None")
        return precision

    def _unavailable(self, what: str, remedy: str) -> NotImplementedError:
        """The one exception of the contract: the law, what it lacks, what it has, what works."""
        return NotImplementedError(f"{self._label} has no {what}; {self._accuracy}; use "
                                   f"{remedy}")

    def _distribution(self, x, precision, full_output: bool, upper: bool):
        arr = _checks.real_array("x", x)
        if np.any(np.isnan(arr)):
            raise ValueError(f"x must not contain NaN, got {x!r}")
        precision = self._precision(precision, full_output)
        if precision is not None:
            return self._distribution_mp(arr, precision, upper)
        values, errors = self._fast_distribution(arr.ravel(), upper, full_output)
        return self._finish(values, errors, arr.shape, full_output, "tail" if upper else "CDF")

    def _finish(self, values, errors, shape, full_output: bool, statistic: str):
        values = np.asarray(values, dtype=float).reshape(shape)
        value = float(values) if values.ndim == 0 else values
        if not full_output:
            if errors is not None:
                _warn_if_inaccurate(values.ravel(), np.asarray(errors, dtype=float).ravel(),
                                    statistic, self.high_precision)
            return value
        if errors is None:
            raise self._unavailable(f"error estimate of its {statistic} (full_output=True)",
                                    "full_output=False")
        errors = np.asarray(errors, dtype=float).reshape(shape)
        return value, (float(errors) if errors.ndim == 0 else errors)

    # ------------------------------------------------------------------------ hooks
    def _fast_distribution(self, x: np.ndarray, upper: bool, errors: bool):
        """Double precision at the 1-d array ``x``: ``(values, estimated errors or None)``."""
        values = (self._sf_all if upper else self._cdf_all)(x)
        return values, (self._distribution_errors(x, upper) if errors else None)

    def _fast_quantile(self, q: np.ndarray, errors: bool):
        """Double precision at the 1-d array of levels ``q`` in (0, 1): ``(quantiles, estimated
        errors or None)``."""
        if not self.stable:
            return np.full(q.shape, math.inf), np.zeros(q.shape)
        with np.errstate(divide="ignore"):
            values = np.maximum(np.asarray(self._ppf(q), dtype=float), 0.0)
        return values, (self._quantile_errors(q, values) if errors else None)

    def _distribution_errors(self, x: np.ndarray, upper: bool) -> np.ndarray | None:
        """Estimated absolute errors of the CDF (or tail) at ``x``; ``None``: no estimate."""
        return None

    def _quantile_errors(self, q: np.ndarray, values: np.ndarray) -> np.ndarray | None:
        """Estimated absolute errors of the quantiles ``values`` at the levels ``q``; ``None``:
        no estimate."""
        return None

    def _sample(self, size, rng):
        if not self.stable:
            return np.full(size, math.inf) if size is not None else math.inf
        return self.ppf(rng.uniform(np.finfo(float).tiny, 1.0, size))


class ResponseTime(ResponseLaw):
    """A response time given by its LST, with its CDF, tail and quantiles by inversion.

    A :class:`ResponseLaw` with both paths: the default inverts numerically in double precision
    with vectorised numpy (the Abate-Whitt Euler algorithm, refined adaptively where it
    converges slowly) and reports error estimates of every statistic (``full_output=True``);
    ``precision=`` (decimal digits) gives a high-precision value (an :class:`mpmath.mpf`)
    through :func:`mpmath.invertlaplace` (de Hoog), recomputed at rising working precisions
    until two values agree to the digits asked.

    A part known in the time domain is split off: with ``split=(w, A, rest, rest_mean)`` the
    response time is ``A`` (a :class:`~queuetheory.Distribution` whose CDF is computed directly,
    such as the fastest of ``i`` replicas) with probability ``w`` and otherwise has the
    transform ``rest``. Only ``rest`` is inverted, and only to the accuracy its weight
    ``1 - w`` needs, so the jumps and kinks of ``A`` cost nothing and quantiles that fall in a
    jump of a discrete ``A`` are its exact location. (The high-precision path splits off a
    discrete ``A`` only; otherwise it inverts ``lst``.)

    Parameters
    ----------
    lst : callable
        ``s -> E[exp(-s T)]``, for numpy arrays (real or complex) and for mpmath numbers.
    mean : float
        ``E[T]`` from its closed form (``inf`` allowed).
    second_moment : float, optional
        ``E[T^2]`` if known in closed form; otherwise computed from the tail when asked.
    stable : bool
        ``False`` for an unstable system: every response time is infinite.
    split : tuple, optional
        ``(w, A, rest, rest_mean)``: ``T`` is the law ``A`` (a Distribution) with probability
        ``w`` in ``[0, 1]``, and otherwise the law with LST ``rest`` and mean ``rest_mean``;
        ``lst`` is then ``w A.lst + (1 - w) rest``.
    lower : float, optional
        A hard lower bound of ``T`` (the smallest possible runtime); default 0.
    scale : float, optional
        The service-time scale ``E[B]`` of the queue behind ``T`` (default ``E[T]``): the
        error estimate allows for the loss of digits ``eps E[T] / (|s| E[B]^2)`` of queueing
        transforms at small ``|s|``, which grows as the load approaches 1.
    slack : float, optional
        The ``1 - rho`` of that queue, in ``(0, 1]``. With ``scale``, where ``E[T]`` is
        infinite (a service time with ``E[B^2] = inf``), the allowance takes ``scale / slack``
        in its place (scipy's ``pareto(1.8)`` at load 0.99: p99 3.3e-3 off with 1.5e-5
        stated without it). Without ``scale`` (a transform without that loss, but built on a
        rounded ``1 - rho``, which moves its values by up to about ``eps / slack``), the
        round-off allowance grows by the factor ``1 + 1 / slack``.
    rounded : str, optional
        Why the transform is rounded to double precision (a float root of a fixed point, a
        ``1 - rho`` without an exact rational mean, a runtime transform without a closed form
        in mpmath): the high-precision path could only repeat that rounding (about 1e-16
        relative, more where the value is sensitive to it), so ``precision=`` raises
        ``NotImplementedError`` saying so. Default ``None``: the parameters are exact
        (``split``'s weight may be a ``Fraction``, used at the working precision).
    rest_above_lower : bool, optional
        With ``split`` and ``lower > 0``: the part not split off has no mass at ``lower`` (a job
        that queues waits a positive time), so the CDF at ``lower`` is the split-off law's
        alone, with no inversion error, and quantiles at the top of its jump there are exact.
        Default ``False``: the CDF there is inverted.
    rest_from_lower : callable, optional
        With ``rest_above_lower``: the transform ``s -> E[exp(-s (R - lower))]`` of the part
        ``R`` not split off, measured from ``lower`` (computed without the factor
        ``exp(s lower)``, which overflows). The double-precision path inverts it at ``t -
        lower``: where the runtime has an atom at ``lower``, the density of ``R`` jumps there,
        and inverting ``R`` itself left CDF errors of about 1e-6 just above ``lower`` (the
        M/D/1 quantiles just above the jump's top were 1e-6 to 3e-5 relative off).
    rest_kinks : tuple or queuetheory.transforms.Kinks, optional
        With ``split``: ``(times, jumps)``, the times where the density of ``R`` jumps (``>
        lower`` with ``rest_from_lower``, else ``> 0``), and by how much, or a
        :class:`~queuetheory.transforms.Kinks` already measured from ``lower`` (with
        ``rest_from_lower``); the inversion takes them out of the transform and adds them back
        in closed form (:class:`queuetheory.transforms._Inversion`). The M/D/1 CDF at 2 was
        8e-6 off.
    exact_mp : callable, optional
        ``(t, upper) -> P(T > t)`` (``upper``) or ``P(T <= t)`` as an mpmath number exact to
        the working precision, or ``None`` where it declines (too costly): the high-precision
        path then uses it instead of inverting (as :class:`queuetheory.mg1._LatticeSojourn`
        for Random with runtimes on a lattice, where de Hoog's method converges slowly: the
        20-digit M/D/1 quantile at 0.7, load 0.9, was refused after working precision 150).

    Examples
    --------
    >>> import queuetheory as qt
    >>> T = qt.ResponseTime(qt.Exponential(0.5).lst, mean=2.0)   # M/M/1, mu - lam = 0.5
    >>> round(T.cdf(2.0), 9), round(T.ppf(0.99), 6), round(T.median(), 6)
    (0.632120559, 9.21034, 1.386294)
    >>> qt.ResponseTime.unstable().ppf(0.5)
    inf
    """

    def __init__(self, lst: Callable, mean: float, *, second_moment: float | None = None,
                 stable: bool = True, split: tuple | None = None, lower: float = 0.0,
                 scale: float | None = None, slack: float | None = None,
                 rounded: str | None = None,
                 rest_above_lower: bool = False, rest_from_lower: Callable | None = None,
                 rest_kinks: tuple | None = None, exact_mp: Callable | None = None):
        self._transform = lst
        self._exact_mp = exact_mp
        if rounded is not None:
            self.high_precision = False
            self._accuracy = (f"its transform is rounded to double precision ({rounded}), "
                              f"which bounds any value to about 16 digits; its "
                              f"double-precision values carry error estimates "
                              f"(full_output=True)")
        self._mean = float(mean)
        self._scale = scale
        if slack is not None and not 0.0 < float(slack) <= 1.0:
            raise ValueError(f"slack must be in (0, 1], got {slack!r}")
        self._slack = slack
        self._second = None if second_moment is None else float(second_moment)
        self.stable = bool(stable)
        self._lower = _checks.nonnegative("lower", lower)
        self._rest_above_lower = bool(rest_above_lower) and self._lower > 0
        if rest_from_lower is not None and not (callable(rest_from_lower) and split is not None
                                                and self._rest_above_lower):
            raise ValueError("rest_from_lower must be a transform, given with split, "
                             "rest_above_lower=True and lower > 0")
        self._rest_from_lower = rest_from_lower
        if rest_kinks is not None:
            if split is None:
                raise ValueError("rest_kinks needs split")
            if not isinstance(rest_kinks, transforms.Kinks):
                offset = 0.0 if rest_from_lower is None else self._lower
                try:
                    times, jumps = (np.asarray(x, dtype=float) for x in rest_kinks)
                except (TypeError, ValueError):
                    times = jumps = np.full(2, np.nan)     # reported below
                if not (times.shape == jumps.shape and times.ndim == 1
                        and np.all(times > offset) and np.all(np.isfinite(jumps))):
                    raise ValueError("rest_kinks must be (times, jumps), 1-d of one shape, "
                                     "finite, the times > lower with rest_from_lower (else > 0)")
                rest_kinks = transforms.Kinks(times - offset, jumps)
        self._rest_kinks = rest_kinks
        self._split = None
        if split is not None:
            if not (isinstance(split, tuple) and len(split) == 4):
                raise ValueError(f"split must be a tuple (w, A, rest, rest_mean), got {split!r}")
            weight, law, rest, rest_mean = split
            if not (0.0 <= weight <= 1.0 and isinstance(law, Distribution) and callable(rest)
                    and float(rest_mean) >= 0.0):
                raise ValueError("split must be (w, A, rest, rest_mean) with w in [0, 1], A a "
                                 "Distribution, rest a transform and rest_mean >= 0")
            self._split = (float(weight), law, rest, float(rest_mean))
            self._split_weight = weight   # exact where a Fraction (the high-precision path)
            # the split-off law's atoms are atoms of T, which then has no density (pdf raises)
            self._has_atoms = bool(weight > 0 and law._has_atoms)

    @classmethod
    def unstable(cls) -> ResponseTime:
        """The response time of an unstable system: infinite with probability 1."""
        return cls(_zero, math.inf, second_moment=math.inf, stable=False)

    def __repr__(self):
        return f"ResponseTime(mean={self._mean!r}, stable={self.stable})"

    high_precision = True
    _label = "ResponseTime (numerical Laplace inversion)"

    def lst(self, s):
        """The transform ``E[exp(-s T)]`` (numpy arrays or mpmath numbers), ``Re(s) >= 0``."""
        if _is_mp(s):
            if mpmath.isnan(s) or mpmath.re(s) < 0:
                raise ValueError(f"s must have Re(s) >= 0 (and not be NaN), got {s!r}")
            return self._transform(s)
        return super().lst(s)

    # ------------------------------------------------------------------------ fast path
    @property
    def _hint(self) -> float | None:
        return self._mean if math.isfinite(self._mean) and self._mean > 0 else None

    def _inversion(self) -> transforms._Inversion:
        """The fast inversion of the part not split off (or of the whole transform)."""
        if self._split is None:
            return transforms._Inversion(self._transform, transforms._DAMPING,
                                         transforms._N_TERMS, transforms._N_EULER, self._hint,
                                         self._scale, slack=self._slack)
        weight, law, rest, rest_mean = self._split
        if self._rest_from_lower is not None:
            rest, offset = self._rest_from_lower, self._lower
        else:
            offset = 0.0
        return transforms._Inversion(rest, transforms._DAMPING, transforms._N_TERMS,
                                     transforms._N_EULER, rest_mean, self._scale,
                                     known=(weight, law), offset=offset, kinks=self._rest_kinks,
                                     slack=self._slack)

    def _evaluator(self) -> Callable:
        """``(t, density, refine) -> (cdf, sf, pdf, err_cdf, err_sf)`` at times ``t >= lower``,
        ``t > 0`` (as :class:`queuetheory.transforms._Inversion`)."""
        if self._split is None:
            return self._inversion()
        weight, law, _, _ = self._split
        # exactly where the weight is a Fraction (Random: 1 - rho; 1 - float(1 - rho) had left
        # P(T > 1.3) of M/D/1 at load 1e-8 5e-9 relative off, 660 times its estimate)
        exact = self._split_weight
        rest = float(1 - exact) if isinstance(exact, Fraction) else 1.0 - weight
        inversion = self._inversion() if rest > 0 else None

        def evaluate(t, density=False, refine=True):
            cdf, sf = weight * law.cdf(t), weight * law.sf(t)
            pdf = weight * _density_between_atoms(law, t) if density else None
            if inversion is None:
                return cdf, sf, pdf, np.zeros(t.shape), np.zeros(t.shape)
            if self._rest_above_lower:
                # the rest lies above the lower bound: its CDF there is 0 (where the inversion
                # errs most when the split-off law jumps there)
                above = t > self._lower
                part_cdf, part_sf, part_pdf, err_cdf, err_sf = (
                    np.full(t.shape, value) for value in (0.0, 1.0, 0.0, 0.0, 0.0))
                if above.any():
                    values = inversion(t[above], density, refine)
                    for array, value in zip((part_cdf, part_sf, part_pdf, err_cdf, err_sf),
                                            values):
                        if value is not None:
                            array[above] = value
            else:
                part_cdf, part_sf, part_pdf, err_cdf, err_sf = inversion(t, density, refine)
            if density:
                pdf = pdf + rest * part_pdf
            return (cdf + rest * part_cdf, sf + rest * part_sf, pdf, rest * err_cdf,
                    rest * err_sf)

        return evaluate

    def _fast_distribution(self, flat, upper, errors):
        outside = 1.0 if upper else 0.0
        out, err = np.full(flat.size, outside), np.zeros(flat.size)
        if self.stable:
            # times below transforms._T_TINY read as 0, as transforms.invert_cdf does (the
            # inversion's abscissae overflow at subnormal t)
            inner = (flat >= self._lower) & (flat >= transforms._T_TINY) & np.isfinite(flat)
            out[flat == math.inf] = 1.0 - outside   # -inf: outside, as any t < 0
            if self._lower == 0:
                zero = (flat >= 0) & (flat < transforms._T_TINY)
                atom = self._atom_at_zero()
                out[zero] = 1.0 - atom if upper else atom
            if inner.any():
                values = self._evaluator()(flat[inner])
                out[inner] = values[1] if upper else values[0]
                err[inner] = values[4] if upper else values[3]
            # the value itself is rounded (1 ulp at load 1e-6 against estimates of 7e-18)
            err[inner] += np.finfo(float).eps * np.abs(out[inner])
            out = np.clip(out, 0.0, 1.0)
            # a value within its own error estimate of 0 (or 1) is noise: it is 0 (or 1), and
            # the estimate grows by the move (M/D/1 at 0.5, cdf(21.12) read 1 with the raw
            # value's estimate, 4.4e-12, where it is 1 - 6.9e-12)
            low, high = out < err, 1.0 - out < err
            both = low & high                     # then the tail reads 0 and the CDF 1
            snapped = np.where(both, 0.0 if upper else 1.0,
                               np.where(low, 0.0, np.where(high, 1.0, out)))
            err += np.abs(snapped - out)
            out = snapped
            if self._hint is not None:
                # Markov's inequality P(T > t) <= E[T] / t, a hard bound the noise cannot break
                positive = flat > 0
                with np.errstate(over="ignore"):   # at subnormal t: no bound
                    bound = self._mean / flat[positive]
                out[positive] = (np.minimum(out[positive], bound) if upper
                                 else np.maximum(out[positive], 1.0 - bound))
                # the value and the truth both lie within the bound: so does the error (far
                # out the inversion's own estimate reached 1: RIQ(2) at t = 1e17)
                err[positive] = np.minimum(err[positive], bound)
            # monotone in x within one call: a later value that noise lifted above an earlier
            # one (both within their error estimates) takes the earlier value, and the larger
            # of the two error estimates
            order = np.argsort(flat, kind="stable")
            accumulate = np.minimum.accumulate if upper else np.maximum.accumulate
            ordered = accumulate(out[order])
            moved = ordered != out[order]
            err[order] = np.where(moved, np.maximum.accumulate(err[order]), err[order])
            out[order] = ordered
        # an error estimate of a probability beyond 1 says no more than 1 does
        return out, np.minimum(err, 1.0)

    def _atom_at_zero(self) -> float:
        if self._split is None:
            return transforms._atom_at_zero(self._transform)
        weight, law, rest, _ = self._split
        return weight * float(law.cdf(0.0)) + (1 - weight) * transforms._atom_at_zero(rest)

    def _fast_quantile(self, q: np.ndarray, errors: bool = True, tail: np.ndarray | None = None):
        """Quantiles at the levels ``q`` and their errors; ``tail``: the tail levels ``1 - q``
        to full relative accuracy (:meth:`_isf`), the targets of the levels above 1/2."""
        if not self.stable:
            return np.full(q.shape, math.inf), np.zeros(q.shape)
        evaluate = self._evaluator()
        out, err = np.zeros(q.size), np.zeros(q.size)
        todo = q > self._atom_at_zero()
        exact = np.full(q.size, np.inf)   # levels answered by an atom: caps below them
        if todo.any():
            found, where = self._in_known_jumps(evaluate, q)
            out[found], todo = where[found], todo & ~found
            exact[found] = where[found]
        if todo.any():
            roots, lo, hi, step = transforms._solve_levels(
                evaluate, q[todo], self._hint or 1.0, _RTOL,
                tail=None if tail is None else tail[todo])
            roots, snapped = self._snap(roots, lo, hi)
            out[todo] = roots
            keep = (roots > 0) & ~snapped
            inner = np.flatnonzero(todo)[keep]
            if inner.size:
                # a root on the smallest runtime: the density just above it (0 at it, where the
                # part that queues starts), that step added (M/D/1 at 0.9, level 0.1 + 1e-15:
                # 1.0 with inf stated, the quantile 1 + 1.1e-14)
                at = out[inner]
                above = np.where(at <= self._lower, 4 * _RTOL * at, 0.0)
                err[inner] = (transforms._quantile_error(evaluate, at + above, _RTOL)
                              + step[keep] + above)
            # a root snapped onto an atom lies in its final bracket, or, for a level within the
            # CDF's error of the jump's top, beyond the atom by up to that error over the
            # density there (Random, {1, 2} at 0.25: a level 1e-7 above the top of the jump
            # at 2 read 2.0 with 1.9e-10 stated, 7.2e-7 off)
            # (the density just right of the atom, at the bracket's upper end or 4 rtol above
            # the atom, that step added: at the smallest runtime the density at the atom is 0,
            # and the estimate was inf for M/D/1 at 0.9, level 0.1, 2.8e-17 above the jump's
            # top, where the quantile is 1.0 to 3e-16)
            inner = np.flatnonzero(todo)[snapped]
            if inner.size:
                top = np.maximum(hi[snapped], (1 + 4 * _RTOL) * out[inner])
                err[inner] = ((top - lo[snapped])
                              + transforms._quantile_error(evaluate, top, _RTOL))
        out = transforms._monotone(q, out)
        # a level answered exactly by an atom v bounds every lower level's quantile by v (a
        # searched value past v below it must not be carried up over the exact answer)
        order = np.argsort(q, kind="stable")
        cap = np.minimum.accumulate(exact[order][::-1])[::-1]
        out[order] = np.minimum(out[order], cap)
        return np.maximum(out, self._lower), err

    def _in_known_jumps(self, evaluate, q):
        """Levels inside a jump of the CDF at an atom ``v > 0`` of the split-off law, beyond
        the CDF's error at either end: their quantile is ``v`` exactly (no search). Returns a
        mask of such levels and the atom of each."""
        found, where = np.zeros(q.size, dtype=bool), np.zeros(q.size)
        atoms = _known_atoms(self._split[1]) if self._split is not None else None
        if atoms is None or not 0 < atoms[0].size <= _JUMPS_CHECKED:
            return found, where
        keep = (atoms[0] > 0) & (atoms[1] > 0)
        values, mass = atoms[0][keep], self._split[0] * atoms[1][keep]
        if not values.size:
            return found, where
        # the first rule first (cheap): only jumps that may hold a level are refined
        upper, _, _, error = evaluate(values, False, False)[:4]
        near = ((q[:, None] > upper - mass - 4 * error - 1e-9)
                & (q[:, None] <= upper + 4 * error + 1e-9)).any(axis=0)
        if not near.any():
            return found, where
        values, mass = values[near], mass[near]
        upper, _, _, error = evaluate(values, False, True)[:4]
        lower = upper - mass
        inside = (q[:, None] > lower + error) & (q[:, None] <= upper - error)
        found = inside.any(axis=1)
        where[found] = values[np.argmax(inside[found], axis=1)]
        return found, where

    def _snap(self, roots, lo, hi):
        """Roots whose final bracket holds an atom of the split-off law sit on the atom: the
        CDF jumps there, so the quantile is exactly its location."""
        snapped = np.zeros(roots.size, dtype=bool)
        values = _atom_values(self._split[1]) if self._split is not None else None
        if values is None or values.size == 0:
            return roots, snapped
        idx = np.clip(np.searchsorted(values, lo, side="left"), 0, values.size - 1)
        candidate = values[idx]
        # only a bracket that collapsed onto the atom (bisection onto the jump) locates it
        snapped = (candidate >= lo) & (candidate <= hi) & (hi > 0) & (hi - lo <= 4 * _RTOL * hi)
        return np.where(snapped, candidate, roots), snapped

    # ------------------------------------------------------------------------ mpmath path
    def _distribution_mp(self, arr: np.ndarray, precision: int, upper: bool):
        flat = arr.ravel()
        out = np.empty(flat.size, dtype=object)
        with mpmath.workdps(precision):
            for i, x in enumerate(flat):
                out[i] = self._distribution_mp_one(mpmath.mpf(float(x)), upper)
        return out.reshape(arr.shape)[()] if arr.ndim == 0 else out.reshape(arr.shape)

    def _distribution_mp_one(self, x: mpmath.mpf, upper: bool) -> mpmath.mpf:
        """``P(T > x)`` or ``P(T <= x)`` to the current mpmath precision ``p`` (digits).

        de Hoog's algorithm converges slowly where the law is not smooth (atoms, kinks: about
        ``0.3 p`` correct digits at working precision ``p`` for the M/D/1 response time), so the
        value is recomputed at working precisions ``p, 1.5 p, 2.25 p, ...`` (at most ``8 p`` and
        2000) until two successive values agree to ``p`` digits. This checks the inversion; the
        transform itself must be evaluated in mpmath arithmetic (every family of
        :mod:`queuetheory.distributions` is, except the generic quadrature fallback).
        """
        digits = mpmath.mp.dps
        if not self.stable or x <= 0 or x < self._lower or mpmath.isinf(x):
            return self._distribution_mp_raw(x, upper)   # exact: no inversion
        if (not upper and self._hint is not None and x > 0
                and self._mean / x < mpmath.mpf(10) ** (-digits - 2)):
            # Markov: 1 - P(T <= x) <= E[T] / x, below the last digit (the inversion broke down
            # from about x = 1e50 for M/M/1)
            return mpmath.mpf(1)
        previous = None
        work = digits
        while work <= min(8 * digits, _MP_MAX_WORK):
            with mpmath.workdps(work):
                value = self._distribution_mp_raw(x, upper)
            # relative agreement only, and never at 0: inside the support both probabilities
            # are positive, and the inversion's absolute error at working precision w is about
            # 10^-w, so a tail far below it reads as noise or as 0 after clipping (an absolute
            # floor of 10^(-2p) had passed M/M/1's P(T > 1e10) = e^(-5e9) as 4.4e-64 and
            # e^(-500) as 0 at 20 digits); such a tail now takes more working digits, or fails
            if previous is not None and value > 0 and abs(value - previous) <= (
                    mpmath.mpf(10) ** (1 - digits) * value):
                return +value
            previous, work = value, work * 3 // 2
        raise ValueError(f"the {digits}-digit inversion at t = {mpmath.nstr(x, 8)} did not "
                         f"converge up to working precision {work * 2 // 3} (laws with atoms "
                         "or kinks converge slowly, and a probability far below 10^-precision "
                         "needs that many more working digits); lower precision or use the fast "
                         "path with full_output=True for an error estimate")

    def _distribution_mp_raw(self, x: mpmath.mpf, upper: bool) -> mpmath.mpf:
        """``P(T > x)`` or ``P(T <= x)`` at the current working precision (de Hoog)."""
        outside = mpmath.mpf(1 if upper else 0)
        if not self.stable or x < 0 or x < self._lower:
            return outside
        if mpmath.isinf(x):
            return 1 - outside
        if x == 0:
            atom = mpmath.mpf(self._atom_at_zero())
            return 1 - atom if upper else atom
        if self._exact_mp is not None:
            value = self._exact_mp(x, upper)
            if value is not None:
                return _clip(value)
        if self._split is None or not self._split[1].discrete:
            return _clip(transforms._invert_mp_one(self._transform, x, upper, "dehoog"))
        _, law, rest, _ = self._split
        w = mg1._at_precision(self._split_weight)
        if self._rest_above_lower and x <= self._lower:
            # the rest lies above the smallest runtime: nothing of it up to there (de Hoog at
            # the jump had not converged by working precision 150: M/D/1 at load 0.3, the
            # quantile at 0.7000000000000001 bracketed from below at t = 1)
            part = mpmath.mpf(1 if upper else 0)
        elif self._rest_from_lower is not None:
            # measured from the smallest runtime, where the rest's density jumps: at the
            # origin of the inversion, which de Hoog's method does not see as a jump
            part = transforms._invert_mp_one(self._rest_from_lower, x - self._lower, upper,
                                             "dehoog")
        else:
            part = transforms._invert_mp_one(rest, x, upper, "dehoog")
        return _clip(w * _discrete_mp(law, x, upper) + (1 - w) * part)

    def _quantile_mp(self, levels: np.ndarray, precision: int, tails: np.ndarray | None = None):
        """Quantiles to ``precision`` digits: :meth:`_quantile_mp_one` at each level (a bracket
        from the fast root, closed on the logarithm of the high-precision SF or CDF), or the atom
        when the level falls in a jump. ``tails``: ``1 - level`` exactly where it is not
        ``None`` (the level itself, rounded to the working precision, keeps fewer of its
        digits)."""
        flat = levels.ravel()
        tail = [None] * flat.size if tails is None else list(tails.ravel())
        out = np.empty(flat.size, dtype=object)
        with mpmath.workdps(precision):
            for i, level in enumerate(flat):
                out[i] = self._quantile_mp_one(mpmath.mpf(level), precision, tail[i])
        return out.reshape(levels.shape)[()] if levels.ndim == 0 else out.reshape(levels.shape)

    def _quantile_mp_one(self, q: mpmath.mpf, precision: int,
                         tail: mpmath.mpf | None = None) -> mpmath.mpf:
        """The root of ``log P(T > t) = log(1 - q)`` (``log P(T <= t) = log q`` for ``q <=
        1/2``), bracketed from the fast root and its error estimate (the bracket widened
        geometrically until the sign changes: in the far tail the fast root can be off by more
        than itself), then the Anderson-Bjorck method, which keeps the bracket. The logarithm
        is nearly linear in ``t`` in an exponential tail, where the probability itself falls by
        orders of magnitude across the bracket (secant steps on it from the fast root had not
        converged at ``1 - 1e-12`` for M/M/1 at load 0.9)."""
        if not self.stable:
            return mpmath.inf
        # a level within 2^-53 of 1 rounds to 1 in double precision: the fast root of the
        # largest level below 1 starts the bracket, which widens to the root
        start, error = self._fast_quantile(np.array([min(float(q), 1.0 - 2.0**-53)]))
        t0 = mpmath.mpf(float(start[0]))
        if t0 == 0:
            return t0
        if t0 <= self._lower:
            # the fast root on the smallest runtime: there unless the level lies above the CDF
            # at it (M/D/1 at 0.9, level 0.1 + 1e-15, 1.3e-17 above the jump's top, had read
            # 1.0 at 20 digits where the quantile is 1 + 1.1e-14), then searched above it
            t0 = mpmath.mpf(self._lower)
            if self._distribution_mp_one(t0, False) >= q:
                return t0
        upper = q > 0.5 or tail is not None
        log_target = mpmath.log(tail if tail is not None else 1 - q if upper else q)
        tiny = mpmath.mpf(2) ** (-64 * mpmath.mp.prec)

        def objective(t):
            # increasing in t (the tail is 1, the CDF 0, below the smallest runtime)
            value = mpmath.log(max(self._distribution_mp_one(t, upper), tiny))
            return log_target - value if upper else value - log_target

        if error[0] == 0 and self._split is not None and self._split[1].discrete:
            # on an atom: is the level in its jump?
            if objective(t0 * (1 - mpmath.mpf(10) ** (-12))) < 0 <= objective(t0):
                return t0
        floor = mpmath.mpf(max(self._lower, 0.0))
        known = float(error[0]) if math.isfinite(float(error[0])) else float(t0)
        step = mpmath.mpf(max(known, 1e-9 * float(t0)))
        lo, hi = max(t0 - step, floor), t0 + step
        f_lo, f_hi = objective(lo), objective(hi)
        while not f_lo < 0 <= f_hi:
            step *= 2
            if f_lo >= 0:      # the root lies below lo
                if lo == floor:
                    return lo
                hi, f_hi = lo, f_lo
                lo = max(lo - step, floor)
                f_lo = objective(lo)
            else:
                lo, f_lo = hi, f_hi
                hi += step
                f_hi = objective(hi)
        tol = mpmath.mpf(10) ** (1 - precision)
        side = 0     # which end the last step replaced (+1 hi, -1 lo)
        last = None
        for _ in range(4 * precision + 100):
            if hi - lo <= tol * hi:
                return (lo + hi) / 2
            t = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
            if last is not None and abs(t - last) <= tol * t / 4:
                # converging from one side: a point just across closes the bracket
                t = t + tol * t / 2 if side == -1 else t - tol * t / 2
            if not lo < t < hi:
                t = (lo + hi) / 2
            f, last = objective(t), t
            if f == 0:
                return t
            # Anderson-Bjorck: where the same end is replaced twice running, the value kept at
            # the other end is scaled down (regula falsi alone creeps from one side)
            if f > 0:
                m = 1 - f / f_hi
                if side == 1:
                    f_lo *= m if m > 0 else mpmath.mpf(1) / 2
                hi, f_hi, side = t, f, 1
            else:
                m = 1 - f / f_lo
                if side == -1:
                    f_hi *= m if m > 0 else mpmath.mpf(1) / 2
                lo, f_lo, side = t, f, -1
        raise ValueError(f"the {precision}-digit quantile at level {mpmath.nstr(q, precision)} "
                         "did not converge (bracketed steps on the mpmath inversion)")

    # ------------------------------------------------------------------------ hooks
    def _cdf(self, x):
        x = np.asarray(x, dtype=float)
        return self._fast_distribution(x.ravel(), False, False)[0].reshape(x.shape)

    def _sf(self, x):
        x = np.asarray(x, dtype=float)
        return self._fast_distribution(x.ravel(), True, False)[0].reshape(x.shape)

    def _pdf(self, x):
        # the inversion's own density (a difference quotient of inverted CDF values, the
        # generic _pdf, keeps only about half the digits); 0 below the smallest runtime, a
        # forward difference at it, and 0 where the tail is within the inversion's error (as
        # sf there: M/M/1 at 0.5 read 1.8e-15 at t = 200 for 1.9e-44)
        x = np.asarray(x, dtype=float)
        out = np.zeros(x.shape)
        if not self.stable:
            return out
        inner = (x > self._lower) & (x > 0)
        if inner.any():
            _, sf, pdf, _, err_sf = self._evaluator()(x[inner], True)
            out[inner] = np.where(err_sf < sf, np.maximum(pdf, 0.0), 0.0)
        at = x == self._lower
        if at.any():
            h = 1e-6 * (self._lower or 1.0)
            out[at] = max(float(self._cdf(self._lower + h)) - float(self._cdf(self._lower)),
                          0.0) / h
        return out

    def _ppf(self, q):
        # the quantile solver of ppf (whose error estimate quantile_error gives), not the
        # generic bisection on the CDF (an order statistic of sojourns reads quantiles here:
        # the p99 of the largest of four M/E2/1 sojourns was 1.6e-10 off, twice its estimate)
        q = np.asarray(q, dtype=float)
        return self._fast_quantile(q.ravel(), False)[0].reshape(q.shape)

    def _isf(self, p):
        # the same solver on the tail level itself: 1 - p rounds a tiny p (an order statistic
        # of sojourns asks for the sojourn's tail at 1 - q^(1/n): the largest of three M/M/1
        # sojourns at level 1 - 1e-12 was 3.9e-6 off with 2.3e-13 stated)
        p = np.asarray(p, dtype=float)
        flat = p.ravel()
        return self._fast_quantile(1.0 - flat, False, tail=flat)[0].reshape(p.shape)

    def _lst(self, s):
        return self._transform(s)

    def _moment(self, k):
        if k == 1:
            return self._mean
        if k == 2 and self._second is not None:
            return self._second
        if not (self.stable and math.isfinite(self._mean)):
            return math.inf
        return moment_from_sf(self._sf, k, scale=self._mean)


def _warn_if_inaccurate(values: np.ndarray, errors: np.ndarray, statistic: str,
                        high_precision: bool = False) -> None:
    """:class:`AccuracyWarning` when an error estimate the caller did not ask for is large
    (:data:`_WARN_RELATIVE`): a quantile's relative to its value, a probability's absolute;
    with ``high_precision`` the warning names that path (``precision=``)."""
    if not errors.size:
        return
    if statistic == "quantiles":
        with np.errstate(divide="ignore", invalid="ignore"):
            size = np.where(np.isfinite(values) & (values > 0), errors / values, 0.0)
    else:
        size = errors
    size = np.where(np.isnan(size), np.inf, size)   # an estimate that is NaN says nothing
    worst = int(np.argmax(size))
    if size[worst] > _WARN_RELATIVE:
        quantile = statistic == "quantiles"
        relative = f" ({size[worst]:.2g} relative)" if quantile else ""
        warnings.warn(AccuracyWarning(
            f"a {'quantile' if quantile else statistic} value ({values[worst]:.6g}) has an "
            f"estimated error of "
            f"{errors[worst]:.2g}{relative}: fewer digits than shown are right "
            f"(full_output=True gives every estimate"
            f"{'; precision=20 computes it with mpmath' if high_precision else ''})"),
            stacklevel=_caller_level())


def _caller_level() -> int:
    """``stacklevel`` of the first frame outside this package (the user's call: ``ppf``,
    ``quantile``, ``interval`` and ``Prediction.quantile`` sit at different depths)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _zero(s):
    """The transform of ``T = inf``."""
    return 0 * s


def _clip(value: mpmath.mpf) -> mpmath.mpf:
    return min(max(value, mpmath.mpf(0)), mpmath.mpf(1))


def _density_between_atoms(law: Distribution, t: np.ndarray) -> np.ndarray:
    """The density of ``law`` at ``t``, of its continuous part for a law with atoms whose
    atoms are known (a mixture of a deterministic and a continuous law: the slope the quantile
    search needs, which was taken as 0 and made Newton converge linearly); 0 for a law on
    finitely many points or whose atoms are unknown."""
    if not law._has_atoms:
        return law.pdf(t)
    if law.atoms is not None or law._point_masses() is None:
        return np.zeros(t.shape)
    return law._pdf_all(t)


def _known_atoms(law: Distribution) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, probs)`` of the atoms of a law (also of one with a continuous part, where
    they are known), ``None`` where they are not known."""
    return law.atoms if law.atoms is not None else law._point_masses()


def _atom_values(law: Distribution) -> np.ndarray | None:
    """Sorted atoms of a law (see :func:`_known_atoms`), ``None`` where they are not known."""
    atoms = _known_atoms(law)
    return None if atoms is None else atoms[0]


def _discrete_mp(law: Distribution, x: float, upper: bool) -> mpmath.mpf:
    """``P(A > x)`` or ``P(A <= x)`` of a discrete law, summed in mpmath."""
    if isinstance(law, Mixture):
        return mpmath.fsum(w * _discrete_mp(c, x, upper)
                           for c, w in zip(law.components, _mp_probs(law, law.weights)) if w > 0)
    values, probs = law.atoms
    return mpmath.fsum(p for v, p in zip(values, _mp_probs(law, probs))
                       if (v > x if upper else v <= x))
