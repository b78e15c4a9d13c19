"""The Workshop's class, shared by the student's and the teacher's parts: the class database (opened once per
process: the SQLite file ``EXPLORER_CLASS_DB``, default ``classroom.db`` beside app.py, or PostgreSQL through
``DATABASE_URL``), the per-session rate limits, the class links and the join link's QR code.

No page ever shows the database's path or URL: a database that cannot be opened is said in one line
(``classroom.db_unavailable``), the reason kept to the server's log.
"""

from __future__ import annotations

import io
import logging
import os
import time
import urllib.parse
from pathlib import Path

import qrcode
import qrcode.image.svg
import streamlit as st

from core.classroom.engine import ClassroomError
from core.classroom.limits import LIMITS
from core.classroom.store import ClassStore, open_store
from ui.i18n import t

DB_ENV = "EXPLORER_CLASS_DB"
DEFAULT_DB = Path(__file__).resolve().parents[1] / "classroom.db"
PURGE_EVERY_S = 3600.0
"""Classes past their retention are deleted when the database opens and then at most once an hour."""
CLASS_PARAM, SEAT_PARAM, TEACH_PARAM, PROJECTOR_PARAM = "class", "seat", "teach", "projector"
"""The class links' URL parameters: the join code, the student's seat, the teacher's class, projector mode."""
WORKSHOP_PATH = "workshop"

FAILURES = {
    "failed": "classroom.call_failed",
    "no_class": "classroom.no_class",
    "wrong_key": "classroom.wrong_key",
    "nickname_taken": "classroom.nickname_taken",
    "class_full": "classroom.class_full",
    "invalid": "classroom.value_invalid",
}
"""A failed call's kind (:data:`core.classroom.engine.KINDS`) -> what the page says (the join form says what a
nickname takes for ``invalid``)."""

_log = logging.getLogger(__name__)
_last_purge = [0.0]


@st.cache_resource(show_spinner=False)
def _open(path: str, url: str | None) -> ClassStore:
    return open_store(path=path, url=url)


def store() -> ClassStore | None:
    """The class database, or None after saying on the page that it cannot be opened."""
    try:
        found = _open(os.environ.get(DB_ENV) or str(DEFAULT_DB), os.environ.get("DATABASE_URL") or None)
        if time.monotonic() - _last_purge[0] > PURGE_EVERY_S:
            _last_purge[0] = time.monotonic()
            found.purge_expired()
        return found
    except ClassroomError as err:
        _log.warning("class database: %s", err)
        st.error(t("classroom.db_unavailable"), icon=":material/database_off:")
        return None


def failed(err: ClassroomError, invalid: str = FAILURES["invalid"]) -> None:
    """A class call that failed: one line in the session's language (the store's English reason kept to the log)."""
    _log.info("class call: %s", err)
    st.error(t(invalid if err.kind == "invalid" else FAILURES[err.kind]))


def allowed(kind: str) -> bool:
    """Whether this session may make another ``kind`` call now (:data:`core.classroom.limits.LIMITS`); a refusal
    is said on the page with the wait."""
    slot = f"_class_limit_{kind}"
    ok, bucket, wait = LIMITS[kind].take(st.session_state.get(slot), time.monotonic())
    st.session_state[slot] = bucket
    if not ok:
        st.warning(t("classroom.rate_limited", seconds=int(wait)), icon=":material/hourglass_top:")
    return ok


def class_link(root: str, join_code: str, language: str) -> str:
    """The link students open: the Workshop with the join code (and the class's language)."""
    query = urllib.parse.urlencode({CLASS_PARAM: join_code, "lang": language})
    return f"{root}{WORKSHOP_PATH}?{query}"


def teacher_link(root: str, class_id: str) -> str:
    """The teacher's view of the class (it asks for the teacher key; the key is never in a link)."""
    return f"{root}{WORKSHOP_PATH}?{urllib.parse.urlencode({TEACH_PARAM: class_id})}"


def qr_svg(link: str) -> str:
    """The link as a QR code, an SVG drawn here (no outside service), black on white with a quiet zone."""
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=10, border=4)
    code.add_data(link)
    code.make(fit=True)
    out = io.BytesIO()
    code.make_image(image_factory=qrcode.image.svg.SvgPathFillImage).save(out)
    svg = out.getvalue().decode()
    return svg[svg.index("<svg") :]  # without the XML declaration, which HTML sanitizers drop the drawing for
