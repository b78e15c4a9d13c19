"""Numeric formats: bytes per element and the tensor throughput each one computes with.

A :class:`Precision` is a value, so no formula anywhere holds a bare ``/ 8`` or ``* 2`` for a dtype.
Quantized weight formats carry their scale overhead in ``bits_per_element``:

- INT4 AWQ/GPTQ (W4A16), group size 128: 4 bits + one 16-bit scale and one 4-bit zero point per
  128 weights = 4 + (16 + 4) / 128 = 4.156 bits.
- MXFP4 (OCP Microscaling): 4-bit E2M1 + one 8-bit E8M0 scale per 32 = 4.25 bits.
- NVFP4: 4-bit E2M1 + one FP8 E4M3 scale per 16 = 4.5 bits (the per-tensor FP32 scale is negligible).

``compute`` names the tensor-core throughput the matmuls use (a key of the GPU's dense TFLOPS
table); ``compute_fallback`` is used when the GPU has no such unit (e.g. FP8 weights on an A100
run as weight-only kernels on FP16 tensor cores).

References: AWQ (arXiv:2306.00978), OCP Microscaling Formats spec v1.0 (2023),
NVIDIA "Introducing NVFP4" developer blog (2025).
"""

from __future__ import annotations

from dataclasses import dataclass

BITS_PER_BYTE = 8


@dataclass(frozen=True, kw_only=True)
class Precision:
    """A storage format for weights or KV cache."""

    name: str
    label: str
    bits_per_element: float
    compute: str
    compute_fallback: str = "fp16"
    quantized: bool = False
    """True when embeddings and LM head stay 16-bit (the format quantizes only linear layers)."""
    moe_experts_only: bool = False
    """On MoE models only the expert weights take this format, the rest stays 16-bit (as in
    gpt-oss's MXFP4 checkpoints, whose ``modules_to_not_convert`` lists attention and router)."""

    def __post_init__(self) -> None:
        if not self.bits_per_element > 0:
            raise ValueError(f"bits_per_element must be > 0, got {self.bits_per_element}")

    @property
    def bytes_per_element(self) -> float:
        """Storage size of one element [bytes], scale overhead included."""
        return self.bits_per_element / BITS_PER_BYTE


def _group_bits(value_bits: float, scale_bits: float, group: int, zero_bits: float = 0.0) -> float:
    """Bits per element of a group-quantized format: value + (scale + zero point) / group size."""
    return value_bits + (scale_bits + zero_bits) / group


WEIGHT_PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision(name="fp32", label="FP32", bits_per_element=32, compute="fp32"),
        Precision(name="fp16", label="FP16", bits_per_element=16, compute="fp16"),
        Precision(name="bf16", label="BF16", bits_per_element=16, compute="bf16"),
        Precision(name="fp8", label="FP8 (W8A8)", bits_per_element=8, compute="fp8", quantized=True),
        Precision(name="int8", label="INT8 (W8A8)", bits_per_element=8, compute="int8", quantized=True),
        Precision(
            name="int4",
            label="INT4 AWQ/GPTQ g128 (W4A16)",
            bits_per_element=_group_bits(4, scale_bits=16, group=128, zero_bits=4),
            compute="fp16",
            quantized=True,
        ),
        Precision(
            name="mxfp4",
            label="MXFP4 (block 32)",
            bits_per_element=_group_bits(4, scale_bits=8, group=32),
            compute="fp4",
            compute_fallback="bf16",
            quantized=True,
            moe_experts_only=True,
        ),
        Precision(
            name="nvfp4",
            label="NVFP4 (block 16)",
            bits_per_element=_group_bits(4, scale_bits=8, group=16),
            compute="fp4",
            compute_fallback="bf16",
            quantized=True,
        ),
    )
}

KV_PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision(name="fp32", label="FP32", bits_per_element=32, compute="fp32"),
        Precision(name="fp16", label="FP16", bits_per_element=16, compute="fp16"),
        Precision(name="bf16", label="BF16", bits_per_element=16, compute="bf16"),
        Precision(name="fp8", label="FP8 (E4M3/E5M2)", bits_per_element=8, compute="fp16"),
    )
}

ACTIVATION_PRECISION = WEIGHT_PRECISIONS["bf16"]
"""Activations, all-reduce messages and 16-bit leftovers of quantized checkpoints."""


def weight_precision(name: str) -> Precision:
    """Look up a weight format by name; raises ValueError listing the allowed names."""
    try:
        return WEIGHT_PRECISIONS[name.lower()]
    except KeyError:
        raise ValueError(
            f"weight dtype {name!r} is not supported; choose one of {', '.join(WEIGHT_PRECISIONS)}"
        ) from None


def kv_precision(name: str, weights: Precision) -> Precision:
    """Look up a KV-cache format; ``auto`` follows the model's compute dtype as vLLM does:
    fp32 or fp16 weights keep their type, every other format computes (and caches) in bf16."""
    key = name.lower()
    if key == "auto":
        return KV_PRECISIONS[weights.name if weights.name in ("fp32", "fp16") else "bf16"]
    try:
        return KV_PRECISIONS[key]
    except KeyError:
        allowed = ", ".join(["auto", *KV_PRECISIONS])
        raise ValueError(f"KV-cache dtype {name!r} is not supported; choose one of {allowed}") from None
