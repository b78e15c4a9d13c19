"""Whole grids at once: batch sizes x prompt lengths as numpy arrays, for the tradeoff charts.

Same formulas as :func:`core.estimate.result.estimate` (they broadcast), so a sweep point equals the
single estimate for the same inputs (a batch beyond what the engine admits runs in rounds); tests
check that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.estimate.result import arriving_together
from core.estimate.scope import admitted_batch
from core.memory.budget import gpu_memory
from core.memory.capacity import max_requests
from core.memory.request_kv import batch_kv_bytes, own_kv_bytes, shared_kv_bytes
from core.spec.deployment import Deployment


@dataclass(frozen=True)
class Sweep:
    """Results on a grid; 2-D arrays are indexed [prompt length, batch]."""

    batches: np.ndarray
    input_lens: np.ndarray
    output_len: int
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    e2e_s: np.ndarray
    output_tokens_per_s: np.ndarray
    total_tokens_per_s: np.ndarray
    decode_bound: np.ndarray
    kv_in_use: np.ndarray
    """KV bytes per GPU the batch needs [bytes]."""
    kv_budget: float
    max_concurrency: np.ndarray
    """Per prompt length: requests of (prompt + answer) tokens that fit the KV budget (paged)."""

    @property
    def fits(self) -> np.ndarray:
        return (self.kv_budget > 0) & (self.kv_in_use <= self.kv_budget)


def sweep(dep: Deployment, batches, input_lens, output_len: int) -> Sweep:
    """Evaluate every (prompt length, batch) pair; arrays in, arrays out, no Python loops."""
    batches = np.asarray(batches, dtype=float)
    input_lens = np.asarray(input_lens, dtype=float)
    grid_b, grid_i = batches[np.newaxis, :], input_lens[:, np.newaxis]
    own = own_kv_bytes(dep, input_lens + output_len, input_lens)
    shared = shared_kv_bytes(dep, input_lens)
    budget = gpu_memory(dep).kv_space
    fit = max_requests(budget - shared, own)
    _, seqs = dep.batch_limits
    running = admitted_batch(grid_b, np.where(budget > 0, fit, grid_b.max())[:, np.newaxis], seqs)
    latency, throughput = arriving_together(dep, grid_b, running, grid_i, output_len)
    return Sweep(
        batches=batches,
        input_lens=input_lens,
        output_len=output_len,
        ttft_s=latency.ttft_s,
        tpot_s=np.broadcast_to(latency.tpot_s, latency.ttft_s.shape),
        e2e_s=latency.e2e_s,
        output_tokens_per_s=throughput.output_tokens_per_s,
        total_tokens_per_s=throughput.total_tokens_per_s,
        decode_bound=latency.decode.bound,
        kv_in_use=batch_kv_bytes(dep, grid_b, grid_i + output_len, grid_i),
        kv_budget=budget,
        max_concurrency=fit,
    )


def max_concurrency_by_length(dep: Deployment, request_lens) -> np.ndarray:
    """Requests of each length [tokens] that fit the KV budget at once (paged, whole blocks; a shared
    prefix counted once)."""
    prompts = np.maximum(np.asarray(request_lens, dtype=float) - 1, 1)  # at least one answer token of its own
    shared = shared_kv_bytes(dep, prompts)
    return max_requests(gpu_memory(dep).kv_space - shared, own_kv_bytes(dep, request_lens, prompts))
