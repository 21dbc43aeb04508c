"""Side-by-side comparison of policies for one setting, as an architect puts it on a slide."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .analysis import analyze
from .export import latex_table, text_table
from .policies import Policy, from_name
from .runtime import RuntimeModel
from .simulation import simulate as run_simulation
from .system import System

__all__ = ["compare", "Comparison"]


class Comparison:
    """The table produced by :func:`compare`: one row per policy and degree of redundancy.

    Each row holds ``policy``, ``d``, ``stable``, ``mean``, one ``pXX`` per quantile, ``cost``
    (server time per job, cancelled replicas included) and ``source`` (``analysis`` or
    ``simulation``), plus ``method``; with simulation also ``mean_ci`` and ``cost_ci``.
    ``str()`` gives a text table, :meth:`to_latex` a booktabs table.
    """

    def __init__(self, rows: list[dict], quantiles: Sequence[float], setting: str):
        self.rows = rows
        self.quantiles = tuple(quantiles)
        self.setting = setting

    @property
    def columns(self) -> list[str]:
        """The columns shown by ``str()`` and :meth:`to_latex`."""
        return (["policy", "source", "stable", "mean"]
                + [_quantile_key(q) for q in self.quantiles] + ["cost"])

    def __str__(self):
        return f"{self.setting}\n{text_table(self.rows, self.columns)}"

    def __repr__(self):
        return f"Comparison({len(self.rows)} rows; {self.setting})"

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """A LaTeX booktabs table of the comparison (caption defaults to the setting)."""
        headers = (["Policy", "Source", "Stable", r"$E[T]$"]
                   + [rf"$T_{{{100 * q:g}}}$" for q in self.quantiles] + ["Cost"])
        return latex_table(self.rows, self.columns, headers=headers,
                           caption=caption or self.setting, label=label)

    def describe(self) -> str:
        """A paragraph for a paper's methods section: the setting and every method used."""
        methods = sorted({row["method"] for row in self.rows if row.get("method")})
        return (f"Setting: {self.setting}. Methods: " + "; ".join(methods) + ". Cost is the "
                "expected server time per job, cancelled replicas included.")

    def to_dict(self) -> dict:
        """Rows and setting as plain data (JSON-ready except for infinities)."""
        return {"setting": self.setting, "quantiles": list(self.quantiles), "rows": self.rows}


def _quantile_key(q: float) -> str:
    return f"p{100 * q:g}"


def compare(runtime: RuntimeModel, arrival_rate: float, *,
            policies: Sequence[str | Policy] = ("random", "riq", "redundancy"),
            d: Sequence[int] = (2, 3, 5), quantiles: Sequence[float] = (0.95, 0.99),
            servers: int | None = None, simulate: bool = False, jobs: int = 200_000,
            replications: int = 8, seed: int = 0) -> Comparison:
    """Tabulate mean, percentiles, cost and stability across policies and degrees ``d``.

    Analysis is used wherever :func:`analyze` has a method; with ``simulate=True`` every row is
    (also) simulated on ``servers`` servers, and rows without an analysis come from simulation.

    Parameters
    ----------
    runtime : RuntimeModel
        ``qt.SX(X, S)`` or ``qt.IR(R)``.
    arrival_rate : float
        Jobs per unit time per server.
    policies : sequence of str or Policy
        Names as in :func:`queuetheory.policies.from_name` (expanded over ``d``; ``random``
        appears once) or policy objects (used as given).
    d : sequence of int
        Degrees of redundancy for named policies.
    quantiles : sequence of float
        Response-time quantile levels, each in (0, 1).
    servers : int, optional
        Number of servers ``k``: the analysis uses an exact finite-``k`` method where one exists
        (else the ``k -> infinity`` limit, as its ``method`` says) and the simulation runs on
        ``k`` servers. Default: the limit for the analysis, 1000 servers for simulation.
    simulate : bool
        Add simulated rows (with 95% confidence intervals) beside the analytic ones.
    jobs, replications, seed
        Simulation size per replication and seed (see :func:`queuetheory.simulate`).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import queuetheory as qt
    >>> S = qt.slowdowns.facebook()
    >>> table = qt.compare(qt.SX(qt.Exponential(S.mean()), S), 0.7, policies=["random", "riq"],
    ...                    d=[3])
    >>> [(row["policy"], round(row["mean"], 4)) for row in table.rows]
    [('Random', 4.3459), ('RIQ(d=3)', 1.7777)]
    """
    systems = []
    for entry in policies:
        if isinstance(entry, Policy):
            systems.append(System(entry, runtime, arrival_rate, servers=servers))
        elif entry.strip().lower() == "random":
            systems.append(System(from_name(entry), runtime, arrival_rate, servers=servers))
        else:
            systems += [System(from_name(entry, k), runtime, arrival_rate, servers=servers)
                        for k in d]
    rows = []
    for system in systems:
        label = system.policy.label()
        try:
            rows.append(_analysed_row(system, label, quantiles))
        except NotImplementedError as exc:
            if not simulate:
                rows.append({"policy": label, "source": "analysis", "stable": None,
                             "method": f"no analysis ({exc}); pass simulate=True"})
        if simulate:
            k = servers or 1000
            sim = run_simulation(system, servers=k, jobs=jobs, replications=replications,
                                 seed=seed)
            row = {"policy": label, "source": f"simulation k={k}", "stable": sim.stable,
                   "mean": sim.mean, "mean_ci": sim.mean_ci, "cost": sim.cost,
                   "cost_ci": sim.cost_ci, "method": "simulation"}
            for q in quantiles:
                row[_quantile_key(q)] = sim.quantile(q) if sim.stable else math.inf
            rows.append(row)
    setting = (f"{runtime.name} runtimes {runtime!r}, arrival rate {arrival_rate:g} per server "
               f"(load {systems[0].load:.4g})")
    return Comparison(rows, quantiles, setting)


def _analysed_row(system: System, label: str, quantiles: Sequence[float]) -> dict:
    p = analyze(system)
    row = {"policy": label, "source": "analysis", "stable": p.stable, "mean": p.mean,
           "cost": p.cost, "method": p.method}
    for q in quantiles:
        try:
            row[_quantile_key(q)] = p.quantile(q)
        except NotImplementedError:
            row[_quantile_key(q)] = None
    return row
