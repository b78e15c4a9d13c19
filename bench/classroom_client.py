"""One browser tab on the Workshop page, speaking Streamlit's websocket protocol (bench/classroom_load.py).

As bench/workshop_load.py's ``Student``, but for forms and the URL: a tab keeps its query string (the page
rewrites it, ``page_info_changed``) and sends it with every rerun, as a browser sends its address; it learns
the widget ids of the keyed widgets it is shown (an id ends in ``-<key>``); a form's values and its submit
trigger go in one rerun (a trigger only there, as a browser clears it after sending). Behind HAProxy it
first loads the page over HTTP and keeps the cookies (the sticky one included) for the websocket handshake.
A dropped connection raises :class:`Dropped`; the caller reconnects (:meth:`Tab.connect` again).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import pyarrow.ipc
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

RERUN_TIMEOUT_S = 30.0
HTTP_TIMEOUT_S = 10.0
PAGE_PATH = "workshop"  # the Workshop page's url_path (app.py)
WIDGETS = ("text_input", "button", "radio", "checkbox", "selectbox", "number_input")
SUCCESS, ERROR = 4, 1  # Alert.Format


class Dropped(Exception):
    """The websocket closed, or a connection could not be made: the tab must reconnect."""


@dataclass
class Shown:
    """What one rerun drew: alerts as (format, body), captions and markdown, metrics, dataframes (column ->
    list), exceptions; ``ms`` from the request sent to the script finished."""

    alerts: list[tuple[int, str]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    metrics: dict[str, str] = field(default_factory=dict)
    tables: list[dict[str, list]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    ms: float = 0.0


class Tab:
    """A browser tab: its address (``query``), cookies, websocket, the widget states it has sent."""

    def __init__(self, ws_url: str, http_base: str | None, query: str) -> None:
        self.ws_url, self.http_base, self.query = ws_url, http_base, query
        self.cookies: dict[str, str] = {}
        self.ws = None
        self.page_hash = ""
        self.ids: dict[str, str] = {}  # widget key -> widget id (from the last runs)
        self.options: dict[str, list[str]] = {}  # a radio's key -> its options as shown (its state is one of them)
        self.states: dict[str, tuple[str, object]] = {}  # widget id -> (kind, value), sent with every rerun
        self.fragments: dict[str, float] = {}  # a fragment with run_every: its id -> when it is due [monotonic s]
        self.intervals: dict[str, float] = {}  # ... and its interval [s]
        self.requests = 0  # HTTP requests and websocket handshakes

    # -- connection ----------------------------------------------------------------------------------------------
    def _http_get(self, path: str) -> int:
        request = urllib.request.Request(self.http_base + path, headers={"Cookie": self._cookie_header()})
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
                status, headers = response.status, response.headers
                response.read()
        except urllib.error.HTTPError as err:
            status, headers = err.code, err.headers
        for line in headers.get_all("Set-Cookie") or []:
            name, _, value = line.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()
        return status

    def _cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def connect(self) -> Shown:
        """Open the page as a browser does (HTTP page load behind a balancer, then the websocket) and run it
        with the tab's address; widget states start empty, as in a new browser session."""
        await self.close()
        self.states, self.ids, self.options, self.page_hash = {}, {}, {}, ""
        self.fragments, self.intervals = {}, {}
        try:
            if self.http_base is not None:
                for path in (f"/{PAGE_PATH}?{self.query}", "/_stcore/health"):
                    status = await asyncio.to_thread(self._http_get, path)
                    if status != 200:
                        raise Dropped(f"GET {path.split('?')[0]} answered {status}")
            headers = {"Cookie": self._cookie_header()} if self.cookies else None
            self.requests += 1
            self.ws = await websockets.connect(
                self.ws_url, subprotocols=["streamlit"], max_size=None, additional_headers=headers, open_timeout=10
            )
        except (OSError, TimeoutError, websockets.WebSocketException) as err:
            raise Dropped(f"connect: {type(err).__name__}: {err}") from None
        return await self.rerun(page_name=PAGE_PATH)

    async def close(self) -> None:
        if self.ws is not None:
            ws, self.ws = self.ws, None
            with contextlib.suppress(OSError, TimeoutError, websockets.WebSocketException):
                await asyncio.wait_for(ws.close(), 5)

    async def idle(self, seconds: float, until: asyncio.Event | None = None) -> list[Shown]:
        """Wait ``seconds`` (or until ``until`` is set) as an open tab does: the page's fragments with
        ``run_every`` rerun when due (as the browser's timers send them). Their outputs, in order."""
        shown, end = [], time.monotonic() + seconds
        for _ in range(10_000):
            now = time.monotonic()
            due = min(self.fragments.items(), key=lambda kv: kv[1], default=None)
            wake = end if due is None else min(end, due[1])
            if wake > now:
                if until is None:
                    await asyncio.sleep(wake - now)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(until.wait(), wake - now)
                    if until.is_set():
                        break
            if due is None or due[1] > time.monotonic():
                if time.monotonic() >= end:
                    break
                continue
            self.fragments[due[0]] = time.monotonic() + self.intervals[due[0]]
            shown.append(await self.rerun(fragment_id=due[0], auto=True))
        return shown

    # -- reruns --------------------------------------------------------------------------------------------------
    def set(self, key: str, kind: str, value: object) -> None:
        """Keep a widget's value (kind: string, int, bool) for every rerun from now on."""
        self.states[self.ids[key]] = (kind, value)

    def choose(self, key: str, index: int) -> None:
        """Pick a radio's option by position: Streamlit 1.67 keeps a radio's state as the option's text."""
        self.set(key, "string", self.options[key][index])

    async def rerun(
        self, triggers: tuple[str, ...] = (), page_name: str = "", fragment_id: str = "", auto: bool = False
    ) -> Shown:
        """Send a rerun with the kept widget states and the one-shot ``triggers`` (button keys); read until the
        script finishes. A closed websocket raises :class:`Dropped`, a missing reply TimeoutError."""
        if self.ws is None:
            raise Dropped("not connected")
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string, rerun.page_script_hash, rerun.page_name = self.query, self.page_hash, page_name
        rerun.fragment_id, rerun.is_auto_rerun = fragment_id, auto
        for widget_id, (kind, value) in self.states.items():
            _add_state(rerun, widget_id, kind, value)
        for key in triggers:
            _add_state(rerun, self.ids[key], "trigger", True)
        shown = Shown()
        start = time.perf_counter()
        seen = []
        self._registered: dict[str, float] = {}
        try:
            await self.ws.send(msg.SerializeToString())
            while True:
                forward = ForwardMsg()
                forward.ParseFromString(await asyncio.wait_for(self.ws.recv(), RERUN_TIMEOUT_S))
                seen.append(forward.WhichOneof("type"))
                if self._read(forward, shown):
                    break
        except TimeoutError:
            raise TimeoutError(
                f"no reply in {RERUN_TIMEOUT_S:.0f} s to {triggers or fragment_id or 'a rerun'} {seen[-8:]}"
            ) from None
        except (OSError, websockets.ConnectionClosed) as err:
            self.ws = None
            raise Dropped(f"{type(err).__name__}: {err}") from None
        shown.ms = (time.perf_counter() - start) * 1e3
        return shown

    def _read(self, forward: ForwardMsg, shown: Shown) -> bool:
        """Take one message in; True once the script finished (not when it only stopped to rerun itself)."""
        kind = forward.WhichOneof("type")
        if kind == "navigation":
            self.page_hash = forward.navigation.page_script_hash or self.page_hash
        elif kind == "page_info_changed":
            self.query = forward.page_info_changed.query_string
        elif kind == "auto_rerun":  # a browser starts a timer (unless it has one): a fragment rerun every interval
            self._registered[forward.auto_rerun.fragment_id] = forward.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in forward.stop_auto_rerun.fragment_ids:
                self.fragments.pop(fragment, None)
        elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
            self._element(forward.delta.new_element, shown)
        elif kind == "script_finished":
            if forward.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self._registered = {}
                return False  # the app asked for a rerun (st.rerun): its output follows, as a browser sees
            if forward.script_finished != ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                self._timers()
            if forward.script_finished not in (
                ForwardMsg.FINISHED_SUCCESSFULLY,
                ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ):
                shown.exceptions.append(f"script finished with status {forward.script_finished}")
            return True
        return False

    def _timers(self) -> None:
        """After a full run: a timer per fragment the run registered (one already running keeps its time). A
        browser also keeps the timers of fragments a full run no longer draws, whose reruns the server drops
        without a reply ("does not exist anymore"); the tab stops those instead of waiting for a reply."""
        now = time.monotonic()
        self.fragments = {f: self.fragments.get(f, now + every) for f, every in self._registered.items()}
        self.intervals = dict(self._registered)

    def _element(self, element, shown: Shown) -> None:
        kind = element.WhichOneof("type")
        if kind in WIDGETS:
            widget_id = getattr(element, kind).id
            self.ids[widget_id.rsplit("-", 1)[-1]] = widget_id
            if kind == "radio":
                self.options[widget_id.rsplit("-", 1)[-1]] = list(element.radio.options)
        elif kind == "alert":
            shown.alerts.append((element.alert.format, element.alert.body))
        elif kind == "markdown":
            shown.texts.append(element.markdown.body)
        elif kind == "metric":
            shown.metrics[element.metric.label] = element.metric.body
        elif kind == "dataframe":
            data = element.dataframe.arrow_data.data
            if data:
                shown.tables.append(pyarrow.ipc.open_stream(io.BytesIO(data)).read_all().to_pydict())
            else:
                shown.exceptions.append("a dataframe came without its data (lazy)")
        elif kind == "exception":
            shown.exceptions.append(f"{element.exception.type}: {element.exception.message}")


def _add_state(rerun, widget_id: str, kind: str, value: object) -> None:
    state = rerun.widget_states.widgets.add()
    state.id = widget_id
    if kind == "string":
        state.string_value = value
    elif kind == "int":
        state.int_value = value
    elif kind == "bool":
        state.bool_value = value
    elif kind == "trigger":
        state.trigger_value = value
    else:
        raise ValueError(f"widget state kind must be string, int, bool or trigger, not {kind!r}")
