"""queuetheory: predicted latency of server farms with redundancy.

Describe a farm once as a :class:`System` (policy, runtime model, arrival rate) and get its
response time from the formulas with :func:`analyze`.
"""

from . import distributions, mg1, slowdowns, transforms
from .analysis import analyze
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
from .prediction import Prediction
from .response import ResponseTime
from .runtime import IR, SX, RuntimeModel
from .system import System

__version__ = "0.1.0"

__all__ = [
    "analyze",
    "distributions",
    "mg1",
    "slowdowns",
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
    "Prediction",
    "ResponseTime",
    "IR",
    "SX",
    "RuntimeModel",
    "System",
]
