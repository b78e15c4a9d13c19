"""The class load run (bench/classroom_load.py), as issue 32's "done when" asks: 30 simulated students answer the
seven exercises on one server with the teacher's view open, every answer recorded once and the teacher's counts
equal to what the students sent, on SQLite and on PostgreSQL; and a failover behind HAProxy loses nothing.

The bench's own oracle (what it expects the teacher to see) is checked against ``store.progress`` without any
server first, so a run that agrees with it agrees with the store's rules. Timing is printed, never asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from classroom_class import BOXES, EXERCISES, Tally, _verdicts, expected_counts, plan
from classroom_load import run_class

from core.classroom.store import open_store
from tests.classroom_pg import postgres_server, require_postgres
from tests.room_helpers import require_haproxy

QUICK = (0.05, 0.2)  # think time [s]: the test wants every answer, not a realistic pace


def _clean(result: dict, students: int) -> None:
    print({k: result[k] for k in ("round_trip_ms", "checks_sent", "answers_recorded", "reconnects", "wall_s")})
    assert result["errors"] == [] and result["wrong_page"] == []
    assert result["students_joined"] == result["students_finished"] == students
    assert result["answers_recorded"] == result["answers_intended"] > 0
    assert result["lost"] == 0 and result["duplicates"] == 0
    assert result["teacher_table"] == result["bench_tally"] == result["store_progress"]
    assert result["teacher_equal"] is True


def test_the_bench_expects_what_the_store_counts(tmp_path):
    """Plans with slips and answers left wrong, sent twice over (a resend is recorded once): the bench's tally
    gives the store's progress and its rows."""
    store = open_store(tmp_path / "c.db")
    room = store.create_class("en", 1)
    tally, seats = Tally(), []
    for i in range(12):
        seat = store.join(room.join_code, f"s{i}").student_id
        seats.append(seat)
        for ex, typed in plan(7, i)[: 3 + i % 6]:  # some students stop early: not started counts too
            verdicts = _verdicts(ex, typed)
            tally.sent(seat, ex, typed, verdicts)
            for _ in range(2):
                for box, value in typed.items():
                    store.record_answer(room.class_id, seat, ex, box, value, float(value), verdicts[box], None)
    progress = store.progress(room.class_id, room.teacher_key, {ex: [b.name for b in BOXES[ex]] for ex in EXERCISES})
    counts = [(e.not_started, e.answered, e.correct) for e in progress.exercises]
    assert counts == expected_counts(tally, seats)
    assert {n for row in counts for n in row[1:2]} != {0}, "some students left an answer wrong"
    rows = store.export_csv(room.class_id, room.teacher_key).splitlines()[1:]
    assert len(rows) == sum(len(v) for v in tally.changes.values())  # each change once, the resends not
    store.close()


def test_plans_have_slips_and_wrong_answers_the_checker_sees():
    checks = [c for i in range(30) for c in plan(0, i)]
    wrong = [(ex, typed) for ex, typed in checks if not all(_verdicts(ex, typed).values())]
    assert len(checks) > 30 * len(EXERCISES) and wrong  # slips made, then corrected
    assert all(sum(not ok for ok in _verdicts(ex, typed).values()) == 1 for ex, typed in wrong)


def test_thirty_students_on_one_server_sqlite():
    _clean(run_class(30, 240, servers=1, think=QUICK, seed=1), 30)


@pytest.fixture(scope="module")
def pg():
    require_postgres()
    with postgres_server() as running:
        yield running


def test_thirty_students_on_one_server_postgresql(pg):
    result = run_class(30, 240, servers=1, database_url=pg.new_database(), think=QUICK, seed=2)
    assert result["database"] == "postgresql"
    _clean(result, 30)


def test_a_process_killed_mid_class_loses_no_answer():
    require_haproxy()
    result = run_class(10, 240, servers=2, haproxy=True, kill_one=True, think=(0.3, 0.8), seed=3)
    assert result["killed"] is not None and result["reconnects"] > 0 and result["checks_resent"] > 0
    _clean(result, 10)
