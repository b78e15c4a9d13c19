"""The work of a phase: matmul and attention FLOPs, the query-key pairs attention scores, and the
weight bytes a step reads (routed experts only as far as the step's tokens touch them).

    matmul FLOPs = 2 x active body params x tokens + 2 x vocab x hidden x sequences (LM head)
    attention FLOPs = 2 x heads x (qk dim + v dim) x attended pairs x attention layers
                      (+ DeepSeek-V3.2's indexer: 2 x index heads x index dim x all pairs x layers)

A hybrid's Gated DeltaNet / Mamba2 layers do no attention: their projections are in the matmul
FLOPs, their recurrence (order heads x dk x dv per token) is left out, and their state traffic is
counted with the KV bytes (:func:`core.memory.state.state_traffic_bytes`).

With data-parallel attention (dp > 1) the work is that of one rank, the busiest: its own
sequences through the attention, dense and shared-expert layers, and its GPUs' share of every
rank's expert routes (:func:`rank_linear_flops`, :func:`weight_bytes_read`); the roofline then
splits it over the rank's tp GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.memory.weights import expert_share_per_gpu, weight_bytes
from core.spec.model import ModelSpec
from core.spec.params import parameter_counts

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

FLOPS_PER_MAC = 2  # a multiply-add is 2 FLOPs


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
    """Score and value FLOPs of the attention layers [FLOP] = 2 x heads x (qk dim + v dim) x pairs
    x layers; with a sparse indexer each query attends to at most top-k keys, and the indexer
    scores every pair with its own small heads."""
    per_pair = FLOPS_PER_MAC * model.num_heads * (model.q_head_dim + model.v_head_dim)
    sliding = model.num_sliding_layers
    full = model.num_attention_layers - sliding
    if model.indexer is not None:
        ix = model.indexer
        selected = full * attended_pairs(new_tokens, context, ix.topk) * per_pair
        scored = full * attended_pairs(new_tokens, context) * FLOPS_PER_MAC * ix.num_heads * ix.head_dim
        return np.asarray(sequences, dtype=float) * (selected + scored)
    pairs = full * attended_pairs(new_tokens, context)
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


def routed_expert_flops(model: ModelSpec, tokens):
    """Matmul FLOPs of the routed experts the tokens are sent to [FLOP] = 2 x routed params x k / E
    x tokens (the routed part of :func:`linear_flops`; 0 for dense models)."""
    p = parameter_counts(model)
    return FLOPS_PER_MAC * p.routed_experts * p.experts_active_fraction * np.asarray(tokens, dtype=float)


def _rank_expert_scale(dep: Deployment) -> float:
    """Routed-expert work of the whole replica that one rank's tp GPUs take, as a share: tp x the
    share one GPU holds (1/dp when E divides over tp x dp)."""
    return expert_share_per_gpu(dep.model, dep.parallel) * dep.parallel.tp


def rank_linear_flops(dep: Deployment, sequences, new_tokens):
    """Matmul FLOPs of the busiest rank [FLOP]: :func:`linear_flops` of its own sequences, with the
    routed experts' part replaced by its GPUs' share of all ``sequences`` x ``new_tokens`` routes
    (:func:`linear_flops` itself when dp = 1)."""
    if dep.parallel.dp == 1:
        return linear_flops(dep.model, sequences, new_tokens)
    rank = dep.parallel.rank_sequences(sequences)
    tokens = np.asarray(sequences, dtype=float) * np.asarray(new_tokens, dtype=float)
    own = linear_flops(dep.model, rank, new_tokens) - routed_expert_flops(dep.model, rank * np.asarray(new_tokens))
    return own + routed_expert_flops(dep.model, tokens) * _rank_expert_scale(dep)


def rank_expert_flops(dep: Deployment, sequences, new_tokens):
    """The routed-expert part of :func:`rank_linear_flops` [FLOP]: all routes of the replica's tokens,
    or with dp > 1 the busiest rank's GPUs' share of every rank's routes."""
    tokens = np.asarray(sequences, dtype=float) * np.asarray(new_tokens, dtype=float)
    flops = routed_expert_flops(dep.model, tokens)
    return flops if dep.parallel.dp == 1 else flops * _rank_expert_scale(dep)


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
    """Weight bytes one step reads on the whole replica, or with dp > 1 on one rank [bytes].

    Everything except the embedding table (only looked up row by row), with routed experts scaled
    by the fraction touched; a tied LM head reads the embedding matrix. With dp > 1 a rank reads
    its own copy of the non-expert weights and its GPUs' share of the experts, of which the
    fraction the replica's ``tokens_per_step`` (all ranks') touch.
    """
    w = weight_bytes(dep.model, dep.weights)
    head = w.lm_head or w.embedding
    dense_part = w.layers - w.routed_experts + head
    return dense_part + expert_bytes_read(dep, tokens_per_step)


def expert_bytes_read(dep: Deployment, tokens_per_step):
    """Routed-expert weight bytes one step reads on the whole replica (dp > 1: on one rank) [bytes]:
    the part of :func:`weight_bytes_read` the MoE kernels read (0 for dense models)."""
    if dep.model.moe is None:
        return np.zeros_like(np.asarray(tokens_per_step, dtype=float))
    w = weight_bytes(dep.model, dep.weights)
    touched = w.routed_experts * experts_touched_fraction(dep.model, tokens_per_step)
    return touched if dep.parallel.dp == 1 else touched * _rank_expert_scale(dep)
