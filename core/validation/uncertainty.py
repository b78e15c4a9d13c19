"""Likely ranges for headline estimates, from the validation set (data/validation/errors.json).

A range is a factor band, value / k to value x k. For each metric and GPU class, k is the 90th
percentile of the factor by which a held-out prediction missed its measurement,
k = exp(P90 |ln(predicted / measured)|), over the validation rows predicted held out by source
(:mod:`core.validation.grouped`); a class with fewer than MIN_ROWS rows falls back to all GPUs.

Why the log ratio and not the absolute percentage error |predicted / measured - 1|: the error of
these models is multiplicative (a prediction 3x too high and one 3x too low miss by the same
amount), and the APE is not symmetric: 3x too high is an APE of 2, 3x too low one of 0.67, and an
APE band value x (1 -+ P90 APE) reaches zero or below as soon as the P90 APE passes 1 (the
validation set's TTFT and throughput do), which reads as "no idea". A factor band never reaches
zero, and 90 % of the held-out predictions lie within its factor of what was measured.

The file is written by ``python -m core validate --write``; a test checks it matches the stored report.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass

import numpy as np

from core.spec.catalog import DATA_DIR

ERRORS_PATH = DATA_DIR / "validation" / "errors.json"
MIN_ROWS = 3
QUANTILE = 90
"""The percentile of the held-out factor errors a band covers."""
HEADLINE_METRICS = ("ttft_ms", "tpot_ms", "output_tokens_per_s")
"""The metrics the Explorer and its exported files give a likely range for."""


@dataclass(frozen=True, kw_only=True)
class Band:
    """value / factor to value x factor: the range holding 90 % of held-out predictions' misses."""

    low: float
    high: float
    factor: float
    """k >= 1, the P90 of max(predicted / measured, measured / predicted) on the validation set."""
    rows: int
    """Validation rows the factor was taken from."""


@functools.cache
def load_errors() -> dict:
    if not ERRORS_PATH.is_file():
        return {}
    return json.loads(ERRORS_PATH.read_text())


def band(value: float, metric: str, gpu_class: str) -> Band | None:
    """value / k to value x k for ``metric`` on GPUs of ``gpu_class`` ('hbm' or 'gddr'), k the
    validation set's P90 factor error (unitless, >= 1; ``value`` in any unit, the band in the same);
    None without enough rows, or for a value that is not a positive number (no range around none)."""
    if not (math.isfinite(value) and value > 0):
        return None
    table = load_errors().get(metric, {})
    entry = table.get(gpu_class) if table.get(gpu_class, {}).get("rows", 0) >= MIN_ROWS else table.get("all")
    if not entry or entry.get("rows", 0) < MIN_ROWS:
        return None
    k = entry["p90_factor"]
    return Band(low=value / k, high=value * k, factor=k, rows=entry["rows"])


def p90_factor(ratios) -> float:
    """exp(P90 |ln r|) over predicted / measured ratios ``r`` (> 0): the factor within which 90 % of
    the predictions lie of their measurement."""
    logs = np.abs(np.log(np.asarray(ratios, dtype=float)))
    return math.exp(float(np.percentile(logs, QUANTILE)))


def errors_table(comparisons) -> dict:
    """The content of errors.json from validation comparisons: metric -> class -> rows, P90 and
    median APE, and the P90 factor the bands use."""
    from core.spec.catalog import load_catalog
    from core.validation.dataset import summary

    catalog = load_catalog()
    table: dict[str, dict[str, dict]] = {}
    for scope, group in (
        ("all", comparisons),
        *(
            (cls, [c for c in comparisons if catalog.gpu(c.row.get("gpu")).memory_type == cls])
            for cls in ("hbm", "gddr")
        ),
    ):
        ratios: dict[str, list[float]] = {}
        for c in group:
            for metric, error in c.errors.items():
                ratios.setdefault(metric, []).append(1 + error)  # error = predicted / measured - 1
        for metric, stats in summary(group).items():
            table.setdefault(metric, {})[scope] = {
                "rows": stats["rows"],
                "p90_ape": round(stats["p90_ape"], 4),
                "median_ape": round(stats["median_ape"], 4),
                "p90_factor": round(p90_factor(ratios[metric]), 4),
            }
    return table
