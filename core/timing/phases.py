"""Time of the two phases: prefill of B prompts and one decode step of B sequences.

One code path for both: a *phase* runs ``sequences`` requests, each adding ``new_tokens`` tokens to
``context`` tokens already cached, over ``steps`` engine steps (:func:`phase_time`, the roofline of
:mod:`core.timing.roofline` on the work of :mod:`core.timing.work`). Prefill of B prompts of length
I is (B, I - cached, cached, max(1, B (I - cached) / max_num_batched_tokens)); one decode step is
(B, 1, context, 1). Pipeline stages run one after another for a token, so PP does not shorten a
step. Every function accepts numpy arrays and broadcasts them.

Levers enter through their hooks (:class:`core.levers.base.Lever`), never by name, and the
deployment hands in the ones that are on (:attr:`core.spec.deployment.Deployment.lever_models`), so
this module never imports :mod:`core.levers`: cached prompt tokens skip prefill, models run beside
the target prefill every prompt too (:func:`side_deployments`), KV spilled to host memory is read
every step, and a lever may change what a decode step is (speculative decoding).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from core.memory.budget import gpu_memory
from core.memory.kv import kv_bytes_per_sequence
from core.memory.request_kv import cached_prompt_tokens, sequence_kv_bytes
from core.memory.state import state_traffic_bytes
from core.spec.engine import Parallelism
from core.timing.roofline import PhaseTime, work_time
from core.timing.work import (
    attention_flops,
    expert_bytes_read,
    rank_expert_flops,
    rank_linear_flops,
    weight_bytes_read,
)

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def phase_time(dep: Deployment, sequences, new_tokens, context, steps) -> PhaseTime:
    """Roofline time of ``sequences`` x ``new_tokens`` tokens on top of ``context`` cached ones.

    With data-parallel attention (dp > 1) the step lasts as long as its busiest rank's work
    (:meth:`~core.spec.engine.Parallelism.rank_sequences`): its own sequences' KV, attention and
    non-expert matmuls, its GPUs' share of all ranks' expert routes, the all-to-all of its tokens.
    """
    par = dep.parallel
    tp = par.tp
    sequences = np.asarray(sequences, dtype=float)
    steps = np.asarray(steps, dtype=float)
    tokens = sequences * np.asarray(new_tokens, dtype=float)
    rank = par.rank_sequences(sequences)  # the replica's sequences when dp = 1
    # KV: read the cached context and write the new tokens, per GPU (heads split by tp)
    kv = rank * kv_bytes_per_sequence(dep.model, dep.kv, Parallelism(tp=tp), np.asarray(context) + new_tokens)
    budget, _ = dep.batch_limits
    # each sequence is scheduled in every step that processes a chunk of it
    chunks = np.maximum(1.0, np.asarray(new_tokens, dtype=float) / budget)
    scheduled = rank * chunks
    kv = kv + scheduled * state_traffic_bytes(dep.model, tp)  # a hybrid's state, read and written
    phase = work_time(
        dep,
        linear=rank_linear_flops(dep, sequences, new_tokens),
        attention=attention_flops(dep.model, rank, new_tokens, context),
        weights=steps * weight_bytes_read(dep, tokens / steps),
        expert_weights=steps * expert_bytes_read(dep, tokens / steps),
        expert_linear=rank_expert_flops(dep, sequences, new_tokens),
        kv_per_gpu=kv,
        tokens=tokens if par.dp == 1 else rank * np.asarray(new_tokens, dtype=float),
        steps=steps,
        sequence_steps=scheduled,
        frontend_steps=None if par.dp == 1 else sequences * chunks,
        host_bytes=_spilled_kv_bytes(dep, rank, np.asarray(context) + new_tokens, steps),
    )
    if dep.engine.backend == "aic":  # the optional measured-kernel backend: its kernels, the rest as above
        from core.timing.aic_backend import aic_phase

        return aic_phase(dep, phase, sequences, new_tokens, context, steps)
    return phase


def _spilled_kv_bytes(dep: Deployment, sequences, tokens, steps):
    """KV per GPU the phase reads from host memory: what levers spill beyond the GPU budget, every step."""
    levers = dep.lever_models
    if not levers:
        return 0.0
    spilled = [
        lever.spilled_kv_bytes(
            dep, lambda: sequences * sequence_kv_bytes(dep, tokens), lambda: gpu_memory(dep).kv_budget
        )
        for lever in levers
    ]
    if all(isinstance(s, float) and s == 0.0 for s in spilled):
        return 0.0
    return steps * sum(spilled)


def side_deployments(dep: Deployment) -> tuple[Deployment, ...]:
    """Models the levers that are on run beside the target on the same GPUs, prefilling every
    prompt too (:meth:`core.levers.base.Lever.side_deployment`: a speculative proposer)."""
    return tuple(side for lever in dep.lever_models if (side := lever.side_deployment(dep)) is not None)


def prefill_steps(dep: Deployment, sequences, input_len):
    """Engine steps to prefill ``sequences`` prompts: max(1, tokens / max_num_batched_tokens), with
    dp > 1 the tokens of the busiest rank.

    At least one whole step (a lone short prompt still reads every weight once); beyond that
    fractional, because a continuous-batching engine tops a part-filled last chunk up with other
    work, so each prompt token costs its share of a step rather than a whole extra step.
    """
    budget, _ = dep.batch_limits
    rank = dep.parallel.rank_sequences(np.asarray(sequences, dtype=float))  # each rank has its own budget
    return np.maximum(1.0, rank * np.asarray(input_len, dtype=float) / budget)


def prefill_time(dep: Deployment, sequences, input_len) -> PhaseTime:
    """Prefill of ``sequences`` prompts arriving together, in chunks of max_num_batched_tokens.

    Only the prompt tokens not found cached are computed, attending to the cached ones; models run
    beside the target (a speculative proposer with weights of its own) prefill the prompt too.
    """
    cached = cached_prompt_tokens(dep, input_len)
    new = np.asarray(input_len, dtype=float) - cached
    steps = prefill_steps(dep, sequences, new)
    phase = phase_time(dep, sequences, new, cached, steps)
    sides = side_deployments(dep)
    if not sides:
        return phase
    side_s = sum(phase_time(side, sequences, new, cached, steps).gpu_seconds for side in sides)
    return dataclasses.replace(phase, side_s=side_s)


def plain_decode_step_time(dep: Deployment, sequences, context) -> PhaseTime:
    """One decode step as it is without levers that change it: every sequence adds one token."""
    return phase_time(dep, sequences, 1, context, 1)


def decode_step_time(dep: Deployment, sequences, context) -> PhaseTime:
    """Decode time per emitted token of every running sequence at ``context`` cached tokens (what
    TPOT is): one plain step, unless a lever changes what a step is
    (:meth:`core.levers.base.Lever.decode_step`)."""
    for lever in dep.lever_models:
        step = lever.decode_step(dep, sequences, context)
        if step is not None:
            return step
    return plain_decode_step_time(dep, sequences, context)


def decode_time_ratio(dep: Deployment, sequences, context) -> float:
    """Decode time per emitted token over one plain step's at this batch and context: 1 unless a
    lever changes what a decode step is (the simulator scales its plain decode steps by it)."""
    for lever in dep.lever_models:
        step = lever.decode_step(dep, sequences, context)
        if step is not None:
            return float(step.seconds / plain_decode_step_time(dep, sequences, context).seconds)
    return 1.0
