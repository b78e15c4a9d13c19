"""Every download button of the app: the file is built when its button is clicked and stays
fetchable after the page reruns, in this session or any other.

Streamlit 1.67 builds a download whose data is a callable when the button is clicked
(``MediaFileManager.execute_deferred``) and files the result under no session. Its orphan sweep,
run after every rerun of any session in the process, marks such a file on its first pass and
deletes it on the second, so a browser whose GET came after two other reruns got 404 (30 simulated
students on 3 processes behind HAProxy, bench/workshop_load.py: 13 of 30 first clicks before, 0
after; docs/benchmarks.md has 6-19 from earlier runs). Here the built bytes are also
added to the media manager from the thread that builds them, outside any script run, which the
manager files under its no-session id that no session's rerun clears. They take one of
:data:`KEPT_FILES` slots in turn: the same bytes, MIME type and file name make the same file id,
so the URL the click returns is served until that many later downloads of this process have
reused its slot. The clicks do not rerun the page (``on_click="ignore"``).
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

from streamlit import runtime
from streamlit.runtime.media_file_manager import MediaFileManager

KEPT_FILES = 64
"""Downloads a process keeps fetchable after they are built [files]; at the size of the largest
report here (about 0.1 MB) that is a few MB of memory."""
SLOT = "ui.download.kept.{}"
"""The media manager's coordinates of a kept file: one per slot, never an element's path."""
_slots = itertools.count()
_building: set[int] = set()
"""Threads adding a built file: Streamlit warns there that no script run is active, on purpose."""

Data = str | bytes


class _NoRunContextWarning(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warning in a thread that is keeping a file (the
    file is meant to belong to no session); every other thread's warnings pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread not in _building


logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_NoRunContextWarning())


def keep(data: bytes, mime: str, file_name: str, manager: MediaFileManager | None = None) -> str | None:
    """Add a built download to ``manager`` (the running app's) in the next slot; its URL, or None
    when no app is running (bare scripts and tests without a runtime)."""
    if manager is None:
        if not runtime.exists():
            return None
        manager = runtime.get_instance().media_file_mgr
    slot = SLOT.format(next(_slots) % KEPT_FILES)
    _building.add(threading.get_ident())
    try:
        return manager.add(data, mime, slot, file_name=file_name, is_for_static_download=True)
    finally:
        _building.discard(threading.get_ident())


def built(build: Callable[[], Data], mime: str, file_name: str, manager: MediaFileManager | None = None) -> Data:
    """What a button's click returns to Streamlit: ``build()``'s file, kept (as Streamlit encodes it)."""
    data = build()
    keep(data.encode() if isinstance(data, str) else data, mime, file_name, manager)
    return data


def download_button(
    container: Any, label: str, build: Callable[[], Data], *, file_name: str, mime: str, key: str, **kwargs: Any
) -> None:
    """A download button in ``container`` (``st`` or a column) whose file ``build()`` makes when clicked."""
    container.download_button(
        label,
        functools.partial(built, build, mime, file_name),
        file_name=file_name,
        mime=mime,
        key=key,
        on_click="ignore",
        **kwargs,
    )
