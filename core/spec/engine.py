"""Serving-engine settings and our modelling assumptions, each named, range-checked and sourced.

Vendor figures live in the catalog; the fractions of them an engine achieves, and the engine's own
memory overheads, live here with their defaults and the reason for each (docs/model.md expands).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.spec import units
from core.spec.model import ModelSpec

TENSOR_PARALLEL = (1, 2, 4, 8)
"""The tensor-parallel degrees the planner and the advice try (one node of up to 8 GPUs)."""


@dataclass(frozen=True, kw_only=True)
class Parallelism:
    """How many GPUs one replica uses and how the model is split over them."""

    tp: int = 1
    pp: int = 1

    def __post_init__(self) -> None:
        for name in ("tp", "pp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
                raise ValueError(f"{name} must be an integer from 1 to 1024, got {value!r}")

    @property
    def num_gpus(self) -> int:
        return self.tp * self.pp


def tensor_split_error(model: ModelSpec, tp: int) -> str | None:
    """Why ``tp`` GPUs cannot split ``model`` tensor-parallel, or None when they can.

    tp must divide the attention heads; with standard attention tp and the KV heads must divide
    one another (KV heads are split over GPUs, or replicated whole when there are fewer than GPUs);
    MLA's latent KV is not split, so any divisor of the heads works.
    """
    if model.num_heads % tp:
        return f"tp ({tp}) must divide the number of attention heads ({model.num_heads}) of {model.name}"
    kv_heads = model.num_kv_heads
    if model.mla is None and kv_heads % tp and tp % kv_heads:
        return (
            f"tp ({tp}) and the {kv_heads} KV heads of {model.name} must divide one another "
            "(KV heads are split over GPUs or replicated whole)"
        )
    return None


def wider_tensor_parallel(model: ModelSpec, tp: int) -> tuple[int, ...]:
    """The degrees of :data:`TENSOR_PARALLEL` above ``tp`` that can split ``model``."""
    return tuple(n for n in TENSOR_PARALLEL if n > tp and tensor_split_error(model, n) is None)


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of datasheet peaks and fixed costs: assumptions, shown to the user.

    Defaults (sources in docs/model.md):
    - compute 0.5: prefill model-FLOPs utilization; Databricks' TTFT figures imply about 48 % of
      dense BF16 peak on an A100, analytic simulators calibrated on vLLM use 0.38-0.45.
    - bandwidth 0.75: decode model-bandwidth utilization; Databricks measured 55-60 % on 2-4 GPUs
      at batch 1 (it falls with TP), single-GPU vLLM decode reaches 65-80 %.
    - link 0.75: all-reduce bus bandwidth over one-direction link bandwidth (nccl-tests: about
      370 of 450 GB/s on H100 NVLink, 200-230 of 300 GB/s on A100, 20-25 of 32 GB/s on PCIe 4).
    - step_overhead_s 1 ms: scheduling, sampling and launches per engine step with CUDA graphs
      (simulators calibrated on vLLM use 0.5 ms plus 20 us per layer).
    - allreduce_latency_s 10 us: fixed cost of one small all-reduce (vLLM's custom all-reduce).
    """

    compute: float = 0.5
    bandwidth: float = 0.75
    link: float = 0.75
    step_overhead_s: float = 1.0 * units.MS
    per_sequence_overhead_s: float = 0.0
    """Host-side cost per scheduled sequence per step (scheduling, sampling, detokenizing) [s]."""
    request_overhead_s: float = 0.0
    """Time from a request's arrival until the engine schedules it: API server, tokenization [s]."""
    allreduce_latency_s: float = 10.0 * units.US

    def __post_init__(self) -> None:
        for name in ("compute", "bandwidth", "link"):
            value = getattr(self, name)
            if not 0.01 <= value <= 1.0:
                raise ValueError(f"efficiency {name} must be between 0.01 and 1, got {value!r}")
        if not 0 <= self.step_overhead_s <= 1.0:
            raise ValueError(f"step_overhead_s must be between 0 and 1 s, got {self.step_overhead_s!r}")
        if not 0 <= self.request_overhead_s <= 10.0:
            raise ValueError(f"request_overhead_s must be between 0 and 10 s, got {self.request_overhead_s!r}")
        if not 0 <= self.per_sequence_overhead_s <= 0.01:
            raise ValueError(
                f"per_sequence_overhead_s must be between 0 and 10 ms, got {self.per_sequence_overhead_s!r}"
            )
        if not 0 <= self.allreduce_latency_s <= 0.1:
            raise ValueError(f"allreduce_latency_s must be between 0 and 0.1 s, got {self.allreduce_latency_s!r}")


CLASS_EFFICIENCY: dict[str, Efficiency] = {
    # chosen 2026-11-30 by bench/fit_defaults.py on the fit half of data/validation (docs/accuracy.md):
    # the grid point with the lowest median error over TTFT, TPOT and output throughput
    "hbm": Efficiency(
        compute=0.7, bandwidth=0.7, per_sequence_overhead_s=200 * units.US, request_overhead_s=40 * units.MS
    ),
    "gddr": Efficiency(compute=0.7, bandwidth=0.9, per_sequence_overhead_s=0.0, request_overhead_s=40 * units.MS),
}
"""Defaults per GPU memory class; GPUs of no known class (custom ones) get Efficiency()."""
FALLBACK_EFFICIENCY = Efficiency()


def default_efficiency(memory_type: str) -> Efficiency:
    """The efficiency factors a GPU of this memory class ('hbm', 'gddr') gets unless set."""
    return CLASS_EFFICIENCY.get(memory_type) or FALLBACK_EFFICIENCY


LARGE_GPU_BYTES = 70 * units.GiB
"""vLLM picks larger scheduler defaults on GPUs with at least this much memory (except A100)."""


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """vLLM-style engine settings (names as vLLM's flags) and its memory overheads.

    Defaults follow vLLM (V1, OpenAI server; engine/arg_utils.py ``get_batch_defaults``):
    gpu_memory_utilization 0.9, block_size 16, and per GPU class max_num_batched_tokens /
    max_num_seqs of 8192 / 1024 on GPUs with >= 70 GiB other than the A100, else 2048 / 256
    (None below means "that default"). Memory overheads, from vLLM start-up logs (docs/model.md):
    - driver_reserved_bytes 470 MiB: nvidia-smi's total minus what CUDA reports as total
      (H100: 81559 MiB vs 79.19 GiB); vLLM multiplies the CUDA total by the utilization.
    - non_torch_bytes 0.25 GiB on one GPU, non_torch_bytes_tp 2.1 GiB per GPU with tp > 1
      (NCCL and custom all-reduce buffers): vLLM's "non-torch forward increase memory".
    - cuda_graph_bytes 0.9 GiB: vLLM >= 0.21 subtracts its CUDA-graph estimate from the budget
      (0.84 GiB for Llama-3.1-8B on an H100); set 0 to match older versions.
    """

    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    """None means the model's maximum context."""
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    block_size: int = 16
    driver_reserved_bytes: float = 470 * units.MiB
    non_torch_bytes: float = 0.25 * units.GiB
    non_torch_bytes_tp: float = 2.1 * units.GiB
    cuda_graph_bytes: float = 0.9 * units.GiB
    efficiency: Efficiency | None = None
    """None: the default for the GPU's memory class (default_efficiency)."""

    def __post_init__(self) -> None:
        if not 0.05 <= self.gpu_memory_utilization <= 1.0:
            raise ValueError(f"gpu_memory_utilization must be between 0.05 and 1, got {self.gpu_memory_utilization!r}")
        if self.max_num_batched_tokens is not None:
            _int_range("max_num_batched_tokens", self.max_num_batched_tokens, 1, 10_000_000)
        if self.max_num_seqs is not None:
            _int_range("max_num_seqs", self.max_num_seqs, 1, 1_000_000)
        _int_range("block_size", self.block_size, 1, 1024)
        if self.max_model_len is not None:
            _int_range("max_model_len", self.max_model_len, 1, 100_000_000)
        for name in ("driver_reserved_bytes", "non_torch_bytes", "non_torch_bytes_tp", "cuda_graph_bytes"):
            value = getattr(self, name)
            if not 0 <= value <= 64 * units.GiB:
                raise ValueError(f"{name} must be between 0 and 64 GiB, got {value!r}")

    def batch_limits(self, gpu_memory_bytes: float, gpu_name: str) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs): the set values or vLLM's default for the GPU."""
        large = gpu_memory_bytes >= LARGE_GPU_BYTES and "a100" not in gpu_name.lower()
        tokens, seqs = (8192, 1024) if large else (2048, 256)
        return self.max_num_batched_tokens or tokens, self.max_num_seqs or seqs


def _int_range(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
