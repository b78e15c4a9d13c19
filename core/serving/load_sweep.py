"""Load sweep: simulate a range of request rates, find the knee and the highest rate within SLOs.

- knee: the highest offered rate the replica keeps up with: the queue does not grow over the run
  (the median TTFT of the last quarter of arrivals stays within twice that of the first quarter).
  Past it the queue grows and TTFT avalanches instead of degrading gently.
- max rate under SLOs: the highest rate whose P99 TTFT and P99 TPOT meet their limits.
- static prediction: requests/s at the memory-set concurrency ceiling from the planner's steady
  state (core.timing.steady_state.steady_state), what formulas alone predict.
- naive prediction (the chapters' capacity pitfall, which over-promises):

      naive rate = ceiling at the mean length / (single-request TPOT x mean answer length)

  The planner measures one request ("TBT 20 ms, so 50 tokens/s") and multiplies it out as if every
  slot of the concurrency ceiling streamed at that speed. Three things it leaves out each make the
  real knee lower: TPOT grows with the batch (every step reads every running request's KV, and
  prefills of arriving prompts share the steps), long-tail lengths hold several times the mean's KV
  so fewer requests fit than the ceiling at the mean length says, and queueing past the ceiling
  makes TTFT avalanche. So the naive rate sits above the static prediction and above the knee.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.estimate.result import estimate
from core.serving.sim_result import SimResult
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.deployment import Deployment, Workload
from core.timing.steady_state import steady_state

QUEUE_GROWTH = 2.0
"""Late over early median TTFT above which the queue is growing: the replica is not keeping up."""
PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class SweepPoint:
    rate: float
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    output_tokens_per_s: float
    request_throughput_per_s: float
    goodput: float
    preemptions: int
    keeps_up: bool


@dataclass(frozen=True)
class LoadSweep:
    points: tuple[SweepPoint, ...]
    knee_rate: float | None
    max_rate_under_slo: float | None
    static_rate: float
    naive_rate: float


def summarize(result: SimResult) -> dict[str, dict[str, float]]:
    """mean, p50, p90, p99 of TTFT, TPOT, ITL and E2E [s]."""
    out = {}
    for name, values in (("ttft", result.ttft), ("tpot", result.tpot), ("itl", result.itl), ("e2e", result.e2e)):
        values = values if values.size else np.zeros(1)
        out[name] = {"mean": float(values.mean()), **{f"p{q}": float(np.percentile(values, q)) for q in PERCENTILES}}
    return out


def keeps_up(result: SimResult) -> bool:
    """Whether the queue stayed bounded: late arrivals wait no longer than ~2x the early ones."""
    order = np.argsort(result.arrival)
    quarter = max(len(order) // 4, 1)
    early = np.median(result.ttft[order[:quarter]])
    late = np.median(result.ttft[order[-quarter:]])
    return bool(late <= QUEUE_GROWTH * early)


def predicted_rates(dep: Deployment, prompt_len: int, answer_len: int) -> tuple[float, float]:
    """(static rate at the concurrency ceiling, naive rate: that ceiling x single-request speed) [requests/s].

    Both use the ceiling at these (mean) lengths, capped by max_num_seqs; the static rate runs it at
    the batch's own step time with prefills, the naive one at one request's TPOT (see module docstring).
    """
    base = estimate(dep, Workload(input_len=prompt_len, output_len=answer_len))
    ceiling = max(min(base.kv.max_concurrency_at_request_len, base.max_running), 1)
    static = steady_state(dep, float(ceiling), prompt_len, answer_len).request_rate
    naive = ceiling / (base.latency.tpot_s * answer_len)
    return float(static), float(naive)


def load_sweep(
    dep: Deployment,
    rates: np.ndarray,
    num_requests: int,
    prompts: Lengths | np.ndarray,
    answers: Lengths | np.ndarray,
    ttft_slo_s: float | None = None,
    tpot_slo_s: float | None = None,
    seed: int = 0,
    burstiness: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> LoadSweep:
    """Simulate each rate (same seed for all, so the curves differ only by load)."""
    points = []
    for index, rate in enumerate(rates):
        result = simulate(
            dep,
            Traffic(mode="rate", rate_per_s=float(rate), burstiness=burstiness),
            num_requests,
            prompts,
            answers,
            seed,
        )
        tpot = result.tpot if result.tpot.size else np.zeros(1)
        points.append(
            SweepPoint(
                rate=float(rate),
                ttft_p50_s=float(np.percentile(result.ttft, 50)),
                ttft_p99_s=float(np.percentile(result.ttft, 99)),
                tpot_p50_s=float(np.percentile(tpot, 50)),
                tpot_p99_s=float(np.percentile(tpot, 99)),
                output_tokens_per_s=result.output_tokens_per_s,
                request_throughput_per_s=result.request_throughput_per_s,
                goodput=result.goodput(ttft_slo_s, tpot_slo_s),
                preemptions=result.preemptions,
                keeps_up=keeps_up(result),
            )
        )
        if progress:
            progress(index + 1, len(rates))
    keeping_up = [p.rate for p in points if p.keeps_up]
    within = [
        p.rate
        for p in points
        if (ttft_slo_s is None or p.ttft_p99_s <= ttft_slo_s) and (tpot_slo_s is None or p.tpot_p99_s <= tpot_slo_s)
    ]
    static, naive = predicted_rates(dep, _mean(prompts), _mean(answers))
    return LoadSweep(
        points=tuple(points),
        knee_rate=max(keeping_up, default=None),
        max_rate_under_slo=max(within, default=None),
        static_rate=static,
        naive_rate=naive,
    )


def _mean(lengths: Lengths | np.ndarray) -> int:
    return lengths.mean if isinstance(lengths, Lengths) else max(round(float(np.mean(lengths))), 1)
