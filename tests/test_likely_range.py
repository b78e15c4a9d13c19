"""The likely range (audit D8): a factor band value / k to value x k, k the validation set's P90 of
|ln(predicted / measured)| held out by source, the same band in the Explorer's text and its exported
files; never a range that starts at zero."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from core.estimate.export import json_report, likely_ranges
from core.estimate.report import estimate_to_dict
from core.estimate.result import estimate
from core.messages import message
from core.spec.catalog import load_catalog
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


@pytest.mark.parametrize("gpu", CATALOG.gpus, ids=lambda g: g.id)
def test_every_gpu_gets_a_range_above_zero_around_its_numbers(deploy, gpu):
    """The audit's H100 read "TTFT 0.0 ms – 1,029 ms" and "0 tok/s – 1,872 tok/s"."""
    e = estimate(deploy(model="qwen3-1.7b", gpu=gpu.id, max_model_len=4096), DEFAULT_WORK)
    data = estimate_to_dict(e)
    ranges = likely_ranges(data, gpu.memory_type)
    assert ranges is not None
    values = {
        "ttft_ms": data["latency"]["ttft_ms"],
        "tpot_ms": data["latency"]["tpot_ms"],
        "output_tokens_per_s": data["throughput"]["output_tokens_per_s"],
    }
    for metric, value in values.items():
        assert 0 < ranges[metric]["low"] < value < ranges[metric]["high"], metric
        k = ranges[metric]["factor"]
        assert ranges[metric]["low"] * ranges[metric]["high"] == pytest.approx(value**2, rel=1e-3)  # ÷k and ×k
        assert k == pytest.approx(factor_from_report(metric, gpu.memory_type)[0], rel=1e-3)


def test_no_range_around_a_number_that_is_not_positive():
    assert band(0.0, "ttft_ms", "hbm") is None
    assert band(float("nan"), "ttft_ms", "hbm") is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_explorer_text_and_the_exported_json_show_the_same_band(lang):
    """On the audit's H100 default: the caption's ends are the estimate's numbers ÷ and × the
    report's factor, and the exported JSON carries the same ends and factor."""
    at = open_app(gpu="h100-sxm", lang=lang)
    scenario = at.session_state["scenario"]  # what the Explorer computed for
    e = estimate(scenario.deployment, scenario.workload)
    opening = message("val.bands", lang, gpu_class="HBM", ttft="", tpot="", rate="").split("TTFT")[0]
    [caption] = [c.value for c in at.caption if c.value.startswith(opening)]
    k = {metric: factor_from_report(metric, "hbm")[0] for metric in HEADLINE_METRICS}
    spans = {
        "ttft": f"{fmt.duration(e.latency.ttft_s / k['ttft_ms'])} – {fmt.duration(e.latency.ttft_s * k['ttft_ms'])}",
        "tpot": f"{fmt.duration(e.latency.tpot_s / k['tpot_ms'])} – {fmt.duration(e.latency.tpot_s * k['tpot_ms'])}",
        "rate": (
            f"{fmt.rate(e.throughput.output_tokens_per_s / k['output_tokens_per_s'])} – "
            f"{fmt.rate(e.throughput.output_tokens_per_s * k['output_tokens_per_s'])}"
        ),
    }
    assert caption == message("val.bands", lang, gpu_class="HBM", **spans)
    assert not re.search(r"(?<![\d.,])0(\.0)? (ms|tok/s) –", caption)  # the audit's "0.0 ms – 1,029 ms"
    exported = json.loads(json_report(e, lang=lang))["likely_ranges"]
    data = estimate_to_dict(e)
    for metric, value in (
        ("ttft_ms", data["latency"]["ttft_ms"]),
        ("tpot_ms", data["latency"]["tpot_ms"]),
        ("output_tokens_per_s", data["throughput"]["output_tokens_per_s"]),
    ):
        assert exported[metric]["factor"] == pytest.approx(k[metric], rel=1e-3)
        assert exported[metric]["low"] == pytest.approx(value / k[metric], rel=1e-3)
        assert exported[metric]["high"] == pytest.approx(value * k[metric], rel=1e-3)


def test_how_the_range_is_set_is_one_click_away():
    at = open_app(gpu="h100-sxm")
    at.session_state["explain_likely_range"] = True
    at.run()
    text = "\n".join(m.value for m in at.markdown)
    assert message("likely.how", gpu_class="HBM") in text
    for metric, name in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("output_tokens_per_s", "Throughput")):
        k, rows = factor_from_report(metric, "hbm")
        assert message("likely.factor_row", metric=name, factor=f"{k:.2f}", rows=rows) in text
