"""Quadrature rules and moments from survival functions, shared by the whole library.

* Double-exponential rules: tanh-sinh in probability space (:func:`tanh_sinh_level`, nested,
  for ``E[g(X)] = int_0^1 g(F^{-1}(u)) du``) and exp-sinh on ``(0, inf)``
  (:func:`exp_sinh_nodes`).
* Gauss-Legendre: cached rules (:func:`gauss_legendre`).
* The one moment from a survival function, ``E[T^k] = int_0^inf k t^(k-1) P(T > t) dt``:
  :func:`moment_from_sf`, with the pieces given (``cuts``: QUADPACK, adaptive or fixed
  Gauss-Legendre per piece, a divergence check and the tail in ``log t``) for a survival function
  accurate to double precision, or anchored at a typical time (``scale``: truncated where the
  tail is noise, then extrapolated) for one known only to an absolute error of about 1e-11, as
  from numerical Laplace inversion.

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
    "moment_from_sf",
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


TS_WIDE = 4.8
"""End ``tau`` of the wide nested rule, whose levels reach ``1 - u = exp(-pi sinh(4.8))``, about
1e-83 (the standard rule stops at 2e-17): integrands that grow in the tail, such as ``exp(-s x) -
1 + s x`` at small ``s`` for a power tail, take mass from levels far beyond it."""


@functools.lru_cache(maxsize=2 * (TS_MAX_LEVEL + 1))
def tanh_sinh_level(level: int, t_max: float = TS_TMAX):
    """Nodes added at ``level`` of the nested tanh-sinh rule in probability space.

    Level 0 has the ``2 * 64 + 1`` nodes ``tau = j h`` (``h = 3.2 / 64``); level ``L >= 1`` adds
    the odd multiples of ``h / 2**L``, so the rule of level ``L`` reuses every earlier node.

    Parameters
    ----------
    level : int
        0 to :data:`TS_MAX_LEVEL`.
    t_max : float
        The end of the rule, :data:`TS_TMAX` or :data:`TS_WIDE` (the same step ``h``, more
        nodes).

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
    n = round(TS_HALF * t_max / TS_TMAX) * 2**level
    h = t_max / n
    j = np.arange(-n, n + 1) if level == 0 else np.arange(-n + 1, n, 2)
    with np.errstate(over="ignore"):
        u, one_minus_u, dens = tanh_sinh_map(h * j)
    previous = 0.0 if level == 0 else 0.5 * tanh_sinh_level(level - 1, t_max)[3]
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


def _quantile_table(law, levels: np.ndarray, points: np.ndarray,
                    posinf: float = np.finfo(float).max) -> np.ndarray:
    """``F^{-1}`` of ``law`` at the Gauss-Legendre nodes ``points`` (on ``[-1, 1]``: a 1-d
    array shared by all pieces, or a 2-d array of one row per piece) of the pieces between
    consecutive ``levels`` of probability, one row per piece (an infinite quantile at
    ``posinf``), and a last row of zeros: the table :func:`_quantiles_on_pieces` reads."""
    lo, hi = levels[:-1, None], levels[1:, None]
    x = law._ppf_all(np.clip(0.5 * (lo + hi) + 0.5 * (hi - lo) * points, 0.0, 1.0))
    return np.vstack([np.nan_to_num(x, posinf=posinf), np.zeros(x.shape[1])])


def _quantiles_on_pieces(law, lo: np.ndarray, hi: np.ndarray, levels: np.ndarray,
                         table: np.ndarray, rules: tuple[np.ndarray, np.ndarray],
                         rule: np.ndarray | None = None, min_width: float = 0.0,
                         posinf: float = np.finfo(float).max) -> np.ndarray:
    """``F^{-1}`` of ``law`` at the Gauss-Legendre nodes of the pieces ``[lo, hi]`` of
    probability (arrays of one shape; the nodes on a new last axis).

    ``rules`` holds the rules' nodes and weights on ``[-1, 1]``, one rule per row (of one
    width, padded with weight 0); piece ``i`` takes row ``rule[i]`` (row 0 without ``rule``).
    A piece between two consecutive ``levels`` has the same nodes wherever it occurs (the same
    operations on the same levels): its quantiles come from ``table``
    (:func:`_quantile_table` with the same levels and rules; one gather). The others wider than
    ``min_width`` are computed at the slots their rule weighs, the arrays built for those
    pieces only; the rest (no weight) stay at 0. An infinite quantile is ``posinf``.

    Under S&X, a continuous law's pieces below ``F(t / x)`` are the fixed ones and one piece
    per point holds ``F(t / x)``: an Erlang slowdown's quantiles (``gammaincinv``) had taken 30
    of the 34 s of a point when every piece was computed, and full-size temporaries two thirds
    of the time of the removal analysis's tables of ``X`` nodes.
    """
    points, weights = rules
    piece = np.minimum(np.searchsorted(levels, lo), levels.size - 2)
    fixed = (levels[piece] == lo) & (levels[piece + 1] == hi)
    x = table[np.where(fixed, piece, levels.size - 1)]
    other = np.nonzero(~fixed & (hi - lo > min_width))
    rows = np.zeros(other[0].size, dtype=np.intp) if rule is None else rule[other]
    used = weights[rows] > 0
    u = 0.5 * (lo + hi)[other][:, None] + 0.5 * (hi - lo)[other][:, None] * points[rows]
    part = np.zeros(u.shape)
    part[used] = np.nan_to_num(law._ppf_all(np.clip(u[used], 0.0, 1.0)), posinf=posinf)
    x[other] = part
    return x


def _fixed_pieces(sf: Callable, k: int, edges: np.ndarray, n: int) -> float:
    """``int k t^(k-1) sf(t) dt`` over ``[edges[0], edges[-1]]``, one fixed ``n``-point
    Gauss-Legendre rule per piece ``[edges[i], edges[i+1]]`` (``sf`` smooth on every piece)."""
    nodes, weights = gauss_legendre(n)
    lo, hi = edges[:-1, None], edges[1:, None]
    t = 0.5 * (lo + hi) + 0.5 * (hi - lo) * nodes
    values = np.asarray(sf(t.ravel()), dtype=float).reshape(t.shape)
    return float(np.sum(0.5 * (hi - lo) * weights * k * t ** (k - 1) * values))


def _adaptive_pieces(sf: Callable, k: int, edges: np.ndarray) -> float:
    """``int k t^(k-1) sf(t) dt`` over ``[edges[0], edges[-1]]`` (``edges[1] > 0``).

    Gauss-Legendre in ``u = log(1 + t / c)`` (``c = edges[1]``). Each piece gets 24- and 48-point
    rules; pieces where they differ by more than ``1e-12`` of the total are halved, for at most
    60 rounds (one call of ``sf`` per round), which localises kinks and jumps such as the ends of
    a support (a jump inside a piece costs a relative error of a few 1e-12: 3e-12 measured for
    an atom at 1 in ``[0, 2]``; at an edge it costs nothing).
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


def _quadpack_pieces(scalar: Callable, k: int, edges: np.ndarray, epsrel: float) -> float:
    """``int k t^(k-1) sf(t) dt`` over ``[edges[0], edges[-1]]``, QUADPACK per piece (relative
    tolerance ``epsrel``; where round-off in ``sf`` keeps it from being met, the piece is
    integrated again to ``1e-9`` and that estimate accepted)."""
    def integrand(t):
        return k * t ** (k - 1) * scalar(t)

    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        try:
            value, _ = integrate.quad(integrand, lo, hi, limit=200, epsabs=0.0, epsrel=epsrel)
        except integrate.IntegrationWarning:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", integrate.IntegrationWarning)
                value, _ = integrate.quad(integrand, lo, hi, limit=400,
                                          epsabs=1e-12 * (hi - lo), epsrel=1e-9)
        total += value
    return total


def _tail_integrand(scalar: Callable, k: int, b: float) -> Callable:
    """``y -> k t^k sf(t)`` with ``t = b e^y`` (in logs: no overflow far in the tail; ``sf`` may
    overflow to 0 in its intermediate steps there)."""
    def tail(y):
        log_t = math.log(b) + y
        with np.errstate(over="ignore"):
            value = scalar(math.exp(min(log_t, 700.0)))
        if value <= 0:
            return 0.0
        power = math.log(k) + k * log_t + math.log(value)
        # beyond the floats (a high moment of a power tail, far out): unbounded as far as the
        # integral is concerned (it had raised OverflowError)
        return math.inf if power > _LOG_MAX else math.exp(power)

    return tail


_LOG_MAX = math.log(np.finfo(float).max)


def _diverges(tail: Callable) -> bool:
    """``t^k sf(t)`` does not decrease between ``t = b e^100`` and ``b e^200``."""
    far = [tail(y) for y in (100.0, 200.0)]
    return far[1] > 0 and far[1] >= far[0]


def _inverted(sf: Callable, k: int, scale: float) -> float:
    """The ``scale`` form of :func:`moment_from_sf` (a survival function from inversion)."""
    ladder = scale * 2.0 ** np.arange(-30, 64)
    tail = sf(ladder)
    below = np.nonzero(tail < _NOISE_FLOOR)[0]
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
    return _fixed_pieces(sf, k, np.concatenate([[0.0], ladder[: j + 1]]), 20) + remainder


_NOISE_FLOOR = 1e-10
"""The ``scale`` form of :func:`moment_from_sf` stops where the tail falls below this (ten times
the absolute error of about 1e-11 of an inverted survival function)."""


# ------------------------------------------------------------- moments from a survival function
def moment_from_sf(sf: Callable, k: int, cuts=None, *, scale: float | None = None,
                   rule: str | int = "quad", tail: bool = True, epsrel: float = 1e-11) -> float:
    """``E[T^k] = int_0^inf k t^(k-1) sf(t) dt`` for a vectorised survival function ``sf``.

    The one integration of a moment from a tail in the library, in two forms chosen by what is
    known about ``sf``:

    * ``cuts`` (``sf`` accurate to double precision, its kinks and jumps at known times or
      found by ``rule="adaptive"``): the pieces ``[0, cuts[0]], [cuts[0], cuts[1]], ...`` are
      integrated by ``rule``, then (if ``tail``) ``[cuts[-1], inf)`` in ``y = log t``, where
      ``cuts[-1]`` should be a far quantile (``1 - 1e-16``) or a typical time: a tail
      ``t^k sf(t)`` that does not decrease between ``t = cuts[-1] e^100`` and ``e^200`` marks a
      divergent moment (``inf``), and so does a tail integral that QUADPACK cannot converge.
    * ``scale`` (``sf`` known only to an absolute error of about 1e-11, as from numerical
      Laplace inversion, kinks unknown): 20-point Gauss-Legendre on the geometric panels
      ``scale 2^j`` up to ``c``, the last point before the tail first falls below 1e-10 (beyond
      it the tail is noise); the rest is extrapolated from the tail at ``c/4, c/2, c``: a power
      law ``P(T > t) ~ t^(-a)`` if the log-ratios per doubling are about equal (``a <= k``
      means a divergent moment: ``inf``), otherwise an exponential tail. ``inf`` also when the
      tail never falls below 1e-10.

    Parameters
    ----------
    sf : callable
        ``t (1-d float array) -> P(T > t)`` (an array of the same size).
    k : int
        Order of the moment (positive).
    cuts : array_like, optional
        Increasing times ``> 0`` bounding the pieces (a leading 0 is ignored); kinks and jumps
        of ``sf`` belong here. Give ``cuts`` or ``scale``.
    scale : float, optional
        A typical time (the mean), where the panels of the ``scale`` form are anchored.
    rule : {"quad", "adaptive"} or int, optional
        With ``cuts``: how the pieces are integrated. ``"quad"``: adaptive QUADPACK per piece
        (relative tolerance ``epsrel``; where round-off in ``sf`` keeps it from being met, the
        piece is integrated again to ``1e-9`` and that estimate accepted), one scalar call of
        ``sf`` per point. ``"adaptive"``: Gauss-Legendre in ``u = log(1 + t / cuts[0])``,
        24- and 48-point rules per piece, pieces where they differ by more than ``1e-12`` of the
        total halved (at most 60 rounds, one vectorised call of ``sf`` per round), which
        localises kinks and jumps inside the pieces. An integer ``n``: one fixed ``n``-point
        Gauss-Legendre rule per piece (``sf`` smooth on every piece; exact where
        ``t^(k-1) sf(t)`` is a polynomial of degree ``2 n - 1`` on each).
    tail : bool, optional
        With ``cuts``: ``False`` truncates at ``cuts[-1]``, for survival functions negligible or
        only accurate up to there.
    epsrel : float, optional
        Relative tolerance per piece of ``rule="quad"``.

    Returns
    -------
    float
        The moment, ``inf`` when it diverges.

    Examples
    --------
    >>> import numpy as np
    >>> from queuetheory.quadrature import moment_from_sf
    >>> m = moment_from_sf(lambda t: np.exp(-t), 2, [0.5, 1.0])   # E[T^2] = 2
    >>> abs(m - 2.0) < 1e-12
    True
    >>> pareto = lambda t: np.where(t < 1, 1.0, np.maximum(t, 1.0) ** -2.0)
    >>> moment_from_sf(pareto, 2, [1.0])                            # Pareto(2): E[T^2] = inf
    inf
    >>> noisy = lambda t: np.exp(-t) + 1e-11 * np.cos(t)           # as from inversion
    >>> abs(moment_from_sf(noisy, 2, scale=1.0) - 2.0) < 1e-9
    True
    >>> atom = lambda t: np.where(t < 1.0, 1.0, 0.0)                 # an atom at 1: E[T^3] = 1
    >>> abs(moment_from_sf(atom, 3, [0.3, 2.0], rule="adaptive", tail=False) - 1.0) < 1e-11
    True
    """
    if (cuts is None) == (scale is None):
        raise ValueError("moment_from_sf takes either cuts (times) or scale (a typical time)")
    if scale is not None:
        return _inverted(sf, k, scale)
    cuts = np.asarray(cuts, dtype=float)
    cuts = cuts[1:] if cuts.size and cuts[0] == 0 else cuts
    if cuts.size == 0:
        return 0.0
    edges = np.concatenate([[0.0], cuts])

    def scalar(t):
        return float(np.asarray(sf(np.array([t])), dtype=float)[0])

    if not (rule in ("quad", "adaptive")
            or (isinstance(rule, int) and not isinstance(rule, bool) and rule > 0)):
        raise ValueError(f"rule must be 'quad', 'adaptive' or a positive integer, got {rule!r}")
    far = _tail_integrand(scalar, k, float(cuts[-1]))
    if tail and _diverges(far):
        return math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        if rule == "quad":
            head = _quadpack_pieces(scalar, k, edges, epsrel)
        elif rule == "adaptive":
            head = _adaptive_pieces(sf, k, edges)
        else:
            head = _fixed_pieces(sf, k, edges, rule)
        if not tail:
            return head
        try:
            # beyond a far quantile: an absolute tolerance suffices
            value, _ = integrate.quad(far, 0.0, np.inf, limit=200, epsabs=1e-13 * head,
                                      epsrel=1e-11)
        except integrate.IntegrationWarning:
            return math.inf
    return head + value
