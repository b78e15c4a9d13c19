"""The teacher's side of a class on the Workshop page: starting one (the key shown once), opening it again with
the key (``?teach=<class id>``; the key is never in a link), the join link and its QR code, the live view
(progress per exercise, the most common wrong answers, the timer), the steering (move everyone, reveal an answer,
start or stop the timer), projector mode (large type, no sidebar), the CSV export and deleting the class.

Every call on the database checks the key again (:meth:`core.classroom.store.ClassStore._verify`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from core.classroom.engine import ClassroomError
from core.classroom.records import RETENTION_DAYS
from core.teaching.answer_boxes import box, boxes
from core.teaching.exercises import Exercise
from ui import classroom
from ui.classroom_student import remaining_s, timer_text
from ui.i18n import LANGUAGE_NAMES, lang, t

TEACHER = "class_teacher"
"""Session key: the :class:`Teacher` of the class this browser opened."""
SHOW_KEY = "class_show_key"
"""Session key: the new class's key, shown until the teacher says it is saved, then never again."""
TEACHER_POLL_S = 3
"""How often the teacher's view reads the class again [s]."""
TIMER_MINUTES = (1, 180)


@dataclass(frozen=True)
class Teacher:
    class_id: str
    key: str = field(repr=False)
    join_code: str = field(repr=False)
    language: str = "en"


def teacher() -> Teacher | None:
    """The class this session teaches: kept in the session, else opened with the key typed for ``?teach=``."""
    wanted = st.query_params.get(classroom.TEACH_PARAM)
    kept: Teacher | None = st.session_state.get(TEACHER)
    if kept is not None and wanted in (None, kept.class_id):
        st.query_params[classroom.TEACH_PARAM] = kept.class_id
        return kept
    if not wanted:
        return None
    st.session_state.pop(TEACHER, None)
    st.subheader(t("classroom.teacher_login"), anchor=False)
    with st.form("class_teacher_login", border=True):
        key = st.text_input(t("classroom.teacher_key"), key="class_teacher_key", type="password", max_chars=64)
        sent = st.form_submit_button(t("classroom.teacher_open"), key="class_teacher_open", type="primary")
    if not sent or not classroom.allowed("teacher_key"):
        return None
    db = classroom.store()
    if db is None:
        return None
    try:
        room = db.overview(wanted, key)
    except ClassroomError as err:
        classroom.failed(err)
        return None
    st.session_state[TEACHER] = Teacher(room.class_id, key, room.join_code, room.language)
    st.session_state.pop("class_teacher_key", None)
    st.rerun()


def render_start() -> None:
    """The form that starts a class (its language and how long its answers are kept)."""
    with st.expander(t("classroom.start_heading"), icon=":material/co_present:"):
        st.markdown(t("classroom.start_caption"))
        with st.form("class_start", border=False):
            language = st.selectbox(
                t("classroom.language"),
                list(LANGUAGE_NAMES),
                index=list(LANGUAGE_NAMES).index(lang()),
                format_func=LANGUAGE_NAMES.get,
                key="class_language",
            )
            lo, hi = RETENTION_DAYS
            days = st.number_input(
                t("classroom.retention"), lo, hi, 30, step=1, key="class_retention", help=t("classroom.retention_help")
            )
            sent = st.form_submit_button(t("classroom.start"), key="class_start_submit", type="primary")
        if not sent or not classroom.allowed("create"):
            return
        db = classroom.store()
        if db is None:
            return
        try:
            made = db.create_class(language, int(days))
        except ClassroomError as err:
            classroom.failed(err)
            return
        st.session_state[TEACHER] = Teacher(made.class_id, made.teacher_key, made.join_code, language)
        st.session_state[SHOW_KEY] = made.teacher_key
        st.query_params[classroom.TEACH_PARAM] = made.class_id
        st.rerun()


def projector() -> bool:
    return st.query_params.get(classroom.PROJECTOR_PARAM) == "1"


def projector_style() -> None:
    st.html(
        "<style>"
        "section[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],header[data-testid='stHeader']"
        "{display:none !important}"
        "[data-testid='stMainBlockContainer']{max-width:100%;font-size:1.6rem}"
        "[data-testid='stMetricValue']{font-size:4rem}"
        "[data-testid='stMainBlockContainer'] p,[data-testid='stMainBlockContainer'] td{font-size:1.6rem}"
        "</style>"
    )


def key_once(teacher_: Teacher) -> None:
    """The new class's key until the teacher says it is saved; never on the projector."""
    if st.session_state.get(SHOW_KEY) != teacher_.key or projector():
        return
    st.warning(t("classroom.key_once"), icon=":material/key:")
    st.code(teacher_.key, language=None)
    if st.button(t("classroom.key_saved"), key="class_key_saved"):
        st.session_state.pop(SHOW_KEY, None)
        st.rerun()


def links(teacher_: Teacher, root: str) -> None:
    link = classroom.class_link(root, teacher_.join_code, teacher_.language)
    left, right = st.columns([1, 2])
    left.image(classroom.qr_svg(link), width=320 if projector() else 220)
    right.markdown(t("classroom.join_link"))
    right.code(link, language=None, wrap_lines=True)
    if not projector():
        right.caption(t("classroom.teacher_link"))
        right.code(classroom.teacher_link(root, teacher_.class_id), language=None, wrap_lines=True)


def progress_frame(progress, exercises: tuple[Exercise, ...]) -> pd.DataFrame:
    """Per exercise: students not started, answered (not all right yet), all right."""
    counts = {c.exercise_id: c for c in progress.exercises}
    rows = [
        (
            f"{ex.number}. {t(ex.title)}",
            counts[ex.id].not_started,
            counts[ex.id].answered,
            counts[ex.id].correct,
        )
        for ex in exercises
    ]
    names = [t("classroom.col_exercise"), t("classroom.col_not_started"), t("classroom.col_answered")]
    return pd.DataFrame(rows, columns=[*names, t("classroom.col_correct")])


MARKS = ("", "…", "✓")
"""A student's mark per exercise in the roster: not started, answered (not every box right yet), every box right."""


def roster_frame(progress, exercises: tuple[Exercise, ...]) -> pd.DataFrame:
    """One row per student (their nickname as given: a table never reads it as Markdown), a mark per exercise."""
    rows = [(nickname, *(MARKS[m] for m in marks)) for nickname, marks in progress.roster]
    return pd.DataFrame(rows, columns=[t("classroom.col_nickname"), *(str(ex.number) for ex in exercises)])


def _slip_text(exercise_id: str, box_name: str, slip: str | None) -> str:
    if slip is None:
        return ""
    fields = dict(next((s.fields for s in box(exercise_id, box_name).slips if s.key == slip), ()))
    return t(f"answer_check.slip_{slip}", **fields)


def wrong_frame(progress, exercises: tuple[Exercise, ...]) -> pd.DataFrame:
    """The most common wrong answers per exercise, as typed (shown in a table: never read as Markdown)."""
    numbers = {ex.id: ex.number for ex in exercises}
    rows = [
        (numbers[c.exercise_id], t(box(c.exercise_id, b).label), typed, _slip_text(c.exercise_id, b, slip), n)
        for c in progress.exercises
        for b, typed, slip, n in c.wrong
    ]
    columns = ["col_exercise", "col_box", "col_typed", "col_slip", "col_students"]
    return pd.DataFrame(rows, columns=[t(f"classroom.{c}") for c in columns])


def live_view(teacher_: Teacher, exercises: tuple[Exercise, ...]) -> None:
    @st.fragment(run_every=TEACHER_POLL_S)
    def live() -> None:
        db = classroom.store()
        if db is None:
            return
        try:
            progress = db.progress(
                teacher_.class_id, teacher_.key, {ex.id: [b.name for b in boxes(ex.id)] for ex in exercises}
            )
            state = db.state(teacher_.class_id)
        except ClassroomError as err:
            classroom.failed(err)
            return
        current = next((ex for ex in exercises if ex.id == state.current_exercise), None)
        a, b, c = st.columns(3)
        a.metric(t("classroom.students"), progress.students)
        b.metric(t("classroom.current"), f"{current.number}. {t(current.title)}" if current else "–")
        c.metric(t("classroom.timer"), timer_text(remaining_s(state)) or "–")
        st.dataframe(progress_frame(progress, exercises), hide_index=True, width="stretch")
        if not projector():  # who is behind is for the teacher, not the room
            with st.expander(t("classroom.roster_heading", n=progress.students), icon=":material/person_search:"):
                st.dataframe(roster_frame(progress, exercises), hide_index=True, width="stretch")
        wrong = wrong_frame(progress, exercises)
        st.markdown(f"**{t('classroom.wrong_heading')}**")
        if wrong.empty:
            st.caption(t("classroom.no_wrong"))
        else:
            st.dataframe(wrong, hide_index=True, width="stretch")

    live()
