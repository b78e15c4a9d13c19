"""The constant per-request state of a hybrid model's linear layers, and how vLLM pages it.

    state per layer (Gated DeltaNet) = [(K - 1) x (2 nk dk + nv dv) + nv x dk x dv] / tp x 2 B
    state per layer (Mamba2)         = (K - 1) x (H P + 2 G N) / tp x 2 B + H / tp x P x N x ssm bytes
    state per request                = state layers per GPU x state per layer

It does not grow with the request's length: a 100-token and a 100,000-token request hold the same.
vLLM keeps it in the same paged pool as the KV cache, one page per layer, so it forces the
attention block size up until one attention page (block x KV of one token in one layer) holds a
state page, and pads the state page to that size (vLLM 0.11-0.33:
``HybridAttentionMambaModelConfig.verify_and_update_config``, then
``platforms/interface.py``; alignment A = 16 tokens, the FlashAttention kernel's, and from vLLM 0.33
lcm(16, 64) = 64 for Gated DeltaNet on SM90, whose FlashInfer prefill checkpoints every 64 tokens):

    block size = max(configured, A x ceil(state page / (A x attention page of one token)))

With prefix caching (on for hybrids from vLLM 0.26) a request reserves 2 state pages per state group
(3 with a prefill checkpoint, 0.33+) in vLLM's concurrency figure: :func:`state_pages_per_request`.

The state is kept in the model's 16-bit dtype, the recurrent / SSM part at the bytes the model's
spec gives (float32 where the config or vLLM's default for the architecture says so).
Sources and worked figures: docs/research/vllm-hybrid-state.md.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from core.memory.kv import kv_bytes_per_token_per_layer, state_layers_per_gpu
from core.spec.engine import Parallelism
from core.spec.model import ModelSpec
from core.spec.precision import Precision
from core.spec.release import VLLM_HYBRID_PREFIX_CACHING_FROM, VLLM_MAMBA_ALIGN_ALL_FROM, VLLM_MAMBA_CHECKPOINT_FROM

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

STATE_DTYPE_BYTES = 2  # vLLM's mamba_cache_dtype "auto": the model's dtype (bf16/fp16)
KERNEL_BLOCK_ALIGNMENT = 16  # tokens; vLLM rounds the forced attention block to this multiple
GDN_FLASHINFER_ALIGNMENT = 64  # tokens; FlashInfer's GDN prefill emits checkpoints on its 64-token chunks
SM90 = 90  # CUDA capability (Hopper) where vLLM runs the GDN prefill on FlashInfer


@functools.cache
def state_bytes_per_layer(model: ModelSpec, tp: int, extra_tokens: int = 0) -> float:
    """Per-request state of one linear layer on one GPU [bytes] (0 for a model without any).

    ``extra_tokens``: speculative tokens, which widen the convolution window. A spec carries its
    linear-attention or Mamba2 sizes exactly when it has such layers (ModelSpec checks it).
    """
    if model.linear_attention is not None:
        gdn = model.linear_attention
        conv = gdn.conv_state_elements(tp, extra_tokens) * STATE_DTYPE_BYTES
        return conv + gdn.recurrent_state_elements(tp) * gdn.recurrent_state_bytes
    if model.mamba is not None:
        m = model.mamba
        return (
            m.conv_state_elements(tp, extra_tokens) * STATE_DTYPE_BYTES + m.ssm_state_elements(tp) * m.ssm_state_bytes
        )
    return 0.0


def state_bytes_per_request(model: ModelSpec, par: Parallelism, extra_tokens: int = 0) -> float:
    """Constant state of one request on one GPU [bytes] = state layers per GPU x state per layer."""
    return state_layers_per_gpu(model, par.pp) * state_bytes_per_layer(model, par.tp, extra_tokens)


@functools.cache
def aligned_block_size(
    model: ModelSpec, kv: Precision, par: Parallelism, configured: int, alignment: int = KERNEL_BLOCK_ALIGNMENT
) -> int:
    """The attention block size vLLM runs with [tokens]: ``configured``, or larger so that one
    attention page holds one state page, a multiple of ``alignment`` (see the module docstring)."""
    state_page = state_bytes_per_layer(model, par.tp)
    if not state_page:
        return configured
    per_token = kv_bytes_per_token_per_layer(model, kv, par.tp)
    needed = alignment * math.ceil(state_page / (alignment * per_token))
    return max(configured, needed)


def _checkpoints(dep: Deployment) -> bool:
    """Whether the state layers keep a prefill checkpoint page (vLLM 0.33+, align mode): Mamba2 layers
    always, Gated DeltaNet layers where their prefill runs on FlashInfer (SM90)."""
    rel = dep.engine.release
    if rel.engine != "vllm" or not rel.at_least(VLLM_MAMBA_CHECKPOINT_FROM):
        return False
    return dep.model.mamba is not None or dep.gpu.cuda_capability == SM90


def block_alignment(dep: Deployment) -> int:
    """Multiple of tokens a hybrid's forced block is rounded to [tokens]: 16, or lcm(16, 64) = 64 for
    Gated DeltaNet whose prefill checkpoints on FlashInfer's 64-token chunks (vLLM 0.33+, SM90)."""
    gdn_flashinfer = _checkpoints(dep) and dep.model.linear_attention is not None
    return math.lcm(KERNEL_BLOCK_ALIGNMENT, GDN_FLASHINFER_ALIGNMENT if gdn_flashinfer else 1)


def kv_block_size(dep: Deployment) -> int:
    """Tokens per KV block of ``dep`` as the engine runs it [tokens]."""
    configured = dep.engine.block_tokens_on(dep.gpu.vendor, dep.model.mla is not None)
    return aligned_block_size(dep.model, dep.kv, dep.parallel, configured, block_alignment(dep))


def state_pages_per_request(dep: Deployment) -> int:
    """State pages vLLM reserves per request and state group in its concurrency figure [pages]:
    1 (mamba_cache_mode 'none'), 2 with prefix caching ('align': the running state and the last
    block's; vLLM 0.26+ for Gated DeltaNet hybrids, 0.30+ for all), 3 where the layers also keep a
    prefill checkpoint (0.33+, :func:`_checkpoints`). Release citations: :mod:`core.spec.release`."""
    rel = dep.engine.release
    if rel.engine != "vllm" or not rel.at_least(VLLM_HYBRID_PREFIX_CACHING_FROM):
        return 1
    if dep.model.linear_attention is None and not rel.at_least(VLLM_MAMBA_ALIGN_ALL_FROM):
        return 1  # 0.26-0.29: Mamba2 models in 'all' mode, not modelled
    return 2 + _checkpoints(dep)


def state_page_padding(dep: Deployment) -> float:
    """Fraction by which vLLM pads a state page to the attention page (0 for non-hybrids):
    what it logs as "Padding mamba page size by X%"."""
    state_page = state_bytes_per_layer(dep.model, dep.parallel.tp)
    if not state_page:
        return 0.0
    page = kv_block_size(dep) * kv_bytes_per_token_per_layer(dep.model, dep.kv, dep.parallel.tp)
    return page / state_page - 1


STATE_ACCESSES_PER_STEP = 2  # a step reads a scheduled sequence's state and writes it back


def state_traffic_bytes(model: ModelSpec, tp: int) -> float:
    """State bytes one scheduled sequence moves per step on one GPU, every layer on it [bytes]
    = 2 (read, write) x state per request."""
    return STATE_ACCESSES_PER_STEP * state_bytes_per_request(model, Parallelism(tp=tp))
