"""The command that realizes a plan on its engine (``vllm serve``, SGLang's ``launch_server``,
``trtllm-serve``), and the start-up lines to expect from it.

Data-parallel attention with expert parallelism (dp > 1, :class:`core.spec.engine.Parallelism`):
- vLLM: ``--tensor-parallel-size T --data-parallel-size D --enable-expert-parallel``; EP = T x D
  (vllm-project/vllm docs/serving/expert_parallel_deployment.md); ``--enable-expert-parallel``
  since 0.8.0 (#14305), ``vllm serve -dp`` behind one API server (#13923) known from 0.8.3;
  ``--max-num-seqs`` applies per DP rank (docs/serving/data_parallel_deployment.md).
- SGLang: ``--tp-size T x D --dp-size D --enable-dp-attention`` (attention TP = tp-size / dp-size;
  sgl-project/sglang#1970, 0.4.0) and the experts over all T x D GPUs: ``--ep-size T x D`` from
  0.4.10, ``--enable-ep-moe`` (#2371) from 0.4.1 to 0.4.9, none in 0.4.0 (MoE tensor-split over
  the same GPUs); ``--max-running-requests`` is the total, split over the ranks
  (``per_dp_max_running_requests``).
- TensorRT-LLM: ``--tp_size D --ep_size D`` and ``enable_attention_dp: true`` in the YAML of
  ``--extra_llm_api_options`` (tensorrt_llm/commands/serve.py); its attention DP runs tp 1 per
  rank ("If using attention DP, the MLP also uses DP instead of TP"), ``--max_batch_size`` per rank.
"""

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
VLLM_DATA_PARALLEL_FROM = (0, 8, 3)
SGLANG_DP_ATTENTION_FROM, SGLANG_EP_MOE_FROM, SGLANG_EP_SIZE_FROM = (0, 4, 0), (0, 4, 1), (0, 4, 10)
TRTLLM_ATTENTION_DP_FILE = "extra-llm-api-config.yml"


@dataclass(frozen=True)
class ServeCommand:
    command: str
    expected_log: tuple[str, ...]
    needs_quantized_checkpoint: bool
    notes: tuple[str, ...] = ()
    """What the command cannot express for this layout or release (none for most plans)."""
    args: tuple[str, ...] = ()
    """The engine's argument list (``command`` without its shell prefix): what deployment files run."""
    files: tuple[tuple[str, str], ...] = ()
    """Files the arguments name, as (file name, text), created in the working directory."""


def serve_command(plan: Plan) -> ServeCommand:
    """The engine's launch command for the plan's deployment (vLLM, SGLang or TensorRT-LLM)."""
    engine = plan.deployment.engine.release.engine
    if engine == "sglang":
        return _sglang_command(plan)
    if engine == "trtllm":
        return _trtllm_command(plan)
    return _vllm_command(plan)


def _running(plan: Plan) -> int:
    """Requests one rank runs at once: max_num_seqs, or fewer where its KV cache holds fewer (the
    estimate's concurrency is the replica's, dp x one rank's)."""
    est = plan.estimate
    return min(est.max_num_seqs, max(est.kv.max_concurrency_at_request_len // plan.deployment.parallel.dp, 1))


def _sglang_command(plan: Plan) -> ServeCommand:
    dep, est = plan.deployment, plan.estimate
    par, release, notes = dep.parallel, dep.engine.release, []
    args = ["python", "-m", "sglang.launch_server", "--model-path", dep.model.hf_id or dep.model.id]
    args += ["--tp-size", str(par.tp * par.dp), "--context-length", str(dep.max_model_len)]
    if par.pp > 1:
        args += ["--pp-size", str(par.pp)]
    if par.dp > 1:
        args += ["--dp-size", str(par.dp), "--enable-dp-attention"]
        if release.at_least(SGLANG_EP_SIZE_FROM):
            args += ["--ep-size", str(par.expert_parallel)]
        elif release.at_least(SGLANG_EP_MOE_FROM):
            args.append("--enable-ep-moe")
        if not release.at_least(SGLANG_DP_ATTENTION_FROM):
            notes.append(f"{release.name} has no --enable-dp-attention (SGLang 0.4.0 on)")
    args += ["--max-running-requests", str(_running(plan) * par.dp)]
    args += ["--mem-fraction-static", f"{dep.memory_fraction:.3f}"]
    if dep.engine.max_num_batched_tokens:
        args += ["--chunked-prefill-size", str(dep.engine.max_num_batched_tokens)]
    if dep.kv.name == "fp8":
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    native = dep.weights.name == dep.model.native_dtype
    if not native and dep.weights.name in ONLINE_QUANTIZATION:
        args += ["--quantization", ONLINE_QUANTIZATION[dep.weights.name]]
    return ServeCommand(
        command=shlex.join(args),
        args=tuple(args),
        expected_log=(f"KV Cache is allocated. #tokens: {est.kv.capacity_tokens}",),
        needs_quantized_checkpoint=not native and dep.weights.name in CHECKPOINT_FORMATS,
        notes=tuple(notes),
    )


def _trtllm_command(plan: Plan) -> ServeCommand:
    dep, est = plan.deployment, plan.estimate
    par, notes, prefix, files = dep.parallel, [], "", ()
    args = ["trtllm-serve", dep.model.hf_id or dep.model.id, "--tp_size", str(par.tp * par.dp)]
    if par.pp > 1:
        args += ["--pp_size", str(par.pp)]
    if par.dp > 1:
        args += ["--ep_size", str(par.expert_parallel), "--extra_llm_api_options", TRTLLM_ATTENTION_DP_FILE]
        prefix = f"printf 'enable_attention_dp: true\\n' > {TRTLLM_ATTENTION_DP_FILE} && "
        files = ((TRTLLM_ATTENTION_DP_FILE, "enable_attention_dp: true\n"),)
        if par.tp > 1:
            notes.append(
                f"TensorRT-LLM's attention DP runs tp 1 per rank: this plan's tp {par.tp} per rank is not its layout"
            )
    args += ["--max_seq_len", str(dep.max_model_len), "--max_batch_size", str(_running(plan))]
    args += ["--kv_cache_free_gpu_memory_fraction", f"{dep.memory_fraction:.2f}"]
    if dep.engine.max_num_batched_tokens:
        args += ["--max_num_tokens", str(dep.engine.max_num_batched_tokens)]
    native = dep.weights.name == dep.model.native_dtype
    return ServeCommand(
        command=prefix + shlex.join(args),
        args=tuple(args),
        files=files,
        notes=tuple(notes),
        expected_log=(
            f"[MemUsageChange] Allocated {est.memory.kv_budget / units.GiB:.2f} GiB for max tokens in paged KV "
            f"cache ({est.kv.capacity_tokens})",
        ),
        needs_quantized_checkpoint=not native,
    )


def _vllm_command(plan: Plan) -> ServeCommand:
    dep = plan.deployment
    est = plan.estimate
    par, release, notes = dep.parallel, dep.engine.release, []
    args = ["vllm", "serve", dep.model.hf_id or dep.model.id, "--tensor-parallel-size", str(par.tp)]
    if par.pp > 1:
        args += ["--pipeline-parallel-size", str(par.pp)]
    if par.dp > 1:
        args += ["--data-parallel-size", str(par.dp), "--enable-expert-parallel"]
        if not release.at_least(VLLM_DATA_PARALLEL_FROM):
            notes.append(f"{release.name}: vllm serve with --data-parallel-size is known from vLLM 0.8.3 on")
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
        args=tuple(args),
        expected_log=expected,
        needs_quantized_checkpoint=not native and dep.weights.name in CHECKPOINT_FORMATS,
        notes=tuple(notes),
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
