"""Measured slowdown distributions, each with its source.

A slowdown ``S`` multiplies a job's inherent size ``X`` on one server (the S&X model):
``runtime = X * S``.
"""

from __future__ import annotations

from .distributions import Discrete

__all__ = ["facebook", "available", "by_name"]

_FACEBOOK_VALUES = tuple(range(1, 13))
_FACEBOOK_PROBS = (0.23, 0.14, 0.09, 0.03, 0.08, 0.10, 0.04, 0.14, 0.12, 0.021, 0.007, 0.002)


def facebook() -> Discrete:
    """Slowdowns of a Facebook Hadoop cluster, as used with the S&X model.

    ``S`` takes the values 1, 2, ..., 12 with probabilities 0.23, 0.14, 0.09, 0.03, 0.08, 0.10,
    0.04, 0.14, 0.12, 0.021, 0.007, 0.002, so ``E[S] = 4.691`` and ``E[S^2] = 31.555``.

    Returns
    -------
    Discrete
        The slowdown distribution.

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> round(S.mean(), 6), round(S.moment(2), 6)
    (4.691, 31.555)

    References
    ----------
    .. [1] G. Ananthanarayanan, A. Ghodsi, S. Shenker, I. Stoica, "Effective straggler
       mitigation: attack of the clones" (Dolly), NSDI 2013 -- the Facebook trace.
    .. [2] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, "A better model for
       job redundancy: decoupling server slowdown and job size", IEEE/ACM Transactions on
       Networking 25(6), 2017 -- its use as the S of the S&X model.
    """
    return Discrete(_FACEBOOK_VALUES, _FACEBOOK_PROBS)


_BUILTIN = {"facebook": facebook}


def available() -> list[str]:
    """Names of the built-in slowdown distributions.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.slowdowns.available()
    ['facebook']
    """
    return sorted(_BUILTIN)


def by_name(name: str) -> Discrete:
    """The built-in slowdown distribution called ``name`` (see :func:`available`)."""
    try:
        return _BUILTIN[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown slowdown distribution {name!r}; built-in: "
                         f"{', '.join(available())}") from None
