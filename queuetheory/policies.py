"""Dispatching policies: validated parameters only (the analysis and simulation act on them)."""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks

__all__ = ["Policy", "Random", "RIQ", "RedundancyD", "Threshold", "MDS", "Replication", "from_name"]


@dataclass(frozen=True)
class Policy:
    """Base class of the dispatching policies."""

    @property
    def polled(self) -> int:
        """How many distinct servers one arrival (job or batch) involves."""
        return 1

    @property
    def batch(self) -> int:
        """Number of original jobs that arrive together (1 except for batch policies)."""
        return 1

    def label(self) -> str:
        """Short label for tables, e.g. ``RIQ(d=3)``."""
        return repr(self)


@dataclass(frozen=True)
class Random(Policy):
    """No redundancy: each job joins one server chosen uniformly at random.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Random().label()
    'Random'
    """

    def label(self):
        return "Random"


@dataclass(frozen=True)
class _Polling(Policy):
    d: int = 2

    def __post_init__(self):
        object.__setattr__(self, "d", _checks.positive_int("d", self.d))

    @property
    def polled(self):
        return self.d

    def label(self):
        return f"{type(self).__name__}(d={self.d})"


@dataclass(frozen=True)
class RIQ(_Polling):
    """Redundant-to-Idle-Queue: poll ``d`` servers; replicate to the idle ones among them,
    or, if all are busy, join one of them at random.

    Parameters
    ----------
    d : int
        Number of servers polled per job, >= 1 (``d = 1`` is :class:`Random`).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.RIQ(d=3)
    RIQ(d=3)

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, B. Van Houdt, IEEE/ACM Transactions
       on Networking 25(6), 2017, Section on RIQ.
    """


@dataclass(frozen=True)
class RedundancyD(_Polling):
    """Redundancy-d: replicate every job to ``d`` servers chosen at random; the first replica
    to finish cancels the others.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.RedundancyD(2).label()
    'RedundancyD(d=2)'
    """


@dataclass(frozen=True)
class Threshold(_Polling):
    """THRESHOLD-n: poll ``d`` servers and replicate to those holding at most ``n`` jobs; if
    none does, join one polled server at random. ``n = 0`` is :class:`RIQ`.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Threshold(d=3, n=1).label()
    'Threshold(d=3, n=1)'
    """

    n: int = 0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "n", _checks.positive_int("n", self.n, minimum=0))

    def label(self):
        return f"Threshold(d={self.d}, n={self.n})"


@dataclass(frozen=True)
class MDS(Policy):
    """MDS coding: each batch of ``n`` jobs becomes ``n + m`` coded jobs on distinct random
    servers; the batch completes when any ``n`` of them are served.

    Parameters
    ----------
    n : int
        Jobs per batch, >= 1.
    m : int
        Redundant coded jobs per batch, >= 0.
    remove : bool
        Remove the unfinished coded jobs when the batch completes (default True).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.MDS(n=10, m=2).polled
    12
    """

    n: int = 1
    m: int = 0
    remove: bool = True

    def __post_init__(self):
        object.__setattr__(self, "n", _checks.positive_int("n", self.n))
        object.__setattr__(self, "m", _checks.positive_int("m", self.m, minimum=0))
        object.__setattr__(self, "remove", _checks.boolean("remove", self.remove))

    @property
    def polled(self):
        return self.n + self.m

    @property
    def batch(self):
        return self.n

    def label(self):
        return f"MDS(n={self.n}, m={self.m}{'' if self.remove else ', no removal'})"


@dataclass(frozen=True)
class Replication(Policy):
    """Batch replication: each of a batch's ``n`` jobs is copied to ``d`` servers (``n d``
    distinct random servers in all); a job is done at its first copy, the batch at its last job.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Replication(n=10, d=2).polled
    20
    """

    n: int = 1
    d: int = 1
    remove: bool = True

    def __post_init__(self):
        object.__setattr__(self, "n", _checks.positive_int("n", self.n))
        object.__setattr__(self, "d", _checks.positive_int("d", self.d))
        object.__setattr__(self, "remove", _checks.boolean("remove", self.remove))

    @property
    def polled(self):
        return self.n * self.d

    @property
    def batch(self):
        return self.n

    def label(self):
        return f"Replication(n={self.n}, d={self.d}{'' if self.remove else ', no removal'})"


def from_name(name: str, d: int = 1) -> Policy:
    """A policy from a short name, as the command line and :func:`queuetheory.compare` take it.

    Parameters
    ----------
    name : str
        ``random``, ``riq``, ``redundancy``, ``threshold:N`` (THRESHOLD-N), ``mds:N`` (batches of
        N jobs, ``m = d`` coded extras) or ``replication:N`` (batches of N, ``d`` copies each).
    d : int
        Degree of redundancy (ignored by ``random``).

    Examples
    --------
    >>> from queuetheory.policies import from_name
    >>> from_name("threshold:1", 3), from_name("mds:10", 2)
    (Threshold(d=3, n=1), MDS(n=10, m=2, remove=True))
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a policy name (a string such as 'riq'), got {name!r}")
    kind, _, arg = name.strip().lower().partition(":")
    try:
        number = int(arg) if arg else None
    except ValueError:
        raise ValueError(f"policy {name!r}: the part after ':' must be an integer") from None
    if kind == "random":
        return Random()
    if kind == "riq":
        return RIQ(d)
    if kind in ("redundancy", "redundancy-d", "redundancyd"):
        return RedundancyD(d)
    if kind == "threshold":
        return Threshold(d, 1 if number is None else number)
    if kind == "mds":
        return MDS(10 if number is None else number, d)
    if kind == "replication":
        return Replication(10 if number is None else number, d)
    raise ValueError(f"unknown policy {name!r}; use random, riq, redundancy, threshold:N, mds:N "
                     f"or replication:N")
