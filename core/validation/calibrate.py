"""Calibration from a user's own measurement: fit the overhead and efficiency terms to it.

- A vLLM start-up log fixes the memory side: the difference between the predicted and the logged
  KV budget becomes a correction of the engine overhead (non-torch memory). The prediction uses the
  log's gpu_memory_utilization where it states one (the correction does not depend on it).
- A serving benchmark fixes the speed side: bandwidth efficiency is fitted so the steady-state
  TPOT at the benchmark's concurrency equals its median TPOT and compute efficiency so TTFT
  matches its median TTFT (core.timing.steady_state.steady_state; bisection on each, alternated until both hold,
  since arriving prefills also lengthen TPOT).
A fit the sidebar's inputs cannot hold (an overhead beyond their range, an efficiency pinned at a bound
that still misses the measurement) is refused with a message that says so (:class:`CalibrationError`):
such a measurement was made on another setup than the sidebar's.
A calibration is a small JSON document that can be exported, reloaded and applied to a deployment.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

from core.memory.budget import gpu_memory
from core.memory.state import kv_block_size
from core.messages import duration, gib
from core.planning.check import in_flight_requests
from core.planning.requirement import Requirement
from core.spec import units
from core.spec.deployment import MAX_BATCH, MAX_TOKENS, Deployment
from core.spec.display_name import clean_name
from core.timing.steady_state import steady_state
from core.validation.log_parse import BenchmarkResult, LogError, StartupLog

EFFICIENCY_RANGE = (0.05, 1.0)
"""What the sidebar's compute and bandwidth efficiency inputs take (ui/engine_inputs.EFFICIENCY_SLIDERS)."""
OVERHEAD_LIMIT = 64 * units.GiB
"""The largest overhead correction, either sign, the sidebar's input takes [bytes]."""
MEMORY_TOLERANCE = 0.01  # a fitted KV budget further than 1 % from the log's: the overhead cannot absorb the gap
SPEED_TOLERANCE = 0.05  # a fitted TTFT or TPOT further than 5 % from the benchmark's: an efficiency hit its bound
BISECTION_STEPS = 40
ALTERNATIONS = 8
FORMAT_VERSION = 1


class CalibrationError(LogError):
    """A measurement this scenario cannot be calibrated with; the message (``calib.<code>``) names the
    line and says why."""


@dataclass(frozen=True, kw_only=True)
class Calibration:
    compute: float | None = None
    bandwidth: float | None = None
    overhead_correction_bytes: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        low, high = EFFICIENCY_RANGE
        for name in ("compute", "bandwidth"):
            value = getattr(self, name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not (number and low <= value <= high):
                raise ValueError(f"{name} efficiency must be between {low:g} and {high:g}, got {value!r}")
        if not abs(self.overhead_correction_bytes) <= OVERHEAD_LIMIT:  # also refuses NaN
            raise ValueError(f"overhead correction must be within {OVERHEAD_LIMIT / units.GiB:g} GiB")

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
        """A calibration file this tool exported; CalibrationError (``calib.file_*``) naming what is wrong. Its
        ``source`` is shown on a button, so it is cleaned as every name from outside (no link, no image)."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError):  # not JSON, not UTF-8, an integer of more than 4,300 digits
            raise CalibrationError("file_not_json") from None
        if not isinstance(data, dict) or data.get("format") != "llm-tradeoff-calibration":
            raise CalibrationError("file_not_ours")
        low, high = EFFICIENCY_RANGE
        for name in ("compute", "bandwidth"):
            value = data.get(name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not (number and low <= value <= high):
                raise CalibrationError(
                    "file_efficiency", field=name, value=_quoted(value), low=f"{low:g}", high=f"{high:g}"
                )
        overhead = data.get("overhead_correction_bytes", 0.0)
        if isinstance(overhead, bool) or not isinstance(overhead, int | float) or not abs(overhead) <= OVERHEAD_LIMIT:
            raise CalibrationError("file_overhead", value=_quoted(overhead), limit=f"{OVERHEAD_LIMIT / units.GiB:g}")
        return cls(
            compute=data.get("compute"),
            bandwidth=data.get("bandwidth"),
            overhead_correction_bytes=float(overhead),
            source=clean_name(data.get("source") if isinstance(data.get("source"), str) else "", ""),
        )


def _quoted(value: object) -> str:
    """A value from a file as a message quotes it: at most 20 characters."""
    text = repr(value)
    return text if len(text) <= 20 else text[:20] + "…"


@dataclass(frozen=True)
class Fit:
    calibration: Calibration
    before: dict[str, float]
    """Predicted / measured - 1 per metric before calibration."""
    after: dict[str, float]


def _scenario(dep: Deployment) -> dict[str, str]:
    """The sidebar's setup as a message names it."""
    return {"model": dep.model.name, "gpu": dep.gpu.name}


def calibrate_memory(dep: Deployment, log: StartupLog) -> Fit:
    """Fit the overhead so the predicted KV budget equals the logged one (same settings as the log)."""
    values = log.values
    if "kv_cache_gib" not in values:
        raise CalibrationError("no_kv_line")
    if values["kv_cache_gib"] <= 0:
        raise CalibrationError("kv_zero", value=f"{values['kv_cache_gib']:g}")
    if values.get("attention_block_size", 1) < 1:
        raise CalibrationError("block_zero", value=f"{values['attention_block_size']:g}")
    if "utilization" in values:
        if not 0.05 <= values["utilization"] <= 1:
            raise CalibrationError("utilization_range", value=f"{values['utilization']:g}")
        dep = dep.with_engine(gpu_memory_utilization=values["utilization"])
    measured = values["kv_cache_gib"] * units.GiB
    predicted = gpu_memory(dep).kv_budget
    correction = predicted - measured
    mismatch = dict(_scenario(dep), measured=gib(measured), predicted=gib(predicted))
    hints = _memory_hints(dep, log)
    if not abs(correction) <= OVERHEAD_LIMIT:
        raise CalibrationError(
            "memory_out_of_range", hints, correction=gib(correction), limit=gib(OVERHEAD_LIMIT, 0), **mismatch
        )
    calibration = Calibration(overhead_correction_bytes=correction, source="vLLM start-up log")
    after = gpu_memory(calibration.apply(dep)).kv_budget
    if abs(after / measured - 1) > MEMORY_TOLERANCE:  # the overhead would have to go below zero
        overhead = dep.engine.non_torch(dep.parallel, dep.gpu.interconnect) + dep.engine.cuda_graph_bytes
        raise CalibrationError("memory_unreachable", hints, overhead=gib(overhead), **mismatch)
    before, later = {"kv_cache": predicted / measured - 1}, {"kv_cache": after / measured - 1}
    if "attention_block_size" in values:  # a hybrid's forced block size: a check, nothing to fit
        block = kv_block_size(dep) / values["attention_block_size"] - 1
        before["block_size"] = later["block_size"] = block
    return Fit(calibration, before, later)


def _memory_hints(dep: Deployment, log: StartupLog) -> tuple[tuple[str, dict[str, str]], ...]:
    """What the log states that differs from the scenario: its GPU's memory (beyond 5 %)."""
    logged = log.values.get("total_gib", 0) * units.GiB
    if logged and abs(logged / dep.gpu.memory_bytes - 1) > 0.05:
        return (
            ("hint_gpu_memory", {"logged": gib(logged), "gpu": dep.gpu.name, "catalog": gib(dep.gpu.memory_bytes)}),
        )
    return ()


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
    completed = values.get("completed")
    if completed is not None and (completed < 1 or completed != int(completed)):
        raise CalibrationError("no_requests", value=f"{completed:g}")
    if bench.input_len is None or bench.output_len is None:
        raise CalibrationError("no_lengths")
    for line, tokens in (("Total input tokens", bench.input_len), ("Total generated tokens", bench.output_len)):
        if not 1 <= round(tokens) <= MAX_TOKENS:
            raise CalibrationError("lengths_range", line=line, value=f"{tokens:,.1f}", limit=f"{MAX_TOKENS:,}")
    prompt, answer = round(bench.input_len), round(bench.output_len)
    if "concurrency" in values:
        concurrency = values["concurrency"]
        if not 1 <= concurrency <= MAX_BATCH or concurrency != int(concurrency):
            raise CalibrationError("concurrency", value=f"{concurrency:g}", limit=f"{MAX_BATCH:,}")
        return concurrency, prompt, answer
    if "request_throughput" in values:
        rate = values["request_throughput"]
        if not 0 < rate <= 1_000_000:
            raise CalibrationError("rate_range", value=f"{rate:g}")
        req = Requirement(load="rate", rate_per_s=rate, prompt_len=prompt, answer_len=answer)
        in_flight = in_flight_requests(dep, req)
        if not math.isfinite(in_flight):
            raise CalibrationError("rate_unreachable", rate=f"{rate:g}", **_scenario(dep))
        return in_flight, prompt, answer
    raise CalibrationError("no_operating_point")


def _measured_time(values: dict[str, float], metric: str) -> tuple[str, float]:
    """(the line read, the time [s]) of a benchmark's median TTFT or TPOT, else its mean."""
    for statistic in ("median", "mean"):
        if f"{metric}_ms_{statistic}" in values:
            line = f"{statistic.capitalize()} {metric.upper()} (ms)"
            if values[f"{metric}_ms_{statistic}"] <= 0:
                raise CalibrationError("time_zero", line=line)
            return line, values[f"{metric}_ms_{statistic}"] * units.MS
    raise CalibrationError("no_times")


def calibrate_speed(dep: Deployment, bench: BenchmarkResult) -> Fit:
    """Fit bandwidth efficiency to the median TPOT, then compute efficiency to the median TTFT."""
    batch, prompt, answer = _operating_point(dep, bench)
    (tpot_line, tpot), (ttft_line, ttft) = _measured_time(bench.values, "tpot"), _measured_time(bench.values, "ttft")

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
    point = dict(_scenario(dep), batch=f"{batch:,.3g}", prompt=f"{prompt:,}", answer=f"{answer:,}")
    for code, line, measured, predicted, fitted in (
        ("ttft_unmatched", ttft_line, ttft, after_ttft, compute),  # first: a slow prefill also lengthens TPOT
        ("tpot_unmatched", tpot_line, tpot, after_tpot, bandwidth),
    ):
        if not math.isfinite(predicted):
            raise CalibrationError("speed_unstable", **point)
        if abs(predicted / measured - 1) > SPEED_TOLERANCE:  # pinned at a bound, still off
            bound = min(EFFICIENCY_RANGE, key=lambda edge, f=fitted: abs(edge - f))
            raise CalibrationError(
                code,
                line=line,
                measured=f"{measured / units.MS:g} ms",
                predicted=duration(predicted),
                bound=f"{bound:g}",
                **point,
            )
    calibration = Calibration(compute=compute, bandwidth=bandwidth, source="serving benchmark")
    return Fit(
        calibration,
        {"ttft": before_ttft / ttft - 1, "tpot": before_tpot / tpot - 1},
        {"ttft": after_ttft / ttft - 1, "tpot": after_tpot / tpot - 1},
    )
