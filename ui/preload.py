"""Import every heavy library and every module of ``core`` and ``ui`` once, before a page runs.

Streamlit runs each session's script in its own thread. When a fresh server gets many sessions at
once (a workshop room opening the link together), two threads can import pandas or plotly at the
same moment; Python's import deadlock detection then hands one of them a half-initialized module
("partially initialized module 'pandas' has no attribute 'Series'"), a traceback on that student's
screen. ``app.py`` imports this module first: the first session imports everything while every
other session waits on this module's import lock, so no page ever imports anything for the first
time concurrently (bench/workshop_load.py reproduces the race without it).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

import numpy  # noqa: F401
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401

import core
import ui

_LOCK = threading.Lock()

for package in (core, ui):
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in ("preload", "__main__"):
            importlib.import_module(f"{package.__name__}.{module.name}")


_first_run_done = False


def first_run_in_process() -> bool:
    """True for exactly one script run in this server process (the first), False after."""
    global _first_run_done
    with _LOCK:
        first, _first_run_done = not _first_run_done, True
        return first
