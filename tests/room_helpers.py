"""What the tests of deploy/serve.py's room share: HAProxy present (else skip, or fail in CI), a
Streamlit process found by its port, a port held so that the process cannot start there again, and
the room's own health answer."""

from __future__ import annotations

import contextlib
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

from deploy.serve import ROOM_HEALTH, find_haproxy


def require_haproxy() -> None:
    if find_haproxy() is None:
        message = "haproxy is not installed: apt-get install haproxy"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def backend_pid(children: dict[int, str], port: int) -> int | None:
    """The pid of the Streamlit process on ``port`` among the launcher's children (pid -> command)."""
    return next((pid for pid, command in children.items() if f"--server.port {port} " in command), None)


@contextlib.contextmanager
def port_held(port: int, within_s: float = 5.0):
    """A socket listening on loopback ``port`` (taken as soon as the killed process there lets it go):
    a Streamlit process started on it exits at once ("Port … is not available")."""
    deadline = time.monotonic() + within_s
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the dead process's TIME_WAITs
        while True:
            try:
                sock.bind(("127.0.0.1", port))
                break
            except OSError:
                assert time.monotonic() < deadline, f"port {port} still taken {within_s:.0f} s after the kill"
                time.sleep(0.02)
        sock.listen()
        yield sock


def room_health(url: str) -> int:
    """The status of HAProxy's own answer on the room's health path: 200 all UP, 503 degraded."""
    try:
        with urllib.request.urlopen(url + ROOM_HEALTH, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
