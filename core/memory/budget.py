"""One GPU's memory with every lever applied, and the KV a request holds (lever-aware).

    KV budget = usable x gpu_memory_utilization - (weights - offloaded) - proposer weights
                - LoRA slots - activation peak (+ eager scores) - overhead

is :func:`core.memory.kv_budget_bytes` with the levers' parts added; offloaded KV extends the KV
space by the host bytes set aside for it. A request's own KV counts the proposer's KV beside the
target's and leaves out the shared-prefix blocks, which the batch holds once
(:mod:`core.prefix`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.levers.attention_kernel import eager_profile_bytes
from core.levers.lora import lora_memory_bytes
from core.levers.speculative import proposer_weight_bytes
from core.memory.activations import activation_peak_bytes
from core.memory.overhead import overhead_bytes, usable_capacity_bytes
from core.memory.weights import weight_bytes_per_gpu
from core.spec.deployment import Deployment
from core.spec.engine import EngineConfig


@dataclass(frozen=True, kw_only=True)
class GpuMemory:
    """Per-GPU memory parts [bytes]."""

    usable: float
    weights: float
    """Weights resident on the GPU (offloaded ones excluded)."""
    offloaded_weights: float
    proposer: float
    lora: float
    activations: float
    attention_scores: float
    overhead: float
    kv_budget: float
    host_kv: float


def gpu_memory(dep: Deployment) -> GpuMemory:
    """The parts of one GPU's memory for ``dep`` (see module docstring)."""
    levers, tp = dep.levers, dep.parallel.tp
    tokens, seqs = dep.engine.batch_limits(dep.gpu.memory_bytes, dep.gpu.name)
    usable = usable_capacity_bytes(dep.gpu.memory_bytes, dep.engine)
    offloaded = levers.offload.weights_bytes
    weights = weight_bytes_per_gpu(dep.model, dep.weights, dep.parallel) - offloaded
    proposer = 0.0
    if levers.speculative is not None:
        proposer = proposer_weight_bytes(dep.model, levers.speculative, dep.weights) / tp
    lora = lora_memory_bytes(dep.model, levers.lora, tp)
    activations = activation_peak_bytes(dep.model, tokens, seqs)
    scores = eager_profile_bytes(dep.model, tp, tokens, dep.max_model_len) if levers.attention == "eager" else 0.0
    overhead = overhead_bytes(dep.engine, dep.parallel)
    budget = kv_budget_bytes(usable, dep.engine, weights + proposer + lora, activations + scores, overhead)
    return GpuMemory(
        usable=usable,
        weights=weights,
        offloaded_weights=offloaded,
        proposer=proposer,
        lora=lora,
        activations=activations,
        attention_scores=scores,
        overhead=overhead,
        kv_budget=budget,
        host_kv=levers.offload.kv_bytes,
    )


def kv_budget_bytes(
    capacity: float, engine: EngineConfig, weights: float, activations: float, overhead: float
) -> float:
    """vLLM's KV budget on one GPU [bytes]: capacity x utilization - weights - activations - overhead.

    Negative when the model does not fit; callers show it rather than clamp it.
    """
    return capacity * engine.gpu_memory_utilization - weights - activations - overhead


@dataclass(frozen=True, kw_only=True)
class MemoryBreakdown:
    """One GPU's memory [bytes]; the parts add up to ``capacity``."""

    capacity: float
    """Total memory as the driver reports it."""
    driver_reserved: float
    held_back: float
    """usable x (1 - gpu_memory_utilization): CUDA context and anything outside the engine."""
    weights: float
    """Weights resident on the GPU (offloaded ones excluded)."""
    activations: float
    overhead: float
    kv_budget: float
    """What remains for KV cache; negative when the rest does not fit."""
    kv_in_use: float
    """KV cache the workload's batch needs (GPU and host together)."""
    proposer: float = 0.0
    """Speculative proposer's weights (draft model or MTP head)."""
    lora: float = 0.0
    """Resident LoRA adapter slots."""
    attention_scores: float = 0.0
    """Eager attention's score matrix of the largest step (0 with FlashAttention)."""
    offloaded_weights: float = 0.0
    """Weights kept in host memory (not part of ``capacity``)."""
    host_kv: float = 0.0
    """Host memory set aside for KV cache beyond the GPU budget (not part of ``capacity``)."""

    @property
    def kv_free(self) -> float:
        return self.kv_budget + self.host_kv - self.kv_in_use

    @property
    def non_kv(self) -> float:
        return self.weights + self.proposer + self.lora + self.activations + self.attention_scores + self.overhead

    @property
    def kv_space(self) -> float:
        """KV the replica can hold per GPU: the GPU budget plus host KV space (none when it does not fit)."""
        return self.kv_budget + self.host_kv if self.kv_budget > 0 else self.kv_budget


def memory_breakdown(dep: Deployment, kv_in_use: float = 0.0) -> MemoryBreakdown:
    """Per-GPU memory of ``dep`` with ``kv_in_use`` bytes of KV cache taken (see core.memory and,
    for the levers' parts, core.budget)."""
    parts = gpu_memory(dep)
    return MemoryBreakdown(
        capacity=dep.gpu.memory_bytes,
        driver_reserved=dep.engine.driver_reserved_bytes,
        held_back=parts.usable * (1 - dep.engine.gpu_memory_utilization),
        weights=parts.weights,
        activations=parts.activations,
        overhead=parts.overhead,
        kv_budget=parts.kv_budget,
        kv_in_use=kv_in_use,
        proposer=parts.proposer,
        lora=parts.lora,
        attention_scores=parts.attention_scores,
        offloaded_weights=parts.offloaded_weights,
        host_kv=parts.host_kv,
    )
