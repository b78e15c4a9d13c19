"""Requirement check: can this deployment serve this load within these SLOs, and what binds?

Users become requests in flight by Little's law at a consistent operating point of the engine's
steady state (:mod:`core.timing.steady_state`):

    users: B = U x E2E(B) / (E2E(B) + think time)     rate: B = lambda x E2E(B)

The engine runs at most its admission ceiling at once (max_num_seqs, and the requests its KV cache
holds at the typical length). When the load asks for more in flight than that, the engine runs
full and the rest wait for a slot: the operating point is the steady state at the ceiling, and each
request's TTFT adds the admission wait (:func:`core.estimate.scope.admission_wait` for users and a
fixed concurrency; for a rate load no finite wait: the queue grows without bound). Every figure of
the plan, the TTFT check and the cost then describe that saturated engine, not the demanded one.

Checks, in order: the P95 request fits max_model_len; weights fit; KV cache of the in-flight
requests the load asks for (one of them at P95 length); TTFT SLO (P95 prompt, with the admission
wait); TPOT SLO; throughput demand (users or rate loads) against the most the replica sustains at
its concurrency ceiling. Each has a ratio need / limit: ok up to 0.85, marginal up to 1, failed above.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from core.estimate.result import Estimate, estimate
from core.estimate.scope import admission_wait
from core.memory.request_kv import own_kv_bytes, shared_kv_bytes
from core.planning.requirement import Requirement
from core.spec.deployment import Deployment, Workload
from core.timing.steady_state import SteadyState, prompt_ttft, steady_state

MARGINAL_RATIO = 0.85
"""A check using more than this share of its limit is marginal: little room for bursts or error."""
GRID_POINTS = 2049
MAX_IN_FLIGHT = 1e6
"""Search bound for a rate load's in-flight requests; beyond it the rate counts as not drainable."""


@dataclass(frozen=True)
class Check:
    name: str
    need: float
    limit: float
    unit: str
    marginal_at: float = MARGINAL_RATIO

    @property
    def ratio(self) -> float:
        if self.limit <= 0:
            return math.inf if self.need > 0 else 0.0
        return self.need / self.limit

    @property
    def status(self) -> str:
        if self.ratio > 1:
            return "failed"
        return "marginal" if self.ratio > self.marginal_at else "ok"


@dataclass(frozen=True)
class Plan:
    deployment: Deployment
    requirement: Requirement
    in_flight: float
    """Requests in flight per replica the load asks for at the consistent operating point (Little's
    law with admission unbounded); more than :attr:`running` when the engine is full."""
    worst_case_in_flight: int
    """Per replica, if every user were generating at once (users load), else equal to in_flight."""
    state: SteadyState
    checks: tuple[Check, ...]
    estimate: Estimate
    """The static estimate at the in-flight batch and typical lengths (memory, KV capacity)."""
    notes: tuple[str, ...] = field(default=())
    running: float = 0.0
    """Requests the engine runs at once per replica at the operating point: :attr:`in_flight`
    capped by the admission ceiling."""
    queue_wait_s: float = 0.0
    """Each request's wait for an engine slot [s]: 0 below the ceiling, infinite when the queue grows
    without bound (a rate load above what the full engine drains)."""

    @property
    def queued(self) -> bool:
        """The engine is full and requests wait for a slot."""
        return self.queue_wait_s > 0

    @property
    def unbounded(self) -> bool:
        """The queue grows without bound: no figure of this plan is reached at steady state."""
        return math.isinf(self.queue_wait_s)

    @property
    def verdict(self) -> str:
        statuses = {c.status for c in self.checks}
        if "failed" in statuses:
            return "not_feasible"
        return "marginal" if "marginal" in statuses else "feasible"

    @cached_property
    def failing(self) -> tuple[Check, ...]:
        """The failed checks, worst (highest need / limit) first; weights that do not load come first
        whatever their ratio, since no other check can be met without them (the KV check's limit is
        then 0 and its ratio infinite only as a consequence)."""
        failed = [c for c in self.checks if c.status == "failed"]
        return tuple(sorted(failed, key=lambda c: (c.name != "weights", -c.ratio)))

    @property
    def binding(self) -> Check:
        """The worst failing check (:attr:`failing`), else the check closest to its limit; pass/fail
        checks (context vs max_model_len) bind only when they fail."""
        if self.failing:
            return self.failing[0]
        return max((c for c in self.checks if c.marginal_at < 1), key=lambda c: c.ratio)

    @property
    def num_gpus(self) -> int:
        return self.deployment.parallel.num_gpus * self.requirement.replicas

    @property
    def output_tokens_per_s(self) -> float:
        """All replicas together."""
        return self.state.request_rate * self.requirement.answer_len * self.requirement.replicas


def _first_crossing(batches: np.ndarray, excess: np.ndarray) -> float:
    """Where ``excess`` (positive, then negative along ``batches``) first crosses 0, interpolated."""
    below = np.flatnonzero(excess <= 0)
    if below.size == 0:
        return math.inf
    i = int(below[0])
    if i == 0:
        return float(batches[0])
    x0, x1, y0, y1 = batches[i - 1], batches[i], excess[i - 1], excess[i]
    return float(x0 + (x1 - x0) * y0 / (y0 - y1))


def in_flight_requests(dep: Deployment, req: Requirement) -> float:
    """Requests in flight per replica, consistent with the E2E latency they cause (Little's law).

    Users: the root of U E2E(B) / (E2E(B) + T) - B on [0, U]; rate: of lambda E2E(B) - B. Both
    are evaluated on a grid at once and interpolated (E2E grows smoothly with B). A rate no batch
    drains gives infinity.
    """
    if req.load == "in_flight":
        return req.in_flight / req.replicas
    if req.load == "users":
        users = req.users / req.replicas
        if req.think_time_s == 0:
            return users
        grid = np.linspace(0.0, users, GRID_POINTS)
        state = steady_state(dep, grid, req.prompt_len, req.answer_len)
        # a user's cycle: the overhead, the engine's time, then thinking; only the engine's part is in flight
        busy = users * state.engine_e2e_s / (state.e2e_s + req.think_time_s)
        return min(_first_crossing(grid, busy - grid), users)
    rate = req.rate_per_s / req.replicas
    grid = np.concatenate(([0.0], np.geomspace(1e-3, MAX_IN_FLIGHT, GRID_POINTS)))
    state = steady_state(dep, grid, req.prompt_len, req.answer_len)
    excess = np.where(state.stable, rate * state.engine_e2e_s - grid, np.inf)
    return _first_crossing(grid, excess)


def concurrency_ceiling(e: Estimate) -> int:
    """Requests one replica can run at once at ``e``'s request length: max_num_seqs (per rank, x dp)
    and the requests its KV cache holds (0 when it holds none)."""
    return int(min(e.kv.max_concurrency_at_request_len, e.max_running))


def admission_ceiling(e: Estimate) -> int:
    """Requests the engine runs at once, at least the one it always admits: the wait for a slot
    starts above it."""
    return max(concurrency_ceiling(e), 1)


def _admission_wait(req: Requirement, running: float, state: SteadyState) -> float:
    """The wait for a slot when the engine runs full [s] (module docstring)."""
    if req.load == "rate" or not state.stable:
        return math.inf  # arrivals above the full engine's rate: the queue grows without bound
    clients = (req.users if req.load == "users" else req.in_flight) / req.replicas
    think = req.think_time_s if req.load == "users" else 0.0
    return admission_wait(clients, think, running, float(state.engine_e2e_s))


def check(dep: Deployment, req: Requirement) -> Plan:
    """Verdict for ``req`` on ``dep`` (per replica; the load is spread evenly over replicas)."""
    asked = in_flight_requests(dep, req)
    # a request longer than max_model_len is the context check's failure, not an error
    typical = Workload(input_len=req.prompt_len, output_len=req.answer_len)
    if math.isinf(asked):  # no concurrency drains this rate: the KV check counts what the engine holds
        batch = float(admission_ceiling(estimate(dep, typical, enforce_context=False)))
    else:
        batch = asked
    running = max(math.ceil(batch - 1e-9), 1)
    base = estimate(dep, dataclasses.replace(typical, batch=running), enforce_context=False)
    mem = base.memory
    ceiling = admission_ceiling(base)  # the KV budget and max_num_seqs do not depend on the batch
    engine_runs = min(asked, float(ceiling))  # the engine runs full at its ceiling, the rest wait
    state = steady_state(dep, engine_runs, req.prompt_len, req.answer_len)
    wait = _admission_wait(req, engine_runs, state) if asked > ceiling else 0.0

    # per GPU, the running requests of the busiest rank (all of them at dp 1) at typical length, one
    # of them a P95 (long-tail) request; a shared prefix once
    on_gpu = math.ceil(float(dep.parallel.rank_sequences(running)) - 1e-9)
    kv_need = (
        shared_kv_bytes(dep, req.prompt_len)
        + (on_gpu - 1) * own_kv_bytes(dep, req.prompt_len + req.answer_len, req.prompt_len)
        + own_kv_bytes(dep, req.longest_request, req.p95_prompt)
    )
    checks = [
        Check("context", req.longest_request, dep.max_model_len, "tokens", marginal_at=1.0),
        Check("weights", mem.non_kv, mem.capacity - mem.driver_reserved - mem.held_back, "bytes"),
        Check("kv_cache", kv_need, max(mem.kv_space, 0.0), "bytes"),
    ]
    if req.ttft_slo_s is not None:
        # the P95 prompt's own steps at the typical requests' operating point (core.timing.steady_state)
        p95_ttft = wait + float(prompt_ttft(dep, state, req.p95_prompt, req.answer_len))
        checks.append(Check("ttft", p95_ttft if state.stable else math.inf, req.ttft_slo_s, "s"))
    if req.tpot_slo_s is not None:
        checks.append(Check("tpot", state.tpot_s, req.tpot_slo_s, "s"))
    if req.load != "in_flight":  # a fixed concurrency states no throughput demand
        # what the load asks for: the steady state at the in-flight count it would reach unqueued
        unqueued = state if batch <= ceiling else steady_state(dep, batch, req.prompt_len, req.answer_len)
        checks.append(_throughput_check(dep, req, unqueued, base))
    worst = math.ceil(req.users / req.replicas) if req.load == "users" else running
    return Plan(
        deployment=dep,
        requirement=req,
        in_flight=batch,
        worst_case_in_flight=worst,
        state=state,
        checks=tuple(checks),
        estimate=base,
        running=engine_runs,
        queue_wait_s=wait,
    )


def _throughput_check(dep: Deployment, req: Requirement, state: SteadyState, base: Estimate) -> Check:
    """Demanded output tokens/s (a users load: at ``state``, the unqueued operating point) against
    the most the replica sustains at its concurrency ceiling."""
    rate = req.rate_per_s / req.replicas if req.load == "rate" else state.request_rate
    demand = rate * req.answer_len
    ceiling = concurrency_ceiling(base)
    if ceiling < 1:
        return Check("throughput", demand, 0.0, "tokens/s")
    best = steady_state(dep, float(ceiling), req.prompt_len, req.answer_len)
    return Check("throughput", demand, best.request_rate * req.answer_len if best.stable else 0.0, "tokens/s")
