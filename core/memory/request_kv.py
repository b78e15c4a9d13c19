"""TODO docstring."""

from __future__ import annotations

import numpy as np

from core.levers.prefix import shared_prefix_tokens
from core.levers.speculative import proposer_kv_bytes, proposer_model
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.spec.deployment import Deployment


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
