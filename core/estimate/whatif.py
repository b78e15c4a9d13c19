"""What each lever does to one workload: the figures with it and without it, side by side.

For every lever that is on, the deployment is estimated again with that lever alone turned off,
so each comparison isolates one lever (the others stay as set). The Explorer's "Optimizations"
panel, ``python -m core estimate`` and its JSON all read these figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.estimate.result import Estimate, estimate
from core.levers.attention_kernel import eager_oom_prompt_len, eager_profile_bytes
from core.levers.lora import lora_bytes_per_adapter, max_adapters_beside_kv
from core.levers.offload import spilled_kv_bytes, weights_offload_to_fit
from core.levers.prefix import cached_prompt_tokens, shared_prefix_tokens
from core.levers.settings import Levers, Offload, PrefixCaching
from core.levers.speculative import expected_tokens_per_step
from core.memory.state import kv_block_size
from core.spec.deployment import Deployment, Workload
from core.timing.host_link import host_read_bandwidth, host_read_seconds
from core.timing.phases import decode_step_time, plain_decode_step_time

OFFLOAD_GRANULARITY = 2.0**30  # vLLM's --cpu-offload-gb takes GiB


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The workload's headline figures without the lever and with it."""

    without: Estimate
    with_: Estimate

    def values(self, metric: str) -> tuple[float, float]:
        """(without, with) of ``tpot``, ``ttft``, ``throughput`` or ``concurrency``."""
        return metric_value(self.without, metric), metric_value(self.with_, metric)

    def ratio(self, metric: str) -> float:
        """with / without of ``metric``."""
        without, with_ = self.values(metric)
        return with_ / without if without else float("inf")


def metric_value(e: Estimate, metric: str) -> float:
    """One headline figure of an estimate: tpot / ttft [s], throughput [tokens/s], concurrency."""
    return {
        "tpot": e.latency.tpot_s,
        "ttft": e.latency.ttft_s,
        "throughput": e.throughput.output_tokens_per_s,
        "concurrency": float(e.kv.max_concurrency_at_request_len),
    }[metric]


@dataclass(frozen=True, kw_only=True)
class SpeculativeEffect:
    comparison: Comparison
    tokens_per_step: float
    """Expected tokens one verification step emits, (1 - a^(k+1)) / (1 - a)."""
    proposer_bytes: float
    """Proposer weights per GPU [bytes]."""
    break_even_batch: int | None
    """Largest batch at which speculation still lowers TPOT (None: it lowers it up to max_num_seqs;
    0: not even at batch 1)."""


@dataclass(frozen=True, kw_only=True)
class PrefixEffect:
    comparison: Comparison
    shared_tokens: float
    """Shared-prefix tokens in whole blocks, held once [tokens]."""
    cached_tokens: float
    """Prompt tokens per request that skip prefill [tokens]."""
    shared_bytes: float
    """KV of the shared prefix per GPU [bytes]."""


@dataclass(frozen=True, kw_only=True)
class OffloadEffect:
    comparison: Comparison
    host_bandwidth: float
    """Achievable host-to-GPU bandwidth [bytes/s]."""
    weights_s_per_step: float
    """Reading the offloaded weights, added to every step [s]."""
    spilled_bytes: float
    """KV of the workload's batch held beyond the GPU budget, read every decode step [bytes]."""
    spill_s_per_step: float
    weights_needed_to_fit: float
    """Least weight offload (whole GiB) for one max_model_len request to fit, 0 if it fits [bytes]."""


@dataclass(frozen=True, kw_only=True)
class LoraEffect:
    comparison: Comparison
    bytes_per_adapter: float
    """One adapter's weights (16-bit, whole replica) [bytes]."""
    max_adapters: int
    """Most adapter slots that leave the workload's batch its KV cache."""


@dataclass(frozen=True, kw_only=True)
class AttentionEffect:
    comparison: Comparison
    profile_bytes: float
    """Eager score matrix of the engine's largest step, charged at start-up [bytes]."""
    oom_prompt_len: int
    """Longest prompt whose whole-prompt eager score matrix fits the memory FlashAttention leaves for KV."""


@dataclass(frozen=True, kw_only=True)
class WhatIf:
    result: Estimate
    speculative: SpeculativeEffect | None = None
    prefix: PrefixEffect | None = None
    offload: OffloadEffect | None = None
    lora: LoraEffect | None = None
    attention: AttentionEffect | None = None


def break_even_batch(dep: Deployment, context: float) -> int | None:
    """Largest batch (up to max_num_seqs) at which speculative decoding still lowers the time per
    token; None when it does up to max_num_seqs, 0 when it does not even at batch 1."""
    _, max_seqs = dep.batch_limits
    batches = np.arange(1, max_seqs + 1)
    gain = plain_decode_step_time(dep, batches, context).seconds > decode_step_time(dep, batches, context).seconds
    if gain.all():
        return None
    return int(np.argmin(gain))  # gain falls with batch: the first loss's index is the last gain's batch


def what_if(dep: Deployment, work: Workload) -> WhatIf:
    """The workload with the deployment's levers, and each lever's effect against it turned off."""
    result = estimate(dep, work)
    levers: Levers = dep.levers
    effects = {}

    def compare(**off) -> Comparison:
        return Comparison(without=estimate(dep.with_levers(**off), work), with_=result)

    if (spec := levers.speculative) is not None:
        effects["speculative"] = SpeculativeEffect(
            comparison=compare(speculative=None),
            tokens_per_step=expected_tokens_per_step(spec.acceptance, spec.k),
            proposer_bytes=result.memory.part("proposer"),
            break_even_batch=break_even_batch(dep, work.decode_context),
        )
    if "prefix" in levers.active:
        block = kv_block_size(dep)
        effects["prefix"] = PrefixEffect(
            comparison=compare(prefix=PrefixCaching()),
            shared_tokens=shared_prefix_tokens(levers.prefix, work.input_len, block),
            cached_tokens=cached_prompt_tokens(levers.prefix, work.input_len, block),
            shared_bytes=result.kv.shared_prefix_bytes,
        )
    if "offload" in levers.active:
        mem = result.memory
        spilled = spilled_kv_bytes(mem.kv_in_use, mem.kv_budget, levers.offload.kv_bytes)
        effects["offload"] = OffloadEffect(
            comparison=compare(offload=Offload()),
            host_bandwidth=host_read_bandwidth(dep.gpu, dep.efficiency),
            weights_s_per_step=host_read_seconds(dep.gpu, dep.efficiency, levers.offload.weights_bytes),
            spilled_bytes=spilled,
            spill_s_per_step=host_read_seconds(dep.gpu, dep.efficiency, spilled),
            weights_needed_to_fit=weights_to_fit(dep),
        )
    if (lora := levers.lora) is not None:
        without = estimate(dep.with_levers(lora=None), work)
        effects["lora"] = LoraEffect(
            comparison=Comparison(without=without, with_=result),
            bytes_per_adapter=lora_bytes_per_adapter(dep.model, lora),
            max_adapters=max_adapters_beside_kv(
                dep.model, lora, dep.parallel.tp, without.memory.kv_space, result.memory.kv_in_use
            ),
        )
    if levers.attention == "eager":
        flash = estimate(dep.with_levers(attention="flash"), work)
        tokens, _ = dep.batch_limits
        effects["attention"] = AttentionEffect(
            comparison=Comparison(without=flash, with_=result),
            profile_bytes=eager_profile_bytes(dep.model, dep.parallel.tp, tokens, dep.max_model_len),
            oom_prompt_len=eager_oom_prompt_len(dep.model, dep.parallel.tp, flash.memory.kv_budget),
        )
    return WhatIf(result=result, **effects)


def weights_to_fit(dep: Deployment) -> float:
    """Least weight offload per GPU (whole GiB) that lets one max_model_len request fit, whatever is
    offloaded now [bytes]; 0 when it fits without offloading weights."""
    without = dep.with_levers(offload=Offload(kv_bytes=dep.levers.offload.kv_bytes))
    current = estimate(without, Workload(input_len=1, output_len=1))
    needed = current.kv.bytes_per_max_len_request - current.memory.host_kv
    return weights_offload_to_fit(current.memory.kv_budget, needed, OFFLOAD_GRANULARITY)
