"""The likely range (audit D8, issue 30 item 8): a factor band value / k to value x k, k the validation
set's P90 of |ln(predicted / measured)| held out by source over the rows of the number's kernel tier on its
GPU class, the same band around the same numbers (TTFT the burst's median the Explorer heads with) in the
Explorer's text and its exported files, the tier named; never a range that starts at zero."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from core.estimate.export import json_report, likely_ranges
from core.estimate.likely import MIN_ROWS as MIN_TIER_ROWS
from core.estimate.likely import headline_values, likely_bands, tier_band
from core.estimate.result import estimate
from core.messages import message
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from core.timing.kernel_speed import kernel_speed
from core.validation.dataset import deployment_for, load_rows
from core.validation.report import REPORT_PATH, held_out_comparisons, load_report
from core.validation.uncertainty import ERRORS_PATH, HEADLINE_METRICS, MIN_ROWS, band, errors_table
from tests.app_helpers import DEFAULT_WORK, open_app
from ui import fmt

CATALOG = load_catalog()
CLASSES = sorted({gpu.memory_type for gpu in CATALOG.gpus})


def factor_from_report(metric: str, gpu_class: str) -> tuple[float, int]:
    """k and the row count, straight from the stored report's held-out predictions: the 90th
    percentile of |ln(held-out prediction / measurement)| over the class's rows, exponentiated."""
    report = json.loads(REPORT_PATH.read_text())
    logs = [
        abs(math.log(row["held_out"][metric] / row["measured"][metric]))
        for row in report["rows"]
        if metric in row.get("held_out", {})
        and row["measured"].get(metric)
        and CATALOG.gpu(row["gpu"]).memory_type == gpu_class
    ]
    return math.exp(float(np.percentile(logs, 90))), len(logs)


@pytest.mark.parametrize("gpu_class", CLASSES)
@pytest.mark.parametrize("metric", HEADLINE_METRICS)
def test_the_band_is_the_validation_sets_p90_factor(metric, gpu_class):
    k, rows = factor_from_report(metric, gpu_class)
    assert rows >= MIN_ROWS  # each class has its own factor, no fallback to all GPUs
    result = band(100.0, metric, gpu_class)
    assert result.rows == rows
    assert result.factor == pytest.approx(k, rel=1e-3)
    assert result.low == pytest.approx(100.0 / k, rel=1e-3) and result.high == pytest.approx(100.0 * k, rel=1e-3)


def test_error_bands_file_carries_the_current_factors():
    stored = json.loads(ERRORS_PATH.read_text())
    fresh = errors_table(held_out_comparisons(load_report()))
    for metric, scopes in fresh.items():
        for scope, stats in scopes.items():
            assert stored[metric][scope]["p90_factor"] == pytest.approx(stats["p90_factor"], abs=1e-3)


def tier_factor_from_report(metric: str, tier: str, gpu_class: str) -> tuple[float, int]:
    """k and the row count of ``tier`` on ``gpu_class`` read straight from the stored report: each row's
    tier is its deployment's kernel tier, k = exp(P90 |ln(held-out prediction / measurement)|)."""
    report = json.loads(REPORT_PATH.read_text())
    fields = {row.get("id"): row for row in load_rows()}
    logs = []
    for row in report["rows"]:
        predicted, truth = row.get("held_out", {}).get(metric), row["measured"].get(metric)
        if not (predicted and truth) or CATALOG.gpu(row["gpu"]).memory_type != gpu_class:
            continue
        if kernel_speed(deployment_for(fields[row["id"]], CATALOG)).tier == tier:
            logs.append(abs(math.log(predicted / truth)))
    return (math.exp(float(np.percentile(logs, 90))) if logs else math.nan), len(logs)


TIERS = ("measured", "same architecture", "generic")


@pytest.mark.parametrize("gpu_class", CLASSES)
@pytest.mark.parametrize("metric", HEADLINE_METRICS)
def test_the_band_for_a_tier_is_read_from_the_report(metric, gpu_class):
    for tier in TIERS:
        k, rows = tier_factor_from_report(metric, tier, gpu_class)
        b = tier_band(100.0, metric, tier, gpu_class)
        assert b is not None
        if rows >= MIN_TIER_ROWS:  # the tier's own factor on its class
            assert (b.tier, b.gpu_class, b.rows) == (tier, gpu_class, rows)
            assert b.factor == pytest.approx(k, rel=1e-6)
        else:  # too thin: never a factor from a handful of rows
            assert b.rows >= MIN_TIER_ROWS and (b.tier, b.gpu_class) != (tier, gpu_class)
        assert b.low == pytest.approx(100.0 / b.factor) and b.high == pytest.approx(100.0 * b.factor)


def test_a_tier_with_its_own_rows_gets_its_own_factor(monkeypatch):
    """With enough rows a tier's factor is its own, not the class's: measured rows 1.1x off give ÷/× 1.1,
    where the class over every tier says 4x."""
    from core.estimate import likely

    ratios = {
        ("measured", "hbm"): (1.1,) * MIN_TIER_ROWS,
        ("measured", "all"): (1.1,) * MIN_TIER_ROWS,
        ("all", "hbm"): (1.1,) * MIN_TIER_ROWS + (4.0,) * 50,
        ("generic", "all"): (4.0,) * 50,
        ("generic", "hbm"): (4.0,) * 5,
    }
    monkeypatch.setattr(likely, "tier_ratios", lambda: {"tpot_ms": ratios})
    measured = tier_band(10.0, "tpot_ms", "measured", "hbm")
    assert (measured.tier, measured.factor) == ("measured", pytest.approx(1.1))
    thin = tier_band(10.0, "tpot_ms", "generic", "hbm")  # 5 rows on HBM: the tier over both classes
    assert (thin.tier, thin.gpu_class, thin.factor) == ("generic", "all", pytest.approx(4.0))
    elsewhere = tier_band(10.0, "tpot_ms", "same architecture", "hbm")  # no rows: the class, every tier
    assert (elsewhere.tier, elsewhere.gpu_class, elsewhere.rows) == ("all", "hbm", MIN_TIER_ROWS + 50)


@pytest.mark.parametrize("gpu", CATALOG.gpus, ids=lambda g: g.id)
def test_every_gpu_gets_a_range_above_zero_around_its_numbers(deploy, gpu):
    """The audit's H100 read "TTFT 0.0 ms – 1,029 ms" and "0 tok/s – 1,872 tok/s"; the band is around
    the numbers the Explorer heads with (TTFT the burst's median) and is its tier's."""
    e = estimate(deploy(model="qwen3-1.7b", gpu=gpu.id, max_model_len=4096), DEFAULT_WORK)
    ranges = likely_ranges(e)
    assert ranges is not None
    assert ranges["tier"] == kernel_speed(e.deployment).tier and ranges["gpu_class"] == gpu.memory_type
    values = headline_values(e)
    assert values["ttft_ms"] == pytest.approx(e.burst.median_s / units.MS)
    for metric, value in values.items():
        assert 0 < ranges[metric]["low"] < value < ranges[metric]["high"], metric
        assert ranges[metric]["low"] * ranges[metric]["high"] == pytest.approx(value**2, rel=1e-3)  # ÷k and ×k
        b = tier_band(value, metric, ranges["tier"], gpu.memory_type)
        assert ranges[metric]["factor"] == pytest.approx(b.factor, rel=1e-4) and ranges[metric]["tier"] == b.tier


@pytest.mark.parametrize("model", CATALOG.models, ids=lambda m: m.id)
def test_no_catalog_model_gets_a_band_at_or_below_zero(deploy, model):
    """Every catalog model on an H200 (the largest at eight): each band's low end is above 0."""
    context = min(4096, model.max_context)
    work = Workload(input_len=context // 2, output_len=context // 8, batch=8)
    for tp in (1, 2, 4, 8):
        e = estimate(deploy(model=model.id, gpu="h200", tp=tp, max_model_len=context), work)
        if e.fits and e.engine_starts:
            break
    bands = likely_bands(e)
    assert bands is not None, model.id
    for metric, b in bands.items():
        assert b.low > 0 and b.high > b.low and b.factor >= 1, (model.id, metric)


def test_no_range_around_a_number_that_is_not_positive():
    assert band(0.0, "ttft_ms", "hbm") is None
    assert band(float("nan"), "ttft_ms", "hbm") is None


def _tier_factors(tier: str, gpu_class: str) -> dict[str, float]:
    """The report's factor of each headline metric for ``tier`` on ``gpu_class`` (its fallback's when thin)."""
    found = {}
    for metric in HEADLINE_METRICS:
        k, rows = tier_factor_from_report(metric, tier, gpu_class)
        found[metric] = k if rows >= MIN_TIER_ROWS else tier_band(1.0, metric, tier, gpu_class).factor
    return found


def _tier_text(tier: str, lang: str) -> str:
    return message(f"likely.tier_{tier.replace(' ', '_')}", lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_explorer_text_and_the_exported_json_show_the_same_band(lang):
    """On the audit's H100 default: the caption's ends are the Explorer's headline numbers (TTFT the
    burst's median) ÷ and × the report's factor of their kernel tier, the tier named, and the exported
    JSON carries the same ends, factor and tier."""
    at = open_app(gpu="h100-sxm", lang=lang)
    scenario = at.session_state["scenario"]  # what the Explorer computed for
    e = estimate(scenario.deployment, scenario.workload)
    tier = kernel_speed(e.deployment).tier
    k = _tier_factors(tier, "hbm")
    median, tpot, out = e.burst.median_s, e.latency.tpot_s, e.throughput.output_tokens_per_s
    spans = {
        "ttft": f"{fmt.duration(median / k['ttft_ms'])} – {fmt.duration(median * k['ttft_ms'])}",
        "tpot": f"{fmt.duration(tpot / k['tpot_ms'])} – {fmt.duration(tpot * k['tpot_ms'])}",
        "rate": f"{fmt.rate(out / k['output_tokens_per_s'])} – {fmt.rate(out * k['output_tokens_per_s'])}",
    }
    expected = message("likely.bands_tier", lang, tier=_tier_text(tier, lang), gpu_class="HBM", **spans)
    assert expected in [c.value for c in at.caption]
    assert not any(re.search(r"(?<![\d.,])0(\.0)? (ms|tok/s) –", c.value) for c in at.caption)  # "0.0 ms – 1,029 ms"
    exported = json.loads(json_report(e, lang=lang))["likely_ranges"]
    assert exported["tier"] == tier and exported["gpu_class"] == "hbm"
    for metric, value in (("ttft_ms", median / units.MS), ("tpot_ms", tpot / units.MS), ("output_tokens_per_s", out)):
        assert exported[metric]["factor"] == pytest.approx(k[metric], rel=1e-3)
        assert exported[metric]["low"] == pytest.approx(value / k[metric], rel=1e-3)
        assert exported[metric]["high"] == pytest.approx(value * k[metric], rel=1e-3)


def test_how_the_range_is_set_is_one_click_away():
    at = open_app(gpu="h100-sxm")
    at.session_state["explain_likely_range"] = True
    at.run()
    text = "\n".join(m.value for m in at.markdown)
    assert message("likely.how_tier", min_rows=MIN_TIER_ROWS) in text
    scenario = at.session_state["scenario"]
    tier = kernel_speed(scenario.deployment).tier
    bands = likely_bands(estimate(scenario.deployment, scenario.workload))
    k = _tier_factors(tier, "hbm")
    for metric, name in (("ttft_ms", "TTFT (median)"), ("tpot_ms", "TPOT"), ("output_tokens_per_s", "Throughput")):
        b = bands[metric]
        row = message(
            "likely.factor_row_tier",
            metric=name,
            factor=f"{k[metric]:.2f}",
            rows=b.rows,
            tier=_tier_text(b.tier, "en"),
            gpu_class=message(f"likely.class_{b.gpu_class}"),
        )
        assert row in text
