"""KV-cache capacity and the concurrency ceiling, three ways.

- paged at the request's length: budget / KV of one request (rounded up to whole blocks);
- vLLM's logged worst case: KV capacity / KV of one ``max_model_len`` request, as the
  "Maximum concurrency for L tokens per request: X" line reports it (a float);
- contiguous reservation: every request reserves ``max_model_len`` up front, as engines without
  paging do, so real requests waste the difference (the chapters' point).

Plus the textbook formula: (memory - weights - activations) / KV bytes per request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.memory.kv import kv_bytes_per_token, kv_bytes_per_token_per_layer, vllm_blocks_per_request, vllm_kv_groups
from core.memory.request_kv import (
    kv_bytes_per_token_all,
    request_state_bytes,
    request_state_reserved_bytes,
    sequence_kv_bytes,
    shared_kv_bytes,
)
from core.memory.state import kv_block_size, state_pages_per_request
from core.spec.release import VLLM_KV_TOKENS_FROM_CONCURRENCY

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


@dataclass(frozen=True, kw_only=True)
class KvCapacity:
    """Concurrency ceiling on one replica (per-GPU bytes; every GPU holds its share of each request).

    With data-parallel attention (dp > 1) each rank holds only its own requests: the concurrency
    figures at the request's length and contiguous are the replica's, dp x one rank's, while the
    block pool, ``capacity_tokens`` and the max_model_len figure are one rank's (each rank is its
    own engine and logs its own).
    """

    bytes_per_token: float
    """Full-attention KV of one token on one GPU [bytes]."""
    bytes_per_request: float
    """KV and state of one request of the workload's length, whole blocks, window-aware [bytes]."""
    bytes_per_max_len_request: float
    """KV and state of one max_model_len request, whole blocks, window-aware [bytes]."""
    num_blocks: int
    capacity_tokens: int
    """What vLLM logs as "GPU KV cache size: N tokens": blocks of a group // groups x block size through
    0.20.0, int(max concurrency x max_model_len) from 0.20.1
    (:data:`~core.spec.release.VLLM_KV_TOKENS_FROM_CONCURRENCY`)."""
    max_concurrency_at_max_model_len: float
    max_concurrency_at_request_len: int
    max_concurrency_contiguous: int
    shared_prefix_bytes: float = 0.0
    """KV of the shared prompt prefix, held once for all requests (prefix caching) [bytes]."""
    state_bytes_per_request: float = 0.0
    """Constant state of one request's linear layers (hybrids; 0 otherwise) [bytes]."""
    block_size: int = 16
    """Tokens per KV block the engine runs with (raised for hybrids so a page holds a state)."""


def textbook_max_concurrency(free_bytes, kv_bytes_per_request):
    """The chapters' ceiling [requests] = (memory - weights - activations) / KV bytes per request."""
    return np.asarray(free_bytes, dtype=float) / kv_bytes_per_request


def max_requests(budget_bytes, bytes_per_request):
    """Whole requests that fit in ``budget_bytes`` [count], 0 when the budget is negative."""
    return np.maximum(np.floor(np.asarray(budget_bytes, dtype=float) / bytes_per_request), 0)


def kv_capacity(dep: Deployment, budget_bytes: float, request_len: int, input_len: int | None = None) -> KvCapacity:
    """Capacity of a KV budget of ``budget_bytes`` per GPU for requests of ``request_len`` tokens.

    ``capacity_tokens`` and the vLLM concurrency figure follow vLLM's block accounting, hybrid
    models included (blocks hold one group of layers; sliding-window groups reserve the window plus
    one batched-token chunk); ``num_blocks`` counts blocks of all layers. A speculative proposer's
    KV shares the pool (every token holds both). With prefix caching the shared prefix of prompts
    of ``input_len`` tokens is held once: (budget - KV(prefix)) / (KV(request) - KV(prefix)).
    A hybrid's requests each add their constant state (one page per state layer in vLLM's pool, 2-3 with
    prefix caching in vLLM 0.26+: :func:`~core.memory.state.state_pages_per_request`).
    """
    block = kv_block_size(dep)
    state = request_state_bytes(dep)
    held = request_state_reserved_bytes(dep)  # 2-3 pages of it with vLLM's prefix caching of hybrids
    per_token = kv_bytes_per_token_all(dep)
    scale = per_token / kv_bytes_per_token(dep.model, dep.kv, dep.parallel)  # KV levers hold beside the target's
    block_bytes = block * per_token
    num_blocks = max(math.floor(budget_bytes / block_bytes), 0)
    groups, group_layers = vllm_kv_groups(dep.model, dep.parallel.pp)
    layer_block = block * group_layers * kv_bytes_per_token_per_layer(dep.model, dep.kv, dep.parallel.tp) * scale
    pool = max(math.floor(budget_bytes / layer_block), 0)
    batched, _ = dep.batch_limits
    pages = state_pages_per_request(dep)
    reserved = vllm_blocks_per_request(dep.model, dep.parallel.pp, dep.max_model_len, block, batched, pages)
    concurrency = pool / reserved
    rel = dep.engine.release
    if rel.engine == "vllm" and rel.at_least(VLLM_KV_TOKENS_FROM_CONCURRENCY):
        logged_tokens = int(concurrency * dep.max_model_len)
    else:
        logged_tokens = pool // groups * block
    per_request = sequence_kv_bytes(dep, request_len) + held
    per_max_len = sequence_kv_bytes(dep, dep.max_model_len) + held
    contiguous = sequence_kv_bytes(dep, dep.max_model_len, block_size=1) + held
    shared = shared_kv_bytes(dep, request_len if input_len is None else input_len)
    return KvCapacity(
        bytes_per_token=per_token,
        bytes_per_request=per_request,
        bytes_per_max_len_request=per_max_len,
        num_blocks=num_blocks,
        capacity_tokens=logged_tokens,
        max_concurrency_at_max_model_len=concurrency,
        max_concurrency_at_request_len=int(max_requests(budget_bytes - shared, per_request - shared)) * dep.parallel.dp,
        max_concurrency_contiguous=int(max_requests(budget_bytes, contiguous)) * dep.parallel.dp,
        shared_prefix_bytes=shared,
        state_bytes_per_request=state,
        block_size=block,
    )
