"""Weights in memory: bytes per parameter group in the checkpoint's format, and what one GPU holds.

    weights = sum over parameter groups of count x bytes per element

Quantized formats compress the linear layers only (embeddings, LM head, norms, router and a
multimodal checkpoint's vision tower stay 16-bit); tensor parallel shards every matrix; pipeline
stages split the layers, the first holding the embedding and the vision tower. With data-parallel
attention (dp > 1, MoE) every rank holds the non-expert weights split over its tp GPUs and the
routed experts are split whole over all tp x dp GPUs:

    per GPU = non-expert weights / tp + routed experts x ceil(E / (tp x dp)) / E
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from core.spec.engine import Parallelism
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.params import kept_16bit_params, parameter_counts
from core.spec.precision import ACTIVATION_PRECISION, Precision
from core.spec.support import mxfp4_moe_alignment


@dataclass(frozen=True)
class WeightBytes:
    """Weights of a model split where pipeline stages split them [bytes]."""

    embedding: float
    lm_head: float
    """0 when the LM head is tied to the embedding."""
    layers: float
    """All transformer layers, norms and routers included."""
    routed_experts: float = 0.0
    """The part of ``layers`` in routed experts (MoE), of which a step reads only those routed to."""
    vision: float = 0.0
    """A multimodal checkpoint's vision tower and projector, loaded but idle for text [bytes]."""

    @property
    def total(self) -> float:
        return self.embedding + self.lm_head + self.layers + self.vision


@functools.cache
def weight_bytes(model: ModelSpec, weights: Precision) -> WeightBytes:
    """All weights of the model [bytes] = sum over parameter groups of count x bytes per element.

    Quantized formats compress the linear layers only; embeddings, LM head, norms and router stay
    16-bit. Formats flagged ``moe_experts_only`` compress only routed experts on MoE models.
    """
    p = parameter_counts(model)
    if not weights.quantized:
        per = weights.bytes_per_element
        return WeightBytes(
            embedding=p.embedding * per,
            lm_head=p.lm_head * per,
            layers=(p.total - p.embedding - p.lm_head - p.vision) * per,
            routed_experts=p.routed_experts * per,
            vision=p.vision * per,
        )
    half = ACTIVATION_PRECISION.bytes_per_element
    experts_only = weights.moe_experts_only and model.is_moe
    # what the checkpoint's own quantization_config keeps in 16 bits, when these are its weights
    kept, kept_experts = kept_16bit_params(model) if weights.name == model.native_dtype else (0.0, 0.0)
    compressed = p.routed_experts - kept_experts if experts_only else p.linear - kept
    layers_16bit = p.linear - compressed + p.norms + p.router
    routed_compressed = p.routed_experts - kept_experts
    return WeightBytes(
        embedding=p.embedding * half,
        lm_head=p.lm_head * half,
        layers=compressed * weights.bytes_per_element + layers_16bit * half,
        routed_experts=routed_compressed * weights.bytes_per_element + kept_experts * half,
        vision=p.vision * half,
    )


def weight_bytes_per_gpu(model: ModelSpec, weights: Precision, par: Parallelism) -> float:
    """Weights held by the most loaded GPU [bytes].

    Tensor parallel shards every matrix (embedding and LM head vocab-parallel) over ``tp`` GPUs.
    Pipeline parallel gives a stage ceil(layers / pp) layers; the first stage also holds the
    embedding and the last the LM head (a tied head is a copy of the embedding there).
    With dp > 1 the routed experts are held at :func:`expert_share_per_gpu` instead of 1 / tp
    (shared experts stay with the non-expert part); a model without routed experts raises.
    """
    w = weight_bytes(model, weights)
    if par.dp > 1:
        return _data_parallel_weights(model, w, par)
    if par.pp == 1:
        return w.total / par.tp
    head = w.lm_head or w.embedding
    stage_layers = w.layers * layers_per_gpu(model, par.pp) / model.num_layers
    return (stage_layers + max(w.embedding + w.vision, head)) / par.tp


def _data_parallel_weights(model: ModelSpec, w: WeightBytes, par: Parallelism) -> float:
    if (problem := par.data_parallel_error(model)) is not None:
        raise ValueError(problem)
    experts = w.routed_experts * expert_share_per_gpu(model, par)
    if par.pp == 1:
        return (w.total - w.routed_experts) / par.tp + experts
    stage = layers_per_gpu(model, par.pp) / model.num_layers
    ends = max(w.embedding + w.vision, w.lm_head or w.embedding)
    return ((w.layers - w.routed_experts) * stage + ends) / par.tp + experts * stage


def expert_share_per_gpu(model: ModelSpec, par: Parallelism) -> float:
    """Share of the routed experts the most loaded GPU holds [fraction]: 1 / tp when dp = 1 (every
    expert tensor-split), else ceil(E / EP) / E with EP = tp x dp whole experts per GPU (vLLM's
    ``determine_expert_map`` gives the first E mod EP ranks one more); 1/8 for DeepSeek-V3 at EP 8."""
    if par.dp == 1 or model.moe is None:
        return 1 / par.tp
    experts = model.moe.num_experts
    return math.ceil(experts / par.expert_parallel) / experts


def moe_padding_bytes_per_gpu(model: ModelSpec, weights: Precision, par: Parallelism, gpu: GpuSpec) -> float:
    """Bytes an MXFP4 MoE's kernels add per GPU by padding every expert's hidden and per-GPU
    intermediate sizes up to their tile (:func:`core.spec.support.mxfp4_moe_alignment`; gpt-oss's
    2,880 becomes 3,072 on Marlin) [bytes]; 0 for other formats and dense models. Under expert
    parallelism (dp > 1) experts are whole, their intermediate size not split by tp."""
    if weights.name != "mxfp4" or model.moe is None:
        return 0.0
    hidden_align, inter_align = mxfp4_moe_alignment(gpu)
    inter = model.moe.expert_ffn_size / (par.tp if par.dp == 1 else 1)
    padded = math.ceil(model.hidden_size / hidden_align) * hidden_align * math.ceil(inter / inter_align) * inter_align
    factor = padded / (model.hidden_size * inter)
    routed = weight_bytes(model, weights).routed_experts
    stage = layers_per_gpu(model, par.pp) / model.num_layers
    if par.dp > 1:
        return routed * stage * expert_share_per_gpu(model, par) * (factor - 1)
    return routed * stage / par.tp * (factor - 1)


def layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Layers on the most loaded pipeline stage."""
    return math.ceil(model.num_layers / pp)
