"""Solvers on top of the requirement check: the boundary where the verdict flips.

"Feasible" here means no check fails (marginal counts as feasible, it is within its limits).
Every solver returns the last value that passes, so one more user or token fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core.planning.check import Plan, check
from core.planning.cost import cost_per_hour
from core.planning.requirement import Requirement
from core.spec.catalog import Catalog
from core.spec.deployment import Deployment
from core.spec.engine import TENSOR_PARALLEL

MAX_REPLICAS = 4096
MAX_USERS = 1_000_000  # users, requests in flight or requests/s; the Requirement allows up to this


def passes(dep: Deployment, req: Requirement, **changes) -> bool:
    """Whether ``req`` (with ``changes`` applied) passes on ``dep``; an impossible input does not."""
    try:
        return check(dep, dataclasses.replace(req, **changes)).verdict != "not_feasible"
    except ValueError:
        return False


def _largest(ok: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high] with ok(n), for ok true then false; low - 1 when none."""
    if not ok(low):
        return low - 1
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    return low


def max_users(dep: Deployment, req: Requirement) -> int:
    """Most users (or requests in flight, or requests/s for a rate load, in whole units) that pass."""
    field = {"users": "users", "in_flight": "in_flight", "rate": "rate_per_s"}[req.load]
    convert = float if field == "rate_per_s" else int
    return _largest(lambda n: passes(dep, req, **{field: convert(n)}), 1, MAX_USERS)


def max_prompt_len(dep: Deployment, req: Requirement) -> int:
    """Longest prompt (typical and P95 alike) that passes with the answer length unchanged; 0 if none.

    max_model_len follows the request (prompt + P95 answer), up to the model's context.
    """
    limit = dep.model.max_context - req.p95_answer

    def ok(n: int) -> bool:
        return passes(dep.with_engine(max_model_len=n + req.p95_answer), req, prompt_len=n, prompt_len_p95=n)

    return max(_largest(ok, 1, limit), 0) if limit >= 1 else 0


@dataclass(frozen=True)
class Sizing:
    """A passing deployment for the load: tensor-parallel degree, replicas and its plan."""

    tp: int
    replicas: int
    plan: Plan

    @property
    def num_gpus(self) -> int:
        return self.tp * self.replicas


def min_gpus(dep: Deployment, req: Requirement) -> Sizing | None:
    """Fewest GPUs (tp x replicas, tp in 1/2/4/8) that serve the load; None when none does."""
    best: Sizing | None = None
    for tp in TENSOR_PARALLEL:
        try:
            candidate = dep.with_tp(tp)
        except ValueError:
            continue
        if best is not None and tp >= best.num_gpus:
            break

        replicas = _fewest_replicas(candidate, req)
        if replicas is None:
            continue
        if best is None or tp * replicas < best.num_gpus:
            plan = check(candidate, dataclasses.replace(req, replicas=replicas))
            best = Sizing(tp=tp, replicas=replicas, plan=plan)
    return best


def _fewest_replicas(dep: Deployment, req: Requirement) -> int | None:
    """Fewest replicas that pass: doubling until one passes, then bisecting (1 check when 1 is enough)."""
    high = 1
    while not passes(dep, req, replicas=high):
        if high >= MAX_REPLICAS:
            return None
        high = min(high * 2, MAX_REPLICAS)
    low = high // 2 + 1 if high > 1 else 1
    while low < high:
        middle = (low + high) // 2
        if passes(dep, req, replicas=middle):
            high = middle
        else:
            low = middle + 1
    return high


@dataclass(frozen=True)
class GpuOption:
    gpu_id: str
    sizing: Sizing
    cost_per_hour: float | None


def gpu_options(catalog: Catalog, dep: Deployment, req: Requirement, limit: int | None = None) -> list[GpuOption]:
    """Catalog GPUs that can serve the load, cheapest per hour first (unpriced last, by GPU count).

    With ``limit``, only the first ``limit`` of that list: GPUs are sized in ascending order of
    price, and sizing stops once a GPU's price for a single GPU is no cheaper than the
    ``limit``-th cheapest option found (an option costs at least one GPU's price); unpriced GPUs are
    sized only when fewer than ``limit`` priced ones serve the load. Same result, far fewer checks.
    """
    priced = sorted((g for g in catalog.gpus if g.price_per_hour), key=lambda g: g.price_per_hour)
    unpriced = [g for g in catalog.gpus if not g.price_per_hour]
    options: list[GpuOption] = []

    def size(gpu) -> None:
        try:
            sizing = min_gpus(dataclasses.replace(dep, gpu=gpu), req)
        except ValueError:
            return
        if sizing is not None:
            cost = cost_per_hour(sizing.num_gpus, gpu.price_per_hour)
            options.append(GpuOption(gpu_id=gpu.id, sizing=sizing, cost_per_hour=cost))

    for gpu in priced:
        if limit is not None and len(options) >= limit:
            costs = sorted(o.cost_per_hour for o in options)
            if gpu.price_per_hour >= costs[limit - 1]:
                break
        size(gpu)
    if limit is None or len(options) < limit:
        for gpu in unpriced:
            size(gpu)
    ranked = sorted(options, key=lambda o: (o.cost_per_hour is None, o.cost_per_hour or 0.0, o.sizing.num_gpus))
    return ranked if limit is None else ranked[:limit]
