"""Predicted against measured for a benchmark run read back, and the calibration fitted to it
(issue 31, item 3).

The prediction is made at the measured run's own load, not the plan's: the simulator serves the
run's number of requests (at most :data:`core.benchcheck.commands.MAX_PROMPTS`) of its mean prompt
and answer lengths, in a closed loop of its clients (``--max-concurrency``) or an open Poisson loop
at its arrival rate (``--request-rate``; the completed requests per second where the file states none).
Each metric: predicted, measured, ratio = predicted / measured, and whether the measurement lies in
the band the validation supports for the deployment's kernel tier (ttft_ms, tpot_ms,
output_tokens_per_s; :func:`core.estimate.likely.tier_band`).

"Calibrate this deployment" fits the efficiencies to the same replay (the simulator, not the
steady state of :func:`core.validation.calibrate.calibrate_speed`: a benchmark's closed loop of equal
requests runs in waves, all clients re-sending at once, and its median TTFT is a wave's queue, which
no steady state holds). A step's time goes as 1 / efficiency where it is bound, so each round scales

    bandwidth <- bandwidth x predicted median TPOT / measured median TPOT
    compute   <- compute x predicted median TTFT / measured median TTFT

(each clamped to the sidebar's EFFICIENCY_RANGE) until both are within FIT_TOLERANCE, at most
FIT_STEPS rounds. A fit still beyond SPEED_TOLERANCE (an efficiency pinned at a bound) is refused with
calibrate's own messages (``calib.ttft_unmatched``, ``calib.tpot_unmatched``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.benchcheck.commands import MAX_PROMPTS, BenchLoad, Predicted, predict
from core.benchcheck.result_files import MeasuredRun
from core.estimate.result import estimate
from core.messages import duration
from core.spec import units
from core.spec.deployment import MAX_TOKENS, Deployment, Workload
from core.validation.calibrate import EFFICIENCY_RANGE, SPEED_TOLERANCE, Calibration, CalibrationError, Fit

METRICS = ("ttft_ms", "ttft_p99_ms", "tpot_ms", "itl_ms", "output_tokens_per_s")
FIT_STEPS = 12
FIT_TOLERANCE = 0.01  # both medians within 1 %: done


class RunError(ValueError):
    """A measured run the simulator cannot replay (lengths or load out of range); one line."""


@dataclass(frozen=True, kw_only=True)
class Row:
    metric: str
    predicted: float
    measured: float | None
    ratio: float | None
    """predicted / measured; None without a measurement (or a measured 0)."""
    band: tuple[float, float] | None
    inside: bool | None
    """The measurement lies in the band; None without a band or a measurement."""


@dataclass(frozen=True, kw_only=True)
class Comparison:
    load: BenchLoad
    predicted: Predicted
    rows: tuple[Row, ...]


def run_load(run: MeasuredRun) -> BenchLoad:
    """The measured run's load as the simulator replays it (module docstring)."""
    prompt, answer = round(run.mean_input_len), round(run.mean_output_len)
    for name, tokens in (("mean input length", prompt), ("mean output length", answer)):
        if not 1 <= tokens <= MAX_TOKENS:
            raise RunError(f"{run.tool} result: {name} of {tokens:,} tokens is outside 1 to {MAX_TOKENS:,}")
    rate = run.configured_rate or run.request_rate
    if run.concurrency is None and not (rate and 0 < rate <= 1e6):
        raise RunError(f"{run.tool} result: neither a concurrency nor a request rate to replay")
    return BenchLoad(
        mode="concurrency" if run.concurrency else "rate",
        concurrency=run.concurrency or 1,
        rate_per_s=rate or 1.0,
        prompt_len=prompt,
        answer_len=answer,
        range_ratio=0.0,
        dataset="random",
        num_prompts=max(1, min(run.prompts, MAX_PROMPTS)),
        warmups=0,
    )


def _replayable(dep: Deployment, load: BenchLoad) -> None:
    """RunError for a closed loop of more requests than the deployment's KV cache holds at the run's
    lengths: the run was made on another deployment (or measured preemption, which a replay of
    hundreds of preempting requests would take minutes to simulate)."""
    if load.mode != "concurrency":
        return
    workload = Workload(input_len=load.prompt_len, output_len=load.answer_len)
    held = estimate(dep, workload, enforce_context=False).kv.max_concurrency_at_request_len
    if load.concurrency > held:
        raise RunError(
            f"the run keeps {load.concurrency:,} requests of {load.prompt_len:,} + {load.answer_len:,} tokens in "
            f"flight and this deployment's KV cache holds {held:,}: set the deployment the benchmark ran on"
        )


def compare(dep: Deployment, run: MeasuredRun) -> Comparison:
    """Every metric predicted at the run's own load against what it measured."""
    load = run_load(run)
    _replayable(dep, load)
    try:
        predicted = predict(dep, load)
    except ValueError as err:  # a request longer than the whole KV cache, a model that does not fit
        raise RunError(f"the measured run cannot be replayed on this deployment: {err}") from None
    measured = run.values()
    rows = []
    for metric in METRICS:
        value, truth, band = predicted.values[metric], measured[metric], predicted.bands.get(metric)
        ratio = value / truth if truth else None
        inside = None
        if band and truth is not None:  # the band around the prediction holds the measurement
            inside = band[0] <= truth <= band[1]
        rows.append(Row(metric=metric, predicted=value, measured=truth, ratio=ratio, band=band, inside=inside))
    return Comparison(load=load, predicted=predicted, rows=tuple(rows))


def _with_efficiency(dep: Deployment, compute: float, bandwidth: float) -> Deployment:
    eff = dataclasses.replace(dep.efficiency, compute=compute, bandwidth=bandwidth)
    return dataclasses.replace(dep, engine=dataclasses.replace(dep.engine, efficiency=eff))


def calibrate_run(dep: Deployment, run: MeasuredRun) -> Fit:
    """Compute and bandwidth efficiency with which the simulated benchmark (at the run's own load)
    reproduces its median TTFT and median TPOT (module docstring); CalibrationError where an efficiency
    pinned at the sidebar's bound still misses the measurement by more than SPEED_TOLERANCE."""
    load = run_load(run)
    _replayable(dep, load)
    low, high = EFFICIENCY_RANGE

    def medians(compute: float, bandwidth: float) -> tuple[float, float]:
        values = predict(_with_efficiency(dep, compute, bandwidth), load, bands=False).values
        return values["ttft_ms"], values["tpot_ms"]

    compute, bandwidth = dep.efficiency.compute, dep.efficiency.bandwidth
    try:
        first = ttft, tpot = medians(compute, bandwidth)
        for _ in range(FIT_STEPS):  # time ~ 1 / efficiency: each step scales by predicted / measured
            if abs(ttft / run.ttft_ms - 1) <= FIT_TOLERANCE and abs(tpot / run.tpot_ms - 1) <= FIT_TOLERANCE:
                break
            bandwidth = min(max(bandwidth * tpot / run.tpot_ms, low), high)
            compute = min(max(compute * ttft / run.ttft_ms, low), high)
            ttft, tpot = medians(compute, bandwidth)
    except ValueError as err:
        raise RunError(f"the measured run cannot be replayed on this deployment: {err}") from None
    point = {
        "model": dep.model.name,
        "gpu": dep.gpu.name,
        "batch": str(load.concurrency) if load.mode == "concurrency" else f"{load.rate_per_s:g}/s",
        "prompt": f"{load.prompt_len:,}",
        "answer": f"{load.answer_len:,}",
    }
    for code, line, measured, predicted, fitted in (
        ("ttft_unmatched", "Median TTFT (ms)", run.ttft_ms, ttft, compute),
        ("tpot_unmatched", "Median TPOT (ms)", run.tpot_ms, tpot, bandwidth),
    ):
        if abs(predicted / measured - 1) > SPEED_TOLERANCE:
            bound = min(EFFICIENCY_RANGE, key=lambda edge, f=fitted: abs(edge - f))
            raise CalibrationError(
                code,
                line=line,
                measured=f"{measured:g} ms",
                predicted=duration(predicted * units.MS),
                bound=f"{bound:g}",
                **point,
            )
    calibration = Calibration(compute=compute, bandwidth=bandwidth, source=f"{run.tool} result")
    before = {"ttft": first[0] / run.ttft_ms - 1, "tpot": first[1] / run.tpot_ms - 1}
    return Fit(calibration, before, {"ttft": ttft / run.ttft_ms - 1, "tpot": tpot / run.tpot_ms - 1})
