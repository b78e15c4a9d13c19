"""Plotly figures for the Load test page: latency distributions, engine time series, load sweep."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.serving.load_sweep import LoadSweep
from core.serving.sim_result import SimResult
from core.spec import units
from ui.chart_style import log_axis, titled
from ui.figure import Figure
from ui.i18n import t


def distribution_figure(result: SimResult) -> go.Figure:
    figure = Figure()
    for name, values in (("TTFT", result.ttft), ("TPOT", result.tpot)):
        if values.size:
            figure.add_histogram(
                x=values / units.MS,
                name=name,
                opacity=0.7,
                nbinsx=60,
                hovertemplate=f"{name} %{{x:.0f}} ms: %{{y}}<extra></extra>",
            )
    figure.update_layout(
        barmode="overlay",
        height=340,
        xaxis_title="ms",
        yaxis_title=t("lt.requests"),
        **titled(t("lt.distribution_title")),
    )
    return figure.build()


def series_figure(result: SimResult) -> go.Figure:
    figure = Figure()
    figure.add_scatter(x=result.series_time, y=result.series_waiting, name=t("lt.waiting"), mode="lines")
    figure.add_scatter(x=result.series_time, y=result.series_running, name=t("lt.running"), mode="lines")
    figure.add_scatter(
        x=result.series_time,
        y=result.series_kv_used * 100,
        name=t("lt.kv_used"),
        mode="lines",
        yaxis="y2",
        line={"dash": "dot"},
    )
    figure.update_layout(
        height=340,
        xaxis_title=t("lt.time_axis"),
        yaxis_title=t("lt.requests"),
        # its own round ticks, 0-100 % by 20 (plotly syncs an overlaying axis to the left one's grid,
        # which read 5.2, 24.9, 44.6 ... %), and no second grid
        yaxis2={
            "title": t("lt.kv_axis"),
            "overlaying": "y",
            "side": "right",
            "range": [0, 105],
            "tickmode": "linear",
            "tick0": 0,
            "dtick": 20,
            "showgrid": False,
        },
        **titled(t("lt.series_title"), r=60),  # the right axis's ticks and title
    )
    return figure.build()


SWEEP_HEIGHT = 520
"""The load sweep's two charts: tall enough for the TTFT chart's seven legend entries in half a page or on a phone."""


def sweep_figure(sweep: LoadSweep, ttft_slo_s: float | None) -> go.Figure:
    rates = np.array([p.rate for p in sweep.points])
    figure = Figure()
    figure.add_scatter(
        x=rates, y=[p.ttft_p50_s / units.MS for p in sweep.points], name="TTFT P50", mode="lines+markers"
    )
    figure.add_scatter(
        x=rates, y=[p.ttft_p99_s / units.MS for p in sweep.points], name="TTFT P99", mode="lines+markers"
    )
    low, high = min(p.ttft_p50_s for p in sweep.points) / units.MS, max(p.ttft_p99_s for p in sweep.points) / units.MS
    marks = [
        (sweep.knee_rate, t("lt.knee"), "#d97706"),
        (sweep.static_rate, t("lt.static"), "#16a34a"),
        (sweep.naive_rate, t("lt.naive"), "#94a3b8"),
        (sweep.max_rate_under_slo, t("lt.max_slo"), "#2563eb"),
    ]
    for rate, label, color in marks:
        if rate is not None:  # a trace, not add_vline: vline annotations misplace on log axes
            figure.add_scatter(
                x=[rate, rate],
                y=[low, high],
                mode="lines",
                name=f"{label}: {rate:.2f}/s",
                line={"dash": "dash", "color": color},
            )
    if ttft_slo_s is not None:
        figure.add_scatter(
            x=[rates.min(), rates.max()],
            y=[ttft_slo_s / units.MS] * 2,
            mode="lines",
            name=t("lt.slo_line"),
            line={"dash": "dot", "color": "#dc2626"},
        )
    figure.update_layout(
        height=SWEEP_HEIGHT,
        xaxis=log_axis(t("lt.rate_axis"), rates),
        yaxis=log_axis("TTFT [ms]", [low, high], [ttft_slo_s / units.MS] if ttft_slo_s is not None else []),
        **titled(t("lt.sweep_title")),
    )
    return figure.build()


def sweep_throughput_figure(sweep: LoadSweep) -> go.Figure:
    rates = [p.rate for p in sweep.points]
    figure = Figure()
    figure.add_scatter(
        x=rates, y=[p.request_throughput_per_s for p in sweep.points], mode="lines+markers", name=t("lt.achieved")
    )
    figure.add_scatter(x=rates, y=rates, mode="lines", name=t("lt.offered"), line={"dash": "dot"})
    figure.update_layout(
        height=SWEEP_HEIGHT,
        xaxis=log_axis(t("lt.rate_axis"), rates),
        yaxis=log_axis(t("lt.throughput_axis"), rates, [p.request_throughput_per_s for p in sweep.points]),
        **titled(t("lt.throughput_title")),
    )
    return figure.build()


def parity_figure(frame) -> go.Figure:
    """Predicted against measured, one colour per metric, on log axes with the diagonal."""
    figure = Figure()
    if len(frame):
        for metric, group in frame.groupby("metric"):
            figure.add_scatter(
                x=group["measured"],
                y=group["predicted"],
                mode="markers",
                name=metric,
                text=group["id"],
                hovertemplate="%{text}<br>measured %{x:,.3g}<br>predicted %{y:,.3g}<extra></extra>",
            )
        low = float(min(frame["measured"].min(), frame["predicted"].min()))
        high = float(max(frame["measured"].max(), frame["predicted"].max()))
        figure.add_scatter(
            x=[low, high], y=[low, high], mode="lines", name=t("val.diagonal"), line={"dash": "dot", "color": "#64748b"}
        )
    both = (frame["measured"], frame["predicted"]) if len(frame) else ()
    figure.update_layout(
        height=460,
        xaxis=log_axis(t("val.measured"), *both),  # the same ticks on both axes: the diagonal reads true
        yaxis=log_axis(t("val.predicted"), *both),
        **titled(t("val.parity_title")),
    )
    return figure.build()


def sensitivity_figure(swings, metric_label: str) -> go.Figure:
    """A tornado: the relative change of the metric when each factor goes down or up."""
    names = [t(f"sens.{s.factor}") for s in swings][::-1]
    figure = Figure()
    figure.add_bar(
        y=names,
        x=[s.low * 100 for s in swings][::-1],
        orientation="h",
        name=t("sens.down"),
        marker_color="#2563eb",
        hovertemplate="%{y}: %{x:+.1f} %<extra></extra>",
    )
    figure.add_bar(
        y=names,
        x=[s.high * 100 for s in swings][::-1],
        orientation="h",
        name=t("sens.up"),
        marker_color="#d97706",
        hovertemplate="%{y}: %{x:+.1f} %<extra></extra>",
    )
    figure.update_layout(
        barmode="overlay",
        height=360,
        xaxis_title=t("sens.axis", metric=metric_label),
        **titled(t("sens.title", metric=metric_label)),
    )
    return figure.build()
