"""The blocks of a ``config.json``'s layers: MoE sizes, MLA and DeepSeek-V3.2's indexer
(:func:`block_fields`), and the per-layer layout of the hybrids (:func:`hybrid_fields`): which
layers are attention, Gated DeltaNet or Mamba2, and which carry a dense FFN, an MoE or none.

- ``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe`` (and their ``*_text`` configs): an explicit
  ``layer_types`` list ("linear_attention" / "full_attention") wins; otherwise layer i is full
  attention when (i + 1) % ``full_attention_interval`` == 0 (default 4), as in vLLM 0.11-0.33
  and transformers. Attention has an output gate (``attn_output_gate``, default true in vLLM).
  A ``mamba_ssm_dtype`` of float32 keeps the recurrent state in 4 bytes.
- ``llama4``: MoE every ``interleave_moe_layer_step``-th layer (i % step == step - 1, each with
  one shared expert of ``intermediate_size``), dense layers of ``intermediate_size_mlp``; the RoPE
  layers (``no_rope_layers`` 1, default all but every 4th) attend within chunks of
  ``attention_chunk_size`` tokens, the NoPE layers globally.
- ``nemotron_h``: ``hybrid_override_pattern``, one character per layer: ``M`` Mamba2, ``*``
  attention, ``-`` a dense FFN, ``E`` an MoE; each layer is one block, so a Mamba2 or attention
  layer has no FFN and an FFN layer no mixer. FFNs are up/down only (relu^2). vLLM 0.33 keeps the
  SSM state in float32 unless ``mamba_ssm_cache_dtype`` says otherwise (0.11: the model dtype).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.spec.mixers import STATE_KINDS, FfnKind, GatedDeltaNetSpec, LayerKind, Mamba2Spec
from core.spec.model import IndexerSpec, MlaSpec, ModelSpec, MoeSpec

_QWEN_MOE = {"qwen2_moe", "qwen3_moe", "qwen3_vl_moe_text", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text"}
_DEEPSEEK = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa"}
_SPARSE_INDEXER = {"deepseek_v32", "glm_moe_dsa"}  # DeepSeek Sparse Attention: MLA plus a top-k indexer
_DEEPSEEK_MOE = _DEEPSEEK | {"glm4_moe"}  # first_k_dense_replace, n_routed / n_shared experts
_MIXTRAL_MOE = {"mixtral", "gpt_oss", "minimax_m2"}  # num_local_experts of intermediate_size
GDN_MODEL_TYPES = frozenset(
    {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"},
)
MAMBA2_MODEL_TYPES = frozenset({"nemotron_h"})
_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
NEMOTRON_H_DEFAULT_SSM_BYTES = 4  # vLLM 0.33 NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE float32
_PATTERN = {
    "M": (LayerKind.MAMBA, FfnKind.NONE),
    "*": (LayerKind.ATTENTION, FfnKind.NONE),
    "-": (LayerKind.MLP, FfnKind.DENSE),
    "E": (LayerKind.MLP, FfnKind.MOE),
}


class LayerConfigError(ValueError):
    """A hybrid layer layout that cannot be read (the caller adds the config.json context)."""


def block_fields(cfg: Mapping[str, Any], model_type: str, layers: int, read_int) -> dict[str, Any]:
    """ModelSpec fields of the blocks every layer repeats: MoE sizes, MLA, DeepSeek-V3.2's indexer."""
    return {
        "moe": _moe(cfg, model_type, layers, read_int),
        "mla": _mla(cfg, read_int) if model_type in _DEEPSEEK else None,
        "indexer": _indexer(cfg, read_int) if model_type in _SPARSE_INDEXER else None,
    }


def kept_fractions(model: ModelSpec, parts) -> tuple[tuple[str, float], ...]:
    """For each part a quantized checkpoint keeps in 16 bits (``CheckpointFormat.unquantized``),
    the fraction of the model's layers of that part it names (all of them when no layer is named)."""
    layers_of = {
        "attention": [i for i, k in enumerate(model.mixer_kinds) if k is LayerKind.ATTENTION],
        "linear_attention": [i for i, k in enumerate(model.mixer_kinds) if k in STATE_KINDS],
        "dense_ffn": [i for i, f in enumerate(model.layer_ffns) if f is FfnKind.DENSE],
        "shared_experts": [i for i, f in enumerate(model.layer_ffns) if f is FfnKind.MOE],
        "routed_experts": [i for i, f in enumerate(model.layer_ffns) if f is FfnKind.MOE],
    }
    kept = []
    for part, indices in parts:
        layers = layers_of[part]
        if not layers:
            continue
        named = len(layers) if indices is None else len(set(indices) & set(layers))
        if named:
            kept.append((part, named / len(layers)))
    return tuple(kept)


def hybrid_fields(cfg: Mapping[str, Any], model_type: str, layers: int, read_int) -> dict[str, Any]:
    """ModelSpec fields for a hybrid ``model_type`` (empty for others); ``read_int(cfg, key,
    default=None)`` is the importer's checked integer reader."""
    if model_type in GDN_MODEL_TYPES:
        return _gated_deltanet(cfg, layers, read_int)
    if model_type in MAMBA2_MODEL_TYPES:
        return _nemotron_h(cfg, layers, read_int)
    if model_type in ("llama4", "llama4_text"):
        return _llama4(cfg, layers, read_int)
    return {}


def _llama4(cfg: Mapping[str, Any], layers: int, read_int) -> dict[str, Any]:
    step = read_int(cfg, "interleave_moe_layer_step", default=1)
    moe_layers = cfg.get("moe_layers")
    if moe_layers is None:
        moe_layers = list(range(step - 1, layers, step))
    if not isinstance(moe_layers, list) or not all(isinstance(i, int) and 0 <= i < layers for i in moe_layers):
        raise LayerConfigError(f"invalid field 'moe_layers': expected layer indices below {layers}")
    expert = read_int(cfg, "intermediate_size")
    fields: dict[str, Any] = {
        "moe": MoeSpec(
            num_experts=read_int(cfg, "num_local_experts"),
            experts_per_token=read_int(cfg, "num_experts_per_tok"),
            expert_ffn_size=expert,
            num_shared_experts=1,
            shared_ffn_size=expert,
        ),
        "ffn_kinds": tuple(FfnKind.MOE if i in set(moe_layers) else FfnKind.DENSE for i in range(layers)),
        "ffn_size": read_int(cfg, "intermediate_size_mlp", default=expert),
    }
    chunk = cfg.get("attention_chunk_size")
    if chunk is not None:
        rope = cfg.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(layers)]
        if not isinstance(rope, list) or len(rope) != layers:
            raise LayerConfigError(f"invalid field 'no_rope_layers': expected a list of {layers} entries")
        fields |= {
            "sliding_window": read_int(cfg, "attention_chunk_size"),
            "sliding_layers": tuple(bool(r) for r in rope),
            "attention_chunked": True,
        }
    return fields


def _state_bytes(cfg: Mapping[str, Any], keys: tuple[str, ...], default: int) -> int:
    for key in keys:
        if (value := cfg.get(key)) is not None:
            if not isinstance(value, str) or value not in _STATE_DTYPE_BYTES:
                raise LayerConfigError(f"invalid field {key!r}: {value!r}")
            return _STATE_DTYPE_BYTES[value]
    return default


def _gated_deltanet(cfg: Mapping[str, Any], layers: int, read_int) -> dict[str, Any]:
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers or not all(isinstance(t, str) for t in types):
            raise LayerConfigError(f"invalid field 'layer_types': expected a list of {layers} names")
        unknown = set(types) - {"linear_attention", "full_attention"}
        if unknown:
            raise LayerConfigError(f"invalid field 'layer_types': unknown kinds {sorted(unknown)}")
        full = [kind == "full_attention" for kind in types]
    else:
        interval = read_int(cfg, "full_attention_interval", default=4)
        full = [(i + 1) % interval == 0 for i in range(layers)]
    gate = cfg.get("attn_output_gate", True)
    if not isinstance(gate, bool):
        raise LayerConfigError(f"invalid field 'attn_output_gate': expected true or false, got {gate!r}")
    return {
        "layer_kinds": tuple(LayerKind.ATTENTION if f else LayerKind.LINEAR_ATTENTION for f in full),
        "linear_attention": GatedDeltaNetSpec(
            num_k_heads=read_int(cfg, "linear_num_key_heads"),
            num_v_heads=read_int(cfg, "linear_num_value_heads"),
            k_head_dim=read_int(cfg, "linear_key_head_dim"),
            v_head_dim=read_int(cfg, "linear_value_head_dim"),
            conv_kernel=read_int(cfg, "linear_conv_kernel_dim"),
            recurrent_state_bytes=_state_bytes(cfg, ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"), 2),
        ),
        "attention_output_gate": gate,
    }


def _nemotron_h(cfg: Mapping[str, Any], layers: int, read_int) -> dict[str, Any]:
    pattern = cfg.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != layers or set(pattern) - set(_PATTERN):
        raise LayerConfigError(
            f"invalid field 'hybrid_override_pattern': expected {layers} characters of M, *, - and E"
        )
    kinds = [_PATTERN[c] for c in pattern]
    fields: dict[str, Any] = {
        "layer_kinds": tuple(k for k, _ in kinds),
        "ffn_kinds": tuple(f for _, f in kinds),
        "ffn_gated": False,
        "mamba": Mamba2Spec(
            num_heads=read_int(cfg, "mamba_num_heads"),
            head_dim=read_int(cfg, "mamba_head_dim"),
            state_size=read_int(cfg, "ssm_state_size"),
            n_groups=read_int(cfg, "n_groups"),
            conv_kernel=read_int(cfg, "conv_kernel"),
            ssm_state_bytes=_state_bytes(cfg, ("mamba_ssm_cache_dtype",), NEMOTRON_H_DEFAULT_SSM_BYTES),
        ),
    }
    if "E" in pattern:
        shared = cfg.get("n_shared_experts") or 0
        fields["moe"] = MoeSpec(
            num_experts=read_int(cfg, "n_routed_experts"),
            experts_per_token=read_int(cfg, "num_experts_per_tok"),
            expert_ffn_size=read_int(cfg, "moe_intermediate_size"),
            num_shared_experts=read_int(cfg, "n_shared_experts") if shared else 0,
            shared_ffn_size=read_int(cfg, "moe_shared_expert_intermediate_size") if shared else 0,
            latent_size=read_int(cfg, "moe_latent_size") if cfg.get("moe_latent_size") else 0,
        )
    return fields


def _moe(cfg: Mapping[str, Any], model_type: str, layers: int, read_int) -> MoeSpec | None:
    if model_type in _MIXTRAL_MOE:
        experts = read_int(cfg, "num_local_experts")
        per_token_key = "num_experts_per_tok" if "num_experts_per_tok" in cfg else "experts_per_token"
        return MoeSpec(
            num_experts=experts,
            experts_per_token=read_int(cfg, per_token_key),
            expert_ffn_size=read_int(cfg, "intermediate_size"),
        )
    if model_type in _QWEN_MOE:
        if read_int(cfg, "decoder_sparse_step", default=1) != 1:
            raise LayerConfigError("invalid field 'decoder_sparse_step': only 1 is supported")
        dense = cfg.get("mlp_only_layers") or []
        if not isinstance(dense, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in dense):
            raise LayerConfigError("invalid field 'mlp_only_layers': expected a list of layer indices")
        shared_size = cfg.get("shared_expert_intermediate_size") or 0
        return MoeSpec(
            num_experts=read_int(cfg, "num_experts"),
            experts_per_token=read_int(cfg, "num_experts_per_tok"),
            expert_ffn_size=read_int(cfg, "moe_intermediate_size"),
            num_shared_experts=1 if shared_size else 0,
            shared_ffn_size=read_int(cfg, "shared_expert_intermediate_size") if shared_size else 0,
            num_dense_layers=len(dense),
        )
    if model_type in _DEEPSEEK_MOE:
        if read_int(cfg, "moe_layer_freq", default=1) != 1:
            raise LayerConfigError("invalid field 'moe_layer_freq': only 1 is supported")
        first_dense = cfg.get("first_k_dense_replace", 0)
        if not isinstance(first_dense, int) or isinstance(first_dense, bool) or not 0 <= first_dense <= layers:
            raise LayerConfigError(f"invalid field 'first_k_dense_replace': {first_dense!r}")
        shared = cfg.get("n_shared_experts") or 0
        expert_size = read_int(cfg, "moe_intermediate_size")
        return MoeSpec(
            num_experts=read_int(cfg, "n_routed_experts"),
            experts_per_token=read_int(cfg, "num_experts_per_tok"),
            expert_ffn_size=expert_size,
            num_shared_experts=read_int(cfg, "n_shared_experts") if shared else 0,
            shared_ffn_size=expert_size if shared else 0,
            num_dense_layers=first_dense,
        )
    return None


def _mla(cfg: Mapping[str, Any], read_int) -> MlaSpec:
    q_lora = cfg.get("q_lora_rank")
    return MlaSpec(
        kv_lora_rank=read_int(cfg, "kv_lora_rank"),
        q_lora_rank=read_int(cfg, "q_lora_rank") if q_lora is not None else 0,
        qk_rope_head_dim=read_int(cfg, "qk_rope_head_dim"),
        qk_nope_head_dim=read_int(cfg, "qk_nope_head_dim"),
        v_head_dim=read_int(cfg, "v_head_dim"),
    )


def _indexer(cfg: Mapping[str, Any], read_int) -> IndexerSpec:
    return IndexerSpec(
        num_heads=read_int(cfg, "index_n_heads"),
        head_dim=read_int(cfg, "index_head_dim"),
        topk=read_int(cfg, "index_topk"),
    )
