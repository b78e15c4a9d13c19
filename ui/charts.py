"""Plotly figures for the pages. Inputs are core results; every label comes from the catalog.

Built as plain data with :class:`ui.figure.Figure` (plotly's call-by-call validation was most of
a rerun's cost); tests validate every drawn figure with plotly's own validators.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.estimate.result import Estimate
from core.levers.offload import spilled_kv_bytes
from core.memory.budget import GpuMemory
from core.spec import units
from ui.chart_style import COLORS, TITLE_LINE_PX, log_axis, titled, wrap_title
from ui.figure import Figure
from ui.i18n import t

MEMORY_LABEL_ROW_PX = 18
"""The memory chart's capacity label sits one row (this many px) above the engine limit's."""


def _gib(value: float) -> float:
    return value / units.GiB


def memory_parts(m: GpuMemory) -> list[tuple[str, float]]:
    """One GPU's memory as the bar draws it: (part, bytes) in order from 0. The engine's parts (weights,
    activation peak, overhead, the levers' GPU parts, KV in use on the GPU, KV budget left) up to the
    engine's limit, then held back and reserved by the driver up to the capacity, then what does not
    fit ("kv_over", or "over" when more than the KV cache does not fit) from the capacity on, and last
    KV cache in host memory, which is not on the GPU at all."""
    budget = max(m.kv_budget, 0.0)
    on_host = float(spilled_kv_bytes(m.kv_in_use, m.kv_budget, m.host_kv))
    engine = [
        ("weights", m.weights),
        ("activations", m.activations),
        ("overhead", m.overhead),
        *((p.name, p.bytes) for p in m.parts if p.on_gpu),
        ("kv_used", m.kv_in_use - on_host),
        ("kv_free", max(budget - m.kv_in_use, 0.0)),
    ]
    room = m.capacity - m.driver_reserved - m.held_back  # the engine's limit
    parts, over, kv_fits = [], 0.0, True
    for key, value in engine:
        inside = min(value, max(room, 0.0))
        room -= inside
        parts.append((key, inside))
        if value > inside:
            over += value - inside
            kv_fits = kv_fits and key == "kv_used"
    parts += [("held_back", m.held_back), ("reserved", m.driver_reserved)]
    parts += [("kv_over" if kv_fits else "over", over), ("kv_host", on_host)]
    return [(key, value) for key, value in parts if value > 0]


def _label_side(x: float, span: float) -> str:
    """Where a label at ``x`` on an axis from 0 to ``span`` extends: away from the nearer end."""
    return "right" if x > span / 2 else "left"


def memory_figure(result: Estimate) -> go.Figure:
    """One GPU's memory as a stacked bar (:func:`memory_parts`) against its capacity and the engine's
    limit, their labels on two rows above the bar so that no part covers them."""
    m = result.memory
    parts = memory_parts(m)
    figure = Figure()
    for key, value in parts:
        measured = key == "held_back" and m.sizing == "vllm_measured"  # vLLM 0.34 keeps a margin, not 1 - u
        label = t("memory_release.held_back_measured") if measured else t(f"memory.{key}")
        figure.add_bar(
            y=[""],
            x=[_gib(value)],
            name=label,
            orientation="h",
            marker_color=COLORS[key],
            hovertemplate=f"{label}: %{{x:.2f}} GiB<extra></extra>",
        )
    span = _gib(max(sum(value for _, value in parts), m.capacity))
    limit = m.capacity - m.driver_reserved - m.held_back
    for x, text, dash, color, row in (
        (_gib(m.capacity), t("memory.capacity", value=f"{_gib(m.capacity):.1f}"), "dash", "#111827", 1),
        (_gib(limit), t("memory.engine_limit"), "dot", "#475569", 0),
    ):
        figure.add_shape(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"dash": dash, "color": color},
            },
            {
                "text": text,
                "showarrow": False,
                "xref": "x",
                "yref": "paper",
                "x": x,
                "y": 1,
                "yshift": row * MEMORY_LABEL_ROW_PX,
                "xanchor": _label_side(x, span),
                "yanchor": "bottom",
                "font": {"color": color},
            },
        )
    layout = titled(t("memory.title"), l=24, b=40)
    layout["margin"]["t"] += 2 * MEMORY_LABEL_ROW_PX  # the two label rows
    figure.update_layout(
        barmode="stack",
        height=380,  # on a phone the legend takes seven rows below the bar
        xaxis={"range": [0, span * 1.02], "title": "GiB"},
        yaxis={"showticklabels": False},
        **layout,
    )
    return figure.build()


BAR_TEXT_ROOM = 1.2
"""An axis this many times the tallest bar leaves room for the number printed above it."""
CATEGORY_COLUMNS = 14
"""Display columns of a bar's name per line: three names side by side in a chart on a phone."""


def concurrency_bars(result: Estimate) -> go.Figure:
    """The ceiling three ways as bars, their long names wrapped so that they never run together."""
    kv = result.kv
    labels = [t("concurrency.paged"), t("concurrency.vllm"), t("concurrency.contiguous")]
    values = [kv.max_concurrency_at_request_len, kv.max_concurrency_at_max_model_len, kv.max_concurrency_contiguous]
    figure = Figure()
    figure.add_bar(
        x=[wrap_title(label, CATEGORY_COLUMNS) for label in labels],
        y=values,
        marker_color=["#16a34a", "#2563eb", "#94a3b8"],
        text=[f"{v:,.0f}" if i != 1 else f"{v:,.2f}x" for i, v in enumerate(values)],
        textposition="outside",
        hovertemplate="%{x}: %{y:,.2f}<extra></extra>",
    )
    figure.update_layout(
        height=340,
        yaxis={"title": t("concurrency.requests"), "range": [0, max(max(values), 1) * BAR_TEXT_ROOM]},
        xaxis={"tickangle": 0},
        **titled(t("concurrency.title")),
    )
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
        **titled(t("concurrency.curve_title")),
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
    layout = titled(t("tradeoff.title"), b=40, l=80, r=80)
    layout["margin"]["t"] += TITLE_LINE_PX  # the top axis's label, above the circle
    figure.update_layout(
        height=320,
        # memory on top, its label centred above the circle; the side margins hold the other two
        # labels at the lower corners, in a third of the page's width (it was clipped at the right)
        polar={
            # no tick labels: they sat on the polygon; the scores are in the hover and beside the chart
            "radialaxis": {"range": [0, 1], "showticklabels": False, "showline": False, "ticks": "", "dtick": 0.25},
            "angularaxis": {"rotation": 90, "direction": "clockwise"},
        },
        showlegend=False,
        **layout,
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
    middle = np.sqrt(attainable.min() * attainable.max())  # of the log axis
    for (name, (x, y)), color in zip(points.items(), ("#dc2626", "#2563eb"), strict=False):
        figure.add_scatter(
            x=[x],
            y=[y / units.TERA],
            mode="markers+text",
            text=[name],
            textposition="bottom center" if y / units.TERA > middle else "top center",  # inside the plot
            name=name,
            marker={"size": 13, "color": color},
        )
    figure.update_layout(
        height=460,  # 1-2-5 ticks over four decades, apart on a phone under the legend
        xaxis=log_axis(t("roofline.x"), intensity, [x for x, _ in points.values()]),
        yaxis=log_axis(t("roofline.y"), attainable, [y / units.TERA for _, y in points.values()]),
        **titled(t("roofline.title")),
    )
    return figure.build()
