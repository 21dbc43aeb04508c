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


def positive_int(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def probability_level(name: str, q):
    """Return ``q`` as a float array, or raise unless every entry is in the open interval (0, 1)."""
    arr = np.asarray(q, dtype=float)
    if arr.size == 0 or not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {q!r}")
    return arr


def probabilities(name: str, probs) -> np.ndarray:
    """Return a 1-d float array of probabilities, or raise unless they are >= 0 and sum to 1."""
    p = np.asarray(probs, dtype=float).ravel()
    if p.size == 0:
        raise ValueError(f"{name} must be a non-empty list of probabilities")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {probs!r}")
    total = math.fsum(p)  # correctly rounded: the same on every machine, in any order
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (within 1e-9), they sum to {total!r}")
    return p / total


def _real(name: str, value) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
