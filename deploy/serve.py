"""One command for a bigger room: N ``streamlit run app.py`` processes on loopback behind HAProxy.

Owns the scale-out deployment: it writes HAProxy's config from ``deploy/haproxy.cfg.template``
(a sticky cookie per browser, the websocket tunnel, health checks on ``/_stcore/health``, buffers
sized for the longest link the app makes), starts the Streamlit processes on consecutive loopback
ports with the repository's ``.streamlit/config.toml``, waits until each answers its health
endpoint, runs HAProxy in the foreground and waits until HAProxy reports every process UP. Ctrl-C
or SIGTERM stops every process it started; if HAProxy exits, the rest stop too.

A room that heals: a Streamlit process that dies is restarted on its port, after a back-off of
1 s that doubles each time it dies again within a minute of starting (2, 4, 8 ... up to 60 s), so
one that keeps dying is not restarted in a tight loop. Each exit and each return is one line on
stderr. Meanwhile HAProxy's health checks send its students to the others.

The room's health: ``GET /_room/health`` on HAProxy's port answers 200 while HAProxy has every
process UP and 503 while it has any DOWN (HAProxy answers it itself: ``monitor-uri``). A restart
takes 2-4 s; the Dockerfile's HEALTHCHECK asks every 20 s and reports the container unhealthy after
three 503s in a row: a room short of capacity for longer than a restart takes, not a restart.

Run:  .venv/bin/python deploy/serve.py --processes 3 --port 8501
      (HAProxy on 127.0.0.1:8501, Streamlit on 127.0.0.1:8502-8504; add --bind 0.0.0.0 to serve
      the network, as the Dockerfile does)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import shutil
import signal
import socket
import subprocess  # nosec B404: starts streamlit and haproxy only, fixed argv
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python deploy/serve.py`: the app's packages live at the root
    sys.path.insert(0, str(ROOT))

from deploy.link_limits import MAX_REWRITE, buffer_size  # noqa: E402

TEMPLATE = Path(__file__).with_name("haproxy.cfg.template")
LOOPBACK = "127.0.0.1"
COOKIE = "EXPLORER_BACKEND"  # the sticky cookie HAProxy inserts (named in the template)
STATS_SOCKET = "haproxy.sock"  # in the run directory, next to haproxy.cfg
ROOM_HEALTH = "/_room/health"  # 200 while every Streamlit process is UP, else 503 (the Dockerfile asks it)
SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin")  # where Debian installs haproxy; not on a user's PATH
START_TIMEOUT_S = 120.0  # every process healthy and UP in HAProxy within this (3 take 5-10 s on 2 cores)
STOP_TIMEOUT_S = 15.0  # then SIGKILL
POLL_S = 0.2
FIRST_RESTART_S, MAX_RESTART_S = 1.0, 60.0  # the back-off before a restart; doubles while a process keeps dying
STABLE_S = 60.0  # a process that ran this long before it died starts its back-off again at FIRST_RESTART_S


class LaunchError(Exception):
    """The stack could not start; the message is the one line the user sees."""


@dataclass
class Child:
    name: str
    proc: subprocess.Popen
    port: int | None = None  # a Streamlit process's port; None for HAProxy
    started: float = 0.0  # when it was (re)started [monotonic s]
    delay: float = 0.0  # its last back-off [s]
    restart_at: float | None = None  # it died: restart it then [monotonic s]
    died: float | None = None  # it died and is not healthy again yet: when [monotonic s]


class StopFlag:
    """Set by SIGINT or SIGTERM; every wait in the launcher polls it."""

    def __init__(self) -> None:
        self.signal: int | None = None
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._set)

    def _set(self, signum: int, _frame: object) -> None:
        self.signal = signum

    def __bool__(self) -> bool:
        return self.signal is not None


def find_haproxy() -> str | None:
    """HAProxy's executable on PATH or in the sbin folders Debian installs it to."""
    return shutil.which("haproxy") or shutil.which("haproxy", path=os.pathsep.join(SBIN_DIRS))


def server_name(index: int) -> str:
    """The name of the ``index``-th process in HAProxy's config, stats and cookie."""
    return f"s{index + 1}"


def haproxy_config(bind: str, port: int, backend_ports: list[int], stats_socket: Path) -> str:
    """The template filled in: HAProxy on ``bind:port``, one server line per Streamlit process."""
    servers = "\n".join(
        f"    server {server_name(i)} {LOOPBACK}:{p} check cookie {server_name(i)}" for i, p in enumerate(backend_ports)
    )
    return Template(TEMPLATE.read_text()).substitute(
        bind=bind,
        port=port,
        servers=servers,
        processes=len(backend_ports),
        stats_socket=stats_socket,
        room_health=ROOM_HEALTH,
        bufsize=buffer_size(),
        maxrewrite=MAX_REWRITE,
    )


def streamlit_command(port: int) -> list[str]:
    """``streamlit run app.py`` on a loopback port; everything else comes from .streamlit/config.toml."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        LOOPBACK,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
    ]


def start_streamlit(port: int) -> subprocess.Popen:
    return subprocess.Popen(streamlit_command(port), cwd=ROOT, stdout=subprocess.DEVNULL)  # nosec B603: fixed argv, no shell


def haproxy_stats(stats_socket: Path) -> list[dict[str, str]]:
    """HAProxy's ``show stat`` as rows (``pxname``, ``svname``, ``status``, ``stot``, ``check_status``...)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(stats_socket))
        sock.sendall(b"show stat\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    text = b"".join(chunks).decode().lstrip("# ")
    return list(csv.DictReader(io.StringIO(text)))


def servers_up(stats_socket: Path) -> dict[str, bool]:
    """Each Streamlit process (by server name) and whether HAProxy's health checks have it UP."""
    rows = haproxy_stats(stats_socket)
    return {r["svname"]: r["status"] == "UP" for r in rows if r["pxname"] == "streamlit" and r["type"] == "2"}


def all_up(stats_socket: Path, count: int | None = None) -> bool:
    """Whether HAProxy has every Streamlit process UP (and ``count`` of them, when given)."""
    try:
        up = servers_up(stats_socket)
    except OSError:  # the socket is not there or not listening yet
        return False
    return bool(up) and all(up.values()) and (count is None or len(up) == count)


def healthy(port: int) -> bool:
    """Whether the Streamlit process on loopback ``port`` answers its health endpoint."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/_stcore/health", timeout=1) as response:  # nosec B310: http loopback
            return response.read() == b"ok"
    except OSError:
        return False


def _wait(what: str, ready, children: list[Child], stop: StopFlag) -> None:
    """Poll ``ready()`` until it is true; fail if a child exits or the time runs out."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        for child in children:
            if child.proc.poll() is not None:
                raise LaunchError(f"{child.name} exited with code {child.proc.returncode} while starting")
        if stop:
            raise LaunchError("stopped while starting")
        if time.monotonic() > deadline:
            raise LaunchError(f"{what} not ready after {START_TIMEOUT_S:.0f} s")
        time.sleep(POLL_S)


def stop_all(children: list[Child]) -> None:
    """SIGTERM to every child still running (HAProxy first), SIGKILL to any left after the grace time."""
    alive = [c.proc for c in reversed(children) if c.proc.poll() is None]
    for proc in alive:
        proc.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in alive:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _log(line: str) -> None:
    print(f"serve: {line}", file=sys.stderr, flush=True)


def tend(child: Child, now: float) -> None:
    """One look at a Streamlit process: note its death and when to restart it (the back-off doubles
    while it keeps dying within :data:`STABLE_S` of starting), restart it when that time comes, and
    say when it answers its health endpoint again."""
    if child.restart_at is not None:
        if now >= child.restart_at:
            child.proc, child.started, child.restart_at = start_streamlit(child.port), now, None
        return
    if child.proc.poll() is None:
        if child.died is not None and healthy(child.port):
            _log(f"{child.name} is back, {time.monotonic() - child.died:.1f} s after it exited")
            child.died = None
        return
    ran = now - child.started
    child.delay = FIRST_RESTART_S if ran >= STABLE_S or not child.delay else min(2 * child.delay, MAX_RESTART_S)
    child.restart_at, child.died = now + child.delay, child.died or now
    _log(
        f"{child.name} exited with code {child.proc.returncode} after {ran:.1f} s; HAProxy sends its students "
        f"to the other processes; restarting it in {child.delay:.0f} s"
    )


def _supervise(backends: list[Child], haproxy: Child, stop: StopFlag) -> int:
    """Until a signal or HAProxy's exit: restart a Streamlit process that died (:func:`tend`)."""
    while not stop:
        if haproxy.proc.poll() is not None:
            _log(f"haproxy exited with code {haproxy.proc.returncode}; stopping")
            return haproxy.proc.returncode or 1
        for child in backends:
            tend(child, time.monotonic())
        time.sleep(POLL_S)
    return 0


def serve(haproxy: str, processes: int, bind: str, port: int, backend_port: int, run_dir: Path) -> int:
    """Start the Streamlit processes and HAProxy, wait until all serve, supervise; stop all on exit."""
    stop = StopFlag()
    ports = [backend_port + i for i in range(processes)]
    children: list[Child] = []
    try:
        for p in ports:
            children.append(Child(f"streamlit on port {p}", start_streamlit(p), p, time.monotonic()))
        backends = list(children)
        _wait("the Streamlit processes", lambda: all(healthy(p) for p in ports), children, stop)
        config, stats_socket = run_dir / "haproxy.cfg", run_dir / STATS_SOCKET
        config.write_text(haproxy_config(bind, port, ports, stats_socket))
        haproxy_child = Child("haproxy", subprocess.Popen([haproxy, "-db", "-f", str(config)]))  # nosec B603: fixed argv
        children.append(haproxy_child)
        _wait("HAProxy", lambda: all_up(stats_socket), children, stop)
        print(
            f"serve: http://{bind}:{port} -> {processes} Streamlit processes on {LOOPBACK}:{ports[0]}-{ports[-1]} "
            f"(room health: {ROOM_HEALTH}; HAProxy stats: {stats_socket}); Ctrl-C stops them all",
            flush=True,
        )
        return _supervise(backends, haproxy_child, stop)
    except LaunchError as err:
        print(f"serve: {err}", file=sys.stderr)
        return 1
    finally:
        stop_all(children)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=3, help="Streamlit processes (README: sizing a room)")
    parser.add_argument("--port", type=int, default=8501, help="HAProxy's port, the one students open")
    parser.add_argument("--bind", default=LOOPBACK, help="HAProxy's address (0.0.0.0: every interface)")
    parser.add_argument("--backend-port", type=int, help="the first Streamlit port (default: --port + 1)")
    parser.add_argument("--run-dir", type=Path, help="where haproxy.cfg and the stats socket go (default: temporary)")
    args = parser.parse_args(argv)
    backend_port = args.backend_port or args.port + 1
    if not 1 <= args.processes <= 64:
        parser.error("--processes must be 1-64")
    backend_ports = range(backend_port, backend_port + args.processes)
    if not 1 <= min(args.port, backend_port) <= max(args.port, backend_ports[-1]) <= 65535:
        parser.error("ports must be 1-65535")
    if args.port in backend_ports:
        parser.error("--port must not be one of the Streamlit ports")
    haproxy = find_haproxy()
    if haproxy is None:
        print("serve: haproxy is not installed; install it with `apt-get install haproxy`", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        run_dir = args.run_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="explorer-")))
        return serve(haproxy, args.processes, args.bind, args.port, backend_port, run_dir)


if __name__ == "__main__":
    sys.exit(main())
