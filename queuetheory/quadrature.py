"""Quadrature rules and moments from survival functions, shared by the whole library.

* Double-exponential rules: tanh-sinh in probability space (:func:`tanh_sinh_level`, nested,
  for ``E[g(X)] = int_0^1 g(F^{-1}(u)) du``) and exp-sinh on ``(0, inf)``
  (:func:`exp_sinh_nodes`).
* Gauss-Legendre: cached rules (:func:`gauss_legendre`), a fixed rule per piece
  (:func:`gauss_legendre_moment`) and an adaptive, bisecting one
  (:func:`adaptive_gauss_legendre`).
* Moments from a survival function, ``E[T^k] = int_0^inf k t^(k-1) P(T > t) dt``:
  :func:`moment_from_sf` for a survival function accurate to double precision everywhere
  (adaptive quadrature with a divergence check: a divergent moment is ``inf``), and
  :func:`moment_from_inverted_sf` for one known only to an absolute error of about 1e-11, as
  from numerical Laplace inversion (truncated where the tail is noise, then extrapolated).

References
----------
H. Takahasi, M. Mori, Double exponential formulas for numerical integration, Publ. RIMS 9,
1974. D. H. Bailey, K. Jeyabalan, X. S. Li, A comparison of three high-precision quadrature
schemes, Experimental Mathematics 14(3), 2005 (the error estimate of nested levels).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import mpmath
import numpy as np
from scipy import integrate

__all__ = [
    "tanh_sinh_map",
    "tanh_sinh_probabilities",
    "tanh_sinh_level",
    "exp_sinh_nodes",
    "gauss_legendre",
    "gauss_legendre_moment",
    "adaptive_gauss_legendre",
    "moment_from_sf",
    "moment_from_inverted_sf",
]

TS_HALF, TS_TMAX = 64, 3.2
"""Half-width (nodes) and end ``tau`` of level 0 of the nested tanh-sinh rule."""
TS_MAX_LEVEL = 8
"""Finest level of the nested rule: ``128 * 2**8 + 1 = 32769`` nodes (step ``0.05 / 256``)."""


# ------------------------------------------------------------------ double-exponential rules
def tanh_sinh_map(tau: np.ndarray):
    """``u = (1 + tanh(pi/2 sinh(tau))) / 2``, ``1 - u`` without cancellation, and ``du/dtau``.

    Parameters
    ----------
    tau : ndarray
        Points of the real line.

    Returns
    -------
    u, one_minus_u, density : ndarray
        Nodes in ``(0, 1)``, their complements and the Jacobian ``du/dtau``.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import tanh_sinh_map
    >>> u, v, d = tanh_sinh_map(np.array([0.0]))
    >>> float(u[0]), float(v[0]), float(d[0]) == np.pi / 4
    (0.5, 0.5, True)
    """
    arg = 0.5 * np.pi * np.sinh(tau)
    u = 1.0 / (1.0 + np.exp(-2.0 * arg))
    one_minus_u = 1.0 / (1.0 + np.exp(2.0 * arg))
    return u, one_minus_u, 0.25 * np.pi * np.cosh(tau) / np.cosh(arg) ** 2


def tanh_sinh_probabilities(n_half: int = 64, t_max: float = 3.2):
    """Nodes ``u`` in (0, 1), their complements ``1 - u`` and weights (summing to 1).

    The double-exponential (tanh-sinh) rule integrates functions of a probability level that
    are singular at 0 or 1, such as ``exp(-s ppf(u))`` for heavy tails, to near machine
    precision with about a hundred nodes.

    Parameters
    ----------
    n_half : int
        Nodes on each side of ``u = 1/2`` (``2 n_half + 1`` in all).
    t_max : float
        The rule spans ``tau`` in ``[-t_max, t_max]``.

    Returns
    -------
    u, one_minus_u, weights : ndarray

    Examples
    --------
    >>> from queuetheory.quadrature import tanh_sinh_probabilities
    >>> u, v, w = tanh_sinh_probabilities()
    >>> abs(float(w @ u ** 3) - 0.25) < 1e-15  # int_0^1 u^3 du
    True
    """
    tau = np.linspace(-t_max, t_max, 2 * n_half + 1)
    u, one_minus_u, w = tanh_sinh_map(tau)
    return u, one_minus_u, w / w.sum()


@functools.lru_cache(maxsize=TS_MAX_LEVEL + 1)
def tanh_sinh_level(level: int):
    """Nodes added at ``level`` of the nested tanh-sinh rule in probability space.

    Level 0 has the ``2 * 64 + 1`` nodes ``tau = j h`` (``h = 3.2 / 64``); level ``L >= 1`` adds
    the odd multiples of ``h / 2**L``, so the rule of level ``L`` reuses every earlier node.

    Parameters
    ----------
    level : int
        0 to :data:`TS_MAX_LEVEL`.

    Returns
    -------
    u, one_minus_u, weights, total
        The new nodes, their weights ``h_L du/dtau`` and the sum of the weights of all nodes up
        to ``level`` (to normalise the rule exactly to 1).

    Examples
    --------
    >>> from queuetheory.quadrature import tanh_sinh_level
    >>> [tanh_sinh_level(level)[0].size for level in range(3)]
    [129, 128, 256]
    """
    n = TS_HALF * 2**level
    h = TS_TMAX / n
    j = np.arange(-n, n + 1) if level == 0 else np.arange(-n + 1, n, 2)
    u, one_minus_u, dens = tanh_sinh_map(h * j)
    previous = 0.0 if level == 0 else 0.5 * tanh_sinh_level(level - 1)[3]
    weights = h * dens
    return u, one_minus_u, weights, previous + weights.sum()


def exp_sinh_nodes(n_half: int = 192, t_max: float = 6.0):
    """Nodes ``t`` in (0, inf) and weights of the exp-sinh rule for integrals over (0, inf).

    Parameters
    ----------
    n_half : int
        Nodes on each side of ``t = 1``.
    t_max : float
        The rule spans ``tau`` in ``[-t_max, t_max]``, ``t = exp(pi/2 sinh(tau))``.

    Returns
    -------
    t, weights : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import exp_sinh_nodes
    >>> t, w = exp_sinh_nodes()
    >>> abs(float(w @ np.exp(-t)) - 1.0) < 1e-14  # int_0^inf exp(-t) dt
    True
    """
    tau = np.linspace(-t_max, t_max, 2 * n_half + 1)
    t = np.exp(0.5 * np.pi * np.sinh(tau))
    return t, (tau[1] - tau[0]) * 0.5 * np.pi * np.cosh(tau) * t


# ------------------------------------------------------------------------- Gauss-Legendre
@functools.lru_cache(maxsize=16)
def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the ``n``-point Gauss-Legendre rule on ``[-1, 1]`` (cached).

    Parameters
    ----------
    n : int
        Number of nodes (exact for polynomials of degree ``2 n - 1``).

    Returns
    -------
    nodes, weights : ndarray
        Read-only arrays.

    Examples
    --------
    >>> from queuetheory.quadrature import gauss_legendre
    >>> x, w = gauss_legendre(3)
    >>> round(float(w @ x**4), 15)  # int_{-1}^1 x^4 dx = 2/5
    0.4
    """
    nodes, weights = np.polynomial.legendre.leggauss(n)
    nodes.flags.writeable = False
    weights.flags.writeable = False
    return nodes, weights


def gauss_legendre_moment(sf: Callable, k: int, edges, n: int) -> float:
    """``int k t^(k-1) sf(t) dt`` over ``[edges[0], edges[-1]]``, one fixed ``n``-point
    Gauss-Legendre rule per piece ``[edges[i], edges[i+1]]``.

    Accurate when ``sf`` is smooth on every piece (kinks and jumps only at the edges).

    Parameters
    ----------
    sf : callable
        Vectorised survival function (takes and returns arrays of any shape).
    k : int
        Order of the moment.
    edges : array_like
        Increasing times.
    n : int
        Nodes per piece.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import gauss_legendre_moment
    >>> edges = np.concatenate([[0.0], 2.0 ** np.arange(-4, 7)])
    >>> m = gauss_legendre_moment(lambda t: np.exp(-t), 2, edges, 20)
    >>> abs(m - 2.0) < 1e-13  # E[T^2] = 2 for a unit exponential
    True
    """
    edges = np.asarray(edges, dtype=float)
    nodes, weights = gauss_legendre(n)
    lo, hi = edges[:-1, None], edges[1:, None]
    t = 0.5 * (lo + hi) + 0.5 * (hi - lo) * nodes
    return float(np.sum(0.5 * (hi - lo) * weights * k * t ** (k - 1) * sf(t)))


def adaptive_gauss_legendre(sf: Callable, k: int, edges: np.ndarray) -> float:
    """``int k t^(k-1) sf(t) dt`` over ``[edges[0], edges[-1]]`` for a vectorised ``sf``.

    Gauss-Legendre in ``u = log(1 + t / c)`` (``c = edges[1]``). Each piece gets 24- and 48-point
    rules; pieces where they differ by more than ``1e-12`` of the total are halved, for at most
    60 rounds (one call of ``sf`` per round), which localises kinks and jumps such as the ends of
    a support (a jump inside a piece costs a relative error of a few 1e-12: 3e-12 measured for
    an atom at 1 in ``[0, 2]``; at an edge it costs nothing).

    Parameters
    ----------
    sf : callable
        Vectorised survival function of a 1-d array.
    k : int
        Order of the moment.
    edges : ndarray
        Increasing times, ``edges[1] > 0``; the integral stops at ``edges[-1]``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import adaptive_gauss_legendre
    >>> sf = lambda t: np.where(t < 1.0, 1.0, 0.0)  # an atom at 1: E[T^3] = 1
    >>> abs(adaptive_gauss_legendre(sf, 3, np.array([0.0, 0.3, 2.0])) - 1.0) < 1e-11
    True
    """
    gl24_nodes, gl24_weights = gauss_legendre(24)
    gl_nodes, gl_weights = gauss_legendre(48)
    c = edges[1]
    u_edges = np.log1p(edges / c)
    pieces = np.stack([u_edges[:-1], u_edges[1:]], axis=1)
    total = 0.0
    for _ in range(60):
        lo, hi = pieces[:, :1], pieces[:, 1:]
        half = 0.5 * (hi - lo)
        u = np.concatenate([lo + half * (1.0 + gl24_nodes), lo + half * (1.0 + gl_nodes)],
                           axis=1)
        t = c * np.expm1(u)
        values = k * t ** (k - 1) * np.asarray(sf(t.ravel())).reshape(t.shape) * (c + t)
        coarse = (half * values[:, :gl24_nodes.size] * gl24_weights).sum(axis=1)
        fine = (half * values[:, gl24_nodes.size:] * gl_weights).sum(axis=1)
        estimate = total + fine.sum()
        bad = np.abs(fine - coarse) > 1e-12 * max(estimate, 1e-300)
        total += fine[~bad].sum()
        if not bad.any():
            break
        mid = 0.5 * (pieces[bad, 0] + pieces[bad, 1])
        pieces = np.concatenate([np.stack([pieces[bad, 0], mid], axis=1),
                                 np.stack([mid, pieces[bad, 1]], axis=1)])
    else:
        total += fine[bad].sum()
    return float(total)


# ------------------------------------------------------------- moments from a survival function
def moment_from_sf(sf: Callable, k: int, cuts, head: float | None = None,
                   tail: bool = True, epsrel: float = 1e-11) -> float:
    """``E[T^k] = int_0^inf k t^(k-1) sf(t) dt`` for a scalar survival function ``sf``.

    Adaptive quadrature (QUADPACK, relative tolerance ``epsrel``) on the pieces
    ``[0, cuts[0]], [cuts[0], cuts[1]], ...`` (``head``, if given, replaces the integral up to
    ``cuts[-1]``), then (if ``tail``) the last piece ``[cuts[-1], inf)`` in ``y = log t``, where
    ``cuts[-1]`` should be a far quantile (``1 - 1e-16``) or a typical time: a tail
    ``t^k sf(t)`` that does not decrease between ``t = cuts[-1] e^100`` and ``e^200`` marks a
    divergent moment (``inf``), and so does a tail integral that QUADPACK cannot converge.

    Parameters
    ----------
    sf : callable
        ``float t -> P(T > t)``, accurate to double precision.
    k : int
        Order of the moment (positive).
    cuts : array_like
        Increasing positive times bounding the pieces (kinks and jumps of ``sf`` belong here).
    head : float, optional
        The integral up to ``cuts[-1]``, when computed otherwise.
    tail : bool
        ``False`` truncates at ``cuts[-1]``, for survival functions that are only accurate on
        a bounded range.
    epsrel : float
        Relative tolerance per piece; where QUADPACK cannot meet it (round-off in ``sf``), the
        piece is integrated again to ``1e-9`` and that estimate accepted.

    Returns
    -------
    float
        The moment, ``inf`` when it diverges.

    Examples
    --------
    >>> import math
    >>> from queuetheory.quadrature import moment_from_sf
    >>> m = moment_from_sf(lambda t: math.exp(-t), 2, [0.5, 1.0])
    >>> abs(m - 2.0) < 1e-12
    True
    >>> moment_from_sf(lambda t: 1.0 if t < 1 else t ** -2.0, 2, [1.0])  # Pareto(2): E[T^2] = inf
    inf
    """
    cuts = np.asarray(cuts, dtype=float)
    if cuts.size == 0:
        return 0.0
    b = float(cuts[-1])
    with_tail = tail

    def integrand(t):
        return k * t ** (k - 1) * sf(t)

    def tail(y):  # k t^k sf(t) with t = b e^y, in logs
        log_t = math.log(b) + y
        value = sf(math.exp(min(log_t, 700.0)))
        return 0.0 if value <= 0 else math.exp(math.log(k) + k * log_t + math.log(value))

    if with_tail:
        far = [tail(y) for y in (100.0, 200.0)]
        if far[1] > 0 and far[1] >= far[0]:
            return math.inf
    edges = np.concatenate([[0.0], cuts])
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        total = head if head is not None else 0.0
        for lo, hi in zip(edges[:-1], edges[1:]) if head is None else ():
            try:
                value, _ = integrate.quad(integrand, lo, hi, limit=200, epsabs=0.0, epsrel=epsrel)
            except integrate.IntegrationWarning:
                # e.g. round-off in an inverted transform: accept the best attainable estimate
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", integrate.IntegrationWarning)
                    value, _ = integrate.quad(integrand, lo, hi, limit=400,
                                              epsabs=1e-12 * (hi - lo), epsrel=1e-9)
            total += value
        if not with_tail:
            return total
        try:
            # beyond the far quantile: an absolute tolerance suffices
            value, _ = integrate.quad(tail, 0.0, np.inf, limit=200, epsabs=1e-13 * total,
                                      epsrel=1e-11)
        except integrate.IntegrationWarning:
            return math.inf
    return total + value


def moment_from_inverted_sf(sf: Callable, k: int, scale: float) -> float:
    """``E[T^k] = int_0^inf k t^(k-1) P(T > t) dt`` for a survival function from numerical
    inversion (absolute error about 1e-11), by 20-point Gauss-Legendre on geometric panels.

    The panels stop at ``c = scale 2^j``, the last point before the tail first falls below
    1e-10 (beyond that the inverted tail is noise). The rest is extrapolated from the tail at
    ``c/4, c/2, c``: a power law ``P(T > t) ~ t^(-a)`` if the log-ratios per doubling are about
    equal (``a <= k`` means a divergent moment: ``inf``), otherwise an exponential tail.

    Parameters
    ----------
    sf : callable
        Vectorised survival function of a 1-d or 2-d array.
    k : int
        Order of the moment.
    scale : float
        A typical time (the mean), where the geometric ladder is anchored.

    Returns
    -------
    float
        The moment, ``inf`` when it diverges or the tail never falls below 1e-10.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import moment_from_inverted_sf
    >>> m = moment_from_inverted_sf(lambda t: np.exp(-t), 2, 1.0)
    >>> abs(m - 2.0) < 1e-9
    True
    """
    ladder = scale * 2.0 ** np.arange(-30, 64)
    tail = sf(ladder)
    below = np.nonzero(tail < 1e-10)[0]
    if below.size == 0 or below[0] < 3:
        return math.inf
    j = below[0] - 1
    c = ladder[j]
    near, far = math.log(tail[j - 2] / tail[j - 1]), math.log(tail[j - 1] / tail[j])
    if far < 1.5 * near:
        exponent = far / math.log(2.0)
        if exponent <= k:
            return math.inf
        remainder = k * c**k * tail[j] / (exponent - k)
    else:
        rate = far / (c / 2)
        remainder = float(k * tail[j] * mpmath.gammainc(k, rate * c) * mpmath.exp(rate * c)
                          / rate**k)
    return gauss_legendre_moment(sf, k, np.concatenate([[0.0], ladder[: j + 1]]), 20) + remainder
