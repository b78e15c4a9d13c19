"""Which serving engine and which release the numbers are for, and the rules that change with it.

Engines change their memory accounting and their host-side costs from release to release; each
rule below names the release range it holds for and the source it was read from (docs/model.md,
"Engine releases"). A release is parsed loosely from what people write ("0.6.4.dev9+g5d264f4a",
"v0.19.1rc1", "~0.7 (2025-02)") down to (major, minor, patch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.spec import units

ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
"""Engine ids as the CLI and the URL spell them, and their display names."""
ALIASES = {"tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm", "trt-llm": "trtllm", "sgl": "sglang"}
CURRENT = {"vllm": "0.33.0", "sglang": "0.5.7", "trtllm": "1.2.0"}
"""The release of each engine the numbers are for when none is given: the newest whose rules were
read and checked against start-up logs (data/validation)."""
NEWEST = {"vllm": "0.34.0", "sglang": "0.5.7", "trtllm": "1.2.0"}
"""The newest release of each engine whose rules were read. vLLM's later minor releases are refused
(:func:`parse_release`; a patch release of the newest keeps its rules and is named in the estimate's
warnings): 0.34.0 sized the KV cache by a new rule and changed the default block size (docs/model.md,
"Engine releases"), so a later one may again, and taking an older release's rule for it would give its
numbers in silence. SGLang and TensorRT-LLM releases after theirs are accepted and named as such in the
estimate's warnings (their rules were not re-read for each release)."""
REFUSED_AFTER_NEWEST = ("vllm",)
"""Engines whose releases after :data:`NEWEST` are refused rather than named."""
OLDEST = {"vllm": (0, 5, 0), "sglang": (0, 3, 0), "trtllm": (0, 14, 0)}
"""The oldest release each engine's rules go back to; older ones are refused with the reason."""

VLLM_V1_DEFAULT_FROM = (0, 8, 0)
"""vLLM's V1 engine is the default from 0.8.0 (VLLM_USE_V1 defaults to "1"; V0 removed in 0.11.0)."""
VLLM_MEASURED_KV_FROM = (0, 34, 0)
"""vLLM sizes the KV cache from the memory measured after warm-up and CUDA-graph capture on CUDA and
ROCm from 0.34.0: the extensible KV cache is on by default there (``_resolve_extensible_kv_cache``,
vllm/config/vllm.py:3180-3270 in 0.34.0; the file v1/worker/extensible_kv_cache.py is absent in
0.33.0), and gpu_memory_utilization defaults to 1.0 with it (``resolved_gpu_memory_utilization``,
vllm/config/cache.py:494-501). The rule: :mod:`core.memory.accounting`."""
VLLM_BLOCK_64_FROM = (0, 34, 0)
"""vLLM's default KV block size is 64 tokens from 0.34.0 (``CacheConfig.DEFAULT_BLOCK_SIZE``,
vllm/config/cache.py:185; 16 in 0.33.0) where the attention backend takes it
(:func:`core.spec.engine_defaults.engine_block_tokens`)."""
VLLM_GRAPHS_CHARGED_FROM = (0, 20, 0)
"""vLLM subtracts its CUDA-graph memory estimate from the KV budget from 0.20.0, when
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS became 1 by default (0.18-0.19 computed it behind the
flag; its log line says 0.21, the 0.20.0 wheel already defaults to it). Before, graphs were
captured after the KV cache was sized and lived in the (1 - utilization) headroom."""
VLLM_KV_TOKENS_FROM_CONCURRENCY = (0, 20, 1)
"""vLLM logs "GPU KV cache size: N tokens" as int(max concurrency x max_model_len) from 0.20.1
(``update_kv_cache_capacity`` / ``get_kv_cache_capacity``, vllm/v1/core/kv_cache_utils.py:1061-1150 in
0.33.0; upstream vllm-project/vllm#40691, #40694, #38364); through 0.20.0 it logged
num_blocks // groups x block (0.11.0 kv_cache_utils.py:1080, 0.19.0 :1301-1306, 0.20.0 the same)."""
VLLM_HYBRID_PREFIX_CACHING_FROM = (0, 26, 0)
"""Hybrid (attention + Mamba / Gated DeltaNet) models keep prefix caching on by default from 0.26.0
("Generative hybrid models support prefix caching.", vllm/config/model.py:2239-2291 in 0.33.0; 0.25.1
and earlier turn it off for hybrids), which sets mamba_cache_mode 'align'
(model_executor/models/config.py); a state group then reserves 2 pages per request, not 1
(``MambaSpec.max_memory_usage_bytes``, v1/kv_cache_interface.py:1135-1141 in 0.33.0, :296-300 in 0.19.0).
0.26-0.29 put Mamba2-family models (nemotron-h, granite-4 hybrids, falcon-h1, jamba, zamba2) in 'all'
mode instead (a page per block of tokens; not modelled); from 0.30.0 every hybrid goes to 'align'."""
VLLM_MAMBA_ALIGN_ALL_FROM = (0, 30, 0)
"""From 0.30.0 prefix caching puts every hybrid in mamba_cache_mode 'align'
(model_executor/models/config.py:622-630 in 0.30.0; 0.26.0 :560-562 chose 'all' where the model supports it)."""
VLLM_MAMBA_CHECKPOINT_FROM = (0, 33, 0)
"""From 0.33.0 a Mamba2 layer (mamba_mixer2.py:1109-1117), and a Gated DeltaNet layer whose prefill runs
on FlashInfer (SM90: qwen_gdn_linear_attn.py:249, 736-760), reserves one more state page per request for
the prefill checkpoint (kv_cache_interface.py:1135-1141), and in align mode the block is a multiple of
the layers' checkpoint alignment (platforms/interface.py:1089-1100), 64 tokens for FlashInfer GDN
(v1/attention/backends/gdn_attn.py:34). Absent in 0.30.0 and 0.32.0."""

CHAT_OFF_LOOP_FROM = {"vllm": (0, 19, 0), "sglang": (0, 5, 22)}
"""The first release whose OpenAI-compatible server renders chat templates off its event loop, read in
the release wheels: vLLM 0.19.0 awaits the template through a shared executor (renderers/base.py:85-105,
renderers/hf.py:618-620; vllm-project/vllm#34789; 0.18.1 still calls safe_apply_chat_template in the
handler, and 0.11.0's ``_preprocess_chat``, entrypoints/openai/serving_engine.py:791-796, does too);
SGLang 0.5.22 runs ``_convert_to_internal_request`` in the loop's executor (serving_base.py:92-97; 0.4.0
to 0.5.21 call it, and ``apply_chat_template``, in the async handler). TensorRT-LLM's ``trtllm-serve``
renders in ``openai_chat`` on the loop through 1.2 (the change, NVIDIA/TensorRT-LLM#15284, is in no
release): absent here, so every release of it renders on the loop."""

VLLM_ASYNC_SCHEDULING_FROM = (0, 14, 0)
"""vLLM schedules asynchronously by default from 0.14.0 (vllm-project/vllm#27614), read in the release
wheels: ``SchedulerConfig.async_scheduling`` is ``bool = False`` through 0.13.0 (vllm/config/scheduler.py:138
in 0.11.0, :131 in 0.12.0, :133 in 0.13.0; EngineArgs takes that default, engine/arg_utils.py:563 in 0.13.0,
so VllmConfig's ``async_scheduling is None`` branch, config/vllm.py:571-592 in 0.13.0, is never reached
without a flag) and ``Field(default=None)`` from 0.14.0 (scheduler.py:133), which VllmConfig turns into
True (config/vllm.py:588-628) unless pipeline parallelism, a non-EAGLE speculative method or the Ray
executor is set. Before it the V1 engine core schedules the next step and handles the last step's
outputs while the GPU waits, unless ``--async-scheduling`` is given."""

HOST_COST_PER_SEQUENCE_S = {"sync": 5.0 * units.US, "async": 2.5 * units.US}
"""Host work per scheduled sequence per step that the GPU waits for [s].

- ``async``: engines that prepare the next step while the GPU runs: vLLM V1 from
  :data:`VLLM_ASYNC_SCHEDULING_FROM`, SGLang (overlap scheduler, 0.4+), TensorRT-LLM's C++ executor.
  What remains is the output update, about 1.1 us per sequence at batch 256 in vLLM's own
  micro-benchmark (vllm-project/vllm#46112, 0.287 ms), taken twice for scheduling and output handling.
- ``sync``: vLLM V1 0.8 to 0.13 (async scheduling off by default): scheduling and output handling run
  between steps. GPUStack's gpt-oss-20b on one H100 at about 1000 streams: median ITL 31.9 ms without
  and 27.0 ms with ``--async-scheduling``, 4.9 ms / 1000 = about 5 us per sequence exposed.

vLLM V0 ran all of its Python between steps: Efficiency.v0_per_sequence_s (fitted)."""


@dataclass(frozen=True)
class Release:
    """An engine and a release of it."""

    engine: str
    version: tuple[int, int, int]

    @property
    def number(self) -> str:
        """The release as written, e.g. "0.33.0"."""
        return ".".join(str(v) for v in self.version)

    @property
    def name(self) -> str:
        return f"{ENGINES[self.engine]} {self.number}"

    def at_least(self, version: tuple[int, int, int]) -> bool:
        return self.version >= version

    @property
    def vllm_v1(self) -> bool:
        """vLLM's V1 engine (the default from 0.8.0)."""
        return self.engine == "vllm" and self.at_least(VLLM_V1_DEFAULT_FROM)

    @property
    def renders_chat_on_loop(self) -> bool:
        """Whether the OpenAI-compatible server renders a chat request's template synchronously on its
        one event loop (:attr:`core.spec.efficiency.Efficiency.chat_ingest_s`): every release before
        :data:`CHAT_OFF_LOOP_FROM` (docs/model.md, "Front end")."""
        off = CHAT_OFF_LOOP_FROM.get(self.engine)
        return off is None or not self.at_least(off)

    @property
    def charges_cuda_graphs(self) -> bool:
        """Whether the engine takes its CUDA-graph memory out of the KV budget (vLLM >= 0.20)."""
        return self.engine == "vllm" and self.at_least(VLLM_GRAPHS_CHARGED_FROM)

    @property
    def measures_kv_memory(self) -> bool:
        """Whether vLLM sizes its KV cache from measured memory on CUDA and ROCm (vLLM >= 0.34)."""
        return self.engine == "vllm" and self.at_least(VLLM_MEASURED_KV_FROM)

    @property
    def schedules_async(self) -> bool:
        """Whether the engine prepares the next step while the GPU runs by default: SGLang's overlap
        scheduler, TensorRT-LLM's executor, vLLM from :data:`VLLM_ASYNC_SCHEDULING_FROM`."""
        return self.engine != "vllm" or self.at_least(VLLM_ASYNC_SCHEDULING_FROM)

    @property
    def host_cost_per_sequence_s(self) -> float:
        """Host work per scheduled sequence per step the GPU waits for in a V1-style engine [s]
        (HOST_COST_PER_SEQUENCE_S by :attr:`schedules_async`; vLLM V0's is Efficiency.v0_per_sequence_s)."""
        return HOST_COST_PER_SEQUENCE_S["async" if self.schedules_async else "sync"]


VERSION = re.compile(r"^[~v\s]*(\d+)\.(\d+)(?:\.(\d+))?")


def engine_id(text: str) -> str:
    """'vllm', 'sglang' or 'trtllm' from what people write; ValueError naming the choices otherwise."""
    key = (text or "").strip().lower()
    key = ALIASES.get(key, key)
    if key not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {text!r}")
    return key


def parse_release(engine: str, version: str | None = None) -> Release:
    """The release ``version`` of ``engine`` (its current one when empty); ValueError when the text
    holds no version, the release is older than the rules go back, or it is a vLLM release after the
    newest whose rules were read (:data:`NEWEST`)."""
    key = engine_id(engine)
    text = (version or "").strip() or CURRENT[key]
    match = VERSION.search(text)
    if match is None:
        raise ValueError(f"engine version must look like 0.19.1, got {text!r}")
    parsed = tuple(int(part or 0) for part in match.groups())
    oldest = OLDEST[key]
    if parsed < oldest:
        raise ValueError(
            f"{ENGINES[key]} {text} is older than the oldest release this tool models ({'.'.join(map(str, oldest))})"
        )
    newest = newest_release(key)
    # a patch release of the newest (0.34.1) fixes bugs and keeps its rules: taken, and named by the estimate's
    # warnings; a later minor release (0.35.0) may change them as 0.34.0 did
    if key in REFUSED_AFTER_NEWEST and parsed[:2] > newest.version[:2]:
        later = f"{newest.version[0]}.{newest.version[1]}.x"
        raise ValueError(
            f"engine version {text!r}: {ENGINES[key]} releases after {later} are not modelled "
            f"(a release can change how the KV cache is sized, as {newest.number} did); give {later} or older"
        )
    return Release(engine=key, version=parsed)  # type: ignore[arg-type]


def current_release(engine: str = "vllm") -> Release:
    """The release the numbers are for when none is given (:data:`CURRENT`)."""
    return parse_release(engine)


def newest_release(engine: str = "vllm") -> Release:
    """The newest release of ``engine`` whose rules were read (:data:`NEWEST`)."""
    key = engine_id(engine)
    parts = tuple(int(p) for p in NEWEST[key].split("."))
    return Release(engine=key, version=parts)  # type: ignore[arg-type]
