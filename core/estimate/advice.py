"""What would make it fit: re-estimate under single changes and keep those that work.

Each lever changes one thing (weight format, KV format, GPU count, max_model_len, batch,
gpu_memory_utilization, weights offloaded to host memory); a suggestion is kept when the workload
then fits and vLLM would start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.estimate.result import Estimate, estimate
from core.estimate.whatif import weights_to_fit
from core.messages import Notice, notice
from core.spec import units
from core.spec.changes import HIGH_UTILIZATION, fp8_kv_change, smaller_weight_formats, wider_tp
from core.spec.deployment import Deployment, Workload

Variant = tuple[Deployment, Workload]


@dataclass(frozen=True)
class Suggestion:
    notice: Notice
    result: Estimate


def _variants(dep: Deployment, work: Workload, current: Estimate) -> Iterator[tuple[Notice, Callable[[], Variant]]]:
    """Single changes, each built only when tried (a change may be impossible for this deployment)."""

    def changed(**fields) -> Callable[[], Variant]:
        return lambda: (dataclasses.replace(dep, **fields), work)

    for weights in smaller_weight_formats(dep):
        yield notice("suggest_weights", format=weights.label), changed(weights=weights)
    if (kv := fp8_kv_change(dep)) is not None:
        yield notice("suggest_kv_fp8"), changed(kv=kv)
    for tp in wider_tp(dep):
        yield notice("suggest_tp", gpus=tp), lambda tp=tp: (dep.with_tp(tp), work)
    if not current.engine_starts and current.kv.capacity_tokens >= work.request_len:
        length = current.kv.capacity_tokens
        yield notice("suggest_max_model_len", tokens=length), lambda: (dep.with_engine(max_model_len=length), work)
    fit = current.kv.max_concurrency_at_request_len
    if 0 < fit < work.batch:
        yield notice("suggest_batch", batch=fit), lambda: (dep, dataclasses.replace(work, batch=fit))
    if dep.engine.release.engine == "vllm" and dep.memory_fraction < HIGH_UTILIZATION:
        # SGLang and TensorRT-LLM keep activations and CUDA graphs in what their fraction leaves free
        yield (
            notice("suggest_utilization", value=f"{HIGH_UTILIZATION:.2f}"),
            lambda: (dep.with_engine(gpu_memory_utilization=HIGH_UTILIZATION), work),
        )
    if dep.gpu.host_link_bandwidth > 0 and current.memory.kv_budget < current.kv.bytes_per_max_len_request:
        offload = weights_to_fit(dep)
        if offload > dep.levers.offload.weights_bytes:
            moved = dataclasses.replace(dep.levers.offload, weights_bytes=offload)
            yield (
                notice("suggest_offload", gib=f"{offload / units.GiB:.0f}", link=dep.gpu.host_link_generation),
                lambda: (dep.with_levers(offload=moved), work),
            )


def fit_suggestions(dep: Deployment, work: Workload, current: Estimate) -> list[Suggestion]:
    """Single changes after which ``work`` fits on ``dep`` and the engine starts."""
    found = []
    for text, build in _variants(dep, work, current):
        try:
            new_dep, new_work = build()
            result = estimate(new_dep, new_work)
        except ValueError:
            continue
        if result.fits and result.engine_starts:
            found.append(Suggestion(notice=text, result=result))
    return found
