"""Steps of one rank of a data-parallel attention layout (dp > 1), for the simulator.

The dp ranks step together (every MoE layer's all-to-all joins them), each running its own
sequences; the simulator runs one rank and takes the others to run the same mix. A step then lasts
the busiest rank's work as :func:`core.timing.phases.phase_time` counts it for ``estimate``: with the
rank's T new tokens on its sequences,

    own matmuls     = linear_flops(rank's sequences, T) - routed-expert FLOPs of T
    expert matmuls  = routed-expert FLOPs of dp x T routes x the rank's GPUs' share of the experts
    weights read    = weight_bytes_read(dp x T tokens) (experts: the fraction dp x T tokens touch)
    KV, attention   = the rank's own sequences;  all-to-all = the rank's T tokens
    front end       = every rank's sequences (dp x the rank's)

evaluated with :func:`core.timing.roofline.work_time` on the general path (no summed fast path).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.memory.kv import kv_bytes_per_sequence
from core.memory.state import state_traffic_bytes
from core.serving.step_cost import StepTimer
from core.spec.deployment import Deployment
from core.spec.engine import Parallelism
from core.timing.phases import side_deployments
from core.timing.roofline import work_time
from core.timing.work import (
    attention_flops,
    expert_bytes_read,
    linear_flops,
    rank_expert_flops,
    routed_expert_flops,
    weight_bytes_read,
)


def rank_step_seconds(dep: Deployment, new: np.ndarray, cached: np.ndarray) -> float:
    """One step in which sequence i of one rank adds new[i] tokens to cached[i] cached ones, every
    rank alike: the busiest rank's roofline time (module docstring) [s]."""
    dp, count = dep.parallel.dp, len(new)
    tokens = float(new.sum())
    experts = float(rank_expert_flops(dep, dp * count, tokens / count))  # dp x T routes, this rank's share
    own = float(linear_flops(dep.model, count, tokens / count)) - float(routed_expert_flops(dep.model, tokens))
    kv = kv_bytes_per_sequence(dep.model, dep.kv, Parallelism(tp=dep.parallel.tp), cached + new)
    phase = work_time(
        dep,
        linear=own + experts,
        attention=float(attention_flops(dep.model, 1, new, cached).sum()),
        weights=weight_bytes_read(dep, dp * tokens),
        expert_weights=expert_bytes_read(dep, dp * tokens),
        expert_linear=experts,
        kv_per_gpu=float(np.sum(kv)) + count * state_traffic_bytes(dep.model, dep.parallel.tp),
        tokens=tokens,
        steps=1.0,
        sequence_steps=float(count),
        frontend_steps=float(dp * count),
    )
    return float(phase.gpu_seconds)


class RankSteps:
    """The step durations :class:`core.serving.step_cost.StepModel` gives the simulator, for one rank."""

    def __init__(self, dep: Deployment) -> None:
        self.dep = dep

    def decode_step(self, cached: np.ndarray, context: int) -> float:
        """One token for every sequence on its ``cached`` tokens [s]."""
        return rank_step_seconds(self.dep, np.ones(cached.size, dtype=np.int64), cached)

    def decode_steps(self, cached: np.ndarray, context: int, steps: int) -> np.ndarray:
        """``steps`` of :meth:`decode_step`, the j-th on cached + j tokens [s]."""
        ones = np.ones(cached.size, dtype=np.int64)
        return np.array([rank_step_seconds(self.dep, ones, cached + j) for j in range(steps)])

    def batch_step(self, decoding: np.ndarray, chunks: Sequence[tuple[int, int]]) -> float:
        """Decodes on ``decoding`` cached tokens and prompt chunks of (new, cached) tokens [s]."""
        new = np.array([1] * decoding.size + [size for size, _ in chunks], dtype=np.int64)
        cached = np.concatenate((decoding, np.array([context for _, context in chunks], dtype=np.int64)))
        return rank_step_seconds(self.dep, new, cached)


class RankStepTimer(StepTimer):
    """:class:`core.serving.step_cost.StepTimer` with every step the busiest rank's (:class:`RankSteps`)."""

    def __init__(self, dep: Deployment, gpu_blocks: int, block_bytes: float) -> None:
        super().__init__(dep, gpu_blocks, block_bytes)
        self.model = RankSteps(dep)
        self.sides = tuple(RankSteps(side) for side in side_deployments(dep))
