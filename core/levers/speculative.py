"""Speculative decoding: tokens gained per verification step, the proposer's model and memory.

Each step proposes k tokens and the target verifies all of them (plus one of its own) in one
forward pass of k + 1 tokens. With per-token acceptance alpha (Leviathan et al. 2023, arXiv
2211.17192, eq. 1) the expected number of tokens a step emits is

    E = (1 - alpha^(k+1)) / (1 - alpha)        (k + 1 at alpha = 1, 1 at alpha = 0)

and the time per emitted token is (k x proposer step + verification step) / E; the step times come
from the roofline (:meth:`SpeculativeLever.decode_step`). At batch 1 decode is bound by
reading the weights, so verifying k + 1 tokens costs about as much as one and the gain is close to
E / (1 + k x draft/target); as the batch grows the verification's k + 1 tokens per sequence make
the step compute-bound and the gain turns into a loss.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from core.levers.base import Lever, PartLabel
from core.levers.settings import Levers, Speculative
from core.memory.budget import MemoryPart
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.weights import weight_bytes
from core.messages import notice
from core.spec import units
from core.spec.engine import tensor_split_error
from core.spec.model import ModelSpec
from core.spec.params import parameter_counts
from core.spec.precision import Precision
from core.timing.phases import phase_time

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

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
        attention_chunked=False,
        layer_kinds=(),
        ffn_kinds=(),
        linear_attention=None,
        mamba=None,
        vision=None,
        mtp_layers=0,
        params_total_published=None,
        params_active_published=None,
    )


def draft_problem(target: ModelSpec, draft: ModelSpec) -> str | None:
    """Why ``draft`` cannot draft for ``target``, or None: vLLM needs the target's vocabulary (one
    tokenizer), and a draft is a smaller model than the target."""
    if draft.vocab_size != target.vocab_size:
        return (
            f"the draft {draft.name} has a vocabulary of {draft.vocab_size} tokens and "
            f"{target.name} one of {target.vocab_size}; a draft must share the target's tokenizer"
        )
    if draft.id == target.id or parameter_counts(draft).total >= parameter_counts(target).total:
        return f"the draft model must be smaller than the target, and {draft.name} is not smaller than {target.name}"
    return None


def draft_candidates(target: ModelSpec, models) -> list[ModelSpec]:
    """The models of ``models`` that can draft for ``target`` (:func:`draft_problem`), smallest first."""
    fits = [m for m in models if draft_problem(target, m) is None]
    return sorted(fits, key=lambda m: parameter_counts(m).total)


def check_draft(target: ModelSpec, spec: Speculative) -> None:
    """Raise when the speculative settings' draft cannot propose tokens for the target."""
    if spec.draft is not None and (problem := draft_problem(target, spec.draft)) is not None:
        raise ValueError(problem)


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


def proposer_deployment(dep: Deployment) -> Deployment | None:
    """The speculative proposer as a deployment on the same GPUs and formats, or None when there
    is no GPU proposer (no speculation, or n-gram lookup)."""
    spec = dep.levers.speculative
    model = None if spec is None else proposer_model(dep.model, spec)
    if model is None:
        return None
    return dataclasses.replace(
        dep, model=model, engine=dataclasses.replace(dep.engine, max_model_len=None), levers=Levers()
    )


class SpeculativeLever(Lever):
    """Speculative decoding as memory and time terms: the proposer's weights and KV, its prefill of
    every prompt, and a decode step of k proposer passes plus one verification per E tokens."""

    name = "speculative"
    part_labels = (PartLabel("proposer", "speculative proposer"),)

    def validate(self, dep: Deployment) -> None:
        spec, tp = dep.levers.speculative, dep.parallel.tp
        check_draft(dep.model, spec)
        if (draft := spec.draft) is not None and tensor_split_error(draft, tp) is not None:
            raise ValueError(f"tp ({tp}) must divide the attention heads of the draft {draft.name}")

    def memory_parts(self, dep: Deployment, max_num_batched_tokens: int) -> tuple[MemoryPart, ...]:
        weights = proposer_weight_bytes(dep.model, dep.levers.speculative, dep.weights) / dep.parallel.tp
        return (MemoryPart("proposer", weights, "gpu_static"),)

    def kv_bytes_per_token(self, dep: Deployment) -> float:
        draft = proposer_model(dep.model, dep.levers.speculative)
        return 0.0 if draft is None else kv_bytes_per_token(draft, dep.kv, dep.parallel)

    def sequence_kv_bytes(self, dep: Deployment, tokens, block_size: int):
        return proposer_kv_bytes(dep.model, dep.levers.speculative, dep.kv, dep.parallel, tokens, block_size)

    def side_deployment(self, dep: Deployment) -> Deployment | None:
        return proposer_deployment(dep)

    def decode_step(self, dep: Deployment, sequences, context):
        """Decode time per emitted token of every running sequence (what TPOT is).

        (k proposer passes + one verification of k + 1 tokens per sequence) / E, E = expected tokens
        per step (:func:`expected_tokens_per_step`); every part of the returned time is divided by E,
        so its bound is the verification's. The proposer's passes run inside the engine step, so they
        cost their roofline time only; the step's fixed overhead is counted once, in the
        verification. Per-sequence host work (sampling, detokenizing, output processing) is counted
        per emitted token, so speculation does not amortize it.
        """
        spec = dep.levers.speculative
        verify = phase_time(dep, sequences, spec.k + 1, context, 1)
        proposer = proposer_deployment(dep)
        draft_s = 0.0
        if proposer is not None:  # inside the engine step: scheduling and sampling overheads are the verify's, once
            draft = phase_time(proposer, sequences, 1, context, 1)
            draft_s = spec.k * (draft.gpu_seconds - draft.overhead_s)  # the API server streams the target's tokens only
        emitted = expected_tokens_per_step(spec.acceptance, spec.k)
        # host work per sequence (sampling, detokenizing, output) grows with the tokens it emits
        host_per_token = (emitted - 1) * np.asarray(sequences, dtype=float) * dep.efficiency.per_sequence_overhead_s
        # the API server streams all E tokens a sequence emits per step: its floor is per step, not per token
        step = dataclasses.replace(
            verify,
            side_s=draft_s,
            overhead_s=verify.overhead_s + host_per_token,
            frontend_s=np.asarray(verify.frontend_s) * emitted,
        )
        return step.per(emitted)

    def notices(self, dep: Deployment, workload, memory):
        if dep.levers.speculative.method == "mtp":
            key = "mtp_from_checkpoint" if dep.model.mtp_layers else "mtp_not_in_checkpoint"
            yield notice(key, model=dep.model.name, layers=dep.model.mtp_layers)
        context = workload.decode_context
        plain = float(phase_time(dep, workload.batch, 1, context, 1).seconds)
        speculative = float(self.decode_step(dep, workload.batch, context).seconds)
        if speculative >= plain:
            yield notice(
                "speculation_slower",
                batch=workload.batch,
                plain=f"{plain / units.MS:.1f} ms",
                speculative=f"{speculative / units.MS:.1f} ms",
            )


LEVER = SpeculativeLever()
