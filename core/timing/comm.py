"""Communication time of a phase: tensor-parallel all-reduces and pipeline-parallel sends.

TP: (blocks + 1) x (latency + 2 (tp - 1) / tp x tokens x hidden x 2 B / (link x eff.)) per step,
    blocks = mixer and FFN blocks (2 x layers for a standard model, one per layer for Nemotron-H)
PP: (pp - 1) x (latency + tokens x hidden x 2 B / (link x eff.)) per step
"""

from __future__ import annotations

import numpy as np

from core.spec.deployment import Deployment
from core.spec.precision import ACTIVATION_PRECISION

RING_ALLREDUCE_FACTOR = 2  # a ring all-reduce moves 2 (n - 1) / n of the message per GPU


def comm_seconds(dep: Deployment, tokens, steps):
    """All-reduce and pipeline-send time of a phase [s].

    TP: (mixer and FFN blocks + 1) all-reduces per step (2 x layers + 1 for a standard model; the +1
    for the vocab-parallel embedding), each latency + 2 (tp - 1) / tp x tokens x hidden x 2 B /
    (link bandwidth x link eff.).
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
        count = dep.model.num_sublayers + 1
        ring = RING_ALLREDUCE_FACTOR * (par.tp - 1) / par.tp
        total = total + count * (steps * eff.allreduce_latency_s + ring * message_bytes / link)
    if par.pp > 1:
        total = total + (par.pp - 1) * (steps * eff.allreduce_latency_s + message_bytes / link)
    return total
