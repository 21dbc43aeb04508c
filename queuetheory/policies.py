"""Dispatching policies: each class answers everything about itself.

A policy class holds its validated parameters and declares, for the rest of the package, its
names on the command line and in :func:`from_name` (``names``, built by ``from_cli``), the
simulation kernel family that applies its update rule (:meth:`Policy.kernel`, a
:class:`Kernel` the simulator maps to its numpy or compiled kernel), and the stability facts
known about it (:meth:`Policy.load_bound`). Every subclass that declares ``names`` joins the
registry read by :func:`from_name`, the command line's help and the error messages; a subclass
inherits the kernel, the stability facts and the analysis (looked up along the class hierarchy)
of its parent. This module imports neither the simulation nor the analysis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from . import _checks
from .distributions import Exponential
from .runtime import IR, RuntimeModel

__all__ = ["Policy", "Random", "RIQ", "RedundancyD", "Threshold", "MDS", "Replication", "Kernel",
           "from_name", "policy_class", "policy_classes", "known_names", "nearest"]

_T = TypeVar("_T")

#: Lower-case name -> policy class, in the order the classes were defined.
_REGISTRY: dict[str, type[Policy]] = {}


@dataclass(frozen=True)
class Kernel:
    """Which simulation kernel applies a policy's update rule, and with which parameters.

    Parameters
    ----------
    family : str
        ``"lindley"`` (one server per arrival), ``"riq"`` (replicas to the idle polled servers,
        else one alone), ``"threshold"`` (parameter ``n``: replicas to the polled servers
        holding at most ``n`` jobs, else one alone) or ``"redundant"`` (parameters ``needed``,
        ``groups``, ``remove``: ``groups`` jobs of ``polled / groups`` copies, a job done at its
        ``needed``-th copy, the arrival at its last job; ``remove`` cancels the other copies).
    parameters : dict
        Keyword arguments of the kernel family.

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.MDS(n=3, m=1).kernel()
    Kernel(family='redundant', parameters={'needed': 3, 'groups': 1, 'remove': True})
    """

    family: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Policy:
    """Base class of the dispatching policies.

    A subclass declares its parameters as dataclass fields (validated in ``__post_init__``)
    and overrides what differs from its parent: ``names`` (and ``from_cli``) to be found by
    :func:`from_name` and the command line, :meth:`kernel` to be simulated, :meth:`load_bound`
    for known stability facts, and registers an analysis with
    :func:`queuetheory.analysis.register` if it has one.

    Examples
    --------
    >>> import queuetheory as qt
    >>> p = qt.MDS(n=4, m=2)
    >>> isinstance(p, qt.Policy), p.polled, p.batch, p.label()
    (True, 6, 4, 'MDS(n=4, m=2)')

    A subclass without ``names`` is not registered by name, and inherits its parent's kernel,
    stability facts and analysis:

    >>> class MyRIQ(qt.RIQ):
    ...     pass
    >>> MyRIQ(3).kernel(), MyRIQ(3).label()
    (Kernel(family='riq', parameters={}), 'MyRIQ(d=3)')
    """

    #: Names accepted by :func:`from_name` (case-insensitive; the first is shown in help
    #: texts). Only the names a class declares itself are registered, not inherited ones.
    names: ClassVar[tuple[str, ...]] = ()
    #: Whether the name takes a number, ``name:N`` (passed to :meth:`from_cli`).
    takes_number: ClassVar[bool] = False
    #: Whether the policy is built from the degree of redundancy ``d`` (:func:`from_name`).
    uses_d: ClassVar[bool] = True
    #: What the command line's help adds in brackets after the name, e.g. ``m = d``.
    usage_note: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls.__dict__.get("names", ()):
            key = name.lower()
            taken = _REGISTRY.get(key)
            if taken is not None and (taken.__module__, taken.__qualname__) != (
                    cls.__module__, cls.__qualname__):
                raise ValueError(f"policy name {name!r} of {cls.__qualname__} is taken by "
                                 f"{taken.__module__}.{taken.__qualname__}")
            _REGISTRY[key] = cls

    @classmethod
    def from_cli(cls, number: int | None, d: int) -> Policy:
        """The policy named ``name[:number]`` with degree of redundancy ``d``."""
        return cls(d) if cls.uses_d else cls()

    @classmethod
    def usage(cls, note: bool = False) -> str:
        """How the name is written in help texts, e.g. ``threshold:N``."""
        text = f"{cls.names[0]}:N" if cls.takes_number else cls.names[0]
        return f"{text} ({cls.usage_note})" if note and cls.usage_note else text

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

    def kernel(self) -> Kernel | None:
        """The simulation kernel of the policy, or None if it cannot be simulated.

        An arrival on one server is simulated by the Lindley recursion whatever this says.
        """
        return None

    def load_bound(self, runtime: RuntimeModel, poisson: bool = True) -> str | None:
        """Why the policy is stable exactly when its load is below 1 under ``runtime`` (and
        Poisson arrivals if ``poisson``), or None where that is not known.

        The simulator reads it for its stability verdict (a run at load >= 1 is unstable, one
        below is stable).
        """
        return None


def policy_classes() -> list[type[Policy]]:
    """The registered policy classes (those declaring ``names``), in definition order.

    Examples
    --------
    >>> from queuetheory.policies import policy_classes
    >>> [cls.__name__ for cls in policy_classes()][:3]
    ['Random', 'RIQ', 'RedundancyD']
    """
    return list(dict.fromkeys(_REGISTRY.values()))


def known_names(note: bool = False) -> list[str]:
    """The names of the registered policies as help texts write them (with the notes in
    brackets if ``note``).

    Examples
    --------
    >>> from queuetheory.policies import known_names
    >>> known_names()[:4]
    ['random', 'riq', 'redundancy', 'threshold:N']
    """
    return [cls.usage(note) for cls in policy_classes()]


def nearest(table: Mapping[type, _T], policy: Policy) -> tuple[type, _T] | None:
    """The entry of ``table`` for the nearest class along ``policy``'s class hierarchy (its
    own class first), as ``(class, value)``; ``None`` if no class of it has one.

    This is how a subclass inherits what is registered for its parent: the analysis
    (:func:`queuetheory.analysis.register`) and the finite-k gap map.

    Parameters
    ----------
    table : Mapping[type, object]
        Entries keyed on policy classes.
    policy : Policy
        The policy whose class hierarchy is searched.

    Returns
    -------
    tuple or None
        ``(class, entry)`` for the first class of ``type(policy).__mro__`` in ``table``.

    Examples
    --------
    >>> import queuetheory as qt
    >>> from queuetheory.policies import nearest
    >>> class MyRIQ(qt.RIQ):
    ...     pass
    >>> nearest({qt.RIQ: "riq's entry"}, MyRIQ(3))
    (<class 'queuetheory.policies.RIQ'>, "riq's entry")
    """
    return next(((cls, table[cls]) for cls in type(policy).__mro__ if cls in table), None)


def _stable_below_one(policy: Policy) -> str:
    return f"{policy.label()} is stable exactly below load 1"


@dataclass(frozen=True)
class Random(Policy):
    """No redundancy: each job joins one server chosen uniformly at random.

    Under Poisson arrivals every server is then an M/G/1 queue (the farm's stream thinned to
    ``arrival_rate`` per server).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Random().label()
    'Random'

    References
    ----------
    .. [1] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley 1975, Section 5.6
       (Pollaczek-Khinchine: the M/G/1 queue of each server).
    """

    names = ("random",)
    uses_d = False

    def label(self):
        return "Random"

    def kernel(self):
        return Kernel("lindley")

    def load_bound(self, runtime, poisson=True):
        return _stable_below_one(self)


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

    names = ("riq",)

    def kernel(self):
        return Kernel("riq")

    def load_bound(self, runtime, poisson=True):
        return _stable_below_one(self)


@dataclass(frozen=True)
class RedundancyD(_Polling):
    """Redundancy-d: replicate every job to ``d`` servers chosen at random; the first replica
    to finish cancels the others.

    Parameters
    ----------
    d : int
        Number of servers each job is replicated to, >= 1 (default 2).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.RedundancyD(2).label()
    'RedundancyD(d=2)'

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky,
       "Redundancy-d: the power of d choices for redundancy", Operations Research 65(4), 2017
       (the policy; stability and the closed forms under IR exponential runtimes).
    .. [2] T. Hellemans, T. Bodas, B. Van Houdt, "Performance analysis of redundancy(d) with
       identical/independent replicas", ACM TOMPECS 4(2), 2019 (the mean-field workload
       equation).
    """

    names = ("redundancy", "redundancy-d", "redundancyd")

    def kernel(self):
        return Kernel("redundant", {"needed": 1, "groups": 1, "remove": True})

    def load_bound(self, runtime, poisson=True):
        if poisson and isinstance(runtime, IR) and isinstance(runtime.R, Exponential):
            return (f"{self.label()} with IR exponential runtimes and Poisson arrivals is "
                    f"stable exactly below load 1 (lam < mu) for every k (Gardner et al., "
                    f"Operations Research 2017)")
        return None


@dataclass(frozen=True)
class Threshold(_Polling):
    """THRESHOLD-n: poll ``d`` servers and replicate to those holding at most ``n`` jobs; if
    none does, join one polled server at random. ``n = 0`` is :class:`RIQ`.

    Parameters
    ----------
    d : int
        Number of servers polled per job, >= 1 (default 2).
    n : int
        Most jobs a polled server may hold to receive a replica, >= 0 (default 0).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Threshold(d=3, n=1).label()
    'Threshold(d=3, n=1)'
    """

    n: int = 0
    names = ("threshold",)
    takes_number = True

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "n", _checks.positive_int("n", self.n, minimum=0))

    @classmethod
    def from_cli(cls, number, d):
        return cls(d, 1 if number is None else number)

    def label(self):
        return f"Threshold(d={self.d}, n={self.n})"

    def kernel(self):
        return Kernel("riq") if self.n == 0 else Kernel("threshold", {"n": self.n})


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

    References
    ----------
    .. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion
       times", Operations Research Letters 49(1), 2021, arXiv:1907.11052 (MDS coding of
       batches).
    """

    n: int = 1
    m: int = 0
    remove: bool = True
    names = ("mds",)
    takes_number = True
    usage_note = "m = d"

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

    @classmethod
    def from_cli(cls, number, d):
        return cls(10 if number is None else number, d)

    def label(self):
        return f"MDS(n={self.n}, m={self.m}{'' if self.remove else ', no removal'})"

    def kernel(self):
        return Kernel("redundant", {"needed": self.n, "groups": 1, "remove": self.remove})


@dataclass(frozen=True)
class Replication(Policy):
    """Batch replication: each of a batch's ``n`` jobs is copied to ``d`` servers (``n d``
    distinct random servers in all); a job is done at its first copy, the batch at its last job.

    Parameters
    ----------
    n : int
        Jobs per batch, >= 1 (default 1).
    d : int
        Copies of each job, >= 1 (default 1).
    remove : bool
        Remove a job's other copies when its first copy completes (default True).

    Examples
    --------
    >>> import queuetheory as qt
    >>> qt.Replication(n=10, d=2).polled
    20

    References
    ----------
    .. [1] K. Duffy, S. Shneer, "MDS coding is better than replication for job completion
       times", Operations Research Letters 49(1), 2021, arXiv:1907.11052 (batch replication,
       compared there with MDS coding).
    """

    n: int = 1
    d: int = 1
    remove: bool = True
    names = ("replication",)
    takes_number = True

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

    @classmethod
    def from_cli(cls, number, d):
        return cls(10 if number is None else number, d)

    def label(self):
        return f"Replication(n={self.n}, d={self.d}{'' if self.remove else ', no removal'})"

    def kernel(self):
        return Kernel("redundant", {"needed": 1, "groups": self.n, "remove": self.remove})


def policy_class(name: str) -> tuple[type[Policy], int | None]:
    """The registered class of a short name and the number after its ``:`` (None if absent).

    Raises ValueError for an unknown name or a non-integer number.

    Examples
    --------
    >>> from queuetheory.policies import policy_class
    >>> policy_class("Threshold:2")
    (<class 'queuetheory.policies.Threshold'>, 2)
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a policy name (a string such as 'riq'), got {name!r}")
    kind, colon, arg = name.strip().lower().partition(":")
    if colon and not arg.strip():
        raise ValueError(f"policy {name!r}: give the number after ':' (e.g. {kind}:2), or "
                         f"leave out the ':'")
    try:
        number = int(arg) if arg else None
    except ValueError:
        raise ValueError(f"policy {name!r}: the part after ':' must be an integer") from None
    cls = _REGISTRY.get(kind)
    if cls is None:
        usages = known_names()
        raise ValueError(f"unknown policy {name!r}; use {', '.join(usages[:-1])} "
                         f"or {usages[-1]}")
    if number is not None and not cls.takes_number:
        raise ValueError(f"policy {name!r}: {kind} takes no ':N' (the degree of redundancy is "
                         f"d, given separately)")
    return cls, number


def from_name(name: str, d: int = 1) -> Policy:
    """A policy from a short name, as the command line and :func:`queuetheory.compare` take it.

    Parameters
    ----------
    name : str
        A name of a registered policy (:func:`known_names`): ``random``, ``riq``,
        ``redundancy``, ``threshold:N`` (THRESHOLD-N), ``mds:N`` (batches of N jobs, ``m = d``
        coded extras) or ``replication:N`` (batches of N, ``d`` copies each), and the names
        that subclasses of :class:`Policy` declare.
    d : int
        Degree of redundancy (ignored by ``random``).

    Examples
    --------
    >>> from queuetheory.policies import from_name
    >>> from_name("threshold:1", 3), from_name("mds:10", 2)
    (Threshold(d=3, n=1), MDS(n=10, m=2, remove=True))
    """
    cls, number = policy_class(name)
    return cls.from_cli(number, d)
