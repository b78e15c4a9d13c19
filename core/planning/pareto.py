"""Pareto fronts and the best deployment among searched candidates (:mod:`core.planning.search`).

Fronts are taken over the candidates that meet the SLOs, or over every stable candidate when none
does (each point then says ``meets_slo: false``):
- cost: cost per 1M output tokens against TPOT, both lower-is-better (priced GPUs only);
- throughput: output tokens/s per GPU against tokens/s per user (1 / TPOT), both higher-is-better.
A point is on a front when no other candidate is at least as good on both axes and better on one,
comparing values to :data:`SIGNIFICANT` figures (as the fronts' hover shows them): a candidate that
matches another on one axis and is worse on the other is dominated (B300 beside B200 at the same
TPOT, 0.001 % apart), and of candidates that tie on both axes the front keeps one, the cheapest
per hour among those not beaten on the unrounded values.
The best deployment is the cheapest per hour that meets the SLOs (then fewer GPUs, then lower
TPOT); without prices on any of them, the one with the fewest GPUs. With the objective
"tokens-per-joule" it is the one that meets the SLOs with the most output tokens per joule of
GPU-board energy (:mod:`core.energy.power`; GPUs without power figures last), then the cheapest.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.energy.power import J_PER_KWH, EnergyInputs
from core.planning.search import MODES, Candidates
from core.spec import units

SIGNIFICANT = 3
"""Significant figures two values must share to tie on a front: the fronts' hover shows three, and
the model resolves nothing finer (docs/accuracy.md), so values equal to three figures are one
point to the reader."""


def resolution(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to :data:`SIGNIFICANT` figures (0, infinities and NaN unchanged); monotone,
    so a value no larger than another stays no larger. Magnitudes beyond 1e±300 (no cost or time
    comes near) round at 1e±300, where the scale still fits a float."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values) & (values != 0)
    magnitude = np.clip(np.floor(np.log10(np.abs(values, where=finite, out=np.ones_like(values)))), -300, 300)
    scale = 10.0 ** (SIGNIFICANT - 1 - magnitude)
    return np.where(finite, np.round(values * scale) / scale, values)


def front(x: np.ndarray, y: np.ndarray, mask: np.ndarray, cheaper: np.ndarray | None = None) -> np.ndarray:
    """Indices of the points (within ``mask``) not dominated when both ``x`` and ``y`` are minimized,
    compared at :func:`resolution`, ordered by ``x``. Of points that tie on both, the one kept is
    not beaten on the raw values by another of them, and is the lowest in ``cheaper`` (NaN last)
    among those, then in ``x`` and ``y``; so the front is a subset of the raw values' front."""
    idx = np.flatnonzero(mask & np.isfinite(x) & np.isfinite(y))
    if idx.size == 0:
        return idx
    xr, yr = resolution(x[idx]), resolution(y[idx])
    order = np.lexsort((y[idx], x[idx], yr, xr))
    idx, xr, yr = idx[order], xr[order], yr[order]
    starts = np.flatnonzero(np.concatenate(([True], (xr[1:] != xr[:-1]) | (yr[1:] != yr[:-1]))))
    best_before = np.concatenate(([math.inf], np.minimum.accumulate(yr)[:-1]))
    ends = np.append(starts[1:], idx.size)
    kept = [(s, e) for s, e in zip(starts, ends, strict=True) if yr[s] < best_before[s]]
    return np.array([_representative(idx[s:e], x, y, cheaper) for s, e in kept], dtype=int)


def _representative(tied: np.ndarray, x: np.ndarray, y: np.ndarray, cheaper: np.ndarray | None) -> int:
    """The one of ``tied`` (points equal at the front's resolution, sorted by x then y) to keep."""
    if tied.size == 1 or cheaper is None:
        return int(tied[0])
    tx, ty = x[tied], y[tied]
    beaten = [((tx <= tx[k]) & (ty <= ty[k]) & ((tx < tx[k]) | (ty < ty[k]))).any() for k in range(tied.size)]
    unbeaten = tied[~np.array(beaten)]
    price = np.where(np.isnan(cheaper[unbeaten]), math.inf, cheaper[unbeaten])
    return int(unbeaten[np.lexsort((y[unbeaten], x[unbeaten], price))[0]])


def _pool(c: Candidates) -> np.ndarray:
    return c.meets_slo if c.meets_slo.any() else np.isfinite(c.tpot_s)


def cost_front(c: Candidates) -> np.ndarray:
    return front(c.cost_per_million_output_tokens, c.tpot_s, _pool(c), c.cost_per_hour)


def throughput_front(c: Candidates) -> np.ndarray:
    return front(-c.tokens_per_s_per_user, -c.tokens_per_s_per_gpu, _pool(c), c.cost_per_hour)


OBJECTIVES = ("cost", "tokens-per-joule")


def best(c: Candidates, objective: str = "cost") -> int | None:
    """Index of the best deployment for ``objective`` (module docstring), None when no candidate meets
    the SLOs."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    idx = np.flatnonzero(c.meets_slo)
    if idx.size == 0:
        return None
    cost = np.where(np.isnan(c.cost_per_hour[idx]), math.inf, c.cost_per_hour[idx])
    order = np.lexsort((c.tpot_s[idx], c.num_gpus[idx], cost))
    if objective == "tokens-per-joule":
        per_joule = np.where(np.isfinite(c.tokens_per_joule[idx]), c.tokens_per_joule[idx], -math.inf)
        order = np.lexsort((c.tpot_s[idx], c.num_gpus[idx], cost, -per_joule))
    return int(idx[order[0]])


def candidate_to_dict(c: Candidates, i: int, energy: EnergyInputs | None = None) -> dict[str, Any]:
    """One candidate as the JSON of ``python -m core search``: its layout (tp, pp, dp data-parallel
    attention ranks, ep the GPUs the experts are split over whole, 1 when they are tensor-split),
    max_num_batched_tokens in effect (``batched_tokens_default``: the engine's own), its running
    batch, cost and latencies."""
    dep = c.shapes[c.shape[i]]
    disaggregated = MODES[c.mode[i]] == "disaggregated"
    cost, per_million = c.cost_per_hour[i], c.cost_per_million_output_tokens[i]
    power, per_joule = c.power_w[i], c.tokens_per_joule[i]
    energy = energy or EnergyInputs()
    kwh = energy.pue * 1e6 / (per_joule * J_PER_KWH) if np.isfinite(per_joule) and per_joule > 0 else None
    return {
        "gpu": dep.gpu.id,
        "num_gpus": int(c.num_gpus[i]),
        "tp": dep.parallel.tp,
        "pp": dep.parallel.pp,
        "dp": dep.parallel.dp,
        "ep": dep.parallel.expert_parallel,
        "replicas": int(c.replicas[i]),
        "prefill_instances": int(c.prefill[i]) if disaggregated else None,
        "decode_instances": int(c.decode[i]) if disaggregated else None,
        "weight_dtype": dep.weights.name,
        "kv_dtype": dep.kv.name,
        "mode": MODES[c.mode[i]],
        "max_num_seqs": int(c.max_num_seqs[i]),
        "max_num_batched_tokens": dep.batch_limits[0],
        "batched_tokens_default": dep.engine.max_num_batched_tokens is None,
        "cost_per_hour": None if math.isnan(cost) else round(float(cost), 2),
        "cost_per_million_output_tokens": round(float(per_million), 3) if np.isfinite(per_million) else None,
        "ttft_ms": _ms(c.ttft_s[i]),
        "tpot_ms": _ms(c.tpot_s[i]),
        "tokens_per_s_per_gpu": round(float(c.tokens_per_s_per_gpu[i]), 1),
        "tokens_per_s_per_user": round(float(c.tokens_per_s_per_user[i]), 1),
        "power_per_gpu_w": round(float(power), 1) if np.isfinite(power) else None,
        "tokens_per_joule": round(float(per_joule), 4) if np.isfinite(per_joule) else None,
        # board energy x PUE per 1M output tokens, at the electricity price (core.energy.power)
        "energy_kwh_per_million_output_tokens": None if kwh is None else round(float(kwh), 4),
        "energy_usd_per_million_output_tokens": None if kwh is None else round(float(kwh * energy.usd_per_kwh), 4),
        "meets_slo": bool(c.meets_slo[i]),
    }


def _ms(seconds: float) -> float | None:
    return round(float(seconds) / units.MS, 2) if np.isfinite(seconds) else None


def search_to_dict(
    c: Candidates, modes: tuple[str, ...], objective: str = "cost", energy: EnergyInputs | None = None
) -> dict[str, Any]:
    """The public JSON of ``python -m core search`` (README); ``best`` for ``objective``; each point's
    energy bill at ``energy``'s electricity price and PUE."""
    chosen = best(c, objective)
    energy = energy or EnergyInputs()
    return {
        "objective": objective,
        "electricity_usd_per_kwh": energy.usd_per_kwh,
        "pue": energy.pue,
        "candidates_evaluated": len(c),
        "shapes_evaluated": len(c.shapes),
        "modes_evaluated": list(modes),
        "meeting_slo": int(c.meets_slo.sum()),
        "best": None if chosen is None else candidate_to_dict(c, chosen, energy),
        "pareto": [candidate_to_dict(c, int(i), energy) for i in cost_front(c)],
        "pareto_throughput": [candidate_to_dict(c, int(i), energy) for i in throughput_front(c)],
    }
