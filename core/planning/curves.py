"""One shape's operating curves against the batch in flight, and the columns of its candidates
(:mod:`core.planning.search`): computed once per shape, read by interpolation for every replica
count or prefill/decode split."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.energy.power import board_power_array, utilization_array
from core.memory.budget import gpu_memory
from core.memory.request_kv import own_kv_bytes
from core.planning.requirement import Requirement
from core.spec.deployment import Deployment, decode_context
from core.timing.phases import decode_step_time, prefill_time
from core.timing.steady_state import prompt_ttft, steady_state

GRID_POINTS = 160  # batch points from 1
LIGHT_LOADS = np.geomspace(1e-3, 1.0, 24)  # and below 1: light loads


@dataclass(frozen=True)
class Curves:
    batch: np.ndarray
    ceiling: int
    """Requests the replica's KV cache admits at the typical length with one P95 request per rank
    (as the Plan check), at most max_num_seqs per rank; dp x one rank's with data-parallel attention."""
    prefill_s: float
    prefill_p95_s: float
    ttft_p95_s: np.ndarray
    """TTFT of a P95 prompt at each batch, with the request overhead (core.timing.steady_state.prompt_ttft) [s]."""
    decode_s: np.ndarray
    tpot_s: np.ndarray
    rate: np.ndarray
    """Aggregated steady-state request rate at each batch [1/s]."""
    e2e_s: np.ndarray
    engine_e2e_s: np.ndarray
    transfer_bytes: float
    overhead_s: float
    power_decode_w: np.ndarray
    """Board power per GPU at each batch in flight (:mod:`core.energy.power`; NaN without power figures): a decode
    step's, and below one request the step's for that share of the time, idle for the rest [W]."""
    power_prefill_w: float
    """Board power per GPU prefilling one typical prompt [W]."""
    idle_w: float


def curves(dep: Deployment, req: Requirement) -> Curves | None:
    """The shape's curves (:mod:`core.timing.steady_state` on a grid of B), None when its weights
    leave no room for one request's KV."""
    space = gpu_memory(dep).kv_space
    # one request's own KV at the typical length, the longest, and the P95 prompt (what moves)
    typical, longest, transfer = own_kv_bytes(
        dep,
        np.array([req.prompt_len + req.answer_len, req.longest_request, req.p95_prompt]),
        np.array([req.prompt_len, req.p95_prompt, req.p95_prompt]),
    )
    if space < longest or typical <= 0:
        return None
    _, max_num_seqs = dep.batch_limits  # per rank: each data-parallel rank is its own engine
    ceiling = min(int((space - longest) // typical) + 1, max_num_seqs) * dep.parallel.dp
    batch = np.unique(np.concatenate((LIGHT_LOADS, np.geomspace(1.0, max(ceiling, 1), GRID_POINTS))))
    prefill = prefill_time(dep, 1, np.array([req.prompt_len, req.p95_prompt]))
    t_p, t_p95 = prefill.seconds
    state = steady_state(dep, batch, req.prompt_len, req.answer_len)
    decode = decode_step_time(dep, np.maximum(batch, 1.0), decode_context(req.prompt_len, req.answer_len))
    idle = math.nan if dep.gpu.idle_w is None else dep.gpu.idle_w
    stepping = np.minimum(batch, 1.0)  # below one request in flight the GPU steps that share of the time
    return Curves(
        batch=batch,
        ceiling=ceiling,
        prefill_s=float(t_p),  # a stand-alone prefill: what a disaggregated prefill server runs
        prefill_p95_s=float(t_p95),
        ttft_p95_s=np.asarray(prompt_ttft(dep, state, req.p95_prompt, req.answer_len), dtype=float),
        decode_s=np.asarray(state.decode_step_s, dtype=float),
        tpot_s=np.asarray(state.tpot_s, dtype=float),
        rate=np.asarray(state.request_rate, dtype=float),
        e2e_s=np.asarray(state.e2e_s, dtype=float),
        engine_e2e_s=np.asarray(state.engine_e2e_s, dtype=float),
        transfer_bytes=float(transfer),
        overhead_s=dep.efficiency.request_delay_s(1.0),
        power_decode_w=stepping * board_power_array(dep.gpu, utilization_array(decode)) + (1 - stepping) * idle,
        power_prefill_w=float(board_power_array(dep.gpu, utilization_array(prefill))[0]),
        idle_w=idle,
    )


def users_and_think(req: Requirement) -> tuple[float, float]:
    """A closed-loop load as (users, think time); N in flight are N users who never think."""
    return (req.users, req.think_time_s) if req.load == "users" else (float(req.in_flight), 0.0)


def invert(x: np.ndarray, curve: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """The batch at which the increasing ``curve`` reaches each ``x``; infinity beyond its end."""
    order = np.maximum.accumulate(curve)  # guard against float noise: interp needs it non-decreasing
    b = np.interp(x, order, batch)
    return np.where(x > order[-1] * (1 + 1e-9), math.inf, b)


def columns(index, mode, dep, req, replicas, prefill, decode, batch, ttft, tpot, rate, ok, power) -> dict:
    """One shape's candidates as the columns of :class:`core.planning.search.Candidates`; ``power``:
    the average board power per GPU [W]."""
    num_gpus = replicas * dep.parallel.num_gpus
    price = dep.gpu.price_per_hour
    meets = ok & (req.longest_request <= dep.max_model_len)  # a longer request is refused
    if req.ttft_slo_s is not None:
        meets &= ttft <= req.ttft_slo_s
    if req.tpot_slo_s is not None:
        meets &= tpot <= req.tpot_slo_s
    if req.load == "rate":
        meets &= rate >= req.rate_per_s * (1 - 1e-9)
    return {
        "shape": np.full(len(replicas), index),
        "mode": np.full(len(replicas), mode),
        "replicas": replicas.astype(int),
        "prefill": prefill.astype(int),
        "decode": decode.astype(int),
        "num_gpus": num_gpus.astype(int),
        "max_num_seqs": np.maximum(np.ceil(batch), 1).astype(int),
        "cost_per_hour": num_gpus * price if price else np.full(len(replicas), math.nan),
        "ttft_s": ttft,
        "tpot_s": tpot,
        "output_tokens_per_s": rate * req.answer_len,
        "power_w": np.broadcast_to(np.asarray(power, dtype=float), replicas.shape).copy(),
        "meets_slo": meets,
    }
