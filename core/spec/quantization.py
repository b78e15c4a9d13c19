"""A checkpoint's ``quantization_config`` read as the weight format it stores.

Each method as Hugging Face ``config.json`` files write it (and vLLM's quantization configs read it):

- ``awq``: ``bits`` 4 (``group_size``, ``zero_point``) -> int4 (W4A16);
- ``gptq``: ``bits`` 4 -> int4, 8 -> int8 (GPTQ-Int8 is weight-only; it is stored like INT8);
- ``fp8``: FP8 weights, ``activation_scheme`` static or dynamic, ``weight_block_size`` for block
  scales (DeepSeek-V3's 128 x 128) -> fp8;
- ``compressed-tensors``: ``config_groups`` whose ``weights`` have ``num_bits`` and ``type`` (int,
  float) and whose ``input_activations`` say whether activations are quantized: 4-bit int weights
  -> int4 (W4A16), 8-bit int with 8-bit activations -> int8 (W8A8), 8-bit float -> fp8, 4-bit float
  (``format`` nvfp4-pack-quantized) -> nvfp4;
- ``mxfp4`` -> mxfp4 (gpt-oss: experts only, ``modules_to_not_convert`` in 16 bits);
- ``modelopt``: ``quant_algo`` FP8 -> fp8, NVFP4 -> nvfp4;
- ``bitsandbytes``: ``load_in_4bit`` -> int4 (NF4/FP4 with block absmax), ``load_in_8bit`` -> int8.

Embeddings, the LM head, routers and vision towers stay in 16 bits in every one of these. Other
modules a config lists under ``ignore`` / ``modules_to_not_convert`` / ``exclude_modules`` /
``llm_int8_skip_modules`` (NVIDIA's NVFP4 checkpoints keep attention, linear attention and shared
experts in BF16, quantizing only the routed experts) are read by :func:`unquantized_modules` as
parts of the model, with the layers they name, and :func:`core.memory.weights.weight_bytes` keeps
those parts in 16 bits. Group sizes other than 128 are named in ``detail`` but sized as the
format's standard layout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class QuantizationError(ValueError):
    """A quantization_config the tool cannot read."""


@dataclass(frozen=True)
class CheckpointFormat:
    """The weight format a quantized checkpoint stores, and what its config says about it."""

    weights: str
    """A key of core.spec.precision.WEIGHT_PRECISIONS."""
    method: str
    detail: str
    unquantized: tuple[tuple[str, tuple[int, ...] | None], ...] = ()
    """Parts kept in 16 bits and the layers named (:func:`unquantized_modules`)."""


def checkpoint_format(quant: Mapping[str, Any]) -> CheckpointFormat:
    """The weight format ``quantization_config`` describes; raises QuantizationError naming the field."""
    method = str(quant.get("quant_method", "")).lower()
    reader = _READERS.get(method)
    if reader is None:
        known = ", ".join(sorted(_READERS))
        raise QuantizationError(f"quantization_config: unsupported quant_method {method!r}; supported: {known}")
    weights, detail = reader(quant)
    unquantized = unquantized_modules(quant)
    if unquantized:
        detail += "; 16-bit: " + ", ".join(part.replace("_", " ") for part, _ in unquantized)
    return CheckpointFormat(weights=weights, method=method, detail=detail, unquantized=unquantized)


def _bits(quant: Mapping[str, Any], key: str = "bits") -> int:
    value = quant.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuantizationError(f"quantization_config: field {key!r} must be an integer, got {value!r}")
    return value


def _group(quant: Mapping[str, Any]) -> str:
    group = quant.get("group_size")
    return f", group size {group}" if group is not None else ""


def _awq(quant):
    bits = _bits(quant)
    if bits != 4:
        raise QuantizationError(f"quantization_config: AWQ with {bits} bits is not modelled (only 4)")
    return "int4", f"AWQ {bits}-bit{_group(quant)}"


def _gptq(quant):
    bits = _bits(quant)
    if bits not in (4, 8):
        raise QuantizationError(f"quantization_config: GPTQ with {bits} bits is not modelled (4 or 8)")
    return ("int4" if bits == 4 else "int8"), f"GPTQ {bits}-bit{_group(quant)}"


def _fp8(quant):
    scheme = quant.get("activation_scheme", "dynamic")
    block = quant.get("weight_block_size")
    if block is not None and not (
        isinstance(block, list) and len(block) == 2 and all(type(n) is int and n > 0 for n in block)
    ):
        raise QuantizationError(
            f"quantization_config: field 'weight_block_size' must be two positive integers, got {block!r}"
        )
    return "fp8", f"FP8, {scheme} activation scales" + (f", {block[0]}x{block[1]} weight blocks" if block else "")


def _mxfp4(quant):
    return "mxfp4", "MXFP4 (block 32)"


def _modelopt(quant):
    algo = str(quant.get("quant_algo", "")).upper()
    if algo == "FP8":
        return "fp8", "ModelOpt FP8"
    if algo == "NVFP4":
        return "nvfp4", "ModelOpt NVFP4 (block 16)"
    raise QuantizationError(f"quantization_config: ModelOpt quant_algo {algo!r} is not modelled (FP8, NVFP4)")


def _bitsandbytes(quant):
    if quant.get("load_in_4bit"):
        return "int4", f"bitsandbytes 4-bit ({quant.get('bnb_4bit_quant_type', 'fp4')})"
    if quant.get("load_in_8bit"):
        return "int8", "bitsandbytes 8-bit (LLM.int8)"
    raise QuantizationError("quantization_config: bitsandbytes config sets neither load_in_4bit nor load_in_8bit")


def _compressed_tensors(quant):
    groups = quant.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise QuantizationError("quantization_config: compressed-tensors needs 'config_groups'")
    group = next(iter(groups.values()))
    weights = group.get("weights") if isinstance(group, Mapping) else None
    if not isinstance(weights, Mapping):
        raise QuantizationError("quantization_config: compressed-tensors group has no 'weights'")
    bits, kind = _bits(weights, "num_bits"), str(weights.get("type", "int")).lower()
    activations = group.get("input_activations")
    act_bits = activations.get("num_bits") if isinstance(activations, Mapping) else None
    name = f"W{bits}A{act_bits or 16}"
    if kind == "float" and bits == 8:
        return "fp8", f"compressed-tensors FP8 {name}"
    if kind == "float" and bits == 4:
        return "nvfp4", f"compressed-tensors NVFP4 {name}"
    if kind == "int" and bits == 4 and not act_bits:
        return "int4", f"compressed-tensors {name}"
    if kind == "int" and bits == 8:
        return "int8", f"compressed-tensors INT8 {name}"
    raise QuantizationError(f"quantization_config: compressed-tensors {kind} {name} is not modelled")


IGNORE_KEYS = ("ignore", "modules_to_not_convert", "exclude_modules", "llm_int8_skip_modules")
UNQUANTIZED_PARTS = ("attention", "linear_attention", "dense_ffn", "shared_experts", "routed_experts")
_ALREADY_16BIT = re.compile(r"lm_head|embed|visual|vision|vit\b|mm_projector|multi_modal|mtp|router|\.gate$")
_LAYER = re.compile(r"layers\.(\d+)\.")


def _part(pattern: str) -> str | None:
    """Which part of the model an ignore pattern names (None: one that stays 16-bit anyway or unknown)."""
    pattern = pattern.removeprefix("re:").rstrip("$*")  # compressed-tensors regexes and glob stars
    if _ALREADY_16BIT.search(pattern) and "shared_expert" not in pattern and "experts" not in pattern:
        return None
    if "shared_expert" in pattern:
        return None if pattern.endswith("shared_expert_gate") else "shared_experts"
    if "experts" in pattern:
        return "routed_experts"
    if "linear_attn" in pattern:
        return "linear_attention"
    # attention and FFN projections first: Nemotron-H names every block "mixer" (mixer.q_proj, mixer.up_proj)
    if "attn" in pattern or "attention" in pattern or re.search(r"[qkvo]_proj", pattern):
        return "attention"
    if "mlp" in pattern or re.search(r"(gate|up|down)_proj", pattern):
        return "dense_ffn"
    if "mixer" in pattern or "mamba" in pattern:  # Mamba2's in_proj, conv1d, out_proj
        return "linear_attention"
    return None


def unquantized_modules(quant: Mapping[str, Any]) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """The parts of the model a quantized checkpoint keeps in 16 bits, each with the layer indices
    its patterns name (None: every layer); raises QuantizationError for a malformed list."""
    found: dict[str, set[int] | None] = {}
    for key in IGNORE_KEYS:
        patterns = quant.get(key)
        if patterns is None:
            continue
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise QuantizationError(f"quantization_config: field {key!r} must be a list of module names")
        for pattern in patterns:
            part = _part(pattern.lower())
            if part is None:
                continue
            layer = _LAYER.search(pattern)
            if layer is None or found.get(part, set()) is None:
                found[part] = None  # a pattern without a layer index matches that part in every layer
            else:
                found.setdefault(part, set()).add(int(layer.group(1)))  # type: ignore[union-attr]
    return tuple((part, None if found[part] is None else tuple(sorted(found[part]))) for part in found)


_READERS = {
    "nvfp4": lambda quant: ("nvfp4", "NVFP4 (block 16)"),
    "awq": _awq,
    "gptq": _gptq,
    "fp8": _fp8,
    "mxfp4": _mxfp4,
    "modelopt": _modelopt,
    "bitsandbytes": _bitsandbytes,
    "compressed-tensors": _compressed_tensors,
}
