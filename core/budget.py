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

import numpy as np

from core.attention_kernel import eager_profile_bytes
from core.deployment import Deployment
from core.lora import lora_memory_bytes
from core.memory import (
    activation_peak_bytes,
    kv_budget_bytes,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    overhead_bytes,
    usable_capacity_bytes,
    weight_bytes_per_gpu,
)
from core.prefix import shared_prefix_tokens
from core.speculative import proposer_kv_bytes, proposer_model, proposer_weight_bytes


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


def kv_bytes_per_token_all(dep: Deployment) -> float:
    """Full-attention KV of one token on one GPU, the proposer's included [bytes]."""
    per_token = kv_bytes_per_token(dep.model, dep.kv, dep.parallel)
    spec = dep.levers.speculative
    if spec is not None and (draft := proposer_model(dep.model, spec)) is not None:
        per_token += kv_bytes_per_token(draft, dep.kv, dep.parallel)
    return per_token


def sequence_kv_bytes(dep: Deployment, tokens, block_size: int | None = None):
    """KV of one sequence of ``tokens`` tokens on one GPU, target and proposer [bytes] (array-friendly)."""
    block = dep.engine.block_size if block_size is None else block_size
    kv = kv_bytes_per_sequence(dep.model, dep.kv, dep.parallel, tokens, block)
    if dep.levers.speculative is not None:
        kv = kv + proposer_kv_bytes(dep.model, dep.levers.speculative, dep.kv, dep.parallel, tokens, block)
    return kv


def shared_kv_bytes(dep: Deployment, input_len):
    """KV of the shared prefix, held once for the whole batch [bytes] (array-friendly)."""
    if not dep.levers.prefix.shared_tokens:
        return np.zeros_like(np.asarray(input_len, dtype=float)) if np.ndim(input_len) else 0.0
    shared = shared_prefix_tokens(dep.levers.prefix, input_len, dep.engine.block_size)
    return sequence_kv_bytes(dep, shared)


def own_kv_bytes(dep: Deployment, request_len, input_len):
    """KV one request adds beside the shared prefix [bytes] (array-friendly)."""
    return sequence_kv_bytes(dep, request_len) - shared_kv_bytes(dep, input_len)


def batch_kv_bytes(dep: Deployment, batch, request_len, input_len):
    """KV of ``batch`` requests [bytes] = shared prefix once + batch x own KV (0 for no requests)."""
    batch = np.asarray(batch, dtype=float)
    total = np.where(
        batch > 0, shared_kv_bytes(dep, input_len) + batch * own_kv_bytes(dep, request_len, input_len), 0.0
    )
    return float(total) if total.ndim == 0 else total
