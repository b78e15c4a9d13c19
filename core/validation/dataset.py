"""Predicted against measured: the public validation set in ``data/validation/*.csv``.

Each row is a published measurement with its source (schema in data/validation/README.md).
Start-up logs are predicted with :func:`core.estimate.result.estimate` under the row's engine settings;
serving benchmarks with the simulator under the row's traffic shape (closed-loop concurrency,
all requests at once, or a request rate); single-stream rows with the static batch-1 estimate.
Errors are predicted / measured - 1.

Rows are grouped by source document (``source_group``); the fitted speed constants are chosen and
checked leave-one-source-out in :mod:`core.validation.grouped`.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.estimate.result import estimate
from core.serving.simulate import simulate
from core.serving.traffic import Traffic, dataset_lengths
from core.spec import units
from core.spec.catalog import DATA_DIR, Catalog, load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig, Parallelism
from core.spec.precision import kv_precision, weight_precision
from core.spec.release import engine_id, parse_release

VALIDATION_DIR = DATA_DIR / "validation"
MAX_SIMULATED = 2000


@dataclass(frozen=True)
class Row:
    fields: dict[str, str]

    def get(self, key: str) -> str:
        return (self.fields.get(key) or "").strip()

    def number(self, key: str) -> float | None:
        value = self.get(key)
        if not value:
            return None
        return float("inf") if value.lower() == "inf" else float(value.replace(",", ""))

    @property
    def id(self) -> str:
        return self.get("id")

    @property
    def group(self) -> str:
        """The source document the row comes from: one harness at one release, or one thread."""
        return self.get("source_group") or self.get("source_url")


@dataclass(frozen=True)
class Comparison:
    row: Row
    predicted: dict[str, float]
    measured: dict[str, float]
    error: str = ""
    """Why the row could not be predicted although it should have been (a bug to fix)."""
    skipped: str = ""
    """Why the row is outside what the tool predicts (stated lengths missing, engine out of scope)."""

    @property
    def errors(self) -> dict[str, float]:
        return {k: self.predicted[k] / v - 1 for k, v in self.measured.items() if k in self.predicted and v}


@functools.cache
def load_rows(directory: Path = VALIDATION_DIR) -> tuple[Row, ...]:
    rows = []
    for path in sorted(directory.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            rows.extend(Row(fields=dict(r)) for r in csv.DictReader(fh))
    return tuple(rows)


def deployment_for(row: Row, catalog: Catalog, efficiency=None) -> Deployment:
    model = catalog.model(row.get("model"))
    weights = weight_precision(row.get("weight_dtype") or model.native_dtype)
    release = parse_release(row.get("engine"), row.get("engine_version"))

    def whole(key: str) -> int | None:
        value = row.number(key)
        return int(value) if value else None

    engine = EngineConfig(
        gpu_memory_utilization=row.number("gpu_memory_utilization"),
        max_model_len=whole("max_model_len"),
        max_num_seqs=whole("max_num_seqs"),
        max_num_batched_tokens=whole("max_num_batched_tokens"),
        release=release,
        endpoint="offline" if row.get("front_end") == "offline" else row.get("endpoint") or "chat",
        **({"efficiency": efficiency} if efficiency is not None else {}),
    )
    dep = Deployment(
        model=model,
        gpu=catalog.gpu(row.get("gpu")),
        weights=weights,
        kv=kv_precision(row.get("kv_dtype") or "auto", weights),
        parallel=Parallelism(tp=(whole("num_gpus") or 1) // (whole("dp") or 1), dp=whole("dp") or 1),
        engine=engine,
    )
    return dep


def measured(row: Row) -> dict[str, float]:
    values = {}
    for key in ("weights_gib", "kv_cache_gib", "kv_tokens", "max_concurrency", "output_tokens_per_s"):
        if (v := row.number(key)) is not None:
            values[key] = v
    for metric in ("ttft_ms", "tpot_ms"):
        value = row.number(f"{metric}_median") or row.number(f"{metric}_mean")
        if metric == "tpot_ms" and value is None:
            value = row.number("itl_ms_mean")
        if value is not None:
            values[metric] = value
    if (p99 := row.number("ttft_ms_p99")) is not None:
        values["ttft_p99_ms"] = p99
    return values


class NotPredictable(ValueError):
    """A row the tool cannot fairly predict (lengths not stated, engine out of scope)."""


def predict(row: Row, catalog: Catalog, efficiency=None) -> dict[str, float]:
    kind = row.get("kind")
    if row.get("excluded"):
        raise NotPredictable(f"excluded: {row.get('excluded')}")
    try:
        engine_id(row.get("engine"))
    except ValueError:
        raise NotPredictable(f"engine {row.get('engine') or '?'} is not a continuous-batching server") from None
    if not row.get("engine_version"):
        raise NotPredictable("the engine release is not stated (memory and host rules depend on it)")
    try:
        parse_release(row.get("engine"), row.get("engine_version"))
    except ValueError as err:
        raise NotPredictable(str(err)) from None
    dep = deployment_for(row, catalog, efficiency)
    if kind != "startup_log" and not (row.number("input_len") and row.number("output_len")):
        raise NotPredictable("request lengths are not stated")
    prompt = int(row.number("input_len") or 1)
    answer = int(row.number("output_len") or 1)
    if kind == "startup_log":
        result = estimate(dep, Workload(input_len=1, output_len=1))
        return {
            "weights_gib": result.memory.weights / units.GiB,
            "kv_cache_gib": result.memory.kv_budget / units.GiB,
            "kv_tokens": float(result.kv.capacity_tokens),
            "max_concurrency": result.kv.max_concurrency_at_max_model_len,
        }
    if kind == "single_stream" or row.get("traffic") == "single":
        result = estimate(dep, Workload(input_len=prompt, output_len=answer, batch=1))
        return {
            "ttft_ms": result.latency.ttft_s / units.MS,
            "tpot_ms": result.latency.tpot_s / units.MS,
            # what a one-client benchmark reports: generated tokens over its duration (prefills included)
            "output_tokens_per_s": result.throughput.output_tokens_per_s,
        }
    count = int(min(row.number("num_prompts") or MAX_SIMULATED, MAX_SIMULATED))
    rate = row.number("request_rate")
    concurrency = row.number("concurrency")
    if row.get("traffic") == "rate" and rate and np.isfinite(rate):
        traffic = Traffic(mode="rate", rate_per_s=rate)
    else:  # closed loop, or everything sent at once (= as many clients as requests)
        traffic = Traffic(mode="concurrency", concurrency=int(concurrency or count))
    prompts, answers = dataset_lengths(row.get("lengths"), prompt, answer)
    sim = simulate(dep, traffic, count, prompts, answers)
    return {
        "ttft_ms": float(np.median(sim.ttft)) / units.MS,
        "ttft_p99_ms": float(np.percentile(sim.ttft, 99)) / units.MS,
        "tpot_ms": float(np.median(sim.tpot)) / units.MS,
        "output_tokens_per_s": sim.output_tokens_per_s,
    }


def compare_all(rows=None, efficiency_by_class=None) -> list[Comparison]:
    catalog = load_catalog()
    out = []
    for row in rows if rows is not None else load_rows():
        try:
            gpu_class = catalog.gpu(row.get("gpu")).memory_type
            efficiency = (efficiency_by_class or {}).get(gpu_class)
            out.append(Comparison(row, predict(row, catalog, efficiency), measured(row)))
        except NotPredictable as reason:
            out.append(Comparison(row, {}, measured(row), skipped=str(reason)))
        except (KeyError, ValueError) as err:
            out.append(Comparison(row, {}, measured(row), error=str(err) or type(err).__name__))
    return out


def traffic_kind(row: Row) -> str:
    """'single' (one client), 'all_at_once', 'concurrency' (closed loop) or 'rate' (open loop)."""
    if row.get("kind") == "single_stream" or row.get("traffic") == "single":
        return "single"
    return row.get("traffic") or "?"


def summary(comparisons: list[Comparison], by: str = "metric") -> dict[str, dict[str, float]]:
    """Median and P90 absolute percentage error per metric; ``by`` 'class' (GPU memory class),
    'engine', 'traffic' (:func:`traffic_kind`) or 'architecture' (dense / moe) splits each metric
    further ("tpot_ms / hbm")."""
    catalog = load_catalog()
    groups: dict[str, list[float]] = {}
    split = {
        "class": lambda row: catalog.gpu(row.get("gpu")).memory_type,
        "engine": lambda row: row.get("engine") or "?",
        "traffic": traffic_kind,
        "architecture": lambda row: "moe" if catalog.model(row.get("model")).moe is not None else "dense",
    }.get(by)
    for c in comparisons:
        for metric, error in c.errors.items():
            key = metric if split is None else f"{metric} / {split(c.row)}"
            groups.setdefault(key, []).append(abs(error))
    return {
        k: {"rows": len(v), "median_ape": float(np.median(v)), "p90_ape": float(np.percentile(v, 90))}
        for k, v in sorted(groups.items())
    }


def source_summary(comparisons: list[Comparison]) -> dict[str, dict[str, float]]:
    """Per metric, the median over source groups of each group's median APE: every source counts once,
    however many rows it has."""
    per: dict[str, dict[str, list[float]]] = {}
    for c in comparisons:
        for metric, error in c.errors.items():
            per.setdefault(metric, {}).setdefault(c.row.group, []).append(abs(error))
    return {
        m: {"sources": len(g), "median_ape": float(np.median([np.median(v) for v in g.values()]))}
        for m, g in sorted(per.items())
    }


SPEED_METRICS = ("ttft_ms", "ttft_p99_ms", "tpot_ms", "output_tokens_per_s")
"""The speed metrics scored and fitted: TTFT's median and its P99 apart (an offset on every request and a
slow prefill give the same median but different tails), TPOT and output tokens/s."""
