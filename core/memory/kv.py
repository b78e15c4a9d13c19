"""KV cache per token and per sequence on one GPU, and vLLM's block accounting of it.

    per token and layer = 2 (K and V) x KV heads per GPU x head_dim x bytes   (MLA: one latent)
    per sequence        = sum over layers of whole blocks of the tokens each layer caches

Full-attention layers cache every token, sliding-window (and chunked) layers at most the window;
only attention layers have a KV cache: a hybrid's Gated DeltaNet and Mamba2 layers keep a constant
state per request instead (:mod:`core.memory.state`). Functions that take a token count accept
numpy arrays, so sweeps use the same formulas as single estimates. :func:`mha_equivalent` gives
the plain multi-head model that GQA, MQA and MLA are compared against.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from core.spec.engine import Parallelism
from core.spec.mixers import STATE_KINDS, LayerKind
from core.spec.model import ModelSpec
from core.spec.precision import Precision

KV_TENSORS = 2  # one K and one V vector per token, head and layer


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads one GPU stores: split over tp, replicated when there are fewer heads than GPUs."""
    return max(1, model.num_kv_heads // tp)


def kv_bytes_per_token_per_layer(model: ModelSpec, kv: Precision, tp: int) -> float:
    """KV cache of one token in one layer on one GPU [bytes].

    Standard: 2 (K and V) x KV heads per GPU x head_dim x bytes.
    MLA: (kv_lora_rank + qk_rope_head_dim) x bytes, one latent shared by K and V, not split by TP
    (every tensor-parallel rank keeps the whole latent); DeepSeek-V3.2 adds its indexer's FP8 key
    and scale (:attr:`~core.spec.model.IndexerSpec.cache_bytes_per_token`) whatever the KV dtype.
    """
    if model.mla is not None:
        latent = (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * kv.bytes_per_element
        if model.indexer is not None and kv.name == "fp8":
            # vLLM's fp8_ds_mla layout for sparse MLA: FP8 latent, an FP32 scale per 128 values,
            # the RoPE part kept 16-bit (656 B for DeepSeek-V3.2)
            rank, rope = model.mla.kv_lora_rank, model.mla.qk_rope_head_dim
            latent = rank + 4 * -(-rank // 128) + 2 * rope
        return latent + (model.indexer.cache_bytes_per_token if model.indexer else 0)
    return KV_TENSORS * kv_heads_per_gpu(model, tp) * model.head_dim * kv.bytes_per_element


def pipeline_stages(num_layers: int, pp: int) -> tuple[tuple[int, int], ...]:
    """(first, end) layer of each pipeline stage as vLLM splits them (``get_pp_indices``, 0.11-0.33,
    without VLLM_PP_LAYER_PARTITION): L // pp each, the remainder one more to the stages before the last."""
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    starts = [sum(sizes[:i]) for i in range(pp)]
    return tuple((start, start + size) for start, size in zip(starts, sizes, strict=True))


@functools.cache
def _kv_stage(model: ModelSpec, pp: int) -> tuple[int, int, int]:
    """(attention, sliding, state) layers of the stage that holds the most KV: the most attention
    layers, then the fewest sliding ones, then the most state layers (every stage of one replica
    holds its share of each request, so the heaviest stage sets the concurrency)."""
    kinds, sliding = model.mixer_kinds, model.sliding_layers or (False,) * model.num_layers
    counts = []
    for first, end in pipeline_stages(model.num_layers, pp):
        attention = sum(k is LayerKind.ATTENTION for k in kinds[first:end])
        windowed = sum(sliding[first:end])
        state = sum(k in STATE_KINDS for k in kinds[first:end])
        counts.append((attention, -windowed, state))
    attention, windowed, state = max(counts)
    return attention, -windowed, state


def attention_layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Attention layers (the ones with a KV cache) on the pipeline stage that holds the most KV."""
    return model.num_attention_layers if pp == 1 else _kv_stage(model, pp)[0]


def state_layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Gated DeltaNet / Mamba2 layers (a constant state each) on that stage."""
    return model.num_state_layers if pp == 1 else _kv_stage(model, pp)[2]


def mha_equivalent(model: ModelSpec) -> ModelSpec:
    """The same model with plain multi-head attention: one K and one V head per query head.

    What GQA, MQA and MLA save against (the chapters' comparison). Only the attention layers' KV
    changes: standard attention keeps head_dim and sets KV heads = attention heads; MLA drops the
    latent (and DeepSeek sparse attention's indexer) for K heads of the qk width (nope + rope) and V
    heads of the v width, held as head_dim = (qk + v) / 2 so that 2 x head_dim = one K plus one V
    (even in every published MLA config: 192 + 128 for DeepSeek-V2/V3 and Kimi K2). Layers,
    sliding windows, linear-attention and Mamba layers and everything else stay as they are. An MHA
    model is returned unchanged.
    """
    if model.mla is None:
        return model if model.num_kv_heads == model.num_heads else replace(model, num_kv_heads=model.num_heads)
    widths = model.q_head_dim + model.v_head_dim
    return replace(model, mla=None, indexer=None, num_kv_heads=model.num_heads, head_dim=-(-widths // 2))


def mha_equivalent_kv_bytes_per_token(model: ModelSpec, kv: Precision, par: Parallelism) -> float:
    """KV of one token on one GPU if every query head kept its own K and V (:func:`mha_equivalent`) [bytes]:
    attention layers per GPU x heads per GPU x (key dim + value dim) x bytes."""
    return kv_bytes_per_token(mha_equivalent(model), kv, par)


def kv_bytes_per_token(model: ModelSpec, kv: Precision, par: Parallelism) -> float:
    """KV cache of one token across the attention layers of one GPU, each as if full [bytes].

    The textbook figure: 2 x attention layers x KV heads x head_dim x bytes. It is also the unit vLLM uses
    for "GPU KV cache size: N tokens"; sliding-window layers are capped per sequence instead
    (see :func:`kv_bytes_per_sequence`).
    """
    return attention_layers_per_gpu(model, par.pp) * kv_bytes_per_token_per_layer(model, kv, par.tp)


def sliding_layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Layers whose KV is capped at the window, on the most loaded pipeline stage (their share, rounded).

    Chunked local layers (Llama 4) count as full: vLLM (0.10.1-0.33) turns its hybrid KV-cache
    manager off for chunked local attention by default ("There is a latency regression when using
    chunked local attention with the hybrid KV cache manager. Disabling it, by default."; env
    VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 turns it on), so every layer keeps every
    token's KV; their attention FLOPs still stop at the chunk.
    """
    if model.attention_chunked:
        return 0
    return model.num_sliding_layers if pp == 1 else _kv_stage(model, pp)[1]


def kv_bytes_per_sequence(model: ModelSpec, kv: Precision, par: Parallelism, tokens, block_size: int = 1):
    """KV cache of one sequence of ``tokens`` tokens on one GPU [bytes] (array-friendly).

    Sum over layers of ceil(cached tokens / block) x block x per-layer bytes, where a full-attention
    layer caches every token and a sliding-window layer at most the window. ``block_size`` 1 gives
    the exact figure; a paged engine rounds each layer up to whole blocks.
    """
    tokens = np.asarray(tokens, dtype=float)
    per_layer = kv_bytes_per_token_per_layer(model, kv, par.tp)
    layers = attention_layers_per_gpu(model, par.pp)
    sliding = sliding_layers_per_gpu(model, par.pp)
    full_blocks = np.ceil(tokens / block_size) * block_size
    total = (layers - sliding) * full_blocks * per_layer
    if sliding:
        windowed = np.minimum(tokens, model.sliding_window)
        total = total + sliding * np.ceil(windowed / block_size) * block_size * per_layer
    return total if total.ndim else float(total)


def _layer_type_counts(model: ModelSpec, pp: int) -> tuple[int, int, int]:
    """(full-attention, sliding-window, state) layers on one GPU: vLLM's KV-cache spec types."""
    attention = attention_layers_per_gpu(model, pp)
    sliding = sliding_layers_per_gpu(model, pp)
    return attention - sliding, sliding, state_layers_per_gpu(model, pp)


def vllm_kv_groups(model: ModelSpec, pp: int) -> tuple[int, int]:
    """(groups, layers per group) of vLLM's hybrid KV-cache manager on one GPU.

    Layers of each cache type (full attention, sliding window, Mamba-style state) are cut into
    equal groups whose size is the fewest layers of a type, or the most when all counts are within
    1.5x of each other; a KV block holds one page per layer of a group, and every page has the same
    size (vllm/v1/core/kv_cache_utils.py, 0.11-0.33). One type: one group of all.
    """
    counts = [c for c in _layer_type_counts(model, pp) if c]
    if len(counts) == 1:
        return 1, counts[0]
    low, high = min(counts), max(counts)
    size = high if high < 1.5 * low else low
    return sum(math.ceil(c / size) for c in counts), size


def vllm_blocks_per_request(
    model: ModelSpec, pp: int, tokens: int, block_size: int, batched_tokens: int, state_pages: int = 1
) -> int:
    """KV blocks vLLM reserves for one request of ``tokens`` tokens in its concurrency figure.

    Per group: full attention ceil(tokens / block); sliding window ceil(min(W - 1 + batched tokens,
    tokens) / block) + 1, since a prefill chunk of up to max_num_batched_tokens attends to a window
    behind it; a state group ``state_pages`` blocks (the state fits one page: 1 without prefix
    caching, 2 or 3 with it, :func:`core.memory.state.state_pages_per_request`).
    """
    full_layers, sliding_layers, state_layers = _layer_type_counts(model, pp)
    _, size = vllm_kv_groups(model, pp)
    full = math.ceil(tokens / block_size) * math.ceil(full_layers / size)
    windowed = 0
    if sliding_layers:
        per_group = math.ceil(min(model.sliding_window - 1 + batched_tokens, tokens) / block_size) + 1
        windowed = per_group * math.ceil(sliding_layers / size)
    return full + windowed + math.ceil(state_layers / size) * state_pages
