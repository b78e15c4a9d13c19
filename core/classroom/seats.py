"""The students' calls on the class database, mixed into :class:`~core.classroom.store.ClassStore`.

``join`` takes a nickname and gives a seat (a student id, 128 bits from ``secrets``) that the student's link keeps,
so ``rejoin`` finds them again after a reload or on another process. ``record_answer`` stores a box's answer once
per change; ``submit_answer`` is the lower call with the client's own idempotency key. ``state`` is what every
student's page follows: the current exercise, the revealed ones, the timer.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.classroom.engine import ClassroomError
from core.classroom.records import MAX_STUDENTS, BoxAnswer, ClassState, Conflict, Joined, checked_text, utc
from core.classroom.schema import KEY_MAX, NICKNAME_MAX, VALUE_MAX, Answer, Classroom, Student

RECORD_TRIES = 3
"""Tries of ``record_answer`` when a concurrent change of the same box took its slot (two tabs, PostgreSQL)."""


class StudentCalls:
    _session: Callable[[str], AbstractContextManager[Session]]

    def join(self, join_code: str, nickname: str, now: datetime | None = None) -> Joined:
        nickname = checked_text("join", "nickname", nickname, NICKNAME_MAX).strip()
        try:
            with self._session("join") as session:
                room = session.scalars(select(Classroom).where(Classroom.join_code == str(join_code))).first()
                if room is None:
                    raise ClassroomError("join: no class has this join code", "no_class")
                size = select(func.count()).select_from(Student).where(Student.class_id == room.id)
                if session.scalar(size) >= MAX_STUDENTS:
                    raise ClassroomError(f"join: the class is full ({MAX_STUDENTS} students)", "class_full")
                student = Student(id=secrets.token_urlsafe(16), class_id=room.id, nickname=nickname, joined_at=utc(now))
                session.add(student)
                session.flush()
        except Conflict:
            raise ClassroomError(
                "join: this nickname is taken in the class; choose another", "nickname_taken"
            ) from None
        return Joined(room.id, student.id, nickname)

    def rejoin(self, join_code: str, student_id: str) -> Joined:
        """The seat a student's link names (after a reload, or on another process when theirs went down)."""
        row = None
        if isinstance(join_code, str) and isinstance(student_id, str):
            with self._session("rejoin") as session:
                row = session.execute(
                    select(Student.class_id, Student.id, Student.nickname)
                    .join(Classroom, Classroom.id == Student.class_id)
                    .where(Classroom.join_code == join_code, Student.id == student_id)
                ).first()
        if row is None:
            raise ClassroomError("rejoin: no such student in this class", "no_class")
        return Joined(*row)

    def submit_answer(
        self,
        class_id: str,
        student_id: str,
        exercise_id: str,
        box: str,
        typed: str,
        value: float | None,
        correct: bool,
        slip: str | None,
        idempotency_key: str,
        now: datetime | None = None,
    ) -> bool:
        """Record one answer; ``False`` when this student already sent ``idempotency_key`` (recorded once)."""
        op = "submit answer"
        _checked_answer(op, exercise_id, box, typed)
        checked_text(op, "idempotency_key", idempotency_key, KEY_MAX)
        row = _row(class_id, student_id, exercise_id, box, typed, value, correct, slip, idempotency_key, now)
        try:
            with self._session(op) as session:
                _owned(session, op, class_id, student_id)
                dup = select(Answer.id).where(
                    Answer.student_id == student_id, Answer.idempotency_key == idempotency_key
                )
                if session.scalar(dup) is not None:
                    return False
                session.add(row)
                session.flush()
        except Conflict:  # a concurrent resubmission won the race: recorded once
            return False
        return True

    def record_answer(
        self,
        class_id: str,
        student_id: str,
        exercise_id: str,
        box: str,
        typed: str,
        value: float | None,
        correct: bool,
        slip: str | None,
        now: datetime | None = None,
    ) -> bool:
        """Record a box's answer unless it equals the student's latest one for that box (then ``False``)."""
        return (
            self.record_check(class_id, student_id, exercise_id, [BoxAnswer(box, typed, value, correct, slip)], now)
            == 1
        )

    def record_check(
        self,
        class_id: str,
        student_id: str,
        exercise_id: str,
        answers: Sequence[BoxAnswer],
        now: datetime | None = None,
    ) -> int:
        """Record one check of an exercise's boxes in one transaction (the teacher never sees half a check); the
        number of rows added. A box whose answer equals the student's latest one for it is skipped.

        A check sent twice (a double click, a page resent after its process went down) is so recorded once, while
        a changed answer, or an earlier one typed again after another, is recorded anew. A row's idempotency key
        is its box's answer count, so two concurrent sends of one change insert one row (the unique constraint);
        a concurrent different change that took the slot is followed by a retry of the whole check."""
        op = "submit answer"
        for a in answers:
            _checked_answer(op, exercise_id, a.box, a.typed)
        for _ in range(RECORD_TRIES):
            try:
                with self._session(op) as session:
                    _owned(session, op, class_id, student_id)
                    added = 0
                    for a in answers:
                        mine = (Answer.student_id == student_id, Answer.exercise_id == exercise_id, Answer.box == a.box)
                        count = session.scalar(select(func.count()).select_from(Answer).where(*mine))
                        latest = session.scalar(
                            select(Answer.value_text).where(*mine).order_by(Answer.id.desc()).limit(1)
                        )
                        if latest == a.typed:
                            continue
                        key = f"{exercise_id}/{a.box}#{count}"
                        row = _row(
                            class_id, student_id, exercise_id, a.box, a.typed, a.value, a.correct, a.slip, key, now
                        )
                        session.add(row)
                        session.flush()
                        added += 1
                return added
            except Conflict:
                continue
        raise ClassroomError(f"{op}: the answer could not be recorded (the box kept changing); send it again")

    def my_answers(self, class_id: str, student_id: str) -> dict[tuple[str, str], tuple[str, bool]]:
        """A student's latest answer per (exercise, box): what their boxes show again after a reload."""
        with self._session("my answers") as session:
            rows = session.execute(
                select(Answer.exercise_id, Answer.box, Answer.value_text, Answer.correct)
                .where(Answer.class_id == class_id, Answer.student_id == student_id)
                .order_by(Answer.id)
            ).all()
        return {(ex, box): (typed, bool(ok)) for ex, box, typed, ok in rows}

    def state(self, class_id: str) -> ClassState:
        """What every student's page follows: the current exercise, the revealed ones, the timer."""
        with self._session("class state") as session:
            room = session.get(Classroom, class_id) if isinstance(class_id, str) else None
            if room is None:
                raise ClassroomError("class state: no such class", "no_class")
            return ClassState(
                room.language, room.current_exercise, tuple(room.revealed), room.timer_started_at, room.timer_seconds
            )


def _checked_answer(op: str, exercise_id: str, box: str, typed: str) -> None:
    checked_text(op, "exercise", exercise_id, KEY_MAX)
    checked_text(op, "box", box, KEY_MAX)
    if not isinstance(typed, str) or len(typed) > VALUE_MAX:
        raise ClassroomError(f"{op}: the answer must be at most {VALUE_MAX} characters", "invalid")


def _owned(session: Session, op: str, class_id: str, student_id: str) -> None:
    owner = session.scalar(select(Student.class_id).where(Student.id == student_id))
    if owner is None or owner != class_id:
        raise ClassroomError(f"{op}: no such student in this class", "no_class")


def _row(class_id, student_id, exercise_id, box, typed, value, correct, slip, key, now) -> Answer:
    return Answer(
        class_id=class_id,
        student_id=student_id,
        exercise_id=exercise_id,
        box=box,
        value_text=typed,
        value=None if value is None else float(value),
        correct=bool(correct),
        slip=slip,
        submitted_at=utc(now),
        idempotency_key=key,
    )
