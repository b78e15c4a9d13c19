"""How each engine turns a GPU's memory into its KV-cache budget, by release.

    vLLM < 0.34   budget = usable x gpu_memory_utilization - weights - activation peak - overhead
    vLLM >= 0.34  budget = usable - max(usable x (1 - utilization), context + margin)
                           - weights - activation peak - overhead        (CUDA and ROCm)
    SGLang        pool   = mem_fraction_static x (usable - context) - weights
    TensorRT-LLM  pool   = kv_cache_free_gpu_memory_fraction x (usable - weights - activation peak - overhead)

vLLM (``determine_available_memory``, V1 from 0.8; V0's ``determine_num_available_blocks`` has the
same form) charges everything to one fraction of the total. SGLang (``profile_max_num_token`` in
``model_runner.py``, 0.3 to 0.5.x) takes its fraction of the memory free after CUDA and NCCL
start-up and before the weights load, less the weights; activations and CUDA graphs live in the
part it leaves free and are not measured. TensorRT-LLM takes its fraction of what is free after the
weights and a profiled forward (PyTorch backend, ``_util.py`` ``KvCacheCreator``) or after the engine,
its activation memory and runtime buffers are loaded (C++ executor, ``calculateFreeMemBytes``).
vLLM 0.34 measures instead of estimating (the extensible KV cache, on by default on CUDA and ROCm):
after warm-up and CUDA-graph capture, ``measure_kv_cache_bytes`` (vllm/v1/worker/extensible_kv_cache.py:
592-618 in 0.34.0) gives min(requested - non-KV used, free + committed - margin) - max(peak, torch
growth), requested = utilization x total (1.0 unset), margin = max(1 GiB, 0.75 x peak) (3 GiB floor on
ROCm, :64-65); what is free at the start is the total less the CUDA context (:data:`CUDA_CONTEXT_BYTES`).
Here non-KV used = weights + overhead (the graphs measured, not estimated: vLLM skips the estimate,
``profile_cudagraph_memory``, vllm/v1/worker/gpu/model_runner.py:1121-1125), peak = the activation
peak (the larger of the profile run's and the sizing warm-up's, :func:`core.memory.activations.
activation_peak_bytes` for both), and torch's reservation growth over a sizing step is taken as no
larger than the peak. The granule rounding of each committed segment (2 MiB per layer at most) is
not counted. Where the extensible cache is off (other platforms) vLLM 0.34 keeps 0.33's rule with
utilization 0.92. SGLang's default fraction is a rule of the GPU's memory and the parallel size that
changed four times (:func:`core.spec.engine_defaults.sglang_default_fraction`). Sources and checks
against logs: docs/model.md, "Engine releases".
"""

from __future__ import annotations

from core.spec import units
from core.spec.engine_defaults import measures_kv_memory
from core.spec.release import Release

SGLANG_CONTEXT_BYTES = 0.9 * units.GiB
"""What the CUDA context and NCCL take before SGLang reads its baseline, per GPU: an RTX 3090 log
reports 22.76 GiB free of 23.69 GiB ("Load weight begin. avail mem")."""


CUDA_CONTEXT_BYTES = 0.5 * units.GiB
"""What CUDA reports as total less what is free when vLLM takes its start-up snapshot, per GPU: the
CUDA context and what was set up before it. Two logs print both ("Free memory on device (X/Y GiB) on
startup"): 39.08 of 39.49 GiB on an A100-40GB (0.41), 78.57 of 79.18 GiB on an H100 (0.61). It
matters to vLLM >= 0.34's measured sizing only, which takes the KV cache out of what is free."""
MEASURED_MARGIN_FLOOR = {"amd": 3 * units.GiB}
"""vLLM >= 0.34's sizing margin floor by GPU vendor: 1 GiB, 3 GiB on ROCm (KV_CACHE_MARGIN_FLOOR_BYTES,
vllm/v1/worker/extensible_kv_cache.py:64 in 0.34.0); the margin is max(floor, 0.75 x peak)."""
MEASURED_MARGIN_DEFAULT_FLOOR = 1 * units.GiB
MEASURED_MARGIN_FRACTION = 0.75
"""KV_CACHE_MARGIN_FRACTION (vllm/v1/worker/extensible_kv_cache.py:65 in 0.34.0)."""

SIZING_RULES = ("vllm_estimated", "vllm_measured", "sglang", "trtllm")
"""How the KV budget was sized: vLLM from a profiled estimate (< 0.34, or off CUDA and ROCm), vLLM
from memory measured after warm-up (>= 0.34 on CUDA and ROCm), SGLang's and TensorRT-LLM's fractions."""


SIZING_TEXT = {
    "vllm_estimated": "from a profiled estimate: usable x utilization - weights - peak - overhead",
    "vllm_measured": "from memory measured after warm-up (extensible KV cache): "
    "usable - max(usable x (1 - utilization), CUDA context + margin) - weights - peak - overhead",
    "sglang": "mem_fraction_static x (usable - CUDA context) - weights",
    "trtllm": "kv_cache_free_gpu_memory_fraction x (usable - weights - peak - overhead)",
}
"""Each sizing rule in words, as the CLI prints it (the UI's words: data/messages/memory_release.toml)."""


def sizing_rule(release: Release, vendor: str = "nvidia") -> str:
    """Which of :data:`SIZING_RULES` the engine release applies on a GPU of ``vendor``."""
    if release.engine != "vllm":
        return release.engine
    return "vllm_measured" if measures_kv_memory(release, vendor) else "vllm_estimated"


def measured_margin(activations: float, vendor: str = "nvidia") -> float:
    """vLLM >= 0.34's margin below the device's free memory [bytes] = max(floor, 0.75 x peak)."""
    floor = MEASURED_MARGIN_FLOOR.get(vendor, MEASURED_MARGIN_DEFAULT_FLOOR)
    return max(floor, MEASURED_MARGIN_FRACTION * activations)


def engine_held_back(release: Release, usable, fraction, static, transient, activations=0.0, vendor="nvidia"):
    """What the engine keeps out of its accounting [bytes], so that the parts add up to the GPU:
    vLLM < 0.34 usable x (1 - utilization); vLLM >= 0.34 on CUDA and ROCm the larger of that and the
    CUDA context plus the margin on the ``activations`` peak; SGLang what is left of its
    (1 - fraction) share after the activation peak and overhead (``transient``), which live there;
    TensorRT-LLM (1 - fraction) of what is free after weights (``static``), peak and overhead (none
    when nothing is)."""
    if release.engine == "sglang":
        return max(usable - fraction * (usable - SGLANG_CONTEXT_BYTES) - transient, 0.0)
    if release.engine == "trtllm":
        return max((1 - fraction) * (usable - static - transient), 0.0)
    if measures_kv_memory(release, vendor):
        return max(usable * (1 - fraction), CUDA_CONTEXT_BYTES + measured_margin(activations, vendor))
    return usable * (1 - fraction)


def engine_kv_budget(release: Release, usable, fraction, weights, activations, overhead, vendor="nvidia"):
    """The engine's KV budget on one GPU [bytes] (module docstring); negative when nothing is left.
    vLLM >= 0.34 on CUDA and ROCm: min(u x usable - N, usable - context - N - margin) - peak with
    N = weights + overhead, written as usable - held back - N - peak."""
    if release.engine == "sglang":
        return fraction * (usable - SGLANG_CONTEXT_BYTES) - weights
    if release.engine == "trtllm":
        return fraction * (usable - weights - activations - overhead)
    if measures_kv_memory(release, vendor):
        held = engine_held_back(release, usable, fraction, weights, activations + overhead, activations, vendor)
        return usable - held - weights - activations - overhead
    return usable * fraction - weights - activations - overhead
