"""Serving-engine settings and our modelling assumptions, each named, range-checked and sourced.

Vendor figures live in the catalog; the fractions of them an engine achieves, and the engine's own
memory overheads, live here with their defaults and the reason for each (docs/model.md expands).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.spec import engine_defaults, units
from core.spec.efficiency import ENDPOINTS, Efficiency
from core.spec.engine_defaults import default_memory_fraction, engine_batch_defaults, engine_block_tokens
from core.spec.model import ModelSpec
from core.spec.release import Release, current_release

TENSOR_PARALLEL = (1, 2, 4, 8)
"""The tensor-parallel degrees the planner and the advice try (one node of up to 8 GPUs)."""


@dataclass(frozen=True, kw_only=True)
class Parallelism:
    """How many GPUs one replica uses and how the model is split over them: tp x pp per rank, and
    with dp > 1 (MoE only) dp data-parallel attention ranks, each with its own requests and KV
    cache, over which the routed experts are split whole (EP = tp x dp): vLLM's
    ``--data-parallel-size --enable-expert-parallel``, SGLang's ``--dp --enable-dp-attention``,
    TensorRT-LLM's ``enable_attention_dp`` (releases and sources: docs/model.md)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "dp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
                raise ValueError(f"{name} must be an integer from 1 to 1024, got {value!r}")

    @property
    def num_gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def expert_parallel(self) -> int:
        """GPUs the routed experts are split over whole: tp x dp with dp > 1, else 1 (tensor-split)."""
        return self.tp * self.dp if self.dp > 1 else 1

    def rank_sequences(self, sequences):
        """Sequences the busiest rank runs of the replica's B (array-friendly) = max(B / dp, min(B, 1))
        (a request is not split: below dp requests one rank runs one); B itself with dp = 1."""
        if self.dp == 1:
            return sequences
        b = np.asarray(sequences, dtype=float)
        return np.maximum(b / self.dp, np.minimum(b, 1.0))

    def data_parallel_error(self, model: ModelSpec) -> str | None:
        """Why ``model`` cannot take this layout's data-parallel attention, or None (dp = 1: None)."""
        if self.dp > 1 and model.moe is None:
            return (
                f"dp ({self.dp}) > 1 is data-parallel attention with the routed experts split over tp x dp "
                f"GPUs; {model.name} has no routed experts (run {self.dp} replicas instead)"
            )
        if self.dp > 1 and self.expert_parallel > model.moe.num_experts:
            return f"tp x dp ({self.expert_parallel}) exceeds the {model.moe.num_experts} experts of {model.name}"
        return None


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


STEP_TIME_BACKENDS = ("roofline", "aic")
"""What may give a step's GPU time (:attr:`EngineConfig.backend`)."""


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """vLLM-style engine settings (names as vLLM's flags) and its memory overheads.

    Defaults follow the engine of ``release`` (None below means "that default", read in
    :mod:`core.spec.engine_defaults`): for vLLM 0.33 gpu_memory_utilization 0.92 (0.34: 1.0 on CUDA
    and ROCm), block_size 16 (0.34: 64), and max_num_batched_tokens / max_num_seqs of 16384 / 1024 on
    GPUs with >= 160 GiB, 8192 / 1024 with >= 70 GiB other than the A100, else 2048 / 256.
    Memory overheads, from vLLM start-up logs (docs/model.md):
    - driver_reserved_bytes 470 MiB: nvidia-smi's total minus what CUDA reports as total
      (H100: 81559 MiB vs 79.19 GiB); vLLM multiplies the CUDA total by the utilization.
    - non_torch_bytes 0.25 GiB on one GPU; non_torch_bytes_tp per GPU with tp > 1 (NCCL and
      all-reduce buffers), None: 2.1 GiB on GPUs joined by NVLink or Infinity Fabric (vLLM 0.19
      logs; 2.10 GiB at tp 8 on NVSwitch A100s in 0.7.1), 0.2 GiB on PCIe-only GPUs (0.20 GiB per
      worker on 24 GB PCIe cards, vllm-project/vllm#14447) (:meth:`non_torch`).
    - cuda_graph_bytes 0.9 GiB: the CUDA-graph memory vLLM >= 0.20 takes out of the budget (0.84 GiB
      for Llama-3.1-8B on an H100); older releases capture graphs outside it (:attr:`graph_charge_bytes`).
    - release: the engine and its release the rules are for (the current vLLM by default).
    """

    gpu_memory_utilization: float | None = None
    """The engine's memory-fraction flag: vLLM's gpu_memory_utilization, SGLang's
    mem_fraction_static, TensorRT-LLM's kv_cache_free_gpu_memory_fraction; None: the engine's
    default (:meth:`memory_fraction`)."""
    max_model_len: int | None = None
    """None means the model's maximum context."""
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    block_size: int | None = None
    """Tokens per KV block; None: the engine's (vLLM 16, SGLang 1, TensorRT-LLM 32)."""
    driver_reserved_bytes: float = 470 * units.MiB
    non_torch_bytes: float = 0.25 * units.GiB
    non_torch_bytes_tp: float | None = None
    cuda_graph_bytes: float = 0.9 * units.GiB
    efficiency: Efficiency | None = None
    """None: the default for the GPU's memory class (default_efficiency)."""
    release: Release = field(default_factory=current_release)
    endpoint: str = "chat"
    """How clients reach the engine: ``chat``, ``completions`` or ``offline`` (in-process; no API server);
    :mod:`core.spec.efficiency` holds what each costs."""
    backend: str = "roofline"
    """What gives each step's GPU time: ``roofline`` (the project's) or ``aic`` (NVIDIA AIConfigurator's
    measured kernels where it covers the deployment, :mod:`core.timing.aic_backend`; optional package)."""

    def __post_init__(self) -> None:
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {', '.join(ENDPOINTS)}, got {self.endpoint!r}")
        if self.backend not in STEP_TIME_BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(STEP_TIME_BACKENDS)}, got {self.backend!r}")
        if self.gpu_memory_utilization is not None and not 0.05 <= self.gpu_memory_utilization <= 1.0:
            raise ValueError(f"gpu_memory_utilization must be between 0.05 and 1, got {self.gpu_memory_utilization!r}")
        if self.max_num_batched_tokens is not None:
            _int_range("max_num_batched_tokens", self.max_num_batched_tokens, 1, 10_000_000)
        if self.max_num_seqs is not None:
            _int_range("max_num_seqs", self.max_num_seqs, 1, 1_000_000)
        if self.block_size is not None and (problem := engine_defaults.block_size_error(self.release, self.block_size)):
            raise ValueError(problem)
        if self.max_model_len is not None:
            _int_range("max_model_len", self.max_model_len, 1, 100_000_000)
        for name in ("driver_reserved_bytes", "non_torch_bytes", "non_torch_bytes_tp", "cuda_graph_bytes"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 64 * units.GiB:
                raise ValueError(f"{name} must be between 0 and 64 GiB, got {value!r}")

    def non_torch(self, par: Parallelism, interconnect: str) -> float:
        """Non-torch memory vLLM charges per GPU [bytes]: one GPU's, or with tp > 1 the set value
        or the default for the GPUs' link (a fast GPU-to-GPU link brings large NCCL buffers)."""
        if par.tp == 1:
            return self.non_torch_bytes
        if self.non_torch_bytes_tp is not None:
            return self.non_torch_bytes_tp
        return NON_TORCH_TP_BYTES["fast" if interconnect in ("nvlink", "infinity-fabric") else "pcie"]

    @property
    def graph_charge_bytes(self) -> float:
        """CUDA-graph memory taken out of the KV budget: the estimate where the release charges it."""
        return self.cuda_graph_bytes if self.release.charges_cuda_graphs else 0.0

    @property
    def block_tokens(self) -> int:
        """Tokens per KV block on an NVIDIA GPU: as set, or the engine's default."""
        return self.block_tokens_on()

    def block_tokens_on(self, vendor: str = "nvidia", mla: bool = False) -> int:
        """Tokens per KV block on a GPU of ``vendor``: as set, or the engine's default (engine_block_tokens)."""
        return self.block_size or engine_block_tokens(self.release, vendor, mla)

    def memory_fraction(self, gpu_memory_bytes: float, par: Parallelism, mla=False, vendor="nvidia") -> float:
        """The memory-fraction flag: as set, or the engine's default for this GPU and split (SGLang's
        table reads --tp-size, which spans the data-parallel attention ranks: tp x dp)."""
        fraction = self.gpu_memory_utilization
        return fraction or default_memory_fraction(self.release, gpu_memory_bytes, par.tp * par.dp, par.pp, mla, vendor)

    def batch_limits(
        self, gpu_memory_bytes: float, gpu_name: str, tp: int = 1, max_model_len: int = 8192
    ) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs): the set values or the engine's default for the GPU."""
        tokens, seqs = engine_batch_defaults(self.release, gpu_memory_bytes, gpu_name, tp, max_model_len)
        return self.max_num_batched_tokens or tokens, self.max_num_seqs or seqs


NON_TORCH_TP_BYTES = {"fast": 2.1 * units.GiB, "pcie": 0.2 * units.GiB}
"""vLLM's non-torch memory per GPU with tp > 1 by link (EngineConfig docstring)."""


def _int_range(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
