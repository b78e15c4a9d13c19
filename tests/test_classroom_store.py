"""The class database (core/classroom) against a real SQLite file and a real PostgreSQL server the tests start
(tests/classroom_pg.py): every store test runs on both backends."""

from __future__ import annotations

import csv
import io
import multiprocessing
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text

from core.classroom.engine import ClassroomError
from core.classroom.schema import NICKNAME_MAX, Answer, Base, Classroom, Student
from core.classroom.store import ClassStore, open_store
from tests.classroom_workers import answer_all, open_and_close

EXERCISES = {"e1": ["weights", "kv"], "e2": ["tokens"]}


def count(store: ClassStore, table, class_id: str | None = None) -> int:
    query = select(func.count()).select_from(table)
    if class_id is not None:
        query = query.where(table.class_id == class_id)
    with store._engine.connect() as conn:
        return conn.scalar(query)


def submit(store, room, student, ex, box, typed, ok, key, slip=None):
    value = float(typed) if typed.replace(".", "", 1).isdigit() else None
    return store.submit_answer(room.class_id, student.student_id, ex, box, typed, value, ok, slip, key)


def test_the_teacher_counts_what_the_students_submitted(store):
    room = store.create_class("zh", retention_days=7)
    ann, bo, cy = (store.join(room.join_code, n) for n in ("Ann", "Bo", "Cy"))
    submit(store, room, ann, "e1", "weights", "14", True, "a1")
    submit(store, room, ann, "e1", "kv", "3.2", False, "a2", slip="kv_once")
    submit(store, room, ann, "e1", "kv", "6.4", True, "a3")  # a retry: the latest answer counts
    submit(store, room, bo, "e1", "weights", "13", False, "b1", slip="gb_gib")
    submit(store, room, cy, "e1", "kv", "3.2", False, "c1", slip="kv_once")
    progress = store.progress(room.class_id, room.teacher_key, EXERCISES)
    e1, e2 = progress.exercises
    assert progress.students == 3
    assert (e1.not_started, e1.answered, e1.correct) == (0, 2, 1)
    assert (e2.not_started, e2.answered, e2.correct) == (3, 0, 0)
    assert e1.wrong[0] == ("kv", "3.2", "kv_once", 2)  # the most common wrong answer, by students
    assert e1.wrong[1] == ("weights", "13", "gb_gib", 1)


def test_a_resubmitted_answer_is_recorded_once(store):
    room = store.create_class()
    ann = store.join(room.join_code, "Ann")
    assert submit(store, room, ann, "e1", "kv", "6.4", True, "same-key") is True
    assert submit(store, room, ann, "e1", "kv", "6.4", True, "same-key") is False
    assert count(store, Answer) == 1
    assert len(store.export_csv(room.class_id, room.teacher_key).splitlines()) == 2


def test_a_wrong_teacher_key_gets_one_line_and_no_data(store):
    room = store.create_class()
    store.join(room.join_code, "Ann")
    calls = [
        lambda key: store.progress(room.class_id, key, EXERCISES),
        lambda key: store.export_csv(room.class_id, key),
        lambda key: store.set_exercise(room.class_id, key, "e2"),
        lambda key: store.reveal(room.class_id, key, "e1"),
        lambda key: store.start_timer(room.class_id, key, 60),
        lambda key: store.delete_class(room.class_id, key),
    ]
    for call in calls:
        near = room.teacher_key[:-1] + ("y" if room.teacher_key.endswith("x") else "x")  # one character off
        for key in ("", near, None):
            with pytest.raises(ClassroomError, match="wrong teacher key or no such class") as caught:
                call(key)
            assert "\n" not in str(caught.value) and "Ann" not in str(caught.value)
    assert count(store, Classroom) == 1 and store.state(room.class_id).current_exercise is None
    row = class_row(store, room.class_id)
    assert room.teacher_key not in str(row) and len(row.key_salt) == 32  # only a salted hash is stored


def class_row(store: ClassStore, class_id: str):
    with store._engine.connect() as conn:
        return conn.execute(select(Classroom.__table__).where(Classroom.id == class_id)).one()


def test_no_call_reads_another_class(store):
    a, b = store.create_class(), store.create_class()
    assert a.join_code != b.join_code and a.class_id != b.class_id
    ann, bo = store.join(a.join_code, "Ann"), store.join(b.join_code, "Bo")
    submit(store, a, ann, "e1", "kv", "1", False, "k1")
    submit(store, b, bo, "e1", "kv", "999", False, "k1")
    with pytest.raises(ClassroomError, match="wrong teacher key"):
        store.progress(b.class_id, a.teacher_key, EXERCISES)  # A's key opens nothing of B
    with pytest.raises(ClassroomError, match="no such student in this class"):
        store.submit_answer(b.class_id, ann.student_id, "e1", "kv", "5", 5.0, False, None, "k2")
    with pytest.raises(ClassroomError, match="no such student in this class"):
        store.submit_answer(a.class_id, bo.student_id, "e1", "kv", "5", 5.0, False, None, "k3")
    progress = store.progress(a.class_id, a.teacher_key, EXERCISES)
    assert progress.students == 1 and progress.exercises[0].wrong == (("kv", "1", None, 1),)
    exported = store.export_csv(a.class_id, a.teacher_key)
    assert "Ann" in exported and "Bo" not in exported and "999" not in exported
    store.delete_class(a.class_id, a.teacher_key)
    assert count(store, Answer, b.class_id) == 1 and count(store, Student, b.class_id) == 1


def test_nicknames_unique_per_class_capped_and_stored_as_given(store):
    a, b = store.create_class(), store.create_class()
    shown = "<b>Ann</b> & 小明"
    assert store.join(a.join_code, shown).nickname == shown
    assert store.join(b.join_code, shown).nickname == shown  # the same nickname in another class
    with pytest.raises(ClassroomError, match="nickname is taken"):
        store.join(a.join_code, shown)
    for bad in ("", "   ", "x" * (NICKNAME_MAX + 1), "a\nb", "Bo\u202enA"):
        with pytest.raises(ClassroomError, match="join: nickname"):
            store.join(a.join_code, bad)
    with pytest.raises(ClassroomError, match="no class has this join code"):
        store.join("not-a-code", "Bo")
    assert count(store, Student) == 2


def test_a_class_holds_at_most_max_students(store, monkeypatch):
    monkeypatch.setattr("core.classroom.seats.MAX_STUDENTS", 3)
    room = store.create_class()
    for n in range(3):
        store.join(room.join_code, f"s{n}")
    with pytest.raises(ClassroomError, match=r"join: the class is full \(3 students\)"):
        store.join(room.join_code, "s3")


def test_the_teacher_steers_the_class(store):
    room = store.create_class()
    start = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    store.set_exercise(room.class_id, room.teacher_key, "e3")
    store.reveal(room.class_id, room.teacher_key, "e1")
    store.reveal(room.class_id, room.teacher_key, "e1")
    store.reveal(room.class_id, room.teacher_key, "e2")
    store.start_timer(room.class_id, room.teacher_key, 600, now=start)
    state = store.state(room.class_id)
    assert (state.current_exercise, state.revealed, state.timer_seconds) == ("e3", ("e1", "e2"), 600)
    assert state.timer_started_at == start.replace(tzinfo=None)
    store.start_timer(room.class_id, room.teacher_key, None)
    assert store.state(room.class_id).timer_seconds is None
    with pytest.raises(ClassroomError, match="timer: seconds"):
        store.start_timer(room.class_id, room.teacher_key, 0)


def test_export_is_csv_a_spreadsheet_cannot_run(store):
    room = store.create_class()
    eve = store.join(room.join_code, "=HYPERLINK(1)")
    submit(store, room, eve, "e1", "kv", "-3", False, "k1")
    submit(store, room, eve, "e1", "kv", "@SUM(A1)", False, "k2")
    rows = list(csv.reader(io.StringIO(store.export_csv(room.class_id, room.teacher_key))))
    assert rows[0][:4] == ["nickname", "exercise", "box", "typed"]
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(1)"] * 2
    assert [r[3] for r in rows[1:]] == ["-3", "'@SUM(A1)"]  # a negative number stays a number


def test_deleting_and_retention_remove_every_row(store):
    now = datetime(2026, 12, 4, tzinfo=UTC)
    short = store.create_class(retention_days=1, now=now)
    long = store.create_class(retention_days=30, now=now)
    gone = store.create_class(now=now)
    for room in (short, long, gone):
        submit(store, room, store.join(room.join_code, "Ann"), "e1", "kv", "1", True, "k")
    store.delete_class(gone.class_id, gone.teacher_key)
    assert count(store, Answer, gone.class_id) == 0 and count(store, Student, gone.class_id) == 0
    assert store.purge_expired(now + timedelta(hours=23)) == 0
    assert store.purge_expired(now + timedelta(days=2)) == 1
    assert count(store, Classroom) == 1 and count(store, Answer) == 1 and count(store, Student) == 1
    with pytest.raises(ClassroomError, match="class state: no such class"):
        store.state(short.class_id)
    with pytest.raises(ClassroomError, match="retention_days"):
        store.create_class(retention_days=0)


def test_the_migrated_schema_is_the_models_schema(store, target):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with store._engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert conn.scalar(text("SELECT count(*) FROM alembic_version")) == 1
    assert diffs == []
    open_store(**target).close()  # a second start migrates nothing and fails nothing


def test_sqlite_connections_use_wal_and_a_busy_timeout(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    store = open_store(str(tmp_path / "class.db"))
    assert repr(store) == "ClassStore(sqlite)" and store.backend == "sqlite"
    with store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
    store.create_class()
    for name in ("class.db", "class.db-wal", "class.db-shm"):
        assert (tmp_path / name).stat().st_mode & 0o077 == 0, name  # nicknames and answers: the owner's only
    store.close()


def test_errors_and_reprs_never_name_the_database_file(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    hidden = tmp_path / "secret-place-42"
    with pytest.raises(ClassroomError, match=r"^open: the class database file could not be created") as caught:
        open_store(str(hidden / "missing-dir" / "class.db"))
    assert "secret-place-42" not in str(caught.value) and "\n" not in str(caught.value)
    hidden.mkdir()
    store = open_store(str(hidden / "class.db"))
    room = store.create_class()
    ann = store.join(room.join_code, "Ann")
    assert "secret-place-42" not in repr(store) + repr(room) + repr(ann)
    assert room.teacher_key not in repr(room)
    with sqlite3.connect(hidden / "class.db") as raw:
        raw.execute("DROP TABLE answers")
    with pytest.raises(ClassroomError, match=r"^submit answer: the class database call failed") as caught:
        store.submit_answer(room.class_id, ann.student_id, "e1", "kv", "1", 1.0, True, None, "k")
    assert "secret-place-42" not in str(caught.value)
    store.close()


def test_two_processes_writing_at_once_record_every_answer_once(store, target):
    room = store.create_class()
    students = [store.join(room.join_code, f"s{i}").student_id for i in range(10)]
    keys = [f"box{i}" for i in range(25)]
    store.close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=answer_all, args=(target, room.class_id, students, keys, r, out)) for r in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert out.get(timeout=5) + out.get(timeout=5) == 250  # each answer sent by both, recorded by one
    assert count(store, Answer, room.class_id) == 250
    progress = store.progress(room.class_id, room.teacher_key, {"e1": keys})
    assert (progress.exercises[0].correct, progress.exercises[0].not_started) == (10, 0)


def test_processes_starting_together_migrate_once(target):
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=open_and_close, args=(target, out)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    store = open_store(**target)
    with store._engine.connect() as conn:
        assert conn.scalar(text("SELECT version_num FROM alembic_version")) == "0001"
    store.close()


def test_the_teacher_key_is_checked_without_holding_the_write_lock(tmp_path, monkeypatch):
    """scrypt takes tens of ms: checked inside a write transaction, a key guesser would stall every answer."""
    import core.classroom.store as store_module

    monkeypatch.delenv("DATABASE_URL", raising=False)
    store = open_store(str(tmp_path / "class.db"))
    room = store.create_class()
    checked = []

    def same_key_while_a_writer_gets_in(*args):
        with sqlite3.connect(tmp_path / "class.db", timeout=0, isolation_level=None) as raw:
            raw.execute("BEGIN IMMEDIATE")  # fails at once ("database is locked") if the store holds the lock
            raw.execute("ROLLBACK")
        checked.append(True)
        return real(*args)

    real = store_module.same_key
    monkeypatch.setattr(store_module, "same_key", same_key_while_a_writer_gets_in)
    store.set_exercise(room.class_id, room.teacher_key, "e2")
    with pytest.raises(ClassroomError, match="wrong teacher key"):
        store.progress(room.class_id, "guess", EXERCISES)
    assert checked == [True, True] and store.state(room.class_id).current_exercise == "e2"
    store.close()
