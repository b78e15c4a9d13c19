"""The three-way tradeoff of one setting, each side scored from 0 (worst) to 1 (best).

- memory: share of the KV budget still free after this batch (0 when it does not fit);
- latency: TPOT of a lone request / TPOT at this batch (1 = as fast as batch 1);
- throughput: output tokens/s at this batch / the best over batch sizes that fit in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.estimate.result import Estimate
from core.estimate.sweep import Sweep


@dataclass(frozen=True)
class Tradeoff:
    memory: float
    latency: float
    throughput: float


def tradeoff_scores(result: Estimate, grid: Sweep, row: int) -> Tradeoff:
    """Scores for ``result``; ``grid`` is a batch sweep whose prompt length ``row`` matches it."""
    m = result.memory
    memory = float(np.clip(m.kv_free / m.kv_budget, 0, 1)) if m.kv_budget > 0 else 0.0
    latency = float(grid.tpot_s[row, 0] / result.latency.tpot_s)
    fitting = grid.output_tokens_per_s[row][grid.fits[row]]
    best = float(fitting.max()) if fitting.size else 0.0
    throughput = float(min(result.throughput.output_tokens_per_s / best, 1.0)) if best > 0 else 0.0
    return Tradeoff(memory=memory, latency=latency, throughput=throughput)
