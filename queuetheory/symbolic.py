r"""Sympy expressions for the closed forms that queuetheory implements.

Every function returns a sympy expression (an :class:`~sympy.core.relational.Eq` for equations)
in the module-level symbols below, ready for ``sympy.latex``, ``subs``, ``series``, ``limit``
or ``lambdify``. Functions that take a size (``d``, ``k``, ``n``, ...) build an explicit
expression for an integer and a :class:`~sympy.concrete.summations.Sum` in the symbol of the
same name when it is left out.

Symbols
-------
========================  ===================================================================
``lam``                   Poisson arrival rate ``lambda`` (per server)
``mu``                    exponential service (runtime) rate
``rho``                   load; ``lam / mu`` in the Redundancy-d forms
``s``, ``t``              Laplace variable, time
``EB``, ``EB2``           ``E[B]``, ``E[B^2]``: moments of the service time ``B``
``B(s)``                  LST ``E[exp(-s B)]`` of ``B`` (an undefined sympy function)
``EBe``/``EBe2``/``Be``   moments and LST of the exceptional first service ``B_e``
``lam_I``, ``lam_B``      arrival rates while idle and while busy (M/G/1 with efs)
``b``                     fraction of time a server is busy
``EBi(i)``, ``EBi2(i)``   ``E[B_(i)]``, ``E[B_(i)^2]``: the fastest of ``i`` replicas started
                          together (S&X: ``X M_i``; IR: the minimum of ``i`` runtimes)
``Bi(i, s)``              LST of ``B_(i)``
``d``, ``k``, ``n``,      replicas per job, servers, jobs per batch, redundant coded jobs,
``m``, ``r``              rank of an order statistic (positive integers)
``a``                     rate of an exponential (order statistics)
``i``, ``j``              summation indices
========================  ===================================================================

:func:`exponential_service` and :func:`exponential_replicas` give the substitutions that turn
the general forms into their exponential special cases.

Examples
--------
>>> import sympy
>>> import queuetheory as qt
>>> qs = qt.symbolic
>>> print(sympy.latex(qs.pollaczek_khinchine_mean()))
\frac{\lambda \mathbb{E}[B^{2}]}{- 2 \lambda \mathbb{E}[B] + 2} + \mathbb{E}[B]
>>> sympy.simplify(qs.pollaczek_khinchine_mean().subs(qs.exponential_service()))
-1/(lambda - mu)

References
----------
.. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, Section 5.6.
.. [2] P. D. Welch, "On a generalized M/G/1 queuing process in which the first customer of each
   busy period receives exceptional service", Operations Research 12(5), 1964.
.. [3] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for job
   redundancy: decoupling server slowdown and job size", IEEE/ACM ToN 25(6), 2017.
.. [4] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky,
   "Redundancy-d: the power of d choices for redundancy", Operations Research 65(4), 2017.
.. [5] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion times",
   Operations Research Letters 49(1), 2021 (arXiv 1907.11052).
"""

from __future__ import annotations

import sympy as sp

from . import _checks

__all__ = [
    "lam", "mu", "rho", "s", "t", "b", "a", "lam_I", "lam_B", "d", "k", "n", "m", "r", "i", "j",
    "EB", "EB2", "EBe", "EBe2", "B", "Be", "EBi", "EBi2", "Bi",
    "exponential_service", "exponential_replicas",
    "pollaczek_khinchine_mean", "pollaczek_khinchine_wait_mean",
    "pollaczek_khinchine_lst", "pollaczek_khinchine_wait_lst",
    "mm1_mean", "mm1_lst", "mm1_sf",
    "efs_busy_fraction", "efs_busy_response_mean", "efs_busy_response_lst",
    "riq_first_service_moment", "riq_fixed_point", "riq_mean", "riq_lst",
    "redundancy_d_sf", "redundancy_d_mean", "redundancy_d_mean_hyper", "redundancy_d2_mean",
    "redundancy_d_finite_mean",
    "exponential_order_statistic_mean", "exponential_order_statistic_lst",
    "exponential_order_statistic_cdf",
    "mds_mean", "mds_cdf", "replication_mean", "replication_cdf",
]


class _Moment(sp.Symbol):
    """A positive symbol printed ``E[...]`` as text and ``\\mathbb{E}[...]`` in LaTeX."""

    def _latex(self, printer, exp=None):
        body = self.name[2:-1].replace("^2", "^{2}").replace("_e", "_{e}")
        out = rf"\mathbb{{E}}[{body}]"
        return out if exp is None else rf"{out}^{{{exp}}}"


class _Notation(sp.Function):
    """An undefined function with its own text and LaTeX forms (templates over the args)."""

    _text = ""
    _tex = ""

    def _sympystr(self, printer):
        return self._text.format(*(printer._print(x) for x in self.args))

    def _latex(self, printer, exp=None):
        out = self._tex.format(*(printer._print(x) for x in self.args))
        return out if exp is None else rf"\left({out}\right)^{{{exp}}}"


class B(_Notation):
    """``B(s)``: LST ``E[exp(-s B)]`` of the service time ``B``."""

    nargs = 1
    _text = "B~({})"
    _tex = r"\tilde{{B}}\left({}\right)"


class Be(_Notation):
    """``Be(s)``: LST of the exceptional first service ``B_e``."""

    nargs = 1
    _text = "B_e~({})"
    _tex = r"\tilde{{B}}_{{e}}\left({}\right)"


class EBi(_Notation):
    """``EBi(i)``: ``E[B_(i)]``, the mean of the fastest of ``i`` replicas started together."""

    nargs = 1
    _text = "E[B_({})]"
    _tex = r"\mathbb{{E}}[B_{{({})}}]"


class EBi2(_Notation):
    """``EBi2(i)``: ``E[B_(i)^2]``, second moment of the fastest of ``i`` replicas."""

    nargs = 1
    _text = "E[B_({})^2]"
    _tex = r"\mathbb{{E}}[B_{{({})}}^{{2}}]"


class Bi(_Notation):
    """``Bi(i, s)``: LST of the fastest of ``i`` replicas started together."""

    nargs = 2
    _text = "B_({})~({})"
    _tex = r"\tilde{{B}}_{{({})}}\left({}\right)"


lam = sp.Symbol("lambda", positive=True)
mu = sp.Symbol("mu", positive=True)
rho = sp.Symbol("rho", positive=True)
s = sp.Symbol("s")
t = sp.Symbol("t", nonnegative=True)
b = sp.Symbol("b", positive=True)
a = sp.Symbol("a", positive=True)
lam_I = sp.Symbol("lambda_I", positive=True)
lam_B = sp.Symbol("lambda_B", nonnegative=True)
d, k, n, m, r = sp.symbols("d k n m r", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True, nonnegative=True)
EB = _Moment("E[B]", positive=True)
EB2 = _Moment("E[B^2]", positive=True)
EBe = _Moment("E[B_e]", positive=True)
EBe2 = _Moment("E[B_e^2]", positive=True)


_SIZES = {"d": d, "k": k, "n": n, "m": m, "r": r}


def _size(name: str, value, minimum: int = 1) -> sp.Expr:
    """The symbol ``name`` if ``value`` is None, a sympy expression as is, else an integer."""
    if value is None:
        return _SIZES[name]
    if isinstance(value, sp.Basic):
        return value
    return sp.Integer(_checks.positive_int(name, value, minimum))


def _expand_if_concrete(expr: sp.Expr, *sizes) -> sp.Expr:
    """Carry out the sums of ``expr`` when every size is a concrete integer."""
    return expr.doit() if all(x.is_Integer for x in sizes) else expr


def exponential_service(rate: sp.Expr = mu) -> dict:
    """Substitution making the service time ``B`` exponential with rate ``rate``.

    Parameters
    ----------
    rate : sympy expression, optional
        The rate (default :data:`mu`).

    Returns
    -------
    dict
        ``{EB: 1/rate, EB2: 2/rate**2, B: Lambda(s, rate/(rate + s))}`` for ``expr.subs``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.pollaczek_khinchine_wait_lst().subs(qs.exponential_service()).simplify()
    (lambda - mu)*(mu + s)/(mu*(lambda - mu - s))
    """
    return {EB: 1 / rate, EB2: 2 / rate**2, B: sp.Lambda(s, rate / (rate + s))}


def exponential_replicas(rate: sp.Expr = mu) -> dict:
    """Substitution for independent exponential runtimes (IR): ``B_(i) ~ Exp(i rate)``.

    Parameters
    ----------
    rate : sympy expression, optional
        Rate of one replica's runtime (default :data:`mu`).

    Returns
    -------
    dict
        Lambdas for :class:`EBi`, :class:`EBi2` and :class:`Bi`, for ``expr.subs``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.riq_first_service_moment(2).subs(qs.exponential_replicas()).expand()
    b/(2*mu) + 1/(2*mu)
    """
    x = sp.Dummy("i")
    return {EBi: sp.Lambda(x, 1 / (x * rate)), EBi2: sp.Lambda(x, 2 / (x * rate) ** 2),
            Bi: sp.Lambda((x, s), x * rate / (x * rate + s))}


# ----------------------------------------------------------------------------------------------
# M/G/1: Pollaczek-Khinchine and M/M/1


def pollaczek_khinchine_wait_mean() -> sp.Expr:
    """Mean waiting time of the M/G/1 FCFS queue: ``lam E[B^2] / (2 (1 - lam E[B]))``.

    Symbols: :data:`lam`, :data:`EB`, :data:`EB2`. Valid for ``lam E[B] < 1``.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> print(sympy.latex(qt.symbolic.pollaczek_khinchine_wait_mean()))
    \\frac{\\lambda \\mathbb{E}[B^{2}]}{- 2 \\lambda \\mathbb{E}[B] + 2}

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Section 5.6.
    """
    return lam * EB2 / (2 * (1 - lam * EB))


def pollaczek_khinchine_mean() -> sp.Expr:
    """Mean response time of the M/G/1 FCFS queue: ``E[B] + lam E[B^2] / (2 (1 - lam E[B]))``.

    Symbols: :data:`lam`, :data:`EB`, :data:`EB2`. Valid for ``lam E[B] < 1``; numeric
    counterpart :func:`queuetheory.mg1.pk_mean`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.pollaczek_khinchine_mean().subs({qs.lam: 1, qs.EB: 0.5, qs.EB2: 0.5})
    1.00000000000000

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Section 5.6 (the form used
       by :func:`queuetheory.mg1.pk_mean`).
    """
    return EB + pollaczek_khinchine_wait_mean()


def pollaczek_khinchine_wait_lst() -> sp.Expr:
    """LST of the M/G/1 FCFS waiting time: ``(1 - lam E[B]) s / (s - lam (1 - B(s)))``.

    Symbols: :data:`lam`, :data:`EB`, :data:`s` and the service LST :class:`B`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> print(sympy.latex(qt.symbolic.pollaczek_khinchine_wait_lst()))
    \\frac{s \\left(- \\lambda \\mathbb{E}[B] + 1\\right)}{- \\lambda
    \\left(1 - \\tilde{B}\\left(s\\right)\\right) + s}

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Section 5.6.
    """
    return (1 - lam * EB) * s / (s - lam * (1 - B(s)))


def pollaczek_khinchine_lst() -> sp.Expr:
    """LST of the M/G/1 FCFS response time: ``(1 - lam E[B]) s B(s) / (s - lam (1 - B(s)))``.

    Symbols: :data:`lam`, :data:`EB`, :data:`s`, :class:`B`. Numeric counterpart
    :func:`queuetheory.mg1.pk_lst`. ``-d/ds`` at ``s = 0`` gives
    :func:`pollaczek_khinchine_mean`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.pollaczek_khinchine_lst().subs(qs.exponential_service()).simplify()
    (lambda - mu)/(lambda - mu - s)

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Section 5.6.
    """
    return pollaczek_khinchine_wait_lst() * B(s)


def mm1_mean() -> sp.Expr:
    """Mean response time of the M/M/1 queue, ``1 / (mu - lam)`` (valid for ``lam < mu``).

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.mm1_mean()
    1/(-lambda + mu)

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Chapter 3 (M/M/1).
    """
    return 1 / (mu - lam)


def mm1_lst() -> sp.Expr:
    """LST of the M/M/1 response time, ``(mu - lam) / (mu - lam + s)`` (Exp(mu - lam)).

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.mm1_lst()
    (-lambda + mu)/(-lambda + mu + s)

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Chapter 5 (P-K with
       exponential service).
    """
    return (mu - lam) / (mu - lam + s)


def mm1_sf() -> sp.Expr:
    """Tail ``P(T > t) = exp(-(mu - lam) t)`` of the M/M/1 response time.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.mm1_sf()
    exp(t*(lambda - mu))

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, Chapter 3 (M/M/1).
    """
    return sp.exp(-(mu - lam) * t)


# ----------------------------------------------------------------------------------------------
# M/G/1 with exceptional first service and two arrival rates


def efs_busy_fraction() -> sp.Expr:
    """Busy fraction of the M/G/1 with exceptional first service: ``b = x / (1 + x)``.

    ``x = lam_I E[B_e] / (1 - lam_B E[B])`` is the ratio of the mean busy period
    ``E[B_e] / (1 - lam_B E[B])`` to the mean idle period ``1 / lam_I`` (renewal reward).
    Symbols: :data:`lam_I`, :data:`lam_B`, :data:`EBe`, :data:`EB`. Numeric counterpart
    :func:`queuetheory.mg1.efs_busy_fraction`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.efs_busy_fraction().subs({qs.lam_I: qs.lam, qs.lam_B: qs.lam, qs.EBe: qs.EB}).simplify()
    lambda*E[B]

    References
    ----------
    .. [1] P. D. Welch, Operations Research 12(5), 1964.
    """
    x = lam_I * EBe / (1 - lam_B * EB)
    return x / (1 + x)


def efs_busy_response_mean() -> sp.Expr:
    """Mean response time of a job arriving while the efs server is busy.

    ``E[B_e^2] / (2 E[B_e]) + lam_B E[B^2] / (2 (1 - lam_B E[B])) + E[B]``: the equilibrium
    excess of ``B_e``, a Pollaczek-Khinchine wait at rate ``lam_B``, then its own service.
    Numeric counterpart :func:`queuetheory.mg1.efs_busy_response_mean`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> print(sympy.latex(qt.symbolic.efs_busy_response_mean()))
    \\frac{\\lambda_{B} \\mathbb{E}[B^{2}]}{- 2 \\lambda_{B} \\mathbb{E}[B] + 2}
    + \\mathbb{E}[B] + \\frac{\\mathbb{E}[B_{e}^{2}]}{2 \\mathbb{E}[B_{e}]}

    References
    ----------
    .. [1] P. D. Welch, Operations Research 12(5), 1964.
    """
    return EBe2 / (2 * EBe) + pollaczek_khinchine_wait_mean().subs(lam, lam_B) + EB


def efs_busy_response_lst() -> sp.Expr:
    """LST of the response time of a job arriving while the efs server is busy.

    ``(1 - Be(s)) / (s E[B_e]) * (1 - lam_B E[B]) s / (s - lam_B (1 - B(s))) * B(s)``.
    Numeric counterpart :func:`queuetheory.mg1.efs_busy_response_lst`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> exp_first = {qs.Be: qs.B, qs.EBe: qs.EB}     # M/M/1 given busy: Exp(mu) + Exp(mu - lam_B)
    >>> qs.efs_busy_response_lst().subs(exp_first).subs(qs.exponential_service()).simplify()
    mu*(lambda_B - mu)/((mu + s)*(lambda_B - mu - s))

    References
    ----------
    .. [1] P. D. Welch, Operations Research 12(5), 1964.
    """
    excess = (1 - Be(s)) / (s * EBe)
    return excess * pollaczek_khinchine_lst().subs(lam, lam_B)


# ----------------------------------------------------------------------------------------------
# RIQ(d), k -> infinity


def _riq_substitution(dd: sp.Expr) -> dict:
    """Express the efs symbols through ``b``, ``lam``, ``EBi``, ``EBi2`` and ``Bi`` for RIQ(d)."""
    return {EBe2: riq_first_service_moment(dd, 2), EBe: riq_first_service_moment(dd, 1),
            lam_B: lam * b ** (dd - 1), EB2: EBi2(1), EB: EBi(1), lam_I: lam * dd}


def _idle_weight(dd: sp.Expr, x: sp.Expr) -> sp.Expr:
    """``P(x of the dd polled servers are idle) = C(dd, x) (1-b)^x b^(dd-x)``."""
    return sp.binomial(dd, x) * (1 - b) ** x * b ** (dd - x)


def riq_first_service_moment(d: int | sp.Expr | None = None, order: int = 1) -> sp.Expr:
    """``E[B_e^order]`` for RIQ(d): ``sum_{j=1..d} C(d-1, j-1) (1-b)^(j-1) b^(d-j) E[B_(j)^order]``.

    The arrival that ends an idle period finds ``I - 1 ~ Binomial(d - 1, 1 - b)`` more idle
    servers among the other ``d - 1`` polled ones, and runs the fastest of ``I`` replicas.

    Parameters
    ----------
    d : int or sympy expression, optional
        Servers polled per job; default the symbol :data:`d` (a ``Sum``).
    order : {1, 2}
        Moment order.

    Returns
    -------
    sympy.Expr
        In :data:`b` and :class:`EBi` (order 1) or :class:`EBi2` (order 2).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.riq_first_service_moment(2)
    b*E[B_(1)] + (1 - b)*E[B_(2)]

    References
    ----------
    .. [1] K. Gardner et al., IEEE/ACM ToN 25(6), 2017 (RIQ, k -> infinity).
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    dd = _size("d", d)
    moment = EBi if order == 1 else EBi2
    term = sp.binomial(dd - 1, j - 1) * (1 - b) ** (j - 1) * b ** (dd - j) * moment(j)
    return _expand_if_concrete(sp.Sum(term, (j, 1, dd)), dd)


def riq_fixed_point(d: int | sp.Expr | None = None) -> sp.Eq:
    """Equation for the busy fraction ``b`` of RIQ(d) as ``k -> infinity``.

    ``b (1 - lam b^(d-1) E[B_(1)]) = (1 - b) lam d E[B_e](b)``, i.e. ``b / (1 - b) = x`` with
    ``x`` of :func:`efs_busy_fraction` at idle rate ``lam d`` and busy rate ``lam b^(d-1)``;
    ``b`` is its root in (0, 1) (``b = lam E[B]`` for ``d = 1``).

    Parameters
    ----------
    d : int or sympy expression, optional
        Servers polled per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Eq
        In :data:`b`, :data:`lam`, :class:`EBi`.

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> eq = qs.riq_fixed_point(2).subs(qs.exponential_replicas()).subs({qs.lam: 0.5, qs.mu: 1})
    >>> sympy.nsolve(eq, qs.b, 0.3)   # exponential IR replicas waste no work: b = lam / mu
    0.500000000000000

    References
    ----------
    .. [1] K. Gardner et al., IEEE/ACM ToN 25(6), 2017 (RIQ, k -> infinity).
    """
    dd = _size("d", d)
    sub = _riq_substitution(dd)
    return sp.Eq(b * (1 - sub[lam_B] * sub[EB]), (1 - b) * sub[lam_I] * sub[EBe])


def riq_mean(d: int | sp.Expr | None = None) -> sp.Expr:
    """Mean response time of RIQ(d) as ``k -> infinity``, given the busy fraction ``b``.

    ``sum_{i=1..d} C(d,i) (1-b)^i b^(d-i) E[B_(i)] + b^d * efs_busy_response_mean`` with
    ``lam_B = lam b^(d-1)``, ``B = B_(1)`` and ``B_e`` of :func:`riq_first_service_moment`.
    Substitute ``b`` from :func:`riq_fixed_point`; ``d = 1`` with ``b = lam E[B]`` is
    Pollaczek-Khinchine.

    Parameters
    ----------
    d : int or sympy expression, optional
        Servers polled per job; default the symbol :data:`d` (nested ``Sum``).

    Returns
    -------
    sympy.Expr
        In :data:`b`, :data:`lam`, :class:`EBi`, :class:`EBi2`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.riq_mean(1)
    b*(lambda*E[B_(1)^2]/(-2*lambda*E[B_(1)] + 2) + E[B_(1)] + E[B_(1)^2]/(2*E[B_(1)]))
    + (1 - b)*E[B_(1)]

    References
    ----------
    .. [1] K. Gardner et al., IEEE/ACM ToN 25(6), 2017 (RIQ, k -> infinity).
    """
    dd = _size("d", d)
    immediate = _expand_if_concrete(sp.Sum(_idle_weight(dd, i) * EBi(i), (i, 1, dd)), dd)
    busy = efs_busy_response_mean().subs(_riq_substitution(dd))
    return immediate + b**dd * busy


def riq_lst(d: int | sp.Expr | None = None) -> sp.Expr:
    """LST of the RIQ(d) response time as ``k -> infinity``, given the busy fraction ``b``.

    ``sum_{i=1..d} C(d,i) (1-b)^i b^(d-i) Bi(i, s) + b^d * efs_busy_response_lst`` with
    ``B(s) = Bi(1, s)`` and ``Be(s) = sum_j C(d-1, j-1) (1-b)^(j-1) b^(d-j) Bi(j, s)``.

    Parameters
    ----------
    d : int or sympy expression, optional
        Servers polled per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr
        In :data:`s`, :data:`b`, :data:`lam`, :class:`EBi`, :class:`Bi`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.riq_lst(1).subs(qs.b, qs.lam * qs.EBi(1)).subs(qs.Bi(1, qs.s), qs.B(qs.s)).subs(
    ...     qs.EBi(1), qs.EB).simplify() == qs.pollaczek_khinchine_lst().simplify()
    True

    References
    ----------
    .. [1] K. Gardner et al., IEEE/ACM ToN 25(6), 2017 (RIQ, k -> infinity).
    """
    dd = _size("d", d)
    first = sp.binomial(dd - 1, j - 1) * (1 - b) ** (j - 1) * b ** (dd - j) * Bi(j, s)
    sub = _riq_substitution(dd)
    sub.update({Be(s): _expand_if_concrete(sp.Sum(first, (j, 1, dd)), dd), B(s): Bi(1, s)})
    immediate = _expand_if_concrete(sp.Sum(_idle_weight(dd, i) * Bi(i, s), (i, 1, dd)), dd)
    return immediate + b**dd * efs_busy_response_lst().subs(sub)


# ----------------------------------------------------------------------------------------------
# Redundancy-d, independent exponential(mu) runtimes


def redundancy_d_sf(d: int | sp.Expr | None = None) -> sp.Expr:
    """Tail of the Redundancy-d response time, exponential runtimes, ``k -> infinity``.

    ``P(T > t) = (rho + (1 - rho) exp((d-1) mu t))^(-d/(d-1))`` with ``rho = lam / mu < 1``;
    for ``d = 1`` its limit, the M/M/1 tail ``exp(-(1 - rho) mu t)``.

    Parameters
    ----------
    d : int or sympy expression, optional
        Copies per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr
        In :data:`rho`, :data:`mu`, :data:`t`.

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> print(sympy.latex(qt.symbolic.redundancy_d_sf()))
    \\left(\\rho + \\left(1 - \\rho\\right) e^{\\mu t \\left(d - 1\\right)}\\right)^{-
    \\frac{d}{d - 1}}

    References
    ----------
    .. [1] K. Gardner et al., Operations Research 65(4), 2017 (k -> infinity).
    """
    dd = _size("d", d)
    if dd == 1:
        return sp.exp(-(1 - rho) * mu * t)
    return (rho + (1 - rho) * sp.exp((dd - 1) * mu * t)) ** (-dd / (dd - 1))


def redundancy_d_mean(d: int | sp.Expr | None = None) -> sp.Expr:
    """Mean Redundancy-d response time, exponential runtimes, ``k -> infinity``, as a series.

    ``E[T] = (1/mu) sum_{j>=0} rho^j / (j (d-1) + d)`` (an unevaluated ``Sum``; ``.doit()`` or
    :func:`redundancy_d_mean_hyper` give closed forms). Evaluate it with exact (``Rational``)
    parameters: ``Sum.evalf`` truncates a ``Float`` ratio to an integer (sympy issues 13365,
    23102), e.g. ``rho = 0.5`` gives 0.7345 instead of 0.7726.

    Parameters
    ----------
    d : int or sympy expression, optional
        Copies per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qs = qt.symbolic
    >>> qs.redundancy_d_mean(2)
    Sum(rho**j/(j + 2), (j, 0, oo))/mu

    References
    ----------
    .. [1] K. Gardner et al., Operations Research 65(4), 2017 (k -> infinity).
    """
    dd = _size("d", d)
    return sp.Sum(rho**j / (j * (dd - 1) + dd), (j, 0, sp.oo)) / mu


def redundancy_d_mean_hyper(d: int | sp.Expr | None = None) -> sp.Expr:
    """The series of :func:`redundancy_d_mean` in closed form.

    ``sum_j rho^j / (j (d-1) + d) = 2F1(1, c; c + 1; rho) / d`` with ``c = d / (d-1)``, since
    ``(c)_j / (c+1)_j = c / (c + j)``; ``d = 1`` gives ``1 / (mu - lam)``. ``sympy.hyperexpand``
    turns it into logarithms and inverse hyperbolic functions for integer ``d``.

    Parameters
    ----------
    d : int or sympy expression, optional
        Copies per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> sympy.hyperexpand(qt.symbolic.redundancy_d_mean_hyper(3))
    (-3/rho + 3*atanh(sqrt(rho))/rho**(3/2))/(3*mu)
    """
    dd = _size("d", d)
    if dd == 1:
        return 1 / (mu * (1 - rho))
    c = dd / (dd - 1)
    return sp.hyper([1, c], [c + 1], rho) / (dd * mu)


def redundancy_d2_mean() -> sp.Expr:
    """Mean Redundancy-2 response time, exponential runtimes: ``(-ln(1-rho) - rho) / (mu rho^2)``.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import sympy
    >>> import queuetheory as qt
    >>> print(sympy.latex(qt.symbolic.redundancy_d2_mean()))
    \\frac{- \\rho - \\log{\\left(1 - \\rho \\right)}}{\\mu \\rho^{2}}

    References
    ----------
    .. [1] K. Gardner et al., Operations Research 65(4), 2017 (k -> infinity, d = 2).
    """
    return (-sp.log(1 - rho) - rho) / (mu * rho**2)


def redundancy_d_finite_mean(k: int | sp.Expr | None = None,
                             d: int | sp.Expr | None = None) -> sp.Expr:
    """Exact mean Redundancy-d response time with ``k`` servers, exponential(mu) runtimes.

    ``E[T] = sum_{i=d..k} 1 / (i mu C(k,d) / C(i,d) - k lam)``, from the product-form
    stationary distribution; ``k = d`` is an M/M/1 queue at rates ``k lam``, ``k mu`` and
    ``d = 1`` is ``1 / (mu - lam)``.

    Parameters
    ----------
    k : int or sympy expression, optional
        Servers; default the symbol :data:`k`.
    d : int or sympy expression, optional
        Copies per job, ``<= k``; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr
        In :data:`lam`, :data:`mu`; explicit when ``k`` and ``d`` are integers.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.redundancy_d_finite_mean(3, 2)
    1/(-3*lambda + 6*mu) + 1/(-3*lambda + 3*mu)

    References
    ----------
    .. [1] K. Gardner et al., Operations Research 65(4), 2017 (exact finite-k mean).
    """
    kk = _size("k", k)
    dd = _size("d", d)
    if kk.is_Integer and dd.is_Integer and dd > kk:
        raise ValueError(f"d must be an integer in [1, k] = [1, {kk}], got {dd}")
    term = 1 / (i * mu * sp.binomial(kk, dd) / sp.binomial(i, dd) - kk * lam)
    return _expand_if_concrete(sp.Sum(term, (i, dd, kk)), kk, dd)


# ----------------------------------------------------------------------------------------------
# Exponential order statistics, MDS coding and replication without removal on M/M/1


def exponential_order_statistic_mean(r: int | sp.Expr | None = None,
                                     n: int | sp.Expr | None = None,
                                     rate: sp.Expr = a) -> sp.Expr:
    """Mean of the ``r``-th smallest of ``n`` i.i.d. Exp(``rate``): ``sum_{j<r} 1/((n-j) rate)``.

    The gaps between consecutive order statistics are independent Exp((n - j) rate)
    (memorylessness, Renyi's representation).

    Parameters
    ----------
    r, n : int or sympy expression, optional
        Rank ``1 <= r <= n`` and sample size; default the symbols :data:`r`, :data:`n`.
    rate : sympy expression, optional
        Default :data:`a`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.exponential_order_statistic_mean(2, 3)
    5/(6*a)

    References
    ----------
    .. [1] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003 (exponential
       spacings).
    """
    rr, nn = _order_sizes(r, n)
    return _expand_if_concrete(sp.Sum(1 / ((nn - j) * rate), (j, 0, rr - 1)), rr, nn)


def exponential_order_statistic_lst(r: int | sp.Expr | None = None,
                                    n: int | sp.Expr | None = None,
                                    rate: sp.Expr = a) -> sp.Expr:
    """LST of the ``r``-th smallest of ``n`` i.i.d. Exp(``rate``).

    ``prod_{j<r} (n-j) rate / ((n-j) rate + s)`` (a sum of independent exponential gaps).

    Parameters
    ----------
    r, n : int or sympy expression, optional
        Rank ``1 <= r <= n`` and sample size; default the symbols :data:`r`, :data:`n`.
    rate : sympy expression, optional
        Default :data:`a`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.exponential_order_statistic_lst(1, 2)
    2*a/(2*a + s)

    References
    ----------
    .. [1] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003 (exponential
       spacings).
    """
    rr, nn = _order_sizes(r, n)
    gap = (nn - j) * rate
    return _expand_if_concrete(sp.Product(gap / (gap + s), (j, 0, rr - 1)), rr, nn)


def exponential_order_statistic_cdf(r: int | sp.Expr | None = None,
                                    n: int | sp.Expr | None = None,
                                    rate: sp.Expr = a) -> sp.Expr:
    """``P(X_(r) <= t)`` for the ``r``-th smallest of ``n`` i.i.d. Exp(``rate``).

    ``P(Binomial(n, F(t)) >= r) = sum_{j=r..n} C(n,j) F^j (1-F)^(n-j)``, ``F = 1 - exp(-rate t)``.

    Parameters
    ----------
    r, n : int or sympy expression, optional
        Rank ``1 <= r <= n`` and sample size; default the symbols :data:`r`, :data:`n`.
    rate : sympy expression, optional
        Default :data:`a`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.exponential_order_statistic_cdf(2, 2)
    (1 - exp(-a*t))**2

    References
    ----------
    .. [1] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, Chapter 2.
    """
    rr, nn = _order_sizes(r, n)
    F = 1 - sp.exp(-rate * t)
    term = sp.binomial(nn, j) * F**j * (1 - F) ** (nn - j)
    return _expand_if_concrete(sp.Sum(term, (j, rr, nn)), rr, nn)


def _order_sizes(r, n) -> tuple[sp.Expr, sp.Expr]:
    rr = _size("r", r)
    nn = _size("n", n)
    if rr.is_Integer and nn.is_Integer and rr > nn:
        raise ValueError(f"r must be an integer in [1, n] = [1, {nn}], got {rr}")
    return rr, nn


def _mds_rate(nn: sp.Expr, mm: sp.Expr) -> sp.Expr:
    """``mu`` minus the per-server arrival rate ``(n + m) lam / n`` of coded jobs."""
    return mu - (nn + mm) * lam / nn


def mds_mean(n: int | sp.Expr | None = None, m: int | sp.Expr | None = None) -> sp.Expr:
    """Mean batch completion time of MDS(n, m) without removal, exponential(mu) job sizes.

    Each server is an M/M/1 queue fed ``(n + m) lam / n`` coded jobs per unit time (``lam``:
    original jobs per server), so sojourns are Exp(``a``), ``a = mu - (n + m) lam / n``, and
    the batch completes at the ``n``-th of ``n + m`` independent sojourns (``k -> infinity``):
    ``E[T] = (H_{n+m} - H_m) / a``. Valid for ``a > 0``.

    Parameters
    ----------
    n : int or sympy expression, optional
        Jobs per batch; default the symbol :data:`n`.
    m : int or sympy expression, optional
        Redundant coded jobs per batch (``>= 0``); default the symbol :data:`m`.

    Returns
    -------
    sympy.Expr
        In :data:`lam`, :data:`mu`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.mds_mean(2, 1)
    5/(6*(-3*lambda/2 + mu))

    References
    ----------
    .. [1] K. Duffy, S. Shneer, Operations Research Letters 49(1), 2021 (the model without removal).
    """
    nn = _size("n", n)
    mm = _size("m", m, minimum=0)
    return (sp.harmonic(nn + mm) - sp.harmonic(mm)) / _mds_rate(nn, mm)


def mds_cdf(n: int | sp.Expr | None = None, m: int | sp.Expr | None = None) -> sp.Expr:
    """``P(T_batch <= t)`` of MDS(n, m) without removal, exponential(mu) job sizes.

    The ``n``-th of ``n + m`` i.i.d. Exp(``a``) sojourns, ``a = mu - (n + m) lam / n``
    (see :func:`mds_mean`).

    Parameters
    ----------
    n, m : int or sympy expression, optional
        Jobs per batch and redundant coded jobs; default the symbols :data:`n`, :data:`m`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.mds_cdf(1, 0)
    1 - exp(t*(lambda - mu))

    References
    ----------
    .. [1] K. Duffy, S. Shneer, Operations Research Letters 49(1), 2021.
    """
    nn = _size("n", n)
    mm = _size("m", m, minimum=0)
    return exponential_order_statistic_cdf(nn, nn + mm, _mds_rate(nn, mm))


def replication_mean(n: int | sp.Expr | None = None,
                     d: int | sp.Expr | None = None) -> sp.Expr:
    """Mean batch completion time of Replication(n, d) without removal, exponential(mu) sizes.

    Each server is an M/M/1 queue fed ``d lam`` copies per unit time, sojourns are Exp(``a``),
    ``a = mu - d lam``; a job is done at the first of its ``d`` copies (Exp(``d a``)), the batch
    at the last of its ``n`` jobs: ``E[T] = H_n / (d a)``. Valid for ``d lam < mu``.

    Parameters
    ----------
    n : int or sympy expression, optional
        Jobs per batch; default the symbol :data:`n`.
    d : int or sympy expression, optional
        Copies per job; default the symbol :data:`d`.

    Returns
    -------
    sympy.Expr
        In :data:`lam`, :data:`mu`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.replication_mean(2, 2)
    3/(4*(-2*lambda + mu))

    References
    ----------
    .. [1] K. Duffy, S. Shneer, Operations Research Letters 49(1), 2021 (the model without removal).
    """
    nn = _size("n", n)
    dd = _size("d", d)
    return sp.harmonic(nn) / dd / (mu - dd * lam)


def replication_cdf(n: int | sp.Expr | None = None,
                    d: int | sp.Expr | None = None) -> sp.Expr:
    """``P(T_batch <= t) = (1 - exp(-d a t))^n``, ``a = mu - d lam``, for Replication(n, d).

    Without removal and with exponential(mu) job sizes (see :func:`replication_mean`).

    Parameters
    ----------
    n, d : int or sympy expression, optional
        Jobs per batch and copies per job; default the symbols :data:`n`, :data:`d`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.symbolic.replication_cdf(1, 1)
    1 - exp(t*(lambda - mu))

    References
    ----------
    .. [1] K. Duffy, S. Shneer, Operations Research Letters 49(1), 2021.
    """
    nn = _size("n", n)
    dd = _size("d", d)
    return (1 - sp.exp(-dd * (mu - dd * lam) * t)) ** nn
