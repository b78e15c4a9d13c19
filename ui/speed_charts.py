"""Explorer speed figures: throughput against TPOT across batch sizes (knee and memory wall), and TTFT
against batch and prompt length."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.estimate.sweep import Sweep
from core.spec import units
from ui.chart_style import log_axis, titled
from ui.figure import Figure
from ui.i18n import t


def shown_batches(total: int, wall: float, batch: int) -> int:
    """Batch sizes worth drawing: a few times the larger of the memory wall and the current batch."""
    return int(min(total, max(4 * wall, 2 * batch, 64)))


def _away_from_edge(x: float, low: float, high: float) -> str:
    """The side a point's label goes on, toward the middle of the axis from ``low`` to ``high``, so the
    plot's edge never cuts it (the memory wall's label at the right edge read "mer")."""
    return "left" if x > (low + high) / 2 else "right"


def throughput_tpot_figure(grid: Sweep, row: int, batch: int, wall: int) -> go.Figure:
    """Throughput against TPOT across batch sizes; the knee and the memory wall are marked.

    Drawn up to a few times the larger of the memory wall and the current batch, where the story is.
    """
    upto = shown_batches(len(grid.batches), wall, batch)
    tpot_ms = grid.tpot_s[row, :upto] / units.MS
    rate = grid.output_tokens_per_s[row, :upto]
    batches = grid.batches[:upto]
    fits = batches <= wall
    hover = t("triangle.hover") + "<extra></extra>"
    figure = Figure()
    figure.add_scatter(
        x=tpot_ms[fits],
        y=rate[fits],
        customdata=batches[fits],
        mode="lines",
        name=t("triangle.fits"),
        line={"color": "#2563eb"},
        hovertemplate=hover,
    )
    figure.add_scatter(
        x=tpot_ms[~fits],
        y=rate[~fits],
        customdata=batches[~fits],
        mode="lines",
        name=t("triangle.beyond_wall"),
        line={"color": "#94a3b8", "dash": "dot"},
        hovertemplate=hover,
    )
    low, high = float(np.nanmin(tpot_ms)), float(np.nanmax(tpot_ms))
    compute = np.flatnonzero(grid.decode_bound[row, :upto] == "compute")
    if compute.size:
        knee = compute[0]
        figure.add_scatter(
            x=[tpot_ms[knee]],
            y=[rate[knee]],
            customdata=[batches[knee]],
            mode="markers+text",
            text=[t("triangle.knee", batch=int(batches[knee]))],
            textposition=f"top {_away_from_edge(tpot_ms[knee], low, high)}",
            name=t("triangle.knee_name"),
            marker={"size": 11, "symbol": "diamond", "color": "#d97706"},
            hovertemplate=hover,
        )
    if 0 < wall < batches[-1]:
        index = int(wall) - 1
        figure.add_scatter(
            x=[tpot_ms[index]],
            y=[rate[index]],
            customdata=[wall],
            mode="markers+text",
            text=[t("triangle.wall", batch=int(wall))],
            textposition=f"bottom {_away_from_edge(tpot_ms[index], low, high)}",
            name=t("triangle.wall_name"),
            marker={"size": 11, "symbol": "x", "color": "#111827"},
            hovertemplate=hover,
        )
    current = batch - 1
    figure.add_scatter(
        x=[tpot_ms[current]],
        y=[rate[current]],
        customdata=[batch],
        mode="markers",
        name=t("chart.current"),
        marker={"size": 13, "color": "#dc2626"},
        hovertemplate=hover,
    )
    figure.update_layout(
        height=380,
        xaxis_title=t("triangle.tpot_axis"),
        yaxis_title=t("triangle.rate_axis"),
        **titled(t("triangle.title")),
    )
    return figure.build()


def ttft_figure(grid: Sweep, batch: int, input_len: int) -> go.Figure:
    """TTFT against batch size, one line per prompt length; the current setting is marked."""
    figure = Figure()
    for row, length in enumerate(grid.input_lens):
        figure.add_scatter(
            x=grid.batches,
            y=grid.ttft_s[row] / units.MS,
            mode="lines",
            name=t("ttft.line", tokens=int(length)),
            hovertemplate=t("ttft.hover", tokens=int(length)) + "<extra></extra>",
        )
    row = int(np.flatnonzero(grid.input_lens == input_len)[0])
    figure.add_scatter(
        x=[batch],
        y=[grid.ttft_s[row, batch - 1] / units.MS],
        mode="markers",
        name=t("chart.current"),
        marker={"size": 12, "color": "#dc2626"},
    )
    figure.update_layout(
        height=380,
        xaxis=log_axis(t("ttft.batch_axis"), grid.batches),
        yaxis=log_axis(t("ttft.ttft_axis"), grid.ttft_s / units.MS),
        **titled(t("ttft.title")),
    )
    return figure.build()
