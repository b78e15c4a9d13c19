"""Compare: save scenarios (kept in the link as ``cmp``), put 2-4 of them side by side, export the table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.estimate.compare_report import Compared
from core.estimate.result import estimate
from core.spec.catalog import load_catalog
from ui import compare_charts, compare_state, energy, fmt
from ui.cache import batch_sweep
from ui.compare_state import MAX_COMPARED, MAX_SAVED
from ui.figure import chart
from ui.i18n import t

st.title(t("compare.title"))
st.caption(t("compare.subtitle"))
catalog = load_catalog()
saved: list = compare_state.saved_list(catalog)  # rebuilt from the link's cmp on a fresh session

scenario = st.session_state.get("scenario")
if scenario is None:
    st.error(t("error.impossible", error=st.session_state.get("scenario_error", "")))
else:
    label = compare_state.scenario_label(scenario.deployment, scenario.workload)
    left, right = st.columns([3, 1])
    left.markdown(t("compare.current", label=label))
    if right.button(t("compare.save"), type="primary", key="save_scenario"):
        if any(item["label"] == label for item in saved):
            st.toast(t("compare.already_saved"))
        elif len(saved) >= MAX_SAVED:
            st.warning(t("compare.full", count=MAX_SAVED))
        else:
            saved.append(compare_state.saved_entry(scenario, catalog, label))
            compare_state.list_changed()
            chosen = [*st.session_state.get("compare_choice", []), label]
            st.session_state["compare_choice"] = chosen[-MAX_COMPARED:]

compare_state.keep_in_url(saved)
compare_state.link_notes(saved)
if not saved:
    st.info(t("compare.empty"))
    st.stop()

labels = [item["label"] for item in saved]
st.session_state.setdefault("compare_choice", labels[-MAX_COMPARED:])
chosen = st.multiselect(t("compare.choose"), labels, max_selections=MAX_COMPARED, key="compare_choice")
if st.button(t("compare.clear"), key="clear_saved"):
    saved.clear()
    compare_state.list_changed()
    st.session_state.pop("compare_choice", None)
    st.rerun()
if not chosen:
    st.info(t("compare.pick"))
    st.stop()

picked = [item for item in saved if item["label"] in chosen]
results = [(item["label"], estimate(item["scenario"].deployment, item["scenario"].workload)) for item in picked]
rows = {
    t("metric.fits"): [t("metric.yes") if r.fits else t("metric.no") for _, r in results],
    t("compare.weights"): [fmt.gib(r.memory.weights) for _, r in results],
    t("compare.kv_budget"): [fmt.gib(r.memory.kv_budget) for _, r in results],
    t("compare.kv_tokens"): [fmt.count(r.kv.capacity_tokens) for _, r in results],
    t("metric.max_concurrency"): [fmt.count(r.kv.max_concurrency_at_request_len) for _, r in results],
    "TTFT": [fmt.duration(r.latency.ttft_s) for _, r in results],
    "TPOT": [fmt.duration(r.latency.tpot_s) for _, r in results],
    "E2E": [fmt.duration(r.latency.e2e_s) for _, r in results],
    t("metric.throughput"): [fmt.rate(r.throughput.output_tokens_per_s) for _, r in results],
    t("metric.decode_bound"): [t(f"bound.{r.bound_decode}") for _, r in results],
    **energy.compare_rows([r for _, r in results]),  # W per GPU, J per token, electricity per 1M (ui/energy.py)
}
table = pd.DataFrame(rows, index=[f"#{i + 1}" for i in range(len(results))]).T
st.dataframe(table, width="stretch")
st.caption(" · ".join(f"#{i + 1}: {label}" for i, (label, _) in enumerate(results)))
columns = [Compared(name=f"#{i + 1}", label=label, result=r) for i, (label, r) in enumerate(results)]
compare_state.export_buttons(columns, list(rows.items()))

numbered = [(f"#{i + 1}", r) for i, (_, r) in enumerate(results)]
curves = []
for (name, _), item in zip(numbered, picked, strict=True):
    saved_dep, saved_work = item["scenario"].deployment, item["scenario"].workload
    curves.append((name, batch_sweep(saved_dep, (saved_work.input_len,), saved_work.output_len), saved_work.batch))
left, right = st.columns(2)
chart(left, compare_charts.compare_curves(curves), key="compare_curves")
chart(right, compare_charts.compare_memory(numbered), key="compare_memory")
