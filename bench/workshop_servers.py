"""The servers a workshop load test runs against: one ``streamlit run`` per port, or the whole
scale-out stack (deploy/serve.py: Streamlit processes behind HAProxy), on free loopback ports, and
their CPU time and memory read from /proc. Used by bench/workshop_load.py, bench/speed_budget.py
and the tests that drive a room (tests/test_workshop.py, tests/test_deploy.py).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.serve import STATS_SOCKET, all_up, find_haproxy, healthy  # noqa: E402

HOST = "127.0.0.1"  # loopback only
STACK_START_TIMEOUT_S = 120.0
SERVER_START_TIMEOUT_S = 60.0


def free_port() -> int:
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
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if healthy(port):
            return proc
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"the streamlit server did not become healthy in {SERVER_START_TIMEOUT_S:.0f} s")


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``: pid -> command line."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):  # a process that ended while we looked
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return found


@dataclass
class Stack:
    """deploy/serve.py running on loopback: HAProxy's URL and port, the launcher, its run directory."""

    url: str
    port: int
    launcher: subprocess.Popen
    run_dir: Path

    @property
    def stats_socket(self) -> Path:
        return self.run_dir / STATS_SOCKET

    def children(self) -> dict[int, str]:
        """The Streamlit processes and HAProxy: pid -> command line."""
        return _children(self.launcher.pid)


def _free_port_block(count: int) -> int:
    """The first of ``count`` consecutive loopback ports free now, below the ephemeral range."""
    rng = random.Random()
    for _ in range(100):
        base = rng.randrange(20000, 30000 - count)
        try:
            with contextlib.ExitStack() as sockets:
                for port in range(base, base + count):
                    sockets.enter_context(socket.socket()).bind((HOST, port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"no {count} consecutive free loopback ports")


@contextlib.contextmanager
def haproxy_stack(processes: int):
    """deploy/serve.py with ``processes`` Streamlit processes behind HAProxy on free loopback ports:
    yields the Stack once HAProxy has every process UP; stops it however the block ends (SIGTERM to
    the launcher, then SIGKILL to whatever is left of its process group)."""
    if find_haproxy() is None:
        raise RuntimeError("haproxy is not installed; install it with `apt-get install haproxy`")
    port = _free_port_block(processes + 1)
    command = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--processes", str(processes), "--port", str(port)]
    with tempfile.TemporaryDirectory(prefix="explorer-bench-") as run_dir:
        launcher = subprocess.Popen(
            [*command, "--run-dir", run_dir], cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True
        )
        stack = Stack(f"http://{HOST}:{port}", port, launcher, Path(run_dir))
        try:
            deadline = time.monotonic() + STACK_START_TIMEOUT_S
            while not all_up(stack.stats_socket, processes):
                if launcher.poll() is not None:
                    raise RuntimeError(f"deploy/serve.py exited with code {launcher.returncode} while starting")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"deploy/serve.py not serving after {STACK_START_TIMEOUT_S:.0f} s")
                time.sleep(0.2)
            yield stack
        finally:
            if launcher.poll() is None:
                launcher.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    launcher.wait(timeout=30)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)  # anything of its group still running
            launcher.wait()
