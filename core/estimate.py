"""One question, one answer: memory, concurrency ceiling, latency and throughput of a deployment.

:func:`estimate` composes the formulas of :mod:`core.memory`, :mod:`core.kv` and
:mod:`core.latency` for one workload (B identical requests of I prompt and O answer tokens):

    TTFT = request overhead + prefill of B prompts arriving together (the last one's first token)
    TPOT = one decode step of B sequences at the mean context I + O / 2
    E2E  = TTFT + (O - 1) x TPOT
    output tokens/s = B x O / E2E;  total tokens/s = B x (I + O) / E2E
"""

from __future__ import annotations

from dataclasses import dataclass

from core import units
from core.budget import batch_kv_bytes, gpu_memory
from core.deployment import Deployment, Workload, check_fits_context
from core.kv import KvCapacity, kv_capacity
from core.latency import PhaseTime, decode_step_time, plain_decode_step_time, prefill_time
from core.messages import Notice, notice
from core.offload import host_read_bandwidth, host_read_seconds, spilled_kv_bytes

DECODE_CONTEXT_MIDPOINT = 2  # decode runs from context I to I + O; its mean is I + O / 2


@dataclass(frozen=True, kw_only=True)
class MemoryBreakdown:
    """One GPU's memory [bytes]; the parts add up to ``capacity``."""

    capacity: float
    """Total memory as the driver reports it."""
    driver_reserved: float
    held_back: float
    """usable x (1 - gpu_memory_utilization): CUDA context and anything outside the engine."""
    weights: float
    """Weights resident on the GPU (offloaded ones excluded)."""
    activations: float
    overhead: float
    kv_budget: float
    """What remains for KV cache; negative when the rest does not fit."""
    kv_in_use: float
    """KV cache the workload's batch needs (GPU and host together)."""
    proposer: float = 0.0
    """Speculative proposer's weights (draft model or MTP head)."""
    lora: float = 0.0
    """Resident LoRA adapter slots."""
    attention_scores: float = 0.0
    """Eager attention's score matrix of the largest step (0 with FlashAttention)."""
    offloaded_weights: float = 0.0
    """Weights kept in host memory (not part of ``capacity``)."""
    host_kv: float = 0.0
    """Host memory set aside for KV cache beyond the GPU budget (not part of ``capacity``)."""

    @property
    def kv_free(self) -> float:
        return self.kv_budget + self.host_kv - self.kv_in_use

    @property
    def non_kv(self) -> float:
        return self.weights + self.proposer + self.lora + self.activations + self.attention_scores + self.overhead

    @property
    def kv_space(self) -> float:
        """KV the replica can hold per GPU: the GPU budget plus host KV space (none when it does not fit)."""
        return self.kv_budget + self.host_kv if self.kv_budget > 0 else self.kv_budget


@dataclass(frozen=True, kw_only=True)
class Latency:
    ttft_s: float
    tpot_s: float
    e2e_s: float
    prefill: PhaseTime
    decode: PhaseTime


@dataclass(frozen=True, kw_only=True)
class Throughput:
    output_tokens_per_s: float
    total_tokens_per_s: float
    decode_tokens_per_s: float
    """B / TPOT: the steady decode rate once every request is generating."""


@dataclass(frozen=True, kw_only=True)
class Estimate:
    deployment: Deployment
    workload: Workload
    max_num_batched_tokens: int
    max_num_seqs: int
    memory: MemoryBreakdown
    kv: KvCapacity
    latency: Latency
    throughput: Throughput
    fits: bool
    warnings: tuple[Notice, ...]

    @property
    def engine_starts(self) -> bool:
        """vLLM refuses to start unless one max_model_len request fits the KV budget."""
        return self.kv.max_concurrency_at_max_model_len >= 1

    @property
    def bound_prefill(self) -> str:
        return self.latency.prefill.bound

    @property
    def bound_decode(self) -> str:
        return self.latency.decode.bound


def memory_breakdown(dep: Deployment, kv_in_use: float = 0.0) -> MemoryBreakdown:
    """Per-GPU memory of ``dep`` with ``kv_in_use`` bytes of KV cache taken (see core.memory and,
    for the levers' parts, core.budget)."""
    parts = gpu_memory(dep)
    return MemoryBreakdown(
        capacity=dep.gpu.memory_bytes,
        driver_reserved=dep.engine.driver_reserved_bytes,
        held_back=parts.usable * (1 - dep.engine.gpu_memory_utilization),
        weights=parts.weights,
        activations=parts.activations,
        overhead=parts.overhead,
        kv_budget=parts.kv_budget,
        kv_in_use=kv_in_use,
        proposer=parts.proposer,
        lora=parts.lora,
        attention_scores=parts.attention_scores,
        offloaded_weights=parts.offloaded_weights,
        host_kv=parts.host_kv,
    )


def latency_and_throughput(dep: Deployment, batch, input_len, output_len) -> tuple[Latency, Throughput]:
    """Timings for B requests of I + O tokens; B, I and O may be numpy arrays (they broadcast)."""
    prefill = prefill_time(dep, batch, input_len)
    decode = decode_step_time(dep, batch, input_len + output_len / DECODE_CONTEXT_MIDPOINT)
    ttft, tpot = prefill.seconds + dep.efficiency.request_overhead_s, decode.seconds
    e2e = ttft + (output_len - 1) * tpot
    latency = Latency(ttft_s=ttft, tpot_s=tpot, e2e_s=e2e, prefill=prefill, decode=decode)
    throughput = Throughput(
        output_tokens_per_s=batch * output_len / e2e,
        total_tokens_per_s=batch * (input_len + output_len) / e2e,
        decode_tokens_per_s=batch / tpot,
    )
    return latency, throughput


def estimate(dep: Deployment, workload: Workload, *, enforce_context: bool = True) -> Estimate:
    """Answer the whole question for one deployment and workload (see module docstring).

    A request longer than max_model_len raises, unless ``enforce_context`` is False (the planner
    reports it as its failed context check instead).
    """
    if enforce_context:
        check_fits_context(dep, workload)
    tokens, seqs = dep.engine.batch_limits(dep.gpu.memory_bytes, dep.gpu.name)
    in_use = batch_kv_bytes(dep, workload.batch, workload.request_len, workload.input_len)
    memory = memory_breakdown(dep, kv_in_use=in_use)
    kv = kv_capacity(dep, memory.kv_space, workload.request_len, workload.input_len)
    latency, throughput = latency_and_throughput(dep, workload.batch, workload.input_len, workload.output_len)
    latency = Latency(
        ttft_s=float(latency.ttft_s),
        tpot_s=float(latency.tpot_s),
        e2e_s=float(latency.e2e_s),
        prefill=latency.prefill,
        decode=latency.decode,
    )
    throughput = Throughput(
        output_tokens_per_s=float(throughput.output_tokens_per_s),
        total_tokens_per_s=float(throughput.total_tokens_per_s),
        decode_tokens_per_s=float(throughput.decode_tokens_per_s),
    )
    fits = memory.kv_budget > 0 and memory.kv_in_use <= memory.kv_space
    return Estimate(
        deployment=dep,
        workload=workload,
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        memory=memory,
        kv=kv,
        latency=latency,
        throughput=throughput,
        fits=fits,
        warnings=tuple(_warnings(dep, workload, memory, kv, seqs)) + tuple(_lever_warnings(dep, workload, memory)),
    )


def _gib(value: float) -> str:
    return f"{value / units.GiB:.2f} GiB"


def _warnings(dep: Deployment, workload: Workload, memory: MemoryBreakdown, kv: KvCapacity, max_seqs: int):
    if memory.kv_budget <= 0:
        yield notice(
            "does_not_fit",
            needed=_gib(memory.non_kv),
            share=f"{dep.engine.gpu_memory_utilization:.0%}",
            usable=_gib(memory.capacity - memory.driver_reserved - memory.held_back),
            short=_gib(-memory.kv_budget),
        )
    elif memory.kv_in_use > memory.kv_space:
        yield notice(
            "batch_exceeds_kv",
            batch=workload.batch,
            needed=_gib(memory.kv_in_use),
            budget=_gib(memory.kv_space),
            fit=kv.max_concurrency_at_request_len,
            tokens=workload.request_len,
        )
    if memory.kv_budget > 0 and kv.max_concurrency_at_max_model_len < 1:
        yield notice(
            "vllm_refuses_start",
            max_model_len=dep.max_model_len,
            needed=_gib(kv.bytes_per_max_len_request),
            budget=_gib(memory.kv_budget),
            longest=kv.capacity_tokens,
        )
    if workload.batch > max_seqs:
        yield notice("batch_exceeds_max_num_seqs", batch=workload.batch, max_num_seqs=max_seqs)
    _, used = dep.gpu.flops_for(dep.weights)
    if used != dep.weights.compute:
        yield notice(
            "no_native_compute",
            gpu=dep.gpu.name,
            unit=dep.weights.compute.upper(),
            format=dep.weights.label,
            used=used.upper(),
        )
    if dep.model.mla is None and dep.model.num_kv_heads < dep.parallel.tp:
        yield notice("kv_heads_replicated", kv_heads=dep.model.num_kv_heads, tp=dep.parallel.tp)
    if dep.gpu.memory_basis == "datasheet":
        yield notice("memory_from_datasheet", gpu=dep.gpu.name)


def _lever_warnings(dep: Deployment, workload: Workload, memory: MemoryBreakdown):
    """The costs of the levers that are on, stated where the result is read."""
    levers, eff = dep.levers, dep.efficiency
    if levers.offload.weights_bytes:
        yield notice(
            "offload_latency",
            offloaded=_gib(levers.offload.weights_bytes),
            link=dep.gpu.host_link_generation,
            bandwidth=f"{host_read_bandwidth(dep.gpu, eff) / units.GB:.1f} GB/s",
            ms=f"{host_read_seconds(dep.gpu, eff, levers.offload.weights_bytes) / units.MS:.0f} ms",
        )
    spilled = spilled_kv_bytes(memory.kv_in_use, memory.kv_budget, levers.offload.kv_bytes)
    if spilled > 0:
        yield notice(
            "kv_spill",
            spilled=_gib(spilled),
            ms=f"{host_read_seconds(dep.gpu, eff, spilled) / units.MS:.0f} ms",
        )
    if levers.speculative is not None:
        context = workload.input_len + workload.output_len / DECODE_CONTEXT_MIDPOINT
        plain = float(plain_decode_step_time(dep, workload.batch, context).seconds)
        speculative = float(decode_step_time(dep, workload.batch, context).seconds)
        if speculative >= plain:
            yield notice(
                "speculation_slower",
                batch=workload.batch,
                plain=f"{plain / units.MS:.1f} ms",
                speculative=f"{speculative / units.MS:.1f} ms",
            )
    if memory.attention_scores:
        yield notice("eager_scores", scores=_gib(memory.attention_scores))
