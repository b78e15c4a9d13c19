"""The optional measured-kernel backend: each step's GPU time from NVIDIA AIConfigurator.

``pip install ".[aic]"`` installs ``aiconfigurator-core`` (pinned, Apache-2.0; data/kernels/NOTICE.md);
a deployment asks for it with ``EngineConfig(backend="aic")`` (CLI ``--backend aic``). Where the package
covers the GPU, the engine, the model and its formats (:func:`coverage`), the kernels and collectives
of every step come from its measured tables (:class:`core.timing.aic_tables.AicTables`: D, A_dec, G,
A_ctx), and everything else stays the project's: memory, scheduling, the step and layer overheads,
host cost per sequence, host-link reads, the API front end and the request delay. For a step of B
decoding sequences at C cached tokens (their mean) and prompt chunks i of n_i new tokens on c_i cached:

    AIC kernels = D(B, C) + G(T) - G(B) + sum_i A_ctx(n_i, c_i)      T = B + sum_i n_i  [s]
                  (B = 0: G(T) + sum_i A_ctx(n_i, c_i); no chunk: D(B, C))
    a phase of P prompts of n new tokens on c cached over k steps:
                  k G(P n / k) + P A_ctx(n, c)
    GPU time    = AIC kernels + steps x (step overhead + layers x layer overhead)
                  + (sequence, step) pairs x host overhead per sequence + host-link reads
    time        = max(GPU time, (sequence, step) pairs x front-end work per token)

It replaces the roofline's kernel classes and all-reduce time (:mod:`core.timing.roofline`) and no
other term. Core imports and runs without the package: nothing here imports it until a deployment
asks for the aic backend. Models are built only from the configs the package ships and reads offline
(or a shipped config of the same layer shapes, :data:`SAME_SHAPES`), never fetched. The tables are
those of AIConfigurator's queryable version of the engine on that system, which is named in the answer
(:func:`step_time_backend`) beside the release the rest of the answer is for.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
from typing import TYPE_CHECKING

import numpy as np

from core.timing.host_link import host_read_seconds
from core.timing.roofline import PhaseTime, step_fixed_seconds

if TYPE_CHECKING:
    from core.spec.deployment import Deployment
    from core.timing.aic_tables import AicTables

PACKAGE, PIN = "aiconfigurator-core", "0.12.0"
SYSTEMS = {  # catalog GPU id -> AIConfigurator system with measured tables (tools/derive_kernel_rates.py)
    "h100-sxm": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "b300": "b300_sxm",
    "gb200": "gb200",
    "a100-80gb": "a100_sxm",
    "l40s": "l40s",
    "rtx-pro-6000-server": "rtx_pro_6000_server",
}
GEMM_MODES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4", "int4": "int4_wo"}
KV_MODES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8"}
LEVERS_KEPT = ("prefix", "offload")
"""Levers that change only what the project models around the kernels (cached prompt tokens, host reads)."""


SAME_SHAPES = {  # Hugging Face id -> a shipped config of the same layer shapes (hidden, FFN, layers, heads, vocab)
    "meta-llama/llama-3.3-70b": "meta-llama/llama-3.1-70b",
    "meta-llama/llama-3-8b": "meta-llama/llama-3.1-8b",
}


class NotCovered(ValueError):
    """A deployment asked for the aic backend where it does not apply; the message says why."""


def installed_version() -> str | None:
    """The installed aiconfigurator-core's version, or None."""
    if importlib.util.find_spec("aiconfigurator_core") is None:
        return None
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def bundled_models() -> dict[str, str]:
    """The Hugging Face ids whose configs the package ships and reads offline (its ``DefaultHFModels``;
    any other id it would fetch from the Hub, which this backend never asks it to), by :func:`_model_key`."""
    from aiconfigurator_core.sdk.common import DefaultHFModels

    return {_model_key(i): i for i in sorted(DefaultHFModels)}


def _model_key(hf_id: str) -> str:
    """An id compared without case, the "Meta-" of Meta's early names, or an "-Instruct"/"-hf" suffix."""
    org, _, name = hf_id.lower().rpartition("/")
    name = name.removeprefix("meta-").removesuffix("-instruct").removesuffix("-hf")
    return f"{org}/{name}"


def aic_model_id(dep: Deployment) -> str | None:
    """The shipped config AIConfigurator builds the deployment's model from, or None."""
    key = _model_key(dep.model.hf_id or dep.model.id)
    return bundled_models().get(SAME_SHAPES.get(key, key))


def _static_problem(dep: Deployment) -> str | None:
    """Why the deployment is not covered, from its settings alone (no table built), or None."""
    version = installed_version()
    if version is None:
        return f'{PACKAGE} is not installed (pip install ".[aic]")'
    if version != PIN:
        return f"{PACKAGE} {version} is installed; this backend is pinned to {PIN}"
    if dep.gpu.id not in SYSTEMS:
        return f"{dep.gpu.name} has no AIConfigurator system with measured tables (covered: {', '.join(SYSTEMS)})"
    if aic_model_id(dep) is None:
        return f"AIConfigurator {PIN} ships no config for {dep.model.hf_id or dep.model.id}, so it cannot build it"
    if dep.weights.name not in GEMM_MODES:
        return f"AIConfigurator has no {dep.weights.label} GEMM tables in this backend"
    if dep.kv.name not in KV_MODES:
        return f"AIConfigurator has no {dep.kv.label} KV-cache tables"
    if dep.parallel.dp > 1 or dep.parallel.pp > 1:
        return "data-parallel attention and pipeline parallelism are not wired to this backend (tp only)"
    if other := [lever.name for lever in dep.lever_models if lever.name not in LEVERS_KEPT]:
        return f"the {', '.join(other)} lever changes the step's kernels, which AIConfigurator's tables do not model"
    return None


def _compile_key(dep: Deployment) -> tuple:
    gemm = GEMM_MODES[dep.weights.name]
    if gemm == "fp8" and dep.model.native_dtype.lower() == "fp8":
        gemm = "fp8_block"  # published FP8 checkpoints are block-scaled (core.timing.kernel_speed)
    system = SYSTEMS[dep.gpu.id]
    return aic_model_id(dep), system, dep.engine.release.engine, dep.parallel.tp, gemm, KV_MODES[dep.kv.name]


@functools.cache
def _database_version(system: str, engine: str) -> str | None:
    from aiconfigurator_core.sdk import perf_database

    return perf_database.get_latest_database_version(system, engine)


@functools.cache
def _tables(model_id: str, system: str, engine: str, tp: int, gemm: str, kv: str) -> AicTables | str:
    """The deployment's tables, or why AIConfigurator could not make them (one line)."""
    from core.timing.aic_tables import AicTables

    version = _database_version(system, engine)
    if version is None:
        return f"AIConfigurator {PIN} has no {engine} tables for {system}"
    # attention in bf16 first (AIConfigurator's default for FP8 weights is FP8 attention, which its tables
    # often lack), then its default
    for attention in ({"fmha_quant_mode": "bfloat16"}, {}):
        try:
            return AicTables.build(
                model_id,
                system,
                engine,
                version,
                tp_size=tp,
                moe_tp_size=tp,
                gemm_quant_mode=gemm,
                kvcache_quant_mode=kv,
                **attention,
            )
        except Exception as err:  # the package raises its own error types for models, formats and systems it lacks
            first = (str(err).strip().splitlines() or [type(err).__name__])[0].split(" at /")[0]
    return f"AIConfigurator {PIN} cannot build {model_id} on {system} ({engine}, tp {tp}, {gemm}): {first[:200]}"


def coverage(dep: Deployment) -> str | None:
    """Why the aic backend does not cover ``dep`` (one line), or None when it does (its tables then built)."""
    problem = _static_problem(dep)
    if problem is None:
        tables = _tables(*_compile_key(dep))
        problem = tables if isinstance(tables, str) else None
    return problem


def tables(dep: Deployment) -> AicTables:
    """The covered deployment's tables; :class:`NotCovered` with the reason otherwise."""
    if problem := coverage(dep):
        raise NotCovered(f"backend aic: {problem}")
    return _tables(*_compile_key(dep))


def step_time_backend(dep: Deployment) -> str:
    """What gave the step times: "roofline", or "aic 0.12.0 (h100_sxm, vllm 0.24.0)"."""
    if dep.engine.backend != "aic":
        return "roofline"
    _, system, engine, *_ = _compile_key(dep)
    return f"aic {PIN} ({system}, {engine} {_database_version(system, engine)})"


def _kernels(t: AicTables, decodes, context, tokens, chunk_attention) -> np.ndarray:
    """AIC kernels of a step (module docstring) from its decodes B at ``context``, its T tokens and
    its chunks' attention [s]."""
    decodes = np.asarray(decodes, dtype=float)
    tokens = np.asarray(tokens, dtype=float)
    with_decodes = t.decode_s(decodes, context) + t.linear_s(tokens) - t.linear_s(decodes)
    return np.where(decodes > 0, with_decodes, t.linear_s(tokens)) + chunk_attention


def aic_phase(dep: Deployment, phase: PhaseTime, sequences, new_tokens, context, steps) -> PhaseTime:
    """:func:`core.timing.phases.phase_time`'s roofline ``phase`` with its kernels and all-reduces
    from AIConfigurator: a decode step (one new token each) D(B, C), else k G(P n / k) + P A_ctx(n, c)."""
    t = tables(dep)
    sequences, new, steps = (np.asarray(v, dtype=float) for v in (sequences, new_tokens, steps))
    decode = (new == 1) & (steps == 1)
    prefill_attention = sequences * t.prefill_attention_s(new, context)
    prefill = steps * t.linear_s(sequences * new / steps) + prefill_attention
    kernels = np.where(decode, t.decode_s(sequences, context), prefill)
    attention = np.where(decode, t.decode_attention_s(sequences, context), prefill_attention)
    return dataclasses.replace(phase, kernels_s=kernels, comm_s=0.0, moe_s=0.0, attention_s=attention)


def aic_mixed(dep: Deployment, phase: PhaseTime, batch, context, chunk, chunk_context) -> PhaseTime:
    """:func:`core.timing.steady_state.mixed_step_time`'s roofline ``phase`` with its kernels and
    all-reduces from AIConfigurator: B decodes at ``context`` and one chunk (module docstring)."""
    t = tables(dep)
    chunk = np.asarray(chunk, dtype=float)
    attention = np.where(chunk > 0, t.prefill_attention_s(chunk, chunk_context), 0.0)
    kernels = _kernels(t, batch, context, np.asarray(batch, dtype=float) + chunk, attention)
    return dataclasses.replace(phase, kernels_s=kernels, comm_s=0.0, moe_s=0.0, attention_s=attention)


class AicStepModel:
    """The simulator's step durations (:class:`core.serving.step_cost.StepModel`'s interface) with
    AIC kernels and the project's overheads and front end (module docstring) [s]."""

    def __init__(self, dep: Deployment) -> None:
        self.dep, self.tables = dep, tables(dep)
        eff = dep.efficiency
        self.fixed_s, self.per_sequence_s = step_fixed_seconds(dep), eff.per_sequence_overhead_s
        self.levers = dep.lever_models
        self._linear_by_tokens: dict[float, float] = {}

    def _around(self, kernels, sequences, tokens) -> np.ndarray:
        """Kernels plus the project's step, sequence and host costs: the engine's step, as StepModel's (the
        API server's per-token work delays delivery in the simulator, core.serving.delivery, not the step)."""
        host = 0.0
        for lever in self.levers:
            host += float(np.sum(lever.step_work(self.dep, tokens, sequences, 1.0).host_bytes))
        gpu = kernels + self.fixed_s + sequences * self.per_sequence_s
        if host:
            gpu = gpu + host_read_seconds(self.dep.gpu, self.dep.efficiency, host)
        return np.asarray(gpu, dtype=float)

    def decode_step(self, cached: np.ndarray, context: int) -> float:
        """One token for every sequence on its ``cached`` tokens (``context`` = sum(cached + 1))."""
        n = cached.size
        return float(self._around(self.tables.decode_s(n, context / n - 1.0), n, float(n)))

    def decode_steps(self, cached: np.ndarray, context: int, steps: int) -> np.ndarray:
        """``steps`` of :meth:`decode_step`, the j-th on cached + j tokens."""
        n = cached.size
        mean = context / n - 1.0 + np.arange(steps, dtype=float)
        return self._around(self.tables.decode_s(n, mean), n, float(n))

    def batch_step(self, decoding: np.ndarray, chunks) -> float:
        """Decodes on ``decoding`` cached tokens and prompt chunks of (new, cached) tokens."""
        b = decoding.size
        new = np.array([size for size, _ in chunks], dtype=float)
        cached = np.array([c for _, c in chunks], dtype=float)
        attention = float(np.sum(self.tables.prefill_attention_s(new, cached))) if chunks else 0.0
        tokens = b + float(new.sum())
        kernels = self._linear(tokens) + attention  # _kernels on scalars, G memoized by token count
        if b:
            kernels += float(self.tables.decode_s(b, float(decoding.mean()))) - self._linear(float(b))
        return float(self._around(kernels, b + len(chunks), tokens))

    def _linear(self, tokens: float) -> float:
        if tokens not in self._linear_by_tokens:
            self._linear_by_tokens[tokens] = float(self.tables.linear_s(tokens))
        return self._linear_by_tokens[tokens]

    def step(self, new: np.ndarray, cached: np.ndarray) -> float:
        """One step in which sequence i adds new[i] tokens to cached[i] cached ones."""
        return self.batch_step(np.zeros(0, dtype=np.int64), list(zip(new.tolist(), cached.tolist(), strict=True)))
