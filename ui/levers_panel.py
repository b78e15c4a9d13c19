"""The Explorer's Optimizations panel: each lever's figures and the workload without and with it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.estimate.whatif import Comparison, WhatIf, what_if
from core.levers.attention_kernel import score_matrix_bytes
from core.spec import units
from core.spec.deployment import Deployment, Workload
from core.timing.phases import decode_step_time
from ui import fmt
from ui.chart_style import LAYOUT, PALETTE, log_axis, reference_line
from ui.figure import Figure, chart
from ui.i18n import t

SPEC_BATCHES = np.unique(np.geomspace(1, 1024, 41).round().astype(int))
EAGER_POINTS = 200


def render_optimizations(dep: Deployment, work: Workload) -> None:
    st.subheader(t("levers.heading"))
    if not dep.levers.active:
        st.caption(t("levers.none_on"))
        return
    effects = what_if(dep, work)
    st.dataframe(_table(effects), hide_index=True, width="stretch")
    for line in _details(effects):
        st.markdown(line)
    if effects.speculative is not None:
        chart(st, speculation_figure(dep, work), key="spec_chart")
    if effects.attention is not None:
        chart(st, eager_figure(dep, effects.attention.comparison.without.memory.kv_budget), key="eager_chart")


def _comparisons(effects: WhatIf) -> list[tuple[str, Comparison]]:
    names = {
        "speculative": t("levers.spec"),
        "prefix": t("levers.prefix"),
        "offload": t("levers.offload"),
        "lora": t("levers.lora"),
        "attention": t("levers.attention"),
    }
    return [(names[k], getattr(effects, k).comparison) for k in names if getattr(effects, k) is not None]


def _table(effects: WhatIf) -> list[dict[str, str]]:
    rows = []
    for name, c in _comparisons(effects):
        for metric, label, show in (
            ("ttft", "TTFT", fmt.duration),
            ("tpot", "TPOT", fmt.duration),
            ("throughput", t("metric.throughput"), fmt.rate),
            ("concurrency", t("metric.max_concurrency"), fmt.count),
        ):
            values = c.values(metric)
            ratio = c.ratio(metric)
            rows.append(
                {
                    t("levers.col_lever"): name,
                    "": label,
                    t("levers.col_without"): show(values[0]) + ("" if c.without.fits else f" ({t('levers.fits_no')})"),
                    t("levers.col_with"): show(values[1]) + ("" if c.with_.fits else f" ({t('levers.fits_no')})"),
                    t("levers.col_change"): f"×{ratio:.2f}" if np.isfinite(ratio) else "—",
                }
            )
    return rows


def _details(effects: WhatIf) -> list[str]:
    dep, work = effects.result.deployment, effects.result.workload
    lines = []
    if (s := effects.speculative) is not None:
        spec = dep.levers.speculative
        if s.break_even_batch is None:
            break_even = t("levers.break_even_always")
        elif s.break_even_batch == 0:
            break_even = t("levers.break_even_never")
        else:
            break_even = t("levers.break_even", batch=s.break_even_batch)
        method = t(f"levers.method_{spec.method}") + (f": {spec.draft.name}" if spec.draft else "")
        lines.append(
            t(
                "levers.spec_detail",
                method=method,
                k=spec.k,
                acceptance=f"{spec.acceptance:.2f}",
                tokens=f"{s.tokens_per_step:.2f}",
                proposer=fmt.gib(s.proposer_bytes),
                break_even=break_even,
            )
        )
    if (p := effects.prefix) is not None:
        lines.append(
            t(
                "levers.prefix_detail",
                cached=fmt.count(p.cached_tokens),
                prompt=fmt.count(work.input_len),
                shared=fmt.count(p.shared_tokens),
                shared_kv=fmt.gib(p.shared_bytes),
            )
        )
    if (o := effects.offload) is not None:
        lines.append(
            t(
                "levers.offload_detail",
                link=dep.gpu.host_link_generation,
                bandwidth=f"{o.host_bandwidth / units.GB:.1f} GB/s",
                weights_ms=fmt.duration(o.weights_s_per_step),
                spilled=fmt.gib(o.spilled_bytes),
                spill_ms=fmt.duration(o.spill_s_per_step),
                needed=fmt.gib(o.weights_needed_to_fit),
            )
        )
    if (lo := effects.lora) is not None:
        lora = dep.levers.lora
        lines.append(
            t(
                "levers.lora_detail",
                per_adapter=f"{lo.bytes_per_adapter / units.MiB:,.1f} MiB",
                rank=lora.rank,
                targets=t(f"levers.targets_{lora.targets.replace('-', '_')}"),
                adapters=lora.adapters,
                total=fmt.gib(effects.result.memory.part("lora")),
                max_adapters=fmt.count(lo.max_adapters),
            )
        )
    if (a := effects.attention) is not None:
        lines.append(t("levers.attention_detail", scores=fmt.gib(a.profile_bytes), oom=fmt.count(a.oom_prompt_len)))
    return lines


def speculation_figure(dep: Deployment, work: Workload) -> go.Figure:
    """TPOT against batch with and without speculation, and the speedup on a second axis."""
    context = work.decode_context
    plain = dep.with_levers(speculative=None)
    with_spec = np.asarray(decode_step_time(dep, SPEC_BATCHES, context).seconds) / units.MS
    without = np.asarray(decode_step_time(plain, SPEC_BATCHES, context).seconds) / units.MS
    figure = Figure()
    figure.add_scatter(x=SPEC_BATCHES, y=without, name=t("levers.without_label"), line_color=PALETTE[0])
    figure.add_scatter(x=SPEC_BATCHES, y=with_spec, name=t("levers.with_label"), line_color=PALETTE[2])
    figure.add_scatter(
        x=SPEC_BATCHES,
        y=without / with_spec,
        name=t("levers.spec_gain"),
        yaxis="y2",
        line_dash="dot",
        line_color="#6b7280",
    )
    reference_line(figure, x=work.batch, dash="dash", color="#111827")
    figure.update_layout(
        title=t("levers.spec_chart"),
        xaxis=log_axis(t("sidebar.batch"), SPEC_BATCHES),
        yaxis={"title": "TPOT [ms]", "rangemode": "tozero"},
        yaxis2={"title": t("levers.spec_gain"), "overlaying": "y", "side": "right", "rangemode": "tozero"},
        height=360,
        **LAYOUT,
    )
    return figure.build()


def eager_figure(dep: Deployment, free_bytes: float) -> go.Figure:
    """Score-matrix memory of one prompt against its length: eager grows as s², flash stays at 0."""
    longest = dep.max_model_len
    lengths = np.linspace(1, longest, EAGER_POINTS)
    eager = np.asarray(score_matrix_bytes(dep.model, dep.parallel.tp, 1, lengths)) / units.GiB
    figure = Figure()
    figure.add_scatter(x=lengths, y=eager, name=t("levers.eager_line"), line_color=PALETTE[1])
    figure.add_scatter(x=lengths, y=np.zeros_like(lengths), name=t("levers.flash_line"), line_color=PALETTE[2])
    reference_line(figure, y=max(free_bytes, 0.0) / units.GiB, dash="dash", color="#111827", text=t("levers.free_line"))
    figure.update_layout(
        title=t("levers.eager_chart"),
        xaxis_title=t("sidebar.input_len"),
        yaxis_title="GiB",
        height=340,
        **LAYOUT,
    )
    return figure.build()
