"""The command that realizes a plan on its engine (``vllm serve``, SGLang's ``launch_server``,
``trtllm-serve``), and the start-up lines to expect from it."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from core.planning.check import Plan
from core.spec import units

# vLLM --quantization values for formats that need an online method (no pre-quantized checkpoint);
# INT4 and INT8 need a quantized checkpoint (AWQ/GPTQ or compressed-tensors), which vLLM detects.
ONLINE_QUANTIZATION = {"fp8": "fp8"}
CHECKPOINT_FORMATS = {"int4", "int8", "nvfp4"}


@dataclass(frozen=True)
class ServeCommand:
    command: str
    expected_log: tuple[str, ...]
    needs_quantized_checkpoint: bool


def serve_command(plan: Plan) -> ServeCommand:
    """The engine's launch command for the plan's deployment (vLLM, SGLang or TensorRT-LLM)."""
    engine = plan.deployment.engine.release.engine
    if engine == "sglang":
        return _sglang_command(plan)
    if engine == "trtllm":
        return _trtllm_command(plan)
    return _vllm_command(plan)


def _running(plan: Plan) -> int:
    est = plan.estimate
    return min(est.max_num_seqs, max(est.kv.max_concurrency_at_request_len, 1))


def _sglang_command(plan: Plan) -> ServeCommand:
    dep, est = plan.deployment, plan.estimate
    args = ["python", "-m", "sglang.launch_server", "--model-path", dep.model.hf_id or dep.model.id]
    args += ["--tp-size", str(dep.parallel.tp), "--context-length", str(dep.max_model_len)]
    if dep.parallel.pp > 1:
        args += ["--pp-size", str(dep.parallel.pp)]
    args += ["--max-running-requests", str(_running(plan)), "--mem-fraction-static", f"{dep.memory_fraction:.3f}"]
    if dep.kv.name == "fp8":
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    native = dep.weights.name == dep.model.native_dtype
    if not native and dep.weights.name in ONLINE_QUANTIZATION:
        args += ["--quantization", ONLINE_QUANTIZATION[dep.weights.name]]
    return ServeCommand(
        command=shlex.join(args),
        expected_log=(f"KV Cache is allocated. #tokens: {est.kv.capacity_tokens}",),
        needs_quantized_checkpoint=not native and dep.weights.name in CHECKPOINT_FORMATS,
    )


def _trtllm_command(plan: Plan) -> ServeCommand:
    dep, est = plan.deployment, plan.estimate
    args = ["trtllm-serve", dep.model.hf_id or dep.model.id, "--tp_size", str(dep.parallel.tp)]
    if dep.parallel.pp > 1:
        args += ["--pp_size", str(dep.parallel.pp)]
    args += ["--max_seq_len", str(dep.max_model_len), "--max_batch_size", str(_running(plan))]
    args += ["--kv_cache_free_gpu_memory_fraction", f"{dep.memory_fraction:.2f}"]
    native = dep.weights.name == dep.model.native_dtype
    return ServeCommand(
        command=shlex.join(args),
        expected_log=(
            f"[MemUsageChange] Allocated {est.memory.kv_budget / units.GiB:.2f} GiB for max tokens in paged KV "
            f"cache ({est.kv.capacity_tokens})",
        ),
        needs_quantized_checkpoint=not native,
    )


def _vllm_command(plan: Plan) -> ServeCommand:
    dep = plan.deployment
    est = plan.estimate
    args = ["vllm", "serve", dep.model.hf_id or dep.model.id, "--tensor-parallel-size", str(dep.parallel.tp)]
    if dep.parallel.pp > 1:
        args += ["--pipeline-parallel-size", str(dep.parallel.pp)]
    args += [
        "--max-model-len",
        str(dep.max_model_len),
        "--max-num-seqs",
        str(_running(plan)),
        "--gpu-memory-utilization",
        f"{dep.memory_fraction:.2f}",
    ]
    if dep.engine.max_num_batched_tokens:
        args += ["--max-num-batched-tokens", str(dep.engine.max_num_batched_tokens)]
    if dep.kv.name == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    native = dep.weights.name == dep.model.native_dtype
    if not native and dep.weights.name in ONLINE_QUANTIZATION:
        args += ["--quantization", ONLINE_QUANTIZATION[dep.weights.name]]
    args += _lever_flags(dep)
    expected = (
        f"GPU KV cache size: {est.kv.capacity_tokens:,} tokens",
        f"Maximum concurrency for {dep.max_model_len:,} tokens per request: "
        f"{est.kv.max_concurrency_at_max_model_len:.2f}x",
    )
    return ServeCommand(
        command=shlex.join(args),
        expected_log=expected,
        needs_quantized_checkpoint=not native and dep.weights.name in CHECKPOINT_FORMATS,
    )


def _lever_flags(dep) -> list[str]:
    """vLLM flags of the levers that are on (eager attention and KV offloading have none: vLLM
    always uses fused attention kernels and keeps running requests' KV on the GPU)."""
    levers, flags = dep.levers, []
    if (spec := levers.speculative) is not None:
        config = {"num_speculative_tokens": spec.k}
        if spec.method == "draft":
            config = {"model": spec.draft.hf_id or spec.draft.id} | config
        else:
            config = {"method": spec.method} | config
        flags += ["--speculative-config", json.dumps(config)]
    if "prefix" in levers.active:
        flags.append("--enable-prefix-caching")
    if levers.offload.weights_bytes:
        flags += ["--cpu-offload-gb", f"{levers.offload.weights_bytes / units.GiB:g}"]
    if levers.lora is not None:
        flags += ["--enable-lora", "--max-loras", str(levers.lora.adapters), "--max-lora-rank", str(levers.lora.rank)]
    return flags
