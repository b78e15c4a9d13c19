"""How each engine turns a GPU's memory into its KV-cache budget, by release.

    vLLM          budget = usable x gpu_memory_utilization - weights - activation peak - overhead
    SGLang        pool   = mem_fraction_static x (usable - context) - weights
    TensorRT-LLM  pool   = kv_cache_free_gpu_memory_fraction x (usable - weights - activation peak - overhead)

vLLM (``determine_available_memory``, V1 from 0.8; V0's ``determine_num_available_blocks`` has the
same form) charges everything to one fraction of the total. SGLang (``profile_max_num_token`` in
``model_runner.py``, 0.3 to 0.5.x) takes its fraction of the memory free after CUDA and NCCL
start-up and before the weights load, less the weights; activations and CUDA graphs live in the
part it leaves free and are not measured. TensorRT-LLM takes its fraction of what is free after the
weights and a profiled forward (PyTorch backend, ``_util.py`` ``KvCacheCreator``) or after the engine,
its activation memory and runtime buffers are loaded (C++ executor, ``calculateFreeMemBytes``).
SGLang's default fraction is a rule of the GPU's memory and the parallel size that changed four
times (:func:`core.spec.engine_defaults.sglang_default_fraction`). Sources and checks against logs: docs/model.md,
"Engine releases".
"""

from __future__ import annotations

from core.spec import units
from core.spec.release import Release

SGLANG_CONTEXT_BYTES = 0.9 * units.GiB
"""What the CUDA context and NCCL take before SGLang reads its baseline, per GPU: an RTX 3090 log
reports 22.76 GiB free of 23.69 GiB ("Load weight begin. avail mem")."""


def engine_kv_budget(release: Release, usable, fraction, weights, activations, overhead):
    """The engine's KV budget on one GPU [bytes] (module docstring); negative when nothing is left."""
    if release.engine == "sglang":
        return fraction * (usable - SGLANG_CONTEXT_BYTES) - weights
    if release.engine == "trtllm":
        return fraction * (usable - weights - activations - overhead)
    return usable * fraction - weights - activations - overhead


def engine_held_back(release: Release, usable, fraction, static, transient):
    """What the engine's fraction keeps out of its accounting [bytes], so that the parts add up to
    the GPU: vLLM usable x (1 - utilization); SGLang what is left of its (1 - fraction) share after
    the activation peak and overhead (``transient``), which live there; TensorRT-LLM (1 - fraction)
    of what is free after weights (``static``), peak and overhead (none when nothing is)."""
    if release.engine == "sglang":
        return max(usable - fraction * (usable - SGLANG_CONTEXT_BYTES) - transient, 0.0)
    if release.engine == "trtllm":
        return max((1 - fraction) * (usable - static - transient), 0.0)
    return usable * (1 - fraction)
