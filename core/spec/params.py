"""Parameter counts from the architecture, by group.

Counted from the shapes, not taken from the model card, so that weights can be split into the
parts a quantized format keeps in 16 bits (embeddings, LM head, norms, router) and the parts it
compresses (linear layers). Tests check the totals against published counts within 2 %.
FFNs are gated (SwiGLU/GeGLU: gate, up and down projections, 3 matrices) unless the model says
otherwise (Nemotron-H: up and down, 2). Hybrid layers count their own mixer (attention, Gated
DeltaNet or Mamba2, :mod:`core.spec.mixers`) and FFN (dense, MoE or none) per layer.
Biases are left out (under 0.1 % of any catalog model).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.spec.mixers import LayerKind
from core.spec.model import ModelSpec

GATED_FFN_MATRICES = 3  # gate, up and down projections
PLAIN_FFN_MATRICES = 2  # up and down projections


@dataclass(frozen=True, kw_only=True)
class ParamCounts:
    """Parameters of a model by group [count]."""

    embedding: float
    lm_head: float
    attention: float
    """Token mixers: attention, plus Gated DeltaNet / Mamba2 layers in hybrids (and MLA's, DSA's indexer)."""
    dense_ffn: float
    routed_experts: float
    shared_experts: float
    """Shared experts, and a latent MoE's projections to and from the latent width (always active)."""
    router: float
    norms: float
    experts_active_fraction: float
    """experts_per_token / num_experts (1 for dense models)."""
    vision: float = 0.0
    """A multimodal checkpoint's vision tower and projector (:mod:`core.spec.vision`); idle for text."""

    @property
    def linear(self) -> float:
        """Weights of the linear layers that quantized formats compress."""
        return self.attention + self.dense_ffn + self.routed_experts + self.shared_experts

    @property
    def total(self) -> float:
        return self.linear + self.embedding + self.lm_head + self.router + self.norms + self.vision

    @property
    def active(self) -> float:
        """Parameters a text token touches: routed experts count only experts_per_token of them,
        the vision tower none."""
        return self.total - self.vision - self.routed_experts * (1 - self.experts_active_fraction)

    @property
    def active_matmul(self) -> float:
        """Parameters in matmuls per token, excluding the embedding lookup (which costs no FLOPs)."""
        return self.active - self.embedding - self.norms


def attention_params_per_layer(model: ModelSpec) -> float:
    """Q, K, V and output projections of one layer [count].

    Standard: hidden*(heads*hd) + 2*hidden*(kv_heads*hd) + (heads*hd)*hidden; an output gate
    (Qwen3-Next) doubles the query projection. DeepSeek-V3.2's indexer adds its query (from the
    query latent), key and head-weight projections.
    MLA (DeepSeek-V2 eq. 9-14): optional low-rank query path, the KV down-projection to
    kv_lora_rank + rope dim, the up-projection to per-head keys (nope) and values, and the output.
    """
    h = model.hidden_size
    if model.mla is None:
        q_width = model.num_heads * model.head_dim
        kv_width = model.num_kv_heads * model.head_dim
        q_proj = h * q_width * (2 if model.attention_output_gate else 1)
        return q_proj + 2 * h * kv_width + q_width * h  # q (and gate), k and v, o
    m = model.mla
    q_width = model.num_heads * model.q_head_dim
    if m.q_lora_rank:
        q = h * m.q_lora_rank + m.q_lora_rank * q_width + m.q_lora_rank  # down, up, norm
    else:
        q = h * q_width
    kv_down = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank  # projection and norm
    kv_up = m.kv_lora_rank * model.num_heads * (m.qk_nope_head_dim + m.v_head_dim)
    out = model.num_heads * m.v_head_dim * h
    indexer = 0.0
    if model.indexer is not None:
        ix = model.indexer
        q_in = m.q_lora_rank or h
        indexer = q_in * ix.num_heads * ix.head_dim + h * ix.head_dim + h * ix.num_heads  # wq_b, wk, weights_proj
    return q + kv_down + kv_up + out + indexer


def part_params(model: ModelSpec, part: str) -> float:
    """Parameters of one quantizable part of the model (``ModelSpec.unquantized``'s names) [count]."""
    p = parameter_counts(model)
    attention = model.num_attention_layers * attention_params_per_layer(model)
    return {
        "attention": attention,
        "linear_attention": p.attention - attention,
        "dense_ffn": p.dense_ffn,
        "shared_experts": p.shared_experts,
        "routed_experts": p.routed_experts,
    }[part]


def kept_16bit_params(model: ModelSpec) -> tuple[float, float]:
    """(all, routed-expert) parameters of linear layers the checkpoint keeps in 16 bits [count]."""
    kept = {part: fraction * part_params(model, part) for part, fraction in model.unquantized}
    return sum(kept.values()), kept.get("routed_experts", 0.0)


def mixer_params(model: ModelSpec) -> float:
    """Token-mixer parameters of all layers [count]: each layer's attention, Gated DeltaNet or
    Mamba2 block (none for an FFN-only layer)."""
    h = model.hidden_size
    per_kind = {
        LayerKind.ATTENTION: attention_params_per_layer(model),
        LayerKind.LINEAR_ATTENTION: model.linear_attention.params(h) if model.linear_attention else 0.0,
        LayerKind.MAMBA: model.mamba.params(h) if model.mamba else 0.0,
        LayerKind.MLP: 0.0,
    }
    return sum(per_kind[kind] for kind in model.mixer_kinds)


def ffn_params(hidden_size: int, intermediate_size: int, gated: bool = True) -> float:
    """One FFN: 3 (gated) or 2 x hidden x intermediate [count]."""
    return (GATED_FFN_MATRICES if gated else PLAIN_FFN_MATRICES) * hidden_size * intermediate_size


@functools.cache
def parameter_counts(model: ModelSpec) -> ParamCounts:
    """All parameters of ``model`` by group (see module docstring); cached, specs are frozen."""
    h = model.hidden_size
    embedding = model.vocab_size * h
    lm_head = 0.0 if model.tie_embeddings else model.vocab_size * h
    attention = mixer_params(model)
    norms = (model.num_sublayers + 1) * h  # one before each mixer and FFN block, and the final norm
    dense_ffn = model.num_dense_ffn_layers * ffn_params(h, model.ffn_size, model.ffn_gated)
    vision = model.vision.params if model.vision else 0.0
    moe = model.moe
    if moe is None:
        return ParamCounts(
            embedding=embedding,
            lm_head=lm_head,
            attention=attention,
            dense_ffn=dense_ffn,
            routed_experts=0.0,
            shared_experts=0.0,
            router=0.0,
            norms=norms,
            experts_active_fraction=1.0,
            vision=vision,
        )
    moe_layers = model.num_moe_layers
    expert_width = moe.latent_size or h
    latent_projections = 2 * h * moe.latent_size  # hidden -> latent and back, every token (linear, active)
    return ParamCounts(
        embedding=embedding,
        lm_head=lm_head,
        attention=attention,
        dense_ffn=dense_ffn,
        routed_experts=moe_layers * moe.num_experts * ffn_params(expert_width, moe.expert_ffn_size, model.ffn_gated),
        shared_experts=moe_layers
        * (moe.num_shared_experts * ffn_params(h, moe.shared_ffn_size, model.ffn_gated) + latent_projections),
        router=moe_layers * h * moe.num_experts,
        norms=norms,
        experts_active_fraction=moe.experts_per_token / moe.num_experts,
        vision=vision,
    )
