"""The class database on PostgreSQL: DATABASE_URL chooses it, its errors never carry the URL, and the server the
tests start (tests/classroom_pg.py) runs and stops. The store's behaviour on PostgreSQL is tested in
tests/test_classroom_store.py (every test there runs on both backends)."""

from __future__ import annotations

import subprocess

import pytest
from sqlalchemy import text

from core.classroom.engine import ClassroomError, make_engine
from core.classroom.store import open_store
from tests.classroom_pg import postgres_server, require_postgres


@pytest.fixture(scope="module")
def server():
    require_postgres()
    with postgres_server() as running:
        yield running


def test_database_url_chooses_postgresql_with_psycopg_3(server, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", server.new_database().replace("postgresql+psycopg://", "postgresql://"))
    store = open_store("/nonexistent/ignored-when-DATABASE_URL-is-set.db")
    assert repr(store) == "ClassStore(postgresql)"
    assert store._engine.dialect.driver == "psycopg"
    room = store.create_class()
    store.join(room.join_code, "Ann")
    assert store.progress(room.class_id, room.teacher_key, {"e1": []}).students == 1
    with store._engine.connect() as conn:
        assert conn.scalar(text("SELECT version_num FROM alembic_version")) == "0001"
    store.close()


def test_errors_never_carry_the_url_or_its_password(server):
    url = server.url("no_such_database", password="hunter2-secret").replace(str(server.port), "1")
    with pytest.raises(ClassroomError, match=r"^migrate: the class database could not be upgraded") as caught:
        open_store(url=url)
    message = str(caught.value)
    assert "hunter2" not in message and str(server.root) not in message and "\n" not in message
    with pytest.raises(ClassroomError, match="must be a postgresql:// URL") as caught:
        make_engine(url="mysql://root:hunter2-secret@db/classes")
    assert "hunter2" not in str(caught.value)


def test_the_server_stops_and_its_directory_goes():
    require_postgres()
    with postgres_server() as running:
        root = running.root
        assert (root / "data" / "postmaster.pid").exists()
    assert not root.exists()
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert str(root) not in ps  # no postgres process left on that directory


def test_missing_postgresql_skips_here_and_fails_in_ci(monkeypatch):
    from tests import classroom_pg

    monkeypatch.setattr(classroom_pg, "pg_bin", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        classroom_pg.require_postgres()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="apt-get install postgresql"):
        classroom_pg.require_postgres()
