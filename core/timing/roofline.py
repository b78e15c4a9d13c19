"""Roofline time of engine work: FLOPs, bytes and all-reduce traffic of a phase, and which bound won.

One code path for prefill and decode: a *phase* runs ``sequences`` requests, each adding
``new_tokens`` tokens to ``context`` tokens already cached, over ``steps`` engine steps.
Prefill of B prompts of length I is (B, I, 0, max(1, B I / max_num_batched_tokens)); one decode
step is (B, 1, context, 1). Every function accepts numpy arrays and broadcasts them.

    time = max(FLOPs / (peak x compute eff.), bytes / (bandwidth x bandwidth eff.))
           + all-reduce time + steps x fixed step overhead
           + host reads of offloaded weights and spilled KV + the speculative proposer's passes

Levers (:mod:`core.levers`) enter here once, so every view that times work sees them: prefix
caching shortens the prefill to the uncached tokens, speculative decoding turns a decode step into
k proposer passes plus one verification of k + 1 tokens per E emitted tokens, offloading adds host
reads to every step, LoRA adds adapter FLOPs and reads.

Work is per GPU: tensor parallel divides FLOPs and weight bytes by tp (KV bytes per GPU follow
the head split); pipeline stages run one after another for a token, so PP does not shorten a
step and adds a point-to-point send per stage boundary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.levers.lora import lora_bytes_read, lora_flops
from core.levers.offload import host_read_seconds
from core.spec.deployment import Deployment
from core.spec.precision import ACTIVATION_PRECISION
from core.timing.comm import comm_seconds


@dataclass(frozen=True)
class PhaseTime:
    """Time of a phase on one replica [s], with the parts that make it (scalars or arrays)."""

    compute_s: object
    memory_s: object
    comm_s: object
    overhead_s: object
    flops: object
    """FLOPs one GPU executes in the phase [FLOP]."""
    bytes_moved: object
    """Bytes one GPU reads or writes from memory in the phase [bytes]."""
    host_s: object = 0.0
    """Reading offloaded weights and spilled KV over the host link [s]."""
    proposer_s: object = 0.0
    """The speculative proposer's passes (draft model or MTP head) [s]."""

    @property
    def seconds(self):
        return np.maximum(self.compute_s, self.memory_s) + self.comm_s + self.overhead_s + self.host_s + self.proposer_s

    def per(self, count) -> PhaseTime:
        """Every part divided by ``count`` (e.g. per emitted token of a speculative step)."""
        return PhaseTime(**{f.name: np.asarray(getattr(self, f.name)) / count for f in dataclasses.fields(self)})

    @property
    def bound(self):
        """'compute' or 'memory' (bandwidth), whichever roofline term is larger."""
        label = np.where(np.asarray(self.compute_s) >= np.asarray(self.memory_s), "compute", "memory")
        return label if label.ndim else str(label)


def work_time(
    dep: Deployment,
    *,
    linear,
    attention,
    weights,
    kv_per_gpu,
    tokens,
    steps,
    sequence_steps=0.0,
    comm_s=None,
    host_bytes=0.0,
) -> PhaseTime:
    """The roofline of given work on one replica: FLOPs and weight bytes of the whole replica (split
    over tp GPUs), KV bytes per GPU, tokens through the all-reduces, and the number of engine steps.
    ``sequence_steps`` counts (sequence, step) pairs for the per-sequence host overhead; ``comm_s``
    may pass :func:`comm_seconds` of the same tokens and steps when it is already known;
    ``host_bytes`` are KV bytes per GPU read from host memory. Levers add LoRA adapter FLOPs and
    reads, and every step reads the offloaded weights over the host link."""
    gpu, eff, tp = dep.gpu, dep.efficiency, dep.parallel.tp
    matmul_peak, _ = gpu.flops_for(dep.weights)
    attention_peak, _ = gpu.flops_for(ACTIVATION_PRECISION)
    lora = dep.levers.lora
    if lora is not None:
        per_step = np.asarray(sequence_steps, dtype=float) / np.asarray(steps, dtype=float)
        linear = np.asarray(linear, dtype=float) + lora_flops(dep.model, lora, tokens)
        weights = np.asarray(weights, dtype=float) + lora_bytes_read(dep.model, lora, per_step, steps)
    linear = np.asarray(linear, dtype=float) / tp
    attention = np.asarray(attention, dtype=float) / tp
    moved = np.asarray(weights, dtype=float) / tp + kv_per_gpu
    offloaded = dep.levers.offload.weights_bytes
    no_host_reads = not offloaded and isinstance(host_bytes, float) and host_bytes == 0.0
    host = 0.0 if no_host_reads else np.asarray(steps, dtype=float) * offloaded + host_bytes
    return PhaseTime(
        compute_s=(linear / matmul_peak + attention / attention_peak) / eff.compute,
        memory_s=moved / (gpu.memory_bandwidth * eff.bandwidth),
        comm_s=comm_seconds(dep, tokens, steps) if comm_s is None else comm_s,
        overhead_s=np.asarray(steps, dtype=float) * eff.step_overhead_s
        + np.asarray(sequence_steps, dtype=float) * eff.per_sequence_overhead_s,
        flops=linear + attention,
        bytes_moved=moved,
        host_s=host_read_seconds(gpu, eff, host),
    )
