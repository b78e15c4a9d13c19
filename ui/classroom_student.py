"""The student's side of a class on the Workshop page: joining with a nickname, the seat kept in the link (so a
reload, or another server process after one went down, finds the student again), the class bar that follows the
teacher (current exercise, timer, revealed answers), and the answer boxes, checked by
:func:`core.teaching.answer_check.check` and, in a class, recorded once per change.

The answer boxes work without a class too: a student alone gets the same checks, recorded nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import streamlit as st

from core.classroom.engine import ClassroomError
from core.classroom.records import BoxAnswer, ClassState
from core.classroom.schema import NICKNAME_MAX, VALUE_MAX
from core.teaching.answer_boxes import boxes
from core.teaching.answer_check import EXAMPLES, Verdict, check, unit_text
from core.teaching.exercises import Exercise
from ui import classroom
from ui.i18n import lang, t
from ui.safe import escape_markdown

SEAT = "class_seat"
"""Session key: the student's :class:`Seat` once joined."""
FOLLOWED = "class_followed"
"""Session key: the teacher's current exercise as this session last followed it."""
RESTORED = "class_restored"
VERDICTS = "class_verdicts_"
TYPED = "class_typed"
"""Session key of no widget: every box's value as last sent, so it is there again when the student comes back."""
STUDENT_POLL_S = 10
"""How often a student's class bar asks the database for the teacher's moves [s]."""


@dataclass(frozen=True)
class Seat:
    join_code: str
    class_id: str
    student_id: str
    nickname: str


def seat() -> Seat | None:
    """This session's seat in a class: kept in the session, else found from the link (``class`` and ``seat``);
    with only a join code in the link, the join form. The link gets ``class`` and ``seat`` back when the student
    returns from another page (the navigation drops them)."""
    code = st.query_params.get(classroom.CLASS_PARAM)
    kept: Seat | None = st.session_state.get(SEAT)
    if kept is not None and code in (None, kept.join_code):
        st.query_params[classroom.CLASS_PARAM] = kept.join_code
        st.query_params[classroom.SEAT_PARAM] = kept.student_id
        return kept
    if not code:
        return None
    st.session_state.pop(SEAT, None)
    db = classroom.store()
    if db is None:
        return None
    seat_id = st.query_params.get(classroom.SEAT_PARAM)
    if seat_id:
        try:
            joined = db.rejoin(code, seat_id)
        except ClassroomError:
            st.query_params.pop(classroom.SEAT_PARAM, None)
            st.warning(t("classroom.seat_gone"))
        else:
            found = Seat(code, joined.class_id, joined.student_id, joined.nickname)
            st.session_state[SEAT] = found
            return found
    return _join_form(code, db)


def _join_form(code: str, db) -> Seat | None:
    st.subheader(t("classroom.join_heading"), anchor=False)
    with st.form("class_join", border=True):
        nickname = st.text_input(
            t("classroom.nickname"), key="class_nickname", max_chars=NICKNAME_MAX, help=t("classroom.nickname_help")
        )
        sent = st.form_submit_button(t("classroom.join"), key="class_join_submit", type="primary")
    if not sent or not classroom.allowed("join"):
        return None
    try:
        joined = db.join(code, nickname)
    except ClassroomError as err:
        classroom.failed(err, invalid="classroom.nickname_invalid")
        return None
    st.session_state[SEAT] = Seat(code, joined.class_id, joined.student_id, joined.nickname)
    st.query_params[classroom.SEAT_PARAM] = joined.student_id
    st.rerun()  # the page again, without the form


def class_state(found: Seat) -> ClassState | None:
    db = classroom.store()
    if db is None:
        return None
    try:
        return db.state(found.class_id)
    except ClassroomError as err:
        classroom.failed(err)
        return None


def follow_teacher(found: Seat, numbers: dict[str, str], chooser_key: str) -> ClassState | None:
    """Before the exercise chooser is drawn: when the teacher moved the class since this session last looked,
    the chooser moves there too (the student may browse other exercises until the teacher moves again)."""
    state = class_state(found)
    if state is None:
        return None
    current = state.current_exercise
    if current in numbers and st.session_state.get(FOLLOWED) != current:
        st.session_state[chooser_key] = numbers[current]
    st.session_state[FOLLOWED] = current
    return state


def remaining_s(state: ClassState, now: datetime | None = None) -> int | None:
    """Seconds left on the teacher's timer (0 once it ran out), or None when no timer runs."""
    if state.timer_started_at is None or state.timer_seconds is None:
        return None
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    return max(0, int(state.timer_seconds - (now - state.timer_started_at).total_seconds()))


def timer_text(left: int | None) -> str | None:
    if left is None:
        return None
    return t("classroom.timer_over") if left == 0 else t("classroom.timer_left", minutes=left // 60, seconds=left % 60)


def render_class_bar(found: Seat) -> None:
    """Who the student is in the class, and the teacher's timer; asks the database every few seconds and reruns
    the page when the teacher moved the class."""

    @st.fragment(run_every=STUDENT_POLL_S)
    def bar() -> None:
        state = class_state(found)
        if state is None:
            return
        if state.current_exercise != st.session_state.get(FOLLOWED):
            st.rerun(scope="app")
        line = t("classroom.in_class", nickname=escape_markdown(found.nickname))
        left = timer_text(remaining_s(state))
        st.info(line if left is None else f"{line} · {left}", icon=":material/groups:")

    bar()


def _restore(found: Seat, kept: dict[str, str]) -> None:
    """Once per session: the student's latest recorded answers join the kept box values (after a reload or a
    failover the boxes show them again)."""
    if st.session_state.get(RESTORED) == found.student_id:
        return
    db = classroom.store()
    if db is None:
        return
    try:
        mine = db.my_answers(found.class_id, found.student_id)
    except ClassroomError:
        return
    for (exercise_id, box_name), (typed, _ok) in mine.items():
        kept.setdefault(f"box_{exercise_id}_{box_name}", typed)
    st.session_state[RESTORED] = found.student_id


def _record(found: Seat, verdicts: list[tuple[str, str, Verdict]]) -> int | None:
    """The readable answers of one check recorded together (once per change); the number of new rows, None when
    the call failed."""
    db = classroom.store()
    if db is None:
        return None
    answers = [BoxAnswer(name, typed, v.value, v.correct, v.slip) for name, typed, v in verdicts if v.readable]
    try:
        return db.record_check(found.class_id, found.student_id, verdicts[0][2].exercise_id, answers) if answers else 0
    except ClassroomError as err:
        classroom.failed(err)
        return None


def render_answer_boxes(ex: Exercise, found: Seat | None) -> None:
    """The exercise's answer boxes in one form; a check shows one verdict per filled box and, in a class, records
    them for the teacher. The verdicts stay shown until the next check of this exercise."""
    kept: dict[str, str] = st.session_state.setdefault(TYPED, {})
    if found is not None:
        _restore(found, kept)
    for b in boxes(ex.id):  # Streamlit drops a widget's value once a run leaves it out (another exercise)
        name = f"box_{ex.id}_{b.name}"
        if name not in st.session_state and name in kept:
            st.session_state[name] = kept[name]
    st.subheader(t("classroom.boxes_heading"), anchor=False)
    code = lang()
    with st.form(f"answers_{ex.id}", border=True):
        for b in boxes(ex.id):
            unit = unit_text(b.unit, code)
            st.text_input(
                t(b.label),
                key=f"box_{ex.id}_{b.name}",
                max_chars=VALUE_MAX,
                placeholder=f"{EXAMPLES[b.unit]} {unit}",
            )
        sent = st.form_submit_button(t("classroom.check"), key=f"check_{ex.id}", icon=":material/check:")
    kept.update({f"box_{ex.id}_{b.name}": st.session_state.get(f"box_{ex.id}_{b.name}", "") for b in boxes(ex.id)})
    shown = VERDICTS + ex.id
    if sent:
        if found is not None and not classroom.allowed("answer"):
            return
        typed = [(b.name, st.session_state.get(f"box_{ex.id}_{b.name}", "") or "") for b in boxes(ex.id)]
        verdicts = [(name, text, check(ex.id, name, text, code)) for name, text in typed if text.strip()]
        if not verdicts:
            st.session_state.pop(shown, None)
            st.warning(t("classroom.nothing_typed"))
            return
        recorded = _record(found, verdicts) if found is not None else None
        st.session_state[shown] = ([v for _, _, v in verdicts], recorded, len(verdicts))
    if shown in st.session_state:
        last, recorded, sent_count = st.session_state[shown]
        for v in last:
            (st.success if v.correct else st.error if v.readable else st.warning)(escape_markdown(v.message))
        if found is not None and recorded is not None:
            st.caption(t("classroom.recorded", new=recorded, sent=sent_count))
    if found is None:
        st.caption(t("classroom.not_recorded"))
