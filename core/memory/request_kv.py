"""The KV a request holds on one GPU, with what the levers add and share (array-friendly).

    KV(sequence)  = target's KV + what levers hold beside it (a speculative proposer's KV)
    KV(batch of B) = KV(shared prefix), held once, + B x (KV(request) - KV(shared prefix) + state)

per GPU; with data-parallel attention (dp > 1) a GPU holds only its rank's requests, so B is the
busiest rank's share (:meth:`core.spec.engine.Parallelism.rank_sequences`) and each rank holds the
shared prefix once.

(state: a hybrid's constant per-request state times the pages vLLM keeps of it, :mod:`core.memory.state`;
0 for other models)

The levers that are on come with the deployment (:attr:`core.spec.deployment.Deployment.lever_models`):
a lever that shares prompt tokens (prefix caching, :meth:`core.levers.base.Lever.shared_tokens`)
lets the batch hold their blocks once; tokens found cached (:meth:`~core.levers.base.Lever.cached_tokens`)
also skip prefill. This module never names a lever and never imports :mod:`core.levers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.state import kv_block_size, state_bytes_per_request, state_pages_per_request

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def _total(values, like):
    """Sum of the levers' values, 0 (shaped like ``like``) when none contributes."""
    total = 0.0
    for value in values:
        total = total + value
    if np.ndim(like) and np.ndim(total) == 0:
        return np.full(np.shape(like), float(total))
    return total


def kv_bytes_per_token_all(dep: Deployment) -> float:
    """Full-attention KV of one token on one GPU, what levers hold beside the target's included [bytes]."""
    per_token = kv_bytes_per_token(dep.model, dep.kv, dep.parallel)
    for lever in dep.lever_models:
        per_token += lever.kv_bytes_per_token(dep)
    return per_token


def sequence_kv_bytes(dep: Deployment, tokens, block_size: int | None = None):
    """KV of one sequence of ``tokens`` tokens on one GPU, the levers' included [bytes]."""
    block = kv_block_size(dep) if block_size is None else block_size
    kv = kv_bytes_per_sequence(dep.model, dep.kv, dep.parallel, tokens, block)
    for lever in dep.lever_models:
        kv = kv + lever.sequence_kv_bytes(dep, tokens, block)
    return kv


def request_state_bytes(dep: Deployment) -> float:
    """Constant per-request state of a hybrid's linear layers on one GPU (0 for others) [bytes]."""
    return state_bytes_per_request(dep.model, dep.parallel)


def request_state_reserved_bytes(dep: Deployment) -> float:
    """State a running request keeps on one GPU [bytes] = state x pages per state layer (1, or 2-3 with
    vLLM's prefix caching of hybrids: :func:`core.memory.state.state_pages_per_request`)."""
    return request_state_bytes(dep) * state_pages_per_request(dep)


def shared_prefix_tokens(dep: Deployment, input_len):
    """Prompt tokens of requests of ``input_len`` whose KV the batch holds once [tokens]."""
    return _total((lever.shared_tokens(dep, input_len) for lever in dep.lever_models), input_len)


def cached_prompt_tokens(dep: Deployment, input_len):
    """Prompt tokens of a request of ``input_len`` found in the cache, which prefill skips [tokens]."""
    return _total((lever.cached_tokens(dep, input_len) for lever in dep.lever_models), input_len)


def shared_kv_bytes(dep: Deployment, input_len):
    """KV of the shared prefix, held once for the whole batch [bytes]."""
    shared = shared_prefix_tokens(dep, input_len)
    if not np.any(shared):
        return np.zeros_like(np.asarray(input_len, dtype=float)) if np.ndim(input_len) else 0.0
    return sequence_kv_bytes(dep, shared)


def own_kv_bytes(dep: Deployment, request_len, input_len):
    """KV one request adds beside the shared prefix, and a hybrid's constant state [bytes]."""
    return sequence_kv_bytes(dep, request_len) - shared_kv_bytes(dep, input_len) + request_state_reserved_bytes(dep)


def batch_kv_bytes(dep: Deployment, batch, request_len, input_len):
    """KV of ``batch`` requests on one GPU [bytes] = shared prefix once + batch x own KV (0 for no
    requests); with dp > 1 the batch of the busiest rank."""
    batch = np.asarray(batch, dtype=float)
    rank = dep.parallel.rank_sequences(batch)
    total = np.where(batch > 0, shared_kv_bytes(dep, input_len) + rank * own_kv_bytes(dep, request_len, input_len), 0.0)
    return float(total) if total.ndim == 0 else total
