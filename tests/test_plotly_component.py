"""The Python side of the charts updated in place (ui/plotly_component, ui.figure.chart).

What keeps a chart mounted in the browser is an element id that does not change when the figure does
(st.plotly_chart's id is hashed from the spec): these tests check that, what the browser is sent, where
its two scripts are served from, and that tests read the figures back. tests/test_browser_live.py
checks the browser's side.
"""

from __future__ import annotations

import json

import plotly.io as pio
import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from core.messages import message
from ui.figure import Figure
from ui.plotly_component import ASSETS_DIR, COMPONENT, MODULE_FILE, PLOTLY_DIR, PLOTLY_FILE, figure_of, payload


def _bars(height: float) -> Figure:
    figure = Figure()
    figure.add_bar(x=["weights", "kv"], y=[15.0, height], name="GiB")
    figure.update_layout(title="Memory", xaxis_title="part", height=300)
    return figure.build()


def _script():
    """Two charts: one drawn in place, one clickable; ``h`` moves the first one's second bar."""
    import streamlit as st

    from tests.test_plotly_component import _bars
    from ui.figure import chart

    left, right = st.columns(2)
    chart(left, _bars(st.session_state.get("h", 4.0)), key="memory")
    chart(right, _bars(1.0), key="front", on_select=lambda: st.session_state.update(clicked=True))


def _app() -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.run()
    assert not at.exception
    return at


def test_the_element_keeps_its_id_when_the_figure_changes():
    at = _app()
    (before,) = at.get("bidi_component")
    at.session_state["h"] = 6.5
    at.run()
    (after,) = at.get("bidi_component")
    assert after.proto.id == before.proto.id  # the browser keeps the element: Plotly.react, no remount
    assert after.proto.id.endswith("-memory")
    assert figure_of(before.proto)["data"][0]["y"] == [15.0, 4.0]
    assert figure_of(after.proto)["data"][0]["y"] == [15.0, 6.5]


def test_the_browser_gets_the_spec_st_plotly_chart_would_send_and_only_a_loader():
    at = _app()
    (element,) = at.get("bidi_component")
    proto = element.proto
    assert proto.component_name == COMPONENT
    assert not proto.isolate_styles  # in the page's DOM, where plotly.js's own style rules apply
    data = json.loads(proto.json)
    assert data["spec"] == pio.to_json(_bars(4.0), validate=False)  # what st.plotly_chart puts in its proto
    assert "import(" in proto.js_content and len(proto.js_content) < 300  # the chart module is served, not sent
    assert data["failed"] == message("live.plotly_failed", "en")


def test_a_clickable_chart_stays_st_plotly_chart_with_its_selection():
    at = _app()
    (front,) = at.get("plotly_chart")
    assert front.proto.id.endswith("-front")
    assert list(front.proto.selection_mode) == [0]  # points
    assert json.loads(front.proto.spec)["data"][0]["y"] == [15.0, 1.0]


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")  # the installed test client
def test_both_scripts_are_served_from_local_files(monkeypatch):
    """payload() registers the two folders as a script run would, and Streamlit's own /component/ route
    (its Starlette handler, here on a real registry) returns the files behind the two URLs it sends."""
    from types import SimpleNamespace

    from starlette.applications import Starlette
    from starlette.testclient import TestClient
    from streamlit import runtime
    from streamlit.components.lib.local_component_registry import LocalComponentRegistry
    from streamlit.components.v1 import component_registry as v1
    from streamlit.web.server.starlette.starlette_routes import create_component_routes

    registry = LocalComponentRegistry()
    running = SimpleNamespace(component_registry=registry)  # a runtime, inside a script run
    monkeypatch.setattr(runtime, "exists", lambda: True)
    monkeypatch.setattr(runtime, "get_instance", lambda: running)
    monkeypatch.setattr(v1, "get_script_run_ctx", lambda: object())
    monkeypatch.setattr(v1, "get_instance", lambda: running)
    sent = payload(_bars(1.0), "x")
    client = TestClient(Starlette(routes=create_component_routes(registry, None)))
    for url, local in ((sent["module"], ASSETS_DIR / MODULE_FILE), (sent["plotly"], PLOTLY_DIR / PLOTLY_FILE)):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.content == local.read_bytes()
        assert "javascript" in response.headers["content-type"]
    assert payload(_bars(2.0), "x")["plotly"] == sent["plotly"]  # registered once, the same path after
    assert (PLOTLY_DIR / PLOTLY_FILE).read_text()[:200].count("plotly.js v") == 1


def test_the_urls_follow_the_servers_base_path():
    original = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", "/tools/llm/")
    try:
        sent = payload(_bars(1.0), "x")
    finally:
        config.set_option("server.baseUrlPath", original)
    assert sent["module"] == f"/tools/llm/component/ui.plotly_component.live_chart/{MODULE_FILE}"
    assert sent["plotly"] == f"/tools/llm/component/ui.plotly_component.plotlyjs/{PLOTLY_FILE}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_load_failure_is_one_line_in_the_sessions_language(lang):
    at = AppTest.from_function(_script, default_timeout=30)
    at.session_state["lang"] = lang
    at.run()
    failed = json.loads(at.get("bidi_component")[0].proto.json)["failed"]
    assert failed == message("live.plotly_failed", lang) and "\n" not in failed


def test_figure_of_ignores_other_components():
    at = _app()
    proto = type(at.get("bidi_component")[0].proto)()
    proto.component_name = "someone_else"
    proto.json = json.dumps({"spec": "{}"})
    assert figure_of(proto) is None
