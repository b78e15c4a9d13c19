"""One question, one answer: memory, concurrency ceiling, latency and throughput of a deployment.

:func:`estimate` composes the formulas of :mod:`core.memory`, :mod:`core.memory.capacity` and
:mod:`core.timing` for one workload (B identical requests of I prompt and O answer tokens):

    TTFT = request overhead + prefill of B prompts arriving together (the last one's first token)
    TPOT = one decode step of B sequences at the mean context I + O / 2
    E2E  = TTFT + (O - 1) x TPOT
    output tokens/s = B x O / E2E;  total tokens/s = B x (I + O) / E2E

with B the batch the engine admits (at most max_num_seqs and what the KV cache holds); a larger
batch waits in rounds (:mod:`core.estimate.scope`), which also gives the steady state of B
closed-loop clients.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from core.estimate.burst import BurstTtft, burst_ttft
from core.estimate.scope import ClosedLoop, admitted_batch, closed_loop, rounds
from core.estimate.warnings import estimate_warnings
from core.memory.budget import GpuMemory, gpu_memory
from core.memory.capacity import KvCapacity, kv_capacity
from core.memory.request_kv import batch_kv_bytes
from core.messages import Notice
from core.spec.deployment import Deployment, Workload, check_fits_context, decode_context
from core.timing.phases import decode_step_time, prefill_time
from core.timing.roofline import PhaseTime


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
    """The engine's flag: per data-parallel rank when dp > 1 (:attr:`max_running` is the replica's)."""
    memory: GpuMemory
    kv: KvCapacity
    latency: Latency
    throughput: Throughput
    fits: bool
    warnings: tuple[Notice, ...]
    running_batch: int
    """Requests the engine runs at once: the batch, capped by max_num_seqs and the KV cache."""

    @property
    def max_running(self) -> int:
        """The most requests the replica's scheduler admits = max_num_seqs x dp (each rank has its own)."""
        return self.max_num_seqs * self.deployment.parallel.dp

    @functools.cached_property
    def closed_loop(self) -> ClosedLoop:
        """The same B as closed-loop clients at steady state (what a serving benchmark measures);
        computed when read, so the estimates that fixes and solvers run by the dozen do not pay for it."""
        return closed_loop(self.deployment, self.workload, self.closed_loop_running)

    @functools.cached_property
    def burst(self) -> BurstTtft:
        """Median, P99 and last TTFT of the B requests arriving together as vLLM V1 admits them
        (:mod:`core.estimate.burst`); computed when read."""
        return burst_ttft(self)

    @property
    def closed_loop_running(self) -> int:
        """Requests closed-loop clients keep running at once: V1 admits on a prompt's blocks and
        preempts when the cache runs out, so a full cache holds requests at their mean length in
        flight, I + O / 2, not at their last token (at most the clients and max_num_seqs)."""
        work = self.workload
        if self.running_batch >= min(work.batch, self.max_running) or self.memory.kv_budget <= 0:
            return self.running_batch
        mean = kv_capacity(self.deployment, self.memory.kv_space, work.input_len + work.output_len // 2, work.input_len)
        return admitted_batch(work.batch, mean.max_concurrency_at_request_len, self.max_running)

    @property
    def engine_starts(self) -> bool:
        """vLLM refuses to start unless one max_model_len request fits the KV budget; SGLang and
        TensorRT-LLM start and cap the request length at the pool instead."""
        if self.deployment.engine.release.engine != "vllm":
            return self.memory.kv_budget > 0
        return self.kv.max_concurrency_at_max_model_len >= 1

    @property
    def bound_prefill(self) -> str:
        return self.latency.prefill.bound

    @property
    def bound_decode(self) -> str:
        return self.latency.decode.bound


def latency_and_throughput(dep: Deployment, batch, input_len, output_len) -> tuple[Latency, Throughput]:
    """Timings for B requests of I + O tokens; B, I and O may be numpy arrays (they broadcast)."""
    prefill = prefill_time(dep, batch, input_len)
    decode = decode_step_time(dep, batch, decode_context(input_len, output_len))
    ttft, tpot = prefill.seconds + dep.efficiency.request_delay_s(batch), decode.seconds
    e2e = ttft + (output_len - 1) * tpot
    latency = Latency(ttft_s=ttft, tpot_s=tpot, e2e_s=e2e, prefill=prefill, decode=decode)
    throughput = Throughput(
        output_tokens_per_s=batch * output_len / e2e,
        total_tokens_per_s=batch * (input_len + output_len) / e2e,
        decode_tokens_per_s=batch / tpot,
    )
    return latency, throughput


def arriving_together(dep: Deployment, batch, running, input_len, output_len) -> tuple[Latency, Throughput]:
    """B requests arriving together of which R run at once (arrays broadcast): timings at R, the
    last request waiting ceil(B / R) - 1 rounds of E2E(R) (:mod:`core.estimate.scope`)."""
    latency, throughput = latency_and_throughput(dep, running, input_len, output_len)
    batch = np.asarray(batch, dtype=float)
    # the whole burst is rendered on the API server's loop before any of it is scheduled
    waits = dep.efficiency.request_delay_s(batch) - dep.efficiency.request_delay_s(running)
    ttft = (rounds(batch, running) - 1) * latency.e2e_s + latency.ttft_s + waits
    e2e = ttft + (np.asarray(output_len) - 1) * latency.tpot_s
    latency = Latency(ttft_s=ttft, tpot_s=latency.tpot_s, e2e_s=e2e, prefill=latency.prefill, decode=latency.decode)
    throughput = Throughput(
        output_tokens_per_s=batch * output_len / e2e,
        total_tokens_per_s=batch * (np.asarray(input_len) + output_len) / e2e,
        decode_tokens_per_s=throughput.decode_tokens_per_s,
    )
    return latency, throughput


def estimate(dep: Deployment, workload: Workload, *, enforce_context: bool = True) -> Estimate:
    """Answer the whole question for one deployment and workload (see module docstring).

    A request longer than max_model_len raises, unless ``enforce_context`` is False (the planner
    reports it as its failed context check instead).
    """
    if enforce_context:
        check_fits_context(dep, workload)
    tokens, seqs = dep.batch_limits
    in_use = batch_kv_bytes(dep, workload.batch, workload.request_len, workload.input_len)
    memory = gpu_memory(dep, kv_in_use=in_use)
    kv = kv_capacity(dep, memory.kv_space, workload.request_len, workload.input_len)
    fit = kv.max_concurrency_at_request_len if memory.kv_budget > 0 else workload.batch
    running = admitted_batch(workload.batch, fit, seqs * dep.parallel.dp)  # max_num_seqs is per rank
    latency, throughput = arriving_together(dep, workload.batch, running, workload.input_len, workload.output_len)
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
        warnings=estimate_warnings(dep, workload, memory, kv, seqs, running),
        running_batch=running,
    )
