"""Fixes for an infeasible or marginal requirement: one lever at a time, same model and quality first.

Each lever re-runs the requirement check on a changed deployment or requirement; only levers that
make it feasible are kept (for a case that is not feasible, also those that make it marginal,
listed after). Two groups: the same model (replicas, more or other GPUs, engine settings, KV and
weight precision), then other models of the family, labelled apart. Within a group: feasible
before marginal, fixes that keep the answers' quality and the requests as asked before those that
do not (quantized weights or KV, capped lengths), then by cost per hour (GPUs x price per
GPU-hour; GPUs without a catalog price after the priced ones), GPU count, any other caveat.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.levers.settings import Speculative
from core.levers.speculative import ACCEPTANCE_RANGES, draft_candidates
from core.messages import Notice, notice
from core.planning.check import Plan, check
from core.planning.cost import cost_per_hour
from core.planning.requirement import Requirement
from core.planning.solve import GpuOption, gpu_options, min_gpus
from core.spec import units
from core.spec.catalog import Catalog
from core.spec.changes import HIGH_UTILIZATION, fp8_kv_change, smaller_weight_formats, wider_tp
from core.spec.deployment import Deployment
from core.spec.model import ModelSpec
from core.spec.params import parameter_counts
from core.timing.host_link import host_read_seconds

SIZE_SUFFIX = re.compile(r"-?(?<![\d.])\d+(\.\d+)?[BbMm]\b.*$")  # starts a run only: linear time
FIX_DRAFT_TOKENS = 4  # vLLM's examples and the EAGLE/draft-model defaults propose 3-5 tokens
OTHER_GPUS_SHOWN = 3  # the cheapest alternatives; the Plan page lists every GPU separately
CHANGES_THE_ANSWERS = frozenset({"caveat_quality", "caveat_kv_fp8", "caveat_context"})
"""Caveats of fixes that change what the user gets (quantized weights or KV, requests cut short)."""


@dataclass(frozen=True)
class Fix:
    lever: Notice
    caveat: Notice | None
    plan: Plan
    cost_per_hour: float | None

    @property
    def num_gpus(self) -> int:
        return self.plan.num_gpus

    @property
    def group(self) -> str:
        """``same_model`` or ``other_model`` (a smaller model of the family, listed apart)."""
        return "other_model" if self.lever.code == "fix_model" else "same_model"

    @property
    def keeps_quality(self) -> bool:
        """False when the fix changes what the user gets: quantized weights or KV, capped lengths."""
        return self.group == "same_model" and (self.caveat is None or self.caveat.code not in CHANGES_THE_ANSWERS)


def family(name: str) -> str:
    """A model's family: its name without the size suffix ("Qwen2.5-7B-Instruct" -> "Qwen2.5")."""
    return SIZE_SUFFIX.sub("", name).lower()


def _levers(
    catalog: Catalog, dep: Deployment, req: Requirement, options: list[GpuOption], current: Plan
) -> Iterator[tuple[Notice, Notice | None, Plan]]:
    def run(make: Callable[[], Deployment] = lambda: dep, new_req: Requirement = req) -> Plan | None:
        """The check of the changed deployment; None when the change is impossible for it."""
        try:
            return check(make(), new_req)
        except ValueError:
            return None

    yield from _lever_fixes(catalog, dep, req, run, current)
    quality = notice("caveat_quality")
    for weights in smaller_weight_formats(dep, ("int8", "int4")):
        yield (
            notice("fix_weights", format=weights.label),
            quality,
            run(lambda w=weights: dataclasses.replace(dep, weights=w)),
        )
    if (fp8 := fp8_kv_change(dep)) is not None:
        yield notice("fix_kv_fp8"), notice("caveat_kv_fp8"), run(lambda: dataclasses.replace(dep, kv=fp8))
        for int4 in smaller_weight_formats(dep, ("int4",)):
            yield notice("fix_int4_fp8"), quality, run(lambda w=int4: dataclasses.replace(dep, weights=w, kv=fp8))
    if req.longest_request > req.prompt_len + req.answer_len:
        shorter = dataclasses.replace(req, prompt_len_p95=req.prompt_len, answer_len_p95=req.answer_len)
        yield (
            notice("fix_context", tokens=req.prompt_len + req.answer_len),
            notice("caveat_context"),
            run(new_req=shorter),
        )
    sizing = min_gpus(dep, req)
    if sizing is not None and sizing.replicas > 1:  # a single replica is the tensor-parallel lever below
        if req.load == "users":
            words = notice(
                "fix_replicas", replicas=sizing.replicas, tp=sizing.tp, users=math.ceil(req.users / sizing.replicas)
            )
        else:  # no users to share out: the layout alone
            words = notice("fix_replicas_load", replicas=sizing.replicas, tp=sizing.tp)
        yield words, None, sizing.plan
    for tp in wider_tp(dep):
        plan = run(lambda tp=tp: dep.with_tp(tp))
        if plan is not None:
            yield notice("fix_tp", gpus=tp), None, plan
    for option in options:
        if option.gpu_id != dep.gpu.id:
            sizing = option.sizing
            gpu = sizing.plan.deployment.gpu
            yield notice("fix_gpu", gpu=gpu.name, tp=sizing.tp, replicas=sizing.replicas), None, sizing.plan
    own_size = parameter_counts(dep.model).total
    for model in catalog.models:
        same = family(model.name) == family(dep.model.name) and model.id != dep.model.id
        if same and parameter_counts(model).total < own_size:
            plan = run(lambda m=model: dataclasses.replace(dep, model=m))
            if plan is not None:
                yield notice("fix_model", model=model.name), notice("caveat_model"), plan


def draft_for(catalog: Catalog, target: ModelSpec) -> ModelSpec | None:
    """The draft to suggest: the smallest catalog model that can draft for the target
    (:func:`core.levers.speculative.draft_candidates`) of its family and under a quarter of its size."""
    base = family(target.name).split("-")[0]
    size = parameter_counts(target).total
    return next(
        (
            m
            for m in draft_candidates(target, catalog.models)
            if family(m.name).split("-")[0] == base and parameter_counts(m).total < size / 4
        ),
        None,
    )


def _lever_fixes(
    catalog: Catalog, dep: Deployment, req: Requirement, run, current: Plan
) -> Iterator[tuple[Notice, Notice, Plan]]:
    """Levers that address the binding limit of ``current``: speculation for TPOT, prefix caching
    for a shared prompt, offloading weights for what does not fit."""
    binding = current.binding.name
    levers = dep.levers
    if binding == "tpot" and levers.speculative is None and (draft := draft_for(catalog, dep.model)):
        low, high = ACCEPTANCE_RANGES["draft"]
        spec = Speculative(draft=draft, k=FIX_DRAFT_TOKENS, acceptance=(low + high) / 2)
        yield (
            notice("fix_speculative", draft=draft.name, k=spec.k, acceptance=spec.acceptance),
            notice("caveat_speculative"),
            run(lambda: dep.with_levers(speculative=spec)),
        )
    if req.shared_prefix_len > levers.prefix.shared_tokens and binding in ("ttft", "kv_cache", "throughput", "tpot"):
        prefix = dataclasses.replace(levers.prefix, shared_tokens=req.shared_prefix_len)
        yield (
            notice("fix_prefix", tokens=req.shared_prefix_len),
            notice("caveat_prefix"),
            run(lambda: dep.with_levers(prefix=prefix)),
        )
    if binding == "kv_cache" and dep.engine.release.engine == "vllm" and dep.memory_fraction < HIGH_UTILIZATION:
        yield (
            notice("fix_memory_fraction", fraction=f"{HIGH_UTILIZATION:.2f}"),
            notice("caveat_memory_fraction"),
            run(lambda: dep.with_engine(gpu_memory_utilization=HIGH_UTILIZATION)),
        )
    if binding in ("weights", "kv_cache") and dep.gpu.host_link_bandwidth > 0:
        kv = next(c for c in current.checks if c.name == "kv_cache")
        short = kv.need - current.estimate.memory.kv_budget
        offload_bytes = levers.offload.weights_bytes + math.ceil(short / units.GiB) * units.GiB
        # more than the weights each GPU holds cannot be offloaded: the deployment refuses it
        plan = run(
            lambda: dep.with_levers(offload=dataclasses.replace(levers.offload, weights_bytes=float(offload_bytes)))
        )
        if short > 0 and plan is not None:
            step = host_read_seconds(dep.gpu, dep.efficiency, offload_bytes)
            yield (
                notice("fix_offload", gib=f"{offload_bytes / units.GiB:.0f}", link=dep.gpu.host_link_generation),
                notice("caveat_offload", ms=f"{step / units.MS:.0f}"),
                plan,
            )


def fixes(catalog: Catalog, dep: Deployment, req: Requirement, options: list[GpuOption] | None = None) -> list[Fix]:
    """Levers that lift the verdict, ranked as the module says (at most 3 other GPUs).

    For a case that is not feasible, levers that make it feasible or at least marginal (each fix
    shows its verdict); for a marginal case, only levers that make it feasible. ``options`` are
    the catalog GPUs sized for the load (:func:`core.planning.solve.gpu_options`), computed when not given.
    """
    if options is None:
        options = gpu_options(catalog, dep, req, limit=OTHER_GPUS_SHOWN + 1)
    current = check(dep, req)
    accepted = {"feasible"} if current.verdict == "marginal" else {"feasible", "marginal"}
    found = []
    for lever, caveat, plan in _levers(catalog, dep, req, options, current):
        if plan is not None and plan.verdict in accepted:
            found.append(
                Fix(
                    lever=lever,
                    caveat=caveat,
                    plan=plan,
                    cost_per_hour=cost_per_hour(plan.num_gpus, plan.deployment.gpu.price_per_hour),
                )
            )
    ranked = sorted(
        found,
        key=lambda f: (
            f.group != "same_model",
            f.plan.verdict != "feasible",
            # other models: the largest (closest to the one asked for) first
            -parameter_counts(f.plan.deployment.model).total if f.group == "other_model" else 0,
            not f.keeps_quality,
            f.cost_per_hour if f.cost_per_hour is not None else math.inf,
            f.num_gpus,
            f.caveat is not None,
            f.plan.binding.ratio,
        ),
    )
    other_gpus = [f for f in ranked if f.lever.code == "fix_gpu"][:OTHER_GPUS_SHOWN]
    return [f for f in ranked if f.lever.code != "fix_gpu" or f in other_gpus]
