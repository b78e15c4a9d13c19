"""Plotly figures built as plain data, then wrapped without plotly's per-property validation.

Building a ``plotly.graph_objects.Figure`` call by call (``add_scatter``, ``update_layout`` with
magic underscores, ``add_vline``) validates every property as it goes; on the Explorer that was
most of a rerun's server time (about 5 ms per figure, 30-40 ms a rerun). This builder collects the
same calls as dicts, expands magic underscores (``xaxis_title`` -> ``xaxis.title.text``) and wraps
the result once with validation off (under 0.5 ms). ``tests/test_app.py`` validates every figure
each page draws with plotly's validators, so a wrong property still fails a test.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go


def _expand(props: dict[str, Any]) -> dict[str, Any]:
    """Magic underscores to nested dicts; a plain-string title becomes {"text": title}."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if isinstance(value, dict):
            value = _expand(value)
        *parents, leaf = key.split("_")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        if leaf == "title" and isinstance(value, str):
            value = {"text": value}
        if isinstance(value, dict) and isinstance(node.get(leaf), dict):
            _merge(node[leaf], value)
        else:
            node[leaf] = value
    return out


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


class Figure:
    """The subset of ``go.Figure``'s building calls the pages use, recorded as data."""

    def __init__(self) -> None:
        self.data: list[dict[str, Any]] = []
        self.layout: dict[str, Any] = {}

    def _trace(self, kind: str, props: dict[str, Any]) -> None:
        self.data.append({"type": kind, **_expand(props)})

    def add_bar(self, **props: Any) -> None:
        self._trace("bar", props)

    def add_scatter(self, **props: Any) -> None:
        self._trace("scatter", props)

    def add_histogram(self, **props: Any) -> None:
        self._trace("histogram", props)

    def add_scatterpolar(self, **props: Any) -> None:
        self._trace("scatterpolar", props)

    def update_layout(self, **props: Any) -> None:
        _merge(self.layout, _expand(props))

    def add_shape(self, shape: dict[str, Any], annotation: dict[str, Any] | None = None) -> None:
        self.layout.setdefault("shapes", []).append(shape)
        if annotation is not None:
            self.layout.setdefault("annotations", []).append(annotation)

    def build(self) -> go.Figure:
        return go.Figure({"data": self.data, "layout": self.layout}, _validate=False)
