"""The look every chart shares: colours, reference lines, titles wrapped under the mode bar, the
legend's place and log axes with round ticks (ui/charts.py and the other chart modules use these)."""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ui.figure import Figure
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
    "over": "#991b1b",
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


MODEBAR_PX = 36
"""The top row of a chart, where plotly's mode bar sits (always shown on a touch screen): titles
start below it, so the bar never covers them."""
TITLE_LINE_PX = 24
TITLE_COLUMNS = 40
"""Display columns of a title line, a CJK character counting two: a chart on a 390 px phone, or in
half a 1440 px page, is about 330 px wide."""
MODEBAR_REMOVE = [
    "zoom",
    "pan",
    "select",
    "lasso",
    "zoomin",
    "zoomout",
    "autoscale",
    "resetscale",
    "togglespikelines",
    "hoverclosest",
    "hovercompare",
]
"""The mode bar keeps "download as PNG"; zoom and pan stay on the mouse (drag, double-click to reset)."""
LEGEND = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "traceorder": "normal"}
"""Below the plot, far enough for the x axis's ticks and title (a legend at -0.25 ran into them)."""
LAYOUT = {
    "margin": {"t": MODEBAR_PX + TITLE_LINE_PX + 16, "b": 50, "l": 60, "r": 20},
    "legend": LEGEND,
    "title_y": 1,
    "title_yref": "container",
    "title_yanchor": "top",
    "title_pad": {"t": MODEBAR_PX},
    "modebar": {"remove": MODEBAR_REMOVE},
}
"""Every chart's frame: the title below the mode bar's row, the legend below the plot."""


def _columns(char: str) -> int:
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def wrap_title(text: str, columns: int = TITLE_COLUMNS) -> str:
    """``text`` broken into lines of at most ``columns`` display columns (plotly never wraps a title):
    between words, or between any two CJK characters."""
    tokens = re.findall(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef][，。、：；）]*|[^\s\u2e80-\u9fff]+|\s+", text)
    lines, line = [], ""
    for token in tokens:
        width = sum(_columns(c) for c in line + token.rstrip())
        if line.strip() and width > columns:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    lines.append(line.rstrip())
    return "<br>".join(lines)


def titled(title: str, **margin: int) -> dict:
    """:data:`LAYOUT` with ``title`` wrapped (:func:`wrap_title`) and the top margin its lines need;
    ``margin`` overrides the other sides (b=, l=, r=)."""
    text = wrap_title(title)
    top = MODEBAR_PX + (text.count("<br>") + 1) * TITLE_LINE_PX + 16
    return LAYOUT | {"title": text, "margin": LAYOUT["margin"] | {"t": top} | margin}


MAX_DECADES_AT_125 = 4
"""A log axis spanning more decades than this is ticked at powers of ten only (1-2-5 would crowd it)."""
MAX_DECADES_AT_10 = 5
"""Beyond this many decades, every other power of ten: "1,000" to "1,000,000" ran together on a phone."""


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
    decades = np.log10(high / low)
    if decades > MAX_DECADES_AT_125:
        every = 2 if decades > MAX_DECADES_AT_10 else 1
        kept = [i for i, v in enumerate(ticks["tickvals"]) if round(np.log10(v), 9) % every == 0]
        ticks = {key: [ticks[key][i] for i in kept] for key in ticks}
    return axis | ticks if len(ticks["tickvals"]) >= 2 else axis
