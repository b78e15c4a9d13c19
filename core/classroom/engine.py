"""The class database's engine: SQLite by default, PostgreSQL when ``DATABASE_URL`` is set; migrations on start.

SQLite: a file the caller names (created mode 0600); every connection sets WAL mode, a busy timeout, foreign keys
and secure delete, and every transaction starts with ``BEGIN IMMEDIATE`` so writers from several processes on one
machine queue on the busy timeout instead of failing on a stale snapshot. PostgreSQL: ``postgresql+psycopg://``
(psycopg 3). ``upgrade`` runs the Alembic scripts shipped in ``migrations/`` inside one transaction (under an
advisory lock on PostgreSQL), so processes starting together migrate once. No message or repr here carries the
path or the URL.
"""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).with_name("migrations")
_MIGRATION_LOCK = 32_0004  # pg_advisory_xact_lock id: one migrator at a time


KINDS = ("failed", "no_class", "wrong_key", "nickname_taken", "class_full", "invalid")
"""What went wrong, for a page to say in the reader's language: the database call failed; no such class (or
student in it); a wrong teacher key (or no such class: the two are not told apart); a taken nickname; a full
class; a value out of its bounds."""


class ClassroomError(ValueError):
    """A class-database call that failed; its message is one line naming the operation, never the path or URL,
    and ``kind`` (one of :data:`KINDS`) says what went wrong."""

    def __init__(self, message: str, kind: str = "failed") -> None:
        super().__init__(message)
        self.kind = kind if kind in KINDS else "failed"


def backend_name(engine: Engine) -> str:
    """``sqlite`` or ``postgresql``: what a page may say about the database."""
    return engine.dialect.name


def _sqlite_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # the driver's own BEGIN handling off: ours below
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA secure_delete = ON")  # a deleted class's rows are overwritten, not left in free pages
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def _create_private(path: Path) -> None:
    """Create the SQLite file readable by its owner only (SQLite gives its -wal and -shm files the same mode)."""
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def make_engine(path: str | os.PathLike[str] | None = None, url: str | None = None) -> Engine:
    """The engine for ``url``, else ``DATABASE_URL``, else the SQLite file ``path``."""
    url = url or os.environ.get("DATABASE_URL") or None
    try:
        if url:
            if url.startswith(("postgres://", "postgresql://")):
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            if not url.startswith("postgresql+psycopg://"):
                raise ClassroomError("open: DATABASE_URL must be a postgresql:// URL")
            return create_engine(url, pool_pre_ping=True, hide_parameters=True)
        if path is None:
            raise ClassroomError("open: no database file given and DATABASE_URL is not set")
        _create_private(Path(path))
        engine = create_engine(
            f"sqlite:///{Path(path)}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000}, hide_parameters=True
        )
    except ClassroomError:
        raise
    except OSError as exc:
        raise ClassroomError(f"open: the class database file could not be created ({type(exc).__name__})") from None
    except (SQLAlchemyError, ValueError, ImportError) as exc:
        raise ClassroomError(f"open: the class database URL is not usable ({type(exc).__name__})") from None
    _sqlite_hooks(engine)
    return engine


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration; safe when several processes start at once."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError as exc:
        raise ClassroomError(f"migrate: the class database could not be upgraded ({type(exc).__name__})") from None
