"""Import a Hugging Face ``config.json`` into a :class:`~core.spec.model.ModelSpec`.

Reads the fields of the common decoder-only architectures (llama, mistral, mixtral, qwen2,
qwen2_moe, qwen3, qwen3_moe, deepseek_v2/v3/v3.2 and Kimi K2, gemma2/gemma3, phi3, glm/glm4,
gpt_oss) and the hybrids whose per-layer layout :mod:`core.spec.hf_layers` reads (qwen3_next,
qwen3_5, nemotron_h). Anything it
cannot read raises :class:`ConfigError` (a ``ValueError``) naming the missing or invalid field.
Sliding-window layers follow the Hugging Face modelling code of each architecture.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.spec.display_name import clean_name, safe_id
from core.spec.hf_layers import LayerConfigError, block_fields, hybrid_fields, kept_fractions
from core.spec.json_fields import show
from core.spec.json_text import parse_json
from core.spec.local_file import read_local_file
from core.spec.model import ModelSpec
from core.spec.quantization import CheckpointFormat, QuantizationError, checkpoint_format
from core.spec.vision import VisionConfigError, vision_from_config

MAX_CONFIG_DEPTH = 32
"""Nesting a config.json may have: real ones nest 4-6 levels (quantization_config's groups)."""
MAX_CONFIG_BYTES = 2_000_000  # a real config.json is a few KB; refuse megabytes of junk

SUPPORTED_MODEL_TYPES = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "deepseek_v2",
    "deepseek_v3",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi3",
    "glm",
    "glm4",
    "gpt_oss",
    "kimi_k2",
    "deepseek_v32",
    "qwen3_next",
    "qwen3_5",
    "qwen3_5_text",
    "qwen3_5_moe",
    "qwen3_5_moe_text",
    "nemotron_h",
    "glm4_moe",
    "minimax_m2",
    "llama4",
    "llama4_text",
    "qwen3_vl",
    "qwen3_vl_text",
    "qwen3_vl_moe",
    "qwen3_vl_moe_text",
    "kimi_k25",
    "glm_moe_dsa",
    "mimo",
)
_TIED_BY_DEFAULT = {"gemma2", "gemma3", "gemma3_text"}  # HF config classes default to tying
_CLASS_DEFAULTS = {
    # transformers' Gemma3TextConfig defaults, which Gemma-3's sparse text_config relies on
    "gemma3_text": {
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "sliding_window_pattern": 6,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
    },
}
# vLLM serves float32 checkpoints (e.g. Gemma-2 base) in 16 bits by default
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "bf16"}


class ConfigError(ValueError):
    """A config.json that cannot be turned into a model spec."""


def read_config(source: str | bytes | Path) -> dict[str, Any]:
    """Parse a config.json given as a file path, as JSON text or as the bytes of an upload; every
    failure is a ConfigError of one line naming the field, the line or the file's problem."""
    text: str | bytes
    try:
        if isinstance(source, bytes):
            text = source
        elif isinstance(source, Path) or not source.lstrip().startswith("{"):
            text = read_local_file(source, "config.json", MAX_CONFIG_BYTES)
        else:
            text = source
        if len(text) > MAX_CONFIG_BYTES:
            raise ConfigError(f"config.json: text is larger than {MAX_CONFIG_BYTES} bytes")
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ConfigError(f"config.json: not UTF-8 text ({err.reason} at byte {err.start})") from None
        data = parse_json(text, what="config.json", max_depth=MAX_CONFIG_DEPTH)
    except ConfigError:
        raise
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"config.json: expected a JSON object, got {type(data).__name__}")
    return data


def model_from_config(config: Mapping[str, Any], **meta: Any) -> ModelSpec:
    """Build a ModelSpec from config.json fields; ``meta`` fills id, name, sources, published counts.

    ``id`` defaults to the lowercased last part of ``_name_or_path`` or to the model_type.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"config.json: expected a JSON object, got {type(config).__name__}")
    model_type = config.get("model_type")
    cfg: Mapping[str, Any] = config
    if isinstance(config.get("text_config"), Mapping):  # multimodal wrappers (Gemma-3)
        cfg = {**config["text_config"]}
        model_type = cfg.get("model_type", model_type)
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        raise ConfigError(
            f"config.json: unsupported model_type {show(model_type)}; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    cfg = {**_CLASS_DEFAULTS.get(model_type, {}), **cfg}
    layers = _int(cfg, "num_hidden_layers")
    hidden = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads")
    kv_heads = _int(cfg, "num_key_value_heads", default=heads)
    if cfg.get("head_dim") is not None:
        head_dim = _int(cfg, "head_dim")
    elif cfg.get("attention_head_dim") is not None:  # nemotron_h
        head_dim = _int(cfg, "attention_head_dim")
    elif hidden % heads:
        raise ConfigError(
            f"config.json: field 'head_dim' is missing and hidden_size ({hidden}) is not a multiple "
            f"of num_attention_heads ({heads})"
        )
    else:
        head_dim = hidden // heads
    if heads % kv_heads:
        raise ConfigError(
            f"config.json: invalid field 'num_key_value_heads': {heads} attention heads are not a "
            f"multiple of {kv_heads}"
        )
    sliding_window, sliding_layers = _sliding(cfg, model_type, layers)
    quant = _checkpoint_format(config, cfg)
    default_id = str(config.get("_name_or_path") or model_type).rstrip("/").split("/")[-1].lower()
    fields: dict[str, Any] = {
        "id": safe_id(default_id, model_type),
        "name": default_id,
        "model_type": model_type,
        "num_layers": layers,
        "hidden_size": hidden,
        "ffn_size": _int(cfg, "intermediate_size", default=cfg.get("moe_intermediate_size")),
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": _int(cfg, "vocab_size"),
        "max_context": _int(cfg, "max_position_embeddings"),
        "tie_embeddings": _bool(cfg, "tie_word_embeddings", default=model_type in _TIED_BY_DEFAULT),
        "sliding_window": sliding_window,
        "sliding_layers": sliding_layers,
        "native_dtype": _native_dtype(config, cfg, quant),
        "quantization": quant.detail if quant else "",
        "mtp_layers": _mtp_layers(cfg),
    }
    try:
        fields.update(block_fields(cfg, model_type, layers, _int))
        fields.update(hybrid_fields(cfg, model_type, layers, _int))
        fields["vision"] = vision_from_config(config, hidden)
    except ConfigError:  # already says "config.json: ..."
        raise
    except (LayerConfigError, VisionConfigError, ValueError) as err:  # a spec's own checks included
        raise ConfigError(f"config.json: {err}") from None
    fields.update(meta)
    fields["name"] = clean_name(str(fields["name"]), fields["id"])  # a name from outside reaches pages and handouts
    try:
        spec = ModelSpec(**fields)
        return dataclasses.replace(spec, unquantized=kept_fractions(spec, quant.unquantized)) if quant else spec
    except ValueError as err:
        raise ConfigError(f"config.json: {err}") from None


_MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")


def _mtp_layers(cfg: Mapping[str, Any]) -> int:
    """MTP layers the checkpoint ships: DeepSeek / GLM / MiMo, Qwen3.5 and MiniMax name them differently."""
    for key in _MTP_KEYS:
        value = cfg.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 64:
                raise ConfigError(f"config.json: invalid field {key!r}: expected 0 to 64, got {value!r}")
            return value
    return 0


def _int(cfg: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = cfg.get(key)
    if value is None:
        if default is None:
            raise ConfigError(f"config.json: missing field {key!r}")
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"config.json: invalid field {key!r}: expected a positive integer, got {value!r}")
    if value > 10**9:
        raise ConfigError(f"config.json: invalid field {key!r}: {value} is implausibly large (max 1e9)")
    return value


def _bool(cfg: Mapping[str, Any], key: str, default: bool) -> bool:
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"config.json: invalid field {key!r}: expected true or false, got {value!r}")
    return value


def _sliding(cfg: Mapping[str, Any], model_type: str, layers: int) -> tuple[int | None, tuple[bool, ...]]:
    """Window size and, per layer, whether it slides (per each architecture's HF modelling code)."""
    window = cfg.get("sliding_window")
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != layers:
            raise ConfigError(f"config.json: invalid field 'layer_types': expected a list of {layers} entries")
        mask = tuple(kind == "sliding_attention" for kind in layer_types)
    elif model_type == "gemma2":
        mask = tuple(i % 2 == 0 for i in range(layers))  # even layers slide
    elif model_type in ("gemma3", "gemma3_text"):
        pattern = _int(cfg, "sliding_window_pattern", default=6)
        mask = tuple((i + 1) % pattern != 0 for i in range(layers))  # every pattern-th layer is global
    elif model_type in ("qwen2", "mimo", "qwen3", "qwen2_moe", "qwen3_moe", "qwen3_vl_text", "qwen3_vl_moe_text"):
        first = cfg.get("max_window_layers", layers)
        use = bool(cfg.get("use_sliding_window", False))
        mask = tuple(use and i >= first for i in range(layers))
    elif model_type in ("mistral", "mixtral", "phi3"):
        mask = (window is not None,) * layers
    else:
        mask = (False,) * layers
    if not any(mask):
        return None, ()
    if window is None:
        raise ConfigError("config.json: missing field 'sliding_window' for a model with sliding-window layers")
    return _int(cfg, "sliding_window"), mask


def _checkpoint_format(config: Mapping[str, Any], cfg: Mapping[str, Any]) -> CheckpointFormat | None:
    """The quantized format the checkpoint stores (:mod:`core.spec.quantization`), None if unquantized."""
    quant = config.get("quantization_config") or cfg.get("quantization_config")
    if quant is None:
        return None
    if not isinstance(quant, Mapping):
        raise ConfigError(f"config.json: field 'quantization_config' must be an object, got {type(quant).__name__}")
    try:
        return checkpoint_format(quant)
    except QuantizationError as err:
        raise ConfigError(f"config.json: {err}") from None


def _stated_dtype(config: Mapping[str, Any], cfg: Mapping[str, Any]) -> Any:
    return cfg.get("torch_dtype") or cfg.get("dtype") or config.get("torch_dtype") or config.get("dtype")


def _native_dtype(config: Mapping[str, Any], cfg: Mapping[str, Any], quant: CheckpointFormat | None) -> str:
    if quant is not None:
        return quant.weights
    dtype = _stated_dtype(config, cfg)
    return _DTYPES.get(dtype, "bf16") if isinstance(dtype, str) else "bf16"


def unread_dtype(config: Mapping[str, Any]) -> str | None:
    """The ``torch_dtype`` (or ``dtype``) an unquantized config.json states that is none of
    bfloat16, float16 and float32, quoted as the config has it (cut to 40 characters); None when it
    states one of those or none. Such a checkpoint is taken as bf16, as one that states none: the
    caller says so (:func:`model_from_config` cannot refuse it, a typo should not stop an import)."""
    cfg = config["text_config"] if isinstance(config.get("text_config"), Mapping) else config
    if config.get("quantization_config") or cfg.get("quantization_config"):
        return None
    dtype = _stated_dtype(config, cfg)
    if dtype is None or (isinstance(dtype, str) and dtype in _DTYPES):
        return None
    quoted = repr(dtype)
    return quoted if len(quoted) <= 40 else f"{quoted[:37]}..."
