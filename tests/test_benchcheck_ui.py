"""Plan page, "Check this plan with a benchmark": commands and predictions shown, a result pasted and
read back (table, chart), "Calibrate this deployment" sets the sidebar's efficiencies and the plan is
checked again with them (issue 31, items 2 and 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.benchcheck.compare import METRICS, calibrate_run
from core.benchcheck.result_files import read_result
from core.messages import message
from tests.app_helpers import open_app

FIXTURES = Path(__file__).parent / "fixtures" / "benchcheck"
H100 = "NVIDIA H100 SXM5 80GB"


def _table(at, column: str):
    """The dataframe that has ``column``."""
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(found) == 1, [list(d.value.columns) for d in at.dataframe]
    return found[0]


def _plan_text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_paste_a_result_then_calibrate_moves_the_sidebar_and_the_plan():
    lang = "en"
    at = open_app(gpu=H100)
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    codes = [c.value for c in at.code]
    assert any(c.startswith("vllm bench serve") and "--save-result" in c for c in codes)
    assert any(c.startswith("guidellm benchmark") for c in codes) and any(c.startswith("aiperf profile") for c in codes)
    measured = message("benchcheck.ui_measured", lang)
    text = (FIXTURES / "vllm_bench_serve.json").read_text()
    at.text_area(key="bench_paste").input(text).run()
    assert not at.exception
    table = _table(at, measured)
    ratio = message("benchcheck.ui_ratio", lang)
    before = [float(r) for r in table[ratio] if r != "—"]
    assert any(abs(r - 1) > 0.1 for r in before)  # the default efficiencies miss this run by 20-30 %
    plan_before = _plan_text(at)
    at.button(key="bench_calibrate").click().run()
    assert not at.exception
    # the fit of core, rounded to the sidebar's step, is now the sidebar's
    page_dep_fit = calibrate_run_for_page(text)
    assert at.session_state["eff_compute"] == pytest.approx(round(page_dep_fit.compute, 2))
    assert at.session_state["eff_bw"] == pytest.approx(round(page_dep_fit.bandwidth, 2))
    shown = message(
        "benchcheck.ui_calibrated",
        lang,
        compute=f"{page_dep_fit.compute:.2f}",
        bandwidth=f"{page_dep_fit.bandwidth:.2f}",
    )
    assert shown in [s.value for s in at.success]
    after = _table(at, measured)
    medians = {message("benchcheck.metric_ttft_ms", lang), message("benchcheck.metric_tpot_ms", lang)}
    metric = message("benchcheck.ui_metric", lang)
    for name, value in zip(after[metric], after[ratio], strict=True):
        if name in medians:  # within the calibration's tolerance (5 %), sidebar rounding included
            assert abs(float(value) - 1) <= 0.05, (name, value)
    assert _plan_text(at) != plan_before  # the plan was checked again with the new efficiencies


def calibrate_run_for_page(text: str):
    """The fit core makes for the page's deployment (Llama-3.1-8B on one H100, the plan's sizing)."""
    from core.spec.catalog import load_catalog
    from core.spec.deployment import Deployment
    from core.spec.engine import EngineConfig, Parallelism
    from core.spec.precision import kv_precision, weight_precision

    catalog = load_catalog()
    spec = catalog.model("llama-3.1-8b")
    weights = weight_precision(spec.native_dtype)
    dep = Deployment(
        model=spec,
        gpu=catalog.gpu("h100-sxm"),
        weights=weights,
        kv=kv_precision("auto", weights),
        parallel=Parallelism(),
        engine=EngineConfig(max_model_len=2048),
    )
    return calibrate_run(dep, read_result(text)).calibration


def test_a_foreign_file_gets_one_line_and_no_table():
    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    at.text_area(key="bench_paste").input('{"format": "llm-tradeoff-calibration", "version": 1}').run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert message("benchcheck.not_ours", "en") in errors
    assert all("Traceback" not in e for e in errors)
    assert not [d for d in at.dataframe if message("benchcheck.ui_measured", "en") in d.value.columns]


def test_the_section_in_chinese_reads_a_result_seeded_before_the_run():
    """AppTest cannot rerun the zh Plan page after an input (its preset selectbox's translated options),
    so the paste is seeded: the section, table and chart come up in Chinese."""
    at = open_app(gpu=H100, lang="zh")
    at.session_state["bench_paste"] = (FIXTURES / "aiperf_profile_export.json").read_text()
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    assert message("benchcheck.ui_title", "zh") in [h.value for h in at.subheader]
    table = _table(at, message("benchcheck.ui_measured", "zh"))
    metrics = list(table[message("benchcheck.ui_metric", "zh")])
    assert metrics == [message(f"benchcheck.metric_{m}", "zh") for m in METRICS]
    assert at.button(key="bench_calibrate").label == message("benchcheck.ui_calibrate", "zh")
