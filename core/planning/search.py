"""The best deployment for a load: every GPU type, layout, precision and serving mode, evaluated at once.

A *shape* is one replica's hardware, layout, formats and scheduler budget (:mod:`core.planning.shapes`):
GPU type, tp x pp (and for MoE models dp data-parallel attention ranks with the experts split over
tp x dp GPUs), weight and KV precision, max_num_batched_tokens. For each shape that loads, one
memory estimate gives its KV ceiling and one numpy pass gives its operating curves against the
batch B in flight (:mod:`core.planning.curves`, :mod:`core.timing.steady_state`). Every count of
replicas or of prefill/decode instances is then read off those curves by interpolation, never by
re-running the model, so a search of tens of thousands of candidates takes a second or two.

Aggregated (every replica prefills and decodes, chunked prefill shares its steps):
    per replica load -> B by inverting the monotone curve rate(B) (a rate load) or
    users(B) = B (E2E(B) + T) / engine E2E(B) (users with think time T; N in flight: T = 0)
    TTFT = TTFT(B) + t_in(P95) - t_in(I),  TPOT = t_d(B) / (1 - lambda t_p)   (as the Plan check: the prompt
    rides in decode steps, t_p its chunks' marginal cost, t_in its steps; :mod:`core.timing.steady_state`)
    (dp ranks: TPOT = t_d(B) / (1 - lambda t_p / dp)^dp, :mod:`core.timing.steady_state`); every
    max_num_batched_tokens of the space is tried here, its own shape.
Disaggregated xPyD (x prefill and y decode instances of the shape, the KV moved between them;
:mod:`core.planning.disaggregated`), with the base's max_num_batched_tokens:
    prefill: rho = lambda t_p / (x dp),  queue W = rho t_p / (2 (1 - rho))   (M/D/1 per prefill rank)
    transfer: the P95 prompt's KV per GPU / (link x link eff.) + latency, over the GPU link when
              both pools share a node (:data:`core.spec.cluster.GPUS_PER_NODE`), else the cluster's inter-node link
    decode: lambda / y = B / ((O - 1) t_d(B))  ->  B,  TPOT = t_d(B)   (no prefill in its steps)
    TTFT = t_p(P95) + W + transfer + t_d(B) + overhead; a users load solves lambda = U / (E2E + T)
    by fixed-point iteration.
Board power per GPU (:mod:`core.energy.power`, P = P_idle + (P_TDP - P_idle) x u): aggregated, the decode
step's at B (the prompts' chunks ride in it); disaggregated, (x (rho P_prefill + (1 - rho) P_idle) + y P_decode(B))
/ (x + y), rho the prefill ranks' busy share; tokens per joule = output tokens/s / (GPUs x power).
A candidate meets the SLOs when it is stable, its running batch fits the KV cache it admits, and
TTFT and TPOT are within the requirement's limits. See :mod:`core.planning.pareto` for the fronts.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from core.planning.curves import Curves, columns, curves, invert, users_and_think
from core.planning.disaggregated import disaggregated
from core.planning.requirement import Requirement
from core.planning.shapes import MODES, SearchSpace, shapes
from core.spec.catalog import Catalog
from core.spec.deployment import Deployment

__all__ = ["MODES", "Candidates", "SearchSpace", "search", "shapes"]


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
    power_w: np.ndarray  # average board power per GPU (core.energy.power); NaN without power figures
    meets_slo: np.ndarray

    def __len__(self) -> int:
        return len(self.shape)

    @property
    def cost_per_million_output_tokens(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.cost_per_hour / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def tokens_per_joule(self) -> np.ndarray:
        """Output tokens per joule of GPU-board energy = tokens/s / (GPUs x W per GPU)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.output_tokens_per_s / (self.num_gpus * self.power_w)

    @property
    def tokens_per_s_per_gpu(self) -> np.ndarray:
        return self.output_tokens_per_s / self.num_gpus

    @property
    def tokens_per_s_per_user(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return 1.0 / self.tpot_s


def search(catalog: Catalog, base: Deployment, req: Requirement, space=None, progress=None) -> Candidates:
    """Every candidate deployment for ``req``, evaluated (module docstring). ``base`` gives the model,
    the engine and its release, the levers; the space varies the rest. ``progress(share done)``
    is called as the shapes are evaluated."""
    space = space or SearchSpace()
    kept, found, todo = [], [], shapes(catalog, base, req, space)
    for n, dep in enumerate(todo):
        if progress is not None and n % 64 == 0:
            progress(n / len(todo))
        variant = dep.engine.max_num_batched_tokens != base.engine.max_num_batched_tokens
        if variant and "aggregated" not in space.modes:
            continue
        c = curves(dep, req)
        if c is None:
            continue  # the weights leave no room for one request's KV
        index, _ = len(kept), kept.append(dep)
        if "aggregated" in space.modes:
            found.append(_aggregated(index, dep, req, c, space))
        if "disaggregated" in space.modes and not variant:
            found.append(disaggregated(index, dep, req, c, space))
    names = [f.name for f in dataclasses.fields(Candidates) if f.name != "shapes"]
    none = {k: np.zeros(0, dtype=bool if k == "meets_slo" else float) for k in names}
    merged = {k: np.concatenate([c[k] for c in found]) if found else none[k] for k in names}
    if space.max_cost_per_hour is not None:  # NaN (no price) compares False: left out too
        within = merged["cost_per_hour"] <= space.max_cost_per_hour
        merged = {k: v[within] for k, v in merged.items()}
    return Candidates(shapes=tuple(kept), **merged)


def _aggregated(index: int, dep: Deployment, req: Requirement, c: Curves, space: SearchSpace) -> dict:
    per_replica = dep.parallel.num_gpus
    replicas = np.arange(1, space.max_gpus // per_replica + 1, dtype=float)
    if req.load == "rate":
        batch = invert(req.rate_per_s / replicas, c.rate, c.batch)
    else:
        users, think = users_and_think(req)
        closed = c.batch * (c.e2e_s + think) / c.engine_e2e_s
        batch = invert(users / replicas, closed, c.batch)
    ok = np.isfinite(batch) & (batch <= c.ceiling)
    b = np.where(ok, batch, c.batch[-1])
    tpot = np.interp(b, c.batch, np.where(np.isfinite(c.tpot_s), c.tpot_s, 1e30))
    ok &= tpot < 1e29  # past the batch where arriving prefills take every step
    tpot = np.where(ok, tpot, math.inf)
    ttft = np.where(ok, np.interp(b, c.batch, c.ttft_p95_s), math.inf)
    rate = np.where(ok, np.interp(b, c.batch, c.rate) * replicas, 0.0)
    power = np.interp(b, c.batch, c.power_decode_w)  # the steady step, prompts' chunks riding in it
    return columns(index, 0, dep, req, replicas, replicas, np.zeros_like(replicas), b, ttft, tpot, rate, ok, power)
