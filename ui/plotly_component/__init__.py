"""Plotly charts that stay mounted across reruns: each update is ``Plotly.react`` on the same element.

Streamlit 1.67's ``st.plotly_chart`` hashes a chart's element id from its spec, so its frontend
remounts every chart on every rerun and draws it anew with ``Plotly.newPlot`` (about 80-90 ms of
main-thread work per chart on the dev machine; docs/benchmarks.md, "Browser latency"). This module
draws a figure with a ``st.components.v2`` component instead (rendered in the page, no iframe)
whose element id is its ``key``: Streamlit keeps the element, hands it the new figure, and
``live_chart.js`` calls ``Plotly.react`` on the chart already there.

Assets, all local (offline classrooms): ``live_chart.js`` from this folder and ``plotly.min.js``
from the installed plotly package, each served by Streamlit's component file route
(``/component/<name>/<file>``, registered with ``declare_component``'s ``path``) and loaded by the
browser once per page. The component's inline JavaScript is only a loader, so each update carries
the figure and a few short strings.

Point selection is not implemented here: charts with ``on_select`` stay ``st.plotly_chart``
(:func:`ui.figure.chart` decides).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import plotly
import plotly.io as pio
import streamlit as st
import streamlit.components.v1 as components_v1
from streamlit import runtime

COMPONENT = "llm_tradeoff_live_plotly"
ASSETS_DIR = Path(__file__).resolve().parent
PLOTLY_DIR = Path(plotly.__file__).resolve().parent / "package_data"
MODULE_FILE = "live_chart.js"
PLOTLY_FILE = "plotly.min.js"

# The component's own module: import the chart module (served from ASSETS_DIR) and hand it the call.
LOADER = """
export default async function (component) {
  const chart = await import(new URL(component.data.module, window.location.origin).href);
  return chart.default(component);
}
"""

_mount = st.components.v2.component(COMPONENT, js=LOADER, isolate_styles=False)


def _served(name: str, folder: Path) -> str:
    """Serve ``folder`` at Streamlit's component route as ``<this module>.<name>``; return the route's
    path. Registered once per runtime: later calls only look the folder up."""
    served = f"{__name__}.{name}"
    if runtime.exists() and runtime.get_instance().component_registry.get_component_path(served) != str(folder):
        declared = components_v1.declare_component(name, path=folder).name
        if declared != served:
            raise RuntimeError(f"Streamlit named the component {declared!r}, not {served!r}")
    base = st.get_option("server.baseUrlPath").strip("/")
    return f"/{base}/component/{served}/" if base else f"/component/{served}/"


def payload(figure: Any, failed: str) -> dict[str, str]:
    """What the browser gets for ``figure``: its plotly JSON (as st.plotly_chart sends it), where the two
    scripts are, and the one-line message shown if plotly.js cannot be loaded."""
    return {
        "spec": pio.to_json(figure, validate=False),
        "module": _served("live_chart", ASSETS_DIR) + MODULE_FILE,
        "plotly": _served("plotlyjs", PLOTLY_DIR) + PLOTLY_FILE,
        "failed": failed,
    }


def live_chart(container: Any, figure: Any, *, key: str, failed: str) -> None:
    """Draw ``figure`` in ``container`` at the container's width; with the same ``key`` on the next rerun
    the chart is updated in place."""
    with contextlib.nullcontext() if container is st else container:  # st itself is no context manager
        _mount(key=key, data=payload(figure, failed), width="stretch", height="content")


def figure_of(proto: Any) -> dict | None:
    """The figure a ``BidiComponent`` element proto of this component carries (None for another
    component): how tests read the figures a page drew."""
    if proto.component_name != COMPONENT:
        return None
    return json.loads(json.loads(proto.json)["spec"])
