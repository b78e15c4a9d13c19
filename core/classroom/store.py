"""The calls the Workshop page makes on the class database; every one is scoped by class id.

Students: ``join`` with the join code and a nickname, ``submit_answer`` (idempotent on the client's key), ``state``
(current exercise, revealed exercises, timer). The teacher, with the key shown once by ``create_class``:
``progress``, ``set_exercise``, ``reveal``, ``start_timer``, ``export_csv``, ``delete_class``. ``purge_expired``
deletes the classes past their retention. A wrong key, an unknown class and a failed database call all raise
``ClassroomError`` with one line naming the operation and no data. The teacher key is kept as a salted scrypt hash
and compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from core.classroom.engine import ClassroomError, backend_name, make_engine, upgrade
from core.classroom.records import (
    RETENTION_DAYS,
    TOP_WRONG,
    Conflict,
    ExerciseCounts,
    NewClass,
    Overview,
    Progress,
    answers_csv,
    checked_text,
    delete_classes,
    key_hash,
    same_key,
    utc,
)
from core.classroom.schema import KEY_MAX, Answer, Classroom, Student
from core.classroom.seats import StudentCalls

_NO_SALT = "00" * 16
_NO_HASH = key_hash("", bytes(16))


class ClassStore(StudentCalls):
    """The class database behind one engine; its repr names only the backend."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def __repr__(self) -> str:
        return f"ClassStore({backend_name(self._engine)})"

    def close(self) -> None:
        """Close the engine's pooled connections (a process about to exit, a test's end)."""
        self._engine.dispose()

    @property
    def backend(self) -> str:
        return backend_name(self._engine)

    @contextmanager
    def _session(self, op: str) -> Iterator[Session]:
        try:
            with self._sessions.begin() as session:
                yield session
        except IntegrityError:
            raise Conflict(f"{op}: a unique value is already taken") from None
        except SQLAlchemyError as exc:
            raise ClassroomError(f"{op}: the class database call failed ({type(exc).__name__})") from None

    def _verify(self, op: str, class_id: str, teacher_key: str) -> None:
        """Check the key outside any write transaction (scrypt takes tens of ms; SQLite writers must not wait)."""
        row = None
        if isinstance(class_id, str):
            with self._session(op) as session:
                row = session.execute(
                    select(Classroom.key_salt, Classroom.key_hash).where(Classroom.id == class_id)
                ).first()
        given = teacher_key if isinstance(teacher_key, str) else ""
        salt, expected = tuple(row) if row else (_NO_SALT, _NO_HASH)  # the same work for an unknown class
        if not same_key(given, salt, expected) or row is None:
            raise ClassroomError(f"{op}: wrong teacher key or no such class", "wrong_key")

    @staticmethod
    def _room(session: Session, op: str, class_id: str) -> Classroom:
        room = session.get(Classroom, class_id)
        if room is None:  # deleted since the key was checked
            raise ClassroomError(f"{op}: wrong teacher key or no such class", "wrong_key")
        return room

    # -- the teacher's calls -------------------------------------------------------------------------------------
    def create_class(self, language: str = "en", retention_days: int = 30, now: datetime | None = None) -> NewClass:
        if language not in ("en", "zh"):
            raise ClassroomError(f"create class: language must be en or zh, not {language!r}", "invalid")
        lo, hi = RETENTION_DAYS
        if not isinstance(retention_days, int) or not lo <= retention_days <= hi:
            raise ClassroomError(f"create class: retention_days must be a whole number from {lo} to {hi}", "invalid")
        key, salt, at = secrets.token_urlsafe(24), secrets.token_bytes(16), utc(now)
        room = Classroom(
            id=secrets.token_urlsafe(16),
            join_code=secrets.token_urlsafe(12),
            key_salt=salt.hex(),
            key_hash=key_hash(key, salt),
            language=language,
            created_at=at,
            retention_days=retention_days,
            expires_at=at + timedelta(days=retention_days),
            revealed=[],
        )
        with self._session("create class") as session:
            session.add(room)
        return NewClass(room.id, room.join_code, key)

    def overview(self, class_id: str, teacher_key: str) -> Overview:
        """The class as its teacher sees it: the join code (for the link), language, retention and expiry."""
        self._verify("open class", class_id, teacher_key)
        with self._session("open class") as session:
            room = self._room(session, "open class", class_id)
            return Overview(room.id, room.join_code, room.language, room.retention_days, room.expires_at)

    def progress(self, class_id: str, teacher_key: str, exercises: Mapping[str, Sequence[str]]) -> Progress:
        """Per exercise (its boxes listed), the counts; a student is correct when each box's latest answer is."""
        self._verify("progress", class_id, teacher_key)
        with self._session("progress") as session:
            self._room(session, "progress", class_id)
            students = session.execute(
                select(Student.id, Student.nickname).where(Student.class_id == class_id).order_by(Student.joined_at)
            ).all()
            rows = session.execute(
                select(
                    Answer.student_id, Answer.exercise_id, Answer.box, Answer.value_text, Answer.correct, Answer.slip
                )
                .where(Answer.class_id == class_id, Answer.exercise_id.in_(list(exercises)))
                .order_by(Answer.id)
            ).all()
        latest: dict[str, dict[str, dict[str, bool]]] = {e: {} for e in exercises}
        wrong: dict[str, dict[tuple[str, str, str | None], set[str]]] = {e: {} for e in exercises}
        for student, ex, box, typed, ok, slip in rows:
            latest[ex].setdefault(student, {})[box] = bool(ok)
            if not ok:
                wrong[ex].setdefault((box, typed.strip(), slip), set()).add(student)

        def right(marks: dict[str, bool], boxes: Sequence[str]) -> bool:
            return bool(marks) and all(marks.get(b, False) for b in (boxes or marks))

        counts = []
        for ex, boxes in exercises.items():
            done = sum(1 for marks in latest[ex].values() if right(marks, boxes))
            seen = len(latest[ex])
            top = sorted(((k, len(v)) for k, v in wrong[ex].items()), key=lambda kv: (-kv[1], kv[0][0], kv[0][1]))
            counts.append(
                ExerciseCounts(ex, len(students) - seen, seen - done, done, tuple((*k, n) for k, n in top[:TOP_WRONG]))
            )
        roster = tuple(
            (
                nickname,
                tuple(
                    2 if right(latest[ex].get(sid, {}), boxes) else 1 if sid in latest[ex] else 0
                    for ex, boxes in exercises.items()
                ),
            )
            for sid, nickname in students
        )
        return Progress(len(students), tuple(counts), roster)

    def _steer(self, op: str, class_id: str, teacher_key: str, **changes: object) -> None:
        self._verify(op, class_id, teacher_key)
        with self._session(op) as session:
            room = self._room(session, op, class_id)
            for name, value in changes.items():
                setattr(room, name, value)

    def set_exercise(self, class_id: str, teacher_key: str, exercise_id: str) -> None:
        """Move everyone to ``exercise_id``."""
        self._steer(
            "set exercise",
            class_id,
            teacher_key,
            current_exercise=checked_text("set exercise", "exercise", exercise_id, KEY_MAX),
        )

    def reveal(self, class_id: str, teacher_key: str, exercise_id: str) -> None:
        checked_text("reveal", "exercise", exercise_id, KEY_MAX)
        self._verify("reveal", class_id, teacher_key)
        with self._session("reveal") as session:
            room = self._room(session, "reveal", class_id)
            if exercise_id not in room.revealed:
                room.revealed = [*room.revealed, exercise_id]

    def start_timer(self, class_id: str, teacher_key: str, seconds: int | None, now: datetime | None = None) -> None:
        """Start a timer of ``seconds`` from ``now``; ``None`` stops it."""
        if seconds is not None and (not isinstance(seconds, int) or not 1 <= seconds <= 24 * 3600):
            raise ClassroomError("timer: seconds must be a whole number from 1 to 86400", "invalid")
        started = utc(now) if seconds is not None else None
        self._steer("timer", class_id, teacher_key, timer_started_at=started, timer_seconds=seconds)

    def export_csv(self, class_id: str, teacher_key: str) -> str:
        """Every answer of the class, oldest first, as CSV (cells a spreadsheet would run are quoted with ')."""
        self._verify("export", class_id, teacher_key)
        with self._session("export") as session:
            self._room(session, "export", class_id)
            rows = session.execute(
                select(
                    Student.nickname,
                    Answer.exercise_id,
                    Answer.box,
                    Answer.value_text,
                    Answer.value,
                    Answer.correct,
                    Answer.slip,
                    Answer.submitted_at,
                )
                .join(Student, Student.id == Answer.student_id)
                .where(Answer.class_id == class_id, Student.class_id == class_id)
                .order_by(Answer.id)
            ).all()
        return answers_csv(rows)

    def delete_class(self, class_id: str, teacher_key: str) -> None:
        self._verify("delete class", class_id, teacher_key)
        with self._session("delete class") as session:
            self._room(session, "delete class", class_id)
            delete_classes(session, [class_id])

    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete every class past its retention; the number deleted."""
        with self._session("purge") as session:
            ids = session.scalars(select(Classroom.id).where(Classroom.expires_at <= utc(now))).all()
            delete_classes(session, list(ids))
        return len(ids)


def open_store(path: str | None = None, url: str | None = None) -> ClassStore:
    """The store on ``url``, ``DATABASE_URL`` or the SQLite file ``path``, its schema migrated to the newest."""
    engine = make_engine(path, url)
    upgrade(engine)
    return ClassStore(engine)
