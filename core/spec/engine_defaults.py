"""Each engine's defaults when a flag is not set, by release: the memory fraction, the batch limits,
the KV block size and the CUDA-graph capture sizes (sources: each function's docstring; docs/model.md,
"Engine releases")."""

from __future__ import annotations

from core.spec import units
from core.spec.release import VLLM_BLOCK_64_FROM, Release

LARGE_GPU_BYTES = 70 * units.GiB
"""vLLM picks larger scheduler defaults on GPUs with at least this much memory (except A100 from 0.9)."""
HUGE_GPU_BYTES = 160 * units.GiB
"""From 0.28 vLLM gives GPUs of at least this much memory (B200 class) 16384 tokens per step."""

VLLM_UTILIZATION = ((0, 20, 0), 0.92, 0.90)
"""vLLM's default gpu_memory_utilization: 0.92 from 0.20.0 (vllm/config/cache.py), 0.90 before;
from 0.34.0 1.0 where the KV cache is sized from measured memory (:data:`VLLM_MEASURED_UTILIZATION`)."""
VLLM_MEASURED_UTILIZATION = 1.0
"""vLLM >= 0.34 on CUDA and ROCm: ``resolved_gpu_memory_utilization`` is 1.0 when the flag is unset
and the extensible KV cache is on (vllm/config/cache.py:494-501 in 0.34.0); 0.92 elsewhere."""
MEASURED_KV_VENDORS = ("nvidia", "amd")
"""GPU vendors on which vLLM >= 0.34 sizes the KV cache from measured memory: CUDA and ROCm only
(``current_platform.is_cuda_alike()``, vllm/config/vllm.py:3201 in 0.34.0)."""


def measures_kv_memory(release: Release, vendor: str) -> bool:
    """Whether the engine sizes the KV cache from memory measured after warm-up (vLLM >= 0.34 on
    CUDA and ROCm) rather than from a profiled estimate. vLLM also turns it off for
    kv_cache_memory_bytes, num_gpu_blocks_override, elastic EP and some KV connectors
    (vllm/config/vllm.py:3195-3254), none of which this tool sets."""
    return release.measures_kv_memory and vendor in MEASURED_KV_VENDORS


TRTLLM_FREE_FRACTION = 0.9
"""TensorRT-LLM's default kv_cache_free_gpu_memory_fraction (KvCacheConfig, C++ and Python)."""

SGLANG_TP_TABLE = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
"""SGLang 0.3 - 0.4.5 (server_args.py): the default fraction by tensor-parallel size (0.82 at tp 8 in 0.3.6)."""


def _sglang_reserved_048(gpu_mib: float, parallel: int) -> float:
    """Memory SGLang 0.4.8 - 0.5.2 keeps out of the pool [MiB], by GPU size bracket."""
    gib = 1024
    if gpu_mib < 35 * gib:
        return (2.8 + parallel / 10) * gib
    if gpu_mib < 90 * gib:
        return (9.5 + parallel / 2) * gib
    if gpu_mib < 160 * gib:
        return (12 + parallel / 2) * gib
    return 32 * gib


SGLANG_CHUNK_AND_GRAPHS = ((20, 2048, 8, 8), (35, 2048, 24, 80), (60, 4096, 32, 160), (160, 8192, 256, 512))
"""SGLang 0.5.3+: (below this many GiB, chunked_prefill_size, cuda_graph_max_bs at tp < 4, at tp >= 4);
larger GPUs take 16384 and 512."""


def sglang_defaults(gpu_mib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang 0.5.3+ picks for a GPU of ``gpu_mib`` MiB."""
    for below_gib, chunk, graphs_small_tp, graphs_large_tp in SGLANG_CHUNK_AND_GRAPHS:
        if gpu_mib < below_gib * 1024:
            return chunk, graphs_small_tp if tp < 4 else graphs_large_tp
    return 16384, 512


def sglang_default_fraction(release: Release, gpu_mib: float, tp: int, pp: int = 1, mla: bool = False) -> float:
    """SGLang's default mem_fraction_static for a GPU of ``gpu_mib`` MiB (nvidia-smi's total).

    0.3 - 0.4.5: by tp (SGLANG_TP_TABLE). 0.4.6 - 0.4.7: that table up to 80 GiB, above it
    (gpu - 13 GiB) / gpu. 0.4.8 - 0.5.2: (gpu - reserved) / gpu with reserved by size bracket.
    0.5.3+: reserved = 512 + 1.5 x max(chunk, 2048) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1024 MiB,
    at least 10 GiB on GPUs above 60 GiB; from 0.5.10 piecewise CUDA graphs add 464 MiB (1.5 GiB
    with MLA). Speculative decoding, dp-attention and vision towers adjust it further (not modelled).
    """
    parallel = tp * pp
    if not release.at_least((0, 4, 6)) or (not release.at_least((0, 4, 8)) and gpu_mib <= 81920):
        size = parallel if release.at_least((0, 4, 7)) else tp
        return next(f for at_least, f in SGLANG_TP_TABLE if size >= at_least)
    if not release.at_least((0, 4, 8)):
        return (gpu_mib - 13 * 1024) / gpu_mib
    if not release.at_least((0, 5, 3)):
        return round((gpu_mib - _sglang_reserved_048(gpu_mib, parallel)) / gpu_mib, 3)
    chunk, graphs = sglang_defaults(gpu_mib, tp)
    reserved = 512 + 1.5 * max(chunk, 2048) + 2 * graphs + parallel / 8 * 1024
    if release.at_least((0, 5, 10)):
        reserved += 1536 if mla else 464
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10240)
    return round((gpu_mib - reserved) / gpu_mib, 3)


def default_memory_fraction(
    release: Release, gpu_memory_bytes: float, tp: int, pp: int = 1, mla=False, vendor: str = "nvidia"
) -> float:
    """The engine's memory-fraction flag when it is not set (vLLM / SGLang / TensorRT-LLM), on a GPU
    of ``vendor`` (vLLM >= 0.34: 1.0 on CUDA and ROCm)."""
    if release.engine == "sglang":
        return sglang_default_fraction(release, gpu_memory_bytes / units.MiB, tp, pp, mla)
    if release.engine == "trtllm":
        return TRTLLM_FREE_FRACTION
    if measures_kv_memory(release, vendor):
        return VLLM_MEASURED_UTILIZATION
    since, newer, older = VLLM_UTILIZATION
    return newer if release.at_least(since) else older


def engine_batch_defaults(
    release: Release, gpu_memory_bytes: float, gpu_name: str, tp: int, max_model_len: int
) -> tuple[int, int]:
    """(max tokens per step, max running sequences) the engine uses when they are not set.

    SGLang 0.5.3+: chunked_prefill_size by GPU size (sglang_defaults), running requests bounded by
    the pool (taken as 1024 here). TensorRT-LLM: max_num_tokens 8192, max_batch_size 2048
    (BuildConfig, trtllm-serve). vLLM: :func:`vllm_batch_defaults`.
    """
    if release.engine == "sglang":
        chunk, _ = sglang_defaults(gpu_memory_bytes / units.MiB, tp)
        return chunk, 1024
    if release.engine == "trtllm":
        return 8192, 2048
    return vllm_batch_defaults(release, gpu_memory_bytes, gpu_name, max_model_len)


V0_LONG_CONTEXT = 32768
"""vLLM V0 turns chunked prefill on by itself above this max_model_len (EngineArgs.create_engine_config)."""


def vllm_batch_defaults(
    release: Release, gpu_memory_bytes: float, gpu_name: str, max_model_len: int
) -> tuple[int, int]:
    """vLLM's default (max_num_batched_tokens, max_num_seqs) for ``vllm serve``, by release.

    V0 (< 0.8): max(max_model_len, 2048) tokens and 256 sequences; above 32K context chunked
    prefill is on with 512 tokens (<= 0.6.4) or 2048 (0.6.5+). The profile run uses these tokens,
    so a V0 engine profiles a whole max_model_len prompt. V1 (engine/arg_utils.py): 0.8.0-0.8.3
    8192 / 1024 on GPUs named H100 or H200, else 2048 / 1024; 0.8.4 the same name test, else
    2048 / 256; 0.8.5 8192 / 1024 on GPUs of >= 70 GiB; 0.9-0.27 >= 70 GiB and not an A100;
    0.28+ 16384 / 1024 at >= 160 GiB, 8192 / 1024 at 70-160 GiB (not A100), else 2048 / 256.
    """
    name = gpu_name.lower()
    if not release.vllm_v1:
        if max_model_len > V0_LONG_CONTEXT:
            return (2048 if release.at_least((0, 6, 5)) else 512), 256
        return max(max_model_len, 2048), 256
    named = "h100" in name or "h200" in name
    if not release.at_least((0, 8, 4)):
        return (8192, 1024) if named else (2048, 1024)
    if not release.at_least((0, 8, 5)):
        return (8192, 1024) if named else (2048, 256)
    large = gpu_memory_bytes >= LARGE_GPU_BYTES and (not release.at_least((0, 9, 0)) or "a100" not in name)
    if release.at_least((0, 28, 0)) and gpu_memory_bytes >= HUGE_GPU_BYTES:
        return 16384, 1024
    return (8192, 1024) if large else (2048, 256)


def engine_block_tokens(release: Release, vendor: str = "nvidia", mla: bool = False) -> int:
    """Tokens per KV block: SGLang 1 (page_size), TensorRT-LLM 32 (64 before 0.19), vLLM 16, and
    from 0.34.0 64 (``CacheConfig.DEFAULT_BLOCK_SIZE``, vllm/config/cache.py:185) where the attention
    backend takes it (``_preferred_block_size_for_backends``, vllm/platforms/interface.py:709-757).
    Every NVIDIA backend this tool names takes 64 (FLASH_ATTN, TRITON_ATTN, TRITON_MLA and
    FLASH_ATTN_MLA multiples of 16, FLASHINFER, FLASHINFER_MLA 32/64, FLASHMLA 64); on AMD the
    default ROCM_ATTN keeps 16 (rocm_attn.py:167-172) and MLA runs TRITON_MLA (AITER off by default).
    Other vendors keep 16 (their plugins are not modelled)."""
    if release.engine == "sglang":
        return 1
    if release.engine == "trtllm":
        return 32 if release.at_least((0, 19, 0)) else 64
    if release.at_least(VLLM_BLOCK_64_FROM) and (vendor == "nvidia" or (vendor == "amd" and mla)):
        return 64
    return 16


VLLM_BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256)
"""The block sizes vLLM accepts (``BlockSize`` literal: 1-128 in vllm/config.py up to 0.10, with 256
in vllm/config/cache.py after); --block-size 7 is refused at start-up."""


def block_size_error(release: Release, block_size: int) -> str | None:
    """Why the engine refuses ``block_size`` tokens per KV block, or None. vLLM takes only
    :data:`VLLM_BLOCK_SIZES`; SGLang's page_size and TensorRT-LLM's tokens_per_block are checked
    for range (1-1024) only."""
    if isinstance(block_size, bool) or not isinstance(block_size, int) or not 1 <= block_size <= 1024:
        return f"block_size must be an integer from 1 to 1024, got {block_size!r}"
    if release.engine == "vllm" and block_size not in VLLM_BLOCK_SIZES:
        sizes = ", ".join(map(str, VLLM_BLOCK_SIZES))
        return f"block_size {block_size} is not one vLLM accepts ({sizes})"
    return None


def sized_max_model_len(longest_request: int, model_context: int) -> int:
    """The max_model_len this tool runs and prints when none is set [tokens]: the scenario's longest
    request (the Explorer's and ``estimate``'s prompt + answer, the Plan's and ``check``'s P95 prompt +
    P95 answer, ``simulate``'s longest lengths) rounded up to a power of two, at most the model's
    context. One rule for every page and command, so one scenario gives one launch command.

    Not the engine's own default: vLLM, SGLang and TensorRT-LLM take the model's context when the
    flag is absent (``Deployment.max_model_len``), which on a small GPU leaves no room for even one
    request of that length, and vLLM then refuses to start. 1800 -> 2048, 2560 -> 4096;
    a 40,960-token model asked for 40,000 gets 40,960.
    """
    if longest_request < 1:
        raise ValueError(f"the longest request must be at least 1 token, got {longest_request!r}")
    return min(1 << (int(longest_request) - 1).bit_length(), int(model_context))


VLLM_GRAPH_STRIDE_16_FROM = (0, 11, 1)
"""vLLM captures batch sizes 1, 2, 4, 8..248 step 8 and 256..ceiling step 16 from 0.11.1
(``_set_cudagraph_sizes``, vllm/config/vllm.py:862-887 in 0.11.1, :2590 in 0.33.0); before it 1, 2, 4 and
multiples of 8 up to the ceiling (vllm/config/__init__.py:551-613 and config/scheduler.py:222-227 in 0.11.0)."""
VLLM_GRAPH_TOKEN_CAP_FROM = (0, 24, 0)
"""vLLM also captures max_num_batched_tokens itself when that is the ceiling (vllm/config/vllm.py:2592-2597 in
0.33.0, "ensure max_num_tokens is captured"): read in 0.24.0 and 0.32-0.33, absent in 0.19.0; 0.20-0.23 were
not read and are taken without it. Only a token budget under 512 meets it."""
VLLM_GRAPH_1024_FROM = (0, 28, 0)
"""vLLM's graph ceiling is 1024 rather than 512 on data-centre Blackwell (compute capability 10.x) from
0.28.0 (``is_device_capability_family(100)``, vllm/config/vllm.py:1938 in 0.28.0, :2464 in 0.33.0; absent in 0.27.0)."""


def cuda_graph_sizes(release: Release, max_num_seqs: int, max_num_batched_tokens: int, gpu, tp: int) -> tuple:
    """The batch sizes (tokens per step) the engine captures CUDA graphs for, ascending; () where not
    modelled (vLLM V0, SGLang before 0.5.3, TensorRT-LLM). A step of up to the largest runs its graph,
    padded up to the next size; a larger step runs without graphs.

    vLLM V1: ceiling = min(2 x max_num_seqs, 512, or 1024 on compute capability 10.x from 0.28),
    at most max_num_batched_tokens (:data:`VLLM_GRAPH_STRIDE_16_FROM` for the sizes; speculative
    decoding's wider decode steps not modelled). SGLang 0.5.3+: 1, 2, 4, 8, 12, 16..256 step 8, 272..496
    step 16, 512.. step 32 up to cuda_graph_max_bs (:func:`sglang_defaults`; server_args.py
    ``_generate_cuda_graph_batch_sizes`` in 0.5.6)."""
    if release.engine == "sglang" and release.at_least((0, 5, 3)):
        _, ceiling = sglang_defaults(gpu.memory_bytes / units.MiB, tp)
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, ceiling + 1, 32)]
        return tuple(size for size in sizes if size <= ceiling)
    if not release.vllm_v1:
        return ()
    blackwell = (gpu.cuda_capability or 0) // 10 == 10 and release.at_least(VLLM_GRAPH_1024_FROM)
    ceiling = min(2 * max_num_seqs, 1024 if blackwell else 512, max_num_batched_tokens)
    if release.at_least(VLLM_GRAPH_STRIDE_16_FROM):
        sizes = [1, 2, 4, *range(8, min(ceiling + 1, 256), 8), *range(256, ceiling + 1, 16)]
    else:
        sizes = [1, 2, 4, *range(8, ceiling + 1, 8)]
    if release.at_least(VLLM_GRAPH_TOKEN_CAP_FROM) and max_num_batched_tokens == ceiling:
        sizes.append(ceiling)
    return tuple(sorted({size for size in sizes if size <= ceiling}))
