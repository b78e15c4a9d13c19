"""Communication time of a phase: tensor-parallel all-reduces, pipeline-parallel sends and, with
data-parallel attention, the expert-parallel all-to-all.

TP: (blocks + 1) x (latency + 2 (tp - 1) / tp x tokens x hidden x 2 B / (link x eff.)) per step,
    blocks = mixer and FFN blocks (2 x layers for a standard model, one per layer for Nemotron-H)
    + the logits gather: latency + (tp - 1) / tp x rows x vocab x 2 B / (link x eff.) per step,
    rows = the sequences scheduled in the step (:func:`logits_gather_seconds`)
PP: (pp - 1) x (latency + tokens x hidden x 2 B / (link x eff.)) per step
Across servers (more than GPUS_PER_NODE GPUs in the replica): a tensor-parallel group wider than a
server runs its ring at the inter-node link's per-GPU bandwidth (its slowest hop), and a pipeline
boundary between stages on different servers sends over that link (:func:`links`).
EP: MoE layers x 2 (dispatch, combine) x (latency + tokens x k x width x 2 B x (EP - 1) / EP
    / (link x eff.)) per step, tokens those of one rank (dp > 1)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from core.spec.cluster import GPUS_PER_NODE, INTER_NODE_LATENCY_S, INTER_NODE_LINKS
from core.spec.model import ModelSpec
from core.spec.precision import ACTIVATION_PRECISION

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

RING_ALLREDUCE_FACTOR = 2  # a ring all-reduce moves 2 (n - 1) / n of the message per GPU
ALL_TO_ALL_PASSES = 2  # dispatch to the experts' GPUs, then combine back


def comm_seconds(dep: Deployment, tokens, steps, rows=None):
    """All-reduce, logits-gather, pipeline-send and all-to-all time of a phase [s]; ``tokens`` are one
    rank's, ``rows`` the (sequence, step) pairs whose logits are gathered (None: the all-reduces only).

    TP: (mixer and FFN blocks + 1) all-reduces per step (2 x layers + 1 for a standard model; the +1
    for the vocab-parallel embedding), each latency + 2 (tp - 1) / tp x tokens x hidden x 2 B /
    (link bandwidth x link eff.); with dp > 1 inside a rank only; and :func:`logits_gather_seconds`.
    PP: per stage boundary, latency + tokens x hidden x 2 B / (link x eff.) per step.
    EP (dp > 1): :func:`all_to_all_seconds`.
    """
    par, eff = dep.parallel, dep.efficiency
    if par.num_gpus == 1:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    tp_link, tp_latency, in_node, across = links(dep)
    message_bytes = np.asarray(tokens, dtype=float) * dep.model.hidden_size * ACTIVATION_PRECISION.bytes_per_element
    steps = np.asarray(steps, dtype=float)
    total = np.zeros_like(message_bytes)
    if par.tp > 1:
        count = dep.model.num_sublayers + 1
        ring = RING_ALLREDUCE_FACTOR * (par.tp - 1) / par.tp
        total = total + count * (steps * tp_latency + ring * message_bytes / tp_link)
        if rows is not None:
            total = total + logits_gather_seconds(dep, rows, steps)
    if par.pp > 1:
        inter = INTER_NODE_LINKS[dep.inter_node] * eff.link
        total = total + in_node * (
            steps * eff.allreduce_latency_s + message_bytes / (dep.gpu.link_bandwidth * eff.link)
        )
        total = total + across * (steps * INTER_NODE_LATENCY_S + message_bytes / inter)
    if par.dp > 1:
        total = total + all_to_all_seconds(dep, tokens, steps)
    return total


def logits_gather_seconds(dep: Deployment, rows, steps):
    """Gathering the vocab-parallel LM head's logits over the tensor-parallel group [s] = steps x
    latency + (tp - 1) / tp x rows x vocab x 2 B / (link x link eff.); 0 without tensor parallelism.

    vLLM computes the logits of every scheduled sequence's last scheduled token in every step (a
    partial prompt chunk's too, its sample dropped), each GPU a vocab / tp slice, in the model's 16-bit
    dtype (``LogitsProcessor._get_logits``: ``lm_head.quant_method.apply`` then ``_gather_logits``,
    vllm/model_executor/layers/logits_processor.py), and all-gathers them under V1
    (``Platform.use_all_gather``, vllm/platforms/interface.py: True when VLLM_USE_V1): each GPU
    receives the other (tp - 1) slices. E.g. 1000 sequences x 152K vocab x 2 B = 0.30 GB a step.
    """
    par = dep.parallel
    if par.tp == 1:
        return np.zeros_like(np.asarray(rows, dtype=float))
    tp_link, tp_latency, _, _ = links(dep)
    gathered = (par.tp - 1) / par.tp * dep.model.vocab_size * ACTIVATION_PRECISION.bytes_per_element
    return np.asarray(steps, dtype=float) * tp_latency + np.asarray(rows, dtype=float) * gathered / tp_link


def links(dep: Deployment) -> tuple[float, float, int, int]:
    """(the tensor-parallel ring's bandwidth [bytes/s] and latency [s], pipeline boundaries within
    a server, across servers). Stages of tp x dp GPUs fill servers of GPUS_PER_NODE in order:
    floor(8 / (tp dp)) per server, so ceil(pp / that) - 1 boundaries cross (every one when a stage
    is wider than a server). A tp group wider than a server runs at min(GPU link, inter-node link) x
    link eff., each all-reduce at least :data:`core.spec.cluster.INTER_NODE_LATENCY_S`."""
    par, eff = dep.parallel, dep.efficiency
    gpu_link, inter = dep.gpu.link_bandwidth * eff.link, INTER_NODE_LINKS[dep.inter_node] * eff.link
    if par.tp > GPUS_PER_NODE:
        tp_link, tp_latency = min(gpu_link, inter), max(eff.allreduce_latency_s, INTER_NODE_LATENCY_S)
    else:
        tp_link, tp_latency = gpu_link, eff.allreduce_latency_s
    per_server = GPUS_PER_NODE // (par.tp * par.dp)
    across = par.pp - 1 if per_server == 0 else math.ceil(par.pp / per_server) - 1
    return tp_link, tp_latency, par.pp - 1 - across, across


def all_to_all_bytes(model: ModelSpec, tokens, expert_parallel: int):
    """Bytes one GPU sends in one all-to-all pass of one MoE layer [bytes] = tokens x k x width x
    2 B x (EP - 1) / EP: each of its rank's tokens goes to its k experts, of which (EP - 1) / EP
    live on other GPUs (width: the hidden size, or a latent MoE's latent size)."""
    moe = model.moe
    width = moe.latent_size or model.hidden_size
    remote = (expert_parallel - 1) / expert_parallel
    return (
        np.asarray(tokens, dtype=float)
        * moe.experts_per_token
        * width
        * ACTIVATION_PRECISION.bytes_per_element
        * remote
    )


def all_to_all_seconds(dep: Deployment, tokens, steps):
    """Expert-parallel dispatch and combine of a phase [s] = MoE layers x 2 x (steps x latency +
    :func:`all_to_all_bytes` / (GPU link x link eff.)); within one node, over the GPU's link."""
    eff = dep.efficiency
    sent = all_to_all_bytes(dep.model, tokens, dep.parallel.expert_parallel)
    per_pass = np.asarray(steps, dtype=float) * eff.allreduce_latency_s + sent / (dep.gpu.link_bandwidth * eff.link)
    return dep.model.num_moe_layers * ALL_TO_ALL_PASSES * per_pass
