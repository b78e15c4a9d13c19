"""Workshop load test: N simulated students against one ``streamlit run`` server on loopback.

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

Run:  .venv/bin/python bench/workshop_load.py --students 30 --seconds 60
      .venv/bin/python bench/workshop_load.py --students 10 --seconds 10 --json   (what CI runs)
Only loopback is ever contacted; every loop is bounded in count and time and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.estimate.result import estimate  # noqa: E402
from core.planning.check import check  # noqa: E402
from core.planning.report import verdict_sentence  # noqa: E402
from core.planning.requirement import Requirement  # noqa: E402
from core.spec.catalog import load_catalog  # noqa: E402
from core.spec.deployment import Deployment, Workload  # noqa: E402
from core.spec.engine import EngineConfig  # noqa: E402
from core.spec.precision import kv_precision, weight_precision  # noqa: E402
from ui import fmt  # noqa: E402

HOST = "127.0.0.1"  # loopback only
RERUN_TIMEOUT_S = 30.0
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
    """One browser tab: its websocket, the widget states it has sent, the page it is on."""

    def __init__(self, url: str, stats: Stats) -> None:
        self.url, self.stats = url, stats
        self.states: dict[str, object] = {}
        self.widget_ids: dict[str, str] = {}
        self.pages: dict[str, str] = {}
        self.page_hash = ""
        self.ws = None

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
        await self.ws.send(msg.SerializeToString())
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), RERUN_TIMEOUT_S)
            forward = ForwardMsg()
            forward.ParseFromString(raw)
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

    async def explorer_step(self, rng: random.Random) -> None:
        batch = rng.randint(1, 256)
        shown = await self.rerun({"batch": ("double_array", [float(batch)])})
        got, want = shown["metrics"].get("Throughput"), expected_throughput(batch)
        if got != want:
            self.stats.wrong.append(f"Explorer batch {batch}: showed {got!r}, core says {want!r}")

    async def plan_step(self, rng: random.Random) -> None:
        users = rng.randint(1, 120)
        shown = await self.rerun({"plan_users": ("int", users)})
        want = expected_verdict(users)
        if want not in shown["alerts"]:
            self.stats.wrong.append(f"Plan users {users}: verdict {want!r} not among {shown['alerts'][:2]!r}")

    async def open_page(self, name: str) -> None:
        self.page_hash = self.pages[name]
        await self.rerun()

    async def run(self, seconds: float, rng: random.Random, start_on_plan: bool) -> None:
        try:
            async with websockets.connect(self.url, subprotocols=["streamlit"], max_size=None) as ws:
                self.ws = ws
                await self.rerun()  # the first page load: the Explorer
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """``streamlit run app.py`` with the repository's production config, on loopback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", HOST, "--server.port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"http://{HOST}:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the streamlit server did not become healthy in 60 s")


def _proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _warm_up(url: str) -> None:
    """One throwaway session, as a teacher opening the link first: the server's start-up work
    (imports, catalog, caches) is then not counted as workshop growth."""
    await Student(url, Stats()).run(0.0, random.Random(0), start_on_plan=False)


async def _workshop(urls: list[str], students: int, seconds: float, seed: int) -> Stats:
    stats = Stats()
    tasks = []
    for i in range(students):
        rng = random.Random(seed + i)
        await asyncio.sleep(rng.uniform(0, 0.05))  # students join over a moment, not in one instant
        url = urls[i % len(urls)]  # sticky: a student stays on the server it first reached
        tasks.append(asyncio.create_task(Student(url, stats).run(seconds, rng, start_on_plan=i % 2 == 1)))
    await asyncio.gather(*tasks)
    return stats


def run_workshop(students: int, seconds: float, seed: int = 0, warm: bool = True, servers: int = 1) -> dict:
    """Start ``servers`` server processes, run the workshop against them (students spread evenly,
    each staying on one, as sticky sessions behind a proxy would), stop them; return the figures.
    ``warm=False`` lets every student hit a fresh server at once (the first-import race)."""
    ports = [_free_port() for _ in range(servers)]
    procs = [start_server(port) for port in ports]
    urls = [f"ws://{HOST}:{port}/_stcore/stream" for port in ports]
    try:
        rss_fresh = sum(_proc_rss_mib(p.pid) for p in procs)
        if warm:
            for url in urls:
                asyncio.run(_warm_up(url))
        rss_before = sum(_proc_rss_mib(p.pid) for p in procs)
        cpu_before = sum(_proc_cpu_seconds(p.pid) for p in procs)
        start = time.monotonic()
        client_before = time.process_time()
        stats = asyncio.run(_workshop(urls, students, seconds, seed))
        wall = time.monotonic() - start
        client_cpu = time.process_time() - client_before
        cpu = sum(_proc_cpu_seconds(p.pid) for p in procs) - cpu_before
        rss_after = sum(_proc_rss_mib(p.pid) for p in procs)
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
        "errors": stats.errors,
        "wrong_values": stats.wrong,
        "server_cpu_share_of_one_core": cpu / wall,
        "client_cpu_share_of_one_core": client_cpu / wall,
        "server_rss_mib": {
            "fresh": rss_fresh,
            "before": rss_before,
            "after": rss_after,
            "growth": rss_after - rss_before,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cold", action="store_true", help="no warm-up session: every student hits a fresh server")
    parser.add_argument("--servers", type=int, default=1, help="server processes, students spread over them")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200 or not 1 <= args.seconds <= 600 or not 1 <= args.servers <= 8:
        parser.error("--students must be 1-200, --seconds 1-600 and --servers 1-8")
    result = run_workshop(args.students, args.seconds, args.seed, warm=not args.cold, servers=args.servers)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        lat = result["latency_ms"]
        print(
            f"| {result['students']} | {result['servers']} | {result['seconds']:.0f} | {result['reruns']} | "
            f"{result['reruns_per_s']:.1f} | "
            f"{lat['p50']:.0f} | {lat['p95']:.0f} | {lat['max']:.0f} | {len(result['errors'])} | "
            f"{len(result['wrong_values'])} | {result['server_cpu_share_of_one_core']:.0%} | "
            f"{result['client_cpu_share_of_one_core']:.0%} | "
            f"{result['server_rss_mib']['fresh']:.0f} / {result['server_rss_mib']['before']:.0f} -> "
            f"{result['server_rss_mib']['after']:.0f} |"
        )
        for line in (result["errors"] + result["wrong_values"])[:10]:
            print("  ", line)
    return 1 if result["errors"] or result["wrong_values"] else 0


if __name__ == "__main__":
    sys.exit(main())
