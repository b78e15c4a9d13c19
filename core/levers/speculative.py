"""Speculative decoding: tokens gained per verification step, the proposer's model and memory.

Each step proposes k tokens and the target verifies all of them (plus one of its own) in one
forward pass of k + 1 tokens. With per-token acceptance alpha (Leviathan et al. 2023, arXiv
2211.17192, eq. 1) the expected number of tokens a step emits is

    E = (1 - alpha^(k+1)) / (1 - alpha)        (k + 1 at alpha = 1, 1 at alpha = 0)

and the time per emitted token is (k x proposer step + verification step) / E; the step times come
from the roofline (:func:`core.latency.speculative_decode_step`). At batch 1 decode is bound by
reading the weights, so verifying k + 1 tokens costs about as much as one and the gain is close to
E / (1 + k x draft/target); as the batch grows the verification's k + 1 tokens per sequence make
the step compute-bound and the gain turns into a loss.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from core.levers.settings import Speculative
from core.memory.kv import kv_bytes_per_sequence
from core.memory.weights import weight_bytes
from core.spec.model import ModelSpec
from core.spec.precision import Precision

ACCEPTANCE_RANGES = {
    # per-token acceptance alpha; sources in docs/model.md ("Speculative decoding")
    "draft": (0.6, 0.8),
    "mtp": (0.7, 0.9),
    "ngram": (0.2, 0.8),
}
"""Typical per-token acceptance of each proposer, shown next to the slider (docs/model.md)."""


def expected_tokens_per_step(acceptance, k):
    """Expected tokens one verification step emits [tokens] = (1 - a^(k+1)) / (1 - a), k + 1 at a = 1."""
    a = np.asarray(acceptance, dtype=float)
    k = np.asarray(k, dtype=float)
    safe = np.where(a < 1.0, a, 0.0)
    value = np.where(a < 1.0, (1 - safe ** (k + 1)) / (1 - safe), k + 1)
    return float(value) if value.ndim == 0 else value


def proposer_model(target: ModelSpec, spec: Speculative) -> ModelSpec | None:
    """The model that runs k times per step: the draft, one decoder layer of the target's shape
    (MTP / EAGLE heads, which share the target's embedding and LM head), or None for n-gram
    lookup (done on the host, no GPU work)."""
    if spec.method == "draft":
        return spec.draft
    if spec.method == "ngram":
        return None
    moe = dataclasses.replace(target.moe, num_dense_layers=0) if target.moe else None
    return dataclasses.replace(
        target,
        id=f"{target.id}-mtp",
        name=f"{target.name} MTP head",
        num_layers=1,
        moe=moe,
        sliding_layers=(),
        sliding_window=None,
        params_total_published=None,
        params_active_published=None,
    )


def check_draft(target: ModelSpec, spec: Speculative) -> None:
    """Raise when the draft cannot propose tokens for the target (vLLM requires one vocabulary)."""
    if spec.draft is None:
        return
    if spec.draft.vocab_size != target.vocab_size:
        raise ValueError(
            f"the draft {spec.draft.name} has a vocabulary of {spec.draft.vocab_size} tokens and "
            f"{target.name} one of {target.vocab_size}; a draft must share the target's tokenizer"
        )
    if spec.draft.id == target.id:
        raise ValueError("the draft model must be smaller than the target, not the same model")


def proposer_weight_bytes(target: ModelSpec, spec: Speculative, weights: Precision) -> float:
    """Extra weights the proposer adds to the replica [bytes]: the whole draft, only the MTP
    layer (embedding and head are shared with the target), nothing for n-gram lookup."""
    model = proposer_model(target, spec)
    if model is None:
        return 0.0
    w = weight_bytes(model, weights)
    return w.total if spec.method == "draft" else w.layers


def proposer_kv_bytes(target: ModelSpec, spec: Speculative, kv: Precision, par, tokens, block_size: int = 1):
    """KV cache the proposer keeps for one sequence of ``tokens`` tokens on one GPU [bytes]."""
    model = proposer_model(target, spec)
    if model is None:
        return np.zeros_like(np.asarray(tokens, dtype=float)) if np.ndim(tokens) else 0.0
    return kv_bytes_per_sequence(model, kv, par, tokens, block_size)
