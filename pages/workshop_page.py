"""Workshop: seven exercises that follow the chapters, each with a scenario to load, a hint, answer boxes the app
checks, the answer the tool derives, links to share, and a printable handout of them all. A teacher can run it as a
class (ui/classroom_*.py): students join with a link, their answers are recorded, the teacher watches live."""

from __future__ import annotations

import functools

import streamlit as st

from core.teaching.exercises import load_exercises
from ui import classroom_dashboard, classroom_student, classroom_teacher, workshop
from ui.i18n import t

exercises = load_exercises()
teaching = classroom_teacher.teacher()
if not (teaching and classroom_teacher.projector()):
    st.title(t("workshop.title"))
    st.caption(t("workshop.intro"))
root = workshop.link_root()
if teaching is not None:
    classroom_dashboard.render_dashboard(teaching, root, exercises)
if not (teaching and classroom_teacher.projector()):
    seat = None if teaching else classroom_student.seat()
    state = None
    if seat is not None:
        numbers = {ex.id: str(ex.number) for ex in exercises}
        state = classroom_student.follow_teacher(seat, numbers, workshop.CHOOSER)
        classroom_student.render_class_bar(seat)
    chosen = workshop.chosen_exercise(exercises)
    workshop.render_exercise(
        chosen,
        root,
        answer_boxes=functools.partial(classroom_student.render_answer_boxes, chosen, seat),
        in_class=seat is not None,
        revealed=state is not None and chosen.id in state.revealed,
    )
    st.divider()
    workshop.render_handout(root)
    if teaching is None and seat is None:
        classroom_teacher.render_start()
