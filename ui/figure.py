"""Plotly figures built as plain data, and :func:`chart`, the one way the pages draw them.

Building a ``plotly.graph_objects.Figure`` call by call (``add_scatter``, ``update_layout`` with
magic underscores, ``add_vline``) validates every property as it goes; on the Explorer that was
most of a rerun's server time (about 5 ms per figure, 30-40 ms a rerun). This builder collects the
same calls as dicts and expands magic underscores (``xaxis_title`` -> ``xaxis.title.text``).

``st.plotly_chart`` asks a figure only for ``to_dict()``. A real ``go.Figure``, even built with
validation off, still sets every property through plotly's object model, deep-copies the whole
figure and its template and walks it for numpy arrays: about 4 ms a figure, a fifth of an Explorer
rerun (bench/browser_step.py and docs/benchmarks.md, "Browser latency"). ``Built`` answers
``to_dict()`` from the recorded data: numpy arrays packed as plotly.js typed arrays (as plotly's
own ``to_dict`` does) and the default template's dict made once per template. The tests validate
every figure each page draws with plotly's validators (``tests/test_app_levers.py``), so a wrong
property still fails a test.

:func:`chart` draws a figure so that the next rerun updates it in place (``ui/plotly_component``:
``Plotly.react`` on the mounted chart instead of Streamlit's remount and ``Plotly.newPlot``); a chart
whose points can be clicked stays ``st.plotly_chart`` with its selection callback.
"""

from __future__ import annotations

import functools
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import convert_to_base64

from ui.i18n import t
from ui.plotly_component import live_chart


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
        data = [dict(trace) for trace in self.data]
        convert_to_base64(data)  # numpy arrays -> {"dtype", "bdata"}, in place
        return Built({"data": data, "layout": {**self.layout, "template": _template(pio.templates.default)}})


@functools.cache
def _template(name: str) -> dict[str, Any]:
    """A plotly template as a dict (Streamlit's own when it is the default), made once: read only."""
    return pio.templates[name].to_plotly_json()


class Built(go.Figure):
    """A built figure: a ``go.Figure`` for ``st.plotly_chart`` and plotly's validators, whose
    ``to_dict()`` is the recorded data. Only ``to_dict`` and ``to_plotly_json`` are supported."""

    def __init__(self, spec: dict[str, Any]) -> None:  # plotly's __init__ is what this avoids
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        return {"data": self._spec["data"], "layout": dict(self._spec["layout"])}

    to_plotly_json = to_dict

    def __repr__(self) -> str:
        return f"Built({len(self._spec['data'])} traces)"


def chart(
    container: Any, figure: go.Figure, *, key: str, on_select: Any = None, selection_mode: str = "points"
) -> None:
    """Draw ``figure`` in ``container`` (``st`` or a column) at the container's width, updated in place
    on later reruns with the same ``key``. With ``on_select`` (a callback) the chart is
    ``st.plotly_chart`` and a click on a point runs the callback with the selection in
    ``st.session_state[key]``, as Streamlit defines it."""
    if on_select is not None:
        container.plotly_chart(figure, width="stretch", key=key, on_select=on_select, selection_mode=selection_mode)
    else:
        live_chart(container, figure, key=key, failed=t("live.plotly_failed"))
