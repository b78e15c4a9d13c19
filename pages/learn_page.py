"""Learn: the metrics, the formulas with this scenario's values, and the classic pitfalls."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.estimate.result import estimate
from core.memory.accounting import SGLANG_CONTEXT_BYTES
from core.memory.kv import attention_layers_per_gpu, kv_heads_per_gpu, mha_equivalent_kv_bytes_per_token
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from ui import charts, fmt
from ui.i18n import t
from ui.learn_levers import render_levers
from ui.learn_state import render_state
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
bytes_per = dep.kv.bytes_per_element
layers = attention_layers_per_gpu(model, dep.parallel.pp)  # a hybrid's linear layers keep no KV
if model.mla is None:
    heads = kv_heads_per_gpu(model, dep.parallel.tp)
    st.latex(
        r"\text{KV/token} = 2 \times L \times H_{kv} \times d_{head} \times b"
        rf" = 2 \times {layers} \times {heads} \times {model.head_dim} \times {bytes_per:g}"
        rf" = {kv.bytes_per_token:,.0f}\ \text{{B}}"
    )
else:
    latent = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    index = model.indexer.cache_bytes_per_token if model.indexer else 0  # DeepSeek sparse attention's keys
    st.latex(
        r"\text{KV/token}_{MLA} = L \times [(r_{kv} + d_{rope}) \times b" + (r" + b_{index}" if index else "") + "]"
        rf" = {layers} \times [({model.mla.kv_lora_rank} + {model.mla.qk_rope_head_dim}) \times {bytes_per:g}"
        + (rf" + {index}" if index else "")
        + "]"
        rf" = {layers * (latent * bytes_per + index):,.0f}\ \text{{B}}"
    )
if kv.shared_prefix_bytes:  # prefix caching: the shared prefix is held once
    st.latex(
        r"\text{KV}_{batch} = \text{KV}(P) + B\,(\text{KV/request} - \text{KV}(P))"
        rf" = {kv.shared_prefix_bytes / units.GiB:.3f} + {work.batch} \times"
        rf" ({kv.bytes_per_request / units.GiB:.3f} - {kv.shared_prefix_bytes / units.GiB:.3f})"
        rf" = {mem.kv_in_use / units.GiB:.2f}\ \text{{GiB}}"
    )
else:
    st.latex(
        r"\text{KV}_{batch} = \text{KV/request} \times B"
        rf" = {kv.bytes_per_request / units.GiB:.3f}\ \text{{GiB}} \times {work.batch}"
        rf" = {mem.kv_in_use / units.GiB:.2f}\ \text{{GiB}}"
    )
st.caption(
    t("learn.kv_caption", tokens=work.request_len, sliding=model.num_sliding_layers, window=model.sliding_window or "-")
)
render_state(dep, kv)

st.subheader(t("learn.concurrency_heading"))
usable = mem.capacity - mem.driver_reserved
levers_gib = mem.lever_gpu / units.GiB
lever_term = rf" - {levers_gib:.2f}" if levers_gib else ""
shared = kv.shared_prefix_bytes / units.GiB
space_extra = rf" + {mem.host_kv / units.GiB:.2f}" if mem.host_kv else ""
gib_u, gib_w, gib_a, gib_o = (x / units.GiB for x in (usable, mem.weights, mem.activations, mem.overhead))
f, gib_c = dep.memory_fraction, SGLANG_CONTEXT_BYTES / units.GiB
budget_symbols, budget_values = {  # each engine's KV budget (core/memory/accounting.py)
    "vllm": (r"M \cdot u - W - A - O", rf"{gib_u:.2f} \times {f:.2f} - {gib_w:.2f} - {gib_a:.2f} - {gib_o:.2f}"),
    "sglang": (r"u \cdot (M - C) - W", rf"{f:.3f} \times ({gib_u:.2f} - {gib_c:.2f}) - {gib_w:.2f}"),
    "trtllm": (
        r"u \cdot (M - W - A - O)",
        rf"{f:.2f} \times ({gib_u:.2f} - {gib_w:.2f} - {gib_a:.2f} - {gib_o:.2f})",
    ),
}[dep.engine.release.engine]
st.latex(
    r"N_{max} = \left\lfloor \frac{"
    + budget_symbols
    + (r" - X" if levers_gib else "")
    + (r" + K_{host}" if mem.host_kv else "")
    + (r" - \text{KV}(P)" if shared else "")
    + r"}{\text{KV/request}"
    + (r" - \text{KV}(P)" if shared else "")
    + r"} \right\rfloor"
    rf" = \left\lfloor \frac{{{budget_values}"
    rf"{lever_term}{space_extra}" + (rf" - {shared:.3f}" if shared else "") + "}"
    rf"{{{kv.bytes_per_request / units.GiB:.3f}" + (rf" - {shared:.3f}" if shared else "") + "}"
    rf" \right\rfloor = {kv.max_concurrency_at_request_len:,}"
)
st.caption(t("learn.concurrency_caption", release=dep.engine.release.name))
if levers_gib or mem.host_kv or shared:
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

st.header(t("learn.roofline_heading"))
peak, _ = dep.gpu.flops_for(dep.weights)
points = {}
for name, phase in ((t("learn.prefill"), result.latency.prefill), (t("learn.decode"), result.latency.decode)):
    points[name] = (float(phase.flops / phase.bytes_moved), float(phase.flops / phase.seconds))
st.plotly_chart(charts.roofline_figure(peak, dep.gpu.memory_bandwidth, points), width="stretch", key="roofline")
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
        rate=fmt.rate(at_ceiling.throughput.output_tokens_per_s),
        tail_len=fmt.count(tail_len),
        tail_ceiling=fmt.count(tail.kv.max_concurrency_at_request_len),
    )
)

render_levers(dep, work, result, load_catalog())
