"""Compare page figures: throughput against TPOT of several saved scenarios, and their memory side by side."""

from __future__ import annotations

import plotly.graph_objects as go

from core.estimate.result import Estimate
from core.estimate.sweep import Sweep
from core.spec import units
from ui.chart_style import COLORS, PALETTE, titled
from ui.charts import memory_parts
from ui.figure import Figure
from ui.i18n import t
from ui.speed_charts import shown_batches

KV_PARTS = ("kv_used", "kv_free", "kv_over", "over")
"""Drawn on top of the others, in this order: what does not fit starts at the engine's limit."""
OUTSIDE_THE_ENGINE = ("held_back", "reserved", "kv_host")


def compare_curves(curves: list[tuple[str, Sweep, int]]) -> go.Figure:
    """Throughput against TPOT of several scenarios (each a one-prompt-length sweep) and their points."""
    figure = Figure()
    hover = t("triangle.hover") + "<extra></extra>"
    for index, (label, grid, batch) in enumerate(curves):
        color = PALETTE[index % len(PALETTE)]
        upto = shown_batches(len(grid.batches), grid.max_concurrency[0], batch)
        figure.add_scatter(
            x=grid.tpot_s[0, :upto] / units.MS,
            y=grid.output_tokens_per_s[0, :upto],
            customdata=grid.batches[:upto],
            mode="lines",
            name=label,
            line={"color": color},
            hovertemplate=hover,
        )
        figure.add_scatter(
            x=[grid.tpot_s[0, batch - 1] / units.MS],
            y=[grid.output_tokens_per_s[0, batch - 1]],
            customdata=[batch],
            mode="markers",
            name=f"{label}: {t('chart.current')}",
            marker={"size": 12, "color": color, "line": {"width": 2, "color": "#111827"}},
            hovertemplate=hover,
        )
    figure.update_layout(
        height=400,
        xaxis_title=t("triangle.tpot_axis"),
        yaxis_title=t("triangle.rate_axis"),
        **titled(t("compare.curves_title")),
    )
    return figure.build()


def compare_memory(results: list[tuple[str, Estimate]]) -> go.Figure:
    """One GPU's memory of each scenario as stacked bars: weights, peak, overhead, the levers' parts,
    KV in use (beyond the budget in red) and free, a tick at each GPU's engine limit; a scenario that
    does not fit is named in red above its bar and under it."""
    figure = Figure()
    labels = [label for label, _ in results]
    stacks = [_stack(r.memory) for _, r in results]
    levers = dict.fromkeys(key for stack in stacks for key in stack if key not in KV_PARTS)
    for key in (*levers, *KV_PARTS):  # the KV cache on top, as on the Explorer
        heights = [stack.get(key, 0.0) / units.GiB for stack in stacks]
        if not any(heights):
            continue
        figure.add_bar(
            x=labels,
            y=heights,
            name=t(f"memory.{key}"),
            marker_color=COLORS[key],
            hovertemplate="%{x}: %{y:.2f} GiB<extra></extra>",
        )
    figure.add_scatter(
        x=labels,
        y=[(r.memory.capacity - r.memory.driver_reserved - r.memory.held_back) / units.GiB for _, r in results],
        mode="markers",
        name=t("memory.engine_limit"),
        marker={"symbol": "line-ew", "size": 44, "color": "#111827", "line": {"width": 3, "color": "#111827"}},
        hovertemplate="%{x}: %{y:.2f} GiB<extra></extra>",
    )
    for (label, r), stack in zip(results, stacks, strict=True):
        if not r.fits:
            figure.layout.setdefault("annotations", []).append(
                {
                    "xref": "x",
                    "yref": "y",
                    "x": label,
                    "y": sum(stack.values()) / units.GiB,
                    "text": t("compare.does_not_fit"),
                    "showarrow": False,
                    "yanchor": "bottom",
                    "font": {"color": COLORS["kv_over"], "size": 13},
                }
            )
    figure.update_layout(
        barmode="stack",
        height=380,
        yaxis_title=t("compare.memory_axis"),
        # categories: plotly reads "#1", "#2" as the numbers 1, 2 otherwise
        xaxis={"type": "category", "tickvals": labels, "ticktext": [_tick(label, r.fits) for label, r in results]},
        **titled(t("compare.memory_title")),
    )
    return figure.build()


def _stack(m) -> dict[str, float]:
    """One GPU's memory as the Explorer stacks it [bytes], by part, up to the engine's limit and then
    what does not fit (:func:`ui.charts.memory_parts`; held back and reserved are the tick above)."""
    return {key: value for key, value in memory_parts(m) if key not in OUTSIDE_THE_ENGINE}


def _tick(label: str, fits: bool) -> str:
    return label if fits else f'<span style="color:{COLORS["kv_over"]}">{label} ✗</span>'
