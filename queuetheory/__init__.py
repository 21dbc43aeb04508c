"""queuetheory: predicted latency of server farms with redundancy.

Describe a farm once as a :class:`System` (policy, runtime model, arrival rate) and get its
response time from the formulas with :func:`analyze`.
"""

from . import distributions, export, mg1, orderstats, plot, slowdowns, transforms
from .analysis import accuracy_goal, analyze, grid_budget
from .analysis.redundancy import smallest_unstable_d, stability_frontier
from .codematch import smallest_matching_code
from .compare import Comparison, compare
from .distributions import (
    BoundedPareto,
    Deterministic,
    Discrete,
    Distribution,
    Erlang,
    Exponential,
    HyperExponential,
    Mixture,
    Pareto,
    ShiftedExponential,
    Uniform,
    as_distribution,
    from_scipy,
    product,
)
from .policies import MDS, RIQ, Policy, Random, RedundancyD, Replication, Threshold
from .prediction import AccuracyWarning, Prediction
from .response import ResponseLaw, ResponseTime
from .runtime import IR, SX, RuntimeModel
from .simulation import SimulationResult, simulate
from .system import System
from .validate import ValidationReport, validate

__version__ = "0.1.0"

__all__ = [
    "compare",
    "Comparison",
    "export",
    "plot",
    "smallest_unstable_d",
    "stability_frontier",
    "analyze",
    "accuracy_goal",
    "grid_budget",
    "smallest_matching_code",
    "distributions",
    "mg1",
    "orderstats",
    "slowdowns",
    "symbolic",
    "transforms",
    "BoundedPareto",
    "Deterministic",
    "Discrete",
    "Distribution",
    "Erlang",
    "Exponential",
    "HyperExponential",
    "Mixture",
    "Pareto",
    "ShiftedExponential",
    "Uniform",
    "as_distribution",
    "from_scipy",
    "product",
    "MDS",
    "RIQ",
    "Policy",
    "Random",
    "RedundancyD",
    "Replication",
    "Threshold",
    "AccuracyWarning",
    "Prediction",
    "ResponseLaw",
    "ResponseTime",
    "IR",
    "SX",
    "RuntimeModel",
    "System",
    "simulate",
    "SimulationResult",
    "validate",
    "ValidationReport",
]


def __getattr__(name: str):
    """Import :mod:`queuetheory.symbolic` on first use: sympy takes ~0.4 s to load."""
    if name == "symbolic":
        import importlib

        return importlib.import_module(f"{__name__}.symbolic")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
