"""A throwaway PostgreSQL server for the class-database tests: initdb into a fresh directory, start on a free
port with its unix socket in that directory (no TCP), one database per test, stopped and removed at the end.

initdb refuses to run as root: as root the server runs as the ``postgres`` user (Debian's package creates it),
else ``nobody``, through ``runuser``, in a directory made under /tmp and given to that user (pytest's own tmp
directory is mode 0700, which that user cannot enter). Missing PostgreSQL: skip, or fail when ``CI`` is set.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def pg_bin() -> Path | None:
    """The directory of initdb and pg_ctl: Debian's /usr/lib/postgresql/<major>/bin (newest), else PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def require_postgres() -> Path:
    where = pg_bin()
    if where is None:
        message = "PostgreSQL is not installed: apt-get install postgresql"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return where


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    def __init__(self, root: Path, port: int, user: str) -> None:
        self.root, self.port, self.user, self._n = root, port, user, 0

    def url(self, database: str, password: str | None = None) -> str:
        auth = f"{self.user}:{password}" if password else self.user
        return f"postgresql+psycopg://{auth}@/{database}?host={self.root}&port={self.port}"

    def new_database(self) -> str:
        import psycopg

        self._n += 1
        name = f"class_test_{self._n}"
        with psycopg.connect(host=str(self.root), port=self.port, user=self.user, dbname="postgres") as conn:
            conn.autocommit = True
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


@contextlib.contextmanager
def postgres_server() -> Iterator[PgServer]:
    where = require_postgres()
    prefix: list[str] = []
    if os.geteuid() == 0:
        runas = "postgres" if _user_exists("postgres") else "nobody"
        prefix = ["runuser", "-u", runas, "--"]
    root = Path(tempfile.mkdtemp(prefix="classroom-pg-"))
    if prefix:
        shutil.chown(root, user=prefix[2])
    data, port = root / "data", _free_port()
    run = lambda *args: subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=60)  # noqa: E731
    try:
        run(str(where / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        options = f"-p {port} -k {root} -c listen_addresses='' -c fsync=off -c max_connections=100"
        run(str(where / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-t", "30", "-o", options, "start")
        try:
            yield PgServer(root, port, "postgres")
        finally:
            run(str(where / "pg_ctl"), "-D", str(data), "-w", "-m", "fast", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
