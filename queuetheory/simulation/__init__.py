"""Monte Carlo simulation of server farms: exact FCFS + cancel-on-complete, every policy.

:func:`simulate` runs independent replications (as compiled loops when numba is installed, else
in lock-step as rows of numpy arrays, with bit-identical results; locally or spread over any
``concurrent.futures.Executor``) and returns a :class:`SimulationResult` with
confidence intervals.
"""

from .driver import simulate
from .result import SimulationResult

__all__ = ["simulate", "SimulationResult"]
