"""The scale-out deployment: deploy/serve.py starts Streamlit processes behind HAProxy on loopback.

30 simulated students (bench/workshop_load.py) work through HAProxy in front of 3 processes, each
as a browser does: it keeps HAProxy's sticky cookie and sends it back on every request, the
websocket included, and uploads a file and downloads an export, which only the process holding its
session can answer. The tests fail on any error, wrong value or dropped rerun, on an upload the
student's process refused, on a student whose requests reached more than one process (checked by
the client and by HAProxy's own per-process counts), on a process HAProxy's health checks do not
have UP, on a killed process that is not marked DOWN with its students moved while it cannot come
back (tests/test_room_heals.py: how it comes back), on a process left running after SIGTERM, and on
the longest link the app makes refused by HAProxy (its default buffer refused links over 15 KB, F10).
Timing is printed, never asserted (docs/benchmarks.md records it). Without haproxy the tests skip,
and fail in CI.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from workshop_load import Stats, Student, run_workshop
from workshop_servers import haproxy_stack

from core.spec.json_fields import MAX_TEXT
from core.spec.scenario_codec import MAX_TOKEN_CHARS
from deploy.link_limits import LONGEST_LINK, MODEL_LINK_CHARS, buffer_size
from deploy.serve import COOKIE, haproxy_stats, server_name
from tests.room_helpers import backend_pid, port_held, require_haproxy, room_health
from ui.link_state import MAX_MODEL_CHARS

PROCESSES = 3
STUDENTS = 30
SECONDS = 10.0


def _servers(stack) -> dict[str, dict[str, str]]:
    """HAProxy's stats row of each Streamlit process, by server name."""
    rows = haproxy_stats(stack.stats_socket)
    return {r["svname"]: r for r in rows if r["pxname"] == "streamlit" and r["type"] == "2"}


def _alive(pid: int, command: str) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() == command
    except OSError:
        return False


@pytest.fixture(scope="module")
def stack():
    require_haproxy()
    with haproxy_stack(PROCESSES) as running:  # stops every process it started, even on failure
        yield running


@pytest.fixture(scope="module")
def workshop(stack):
    """The 30-student run through HAProxy, with HAProxy's per-process stats before and after."""
    before = _servers(stack)
    result = run_workshop(STUDENTS, SECONDS, servers=PROCESSES, url=stack.url, server_pids=list(stack.children()))
    return result, before, _servers(stack)


def test_health_checks_have_every_process_up(stack):
    servers = _servers(stack)
    assert sorted(servers) == [server_name(i) for i in range(PROCESSES)]
    for row in servers.values():
        assert row["status"] == "UP"
        assert (row["check_status"], row["check_code"]) == ("L7OK", "200")  # GET /_stcore/health answered 200


def test_thirty_students_through_haproxy_see_no_error_no_wrong_value_and_no_dropped_rerun(workshop, capsys):
    result, _, _ = workshop
    lat = result["latency_ms"]
    with capsys.disabled():  # recorded, not asserted: docs/benchmarks.md has the 60 s figures
        print(
            f"\n{STUDENTS} students through HAProxy on {PROCESSES} processes for {SECONDS:.0f} s: "
            f"{result['reruns']} reruns ({result['reruns_per_s']:.1f}/s), update latency P50 {lat['p50']:.0f} ms, "
            f"P95 {lat['p95']:.0f} ms, max {lat['max']:.0f} ms, "
            f"server CPU {result['server_cpu_share_of_one_core']:.0%}, download clicks repeated "
            f"{result['download_retries']}, downloads never served {result['download_failures']}"
        )
    assert result["errors"] == []
    assert result["wrong_values"] == []
    assert len(result["per_student"]) == STUDENTS
    for record in result["per_student"]:
        assert record["served"] == record["sent"]  # every rerun a student sent came back finished
        assert record["served"] >= 3  # the first page, the page it opens and at least one change


def test_every_request_of_a_student_reaches_the_process_that_holds_its_session(workshop):
    result, before, after = workshop
    sessions = result["per_student"] + result["warm_up_sessions"]
    for record in sessions:
        assert record["upload"] == 204, record  # only the session's own process accepts its upload
        # a /media download: 200, or 404 when Streamlit had already dropped the built file (a race of
        # its own under load, bench/workshop_load.py: Student.download); never a proxy error
        assert record["download"] in (200, 404), record
    assert {r["backend"] for r in result["per_student"]} == set(after)  # HAProxy spread them over all 3
    for name in after:
        assert any(r["download"] == 200 for r in sessions if r["backend"] == name), name  # /media works
    # HAProxy's side: each process received exactly the requests (pages, websockets, uploads,
    # downloads) of the students whose cookie names it, and no other
    for name in after:
        sent_there = sum(r["requests"] for r in sessions if r["backend"] == name)
        assert int(after[name]["stot"]) - int(before[name]["stot"]) == sent_there, name


def test_a_killed_process_goes_down_its_students_move_and_sigterm_stops_everything():
    require_haproxy()
    with haproxy_stack(2) as running:
        children = running.children()
        port = running.port + 1  # server s1, the first Streamlit port
        os.kill(backend_pid(children, port), signal.SIGKILL)
        with port_held(port):  # it cannot come back while held: serve.py's restarts exit at once
            deadline = time.monotonic() + 15
            while _servers(running)["s1"]["status"] != "DOWN":
                assert time.monotonic() < deadline, "HAProxy did not mark the killed process DOWN in 15 s"
                time.sleep(0.2)
            assert _servers(running)["s2"]["status"] == "UP"
            assert room_health(running.url) == 503  # the room says it has lost capacity

            # a student whose cookie names the dead process, and a new one: both served by the live one
            stats, base = Stats(), running.url
            pinned, fresh = (
                Student("ws" + base.removeprefix("http") + "/_stcore/stream", stats, base) for _ in range(2)
            )
            pinned.cookies[COOKIE] = "s1"

            async def both():
                await asyncio.gather(*(s.run(2.0, random.Random(0), start_on_plan=False) for s in (pinned, fresh)))

            asyncio.run(both())
            assert stats.errors == [] and stats.wrong == []
            assert [s.record["backend"] for s in (pinned, fresh)] == ["s2", "s2"]

        assert running.launcher.poll() is None  # one process lost does not stop the room
        deadline = time.monotonic() + 60  # the port free again: the next restart stays (its back-off is 4 s or less)
        while _servers(running)["s1"]["status"] != "UP" or room_health(running.url) != 200:
            assert time.monotonic() < deadline, "the killed process was not back UP 60 s after its port was free"
            time.sleep(0.2)
        running.launcher.send_signal(signal.SIGTERM)
        assert running.launcher.wait(timeout=30) == 0
        left = [command for pid, command in running.children().items() if _alive(pid, command)]
        left += [command for pid, command in children.items() if _alive(pid, command)]
        assert left == []  # HAProxy and the Streamlit processes (the restarted one too) stopped with it


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_longest_link_the_app_makes_opens_through_haproxy_and_a_longer_request_gets_haproxys_400(stack):
    assert MODEL_LINK_CHARS == MAX_MODEL_CHARS  # the buffer is sized from the app's own caps
    base64url = "AZaz09-_" * 4096
    # Compare's saved scenarios and an imported model at their caps, three names of MAX_TEXT characters
    # that take 12 characters each once percent-encoded (4-byte UTF-8), and short inputs for the rest
    name = "%F0%9F%A4%96" * MAX_TEXT
    path = f"/compare?cmp={base64url[:MAX_TOKEN_CHARS]}&mcfg={base64url[:MAX_MODEL_CHARS]}"
    path += f"&model={name}&gpu={name}&draft={name}"
    assert len(path) < LONGEST_LINK - 55 * 46  # room left for 55 more inputs of up to 46 characters
    path += "".join(f"&in{i}={i:.15e}" for i in range(1000))[: LONGEST_LINK - len(path)]
    assert len(path) == LONGEST_LINK
    # as the address and again as the Referer (a page of the app opening another), with cookies
    headers = {
        "Referer": stack.url + path,
        "Cookie": f"{COOKIE}=s1; _streamlit_xsrf=" + "x" * 200 + "; other_site=" + "y" * 3000,
        "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0",
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
        "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8",
    }
    status, body = _get(stack.port, path, headers)
    assert status == 200 and b"<noscript>" in body, (status, body[:200])  # Streamlit's page, not HAProxy's 400
    assert _get(stack.port, "/_stcore/health", headers) == (200, b"ok")  # every request of the page
    # past the buffer: HAProxy's own 400 (2.6 writes it before any errorfile applies), never a backend error
    status, body = _get(stack.port, "/?x=" + "A" * buffer_size(), {})
    assert status == 400 and b"400 Bad request" in body
