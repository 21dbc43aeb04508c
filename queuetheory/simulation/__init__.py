"""Monte Carlo simulation of server farms: exact FCFS + cancel-on-complete, every policy.

:func:`simulate` runs independent replications (in lock-step as rows of numpy arrays, or spread
over any ``concurrent.futures.Executor``) and returns a :class:`SimulationResult` with
confidence intervals.
"""

from .driver import simulate
from .result import SimulationResult

__all__ = ["simulate", "SimulationResult"]
