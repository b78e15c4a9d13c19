"""What vLLM runs on which NVIDIA GPU: each weight format's minimum compute capability, where it
runs as a weight-only kernel at 16-bit compute, bfloat16 on GPUs without it, and the attention
backend it picks, which decides where an FP8 KV cache runs (:func:`attention_backend`).

Read from vLLM's source in the released wheels, v0.14.0 to v0.33.0 (the newest on PyPI on
2026-12-01); paths under ``vllm/model_executor/layers/quantization/``. Each rule is the
``get_min_capability()`` of the method's config class, which ``vllm/config`` enforces at start-up
("... is not supported for the current GPU. Minimum capability: ..."):

- fp8 (``fp8.py`` ``Fp8Config``): 7.5 from v0.14.0 (8.0 from v0.5.1, 8.9 in v0.5.0). Below 8.9 it
  runs FP8 Marlin, weight-only W8A16 (``use_marlin = not has_device_capability(89)``); real W8A8
  FP8 GEMMs need 8.9 (CUTLASS ``scaled_mm``: 8.9 with CUDA 12.4, 9.0 with CUDA 12.0).
- mxfp4 (``mxfp4.py``): 8.0 in every release that has it (v0.10.1 on); Marlin on Ampere, Triton
  or FlashInfer kernels from 9.0, all with 16-bit activations by default in v0.11.0 (on 10.0
  ``SM100_FI_MXFP4_BF16`` unless an environment variable asks for MXFP8 activations); v0.33.0
  picks from a priority list not traced here. Timed as weight-only at 16-bit compute everywhere.
- nvfp4 (``modelopt.py`` ``ModelOptNvFp4Config``): 7.5 from v0.14.0 (8.0 from v0.9.0, 10.0 in
  v0.8.5). Native FP4 GEMMs from 10.0 (``nvfp4_scaled_mm``: capability >= 100, CUDA 12.8), FP4
  Marlin, weight-only, below.
- int8 W8A8 (compressed-tensors ``CompressedTensorsW8A8Int8``): 7.5 (v0.6.3 to v0.33.0).
- int4 W4A16: GPTQ 6.0, AWQ 7.5, their Marlin kernels 7.5 from v0.14.0 (8.0 before).
- bf16 below 8.0: with ``--dtype auto`` vLLM falls back to float16 and warns "Your device ...
  doesn't support torch.bfloat16. Falling back to torch.float16 for compatibility" (v0.9.0 on);
  an explicit ``--dtype bfloat16`` is refused ("Bfloat16 is only supported on GPUs with compute
  capability of at least 8.0").

AMD GPUs (ROCm) and GPUs whose capability the catalog lacks are not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.precision import KV_PRECISIONS, Precision, kv_precision

RELEASES = "vLLM 0.14.0-0.33.0"
BF16_MIN_CAPABILITY = 80  # vllm/platforms/cuda.py: bfloat16 needs compute capability 8.0


@dataclass(frozen=True)
class FormatRule:
    """Where vLLM runs one weight format (capabilities as vLLM compares them: 8.9 -> 89)."""

    min_capability: int
    native_from: int | None
    """From this capability the format's own GEMMs; below it (from the minimum) a weight-only
    kernel at 16-bit compute. None: weight-only on every GPU."""
    method: str
    """The quantization config (and class) whose ``get_min_capability()`` states the minimum."""


FORMAT_RULES = {
    "fp8": FormatRule(min_capability=75, native_from=89, method="fp8 (Fp8Config)"),
    "mxfp4": FormatRule(min_capability=80, native_from=None, method="mxfp4 (Mxfp4Config)"),
    "nvfp4": FormatRule(min_capability=75, native_from=100, method="modelopt NVFP4 (ModelOptNvFp4Config)"),
    "int8": FormatRule(min_capability=75, native_from=75, method="compressed-tensors W8A8 INT8"),
    "int4": FormatRule(min_capability=60, native_from=60, method="gptq (GPTQConfig); AWQ checkpoints need 7.5"),
}


def _capability(value: int) -> str:
    return f"{value // 10}.{value % 10}"


def weights_problem(gpu: GpuSpec, weights: Precision) -> str | None:
    """Why vLLM refuses ``weights`` on ``gpu``, or None when it runs them (or cannot be checked).

    bf16 is not refused: vLLM serves a bf16 checkpoint in float16 below 8.0 (:func:`serving_dtype`).
    """
    cap = gpu.cuda_capability
    rule = FORMAT_RULES.get(weights.name)
    if cap is None or rule is None or cap >= rule.min_capability:
        return None
    return (
        f"{RELEASES} refuses {weights.label} weights on {gpu.name} (compute capability "
        f"{gpu.compute_capability}): {rule.method} needs at least {_capability(rule.min_capability)}"
    )


def weight_only(gpu: GpuSpec, weights: Precision) -> bool:
    """Whether ``weights`` run as a weight-only kernel at 16-bit compute on ``gpu`` (FP8 Marlin below
    8.9, FP4 Marlin below 10.0, MXFP4 everywhere)."""
    cap = gpu.cuda_capability
    rule = FORMAT_RULES.get(weights.name)
    return cap is not None and rule is not None and (rule.native_from is None or cap < rule.native_from)


def matmul_peak(gpu: GpuSpec, weights: Precision) -> tuple[float, str]:
    """Dense peak the matmuls of ``weights`` run at on ``gpu`` [FLOP/s] and the compute type: the
    format's own tensor cores, or the 16-bit fallback for a weight-only kernel or a GPU without them."""
    if weight_only(gpu, weights):
        return gpu.flops_for(KV_PRECISIONS[weights.compute_fallback])
    return gpu.flops_for(weights)


def serving_dtype(gpu: GpuSpec, weights: Precision) -> Precision | None:
    """The 16-bit format vLLM computes (and caches KV) in instead of bf16 on ``gpu``: float16 below
    8.0, where it casts a bf16 checkpoint; None when bf16 runs as it is."""
    cap = gpu.cuda_capability
    computes_bf16 = weights.name not in ("fp32", "fp16")
    if cap is not None and cap < BF16_MIN_CAPABILITY and computes_bf16:
        return KV_PRECISIONS["fp16"]
    return None


def kv_for(name: str, weights: Precision, gpu: GpuSpec) -> Precision:
    """The KV-cache format for ``--kv-cache-dtype name`` on ``gpu``: ``auto`` follows the dtype vLLM
    computes in there (float16 where it casts bf16, :func:`serving_dtype`)."""
    if name.lower() == "auto" and (cast := serving_dtype(gpu, weights)) is not None:
        return cast
    return kv_precision(name, weights)


# Attention backends, read from vLLM 0.33.0's wheel (vllm/platforms/cuda.py _get_backend_priorities;
# each backend's supports_compute_capability and supports_kv_cache_dtype under vllm/v1/attention/
# backends/; 0.11.0 compared): the first backend in the priority list that accepts the GPU wins.
ATTENTION_RELEASE = "vLLM 0.33.0"
FLASH_ATTN_MIN = 80  # flash_attn.py: capability >= 8.0 (FA2; FA3 on 9.x, FA4 on 10.x)
FP8_TRITON_MIN = 89  # TritonAttentionImpl / TRITON_MLA: "native FP8 (fp8e4nv) requires SM89+"


def attention_backend(gpu: GpuSpec, model: ModelSpec, kv: Precision | None = None) -> str | None:
    """The attention backend vLLM 0.33 picks by default on ``gpu`` for ``model`` (None: not an
    NVIDIA GPU the catalog has a capability for).

    Standard attention: TRITON_ATTN below 8.0 (FLEX_ATTENTION in 0.11), FLASH_ATTN (FA2) on 8.x and
    12.x, FLASH_ATTN (FA3) on 9.x, FLASHINFER on 10.x. MLA: FLASHINFER_MLA on 10.x, FLASH_ATTN_MLA
    on 9.x, TRITON_MLA elsewhere. An FP8 ``kv`` moves to the first backend that takes it: FA2 and
    FLASH_ATTN_MLA have no FP8 KV, so 8.x and 12.x use FLASHINFER and MLA on 9.x FLASHMLA.
    """
    fp8 = kv is not None and kv.name == "fp8"
    cap = gpu.cuda_capability
    if cap is None:
        return None
    major = cap // 10
    if model.indexer is not None:  # DeepSeek sparse attention: sparse MLA kernels only
        return {9: "FLASHMLA_SPARSE", 10: "FLASHMLA_SPARSE", 12: "FLASHINFER_MLA_SPARSE"}.get(major)
    if model.mla is not None:
        return {10: "FLASHINFER_MLA", 9: "FLASHMLA" if fp8 else "FLASH_ATTN_MLA"}.get(major, "TRITON_MLA")
    if cap < FLASH_ATTN_MIN:
        return "TRITON_ATTN"
    return {9: "FLASH_ATTN (FA3)", 10: "FLASHINFER"}.get(major, "FLASHINFER" if fp8 else "FLASH_ATTN (FA2)")


SPARSE_MLA_MAJORS = (9, 10, 12)  # FLASHMLA_SPARSE 9.x/10.x, FLASHINFER_MLA_SPARSE 10.x and 12.x


def attention_problem(gpu: GpuSpec, model: ModelSpec) -> str | None:
    """Why vLLM 0.33 has no attention backend for ``model`` on ``gpu``, or None: DeepSeek sparse
    attention (V3.2, GLM-5) runs only on the sparse MLA backends, which need 9.x, 10.x or 12.x."""
    cap = gpu.cuda_capability
    if cap is None or model.indexer is None or cap // 10 in SPARSE_MLA_MAJORS:
        return None
    return (
        f"{ATTENTION_RELEASE} has no attention backend for {model.name}'s sparse attention on {gpu.name} "
        f"(compute capability {gpu.compute_capability}): FLASHMLA_SPARSE needs 9.x or 10.x, "
        "FLASHINFER_MLA_SPARSE 10.x or 12.x"
    )


def kv_problem(gpu: GpuSpec, kv: Precision, model: ModelSpec) -> str | None:
    """Why vLLM refuses an FP8 KV cache for ``model`` on ``gpu``, or None.

    Standard attention below 8.0 lands on TRITON_ATTN, which refuses FP8 KV below 8.9 (0.11's
    FLEX_ATTENTION refused any quantized KV); from 8.0 FLASHINFER takes FP8 KV. MLA on 8.0-8.8 (and
    below) lands on TRITON_MLA, which refuses it likewise; 9.x (FLASHMLA), 10.x and 12.x run it.
    """
    cap = gpu.cuda_capability
    if cap is None or kv.name != "fp8":
        return None
    if model.indexer is not None:
        return None  # the sparse MLA backends take FP8 (fp8_ds_mla) wherever they run
    floor = FP8_TRITON_MIN if model.mla is not None else FLASH_ATTN_MIN
    if cap >= floor:
        return None
    backend = attention_backend(gpu, model)
    return (
        f"{ATTENTION_RELEASE} refuses an FP8 KV cache on {gpu.name} (compute capability "
        f"{gpu.compute_capability}): its {backend} backend needs 8.9 for native FP8 (fp8e4nv)"
    )


def mxfp4_moe_alignment(gpu: GpuSpec) -> tuple[int, int]:
    """(hidden, intermediate-per-GPU) multiples vLLM pads an MXFP4 MoE's expert weights to, by the
    kernel it picks on ``gpu`` (``mxfp4_round_up_hidden_size_and_intermediate_size``, 0.33.0; the
    same values in 0.11.0's ``Mxfp4MoEMethod.create_weights``): Marlin on 8.x pads (256, 128),
    FlashInfer/TRT-LLM on 10.x (256, 256 in 0.11; 256, 128 in 0.33), ROCm (256, 256), the Triton
    kernels of 9.x only the intermediate size to 64. (1, 1): no padding known (no capability)."""
    if gpu.vendor == "amd":
        return 256, 256
    cap = gpu.cuda_capability
    if cap is None:
        return 1, 1
    if cap // 10 == 9:
        return 1, 64
    return 256, 128  # Marlin below 9.0, FlashInfer / TRT-LLM on 10.x
