"""Model architecture specs: the shapes that memory, FLOPs and bytes are computed from.

A :class:`ModelSpec` holds what a Hugging Face ``config.json`` says about a decoder-only
transformer (layers, widths, heads, head_dim, MoE and MLA sizes, sliding-window layers) plus the
published parameter counts and where each figure was read. Invariants are checked at creation.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from enum import StrEnum

from core.spec.mixers import STATE_KINDS, FfnKind, GatedDeltaNetSpec, LayerKind, Mamba2Spec
from core.spec.vision import VisionSpec


class AttentionKind(StrEnum):
    MHA = "MHA"  # one KV head per query head
    GQA = "GQA"  # groups of query heads share a KV head
    MQA = "MQA"  # a single KV head
    MLA = "MLA"  # multi-head latent attention: a compressed latent is cached (DeepSeek-V2/V3)


@dataclass(frozen=True, kw_only=True)
class MlaSpec:
    """Multi-head latent attention sizes (DeepSeek-V2 paper, arXiv:2405.04434, section 2.1)."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int = 0
    """0 when queries are projected directly (no low-rank query compression)."""

    def __post_init__(self) -> None:
        for name in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            _require_positive(name, getattr(self, name))
        if self.q_lora_rank < 0:
            raise ValueError(f"q_lora_rank must be >= 0, got {self.q_lora_rank}")


@dataclass(frozen=True, kw_only=True)
class MoeSpec:
    """Mixture-of-experts feed-forward sizes."""

    num_experts: int
    experts_per_token: int
    expert_ffn_size: int
    num_shared_experts: int = 0
    shared_ffn_size: int = 0
    """Intermediate size of one shared expert (DeepSeek: moe_intermediate_size)."""
    num_dense_layers: int = 0
    """Leading layers that keep a dense FFN (DeepSeek's first_k_dense_replace)."""
    latent_size: int = 0
    """Routed experts work in a latent width, projected from and back to hidden (NVIDIA's latent
    MoE, Nemotron 3 Super's ``moe_latent_size``); 0: experts take the hidden state itself."""

    def __post_init__(self) -> None:
        for name in ("num_experts", "experts_per_token", "expert_ffn_size"):
            _require_positive(name, getattr(self, name))
        if self.experts_per_token > self.num_experts:
            raise ValueError(f"experts_per_token ({self.experts_per_token}) exceeds num_experts ({self.num_experts})")
        for name in ("num_shared_experts", "shared_ffn_size", "num_dense_layers", "latent_size"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.num_shared_experts and not self.shared_ffn_size:
            raise ValueError("shared_ffn_size must be > 0 when num_shared_experts > 0")


@dataclass(frozen=True, kw_only=True)
class IndexerSpec:
    """DeepSeek-V3.2's lightning indexer: a small FP8 key cache beside MLA that picks the top-k
    tokens each query attends to (config: index_n_heads, index_head_dim, index_topk)."""

    num_heads: int
    head_dim: int
    topk: int

    def __post_init__(self) -> None:
        for name in ("num_heads", "head_dim", "topk"):
            _require_positive(name, getattr(self, name))

    @property
    def cache_bytes_per_token(self) -> int:
        """One layer's indexer key of one token [bytes]: FP8 key plus one FP32 scale per 128 values
        (vLLM's DeepseekV32IndexerCache, 0.11+)."""
        return self.head_dim + 4 * -(-self.head_dim // 128)


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A decoder-only transformer as far as inference cost is concerned."""

    id: str
    name: str
    num_layers: int
    hidden_size: int
    ffn_size: int
    """Intermediate size of a dense (gated) FFN; for all-MoE models the config's value, unused."""
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    max_context: int
    tie_embeddings: bool = False
    moe: MoeSpec | None = None
    mla: MlaSpec | None = None
    sliding_window: int | None = None
    sliding_layers: tuple[bool, ...] = ()
    """Per layer, True when that layer attends only to the last ``sliding_window`` tokens."""
    attention_chunked: bool = False
    """The local layers attend within fixed chunks of ``sliding_window`` tokens (Llama 4's chunked
    attention), holding at most a chunk of KV as a sliding layer holds at most a window."""
    layer_kinds: tuple[LayerKind, ...] = ()
    """Per layer, its token mixer (:class:`~core.spec.mixers.LayerKind`); empty: all attention."""
    ffn_kinds: tuple[FfnKind, ...] = ()
    """Per layer, its feed-forward block; empty: the first ``moe.num_dense_layers`` dense, then MoE."""
    linear_attention: GatedDeltaNetSpec | None = None
    mamba: Mamba2Spec | None = None
    indexer: IndexerSpec | None = None
    vision: VisionSpec | None = None
    """A multimodal checkpoint's vision tower, loaded beside the language model."""
    mtp_layers: int = 0
    """Multi-token-prediction layers the checkpoint ships (num_nextn_predict_layers and kin): vLLM
    loads them only as a speculative proposer, so the weights leave them out until MTP is on."""
    ffn_gated: bool = True
    """Gated FFN (SwiGLU/GeGLU: gate, up, down); False for up/down only (Nemotron-H's relu^2)."""
    attention_output_gate: bool = False
    """Queries projected at twice the width, half gating the output (Qwen3-Next)."""
    native_dtype: str = "bf16"
    """Weight format of the published checkpoint (bf16, fp8, mxfp4, ...)."""
    quantization: str = ""
    """What the checkpoint's quantization_config says (method, bits, groups), when it has one."""
    unquantized: tuple[tuple[str, float], ...] = ()
    """Parts the quantized checkpoint keeps in 16 bits (attention, linear_attention, dense_ffn,
    shared_experts, routed_experts) with the fraction of that part's layers it keeps."""
    hf_id: str = ""
    model_type: str = ""
    params_total_published: float | None = None
    params_active_published: float | None = None
    params_active_excludes_embedding: bool = False
    """Whether the publisher's active count leaves out the input embedding (gpt-oss, DeepSeek-V2)."""
    source_url: str = ""
    source_read: dt.date | None = None
    params_source_url: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("id must not be empty")
        for name in (
            "num_layers",
            "hidden_size",
            "ffn_size",
            "num_heads",
            "num_kv_heads",
            "head_dim",
            "vocab_size",
            "max_context",
        ):
            _require_positive(name, getattr(self, name))
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({self.num_kv_heads})")
        if self.sliding_layers and len(self.sliding_layers) != self.num_layers:
            raise ValueError(f"sliding_layers has {len(self.sliding_layers)} entries for {self.num_layers} layers")
        if any(self.sliding_layers) and not self.sliding_window:
            raise ValueError("sliding_window must be set when any layer uses a sliding window")
        if self.sliding_window is not None:
            _require_positive("sliding_window", self.sliding_window)
        self._check_layers()
        if self.moe and self.moe.num_dense_layers > self.num_layers:
            raise ValueError(f"num_dense_layers ({self.moe.num_dense_layers}) exceeds num_layers ({self.num_layers})")
        for name in ("params_total_published", "params_active_published"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")

    def _check_layers(self) -> None:
        for name in ("layer_kinds", "ffn_kinds"):
            if getattr(self, name) and len(getattr(self, name)) != self.num_layers:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries for {self.num_layers} layers")
        kinds = self.mixer_kinds
        if LayerKind.ATTENTION not in kinds:
            raise ValueError("at least one layer must be an attention layer")
        for kind, spec in ((LayerKind.LINEAR_ATTENTION, self.linear_attention), (LayerKind.MAMBA, self.mamba)):
            if (kind in kinds) != (spec is not None):
                raise ValueError(f"{kind.value} layers and the {kind.value} sizes must come together")
        if any(s and k != LayerKind.ATTENTION for s, k in zip(self.sliding_layers, kinds, strict=False)):
            raise ValueError("only attention layers can use a sliding window")
        if (FfnKind.MOE in self.ffn_kinds) and self.moe is None:
            raise ValueError("MoE layers need the MoE sizes")

    @functools.cached_property
    def mixer_kinds(self) -> tuple[LayerKind, ...]:
        """Per layer, its token mixer (all attention unless the config says otherwise)."""
        return self.layer_kinds or (LayerKind.ATTENTION,) * self.num_layers

    @functools.cached_property
    def layer_ffns(self) -> tuple[FfnKind, ...]:
        """Per layer, its feed-forward block."""
        if self.ffn_kinds:
            return self.ffn_kinds
        if self.moe is None:
            return (FfnKind.DENSE,) * self.num_layers
        dense = self.moe.num_dense_layers
        return (FfnKind.DENSE,) * dense + (FfnKind.MOE,) * (self.num_layers - dense)

    def count_layers(self, kind: LayerKind) -> int:
        return self.mixer_kinds.count(kind)

    @functools.cached_property
    def num_attention_layers(self) -> int:
        """Layers with a KV cache (full or sliding attention)."""
        return self.count_layers(LayerKind.ATTENTION)

    @functools.cached_property
    def num_state_layers(self) -> int:
        """Layers with a constant per-request state (Gated DeltaNet, Mamba2)."""
        return sum(kind in STATE_KINDS for kind in self.mixer_kinds)

    @property
    def is_hybrid(self) -> bool:
        return self.num_state_layers > 0

    @functools.cached_property
    def num_sublayers(self) -> int:
        """Mixer and FFN blocks, each ending in a residual add (and, under TP, an all-reduce)."""
        mixers = sum(kind != LayerKind.MLP for kind in self.mixer_kinds)
        return mixers + sum(ffn != FfnKind.NONE for ffn in self.layer_ffns)

    @property
    def attention_kind(self) -> AttentionKind:
        if self.mla is not None:
            return AttentionKind.MLA
        if self.num_kv_heads == self.num_heads:
            return AttentionKind.MHA
        if self.num_kv_heads == 1:
            return AttentionKind.MQA
        return AttentionKind.GQA

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def num_moe_layers(self) -> int:
        return self.layer_ffns.count(FfnKind.MOE)

    @property
    def num_dense_ffn_layers(self) -> int:
        return self.layer_ffns.count(FfnKind.DENSE)

    @property
    def num_sliding_layers(self) -> int:
        return sum(self.sliding_layers)

    @property
    def q_head_dim(self) -> int:
        """Width of one query/key head used in the attention scores."""
        if self.mla:
            return self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim
        return self.head_dim

    @property
    def v_head_dim(self) -> int:
        return self.mla.v_head_dim if self.mla else self.head_dim


def _require_positive(name: str, value: float) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
