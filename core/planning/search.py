"""The best deployment for a load: every GPU type, layout, precision and serving mode, evaluated at once.

A *shape* is one replica's hardware and formats: GPU type, tp x pp, weight and KV precision. For
each shape that loads, one estimate gives its KV ceiling and one numpy pass gives its operating
curves against the batch B in flight (:mod:`core.timing.steady_state`). Every count of replicas or
of prefill/decode instances is then read off those curves by interpolation, never by re-running
the model, so a search of tens of thousands of candidates takes well under a second.

Aggregated (every replica prefills and decodes, chunked prefill shares its steps):
    per replica load -> B by inverting the monotone curve rate(B) (a rate load) or
    users(B) = B (E2E(B) + T) / engine E2E(B) (users with think time T; N in flight: T = 0)
    TTFT = t_p(P95 prompt) + t_d(B) + overhead,  TPOT = t_d(B) / (1 - lambda t_p)   (as the Plan check)
Disaggregated xPyD (x prefill and y decode instances of the shape, the KV moved between them):
    prefill: rho = lambda t_p / x,  queue W = rho t_p / (2 (1 - rho))   (M/D/1)
    transfer: the P95 prompt's KV per GPU / (link x link eff.) + latency, over the GPU link when
              both pools share a node (:data:`core.spec.cluster.GPUS_PER_NODE`), else the cluster's inter-node link
    decode: lambda / y = B / ((O - 1) t_d(B))  ->  B,  TPOT = t_d(B)   (no prefill in its steps)
    TTFT = t_p(P95) + W + transfer + t_d(B) + overhead; a users load solves lambda = U / (E2E + T)
    by fixed-point iteration.
A candidate meets the SLOs when it is stable, its running batch fits the KV cache it admits, and
TTFT and TPOT are within the requirement's limits. See :mod:`core.planning.pareto` for the fronts.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from core.estimate.result import estimate
from core.memory.request_kv import own_kv_bytes
from core.planning.requirement import Requirement
from core.spec.catalog import Catalog
from core.spec.cluster import DEFAULT_INTER_NODE, GPUS_PER_NODE, INTER_NODE_LINKS
from core.spec.deployment import Deployment, Parallelism, Workload
from core.spec.engine import TENSOR_PARALLEL
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision
from core.timing.phases import prefill_time
from core.timing.steady_state import steady_state

MODES = ("aggregated", "disaggregated")
GRID_POINTS, FIXED_POINT_STEPS = 160, 6  # batch points from 1 (plus 24 below: light loads); lambda iterations
MAX_PREFILL_INSTANCES, MAX_DECODE_INSTANCES = 8, 16


@dataclass(frozen=True)
class SearchSpace:
    gpus: tuple[str, ...] = ()
    """Catalog GPU ids; empty = every catalog GPU."""
    tensor_parallel: tuple[int, ...] = (1, 2, 4, 8)
    pipeline_parallel: tuple[int, ...] = (1, 2)
    weight_dtypes: tuple[str, ...] = ("bf16", "fp8", "int4")
    """Formats tried; those wider than the checkpoint's are left out."""
    kv_dtypes: tuple[str, ...] = ("auto", "fp8")
    modes: tuple[str, ...] = MODES
    max_gpus: int = 64
    inter_node: str = DEFAULT_INTER_NODE

    def __post_init__(self) -> None:
        if not 1 <= self.max_gpus <= 4096:
            raise ValueError(f"max_gpus must be from 1 to 4096, got {self.max_gpus!r}")
        if bad := [m for m in self.modes if m not in MODES]:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {bad[0]!r}")
        if self.inter_node not in INTER_NODE_LINKS:
            raise ValueError(f"inter-node link must be one of {', '.join(INTER_NODE_LINKS)}, got {self.inter_node!r}")


@dataclass(frozen=True)
class Candidates:
    """Every candidate evaluated, as columns (one entry per candidate)."""

    shapes: tuple[Deployment, ...]
    shape: np.ndarray  # index into ``shapes``
    mode: np.ndarray  # 0 aggregated, 1 disaggregated
    replicas: np.ndarray  # aggregated: replicas; disaggregated: prefill + decode instances
    prefill: np.ndarray
    decode: np.ndarray
    num_gpus: np.ndarray
    max_num_seqs: np.ndarray
    cost_per_hour: np.ndarray  # NaN where the GPU has no catalog price
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    output_tokens_per_s: np.ndarray
    meets_slo: np.ndarray

    def __len__(self) -> int:
        return len(self.shape)

    @property
    def cost_per_million_output_tokens(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.cost_per_hour / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def tokens_per_s_per_gpu(self) -> np.ndarray:
        return self.output_tokens_per_s / self.num_gpus

    @property
    def tokens_per_s_per_user(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return 1.0 / self.tpot_s


def shapes(catalog: Catalog, base: Deployment, req: Requirement, space: SearchSpace) -> list[Deployment]:
    """Every replica shape in ``space`` the model can be split and stored on (see module docstring)."""
    listed = [catalog.gpu(g) for g in space.gpus] if space.gpus else catalog.gpus
    gpus = [base.gpu if g.id == base.gpu.id else g for g in listed]  # the base's price or custom spec holds
    native = WEIGHT_PRECISIONS[base.model.native_dtype]
    formats = [base.weights] + [
        WEIGHT_PRECISIONS[w]
        for w in space.weight_dtypes
        if w != base.weights.name and WEIGHT_PRECISIONS[w].bits_per_element <= native.bits_per_element
    ]
    longest = min(req.longest_request, base.model.max_context)
    engine = dataclasses.replace(base.engine, max_model_len=longest, efficiency=None)  # each GPU's class default
    found = []
    for gpu in gpus:
        for tp in (t for t in space.tensor_parallel if t in TENSOR_PARALLEL):
            for pp in space.pipeline_parallel:
                if tp * pp > space.max_gpus or tp > GPUS_PER_NODE:
                    continue  # tensor parallelism across nodes is left out (its all-reduces would cross the NICs)
                for weights in formats:
                    for kv in dict.fromkeys(space.kv_dtypes):
                        try:
                            dep = dataclasses.replace(
                                base,
                                gpu=gpu,
                                weights=weights,
                                kv=kv_precision(kv, weights),
                                parallel=Parallelism(tp=tp, pp=pp),
                                engine=engine,
                            )
                        except ValueError:
                            continue  # this GPU cannot run that format, or the model does not split tp ways
                        found.append(dep)
    return found


def search(catalog: Catalog, base: Deployment, req: Requirement, space=None, progress=None) -> Candidates:
    """Every candidate deployment for ``req``, evaluated (module docstring). ``base`` gives the model,
    the engine and its release, the levers; the space varies the rest. ``progress(share done)``
    is called as the shapes are evaluated."""
    space = space or SearchSpace()
    kept, columns, todo = [], [], shapes(catalog, base, req, space)
    for n, dep in enumerate(todo):
        if progress is not None and n % 64 == 0:
            progress(n / len(todo))
        curves = _curves(dep, req)
        if curves is None:
            continue  # the weights leave no room for one request's KV
        index, _ = len(kept), kept.append(dep)
        if "aggregated" in space.modes:
            columns.append(_aggregated(index, dep, req, curves, space))
        if "disaggregated" in space.modes:
            columns.append(_disaggregated(index, dep, req, curves, space))
    names = [f.name for f in dataclasses.fields(Candidates) if f.name != "shapes"]
    none = {k: np.zeros(0, dtype=bool if k == "meets_slo" else float) for k in names}
    merged = {k: np.concatenate([c[k] for c in columns]) if columns else none[k] for k in names}
    return Candidates(shapes=tuple(kept), **merged)


@dataclass(frozen=True)
class _Curves:
    batch: np.ndarray
    ceiling: int
    """Requests the KV cache admits at the typical length with one P95 request (as the Plan check)."""
    prefill_s: float
    prefill_p95_s: float
    decode_s: np.ndarray
    tpot_s: np.ndarray
    rate: np.ndarray
    """Aggregated steady-state request rate at each batch [1/s]."""
    e2e_s: np.ndarray
    engine_e2e_s: np.ndarray
    transfer_bytes: float
    overhead_s: float


def _curves(dep: Deployment, req: Requirement) -> _Curves | None:
    est = estimate(dep, Workload(input_len=req.prompt_len, output_len=req.answer_len), enforce_context=False)
    space = est.memory.kv_space
    typical = own_kv_bytes(dep, req.prompt_len + req.answer_len, req.prompt_len)
    longest = own_kv_bytes(dep, req.longest_request, req.p95_prompt)
    if space < longest or typical <= 0:
        return None
    ceiling = min(int((space - longest) // typical) + 1, est.max_num_seqs)
    batch = np.unique(np.concatenate((np.geomspace(1e-3, 1.0, 24), np.geomspace(1.0, max(ceiling, 1), GRID_POINTS))))
    state = steady_state(dep, batch, req.prompt_len, req.answer_len)
    return _Curves(
        batch=batch,
        ceiling=ceiling,
        prefill_s=state.prefill_s,
        prefill_p95_s=float(prefill_time(dep, 1, req.p95_prompt).seconds),
        decode_s=np.asarray(state.decode_step_s, dtype=float),
        tpot_s=np.asarray(state.tpot_s, dtype=float),
        rate=np.asarray(state.request_rate, dtype=float),
        e2e_s=np.asarray(state.e2e_s, dtype=float),
        engine_e2e_s=np.asarray(state.engine_e2e_s, dtype=float),
        transfer_bytes=float(own_kv_bytes(dep, req.p95_prompt, req.p95_prompt)),
        overhead_s=dep.efficiency.request_overhead_s,
    )


def _users_and_think(req: Requirement) -> tuple[float, float]:
    """A closed-loop load as (users, think time); N in flight are N users who never think."""
    return (req.users, req.think_time_s) if req.load == "users" else (float(req.in_flight), 0.0)


def _invert(x: np.ndarray, curve: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """The batch at which the increasing ``curve`` reaches each ``x``; infinity beyond its end."""
    order = np.maximum.accumulate(curve)  # guard against float noise: interp needs it non-decreasing
    b = np.interp(x, order, batch)
    return np.where(x > order[-1] * (1 + 1e-9), math.inf, b)


def _aggregated(index: int, dep: Deployment, req: Requirement, c: _Curves, space: SearchSpace) -> dict:
    per_replica = dep.parallel.num_gpus
    replicas = np.arange(1, space.max_gpus // per_replica + 1, dtype=float)
    if req.load == "rate":
        batch = _invert(req.rate_per_s / replicas, c.rate, c.batch)
    else:
        users, think = _users_and_think(req)
        closed = c.batch * (c.e2e_s + think) / c.engine_e2e_s
        batch = _invert(users / replicas, closed, c.batch)
    ok = np.isfinite(batch) & (batch <= c.ceiling)
    b = np.where(ok, batch, c.batch[-1])
    decode = np.interp(b, c.batch, c.decode_s)
    tpot = np.interp(b, c.batch, np.where(np.isfinite(c.tpot_s), c.tpot_s, 1e30))
    ok &= tpot < 1e29  # past the batch where arriving prefills take every step
    tpot = np.where(ok, tpot, math.inf)
    ttft = np.where(ok, c.prefill_p95_s + decode + c.overhead_s, math.inf)
    rate = np.where(ok, np.interp(b, c.batch, c.rate) * replicas, 0.0)
    return _columns(index, 0, dep, req, replicas, replicas, np.zeros_like(replicas), b, ttft, tpot, rate, ok)


def _disaggregated(index: int, dep: Deployment, req: Requirement, c: _Curves, space: SearchSpace) -> dict:
    per = dep.parallel.num_gpus
    x, y = np.meshgrid(np.arange(1, MAX_PREFILL_INSTANCES + 1.0), np.arange(1, MAX_DECODE_INSTANCES + 1.0))
    x, y = x.ravel(), y.ravel()
    fits = (x + y) * per <= space.max_gpus
    x, y = x[fits], y[fits]
    one_node = (x + y) * per <= GPUS_PER_NODE
    eff = dep.efficiency
    link = np.where(one_node, dep.gpu.link_bandwidth, INTER_NODE_LINKS[space.inter_node]) * eff.link
    transfer = eff.allreduce_latency_s + c.transfer_bytes / link
    # decode instances: lambda / y = B / ((O - 1) t_d(B)), t_d without prefill chunks in its steps
    decode_only = c.decode_s
    decode_rate = c.batch / (max(req.answer_len - 1, 1) * decode_only)

    def at(rate):
        rho = rate * c.prefill_s / x
        wait = np.where(rho < 1, rho * c.prefill_s / (2 * np.maximum(1 - rho, 1e-12)), math.inf)
        b = _invert(rate / y, decode_rate, c.batch)
        step = np.interp(np.minimum(b, c.batch[-1]), c.batch, decode_only)
        ttft = c.prefill_p95_s + wait + transfer + step + c.overhead_s
        return b, step, ttft, (rho < 1) & np.isfinite(b) & (b <= c.ceiling)

    if req.load == "rate":
        rate = np.full_like(x, req.rate_per_s)
        b, tpot, ttft, ok = at(rate)
    else:
        users, think = _users_and_think(req)
        # start from the fastest possible cycle (most load), then follow E2E(lambda)
        rate = np.full_like(x, users / (think + c.prefill_s + req.answer_len * float(decode_only[0])))
        for _ in range(FIXED_POINT_STEPS):
            b, tpot, ttft, ok = at(rate)
            e2e = np.where(ok, ttft + (req.answer_len - 1) * tpot, math.inf)
            rate = np.where(ok, users / (think + e2e), rate)
        b, tpot, ttft, ok = at(rate)
    tpot, ttft = np.where(ok, tpot, math.inf), np.where(ok, ttft, math.inf)
    b = np.where(ok, b, c.batch[-1])
    return _columns(index, 1, dep, req, x + y, x, y, b, ttft, tpot, np.where(ok, rate, 0.0), ok)


def _columns(index, mode, dep, req, replicas, prefill, decode, batch, ttft, tpot, rate, ok) -> dict:
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
        "meets_slo": meets,
    }
