"""The benchmark that checks a plan: the command that reproduces its load on one replica, and what the
simulator predicts that very benchmark will measure (issue 31, item 2).

The load: one replica (the command targets one endpoint) gets the plan's per-replica load. A users or
in-flight load is a closed loop of C = max(1, round(in flight per replica)) clients (``--max-concurrency
C``, ``--request-rate inf``); a request-rate load is an open (Poisson) loop at rate / replicas.

Lengths: the random dataset draws each length uniformly from [L (1 - r), L (1 + r)] (vLLM's
``--random-range-ratio`` r, vllm/benchmarks/datasets: ``get_sampling_params``, symmetric since
vllm-project/vllm#16126, merged 2025-04-10, in 0.8.4 on). Its P95 is L (1 + 0.9 r), so a plan's P95
length P gives r = (P / L - 1) / 0.9, capped below 1 (vLLM takes r in [0, 1)); the larger of the
prompt's and the answer's r is used, since one flag sets both. ShareGPT instead draws log-normal
lengths (:data:`core.serving.traffic.SHAREGPT_SIGMA`) with the dataset's means.

Requests: N = max(MIN_PROMPTS, PROMPTS_PER_CLIENT x C) for a closed loop (vLLM's recipes ask for at
least 5 x ``--max-concurrency`` for a steady state), max(MIN_PROMPTS, rate x STEADY_SECONDS) for an open
one, at most MAX_PROMPTS; warm-up W = min(max(C, MIN_WARMUPS), MAX_WARMUPS) requests, not measured.

The predictions simulate exactly that: N requests of those lengths under that traffic on one replica
(fewer where N x (L_prompt + L_answer) passes MAX_SIMULATED_TOKENS, to bound the time)
(:func:`core.serving.simulate.simulate`), read as the benchmark reports them: median and P99 TTFT,
median TPOT and ITL, output tokens/s; each headline number with the band its kernel tier's held-out
validation supports (:func:`core.estimate.likely.tier_band`). A plan that fails its KV cache check or
whose queue grows without end gets the commands and no prediction: its benchmark measures preemption
and queueing, and the plan's fixes come first.
"""

from __future__ import annotations

import functools
import math
import shlex
from dataclasses import dataclass

import numpy as np

from core.estimate.likely import ALL, tier_band
from core.messages import message
from core.planning.check import Plan
from core.serving.load_sweep import summarize
from core.serving.simulate import simulate
from core.serving.traffic import SHAREGPT_SIGMA, Lengths, Traffic
from core.spec import units
from core.spec.deployment import Deployment
from core.timing.kernel_speed import kernel_speed
from core.validation.uncertainty import HEADLINE_METRICS

TOOLS = ("vllm", "guidellm", "aiperf")
DATASETS = ("random", "sharegpt")
MIN_PROMPTS, PROMPTS_PER_CLIENT, STEADY_SECONDS, MAX_PROMPTS = 200, 10, 120, 2000
MIN_WARMUPS, MAX_WARMUPS = 10, 100
MAX_SIMULATED_TOKENS = 3_000_000
"""Prompt + answer tokens a prediction simulates at most (about a second): beyond, fewer requests."""
MAX_RANGE_RATIO = 0.9
SHAREGPT_MEANS = (221, 199)
"""Mean prompt and answer tokens of ShareGPT as vLLM samples it (core.serving.traffic.SHAREGPT_SIGMA)."""
VLLM_BENCH_CLI_FROM = (0, 9, 0)
"""``vllm bench serve`` (vllm/benchmarks/serve.py): added by vllm-project/vllm#13993 (random dataset
only), every dataset by #16690 (April 2025); before it ``python benchmarks/benchmark_serving.py`` takes
the same flags. 0.9.0 is the first release we state both for."""
SYMMETRIC_RANGE_FROM = (0, 8, 4)
"""vllm-project/vllm#16126: before it ``--random-range-ratio`` drew from [L x r, L] (default 1.0)."""
WARMUPS_FROM = (0, 11, 1)
"""``--num-warmups``: vllm-project/vllm#26943, merged 2025-10-15, after the 0.11.0 tag."""
RESULT_FILE = "bench.json"
URL = "http://localhost:8000"


@dataclass(frozen=True, kw_only=True)
class BenchLoad:
    """What the benchmark sends to one replica."""

    mode: str  # "concurrency" (closed loop) or "rate" (open, Poisson)
    concurrency: int
    rate_per_s: float
    prompt_len: int
    answer_len: int
    range_ratio: float
    dataset: str
    num_prompts: int
    warmups: int

    @property
    def traffic(self) -> Traffic:
        if self.mode == "rate":
            return Traffic(mode="rate", rate_per_s=self.rate_per_s)
        return Traffic(mode="concurrency", concurrency=self.concurrency)

    def lengths(self) -> tuple[Lengths, Lengths]:
        if self.dataset == "sharegpt":
            return (
                Lengths(mean=self.prompt_len, distribution="lognormal", spread=SHAREGPT_SIGMA["input"]),
                Lengths(mean=self.answer_len, distribution="lognormal", spread=SHAREGPT_SIGMA["output"]),
            )
        kind = "uniform" if self.range_ratio > 0 else "fixed"
        return (
            Lengths(mean=self.prompt_len, distribution=kind, spread=self.range_ratio),
            Lengths(mean=self.answer_len, distribution=kind, spread=self.range_ratio),
        )


@dataclass(frozen=True, kw_only=True)
class Predicted:
    """What the simulator says the benchmark will report [ms, tokens/s], and the bands by tier."""

    values: dict[str, float]
    """ttft_ms (median), ttft_p99_ms, tpot_ms (median), itl_ms (median), output_tokens_per_s."""
    bands: dict[str, tuple[float, float] | None]
    tier: str


Note = tuple[str, dict[str, str]]
"""(code, fields) of a sentence in the catalog, ``benchcheck.note_<code>``."""


@dataclass(frozen=True, kw_only=True)
class BenchCheck:
    load: BenchLoad
    commands: dict[str, str]
    """tool -> command line."""
    notes: tuple[Note, ...]
    predicted: Predicted | None
    """None for a plan that does not hold its load (a failed KV cache check, a queue without end): its
    benchmark would measure preemption and queueing, which the plan's fixes should remove first."""


def note_text(note: Note, lang: str = "en") -> str:
    return message(f"benchcheck.note_{note[0]}", lang, **note[1])


def range_ratio(typical: int, p95: int) -> float:
    """r with L (1 + 0.9 r) = P95 (uniform on [L (1 - r), L (1 + r)]), in [0, MAX_RANGE_RATIO]."""
    return round(min(max((p95 / typical - 1) / 0.9, 0.0), MAX_RANGE_RATIO), 3)


def plan_load(plan: Plan, dataset: str = "random", num_prompts: int | None = None) -> BenchLoad:
    """The load of one replica of ``plan`` as a benchmark sends it (module docstring)."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}")
    req, release = plan.requirement, plan.deployment.engine.release
    rate = req.rate_per_s / req.replicas
    concurrency = max(1, round(plan.in_flight)) if math.isfinite(plan.in_flight) else 1
    mode = "rate" if req.load == "rate" else "concurrency"
    ratio = max(range_ratio(req.prompt_len, req.p95_prompt), range_ratio(req.answer_len, req.p95_answer))
    if release.engine == "vllm" and not release.at_least(SYMMETRIC_RANGE_FROM):
        ratio = 0.0  # that release's ratio means something else: fixed lengths
    prompt, answer = (req.prompt_len, req.answer_len) if dataset == "random" else SHAREGPT_MEANS
    if num_prompts is None:
        wanted = rate * STEADY_SECONDS if mode == "rate" else PROMPTS_PER_CLIENT * concurrency
        num_prompts = int(min(max(MIN_PROMPTS, math.ceil(wanted)), MAX_PROMPTS))
    if isinstance(num_prompts, bool) or not isinstance(num_prompts, int) or not 1 <= num_prompts <= MAX_PROMPTS:
        raise ValueError(f"num_prompts must be an integer from 1 to {MAX_PROMPTS}, got {num_prompts!r}")
    return BenchLoad(
        mode=mode,
        concurrency=concurrency,
        rate_per_s=rate,
        prompt_len=prompt,
        answer_len=answer,
        range_ratio=ratio if dataset == "random" else 0.0,
        dataset=dataset,
        num_prompts=num_prompts,
        warmups=min(max(concurrency, MIN_WARMUPS), MAX_WARMUPS),
    )


@functools.lru_cache(maxsize=32)
def predict(dep: Deployment, load: BenchLoad, seed: int = 0, bands: bool = True) -> Predicted:
    """Simulate the benchmark's traffic on one replica; the numbers as the benchmark reports them. Kept per
    (deployment, load): the Plan page asks again on every rerun and the simulation is deterministic
    (read-only results)."""
    prompts, answers = load.lengths()
    count = max(1, min(load.num_prompts, MAX_SIMULATED_TOKENS // (load.prompt_len + load.answer_len)))
    result = simulate(dep, load.traffic, count, prompts, answers, seed)
    stats = summarize(result)
    values = {
        "ttft_ms": stats["ttft"]["p50"] / units.MS,
        "ttft_p99_ms": stats["ttft"]["p99"] / units.MS,
        "tpot_ms": stats["tpot"]["p50"] / units.MS,
        "itl_ms": float(np.median(result.itl)) / units.MS if result.itl.size else 0.0,
        "output_tokens_per_s": result.output_tokens_per_s,
    }
    tier = kernel_speed(dep).tier
    memory_type = dep.gpu.memory_type if dep.gpu.memory_type in ("hbm", "gddr") else ALL
    found: dict[str, tuple[float, float] | None] = {}
    for metric, value in values.items():
        band = tier_band(value, metric, tier, memory_type) if bands and metric in HEADLINE_METRICS else None
        found[metric] = (band.low, band.high) if band else None
    return Predicted(values=values, bands=found, tier=tier)


def _model_id(dep: Deployment) -> str:
    return dep.model.hf_id or dep.model.name


def vllm_command(dep: Deployment, load: BenchLoad) -> tuple[str, list[Note]]:
    """``vllm bench serve`` (or benchmark_serving.py before VLLM_BENCH_CLI_FROM) for the load; flags as in
    vllm/benchmarks/serve.py ``add_cli_args`` and vllm/benchmarks/datasets ``add_dataset_parser``."""
    release, notes = dep.engine.release, []
    old = release.engine == "vllm" and not release.at_least(VLLM_BENCH_CLI_FROM)
    words = ["python", "benchmarks/benchmark_serving.py"] if old else ["vllm", "bench", "serve"]
    words += ["--backend", "vllm" if old else "openai", "--base-url", URL, "--model", _model_id(dep)]
    if load.dataset == "sharegpt":
        words += ["--dataset-name", "sharegpt", "--dataset-path", "ShareGPT_V3_unfiltered_cleaned_split.json"]
    else:
        words += ["--dataset-name", "random", "--random-input-len", str(load.prompt_len)]
        words += ["--random-output-len", str(load.answer_len), "--random-range-ratio", f"{load.range_ratio:g}"]
        words += ["--ignore-eos"]  # the answer runs to its drawn length (the default only from late 2025)
    if load.mode == "rate":
        words += ["--request-rate", f"{load.rate_per_s:g}"]
    else:
        words += ["--max-concurrency", str(load.concurrency), "--request-rate", "inf"]
    words += ["--num-prompts", str(load.num_prompts)]
    if release.engine != "vllm" or release.at_least(WARMUPS_FROM):
        words += ["--num-warmups", str(load.warmups)]
    else:
        notes.append(("no_warmups", {"release": release.name}))
    words += ["--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99"]
    words += ["--save-result", "--result-filename", RESULT_FILE]
    return shlex.join(words), notes


def guidellm_command(dep: Deployment, load: BenchLoad) -> str:
    """``guidellm benchmark`` (src/guidellm/__main__.py, v0.6: --target, --data, --profile alias
    --rate-type, --rate, --max-requests, --warmup, --output-path). Synthetic data: a normal spread of
    the uniform's standard deviation L r / sqrt(3), clipped to the same [L (1 - r), L (1 + r)]."""
    if load.dataset == "sharegpt":
        data = "ShareGPT_V3_unfiltered_cleaned_split.json"
    else:
        data = f"prompt_tokens={load.prompt_len},output_tokens={load.answer_len}"
        if load.range_ratio > 0:
            for name, mean in (("prompt_tokens", load.prompt_len), ("output_tokens", load.answer_len)):
                half = mean * load.range_ratio
                data += f",{name}_stdev={round(half / math.sqrt(3))}"
                data += f",{name}_min={max(1, math.floor(mean - half))},{name}_max={math.ceil(mean + half)}"
    words = ["guidellm", "benchmark", "--target", URL, "--model", _model_id(dep), "--data", data]
    if load.mode == "rate":
        words += ["--rate-type", "poisson", "--rate", f"{load.rate_per_s:g}"]
    else:
        words += ["--rate-type", "concurrent", "--rate", str(load.concurrency)]
    words += ["--max-requests", str(load.num_prompts), "--warmup", str(load.warmups)]
    words += ["--output-path", "guidellm-benchmarks.json"]
    return shlex.join(words)


def aiperf_command(dep: Deployment, load: BenchLoad) -> str:
    """``aiperf profile`` (ai-dynamo/aiperf docs/cli_options.md); it writes profile_export_aiperf.json
    under --artifact-dir."""
    words = ["aiperf", "profile", "--model", _model_id(dep), "--url", URL, "--endpoint-type", "chat", "--streaming"]
    stddev = [round(length * load.range_ratio / math.sqrt(3)) for length in (load.prompt_len, load.answer_len)]
    if load.dataset == "sharegpt":
        words += ["--public-dataset", "sharegpt"]
    else:
        words += ["--synthetic-input-tokens-mean", str(load.prompt_len), "--synthetic-input-tokens-stddev"]
        words += [str(stddev[0]), "--output-tokens-mean", str(load.answer_len), "--output-tokens-stddev"]
        words += [str(stddev[1]), "--extra-inputs", "ignore_eos:true"]
    if load.mode == "rate":
        words += ["--request-rate", f"{load.rate_per_s:g}"]
    else:
        words += ["--concurrency", str(load.concurrency)]
    words += ["--request-count", str(load.num_prompts), "--warmup-request-count", str(load.warmups)]
    words += ["--artifact-dir", "aiperf-artifacts"]
    return shlex.join(words)


def bench_check(plan: Plan, dataset: str = "random", num_prompts: int | None = None) -> BenchCheck:
    """The commands for every tool, with what the simulator predicts they will measure."""
    load = plan_load(plan, dataset, num_prompts)
    dep = plan.deployment
    vllm, notes = vllm_command(dep, load)
    req = plan.requirement
    if req.replicas > 1:
        notes.append(("one_replica", {"replicas": f"{req.replicas:,}"}))
    if req.load == "users":
        notes.append(("users", {"users": f"{req.users:,}", "clients": f"{load.concurrency:,}"}))
    commands = {"vllm": vllm, "guidellm": guidellm_command(dep, load), "aiperf": aiperf_command(dep, load)}
    kv_failed = any(c.name == "kv_cache" and c.status == "failed" for c in plan.checks)
    if plan.unbounded or kv_failed:
        notes.append(("not_held", {}))
        return BenchCheck(load=load, commands=commands, notes=tuple(notes), predicted=None)
    return BenchCheck(load=load, commands=commands, notes=tuple(notes), predicted=predict(dep, load))
