"""What the server does once when it starts, before its first visitor.

``streamlit run app.py`` finds the ``st.App`` that app.py defines when it is imported rather than run
(see there) and serves it; Streamlit starts its runtime and then enters :func:`lifespan`, before the
server takes a request. Two things happen there, so the first visitor's session is like every later one:

- The process is told that it uses ``st.navigation``. Streamlit decides per process whether an app is a
  legacy multipage app: its first session sees a folder named ``pages/`` beside app.py and runs that
  first script run in the legacy mode (``streamlit.runtime.scriptrunner.script_runner._mpa_v1``) until
  ``st.navigation`` switches the flag off. That first run knows only pages named after the files
  (``plan_page``), so a first visitor who opened ``/plan`` got the modal "Page not found" (in English
  whatever the language), and the session's widgets changed ids after it, dropping their first change.
  ``st.navigation`` switches the flag off with the same assignment; doing it here makes every run of
  every session take the navigation path.
- Every module of the app, pandas and plotly are imported (:mod:`ui.preload`), so no session imports one
  for the first time while another does.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamlit.runtime.pages_manager import PagesManager


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """The server's start: navigation known to the process, every module imported."""
    PagesManager.uses_pages_directory = False  # what st.navigation sets, before any session runs
    importlib.import_module("ui.preload")
    yield
