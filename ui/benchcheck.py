"""Plan page: "Check this plan with a benchmark" (issue 31, items 2 and 3).

The command for each tool with what the simulator predicts it will measure and the likely band; a
result file uploaded or pasted, read back against the prediction at the run's own load (table and
chart); and "Calibrate this deployment", which sets the sidebar's efficiencies to the fit
(:func:`ui.calibration.apply_calibration`), so the plan re-runs with them and the link keeps them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.benchcheck.commands import TOOLS, BenchCheck, bench_check, note_text
from core.benchcheck.compare import Comparison, RunError, calibrate_run, compare
from core.benchcheck.report import benchmark_section as bench_report_section
from core.benchcheck.result_files import MAX_FILE_BYTES, BenchFileError, MeasuredRun, read_result
from core.planning.check import Plan
from core.report.blocks import Section
from core.spec.deployment import Deployment
from core.validation.calibrate import CalibrationError
from ui.calibration import apply_calibration
from ui.chart_style import reference_line, titled
from ui.figure import Figure, chart
from ui.i18n import lang, t

TOOL_TABS = {"vllm": "`vllm bench serve`", "guidellm": "`guidellm`", "aiperf": "`aiperf`"}
"""Tab labels: command names, as code in either language."""
FITTED = "bench_fitted"
"""Session key: the fit just applied (shown once), or the reason it was refused."""


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.4g}"


def _band(band: tuple[float, float] | None) -> str:
    return "—" if band is None else f"{band[0]:,.4g} – {band[1]:,.4g}"


def _commands(plan: Plan) -> BenchCheck | None:
    try:
        found = bench_check(plan)
    except ValueError as err:  # a plan whose requests the simulator cannot hold
        st.warning(t("benchcheck.ui_no_prediction", error=str(err)))
        return None
    for tab, tool in zip(st.tabs([TOOL_TABS[tool] for tool in TOOLS]), TOOLS, strict=True):
        tab.code(found.commands[tool], language="bash")
    load = found.load
    at = (
        t("benchcheck.ui_clients", clients=load.concurrency)
        if load.mode == "concurrency"
        else t("benchcheck.ui_rate", rate=f"{load.rate_per_s:g}")
    )
    st.caption(t("benchcheck.ui_load", prompts=load.num_prompts, warmups=load.warmups, load=at))
    for note in found.notes:
        st.caption(note_text(note, lang()))
    if found.predicted is None:
        return found
    values, bands = found.predicted.values, found.predicted.bands
    tier = t(f"likely.tier_{found.predicted.tier.replace(' ', '_')}")
    st.dataframe(
        pd.DataFrame(
            {
                t("benchcheck.ui_metric"): [t(f"benchcheck.metric_{m}") for m in values],
                t("benchcheck.ui_predicted"): [_number(v) for v in values.values()],
                t("benchcheck.ui_likely", tier=tier): [_band(bands[m]) for m in values],
            }
        ),
        hide_index=True,
        width="stretch",
        key="bench_predicted",
    )
    return found


def _figure(comparison: Comparison):
    """Predicted / measured per metric, 1 marked; the likely band as an error bar around the ratio."""
    rows = [r for r in comparison.rows if r.ratio is not None]
    figure = Figure()
    names = [t(f"benchcheck.metric_{r.metric}") for r in rows]
    ratios = [r.ratio for r in rows]
    up = [r.band[1] / r.measured - r.ratio if r.band and r.measured else 0.0 for r in rows]
    down = [r.ratio - r.band[0] / r.measured if r.band and r.measured else 0.0 for r in rows]
    figure.add_bar(
        x=names,
        y=ratios,
        error_y={"type": "data", "symmetric": False, "array": up, "arrayminus": down},
        hovertemplate="%{x}: %{y:.2f}<extra></extra>",
        name=t("benchcheck.ui_ratio"),
    )
    reference_line(figure, y=1.0, dash="dash", color="#888", text=t("benchcheck.ui_exact"))
    figure.update_layout(height=340, yaxis_title=t("benchcheck.ui_ratio"), **titled(t("benchcheck.ui_chart_title")))
    return figure.build()


def _calibrate(dep: Deployment, run: MeasuredRun) -> None:
    """Button callback (runs before the sidebar's widgets): fit, then set the sidebar's efficiencies."""
    try:
        fit = calibrate_run(dep, run)
    except CalibrationError as err:
        st.session_state[FITTED] = ("error", err.text(lang()))
        return
    except RunError as err:
        st.session_state[FITTED] = ("error", t("benchcheck.ui_replay_failed", error=str(err)))
        return
    apply_calibration(fit.calibration, memory=False)
    st.session_state[FITTED] = (
        "ok",
        t(
            "benchcheck.ui_calibrated",
            compute=f"{fit.calibration.compute:.2f}",
            bandwidth=f"{fit.calibration.bandwidth:.2f}",
        ),
    )


def _read_back(plan: Plan) -> Comparison | None:
    upload = st.file_uploader(t("benchcheck.ui_upload"), type=["json"], key="bench_upload")
    paste = st.text_area(t("benchcheck.ui_paste"), key="bench_paste", height=120, max_chars=MAX_FILE_BYTES)
    content = upload.getvalue() if upload is not None else paste
    if status := st.session_state.pop(FITTED, None):
        (st.success if status[0] == "ok" else st.error)(status[1])
    if not content:
        return None
    try:
        run = read_result(content)
        comparison = compare(plan.deployment, run)
    except BenchFileError as err:
        st.error(err.text(lang()))
        return None
    except RunError as err:
        st.error(t("benchcheck.ui_replay_failed", error=str(err)))
        return None
    load = comparison.load
    at = (
        t("benchcheck.ui_clients", clients=load.concurrency)
        if load.mode == "concurrency"
        else t("benchcheck.ui_rate", rate=f"{load.rate_per_s:g}")
    )
    st.markdown(
        t(
            "benchcheck.ui_run",
            tool=run.tool,
            prompts=run.prompts,
            prompt=load.prompt_len,
            answer=load.answer_len,
            load=at,
        )
    )
    yes, no = t("benchcheck.ui_yes"), t("benchcheck.ui_no")
    st.dataframe(
        pd.DataFrame(
            {
                t("benchcheck.ui_metric"): [t(f"benchcheck.metric_{r.metric}") for r in comparison.rows],
                t("benchcheck.ui_predicted"): [_number(r.predicted) for r in comparison.rows],
                t("benchcheck.ui_measured"): [_number(r.measured) for r in comparison.rows],
                t("benchcheck.ui_ratio"): ["—" if r.ratio is None else f"{r.ratio:.2f}" for r in comparison.rows],
                t("benchcheck.ui_in_band"): [
                    "—" if r.inside is None else (yes if r.inside else no) for r in comparison.rows
                ],
            }
        ),
        hide_index=True,
        width="stretch",
        key="bench_compared",
    )
    chart(st, _figure(comparison), key="bench_chart")
    st.button(
        t("benchcheck.ui_calibrate"),
        key="bench_calibrate",
        on_click=_calibrate,
        args=(plan.deployment, run),
        help=t("benchcheck.ui_calibrate_help"),
    )
    return comparison


def benchmark_section(plan: Plan) -> Section | None:
    """The whole section, under the Plan's launch command; returns it as a document section (the
    commands, the prediction and a result read back) for the Plan's files, None without a command."""
    st.subheader(t("benchcheck.ui_title"))
    st.caption(t("benchcheck.ui_caption"))
    found = _commands(plan)
    comparison = _read_back(plan)
    return None if found is None else bench_report_section(found, lang(), comparison)
