"""Argument validation shared by the public API (private)."""

from __future__ import annotations

import math
import numbers

import numpy as np

#: Loads within this distance of 1 are taken as exactly 1 (unstable). A load is computed from the
#: inputs with a few roundings (relative error a few units of 2**-53, the same on every machine
#: since the sums behind the moments are correctly rounded by ``math.fsum``); 2**-46 (64 units,
#: about 1.4e-14) leaves a wide margin, so ``arrival_rate = 1 / E[R]`` is unstable on every
#: machine while a load of ``1 - 1e-12`` is still analysed as stable.
LOAD_TOLERANCE = 2.0**-46


def stable_load(load: float) -> bool:
    """Whether a queue at utilisation ``load`` is stable: ``load < 1 - LOAD_TOLERANCE``.

    The one stability rule of the analysis. ``nan`` is unstable.

    Examples
    --------
    >>> from queuetheory._checks import stable_load
    >>> stable_load(0.5), stable_load(1 - 1e-12), stable_load(1 - 1e-16), stable_load(1.0)
    (True, True, False, False)
    """
    return bool(load < 1.0 - LOAD_TOLERANCE)


MAX_POLLED = 100_000
"""Most servers one arrival (job or batch) may involve in an analysis: ``d``, ``n + m`` or
``n d`` (beyond, sums over the polled servers and their binomial laws leave the floats or
run for minutes: ``RedundancyD(2**70)`` had raised OverflowError, ``RIQ(10**7)`` run for
minutes; RIQ at ``d = 10**5``: about 10 s)."""


def analysable(policy) -> None:
    """Raise a ValueError if ``policy`` involves more than :data:`MAX_POLLED` servers per
    arrival (the analysis's bound; the policy itself is valid, and ``qt.simulate`` takes it
    on enough servers)."""
    if policy.polled > MAX_POLLED:
        raise ValueError(f"{policy.label()} involves {policy.polled} servers per arrival; the "
                         f"analysis takes at most {MAX_POLLED} (d, n + m or n d: it sums over "
                         f"the numbers of polled servers in each state); the k -> infinity "
                         f"limit also assumes far fewer than k")


def positive(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number > 0."""
    v = _real(name, value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number >= 0."""
    v = _real(name, value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def positive_int(name: str, value: int, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum`` (and <=
    ``maximum``, if given).

    numpy integer scalars, 0-d integer arrays and integral floats are accepted; booleans and
    strings are not.
    """
    value = _scalar(value)
    allowed = f">= {minimum}" + ("" if maximum is None else f" and <= {maximum}")
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(value)


def boolean(name: str, value) -> bool:
    """Return ``value`` as a bool, or raise unless it is ``True``/``False`` (numpy bools too)."""
    value = _scalar(value)
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def probability_level(name: str, q):
    """Return ``q`` as a float array, or raise unless every entry is in the open interval (0, 1)."""
    arr = real_array("q", q)
    if arr.size == 0 or not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {q!r}")
    return arr


def probabilities(name: str, probs) -> np.ndarray:
    """Return a 1-d float array of probabilities, or raise unless they are >= 0 and sum to 1."""
    p = real_array(name, probs).ravel()
    if p.size == 0:
        raise ValueError(f"{name} must be a non-empty list of probabilities")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {probs!r}")
    total = math.fsum(p)  # correctly rounded: the same on every machine, in any order
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (within 1e-9), they sum to {total!r}")
    return p / total


def real_array(name: str, value) -> np.ndarray:
    """``value`` as a float array, or raise unless it holds real numbers (not strings, booleans,
    complex numbers or other objects)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    if arr.dtype.kind not in "iuf":
        if arr.dtype.kind == "O":
            try:
                arr = arr.astype(float)
            except OverflowError:   # an integer beyond the floats
                raise ValueError(f"{name} must hold numbers within the floats, got "
                                 f"{value!r}") from None
            except (TypeError, ValueError):
                arr = None
        if arr is None or arr.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}")
    return arr.astype(float)


def _scalar(value):
    """The Python scalar inside a 0-d numpy array; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def _real(name: str, value) -> float:
    """``value`` as a float: real numbers, numpy real scalars and 0-d arrays; not booleans,
    strings or complex numbers. An integer beyond the floats is ``+-inf`` (for the callers'
    ranges to refuse: ``float(10**400)`` had raised ``OverflowError``)."""
    value = _scalar(value)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
