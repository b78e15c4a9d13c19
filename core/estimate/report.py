"""An estimate as plain data (``estimate --json``, exports) and as the CLI's text report; the
catalog's models and GPUs as plain data (``list --json``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from core.energy.report import EnergyInputs, energy_dict, energy_line
from core.estimate.burst import burst_dict, burst_line
from core.estimate.result import Estimate
from core.levers.registry import memory_part_labels
from core.memory.accounting import SIZING_TEXT
from core.memory.capacity import KvCapacity, kv_capacity
from core.memory.kv import kv_bytes_per_token, kv_heads_per_gpu, mha_equivalent
from core.memory.state import state_bytes_per_request
from core.messages import duration
from core.spec import units
from core.spec.deployment import Deployment
from core.spec.efficiency import efficiency_fields
from core.spec.engine import Parallelism
from core.spec.gpu import GpuSpec
from core.spec.mixers import LayerKind
from core.spec.model import AttentionKind, ModelSpec
from core.spec.params import parameter_counts
from core.spec.precision import KV_PRECISIONS
from core.spec.support import attention_backend
from core.timing.aic_backend import step_time_backend
from core.timing.kernel_speed import kernel_speed


def _gib(value: float) -> float:
    return round(value / units.GiB, 3)


def _ms(value: float) -> float:
    return round(value / units.MS, 3)


def mha_capacity(e: Estimate) -> tuple[KvCapacity, float]:
    """The KV figures of the same deployment with plain MHA (:func:`~core.memory.kv.mha_equivalent`)
    in the same KV budget, and how many times less KV per token the model's own attention stores."""
    d = e.deployment
    mha = dataclasses.replace(d, model=mha_equivalent(d.model))
    capacity = kv_capacity(mha, e.memory.kv_space, e.workload.request_len, e.workload.input_len)
    saving = kv_bytes_per_token(mha.model, d.kv, d.parallel) / kv_bytes_per_token(d.model, d.kv, d.parallel)
    return capacity, saving


def estimate_to_dict(e: Estimate, energy: EnergyInputs | None = None) -> dict[str, Any]:
    """The public JSON shape of ``python -m core estimate --json`` (see README)."""
    d, m, kv = e.deployment, e.memory, e.kv
    mha, saving = mha_capacity(e)
    return {
        "model": d.model.id,
        "gpu": d.gpu.id,
        "num_gpus": d.parallel.num_gpus,
        "tp": d.parallel.tp,
        "pp": d.parallel.pp,
        "dp": d.parallel.dp,
        "weight_dtype": d.weights.name,
        "kv_dtype": d.kv.name,
        "input_len": e.workload.input_len,
        "output_len": e.workload.output_len,
        "batch": e.workload.batch,
        "engine": {
            "name": d.engine.release.engine,
            "version": ".".join(str(v) for v in d.engine.release.version),
            "release": d.engine.release.name,
            "gpu_memory_utilization": d.memory_fraction,
            "max_model_len": d.max_model_len,
            "max_num_batched_tokens": e.max_num_batched_tokens,
            "max_num_seqs": e.max_num_seqs,
            "block_size": d.engine.block_tokens_on(d.gpu.vendor, d.model.mla is not None),
            "kv_sizing": m.sizing,
            # vLLM's backend names; SGLang and TensorRT-LLM pick their own kernels (not modelled)
            "attention_backend": attention_backend(d.gpu, d.model, d.kv) if d.engine.release.engine == "vllm" else None,
            "efficiency": efficiency_fields(d.efficiency),
            "endpoint": d.engine.endpoint,
            "kernel_rates": kernel_speed(d).tier,
            "kernel_rates_source": kernel_speed(d).source or None,
            "step_time_backend": step_time_backend(d),  # "roofline", or "aic 0.12.0 (h100_sxm, vllm 0.24.0)"
        },
        "memory_per_gpu": {
            "capacity_gib": _gib(m.capacity),
            "driver_reserved_gib": _gib(m.driver_reserved),
            "held_back_gib": _gib(m.held_back),
            "weights_gib": _gib(m.weights),
            "kv_cache_gib": _gib(m.kv_in_use),
            "activations_gib": _gib(m.activations),
            "overhead_gib": _gib(m.overhead),
            "free_gib": _gib(m.kv_free),
            **{f"{p.name}_gib": _gib(m.part(p.name)) for p in memory_part_labels()},
        },
        "kv": {
            "bytes_per_token": round(kv.bytes_per_token),
            "state_bytes_per_request": round(kv.state_bytes_per_request),
            "bytes_per_request": round(kv.bytes_per_request),
            "block_size": kv.block_size,
            "budget_gib_per_gpu": _gib(m.kv_budget),
            "capacity_tokens": kv.capacity_tokens,
            "max_concurrency_at_max_model_len": round(kv.max_concurrency_at_max_model_len, 3),
            "max_concurrency_at_request_len": kv.max_concurrency_at_request_len,
            "max_concurrency_contiguous": kv.max_concurrency_contiguous,
            # the same deployment with one K and one V head per query head, in the same KV budget
            "mha_equivalent": {
                "bytes_per_token": round(mha.bytes_per_token),
                "bytes_per_request": round(mha.bytes_per_request),
                "max_concurrency_at_request_len": mha.max_concurrency_at_request_len,
                "kv_saving": round(saving, 3),
            },
        },
        "running_batch": e.running_batch,
        "latency": {
            "scope": "arriving_together",
            "ttft_ms": _ms(e.latency.ttft_s),
            "tpot_ms": _ms(e.latency.tpot_s),
            "e2e_ms": _ms(e.latency.e2e_s),
        },
        "burst_ttft": burst_dict(e.burst),  # the same burst as vLLM V1 admits it, as `vllm bench serve` prints it
        "closed_loop": {
            "clients": e.closed_loop.clients,
            "running": e.closed_loop.running,
            "stable": e.closed_loop.stable,
            "ttft_ms": _ms(e.closed_loop.ttft_s) if e.closed_loop.stable else None,
            "tpot_ms": _ms(e.closed_loop.tpot_s) if e.closed_loop.stable else None,
            "e2e_ms": _ms(e.closed_loop.e2e_s) if e.closed_loop.stable else None,
            "output_tokens_per_s": round(e.closed_loop.output_tokens_per_s, 2),
        },
        "throughput": {
            "output_tokens_per_s": round(e.throughput.output_tokens_per_s, 2),
            "total_tokens_per_s": round(e.throughput.total_tokens_per_s, 2),
            "decode_tokens_per_s": round(e.throughput.decode_tokens_per_s, 2),
        },
        "bound": {"prefill": e.bound_prefill, "decode": e.bound_decode},
        "energy": energy_dict(e, energy),  # board power and energy per token (core.energy.power)
        "fits": e.fits,
        "warnings": [w.text() for w in e.warnings],
    }


def format_estimate(e: Estimate, energy: EnergyInputs | None = None) -> str:
    """A compact human-readable report."""
    data = estimate_to_dict(e, energy)
    mem, kv, lat, tput = data["memory_per_gpu"], data["kv"], data["latency"], data["throughput"]
    d = e.deployment
    lines = [
        f"{d.model.name} on {d.parallel.num_gpus} x {d.gpu.name} (tp={d.parallel.tp}, pp={d.parallel.pp}"
        + (f", dp={d.parallel.dp}, ep={d.parallel.tp * d.parallel.dp}" if d.parallel.dp > 1 else "")
        + "), "
        f"weights {d.weights.label}, KV {d.kv.label}",
        f"workload: batch {e.workload.batch} x ({e.workload.input_len} prompt + "
        f"{e.workload.output_len} answer) tokens, max_model_len {d.max_model_len}",
        f"engine: {d.engine.release.name} (its memory accounting, defaults and host costs),"
        f" {d.engine.endpoint} endpoint",
        f"kernel rates: {kernel_speed(d).label}",
        f"step time backend: {step_time_backend(d)}",
        f"KV sizing: {SIZING_TEXT[e.memory.sizing]}",
        f"fits: {'yes' if e.fits else 'NO'}",
        "",
        "memory per GPU [GiB]",
        f"  capacity (driver)      {mem['capacity_gib']:10.2f}",
        f"  reserved by driver     {mem['driver_reserved_gib']:10.2f}",
        f"  {'held back by ' + ('margin' if e.memory.sizing == 'vllm_measured' else 'fraction'):23}"
        f"{mem['held_back_gib']:10.2f}",
        f"  weights                {mem['weights_gib']:10.2f}",
        f"  activation peak        {mem['activations_gib']:10.2f}",
        f"  engine overhead        {mem['overhead_gib']:10.2f}",
        *[f"  {p.label:22} {mem[f'{p.name}_gib']:10.2f}" for p in memory_part_labels() if mem[f"{p.name}_gib"]],
        f"  KV budget              {kv['budget_gib_per_gpu']:10.2f}",
        f"  KV in use (this batch) {mem['kv_cache_gib']:10.2f}",
        "",
        "KV cache",
        f"  bytes per token        {kv['bytes_per_token'] / units.KiB:10.1f} KiB"
        + (" (attention layers only)" if d.model.is_hybrid else ""),
        *(
            [
                f"  state per request      {kv['state_bytes_per_request'] / units.MiB:10.1f} MiB (any length)",
                f"  block size             {kv['block_size']:10d} tokens (raised so a page holds a state)",
            ]
            if d.model.is_hybrid
            else []
        ),
        f"  capacity               {kv['capacity_tokens']:10d} tokens",
        f"  max concurrency at request length   {kv['max_concurrency_at_request_len']}",
        f"  engine's figure at max_model_len    {kv['max_concurrency_at_max_model_len']:.2f}x",
        f"  contiguous reservation              {kv['max_concurrency_contiguous']}",
        *_mha_lines(d.model, d.parallel.tp, kv["mha_equivalent"], kv["bytes_per_token"] > _own_kv(d)),
        "",
        f"latency and throughput, {e.workload.batch} requests arriving together ({e.running_batch} run at once)",
        f"  TTFT  {duration(lat['ttft_ms'] * units.MS):>13}   (the last request, in rounds; prefill"
        f" {data['bound']['prefill']}-bound)",
        burst_line(data["burst_ttft"]),
        f"  TPOT  {duration(lat['tpot_ms'] * units.MS):>13}   (decode {data['bound']['decode']}-bound)",
        f"  E2E   {duration(lat['e2e_ms'] * units.MS):>13}",
        f"  output {tput['output_tokens_per_s']:10.1f} tokens/s, total {tput['total_tokens_per_s']:.1f} tokens/s",
        *_closed_loop_lines(data["closed_loop"]),
        energy_line(data["energy"]),
    ]
    lines += [f"warning: {w.text()}" for w in e.warnings]
    return "\n".join(lines)


def _own_kv(d: Deployment) -> int:
    """The target model's KV of one token on one GPU, without what levers hold beside it [bytes]."""
    return round(kv_bytes_per_token(d.model, d.kv, d.parallel))


def _mha_lines(model: ModelSpec, tp: int, mha: dict[str, Any], lever_kv: bool) -> list[str]:
    """The chapters' comparison: this model's KV against the same model with plain MHA (per GPU)."""
    kind, heads = model.attention_kind, model.num_heads
    if kind is AttentionKind.MHA:
        return [f"  already MHA: {heads} KV heads, one per query head (GQA, MQA or MLA would store less)"]
    if model.mla is not None:
        meaning = f"{heads} heads x ({model.q_head_dim} K + {model.v_head_dim} V) values per layer, no latent"
        indexer = " and the indexer's key" if model.indexer else ""
        latent = f"one {model.mla.kv_lora_rank + model.mla.qk_rope_head_dim}-value latent{indexer} per layer"
        own = f"{latent} instead of {heads} K and V heads"
        own += f" (tp={tp}: each GPU keeps the whole latent but only {heads // tp} MHA heads)" if tp > 1 else ""
    else:
        meaning, own = f"{heads} KV heads, one per query head", f"{model.num_kv_heads} of {heads} KV heads"
        own += f" (tp={tp}: {kv_heads_per_gpu(model, tp)} of {heads // tp} per GPU)" if tp > 1 else ""
    meaning += ", attention layers only" if model.is_hybrid else ""
    meaning += ", speculative proposer's KV included" if lever_kv else ""
    return [
        f"  MHA equivalent         {mha['bytes_per_token'] / units.KiB:10.1f} KiB per token ({meaning})",
        f"  MHA concurrency at request length   {mha['max_concurrency_at_request_len']} (same KV budget)",
        f"  {kind} stores {mha['kv_saving']:.1f}x less KV than MHA would: {own}",
    ]


def _closed_loop_lines(loop: dict[str, Any]) -> list[str]:
    title = f"{loop['clients']} closed-loop clients at steady state (a serving benchmark's --max-concurrency)"
    if not loop["stable"]:
        return ["", title, "  no steady state: arriving prompts alone keep the engine busy"]
    return [
        "",
        title,
        f"  TTFT  {duration(loop['ttft_ms'] * units.MS):>13}",
        f"  TPOT  {duration(loop['tpot_ms'] * units.MS):>13}",
        f"  output {loop['output_tokens_per_s']:10.1f} tokens/s",
    ]


def model_to_dict(m: ModelSpec) -> dict[str, Any]:
    p = parameter_counts(m)
    return {
        "id": m.id,
        "name": m.name,
        "hf_id": m.hf_id,
        "attention": str(m.attention_kind),
        "layers": m.num_layers,
        "hidden_size": m.hidden_size,
        "heads": m.num_heads,
        "kv_heads": m.num_kv_heads,
        "head_dim": m.head_dim,
        "moe": None
        if m.moe is None
        else {
            "experts": m.moe.num_experts,
            "experts_per_token": m.moe.experts_per_token,
            "shared_experts": m.moe.num_shared_experts,
        },
        "sliding_window": m.sliding_window,
        "sliding_layers": m.num_sliding_layers,
        "layer_kinds": {kind.value: m.count_layers(kind) for kind in LayerKind if m.count_layers(kind)},
        "sparse_attention_topk": m.indexer.topk if m.indexer else None,
        "vision_params_b": round(p.vision / 1e9, 3) if m.vision else None,
        "mtp_layers": m.mtp_layers,
        # one GPU, 16-bit KV: what the architecture costs per token and per request before any setting
        "kv_bytes_per_token_16bit": round(kv_bytes_per_token(m, KV_PRECISIONS["bf16"], Parallelism())),
        "state_bytes_per_request_16bit": round(state_bytes_per_request(m, Parallelism())),
        "max_context": m.max_context,
        "native_dtype": m.native_dtype,
        "quantization": m.quantization or None,
        "params_total_b": round(p.total / 1e9, 3),
        "params_active_b": round(p.active / 1e9, 3),
        "params_total_published_b": m.params_total_published and round(m.params_total_published / 1e9, 3),
        "source_url": m.source_url,
        "source_read": m.source_read.isoformat() if m.source_read else None,
    }


def gpu_to_dict(g: GpuSpec) -> dict[str, Any]:
    return {
        "id": g.id,
        "name": g.name,
        "memory_gib": _gib(g.memory_bytes),
        "memory_basis": g.memory_basis,
        "memory_bandwidth_gb_s": round(g.memory_bandwidth / units.GB, 1),
        "compute_capability": g.compute_capability or None,
        "tensor_tflops_dense": {k: round(v / units.TERA, 2) for k, v in g.tensor_flops},
        "interconnect": g.interconnect,
        "link_bandwidth_gb_s_bidirectional": round(g.link_bandwidth_bidirectional / units.GB, 1),
        "host_link": g.host_link_generation,
        "host_link_gb_s_bidirectional": round(g.host_link_bandwidth_bidirectional / units.GB, 1),
        "price_per_hour_usd": g.price_per_hour,
        "source_url": g.source_url,
        "source_read": g.source_read.isoformat() if g.source_read else None,
    }
