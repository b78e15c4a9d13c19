"""Explorer: does it fit, how many requests at once, how fast. Reads the sidebar's scenario."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core import units
from core.estimate import estimate

st.title("LLM Inference Tradeoff Explorer")

if error := st.session_state.get("scenario_error"):
    st.error(f"This configuration is not possible: {error}")
    st.stop()

deployment, workload = st.session_state["deployment"], st.session_state["workload"]
try:
    result = estimate(deployment, workload)
except ValueError as err:
    st.error(str(err))
    st.stop()

mem, kv, lat, tput = result.memory, result.kv, result.latency, result.throughput
cols = st.columns(6)
cols[0].metric("Fits", "yes" if result.fits else "no")
cols[1].metric(
    "Max concurrent requests",
    f"{kv.max_concurrency_at_request_len:,}",
    help="KV budget / KV of one request of this prompt + answer length (paged, 16-token blocks)",
)
ttft = f"{lat.ttft_s / units.MS:,.0f} ms" if lat.ttft_s < 10 else f"{lat.ttft_s:,.1f} s"
cols[2].metric("TTFT", ttft, help="Prefill of the whole batch, no queueing")
cols[3].metric("TPOT", f"{lat.tpot_s / units.MS:,.1f} ms", help="One decode step at the mean context")
cols[4].metric("Throughput", f"{tput.output_tokens_per_s:,.0f} tok/s", help="batch x answer length / E2E")
cols[5].metric("Decode bound", result.bound_decode)

for warning in result.warnings:
    st.warning(warning)

parts = [
    ("Weights", mem.weights),
    ("Activations", mem.activations),
    ("Engine overhead", mem.overhead),
    ("KV cache in use", min(max(mem.kv_budget, 0), mem.kv_in_use)),
    ("KV budget left", max(mem.kv_free, 0)),
    ("Held back (1 - utilization)", mem.held_back),
    ("Reserved by driver", mem.driver_reserved),
]
figure = go.Figure()
for name, value in parts:
    figure.add_bar(
        y=["per GPU"],
        x=[value / units.GiB],
        name=name,
        orientation="h",
        hovertemplate=f"{name}: %{{x:.2f}} GiB<extra></extra>",
    )
figure.add_vline(x=mem.capacity / units.GiB, line_dash="dash", annotation_text="capacity")
figure.update_layout(barmode="stack", height=220, xaxis_title="GiB", margin={"t": 30, "b": 40}, title="Memory per GPU")
st.plotly_chart(figure, width="stretch")

st.caption(
    f"KV cache: {kv.bytes_per_token / units.KiB:,.0f} KiB per token; budget {mem.kv_budget / units.GiB:,.2f} GiB "
    f"holds {kv.capacity_tokens:,} tokens. vLLM would report {kv.max_concurrency_at_max_model_len:,.2f}x "
    f"concurrency at max_model_len {deployment.max_model_len:,}; reserving max_model_len per request "
    f"(no paging) fits {kv.max_concurrency_contiguous:,}."
)
