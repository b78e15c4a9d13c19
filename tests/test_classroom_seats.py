"""The students' calls added for the class view (core/classroom/seats.py), the teacher's overview and the
per-session rate limits (core/classroom/limits.py), on a real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy.exc import SQLAlchemyError

from core.classroom.engine import ClassroomError
from core.classroom.limits import LIMITS, RateLimit
from core.classroom.records import BoxAnswer
from core.classroom.schema import Answer
from tests.test_classroom_store import count


def test_record_answer_keeps_each_change_once(store):
    room = store.create_class()
    ada = store.join(room.join_code, "Ada")
    rec = lambda typed, ok=False: store.record_answer(room.class_id, ada.student_id, "e1", "kv", typed, 1.0, ok, None)  # noqa: E731
    assert rec("1 GiB") is True
    assert rec("1 GiB") is False  # a resend (double click, failover): once
    assert rec("2 GiB", True) is True
    assert rec("1 GiB") is True  # an earlier answer typed again after another is a change
    assert rec("1 GiB") is False
    assert count(store, Answer, room.class_id) == 3
    assert store.my_answers(room.class_id, ada.student_id) == {("e1", "kv"): ("1 GiB", False)}


def test_record_answer_is_scoped_to_the_students_own_class(store):
    a, b = store.create_class(), store.create_class()
    ada = store.join(a.join_code, "Ada")
    with pytest.raises(ClassroomError, match="no such student"):
        store.record_answer(b.class_id, ada.student_id, "e1", "kv", "1", 1.0, True, None)
    assert store.my_answers(b.class_id, ada.student_id) == {}


def test_concurrent_sends_of_one_change_record_it_once(store):
    room = store.create_class()
    ada = store.join(room.join_code, "Ada")
    results: list[bool] = []

    def send() -> None:
        results.append(store.record_answer(room.class_id, ada.student_id, "e1", "kv", "7", 7.0, True, None))

    threads = [threading.Thread(target=send) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results.count(True) == 1 and count(store, Answer, room.class_id) == 1


def test_rejoin_needs_the_seat_and_its_class_join_code(store):
    a, b = store.create_class(), store.create_class()
    ada = store.join(a.join_code, "Ada")
    assert store.rejoin(a.join_code, ada.student_id) == ada
    for code, seat in ((b.join_code, ada.student_id), (a.join_code, "guess"), (a.join_code, None)):
        with pytest.raises(ClassroomError, match="rejoin: no such student"):
            store.rejoin(code, seat)


def test_overview_needs_the_key(store):
    room = store.create_class("zh", 9)
    seen = store.overview(room.class_id, room.teacher_key)
    assert (seen.join_code, seen.language, seen.retention_days) == (room.join_code, "zh", 9)
    with pytest.raises(ClassroomError, match="wrong teacher key"):
        store.overview(room.class_id, "guess")


def test_a_rate_limit_refills_over_its_window():
    limit = RateLimit(capacity=2, window_s=60.0)
    ok1, bucket, _ = limit.take(None, 0.0)
    ok2, bucket, _ = limit.take(bucket, 1.0)
    ok3, bucket, wait = limit.take(bucket, 2.0)
    assert (ok1, ok2, ok3) == (
        True,
        True,
        False,
    ) and wait == 28  # 1/30 of a call back per s: 0.07 left at 2 s, a whole one 28 s later
    assert limit.take(bucket, 32.0)[0] is True
    assert LIMITS["answer"].capacity >= 5  # a whole exercise's boxes are checked as one call


def test_the_roster_marks_each_student_per_exercise(store):
    room = store.create_class()
    ada, bob = store.join(room.join_code, "Ada"), store.join(room.join_code, "<b>Bob</b>")
    store.record_answer(room.class_id, ada.student_id, "e1", "weights", "1", 1.0, True, None)
    store.record_answer(room.class_id, ada.student_id, "e1", "kv", "2", 2.0, True, None)
    store.record_answer(room.class_id, bob.student_id, "e1", "kv", "3", 3.0, False, None)
    store.record_answer(room.class_id, bob.student_id, "e2", "tokens", "4", 4.0, True, None)
    progress = store.progress(room.class_id, room.teacher_key, {"e1": ["weights", "kv"], "e2": ["tokens"]})
    assert progress.roster == (("Ada", (2, 0)), ("<b>Bob</b>", (1, 2)))  # stored as given, escaped where shown


def test_a_check_is_recorded_whole_or_not_at_all(store, monkeypatch):
    """A process that dies mid-check must not leave half of it for the teacher (the failover run found one)."""
    import core.classroom.seats as seats

    room = store.create_class()
    ada = store.join(room.join_code, "Ada")
    check = [BoxAnswer("weights", "1", 1.0, True), BoxAnswer("kv", "2", 2.0, False, "kv_once")]
    real, calls = seats._row, []

    def dies_on_the_second(*args):
        calls.append(args)
        if len(calls) == 2:
            raise SQLAlchemyError("the connection went away")
        return real(*args)

    monkeypatch.setattr(seats, "_row", dies_on_the_second)
    with pytest.raises(ClassroomError):
        store.record_check(room.class_id, ada.student_id, "e1", check)
    assert count(store, Answer, room.class_id) == 0
    monkeypatch.setattr(seats, "_row", real)
    assert store.record_check(room.class_id, ada.student_id, "e1", check) == 2  # the resend records it all
    assert store.record_check(room.class_id, ada.student_id, "e1", check) == 0  # and once


def test_an_export_that_fails_says_so_in_the_file(store):
    from ui.classroom_dashboard import _export

    room = store.create_class()
    good = _export(store, room.class_id, room.teacher_key, "zh").decode("utf-8-sig")
    assert good.startswith("nickname,exercise,box")
    bad = _export(store, room.class_id, "guess", "zh").decode("utf-8-sig")
    assert bad.startswith("无法导出答案") and "Traceback" not in bad


def test_each_failure_has_a_kind_the_page_words(store):
    from core.classroom.engine import KINDS
    from ui.classroom import FAILURES

    assert set(FAILURES) == set(KINDS)
    room = store.create_class()
    store.join(room.join_code, "Ada")
    cases = {
        "no_class": lambda: store.join("no-such-code", "Eve"),
        "nickname_taken": lambda: store.join(room.join_code, "Ada"),
        "invalid": lambda: store.join(room.join_code, "x" * 41),
        "wrong_key": lambda: store.progress(room.class_id, "guess", {}),
    }
    for kind, call in cases.items():
        with pytest.raises(ClassroomError) as caught:
            call()
        assert caught.value.kind == kind
