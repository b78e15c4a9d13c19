"""What the reader of an estimate must be told: what does not fit, what the engine would refuse,
where the catalog's figures are weaker, and the costs of the levers that are on."""

from __future__ import annotations

from core.memory.budget import GpuMemory
from core.memory.capacity import KvCapacity
from core.memory.weights import weight_bytes
from core.messages import gib_text, notice
from core.spec import units
from core.spec.cluster import GPUS_PER_NODE, INTER_NODE_LINKS
from core.spec.deployment import Deployment, Workload
from core.spec.release import newest_release
from core.spec.support import matmul_peak, serving_dtype, weight_only


def _basic_warnings(dep: Deployment, workload: Workload, memory: GpuMemory, kv: KvCapacity, max_seqs: int, running):
    if memory.kv_budget <= 0:
        yield notice(
            "does_not_fit",
            needed=gib_text(memory.non_kv),
            share=f"{dep.memory_fraction:.0%}",
            usable=gib_text(memory.capacity - memory.driver_reserved - memory.held_back),
            short=gib_text(memory.non_kv - (memory.capacity - memory.driver_reserved - memory.held_back)),
        )
    elif memory.kv_in_use > memory.kv_space:
        yield notice(
            "batch_exceeds_kv",
            batch=workload.batch,
            needed=gib_text(memory.kv_in_use),
            budget=gib_text(memory.kv_space),
            fit=kv.max_concurrency_at_request_len,
            tokens=workload.request_len,
        )
    if dep.engine.release.engine == "vllm" and memory.kv_budget > 0 and kv.max_concurrency_at_max_model_len < 1:
        yield notice(
            "vllm_refuses_start",
            max_model_len=dep.max_model_len,
            needed=gib_text(kv.bytes_per_max_len_request),
            budget=gib_text(memory.kv_budget),
            longest=kv.capacity_tokens,
        )
    if dep.engine.release.engine == "vllm" and dep.engine.max_num_batched_tokens is not None:
        tokens, seqs = dep.batch_limits  # the CLI refuses this (core.spec.vllm_limits); the sidebar may combine it
        if tokens < seqs:
            yield notice("vllm_refuses_batch_budget", tokens=tokens, seqs=seqs)
    if workload.batch > max_seqs:
        yield notice("batch_exceeds_max_num_seqs", batch=workload.batch, max_num_seqs=max_seqs)
    if running < workload.batch and memory.kv_budget > 0:
        yield notice(
            "batch_runs_in_rounds",
            running=running,
            batch=workload.batch,
            rounds=-(-workload.batch // running),
        )
    _, used = matmul_peak(dep.gpu, dep.weights)
    cast = serving_dtype(dep.gpu, dep.weights)
    if cast is not None:  # the checkpoint is served in float16: no bf16 units is what that says
        yield notice("bf16_as_fp16", gpu=dep.gpu.name, capability=dep.gpu.compute_capability, used=cast.label)
    elif weight_only(dep.gpu, dep.weights):
        yield notice("weight_only_kernel", gpu=dep.gpu.name, format=dep.weights.label, used=used.upper())
    elif used != dep.weights.compute:
        yield notice(
            "no_native_compute",
            gpu=dep.gpu.name,
            unit=dep.weights.compute.upper(),
            format=dep.weights.label,
            used=used.upper(),
        )
    if dep.parallel.tp > GPUS_PER_NODE:
        yield notice(
            "tp_crosses_nodes",
            tp=dep.parallel.tp,
            nodes=-(-dep.parallel.tp // GPUS_PER_NODE),
            per_node=GPUS_PER_NODE,
            link=dep.inter_node,
            bandwidth=f"{INTER_NODE_LINKS[dep.inter_node] / 1e9:,.1f}",
            gpu_link=f"{dep.gpu.link_bandwidth / 1e9:,.0f}",
        )
    if dep.model.mla is None and dep.model.num_kv_heads < dep.parallel.tp:
        yield notice("kv_heads_replicated", kv_heads=dep.model.num_kv_heads, tp=dep.parallel.tp)
    if dep.model.vision is not None:
        tower = weight_bytes(dep.model, dep.weights).vision / dep.parallel.tp
        yield notice("vision_tower_counted", model=dep.model.name, tower=gib_text(tower))
    if dep.model.is_hybrid:
        yield notice(
            "hybrid_state",
            model=dep.model.name,
            attention=dep.model.num_attention_layers,
            linear=dep.model.num_state_layers,
            state=f"{kv.state_bytes_per_request / units.MiB:,.1f} MiB",
            block=kv.block_size,
        )
    if dep.gpu.memory_basis == "datasheet":
        yield notice("memory_from_datasheet", gpu=dep.gpu.name)
    release = dep.engine.release
    newest = newest_release(release.engine)
    if release.version > newest.version:
        yield notice("release_newer_than_rules", release=release.name, newest=newest.name)


def _lever_warnings(dep: Deployment, workload: Workload, memory: GpuMemory):
    """The costs of the levers that are on, stated where the result is read (each lever's own notices)."""
    for lever in dep.lever_models:
        yield from lever.notices(dep, workload, memory)


def estimate_warnings(
    dep: Deployment, workload: Workload, memory: GpuMemory, kv: KvCapacity, max_seqs: int, running: int
):
    """Everything a reader of the estimate should be told, as notices: what does not fit, what the
    engine would refuse, the batch it runs, and the costs of the levers that are on."""
    basic = tuple(_basic_warnings(dep, workload, memory, kv, max_seqs, running))
    return basic + tuple(_lever_warnings(dep, workload, memory))
