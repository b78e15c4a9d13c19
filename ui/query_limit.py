"""A link whose query Streamlit would drop whole goes back to its page with a word of what was lost.

Streamlit reads at most 524,288 characters and 1,000 values of a query string
(``streamlit.runtime.state.query_params``); it drops a longer one whole, logging one line on the
server ("Ignoring query string with N characters"), and the page opens at its defaults as if the link
had carried nothing. A session cannot tell: Streamlit empties the query before the script runs, and
``st.context.url`` comes without one. So the check sits in front of Streamlit: :class:`QueryLimit`,
the app's middleware (app.py), answers the page request of such a link with a redirect to the same
page carrying only :data:`DROPPED_PARAM` (the query's size), which :mod:`ui.link_state` names in the
link's notice.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from streamlit.runtime.state.query_params import (
    CLIENT_STATE_QUERY_STRING_MAX_FIELDS as MAX_QUERY_FIELDS,
)
from streamlit.runtime.state.query_params import (
    CLIENT_STATE_QUERY_STRING_MAX_LENGTH as MAX_QUERY_CHARS,
)

__all__ = ["DROPPED_PARAM", "MAX_QUERY_CHARS", "MAX_QUERY_FIELDS", "QueryLimit", "dropped_size", "too_long"]

DROPPED_PARAM = "dropped_query"
"""The parameter a redirected page gets: ``<characters>-<values>`` of the query that was dropped."""
DROPPED = re.compile(r"(\d{1,12})-(\d{1,12})")


def too_long(query: str) -> bool:
    """Whether Streamlit drops ``query`` (the part after ``?``) whole: its rule, with its limits."""
    return len(query) > MAX_QUERY_CHARS or query.count("&") + 1 > MAX_QUERY_FIELDS


def dropped_size(raw: str) -> tuple[int, int] | None:
    """(characters, values) from a :data:`DROPPED_PARAM` value; None when it is not one."""
    found = DROPPED.fullmatch(raw)
    return (int(found[1]), int(found[2])) if found else None


class QueryLimit:
    """ASGI middleware: a page request (GET or HEAD) whose query Streamlit would drop is answered
    with 303 to the same path and :data:`DROPPED_PARAM` alone; everything else passes through."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        query = scope.get("query_string", b"").decode("latin-1") if scope["type"] == "http" else ""
        if not (scope.get("method") in ("GET", "HEAD") and too_long(query)):
            await self.app(scope, receive, send)
            return
        # the same page on this host: one leading slash, so "//host" or "/\host" cannot send it elsewhere
        path = "/" + quote(scope.get("path", "/"), safe="/-._~").lstrip("/")
        location = f"{path}?{DROPPED_PARAM}={len(query)}-{query.count('&') + 1}"
        headers = [(b"location", location.encode()), (b"content-length", b"0"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
