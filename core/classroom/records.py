"""The values the class store hands the Workshop page, and its small helpers (hashing, text checks, CSV cells).

The teacher key is hashed with scrypt (N=2^14, r=8, p=1) and a per-class 16-byte salt; ``same_key`` compares with
``hmac.compare_digest``. Times are stored as naive UTC.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import delete
from sqlalchemy.orm import Session

from core.classroom.engine import ClassroomError
from core.classroom.schema import Answer, Classroom, Student

SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
RETENTION_DAYS = (1, 365)
TOP_WRONG = 3
MAX_STUDENTS = 500
"""Students one class holds (the issue's classes are 30-100): a runaway script cannot fill the database."""
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
"""Direction overrides that would make one nickname display as another."""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class NewClass:
    class_id: str
    join_code: str
    teacher_key: str = field(repr=False)  # shown to the teacher once; only its hash is stored


@dataclass(frozen=True)
class Overview:
    class_id: str
    join_code: str
    language: str
    retention_days: int
    expires_at: datetime


@dataclass(frozen=True)
class BoxAnswer:
    """One box of a check: as typed, its reading in the box's unit (None when unreadable), right or not, the slip."""

    box: str
    typed: str
    value: float | None
    correct: bool
    slip: str | None = None


@dataclass(frozen=True)
class Joined:
    class_id: str
    student_id: str
    nickname: str


@dataclass(frozen=True)
class ClassState:
    language: str
    current_exercise: str | None
    revealed: tuple[str, ...]
    timer_started_at: datetime | None
    timer_seconds: int | None


@dataclass(frozen=True)
class ExerciseCounts:
    """Students who have not answered, answered (not all right yet) and answered every box right (disjoint)."""

    exercise_id: str
    not_started: int
    answered: int
    correct: int
    wrong: tuple[tuple[str, str, str | None, int], ...]  # (box, value as typed, slip, students), most first


@dataclass(frozen=True)
class Progress:
    students: int
    exercises: tuple[ExerciseCounts, ...]
    roster: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Per student in the order they joined: the nickname and, per exercise asked, 0 not started, 1 answered
    (not every box right yet), 2 every box right."""


def utc(now: datetime | None) -> datetime:
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).replace(tzinfo=None) if now.tzinfo else now


def key_hash(key: str, salt: bytes) -> str:
    return hashlib.scrypt(key.encode(), salt=salt, maxmem=64 * 2**20, **SCRYPT).hex()


def checked_text(op: str, field: str, value: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ClassroomError(f"{op}: {field} must be 1 to {limit} characters", "invalid")
    if any(ord(c) < 32 or ord(c) == 127 or c in _BIDI for c in value):
        raise ClassroomError(f"{op}: {field} must not contain control or text-direction characters", "invalid")
    return value


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet will not run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


def answers_csv(rows) -> str:
    """The export's CSV: one row per answer (nickname, exercise, box, typed, value, correct, slip, time in UTC)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["nickname", "exercise", "box", "typed", "value", "correct", "slip", "submitted_at_utc"])
    for nick, ex, box, typed, value, ok, slip, at in rows:
        cells = (nick, ex, box, typed, "" if value is None else value, int(ok), slip or "", at.isoformat())
        writer.writerow([csv_cell(c) for c in cells])
    return out.getvalue()


def delete_classes(session: Session, ids: list[str]) -> None:
    if ids:
        session.execute(delete(Answer).where(Answer.class_id.in_(ids)))
        session.execute(delete(Student).where(Student.class_id.in_(ids)))
        session.execute(delete(Classroom).where(Classroom.id.in_(ids)))


def same_key(given: str, salt_hex: str, expected_hex: str) -> bool:
    return hmac.compare_digest(key_hash(given, bytes.fromhex(salt_hex)), expected_hex)


class Conflict(ClassroomError):
    """A unique constraint refused the write (a taken nickname, a resubmitted answer)."""
