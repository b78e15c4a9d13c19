"""Validation: predicted against published measurements, and calibration from your own."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.validation.calibrate import Calibration, calibrate_memory, calibrate_speed
from core.validation.log_parse import MAX_TEXT_CHARS, LogError, parse_benchmark, parse_startup_log
from ui import sim_charts
from ui.calibration import apply_calibration
from ui.download import download_button
from ui.figure import chart
from ui.i18n import lang, t
from ui.safe import escape_markdown
from ui.sidebar import require_scenario
from ui.validation_cache import shown_metric, shown_rows, source_count, validation_frame, validation_summary

st.title(t("val.title"))
st.caption(t("val.subtitle"))

frame = shown_rows(validation_frame())  # kinds and metrics in words, engines by their names
summary = pd.DataFrame(validation_summary())
if len(summary):
    summary["scope"] = summary["scope"].map(lambda scope: t(f"val.scope_{scope}"))
    summary["metric"] = summary["metric"].map(shown_metric)
st.subheader(t("val.summary"))
st.dataframe(
    summary,
    hide_index=True,
    width="stretch",
    key="val_summary",
    column_config={
        "scope": t("val.scope"),
        "metric": t("val.metric"),
        "rows": t("val.count"),
        "median_ape": st.column_config.NumberColumn(t("val.median"), format="percent"),
        "p90_ape": st.column_config.NumberColumn(t("val.p90"), format="percent"),
    },
)
st.caption(t("val.summary_caption", sources=source_count()))
chart(st, sim_charts.parity_figure(frame), key="val_parity")
with st.expander(t("val.rows", count=len(frame))):
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key="val_rows",
        column_config={
            "id": t("val.col_id"),
            "kind": t("val.col_kind"),
            "engine": t("val.col_engine"),
            "gpu": "GPU",
            "model": t("sidebar.model"),
            "metric": t("val.metric"),
            "measured": t("val.measured"),
            "source_group": t("val.col_source_group"),
            "source_url": st.column_config.LinkColumn(t("catalog.source")),
            "error": st.column_config.NumberColumn(t("val.held_out_error"), format="percent"),
            "predicted": t("val.held_out_predicted"),
            "in_sample": t("val.in_sample_predicted"),
        },
    )

st.subheader(t("val.calibrate"))
st.caption(t("val.calibrate_caption"))
dep = require_scenario().deployment
left, right = st.columns(2)
log_text = left.text_area(t("val.paste_log"), key="val_log", height=180, max_chars=MAX_TEXT_CHARS)
bench_text = right.text_area(t("val.paste_bench"), key="val_bench", height=180, max_chars=MAX_TEXT_CHARS)
fits = []
for text, parse, calibrate in (
    (log_text, parse_startup_log, calibrate_memory),
    (bench_text, parse_benchmark, calibrate_speed),
):
    if text.strip():  # each box on its own: a log that cannot be used leaves the benchmark's fit standing
        try:
            fits.append(calibrate(dep, parse(text)))
        except LogError as err:  # the line it read and why, in the session's language
            st.error(t("val.cannot", error=escape_markdown(err.text(lang()))))
        except ValueError as err:
            st.error(t("val.cannot", error=escape_markdown(str(err))))
if fits:
    merged = Calibration(
        compute=next((f.calibration.compute for f in fits if f.calibration.compute), None),
        bandwidth=next((f.calibration.bandwidth for f in fits if f.calibration.bandwidth), None),
        overhead_correction_bytes=sum(f.calibration.overhead_correction_bytes for f in fits),
        source=" + ".join(f.calibration.source for f in fits),
    )
    rows = [
        {t("val.metric"): shown_metric(metric), t("val.before"): before, t("val.after"): fit.after[metric]}
        for fit in fits
        for metric, before in fit.before.items()
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key="val_fit",
        column_config={
            t("val.before"): st.column_config.NumberColumn(format="percent"),
            t("val.after"): st.column_config.NumberColumn(format="percent"),
        },
    )
    st.markdown(
        t(
            "val.fitted",
            compute=f"{merged.compute:.2f}" if merged.compute else "-",
            bandwidth=f"{merged.bandwidth:.2f}" if merged.bandwidth else "-",
            overhead=f"{merged.overhead_correction_bytes / 2**30:+.2f}",
        )
    )
    left, right = st.columns(2)
    memory = any("kv_cache" in fit.before for fit in fits)  # a benchmark alone leaves the overhead as it is
    left.button(t("val.apply"), key="val_apply", type="primary", on_click=apply_calibration, args=(merged, memory))
    download_button(
        right, t("val.export"), merged.to_json, file_name="calibration.json", mime="application/json", key="val_export"
    )
upload = st.file_uploader(t("val.import"), type=["json"], key="val_import")
if upload is not None:
    try:
        loaded = Calibration.from_json(upload.getvalue())
    except LogError as err:  # what is wrong with the file, in the session's language
        st.error(t("val.cannot", error=escape_markdown(err.text(lang()))))
    else:
        st.button(
            t("val.apply_loaded", source=loaded.source or "file"),
            key="val_apply_loaded",
            on_click=apply_calibration,
            args=(loaded,),
        )
