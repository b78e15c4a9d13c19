"""Workshop: seven exercises that follow the chapters, each with a scenario to load, a hint, the
answer the tool derives, links to share, and a printable handout of them all."""

from __future__ import annotations

import streamlit as st

from core.teaching.exercises import load_exercises
from ui import workshop
from ui.i18n import t

st.title(t("workshop.title"))
st.caption(t("workshop.intro"))
root = workshop.link_root()
chosen = workshop.chosen_exercise(load_exercises())
workshop.render_exercise(chosen, root)
st.divider()
workshop.render_handout(root)
