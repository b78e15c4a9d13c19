"""Import every heavy library and every module of ``core`` and ``ui`` once, before a session runs.

Streamlit runs each session's script in its own thread. When a fresh server gets many sessions at
once (a workshop room opening the link together), two threads could import pandas or plotly at the
same moment; Python's import deadlock detection then hands one of them a half-initialized module
("partially initialized module 'pandas' has no attribute 'Series'"), a traceback on that student's
screen. The server imports this module when it starts (:func:`ui.server_start.lifespan`), before it
takes a request, so no page ever imports anything for the first time concurrently
(bench/workshop_load.py reproduces the race without it).
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy  # noqa: F401
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401

import core
import ui

for package in (core, ui):
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in ("preload", "__main__"):
            importlib.import_module(f"{package.__name__}.{module.name}")
