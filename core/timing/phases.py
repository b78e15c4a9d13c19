"""TODO docstring."""

from __future__ import annotations

import dataclasses

import numpy as np

from core.levers.offload import spilled_kv_bytes
from core.levers.prefix import cached_prompt_tokens
from core.levers.settings import Levers
from core.levers.speculative import expected_tokens_per_step, proposer_model
from core.memory.budget import gpu_memory
from core.memory.kv import kv_bytes_per_sequence
from core.memory.request_kv import sequence_kv_bytes
from core.spec.deployment import Deployment
from core.spec.engine import Parallelism
from core.timing.roofline import PhaseTime, work_time
from core.timing.work import attention_flops, linear_flops, weight_bytes_read


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
