"""The students' calls added for the class view (core/classroom/seats.py), the teacher's overview and the
per-session rate limits (core/classroom/limits.py), on a real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import threading

import pytest

from core.classroom.engine import ClassroomError
from core.classroom.limits import LIMITS, RateLimit
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
