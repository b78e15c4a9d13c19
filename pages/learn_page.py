"""Learn: the metrics, the formulas with this scenario's values, and the classic pitfalls."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.estimate.explain import explain
from core.estimate.result import estimate
from core.memory.kv import mha_equivalent_kv_bytes_per_token
from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from ui import charts, fmt
from ui.concurrency_note import render_concurrency_line
from ui.explain import show_explanation
from ui.figure import chart
from ui.i18n import t
from ui.learn_levers import render_levers
from ui.learn_state import render_state
from ui.learn_time import render_time
from ui.sidebar import require_scenario

LONG_TAIL_FACTOR = 4  # a long-tail request several times the typical length (the chapters' failure)

st.title(t("learn.title"))
scenario = require_scenario()
dep, work = scenario.deployment, scenario.workload
result = estimate(dep, work)
model, mem, kv = dep.model, result.memory, result.kv

st.header(t("learn.metrics_heading"))
st.markdown(t("learn.metrics_body"))
st.markdown(t("learn.scopes_body"))

st.header(t("learn.kv_heading"))
explained = explain(result)  # the Explorer's explanations of the same estimate
show_explanation(explained["kv_per_token"], f"{fmt.count(kv.bytes_per_token)} B")
show_explanation(explained["kv_in_use"], fmt.gib(mem.kv_in_use))
st.caption(
    t("learn.kv_caption", tokens=work.request_len, sliding=model.num_sliding_layers, window=model.sliding_window or "-")
)
render_state(dep, kv)

st.subheader(t("learn.concurrency_heading"))
show_explanation(explained["kv_budget"], fmt.gib(mem.kv_budget))
show_explanation(explained["max_concurrency"], f"{fmt.count(kv.max_concurrency_at_request_len)} {t('unit.requests')}")
st.caption(t("learn.concurrency_caption", release=dep.engine.release.name))
render_concurrency_line(result)  # what V1 runs and what vLLM logs, beside the figure without preemption
if mem.lever_gpu or mem.host_kv or kv.shared_prefix_bytes:
    st.caption(t("learn.concurrency_levers_caption"))

st.subheader(t("learn.gqa_heading"))
mha = mha_equivalent_kv_bytes_per_token(model, dep.kv, dep.parallel)
st.markdown(
    t(
        "learn.gqa_body",
        kind=str(model.attention_kind),
        heads=model.num_heads,
        kv_heads=model.num_kv_heads,
        actual=fmt.count(kv.bytes_per_token),
        mha=fmt.count(mha),
        ratio=f"{mha / kv.bytes_per_token:.1f}",
    )
)

st.subheader(t("learn.paged_heading"))
st.markdown(
    t(
        "learn.paged_body",
        contiguous=fmt.count(kv.max_concurrency_contiguous),
        paged=fmt.count(kv.max_concurrency_at_request_len),
        max_model_len=fmt.count(dep.max_model_len),
        tokens=fmt.count(work.request_len),
        block=dep.engine.block_tokens,
    )
)

render_time(result)

st.header(t("learn.roofline_heading"))
peak, _ = dep.gpu.flops_for(dep.weights)
points = {}
for name, phase in ((t("learn.prefill"), result.latency.prefill), (t("learn.decode"), result.latency.decode)):
    points[name] = (float(phase.flops / phase.bytes_moved), float(phase.flops / phase.seconds))
chart(st, charts.roofline_figure(peak, dep.gpu.memory_bandwidth, points), key="roofline")
st.markdown(
    t("learn.roofline_body", prefill=t(f"bound.{result.bound_prefill}"), decode=t(f"bound.{result.bound_decode}"))
)

st.header(t("learn.pitfall_heading"))
naive = 1 / estimate(dep, dataclasses.replace(work, batch=1)).latency.tpot_s
ceiling = max(kv.max_concurrency_at_request_len, 1)
at_ceiling = estimate(dep, dataclasses.replace(work, batch=ceiling))
tail_len = min(work.request_len * LONG_TAIL_FACTOR, dep.max_model_len)
tail_input = max(tail_len - work.output_len, 1)
tail = estimate(dep, Workload(input_len=tail_input, output_len=work.output_len, batch=1))
st.markdown(
    t(
        "learn.pitfall_body",
        naive=fmt.rate(naive),
        ceiling=fmt.count(ceiling),
        promised=fmt.rate(naive * ceiling),  # the pitfall: every slot at single-request speed
        rate=fmt.rate(at_ceiling.throughput.output_tokens_per_s),
        tail_len=fmt.count(tail_len),
        tail_ceiling=fmt.count(tail.kv.max_concurrency_at_request_len),
    )
)

render_levers(dep, work, result, load_catalog())
