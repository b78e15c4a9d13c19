"""Shared AppTest helpers: open the app (optionally from a URL), read metrics, figures and alerts."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from core.spec.deployment import Workload
from ui.plotly_component import figure_of

APP = str(Path(__file__).resolve().parents[1] / "app.py")
DATA = Path(__file__).resolve().parent / "data"
PAGES = [
    "pages/explorer_page.py",
    "pages/plan_page.py",
    "pages/loadtest_page.py",
    "pages/validation_page.py",
    "pages/learn_page.py",
    "pages/workshop_page.py",
    "pages/compare_page.py",
    "pages/catalog_page.py",
]
DEFAULT = {"model": "llama-3.1-8b", "gpu": "a10", "max_model_len": 4096}  # auto for 2048 + 512
DEFAULT_WORK = Workload(input_len=2048, output_len=512, batch=8)  # fits: the A10 holds 11 such requests


def shown(element) -> str:
    """An alert's text as the reader sees it (Markdown escapes of user-supplied text removed)."""
    return re.sub(r"\\(.)", r"\1", element.value)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def values(field) -> np.ndarray:
    """A trace's x or y: plotly sends numpy arrays as base64 ``bdata`` with a dtype."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


def figures(at: AppTest) -> list[dict]:
    """Every figure the page drew: the charts updated in place (ui/plotly_component) in page order, then
    any st.plotly_chart (the clickable fronts of Plan's search)."""
    live = (figure_of(element.proto) for element in at.get("bidi_component"))
    return [figure for figure in live if figure is not None] + [
        json.loads(chart.proto.spec) for chart in at.get("plotly_chart")
    ]


_warmed = []


def _warm_process() -> None:
    """In AppTest the first session of a process drops its first widget change (Streamlit's legacy
    pages/ mode before st.navigation has run; ui/server_start.py turns it off before a real server's
    first visitor, but AppTest resets it on every run),
    so one throwaway session with a change runs first, whatever order pytest picks."""
    if not _warmed:
        _warmed.append(True)
        warm = AppTest.from_file(APP, default_timeout=30)
        warm.run()
        warm.number_input(key="batch").set_value(2).run()


def open_app(**query) -> AppTest:
    _warm_process()
    at = AppTest.from_file(APP, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    return at


def open_form(app: AppTest, form: str) -> None:
    """Open the sidebar's "import" or "gpu" form: its expander builds the form only while open."""
    app.session_state[f"sidebar_{form}_open"] = True
    app.run()


def submit_gpu_form(app: AppTest) -> None:
    button = next(b for b in app.get("form_submit_button") if b.proto.form_id == "sidebar_gpu_form")
    button.click().run()
