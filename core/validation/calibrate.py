"""Calibration from a user's own measurement: fit the overhead and efficiency terms to it.

- A vLLM start-up log fixes the memory side: the difference between the predicted and the logged
  KV budget becomes a correction of the engine overhead (non-torch memory).
- A serving benchmark fixes the speed side: bandwidth efficiency is fitted so the steady-state
  TPOT at the benchmark's concurrency equals its median TPOT and compute efficiency so TTFT
  matches its median TTFT (core.timing.steady_state.steady_state; bisection on each, alternated until both hold,
  since arriving prefills also lengthen TPOT).
A calibration is a small JSON document that can be exported, reloaded and applied to a deployment.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from core.memory.budget import gpu_memory
from core.memory.state import kv_block_size
from core.planning.check import in_flight_requests
from core.planning.requirement import Requirement
from core.spec import units
from core.spec.deployment import Deployment
from core.timing.steady_state import steady_state
from core.validation.log_parse import BenchmarkResult, StartupLog

EFFICIENCY_RANGE = (0.02, 1.0)
BISECTION_STEPS = 40
ALTERNATIONS = 8
FORMAT_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class Calibration:
    compute: float | None = None
    bandwidth: float | None = None
    overhead_correction_bytes: float = 0.0
    source: str = ""

    def apply(self, dep: Deployment) -> Deployment:
        eff = dep.efficiency
        eff = dataclasses.replace(eff, compute=self.compute or eff.compute, bandwidth=self.bandwidth or eff.bandwidth)
        # the correction lands on non-torch memory first, then on the CUDA-graph term
        field = "non_torch_bytes_tp" if dep.parallel.tp > 1 else "non_torch_bytes"
        non_torch = dep.engine.non_torch(dep.parallel, dep.gpu.interconnect) + self.overhead_correction_bytes
        graphs = max(dep.engine.cuda_graph_bytes + min(non_torch, 0.0), 0.0)
        engine = dataclasses.replace(
            dep.engine, efficiency=eff, cuda_graph_bytes=graphs, **{field: max(non_torch, 0.0)}
        )
        return dataclasses.replace(dep, engine=engine)

    def to_json(self) -> str:
        return json.dumps(
            {"format": "llm-tradeoff-calibration", "version": FORMAT_VERSION, **dataclasses.asdict(self)}, indent=2
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Calibration:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"calibration file: not JSON ({err})") from None
        if not isinstance(data, dict) or data.get("format") != "llm-tradeoff-calibration":
            raise ValueError("calibration file: not a calibration exported by this tool")
        try:
            calibration = cls(
                compute=data.get("compute"),
                bandwidth=data.get("bandwidth"),
                overhead_correction_bytes=float(data.get("overhead_correction_bytes", 0.0)),
                source=str(data.get("source", "")),
            )
        except (TypeError, ValueError) as err:
            raise ValueError(f"calibration file: {err}") from None
        for name in ("compute", "bandwidth"):
            value = getattr(calibration, name)
            if value is not None and not EFFICIENCY_RANGE[0] <= value <= EFFICIENCY_RANGE[1]:
                raise ValueError(f"calibration file: {name} efficiency must be between 0.02 and 1, got {value!r}")
        if abs(calibration.overhead_correction_bytes) > 64 * units.GiB:
            raise ValueError("calibration file: overhead correction must be within 64 GiB")
        return calibration


@dataclass(frozen=True)
class Fit:
    calibration: Calibration
    before: dict[str, float]
    """Predicted / measured - 1 per metric before calibration."""
    after: dict[str, float]


def calibrate_memory(dep: Deployment, log: StartupLog) -> Fit:
    """Fit the overhead so the predicted KV budget equals the logged one (same settings as the log)."""
    if "kv_cache_gib" not in log.values:
        raise ValueError("the log has no 'Available KV cache memory' line to calibrate memory with")
    measured = log.values["kv_cache_gib"] * units.GiB
    predicted = gpu_memory(dep).kv_budget
    calibration = Calibration(overhead_correction_bytes=predicted - measured, source="vLLM start-up log")
    after = gpu_memory(calibration.apply(dep)).kv_budget
    before, later = {"kv_cache": predicted / measured - 1}, {"kv_cache": after / measured - 1}
    if "attention_block_size" in log.values:  # a hybrid's forced block size: a check, nothing to fit
        block = kv_block_size(dep) / log.values["attention_block_size"] - 1
        before["block_size"] = later["block_size"] = block
    return Fit(calibration, before, later)


def _bisect(function, target: float, decreasing: bool) -> float:
    """The efficiency in EFFICIENCY_RANGE where function(efficiency) == target."""
    low, high = EFFICIENCY_RANGE
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        above = function(middle) > target
        if above == decreasing:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _operating_point(dep: Deployment, bench: BenchmarkResult) -> tuple[float, int, int]:
    values = bench.values
    prompt = round(bench.input_len or 0)
    answer = round(bench.output_len or 0)
    if prompt < 1 or answer < 1:
        raise ValueError(
            "the benchmark output has no 'Total input tokens', 'Total generated tokens' and "
            "'Successful requests' lines to take the request lengths from"
        )
    if "concurrency" in values:
        return values["concurrency"], prompt, answer
    if "request_throughput" in values:
        req = Requirement(load="rate", rate_per_s=values["request_throughput"], prompt_len=prompt, answer_len=answer)
        return in_flight_requests(dep, req), prompt, answer
    raise ValueError("the benchmark output states neither 'Maximum request concurrency' nor a request throughput")


def calibrate_speed(dep: Deployment, bench: BenchmarkResult) -> Fit:
    """Fit bandwidth efficiency to the median TPOT, then compute efficiency to the median TTFT."""
    batch, prompt, answer = _operating_point(dep, bench)
    values = bench.values
    tpot = (values.get("tpot_ms_median") or values.get("tpot_ms_mean") or 0) * units.MS
    ttft = (values.get("ttft_ms_median") or values.get("ttft_ms_mean") or 0) * units.MS
    if not tpot > 0 or not ttft > 0:
        raise ValueError("the benchmark output needs both a TTFT and a TPOT line")

    def with_eff(compute: float, bandwidth: float) -> Deployment:
        eff = dataclasses.replace(dep.efficiency, compute=compute, bandwidth=bandwidth)
        return dataclasses.replace(dep, engine=dataclasses.replace(dep.engine, efficiency=eff))

    def predict(d: Deployment) -> tuple[float, float]:
        state = steady_state(d, batch, prompt, answer)
        return state.ttft_s, state.tpot_s

    before_ttft, before_tpot = predict(dep)
    compute, bandwidth = dep.efficiency.compute, dep.efficiency.bandwidth
    for _ in range(ALTERNATIONS):  # TPOT also carries the prefill share, so the two fits interact
        bandwidth = _bisect(lambda b, c=compute: predict(with_eff(c, b))[1], tpot, decreasing=True)
        compute = _bisect(lambda c, b=bandwidth: predict(with_eff(c, b))[0], ttft, decreasing=True)
    after_ttft, after_tpot = predict(with_eff(compute, bandwidth))
    calibration = Calibration(compute=compute, bandwidth=bandwidth, source="serving benchmark")
    return Fit(
        calibration,
        {"ttft": before_ttft / ttft - 1, "tpot": before_tpot / tpot - 1},
        {"ttft": after_ttft / ttft - 1, "tpot": after_tpot / tpot - 1},
    )
