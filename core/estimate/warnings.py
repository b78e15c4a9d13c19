"""TODO docstring."""

from __future__ import annotations

from core.levers.offload import host_read_bandwidth, host_read_seconds, spilled_kv_bytes
from core.memory.budget import MemoryBreakdown
from core.memory.capacity import KvCapacity
from core.messages import notice
from core.spec import units
from core.spec.deployment import Deployment, Workload
from core.timing.phases import decode_step_time, plain_decode_step_time


def _gib(value: float) -> str:
    return f"{value / units.GiB:.2f} GiB"


def _basic_warnings(dep: Deployment, workload: Workload, memory: MemoryBreakdown, kv: KvCapacity, max_seqs: int):
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
        context = workload.decode_context
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


def estimate_warnings(dep: Deployment, workload: Workload, memory: MemoryBreakdown, kv: KvCapacity, max_seqs: int):
    """Everything a reader of the estimate should be told, as notices: what does not fit, what the
    engine would refuse, and the costs of the levers that are on."""
    return tuple(_basic_warnings(dep, workload, memory, kv, max_seqs)) + tuple(_lever_warnings(dep, workload, memory))
