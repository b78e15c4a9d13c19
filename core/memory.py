"""Memory per GPU: weights, KV cache, activation peak, engine overhead and the vLLM-style KV budget.

    KV budget = total x gpu_memory_utilization - weights - activation peak - overhead

as vLLM's ``determine_available_memory`` computes it (see docs/model.md). Functions that take a
token count accept numpy arrays, so sweeps use the same formulas as single estimates.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from core.engine import EngineConfig, Parallelism
from core.model import ModelSpec
from core.params import parameter_counts
from core.precision import ACTIVATION_PRECISION, Precision

KV_TENSORS = 2  # one K and one V vector per token, head and layer
FP32_BYTES = 4  # the sampler's logits are float32
GATED_FFN_ACTIVATIONS = 3  # gate+up output (2 x ffn wide) and the activated product (1 x ffn)
SAMPLER_LOGIT_COPIES = 2  # logits and their softmax/probabilities coexist in the sampler
HIDDEN_ACTIVATIONS = 4  # residual, normed input, attention output and q/k/v, each ~hidden wide


@dataclass(frozen=True)
class WeightBytes:
    """Weights of a model split where pipeline stages split them [bytes]."""

    embedding: float
    lm_head: float
    """0 when the LM head is tied to the embedding."""
    layers: float
    """All transformer layers, norms and routers included."""
    routed_experts: float = 0.0
    """The part of ``layers`` in routed experts (MoE), of which a step reads only those routed to."""

    @property
    def total(self) -> float:
        return self.embedding + self.lm_head + self.layers


@functools.cache
def weight_bytes(model: ModelSpec, weights: Precision) -> WeightBytes:
    """All weights of the model [bytes] = sum over parameter groups of count x bytes per element.

    Quantized formats compress the linear layers only; embeddings, LM head, norms and router stay
    16-bit. Formats flagged ``moe_experts_only`` compress only routed experts on MoE models.
    """
    p = parameter_counts(model)
    if not weights.quantized:
        per = weights.bytes_per_element
        return WeightBytes(
            embedding=p.embedding * per,
            lm_head=p.lm_head * per,
            layers=(p.total - p.embedding - p.lm_head) * per,
            routed_experts=p.routed_experts * per,
        )
    half = ACTIVATION_PRECISION.bytes_per_element
    compressed = p.routed_experts if (weights.moe_experts_only and model.is_moe) else p.linear
    layers_16bit = p.linear - compressed + p.norms + p.router
    return WeightBytes(
        embedding=p.embedding * half,
        lm_head=p.lm_head * half,
        layers=compressed * weights.bytes_per_element + layers_16bit * half,
        routed_experts=p.routed_experts * weights.bytes_per_element,
    )


def weight_bytes_per_gpu(model: ModelSpec, weights: Precision, par: Parallelism) -> float:
    """Weights held by the most loaded GPU [bytes].

    Tensor parallel shards every matrix (embedding and LM head vocab-parallel) over ``tp`` GPUs.
    Pipeline parallel gives a stage ceil(layers / pp) layers; the first stage also holds the
    embedding and the last the LM head (a tied head is a copy of the embedding there).
    """
    w = weight_bytes(model, weights)
    if par.pp == 1:
        return w.total / par.tp
    head = w.lm_head or w.embedding
    stage_layers = w.layers * layers_per_gpu(model, par.pp) / model.num_layers
    return (stage_layers + max(w.embedding, head)) / par.tp


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads one GPU stores: split over tp, replicated when there are fewer heads than GPUs."""
    return max(1, model.num_kv_heads // tp)


def kv_bytes_per_token_per_layer(model: ModelSpec, kv: Precision, tp: int) -> float:
    """KV cache of one token in one layer on one GPU [bytes].

    Standard: 2 (K and V) x KV heads per GPU x head_dim x bytes.
    MLA: (kv_lora_rank + qk_rope_head_dim) x bytes, one latent shared by K and V, not split by TP
    (every tensor-parallel rank keeps the whole latent).
    """
    if model.mla is not None:
        return (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * kv.bytes_per_element
    return KV_TENSORS * kv_heads_per_gpu(model, tp) * model.head_dim * kv.bytes_per_element


def mha_equivalent_kv_bytes_per_token(model: ModelSpec, kv: Precision, par: Parallelism) -> float:
    """KV of one token if every query head kept its own K and V (plain MHA) [bytes].

    layers per GPU x heads per GPU x (key dim + value dim) x bytes: what GQA, MQA and MLA save
    against; for standard attention 2 x heads x head_dim per layer.
    """
    heads = model.num_heads // par.tp
    return layers_per_gpu(model, par.pp) * heads * (model.q_head_dim + model.v_head_dim) * kv.bytes_per_element


def layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Layers on the most loaded pipeline stage."""
    return math.ceil(model.num_layers / pp)


def kv_bytes_per_token(model: ModelSpec, kv: Precision, par: Parallelism) -> float:
    """KV cache of one token across all layers of one GPU, every layer full-attention [bytes].

    The textbook figure: 2 x layers x KV heads x head_dim x bytes. It is also the unit vLLM uses
    for "GPU KV cache size: N tokens"; sliding-window layers are capped per sequence instead
    (see :func:`kv_bytes_per_sequence`).
    """
    return layers_per_gpu(model, par.pp) * kv_bytes_per_token_per_layer(model, kv, par.tp)


def kv_bytes_per_sequence(model: ModelSpec, kv: Precision, par: Parallelism, tokens, block_size: int = 1):
    """KV cache of one sequence of ``tokens`` tokens on one GPU [bytes] (array-friendly).

    Sum over layers of ceil(cached tokens / block) x block x per-layer bytes, where a full-attention
    layer caches every token and a sliding-window layer at most the window. ``block_size`` 1 gives
    the exact figure; a paged engine rounds each layer up to whole blocks.
    """
    tokens = np.asarray(tokens, dtype=float)
    per_layer = kv_bytes_per_token_per_layer(model, kv, par.tp)
    layers = layers_per_gpu(model, par.pp)
    sliding = round(model.num_sliding_layers * layers / model.num_layers)
    full_blocks = np.ceil(tokens / block_size) * block_size
    total = (layers - sliding) * full_blocks * per_layer
    if sliding:
        windowed = np.minimum(tokens, model.sliding_window)
        total = total + sliding * np.ceil(windowed / block_size) * block_size * per_layer
    return total if total.ndim else float(total)


def vllm_kv_groups(model: ModelSpec, pp: int) -> tuple[int, int]:
    """(groups, layers per group) of vLLM's hybrid KV-cache manager on one GPU.

    Layers of each attention type (full, sliding) are cut into equal groups whose size is the
    fewest layers of a type, or the most when the two counts are within 1.5x of each other; a KV
    block holds one group's layers (vllm/v1/core/kv_cache_utils.py). One type: one group of all.
    """
    layers = layers_per_gpu(model, pp)
    sliding = round(model.num_sliding_layers * layers / model.num_layers)
    counts = [c for c in (layers - sliding, sliding) if c]
    if len(counts) == 1:
        return 1, layers
    low, high = min(counts), max(counts)
    size = high if high < 1.5 * low else low
    return sum(math.ceil(c / size) for c in counts), size


def vllm_blocks_per_request(model: ModelSpec, pp: int, tokens: int, block_size: int, batched_tokens: int) -> int:
    """KV blocks vLLM reserves for one request of ``tokens`` tokens in its concurrency figure.

    Per group: full attention ceil(tokens / block); sliding window ceil(min(W - 1 + batched tokens,
    tokens) / block) + 1, since a prefill chunk of up to max_num_batched_tokens attends to a window
    behind it.
    """
    groups, size = vllm_kv_groups(model, pp)
    layers = layers_per_gpu(model, pp)
    sliding = round(model.num_sliding_layers * layers / model.num_layers)
    full_groups = math.ceil((layers - sliding) / size) if layers - sliding else 0
    sliding_groups = groups - full_groups
    full = math.ceil(tokens / block_size)
    windowed = math.ceil(min(model.sliding_window - 1 + batched_tokens, tokens) / block_size) + 1 if sliding else 0
    return full_groups * full + sliding_groups * windowed


def activation_peak_bytes(model: ModelSpec, max_num_batched_tokens: int, max_num_seqs: int) -> float:
    """Peak of temporary tensors in the profile run vLLM does at start-up, on one GPU [bytes].

    T x 2 B x (3 x FFN width + 4 x hidden) + 2 x min(max_num_seqs, T) x vocab x 4 B, with
    T = max_num_batched_tokens: the gated FFN's gate/up output and activated product, a few
    hidden-wide buffers, and float32 logits held twice by the sampler. FFN width is the dense
    ffn_size, or for MoE experts_per_token x expert size plus shared experts (every token is
    dispatched to that many experts). Measured peaks do not shrink with TP, so neither does this.
    Reproduces vLLM 0.19's 1.89 GiB for Llama-3.1-8B (T 8192, 1024 seqs); about +-0.7 GiB on
    other families (docs/model.md).
    """
    if model.moe:
        ffn_width = model.moe.experts_per_token * model.moe.expert_ffn_size
        ffn_width += model.moe.num_shared_experts * model.moe.shared_ffn_size
    else:
        ffn_width = model.ffn_size
    per_token = GATED_FFN_ACTIVATIONS * ffn_width + HIDDEN_ACTIVATIONS * model.hidden_size
    forward = max_num_batched_tokens * per_token * ACTIVATION_PRECISION.bytes_per_element
    sampled_rows = min(max_num_seqs, max_num_batched_tokens)
    logits = SAMPLER_LOGIT_COPIES * sampled_rows * model.vocab_size * FP32_BYTES
    return forward + logits


def overhead_bytes(engine: EngineConfig, par: Parallelism) -> float:
    """Memory the engine adds beside weights and activations and charges to the budget [bytes]:
    non-torch allocations (more with tp > 1: NCCL buffers) plus the CUDA-graph estimate."""
    non_torch = engine.non_torch_bytes_tp if par.tp > 1 else engine.non_torch_bytes
    return non_torch + engine.cuda_graph_bytes


def usable_capacity_bytes(gpu_memory_bytes: float, engine: EngineConfig) -> float:
    """Total memory CUDA reports [bytes]: the driver's figure less what the driver reserves."""
    return gpu_memory_bytes - engine.driver_reserved_bytes


def kv_budget_bytes(
    capacity: float, engine: EngineConfig, weights: float, activations: float, overhead: float
) -> float:
    """vLLM's KV budget on one GPU [bytes]: capacity x utilization - weights - activations - overhead.

    Negative when the model does not fit; callers show it rather than clamp it.
    """
    return capacity * engine.gpu_memory_utilization - weights - activations - overhead
