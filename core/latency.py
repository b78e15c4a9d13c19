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

from core.budget import gpu_memory, sequence_kv_bytes
from core.deployment import Deployment
from core.engine import Parallelism
from core.levers import Levers
from core.lora import lora_bytes_read, lora_flops
from core.memory import kv_bytes_per_sequence, weight_bytes
from core.model import ModelSpec
from core.offload import host_read_seconds, spilled_kv_bytes
from core.params import parameter_counts
from core.precision import ACTIVATION_PRECISION
from core.prefix import cached_prompt_tokens
from core.speculative import expected_tokens_per_step, proposer_model

FLOPS_PER_MAC = 2  # a multiply-add is 2 FLOPs
ALLREDUCES_PER_LAYER = 2  # Megatron TP: after attention's output projection and after the MLP
RING_ALLREDUCE_FACTOR = 2  # a ring all-reduce moves 2 (n - 1) / n of the message per GPU


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


def attended_pairs(new_tokens, context, window=None):
    """Query-key pairs one sequence's new tokens score in one layer [count].

    Token i (1..n) attends to context + i keys, or at most ``window`` in a sliding layer:
    full = n c + n (n + 1) / 2; windowed = m c + m (m + 1) / 2 + (n - m) W, m = clip(W - c, 0, n).
    """
    n = np.asarray(new_tokens, dtype=float)
    c = np.asarray(context, dtype=float)
    if window is None:
        return n * c + n * (n + 1) / 2
    m = np.clip(window - c, 0, n)
    return m * c + m * (m + 1) / 2 + (n - m) * window


def attention_flops(model: ModelSpec, sequences, new_tokens, context):
    """Score and value FLOPs of all layers [FLOP] = 2 x heads x (qk dim + v dim) x pairs x layers."""
    per_pair = FLOPS_PER_MAC * model.num_heads * (model.q_head_dim + model.v_head_dim)
    sliding = model.num_sliding_layers
    pairs = (model.num_layers - sliding) * attended_pairs(new_tokens, context)
    if sliding:
        pairs = pairs + sliding * attended_pairs(new_tokens, context, model.sliding_window)
    return np.asarray(sequences, dtype=float) * pairs * per_pair


def linear_flops(model: ModelSpec, sequences, new_tokens):
    """Matmul FLOPs [FLOP] = 2 x active body params x tokens + 2 x vocab x hidden x sequences.

    Only each sequence's last token goes through the LM head (the engine samples from it).
    """
    p = parameter_counts(model)
    body = p.active_matmul - p.lm_head
    tokens = np.asarray(sequences, dtype=float) * np.asarray(new_tokens, dtype=float)
    logits = model.vocab_size * model.hidden_size * np.asarray(sequences, dtype=float)
    return FLOPS_PER_MAC * (body * tokens + logits)


def experts_touched_fraction(model: ModelSpec, tokens_per_step):
    """Expected fraction of a layer's routed experts that receive at least one of the step's tokens.

    1 - (1 - k / E) ^ tokens, assuming each token picks its k experts uniformly and independently:
    k / E at one token, approaching 1 as the batch grows (dense models: 1).
    """
    if model.moe is None:
        return np.ones_like(np.asarray(tokens_per_step, dtype=float))
    miss = 1 - model.moe.experts_per_token / model.moe.num_experts
    return 1 - miss ** np.asarray(tokens_per_step, dtype=float)


def weight_bytes_read(dep: Deployment, tokens_per_step):
    """Weight bytes one step reads on the whole replica [bytes].

    Everything except the embedding table (only looked up row by row), with routed experts scaled
    by the fraction touched; a tied LM head reads the embedding matrix.
    """
    w = weight_bytes(dep.model, dep.weights)
    head = w.lm_head or w.embedding
    dense_part = w.layers - w.routed_experts + head
    return dense_part + w.routed_experts * experts_touched_fraction(dep.model, tokens_per_step)


def comm_seconds(dep: Deployment, tokens, steps):
    """All-reduce and pipeline-send time of a phase [s].

    TP: (2 x layers + 1) all-reduces per step (the +1 for the vocab-parallel embedding), each
    latency + 2 (tp - 1) / tp x tokens x hidden x 2 B / (link bandwidth x link eff.).
    PP: per stage boundary, latency + tokens x hidden x 2 B / (link x eff.) per step.
    """
    par, eff = dep.parallel, dep.efficiency
    if par.num_gpus == 1:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    link = dep.gpu.link_bandwidth * eff.link
    message_bytes = np.asarray(tokens, dtype=float) * dep.model.hidden_size * ACTIVATION_PRECISION.bytes_per_element
    steps = np.asarray(steps, dtype=float)
    total = np.zeros_like(message_bytes)
    if par.tp > 1:
        count = ALLREDUCES_PER_LAYER * dep.model.num_layers + 1
        ring = RING_ALLREDUCE_FACTOR * (par.tp - 1) / par.tp
        total = total + count * (steps * eff.allreduce_latency_s + ring * message_bytes / link)
    if par.pp > 1:
        total = total + (par.pp - 1) * (steps * eff.allreduce_latency_s + message_bytes / link)
    return total


def phase_time(dep: Deployment, sequences, new_tokens, context, steps) -> PhaseTime:
    """Roofline time of ``sequences`` x ``new_tokens`` tokens on top of ``context`` cached ones."""
    tp = dep.parallel.tp
    sequences = np.asarray(sequences, dtype=float)
    steps = np.asarray(steps, dtype=float)
    tokens = sequences * np.asarray(new_tokens, dtype=float)
    # KV: read the cached context and write the new tokens, per GPU (heads split by tp)
    kv = sequences * kv_bytes_per_sequence(dep.model, dep.kv, Parallelism(tp=tp), np.asarray(context) + new_tokens)
    budget, _ = dep.engine.batch_limits(dep.gpu.memory_bytes, dep.gpu.name)
    spilled = 0.0
    if dep.levers.offload.kv_bytes:  # the part of the batch's KV beyond the GPU budget is read from the host
        in_use = sequences * sequence_kv_bytes(dep, np.asarray(context) + new_tokens)
        spilled = steps * spilled_kv_bytes(in_use, gpu_memory(dep).kv_budget, dep.levers.offload.kv_bytes)
    return work_time(
        dep,
        linear=linear_flops(dep.model, sequences, new_tokens),
        attention=attention_flops(dep.model, sequences, new_tokens, context),
        weights=steps * weight_bytes_read(dep, tokens / steps),
        kv_per_gpu=kv,
        tokens=tokens,
        steps=steps,
        # each sequence is scheduled in every step that processes a chunk of it
        sequence_steps=sequences * np.maximum(1.0, np.asarray(new_tokens, dtype=float) / budget),
        host_bytes=spilled,
    )


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


def prefill_steps(dep: Deployment, sequences, input_len):
    """Engine steps to prefill ``sequences`` prompts: max(1, tokens / max_num_batched_tokens).

    At least one whole step (a lone short prompt still reads every weight once); beyond that
    fractional, because a continuous-batching engine tops a part-filled last chunk up with other
    work, so each prompt token costs its share of a step rather than a whole extra step.
    """
    budget, _ = dep.engine.batch_limits(dep.gpu.memory_bytes, dep.gpu.name)
    return np.maximum(1.0, np.asarray(sequences, dtype=float) * np.asarray(input_len, dtype=float) / budget)


def prefill_time(dep: Deployment, sequences, input_len) -> PhaseTime:
    """Prefill of ``sequences`` prompts arriving together, in chunks of max_num_batched_tokens.

    With prefix caching only the uncached tokens are computed, attending to the cached ones; a
    speculative proposer with its own weights (draft model, MTP head) prefills the prompt too.
    """
    prefix = dep.levers.prefix
    cached = cached_prompt_tokens(prefix, input_len, dep.engine.block_size) if "prefix" in dep.levers.active else 0.0
    new = np.asarray(input_len, dtype=float) - cached
    steps = prefill_steps(dep, sequences, new)
    phase = phase_time(dep, sequences, new, cached, steps)
    proposer = proposer_deployment(dep)
    if proposer is None:
        return phase
    proposer_s = phase_time(proposer, sequences, new, cached, steps).seconds
    return dataclasses.replace(phase, proposer_s=proposer_s)


def plain_decode_step_time(dep: Deployment, sequences, context) -> PhaseTime:
    """One decode step without speculation: every sequence adds one token to ``context`` cached ones."""
    return phase_time(dep, sequences, 1, context, 1)


def decode_step_time(dep: Deployment, sequences, context) -> PhaseTime:
    """Decode time per emitted token of every running sequence (what TPOT is).

    Plain decoding: one step. Speculative: (k proposer passes + one verification of k + 1 tokens
    per sequence) / E, E = expected tokens per step (:func:`core.speculative.expected_tokens_per_step`);
    every part of the returned time is divided by E, so its bound is the verification's. The
    proposer's passes run inside the engine step, so they cost their roofline time only; the
    step's fixed overhead is counted once, in the verification. Per-sequence host work (sampling,
    detokenizing, output processing) is counted per emitted token, so speculation does not
    amortize it.
    """
    spec = dep.levers.speculative
    if spec is None:
        return plain_decode_step_time(dep, sequences, context)
    verify = phase_time(dep, sequences, spec.k + 1, context, 1)
    proposer = proposer_deployment(dep)
    draft_s = 0.0
    if proposer is not None:  # inside the engine step: scheduling and sampling overheads are the verify's, once
        draft = plain_decode_step_time(proposer, sequences, context)
        draft_s = spec.k * (draft.seconds - draft.overhead_s)
    emitted = expected_tokens_per_step(spec.acceptance, spec.k)
    # host work per sequence (sampling, detokenizing, output) grows with the tokens it emits
    host_per_token = (emitted - 1) * np.asarray(sequences, dtype=float) * dep.efficiency.per_sequence_overhead_s
    step = dataclasses.replace(verify, proposer_s=draft_s, overhead_s=verify.overhead_s + host_per_token)
    return step.per(emitted)


def proposer_deployment(dep: Deployment) -> Deployment | None:
    """The speculative proposer as a deployment on the same GPUs and formats, or None when there
    is no GPU proposer (no speculation, or n-gram lookup)."""
    spec = dep.levers.speculative
    model = None if spec is None else proposer_model(dep.model, spec)
    if model is None:
        return None
    return Deployment(
        model=model,
        gpu=dep.gpu,
        weights=dep.weights,
        kv=dep.kv,
        parallel=dep.parallel,
        engine=dataclasses.replace(dep.engine, max_model_len=None),
        levers=Levers(),
    )
