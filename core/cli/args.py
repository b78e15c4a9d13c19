"""Command-line arguments shared by ``estimate`` and ``check``: the deployment and its engine."""

from __future__ import annotations

import argparse

from core.energy.power import DEFAULT_PUE, DEFAULT_USD_PER_KWH, EnergyInputs
from core.levers.settings import (
    ATTENTION_KERNELS,
    LORA_TARGETS,
    SPEC_METHODS,
    Levers,
    Lora,
    Offload,
    PrefixCaching,
    Speculative,
)
from core.levers.speculative import ACCEPTANCE_RANGES
from core.messages import message
from core.spec import units
from core.spec.catalog import Catalog, resolve, resolve_gpu, resolve_model
from core.spec.cluster import DEFAULT_INTER_NODE, GPUS_PER_NODE, INTER_NODE_LINKS
from core.spec.deployment import Deployment
from core.spec.efficiency import ENDPOINTS
from core.spec.engine import STEP_TIME_BACKENDS, EngineConfig, Parallelism
from core.spec.engine_defaults import sized_max_model_len
from core.spec.gpu import GpuSpec
from core.spec.names import ModelMatch
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, weight_precision
from core.spec.release import CURRENT, ENGINES, NEWEST, Release, parse_release
from core.spec.support import kv_for
from core.spec.vllm_limits import batched_tokens_error, lora_rank_error
from core.timing.aic_backend import coverage as aic_coverage


class UsageError(Exception):
    """A bad argument: reported in one line, exit status 2."""


MODEL_HELP = (
    "catalog id, Hugging Face id (an instruct, dated or quantized upload too), Ollama-style name "
    "(llama3.1:8b) or path to config.json"
)


def deployment_arguments(parser: argparse.ArgumentParser, max_model_len_default: str) -> None:
    parser.add_argument("--model", required=True, help=MODEL_HELP)
    parser.add_argument("--gpu", required=True, help="catalog GPU id or a name as people type it: h100, rtx4090, a10g")
    parser.add_argument("--num-gpus", type=int, help="GPUs of the replica (default tp x pp x dp)")
    parser.add_argument("--tp", type=int, help="tensor-parallel degree per rank (default num-gpus / (pp x dp))")
    parser.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    parser.add_argument(
        "--dp",
        type=int,
        default=1,
        help="data-parallel attention ranks, MoE models only: the experts split over tp x dp GPUs (default 1)",
    )
    parser.add_argument(
        "--inter-node",
        choices=list(INTER_NODE_LINKS),
        default=DEFAULT_INTER_NODE,
        help=f"link between servers of {GPUS_PER_NODE} GPUs, used when the replica spans several "
        f"(default {DEFAULT_INTER_NODE})",
    )
    parser.add_argument("--weight-dtype", help=f"one of {', '.join(WEIGHT_PRECISIONS)} (default: checkpoint's)")
    parser.add_argument("--kv-dtype", default="auto", help=f"auto or one of {', '.join(KV_PRECISIONS)}")
    parser.add_argument(
        "--engine",
        default="vllm",
        help=f"serving engine the numbers are for: {', '.join(ENGINES)} (default vllm)",
    )
    parser.add_argument(
        "--engine-version",
        help="its release, e.g. 0.6.3 or 0.19.1 (default: the newest checked against start-up logs, "
        + ", ".join(f"{ENGINES[e]} {v}" for e, v in CURRENT.items())
        + f"; vLLM releases after {NEWEST['vllm']} are refused)",
    )
    parser.add_argument(
        "--endpoint",
        choices=list(ENDPOINTS),
        default="chat",
        help="how clients reach the engine: chat (/v1/chat/completions), completions (/v1/completions), "
        "offline (in-process, no API server); default chat",
    )
    parser.add_argument(
        "--backend",
        choices=list(STEP_TIME_BACKENDS),
        default="roofline",
        help="what gives each step's GPU time: roofline (default) or aic (NVIDIA AIConfigurator's measured "
        'kernels where it covers the GPU, engine and model; pip install ".[aic]")',
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        type=float,
        help="the engine's memory fraction (SGLang: mem_fraction_static, TensorRT-LLM: "
        "kv_cache_free_gpu_memory_fraction); default: the engine's",
    )
    parser.add_argument("--max-model-len", type=int, help=f"default: {max_model_len_default}")
    parser.add_argument("--max-num-batched-tokens", type=int, help="default: the engine's for the GPU")
    parser.add_argument("--max-num-seqs", type=int, help="default: the engine's for the GPU")
    parser.add_argument(
        "--block-size", type=int, help="tokens per KV block (default: vLLM 16, SGLang 1, TensorRT-LLM 32)"
    )
    lever_arguments(parser)


def lever_arguments(parser: argparse.ArgumentParser) -> None:
    """What-if levers (README: "Optimizations"); all off unless given."""
    group = parser.add_argument_group("optimizations (what-if levers)")
    group.add_argument("--draft-model", help="speculative decoding with this catalog or HF draft model")
    group.add_argument(
        "--speculative-method",
        choices=SPEC_METHODS,
        help="draft (needs --draft-model), ngram (prompt lookup) or mtp (multi-token-prediction heads)",
    )
    group.add_argument("--num-speculative-tokens", type=int, help="draft tokens k per step (default 4)")
    group.add_argument(
        "--spec-acceptance",
        type=float,
        help="per-token acceptance 0-1 (default: the middle of the method's typical range, docs/model.md)",
    )
    group.add_argument("--prefix-cache-tokens", type=int, help="prefix caching: tokens every prompt shares")
    group.add_argument("--prefix-hit-rate", type=float, help="prefix caching: share of the rest found cached (0-1)")
    group.add_argument("--cpu-offload-gb", type=float, help="GiB of weights per GPU kept in host memory")
    group.add_argument("--kv-offload-gb", type=float, help="GiB per GPU of host memory for KV beyond the budget")
    group.add_argument("--max-loras", type=int, help="LoRA adapters resident on the GPU")
    group.add_argument("--max-lora-rank", type=int, help="LoRA rank (default 16)")
    group.add_argument("--lora-targets", choices=LORA_TARGETS, help="LoRA target modules (default all-linear)")
    group.add_argument("--attention", choices=ATTENTION_KERNELS, default="flash", help="attention kernel")


def levers_from_args(args: argparse.Namespace, catalog: Catalog) -> Levers:
    method = args.speculative_method or ("draft" if args.draft_model else None)
    if method is None and (args.num_speculative_tokens is not None or args.spec_acceptance is not None):
        raise UsageError("--num-speculative-tokens and --spec-acceptance need --draft-model or --speculative-method")
    if method == "draft" and not args.draft_model:
        raise UsageError("--speculative-method draft needs --draft-model")
    if method not in (None, "draft") and args.draft_model:
        raise UsageError(f"--draft-model goes with --speculative-method draft, not {method}")
    speculative = None
    if method is not None:
        low, high = ACCEPTANCE_RANGES[method]
        speculative = Speculative(
            method=method,
            draft=resolve_model(args.draft_model, catalog) if args.draft_model else None,
            k=4 if args.num_speculative_tokens is None else args.num_speculative_tokens,
            acceptance=(low + high) / 2 if args.spec_acceptance is None else args.spec_acceptance,
        )
    if args.max_loras is None and (args.max_lora_rank is not None or args.lora_targets is not None):
        raise UsageError("--max-lora-rank and --lora-targets need --max-loras")
    lora = None
    if args.max_loras is not None:
        lora = Lora(
            adapters=args.max_loras,
            rank=16 if args.max_lora_rank is None else args.max_lora_rank,
            targets=args.lora_targets or "all-linear",
        )
    return Levers(
        speculative=speculative,
        prefix=PrefixCaching(shared_tokens=args.prefix_cache_tokens or 0, hit_rate=args.prefix_hit_rate or 0.0),
        offload=Offload(
            weights_bytes=(args.cpu_offload_gb or 0.0) * units.GiB, kv_bytes=(args.kv_offload_gb or 0.0) * units.GiB
        ),
        lora=lora,
        attention=args.attention,
    )


def parallelism_from_args(args: argparse.Namespace) -> Parallelism:
    pp, dp = args.pp, getattr(args, "dp", 1)
    tp = args.tp
    if tp is None:
        num = args.num_gpus or pp * dp
        if num % (pp * dp):
            raise UsageError(f"--num-gpus ({num}) must be a multiple of --pp x --dp ({pp} x {dp})")
        tp = num // (pp * dp)
    if args.num_gpus is not None and args.num_gpus != tp * pp * dp:
        raise UsageError(f"--num-gpus ({args.num_gpus}) must equal --tp x --pp x --dp ({tp} x {pp} x {dp})")
    return Parallelism(tp=tp, pp=pp, dp=dp)


def release_from_args(args: argparse.Namespace) -> Release:
    try:
        return parse_release(args.engine, args.engine_version)
    except ValueError as err:
        raise UsageError(str(err)) from None


def deployment_from_args(
    args: argparse.Namespace, catalog: Catalog, longest_request: int | None
) -> tuple[Deployment, ModelMatch]:
    """The deployment the arguments describe, and what ``--model`` resolved to. max_model_len is
    ``--max-model-len`` when given, else sized to ``longest_request``
    (:func:`core.spec.engine_defaults.sized_max_model_len`), else the engine's default (the model's context)."""
    match = resolve(args.model, catalog, online=True)
    model = match.deployed_model()
    max_model_len = args.max_model_len
    if max_model_len is None and longest_request is not None:
        max_model_len = sized_max_model_len(longest_request, model.max_context)
    parallel = parallelism_from_args(args)
    if (problem := parallel.data_parallel_error(model)) is not None:
        raise UsageError(f"--dp: {problem}")
    gpu = resolve_gpu(args.gpu, catalog)
    weights = weight_precision(args.weight_dtype or model.native_dtype)
    deployment = Deployment(
        model=model,
        gpu=gpu,
        weights=weights,
        kv=kv_for(args.kv_dtype, weights, gpu),
        parallel=parallel,
        engine=EngineConfig(
            release=release_from_args(args),
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=max_model_len,
            max_num_batched_tokens=args.max_num_batched_tokens,
            max_num_seqs=args.max_num_seqs,
            block_size=args.block_size,
            endpoint=getattr(args, "endpoint", "chat"),
            backend=getattr(args, "backend", "roofline"),
        ),
        levers=levers_from_args(args, catalog),
        inter_node=args.inter_node,
    )
    if deployment.engine.backend == "aic" and (why := aic_coverage(deployment)):
        raise UsageError(f"--backend aic: {why}")
    if deployment.engine.release.engine == "vllm":
        tokens, seqs = deployment.batch_limits
        problem = batched_tokens_error(tokens, seqs) if args.max_num_batched_tokens is not None else None
        lora = deployment.levers.lora
        problem = problem or (lora_rank_error(lora.rank) if lora is not None else None)
        if problem:
            raise UsageError(problem)
    return deployment, match


def heading(args: argparse.Namespace, match: ModelMatch, weights: str, gpu: GpuSpec | None = None) -> str:
    """The answer's first lines: what ``--model`` resolved to, and what ``--gpu`` did when it was a
    name read by :mod:`core.spec.gpu_names` rather than the catalog's id or name."""
    lang = getattr(args, "lang", "en")
    lines = [message("names.model_line", lang, summary=match.describe(weights, lang))]
    lines += [message("hostile_config.note", lang, text=notice) for notice in match.notices(lang)]
    typed = (getattr(args, "gpu", None) or "").strip()
    if gpu is not None and typed.lower() not in (gpu.id.lower(), gpu.name.lower()):
        lines.append(message("names.gpu_line", lang, typed=typed, name=gpu.name, id=gpu.id))
    return "\n".join(lines) + "\n"


def energy_arguments(parser: argparse.ArgumentParser) -> None:
    """--electricity-usd-per-kwh and --pue: the inputs of the energy bill (:mod:`core.energy.power`)."""
    parser.add_argument(
        "--electricity-usd-per-kwh",
        type=float,
        default=DEFAULT_USD_PER_KWH,
        help=f"electricity price for the energy figures [USD/kWh] (default {DEFAULT_USD_PER_KWH}, an assumption)",
    )
    parser.add_argument(
        "--pue",
        type=float,
        default=DEFAULT_PUE,
        help="power usage effectiveness, a multiplier for the facility (default 1.0 = GPU boards only)",
    )


def energy_inputs_from_args(args: argparse.Namespace) -> EnergyInputs:
    try:
        return EnergyInputs(usd_per_kwh=args.electricity_usd_per_kwh, pue=args.pue)
    except ValueError as err:
        flag = "--pue" if "pue" in str(err) else "--electricity-usd-per-kwh"
        raise UsageError(f"{flag}: {err}") from None
