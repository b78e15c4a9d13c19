"""A search point as the search's JSON gives it (:func:`core.planning.pareto.candidate_to_dict`, what the
Plan page draws) back into a :class:`core.deploy.spec.DeploySpec`: the shape rebuilt from the base
deployment the way :func:`core.planning.shapes.shapes` builds it (the point's GPU, layout, formats and
max_num_batched_tokens; max_model_len sized as check sizes it), then its replicas, or its prefill and
decode instances."""

from __future__ import annotations

import dataclasses

from core.deploy.spec import DeploySpec, _spec, _workload
from core.planning.check import check
from core.planning.requirement import Requirement
from core.planning.shapes import gpu_efficiency
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Parallelism
from core.spec.engine_defaults import sized_max_model_len
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision


def shape(base: Deployment, point: dict, req: Requirement) -> Deployment:
    gpu = load_catalog().gpu(point["gpu"])
    weights = WEIGHT_PRECISIONS[point["weight_dtype"]]
    tokens = None if point.get("batched_tokens_default", True) else point["max_num_batched_tokens"]
    engine = dataclasses.replace(
        base.engine,
        max_model_len=sized_max_model_len(req.longest_request, base.model.max_context),
        efficiency=gpu_efficiency(base, gpu),
        max_num_batched_tokens=tokens,
    )
    return dataclasses.replace(
        base,
        gpu=gpu,
        weights=weights,
        kv=kv_precision(point["kv_dtype"], weights),
        parallel=Parallelism(tp=point["tp"], pp=point["pp"], dp=point.get("dp", 1)),
        engine=engine,
    )


def from_point(base: Deployment, point: dict, req: Requirement) -> DeploySpec:
    dep = shape(base, point, req)
    if point["mode"] == "disaggregated":
        prefill, decode = point["prefill_instances"], point["decode_instances"]
        plan = check(dep, dataclasses.replace(req, replicas=decode))
        return _spec(plan, (_workload(plan, "prefill", prefill), _workload(plan, "decode", decode)))
    plan = check(dep, dataclasses.replace(req, replicas=point["replicas"]))
    return _spec(plan, (_workload(plan, "engine", point["replicas"]),))
