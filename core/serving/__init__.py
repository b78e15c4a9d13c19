"""Serving under traffic: arrivals and lengths, the step-by-step simulator of a continuous-batching
engine (scheduler, step costs) and sweeps of the load with their knee.

``arrivals``, ``scheduler`` and ``step_cost`` are the simulator's parts, used through ``simulate``.
"""

__all__ = [
    "load_sweep",  # rate sweeps, the knee, predictions
    "sim_result",  # SimResult
    "simulate",  # simulate()
    "traffic",  # Traffic, Lengths, CSV lengths
]
