"""The ``vllm serve`` command that realizes a plan, and the start-up lines to expect from it."""

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
    dep = plan.deployment
    est = plan.estimate
    args = ["vllm", "serve", dep.model.hf_id or dep.model.id, "--tensor-parallel-size", str(dep.parallel.tp)]
    if dep.parallel.pp > 1:
        args += ["--pipeline-parallel-size", str(dep.parallel.pp)]
    args += [
        "--max-model-len",
        str(dep.max_model_len),
        "--max-num-seqs",
        str(min(est.max_num_seqs, max(est.kv.max_concurrency_at_request_len, 1))),
        "--gpu-memory-utilization",
        f"{dep.engine.gpu_memory_utilization:.2f}",
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
