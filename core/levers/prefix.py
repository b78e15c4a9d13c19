"""Prefix caching: which prompt tokens skip prefill, and the KV blocks shared by every request.

An engine with automatic prefix caching (vLLM's ``--enable-prefix-caching``) hashes the prompt in
whole KV blocks and reuses blocks already computed. Per request of I prompt tokens:

    shared  = floor(min(P, I) / block) x block            the common prefix, whole blocks only
    cached  = shared + floor(h x (I - shared) / block) x block, at most I - 1
    prefill = I - cached new tokens, attending to the cached ones

(the engine always recomputes the last prompt token to get its logits). The shared blocks are
held once and referenced by every running request, so a batch of B needs
KV(shared) + B x (KV(request) - KV(shared)) instead of B x KV(request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.levers.base import Lever
from core.levers.settings import PrefixCaching
from core.memory.state import kv_block_size

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def shared_prefix_tokens(prefix: PrefixCaching, input_len, block_size: int):
    """Tokens of the common prefix that sit in whole, shareable blocks [tokens] (array-friendly)."""
    whole = np.floor(np.minimum(prefix.shared_tokens, np.asarray(input_len, dtype=float)) / block_size) * block_size
    return float(whole) if np.ndim(whole) == 0 else whole


def cached_prompt_tokens(prefix: PrefixCaching, input_len, block_size: int):
    """Prompt tokens found in the cache, which prefill skips [tokens] (array-friendly)."""
    input_len = np.asarray(input_len, dtype=float)
    shared = shared_prefix_tokens(prefix, input_len, block_size)
    own = np.floor(prefix.hit_rate * (input_len - shared) / block_size) * block_size
    cached = np.clip(shared + own, 0, input_len - 1)
    return float(cached) if cached.ndim == 0 else cached


def prefix_error(prefix, input_len: int) -> str | None:
    """Why a shared prefix cannot go with prompts of ``input_len`` tokens, or None: the prefix is
    the start of every prompt, so it cannot be longer than the prompt."""
    if prefix is not None and prefix.shared_tokens > input_len:
        return (
            f"the shared prefix ({prefix.shared_tokens:,} tokens) is longer than the prompt "
            f"({input_len:,} tokens): it is the start of every prompt"
        )
    return None


class PrefixLever(Lever):
    """Prefix caching as KV terms: the shared blocks are held once, cached tokens skip prefill."""

    name = "prefix"

    def shared_tokens(self, dep: Deployment, input_len):
        return shared_prefix_tokens(dep.levers.prefix, input_len, kv_block_size(dep))

    def cached_tokens(self, dep: Deployment, input_len):
        return cached_prompt_tokens(dep.levers.prefix, input_len, kv_block_size(dep))


LEVER = PrefixLever()
