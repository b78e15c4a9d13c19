"""Likely ranges by kernel tier: each headline number divided and multiplied by the factor its tier's
held-out predictions missed by (issue 30, item 8).

A prediction's tier is the kernel tier of its deployment (:func:`core.timing.kernel_speed.kernel_speed`:
"measured" on this GPU, "same architecture", or "generic" constants). For each metric, the band of a
tier on a GPU class (HBM or GDDR) is read from the validation report's held-out predictions
(``data/validation/report.json``, each row predicted with constants fitted on the other sources):

    r_i   = held-out prediction_i / measurement_i            (rows of that tier and class)
    k     = exp(P90 |ln r_i|)                                 (unitless, >= 1)
    band  = value / k  to  value x k

so 90 % of the tier's held-out predictions lie within a factor k of what was measured, too high or too
low alike, and a band around a positive number never reaches 0 (a factor, not ± a percentage). A tier
with fewer than MIN_ROWS rows on the class takes the tier over both classes; with fewer than that, the
class over every tier (what :func:`core.validation.uncertainty.band` gives).

The numbers banded are the ones the Explorer heads with: TTFT the burst's median as V1 admits it
(:mod:`core.estimate.burst`; the validation scores the simulated median against the measured median),
TPOT and output tokens/s of the estimate.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.spec import units
from core.timing.kernel_speed import kernel_speed
from core.validation.uncertainty import HEADLINE_METRICS, p90_factor

if TYPE_CHECKING:
    from core.estimate.result import Estimate

MIN_ROWS = 10
"""Held-out rows a tier needs on a GPU class (else over both classes, else the class) for its own factor."""
ALL = "all"
"""The scope over both GPU classes, or over every tier."""


@dataclass(frozen=True, kw_only=True)
class TierBand:
    """value / factor to value x factor, and the held-out rows the factor was read from."""

    low: float
    high: float
    factor: float
    rows: int
    tier: str
    """The kernel tier the factor is for ('measured', 'same architecture', 'generic'), or 'all'."""
    gpu_class: str
    """'hbm', 'gddr' or 'all'."""


@functools.cache
def tier_ratios() -> dict[str, dict[tuple[str, str], tuple[float, ...]]]:
    """metric -> (tier, GPU class) -> the held-out predicted / measured ratios of the report's rows,
    with (tier, 'all') and ('all', class) beside them. Each row's tier is its deployment's as
    :func:`core.validation.dataset.deployment_for` builds it."""
    from core.spec.catalog import load_catalog
    from core.validation.dataset import deployment_for, load_rows
    from core.validation.report import REPORT_PATH

    if not REPORT_PATH.is_file():
        return {}
    catalog, fields = load_catalog(), {row.get("id"): row for row in load_rows()}
    found: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in json.loads(REPORT_PATH.read_text())["rows"]:
        held, measured = row.get("held_out") or {}, row.get("measured") or {}
        if row.get("id") not in fields or not any(metric in held for metric in HEADLINE_METRICS):
            continue
        try:
            tier = kernel_speed(deployment_for(fields[row["id"]], catalog)).tier
            gpu_class = catalog.gpu(row["gpu"]).memory_type
        except (KeyError, ValueError):
            continue
        for metric in HEADLINE_METRICS:
            predicted, truth = held.get(metric), measured.get(metric)
            if predicted and truth and predicted > 0 and truth > 0:
                for scope in ((tier, gpu_class), (tier, ALL), (ALL, gpu_class)):
                    found[metric][scope].append(predicted / truth)
    return {metric: {scope: tuple(r) for scope, r in scopes.items()} for metric, scopes in found.items()}


def tier_band(value: float, metric: str, tier: str, gpu_class: str) -> TierBand | None:
    """The band of ``metric`` around ``value`` for ``tier`` on ``gpu_class`` (module docstring); None
    for a value that is not a positive number or a metric without MIN_ROWS held-out rows anywhere."""
    if not (math.isfinite(value) and value > 0):
        return None
    scopes = tier_ratios().get(metric, {})
    for scope in ((tier, gpu_class), (tier, ALL), (ALL, gpu_class)):
        ratios = scopes.get(scope, ())
        if len(ratios) >= MIN_ROWS:
            k = p90_factor(ratios)
            return TierBand(
                low=value / k, high=value * k, factor=k, rows=len(ratios), tier=scope[0], gpu_class=scope[1]
            )
    return None


def headline_values(e: Estimate) -> dict[str, float]:
    """The numbers the Explorer heads with, in the report's units: TTFT (the burst's median) and TPOT
    [ms], output tokens/s."""
    return {
        "ttft_ms": e.burst.median_s / units.MS,
        "tpot_ms": e.latency.tpot_s / units.MS,
        "output_tokens_per_s": e.throughput.output_tokens_per_s,
    }


def gpu_class_of(e: Estimate) -> str:
    """'hbm' or 'gddr' as the catalog says, 'all' for a GPU of neither (a custom GPU without one)."""
    memory_type = e.deployment.gpu.memory_type
    return memory_type if memory_type in ("hbm", "gddr") else ALL


def likely_bands(e: Estimate) -> dict[str, TierBand] | None:
    """The band of each headline number for the estimate's kernel tier and GPU class; None when one
    of them has none."""
    tier, gpu_class = kernel_speed(e.deployment).tier, gpu_class_of(e)
    bands = {metric: tier_band(value, metric, tier, gpu_class) for metric, value in headline_values(e).items()}
    if not all(bands.values()):
        return None
    return bands  # type: ignore[return-value]
