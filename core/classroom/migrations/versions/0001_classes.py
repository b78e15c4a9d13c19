"""The first schema: classes, students, answers and the indexes behind the teacher's counts.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "classes",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("join_code", sa.String(32), nullable=False),
        sa.Column("key_salt", sa.String(64), nullable=False),
        sa.Column("key_hash", sa.String(128), nullable=False),
        sa.Column("language", sa.String(8), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("retention_days", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("current_exercise", sa.String(64), nullable=True),
        sa.Column("revealed", sa.JSON(), nullable=False),
        sa.Column("timer_started_at", sa.DateTime(), nullable=True),
        sa.Column("timer_seconds", sa.Integer(), nullable=True),
        sa.UniqueConstraint("join_code"),
    )
    op.create_index("ix_classes_expires_at", "classes", ["expires_at"])
    op.create_table(
        "students",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("class_id", sa.String(32), sa.ForeignKey("classes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("nickname", sa.String(40), nullable=False),
        sa.Column("joined_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("class_id", "nickname", name="uq_students_class_nickname"),
    )
    op.create_index("ix_students_class_id", "students", ["class_id"])
    op.create_table(
        "answers",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("class_id", sa.String(32), sa.ForeignKey("classes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("student_id", sa.String(32), sa.ForeignKey("students.id", ondelete="CASCADE"), nullable=False),
        sa.Column("exercise_id", sa.String(64), nullable=False),
        sa.Column("box", sa.String(64), nullable=False),
        sa.Column("value_text", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("slip", sa.String(64), nullable=True),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
        sa.Column("idempotency_key", sa.String(64), nullable=False),
        sa.UniqueConstraint("student_id", "idempotency_key", name="uq_answers_student_key"),
    )
    op.create_index("ix_answers_class_exercise", "answers", ["class_id", "exercise_id", "student_id"])
    op.create_index("ix_answers_class_exercise_correct", "answers", ["class_id", "exercise_id", "correct"])


def downgrade() -> None:
    op.drop_table("answers")
    op.drop_table("students")
    op.drop_index("ix_classes_expires_at", "classes")
    op.drop_table("classes")
