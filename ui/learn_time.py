"""Learn's time section: TPOT as one decode step (weight reads, KV reads, compute; which bound wins;
the per-step costs) with a chart of the step against the batch split into its terms, then TTFT,
E2E and throughput, each with this scenario's values. The numbers are the Explorer's: the same
estimate and the same explanations (core/estimate/explain.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.estimate.explain import explain
from core.estimate.result import Estimate, estimate
from core.estimate.step_terms import StepTerms, step_terms
from core.spec import units
from core.spec.deployment import decode_context
from ui import fmt
from ui.chart_style import titled
from ui.explain import show_explanation
from ui.figure import Figure, chart
from ui.i18n import lang, t
from ui.ticks import log_ticks

TERMS = (  # StepTerms field, message key, colour, dash
    ("weights_s", "learn.term_weights", "#2563eb", "solid"),
    ("kv_s", "learn.term_kv", "#0891b2", "solid"),
    ("memory_s", "learn.term_memory", "#0891b2", "dash"),
    ("compute_s", "learn.term_compute", "#d97706", "solid"),
    ("fixed_s", "learn.term_fixed", "#64748b", "dot"),
)


def shown_batches(result: Estimate) -> np.ndarray:
    """1 to a few times the larger of the batch that runs and the memory wall, at most 1024."""
    wall = max(result.kv.max_concurrency_at_request_len, 1)
    top = int(min(1024, max(4 * result.running_batch, 2 * wall, 64)))
    grid = np.geomspace(1, top, 80).round().astype(int)
    marks = [result.running_batch] + ([wall] if wall <= top else [])
    return np.union1d(grid, marks)  # the marker and the wall on the line itself


def step_figure(terms: StepTerms, running: int, wall: int) -> go.Figure:
    """Decode step time against the batch: each term, the step (their roofline sum), the batch that
    runs and the memory wall."""
    figure = Figure()
    batches = terms.batches
    for field, label, color, dash in TERMS:
        figure.add_scatter(
            x=batches,
            y=getattr(terms, field) / units.MS,
            mode="lines",
            name=t(label),
            line={"color": color, "dash": dash},
            hovertemplate=t(label) + ": %{y:.2f} ms<extra>B = %{x}</extra>",
        )
    figure.add_scatter(
        x=batches,
        y=terms.step_s / units.MS,
        mode="lines",
        name=t("learn.term_step"),
        line={"color": "#111827", "width": 3},
        hovertemplate=t("learn.term_step") + ": %{y:.2f} ms<extra>B = %{x}</extra>",
    )
    at = int(np.flatnonzero(batches == running)[0])
    figure.add_scatter(
        x=[batches[at]],
        y=[terms.step_s[at] / units.MS],
        mode="markers",
        name=t("chart.current"),
        marker={"size": 12, "color": "#dc2626"},
    )
    top = float(terms.step_s.max() / units.MS)
    if wall < batches[-1]:
        figure.add_scatter(
            x=[wall, wall],
            y=[0, top],
            mode="lines",
            name=t("learn.memory_wall", batch=wall),
            line={"color": "#111827", "dash": "dash"},
        )
    figure.update_layout(
        height=480,  # eight legend entries below the plot on a phone
        xaxis={"type": "log", "title": t("learn.batch_axis"), **log_ticks(batches[0], batches[-1])},
        yaxis={"title": t("learn.step_axis"), "rangemode": "tozero"},
        **titled(t("learn.step_title")),
    )
    return figure.build()


def render_time(result: Estimate) -> None:
    dep, work, lat = result.deployment, result.workload, result.latency
    explained = explain(result)
    st.header(t("learn.time_heading"))
    st.markdown(t("learn.time_intro"))
    st.subheader(t("learn.tpot_heading"))
    show_explanation(explained["tpot"], fmt.duration(lat.tpot_s))
    terms = step_terms(dep, shown_batches(result), decode_context(work.input_len, work.output_len))
    wall = max(result.kv.max_concurrency_at_request_len, 1)
    chart(st, step_figure(terms, result.running_batch, wall), key="step_terms")
    doubled = estimate(dep, dataclasses.replace(work, batch=2 * work.batch), enforce_context=False)
    knee = step_terms(dep, np.arange(1, 1025), decode_context(work.input_len, work.output_len)).knee
    past_wall = 2 * work.batch > wall
    lines = [
        t("learn.step_body"),
        t(
            "learn.step_doubled_wall" if past_wall else "learn.step_doubled",
            batch=work.batch,
            doubled=2 * work.batch,
            wall=fmt.count(wall),
            tpot=fmt.duration(lat.tpot_s),
            tpot2=fmt.duration(doubled.latency.tpot_s),
            rate=fmt.rate(result.throughput.output_tokens_per_s),
            rate2=fmt.rate(doubled.throughput.output_tokens_per_s),
        ),
        t("learn.knee_at", knee=fmt.count(knee)) if knee is not None else t("learn.knee_none"),
        t("learn.step_wall", wall=fmt.count(wall)),
    ]
    st.markdown(("" if lang() == "zh" else " ").join(lines))
    render_ttft(result, explained)
    st.subheader(t("learn.e2e_heading"))
    show_explanation(explained["e2e"], fmt.duration(lat.e2e_s))
    show_explanation(explained["throughput"], fmt.rate(result.throughput.output_tokens_per_s))


def render_ttft(result: Estimate, explained: dict) -> None:
    """TTFT as the Explorer heads with it (the burst's median as vLLM V1 admits it, with P99 and the
    last request: core/estimate/burst.py), then the prefill, then the static rounds, labelled as the
    teaching simplification they are."""
    burst, lat = result.burst, result.latency
    st.subheader(t("learn.ttft_heading"))
    st.markdown(
        t(
            "learn.ttft_burst_body" if burst.source == "simulator" else "learn.ttft_burst_rounds_body",
            batch=result.workload.batch,
            median=fmt.duration(burst.median_s),
            p99=fmt.duration(burst.p99_s),
            last=fmt.duration(burst.last_s),
            preemptions=fmt.count(burst.preemptions),
            steps=fmt.count(burst.steps),
        )
    )
    show_explanation(explained["ttft_burst"], fmt.duration(burst.median_s))  # the Explorer's headline
    show_explanation(explained["prefill"], fmt.duration(float(lat.prefill.seconds)))
    st.markdown(f"**{t('learn.ttft_static_heading')}**")
    st.caption(t("learn.ttft_static_body", running=fmt.count(result.running_batch), static=fmt.duration(lat.ttft_s)))
    show_explanation(explained["ttft"], fmt.duration(lat.ttft_s))
