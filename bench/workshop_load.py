"""Workshop load test: N simulated students against ``streamlit run`` servers on loopback.

Real browsers cannot generate this load on a 2-core machine, so each student speaks Streamlit's
own websocket protocol: it connects to ``/_stcore/stream`` with the ``streamlit`` subprotocol,
sends ``BackMsg.rerun_script`` requests carrying its widget states (a browser sends the same), and
reads ``ForwardMsg``s until ``script_finished``. Every student works on the Explorer (moving the
batch slider) for half of the run and on the Plan page (changing the number of users) for the
other half, one change about every second (0.7-1.3 s apart), for a bounded time.

Recorded: reruns per second, update latency (request sent -> script finished) P50/P95/max,
errors (tracebacks, failed or dropped reruns, connection errors), wrong values (the Explorer's
throughput metric and the Plan page's verdict compared with core's), and the server's CPU and
memory (from /proc). The server runs with the repository's ``.streamlit/config.toml``.

Behind a load balancer (``--haproxy`` starts deploy/serve.py; ``--url`` drives one already running),
each student first does what a browser does over HTTP: it loads the page and pings
``/_stcore/health``, keeps the cookies it is given (HAProxy's sticky cookie, Streamlit's XSRF
cookie) and sends them back on every request, the websocket handshake included. After its first
page it uploads a small file to ``/_stcore/upload_file`` and downloads the Explorer's CSV export
from ``/media``: both succeed only on the process that holds the student's session, so they
check the stickiness; a sticky cookie that changes during a session is an error too.

Run:  .venv/bin/python bench/workshop_load.py --students 30 --seconds 60
      .venv/bin/python bench/workshop_load.py --students 10 --seconds 10 --json   (what CI runs)
      .venv/bin/python bench/workshop_load.py --students 30 --seconds 60 --servers 3 --haproxy
      .venv/bin/python bench/workshop_load.py --students 30 --url http://127.0.0.1:8501 --servers 3
Only loopback is ever contacted; every loop is bounded in count and time and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workshop_servers import (  # noqa: E402
    HOST,
    free_port,
    haproxy_stack,
    proc_cpu_seconds,
    proc_rss_mib,
    start_server,
)

from core.estimate.result import estimate  # noqa: E402
from core.planning.check import check  # noqa: E402
from core.planning.report import verdict_sentence  # noqa: E402
from core.planning.requirement import Requirement  # noqa: E402
from core.spec.catalog import load_catalog  # noqa: E402
from core.spec.deployment import Deployment, Workload  # noqa: E402
from core.spec.engine import EngineConfig  # noqa: E402
from core.spec.precision import kv_precision, weight_precision  # noqa: E402
from deploy.serve import COOKIE  # noqa: E402
from ui import fmt  # noqa: E402

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")  # the hosts --url may name
RERUN_TIMEOUT_S = 30.0
HTTP_TIMEOUT_S = 30.0
DOWNLOAD_TRIES = 3
XSRF_COOKIE = "_streamlit_xsrf"  # Streamlit's; uploads send its value back in X-Xsrftoken
MAX_ACTIONS_PER_STUDENT = 10_000  # a hard bound beside the time bound
CATALOG = load_catalog()
BF16 = weight_precision("bf16")
DEFAULT_DEP = Deployment(
    model=CATALOG.model("llama-3.1-8b"),
    gpu=CATALOG.gpu("a10"),
    weights=BF16,
    kv=kv_precision("auto", BF16),
    engine=EngineConfig(max_model_len=8192),
)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    reruns: int = 0
    students: list[dict] = field(default_factory=list)  # one record per student (Student.record)


def expected_throughput(batch: int) -> str:
    """What the Explorer must show for the sidebar's default scenario at this batch."""
    work = Workload(input_len=2048, output_len=512, batch=batch)
    return fmt.rate(estimate(DEFAULT_DEP, work).throughput.output_tokens_per_s)


def expected_verdict(users: int) -> str:
    """What the Plan page must say for its default requirement with this many users."""
    req = Requirement(
        load="users",
        users=users,
        think_time_s=30.0,
        prompt_len=1500,
        answer_len=300,
        prompt_len_p95=1500,
        answer_len_p95=300,
        ttft_slo_s=1.0,
        tpot_slo_s=0.05,
    )
    return verdict_sentence(check(DEFAULT_DEP, req))


class Student:
    """One browser tab: its cookies, its websocket, the widget states it has sent, the page it is on.

    With ``http_base`` it also speaks HTTP as a browser does behind a load balancer (module docstring).
    """

    def __init__(self, url: str, stats: Stats, http_base: str | None = None) -> None:
        self.url, self.stats, self.http_base = url, stats, http_base
        self.states: dict[str, object] = {}
        self.widget_ids: dict[str, str] = {}
        self.downloads: dict[str, str] = {}  # download button key -> its deferred file id
        self.pages: dict[str, str] = {}
        self.page_hash = ""
        self.session_id = ""
        self.cookies: dict[str, str] = {}
        self.ws = None
        # requests: HTTP requests and websocket handshakes sent through the balancer; upload and
        # download: the HTTP status of the session's upload and of its file download (the last try)
        self.record = {
            "backend": None,
            "sent": 0,
            "served": 0,
            "requests": 0,
            "upload": None,
            "download": None,
            "download_tries": 0,
        }
        stats.students.append(self.record)

    async def _receive(self) -> ForwardMsg:
        forward = ForwardMsg()
        forward.ParseFromString(await asyncio.wait_for(self.ws.recv(), RERUN_TIMEOUT_S))
        if forward.WhichOneof("type") == "new_session":
            self.session_id = forward.new_session.initialize.session_id
        return forward

    async def rerun(self, changed: dict[str, tuple[str, object]] | None = None) -> dict:
        """Send a rerun with every widget state so far plus ``changed`` (key -> (kind, value)), read
        until the script finishes; return what it showed (metrics, alerts, widget ids, exceptions)."""
        for key, (kind, value) in (changed or {}).items():
            self.states[self.widget_ids[key]] = (kind, value)
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = self.page_hash
        for widget_id, (kind, value) in self.states.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = widget_id
            if kind == "double_array":
                state.double_array_value.data.extend(value)
            elif kind == "int":
                state.int_value = value
            elif kind == "double":
                state.double_value = value
        shown = {"metrics": {}, "alerts": [], "exceptions": []}
        start = time.perf_counter()
        self.record["sent"] += 1
        await self.ws.send(msg.SerializeToString())
        while True:
            forward = await self._receive()
            kind = forward.WhichOneof("type")
            if kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in forward.navigation.app_pages}
            elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                self._read_element(forward.delta.new_element, shown)
            elif kind == "script_finished":
                if forward.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # the app asked for a rerun (st.rerun): its output follows, as a browser sees
                if forward.script_finished != ForwardMsg.FINISHED_SUCCESSFULLY:
                    shown["exceptions"].append(f"script finished with status {forward.script_finished}")
                break
        self.stats.latencies.append(time.perf_counter() - start)
        self.stats.reruns += 1
        self.record["served"] += 1
        if shown["exceptions"]:
            self.stats.errors.extend(shown["exceptions"])
        return shown

    def _read_element(self, element, shown: dict) -> None:
        kind = element.WhichOneof("type")
        if kind == "metric":
            shown["metrics"][element.metric.label] = element.metric.body
        elif kind == "alert":
            shown["alerts"].append(element.alert.body)
        elif kind == "exception":
            shown["exceptions"].append(f"{element.exception.type}: {element.exception.message}")
        elif kind in ("slider", "number_input"):
            widget = getattr(element, kind)
            key = widget.id.rsplit("-", 1)[-1]
            self.widget_ids[key] = widget.id
        elif kind == "download_button":
            self.downloads[element.download_button.id.rsplit("-", 1)[-1]] = element.download_button.deferred_file_id

    async def http(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        """One HTTP request to the balancer with this browser's cookies; keeps the cookies it sets.
        Returns (status, body). A sticky cookie that changes mid-session is recorded as an error."""
        headers = {**(headers or {}), "Cookie": self._cookie_header()}
        request = urllib.request.Request(self.http_base + path, data=body, headers=headers, method=method)

        def send():
            try:
                with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
                    return response.status, response.headers, response.read()
            except urllib.error.HTTPError as err:
                return err.code, err.headers, err.read()

        self.record["requests"] += 1
        status, response_headers, data = await asyncio.to_thread(send)
        for line in response_headers.get_all("Set-Cookie") or []:
            name, _, value = line.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()
        backend = self.cookies.get(COOKIE)
        if self.record["backend"] not in (None, backend):
            self.stats.errors.append(f"{method} {path}: moved from {self.record['backend']} to {backend}")
        self.record["backend"] = backend
        return status, data

    def _cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def _request(self, msg: BackMsg, reply: str):
        """Send a request over the websocket and read until its reply of type ``reply`` (a student
        has one request in flight at a time)."""
        await self.ws.send(msg.SerializeToString())
        while True:
            forward = await self._receive()
            if forward.WhichOneof("type") == reply:
                return getattr(forward, reply)

    async def upload(self) -> None:
        """What a file uploader does: ask the session for an upload URL, PUT a file to it with the XSRF
        token. Only the process holding the session accepts it. The file is never attached to a
        widget, so the app does not read it."""
        msg = BackMsg()
        msg.file_urls_request.request_id = "upload"
        msg.file_urls_request.session_id = self.session_id
        msg.file_urls_request.file_names.append("config.json")
        urls = await self._request(msg, "file_urls_response")
        boundary = uuid.uuid4().hex
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="config.json"\r\n'
            f'Content-Type: application/json\r\n\r\n{{"model_type": "llama"}}\r\n--{boundary}--\r\n'
        ).encode()
        headers = {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": self.cookies.get(XSRF_COOKIE, ""),
        }
        status, data = await self.http("PUT", urls.file_urls[0].upload_url, body, headers)
        self.record["upload"] = status
        if status != 204:
            self.stats.errors.append(f"upload answered {status}: {data[:200]!r}")

    async def download(self, key: str) -> None:
        """What a download button does: ask the session to build its file, then GET it from /media.
        Only the process holding the session has the file. Streamlit 1.67 drops a built file once two
        reruns of any session in its process have finished, so under load the GET can come too late
        (404) on the right process too: the student clicks again, up to DOWNLOAD_TRIES times. The
        clicks and a download that never came are recorded, not counted as errors (the race is
        Streamlit's, with or without a balancer; whether the GETs reached the session's process is
        what HAProxy's per-process counts show)."""
        for tries in range(1, DOWNLOAD_TRIES + 1):
            msg = BackMsg()
            msg.backend_operation_request.request_id = f"download-{tries}"
            msg.backend_operation_request.session_id = self.session_id
            msg.backend_operation_request.deferred_file.file_id = self.downloads[key]
            answer = await self._request(msg, "backend_operation_response")
            if answer.error_msg:
                self.stats.errors.append(f"download {key}: {answer.error_msg}")
                return
            status, data = await self.http("GET", answer.deferred_file.url)
            self.record["download"], self.record["download_tries"] = status, tries
            if status == 200 and data:
                return

    async def explorer_step(self, rng: random.Random) -> None:
        batch = rng.randint(1, 256)
        shown = await self.rerun({"batch": ("double", float(batch))})  # the batch box: a number input
        got, want = shown["metrics"].get("Throughput"), expected_throughput(batch)
        if got != want:
            self.stats.wrong.append(f"Explorer batch {batch}: showed {got!r}, core says {want!r}")

    async def plan_step(self, rng: random.Random) -> None:
        users = rng.randint(1, 120)
        shown = await self.rerun({"plan_users": ("int", users)})
        want = expected_verdict(users)
        if not any(alert.startswith(want) for alert in shown["alerts"]):  # the answer opens with the verdict
            self.stats.wrong.append(f"Plan users {users}: verdict {want!r} not among {shown['alerts'][:2]!r}")

    async def open_page(self, name: str) -> None:
        self.page_hash = self.pages[name]
        await self.rerun()

    async def _connect(self):
        """The websocket; behind a balancer, after the page load and health ping a browser does first."""
        if self.http_base is None:
            return websockets.connect(self.url, subprotocols=["streamlit"], max_size=None)
        for path in ("/", "/_stcore/health"):
            status, _ = await self.http("GET", path)
            if status != 200:
                raise OSError(f"GET {path} answered {status}")
        self.record["requests"] += 1  # the websocket handshake
        return websockets.connect(
            self.url, subprotocols=["streamlit"], max_size=None, additional_headers={"Cookie": self._cookie_header()}
        )

    async def run(self, seconds: float, rng: random.Random, start_on_plan: bool) -> None:
        try:
            async with await self._connect() as ws:
                self.ws = ws
                await self.rerun()  # the first page load: the Explorer
                if self.http_base is not None:
                    await self.upload()
                    await self.download("explorer_download_csv")
                order = ["Plan", "Explorer"] if start_on_plan else ["Explorer", "Plan"]
                end = time.monotonic() + seconds
                halfway = time.monotonic() + seconds / 2
                await self.open_page(order[0])
                switched = False
                for _ in range(MAX_ACTIONS_PER_STUDENT):
                    if time.monotonic() >= end:
                        break
                    if not switched and time.monotonic() >= halfway:
                        await self.open_page(order[1])
                        switched = True
                    page = order[1] if switched else order[0]
                    await (self.plan_step(rng) if page == "Plan" else self.explorer_step(rng))
                    await asyncio.sleep(rng.uniform(0.7, 1.3))
        except (OSError, TimeoutError, websockets.WebSocketException, KeyError) as err:
            self.stats.errors.append(f"{type(err).__name__}: {err}")


async def _warm_up(url: str, http_base: str | None, stats: Stats) -> None:
    """One throwaway session, as a teacher opening the link first: the server's start-up work
    (imports, catalog, caches) is then not counted as workshop growth."""
    await Student(url, stats, http_base).run(0.0, random.Random(0), start_on_plan=False)


async def _workshop(targets: list[tuple[str, str | None]], students: int, seconds: float, seed: int) -> Stats:
    stats = Stats()
    # a thread per student for its blocking HTTP requests: with the default pool (CPU count + 4
    # threads) a download's GET waited behind other students' requests
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=students))
    tasks = []
    for i in range(students):
        rng = random.Random(seed + i)
        await asyncio.sleep(rng.uniform(0, 0.05))  # students join over a moment, not in one instant
        url, http_base = targets[i % len(targets)]  # sticky: a student stays on the server it first reached
        student = Student(url, stats, http_base)
        tasks.append(asyncio.create_task(student.run(seconds, rng, start_on_plan=i % 2 == 1)))
    await asyncio.gather(*tasks)
    return stats


def run_workshop(
    students: int,
    seconds: float,
    seed: int = 0,
    warm: bool = True,
    servers: int = 1,
    url: str | None = None,
    server_pids: list[int] | None = None,
) -> dict:
    """Run the workshop; return the figures. Without ``url``: start ``servers`` server processes,
    spread the students evenly over them (each staying on one, as sticky sessions behind a proxy
    would), stop them. With ``url`` (a balancer, e.g. deploy/serve.py's HAProxy): every student goes
    through it as a browser does, ``servers`` is the number of processes behind it (one warm-up
    session each) and ``server_pids`` the processes whose CPU and memory count (None: not measured).
    ``warm=False`` lets every student hit a fresh server at once (the first-import race)."""
    procs = []
    if url is None:
        ports = [free_port() for _ in range(servers)]
        procs = [start_server(port) for port in ports]
        pids = [p.pid for p in procs]
        targets = [(f"ws://{HOST}:{port}/_stcore/stream", None) for port in ports]
    else:
        pids = list(server_pids or [])
        base = url.rstrip("/")
        targets = [("ws" + base.removeprefix("http") + "/_stcore/stream", base)]
    measured = bool(pids)
    warm_stats = Stats()
    try:
        rss_fresh = sum(proc_rss_mib(pid) for pid in pids)
        if warm:
            for i in range(servers):
                asyncio.run(_warm_up(*targets[i % len(targets)], warm_stats))
        rss_before = sum(proc_rss_mib(pid) for pid in pids)
        cpu_before = sum(proc_cpu_seconds(pid) for pid in pids)
        start = time.monotonic()
        client_before = time.process_time()
        stats = asyncio.run(_workshop(targets, students, seconds, seed))
        wall = time.monotonic() - start
        client_cpu = time.process_time() - client_before
        cpu = sum(proc_cpu_seconds(pid) for pid in pids) - cpu_before
        rss_after = sum(proc_rss_mib(pid) for pid in pids)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
    latencies = sorted(stats.latencies)
    return {
        "students": students,
        "servers": servers,
        "seconds": seconds,
        "reruns": stats.reruns,
        "reruns_per_s": stats.reruns / wall,
        "latency_ms": {
            "p50": statistics.median(latencies) * 1e3 if latencies else None,
            "p95": latencies[int(0.95 * (len(latencies) - 1))] * 1e3 if latencies else None,
            "max": latencies[-1] * 1e3 if latencies else None,
        },
        "errors": stats.errors + warm_stats.errors,
        "wrong_values": stats.wrong + warm_stats.wrong,
        "dropped_reruns": sum(r["sent"] - r["served"] for r in stats.students),
        "download_retries": sum(max(0, r["download_tries"] - 1) for r in stats.students),
        "download_failures": sum(r["download_tries"] > 0 and r["download"] != 200 for r in stats.students),
        "server_cpu_share_of_one_core": cpu / wall if measured else None,
        "client_cpu_share_of_one_core": client_cpu / wall,
        "server_rss_mib": {
            "fresh": rss_fresh,
            "before": rss_before,
            "after": rss_after,
            "growth": rss_after - rss_before,
        }
        if measured
        else None,
        "per_student": stats.students,  # Student.record of each
        "warm_up_sessions": warm_stats.students,
    }


def _row(result: dict) -> str:
    """The result as a row of docs/benchmarks.md's workshop table."""
    lat, cpu, rss = result["latency_ms"], result["server_cpu_share_of_one_core"], result["server_rss_mib"]
    return (
        f"| {result['students']} | {result['servers']} | {result['seconds']:.0f} | {result['reruns']} | "
        f"{result['reruns_per_s']:.1f} | "
        f"{lat['p50']:.0f} | {lat['p95']:.0f} | {lat['max']:.0f} | {len(result['errors'])} | "
        f"{len(result['wrong_values'])} | {'n/a' if cpu is None else f'{cpu:.0%}'} | "
        f"{result['client_cpu_share_of_one_core']:.0%} | "
        + ("n/a |" if rss is None else f"{rss['fresh']:.0f} / {rss['before']:.0f} -> {rss['after']:.0f} |")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cold", action="store_true", help="no warm-up session: every student hits a fresh server")
    parser.add_argument("--servers", type=int, default=1, help="server processes, students spread over them")
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--haproxy", action="store_true", help="start deploy/serve.py: --servers processes behind HAProxy"
    )
    target.add_argument(
        "--url", help="drive a loopback server or balancer already running (--servers: processes behind it)"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200 or not 1 <= args.seconds <= 600 or not 1 <= args.servers <= 8:
        parser.error("--students must be 1-200, --seconds 1-600 and --servers 1-8")
    if args.url is not None and urllib.parse.urlsplit(args.url).hostname not in LOOPBACK_NAMES:
        parser.error("--url must be http://127.0.0.1:PORT (or localhost): this load stays on loopback")
    run = dict(students=args.students, seconds=args.seconds, seed=args.seed, warm=not args.cold, servers=args.servers)
    if args.haproxy:
        with haproxy_stack(args.servers) as stack:
            result = run_workshop(**run, url=stack.url, server_pids=list(stack.children()))
    else:
        result = run_workshop(**run, url=args.url)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_row(result))
        if args.haproxy or args.url:
            backends = sorted({r["backend"] for r in result["per_student"]}, key=str)
            print(
                f"   dropped reruns: {result['dropped_reruns']}, download clicks repeated: "
                f"{result['download_retries']}, downloads failed {DOWNLOAD_TRIES} times: "
                f"{result['download_failures']}, students' processes (sticky cookie): {backends}"
            )
        for line in (result["errors"] + result["wrong_values"])[:10]:
            print("  ", line)
    return 1 if result["errors"] or result["wrong_values"] or result["dropped_reruns"] else 0


if __name__ == "__main__":
    sys.exit(main())
