"""Plotly figures for the pages. Inputs are core results; every label comes from the catalog.

Built as plain data with :class:`ui.figure.Figure` (plotly's call-by-call validation was most of
a rerun's cost); tests validate every drawn figure with plotly's own validators.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.estimate.result import Estimate
from core.spec import units
from ui.figure import Figure
from ui.i18n import t
from ui.ticks import log_ticks

COLORS = {
    "weights": "#1f4e9c",
    "activations": "#6aa5e6",
    "overhead": "#d97706",
    "proposer": "#7c3aed",
    "lora": "#db2777",
    "attention_scores": "#b91c1c",
    "kv_host": "#fde68a",
    "kv_used": "#16a34a",
    "kv_over": "#dc2626",
    "kv_free": "#a7e3b5",
    "held_back": "#cbd5e1",
    "reserved": "#94a3b8",
}
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706")


def reference_line(figure: Figure, *, x=None, y=None, dash: str, color: str, text: str = "", bottom=False) -> None:
    """A vertical (x) or horizontal (y) line across the plot with an optional label, as a layout
    shape (plotly's add_vline/add_hline cost about 5 ms each: they resolve every axis)."""
    vertical = x is not None
    shape = {
        "type": "line",
        "xref": "x" if vertical else "paper",
        "yref": "paper" if vertical else "y",
        "x0": x if vertical else 0,
        "x1": x if vertical else 1,
        "y0": 0 if vertical else y,
        "y1": 1 if vertical else y,
        "line": {"dash": dash, "color": color},
    }
    note = None
    if text:
        note = {
            "text": text,
            "showarrow": False,
            "xref": "x" if vertical else "paper",
            "yref": "paper" if vertical else "y",
            "x": x if vertical else 1,
            "y": (0 if bottom else 1) if vertical else y,
            "xanchor": "left" if vertical else "right",
            "yanchor": ("bottom" if bottom else "top") if vertical else "bottom",
        }
    figure.add_shape(shape, note)


LAYOUT = {"margin": {"t": 50, "b": 50, "l": 60, "r": 20}, "legend": {"orientation": "h", "y": -0.25}}
MAX_DECADES_AT_125 = 4
"""A log axis spanning more decades than this is ticked at powers of ten only (1-2-5 would crowd it)."""


def log_axis(title: str, *series) -> dict:
    """A log axis titled ``title``, ticked 1, 2, 5, 10, 20, 50, ... over the positive values of
    ``series`` (plotly's own log ticks read "2 3 ... 9 1 2 3" or "100, 5, 2, 10, 5"). A range with
    fewer than two such ticks keeps plotly's."""
    values = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series]) if series else np.array([])
    values = values[np.isfinite(values) & (values > 0)]
    axis: dict = {"type": "log", "title": title}
    if not values.size:
        return axis
    low, high = float(values.min()), float(values.max())
    ticks = log_ticks(low, high)
    if np.log10(high / low) > MAX_DECADES_AT_125:
        kept = [i for i, v in enumerate(ticks["tickvals"]) if float(np.log10(v)).is_integer()]
        ticks = {key: [ticks[key][i] for i in kept] for key in ticks}
    return axis | ticks if len(ticks["tickvals"]) >= 2 else axis


def _gib(value: float) -> float:
    return value / units.GiB


def memory_figure(result: Estimate) -> go.Figure:
    """One GPU's memory as a stacked bar against its capacity and the engine's limit."""
    m = result.memory
    budget = max(m.kv_budget, 0.0)
    parts = [
        ("weights", m.weights),
        ("activations", m.activations),
        ("overhead", m.overhead),
        *((p.name, p.bytes) for p in m.parts if p.on_gpu),
        ("kv_used", min(m.kv_in_use, budget)),
        ("kv_host", min(max(m.kv_in_use - budget, 0.0), m.host_kv)),
        ("kv_over", max(m.kv_in_use - budget - m.host_kv, 0.0)),
        ("kv_free", max(budget - m.kv_in_use, 0.0)),
        ("held_back", m.held_back),
        ("reserved", m.driver_reserved),
    ]
    figure = Figure()
    for key, value in parts:
        if value <= 0:
            continue
        label = t(f"memory.{key}")
        figure.add_bar(
            y=[""],
            x=[_gib(value)],
            name=label,
            orientation="h",
            marker_color=COLORS[key],
            hovertemplate=f"{label}: %{{x:.2f}} GiB<extra></extra>",
        )
    limit = m.capacity - m.driver_reserved - m.held_back
    reference_line(
        figure,
        x=_gib(m.capacity),
        dash="dash",
        color="#111827",
        text=t("memory.capacity", value=f"{_gib(m.capacity):.1f}"),
    )
    reference_line(figure, x=_gib(limit), dash="dot", color="#475569", text=t("memory.engine_limit"), bottom=True)
    figure.update_layout(barmode="stack", height=260, xaxis_title="GiB", title=t("memory.title"), **LAYOUT)
    return figure.build()


def concurrency_bars(result: Estimate) -> go.Figure:
    kv = result.kv
    labels = [t("concurrency.paged"), t("concurrency.vllm"), t("concurrency.contiguous")]
    values = [kv.max_concurrency_at_request_len, kv.max_concurrency_at_max_model_len, kv.max_concurrency_contiguous]
    figure = Figure()
    figure.add_bar(
        x=labels,
        y=values,
        marker_color=["#16a34a", "#2563eb", "#94a3b8"],
        text=[f"{v:,.0f}" if i != 1 else f"{v:,.2f}x" for i, v in enumerate(values)],
        textposition="outside",
        hovertemplate="%{x}: %{y:,.2f}<extra></extra>",
    )
    figure.update_layout(height=320, yaxis_title=t("concurrency.requests"), title=t("concurrency.title"), **LAYOUT)
    return figure.build()


def concurrency_curve(lengths: np.ndarray, counts: np.ndarray, current_len: int, current: int) -> go.Figure:
    figure = Figure()
    figure.add_scatter(
        x=lengths,
        y=counts,
        mode="lines",
        name=t("concurrency.curve"),
        line_shape="hv",
        hovertemplate=t("concurrency.hover") + "<extra></extra>",
    )
    figure.add_scatter(
        x=[current_len],
        y=[current],
        mode="markers",
        name=t("chart.current"),
        marker={"size": 12, "color": "#dc2626"},
        hovertemplate=t("concurrency.hover") + "<extra></extra>",
    )
    figure.update_layout(
        height=320,
        xaxis=log_axis(t("concurrency.length_axis"), lengths, [current_len]),
        yaxis=log_axis(t("concurrency.requests"), counts, [current]),
        title=t("concurrency.curve_title"),
        **LAYOUT,
    )
    return figure.build()


def tradeoff_figure(scores: dict[str, float]) -> go.Figure:
    """The three-way tradeoff as a triangle: 1 is best on each axis."""
    keys = ["memory", "latency", "throughput"]
    labels = [t(f"tradeoff.{k}") for k in keys]
    values = [scores[k] for k in keys]
    figure = Figure()
    figure.add_scatterpolar(
        r=[*values, values[0]],
        theta=[*labels, labels[0]],
        fill="toself",
        line_color="#2563eb",
        hovertemplate="%{theta}: %{r:.0%}<extra></extra>",
    )
    figure.update_layout(
        height=320,
        # memory on top, its label centred above the circle; the side margins hold the other two
        # labels at the lower corners, in a third of the page's width (it was clipped at the right)
        polar={
            "radialaxis": {"range": [0, 1], "tickformat": ".0%", "angle": 270, "tickangle": -90},
            "angularaxis": {"rotation": 90, "direction": "clockwise"},
        },
        showlegend=False,
        title=t("tradeoff.title"),
        margin={"t": 80, "b": 40, "l": 80, "r": 80},
    )
    return figure.build()


def roofline_figure(peak_flops: float, bandwidth: float, points: dict[str, tuple[float, float]]) -> go.Figure:
    """Attainable FLOP/s = min(peak, bandwidth x intensity), with operating points (intensity, FLOP/s)."""
    intensity = np.geomspace(0.1, 10_000, 200)
    attainable = np.minimum(peak_flops, bandwidth * intensity) / units.TERA
    figure = Figure()
    figure.add_scatter(x=intensity, y=attainable, mode="lines", name=t("roofline.roof"), line={"color": "#111827"})
    ridge = peak_flops / bandwidth
    # a trace, not add_vline: plotly places vline annotations inconsistently on log axes
    figure.add_scatter(
        x=[ridge, ridge],
        y=[attainable.min(), attainable.max()],
        mode="lines",
        line={"dash": "dot", "color": "#64748b"},
        name=t("roofline.ridge", value=f"{ridge:,.0f}"),
    )
    for (name, (x, y)), color in zip(points.items(), ("#dc2626", "#2563eb"), strict=False):
        figure.add_scatter(
            x=[x],
            y=[y / units.TERA],
            mode="markers+text",
            text=[name],
            textposition="top center",
            name=name,
            marker={"size": 13, "color": color},
        )
    figure.update_layout(
        height=380,
        xaxis=log_axis(t("roofline.x"), intensity, [x for x, _ in points.values()]),
        yaxis=log_axis(t("roofline.y"), attainable, [y / units.TERA for _, y in points.values()]),
        title=t("roofline.title"),
        **LAYOUT,
    )
    return figure.build()
