"""One decode step's time split into its terms across batch sizes: why TPOT grows with the batch and
where decode turns compute-bound (the Learn page's chart).

    weight reads  = W / (BW x bandwidth eff.)          the same at every batch
    KV reads      = KV(B) / (BW x bandwidth eff.)      grows with B and the context
    expert extra  = routed experts read below bandwidth efficiency (MoE)
    compute       = F(B) / (P x compute eff.)          grows with B
    fixed         = all-reduce + step overheads (+ host reads, + side models)
    step          = max(GEMMs' compute, weight reads) + max(attention's compute, KV reads)
                    + MoE experts' kernels + fixed                              (= TPOT at that batch)

(each kernel class's roofline, added up: :mod:`core.timing.roofline`); the memory line is every
read at once, which the step reaches where every class is bound by its reads.

Computed by the same :func:`core.timing.phases.decode_step_time` as every TPOT, over an array of
batch sizes at once, so the step line at the scenario's batch is the Explorer's TPOT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.spec.deployment import Deployment
from core.timing.phases import decode_step_time


@dataclass(frozen=True)
class StepTerms:
    """Each term of one decode step at every batch of ``batches`` [s]."""

    batches: np.ndarray
    weights_s: np.ndarray
    kv_s: np.ndarray
    expert_s: np.ndarray
    compute_s: np.ndarray
    fixed_s: np.ndarray
    step_s: np.ndarray

    @property
    def memory_s(self) -> np.ndarray:
        return self.weights_s + self.kv_s + self.expert_s

    @property
    def knee(self) -> int | None:
        """The first batch at which compute takes at least as long as the memory reads (None: never)."""
        compute = np.flatnonzero(self.compute_s >= self.memory_s)
        return int(self.batches[compute[0]]) if compute.size else None


def step_terms(dep: Deployment, batches, context) -> StepTerms:
    """The terms of one decode step of each batch in ``batches`` at ``context`` cached tokens."""
    batches = np.asarray(batches, dtype=float)
    phase = decode_step_time(dep, batches, context)
    rate = dep.gpu.memory_bandwidth * dep.efficiency.bandwidth
    moved = np.broadcast_to(np.asarray(phase.bytes_moved, dtype=float), batches.shape)
    kv = np.broadcast_to(np.asarray(phase.kv_bytes, dtype=float), batches.shape)
    memory = np.broadcast_to(np.asarray(phase.memory_s, dtype=float), batches.shape)
    fixed = sum(np.asarray(getattr(phase, f), dtype=float) for f in ("comm_s", "overhead_s", "host_s", "side_s"))
    return StepTerms(
        batches=batches,
        weights_s=(moved - kv) / rate,
        kv_s=kv / rate,
        expert_s=np.maximum(memory - moved / rate, 0.0),
        compute_s=np.broadcast_to(np.asarray(phase.compute_s, dtype=float), batches.shape),
        fixed_s=np.broadcast_to(fixed, batches.shape),
        step_s=np.broadcast_to(np.asarray(phase.seconds, dtype=float), batches.shape),
    )
