"""The class database's tables, as SQLAlchemy 2 typed ORM classes.

A class (``classes``) holds its unguessable join code, the teacher key's salted scrypt hash (never the key), the
retention and what the teacher steers (current exercise, revealed exercises, timer). A student (``students``) is a
nickname in one class, nothing else. An answer (``answers``) is one box submitted once: the client's idempotency
key is unique per student, so a resubmission is recorded once. Times are naive UTC.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NICKNAME_MAX = 40
"""Characters of a nickname, stored as given (escaped only where shown)."""
VALUE_MAX = 200
"""Characters of an answer as typed."""
KEY_MAX = 64
"""Characters of a client's idempotency key, an exercise id, a box name or a slip name."""


class Base(DeclarativeBase):
    pass


class Classroom(Base):
    __tablename__ = "classes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    join_code: Mapped[str] = mapped_column(String(32), unique=True)
    key_salt: Mapped[str] = mapped_column(String(64))
    key_hash: Mapped[str] = mapped_column(String(128))
    language: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    retention_days: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    current_exercise: Mapped[str | None] = mapped_column(String(KEY_MAX))
    revealed: Mapped[list[str]] = mapped_column(JSON, default=list)
    timer_started_at: Mapped[datetime | None] = mapped_column(DateTime)
    timer_seconds: Mapped[int | None] = mapped_column(Integer)

    def __repr__(self) -> str:  # never the join code or the key's hash
        return f"Classroom(id={self.id!r})"


class Student(Base):
    __tablename__ = "students"
    __table_args__ = (UniqueConstraint("class_id", "nickname", name="uq_students_class_nickname"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    class_id: Mapped[str] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), index=True)
    nickname: Mapped[str] = mapped_column(String(NICKNAME_MAX))
    joined_at: Mapped[datetime] = mapped_column(DateTime)

    def __repr__(self) -> str:
        return f"Student(id={self.id!r}, class_id={self.class_id!r})"


class Answer(Base):
    __tablename__ = "answers"
    __table_args__ = (
        UniqueConstraint("student_id", "idempotency_key", name="uq_answers_student_key"),
        Index("ix_answers_class_exercise", "class_id", "exercise_id", "student_id"),
        Index("ix_answers_class_exercise_correct", "class_id", "exercise_id", "correct"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    class_id: Mapped[str] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    student_id: Mapped[str] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    exercise_id: Mapped[str] = mapped_column(String(KEY_MAX))
    box: Mapped[str] = mapped_column(String(KEY_MAX))
    value_text: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float)
    correct: Mapped[bool] = mapped_column(Boolean)
    slip: Mapped[str | None] = mapped_column(String(KEY_MAX))
    submitted_at: Mapped[datetime] = mapped_column(DateTime)
    idempotency_key: Mapped[str] = mapped_column(String(KEY_MAX))
