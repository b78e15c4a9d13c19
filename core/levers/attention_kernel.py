"""Attention kernels: eager attention materializes the score matrix, FlashAttention does not.

Eager attention (Hugging Face transformers' ``eager_attention_forward``) computes
Q K^T for every head, softmaxes it in float32 and multiplies by V: for n new tokens attending to
c + n keys it holds, one layer at a time,

    scores = sequences x heads per GPU x n x (c + n) x (2 B for the 16-bit scores + 4 B float32 softmax)

which is quadratic in the prompt length when a whole prompt is prefilled at once. FlashAttention-
style kernels (vLLM's default backends) tile the computation in on-chip memory and never write the
matrix, so their extra memory is linear in the sequence (Dao et al. 2022, arXiv 2205.14135).
An engine that profiles its peak at start-up (vLLM) charges the largest step's scores to the
activation peak: one max_num_batched_tokens chunk attending to at most max_model_len keys.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from core.levers.base import Lever, PartLabel
from core.memory.budget import MemoryPart
from core.messages import gib_text, notice
from core.spec.model import ModelSpec
from core.spec.precision import ACTIVATION_PRECISION

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

SOFTMAX_FP32_BYTES = 4  # eager softmax runs in float32 (softmax(..., dtype=torch.float32))
SCORE_BYTES_PER_ELEMENT = ACTIVATION_PRECISION.bytes_per_element + SOFTMAX_FP32_BYTES


def heads_per_gpu(model: ModelSpec, tp: int) -> int:
    return max(1, model.num_heads // tp)


def score_matrix_bytes(model: ModelSpec, tp: int, sequences, new_tokens, context=0):
    """Eager attention's score matrix of one layer on one GPU [bytes] (array-friendly)."""
    n = np.asarray(new_tokens, dtype=float)
    pairs = np.asarray(sequences, dtype=float) * n * (np.asarray(context, dtype=float) + n)
    value = heads_per_gpu(model, tp) * pairs * SCORE_BYTES_PER_ELEMENT
    return float(value) if value.ndim == 0 else value


def eager_profile_bytes(model: ModelSpec, tp: int, max_num_batched_tokens: int, max_model_len: int) -> float:
    """Scores of the largest engine step [bytes]: a chunk of max_num_batched_tokens tokens whose
    sequences attend to at most max_model_len keys each (chunk x min(chunk, max_model_len) pairs)."""
    keys = min(max_num_batched_tokens, max_model_len)
    return heads_per_gpu(model, tp) * max_num_batched_tokens * keys * SCORE_BYTES_PER_ELEMENT


def eager_oom_prompt_len(model: ModelSpec, tp: int, free_bytes: float) -> int:
    """Longest prompt whose whole-prompt score matrix fits ``free_bytes`` [tokens]:
    floor(sqrt(free / (heads per GPU x bytes per score))); 0 when nothing is free."""
    if free_bytes <= 0:
        return 0
    return math.isqrt(int(free_bytes // (heads_per_gpu(model, tp) * SCORE_BYTES_PER_ELEMENT)))


class EagerAttentionLever(Lever):
    """Eager attention as a memory term: the largest step's score matrix, in the activation peak."""

    name = "attention"
    part_labels = (PartLabel("attention_scores", "eager attention scores"),)

    def memory_parts(self, dep: Deployment, max_num_batched_tokens: int) -> tuple[MemoryPart, ...]:
        scores = eager_profile_bytes(dep.model, dep.parallel.tp, max_num_batched_tokens, dep.max_model_len)
        return (MemoryPart("attention_scores", scores, "gpu_peak"),)

    def notices(self, dep: Deployment, workload, memory):
        if scores := memory.part("attention_scores"):
            yield notice("eager_scores", scores=gib_text(scores))


LEVER = EagerAttentionLever()
