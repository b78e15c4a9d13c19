"""The activation peak vLLM measures in its start-up profile run, charged to the KV budget.

peak = T x 2 B x (3 x FFN width + 4 x hidden) + 2 x min(max_num_seqs, T) x vocab x 4 B,
T = max_num_batched_tokens
"""

from __future__ import annotations

from core.spec.model import ModelSpec
from core.spec.precision import ACTIVATION_PRECISION

FP32_BYTES = 4  # the sampler's logits are float32


GATED_FFN_ACTIVATIONS = 3  # gate+up output (2 x ffn wide) and the activated product (1 x ffn)


SAMPLER_LOGIT_COPIES = 2  # logits and their softmax/probabilities coexist in the sampler


HIDDEN_ACTIVATIONS = 4  # residual, normed input, attention output and q/k/v, each ~hidden wide


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
