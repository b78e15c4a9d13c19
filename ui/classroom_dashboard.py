"""The teacher's controls and the view they sit in (:mod:`ui.classroom_teacher` draws its parts): move everyone
to an exercise, reveal its answer to the class, start or stop the timer, projector mode, the CSV export, deleting
the class, and letting go of it in this browser."""

from __future__ import annotations

import functools

import streamlit as st

from core.classroom.engine import ClassroomError
from core.messages import message
from core.teaching.exercises import Exercise
from ui import classroom
from ui.classroom_teacher import (
    SHOW_KEY,
    TEACHER,
    TIMER_MINUTES,
    Teacher,
    key_once,
    links,
    live_view,
    projector,
    projector_style,
)
from ui.download import download_button
from ui.i18n import lang, t


def _call(method: str, *args) -> bool:
    db = classroom.store()
    if db is None:
        return False
    try:
        getattr(db, method)(*args)
    except ClassroomError as err:
        classroom.failed(err)
        return False
    return True


def _steer(teacher_: Teacher, exercises: tuple[Exercise, ...]) -> None:
    """Move everyone, reveal an answer, the timer, projector mode, the export, deleting the class."""
    cid, key = teacher_.class_id, teacher_.key
    by_number = {str(ex.number): ex for ex in exercises}
    left, right = st.columns(2)
    with left.container(border=True):
        labels = {f"{n}. {t(ex.title)}": ex for n, ex in by_number.items()}  # plain labels: AppTest reads them
        ex = labels[st.selectbox(t("classroom.steer_exercise"), list(labels), key="class_steer_exercise")]
        if st.button(t("classroom.move"), key="class_move", icon=":material/groups:") and _call(
            "set_exercise", cid, key, ex.id
        ):
            st.success(t("classroom.moved", number=ex.number))
        if st.button(t("classroom.reveal"), key="class_reveal", icon=":material/visibility:") and _call(
            "reveal", cid, key, ex.id
        ):
            st.success(t("classroom.revealed", number=ex.number))
    with right.container(border=True):
        lo, hi = TIMER_MINUTES
        minutes = st.number_input(t("classroom.timer_minutes"), lo, hi, 10, step=1, key="class_timer_minutes")
        start, stop = st.columns(2)
        if start.button(t("classroom.timer_start"), key="class_timer_start", icon=":material/timer:"):
            _call("start_timer", cid, key, int(minutes) * 60)
        if stop.button(t("classroom.timer_stop"), key="class_timer_stop", icon=":material/timer_off:"):
            _call("start_timer", cid, key, None)
    tools = st.columns(3)
    if tools[0].button(t("classroom.projector_on"), key="class_projector", icon=":material/tv:"):
        st.query_params[classroom.PROJECTOR_PARAM] = "1"
        st.rerun()
    db = classroom.store()
    download_button(
        tools[1],
        t("classroom.export"),
        functools.partial(_export, db, cid, key, lang()),
        disabled=db is None,
        file_name="class-results.csv",
        mime="text/csv",
        key="class_export",
        icon=":material/download:",
    )
    with tools[2].popover(t("classroom.delete"), icon=":material/delete:"):
        st.markdown(t("classroom.delete_warning"))
        if st.button(t("classroom.delete_confirm"), key="class_delete", type="primary") and _call(
            "delete_class", cid, key
        ):
            forget()
            st.rerun()
    if st.button(t("classroom.leave"), key="class_leave", help=t("classroom.leave_help")):
        forget()
        st.rerun()


def _export(db, class_id: str, key: str, language: str) -> bytes:
    """The class's answers as CSV (with a BOM: spreadsheets then read Chinese nicknames); built on the click, in a
    thread of no session, so a failure is said in the file (one line) rather than raised."""
    try:
        return db.export_csv(class_id, key).encode("utf-8-sig")
    except ClassroomError:
        return (message("classroom.export_failed", language) + "\n").encode("utf-8-sig")


def forget() -> None:
    """This browser lets go of the class (the class itself stays until deleted or expired)."""
    for slot in (TEACHER, SHOW_KEY):
        st.session_state.pop(slot, None)
    for param in (classroom.TEACH_PARAM, classroom.PROJECTOR_PARAM):
        st.query_params.pop(param, None)


def render_dashboard(teacher_: Teacher, root: str, exercises: tuple[Exercise, ...]) -> None:
    """The teacher's view: in projector mode only the join code, the live counts and a way back."""
    if projector():
        projector_style()
        if st.button(t("classroom.projector_off"), key="class_projector_off", icon=":material/close_fullscreen:"):
            st.query_params.pop(classroom.PROJECTOR_PARAM, None)
            st.rerun()
    st.header(t("classroom.dashboard_heading"), anchor=False)
    key_once(teacher_)
    links(teacher_, root)
    live_view(teacher_, exercises)
    if not projector():
        _steer(teacher_, exercises)
