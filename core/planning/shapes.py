"""The replica shapes the best-deployment search evaluates (:mod:`core.planning.search`).

A shape is one replica's hardware, layout, formats and scheduler budget: GPU type, tp x pp (x dp
data-parallel attention ranks for MoE models, the experts split over tp x dp GPUs within a node),
weight and KV precision, and max_num_batched_tokens. Each GPU keeps its own efficiency factors:
the base deployment's (a user's calibrated sliders) on the base's GPU, its memory class's default
on every other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.planning.requirement import Requirement
from core.spec.catalog import Catalog
from core.spec.cluster import DEFAULT_INTER_NODE, GPUS_PER_NODE, INTER_NODE_LINKS
from core.spec.deployment import Deployment, Parallelism
from core.spec.efficiency import Efficiency, default_efficiency, resolved
from core.spec.engine import TENSOR_PARALLEL
from core.spec.engine_defaults import sized_max_model_len
from core.spec.gpu import GpuSpec
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision

MODES = ("aggregated", "disaggregated")


@dataclass(frozen=True)
class SearchSpace:
    gpus: tuple[str, ...] = ()
    """Catalog GPU ids; empty = every catalog GPU."""
    tensor_parallel: tuple[int, ...] = (1, 2, 4, 8)
    pipeline_parallel: tuple[int, ...] = (1, 2)
    data_parallel: tuple[int, ...] = (1, 2, 4, 8)
    """Data-parallel attention ranks tried on MoE models (tp x dp within a node, pp 1); dense: 1."""
    weight_dtypes: tuple[str, ...] = ("bf16", "fp8", "int4")
    """Formats tried; those wider than the checkpoint's are left out."""
    kv_dtypes: tuple[str, ...] = ("auto", "fp8")
    batched_tokens: tuple[int | None, ...] = (None, 2048, 8192)
    """max_num_batched_tokens tried in aggregated serving; None: as the base deployment sets it (the
    engine's default unless set). Values equal to that are not tried twice."""
    modes: tuple[str, ...] = MODES
    max_gpus: int = 64
    max_cost_per_hour: float | None = None
    """Candidates dearer than this [USD/h] are left out, and so are GPUs without a price (their
    cost is unknown); None: no limit."""
    native_only: bool = False
    """No quantization: only the checkpoint's own weight format with the KV cache in it, whatever
    the base deployment and ``weight_dtypes`` / ``kv_dtypes`` say."""
    inter_node: str = DEFAULT_INTER_NODE

    def __post_init__(self) -> None:
        if not 1 <= self.max_gpus <= 4096:
            raise ValueError(f"max_gpus must be from 1 to 4096, got {self.max_gpus!r}")
        if self.max_cost_per_hour is not None and not 0 < self.max_cost_per_hour < float("inf"):
            raise ValueError(f"max_cost_per_hour must be above 0 USD/h or None, got {self.max_cost_per_hour!r}")
        if bad := [m for m in self.modes if m not in MODES]:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {bad[0]!r}")
        if self.inter_node not in INTER_NODE_LINKS:
            raise ValueError(f"inter-node link must be one of {', '.join(INTER_NODE_LINKS)}, got {self.inter_node!r}")
        if bad := [n for n in self.data_parallel if isinstance(n, bool) or not isinstance(n, int) or n < 1]:
            raise ValueError(f"data-parallel ranks must be 1 or more, got {bad[0]!r}")
        if bad := [n for n in self.batched_tokens if n is not None and (isinstance(n, bool) or not 1 <= n <= 10**7)]:
            raise ValueError(f"max_num_batched_tokens must be from 1 to 10,000,000 or None, got {bad[0]!r}")


def gpu_efficiency(base: Deployment, gpu: GpuSpec) -> Efficiency:
    """The efficiency factors a shape on ``gpu`` runs with, resolved for the base's release and endpoint: the
    base's own on its GPU (a calibration typed for it), the memory class's default on any other."""
    if gpu.id == base.gpu.id and base.engine.efficiency is not None:
        return resolved(base.engine.efficiency, base.engine.release, base.engine.endpoint)
    return default_efficiency(gpu.memory_type, base.engine.release, base.engine.endpoint)


def layouts(base: Deployment, space: SearchSpace) -> list[tuple[int, int, int]]:
    """(tp, pp, dp) of every layout in ``space`` that fits its GPU budget: tensor parallelism
    within a node (its all-reduces would cross the NICs), dp > 1 only on MoE models, with pp 1 and
    tp x dp within a node (the all-to-all runs over the GPUs' own link)."""
    found = []
    dps = [d for d in dict.fromkeys(space.data_parallel) if Parallelism(dp=d).data_parallel_error(base.model) is None]
    for tp in (t for t in space.tensor_parallel if t in TENSOR_PARALLEL):
        for dp in dps:
            for pp in space.pipeline_parallel if dp == 1 else (1,):
                if tp * pp * dp <= space.max_gpus and tp * dp <= GPUS_PER_NODE:
                    found.append((tp, pp, dp))
    return found


def shapes(catalog: Catalog, base: Deployment, req: Requirement, space: SearchSpace) -> list[Deployment]:
    """Every replica shape in ``space`` the model can be split and stored on (module docstring):
    first every layout and format with the base's max_num_batched_tokens, then the other values of
    ``space.batched_tokens`` on each of them."""
    listed = [catalog.gpu(g) for g in space.gpus] if space.gpus else catalog.gpus
    gpus = [base.gpu if g.id == base.gpu.id else g for g in listed]  # the base's price or custom spec holds
    native = WEIGHT_PRECISIONS[base.model.native_dtype]
    formats = [base.weights] + [
        WEIGHT_PRECISIONS[w]
        for w in space.weight_dtypes
        if w != base.weights.name and WEIGHT_PRECISIONS[w].bits_per_element <= native.bits_per_element
    ]
    kv_dtypes = tuple(dict.fromkeys(space.kv_dtypes))
    if space.native_only:
        formats, kv_dtypes = [native], ("auto",)
    # the one max_model_len rule (as check sizes it), so a chosen point's launch command is check's
    sized = sized_max_model_len(req.longest_request, base.model.max_context)
    engine = dataclasses.replace(base.engine, max_model_len=sized)
    found = []
    for gpu in gpus:
        own = dataclasses.replace(engine, efficiency=gpu_efficiency(base, gpu))
        for tp, pp, dp in layouts(base, space):
            for weights in formats:
                for kv in kv_dtypes:
                    try:
                        dep = dataclasses.replace(
                            base,
                            gpu=gpu,
                            weights=weights,
                            kv=kv_precision(kv, weights),
                            parallel=Parallelism(tp=tp, pp=pp, dp=dp),
                            engine=own,
                            inter_node=space.inter_node,
                        )
                    except ValueError:
                        continue  # this GPU cannot run that format, or the model does not split tp ways
                    if not within_budget(dep, space):
                        continue  # every count of it costs at least one replica
                    found.append(dep)
    return found + batched_token_variants(found, space)


def within_budget(dep: Deployment, space: SearchSpace) -> bool:
    """Whether one replica of ``dep`` is priced and within ``space.max_cost_per_hour`` (always,
    without a limit)."""
    if space.max_cost_per_hour is None:
        return True
    price = dep.gpu.price_per_hour
    return price is not None and dep.parallel.num_gpus * price <= space.max_cost_per_hour


def batched_token_variants(found: list[Deployment], space: SearchSpace) -> list[Deployment]:
    """Each shape again with every other max_num_batched_tokens of ``space`` (aggregated serving:
    the chunk trades prefill speed against the activation peak the KV budget loses)."""
    variants, engines = [], {}
    for dep in found:
        for tokens in dict.fromkeys(t for t in space.batched_tokens if t is not None):
            if tokens != dep.batch_limits[0]:
                key = (id(dep.engine), tokens)  # shapes on one GPU share one engine: vary it once
                if key not in engines:
                    engines[key] = dataclasses.replace(dep.engine, max_num_batched_tokens=tokens)
                variants.append(dataclasses.replace(dep, engine=engines[key]))
    return variants
