"""The answer first: one sentence at the top of a page (verdict, what binds, the cheapest fix and
its price, the figures to quote), coloured by the verdict and copyable as plain text."""

from __future__ import annotations

import streamlit as st

from ui.i18n import t

SHOW = {"ok": st.success, "marginal": st.warning, "failed": st.error}


def show_answer(where, text: str, status: str, key: str) -> None:
    """``text`` in an alert of ``status`` (ok, marginal, failed) inside ``where``, with a popover
    holding it as a code block (its copy button copies the sentence as plain text)."""
    with where:
        SHOW[status](text)
        with st.popover(t("answer.copy"), icon=":material/content_copy:", key=f"{key}_copy"):
            st.code(text, language=None, wrap_lines=True)
