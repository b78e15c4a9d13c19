"""A room that heals (issue 29, item 7; audit F9): deploy/serve.py restarts a Streamlit process that
died, backs off from one that keeps dying, and HAProxy's room health path says when the room has
lost capacity.

Two processes behind HAProxy on loopback. A process killed with SIGKILL must answer its health
endpoint again on its port, from a new process, and HAProxy must have both UP and the room healthy
again, within a generous bound (measured: about 2.5 s to healthy, 3.5 s to UP; printed, not
asserted beyond 10x). A process whose port another socket holds dies at every restart: the restarts
must wait 1, 2, 4 s (logged one line each, and seen that far apart), the room's health must answer
503 while it is down, and once the port is free the process comes back and the room answers 200.
Without haproxy the tests skip, and fail in CI.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from workshop_servers import ROOT, Stack, _free_port_block

from deploy.serve import all_up, healthy, servers_up
from tests.room_helpers import backend_pid, port_held, require_haproxy, room_health

PROCESSES = 2
BACK_S = 30.0  # a killed process answers again within this (about 2.5 s measured on 2 shared cores)
EXITED = re.compile(r"streamlit on port (\d+) exited with code (-?\d+) after [\d.]+ s; .* restarting it in (\d+) s")


class Room(Stack):
    """deploy/serve.py on loopback, its stderr (the restart log) kept in a file."""

    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text()

    def exits(self, port: int) -> list[tuple[int, int]]:
        """(exit code, the back-off logged) of each exit of the process on ``port``, in order."""
        return [(int(code), int(delay)) for p, code, delay in EXITED.findall(self.log()) if int(p) == port]

    def wait(self, what: str, ready, within_s: float) -> float:
        """Seconds until ``ready()``; fails after ``within_s`` or if the launcher exits."""
        start = time.monotonic()
        while not ready():
            assert self.launcher.poll() is None, f"deploy/serve.py exited ({self.launcher.returncode})\n{self.log()}"
            assert time.monotonic() - start < within_s, f"{what} not within {within_s:.0f} s\n{self.log()}"
            time.sleep(0.1)
        return time.monotonic() - start


@pytest.fixture(scope="module")
def room():
    require_haproxy()
    with tempfile.TemporaryDirectory(prefix="explorer-room-") as run_dir:
        port = _free_port_block(PROCESSES + 1)  # HAProxy's; the Streamlit processes take the ports after it
        command = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--processes", str(PROCESSES)]
        log_path = Path(run_dir) / "serve.log"
        with log_path.open("w") as log:
            launcher = subprocess.Popen(
                [*command, "--port", str(port), "--run-dir", run_dir],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        running = Room(f"http://127.0.0.1:{port}", port, launcher, Path(run_dir))
        running.log_path = log_path
        try:
            running.wait("the room", lambda: all_up(running.stats_socket, PROCESSES), 120)
            yield running
        finally:  # SIGTERM, then SIGKILL to whatever is left of its process group
            if launcher.poll() is None:
                launcher.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    launcher.wait(timeout=30)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()


def test_a_killed_process_is_restarted_on_its_port_and_the_room_is_healthy_again(room, capsys):
    assert room_health(room.url) == 200
    port = room.port + 1  # server s1
    old = backend_pid(room.children(), port)
    assert old is not None
    os.kill(old, signal.SIGKILL)
    restarted = lambda: backend_pid(room.children(), port) not in (None, old) and healthy(port)  # noqa: E731
    back = room.wait("the killed process back", restarted, BACK_S)
    up = back + room.wait(
        "HAProxy has it UP", lambda: all_up(room.stats_socket, PROCESSES) and room_health(room.url) == 200, BACK_S
    )
    with capsys.disabled():
        print(f"\nkill -9 to the process healthy again on its port: {back:.1f} s; to UP in HAProxy: {up:.1f} s")
    assert room.exits(port) == [(-9, 1)]  # one line: the exit, and the restart 1 s later
    assert f"streamlit on port {port} is back" in room.log()
    assert room.launcher.poll() is None


def test_a_process_that_keeps_dying_is_backed_off_and_the_room_reports_it_until_it_is_back(room):
    port = room.port + 2  # server s2: it has not died before, so its back-off starts at 1 s
    os.kill(backend_pid(room.children(), port), signal.SIGKILL)
    seen: list[float] = []  # when each exit line appeared
    with port_held(port):  # every restart now exits at once: "Port … is not available"

        def exits_logged(count: int) -> bool:
            seen.extend([time.monotonic()] * (len(room.exits(port)) - len(seen)))
            return len(seen) >= count

        room.wait("three exits", lambda: exits_logged(3), 60)
        delays = [delay for _, delay in room.exits(port)]
        assert delays[:3] == [1, 2, 4]  # the back-off doubles while it keeps dying
        # restarted no sooner than its back-off: a tight loop would log an exit every second or less
        assert seen[1] - seen[0] >= 1 - 0.3 and seen[2] - seen[1] >= 2 - 0.3, seen
        assert servers_up(room.stats_socket)["s2"] is False
        room.wait("the room's health saying 503", lambda: room_health(room.url) == 503, 10)
        assert len(room.exits(port)) <= 4  # not restarted again before the 4 s back-off has passed
    # the port is free: the next restart stays up, and the room is whole again
    room.wait("the room healthy again", lambda: healthy(port) and room_health(room.url) == 200, 60)
    assert all_up(room.stats_socket, PROCESSES)
    assert f"streamlit on port {port} is back" in room.log()
    assert room.launcher.poll() is None
