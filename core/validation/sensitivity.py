"""Which inputs and assumptions move an answer most: one-at-a-time changes, as a tornado.

Each factor is moved down and up by a stated step (efficiencies and overheads by 20 %, lengths and
batch by a factor of 2, utilization by 0.05) and the estimate is recomputed; the result is the
relative change of the chosen metric. Factors are sorted by the width of their swing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.estimate.result import estimate
from core.spec.deployment import Deployment, Workload

METRICS = {
    "tpot": lambda e: e.latency.tpot_s,
    "ttft": lambda e: e.latency.ttft_s,
    "throughput": lambda e: e.throughput.output_tokens_per_s,
    "max_concurrency": lambda e: float(e.kv.max_concurrency_at_request_len),
}
EFFICIENCY_STEP = 0.2
SIZE_FACTOR = 2
UTILIZATION_STEP = 0.05


@dataclass(frozen=True)
class Swing:
    factor: str
    low: float
    """Relative change of the metric when the factor goes down (e.g. -0.12 for 12 % less)."""
    high: float

    @property
    def width(self) -> float:
        return abs(self.high - self.low)


def _variants(dep: Deployment, work: Workload):
    eff = dep.efficiency
    for name in ("compute", "bandwidth"):
        value = getattr(eff, name)
        yield (
            f"{name}_efficiency",
            (dep.with_efficiency(**{name: max(value * (1 - EFFICIENCY_STEP), 0.01)}), work),
            (dep.with_efficiency(**{name: min(value * (1 + EFFICIENCY_STEP), 1.0)}), work),
        )
    step = eff.step_overhead_s
    yield (
        "step_overhead",
        (dep.with_efficiency(step_overhead_s=step * (1 - EFFICIENCY_STEP)), work),
        (dep.with_efficiency(step_overhead_s=step * (1 + EFFICIENCY_STEP)), work),
    )

    def overhead(scale: float) -> Deployment:
        field = "non_torch_bytes_tp" if dep.parallel.tp > 1 else "non_torch_bytes"
        return dep.with_engine(
            cuda_graph_bytes=dep.engine.cuda_graph_bytes * scale,
            **{field: dep.engine.non_torch(dep.parallel, dep.gpu.interconnect) * scale},
        )

    yield ("engine_overhead", (overhead(1 - EFFICIENCY_STEP), work), (overhead(1 + EFFICIENCY_STEP), work))
    u = dep.memory_fraction
    yield (
        "gpu_memory_utilization",
        (dep.with_engine(gpu_memory_utilization=max(u - UTILIZATION_STEP, 0.05)), work),
        (dep.with_engine(gpu_memory_utilization=min(u + UTILIZATION_STEP, 1.0)), work),
    )
    for name in ("input_len", "output_len", "batch"):
        value = getattr(work, name)
        yield (
            name,
            (dep, dataclasses.replace(work, **{name: max(value // SIZE_FACTOR, 1)})),
            (dep, dataclasses.replace(work, **{name: value * SIZE_FACTOR})),
        )


def sensitivity(dep: Deployment, work: Workload, metric: str) -> list[Swing]:
    """Swings of ``metric`` (a key of METRICS) over the factors, widest first; factors whose change
    is impossible (e.g. a request past max_model_len) are left out."""
    pick = METRICS[metric]
    base = pick(estimate(dep, work))
    swings = []
    for name, down, up in _variants(dep, work):
        try:
            low, high = pick(estimate(*down)), pick(estimate(*up))
        except ValueError:
            continue
        if base:
            swings.append(Swing(name, low / base - 1, high / base - 1))
    return sorted(swings, key=lambda s: s.width, reverse=True)
