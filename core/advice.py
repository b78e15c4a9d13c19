"""What would make it fit: re-estimate under single changes and keep those that work.

Each lever changes one thing (weight format, KV format, GPU count, max_model_len, batch,
gpu_memory_utilization); a suggestion is kept when the workload then fits and vLLM would start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from core.deployment import Deployment, Workload
from core.engine import Parallelism
from core.estimate import Estimate, estimate
from core.messages import Notice, notice
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS

MAX_GPUS = 8


@dataclass(frozen=True)
class Suggestion:
    notice: Notice
    result: Estimate


def _variants(dep: Deployment, work: Workload, current: Estimate) -> Iterator[tuple[Notice, Deployment, Workload]]:
    for name in ("fp8", "int8", "int4"):
        weights = WEIGHT_PRECISIONS[name]
        if weights.bits_per_element < dep.weights.bits_per_element:
            yield notice("suggest_weights", format=weights.label), dataclasses.replace(dep, weights=weights), work
    if dep.kv.bits_per_element > KV_PRECISIONS["fp8"].bits_per_element:
        yield notice("suggest_kv_fp8"), dataclasses.replace(dep, kv=KV_PRECISIONS["fp8"]), work
    tp = dep.parallel.tp * 2
    while tp <= MAX_GPUS:
        if dep.model.num_heads % tp == 0:
            parallel = Parallelism(tp=tp, pp=dep.parallel.pp)
            yield notice("suggest_tp", gpus=tp), dataclasses.replace(dep, parallel=parallel), work
        tp *= 2
    if not current.engine_starts and current.kv.capacity_tokens >= work.request_len:
        length = current.kv.capacity_tokens
        engine = dataclasses.replace(dep.engine, max_model_len=length)
        yield notice("suggest_max_model_len", tokens=length), dataclasses.replace(dep, engine=engine), work
    fit = current.kv.max_concurrency_at_request_len
    if 0 < fit < work.batch:
        yield notice("suggest_batch", batch=fit), dep, dataclasses.replace(work, batch=fit)
    if dep.engine.gpu_memory_utilization < 0.95:
        engine = dataclasses.replace(dep.engine, gpu_memory_utilization=0.95)
        yield notice("suggest_utilization", value="0.95"), dataclasses.replace(dep, engine=engine), work


def fit_suggestions(dep: Deployment, work: Workload, current: Estimate) -> list[Suggestion]:
    """Single changes after which ``work`` fits on ``dep`` and the engine starts."""
    found = []
    for text, new_dep, new_work in _variants(dep, work, current):
        try:
            result = estimate(new_dep, new_work)
        except ValueError:
            continue
        if result.fits and result.engine_starts:
            found.append(Suggestion(notice=text, result=result))
    return found
