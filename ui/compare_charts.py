"""Compare page figures: throughput against TPOT of several saved scenarios, and their memory side by side."""

from __future__ import annotations

import plotly.graph_objects as go

from core.estimate.result import Estimate
from core.estimate.sweep import Sweep
from core.spec import units
from ui.charts import COLORS, LAYOUT, PALETTE
from ui.figure import Figure
from ui.i18n import t
from ui.speed_charts import shown_batches


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
        title=t("compare.curves_title"),
        **LAYOUT,
    )
    return figure.build()


def compare_memory(results: list[tuple[str, Estimate]]) -> go.Figure:
    """One GPU's memory of each scenario as stacked bars: weights, peak, overhead, KV in use and free."""
    figure = Figure()
    labels = [label for label, _ in results]
    for key, getter in (
        ("weights", lambda m: m.weights),
        ("activations", lambda m: m.activations),
        ("overhead", lambda m: m.overhead),
        ("kv_used", lambda m: min(m.kv_in_use, max(m.kv_budget, 0.0))),
        ("kv_free", lambda m: max(m.kv_budget - m.kv_in_use, 0.0)),
    ):
        figure.add_bar(
            x=labels,
            y=[getter(r.memory) / units.GiB for _, r in results],
            name=t(f"memory.{key}"),
            marker_color=COLORS[key],
            hovertemplate="%{x}: %{y:.2f} GiB<extra></extra>",
        )
    figure.update_layout(
        barmode="stack", height=380, yaxis_title=t("compare.memory_axis"), title=t("compare.memory_title"), **LAYOUT
    )
    return figure.build()
