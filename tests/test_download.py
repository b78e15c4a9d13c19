"""ui.download: a built download stays fetchable however many reruns follow, the kept files are
bounded, and every download button of the app goes through it.

Streamlit's media manager is driven here as the server drives it: a session registers the button's
callable during its run, the click builds the file on a thread with no script run, and every rerun
of any session clears that session's references and sweeps orphans.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.runtime import media_file_manager
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from ui import download

ROOT = Path(__file__).resolve().parents[1]
HANDOUT = "# Workshop\n\n练习 1: KV per token\n"


@pytest.fixture
def manager(monkeypatch) -> MediaFileManager:
    """A media manager with two sessions: "student" (the one that clicks) and "other"."""
    monkeypatch.setattr(media_file_manager, "_get_session_id", _session)
    return MediaFileManager(MemoryMediaFileStorage("/media"))


_current: list[str] = []


def _session() -> str:
    """The session a manager call comes from: the script run's, or Streamlit's no-session id."""
    return _current[-1] if _current else "dontcare"


def run(manager: MediaFileManager, session: str, body=lambda: None) -> None:
    """One script run of ``session`` as Streamlit's runner does it: references cleared, the page
    drawn (``body``), orphans swept."""
    _current.append(session)
    try:
        manager.clear_session_refs(session)
        body()
    finally:
        _current.pop()
    manager.remove_orphaned_files()


def click(manager: MediaFileManager, data) -> str:
    """The student's page registers a download button with ``data``; the click builds it (on a
    thread without a script run); the URL the browser is sent to."""
    ids = []
    run(manager, "student", lambda: ids.append(manager.add_deferred(data, "text/markdown", "1.2.3", "h.md")))
    return manager.execute_deferred(ids[0])


def served(manager: MediaFileManager, url: str) -> bytes | None:
    file = manager.read_file(url.rsplit("/", 1)[-1])
    return None if file is None else file.content


def test_streamlits_own_download_is_gone_after_two_reruns_of_any_session(manager):
    # the failure as it was (the control that shows this file drives Streamlit as the server does;
    # should a later Streamlit keep the file itself, this fails and ui.download can be retired)
    url = click(manager, lambda: HANDOUT)
    assert served(manager, url) == HANDOUT.encode()
    run(manager, "other")
    run(manager, "other")
    assert served(manager, url) is None


def test_a_download_built_through_ui_download_is_served_after_many_reruns(manager):
    url = click(manager, lambda: download.built(lambda: HANDOUT, "text/markdown", "h.md", manager))
    for session in ("other", "student", "other", "student", "other"):  # sliders moving in both sessions
        run(manager, session)
    assert served(manager, url) == HANDOUT.encode()  # same bytes, same id: the URL the click returned


def test_the_kept_files_are_bounded_oldest_first(manager):
    urls = [download.keep(f"file {n}".encode(), "text/csv", "a.csv", manager) for n in range(download.KEPT_FILES)]
    run(manager, "other")
    run(manager, "other")
    assert all(served(manager, url) == f"file {n}".encode() for n, url in enumerate(urls))
    urls.append(download.keep(b"one more", "text/csv", "a.csv", manager))  # takes the oldest one's slot
    run(manager, "other")
    run(manager, "other")
    assert served(manager, urls[0]) is None
    assert all(served(manager, url) is not None for url in urls[1:])


def test_built_returns_what_build_made_and_keeps_it_under_the_url_streamlit_gives(manager):
    url = click(manager, lambda: download.built(lambda: HANDOUT, "text/markdown", "h.md", manager))
    assert download.keep(HANDOUT.encode(), "text/markdown", "h.md", manager) == url
    assert download.built(lambda: HANDOUT, "text/markdown", "h.md", manager) == HANDOUT
    assert download.built(lambda: b"\x00\x01", "application/octet-stream", "b.bin", manager) == b"\x00\x01"


def test_every_download_button_of_the_app_goes_through_ui_download():
    sources = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]
    direct = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sources
        if path.name != "download.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.download_button\(", line)
    ]
    assert direct == []
    users = {path.name for path in sources if "download_button(" in path.read_text() and path.name != "download.py"}
    assert users >= {"explorer_page.py", "plan_page.py", "validation_page.py", "compare_state.py", "workshop.py"}
