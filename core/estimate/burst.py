"""TTFT of B requests arriving together as vLLM V1 admits them: median, P99 and the last request.

``vllm bench serve --request-rate inf`` sends all B requests at once and prints the mean, median
and P99 TTFT. V1 admits while the prompt's KV blocks fit, max_num_seqs and the token budget allow
(decodes first, then prompt chunks FCFS), and preempts the newest running request when a decode
needs a block and none is free (recompute). So there are no whole rounds and the first admissions
are larger than the KV fit at full length (review 2026-12 §1.4). The numbers come from stepping that
scheduler, the project's simulator (:func:`core.serving.simulate.simulate`, every step's time the
same roofline as the static model), on B identical requests of I + O tokens sent at t = 0:

    TTFT_i = first token of request i - 0   (request overhead included);  P50, P99 and max over i
    TPOT_i = (E2E_i - TTFT_i) / (O - 1);  the mean over i (what the benchmark prints as mean TPOT)

Where the simulator does not run (data-parallel attention ranks, more than MAX_SIMULATED requests,
a request the cache cannot hold) the static rounds model stands in (:mod:`core.estimate.scope`):
request j waits ceil(j / R) - 1 rounds of E2E(R), TTFT_j = (ceil(j / R) - 1) E2E(R) + TTFT(R).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.messages import duration
from core.spec import units

if TYPE_CHECKING:
    from core.estimate.result import Estimate
    from core.spec.deployment import Deployment

MAX_SIMULATED = 20_000
"""Bursts up to this many requests are stepped (a few hundred ms at most); larger ones use rounds."""


@dataclass(frozen=True)
class BurstTtft:
    """TTFT of B requests arriving together [s]: as ``vllm bench serve`` prints them, and the last."""

    median_s: float
    p99_s: float
    last_s: float
    source: str
    """"simulator" (V1 admission stepped) or "rounds" (the static model)."""
    preemptions: int = 0
    steps: int = 0
    tpot_mean_s: float | None = None
    """Mean per-request TPOT, (E2E - TTFT) / (O - 1), as a benchmark prints it: the first admitted decode
    while the others' prompts are computed, so it exceeds one decode step of B (None from rounds)."""
    peak_running: int | None = None
    """Most requests running at once in the stepped burst (the simulator's sampled series, 2,000 points):
    V1 admits on the prompt's blocks, so it can exceed the KV fit at full length (None from rounds)."""


def burst_ttft(e: Estimate) -> BurstTtft:
    """Median, P99 and last TTFT of ``e.workload.batch`` requests arriving together (module docstring)."""
    dep, work = e.deployment, e.workload
    if dep.parallel.dp == 1 and work.batch <= MAX_SIMULATED and e.memory.kv_budget > 0 and e.engine_starts:
        stepped = _stepped(dep, work.batch, work.input_len, work.output_len)
        if stepped is not None:
            return stepped
    return _rounds(e)


@functools.lru_cache(maxsize=64)
def _stepped(dep: Deployment, batch: int, input_len: int, output_len: int) -> BurstTtft | None:
    """The burst stepped by the simulator (deterministic, so a page rerun on the same scenario reuses
    it); None when the simulator refuses it."""
    from core.serving.simulate import simulate  # serving builds on estimate: imported when first used
    from core.serving.traffic import Traffic

    try:
        sim = simulate(
            dep,
            Traffic(mode="concurrency", concurrency=batch),
            batch,
            np.full(batch, input_len, dtype=np.int64),
            np.full(batch, output_len, dtype=np.int64),
        )
    except ValueError:
        return None
    ttft = sim.ttft
    return BurstTtft(
        median_s=float(np.median(ttft)),
        p99_s=float(np.percentile(ttft, 99)),
        last_s=float(ttft.max()),
        source="simulator",
        preemptions=int(sim.preemptions),
        steps=int(sim.steps),
        tpot_mean_s=float(np.mean(sim.tpot)) if sim.tpot.size else None,
        peak_running=int(sim.series_running.max()) if sim.series_running.size else None,
    )


def _rounds(e: Estimate) -> BurstTtft:
    """The static model's TTFT of request j: (ceil(j / R) - 1) E2E(R) + TTFT(R)."""
    running, batch = e.running_batch, e.workload.batch
    last_round = math.ceil(batch / running) - 1
    e2e_round = (e.latency.ttft_s - _first_round_ttft(e)) / last_round if last_round else 0.0

    def at(share: float) -> float:
        j = max(1, math.ceil(share * batch))
        return (math.ceil(j / running) - 1) * e2e_round + _first_round_ttft(e)

    return BurstTtft(median_s=at(0.5), p99_s=at(0.99), last_s=e.latency.ttft_s, source="rounds")


def _first_round_ttft(e: Estimate) -> float:
    return float(e.latency.prefill.seconds) + e.deployment.efficiency.request_delay_s(e.workload.batch)


def burst_line(burst: dict) -> str:
    """The CLI's line for the ``burst_ttft`` of the JSON report."""
    how = "V1 admission stepped" if burst["source"] == "simulator" else "static rounds"
    return (
        f"  TTFT  median {duration(burst['median_ms'] * units.MS)}, P99 {duration(burst['p99_ms'] * units.MS)},"
        f" last {duration(burst['last_ms'] * units.MS)}   (as vllm bench serve prints it; {how})"
    )


def burst_dict(burst: BurstTtft) -> dict:
    """The ``burst_ttft`` object of ``python -m core estimate --json`` [ms]."""

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value / units.MS, 3)

    return {
        "median_ms": ms(burst.median_s),
        "p99_ms": ms(burst.p99_s),
        "last_ms": ms(burst.last_s),
        "source": burst.source,
        "preemptions": burst.preemptions,
        "tpot_mean_ms": ms(burst.tpot_mean_s),
    }
