"""Error bands for headline estimates, from the validation set (data/validation/errors.json).

For each metric and GPU class the band is the 90th percentile of |predicted / measured - 1| over
the validation rows predicted held out by source (:mod:`core.validation.grouped`), falling back to
all GPUs when a class has fewer than MIN_ROWS rows. The file is written by
``python -m core validate --write``; a test checks it matches the stored report.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from core.spec.catalog import DATA_DIR

ERRORS_PATH = DATA_DIR / "validation" / "errors.json"
MIN_ROWS = 3


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    p90_error: float
    rows: int


@functools.cache
def load_errors() -> dict:
    if not ERRORS_PATH.is_file():
        return {}
    return json.loads(ERRORS_PATH.read_text())


def band(value: float, metric: str, gpu_class: str) -> Band | None:
    """value x (1 -+ P90 error) for ``metric`` on GPUs of ``gpu_class``; None without enough rows."""
    table = load_errors().get(metric, {})
    entry = table.get(gpu_class) if table.get(gpu_class, {}).get("rows", 0) >= MIN_ROWS else table.get("all")
    if not entry or entry.get("rows", 0) < MIN_ROWS:
        return None
    error = entry["p90_ape"]
    return Band(low=value * max(1 - error, 0.0), high=value * (1 + error), p90_error=error, rows=entry["rows"])


def errors_table(comparisons) -> dict:
    """The content of errors.json from validation comparisons: metric -> class -> rows, P90 APE."""
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
        for metric, stats in summary(group).items():
            table.setdefault(metric, {})[scope] = {
                "rows": stats["rows"],
                "p90_ape": round(stats["p90_ape"], 4),
                "median_ape": round(stats["median_ape"], 4),
            }
    return table
